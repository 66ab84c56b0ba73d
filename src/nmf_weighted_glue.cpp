// R glue of weighted nmf() (missing cells, masks, weights): aspectr/nmf/weighted.h.
#include "r_adapters.h"
#include <aspectr/nmf/weighted.h>

bool cpp_nmf_data_alive(SEXP data);
using aspectr_r::RCallback;
using aspectr_r::add_trace;

namespace {
// the start (W0 m x k, H0 k x n), the penalties and the controls of a fit
struct FitSetup {
  aspectr::nmf::Model M;
  aspectr::nmf::Penalty pen;
  aspectr::Control ctl;
  FitSetup(const Rcpp::NumericMatrix& W0, const Rcpp::NumericMatrix& H0, const Rcpp::NumericVector& L1,
           const Rcpp::NumericVector& L2, int max_iter, double tol, int threads) {
    M.Wt = Rcpp::as<arma::mat>(W0).t();
    M.H = Rcpp::as<arma::mat>(H0);
    pen = aspectr_r::nmf_penalty(L1, L2);
    ctl = aspectr_r::fit_control(max_iter, tol, threads);
  }
};

// A weighted fit's method for its loss
aspectr::nmf::WeightedMethod weighted_method(const std::string& loss, const std::string& method) {
  using aspectr::nmf::WeightedMethod;
  const bool kl = loss == "kl";
  if (!kl && loss != "frobenius") Rcpp::stop("internal error: weighted nmf() loss '" + loss + "'");
  if (method == "hals" && !kl) return WeightedMethod::HALS;
  if (method == "anls" && !kl) return WeightedMethod::ANLS;
  if (method == "mu") return WeightedMethod::MU;
  if (method == "cd" && kl) return WeightedMethod::CD;
  Rcpp::stop("internal error: weighted nmf() method '" + method + "' for loss '" + loss + "'");
}

// The weights r (m), c (n), base d and deviations ev at the cells (ei, ej)
// (0-based) of an m x n matrix
aspectr::nmf::CellWeights cell_weights(int m, int n, double d, const Rcpp::NumericVector& r,
                                       const Rcpp::NumericVector& c, const Rcpp::IntegerVector& ei,
                                       const Rcpp::IntegerVector& ej, const Rcpp::NumericVector& ev) {
  if (r.size() != m || c.size() != n || ei.size() != ej.size() || ei.size() != ev.size())
    Rcpp::stop("internal error: weights of the wrong size");
  aspectr::nmf::CellWeights w;
  w.d = d;
  w.r = Rcpp::as<arma::vec>(r);
  w.c = Rcpp::as<arma::vec>(c);
  std::vector<arma::uword> I(ei.size()), J(ej.size());
  for (R_xlen_t s = 0; s < ei.size(); ++s) {
    if (ei[s] < 0 || ej[s] < 0) Rcpp::stop("internal error: a negative cell index");
    I[s] = static_cast<arma::uword>(ei[s]);
    J[s] = static_cast<arma::uword>(ej[s]);
  }
  w.set_cells(m, n, I, J, std::vector<double>(ev.begin(), ev.end()));
  return w;
}
}  // namespace

