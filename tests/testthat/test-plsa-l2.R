test_that("pNMF matches a plain-R reference (projections + QP) from the same start", {
  skip_if_not_installed("quadprog")
  x <- tiny_counts(12)
  fit <- plsa(x, 3, loss = "l2", seed = 6, max_iter = 10, tol = 0, threads = 1)
  ref <- ref_pnmf(x, ref_start(x, 3, 6), 10)
  expect_equal(unname(fitted(fit, type = "probability")),
               ref_model(ref$lambda, ref$U, ref$V), tolerance = 1e-7, ignore_attr = TRUE)
  G <- x / sum(x)
  expect_equal(fit$value, sum((G - ref_model(ref$lambda, ref$U, ref$V))^2), tolerance = 1e-7)
})

test_that("pNMF never increases the Frobenius loss and keeps the constraints", {
  set.seed(3)
  x <- Matrix::rsparsematrix(200, 150, density = 0.05, rand.x = function(n) rpois(n, 3) + 1)
  fit <- plsa(x, 5, loss = "l2", seed = 1, max_iter = 100, tol = 0)
  tr <- c(fit$initial, fit$objective)
  expect_true(all(diff(tr) <= 1e-12 * max(tr)))
  expect_equal(sum(fit$lambda), 1, tolerance = 1e-10)
  expect_true(all(fit$lambda >= 0))
  for (f in fit$factors) {
    expect_true(all(f >= 0))
    expect_true(all(abs(colSums(f) - 1) < 1e-10))
  }
  # the value is the loss of the returned model
  G <- as.matrix(x) / sum(x)
  expect_equal(fit$value, sum((G - fitted(fit, type = "probability"))^2), tolerance = 1e-9)
})

test_that("pNMF recovers a planted model from its exact joint distribution", {
  set.seed(5)
  m <- 40; n <- 30
  U <- matrix(0, m, 2); U[1:20, 1] <- runif(20); U[21:40, 2] <- runif(20)
  V <- matrix(0, n, 2); V[1:15, 1] <- runif(15); V[16:30, 2] <- runif(15)
  U <- sweep(U, 2, colSums(U), "/"); V <- sweep(V, 2, colSums(V), "/")
  P <- U %*% (c(0.6, 0.4) * t(V))
  fit <- plsa(P * 1e4, 2, loss = "l2", seed = 1, nrun = 3, max_iter = 2000, tol = 1e-12)
  expect_lt(max(abs(fitted(fit, type = "probability") - P)), 1e-6)
  expect_equal(sort(unname(fit$lambda)), c(0.4, 0.6), tolerance = 1e-4)
})
