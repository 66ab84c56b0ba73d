// src/plsa_glue.cpp — exported entry points: convert, call the core, wrap.
// Rcpp's generated wrappers are the single exception boundary of each
// export: std::exception from the core becomes an R error, Rcpp's interrupt
// exception an R interrupt.
#include "r_adapters.h"

using namespace aspectr_r;

// [[Rcpp::export]]
Rcpp::List cpp_plsa_fit(Rcpp::IntegerMatrix idx, Rcpp::NumericVector val,
                        Rcpp::IntegerVector dims, Rcpp::NumericVector lambda,
                        Rcpp::List factors, std::string loss, double q,
                        double tempering, int max_iter, double tol, int threads,
                        bool verbose) {
  const aspectr::SparseTensor X = make_tensor(idx, val, dims);
  const aspectr::SparseTensor G = X.normalized();
  if (loss != "kl" && G.has_missing())
    Rcpp::stop("internal error: missing indices are only supported under KL");
  aspectr::AspectModel M = make_model(lambda, factors);
  aspectr::Control ctl;
  ctl.max_iter = max_iter;
  ctl.tol = tol;
  ctl.threads = threads;
  RCallback cb(verbose, max_iter, "plsa (" + loss + ")");
  aspectr::FitTrace tr;
  switch (parse_loss(loss)) {
    case aspectr::Loss::KL: {
      aspectr::EMRule rule(tempering, &X.val, X.total());
      tr = aspectr::run_solver(rule, G, M, ctl, cb);
      break;
    }
    case aspectr::Loss::Tsallis: {
      aspectr::QEMRule rule(q);
      tr = aspectr::run_solver(rule, G, M, ctl, cb);
      break;
    }
    case aspectr::Loss::L2: {
      aspectr::PPSRule rule;
      tr = aspectr::run_solver(rule, G, M, ctl, cb);
      break;
    }
  }
  const double kl = aspectr::evaluate_loss(aspectr::Loss::KL, 1.0, G, M, threads);
  Rcpp::List out = model_to_r(M);
  out["objective"] = Rcpp::NumericVector(tr.objective.begin(), tr.objective.end());
  out["initial"] = tr.initial;
  out["iterations"] = tr.iterations;
  out["converged"] = tr.converged;
  out["kl"] = kl;
  return out;
}

// [[Rcpp::export]]
double cpp_loss(Rcpp::IntegerMatrix idx, Rcpp::NumericVector val, Rcpp::IntegerVector dims,
                Rcpp::NumericVector lambda, Rcpp::List factors, std::string loss,
                double q, int threads) {
  const aspectr::SparseTensor G = make_tensor(idx, val, dims).normalized();
  const aspectr::AspectModel M = make_model(lambda, factors);
  return aspectr::evaluate_loss(parse_loss(loss), q, G, M, threads);
}

// Fold-in of documents given in compressed-row form (0-based term indices).
// V is n_terms x k. Returns n_docs x k.
// [[Rcpp::export]]
Rcpp::NumericMatrix cpp_foldin(Rcpp::NumericVector rowptr, Rcpp::IntegerVector col,
                               Rcpp::NumericVector val, Rcpp::NumericMatrix V,
                               Rcpp::NumericVector prior, std::string loss, double q,
                               int max_iter, double tol, int threads) {
  aspectr::FoldinData D;
  D.rowptr.assign(rowptr.begin(), rowptr.end());
  D.col.assign(col.begin(), col.end());
  D.val.assign(val.begin(), val.end());
  const arma::mat Vt = Rcpp::as<arma::mat>(V).t();
  const arma::vec pr = Rcpp::as<arma::vec>(prior);
  const arma::mat theta = aspectr::fold_in(D, Vt, pr, parse_loss(loss), q, max_iter, tol, threads);
  return Rcpp::wrap(arma::mat(theta.t()));
}

// [[Rcpp::export]]
Rcpp::NumericVector cpp_project_simplex(Rcpp::NumericVector b) {
  const arma::vec x = aspectr::project_simplex(Rcpp::as<arma::vec>(b));
  return Rcpp::NumericVector(x.begin(), x.end());
}

// [[Rcpp::export]]
Rcpp::NumericVector cpp_simplex_qp(Rcpp::NumericMatrix Q, Rcpp::NumericVector c) {
  arma::vec x(c.size());
  x.fill(1.0 / static_cast<double>(c.size()));
  aspectr::simplex_qp(Rcpp::as<arma::mat>(Q), Rcpp::as<arma::vec>(c), x);
  return Rcpp::NumericVector(x.begin(), x.end());
}

// Non-negative CP under the Frobenius loss (HALS or MU), unnormalized factors
// (d_n x k each) in and out.
// [[Rcpp::export]]
Rcpp::List cpp_ntf_fit(Rcpp::IntegerMatrix idx, Rcpp::NumericVector val,
                       Rcpp::IntegerVector dims, Rcpp::List factors, std::string method,
                       int max_iter, double tol, int threads, bool verbose) {
  const aspectr::SparseTensor X = make_tensor(idx, val, dims);
  Rcpp::NumericVector ones(Rcpp::as<Rcpp::NumericMatrix>(factors[0]).ncol(), 1.0);
  aspectr::AspectModel M = make_model(ones, factors);
  aspectr::Control ctl;
  ctl.max_iter = max_iter;
  ctl.tol = tol;
  ctl.threads = threads;
  RCallback cb(verbose, max_iter, "ntf (" + method + ")");
  aspectr::FitTrace tr;
  if (method == "hals") {
    aspectr::CPHALSRule rule;
    tr = aspectr::run_solver(rule, X, M, ctl, cb);
  } else if (method == "mu") {
    aspectr::CPMURule rule;
    tr = aspectr::run_solver(rule, X, M, ctl, cb);
  } else {
    Rcpp::stop("internal error: unknown method '" + method + "'");
  }
  Rcpp::List out = model_to_r(M);
  out["objective"] = Rcpp::NumericVector(tr.objective.begin(), tr.objective.end());
  out["initial"] = tr.initial;
  out["iterations"] = tr.iterations;
  out["converged"] = tr.converged;
  return out;
}
