// src/index_glue.cpp — index conversion at the R boundary.
#include <Rcpp.h>
#include <cmath>
#include <string>
#include <vector>
#include "aspectr/patterns.h"

// A sparse tensor's nnz x N matrix of 1-based indices -> the core's N x nnz
// 0-based layout in one pass (t(index - 1L) makes two full temporaries).
// [[Rcpp::export]]
Rcpp::IntegerMatrix cpp_index0_t(Rcpp::IntegerMatrix index) {
  const R_xlen_t nnz = index.nrow(), N = index.ncol();
  Rcpp::IntegerMatrix out(N, nnz);
  const int* in = index.begin();
  int* o = out.begin();
  for (R_xlen_t n = 0; n < N; ++n) {
    const int* col = in + n * nnz;
    for (R_xlen_t s = 0; s < nnz; ++s) {
      const int v = col[s];
      // last line of defence (the R side checks first): 0, negative and NA
      // indices would become the core's "missing mode" marker or wrap around
      if (v == NA_INTEGER || v < 1)
        Rcpp::stop("sparse tensor index %s in mode %d (row %d): indices must be 1-based, between 1 and the mode's size",
                   v == NA_INTEGER ? std::string("NA") : std::to_string(v), static_cast<int>(n + 1),
                   static_cast<int>(s + 1));
      o[s * N + n] = v - 1;
    }
  }
  return out;
}

// lca()'s data preparation in one pass: `cols` is a list of factors,
// integer and double columns (R turns other types into factors first).
// Returns per column its codes and levels (a factor: the indices of the
// levels that occur; a number: its sorted distinct values), or `bad`, the
// first column (1-based) with a value that is not a whole number; then the
// kept observations (every response observed with `drop_incomplete`, else
// at least one), their codes, and the distinct response patterns with
// their counts (see aspectr/patterns.h).
// [[Rcpp::export]]
Rcpp::List cpp_lca_patterns(Rcpp::List cols, bool drop_incomplete) {
  const std::size_t J = cols.size();
  const std::size_t n = J ? Rf_xlength(cols[0]) : 0;
  std::vector<int> codes(n * J);
  std::vector<int> nlev(J);
  Rcpp::List levels(J);
  for (std::size_t j = 0; j < J; ++j) {
    SEXP v = cols[j];
    int* cj = codes.data() + j * n;
    if (static_cast<std::size_t>(Rf_xlength(v)) != n) Rcpp::stop("internal error: columns of unequal length");
    if (Rf_isFactor(v)) {
      std::vector<int> used;
      const int* x = INTEGER(v);
      std::vector<int> xs(x, x + n);
      for (int& c : xs) if (c == NA_INTEGER) c = 0;
      aspectr::patterns::code_factor(xs.data(), n, Rf_length(Rf_getAttrib(v, R_LevelsSymbol)), used, cj);
      levels[j] = Rcpp::IntegerVector(used.begin(), used.end());
      nlev[j] = static_cast<int>(used.size());
    } else if (TYPEOF(v) == INTSXP) {
      const int* x = INTEGER(v);
      std::vector<int> vals;
      aspectr::patterns::code_whole(x, n, [x](std::size_t i) { return x[i] == NA_INTEGER; }, vals, cj);
      levels[j] = Rcpp::IntegerVector(vals.begin(), vals.end());
      nlev[j] = static_cast<int>(vals.size());
    } else if (TYPEOF(v) == REALSXP) {
      const double* x = REAL(v);
      std::vector<double> vals;
      const long bad = aspectr::patterns::code_whole(x, n, [x](std::size_t i) { return std::isnan(x[i]); },
                                                     vals, cj);
      if (bad >= 0) return Rcpp::List::create(Rcpp::Named("bad") = static_cast<int>(j + 1));
      levels[j] = Rcpp::NumericVector(vals.begin(), vals.end());
      nlev[j] = static_cast<int>(vals.size());
    } else {
      Rcpp::stop("internal error: column %d is neither a factor nor numeric", static_cast<int>(j + 1));
    }
  }
  const aspectr::patterns::PatternTable t =
      aspectr::patterns::count_patterns(codes.data(), n, J, nlev, drop_incomplete);
  const std::size_t R = t.rows.size();
  Rcpp::IntegerMatrix kept(R, J);
  for (std::size_t j = 0; j < J; ++j)
    for (std::size_t r = 0; r < R; ++r) {
      const int c = codes[static_cast<std::size_t>(t.rows[r]) + j * n];
      kept(r, j) = c == 0 ? NA_INTEGER : c;
    }
  Rcpp::IntegerMatrix idx(J, t.P);
  std::copy(t.idx.begin(), t.idx.end(), idx.begin());
  Rcpp::IntegerVector rows(R), row_pattern(R);
  for (std::size_t r = 0; r < R; ++r) {
    rows[r] = t.rows[r] + 1;
    row_pattern[r] = t.row_pattern[r] + 1;
  }
  return Rcpp::List::create(Rcpp::Named("bad") = 0, Rcpp::Named("levels") = levels,
                            Rcpp::Named("nlev") = Rcpp::IntegerVector(nlev.begin(), nlev.end()),
                            Rcpp::Named("codes") = kept, Rcpp::Named("rows") = rows,
                            Rcpp::Named("idx") = idx,
                            Rcpp::Named("val") = Rcpp::NumericVector(t.counts.begin(), t.counts.end()),
                            Rcpp::Named("row_pattern") = row_pattern);
}
