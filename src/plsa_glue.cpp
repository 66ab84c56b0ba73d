// src/plsa_glue.cpp — exported entry points: convert, call the core, wrap.
// Rcpp's generated wrappers are the single exception boundary of each
// export: std::exception from the core becomes an R error, Rcpp's interrupt
// exception an R interrupt.
#include <limits>
#include "r_adapters.h"
#include <aspectr/solvers/cd_pieces.h>
#include <aspectr/solvers/cp_pieces.h>

using namespace aspectr_r;

// q-EM (or SQUAREM on it) of plsa(loss = "tsallis") on G, a SparseTensor
// or a CscMatrix: the rule in pieces on the data as one piece
template <class DataT>
static aspectr::FitTrace tsallis_fit(const DataT& G, aspectr::AspectModel& M, double q,
                                     const aspectr::Control& ctl, RCallback& cb, const std::string& method,
                                     double& squarem_bound) {
  arma::mat F0 = std::move(M.F[0]);
  aspectr::AspectMemoryPiece<DataT> piece(G, F0, nullptr, q);
  aspectr::LocalPieces<aspectr::AspectMemoryPiece<DataT>> P({&piece}, ctl.threads);
  aspectr::PieceQEM rule(q);
  return aspectr::run_aspect_piece(rule, P, F0, M, ctl, cb, method == "squarem", squarem_bound, &piece);
}

// a plsa() fit's result: the model, the trace, D(G || P) and SQUAREM's step
// bound (to resume the fit where it stopped)
template <class DataT>
static Rcpp::List fit_result(const DataT& G, const aspectr::AspectModel& M, const aspectr::FitTrace& tr,
                             int threads, const std::string& method, double squarem_bound) {
  const double kl = aspectr::evaluate_loss(aspectr::Loss::KL, 1.0, G, M, threads);
  Rcpp::List out = model_to_r(M);
  add_trace(out, tr);
  out["kl"] = kl;
  if (method == "squarem") out["squarem_bound"] = squarem_bound;
  return out;
}

// Dirichlet pseudo-counts in the core's units (divided by the total count
// `total`): `doc` k values or none, `term` k x n_terms or none.
// (NULL: none)
static aspectr::DirichletPrior make_prior(SEXP doc, SEXP term, double total) {
  aspectr::DirichletPrior P;
  if (!Rf_isNull(doc) && Rf_length(doc) > 0) P.doc = Rcpp::as<arma::vec>(doc) / total;
  if (!Rf_isNull(term) && Rf_length(term) > 0) P.term = Rcpp::as<arma::mat>(term) / total;
  return P;
}

// [[Rcpp::export]]
Rcpp::List cpp_plsa_fit(Rcpp::IntegerMatrix idx, Rcpp::NumericVector val,
                        Rcpp::IntegerVector dims, Rcpp::NumericVector lambda,
                        Rcpp::List factors, std::string loss, double q,
                        double tempering, int max_iter, double tol, int threads,
                        bool verbose, bool free_weights = false, SEXP hook = R_NilValue,
                        bool want_model = false, std::string method = "em",
                        double squarem_bound = 1.0,
                        SEXP prior_doc = R_NilValue, SEXP prior_term = R_NilValue) {
  const AspectInput in(idx, val, dims);
  const aspectr::SparseTensor& G = in.G;
  const aspectr::DirichletPrior prior = make_prior(prior_doc, prior_term, in.total);
  if (prior.any() && (loss != "kl" || tempering != 1.0 || G.order() != 2 || G.has_missing()))
    Rcpp::stop("internal error: a prior needs plain KL of a matrix");
  if (loss != "kl" && G.has_missing())
    Rcpp::stop("internal error: missing indices are only supported under KL");
  aspectr::AspectModel M = make_model(lambda, factors);
  aspectr::Control ctl;
  ctl.max_iter = max_iter;
  ctl.tol = tol;
  ctl.threads = threads;
  RCallback cb(verbose, max_iter, "plsa (" + loss + (loss != "l2" ? ", " + method : std::string()) + ")", hook, want_model);
  aspectr::FitTrace tr;
  switch (parse_loss(loss)) {
    case aspectr::Loss::KL: {
      if (method == "cd") {
        if (tempering != 1.0) Rcpp::stop("internal error: coordinate descent has no tempering");
        aspectr::KLCDRule rule(&in.counts, in.total);
        rule.set_prior(&prior);
        tr = aspectr::run_solver(rule, G, M, ctl, cb);
      } else {
        // EM (SQUAREM of it) in pieces on the data as one piece: the piece's
        // E-step with the documents' pseudo-counts, the rule with the terms'
        aspectr::DirichletPrior docs;
        docs.doc = prior.doc;
        aspectr::EMRule em(tempering, &in.counts, in.total);
        em.set_prior(&docs);
        arma::mat F0 = std::move(M.F[0]);
        aspectr::AspectMemoryPiece<aspectr::SparseTensor> piece(G, F0, &em, 1.0);
        aspectr::LocalPieces<aspectr::AspectMemoryPiece<aspectr::SparseTensor>> P({&piece}, ctl.threads);
        aspectr::PieceEM rule(prior.term);
        tr = aspectr::run_aspect_piece(rule, P, F0, M, ctl, cb, method == "squarem", squarem_bound, &piece);
      }
      break;
    }
    case aspectr::Loss::Tsallis: {
      tr = tsallis_fit(G, M, q, ctl, cb, method, squarem_bound);
      break;
    }
    case aspectr::Loss::L2: {
      // the rule of shards (PPSPiecesRule) on the data as one piece, which
      // updates the documents' factor in place
      const arma::uword k = M.lambda.n_elem, d0 = M.F[0].n_cols;
      arma::mat aux(k, d0);  // (the piece's MTTKRP of the documents)
      aspectr::MemoryCPCells cells(G);
      aspectr::CPFrobPiece piece(cells, G.dims, M.F[0].memptr(), k, d0, aux.memptr());
      aspectr::LocalPieces<aspectr::CPFrobPiece> P({&piece}, ctl.threads);
      aspectr::PPSPieceModel PM;
      PM.lambda = std::move(M.lambda);
      PM.F.assign(std::make_move_iterator(M.F.begin() + 1), std::make_move_iterator(M.F.end()));
      PM.P = &P;
      aspectr::PPSPiecesRule rule(free_weights);
      auto give_back = [&] {
        M.lambda = std::move(PM.lambda);
        for (std::size_t n = 0; n < PM.F.size(); ++n) M.F[n + 1] = std::move(PM.F[n]);
      };
      try {
        tr = aspectr::run_solver(rule, static_cast<const aspectr::Pieces&>(P), PM, ctl, cb);
      } catch (...) {
        give_back();
        throw;
      }
      give_back();
      break;
    }
  }
  return fit_result(G, M, tr, threads, method, squarem_bound);
}

// plsa(loss = "tsallis") of a dgCMatrix read in place (its slots i, p and
// x; no stored zeros, checked by the caller): the cells of cpp_plsa_fit()'s
// tensor ordered by column, without its index matrix (8 bytes a cell).
// Returns what cpp_plsa_fit() returns, equal to it bit for bit.
// [[Rcpp::export]]
Rcpp::List cpp_plsa_tsallis_csc(Rcpp::IntegerVector i, Rcpp::IntegerVector p, Rcpp::NumericVector x,
                                Rcpp::IntegerVector dims, Rcpp::NumericVector lambda, Rcpp::List factors,
                                double q, int max_iter, double tol, int threads, bool verbose,
                                SEXP hook = R_NilValue, bool want_model = false, std::string method = "em",
                                double squarem_bound = 1.0) {
  aspectr::CscMatrix view = csc_view(i, p, x, dims);
  aspectr::CscMatrix copy;
  const aspectr::CscMatrix* data = &view;
  if (!view.normalize_scales()) {
    // (1 / max not a normal number: the values divided in a copy of their
    // own, as AspectInput does; view.val is R's memory, which an
    // assignment would overwrite)
    aspectr::SparseTensor values;
    values.val = arma::vec(x.begin(), static_cast<arma::uword>(x.size()));
    values.normalize();
    copy.dims = view.dims;
    copy.p = view.p;
    copy.rows = view.rows;
    copy.val = std::move(values.val);
    data = &copy;
  }
  const aspectr::CscMatrix& G = *data;
  aspectr::AspectModel M = make_model(lambda, factors);
  const aspectr::Control ctl{max_iter, tol, threads};
  RCallback cb(verbose, max_iter, "plsa (tsallis, " + method + ")", hook, want_model);
  const aspectr::FitTrace tr = tsallis_fit(G, M, q, ctl, cb, method, squarem_bound);
  return fit_result(G, M, tr, threads, method, squarem_bound);
}

