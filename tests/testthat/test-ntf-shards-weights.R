# ntf(loss = "kl", method = "mu" or "cd") and ntf(loss = "frobenius", method =
# "hals" or "mu") of data in shards() with missing cells, masks and
# weights: the same call gives the in-memory weighted fit (the weighted
# updates of solvers/cp_weighted.h run on the pieces: each shard updates
# its rows of the first mode, the other modes come from the added parts),
# in memory, from files and on a cluster.

# a 3-way array of counts, rows (mode 1) without empty slices
ntfsw_counts <- function(dims = c(13, 6, 5), seed = 1) {
  set.seed(seed)
  k <- 2
  A <- lapply(dims, function(d) matrix(stats::runif(d * k), d, k))
  m <- array(0, dims)
  for (r in seq_len(k)) m <- m + outer(outer(A[[1]][, r], A[[2]][, r]), A[[3]][, r])
  X <- array(stats::rpois(prod(dims), 4 * m), dims)
  X[, 1, 1] <- X[, 1, 1] + 1
  dimnames(X) <- list(paste0("r", seq_len(dims[1])), paste0("b", seq_len(dims[2])), paste0("c", seq_len(dims[3])))
  X
}

expect_same_wntf <- function(fit, ref, tol = 1e-10, info = NULL, method = "mu") {
  expect_same_fields(fit, ref, c("factors", "weights", "objective", "value", "initial", "run_values", "nnz"),
                     c("iterations", "converged", "weighting"), tol = tol, info = info)
  expect_equal(fit$total, ref$total, tolerance = 1e-12, info = info)
  expect_identical(fit$method, method)
}
quiet_ntf <- function(...) suppressMessages(ntf(...))

ntfsw_args <- function(X) {
  dims <- dim(X)
  set.seed(7)
  mask <- array(stats::runif(prod(dims)) < 0.15, dims)
  W <- array(stats::runif(prod(dims), 0.2, 2), dims)
  W[sample(prod(dims), 10)] <- 0
  obs <- array(X > 0 | stats::runif(prod(dims)) < 0.3, dims)
  ws <- as_sptensor(W * (stats::runif(prod(dims)) < 0.5))
  mw <- list(stats::runif(dims[1], 0.5, 2), NULL, c(1, 2, 0.5, 1, 3))
  list(mask = list(mask = mask), weights = list(weights = W), observed = list(observed = obs),
       sparse_weights = list(weights = ws), mode_weights = list(mode_weights = mw),
       all = list(mask = mask, weights = W, observed = obs, mode_weights = mw))
}

test_that("weighted KL ntf() of 1, 2 and 3 shards in memory equals the in-memory fit", {
  X <- ntfsw_counts()
  cases <- ntfsw_args(X)
  for (nm in names(cases)) {
    args <- c(list(loss = "kl", method = "mu", seed = 3, max_iter = 40, tol = 1e-9), cases[[nm]])
    ref <- do.call(quiet_ntf, c(list(X, 2), args))
    for (cuts in list(integer(0), 6L, c(4L, 9L))) {
      info <- paste(nm, "shards", length(cuts) + 1)
      fit <- do.call(quiet_ntf, c(list(shards(split_rows(X, cuts)), 2), args))
      expect_same_wntf(fit, ref, info = info)
      # the objective never rises
      expect_true(all(diff(c(fit$initial, fit$objective)) <= 1e-12 * abs(fit$initial)), info = info)
    }
  }
  # the default method on shards is coordinate descent, as in memory
  # (test-ntf-shards-weights-kcd.R); several starts, a list start
  args <- list(loss = "kl", seed = 5, nrun = 3, max_iter = 30, mask = cases$mask$mask)
  sh <- shards(split_rows(X, c(5L, 10L)))
  expect_same_wntf(do.call(quiet_ntf, c(list(sh, 3), args)), do.call(quiet_ntf, c(list(X, 3), args)),
                   method = "cd")
  expect_same_wntf(do.call(quiet_ntf, c(list(sh, 3), c(args, method = "mu"))),
                   do.call(quiet_ntf, c(list(X, 3), c(args, method = "mu"))))
  set.seed(2)
  st <- lapply(dim(X), function(d) matrix(stats::runif(d * 2, 0.2, 1), d, 2))
  args <- list(loss = "kl", method = "mu", init = st, max_iter = 15, tol = 0, weights = cases$weights$weights)
  expect_same_wntf(do.call(quiet_ntf, c(list(sh, 2), args)), do.call(quiet_ntf, c(list(X, 2), args)))
})

