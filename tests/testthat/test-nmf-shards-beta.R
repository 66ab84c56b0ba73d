# nmf(loss = "beta") of data in shards(): the beta-divergence multiplicative
# updates run as one rule on pieces (PieceBetaMU), so a matrix, shards in
# memory, .shard files read a chunk at a time, other files and a cluster
# give the same fit.

beta_fit <- function(x, k = 3, ...) suppressMessages(nmf(x, k, loss = "beta", ...))

# (.mtx files carry no names: the numbers are compared)
expect_same_beta_fit <- function(fit, ref, what, tol = 1e-10) {
  expect_same_fields(fit, ref, c("W", "H", "objective", "initial", "divergence", "rel_error", "total", "neg_entropy",
                                 "row_totals", "nnz"),
                     c("iterations", "converged"), tol = tol, info = what, unname = TRUE)
}

# The plain updates of Fevotte and Idier (2011) in R, W then H, with their
# exponent gamma(beta); data without zeros below the floor
ref_beta_mu <- function(x, W, H, beta, iters) {
  g <- if (beta < 1) 1 / (2 - beta) else if (beta > 2) 1 / (beta - 1) else 1
  div <- function(V) sum((x^beta + (beta - 1) * V^beta - beta * x * V^(beta - 1)) / (beta * (beta - 1)))
  obj <- numeric(iters)
  for (it in seq_len(iters)) {
    V <- W %*% H
    W <- W * ((((x * V^(beta - 2)) %*% t(H)) / (V^(beta - 1) %*% t(H)))^g)
    V <- W %*% H
    H <- H * (((t(W) %*% (x * V^(beta - 2))) / (t(W) %*% V^(beta - 1)))^g)
    obj[it] <- div(W %*% H)
  }
  list(W = W, H = H, objective = obj)
}

test_that("beta-divergence updates of shards give the in-memory fit from memory, files and every file kind", {
  skip_if_not_installed("Matrix")
  x <- shard_counts(30, 14, seed = 21)
  parts <- split_rows(x, c(9L, 20L))
  rds <- file.path(shard_tempdir(), paste0("p", 1:3, ".rds"))
  mtx <- file.path(shard_tempdir(), paste0("p", 1:3, ".mtx"))
  for (i in 1:3) {
    saveRDS(parts[[i]], rds[i])
    Matrix::writeMM(Matrix::Matrix(parts[[i]], sparse = TRUE), mtx[i])
  }
  backends <- list(memory = shards(parts), one = shards(list(x)),
                   shard_files = write_shards(parts, shard_tempdir()),
                   rds_files = shards(rds), mtx_files = shards(mtx))
  old <- options(aspectr.shard_chunk = 7)  # .shard files read 7 cells at a time
  on.exit(options(old), add = TRUE)
  # (beta = 0: the Itakura-Saito divergence, whose zeros of x are raised
  # to eps; beta = 3: the exponent 1 / (beta - 1))
  for (b in c(0, 0.5, 1.5, 3)) {
    for (init in c("nndsvda", "random")) {
      ref <- beta_fit(x, beta = b, init = init, seed = 4, max_iter = 25, tol = 0)
      expect_identical(ref$loss, "beta")
      # (the zeros raised to eps under beta = 0 count as cells of the data)
      expect_equal(ref$nnz, if (b == 0) length(x) else sum(x > 0))
      # the objective never rises
      expect_true(all(diff(c(ref$initial, ref$objective)) <= 1e-12 * ref$initial), info = paste(b, init))
      for (nm in names(backends)) {
        what <- paste("beta", b, init, nm)
        fit <- beta_fit(backends[[nm]], beta = b, init = init, seed = 4, max_iter = 25, tol = 0)
        expect_same_beta_fit(fit, ref, what)
      }
    }
  }
  # a fit that stops by its tolerance stops at the same iteration
  ref <- beta_fit(x, beta = 0.5, seed = 2, max_iter = 500, tol = 1e-5)
  expect_true(ref$converged)
  expect_same_beta_fit(beta_fit(backends$shard_files, beta = 0.5, seed = 2, max_iter = 500, tol = 1e-5), ref,
                       "converged")
})

