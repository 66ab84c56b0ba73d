test_that("bad data give classed errors naming the argument", {
  x <- tiny_counts()
  neg <- x; neg[1, 1] <- -1
  na <- x; na[2, 2] <- NA
  nan <- x; nan[2, 2] <- NaN
  inf <- x; inf[3, 3] <- Inf
  expect_error(plsa(neg, 2), class = "aspectr_error_input_value")
  # NA and NaN are missing cells (every loss); what cannot take them refuses
  expect_identical(plsa(na, 2, max_iter = 5)$weighting$type, "missing")
  expect_identical(plsa(nan, 2, max_iter = 5)$weighting$type, "missing")
  expect_identical(plsa(na, 2, loss = "l2", max_iter = 5)$weighting$type, "missing")
  expect_identical(plsa(nan, 2, loss = "tsallis", max_iter = 5)$weighting$type, "missing")
  expect_error(plsa(na, 2, loss = "l2", prior = 0.1), class = "aspectr_error_input_argument")
  expect_error(plsa(inf, 2), class = "aspectr_error_input_value")
  expect_error(plsa(x * 0, 2), class = "aspectr_error_input_empty")
  expect_error(plsa(x[0, ], 2), class = "aspectr_error_input_empty")
  expect_error(plsa(letters, 2), class = "aspectr_error_input_type")
  expect_error(plsa(as.data.frame(x), 2), class = "aspectr_error_input_type")
  expect_error(plsa(Matrix::Matrix(neg, sparse = TRUE), 2), class = "aspectr_error_input")
  expect_snapshot(plsa(neg, 2), error = TRUE)
  expect_snapshot(plsa(na, 2, loss = "tsallis", tempering = 0.5), error = TRUE)
  expect_snapshot(plsa(x * 0, 2), error = TRUE)
  expect_snapshot(plsa(as.data.frame(x), 2), error = TRUE)
})

test_that("bad arguments give classed errors naming the argument", {
  x <- tiny_counts()
  expect_error(plsa(x, 0), class = "aspectr_error_input_argument")
  expect_error(plsa(x, 2.5), class = "aspectr_error_input_argument")
  expect_error(plsa(x, min(dim(x)) + 1), class = "aspectr_error_input_argument")
  expect_error(plsa(x, "2"), class = "aspectr_error_input_argument")
  expect_error(plsa(x, 2, loss = "poisson"), class = "aspectr_error_input_argument")
  expect_error(plsa(x, 2, loss = "tsallis", q = 1), class = "aspectr_error_input_argument")
  expect_error(plsa(x, 2, loss = "tsallis", q = 0), class = "aspectr_error_input_argument")
  expect_error(plsa(x, 2, tempering = 1.5), class = "aspectr_error_input_argument")
  expect_error(plsa(x, 2, tempering = 0), class = "aspectr_error_input_argument")
  expect_error(plsa(x, 2, loss = "l2", tempering = 0.5), class = "aspectr_error_input_argument")
  expect_error(plsa(x, 2, nrun = 0), class = "aspectr_error_input_argument")
  expect_error(plsa(x, 2, threads = -1), class = "aspectr_error_input_argument")
  expect_error(plsa(x, 2, verbose = NA), class = "aspectr_error_input_argument")
  expect_error(plsa(x, 2, maxiter = 10), class = "aspectr_error_input_argument")
  expect_snapshot(plsa(x, 0), error = TRUE)
  expect_snapshot(plsa(x, 100), error = TRUE)
  expect_snapshot(plsa(x, 2, loss = "poisson"), error = TRUE)
  expect_snapshot(plsa(x, 2, loss = "tsallis", q = 2), error = TRUE)
  expect_snapshot(plsa(x, 2, maxiter = 10), error = TRUE)
})

test_that("newdata that cannot be matched is an error", {
  x <- tiny_counts()
  fit <- plsa(x, 2, seed = 1, max_iter = 20)
  bad_names <- x; colnames(bad_names) <- paste0("zz", seq_len(ncol(x)))
  expect_error(predict(fit, bad_names), class = "aspectr_error_input_newdata")
  expect_error(predict(fit, unname(x)[, -1]), class = "aspectr_error_input_newdata")
  neg <- x; neg[1, 1] <- -3
  expect_error(predict(fit, neg), class = "aspectr_error_input_value")
  expect_error(predict(fit, x, type = "prob"), class = "aspectr_error_input_argument")
  expect_snapshot(predict(fit, bad_names), error = TRUE)
  expect_snapshot(predict(fit, unname(x)[, -1]), error = TRUE)
})

