# plsa() of N-way data with missing cells, masks and weights: Tsallis and
# L2 (solvers/plsa_weighted.h over N modes) against a plain-R reference on
# tiny 3-way arrays (dense weights, the unfoldings written out), KL against
# ntf()'s weighted KL fit, and the properties the matrix case has.

# ---- plain-R reference (dense arrays) ----

# the mode-n unfolding: rows the indices of mode n, columns the other
# modes' indices, the first of them fastest
pwn_unfold <- function(X, n) {
  N <- length(dim(X))
  matrix(aperm(X, c(n, setdiff(seq_len(N), n))), dim(X)[n])
}

# the Khatri-Rao product of a list of factors (d_m x k), matching
# pwn_unfold()'s columns (the first factor's index fastest)
pwn_kr <- function(mats) {
  out <- mats[[1]]
  for (M in mats[-1]) {
    out <- M[rep(seq_len(nrow(M)), each = nrow(out)), , drop = FALSE] *
      out[rep(seq_len(nrow(out)), nrow(M)), , drop = FALSE]
  }
  out
}

pwn_model <- function(lambda, Fs) {
  dims <- unname(vapply(Fs, nrow, integer(1)))
  P <- array(0, dims)
  for (r in seq_along(lambda)) {
    o <- lambda[r]
    for (n in seq_along(Fs)) o <- outer(o, Fs[[n]][, r])
    P <- P + array(o, dims)
  }
  P
}

# every cell's weight: NA and masked cells 0, times the weights of each
# mode's indices
pwn_omega <- function(x, mask = NULL, weights = NULL, mode_weights = NULL) {
  Om <- if (is.null(weights)) array(1, dim(x)) else weights
  Om[is.na(x)] <- 0
  if (!is.null(mask)) Om[mask] <- 0
  for (n in seq_along(mode_weights)) {
    if (!is.null(mode_weights[[n]])) Om <- sweep(Om, n, mode_weights[[n]], "*")
  }
  Om
}

pwn_tsallis_value <- function(G, Om, lambda, Fs, q) {
  P <- pwn_model(lambda, Fs)
  on <- G > 0
  (1 - sum(Om[on] * G[on]^q * P[on]^(1 - q)) * sum(Om * P)^(q - 1)) / (1 - q)
}

pwn_l2_value <- function(G, Om, lambda, Fs) 0.5 * sum(Om * (G - pwn_model(lambda, Fs))^2)

# D(G_o || P_o): the counted cells' shares of the data and of the model,
# both with their weights
pwn_kl_value <- function(x, Om, lambda, Fs) {
  x0 <- x; x0[is.na(x0)] <- 0
  P <- pwn_model(lambda, Fs)
  go <- Om * x0 / sum(Om * x0)
  po <- Om * P / sum(Om * P)
  on <- go > 0
  sum(go[on] * log(go[on] / po[on]))
}

# one weighted L2 sweep: each mode's columns, then the weights
pwn_l2_step <- function(G, Om, lambda, Fs, normalize) {
  N <- length(Fs); k <- length(lambda)
  for (n in seq_len(N)) {
    A <- Fs[[n]]
    B <- pwn_kr(Fs[-n])
    O <- pwn_unfold(Om, n); Gm <- pwn_unfold(G, n)
    for (r in seq_len(k)) {
      lam <- lambda[r]
      if (!(lam > 0)) next
      others <- A[, -r, drop = FALSE] %*% (lambda[-r] * t(B[, -r, drop = FALSE]))
      alpha <- lam^2 * as.numeric(O %*% B[, r]^2)
      beta <- lam * as.numeric((O * (Gm - others)) %*% B[, r])
      beta[alpha == 0] <- 0
      A[, r] <- ref_diag_simplex(alpha, beta, A[, r])
    }
    Fs[[n]] <- A
  }
  Q <- matrix(0, k, k); cv <- numeric(k)
  comp <- lapply(seq_len(k), function(r) pwn_model(1, lapply(Fs, function(f) f[, r, drop = FALSE])))
  for (r in seq_len(k)) {
    cv[r] <- sum(Om * G * comp[[r]])
    for (s in seq_len(k)) Q[r, s] <- sum(Om * comp[[r]] * comp[[s]])
  }
  list(lambda = ref_qp(Q, cv, normalize), Fs = Fs)
}

