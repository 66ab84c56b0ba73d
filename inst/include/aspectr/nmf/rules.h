// aspectr/nmf/rules.h — update rules for X ~ W H (Gemulla and Miettinen 2013), with optional
// penalties  l1w sum W + l1h sum H + l2w/2 ||W||^2 + l2h/2 ||H||^2.
//
// Frobenius objective 1/2 ||X - WH||_F^2 (+ penalties), computed without the
// residual: ||X - WH||^2 = ||X||^2 - 2 <W'X, H> + <W'W, HH'>.
//  * HALS: column r of W (row r of Wt) is the exact minimizer with the rest
//    fixed, max(0, (A_r - sum_{j != r} B_rj w_j - l1w) / (B_rr + l2w)) with
//    A = (X H')', B = H H'; H first, then W, a few sweeps each (see below).
//  * ANLS: every row of W (column of H) solves its non-negative least-squares
//    problem exactly, by block principal pivoting (coordinate descent to a
//    tolerance of 1e-10 where a Gram block is singular).
//  * MU (Lee & Seung with Gemulla and Miettinen's epsilon guards):
//    W <- W o [X H']_eps / (W H H' + l1w + l2w W + eps), then H.
// KL objective sum x log(x/v) - x + v (v = WH), ratios only at non-zeros:
//    W <- W o ((X / WH) H') / (1 H' + l1w), then H (with an L2 penalty the
//    exact minimizer of the same majorizer, a quadratic root).
// Beta divergence (Fevotte & Idier 2011), dense data:
//    W <- W o [((WH)^(b-2) o X) H' / ((WH)^(b-1) H')]^gamma(b), then H, with
//    gamma = 1/(2-b) for b < 1, 1 for 1 <= b <= 2, 1/(b-1) for b > 2, which
//    makes every update monotone.
// All rules never increase their objective.
#ifndef ASPECTR_NMF_RULES_H
#define ASPECTR_NMF_RULES_H

#include <algorithm>
#include <cmath>
#include <vector>
#include "../control.h"
#include "../logsum.h"
#include "data.h"