test_that("non-finite numbers, out-of-range seeds and missing arguments are classed errors", {
  x <- tiny_counts()
  expect_error(nmf(x, 2, loss = "beta", beta = Inf), class = "aspectr_error_input_argument")
  expect_error(nmf(x, 2, method = "mu", eps = Inf), class = "aspectr_error_input_argument")
  expect_error(symnmf(tcrossprod(x[, 1:3]), 2, L1 = Inf), class = "aspectr_error_input_argument")
  expect_error(symnmf(tcrossprod(x[, 1:3]), 2, coupling = Inf), class = "aspectr_error_input_argument")
  expect_error(plsa(x, 2, seed = 2^40), class = "aspectr_error_input_argument")
  expect_error(plsa(x), class = "aspectr_error_input_argument")
  expect_snapshot(nmf(x, 2, loss = "beta", beta = Inf), error = TRUE)
  expect_snapshot(plsa(x, 2, tol = Inf), error = TRUE)
  expect_snapshot(plsa(x, 2, seed = 2^40), error = TRUE)
  expect_snapshot(hypergraph_affinity(x, 3, seed = "a"), error = TRUE)
  expect_snapshot(plsa(x), error = TRUE)
  expect_snapshot(nmf(), error = TRUE)
  # the ends of the integer range are valid seeds, and give the fit a seed gives
  a <- plsa(x, 2, seed = .Machine$integer.max, max_iter = 5)
  b <- plsa(x, 2, seed = .Machine$integer.max, max_iter = 5)
  expect_identical(a$factors, b$factors)
  expect_identical(a$seed, .Machine$integer.max)
  expect_s3_class(plsa(x, 2, seed = -.Machine$integer.max, max_iter = 5), "aspectr_plsa")
  # whole numbers are accepted as doubles and returned as integers
  expect_identical(plsa(x, 2.0, max_iter = 5, seed = 3)$k, 2L)
  # the class can be caught as a whole
  caught <- tryCatch(plsa(x, 2, q = NaN), aspectr_error_input = function(e) "caught")
  expect_identical(caught, "caught")
})

test_that("unknown arguments of methods are errors; graphics parameters still reach plot()", {
  x <- tiny_counts()
  fit <- plsa(x, 2, seed = 1, max_iter = 20)
  expect_error(predict(fit, x, foo = 1), class = "aspectr_error_input_argument")
  expect_error(terms(fit, 3, foo = 1), class = "aspectr_error_input_argument")
  expect_error(print(fit, foo = 1), class = "aspectr_error_input_argument")
  expect_snapshot(predict(fit, x, maxiter = 5), error = TRUE)
  expect_snapshot(summary(fit, 3, 4), error = TRUE)
  # legitimate arguments still work and give the same answer as before
  expect_identical(predict(fit, x, max_iter = 50), predict(fit, x, max_iter = 50))
  expect_identical(dim(terms(fit, 3)), c(3L, 2L))
  grDevices::pdf(NULL)
  on.exit(grDevices::dev.off(), add = TRUE)
  expect_invisible(plot(fit, type = "weights", col = "red", border = NA))
  expect_invisible(plot(fit, type = "terms", n = 3, topics = 2, col = "grey"))
  expect_error(plot(fit, topics = 3), class = "aspectr_error_input_argument")
})

test_that("nnz() counts what the package accepts and refuses the rest", {
  m <- matrix(c(0, 1, 2, 0, 0, 3), 2)
  expect_identical(nnz(m), 3L)
  expect_identical(nnz(m > 0), 3L)
  expect_equal(nnz(Matrix::Matrix(m, sparse = TRUE)), 3)
  expect_equal(nnz(Matrix::Matrix(m, sparse = FALSE)), 3)
  expect_identical(nnz(as_sptensor(array(c(0, 1, 0, 2, 0, 0, 3, 0), c(2, 2, 2)))), 3L)
  s <- symtensor(rbind(c(1, 2, 3), c(1, 1, 2)), c(2, 5))
  expect_equal(nnz(s), 6 + 3)  # every distinct permutation of the stored sets
  if (requireNamespace("slam", quietly = TRUE)) {
    expect_identical(nnz(slam::as.simple_triplet_matrix(m)), 3L)
  }
  expect_error(nnz("a"), class = "aspectr_error_input_type")
  expect_error(nnz(c(1, 0, 2)), class = "aspectr_error_input_type")
  expect_error(nnz(matrix(c(1, NA), 1)), class = "aspectr_error_input_value")
  expect_snapshot(nnz("a"), error = TRUE)
})

