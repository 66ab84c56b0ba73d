# plsa(loss = "tsallis") of data in shards() with missing cells, masks and
# weights: the weighted q-EM (solvers/plsa_weighted.h) runs on the pieces
# (solvers/plsa_weighted_pieces.h: each shard its cells, weights and rows
# of the documents' factor; the documents' root search on the master; its
# SQUAREM, solvers/pieces_squarem.h), so the same call gives the in-memory
# weighted fit, in memory, from files and on a cluster.

expect_same_wq <- function(fit, ref, tol = 1e-10, info = NULL) {
  expect_equal(unname(fit$factors[[1]]), unname(ref$factors[[1]]), tolerance = tol, info = info)
  expect_equal(unname(fit$factors[[2]]), unname(ref$factors[[2]]), tolerance = tol, info = info)
  expect_equal(unname(fit$lambda), unname(ref$lambda), tolerance = tol, info = info)
  expect_equal(fit$objective, ref$objective, tolerance = tol, info = info)
  expect_equal(fit$value, ref$value, tolerance = tol, info = info)
  expect_equal(fit$kl, ref$kl, tolerance = tol, info = info)
  expect_equal(fit$total, ref$total, tolerance = tol, info = info)
  expect_identical(fit$iterations, ref$iterations, info = info)
  expect_identical(fit$converged, ref$converged, info = info)
  expect_identical(fit$loss, "tsallis")
  expect_identical(fit$weighting$type, ref$weighting$type, info = info)
  expect_identical(fit$weighting$base, ref$weighting$base, info = info)
}

wq_mask <- function(x, frac, seed) {
  set.seed(seed)
  cells <- sample(length(x), round(frac * length(x)))
  Matrix::sparseMatrix(i = (cells - 1) %% nrow(x) + 1, j = (cells - 1) %/% nrow(x) + 1, x = TRUE,
                       dims = dim(x), dimnames = dimnames(x))
}

test_that("masked and row/column weighted Tsallis fits of 1, 2 and 3 shards equal the in-memory fit", {
  x <- shard_counts(30, 14, seed = 3)
  mask <- wq_mask(x, 0.15, 1)
  set.seed(2)
  rw <- stats::runif(nrow(x), 0.5, 2); cw <- stats::runif(ncol(x), 0.5, 2)
  for (q in c(0.7, 0.3)) {
    args <- list(loss = "tsallis", q = q, seed = 2, max_iter = 400, tol = 1e-7, mask = mask, row_weights = rw,
                 col_weights = cw)
    ref <- do.call(plsa, c(list(x, 3, method = "em"), args))
    expect_lt(ref$iterations, 400L)  # (converged: the stopping rule is compared too)
    for (cuts in list(integer(0), 13L, c(8L, 19L))) {
      info <- paste("q", q, "shards", length(cuts) + 1)
      fit <- do.call(plsa, c(list(shards(split_rows(x, cuts)), 3, method = "em"), args))
      expect_same_wq(fit, ref, info = info)
      expect_identical(fit$shards, length(cuts) + 1L)
      expect_identical(fit$method, "em")
      # the trace of the weighted q-EM never rises
      expect_true(all(diff(fit$objective) <= 1e-12 * abs(fit$objective[-1])), info = info)
    }
  }
})