# one weighted q-EM step: the best scale, the weights, then each mode's
# columns (the modes updated before entering as F0^q F^(1-q))
pwn_tsallis_step <- function(G, Om, lambda, Fs, q) {
  N <- length(Fs); k <- length(lambda)
  P <- pwn_model(lambda, Fs)
  on <- G > 0
  sc <- (sum(Om[on] * G[on]^q * P[on]^(1 - q)) / sum(Om * P))^(1 / q)
  lam0 <- lambda * sc
  Tm <- array(0, dim(G))
  Tm[on] <- Om[on] * (G[on] / (sc * P[on]))^q
  F0 <- Fs
  B <- pwn_unfold(Tm, 1) %*% pwn_kr(F0[-1])
  h <- pwn_unfold(Om, 1) %*% pwn_kr(F0[-1])
  H <- colSums(F0[[1]] * h)
  lam <- lam0
  for (r in seq_len(k)) {
    a <- lam0[r]^q * sum(F0[[1]][, r] * B[, r])
    if (H[r] > 0) lam[r] <- if (a > 0) (a / H[r])^(1 / q) else 0
  }
  for (n in seq_len(N)) {
    if (n > 1) {
      Mix <- F0
      for (m in seq_len(n - 1)) Mix[[m]] <- F0[[m]]^q * Fs[[m]]^(1 - q)
      B <- pwn_unfold(Tm, n) %*% pwn_kr(Mix[-n])
      h <- pwn_unfold(Om, n) %*% pwn_kr(Fs[-n])
    }
    for (r in seq_len(k)) {
      if (!(lam[r] > 0)) next
      a <- lam0[r]^q * lam[r]^(1 - q) * F0[[n]][, r]^q * B[, r]
      Fs[[n]][, r] <- ref_keep_better(a, (1 - q) * lam[r] * h[, r], q, Fs[[n]][, r])
    }
  }
  list(lambda = lam / sum(lam), Fs = Fs)
}

pwn_reference <- function(x, Om, loss, start, iters, q = 0.5, normalize = TRUE) {
  G <- ref_G(x, Om, loss)
  lambda <- start$lambda; Fs <- start$factors
  obj <- numeric(iters)
  for (it in seq_len(iters)) {
    s <- if (loss == "l2") pwn_l2_step(G, Om, lambda, Fs, normalize) else pwn_tsallis_step(G, Om, lambda, Fs, q)
    lambda <- s$lambda; Fs <- s$Fs
    obj[it] <- if (loss == "l2") pwn_l2_value(G, Om, lambda, Fs) else pwn_tsallis_value(G, Om, lambda, Fs, q)
  }
  perm <- order(lambda, decreasing = TRUE)
  list(lambda = lambda[perm], Fs = lapply(Fs, function(f) f[, perm, drop = FALSE]), objective = obj)
}

# ---- data ----

pwn_data <- function(seed = 1, dims = c(5, 4, 3)) {
  set.seed(seed)
  x <- array(rpois(prod(dims), 4), dims)
  x[sample(length(x), 5)] <- 0
  x
}

# a start on the simplex (lambda, one d_n x k matrix per mode)
pwn_start <- function(dims, k, seed = 2) {
  set.seed(seed)
  l <- runif(k, 0.5, 1)
  list(lambda = l / sum(l), factors = lapply(dims, function(d) {
    f <- matrix(runif(d * k, 0.2, 1), d, k)
    sweep(f, 2, colSums(f), "/")
  }))
}

# a matrix of counts and a start for it (the matrix case's data)
pwn_matrix <- function(seed = 1, m = 6, n = 5) {
  set.seed(seed)
  x <- matrix(rpois(m * n, 4) + 0, m, n)
  x[sample(m * n, 4)] <- 0
  x
}

expect_nway_model <- function(fit, ref, tolerance) {
  expect_equal(unname(as.numeric(fit$lambda)), ref$lambda, tolerance = tolerance)
  for (n in seq_along(ref$Fs)) expect_equal(unname(fit$factors[[n]]), ref$Fs[[n]], tolerance = tolerance)
}

