#!/usr/bin/env Rscript
## bench/lca-blrt.R -- the bootstrap likelihood-ratio test of k - 1 vs k
## latent classes: aspectr::lca_blrt() against poLCAParallel::blrt(), same
## number of draws and of random starts per fit, time and p-value.
##
## Run from the package root:   Rscript bench/lca-blrt.R
## (bench/lca.R runs it at its end, so one run of bench/lca.R reports both.)
##
## Both fit the null (k - 1) and the alternative (k) model to the data with
## 10 random starts, then B data sets drawn from the fitted null, each fitted
## by both models with 10 random starts. The time includes the fits to the
## data (poLCAParallel: its poLCA() of both models with nrep = 10, then
## blrt()). aspectr uses its staged restarts (lca()'s default) on every
## fit; poLCAParallel runs every start to convergence. poLCAParallel runs
## its draws on 2 threads; aspectr on 1 thread (aspectr_s) and with its
## draws on 2 future workers (aspectr_2w_s, multisession, including the
## workers' start). The p-values agree up to Monte Carlo error (with B = 100 draws
## the standard error of a p-value p is sqrt(p (1 - p) / 100)).
## Complete cases only (poLCAParallel's blrt() ignores missingness).
##
## ASPECTR_BENCH_QUICK=1: B = 20.

if (!exists("heading")) source("bench/common.R")
if (!exists("have")) {
  have <- c(aspectr = requireNamespace("aspectr", quietly = TRUE),
            poLCA = ensure_peer("poLCA"),
            poLCAParallel = ensure_peer("poLCAParallel", "needs a C++ compiler and RcppArmadillo"))
}
B_BLRT <- if (quick) 20L else 100L
heading(sprintf("Bootstrap likelihood-ratio test: B = %d draws, 10 starts per fit", B_BLRT))
blrt_data <- function(name, vars = NULL) {
  e <- new.env()
  utils::data(list = name, package = "poLCA", envir = e)
  d <- e[[name]]
  if (!is.null(vars)) d <- d[vars]
  d <- as.data.frame(lapply(d, as.integer))
  d[stats::complete.cases(d), , drop = FALSE]
}
if (!requireNamespace("poLCA", quietly = TRUE)) {
  note("poLCA's data sets are not available: BLRT bench skipped.")
} else {
  cases <- list(
    list(name = "carcinoma", data = blrt_data("carcinoma"), k = 3L),
    list(name = "carcinoma", data = blrt_data("carcinoma"), k = 4L),  # (a p-value away from 0)
    list(name = "election12 (cc)", data = blrt_data("election", c("MORALG", "CARESG", "KNOWG", "LEADG",
         "DISHONG", "INTELG", "MORALB", "CARESB", "KNOWB", "LEADB", "DISHONB", "INTELB")), k = 3L))
  out <- list()
  for (cs in cases) {
    d <- cs$data
    cat(sprintf("\n%s, %d vs %d classes (N = %d), load %s\n", cs$name, cs$k - 1L, cs$k, nrow(d), loadavg()))
    ea <- elapsed(aspectr::lca_blrt(d, cs$k, B = B_BLRT, nrun = 10, seed = 1))
    a <- ea$value
    t_a <- ea$time
    t_a2 <- NA_real_
    if (requireNamespace("future", quietly = TRUE) && requireNamespace("future.apply", quietly = TRUE)) {
      old_plan <- future::plan("multisession", workers = 2)
      e2 <- elapsed(aspectr::lca_blrt(d, cs$k, B = B_BLRT, nrun = 10, seed = 1))
      future::plan(old_plan)
      if (!identical(e2$value$boot, a$boot)) note("the draws under a future plan differ from the sequential ones")
      t_a2 <- e2$time
    }
    row <- data.frame(data = cs$name, k = cs$k, aspectr_s = t_a, aspectr_2w_s = t_a2, aspectr_p = a$p.value,
                      aspectr_LR = a$statistic, poLCAParallel_s = NA_real_, poLCAParallel_p = NA_real_,
                      poLCAParallel_LR = NA_real_)
    if (isTRUE(have[["poLCAParallel"]])) {
      f <- stats::as.formula(paste0("cbind(", paste(names(d), collapse = ", "), ") ~ 1"))
      set.seed(1)
      ep <- elapsed({
        m0 <- poLCAParallel::poLCA(f, d, nclass = cs$k - 1L, nrep = 10, verbose = FALSE, calc.se = FALSE)
        m1 <- poLCAParallel::poLCA(f, d, nclass = cs$k, nrep = 10, verbose = FALSE, calc.se = FALSE)
        poLCAParallel::blrt(m0, m1, n_bootstrap = B_BLRT, n_thread = 2, n_rep = 10)
      })
      p <- ep$value
      t_p <- ep$time
      row$poLCAParallel_s <- t_p
      row$poLCAParallel_p <- p$p_value
      row$poLCAParallel_LR <- p$fitted_log_ratio
    }
    print(row, row.names = FALSE)
    out[[length(out) + 1L]] <- row
  }
  tab_blrt <- do.call(rbind, out)
  tab_blrt$ratio_1thr <- tab_blrt$poLCAParallel_s / tab_blrt$aspectr_s
  tab_blrt$ratio_2w <- tab_blrt$poLCAParallel_s / tab_blrt$aspectr_2w_s
  heading("BLRT: poLCAParallel (2 threads) time / aspectr time, 1 thread and 2 future workers (> 1: aspectr faster)")
  print(tab_blrt, row.names = FALSE, digits = 4)
}
