// R glue of weighted ntf() (missing cells, masks, weights):
// aspectr/solvers/cp_weighted.h.
#include "r_adapters.h"
#include <aspectr/solvers/cp_weighted.h>

using aspectr_r::RCallback;
using aspectr_r::add_trace;
using aspectr_r::make_model;
using aspectr_r::make_tensor;
using aspectr_r::model_to_r;

// The fit of X~ = omega o X (idx: N x nnz 0-based indices, val: x~ > 0)
// under the weights omega_c = prod_n v_n(i_n) (d + delta_c), delta given at
// the cells eidx (N x |E|, 0-based) as ev. wx2 = sum omega x^2, klc = sum
// x~ (log x - 1), total = sum x~ (all on the data as given). factors: the
// start, one d_n x k matrix per mode. Returns the factors and the trace
// (Frobenius: the sum of squares, not halved).
// [[Rcpp::export]]
Rcpp::List cpp_ntf_weighted_fit(Rcpp::IntegerMatrix idx, Rcpp::NumericVector val, Rcpp::IntegerVector dims,
                                Rcpp::List factors, std::string loss, std::string method, double d,
                                Rcpp::List v, Rcpp::IntegerMatrix eidx, Rcpp::NumericVector ev, double wx2,
                                double klc, double total, int max_iter, double tol, int threads, bool verbose,
                                SEXP hook = R_NilValue, bool want_model = false) {
  using aspectr::CPWeightedMethod;
  const aspectr::SparseTensor X = make_tensor(idx, val, dims, false);
  const std::size_t N = X.order();
  if (static_cast<std::size_t>(factors.size()) != N || static_cast<std::size_t>(v.size()) != N)
    Rcpp::stop("internal error: one factor and one weight vector per mode needed");
  const bool kl = loss == "kl";
  if (!kl && loss != "frobenius") Rcpp::stop("internal error: weighted ntf() loss '" + loss + "'");
  // "<method>:gram" (an internal check, Frobenius): each row's Gram matrix
  // formed, the rule's earlier form
  bool gram = false;
  const std::string::size_type colon = method.find(':');
  if (colon != std::string::npos) {
    if (method.substr(colon) != ":gram" || kl) Rcpp::stop("internal error: weighted ntf() method '" + method + "'");
    gram = true;
    method = method.substr(0, colon);
  }
  CPWeightedMethod wm;
  if (method == "hals" && !kl) wm = CPWeightedMethod::HALS;
  else if (method == "mu") wm = CPWeightedMethod::MU;
  else if (method == "cd" && kl) wm = CPWeightedMethod::CD;
  else Rcpp::stop("internal error: weighted ntf() method '" + method + "' for loss '" + loss + "'");
  aspectr::CPWeights w;
  w.d = d;
  w.wx2 = wx2;
  w.klc = klc;
  w.total = total;
  for (std::size_t n = 0; n < N; ++n) w.v.push_back(Rcpp::as<arma::vec>(v[n]));
  if (static_cast<std::size_t>(eidx.nrow()) != N || eidx.ncol() != ev.size())
    Rcpp::stop("internal error: deviation cells of the wrong shape");
  w.idx.resize(static_cast<std::size_t>(eidx.size()));
  for (R_xlen_t s = 0; s < eidx.size(); ++s) {
    if (eidx[s] < 0) Rcpp::stop("internal error: a negative cell index");
    w.idx[s] = static_cast<aspectr::index_t>(eidx[s]);
  }
  w.delta.assign(ev.begin(), ev.end());
  try {
    w.prepare(X.dims);
  } catch (const std::invalid_argument& e) {
    Rcpp::stop(std::string("internal error: ") + e.what());
  }
  Rcpp::NumericVector ones(Rcpp::as<Rcpp::NumericMatrix>(factors[0]).ncol(), 1.0);
  aspectr::AspectModel M = make_model(ones, factors);
  for (std::size_t n = 0; n < N; ++n)
    if (M.F[n].n_cols != X.dims[n] || M.F[n].n_rows != M.rank())
      Rcpp::stop("internal error: the start does not match the data");
  aspectr::Control ctl;
  ctl.max_iter = max_iter;
  ctl.tol = tol;
  ctl.threads = threads;
  RCallback cb(verbose, max_iter, "ntf (" + loss + ", " + method + ", weighted)", hook, want_model);
  aspectr::CPWeightedRule rule(kl, wm, w, 1e-16, gram);
  const aspectr::FitTrace tr = aspectr::run_solver(rule, X, M, ctl, cb);
  Rcpp::List out = model_to_r(M);
  add_trace(out, tr);
  return out;
}