test_that("adjusted_rand_index() refuses NA unless na.rm = TRUE, which drops those objects", {
  x <- c(1, 1, 2, 2, 3, NA, 3)
  y <- c("a", "a", "b", "b", "b", "c", NA)
  expect_error(adjusted_rand_index(x, y), class = "aspectr_error_input_value")
  keep <- !(is.na(x) | is.na(y))
  expect_identical(adjusted_rand_index(x, y, na.rm = TRUE),
                   adjusted_rand_index(x[keep], y[keep]))
  # known answer: {1,2},{3,4},{5} against {1,2},{3,4,5}: index 2, expected
  # 2 * 4 / 10 = 0.8, maximum 3, ARI (2 - 0.8) / (3 - 0.8) = 6 / 11
  expect_equal(adjusted_rand_index(x[keep], y[keep]), 6 / 11, tolerance = 1e-14)
  expect_error(adjusted_rand_index(c(0.2, 0.7), 1:2), class = "aspectr_error_input_argument")
  expect_snapshot(adjusted_rand_index(x, y), error = TRUE)
})

test_that("lca_supervised() takes labels of any discrete type and refuses continuous ones", {
  d <- data.frame(a = c(1, 2, 1, 2, 1, 2, 2, 1), b = c(1, 1, 2, 2, 1, 2, 1, 2))
  cl <- c(1, 1, 1, 2, 2, 2, 2, 1)
  f1 <- lca_supervised(d, cl)
  f2 <- lca_supervised(d, factor(cl))
  f3 <- lca_supervised(d, as.character(cl))
  expect_equal(f1$probs, f2$probs)
  expect_equal(f1$probs, f3$probs)
  expect_equal(unname(f1$P), c(0.5, 0.5))
  expect_error(lca_supervised(d, cl + 0.1), class = "aspectr_error_input_argument")
  expect_error(lca_supervised(d, cl[-1]), class = "aspectr_error_input_argument")
  expect_snapshot(lca_supervised(d, cl + 0.1), error = TRUE)
})

test_that("input errors raised while the data are prepared name the fitter's call, in memory and on shards", {
  # (the data's place is an object made by the fitter; its checks run after
  # it is made and must still name nmf() or ntf(), not NULL)
  set.seed(1)
  x <- matrix(rpois(60, 3), 12, 5)
  a <- array(rpois(60, 2), c(5, 4, 3))
  sh <- shards(list(x[1:6, ], x[7:12, ]))
  called <- function(expr, fun) {
    e <- tryCatch(expr, error = identity)
    expect_s3_class(e, "aspectr_error_input")
    expect_identical(as.character(conditionCall(e)[[1]]), fun)
  }
  called(ntf(-a, 2), "ntf")
  called(ntf(shards(list(a[1:2, , ], a[3:5, , ])), 2, mode_weights = list(rep(0, 5), NULL, NULL)), "ntf")
  called(nmf(x, 2, loss = "beta", beta = 0, eps = 0), "nmf")
  called(nmf(sh, 2, loss = "beta", beta = 0, eps = 0), "nmf")
  called(nmf(sh, 2, row_weights = rep(0, 12)), "nmf")
  old <- options(aspectr.transpose_limit = "a")
  on.exit(options(old), add = TRUE)
  called(nmf(x, 2, seed = 1), "nmf")
})

