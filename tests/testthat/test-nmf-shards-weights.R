# nmf() of data in shards() with missing cells, masks and weights: the same
# call gives the in-memory fit (the weighted rule of nmf/weighted.h runs on
# the pieces: each shard its rows' weights and weighted data, the columns'
# problems from the added parts), in memory, from files and on a cluster.

expect_same_wnmf <- function(fit, ref, tol = 1e-10, info = NULL) {
  expect_equal(fit$W, ref$W, tolerance = tol, info = info)
  expect_equal(fit$H, ref$H, tolerance = tol, info = info)
  expect_equal(fit$objective, ref$objective, tolerance = tol, info = info)
  expect_equal(fit$value, ref$value, tolerance = tol, info = info)
  expect_equal(fit$divergence, ref$divergence, tolerance = tol, info = info)
  expect_equal(fit$rel_error, ref$rel_error, tolerance = tol, info = info)
  expect_equal(fit$weights, ref$weights, tolerance = tol, info = info)
  expect_identical(fit$iterations, ref$iterations, info = info)
  expect_identical(fit$converged, ref$converged, info = info)
  for (f in c("total", "row_totals", "neg_entropy", "scale", "count_data")) {
    expect_equal(fit[[f]], ref[[f]], tolerance = 1e-12, info = paste(info, f))
  }
  expect_equal(fit$weighting$mass, ref$weighting$mass, tolerance = tol, info = info)
  expect_identical(fit$weighting$type, ref$weighting$type, info = info)
  expect_identical(fit$weighting$base, ref$weighting$base, info = info)
  expect_equal(fit$weighting$left_out, ref$weighting$left_out, info = info)
  expect_equal(fit$weighting$observed, ref$weighting$observed, info = info)
}
quiet_nmf <- function(...) suppressMessages(nmf(...))

# a mask of about `frac` of the cells (an lgCMatrix), from the seed
random_mask <- function(x, frac, seed) {
  set.seed(seed)
  cells <- sample(length(x), round(frac * length(x)))
  Matrix::sparseMatrix(i = (cells - 1) %% nrow(x) + 1, j = (cells - 1) %/% nrow(x) + 1, x = TRUE,
                       dims = dim(x), dimnames = dimnames(x))
}

methods_grid <- list(c("frobenius", "hals"), c("frobenius", "anls"), c("frobenius", "mu"), c("kl", "cd"),
                     c("kl", "mu"))

test_that("masked and weighted nmf() of 1, 2 and 3 shards equals the in-memory fit for every method", {
  x <- shard_counts(40, 25, seed = 3) * 3
  mask <- random_mask(x, 0.15, 1)
  set.seed(2)
  rw <- stats::runif(nrow(x), 0.5, 2); cw <- stats::runif(ncol(x), 0.5, 2)
  splits <- list(integer(0), 17L, c(9L, 26L))
  for (cs in methods_grid) {
    for (pen in list(c(0, 0), c(0.05, 0.1))) {
      args <- list(loss = cs[1], method = cs[2], init = "random", seed = 2, max_iter = 60, tol = 1e-7,
                   L1 = pen, L2 = rev(pen), mask = mask, row_weights = rw, col_weights = cw)
      ref <- do.call(quiet_nmf, c(list(x, 3), args))
      for (cuts in splits) {
        info <- paste(cs[1], cs[2], "penalty", pen[1], "shards", length(cuts) + 1)
        fit <- do.call(quiet_nmf, c(list(shards(split_rows(x, cuts)), 3), args))
        expect_same_wnmf(fit, ref, info = info)
        expect_identical(fit$shards, length(cuts) + 1L)
      }
    }
  }
})

