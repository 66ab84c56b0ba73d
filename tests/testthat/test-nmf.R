planted_nmf <- function(seed, m = 60, n = 50, k = 3, noise = 0) {
  set.seed(seed)
  W <- matrix(runif(m * k)^3, m, k); H <- matrix(runif(k * n)^3, k, n)
  X <- W %*% H
  if (noise > 0) X <- X + matrix(runif(m * n, 0, noise * mean(X)), m, n)
  list(W = W, H = H, X = X)
}


test_that("planted low-rank matrices are recovered by every Frobenius method", {
  pt <- planted_nmf(1)
  for (m in c("hals", "anls", "mu")) {
    fit <- nmf(pt$X, 3, method = m, seed = 1, tol = 1e-12, max_iter = if (m == "mu") 20000 else 3000)
    # exact low-rank data: HALS/ANLS reach the noise floor of double precision
    # quickly; MU converges sublinearly, hence its looser bound
    expect_lt(tail(fit$rel_error, 1), if (m == "mu") 1e-2 else 1e-5, label = m)
    expect_gt(congruence(fit$W, pt$W), 0.99)
    expect_gt(congruence(t(fit$H), t(pt$H)), 0.99)
  }
  kl <- nmf(pt$X, 3, loss = "kl", seed = 1, tol = 1e-12, max_iter = 5000)
  expect_gt(congruence(kl$W, pt$W), 0.99)
})

test_that("every solver never increases its objective (with and without penalties)", {
  set.seed(2)
  x <- Matrix::rsparsematrix(120, 90, density = 0.1, rand.x = function(n) rpois(n, 3) + 1)
  combos <- list(c("frobenius", "hals"), c("frobenius", "anls"), c("frobenius", "mu"), c("kl", "mu"),
                 c("kl", "cd"))
  for (cm in combos) for (pen in list(c(0, 0), c(0.5, 0.2))) for (acc in c(TRUE, FALSE)) {
    fit <- nmf(x, 4, loss = cm[1], method = cm[2], L1 = pen, L2 = rev(pen), seed = 1,
               max_iter = 60, tol = 0, init = "random", accelerate = acc)
    tr <- c(fit$initial, fit$objective)
    expect_true(all(diff(tr) <= 1e-10 * max(tr)), info = paste(c(cm, acc), collapse = "/"))
    # the trace is the objective of the returned model
    if (cm[1] == "frobenius") {
      W <- fit$W; H <- fit$H; l2 <- rev(pen)
      f <- 0.5 * sum((as.matrix(x) - W %*% H)^2) + pen[1] * sum(W) + pen[2] * sum(H) +
        l2[1] / 2 * sum(W^2) + l2[2] / 2 * sum(H^2)
      expect_equal(tail(fit$objective, 1), f, tolerance = 1e-10, info = paste(c(cm, acc), collapse = "/"))
    }
  }
  xd <- as.matrix(x) + 0.5
  for (b in c(0, 0.5, 1.5, 3)) {
    fit <- nmf(xd, 3, loss = "beta", beta = b, seed = 1, max_iter = 60, tol = 0)
    tr <- c(fit$initial, fit$objective)
    expect_true(all(diff(tr) <= 1e-10 * max(tr)), info = paste("beta", b))
  }
})

test_that("each method matches a plain-R reference from the same start", {
  pt <- planted_nmf(3, 12, 10, 2, noise = 0.3)
  X <- pt$X
  set.seed(5)
  W0 <- matrix(runif(24), 12, 2); H0 <- matrix(runif(20), 2, 10)
  run <- function(..., max_iter = 5) nmf(X, 2, init = list(W = W0, H = H0), max_iter = max_iter, tol = 0, threads = 1, ...)
  # HALS (accelerated, Gillis & Glineur 2012): H first, then W, each with up
  # to 1 + floor(rho / 2) exact sweeps (rho = cost of the products / cost of
  # a sweep: nnz(X) k plus the other factor's Gram), stopping when a
  # sweep moves the factor by less than 1/10 of the first; then unit-norm W
  sweeps <- function(F, A, B, max_s) {  # F, A: d x k; B: k x k
    for (s in seq_len(max_s)) {
      F0 <- F
      for (r in seq_len(ncol(F))) F[, r] <- pmax(0, (A[, r] - F[, -r, drop = FALSE] %*% B[-r, r]) / B[r, r])
      ch <- sum((F - F0)^2)
      if (s == 1) first <- ch else if (ch <= 0.01 * first) break
    }
    F
  }
  m <- nrow(X); n <- ncol(X); k <- 2; nnz <- sum(X != 0)
  max_s <- function(cost, d) min(25, 1 + floor(0.5 * cost / (d * k^2)))
  W <- W0; H <- H0
  for (it in 1:5) {
    H <- t(sweeps(t(H), t(t(W) %*% X), t(W) %*% W, max_s(nnz * k + m * k^2, n)))
    W <- sweeps(W, X %*% t(H), H %*% t(H), max_s(nnz * k + n * k^2, m))
    s <- sqrt(colSums(W^2)); W <- sweep(W, 2, s, "/"); H <- H * s
  }
  expect_equal(fitted(run(method = "hals", accelerate = FALSE)), W %*% H, tolerance = 1e-10)
  # MU (Frobenius), Gemulla and Miettinen (2013)
  W <- W0; H <- H0; eps <- 1e-16
  for (it in 1:5) {
    W <- W * pmax(X %*% t(H), eps) / (W %*% H %*% t(H) + eps)
    H <- H * pmax(t(W) %*% X, eps) / (t(W) %*% W %*% H + eps)
  }
  expect_equal(fitted(run(method = "mu")), W %*% H, tolerance = 1e-10)
  # KL MU
  W <- W0; H <- H0
  for (it in 1:5) {
    W <- W * ((X / (W %*% H)) %*% t(H)) / matrix(rowSums(H), nrow(W), 2, byrow = TRUE)
    H <- H * (t(W) %*% (X / (W %*% H))) / matrix(colSums(W), 2, ncol(H))
  }
  expect_equal(fitted(run(loss = "kl", method = "mu")), W %*% H, tolerance = 1e-10)
  # ANLS: each step is an exact NNLS (checked against quadprog)
  skip_if_not_installed("quadprog")
  fit <- run(method = "anls", max_iter = 1, accelerate = FALSE)
  A <- X %*% t(H0)
  Wref <- t(apply(A, 1, function(a) {
    quadprog::solve.QP(H0 %*% t(H0), a, diag(2), rep(0, 2))$solution
  }))
  Href <- apply(t(Wref) %*% X, 2, function(c) quadprog::solve.QP(crossprod(Wref), c, diag(2), rep(0, 2))$solution)
  expect_equal(unname(fit$W), pmax(Wref, 0), tolerance = 1e-7)
  expect_equal(unname(fit$H), pmax(Href, 0), tolerance = 1e-7)
})

