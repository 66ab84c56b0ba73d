// src/nmf_dense.cpp — one pass over a dense numeric matrix or a
// compressed-column one for nmf_data(): validity counts and the statistics
// the fit object needs, without building triplets or temporaries (the
// matrix itself is then used in place, not copied).
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

// A compressed-column matrix's values x (row indices i, m rows; or any
// values, with no indices and m = 0) divided by
// div, in one pass without temporaries of the data's size: the number of
// values that are not positive and finite (`bad`), the largest value (of
// x itself), and of x / div the total, sum x log x, the row totals and,
// when `loglik`, the Poisson log-likelihood's constant
// sum(x log x - x - lgamma(x + 1)). Sums run in long double, as R's sum().
// [[Rcpp::export]]
Rcpp::List cpp_csc_scan(Rcpp::NumericVector x, Rcpp::IntegerVector i, int m, double div, bool loglik) {
  const R_xlen_t nnz = x.size();
  const bool rows_wanted = i.size() > 0;  // (no indices: no row totals)
  if (rows_wanted && i.size() != nnz) Rcpp::stop("internal error: indices and values differ in length");
  Rcpp::NumericVector rows(m);
  double* rt = REAL(rows);
  const double* v = REAL(x);
  const int* ix = INTEGER(i);
  double bad = 0.0, top = 0.0;
  long double total = 0.0, xlogx = 0.0, ll = 0.0;
  for (R_xlen_t s = 0; s < nnz; ++s) {
    const double raw = v[s];
    if (!(raw > 0.0 && raw < R_PosInf)) { bad += 1; continue; }
    if (raw > top) top = raw;
    const double a = div == 1.0 ? raw : raw / div;
    const double la = std::log(a);
    total += a;
    xlogx += a * la;
    if (loglik) ll += a * la - a - std::lgamma(a + 1.0);
    if (rows_wanted && ix[s] >= 0 && ix[s] < m) rt[ix[s]] += a;
  }
  return Rcpp::List::create(Rcpp::Named("bad") = bad, Rcpp::Named("top") = top,
                            Rcpp::Named("total") = static_cast<double>(total),
                            Rcpp::Named("xlogx") = static_cast<double>(xlogx),
                            Rcpp::Named("row_totals") = rows,
                            Rcpp::Named("loglik_const") = loglik ? static_cast<double>(ll) : NA_REAL);
}

// NNDSVD (Boutsidis and Gallopoulos 2008) from the leading k singular
// triplets (u: m x k, v: n x k, d): W (m x k) and H (k x n), as nmf_init()
// describes, in one pass per component without R temporaries. Sums of
// squares run in long double, as R's sum().
// [[Rcpp::export]]
Rcpp::List cpp_nndsvd(Rcpp::NumericMatrix u, Rcpp::NumericMatrix v, Rcpp::NumericVector d, int k) {
  const std::size_t m = u.nrow(), n = v.nrow();
  if (u.ncol() < k || v.ncol() < k || d.size() < k) Rcpp::stop("internal error: fewer singular triplets than k");
  Rcpp::NumericMatrix W(m, k), H(k, n);
  auto norm_part = [](const double* x, std::size_t len, bool pos) {
    long double s = 0.0;
    for (std::size_t i = 0; i < len; ++i) {
      const double p = pos ? (x[i] > 0.0 ? x[i] : 0.0) : (x[i] < 0.0 ? -x[i] : 0.0);
      s += p * p;
    }
    return std::sqrt(static_cast<double>(s));
  };
  for (int j = 0; j < k; ++j) {
    const double* uj = &u(0, j);
    const double* vj = &v(0, j);
    double* wj = &W(0, j);
    if (j == 0) {
      const double r = std::sqrt(d[0]);
      for (std::size_t i = 0; i < m; ++i) wj[i] = r * std::fabs(uj[i]);
      for (std::size_t i = 0; i < n; ++i) H(0, i) = r * std::fabs(vj[i]);
      continue;
    }
    const double nup = norm_part(uj, m, true), nun = norm_part(uj, m, false);
    const double nvp = norm_part(vj, n, true), nvn = norm_part(vj, n, false);
    const double np = nup * nvp, nn = nun * nvn;
    bool pos;
    if (std::fabs(np - nn) <= 1e-10 * std::max(np, nn)) {
      // a tie (to rounding): the part holding u's largest entry (the first)
      std::size_t at = 0;
      for (std::size_t i = 1; i < m; ++i) if (std::fabs(uj[i]) > std::fabs(uj[at])) at = i;
      pos = uj[at] > 0.0;
    } else {
      pos = np >= nn;
    }
    const double nu = std::max(pos ? nup : nun, 1e-300), nv = std::max(pos ? nvp : nvn, 1e-300);
    const double r = std::sqrt(d[j] * (pos ? np : nn));
    for (std::size_t i = 0; i < m; ++i) {
      const double p = pos ? (uj[i] > 0.0 ? uj[i] : 0.0) : (uj[i] < 0.0 ? -uj[i] : 0.0);
      wj[i] = r * (p / nu);
    }
    for (std::size_t i = 0; i < n; ++i) {
      const double p = pos ? (vj[i] > 0.0 ? vj[i] : 0.0) : (vj[i] < 0.0 ? -vj[i] : 0.0);
      H(j, i) = r * (p / nv);
    }
  }
  return Rcpp::List::create(Rcpp::Named("W") = W, Rcpp::Named("H") = H);
}