test_that("observed cells, sparse and dense cell weights over shards equal the in-memory fit", {
  x <- shard_counts(36, 22, seed = 5)
  sh <- shards(split_rows(x, c(11L, 20L)))
  obs <- methods::as(x != 0, "lMatrix") | random_mask(x, 0.2, 3)
  set.seed(4)
  wdense <- matrix(stats::runif(length(x), 0, 2), nrow(x), ncol(x))
  wdense[sample(length(x), 50)] <- 0
  wsparse <- Matrix::drop0(Matrix::Matrix(wdense * (stats::runif(length(x)) < 0.4), sparse = TRUE))
  W0 <- matrix(seq(0.1, 2, length.out = 36 * 2), 36, 2)
  H0 <- matrix(seq(2, 0.2, length.out = 2 * 22), 2, 22)
  for (cs in methods_grid) {
    for (wa in list(list(observed = obs), list(weights = wdense), list(weights = wsparse),
                    list(weights = wdense, observed = obs))) {
      args <- c(list(loss = cs[1], method = cs[2], init = list(W = W0, H = H0), max_iter = 25, tol = 0), wa)
      info <- paste(cs[1], cs[2], paste(names(wa), collapse = "+"))
      expect_same_wnmf(do.call(quiet_nmf, c(list(sh, 2), args)), do.call(quiet_nmf, c(list(x, 2), args)),
                       info = info)
    }
  }
})

test_that("weighted fits of shard files (out of core) equal the in-memory fit; restarts and the callback too", {
  x <- shard_counts(41, 23, seed = 7)
  mask <- random_mask(x, 0.1, 5)
  rw <- rep(c(1, 2, 0.5), length.out = nrow(x))
  sh <- write_shards(x, shard_tempdir(), n = 3)
  dir <- shard_tempdir()
  f <- file.path(dir, c("a.rds", "b.rds"))
  p <- split_rows(x, 20L)
  for (i in 1:2) saveRDS(p[[i]], f[i])
  weighted_copies <- function() list.files(tempdir(), "^aspectr_weighted_")
  before <- weighted_copies()
  for (cs in methods_grid) {
    args <- list(loss = cs[1], method = cs[2], init = "random", seed = 1, max_iter = 40, mask = mask,
                 row_weights = rw)
    ref <- do.call(quiet_nmf, c(list(x, 3), args))
    info <- paste(cs, collapse = " ")
    # (streamed: each shard's weighted cells in a .shard file of their own)
    expect_same_wnmf(do.call(quiet_nmf, c(list(sh, 3), args)), ref, info = info)
    expect_same_wnmf(do.call(quiet_nmf, c(list(shards(f), 3), args)), ref, info = info)
    # (other files without the cache: read whole, one at a time, for every request)
    old <- options(aspectr.shard_cache = FALSE)
    expect_same_wnmf(do.call(quiet_nmf, c(list(shards(f), 3), args)), ref, info = paste(info, "no cache"))
    options(old)
    expect_identical(weighted_copies(), before)
  }
  # several starts, staged; the callback sees the same objective and factors
  for (cs in list(c("frobenius", "hals"), c("kl", "cd"))) {
    args <- list(loss = cs[1], method = cs[2], init = "random", seed = 9, nrun = 3, short_iter = 5,
                 short_keep = 1, max_iter = 30, mask = mask)
    fit <- do.call(quiet_nmf, c(list(sh, 3), args))
    ref <- do.call(quiet_nmf, c(list(x, 3), args))
    expect_same_wnmf(fit, ref)
    expect_equal(fit$run_values, ref$run_values, tolerance = 1e-10)
    seen <- list(); seen_ref <- list()
    fit <- quiet_nmf(sh, 2, loss = cs[1], method = cs[2], init = "random", seed = 4, max_iter = 20, tol = 0,
                     mask = mask, callback = function(it, obj, fac) { seen[[it]] <<- list(obj, fac); it < 4 })
    ref <- quiet_nmf(x, 2, loss = cs[1], method = cs[2], init = "random", seed = 4, max_iter = 20, tol = 0,
                     mask = mask, callback = function(it, obj, fac) { seen_ref[[it]] <<- list(obj, fac); it < 4 })
    expect_true(fit$stopped)
    expect_length(seen, 4)
    for (i in 1:4) {
      expect_equal(seen[[i]][[1]], seen_ref[[i]][[1]], tolerance = 1e-10)
      expect_equal(seen[[i]][[2]], seen_ref[[i]][[2]], tolerance = 1e-10)
    }
  }
  # imputation and augment() of the sharded fit are those of the in-memory one
  fit <- quiet_nmf(sh, 3, init = "random", seed = 1, max_iter = 30, mask = mask)
  ref <- quiet_nmf(x, 3, init = "random", seed = 1, max_iter = 30, mask = mask)
  expect_equal(fitted(fit), fitted(ref), tolerance = 1e-10)
  expect_equal(augment(fit), augment(ref), tolerance = 1e-10)
})

