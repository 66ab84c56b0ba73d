// aspectr/lca/threestep.h — step 3 of the ML three-step method (Vermunt
// 2010; Bakk, Tekle and Vermunt 2013): with the classification error
// matrix D (k x k, D_rs = P(W = s | X = r)) fixed, maximizes
//   l(theta) = sum_i sum_s omega_is log sum_r f_ir(theta) D_rs,
// omega_is = v_i w_is (sampling weight times assignment weight), where
// f_ir = exp(logf_ir) is the step-3 model's joint of class r and the
// external variable for observation i:
//   ContinuousDistal    P(X = r) N(z_i; mu_r, s2_r)
//   CategoricalDistal   P(X = r) rho_r(z_i)
//   CovariateLogit      P(X = r | x_i), a multinomial logit (logit.h)
// by EM (the E step's expected class weights C_ir = sum_s omega_is
// f_ir D_rs / sum_u f_iu D_us feed the model's M step) until the
// log-likelihood changes by less than tol (|l|+1), then Newton-Raphson
// steps with step halving on the observed information (quadratic
// convergence near the maximum).
//
// A model gives: npar(); valid(theta) (a parameter vector the likelihood
// is defined at); logf(theta) (n x k); grads(theta), the gradients of
// logf (a cube n x npar x k, slice r those of class r); hsum(theta, C),
// sum_i sum_r C_ir times the Hessian of logf_ir; mstep(C, theta).
#ifndef ASPECTR_LCA_THREESTEP_H
#define ASPECTR_LCA_THREESTEP_H

#include "../control.h"
#include "logit.h"

#include <cmath>
#include <vector>

