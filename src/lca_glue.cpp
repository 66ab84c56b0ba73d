// src/lca_glue.cpp — latent class analysis: all random starts of lca() in
// one call (staged restarts, threads over starts; see solvers/multistart.h).
#include "r_adapters.h"

using namespace aspectr_r;

namespace {

// Interrupt check and progress between rounds of iterations.
struct RoundCheck {
  RCallback& cb;
  bool operator()(int it, double value) { return cb.round(it, value); }
};

// The starts as blocks: lambda0 is k x S (start i: column i), factors0 one
// d_n x (k S) matrix per variable (start i: columns i k + 1 .. (i + 1) k).
// Reading and writing them in place avoids a list per start (the lists'
// conversions cost more than the iterations of a small fit).
std::vector<aspectr::AspectModel> models_from_blocks(const Rcpp::NumericMatrix& lambda0,
                                                     const Rcpp::List& factors0,
                                                     const Rcpp::IntegerVector& dims) {
  const std::size_t k = lambda0.nrow(), S = lambda0.ncol(), N = factors0.size();
  if (N != static_cast<std::size_t>(dims.size()))
    Rcpp::stop("internal error: one factor block per variable is needed");
  std::vector<Rcpp::NumericMatrix> F;
  for (std::size_t n = 0; n < N; ++n) {
    F.push_back(Rcpp::as<Rcpp::NumericMatrix>(factors0[n]));
    if (static_cast<std::size_t>(F[n].ncol()) != k * S || F[n].nrow() != dims[n])
      Rcpp::stop("internal error: factor block %d has the wrong shape", static_cast<int>(n + 1));
  }
  std::vector<aspectr::AspectModel> models(S);
  for (std::size_t i = 0; i < S; ++i) {
    aspectr::AspectModel& M = models[i];
    M.lambda = arma::vec(lambda0.begin() + i * k, k);
    M.F.resize(N);
    for (std::size_t n = 0; n < N; ++n) {
      const std::size_t d = F[n].nrow();
      M.F[n] = arma::mat(F[n].begin() + i * k * d, d, k).t();
    }
  }
  return models;
}

}  // namespace

// Fits the starts given as blocks (see models_from_blocks) and returns them
// as blocks of the same shape (`lambda`, `factors`), with per start its
// lagged trace (`objective`, a list; `initial`; `kl`, the final loss),
// `iterations`, `converged` and `continued`.
// [[Rcpp::export]]
Rcpp::List cpp_lca_fit(Rcpp::IntegerMatrix idx, Rcpp::NumericVector val, Rcpp::IntegerVector dims,
                       Rcpp::NumericMatrix lambda0, Rcpp::List factors0, int max_iter, double tol,
                       int threads, int short_iter, int keep, bool verbose, SEXP hook = R_NilValue,
                       std::string method = "squarem") {
  const AspectInput in(idx, val, dims);
  const aspectr::SparseTensor& G = in.G;
  std::vector<aspectr::AspectModel> models = models_from_blocks(lambda0, factors0, dims);
  const std::size_t S = models.size(), k = lambda0.nrow(), N = factors0.size();
  aspectr::MultiStartControl ctl;
  ctl.max_iter = max_iter;
  ctl.tol = tol;
  ctl.threads = threads;
  ctl.short_iter = short_iter;
  ctl.keep = keep;
  // (a model that fits the table exactly, a saturated one: the divergence
  // falls to its rounding, about 1e-16 either side of 0, where its relative
  // change never settles; within 1e-12 of 0, a likelihood-ratio statistic
  // G^2 = 2 N D of 2e-12 N, the fit has converged. With missing responses
  // the objective is not a divergence and may be negative: the floor is
  // about its distance from 0, control.h)
  ctl.floor = 1e-12;
  RCallback cb(verbose, max_iter, "lca", hook);
  RoundCheck check{cb};
  std::vector<aspectr::StartRun> runs;
  if (method == "cd") {
    aspectr::KLCDRule rule(&in.counts, in.total);
    runs = aspectr::multistart(rule, G, std::move(models), ctl, check);
  } else {
    // EM or its SQUAREM: the rules of every backend (pieces_em.h,
    // pieces_squarem.h) on the table as one piece, a rule per start
    aspectr::EMRule em(1.0, &in.counts, in.total);
    std::vector<aspectr::AspectEMRule> rules(S, aspectr::AspectEMRule(em, method == "squarem"));
    runs = aspectr::multistart(rules, G, std::move(models), ctl, check);
  }
  Rcpp::NumericMatrix lambda(k, S);
  Rcpp::List factors(N), objective(S);
  for (std::size_t n = 0; n < N; ++n) {
    const std::size_t d = dims[n];
    Rcpp::NumericMatrix f(d, k * S);
    for (std::size_t i = 0; i < S; ++i) {
      const arma::mat& U = runs[i].M.F[n];  // k x d
      double* o = f.begin() + i * k * d;
      for (std::size_t r = 0; r < k; ++r)
        for (std::size_t j = 0; j < d; ++j) o[j + r * d] = U(r, j);
    }
    factors[n] = f;
  }
  Rcpp::NumericVector initial(S), kl(S);
  Rcpp::IntegerVector iterations(S);
  Rcpp::LogicalVector converged(S), continued(S);
  for (std::size_t i = 0; i < S; ++i) {
    const aspectr::StartRun& r = runs[i];
    std::copy(r.M.lambda.begin(), r.M.lambda.end(), lambda.begin() + i * k);
    objective[i] = Rcpp::NumericVector(r.f.begin() + 1, r.f.end());
    initial[i] = r.f.front();
    kl[i] = r.f.back();
    iterations[i] = r.iterations;
    converged[i] = r.converged;
    continued[i] = r.continued;
  }
  return Rcpp::List::create(Rcpp::Named("lambda") = lambda, Rcpp::Named("factors") = factors,
                            Rcpp::Named("objective") = objective, Rcpp::Named("initial") = initial,
                            Rcpp::Named("kl") = kl, Rcpp::Named("iterations") = iterations,
                            Rcpp::Named("converged") = converged, Rcpp::Named("continued") = continued);
}

