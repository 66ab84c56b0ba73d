// aspectr/lca/logit.h — the weighted multinomial logit of latent class
// membership, P(X = r | x_i) = exp(x_i' b_r) / sum_s exp(x_i' b_s) with
// b_1 = 0 (class 1 the reference), as latent class regression (Dayton and
// Macready 1988; Bandeen-Roche et al. 1997; poLCA's M step, Linzer and
// Lewis 2011) and the covariate models of the three-step methods (Vermunt
// 2010) use it.
//
// The objective is l(B) = sum_i sum_r Wt_ir log p_r(x_i) for weights Wt
// (n x k; posteriors times sampling weights, BCH weights, which may be
// negative, or the expected class counts of an EM step); with s_i =
// sum_r Wt_ir its gradient in the coefficients of classes 2..k is
//   g = X' (Wt - diag(s) P)[, 2..k]
// and its information (minus the Hessian), block (a, b),
//   I_ab = sum_i s_i p_ia ([a = b] - p_ib) x_i x_i'.
// l is concave whenever every s_i >= 0 (BCH weights sum to 1 per row).
// Coefficients are stored p x (k - 1), column r - 1 those of class r, and
// vectorized column by column (class 2's first), the layout of R's
// matrix(theta, p, k - 1).
#ifndef ASPECTR_LCA_LOGIT_H
#define ASPECTR_LCA_LOGIT_H

#include <armadillo>
#include <cmath>
#include <limits>
#include <vector>

