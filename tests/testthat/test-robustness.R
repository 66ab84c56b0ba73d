# What a fuzz campaign found on the newer surfaces: names matched in
# newdata, lca()'s formula named or not, shards without counts, refusals
# that are classed and name their argument, inputs that were wrongly
# accepted.

test_that("predict() refuses newdata whose names repeat instead of misplacing values", {
  set.seed(11)
  x <- matrix(rpois(20 * 10, 3), 20, 10, dimnames = list(paste0("d", 1:20), paste0("w", 1:10)))
  fp <- plsa(x, 2, seed = 1, max_iter = 200)
  fn <- suppressMessages(nmf(x, 2, seed = 1, max_iter = 200))
  nd <- x[1:3, ]
  # permuted columns are matched by name: the same answer
  expect_equal(predict(fp, nd[, 10:1]), predict(fp, nd), tolerance = 1e-12)
  expect_equal(predict(fn, nd[, 10:1]), predict(fn, nd), tolerance = 1e-12)
  expect_equal(perplexity(fp, nd[, 10:1]), perplexity(fp, nd), tolerance = 1e-12)
  # a repeated name (and one missing): refused, naming it
  dup <- nd
  colnames(dup)[2] <- "w1"
  expect_error(predict(fp, dup), class = "aspectr_error_input_newdata", regexp = "w1")
  expect_error(predict(fn, dup), class = "aspectr_error_input_newdata", regexp = "w1")
  expect_error(perplexity(fp, dup), class = "aspectr_error_input_newdata")
  expect_error(predict(fp, Matrix::Matrix(dup, sparse = TRUE)), class = "aspectr_error_input_newdata")
  # also when the documents have no counts (they get the prior): plsa
  # property cases 56, 85, 96 and others (one count in the data, none in
  # the first rows) were predicted
  expect_error(predict(fp, dup * 0), class = "aspectr_error_input_newdata", regexp = "w1")
  expect_equal(unname(predict(fp, nd * 0)), matrix(fp$lambda, 3, 2, byrow = TRUE), tolerance = 1e-12,
               ignore_attr = TRUE)
  # without names, by position, as before
  unnamed <- unname(nd)
  expect_equal(unname(predict(fp, unnamed)), unname(predict(fp, nd)), tolerance = 1e-12)
  # new columns of nmf are matched by their row names
  cols <- x[, 1:2]
  expect_equal(predict(fn, cols[20:1, ], margin = "columns"), predict(fn, cols, margin = "columns"),
               tolerance = 1e-10)
  rownames(cols)[3] <- "d1"
  expect_error(predict(fn, cols, margin = "columns"), class = "aspectr_error_input_newdata", regexp = "d1")
  # a fit whose own terms repeat cannot match by name
  xd <- x
  colnames(xd)[2] <- "w1"
  fd <- plsa(xd, 2, seed = 1, max_iter = 20)
  expect_error(predict(fd, nd), class = "aspectr_error_input_newdata", regexp = "not unique")
  expect_equal(dim(predict(fd, unname(nd))), c(3L, 2L))
})

test_that("ntf() and lca() predictions match names too", {
  set.seed(12)
  y <- array(rpois(3 * 4 * 5, 3), c(3, 4, 5), dimnames = list(NULL, letters[1:4], LETTERS[1:5]))
  ft <- ntf(y, 2, seed = 1, max_iter = 200)
  a <- array(rpois(2 * 4 * 5, 3), c(2, 4, 5), dimnames = list(NULL, letters[1:4], LETTERS[1:5]))
  expect_equal(predict(ft, a[, 4:1, 5:1, drop = FALSE]), predict(ft, a), tolerance = 1e-10)
  b <- a
  dimnames(b)[[2]][2] <- "a"
  expect_error(predict(ft, b), class = "aspectr_error_input_newdata")
  dimnames(b)[[2]][2] <- "zz"
  expect_error(predict(ft, b), class = "aspectr_error_input_newdata", regexp = "zz")
  lc <- data.frame(a = c(1, 2, 1, 2, 1, 2, 2, 1, 1, 2), b = c(1, 1, 2, 2, 1, 2, 1, 2, 2, 1),
                   c = c(2, 1, 2, 1, 1, 2, 2, 1, 2, 2))
  fl <- lca(lc, 2, seed = 1, nrun = 2, max_iter = 50)
  expect_equal(predict(fl, lc[, 3:1]), predict(fl, lc), tolerance = 1e-12)
  bad <- lc
  names(bad)[3] <- "a"
  bad$b2 <- bad$b
  expect_error(predict(fl, bad), class = "aspectr_error_input_newdata")
  twice <- cbind(lc, lc["a"])
  expect_error(predict(fl, twice), class = "aspectr_error_input_newdata", regexp = "more than one column")
})

