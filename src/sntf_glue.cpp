// src/sntf_glue.cpp — entry points of the symmetric family: super-symmetric
// NTF on a symmetric sparse tensor, and symmetric NMF of an affinity matrix.
#include "r_adapters.h"

namespace {

// idx: L x nnz integer matrix of 0-based, ascending indices per column.
aspectr::sym::SymTensor make_symtensor(const Rcpp::IntegerMatrix& idx, const Rcpp::NumericVector& val,
                                       int n) {
  aspectr::sym::SymTensor Y;
  Y.n = static_cast<arma::uword>(n);
  Y.L = static_cast<arma::uword>(idx.nrow());
  const std::size_t nnz = val.size();
  if (static_cast<std::size_t>(idx.ncol()) != nnz) Rcpp::stop("internal error: index/value mismatch");
  Y.idx.resize(Y.L * nnz);
  const int* ip = idx.begin();
  for (std::size_t j = 0; j < Y.L * nnz; ++j) Y.idx[j] = static_cast<aspectr::index_t>(ip[j]);
  Y.val = arma::vec(const_cast<double*>(val.begin()), nnz, true);
  Y.finalize();
  return Y;
}

aspectr::sym::Options make_options(const std::string& method, double alpha, double beta, double omega,
                                   double sparsity, double l1, bool orthogonal) {
  aspectr::sym::Options o;
  if (method == "alpha") o.method = aspectr::sym::Method::Alpha;
  else if (method == "smart") o.method = aspectr::sym::Method::Smart;
  else if (method == "beta") o.method = aspectr::sym::Method::Beta;
  else if (method == "unfold") o.method = aspectr::sym::Method::Unfold;
  else Rcpp::stop("internal error: unknown sntf method '" + method + "'");
  o.alpha = alpha; o.beta = beta; o.omega = omega; o.sparsity = sparsity; o.l1 = l1;
  o.orthogonal = orthogonal;
  return o;
}

}  // namespace

// Super-symmetric NTF. G0 is n x k; returns G (n x k) and the trace.
// [[Rcpp::export]]
Rcpp::List cpp_sntf_fit(Rcpp::IntegerMatrix idx, Rcpp::NumericVector val, int n, Rcpp::NumericMatrix G0,
                        std::string method, double alpha, double beta, double omega, double sparsity,
                        double l1, bool orthogonal, int max_iter, double tol, int threads, bool verbose,
                        SEXP hook = R_NilValue, bool want_model = false) {
  const aspectr::sym::SymTensor Y = make_symtensor(idx, val, n);
  aspectr::sym::SNTFRule rule(Y, make_options(method, alpha, beta, omega, sparsity, l1, orthogonal));
  arma::mat Gt = Rcpp::as<arma::mat>(G0).t();
  aspectr::Control ctl;
  ctl.max_iter = max_iter; ctl.tol = tol; ctl.threads = threads;
  aspectr_r::RCallback cb(verbose, max_iter, "sntf (" + method + ")", hook, want_model);
  rule.start(Gt);
  const aspectr::FitTrace tr = aspectr::run_solver(rule, Y, Gt, ctl, cb);
  rule.finish(Y, Gt, threads);
  Rcpp::List out = Rcpp::List::create(Rcpp::Named("G") = Rcpp::wrap(arma::mat(Gt.t())));
  aspectr_r::add_trace(out, tr);
  return out;
}

// The objective of sntf() for a given G (n x k).
// [[Rcpp::export]]
double cpp_sntf_loss(Rcpp::IntegerMatrix idx, Rcpp::NumericVector val, int n, Rcpp::NumericMatrix G,
                     std::string method, double alpha, double beta, double l1, int threads) {
  const aspectr::sym::SymTensor Y = make_symtensor(idx, val, n);
  aspectr::sym::SNTFRule rule(Y, make_options(method, alpha, beta, 1.0, 0.0, l1, false));
  const arma::mat Gt = Rcpp::as<arma::mat>(G).t();
  return rule.loss(Y, Gt, threads);
}

// The symmetric MTTKRP  M_ij = sum_{i_2..i_L} y_{i i_2..i_L} prod g_{i_q j}
// (n x k), and the model at the stored sets (tests, predict).
// [[Rcpp::export]]
Rcpp::List cpp_sym_mttkrp(Rcpp::IntegerMatrix idx, Rcpp::NumericVector val, int n, Rcpp::NumericMatrix G,
                          int threads) {
  const aspectr::sym::SymTensor Y = make_symtensor(idx, val, n);
  const arma::mat Gt = Rcpp::as<arma::mat>(G).t();
  arma::vec z(Y.nnz());
  std::vector<double> acc;
  arma::mat M;
  // z is written from the serial pass below; the MTTKRP may be threaded
  aspectr::sym::sym_pass(Y, Gt, [](double y, double, double, double*) { return y; }, M, acc, threads);
  for (std::size_t s = 0; s < Y.nnz(); ++s) {
    const aspectr::index_t* t = Y.at(s);
    double v = 0.0;
    for (arma::uword j = 0; j < Gt.n_rows; ++j) {
      double p = 1.0;
      for (arma::uword q = 0; q < Y.L; ++q) p *= Gt(j, t[q]);
      v += p;
    }
    z[s] = v;
  }
  return Rcpp::List::create(Rcpp::Named("M") = Rcpp::wrap(arma::mat(M.t())),
                            Rcpp::Named("z") = Rcpp::NumericVector(z.begin(), z.end()),
                            Rcpp::Named("mult") = Rcpp::NumericVector(Y.mult.begin(), Y.mult.end()));
}

