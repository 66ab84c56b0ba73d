# Sampling weights in lca(): the weighted likelihood equals replicated rows
# for whole-number weights; the sandwich standard errors against a plain-R
# linearization with numerical scores.

lca_carcinoma <- function() expand_patterns(polca_carcinoma_patterns)

test_that("whole-number weights fit as the replicated rows", {
  cc <- lca_carcinoma()
  set.seed(1)
  w <- sample(1:3, nrow(cc), TRUE)
  reps <- rep(seq_len(nrow(cc)), w)
  a <- lca(cc, 3, seed = 1, weights = w, tol = 1e-12, max_iter = 5000)
  b <- lca(cc[reps, ], 3, seed = 1, tol = 1e-12, max_iter = 5000)
  expect_equal(a$llik, b$llik, tolerance = 1e-12)
  expect_equal(a$probs, b$probs, tolerance = 1e-8)
  expect_equal(a$P, b$P, tolerance = 1e-8)
  for (f in c("AIC", "BIC", "Gsq", "Chisq", "npar")) expect_equal(a[[f]], b[[f]], tolerance = 1e-10, info = f)
  expect_equal(a$N, 118)
  expect_equal(a$sum_weights, sum(w))
  expect_equal(unname(a$posterior[reps, ]), unname(b$posterior), tolerance = 1e-8)
  # the weighted log-likelihood by hand
  lp <- log(rowSums(sapply(1:3, function(r) a$P[r] * Reduce(`*`, lapply(1:7, function(j) a$probs[[j]][r, cc[[j]]])))))
  expect_equal(a$llik, sum(w * lp), tolerance = 1e-12)
  expect_equal(glance(a)$df, glance(b)$df)
  # predict's expected frequencies use the total weight
  expect_equal(predict(a, cc[1:3, ], type = "frequency"), predict(b, cc[1:3, ], type = "frequency"))
  # the regression too
  set.seed(2)
  cc$x <- rnorm(nrow(cc))
  ra <- lca(cbind(A, B, C, D, E, F, G) ~ x, cc, 2, seed = 1, weights = w, tol = 1e-12, max_iter = 5000)
  rb <- lca(cbind(A, B, C, D, E, F, G) ~ x, cc[reps, ], 2, seed = 1, tol = 1e-12, max_iter = 5000)
  expect_equal(ra$llik, rb$llik, tolerance = 1e-12)
  expect_equal(ra$coeff, rb$coeff, tolerance = 1e-8)
  expect_equal(ra$probs, rb$probs, tolerance = 1e-8)
  expect_equal(ra$P, rb$P, tolerance = 1e-8)
  expect_equal(ra$BIC, rb$BIC, tolerance = 1e-10)
  expect_equal(ra$Gsq, rb$Gsq, tolerance = 1e-8)
  # formula ~ 1 passes the weights on
  f1 <- lca(cbind(A, B, C, D, E, F, G) ~ 1, cc, 3, seed = 1, weights = w, tol = 1e-12, max_iter = 5000)
  expect_equal(f1$llik, a$llik)
})

test_that("whole-number weights with missing responses, by EM, SQUAREM, coordinate descent and one class", {
  set.seed(11)
  n <- 150
  z <- sample(1:2, n, TRUE, prob = c(0.6, 0.4))
  d <- data.frame(a = ifelse(runif(n) < c(0.8, 0.2)[z], 1, 2), b = ifelse(runif(n) < c(0.7, 0.3)[z], 1, 2),
                  c = sample(1:3, n, TRUE), e = ifelse(runif(n) < c(0.9, 0.1)[z], 1, 2))
  d$b[sample(n, 20)] <- NA
  d$c[sample(n, 15)] <- NA
  d[1, ] <- NA  # every response missing: dropped, with its weight
  w <- sample(1:4, n, TRUE)
  reps <- rep(seq_len(n), w)
  for (m in c("squarem", "em")) {
    a <- lca(d, 2, seed = 1, weights = w, tol = 1e-12, max_iter = 5000, method = m)
    b <- lca(d[reps, ], 2, seed = 1, tol = 1e-12, max_iter = 5000, method = m)
    expect_equal(a$llik, b$llik, tolerance = 1e-12)
    expect_equal(a$probs, b$probs, tolerance = 1e-8)
    expect_equal(a$N, n - 1)
    expect_equal(a$sum_weights, sum(w[-1]))
  }
  ok <- stats::complete.cases(d)
  reps <- rep(which(ok), w[ok])
  a <- lca(d[ok, ], 2, seed = 1, weights = w[ok], tol = 1e-12, max_iter = 5000, method = "cd")
  b <- lca(d[reps, ], 2, seed = 1, tol = 1e-12, max_iter = 5000, method = "cd")
  expect_equal(a$llik, b$llik, tolerance = 1e-12)
  expect_equal(a$probs, b$probs, tolerance = 1e-8)
  expect_equal(lca(d, 1, weights = w)$llik, lca(d[rep(seq_len(n), w), ], 1)$llik, tolerance = 1e-12)
})