test_that("NA cells in memory equal the same cells masked on shards; a shard of rows all left out", {
  x <- shard_counts(30, 12, seed = 5)
  set.seed(7)
  na <- sample(length(x), 30)
  xn <- x; xn[na] <- NA
  x0 <- x; x0[na] <- 0
  mask <- Matrix::sparseMatrix(i = (na - 1) %% nrow(x) + 1, j = (na - 1) %/% nrow(x) + 1, dims = dim(x))
  ref <- plsa(xn, 3, loss = "tsallis", q = 0.6, method = "em", seed = 4, max_iter = 40, tol = 0)
  expect_identical(ref$weighting$type, "missing")
  fit <- plsa(shards(split_rows(x0, c(10L, 21L))), 3, loss = "tsallis", q = 0.6, method = "em", seed = 4,
              max_iter = 40, tol = 0, mask = mask)
  expect_equal(unname(fit$factors), unname(ref$factors), tolerance = 1e-10)
  expect_equal(unname(fit$lambda), unname(ref$lambda), tolerance = 1e-10)
  expect_equal(fit$objective, ref$objective, tolerance = 1e-10)
  expect_equal(fit$value, ref$value, tolerance = 1e-10)
  # the second shard's rows all have weight 0: they take no part in the
  # fit and share the mass the others leave, as in memory
  rw <- rep(1, nrow(x)); rw[11:21] <- 0
  ref <- plsa(x, 3, loss = "tsallis", q = 0.6, method = "em", seed = 4, max_iter = 40, tol = 0, row_weights = rw)
  fit <- plsa(shards(split_rows(x, c(10L, 21L))), 3, loss = "tsallis", q = 0.6, method = "em", seed = 4,
              max_iter = 40, tol = 0, row_weights = rw)
  expect_same_wq(fit, ref)
  expect_equal(colSums(fit$factors[[1]]), setNames(rep(1, 3), paste0("topic_", 1:3)), tolerance = 1e-12)
  # (the rows left out are equal to each other: the even share)
  expect_equal(max(apply(fit$factors[[1]][11:21, ], 2, function(v) diff(range(v)))), 0, tolerance = 1e-15)
})

test_that("observed cells, dense and sparse cell weights on shards equal the in-memory fit", {
  x <- shard_counts(26, 13, seed = 8)
  sh <- shards(split_rows(x, c(9L, 17L)))
  obs <- methods::as(x != 0, "lMatrix") | wq_mask(x, 0.2, 3)
  set.seed(4)
  wdense <- matrix(stats::runif(length(x), 0, 2), nrow(x), ncol(x))
  wdense[sample(length(x), 40)] <- 0
  wsparse <- Matrix::drop0(Matrix::Matrix(wdense * (stats::runif(length(x)) < 0.5), sparse = TRUE))
  init <- list(lambda = c(0.5, 0.3, 0.2),
               factors = list(prop.table(matrix(seq(0.1, 2, length.out = 26 * 3), 26, 3), 2),
                              prop.table(matrix(seq(2, 0.2, length.out = 13 * 3), 13, 3), 2)))
  for (wa in list(list(observed = obs), list(weights = wdense), list(weights = wsparse),
                  list(weights = wdense, observed = obs), list(mode_weights = list(NULL, seq(0.5, 2, length.out = 13))))) {
    args <- c(list(loss = "tsallis", q = 0.5, init = init, max_iter = 25, tol = 0), wa)
    info <- paste(names(wa), collapse = "+")
    expect_same_wq(do.call(plsa, c(list(sh, 3, method = "em"), args)), do.call(plsa, c(list(x, 3, method = "em"), args)),
                   info = info)
  }
})

test_that("an empty mask gives the unweighted sharded fit; several starts pick the in-memory best", {
  x <- shard_counts(28, 12, seed = 9)
  sh <- shards(split_rows(x, 14L))
  none <- Matrix::sparseMatrix(i = integer(0), j = integer(0), dims = dim(x))
  a <- plsa(sh, 3, loss = "tsallis", q = 0.7, method = "em", mask = none, seed = 2, max_iter = 30, tol = 0)
  b <- plsa(sh, 3, loss = "tsallis", q = 0.7, method = "em", seed = 2, max_iter = 30, tol = 0)
  expect_identical(a$weighting$type, "mask")
  expect_null(b$weighting)
  expect_equal(unname(a$factors), unname(b$factors), tolerance = 1e-10)
  expect_equal(unname(a$lambda), unname(b$lambda), tolerance = 1e-10)
  expect_equal(a$objective, b$objective, tolerance = 1e-10)
  expect_equal(a$value, b$value, tolerance = 1e-10)
  mask <- wq_mask(x, 0.1, 2)
  args <- list(loss = "tsallis", q = 0.7, seed = 11, nrun = 3, max_iter = 30, tol = 0, mask = mask)
  fit <- do.call(plsa, c(list(sh, 3, method = "em"), args))
  ref <- do.call(plsa, c(list(x, 3, method = "em"), args))
  expect_same_wq(fit, ref)
  expect_identical(fit$run, ref$run)
  expect_equal(fit$run_values, ref$run_values, tolerance = 1e-10)
})