// One shard's part of a sharded EM (or tempered EM) iteration: the E-step
// statistics of the cells of one shard (documents split by rows, every
// other mode whole), with the values normalized by the whole data's
// maximum `top` and scaled total `scaled` (sum of val / top over all
// shards) so that the parts add up to the in-memory fit's. `factors[0]` is
// the shard's own document factor. Factors and statistics are in the
// core's layout (k x d_n). Returns the statistics, the posterior sums, D(G || P) of the model entering the step
// and its merit (see EMRule::estep) over this shard's cells, and this
// shard's sum g log g (`glogg`, when finite, is taken as that sum instead
// of computing it). With `loss_only`, only `value` (D(G || P) of M).
// (The factors come and go in the core's layout, k x d_n, read in place:
// copies and transposes of the k x (columns) matrices cost as much as a
// third of a pass over a shard.)
static Rcpp::List em_shard_rule(aspectr::EMRule& rule, const aspectr::SparseTensor& G,
                                Rcpp::NumericVector lambda, Rcpp::List factors, int threads,
                                bool loss_only, SEXP acc);

// The model of a shard's step: R's factors (k x d_n, the core's layout)
// viewed in place, checked against the shard's sizes.
static aspectr::AspectModel shard_model(Rcpp::NumericVector lambda, Rcpp::List factors,
                                        const std::vector<arma::uword>& dims) {
  aspectr::AspectModel M;
  M.lambda = Rcpp::as<arma::vec>(lambda);
  if (static_cast<std::size_t>(factors.size()) != dims.size()) Rcpp::stop("internal error: factors of the wrong order");
  for (R_xlen_t n = 0; n < factors.size(); ++n) {
    Rcpp::NumericMatrix f = factors[n];
    if (f.ncol() != static_cast<int>(dims[static_cast<std::size_t>(n)]) || f.nrow() != static_cast<int>(M.lambda.n_elem))
      Rcpp::stop("internal error: a factor of the wrong size");
    M.F.emplace_back(f.begin(), f.nrow(), f.ncol(), false, true);
  }
  return M;
}

// y added to the R matrix a of the same size (a shared mode's statistics
// to the caller's accumulator)
static void add_to_accumulator(Rcpp::NumericMatrix a, const arma::mat& y) {
  if (static_cast<arma::uword>(a.size()) != y.n_elem) Rcpp::stop("internal error: accumulator of the wrong size");
  double* ap = a.begin();
  const double* yp = y.memptr();
  for (arma::uword e = 0; e < y.n_elem; ++e) ap[e] += yp[e];
}

// A shard's E-step statistics as R's reply (see em_shard_rule()).
static Rcpp::List em_shard_reply(aspectr::EMRule& rule, std::vector<arma::mat>& Y, const arma::vec& lam,
                                 double before, double merit, SEXP acc) {
  // `acc`: matrices the caller made for this call, one per shared mode, to
  // which the statistics of those modes are added in place (no R object of
  // k x (columns) per shard); only the documents' come back then
  const bool add = !Rf_isNull(acc);
  Rcpp::List y(add ? 1 : Y.size());
  for (std::size_t n = 0; n < Y.size(); ++n) {
    if (add && n > 0) {
      add_to_accumulator(Rcpp::List(acc)[static_cast<R_xlen_t>(n - 1)], Y[n]);
      Y[n].reset();
      continue;
    }
    Rcpp::NumericMatrix out(static_cast<int>(Y[n].n_rows), static_cast<int>(Y[n].n_cols));
    if (Y[n].n_elem) std::memcpy(out.begin(), Y[n].memptr(), sizeof(double) * Y[n].n_elem);
    Y[n].reset();
    y[n] = out;
  }
  return Rcpp::List::create(Rcpp::Named("y") = y,
                            Rcpp::Named("lam") = Rcpp::NumericVector(lam.begin(), lam.end()),
                            Rcpp::Named("value") = before, Rcpp::Named("merit") = merit,
                            Rcpp::Named("glogg") = rule.glogg());
}

static Rcpp::List em_shard_rule(aspectr::EMRule& rule, const aspectr::SparseTensor& G,
                                Rcpp::NumericVector lambda, Rcpp::List factors, int threads,
                                bool loss_only, SEXP acc) {
  const aspectr::AspectModel M = shard_model(lambda, factors, G.dims);
  if (loss_only) return Rcpp::List::create(Rcpp::Named("value") = rule.loss(G, M, threads),
                                           Rcpp::Named("penalty") = rule.penalty(M));
  std::vector<arma::mat> Y;
  arma::vec lam;
  double merit = 0.0;
  const double before = rule.estep(G, M, threads, &merit, Y, lam);
  return em_shard_reply(rule, Y, lam, before, merit, acc);
}

// The end of a step in place (see cpp_em_shard_file()): the documents'
// statistics written over factors[0] in the rows of components with mass
// in this shard (the others keep the old factor and come back in `dead`),
// their row sums (`colsum`), the shared modes' statistics added to `acc`.
static Rcpp::List em_in_place_reply(aspectr::EMRule& rule, aspectr::EMRule::Pass& P, Rcpp::List factors,
                                    SEXP acc) {
  arma::vec lam;
  double merit = 0.0;
  const double before = rule.pass_finish(P, &merit, lam);
  const arma::mat& Y0 = P.A[0];
  const arma::uword k = Y0.n_rows, d = Y0.n_cols;
  Rcpp::NumericVector cs(k);
  Rcpp::LogicalVector dead(k);
  for (arma::uword r = 0; r < k; ++r) {
    double tot = 0.0;
    for (arma::uword i = 0; i < d; ++i) tot += Y0(r, i);
    cs[r] = tot;
    dead[r] = !(tot > 0.0 && std::isfinite(tot));
  }
  double* f = Rcpp::NumericMatrix(factors[0]).begin();
  for (arma::uword i = 0; i < d; ++i) {
    for (arma::uword r = 0; r < k; ++r) {
      if (!dead[r]) f[r + i * k] = Y0(r, i);
    }
  }
  Rcpp::List A(acc);
  for (std::size_t n = 1; n < P.A.size() - 1; ++n) add_to_accumulator(A[static_cast<R_xlen_t>(n - 1)], P.A[n]);
  return Rcpp::List::create(Rcpp::Named("lam") = Rcpp::NumericVector(lam.begin(), lam.end()),
                            Rcpp::Named("value") = before, Rcpp::Named("merit") = merit,
                            Rcpp::Named("glogg") = rule.glogg(), Rcpp::Named("colsum") = cs,
                            Rcpp::Named("dead") = dead, Rcpp::Named("in_place") = true);
}

// A shard kept in memory for a whole fit (by the master or a worker): its
// normalized tensor and the EM rule bound to it, made once, so that each
// pass costs only the pass (the R objects stay alive with it).
struct ShardState {
  Rcpp::IntegerMatrix idx;
  Rcpp::NumericVector val;
  arma::vec counts;
  aspectr::SparseTensor G;
  std::unique_ptr<aspectr::EMRule> rule;
  aspectr::DirichletPrior prior;
};

// [[Rcpp::export]]
SEXP cpp_em_shard_state(Rcpp::IntegerMatrix idx, Rcpp::NumericVector val, Rcpp::IntegerVector dims,
                        double tempering, double total, double top, double scaled, double glogg,
                        SEXP doc_prior = R_NilValue) {
  std::unique_ptr<ShardState> st(new ShardState());
  st->idx = idx;
  st->val = val;
  st->counts = r_vector_view(st->val);
  st->G = shard_scaled_tensor(st->idx, st->val, dims, top, scaled);
  st->rule.reset(new aspectr::EMRule(tempering, &st->counts, total));
  if (std::isfinite(glogg)) st->rule->set_glogg(glogg);
  st->prior = make_prior(doc_prior, R_NilValue, total);
  st->rule->set_prior(&st->prior);
  st->rule->bind(st->G);
  return Rcpp::XPtr<ShardState>(st.release(), true);
}

// A shard's E-step statistics (or its loss) from its state; with `work` (a buffer of the store's,
// shared by its shards: cpp_shard_buffer()) a step in place as for
// cpp_em_shard_file(), its matrices in the buffer's workspace
// [[Rcpp::export]]
Rcpp::List cpp_em_shard_run(SEXP state, Rcpp::NumericVector lambda, Rcpp::List factors, int threads,
                            bool loss_only = false, SEXP acc = R_NilValue, SEXP work = R_NilValue) {
  Rcpp::XPtr<ShardState> st(state);
  aspectr::EMRule& rule = *st->rule;
  const bool posterior = rule.beta() == 1.0 && (st->G.order() > 3 || rule.data_missing());
  if (Rf_isNull(work) || loss_only || posterior || Rf_isNull(acc))
    return em_shard_rule(rule, st->G, lambda, factors, threads, loss_only, acc);
  Rcpp::XPtr<aspectr::ShardBuffer> buf(work);
  const aspectr::AspectModel M = shard_model(lambda, factors, st->G.dims);
  aspectr::EMRule::Pass P;
  rule.pass_begin(M, st->G.dims, rule.data_missing(), P, &buf->work);
  rule.pass_add(st->G, M, threads, P);
  return em_in_place_reply(rule, P, factors, acc);
}

