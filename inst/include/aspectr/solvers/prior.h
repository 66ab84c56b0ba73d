// aspectr/solvers/prior.h — Dirichlet priors of the KL aspect model of a
// matrix (documents x terms): MAP estimation with pseudo-counts.
//
// The model P(d, w) = sum_z lambda_z U(d, z) V(w, z) is also
// P(d) sum_z theta_dz phi_wz with theta_dz = P(z | d) = lambda_z U(d, z) /
// P(d) and phi_wz = P(w | z) = V(w, z). The priors are
//   theta_d ~ Dirichlet(1 + a)  (a: k pseudo-counts, the same for every document),
//   phi_z   ~ Dirichlet(1 + b_z) (b: k x n_terms pseudo-counts),
// P(d) without a prior. MAP EM ("add a" smoothing): with the E-step's
// expected counts n_dz and n_wz,
//   theta_dz = (n_dz + a_z) / (n_d + sum a),  phi_wz = (n_wz + b_zw) / (n_z + sum_w b_zw),
// and P(d) = n_d / S (S the total count). In the core's units (G = x / S)
// the pseudo-counts are divided by S: the document statistics y0(:, d)
// (summing to g_d = n_d / S) become the joint P(d, z)
//   y0(:, d) <- g_d (y0(:, d) + a / S) / (g_d + sum a / S),
// whose row sums are the new lambda; the terms' statistics get b / S added
// before their rows are normalized.
//
// The objective (never increased by MAP EM) is the negative log posterior
// divided by S, up to a constant: D(G || P) + penalty(M) with
//   penalty = -(1/S) [sum_{d: P(d) > 0} sum_z a_z log theta_dz + sum_{z,w} b_zw log phi_wz]
// (0 log 0 = 0; documents the model gives no mass, those without counts
// after a step, have no topic proportions and no prior term).
#ifndef ASPECTR_SOLVERS_PRIOR_H
#define ASPECTR_SOLVERS_PRIOR_H

#include <armadillo>
#include <cmath>
#include <limits>

namespace aspectr {

struct DirichletPrior {
  arma::vec doc;    // a / S (k), empty: none
  arma::mat term;   // b / S (k x n_terms), empty: none
  bool any() const { return !doc.is_empty() || !term.is_empty(); }

  // The documents' statistics y0 (k x d, column d summing to g_d) turned
  // into the MAP joint P(d, z); a column without mass stays zero.
  void documents(arma::mat& y0) const {
    if (doc.is_empty()) return;
    const double A = arma::accu(doc);
    const arma::uword k = y0.n_rows;
    for (arma::uword d = 0; d < y0.n_cols; ++d) {
      double* c = y0.colptr(d);
      double g = 0.0;
      for (arma::uword r = 0; r < k; ++r) g += c[r];
      if (!(g > 0.0)) continue;
      const double f = g / (g + A);
      for (arma::uword r = 0; r < k; ++r) c[r] = f * (c[r] + doc[r]);
    }
  }

  // The terms' statistics (k x n_terms) with the pseudo-counts added.
  void terms(arma::mat& y1) const {
    if (!term.is_empty()) y1 += term;
  }

  // -(1/S) sum a log theta over the documents of J = lambda o U (k x d,
  // the joint P(d, z)), columns without mass left out.
  double documents_penalty(const arma::mat& J) const {
    if (doc.is_empty()) return 0.0;
    const arma::uword k = J.n_rows;
    double out = 0.0;
    for (arma::uword d = 0; d < J.n_cols; ++d) {
      const double* c = J.colptr(d);
      double s = 0.0;
      for (arma::uword r = 0; r < k; ++r) s += c[r];
      if (!(s > 0.0)) continue;
      for (arma::uword r = 0; r < k; ++r) out -= xlogy(doc[r], c[r] / s);
    }
    return out;
  }
  // the same from lambda and U (k x d)
  double documents_penalty(const arma::vec& lambda, const arma::mat& U) const {
    if (doc.is_empty()) return 0.0;
    arma::mat J = U;
    J.each_col() %= lambda;
    return documents_penalty(J);
  }

  // -(1/S) sum b log phi (V: k x n_terms, rows on the simplex)
  double terms_penalty(const arma::mat& V) const {
    if (term.is_empty()) return 0.0;
    double out = 0.0;
    for (arma::uword e = 0; e < V.n_elem; ++e) out -= xlogy(term[e], V[e]);
    return out;
  }

  // Coordinate descent's majorizers (cd_pieces.h, PieceKLCDTensor).
  // A document's linear coefficient (the same for each topic) from s0,
  // its entering mass sum_z J0(z, d): 1 + sum a / s0 (1 without mass).
  double document_coef(double s0) const {
    const double As = doc.is_empty() ? 0.0 : arma::accu(doc);
    return 1.0 + (s0 > 0.0 ? As / s0 : 0.0);
  }
  // The documents' sums the terms' majorizer takes, added into colw (k)
  // and Dm over the documents of U (k x d, columns the documents' profiles
  // P(d | z)) with the weights lam0: colw_z += sum_d U(z, d) / s_d, s_d =
  // sum_z lam0_z U(z, d), over the documents with s_d > 0 (their count
  // added to Dm). Pieces of the documents add theirs.
  static void document_sums(const arma::vec& lam0, const arma::mat& U, arma::vec& colw, double& Dm) {
    const arma::uword k = U.n_rows;
    for (arma::uword d = 0; d < U.n_cols; ++d) {
      double s = 0.0;
      for (arma::uword r = 0; r < k; ++r) s += lam0[r] * U(r, d);
      if (!(s > 0.0)) continue;
      Dm += 1.0;
      for (arma::uword r = 0; r < k; ++r) colw[r] += U(r, d) / s;
    }
  }
  // The terms' majorizer: the linear coefficient of each topic (coef, k)
  // and the pseudo-cells (cells, k x n_terms: column w those of term w)
  // from the weights lam0, the documents' sums (document_sums()) and the
  // entering terms' profiles V0 (k x n_terms).
  void term_majorizer(const arma::vec& lam0, const arma::vec& colw, double Dm, const arma::mat& V0,
                      arma::vec& coef, arma::mat& cells) const {
    const arma::uword k = lam0.n_elem;
    const arma::vec a = doc.is_empty() ? arma::vec(k, arma::fill::zeros) : doc;
    const double As = arma::accu(a);
    cells = term.is_empty() ? arma::mat(k, V0.n_cols, arma::fill::zeros) : term;
    const arma::vec B = arma::sum(cells, 1);
    coef = 1.0 + As * colw;
    for (arma::uword r = 0; r < k; ++r) {
      const double e = B[r] - Dm * a[r];
      if (e > 0.0 && lam0[r] > 0.0) coef[r] += e / lam0[r];
      else if (e < 0.0) cells.row(r) -= e * V0.row(r);
    }
  }

  // x log y (0 at x = 0), y taken as at least kLogFloor: coordinate
  // descent floors a model value there (nmf::KLCD::kFloor) and puts to 0
  // an entry whose optimum is below it, as a pseudo-count below about
  // 1e-150 of the total count makes it; the penalty of such an entry is
  // then within x log(kLogFloor / y) of its own, and never infinite
  static constexpr double kLogFloor = 1e-150;
  static double xlogy(double x, double y) {
    if (x == 0.0) return 0.0;
    if (!(y >= 0.0)) return -std::numeric_limits<double>::infinity();
    return x * std::log(y > kLogFloor ? y : kLogFloor);
  }
};

}  // namespace aspectr

#endif
