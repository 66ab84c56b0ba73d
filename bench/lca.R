#!/usr/bin/env Rscript
## bench/lca.R -- latent class analysis: aspectr::lca() against poLCA and
## poLCAParallel, time and best log-likelihood from 10 random starts.
##
## Run from the package root:   Rscript bench/lca.R
##
## The peers (poLCA, poLCAParallel) are installed from CRAN BY THIS SCRIPT
## when they are missing. They are bench-only: NOT dependencies of aspectr,
## and must not be listed in its DESCRIPTION (not even in Suggests). A peer
## that cannot be installed or loaded is skipped with a printed note.
## aspectr itself must already be installed.
##
## What is compared. Every method fits the same latent class model with
## 10 random starts (poLCA: nrep = 10; aspectr: nrun = 10), at most 1000 EM
## iterations per start, and keeps the best start. Reported: the wall time of
## the whole call (including each package's post-processing: posteriors,
## goodness of fit; poLCA's standard errors are switched off with
## calc.se = FALSE because aspectr computes none), the best log-likelihood,
## the EM iterations of the best start, and the ratio
## time(poLCA) / time(method). Calls that take under a second are repeated
## (same seed) and the median time is reported.
##
## Stopping rule. poLCA and poLCAParallel stop a start when the increase of
## the log-likelihood in one iteration is below `tol` (absolute; default and
## value used here 1e-10). aspectr stops when the relative change of the KL
## divergence D(G || P) of the pattern distribution G is below its `tol`.
## For complete data llik = -N (H(G) + D(G || P)), so a change of the
## log-likelihood by tol_polca is a relative change of D by
## tol_polca / (N * D). aspectr gets tol = tol_polca / (N * D*), where D* is
## the divergence at poLCA's best solution (-llik/N - H(G)); that is the same
## criterion at the optimum. All data sets are used as complete cases (rows
## with a missing response are dropped for every method), so that poLCA's
## listwise deletion and aspectr's na.rm = TRUE see the same data.
##
## Data: poLCA's `carcinoma` (k = 3, 4) and `values` (k = 2, 3), poLCA's
## `election` (12 items with 4 levels, complete cases, k = 3), and a
## synthetic set of 20000 observations of 10 three-level items drawn from a
## 4-class model (k = 4).
##
## Restart strategy. aspectr's default is staged restarts (lca()'s
## short_iter = 100, short_keep = 1: every start runs 100 iterations, the
## best one continues to convergence, all of them when it does not converge
## within max_iter); poLCA and poLCAParallel run every start to convergence.
## aspectr with short_iter = 0 (every start to convergence, as poLCA) is
## reported too ("full restarts"), as is the total number of EM iterations
## over all starts.
##
## aspectr runs with threads = 1 and threads = 2 (threads go over the starts
## while several are active); poLCAParallel with its default n.thread (all
## cores). Everything is seeded. The 1-minute load average (/proc/loadavg)
## is printed per data set: the machine may be shared.
##
## Environment: ASPECTR_BENCH_QUICK=1 runs a small version (for testing the
## script). The BLAS is left as configured (reference BLAS here).

## ---------------------------------------------------------------------------
## 0. Setup: packages
## ---------------------------------------------------------------------------

source("bench/common.R")  # %||%, quick, heading, note, ensure_peer, elapsed, ...

heading("aspectr latent class benchmark (bench/lca.R)")
have <- c(
  aspectr       = requireNamespace("aspectr", quietly = TRUE) &&
                  exists("lca", envir = asNamespace("aspectr")),
  poLCA         = ensure_peer("poLCA"),
  poLCAParallel = ensure_peer("poLCAParallel", "needs a C++ compiler and RcppArmadillo")
)
if (!have[["aspectr"]]) {
  stop("aspectr is not installed (R CMD INSTALL . from the package root).")
}
print_environment(names(have))

NREP <- 10L
MAXIT <- if (quick) 200L else 1000L
TOL_POLCA <- 1e-10

## ---------------------------------------------------------------------------
## 1. Data
## ---------------------------------------------------------------------------

## poLCA's data sets, with their response codes 1, 2, ... as integers.
polca_data <- function(name) {
  e <- new.env()
  utils::data(list = name, package = "poLCA", envir = e)
  e[[name]]
}
as_codes <- function(d) {
  d <- as.data.frame(lapply(d, function(v) as.integer(v)))
  d[stats::complete.cases(d), , drop = FALSE]
}

