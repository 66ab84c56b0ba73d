# Data and clusters for the tests of sharded fits (test-shards.R,
# test-nmf-shards.R)

shard_counts <- function(m = 40, n = 25, seed = 1) {
  withr_seed <- function(code) {
    old <- if (exists(".Random.seed", globalenv())) get(".Random.seed", globalenv())
    on.exit(if (!is.null(old)) assign(".Random.seed", old, globalenv()))
    set.seed(seed)
    code
  }
  withr_seed({
    x <- matrix(stats::rpois(m * n, stats::runif(m * n, 0, 3)), m, n,
                dimnames = list(paste0("d", seq_len(m)), paste0("w", seq_len(n))))
    x[sample(length(x), length(x) %/% 3)] <- 0
    x[, 1] <- x[, 1] + 1  # no empty rows
    x
  })
}

# rows of x split at the cut points (the last row ends the last shard)
split_rows <- function(x, cuts) {
  b <- c(0, cuts, nrow(x))
  lapply(seq_len(length(b) - 1), function(i) {
    r <- seq.int(b[i] + 1, b[i + 1])
    do.call(`[`, c(list(x, r), rep(list(TRUE), length(dim(x)) - 1), drop = FALSE))
  })
}

shard_tempdir <- function() {
  d <- tempfile("shards")
  dir.create(d)
  d
}

# A 2-worker PSOCK cluster whose workers use this session's library (the
# test is skipped when they cannot load aspectr); the caller stops it
psock_cluster <- function() {
  cl <- parallel::makeCluster(2)
  set_worker_libs(cl)
  if (!all(unlist(parallel::clusterCall(cl, requireNamespace, "aspectr", quietly = TRUE)))) {
    parallel::stopCluster(cl)
    skip("aspectr is not installed where the workers look")
  }
  cl
}

# The workers' library paths set to this session's. (`.libPaths` itself
# cannot be the function sent: the copy a worker receives keeps the paths
# in its own environment, and the worker's library paths stay as they were.)
set_worker_libs <- function(cl) {
  f <- function(p) .libPaths(p)
  environment(f) <- globalenv()
  invisible(parallel::clusterCall(cl, f, .libPaths()))
}

# A 2-worker mirai cluster (which hands each call to whichever worker is
# free) using this session's library; the caller stops it
mirai_cluster <- function() {
  skip_if_not_installed("mirai")
  cl <- mirai::make_cluster(2)
  set_worker_libs(cl)
  cl
}