test_that("missing cells: the shards of the array with a mask equal the in-memory fit with NA", {
  X <- ntfsw_counts(seed = 2)
  set.seed(3)
  na <- sample(length(X), 25)
  Xna <- X; Xna[na] <- NA
  M <- array(FALSE, dim(X)); M[na] <- TRUE
  ref <- quiet_ntf(Xna, 2, loss = "kl", method = "mu", seed = 1, max_iter = 30)
  X0 <- X; X0[na] <- 0  # (the left-out cells' values play no part)
  fit <- quiet_ntf(shards(split_rows(X0, c(3L, 8L))), 2, loss = "kl", method = "mu", seed = 1, max_iter = 30,
                   mask = M)
  expect_equal(fit$factors, ref$factors, tolerance = 1e-10)
  expect_equal(fit$objective, ref$objective, tolerance = 1e-10)
  expect_equal(fit$weights, ref$weights, tolerance = 1e-10)
  expect_identical(fit$iterations, ref$iterations)
  expect_equal(fit$weighting$left_out, 25)
  # the imputation of the left-out cells is the in-memory fit's
  expect_equal(fitted(fit)[M], fitted(ref)[M], tolerance = 1e-10)
})

test_that("a mask of no cells: the in-memory weighted fit, and the unmasked shard fit's optimum", {
  X <- ntfsw_counts(seed = 4)
  sh <- shards(split_rows(X, 7L))
  none <- array(FALSE, dim(X))
  set.seed(6)
  st <- lapply(dim(X), function(d) matrix(stats::runif(d * 2, 0.2, 1), d, 2))
  a <- quiet_ntf(sh, 2, loss = "kl", method = "mu", init = st, mask = none, max_iter = 3000, tol = 1e-13)
  expect_same_wntf(a, quiet_ntf(X, 2, loss = "kl", method = "mu", init = st, mask = none, max_iter = 3000,
                                tol = 1e-13))
  expect_equal(a$weighting$left_out, 0)
  # (the unweighted fit updates every mode from one E-step, the weighted one
  # mode after mode: the same fixed point from the same start)
  b <- quiet_ntf(sh, 2, loss = "kl", method = "mu", init = st, max_iter = 3000, tol = 1e-13)
  expect_equal(a$value, b$value, tolerance = 1e-7)
  expect_equal(fitted(a), fitted(b), tolerance = 1e-4)
  expect_equal(a$weights, b$weights, tolerance = 1e-4)
})