## Synthetic: n observations of J items with L levels from a K-class model.
synthetic_lca <- function(n, J, L, K, seed) {
  set.seed(seed)
  share <- c(0.35, 0.30, 0.20, 0.15)[seq_len(K)]
  share <- share / sum(share)
  cls <- sample.int(K, n, replace = TRUE, prob = share)
  d <- lapply(seq_len(J), function(j) {
    P <- t(vapply(seq_len(K), function(z) { p <- stats::rgamma(L, 0.7); p / sum(p) },
                  numeric(L)))
    Pi <- P[cls, , drop = FALSE]
    cum <- t(apply(Pi, 1, cumsum))
    u <- stats::runif(n)
    1L + rowSums(u > cum[, -L, drop = FALSE])
  })
  d <- as.data.frame(d)
  names(d) <- sprintf("Y%02d", seq_len(J))
  d
}

datasets <- list()
if (have[["poLCA"]] || requireNamespace("poLCA", quietly = TRUE)) {
  carc <- as_codes(polca_data("carcinoma"))
  vals <- as_codes(polca_data("values"))
  elec <- as_codes(polca_data("election")[, c("MORALG", "CARESG", "KNOWG", "LEADG",
                                               "DISHONG", "INTELG", "MORALB", "CARESB",
                                               "KNOWB", "LEADB", "DISHONB", "INTELB")])
  gss <- as_codes(polca_data("gss82"))
  datasets <- list(
    list(name = "gss82", data = gss, k = 3L),
    list(name = "carcinoma", data = carc, k = 3L),
    list(name = "carcinoma", data = carc, k = 4L),
    list(name = "values", data = vals, k = 2L),
    list(name = "values", data = vals, k = 3L),
    list(name = "election12 (cc)", data = elec, k = 3L)
  )
} else {
  note("poLCA's data sets are not available; only the synthetic data are used.")
}
datasets[[length(datasets) + 1L]] <- list(
  name = if (quick) "synthetic 2k" else "synthetic 20k",
  data = synthetic_lca(if (quick) 2000L else 20000L, 10L, 3L, 4L, seed = 20240),
  k = 4L)

## ---------------------------------------------------------------------------
## 2. Helpers
## ---------------------------------------------------------------------------

## Entropy of the distribution of complete response patterns.
pattern_entropy <- function(d) {
  key <- do.call(paste, c(d, sep = "\r"))
  g <- as.numeric(table(key)) / nrow(d)
  -sum(g * log(g))
}

polca_formula <- function(d) {
  stats::as.formula(paste0("cbind(", paste(names(d), collapse = ", "), ") ~ 1"))
}

## poLCA prints alerts through cat(); keep the bench output readable.
quietly <- function(expr) {
  out <- NULL
  res <- withCallingHandlers(
    { utils::capture.output(out <- force(expr)); out },
    warning = function(w) invokeRestart("muffleWarning"))
  res
}

run_polca <- function(d, k, seed) {
  set.seed(seed)
  r <- elapsed(quietly(poLCA::poLCA(polca_formula(d), d, nclass = k, maxiter = MAXIT,
                                    tol = TOL_POLCA, nrep = NREP, verbose = FALSE,
                                    calc.se = FALSE)))
  list(time = r$time, llik = r$value$llik, iter = r$value$numiter,
       starts = r$value$attempts)
}

run_polca_parallel <- function(d, k, seed, threads = parallel::detectCores()) {
  set.seed(seed)
  r <- elapsed(quietly(poLCAParallel::poLCA(polca_formula(d), d, nclass = k,
                                            maxiter = MAXIT, tol = TOL_POLCA, nrep = NREP,
                                            verbose = FALSE, calc.se = FALSE, n.thread = threads)))
  list(time = r$time, llik = r$value$llik, iter = r$value$numiter %||% NA,
       starts = r$value$attempts)
}

run_aspectr <- function(d, k, tol, threads, seed, short_iter = NULL) {
  # se = FALSE: the peers run with calc.se = FALSE
  args <- list(d, k, nrun = NREP, max_iter = MAXIT, tol = tol, seed = seed,
               threads = threads, na.rm = TRUE, se = FALSE)
  if (!is.null(short_iter)) args$short_iter <- short_iter
  r <- elapsed(do.call(aspectr::lca, args))
  list(time = r$time, llik = r$value$llik, iter = r$value$iterations,
       kl = r$value$value, fit_time = r$value$time,
       starts = r$value$run_values,
       total_iter = if (is.null(r$value$run_iterations)) NA else sum(r$value$run_iterations))
}

load_avg <- function() {
  x <- tryCatch(readLines("/proc/loadavg", n = 1L, warn = FALSE), error = function(e) NA)
  if (is.na(x)) NA_real_ else as.numeric(strsplit(x, " ")[[1]][1])
}

