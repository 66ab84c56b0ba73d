// aspectr/solvers/qem_shard.h — one piece's parts of a q-EM iteration
// (PieceQEM, pieces_em.h; qem.h) when the documents (mode 0) are split by rows into
// shards and every other mode is whole.
//
// The step updates the blocks one after another, each from an MTTKRP with
// the weights t_s = (g_s / p_s)^q of the model entering the step:
//  1. per shard: t, B_0 (the shard's own documents), its part of
//     a_r = sum_i U_0(r, i) B_0(r, i) (the weights' update) and
//     lg = log U_0 + (1/q) log B_0 with its row maxima;
//  2. with the rows' maxima over all shards: u = exp(lg - max), the row
//     sums of u (their total normalizes U_0, u / total, as
//     power_update_rows() does) and V_0' = U_0,old^q o u^(1-q), with which
//     the shard's part of B_1 is the MTTKRP of mode 1; the caller scales
//     row r of the added B_1 by total_r^-(1-q) (V_0 = V_0' total^-(1-q));
//  3. for every further mode n: the shard's part of B_n from V_0', the
//     V_m of the modes already updated and the old factors of the others.
// A row of U_0 without mass in any shard (a dead component) keeps its old
// values, as in power_update_rows(). The added parts equal the in-memory
// step's quantities up to rounding.
#ifndef ASPECTR_SOLVERS_QEM_SHARD_H
#define ASPECTR_SOLVERS_QEM_SHARD_H

#include <cmath>
#include <limits>
#include <vector>
#include "../kernels.h"
#include "../loss.h"
#include "qem.h"

namespace aspectr {

// Step 1 for a shard: B_0 from the weights t, the part of a (without the
// factor lambda_r^q) and lg = log U_0 + (1/q) log B_0 (-inf where either is
// 0) with its row maxima.
// (G: a SparseTensor or a CscMatrix)
template <class DataT>
inline void qem_shard_docs(const DataT& G, const AspectModel& M, const arma::vec& t, double q,
                           int threads, arma::vec& a, arma::mat& lg, arma::vec& mx) {
  const arma::uword k = M.rank();
  std::vector<const arma::mat*> Vp(M.order());
  for (std::size_t n = 0; n < M.order(); ++n) Vp[n] = &M.F[n];
  arma::mat B;
  mttkrp(G, Vp, 0, B, threads, t.memptr());
  const arma::mat& F = M.F[0];
  const arma::uword d = F.n_cols;
  const double p = 1.0 / q, ninf = -std::numeric_limits<double>::infinity();
  a.set_size(k);
  lg.set_size(k, d);
  mx.set_size(k);
  for (arma::uword r = 0; r < k; ++r) {
    a[r] = arma::dot(F.row(r), B.row(r));
    double m = ninf;
    for (arma::uword i = 0; i < d; ++i) {
      const double f = F(r, i), b = B(r, i);
      lg(r, i) = (f > 0.0 && b > 0.0) ? std::log(f) + p * std::log(b) : ninf;
      if (lg(r, i) > m) m = lg(r, i);
    }
    mx[r] = m;
  }
}

// Step 2 for a shard, given the rows' maxima over all shards: u (the new
// U_0 before its normalization; a dead row keeps `old`), the row sums of u
// and V_0' = old^q o u^(1-q).
inline void qem_shard_normalize(const arma::mat& lg, const arma::vec& mx, const arma::mat& old, double q,
                                arma::mat& u, arma::vec& tot, arma::mat& V0) {
  const double ninf = -std::numeric_limits<double>::infinity();
  const arma::uword k = lg.n_rows, d = lg.n_cols;
  u.set_size(k, d);
  tot.zeros(k);
  for (arma::uword r = 0; r < k; ++r) {
    if (!(mx[r] > ninf)) {  // dead component: kept
      u.row(r) = old.row(r);
      continue;
    }
    for (arma::uword i = 0; i < d; ++i) {
      u(r, i) = std::exp(lg(r, i) - mx[r]);
      tot[r] += u(r, i);
    }
  }
  V0 = arma::pow(old, q) % arma::pow(u, 1.0 - q);
}

}  // namespace aspectr

#endif
