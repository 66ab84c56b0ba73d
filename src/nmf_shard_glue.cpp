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
  // (the cells' rows and columns read in place from the 2 x cells indices)
  const int* ix = idx.begin();
  const std::size_t nnz = val.size();
  using aspectr::nmf::shard_csc;
  Data* X;
  if (layout == 0) {
    X = new Data(aspectr::nmf::shard_data(ix, ix + 1, val.begin(), nnz, dims[0], dims[1], scale, 2));
  } else if (layout == 1) {
    X = new Data(shard_csc(ix, ix + 1, val.begin(), nnz, dims[0], dims[1], scale, 2));
  } else {
    X = new Data(shard_csc(ix + 1, ix, val.begin(), nnz, dims[1], dims[0], scale, 2));
  }
  // (tagged as nmf()'s data: its products for R, cpp_nmf_product())
  return Rcpp::XPtr<Data>(X, true, Rf_install("aspectr_nmf_data"));
}

// cpp_nmf_shard_state() (both layouts) of a .shard file read whole into
// the store's `buffer` (whose memory serves the next shard), with no R
// vectors between: the file's sizes must be `dims`; a fault of its cells
// gives its code instead (1 or 2, see shard_cells_fault()).
// [[Rcpp::export]]
SEXP cpp_nmf_shard_state_file(SEXP buffer, std::string path, Rcpp::IntegerVector dims, double scale) {
  Rcpp::XPtr<aspectr::ShardBuffer> buf(buffer);
  aspectr::read_shard_file(path, *buf);
  if (buf->dims.size() != 2 || static_cast<int>(buf->dims[0]) != dims[0] || static_cast<int>(buf->dims[1]) != dims[1])
    Rcpp::stop("its sizes are not those shards() recorded");
  const std::int32_t* ix = reinterpret_cast<const std::int32_t*>(buf->idx.data());
  const int fault = aspectr::shard_cells_fault(ix, buf->val.data(), buf->nnz, buf->dims);
  if (fault) return Rcpp::wrap(fault);
  Data* X = new Data(aspectr::nmf::shard_data(ix, ix + 1, buf->val.data(), buf->nnz, dims[0], dims[1], scale, 2));
  return Rcpp::XPtr<Data>(X, true, Rf_install("aspectr_nmf_data"));
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
}  // namespace

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
// The weights of a shard's cells in a weighted beta-divergence fit, m x n:
// f_ij (r_i c_j), f_ij = d + delta_ij (as nmf() weighs a matrix in
// memory), from `weights` (list(d, r, c, ei, ej, ev): the shard's part of
// nmf_weight_cells(), rows counted in the shard). For a shard kept in
// memory (`keep`) they are made once and kept in its slots for the rest of
// the fit, as the in-memory fit keeps the whole matrix's; for a shard read
// from its file they are made in `local` for the request alone, so that
// a fit out of core holds one shard's at a time.
const arma::mat& shard_weights(SEXP weights, arma::uword m, aspectr::nmf::Slots& slots, bool keep,
                               arma::mat& local) {
  const Rcpp::List w(weights);
  const Rcpp::NumericVector rw = w["r"], cw = w["c"], ev = w["ev"];
  const Rcpp::IntegerVector ei = w["ei"], ej = w["ej"];
  const double d = Rcpp::as<double>(w["d"]);
  if (static_cast<arma::uword>(rw.size()) != m || ei.size() != ej.size() || ei.size() != ev.size())
    Rcpp::stop("internal error: a shard's weights of the wrong size");
  const arma::uword n = cw.size();
  if (keep) {
    const auto it = slots.find("@weights");
    if (it != slots.end() && it->second.n_rows == m && it->second.n_cols == n) return it->second;
  }
  arma::mat Om(m, n);
  for (arma::uword j = 0; j < n; ++j)
    for (arma::uword i = 0; i < m; ++i) Om(i, j) = d * (rw[i] * cw[j]);
  for (R_xlen_t t = 0; t < ei.size(); ++t) {
    if (ei[t] < 0 || ej[t] < 0 || static_cast<arma::uword>(ei[t]) >= m || static_cast<arma::uword>(ej[t]) >= n)
      Rcpp::stop("internal error: a weighted cell outside the shard");
    Om(ei[t], ej[t]) = (d + ev[t]) * (rw[ei[t]] * cw[ej[t]]);
  }
  // (placed only once whole: a failure leaves no partial weights behind)
  arma::mat& out = keep ? slots["@weights"] : local;
  out = std::move(Om);
  return out;
}

