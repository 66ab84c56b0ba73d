// src/index_glue.cpp — index conversion at the R boundary.
#include <Rcpp.h>
#include <string>

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