test_that("weighted nmf() of shards on a PSOCK and a mirai cluster equals the in-memory fit", {
  skip_on_cran()
  x <- shard_counts(45, 24, seed = 11)
  parts <- split_rows(x, c(12L, 30L))
  mask <- random_mask(x, 0.12, 7)
  cw <- rep(c(1, 3), length.out = ncol(x))
  cl <- psock_cluster()
  on.exit(parallel::stopCluster(cl), add = TRUE)
  for (cs in methods_grid) {
    args <- list(loss = cs[1], method = cs[2], init = "random", seed = 3, nrun = 2, max_iter = 30, mask = mask,
                 col_weights = cw)
    expect_same_wnmf(do.call(quiet_nmf, c(list(shards(parts), 3, cluster = cl), args)),
                     do.call(quiet_nmf, c(list(x, 3), args)), info = paste(cs, collapse = " "))
  }
  stores <- function(cl) unlist(parallel::clusterEvalQ(cl, length(ls(asNamespace("aspectr")$shard_stores))))
  expect_identical(stores(cl), c(0L, 0L))
  skip_if_not_installed("mirai")
  cm <- mirai::make_cluster(2)
  on.exit(parallel::stopCluster(cm), add = TRUE)
  set_worker_libs(cm)
  for (cs in list(c("frobenius", "hals"), c("kl", "cd"))) {
    args <- list(loss = cs[1], method = cs[2], init = "random", seed = 5, max_iter = 25, mask = mask)
    expect_same_wnmf(do.call(quiet_nmf, c(list(shards(parts), 3, cluster = cm), args)),
                     do.call(quiet_nmf, c(list(x, 3), args)))
  }
})

test_that("random splits, masks and weights give the in-memory weighted fit (property)", {
  n_cases <- prop_n_cases(6)
  for (i in seq_len(n_cases)) {
    prop_with_seed(930000L + i, {
      m <- sample(8:40, 1); n <- sample(5:20, 1); k <- sample(1:min(4, m, n), 1)
      x <- matrix(stats::rpois(m * n, stats::runif(1, 0.3, 4)), m, n) * stats::runif(1, 1e-3, 1e3)
      x[cbind(seq_len(m), sample(n, m, replace = TRUE))] <- 1
      cuts <- sort(sample(m - 1, sample(0:min(4, m - 1), 1)))
      cs <- methods_grid[[sample(length(methods_grid), 1)]]
      mask <- matrix(stats::runif(m * n) < stats::runif(1, 0, 0.3), m, n)
      mask[cbind(seq_len(m), sample(n, m, replace = TRUE))] <- FALSE
      pen <- if (stats::runif(1) < 0.5) c(0, 0) else stats::runif(2, 0, 0.1)
      args <- list(loss = cs[1], method = cs[2], init = "random", seed = i, max_iter = 40, L1 = pen, mask = mask,
                   row_weights = stats::runif(m, 0.2, 3))
      ref <- do.call(quiet_nmf, c(list(x, k), args))
      fit <- do.call(quiet_nmf, c(list(shards(split_rows(x, cuts)), k), args))
      expect_same_wnmf(fit, ref, tol = 1e-9, info = paste(cs, collapse = " "))
    })
  }
})

test_that("weighted nmf() of shards checks its weights and refuses what it cannot do", {
  x <- shard_counts()
  sh <- shards(split_rows(x, 20L))
  expect_error(nmf(sh, 2, mask = matrix(TRUE, 3, 3)), class = "aspectr_error_input_value", regexp = "mask")
  expect_error(nmf(sh, 2, row_weights = rep(-1, nrow(x))), class = "aspectr_error_input_value",
               regexp = "row_weights")
  expect_error(nmf(sh, 2, method = "als", mask = x > 5), class = "aspectr_error_input_argument", regexp = "als")
  expect_error(nmf(sh, 2, accelerate = TRUE, mask = x > 5), class = "aspectr_error_input_argument",
               regexp = "accelerate")
  expect_error(nmf(sh, 2, weights = matrix(0, nrow(x), ncol(x))), class = "aspectr_error_input_value",
               regexp = "nothing to fit")
})