test_that("lca() takes its formula with data named, in any order", {
  set.seed(13)
  n <- 120
  cls <- sample(1:2, n, replace = TRUE)
  df <- data.frame(A = ifelse(runif(n) < c(0.2, 0.8)[cls], 2, 1), B = ifelse(runif(n) < c(0.2, 0.8)[cls], 2, 1),
                   C = ifelse(runif(n) < c(0.3, 0.9)[cls], 2, 1), z = rnorm(n) + cls)
  ref <- lca(cbind(A, B, C) ~ 1, df, 2, seed = 1)
  for (fit in list(lca(cbind(A, B, C) ~ 1, data = df, k = 2, seed = 1),
                   lca(data = df, cbind(A, B, C) ~ 1, k = 2, seed = 1),
                   lca(formula = cbind(A, B, C) ~ 1, data = df, k = 2, seed = 1),
                   lca(data = df, formula = cbind(A, B, C) ~ 1, 2, seed = 1))) {
    expect_equal(fit$llik, ref$llik, tolerance = 1e-12)
    expect_equal(fit$probs, ref$probs, tolerance = 1e-12)
  }
  reg <- lca(cbind(A, B, C) ~ z, df, 2, seed = 1)
  named <- lca(cbind(A, B, C) ~ z, data = df, k = 2, seed = 1)
  expect_equal(named$coeff, reg$coeff, tolerance = 1e-12)
  expect_equal(named$llik, reg$llik, tolerance = 1e-12)
  # the call is recorded as written
  expect_identical(deparse1(named$call$formula), "cbind(A, B, C) ~ z")
  expect_identical(deparse1(named$call$data), "df")
  # the data-frame method still works with data named
  plain <- lca(data = df[c("A", "B", "C")], k = 2, seed = 1)
  expect_equal(plain$llik, ref$llik, tolerance = 1e-12)
})

test_that("lca() covariates: missing dropped with a message, edges of the doubles fitted", {
  set.seed(14)
  n <- 300
  z <- rnorm(n)
  cls <- ifelse(runif(n) < plogis(1.5 * z), 2, 1)
  df <- data.frame(A = ifelse(runif(n) < c(0.2, 0.8)[cls], 2, 1), B = ifelse(runif(n) < c(0.2, 0.8)[cls], 2, 1),
                   C = ifelse(runif(n) < c(0.3, 0.9)[cls], 2, 1), z = z)
  ref <- lca(cbind(A, B, C) ~ z, df, 2, seed = 1)
  # covariates scaled by 1e-300 ... 1e300 give the same model: the same
  # likelihood, coefficients in the covariate's units
  for (s in c(1e-300, 1e-100, 1e10, 1e100, 1e300)) {
    d <- df
    d$z <- d$z * s
    fit <- lca(cbind(A, B, C) ~ z, d, 2, seed = 1)
    expect_equal(fit$llik, ref$llik, tolerance = 1e-8, info = paste("scale", s))
    expect_equal(fit$coeff["z", ] * s, ref$coeff["z", ], tolerance = 1e-6, info = paste("scale", s))
    expect_equal(fit$se$coeff["z", ] * s, ref$se$coeff["z", ], tolerance = 1e-6, info = paste("scale", s))
    expect_equal(fit$coeff["(Intercept)", ], ref$coeff["(Intercept)", ], tolerance = 1e-6)
    expect_equal(predict(fit, d[1:5, ]), predict(ref, df[1:5, ]), tolerance = 1e-8)
  }
  # NA and NaN (log of a negative number) covariates: dropped, counted, said
  d <- df
  d$z[1:4] <- NA
  expect_message(fit <- lca(cbind(A, B, C) ~ z, d, 2, seed = 1), class = "aspectr_message_dropped")
  expect_identical(fit$dropped_covariate_na, 4L)
  expect_equal(fit$N, n - 4)
  d <- df
  expect_message(suppressWarnings(fit <- lca(cbind(A, B, C) ~ log(z), d, 2, seed = 1)),
                 class = "aspectr_message_dropped")
  expect_identical(fit$dropped_covariate_na, sum(df$z < 0))
  # without missing covariates: no message
  expect_no_message(lca(cbind(A, B, C) ~ z, df, 2, seed = 1))
})