test_that("shard files (.shard and others) and PSOCK and mirai clusters give the in-memory weighted fit", {
  x <- shard_counts(31, 13, seed = 7)
  mask <- wq_mask(x, 0.1, 5)
  rw <- rep(c(1, 2, 0.5), length.out = nrow(x))
  args <- list(loss = "tsallis", q = 0.6, method = "em", seed = 1, max_iter = 30, tol = 0, mask = mask,
               row_weights = rw)
  ref <- do.call(plsa, c(list(x, 3), args))
  sh <- write_shards(x, shard_tempdir(), n = 3)
  expect_same_wq(do.call(plsa, c(list(sh, 3), args)), ref, info = ".shard files")
  dir <- shard_tempdir()
  f <- file.path(dir, c("a.rds", "b.rds"))
  p <- split_rows(x, 15L)
  for (i in 1:2) saveRDS(p[[i]], f[i])
  expect_same_wq(do.call(plsa, c(list(shards(f), 3), args)), ref, info = ".rds files")
  old <- options(aspectr.shard_cache = FALSE)
  expect_same_wq(do.call(plsa, c(list(shards(f), 3), args)), ref, info = ".rds files, no cache")
  options(old)
  cl <- psock_cluster()
  on.exit(parallel::stopCluster(cl), add = TRUE)
  expect_same_wq(do.call(plsa, c(list(shards(split_rows(x, c(7L, 20L))), 3, cluster = cl), args)), ref,
                 info = "PSOCK")
  expect_same_wq(do.call(plsa, c(list(sh, 3, cluster = cl), args)), ref, info = "PSOCK, files")
  stores <- function(cl) unlist(parallel::clusterEvalQ(cl, length(ls(asNamespace("aspectr")$shard_stores))))
  expect_identical(stores(cl), c(0L, 0L))
  skip_if_not_installed("mirai")
  cm <- mirai_cluster()
  on.exit(parallel::stopCluster(cm), add = TRUE)
  expect_same_wq(do.call(plsa, c(list(shards(split_rows(x, c(7L, 20L))), 3, cluster = cm), args)), ref,
                 info = "mirai")
})

test_that("N-way data in shards with masks and weights give the in-memory weighted Tsallis fit", {
  set.seed(3)
  y <- array(stats::rpois(12 * 5 * 4, 2), c(12, 5, 4))
  y[1, 1, 1] <- 3
  M <- array(stats::runif(length(y)) < 0.1, dim(y))
  W <- array(stats::runif(length(y), 0.2, 2), dim(y))
  mw <- list(NULL, c(1, 2, 1, 0.5, 1), NULL)
  cases <- list(list(mask = M), list(mask = M, mode_weights = mw), list(weights = W),
                list(mask = M, row_weights = stats::runif(12, 0.5, 2)),
                list(observed = which(y > 0 & !M, arr.ind = TRUE)))
  for (i in seq_along(cases)) {
    args <- c(list(loss = "tsallis", method = "em", q = 0.7, seed = 2, max_iter = 300, tol = 1e-7), cases[[i]])
    ref <- do.call(plsa, c(list(y, 3), args))
    for (cuts in list(5L, c(3L, 9L))) {
      parts <- split_rows(y, cuts)
      info <- paste("case", i, "shards", length(cuts) + 1)
      fit <- do.call(plsa, c(list(shards(parts), 3), args))
      expect_same_wq(fit, ref, info = info)
      expect_equal(unname(fit$factors[[3]]), unname(ref$factors[[3]]), tolerance = 1e-10, info = info)
      expect_true(all(diff(fit$objective) <= 1e-12 * abs(fit$objective[-1])), info = info)
      # the record of the weights as in memory (shards gave a matrix's:
      # augment() listed no cell left out, and observed = failed with R's
      # "invalid 'dims'"), so augment() lists the same cells, imputed alike
      expect_identical(fit$weighting, ref$weighting, info = info)
      a_fit <- augment(fit); a_ref <- augment(ref)
      expect_identical(a_fit[1:5], a_ref[1:5], info = info)
      expect_equal(a_fit$.fitted, a_ref$.fitted, tolerance = 1e-9, info = info)
      if (!is.null(cases[[i]]$mask)) expect_identical(sum(!a_fit$observed), sum(M), info = info)
    }
  }
  # from files, out of core
  fit <- do.call(plsa, c(list(write_shards(split_rows(y, 6L), shard_tempdir()), 3), args))
  expect_same_wq(fit, ref)
})