// The fit of X~ = omega o X (cpp_nmf_data()'s data, m x n) under the
// weights omega_ij = r_i c_j (d + delta_ij), delta given at the cells
// (ei, ej) (0-based) as ev. wx2 = sum omega x^2, klc = sum x~ (log x - 1),
// total = sum x~. W0 m x k, H0 k x n. Returns W, H, the trace and the
// divergence (the loss without penalties) of the result.
// [[Rcpp::export]]
Rcpp::List cpp_nmf_weighted_fit(SEXP data, Rcpp::NumericMatrix W0, Rcpp::NumericMatrix H0, std::string loss,
                                std::string method, double d, Rcpp::NumericVector r, Rcpp::NumericVector c,
                                Rcpp::IntegerVector ei, Rcpp::IntegerVector ej, Rcpp::NumericVector ev,
                                double wx2, double klc, double total, Rcpp::NumericVector L1,
                                Rcpp::NumericVector L2, double eps, int max_iter, double tol, int threads,
                                bool verbose, SEXP hook = R_NilValue, bool want_model = false) {
  using namespace aspectr::nmf;
  if (!cpp_nmf_data_alive(data)) Rcpp::stop("internal error: nmf data are not (or no longer) in memory");
  const Data& X = *static_cast<Data*>(R_ExternalPtrAddr(data));
  const arma::uword m = X.n_rows(), n = X.n_cols();
  if (static_cast<arma::uword>(W0.nrow()) != m || static_cast<arma::uword>(H0.ncol()) != n ||
      W0.ncol() != H0.nrow())
    Rcpp::stop("internal error: the start does not match the data");
  const bool kl = loss == "kl";
  const WeightedMethod wm = weighted_method(loss, method);
  if (kl) X.need_rows();
  CellWeights w = cell_weights(m, n, d, r, c, ei, ej, ev);
  w.wx2 = wx2;
  w.klc = klc;
  w.total = total;
  FitSetup f(W0, H0, L1, L2, max_iter, tol, threads);
  Model& M = f.M;
  RCallback cb(verbose, max_iter, "nmf (" + loss + ", " + method + ", weighted)", hook, want_model);
  MemoryCells cells(X);
  WeightedPiece piece(cells, w, M.Wt.memptr(), M.Wt.n_rows, M.Wt.n_cols);
  aspectr::LocalPieces<WeightedPiece> P({&piece}, threads);
  PieceModel PM;
  PM.H = std::move(M.H);
  PM.P = &P;
  WeightedNMF rule(kl, wm, f.pen, eps, w);
  const aspectr::FitTrace tr = aspectr::run_solver(rule, P, PM, f.ctl, cb);
  double mass = 0.0;
  const double divergence = rule.divergence(P, PM, &mass);
  // the weighted squared error of the result (its relative error)
  const double frobenius = kl ? WeightedNMF(false, WeightedMethod::HALS, Penalty(), eps, w).divergence(P, PM)
                              : divergence;
  Rcpp::List out = Rcpp::List::create(
      Rcpp::Named("W") = Rcpp::wrap(arma::mat(M.Wt.t())),
      Rcpp::Named("divergence") = divergence,
      Rcpp::Named("H") = Rcpp::wrap(PM.H),
      Rcpp::Named("xnorm2") = wx2,
      Rcpp::Named("frobenius") = frobenius,
      Rcpp::Named("mass") = mass);
  add_trace(out, tr);
  return out;
}