test_that("extrapolated HALS (HER) matches a plain-R reference and only keeps improvements", {
  pt <- planted_nmf(15, 14, 11, 3, noise = 0.5)
  X <- pt$X
  set.seed(6)
  W0 <- matrix(runif(14 * 3), 14, 3); H0 <- matrix(runif(3 * 11), 3, 11)
  for (iters in c(1, 2, 12)) {
    ref <- ref_her(X, W0, H0, iters)
    fit <- nmf(X, 3, init = list(W = W0, H = H0), max_iter = iters, tol = 0, threads = 1)
    expect_equal(unname(fit$W), ref$W, tolerance = 1e-9, info = iters)
    expect_equal(unname(fit$H), ref$H, tolerance = 1e-9, info = iters)
    expect_equal(fit$objective, ref$objective, tolerance = 1e-10, info = iters)
  }
  # the 12 iterations include rejected (restarted) steps, which leave the
  # objective unchanged, and accepted ones; plain HALS differs from iteration 1
  expect_gt(ref$rejected, 0)
  expect_lt(ref$rejected, 12)
  expect_true(any(diff(ref$objective) == 0))
  plain <- nmf(X, 3, init = list(W = W0, H = H0), max_iter = 2, tol = 0, accelerate = FALSE)
  expect_false(isTRUE(all.equal(plain$W, nmf(X, 3, init = list(W = W0, H = H0), max_iter = 2, tol = 0)$W)))
  # converges (the stopping rule sees rejected steps too) and fits as well
  set.seed(7)
  x <- Matrix::rsparsematrix(150, 100, density = 0.1, rand.x = function(n) rpois(n, 3) + 1)
  a <- nmf(x, 5, seed = 1, init = "random", max_iter = 3000, tol = 1e-9)
  b <- nmf(x, 5, seed = 1, init = "random", max_iter = 3000, tol = 1e-9, accelerate = FALSE)
  expect_true(a$converged)
  expect_lt(a$iterations, 3000)
  expect_true(a$accelerate)
  expect_false(b$accelerate)
  expect_false(nmf(x, 5, method = "mu", seed = 1, max_iter = 2)$accelerate)
  expect_lt(a$value, b$value * (1 + 1e-3))
  expect_error(nmf(X, 2, accelerate = NA), class = "aspectr_error_input_argument")
  expect_error(nmf(X, 2, accelerate = "yes"), class = "aspectr_error_input_argument")
})

test_that("extrapolated KL updates (accelerate = TRUE) match the plain-R reference", {
  set.seed(11)
  X <- matrix(rpois(30 * 20, 3), 30, 20)
  W0 <- matrix(runif(30 * 3), 30, 3) + 0.1
  H0 <- matrix(runif(3 * 20), 3, 20) + 0.1
  for (iters in c(1, 2, 15)) {
    ref <- ref_kl_her(X, W0, H0, iters)
    fit <- nmf(X, 3, loss = "kl", method = "mu", init = list(W = W0, H = H0), max_iter = iters, tol = 0,
               threads = 1, accelerate = TRUE)
    expect_true(fit$accelerate)
    expect_equal(unname(fit$W), ref$W, tolerance = 1e-9, info = iters)
    expect_equal(unname(fit$H), ref$H, tolerance = 1e-9, info = iters)
    expect_equal(fit$objective, ref$objective, tolerance = 1e-9, info = iters)
  }
  # differs from plain MU from the first iteration (H is extrapolated), which
  # is the default for KL multiplicative updates
  plain <- nmf(X, 3, loss = "kl", method = "mu", init = list(W = W0, H = H0), max_iter = 2, tol = 0)
  expect_false(plain$accelerate)
  expect_false(isTRUE(all.equal(plain$W, ref_kl_her(X, W0, H0, 2)$W, check.attributes = FALSE)))
  # long run: the objective (of the returned pair) never increases, stays
  # finite, and the factors stay strictly positive
  set.seed(5)
  x <- Matrix::rsparsematrix(120, 90, density = 0.1, rand.x = function(n) rpois(n, 3) + 1)
  a <- nmf(x, 4, loss = "kl", method = "mu", init = "random", seed = 3, max_iter = 200, tol = 0,
           accelerate = TRUE)
  expect_true(all(diff(a$objective) <= 0))
  expect_true(all(is.finite(a$objective)))
  expect_true(all(a$W > 0) && all(a$H > 0))
  expect_lt(a$value, a$initial)
  # converges under the stopping rule
  c1 <- nmf(x, 4, loss = "kl", method = "mu", init = "random", seed = 3, max_iter = 5000, tol = 1e-8,
            accelerate = TRUE)
  expect_true(c1$converged)
})

test_that("KL coordinate descent matches a plain-R reference and beats multiplicative updates", {
  set.seed(21)
  X <- matrix(rpois(25 * 18, 1.2), 25, 18)   # many zeros: Newton steps down get halved
  X[, 3] <- 0; X[3, ] <- 0                   # an empty column and row
  W0 <- matrix(runif(25 * 3), 25, 3) + 0.05
  H0 <- matrix(runif(3 * 18), 3, 18) + 0.05
  for (pen in list(list(l1 = c(0, 0), l2 = c(0, 0)), list(l1 = c(0.3, 0.1), l2 = c(0.2, 0.5)))) {
    for (iters in c(1, 4)) {
      ref <- ref_kl_cd(X, W0, H0, iters, pen$l1, pen$l2)
      fit <- nmf(X, 3, loss = "kl", init = list(W = W0, H = H0), max_iter = iters, tol = 0, threads = 1,
                 L1 = pen$l1, L2 = pen$l2)
      info <- paste(iters, pen$l1[1])
      expect_identical(fit$method, "cd")
      expect_equal(unname(fit$W), ref$W, tolerance = 1e-10, info = info)
      expect_equal(unname(fit$H), ref$H, tolerance = 1e-10, info = info)
      expect_equal(fit$objective, ref$objective, tolerance = 1e-10, info = info)
    }
  }
  expect_gt(ref$halved, 0)  # the safeguard was exercised
  # without penalties the fitted total is that of X after every iteration
  plain <- nmf(X, 3, loss = "kl", init = list(W = W0, H = H0), max_iter = 3, tol = 0)
  expect_equal(sum(fitted(plain)), sum(X), tolerance = 1e-12)
  # the empty column and row go to zero exactly
  expect_true(all(fit$H[, 3] == 0) && all(fit$W[3, ] == 0))
  # from the same start, 25 coordinate-descent iterations beat 100
  # multiplicative updates on a planted problem (213.2 vs 214.2)
  pt <- planted_nmf(22, 80, 60, 4)
  X <- round(pt$X * 20)
  st <- list(W = matrix(runif(80 * 4), 80, 4), H = matrix(runif(4 * 60), 4, 60))
  cd <- nmf(X, 4, loss = "kl", init = st, max_iter = 25, tol = 0)
  mu <- nmf(X, 4, loss = "kl", method = "mu", init = st, max_iter = 100, tol = 0)
  expect_lt(cd$value, mu$value)
  # and it converges to the planted factors
  full <- nmf(X, 4, loss = "kl", seed = 1, tol = 1e-10, max_iter = 2000)
  expect_true(full$converged)
  expect_gt(congruence(full$W, pt$W), 0.99)
})