test_that("weighted ntf() of shard files (.shard, other kinds) equals the in-memory fit; the callback too", {
  X <- ntfsw_counts(seed = 5)
  cases <- ntfsw_args(X)
  sh <- write_shards(X, shard_tempdir(), n = 3)
  dir <- shard_tempdir()
  f <- file.path(dir, c("a.rds", "b.rds"))
  p <- split_rows(X, 6L)
  for (i in 1:2) saveRDS(p[[i]], f[i])
  weighted_copies <- function() list.files(tempdir(), "^aspectr_weighted_")
  before <- weighted_copies()
  for (nm in c("mask", "all")) {
    args <- c(list(loss = "kl", method = "mu", seed = 2, max_iter = 30), cases[[nm]])
    ref <- do.call(quiet_ntf, c(list(X, 2), args))
    # (streamed: each shard's weighted cells in a .shard file of their own,
    # read a chunk at a time)
    expect_same_wntf(do.call(quiet_ntf, c(list(sh, 2), args)), ref, info = paste(nm, ".shard"))
    old <- options(aspectr.shard_chunk = 7)
    expect_same_wntf(do.call(quiet_ntf, c(list(sh, 2), args)), ref, info = paste(nm, ".shard, chunks of 7"))
    options(old)
    expect_identical(weighted_copies(), before)
    expect_same_wntf(do.call(quiet_ntf, c(list(shards(f), 2), args)), ref, info = paste(nm, ".rds"))
    old <- options(aspectr.shard_cache = FALSE)
    expect_same_wntf(do.call(quiet_ntf, c(list(shards(f), 2), args)), ref, info = paste(nm, "no cache"))
    options(old)
  }
  # the callback sees the in-memory fit's objective and factors
  expect_same_ntf_callback(sh, X, list(loss = "kl", method = "mu", seed = 4, max_iter = 20, tol = 0,
                                       mask = cases$mask$mask))
})

test_that("the first mode's factor written to files (factor_dir) is the in-memory fit's", {
  X <- ntfsw_counts(seed = 8)
  cases <- ntfsw_args(X)
  expect_ntf_factor_dir(X, split_rows(X, c(5L, 9L)),
                        c(list(loss = "kl", method = "mu", seed = 2, max_iter = 25, tol = 0), cases$all),
                        staged = c(list(loss = "kl", method = "mu", seed = 4, nrun = 3, short_iter = 4, short_keep = 1,
                                        max_iter = 20), cases$mask))
})

test_that("weighted ntf() of shards on a PSOCK and a mirai cluster equals the in-memory fit", {
  skip_on_cran()
  X <- ntfsw_counts(seed = 6)
  cases <- ntfsw_args(X)
  parts <- split_rows(X, c(4L, 9L))
  cl <- psock_cluster()
  on.exit(parallel::stopCluster(cl), add = TRUE)
  for (nm in c("mask", "all")) {
    args <- c(list(loss = "kl", method = "mu", seed = 3, nrun = 2, max_iter = 30), cases[[nm]])
    expect_same_wntf(do.call(quiet_ntf, c(list(shards(parts), 2, cluster = cl), args)),
                     do.call(quiet_ntf, c(list(X, 2), args)), info = nm)
  }
  stores <- function(cl) unlist(parallel::clusterEvalQ(cl, length(ls(asNamespace("aspectr")$shard_stores))))
  expect_identical(stores(cl), c(0L, 0L))
  skip_if_not_installed("mirai")
  cm <- mirai::make_cluster(2)
  on.exit(parallel::stopCluster(cm), add = TRUE)
  set_worker_libs(cm)
  args <- c(list(loss = "kl", method = "mu", seed = 5, max_iter = 25), cases$all)
  expect_same_wntf(do.call(quiet_ntf, c(list(shards(parts), 2, cluster = cm), args)),
                   do.call(quiet_ntf, c(list(X, 2), args)))
})

