// src/lca_steps_glue.cpp — the weighted multinomial logit (lca/logit.h),
// the ML three-step estimates (lca/threestep.h) and latent class
// regression by EM (lca/regression.h): conversion, the call, the result.
#include "r_adapters.h"
#include <aspectr/lca/logit.h>
#include <aspectr/lca/regression.h>
#include <aspectr/lca/threestep.h>

using namespace aspectr_r;

namespace {

arma::mat mat_view(const Rcpp::NumericMatrix& m) {
  return arma::mat(const_cast<double*>(m.begin()), m.nrow(), m.ncol(), false, true);
}

Rcpp::NumericMatrix to_r(const arma::mat& m) {
  Rcpp::NumericMatrix out(m.n_rows, m.n_cols);
  std::copy(m.begin(), m.end(), out.begin());
  return out;
}

Rcpp::NumericVector to_r(const arma::vec& v) { return Rcpp::NumericVector(v.begin(), v.end()); }

// Interrupts only (the three-step EM has no progress of its own).
struct InterruptCheck {
  RCallback cb{false, 1, "lca"};
  bool operator()(int it, double obj) { return cb.tick(it, obj); }
};

// Progress, interrupts and the R hook between rounds of iterations (as
// lca()'s multistart).
struct RoundCallback {
  RCallback& cb;
  bool operator()(int it, double obj) { return cb.round(it, obj); }
};

// The regression's data: codes (1-based, NA for missing) become 0-based
// with -1 for missing.
aspectr::lca::RegressionData regression_data(const Rcpp::IntegerMatrix& codes, const Rcpp::IntegerVector& levels,
                                             const Rcpp::NumericMatrix& X, const Rcpp::Nullable<Rcpp::NumericVector>& w) {
  aspectr::lca::RegressionData d;
  const std::size_t n = codes.nrow(), J = codes.ncol();
  if (static_cast<std::size_t>(X.nrow()) != n || static_cast<std::size_t>(levels.size()) != J)
    Rcpp::stop("internal error: the codes, levels and covariates disagree in size");
  d.levels.resize(J);
  for (std::size_t j = 0; j < J; ++j) {
    if (levels[j] == NA_INTEGER || levels[j] < 1) Rcpp::stop("internal error: a variable without levels");
    d.levels[j] = static_cast<arma::uword>(levels[j]);
  }
  d.codes.resize(n * J);
  for (std::size_t j = 0; j < J; ++j)
    for (std::size_t i = 0; i < n; ++i) {
      const int c = codes[j * n + i];
      if (c == NA_INTEGER) { d.codes[j * n + i] = -1; continue; }
      if (c < 1 || c > levels[j]) Rcpp::stop("internal error: a response code out of range");
      d.codes[j * n + i] = c - 1;
    }
  d.X = Rcpp::as<arma::mat>(X);
  if (w.isNotNull()) {
    d.w = Rcpp::as<arma::vec>(Rcpp::NumericVector(w));
    if (d.w.n_elem != n) Rcpp::stop("internal error: one weight per observation is needed");
  }
  return d;
}

aspectr::lca::RegressionModel regression_model(const Rcpp::List& probs, const Rcpp::NumericMatrix& beta,
                                               const aspectr::lca::RegressionData& d) {
  aspectr::lca::RegressionModel M;
  const arma::uword k = beta.ncol() + 1;
  if (static_cast<std::size_t>(probs.size()) != d.levels.size())
    Rcpp::stop("internal error: one probability matrix per variable is needed");
  for (R_xlen_t j = 0; j < probs.size(); ++j) {
    arma::mat p = Rcpp::as<arma::mat>(probs[j]);
    if (p.n_rows != d.levels[j] || p.n_cols != k) Rcpp::stop("internal error: a probability matrix has the wrong shape");
    M.probs.push_back(std::move(p));
  }
  M.beta = Rcpp::as<arma::mat>(beta);
  if (M.beta.n_rows != d.X.n_cols) Rcpp::stop("internal error: the coefficients have the wrong shape");
  return M;
}

Rcpp::List probs_to_r(const std::vector<arma::mat>& probs) {
  Rcpp::List out(probs.size());
  for (std::size_t j = 0; j < probs.size(); ++j) out[j] = to_r(probs[j]);
  return out;
}

}  // namespace

