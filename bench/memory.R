#!/usr/bin/env Rscript
## bench/memory.R -- memory of an in-memory fit, for every family: the peak
## resident memory a fit needs beyond its input, in bytes per non-zero and
## as a multiple of the input's own size.
##
## Run from the package root:   Rscript bench/memory.R
##
## Each fit runs in a fresh R process (bench/common.R's child_peak_mb()):
## the input is read, gc() run, the peak-RSS counter reset, then the fit
## (2 iterations, 1 thread, k = 10; enough to allocate everything an
## iteration needs). "extra" is the peak RSS during the fit minus the RSS
## before it; "x input" divides it by object.size() of the input. The
## target of the large-data work is at most 1.5x the input.
##
## Data (seeded): a 20000 x 10000 dgCMatrix with 2e6 non-zeros (Poisson
## counts), a 400 x 300 x 200 sptensor with 1e6 non-zeros, a symmetric
## 20000 x 20000 dgCMatrix with about 1e6 non-zeros, a symtensor of order 3
## on 2000 points with 2e5 distinct tuples, and a data frame of 20000
## observations of 10 three-level items (for lca(): per distinct pattern).
## ASPECTR_BENCH_QUICK=1 divides the sizes by 10; ASPECTR_BENCH_ONLY (a
## regular expression, e.g. "symnmf|ntf") runs only the families it matches.

source("bench/common.R")

heading("aspectr memory per fit (bench/memory.R)")
if (!requireNamespace("aspectr", quietly = TRUE)) stop("aspectr is not installed (R CMD INSTALL . from the package root).")
print_environment(character())
if (!file.exists("/proc/self/clear_refs")) {
  note("/proc/self/clear_refs is not available: peak memory cannot be measured here.")
  quit(save = "no")
}

scale <- if (quick) 0.1 else 1
set.seed(20261126)
sparse_counts <- function(m, n, nnz) {
  Matrix::sparseMatrix(i = sample.int(m, nnz, TRUE), j = sample.int(n, nnz, TRUE),
                       x = stats::rpois(nnz, 2) + 1, dims = c(m, n))
}
X <- sparse_counts(round(20000 * scale), 10000, round(2e6 * scale))
T3 <- local({
  nnz <- round(1e6 * scale)
  idx <- cbind(sample.int(400, nnz, TRUE), sample.int(300, nnz, TRUE), sample.int(200, nnz, TRUE))
  idx <- idx[!duplicated(idx), , drop = FALSE]
  aspectr::sptensor(idx, stats::rpois(nrow(idx), 2) + 1, dims = c(400, 300, 200))
})
A <- local({
  n <- round(20000 * scale)
  B <- sparse_counts(n, n, round(5e5 * scale))
  Matrix::forceSymmetric(B + Matrix::t(B))
})
S3 <- local({
  n <- 2000
  tup <- t(apply(matrix(sample.int(n, 3 * round(2e5 * scale), TRUE), ncol = 3), 1, sort))
  tup <- tup[!duplicated(tup) & tup[, 1] < tup[, 2] & tup[, 2] < tup[, 3], , drop = FALSE]
  aspectr::symtensor(tup, stats::runif(nrow(tup)), n = n)
})
D <- as.data.frame(lapply(1:10, function(j) sample.int(3, round(20000 * scale), TRUE)))
## small inputs of the same kinds: a warm-up fit of each in the child before
## the measurement (the first fit of a session maps the package's and its
## dependencies' code and R functions into memory, which is not the fit's)
warm <- list(
  X = sparse_counts(300, 200, 3000),
  T3 = local({
    idx <- unique(cbind(sample.int(20, 2000, TRUE), sample.int(15, 2000, TRUE), sample.int(10, 2000, TRUE)))
    aspectr::sptensor(idx, stats::rpois(nrow(idx), 2) + 1, dims = c(20, 15, 10))
  }),
  A = local({ B <- sparse_counts(300, 300, 2000); Matrix::forceSymmetric(B + Matrix::t(B)) }),
  S3 = local({
    tup <- t(apply(matrix(sample.int(60, 1500, TRUE), ncol = 3), 1, sort))
    tup <- tup[!duplicated(tup) & tup[, 1] < tup[, 2] & tup[, 2] < tup[, 3], , drop = FALSE]
    aspectr::symtensor(tup, stats::runif(nrow(tup)), n = 60)
  }),
  D = D[1:300, ])

