// R glue of plsa() under the Tsallis and L2 losses with missing cells,
// masks and weights: aspectr/solvers/plsa_weighted.h.
#include "r_adapters.h"
#include <aspectr/solvers/plsa_weighted.h>
#include <aspectr/solvers/plsa_weighted_pieces.h>
#include <aspectr/solvers/plsa_weighted_l2_pieces.h>

using aspectr_r::RCallback;
using aspectr_r::add_trace;
using aspectr_r::make_model;
using aspectr_r::make_tensor;
using aspectr_r::model_to_r;

namespace {
// The weights of a weighted fit of G (omega: the weights at its cells;
// v: one weight vector per mode; eidx: N x |E| 0-based cells of the
// deviations ev)
aspectr::PlsaWeights plsa_weights(const aspectr::SparseTensor& G, const Rcpp::NumericVector& omega, double d,
                                  const Rcpp::List& v, const Rcpp::IntegerMatrix& eidx,
                                  const Rcpp::NumericVector& ev) {
  const std::size_t N = G.order();
  if (static_cast<std::size_t>(v.size()) != N) Rcpp::stop("internal error: one weight vector per mode needed");
  if (static_cast<std::size_t>(eidx.nrow()) != N || eidx.ncol() != ev.size())
    Rcpp::stop("internal error: deviation cells of the wrong shape");
  aspectr::PlsaWeights W;
  W.w.d = d;
  for (std::size_t n = 0; n < N; ++n) W.w.v.push_back(Rcpp::as<arma::vec>(v[n]));
  W.w.idx.resize(static_cast<std::size_t>(eidx.size()));
  for (R_xlen_t s = 0; s < eidx.size(); ++s) {
    if (eidx[s] < 0) Rcpp::stop("internal error: a negative cell index");
    W.w.idx[s] = static_cast<aspectr::index_t>(eidx[s]);
  }
  W.w.delta.assign(ev.begin(), ev.end());
  W.omega = Rcpp::as<arma::vec>(omega);
  try {
    W.prepare(G.dims, G.nnz());
  } catch (const std::invalid_argument& e) {
    Rcpp::stop(std::string("internal error: ") + e.what());
  }
  return W;
}
}  // namespace

// The fit of G (idx: N x nnz 0-based cells, g: their values, the cells
// where omega x > 0; omega: the weights there) under the weights
// omega_c = prod_n v_n(i_n) (d + delta_c), delta given at the cells eidx
// (N x |E|, 0-based) as ev. lambda, factors: the start (one d_n x k matrix
// per mode). loss "tsallis" (method "em" or "squarem") or "l2"
// (free_weights: lambda only non-negative). Returns the model, the trace
// (Tsallis: J; L2: one half of the weighted sum of squares) and `mass`,
// sum omega p of the model at the end.
// [[Rcpp::export]]
Rcpp::List cpp_plsa_weighted_fit(Rcpp::IntegerMatrix idx, Rcpp::NumericVector g, Rcpp::NumericVector omega,
                                 Rcpp::IntegerVector dims, double d, Rcpp::List v, Rcpp::IntegerMatrix eidx,
                                 Rcpp::NumericVector ev, Rcpp::NumericVector lambda, Rcpp::List factors,
                                 std::string loss, double q, int max_iter, double tol, int threads, bool verbose,
                                 bool free_weights = false, std::string method = "em", double squarem_bound = 1.0) {
  const aspectr::SparseTensor G = make_tensor(idx, g, dims, true);
  aspectr::PlsaWeights W = plsa_weights(G, omega, d, v, eidx, ev);
  aspectr::AspectModel M = make_model(lambda, factors);
  bool ok = M.order() == G.order();
  for (std::size_t n = 0; ok && n < G.order(); ++n) ok = M.F[n].n_cols == G.dims[n];
  if (!ok) Rcpp::stop("internal error: the start does not match the data");
  const aspectr::Control ctl{max_iter, tol, threads};
  RCallback cb(verbose, max_iter, "plsa (" + loss + (loss != "l2" ? ", " + method : std::string()) + ", weighted)");
  aspectr::FitTrace tr;
  if (loss == "l2") {
    aspectr::WeightedPPSRule rule(W, free_weights);
    tr = aspectr::run_solver(rule, G, M, ctl, cb);
  } else if (loss == "tsallis") {
    if (method == "squarem") {
      // SQUAREM of the rule in pieces (PieceSquarem) on the data as one
      // piece, as shards run it; the documents' factor moved into the
      // piece and back
      arma::mat F0 = std::move(M.F[0]);
      aspectr::WeightedQEMPiece piece(G, W, F0, q, 0.0);
      aspectr::LocalPieces<aspectr::WeightedQEMPiece> P({&piece}, threads);
      aspectr::PieceWeightedQEM base(q);
      tr = aspectr::run_aspect_piece(base, P, F0, M, ctl, cb, true, squarem_bound);
    } else {
      aspectr::WeightedQEMRule qem(W, q);
      tr = aspectr::run_solver(qem, G, M, ctl, cb);
    }
  } else {
    Rcpp::stop("internal error: weighted pLSA takes the Tsallis and L2 losses");
  }
  Rcpp::List out = model_to_r(M);
  add_trace(out, tr);
  if (method == "squarem") out["squarem_bound"] = squarem_bound;
  out["mass"] = W.model_mass(M, threads);
  return out;
}