// The weighted multinomial logit of the classes on covariates X (n x p)
// with weights Wt (n x k) from `theta` (p (k - 1), class 1 the
// reference): Newton-Raphson with step halving. Returns `theta`, the
// class probabilities `probs` and the information `info` at theta (row
// weights rowSums(Wt)), and the number of steps `iterations`.
// [[Rcpp::export]]
Rcpp::List cpp_logit_newton(Rcpp::NumericMatrix X, Rcpp::NumericMatrix Wt, Rcpp::NumericVector theta,
                            int max_iter = 100, double tol = 1e-12) {
  if (Wt.nrow() != X.nrow() || Wt.ncol() < 2 || theta.size() != X.ncol() * (Wt.ncol() - 1))
    Rcpp::stop("internal error: the covariates, weights and coefficients disagree in size");
  const arma::mat Xa = mat_view(X), Wa = mat_view(Wt);
  aspectr::lca::LogitFit f = aspectr::lca::logit_newton(Xa, Wa, Rcpp::as<arma::vec>(theta), max_iter, tol);
  const arma::mat info = aspectr::lca::logit_information(Xa, f.P, arma::sum(Wa, 1));
  return Rcpp::List::create(Rcpp::Named("theta") = to_r(f.theta), Rcpp::Named("probs") = to_r(f.P),
                            Rcpp::Named("info") = to_r(info), Rcpp::Named("iterations") = f.iterations);
}

// The ML three-step estimates of a step-3 model: `type` "continuous"
// (data: the outcome), "categorical" (data: its 1-based level codes, `nc`
// levels) or "covariates" (data: the design matrix), `k` classes, from
// the start theta0, with assignment weights W (n x k), sampling weights v
// and the classification error matrix D. Returns `theta`, `loglik`, the
// observed information `info`, the observations' scores `U`,
// `iterations` (EM), `newton` (steps after EM), `converged` and `finite`
// (false: a non-finite log-likelihood stopped the fit).
// [[Rcpp::export]]
Rcpp::List cpp_ts_ml(std::string type, SEXP data, int k, int nc, Rcpp::NumericMatrix W, Rcpp::NumericVector v,
                     Rcpp::NumericMatrix D, Rcpp::NumericVector theta0, int max_iter = 2000, double tol = 1e-9) {
  const std::size_t n = W.nrow();
  if (k < 2 || W.ncol() != k || D.nrow() != k || D.ncol() != k || static_cast<std::size_t>(v.size()) != n)
    Rcpp::stop("internal error: the assignment weights, sampling weights and D disagree in size");
  aspectr::Control ctl;
  ctl.max_iter = max_iter;
  ctl.tol = tol;
  const arma::mat Wa = mat_view(W), Da = mat_view(D);
  const arma::vec va = r_vector_view(v), th = Rcpp::as<arma::vec>(theta0);
  InterruptCheck check;
  aspectr::lca::ThreeStepFit f;
  const arma::uword K = static_cast<arma::uword>(k);
  auto run = [&](const auto& model) {
    if (th.n_elem != model.npar()) Rcpp::stop("internal error: the start has the wrong length");
    f = aspectr::lca::ml_three_step(model, Wa, va, Da, th, ctl, check);
  };
  if (type == "continuous") {
    Rcpp::NumericVector z(data);
    if (static_cast<std::size_t>(z.size()) != n) Rcpp::stop("internal error: one outcome per observation is needed");
    run(aspectr::lca::ContinuousDistal{Rcpp::as<arma::vec>(z), K});
  } else if (type == "categorical") {
    Rcpp::IntegerVector z(data);
    if (static_cast<std::size_t>(z.size()) != n || nc < 2) Rcpp::stop("internal error: one outcome per observation is needed");
    std::vector<arma::uword> codes(n);
    for (std::size_t i = 0; i < n; ++i) {
      if (z[i] == NA_INTEGER || z[i] < 1 || z[i] > nc) Rcpp::stop("internal error: an outcome level out of range");
      codes[i] = static_cast<arma::uword>(z[i] - 1);
    }
    run(aspectr::lca::CategoricalDistal{std::move(codes), K, static_cast<arma::uword>(nc)});
  } else if (type == "covariates") {
    Rcpp::NumericMatrix X(data);
    if (static_cast<std::size_t>(X.nrow()) != n) Rcpp::stop("internal error: one covariate row per observation is needed");
    run(aspectr::lca::CovariateLogit{Rcpp::as<arma::mat>(X), K});
  } else {
    Rcpp::stop("internal error: unknown step-3 model \"%s\"", type);
  }
  return Rcpp::List::create(Rcpp::Named("theta") = to_r(f.theta), Rcpp::Named("loglik") = f.loglik,
                            Rcpp::Named("info") = to_r(f.info), Rcpp::Named("U") = to_r(f.U),
                            Rcpp::Named("iterations") = f.iterations, Rcpp::Named("newton") = f.newton,
                            Rcpp::Named("converged") = f.converged, Rcpp::Named("finite") = f.finite);
}

