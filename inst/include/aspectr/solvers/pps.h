// aspectr/solvers/pps.h — pNMF / pNTF under the L2 loss (Hazan & Shashua
// 2007, sections 3-4).
//
// Block coordinate descent on ||G - sum_r lambda_r o_n u_r^(n)||_F^2 under
// simplex constraints. For the column u = u_r^(n), with the others fixed, the
// loss is isotropic in u, so its exact minimizer is the projection onto the
// probability simplex (PPS) of
//   b = (G^r x_{m != n} u_r^(m)) / (lambda_r prod_{m != n} ||u_r^(m)||^2),
// where G^r = G - sum_{j != r} lambda_j o_n u_j^(n). The residual G^r is never
// formed: with X_n = MTTKRP_n(G, {U_m}) and Gamma = hadamard_{m != n} U_m'U_m,
//   G^r x u = X_n(:, r) - sum_{j != r} lambda_j Gamma(j, r) U_n(:, j),
//   prod ||u_r^(m)||^2 = Gamma(r, r).
// The weights solve min ||A lambda - vec(G)||^2 on the simplex (eq. 6), a
// k-dimensional QP with A'A = hadamard_n U_n'U_n and A'vec(G) from the last
// MTTKRP. Every block step is exact, so the loss never increases.
// Cost per sweep: N MTTKRPs over the non-zeros plus O(k^2 sum_n d_n).
//
// The rule (PPSPiecesRule, cp_pieces.h) is written once, on data in
// pieces; the data in memory are one piece. This file holds its updates.
#ifndef ASPECTR_SOLVERS_PPS_H
#define ASPECTR_SOLVERS_PPS_H

#include "../loss.h"
#include "../simplex.h"

namespace aspectr {

// The column r of a mode's factor U (k x d) in the block step: with
// `coef` lambda % Gamma(:, r) without its r-th entry and `den` lambda_r
// Gamma(r, r) (pps_coef(); false: the component does not enter the loss
// and keeps its column), the target b = (X(r, :) - coef' U) / den, whose
// projection onto the simplex is the column's update. (U's row r does
// not enter b.)
inline bool pps_coef(const arma::mat& Gam, const arma::vec& lambda, arma::uword r, arma::vec& coef, double& den) {
  den = lambda[r] * Gam(r, r);
  if (!(den > 0.0)) return false;
  coef = lambda % Gam.col(r);
  coef[r] = 0.0;
  return true;
}
inline void pps_target(const arma::mat& X, const arma::mat& U, const arma::vec& coef, double den, arma::uword r,
                       double* b) {
  const arma::rowvec cu = coef.t() * U;
  for (arma::uword i = 0; i < U.n_cols; ++i) b[i] = (X(r, i) - cu[i]) / den;
}

// A mode's factor U (k x d, all of it at hand) updated column by column
// from its MTTKRP X (k x d) and Gamma = hadamard_{m != n} U_m'U_m.
inline void pps_update_mode(arma::mat& U, const arma::mat& X, const arma::mat& Gam, const arma::vec& lambda,
                            std::vector<double>& work) {
  const arma::uword d = U.n_cols;
  arma::vec b(d), coef;
  double den;
  for (arma::uword r = 0; r < U.n_rows; ++r) {
    if (!pps_coef(Gam, lambda, r, coef, den)) continue;
    pps_target(X, U, coef, den, r, b.memptr());
    project_simplex(b.memptr(), b.memptr(), d, work);
    for (arma::uword i = 0; i < d; ++i) U(r, i) = b[i];
  }
}

// The weights: min 1/2 l'Ql - c'l on the simplex (or the orthant), with Q
// = hadamard_n U_n'U_n and c = A'vec(G) (from the last mode's MTTKRP);
// returns the fit's part of the loss beyond ||G||^2.
inline double pps_weights(const arma::mat& Q, const arma::vec& c, arma::vec& lambda, bool free_weights) {
  if (free_weights) nonneg_qp(Q, c, lambda); else simplex_qp(Q, c, lambda);
  return arma::as_scalar(lambda.t() * Q * lambda) - 2.0 * arma::dot(c, lambda);
}

}  // namespace aspectr

#endif