test_that("dense equals sparse, same seed gives the same result, threads agree", {
  set.seed(4)
  x <- Matrix::rsparsematrix(300, 200, density = 0.05, rand.x = function(n) rpois(n, 3) + 1)
  for (cm in list(c("frobenius", "hals", "TRUE"), c("frobenius", "hals", "FALSE"),
                  c("frobenius", "anls", "TRUE"), c("frobenius", "anls", "FALSE"), c("kl", "mu", "TRUE"),
                  c("kl", "mu", "FALSE"), c("kl", "cd", "FALSE"))) {
    fit <- function(x, threads) nmf(x, 5, loss = cm[1], method = cm[2], init = "random", seed = 2,
                                    max_iter = 30, tol = 0, threads = threads, accelerate = as.logical(cm[3]))
    a <- fit(x, 1)
    b <- fit(as.matrix(x), 1)
    info <- paste(cm, collapse = "/")
    expect_equal(a$W, b$W, tolerance = 1e-9, ignore_attr = TRUE, info = info)
    expect_equal(a$objective, b$objective, tolerance = 1e-10, info = info)
    c2 <- fit(x, 2)
    expect_equal(c2$W, a$W, tolerance = 1e-8, info = info)
    expect_identical(fit(x, 1)$W, a$W)
  }
})

test_that("a dgCMatrix is used through its slots, as the general path would read it", {
  set.seed(31)
  x <- Matrix::rsparsematrix(40, 30, density = 0.2, rand.x = function(n) rpois(n, 2) + 0.5)
  dimnames(x) <- list(paste0("d", 1:40), NULL)
  fast <- aspectr:::nmf_data(x, "x")
  expect_false(is.null(fast$csc))
  slow <- aspectr:::nmf_data(methods::as(x, "TsparseMatrix"), "x")
  expect_null(slow$csc)
  for (f in c("i", "p", "x", "dims", "dimnames", "nnz", "total", "xlogx", "row_totals")) {
    expect_equal(fast[[f]], slow[[f]], tolerance = 1e-14, info = f)
  }
  # explicit zeros and invalid values go through the general path
  z <- x; z@x[1] <- 0
  expect_null(aspectr:::nmf_data(z, "x")$csc)
  expect_identical(aspectr:::nmf_data(z, "x")$nnz, fast$nnz - 1L)
  z@x[1] <- -1
  expect_error(nmf(z, 2), class = "aspectr_error_input_value")
  # NA: a missing cell, left out of the loss
  z@x[1] <- NA
  fz <- nmf(z, 2, seed = 1, max_iter = 20)
  expect_identical(fz$weighting$type, "missing")
  expect_equal(sum(fz$weighting$left_out), 1)
})

test_that("a dgCMatrix is read in place: its slots unscaled and unchanged, products divided on use", {
  set.seed(32)
  x <- Matrix::rsparsematrix(500, 430, density = 0.04, rand.x = function(n) rpois(n, 3) + 1)
  x0 <- x
  x0@x <- x@x + 0; x0@i <- x@i + 0L  # copies of the slots' memory
  nd <- aspectr:::nmf_data(x, "x")
  sc <- aspectr:::nmf_scale(nd)
  expect_gt(sc$s, 1)
  # the fit's data are the matrix's own values with their divisor
  expect_identical(sc$nd$x, x@x)
  expect_identical(sc$nd$div, sc$s)
  # its statistics are those of x / s, as R computes them
  v <- x@x / sc$s
  expect_equal(sc$nd$total, sum(v), tolerance = 1e-15)
  expect_equal(sc$nd$xlogx, sum(v * log(v)), tolerance = 1e-14)
  expect_equal(sc$nd$row_totals, vapply(0:499, function(r) sum(v[x@i == r]), 0), tolerance = 1e-14)
  # the core's products of x / s (read in place) against R's
  ptr <- aspectr:::nmf_ptr(sc$nd)
  xs <- x / sc$s
  W <- matrix(runif(500 * 7), 500, 7); Z <- matrix(runif(430 * 7), 430, 7)
  expect_equal(aspectr:::cpp_nmf_product(ptr, W, "WtX", 1L), as.matrix(Matrix::crossprod(W, xs)), tolerance = 1e-13)
  expect_equal(aspectr:::cpp_nmf_product(ptr, W, "XtQ", 2L), as.matrix(Matrix::crossprod(xs, W)), tolerance = 1e-13)
  expect_equal(aspectr:::cpp_nmf_product(ptr, Z, "XZ", 1L), as.matrix(xs %*% Z), tolerance = 1e-13)
  # every loss and method of sparse data fits x / s as the dense matrix's
  # fit does (above 400 rows and columns: the range finder's NNDSVD start)
  xd <- as.matrix(x)
  for (cm in list(c("frobenius", "hals"), c("frobenius", "anls"), c("frobenius", "mu"), c("frobenius", "als"),
                  c("kl", "mu"), c("kl", "cd"))) {
    info <- paste(cm, collapse = "/")
    for (init in c("nndsvda", "random")) {
      a <- nmf(x, 6, loss = cm[1], method = cm[2], init = init, seed = 5, max_iter = 12, tol = 0, threads = 1)
      b <- nmf(xd, 6, loss = cm[1], method = cm[2], init = init, seed = 5, max_iter = 12, tol = 0, threads = 1)
      expect_equal(a$objective, b$objective, tolerance = 1e-10, info = paste(info, init))
      expect_equal(a$W, b$W, tolerance = 1e-8, info = paste(info, init))
      expect_equal(a$rel_error, b$rel_error, tolerance = 1e-10, info = paste(info, init))
    }
  }
  # the values divided as they are read (x) against values divided in R
  # (x / s, whose largest value is 1: read as they are): the same problem,
  # so the same fit up to rounding, on every sparse code path
  xs1 <- x / sc$s
  expect_identical(max(xs1@x), 1)
  for (cm in list(c("frobenius", "hals", 2), c("frobenius", "mu", 2), c("frobenius", "anls", 2),
                  c("frobenius", "als", 2), c("kl", "mu", 1), c("kl", "cd", 1))) {
    info <- paste(cm, collapse = "/")
    a <- nmf(x, 6, loss = cm[1], method = cm[2], seed = 5, max_iter = 12, tol = 0, threads = 1)
    b <- nmf(xs1, 6, loss = cm[1], method = cm[2], seed = 5, max_iter = 12, tol = 0, threads = 1)
    expect_equal(a$objective, b$objective * sc$s^as.numeric(cm[3]), tolerance = 1e-10, info = info)
    expect_equal(fitted(a), fitted(b) * sc$s, tolerance = 1e-9, info = info)
  }
  # ... and the user's matrix is untouched
  expect_identical(x, x0)
  # predictions read new data in place too
  fit <- nmf(x, 4, seed = 1, max_iter = 20)
  expect_equal(predict(fit, x[1:30, ]), predict(fit, as.matrix(x[1:30, ])), tolerance = 1e-8)
  expect_identical(x, x0)
})