// Columns of weighted data fitted with the basis fixed: C (k x n) given
// B (m x k) for X~ (cpp_nmf_data()'s data, m x n) under the weights (as
// cpp_nmf_weighted_fit()), each column by `method` ("anls": exact NNLS, once;
// KL "cd": coordinate Newton sweeps) until no coefficient moves by more than
// tol times the largest, at most max_iter sweeps; from C0.
// [[Rcpp::export]]
Rcpp::NumericMatrix cpp_nmf_weighted_project(SEXP data, Rcpp::NumericMatrix B, Rcpp::NumericMatrix C0,
                                             std::string loss, double d, Rcpp::NumericVector r,
                                             Rcpp::NumericVector c, Rcpp::IntegerVector ei,
                                             Rcpp::IntegerVector ej, Rcpp::NumericVector ev, double l1,
                                             double l2, double eps, int max_iter, double tol, int threads) {
  using namespace aspectr::nmf;
  if (!cpp_nmf_data_alive(data)) Rcpp::stop("internal error: nmf data are not (or no longer) in memory");
  const Data& X = *static_cast<Data*>(R_ExternalPtrAddr(data));
  const arma::uword m = X.n_rows(), n = X.n_cols();
  if (static_cast<arma::uword>(B.nrow()) != m || static_cast<arma::uword>(C0.ncol()) != n || B.ncol() != C0.nrow())
    Rcpp::stop("internal error: the basis does not match the data");
  const bool kl = loss == "kl";
  const CellWeights w = cell_weights(m, n, d, r, c, ei, ej, ev);
  arma::mat Wt = Rcpp::as<arma::mat>(B).t();
  MemoryCells cells(X);
  WeightedPiece piece(cells, w, Wt.memptr(), Wt.n_rows, Wt.n_cols);
  arma::mat C = Rcpp::as<arma::mat>(C0);
  const int sweeps = kl ? max_iter : 1;
  for (int it = 0; it < sweeps; ++it) {
    aspectr::Request req("wcol");
    req.view("H", C).with("loss", kl ? 1.0 : 0.0)
        .with("method", static_cast<double>(kl ? WeightedMethod::CD : WeightedMethod::ANLS))
        .with("l1", l1).with("l2", l2).with("eps", eps);
    arma::mat Cn = piece.run(req, threads).take("H");
    const double change = arma::abs(Cn - C).max();
    C = std::move(Cn);
    if (change <= tol * std::max(C.max(), 1e-300)) break;
    Rcpp::checkUserInterrupt();
  }
  return Rcpp::wrap(C);
}

// The beta divergence under cell weights: cpp_nmf_data()'s dense data x
// (m x n, missing cells any value), the weights Om (m x n), W0 m x k, H0
// k x n; the beta-divergence rule on pieces (PieceBetaMU, nmf/piece.h) on
// the matrix as one weighted piece: the rule that shards run. Returns W, H,
// the trace, the divergence and the weighted half squared error of the
// result.
// [[Rcpp::export]]
Rcpp::List cpp_nmf_beta_weighted_fit(SEXP data, Rcpp::NumericMatrix W0, Rcpp::NumericMatrix H0, double beta,
                                     Rcpp::NumericMatrix Om, Rcpp::NumericVector L1, Rcpp::NumericVector L2,
                                     double eps, int max_iter, double tol, int threads, bool verbose,
                                     SEXP hook = R_NilValue, bool want_model = false) {
  using namespace aspectr::nmf;
  if (!cpp_nmf_data_alive(data)) Rcpp::stop("internal error: nmf data are not (or no longer) in memory");
  const Data& X = *static_cast<Data*>(R_ExternalPtrAddr(data));
  if (!X.dense()) Rcpp::stop("internal error: beta-divergence updates need dense data");
  const arma::uword m = X.n_rows(), n = X.n_cols();
  if (static_cast<arma::uword>(W0.nrow()) != m || static_cast<arma::uword>(H0.ncol()) != n ||
      W0.ncol() != H0.nrow() || static_cast<arma::uword>(Om.nrow()) != m || static_cast<arma::uword>(Om.ncol()) != n)
    Rcpp::stop("internal error: the start or the weights do not match the data");
  const arma::mat Omega(REAL(Om), m, n, false, true);
  FitSetup f(W0, H0, L1, L2, max_iter, tol, threads);
  Model& M = f.M;
  RCallback cb(verbose, max_iter, "nmf (beta, mu, weighted)", hook, want_model);
  aspectr::FitTrace tr;
  {
    MemoryCells cells(X);
    Slots slots;
    Piece piece(cells, M.Wt.memptr(), M.Wt.n_rows, M.Wt.n_cols, slots);
    piece.weigh(&Omega);
    aspectr::LocalPieces<Piece> P({&piece}, f.ctl.threads);
    PieceModel PM;
    PM.H = std::move(M.H);
    PM.P = &P;
    PieceBetaMU rule(beta, f.pen, eps);
    tr = aspectr::run_solver(rule, P, PM, f.ctl, cb);
    M.H = std::move(PM.H);
  }
  const double divergence = BetaMU(beta, Penalty(), eps, &Omega).loss(X, M, threads);
  const arma::mat V = M.Wt.t() * M.H;
  double frob = 0.0, wx2 = 0.0;
  for (arma::uword j = 0; j < V.n_elem; ++j) {
    const double e = X.D()[j] - V[j];
    frob += Omega[j] * e * e;
    wx2 += Omega[j] * X.D()[j] * X.D()[j];
  }
  Rcpp::List out = Rcpp::List::create(
      Rcpp::Named("W") = Rcpp::wrap(arma::mat(M.Wt.t())),
      Rcpp::Named("divergence") = divergence,
      Rcpp::Named("H") = Rcpp::wrap(M.H),
      Rcpp::Named("xnorm2") = wx2,
      Rcpp::Named("frobenius") = 0.5 * frob);
  add_trace(out, tr);
  return out;
}

