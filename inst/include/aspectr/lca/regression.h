// aspectr/lca/regression.h — latent class regression by EM (Dayton and
// Macready 1988; Bandeen-Roche et al. 1997), poLCA's algorithm (Linzer and
// Lewis 2011): the prior class probabilities of observation i are a
// multinomial logit of its covariates x_i (lca/logit.h), the responses
// independent given the class. One iteration:
//   E step  prior_ir = p_r(x_i; B), post_ir ∝ prior_ir prod_j rho_jr(y_ij)
//           (missing responses left out), log-likelihood
//           l = sum_i w_i log sum_r prior_ir prod_j rho_jr(y_ij);
//   M step  rho_jr(c) ∝ sum_{i: y_ij = c} w_i post_ir (floored at 1e-300
//           before normalizing), then one Newton step of the logit
//           coefficients on sum_i w_i sum_r post_ir log prior_ir.
// w_i are sampling weights (1 without): a weighted pseudo-likelihood.
// The objective is -l, reported for the model entering each iteration;
// the fit stops when |l_t - l_{t-1}| <= tol max(u, |l_t|), u the mean
// weight (1 without weights: multiplying every weight by one number
// changes neither the estimates nor the iterations), or after
// max_iter iterations (then the last value is that of the model after
// the last M step). A non-finite l ends a start (its value is that l,
// and the caller's choice of the best start passes it over).
#ifndef ASPECTR_LCA_REGRESSION_H
#define ASPECTR_LCA_REGRESSION_H

#include "../control.h"
#include "../parallel.h"
#include "logit.h"

#include <algorithm>
#include <cmath>
#include <exception>
#include <utility>
#include <vector>

