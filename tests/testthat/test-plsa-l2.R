test_that("pNMF matches a plain-R reference (projections + QP) from the same start", {
  skip_if_not_installed("quadprog")
  x <- tiny_counts(12)
  fit <- plsa(x, 3, loss = "l2", seed = 6, max_iter = 10, tol = 0, threads = 1)
  ref <- ref_pnmf(x, ref_start(x, 3, 6), 10)
  expect_equal(unname(fitted(fit, type = "probability")),
               ref_model(ref$lambda, ref$U, ref$V), tolerance = 1e-7, ignore_attr = TRUE)
  G <- x / sum(x)
  expect_equal(fit$value, 0.5 * sum((G - ref_model(ref$lambda, ref$U, ref$V))^2), tolerance = 1e-7)
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
  expect_equal(fit$value, 0.5 * sum((G - fitted(fit, type = "probability"))^2), tolerance = 1e-9)
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

test_that("unnormalized L2 (free non-negative weights) reaches the brute-force optimum", {
  set.seed(3)
  n <- 12
  x <- matrix(runif(n * n, 0, 0.1), n); x[3:6, 5:9] <- x[3:6, 5:9] + 1
  fu <- plsa(x, 1, loss = "l2", normalize = FALSE, max_iter = 3000, tol = 1e-13)
  fn <- plsa(x, 1, loss = "l2", max_iter = 3000, tol = 1e-13)
  expect_false(fn$value - fu$value < 1e-9 * fn$value)  # the free weights fit better
  expect_false(abs(sum(fu$lambda) - 1) < 1e-3)
  expect_equal(sum(fn$lambda), 1)
  tr <- c(fu$initial, fu$objective)
  expect_true(all(diff(tr) <= 1e-15))
  # rank 1 by brute force: w u v' with u, v on the simplex, w >= 0
  G <- x / sum(x)
  obj <- function(p) {
    u <- exp(p[1:n]); u <- u / sum(u); v <- exp(p[n + 1:n]); v <- v / sum(v)
    0.5 * sum((G - exp(p[2 * n + 1]) * outer(u, v))^2)
  }
  set.seed(1)
  best <- min(vapply(1:4, function(s) optim(rnorm(2 * n + 1), obj, method = "BFGS",
                                               control = list(maxit = 5000, reltol = 1e-15))$value, 0))
  expect_equal(fu$value, best, tolerance = 1e-6)
  # the model of x itself: fitted() is total * lambda * u v'
  expect_equal(fitted(fu), sum(x) * fu$lambda[[1]] * outer(fu$factors[[1]][, 1], fu$factors[[2]][, 1]),
               ignore_attr = TRUE)
  expect_equal(colSums(fu$factors[[1]]), 1, ignore_attr = TRUE)
  expect_error(logLik(fu), class = "aspectr_error_unsupported")
  expect_output(print(summary(fu)), "no likelihood")
  expect_output(print(fu), "L2")
  expect_error(plsa(x, 1, normalize = FALSE), class = "aspectr_error_input_argument")
  expect_error(plsa(x, 1, loss = "l2", normalize = NA), class = "aspectr_error_input_argument")
  # rank 2, a tensor: monotone, weights non-negative
  y <- array(rpois(4 * 5 * 3, 2), c(4, 5, 3))
  f3 <- plsa(y, 2, loss = "l2", normalize = FALSE, seed = 1, max_iter = 200)
  expect_true(all(diff(c(f3$initial, f3$objective)) <= 1e-15))
  expect_true(all(f3$lambda >= 0))
})
