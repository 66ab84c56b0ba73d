// src/nmf_shard_glue.cpp — nmf() of sharded data: one shard's parts of an
// iteration (aspectr/nmf/shard.h) and the master's update of H, for R's
// shard engine (R/nmf-shards.R). Factors in the core's layout: Wt is
// k x (the shard's rows), H is k x n.
#include "r_adapters.h"

using namespace aspectr_r;
using aspectr::nmf::Data;

namespace {
Rcpp::List w_sums_list(const arma::mat& Wt, int threads) {
  const aspectr::nmf::WSums s = aspectr::nmf::w_sums(Wt, threads);
  return Rcpp::List::create(Rcpp::Named("D") = s.D, Rcpp::Named("wsum") = Rcpp::NumericVector(s.wsum.begin(), s.wsum.end()),
                            Rcpp::Named("wsq") = Rcpp::NumericVector(s.wsq.begin(), s.wsq.end()),
                            Rcpp::Named("s1") = s.s1, Rcpp::Named("s2") = s.s2);
}
const Data& shard_data(SEXP state) {
  Rcpp::XPtr<Data> X(state);
  return *X;
}
}  // namespace

// A shard's cells (2 x nnz 0-based indices, values) as the NMF data of its
// rows, divided by `scale`; kept by the store for the fit.
// `layout`: 0 both (columns and rows), 1 the columns only, 2 the rows only,
// as the data of the transposed shard (n x rows: its columns are X's rows).
// [[Rcpp::export]]
SEXP cpp_nmf_shard_state(Rcpp::IntegerMatrix idx, Rcpp::NumericVector val, Rcpp::IntegerVector dims,
                         double scale, int layout = 0) {
  if (idx.nrow() != 2 || idx.ncol() != val.size() || dims.size() != 2 || layout < 0 || layout > 2)
    Rcpp::stop("internal error: a shard of nmf() must be a matrix");
  const int* ix = idx.begin();
  const std::size_t nnz = val.size();
  std::vector<int> row(nnz), col(nnz);
  for (std::size_t t = 0; t < nnz; ++t) { row[t] = ix[2 * t]; col[t] = ix[2 * t + 1]; }
  using aspectr::nmf::shard_csc;
  Data* X;
  if (layout == 0) {
    X = new Data(aspectr::nmf::shard_data(row.data(), col.data(), val.begin(), nnz, dims[0], dims[1], scale));
  } else if (layout == 1) {
    X = new Data(shard_csc(row.data(), col.data(), val.begin(), nnz, dims[0], dims[1], scale));
  } else {
    X = new Data(shard_csc(col.data(), row.data(), val.begin(), nnz, dims[1], dims[0], scale));
  }
  return Rcpp::XPtr<Data>(X, true);
}

namespace {
// An R matrix of doubles as an Armadillo matrix over its memory (no copy):
// what the core writes goes to the R object, which the shard's store owns
// (its block of W, its A, the operation's accumulator).
arma::mat r_view(SEXP x, const char* what) {
  if (!Rf_isReal(x) || !Rf_isMatrix(x)) Rcpp::stop("internal error: %s must be a matrix of doubles", what);
  return arma::mat(REAL(x), Rf_nrows(x), Rf_ncols(x), false, true);
}
// A shard file of nmf(): its sizes checked against those shards() recorded
void check_nmf_shard(const aspectr::ShardReader& reader, const Rcpp::IntegerVector& dims) {
  if (reader.dims().size() != 2 || static_cast<int>(reader.dims()[0]) != dims[0] ||
      static_cast<int>(reader.dims()[1]) > dims[1])
    Rcpp::stop("its sizes differ from those shards() recorded");
}
std::size_t chunk_cells(double chunk) {
  if (!(chunk >= 1.0)) Rcpp::stop("internal error: chunks of fewer than one cell");
  return chunk < 1e15 ? static_cast<std::size_t>(chunk) : static_cast<std::size_t>(1e15);
}
// the coordinates of a pass of KL coordinate descent: in [0, k), or -1 for
// a solved column
void check_coordinates(const Rcpp::IntegerVector& rd, const Rcpp::IntegerVector& rn, arma::uword k) {
  const int K = static_cast<int>(k);
  for (R_xlen_t j = 0; j < rd.size(); ++j) {
    const bool done = rd[j] < 0;
    if (rd[j] < -1 || rd[j] >= K || (done ? rn[j] >= 0 : (rn[j] < 0 || rn[j] >= K)))
      Rcpp::stop("internal error: a pass over coordinates outside 0..k-1");
  }
}
// adds C to the accumulator `acc` (k x n), as the shards' parts were added
void add_to(SEXP acc, const arma::mat& C) {
  arma::mat a = r_view(acc, "the accumulator");
  if (a.n_rows != C.n_rows || a.n_cols != C.n_cols) Rcpp::stop("internal error: statistics of the wrong size");
  a += C;
}
}  // namespace

