// aspectr/nmf/data.h — a non-negative matrix X (m x n), dense or sparse, with
// the products every NMF update needs. Factors use the core's layout:
// Wt is k x m (W transposed), H is k x n, so one row's or one column's
// k-vector is contiguous.
//   XHt(H)  = (X H')'  (k x m)   — sparse: parallel over rows of X (X' by
//                                   columns), or without X', over ranges of
//                                   X's columns into per-thread sums
//   WtX(Wt) = W' X     (k x n)   — sparse: parallel over columns of X
// Sparse data are kept in compressed-column form (X can be the caller's
// dgCMatrix used in place). X' by columns (X's rows) is a copy, made on
// request or when an update first needs X's rows (KL's W-side updates:
// need_rows()). Dense data use
// the register-tiled kernels of dense.h (not the BLAS: R's reference BLAS is
// single-threaded and slow); they can alias the caller's column-major memory
// (no copy), which must then outlive the Data.
#ifndef ASPECTR_NMF_DATA_H
#define ASPECTR_NMF_DATA_H

#include <armadillo>
#include <algorithm>
#include <cstdint>
#include <stdexcept>
#include <vector>
#include "../parallel.h"
#include "dense.h"

namespace aspectr {
namespace nmf {

// Compressed sparse column. The row indices and values are owned (i_store,
// x_store) or borrowed from the caller's arrays (an R dgCMatrix's slots, used
// in place: they must outlive the Csc). The matrix's entries are x[s] / div:
// div = 1 for owned values (stored as they are used); a borrowed matrix can
// keep the caller's unscaled values and divide on use (val()), so that a
// scaled fit needs no scaled copy.
struct Csc {
  arma::uword n_rows = 0, n_cols = 0;
  std::vector<arma::uword> p;          // n_cols + 1
  const std::uint32_t* i = nullptr;    // row indices (nnz)
  const double* x = nullptr;           // stored values (nnz)
  std::size_t nnz = 0;
  double div = 1.0;
  std::vector<std::uint32_t> i_store;  // owned storage (empty when borrowed)
  std::vector<double> x_store;

  Csc() = default;
  Csc(Csc&&) = default;  // (a vector's move keeps its buffer: i and x stay valid)
  Csc& operator=(Csc&&) = default;
  Csc(const Csc&) = delete;
  Csc& operator=(const Csc&) = delete;

  double val(std::size_t s) const { return div == 1.0 ? x[s] : x[s] / div; }
  // owned storage for n entries, to be filled through i_store / x_store
  void own(std::size_t n) {
    i_store.resize(n); x_store.resize(n);
    i = i_store.data(); x = x_store.data(); nnz = n; div = 1.0;
  }
  // borrowed: n entries at idx and val, entries val / d
  void borrow(const std::uint32_t* idx, const double* v, std::size_t n, double d) {
    i_store.clear(); x_store.clear();
    i = idx; x = v; nnz = n; div = d;
  }
};

// The transpose, owned, with the entries' values (x / div) stored.
inline Csc transpose(const Csc& A) {
  Csc T;
  T.n_rows = A.n_cols; T.n_cols = A.n_rows;
  T.p.assign(T.n_cols + 1, 0);
  for (std::size_t s = 0; s < A.nnz; ++s) ++T.p[A.i[s] + 1];
  for (arma::uword c = 0; c < T.n_cols; ++c) T.p[c + 1] += T.p[c];
  T.own(A.nnz);
  std::vector<arma::uword> next(T.p.begin(), T.p.end() - 1);
  for (arma::uword c = 0; c < A.n_cols; ++c)
    for (arma::uword s = A.p[c]; s < A.p[c + 1]; ++s) {
      const arma::uword d = next[A.i[s]]++;
      T.i_store[d] = static_cast<std::uint32_t>(c); T.x_store[d] = A.val(s);
    }
  return T;
}

class Data {
 public:
  explicit Data(const arma::mat& X) : dense_(true), D_(X) { init_norms(); }
  // aliases the m x n column-major array at x (not copied, not modified)
  Data(const double* x, arma::uword m, arma::uword n)
      : dense_(true), D_(const_cast<double*>(x), m, n, false, true) { init_norms(); }
  // (X's rows are not copied until need_rows())
  explicit Data(Csc X) : dense_(false), S_(std::move(X)) { init_norms(); }
  // a symmetric sparse X (n x n): X' is X itself, not stored
  struct Symmetric {};
  Data(Csc X, Symmetric) : dense_(false), symmetric_(true), S_(std::move(X)) {
    if (S_.n_rows != S_.n_cols) throw std::invalid_argument("a symmetric matrix must be square");
    init_norms();
  }
  // a symmetric sparse X (n x n) of which one triangle is stored (upper or
  // lower, the diagonal with it): X = T + T' - diag(T), read as such by
  // the products (sym_product()), never made whole; X' is X
  struct Triangle {};
  Data(Csc T, Triangle) : dense_(false), symmetric_(true), triangle_(true), S_(std::move(T)) {
    if (S_.n_rows != S_.n_cols) throw std::invalid_argument("a symmetric matrix must be square");
    init_norms();
  }
  bool triangle() const { return triangle_; }
  // sparse X by columns and by rows as given (a shard's data, see
  // shard_data())
  Data(Csc X, Csc Xt) : dense_(false), S_(std::move(X)), St_(std::move(Xt)) {
    if (S_.n_rows != St_.n_cols || S_.n_cols != St_.n_rows)
      throw std::invalid_argument("the two orientations of the data differ in size");
    init_norms();
  }