# ---- tests ----

test_that("weighted q-EM and L2 of a 3-way array equal the plain-R reference step by step", {
  x <- pwn_data()
  dims <- dim(x); k <- 2
  x[2, 3, 1] <- NA
  mask <- array(FALSE, dims); mask[5, 1, 2] <- TRUE; mask[1, 4, 3] <- TRUE
  w <- array(1, dims); w[1, 2, 1] <- 2.5; w[4, 4, 3] <- 0.3
  mw <- list(c(1, 2, 1, 0.5, 1), NULL, c(1, 3, 0.7))
  st <- pwn_start(dims, k)
  Om <- pwn_omega(x, mask, w, mw)
  for (iters in c(1, 4)) {
    fq <- plsa(x, k, loss = "tsallis", q = 0.6, method = "em", init = st, max_iter = iters, tol = 0,
               mask = mask, weights = w, mode_weights = mw)
    rq <- pwn_reference(x, Om, "tsallis", st, iters, q = 0.6)
    expect_nway_model(fq, rq, 1e-8)
    expect_equal(fq$objective, rq$objective, tolerance = 1e-8)
    for (normalize in c(TRUE, FALSE)) {
      f2 <- plsa(x, k, loss = "l2", normalize = normalize, init = st, max_iter = iters, tol = 0,
                 mask = mask, weights = w, mode_weights = mw)
      r2 <- pwn_reference(x, Om, "l2", st, iters, normalize = normalize)
      expect_nway_model(f2, r2, 1e-8)
      expect_equal(f2$objective, r2$objective, tolerance = 1e-8)
    }
  }
  expect_length(fq$factors, 3)
  expect_identical(fq$weighting$type, c("missing", "mask", "cells", "modes"))
  # the value reported is the objective of the model returned
  Fq <- lapply(fq$factors, unname)
  expect_equal(fq$value, pwn_tsallis_value(ref_G(x, Om, "tsallis"), Om, as.numeric(fq$lambda), Fq, 0.6),
               tolerance = 1e-10)
  expect_equal(fq$kl, pwn_kl_value(x, Om, as.numeric(fq$lambda), Fq), tolerance = 1e-10)
  expect_equal(f2$value, pwn_l2_value(ref_G(x, Om, "l2"), Om, as.numeric(f2$lambda), lapply(f2$factors, unname)),
               tolerance = 1e-10)
  # only listed cells count (observed =, base 0), k = 3, a 4-way array
  x4 <- array(rpois(3 * 4 * 2 * 3, 3), c(3, 4, 2, 3))
  obs <- array(runif(length(x4)) > 0.3, dim(x4))
  st3 <- pwn_start(dim(x4), 3, seed = 5)
  Om3 <- pwn_omega(x4, weights = obs + 0)
  fq <- plsa(x4, 3, loss = "tsallis", q = 0.3, method = "em", init = st3, max_iter = 3, tol = 0, observed = obs)
  expect_nway_model(fq, pwn_reference(x4, Om3, "tsallis", st3, 3, q = 0.3), 1e-8)
  f2 <- plsa(x4, 3, loss = "l2", init = st3, max_iter = 3, tol = 0, observed = obs)
  expect_nway_model(f2, pwn_reference(x4, Om3, "l2", st3, 3), 1e-8)
})

