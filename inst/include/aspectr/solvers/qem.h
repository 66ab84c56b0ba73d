// aspectr/solvers/qem.h — q-EM for the aspect model under the Tsallis
// divergence D_q (Hazan, Haroon & Shashua, sections 3.2-3.3).
//
// The bound Q(W, theta) = sum_r D_q(W^r o G || lambda_r o_n u_r^(n)) is
// minimized block by block with the posteriors W fixed (Bayes rule, eq. 5).
// For q < 1 this means maximizing
//   sum_r lambda_r^(1-q) sum_s (W_s^r g_s)^q prod_n u_{r,i_n}^(1-q).
// With p_s = model value at cell s and t_s = (g_s / p_s)^q,
//   (W_s^r g_s)^q = t_s lambda_r^q prod_n u_{r,i_n}^q,
// so every block update is a power-rescaling of an MTTKRP with weights t:
//   lambda_r  propto  (lambda_r^q sum_i U_0(i,r) B_0(i,r))^(1/q)
//   U_n(:, r) propto   U_n(:, r) o B_n(:, r)^(1/q),
//   B_n = MTTKRP_n(t, {V_m}),  V_m = U_m,old^q o U_m,new^(1-q) for modes
//   already updated in this sweep and U_m for the others.
// Each block step is an exact maximization of the bound, so D_q(G || P)
// never increases. q = 1 gives EM. Cost: N passes of O(nnz * N * k).
// Seed note: the printed step (b)-(c) leaves the order of blocks open; any
// order that uses the newest values keeps the monotonicity.
// The rule is PieceQEM (pieces_em.h), on data in memory as one piece
// (pieces_memory.h) as on shards; this file keeps its first pass.
#ifndef ASPECTR_SOLVERS_QEM_H
#define ASPECTR_SOLVERS_QEM_H

#include <algorithm>
#include <cmath>
#include <vector>
#include "../loss.h"

namespace aspectr {

// t_s = (g_s / p_s)^q at the cells of G and sum_s t_s p_s (the first pass
// of a q-EM step; also a shard's part of it, see qem_shard.h)
// (G: a SparseTensor or a CscMatrix)
template <class DataT>
inline double qem_weights(const DataT& G, const AspectModel& M, double q, int threads,
                          arma::vec& t) {
  const std::size_t nnz = G.nnz();
  const int T = effective_threads(threads, nnz);
  t.set_size(nnz);
  std::vector<double> part(std::max(T, 1), 0.0);
  parallel_chunks(nnz, T, [&](int tid, std::size_t b, std::size_t e) {
    double acc = 0.0;
    G.cells(b, e, [&](std::size_t s, const index_t* ix) {
      const double g = G.value(s);
      const double p = std::max(M.cell(ix), kTiny);
      const double ts = std::pow(g / p, q);
      t[s] = ts;
      acc += ts * p;  // = g^q p^(1-q)
    });
    part[tid] = acc;
  });
  double tot = 0.0;
  for (double p : part) tot += p;
  return tot;
}

}  // namespace aspectr

#endif
