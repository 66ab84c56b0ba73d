// R glue of ntf()'s Frobenius updates (HALS, multiplicative) on shards:
// aspectr/solvers/cp_pieces.h.
#include "r_adapters.h"
#include <aspectr/solvers/cp_pieces.h>
#include <aspectr/solvers/cd_pieces.h>

using aspectr_r::RCallback;
using aspectr_r::add_trace;
using aspectr_r::make_tensor;

namespace {
// A shard's cells for a CP piece: kept in memory (`state`, its tensor), a
// .shard file read a chunk at a time (`file`, see file_cp_cells()), or
// none (a request that does not read them: `none`, of the shard's size)
std::unique_ptr<aspectr::CPCells> piece_cells(SEXP state, SEXP file, const std::vector<arma::uword>& d,
                                              aspectr::SparseTensor& none) {
  if (Rf_isNull(file) && Rf_isNull(state)) {
    none.dims = d;
    return std::unique_ptr<aspectr::CPCells>(new aspectr::MemoryCPCells(none));
  }
  if (Rf_isNull(file)) {
    Rcpp::XPtr<aspectr::SparseTensor> S(state);
    if (S->dims != d) Rcpp::stop("internal error: the shard's cells do not match its size");
    return std::unique_ptr<aspectr::CPCells>(new aspectr::MemoryCPCells(*S));
  }
  return aspectr_r::file_cp_cells(file, d);
}

// The shards of a KL coordinate descent in this process (list(shards,
// fail): each shard list(state, file, dims, F0, aux, kv), as
// cpp_ntf_kpiece_run() takes them; fail(i, why) raises shard i's error in
// R): each request runs on them, their statistics added in their order as
// R's shard_add() adds them (the same sums, bit for bit); "gather" joins
// their rows of the first factor. With threads and every shard's cells in
// memory, the shards answer at once, one a thread: a piece's request is
// single-threaded and touches only its own rows, cells and kept values,
// so the sums are those of one shard after another (a file's shards are
// read one after another, through the store's buffer).
class KCDStorePieces : public aspectr::Pieces {
 public:
  KCDStorePieces(SEXP local, int threads) : threads_(threads) {
    Rcpp::List loc(local);
    fail_ = SEXP(loc["fail"]);
    Rcpp::List shards = loc["shards"];
    for (R_xlen_t i = 0; i < shards.size(); ++i) {
      Rcpp::List s(shards[i]);
      const Rcpp::IntegerVector dims = s["dims"];
      std::vector<arma::uword> d(dims.begin(), dims.end());
      auto get = [&](const char* name) -> SEXP { return s.containsElementNamed(name) ? SEXP(s[name]) : R_NilValue; };
      SEXP F0 = get("F0"), aux = get("aux"), kv = get("kv"), state = get("state"), file = get("file");
      if (!Rf_isReal(F0) || !Rf_isMatrix(F0) || d.size() < 2 || static_cast<arma::uword>(Rf_ncols(F0)) != d[0] ||
          !Rf_isReal(aux) || !Rf_isMatrix(aux) || Rf_nrows(aux) != Rf_nrows(F0) || Rf_ncols(aux) != Rf_ncols(F0) ||
          (!Rf_isNull(kv) && (!Rf_isReal(kv) || !Rf_isNull(file))) || (Rf_isNull(state) && Rf_isNull(file)))
        Rcpp::stop("internal error: a shard of a coordinate descent in this process does not match its rows");
      std::string why;
      try {
        cells_.push_back(piece_cells(state, file, d, none_));
      } catch (const std::exception& e) {
        why = e.what();
      }
      if (!why.empty()) aspectr_r::store_fail(fail_, static_cast<std::size_t>(i), why);
      if (!Rf_isNull(file)) in_memory_ = false;
      pieces_.emplace_back(new aspectr::KLCDTensorPiece(*cells_.back(), d, REAL(F0), REAL(aux), Rf_nrows(F0),
                                                        Rf_isNull(kv) ? nullptr : REAL(kv),
                                                        Rf_isNull(kv) ? 0 : static_cast<std::size_t>(XLENGTH(kv))));
    }
  }
  aspectr::Stats map(const aspectr::Request& r) const override {
    // (a gather's rows of the first factor, F0, joined; every shard's cells
    // in memory: the shards at once on the threads)
    return aspectr_r::store_map(pieces_, r, threads_, fail_, r.op == "gather" ? "F0" : nullptr, in_memory_);
  }

 private:
  bool in_memory_ = true;  // every shard's cells in memory (none read from a file)
  int threads_;
  SEXP fail_ = R_NilValue;
  aspectr::SparseTensor none_;
  std::vector<std::unique_ptr<aspectr::CPCells>> cells_;
  std::vector<std::unique_ptr<aspectr::KLCDTensorPiece>> pieces_;
};
}  // namespace