test_that("what weighted Tsallis fits of shards refuse is refused, naming the argument", {
  x <- shard_counts(20, 10, seed = 2)
  sh <- shards(split_rows(x, 10L))
  mask <- wq_mask(x, 0.1, 1)
  # (the weighted L2 fit runs on shards: test-plsa-shards-weights-l2.R)
  err <- tryCatch(plsa(sh, 2, loss = "tsallis", q = 1.5, mask = mask), error = identity)
  expect_s3_class(err, "aspectr_error_input")
  expect_identical(err$arg, "q")
  err <- tryCatch(plsa(sh, 2, loss = "tsallis", row_weights = rep(0, 20)), error = identity)
  expect_s3_class(err, "aspectr_error_input_empty")
  err <- tryCatch(plsa(sh, 30, loss = "tsallis", mask = mask), error = identity)
  expect_s3_class(err, "aspectr_error_input")
  expect_identical(err$arg, "k")
  err <- tryCatch(plsa(sh, 2, loss = "tsallis", row_weights = rep(1, 19)), error = identity)
  expect_s3_class(err, "aspectr_error_input")
  expect_identical(err$arg, "row_weights")
})

test_that("SQUAREM of the weighted q-EM on shards equals the in-memory fit in memory, files and on a cluster", {
  x <- shard_counts(30, 14, seed = 12)
  mask <- wq_mask(x, 0.15, 6)
  set.seed(3)
  rw <- stats::runif(nrow(x), 0.5, 2); cw <- stats::runif(ncol(x), 0.5, 2)
  parts <- split_rows(x, c(8L, 19L))
  f <- file.path(shard_tempdir(), c("a.rds", "b.rds", "c.rds"))
  for (i in 1:3) saveRDS(parts[[i]], f[i])
  backends <- list(one = shards(list(x)), memory = shards(parts), shard_files = write_shards(parts, shard_tempdir()),
                   rds_files = shards(f))
  old <- options(aspectr.shard_chunk = 7)  # .shard files read 7 cells at a time
  on.exit(options(old), add = TRUE)
  # (fits that converge, or a few iterations: over hundreds of iterations
  # without converging, SQUAREM's path with a small q amplifies the
  # rounding of the sums' order, by about 1.3 an iteration)
  for (cs in list(list(q = 0.7, max_iter = 300, tol = 1e-8), list(q = 0.3, max_iter = 30, tol = 0))) {
    for (wa in list(list(mask = mask, row_weights = rw, col_weights = cw), list(observed = !as.matrix(mask)))) {
      args <- c(list(loss = "tsallis", q = cs$q, seed = 2, max_iter = cs$max_iter, tol = cs$tol), wa)
      ref <- do.call(plsa, c(list(x, 3, method = "squarem"), args))
      if (cs$tol > 0) expect_true(ref$converged)
      for (b in names(backends)) {
        info <- paste("q", cs$q, paste(names(wa), collapse = "+"), b)
        # (SQUAREM is the default, as in memory)
        fit <- do.call(plsa, c(list(backends[[b]], 3), args))
        expect_identical(fit$method, "squarem", info = info)
        expect_same_wq(fit, ref, info = info)
        # the trace never rises
        expect_true(all(diff(fit$objective) <= 1e-12 * abs(fit$objective[-1])), info = info)
      }
    }
  }
  # several starts pick the in-memory best; N-way data
  args <- list(loss = "tsallis", method = "squarem", q = 0.7, seed = 5, nrun = 3, max_iter = 300, tol = 1e-8,
               mask = mask)
  fit <- do.call(plsa, c(list(backends$memory, 3), args))
  ref <- do.call(plsa, c(list(x, 3), args))
  expect_same_wq(fit, ref)
  expect_identical(fit$run, ref$run)
  set.seed(3)
  y <- array(stats::rpois(12 * 5 * 4, 2), c(12, 5, 4))
  y[1, 1, 1] <- 3
  M <- array(stats::runif(length(y)) < 0.1, dim(y))
  # (stopped before the last steps, whose columns' safeguard compares
  # values equal up to rounding: there the backends may part by about the
  # last step's size)
  args <- list(loss = "tsallis", method = "squarem", q = 0.7, seed = 2, max_iter = 300, tol = 1e-6, mask = M)
  ref <- do.call(plsa, c(list(y, 3), args))
  fit <- do.call(plsa, c(list(shards(split_rows(y, c(3L, 9L))), 3), args))
  expect_same_wq(fit, ref, info = "N-way")
  expect_equal(unname(fit$factors[[3]]), unname(ref$factors[[3]]), tolerance = 1e-10)
  skip_on_cran()
  cl <- psock_cluster()
  on.exit(parallel::stopCluster(cl), add = TRUE)
  args <- list(loss = "tsallis", q = 0.7, seed = 1, max_iter = 300, tol = 1e-8, mask = mask, row_weights = rw)
  ref <- do.call(plsa, c(list(x, 3), args))
  for (b in c("memory", "shard_files")) {
    expect_same_wq(do.call(plsa, c(list(backends[[b]], 3, cluster = cl), args)), ref, info = paste("PSOCK", b))
  }
})

