// aspectr/data.h — the data layer shared by every solver.
//
// Every family works on a non-negative N-way array X (N = 2 is a matrix).
// Sparse data are held in coordinate form (COO): one column of `idx` per
// non-zero, holding its N zero-based indices, and the value in `val`.
// Dense input is converted to this form at the boundary (zeros dropped): all
// KL/Tsallis work and the contractions of the L2 solver only visit non-zeros.
//
// Factors are stored transposed, k x d_n (one contiguous k-vector per index),
// which is the access pattern of every kernel over non-zeros.
#ifndef ASPECTR_DATA_H
#define ASPECTR_DATA_H

#include <algorithm>
#include <armadillo>
#include <cmath>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>
#include "interrupt.h"

namespace aspectr {

using index_t = std::uint32_t;

// An index value meaning "not observed in this mode": the cell is the
// marginal over that mode (its factor contributes 1). Used for latent class
// analysis with missing responses.
constexpr index_t kMissing = static_cast<index_t>(-1);

// Memory kept from one use to the next (out-of-core passes over shard
// files, which would otherwise allocate and free matrices of the factors'
// size for every shard): slot j holds at least n doubles.
struct Workspace {
  std::vector<std::vector<double>> slots;
  double* get(std::size_t j, std::size_t n) {
    if (slots.size() <= j) slots.resize(j + 1);
    if (slots[j].size() < n) slots[j].resize(n);
    return slots[j].data();
  }
};

struct SparseTensor {
  std::vector<arma::uword> dims;  // d_1, ..., d_N
  // N * nnz indices, non-zero s at [s*N .. s*N+N-1]: owned (`idx`), or
  // borrowed from the caller's memory (`view`, when set: the caller keeps
  // it alive as long as the tensor and its copies; the R glue points it at
  // R's index matrix, saving a copy of the data's size)
  std::vector<index_t> idx;
  const index_t* view = nullptr;
  arma::vec val;                  // nnz stored values, all > 0
  // The data's values are the stored ones times inv_top times inv_sum
  // (value(s)): both 1 for data held as they are; normalize_scales() sets
  // them to normalize without a copy, so that a fit can work on the
  // caller's raw counts in place (val may be a view of them).
  double inv_top = 1.0, inv_sum = 1.0;

  std::size_t order() const { return dims.size(); }
  std::size_t nnz() const { return val.n_elem; }
  const index_t* indices() const { return view != nullptr ? view : idx.data(); }
  std::size_t index_count() const { return view != nullptr ? dims.size() * val.n_elem : idx.size(); }
  const index_t* at(std::size_t s) const { return indices() + s * dims.size(); }
  // f(s, indices of cell s) for the cells b..e-1 in order (the kernels'
  // loop, shared with CscMatrix), looking for a user's interrupt between
  // blocks of kPollCells cells (interrupt.h: not inside a parallel region)
  static constexpr std::size_t kPollCells = 65536;
  template <class F>
  void cells(std::size_t b, std::size_t e, F&& f) const {
    for (std::size_t s = b; s < e;) {
      const std::size_t end = std::min(e, s + kPollCells);
      for (; s < end; ++s) f(s, at(s));
      if (s < e) poll();
    }
  }
  // the value of cell s (stored value times the scales; exact when unscaled)
  double value(std::size_t s) const { return val[s] * inv_top * inv_sum; }
  bool scaled() const { return inv_top != 1.0 || inv_sum != 1.0; }
  double total() const {
    if (!scaled()) return arma::accu(val);
    double t = 0.0;
    for (std::size_t s = 0; s < val.n_elem; ++s) t += value(s);
    return t;
  }
  // sum of the squared values
  double sum_sq() const {
    if (!scaled()) return arma::dot(val, val);
    double t = 0.0;
    for (std::size_t s = 0; s < val.n_elem; ++s) { const double g = value(s); t += g * g; }
    return t;
  }

  // Checks the invariants; throws std::invalid_argument when broken.
  void validate() const {
    const std::size_t N = dims.size();
    if (N < 2) throw std::invalid_argument("a tensor needs at least 2 modes");
    if (index_count() != N * val.n_elem)
      throw std::invalid_argument("index and value lengths disagree");
    const index_t* ix = indices();
    for (std::size_t s = 0; s < val.n_elem; ++s) {
      if (!(val[s] >= 0.0) || !std::isfinite(val[s]))
        throw std::invalid_argument("values must be finite and non-negative");
      for (std::size_t n = 0; n < N; ++n)
        if (ix[s * N + n] >= dims[n] && ix[s * N + n] != kMissing)
          throw std::invalid_argument(
              "index out of range: cell " + std::to_string(s + 1) + " has 0-based index " +
              std::to_string(ix[s * N + n]) + " in mode " + std::to_string(n + 1) +
              ", which has size " + std::to_string(dims[n]));
    }
  }

  bool has_missing() const {
    const index_t* ix = indices();
    const std::size_t m = index_count();
    for (std::size_t j = 0; j < m; ++j) if (ix[j] == kMissing) return true;
    return false;
  }