// A buffer for shard files, kept by a store across the reads of an
// out-of-core fit (see aspectr/shard_file.h).
// [[Rcpp::export]]
SEXP cpp_shard_buffer() {
  return Rcpp::XPtr<aspectr::ShardBuffer>(new aspectr::ShardBuffer(), true);
}

// cpp_em_shard_run() of a shard file read `chunk` cells at a time into
// `buffer` (the pass's sums over the chunks, see EMRule::Pass); `dims` are
// the sizes the file must have (its rows, then the shared modes), `top`
// the largest raw value of all the shards, `missing` whether shards()
// found cells missing a mode in it.
//
// `in_place` (a step of plain or tempered EM in the MTTKRP form, `acc`
// given): after the first call, one thread allocates no memory of the
// factors' size. The pass's matrices live in the buffer's workspace (kept
// by the store for all its shards); the documents' statistics are
// written over factors[0] (the caller's own matrix, which the pass reads
// through its copy) in the rows of components with mass in this shard,
// the others keeping the old factor and coming back in `dead`; `colsum`
// are the rows' sums (see cpp_em_normalize_in_place()).
// [[Rcpp::export]]
Rcpp::List cpp_em_shard_file(SEXP buffer, std::string path, Rcpp::IntegerVector dims,
                             Rcpp::NumericVector lambda, Rcpp::List factors, double tempering,
                             double total, double top, double scaled, int threads,
                             bool loss_only = false, double glogg = NA_REAL, SEXP acc = R_NilValue,
                             bool missing = false, double chunk = 65536, bool in_place = false,
                             SEXP doc_prior = R_NilValue) {
  Rcpp::XPtr<aspectr::ShardBuffer> buf(buffer);
  if (!(chunk >= 1.0)) Rcpp::stop("internal error: a chunk of no cells");
  const std::size_t cells = chunk < 9e15 ? static_cast<std::size_t>(chunk) : static_cast<std::size_t>(9e15);
  const std::vector<arma::uword> want(dims.begin(), dims.end());
  const bool posterior = tempering == 1.0 && (want.size() > 3 || missing);
  in_place = in_place && !loss_only && !posterior;
  if (in_place && Rf_isNull(acc)) Rcpp::stop("internal error: a step in place without accumulators");
  aspectr::ShardReader reader(path);
  if (reader.dims() != want) Rcpp::stop("its sizes differ from those shards() recorded");
  const aspectr::AspectModel M = shard_model(lambda, factors, want);
  aspectr::EMRule rule(tempering, nullptr, total);
  if (std::isfinite(glogg)) rule.set_glogg(glogg);
  const aspectr::DirichletPrior prior = make_prior(doc_prior, R_NilValue, total);
  rule.set_prior(&prior);
  aspectr::EMRule::Pass P;
  if (!loss_only) rule.pass_begin(M, want, missing, P, in_place ? &buf->work : nullptr);
  double parts = 0.0;
  while (reader.next(*buf, cells)) {
    const aspectr::SparseTensor G = aspectr::shard_tensor(*buf, want, top, scaled);
    const arma::vec counts(buf->val.data(), buf->nnz, false, true);
    rule.next_piece(&counts, top);
    if (loss_only) parts += rule.loss_piece(G, M, threads);
    else rule.pass_add(G, M, threads, P);
  }
  if (loss_only) return Rcpp::List::create(Rcpp::Named("value") = rule.loss_end(parts) + rule.penalty(M),
                                           Rcpp::Named("penalty") = rule.penalty(M));
  if (in_place) return em_in_place_reply(rule, P, factors, acc);
  arma::vec lam;
  double merit = 0.0;
  std::vector<arma::mat> Y;
  const double before = rule.pass_end(P, &merit, Y, lam);
  P = aspectr::EMRule::Pass();
  return em_shard_reply(rule, Y, lam, before, merit, acc);
}

// The documents' factor of a shard after an in-place step (see
// cpp_em_shard_file()), normalized in place by the statistics' row sums
// over all shards `colsum`: row r divided by colsum[r], or zero where this
// shard gave it no mass (`dead`); a row without mass in any shard keeps
// the old factor (as normalize_rows() in memory).
// [[Rcpp::export]]
void cpp_em_normalize_in_place(Rcpp::NumericMatrix F0, Rcpp::NumericVector colsum, Rcpp::LogicalVector dead) {
  const R_xlen_t k = F0.nrow(), d = F0.ncol();
  if (colsum.size() != k || dead.size() != k) Rcpp::stop("internal error: row sums of the wrong length");
  double* f = F0.begin();
  for (R_xlen_t r = 0; r < k; ++r) {
    const double s = colsum[r];
    if (!(s > 0.0 && std::isfinite(s))) continue;
    if (dead[r]) {
      for (R_xlen_t i = 0; i < d; ++i) f[r + i * k] = 0.0;
    } else {
      for (R_xlen_t i = 0; i < d; ++i) f[r + i * k] /= s;
    }
  }
}

// A shard file as R's internal data form (idx, val, dims), for reading it
// whole (shards(), workers that keep their shards): read straight into the
// R vectors, and checked (`fault`: 0 sound, 1 a value not positive and
// finite, 2 an index outside its mode, see shard_cells_fault()).
// [[Rcpp::export]]
Rcpp::List cpp_read_shard_file(std::string path) {
  Rcpp::IntegerMatrix idx;
  Rcpp::NumericVector val;
  Rcpp::IntegerVector dims;
  std::vector<arma::uword> dm;
  aspectr::read_shard_file_into(path, [&](const std::vector<arma::uword>& d, std::size_t nnz) {
    dm = d;
    if (nnz > static_cast<std::size_t>(std::numeric_limits<int>::max()))
      throw std::runtime_error("shard file " + path + " holds more cells than R's matrices of indices allow");
    idx = Rcpp::IntegerMatrix(Rcpp::no_init(static_cast<int>(d.size()), static_cast<int>(nnz)));
    val = Rcpp::NumericVector(Rcpp::no_init(static_cast<R_xlen_t>(nnz)));
    return std::pair<void*, double*>(idx.begin(), val.begin());
  });
  dims = Rcpp::IntegerVector(dm.size());
  for (std::size_t n = 0; n < dm.size(); ++n) dims[n] = static_cast<int>(dm[n]);
  const int fault = aspectr::shard_cells_fault(idx.begin(), val.begin(), static_cast<std::size_t>(val.size()), dm);
  return Rcpp::List::create(Rcpp::Named("idx") = idx, Rcpp::Named("val") = val,
                            Rcpp::Named("dims") = dims, Rcpp::Named("fault") = fault);
}

// [[Rcpp::export]]
double cpp_loss(Rcpp::IntegerMatrix idx, Rcpp::NumericVector val, Rcpp::IntegerVector dims,
                Rcpp::NumericVector lambda, Rcpp::List factors, std::string loss,
                double q, int threads) {
  const AspectInput in(idx, val, dims);
  const aspectr::AspectModel M = make_model(lambda, factors);
  return aspectr::evaluate_loss(parse_loss(loss), q, in.G, M, threads);
}

