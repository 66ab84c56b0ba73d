# Numerical safeguards of nmf(): feasibility of the extrapolated updates,
# no vanished "converged" fits, zeros under beta < 1, internal scaling (fits
# of c * x for c from 1e-300 to 1e300), as_plsa() of penalized fits and
# sizes beyond the integer range.

planted_pos <- function(seed, m = 30, n = 25, k = 3, noise = 0.2, sparse = FALSE) {
  set.seed(seed)
  W <- matrix(runif(m * k), m, k); H <- matrix(runif(k * n), k, n)
  X <- W %*% H + matrix(runif(m * n, 0, noise), m, n)
  if (sparse) {
    X[X < stats::quantile(X, 0.5)] <- 0
    X <- Matrix::Matrix(X, sparse = TRUE)
  }
  X
}

quiet_zero <- function(expr) {
  withCallingHandlers(expr, aspectr_warning_zero_factor = function(w) invokeRestart("muffleWarning"))
}

nonincreasing <- function(obj) all(diff(obj) <= 1e-10 * pmax(abs(obj[-length(obj)]), 1e-300))

test_that("extrapolated updates with L1 penalties stay feasible and reach the optimum", {
  x <- matrix(c(1, 2, 3, 4, 1, 0, 2, 5, 3), 3)
  # with L1 = 5 on both factors the optimum of the rank-1 problem is W H = 0,
  # objective 1/2 ||x||^2 = 34.5 (checked by L-BFGS-B from 200 random starts)
  for (method in c("hals", "anls")) for (acc in c(TRUE, FALSE)) {
    expect_warning(f <- nmf(x, 1, L1 = c(5, 5), method = method, accelerate = acc),
                   class = "aspectr_warning_zero_factor")
    expect_gte(min(f$W), 0)
    expect_gte(min(f$H), 0)
    expect_equal(f$value, 34.5, tolerance = 1e-12)
    expect_true(nonincreasing(f$objective))
  }
  x <- matrix(0, 7, 6); x[2, 5] <- 0.0567
  a <- nmf(x, 3, loss = "kl", method = "mu", L1 = c(0.77, 0.68), accelerate = TRUE, seed = 1)
  p <- nmf(x, 3, loss = "kl", method = "mu", L1 = c(0.77, 0.68), accelerate = FALSE, seed = 1)
  expect_gte(min(a$W), 0)
  expect_gte(min(a$H), 0)
  expect_true(all(is.finite(a$objective)))
  expect_gte(a$value, 0)
  expect_equal(a$value, p$value, tolerance = 0.01)
})

test_that("a start far too large does not collapse the extrapolated fit", {
  x <- matrix(c(1, .3, .2, 1), 2)
  init <- list(W = matrix(2, 2, 1), H = matrix(2, 1, 2))
  a <- nmf(x, 1, init = init)
  p <- nmf(x, 1, init = init, accelerate = FALSE)
  expect_gt(min(a$W), 0.5)
  expect_equal(a$value, p$value, tolerance = 0.01)
  expect_equal(a$value, 0.2821877, tolerance = 1e-6)  # the rank-1 SVD error / 2
  expect_equal(a$value, (sum(x^2) - svd(x)$d[1]^2) / 2, tolerance = 1e-6)
})

