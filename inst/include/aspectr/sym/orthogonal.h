// aspectr/sym/orthogonal.h — the semi-orthogonality step of Cichocki et al. (2007)
// (eq. 29), G <- G (G'G)^(-1/2), on the core layout Gt = G' (k x n):
// Gt <- (G'G)^(-1/2) Gt. Negatives are clipped (the factor stays
// non-negative) and, when keep_norms is set, each column returns to its
// previous Euclidean norm (the step changes directions, not scales).
#ifndef ASPECTR_SYM_ORTHOGONAL_H
#define ASPECTR_SYM_ORTHOGONAL_H

#include <armadillo>
#include <cmath>

namespace aspectr {
namespace sym {

inline void orthogonalize(arma::mat& Gt, bool keep_norms = false, double keep = 0.0) {
  const arma::uword k = Gt.n_rows;
  const arma::vec before = arma::sqrt(arma::sum(arma::square(Gt), 1));
  arma::vec d;
  arma::mat V;
  if (!arma::eig_sym(d, V, Gt * Gt.t())) return;
  const double cut = 1e-12 * std::max(d.max(), 1e-300);
  for (double& x : d) x = x > cut ? 1.0 / std::sqrt(x) : 0.0;
  arma::mat O = arma::clamp(V * arma::diagmat(d) * V.t() * Gt, 0.0, arma::datum::inf);
  if (keep > 0.0) O = arma::max(O, keep * Gt);
  if (keep_norms) {
    for (arma::uword j = 0; j < k; ++j) {
      const double nn = arma::norm(O.row(j));
      if (nn > 0.0) O.row(j) *= before[j] / nn;
    }
  }
  Gt = std::move(O);
}

}  // namespace sym
}  // namespace aspectr

#endif
