// aspectr/simplex.h — projections onto simplices.
//
// project_simplex(): the Euclidean projection of b in R^d onto the probability
// simplex {x >= 0, sum x = 1}: x_i = max(b_i - tau, 0) with tau found by
// sorting (Held, Wolfe & Crowder 1974; Duchi et al. 2008), O(d log d). It
// solves the PPS problem (5) of Hazan & Shashua (2007) exactly; their
// Algorithm 1 (alternating affine/orthant projections, which needs the step
// 1/|I| rather than the printed 1/d) reaches the same point and serves as a
// reference in the tests.
//
// simplex_qp(): min_x 1/2 x'Qx - c'x s.t. x >= 0, sum x = 1 (Q symmetric PSD,
// small k): the "projection onto a general simplex" (eq. 6) used for the
// weights lambda and for L2 fold-in. A primal active-set method with exact
// equality-constrained sub-solves; finite termination.
#ifndef ASPECTR_SIMPLEX_H
#define ASPECTR_SIMPLEX_H

#include <armadillo>
#include <algorithm>
#include <cmath>
#include <functional>
#include <vector>

namespace aspectr {

// Projects b onto the probability simplex (writes into x; x may alias b).
inline void project_simplex(const double* b, double* x, std::size_t d,
                            std::vector<double>& work) {
  work.assign(b, b + d);
  std::sort(work.begin(), work.end(), std::greater<double>());
  double csum = 0.0, tau = 0.0;
  for (std::size_t j = 0; j < d; ++j) {
    csum += work[j];
    const double t = (csum - 1.0) / static_cast<double>(j + 1);
    if (work[j] - t > 0.0) tau = t;
  }
  for (std::size_t i = 0; i < d; ++i) x[i] = std::max(b[i] - tau, 0.0);
}

inline arma::vec project_simplex(const arma::vec& b) {
  arma::vec x(b.n_elem);
  std::vector<double> work;
  project_simplex(b.memptr(), x.memptr(), b.n_elem, work);
  return x;
}

// The active-set step of simplex_qp() and nonneg_qp() when the free set's
// solution y is infeasible: x moves towards y until the first free
// variable (F: the free set's indices) reaches zero; it, and any other
// free variable then at or below zero, is set to zero and leaves the free
// set.
inline void active_set_toward(arma::vec& x, const arma::vec& y, const std::vector<arma::uword>& F,
                              std::vector<char>& free) {
  const arma::uword k = x.n_elem;
  double alpha = 1.0;
  arma::uword block = k;
  for (arma::uword i : F) {
    if (y[i] < 0.0) {
      const double den = x[i] - y[i];
      const double al = den > 0 ? x[i] / den : 0.0;
      if (al < alpha) { alpha = al; block = i; }
    }
  }
  x = x + alpha * (y - x);
  for (arma::uword i : F) {
    if (i == block || x[i] <= 0.0) { x[i] = 0.0; free[i] = 0; }
  }
}

// Active-set solver for the k-dimensional simplex-constrained QP.
// `x` holds a feasible start on entry (any point of the simplex) and the
// solution on exit. Returns the number of active-set iterations.
inline int simplex_qp(const arma::mat& Q, const arma::vec& c, arma::vec& x,
                      int max_iter = 0) {
  const arma::uword k = c.n_elem;
  if (k == 1) { x.ones(1); return 0; }
  if (max_iter <= 0) max_iter = static_cast<int>(10 * k + 50);
  // Start from a vertex-free feasible point with its support as working set.
  std::vector<char> free(k, 0);
  for (arma::uword i = 0; i < k; ++i) free[i] = x[i] > 0.0;
  // Scale for tolerances.
  const double scale = std::max(arma::abs(Q).max(), arma::abs(c).max()) + 1e-300;
  const double tol = 1e-13 * scale;
  int it = 0;
  for (; it < max_iter; ++it) {
    std::vector<arma::uword> F;
    for (arma::uword i = 0; i < k; ++i) if (free[i]) F.push_back(i);
    const arma::uword f = F.size();
    // KKT system on the free set: [Q_FF 1; 1' 0] [y; mu] = [c_F; 1].
    arma::mat K(f + 1, f + 1, arma::fill::zeros);
    arma::vec rhs(f + 1);
    for (arma::uword a = 0; a < f; ++a) {
      for (arma::uword b = 0; b < f; ++b) K(a, b) = Q(F[a], F[b]);
      K(a, f) = 1.0; K(f, a) = 1.0;
      rhs[a] = c[F[a]];
    }
    rhs[f] = 1.0;
    arma::vec sol;
    bool ok = arma::solve(sol, K, rhs, arma::solve_opts::no_approx);
    if (!ok || !sol.is_finite()) {
      // Singular face (collinear columns): minimum-norm solution.
      sol = arma::pinv(K) * rhs;
    }
    arma::vec y(k, arma::fill::zeros);
    for (arma::uword a = 0; a < f; ++a) y[F[a]] = sol[a];
    // Feasible step towards y.
    bool feasible = true;
    for (arma::uword a = 0; a < f; ++a) if (y[F[a]] < 0.0) { feasible = false; break; }
    if (feasible) {
      x = y;
      // Multipliers of the bound constraints: nu = Qx - c + mu (mu from
      // the solve has the sign of +mu*1 in Qx - c + mu*1 = 0 on F).
      const arma::vec g = Q * x - c;
      // On the free set g_i = -mu (constant); take its mean for stability.
      double mu = 0.0;
      for (arma::uword a = 0; a < f; ++a) mu -= g[F[a]];
      mu /= static_cast<double>(f);
      arma::uword best = k;
      double most = -tol;
      for (arma::uword i = 0; i < k; ++i) {
        if (free[i]) continue;
        const double nu = g[i] + mu;
        if (nu < most) { most = nu; best = i; }
      }
      if (best == k) break;  // KKT holds: optimal
      free[best] = 1;
    } else {
      active_set_toward(x, y, F, free);
    }
  }
  // Clean numerical dust and renormalize onto the simplex.
  x.transform([](double v) { return v > 0.0 ? v : 0.0; });
  const double s = arma::accu(x);
  if (s > 0) x /= s; else x.fill(1.0 / static_cast<double>(k));
  return it;
}

// Active-set solver for min_x 1/2 x'Qx - c'x s.t. x >= 0 (k small, Q
// symmetric PSD): the weights of the L2 fit without the sum-to-one
// constraint. `x` holds a non-negative start on entry and the solution on
// exit. Returns the number of active-set iterations.
inline int nonneg_qp(const arma::mat& Q, const arma::vec& c, arma::vec& x, int max_iter = 0) {
  const arma::uword k = c.n_elem;
  if (max_iter <= 0) max_iter = static_cast<int>(10 * k + 50);
  std::vector<char> free(k, 0);
  for (arma::uword i = 0; i < k; ++i) free[i] = x[i] > 0.0;
  const double scale = std::max(arma::abs(Q).max(), arma::abs(c).max()) + 1e-300;
  const double tol = 1e-13 * scale;
  int it = 0;
  for (; it < max_iter; ++it) {
    std::vector<arma::uword> F;
    for (arma::uword i = 0; i < k; ++i) if (free[i]) F.push_back(i);
    const arma::uword f = F.size();
    arma::vec y(k, arma::fill::zeros);
    if (f > 0) {
      arma::mat K(f, f);
      arma::vec rhs(f);
      for (arma::uword a = 0; a < f; ++a) {
        for (arma::uword b = 0; b < f; ++b) K(a, b) = Q(F[a], F[b]);
        rhs[a] = c[F[a]];
      }
      arma::vec sol;
      bool ok = arma::solve(sol, K, rhs, arma::solve_opts::no_approx);
      if (!ok || !sol.is_finite()) sol = arma::pinv(K) * rhs;
      for (arma::uword a = 0; a < f; ++a) y[F[a]] = sol[a];
    }
    bool feasible = true;
    for (arma::uword a = 0; a < f; ++a) if (y[F[a]] < 0.0) { feasible = false; break; }
    if (feasible) {
      x = y;
      const arma::vec g = Q * x - c;
      arma::uword best = k;
      double most = -tol;
      for (arma::uword i = 0; i < k; ++i) {
        if (free[i]) continue;
        if (g[i] < most) { most = g[i]; best = i; }
      }
      if (best == k) break;  // KKT holds
      free[best] = 1;
    } else {
      active_set_toward(x, y, F, free);
    }
  }
  x.transform([](double v) { return v > 0.0 ? v : 0.0; });
  return it;
}

}  // namespace aspectr

#endif