test_that("the one-pass scan of compressed-column values equals R's sums", {
  v <- c(3, 0.5, 7, 1, 2, Inf, -1, NaN, 4)
  i <- c(0L, 2L, 2L, 1L, 0L, 1L, 0L, 2L, 3L)
  ok <- v > 0 & v < Inf & !is.na(v)
  for (div in c(1, 7)) {
    st <- aspectr:::cpp_csc_scan(v, i, 5L, div, TRUE)
    a <- v[ok] / div
    expect_identical(st$bad, 3)
    expect_identical(st$top, 7)
    expect_equal(st$total, sum(a), tolerance = 1e-15)
    expect_equal(st$xlogx, sum(a * log(a)), tolerance = 1e-15)
    expect_equal(st$loglik_const, sum(a * log(a) - a - lgamma(a + 1)), tolerance = 1e-15)
    expect_equal(st$row_totals, c(3 + 2, 1, 0.5 + 7, 4, 0) / div, tolerance = 1e-15)
  }
  expect_true(is.na(aspectr:::cpp_csc_scan(v, i, 5L, 1, FALSE)$loglik_const))
})

test_that("the dense kernels equal R's products on sizes that cross every block edge", {
  # 1031 = 4 * 257 + 3 rows (row tiles of 4, then 2, then an odd row), 523
  # columns (> the 512 block, odd: a single trailing column); ranks with
  # every remainder of the tiles of 4
  set.seed(11)
  for (sz in list(c(1031, 523), c(3, 1), c(1, 7), c(517, 1029))) {
    A <- matrix(runif(sz[1] * sz[2]), sz[1], sz[2])
    A[sample(length(A), length(A) %/% 3)] <- 0
    for (k in c(1, 2, 3, 5, 7)) {
      W <- matrix(runif(sz[1] * k), sz[1], k); H <- matrix(runif(k * sz[2]), k, sz[2])
      WtA <- aspectr:::cpp_dense_tn(W, A, 1L)
      AHt <- aspectr:::cpp_dense_nn(A, H, 1L)
      expect_equal(WtA, crossprod(W, A), tolerance = 1e-12)
      expect_equal(AHt, tcrossprod(A, H), tolerance = 1e-12)
      # every output is summed in the same order for any thread count
      expect_identical(aspectr:::cpp_dense_tn(W, A, 2L), WtA)
      expect_identical(aspectr:::cpp_dense_nn(A, H, 2L), AHt)
    }
  }
})

test_that("dense fits equal sparse fits and do not depend on the thread count", {
  set.seed(12)
  x <- matrix(rpois(301 * 203, 1.5), 301, 203)  # ~45% zeros: fitted dense
  xs <- Matrix::Matrix(x, sparse = TRUE)
  expect_false(is.null(aspectr:::nmf_data(x, "x")$dense))
  expect_null(aspectr:::nmf_data(xs, "x")$dense)
  for (cm in list(c("frobenius", "hals"), c("frobenius", "anls"), c("frobenius", "mu"), c("kl", "mu"),
                  c("kl", "cd"))) {
    a <- nmf(x, 7, loss = cm[1], method = cm[2], init = "random", seed = 3, max_iter = 15, tol = 0, threads = 1)
    b <- nmf(xs, 7, loss = cm[1], method = cm[2], init = "random", seed = 3, max_iter = 15, tol = 0, threads = 1)
    info <- paste(cm, collapse = "/")
    expect_equal(a$W, b$W, tolerance = 1e-10, info = info)
    expect_equal(a$H, b$H, tolerance = 1e-10, info = info)
    expect_equal(a$objective, b$objective, tolerance = 1e-12, info = info)
    c2 <- nmf(x, 7, loss = cm[1], method = cm[2], init = "random", seed = 3, max_iter = 15, tol = 0, threads = 2)
    expect_equal(c2$W, a$W, tolerance = 1e-10, info = info)
  }
  # the statistics of the one-pass dense scan equal those of the sparse path
  expect_equal(a$neg_entropy, b$neg_entropy, tolerance = 1e-12)
  expect_equal(a$row_totals, b$row_totals)
  expect_identical(a$nnz, b$nnz)
  # integer and double input, dimnames kept
  dimnames(x) <- list(paste0("r", 1:301), paste0("c", 1:203))
  fi <- nmf(x, 3, seed = 1, max_iter = 5)
  storage.mode(x) <- "double"
  fd <- nmf(x, 3, seed = 1, max_iter = 5)
  expect_identical(fi$W, fd$W)
  expect_identical(rownames(fd$W), rownames(x))
  expect_identical(colnames(fd$H), colnames(x))
  x[5, 5] <- -1
  expect_error(nmf(x, 3), class = "aspectr_error_input_value")
  x[5, 5] <- Inf
  expect_error(nmf(x, 3), class = "aspectr_error_input_value")
  # NaN, as NA, is a missing cell
  x[5, 5] <- NaN
  expect_true(nmf(x, 3, max_iter = 20)$weighting$left_out[5, 5])
})