  bool dense() const { return dense_; }
  arma::uword n_rows() const { return dense_ ? D_.n_rows : S_.n_rows; }
  arma::uword n_cols() const { return dense_ ? D_.n_cols : S_.n_cols; }
  double xnorm2() const { return xnorm2_; }
  double total() const { return total_; }
  double nnz() const { return nnz_; }  // number of non-zero entries
  const arma::mat& D() const { return D_; }
  const Csc& S() const { return S_; }    // columns of X
  // X's rows: X' by columns (need_rows() first)
  const Csc& St() const {
    if (!has_rows()) throw std::logic_error("the data's rows were not prepared");
    if (triangle_) throw std::logic_error("the data are one triangle of a symmetric matrix");
    return symmetric_ ? S_ : St_;
  }
  // non-zeros in row r of sparse X (the row's length for dense X)
  arma::uword row_count(arma::uword r) const {
    if (dense_) return D_.n_cols;
    if (triangle_) throw std::logic_error("the data are one triangle of a symmetric matrix");
    if (has_rows()) { const Csc& A = St(); return A.p[r + 1] - A.p[r]; }
    return row_nnz_[r];
  }
  bool has_rows() const { return dense_ || (symmetric_ && !triangle_) || !St_.p.empty(); }
  // Makes X's rows (a copy of X', 12 bytes per non-zero) if there are none.
  // Not thread-safe: call before any parallel region that reads St().
  void need_rows() const {
    if (triangle_) throw std::logic_error("the data are one triangle of a symmetric matrix");
    if (has_rows()) return;
    St_ = transpose(S_);
    std::vector<std::uint32_t>().swap(row_nnz_);
  }

  // (X H')' : k x m
  void XHt(const arma::mat& H, arma::mat& out, int threads) const {
    if (dense_) {
      arma::mat XH(D_.n_rows, H.n_rows);                 // m x k
      dense::nn(D_.memptr(), D_.n_rows, D_.n_rows, D_.n_cols, H.memptr(), H.n_rows, H.n_rows,
                XH.memptr(), threads);
      out = XH.t();
      return;
    }
    if (triangle_) sym_product(H, out, threads);
    else if (has_rows()) rowwise(St(), H, out, threads);
    else scatter(H, out, threads);
  }
  // W' X : k x n
  void WtX(const arma::mat& Wt, arma::mat& out, int threads) const {
    if (dense_) {
      const arma::mat W = Wt.t();                        // m x k
      out.set_size(Wt.n_rows, D_.n_cols);
      dense::tn(W.memptr(), W.n_rows, W.n_cols, D_.memptr(), D_.n_rows, D_.n_cols, D_.n_rows,
                out.memptr(), threads);
      return;
    }
    if (triangle_) sym_product(Wt, out, threads);
    else rowwise(S_, Wt, out, threads);
  }

