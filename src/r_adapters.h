// src/r_adapters.h — the R side of the core's roles: conversion of R objects
// to core types, and the end-of-iteration callback (progress bar through
// cli's C API, interrupts). Only this folder includes R headers.
#ifndef ASPECTR_R_ADAPTERS_H
#define ASPECTR_R_ADAPTERS_H

#include <RcppArmadillo.h>
#include <aspectr/aspectr.h>
#if defined(__GLIBC__)
#include <malloc.h>
#endif
#include <algorithm>
#include <memory>
#include <string>

namespace aspectr_r {

// idx: N x nnz integer matrix of 0-based indices; val: nnz values.
// The values are copied (the tensor may change them), or with `copy =
// false` viewed in place (R's memory: the tensor must not change them).
inline aspectr::SparseTensor make_tensor(const Rcpp::IntegerMatrix& idx,
                                         const Rcpp::NumericVector& val,
                                         const Rcpp::IntegerVector& dims, bool copy = true) {
  aspectr::SparseTensor t;
  const std::size_t N = dims.size(), nnz = val.size();
  if (static_cast<std::size_t>(idx.nrow()) != N || static_cast<std::size_t>(idx.ncol()) != nnz)
    Rcpp::stop("internal error: index matrix has the wrong shape");
  t.dims.resize(N);
  for (std::size_t n = 0; n < N; ++n) {
    if (dims[n] == NA_INTEGER || dims[n] < 0) Rcpp::stop("internal error: invalid tensor size in mode %d", static_cast<int>(n + 1));
    t.dims[n] = static_cast<arma::uword>(dims[n]);
  }
  // the indices are read in place: R's 0-based int matrix has the core's
  // layout, and as 32-bit unsigned values its -1 is the core's kMissing
  // (validate() refuses any other negative index, which becomes too large)
  static_assert(sizeof(aspectr::index_t) == sizeof(int), "index_t must have the size of R's int");
  t.view = reinterpret_cast<const aspectr::index_t*>(idx.begin());
  t.val = copy ? arma::vec(const_cast<double*>(val.begin()), nnz, true)
              : arma::vec(const_cast<double*>(val.begin()), nnz, false, true);
  t.validate();
  return t;
}

// A shard's tensor, its values divided by the whole data's `top` and then
// `scaled`: by scales, read in place (R's memory: not to be changed), or
// (reciprocals not normal) a copy divided. No scaling unless both > 0.
inline aspectr::SparseTensor shard_scaled_tensor(const Rcpp::IntegerMatrix& idx, const Rcpp::NumericVector& val,
                                                 const Rcpp::IntegerVector& dims, double top, double scaled) {
  aspectr::SparseTensor t = make_tensor(idx, val, dims, false);
  if (!(top > 0.0 && scaled > 0.0) || t.set_scales(top, scaled)) return t;
  aspectr::SparseTensor c = make_tensor(idx, val, dims, true);
  c.val /= top;
  c.val /= scaled;
  return c;
}

// Gives freed heap memory back to the system where the C library can
// (glibc's malloc_trim): buffers of tens of megabytes, once freed, stay in
// the process's heap otherwise (glibc raises its threshold for separate
// mappings after the first such free), and the memory a fit from files
// needs would look like that of every file read before it.
inline void release_free_memory() {
#if defined(__GLIBC__)
  malloc_trim(0);
#endif
}

// An R numeric vector as an Armadillo vector on R's memory (no copy; valid
// while the R object is, i.e. during the call that received it).
inline arma::vec r_vector_view(const Rcpp::NumericVector& v) {
  return arma::vec(const_cast<double*>(v.begin()), static_cast<arma::uword>(v.size()), false, true);
}

// The data of an aspect-model fit, all read in place: G, the tensor with
// its values normalized to sum 1 by its scales (indices and values
// borrowed from R's matrix and vector), and the raw counts (the same R
// vector) with their total, which the rules use for cheap logs. Valid
// during the call that received the R objects. (Values whose largest is
// below the normal range, where 1 / max overflows, are copied and
// normalized instead.)
struct AspectInput {
  AspectInput(const Rcpp::IntegerMatrix& idx, const Rcpp::NumericVector& val,
              const Rcpp::IntegerVector& dims)
      : counts(r_vector_view(val)), total(arma::accu(counts)), G(normalized_view(idx, val, dims)) {}
  static aspectr::SparseTensor normalized_view(const Rcpp::IntegerMatrix& idx, const Rcpp::NumericVector& val,
                                               const Rcpp::IntegerVector& dims) {
    aspectr::SparseTensor t = make_tensor(idx, val, dims, false);
    if (t.normalize_scales()) return t;
    aspectr::SparseTensor c = make_tensor(idx, val, dims, true);
    c.normalize();
    return c;
  }
  const arma::vec counts;
  const double total;
  const aspectr::SparseTensor G;  // const: its values may be the caller's memory
};

// A dgCMatrix's slots as a CscMatrix, read in place (R's memory: not to be
// changed), after checking them: column pointers from 0 to the number of
// cells and never decreasing, rows in range, values positive and finite.
inline aspectr::CscMatrix csc_view(const Rcpp::IntegerVector& i, const Rcpp::IntegerVector& p,
                                   const Rcpp::NumericVector& x, const Rcpp::IntegerVector& dims) {
  if (dims.size() != 2 || dims[0] == NA_INTEGER || dims[1] == NA_INTEGER || dims[0] < 0 || dims[1] < 0)
    Rcpp::stop("internal error: a compressed-column matrix needs two sizes");
  const R_xlen_t nnz = x.size(), ncol = dims[1];
  if (i.size() != nnz || p.size() != ncol + 1 || p[0] != 0 || p[ncol] != nnz)
    Rcpp::stop("internal error: the compressed-column slots disagree in length");
  for (R_xlen_t j = 0; j < ncol; ++j)
    if (p[j + 1] < p[j]) Rcpp::stop("internal error: column pointers decrease");
  for (R_xlen_t s = 0; s < nnz; ++s) {
    if (i[s] < 0 || i[s] >= dims[0]) Rcpp::stop("internal error: row index out of range");
    if (!(x[s] > 0.0) || !std::isfinite(x[s])) Rcpp::stop("internal error: values must be positive and finite");
  }
  aspectr::CscMatrix G;
  G.dims = {static_cast<arma::uword>(dims[0]), static_cast<arma::uword>(dims[1])};
  G.p = p.begin();
  G.rows = i.begin();
  G.val = r_vector_view(x);
  return G;
}

// factors: list of d_n x k matrices (R layout) -> k x d_n (core layout).
inline aspectr::AspectModel make_model(const Rcpp::NumericVector& lambda,
                                       const Rcpp::List& factors) {
  aspectr::AspectModel M;
  M.lambda = Rcpp::as<arma::vec>(lambda);
  for (R_xlen_t n = 0; n < factors.size(); ++n) {
    // transposed straight from R's memory (one copy)
    const Rcpp::NumericMatrix U(factors[n]);
    const arma::mat view(const_cast<double*>(U.begin()), U.nrow(), U.ncol(), false, true);
    M.F.push_back(view.t());
  }
  return M;
}

inline Rcpp::List model_to_r(const aspectr::AspectModel& M) {
  Rcpp::List f(M.F.size());
  for (std::size_t n = 0; n < M.F.size(); ++n) {
    // transposed straight into R's memory (one copy)
    Rcpp::NumericMatrix U(M.F[n].n_cols, M.F[n].n_rows);
    arma::mat view(U.begin(), U.nrow(), U.ncol(), false, true);
    view = M.F[n].t();
    f[n] = U;
  }
  return Rcpp::List::create(Rcpp::Named("lambda") = Rcpp::NumericVector(M.lambda.begin(), M.lambda.end()),
                            Rcpp::Named("factors") = f);
}

inline aspectr::Loss parse_loss(const std::string& s) {
  if (s == "kl") return aspectr::Loss::KL;
  if (s == "tsallis") return aspectr::Loss::Tsallis;
  if (s == "l2") return aspectr::Loss::L2;
  Rcpp::stop("internal error: unknown loss '" + s + "'");
}

// The model as R sees it in a callback (core layout, unscaled by R).
inline SEXP raw_model(const aspectr::AspectModel& M) { return model_to_r(M); }
inline SEXP raw_model(const aspectr::nmf::Model& M) {
  return Rcpp::List::create(Rcpp::Named("W") = Rcpp::wrap(arma::mat(M.Wt.t())),
                            Rcpp::Named("H") = Rcpp::wrap(M.H));
}
inline SEXP raw_model(const aspectr::nmf::PieceModel& M) {
  const arma::mat Wt = M.gather();
  return Rcpp::List::create(Rcpp::Named("W") = Rcpp::wrap(arma::mat(Wt.t())),
                            Rcpp::Named("H") = Rcpp::wrap(M.H));
}
inline SEXP raw_model(const aspectr::AspectPieceModel& M) {
  Rcpp::List f(M.F.size() + 1);
  f[0] = Rcpp::wrap(M.gather());
  for (std::size_t n = 0; n < M.F.size(); ++n) f[n + 1] = Rcpp::wrap(arma::mat(M.F[n].t()));
  return Rcpp::List::create(Rcpp::Named("lambda") = Rcpp::NumericVector(M.lambda.begin(), M.lambda.end()),
                            Rcpp::Named("factors") = f);
}
// a CP model on pieces: the rows' factor gathered, the weights `lambda`
// (weighted KL, Frobenius: 1, they stay in the factors until the fit's end;
// the L2 aspect model: its own)
template <class CPModel>
inline SEXP raw_cp_model(const CPModel& M, SEXP lambda = R_NilValue) {
  Rcpp::List f(M.F.size() + 1);
  f[0] = Rcpp::wrap(arma::mat(M.gather().t()));
  for (std::size_t n = 0; n < M.F.size(); ++n) f[n + 1] = Rcpp::wrap(arma::mat(M.F[n].t()));
  const arma::uword k = M.F.empty() ? 0 : M.F[0].n_rows;
  const Rcpp::NumericVector lam = Rf_isNull(lambda) ? Rcpp::NumericVector(k, 1.0) : Rcpp::NumericVector(lambda);
  return Rcpp::List::create(Rcpp::Named("lambda") = lam, Rcpp::Named("factors") = f);
}
inline SEXP raw_model(const aspectr::CPPieceModel& M) { return raw_cp_model(M); }
inline SEXP raw_model(const aspectr::CPFrobPieceModel& M) { return raw_cp_model(M); }
inline SEXP raw_model(const aspectr::PPSPieceModel& M) {
  return raw_cp_model(M, Rcpp::NumericVector(M.lambda.begin(), M.lambda.end()));
}
inline SEXP raw_model(const arma::mat& Gt) { return Rcpp::wrap(arma::mat(Gt.t())); }
inline SEXP raw_model(const aspectr::sym::SymModel& M) { return Rcpp::wrap(arma::mat(M.Ht.t())); }

// End-of-iteration callback: a cli progress bar when verbose in an
// interactive session (its constructor, destructor and tick() live in
// r_adapters.cpp, the one translation unit that includes cli's C API:
// cli's "update due" flag is a per-translation-unit static, so inline
// copies in several units would read a flag that the bar never sets), an
// interrupt check every iteration (throws Rcpp's interrupt exception, which the
// exported function's boundary turns into an R interrupt), and the R-side
// hook when given: hook(iteration, objective, model) is called every
// iteration (model: the raw model when `want_model`, else NULL) and stops
// the fit by returning FALSE. The hook shows non-interactive progress and
// runs the user's callback; an R error in it propagates as an R error (the
// bar is closed by the destructor).
class RCallback {
 public:
  RCallback(bool verbose, int max_iter, const std::string& name,
            SEXP hook = R_NilValue, bool want_model = false);
  ~RCallback();
  RCallback(const RCallback&) = delete;
  RCallback& operator=(const RCallback&) = delete;
  // the objective after the iteration is needed exactly when the user's
  // callback looks at the model
  bool exact() const { return want_model_; }
  template <class ModelT>
  bool operator()(int it, double obj, const ModelT& M) {
    if (!tick(it, obj)) return false;
    if (!Rf_isNull(hook_)) {
      Rcpp::Function hook(hook_);
      SEXP r = hook(it, obj, want_model_ ? raw_model(M) : R_NilValue);
      if (TYPEOF(r) == LGLSXP && Rf_length(r) == 1 && LOGICAL(r)[0] == 0) return false;
    }
    return true;
  }
  // progress, interrupts and the hook without a model (between rounds of a
  // multistart)
  bool round(int it, double obj) {
    if (!tick(it, obj)) return false;
    if (!Rf_isNull(hook_)) {
      Rcpp::Function hook(hook_);
      SEXP r = hook(it, obj, R_NilValue);
      if (TYPEOF(r) == LGLSXP && Rf_length(r) == 1 && LOGICAL(r)[0] == 0) return false;
    }
    return true;
  }
  // progress and interrupts only
  bool tick(int it, double obj);

