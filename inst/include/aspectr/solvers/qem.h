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
#ifndef ASPECTR_SOLVERS_QEM_H
#define ASPECTR_SOLVERS_QEM_H

#include "../loss.h"
#include "normalize.h"

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

class QEMRule {
 public:
  explicit QEMRule(double q) : q_(q) {}
  static constexpr bool kLagged = true;

  // (G: a SparseTensor or a CscMatrix, see data.h)
  template <class DataT>
  double step(const DataT& G, AspectModel& M, int threads) {
    const std::size_t N = M.order();
    const arma::uword k = M.rank();
    const double q = q_;

    // Pass 0: weights t_s, the loss of the current model, and B_0.
    arma::vec t;
    const double tot = qem_weights(G, M, q, threads, t);
    const double before = (1.0 - tot) / (1.0 - q);

    std::vector<arma::mat> V(N);
    std::vector<const arma::mat*> Vp(N);
    for (std::size_t n = 0; n < N; ++n) { V[n] = M.F[n]; Vp[n] = &V[n]; }

    arma::mat B;
    for (std::size_t n = 0; n < N; ++n) {
      mttkrp(G, Vp, n, B, threads, t.memptr());
      if (n == 0) {
        // lambda update from the current factors (all modes still old).
        arma::vec a(k);
        for (arma::uword r = 0; r < k; ++r)
          a[r] = std::pow(M.lambda[r], q) * arma::dot(M.F[0].row(r), B.row(r));
        power_update_vec(M.lambda, a, 1.0 / q);
      }
      const arma::mat old = M.F[n];
      power_update_rows(M.F[n], B, 1.0 / q);
      // V_n = old^q o new^(1-q) for the following modes.
      V[n] = arma::pow(old, q) % arma::pow(M.F[n], 1.0 - q);
    }
    return before;
  }

  // the step and the Tsallis divergence of the model entering it, which
  // the step never increases (for SQUAREM's safeguard, see squarem.h)
  template <class DataT>
  double step_merit(const DataT& G, AspectModel& M, int threads, double* merit) {
    const double v = step(G, M, threads);
    if (merit != nullptr) *merit = v;
    return v;
  }

  template <class DataT>
  double loss(const DataT& G, const AspectModel& M, int threads) const {
    return evaluate_loss(Loss::Tsallis, q_, G, M, threads);
  }

 private:
  double q_;
};

}  // namespace aspectr

#endif