## Runs `f()` (which returns a list with `time`); calls taking under a
## second are repeated (same seed, same result) up to 7 times or 3 seconds
## in all, and the median time is reported.
## Median of up to 7 timings. A call under 50 ms is timed as the mean of a
## batch of calls lasting at least 0.2 s (the clock's resolution is 1 ms);
## the batches alternate with nothing else, so compare rows run side by side.
repeat_timing <- function(f) {
  r <- f()
  if (r$time < 0.05) {
    batch <- function() {
      n <- 0L
      t0 <- proc.time()[["elapsed"]]
      repeat {
        f()
        n <- n + 1L
        el <- proc.time()[["elapsed"]] - t0
        if (el >= 0.2) return(el / n)
      }
    }
    times <- vapply(1:7, function(i) batch(), numeric(1))
  } else {
    times <- r$time
    while (length(times) < 7 && sum(times) < 3 && r$time < 1) times <- c(times, f()$time)
  }
  r$time <- stats::median(times)
  r$reps <- length(times)
  r
}

try_run <- function(label, expr) {
  cat(sprintf("  %-26s ", label))
  r <- tryCatch(expr, error = function(e) {
    cat("FAILED\n")
    note(label, " failed: ", conditionMessage(e))
    NULL
  })
  if (!is.null(r)) cat(sprintf("%8.4f s  llik %.4f  (iterations of best start: %s%s; timing: %s)\n",
                               r$time, r$llik, format(r$iter),
                               if (!is.null(r$total_iter) && !is.na(r$total_iter))
                                 sprintf(", all starts: %d", as.integer(r$total_iter)) else "",
                               if (r$reps > 1) sprintf("median of %d %s", r$reps, if (r$time < 0.05) "batches" else "runs") else "1 run"))
  r
}

## ---------------------------------------------------------------------------
## 3. Runs
## ---------------------------------------------------------------------------

heading(sprintf("Runs: %d random starts, max %d iterations; poLCA tol = %g on the llik change",
                NREP, MAXIT, TOL_POLCA))
## Warm-up (loads namespaces and code) on a small data set, untimed.
invisible(aspectr::lca(synthetic_lca(200L, 4L, 2L, 2L, seed = 1), 2L, nrun = 2L, seed = 1))
if (have[["poLCA"]]) {
  w <- synthetic_lca(200L, 4L, 2L, 2L, seed = 1)
  invisible(quietly(poLCA::poLCA(polca_formula(w), w, nclass = 2, verbose = FALSE, calc.se = FALSE)))
  if (have[["poLCAParallel"]]) {
    invisible(quietly(poLCAParallel::poLCA(polca_formula(w), w, nclass = 2, verbose = FALSE,
                                           calc.se = FALSE)))
  }
}

rows <- list()
t_total <- proc.time()[["elapsed"]]
for (i in seq_along(datasets)) {
  ds <- datasets[[i]]
  d <- ds$data
  k <- ds$k
  N <- nrow(d)
  H <- pattern_entropy(d)
  npat <- sum(!duplicated(d))
  subheading(sprintf("%s: N = %d complete observations, %d items (levels %s), %d distinct patterns, k = %d; load %.2f",
                     ds$name, N, ncol(d),
                     paste(unique(vapply(d, function(v) length(unique(v)), 1L)), collapse = "/"),
                     npat, k, load_avg()))
  seed <- 1000L + i
  res <- list()
  if (have[["poLCA"]]) res$poLCA <- try_run("poLCA", repeat_timing(function() run_polca(d, k, seed)))
  if (have[["poLCAParallel"]]) {
    res[["poLCAParallel"]] <- try_run(sprintf("poLCAParallel (%d thr)", parallel::detectCores()),
                                      repeat_timing(function() run_polca_parallel(d, k, seed)))
    res[["poLCAParallel (1 thr)"]] <- try_run("poLCAParallel (1 thr)",
                                              repeat_timing(function() run_polca_parallel(d, k, seed, 1L)))
  }
  ## aspectr's tolerance: the same criterion as poLCA's at poLCA's optimum.
  ref_llik <- res$poLCA$llik %||% res[["poLCAParallel"]]$llik
  if (is.null(ref_llik)) {
    ref_llik <- aspectr::lca(d, k, nrun = NREP, max_iter = MAXIT, tol = 1e-12, seed = seed,
                             threads = 1, na.rm = TRUE)$llik
  }
  D_ref <- max(-ref_llik / N - H, 1e-12)
  tol_a <- TOL_POLCA / (N * D_ref)
  cat(sprintf("  aspectr tol = %.3g / (N * D*) = %.3g   (D* = %.6g at the reference llik %.4f)\n",
              TOL_POLCA, tol_a, D_ref, ref_llik))
  for (th in 1:2) {
    res[[sprintf("aspectr (%d thr)", th)]] <- try_run(sprintf("aspectr::lca (%d thr)", th),
                                                     repeat_timing(function() run_aspectr(d, k, tol_a, th, seed)))
  }
  res[["aspectr full restarts (1 thr)"]] <- try_run(
    "aspectr full restarts (1 thr)",
    repeat_timing(function() run_aspectr(d, k, tol_a, 1, seed, short_iter = 0)))
  a1 <- res[["aspectr (1 thr)"]]
  if (!is.null(a1)) {
    cat(sprintf("  check: aspectr llik from its KL, -N (H + D) = %.4f (reported %.4f)\n",
                -N * (H + a1$kl), a1$llik))
  }
  best <- max(vapply(res, function(r) if (is.null(r)) -Inf else r$llik, numeric(1)))
  t_polca <- res$poLCA$time %||% NA_real_
  for (m in names(res)) {
    r <- res[[m]]
    if (is.null(r)) next
    rows[[length(rows) + 1L]] <- data.frame(
      data = ds$name, k = k, N = N, method = m, time_s = r$time, llik = r$llik,
      gap_to_best = r$llik - best, iter_best = as.integer(r$iter),
      iter_all = if (is.null(r$total_iter)) NA_integer_ else as.integer(r$total_iter),
      load = load_avg(),
      polca_over_method = t_polca / r$time, stringsAsFactors = FALSE)
  }
}
t_total <- proc.time()[["elapsed"]] - t_total

