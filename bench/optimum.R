#!/usr/bin/env Rscript
## bench/optimum.R -- time to the optimum of the KL aspect model: aspectr's
## coordinate descent (plsa(method = "cd"), the default) against its EM
## (method = "em"), its KL-NMF coordinate descent (nmf(loss = "kl",
## method = "cd")) and the peers that fit the same model (fastTopics'
## Poisson NMF by sequential coordinate descent; nnTensor's KL NTF for
## tensors), on one thread, in one process.
##
## Run from the package root:   Rscript bench/optimum.R
##
## Peers are bench-only and installed by this script when missing (never
## package dependencies). Every fit starts from the same random start where
## the peer accepts one. For each method the trace of D(G || P) (G = X /
## sum(X), P the normalized model) is read at every iteration, time per
## iteration taken as the fit's time divided by its iterations (each fit is
## repeated `reps` times, interleaved, and the minimum kept); the target is
## the objective plain EM reaches with its budget, and the table gives each
## method's time to reach it and its ratio to EM's time.
##
## Data: AssociatedPress (topicmodels; 2246 x 10473, 302031 non-zeros),
## k = 20, EM budget 400 iterations; a planted 100 x 80 x 60 KL CP tensor
## (k = 5, Poisson counts; dense array and sparse tensor), EM budget 1000.
## ASPECTR_BENCH_QUICK=1 runs a small version.

source("bench/common.R")
heading("aspectr time to the optimum (bench/optimum.R)")
suppressPackageStartupMessages(library(Matrix))
have <- c(aspectr = requireNamespace("aspectr", quietly = TRUE),
          topicmodels = ensure_peer("topicmodels", "needs the GSL: apt-get install libgsl-dev", sysreqs = "libgsl-dev"),
          fastTopics = ensure_peer("fastTopics", sysreqs = "libcurl4-openssl-dev"),
          nnTensor = ensure_peer("nnTensor"))
print_environment(names(have))
if (!have[["aspectr"]]) stop("install aspectr first (R CMD INSTALL .)")
reps <- if (quick) 1 else 3

## D(G || P) for X (dgCMatrix) and a non-negative W (n x k), H (k x m).
kl_obj <- function(X, W, H) {
  X <- as(X, "CsparseMatrix"); ii <- X@i + 1L; jj <- rep.int(seq_len(ncol(X)), diff(X@p))
  g <- X@x / sum(X@x); wh <- numeric(length(g))
  for (r in seq_len(ncol(W))) wh <- wh + W[ii, r] * H[r, jj]
  sum(g * log(g * sum(colSums(W) * rowSums(H)) / wh))
}

## min over reps of the time of each fit; f() returns list(trace, time)
timed <- function(fs) {
  out <- vector("list", length(fs)); names(out) <- names(fs)
  for (rep in seq_len(reps)) for (nm in names(fs)) {
    r <- tryCatch(fs[[nm]](), error = function(e) { note(nm, " failed: ", conditionMessage(e)); NULL })
    if (is.null(r)) next
    if (is.null(out[[nm]]) || r$time < out[[nm]]$time) out[[nm]] <- r
  }
  Filter(Negate(is.null), out)
}
## time to reach `target` (linear in the iterations of a trace)
time_to <- function(r, target) {
  i <- which(r$trace <= target)[1]
  if (is.na(i)) NA_real_ else r$time * i / length(r$trace)
}
report <- function(title, res, target) {
  subheading(title)
  cat(sprintf("target: D(G || P) = %.8f (plain EM's final objective)\n", target))
  em <- time_to(res[[1]], target)
  tab <- data.frame(method = names(res),
                    iterations = vapply(res, function(r) length(r$trace), 1),
                    time_s = vapply(res, function(r) r$time, 1),
                    final = vapply(res, function(r) min(r$trace), 1),
                    to_target_s = vapply(res, time_to, 1, target = target))
  tab$ratio_to_em <- tab$to_target_s / em
  print(format(tab, digits = 4), row.names = FALSE)
  invisible(tab)
}
el <- function(expr) { t0 <- proc.time()[["elapsed"]]; v <- force(expr); list(v = v, t = proc.time()[["elapsed"]] - t0) }

