// src/qem_shard_glue.cpp — plsa(loss = "tsallis") of sharded data: one
// shard's parts of a q-EM iteration (aspectr/solvers/qem_shard.h) and the
// master's updates of the weights and the shared modes, for R's shard
// engine (R/qem-shards.R). Factors in the core's layout, k x d_n; the shard's
// own document factor first.
#include "r_adapters.h"

using namespace aspectr_r;

namespace {
// A shard's cells normalized as the whole data's (by its largest value
// `top` and scaled total `scaled`), with the weights t of the current step
struct QemShard {
  Rcpp::IntegerMatrix idx;  // read in place by G, as its values (normally)
  Rcpp::NumericVector val;
  aspectr::SparseTensor G;
  arma::vec t;
};

QemShard& qem_shard(SEXP state) {
  Rcpp::XPtr<QemShard> s(state);
  return *s;
}

// the model (read in place) for a shard's tensor
aspectr::AspectModel shard_model(const aspectr::SparseTensor& G, const Rcpp::NumericVector& lambda,
                                 const Rcpp::List& factors) {
  aspectr::AspectModel M;
  M.lambda = Rcpp::as<arma::vec>(lambda);
  if (static_cast<std::size_t>(factors.size()) != G.dims.size())
    Rcpp::stop("internal error: a model of the wrong order");
  for (R_xlen_t n = 0; n < factors.size(); ++n) {
    // (read in place: a factor that is not double would be a temporary copy)
    if (TYPEOF(factors[n]) != REALSXP) Rcpp::stop("internal error: a factor that is not double");
    Rcpp::NumericMatrix f = factors[n];
    if (f.ncol() != static_cast<int>(G.dims[static_cast<std::size_t>(n)]) ||
        f.nrow() != static_cast<int>(M.lambda.n_elem))
      Rcpp::stop("internal error: a factor of the wrong size");
    M.F.emplace_back(f.begin(), f.nrow(), f.ncol(), false, true);
  }
  return M;
}

Rcpp::NumericVector as_r(const arma::vec& v) { return Rcpp::NumericVector(v.begin(), v.end()); }
}  // namespace

// [[Rcpp::export]]
SEXP cpp_qem_shard_state(Rcpp::IntegerMatrix idx, Rcpp::NumericVector val, Rcpp::IntegerVector dims,
                         double top, double scaled) {
  std::unique_ptr<QemShard> s(new QemShard());
  s->idx = idx;
  s->val = val;
  s->G = shard_scaled_tensor(s->idx, s->val, dims, top, scaled);
  return Rcpp::XPtr<QemShard>(s.release(), true);
}

// A shard file read into `buffer` (kept by the store across reads), its
// cells normalized as in cpp_qem_shard_state(); the state reads the buffer
// in place (valid until the buffer is read again).
// [[Rcpp::export]]
SEXP cpp_qem_shard_file(SEXP buffer, std::string path, Rcpp::IntegerVector dims, double top, double scaled) {
  Rcpp::XPtr<aspectr::ShardBuffer> buf(buffer);
  aspectr::read_shard_file(path, *buf);
  std::vector<arma::uword> want(dims.begin(), dims.end());
  if (buf->dims != want) Rcpp::stop("its sizes differ from those shards() recorded");
  std::unique_ptr<QemShard> s(new QemShard());
  s->G = aspectr::shard_tensor(*buf, want, top, scaled);
  return Rcpp::XPtr<QemShard>(s.release(), true);
}

// The weights t of the model entering the step (kept in the state) and the
// shard's part of sum t p.
// [[Rcpp::export]]
double cpp_qem_shard_weights(SEXP state, Rcpp::NumericVector lambda, Rcpp::List factors, double q,
                             int threads) {
  QemShard& s = qem_shard(state);
  return aspectr::qem_weights(s.G, shard_model(s.G, lambda, factors), q, threads, s.t);
}

// Step 1: the weights, then the documents' part (a, lg and its row maxima).
// [[Rcpp::export]]
Rcpp::List cpp_qem_shard_docs(SEXP state, Rcpp::NumericVector lambda, Rcpp::List factors, double q,
                              int threads) {
  QemShard& s = qem_shard(state);
  const aspectr::AspectModel M = shard_model(s.G, lambda, factors);
  const double tsum = aspectr::qem_weights(s.G, M, q, threads, s.t);
  arma::vec a, mx;
  arma::mat lg;
  aspectr::qem_shard_docs(s.G, M, s.t, q, threads, a, lg, mx);
  Rcpp::NumericVector m = as_r(mx);
  m.attr("class") = "shard_max";
  return Rcpp::List::create(Rcpp::Named("tsum") = tsum, Rcpp::Named("a") = as_r(a),
                            Rcpp::Named("lg") = lg, Rcpp::Named("mx") = m);
}

