planted_cp <- function(seed, dims = c(20, 15, 10), k = 3) {
  set.seed(seed)
  U <- lapply(dims, function(d) matrix(runif(d * k)^2, d, k))
  X <- array(0, dims)
  for (r in seq_len(k)) X <- X + Reduce(outer, lapply(U, function(u) u[, r]))
  list(U = U, X = X)
}


test_that("ntf recovers a planted non-negative CP (congruence > 0.99)", {
  pt <- planted_cp(101)
  for (m in c("hals", "mu")) {
    fit <- ntf(pt$X, 3, method = m, seed = 7, nrun = 3, tol = 1e-12, max_iter = 5000)
    rel <- sqrt(sum((fitted(fit) - pt$X)^2) / sum(pt$X^2))
    expect_lt(rel, if (m == "hals") 1e-4 else 1e-2)
    for (n in 1:3) expect_gt(congruence(fit$factors[[n]], pt$U[[n]]), 0.99)
    for (f in fit$factors) expect_equal(unname(sqrt(colSums(f^2))), rep(1, 3), tolerance = 1e-12)
  }
  kl <- ntf(as_sptensor(round(100 * pt$X)), 3, loss = "kl", seed = 7, nrun = 3, tol = 1e-12,
            max_iter = 5000)
  for (n in 1:3) expect_gt(congruence(kl$factors[[n]], pt$U[[n]]), 0.99)
  for (f in kl$factors) expect_equal(unname(colSums(f)), rep(1, 3), tolerance = 1e-12)
  expect_equal(sum(kl$weights), sum(round(100 * pt$X)), tolerance = 1e-8)
})

test_that("ntf objectives never increase and equal the loss of the returned model", {
  set.seed(9)
  idx <- cbind(sample(25, 500, TRUE), sample(20, 500, TRUE), sample(15, 500, TRUE))
  x <- sptensor(idx, rexp(500))
  for (m in c("hals", "mu")) {
    fit <- ntf(x, 4, method = m, seed = 1, max_iter = 80, tol = 0)
    tr <- c(fit$initial, fit$objective)
    expect_true(all(diff(tr) <= 1e-10 * max(tr)), info = m)
    expect_equal(fit$value, 0.5 * sum((fitted(fit) - as.array(x))^2), tolerance = 1e-8)
  }
  kl <- ntf(x, 4, loss = "kl", seed = 1, max_iter = 80, tol = 0)
  tr <- c(kl$initial, kl$objective)
  expect_true(all(diff(tr) <= 1e-10 * max(tr)))
  M <- fitted(kl); A <- as.array(x)
  gkl <- sum(A[A > 0] * log(A[A > 0] / M[A > 0])) - sum(A) + sum(M)
  expect_equal(kl$value, gkl, tolerance = 1e-8)
})

test_that("HALS matches a plain-R HALS from the same start", {
  pt <- planted_cp(5, dims = c(6, 5, 4), k = 2)
  x <- pt$X + 0.01
  fit <- ntf(x, 2, seed = 3, max_iter = 4, tol = 0, threads = 1)
  set.seed(3)
  scale <- (sum(x) / prod(dim(x)))^(1 / 3)
  A <- lapply(dim(x), function(d) matrix(runif(d * 2), d, 2) * scale)
  unfold <- function(X, n) { p <- c(n, setdiff(1:3, n)); matrix(aperm(X, p), dim(X)[n]) }
  kr <- function(B, C) { out <- matrix(0, nrow(B) * nrow(C), ncol(B)); for (r in 1:ncol(B)) out[, r] <- kronecker(C[, r], B[, r]); out }
  for (it in 1:4) {
    for (n in 1:3) {
      o <- setdiff(1:3, n)
      KR <- kr(A[[o[1]]], A[[o[2]]])
      Xn <- unfold(x, n) %*% KR
      Gam <- crossprod(A[[o[1]]]) * crossprod(A[[o[2]]])
      for (r in 1:2) A[[n]][, r] <- pmax(0, A[[n]][, r] + (Xn[, r] - A[[n]] %*% Gam[, r]) / Gam[r, r])
    }
  }
  M <- array(0, dim(x)); for (r in 1:2) M <- M + Reduce(outer, lapply(A, function(a) a[, r]))
  expect_equal(fitted(fit), M, tolerance = 1e-10, ignore_attr = TRUE)
})

test_that("ntf: dense and sparse input agree; bad options are errors", {
  pt <- planted_cp(11, dims = c(8, 7, 6))
  a <- ntf(pt$X, 2, seed = 1, max_iter = 30, tol = 0)
  b <- ntf(as_sptensor(pt$X), 2, seed = 1, max_iter = 30, tol = 0)
  expect_equal(a$factors, b$factors, tolerance = 1e-12)
  expect_error(ntf(pt$X, 2, loss = "kl", method = "hals"), class = "aspectr_error_input_argument")
  expect_error(ntf(pt$X, 2, method = "als"), class = "aspectr_error_input_argument")
  neg <- pt$X; neg[1] <- -1
  expect_error(ntf(neg, 2), class = "aspectr_error_input_value")
  expect_error(ntf(pt$X, 0), class = "aspectr_error_input_argument")
  expect_snapshot(ntf(pt$X, 2, loss = "kl", method = "hals"), error = TRUE)
  f <- tempfile(fileext = ".pdf"); grDevices::pdf(f); on.exit(grDevices::dev.off())
  expect_identical(plot(a), a)
  expect_identical(plot(a, type = "convergence"), a)
  expect_snapshot(print(a))
})
