## bench/kcd-shards.R -- KL coordinate descent by passes over shards (the
## rule of N-way data and of plsa() with a prior: each shard solves its rows
## of the first mode, every other mode's Newton steps take sums over the
## shards) against the same fit of the data in memory.
##
##   Rscript bench/kcd-shards.R                       # both sections
##   ASPECTR_BENCH_QUICK=1 Rscript bench/kcd-shards.R  # smaller data
##
## * "nway": plsa() of a 3-way array of counts (2000 x 300 x 50, 3e5 cells;
##   quick: 600 x 100 x 30), k = 10, 10 iterations, in memory and in 4
##   shards in memory.
## * "prior": plsa() of AssociatedPress (topicmodels; k = 20) with a prior
##   (terms 0.1, documents 0.5), in memory and in 4 shards in memory, each
##   method (the default coordinate descent, EM, SQUAREM) to the same
##   target: the largest of their objectives after 100 iterations (30
##   quick). Whole calls are timed, interleaved, `REPS` rounds; minima and
##   ratios are printed.
## ASPECTR_BENCH_ONLY="^nway$" runs one section (a regular expression).
## Run from the package root with aspectr installed.

source("bench/common.R")
suppressPackageStartupMessages({
  library(aspectr)
  library(Matrix)
})
REPS <- as.integer(Sys.getenv("ASPECTR_BENCH_REPS", "3"))
cut_rows <- function(x, n) {
  b <- round(seq(0, dim(x)[1], length.out = n + 1))
  lapply(seq_len(n), function(i) {
    r <- (b[i] + 1):b[i + 1]
    if (length(dim(x)) == 2) x[r, , drop = FALSE] else x[r, , , drop = FALSE]
  })
}
best <- function(times) apply(times, 2, min)
heading("KL coordinate descent by passes over shards against memory (bench/kcd-shards.R)")
print_environment(c("aspectr", "topicmodels"))

if (bench_want("nway")) {
  subheading("nway: plsa() of a 3-way array, k = 10, 10 iterations, 4 shards in memory")
  dims <- if (quick) c(600, 100, 30) else c(2000, 300, 50)
  nnz <- if (quick) 30000 else 300000
  set.seed(1)
  idx <- unique(cbind(sample(dims[1], nnz, TRUE), sample(dims[2], nnz, TRUE), sample(dims[3], nnz, TRUE)))
  a <- array(0, dims)
  a[idx] <- stats::rpois(nrow(idx), 2) + 1
  sh <- shards(cut_rows(a, 4))
  times <- matrix(NA_real_, REPS, 2, dimnames = list(NULL, c("memory", "shards")))
  for (r in seq_len(REPS)) {
    times[r, "memory"] <- system.time(f1 <- plsa(a, 10, seed = 1, max_iter = 10, tol = 0))[["elapsed"]]
    times[r, "shards"] <- system.time(f2 <- plsa(sh, 10, seed = 1, max_iter = 10, tol = 0))[["elapsed"]]
  }
  b <- best(times)
  cat(sprintf("%s: %d cells; memory %.3f s, shards %.3f s: shards / memory = %.2f\n",
              paste(dims, collapse = " x "), sum(a > 0), b[["memory"]], b[["shards"]], b[["shards"]] / b[["memory"]]))
  cat(sprintf("largest difference of the objective traces: %.2g\n", max(abs(f1$objective - f2$objective))))
}

if (bench_want("prior")) {
  subheading("prior: plsa() of AssociatedPress with a prior, k = 20, to the same target")
  if (!requireNamespace("topicmodels", quietly = TRUE)) install_quietly("topicmodels")
  if (!requireNamespace("topicmodels", quietly = TRUE)) {
    note("topicmodels is not installed: the prior section is skipped")
  } else {
    e <- new.env()
    utils::data("AssociatedPress", package = "topicmodels", envir = e)
    ap <- e$AssociatedPress
    x <- sparseMatrix(i = ap$i, j = ap$j, x = as.numeric(ap$v), dims = c(ap$nrow, ap$ncol))
    sh <- shards(cut_rows(x, 4))
    pr <- list(terms = 0.1, documents = 0.5)
    at <- if (quick) 30 else 100
    runs <- list(memory_cd = list(x, "cd"), shards_cd = list(sh, "cd"), shards_em = list(sh, "em"),
                 shards_squarem = list(sh, "squarem"))
    fit <- function(run, iters) plsa(run[[1]], 20, method = run[[2]], seed = 1, max_iter = iters, tol = 0, prior = pr)
    traces <- lapply(runs, function(run) fit(run, if (run[[2]] == "em") 3 * at else at)$objective)
    target <- max(vapply(traces, function(o) o[min(at, length(o))], numeric(1)))
    need <- vapply(traces, function(o) which(o <= target)[1], integer(1))
    cat(sprintf("target %.10g (the largest objective after %d iterations); iterations to it: %s\n", target, at,
                paste(names(need), need, collapse = ", ")))
    times <- matrix(NA_real_, REPS, length(runs), dimnames = list(NULL, names(runs)))
    for (r in seq_len(REPS)) for (m in names(runs)) times[r, m] <- system.time(fit(runs[[m]], need[[m]]))[["elapsed"]]
    b <- best(times)
    cat(sprintf("%-15s %10s %10s\n", "fit", "time (s)", "vs shards_cd"))
    for (m in names(runs)) cat(sprintf("%-15s %10.3f %10.2f\n", m, b[[m]], b[[m]] / b[["shards_cd"]]))
    cat(sprintf("shards / memory, coordinate descent: %.2f\n", b[["shards_cd"]] / b[["memory_cd"]]))
  }
}
cat("load average at end:", loadavg(), "\n")
