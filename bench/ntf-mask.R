#!/usr/bin/env Rscript
## bench/ntf-mask.R -- the cost of a mask in ntf()'s Frobenius updates (HALS
## and multiplicative), before and after the weighted rule stopped forming
## each factor row's Gram matrix.
##
## Run from the package root:   Rscript bench/ntf-mask.R
## (ASPECTR_BENCH_QUICK=1 runs a small version.) aspectr must be installed.
##
## The weighted rule of ntf() (solvers/cp_weighted.h) updates each row of a
## mode with its own Gram matrix B_i = v_i (G + sum_{c in E_i} e_c z_c z_c')
## (E_i: the row's left-out or reweighted cells, z_c the other modes'
## product there). It used to form B_i, k^2 work per such cell; it now
## applies B_i through the model's values z_c'a at those cells, kept up to
## date through the HALS sweep (k work per cell), as nmf()'s weighted rule
## does. The earlier form is still in the rule as an internal check
## (option aspectr.ntf_gram = TRUE), so both run from one installation:
##   "gram":  each row's B_i formed (the rule before the change),
##   "model": B_i a from the model's values (the rule now),
##   "none":  no mask (ntf()'s unweighted rule, for scale).
## Data: a sparse 200 x 150 x 40 tensor at 2% density (values 1 + Poisson(2))
## and a dense 100 x 80 x 40 array (rank-10 exponential factors plus
## Gaussian noise, clipped at 0); masks of 1% and 10% of the cells drawn
## uniformly over all cells (on the sparse tensor mostly zeros). k = 10,
## 1 thread, tol = 0, the same random start for every fit of a data set, a
## fixed number of iterations (on the sparse tensor also k = 20, where the
## Gram matrices cost four times as much and the model's values twice).
## Time per iteration = (time at the last
## callback - time at the first) / (iterations - 1); every configuration
## runs `rounds` times, interleaved (all once, then all again), minima
## kept. gram/model = the speed-up; model/none = the cost of the mask now.
## The objectives of "gram" and "model" after the budget are compared
## (relative difference: rounding only). Timings on a shared machine are
## noisy: the 1-minute load average is printed.

source("bench/common.R")  # %||%, quick, heading, note, print_environment, per_iteration, fmt_s
options(warn = 1)
t_script <- proc.time()[["elapsed"]]
heading("aspectr ntf() with masks: Frobenius HALS and MU, Gram matrices formed vs the model's values (bench/ntf-mask.R)",
        if (quick) "  [QUICK]" else "")
if (!requireNamespace("aspectr", quietly = TRUE)) stop("aspectr must be installed")
print_environment(c("aspectr"))


set.seed(20261128)
sets <- list()
local({
  dims <- if (quick) c(80L, 60L, 20L) else c(200L, 150L, 40L)
  cells <- prod(as.numeric(dims))
  nnz <- round(0.02 * cells)
  idx <- arrayInd(sample.int(cells, nnz), dims)
  X <- aspectr::sptensor(idx, stats::rpois(nnz, 2) + 1, dims = dims)
  sets$sparse <<- list(name = sprintf("sparse %s, %d non-zeros (2%%)", paste(dims, collapse = " x "), nnz),
                       X = X, dims = dims, ks = c(10L, 20L))
})
local({
  dims <- if (quick) c(50L, 40L, 20L) else c(100L, 80L, 40L)
  A <- lapply(dims, function(d) matrix(stats::rexp(d * 10), d, 10))
  ij <- arrayInd(seq_len(prod(dims)), dims)
  m <- rowSums(A[[1]][ij[, 1], ] * A[[2]][ij[, 2], ] * A[[3]][ij[, 3], ])
  X <- array(pmax(m + stats::rnorm(length(m), sd = sd(m) / 10), 0), dims)
  sets$dense <<- list(name = sprintf("dense %s (rank 10 + noise)", paste(dims, collapse = " x ")),
                      X = X, dims = dims, ks = 10L)
})