test_that("lca() refuses covariates and categories it cannot use, classed", {
  df <- data.frame(A = rep(1:2, 10), B = rep(c(1, 1, 2, 2), 5), C = rep(1:2, each = 10), z = seq(0, 1, length.out = 20))
  d <- df; d$z[3] <- Inf
  expect_error(lca(cbind(A, B, C) ~ z, d, 2), class = "aspectr_error_input_value", regexp = "infinite")
  d <- df; d$z <- complex(real = df$z, imaginary = 1)
  expect_error(lca(cbind(A, B, C) ~ z, d, 2), class = "aspectr_error_input_type", regexp = "complex")
  d <- df; d$s <- "a"
  expect_error(lca(cbind(A, B, C) ~ s, d, 2), class = "aspectr_error_input_value", regexp = "at least 2 values")
  expect_error(lca(cbind(A, B, C) ~ A, df, 2), class = "aspectr_error_input_argument", regexp = "both as a manifest")
  expect_error(lca(cbind(A, B, C) ~ z + B, df, 2), class = "aspectr_error_input_argument", regexp = "both as a manifest")
  d <- df; d$z[] <- NA
  expect_error(lca(cbind(A, B, C) ~ z, d, 2), class = "aspectr_error_input_empty")
  d <- df; d$A[2] <- Inf
  expect_error(lca(d[1:3], 2), class = "aspectr_error_input_value", regexp = "infinite")
  expect_error(lca(cbind(A, B, C) ~ 1, d, 2), class = "aspectr_error_input_value", regexp = "infinite")
  expect_error(as_sptensor(data.frame(a = c(1, Inf), b = c(1, 2))), class = "aspectr_error_input_value")
})