std::unique_ptr<aspectr::Pieces> aspectr_r::kcd_store_pieces(SEXP local, int threads) {
  return std::unique_ptr<aspectr::Pieces>(new KCDStorePieces(local, threads));
}

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
// updated in place; aux: a matrix of F0's size the piece keeps its own
// numbers in between requests (plsa()'s L2 fit), or NULL.
// [[Rcpp::export]]
Rcpp::List cpp_ntf_fpiece_run(SEXP state, SEXP file, Rcpp::IntegerVector dims, SEXP F0, std::string op, SEXP input,
                              int threads, SEXP aux = R_NilValue) {
  if (!Rf_isReal(F0) || !Rf_isMatrix(F0)) Rcpp::stop("internal error: the first factor must be a matrix of doubles");
  std::vector<arma::uword> d(dims.begin(), dims.end());
  if (d.empty() || static_cast<arma::uword>(Rf_ncols(F0)) != d[0])
    Rcpp::stop("internal error: the first factor does not match the shard");
  if (!Rf_isNull(aux) && (!Rf_isReal(aux) || !Rf_isMatrix(aux) || Rf_nrows(aux) != Rf_nrows(F0) ||
                          Rf_ncols(aux) != Rf_ncols(F0)))
    Rcpp::stop("internal error: the piece's own numbers do not match its rows");
  aspectr::Request r(op);
  r.in = aspectr_r::stats_from_r(input).m;
  aspectr::SparseTensor none;  // (a request without the cells: neither given)
  std::unique_ptr<aspectr::CPCells> cells = piece_cells(state, file, d, none);
  try {
    aspectr::CPFrobPiece piece(*cells, d, REAL(F0), Rf_nrows(F0), Rf_ncols(F0), Rf_isNull(aux) ? nullptr : REAL(aux));
    return aspectr_r::stats_to_r(piece.run(r, threads));
  } catch (const std::logic_error& e) {
    Rcpp::stop(std::string("internal error: ") + e.what());
  }
}

// A request of KL coordinate descent of N-way data (KLCDTensorPiece,
// solvers/cd_pieces.h) on one shard: its cells as for cpp_ntf_fpiece_run()
// (values divided by the data's total), F0 its rows of the first factor (k
// x rows) and aux a matrix of F0's size the piece keeps the step's start
// in, both changed in place; v: NULL, or (a shard kept in memory) a vector
// of doubles, one per cell, the piece keeps the model's values at its
// cells in between the passes of a mode (changed in place).
// [[Rcpp::export]]
Rcpp::List cpp_ntf_kpiece_run(SEXP state, SEXP file, Rcpp::IntegerVector dims, SEXP F0, std::string op, SEXP input,
                              int threads, SEXP aux, SEXP v = R_NilValue) {
  if (!Rf_isReal(F0) || !Rf_isMatrix(F0)) Rcpp::stop("internal error: the first factor must be a matrix of doubles");
  std::vector<arma::uword> d(dims.begin(), dims.end());
  if (d.size() < 2 || static_cast<arma::uword>(Rf_ncols(F0)) != d[0])
    Rcpp::stop("internal error: the first factor does not match the shard");
  if (!Rf_isReal(aux) || !Rf_isMatrix(aux) || Rf_nrows(aux) != Rf_nrows(F0) || Rf_ncols(aux) != Rf_ncols(F0))
    Rcpp::stop("internal error: the piece's own numbers do not match its rows");
  aspectr::Request r(op);
  r.in = aspectr_r::stats_from_r(input).m;
  aspectr::SparseTensor none;  // (a request without the cells: neither given)
  std::unique_ptr<aspectr::CPCells> cells = piece_cells(state, file, d, none);
  try {
    if (!Rf_isNull(v) && (!Rf_isReal(v) || !Rf_isNull(file)))
      Rcpp::stop("internal error: the cells' values kept must be doubles, of cells kept in memory");
    aspectr::KLCDTensorPiece piece(*cells, d, REAL(F0), REAL(aux), Rf_nrows(F0), Rf_isNull(v) ? nullptr : REAL(v),
                                   Rf_isNull(v) ? 0 : static_cast<std::size_t>(XLENGTH(v)));
    return aspectr_r::stats_to_r(piece.run(r, threads));
  } catch (const std::logic_error& e) {
    Rcpp::stop(std::string("internal error: ") + e.what());
  }
}

// plsa()'s L2 fit on pieces (PPSPiecesRule; fn as below): lambda and
// shared, the start's weights and modes 2 .. N (d_n x k); free_weights:
// normalize = FALSE. Returns lambda, the shared factors (d_n x k), kl (the
// final model's sum of g log(g / p)) and the trace (not halved).
// [[Rcpp::export]]
Rcpp::List cpp_pps_pieces_fit(SEXP fn, Rcpp::NumericVector lambda, Rcpp::List shared, bool free_weights, int max_iter,
                              double tol, int threads, SEXP hook = R_NilValue, bool want_model = false) {
  aspectr_r::RPieces P(fn);
  aspectr::PPSPieceModel M;
  M.lambda = arma::vec(lambda.begin(), lambda.size());
  for (R_xlen_t n = 0; n < shared.size(); ++n) {
    const Rcpp::NumericMatrix U(shared[n]);
    M.F.push_back(arma::mat(const_cast<double*>(U.begin()), U.nrow(), U.ncol(), false, true).t());
    if (M.F[n].n_rows != M.lambda.n_elem) Rcpp::stop("internal error: the start's factors differ in rank");
  }
  if (M.F.empty()) Rcpp::stop("internal error: an aspect model needs at least 2 modes");
  M.P = &P;
  aspectr::Control ctl;
  ctl.max_iter = max_iter;
  ctl.tol = tol;
  ctl.threads = threads;
  RCallback cb(false, max_iter, "plsa (l2, sharded)", hook, want_model);
  aspectr::PPSPiecesRule rule(free_weights);
  const aspectr::FitTrace tr = aspectr::run_solver(rule, P, M, ctl, cb);
  const double kl = P.map(M.request("pps_kl").view("lambda", M.lambda)).num("kl");
  Rcpp::List f(M.F.size());
  for (std::size_t n = 0; n < M.F.size(); ++n) f[n] = Rcpp::wrap(arma::mat(M.F[n].t()));
  Rcpp::List out = Rcpp::List::create(Rcpp::Named("lambda") = Rcpp::wrap(M.lambda), Rcpp::Named("shared") = f,
                                      Rcpp::Named("kl") = kl);
  add_trace(out, tr);
  return out;
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