// Step 2: u, its row sums, V_0' (when `with_v0`: the further modes' steps
// need it) and the shard's part of B_1 (with the old factors of the modes
// after 1).
// [[Rcpp::export]]
Rcpp::List cpp_qem_shard_norm(SEXP state, Rcpp::NumericMatrix lg, Rcpp::NumericVector mx,
                              Rcpp::NumericMatrix old, Rcpp::List factors, double q, bool with_v0, int threads) {
  QemShard& s = qem_shard(state);
  arma::mat u, V0, B;
  arma::vec tot;
  aspectr::qem_shard_normalize(Rcpp::as<arma::mat>(lg), Rcpp::as<arma::vec>(mx), Rcpp::as<arma::mat>(old), q,
                               u, tot, V0);
  std::vector<arma::mat> V;
  V.push_back(V0);
  for (R_xlen_t n = 0; n < factors.size(); ++n) V.push_back(Rcpp::as<arma::mat>(factors[n]));
  std::vector<const arma::mat*> Vp;
  for (const arma::mat& v : V) Vp.push_back(&v);
  if (Vp.size() != s.G.dims.size() || s.t.n_elem != s.G.nnz())
    Rcpp::stop("internal error: a model of the wrong order, or no weights");
  for (std::size_t n = 0; n < Vp.size(); ++n)
    if (Vp[n]->n_rows != V0.n_rows || Vp[n]->n_cols != s.G.dims[n]) Rcpp::stop("internal error: a factor of the wrong size");
  aspectr::mttkrp(s.G, Vp, 1, B, threads, s.t.memptr());
  return Rcpp::List::create(Rcpp::Named("u") = u, Rcpp::Named("tot") = as_r(tot),
                            Rcpp::Named("V0") = with_v0 ? Rcpp::wrap(V0) : R_NilValue, Rcpp::Named("B") = B);
}

// Step 3: the shard's part of B_n from the factors `V` (V_0' first).
// [[Rcpp::export]]
Rcpp::NumericMatrix cpp_qem_shard_mode(SEXP state, Rcpp::List V, int mode, int threads) {
  QemShard& s = qem_shard(state);
  std::vector<arma::mat> F;
  for (R_xlen_t n = 0; n < V.size(); ++n) F.push_back(Rcpp::as<arma::mat>(V[n]));
  std::vector<const arma::mat*> Vp;
  for (const arma::mat& v : F) Vp.push_back(&v);
  if (Vp.size() != s.G.dims.size() || mode < 1 || static_cast<std::size_t>(mode) >= Vp.size() ||
      s.t.n_elem != s.G.nnz())
    Rcpp::stop("internal error: a model of the wrong order, or no weights");
  for (std::size_t n = 0; n < Vp.size(); ++n)
    if (Vp[n]->n_rows != Vp[0]->n_rows || Vp[n]->n_cols != s.G.dims[n]) Rcpp::stop("internal error: a factor of the wrong size");
  arma::mat B;
  aspectr::mttkrp(s.G, Vp, static_cast<std::size_t>(mode), B, threads, s.t.memptr());
  return Rcpp::wrap(B);
}

// The shard's part of the Tsallis divergence's sum
// [[Rcpp::export]]
double cpp_qem_shard_sum(SEXP state, Rcpp::NumericVector lambda, Rcpp::List factors, double q, int threads) {
  QemShard& s = qem_shard(state);
  return aspectr::cell_sum(aspectr::Loss::Tsallis, q, s.G, shard_model(s.G, lambda, factors), threads);
}

// Lets a shard's q-EM state (its weights, a double per cell) go now rather
// than when R next collects its pointer (R does not see the memory behind
// it): a shard streamed from its file is read again for every operation,
// and several reads would otherwise be held at once.
// [[Rcpp::export]]
void cpp_qem_shard_release(SEXP state) {
  Rcpp::XPtr<QemShard> s(state);
  s.release();
}
