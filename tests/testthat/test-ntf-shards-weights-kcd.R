# ntf(loss = "kl", method = "cd") of data in shards() with missing cells,
# masks and weights: the weighted coordinate descent of the in-memory fit
# on the pieces (each shard solves its rows of the first mode; every other
# mode's Newton steps add their sums over the shards), so the same call
# gives the in-memory weighted fit, in memory, from files and on a cluster.

kcdw_counts <- function(dims = c(13, 6, 5), seed = 1) {
  set.seed(seed)
  A <- lapply(dims, function(d) matrix(stats::runif(d * 2), d, 2))
  m <- array(0, dims)
  for (r in 1:2) m <- m + outer(outer(A[[1]][, r], A[[2]][, r]), A[[3]][, r])
  X <- array(stats::rpois(prod(dims), 4 * m), dims)
  X[, 1, 1] <- X[, 1, 1] + 1
  X
}

kcdw_args <- function(X) {
  dims <- dim(X)
  set.seed(7)
  mask <- array(stats::runif(prod(dims)) < 0.15, dims)
  W <- array(stats::runif(prod(dims), 0.2, 2), dims)
  W[sample(prod(dims), 10)] <- 0
  obs <- array(X > 0 | stats::runif(prod(dims)) < 0.3, dims)
  mw <- list(stats::runif(dims[1], 0.5, 2), NULL, c(1, 2, 0.5, 1, 3))
  list(mask = list(mask = mask), weights = list(weights = W), observed = list(observed = obs),
       mode_weights = list(mode_weights = mw), all = list(mask = mask, weights = W, observed = obs, mode_weights = mw))
}

expect_same_kcdw <- function(fit, ref, tol = 1e-10, info = NULL) {
  for (n in seq_along(ref$factors)) {
    expect_equal(unname(as.matrix(fit$factors[[n]])), unname(ref$factors[[n]]), tolerance = tol,
                 info = paste(info, "factor", n))
  }
  expect_equal(unname(fit$weights), unname(ref$weights), tolerance = tol, info = info)
  expect_equal(fit$objective, ref$objective, tolerance = tol, info = info)
  expect_equal(fit$initial, ref$initial, tolerance = tol, info = info)
  expect_equal(fit$value, ref$value, tolerance = tol, info = info)
  expect_identical(fit$iterations, ref$iterations, info = info)
  expect_identical(fit$converged, ref$converged, info = info)
  expect_identical(fit$method, "cd", info = info)
  expect_identical(fit$weighting$type, ref$weighting$type, info = info)
}
quiet_kcdw <- function(...) suppressMessages(ntf(...))

test_that("weighted KL coordinate descent of 1, 2 and 3 shards in memory equals the in-memory fit", {
  X <- kcdw_counts()
  cases <- kcdw_args(X)
  for (nm in names(cases)) {
    args <- c(list(loss = "kl", method = "cd", seed = 3, max_iter = 60, tol = 1e-8), cases[[nm]])
    ref <- do.call(quiet_kcdw, c(list(X, 2), args))
    for (cuts in list(integer(0), 6L, c(1L, 4L, 9L))) {
      info <- paste(nm, "shards", length(cuts) + 1)
      fit <- do.call(quiet_kcdw, c(list(shards(split_rows(X, cuts)), 2), args))
      expect_same_kcdw(fit, ref, info = info)
      # the objective never rises
      expect_true(all(diff(c(fit$initial, fit$objective)) <= 1e-12 * abs(fit$initial)), info = info)
    }
  }
  # the default method with weights on shards is coordinate descent, as in
  # memory; several starts
  args <- list(loss = "kl", seed = 5, nrun = 3, max_iter = 20, mask = cases$mask$mask)
  expect_same_kcdw(do.call(quiet_kcdw, c(list(shards(split_rows(X, c(5L, 10L))), 3), args)),
                   do.call(quiet_kcdw, c(list(X, 3), args)), info = "default, nrun 3")
})

test_that("a masked cell's value plays no part in the weighted coordinate descent of shards", {
  X <- kcdw_counts(seed = 4)
  set.seed(3)
  mask <- array(stats::runif(length(X)) < 0.2, dim(X))
  Y <- X
  Y[mask] <- 50  # (the masked cells changed)
  fit <- function(d, ...) quiet_kcdw(shards(split_rows(d, 7L)), 2, loss = "kl", method = "cd", seed = 2,
                                     max_iter = 25, tol = 0, ...)
  a <- fit(X, mask = mask)
  b <- fit(Y, mask = mask)
  for (n in 1:3) expect_equal(a$factors[[n]], b$factors[[n]], tolerance = 1e-12)
  expect_equal(a$objective, b$objective, tolerance = 1e-12)
  # while the unmasked fit of the changed data differs
  d <- fit(Y)
  expect_gt(max(abs(d$factors[[2]] - a$factors[[2]])), 1e-3)
})

test_that("weighted KL coordinate descent of .shard files (read a few cells at a time), .rds files and a PSOCK cluster equals the in-memory fit", {
  X <- kcdw_counts(seed = 2)
  cases <- kcdw_args(X)
  args <- c(list(loss = "kl", method = "cd", seed = 2, max_iter = 30, tol = 0), cases$all)
  ref <- do.call(quiet_kcdw, c(list(X, 2), args))
  parts <- split_rows(X, c(4L, 9L))
  sh <- write_shards(parts, shard_tempdir())
  expect_same_kcdw(do.call(quiet_kcdw, c(list(sh, 2), args)), ref, info = ".shard files")
  old <- options(aspectr.shard_chunk = 7)  # .shard files read 7 cells at a time
  expect_same_kcdw(do.call(quiet_kcdw, c(list(sh, 2), args)), ref, info = ".shard files, 7 cells at a time")
  options(old)
  rds <- file.path(shard_tempdir(), paste0("p", seq_along(parts), ".rds"))
  for (i in seq_along(parts)) saveRDS(parts[[i]], rds[i])
  expect_same_kcdw(do.call(quiet_kcdw, c(list(shards(rds), 2), args)), ref, info = ".rds files")
  skip_on_cran()
  cl <- psock_cluster()
  on.exit(parallel::stopCluster(cl), add = TRUE)
  expect_same_kcdw(do.call(quiet_kcdw, c(list(shards(parts), 2, cluster = cl), args)), ref, info = "PSOCK")
  expect_same_kcdw(do.call(quiet_kcdw, c(list(sh, 2, cluster = cl), args)), ref, info = "PSOCK, files")
})