namespace aspectr {
namespace nmf {

struct Model {
  arma::mat Wt;  // k x m
  arma::mat H;   // k x n
};

struct Penalty {
  double l1w = 0, l1h = 0, l2w = 0, l2h = 0;
  bool any() const { return l1w != 0 || l1h != 0 || l2w != 0 || l2h != 0; }
  double value(const arma::mat& Wt, const arma::mat& H) const {
    double v = 0.0;
    if (l1w != 0) v += l1w * arma::accu(Wt);
    if (l1h != 0) v += l1h * arma::accu(H);
    if (l2w != 0) v += 0.5 * l2w * arma::accu(arma::square(Wt));
    if (l2h != 0) v += 0.5 * l2h * arma::accu(arma::square(H));
    return v;
  }
  double value(const Model& M) const { return value(M.Wt, M.H); }
};

// F F' (k x k) for a k x d factor, with the register-tiled kernel of dense.h
// (not the BLAS: R's reference dsyrk is several times slower). Exactly
// symmetric, and the same for any thread count.
inline arma::mat gram(const arma::mat& F, int threads) {
  const arma::uword k = F.n_rows;
  arma::mat G(k, k);
  dense::syrk(F.memptr(), k, k, F.n_cols, G.memptr(), threads);
  return G;
}

// a + beta (a - b) element by element (as Armadillo evaluates the
// expression, so bitwise the same), split over threads by blocks of elements
inline arma::mat extrapolated(const arma::mat& a, const arma::mat& b, double beta, int threads) {
  arma::mat out(a.n_rows, a.n_cols, arma::fill::none);
  const double* pa = a.memptr();
  const double* pb = b.memptr();
  double* po = out.memptr();
  const int T = effective_threads(threads, a.n_elem / 4);
  dense::parallel_blocks(a.n_elem, T, 4096, [&](std::size_t lo, std::size_t hi) {
    for (std::size_t i = lo; i < hi; ++i) po[i] = pa[i] + (pa[i] - pb[i]) * beta;
  });
  return out;
}

// Projection of an extrapolated factor onto the non-negative orthant, with
// its product with X kept exact. Y is k x d (Wt, d = m, with C = W'X, k x n;
// or H, d = n, with C = (X H')', k x m), extrapolated from the non-negative
// `base` (whose product is Cbase). A row whose projection keeps less than
// half the norm of its base row (the extrapolation overshot it past zero,
// as from a start far too large) is not extrapolated: it and its row of C
// are those of the base. In the other rows every negative entry Y(r, c) is
// set to 0 and C gets -Y(r, c) times row c of X (for Wt) or column c of X
// (for H), read from the compressed rows/columns of sparse data or the
// dense matrix (sparse X without its rows: row c's terms added to each
// column of C from X's columns, in parallel over the columns of C, in the
// same order). The same for any thread count.
// The work of correcting C for the clipped entries of Y in the rows r with
// keep[r] (a row or column of X per clip), as project_extrapolated()
// counts it.
inline double projection_work(const Data& X, const arma::mat& Y, const std::vector<char>& keep, bool is_w) {
  const arma::uword k = Y.n_rows;
  const bool no_rows = is_w && !X.has_rows();
  double work = 0.0;
  for (arma::uword c = 0; c < Y.n_cols; ++c) {
    const double* y = Y.colptr(c);
    arma::uword nc = 0;
    for (arma::uword r = 0; r < k; ++r) nc += keep[r] && y[r] < 0.0;
    if (nc == 0) continue;
    double len;
    if (X.dense()) len = static_cast<double>(is_w ? X.n_cols() : X.n_rows());
    else if (no_rows) len = static_cast<double>(X.row_count(c));
    else {
      const Csc& A = is_w ? X.St() : X.S();
      len = static_cast<double>(A.p[c + 1] - A.p[c]);
    }
    work += len * static_cast<double>(nc);
  }
  return work;
}

// The negative entries of Y in the rows r with keep[r] set to 0, listed by
// column: column c's are rows ri[beg[c] .. beg[c + 1]) with the negated
// values dv (beg: Y.n_cols + 1 entries, zero on entry).
template <class Index>
inline void clip_negatives(arma::mat& Y, const std::vector<char>& keep, std::vector<Index>& beg,
                           std::vector<arma::uword>& ri, std::vector<double>& dv) {
  const arma::uword k = Y.n_rows;
  for (arma::uword c = 0; c < Y.n_cols; ++c) {
    double* y = Y.colptr(c);
    for (arma::uword r = 0; r < k; ++r)
      if (keep[r] && y[r] < 0.0) { ri.push_back(r); dv.push_back(-y[r]); y[r] = 0.0; }
    beg[c + 1] = ri.size();
  }
}

// The negative entries of Y in the rows r with keep[r] set to 0, and C
// given their negated values times row c of X (Y = Wt) or column c (Y = H).
inline void projection_correct(const Data& X, arma::mat& Y, arma::mat& C, const std::vector<char>& keep,
                               bool is_w, int threads) {
  const arma::uword k = Y.n_rows;
  const bool no_rows = is_w && !X.has_rows();
  if (no_rows) {
    // The same sums from X's columns: the clipped entries of row c of X's
    // rows are ri/dv[beg[c], beg[c + 1]); each column j of C gets them from
    // its non-zeros in ascending rows, the order of the row-wise correction.
    std::vector<arma::uword> beg(Y.n_cols + 1, 0), ri;
    std::vector<double> dv;
    clip_negatives(Y, keep, beg, ri, dv);
    if (ri.empty()) return;
    const Csc& A = X.S();
    const int T = effective_threads(threads, A.nnz);
    dense::parallel_blocks(A.n_cols, T, 16, [&](std::size_t b, std::size_t e) {
      for (std::size_t j = b; j < e; ++j) {
        double* o = C.colptr(j);
        for (arma::uword s = A.p[j]; s < A.p[j + 1]; ++s) {
          const arma::uword a0 = beg[A.i[s]], a1 = beg[A.i[s] + 1];
          if (a0 == a1) continue;
          const double x = A.val(s);
          for (arma::uword a = a0; a < a1; ++a) o[ri[a]] += x * dv[a];
        }
      }
    });
    return;
  }
  // (only the clipped entries of a column enter its correction)
  std::vector<arma::uword> ri(k);
  std::vector<double> d(k);
  for (arma::uword c = 0; c < Y.n_cols; ++c) {
    double* y = Y.colptr(c);
    arma::uword nc = 0;
    for (arma::uword r = 0; r < k; ++r) {
      if (keep[r] && y[r] < 0.0) { ri[nc] = r; d[nc] = -y[r]; ++nc; y[r] = 0.0; }
    }
    if (nc == 0) continue;
    auto add = [&](arma::uword col, double x) {
      double* o = C.colptr(col);
      for (arma::uword a = 0; a < nc; ++a) o[ri[a]] += x * d[a];
    };
    if (X.dense()) {
      const arma::mat& D = X.D();
      if (is_w) { for (arma::uword j = 0; j < D.n_cols; ++j) { const double x = D(c, j); if (x != 0.0) add(j, x); } }
      else { const double* xc = D.colptr(c); for (arma::uword i = 0; i < D.n_rows; ++i) if (xc[i] != 0.0) add(i, xc[i]); }
    } else {
      const Csc& A = is_w ? X.St() : X.S();  // row c of X (for W) or column c (for H)
      for (arma::uword s = A.p[c]; s < A.p[c + 1]; ++s) add(A.i[s], A.val(s));
    }
  }
}

inline void project_extrapolated(const Data& X, arma::mat& Y, arma::mat& C, bool is_w,
                                 const arma::mat& base, const arma::mat& Cbase, int threads) {
  const arma::uword k = Y.n_rows;
  std::vector<double> proj(k, 0.0), full(k, 0.0);
  for (arma::uword c = 0; c < Y.n_cols; ++c) {
    const double* y = Y.colptr(c);
    const double* b = base.colptr(c);
    for (arma::uword r = 0; r < k; ++r) {
      if (y[r] > 0.0) proj[r] += y[r] * y[r];
      full[r] += b[r] * b[r];
    }
  }
  std::vector<char> keep(k, 1);
  for (arma::uword r = 0; r < k; ++r) {
    if (proj[r] < 0.25 * full[r]) {
      keep[r] = 0;
      Y.row(r) = base.row(r);
      C.row(r) = Cbase.row(r);
    }
  }
  // The correction touches, for each column of Y with clipped entries, one
  // row (W) or column (H) of X once per clip. When that work is a sizeable
  // part of a product with X (many clips), the product of the projected
  // factor with X is recomputed instead, by the parallel kernels.
  if (projection_work(X, Y, keep, is_w) > 0.05 * X.nnz() * static_cast<double>(k)) {
    for (arma::uword c = 0; c < Y.n_cols; ++c) {
      double* y = Y.colptr(c);
      for (arma::uword r = 0; r < k; ++r) if (keep[r] && y[r] < 0.0) y[r] = 0.0;
    }
    if (is_w) X.WtX(Y, C, threads); else X.XHt(Y, C, threads);
    return;
  }
  projection_correct(X, Y, C, keep, is_w, threads);
}

// Rows of M.Wt (columns of W) scaled to unit norm, the scale moved into the
// rows of M.H (the model W H is unchanged); rows of norm 0 are left as they
// are. Returns the norms (1 for those rows). By passes over the contiguous
// columns, not k strided passes over rows.
// (Two rows at a time in v2 lanes: every element's arithmetic is the scalar
// one.)
inline arma::vec unit_rows(Model& M) {
  using dense::load;
  using dense::store;
  const arma::uword k = M.Wt.n_rows, k2 = k - k % 2;
  arma::vec s(k, arma::fill::zeros);
  double* ps = s.memptr();
  for (arma::uword i = 0; i < M.Wt.n_cols; ++i) {
    const double* w = M.Wt.colptr(i);
    for (arma::uword r = 0; r < k2; r += 2) store(ps + r, load(ps + r) + load(w + r) * load(w + r));
    if (k2 < k) ps[k2] += w[k2] * w[k2];
  }
  for (arma::uword r = 0; r < k; ++r) {
    double nr = std::sqrt(ps[r]);
    // the sum of squares under- or overflowed (or the row is 0): Armadillo's
    // scaled norm
    if (!(nr > 0.0) || !std::isfinite(nr)) nr = arma::norm(M.Wt.row(r), 2);
    ps[r] = nr > 0.0 ? nr : 1.0;
  }
  for (arma::uword i = 0; i < M.Wt.n_cols; ++i) {
    double* w = M.Wt.colptr(i);
    for (arma::uword r = 0; r < k2; r += 2) store(w + r, load(w + r) / load(ps + r));
    if (k2 < k) w[k2] /= ps[k2];
  }
  for (arma::uword j = 0; j < M.H.n_cols; ++j) {
    double* h = M.H.colptr(j);
    for (arma::uword r = 0; r < k2; r += 2) store(h + r, load(h + r) * load(ps + r));
    if (k2 < k) h[k2] *= ps[k2];
  }
  return s;
}

// <A, B> = sum(A % B) for two matrices of the same size, with dense::dot
// (arma::accu(A % B) calls the reference BLAS ddot)
inline double inner(const arma::mat& A, const arma::mat& B) {
  return dense::dot(A.memptr(), B.memptr(), A.n_elem);
}

// 1/2 ||X - WH||^2 from C = W'X (k x n), D = W'W and HH = HH'.
inline double half_frobenius(const Data& X, const Model& M, const arma::mat& C, const arma::mat& D,
                             const arma::mat& HH) {
  const double v = X.xnorm2() - 2.0 * inner(C, M.H) + inner(D, HH);
  return 0.5 * std::max(v, 0.0);
}

// Exact NNLS  min 1/2 x'Qx - c'x, x >= 0, by coordinate descent (warm start x).
inline void nnls_cd(const arma::mat& Q, const double* c, double* x, arma::uword k,
                    double* g, int max_sweeps = 500, double tol = 1e-10) {
  for (arma::uword r = 0; r < k; ++r) {
    double s = -c[r];
    for (arma::uword j = 0; j < k; ++j) s += Q(r, j) * x[j];
    g[r] = s;
  }
  for (int sweep = 0; sweep < max_sweeps; ++sweep) {
    double maxd = 0.0, maxx = 0.0;
    for (arma::uword r = 0; r < k; ++r) {
      const double q = Q(r, r);
      // a flat coordinate (its column of the other factor is zero): the
      // objective is linear in it, -c_r x_r, minimized at 0 when c_r < 0 (an
      // L1 penalty) and by any value when c_r = 0 (left as it is)
      const double nw = q > 0.0 ? std::max(0.0, x[r] - g[r] / q) : (c[r] < 0.0 ? 0.0 : x[r]);
      const double d = nw - x[r];
      if (d != 0.0) {
        x[r] = nw;
        const double* qc = Q.colptr(r);
        for (arma::uword j = 0; j < k; ++j) g[j] += d * qc[j];
      }
      maxd = std::max(maxd, std::fabs(d));
      maxx = std::max(maxx, x[r]);
    }
    if (maxd <= tol * std::max(maxx, 1e-300)) break;
  }
}

// Exact NNLS  min 1/2 x'Qx - c'x, x >= 0, by block principal pivoting
// (Kim and Park 2011), warm-started from the support of x: the passive set F
// gets the unconstrained solution of its block, Q_FF x_F = c_F (Cholesky),
// the rest x = 0; every index that breaks the optimality conditions (x_r < 0
// in F, gradient (Qx - c)_r < 0 outside it) changes sides, all at once while
// their number falls, with Murty's single-index rule as the backup that
// guarantees termination. A few pivots, each k^3 / 3 flops at most, where
// coordinate descent needs hundreds of sweeps on an ill-conditioned Q.
// Returns false (x unchanged) when a block is not positive definite (a flat
// coordinate) or the pivoting does not settle; the caller then falls back on
// nnls_cd.
struct BppWork {
  std::vector<double> L, xs, y;
  std::vector<arma::uword> idx;
  std::vector<char> F;
  explicit BppWork(arma::uword k) : L(k * k), xs(k), y(k), idx(k), F(k) {}
};
inline bool nnls_bpp(const arma::mat& Q, const double* c, double* x, arma::uword k, BppWork& w) {
  double cmax = 0.0;
  for (arma::uword r = 0; r < k; ++r) {
    w.F[r] = x[r] > 0.0;
    cmax = std::max(cmax, std::fabs(c[r]));
  }
  const double gtol = 1e-13 * std::max(cmax, 1e-300);
  arma::uword ninf = k + 1;
  int backup = 3;
  const int max_iter = 10 * static_cast<int>(k) + 50;
  for (int it = 0; it < max_iter; ++it) {
    arma::uword np = 0;
    for (arma::uword r = 0; r < k; ++r) if (w.F[r]) w.idx[np++] = r;
    // Cholesky of Q_FF (lower, column-major np x np) and the solve
    double* L = w.L.data();
    for (arma::uword j = 0; j < np; ++j)
      for (arma::uword i = j; i < np; ++i) L[i + j * np] = Q(w.idx[i], w.idx[j]);
    for (arma::uword j = 0; j < np; ++j) {
      double dj = L[j + j * np];
      for (arma::uword t = 0; t < j; ++t) dj -= L[j + t * np] * L[j + t * np];
      if (!(dj > 1e-14 * Q(w.idx[j], w.idx[j])) || !(dj > 0.0)) return false;
      dj = std::sqrt(dj);
      L[j + j * np] = dj;
      for (arma::uword i = j + 1; i < np; ++i) {
        double v = L[i + j * np];
        for (arma::uword t = 0; t < j; ++t) v -= L[i + t * np] * L[j + t * np];
        L[i + j * np] = v / dj;
      }
    }
    for (arma::uword i = 0; i < np; ++i) {  // L z = c_F
      double v = c[w.idx[i]];
      for (arma::uword t = 0; t < i; ++t) v -= L[i + t * np] * w.xs[t];
      w.xs[i] = v / L[i + i * np];
    }
    for (arma::uword ii = np; ii-- > 0;) {  // L' x = z
      double v = w.xs[ii];
      for (arma::uword t = ii + 1; t < np; ++t) v -= L[t + ii * np] * w.xs[t];
      w.xs[ii] = v / L[ii + ii * np];
    }
    // a solution beyond the double range (c_F of 1e276 on a block of
    // 1e-186: symnmf's L1 penalty against a coupling of 1e-186 in the fit's
    // units) overflows to +-Inf, and the
    // substitutions' 0 * Inf make it NaN: coordinate descent takes such a
    // step as it is (x_r - g_r / q_r = -Inf clamps to the bound 0)
    for (arma::uword j = 0; j < np; ++j)
      if (!std::isfinite(w.xs[j])) return false;
    // infeasible indices
    arma::uword nv = 0, last = k;
    for (arma::uword j = 0; j < np; ++j)
      if (w.xs[j] < 0.0) { ++nv; last = (last == k || w.idx[j] > last) ? w.idx[j] : last; }
    for (arma::uword r = 0; r < k; ++r) {
      if (w.F[r]) { w.y[r] = 0.0; continue; }
      double g = -c[r];
      for (arma::uword j = 0; j < np; ++j) g += Q(r, w.idx[j]) * w.xs[j];
      w.y[r] = g;
      if (g < -gtol) { ++nv; last = (last == k || r > last) ? r : last; }
    }
    if (nv == 0) {
      for (arma::uword r = 0; r < k; ++r) x[r] = 0.0;
      for (arma::uword j = 0; j < np; ++j) x[w.idx[j]] = w.xs[j];
      return true;
    }
    bool all;
    if (nv < ninf) { ninf = nv; backup = 3; all = true; }
    else if (backup > 0) { --backup; all = true; }
    else all = false;
    if (all) {
      for (arma::uword j = 0; j < np; ++j) if (w.xs[j] < 0.0) w.F[w.idx[j]] = 0;
      for (arma::uword r = 0; r < k; ++r) if (w.y[r] < -gtol) w.F[r] = 1;  // y = 0 on the passive set
    } else {
      w.F[last] = !w.F[last];
    }
  }
  return false;
}

// Exact NNLS for the ANLS rules: block principal pivoting, coordinate
// descent where it declines (g: k doubles of work space for the latter).
inline void nnls_exact(const arma::mat& Q, const double* c, double* x, arma::uword k, BppWork& w,
                       double* g) {
  if (!nnls_bpp(Q, c, x, k, w)) nnls_cd(Q, c, x, k, g);
}

// HALS (Cichocki & Phan 2009) in the accelerated form of Gillis & Glineur
// (2012): H is updated first, then W, and each factor gets several exact
// HALS sweeps per data pass while they are cheap: the products with X (and
// the other factor's Gram matrix) are computed once per half-step and a
// sweep costs only d k^2, so up to 1 + floor(alpha rho) sweeps are made
// (at most 25), rho = (cost of the products, nnz(X) k plus the other
// factor's Gram) / (cost of a sweep), alpha = 1/2, stopping
// once a sweep moves the factor by less than 1/10 of what the first one did
// (Frobenius norm). Without penalties the columns of W are then scaled to
// unit norm (the model is unchanged), which keeps W'W and H H' balanced.
class FrobeniusHALS {
 public:
  explicit FrobeniusHALS(Penalty p) : pen_(p) {}
  static constexpr bool kLagged = false;
  static constexpr double kAlpha = 0.5, kStop = 0.1;
  static constexpr int kMaxInner = 25;
  // sweeps allowed for a factor of d columns given the cost of the products
  static int max_sweeps(double product_cost, double d, double k) {
    const double rho = product_cost / std::max(d * k * k, 1.0);
    return static_cast<int>(std::min<double>(kMaxInner, 1.0 + std::floor(kAlpha * rho)));
  }
  double step(const Data& X, Model& M, int threads) {
    const double k = static_cast<double>(M.Wt.n_rows), m = static_cast<double>(X.n_rows()),
                 n = static_cast<double>(X.n_cols());
    // the work of a product counted by non-zeros for dense data too, so that
    // dense and sparse storage of the same matrix give the same fit
    const double pass = X.nnz() * k;
    arma::mat A, C;
    // H given W
    X.WtX(M.Wt, C, threads);
    if (WW_.n_elem == 0) WW_ = gram(M.Wt, threads);  // else: W is unchanged since the last step
    sweeps(M.H, C, WW_, pen_.l1h, pen_.l2h, max_sweeps(pass + m * k * k, n, k), threads);
    // W given H
    X.XHt(M.H, A, threads);
    const arma::mat HH = gram(M.H, threads);
    sweeps(M.Wt, A, HH, pen_.l1w, pen_.l2w, max_sweeps(pass + n * k * k, m, k), threads);
    WW_ = gram(M.Wt, threads);
    // 1/2 ||X - WH||^2 = 1/2 (||X||^2 - 2 <X H', W> + <W'W, HH'>)
    const double v = X.xnorm2() - 2.0 * inner(A, M.Wt) + inner(WW_, HH);
    const double obj = 0.5 * std::max(v, 0.0) + pen_.value(M);
    if (!pen_.any()) rescale(M, WW_);
    return obj;
  }
  double loss(const Data& X, const Model& M, int threads) const {
    arma::mat C;
    X.WtX(M.Wt, C, threads);
    return half_frobenius(X, M, C, gram(M.Wt, threads), gram(M.H, threads)) + pen_.value(M);
  }
  // up to max_sweeps HALS sweeps of F; stops when a sweep changes F by less
  // than kStop times the first sweep's change
  static int sweeps(arma::mat& F, const arma::mat& A, const arma::mat& B, double l1, double l2,
                    int max_sweeps, int threads) {
    double first = 0.0;
    int s = 0;
    while (s < max_sweeps) {
      const double ch = update_rows(F, A, B, l1, l2, threads);
      ++s;
      if (s == 1) first = ch;
      else if (ch <= kStop * kStop * first) break;
    }
    return s;
  }
  // F (k x d): row r <- max(0, (A_r - sum_{j != r} B_rj F_j - l1) / (B_rr + l2)),
  // rows in turn. Row r of column i depends only on column i, so the sweep
  // runs over groups of kGroup = 8 columns, copied into a k x 8 panel whose
  // row t holds the group's 8 values of row t: the products of row r of B
  // with the 8 columns are 4 two-double vectors (dense.h's v2, a column per
  // lane), summed over t with B_rt broadcast, in two partial sums (even and
  // odd t) to shorten the dependency chains, and row r is updated in the
  // same vectors. A lane's arithmetic depends only on its column, so the
  // result does not depend on the grouping or on the thread count. One
  // parallel region per sweep, blocks of groups handed out dynamically.
  // Returns the squared Frobenius norm of the change, summed in column order
  // whatever the thread count.
  static constexpr int kGroup = 8;
  static double update_rows(arma::mat& F, const arma::mat& A, const arma::mat& B, double l1,
                            double l2, int threads = 1) {
    using dense::v2;
    constexpr int G = kGroup, V = G / 2;
    const arma::uword k = F.n_rows, d = F.n_cols;
    std::vector<double> inv(k), diag(k), bb(2 * k * k);
    std::vector<arma::uword> zero_rows;
    for (arma::uword r = 0; r < k; ++r) {
      diag[r] = B(r, r);
      const double den = B(r, r) + l2;
      // 0: a flat row (the other factor's row r is zero), whose objective
      // is l1 sum(F_r): set to 0 under an L1 penalty, else left as it is
      inv[r] = den > 0.0 ? 1.0 / den : 0.0;
      if (!(den > 0.0) && l1 > 0.0) zero_rows.push_back(r);
      // B_rt twice (a broadcast v2) at bb[2 (r k + t)]; B is symmetric
      const double* br = B.colptr(r);
      for (arma::uword t = 0; t < k; ++t) bb[2 * (r * k + t)] = bb[2 * (r * k + t) + 1] = br[t];
    }
    const int T = effective_threads(threads, d * k * k / 8);
    std::vector<double> change(d, 0.0);
    dense::parallel_blocks((d + G - 1) / G, T, 2, [&](std::size_t gb, std::size_t ge) {
      std::vector<double> panel(k * G);
      double* P = panel.data();
      for (std::size_t g = gb; g < ge; ++g) {
        const std::size_t i0 = g * G, cnt = std::min<std::size_t>(G, d - i0);
        double* f[G];
        const double* a[G];
        ASPECTR_UNROLL
        for (int c = 0; c < G; ++c) {  // short groups repeat their last column, not written back
          const std::size_t ic = i0 + std::min<std::size_t>(c, cnt - 1);
          f[c] = F.colptr(ic); a[c] = A.colptr(ic);
        }
        for (arma::uword t = 0; t < k; ++t) {
          ASPECTR_UNROLL
          for (int c = 0; c < G; ++c) P[t * G + c] = f[c][t];
        }
        v2 ch[V];
        ASPECTR_UNROLL
        for (int v = 0; v < V; ++v) ch[v] = dense::bcast(0.0);
        for (arma::uword r = 0; r < k; ++r) {
          if (inv[r] == 0.0) continue;
          const double* br = bb.data() + 2 * r * k;
          v2 s0[V], s1[V];  // (B F)_r: even and odd t
          ASPECTR_UNROLL
          for (int v = 0; v < V; ++v) { s0[v] = dense::bcast(0.0); s1[v] = dense::bcast(0.0); }
          arma::uword t = 0;
          for (; t + 2 <= k; t += 2) {
            const v2 b0 = dense::load(br + 2 * t), b1 = dense::load(br + 2 * t + 2);
            const double* p = P + t * G;
            ASPECTR_UNROLL
            for (int v = 0; v < V; ++v) {
              s0[v] += b0 * dense::load(p + 2 * v);
              s1[v] += b1 * dense::load(p + G + 2 * v);
            }
          }
          if (t < k) {
            const v2 b0 = dense::load(br + 2 * t);
            const double* p = P + t * G;
            ASPECTR_UNROLL
            for (int v = 0; v < V; ++v) s0[v] += b0 * dense::load(p + 2 * v);
          }
          const v2 dg = dense::bcast(diag[r]), iv = dense::bcast(inv[r]), lv = dense::bcast(l1);
          double* pr = P + r * G;
          ASPECTR_UNROLL
          for (int v = 0; v < V; ++v) {
            const v2 old = dense::load(pr + 2 * v);
            const v2 av = v2{a[2 * v][r], a[2 * v + 1][r]};
            const v2 nv = dense::max0((av - (s0[v] + s1[v]) + dg * old - lv) * iv);
            dense::store(pr + 2 * v, nv);
            const v2 dv = nv - old;
            ch[v] += dv * dv;
          }
        }
        for (std::size_t c = 0; c < cnt; ++c) {
          for (arma::uword t = 0; t < k; ++t) f[c][t] = P[t * G + c];
          change[i0 + c] = dense::lane(ch[c / 2], static_cast<int>(c % 2));
        }
      }
    });
    double total = 0.0;
    for (double c : change) total += c;
    for (arma::uword r : zero_rows) {
      for (arma::uword i = 0; i < d; ++i) { total += F(r, i) * F(r, i); F(r, i) = 0.0; }
    }
    return total;
  }
  // unit-norm columns of W, scale moved into H (the model is unchanged); the
  // cached W'W is rescaled to match
  static void rescale(Model& M, arma::mat& WW) {
    const arma::vec s = unit_rows(M);
    WW.each_col() /= s;
    WW.each_row() /= s.t();
  }
 private:
  Penalty pen_;
  arma::mat WW_;  // W'W of the current W (cached between steps)
};

// Alternating Frobenius updates: W given H (from (X H')' and the cached
// H H'), then H given W (from W'X and W'W); the objective comes from the
// same products. Derived supplies block(F, A, B, l1, l2, threads).
template <class Derived>
class AlternatingFrobenius {
 public:
  explicit AlternatingFrobenius(Penalty p) : pen_(p) {}
  static constexpr bool kLagged = false;
  double step(const Data& X, Model& M, int threads) {
    Derived& self = static_cast<Derived&>(*this);
    arma::mat A, C;
    X.XHt(M.H, A, threads);
    if (HH_.n_elem == 0) HH_ = gram(M.H, threads);  // else: H is unchanged since the last step
    self.block(M.Wt, A, HH_, pen_.l1w, pen_.l2w, threads);
    X.WtX(M.Wt, C, threads);
    const arma::mat D = gram(M.Wt, threads);
    self.block(M.H, C, D, pen_.l1h, pen_.l2h, threads);
    HH_ = gram(M.H, threads);
    return half_frobenius(X, M, C, D, HH_) + pen_.value(M);
  }
  double loss(const Data& X, const Model& M, int threads) const {
    arma::mat C;
    X.WtX(M.Wt, C, threads);
    return half_frobenius(X, M, C, gram(M.Wt, threads), gram(M.H, threads)) + pen_.value(M);
  }