test_that("a 3-way array of one slice gives the matrix fit", {
  x <- pwn_matrix(4)
  m <- nrow(x); n <- ncol(x)
  mask <- matrix(FALSE, m, n); mask[2, 3] <- TRUE; mask[5, 1] <- TRUE
  rw <- c(1, 2, 1, 0.5, 1, 3)
  st3 <- pwn_start(c(m, n, 1), 2)
  st <- list(lambda = st3$lambda, factors = st3$factors[1:2])
  for (spec in list(list(loss = "tsallis", method = "em", q = 0.4), list(loss = "tsallis", method = "squarem"),
                    list(loss = "l2"), list(loss = "l2", normalize = FALSE))) {
    a <- do.call(plsa, c(list(x, 2, init = st, max_iter = 6, tol = 0, mask = mask, row_weights = rw), spec))
    b <- do.call(plsa, c(list(array(x, c(m, n, 1)), 2, init = st3, max_iter = 6, tol = 0,
                              mask = array(mask, c(m, n, 1)), row_weights = rw), spec))
    expect_equal(unname(b$factors[1:2]), unname(a$factors), tolerance = 1e-12, ignore_attr = TRUE)
    expect_equal(unname(b$factors[[3]]), matrix(1, 1, 2))
    expect_equal(as.numeric(b$lambda), as.numeric(a$lambda), tolerance = 1e-12)
    expect_equal(b$objective, a$objective, tolerance = 1e-12)
    expect_equal(b$value, a$value, tolerance = 1e-12)
    expect_equal(b$kl, a$kl, tolerance = 1e-12)
  }
})

test_that("a slice left out entirely: the reference's steps, its factor rows take the mass left", {
  x <- pwn_data(12, c(5, 4, 3))
  x[, 2, ] <- NA
  x[4, , 3] <- NA
  st <- pwn_start(dim(x), 2, seed = 13)
  Om <- pwn_omega(x)
  for (loss in c("tsallis", "l2")) {
    f <- plsa(x, 2, loss = loss, method = if (loss == "tsallis") "em", init = st, max_iter = 5, tol = 0)
    expect_nway_model(f, pwn_reference(x, Om, loss, st, 5), 1e-8)
    for (n in 1:3) expect_true(all(abs(colSums(f$factors[[n]]) - 1) < 1e-12))
    expect_true(all(diff(c(f$initial, f$objective)) <= 1e-14))
  }
})

test_that("a 2-way sparse tensor with a mask gives the matrix fit; a fit continues from a fit", {
  x <- pwn_matrix(6)
  mask <- matrix(FALSE, nrow(x), ncol(x)); mask[1, 2] <- TRUE; mask[4, 5] <- TRUE
  for (spec in list(list(loss = "tsallis", method = "em"), list(loss = "l2"))) {
    a <- do.call(plsa, c(list(x, 2, seed = 3, max_iter = 10, tol = 0, mask = mask), spec))
    b <- do.call(plsa, c(list(as_sptensor(x), 2, seed = 3, max_iter = 10, tol = 0, mask = which(mask, arr.ind = TRUE)),
                         spec))
    for (n in 1:2) expect_equal(unname(b$factors[[n]]), unname(a$factors[[n]]), tolerance = 1e-12)
    expect_equal(b$objective, a$objective, tolerance = 1e-12)
  }
  expect_error(plsa(as_sptensor(x), 6, loss = "l2", mask = which(mask, arr.ind = TRUE)),
               class = "aspectr_error_input_argument")
  # a warm start from a weighted N-way fit never ends worse than that fit
  x3 <- pwn_data(7)
  m3 <- array(runif(length(x3)) < 0.2, dim(x3))
  for (loss in c("kl", "tsallis", "l2")) {
    a <- plsa(x3, 2, loss = loss, mask = m3, seed = 1, max_iter = 20, tol = 0)
    b <- plsa(x3, 2, loss = loss, mask = m3, init = a, max_iter = 5, tol = 0)
    expect_lte(b$value, a$value * (1 + 1e-12))
  }
})