// Fold-in of documents given in compressed-row form (0-based term indices).
// V is n_terms x k. Returns n_docs x k.
// [[Rcpp::export]]
Rcpp::NumericMatrix cpp_foldin(Rcpp::NumericVector rowptr, Rcpp::IntegerVector col,
                               Rcpp::NumericVector val, Rcpp::NumericMatrix V,
                               Rcpp::NumericVector prior, std::string loss, double q,
                               int max_iter, double tol, int threads, SEXP alpha = R_NilValue) {
  aspectr::FoldinData D;
  D.rowptr.assign(rowptr.begin(), rowptr.end());
  D.col.assign(col.begin(), col.end());
  D.val.assign(val.begin(), val.end());
  const arma::mat Vt = Rcpp::as<arma::mat>(V).t();
  const arma::vec pr = Rcpp::as<arma::vec>(prior);
  arma::vec al;
  if (!Rf_isNull(alpha)) al = Rcpp::as<arma::vec>(alpha);
  const arma::mat theta = aspectr::fold_in(D, Vt, pr, parse_loss(loss), q, max_iter, tol, threads,
                                           Rf_isNull(alpha) ? nullptr : &al);
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
                       int max_iter, double tol, int threads, bool verbose,
                       SEXP hook = R_NilValue, bool want_model = false, double top = 1.0) {
  // the values divided by `top` as they are read (not copied)
  const aspectr::SparseTensor X = shard_scaled_tensor(idx, val, dims, top, 1.0);
  Rcpp::NumericVector ones(Rcpp::as<Rcpp::NumericMatrix>(factors[0]).ncol(), 1.0);
  aspectr::AspectModel M = make_model(ones, factors);
  aspectr::Control ctl;
  ctl.max_iter = max_iter;
  ctl.tol = tol;
  ctl.threads = threads;
  RCallback cb(verbose, max_iter, "ntf (" + method + ")", hook, want_model);
  aspectr::CPFrobMethod m;
  if (method == "hals") m = aspectr::CPFrobMethod::HALS;
  else if (method == "mu") m = aspectr::CPFrobMethod::MU;
  else Rcpp::stop("internal error: unknown method '" + method + "'");
  // the rule of shards (cp_pieces.h) on the data as one piece, which
  // updates the first factor in place
  aspectr::MemoryCPCells cells(X);
  aspectr::CPFrobPiece piece(cells, X.dims, M.F[0].memptr(), M.F[0].n_rows, M.F[0].n_cols);
  aspectr::LocalPieces<aspectr::CPFrobPiece> P({&piece}, threads);
  aspectr::CPFrobPieceModel PM;
  PM.F.assign(std::make_move_iterator(M.F.begin() + 1), std::make_move_iterator(M.F.end()));
  PM.P = &P;
  aspectr::CPFrobPiecesRule rule(m);
  const aspectr::FitTrace tr = aspectr::run_solver(rule, static_cast<const aspectr::Pieces&>(P), PM, ctl, cb);
  if (!PM.scale0.is_empty()) PM.apply_pending();
  for (std::size_t n = 0; n < PM.F.size(); ++n) M.F[n + 1] = std::move(PM.F[n]);
  Rcpp::List out = model_to_r(M);
  add_trace(out, tr);
  return out;
}

// nmf()'s data, made once per fit (R/nmf.R's nmf_ptr()) and used by its
// starts, its SVD and its predictions: dense X (m x n, used in place when it
// holds doubles) or sparse X in compressed-column form (i, p, x: used in
// place, the matrix's entries x / div). X' (X's rows, 12 bytes per
// non-zero) is copied now when `rows`, otherwise when an update first needs
// it (KL's); without it, (X H')' is computed from X's columns. When
// `symmetric`, X' is X, as for symnmf(); `triangle`: X is symmetric and
// only one triangle of it is given (a dsCMatrix's slots). The R vectors the data use are kept
// alive by the external pointer's protected field.
static SEXP nmf_data_tag() { return Rf_install("aspectr_nmf_data"); }

// [[Rcpp::export]]
SEXP cpp_nmf_data(SEXP dense, SEXP si, SEXP sp, SEXP sx, Rcpp::IntegerVector dims, double div,
                  bool symmetric = false, bool rows = true, bool triangle = false) {
  using aspectr::nmf::Data;
  if (dims.size() != 2 || dims[0] < 0 || dims[1] < 0) Rcpp::stop("internal error: nmf data need two dimensions");
  if (!(div > 0.0) || !std::isfinite(div)) Rcpp::stop("internal error: the data's divisor must be positive");
  if (!Rf_isNull(dense)) {
    if (TYPEOF(dense) == REALSXP) {
      const Rcpp::NumericMatrix D(dense);
      if (div != 1.0) Rcpp::stop("internal error: dense nmf data are scaled in R");
      std::unique_ptr<Data> X(new Data(REAL(dense), D.nrow(), D.ncol()));
      Rcpp::XPtr<Data> out(X.get(), true, nmf_data_tag(), dense);
      X.release();
      return out;
    }
    std::unique_ptr<Data> X(new Data(Rcpp::as<arma::mat>(Rcpp::NumericMatrix(dense))));
    Rcpp::XPtr<Data> out(X.get(), true, nmf_data_tag());
    X.release();
    return out;
  }
  // the vectors borrowed are those the pointer protects (coerced once if
  // they are not of the type the core reads)
  Rcpp::IntegerVector i(si), p(sp);
  Rcpp::NumericVector x(sx);
  const arma::uword m = dims[0], n = dims[1];
  const std::size_t nnz = x.size();
  if (static_cast<std::size_t>(i.size()) != nnz || static_cast<arma::uword>(p.size()) != n + 1 ||
      p[0] != 0 || static_cast<std::size_t>(p[n]) != nnz)
    Rcpp::stop("internal error: inconsistent compressed-column data");
  aspectr::nmf::Csc c;
  c.n_rows = m; c.n_cols = n;
  c.p.resize(n + 1);
  for (arma::uword j = 0; j <= n; ++j) {
    if (j > 0 && p[j] < p[j - 1]) Rcpp::stop("internal error: decreasing column pointers");
    c.p[j] = static_cast<arma::uword>(p[j]);
  }
  for (std::size_t s = 0; s < nnz; ++s)
    if (i[s] < 0 || static_cast<arma::uword>(i[s]) >= m) Rcpp::stop("internal error: a row index is out of range");
  // (int and uint32 may alias: the indices are non-negative)
  c.borrow(reinterpret_cast<const std::uint32_t*>(INTEGER(i)), REAL(x), nnz, div);
  const Rcpp::List keep = Rcpp::List::create(i, x);  // (made before the Data, which it must not leak)
  std::unique_ptr<Data> X(triangle ? new Data(std::move(c), Data::Triangle{})
                          : symmetric ? new Data(std::move(c), Data::Symmetric{}) : new Data(std::move(c)));
  if (rows && !triangle) X->need_rows();
  Rcpp::XPtr<Data> out(X.get(), true, nmf_data_tag(), keep);
  X.release();
  return out;
}

// Whether `data` is cpp_nmf_data()'s pointer and still in memory (not, for
// instance, after it was sent to another R process).
// [[Rcpp::export]]
bool cpp_nmf_data_alive(SEXP data) {
  return TYPEOF(data) == EXTPTRSXP && R_ExternalPtrTag(data) == nmf_data_tag() &&
         R_ExternalPtrAddr(data) != nullptr;
}

static const aspectr::nmf::Data& nmf_data_of(SEXP data) {
  if (!cpp_nmf_data_alive(data))
    Rcpp::stop("internal error: nmf data are not (or no longer) in memory");
  return *static_cast<aspectr::nmf::Data*>(R_ExternalPtrAddr(data));
}

// Products with nmf()'s data for R (the SVD of the start, the final error):
// "WtX": W' X (k x n) for W (m x k); "XZ": X Z (m x l) for Z (n x l);
// "XtQ": X' Q (n x l) for Q (m x l).
// [[Rcpp::export]]
Rcpp::NumericMatrix cpp_nmf_product(SEXP data, Rcpp::NumericMatrix F, std::string which, int threads) {
  const aspectr::nmf::Data& X = nmf_data_of(data);
  const bool tn = which == "WtX" || which == "XtQ";
  if (!tn && which != "XZ") Rcpp::stop("internal error: unknown product '" + which + "'");
  if (static_cast<arma::uword>(F.nrow()) != (tn ? X.n_rows() : X.n_cols()))
    Rcpp::stop("internal error: non-conformable arguments");
  // F's columns as the kernels' rows (a copy of F, not of the data); the
  // answer written straight into the R matrix returned
  const arma::mat Ft = arma::mat(REAL(F), F.nrow(), F.ncol(), false, true).t();
  arma::mat out;
  if (tn) X.WtX(Ft, out, threads); else X.XHt(Ft, out, threads);
  const bool as_is = which == "WtX";
  Rcpp::NumericMatrix res(as_is ? out.n_rows : out.n_cols, as_is ? out.n_cols : out.n_rows);
  arma::mat r(REAL(res), res.nrow(), res.ncol(), false, true);
  if (as_is) r = out; else r = out.t();
  return res;
}