// The shard's parts of the objective of (W_s, H): W_s'X_s added to `acc`
// (Frobenius, or when `wtx`) and sum x log v (KL), with the sums of W_s and
// of X_s.
// [[Rcpp::export]]
Rcpp::List cpp_nmf_shard_eval(SEXP state, SEXP Wt, Rcpp::NumericMatrix H, bool kl, bool wtx, SEXP acc,
                              int threads) {
  const Data& X = shard_data(state);
  const arma::mat W = r_view(Wt, "W");
  Rcpp::List out = w_sums_list(W, threads);
  out["xnorm2"] = X.xnorm2();
  if (kl) {
    arma::mat num;
    arma::mat Wc = W;
    out["xlogv"] = aspectr::nmf::kl_shard_step(X, Wc, Rcpp::as<arma::mat>(H), 0.0, 0.0, 0.0, num, true,
                                               threads);
    out["constant"] = aspectr::nmf::kl_constant(X);
  }
  if (!kl || wtx) {
    arma::mat C;
    X.WtX(W, C, threads);
    add_to(acc, C);
  }
  return out;
}

// The KL objective's parts of a shard file read `chunk` cells at a time:
// as cpp_nmf_shard_eval() with `kl`, W_s'X_s added to `acc` when `wtx`.
// [[Rcpp::export]]
Rcpp::List cpp_nmf_shard_kl_eval_stream(SEXP buffer, std::string path, Rcpp::IntegerVector dims, double scale,
                                        SEXP Wt, Rcpp::NumericMatrix H, bool wtx, SEXP acc, double chunk,
                                        int threads) {
  Rcpp::XPtr<aspectr::ShardBuffer> buf(buffer);
  const arma::mat W = r_view(Wt, "W");
  const arma::mat Hm = Rcpp::as<arma::mat>(H);
  Rcpp::List out = w_sums_list(W, threads);
  double xlogv = 0.0, constant = 0.0, x2 = 0.0;
  {
    aspectr::ShardReader reader(path);
    check_nmf_shard(reader, dims);
    aspectr::nmf::stream_kl(reader, *buf, chunk_cells(chunk), scale, W, Hm, nullptr, nullptr, &xlogv, &constant,
                            &x2, threads);
  }
  out["xnorm2"] = x2;
  out["xlogv"] = xlogv;
  out["constant"] = constant;
  if (wtx) {
    aspectr::ShardReader reader(path);
    check_nmf_shard(reader, dims);
    arma::mat C(W.n_rows, dims[1]);
    aspectr::nmf::stream_products(reader, *buf, chunk_cells(chunk), scale, &W, &C, nullptr, nullptr);
    add_to(acc, C);
  }
  return out;
}

// KL coordinate descent over shards. The master's solver of H's columns
// (aspectr::nmf::KLCDColumns) from H and c = the column sums of W + l1.
// [[Rcpp::export]]
SEXP cpp_kcd_columns(Rcpp::NumericMatrix H, Rcpp::NumericVector c, double l2) {
  return Rcpp::XPtr<aspectr::nmf::KLCDColumns>(
      new aspectr::nmf::KLCDColumns(Rcpp::as<arma::mat>(H), Rcpp::as<arma::vec>(c), l2, 1, 1), true);
}

