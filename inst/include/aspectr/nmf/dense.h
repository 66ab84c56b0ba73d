// aspectr/nmf/dense.h — the dense products NMF needs, for a column-major
// A (m x n) and a small rank k:
//   tn(P, Q):  out(r, c) = sum_l P(l, r) Q(l, c)   (out = P' Q; used as W' A
//              with P = W, m x k, Q = A)
//   nn(A, B):  out(i, r) = sum_j A(i, j) B(r, j)   (out = A B'; used as A H'
//              with B = H, k x n)
//   syrk(A):   out = A A' for a k x n A (the Gram matrix of a factor), the
//              upper tiles of nn(A, A) mirrored
//   dot(x, y): sum_i x_i y_i
// Register-tiled micro-kernels on two-double vectors (GCC/Clang vector
// extensions, which compile to SSE2 on x86-64 without any -m flag and to NEON
// on arm64; a plain struct elsewhere), cache-blocked along the summation
// index, split over threads by blocks of output columns (tn) or output rows
// (nn), handed out dynamically (parallel_blocks). Every
// output element is summed in an order that depends only on the sizes, never
// on the thread count: results are bitwise identical for any number of
// threads.
#ifndef ASPECTR_NMF_DENSE_H
#define ASPECTR_NMF_DENSE_H

#include <cstddef>
#include <cstring>
#include <algorithm>
#if (defined(__GNUC__) || defined(__clang__)) && defined(__SSE2__)
#include <emmintrin.h>
#endif
#include "../parallel.h"
#include "../unroll.h"