// ---- weighted fits of shards (several pieces) ----------------------------
namespace {
// A shard of a weighted fit: its weights (its rows' r, the columns' c, the
// deviating cells of its rows) and its weighted data X~_s, kept by its store
// (X: none for a shard whose weighted cells are in a file, streamed)
struct WeightedShard {
  aspectr::nmf::CellWeights w;
  std::unique_ptr<aspectr::nmf::Data> X;
};

void shard_cells(const Rcpp::IntegerMatrix& idx, const Rcpp::NumericVector& val, std::vector<int>& row,
                 std::vector<int>& col) {
  if (idx.nrow() != 2 || idx.ncol() != val.size()) Rcpp::stop("internal error: a shard of nmf() must be a matrix");
  const std::size_t nnz = val.size();
  row.resize(nnz);
  col.resize(nnz);
  const int* ix = idx.begin();
  for (std::size_t t = 0; t < nnz; ++t) { row[t] = ix[2 * t]; col[t] = ix[2 * t + 1]; }
}
}  // namespace

// A shard's sums under the weights, unscaled: sum x~ x, sum x~ log x,
// sum x~, max x~, sum x~ log x~, its rows' sums of x~ and the number of cells with
// x~ > 0 (the cells summed)
// [[Rcpp::export]]
Rcpp::List cpp_nmf_wshard_sums(Rcpp::IntegerMatrix idx, Rcpp::NumericVector val, Rcpp::IntegerVector dims, double d,
                               Rcpp::NumericVector r, Rcpp::NumericVector c, Rcpp::IntegerVector ei,
                               Rcpp::IntegerVector ej, Rcpp::NumericVector ev) {
  std::vector<int> row, col;
  shard_cells(idx, val, row, col);
  const aspectr::nmf::CellWeights w = cell_weights(dims[0], dims[1], d, r, c, ei, ej, ev);
  const std::vector<double> xt = aspectr::nmf::weighted_values(w, row.data(), col.data(), val.begin(), row.size());
  double sx2 = 0.0, sxl = 0.0, st = 0.0, top = 0.0, sxlx = 0.0, nnz = 0.0;
  Rcpp::NumericVector rowtot(dims[0]);
  for (std::size_t t = 0; t < xt.size(); ++t) {
    const double v = xt[t], x = val[t];
    if (!(v > 0.0)) continue;
    sx2 += v * x;
    sxl += v * std::log(x);
    st += v;
    top = std::max(top, v);
    sxlx += v * std::log(v);
    rowtot[row[t]] += v;
    nnz += 1.0;
  }
  return Rcpp::List::create(Rcpp::Named("sx2") = sx2, Rcpp::Named("sxl") = sxl, Rcpp::Named("st") = st,
                            Rcpp::Named("top") = top, Rcpp::Named("sxlx") = sxlx, Rcpp::Named("rowtot") = rowtot,
                            Rcpp::Named("nnz") = nnz);
}