namespace aspectr {
namespace lca {

// Class probabilities (n x k) of the coefficients B (p x (k - 1)): the
// linear predictors (0 for class 1) less their row maximum, exponentiated
// and divided by their row sums.
inline arma::mat logit_probs(const arma::mat& X, const arma::mat& B) {
  const arma::uword n = X.n_rows, k = B.n_cols + 1;
  arma::mat P(n, k);
  P.col(0).zeros();
  if (k > 1) P.cols(1, k - 1) = X * B;
  arma::vec mx = P.col(0);
  for (arma::uword r = 1; r < k; ++r) mx = arma::max(mx, P.col(r));
  std::vector<long double> sum(n, 0.0L);
  for (arma::uword r = 0; r < k; ++r) {
    double* p = P.colptr(r);
    for (arma::uword i = 0; i < n; ++i) {
      p[i] = std::exp(p[i] - mx[i]);
      sum[i] += p[i];
    }
  }
  for (arma::uword r = 0; r < k; ++r) {
    double* p = P.colptr(r);
    for (arma::uword i = 0; i < n; ++i) p[i] /= static_cast<double>(sum[i]);
  }
  return P;
}

inline arma::mat logit_probs(const arma::mat& X, const arma::vec& theta, arma::uword k) {
  const arma::mat B(const_cast<double*>(theta.memptr()), X.n_cols, k - 1, false, true);
  return logit_probs(X, B);
}

// sum_i sum_r Wt_ir log P_ir (NaN where a positive or negative weight
// meets a probability of 0, as 0 log 0 is taken literally).
inline double logit_value(const arma::mat& Wt, const arma::mat& P) {
  long double s = 0.0L;
  const double* w = Wt.memptr();
  const double* p = P.memptr();
  for (arma::uword j = 0; j < Wt.n_elem; ++j) s += w[j] * std::log(p[j]);
  return static_cast<double>(s);
}

// The gradient g = X' (Wt - diag(s) P)[, 2..k], vectorized.
inline arma::vec logit_gradient(const arma::mat& X, const arma::mat& Wt, const arma::vec& s,
                                const arma::mat& P) {
  const arma::uword k = P.n_cols;
  arma::mat R = Wt.cols(1, k - 1) - P.cols(1, k - 1).eval().each_col() % s;
  return arma::vectorise(X.t() * R);
}

// The information I = sum_i s_i (diag(p_i) - p_i p_i')[2..k, 2..k] kron
// x_i x_i', p (k - 1) square.
inline arma::mat logit_information(const arma::mat& X, const arma::mat& P, const arma::vec& s) {
  const arma::uword p = X.n_cols, k = P.n_cols;
  arma::mat I(p * (k - 1), p * (k - 1));
  arma::vec d(X.n_rows);
  for (arma::uword a = 1; a < k; ++a) {
    for (arma::uword b = a; b < k; ++b) {
      d = s % (P.col(a) * (a == b ? 1.0 : 0.0) - P.col(a) % P.col(b));
      const arma::mat blk = (X.each_col() % d).t() * X;
      I.submat((a - 1) * p, (b - 1) * p, a * p - 1, b * p - 1) = blk;
      if (b != a) I.submat((b - 1) * p, (a - 1) * p, b * p - 1, a * p - 1) = blk.t();
    }
  }
  return I;
}

// x = A^+ b by the singular value decomposition, singular values below
// sqrt(eps) times the largest taken as 0 (the Moore-Penrose inverse of
// MASS::ginv()).
inline arma::vec pinv_solve(const arma::mat& A, const arma::vec& b) {
  arma::mat U, V;
  arma::vec d;
  arma::vec x(A.n_cols, arma::fill::zeros);
  if (!arma::svd(U, d, V, A) || d.n_elem == 0) {
    x.fill(arma::datum::nan);
    return x;
  }
  const double cut = std::max(std::sqrt(std::numeric_limits<double>::epsilon()) * d[0], 0.0);
  for (arma::uword j = 0; j < d.n_elem; ++j)
    if (d[j] > cut) x += V.col(j) * (arma::dot(U.col(j), b) / d[j]);
  return x;
}

// A^-1 b when A is numerically non-singular (reciprocal condition number
// at least the machine epsilon, R's solve()); false otherwise.
inline bool solve_strict(arma::vec& x, const arma::mat& A, const arma::vec& b) {
  if (!A.is_finite() || !b.is_finite()) return false;
  return arma::solve(x, A, b, arma::solve_opts::no_approx);
}

// The Newton direction I^-1 g, or I^+ g where I is singular.
inline arma::vec newton_direction(const arma::mat& I, const arma::vec& g) {
  arma::vec x;
  if (solve_strict(x, I, g)) return x;
  if (!I.is_finite()) return arma::vec(g.n_elem, arma::fill::value(arma::datum::nan));
  return pinv_solve(I, g);
}

struct LogitFit {
  arma::vec theta;     // the coefficients, vectorized
  arma::mat P;         // class probabilities at theta (n x k)
  int iterations = 0;  // Newton steps taken
};

// Maximizes l by Newton-Raphson with step halving from `theta`: a step is
// taken (halved until the objective does not fall by more than 1e-12 of
// its size, down to 1e-10 of the full step) until the Newton step is
// below `tol` (relative to 1 + max |theta|), no step improves, or after
// `max_iter` steps. max_iter = 1 is one safeguarded Newton step (the M
// step of an EM).
inline LogitFit logit_newton(const arma::mat& X, const arma::mat& Wt, arma::vec theta,
                             int max_iter = 100, double tol = 1e-12) {
  const arma::uword k = Wt.n_cols;
  const arma::vec s = arma::sum(Wt, 1);
  LogitFit out;
  arma::mat P = logit_probs(X, theta, k);
  double cur = logit_value(Wt, P);
  for (int it = 0; it < max_iter; ++it) {
    const arma::vec step = newton_direction(logit_information(X, P, s), logit_gradient(X, Wt, s, P));
    if (!step.is_finite()) break;  // the caller sees the coefficients it gave
    if (arma::abs(step).max() < tol * (1.0 + arma::abs(theta).max())) break;
    double t = 1.0;
    arma::vec cand;
    arma::mat Pc;
    double val = 0.0;
    for (;;) {
      cand = theta + t * step;
      Pc = logit_probs(X, cand, k);
      val = logit_value(Wt, Pc);
      if (std::isfinite(val) && val >= cur - 1e-12 * std::fabs(cur)) break;
      t /= 2.0;
      if (t < 1e-10) break;
    }
    if (t < 1e-10) break;  // no progress: at the maximum to rounding
    theta = cand;
    P = std::move(Pc);
    cur = val;
    ++out.iterations;
  }
  out.theta = std::move(theta);
  out.P = std::move(P);
  return out;
}

}  // namespace lca
}  // namespace aspectr

#endif