test_that("a shard without counts is fitted as documents without counts, as in memory", {
  set.seed(15)
  x <- matrix(rpois(15 * 8, 2) * 3, 15, 8, dimnames = list(paste0("d", 1:15), paste0("w", 1:8)))
  x[1:4, ] <- 0
  x[9:10, ] <- 0
  parts <- list(x[1:4, ], x[5:8, ], x[9:10, ], x[11:15, ])
  dir <- shard_tempdir()
  on.exit(unlink(dir, recursive = TRUE), add = TRUE)
  files <- write_shards(parts, dir)
  rds <- file.path(dir, paste0("r", 1:4, ".rds"))
  for (i in 1:4) saveRDS(Matrix::Matrix(parts[[i]], sparse = TRUE), rds[i])
  expect_identical(files$meta[[1]]$nnz, 0)
  q <- function(e) suppressMessages(e)
  for (sh in list(shards(parts), files, shards(rds))) {
    for (args in list(list(loss = "kl"), list(loss = "tsallis", q = 0.6), list(loss = "kl", tempering = 0.9))) {
      a <- q(do.call(plsa, c(list(x, 3, method = "em", seed = 1, max_iter = 40, tol = 0), args)))
      b <- q(do.call(plsa, c(list(sh, 3, method = "em", seed = 1, max_iter = 40, tol = 0), args)))
      expect_equal(b$factors, a$factors, tolerance = 1e-10)
      expect_equal(b$objective, a$objective, tolerance = 1e-10)
    }
    for (args in list(list(method = "hals"), list(method = "mu"), list(loss = "kl", method = "cd"))) {
      a <- q(do.call(nmf, c(list(x, 3, init = "random", seed = 1, max_iter = 40, tol = 0), args)))
      b <- q(do.call(nmf, c(list(sh, 3, init = "random", seed = 1, max_iter = 40, tol = 0), args)))
      expect_equal(b$W, a$W, tolerance = 1e-10)
      expect_equal(b$H, a$H, tolerance = 1e-10)
    }
    a <- q(ntf(x, 2, loss = "kl", method = "mu", seed = 1, max_iter = 40, tol = 0))
    b <- q(ntf(sh, 2, loss = "kl", method = "mu", seed = 1, max_iter = 40, tol = 0))
    expect_equal(b$factors, a$factors, tolerance = 1e-10)
  }
  # N-way
  y <- array(rpois(4 * 3 * 5, 2), c(4, 3, 5))
  y[1:2, , ] <- 0
  a <- plsa(y, 2, method = "em", seed = 1, max_iter = 40, tol = 0)
  b <- plsa(shards(list(y[1:2, , , drop = FALSE], y[3:4, , , drop = FALSE])), 2, method = "em", seed = 1,
            max_iter = 40, tol = 0)
  expect_equal(b$factors, a$factors, tolerance = 1e-10)
  # converting shards of any kind to .shard files keeps them (and their empty ones)
  conv <- write_shards(shards(rds), file.path(dir, "conv"))
  expect_identical(vapply(conv$meta, function(m) m$nnz, numeric(1)), vapply(files$meta, function(m) m$nnz, numeric(1)))
  expect_equal(plsa(conv, 2, method = "em", seed = 1, max_iter = 20, tol = 0)$factors,
               plsa(files, 2, method = "em", seed = 1, max_iter = 20, tol = 0)$factors, tolerance = 1e-14)
  # ... but data without any count is still refused
  expect_error(plsa(shards(list(x[1:2, ], x[3:4, ])), 2), class = "aspectr_error_input_empty")
  expect_error(write_shards(list(x[1:2, ], x[3:4, ]), file.path(dir, "none")), class = "aspectr_error_input_empty")
  # a shard with no rows is not data
  expect_error(shards(list(x[0, ], x[5:8, ])), class = "aspectr_error_shard")
})

test_that("a shard without counts on a cluster", {
  skip_on_cran()
  set.seed(16)
  x <- matrix(rpois(12 * 6, 2), 12, 6)
  x[1:6, ] <- 0
  cl <- psock_cluster()
  on.exit(parallel::stopCluster(cl), add = TRUE)
  sh <- shards(list(x[1:6, ], x[7:12, ]))
  a <- plsa(x, 2, method = "em", seed = 2, max_iter = 30, tol = 0)
  b <- plsa(sh, 2, method = "em", seed = 2, max_iter = 30, tol = 0, cluster = cl)
  expect_equal(b$factors, a$factors, tolerance = 1e-10)
})

test_that("shards() and write_shards() refuse paths that would misfit or miswrite", {
  x <- matrix(rpois(40, 3) + 1, 8, 5)
  dir <- shard_tempdir()
  on.exit(unlink(dir, recursive = TRUE), add = TRUE)
  sh <- write_shards(x, dir, 2)
  f1 <- sh$sources[[1]]$path
  expect_error(shards(c(f1, f1)), class = "aspectr_error_input_value", regexp = "each file once")
  expect_error(shards(c(f1, file.path(dirname(f1), ".", basename(f1)))), class = "aspectr_error_input_value",
               regexp = "each file once")
  file <- file.path(dir, "a_file")
  writeLines("x", file)
  expect_error(write_shards(x, file, 2), class = "aspectr_error_input_value", regexp = "dir")
  expect_error(write_shards(x, file.path(file, "sub"), 2), class = "aspectr_error_input_value", regexp = "dir")
  expect_error(write_shards(x, dir, 2, prefix = "../up"), class = "aspectr_error_input_value", regexp = "prefix")
  expect_error(write_shards(x, dir, 2, prefix = "a/b"), class = "aspectr_error_input_value", regexp = "prefix")
  expect_false(file.exists(file.path(dirname(dir), "up1.shard")))
  expect_error(write_shards(shards(list(x[1:4, ], x[5:8, ])), dir, n = 20), class = "aspectr_error_input_argument", regexp = "20")
  fr <- shards(list(data.frame(a = 1:2, b = 2:1), data.frame(a = 2:1, b = 1:2)))
  expect_error(write_shards(fr, dir), class = "aspectr_error_input_type")
  # factor_dir errors name the argument
  expect_error(plsa(sh, 2, factor_dir = file), class = "aspectr_error_input_value", regexp = "factor_dir")
  err <- tryCatch(plsa(sh, 2, factor_dir = file.path(file, "sub")), error = function(e) e)
  expect_s3_class(err, "aspectr_error_shard")
  expect_match(conditionMessage(err), "factor_dir", fixed = TRUE)
})