## ---------------------------------------------------------------------------
## 4. Tables
## ---------------------------------------------------------------------------

heading("Results (time = wall seconds of the whole call with 10 starts)")
tab <- do.call(rbind, rows)
fmt <- tab
fmt$time_s <- sprintf("%.4f", tab$time_s)
fmt$llik <- sprintf("%.4f", tab$llik)
fmt$gap_to_best <- sprintf("%.2e", tab$gap_to_best)
fmt$polca_over_method <- sprintf("%.1fx", tab$polca_over_method)
print(fmt, row.names = FALSE, right = FALSE)

heading("Speed-up of aspectr over poLCA (target >= 10x at the same log-likelihood, to 1e-4)")
asp <- tab[grepl("^aspectr", tab$method), ]
if (nrow(asp) && any(tab$method == "poLCA")) {
  pol <- tab[tab$method == "poLCA", ]
  key <- paste(asp$data, asp$k)
  m <- match(key, paste(pol$data, pol$k))
  sp <- data.frame(
    data = asp$data, k = asp$k, method = asp$method,
    poLCA_s = sprintf("%.3f", pol$time_s[m]), aspectr_s = sprintf("%.3f", asp$time_s),
    ratio = sprintf("%.1fx", pol$time_s[m] / asp$time_s),
    llik_poLCA = sprintf("%.4f", pol$llik[m]), llik_aspectr = sprintf("%.4f", asp$llik),
    d_llik = sprintf("%+.2e", asp$llik - pol$llik[m]),
    meets_10x = ifelse(pol$time_s[m] / asp$time_s >= 10 & asp$llik >= pol$llik[m] - 1e-4,
                       "yes", "no"),
    stringsAsFactors = FALSE)
  print(sp, row.names = FALSE, right = FALSE)
  if (any(tab$method == "poLCAParallel")) {
    pp <- tab[tab$method == "poLCAParallel", ]
    m2 <- match(key, paste(pp$data, pp$k))
    cat("\nRatio poLCAParallel time / aspectr time:\n")
    print(data.frame(data = asp$data, k = asp$k, method = asp$method,
                     poLCAParallel_s = sprintf("%.3f", pp$time_s[m2]),
                     ratio = sprintf("%.2fx", pp$time_s[m2] / asp$time_s),
                     d_llik = sprintf("%+.2e", asp$llik - pp$llik[m2])),
          row.names = FALSE, right = FALSE)
  }
} else {
  note("poLCA was not run: no ratios.")
}
if (any(tab$method == "poLCAParallel (1 thr)") && any(tab$method == "aspectr (1 thr)")) {
  heading("aspectr time / poLCAParallel time, both 1 thread (target <= 0.2 at the same log-likelihood)")
  a1 <- tab[tab$method == "aspectr (1 thr)", ]
  p1 <- tab[tab$method == "poLCAParallel (1 thr)", ]
  m3 <- match(paste(a1$data, a1$k), paste(p1$data, p1$k))
  print(data.frame(data = a1$data, k = a1$k, aspectr_s = sprintf("%.4f", a1$time_s),
                   poLCAParallel_s = sprintf("%.4f", p1$time_s[m3]),
                   ratio = sprintf("%.3f", a1$time_s / p1$time_s[m3]),
                   d_llik = sprintf("%+.2e", a1$llik - p1$llik[m3])),
        row.names = FALSE, right = FALSE)
}
cat(sprintf("\nTotal bench time: %.1f s\n", t_total))
## ASPECTR_BENCH_ONLY (bench/common.R) not matching "blrt" skips it
if (bench_want("blrt")) source("bench/lca-blrt.R")  # the bootstrap likelihood-ratio test (section 5)