test_that("plsa() with missing cells or weights checks its start as plsa() does and names its own call", {
  set.seed(1)
  x <- matrix(rpois(20, 3), 5, 4)
  nomask <- matrix(FALSE, 5, 4)
  sh <- shards(list(x[1:2, ], x[3:5, ]))
  called <- function(expr, cls, fun = "plsa") {
    e <- expect_error(expr, class = cls)
    # (they raised R's "subscript out of bounds", warned from sweep(), took
    # a start of wrong weights, or named an inlined nmf() and its `init$W`)
    expect_identical(as.character(conditionCall(e)[[1]]), fun)
    expect_false(grepl("init$W", conditionMessage(e), fixed = TRUE))
  }
  for (d in list(x, sh)) {
    called(plsa(d, 1, init = list(lambda = 1, factors = list(matrix(1, 5, 1))), mask = nomask),
           "aspectr_error_input_argument")
    called(plsa(d, 2, init = list(lambda = c(0.5, 0.5, 0.1), factors = list(matrix(1, 5, 2), matrix(1, 4, 2))),
                weights = matrix(1, 5, 4)), "aspectr_error_input_argument")
    called(plsa(d, 2, init = list(lambda = c(0.5, 0.5), factors = list(matrix(1, 5, 2), matrix(1, 5, 2))),
                mask = nomask), "aspectr_error_input_argument")
    called(plsa(d, 0, mask = nomask), "aspectr_error_input_argument")
    called(plsa(d, 2, weights = matrix(1, 5, 4), nrun = 0), "aspectr_error_input_argument")
    called(plsa(d, 2, mask = matrix(TRUE, 5, 4)), "aspectr_error_input")
  }
  expect_no_warning(try(plsa(x, 2.5, row_weights = runif(5)), silent = TRUE))
  # a fit to start from is a start (it was dropped for a random one): one
  # iteration from a converged fit stays at it
  f0 <- suppressMessages(plsa(x, 2, seed = 1, tol = 1e-12, max_iter = 2000))
  g <- suppressMessages(plsa(x, 2, mask = nomask, init = f0, max_iter = 1))
  expect_equal(g$factors, f0$factors, tolerance = 1e-4, ignore_attr = TRUE)
  expect_equal(g$lambda, f0$lambda, tolerance = 1e-4, ignore_attr = TRUE)
})

test_that("fuzzed inputs get the data's own errors: empty shards, duplicated names, sparse NA data", {
  z <- matrix(0, 4, 3)
  zs <- shards(list(z[1:2, ], z[3:4, ]))
  msg <- conditionMessage(expect_error(ntf(z, 1), class = "aspectr_error_input_empty"))
  # (ntf() of shards said k must be between 1 and 0; nmf() and plsa() had
  # their own wording)
  for (f in list(ntf, nmf, plsa)) {
    expect_identical(conditionMessage(expect_error(f(zs, 1), class = "aspectr_error_input_empty")), msg)
  }
  # lca(): a name twice (it fitted, renamed, and its predict() then failed)
  df <- data.frame(V1 = gl(2, 15), V1 = factor(rep(c("a", "b"), 15)), V3 = gl(3, 10), check.names = FALSE)
  e <- expect_error(lca(df, 2, seed = 1, nrun = 1), "more than one column named", class = "aspectr_error_input_value")
  expect_identical(as.character(conditionCall(e)[[1]]), "lca")
  # augment() of an ntf() fit of a sparse matrix with NA, given the data
  # (which() of a sparse logical failed)
  set.seed(2)
  x <- matrix(rpois(24, 3) + 1, 6, 4)
  x[2] <- NA
  xs <- methods::as(Matrix::Matrix(x, sparse = TRUE), "CsparseMatrix")
  f <- suppressMessages(ntf(xs, 1, seed = 1, max_iter = 5))
  a <- augment(f, xs)
  expect_equal(a, augment(f, x))
  expect_identical(nrow(a), 24L)
  expect_identical(sum(!a$observed), 1L)
  # predict() of an nmf() fit names its call for bad newdata (it named
  # nmf_fold())
  g <- suppressMessages(nmf(x[-1, ], 2, seed = 1, max_iter = 20))
  nd <- x[3:4, ]
  nd[1] <- -1
  e <- expect_error(predict(g, nd), class = "aspectr_error_input_value")
  expect_identical(as.character(conditionCall(e)[[1]]), "predict")
})

test_that("sntf() names its call for data its converter refuses; nmf()'s predict() of no rows gives none", {
  # (the errors named as_symtensor(x))
  for (x in list(array(c(1, 2, 3, 4), c(2, 2)), -diag(2), Matrix::Matrix(c(1, 2, 3, 4), 2, 2, sparse = TRUE))) {
    e <- expect_error(sntf(x, 1), class = "aspectr_error_input")
    expect_identical(as.character(conditionCall(e)[[1]]), "sntf")
  }
  # the converter called by the user still names itself
  e <- expect_error(as_symtensor(array(c(1, 2, 3, 4), c(2, 2))), class = "aspectr_error_input")
  expect_identical(as.character(conditionCall(e)[[1]]), "as_symtensor")
  # predict() of an nmf() fit for no new rows: none, as plsa()'s (it was
  # refused as "not 5 x 0" for newdata of 0 x 5)
  set.seed(1)
  x <- matrix(rpois(30, 3) + 1, 6, 5)
  f <- suppressMessages(nmf(x, 2, seed = 1))
  p <- predict(f, x[0, ])
  expect_identical(dim(p), c(0L, 2L))
  expect_identical(colnames(p), colnames(f$W))
  expect_identical(predict(f, x[0, ], type = "class"), integer(0))
  expect_identical(dim(predict(suppressMessages(plsa(x, 2, seed = 1)), x[0, ])), c(0L, 2L))
})