  // out(:, c) = sum_{s in column c of A} A.x[s] * F(:, A.i[s]). The sums
  // are kept in registers, eight rows of out at a time (then two, then one),
  // over the non-zeros of the column in order: the same arithmetic as
  // o[r] += x f[r] per non-zero, without a store and reload of o each time.
  static void rowwise(const Csc& A, const arma::mat& F, arma::mat& out, int threads) {
    const arma::uword k = F.n_rows;
    out.zeros(k, A.n_cols);
    const int T = effective_threads(threads, A.nnz);
    const double div = A.div;
    dense::parallel_blocks(A.n_cols, T, 16, [&](std::size_t b, std::size_t e) {
      using dense::v2;
      using dense::load;
      const double* __restrict fp = F.memptr();
      for (std::size_t c = b; c < e; ++c) {
        double* __restrict o = out.colptr(c);
        const arma::uword s0 = A.p[c], s1 = A.p[c + 1];
        const std::uint32_t* __restrict idx = A.i;
        const double* __restrict xv = A.x;
        arma::uword r = 0;
        for (; r + 8 <= k; r += 8) {
          v2 a0 = dense::bcast(0.0), a1 = a0, a2 = a0, a3 = a0;
          for (arma::uword s = s0; s < s1; ++s) {
            const v2 x = dense::bcast(xv[s]);
            const double* f = fp + idx[s] * k + r;
            a0 += x * load(f); a1 += x * load(f + 2); a2 += x * load(f + 4); a3 += x * load(f + 6);
          }
          dense::store(o + r, a0); dense::store(o + r + 2, a1);
          dense::store(o + r + 4, a2); dense::store(o + r + 6, a3);
        }
        for (; r + 2 <= k; r += 2) {
          v2 a0 = dense::bcast(0.0);
          for (arma::uword s = s0; s < s1; ++s) a0 += dense::bcast(xv[s]) * load(fp + idx[s] * k + r);
          dense::store(o + r, a0);
        }
        if (r < k) {
          double a0 = 0.0;
          for (arma::uword s = s0; s < s1; ++s) a0 += xv[s] * fp[idx[s] * k + r];
          o[r] = a0;
        }
        // stored values x / div: the column's sums divided once
        if (div != 1.0) for (r = 0; r < k; ++r) o[r] /= div;
      }
    });
  }

  // Threads for a product whose threads beyond the first add into their own
  // k x d sums: at most as many as fit in the larger of the memory of the
  // copy this avoids (12 bytes a non-zero) and four such sums.
  static int sum_threads(int threads, std::size_t nnz, arma::uword k, arma::uword d) {
    int T = effective_threads(threads, nnz);
    const double one = 8.0 * static_cast<double>(k) * static_cast<double>(d);
    const double cap = 1.0 + std::max(12.0 * static_cast<double>(nnz), 4.0 * one) / one;
    if (static_cast<double>(T) > cap) T = static_cast<int>(cap);
    return T;
  }