// Data in pieces for the range finder (aspectr/nmf/range.h), each piece
// holding its block of Q' where its data are: fn(op, arg), an R function
// (range_pieces()) that runs a step on every piece and adds or binds their
// answers in the pieces' order: "start" (arg Ht, l x n: each piece keeps
// (X H')', the Gram back), "apply" (arg R^-1, l x l: the Gram back), "btx"
// (Q' X, l x n), "gather" (Q', l x m), "set" (arg Q'), "left" (arg U,
// l x k: Q U, m x k, or 0 x k when the pieces keep their rows of it; the
// pieces let their blocks go).
namespace {
struct RRangePieces : aspectr::nmf::RangePieces {
  SEXP fn;
  arma::uword m, n, l = 0;
  RRangePieces(SEXP f, arma::uword m_, arma::uword n_) : fn(f), m(m_), n(n_) {}
  void call(const char* op, const arma::mat& arg, arma::mat* out, arma::uword rows, arma::uword cols,
            bool kept = false);
  void start(const arma::mat& Ht, arma::mat& G) override {
    l = Ht.n_rows;
    call("start", Ht, &G, l, l);
  }
  void apply(const arma::mat& Ri, arma::mat& G) override { call("apply", Ri, &G, l, l); }
  void btx(arma::mat& B) override { call("btx", arma::mat(), &B, l, n); }
  void gather(arma::mat& Qt) override { call("gather", arma::mat(), &Qt, l, m); }
  void set(const arma::mat& Qt) override { call("set", Qt, nullptr, 0, 0); }
  // (0 rows: each piece keeps its rows of u, see nmf_shard_session())
  void left(const arma::mat& U, arma::mat& u) override { call("left", U, &u, m, U.n_cols, true); }
};
// (one call for every step: its answer checked for size and finiteness)
__attribute__((noinline)) void RRangePieces::call(const char* op, const arma::mat& arg, arma::mat* out,
                                                  arma::uword rows, arma::uword cols, bool kept) {
  Rcpp::Function f(fn);
  Rcpp::NumericMatrix a(arg.n_rows, arg.n_cols);
  std::copy(arg.begin(), arg.end(), a.begin());
  SEXP r = f(Rcpp::CharacterVector::create(op), a);
  if (out == nullptr) return;
  if (kept && Rf_isReal(r) && Rf_isMatrix(r) && Rf_nrows(r) == 0) rows = 0;
  if (!Rf_isReal(r) || !Rf_isMatrix(r) || static_cast<arma::uword>(Rf_nrows(r)) != rows ||
      static_cast<arma::uword>(Rf_ncols(r)) != cols)
    Rcpp::stop("internal error: a step of the range's pieces has the wrong size");
  *out = arma::mat(REAL(r), rows, cols);
  if (!out->is_finite()) Rcpp::stop("the data's products are not finite");
}
}  // namespace

// The leading k singular triplets of nmf()'s data by the randomized range
// finder (aspectr/nmf/range.h) from the n x l test matrix Omega: d, u
// (m x k, or 0 x k when the pieces keep their rows of it), v (n x k).
// `data`: nmf()'s data, or for data in pieces an R function of the
// pieces' steps (RRangePieces) with `dims` (m, n).
// [[Rcpp::export]]
Rcpp::List cpp_nmf_range_svd(SEXP data, Rcpp::NumericMatrix Omega, int power, int k, int threads,
                             Rcpp::Nullable<Rcpp::NumericVector> dims = R_NilValue) {
  const arma::mat Om(REAL(Omega), Omega.nrow(), Omega.ncol(), false, true);
  arma::vec d;
  arma::mat u, v;
  bool ok;
  if (Rf_isFunction(data)) {
    const Rcpp::NumericVector dm(dims.get());
    RRangePieces P(data, static_cast<arma::uword>(dm[0]), static_cast<arma::uword>(dm[1]));
    if (static_cast<arma::uword>(Omega.nrow()) != P.n || k > Omega.ncol())
      Rcpp::stop("internal error: non-conformable arguments");
    ok = aspectr::nmf::range_svd_pieces(P, Om, power, k, d, u, v);
  } else {
    const aspectr::nmf::Data& X = nmf_data_of(data);
    if (static_cast<arma::uword>(Omega.nrow()) != X.n_cols() || k > Omega.ncol())
      Rcpp::stop("internal error: non-conformable arguments");
    ok = aspectr::nmf::range_svd(X, Om, power, k, threads, d, u, v);
  }
  if (!ok) Rcpp::stop("the SVD of the data's range failed");
  return Rcpp::List::create(Rcpp::Named("d") = Rcpp::NumericVector(d.begin(), d.end()),
                            Rcpp::Named("u") = u, Rcpp::Named("v") = v);
}

// A piece's block of the range (Qt: l x its rows) for range_pieces():
// "gram" gives its Gram (l x l); "apply" gives list(Qt = Qt R^-1 as rows,
// G = its Gram) for Ri = R^-1 (l x l, upper triangular).
// [[Rcpp::export]]
SEXP cpp_range_piece(std::string op, Rcpp::NumericMatrix Qt, Rcpp::Nullable<Rcpp::NumericMatrix> Ri,
                     int threads) {
  const std::size_t l = Qt.nrow(), cols = Qt.ncol();
  arma::mat G;
  if (op == "gram") {
    aspectr::nmf::gram_rows(REAL(Qt), l, cols, G, threads);
    return Rcpp::wrap(G);
  }
  if (op != "apply") Rcpp::stop("internal error: unknown step of a range's piece");
  const Rcpp::NumericMatrix r(Ri.get());
  if (static_cast<std::size_t>(r.nrow()) != l || static_cast<std::size_t>(r.ncol()) != l)
    Rcpp::stop("internal error: non-conformable arguments");
  Rcpp::NumericMatrix out(l, cols);
  std::copy(Qt.begin(), Qt.end(), out.begin());
  aspectr::nmf::apply_rinv(REAL(out), l, cols, arma::mat(REAL(r), l, l, false, true));
  aspectr::nmf::gram_rows(REAL(out), l, cols, G, threads);
  return Rcpp::List::create(Rcpp::Named("Qt") = out, Rcpp::Named("G") = G);
}

// The range finder's orthonormalization alone (for the tests).
// [[Rcpp::export]]
Rcpp::NumericMatrix cpp_orthonormalize(Rcpp::NumericMatrix Y, int threads) {
  arma::mat Qt = Rcpp::as<arma::mat>(Y).t();
  aspectr::nmf::orthonormalize_rows(Qt, threads);
  return Rcpp::wrap(arma::mat(Qt.t()));
}