// The solver's next pass, given the added sums of the last one (3 x n, or
// NULL before the first): `done`, or the pass (rd, rn 0-based; d; reset)
// with the coefficients hv it moves v to when `with_hv` (or on a reset).
// [[Rcpp::export]]
Rcpp::List cpp_kcd_next(SEXP solver, SEXP sums, bool with_hv) {
  Rcpp::XPtr<aspectr::nmf::KLCDColumns> m(solver);
  bool more;
  if (Rf_isNull(sums)) {
    more = m->next(nullptr, nullptr, nullptr);
  } else {
    const arma::mat S = r_view(sums, "the sums");
    if (S.n_rows != 3 || S.n_cols != m->H().n_cols) Rcpp::stop("internal error: sums of the wrong size");
    const arma::mat St = S.t();  // n x 3: a2, b1, b2 as columns
    more = m->next(St.colptr(0), St.colptr(1), St.colptr(2));
  }
  if (!more) {
    Rcpp::NumericMatrix H = Rcpp::wrap(m->H());
    m.release();  // (the solver's matrices freed now, not when R next collects)
    return Rcpp::List::create(Rcpp::Named("done") = true, Rcpp::Named("H") = H);
  }
  Rcpp::List out = Rcpp::List::create(
      Rcpp::Named("done") = false, Rcpp::Named("reset") = m->reset,
      Rcpp::Named("rd") = Rcpp::IntegerVector(m->rd.begin(), m->rd.end()),
      Rcpp::Named("rn") = Rcpp::IntegerVector(m->rn.begin(), m->rn.end()),
      Rcpp::Named("d") = Rcpp::NumericVector(m->d.begin(), m->d.end()));
  if (with_hv || m->reset) out["hv"] = m->hv();
  return out;
}

// One pass of the solver over a shard: its part of the sums (3 x n). `v`:
// the shard's G h (a double per non-zero, written in place), or NULL to
// compute it from hv.
// [[Rcpp::export]]
Rcpp::List cpp_nmf_shard_kcd_pass(SEXP state, SEXP Wt, SEXP hv, SEXP v, bool reset, Rcpp::IntegerVector rd,
                                  Rcpp::IntegerVector rn, Rcpp::NumericVector d, int threads) {
  const Data& X = shard_data(state);
  const arma::mat W = r_view(Wt, "W");
  const std::size_t n = X.S().n_cols;
  if (static_cast<std::size_t>(rd.size()) != n || static_cast<std::size_t>(rn.size()) != n ||
      static_cast<std::size_t>(d.size()) != n)
    Rcpp::stop("internal error: a pass of the wrong size");
  double* vp = nullptr;
  if (!Rf_isNull(v)) {
    if (!Rf_isReal(v) || static_cast<std::size_t>(Rf_xlength(v)) != X.S().nnz)
      Rcpp::stop("internal error: the shard's v has the wrong size");
    vp = REAL(v);
  }
  if ((reset || vp == nullptr) && Rf_isNull(hv)) Rcpp::stop("internal error: a pass without its coefficients");
  check_coordinates(rd, rn, W.n_rows);
  const arma::mat H = Rf_isNull(hv) ? arma::mat() : r_view(hv, "hv");  // (not read when v is moved)
  arma::mat out;
  aspectr::nmf::kl_cd_pass(X, W, H, vp, reset, rd.begin(), rn.begin(), d.begin(), out, threads);
  return Rcpp::List::create(Rcpp::Named("sums") = out);
}

// The same pass over a shard file read `chunk` cells at a time.
// [[Rcpp::export]]
Rcpp::List cpp_nmf_shard_kcd_pass_stream(SEXP buffer, std::string path, Rcpp::IntegerVector dims, double scale,
                                         SEXP Wt, SEXP hv, Rcpp::IntegerVector rd, Rcpp::IntegerVector rn,
                                         double chunk, int threads) {
  Rcpp::XPtr<aspectr::ShardBuffer> buf(buffer);
  const arma::mat W = r_view(Wt, "W");
  const arma::mat H = r_view(hv, "hv");
  if (rd.size() != dims[1] || rn.size() != dims[1] || static_cast<int>(H.n_cols) != dims[1])
    Rcpp::stop("internal error: a pass of the wrong size");
  check_coordinates(rd, rn, W.n_rows);
  arma::mat out;
  aspectr::ShardReader reader(path);
  check_nmf_shard(reader, dims);
  aspectr::nmf::stream_kl_cd_pass(reader, *buf, chunk_cells(chunk), scale, W, H, rd.begin(), rn.begin(), out,
                                  threads);
  return Rcpp::List::create(Rcpp::Named("sums") = out);
}

