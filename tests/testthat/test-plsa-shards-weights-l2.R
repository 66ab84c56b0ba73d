# plsa(loss = "l2") of data in shards() with missing cells, masks and
# weights: the weighted L2 block updates run on the pieces (each shard its
# cells, their weights and its rows of the documents' factor; the
# documents' columns' thresholds found from sums over the shards), so the
# same call gives the in-memory weighted fit, in memory, from files and on
# a cluster.

expect_same_wl2 <- function(fit, ref, tol = 1e-10, info = NULL) {
  expect_identical(length(fit$factors), length(ref$factors), info = info)
  for (n in seq_along(ref$factors)) {
    expect_equal(unname(as.matrix(fit$factors[[n]])), unname(ref$factors[[n]]), tolerance = tol,
                 info = paste(info, "factor", n))
  }
  expect_equal(unname(fit$lambda), unname(ref$lambda), tolerance = tol, info = info)
  expect_equal(fit$objective, ref$objective, tolerance = tol, info = info)
  expect_equal(fit$initial, ref$initial, tolerance = tol, info = info)
  expect_equal(fit$value, ref$value, tolerance = tol, info = info)
  expect_equal(fit$kl, ref$kl, tolerance = tol, info = info)
  expect_equal(fit$total, ref$total, tolerance = tol, info = info)
  expect_identical(fit$iterations, ref$iterations, info = info)
  expect_identical(fit$converged, ref$converged, info = info)
  expect_identical(fit$loss, "l2", info = info)
  expect_identical(fit$method, ref$method, info = info)
  expect_identical(fit$normalize, ref$normalize, info = info)
  expect_identical(fit$weighting$type, ref$weighting$type, info = info)
  expect_identical(fit$weighting$base, ref$weighting$base, info = info)
}

wl2_mask <- function(x, frac, seed) {
  set.seed(seed)
  cells <- sample(length(x), round(frac * length(x)))
  Matrix::sparseMatrix(i = (cells - 1) %% nrow(x) + 1, j = (cells - 1) %/% nrow(x) + 1, x = TRUE,
                       dims = dim(x), dimnames = dimnames(x))
}

test_that("masked and row/column weighted L2 fits of 1, 2 and 4 shards equal the in-memory fit", {
  x <- shard_counts(30, 14, seed = 3)
  mask <- wl2_mask(x, 0.15, 1)
  set.seed(2)
  rw <- stats::runif(nrow(x), 0.5, 2); cw <- stats::runif(ncol(x), 0.5, 2)
  for (normalize in c(TRUE, FALSE)) {
    args <- list(loss = "l2", normalize = normalize, seed = 2, max_iter = 300, tol = 1e-5, mask = mask,
                 row_weights = rw, col_weights = cw)
    ref <- do.call(plsa, c(list(x, 3), args))
    expect_lt(ref$iterations, 300L)  # (converged: the stopping rule is compared too)
    # (the documents' columns are sparse: their thresholds take more than
    # one round of sums over the shards)
    expect_true(mean(ref$factors[[1]] == 0) > 0.05)
    for (cuts in list(integer(0), 13L, c(1L, 8L, 19L))) {
      info <- paste("normalize", normalize, "shards", length(cuts) + 1)
      fit <- do.call(plsa, c(list(shards(split_rows(x, cuts)), 3), args))
      expect_same_wl2(fit, ref, info = info)
      expect_identical(fit$shards, length(cuts) + 1L)
      # every block step is an exact minimization: the trace never rises
      expect_true(all(diff(fit$objective) <= 1e-12 * abs(fit$objective[-1])), info = info)
    }
  }
})

test_that("observed cells, cell weights, NA cells and a shard of rows left out give the in-memory weighted L2 fit", {
  x <- shard_counts(26, 13, seed = 8)
  set.seed(4)
  W <- matrix(stats::runif(length(x), 0.2, 3), nrow(x))
  obs <- wl2_mask(x, 0.6, 3)
  for (case in list(list(weights = W), list(observed = obs), list(weights = W, mask = wl2_mask(x, 0.1, 9)))) {
    args <- c(list(loss = "l2", seed = 3, max_iter = 60, tol = 0), case)
    ref <- do.call(plsa, c(list(x, 3), args))
    fit <- do.call(plsa, c(list(shards(split_rows(x, c(9L, 17L))), 3), args))
    expect_same_wl2(fit, ref, info = paste(names(case), collapse = "+"))
  }
  # NA cells in memory are the same cells masked on shards
  na <- sample(length(x), 30)
  xn <- x; xn[na] <- NA
  x0 <- x; x0[na] <- 0
  mask <- Matrix::sparseMatrix(i = (na - 1) %% nrow(x) + 1, j = (na - 1) %/% nrow(x) + 1, dims = dim(x))
  ref <- plsa(xn, 3, loss = "l2", seed = 4, max_iter = 40, tol = 0)
  expect_identical(ref$weighting$type, "missing")
  fit <- plsa(shards(split_rows(x0, c(10L, 21L))), 3, loss = "l2", seed = 4, max_iter = 40, tol = 0, mask = mask)
  for (n in 1:2) expect_equal(unname(fit$factors[[n]]), unname(ref$factors[[n]]), tolerance = 1e-10)
  expect_equal(fit$objective, ref$objective, tolerance = 1e-10)
  expect_identical(fit$iterations, ref$iterations)
  # the second shard's rows all have weight 0: they take no part in the
  # fit and share the mass the others leave, as in memory
  rw <- rep(1, nrow(x)); rw[11:21] <- 0
  ref <- plsa(x, 3, loss = "l2", seed = 4, max_iter = 40, tol = 0, row_weights = rw)
  fit <- plsa(shards(split_rows(x, c(10L, 21L))), 3, loss = "l2", seed = 4, max_iter = 40, tol = 0,
              row_weights = rw)
  expect_same_wl2(fit, ref)
  expect_equal(unname(colSums(fit$factors[[1]])), rep(1, 3), tolerance = 1e-12)
})