test_that("the KL fit is ntf()'s weighted KL fit normalized; its value is D(G_o || P_o)", {
  x <- pwn_data(3, c(6, 5, 4))
  dims <- dim(x)
  mask <- array(runif(length(x)) < 0.2, dims)
  mw <- list(NULL, c(1, 2, 1, 1, 0.5), NULL)
  p <- plsa(x, 3, mask = mask, mode_weights = mw, seed = 7, max_iter = 60, tol = 0)
  f <- ntf(x, 3, loss = "kl", method = "cd", mask = mask, mode_weights = mw, seed = 7, max_iter = 60, tol = 0)
  expect_s3_class(p, "aspectr_plsa")
  expect_identical(p$method, "cd")
  expect_equal(as.numeric(p$lambda), as.numeric(f$weights / sum(f$weights)), tolerance = 1e-12)
  for (n in 1:3) expect_equal(unname(p$factors[[n]]), unname(f$factors[[n]]), tolerance = 1e-12)
  # the trace: coordinate descent keeps the model at its best scale, where
  # the weighted divergence is T D(G_o || P_o)
  expect_equal(p$objective, f$objective / f$total, tolerance = 1e-12)
  expect_true(all(diff(p$objective) <= 1e-12 * p$objective[-length(p$objective)]))
  Om <- pwn_omega(x, mask, mode_weights = mw)
  Fs <- lapply(p$factors, unname)
  expect_equal(p$value, pwn_kl_value(x, Om, as.numeric(p$lambda), Fs), tolerance = 1e-10)
  expect_equal(p$kl, p$value)
  expect_equal(p$value, p$objective[length(p$objective)], tolerance = 1e-10)
  expect_equal(p$weighting$type, c("mask", "modes"))
  # constraints, and a start given as factors
  expect_equal(sum(p$lambda), 1, tolerance = 1e-12)
  for (n in 1:3) expect_true(all(p$factors[[n]] >= 0) && all(abs(colSums(p$factors[[n]]) - 1) < 1e-10))
  st <- pwn_start(dims, 3, seed = 11)
  a <- plsa(x, 3, init = st, mask = mask, max_iter = 10, tol = 0)
  b <- ntf(x, 3, loss = "kl", init = c(list(sweep(st$factors[[1]], 2, st$lambda, "*")), st$factors[-1]),
           mask = mask, max_iter = 10, tol = 0)
  for (n in 1:3) expect_equal(unname(a$factors[[n]]), unname(b$factors[[n]]), tolerance = 1e-12)
  # fitted() imputes the cells left out: the model times the counts' total
  fv <- fitted(p)
  expect_equal(dim(fv), dims)
  expect_equal(unname(fv), pwn_model(as.numeric(p$lambda), Fs) * p$total, tolerance = 1e-10)
  expect_true(all(is.finite(fv[mask])) && all(fv[mask] >= 0) && sum(fv[mask]) > 0)
})

test_that("a mask of no cells gives the unmasked N-way fit from the same start", {
  x <- pwn_data(5, c(5, 4, 3))
  st <- pwn_start(dim(x), 2, seed = 3)
  none <- array(FALSE, dim(x))
  for (spec in list(list(loss = "kl"), list(loss = "tsallis", method = "em", q = 0.3),
                    list(loss = "tsallis", method = "squarem", q = 0.7),
                    list(loss = "l2"), list(loss = "l2", normalize = FALSE))) {
    a <- do.call(plsa, c(list(x, 2, init = st, max_iter = 15, tol = 0), spec))
    b <- do.call(plsa, c(list(x, 2, init = st, max_iter = 15, tol = 0, mask = none), spec))
    info <- paste(spec, collapse = " ")
    for (n in 1:3) expect_equal(unname(b$factors[[n]]), unname(a$factors[[n]]), tolerance = 1e-8, info = info)
    expect_equal(as.numeric(b$lambda), as.numeric(a$lambda), tolerance = 1e-8, info = info)
    expect_equal(b$value, a$value, tolerance = 1e-8, info = info)
    expect_null(a$weighting)
    expect_identical(b$weighting$type, "mask")
  }
})

test_that("NA, mask and weight 0 are the same; dense equals a sparse tensor", {
  x <- pwn_data(6, c(5, 4, 3))
  set.seed(9)
  gone <- array(runif(length(x)) < 0.2, dim(x))
  x_na <- replace(x, gone, NA)
  w0 <- array(1, dim(x)); w0[gone] <- 0
  xs <- as_sptensor(x)
  for (spec in list(list(loss = "kl"), list(loss = "tsallis", method = "em"), list(loss = "tsallis"),
                    list(loss = "l2"))) {
    args <- c(list(k = 2, seed = 2, max_iter = 20, tol = 0), spec)
    a <- do.call(plsa, c(list(x_na), args))
    b <- do.call(plsa, c(list(x), args, list(mask = gone)))
    d <- do.call(plsa, c(list(x), args, list(weights = w0)))
    e <- do.call(plsa, c(list(xs), args, list(mask = which(gone, arr.ind = TRUE))))
    f <- do.call(plsa, c(list(xs), args, list(mask = as_sptensor(gone + 0))))
    info <- paste(spec, collapse = " ")
    for (o in list(b, d, e, f)) {
      for (n in 1:3) expect_equal(unname(o$factors[[n]]), unname(a$factors[[n]]), tolerance = 1e-10, info = info)
      expect_equal(as.numeric(o$lambda), as.numeric(a$lambda), tolerance = 1e-10, info = info)
      expect_equal(o$objective, a$objective, tolerance = 1e-10, info = info)
    }
    expect_identical(a$weighting$type, "missing")
    expect_equal(a$weighting$left_out, sum(gone))
    # the same seed, the same fit
    a2 <- do.call(plsa, c(list(x_na), args))
    expect_identical(a2$factors, a$factors)
    expect_identical(a2$objective, a$objective)
  }
})