test_that("a cluster whose workers lack aspectr is said so, for any number of workers", {
  skip_on_cran()
  x <- matrix(rpois(40, 3) + 1, 8, 5)
  sh <- shards(list(x[1:4, ], x[5:8, ]))
  # a worker whose libraries hold no aspectr (only R's own): started with
  # the library variables pointing at an empty directory
  empty <- tempfile("lib")
  dir.create(empty)
  vars <- c("R_LIBS_SITE", "R_LIBS_USER", "R_LIBS")
  old <- Sys.getenv(vars, unset = NA)
  Sys.setenv(R_LIBS_SITE = empty, R_LIBS_USER = empty, R_LIBS = empty)
  cl <- tryCatch(parallel::makeCluster(1), finally = {
    for (v in vars) if (is.na(old[[v]])) Sys.unsetenv(v) else do.call(Sys.setenv, as.list(old[v]))
  })
  on.exit(parallel::stopCluster(cl), add = TRUE)
  has <- unlist(parallel::clusterCall(cl, function() requireNamespace("aspectr", quietly = TRUE)))
  skip_if(has, "aspectr is still reachable from the worker")
  err <- tryCatch(plsa(sh, 2, cluster = cl), error = function(e) e)
  expect_s3_class(err, "aspectr_error_cluster")
  expect_match(conditionMessage(err), "not available on worker 1 of the 1 worker", fixed = TRUE)
})

test_that("as_dtm() refuses NA levels and list columns, classed", {
  long <- data.frame(doc = addNA(factor(c("a", NA, "b"))), term = c("x", "y", "z"), n = 1:3)
  expect_error(as_dtm(long, doc, term, n), class = "aspectr_error_input_value", regexp = "NA")
  long <- data.frame(doc = c("a", "b"), term = c("x", "y"), n = 1:2)
  long$doc <- I(list(1, 2))
  expect_error(as_dtm(long, doc, term, n), class = "aspectr_error_input_type")
  long <- data.frame(doc = c("a", "b"), term = c("x", "y"), n = 1:2)
  long$term <- list("x", "y")
  expect_error(as_dtm(long, doc, term, n), class = "aspectr_error_input_type")
  # a factor with an unused NA level is fine
  long <- data.frame(doc = factor(c("a", "b"), levels = c("a", "b", NA), exclude = NULL), term = c("x", "y"), n = 1:2)
  expect_identical(dim(as_dtm(long, doc, term, n)), c(2L, 2L))
})

test_that("rank sweeps refuse repeated ranks", {
  x <- matrix(rpois(60, 3) + 1, 12, 5)
  expect_error(plsa_rank(x, k = c(2, 2)), class = "aspectr_error_input_argument", regexp = "distinct")
  expect_error(nmf_rank(x, k = c(1, 2, 2)), class = "aspectr_error_input_argument", regexp = "distinct")
  lc <- data.frame(a = c(1, 2, 1, 2, 1, 2, 2, 1, 1, 2), b = c(1, 1, 2, 2, 1, 2, 1, 2, 2, 1))
  expect_error(lca_rank(lc, k = c(2, 2)), class = "aspectr_error_input_argument", regexp = "distinct")
})