 private:
  bool verbose_;
  SEXP hook_;
  bool want_model_;
  Rcpp::RObject bar_;
};

// Stats <-> a named R list of numeric matrices. The list's names are
// sorted: R adds the lists of several shards element by element
// (shard_add()), so every shard's comes in one order whatever the order
// its piece set them in.
inline Rcpp::List stats_to_r(const aspectr::Stats& s) {
  std::vector<const aspectr::NamedMats::Entry*> e;
  e.reserve(s.m.size());
  for (const auto& kv : s.m) e.push_back(&kv);
  std::sort(e.begin(), e.end(), [](const aspectr::NamedMats::Entry* a, const aspectr::NamedMats::Entry* b) {
    return a->name < b->name;
  });
  Rcpp::List out;
  for (const auto* kv : e) out[kv->name] = Rcpp::wrap(kv->value);
  return out;
}
inline aspectr::Stats stats_from_r(SEXP x) {
  aspectr::Stats s;
  Rcpp::List l(x);
  if (l.size() == 0) return s;
  Rcpp::CharacterVector nm = l.names();
  for (R_xlen_t i = 0; i < l.size(); ++i) {
    SEXP v = l[i];
    if (TYPEOF(v) == VECSXP) {
      // a statistic in parts (R's shard_add() of "@" names): joined by columns
      arma::uword rows = 0, cols = 0;
      for (R_xlen_t p = 0; p < Rf_xlength(v); ++p) {
        SEXP q = VECTOR_ELT(v, p);
        if (!Rf_isReal(q) || !Rf_isMatrix(q) || (p > 0 && static_cast<arma::uword>(Rf_nrows(q)) != rows))
          Rcpp::stop("internal error: the parts of a piece's statistic '%s' differ", std::string(nm[i]).c_str());
        rows = Rf_nrows(q);
        cols += Rf_ncols(q);
      }
      arma::mat out(rows, cols);
      arma::uword at = 0;
      for (R_xlen_t p = 0; p < Rf_xlength(v); ++p) {
        SEXP q = VECTOR_ELT(v, p);
        const arma::uword c = Rf_ncols(q);
        if (c) std::copy(REAL(q), REAL(q) + static_cast<std::size_t>(rows) * c, out.colptr(at));
        at += c;
      }
      s.m.set(std::string(nm[i]), std::move(out));
      continue;
    }
    if (!Rf_isReal(v)) Rcpp::stop("internal error: a piece's statistic '%s' is not numeric",
                                  std::string(nm[i]).c_str());
    const arma::uword r = Rf_isMatrix(v) ? Rf_nrows(v) : Rf_length(v), c = Rf_isMatrix(v) ? Rf_ncols(v) : 1;
    s.m.set(std::string(nm[i]), arma::mat(REAL(v), r, c));
  }
  return s;
}

// Pieces reached through R: map() calls fn(op, input) (R/nmf-shards.R, R/shards.R),
// which runs the request on every shard where it is (this process, files,
// the workers of a cluster) and returns the added statistics. `cols`,
// when not NULL, is the same for the data's column pieces
// (Pieces::map_columns(): R/nmf-shards.R, shard_nmf_cols()).
class RPieces : public aspectr::Pieces {
 public:
  explicit RPieces(SEXP fn, SEXP cols = R_NilValue) : fn_(fn), cols_(cols) {}
  aspectr::Stats map(const aspectr::Request& r) const override { return call(fn_, r); }
  bool has_columns() const override { return !Rf_isNull(cols_); }
  aspectr::Stats map_columns(const aspectr::Request& r) const override {
    if (Rf_isNull(cols_)) return aspectr::Pieces::map_columns(r);
    return call(Rcpp::Function(cols_), r);
  }
  // the request run by the R function f(op, input), its statistics back
  static aspectr::Stats call(const Rcpp::Function& f, const aspectr::Request& r) {
    if (!r.refs.empty()) throw std::logic_error("request '" + r.op + "' by reference through R");
    Rcpp::List in;
    for (const auto& kv : r.in) in[kv.name] = Rcpp::wrap(kv.value);
    return stats_from_r(f(r.op, in));
  }