test_that("sparse fits without the transposed copy equal those with it and dense fits", {
  # (X H')' from X's columns: every k block (8, 2, 1), empty rows and columns,
  # values divided on read, one or two threads, against R's product
  set.seed(31)
  x <- Matrix::rsparsematrix(257, 190, density = 0.08, rand.x = function(n) rpois(n, 4) + 1)
  x[, 7] <- 0; x[11, ] <- 0; x[257, ] <- 0
  x <- Matrix::drop0(x)
  for (div in c(1, 9)) {
    lean <- aspectr:::cpp_nmf_data(NULL, x@i, x@p, x@x, dim(x), div, FALSE, FALSE)
    kept <- aspectr:::cpp_nmf_data(NULL, x@i, x@p, x@x, dim(x), div, FALSE, TRUE)
    for (k in c(1, 3, 8, 11, 17)) {
      Z <- matrix(runif(190 * k), 190, k)
      ref <- as.matrix(x %*% Z) / div
      for (th in 1:2) {
        expect_equal(aspectr:::cpp_nmf_product(lean, Z, "XZ", th), ref, tolerance = 1e-14, info = paste(div, k, th))
        expect_equal(aspectr:::cpp_nmf_product(kept, Z, "XZ", th), ref, tolerance = 1e-14, info = paste(div, k, th))
      }
    }
  }
  # three threads over four columns, the second holding most non-zeros:
  # the column ranges are [0, 2), [2, 2) (empty: no sums) and [2, 4) (k = 1
  # and 5000 non-zeros admit three threads' sums); rows 1:500 then sum
  # (a + b) + (c + d) instead of ((a + b) + c) + d
  y <- Matrix::sparseMatrix(i = c(1:1000, 1:3000, 1:500, 1:500), j = rep(1:4, c(1000, 3000, 500, 500)),
                            x = runif(5000), dims = c(3000, 4))
  lean <- aspectr:::cpp_nmf_data(NULL, y@i, y@p, y@x, dim(y), 3, FALSE, FALSE)
  Z <- matrix(runif(4), 4, 1)
  one <- aspectr:::cpp_nmf_product(lean, Z, "XZ", 1L)
  expect_equal(one, as.matrix(y %*% Z) / 3, tolerance = 1e-14)
  for (th in 2:5) {
    many <- aspectr:::cpp_nmf_product(lean, Z, "XZ", th)
    expect_equal(many, one, tolerance = 1e-14, info = th)
    # (summed in another order than on one thread: not the same bits)
    if (aspectr:::cpp_openmp()) expect_false(identical(many, one), info = th)
  }
  for (dims in list(c(4L, 3L), c(0L, 3L), c(4L, 0L))) {
    e <- aspectr:::cpp_nmf_data(NULL, integer(0), rep(0L, dims[2] + 1), numeric(0), dims, 1, FALSE, FALSE)
    expect_identical(aspectr:::cpp_nmf_product(e, matrix(1, dims[2], 2), "XZ", 2L), matrix(0, dims[1], 2))
    expect_identical(aspectr:::cpp_nmf_product(e, matrix(1, dims[1], 2), "WtX", 2L), matrix(0, 2, dims[2]))
  }
  # whole fits: every sparse loss and method with and without the copy
  # (nmf() keeps it for KL), against the dense fit; HER's projection of W
  # corrects W'X from X's columns in the lean data
  xd <- as.matrix(x)
  dense_fit <- function(...) nmf(xd, ...)
  fit <- function(limit, ...) {
    old <- options(aspectr.transpose_limit = limit)
    on.exit(options(old))
    nmf(x, ...)
  }
  for (cm in list(c("frobenius", "hals"), c("frobenius", "anls"), c("frobenius", "mu"), c("frobenius", "als"),
                  c("kl", "mu"), c("kl", "cd"))) {
    info <- paste(cm, collapse = "/")
    args <- list(6, loss = cm[1], method = cm[2], init = "random", seed = 4, max_iter = 25, tol = 0)
    a <- do.call(fit, c(list(0), args, threads = 1))
    b <- do.call(fit, c(list(Inf), args, threads = 1))
    d <- do.call(dense_fit, c(args, threads = 1))
    expect_equal(a$W, b$W, tolerance = 1e-10, info = info)
    expect_equal(a$H, b$H, tolerance = 1e-10, info = info)
    expect_equal(a$objective, b$objective, tolerance = 1e-12, info = info)
    expect_equal(a$W, d$W, tolerance = 1e-10, info = info)
    expect_equal(a$objective, d$objective, tolerance = 1e-12, info = info)
    a2 <- do.call(fit, c(list(0), args, threads = 2))
    expect_equal(a2$W, a$W, tolerance = 1e-10, info = info)
    expect_equal(a2$objective, a$objective, tolerance = 1e-12, info = info)
  }
  # KL on data without the copy (made when the rows are first needed; the
  # first objective is summed by columns): the same fits as with it
  W0 <- matrix(runif(257 * 6), 257, 6); H0 <- matrix(runif(6 * 190), 6, 190)
  for (acc in c(FALSE, TRUE)) for (m in c("mu", "cd")) {
    lean <- aspectr:::cpp_nmf_data(NULL, x@i, x@p, x@x, dim(x), 9, FALSE, FALSE)
    kept <- aspectr:::cpp_nmf_data(NULL, x@i, x@p, x@x, dim(x), 9, FALSE, TRUE)
    a <- aspectr:::cpp_nmf_fit(lean, W0, H0, "kl", m, 1, c(0, 0), c(0, 0), 1e-16, 20L, 0, 2L, FALSE, acc)
    b <- aspectr:::cpp_nmf_fit(kept, W0, H0, "kl", m, 1, c(0, 0), c(0, 0), 1e-16, 20L, 0, 2L, FALSE, acc)
    expect_equal(a$W, b$W, tolerance = 1e-12, info = paste(m, acc))
    expect_equal(a$objective, b$objective, tolerance = 1e-13, info = paste(m, acc))
    expect_length(a$objective, 20)
  }
  # the default NNDSVD start (range finder over the lean products) too
  a <- fit(0, 5, max_iter = 30, tol = 0)
  b <- fit(Inf, 5, max_iter = 30, tol = 0)
  expect_equal(a$W, b$W, tolerance = 1e-10)
  expect_equal(a$objective, b$objective, tolerance = 1e-12)
  # the limit is a number of bytes of the copy (12 per non-zero)
  expect_true(aspectr:::nmf_keep_rows(100))
  old <- options(aspectr.transpose_limit = 1200)
  tryCatch({
    expect_true(aspectr:::nmf_keep_rows(100))
    expect_false(aspectr:::nmf_keep_rows(101))
    for (bad in list(-1, NA_real_, "big", c(1, 2))) {
      options(aspectr.transpose_limit = bad)
      expect_error(nmf(x, 2, max_iter = 2), class = "aspectr_error_input_option")
    }
  }, finally = options(old))
  expect_null(getOption("aspectr.transpose_limit"))
})

test_that("NNDSVD initializations follow Boutsidis and Gallopoulos", {
  pt <- planted_nmf(6)
  X <- pt$X
  f0 <- nmf(X, 3, init = "nndsvd", max_iter = 1)
  s <- svd(X)
  # the first NNDSVD component is the leading singular pair in absolute value;
  # one HALS sweep from it must beat the objective of a random start's sweep
  r0 <- nmf(X, 3, init = "random", seed = 1, max_iter = 1)
  expect_lt(f0$value, r0$value)
  nd <- aspectr:::nmf_data(X, "x")
  sv <- aspectr:::nmf_svd(nd, 3)
  a <- aspectr:::nmf_init(nd, 3, "nndsvda", sv)
  expect_true(all(a$W > 0) && all(a$H > 0))
  ar <- aspectr:::nmf_init(nd, 3, "nndsvdar", sv)
  expect_true(all(ar$W > 0) && all(ar$H > 0))
  init <- aspectr:::nmf_init(nd, 3, "nndsvd", sv)
  # zeros of NNDSVD are exactly where nndsvda fills in the mean
  expect_equal(a$W[init$W > 0], init$W[init$W > 0])
  expect_equal(init$W[, 1], sqrt(s$d[1]) * abs(s$u[, 1]), tolerance = 1e-10)
  expect_true(all(init$W >= 0) && all(init$H >= 0))
})

test_that("NNDSVD's factors equal a plain-R reference, ties included", {
  ref <- function(s, k) {
    m <- nrow(s$u); n <- nrow(s$v)
    W <- matrix(0, m, k); H <- matrix(0, k, n)
    W[, 1] <- sqrt(s$d[1]) * abs(s$u[, 1]); H[1, ] <- sqrt(s$d[1]) * abs(s$v[, 1])
    if (k > 1) for (j in 2:k) {
      u <- s$u[, j]; v <- s$v[, j]
      up <- pmax(u, 0); un <- pmax(-u, 0); vp <- pmax(v, 0); vn <- pmax(-v, 0)
      np <- sqrt(sum(up^2)) * sqrt(sum(vp^2)); nn <- sqrt(sum(un^2)) * sqrt(sum(vn^2))
      pos <- if (abs(np - nn) <= 1e-10 * max(np, nn)) u[which.max(abs(u))] > 0 else np >= nn
      a <- if (pos) up / max(sqrt(sum(up^2)), 1e-300) else un / max(sqrt(sum(un^2)), 1e-300)
      b <- if (pos) vp / max(sqrt(sum(vp^2)), 1e-300) else vn / max(sqrt(sum(vn^2)), 1e-300)
      W[, j] <- sqrt(s$d[j] * if (pos) np else nn) * a
      H[j, ] <- sqrt(s$d[j] * if (pos) np else nn) * b
    }
    list(W = W, H = H)
  }
  set.seed(9)
  s <- svd(matrix(runif(40 * 25), 40, 25), nu = 5, nv = 5)
  s$d <- s$d[1:5]
  expect_identical(aspectr:::nmf_nndsvd(s, 5L), ref(s, 5))
  # exact ties of the two parts, either sign first; a part that is all zero
  t <- list(u = cbind(c(1, 1, 1, 1) / 2, c(1, -1, 2, -2) / sqrt(10), c(0, 0, 0, 1)),
            v = cbind(c(1, 1, 1) / sqrt(3), c(1, -1, 0) / sqrt(2), c(1, 0, 0)), d = c(3, 2, 1))
  for (sg in c(1, -1)) {
    t2 <- t; t2$u[, 2] <- sg * t$u[, 2]; t2$v[, 2] <- sg * t$v[, 2]
    r <- aspectr:::nmf_nndsvd(t2, 3L)
    expect_identical(r, ref(t2, 3))
    expect_identical(r, aspectr:::nmf_nndsvd(t, 3L))  # the sign the SVD gave does not matter
  }
  expect_identical(aspectr:::nmf_nndsvd(t, 1L), ref(t, 1))
})