test_that("unit weights give N / (N - 1) times the model-based covariance; a PSU per row is no clustering", {
  cc <- lca_carcinoma()
  u <- lca(cc, 3, seed = 1, tol = 1e-12, max_iter = 5000)
  u1 <- lca(cc, 3, seed = 1, tol = 1e-12, max_iter = 5000, weights = rep(1, 118))
  expect_equal(u1$llik, u$llik, tolerance = 1e-12)
  expect_equal(vcov(u1), 118 / 117 * vcov(u), tolerance = 1e-6)
  set.seed(3)
  w <- runif(118, 0.5, 2)
  a <- lca(cc, 3, seed = 1, tol = 1e-12, max_iter = 5000, weights = w)
  b <- lca(cc, 3, seed = 1, tol = 1e-12, max_iter = 5000, weights = w, psu = sample(118))
  expect_equal(vcov(b), vcov(a), tolerance = 1e-10)
  expect_equal(b$se, a$se, tolerance = 1e-10)
  expect_output(print(a), "sampling weights")
})

# log P(y_i) of every row at free parameters theta (the parametrization of
# coef()), plain R
ref_loglik_rows <- function(theta, codes, k, nl) {
  lp <- c(0, theta[seq_len(k - 1)])
  P <- exp(lp) / sum(exp(lp))
  pos <- k - 1
  out <- matrix(rep(P, each = nrow(codes)), nrow(codes))
  for (j in seq_along(nl)) {
    for (r in seq_len(k)) {
      e <- c(0, theta[pos + seq_len(nl[j] - 1)])
      pos <- pos + nl[j] - 1
      p <- exp(e) / sum(exp(e))
      out[, r] <- out[, r] * p[codes[, j]]
    }
  }
  log(rowSums(out))
}