## 1. pLSA under KL on AssociatedPress ------------------------------------
if (have[["topicmodels"]]) {
  data("AssociatedPress", package = "topicmodels", envir = environment())
  ap <- AssociatedPress
  X <- sparseMatrix(i = ap$i, j = ap$j, x = as.numeric(ap$v), dims = c(ap$nrow, ap$ncol))
  k <- 20; em_iters <- if (quick) 40 else 400; cd_iters <- if (quick) 10 else 60
  if (quick) X <- X[1:400, ]
  X <- X[, colSums(X) > 0]
  set.seed(1); s0 <- aspectr:::random_start(dim(X), k)
  W0 <- s0$factors[[1]] %*% diag(s0$lambda * sum(X)); H0 <- t(s0$factors[[2]])
  fs <- list(
    `plsa em` = function() { r <- el(aspectr::plsa(X, k, method = "em", init = s0, max_iter = em_iters, tol = 0, threads = 1))
                             list(trace = r$v$objective, time = r$t) },
    `plsa cd (default)` = function() { r <- el(aspectr::plsa(X, k, init = s0, max_iter = cd_iters, tol = 0, threads = 1))
                             list(trace = r$v$objective, time = r$t) },
    `nmf kl cd` = function() { r <- el(aspectr::nmf(X, k, loss = "kl", method = "cd", init = list(W = W0, H = H0),
                                                  max_iter = cd_iters, tol = 0, threads = 1))
                             # without penalties sum(WH) = sum(X) after every iteration: D_gKL / sum(X) = D(G || P)
                             list(trace = r$v$objective / sum(X), time = r$t) })
  if (have[["fastTopics"]]) {
    fs$`fastTopics scd` <- function() {
      f0 <- fastTopics::init_poisson_nmf(X, F = t(H0), L = W0, verbose = "none")
      r <- el(fastTopics::fit_poisson_nmf(X, fit0 = f0, numiter = cd_iters, method = "scd", verbose = "none",
                                          control = list(nc = 1)))
      # fastTopics' progress table holds the Poisson log-likelihood per
      # iteration: D_gKL(X || LF') = sum(x log x - x) - loglik - sum(lgamma(x + 1)),
      # and D_gKL / sum(X) >= D(G || P), with equality when the fitted total
      # equals sum(X) (as at every stationary point): an upper bound
      pr <- r$v$progress
      S <- sum(X)
      tr <- (sum(X@x * log(X@x)) - S - pr$loglik - sum(lgamma(X@x + 1))) / S
      list(trace = tr, time = r$t) }
  }
  res <- timed(fs)
  report(sprintf("pLSA KL, AssociatedPress %d x %d, %d non-zeros, k = %d, 1 thread", nrow(X), ncol(X), length(X@x), k),
         res, min(res[["plsa em"]]$trace))
}

## 2. KL CP of a planted tensor -------------------------------------------
set.seed(1)
kt <- 5; d <- if (quick) c(30, 20, 10) else c(100, 80, 60)
A <- lapply(d, function(n) matrix(rgamma(n * kt, 0.3), n, kt))
M <- array(0, d)
for (r in 1:kt) M <- M + outer(outer(A[[1]][, r], A[[2]][, r]), A[[3]][, r])
Y <- array(rpois(length(M), M / sum(M) * 2e5), d)
set.seed(2); t0 <- aspectr:::random_start(d, kt)
em_iters <- if (quick) 100 else 1000; cd_iters <- if (quick) 30 else 150
for (form in c("dense array", "sparse tensor")) {
  Z <- if (form == "dense array") Y else aspectr::as_sptensor(Y)
  fs <- list(
    `plsa em` = function() { r <- el(aspectr::plsa(Z, kt, method = "em", init = t0, max_iter = em_iters, tol = 0, threads = 1))
                             list(trace = r$v$objective, time = r$t) },
    `plsa cd (default)` = function() { r <- el(aspectr::plsa(Z, kt, init = t0, max_iter = cd_iters, tol = 0, threads = 1))
                             list(trace = r$v$objective, time = r$t) },
    `ntf kl cd (default)` = function() { r <- el(aspectr::ntf(Z, kt, loss = "kl", init = lapply(seq_along(d), function(n) t0$factors[[n]] * if (n == 1) rep(t0$lambda * sum(Y), each = d[1]) else 1),
                                                           max_iter = cd_iters, tol = 0, threads = 1))
                             list(trace = r$v$objective / sum(Y), time = r$t) })
  if (have[["nnTensor"]] && form == "dense array") {
    fs$`nnTensor NTF KL` <- function() {
      r <- el(suppressWarnings(nnTensor::NTF(rTensor::as.tensor(Y), rank = kt, algorithm = "KL", num.iter = if (quick) 30 else 200,
                                             thr = 1e-300, init = "Random", verbose = FALSE)))
      S <- sum(Y); g <- Y[Y > 0] / S
      tr <- r$v$RecError  # reconstruction error trace; D(G || P) at the end only
      Ahat <- r$v$A; P <- array(0, d)
      for (q in seq_len(kt)) P <- P + r$v$S[q] * outer(outer(Ahat[[1]][q, ], Ahat[[2]][q, ]), Ahat[[3]][q, ])
      P <- P / sum(P)
      fin <- sum(g * log(g / P[Y > 0]))
      list(trace = c(rep(Inf, length(tr) - 1), fin), time = r$t) }
  }
  res <- timed(fs)
  report(sprintf("KL CP, planted %s tensor (%s), k = %d, 1 thread", paste(d, collapse = " x "), form, kt),
         res, min(res[["plsa em"]]$trace))
}
