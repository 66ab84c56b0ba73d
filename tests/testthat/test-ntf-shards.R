# ntf(loss = "frobenius") of data in shards(): the HALS and multiplicative
# updates of the in-memory fit run on the pieces (each shard updates its
# rows of the first mode, the other modes come from the added
# contractions), so the same call gives the in-memory fit, from shards in
# memory, shard files and other files, and on a cluster.

# an N-way array of non-negative values near a rank-3 CP model, every row
# (slice of mode 1) with a value
ntff_array <- function(dims, seed = 1, zeros = 0.3) {
  set.seed(seed)
  k <- 3
  A <- lapply(dims, function(d) matrix(stats::runif(d * k), d, k))
  m <- array(0, dims)
  for (r in seq_len(k)) m <- m + Reduce(outer, lapply(A, function(a) a[, r]))
  X <- m * stats::runif(length(m), 0.7, 1.3)
  X[stats::runif(length(X)) < zeros] <- 0
  first <- as.matrix(expand.grid(seq_len(dims[1]), 1))
  X[cbind(first, matrix(1L, dims[1], length(dims) - 2))] <- 1
  dimnames(X) <- lapply(seq_along(dims), function(n) paste0(letters[n], seq_len(dims[n])))
  X
}

expect_same_ntf <- function(fit, ref, tol = 1e-10, info = NULL) {
  expect_same_fields(fit, ref, c("factors", "weights", "objective", "initial", "value", "run_values", "nnz"),
                     c("iterations", "converged", "run", "method", "dims"), tol = tol, info = info)
}
quiet_ntf <- function(...) suppressMessages(ntf(...))

test_that("HALS and MU of 3-way and 4-way arrays in shards equal the in-memory fit; the objective never rises", {
  cases <- list(list(dims = c(14, 6, 5), cuts = c(4L, 9L)), list(dims = c(9, 4, 3, 5), cuts = c(2L, 3L, 7L)))
  for (cs in cases) {
    X <- ntff_array(cs$dims, seed = length(cs$dims))
    for (method in list(NULL, "hals", "mu")) {
      info <- paste(length(cs$dims), "-way,", if (is.null(method)) "default" else method)
      ref <- quiet_ntf(X, 3, method = method, seed = 2, max_iter = 60, tol = 1e-9)
      fit <- quiet_ntf(shards(split_rows(X, cs$cuts)), 3, method = method, seed = 2, max_iter = 60, tol = 1e-9)
      expect_same_ntf(fit, ref, info = info)
      expect_identical(fit$method, if (is.null(method)) "hals" else method)
      # (the updates never raise the objective; rounding aside)
      expect_true(all(diff(c(fit$initial, fit$objective)) <= 1e-12 * fit$initial), info = info)
      # unit-norm factors, the model equal to the in-memory one
      for (f in fit$factors) expect_equal(unname(sqrt(colSums(f^2))), rep(1, 3), tolerance = 1e-12)
      expect_equal(fitted(fit), fitted(ref), tolerance = 1e-10, info = info)
    }
  }
  # one shard, and one row per shard
  X <- ntff_array(c(5, 4, 3), seed = 9)
  ref <- quiet_ntf(X, 2, seed = 1, max_iter = 40)
  expect_same_ntf(quiet_ntf(shards(list(X)), 2, seed = 1, max_iter = 40), ref, info = "one shard")
  expect_same_ntf(quiet_ntf(shards(split_rows(X, 1:4)), 2, seed = 1, max_iter = 40), ref, info = "rows")
})

test_that("a sparse tensor and a matrix in shards give the in-memory fit; the same seed the same fit", {
  X <- ntff_array(c(12, 7, 4), seed = 3, zeros = 0.7)
  parts <- lapply(split_rows(X, c(3L, 8L)), as_sptensor)
  ref <- quiet_ntf(as_sptensor(X), 3, method = "hals", seed = 5, max_iter = 50)
  for (m in c("hals", "mu")) {
    ref <- quiet_ntf(as_sptensor(X), 3, method = m, seed = 5, max_iter = 50)
    fit <- quiet_ntf(shards(parts), 3, method = m, seed = 5, max_iter = 50)
    expect_same_ntf(fit, ref, info = paste("sptensor", m))
    expect_identical(quiet_ntf(shards(parts), 3, method = m, seed = 5, max_iter = 50)[c("factors", "objective")],
                     fit[c("factors", "objective")])
  }
  x <- shard_counts(30, 12, seed = 4)
  ref <- quiet_ntf(x, 3, seed = 2, max_iter = 40)
  expect_same_ntf(quiet_ntf(shards(split_rows(x, c(10L, 21L))), 3, seed = 2, max_iter = 40), ref, info = "matrix")
  # another seed, another fit
  other <- quiet_ntf(shards(split_rows(x, c(10L, 21L))), 3, seed = 3, max_iter = 40)
  expect_false(isTRUE(all.equal(other$objective, ref$objective)))
  # several starts (the best kept), a list start, a warm start
  ref <- quiet_ntf(X, 3, method = "mu", seed = 6, nrun = 3, max_iter = 30)
  fit <- quiet_ntf(shards(split_rows(X, c(5L))), 3, method = "mu", seed = 6, nrun = 3, max_iter = 30)
  expect_same_ntf(fit, ref, info = "nrun = 3")
  start <- lapply(dim(X), function(d) matrix(seq_len(d * 3) %% 7 + 1, d, 3))
  expect_same_ntf(quiet_ntf(shards(split_rows(X, c(5L))), 3, init = start, max_iter = 30),
                  quiet_ntf(X, 3, init = start, max_iter = 30), info = "list start")
  expect_same_ntf(quiet_ntf(shards(split_rows(X, c(5L))), 3, init = ref, max_iter = 10),
                  quiet_ntf(X, 3, init = ref, max_iter = 10), info = "warm start")
  # staged starts
  expect_same_ntf(quiet_ntf(shards(split_rows(X, c(5L))), 3, seed = 1, nrun = 3, short_iter = 4, short_keep = 1,
                            max_iter = 20),
                  quiet_ntf(X, 3, seed = 1, nrun = 3, short_iter = 4, short_keep = 1, max_iter = 20),
                  info = "staged")
})