  // out (k x d) = the sums body(c0, c1, op) adds into op (k x d, zeroed)
  // over the columns [c0, c1) of A, divided by A.div. Each thread takes a
  // range of columns (equal numbers of non-zeros) and adds into its own
  // k x d sums (thread 0 into out), which are then added in thread order:
  // for a fixed thread count the result is bitwise reproducible (threads:
  // sum_threads()). The sums are allocated before the parallel region (an
  // exception could not leave it); ranges without columns get none.
  template <class Body>
  static void column_sums(const Csc& A, arma::uword k, arma::uword d, int threads, arma::mat& out, Body body) {
    const arma::uword n = A.n_cols;
    out.zeros(k, d);
    if (A.nnz == 0 || k == 0) return;
    const int T = sum_threads(threads, A.nnz, k, d);
    std::vector<arma::uword> cut(T + 1, n);
    cut[0] = 0;
    for (int t = 1; t < T; ++t) {
      const arma::uword target = static_cast<arma::uword>(A.nnz * static_cast<std::size_t>(t) / T);
      cut[t] = static_cast<arma::uword>(std::lower_bound(A.p.begin(), A.p.end(), target) - A.p.begin());
      cut[t] = std::max(cut[t - 1], std::min(cut[t], n));
    }
    std::vector<arma::mat> part(T > 1 ? T - 1 : 0);
    for (int t = 1; t < T; ++t) if (cut[t] < cut[t + 1]) part[t - 1].set_size(k, d);
    parallel_chunks(static_cast<std::size_t>(T), T, [&](int, std::size_t tb, std::size_t te) {
      for (std::size_t t = tb; t < te; ++t) {
        if (cut[t] == cut[t + 1]) continue;
        if (t > 0) part[t - 1].zeros();
        body(cut[t], cut[t + 1], t == 0 ? out.memptr() : part[t - 1].memptr());
      }
    });
    const double div = A.div;
    double* op = out.memptr();
    dense::parallel_blocks(out.n_elem, T, 4096, [&](std::size_t b, std::size_t e) {
      for (const arma::mat& P : part) {
        if (P.n_elem == 0) continue;
        const double* pp = P.memptr();
        for (std::size_t q = b; q < e; ++q) op[q] += pp[q];
      }
      if (div != 1.0) for (std::size_t q = b; q < e; ++q) op[q] /= div;
    });
  }

  // out(:, i) = sum over the non-zeros x of row i of x * F(:, c) (c the
  // non-zero's column), from X's columns (column_sums()). Eight rows of out
  // at a time, with those of F(:, c) held in registers over the column's
  // non-zeros.
  void scatter(const arma::mat& F, arma::mat& out, int threads) const {
    const Csc& A = S_;
    const arma::uword k = F.n_rows;
    column_sums(A, k, A.n_rows, threads, out, [&](arma::uword c0, arma::uword c1, double* __restrict op) {
      using dense::v2;
      using dense::load;
      using dense::store;
      for (arma::uword c = c0; c < c1; ++c) {
        const std::uint32_t* __restrict ri = A.i + A.p[c];
        const double* __restrict xv = A.x + A.p[c];
        const std::size_t len = A.p[c + 1] - A.p[c];
        const double* f = F.colptr(c);
        arma::uword r = 0;
        for (; r + 8 <= k; r += 8) {
          const v2 f0 = load(f + r), f1 = load(f + r + 2), f2 = load(f + r + 4), f3 = load(f + r + 6);
          for (std::size_t s = 0; s < len; ++s) {
            double* o = op + static_cast<std::size_t>(ri[s]) * k + r;
            const v2 x = dense::bcast(xv[s]);
            store(o, load(o) + x * f0); store(o + 2, load(o + 2) + x * f1);
            store(o + 4, load(o + 4) + x * f2); store(o + 6, load(o + 6) + x * f3);
          }
        }
        for (; r + 2 <= k; r += 2) {
          const v2 f0 = load(f + r);
          for (std::size_t s = 0; s < len; ++s) {
            double* o = op + static_cast<std::size_t>(ri[s]) * k + r;
            store(o, load(o) + dense::bcast(xv[s]) * f0);
          }
        }
        if (r < k) {
          const double f0 = f[r];
          for (std::size_t s = 0; s < len; ++s) op[static_cast<std::size_t>(ri[s]) * k + r] += xv[s] * f0;
        }
      }
    });
  }