test_that("whole-number mode weights: the objective of replicated slices", {
  # The weighted objective of a model is the objective of the data with each
  # slice of the weighted mode repeated at the model whose copies are equal
  # (KL and Tsallis: the shares, blind to the model's scale; L2 with free
  # weights in the units of the counts), as for the rows of a matrix.
  x <- pwn_data(8, c(5, 4, 3))
  w3 <- c(2, 1, 3)
  rep3 <- rep(seq_len(3), w3)
  xr <- x[, , rep3]
  mw <- list(NULL, NULL, w3)
  expand <- function(fit) {
    P <- pwn_model(as.numeric(fit$lambda), lapply(fit$factors, unname))[, , rep3]
    P / sum(P)
  }
  Gr <- xr / sum(xr)
  on <- Gr > 0
  ft <- plsa(x, 2, loss = "tsallis", q = 0.4, seed = 1, max_iter = 40, tol = 0, mode_weights = mw)
  Pr <- expand(ft)
  expect_equal(ft$value, (1 - sum(Gr[on]^0.4 * Pr[on]^0.6)) / 0.6, tolerance = 1e-10)
  fk <- plsa(x, 2, seed = 1, max_iter = 40, tol = 0, mode_weights = mw)
  Pr <- expand(fk)
  expect_equal(fk$value, sum(Gr[on] * log(Gr[on] / Pr[on])), tolerance = 1e-10)
  fl <- plsa(x, 2, loss = "l2", normalize = FALSE, seed = 1, max_iter = 40, tol = 0, mode_weights = mw)
  expect_equal(fl$value, 0.5 * sum((xr - fitted(fl)[, , rep3])^2) / sum(x)^2, tolerance = 1e-10)
  # converged, the weighted and the replicated data reach the same optimum
  a <- plsa(x, 2, loss = "tsallis", q = 0.4, seed = 1, max_iter = 3000, tol = 1e-14, mode_weights = mw)
  b <- plsa(xr, 2, loss = "tsallis", q = 0.4, seed = 1, max_iter = 3000, tol = 1e-14)
  Pb <- pwn_model(as.numeric(b$lambda), lapply(b$factors, unname))
  expect_equal(expand(a), Pb / sum(Pb), tolerance = 1e-5)
  expect_equal(a$value, b$value, tolerance = 1e-7)
})

test_that("the objective never rises and the constraints hold (random cases)", {
  for (rep in 1:4) {
    set.seed(2000 + rep)
    dims <- sample(3:5, 3, replace = TRUE)
    x <- array(rpois(prod(dims), runif(1, 0.5, 4)), dims)
    x[1] <- x[1] + 1
    kind <- c("na", "mask", "weights", "modes")[rep]
    args <- list()
    if (kind == "na") x[sample(length(x), length(x) %/% 5)] <- NA
    if (kind == "mask") args$mask <- array(runif(length(x)) < 0.25, dims)
    if (kind == "weights") args$weights <- array(rexp(length(x)) * (runif(length(x)) > 0.1), dims)
    if (kind == "modes") args$mode_weights <- lapply(dims, rexp)
    for (spec in list(list(loss = "kl"), list(loss = "tsallis", method = "em", q = runif(1, 0.1, 0.9)),
                      list(loss = "tsallis", method = "squarem", q = runif(1, 0.1, 0.9)),
                      list(loss = "l2"), list(loss = "l2", normalize = FALSE))) {
      f <- do.call(plsa, c(list(x, 2, seed = rep, max_iter = 30, tol = 0), spec, args))
      info <- paste(kind, paste(spec, collapse = " "))
      tr <- c(if (is.finite(f$initial)) f$initial, f$objective)
      expect_true(all(is.finite(tr)), info = info)
      expect_true(all(diff(tr) <= 1e-12 * abs(tr[-length(tr)]) + 1e-14), info = info)
      for (n in 1:3) {
        expect_true(all(f$factors[[n]] >= 0) && all(abs(colSums(f$factors[[n]]) - 1) < 1e-10), info = info)
      }
      if (!isFALSE(spec$normalize)) expect_equal(sum(f$lambda), 1, tolerance = 1e-10, info = info)
    }
  }
})