// The weighted values of a shard's cells (x~ = r_i c_j (d + delta_ij) x,
// unscaled), for its weighted copy in a .shard file
// [[Rcpp::export]]
Rcpp::NumericVector cpp_nmf_wshard_values(Rcpp::IntegerMatrix idx, Rcpp::NumericVector val, Rcpp::IntegerVector dims,
                                          double d, Rcpp::NumericVector r, Rcpp::NumericVector c,
                                          Rcpp::IntegerVector ei, Rcpp::IntegerVector ej, Rcpp::NumericVector ev) {
  std::vector<int> row, col;
  shard_cells(idx, val, row, col);
  const aspectr::nmf::CellWeights w = cell_weights(dims[0], dims[1], d, r, c, ei, ej, ev);
  const std::vector<double> xt = aspectr::nmf::weighted_values(w, row.data(), col.data(), val.begin(), row.size());
  return Rcpp::NumericVector(xt.begin(), xt.end());
}

// A shard's state for a weighted fit: its weights and, given its cells
// (idx, val; NULL: its weighted cells are in a file), X~_s / scale (both
// orientations: the rows' updates of KL read them)
// [[Rcpp::export]]
SEXP cpp_nmf_wshard_state(SEXP idx, SEXP val, Rcpp::IntegerVector dims, double scale, double d,
                          Rcpp::NumericVector r, Rcpp::NumericVector c, Rcpp::IntegerVector ei,
                          Rcpp::IntegerVector ej, Rcpp::NumericVector ev) {
  auto* S = new WeightedShard{cell_weights(dims[0], dims[1], d, r, c, ei, ej, ev), nullptr};
  Rcpp::XPtr<WeightedShard> out(S, true);
  if (Rf_isNull(idx)) return out;
  std::vector<int> row, col;
  const Rcpp::NumericVector v(val);
  shard_cells(Rcpp::IntegerMatrix(idx), v, row, col);
  std::vector<double> xt = aspectr::nmf::weighted_values(S->w, row.data(), col.data(), v.begin(), row.size());
  // (cells of weight 0 dropped)
  std::size_t nz = 0;
  for (std::size_t t = 0; t < xt.size(); ++t) {
    if (xt[t] > 0.0) { row[nz] = row[t]; col[nz] = col[t]; xt[nz] = xt[t]; ++nz; }
  }
  S->X.reset(new aspectr::nmf::Data(
      aspectr::nmf::shard_data(row.data(), col.data(), xt.data(), nz, dims[0], dims[1], scale)));
  return out;
}

// One shard's answer to a request of a weighted fit in pieces (WeightedPiece,
// nmf/weighted.h): `state` (cpp_nmf_wshard_state()) with its weighted cells
// in memory, or in the .shard file `file` (list(buffer, path, dims, scale,
// chunk), read a chunk at a time), or NULL for requests that read no cells
// ("gather", "scale"); its rows of W (Wt, k x m_s) written in place; its
// slots kept. `kept`: the cells stay in memory for the fit (so may its v of
// KL coordinate descent).
// [[Rcpp::export]]
Rcpp::List cpp_nmf_wpiece_run(SEXP state, SEXP file, SEXP Wt, SEXP slots, std::string op, SEXP input, int threads,
                              bool kept) {
  using namespace aspectr::nmf;
  if (!Rf_isReal(Wt) || !Rf_isMatrix(Wt)) Rcpp::stop("internal error: W must be a matrix of doubles");
  arma::mat W(REAL(Wt), Rf_nrows(Wt), Rf_ncols(Wt), false, true);
  Rcpp::XPtr<Slots> sl(slots);
  aspectr::Request r(op);
  r.in = aspectr_r::stats_from_r(input).m;
  if (Rf_isNull(state)) {
    if (op != "gather" && op != "scale") Rcpp::stop("internal error: a weighted piece's cells read without data");
    static const arma::mat empty;
    static const Data none(empty);
    static const CellWeights nw;
    MemoryCells cells(none);
    WeightedPiece piece(cells, nw, W.memptr(), W.n_rows, W.n_cols, sl.get());
    return aspectr_r::stats_to_r(piece.run(r, threads));
  }
  Rcpp::XPtr<WeightedShard> S(state);
  if (S->X) {
    MemoryCells cells(*S->X, kept);
    WeightedPiece piece(cells, S->w, W.memptr(), W.n_rows, W.n_cols, sl.get());
    return aspectr_r::stats_to_r(piece.run(r, threads));
  }
  if (Rf_isNull(file)) Rcpp::stop("internal error: a weighted shard without its cells");
  Rcpp::List f(file);
  SEXP bufx = f["buffer"];
  Rcpp::XPtr<aspectr::ShardBuffer> buf(bufx);
  const Rcpp::IntegerVector dims = f["dims"];
  FileCells cells(Rcpp::as<std::string>(f["path"]), *buf, aspectr_r::chunk_cells(Rcpp::as<double>(f["chunk"])),
                  Rcpp::as<double>(f["scale"]), dims[1]);
  WeightedPiece piece(cells, S->w, W.memptr(), W.n_rows, W.n_cols, sl.get());
  return aspectr_r::stats_to_r(piece.run(r, threads));
}

