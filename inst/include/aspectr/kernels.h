// aspectr/kernels.h — contractions over the non-zeros of a sparse tensor.
#ifndef ASPECTR_KERNELS_H
#define ASPECTR_KERNELS_H

#include "data.h"
#include "parallel.h"

namespace aspectr {

// Leave-one-out products: out_n = prod_{m != n} H[m](:, ix[m]) for all n,
// written to out (k x N), using prefix/suffix products. pre is N*k of
// workspace and suf k of workspace (no allocation per call: this runs once
// per non-zero).
inline void leave_one_out(const std::vector<const arma::mat*>& H, const index_t* ix,
                          arma::uword k, double* pre, double* out, double* suf) {
  const std::size_t N = H.size();
  // pre[n*k + r] = prod_{m < n} H[m](r, ix[m])
  for (arma::uword r = 0; r < k; ++r) pre[r] = 1.0;
  for (std::size_t n = 1; n < N; ++n) {
    if (ix[n - 1] == kMissing) {
      for (arma::uword r = 0; r < k; ++r) pre[n * k + r] = pre[(n - 1) * k + r];
      continue;
    }
    const double* h = H[n - 1]->colptr(ix[n - 1]);
    for (arma::uword r = 0; r < k; ++r) pre[n * k + r] = pre[(n - 1) * k + r] * h[r];
  }
  // walk back with the suffix product
  for (arma::uword r = 0; r < k; ++r) suf[r] = 1.0;
  for (std::size_t n = N; n-- > 0;) {
    for (arma::uword r = 0; r < k; ++r) out[n * k + r] = pre[n * k + r] * suf[r];
    if (ix[n] == kMissing) continue;
    const double* h = H[n]->colptr(ix[n]);
    for (arma::uword r = 0; r < k; ++r) suf[r] *= h[r];
  }
}

// MTTKRP: out(:, i) = sum_{s: i_n = i} w_s * prod_{m != n} F[m](:, i_m),
// with w_s = X.value(s) or, when weights is non-null, weights[s].
// out must be k x d_n.
// (X: a SparseTensor or a CscMatrix)
template <class DataT>
inline void mttkrp(const DataT& X, const std::vector<const arma::mat*>& F,
                   std::size_t mode, arma::mat& out, int threads,
                   const double* weights = nullptr) {
  const std::size_t N = X.order();
  const arma::uword k = F[0]->n_rows;
  std::vector<arma::mat> target(1);
  target[0].set_size(k, X.dims[mode]);
  threads = effective_threads(threads, X.nnz());
  ThreadAccumulators acc(target, threads);
  parallel_chunks(X.nnz(), threads, [&](int tid, std::size_t b, std::size_t e) {
    arma::mat& A = acc.get(tid, 0);
    std::vector<double> prod(k);
    X.cells(b, e, [&](std::size_t s, const index_t* ix) {
      if (ix[mode] == kMissing) return;
      const double w = weights ? weights[s] : X.value(s);
      for (arma::uword r = 0; r < k; ++r) prod[r] = w;
      for (std::size_t m = 0; m < N; ++m) {
        if (m == mode || ix[m] == kMissing) continue;
        const double* f = F[m]->colptr(ix[m]);
        for (arma::uword r = 0; r < k; ++r) prod[r] *= f[r];
      }
      double* a = A.colptr(ix[mode]);
      for (arma::uword r = 0; r < k; ++r) a[r] += prod[r];
    });
  });
  acc.reduce();
  out = std::move(target[0]);
}

// Hadamard product of the k x k Gram matrices F[m] F[m]' over m != skip
// (skip = N for all modes).
inline arma::mat gram_hadamard(const std::vector<arma::mat>& F, std::size_t skip) {
  const arma::uword k = F[0].n_rows;
  arma::mat G(k, k, arma::fill::ones);
  for (std::size_t m = 0; m < F.size(); ++m)
    if (m != skip) G %= F[m] * F[m].t();
  return G;
}

// Model values s at every non-zero: s = sum_r lambda_r prod_n F[n](r, i_n).
inline void model_at_nonzeros(const SparseTensor& X, const AspectModel& M,
                              arma::vec& s, int threads) {
  s.set_size(X.nnz());
  threads = effective_threads(threads, X.nnz());
  parallel_chunks(X.nnz(), threads, [&](int, std::size_t b, std::size_t e) {
    for (std::size_t j = b; j < e; ++j) s[j] = M.cell(X.at(j));
  });
}

}  // namespace aspectr

#endif