// The one table of nmf()'s solvers: loss, method, whether it is the loss's
// default, and the rule that runs it (`accelerate` picks the extrapolated
// variant where there is one). The R side validates the user's strings
// against this table (cpp_nmf_solvers()), and an unknown pair is an error.
namespace {
struct NmfArgs {
  aspectr::nmf::Penalty pen;
  double beta, eps;
  bool accelerate;
};
// A rule of nmf/piece.h on the matrix as one piece: the rule that shards,
// shard files and clusters run too
template <class Rule, class Callback>
aspectr::FitTrace run_one_piece(Rule& rule, const aspectr::nmf::Data& X, aspectr::nmf::Model& M,
                                const aspectr::Control& ctl, Callback& cb) {
  using namespace aspectr::nmf;
  MemoryCells cells(X);
  Slots slots;
  Piece piece(cells, M.Wt.memptr(), M.Wt.n_rows, M.Wt.n_cols, slots);
  aspectr::LocalPieces<Piece> P({&piece}, ctl.threads);
  PieceModel PM;
  PM.H = std::move(M.H);
  PM.P = &P;
  const aspectr::FitTrace tr = aspectr::run_solver(rule, P, PM, ctl, cb);
  if (PM.view.n_elem) P.map(aspectr::Request("scale").with("s", PM.view));
  else if (PM.pending.n_elem) P.map(aspectr::Request("scale").with("s", PM.pending));
  M.H = std::move(PM.H);
  return tr;
}
using NmfRun = aspectr::FitTrace (*)(const aspectr::nmf::Data&, aspectr::nmf::Model&,
                                     const aspectr::Control&, RCallback&, const NmfArgs&);
struct NmfSolver {
  const char* loss;
  const char* method;
  bool is_default;
  NmfRun run;
};
using namespace aspectr::nmf;
const NmfSolver kNmfSolvers[] = {
  {"frobenius", "hals", true, [](const Data& X, Model& M, const aspectr::Control& c, RCallback& cb, const NmfArgs& a) {
     if (a.accelerate) {
       PieceHER<false> r(a.pen, HerParams(), static_cast<double>(X.n_rows()));
       return run_one_piece(r, X, M, c, cb);
     }
     PieceHALS r(a.pen, static_cast<double>(X.n_rows()), static_cast<double>(X.n_cols()));
     return run_one_piece(r, X, M, c, cb); }},
  {"frobenius", "anls", false, [](const Data& X, Model& M, const aspectr::Control& c, RCallback& cb, const NmfArgs& a) {
     if (a.accelerate) {
       PieceHER<true> r(a.pen, HerParams(), static_cast<double>(X.n_rows()));
       return run_one_piece(r, X, M, c, cb);
     }
     PieceAlternating r(FrobMethod::ANLS, a.pen, a.eps); return run_one_piece(r, X, M, c, cb); }},
  {"frobenius", "mu", false, [](const Data& X, Model& M, const aspectr::Control& c, RCallback& cb, const NmfArgs& a) {
     PieceAlternating r(FrobMethod::MU, a.pen, a.eps); return run_one_piece(r, X, M, c, cb); }},
  {"frobenius", "als", false, [](const Data& X, Model& M, const aspectr::Control& c, RCallback& cb, const NmfArgs& a) {
     PieceAlternating r(FrobMethod::ALS, a.pen, a.eps); return run_one_piece(r, X, M, c, cb); }},
  {"kl", "cd", true, [](const Data& X, Model& M, const aspectr::Control& c, RCallback& cb, const NmfArgs& a) {
     PieceKLCD r(a.pen, X.total()); return run_one_piece(r, X, M, c, cb); }},
  {"kl", "mu", false, [](const Data& X, Model& M, const aspectr::Control& c, RCallback& cb, const NmfArgs& a) {
     if (a.accelerate) { PieceKLHER r(a.pen, a.eps, HerParams()); return run_one_piece(r, X, M, c, cb); }
     PieceKLMU r(a.pen, a.eps); return run_one_piece(r, X, M, c, cb); }},
  {"beta", "mu", true, [](const Data& X, Model& M, const aspectr::Control& c, RCallback& cb, const NmfArgs& a) {
     PieceBetaMU r(a.beta, a.pen, a.eps); return run_one_piece(r, X, M, c, cb); }},
};
const NmfSolver* find_nmf_solver(const std::string& loss, const std::string& method) {
  for (const NmfSolver& s : kNmfSolvers)
    if (loss == s.loss && method == s.method) return &s;
  return nullptr;
}

// The callback of a plsa() fit run by nmf()'s rule: the objective shown and
// handed on is the generalized divergence divided by `total` (sum X), which
// is D(G || P) of the normalized model when sum(W H) = sum X (see
// cpp_plsa_kl_cd())
struct PlsaScaledCallback {
  RCallback& cb;
  double total;
  bool exact() const { return cb.exact(); }
  template <class ModelT>
  bool operator()(int it, double obj, const ModelT& M) { return cb(it, obj / total, M); }
};

// The one table of nmf()'s losses: what fit and predict need besides the
// solver. `divergence` is the loss of a model without penalties (reported
// by nmf(), used by as_plsa() and logLik()); `project` fits H for new
// columns with W (M.Wt) fixed, from the start in M.H, under that loss:
// exact NNLS under Frobenius, coordinate Newton sweeps to convergence under
// KL, multiplicative updates under beta. An unknown loss is an error.
struct NmfProjectArgs {
  double beta, eps, l1, l2, tol;
  int max_iter, threads;
};
struct NmfLoss {
  const char* name;
  double (*divergence)(const Data&, const Model&, double beta, double eps, int threads);
  void (*project)(const Data&, Model&, const arma::mat& C, const arma::mat& D, const NmfProjectArgs&);
};
// Iterate a per-sweep update of H until the largest change is below tol
// relative to the largest entry of H.
template <class Sweep>
void project_until(Model& M, const NmfProjectArgs& a, Sweep sweep) {
  for (int it = 0; it < a.max_iter; ++it) {
    const arma::mat old = M.H;
    sweep();
    const double change = arma::abs(M.H - old).max();
    if (change <= a.tol * std::max(M.H.max(), 1e-300)) break;
    Rcpp::checkUserInterrupt();
  }
}
const NmfLoss kNmfLosses[] = {
  {"frobenius",
   [](const Data& X, const Model& M, double, double, int threads) {
     return FrobeniusHALS(Penalty()).loss(X, M, threads); },
   [](const Data&, Model& M, const arma::mat& C, const arma::mat& D, const NmfProjectArgs& a) {
     FrobeniusANLS::solve_all(M.H, C, D, a.l1, a.l2, a.threads); }},
  {"kl",
   [](const Data& X, const Model& M, double, double eps, int threads) {
     return KLMU(Penalty(), eps).loss(X, M, threads); },
   [](const Data& X, Model& M, const arma::mat&, const arma::mat&, const NmfProjectArgs& a) {
     const arma::vec c = arma::sum(M.Wt, 1) + a.l1;
     project_until(M, a, [&] { KLCD::solve_side(X, false, M.Wt, M.H, c, a.l2, 1, 1, nullptr, a.threads); }); }},
  {"beta",
   [](const Data& X, const Model& M, double beta, double eps, int threads) {
     return BetaMU(beta, Penalty(), eps).loss(X, M, threads); },
   [](const Data& X, Model& M, const arma::mat&, const arma::mat&, const NmfProjectArgs& a) {
     // the model floored at eps where it is raised to a negative power
     const double lo = std::max(a.eps, 1e-300), beta = a.beta;
     const double g = beta < 1.0 ? 1.0 / (2.0 - beta) : (beta > 2.0 ? 1.0 / (beta - 1.0) : 1.0);
     project_until(M, a, [&] {
       const arma::mat V = arma::clamp(M.Wt.t() * M.H, lo, arma::datum::inf);
       const arma::mat num = M.Wt * (arma::pow(V, beta - 2.0) % X.D());
       const arma::mat den = M.Wt * arma::pow(V, beta - 1.0);
       for (arma::uword j = 0; j < M.H.n_elem; ++j)
         M.H[j] *= std::pow(std::max(num[j], a.eps) / (den[j] + a.l1 + a.eps), g);
     }); }},
};
const NmfLoss& find_nmf_loss(const std::string& loss) {
  for (const NmfLoss& l : kNmfLosses)
    if (loss == l.name) return l;
  Rcpp::stop("unknown nmf() loss '" + loss + "'");
}
}  // namespace

// plsa(loss = "kl", method = "cd") of a matrix: nmf()'s KL coordinate
// descent (PieceKLCD, the rule of nmf(loss = "kl", method = "cd") and of
// sharded fits) on cpp_nmf_data()'s data X, from W0 (m x k) and H0
// (k x n) with sum(W0 H0) = sum X. The pLSA model is the NMF model
// normalized (R's plsa_from_nmf()); after every iteration the rule's
// closed-form rescaling makes sum(W H) = sum X, where the generalized
// divergence sum x log(x / v) - x + v is sum X times D(G || P): the trace
// (`objective`, `initial`) is reported on pLSA's scale, D(G || P), and so is
// the progress. `divergence` is the generalized divergence of the final
// model, `wh` its total sum(W H).
// [[Rcpp::export]]
Rcpp::List cpp_plsa_kl_cd(SEXP data, Rcpp::NumericMatrix W0, Rcpp::NumericMatrix H0, int max_iter, double tol,
                          int threads, bool verbose, SEXP hook = R_NilValue, bool want_model = false) {
  using namespace aspectr::nmf;
  const Data& X = nmf_data_of(data);
  if (X.triangle() || X.dense()) Rcpp::stop("internal error: plsa's coordinate descent needs sparse data");
  if (static_cast<arma::uword>(W0.nrow()) != X.n_rows() || static_cast<arma::uword>(H0.ncol()) != X.n_cols() ||
      W0.ncol() != H0.nrow())
    Rcpp::stop("internal error: the start does not match the data");
  const double total = X.total();
  if (!(total > 0.0)) Rcpp::stop("internal error: data without counts");
  Model M;
  M.Wt = Rcpp::as<arma::mat>(W0).t();
  M.H = Rcpp::as<arma::mat>(H0);
  aspectr::Control ctl;
  ctl.max_iter = max_iter; ctl.tol = tol; ctl.threads = threads;
  RCallback cb(verbose, max_iter, "plsa (kl, cd)", hook, want_model);
  PlsaScaledCallback scb{cb, total};
  PieceKLCD rule(Penalty(), total);
  aspectr::FitTrace tr = run_one_piece(rule, X, M, ctl, scb);
  for (double& v : tr.objective) v /= total;
  tr.initial /= total;
  const double divergence = find_nmf_loss("kl").divergence(X, M, 1.0, 0.0, threads);
  const double wh = arma::dot(arma::vec(arma::sum(M.Wt, 1)), arma::vec(arma::sum(M.H, 1)));
  Rcpp::List out = Rcpp::List::create(
      Rcpp::Named("W") = Rcpp::wrap(arma::mat(M.Wt.t())), Rcpp::Named("H") = Rcpp::wrap(M.H),
      Rcpp::Named("divergence") = divergence, Rcpp::Named("wh") = wh, Rcpp::Named("total") = total);
  add_trace(out, tr);
  return out;
}