// (the inputs' matrices of doubles viewed in R's memory, not copied: R's
// `input` outlives the request, which only reads them; a request's inputs
// are the same for every shard, and out of core or on a worker a copy of
// each k x n matrix per shard would cost as much as a pass's reading)
aspectr::Request request_from_r(const std::string& op, SEXP input) {
  aspectr::Request r(op);
  Rcpp::List l(input);
  if (l.size() == 0) return r;
  Rcpp::CharacterVector nm = l.names();
  for (R_xlen_t i = 0; i < l.size(); ++i) {
    SEXP v = l[i];
    if (!Rf_isReal(v)) {
      // (not all doubles: copied, as the statistics are)
      r.in = stats_from_r(input).m;
      return r;
    }
  }
  for (R_xlen_t i = 0; i < l.size(); ++i) {
    SEXP v = l[i];
    const arma::uword rows = Rf_isMatrix(v) ? Rf_nrows(v) : Rf_length(v), cols = Rf_isMatrix(v) ? Rf_ncols(v) : 1;
    const std::string name(nm[i]);
    r.in.set(name, arma::mat(REAL(v), rows, cols, false, true));
  }
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
  bool keeps_v() const override { return false; }
  bool whole_columns() const override { return false; }
  void kcd_pass(const arma::mat&, const arma::mat&, arma::mat&, bool, const int*, const int*, const double*,
                arma::mat&, int) override { fail(); }
  double kcd_rows(arma::mat&, const arma::mat&, double, double, int, const arma::mat*) override {
    fail();
    return 0.0;
  }
  bool kcd_columns(arma::mat&, const arma::mat&, const arma::vec&, double, int) override { fail(); return false; }
  const arma::mat& dense(arma::mat&) override { fail(); }

 private:
  [[noreturn]] static void fail() { throw std::logic_error("internal error: a piece's cells read without data"); }
};
}  // namespace

namespace {
// The shards of a fit in this process as the core's pieces, reached
// without a trip through R per request (R/family-nmf-shards.R,
// shard_nmf_local()): each shard's cells (its NMF data kept in memory, or
// its .shard file read a chunk at a time into the store's buffer), its
// rows of W (the store's matrix, written in place) and its slots. A
// request runs on each shard in the store's order and their statistics
// are added as R's shard_add() adds them (the same sums, bit for bit). A
// shard's failure goes to R's fail(i, message), which raises the error
// naming its source. Column pieces, when given, are reached through R.
class StorePieces : public aspectr::Pieces {
 public:
  StorePieces(SEXP local, int threads, SEXP cols) : threads_(threads), cols_(cols) {
    using namespace aspectr::nmf;
    Rcpp::List loc(local);
    fail_ = SEXP(loc["fail"]);
    Rcpp::List shards = loc["shards"];
    for (R_xlen_t i = 0; i < shards.size(); ++i) {
      Rcpp::List s(shards[i]);
      SEXP state = s["state"];
      std::string why;
      try {
        if (!Rf_isNull(state)) {
          cells_.emplace_back(new MemoryCells(shard_data(state), Rcpp::as<bool>(s["kept"])));
        } else {
          const Rcpp::List f = s["file"];
          SEXP bufx = f["buffer"];
          Rcpp::XPtr<aspectr::ShardBuffer> buf(bufx);
          const std::string path = Rcpp::as<std::string>(f["path"]);
          const Rcpp::IntegerVector dims = f["dims"];
          {
            aspectr::ShardReader reader(path);
            check_nmf_shard(reader, dims);
          }
          cells_.emplace_back(new FileCells(path, *buf, chunk_cells(Rcpp::as<double>(f["chunk"])),
                                            Rcpp::as<double>(f["scale"]), dims[1]));
        }
      } catch (const std::exception& e) {
        why = e.what();
      }
      if (!why.empty()) aspectr_r::store_fail(fail_, i, why);
      arma::mat W = r_view(SEXP(s["Wt"]), "W");
      SEXP slx = s["slots"];
      Rcpp::XPtr<Slots> sl(slx);
      pieces_.emplace_back(new Piece(*cells_.back(), W.memptr(), W.n_rows, W.n_cols, *sl));
      // (a weighted beta-divergence fit: the weights of a shard kept in
      // memory, kept in its slots)
      if (s.containsElementNamed("weights")) {
        if (!Rcpp::as<bool>(s["kept"])) Rcpp::stop("internal error: a weighted shard in this process not kept");
        arma::mat none;
        pieces_.back()->weigh(&shard_weights(s["weights"], W.n_cols, *sl, true, none));
      }
    }
  }
  aspectr::Stats map(const aspectr::Request& r) const override {
    return aspectr_r::store_map(pieces_, r, threads_, fail_);
  }
  bool has_columns() const override { return !Rf_isNull(cols_); }
  aspectr::Stats map_columns(const aspectr::Request& r) const override {
    if (Rf_isNull(cols_)) return aspectr::Pieces::map_columns(r);
    return RPieces::call(Rcpp::Function(cols_), r);
  }

