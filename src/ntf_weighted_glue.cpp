// R glue of weighted ntf() (missing cells, masks, weights):
// aspectr/solvers/cp_weighted.h.
#include "r_adapters.h"
#include <aspectr/solvers/cp_weighted_pieces.h>

using aspectr_r::RCallback;
using aspectr_r::add_trace;
using aspectr_r::make_model;
using aspectr_r::make_tensor;
using aspectr_r::model_to_r;

namespace {
// weights d, v (one vector per mode), deviations at eidx (N x |E|, 0-based)
// as ev, prepared for dims
void set_cp_weights(aspectr::CPWeights& w, const std::vector<arma::uword>& dims, double d, const Rcpp::List& v,
                    const Rcpp::IntegerMatrix& eidx, const Rcpp::NumericVector& ev) {
  const std::size_t N = dims.size();
  if (static_cast<std::size_t>(v.size()) != N) Rcpp::stop("internal error: one weight vector per mode needed");
  w.d = d;
  w.v.clear();
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
    w.prepare(dims);
  } catch (const std::invalid_argument& e) {
    Rcpp::stop(std::string("internal error: ") + e.what());
  }
}
}  // namespace

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
  w.wx2 = wx2;
  w.klc = klc;
  w.total = total;
  set_cp_weights(w, X.dims, d, v, eidx, ev);
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
  // the rules on pieces (cp_weighted_pieces.h), the data one piece of every
  // cell that updates each mode's rows itself; the first mode's rows
  // stay in M.F[0], changed in place by the piece
  aspectr::MemoryCPCells cells(X);
  aspectr::CPWeightedPiece piece(cells, w, M.F[0].memptr(), M.rank(), X.dims[0], &X);
  aspectr::LocalPieces<aspectr::CPWeightedPiece> P({&piece}, threads);
  aspectr::CPPieceModel PM;
  PM.F.assign(std::make_move_iterator(M.F.begin() + 1), std::make_move_iterator(M.F.end()));
  PM.P = &P;
  aspectr::FitTrace tr;
  if (!kl) {
    aspectr::CPWeightedPiecesFrobenius rule(w, wm, 1e-16, true, gram);
    tr = aspectr::run_solver(rule, P, PM, ctl, cb);
  } else if (wm == CPWeightedMethod::CD) {
    aspectr::CPWeightedPiecesCD rule(w, true);
    tr = aspectr::run_solver(rule, P, PM, ctl, cb);
  } else {
    aspectr::CPWeightedPiecesMU rule(w);
    tr = aspectr::run_solver(rule, P, PM, ctl, cb);
  }
  for (std::size_t n = 0; n < PM.F.size(); ++n) M.F[n + 1] = std::move(PM.F[n]);
  Rcpp::List out = model_to_r(M);
  add_trace(out, tr);
  return out;
}

// ---- weighted KL multiplicative updates on shards (solvers/cp_weighted_pieces.h)

namespace {
// A shard of a weighted fit: its cells of X~ / s (first index local) and
// its weights
struct NtfWeightedShard {
  aspectr::SparseTensor X;
  aspectr::CPWeights w;
};
}  // namespace

// A shard's state: its weighted cells (idx: N x nnz 0-based, first index
// local; val: x~ / s > 0), or with idx NULL none (read from a file for each
// request: cpp_ntf_wpiece_run()'s `file`), and its part of the weights
// (dims: the shard's).
// [[Rcpp::export]]
SEXP cpp_ntf_wshard_state(SEXP idx, SEXP val, Rcpp::IntegerVector dims, double d, Rcpp::List v,
                          Rcpp::IntegerMatrix eidx, Rcpp::NumericVector ev) {
  auto* S = new NtfWeightedShard();
  Rcpp::XPtr<NtfWeightedShard> out(S, true);
  if (Rf_isNull(idx)) {
    S->X.dims.assign(dims.begin(), dims.end());
  } else {
    S->X = make_tensor(Rcpp::IntegerMatrix(idx), Rcpp::NumericVector(val), dims, true);
    // (the indices owned: make_tensor() reads R's, which the state outlives)
    S->X.idx.assign(S->X.view, S->X.view + S->X.index_count());
    S->X.view = nullptr;
  }
  set_cp_weights(S->w, S->X.dims, d, v, eidx, ev);
  return out;
}

