// R glue of plsa() under the Tsallis and L2 losses with missing cells,
// masks and weights: aspectr/solvers/plsa_weighted.h.
#include "r_adapters.h"
#include <aspectr/solvers/plsa_weighted.h>

using aspectr_r::RCallback;
using aspectr_r::add_trace;
using aspectr_r::make_model;
using aspectr_r::make_tensor;
using aspectr_r::model_to_r;

namespace {
// The weights of a weighted fit of G (omega: the weights at its cells)
aspectr::PlsaWeights plsa_weights(const aspectr::SparseTensor& G, const Rcpp::NumericVector& omega, double d,
                                  const Rcpp::NumericVector& r, const Rcpp::NumericVector& c,
                                  const Rcpp::IntegerVector& ei, const Rcpp::IntegerVector& ej,
                                  const Rcpp::NumericVector& ev) {
  aspectr::PlsaWeights W;
  W.d = d;
  W.r = Rcpp::as<arma::vec>(r);
  W.c = Rcpp::as<arma::vec>(c);
  W.ei.assign(ei.begin(), ei.end());
  W.ej.assign(ej.begin(), ej.end());
  W.delta.assign(ev.begin(), ev.end());
  W.omega = Rcpp::as<arma::vec>(omega);
  W.prepare(G.dims[0], G.dims[1], G.nnz());
  return W;
}
}  // namespace

// The fit of G (idx: 2 x nnz 0-based cells, g: their values, the cells
// where omega x > 0; omega: the weights there) under the weights
// omega_ij = r_i c_j (d + delta_ij), delta given at the cells (ei, ej),
// 0-based. lambda, factors: the start (factors m x k and n x k). loss
// "tsallis" (method "em" or "squarem") or "l2" (free_weights: lambda only
// non-negative). Returns the model and the trace (Tsallis: J; L2: one half
// of the weighted sum of squares).
// [[Rcpp::export]]
Rcpp::List cpp_plsa_weighted_fit(Rcpp::IntegerMatrix idx, Rcpp::NumericVector g, Rcpp::NumericVector omega,
                                 Rcpp::IntegerVector dims, double d, Rcpp::NumericVector r, Rcpp::NumericVector c,
                                 Rcpp::IntegerVector ei, Rcpp::IntegerVector ej, Rcpp::NumericVector ev,
                                 Rcpp::NumericVector lambda, Rcpp::List factors, std::string loss, double q,
                                 int max_iter, double tol, int threads, bool verbose, bool free_weights = false,
                                 std::string method = "em", double squarem_bound = 1.0) {
  if (dims.size() != 2) Rcpp::stop("internal error: weighted pLSA takes a matrix");
  const aspectr::SparseTensor G = make_tensor(idx, g, dims, true);
  aspectr::PlsaWeights W = plsa_weights(G, omega, d, r, c, ei, ej, ev);
  aspectr::AspectModel M = make_model(lambda, factors);
  if (M.order() != 2 || M.F[0].n_cols != G.dims[0] || M.F[1].n_cols != G.dims[1])
    Rcpp::stop("internal error: the start does not match the data");
  const aspectr::Control ctl{max_iter, tol, threads};
  RCallback cb(verbose, max_iter, "plsa (" + loss + (loss != "l2" ? ", " + method : std::string()) + ", weighted)");
  aspectr::FitTrace tr;
  if (loss == "l2") {
    aspectr::WeightedPPSRule rule(W, free_weights);
    tr = aspectr::run_solver(rule, G, M, ctl, cb);
  } else if (loss == "tsallis") {
    aspectr::WeightedQEMRule qem(W, q);
    if (method == "squarem") {
      aspectr::SquaremRule<aspectr::WeightedQEMRule> rule(qem);
      rule.set_step_bound(squarem_bound);
      tr = aspectr::run_solver(rule, G, M, ctl, cb);
      squarem_bound = rule.step_bound();
    } else {
      tr = aspectr::run_solver(qem, G, M, ctl, cb);
    }
  } else {
    Rcpp::stop("internal error: weighted pLSA takes the Tsallis and L2 losses");
  }
  Rcpp::List out = model_to_r(M);
  add_trace(out, tr);
  if (method == "squarem") out["squarem_bound"] = squarem_bound;
  return out;
}

// The objective of a model (lambda, factors m x k and n x k) under the
// weights, as cpp_plsa_weighted_fit() reports it.
// [[Rcpp::export]]
double cpp_plsa_weighted_value(Rcpp::IntegerMatrix idx, Rcpp::NumericVector g, Rcpp::NumericVector omega,
                               Rcpp::IntegerVector dims, double d, Rcpp::NumericVector r, Rcpp::NumericVector c,
                               Rcpp::IntegerVector ei, Rcpp::IntegerVector ej, Rcpp::NumericVector ev,
                               Rcpp::NumericVector lambda, Rcpp::List factors, std::string loss, double q) {
  const aspectr::SparseTensor G = make_tensor(idx, g, dims, true);
  aspectr::PlsaWeights W = plsa_weights(G, omega, d, r, c, ei, ej, ev);
  const aspectr::AspectModel M = make_model(lambda, factors);
  if (loss == "l2") {
    aspectr::WeightedPPSRule rule(W, false);
    return rule.loss(G, M, 1);
  }
  aspectr::WeightedQEMRule rule(W, q);
  return rule.loss(G, M, 1);
}
