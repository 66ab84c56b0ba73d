// aspectr/nmf/shard.h — NMF of X split by rows into shards X_s (m_s x n).
//
// Every update of the rules in rules.h that this supports splits into a
// part per shard and a small reduce, because W's rows belong to the rows of
// X:
//  * W given H is row by row: each shard updates its own rows of W from
//    X_s H' and H H' (MU, ANLS, ALS: one block; HALS: sweeps, whose stopping
//    rule needs the change summed over the shards);
//  * H given W needs W'X = sum_s W_s'X_s and W'W = sum_s W_s'W_s (k x n and
//    k x k), the reduce;
//  * the objective, 1/2 (||X||^2 - 2 <W'X, H> + <W'W, HH'>) under Frobenius
//    and sum x log x - x - x log v + sum(W) sum(H) under KL, is a sum of the
//    same parts.
// The functions here are one shard's part; the caller (one process, or the
// workers of a cluster) adds them up and updates H as the in-memory rule
// does, in the same order, so that the fit equals the in-memory one up to
// rounding.
#ifndef ASPECTR_NMF_SHARD_H
#define ASPECTR_NMF_SHARD_H

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>
#include <vector>
#include "../logsum.h"
#include "../shard_file.h"
#include "data.h"
#include "kl_cd.h"
#include "rules.h"