test_that("weighted beta-divergence updates of shards equal the in-memory fit in memory, files and on a cluster", {
  x <- shard_counts(30, 14, seed = 21)
  parts <- split_rows(x, c(9L, 20L))
  rds <- file.path(shard_tempdir(), paste0("p", 1:3, ".rds"))
  for (i in 1:3) saveRDS(parts[[i]], rds[i])
  backends <- list(memory = shards(parts), one = shards(list(x)), shard_files = write_shards(parts, shard_tempdir()),
                   rds_files = shards(rds))
  old <- options(aspectr.shard_chunk = 7)  # .shard files read 7 cells at a time
  on.exit(options(old), add = TRUE)
  mask <- random_mask(x, 0.15, 4)
  set.seed(5)
  rw <- stats::runif(nrow(x), 0.5, 2); cw <- stats::runif(ncol(x), 0.5, 2)
  wdense <- matrix(stats::runif(length(x), 0, 2), nrow(x), ncol(x))
  wdense[sample(length(x), 40)] <- 0
  # (beta = 0: the zeros of x raised to eps; beta = 3: the exponent
  # 1 / (beta - 1))
  for (b in c(0, 0.5, 1.5, 3)) {
    for (wa in list(list(mask = mask, row_weights = rw, col_weights = cw), list(weights = wdense))) {
      args <- c(list(loss = "beta", beta = b, init = "random", seed = 4, max_iter = 25, tol = 0,
                     L1 = if (b == 1.5) c(0.05, 0.1) else 0), wa)
      ref <- do.call(quiet_nmf, c(list(x, 3), args))
      # the objective never rises
      expect_true(all(diff(c(ref$initial, ref$objective)) <= 1e-12 * ref$initial), info = b)
      for (nm in names(backends)) {
        info <- paste("beta", b, paste(names(wa), collapse = "+"), nm)
        fit <- do.call(quiet_nmf, c(list(backends[[nm]], 3), args))
        expect_same_wnmf(fit, ref, info = info)
        expect_equal(fit$initial, ref$initial, tolerance = 1e-10, info = info)
      }
    }
  }
  # shards kept in memory in this process: every request of the iterations
  # runs in the core with each shard's weights (kept for the fit), only the
  # final divergence's goes through R (once per shard and start, 3 x 2);
  # shard files read in this process, and a fit whose rows' factor is
  # written to files, go through R (each streamed shard's weights made for
  # the request alone): the same fit
  seen <- new.env()
  seen$calls <- 0L
  ns <- asNamespace("aspectr")
  suppressMessages(trace("cpp_nmf_piece_run", tracer = bquote(assign("calls", get("calls", envir = .(seen)) + 1L,
                                                                     envir = .(seen))), print = FALSE, where = ns))
  on.exit(suppressMessages(untrace("cpp_nmf_piece_run", where = ns)), add = TRUE)
  args <- list(loss = "beta", beta = 0.5, init = "random", seed = 4, max_iter = 10, tol = 0, mask = mask,
               row_weights = rw, nrun = 2)
  ref <- do.call(quiet_nmf, c(list(x, 3), args))
  seen$calls <- 0L
  expect_same_wnmf(do.call(quiet_nmf, c(list(backends$memory, 3), args)), ref, info = "in the core")
  expect_identical(seen$calls, 6L)
  seen$calls <- 0L
  expect_same_wnmf(do.call(quiet_nmf, c(list(backends$shard_files, 3), args)), ref, info = "streamed")
  expect_gt(seen$calls, 60L)
  seen$calls <- 0L
  fit <- do.call(quiet_nmf, c(list(backends$memory, 3, factor_dir = shard_tempdir()), args))
  expect_gt(seen$calls, 60L)
  expect_equal(as.matrix(fit$W), ref$W, tolerance = 1e-10, ignore_attr = TRUE)
  expect_equal(fit$H, ref$H, tolerance = 1e-10)
  expect_equal(fit$objective, ref$objective, tolerance = 1e-10)
  # a fit that stops by its tolerance stops at the same iteration
  args <- list(loss = "beta", beta = 0.5, seed = 2, max_iter = 500, tol = 1e-5, mask = mask)
  ref <- do.call(quiet_nmf, c(list(x, 3), args))
  expect_true(ref$converged)
  expect_same_wnmf(do.call(quiet_nmf, c(list(backends$shard_files, 3), args)), ref, info = "converged")
  skip_on_cran()
  cl <- psock_cluster()
  on.exit(parallel::stopCluster(cl), add = TRUE)
  args <- list(loss = "beta", beta = 0.5, seed = 3, max_iter = 20, tol = 0, mask = mask, row_weights = rw)
  ref <- do.call(quiet_nmf, c(list(x, 3), args))
  for (sh in list(backends$memory, backends$shard_files)) {
    expect_same_wnmf(do.call(quiet_nmf, c(list(sh, 3, cluster = cl), args)), ref, info = "cluster")
  }
})