namespace aspectr {
namespace lca {

// log-sum-exp of a short vector
inline double log_sum_exp(const arma::vec& x) {
  const double m = x.max();
  long double s = 0.0L;
  for (double v : x) s += std::exp(v - m);
  return m + std::log(static_cast<double>(s));
}

// The class shares of logits (class 1 the reference): g = theta[0 .. k-2].
inline arma::vec shares_of(const arma::vec& theta, arma::uword k) {
  arma::vec g(k);
  g[0] = 0.0;
  for (arma::uword r = 1; r < k; ++r) g[r] = theta[r - 1];
  return arma::exp(g - log_sum_exp(g));
}

// Column sums accumulated in long double (R's colSums()).
inline arma::vec col_sums(const arma::mat& C) {
  arma::vec out(C.n_cols);
  for (arma::uword r = 0; r < C.n_cols; ++r) {
    long double s = 0.0L;
    const double* c = C.colptr(r);
    for (arma::uword i = 0; i < C.n_rows; ++i) s += c[i];
    out[r] = static_cast<double>(s);
  }
  return out;
}

// The class logits log(P_r / P_1), r = 2..k, of class weights.
inline arma::vec logits_of_counts(const arma::vec& nt) {
  const double tot = arma::accu(nt);
  arma::vec g(nt.n_elem - 1);
  for (arma::uword r = 1; r < nt.n_elem; ++r) g[r - 1] = std::log((nt[r] / tot) / (nt[0] / tot));
  return g;
}

// The gradients of the class logits of log P(X = r): [r = s] - P_s.
inline void share_grads(arma::cube& G, const arma::vec& P) {
  const arma::uword k = P.n_elem;
  for (arma::uword r = 0; r < k; ++r)
    for (arma::uword s = 1; s < k; ++s) G.slice(r).col(s - 1).fill((r == s ? 1.0 : 0.0) - P[s]);
}

// sum(C) times the Hessian of log P(X = r) in the class logits (the same
// for every r): -(diag(P[2..k]) - P[2..k] P[2..k]').
inline void share_hessian(arma::mat& H, const arma::vec& P, double total) {
  const arma::uword k = P.n_elem;
  for (arma::uword a = 1; a < k; ++a)
    for (arma::uword b = 1; b < k; ++b)
      H(a - 1, b - 1) = -total * ((a == b ? P[a] : 0.0) - P[a] * P[b]);
}

// theta = (class logits (k - 1), means (k), variances (k)).
struct ContinuousDistal {
  arma::vec z;
  arma::uword k;
  arma::uword npar() const { return 3 * k - 1; }
  bool valid(const arma::vec& th) const {
    for (arma::uword r = 0; r < k; ++r)
      if (!(th[2 * k - 1 + r] > 0.0)) return false;
    return true;
  }
  arma::mat logf(const arma::vec& th) const {
    const arma::vec lp = arma::log(shares_of(th, k));
    arma::mat L(z.n_elem, k);
    for (arma::uword r = 0; r < k; ++r) {
      const double mu = th[k - 1 + r], s2 = th[2 * k - 1 + r];
      const double c = lp[r] - 0.5 * std::log(2.0 * arma::datum::pi * s2);
      for (arma::uword i = 0; i < z.n_elem; ++i) {
        const double e = z[i] - mu;
        L(i, r) = c - e * e / (2.0 * s2);
      }
    }
    return L;
  }
  arma::cube grads(const arma::vec& th) const {
    arma::cube G(z.n_elem, npar(), k, arma::fill::zeros);
    share_grads(G, shares_of(th, k));
    for (arma::uword r = 0; r < k; ++r) {
      const double mu = th[k - 1 + r], s2 = th[2 * k - 1 + r];
      for (arma::uword i = 0; i < z.n_elem; ++i) {
        const double e = z[i] - mu;
        G(i, k - 1 + r, r) = e / s2;
        G(i, 2 * k - 1 + r, r) = -0.5 / s2 + e * e / (2.0 * s2 * s2);
      }
    }
    return G;
  }
  arma::mat hsum(const arma::vec& th, const arma::mat& C) const {
    arma::mat H(npar(), npar(), arma::fill::zeros);
    share_hessian(H, shares_of(th, k), arma::accu(C));
    for (arma::uword r = 0; r < k; ++r) {
      const double mu = th[k - 1 + r], s2 = th[2 * k - 1 + r];
      long double c = 0.0L, ce = 0.0L, cq = 0.0L;
      for (arma::uword i = 0; i < z.n_elem; ++i) {
        const double e = z[i] - mu;
        c += C(i, r);
        ce += C(i, r) * e;
        cq += C(i, r) * (0.5 / (s2 * s2) - e * e / (s2 * s2 * s2));
      }
      const arma::uword a = k - 1 + r, b = 2 * k - 1 + r;
      H(a, a) = -static_cast<double>(c) / s2;
      H(a, b) = H(b, a) = -static_cast<double>(ce) / (s2 * s2);
      H(b, b) = static_cast<double>(cq);
    }
    return H;
  }
  // class shares, means and variances weighted by C
  arma::vec mstep(const arma::mat& C, const arma::vec&) const {
    const arma::vec nt = col_sums(C);
    arma::vec th(npar());
    th.head(k - 1) = logits_of_counts(nt);
    for (arma::uword r = 0; r < k; ++r) {
      long double m = 0.0L;
      for (arma::uword i = 0; i < z.n_elem; ++i) m += C(i, r) * z[i];
      const double mu = static_cast<double>(m) / nt[r];
      long double v = 0.0L;
      for (arma::uword i = 0; i < z.n_elem; ++i) {
        const double e = z[i] - mu;
        v += C(i, r) * (e * e);
      }
      th[k - 1 + r] = mu;
      th[2 * k - 1 + r] = static_cast<double>(v) / nt[r];
    }
    return th;
  }
};

// theta = (class logits (k - 1), then per class the log-odds of levels
// 2..nc against level 1). z: 0-based levels.
struct CategoricalDistal {
  std::vector<arma::uword> z;
  arma::uword k, nc;
  arma::uword npar() const { return k - 1 + k * (nc - 1); }
  arma::uword a0(arma::uword r) const { return k - 1 + r * (nc - 1); }
  bool valid(const arma::vec& th) const { return th.is_finite(); }
  arma::mat rho(const arma::vec& th) const {  // k x nc
    arma::mat R(k, nc);
    arma::vec a(nc);
    for (arma::uword r = 0; r < k; ++r) {
      a[0] = 0.0;
      for (arma::uword c = 1; c < nc; ++c) a[c] = th[a0(r) + c - 1];
      R.row(r) = arma::exp(a - log_sum_exp(a)).t();
    }
    return R;
  }
  arma::mat logf(const arma::vec& th) const {
    const arma::vec lp = arma::log(shares_of(th, k));
    const arma::mat lr = arma::log(rho(th));
    arma::mat L(z.size(), k);
    for (arma::uword r = 0; r < k; ++r)
      for (arma::uword i = 0; i < z.size(); ++i) L(i, r) = lp[r] + lr(r, z[i]);
    return L;
  }
  arma::cube grads(const arma::vec& th) const {
    arma::cube G(z.size(), npar(), k, arma::fill::zeros);
    share_grads(G, shares_of(th, k));
    const arma::mat R = rho(th);
    for (arma::uword r = 0; r < k; ++r)
      for (arma::uword c = 1; c < nc; ++c)
        for (arma::uword i = 0; i < z.size(); ++i)
          G(i, a0(r) + c - 1, r) = (z[i] == c ? 1.0 : 0.0) - R(r, c);
    return G;
  }
  arma::mat hsum(const arma::vec& th, const arma::mat& C) const {
    arma::mat H(npar(), npar(), arma::fill::zeros);
    share_hessian(H, shares_of(th, k), arma::accu(C));
    const arma::mat R = rho(th);
    const arma::vec nt = col_sums(C);
    for (arma::uword r = 0; r < k; ++r)
      for (arma::uword a = 1; a < nc; ++a)
        for (arma::uword b = 1; b < nc; ++b)
          H(a0(r) + a - 1, a0(r) + b - 1) = -nt[r] * ((a == b ? R(r, a) : 0.0) - R(r, a) * R(r, b));
    return H;
  }
  // class shares and the level probabilities of each class weighted by C
  // (floored at 1e-300)
  arma::vec mstep(const arma::mat& C, const arma::vec&) const {
    const arma::vec nt = col_sums(C);
    arma::mat R(k, nc, arma::fill::zeros);
    for (arma::uword r = 0; r < k; ++r) {
      std::vector<long double> s(nc, 0.0L);
      for (arma::uword i = 0; i < z.size(); ++i) s[z[i]] += C(i, r);
      for (arma::uword c = 0; c < nc; ++c) R(r, c) = std::max(static_cast<double>(s[c]) / nt[r], 1e-300);
    }
    arma::vec th(npar());
    th.head(k - 1) = logits_of_counts(nt);
    for (arma::uword r = 0; r < k; ++r)
      for (arma::uword c = 1; c < nc; ++c) th[a0(r) + c - 1] = std::log(R(r, c) / R(r, 0));
    return th;
  }
};

// theta = the logit coefficients, p x (k - 1) by column (logit.h).
struct CovariateLogit {
  arma::mat X;
  arma::uword k;
  arma::uword npar() const { return X.n_cols * (k - 1); }
  bool valid(const arma::vec& th) const { return th.is_finite(); }
  arma::mat logf(const arma::vec& th) const { return arma::log(logit_probs(X, th, k)); }
  arma::cube grads(const arma::vec& th) const {
    const arma::mat P = logit_probs(X, th, k);
    const arma::uword p = X.n_cols;
    arma::cube G(X.n_rows, npar(), k, arma::fill::zeros);
    for (arma::uword r = 0; r < k; ++r)
      for (arma::uword s = 1; s < k; ++s) {
        const arma::vec f = (r == s ? 1.0 : 0.0) - P.col(s);
        G.slice(r).cols((s - 1) * p, s * p - 1) = X.each_col() % f;
      }
    return G;
  }
  arma::mat hsum(const arma::vec& th, const arma::mat& C) const {
    return -logit_information(X, logit_probs(X, th, k), arma::sum(C, 1));
  }
  // one safeguarded Newton step of the logit weighted by C
  arma::vec mstep(const arma::mat& C, const arma::vec& th) const {
    return logit_newton(X, C, th, 1).theta;
  }
};

struct ThreeStepFit {
  arma::vec theta;
  double loglik = 0.0;
  arma::mat info;     // observed information at theta
  arma::mat U;        // the observations' score vectors (n x npar, times omega)
  int iterations = 0; // EM iterations
  int newton = 0;     // Newton steps taken after them
  bool converged = false;
  bool finite = true; // false: the log-likelihood of the start or of an EM step was not finite
  bool stopped = false;
};

namespace detail {

struct ThreeStepE {
  double ll = 0.0;
  arma::mat C, E, A;  // class weights; exp(logf - row max); E D
};

template <class Model>
ThreeStepE three_step_estep(const Model& m, const arma::vec& theta, const arma::mat& omega,
                            const arma::mat& D) {
  ThreeStepE e;
  const arma::mat lf = m.logf(theta);
  const arma::uword n = lf.n_rows, k = lf.n_cols;
  arma::vec mx = lf.col(0);
  for (arma::uword r = 1; r < k; ++r) mx = arma::max(mx, lf.col(r));
  e.E = lf.each_col() - mx;
  e.E = arma::exp(e.E);
  e.A = e.E * D;
  long double ll = 0.0L;
  arma::mat R(n, k, arma::fill::zeros);
  for (arma::uword s = 0; s < k; ++s)
    for (arma::uword i = 0; i < n; ++i) {
      const double o = omega(i, s);
      if (o > 0.0) {
        ll += o * (mx[i] + std::log(e.A(i, s)));
        R(i, s) = o / e.A(i, s);
      }
    }
  e.ll = static_cast<double>(ll);
  e.C = e.E % (R * D.t());
  return e;
}

struct ThreeStepD {
  arma::mat U, info;
  arma::vec grad;
};

// The scores of the observations and the observed information, from the
// complete-data derivatives less the information lost to the
// classification errors (Louis 1982).
template <class Model>
ThreeStepD three_step_derivs(const Model& m, const arma::vec& theta, const ThreeStepE& e,
                             const arma::mat& omega, const arma::mat& D) {
  const arma::cube G = m.grads(theta);
  const arma::uword n = omega.n_rows, k = omega.n_cols, np = G.n_cols;
  ThreeStepD d;
  d.U.zeros(n, np);
  for (arma::uword r = 0; r < k; ++r) d.U += G.slice(r).each_col() % e.C.col(r);
  arma::mat H = m.hsum(theta, e.C);
  for (arma::uword r = 0; r < k; ++r) H += (G.slice(r).each_col() % e.C.col(r)).t() * G.slice(r);
  arma::mat u(n, np);
  for (arma::uword s = 0; s < k; ++s) {
    if (!arma::any(omega.col(s) > 0.0)) continue;
    arma::mat Q = e.E.each_row() % D.col(s).t();
    Q.each_col() /= e.A.col(s);
    u.zeros();
    for (arma::uword r = 0; r < k; ++r) u += G.slice(r).each_col() % Q.col(r);
    u.elem(arma::find_nonfinite(u)).zeros();
    H -= (u.each_col() % omega.col(s)).t() * u;
  }
  d.grad = arma::sum(d.U, 0).t();
  d.info = -H;
  return d;
}

}  // namespace detail

// The fit from `theta` (the start: the naive estimates). EM for at most
// ctl.max_iter iterations (callback(iteration, -l) after each; false
// stops), then at most 50 Newton steps.
template <class Model, class Callback>
ThreeStepFit ml_three_step(const Model& m, const arma::mat& W, const arma::vec& v, const arma::mat& D,
                           arma::vec theta, const Control& ctl, Callback& callback) {
  ThreeStepFit out;
  const arma::mat omega = W.each_col() % v;
  detail::ThreeStepE e = detail::three_step_estep(m, theta, omega, D);
  if (!std::isfinite(e.ll)) out.finite = false;
  for (int it = 1; out.finite && it <= ctl.max_iter; ++it) {
    arma::vec next = m.mstep(e.C, theta);
    detail::ThreeStepE en = detail::three_step_estep(m, next, omega, D);
    out.iterations = it;
    if (!std::isfinite(en.ll)) { out.finite = false; break; }
    const double change = en.ll - e.ll;
    theta = std::move(next);
    e = std::move(en);
    if (std::fabs(change) < ctl.tol * (std::fabs(e.ll) + 1.0)) { out.converged = true; break; }
    if (!callback(it, -e.ll)) { out.stopped = true; break; }
  }
  if (!out.finite) {
    out.theta = theta;
    out.loglik = arma::datum::nan;
    return out;
  }
  // Newton-Raphson polish
  detail::ThreeStepD d = detail::three_step_derivs(m, theta, e, omega, D);
  for (int i = 0; i < 50 && !out.stopped; ++i) {
    arma::vec step;
    if (!solve_strict(step, d.info, d.grad) || !step.is_finite()) break;
    if (arma::abs(step).max() < 1e-12 * (1.0 + arma::abs(theta).max())) { out.converged = true; break; }
    double t = 1.0;
    bool ok = false;
    arma::vec cand;
    detail::ThreeStepE ec;
    while (t > 1e-6) {
      cand = theta + t * step;
      if (m.valid(cand)) {
        ec = detail::three_step_estep(m, cand, omega, D);
        if (std::isfinite(ec.ll) && ec.ll >= e.ll - 1e-10 * std::fabs(e.ll)) { ok = true; break; }
      }
      t /= 2.0;
    }
    if (!ok) break;
    const bool small = arma::abs(cand - theta).max() < 1e-8 * (1.0 + arma::abs(theta).max()) ||
                       (t == 1.0 && ec.ll - e.ll < 1e-13 * std::fabs(e.ll));
    theta = std::move(cand);
    e = std::move(ec);
    d = detail::three_step_derivs(m, theta, e, omega, D);
    ++out.newton;
    if (small) { out.converged = true; break; }
  }
  out.theta = std::move(theta);
  out.loglik = e.ll;
  out.info = std::move(d.info);
  out.U = std::move(d.U);
  return out;
}

}  // namespace lca
}  // namespace aspectr

#endif