test_that("beta-divergence updates of shards are the updates of Fevotte and Idier, with L1 penalties as in memory", {
  x <- shard_counts(24, 11, seed = 8) + 1  # (no zeros)
  parts <- split_rows(x, c(5L, 13L))
  set.seed(3)
  W0 <- matrix(stats::runif(24 * 3), 24, 3)
  H0 <- matrix(stats::runif(3 * 11), 3, 11)
  for (b in c(0.5, 1.5, 3)) {
    ref <- ref_beta_mu(x, W0, H0, b, 12)
    fit <- beta_fit(shards(parts), beta = b, init = list(W = W0, H = H0), max_iter = 12, tol = 0)
    expect_equal(unname(fit$W %*% fit$H), unname(ref$W %*% ref$H), tolerance = 1e-9, info = b)
    expect_equal(fit$objective, ref$objective, tolerance = 1e-9, info = b)
  }
  # L1 penalties: the same penalized fit as in memory (and not the
  # unpenalized one)
  for (b in c(0.5, 1.5)) {
    ref <- beta_fit(x, beta = b, L1 = c(0.3, 0.1), seed = 1, max_iter = 20, tol = 0)
    fit <- beta_fit(shards(parts), beta = b, L1 = c(0.3, 0.1), seed = 1, max_iter = 20, tol = 0)
    expect_same_beta_fit(fit, ref, paste("L1", b))
    plain <- beta_fit(x, beta = b, seed = 1, max_iter = 20, tol = 0)
    expect_gt(max(abs(plain$W - fit$W)), 1e-6)
  }
})

test_that("beta-divergence fits of shards repeat with a seed and refuse what memory refuses", {
  x <- shard_counts(20, 10, seed = 5)
  sh <- shards(split_rows(x, 8L))
  a <- beta_fit(sh, beta = 0.5, init = "random", seed = 9, max_iter = 10)
  b <- beta_fit(sh, beta = 0.5, init = "random", seed = 9, max_iter = 10)
  expect_identical(a$W, b$W)
  expect_identical(a$H, b$H)
  expect_identical(a$objective, b$objective)
  c2 <- beta_fit(sh, beta = 0.5, init = "random", seed = 10, max_iter = 10)
  expect_gt(max(abs(c2$H - a$H)), 1e-6)
  # beta <= 0 with zeros needs a positive eps, as in memory
  expect_error(nmf(sh, 2, loss = "beta", beta = 0, eps = 0), class = "aspectr_error_input_argument",
               regexp = "eps")
  expect_error(nmf(x, 2, loss = "beta", beta = 0, eps = 0), class = "aspectr_error_input_argument",
               regexp = "eps")
  # L2 penalties are not the beta divergence's, as in memory
  expect_error(nmf(sh, 2, loss = "beta", beta = 0.5, L2 = c(1, 0)), class = "aspectr_error_input_argument",
               regexp = "L2")
  # each shard's dense block counts against the size limit
  old <- options(aspectr.max_cells = 50)
  on.exit(options(old))
  expect_error(nmf(sh, 2, loss = "beta", beta = 0.5), class = "aspectr_error_size", regexp = "12 x 10")
  # (with masks and weights too: the weighted updates read the same blocks,
  # test-nmf-shards-weights.R)
  expect_error(nmf(sh, 2, loss = "beta", beta = 0.5, row_weights = rep(1:2, 10)),
               class = "aspectr_error_size", regexp = "12 x 10")
})

test_that("beta-divergence updates of shards on a 2-worker PSOCK cluster equal the in-memory fit", {
  skip_on_cran()
  x <- shard_counts(36, 15, seed = 13)
  parts <- split_rows(x, c(10L, 22L))
  cl <- psock_cluster()
  on.exit(parallel::stopCluster(cl), add = TRUE)
  for (b in c(0, 0.5, 1.5)) {
    ref <- beta_fit(x, beta = b, seed = 3, nrun = 2, max_iter = 20, tol = 0)
    fit <- beta_fit(shards(parts), beta = b, seed = 3, nrun = 2, max_iter = 20, tol = 0, cluster = cl)
    expect_same_beta_fit(fit, ref, paste("psock", b))
    expect_identical(fit$run, ref$run)
  }
  stores <- function(cl) unlist(parallel::clusterEvalQ(cl, length(ls(asNamespace("aspectr")$shard_stores))))
  expect_identical(stores(cl), c(0L, 0L))
})

