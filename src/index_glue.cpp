// src/index_glue.cpp — index conversion at the R boundary.
#include <Rcpp.h>

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
      o[s * N + n] = v == NA_INTEGER ? NA_INTEGER : v - 1;
    }
  }
  return out;
}
