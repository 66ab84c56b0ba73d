# plsa(loss = "tsallis") with a mask: the matrix in memory vs the same fit
# of shards() (in this process, from .shard files, on a 2-worker PSOCK
# cluster): elapsed time of the whole fit (set-up included) per iteration,
# and the relative difference of the value.
# Run: Rscript bench/plsa-tsallis-mask-shards.R (AssociatedPress from
# topicmodels when installed, else a synthetic matrix).
suppressPackageStartupMessages({
  library(aspectr)
  library(Matrix)
})
k <- 10
iters <- 6
if (requireNamespace("topicmodels", quietly = TRUE)) {
  utils::data("AssociatedPress", package = "topicmodels", envir = environment())
  ap <- AssociatedPress
  x <- Matrix::sparseMatrix(i = ap$i, j = ap$j, x = as.numeric(ap$v), dims = c(ap$nrow, ap$ncol))
  what <- "AssociatedPress"
} else {
  set.seed(1)
  x <- Matrix::rsparsematrix(2000, 5000, 0.02, rand.x = function(n) rpois(n, 2) + 1)
  what <- "synthetic"
}
x <- methods::as(x, "CsparseMatrix")
set.seed(2)
cells <- sample(length(x), round(0.01 * length(x)))
mask <- Matrix::sparseMatrix(i = (cells - 1) %% nrow(x) + 1, j = (cells - 1) %/% nrow(x) + 1, x = TRUE,
                             dims = dim(x))
cat(sprintf("%s %d x %d, %d non-zeros; %d masked cells, k = %d, %d iterations, q = 0.7, 1 thread\n",
            what, nrow(x), ncol(x), length(x@x), length(cells), k, iters))
cat(sprintf("load average at start: %s\n", paste(readLines("/proc/loadavg", warn = FALSE), collapse = "")))
fit <- function(data, ...) {
  t0 <- proc.time()[["elapsed"]]
  f <- suppressMessages(plsa(data, k, loss = "tsallis", q = 0.7, mask = mask, seed = 1, max_iter = iters, tol = 0,
                             ...))
  list(time = (proc.time()[["elapsed"]] - t0) / iters, value = f$value)
}
cuts <- round(seq(0, nrow(x), length.out = 5))
parts <- lapply(1:4, function(i) x[(cuts[i] + 1):cuts[i + 1], , drop = FALSE])
dir <- tempfile("shards")
dir.create(dir)
files <- write_shards(shards(parts), dir)
cl <- aspectr::shard_cluster(2)
invisible(parallel::clusterCall(cl, function(p) .libPaths(p), .libPaths()))
res <- list(
  matrix = fit(x, method = "em"),
  `shards (memory, 4)` = fit(shards(parts)),
  `shards (.shard files, 4)` = fit(files),
  `shards (PSOCK 2 workers, 4)` = fit(shards(parts), cluster = cl))
parallel::stopCluster(cl)
ref <- res$matrix
out <- data.frame(data = names(res), s_per_iter = signif(vapply(res, `[[`, 0, "time"), 3),
                  ratio = round(vapply(res, `[[`, 0, "time") / ref$time, 2),
                  value_rel_diff = signif(abs(vapply(res, `[[`, 0, "value") / ref$value - 1), 2))
print(out, row.names = FALSE)
cat("s_per_iter: elapsed time of the whole call (set-up included) / iterations; ratio: / the matrix's\n")
cat(sprintf("load average at the end: %s\n", paste(readLines("/proc/loadavg", warn = FALSE), collapse = "")))