methods_b <- c("hals", "mu")
fracs <- c(0.01, 0.10)
budget <- if (quick) 4L else 20L
rounds <- if (quick) 1L else 5L
all_rows <- list()
for (dn in names(sets)) for (k in sets[[dn]]$ks) {
  d <- sets[[dn]]
  dims <- d$dims
  cells <- prod(as.numeric(dims))
  subheading(d$name, sprintf("; k = %d, %d iterations per fit, %d interleaved rounds, 1 thread", k, budget, rounds))
  st <- lapply(dims, function(n) matrix(stats::runif(n * k), n, k))
  masks <- lapply(fracs, function(f) arrayInd(sample.int(cells, round(f * cells)), dims))
  # configurations: method x (none | mask f x (gram | model))
  cfg <- rbind(expand.grid(f = 0L, form = "none", meth = seq_along(methods_b), stringsAsFactors = FALSE),
               expand.grid(f = seq_along(fracs), form = c("gram", "model"), meth = seq_along(methods_b),
                           stringsAsFactors = FALSE))
  best <- rep(Inf, nrow(cfg)); obj <- rep(NA_real_, nrow(cfg))
  for (r in seq_len(rounds)) {
    for (ci in seq_len(nrow(cfg))) {
      M <- if (cfg$f[ci] == 0L) NULL else masks[[cfg$f[ci]]]
      op <- options(aspectr.ntf_gram = cfg$form[ci] == "gram")
      res <- tryCatch(per_iteration(function(cb) aspectr::ntf(
        d$X, k, method = methods_b[cfg$meth[ci]], init = st, max_iter = budget, tol = 0, mask = M,
        threads = 1L, callback = cb)),
        error = function(e) { note(methods_b[cfg$meth[ci]], " failed: ", conditionMessage(e)); NULL })
      options(op)
      if (is.null(res)) next
      best[ci] <- min(best[ci], res$per_iter)
      obj[ci] <- res$fit$value
    }
  }
  rows <- list()
  for (mi in seq_along(methods_b)) {
    none <- best[cfg$meth == mi & cfg$form == "none"]
    for (fi in seq_along(fracs)) {
      g <- cfg$meth == mi & cfg$f == fi & cfg$form == "gram"
      m <- cfg$meth == mi & cfg$f == fi & cfg$form == "model"
      rows[[length(rows) + 1]] <- data.frame(
        data = dn, k = k, method = methods_b[mi], mask = sprintf("%g%%", 100 * fracs[fi]),
        masked_cells = nrow(masks[[fi]]), none_s = none, gram_s = best[g], model_s = best[m],
        "gram/model" = best[g] / best[m], "gram/none" = best[g] / none, "model/none" = best[m] / none,
        objective_reldiff = abs(obj[g] - obj[m]) / abs(obj[g]), check.names = FALSE)
    }
  }
  tab <- do.call(rbind, rows)
  out <- tab
  for (cn in c("none_s", "gram_s", "model_s")) out[[cn]] <- fmt_s(out[[cn]])
  for (cn in c("gram/model", "gram/none", "model/none")) out[[cn]] <- formatC(out[[cn]], format = "f", digits = 2)
  out$objective_reldiff <- formatC(out$objective_reldiff, format = "e", digits = 1)
  print(out[, -(1:2)], row.names = FALSE)
  cat(sprintf("load average (1 min): %s\n", loadavg()))
  all_rows[[paste(dn, k)]] <- tab
}

cat("\nSummary: ratios of seconds per iteration (minima), 1 thread\n")
sm <- do.call(rbind, all_rows)
sm <- sm[, c("data", "k", "method", "mask", "gram/model", "gram/none", "model/none")]
print(sm, row.names = FALSE, digits = 3)
cat(sprintf("\nload average (1 min) at the end: %s; total %.0f s\n", loadavg(), proc.time()[["elapsed"]] - t_script))
