#!/usr/bin/env Rscript
## bench/ntf-mask-shards.R -- masked ntf(loss = "kl", method = "mu") of
## shards() against the same masked fit of the tensor in memory.
##
## Run from the package root:   Rscript bench/ntf-mask-shards.R
## (ASPECTR_BENCH_QUICK=1 runs a small version.) aspectr must be installed.
##
## The weighted multiplicative updates (solvers/cp_weighted.h) run on pieces
## (solvers/cp_weighted_pieces.h): each shard updates its rows of the first
## mode, the other modes come from k x d_n sums over the shards, one pass
## over the shards per mode after the first and one for the objective per
## iteration. Data: a sparse 3-way tensor (values 1 + Poisson(2)) split
## along its first mode into 4 shards; a mask of 1% of the cells drawn
## uniformly; k = 10, 1 thread, tol = 0, the same start for every fit.
## Time per iteration = (time of a fit of `long` iterations - that of
## `short`) / (long - short), so that the set-up (loading, weighing the
## shards, writing the weighted copies) is left out; minima over
## interleaved rounds. Backends: the tensor in memory, shards in memory,
## .shard files streamed (out of core, chunks of 65536 cells), and a
## 2-worker PSOCK cluster; the unmasked fit of the same backends (the
## EM-equivalent updates) for scale.

source("bench/common.R")
t_script <- proc.time()[["elapsed"]]
library(aspectr)
set.seed(20261128)
dims <- if (quick) c(400L, 60L, 20L) else c(2000L, 100L, 30L)
dens <- 0.02
nnz <- round(prod(as.numeric(dims)) * dens)
cells <- sample.int(prod(dims), nnz)
X <- array(0, dims)
X[cells] <- stats::rpois(nnz, 2) + 1
k <- 10L
M <- array(FALSE, dims)
M[sample.int(prod(dims), round(0.01 * prod(dims)))] <- TRUE
st <- lapply(dims, function(d) matrix(stats::runif(d * k, 0.2, 1), d, k))
cuts <- round(seq(0, dims[1], length.out = 5))
parts <- lapply(1:4, function(i) X[(cuts[i] + 1):cuts[i + 1], , , drop = FALSE])
dir <- tempfile("ntfmaskshards"); dir.create(dir)
cl <- aspectr::shard_cluster(2)
invisible(parallel::clusterCall(cl, function(p) .libPaths(p), .libPaths()))
backends <- list(tensor = list(x = X), `shards (memory, 4)` = list(x = shards(parts)),
                 `shards (.shard files, 4)` = list(x = write_shards(parts, dir)),
                 `shards (PSOCK, 2 workers)` = list(x = shards(parts), cluster = cl))
short <- 2L
long <- if (quick) 12L else 42L
rounds <- if (quick) 1L else 2L
heading(sprintf("masked ntf(loss = \"kl\", method = \"mu\") of a %s tensor (%d non-zeros, %d masked cells), k = %d",
                paste(dims, collapse = " x "), nnz, sum(M), k))
fit_time <- function(b, iters, mask) {
  t0 <- proc.time()[["elapsed"]]
  fit <- suppressMessages(do.call(ntf, c(list(backends[[b]]$x, k, loss = "kl", method = "mu", init = st,
                                              max_iter = iters, tol = 0, threads = 1L, mask = mask),
                                         if (!is.null(backends[[b]]$cluster)) list(cluster = backends[[b]]$cluster))))
  list(time = proc.time()[["elapsed"]] - t0, value = fit$value)
}
cfg <- expand.grid(b = seq_along(backends), masked = c(TRUE, FALSE))
best <- rep(Inf, nrow(cfg)); value <- rep(NA_real_, nrow(cfg)); setup <- rep(Inf, nrow(cfg))
for (r in seq_len(rounds)) {
  for (ci in seq_len(nrow(cfg))) {
    mask <- if (cfg$masked[ci]) M
    a <- fit_time(cfg$b[ci], short, mask)
    b <- fit_time(cfg$b[ci], long, mask)
    per <- (b$time - a$time) / (long - short)
    best[ci] <- min(best[ci], per)
    setup[ci] <- min(setup[ci], a$time - short * per)
    value[ci] <- b$value
  }
}
ref <- best[cfg$b == 1][match(cfg$masked, c(TRUE, FALSE))]
refv <- value[cfg$b == 1][match(cfg$masked, c(TRUE, FALSE))]
tab <- data.frame(data = names(backends)[cfg$b], mask = ifelse(cfg$masked, "1%", "none"),
                  s_per_iter = fmt_s(best), ratio = formatC(best / ref, format = "f", digits = 2),
                  setup_s = fmt_s(pmax(setup, 0)),
                  value_rel_diff = formatC(abs(value / refv - 1), format = "e", digits = 1),
                  stringsAsFactors = FALSE)
print(tab, row.names = FALSE)
cat("ratio: time per iteration / that of the tensor in memory (same mask); value_rel_diff: |value / tensor's - 1|\n")
cat("(unmasked fits: ntf()'s EM-equivalent updates, all modes from one pass)\n")
parallel::stopCluster(cl)
unlink(dir, recursive = TRUE)
cat(sprintf("\nload average (1 min) at the end: %s; total %.0f s\n", loadavg(), proc.time()[["elapsed"]] - t_script))
