#!/usr/bin/env Rscript
## bench/sntf.R -- super-symmetric NTF and symmetric NMF (Cichocki et al. 2007).
##
## Run from the package root:   Rscript bench/sntf.R
## (ASPECTR_BENCH_QUICK=1 runs a small version.)
##
## 1. symnmf() against RcppPlanc::symNMF (Gauss-Newton "gnsym" and
##    "anlsbpp") on the same sparse affinity matrix (a 15-nearest-neighbour
##    Gaussian graph of a 10-component mixture in 5-D), rank 10, from the
##    same random start. Each peer runs its own iteration budget; aspectr's
##    time is the time to reach the peer's final objective
##    1/2 ||A - HH'||_F^2 (its fits are re-run with growing max_iter until
##    they get there). Ratio = peer time / aspectr time (> 1: aspectr
##    faster). The adjusted Rand index of each clustering with the mixture
##    labels is printed too. RcppPlanc is installed by this script when it
##    is missing (it needs the Debian packages libhdf5-dev and libhwloc-dev);
##    it is bench-only, not a dependency of aspectr.
## 2. Scaling of multi-way clustering (aspectr only): points on three
##    intersecting lines in the plane plus 10% outliers, n points, affinity
##    tensor of order 3 from n_tuples = 100 n sampled triples. Reported:
##    the time to build the affinity tensor, its stored sets (nnz), the
##    time per sntf() iteration (alpha = 1, k = 3, 1 and 2 threads) and its
##    ratio per doubling of n (O(nnz k) per iteration: target about 2),
##    and the peak memory of one sntf() fit in a fresh R process.
## 3. The same at fixed n = 2000 as n_tuples doubles.
## ASPECTR_BENCH_ONLY (a regular expression) runs only the parts it matches
## ("symnmf", "points", "tuples").

source("bench/common.R")
heading("aspectr super-symmetric NTF / symmetric NMF benchmark (bench/sntf.R)")
if (!requireNamespace("aspectr", quietly = TRUE)) stop("aspectr is not installed (R CMD INSTALL . from the package root).")
have_planc <- ensure_peer("RcppPlanc", sysreqs = c("libhdf5-dev", "libhwloc-dev"))
print_environment(c("aspectr", "RcppPlanc", "Matrix"))
t_bench <- proc.time()[["elapsed"]]

## ---------------------------------------------------------------------------
## 1. symnmf() vs RcppPlanc::symNMF
## ---------------------------------------------------------------------------

knn_affinity <- function(n, k_mix = 10, d = 5, nn = 15, seed = 1) {
  set.seed(seed)
  centres <- matrix(stats::rnorm(k_mix * d, sd = 3), k_mix)
  lab <- sample(k_mix, n, TRUE)
  X <- centres[lab, ] + matrix(stats::rnorm(n * d), n)
  i <- j <- integer(); v <- numeric()
  for (a in seq_len(n)) {
    d2 <- colSums((t(X) - X[a, ])^2)
    o <- order(d2)[2:(nn + 1)]
    s <- stats::median(d2[o])
    i <- c(i, rep(a, nn)); j <- c(j, o); v <- c(v, exp(-d2[o] / (2 * s)))
  }
  A <- Matrix::sparseMatrix(i = i, j = j, x = v, dims = c(n, n))
  A <- (A + Matrix::t(A)) / 2
  list(A = methods::as(A, "generalMatrix"), label = lab)
}
sym_obj <- function(A, H) {
  H <- as.matrix(H)
  0.5 * (sum(A^2) - 2 * sum(H * as.matrix(A %*% H)) + sum(crossprod(H)^2))
}

## aspectr's time to reach `target`: fits with growing max_iter.
time_to_target <- function(A, k, H0, method, target, threads = 1) {
  for (it in c(2, 4, 8, 12, 16, 24, 32, 48, 64, 96, 128, 192, 256, 384, 512)) {
    r <- elapsed(aspectr::symnmf(A, k, method = method, init = H0, max_iter = it, tol = 0, threads = threads))
    if (sym_obj(A, r$value$H) <= target * (1 + 1e-9)) {
      return(list(time = r$time, iters = it, fit = r$value))
    }
  }
  list(time = NA_real_, iters = NA_integer_, fit = r$value)
}