 private:
  Penalty pen_;
  arma::mat HH_;  // H H' of the current H (cached between steps)
};

class FrobeniusANLS : public AlternatingFrobenius<FrobeniusANLS> {
 public:
  explicit FrobeniusANLS(Penalty p) : AlternatingFrobenius<FrobeniusANLS>(p) {}
  void block(arma::mat& F, const arma::mat& A, const arma::mat& B, double l1, double l2,
             int threads) const {
    solve_all(F, A, B, l1, l2, threads);
  }
  // every column f of F: min 1/2 f'(B + l2 I)f - (a - l1)'f, f >= 0
  static void solve_all(arma::mat& F, const arma::mat& A, const arma::mat& B, double l1, double l2,
                        int threads) {
    const arma::uword k = F.n_rows;
    arma::mat Q = B;
    Q.diag() += l2;
    const int T = effective_threads(threads, F.n_cols * k * 8);
    dense::parallel_blocks(F.n_cols, T, 8, [&](std::size_t b, std::size_t e) {
      std::vector<double> c(k), g(k);
      BppWork w(k);
      for (std::size_t i = b; i < e; ++i) {
        for (arma::uword r = 0; r < k; ++r) c[r] = A(r, i) - l1;
        nnls_exact(Q, c.data(), F.colptr(i), k, w, g.data());
      }
    });
  }
};

// Projected ALS (Berry et al. 2007): each factor by unconstrained least
// squares, through the pseudo-inverse of the (penalized) Gram matrix of the
// other, then its negative entries set to zero. A heuristic: the projection
// of the unconstrained minimizer is not the constrained one, so the
// objective can rise between iterations (ANLS solves the same subproblems
// exactly).
class FrobeniusALS : public AlternatingFrobenius<FrobeniusALS> {
 public:
  explicit FrobeniusALS(Penalty p) : AlternatingFrobenius<FrobeniusALS>(p) {}
  void block(arma::mat& F, const arma::mat& A, const arma::mat& B, double l1, double l2,
             int) const {
    arma::mat Q = B;
    Q.diag() += l2;
    F = arma::pinv(Q) * (A - l1);
    F.transform([](double v) { return v > 0.0 ? v : 0.0; });
  }
};

// Extrapolated block updates (Ang & Gillis 2019, "HER"): after H is updated
// (given the extrapolated W) it is extrapolated, Hy = Hn + beta (Hn - H),
// and W is updated given Hy; then Wy = Wn + beta (Wn - W) is the fixed
// factor of the next H update. beta adapts: when the new pair (Wn, Hn)
// lowers the objective it is accepted, beta <- min(bbar, gamma beta) and
// bbar <- min(1, gbar bbar); otherwise the step is rejected (the iterate
// stays), bbar <- beta, beta <- beta / eta, and the next step starts from the
// iterate without extrapolation. The extrapolated points are projected onto
// the non-negative orthant (an extrapolated factor with negative entries can
// drive the other factor to zero and the fit into the all-zero saddle point):
// linearity gives their products with X from those of the iterates,
// Wy'X = W_n'X + beta (W_n'X - W'X), and the projection adds
// P'X with P = max(0, -Wy), which is non-zero only at the clipped entries and
// is added row by row of X (project_extrapolated()), so a step still costs
// about the two products with X of plain HALS; the objective of the iterate
// (Wn, Hn) comes exactly from Gram matrices, penalties included. Inner: the
// block solver (HALS sweeps or exact NNLS). The rule is nmf/piece.h's
// PieceHER (one implementation for a matrix and for shards); KLHER below
// extrapolates the KL multiplicative updates the same way.
struct HerParams {
  double beta0 = 0.5, eta = 1.5, gamma = 1.01, gamma_bar = 1.005;
};

class FrobeniusMU : public AlternatingFrobenius<FrobeniusMU> {
 public:
  FrobeniusMU(Penalty p, double eps) : AlternatingFrobenius<FrobeniusMU>(p), eps_(eps) {}
  void block(arma::mat& F, const arma::mat& A, const arma::mat& B, double l1, double l2, int) const {
    const arma::mat den = B * F;
    for (arma::uword j = 0; j < F.n_elem; ++j)
      F[j] *= std::max(A[j], eps_) / (den[j] + l1 + l2 * F[j] + eps_);
  }