test_that("weighted beta-divergence updates of shards: weight 2 is a row twice, a masked cell plays no part", {
  x <- shard_counts(20, 10, seed = 7) + 1
  W0 <- matrix(seq(0.2, 1.5, length.out = 20 * 2), 20, 2)
  H0 <- matrix(seq(1.2, 0.3, length.out = 2 * 10), 2, 10)
  for (b in c(0.5, 1.5)) {
    # row 4 with weight 2 is the fit of the data with row 4 twice
    rw <- rep(1, 20); rw[4] <- 2
    fit <- quiet_nmf(shards(split_rows(x, 8L)), 2, loss = "beta", beta = b, init = list(W = W0, H = H0),
                     max_iter = 15, tol = 0, row_weights = rw)
    x2 <- rbind(x, x[4, , drop = FALSE])
    rep_fit <- quiet_nmf(shards(split_rows(x2, 8L)), 2, loss = "beta", beta = b,
                         init = list(W = rbind(W0, W0[4, ]), H = H0), max_iter = 15, tol = 0)
    expect_equal(unname(fit$H), unname(rep_fit$H), tolerance = 1e-9, info = b)
    expect_equal(unname(fit$W), unname(rep_fit$W[1:20, ]), tolerance = 1e-9, info = b)
    expect_equal(fit$objective, rep_fit$objective, tolerance = 1e-9, info = b)
    # a masked cell's value (below the data's largest) changes nothing
    mask <- matrix(FALSE, 20, 10); mask[c(3, 15), c(2, 7)] <- TRUE
    y <- x; y[mask] <- c(1, 2, 0.5, 3)
    f1 <- quiet_nmf(shards(split_rows(x, 11L)), 2, loss = "beta", beta = b, init = list(W = W0, H = H0),
                    max_iter = 15, tol = 0, mask = mask)
    f2 <- quiet_nmf(shards(split_rows(y, 11L)), 2, loss = "beta", beta = b, init = list(W = W0, H = H0),
                    max_iter = 15, tol = 0, mask = mask)
    expect_equal(f1$W, f2$W, tolerance = 1e-10, info = b)
    expect_equal(f1$H, f2$H, tolerance = 1e-10, info = b)
    expect_equal(f1$objective, f2$objective, tolerance = 1e-10, info = b)
  }
})