test_that("the randomized SVD of NNDSVD matches svd() on dense and sparse data", {
  # above 400 rows and columns nmf_svd() uses the range finder (power
  # iterations, Cholesky QR); near rank 6 it is accurate to rounding
  set.seed(41)
  X <- matrix(runif(450 * 6), 450, 6) %*% matrix(runif(6 * 420), 6, 420) +
    matrix(runif(450 * 420, 0, 1e-6), 450, 420)
  ex <- svd(X, nu = 4, nv = 4)
  for (x in list(X, Matrix::Matrix(X, sparse = TRUE))) {
    sv <- aspectr:::nmf_svd(aspectr:::nmf_data(x, "x"), 4, 2L)
    expect_equal(sv$d, ex$d[1:4], tolerance = 1e-9)
    expect_equal(abs(crossprod(sv$u, ex$u)), diag(4), tolerance = 1e-8)
    expect_equal(abs(crossprod(sv$v, ex$v)), diag(4), tolerance = 1e-8)
  }
  # Cholesky QR: orthonormal, same span as Householder QR, also when Y is
  # rank deficient (a repeated column: Y'Y singular)
  Y <- matrix(rnorm(300 * 8), 300, 8) %*% diag(10^-(0:7))
  for (y in list(Y, cbind(Y, Y[, 1]), cbind(Y, 0))) {
    Q <- aspectr:::cpp_orthonormalize(y, 1L)
    expect_equal(crossprod(Q), diag(ncol(y)), tolerance = 1e-10)
    expect_equal(Q %*% crossprod(Q, y), y, tolerance = 1e-10)
  }
})

test_that("predict folds in rows (W given H) by default and columns on request", {
  pt <- planted_nmf(7, noise = 0.05)
  fit <- nmf(pt$X, 3, method = "anls", seed = 1, tol = 1e-12, max_iter = 2000)
  expect_equal(predict(fit, pt$X, margin = "columns"), fit$H, tolerance = 1e-6, ignore_attr = TRUE)
  expect_identical(predict(fit, pt$X, type = "class", margin = "columns"),
                   unname(max.col(t(fit$H), ties.method = "first")))
  # new documents are rows: the training rows give back W
  expect_equal(predict(fit, pt$X), fit$W, tolerance = 1e-6, ignore_attr = TRUE)
  expect_identical(unname(predict(fit, pt$X, type = "class")), max.col(fit$W, ties.method = "first"))
  expect_equal(dim(predict(fit, pt$X[1:4, ])), c(4L, 3L))
  # plain-R reference: a new row by NNLS with H fixed (projected gradient)
  xr <- pt$X[2, , drop = FALSE] * 1.5
  H <- fit$H
  w <- rep(0.1, 3)
  L <- max(eigen(tcrossprod(H))$values)
  for (i in 1:20000) w <- pmax(w - (drop(H %*% (drop(w %*% H) - drop(xr)))) / L, 0)
  expect_equal(drop(predict(fit, xr)), w, tolerance = 1e-6)
  kl <- nmf(pt$X, 3, loss = "kl", seed = 1, tol = 1e-12, max_iter = 3000)
  expect_equal(predict(kl, pt$X, tol = 1e-12, max_iter = 20000, margin = "columns"), kl$H,
               tolerance = 1e-3, ignore_attr = TRUE)
  expect_equal(predict(kl, pt$X, tol = 1e-12, max_iter = 20000), kl$W, tolerance = 1e-3,
               ignore_attr = TRUE)
  expect_error(predict(fit, pt$X[, -1]), class = "aspectr_error_input_newdata")
})

test_that("as_plsa gives valid simplex constraints and the same model", {
  pt <- planted_nmf(8)
  X <- round(pt$X * 50)
  kl <- nmf(X, 3, loss = "kl", seed = 1, tol = 1e-10, max_iter = 3000)
  p <- as_plsa(kl)
  expect_s3_class(p, "aspectr_plsa")
  expect_equal(sum(p$lambda), 1, tolerance = 1e-12)
  for (f in p$factors) expect_equal(unname(colSums(f)), rep(1, 3), tolerance = 1e-12)
  WH <- kl$W %*% kl$H
  expect_equal(fitted(p, type = "probability"), WH / sum(WH), tolerance = 1e-12, ignore_attr = TRUE)
  expect_equal(dim(topics(p)), c(nrow(X), 3L))
  expect_error(as_plsa(nmf(X, 2, seed = 1, max_iter = 5)), class = "aspectr_error_input_argument")
})

test_that("bad NMF input gives classed errors", {
  x <- planted_nmf(9)$X
  neg <- x; neg[1] <- -1
  na <- x; na[2] <- NA
  expect_error(nmf(neg, 2), class = "aspectr_error_input_value")
  expect_identical(nmf(na, 2, max_iter = 20)$weighting$type, "missing")
  expect_error(nmf(x, 0), class = "aspectr_error_input_argument")
  expect_error(nmf(x, 100), class = "aspectr_error_input_argument")
  expect_error(nmf(x, 2, loss = "kl", method = "hals"), class = "aspectr_error_input_argument")
  expect_error(nmf(x, 2, loss = "beta", beta = 0.5, method = "anls"), class = "aspectr_error_input_argument")
  expect_error(nmf(x, 2, L1 = -1), class = "aspectr_error_input_argument")
  expect_error(nmf(x, 2, init = "svd"), class = "aspectr_error_input_argument")
  expect_error(nmf(x, 2, init = list(W = matrix(1, 3, 3))), class = "aspectr_error_input_argument")
  z <- x; z[1, 1] <- 0
  expect_error(nmf(z, 2, loss = "beta", beta = 0, eps = 0), class = "aspectr_error_input_argument")
  fit <- nmf(x, 2, seed = 1, max_iter = 10)
  expect_error(predict(fit, x[-1, ], margin = "columns"), class = "aspectr_error_input_newdata")
  expect_error(predict(fit, x[, -1]), class = "aspectr_error_input_newdata")
  expect_snapshot(nmf(x, 2, loss = "kl", method = "anls"), error = TRUE)
  expect_snapshot(print(fit))
})