 private:
  double eps_;
};

// Generalized KL by multiplicative updates over the non-zeros.
class KLMU {
 public:
  KLMU(Penalty p, double eps) : pen_(p), eps_(eps) {}
  static constexpr bool kLagged = true;
  double step(const Data& X, Model& M, int threads) {
    double xlogv = 0.0;
    arma::mat num;
    ratio_pass(X, M, num, &xlogv, true, threads);            // rows: numerators for W
    const arma::vec hsum = arma::sum(M.H, 1);
    const double before = constant(X) - xlogv + arma::dot(arma::sum(M.Wt, 1), hsum) + pen_.value(M);
    mm_update(M.Wt, num, M.Wt, hsum, pen_.l1w, pen_.l2w);
    ratio_pass(X, M, num, nullptr, false, threads);          // columns: numerators for H
    const arma::vec wsum = arma::sum(M.Wt, 1);
    mm_update(M.H, num, M.H, wsum, pen_.l1h, pen_.l2h);
    return before;
  }
  // Minimizer of the majorizer -c log w + b w + l2/2 w^2: the positive root
  // of l2 w^2 + b w - c = 0 (w = c / b without L2), in a cancellation-free form.
  double mm_root(double c, double b, double l2) const {
    if (l2 == 0.0) return c / (b + eps_);
    return 2.0 * c / (b + std::sqrt(b * b + 4.0 * l2 * c) + eps_);
  }
  // out(r, c) <- mm_root(num(r, c) F(r, c), sums[r] + l1, l2) for a k x d
  // factor F (out may be F itself: every entry reads only its own F).
  void mm_update(arma::mat& out, const arma::mat& num, const arma::mat& F, const arma::vec& sums,
                 double l1, double l2) const {
    for (arma::uword c = 0; c < F.n_cols; ++c)
      for (arma::uword r = 0; r < F.n_rows; ++r)
        out(r, c) = mm_root(num(r, c) * F(r, c), sums[r] + l1, l2);
  }
  double loss(const Data& X, const Model& M, int threads) {
    arma::mat num;
    double xlogv = 0.0;
    ratio_pass(X, M, num, &xlogv, true, threads);
    return constant(X) - xlogv + arma::dot(arma::sum(M.Wt, 1), arma::sum(M.H, 1)) + pen_.value(M);
  }
  // sum x log x - sum x over the non-zeros (computed once)
  double constant(const Data& X) {
    if (!have_const_) {
      const_ = data_constant(X);
      have_const_ = true;
    }
    return const_;
  }
  static double data_constant(const Data& X) {
    double c = 0.0;
    auto add = [&](double x) { if (x > 0.0) c += x * std::log(x) - x; };
    if (X.dense()) for (double x : X.D()) add(x);
    else for (std::size_t s = 0; s < X.S().nnz; ++s) add(X.S().val(s));
    return c;
  }
  // by_row: num (k x m) = sum_j (x_ij / v_ij) H(:, j); else num (k x n) =
  // sum_i (x_ij / v_ij) Wt(:, i). xlogv (by_row only) += sum x log v, without
  // a log per term for whole counts (logsum.h).
  // accumulate = false (with obj): the objective term only, num untouched.
  static void ratio_pass(const Data& X, const Model& M, arma::mat& num, double* obj, bool by_row,
                         int threads, bool accumulate = true) {
    ratio_pass(X, M.Wt, M.H, num, obj, by_row, threads, accumulate);
  }
  static void ratio_pass(const Data& X, const arma::mat& Wt, const arma::mat& H, arma::mat& num, double* obj,
                         bool by_row, int threads, bool accumulate = true) {
    if (X.dense()) { ratio_pass_dense(X, Wt, H, num, obj, by_row, threads, accumulate); return; }
    // (the objective alone is the same sum over X's columns)
    if (!accumulate && !X.has_rows()) by_row = false;
    if (by_row) X.need_rows();
    const arma::uword k = Wt.n_rows;
    const arma::mat& Own = by_row ? Wt : H;     // the side being accumulated
    const arma::mat& Oth = by_row ? H : Wt;
    if (accumulate) num.zeros(k, Own.n_cols); else num.zeros(k, 1);
    const int T = effective_threads(threads, X.dense() ? X.n_rows() * X.n_cols() : X.S().nnz);
    std::vector<double> parts(T, 0.0);
    const Csc& A = by_row ? X.St() : X.S();
    parallel_chunks(Own.n_cols, T, [&](int tid, std::size_t b, std::size_t e) {
      LogSum ls;
      for (std::size_t c = b; c < e; ++c) {
        const double* __restrict own = Own.colptr(c);
        double* __restrict o = accumulate ? num.colptr(c) : num.colptr(0);
        auto visit = [&](arma::uword other, double x) {
          const double* __restrict f = Oth.colptr(other);
          double v = 0.0;
#pragma omp simd reduction(+ : v)
          for (arma::uword r = 0; r < k; ++r) v += own[r] * f[r];
          v = std::max(v, 1e-300);
          const double t = x / v;
          if (obj) ls.add(v, x, count_multiplicity(x));
          if (!accumulate) return;
#pragma omp simd
          for (arma::uword r = 0; r < k; ++r) o[r] += t * f[r];
        };
        for (arma::uword s = A.p[c]; s < A.p[c + 1]; ++s) visit(A.i[s], A.val(s));
      }
      if (obj) parts[tid] = ls.value();
    });
    if (obj) for (double p : parts) *obj += p;
  }
  // Dense X, by blocks of columns: V = W H_b (m x nb) with the dense kernel,
  // R = X_b / V at the non-zeros of X_b (0 elsewhere), then num (k x m) +=
  // (R H_b')' (by_row) or num(:, b) = W' R. V is never formed whole.
  static void ratio_pass_dense(const Data& X, const arma::mat& Wt, const arma::mat& H, arma::mat& num,
                               double* obj, bool by_row, int threads, bool accumulate = true) {
    const arma::mat& D = X.D();
    const arma::uword k = Wt.n_rows, m = D.n_rows, n = D.n_cols;
    const arma::uword nb = std::min<arma::uword>(n, std::max<arma::uword>(8, (1u << 18) / std::max<arma::uword>(m, 1)));
    const arma::mat W = Wt.t();                   // m x k
    arma::mat Ht(nb, k), V(m, nb), acc;
    if (!accumulate) {}
    else if (by_row) acc.zeros(m, k); else num.set_size(k, n);
    const int T = effective_threads(threads, m * nb);
    // (the objective's part of each column, summed in column order: the
    // same for any thread count)
    std::vector<double> parts(obj ? n : 0, 0.0);
    for (arma::uword b0 = 0; b0 < n; b0 += nb) {
      const arma::uword w = std::min(nb, n - b0);
      for (arma::uword j = 0; j < w; ++j)
        for (arma::uword r = 0; r < k; ++r) Ht(j, r) = H(r, b0 + j);
      dense::nn(W.memptr(), m, m, k, Ht.memptr(), nb, w, V.memptr(), threads);  // V(:, 0..w) = W H_b
      parallel_chunks(w, T, [&](int, std::size_t jb, std::size_t je) {
        for (std::size_t j = jb; j < je; ++j) {
          LogSum ls;
          const double* x = D.colptr(b0 + j);
          double* v = V.colptr(j);
          for (arma::uword i = 0; i < m; ++i) {
            if (x[i] != 0.0) {
              const double vi = std::max(v[i], 1e-300);
              if (obj) ls.add(vi, x[i], count_multiplicity(x[i]));
              v[i] = x[i] / vi;
            } else {
              v[i] = 0.0;
            }
          }
          if (obj) parts[b0 + j] = ls.value();
        }
      });
      if (!accumulate) continue;
      if (by_row)
        dense::nn(V.memptr(), m, m, w, H.colptr(b0), k, k, acc.memptr(), threads, true);
      else
        dense::tn(W.memptr(), m, k, V.memptr(), m, w, m, num.colptr(b0), threads);
    }
    if (accumulate && by_row) num = acc.t();
    if (obj) for (double p : parts) *obj += p;
  }
 private:
  Penalty pen_;
  double eps_;
  bool have_const_ = false;
  double const_ = 0.0;
};

// Beta-divergence multiplicative updates on dense data (Fevotte and Idier
// 2011: exponent gamma(beta), L1/L2 penalties in the denominator). The
// updates are monotone in exact arithmetic; at extreme scales (the model
// floored where it is raised to a negative power, penalties many orders above
// the data term) they need not be, so each block update is safeguarded: the
// step F o R^gamma is shortened in the log domain (F o R^(gamma t), t = 1,
// 1/2, 1/4, ...; R is a descent direction there) until the objective does not
// rise, and a block with no such step is left unchanged. At t = 1 (every
// ordinary fit) the iterates are those of the plain updates.
// With cell weights Om (m x n, optional; nmf/weighted.h's omega) the
// divergence is sum omega d(x, v) and the updates weigh P and Q by omega
// (the same majorization, term by term: still monotone).
class BetaMU {
 public:
  BetaMU(double beta, Penalty p, double eps, const arma::mat* Om = nullptr) : b_(beta), pen_(p), eps_(eps), Om_(Om) {
    gamma_ = b_ < 1.0 ? 1.0 / (2.0 - b_) : (b_ > 2.0 ? 1.0 / (b_ - 1.0) : 1.0);
  }
  static constexpr bool kLagged = false;
  double step(const Data& X, Model& M, int) {
    const arma::mat& D = X.D();
    if (!have_) { V_ = M.Wt.t() * M.H; f_ = divergence(D, V_) + pen_.value(M); have_ = true; }
    // W (the model floored at eps where it is raised to a negative power: a
    // zero of W H at a zero of x would give 0 * inf)
    arma::mat P, Q;
    powers(V_, D, P, Q);
    arma::mat num = M.H * P.t(), den = M.H * Q.t();     // k x m
    safeguarded(D, M, M.Wt, ratios(M.Wt, num, den, pen_.l1w, pen_.l2w));
    powers(V_, D, P, Q);
    num = M.Wt * P; den = M.Wt * Q;                      // k x n
    safeguarded(D, M, M.H, ratios(M.H, num, den, pen_.l1h, pen_.l2h));
    return f_;
  }
  double loss(const Data& X, const Model& M, int) const {
    return divergence(X.D(), M.Wt.t() * M.H) + pen_.value(M);
  }
  double divergence(const arma::mat& X, const arma::mat& V) const {
    double s = 0.0;
    for (arma::uword j = 0; j < X.n_elem; ++j) {
      const double w = Om_ ? (*Om_)[j] : 1.0;
      if (w == 0.0) continue;
      const double x = X[j], v = std::max(V[j], 1e-300);
      double t;
      if (b_ == 0.0) t = x / v - std::log(x / v) - 1.0;
      else if (b_ == 1.0) t = (x > 0 ? x * std::log(x / v) : 0.0) - x + v;
      // (each term is >= 0; the max removes rounding below 0)
      else {
        const double vb1 = std::pow(v, b_ - 1.0);
        t = std::max(0.0, (std::pow(x, b_) + (b_ - 1.0) * v * vb1 - b_ * x * vb1) / (b_ * (b_ - 1.0)));
      }
      s += Om_ ? w * t : t;
    }
    return s;
  }
  int shortened() const { return shortened_; }
  double gamma() const { return gamma_; }
  // (the parts below are those of the rule on pieces too, PieceBetaMU in
  // nmf/piece.h: the same arithmetic on every piece)
  // Q = v^(b-1) and P = x v^(b-2) with the model v floored at eps (the floor
  // keeps v^(b-2) below about 1e300 also when eps = 0): one power per cell
  void powers(const arma::mat& V, const arma::mat& D, arma::mat& P, arma::mat& Q) const {
    const double lo = std::max(eps_, std::exp(-690.0 / std::max(1.0, 2.0 - b_)));
    Q.set_size(arma::size(V));
    P.set_size(arma::size(V));
    for (arma::uword j = 0; j < V.n_elem; ++j) {
      const double v = V[j] < lo ? lo : V[j];
      const double q = std::pow(v, b_ - 1.0);
      Q[j] = q;
      P[j] = q / v * D[j];
      if (Om_) { Q[j] *= (*Om_)[j]; P[j] *= (*Om_)[j]; }
    }
  }
  arma::mat ratios(const arma::mat& F, const arma::mat& num, const arma::mat& den,
                   double l1, double l2) const {
    arma::mat R(arma::size(F));
    for (arma::uword j = 0; j < F.n_elem; ++j)
      R[j] = std::max(num[j], eps_) / (den[j] + l1 + l2 * F[j] + eps_);
    return R;
  }
 private:
  void safeguarded(const arma::mat& D, Model& M, arma::mat& F, const arma::mat& R) {
    const arma::mat F0 = F;
    double t = 1.0;
    for (int tries = 0; tries < 60; ++tries, t *= 0.5) {
      const double g = gamma_ * t;
      for (arma::uword j = 0; j < F.n_elem; ++j)
        F[j] = F0[j] * (g == 1.0 ? R[j] : std::pow(R[j], g));
      arma::mat V = M.Wt.t() * M.H;
      const double f = divergence(D, V) + pen_.value(M);
      if (no_rise(f, f_)) {
        V_ = std::move(V);
        f_ = f;
        if (tries) ++shortened_;
        return;
      }
    }
    F = F0;  // no step lowers the objective: the block stays (V_, f_ hold)
    ++shortened_;
  }
  double b_, gamma_;
  Penalty pen_;
  double eps_;
  const arma::mat* Om_;
  bool have_ = false;
  double f_ = 0.0;
  arma::mat V_;
  int shortened_ = 0;
};

}  // namespace nmf
}  // namespace aspectr

#endif