// The transposed shard of a .shard file (its rows only), read `chunk`
// cells at a time: the state of cpp_nmf_shard_kcd_rows(transposed = TRUE).
// [[Rcpp::export]]
SEXP cpp_nmf_shard_rows_stream(SEXP buffer, std::string path, Rcpp::IntegerVector dims, double scale,
                               double chunk) {
  Rcpp::XPtr<aspectr::ShardBuffer> buf(buffer);
  if (dims.size() != 2 || dims[0] < 0 || dims[1] < 0) Rcpp::stop("internal error: the sizes of a shard");
  return Rcpp::XPtr<Data>(new Data(aspectr::nmf::stream_rows_csc(path, *buf, chunk_cells(chunk), scale, dims[0],
                                                                 dims[1])),
                          true);
}

// For the tests: H's columns solved by the solver with the passes of one
// shard (its columns, v kept) and by KLCD::solve_side() in memory.
// [[Rcpp::export]]
Rcpp::List cpp_kcd_local(SEXP state, Rcpp::NumericMatrix Wt, Rcpp::NumericMatrix H, Rcpp::NumericVector c,
                         double l2, int sweeps, int newton, int threads) {
  const Data& X = shard_data(state);
  const arma::mat W = Rcpp::as<arma::mat>(Wt), H0 = Rcpp::as<arma::mat>(H);
  const arma::vec cv = Rcpp::as<arma::vec>(c);
  aspectr::nmf::KLCDColumns m(H0, cv, l2, sweeps, newton);
  std::vector<double> v(X.S().nnz);
  arma::mat sums;
  bool more = m.next(nullptr, nullptr, nullptr);
  while (more) {
    aspectr::nmf::kl_cd_pass(X, W, m.hv(), v.data(), m.reset, m.rd.data(), m.rn.data(), m.d.data(), sums, threads);
    const arma::mat St = sums.t();
    more = m.next(St.colptr(0), St.colptr(1), St.colptr(2));
  }
  arma::mat ref = H0;
  aspectr::nmf::KLCD::solve_side(X, false, W, ref, cv, l2, sweeps, newton, nullptr, threads);
  return Rcpp::List::create(Rcpp::Named("H") = m.H(), Rcpp::Named("ref") = ref,
                            Rcpp::Named("passes") = static_cast<double>(m.passes()),
                            Rcpp::Named("halved") = static_cast<double>(m.halved()));
}

// [[Rcpp::export]]
double cpp_nmf_shard_nnz(SEXP state) { return static_cast<double>(shard_data(state).S().nnz); }

// The shard's rows of W by KL coordinate descent given H (written over
// Wt): its part of sum x log v of the new model, with the sums of the new
// W (wsum, and s1, s2 for the penalties). `transposed`: the state holds the
// transposed shard only (cpp_nmf_shard_state(layout = 2)).
// [[Rcpp::export]]
Rcpp::List cpp_nmf_shard_kcd_rows(SEXP state, SEXP Wt, Rcpp::NumericMatrix H, double l1, double l2,
                                  bool transposed, int threads) {
  const Data& X = shard_data(state);
  arma::mat W = r_view(Wt, "W");  // written in place
  // the data's rows are W's (the columns of the transposed shard), its
  // columns at most H's
  const aspectr::nmf::Csc& S = X.S();
  if (W.n_rows != static_cast<arma::uword>(H.nrow()) ||
      (transposed ? (S.n_cols != W.n_cols || S.n_rows > static_cast<arma::uword>(H.ncol()))
                  : (X.n_rows() != W.n_cols || X.n_cols() > static_cast<arma::uword>(H.ncol()))))
    Rcpp::stop("internal error: a shard and factors of different sizes");
  const double xlogv = aspectr::nmf::kl_cd_rows(X, W, Rcpp::as<arma::mat>(H), l1, l2, transposed, threads);
  const arma::vec wsum = arma::sum(W, 1);
  return Rcpp::List::create(Rcpp::Named("wsum") = Rcpp::NumericVector(wsum.begin(), wsum.end()),
                            Rcpp::Named("s1") = arma::accu(wsum), Rcpp::Named("s2") = arma::accu(arma::square(W)),
                            Rcpp::Named("xlogv") = xlogv);
}

// F F' (k x k) with the kernel of the in-memory rules
// [[Rcpp::export]]
Rcpp::NumericMatrix cpp_nmf_gram(Rcpp::NumericMatrix F, int threads) {
  return Rcpp::wrap(aspectr::nmf::gram(Rcpp::as<arma::mat>(F), threads));
}

