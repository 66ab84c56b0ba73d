// aspectr/nmf/range.h — the randomized range finder of NNDSVD's SVD for
// large data (Halko, Martinsson and Tropp 2011): Q, an orthonormal basis of
// the range of X Omega after `power` subspace iterations, and B = Q' X, whose
// exact SVD gives X's leading singular triplets (u = Q u_B, range_svd()). Everything
// stays in C++, so that the iterations' m x l matrices are freed as soon as
// they are replaced, and the data are read through their products alone:
// Data's (in place for a dgCMatrix), or those of data in pieces added over
// the pieces (any type with Data's XHt() and WtX()).
#ifndef ASPECTR_NMF_RANGE_H
#define ASPECTR_NMF_RANGE_H

#include <armadillo>
#include <cmath>
#include <stdexcept>
#include <vector>
#include "data.h"
#include "dense.h"

namespace aspectr {
namespace nmf {

// An orthonormal basis of the range of Y, Y given and returned transposed
// (rows, l x m, the layout of the data's products) and transformed in
// place: Cholesky QR twice (Q' = R^-T Y' with R'R = Y'Y; the second pass
// restores orthogonality to rounding for any condition number the first
// one survives). Householder QR when Y'Y is numerically singular or its
// Cholesky factor nearly so, or of the first pass's Y R^-1 (the same range)
// when the second pass fails or the result is not orthonormal to 1e-10.
inline void orthonormalize_rows(arma::mat& Qt, int threads) {
  const std::size_t l = Qt.n_rows, m = Qt.n_cols;
  arma::mat G(l, l), R, Ri;
  auto fallback = [&] {
    arma::mat Qh, Rh;
    if (!Qt.is_finite() || !arma::qr_econ(Qh, Rh, arma::mat(Qt.t())))
      throw std::runtime_error("the QR decomposition of the range failed");
    Qt = Qh.t();
  };
  auto gram = [&] {  // G = Q'Q = Qt Qt'
    dense::nn(Qt.memptr(), l, l, m, Qt.memptr(), l, l, G.memptr(), threads);
  };
  for (int pass = 0; pass < 2; ++pass) {
    gram();
    // (R close to singular, by its diagonal: Householder QR of the current,
    // finite, Q before R^-1 could overflow it)
    if (!arma::chol(R, G) || R.diag().min() <= 1e-8 * R.diag().max() ||
        !arma::solve(Ri, arma::trimatu(R), arma::eye(l, l), arma::solve_opts::no_approx)) {
      fallback();
      return;
    }
    // each column q of Q' becomes Ri' q (Ri upper triangular)
    std::vector<double> t(l);
    for (std::size_t c = 0; c < m; ++c) {
      double* q = Qt.colptr(c);
      for (std::size_t a = 0; a < l; ++a) {
        const double* ri = Ri.colptr(a);
        double s = 0.0;
        for (std::size_t b = 0; b <= a; ++b) s += ri[b] * q[b];
        t[a] = s;
      }
      std::copy(t.begin(), t.end(), q);
    }
  }
  if (!Qt.is_finite()) { fallback(); return; }
  gram();
  if (arma::abs(G - arma::eye(l, l)).max() > 1e-10) { fallback(); return; }
}

struct Range {
  arma::mat Qt;  // l x m: Q' (Q has orthonormal columns)
  arma::mat B;   // l x n = Q' X
};

// Omega is n x l.
template <class Products>
Range range_finder(const Products& X, const arma::mat& Omega, int power, int threads) {
  arma::mat Yt;
  X.XHt(arma::mat(Omega.t()), Yt, threads);  // (X Omega)': l x m
  Range r;
  for (int it = 0; it <= power; ++it) {
    r.Qt = std::move(Yt);
    Yt.reset();
    orthonormalize_rows(r.Qt, threads);
    X.WtX(r.Qt, r.B, threads);                // Q' X: l x n
    if (it == power) break;
    X.XHt(r.B, Yt, threads);                  // (X X' Q)': l x m
  }
  return r;
}

// The leading k singular triplets of X from the range finder: B = U S V'
// (B is l x n, small), u = Q U. False when the SVD of B fails.
template <class Products>
bool range_svd(const Products& X, const arma::mat& Omega, int power, int k, int threads,
                      arma::vec& d, arma::mat& u, arma::mat& v) {
  Range r = range_finder(X, Omega, power, threads);
  arma::mat Ub, Vb;
  arma::vec sb;
  if (!arma::svd_econ(Ub, sb, Vb, r.B)) return false;
  r.B.reset();
  d = sb.head(k);
  v = Vb.head_cols(k);
  u = r.Qt.t() * Ub.head_cols(k);  // m x k
  return true;
}

}  // namespace nmf
}  // namespace aspectr

#endif