namespace aspectr {
namespace nmf {

// A shard's cells (0-based row and column, value) in compressed-column
// form, every value divided by `scale` (the fit runs on X / max(X)); cells
// in any order, rows sorted within each column as the in-memory data. Cells
// already in that order (a file written column by column) are copied in
// one pass; otherwise stable counting sorts by row (unless the cells are
// in row order already), then by column.
inline Csc shard_csc(const int* row, const int* col, const double* val, std::size_t nnz,
                     arma::uword m, arma::uword n, double scale, std::size_t stride = 1) {
  // (cell t's row and column: row[t * stride], col[t * stride], so that
  // the interleaved indices of a shard, stride 2, are read in place)
  auto r_of = [&](std::size_t t) { return row[t * stride]; };
  auto c_of = [&](std::size_t t) { return col[t * stride]; };
  std::vector<std::size_t> col_start(n + 1, 0);
  bool in_order = true, by_rows = true;
  for (std::size_t t = 0; t < nnz; ++t) {
    const int r = r_of(t), c = c_of(t);
    if (r < 0 || static_cast<arma::uword>(r) >= m || c < 0 || static_cast<arma::uword>(c) >= n)
      throw std::runtime_error("a cell's index is outside the shard's size");
    ++col_start[c + 1];
    if (t > 0) {
      const int r0 = r_of(t - 1), c0 = c_of(t - 1);
      if (c < c0 || (c == c0 && r <= r0)) in_order = false;
      if (r < r0) by_rows = false;
    }
  }
  for (arma::uword c = 0; c < n; ++c) col_start[c + 1] += col_start[c];
  Csc A;
  A.n_rows = m; A.n_cols = n;
  A.p.assign(col_start.begin(), col_start.end());
  A.own(nnz);
  if (in_order) {
    for (std::size_t t = 0; t < nnz; ++t) {
      A.i_store[t] = static_cast<std::uint32_t>(r_of(t));
      A.x_store[t] = val[t] / scale;
    }
    return A;
  }
  std::vector<std::size_t> order;
  if (!by_rows) {
    std::vector<std::size_t> by_row(m + 1, 0);
    for (std::size_t t = 0; t < nnz; ++t) ++by_row[r_of(t) + 1];
    for (arma::uword r = 0; r < m; ++r) by_row[r + 1] += by_row[r];
    order.resize(nnz);
    for (std::size_t t = 0; t < nnz; ++t) order[by_row[r_of(t)]++] = t;
  }
  for (std::size_t u = 0; u < nnz; ++u) {
    const std::size_t t = by_rows ? u : order[u];
    const std::size_t d = col_start[c_of(t)]++;
    A.i_store[d] = static_cast<std::uint32_t>(r_of(t));
    A.x_store[d] = val[t] / scale;
  }
  return A;
}

// A shard's data for NMF, by columns and by rows (a shard kept in memory,
// or read whole from a file of another kind than .shard; .shard files are
// streamed, see stream_products() and stream_kl())
inline Data shard_data(const int* row, const int* col, const double* val, std::size_t nnz, arma::uword m,
                       arma::uword n, double scale, std::size_t stride = 1) {
  return Data(shard_csc(row, col, val, nnz, m, n, scale, stride), shard_csc(col, row, val, nnz, n, m, scale, stride));
}

// The methods of Frobenius NMF that shards support, and their block update
// of a k x d factor F given A (the other factor's product with X) and B (its
// Gram matrix): the same calls as the in-memory rules.
enum class FrobMethod { MU, ANLS, ALS, HALS };

inline FrobMethod parse_frob_method(const std::string& m) {
  if (m == "mu") return FrobMethod::MU;
  if (m == "anls") return FrobMethod::ANLS;
  if (m == "als") return FrobMethod::ALS;
  if (m == "hals") return FrobMethod::HALS;
  throw std::invalid_argument("unknown Frobenius method '" + m + "' for sharded data");
}

// One block update. HALS: up to max_sweeps sweeps with the in-memory
// stopping rule (the H side, whose change is all on the caller's side);
// returns the number of sweeps.
inline int frob_block(FrobMethod m, arma::mat& F, const arma::mat& A, const arma::mat& B, double l1,
                      double l2, double eps, int max_sweeps, int threads) {
  switch (m) {
    case FrobMethod::MU: FrobeniusMU(Penalty(), eps).block(F, A, B, l1, l2, threads); return 1;
    case FrobMethod::ANLS: FrobeniusANLS::solve_all(F, A, B, l1, l2, threads); return 1;
    case FrobMethod::ALS: FrobeniusALS(Penalty()).block(F, A, B, l1, l2, threads); return 1;
    case FrobMethod::HALS: return FrobeniusHALS::sweeps(F, A, B, l1, l2, max_sweeps, threads);
  }
  return 0;
}

// A shard's part of the sums of W (k x m_s, the core's layout): W'W, the
// penalty's sum(W) and sum(W^2), and the rows' sums and sums of squares.
struct WSums {
  arma::mat D;
  arma::vec wsum, wsq;
  double s1 = 0.0, s2 = 0.0;
};

inline WSums w_sums(const arma::mat& Wt, int threads) {
  WSums s;
  s.D = gram(Wt, threads);
  s.wsum = arma::sum(Wt, 1);
  s.wsq.zeros(Wt.n_rows);
  for (arma::uword i = 0; i < Wt.n_cols; ++i) {
    const double* w = Wt.colptr(i);
    for (arma::uword r = 0; r < Wt.n_rows; ++r) s.wsq[r] += w[r] * w[r];
  }
  s.s1 = arma::accu(s.wsum);
  s.s2 = arma::accu(s.wsq);
  return s;
}

// One shard's iteration of the generalized-KL multiplicative updates
// (KLMU::step): its part of sum x log v for the model entering the step
// (the lagged objective), its rows of W updated given H (with H's row
// sums, computed here as in memory), then its part of the numerators of H
// (k x n). `loss_only`: the objective's part only, W untouched.
inline double kl_shard_step(const Data& X, arma::mat& Wt, const arma::mat& H, double l1w, double l2w,
                            double eps, arma::mat& numH, bool loss_only, int threads) {
  KLMU mu(Penalty(), eps);
  Model M;
  M.Wt = std::move(Wt);
  M.H = H;
  double xlogv = 0.0;
  arma::mat num;
  KLMU::ratio_pass(X, M, num, &xlogv, true, threads, !loss_only);
  if (!loss_only) {
    const arma::vec hsum = arma::sum(M.H, 1);
    mu.mm_update(M.Wt, num, M.Wt, hsum, l1w, l2w);
    KLMU::ratio_pass(X, M, numH, nullptr, false, threads);
  }
  Wt = std::move(M.Wt);
  return xlogv;
}

// A chunk of a shard file of m x n read into `buf`: its indices checked,
// x = value / scale written to buf.g (returned), sum x^2 added to `x2` and
// sum x log x - x to *cst when given.
inline const double* scale_chunk(ShardBuffer& buf, arma::uword m, arma::uword n, double scale, double& x2,
                                 double* cst, bool norm = true) {
  const std::size_t nnz = buf.nnz;
  const index_t* ix = buf.idx.data();
  buf.g.resize(nnz);
  // (without the squares when the caller has them: their sum is one chain
  // of additions, a quarter of a product pass's time)
  if (!norm && cst == nullptr) {
    const double* __restrict v = buf.val.data();
    double* __restrict g = buf.g.data();
    bool out = false;
    for (std::size_t s = 0; s < nnz; ++s) {
      out |= (ix[2 * s] >= m) | (ix[2 * s + 1] >= n);
      g[s] = v[s] / scale;
    }
    if (out) throw std::runtime_error("a cell's index is outside the shard's size");
    return buf.g.data();
  }
  for (std::size_t s = 0; s < nnz; ++s) {
    if (ix[2 * s] >= m || ix[2 * s + 1] >= n) throw std::runtime_error("a cell's index is outside the shard's size");
    const double x = buf.val[s] / scale;
    buf.g[s] = x;
    x2 += x * x;
    if (cst != nullptr && x > 0.0) *cst += x * std::log(x) - x;
  }
  return buf.g.data();
}

// o (k) += sum over the cells [t, e) (all of one column) of x f_i, f_i the
// column of F (k x rows) of the cell's row ix[2 s]: o's rows eight at a
// time in registers over the cells, in their order (the arithmetic of
// o[r] += x f[r] per cell; Data::rowwise()'s kernel). With ix + 1: the
// cells of one row, f_j the column of F (k x columns) of the cell's column.
inline void column_run(const double* __restrict fp, arma::uword k, const index_t* __restrict ix,
                       const double* __restrict xv, std::size_t t, std::size_t e, double* __restrict o) {
  using dense::v2;
  using dense::load;
  arma::uword r = 0;
  for (; r + 8 <= k; r += 8) {
    v2 a0 = load(o + r), a1 = load(o + r + 2), a2 = load(o + r + 4), a3 = load(o + r + 6);
    for (std::size_t s = t; s < e; ++s) {
      const v2 x = dense::bcast(xv[s]);
      const double* f = fp + static_cast<std::size_t>(ix[2 * s]) * k + r;
      a0 += x * load(f); a1 += x * load(f + 2); a2 += x * load(f + 4); a3 += x * load(f + 6);
    }
    dense::store(o + r, a0); dense::store(o + r + 2, a1);
    dense::store(o + r + 4, a2); dense::store(o + r + 6, a3);
  }
  for (; r + 2 <= k; r += 2) {
    v2 a0 = load(o + r);
    for (std::size_t s = t; s < e; ++s)
      a0 += dense::bcast(xv[s]) * load(fp + static_cast<std::size_t>(ix[2 * s]) * k + r);
    dense::store(o + r, a0);
  }
  if (r < k) {
    double a0 = o[r];
    for (std::size_t s = t; s < e; ++s) a0 += xv[s] * fp[static_cast<std::size_t>(ix[2 * s]) * k + r];
    o[r] = a0;
  }
}

// For each cell in [t, e) (all of one column, f its column of the other
// factor, k): column i of `out` (k x rows) += x f, i the cell's row
// ix[2 s]; f's rows eight at a time in registers over the cells. With
// ix + 1: the cells of one row, f its row's column of the other factor,
// out's columns those of the cells' columns.
inline void row_scatter(const double* __restrict f, arma::uword k, const index_t* __restrict ix,
                        const double* __restrict xv, std::size_t t, std::size_t e, double* __restrict out) {
  using dense::v2;
  using dense::load;
  using dense::store;
  arma::uword r = 0;
  for (; r + 8 <= k; r += 8) {
    const v2 f0 = load(f + r), f1 = load(f + r + 2), f2 = load(f + r + 4), f3 = load(f + r + 6);
    for (std::size_t s = t; s < e; ++s) {
      double* o = out + static_cast<std::size_t>(ix[2 * s]) * k + r;
      const v2 x = dense::bcast(xv[s]);
      store(o, load(o) + x * f0); store(o + 2, load(o + 2) + x * f1);
      store(o + 4, load(o + 4) + x * f2); store(o + 6, load(o + 6) + x * f3);
    }
  }
  for (; r + 2 <= k; r += 2) {
    const v2 f0 = load(f + r);
    for (std::size_t s = t; s < e; ++s) {
      double* o = out + static_cast<std::size_t>(ix[2 * s]) * k + r;
      store(o, load(o) + dense::bcast(xv[s]) * f0);
    }
  }
  if (r < k) {
    for (std::size_t s = t; s < e; ++s) out[static_cast<std::size_t>(ix[2 * s]) * k + r] += xv[s] * f[r];
  }
}

// A shard file's products, read `cells` cells at a time into `buf` (the
// shard is never held whole), with x = value / scale:
//   C = W_s' X_s (k x n)        when C is given (Wt: k x m_s),
//   A = (X_s H')' (k x m_s)     when A is given (H: k x n),
// both set to zero first, and returns sum x^2 (0 without `norm`). Every
// element is summed over its cells in the file's order, o += x f, from
// zero: for a file in row or in column order (as write_shards() writes
// them) that is the order of Data's products (rows ascending within a
// column and columns within a row), so the results are the same to the
// last bit. One thread: the passes are scattered additions of k-vectors,
// bound by memory, which threads splitting the outputs made slower
// (measured), not faster.
inline double stream_products(ShardReader& reader, ShardBuffer& buf, std::size_t cells, double scale,
                              const arma::mat* Wt, arma::mat* C, const arma::mat* H, arma::mat* A,
                              bool norm = true) {
  const std::vector<arma::uword>& dims = reader.dims();
  if (dims.size() != 2) throw std::runtime_error("a shard of nmf() must be a matrix");
  const arma::uword m = dims[0], n = dims[1];
  const arma::uword k = Wt != nullptr ? Wt->n_rows : H->n_rows;
  if ((C != nullptr && (Wt == nullptr || Wt->n_cols != m || C->n_rows != k || C->n_cols < n)) ||
      (A != nullptr && (H == nullptr || H->n_rows != k || H->n_cols < n || A->n_rows != k || A->n_cols != m)))
    throw std::logic_error("factors of the wrong size for the shard");
  if (C != nullptr) C->zeros();
  if (A != nullptr) A->zeros();
  double x2 = 0.0;
  while (reader.next(buf, cells)) {
    const std::size_t nnz = buf.nnz;
    const index_t* ix = buf.idx.data();
    const double* vv = buf.val.data();
    buf.g.resize(nnz);
    double* xv = buf.g.data();
    // The cells in runs of one column (a file in column order: one run per
    // column) or of one row (a file in row order), each run's values scaled
    // (and checked) as it is found. Along a column, C's column is held in
    // registers over the run's cells, eight rows at a time, and A's rows
    // take H's column held the same way; along a row, A's column and W's
    // row likewise. The arithmetic of o[r] += x f[r] per cell, in the
    // file's order, without a store and reload of the sum or of the factor
    // per cell.
    std::size_t t = 0;
    while (t < nnz) {
      const index_t i = ix[2 * t], j = ix[2 * t + 1];
      std::size_t e = t + 1;
      const bool by_col = (e < nnz && ix[2 * e + 1] == j) || !(e < nnz && ix[2 * e] == i);
      if (by_col) { while (e < nnz && ix[2 * e + 1] == j) ++e; }
      else { while (e < nnz && ix[2 * e] == i) ++e; }
      bool out = false;
      for (std::size_t q = t; q < e; ++q) {
        out |= (ix[2 * q] >= m) | (ix[2 * q + 1] >= n);
        const double x = vv[q] / scale;
        xv[q] = x;
        if (norm) x2 += x * x;
      }
      if (out) throw std::runtime_error("a cell's index is outside the shard's size");
      // (a run cut by the chunk's end goes on from the sums as left)
      if (by_col) {
        if (C != nullptr) column_run(Wt->memptr(), k, ix, xv, t, e, C->colptr(j));
        if (A != nullptr) row_scatter(H->colptr(j), k, ix, xv, t, e, A->memptr());
      } else {
        if (A != nullptr) column_run(H->memptr(), k, ix + 1, xv, t, e, A->colptr(i));
        if (C != nullptr) row_scatter(Wt->colptr(i), k, ix + 1, xv, t, e, C->memptr());
      }
      t = e;
    }
  }
  return x2;
}

// A shard file's pass of the generalized-KL multiplicative updates, read
// `cells` cells at a time into `buf` (see stream_products()): with x =
// value / scale, v = max(W_i . H_j, 1e-300) at each cell and t = x / v,
//   numW = sum_j t H_j (k x m_s, KLMU::ratio_pass by rows) when given,
//   numH = sum_i t W_i (k x n, by columns) when given,
// both set to zero first; adds sum x log v to *xlogv, sum x log x - x to
// *constant and sum x^2 to *xnorm2 when given. The numerators' elements
// are summed over their cells in the file's order, and the logs in blocks
// of kBlock cells counted from the file's first (added in order), so the
// results depend neither on the chunk nor on the threads.
inline void stream_kl(ShardReader& reader, ShardBuffer& buf, std::size_t cells, double scale,
                      const arma::mat& Wt, const arma::mat& H, arma::mat* numW, arma::mat* numH,
                      double* xlogv, double* constant, double* xnorm2, int threads) {
  const std::vector<arma::uword>& dims = reader.dims();
  if (dims.size() != 2) throw std::runtime_error("a shard of nmf() must be a matrix");
  const arma::uword m = dims[0], n = dims[1], k = Wt.n_rows;
  if (Wt.n_cols != m || H.n_rows != k || H.n_cols < n || (numW != nullptr && (numW->n_rows != k || numW->n_cols != m)) ||
      (numH != nullptr && (numH->n_rows != k || numH->n_cols < n)))
    throw std::logic_error("factors of the wrong size for the shard");
  if (numW != nullptr) numW->zeros();
  if (numH != nullptr) numH->zeros();
  constexpr std::size_t kBlock = 4096;  // cells per partial sum of the logs
  std::vector<double> v, t, logs;
  double cst = 0.0, x2 = 0.0;
  std::size_t done = 0;  // cells of the earlier chunks
  LogSum open;           // the block of logs the earlier chunks began
  while (reader.next(buf, cells)) {
    const std::size_t nnz = buf.nnz;
    const index_t* ix = buf.idx.data();
    v.resize(nnz);
    t.resize(nnz);
    const double* xv = scale_chunk(buf, m, n, scale, x2, constant != nullptr ? &cst : nullptr);
    const int T = effective_threads(threads, nnz * k);
    dense::parallel_blocks(nnz, T, 1024, [&](std::size_t b, std::size_t e) {
      for (std::size_t s = b; s < e; ++s) {
        const double* __restrict w = Wt.colptr(ix[2 * s]);
        const double* __restrict h = H.colptr(ix[2 * s + 1]);
        double d = 0.0;
#pragma omp simd reduction(+ : d)
        for (arma::uword r = 0; r < k; ++r) d += w[r] * h[r];
        d = std::max(d, 1e-300);
        v[s] = d;
        t[s] = xv[s] / d;
      }
    });
    if (xlogv != nullptr) {
      // blocks of kBlock cells counted from the file's first cell: the one
      // begun in the last chunk is finished, the whole ones in between are
      // summed in parallel, the last one is begun for the next chunk
      std::size_t s0 = std::min(nnz, (kBlock - done % kBlock) % kBlock);
      for (std::size_t s = 0; s < s0; ++s) open.add(v[s], xv[s], count_multiplicity(xv[s]));
      if (s0 > 0 && (done + s0) % kBlock == 0) {
        *xlogv += open.value();
        open = LogSum();
      }
      const std::size_t nb = (nnz - s0) / kBlock;
      logs.assign(nb, 0.0);
      dense::parallel_blocks(nb, T, 1, [&](std::size_t b, std::size_t e) {
        for (std::size_t q = b; q < e; ++q) {
          LogSum ls;
          for (std::size_t s = s0 + q * kBlock; s < s0 + (q + 1) * kBlock; ++s)
            ls.add(v[s], xv[s], count_multiplicity(xv[s]));
          logs[q] = ls.value();
        }
      });
      for (double l : logs) *xlogv += l;
      for (std::size_t s = s0 + nb * kBlock; s < nnz; ++s) open.add(v[s], xv[s], count_multiplicity(xv[s]));
    }
    done += nnz;
    // (the numerators in one thread, see stream_products())
    for (std::size_t s = 0; s < nnz; ++s) {
      const double q = t[s];
      const std::size_t i = ix[2 * s], j = ix[2 * s + 1];
      if (numW != nullptr) {
        double* __restrict o = numW->colptr(i);
        const double* __restrict h = H.colptr(j);
        for (std::size_t r = 0; r < k; ++r) o[r] += q * h[r];
      }
      if (numH != nullptr) {
        double* __restrict o = numH->colptr(j);
        const double* __restrict w = Wt.colptr(i);
        for (std::size_t r = 0; r < k; ++r) o[r] += q * w[r];
      }
    }
  }
  if (xlogv != nullptr && done % kBlock != 0) *xlogv += open.value();
  if (constant != nullptr) *constant += cst;
  if (xnorm2 != nullptr) *xnorm2 += x2;
}

// One pass of KLCDColumns over a shard (X: its rows, m_s x n; Wt: their
// rows of W, k x m_s): each column's part of the sums a2, b1, b2 written to
// out (3 x n). `v` (one per non-zero of X, in X's column order) is the
// shard's copy of G h, moved by d[j] along g_rd; without it, or when
// `reset`, v is G hv (solve() skips zero coefficients, whose terms are
// exactly zero here). Columns are independent, so the result does not depend on the
// number of threads.
inline void kl_cd_pass(const Data& X, const arma::mat& Wt, const arma::mat& hv, double* v, bool reset,
                       const int* rd, const int* rn, const double* d, arma::mat& out, int threads) {
  const Csc& S = X.S();
  const std::size_t k = Wt.n_rows, n = S.n_cols;
  const bool fresh = reset || v == nullptr;
  if ((fresh && (hv.n_rows != k || hv.n_cols != n)) || Wt.n_cols != S.n_rows)
    throw std::invalid_argument("kl_cd_pass: factors of the wrong size");
  out.zeros(3, n);
  const int T = effective_threads(threads, S.nnz * (fresh ? k : 2) / 8);
  // moving v needs two coordinates of W at each cell: W's columns (m_s x k,
  // each a short vector that stays in cache) rather than Wt's strided rows
  const arma::mat Wc = fresh ? arma::mat() : arma::mat(Wt.t());
  dense::parallel_blocks(n, T, 16, [&](std::size_t b, std::size_t e) {
    for (std::size_t j = b; j < e; ++j) {
      if (rd[j] < 0) continue;
      const std::size_t r1 = static_cast<std::size_t>(rd[j]), r2 = static_cast<std::size_t>(rn[j]);
      const double dj = d[j];
      double sa = 0.0, s1 = 0.0, s2 = 0.0;
      const std::size_t p0 = S.p[j], p1 = S.p[j + 1];
      if (fresh) {
        const double* h = hv.colptr(j);
        for (std::size_t s = p0; s < p1; ++s) {
          const double* w = Wt.colptr(S.i[s]);
          double vs = 0.0;
#pragma omp simd reduction(+ : vs)
          for (std::size_t r = 0; r < k; ++r) vs += h[r] * w[r];
          if (v != nullptr) v[s] = vs;
          KLCD::add_terms(w[r1], w[r2], S.val(s), vs, sa, s1, s2);
        }
      } else {
        const double* __restrict w1 = Wc.colptr(r1);
        const double* __restrict w2 = Wc.colptr(r2);
        const std::uint32_t* __restrict ii = S.i;
        const double* __restrict xx = S.x;
        const double div = S.div;
        for (std::size_t s = p0; s < p1; ++s) {
          const std::uint32_t i = ii[s];
          const double vs = v[s] + dj * w1[i];
          v[s] = vs;
          KLCD::add_terms(w1[i], w2[i], div == 1.0 ? xx[s] : xx[s] / div, vs, sa, s1, s2);
        }
      }
      double* o = out.colptr(j);
      o[0] = sa; o[1] = s1; o[2] = s2;
    }
  });
}

// kl_cd_pass() of a shard file read `cells` cells at a time (recomputing
// v = G hv at every cell; x = value / scale): v in parallel over a chunk's
// cells, the sums added in the file's order, so that the result depends
// neither on the chunk nor on the threads.
inline void stream_kl_cd_pass(ShardReader& reader, ShardBuffer& buf, std::size_t cells, double scale,
                              const arma::mat& Wt, const arma::mat& hv, const int* rd, const int* rn,
                              arma::mat& out, int threads) {
  const std::vector<arma::uword>& dims = reader.dims();
  if (dims.size() != 2) throw std::runtime_error("a shard of nmf() must be a matrix");
  const arma::uword m = dims[0], n = dims[1], k = Wt.n_rows;
  if (Wt.n_cols != m || hv.n_rows != k || hv.n_cols < n) throw std::logic_error("factors of the wrong size for the shard");
  out.zeros(3, hv.n_cols);
  std::vector<double> v;
  double x2 = 0.0;
  while (reader.next(buf, cells)) {
    const std::size_t nnz = buf.nnz;
    const index_t* ix = buf.idx.data();
    v.resize(nnz);
    const double* xv = scale_chunk(buf, m, n, scale, x2, nullptr);
    const int T = effective_threads(threads, nnz * k);
    dense::parallel_blocks(nnz, T, 1024, [&](std::size_t b, std::size_t e) {
      for (std::size_t s = b; s < e; ++s) {
        const std::size_t j = ix[2 * s + 1];
        if (rd[j] < 0) continue;
        const double* w = Wt.colptr(ix[2 * s]);
        const double* h = hv.colptr(j);
        double vs = 0.0;
#pragma omp simd reduction(+ : vs)
        for (arma::uword r = 0; r < k; ++r) vs += h[r] * w[r];
        v[s] = vs;
      }
    });
    for (std::size_t s = 0; s < nnz; ++s) {
      const std::size_t j = ix[2 * s + 1];
      if (rd[j] < 0) continue;
      const double* w = Wt.colptr(ix[2 * s]);
      double* o = out.colptr(j);
      KLCD::add_terms(w[rd[j]], w[rn[j]], xv[s], v[s], o[0], o[1], o[2]);
    }
  }
}

// A shard file (m x n_file, n_file <= n) as the compressed columns of its
// transpose (n x m: column i holds row i's cells, in the file's order, which
// for a file written by rows or by columns is the order of shard_csc(); x =
// value / scale), read `cells` cells at a time in two passes (counts, then
// cells): 12 bytes per non-zero, no whole copy of the file's cells. The
// file must have m rows and at most n columns.
inline Csc stream_rows_csc(const std::string& path, ShardBuffer& buf, std::size_t cells, double scale,
                           arma::uword m, arma::uword n) {
  std::vector<arma::uword> p;
  std::size_t nnz = 0;
  {
    ShardReader reader(path);
    if (reader.dims().size() != 2 || reader.dims()[0] != m || reader.dims()[1] > n)
      throw std::runtime_error("its sizes differ from those shards() recorded");
    nnz = reader.nnz();
    p.assign(m + 1, 0);
    while (reader.next(buf, cells)) {
      const index_t* ix = buf.idx.data();
      for (std::size_t s = 0; s < buf.nnz; ++s) {
        if (ix[2 * s] >= m || ix[2 * s + 1] >= n) throw std::runtime_error("a cell's index is outside the shard's size");
        ++p[ix[2 * s] + 1];
      }
    }
  }
  for (arma::uword i = 0; i < m; ++i) p[i + 1] += p[i];
  Csc C;
  C.n_rows = n;
  C.n_cols = m;
  C.own(nnz);
  std::vector<arma::uword> pos(p.begin(), p.end() - 1);
  {
    ShardReader reader(path);
    if (reader.dims().size() != 2 || reader.dims()[0] != m || reader.dims()[1] > n || reader.nnz() != nnz)
      throw std::runtime_error("the shard file changed while it was read");
    while (reader.next(buf, cells)) {
      const index_t* ix = buf.idx.data();
      for (std::size_t s = 0; s < buf.nnz; ++s) {
        const arma::uword i = ix[2 * s], j = ix[2 * s + 1];
        if (i >= m || j >= n || pos[i] >= p[i + 1]) throw std::runtime_error("the shard file changed while it was read");
        const std::size_t t = pos[i]++;
        C.i_store[t] = static_cast<std::uint32_t>(j);
        C.x_store[t] = buf.val[s] / scale;
      }
    }
  }
  C.p = std::move(p);
  return C;
}

// A shard's rows of W given H by KL coordinate descent (the second half of
// KLCD::step): written over Wt; returns the shard's part of sum x log v of
// the new model. `transposed`: X holds the transposed shard (n x m_s, its
// columns the shard's rows) and nothing else.
// (cper: each row's own linear coefficients, k x m_s, in place of the
// column sums of H + l1w: a weighted loss, nmf/weighted.h)
inline double kl_cd_rows(const Data& X, arma::mat& Wt, const arma::mat& H, double l1w, double l2w,
                         bool transposed, int threads, const arma::mat* cper = nullptr) {
  const arma::vec c = cper ? arma::vec(H.n_rows, arma::fill::zeros) : arma::vec(arma::sum(H, 1) + l1w);
  double xlogv = 0.0;
  KLCD::solve_side(X, !transposed, H, Wt, c, l2w, 1, 1, &xlogv, threads, cper);
  return xlogv;
}

// sum x log x - x over the shard's values (the KL objective's constant)
inline double kl_constant(const Data& X) {
  double c = 0.0;
  for (std::size_t s = 0; s < X.S().nnz; ++s) {
    const double x = X.S().val(s);
    if (x > 0.0) c += x * std::log(x) - x;
  }
  return c;
}

}  // namespace nmf
}  // namespace aspectr

#endif
