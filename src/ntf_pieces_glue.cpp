// R glue of ntf()'s Frobenius updates (HALS, multiplicative) on shards:
// aspectr/solvers/cp_pieces.h.
#include "r_adapters.h"
#include <aspectr/solvers/cp_pieces.h>

using aspectr_r::RCallback;
using aspectr_r::add_trace;
using aspectr_r::make_tensor;

// A shard's cells for the Frobenius fit (idx: N x nnz 0-based, first index
// local; val: its values), divided by the fit's scale s (a power of 2:
// exact), owned by the state.
// [[Rcpp::export]]
SEXP cpp_ntf_fshard_state(Rcpp::IntegerMatrix idx, Rcpp::NumericVector val, Rcpp::IntegerVector dims, double s) {
  if (!(s > 0.0) || !std::isfinite(s)) Rcpp::stop("internal error: the fit's scale must be positive");
  auto* X = new aspectr::SparseTensor(make_tensor(idx, val, dims, true));
  Rcpp::XPtr<aspectr::SparseTensor> out(X, true);
  // (the indices owned: make_tensor() reads R's, which the state outlives)
  X->idx.assign(X->view, X->view + X->index_count());
  X->view = nullptr;
  X->val /= s;
  return out;
}

// [[Rcpp::export]]
void cpp_ntf_fshard_release(SEXP state) {
  Rcpp::XPtr<aspectr::SparseTensor> S(state);
  S.release();
}

// A request of the Frobenius fit (CPFrobPiece) on one shard: its cells
// those of the state or, with `file` (list(buffer, path, scale, chunk)),
// those of a .shard file read a chunk at a time (its values divided by
// `scale`); dims: the shard's; F0: its rows of the first factor (k x rows),
// updated in place.
// [[Rcpp::export]]
Rcpp::List cpp_ntf_fpiece_run(SEXP state, SEXP file, Rcpp::IntegerVector dims, SEXP F0, std::string op, SEXP input,
                              int threads) {
  if (!Rf_isReal(F0) || !Rf_isMatrix(F0)) Rcpp::stop("internal error: the first factor must be a matrix of doubles");
  std::vector<arma::uword> d(dims.begin(), dims.end());
  if (d.empty() || static_cast<arma::uword>(Rf_ncols(F0)) != d[0])
    Rcpp::stop("internal error: the first factor does not match the shard");
  aspectr::Request r(op);
  r.in = aspectr_r::stats_from_r(input).m;
  std::unique_ptr<aspectr::CPCells> cells;
  if (Rf_isNull(file)) {
    Rcpp::XPtr<aspectr::SparseTensor> S(state);
    if (S->dims != d) Rcpp::stop("internal error: the shard's cells do not match its size");
    cells.reset(new aspectr::MemoryCPCells(*S));
  } else {
    cells = aspectr_r::file_cp_cells(file, d);
  }
  try {
    aspectr::CPFrobPiece piece(*cells, d, REAL(F0), Rf_nrows(F0), Rf_ncols(F0));
    return aspectr_r::stats_to_r(piece.run(r, threads));
  } catch (const std::logic_error& e) {
    Rcpp::stop(std::string("internal error: ") + e.what());
  }
}

// ntf()'s Frobenius updates on pieces (fn(op, input): the pieces' added
// statistics): shared, the start of modes 2 .. N (d_n x k); method "hals"
// or "mu". Returns the shared factors (d_n x k; the first mode's rows left
// balanced in the pieces) and the trace (sums of squares, not halved).
// [[Rcpp::export]]
Rcpp::List cpp_ntf_pieces_fit(SEXP fn, Rcpp::List shared, std::string method, int max_iter, double tol, int threads,
                              SEXP hook = R_NilValue, bool want_model = false) {
  aspectr::CPFrobMethod m;
  if (method == "hals") m = aspectr::CPFrobMethod::HALS;
  else if (method == "mu") m = aspectr::CPFrobMethod::MU;
  else Rcpp::stop("internal error: unknown method '" + method + "'");
  if (shared.size() < 1) Rcpp::stop("internal error: a CP model needs at least 2 modes");
  aspectr_r::RPieces P(fn);
  aspectr::CPFrobPieceModel M;
  for (R_xlen_t n = 0; n < shared.size(); ++n) {
    const Rcpp::NumericMatrix U(shared[n]);
    M.F.push_back(arma::mat(const_cast<double*>(U.begin()), U.nrow(), U.ncol(), false, true).t());
    if (M.F[n].n_rows != M.F[0].n_rows) Rcpp::stop("internal error: the start's factors differ in rank");
  }
  M.P = &P;
  aspectr::Control ctl;
  ctl.max_iter = max_iter;
  ctl.tol = tol;
  ctl.threads = threads;
  RCallback cb(false, max_iter, "ntf (frobenius, " + method + ", sharded)", hook, want_model);
  aspectr::CPFrobPiecesRule rule(m);
  const aspectr::FitTrace tr = aspectr::run_solver(rule, P, M, ctl, cb);
  // the last balancing applied to the pieces' rows
  if (!M.scale0.is_empty()) M.apply_pending();
  Rcpp::List f(M.F.size());
  for (std::size_t n = 0; n < M.F.size(); ++n) f[n] = Rcpp::wrap(arma::mat(M.F[n].t()));
  Rcpp::List out = Rcpp::List::create(Rcpp::Named("shared") = f);
  add_trace(out, tr);
  return out;
}