test_that("the sandwich covariance matches a plain-R linearization with numerical scores", {
  set.seed(7)
  n <- 400
  z <- sample(1:2, n, TRUE, prob = c(0.6, 0.4))
  d <- data.frame(a = ifelse(runif(n) < c(0.8, 0.25)[z], 1, 2), b = ifelse(runif(n) < c(0.7, 0.2)[z], 1, 2),
                  c = sapply(z, function(r) sample(1:3, 1, prob = if (r == 1) c(0.6, 0.3, 0.1) else c(0.2, 0.3, 0.5))),
                  e = ifelse(runif(n) < c(0.75, 0.3)[z], 1, 2))
  w <- runif(n, 0.3, 3)
  strata <- rep(1:4, each = 100)
  psu <- rep(1:40, each = 10)
  fit <- lca(d, 2, seed = 1, tol = 1e-14, max_iter = 10000, weights = w, psu = psu, strata = strata)
  expect_true(fit$converged)
  theta <- unname(coef(fit))
  codes <- as.matrix(d)
  nl <- c(2, 2, 3, 2)
  h <- 1e-5
  S <- sapply(seq_along(theta), function(q) {
    up <- theta; up[q] <- up[q] + h
    dn <- theta; dn[q] <- dn[q] - h
    (ref_loglik_rows(up, codes, 2, nl) - ref_loglik_rows(dn, codes, 2, nl)) / (2 * h)
  })
  # the weighted score equations hold at the fit
  expect_lt(max(abs(colSums(w * S))), 1e-4)
  A <- crossprod(S * sqrt(w))
  Z <- rowsum(S * w, psu)
  st <- strata[!duplicated(psu)]
  B <- Reduce(`+`, lapply(unique(st), function(s) {
    zh <- Z[st == s, , drop = FALSE]
    nrow(zh) / (nrow(zh) - 1) * crossprod(sweep(zh, 2, colMeans(zh)))
  }))
  Ai <- solve(A)
  V <- Ai %*% B %*% Ai
  expect_equal(unname(vcov(fit)), V, tolerance = 1e-5)
  expect_identical(fit$design$n_psu, 40L)
  expect_identical(fit$design$n_strata, 4L)
  # no strata: one stratum of 40 PSUs
  f2 <- lca(d, 2, seed = 1, tol = 1e-14, max_iter = 10000, weights = w, psu = psu)
  B2 <- 40 / 39 * crossprod(sweep(Z, 2, colMeans(Z)))
  expect_equal(unname(vcov(f2)), Ai %*% B2 %*% Ai, tolerance = 1e-5)
  # the standard errors of the probabilities follow by the delta method
  p <- fit$probs$a[, 2]
  expect_equal(unname(fit$se$probs$a[, 2]), unname(p * (1 - p) * sqrt(diag(vcov(fit))[c("a[2]:class_1", "a[2]:class_2")])),
               tolerance = 1e-8)
})

test_that("weighted regressions: sandwich standard errors against the numerical scores", {
  set.seed(8)
  n <- 300
  x <- rnorm(n)
  z <- 1 + (runif(n) < plogis(-0.2 + x))
  d <- data.frame(x = x, a = ifelse(runif(n) < c(0.85, 0.2)[z], 1, 2), b = ifelse(runif(n) < c(0.8, 0.25)[z], 1, 2),
                  c = ifelse(runif(n) < c(0.9, 0.3)[z], 1, 2))
  w <- runif(n, 0.5, 2)
  psu <- rep(1:30, each = 10)
  fit <- lca(cbind(a, b, c) ~ x, d, 2, seed = 1, tol = 1e-14, max_iter = 10000, weights = w, psu = psu)
  theta <- unname(coef(fit))
  X <- cbind(1, x)
  codes <- as.matrix(d[c("a", "b", "c")])
  ll_rows <- function(th) {
    eta <- X %*% th[1:2]
    prior <- cbind(1, exp(eta)) / (1 + exp(eta))[, 1]
    pos <- 2
    out <- prior
    for (j in 1:3) for (r in 1:2) {
      e <- c(0, th[pos + 1]); pos <- pos + 1
      p <- exp(e) / sum(exp(e))
      out[, r] <- out[, r] * p[codes[, j]]
    }
    log(rowSums(out))
  }
  h <- 1e-5
  S <- sapply(seq_along(theta), function(q) {
    up <- theta; up[q] <- up[q] + h
    dn <- theta; dn[q] <- dn[q] - h
    (ll_rows(up) - ll_rows(dn)) / (2 * h)
  })
  expect_lt(max(abs(colSums(w * S))), 1e-4)
  Ai <- solve(crossprod(S * sqrt(w)))
  Z <- rowsum(S * w, psu)
  V <- Ai %*% (30 / 29 * crossprod(sweep(Z, 2, colMeans(Z)))) %*% Ai
  expect_equal(unname(vcov(fit)), V, tolerance = 1e-5)
  td <- tidy(fit, "coefficients")
  expect_equal(td$std.error, sqrt(diag(V))[1:2], tolerance = 1e-5)
  expect_equal(unname(fit$P), unname(colSums(fit$prior * w) / sum(w)))
})