test_that("plsa(loss = \"kl\") of shards with a mask or weights equals the in-memory fit", {
  x <- shard_counts(40, 25, seed = 13)
  mask <- random_mask(x, 0.1, 2)
  rw <- rep(c(1, 2), length.out = nrow(x))
  for (sh in list(shards(split_rows(x, c(14L, 27L))), write_shards(x, shard_tempdir(), n = 2))) {
    fit <- suppressMessages(plsa(sh, 3, mask = mask, row_weights = rw, seed = 3, max_iter = 40))
    ref <- suppressMessages(plsa(x, 3, mask = mask, row_weights = rw, seed = 3, max_iter = 40))
    expect_equal(fit$factors, ref$factors, tolerance = 1e-10)
    expect_equal(fit$lambda, ref$lambda, tolerance = 1e-10)
    expect_equal(fit$value, ref$value, tolerance = 1e-10)
    expect_equal(fit$objective, ref$objective, tolerance = 1e-10)
    expect_identical(fit$iterations, ref$iterations)
  }
  # (the Tsallis and L2 losses are fitted on shards too,
  # test-plsa-shards-weights.R and test-plsa-shards-weights-l2.R)
  skip_on_cran()
  cl <- psock_cluster()
  on.exit(parallel::stopCluster(cl), add = TRUE)
  fit <- suppressMessages(plsa(shards(split_rows(x, 20L)), 3, mask = mask, seed = 3, max_iter = 30, cluster = cl))
  ref <- suppressMessages(plsa(x, 3, mask = mask, seed = 3, max_iter = 30))
  expect_equal(fit$factors, ref$factors, tolerance = 1e-10)
  expect_equal(fit$value, ref$value, tolerance = 1e-10)
})

test_that("KL fits whose masked linear terms cancel to zero take the same steps in memory and on shards", {
  # (7 x 27 sparse counts and a mask from a backend fuzz campaign: a
  # component's W is 0 at every observed cell of some columns, so those
  # columns' linear terms cancel; summed in another order they were +-1e-17,
  # whose sign decided a step no cell depends on, and the fits parted)
  x <- matrix(c(1, 0, 6, 0, 0, 0, 0, 0, 0, 2, 0, 0, 0, 0, 5, 0, 0, 0, 0, 0, 0, 0, 5, 0, 0, 0, 0, 0, 2, 0, 0, 0,
                0, 0, 0, 0, 0, 0, 0, 5, 0, 2, 0, 3, 0, 0, 0, 0, 0, 0, 2, 0, 0, 0, 0, 0, 0, 2, 0, 0, 0, 0, 0, 0,
                0, 0, 0, 0, 0, 0, 3, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 2, 0, 0, 0, 0, 0, 0, 0, 3, 0, 0, 0, 0, 4,
                0, 0, 0, 0, 0, 3, 0, 0, 5, 0, 0, 0, 0, 0, 2, 0, 0, 0, 0, 2, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 4, 0,
                0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 3, 0, 0, 0, 0, 5, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 3, 0, 0,
                0, 0, 0, 0, 0, 2, 0, 0, 0, 0, 5, 0, 0, 0, 0, 7, 0, 0, 0, 0, 0, 0, 0, 5, 0, 0, 0, 0, 2), 7, 27)
  mask <- matrix(FALSE, 7, 27)
  mask[c(2, 5, 7, 8, 10, 15, 16, 19, 29, 30, 34, 40, 47, 48, 51, 53, 56, 64, 81, 85, 86, 90, 91, 96, 98, 100,
         101, 109, 112, 119, 121, 126, 131, 135, 136, 137, 146, 149, 150, 151, 152, 153, 156, 157, 158, 162,
         163, 166, 173, 174, 179, 183, 184)] <- TRUE
  sh <- shards(list(x[1:6, ], x[7, , drop = FALSE]))
  a <- nmf(x, 4, loss = "kl", mask = mask, seed = 1, max_iter = 12, tol = 0, init = "random")
  b <- nmf(sh, 4, loss = "kl", mask = mask, seed = 1, max_iter = 12, tol = 0, init = "random")
  expect_equal(b$objective, a$objective, tolerance = 1e-10)
  expect_equal(b$H, a$H, tolerance = 1e-10)
  expect_equal(b$W, a$W, tolerance = 1e-10)
  p <- suppressMessages(plsa(x, 4, mask = mask, seed = 1, max_iter = 12, tol = 0))
  q <- suppressMessages(plsa(sh, 4, mask = mask, seed = 1, max_iter = 12, tol = 0))
  expect_equal(q$lambda, p$lambda, tolerance = 1e-10)
  expect_equal(q$factors, p$factors, tolerance = 1e-10)
  expect_equal(q$objective, p$objective, tolerance = 1e-10)
})