// <A, B> as the in-memory rules compute it
// [[Rcpp::export]]
double cpp_nmf_inner(Rcpp::NumericMatrix A, Rcpp::NumericMatrix B) {
  if (A.nrow() != B.nrow() || A.ncol() != B.ncol()) Rcpp::stop("internal error: matrices of different sizes");
  return aspectr::nmf::inner(Rcpp::as<arma::mat>(A), Rcpp::as<arma::mat>(B));
}

// Lets a shard's NMF data go now rather than when R next collects its
// pointer (R does not see the memory behind it): a shard in a file of
// another kind than .shard is read whole again for every operation, and
// several reads would otherwise be held at once.
// [[Rcpp::export]]
void cpp_nmf_shard_release(SEXP state) {
  Rcpp::XPtr<Data> X(state);
  X.release();
}

// ---- pieces (aspectr/pieces.h, aspectr/nmf/piece.h) ----------------------
namespace {
// Stats <-> a named R list of numeric matrices
Rcpp::List stats_to_r(const aspectr::Stats& s) {
  Rcpp::List out;
  for (const auto& kv : s.m) out[kv.first] = Rcpp::wrap(kv.second);
  return out;
}
aspectr::Stats stats_from_r(SEXP x) {
  aspectr::Stats s;
  Rcpp::List l(x);
  if (l.size() == 0) return s;
  Rcpp::CharacterVector nm = l.names();
  for (R_xlen_t i = 0; i < l.size(); ++i) {
    SEXP v = l[i];
    if (!Rf_isReal(v)) Rcpp::stop("internal error: a piece's statistic '%s' is not numeric",
                                  std::string(nm[i]).c_str());
    const arma::uword r = Rf_isMatrix(v) ? Rf_nrows(v) : Rf_length(v), c = Rf_isMatrix(v) ? Rf_ncols(v) : 1;
    s.m[std::string(nm[i])] = arma::mat(REAL(v), r, c);
  }
  return s;
}
aspectr::Request request_from_r(const std::string& op, SEXP input) {
  aspectr::Request r(op);
  const aspectr::Stats s = stats_from_r(input);
  r.in = s.m;
  return r;
}
// A piece asked for a request that does not read its cells
class NoCells : public aspectr::nmf::Cells {
 public:
  void XHt(const arma::mat&, arma::mat&, int) override { fail(); }
  void WtX(const arma::mat&, arma::mat&, int) override { fail(); }
  double xnorm2() override { fail(); return 0.0; }
  double nnz() override { fail(); return 0.0; }
  void kl_rows(const arma::mat&, const arma::mat&, arma::mat*, double*, int) override { fail(); }
  void kl_cols(const arma::mat&, const arma::mat&, arma::mat&, int) override { fail(); }
  double kl_constant() override { fail(); return 0.0; }
  double clip_work(const arma::mat&, const std::vector<char>&, bool) override { fail(); return 0.0; }
  arma::mat column_counts() override { fail(); return arma::mat(); }
  void clip_correct(arma::mat&, arma::mat&, const std::vector<char>&, bool, int) override { fail(); }

 private:
  [[noreturn]] static void fail() { throw std::logic_error("internal error: a piece's cells read without data"); }
};
// Pieces reached through R: map() calls fn(op, input) (R/nmf-shards.R),
// which runs the request on every shard where it is (this process, files,
// the workers of a cluster) and returns the added statistics.
class RPieces : public aspectr::Pieces {
 public:
  explicit RPieces(SEXP fn) : fn_(fn) {}
  aspectr::Stats map(const aspectr::Request& r) const override {
    Rcpp::List in;
    for (const auto& kv : r.in) in[kv.first] = Rcpp::wrap(kv.second);
    return stats_from_r(fn_(r.op, in));
  }

 private:
  Rcpp::Function fn_;
};
}  // namespace

// A shard's slots for a fit in pieces (nmf/piece.h), kept by its store
// [[Rcpp::export]]
SEXP cpp_piece_slots() {
  return Rcpp::XPtr<aspectr::nmf::Slots>(new aspectr::nmf::Slots(), true);
}