test_that("SQUAREM of the weighted q-EM on shards: a masked cell's value plays no part", {
  x <- shard_counts(20, 10, seed = 4)
  init <- list(lambda = c(0.5, 0.3, 0.2),
               factors = list(prop.table(matrix(seq(0.1, 2, length.out = 20 * 3), 20, 3), 2),
                              prop.table(matrix(seq(2, 0.2, length.out = 10 * 3), 10, 3), 2)))
  mask <- matrix(FALSE, 20, 10); mask[c(3, 15), c(2, 7)] <- TRUE
  fit <- function(data, ...) plsa(data, 3, loss = "tsallis", method = "squarem", q = 0.6, max_iter = 30, tol = 0, ...)
  y <- x; y[mask] <- y[mask] + c(5, 1, 2, 9)
  a <- fit(shards(split_rows(x, 9L)), init = init, mask = mask)
  b <- fit(shards(split_rows(y, 9L)), init = init, mask = mask)
  expect_equal(a$factors, b$factors, tolerance = 1e-10)
  expect_equal(a$lambda, b$lambda, tolerance = 1e-10)
  expect_equal(a$objective, b$objective, tolerance = 1e-10)
})

test_that("N-way weighted KL fits of shards bound k by the counted cells and name plsa() when nothing counts", {
  set.seed(12)
  y <- array(stats::rpois(6 * 4 * 3, 1.5), c(6, 4, 3))
  y[1, 1, 1] <- 2
  M <- array(TRUE, dim(y))
  keep <- which(y > 0)[1:4]
  M[keep] <- FALSE  # four counted cells
  parts <- split_rows(y, 3L)
  # (the limit counted every non-zero of the shards before the mask:
  # k = 5 was taken there, refused in memory)
  em <- expect_error(plsa(y, 5, mask = M), class = "aspectr_error_input_argument")
  es <- expect_error(plsa(shards(parts), 5, mask = M), class = "aspectr_error_input_argument")
  expect_identical(conditionMessage(es), conditionMessage(em))
  ref <- suppressMessages(plsa(y, 2, mask = M, seed = 1, max_iter = 30))
  fit <- suppressMessages(plsa(shards(parts), 2, mask = M, seed = 1, max_iter = 30))
  expect_equal(fit$factors, ref$factors, tolerance = 1e-10)
  expect_equal(fit$neg_entropy, ref$neg_entropy, tolerance = 1e-12)
  # nothing counted: the error of memory, naming plsa() (it named an
  # inlined ntf() call)
  e0 <- expect_error(plsa(shards(parts), 2, mask = array(TRUE, dim(y))), class = "aspectr_error_input_empty")
  expect_identical(conditionMessage(e0),
                   conditionMessage(expect_error(plsa(y, 2, mask = array(TRUE, dim(y))), class = "aspectr_error_input_empty")))
  expect_identical(conditionCall(e0)[[1]], quote(plsa))
})
