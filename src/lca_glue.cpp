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

}  // namespace

// inits: list of starts, each a list(lambda, factors) with factors d_n x k.
// Returns one list per start in cpp_plsa_fit()'s format plus `continued`.
// [[Rcpp::export]]
Rcpp::List cpp_lca_fit(Rcpp::IntegerMatrix idx, Rcpp::NumericVector val, Rcpp::IntegerVector dims,
                       Rcpp::List inits, int max_iter, double tol, int threads, int short_iter,
                       int keep, bool verbose, SEXP hook = R_NilValue, std::string method = "em") {
  const aspectr::SparseTensor X = make_tensor(idx, val, dims);
  const aspectr::SparseTensor G = X.normalized();
  std::vector<aspectr::AspectModel> models;
  models.reserve(inits.size());
  for (R_xlen_t i = 0; i < inits.size(); ++i) {
    Rcpp::List s = inits[i];
    models.push_back(make_model(s["lambda"], s["factors"]));
  }
  aspectr::MultiStartControl ctl;
  ctl.max_iter = max_iter;
  ctl.tol = tol;
  ctl.threads = threads;
  ctl.short_iter = short_iter;
  ctl.keep = keep;
  RCallback cb(verbose, max_iter, "lca", hook);
  RoundCheck check{cb};
  std::vector<aspectr::StartRun> runs;
  if (method == "cd") {
    aspectr::KLCDRule rule(&X.val, X.total());
    runs = aspectr::multistart(rule, G, std::move(models), ctl, check);
  } else {
    aspectr::EMRule rule(1.0, &X.val, X.total());
    runs = aspectr::multistart(rule, G, std::move(models), ctl, check);
  }
  Rcpp::List out(runs.size());
  for (std::size_t i = 0; i < runs.size(); ++i) {
    const aspectr::StartRun& r = runs[i];
    Rcpp::List o = model_to_r(r.M);
    o["objective"] = Rcpp::NumericVector(r.f.begin() + 1, r.f.end());
    o["initial"] = r.f.front();
    o["iterations"] = r.iterations;
    o["converged"] = r.converged;
    o["continued"] = r.continued;
    o["kl"] = r.f.back();
    out[i] = o;
  }
  return out;
}

// How often the multistart loop calls its interrupt check for these starts
// (tests: the check must come between batches of starts, not only after a
// round over every start).
// [[Rcpp::export]]
int cpp_lca_check_count(Rcpp::IntegerMatrix idx, Rcpp::NumericVector val, Rcpp::IntegerVector dims,
                        Rcpp::List inits, int max_iter, double tol, int threads, int short_iter,
                        int keep) {
  const aspectr::SparseTensor X = make_tensor(idx, val, dims);
  const aspectr::SparseTensor G = X.normalized();
  std::vector<aspectr::AspectModel> models;
  for (R_xlen_t i = 0; i < inits.size(); ++i) {
    Rcpp::List s = inits[i];
    models.push_back(make_model(s["lambda"], s["factors"]));
  }
  aspectr::MultiStartControl ctl;
  ctl.max_iter = max_iter; ctl.tol = tol; ctl.threads = threads;
  ctl.short_iter = short_iter; ctl.keep = keep;
  int calls = 0;
  auto count = [&calls](int, double) { ++calls; return true; };
  aspectr::EMRule rule(1.0, &X.val, X.total());
  aspectr::multistart(rule, G, std::move(models), ctl, count);
  return calls;
}
