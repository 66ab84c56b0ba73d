// aspectr/sym/hypergraph.h — hypergraph affinities for multi-way clustering
// (Shashua, Zass and Hazan 2006): tuples of points scored by how well one
// low-dimensional model fits them.
//
// The residual of a tuple of m points p_1..p_m (rows of X) under a model of
// dimension q is the mean squared orthogonal distance of the points to the
// best-fitting q-dimensional affine subspace (affine = true: lines q = 1,
// planes q = 2) or linear subspace through the origin (affine = false):
//     r^2 = (1/m) * (sum of all but the q largest eigenvalues of S),
// with S the scatter of the centred (affine) or raw points; by
// Eckart-Young that is the squared distance to the best fit. S is formed as
// the smaller of the m x m Gram and the d x d scatter matrix (same non-zero
// eigenvalues); the 2 x 2 case has a closed form.
#ifndef ASPECTR_SYM_HYPERGRAPH_H
#define ASPECTR_SYM_HYPERGRAPH_H

#include <armadillo>
#include <cmath>
#include <vector>
#include "../parallel.h"

namespace aspectr {
namespace sym {

// All m-subsets of {0..n-1} in lexicographic order, one per column.
inline arma::umat all_tuples(arma::uword n, arma::uword m) {
  double count = 1.0;
  for (arma::uword l = 0; l < m; ++l) count = count * static_cast<double>(n - l) / static_cast<double>(l + 1);
  arma::umat out(m, static_cast<arma::uword>(std::llround(count)));
  if (out.n_cols == 0) return out;
  std::vector<arma::uword> c(m);
  for (arma::uword l = 0; l < m; ++l) c[l] = l;
  for (arma::uword col = 0; col < out.n_cols; ++col) {
    for (arma::uword l = 0; l < m; ++l) out(l, col) = c[l];
    // next combination
    arma::uword l = m;
    while (l-- > 0) {
      if (c[l] < n - m + l) {
        ++c[l];
        for (arma::uword r = l + 1; r < m; ++r) c[r] = c[r - 1] + 1;
        break;
      }
    }
  }
  return out;
}

// r^2 of each tuple (columns of `tuples`, 0-based rows of X).
inline arma::vec tuple_residuals(const arma::mat& X, const arma::umat& tuples, arma::uword q, bool affine,
                                 int threads) {
  const arma::uword m = tuples.n_rows, d = X.n_cols, nt = tuples.n_cols;
  arma::vec r(nt);
  const arma::mat Xt = X.t();  // d x n: one contiguous point per column
  const int T = effective_threads(threads, nt * 8);
  parallel_chunks(nt, T, [&](int, std::size_t b, std::size_t e) {
    arma::mat P(d, m), S;
    arma::vec ev;
    for (std::size_t t = b; t < e; ++t) {
      for (arma::uword l = 0; l < m; ++l) P.col(l) = Xt.col(tuples(l, t));
      if (affine) P.each_col() -= arma::mean(P, 1);
      S = (d <= m) ? arma::mat(P * P.t()) : arma::mat(P.t() * P);
      const arma::uword s = S.n_rows;
      double res;
      if (q >= s) {
        res = 0.0;
      } else if (s == 2) {
        const double tr = S(0, 0) + S(1, 1), det = S(0, 0) * S(1, 1) - S(0, 1) * S(1, 0);
        const double disc = std::sqrt(std::max(tr * tr - 4.0 * det, 0.0));
        const double small = 0.5 * (tr - disc), big = 0.5 * (tr + disc);
        res = q == 0 ? small + big : small;
      } else {
        arma::eig_sym(ev, S);  // ascending
        res = 0.0;
        for (arma::uword l = 0; l + q < s; ++l) res += ev[l];
      }
      r[t] = std::max(res, 0.0) / static_cast<double>(m);
    }
  });
  return r;
}

}  // namespace sym
}  // namespace aspectr

#endif