 private:
  int threads_;
  SEXP cols_;
  SEXP fail_ = R_NilValue;
  std::vector<std::unique_ptr<aspectr::nmf::Cells>> cells_;
  std::vector<std::unique_ptr<aspectr::nmf::Piece>> pieces_;
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
// k x m_s) written in place, its slots (cpp_piece_slots()) kept. `kept`:
// the shard's data stay in memory for the fit (so may its v of KL
// coordinate descent). `weights`: NULL, or the weights of the shard's
// cells in a weighted beta-divergence fit, list(d, r, c, ei, ej, ev) (its
// part of nmf_weight_cells(), rows counted in the shard).
// [[Rcpp::export]]
Rcpp::List cpp_nmf_piece_run(SEXP state, SEXP file, SEXP Wt, SEXP slots, std::string op, SEXP input,
                             int threads, bool kept, SEXP weights = R_NilValue) {
  using namespace aspectr::nmf;
  arma::mat W = r_view(Wt, "W");
  Rcpp::XPtr<Slots> sl(slots);
  const aspectr::Request r = request_from_r(op, input);
  // (the cells' weights: a kept shard's made at its first request of the
  // fit and kept in its slots, a streamed one's for this request)
  arma::mat Om;
  const arma::mat* om = Rf_isNull(weights) ? nullptr : &shard_weights(weights, W.n_cols, *sl, kept, Om);
  if (!Rf_isNull(state)) {
    MemoryCells cells(shard_data(state), kept);
    Piece piece(cells, W.memptr(), W.n_rows, W.n_cols, *sl);
    piece.weigh(om);
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
  piece.weigh(om);
  return stats_to_r(piece.run(r, threads));
}

// The column pieces of a fit out of core: the request run on every block
// of the copy of the shard files by columns (nmf/columns.h), each with the
// whole W (Wt, k x m); their statistics added. `blocks`: list(paths,
// start (the blocks' first columns, 0-based, and n), buffer, scale, chunk).
// [[Rcpp::export]]
Rcpp::List cpp_nmf_columns_run(SEXP blocks, Rcpp::NumericMatrix Wt, std::string op, SEXP input, int threads) {
  using namespace aspectr::nmf;
  Rcpp::List b(blocks);
  const Rcpp::CharacterVector paths = b["paths"];
  const Rcpp::NumericVector start = b["start"];
  if (start.size() != paths.size() + 1) Rcpp::stop("internal error: a copy by columns without its blocks");
  SEXP bufx = b["buffer"];
  Rcpp::XPtr<aspectr::ShardBuffer> buf(bufx);
  const std::size_t chunk = chunk_cells(Rcpp::as<double>(b["chunk"]));
  const double scale = Rcpp::as<double>(b["scale"]);
  const arma::mat W(Wt.begin(), Wt.nrow(), Wt.ncol(), false, true);
  const aspectr::Request r = request_from_r(op, input);
  aspectr::Stats out;
  for (R_xlen_t i = 0; i < paths.size(); ++i) {
    const arma::uword j0 = static_cast<arma::uword>(start[i]), nb = static_cast<arma::uword>(start[i + 1] - start[i]);
    const Data X(read_column_block(Rcpp::as<std::string>(paths[i]), *buf, chunk, scale, W.n_cols, nb));
    MemoryCells cells(X, false);
    ColumnPiece piece(cells, W, j0, nb);
    if (i == 0) out = piece.run(r, threads);
    else out.add(piece.run(r, threads));
  }
  return stats_to_r(out);
}

// Writes the copy by columns of the shard files `paths` (rows[s] x n each)
// in `dir` (nmf/columns.h), in blocks of at most `block_cells` cells;
// returns the blocks' first columns (0-based) and n.
// [[Rcpp::export]]
Rcpp::NumericVector cpp_kcd_columns_build(Rcpp::CharacterVector paths, Rcpp::NumericVector rows, double n,
                                          double block_cells, double chunk, std::string dir) {
  std::vector<std::string> p(paths.size());
  std::vector<arma::uword> r(paths.size());
  for (R_xlen_t i = 0; i < paths.size(); ++i) {
    p[i] = Rcpp::as<std::string>(paths[i]);
    r[i] = static_cast<arma::uword>(rows[i]);
  }
  aspectr::ShardBuffer buf;
  const std::vector<arma::uword> start = aspectr::nmf::build_column_blocks(
      p, r, static_cast<arma::uword>(n), block_cells, chunk_cells(chunk), dir, buf);
  return Rcpp::NumericVector(start.begin(), start.end());
}

// A fit in pieces reached through R (see RPieces), or, with `local`, the
// shards of this process (list(shards, fail): see StorePieces): the
// rule's loop in the core's driver. H0: k x n, m: the rows of X; `beta`
// and `floor` (cells below it raised to it) of loss = "beta"; `cols`,
// when not NULL, the data's column pieces (RPieces). Returns H and the
// trace; W stays with the pieces, rescaled to the returned model.
// [[Rcpp::export]]
Rcpp::List cpp_nmf_pieces_fit(SEXP fn, Rcpp::NumericMatrix H0, double m, std::string loss, std::string method,
                              Rcpp::NumericVector L1, Rcpp::NumericVector L2, double eps, bool accelerate,
                              double total, int max_iter, double tol, int threads, SEXP hook = R_NilValue,
                              bool want_model = false, double beta = 2.0, double floor = 0.0,
                              SEXP cols = R_NilValue, SEXP local = R_NilValue) {
  using namespace aspectr::nmf;
  std::unique_ptr<aspectr::Pieces> data;
  if (Rf_isNull(local)) data.reset(new RPieces(fn, cols));
  else data.reset(new StorePieces(local, threads, cols));
  const aspectr::Pieces& P = *data;
  PieceModel M;
  M.H = Rcpp::as<arma::mat>(H0);
  M.P = &P;
  const Penalty pen = nmf_penalty(L1, L2);
  const aspectr::Control ctl = fit_control(max_iter, tol, threads);
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
  } else if (loss == "beta") {
    if (method != "mu") Rcpp::stop("internal error: no beta-divergence rule in pieces for '%s'", method.c_str());
    PieceBetaMU rule(beta, pen, eps, floor);
    tr = aspectr::run_solver(rule, P, M, ctl, cb);
  } else if (loss == "kl" && method == "cd") {
    PieceKLCD rule(pen, total);
    tr = aspectr::run_solver(rule, P, M, ctl, cb);
  } else if (loss == "kl") {
    if (method != "mu") Rcpp::stop("internal error: no KL rule in pieces for '%s'", method.c_str());
    if (accelerate) {
      PieceKLHER rule(pen, eps, HerParams());
      tr = aspectr::run_solver(rule, P, M, ctl, cb);
    } else {
      PieceKLMU rule(pen, eps);
      tr = aspectr::run_solver(rule, P, M, ctl, cb);
    }
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