// nmf()'s solver table for the R side: loss, method, default.
// [[Rcpp::export]]
Rcpp::List cpp_nmf_solvers() {
  Rcpp::CharacterVector loss, method;
  Rcpp::LogicalVector def;
  for (const NmfSolver& s : kNmfSolvers) {
    loss.push_back(s.loss); method.push_back(s.method); def.push_back(s.is_default);
  }
  return Rcpp::List::create(Rcpp::Named("loss") = loss, Rcpp::Named("method") = method,
                            Rcpp::Named("default") = def);
}

// Classic NMF X ~ W H of cpp_nmf_data()'s data (m x n). W0 is m x k,
// H0 is k x n. Returns W (m x k), H (k x n) and the trace.
// [[Rcpp::export]]
Rcpp::List cpp_nmf_fit(SEXP data, Rcpp::NumericMatrix W0, Rcpp::NumericMatrix H0, std::string loss,
                       std::string method, double beta, Rcpp::NumericVector L1,
                       Rcpp::NumericVector L2, double eps, int max_iter, double tol, int threads,
                       bool verbose, bool accelerate = false, SEXP hook = R_NilValue,
                       bool want_model = false) {
  using namespace aspectr::nmf;
  const Data* X = &nmf_data_of(data);
  if (X->triangle()) Rcpp::stop("internal error: nmf updates need the whole matrix, not a triangle");
  if (static_cast<arma::uword>(W0.nrow()) != X->n_rows() || static_cast<arma::uword>(H0.ncol()) != X->n_cols())
    Rcpp::stop("internal error: the start does not match the data");
  Model M;
  M.Wt = Rcpp::as<arma::mat>(W0).t();
  M.H = Rcpp::as<arma::mat>(H0);
  Penalty pen;
  pen.l1w = L1[0]; pen.l1h = L1[1]; pen.l2w = L2[0]; pen.l2h = L2[1];
  aspectr::Control ctl;
  ctl.max_iter = max_iter; ctl.tol = tol; ctl.threads = threads;
  RCallback cb(verbose, max_iter, "nmf (" + loss + ", " + method + ")", hook, want_model);
  const NmfSolver* solver = find_nmf_solver(loss, method);
  if (!solver) Rcpp::stop("unknown nmf() loss/method '" + loss + "'/'" + method + "'");
  if (loss == "beta" && !X->dense()) Rcpp::stop("internal error: beta-divergence updates need dense data");
  NmfArgs args{pen, beta, eps, accelerate};
  const aspectr::FitTrace tr = solver->run(*X, M, ctl, cb, args);
  // the loss of the final model without penalties (as_plsa(), logLik)
  const double divergence = find_nmf_loss(loss).divergence(*X, M, beta, eps, threads);
  Rcpp::List out = Rcpp::List::create(
      Rcpp::Named("W") = Rcpp::wrap(arma::mat(M.Wt.t())),
      Rcpp::Named("divergence") = divergence,
      Rcpp::Named("H") = Rcpp::wrap(M.H),
      Rcpp::Named("xnorm2") = X->xnorm2());
  add_trace(out, tr);
  return out;
}

// H for new columns with W fixed (predict), by the loss table's projection.
// [[Rcpp::export]]
Rcpp::NumericMatrix cpp_nmf_project(SEXP data, Rcpp::NumericMatrix W, std::string loss,
                                    double beta, Rcpp::NumericVector L1, Rcpp::NumericVector L2,
                                    double eps, int max_iter, double tol, int threads) {
  using namespace aspectr::nmf;
  const Data* X = &nmf_data_of(data);
  if (X->triangle()) Rcpp::stop("internal error: nmf updates need the whole matrix, not a triangle");
  Model M;
  M.Wt = Rcpp::as<arma::mat>(W).t();
  if (M.Wt.n_cols != X->n_rows()) Rcpp::stop("internal error: W does not match the data");
  const arma::uword k = M.Wt.n_rows;
  arma::mat C;
  X->WtX(M.Wt, C, threads);
  const arma::mat D = M.Wt * M.Wt.t();
  M.H.set_size(k, X->n_cols());
  // start: the unconstrained least-squares coefficients, clipped
  M.H = arma::clamp(arma::solve(D + 1e-12 * arma::eye(k, k) * std::max(1.0, D.max()), C), 1e-6, arma::datum::inf);
  const NmfProjectArgs args{beta, eps, L1[1], L2[1], tol, max_iter, threads};
  find_nmf_loss(loss).project(*X, M, C, D, args);
  return Rcpp::wrap(M.H);
}

// What shards() records of a shard, in one pass without temporaries of the
// data's size: total, largest value, sum of val / top (a total that cannot
// overflow), whether all values are whole, sum g log g with g = val / its
// own total (as cpp_data_summary), the totals by first index, the
// constant of the Poisson log-likelihood sum(x log x - x - lgamma(x + 1)),
// the totals by every other mode, and whether some cells miss a mode.
static Rcpp::List shard_summary(const int* idx, const double* val, std::size_t nnz,
                                const std::vector<int>& dims) {
  const std::size_t N = dims.size();
  double top = 0.0;
  long double total = 0.0, loglik = 0.0;
  bool whole = true;
  for (std::size_t s = 0; s < nnz; ++s) {
    const double v = val[s];
    if (v > top) top = v;
    total += v;
    if (!(v == std::round(v))) whole = false;
    loglik += v * std::log(v) - v - std::lgamma(v + 1.0);
  }
  long double scaled = 0.0;
  if (top > 0.0) for (std::size_t s = 0; s < nnz; ++s) scaled += val[s] / top;
  const double tot = static_cast<double>(scaled);
  Rcpp::List margins(N);
  std::vector<Rcpp::NumericVector> m(N);
  for (std::size_t n = 0; n < N; ++n) m[n] = Rcpp::NumericVector(dims[n]);
  bool missing = false;
  for (std::size_t s = 0; s < nnz; ++s) {
    for (std::size_t n = 0; n < N; ++n) {
      const int i = idx[s * N + n];
      if (i >= 0 && i < dims[n]) m[n][i] += val[s];
      else missing = missing || i == -1;
    }
  }
  for (std::size_t n = 0; n < N; ++n) margins[n] = m[n];
  return Rcpp::List::create(
      Rcpp::Named("nnz") = static_cast<double>(nnz), Rcpp::Named("total") = static_cast<double>(total),
      Rcpp::Named("top") = top, Rcpp::Named("scaled") = tot, Rcpp::Named("whole") = whole,
      Rcpp::Named("neg_entropy") = aspectr::neg_entropy(val, nnz),
      Rcpp::Named("loglik_const") = static_cast<double>(loglik), Rcpp::Named("margins") = margins,
      Rcpp::Named("missing") = missing);
}

// [[Rcpp::export]]
Rcpp::List cpp_shard_summary(Rcpp::IntegerMatrix idx, Rcpp::NumericVector val, Rcpp::IntegerVector dims) {
  std::vector<int> d(dims.begin(), dims.end());
  return shard_summary(idx.begin(), val.begin(), static_cast<std::size_t>(val.size()), d);
}

// The same of a shard file, read into memory of its own (freed on return,
// and given back to the system: see release_free_memory())
// [[Rcpp::export]]
Rcpp::List cpp_shard_file_summary(std::string path) {
  Rcpp::List out;
  std::vector<int> d;
  bool bad = false;
  {
    aspectr::ShardBuffer buf;
    aspectr::read_shard_file(path, buf);
    d.assign(buf.dims.begin(), buf.dims.end());
    out = shard_summary(reinterpret_cast<const int*>(buf.idx.data()), buf.val.data(), buf.nnz, d);
    for (std::size_t s = 0; s < buf.nnz && !bad; ++s)
      bad = !(buf.val[s] > 0.0) || !std::isfinite(buf.val[s]);
  }
  release_free_memory();
  if (bad) Rcpp::stop("it holds values that are not positive and finite");
  Rcpp::IntegerVector dims(d.begin(), d.end());
  out["dims"] = dims;
  return out;
}

// Lets a shard buffer's memory go now (not when R collects the buffer's
// pointer), back to the system (see release_free_memory()); the buffer
// stays usable.
// [[Rcpp::export]]
void cpp_shard_buffer_free(SEXP buffer) {
  Rcpp::XPtr<aspectr::ShardBuffer> buf(buffer);
  buf->idx = std::vector<aspectr::index_t>();
  buf->val = std::vector<double>();
  buf->g = std::vector<double>();
  buf->work = aspectr::Workspace();
  buf->nnz = 0;
  release_free_memory();
}

