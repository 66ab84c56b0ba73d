# Data and clusters for the tests of sharded fits (test-shards.R,
# test-nmf-shards.R)

# `code` run on the random numbers of `seed`, the session's stream left as
# it was (a test's data then do not depend on the tests run before it)
with_test_seed <- function(seed, code) {
  old <- if (exists(".Random.seed", globalenv())) get(".Random.seed", globalenv())
  on.exit(if (is.null(old)) rm(".Random.seed", envir = globalenv()) else assign(".Random.seed", old, globalenv()))
  set.seed(seed)
  code
}

shard_counts <- function(m = 40, n = 25, seed = 1) {
  with_test_seed(seed, {
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
  cl <- shard_cluster(2)
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

# An ntf() of the shards `parts` of X saved as .rds files, with the first
# mode's factor written to files (factor_dir), equals the in-memory fit
# with `args` (one start and three) and with `staged` (staged starts: the
# best run's factor resumed from its files); only the fit's files remain
expect_ntf_factor_dir <- function(X, parts, args, staged) {
  quiet <- function(...) suppressMessages(ntf(...))
  dir <- shard_tempdir()
  f <- file.path(dir, paste0("part", seq_along(parts), ".rds"))
  for (i in seq_along(parts)) saveRDS(parts[[i]], f[i])
  for (nrun in c(1, 3)) {
    a <- c(args, list(nrun = nrun))
    ref <- do.call(quiet, c(list(X, 2), a))
    fit <- do.call(quiet, c(list(shards(f), 2, factor_dir = TRUE), a))
    expect_s3_class(fit$factors[[1]], "aspectr_factor_files")
    got <- gather_factors(fit)
    expect_equal(got$factors, ref$factors, tolerance = 1e-10)
    expect_equal(got$weights, ref$weights, tolerance = 1e-10)
    expect_equal(got$objective, ref$objective, tolerance = 1e-10)
    expect_equal(got$run_values, ref$run_values, tolerance = 1e-10)
    expect_setequal(list.files(dir), c(basename(f), paste0("part", seq_along(parts), ".", names(fit$factors)[1], ".rds")))
  }
  ref <- do.call(quiet, c(list(X, 2), staged))
  got <- gather_factors(do.call(quiet, c(list(shards(f), 2, factor_dir = TRUE), staged)))
  expect_equal(got$factors, ref$factors, tolerance = 1e-10)
  expect_equal(got$objective, ref$objective, tolerance = 1e-10)
  expect_identical(got$iterations, ref$iterations)
}

# `fit` equals `ref` in the fields `equal` (to `tol`; with `unname`, their
# names dropped) and is identical to it in the fields `same`
expect_same_fields <- function(fit, ref, equal, same = character(), tol = 1e-10, info = NULL, unname = FALSE) {
  u <- if (unname) base::unname else identity
  for (f in equal) expect_equal(u(fit[[f]]), u(ref[[f]]), tolerance = tol, info = paste(info, f))
  for (f in same) expect_identical(fit[[f]], ref[[f]], info = paste(info, f))
}

# ntf() of `x` and of `ref_x` (with `args`) stopped by a callback after 4
# iterations: the callback sees the same objective and factors in both;
# returns the two fits
expect_same_ntf_callback <- function(x, ref_x, args) {
  seen <- list(); seen_ref <- list()
  quiet <- function(...) suppressMessages(ntf(...))
  fit <- do.call(quiet, c(list(x, 2, callback = function(it, obj, fac) { seen[[it]] <<- list(obj, fac); it < 4 }), args))
  ref <- do.call(quiet, c(list(ref_x, 2, callback = function(it, obj, fac) { seen_ref[[it]] <<- list(obj, fac); it < 4 }),
                          args))
  expect_true(fit$stopped)
  expect_length(seen, 4)
  for (i in 1:4) expect_equal(seen[[i]], seen_ref[[i]], tolerance = 1e-10)
  list(fit = fit, ref = ref)
}