namespace aspectr {
namespace lca {

// The data: responses as 0-based codes, n x J column-major, -1 for a
// missing response; the number of levels of each variable; covariates X
// (n x p); sampling weights w (n, or empty for none).
struct RegressionData {
  std::vector<int> codes;
  std::vector<arma::uword> levels;
  arma::mat X;
  arma::vec w;
  arma::uword n() const { return X.n_rows; }
  bool weighted() const { return !w.is_empty(); }
  // the log-likelihood's unit of the stopping rule: the mean weight
  double unit() const { return weighted() && w.n_elem > 0 ? arma::mean(w) : 1.0; }
};

// The parameters: per variable the response probabilities (levels x k,
// columns on the simplex) and the logit coefficients (p x (k - 1)).
struct RegressionModel {
  std::vector<arma::mat> probs;
  arma::mat beta;
};

struct RegressionEStep {
  arma::mat prior, post;  // n x k
  double loglik = 0.0;
};

// The E step: class priors, posteriors and the (weighted) log-likelihood,
// by log-sum-exp over the classes of each observation.
inline RegressionEStep regression_estep(const RegressionData& d, const RegressionModel& M) {
  const arma::uword n = d.n(), k = M.beta.n_cols + 1, J = d.levels.size();
  RegressionEStep e;
  e.prior = logit_probs(d.X, M.beta);
  std::vector<arma::mat> lp(J);
  for (arma::uword j = 0; j < J; ++j) lp[j] = arma::log(M.probs[j]);
  // log P(y_i | class r), the variables added in turn (a missing
  // response adds nothing), then the log prior
  arma::mat L(n, k, arma::fill::zeros);
  for (arma::uword j = 0; j < J; ++j) {
    const int* cj = d.codes.data() + j * n;
    for (arma::uword r = 0; r < k; ++r) {
      const double* l = lp[j].colptr(r);
      double* out = L.colptr(r);
      for (arma::uword i = 0; i < n; ++i)
        if (cj[i] >= 0) out[i] += l[cj[i]];
    }
  }
  for (arma::uword r = 0; r < k; ++r) {
    const double* pr = e.prior.colptr(r);
    double* out = L.colptr(r);
    for (arma::uword i = 0; i < n; ++i) out[i] = std::log(pr[i]) + out[i];
  }
  arma::vec mx = L.col(0);
  for (arma::uword r = 1; r < k; ++r) mx = arma::max(mx, L.col(r));
  std::vector<long double> sum(n, 0.0L);
  e.post.set_size(n, k);
  for (arma::uword r = 0; r < k; ++r) {
    const double* l = L.colptr(r);
    double* p = e.post.colptr(r);
    for (arma::uword i = 0; i < n; ++i) {
      p[i] = std::exp(l[i] - mx[i]);
      sum[i] += p[i];
    }
  }
  arma::vec s(n);
  long double ll = 0.0L;
  for (arma::uword i = 0; i < n; ++i) {
    s[i] = static_cast<double>(sum[i]);
    const double li = mx[i] + std::log(s[i]);
    ll += d.weighted() ? d.w[i] * li : li;
  }
  e.post.each_col() /= s;
  e.loglik = static_cast<double>(ll);
  return e;
}

// The M step from an E step: the response probabilities, then one Newton
// step of the coefficients (the direction of logit.h, by the
// pseudo-inverse where the information is singular).
inline void regression_mstep(const RegressionData& d, RegressionModel& M, const RegressionEStep& e) {
  const arma::uword n = d.n(), k = e.post.n_cols, J = d.levels.size();
  for (arma::uword j = 0; j < J; ++j) {
    arma::mat m(d.levels[j], k, arma::fill::zeros);
    for (arma::uword r = 0; r < k; ++r) {
      const double* p = e.post.colptr(r);
      double* o = m.colptr(r);
      for (arma::uword i = 0; i < n; ++i) {
        const int c = d.codes[j * n + i];
        if (c >= 0) o[c] += d.weighted() ? p[i] * d.w[i] : p[i];
      }
      long double tot = 0.0L;
      for (arma::uword c = 0; c < d.levels[j]; ++c) {
        o[c] = std::max(o[c], 1e-300);
        tot += o[c];
      }
      const double t = static_cast<double>(tot);
      for (arma::uword c = 0; c < d.levels[j]; ++c) o[c] /= t;
    }
    M.probs[j] = std::move(m);
  }
  const arma::vec s = d.weighted() ? d.w : arma::vec(n, arma::fill::ones);
  const arma::mat Wt = d.weighted() ? arma::mat(e.post.each_col() % d.w) : e.post;
  const arma::vec step = newton_direction(logit_information(d.X, e.prior, s),
                                          logit_gradient(d.X, Wt, s, e.prior));
  M.beta += arma::reshape(step, M.beta.n_rows, M.beta.n_cols);
}

struct RegressionRun {
  RegressionModel M;  // the parameters the final value belongs to
  double loglik = 0.0;
  FitTrace trace;     // objective: -l per iteration
  double previous = -arma::datum::inf;  // l of the iteration before
  bool finished = false;
};

// Up to n more iterations of one start (at most ctl.max_iter in all). At
// the last one the model after its M step gets its E step, whose value
// replaces the iteration's in the trace.
inline void regression_advance(const RegressionData& d, RegressionRun& run, const Control& ctl, int n) {
  FitTrace& tr = run.trace;
  const double unit = d.unit();
  for (int j = 0; j < n && !run.finished; ++j) {
    if (j > 0) poll();  // (a user's interrupt, interrupt.h)
    if (static_cast<int>(tr.objective.size()) >= ctl.max_iter) {  // (max_iter <= 0)
      run.loglik = regression_estep(d, run.M).loglik;
      run.finished = true;
      break;
    }
    RegressionEStep e = regression_estep(d, run.M);
    tr.objective.push_back(-e.loglik);
    run.loglik = e.loglik;
    if (!std::isfinite(e.loglik)) {
      run.finished = true;
    } else if (std::isfinite(run.previous) &&
               std::fabs(e.loglik - run.previous) <= ctl.tol * std::max(unit, std::fabs(e.loglik))) {
      tr.converged = run.finished = true;
    } else {
      run.previous = e.loglik;
      regression_mstep(d, run.M, e);
      if (static_cast<int>(tr.objective.size()) >= ctl.max_iter) {
        // the model after the last M step
        run.loglik = regression_estep(d, run.M).loglik;
        tr.objective.back() = -run.loglik;
        run.finished = true;
      }
    }
  }
  tr.iterations = static_cast<int>(tr.objective.size());
  tr.initial = tr.objective.empty() ? -run.loglik : tr.objective.front();
}

// A start left before its end (the fit was stopped): the value of the
// model it holds, as at max_iter.
inline void regression_settle(const RegressionData& d, RegressionRun& run) {
  if (run.finished) return;
  run.loglik = regression_estep(d, run.M).loglik;
  if (!run.trace.objective.empty()) run.trace.objective.back() = -run.loglik;
  run.trace.initial = run.trace.objective.empty() ? -run.loglik : run.trace.objective.front();
  run.trace.stopped = true;
  run.finished = true;
}

// Every start, in rounds of `round` iterations: within a round the active
// starts go in batches (parallel.h's RunBatches: one start per thread, more
// while a batch takes under `batch_ms`; each start single-threaded, so its
// result does not depend on the thread count or the batching), and
// check(iteration of the most advanced start, best objective so far) runs
// on the calling thread after every batch (progress, interrupts); false
// stops every start where it is. The caller picks the best start.
template <class Check>
std::vector<RegressionRun> regression_multistart(const RegressionData& d, std::vector<RegressionModel> starts,
                                                 const Control& ctl, Check& check, int round = 25,
                                                 double batch_ms = 20.0) {
  const std::size_t S = starts.size();
  std::vector<RegressionRun> runs(S);
  for (std::size_t i = 0; i < S; ++i) runs[i].M = std::move(starts[i]);
  round = std::max(round, 1);
  RunBatches batches(capped_threads(ctl.threads), batch_ms);
  bool halted = false;
  auto report = [&]() {
    int it = 0;
    double best = 0.0;
    bool any = false;
    for (const RegressionRun& r : runs) {
      if (r.trace.objective.empty()) continue;
      it = std::max(it, r.trace.iterations);
      const double v = r.trace.objective.back();
      if (!any || v < best) best = v;
      any = true;
    }
    if (!check(it, best)) halted = true;
  };
  std::vector<std::size_t> active(S);
  for (std::size_t i = 0; i < S; ++i) active[i] = i;
  while (!active.empty() && !halted) {
    for (std::size_t b = 0; b < active.size() && !halted;) {
      const std::size_t e = std::min(b + batches.size(), active.size());
      const int m = static_cast<int>(e - b);
      int T = std::min(capped_threads(ctl.threads), m);
#ifndef _OPENMP
      T = 1;
#endif
      batches.run(e - b, S, [&] {
        if (T <= 1) {
          for (std::size_t a = b; a < e; ++a) regression_advance(d, runs[active[a]], ctl, round);
        } else {
          parallel_each(m, T, [&](int j) { regression_advance(d, runs[active[b + j]], ctl, round); });
        }
      });
      report();
      b = e;
    }
    active.erase(std::remove_if(active.begin(), active.end(), [&](std::size_t a) { return runs[a].finished; }),
                 active.end());
  }
  for (RegressionRun& r : runs) regression_settle(d, r);
  return runs;
}

}  // namespace lca
}  // namespace aspectr

#endif
