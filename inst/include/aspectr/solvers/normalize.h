// aspectr/solvers/normalize.h — multiplicative updates onto the simplex.
#ifndef ASPECTR_SOLVERS_NORMALIZE_H
#define ASPECTR_SOLVERS_NORMALIZE_H

#include <armadillo>
#include <cmath>
#include <limits>

namespace aspectr {

// Row r of Y (k x d) becomes a distribution; a row with zero mass keeps
// the previous distribution `old` (a dead component stays as it was).
inline void normalize_rows(arma::mat& Y, const arma::mat& old) {
  for (arma::uword r = 0; r < Y.n_rows; ++r) {
    double tot = 0.0;
    for (arma::uword i = 0; i < Y.n_cols; ++i) tot += Y(r, i);
    if (tot > 0.0 && std::isfinite(tot)) {
      for (arma::uword i = 0; i < Y.n_cols; ++i) Y(r, i) /= tot;
    } else {
      for (arma::uword i = 0; i < Y.n_cols; ++i) Y(r, i) = old(r, i);
    }
  }
}

// F_new(r, i) proportional to F(r, i) * A(r, i)^p, rows summing to one,
// computed in log space so that large p = 1/q neither overflows nor
// underflows. F is updated in place.
inline void power_update_rows(arma::mat& F, const arma::mat& A, double p) {
  const arma::uword k = F.n_rows, d = F.n_cols;
  const double ninf = -std::numeric_limits<double>::infinity();
  arma::vec lg(d);
  for (arma::uword r = 0; r < k; ++r) {
    double mx = ninf;
    for (arma::uword i = 0; i < d; ++i) {
      const double f = F(r, i), a = A(r, i);
      lg[i] = (f > 0.0 && a > 0.0) ? std::log(f) + p * std::log(a) : ninf;
      if (lg[i] > mx) mx = lg[i];
    }
    if (!(mx > ninf)) continue;  // dead component: keep it
    double tot = 0.0;
    for (arma::uword i = 0; i < d; ++i) { lg[i] = std::exp(lg[i] - mx); tot += lg[i]; }
    for (arma::uword i = 0; i < d; ++i) F(r, i) = lg[i] / tot;
  }
}

// lambda_new proportional to a^p (log space), on the simplex.
inline void power_update_vec(arma::vec& lambda, const arma::vec& a, double p) {
  const double ninf = -std::numeric_limits<double>::infinity();
  arma::vec lg(a.n_elem);
  double mx = ninf;
  for (arma::uword r = 0; r < a.n_elem; ++r) {
    lg[r] = a[r] > 0.0 ? p * std::log(a[r]) : ninf;
    if (lg[r] > mx) mx = lg[r];
  }
  if (!(mx > ninf)) return;
  double tot = 0.0;
  for (arma::uword r = 0; r < a.n_elem; ++r) { lg[r] = std::exp(lg[r] - mx); tot += lg[r]; }
  lambda = lg / tot;
}

// The M-step of the aspect model's EM (PieceEM, pieces_em.h; the documents'
// of the piece in memory, pieces_memory.h): a mode's statistics
// normalized onto the simplex row by row (a row without finite mass keeps
// the old one) become its factor; the weights are the normalized
// posterior sums (kept when there is no mass).
inline void mstep_mode(arma::mat& Y, arma::mat& F) {
  normalize_rows(Y, F);
  F = std::move(Y);
}
inline void mstep_weights(const arma::vec& lam, arma::vec& lambda) {
  const double tot = arma::accu(lam);
  if (tot > 0.0) lambda = lam / tot;
}

}  // namespace aspectr

#endif