// One shard's answer to a request of a fit in pieces (nmf/piece.h): its
// cells from `state` (the NMF data of a shard in memory) or from the .shard
// file `file` (list(buffer, path, dims, scale, chunk)) read a chunk at a
// time, or none (a request that does not read them); its rows of W (Wt,
// k x m_s) written in place, its slots (cpp_piece_slots()) kept.
// [[Rcpp::export]]
Rcpp::List cpp_nmf_piece_run(SEXP state, SEXP file, SEXP Wt, SEXP slots, std::string op, SEXP input,
                             int threads) {
  using namespace aspectr::nmf;
  arma::mat W = r_view(Wt, "W");
  Rcpp::XPtr<Slots> sl(slots);
  const aspectr::Request r = request_from_r(op, input);
  if (!Rf_isNull(state)) {
    MemoryCells cells(shard_data(state));
    Piece piece(cells, W.memptr(), W.n_rows, W.n_cols, *sl);
    return stats_to_r(piece.run(r, threads));
  }
  if (Rf_isNull(file)) {
    NoCells cells;
    Piece piece(cells, W.memptr(), W.n_rows, W.n_cols, *sl);
    return stats_to_r(piece.run(r, threads));
  }
  Rcpp::List f(file);
  SEXP bufx = f["buffer"];
  Rcpp::XPtr<aspectr::ShardBuffer> buf(bufx);
  const std::string path = Rcpp::as<std::string>(f["path"]);
  const Rcpp::IntegerVector dims = f["dims"];
  {
    aspectr::ShardReader reader(path);
    check_nmf_shard(reader, dims);
  }
  FileCells cells(path, *buf, chunk_cells(Rcpp::as<double>(f["chunk"])), Rcpp::as<double>(f["scale"]), dims[1]);
  Piece piece(cells, W.memptr(), W.n_rows, W.n_cols, *sl);
  return stats_to_r(piece.run(r, threads));
}

// A fit in pieces reached through R (see RPieces): the rule's loop in the
// core's driver. H0: k x n, m: the rows of X. Returns H and the trace; W
// stays with the pieces, rescaled to the returned model.
// [[Rcpp::export]]
Rcpp::List cpp_nmf_pieces_fit(SEXP fn, Rcpp::NumericMatrix H0, double m, std::string loss, std::string method,
                              Rcpp::NumericVector L1, Rcpp::NumericVector L2, double eps, bool accelerate,
                              int max_iter, double tol, int threads, SEXP hook = R_NilValue,
                              bool want_model = false) {
  using namespace aspectr::nmf;
  RPieces P(fn);
  PieceModel M;
  M.H = Rcpp::as<arma::mat>(H0);
  M.P = &P;
  Penalty pen;
  pen.l1w = L1[0]; pen.l1h = L1[1]; pen.l2w = L2[0]; pen.l2h = L2[1];
  aspectr::Control ctl;
  ctl.max_iter = max_iter; ctl.tol = tol; ctl.threads = threads;
  RCallback cb(false, max_iter, "nmf (" + loss + ", " + method + ")", hook, want_model);
  aspectr::FitTrace tr;
  if (loss == "frobenius" && accelerate && (method == "hals" || method == "anls")) {
    if (method == "hals") {
      PieceHER<false> rule(pen, HerParams(), m);
      tr = aspectr::run_solver(rule, P, M, ctl, cb);
    } else {
      PieceHER<true> rule(pen, HerParams(), m);
      tr = aspectr::run_solver(rule, P, M, ctl, cb);
    }
  } else if (loss == "kl") {
    if (method != "mu") Rcpp::stop("internal error: no KL rule in pieces for '%s'", method.c_str());
    PieceKLMU rule(pen, eps);
    tr = aspectr::run_solver(rule, P, M, ctl, cb);
  } else if (method == "hals") {
    PieceHALS rule(pen, m, static_cast<double>(M.H.n_cols));
    tr = aspectr::run_solver(rule, P, M, ctl, cb);
  } else {
    PieceAlternating rule(parse_frob_method(method), pen, eps);
    tr = aspectr::run_solver(rule, P, M, ctl, cb);
  }
  // (the returned model's W: the pieces' rescaled)
  if (M.view.n_elem) P.map(aspectr::Request("scale").with("s", M.view));
  else if (M.pending.n_elem) P.map(aspectr::Request("scale").with("s", M.pending));
  Rcpp::List out = Rcpp::List::create(Rcpp::Named("H") = Rcpp::wrap(M.H));
  add_trace(out, tr);
  return out;
}