test_that("bad input of a weighted N-way fit gives classed errors", {
  x <- pwn_data(2)
  dims <- dim(x)
  for (loss in c("kl", "tsallis", "l2")) {
    expect_error(plsa(x, 2, loss = loss, mask = array(FALSE, dims + 1)), class = "aspectr_error_input_value")
    expect_error(plsa(x, 2, loss = loss, mask = matrix(FALSE, 5, 4)), class = "aspectr_error_input_value")
    expect_error(plsa(x, 2, loss = loss, mask = "a"), class = "aspectr_error_input_type")
    expect_error(plsa(x, 2, loss = loss, mask = array(TRUE, dims)), class = "aspectr_error_input_empty")
    expect_error(plsa(x, 2, loss = loss, weights = array(-1, dims)), class = "aspectr_error_input_value")
    expect_error(plsa(x, 2, loss = loss, weights = array(1, dims + 1)), class = "aspectr_error_input_value")
    expect_error(plsa(x, 2, loss = loss, mode_weights = list(1:5, NULL)), class = "aspectr_error_input_type")
    expect_error(plsa(x, 2, loss = loss, mode_weights = list(1:4, NULL, NULL)), class = "aspectr_error_input_value")
    expect_error(plsa(x, 2, loss = loss, mode_weights = list(NULL, NULL, c(1, NA, 1))),
                 class = "aspectr_error_input_value")
    expect_error(plsa(x, 2, loss = loss, row_weights = 1:4), class = "aspectr_error_input_value")
    expect_error(plsa(x, 2, loss = loss, col_weights = -(1:4)), class = "aspectr_error_input_value")
    expect_error(plsa(x, 2, loss = loss, row_weights = rep(1, 5), mode_weights = list(NULL, NULL, NULL)),
                 class = "aspectr_error_input_argument")
    expect_error(plsa(x, 100, loss = loss, mask = array(FALSE, dims)), class = "aspectr_error_input_argument")
    expect_error(plsa(x, 2, loss = loss, mask = array(FALSE, dims), callback = function(...) TRUE),
                 class = "aspectr_error_input_argument")
    expect_error(plsa(x, 2, loss = loss, mask = array(FALSE, dims), init = list(1)),
                 class = "aspectr_error_input")
  }
  expect_error(plsa(x, 2, mask = array(FALSE, dims), method = "em"), class = "aspectr_error_input_argument")
  expect_error(plsa(x, 2, loss = "tsallis", mask = array(FALSE, dims), method = "cd"),
               class = "aspectr_error_input_argument")
  expect_error(plsa(x, 2, mask = array(FALSE, dims), prior = 0.1), class = "aspectr_error_input_argument")
  expect_error(plsa(x, 2, loss = "tsallis", normalize = FALSE, mask = array(FALSE, dims)),
               class = "aspectr_error_input_argument")
  # for a matrix, mode_weights are its row and column weights
  xm <- pwn_matrix(3)
  a <- plsa(xm, 2, loss = "l2", seed = 1, max_iter = 10, tol = 0, mode_weights = list(1:6, NULL))
  b <- plsa(xm, 2, loss = "l2", seed = 1, max_iter = 10, tol = 0, row_weights = 1:6)
  expect_identical(a$factors, b$factors)
  expect_error(plsa(xm, 2, mode_weights = list(1:6)), class = "aspectr_error_input_type")
})

