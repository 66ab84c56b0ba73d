// src/index_glue.cpp — index conversion at the R boundary.
#include <Rcpp.h>
#include <algorithm>
#include <cmath>
#include <string>
#include <vector>
#include "aspectr/patterns.h"
#include "aspectr/summary.h"

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

// validate_sptensor()'s check of a sparse tensor's nnz x N index matrix
// (integer or double) in one pass, without temporaries of its size: the
// first entry, in column-major order (as which(arr.ind = TRUE)), that is
// missing, not a whole number or outside 1..dims[n], as c(row, mode)
// (1-based); integer(0) when every entry is valid.
// [[Rcpp::export]]
Rcpp::IntegerVector cpp_first_bad_index(SEXP index, Rcpp::IntegerVector dims) {
  if (!Rf_isMatrix(index)) Rcpp::stop("internal error: the index must be a matrix");
  const R_xlen_t nnz = Rf_nrows(index), N = Rf_ncols(index);
  if (N != dims.size()) Rcpp::stop("internal error: the index and dims differ in modes");
  for (R_xlen_t n = 0; n < N; ++n) {
    const double hi = dims[n];
    for (R_xlen_t s = 0; s < nnz; ++s) {
      bool bad;
      if (TYPEOF(index) == INTSXP) {
        const int v = INTEGER(index)[n * nnz + s];
        bad = v == NA_INTEGER || v < 1 || v > hi;
      } else if (TYPEOF(index) == REALSXP) {
        const double v = REAL(index)[n * nnz + s];
        bad = !(v >= 1.0 && v <= hi) || v != std::round(v);
      } else {
        Rcpp::stop("internal error: the index must be integer or double");
      }
      if (bad) return Rcpp::IntegerVector::create(static_cast<int>(s + 1), static_cast<int>(n + 1));
    }
  }
  return Rcpp::IntegerVector(0);
}

