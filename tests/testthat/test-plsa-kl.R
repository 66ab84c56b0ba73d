fit_model <- function(fit) fitted(fit, type = "probability")

test_that("EM and its SQUAREM match plain-R references from the same start", {
  x <- tiny_counts()
  for (beta in c(1, 0.7)) for (method in c("em", "squarem")) {
    fit <- plsa(x, 3, method = method, seed = 11, max_iter = 25, tol = 0, tempering = beta, threads = 1)
    ref <- (if (method == "em") ref_em else ref_squarem)(x, ref_start(x, 3, 11), 25, beta = beta)
    expect_equal(fit_model(fit), ref_model(ref$lambda, ref$U, ref$V), tolerance = 1e-10, ignore_attr = TRUE)
    expect_equal(sort(unname(fit$lambda)), sort(ref$lambda), tolerance = 1e-10)
  }
})

test_that("EM keeps every constraint and never increases the KL divergence", {
  x <- tiny_counts(2, 30, 25, 4)
  fit <- plsa(x, 4, seed = 1, max_iter = 300, tol = 0, threads = 1)
  expect_equal(sum(fit$lambda), 1, tolerance = 1e-10)
  expect_true(all(abs(colSums(fit$factors[[1]]) - 1) < 1e-10))
  expect_true(all(abs(colSums(fit$factors[[2]]) - 1) < 1e-10))
  expect_true(all(unlist(fit$factors) >= 0))
  expect_length(fit$objective, 300)
  expect_true(all(diff(c(fit$initial, fit$objective)) <= 1e-13))
  # the reported objective is the KL divergence of the returned model
  G <- x / sum(x); P <- fit_model(fit)
  expect_equal(fit$value, sum(G[G > 0] * log(G[G > 0] / P[G > 0])), tolerance = 1e-10)
})

test_that("k = 1 under KL is the product of the marginals, without iterations", {
  x <- tiny_counts(3)
  x[2, ] <- 0  # an empty document
  fit <- plsa(x, 1)
  expect_identical(fit$iterations, 0L)
  expect_equal(unname(fit$lambda), 1)
  expect_equal(unname(fit$factors[[1]][, 1]), rowSums(x) / sum(x), tolerance = 1e-15, ignore_attr = TRUE)
  expect_equal(unname(fit$factors[[2]][, 1]), colSums(x) / sum(x), tolerance = 1e-15, ignore_attr = TRUE)
  # ... and EM started anywhere stays there
  em <- plsa(x, 2, seed = 1, max_iter = 2000, tol = 1e-12)
  expect_gte(em$value, 0)
  expect_lte(em$value, fit$value + 1e-12)
})

test_that("all input classes give the same fit as a dense matrix", {
  x <- tiny_counts(4)
  ref <- plsa(x, 3, seed = 5, max_iter = 50, threads = 1)
  same <- function(fit) {
    expect_equal(fit$lambda, ref$lambda, tolerance = 1e-12)
    expect_equal(fit$factors, ref$factors, tolerance = 1e-12)
    expect_equal(fit$objective, ref$objective, tolerance = 1e-12)
  }
  same(plsa(Matrix::Matrix(x, sparse = TRUE), 3, seed = 5, max_iter = 50, threads = 1))
  same(plsa(methods::as(Matrix::Matrix(x, sparse = TRUE), "TsparseMatrix"), 3, seed = 5, max_iter = 50, threads = 1))
  same(plsa(as.table(x), 3, seed = 5, max_iter = 50, threads = 1))
  storage.mode(x) <- "integer"
  same(plsa(x, 3, seed = 5, max_iter = 50, threads = 1))
  skip_if_not_installed("slam")
  same(plsa(slam::as.simple_triplet_matrix(x), 3, seed = 5, max_iter = 50, threads = 1))
})