test_that("a masked cell's value plays no part in the weighted L2 fit of shards", {
  x <- shard_counts(24, 11, seed = 12)
  mask <- wl2_mask(x, 0.12, 4)
  y <- x
  y[as.matrix(Matrix::summary(mask)[, 1:2])] <- 1000  # (the masked cells changed)
  fit <- function(d) plsa(shards(split_rows(d, 9L)), 3, loss = "l2", seed = 6, max_iter = 30, tol = 0, mask = mask)
  a <- fit(x)
  b <- fit(y)
  # (the total counts only the cells that count; with the masked cells' values
  # changed so is nothing else)
  expect_equal(unname(a$factors), unname(b$factors), tolerance = 1e-12)
  expect_equal(a$objective, b$objective, tolerance = 1e-12)
  expect_equal(a$total, b$total, tolerance = 1e-12)
  # while an unmasked fit of the changed data differs
  d <- plsa(shards(split_rows(y, 9L)), 3, loss = "l2", seed = 6, max_iter = 30, tol = 0)
  expect_gt(max(abs(d$factors[[2]] - a$factors[[2]])), 1e-3)
})

test_that("N-way data in shards with masks and weights give the in-memory weighted L2 fit", {
  set.seed(3)
  y <- array(stats::rpois(12 * 5 * 4, 2), c(12, 5, 4))
  y[1, 1, 1] <- 3
  M <- array(stats::runif(length(y)) < 0.1, dim(y))
  W <- array(stats::runif(length(y), 0.2, 2), dim(y))
  mw <- list(NULL, c(1, 2, 1, 0.5, 1), NULL)
  cases <- list(list(mask = M), list(mask = M, mode_weights = mw), list(weights = W, normalize = FALSE))
  for (i in seq_along(cases)) {
    args <- c(list(loss = "l2", seed = 2, max_iter = 200, tol = 1e-5), cases[[i]])
    ref <- do.call(plsa, c(list(y, 3), args))
    for (cuts in list(5L, c(3L, 9L))) {
      info <- paste("case", i, "shards", length(cuts) + 1)
      fit <- do.call(plsa, c(list(shards(split_rows(y, cuts)), 3), args))
      expect_same_wl2(fit, ref, info = info)
      expect_true(all(diff(fit$objective) <= 1e-12 * abs(fit$objective[-1])), info = info)
    }
  }
  # from files, out of core
  fit <- do.call(plsa, c(list(write_shards(split_rows(y, 6L), shard_tempdir()), 3), args))
  expect_same_wl2(fit, ref, info = "files")
})

test_that("weighted L2 fits of .shard files (read a few cells at a time), .rds files and a PSOCK cluster equal the in-memory fit", {
  x <- shard_counts(31, 13, seed = 7)
  mask <- wl2_mask(x, 0.1, 5)
  rw <- rep(c(1, 2, 0.5), length.out = nrow(x))
  args <- list(loss = "l2", seed = 1, max_iter = 30, tol = 0, mask = mask, row_weights = rw)
  ref <- do.call(plsa, c(list(x, 3), args))
  sh <- write_shards(x, shard_tempdir(), n = 3)
  expect_same_wl2(do.call(plsa, c(list(sh, 3), args)), ref, info = ".shard files")
  old <- options(aspectr.shard_chunk = 7)  # .shard files read 7 cells at a time
  expect_same_wl2(do.call(plsa, c(list(sh, 3), args)), ref, info = ".shard files, chunks of 7 cells")
  options(old)
  f <- file.path(shard_tempdir(), c("a.rds", "b.rds"))
  p <- split_rows(x, 15L)
  for (i in 1:2) saveRDS(p[[i]], f[i])
  expect_same_wl2(do.call(plsa, c(list(shards(f), 3), args)), ref, info = ".rds files")
  skip_on_cran()
  cl <- psock_cluster()
  on.exit(parallel::stopCluster(cl), add = TRUE)
  expect_same_wl2(do.call(plsa, c(list(shards(split_rows(x, c(7L, 20L))), 3, cluster = cl), args)), ref,
                  info = "PSOCK")
  expect_same_wl2(do.call(plsa, c(list(sh, 3, cluster = cl, normalize = FALSE), args)),
                  do.call(plsa, c(list(x, 3, normalize = FALSE), args)), info = "PSOCK, files, free weights")
})