test_that("random splits, shapes, masks and weights give the in-memory weighted fit (property)", {
  n_cases <- prop_n_cases(6)
  for (i in seq_len(n_cases)) {
    prop_with_seed(940000L + i, {
      N <- sample(2:4, 1)
      dims <- c(sample(4:20, 1), sample(2:6, N - 1, replace = TRUE))
      k <- sample(1:3, 1)
      X <- array(stats::rpois(prod(dims), stats::runif(1, 0.5, 4)), dims) * stats::runif(1, 1e-3, 1e3)
      X[cbind(seq_len(dims[1]), matrix(1L, dims[1], N - 1))] <- 1
      cuts <- sort(sample(dims[1] - 1, sample(0:min(3, dims[1] - 1), 1)))
      mask <- array(stats::runif(prod(dims)) < stats::runif(1, 0, 0.3), dims)
      mask[cbind(seq_len(dims[1]), matrix(1L, dims[1], N - 1))] <- FALSE
      W <- if (stats::runif(1) < 0.5) array(stats::runif(prod(dims), 0.2, 3), dims)
      mw <- lapply(dims, function(d) if (stats::runif(1) < 0.5) stats::runif(d, 0.2, 3))
      args <- list(loss = "kl", method = "mu", seed = i, max_iter = 30, mask = mask, weights = W,
                   mode_weights = if (any(!vapply(mw, is.null, logical(1)))) mw)
      ref <- do.call(quiet_ntf, c(list(X, k), args))
      fit <- do.call(quiet_ntf, c(list(shards(split_rows(X, cuts)), k), args))
      info <- paste("dims", paste(dims, collapse = "x"), "k", k, "cuts", paste(cuts, collapse = ","))
      expect_same_wntf(fit, ref, tol = 1e-9, info = info)
    })
  }
})

test_that("weighted ntf() of shards checks its weights and refuses what it cannot do", {
  X <- ntfsw_counts()
  sh <- shards(split_rows(X, 6L))
  expect_error(ntf(sh, 2, loss = "kl", mask = array(TRUE, c(3, 3, 3))), class = "aspectr_error_input_value",
               regexp = "mask")
  expect_error(ntf(sh, 2, loss = "kl", weights = array(-1, dim(X))), class = "aspectr_error_input_value",
               regexp = "weights")
  expect_error(ntf(sh, 2, loss = "kl", weights = array(0, dim(X))), class = "aspectr_error_input_value",
               regexp = "nothing to fit")
  # (KL coordinate descent runs with weights on shards too:
  # test-ntf-shards-weights-kcd.R)
})

test_that("weighted Frobenius ntf() (HALS, multiplicative updates) of shards equals the in-memory fit", {
  X <- ntfsw_counts(seed = 9)
  cases <- ntfsw_args(X)
  parts <- split_rows(X, c(4L, 9L))
  f <- file.path(shard_tempdir(), c("a.rds", "b.rds", "c.rds"))
  for (i in 1:3) saveRDS(parts[[i]], f[i])
  backends <- list(one = shards(list(X)), memory = shards(parts), shard_files = write_shards(parts, shard_tempdir()),
                   rds_files = shards(f))
  old <- options(aspectr.shard_chunk = 7)  # .shard files read 7 cells at a time
  on.exit(options(old), add = TRUE)
  for (method in c("hals", "mu")) {
    for (nm in names(cases)) {
      args <- c(list(loss = "frobenius", method = method, seed = 3, max_iter = 30, tol = 0), cases[[nm]])
      ref <- do.call(quiet_ntf, c(list(X, 2), args))
      # the objective never rises
      expect_true(all(diff(c(ref$initial, ref$objective)) <= 1e-12 * abs(ref$initial)), info = paste(method, nm))
      for (b in names(backends)) {
        fit <- do.call(quiet_ntf, c(list(backends[[b]], 2), args))
        expect_same_wntf(fit, ref, info = paste(method, nm, b), method = method)
      }
    }
  }
  # a matrix and 4-way data; a fit that stops by its tolerance
  M <- X[, , 1]
  Y <- array(X, c(dim(X), 1))[, , , c(1, 1)] * rep(c(1, 2), each = length(X))
  for (method in c("hals", "mu")) {
    mm <- cases$mask$mask[, , 1]
    args <- list(loss = "frobenius", method = method, seed = 2, max_iter = 25, tol = 0, mask = mm)
    expect_same_wntf(do.call(quiet_ntf, c(list(shards(split_rows(M, 6L)), 2), args)),
                     do.call(quiet_ntf, c(list(M, 2), args)), info = paste(method, "matrix"), method = method)
    args$mask <- array(cases$mask$mask, dim(Y))
    expect_same_wntf(do.call(quiet_ntf, c(list(shards(split_rows(Y, c(3L, 7L))), 2), args)),
                     do.call(quiet_ntf, c(list(Y, 2), args)), info = paste(method, "4-way"), method = method)
    args <- c(list(loss = "frobenius", method = method, seed = 4, max_iter = 2000, tol = 1e-6), cases$all)
    ref <- do.call(quiet_ntf, c(list(X, 2), args))
    expect_true(ref$converged)
    expect_same_wntf(do.call(quiet_ntf, c(list(backends$shard_files, 2), args)), ref, info = paste(method, "tol"),
                     method = method)
  }
  # the default method with weights on shards is the in-memory one, HALS
  expect_identical(quiet_ntf(backends$memory, 2, seed = 1, max_iter = 3, mask = cases$mask$mask)$method, "hals")
  skip_on_cran()
  cl <- psock_cluster()
  on.exit(parallel::stopCluster(cl), add = TRUE)
  for (method in c("hals", "mu")) {
    args <- c(list(loss = "frobenius", method = method, seed = 3, nrun = 2, max_iter = 20), cases$all)
    ref <- do.call(quiet_ntf, c(list(X, 2), args))
    for (b in c("memory", "shard_files")) {
      expect_same_wntf(do.call(quiet_ntf, c(list(backends[[b]], 2, cluster = cl), args)), ref,
                       info = paste(method, b, "cluster"), method = method)
    }
  }
})