test_that("bad arguments get the same refusal in memory and on shards", {
  # (cases where the two backends checked in another order, named another
  # argument or worded another refusal)
  set.seed(42)
  X <- matrix(stats::rpois(600, 3), 40, 15)
  XS <- shards(list(X[1:20, ], X[21:40, ]))
  A <- array(stats::rpois(600, 2), c(20, 6, 5))
  AS <- shards(list(A[1:10, , ], A[11:20, , ]))
  Z <- X * 0
  ZS <- shards(list(Z[1:20, ], Z[21:40, ]))
  AZ <- A * 0
  AZS <- shards(list(AZ[1:10, , ], AZ[11:20, , ]))
  DF <- as.data.frame(lapply(1:4, function(j) factor(sample(c("a", "b", "c"), 60, TRUE))))
  names(DF) <- paste0("v", 1:4)
  DFS <- shards(list(DF[1:30, ], DF[31:60, ]))
  refusal <- function(expr) {
    e <- tryCatch({
      force(expr)
      NULL
    }, error = identity)
    expect_s3_class(e, "aspectr_error")
    list(class = class(e), arg = e$arg, message = conditionMessage(e))
  }
  same <- function(mem, sh, message = TRUE) {
    m <- refusal(mem)
    s <- refusal(sh)
    expect_identical(s$class, m$class)
    expect_identical(s$arg, m$arg)
    if (message) expect_identical(s$message, m$message)
  }
  mk <- array(FALSE, dim(A))
  same(plsa(X, 2, factor_dir = 5), plsa(XS, 2, factor_dir = 5))
  same(nmf(X, 2, factor_dir = 5, callback = "x"), nmf(XS, 2, factor_dir = 5, callback = "x"))
  same(ntf(A, 2, mask = mk, method = "nope", factor_dir = 5), ntf(AS, 2, mask = mk, method = "nope", factor_dir = 5))
  same(plsa(X, 2, mode_weights = list(1:3)), plsa(XS, 2, mode_weights = list(1:3)))
  same(plsa(X, 2, mode_weights = list(rep(-1, 40), NULL)), plsa(XS, 2, mode_weights = list(rep(-1, 40), NULL)))
  same(plsa(X, 2, row_weights = rep(1, 40), cluster = "x", normalize = NA),
       plsa(XS, 2, row_weights = rep(1, 40), cluster = "x", normalize = NA))
  same(plsa(X, 2, loss = "tsallis", row_weights = rep(1, 40), cluster = "x", q = 5),
       plsa(XS, 2, loss = "tsallis", row_weights = rep(1, 40), cluster = "x", q = 5))
  same(ntf(A, 2, method = "nope"), ntf(AS, 2, method = "nope"))
  same(ntf(A, 2, method = "cd"), ntf(AS, 2, method = "cd"))
  same(plsa(X, 2, loss = "tsallis", row_weights = rep(1, 40), method = "nope"),
       plsa(XS, 2, loss = "tsallis", row_weights = rep(1, 40), method = "nope"))
  same(plsa(Z, 0), plsa(ZS, 0))
  same(plsa(AZ, 2), plsa(AZS, 2))
  same(nmf(Z, 2, mask = matrix(TRUE, 3, 3)), nmf(ZS, 2, mask = matrix(TRUE, 3, 3)))
  same(nmf(Z, 2, row_weights = rep(1, 40)), nmf(ZS, 2, row_weights = rep(1, 40)))
  same(plsa(Z, 2, row_weights = rep(1, 40)), plsa(ZS, 2, row_weights = rep(1, 40)))
  same(lca(DF, 2, group = "v1", invariance = "x"), lca(DFS, 2, group = "v1", invariance = "x"))
  # options shards cannot take are refused naming the one given (psu was
  # refused as `weights`)
  for (a in c("weights", "psu", "strata")) {
    e <- expect_error(do.call(lca, c(list(DFS, 2), stats::setNames(list(rep(1, 60)), a))),
                      class = "aspectr_error_input_argument")
    expect_identical(e$arg, a)
  }
  # fractional data warn before k is refused, in memory and on shards
  F <- X + 0.5
  for (d in list(F, shards(list(F[1:20, ], F[21:40, ])))) {
    expect_warning(expect_error(plsa(d, 0), class = "aspectr_error_input"), class = "aspectr_warning_noncount")
  }
})