test_that("a dgCMatrix is fitted in place, with the numbers of a copy", {
  # plsa() takes a dgCMatrix's cells by column with its own values (no
  # copy), reads them in place and normalizes by scales; coordinate descent
  # groups them by row through their positions. A dgTMatrix (or a stored
  # zero) is copied to the same order: the same arithmetic, the same fit
  set.seed(11)
  X <- Matrix::rsparsematrix(60, 40, 0.15, rand.x = function(n) stats::rpois(n, 3) + 1)
  for (m in c("cd", "em", "squarem")) {
    a <- plsa(X, 3, method = m, seed = 2, max_iter = 40, threads = 1)
    b <- plsa(methods::as(X, "TsparseMatrix"), 3, method = m, seed = 2, max_iter = 40, threads = 1)
    expect_identical(a$factors, b$factors)
    expect_identical(a$objective, b$objective)
    # and a dense matrix (cells by row) up to rounding
    r <- plsa(as.matrix(X), 3, method = m, seed = 2, max_iter = 40, threads = 1)
    expect_equal(a$factors, r$factors, tolerance = 1e-12)
    expect_equal(a$objective, r$objective, tolerance = 1e-12)
  }
  Z <- X
  Z@x[3] <- 0  # a stored zero: the values are copied without it
  a <- plsa(Z, 3, seed = 2, max_iter = 40, threads = 1)
  b <- plsa(Matrix::drop0(Z), 3, seed = 2, max_iter = 40, threads = 1)
  expect_identical(a$factors, b$factors)
  expect_identical(a$objective, b$objective)
  # the input is not changed by the fit
  X0 <- X@x + 0
  for (m in c("cd", "em", "squarem")) invisible(plsa(X, 3, method = m, seed = 2, max_iter = 5))
  invisible(plsa(X, 3, loss = "tsallis", seed = 2, max_iter = 5))
  expect_identical(X@x, X0)
})

test_that("EM over a tall dgCMatrix, by blocks of rows, equals EM over its cells by row", {
  # a dgCMatrix of more than 16384 rows (here 31360: two blocks) is passed
  # by EM in blocks of rows
  # (each block's columns in turn); every cell must be visited once, with
  # the statistics of the pass by row (a dense matrix): the same factors up
  # to rounding, with one thread or two (threads split the blocks)
  set.seed(12)
  X <- Matrix::rsparsematrix(40000, 30, nnz = 60000, rand.x = function(n) stats::rpois(n, 3) + 1)
  X <- X[Matrix::rowSums(X) > 0, ]
  D <- as.matrix(X)
  for (m in c("em", "squarem")) {
    r <- plsa(D, 3, method = m, seed = 4, max_iter = 25, tol = 0, threads = 1)
    for (th in 1:2) {
      a <- plsa(X, 3, method = m, seed = 4, max_iter = 25, tol = 0, threads = th)
      expect_equal(a$factors, r$factors, tolerance = 1e-12)
      expect_equal(a$lambda, r$lambda, tolerance = 1e-12)
      expect_equal(a$objective, r$objective, tolerance = 1e-12)
    }
  }
  # tempered EM too (its free energy uses the model's value of each cell)
  r <- plsa(D, 3, tempering = 0.8, seed = 4, max_iter = 10, tol = 0, threads = 1)
  a <- plsa(X, 3, tempering = 0.8, seed = 4, max_iter = 10, tol = 0, threads = 2)
  expect_equal(a$factors, r$factors, tolerance = 1e-10)
  expect_equal(a$objective, r$objective, tolerance = 1e-10)
})

test_that("values below the normal range are normalized without overflow", {
  # 1 / max(x) overflows for x below 2^-1022: the fit copies and divides
  x <- tiny_counts(4)
  for (m in c("cd", "em")) {
    tiny <- suppressWarnings(plsa(x * 2^-1060, 2, method = m, seed = 3, max_iter = 60, threads = 1))
    ref_m <- plsa(x, 2, method = m, seed = 3, max_iter = 60, threads = 1)
    expect_equal(tiny$factors, ref_m$factors, tolerance = 1e-10)
    expect_equal(tiny$objective, ref_m$objective, tolerance = 1e-10)
  }
})

test_that("dimnames flow to the results", {
  x <- tiny_counts()
  fit <- plsa(x, 2, seed = 1, max_iter = 20)
  expect_identical(rownames(fit$factors$documents), rownames(x))
  expect_identical(rownames(fit$factors$terms), colnames(x))
  expect_identical(rownames(topics(fit)), rownames(x))
  expect_identical(colnames(topics(fit)), c("topic_1", "topic_2"))
  expect_true(all(diff(fit$lambda) <= 0))  # topics ordered by weight
})