test_that("weighted Frobenius ntf() of shards: weight 2 is a row twice, a masked cell plays no part", {
  X <- ntfsw_counts(seed = 10)
  dims <- dim(X)
  set.seed(4)
  st <- lapply(dims, function(d) matrix(stats::runif(d * 2, 0.2, 1), d, 2))
  mask <- array(FALSE, dims); mask[c(2, 9), 3, c(1, 4)] <- TRUE
  for (method in c("hals", "mu")) {
    # row 5 of the first mode with weight 2: the fit of the data with row 5 twice
    mw <- list(replace(rep(1, dims[1]), 5, 2), NULL, NULL)
    a <- quiet_ntf(shards(split_rows(X, 6L)), 2, loss = "frobenius", method = method, init = st, max_iter = 20,
                   tol = 0, mode_weights = mw)
    X2 <- array(0, c(dims[1] + 1, dims[-1]))
    X2[seq_len(dims[1]), , ] <- X
    X2[dims[1] + 1, , ] <- X[5, , ]
    st2 <- st
    st2[[1]] <- rbind(st[[1]], st[[1]][5, ])
    # (all weights 1: the weighted rule, whose updates go row by row)
    b <- quiet_ntf(shards(split_rows(X2, 6L)), 2, loss = "frobenius", method = method, init = st2, max_iter = 20,
                   tol = 0, mode_weights = list(rep(1, dims[1] + 1), NULL, NULL))
    expect_equal(a$objective, b$objective, tolerance = 1e-9, info = method)
    expect_equal(fitted(a), fitted(b)[seq_len(dims[1]), , , drop = FALSE], tolerance = 1e-9, info = method,
                 ignore_attr = TRUE)
    # a masked cell's value changes nothing
    Y <- X
    Y[mask] <- Y[mask] + c(3, 1, 7, 2)
    f1 <- quiet_ntf(shards(split_rows(X, 6L)), 2, loss = "frobenius", method = method, init = st, max_iter = 20,
                    tol = 0, mask = mask)
    f2 <- quiet_ntf(shards(split_rows(Y, 6L)), 2, loss = "frobenius", method = method, init = st, max_iter = 20,
                    tol = 0, mask = mask)
    expect_equal(f1$factors, f2$factors, tolerance = 1e-10, info = method)
    expect_equal(f1$objective, f2$objective, tolerance = 1e-10, info = method)
  }
})