 private:
  Rcpp::Function fn_;
  SEXP cols_;
};

// The cells read at a time from a shard file (R's chunk option)
inline std::size_t chunk_cells(double chunk) {
  if (!(chunk >= 1.0)) Rcpp::stop("internal error: chunks of fewer than one cell");
  return chunk < 1e15 ? static_cast<std::size_t>(chunk) : static_cast<std::size_t>(1e15);
}

// A shard file's cells for the CP rules on pieces, read a chunk at a time:
// `file` is R's list(buffer, path, chunk, scale) (R/ntf-shards.R)
inline std::unique_ptr<aspectr::CPCells> file_cp_cells(SEXP file, const std::vector<arma::uword>& dims) {
  Rcpp::List f(file);
  SEXP bufx = f["buffer"];
  Rcpp::XPtr<aspectr::ShardBuffer> buf(bufx);
  return std::unique_ptr<aspectr::CPCells>(new aspectr::FileCPCells(
      Rcpp::as<std::string>(f["path"]), *buf, chunk_cells(Rcpp::as<double>(f["chunk"])),
      Rcpp::as<double>(f["scale"]), dims));
}

// nmf()'s penalties (L1, L2: for W and H) and a fit's controls, from R
inline aspectr::nmf::Penalty nmf_penalty(const Rcpp::NumericVector& L1, const Rcpp::NumericVector& L2) {
  aspectr::nmf::Penalty pen;
  pen.l1w = L1[0]; pen.l1h = L1[1]; pen.l2w = L2[0]; pen.l2h = L2[1];
  return pen;
}
inline aspectr::Control fit_control(int max_iter, double tol, int threads) {
  aspectr::Control ctl;
  ctl.max_iter = max_iter; ctl.tol = tol; ctl.threads = threads;
  return ctl;
}

// The trace of a fit in the list every fitter's glue returns.
inline void add_trace(Rcpp::List& out, const aspectr::FitTrace& tr) {
  out["objective"] = Rcpp::NumericVector(tr.objective.begin(), tr.objective.end());
  out["initial"] = tr.initial;
  out["iterations"] = tr.iterations;
  out["converged"] = tr.converged;
  out["stopped"] = tr.stopped;
}

// Shard i's failure (from 0) raised by R's fail(i + 1, why), which names
// its source.
[[noreturn]] inline void store_fail(SEXP fail, std::size_t i, const std::string& why) {
  Rcpp::Function f(fail);
  f(static_cast<double>(i + 1), why);
  throw std::logic_error("internal error: a shard's failure not raised: " + why);
}

// A request run on the shards of a fit in this process (`pieces`, each a
// pointer to a piece with run(r, threads)), their statistics added in
// their order as R's shard_add() adds them (the same sums, bit for bit);
// those named `rows`, when given, are joined by rows instead (a factor of
// the rows gathered). A shard's failure goes to store_fail(). `at_once`
// (pieces whose requests are single-threaded and touch only their own
// memory): with threads, the shards answer at once, one a thread, and are
// added in their order afterwards (the first failure in their order
// raised); otherwise one after another, each with the threads.
template <class Ptrs>
aspectr::Stats store_map(const Ptrs& pieces, const aspectr::Request& r, int threads, SEXP fail,
                         const char* rows = nullptr, bool at_once = false) {
  if (!r.refs.empty()) throw std::logic_error("request '" + r.op + "' by reference to several pieces");
  const std::size_t n = pieces.size();
  aspectr::Stats out;
  arma::mat joined;
  auto fold = [&](std::size_t i, aspectr::Stats& s) {
    if (rows != nullptr && s.has(rows)) joined = arma::join_cols(joined, s.take(rows));
    if (i == 0) out = std::move(s);
    else out.add(s);
  };
  const int nt = at_once && n > 1 ? std::min(aspectr::capped_threads(threads), static_cast<int>(n)) : 1;
  if (nt > 1) {
    std::vector<aspectr::Stats> parts(n);
    std::vector<std::string> why(n);
    aspectr::parallel_each(static_cast<int>(n), nt, [&](int i) {
      try {
        parts[i] = pieces[i]->run(r, 1);
      } catch (const std::exception& e) {
        why[i] = e.what();
        if (why[i].empty()) why[i] = "failed";
      }
    });
    for (std::size_t i = 0; i < n; ++i) {
      if (!why[i].empty()) store_fail(fail, i, why[i]);
      fold(i, parts[i]);
    }
  } else {
    for (std::size_t i = 0; i < n; ++i) {
      std::string why;
      try {
        aspectr::Stats s = pieces[i]->run(r, threads);
        fold(i, s);
      } catch (const std::exception& e) {
        why = e.what();
      }
      if (!why.empty()) store_fail(fail, i, why);
    }
  }
  if (rows != nullptr && joined.n_elem) out.set(rows, std::move(joined));
  return out;
}

// The shards of a fit of KL coordinate descent of CP data in this process
// (cpp_aspect_pieces_fit(local =), ntf_pieces_glue.cpp): the core runs
// every request on them without a trip through R.
std::unique_ptr<aspectr::Pieces> kcd_store_pieces(SEXP local, int threads);

}  // namespace aspectr_r

#endif