namespace aspectr {
namespace nmf {
namespace dense {

// The short fixed-count loops over a tile's registers are unrolled
// (ASPECTR_UNROLL, unroll.h): otherwise GCC keeps the accumulator arrays in
// memory at -O2.

#if defined(__GNUC__) || defined(__clang__)
typedef double v2 __attribute__((vector_size(16)));
typedef double v2u __attribute__((vector_size(16), aligned(8), may_alias));
inline v2 load(const double* p) { return *reinterpret_cast<const v2u*>(p); }
inline void store(double* p, v2 v) { *reinterpret_cast<v2u*>(p) = v; }
inline v2 bcast(double x) { return v2{x, x}; }
inline double hsum(v2 v) { return v[0] + v[1]; }
inline double lane(v2 v, int i) { return v[i]; }
#else
struct v2 {
  double a, b;
  v2& operator+=(const v2& o) { a += o.a; b += o.b; return *this; }
  friend v2 operator*(const v2& x, const v2& y) { return v2{x.a * y.a, x.b * y.b}; }
  friend v2 operator+(const v2& x, const v2& y) { return v2{x.a + y.a, x.b + y.b}; }
  friend v2 operator-(const v2& x, const v2& y) { return v2{x.a - y.a, x.b - y.b}; }
  friend v2 operator/(const v2& x, const v2& y) { return v2{x.a / y.a, x.b / y.b}; }
};
inline v2 load(const double* p) { return v2{p[0], p[1]}; }
inline void store(double* p, v2 v) { p[0] = v.a; p[1] = v.b; }
inline v2 bcast(double x) { return v2{x, x}; }
inline double hsum(v2 v) { return v.a + v.b; }
inline double lane(v2 v, int i) { return i == 0 ? v.a : v.b; }
#endif
// max(v, 0) lane by lane, as v > 0 ? v : 0 (0 for a NaN lane); on SSE2 one
// maxpd (GCC compiles the scalar form to a branch, mispredicted half of the
// time where a factor has many zeros)
#if (defined(__GNUC__) || defined(__clang__)) && defined(__SSE2__)
inline v2 max0(v2 v) { return _mm_max_pd(v, _mm_setzero_pd()); }
#else
inline v2 max0(v2 v) {
  const double x = lane(v, 0), y = lane(v, 1);
  return v2{x > 0.0 ? x : 0.0, y > 0.0 ? y : 0.0};
}
#endif

// sum_i x_i y_i, i < n, in an order that depends only on n (four two-double
// partial sums); e.g. the <A, B> terms of the Frobenius objective, which
// arma::accu(A % B) hands to the reference BLAS ddot.
inline double dot(const double* x, const double* y, std::size_t n) {
  v2 s0 = bcast(0.0), s1 = bcast(0.0), s2 = bcast(0.0), s3 = bcast(0.0);
  std::size_t i = 0;
  for (; i + 8 <= n; i += 8) {
    s0 += load(x + i) * load(y + i);
    s1 += load(x + i + 2) * load(y + i + 2);
    s2 += load(x + i + 4) * load(y + i + 4);
    s3 += load(x + i + 6) * load(y + i + 6);
  }
  for (; i + 2 <= n; i += 2) s0 += load(x + i) * load(y + i);
  double s = hsum((s0 + s1) + (s2 + s3));
  if (i < n) s += x[i] * y[i];
  return s;
}

// Runs body(begin, end) over [0, n) in blocks handed out dynamically to
// `threads` threads (about 16 blocks per thread, at least `grain` items
// each): when another process takes a core from one thread, the others take
// over its blocks instead of waiting at the barrier. Callers write disjoint
// outputs per item, so results do not depend on which thread ran a block.
template <class Body>
inline void parallel_blocks(std::size_t n, int threads, std::size_t grain, Body body) {
  if (grain < 1) grain = 1;
  threads = capped_threads(threads);
  const std::size_t per = threads > 1 ? (n + 16 * threads - 1) / (16 * static_cast<std::size_t>(threads)) : n;
  const std::size_t size = std::max(grain, per);
  const std::size_t nb = (n + size - 1) / size;
  if (threads <= 1 || nb <= 1) { body(std::size_t(0), n); return; }
#ifdef _OPENMP
  const long long nbl = static_cast<long long>(nb);
  const NoPolls quiet;
#pragma omp parallel for schedule(dynamic, 1) num_threads(threads)
  for (long long blk = 0; blk < nbl; ++blk) {
    const std::size_t b = static_cast<std::size_t>(blk) * size;
    body(b, std::min(n, b + size));
  }
#else
  body(std::size_t(0), n);
#endif
}

// Block of the summation index: the tn kernel's Q columns (3 x 4 KB) and
// the nn kernel's A panel (8 rows x kBlock) stay in L1.
constexpr std::size_t kBlock = 512;

// tn micro-kernel: RB rows of out (columns of P) x CB columns of out, summed
// over l in [l0, l1); adds into out.
template <int RB, int CB>
inline void tn_tile(const double* P, std::size_t ldp, const double* Q, std::size_t ldq,
                    std::size_t l0, std::size_t l1, double* out, std::size_t ldo) {
  v2 acc[RB][CB];
  ASPECTR_UNROLL
  for (int r = 0; r < RB; ++r)
    ASPECTR_UNROLL
    for (int c = 0; c < CB; ++c) acc[r][c] = bcast(0.0);
  const double* p[RB];
  const double* q[CB];
  ASPECTR_UNROLL
  for (int r = 0; r < RB; ++r) p[r] = P + r * ldp;
  ASPECTR_UNROLL
  for (int c = 0; c < CB; ++c) q[c] = Q + c * ldq;
  std::size_t l = l0;
  for (; l + 2 <= l1; l += 2) {
    v2 qv[CB];
    ASPECTR_UNROLL
    for (int c = 0; c < CB; ++c) qv[c] = load(q[c] + l);
    ASPECTR_UNROLL
    for (int r = 0; r < RB; ++r) {
      const v2 pv = load(p[r] + l);
      ASPECTR_UNROLL
      for (int c = 0; c < CB; ++c) acc[r][c] += pv * qv[c];
    }
  }
  ASPECTR_UNROLL
  for (int r = 0; r < RB; ++r)
    ASPECTR_UNROLL
    for (int c = 0; c < CB; ++c) {
      double s = hsum(acc[r][c]);
      if (l < l1) s += p[r][l] * q[c][l];
      out[r + c * ldo] += s;
    }
}

// Tile sizes (rows RB x columns CB of out for tn, IV two-double vectors of
// rows x RB columns for nn): any positive values give the same results (an
// element's sum does not depend on its tile). tn with 4 x 3 (12
// accumulators, 3 + 1 loaded vectors: 16 SSE registers) is ~12% faster than
// 4 x 2 on 2000 x 1000, k = 10 or 20; for nn, 4 x 4 is as fast as the others.
#ifndef ASPECTR_TN_CB
#define ASPECTR_TN_CB 3
#endif
#ifndef ASPECTR_TN_RB
#define ASPECTR_TN_RB 4
#endif
// the last rem < RB rows of out: one tile of rem rows (RM = the largest rem)
template <int RM, int CB>
inline void tn_tail(std::size_t rem, const double* P, std::size_t ldp, const double* Q, std::size_t ldq,
                    std::size_t l0, std::size_t l1, double* out, std::size_t ldo) {
  if constexpr (RM > 0) {
    if (rem == RM) tn_tile<RM, CB>(P, ldp, Q, ldq, l0, l1, out, ldo);
    else tn_tail<RM - 1, CB>(rem, P, ldp, Q, ldq, l0, l1, out, ldo);
  }
}

template <int CB>
inline void tn_cols(const double* P, std::size_t ldp, std::size_t a, const double* Q,
                    std::size_t ldq, std::size_t l0, std::size_t l1, double* out, std::size_t ldo) {
  std::size_t r = 0;
  constexpr int RB = ASPECTR_TN_RB;
  for (; r + RB <= a; r += RB) tn_tile<RB, CB>(P + r * ldp, ldp, Q, ldq, l0, l1, out + r, ldo);
  tn_tail<RB - 1, CB>(a - r, P + r * ldp, ldp, Q, ldq, l0, l1, out + r, ldo);
}

// out (a x b, leading dimension a) = P' Q; P is L x a (leading dimension
// ldp), Q is L x b (leading dimension ldq). Threads split the b columns.
inline void tn(const double* P, std::size_t ldp, std::size_t a, const double* Q, std::size_t ldq,
               std::size_t b, std::size_t L, double* out, int threads) {
  std::fill(out, out + a * b, 0.0);
  const int T = effective_threads(threads, L * b * a / 64);
  parallel_blocks(b, T, 2, [&](std::size_t cb, std::size_t ce) {
    for (std::size_t l0 = 0; l0 < L; l0 += kBlock) {
      const std::size_t l1 = std::min(L, l0 + kBlock);
      std::size_t c = cb;
      for (; c + ASPECTR_TN_CB <= ce; c += ASPECTR_TN_CB)
        tn_cols<ASPECTR_TN_CB>(P, ldp, a, Q + c * ldq, ldq, l0, l1, out + c * a, a);
      for (; c + 2 <= ce; c += 2) tn_cols<2>(P, ldp, a, Q + c * ldq, ldq, l0, l1, out + c * a, a);
      if (c < ce) tn_cols<1>(P, ldp, a, Q + c * ldq, ldq, l0, l1, out + c * a, a);
    }
  });
}

// nn micro-kernel: IB = 2 * IV rows of out x RB columns, summed over j in
// [j0, j1); adds into out (leading dimension ldo).
template <int IV, int RB>
inline void nn_tile(const double* A, std::size_t lda, const double* B, std::size_t ldb,
                    std::size_t j0, std::size_t j1, double* out, std::size_t ldo) {
  v2 acc[RB][IV];
  ASPECTR_UNROLL
  for (int r = 0; r < RB; ++r)
    ASPECTR_UNROLL
    for (int v = 0; v < IV; ++v) acc[r][v] = bcast(0.0);
  for (std::size_t j = j0; j < j1; ++j) {
    const double* a = A + j * lda;
    const double* bj = B + j * ldb;
    v2 av[IV];
    ASPECTR_UNROLL
    for (int v = 0; v < IV; ++v) av[v] = load(a + 2 * v);
    ASPECTR_UNROLL
    for (int r = 0; r < RB; ++r) {
      const v2 bv = bcast(bj[r]);
      ASPECTR_UNROLL
      for (int v = 0; v < IV; ++v) acc[r][v] += av[v] * bv;
    }
  }
  ASPECTR_UNROLL
  for (int r = 0; r < RB; ++r)
    ASPECTR_UNROLL
    for (int v = 0; v < IV; ++v) {
      double* o = out + 2 * v + r * ldo;
      store(o, load(o) + acc[r][v]);
    }
}

// one odd row: scalar
template <int RB>
inline void nn_row(const double* A, std::size_t lda, const double* B, std::size_t ldb,
                   std::size_t j0, std::size_t j1, double* out, std::size_t ldo) {
  double acc[RB];
  ASPECTR_UNROLL
  for (int r = 0; r < RB; ++r) acc[r] = 0.0;
  for (std::size_t j = j0; j < j1; ++j) {
    const double x = A[j * lda];
    const double* bj = B + j * ldb;
    ASPECTR_UNROLL
    for (int r = 0; r < RB; ++r) acc[r] += x * bj[r];
  }
  ASPECTR_UNROLL
  for (int r = 0; r < RB; ++r) out[r * ldo] += acc[r];
}

#ifndef ASPECTR_NN_RB
#define ASPECTR_NN_RB 4
#endif
#ifndef ASPECTR_NN_IV
#define ASPECTR_NN_IV 2
#endif
// the last rem < RB columns of out: one tile of rem columns (RM = the
// largest rem)
template <int IV, int RM>
inline void nn_tail(std::size_t rem, const double* A, std::size_t lda, const double* B, std::size_t ldb,
                    std::size_t j0, std::size_t j1, double* out, std::size_t ldo) {
  if constexpr (RM > 0) {
    if (rem == RM) nn_tile<IV, RM>(A, lda, B, ldb, j0, j1, out, ldo);
    else nn_tail<IV, RM - 1>(rem, A, lda, B, ldb, j0, j1, out, ldo);
  }
}

template <int IV>
inline void nn_rows(const double* A, std::size_t lda, const double* B, std::size_t ldb, std::size_t k,
                    std::size_t j0, std::size_t j1, double* out, std::size_t ldo) {
  constexpr int RB = ASPECTR_NN_RB;
  std::size_t r = 0;
  for (; r + RB <= k; r += RB) nn_tile<IV, RB>(A, lda, B + r, ldb, j0, j1, out + r * ldo, ldo);
  nn_tail<IV, RB - 1>(k - r, A, lda, B + r, ldb, j0, j1, out + r * ldo, ldo);
}

inline void nn_row_all(const double* A, std::size_t lda, const double* B, std::size_t ldb, std::size_t k,
                       std::size_t j0, std::size_t j1, double* out, std::size_t ldo) {
  std::size_t r = 0;
  for (; r + 4 <= k; r += 4) nn_row<4>(A, lda, B + r, ldb, j0, j1, out + r * ldo, ldo);
  for (; r < k; ++r) nn_row<1>(A, lda, B + r, ldb, j0, j1, out + r * ldo, ldo);
}

// out (m x k, leading dimension m) = A B'; A is m x n (leading dimension
// lda), B is k x n (leading dimension ldb >= k). Threads split the m rows in
// multiples of 8.
// With accumulate = true, out += A B' (out must hold a valid m x k matrix).
inline void nn(const double* A, std::size_t lda, std::size_t m, std::size_t n, const double* B,
               std::size_t ldb, std::size_t k, double* out, int threads, bool accumulate = false) {
  if (!accumulate) std::fill(out, out + m * k, 0.0);
  constexpr std::size_t IB = 2 * ASPECTR_NN_IV;
  const std::size_t tiles = (m + IB - 1) / IB;
  const int T = effective_threads(threads, m * n * k / 64);
  parallel_blocks(tiles, T, 1, [&](std::size_t tb, std::size_t te) {
    const std::size_t ib = tb * IB, ie = std::min(m, te * IB);
    for (std::size_t j0 = 0; j0 < n; j0 += kBlock) {
      const std::size_t j1 = std::min(n, j0 + kBlock);
      std::size_t i = ib;
      for (; i + IB <= ie; i += IB) nn_rows<ASPECTR_NN_IV>(A + i, lda, B, ldb, k, j0, j1, out + i, m);
      if (IB > 4 && i + 4 <= ie) { nn_rows<2>(A + i, lda, B, ldb, k, j0, j1, out + i, m); i += 4; }
      if (i + 2 <= ie) { nn_rows<1>(A + i, lda, B, ldb, k, j0, j1, out + i, m); i += 2; }
      if (i < ie) nn_row_all(A + i, lda, B, ldb, k, j0, j1, out + i, m);
    }
  });
}

// out (k x k, leading dimension k) = A A' for A k x n (leading dimension
// lda >= k), e.g. the Gram matrix F F' of a k x d factor: the nn tiles on and
// above the diagonal (row tile [i, i + 4) times columns [i, k)), then the
// upper triangle mirrored. Every element equals that of nn(A, A), which is
// symmetric already (out(i, r) and out(r, i) add the same products in the
// same order), so the result is exactly symmetric and, as nn's, independent
// of the thread count. Threads split the row tiles.
inline void syrk(const double* A, std::size_t lda, std::size_t k, std::size_t n, double* out,
                 int threads) {
  std::fill(out, out + k * k, 0.0);
  constexpr std::size_t IB = 2 * ASPECTR_NN_IV;
  const std::size_t tiles = (k + IB - 1) / IB;
  const int T = effective_threads(threads, k * n * k / 128);
  parallel_blocks(tiles, T, 1, [&](std::size_t tb, std::size_t te) {
    for (std::size_t t = tb; t < te; ++t) {
      const std::size_t i = t * IB, ie = std::min(k, i + IB);
      const double* B = A + i;  // rows i.. of A: columns i.. of out
      double* o = out + i + i * k;
      for (std::size_t j0 = 0; j0 < n; j0 += kBlock) {
        const std::size_t j1 = std::min(n, j0 + kBlock);
        if (ie - i == IB) {
          nn_rows<ASPECTR_NN_IV>(A + i, lda, B, lda, k - i, j0, j1, o, k);
          continue;
        }
        std::size_t r = i;  // the last, short row tile
        if (r + 4 <= ie) { nn_rows<2>(A + r, lda, B, lda, k - i, j0, j1, o + (r - i), k); r += 4; }
        if (r + 2 <= ie) { nn_rows<1>(A + r, lda, B, lda, k - i, j0, j1, o + (r - i), k); r += 2; }
        if (r < ie) nn_row_all(A + r, lda, B, lda, k - i, j0, j1, o + (r - i), k);
      }
    }
  });
  for (std::size_t c = 0; c < k; ++c)
    for (std::size_t r = c + 1; r < k; ++r) out[r + c * k] = out[c + r * k];
}

}  // namespace dense
}  // namespace nmf
}  // namespace aspectr

#endif