test_that("weights reach lca_rank(), predict() and the tidiers; bad designs are refused", {
  cc <- lca_carcinoma()
  set.seed(4)
  w <- runif(118, 0.5, 2)
  r <- lca_rank(cc, k = 1:3, nrun = 3, seed = 1, weights = w)
  expect_equal(r$table$logLik, vapply(r$fits, function(f) f$llik, 1))
  expect_true(all(vapply(r$fits, function(f) isTRUE(all.equal(f$sum_weights, sum(w))), TRUE)))
  f <- r$fits[[3]]
  expect_equal(predict(f, cc), f$posterior, ignore_attr = TRUE, tolerance = 1e-10)
  td <- tidy(f)
  expect_equal(td$std.error[td$variable == "D" & td$level == "2"], unname(f$se$probs$D[, 2]))
  expect_false(anyNA(tidy(f, "classes")$std.error))
  expect_error(anova(r$fits[[2]], f), class = "aspectr_error_unsupported")
  expect_error(lca(cc, 2, weights = -w), class = "aspectr_error_input")
  expect_error(lca(cc, 2, weights = w[-1]), class = "aspectr_error_input")
  expect_error(lca(cc, 2, weights = c(NA, w[-1])), class = "aspectr_error_input")
  expect_error(lca(cc, 2, weights = w, psu = c(NA, 1:117)), class = "aspectr_error_input")
  # a stratum with a single PSU
  expect_error(lca(cc, 2, weights = w, psu = rep(1:59, 2), strata = c(1, rep(2, 117))),
               class = "aspectr_error_input")
  expect_error(lca(shards(list(cc[1:50, ], cc[51:118, ])), 2, weights = w), class = "aspectr_error_input")
})

test_that("estimates and standard errors do not change when every weight is multiplied by one number", {
  # the sandwich is invariant to the weights' scale; at 1e300 its meat (of
  # the weights' square) overflowed to NaN, at 1e-300 it underflowed to 0.
  # The regression's stopping rule took the log-likelihood in units of 1,
  # so weights of 1e-10 stopped it after 2 iterations (its M-step floors
  # the probabilities' sums at 1e-300: weights near that are beyond it)
  set.seed(1)
  n <- 60
  d <- data.frame(A = sample(c("a", "b"), n, TRUE), B = sample(c("x", "y", "z"), n, TRUE),
                  C = sample(1:2, n, TRUE), D = sample(c("p", "q"), n, TRUE))
  d$x <- stats::rnorm(n)
  w <- stats::runif(n, 0.5, 3)
  ref <- lca(d[1:4], 2, seed = 1, weights = w)$se
  reg_fit <- lca(cbind(A, B, C, D) ~ x, data = d, k = 2, seed = 1, weights = w)
  reg <- reg_fit$se
  for (c in c(1e-300, 1e-10, 1e300)) {
    se <- suppressWarnings(lca(d[1:4], 2, seed = 1, weights = w * c))$se
    expect_equal(se$P, ref$P, tolerance = 1e-8)
    expect_equal(se$probs, ref$probs, tolerance = 1e-8)
    if (c < 1e-100) next
    fr <- suppressWarnings(lca(cbind(A, B, C, D) ~ x, data = d, k = 2, seed = 1, weights = w * c))
    expect_equal(fr$coeff, reg_fit$coeff, tolerance = 1e-8)
    expect_equal(fr$iterations, reg_fit$iterations)
    expect_equal(fr$se$coeff, reg$coeff, tolerance = 1e-8)
  }
})

test_that("identification counts the observations, whatever the weights' scale", {
  set.seed(1)
  n <- 300
  cls <- sample(1:2, n, TRUE)
  d <- as.data.frame(lapply(1:4, function(j) ifelse(runif(n) < c(0.2, 0.8)[cls], "yes", "no")))
  w <- runif(n, 0.5, 2)
  expect_no_warning(a <- lca(d, 2, seed = 1, weights = w / sum(w)))
  b <- lca(d, 2, seed = 1, weights = w * n / sum(w))
  expect_equal(a$probs, b$probs, tolerance = 1e-8)
  # the degrees of freedom of the goodness of fit follow the weighted counts (documented)
  expect_identical(glance(b)$df, 15 - 9)
  # weights so large that X^2 overflows: the warning says so, not that a
  # pattern is improbable
  expect_warning(h <- lca(d, 2, seed = 1, weights = w * 1e300), "scale the weights", class = "aspectr_warning_numeric")
  expect_true(is.na(h$Chisq))
})