if (bench_want("symnmf")) {
sizes <- if (quick) 1000L else c(3000L, 6000L)
K <- 10L
rows <- list()
for (n in sizes) {
  dat <- knn_affinity(n)
  A <- dat$A
  set.seed(2)
  H0 <- matrix(stats::runif(n * K), n, K) * 2 * sqrt(sum(A) / (as.numeric(n) * n) / K)
  heading(sprintf("symnmf: n = %d, nnz = %d, k = %d", n, Matrix::nnzero(A), K))
  budgets <- if (quick) 30L else c(30L, 100L)
  for (b in budgets) {
    peers <- list()
    if (have_planc) {
      for (algo in c("gnsym", "anlsbpp")) {
        r <- elapsed(suppressMessages(utils::capture.output(
          fit <- RcppPlanc::symNMF(A, K, niter = b, algo = algo, nCores = 1L, Hinit = H0))))
        as_nk <- function(m) if (is.null(m) || length(m) != n * K) NULL else if (nrow(m) == n) m else t(m)
        cand <- Filter(Negate(is.null), list(as_nk(fit$H), as_nk(fit$W)))
        if (length(cand) == 2) cand[[3]] <- (cand[[1]] + cand[[2]]) / 2
        objs <- vapply(cand, function(m) sym_obj(A, matrix(m, n, K)), numeric(1))
        best <- cand[[which.min(objs)]]
        peers[[algo]] <- list(time = r$time, obj = min(objs),
                              ari = aspectr::adjusted_rand_index(max.col(matrix(best, n, K)), dat$label))
      }
    } else {
      note("RcppPlanc unavailable: aspectr alone")
    }
    for (nm in names(peers)) {
      p <- peers[[nm]]
      for (m in c("anls", "hals")) {
        a <- time_to_target(A, K, H0, m, p$obj)
        rows[[length(rows) + 1]] <- data.frame(
          n = n, peer = paste0("RcppPlanc ", nm), budget = b, peer_time = p$time, peer_obj = p$obj,
          peer_ari = round(p$ari, 3), aspectr = m, aspectr_iters = a$iters, aspectr_time = a$time,
          aspectr_ari = round(aspectr::adjusted_rand_index(a$fit$cluster, dat$label), 3),
          ratio = p$time / a$time)
      }
    }
  }
}
if (length(rows)) {
  res <- do.call(rbind, rows)
  print(res, row.names = FALSE, digits = 4)
  cat(sprintf("\nsymnmf speed-up over RcppPlanc (peer time / aspectr time to the peer's objective): median %.2f, min %.2f\n",
              stats::median(res$ratio, na.rm = TRUE), min(res$ratio, na.rm = TRUE)))
}
}  # symnmf

## ---------------------------------------------------------------------------
## 2-3. Scaling of multi-way clustering
## ---------------------------------------------------------------------------

lines_data <- function(n, seed = 7) {
  set.seed(seed)
  n_out <- round(0.1 * n); n_in <- n - n_out
  ang <- c(0, pi / 3, 2 * pi / 3)
  lab <- sample(3, n_in, TRUE); t <- stats::runif(n_in, -1, 1)
  x <- cbind(t * cos(ang[lab]), t * sin(ang[lab])) + matrix(stats::rnorm(2 * n_in, sd = 0.01), n_in)
  list(x = rbind(x, matrix(stats::runif(2 * n_out, -1, 1), n_out)), label = c(lab, rep(0L, n_out)))
}

scaling_row <- function(n, n_tuples) {
  d <- lines_data(n)
  aff <- elapsed(aspectr::hypergraph_affinity(d$x, 3, "line", n_tuples = n_tuples, seed = 1))
  y <- aff$value
  out <- data.frame(n = n, n_tuples = n_tuples, nnz = length(y$values), affinity_s = aff$time)
  iters <- 50L
  for (th in 1:2) {
    tN <- min(vapply(1:3, function(i) elapsed(aspectr::sntf(y, 3, init = "random", max_iter = iters, tol = 0,
                                                            seed = 1, threads = th))$time, numeric(1)))
    t1 <- min(vapply(1:3, function(i) elapsed(aspectr::sntf(y, 3, init = "random", max_iter = 1L, tol = 0,
                                                            seed = 1, threads = th))$time, numeric(1)))
    out[[sprintf("ms_per_iter_%dt", th)]] <- 1000 * (tN - t1) / (iters - 1)
  }
  fit <- aspectr::sntf(y, 3, nrun = 5, seed = 1)
  inl <- d$label > 0
  out$ari_inliers <- round(aspectr::adjusted_rand_index(fit$cluster[inl], d$label[inl]), 3)
  out$peak_mb <- child_peak_mb(y, 'invisible(aspectr::sntf(x, 3, init = "random", max_iter = 2, tol = 0, seed = 1, threads = 1))',
                               'fit <- aspectr::sntf(x, 3, init = "random", max_iter = 50, tol = 0, seed = 1, threads = 1)')
  out
}

if (bench_want("points")) {
heading("Scaling with the number of points (n_tuples = 100 n)")
ns <- if (quick) c(200L, 400L) else c(500L, 1000L, 2000L, 4000L)
sc <- do.call(rbind, lapply(ns, function(n) scaling_row(n, 100L * n)))
sc$ratio_per_doubling <- c(NA, sc$ms_per_iter_1t[-1] / sc$ms_per_iter_1t[-nrow(sc)])
print(sc, row.names = FALSE, digits = 4)
}  # points

if (bench_want("tuples")) {
heading("Scaling with the number of tuples (n = 2000)")
nts <- if (quick) c(20000L, 40000L) else c(50000L, 100000L, 200000L, 400000L, 800000L)
st <- do.call(rbind, lapply(nts, function(nt) scaling_row(if (quick) 400L else 2000L, nt)))
st$ratio_per_doubling <- c(NA, st$ms_per_iter_1t[-1] / st$ms_per_iter_1t[-nrow(st)])
st$bytes_per_nnz <- 1e6 * st$peak_mb / st$nnz
print(st, row.names = FALSE, digits = 4)
}  # tuples

cat(sprintf("\nbench/sntf.R finished in %.0f s; load average at end: %s\n", proc.time()[["elapsed"]] - t_bench,
            paste(utils::head(strsplit(readLines("/proc/loadavg"), " ")[[1]], 3), collapse = " ")))