// Symmetric NMF A ~ H H'. Dense A (n x n) or sparse (CSC: i, p, x, the
// entries x / div). H0 and
// W0 are n x k. Returns H, W (n x k), the trace and the final symmetric
// objective 1/2 ||A - HH'||^2 + l1 sum H.
// [[Rcpp::export]]
Rcpp::List cpp_symnmf_fit(Rcpp::Nullable<Rcpp::NumericMatrix> dense, Rcpp::IntegerVector si,
                          Rcpp::IntegerVector sp, Rcpp::NumericVector sx, int n, Rcpp::NumericMatrix H0,
                          Rcpp::NumericMatrix W0, std::string method, double lambda, double l1, double omega,
                          bool orthogonal, int max_iter, double tol, int threads, bool verbose,
                          SEXP hook = R_NilValue, bool want_model = false, double div = 1.0,
                          bool triangle = false) {
  using aspectr::nmf::Data;
  std::unique_ptr<Data> A;
  Rcpp::NumericMatrix D;  // used in place for the duration of the call
  if (dense.isNotNull()) {
    D = Rcpp::NumericMatrix(dense.get());
    A.reset(new Data(D.begin(), D.nrow(), D.ncol()));
  } else {
    if (si.size() != sx.size() || sp.size() != n + 1 || sp[0] != 0 || sp[n] != sx.size())
      Rcpp::stop("internal error: inconsistent compressed-column data");
    for (R_xlen_t s = 0; s < si.size(); ++s)
      if (si[s] < 0 || si[s] >= n) Rcpp::stop("internal error: a row index is out of range");
    aspectr::nmf::Csc c;
    c.n_rows = n; c.n_cols = n;
    c.p.assign(sp.begin(), sp.end());
    // the row indices and values used in place for the duration of the
    // call, the entries sx / div; A' is A (checked symmetric by the R side)
    if (!(div > 0.0) || !std::isfinite(div)) Rcpp::stop("internal error: the data's divisor must be positive");
    c.borrow(reinterpret_cast<const std::uint32_t*>(si.begin()), sx.begin(), sx.size(), div);
    // (one triangle stored: read as the whole symmetric matrix)
    if (triangle) A.reset(new Data(std::move(c), Data::Triangle{}));
    else A.reset(new Data(std::move(c), Data::Symmetric{}));
  }
  aspectr::sym::SymMethod m;
  if (method == "anls") m = aspectr::sym::SymMethod::ANLS;
  else if (method == "hals") m = aspectr::sym::SymMethod::HALS;
  else if (method == "fpals") m = aspectr::sym::SymMethod::FPALS;
  else Rcpp::stop("internal error: unknown symnmf method '" + method + "'");
  aspectr::sym::SymModel M;
  M.Ht = Rcpp::as<arma::mat>(H0).t();
  M.Wt = Rcpp::as<arma::mat>(W0).t();
  aspectr::Control ctl;
  ctl.max_iter = max_iter; ctl.tol = tol; ctl.threads = threads;
  // (an exact factorization: relative error 1e-12, far below anything a fit
  // of data distinguishes)
  ctl.floor = 1e-24 * A->xnorm2();
  aspectr_r::RCallback cb(verbose, max_iter, "symnmf (" + method + ")", hook, want_model);
  aspectr::FitTrace tr;
  if (m == aspectr::sym::SymMethod::FPALS) {
    aspectr::sym::SymFPALSRule rule(l1, omega, orthogonal);
    rule.start(M);
    tr = aspectr::run_solver(rule, *A, M, ctl, cb);
    rule.finish(*A, M, threads);
  } else {
    aspectr::sym::SymNMFRule rule(m, lambda, l1);
    tr = aspectr::run_solver(rule, *A, M, ctl, cb);
  }
  arma::mat C;
  A->WtX(M.Ht, C, threads);
  const double sym = aspectr::sym::sym_objective(*A, M.Ht, C, l1);
  Rcpp::List out = Rcpp::List::create(
      Rcpp::Named("H") = Rcpp::wrap(arma::mat(M.Ht.t())),
      Rcpp::Named("W") = Rcpp::wrap(arma::mat(M.Wt.t())),
      Rcpp::Named("sym_objective") = sym,
      Rcpp::Named("xnorm2") = A->xnorm2());
  aspectr_r::add_trace(out, tr);
  return out;
}

// All m-subsets of n points (m x C(n, m), 0-based).
// [[Rcpp::export]]
Rcpp::IntegerMatrix cpp_all_tuples(int n, int m) {
  const arma::umat t = aspectr::sym::all_tuples(n, m);
  Rcpp::IntegerMatrix out(t.n_rows, t.n_cols);
  for (arma::uword j = 0; j < t.n_elem; ++j) out[j] = static_cast<int>(t[j]);
  return out;
}

// Mean squared distance of each tuple's points to their best q-dimensional
// affine (or linear) subspace. tuples: m x T, 0-based.
// [[Rcpp::export]]
Rcpp::NumericVector cpp_tuple_residuals(Rcpp::NumericMatrix X, Rcpp::IntegerMatrix tuples, int q, bool affine,
                                        int threads) {
  const arma::mat Xa(X.begin(), X.nrow(), X.ncol(), false, true);
  arma::umat t(tuples.nrow(), tuples.ncol());
  for (arma::uword j = 0; j < t.n_elem; ++j) t[j] = static_cast<arma::uword>(tuples[j]);
  const arma::vec r = aspectr::sym::tuple_residuals(Xa, t, q, affine, threads);
  return Rcpp::NumericVector(r.begin(), r.end());
}