// Lets a weighted shard's state go now (see cpp_nmf_shard_release())
// [[Rcpp::export]]
void cpp_nmf_wshard_release(SEXP state) {
  Rcpp::XPtr<WeightedShard> S(state);
  S.release();
}

// A weighted fit in pieces reached through R (RPieces): WeightedNMF in the
// core's driver; the pieces hold W and their weights. c: the column
// weights, d the base, wx2 / klc / total the loss's constants (scaled).
// Returns H, the trace, the divergence, the weighted half squared error and
// the mass sum omega v (KL) of the result.
// [[Rcpp::export]]
Rcpp::List cpp_nmf_weighted_pieces_fit(SEXP fn, Rcpp::NumericMatrix H0, std::string loss, std::string method,
                                       double d, Rcpp::NumericVector c, double wx2, double klc, double total,
                                       Rcpp::NumericVector L1, Rcpp::NumericVector L2, double eps, int max_iter,
                                       double tol, int threads, SEXP hook = R_NilValue, bool want_model = false) {
  using namespace aspectr::nmf;
  const bool kl = loss == "kl";
  const WeightedMethod wm = weighted_method(loss, method);
  if (c.size() != H0.ncol()) Rcpp::stop("internal error: column weights of the wrong size");
  CellWeights w;
  w.d = d;
  w.c = Rcpp::as<arma::vec>(c);
  w.wx2 = wx2;
  w.klc = klc;
  w.total = total;
  aspectr_r::RPieces P(fn);
  PieceModel M;
  M.H = Rcpp::as<arma::mat>(H0);
  M.P = &P;
  const Penalty pen = aspectr_r::nmf_penalty(L1, L2);
  const aspectr::Control ctl = aspectr_r::fit_control(max_iter, tol, threads);
  RCallback cb(false, max_iter, "nmf (" + loss + ", " + method + ", weighted)", hook, want_model);
  WeightedNMF rule(kl, wm, pen, eps, w);
  const aspectr::FitTrace tr = aspectr::run_solver(rule, P, M, ctl, cb);
  double mass = 0.0;
  const double divergence = rule.divergence(P, M, &mass);
  const double frobenius = kl ? WeightedNMF(false, WeightedMethod::HALS, Penalty(), eps, w).divergence(P, M)
                              : divergence;
  Rcpp::List out = Rcpp::List::create(Rcpp::Named("H") = Rcpp::wrap(M.H), Rcpp::Named("divergence") = divergence,
                                      Rcpp::Named("frobenius") = frobenius, Rcpp::Named("mass") = mass,
                                      Rcpp::Named("xnorm2") = wx2);
  add_trace(out, tr);
  return out;
}