  // The same data scaled to unit sum (the empirical distribution G).
  // Divides by the largest value first, so that a total beyond the double
  // range (values near 1e300) does not turn G into zeros.
  SparseTensor normalized() const {
    SparseTensor g = *this;
    g.normalize();
    return g;
  }
  // The values normalized to unit sum as normalize() does, by the scales
  // alone (the stored values, possibly the caller's memory, untouched).
  // False, with nothing changed, when 1 / max is not a normal number (a
  // largest value outside the normal range's reciprocals): normalize() a
  // copy then.
  bool normalize_scales() {
    inv_top = inv_sum = 1.0;
    if (val.n_elem == 0) return true;
    const double top = val.max();
    if (!(top > 0.0)) return true;
    if (!std::isnormal(1.0 / top)) return false;
    inv_top = 1.0 / top;
    double tot = 0.0;
    for (std::size_t s = 0; s < val.n_elem; ++s) tot += val[s] * inv_top;
    if (tot > 0) inv_sum = 1.0 / tot;
    return true;
  }
  // The scales dividing the stored values by `top`, then by `scaled` (the
  // normalization of data of which these cells are a part: the whole
  // data's maximum and sum of values / top). False, with nothing changed,
  // when a reciprocal is not a normal number: divide a copy then.
  bool set_scales(double top, double scaled) {
    if (!std::isnormal(1.0 / top) || !std::isnormal(1.0 / scaled)) return false;
    inv_top = 1.0 / top;
    inv_sum = 1.0 / scaled;
    return true;
  }
  // The values divided by their total (by way of their maximum: the total
  // may overflow), in place.
  void normalize() {
    if (scaled()) throw std::logic_error("normalize() of a tensor with scales");
    if (val.n_elem == 0) return;
    const double top = val.max();
    if (!(top > 0.0)) return;
    val /= top;
    const double tot = arma::accu(val);
    if (tot > 0) val /= tot;
  }
};

// A matrix held in compressed-column form (R's dgCMatrix slots, borrowed:
// the caller keeps them alive), its cells in column order: the cells of a
// SparseTensor ordered by column, without its 8 bytes of indices per cell.
// The kernels over cells (mttkrp(), qem_weights(), cell_sum()) take either;
// value(s), the scales and the order of the cells are the SparseTensor's.
// No stored value may be zero (the caller drops those or uses a
// SparseTensor).
struct CscMatrix {
  std::vector<arma::uword> dims;  // rows, columns
  const int* p = nullptr;         // columns + 1 pointers into the cells
  const int* rows = nullptr;      // the cells' 0-based rows
  arma::vec val;                  // the stored values (a view)
  double inv_top = 1.0, inv_sum = 1.0;

  std::size_t order() const { return 2; }
  std::size_t nnz() const { return val.n_elem; }
  double value(std::size_t s) const { return val[s] * inv_top * inv_sum; }
  template <class F>
  void cells(std::size_t b, std::size_t e, F&& f) const {
    if (b >= e) return;
    const std::size_t ncol = dims[1];
    // the column of cell b: the last j with p[j] <= b
    std::size_t j = static_cast<std::size_t>(
        std::upper_bound(p, p + ncol + 1, static_cast<long long>(b),
                         [](long long v, int q) { return v < static_cast<long long>(q); }) - p) - 1;
    index_t ix[2];
    ix[1] = static_cast<index_t>(j);
    std::size_t next = static_cast<std::size_t>(p[j + 1]);
    for (std::size_t s = b; s < e;) {
      const std::size_t end = std::min(e, s + SparseTensor::kPollCells);
      for (; s < end; ++s) {
        while (s >= next) { ++j; next = static_cast<std::size_t>(p[j + 1]); ix[1] = static_cast<index_t>(j); }
        ix[0] = static_cast<index_t>(rows[s]);
        f(s, static_cast<const index_t*>(ix));
      }
      if (s < e) poll();
    }
  }
  // the values' scales to unit sum, as SparseTensor::normalize_scales()
  // (false when 1 / max is not a normal number)
  bool normalize_scales() {
    SparseTensor t;
    t.val = arma::vec(const_cast<double*>(val.memptr()), val.n_elem, false, true);
    if (!t.normalize_scales()) return false;
    inv_top = t.inv_top;
    inv_sum = t.inv_sum;
    return true;
  }
};

// Builds a SparseTensor from a column-major dense matrix, dropping zeros.
inline SparseTensor from_dense(const arma::mat& X) {
  SparseTensor t;
  t.dims = {X.n_rows, X.n_cols};
  std::vector<double> v;
  for (arma::uword i = 0; i < X.n_rows; ++i)
    for (arma::uword j = 0; j < X.n_cols; ++j)
      if (X(i, j) != 0.0) {
        t.idx.push_back(static_cast<index_t>(i));
        t.idx.push_back(static_cast<index_t>(j));
        v.push_back(X(i, j));
      }
  t.val = arma::vec(v);
  return t;
}

// The aspect model P = sum_r lambda_r u_r^(1) o ... o u_r^(N).
// F[n] is k x d_n; row r of F[n] is the distribution u_r^(n).
struct AspectModel {
  arma::vec lambda;
  std::vector<arma::mat> F;

  arma::uword rank() const { return lambda.n_elem; }
  std::size_t order() const { return F.size(); }

  // Model probability of one cell.
  double cell(const index_t* ix) const {
    const arma::uword k = rank();
    double s = 0.0;
    for (arma::uword r = 0; r < k; ++r) {
      double p = lambda[r];
      for (std::size_t n = 0; n < F.size(); ++n)
        if (ix[n] != kMissing) p *= F[n](r, ix[n]);
      s += p;
    }
    return s;
  }
};

}  // namespace aspectr

#endif