test_that("same seed gives identical results; seed = NULL follows set.seed()", {
  x <- tiny_counts(5, 40, 30)
  a <- plsa(x, 3, seed = 9, max_iter = 40)
  b <- plsa(x, 3, seed = 9, max_iter = 40)
  expect_identical(a$factors, b$factors)
  expect_identical(a$objective, b$objective)
  set.seed(1); c1 <- plsa(x, 3, max_iter = 40)
  set.seed(1); c2 <- plsa(x, 3, max_iter = 40)
  expect_identical(c1$factors, c2$factors)
  d <- plsa(x, 3, seed = 10, max_iter = 40)
  expect_false(isTRUE(all.equal(a$factors, d$factors)))
  # a given seed leaves the caller's RNG stream untouched
  set.seed(2); r1 <- runif(1)
  set.seed(2); invisible(plsa(x, 3, seed = 9, max_iter = 5)); r2 <- runif(1)
  expect_identical(r1, r2)
})

test_that("threaded fits equal serial fits within 1e-8", {
  set.seed(1)
  x <- Matrix::rsparsematrix(3000, 800, density = 0.02, rand.x = function(n) rpois(n, 2) + 1)
  for (loss in c("kl", "tsallis", "l2")) {
    s <- plsa(x, 5, loss = loss, seed = 1, max_iter = 30, tol = 0, threads = 1)
    p <- plsa(x, 5, loss = loss, seed = 1, max_iter = 30, tol = 0, threads = 2)
    expect_equal(p$factors, s$factors, tolerance = 1e-8)
    expect_equal(p$objective, s$objective, tolerance = 1e-8)
    p2 <- plsa(x, 5, loss = loss, seed = 1, max_iter = 30, tol = 0, threads = 2)
    expect_identical(p$factors, p2$factors)
  }
})

test_that("restarts keep the best start and run identically under future", {
  x <- tiny_counts(6, 30, 20)
  fit <- plsa(x, 3, nrun = 4, seed = 3, max_iter = 200)
  expect_length(fit$run_values, 4)
  expect_equal(fit$value, min(fit$run_values))
  expect_identical(fit$run, which.min(fit$run_values))
  skip_if_not_installed("future.apply")
  skip_on_cran()
  old <- future::plan(future::multisession, workers = 2)
  on.exit(future::plan(old), add = TRUE)
  fut <- plsa(x, 3, nrun = 4, seed = 3, max_iter = 200)
  expect_equal(fut$factors, fit$factors, tolerance = 1e-14)
  expect_identical(fut$run_values, fit$run_values)
})

test_that("convergence stops early and is reported", {
  x <- tiny_counts()
  fit <- plsa(x, 2, seed = 1, tol = 1e-4, max_iter = 5000)
  expect_true(fit$converged)
  expect_lt(fit$iterations, 5000)
  n <- length(fit$objective)
  expect_lte(abs(fit$objective[n - 1] - fit$objective[n]), 1e-4 * fit$objective[n - 1])
  # EM knows the objective of the model entering a step: its test is on the
  # two values before the last
  em <- plsa(x, 2, method = "em", seed = 1, tol = 1e-4, max_iter = 5000)
  expect_true(em$converged)
  n <- length(em$objective)
  expect_lte(abs(em$objective[n - 2] - em$objective[n - 1]), 1e-4 * em$objective[n - 2])
  expect_gt(abs(em$objective[n - 3] - em$objective[n - 2]), 1e-4 * em$objective[n - 3])
  slow <- plsa(x, 2, seed = 1, tol = 0, max_iter = 7)
  expect_false(slow$converged)
  expect_identical(slow$iterations, 7L)
})

test_that("the count-data fast path of the KL trace agrees with the exact divergence", {
  set.seed(12)
  x <- Matrix::rsparsematrix(200, 150, density = 0.05, rand.x = function(n) rpois(n, 2) + 1)
  x@x[1:20] <- x@x[1:20] + 0.37        # non-whole counts take the log path
  x@x[21:30] <- 1000                   # large counts take the log path
  d <- aspectr:::as_aspect_data(x)
  exact <- function(fit) {
    aspectr:::cpp_loss(d$idx, d$val, d$dims, unname(fit$lambda),
                       unname(fit$factors), "kl", 1, 1L)
  }
  long <- plsa(x, 4, seed = 3, max_iter = 12, tol = 0, threads = 2)
  for (it in c(1, 5, 11)) {
    short <- plsa(x, 4, seed = 3, max_iter = it, tol = 0, threads = 2)
    expect_equal(long$objective[it], exact(short), tolerance = 1e-12)
  }
  expect_equal(long$value, exact(long), tolerance = 1e-12)
})