// The objective of a model (lambda, one d_n x k factor per mode) under the
// weights, as cpp_plsa_weighted_fit() reports it.
// [[Rcpp::export]]
double cpp_plsa_weighted_value(Rcpp::IntegerMatrix idx, Rcpp::NumericVector g, Rcpp::NumericVector omega,
                               Rcpp::IntegerVector dims, double d, Rcpp::List v, Rcpp::IntegerMatrix eidx,
                               Rcpp::NumericVector ev, Rcpp::NumericVector lambda, Rcpp::List factors,
                               std::string loss, double q) {
  const aspectr::SparseTensor G = make_tensor(idx, g, dims, true);
  aspectr::PlsaWeights W = plsa_weights(G, omega, d, v, eidx, ev);
  const aspectr::AspectModel M = make_model(lambda, factors);
  if (loss == "l2") {
    aspectr::WeightedPPSRule rule(W, false);
    return rule.loss(G, M, 1);
  }
  aspectr::WeightedQEMRule rule(W, q);
  return rule.loss(G, M, 1);
}

// ---- the weighted q-EM in pieces (solvers/plsa_weighted_pieces.h) ------
namespace {
// A piece of a weighted Tsallis fit of shards: its cells (rows counted in
// the piece, owned), its weights, its rows of the documents' factor
// (k x rows) and the piece's operations
struct WqemPiece {
  aspectr::SparseTensor G;
  aspectr::PlsaWeights W;
  arma::mat F0;
  std::unique_ptr<aspectr::WeightedQEMPiece> piece;
  std::unique_ptr<aspectr::WeightedPPSPiece> l2;  // (loss "l2")
};
}  // namespace

// A piece's state: its cells (idx: N x nnz 0-based, its rows counted in the
// piece; g: their values x / T; omega: their weights), its weights as in
// cpp_plsa_weighted_fit() (v[[1]]: its rows'), q, the global index of its
// first row (0-based); loss "l2": a piece of the weighted L2 fit
// (plsa_weighted_l2_pieces.h; g: x / T, q not read).
// [[Rcpp::export]]
SEXP cpp_wqem_piece_state(Rcpp::IntegerMatrix idx, Rcpp::NumericVector g, Rcpp::NumericVector omega,
                          Rcpp::IntegerVector dims, double d, Rcpp::List v, Rcpp::IntegerMatrix eidx,
                          Rcpp::NumericVector ev, double q, double offset, std::string loss = "tsallis") {
  std::unique_ptr<WqemPiece> s(new WqemPiece());
  s->G = make_tensor(idx, g, dims, true);
  s->G.idx.assign(s->G.view, s->G.view + s->G.index_count());
  s->G.view = nullptr;
  s->W = plsa_weights(s->G, omega, d, v, eidx, ev);
  if (loss == "l2") s->l2.reset(new aspectr::WeightedPPSPiece(s->G, s->W, s->F0));
  else s->piece.reset(new aspectr::WeightedQEMPiece(s->G, s->W, s->F0, q, offset));
  return Rcpp::XPtr<WqemPiece>(s.release(), true);
}

// A start's rows of the documents' factor (k x rows) for the piece, or
// (F0 NULL) the piece's current rows
// [[Rcpp::export]]
Rcpp::NumericMatrix cpp_wqem_piece_factor(SEXP state, SEXP F0 = R_NilValue) {
  Rcpp::XPtr<WqemPiece> s(state);
  if (!Rf_isNull(F0)) {
    arma::mat f = Rcpp::as<arma::mat>(F0);
    if (f.n_cols != s->G.dims[0]) Rcpp::stop("internal error: a start of the wrong size for its piece");
    s->F0 = f;
  }
  return Rcpp::wrap(s->F0);
}

// One request on the piece (its name and inputs: a named list of numeric
// matrices); its statistics as a named list
// [[Rcpp::export]]
Rcpp::List cpp_wqem_piece_run(SEXP state, std::string op, SEXP input, int threads) {
  Rcpp::XPtr<WqemPiece> s(state);
  aspectr::Request r(op);
  r.in = aspectr_r::stats_from_r(input).m;
  return aspectr_r::stats_to_r(s->l2 ? s->l2->run(r, threads) : s->piece->run(r, threads));
}