test_that("accelerated and plain variants end within 1% on every test problem", {
  probs <- list()
  for (s in 1:3) for (k in 1:4) {
    probs[[length(probs) + 1]] <- list(x = planted_pos(s, k = k), k = k)
    probs[[length(probs) + 1]] <- list(x = planted_pos(s, k = k, sparse = TRUE), k = k)
  }
  for (i in seq_along(probs)) {
    pr <- probs[[i]]
    for (pen in list(list(L1 = 0, L2 = 0), list(L1 = 0.05, L2 = 0), list(L1 = 0, L2 = 0.5))) {
      for (mult in c(1, 10, 100)) {
        # a start scaled by `mult`: NNDSVD of the data times mult
        st <- nmf(pr$x, pr$k, max_iter = 1, accelerate = FALSE)
        init <- list(W = st$W * mult, H = st$H * mult)
        for (method in c("hals", "anls")) {
          # (from a start far too large some penalized fits end at the zero
          # model, which they say)
          a <- quiet_zero(nmf(pr$x, pr$k, method = method, init = init, L1 = pen$L1, L2 = pen$L2,
                              max_iter = 3000, tol = 1e-10))
          p <- quiet_zero(nmf(pr$x, pr$k, method = method, init = init, L1 = pen$L1, L2 = pen$L2,
                              accelerate = FALSE, max_iter = 3000, tol = 1e-10))
          info <- sprintf("problem %d, %s, L1 %g, L2 %g, start x %g", i, method, pen$L1, pen$L2, mult)
          expect_gte(min(a$W, a$H), 0)
          expect_true(nonincreasing(a$objective), label = info)
          if (pen$L1 == 0 && pen$L2 == 0) {
            # the default: extrapolated, and within 1% of the plain fit
            expect_true(a$accelerate)
            expect_lte(abs(a$value - p$value), 0.01 * p$value + 1e-12, label = info)
          } else {
            # under penalties the default is the plain fit
            expect_false(a$accelerate, label = info)
            acc <- nmf(pr$x, pr$k, method = method, init = init, L1 = pen$L1, L2 = pen$L2,
                       accelerate = TRUE, max_iter = 300)
            expect_gte(min(acc$W, acc$H), 0)
            expect_true(nonincreasing(acc$objective), label = info)
          }
        }
      }
    }
    # KL MU: extrapolation is opt-in (not the default); feasible and monotone
    a <- nmf(pr$x, pr$k, loss = "kl", method = "mu", accelerate = TRUE, max_iter = 300)
    expect_gte(min(a$W, a$H), 0)
    expect_true(nonincreasing(a$objective), label = sprintf("problem %d, KL MU", i))
    expect_false(nmf(pr$x, pr$k, loss = "kl", method = "mu", max_iter = 1)$accelerate)
  }
})

test_that("a fit whose factors vanish is never reported converged", {
  x <- planted_pos(1, m = 8, n = 6, k = 2)
  init <- list(W = matrix(0, 8, 2), H = matrix(0, 2, 6))
  for (method in c("hals", "anls", "mu")) {
    expect_warning(f <- nmf(x, 2, method = method, init = init, max_iter = 20),
                   class = "aspectr_warning_numeric")
    expect_false(f$converged)
  }
  # under L1 penalties on both factors W H = 0 is a strict local minimum
  expect_warning(f <- nmf(matrix(c(1, 2, 3, 4, 1, 0, 2, 5, 3), 3), 1, L1 = c(5, 5)),
                 class = "aspectr_warning_zero_factor")
  expect_true(f$converged)
})

test_that("penalties that set a factor to zero say so, naming it (aspectr_warning_zero_factor)", {
  x <- planted_pos(2, m = 12, n = 10, k = 2)
  # one L1 for both factors: the zero model, a local minimum
  w <- expect_warning(f <- nmf(x, 2, L1 = 1e300, seed = 1, max_iter = 50), class = "aspectr_warning_zero_factor")
  expect_true(all(f$W == 0) && all(f$H == 0))
  expect_setequal(w$zeroed, c("W", "H"))
  expect_match(conditionMessage(w), "set W and H to zero")
  expect_match(conditionMessage(w), "smaller `L1`")
  expect_false(inherits(w, "aspectr_warning_numeric"))
  # the multiplicative updates and KL coordinate descent leave the factors
  # negligible (about 1e-15 to 1e-99), not zero
  xc <- round(10 * x)
  for (a in list(list(loss = "kl"), list(loss = "kl", method = "mu"), list(loss = "beta", beta = 0.5),
                 list(method = "mu"))) {
    w <- expect_warning(do.call(nmf, c(list(xc, 2, L1 = 1e300, seed = 1, max_iter = 100), a)),
                        class = "aspectr_warning_zero_factor")
    expect_setequal(w$zeroed, c("W", "H"))
  }
  expect_no_warning(nmf(xc, 2, loss = "kl", L1 = 0.01, seed = 1, max_iter = 20))
  # a penalty on one factor: that factor, named, and a saddle point
  for (j in 1:2) {
    L1 <- c(0, 0)
    L1[j] <- 1e300
    w <- expect_warning(f <- nmf(x, 2, L1 = L1, seed = 1, max_iter = 50), class = "aspectr_warning_zero_factor")
    fac <- c("W", "H")[j]
    expect_true(all(f[[fac]] == 0))
    expect_identical(w$zeroed, fac)
    expect_match(conditionMessage(w), paste0("set ", fac, " to zero"))
    expect_s3_class(w, "aspectr_warning_numeric")
    expect_false(f$converged)
  }
  # L2 penalties as large: named L2
  w <- expect_warning(nmf(x, 2, L2 = 1e300, seed = 1, max_iter = 50), class = "aspectr_warning_zero_factor")
  expect_match(conditionMessage(w), "smaller `L2`")
  # no penalty, or a moderate one: no warning
  expect_no_warning(f <- nmf(x, 2, seed = 1, max_iter = 50))
  expect_gt(min(colSums(f$W)), 0)
  expect_no_warning(nmf(x, 2, L1 = 0.01, seed = 1, max_iter = 50))
})