test_that("beta-divergence fits of shard files do not depend on the chunk, and the callback and factor_dir are exact", {
  x <- shard_counts(26, 12, seed = 17)
  parts <- split_rows(x, c(6L, 15L))
  files <- write_shards(parts, shard_tempdir())
  old <- options(aspectr.shard_chunk = NULL)
  on.exit(options(old), add = TRUE)
  fits <- lapply(c(1, 7, 1e6), function(ch) {
    options(aspectr.shard_chunk = ch)
    beta_fit(files, beta = 1.5, seed = 6, max_iter = 15, tol = 0)
  })
  options(aspectr.shard_chunk = NULL)
  # (each shard's dense block is the same whatever the chunk)
  for (f in fits[-1]) {
    expect_identical(f$W, fits[[1]]$W)
    expect_identical(f$H, fits[[1]]$H)
    expect_identical(f$objective, fits[[1]]$objective)
  }
  # the callback sees the in-memory objective and factors at every iteration
  seen <- function(data) {
    v <- list()
    beta_fit(data, beta = 0.5, seed = 6, max_iter = 6, tol = 0,
             callback = function(it, value, model) { v[[it]] <<- list(value = value, W = model$W); TRUE })
    v
  }
  ref <- seen(x)
  got <- seen(shards(parts))
  expect_length(got, 6)
  for (i in seq_along(ref)) {
    expect_equal(got[[i]]$value, ref[[i]]$value, tolerance = 1e-10)
    expect_equal(got[[i]]$W, ref[[i]]$W, tolerance = 1e-10)
  }
  # W written to files by the processes holding the shards
  fd <- beta_fit(files, beta = 0.5, seed = 6, max_iter = 10, tol = 0, factor_dir = shard_tempdir())
  mem <- beta_fit(x, beta = 0.5, seed = 6, max_iter = 10, tol = 0)
  expect_s3_class(fd$W, "aspectr_factor_files")
  expect_equal(unname(as.matrix(fd$W)), unname(mem$W), tolerance = 1e-10)
  expect_equal(fd$objective, mem$objective, tolerance = 1e-10)
})

test_that("a weighted beta-divergence fit of shards with nothing to fit is refused as in memory", {
  y <- matrix(0, 6, 2)
  y[3] <- 2
  mk <- matrix(FALSE, 6, 2)
  mk[3] <- TRUE
  sh <- shards(list(y[1:2, , drop = FALSE], y[3:6, , drop = FALSE]))
  # (shards fitted it, converged = TRUE with value 0)
  em <- expect_error(nmf(y, 1, loss = "beta", beta = 1.5, mask = mk), class = "aspectr_error_input_value")
  es <- expect_error(nmf(sh, 1, loss = "beta", beta = 1.5, mask = mk), class = "aspectr_error_input_value")
  expect_identical(conditionMessage(es), conditionMessage(em))
  expect_identical(as.character(conditionCall(es)[[1]]), "nmf")
})

test_that("NNDSVD's start of beta <= 0 sees the zeros raised to eps on shards as in memory", {
  # an all-zero column: in memory its H entry starts at the raised zeros'
  # tiny value; a start from the zeros themselves stays at 0 under the
  # multiplicative updates, with an astronomical divergence
  x <- matrix(c(1, 2, 0, 2, 1, 0, 1, 3, 0), 3, byrow = TRUE)
  for (b in c(0, -1)) {
    f <- function(d) nmf(d, 1, loss = "beta", beta = b, init = "nndsvd", max_iter = 3, tol = 0)
    mem <- f(x)
    sh <- f(shards(list(x[1:2, , drop = FALSE], x[3, , drop = FALSE])))
    expect_equal(sh$objective, mem$objective, tolerance = 1e-10)
    expect_equal(unname(sh$W), unname(mem$W), tolerance = 1e-10)
    expect_equal(unname(sh$H), unname(mem$H), tolerance = 1e-10)
    expect_true(all(mem$H > 0))
  }
})