  // out = (X F')' (k x n) for X stored as one triangle T: each stored entry
  // x at (i, c) adds x F(:, i) to out(:, c) and, off the diagonal, x F(:, c)
  // to out(:, i): per column, its sum over the stored entries is kept in
  // registers (as rowwise() does) and the mirror terms are added to the
  // other columns (column_sums(); the copy its threads' sums are weighed
  // against is the other triangle, not stored).
  void sym_product(const arma::mat& F, arma::mat& out, int threads) const {
    const Csc& A = S_;
    const arma::uword k = F.n_rows;
    column_sums(A, k, A.n_cols, threads, out, [&](arma::uword c0, arma::uword c1, double* __restrict op) {
      const double* fp = F.memptr();
      std::vector<double> acc(k);
      for (arma::uword c = c0; c < c1; ++c) {
        const double* fc = fp + static_cast<std::size_t>(c) * k;
        const arma::uword s0 = A.p[c], s1 = A.p[c + 1];
        // the column's own sums, eight rows at a time in registers
        double* __restrict a = acc.data();
        arma::uword r = 0;
        for (; r + 8 <= k; r += 8) {
          dense::v2 a0 = dense::bcast(0.0), a1 = a0, a2 = a0, a3 = a0;
          for (arma::uword s = s0; s < s1; ++s) {
            const dense::v2 x = dense::bcast(A.x[s]);
            const double* f = fp + static_cast<std::size_t>(A.i[s]) * k + r;
            a0 += x * dense::load(f); a1 += x * dense::load(f + 2);
            a2 += x * dense::load(f + 4); a3 += x * dense::load(f + 6);
          }
          dense::store(a + r, a0); dense::store(a + r + 2, a1);
          dense::store(a + r + 4, a2); dense::store(a + r + 6, a3);
        }
        for (; r < k; ++r) {
          double a0 = 0.0;
          for (arma::uword s = s0; s < s1; ++s) a0 += A.x[s] * fp[static_cast<std::size_t>(A.i[s]) * k + r];
          a[r] = a0;
        }
        // the mirror terms, off the diagonal
        for (arma::uword s = s0; s < s1; ++s) {
          const arma::uword i = A.i[s];
          if (i == c) continue;
          const double x = A.x[s];
          double* oi = op + static_cast<std::size_t>(i) * k;
          for (arma::uword q = 0; q < k; ++q) oi[q] += x * fc[q];
        }
        double* oc = op + static_cast<std::size_t>(c) * k;
        for (arma::uword q = 0; q < k; ++q) oc[q] += a[q];
      }
    });
  }

 private:
  void init_norms() {
    xnorm2_ = 0.0; total_ = 0.0; nnz_ = 0.0;
    if (dense_) {
      for (double v : D_) { xnorm2_ += v * v; total_ += v; nnz_ += v != 0.0; }
      return;
    }
    if (triangle_) {
      // off the diagonal, an entry stands for two
      for (arma::uword c = 0; c < S_.n_cols; ++c)
        for (arma::uword s = S_.p[c]; s < S_.p[c + 1]; ++s) {
          const double v = S_.val(s), w = S_.i[s] == c ? 1.0 : 2.0;
          xnorm2_ += w * v * v; total_ += w * v; nnz_ += v != 0.0 ? w : 0.0;
        }
      return;
    }
    const Csc& A = S_.p.empty() ? St_ : S_;
    for (std::size_t s = 0; s < A.nnz; ++s) {
      const double v = A.val(s);
      xnorm2_ += v * v; total_ += v; nnz_ += v != 0.0;
    }
    // without X's rows: the non-zeros of each row (row_count(), which
    // HALS's extrapolation weighs its corrections by)
    if (!has_rows()) {
      row_nnz_.assign(S_.n_rows, 0);
      for (std::size_t s = 0; s < S_.nnz; ++s) ++row_nnz_[S_.i[s]];
    }
  }
  bool dense_;
  bool symmetric_ = false;
  bool triangle_ = false;
  arma::mat D_;
  Csc S_;
  mutable Csc St_;
  mutable std::vector<std::uint32_t> row_nnz_;  // non-zeros of each row (without St_)
  double xnorm2_ = 0.0, total_ = 0.0, nnz_ = 0.0;
};

}  // namespace nmf
}  // namespace aspectr

#endif