test_that("shard files (.shard, chunked, .rds with and without the cache) give the in-memory fit; the callback too", {
  X <- ntff_array(c(13, 5, 4), seed = 6)
  sh <- write_shards(X, shard_tempdir(), n = 3)
  dir <- shard_tempdir()
  f <- file.path(dir, c("a.rds", "b.rds"))
  p <- split_rows(X, 6L)
  for (i in 1:2) saveRDS(p[[i]], f[i])
  for (m in c("hals", "mu")) {
    args <- list(method = m, seed = 2, max_iter = 40)
    ref <- do.call(quiet_ntf, c(list(X, 2), args))
    expect_same_ntf(do.call(quiet_ntf, c(list(sh, 2), args)), ref, info = paste(m, ".shard"))
    old <- options(aspectr.shard_chunk = 7)
    expect_same_ntf(do.call(quiet_ntf, c(list(sh, 2), args)), ref, info = paste(m, ".shard, chunks of 7"))
    options(old)
    expect_same_ntf(do.call(quiet_ntf, c(list(shards(f), 2), args)), ref, info = paste(m, ".rds"))
    old <- options(aspectr.shard_cache = FALSE)
    expect_same_ntf(do.call(quiet_ntf, c(list(shards(f), 2), args)), ref, info = paste(m, "no cache"))
    options(old)
  }
  # the callback sees the in-memory fit's objective and factors
  r <- expect_same_ntf_callback(sh, X, list(seed = 4, max_iter = 20, tol = 0))
  fit <- r$fit; ref <- r$ref
  expect_same_ntf(fit, ref, info = "stopped by the callback")
})

test_that("the first mode's factor written to files (factor_dir) is the in-memory fit's", {
  X <- ntff_array(c(12, 5, 4), seed = 8)
  expect_ntf_factor_dir(X, split_rows(X, c(5L, 9L)), list(method = "hals", seed = 2, max_iter = 25, tol = 0),
                        staged = list(method = "mu", seed = 4, nrun = 3, short_iter = 4, short_keep = 1, max_iter = 20))
})

test_that("Frobenius ntf() of shards on a PSOCK cluster equals the in-memory fit and leaves the workers clean", {
  skip_on_cran()
  X <- ntff_array(c(11, 5, 4), seed = 7)
  parts <- split_rows(X, c(4L, 8L))
  cl <- psock_cluster()
  on.exit(parallel::stopCluster(cl), add = TRUE)
  for (m in c("hals", "mu")) {
    args <- list(method = m, seed = 3, nrun = 2, max_iter = 30)
    expect_same_ntf(do.call(quiet_ntf, c(list(shards(parts), 2, cluster = cl), args)),
                    do.call(quiet_ntf, c(list(X, 2), args)), info = m)
  }
  stores <- function(cl) unlist(parallel::clusterEvalQ(cl, length(ls(asNamespace("aspectr")$shard_stores))))
  expect_identical(stores(cl), c(0L, 0L))
})

test_that("Frobenius ntf() of shards keeps the scale-equivariance of the in-memory fit, with a mask too", {
  X <- ntff_array(c(10, 4, 3), seed = 2)
  parts <- split_rows(X, 6L)
  a <- quiet_ntf(shards(parts), 2, seed = 1, max_iter = 30)
  b <- quiet_ntf(shards(lapply(parts, function(p) p * 2^40)), 2, seed = 1, max_iter = 30)
  expect_equal(b$factors, a$factors, tolerance = 1e-10)
  expect_equal(b$weights, a$weights * 2^40, tolerance = 1e-10)
  expect_equal(b$objective, a$objective * 2^80, tolerance = 1e-10)
  expect_equal(b$factors, quiet_ntf(X * 2^40, 2, seed = 1, max_iter = 30)$factors, tolerance = 1e-10)
  mask <- array(FALSE, dim(X))
  mask[c(1, 7), 2, 1:2] <- TRUE
  got <- quiet_ntf(shards(parts), 2, seed = 1, max_iter = 30, mask = mask)
  ref <- quiet_ntf(X, 2, seed = 1, max_iter = 30, mask = mask)
  expect_equal(got$factors, ref$factors, tolerance = 1e-10)
  expect_equal(got$objective, ref$objective, tolerance = 1e-10)
  expect_false(isTRUE(all.equal(got$objective, a$objective)))
  expect_error(ntf(shards(parts), 2, method = "cd"), class = "aspectr_error_input_argument")
})
