// src/nmf_dense.cpp — one pass over a dense numeric matrix for nmf_data():
// validity counts and the statistics the fit object needs, without building
// triplets (the matrix itself is then used in place, not copied).
#include <RcppArmadillo.h>
#include <aspectr/nmf/dense.h>
#include <cmath>

// [[Rcpp::export]]
Rcpp::List cpp_dense_scan(Rcpp::NumericMatrix x) {
  const R_xlen_t m = x.nrow(), n = x.ncol();
  const double* p = REAL(x);
  Rcpp::NumericVector rows(m);
  double* rt = REAL(rows);
  double total = 0.0, xlogx = 0.0, nnz = 0.0, bad_na = 0.0, bad_inf = 0.0, bad_neg = 0.0;
  for (R_xlen_t j = 0; j < n; ++j) {
    const double* c = p + j * m;
    for (R_xlen_t i = 0; i < m; ++i) {
      const double v = c[i];
      if (v > 0.0) {
        if (v == R_PosInf) { bad_inf += 1; continue; }
        nnz += 1; total += v; rt[i] += v; xlogx += v * std::log(v);
      } else if (v != 0.0) {  // negative, -Inf or NA/NaN
        if (std::isnan(v)) bad_na += 1;
        else if (v == R_NegInf) bad_inf += 1;
        else bad_neg += 1;
      }
    }
  }
  return Rcpp::List::create(Rcpp::Named("bad") = bad_na + bad_inf + bad_neg,
                            Rcpp::Named("nnz") = nnz, Rcpp::Named("total") = total,
                            Rcpp::Named("xlogx") = xlogx, Rcpp::Named("row_totals") = rows);
}

// The tiled dense kernels from R (nmf_svd(), nmf_WtX() and the tests):
// P' Q (P is m x a, Q is m x b) and A B' (A is m x n, B is b x n); R's
// reference BLAS is much slower.
// [[Rcpp::export]]
Rcpp::NumericMatrix cpp_dense_tn(Rcpp::NumericMatrix P, Rcpp::NumericMatrix Q, int threads) {
  const std::size_t m = P.nrow(), a = P.ncol(), b = Q.ncol();
  if (static_cast<std::size_t>(Q.nrow()) != m) Rcpp::stop("internal error: non-conformable arguments");
  Rcpp::NumericMatrix out(a, b);
  aspectr::nmf::dense::tn(REAL(P), m, a, REAL(Q), m, b, m, REAL(out), threads);
  return out;
}

// [[Rcpp::export]]
Rcpp::NumericMatrix cpp_dense_nn(Rcpp::NumericMatrix A, Rcpp::NumericMatrix B, int threads) {
  const std::size_t m = A.nrow(), n = A.ncol(), b = B.nrow();
  if (static_cast<std::size_t>(B.ncol()) != n) Rcpp::stop("internal error: non-conformable arguments");
  Rcpp::NumericMatrix out(m, b);
  aspectr::nmf::dense::nn(REAL(A), m, m, n, REAL(B), b, b, REAL(out), threads);
  return out;
}