test_that("N-way shards with weights under KL give the in-memory weighted fit, in memory, from files and on a cluster", {
  set.seed(12)
  y <- array(stats::rpois(14 * 5 * 4, 2), c(14, 5, 4))
  y[1, 1, 1] <- 4
  M <- array(stats::runif(length(y)) < 0.1, dim(y))
  W <- array(stats::runif(length(y), 0.2, 2), dim(y))
  same <- function(fit, ref, info) {
    expect_s3_class(fit, "aspectr_plsa")
    expect_identical(fit$method, "cd", info = info)
    expect_equal(unname(fit$lambda), unname(ref$lambda), tolerance = 1e-10, info = info)
    for (n in 1:3) expect_equal(unname(fit$factors[[n]]), unname(ref$factors[[n]]), tolerance = 1e-10, info = info)
    expect_equal(fit$objective, ref$objective, tolerance = 1e-10, info = info)
    expect_identical(fit$iterations, ref$iterations, info = info)
    expect_equal(fit$kl, ref$kl, tolerance = 1e-10, info = info)
    expect_equal(fit$weighting$mass, ref$weighting$mass, tolerance = 1e-10, info = info)
    expect_equal(sum(fit$lambda), 1, tolerance = 1e-12, info = info)
    for (n in 1:3) expect_equal(unname(colSums(fit$factors[[n]])), rep(1, 3), tolerance = 1e-12, info = info)
  }
  cases <- list(list(mask = M), list(weights = W), list(mask = M, mode_weights = list(NULL, c(1, 2, 1, 0.5, 1), NULL)),
                list(mask = M, row_weights = stats::runif(14, 0.5, 2)))
  for (i in seq_along(cases)) {
    args <- c(list(seed = 2, max_iter = 40, tol = 0), cases[[i]])
    ref <- suppressMessages(do.call(plsa, c(list(y, 3), args)))
    for (cuts in list(6L, c(4L, 9L))) {
      fit <- suppressMessages(do.call(plsa, c(list(shards(split_rows(y, cuts)), 3), args)))
      same(fit, ref, paste("case", i, "shards", length(cuts) + 1))
    }
  }
  # from .shard and .rds files, and on a 2-worker cluster
  args <- list(seed = 2, max_iter = 40, tol = 0, mask = M, nrun = 2)
  ref <- suppressMessages(do.call(plsa, c(list(y, 3), args)))
  sh <- write_shards(split_rows(y, 6L), shard_tempdir())
  same(suppressMessages(do.call(plsa, c(list(sh, 3), args))), ref, ".shard files")
  dir <- shard_tempdir()
  f <- file.path(dir, c("a.rds", "b.rds"))
  p <- split_rows(y, 8L)
  for (i in 1:2) saveRDS(p[[i]], f[i])
  same(suppressMessages(do.call(plsa, c(list(shards(f), 3), args))), ref, ".rds files")
  skip_on_cran()
  cl <- psock_cluster()
  on.exit(parallel::stopCluster(cl), add = TRUE)
  same(suppressMessages(do.call(plsa, c(list(sh, 3, cluster = cl), args))), ref, "PSOCK")
})

test_that("augment() of a weighted N-way pLSA fit lists the cells left out, imputed", {
  set.seed(4)
  y <- array(stats::rpois(60, 3) + 1, c(5, 4, 3))
  gone <- rbind(c(2, 1, 1), c(1, 2, 3))
  yn <- y; yn[gone] <- NA
  for (loss in c("kl", "tsallis", "l2")) {
    fit <- suppressMessages(plsa(yn, 2, loss = loss, seed = 1, max_iter = 20))
    a <- augment(fit)
    expect_identical(nrow(a), 2L)
    expect_false(any(a$observed))
    expect_equal(a$.fitted, fitted(fit)[gone[order(gone[, 3]), ]], tolerance = 1e-12, info = loss)
    b <- augment(fit, data = yn)
    expect_identical(sum(b$observed), length(y) - 2L)
    expect_true(all(b$.topic %in% 1:2))
  }
})
