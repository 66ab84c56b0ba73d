// aspectr/solvers/cp.h — non-negative CP decomposition without simplex
// constraints, X ~ sum_r a_r^(1) o ... o a_r^(N), under the Frobenius loss.
//
// HALS (Cichocki & Phan 2009; Gemulla and Miettinen (2013) for matrices): for mode n and column
// r, with X_n = MTTKRP_n(X, {A_m}) and Gamma = hadamard_{m != n} A_m'A_m, the
// exact minimizer over a_r^(n) >= 0 with the rest fixed is
//   a_r <- max(0, a_r + (X_n(:, r) - A_n Gamma(:, r)) / Gamma(r, r)),
// updated column after column. Multiplicative updates (Lee & Seung; Gemulla and Miettinen (2013)
// with its epsilon guards):
//   A_n <- A_n o max(X_n, eps) / (A_n Gamma + eps).
// Both never increase ||X - M||_F^2. After each sweep the column norms are
// balanced across modes, which leaves the model unchanged. The residual is
// never formed: ||X - M||^2 = ||X||^2 - 2 <X, M> + 1'(hadamard_n A_n'A_n)1.
// Factors are stored k x d_n as everywhere in the core; lambda stays 1.
// The updates' code is here; the rule that runs them, in memory (one
// piece) and on shards alike, is CPFrobPiecesRule (cp_pieces.h).
#ifndef ASPECTR_SOLVERS_CP_H
#define ASPECTR_SOLVERS_CP_H

#include "../loss.h"

namespace aspectr {

namespace detail {

// The factors balance_norms() multiplies the rows of the modes by, from
// their norms nrm(r, n) (k x N): each row scaled to the geometric mean of
// its component's norms, or all 1 for a component with a zero norm.
inline arma::mat balance_scales(const arma::mat& nrm) {
  const arma::uword k = nrm.n_rows, N = nrm.n_cols;
  arma::mat c(k, N, arma::fill::ones);
  for (arma::uword r = 0; r < k; ++r) {
    double logprod = 0.0;
    bool zero = false;
    for (arma::uword n = 0; n < N; ++n) {
      if (!(nrm(r, n) > 0.0)) { zero = true; break; }
      logprod += std::log(nrm(r, n));
    }
    if (zero) continue;
    const double target = std::exp(logprod / static_cast<double>(N));
    for (arma::uword n = 0; n < N; ++n) c(r, n) = target / nrm(r, n);
  }
  return c;
}

// Rescales the k columns so that every mode carries the same norm.
inline void balance_norms(std::vector<arma::mat>& F) {
  const std::size_t N = F.size();
  const arma::uword k = F[0].n_rows;
  arma::mat nrm(k, N);
  for (arma::uword r = 0; r < k; ++r)
    for (std::size_t n = 0; n < N; ++n) nrm(r, n) = arma::norm(F[n].row(r), 2);
  const arma::mat c = balance_scales(nrm);
  // (a component left as it is is multiplied by 1: exact)
  for (arma::uword r = 0; r < k; ++r)
    for (std::size_t n = 0; n < N; ++n) F[n].row(r) *= c(r, n);
}

// One mode's HALS update (k x d factor A, its MTTKRP Xn and Gamma), column
// after column.
inline void cp_hals_update(arma::mat& A, const arma::mat& Xn, const arma::mat& Gam) {
  const arma::uword k = A.n_rows;
  for (arma::uword r = 0; r < k; ++r) {
    if (!(Gam(r, r) > 0.0)) continue;
    const arma::rowvec ag = Gam.row(r) * A;   // (A_n Gamma)(:, r) as a row
    for (arma::uword i = 0; i < A.n_cols; ++i) {
      const double v = A(r, i) + (Xn(r, i) - ag[i]) / Gam(r, r);
      A(r, i) = v > 0.0 ? v : 0.0;
    }
  }
}

// One mode's multiplicative update with its epsilon guards.
inline void cp_mu_update(arma::mat& A, const arma::mat& Xn, const arma::mat& Gam, double eps) {
  const arma::mat den = Gam * A;  // k x d: (A_n Gamma)' in core layout
  for (arma::uword j = 0; j < A.n_elem; ++j)
    A[j] *= std::max(Xn[j], eps) / (den[j] + eps);
}

}  // namespace detail

}  // namespace aspectr

#endif