// How often the multistart loop calls its interrupt check for these starts
// (tests: the check must come between batches of starts, not only after a
// round over every start; `batch_ms`: MultiStartControl's).
// [[Rcpp::export]]
int cpp_lca_check_count(Rcpp::IntegerMatrix idx, Rcpp::NumericVector val, Rcpp::IntegerVector dims,
                        Rcpp::NumericMatrix lambda0, Rcpp::List factors0, int max_iter, double tol,
                        int threads, int short_iter, int keep, double batch_ms) {
  const AspectInput in(idx, val, dims);
  const aspectr::SparseTensor& G = in.G;
  std::vector<aspectr::AspectModel> models = models_from_blocks(lambda0, factors0, dims);
  aspectr::MultiStartControl ctl;
  ctl.max_iter = max_iter; ctl.tol = tol; ctl.threads = threads;
  ctl.short_iter = short_iter; ctl.keep = keep;
  ctl.batch_ms = batch_ms;
  int calls = 0;
  auto count = [&calls](int, double) { ++calls; return true; };
  aspectr::EMRule em(1.0, &in.counts, in.total);
  std::vector<aspectr::AspectEMRule> rules(models.size(), aspectr::AspectEMRule(em, false));
  aspectr::multistart(rules, G, std::move(models), ctl, count);
  return calls;
}

// lca()'s random starts from one matrix of uniforms `u` (k (1 + sum(dims))
// x S; start i: column i), as blocks (see models_from_blocks): the weights
// 0.5 + u, the factors 0.1 + 0.9 u (random_start()'s runif(n, 0.5, 1.5) and
// runif(n, 0.1, 1), which are a + (b - a) u), each column normalized by its
// sum accumulated in long double as R's colSums() does, so that the numbers
// are those of random_start().
// [[Rcpp::export]]
Rcpp::List cpp_start_blocks(Rcpp::NumericMatrix u, Rcpp::IntegerVector dims, int k) {
  const std::size_t S = u.ncol(), per = u.nrow(), N = dims.size(), K = k;
  std::size_t need = 1;
  for (std::size_t n = 0; n < N; ++n) need += static_cast<std::size_t>(dims[n]);
  if (per != K * need) Rcpp::stop("internal error: the uniforms have the wrong number of rows");
  auto normalize = [](double* x, std::size_t d) {
    long double sum = 0.0;
    for (std::size_t j = 0; j < d; ++j) sum += x[j];
    const double s = static_cast<double>(sum);
    for (std::size_t j = 0; j < d; ++j) x[j] /= s;
  };
  Rcpp::NumericMatrix lambda(K, S);
  for (std::size_t i = 0; i < S; ++i) {
    double* o = lambda.begin() + i * K;
    const double* ui = u.begin() + i * per;
    for (std::size_t r = 0; r < K; ++r) o[r] = 0.5 + (1.5 - 0.5) * ui[r];
    normalize(o, K);
  }
  Rcpp::List factors(N);
  std::size_t off = K;
  for (std::size_t n = 0; n < N; ++n) {
    const std::size_t d = dims[n];
    Rcpp::NumericMatrix m(d, K * S);
    for (std::size_t i = 0; i < S; ++i) {
      const double* ui = u.begin() + i * per + off;
      double* o = m.begin() + i * K * d;
      for (std::size_t j = 0; j < K * d; ++j) o[j] = 0.1 + (1 - 0.1) * ui[j];
      for (std::size_t r = 0; r < K; ++r) normalize(o + r * d, d);
    }
    factors[n] = m;
    off += K * d;
  }
  return Rcpp::List::create(Rcpp::Named("lambda") = lambda, Rcpp::Named("factors") = factors);
}
