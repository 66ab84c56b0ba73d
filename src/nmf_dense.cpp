// src/nmf_dense.cpp — one pass over a dense numeric matrix or a
// compressed-column one for nmf_data(): validity counts and the statistics
// the fit object needs, without building triplets or temporaries (the
// matrix itself is then used in place, not copied).
#include <RcppArmadillo.h>
#include <aspectr/nmf/dense.h>
#include <aspectr/nmf/nndsvd.h>
#include <cmath>

using aspectr::nmf::NndsvdColumn;
using aspectr::nmf::NndsvdPart;
using aspectr::nmf::nndsvd_column;
using aspectr::nmf::nndsvd_part;
using aspectr::nmf::nndsvd_rows;

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
// triplets, with u's rows in blocks (aspectr/nmf/nndsvd.h: a fit's shards,
// each keeping its rows of u; u whole is one block), one step `op` at a
// time (nmf_nndsvd()):
// "part": a block's parts of the columns' sums from its rows of u (a, m_s
//   x k), k x 7: the sums of squares of the positive and negative parts,
//   each as two doubles whose sum is the long double, the parts' largest
//   entries, the first entry of largest magnitude;
// "plan": from the blocks' parts (a, a list in the blocks' order), v (b,
//   n x k) and d (c, k): k x (3 + n), the columns' choices (1: the
//   positive parts), scales r and norms nu, then H; attribute "wmax", W's
//   largest entry;
// "block": a block's rows of W from its rows of u (a) and b = c(r, nu,
//   choices, thr, fill), entries at or below thr set to fill (nndsvda's
//   zeros; thr = -Inf for none): k x m_s (the core's layout), or m_s x k
//   when c is TRUE.
// [[Rcpp::export]]
SEXP cpp_nndsvd_blocks(std::string op, SEXP a, SEXP b = R_NilValue, SEXP c = R_NilValue) {
  if (op == "part") {
    const std::size_t m = Rf_nrows(a), k = Rf_ncols(a);
    Rcpp::NumericMatrix out(k, 7);
    for (std::size_t j = 0; j < k; ++j) {
      const NndsvdPart p = nndsvd_part(REAL(a) + j * m, m);
      const double hp = static_cast<double>(p.ssp), hn = static_cast<double>(p.ssn);
      const double row[7] = {hp, static_cast<double>(p.ssp - hp), hn, static_cast<double>(p.ssn - hn),
                             p.maxp, p.maxn, p.first};
      for (int q = 0; q < 7; ++q) out(j, q) = row[q];
    }
    return out;
  }
  if (op == "plan") {
    const Rcpp::List parts(a);
    const std::size_t n = Rf_nrows(b), k = Rf_length(c);
    Rcpp::NumericMatrix out(k, 3 + n);
    double wmax = 0.0;
    std::vector<NndsvdPart> ps(parts.size());
    for (std::size_t j = 0; j < k; ++j) {
      for (R_xlen_t q = 0; q < parts.size(); ++q) {
        const double* P = REAL(parts[q]);
        ps[q].ssp = static_cast<long double>(P[j]) + static_cast<long double>(P[j + k]);
        ps[q].ssn = static_cast<long double>(P[j + 2 * k]) + static_cast<long double>(P[j + 3 * k]);
        ps[q].maxp = P[j + 4 * k];
        ps[q].maxn = P[j + 5 * k];
        ps[q].first = P[j + 6 * k];
      }
      const NndsvdColumn col = nndsvd_column(j, ps, REAL(b) + j * n, n, REAL(c)[j]);
      out(j, 0) = col.pos ? 1.0 : 0.0;
      out(j, 1) = col.r;
      out(j, 2) = col.nu;
      wmax = std::max(wmax, col.wmax);
      if (n > 0) nndsvd_rows(j, col, true, REAL(b) + j * n, n, &out(j, 3), k);
    }
    out.attr("wmax") = wmax;
    return out;
  }
  if (op != "block") Rcpp::stop("internal error: unknown NNDSVD step");
  const std::size_t m = Rf_nrows(a), k = Rf_ncols(a);
  const bool by_rows = !Rf_isNull(c) && Rf_asLogical(c) == TRUE;
  if (static_cast<std::size_t>(Rf_length(b)) != 3 * k + 2) Rcpp::stop("internal error: an NNDSVD plan of the wrong size");
  const double* p = REAL(b);
  Rcpp::NumericMatrix W(by_rows ? m : k, by_rows ? k : m);
  for (std::size_t j = 0; j < k; ++j) {
    NndsvdColumn col;
    col.r = p[j];
    col.nu = p[k + j];
    col.pos = p[2 * k + j] != 0.0;
    if (m > 0) nndsvd_rows(j, col, false, REAL(a) + j * m, m, by_rows ? &W(0, j) : &W(j, 0), by_rows ? 1 : k);
  }
  const double thr = p[3 * k], fill = p[3 * k + 1];
  for (double& w : W) if (w <= thr) w = fill;
  return W;
}