test_that("beta with a loss other than \"beta\" has no effect, and says so (aspectr_warning_unused_argument)", {
  x <- round(10 * planted_pos(3, m = 10, n = 8, k = 2))
  w <- expect_warning(f <- nmf(x, 2, loss = "kl", beta = 0.5, seed = 1, max_iter = 20),
                      class = "aspectr_warning_unused_argument")
  expect_s3_class(w, "aspectr_warning_input")
  expect_identical(w$arg, "beta")
  expect_match(conditionMessage(w), "`beta`.*no effect")
  expect_match(conditionMessage(w), "loss = \"beta\"")
  # the fit is the KL fit
  expect_identical(f$loss, "kl")
  expect_equal(f$value, nmf(x, 2, loss = "kl", seed = 1, max_iter = 20)$value)
  expect_warning(nmf(x, 2, beta = 0.5, seed = 1, max_iter = 5), class = "aspectr_warning_unused_argument")
  # the loss's own beta, or loss = "beta": no warning
  expect_no_warning(nmf(x, 2, loss = "kl", beta = 1, seed = 1, max_iter = 5))
  expect_no_warning(nmf(x, 2, loss = "frobenius", beta = 2, seed = 1, max_iter = 5))
  expect_no_warning(nmf(x, 2, loss = "beta", beta = 0.5, seed = 1, max_iter = 5))
})

test_that("beta < 1 handles zeros of x with the epsilon guard", {
  set.seed(1)
  X <- matrix(rpois(200, 2), 20)
  expect_true(any(X == 0))
  for (b in c(0.5, 0.2, 0, -0.5)) {
    f <- nmf(X, 2, loss = "beta", beta = b, seed = 1, max_iter = 200)
    expect_true(all(is.finite(f$objective)), label = paste("beta", b))
    expect_true(all(is.finite(f$W)) && all(is.finite(f$H)))
    expect_gte(min(f$W, f$H), 0)
    expect_true(nonincreasing(f$objective), label = paste("beta", b))
    h <- predict(f, X[, 1:3], margin = "columns")
    expect_true(all(is.finite(h)))
    expect_true(all(is.finite(predict(f, X[1:3, ]))))
  }
  # beta = 0.5 with zeros: the objective is the beta divergence of x itself
  f <- nmf(X, 2, loss = "beta", beta = 0.5, seed = 1, max_iter = 50)
  V <- f$W %*% f$H; b <- 0.5
  d <- sum((X^b + (b - 1) * V^b - b * X * V^(b - 1)) / (b * (b - 1)))
  expect_equal(f$value, d, tolerance = 1e-8)
  expect_error(nmf(X, 2, loss = "beta", beta = 0, eps = 0), class = "aspectr_error_input_argument")
})