// Whether a square compressed-column matrix (n x n; row indices sorted
// within each column, as in a dgCMatrix) is symmetric: every entry (i, j)
// has an entry (j, i) within tol * max(max |x|, 1), found by binary search
// in column i (no temporaries of the data's size).
// [[Rcpp::export]]
bool cpp_csc_symmetric(Rcpp::IntegerVector i, Rcpp::IntegerVector p, Rcpp::NumericVector x, int n, double tol) {
  if (p.size() != n + 1 || i.size() != x.size()) Rcpp::stop("internal error: inconsistent compressed-column data");
  double top = 1.0;
  for (R_xlen_t s = 0; s < x.size(); ++s) top = std::max(top, std::fabs(x[s]));
  const double lim = tol * top;
  const int* ri = i.begin();
  for (int j = 0; j < n; ++j) {
    for (int s = p[j]; s < p[j + 1]; ++s) {
      const int r = ri[s];
      if (r < 0 || r >= n) return false;
      const int* b = ri + p[r];
      const int* e = ri + p[r + 1];
      const int* at = std::lower_bound(b, e, j);
      if (at == e || *at != j) return false;
      if (!(std::fabs(x[at - ri] - x[s]) <= lim)) return false;
    }
  }
  return true;
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

// A dgCMatrix's slots (0-based row indices i, column pointers p, values x)
// -> the aspect-model triplets in one pass, without R temporaries: the
// non-zero entries ordered by row, then column (a counting sort of the
// compressed-column order, which is by column), as a 2 x nnz index matrix
// (0-based) and their values; their total summed in long double in the
// compressed-column order (as R's sum()); and the counts the input checks
// need (missing, infinite and negative values, the smallest value).
// With `by_column`, the entries stay in the compressed-column order, and
// when no stored value is zero `val` is NULL: the values are `x` itself.
// [[Rcpp::export]]
Rcpp::List cpp_csc_triplets(Rcpp::IntegerVector i, Rcpp::IntegerVector p, Rcpp::NumericVector x, int nrow,
                            bool by_column = false, bool build = true) {
  const R_xlen_t ncol = p.size() - 1, n = x.size();
  if (ncol < 0 || p[ncol] != n || i.size() != n)
    Rcpp::stop("the sparse matrix is malformed: its slots p, i and x do not agree in length");
  double n_na = 0, n_inf = 0, n_neg = 0, smallest = R_PosInf;
  for (R_xlen_t s = 0; s < n; ++s) {
    const double v = x[s];
    if (ISNAN(v)) { ++n_na; continue; }
    if (!std::isfinite(v)) { ++n_inf; continue; }
    if (v < 0) ++n_neg;
    if (v < smallest) smallest = v;
  }
  Rcpp::List checks = Rcpp::List::create(Rcpp::Named("na") = n_na, Rcpp::Named("inf") = n_inf,
                                         Rcpp::Named("neg") = n_neg, Rcpp::Named("min") = smallest);
  if (n_na > 0 || n_inf > 0 || n_neg > 0) return Rcpp::List::create(Rcpp::Named("checks") = checks);
  std::vector<R_xlen_t> start(static_cast<std::size_t>(nrow) + 1, 0);
  R_xlen_t kept = 0;
  long double total = 0.0;
  for (R_xlen_t s = 0; s < n; ++s) {
    if (x[s] == 0) continue;
    const int r = i[s];
    if (r < 0 || r >= nrow) Rcpp::stop("internal error: row index out of range");
    ++start[static_cast<std::size_t>(r) + 1];
    ++kept;
    total += x[s];
  }
  // (without `build`: the checks, the total and the number of cells kept)
  if (!build)
    return Rcpp::List::create(Rcpp::Named("checks") = checks, Rcpp::Named("kept") = static_cast<double>(kept),
                              Rcpp::Named("total") = static_cast<double>(total));
  if (by_column) {
    Rcpp::IntegerMatrix idx(2, kept);
    int* ip = idx.begin();
    const bool shared = kept == n;
    Rcpp::NumericVector val(shared ? 0 : kept);
    R_xlen_t t = 0;
    for (R_xlen_t j = 0; j < ncol; ++j) {
      for (R_xlen_t s = p[j]; s < p[j + 1]; ++s) {
        if (x[s] == 0) continue;
        ip[2 * t] = i[s];
        ip[2 * t + 1] = static_cast<int>(j);
        if (!shared) val[t] = x[s];
        ++t;
      }
    }
    return Rcpp::List::create(Rcpp::Named("checks") = checks, Rcpp::Named("idx") = idx,
                              Rcpp::Named("val") = shared ? R_NilValue : static_cast<SEXP>(val),
                              Rcpp::Named("total") = static_cast<double>(total));
  }
  for (int r = 0; r < nrow; ++r) start[r + 1] += start[r];
  Rcpp::IntegerMatrix idx(2, kept);
  Rcpp::NumericVector val(kept);
  int* ip = idx.begin();
  for (R_xlen_t j = 0; j < ncol; ++j) {
    for (R_xlen_t s = p[j]; s < p[j + 1]; ++s) {
      if (x[s] == 0) continue;
      const R_xlen_t t = start[i[s]]++;
      ip[2 * t] = i[s];
      ip[2 * t + 1] = static_cast<int>(j);
      val[t] = x[s];
    }
  }
  return Rcpp::List::create(Rcpp::Named("checks") = checks, Rcpp::Named("idx") = idx,
                            Rcpp::Named("val") = val, Rcpp::Named("total") = static_cast<double>(total));
}

// For new_plsa(), without temporaries of the data's size: sum g log g with
// g the values normalized as R computes it (val / max(val), then divided by
// its sum; sums in long double as R's sum()), and the values summed by
// their first index (rowsum()'s order; a missing index, -1, skipped).
// `idx` is the N x nnz index matrix, or (a dgCMatrix's slot i) the first
// indices alone.
// [[Rcpp::export]]
Rcpp::List cpp_data_summary(Rcpp::IntegerVector idx, Rcpp::NumericVector val, int d1) {
  const R_xlen_t n = val.size(), N = Rf_isMatrix(idx) ? Rf_nrows(idx) : 1;
  if (idx.size() != N * n) Rcpp::stop("internal error: the indices and values disagree in length");
  const double neg_entropy = aspectr::neg_entropy(val.begin(), static_cast<std::size_t>(n));
  Rcpp::NumericVector totals(d1);
  const int* ip = idx.begin();
  for (R_xlen_t s = 0; s < n; ++s) {
    const int i = ip[s * N];
    if (i >= 0 && i < d1) totals[i] += val[s];
  }
  return Rcpp::List::create(Rcpp::Named("neg_entropy") = neg_entropy, Rcpp::Named("doc_totals") = totals);
}

// Whether every value is a whole number (all(v == round(v)) without its
// two temporaries of the data's size; NaN counts as not whole).
// [[Rcpp::export]]
bool cpp_all_whole(Rcpp::NumericVector v) {
  const R_xlen_t n = v.size();
  const double* p = v.begin();
  for (R_xlen_t s = 0; s < n; ++s)
    if (!(p[s] == std::nearbyint(p[s]))) return false;
  return true;
}

// The columns of a numeric matrix in the order `ord` (1-based), with the
// dimnames `dn`, in place: for a fit's documents' factor that the shards'
// gather made and nothing but the fit's own runs refer to (R's reference
// counts stay above one there), so that the fit holds it without a second
// matrix of the documents' size. The caller vouches that no other R object
// shares `x`.
// [[Rcpp::export]]
void cpp_permute_columns_owned(SEXP x, Rcpp::IntegerVector ord, SEXP dn) {
  if (!Rf_isReal(x) || !Rf_isMatrix(x)) Rcpp::stop("internal error: not a numeric matrix");
  const R_xlen_t n = Rf_nrows(x), k = Rf_ncols(x);
  if (ord.size() != k) Rcpp::stop("internal error: an order of the wrong length");
  std::vector<R_xlen_t> from(static_cast<std::size_t>(k));
  for (R_xlen_t j = 0; j < k; ++j) {
    if (ord[j] < 1 || ord[j] > k) Rcpp::stop("internal error: an order out of range");
    from[static_cast<std::size_t>(j)] = ord[j] - 1;
  }
  double* p = REAL(x);
  std::vector<double> row(static_cast<std::size_t>(k));
  for (R_xlen_t i = 0; i < n; ++i) {
    for (R_xlen_t j = 0; j < k; ++j) row[static_cast<std::size_t>(j)] = p[i + from[static_cast<std::size_t>(j)] * n];
    for (R_xlen_t j = 0; j < k; ++j) p[i + j * n] = row[static_cast<std::size_t>(j)];
  }
  Rf_setAttrib(x, R_DimNamesSymbol, dn);
}

// Counts of a numeric vector's missing (NA, NaN), infinite, negative (-Inf
// included) and zero values, and its smallest non-missing value, in one
// pass without temporaries: c(na, inf, negative, zero, min).
// [[Rcpp::export]]
Rcpp::NumericVector cpp_value_counts(SEXP v) {
  double na = 0.0, inf = 0.0, neg = 0.0, zero = 0.0, mn = R_PosInf;
  const R_xlen_t n = XLENGTH(v);
  if (TYPEOF(v) == REALSXP) {
    const double* p = REAL(v);
    for (R_xlen_t s = 0; s < n; ++s) {
      const double x = p[s];
      if (ISNAN(x)) { na += 1.0; continue; }
      if (!R_FINITE(x)) inf += 1.0;
      if (x < 0.0) neg += 1.0; else if (x == 0.0) zero += 1.0;
      if (x < mn) mn = x;
    }
  } else if (TYPEOF(v) == INTSXP || TYPEOF(v) == LGLSXP) {
    const int* p = TYPEOF(v) == INTSXP ? INTEGER(v) : LOGICAL(v);
    for (R_xlen_t s = 0; s < n; ++s) {
      const int x = p[s];
      if (x == NA_INTEGER) { na += 1.0; continue; }
      if (x < 0) neg += 1.0; else if (x == 0) zero += 1.0;
      if (x < mn) mn = x;
    }
  } else {
    Rcpp::stop("internal error: values must be numbers");
  }
  return Rcpp::NumericVector::create(Rcpp::Named("na") = na, Rcpp::Named("inf") = inf,
                                     Rcpp::Named("negative") = neg, Rcpp::Named("zero") = zero,
                                     Rcpp::Named("min") = mn);
}

// The total and the number of non-zero entries of a symmetric matrix of
// which one triangle is stored in compressed-column form (an entry off the
// diagonal stands for two): list(total, nnz).
// [[Rcpp::export]]
Rcpp::List cpp_triangle_scan(Rcpp::IntegerVector i, Rcpp::IntegerVector p, Rcpp::NumericVector x) {
  const R_xlen_t n = p.size() - 1;
  if (n < 0 || i.size() != x.size() || p[n] != x.size()) Rcpp::stop("internal error: inconsistent compressed-column data");
  double total = 0.0, nnz = 0.0;
  for (R_xlen_t c = 0; c < n; ++c)
    for (int s = p[c]; s < p[c + 1]; ++s) {
      const double w = i[s] == c ? 1.0 : 2.0;
      total += w * x[s];
      nnz += x[s] != 0.0 ? w : 0.0;
    }
  return Rcpp::List::create(Rcpp::Named("total") = total, Rcpp::Named("nnz") = nnz);
}

// Whether the package was built with OpenMP (threads > 1 can run).
// [[Rcpp::export]]
bool cpp_openmp() {
#ifdef _OPENMP
  return true;
#else
  return false;
#endif
}