test_that("nmf_rank() finds the planted rank by cross-validation and consensus", {
  set.seed(10)
  W <- matrix(0, 60, 3); W[1:20, 1] <- runif(20, 1, 2); W[21:40, 2] <- runif(20, 1, 2); W[41:60, 3] <- runif(20, 1, 2)
  H <- matrix(0, 3, 45); H[1, 1:15] <- runif(15, 1, 2); H[2, 16:30] <- runif(15, 1, 2); H[3, 31:45] <- runif(15, 1, 2)
  X <- W %*% H + matrix(runif(60 * 45, 0, 0.3), 60)
  cv <- nmf_rank(X, k = 1:6, nrun = 2, seed = 1)
  expect_identical(cv$best, 3L)
  expect_true(all(cv$table$train_error[-1] <= cv$table$train_error[-nrow(cv$table)] + 1e-3))
  co <- nmf_rank(X, k = 2:5, method = "consensus", nrun = 6, seed = 1)
  expect_identical(co$best, 3L)
  expect_gt(co$table$cophenetic[co$table$k == 3], 0.99)
  f <- tempfile(fileext = ".pdf"); grDevices::pdf(f); on.exit(grDevices::dev.off())
  expect_identical(plot(cv), cv)
  expect_identical(plot(co), co)
  expect_snapshot(print(co))
  skip_if_not_installed("future.apply")
  skip_on_cran()
  seq_run <- nmf_rank(X, k = 2:4, nrun = 2, seed = 1)
  old <- future::plan(future::multisession, workers = 2)
  on.exit(future::plan(old), add = TRUE)
  fut_run <- nmf_rank(X, k = 2:4, nrun = 2, seed = 1)
  expect_equal(fut_run$table, seq_run$table, tolerance = 1e-12)
})

test_that("several starts of a sparse fit run in other R processes under a future plan", {
  skip_if_not_installed("future.apply")
  skip_on_cran()
  set.seed(33)
  x <- Matrix::rsparsematrix(120, 90, density = 0.1, rand.x = function(n) rpois(n, 3) + 1)
  seq_fit <- nmf(x, 3, nrun = 2, seed = 1, max_iter = 30)
  old <- future::plan(future::multisession, workers = 2)
  on.exit(future::plan(old), add = TRUE)
  fut_fit <- nmf(x, 3, nrun = 2, seed = 1, max_iter = 30)
  expect_equal(fut_fit$run_values, seq_fit$run_values, tolerance = 1e-12)
  expect_equal(fut_fit$W, seq_fit$W, tolerance = 1e-12)
})

test_that("the KL objective equals the generalized KL divergence of the model", {
  set.seed(13)
  x <- Matrix::rsparsematrix(80, 60, density = 0.1, rand.x = function(n) rpois(n, 2) + 1)
  x@x[1:10] <- x@x[1:10] + 0.25   # non-whole counts
  x@x[11:15] <- 500               # large counts
  for (m in c("cd", "mu")) {
    fit <- nmf(x, 3, loss = "kl", method = m, seed = 1, max_iter = 40, tol = 0)
    X <- as.matrix(x); V <- fit$W %*% fit$H
    direct <- sum(X[X > 0] * log(X[X > 0] / V[X > 0])) - sum(X) + sum(V)
    expect_equal(fit$value, direct, tolerance = 1e-10, info = m)
    dense <- nmf(X, 3, loss = "kl", method = m, seed = 1, max_iter = 40, tol = 0)
    expect_equal(dense$value, fit$value, tolerance = 1e-10, info = m)
  }
})

test_that("projected ALS matches a plain-R reference (pseudo-inverse, then projection)", {
  set.seed(5)
  x <- matrix(rpois(20 * 12, 4), 20, 12)
  W0 <- matrix(runif(20 * 3), 20); H0 <- matrix(runif(3 * 12), 3)
  pinv <- function(A) { s <- svd(A); d <- ifelse(s$d > max(dim(A)) * max(s$d) * .Machine$double.eps, 1 / s$d, 0); s$v %*% (d * t(s$u)) }
  W <- W0; H <- H0; obj <- numeric(15)
  for (t in 1:15) {
    W <- pmax(x %*% t(H) %*% pinv(H %*% t(H)), 0)
    H <- pmax(pinv(crossprod(W)) %*% crossprod(W, x), 0)
    obj[t] <- 0.5 * sum((x - W %*% H)^2)
  }
  fit <- nmf(x, 3, method = "als", init = list(W = W0, H = H0), max_iter = 15, tol = 0)
  expect_equal(fit$objective, obj, tolerance = 1e-9)
  expect_equal(fit$W %*% fit$H, W %*% H, tolerance = 1e-9, ignore_attr = TRUE)
  expect_true(min(fit$W) >= 0 && min(fit$H) >= 0)
  # with an L2 penalty the pseudo-inverse is of the penalized Gram matrix
  W <- W0; H <- H0
  for (t in 1:5) {
    W <- pmax((x %*% t(H) - 0.5) %*% pinv(H %*% t(H) + diag(2, 3)), 0)
    H <- pmax(pinv(crossprod(W) + diag(2, 3)) %*% (crossprod(W, x) - 0.5), 0)
  }
  fit <- nmf(x, 3, method = "als", init = list(W = W0, H = H0), max_iter = 5, tol = 0,
             L1 = c(0.5, 0.5), L2 = c(2, 2))
  expect_equal(fit$W %*% fit$H, W %*% H, tolerance = 1e-9, ignore_attr = TRUE)
  expect_error(nmf(x, 3, loss = "kl", method = "als"), class = "aspectr_error_input_argument")
})

test_that("nmf()'s one solver table: every entry fits, one default per loss", {
  tab <- aspectr:::nmf_solvers()
  expect_true(all(tapply(tab$default, tab$loss, sum) == 1))
  x <- matrix(c(3, 1, 0, 2, 5, 1, 0, 2, 4, 1, 1, 3), 4)
  for (i in seq_along(tab$loss)) {
    args <- list(x + (tab$loss[i] == "beta"), 2, loss = tab$loss[i], method = tab$method[i],
                 seed = 1, max_iter = 5, tol = 0)
    if (tab$loss[i] == "beta") args$beta <- 0.5
    fit <- do.call(nmf, args)
    expect_identical(fit$method, tab$method[i])
    expect_true(is.finite(fit$value))
  }
  defaults <- tab$method[tab$default]
  names(defaults) <- tab$loss[tab$default]
  expect_identical(nmf(x, 2, loss = "kl", seed = 1, max_iter = 5)$method, defaults[["kl"]])
  expect_identical(nmf(x, 2, seed = 1, max_iter = 5)$method, defaults[["frobenius"]])
})