test_that("coordinate descent's trace of N-way data is the exact divergence of each iteration's model", {
  # (the value of an iteration comes from the logs of its last mode's
  # solve, kept by the data's piece for the rule's value request: a stale
  # or misplaced value would differ here)
  set.seed(13)
  y <- array(0, c(30, 12, 8))
  y[sample(length(y), 600)] <- rpois(600, 2) + 1
  y[y > 0][1:15] <- y[y > 0][1:15] + 0.37  # non-whole counts take the log path
  d <- aspectr:::as_aspect_data(y)
  exact <- function(fit) {
    aspectr:::cpp_loss(d$idx, d$val, d$dims, unname(fit$lambda), unname(fit$factors), "kl", 1, 1L)
  }
  for (yy in list(y, round(y))) {
    d <- aspectr:::as_aspect_data(yy)
    long <- plsa(yy, 3, seed = 4, max_iter = 10, tol = 0, threads = 2)
    expect_identical(long$method, "cd")
    for (it in c(1, 4, 9)) {
      short <- plsa(yy, 3, seed = 4, max_iter = it, tol = 0, threads = 2)
      expect_equal(long$objective[it], exact(short), tolerance = 1e-12)
    }
    expect_equal(long$value, exact(long), tolerance = 1e-12)
  }
})

test_that("coordinate descent matches a plain-R reference from the same start (matrices and 3-way)", {
  # a matrix: KL-NMF coordinate descent (Hsieh and Dhillon 2011) from
  # W = U diag(lambda) sum(x), H = V', its model normalized, its
  # generalized divergence divided by sum(x)
  x <- tiny_counts()
  fit <- plsa(x, 3, method = "cd", seed = 11, max_iter = 8, tol = 0, threads = 1)
  st <- ref_start(x, 3, 11)
  ref <- ref_kl_cd(x, st$factors[[1]] * rep(st$lambda * sum(x), each = nrow(x)), t(st$factors[[2]]), 8)
  V <- ref$W %*% ref$H
  expect_equal(fit_model(fit), V / sum(V), tolerance = 1e-10, ignore_attr = TRUE)
  expect_equal(fit$objective, ref$objective / sum(x), tolerance = 1e-10)
  expect_gt(ref$halved, 0)  # the step-halving branch was exercised
  set.seed(5)
  y <- array(rpois(6 * 5 * 4, 2), c(6, 5, 4))
  y[1, , ] <- 0  # an empty slice
  fit3 <- plsa(y, 2, method = "cd", seed = 3, max_iter = 6, tol = 0, threads = 1)
  ref3 <- ref_plsa_cd(y, ref_start(y, 2, 3), 6)
  expect_equal(as.numeric(fitted(fit3, type = "probability")), as.numeric(ref3$model), tolerance = 1e-10)
  expect_equal(fit3$objective, ref3$objective, tolerance = 1e-10)
})

test_that("coordinate descent is the default, monotone, exact in its constraints and in its objective", {
  x <- tiny_counts(2, 30, 25, 4)
  fit <- plsa(x, 4, seed = 1, max_iter = 200, tol = 0, threads = 1)
  expect_identical(fit$method, "cd")
  expect_identical(fit$params$method, "cd")
  expect_equal(sum(fit$lambda), 1, tolerance = 1e-10)
  expect_true(all(abs(colSums(fit$factors[[1]]) - 1) < 1e-10))
  expect_true(all(abs(colSums(fit$factors[[2]]) - 1) < 1e-10))
  expect_true(all(unlist(fit$factors) >= 0))
  expect_true(all(diff(c(fit$initial, fit$objective)) <= 1e-13))
  G <- x / sum(x); P <- fit_model(fit)
  expect_equal(fit$value, sum(G[G > 0] * log(G[G > 0] / P[G > 0])), tolerance = 1e-10)
  # EM from the same start, with as many iterations, ends no lower
  em <- plsa(x, 4, method = "em", seed = 1, max_iter = 200, tol = 0, threads = 1)
  expect_identical(em$method, "em")
  expect_lte(fit$value, em$value + 1e-12)
})