// Latent class regression by EM from every start in `starts` (a list of
// starts, each a list of the variables' response probabilities, levels x
// k; the coefficients start at 0), responses `codes` (n x J, 1-based, NA
// missing) with `levels` per variable, covariates X and sampling weights
// w (NULL: none); `threads` over the starts; progress, interrupts and
// `hook` between rounds of iterations. Returns per start its `probs`,
// `beta`, `loglik`, `objective` (a list), `iterations` and `converged`,
// and `stopped`.
// [[Rcpp::export]]
Rcpp::List cpp_lcr_fit(Rcpp::IntegerMatrix codes, Rcpp::IntegerVector levels, Rcpp::NumericMatrix X,
                       Rcpp::Nullable<Rcpp::NumericVector> w, Rcpp::List starts, int k, int max_iter, double tol,
                       int threads = 1, bool verbose = false, SEXP hook = R_NilValue) {
  const aspectr::lca::RegressionData d = regression_data(codes, levels, X, w);
  if (k < 2) Rcpp::stop("internal error: a regression needs 2 or more classes");
  const Rcpp::NumericMatrix beta0(X.ncol(), k - 1);
  std::vector<aspectr::lca::RegressionModel> models;
  for (R_xlen_t s = 0; s < starts.size(); ++s) models.push_back(regression_model(starts[s], beta0, d));
  aspectr::Control ctl;
  ctl.max_iter = max_iter;
  ctl.tol = tol;
  ctl.threads = threads;
  RCallback cb(verbose, max_iter, "lca", hook);
  RoundCallback round{cb};
  const std::vector<aspectr::lca::RegressionRun> runs = aspectr::lca::regression_multistart(d, std::move(models), ctl, round);
  const std::size_t S = runs.size();
  Rcpp::List probs(S), beta(S), objective(S);
  Rcpp::NumericVector loglik(S);
  Rcpp::IntegerVector iterations(S);
  Rcpp::LogicalVector converged(S);
  bool stopped = false;
  for (std::size_t s = 0; s < S; ++s) {
    const aspectr::lca::RegressionRun& r = runs[s];
    probs[s] = probs_to_r(r.M.probs);
    beta[s] = to_r(r.M.beta);
    loglik[s] = r.loglik;
    objective[s] = Rcpp::NumericVector(r.trace.objective.begin(), r.trace.objective.end());
    iterations[s] = r.trace.iterations;
    converged[s] = r.trace.converged;
    stopped = stopped || r.trace.stopped;
  }
  return Rcpp::List::create(Rcpp::Named("probs") = probs, Rcpp::Named("beta") = beta,
                            Rcpp::Named("loglik") = loglik, Rcpp::Named("objective") = objective,
                            Rcpp::Named("iterations") = iterations, Rcpp::Named("converged") = converged,
                            Rcpp::Named("stopped") = stopped);
}

// The E step of latent class regression at given parameters: class
// priors `prior`, posteriors `posterior` (n x k) and `loglik`.
// [[Rcpp::export]]
Rcpp::List cpp_lcr_estep(Rcpp::IntegerMatrix codes, Rcpp::IntegerVector levels, Rcpp::NumericMatrix X,
                         Rcpp::Nullable<Rcpp::NumericVector> w, Rcpp::List probs, Rcpp::NumericMatrix beta) {
  const aspectr::lca::RegressionData d = regression_data(codes, levels, X, w);
  const aspectr::lca::RegressionModel M = regression_model(probs, beta, d);
  const aspectr::lca::RegressionEStep e = aspectr::lca::regression_estep(d, M);
  return Rcpp::List::create(Rcpp::Named("prior") = to_r(e.prior), Rcpp::Named("posterior") = to_r(e.post),
                            Rcpp::Named("loglik") = e.loglik);
}