runs <- list(
  list("plsa", "kl, cd (default)", X, 'X', 'invisible(plsa(x, 10, max_iter = 2, tol = 0, seed = 1, threads = 1))'),
  list("plsa", "kl, em", X, 'X', 'invisible(plsa(x, 10, method = "em", max_iter = 2, tol = 0, seed = 1, threads = 1))'),
  list("plsa", "kl, squarem", X, 'X', 'invisible(plsa(x, 10, method = "squarem", max_iter = 2, tol = 0, seed = 1, threads = 1))'),
  list("plsa", "tsallis, squarem", X, 'X', 'invisible(plsa(x, 10, loss = "tsallis", max_iter = 2, tol = 0, seed = 1, threads = 1))'),
  list("nmf", "frobenius, hals (default)", X, 'X', 'invisible(nmf(x, 10, max_iter = 2, tol = 0, seed = 1, threads = 1))'),
  list("nmf", "frobenius, hals, no X' copy", X, 'X', 'options(aspectr.transpose_limit = 0); invisible(nmf(x, 10, max_iter = 2, tol = 0, seed = 1, threads = 1))'),
  list("nmf", "frobenius, mu, no X' copy", X, 'X', 'options(aspectr.transpose_limit = 0); invisible(nmf(x, 10, method = "mu", max_iter = 2, tol = 0, seed = 1, threads = 1))'),
  list("nmf", "kl, cd", X, 'X', 'invisible(nmf(x, 10, loss = "kl", max_iter = 2, tol = 0, seed = 1, threads = 1))'),
  list("ntf", "kl, cd", T3, 'T3', 'invisible(ntf(x, 10, loss = "kl", max_iter = 2, tol = 0, seed = 1, threads = 1))'),
  list("ntf", "frobenius (default)", T3, 'T3', 'invisible(ntf(x, 10, max_iter = 2, tol = 0, seed = 1, threads = 1))'),
  list("symnmf", "anls (default)", A, 'A', 'invisible(symnmf(x, 10, max_iter = 2, tol = 0, seed = 1, threads = 1))'),
  list("symnmf", "anls, triangle in place", A, 'A', 'options(aspectr.transpose_limit = 0); invisible(symnmf(x, 10, max_iter = 2, tol = 0, seed = 1, threads = 1))'),
  list("sntf", "alpha (default)", S3, 'S3', 'invisible(sntf(x, 3, init = "random", max_iter = 2, tol = 0, seed = 1, threads = 1))'),
  list("lca", "squarem (default)", D, 'D', 'invisible(lca(x, 4, nrun = 1, max_iter = 2, tol = 0, seed = 1, threads = 1, se = FALSE))')
)

nnz_of <- function(x) {
  if (is.data.frame(x)) return(nrow(unique(x)))  # lca: distinct response patterns
  if (inherits(x, "Matrix")) return(length(x@x))
  aspectr::nnz(x)
}
# ASPECTR_BENCH_ONLY: a regular expression of the families to run
only <- Sys.getenv("ASPECTR_BENCH_ONLY", "")
if (nzchar(only)) runs <- Filter(function(r) grepl(only, r[[1]]), runs)
rows <- list()
for (r in runs) {
  x <- r[[3]]
  input_mb <- as.numeric(utils::object.size(x)) / 1e6
  code <- r[[5]]
  setup <- c('suppressMessages(library(aspectr))', 'big <- x$data', 'x <- x$warm', code, 'x <- big', 'rm(big)')
  mb <- child_peak_mb(list(data = x, warm = warm[[r[[4]]]]), setup, code)
  nz <- nnz_of(x)
  rows[[length(rows) + 1L]] <- data.frame(
    family = r[[1]], method = r[[2]], nnz = nz, input_MB = round(input_mb, 1),
    extra_MB = round(mb, 1), extra_B_per_nnz = round(1e6 * mb / nz, 1),
    x_input = round(mb / input_mb, 2), stringsAsFactors = FALSE)
  cat(sprintf("  %-7s %-26s extra %7.1f MB (%6.1f B per non-zero, %5.2fx the input)\n",
              r[[1]], r[[2]], mb, 1e6 * mb / nz, mb / input_mb))
}
heading("Peak memory beyond the input (target: at most 1.5x the input)")
print(do.call(rbind, rows), row.names = FALSE)
cat("\nlca(): non-zeros are the distinct response patterns; its input is the data frame.\n")