test_that("coordinate descent of a matrix is nmf()'s KL coordinate descent, normalized", {
  # from the same start, plsa()'s fit is nmf(loss = "kl", method = "cd")'s
  # normalized: P(d | z) = W's columns and P(w | z) = H's rows on the
  # simplex, P(z) proportional to colSums(W) * rowSums(H); the objective
  # is nmf()'s divided by sum(x)
  x <- tiny_counts(7, 40, 30, 4)
  x[3, ] <- 0  # a document without counts
  for (k in c(2, 4)) {
    fit <- plsa(x, k, seed = 5, max_iter = 25, tol = 0)
    st <- ref_start(x, k, 5)
    nm <- nmf(x, k, loss = "kl", method = "cd", max_iter = 25, tol = 0,
              init = list(W = st$factors[[1]] * rep(st$lambda * sum(x), each = nrow(x)), H = t(st$factors[[2]])))
    ws <- colSums(nm$W); hs <- rowSums(nm$H)
    ord <- order(ws * hs, decreasing = TRUE)
    expect_equal(unname(fit$lambda), unname(ws * hs / sum(ws * hs))[ord], tolerance = 1e-10)
    expect_equal(unname(fit$factors$documents), unname(t(t(nm$W) / ws))[, ord], tolerance = 1e-10)
    expect_equal(unname(fit$factors$terms), unname(t(nm$H / hs))[, ord], tolerance = 1e-10)
    expect_equal(fit$objective, nm$objective / sum(x), tolerance = 1e-10)
    expect_equal(fit$initial, nm$initial / sum(x), tolerance = 1e-10)
    expect_identical(fit$iterations, nm$iterations)
    # the objective never rises, and is D(G || P) of the model after every
    # iteration (the rescaling keeps sum(W H) = sum(x))
    expect_true(all(diff(c(fit$initial, fit$objective)) <= 0))
    for (it in c(1, 3, 25)) {
      short <- plsa(x, k, seed = 5, max_iter = it, tol = 0)
      G <- x / sum(x); P <- fit_model(short)
      expect_equal(fit$objective[it], sum(G[G > 0] * log(G[G > 0] / P[G > 0])), tolerance = 1e-10)
    }
    expect_equal(fit$kl, fit$value, tolerance = 1e-12)
  }
  # staged restarts continue the kept start as if uninterrupted
  staged <- plsa(x, 3, seed = 2, nrun = 3, short_iter = 4, short_keep = 1, max_iter = 12, tol = 0)
  starts <- aspectr:::with_seed(2, lapply(1:3, function(i) aspectr:::random_start(dim(x), 3)))
  full <- plsa(x, 3, init = starts[[staged$run]], max_iter = 12, tol = 0)
  expect_equal(staged$value, full$value, tolerance = 1e-10)
  expect_equal(staged$factors, full$factors, tolerance = 1e-8)
})

test_that("a converged coordinate-descent fit is a fixed point of EM (a stationary point)", {
  x <- tiny_counts(4, 25, 20, 3)
  fit <- plsa(x, 3, seed = 2, max_iter = 5000, tol = 1e-13, threads = 1)
  expect_true(fit$converged)
  em <- suppressWarnings(plsa(x, 3, method = "em", init = fit, max_iter = 1, tol = 0))
  expect_equal(fit_model(em), fit_model(fit), tolerance = 1e-6)
})

test_that("coordinate descent: dense equals sparse, threads equal serial, same seed same result", {
  x <- tiny_counts(6, 200, 150, 4)  # large enough for two threads
  a <- plsa(x, 4, seed = 9, max_iter = 40, tol = 0, threads = 1)
  b <- plsa(Matrix::Matrix(x, sparse = TRUE), 4, seed = 9, max_iter = 40, tol = 0, threads = 2)
  c <- plsa(x, 4, seed = 9, max_iter = 40, tol = 0, threads = 1)
  expect_equal(b$objective, a$objective, tolerance = 1e-12)
  expect_equal(unname(b$factors), unname(a$factors), tolerance = 1e-12)
  expect_identical(c$factors, a$factors)
  set.seed(3)
  y <- array(rpois(9 * 8 * 7, 1), c(9, 8, 7))
  t1 <- plsa(y, 3, seed = 4, max_iter = 30, tol = 0, threads = 1)
  t2 <- plsa(as_sptensor(y), 3, seed = 4, max_iter = 30, tol = 0, threads = 2)
  expect_equal(t2$objective, t1$objective, tolerance = 1e-12)
  expect_true(all(diff(c(t1$initial, t1$objective)) <= 1e-13))
})