// The weighted Tsallis fit in pieces reached through R (RPieces): the rule
// PieceWeightedQEM in the core's driver; lambda and factors (the shared
// modes', k x d_n) start it (the pieces hold the documents' rows); method
// "squarem": extrapolated by SQUAREM (PieceSquarem) from the step bound
// squarem_bound. Returns lambda, the shared factors (k x d_n), the trace
// (and SQUAREM's final bound).
// [[Rcpp::export]]
Rcpp::List cpp_wqem_pieces_fit(SEXP fn, Rcpp::NumericVector lambda, Rcpp::List factors, double q, int max_iter,
                               double tol, int threads, SEXP hook = R_NilValue, bool want_model = false,
                               std::string method = "em", double squarem_bound = 1.0) {
  aspectr_r::RPieces P(fn);
  aspectr::AspectPieceModel M;
  M.lambda = Rcpp::as<arma::vec>(lambda);
  for (R_xlen_t n = 0; n < factors.size(); ++n) {
    M.F.push_back(Rcpp::as<arma::mat>(factors[n]));
    if (M.F.back().n_rows != M.lambda.n_elem) Rcpp::stop("internal error: a factor of the wrong size");
  }
  M.P = &P;
  const aspectr::Control ctl{max_iter, tol, threads};
  RCallback cb(false, max_iter, "plsa (tsallis, " + method + ", weighted)", hook, want_model);
  aspectr::PieceWeightedQEM qem(q);
  aspectr::FitTrace tr;
  if (method == "squarem") {
    aspectr::PieceSquarem<aspectr::PieceWeightedQEM> rule(qem);
    rule.set_step_bound(squarem_bound);
    tr = aspectr::run_solver(rule, P, M, ctl, cb);
    squarem_bound = rule.step_bound();
  } else {
    if (method != "em") Rcpp::stop("internal error: weighted q-EM in pieces, method '" + method + "'");
    tr = aspectr::run_solver(qem, P, M, ctl, cb);
  }
  Rcpp::List F(M.F.size());
  for (std::size_t n = 0; n < M.F.size(); ++n) F[n] = Rcpp::wrap(M.F[n]);
  Rcpp::List out = Rcpp::List::create(Rcpp::Named("lambda") = Rcpp::NumericVector(M.lambda.begin(), M.lambda.end()),
                                      Rcpp::Named("factors") = F);
  add_trace(out, tr);
  if (method == "squarem") out["squarem_bound"] = squarem_bound;
  return out;
}

// The weighted L2 fit in pieces reached through R (RPieces): the rule
// PieceWeightedPPS in the core's driver (plsa_weighted_l2_pieces.h);
// lambda and factors (the shared modes', k x d_n) start it (the pieces
// hold the documents' rows); v: the weights of every mode (the shared
// modes' read); free_weights: lambda only non-negative. Returns lambda,
// the shared factors (k x d_n) and the trace.
// [[Rcpp::export]]
Rcpp::List cpp_wl2_pieces_fit(SEXP fn, Rcpp::NumericVector lambda, Rcpp::List factors, Rcpp::List v,
                              bool free_weights, int max_iter, double tol, int threads, SEXP hook = R_NilValue) {
  aspectr_r::RPieces P(fn);
  aspectr::AspectPieceModel M;
  M.lambda = Rcpp::as<arma::vec>(lambda);
  for (R_xlen_t n = 0; n < factors.size(); ++n) {
    M.F.push_back(Rcpp::as<arma::mat>(factors[n]));
    if (M.F.back().n_rows != M.lambda.n_elem) Rcpp::stop("internal error: a factor of the wrong size");
  }
  std::vector<arma::vec> vv;
  for (R_xlen_t n = 0; n < v.size(); ++n) vv.push_back(Rcpp::as<arma::vec>(v[n]));
  if (vv.size() != M.F.size() + 1) Rcpp::stop("internal error: one weight vector per mode needed");
  for (std::size_t n = 1; n < vv.size(); ++n)
    if (vv[n].n_elem != M.F[n - 1].n_cols) Rcpp::stop("internal error: a mode's weights of the wrong length");
  M.P = &P;
  const aspectr::Control ctl{max_iter, tol, threads};
  RCallback cb(false, max_iter, "plsa (l2, weighted)", hook, false);
  aspectr::PieceWeightedPPS rule(vv, free_weights);
  aspectr::FitTrace tr = aspectr::run_solver(rule, P, M, ctl, cb);
  Rcpp::List F(M.F.size());
  for (std::size_t n = 0; n < M.F.size(); ++n) F[n] = Rcpp::wrap(M.F[n]);
  Rcpp::List out = Rcpp::List::create(Rcpp::Named("lambda") = Rcpp::NumericVector(M.lambda.begin(), M.lambda.end()),
                                      Rcpp::Named("factors") = F);
  add_trace(out, tr);
  return out;
}