test_that("fits of c * x equal the fit of x scaled, for c from 1e-300 to 1e300", {
  x <- planted_pos(4, m = 12, n = 10, k = 2, noise = 0.1)
  cases <- list(c("frobenius", "hals", NA), c("frobenius", "anls", NA), c("frobenius", "mu", NA),
                c("kl", "cd", NA), c("kl", "mu", "FALSE"), c("kl", "mu", "TRUE"),
                c("beta", "mu", "0.5"), c("beta", "mu", "1.5"))
  for (cs in cases) {
    args <- list(k = 2, loss = cs[1], method = cs[2], seed = 1, max_iter = 3000, tol = 1e-13)
    if (cs[1] == "kl" && !is.na(cs[3])) args$accelerate <- as.logical(cs[3])
    if (cs[1] == "beta") args$beta <- as.numeric(cs[3])
    b <- if (cs[1] == "beta") as.numeric(cs[3]) else c(frobenius = 2, kl = 1)[[cs[1]]]
    ref <- do.call(nmf, c(list(x), args))
    Vref <- ref$W %*% ref$H
    for (cc in c(1e-300, 1e-150, 1e-20, 1e20, 1e150, 1e300)) {
      # an objective beyond the double range (about ref$value * cc^b) is
      # reported as Inf or 0 with a classed warning, and only then
      warned <- FALSE
      f <- withCallingHandlers(do.call(nmf, c(list(x * cc), args)),
                               aspectr_warning_numeric = function(w) {
                                 warned <<- TRUE
                                 invokeRestart("muffleWarning")
                               })
      info <- paste(c(cs, cc), collapse = " ")
      true_value <- exp(log(ref$value) + b * log(cc))
      if (true_value > 1e-320 && true_value < 1e307) expect_false(warned, label = info)
      if (true_value > 1e309 || true_value < 1e-325) expect_true(warned, label = info)
      if (warned) expect_true(f$value %in% c(0, Inf), label = info)
      expect_true(all(is.finite(f$W)) && all(is.finite(f$H)), label = info)
      # x / max(x) and (c x) / max(c x) differ by rounding, which can change
      # an accept/reject decision of the extrapolation; both fits run to
      # the same stationary point, to the precision of the stopping rule
      expect_equal((f$W %*% f$H) / cc, Vref, tolerance = 1e-6, label = info)
      expect_equal(tail(f$rel_error, 1), tail(ref$rel_error, 1), tolerance = 1e-6, label = info)
      if (is.finite(ref$value * cc^b) && ref$value * cc^b > 1e-290) {
        expect_equal(f$value, ref$value * cc^b, tolerance = 1e-7, label = info)
      }
    }
  }
  # squared norms that overflow: x * 1e200 fits (the objective itself, about
  # 1e400, is beyond the double range and reported as Inf)
  expect_warning(f <- nmf(x * 1e200, 2, seed = 1), class = "aspectr_warning_numeric")
  expect_identical(f$value, Inf)
  expect_true(all(is.finite(f$W)))
  expect_equal(tail(f$rel_error, 1), tail(nmf(x, 2, seed = 1)$rel_error, 1), tolerance = 1e-8)
  # penalties keep their meaning: the penalized problem in the user's units
  p <- nmf(x, 2, L1 = c(0.3, 0.1), L2 = c(0.2, 0.4), seed = 1, max_iter = 50, tol = 0)
  pen <- 0.3 * sum(p$W) + 0.1 * sum(p$H) + 0.1 * sum(p$W^2) + 0.2 * sum(p$H^2)
  expect_equal(p$value, 0.5 * sum((x - p$W %*% p$H)^2) + pen, tolerance = 1e-10)
  k <- nmf(x * 37, 2, loss = "kl", L1 = c(0.3, 0.1), L2 = c(0.2, 0.4), seed = 1, max_iter = 50, tol = 0)
  V <- k$W %*% k$H; X <- x * 37
  pen <- 0.3 * sum(k$W) + 0.1 * sum(k$H) + 0.1 * sum(k$W^2) + 0.2 * sum(k$H^2)
  expect_equal(k$value, sum(X * log(X / V) - X + V) + pen, tolerance = 1e-10)
})

test_that("as_plsa() of a penalized KL fit reports the likelihood of the model it returns", {
  set.seed(3)
  X <- matrix(rpois(50 * 30, 4 * runif(50 * 30)), 50, 30)
  for (pen in list(c(0, 0), c(2, 1), c(0.5, 0))) {
    fit <- nmf(X, 3, loss = "kl", L1 = pen, L2 = rev(pen), seed = 1, max_iter = 200)
    pl <- as_plsa(fit)
    P <- pl$factors[[1]] %*% diag(pl$lambda) %*% t(pl$factors[[2]])
    G <- X / sum(X)
    nz <- G > 0
    kl <- sum(G[nz] * log(G[nz] / P[nz]))
    expect_equal(pl$kl, kl, tolerance = 1e-9)
    expect_equal(pl$value, kl, tolerance = 1e-9)
    expect_equal(as.numeric(logLik(pl)), sum(X[nz] * log(P[nz])), tolerance = 1e-9)
  }
})

test_that("sizes beyond the integer range: a 5e4 x 5e4 sparse matrix fits", {
  set.seed(2)
  n <- 5e4
  x <- Matrix::sparseMatrix(i = sample.int(n, 2000, replace = TRUE), j = sample.int(n, 2000, replace = TRUE),
                            x = rpois(2000, 3) + 1, dims = c(n, n))
  expect_gt(prod(as.numeric(dim(x))), 2^31)
  for (cm in list(c("kl", "cd"), c("kl", "mu"), c("frobenius", "hals"))) {
    expect_no_warning(f <- nmf(x, 2, loss = cm[1], method = cm[2], max_iter = 3, tol = 0, seed = 1))
    expect_true(all(is.finite(f$W)) && all(is.finite(f$H)), label = paste(cm, collapse = "/"))
    expect_true(all(is.finite(f$objective)), label = paste(cm, collapse = "/"))
  }
  expect_no_warning(f <- nmf(x, 2, init = "random", max_iter = 3, seed = 1))
  expect_true(all(is.finite(f$W)))
})