test_that("method is validated against the loss and tempering", {
  x <- tiny_counts()
  expect_error(plsa(x, 2, method = "cd", tempering = 0.8), class = "aspectr_error_input_argument")
  expect_identical(plsa(x, 2, tempering = 0.8, max_iter = 5)$method, "squarem")
  expect_identical(plsa(x, 2, method = "squarem", max_iter = 5)$method, "squarem")
  expect_error(plsa(x, 2, loss = "tsallis", method = "cd"), class = "aspectr_error_input_argument")
  expect_error(plsa(x, 2, method = "mu"), class = "aspectr_error_input_argument")
  expect_identical(plsa(x, 2, loss = "l2", max_iter = 5)$method, "blocks")
})

test_that("SQUAREM never increases what EM decreases, and ends at EM's fixed points", {
  x <- tiny_counts(5, 40, 30, 4)
  G <- x / sum(x)
  free_energy <- function(fit, beta) {
    U <- fit$factors[[1]]; V <- fit$factors[[2]]
    S <- Reduce(`+`, lapply(seq_len(4), function(r) (fit$lambda[r] * outer(U[, r], V[, r]))^beta))
    -sum(G[G > 0] * log(S[G > 0])) / beta
  }
  # plain EM: the KL trace; tempered: the tempered free energy, iteration by iteration
  sq <- plsa(x, 4, method = "squarem", seed = 2, max_iter = 150, tol = 0)
  tr <- c(sq$initial, sq$objective)
  expect_true(all(diff(tr) <= 1e-12 * max(abs(tr))))
  fe <- vapply(1:25, function(i) free_energy(plsa(x, 4, tempering = 0.8, seed = 2, max_iter = i, tol = 0), 0.8), 0)
  expect_true(all(diff(fe) <= 1e-12 * max(abs(fe))))
  for (beta in c(1, 0.8)) {
    fit <- plsa(x, 4, method = "squarem", tempering = beta, seed = 2, max_iter = 3000, tol = 1e-13)
    expect_true(fit$converged)
    one <- plsa(x, 4, method = "em", tempering = beta, init = fit, max_iter = 1, tol = 0)
    expect_equal(unname(one$factors), unname(fit$factors), tolerance = 1e-6)
    expect_equal(sum(fit$lambda), 1, tolerance = 1e-10)
    expect_true(all(abs(colSums(fit$factors[[1]]) - 1) < 1e-10))
  }
  # dense equals sparse; the same seed gives the same fit
  a <- plsa(x, 4, tempering = 0.8, seed = 7, max_iter = 40, tol = 0, threads = 1)
  b <- plsa(Matrix::Matrix(x, sparse = TRUE), 4, tempering = 0.8, seed = 7, max_iter = 40, tol = 0, threads = 2)
  expect_equal(b$objective, a$objective, tolerance = 1e-12)
  expect_equal(unname(b$factors), unname(a$factors), tolerance = 1e-10)
  expect_identical(plsa(x, 4, tempering = 0.8, seed = 7, max_iter = 40, tol = 0, threads = 1)$factors, a$factors)
  expect_true(any(grepl("tempered EM (beta = 0.8) with SQUAREM", capture.output(print(a)), fixed = TRUE)))
})

test_that("a fit's entropy and document totals equal the plain-R sums", {
  set.seed(31)
  X <- Matrix::rsparsematrix(400, 300, 0.05, rand.x = function(k) stats::rpois(k, 3) + 1)
  fit <- plsa(X, 3, method = "em", max_iter = 2, tol = 0, seed = 1)
  d <- as_aspect_data(X)
  g <- d$val / max(d$val)
  g <- g / sum(g)
  expect_identical(fit$neg_entropy, sum(g * log(g)))
  rs <- rowsum(d$val, d$idx[1, ] + 1L)
  totals <- numeric(400)
  totals[as.integer(rownames(rs))] <- rs[, 1]
  expect_identical(fit$doc_totals, totals)
  # with missing responses (lca): a missing first item is left out
  dm <- data.frame(a = c(1, 2, NA, 1, 2), b = c(1, 1, 2, 2, 2))
  f <- lca(dm, 1)
  expect_identical(f$doc_totals, c(2, 2))
})