// A request of the weighted fit (CPWeightedPiece) on one shard: its cells
// those of the state or, with `file` (list(buffer, path, scale, chunk)),
// those of a .shard file of x~ read a chunk at a time; F0: its rows of the
// first factor (k x rows), updated in place.
// [[Rcpp::export]]
Rcpp::List cpp_ntf_wpiece_run(SEXP state, SEXP file, SEXP F0, std::string op, SEXP input, int threads) {
  if (!Rf_isReal(F0) || !Rf_isMatrix(F0)) Rcpp::stop("internal error: the first factor must be a matrix of doubles");
  Rcpp::XPtr<NtfWeightedShard> S(state);
  if (static_cast<arma::uword>(Rf_ncols(F0)) != S->X.dims[0])
    Rcpp::stop("internal error: the first factor does not match the shard");
  aspectr::Request r(op);
  r.in = aspectr_r::stats_from_r(input).m;
  std::unique_ptr<aspectr::CPCells> cells;
  if (Rf_isNull(file)) {
    cells.reset(new aspectr::MemoryCPCells(S->X));
  } else {
    cells = aspectr_r::file_cp_cells(file, S->X.dims);
  }
  aspectr::CPWeightedPiece piece(*cells, S->w, REAL(F0), Rf_nrows(F0), Rf_ncols(F0));
  return aspectr_r::stats_to_r(piece.run(r, threads));
}

// [[Rcpp::export]]
void cpp_ntf_wshard_release(SEXP state) {
  Rcpp::XPtr<NtfWeightedShard> S(state);
  S.release();
}

// The weighted fit on pieces (fn(op, input): the pieces' added
// statistics): KL multiplicative updates (method "mu") or coordinate
// descent ("cd"; total = sum x~ on x / s), or under loss = "frobenius" the
// HALS sweeps or multiplicative updates (method); shared, the start of
// modes 2 .. N (d_n x k); the weights of the whole data d, v, klc = sum x~
// (log x - 1) and wx2 = sum omega x^2 (on x / s). Returns the shared
// factors (d_n x k) and the trace (Frobenius: the sum of squares, not
// halved).
// [[Rcpp::export]]
Rcpp::List cpp_ntf_weighted_pieces_fit(SEXP fn, Rcpp::List shared, double d, Rcpp::List v, double klc, int max_iter,
                                       double tol, int threads, SEXP hook = R_NilValue, bool want_model = false,
                                       std::string loss = "kl", std::string method = "mu", double wx2 = 0.0,
                                       double total = 0.0) {
  aspectr::CPWeights w;
  w.d = d;
  w.klc = klc;
  w.wx2 = wx2;
  w.total = total;
  for (R_xlen_t n = 0; n < v.size(); ++n) w.v.push_back(Rcpp::as<arma::vec>(v[n]));
  if (static_cast<std::size_t>(shared.size()) + 1 != w.v.size())
    Rcpp::stop("internal error: one weight vector per mode needed");
  aspectr_r::RPieces P(fn);
  aspectr::CPPieceModel M;
  for (R_xlen_t n = 0; n < shared.size(); ++n) {
    const Rcpp::NumericMatrix U(shared[n]);
    if (static_cast<arma::uword>(U.nrow()) != w.v[n + 1].n_elem) Rcpp::stop("internal error: the start does not match the data");
    M.F.push_back(arma::mat(const_cast<double*>(U.begin()), U.nrow(), U.ncol(), false, true).t());
  }
  M.P = &P;
  aspectr::Control ctl;
  ctl.max_iter = max_iter;
  ctl.tol = tol;
  ctl.threads = threads;
  RCallback cb(false, max_iter, "ntf (" + loss + ", " + method + ", weighted, sharded)", hook, want_model);
  aspectr::FitTrace tr;
  if (loss == "kl") {
    if (method == "cd") {
      aspectr::CPWeightedPiecesCD rule(w);
      tr = aspectr::run_solver(rule, P, M, ctl, cb);
    } else {
      if (method != "mu") Rcpp::stop("internal error: weighted ntf() of shards, method '" + method + "'");
      aspectr::CPWeightedPiecesMU rule(w);
      tr = aspectr::run_solver(rule, P, M, ctl, cb);
    }
  } else {
    if (loss != "frobenius" || (method != "hals" && method != "mu"))
      Rcpp::stop("internal error: weighted ntf() of shards, loss '" + loss + "', method '" + method + "'");
    aspectr::CPWeightedPiecesFrobenius rule(w, method == "hals" ? aspectr::CPWeightedMethod::HALS
                                                                 : aspectr::CPWeightedMethod::MU);
    tr = aspectr::run_solver(rule, P, M, ctl, cb);
  }
  Rcpp::List f(M.F.size());
  for (std::size_t n = 0; n < M.F.size(); ++n) f[n] = Rcpp::wrap(arma::mat(M.F[n].t()));
  Rcpp::List out = Rcpp::List::create(Rcpp::Named("shared") = f);
  add_trace(out, tr);
  return out;
}