test_that("beta-divergence updates stay monotone and finite when penalties dwarf the data term", {
  # beta <= 0 on data near 1e100 with L1 penalties: in the units of the
  # scaled data the penalty is huge, and the plain updates overshoot (the
  # objective rose to 1e154 and then overflowed); the safeguarded block steps
  # never raise it
  x <- structure(c(216.819, 4.41353, 0.000197638, 17.3357, 5.34122,
    2.66681, 0.000821751, 0.003272, 0.00174733, 0.025191, 28.3795,
    0.00065845, 27.1319, 0.00123584, 345.75, 0.484679, 0.00054019,
    18.8133, 0.00140801, 0.000294681, 0.855365, 0.378327, 126.925,
    0.0253783, 451.177, 0.00109264, 0.0205062, 0.00640654, 0.168948,
    0.000582567, 31.813, 0.0172256, 0.0367809, 0.0221957, 81.6891,
    0.308782, 0.00108311, 0.000650885, 0.00190196, 36.9797, 0.00231278,
    0.00177173, 0.0989575, 7.71787, 33.1881, 27.9881, 60.3195, 9.27757,
    2.01265, 2.02661, 0.0336443, 0.00578842, 0.050088, 79.8901, 129.172,
    15.3321, 112.281, 0.00228972, 2.19275, 0.0468593, 209.884, 0.0100043,
    22.343, 4.84677), dim = c(8L, 8L))
  for (cc in c(1, 3.9e97, 1e140)) {
    # (penalties that dwarf the data term: the zero model, which they say)
    fit <- quiet_zero(nmf(x * cc, 5, loss = "beta", beta = -1, method = "mu", seed = 349195,
                          init = "random", L1 = c(0.86, 0.636), max_iter = 30, tol = 0))
    tr <- c(fit$initial, fit$objective)
    expect_true(all(is.finite(tr)))
    expect_true(all(diff(tr) <= 1e-12 * abs(tr[-length(tr)])))
    expect_true(all(is.finite(fit$W)) && all(fit$W >= 0) && all(is.finite(fit$H)))
  }
  # one non-zero near 1e272 and L1 near 1e134, beta in (0, 1)
  y <- matrix(0, 4, 12); y[4, 5] <- 1.3641694256049103e+272
  fit <- quiet_zero(nmf(y, 1, loss = "beta", beta = 0.48241809681057934, method = "mu", nrun = 2,
                        seed = 918074, max_iter = 100, init = "nndsvdar",
                        L1 = c(2.3574539754328861e+134, 1.9200184008853867e+134)))
  tr <- c(fit$initial, fit$objective)
  expect_true(all(is.finite(tr)))
  expect_true(all(diff(tr) <= 1e-12 * abs(tr[-length(tr)])))
})

test_that("an objective trace that overflows warns even when the final value does not", {
  # 7 x 25 data at 4.7e299: rank one, so the fit ends exact (value 0) while
  # the start's objective, in the data's units, is beyond the doubles
  x <- matrix(4.7e299, 7, 25)
  for (init in c("nndsvdar", "random")) {
    for (nrun in c(1, 3)) {
      info <- paste(init, nrun)
      w <- NULL
      f <- withCallingHandlers(nmf(x, 2, init = init, nrun = nrun, seed = 1),
                               aspectr_warning_numeric = function(c) {
                                 w <<- c(w, conditionMessage(c))
                                 invokeRestart("muffleWarning")
                               })
      expect_identical(f$value, 0, label = info)
      expect_identical(f$initial, Inf, label = info)
      expect_length(w, 1)
      expect_match(w[1], "initial", label = info)
      # the model is the data: the factors are finite and exact
      expect_true(all(is.finite(f$W)) && all(is.finite(f$H)), label = info)
      expect_equal(f$W %*% f$H, x, tolerance = 1e-6, label = info)
    }
  }
  # the same data at 1: every statistic finite, no warning
  expect_no_warning(f1 <- nmf(x / 4.7e299, 2, init = "nndsvdar", nrun = 3, seed = 1))
  expect_true(all(is.finite(c(f1$initial, f1$objective, f1$run_values))))
})