// EM (tempered EM), q-EM or ("kcd") KL coordinate descent of N-way data
// (solvers/cd_pieces.h) of the aspect model on data in pieces reached
// through R (RPieces: fn(op, input) runs a request on every shard where it
// is and returns the added statistics; see solvers/pieces_em.h): the rule's
// loop in the core's driver. lambda (k) and factors (the shared modes',
// k x d_n, the core's layout) start the fit; term_prior: the terms'
// pseudo-counts in the core's units (k x d_1) or NULL; doc_prior (KL
// coordinate descent of a matrix: the documents' pseudo-counts, k, the
// core's units; EM's are the pieces') or NULL. Returns lambda, the
// shared modes' factors (core layout), the trace and (EM, coordinate
// descent) `kl`, the divergence of the final model without the prior's
// penalty.
// With `squarem`, the rule extrapolated by SQUAREM (PieceSquarem, from the
// step bound `squarem_bound`; the bound it ends with is returned).
// `local` ("kcd" only): NULL, or the shards of this process
// (kcd_store_pieces()), which then take the requests in place of fn.
// [[Rcpp::export]]
Rcpp::List cpp_aspect_pieces_fit(SEXP fn, Rcpp::NumericVector lambda, Rcpp::List factors, std::string method,
                                 double q, SEXP term_prior, int max_iter, double tol, int threads,
                                 SEXP hook = R_NilValue, bool want_model = false, bool squarem = false,
                                 double squarem_bound = 1.0, SEXP doc_prior = R_NilValue,
                                 SEXP local = R_NilValue) {
  if (!Rf_isNull(local) && method != "kcd") Rcpp::stop("internal error: shards in this process for '%s'", method.c_str());
  // (coordinate descent of shards in this process: their pieces in the
  // core, kcd_store_pieces(); otherwise through R)
  std::unique_ptr<aspectr::Pieces> store;
  if (!Rf_isNull(local)) store = aspectr_r::kcd_store_pieces(local, threads);
  RPieces Pr(fn);
  const aspectr::Pieces& P = store ? *store : static_cast<const aspectr::Pieces&>(Pr);
  aspectr::AspectPieceModel M;
  M.lambda = Rcpp::as<arma::vec>(lambda);
  for (R_xlen_t n = 0; n < factors.size(); ++n) {
    M.F.push_back(Rcpp::as<arma::mat>(factors[n]));
    if (M.F.back().n_rows != M.lambda.n_elem) Rcpp::stop("internal error: a factor of the wrong size");
  }
  M.P = &P;
  aspectr::Control ctl;
  ctl.max_iter = max_iter; ctl.tol = tol; ctl.threads = threads;
  RCallback cb(false, max_iter, "plsa (" + method + ")", hook, want_model);
  aspectr::FitTrace tr;
  double kl = NA_REAL;
  // the base rule, or SQUAREM of it
  auto run = [&](auto& base) {
    if (!squarem) return aspectr::run_solver(base, P, M, ctl, cb);
    aspectr::PieceSquarem<std::remove_reference_t<decltype(base)>> rule(base);
    rule.set_step_bound(squarem_bound);
    const aspectr::FitTrace t = aspectr::run_solver(rule, P, M, ctl, cb);
    squarem_bound = rule.step_bound();
    return t;
  };
  if (method == "qem") {
    aspectr::PieceQEM rule(q);
    tr = run(rule);
  } else if (method == "em") {
    aspectr::PieceEM rule(Rf_isNull(term_prior) ? arma::mat() : Rcpp::as<arma::mat>(term_prior));
    tr = run(rule);
    kl = rule.kl();
  } else if (method == "kcd") {
    // KL coordinate descent of N-way data (no SQUAREM; its objective is
    // D(G || P) itself)
    if (squarem || M.F.empty()) Rcpp::stop("internal error: coordinate descent in pieces without SQUAREM, of 2 modes or more");
    aspectr::DirichletPrior prior;
    if (!Rf_isNull(doc_prior)) prior.doc = Rcpp::as<arma::vec>(doc_prior);
    if (!Rf_isNull(term_prior)) prior.term = Rcpp::as<arma::mat>(term_prior);
    if (prior.any() && M.F.size() != 1) Rcpp::stop("internal error: a prior needs a matrix");
    aspectr::PieceKLCDTensor rule(prior);
    tr = aspectr::run_solver(rule, P, M, ctl, cb);
    kl = rule.kl();
  } else {
    Rcpp::stop("internal error: no aspect rule in pieces for '%s'", method.c_str());
  }
  Rcpp::List F(M.F.size());
  for (std::size_t n = 0; n < M.F.size(); ++n) F[n] = Rcpp::wrap(M.F[n]);
  Rcpp::List out = Rcpp::List::create(Rcpp::Named("lambda") = Rcpp::NumericVector(M.lambda.begin(), M.lambda.end()),
                                      Rcpp::Named("factors") = F, Rcpp::Named("kl") = kl,
                                      Rcpp::Named("colsum") = M.colsum.n_elem ? Rcpp::wrap(M.colsum) : R_NilValue);
  add_trace(out, tr);
  if (squarem) out["squarem_bound"] = squarem_bound;
  return out;
}

// A piece's part of SQUAREM's norms (solvers/pieces_squarem.h, "sq_norms"):
// ||r||^2 and ||v||^2 over its rows of the documents' factor, theta0,
// theta1 and theta2 (k x rows).
// [[Rcpp::export]]
Rcpp::NumericVector cpp_squarem_piece_norms(Rcpp::NumericMatrix t0, Rcpp::NumericMatrix t1, Rcpp::NumericMatrix t2) {
  const arma::mat a0(t0.begin(), t0.nrow(), t0.ncol(), false, true), a1(t1.begin(), t1.nrow(), t1.ncol(), false, true),
      a2(t2.begin(), t2.nrow(), t2.ncol(), false, true);
  if (a1.n_elem != a0.n_elem || a2.n_elem != a0.n_elem) Rcpp::stop("internal error: SQUAREM's iterates differ in size");
  double rr = 0.0, vv = 0.0;
  aspectr::squarem_norms(a0, a1, a2, rr, vv);
  return Rcpp::NumericVector::create(rr, vv);
}

// A piece's extrapolated rows ("sq_extrapolate"): theta0 + 2 a r + a^2 v
// floored at a tenth of theta2's entries (`x`, k x rows) and its row sums
// (`sum`), which added over the pieces normalize it.
// [[Rcpp::export]]
Rcpp::List cpp_squarem_piece_extrapolate(Rcpp::NumericMatrix t0, Rcpp::NumericMatrix t1, Rcpp::NumericMatrix t2,
                                         double a) {
  const arma::mat a0(t0.begin(), t0.nrow(), t0.ncol(), false, true), a1(t1.begin(), t1.nrow(), t1.ncol(), false, true),
      a2(t2.begin(), t2.nrow(), t2.ncol(), false, true);
  if (a1.n_elem != a0.n_elem || a2.n_elem != a0.n_elem) Rcpp::stop("internal error: SQUAREM's iterates differ in size");
  Rcpp::NumericMatrix x(t0.nrow(), t0.ncol());
  arma::mat out;
  aspectr::squarem_entries(a0, a1, a2, a, out);
  if (out.n_elem) std::copy(out.begin(), out.end(), x.begin());
  Rcpp::NumericVector sum(t0.nrow());
  // (summed as normalize_rows() sums a row)
  for (arma::uword r = 0; r < out.n_rows; ++r) {
    double tot = 0.0;
    for (arma::uword i = 0; i < out.n_cols; ++i) tot += out(r, i);
    sum[r] = tot;
  }
  return Rcpp::List::create(Rcpp::Named("x") = x, Rcpp::Named("sum") = sum);
}

// KL fold-in of the first-mode slices of an N-way tensor (fold_in_cells()):
// B (cells x k) the fixed factors' products at the cells, doc their slices
// (1-based), val their counts; theta (n_docs x k).
// [[Rcpp::export]]
Rcpp::NumericMatrix cpp_foldin_cells(Rcpp::NumericMatrix B, Rcpp::IntegerVector doc, Rcpp::NumericVector val,
                                     int n_docs, Rcpp::NumericVector prior, int max_iter, double tol) {
  std::vector<std::size_t> d(doc.size());
  for (R_xlen_t s = 0; s < doc.size(); ++s) {
    if (doc[s] < 1 || doc[s] > n_docs) Rcpp::stop("internal error: a cell outside the slices");
    d[s] = static_cast<std::size_t>(doc[s] - 1);
  }
  return Rcpp::wrap(aspectr::fold_in_cells(Rcpp::as<arma::mat>(B), d, Rcpp::as<arma::vec>(val),
                                           static_cast<std::size_t>(n_docs), Rcpp::as<arma::vec>(prior),
                                           max_iter, tol));
}