test_that("ANLS solves ill-conditioned NNLS subproblems exactly (block principal pivoting vs quadprog)", {
  skip_if_not_installed("quadprog")
  set.seed(12)
  k <- 8
  # U(0, 1) factors: nearly rank one, a badly conditioned Gram matrix, and
  # noise that makes many optimal entries zero (pivoting on both sides)
  X <- matrix(runif(40 * k), 40, k) %*% matrix(runif(k * 30), k, 30) + matrix(rexp(40 * 30, 2), 40, 30)
  W0 <- matrix(runif(40 * k), 40, k); H0 <- matrix(runif(k * 30, 0.8, 1), k, 30)
  fit <- nmf(X, k, init = list(W = W0, H = H0), method = "anls", accelerate = FALSE, max_iter = 1, tol = 0)
  # nmf() updates W given H first, then H given the new W
  Q <- H0 %*% t(H0)
  expect_gt(kappa(Q, exact = TRUE), 1e3)
  A <- X %*% t(H0)
  Wref <- t(apply(A, 1, function(a) quadprog::solve.QP(Q, a, diag(k), rep(0, k))$solution))
  Wref <- pmax(Wref, 0)
  expect_gt(sum(Wref == 0), 0)
  scale_w <- max(Wref)
  expect_lt(max(abs(fit$W - Wref)) / scale_w, 1e-8)
})

test_that("consensus rank selection keeps its consensus matrices, clusterings and silhouettes", {
  set.seed(10)
  W <- matrix(0, 30, 3); W[1:10, 1] <- runif(10, 1, 2); W[11:20, 2] <- runif(10, 1, 2); W[21:30, 3] <- runif(10, 1, 2)
  H <- matrix(0, 3, 24); H[1, 1:8] <- runif(8, 1, 2); H[2, 9:16] <- runif(8, 1, 2); H[3, 17:24] <- runif(8, 1, 2)
  X <- W %*% H + matrix(runif(30 * 24, 0, 0.6), 30)
  colnames(X) <- paste0("s", 1:24)
  co <- nmf_rank(X, k = 2:4, method = "consensus", nrun = 5, seed = 2)
  expect_named(co$details, c("consensus", "hclust", "cluster", "labels", "converged"))
  expect_named(co$details$converged, c("2", "3", "4"))
  expect_named(co$details$consensus, c("2", "3", "4"))
  for (k in c("2", "3", "4")) {
    C <- co$details$consensus[[k]]
    labs <- co$details$labels[[k]]
    expect_identical(dim(labs), c(5L, 24L))
    # the consensus matrix recomputed from the runs' labels
    ref <- matrix(0, 24, 24)
    for (r in 1:5) ref <- ref + outer(labs[r, ], labs[r, ], "==")
    expect_equal(unname(C), unname(ref) / 5)
    expect_identical(rownames(C), colnames(X))
    expect_equal(co$table$dispersion[co$table$k == as.integer(k)], mean(4 * (C - 0.5)^2))
    hc <- stats::hclust(stats::as.dist(1 - C), "average")
    expect_equal(unname(co$details$cluster[[k]]), unname(stats::cutree(hc, as.integer(k))))
  }
  expect_true(all(co$table$silhouette >= -1 & co$table$silhouette <= 1))
  expect_gt(co$table$silhouette[co$table$k == 3], 0.9)
  # silhouette widths against the cluster package's
  skip_if_not_installed("cluster")
  for (k in c("2", "4")) {
    D <- 1 - co$details$consensus[[k]]
    cl <- co$details$cluster[[k]]
    ref <- cluster::silhouette(cl, stats::as.dist(D))
    expect_equal(co$table$silhouette[co$table$k == as.integer(k)], mean(ref[, "sil_width"]))
  }
  set.seed(3)
  pts <- matrix(rnorm(40), 20)
  cl <- rep(1:3, length.out = 20); cl[20] <- 4  # a singleton cluster
  D <- as.matrix(stats::dist(pts))
  expect_equal(silhouette_widths(D, cl), unname(cluster::silhouette(cl, stats::dist(pts))[, "sil_width"]))
})

test_that("coefficient, basis and consensus maps: data, tracks and errors", {
  set.seed(4)
  X <- matrix(rpois(30 * 12, 3), 30, 12, dimnames = list(paste0("g", 1:30), paste0("s", 1:12)))
  fit <- nmf(X, 3, seed = 1)
  ann <- data.frame(group = rep(c("a", "b"), 6), dose = 1:12, row.names = colnames(X))
  md <- nmf_map(fit, "H", 40, ann[12:1, ])
  # components x columns, each component scaled to its maximum, columns
  # ordered by dominant component; the annotation matched by names
  expect_identical(dim(md$z), c(3L, 12L))
  expect_equal(apply(md$z, 1, max), c(factor_1 = 1, factor_2 = 1, factor_3 = 1))
  dom <- apply(md$z, 2, which.max)
  expect_false(is.unsorted(dom))
  expect_identical(md$tracks$group, ann[colnames(md$z), "group"])
  expect_identical(as.integer(md$tracks$factor), unname(dom))
  # the top n of every component in turn
  mw <- nmf_map(fit, "W", 9, NULL)
  expect_identical(ncol(mw$z), 9L)
  expect_true(all(table(apply(mw$z, 2, which.max)) >= 2))
  expect_identical(names(mw$tracks), "factor")
  expect_error(nmf_map(fit, "H", 40, ann[1:5, ]), class = "aspectr_error_input_argument")
  expect_error(nmf_map(fit, "W", 40, ann), class = "aspectr_error_input_argument")
  expect_error(nmf_map(fit, "H", 40, function(x) x), class = "aspectr_error_input_type")
  # the fit's own annotation (a container's samples) by default, none with FALSE
  fit$annotation <- ann
  expect_identical(names(nmf_map(fit, "H", 40, NULL)$tracks), c("group", "dose", "factor"))
  expect_identical(names(nmf_map(fit, "H", 40, FALSE)$tracks), "factor")
  f <- tempfile(fileext = ".pdf"); grDevices::pdf(f); on.exit(grDevices::dev.off())
  expect_invisible(plot(fit))
  expect_identical(plot(fit, type = "W", annotation = data.frame(chr = rep(1:3, 10))), fit)
  expect_error(plot(fit, type = "H", col = "red"), class = "aspectr_error_input_argument")
  co <- nmf_rank(X, k = 2:3, method = "consensus", nrun = 3, seed = 1)
  cm <- consensus_map(co, NULL, ann)
  o <- co$details$hclust[[as.character(co$best)]]$order
  expect_identical(rownames(cm$z), colnames(X)[o])
  expect_identical(cm$tracks$group, ann$group[o])
  expect_identical(plot(co, type = "consensus", k = 2), co)
  expect_error(plot(co, type = "consensus", k = 5), class = "aspectr_error_input_argument")
  cv <- nmf_rank(X, k = 2:3, nrun = 1, seed = 1)
  expect_error(plot(cv, type = "consensus"), class = "aspectr_error_input_argument")
  # the dendrogram's segments: three per merge, leaves at their places
  seg <- dendrogram_segments(cm$dend)
  expect_identical(nrow(seg), 3L * 11L)
  expect_true(all(1:12 %in% seg$x1[seg$y1 == 0 & seg$x1 == seg$x2]))
  expect_true(all(seg$x1 >= 1 & seg$x2 <= 12))
})
