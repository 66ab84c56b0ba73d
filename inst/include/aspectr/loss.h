// aspectr/loss.h — the divergences between the empirical distribution G
// (a unit-sum sparse tensor) and the aspect model P, evaluated over the
// non-zeros of G only (plus k x k Gram matrices for L2).
//
//   KL:       D(G || P)   = sum_s g_s log(g_s / p_s)
//   Tsallis:  D_q(G || P) = (1 - sum_s g_s^q p_s^(1-q)) / (1 - q)   (Hazan, Haroon and Shashua)
//   L2:       ||G - P||_F^2 = ||G||^2 - 2 <G, P> + lambda' (hadamard_n U_n'U_n) lambda
#ifndef ASPECTR_LOSS_H
#define ASPECTR_LOSS_H

#include <cmath>
#include <limits>
#include "kernels.h"

namespace aspectr {

enum class Loss { KL, Tsallis, L2 };

// Smallest model value used in logarithms and ratios: a cell with g > 0 and
// p = 0 would be an infinite KL divergence; flooring keeps results finite
// (such cells only arise through underflow).
constexpr double kTiny = 1e-300;

inline double kl_term(double g, double s) {
  return g * std::log(g / std::max(s, kTiny));
}

// The sum over the non-zero cells in the KL divergence (g log(g / p)) or
// the Tsallis divergence (g (p / g)^(1-q)); additive over any split of the
// cells (shards).
// (G: a SparseTensor or a CscMatrix)
template <class DataT>
inline double cell_sum(Loss loss, double q, const DataT& G, const AspectModel& M,
                       int threads) {
  const std::size_t nnz = G.nnz();
  const int T = effective_threads(threads, nnz);
  std::vector<double> part(std::max(T, 1), 0.0);
  parallel_chunks(nnz, T, [&](int tid, std::size_t b, std::size_t e) {
    double acc = 0.0;
    G.cells(b, e, [&](std::size_t s, const index_t* ix) {
      const double g = G.value(s);
      const double p = std::max(M.cell(ix), kTiny);
      if (loss == Loss::KL) acc += g * std::log(g / p);
      else acc += g * std::pow(p / g, 1.0 - q);
    });
    part[tid] = acc;
  });
  double tot = 0.0;
  for (double p : part) tot += p;
  return tot;
}

template <class DataT>
inline double evaluate_loss(Loss loss, double q, const DataT& G,
                            const AspectModel& M, int threads) {
  const std::size_t nnz = G.nnz();
  const int T = effective_threads(threads, nnz);
  std::vector<double> part(std::max(T, 1), 0.0);
  if (loss == Loss::L2) {
    parallel_chunks(nnz, T, [&](int tid, std::size_t b, std::size_t e) {
      double acc = 0.0;
      G.cells(b, e, [&](std::size_t s, const index_t* ix) {
        const double g = G.value(s);
        acc += g * g - 2.0 * g * M.cell(ix);
      });
      part[tid] = acc;
    });
    double tot = 0.0;
    for (double p : part) tot += p;
    const arma::mat Q = gram_hadamard(M.F, M.F.size());
    return tot + arma::as_scalar(M.lambda.t() * Q * M.lambda);
  }
  const double tot = cell_sum(loss, q, G, M, threads);
  if (loss == Loss::KL) return tot;
  return (1.0 - tot) / (1.0 - q);
}

}  // namespace aspectr

#endif
