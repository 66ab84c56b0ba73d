# Distal outcomes and covariates after classification: lca_distal() and
# lca_covariates() against a plain-R reference written independently here
# (loops, numerical derivatives, a different parametrization for ML), and
# against the truth of simulated data.

# ---- plain-R reference ------------------------------------------------------

# D[r, s] = P(W = s | X = r), by loops over observations
ref_D <- function(post, W, v = rep(1, nrow(post))) {
  k <- ncol(post)
  D <- matrix(0, k, k)
  for (r in 1:k) for (s in 1:k) {
    num <- 0
    den <- 0
    for (i in seq_len(nrow(post))) {
      num <- num + v[i] * post[i, r] * W[i, s]
      den <- den + v[i] * post[i, r]
    }
    D[r, s] <- num / den
  }
  D
}

ref_assign <- function(post, assignment) {
  if (assignment == "proportional") return(unname(post))
  W <- matrix(0, nrow(post), ncol(post))
  for (i in seq_len(nrow(post))) W[i, which.max(post[i, ])] <- 1
  W
}

# numerical derivatives by central differences
num_grad <- function(f, x, h = 1e-5) {
  vapply(seq_along(x), function(j) {
    e <- replace(numeric(length(x)), j, h)
    (f(x + e) - f(x - e)) / (2 * h)
  }, numeric(1))
}
num_jac <- function(f, x, h = 1e-5) {
  do.call(cbind, lapply(seq_along(x), function(j) {
    e <- replace(numeric(length(x)), j, h)
    (f(x + e) - f(x - e)) / (2 * h)
  }))
}
num_hess <- function(f, x, h = 1e-4) {
  num_jac(function(y) num_grad(f, y, h), x, h)
}

# M-estimation sandwich: psi(theta) returns the n x p contributions
ref_sandwich <- function(psi, theta) {
  A <- -num_jac(function(t) colSums(psi(t)), theta)
  P <- psi(theta)
  B <- crossprod(P)
  solve(A) %*% B %*% t(solve(A))
}

# BCH / naive for a continuous distal: weights h of every observation and
# class (expanded data), weighted means and variances
ref_weighted_continuous <- function(z, h) {
  k <- ncol(h)
  mu <- s2 <- numeric(k)
  for (r in 1:k) {
    mu[r] <- sum(h[, r] * z) / sum(h[, r])
    s2[r] <- sum(h[, r] * (z - mu[r])^2) / sum(h[, r])
  }
  theta <- c(mu, s2)
  psi <- function(t) {
    m <- t[1:k]
    v <- t[k + 1:k]
    cbind(sapply(1:k, function(r) h[, r] * (z - m[r])),
          sapply(1:k, function(r) h[, r] * ((z - m[r])^2 - v[r])))
  }
  list(est = theta, V = ref_sandwich(psi, theta))
}

ref_weighted_categorical <- function(z, h) {
  k <- ncol(h)
  lv <- levels(z)
  est <- unlist(lapply(1:k, function(r) sapply(lv, function(l) sum(h[z == l, r]) / sum(h[, r]))))
  psi <- function(t) {
    do.call(cbind, lapply(1:k, function(r) {
      sapply(seq_along(lv), function(c) h[, r] * ((z == lv[c]) - t[(r - 1) * length(lv) + c]))
    }))
  }
  list(est = unname(est), V = ref_sandwich(psi, unname(est)))
}

# ML three-step, continuous distal, parametrized by (class logits, means,
# log standard deviations); the log-likelihood by loops over records
ref_ml_continuous_ll <- function(theta, z, W, D) {
  k <- ncol(W)
  g <- c(0, theta[seq_len(k - 1)])
  P <- exp(g) / sum(exp(g))
  mu <- theta[k - 1 + 1:k]
  sd <- exp(theta[2 * k - 1 + 1:k])
  ll <- 0
  for (i in seq_along(z)) {
    for (s in 1:k) {
      if (W[i, s] == 0) next
      ll <- ll + W[i, s] * log(sum(P * dnorm(z[i], mu, sd) * D[, s]))
    }
  }
  ll
}

ref_maximize <- function(f, start) {
  o <- optim(start, f, method = "BFGS", control = list(fnscale = -1, maxit = 5000, reltol = 1e-15))
  th <- o$par
  for (it in 1:20) {  # Newton steps on numerical derivatives
    step <- solve(-num_hess(f, th), num_grad(f, th))
    th <- th + step
    if (max(abs(step)) < 1e-10) break
  }
  th
}

# ---- tiny data --------------------------------------------------------------

tiny_data <- function(n = 80, seed = 11) {
  set.seed(seed)
  cls <- sample(1:2, n, replace = TRUE, prob = c(0.55, 0.45))
  items <- as.data.frame(lapply(1:4, function(j) ifelse(runif(n) < c(0.2, 0.8)[cls], "y", "n")))
  names(items) <- paste0("q", 1:4)
  list(items = items, cls = cls, z = rnorm(n, c(1, 2.5)[cls], c(1, 1.5)[cls]),
       zc = factor(ifelse(runif(n) < c(0.3, 0.7)[cls], "a", ifelse(runif(n) < 0.5, "b", "c"))),
       x = rnorm(n) + (cls == 2))
}

test_that("D, BCH and naive estimates and sandwich SEs match the plain-R reference", {
  td <- tiny_data()
  fit <- lca(td$items, 2, seed = 1, nrun = 5)
  for (assignment in c("modal", "proportional")) {
    W <- ref_assign(fit$posterior, assignment)
    D <- ref_D(fit$posterior, W)
    for (method in c("bch", "naive")) {
      h <- if (method == "bch") W %*% solve(D) else W
      d <- lca_distal(fit, td$z, method = method, assignment = assignment)
      expect_equal(unname(d$D), D, tolerance = 1e-10)
      ref <- ref_weighted_continuous(td$z, h)
      expect_equal(unname(coef(d)), ref$est, tolerance = 1e-8)
      expect_equal(unname(vcov(d)), ref$V, tolerance = 1e-6)
      dc <- lca_distal(fit, td$zc, method = method, assignment = assignment)
      ref <- ref_weighted_categorical(td$zc, h)
      expect_equal(unname(coef(dc)), ref$est, tolerance = 1e-8)
      expect_equal(unname(vcov(dc)), unname(ref$V), tolerance = 1e-6)
    }
  }
  # BCH weights of an observation sum to 1 over the classes
  W <- ref_assign(fit$posterior, "modal")
  expect_equal(rowSums(W %*% solve(ref_D(fit$posterior, W))), rep(1, nrow(W)))
})

test_that("ML three-step for a continuous distal matches the plain-R reference", {
  td <- tiny_data()
  fit <- lca(td$items, 2, seed = 1, nrun = 5)
  W <- ref_assign(fit$posterior, "modal")
  D <- ref_D(fit$posterior, W)
  f <- function(t) ref_ml_continuous_ll(t, td$z, W, D)
  th <- ref_maximize(f, c(0, 1, 2, 0, 0))
  Vt <- solve(-num_hess(f, th))
  # (means, variances) = g(theta): the delta method
  k <- 2
  J <- matrix(0, 2 * k, length(th))
  J[cbind(1:k, k - 1 + 1:k)] <- 1
  J[cbind(k + 1:k, 2 * k - 1 + 1:k)] <- 2 * exp(2 * th[2 * k - 1 + 1:k])
  est <- c(th[k - 1 + 1:k], exp(2 * th[2 * k - 1 + 1:k]))
  d <- lca_distal(fit, td$z, method = "ml")
  expect_identical(d$se_type, "model")
  expect_equal(unname(coef(d)), est, tolerance = 1e-6)
  expect_equal(unname(vcov(d)), J %*% Vt %*% t(J), tolerance = 1e-5)
  expect_equal(d$logLik, f(th), tolerance = 1e-10)
  expect_equal(unname(d$shares), c(1, exp(th[1])) / (1 + exp(th[1])), tolerance = 1e-6)
  # proportional assignment: the pseudo-likelihood, sandwich SEs over
  # the observations' score vectors
  W <- ref_assign(fit$posterior, "proportional")
  D <- ref_D(fit$posterior, W)
  f <- function(t) ref_ml_continuous_ll(t, td$z, W, D)
  th <- ref_maximize(f, c(0, 1, 2, 0, 0))
  Ainv <- solve(-num_hess(f, th))
  S <- t(vapply(seq_along(td$z), function(i) {
    num_grad(function(t) ref_ml_continuous_ll(t, td$z[i], W[i, , drop = FALSE], D), th)
  }, numeric(length(th))))
  Vt <- Ainv %*% crossprod(S) %*% Ainv
  J[cbind(k + 1:k, 2 * k - 1 + 1:k)] <- 2 * exp(2 * th[2 * k - 1 + 1:k])
  d <- lca_distal(fit, td$z, method = "ml", assignment = "proportional")
  expect_identical(d$se_type, "sandwich")
  expect_equal(unname(coef(d)), c(th[k - 1 + 1:k], exp(2 * th[2 * k - 1 + 1:k])), tolerance = 1e-6)
  expect_equal(unname(vcov(d)), J %*% Vt %*% t(J), tolerance = 1e-5)
})

test_that("ML three-step for a categorical distal and for covariates match the plain-R reference", {
  td <- tiny_data()
  fit <- lca(td$items, 2, seed = 1, nrun = 5)
  W <- ref_assign(fit$posterior, "modal")
  D <- ref_D(fit$posterior, W)
  lv <- levels(td$zc)
  # categorical: (class logit, per class the probabilities by softmax of
  # (0, a2, a3))
  f <- function(t) {
    P <- c(1, exp(t[1])) / (1 + exp(t[1]))
    rho <- rbind(c(1, exp(t[2:3])) / sum(c(1, exp(t[2:3]))), c(1, exp(t[4:5])) / sum(c(1, exp(t[4:5]))))
    ll <- 0
    for (i in seq_along(td$zc)) {
      c <- match(td$zc[i], lv)
      for (s in 1:2) if (W[i, s] > 0) ll <- ll + W[i, s] * log(sum(P * rho[, c] * D[, s]))
    }
    ll
  }
  th <- ref_maximize(f, rep(0, 5))
  g <- function(t) {
    c(c(1, exp(t[2:3])) / sum(c(1, exp(t[2:3]))), c(1, exp(t[4:5])) / sum(c(1, exp(t[4:5]))))
  }
  J <- num_jac(g, th)
  d <- lca_distal(fit, td$zc, method = "ml")
  expect_equal(unname(coef(d)), g(th), tolerance = 1e-6)
  expect_equal(unname(vcov(d)), J %*% solve(-num_hess(f, th)) %*% t(J), tolerance = 1e-5)
  # covariates: P(X = 2 | x) = plogis(b0 + b1 x)
  f <- function(b) {
    ll <- 0
    for (i in seq_along(td$x)) {
      p2 <- plogis(b[1] + b[2] * td$x[i])
      for (s in 1:2) if (W[i, s] > 0) ll <- ll + W[i, s] * log((1 - p2) * D[1, s] + p2 * D[2, s])
    }
    ll
  }
  b <- ref_maximize(f, c(0, 0))
  cv <- lca_covariates(fit, ~ x, data.frame(x = td$x), method = "ml")
  expect_equal(unname(coef(cv)), b, tolerance = 1e-6)
  expect_equal(unname(vcov(cv)), solve(-num_hess(f, b)), tolerance = 1e-5)
  expect_named(coef(cv), c("class_2:(Intercept)", "class_2:x"))
  # BCH covariates: the logit weighted by h (expanded data), sandwich
  h <- W %*% solve(D)
  fb <- function(b) sum(h[, 1] * plogis(b[1] + b[2] * td$x, lower.tail = FALSE, log.p = TRUE) +
                          h[, 2] * plogis(b[1] + b[2] * td$x, log.p = TRUE))
  bb <- ref_maximize(fb, c(0, 0))
  psi <- function(b) {
    p2 <- plogis(b[1] + b[2] * td$x)
    cbind(h[, 2] - rowSums(h) * p2, td$x * (h[, 2] - rowSums(h) * p2))
  }
  cb <- lca_covariates(fit, ~ x, data.frame(x = td$x), method = "bch")
  expect_equal(unname(coef(cb)), bb, tolerance = 1e-6)
  expect_equal(unname(vcov(cb)), ref_sandwich(psi, bb), tolerance = 1e-6)
  # naive with modal assignment: the logit of the assigned class
  nv <- lca_covariates(fit, ~ x, data.frame(x = td$x), method = "naive")
  g2 <- suppressWarnings(glm(I(fit$predclass == 2) ~ td$x, family = binomial))
  expect_equal(unname(coef(nv)), unname(coef(g2)), tolerance = 1e-6)
})

test_that("ML three-step covariates with three classes match the plain-R reference", {
  td <- tiny_data(150, seed = 5)
  fit <- lca(td$items, 3, seed = 1, nrun = 10)
  W <- ref_assign(fit$posterior, "modal")
  D <- ref_D(fit$posterior, W)
  f <- function(b) {
    B <- cbind(0, matrix(b, 2, 2))  # rows: intercept, x; columns: classes
    ll <- 0
    for (i in seq_along(td$x)) {
      eta <- B[1, ] + B[2, ] * td$x[i]
      p <- exp(eta) / sum(exp(eta))
      for (s in 1:3) if (W[i, s] > 0) ll <- ll + W[i, s] * log(sum(p * D[, s]))
    }
    ll
  }
  b <- ref_maximize(f, rep(0, 4))
  cv <- lca_covariates(fit, ~ x, data.frame(x = td$x), method = "ml")
  expect_named(coef(cv), c("class_2:(Intercept)", "class_2:x", "class_3:(Intercept)", "class_3:x"))
  expect_equal(unname(coef(cv)), b, tolerance = 1e-6)
  expect_equal(unname(vcov(cv)), solve(-num_hess(f, b)), tolerance = 1e-5)
  expect_identical(cv$wald$df, c(2L, 2L))
})

test_that("a categorical distal: ML three-step equals BCH (both saturated) when BCH stays in [0, 1]", {
  # P(W, Z) = P(X, Z) D is linear and invertible: the ML estimate of the
  # saturated model is the BCH one whenever that is a distribution
  td <- tiny_data()
  fit <- lca(td$items, 2, seed = 1, nrun = 5)
  for (a in c("modal", "proportional")) {
    b <- lca_distal(fit, td$zc, method = "bch", assignment = a)
    skip_if(any(coef(b) <= 0))
    m <- lca_distal(fit, td$zc, method = "ml", assignment = a)
    expect_equal(coef(m), coef(b), tolerance = 1e-6)
    expect_equal(m$shares, b$shares, tolerance = 1e-6)
  }
})

test_that("sampling weights: weighted D and estimates, sandwich over the design", {
  td <- tiny_data()
  set.seed(3)
  w <- runif(nrow(td$items), 0.5, 2)
  fit <- lca(td$items, 2, seed = 1, nrun = 5, weights = w)
  W <- ref_assign(fit$posterior, "modal")
  D <- ref_D(fit$posterior, W, w)
  h <- W %*% solve(D)
  d <- lca_distal(fit, td$z)
  expect_equal(unname(d$D), D, tolerance = 1e-10)
  mu <- colSums(h * w * td$z) / colSums(h * w)
  expect_equal(unname(coef(d)[1:2]), mu, tolerance = 1e-10)
  # the meat: n / (n - 1) times the sum of squares of the weighted contributions
  n <- length(td$z)
  psi <- function(t) {
    w * cbind(sapply(1:2, function(r) h[, r] * (td$z - t[r])),
              sapply(1:2, function(r) h[, r] * ((td$z - t[r])^2 - t[2 + r])))
  }
  A <- -num_jac(function(t) colSums(psi(t)), coef(d))
  P <- psi(unname(coef(d)))
  V <- solve(A) %*% (n / (n - 1) * crossprod(sweep(P, 2, colMeans(P)))) %*% t(solve(A))
  expect_equal(unname(vcov(d)), V, tolerance = 1e-6)
  # ML covariates with weights: the weighted pseudo-likelihood, sandwich
  f_i <- function(b, i) {
    p2 <- plogis(b[1] + b[2] * td$x[i])
    ll <- 0
    for (s in 1:2) if (W[i, s] > 0) ll <- ll + w[i] * W[i, s] * log((1 - p2) * D[1, s] + p2 * D[2, s])
    ll
  }
  f <- function(b) sum(vapply(seq_len(n), function(i) f_i(b, i), numeric(1)))
  b <- ref_maximize(f, c(0, 0))
  S <- t(vapply(seq_len(n), function(i) num_grad(function(t) f_i(t, i), b), numeric(2)))
  Ainv <- solve(-num_hess(f, b))
  cv <- lca_covariates(fit, ~ x, data.frame(x = td$x), method = "ml")
  expect_identical(cv$se_type, "sandwich")
  expect_equal(unname(coef(cv)), b, tolerance = 1e-6)
  expect_equal(unname(vcov(cv)), Ainv %*% (n / (n - 1) * crossprod(sweep(S, 2, colMeans(S)))) %*% Ainv,
               tolerance = 1e-5)
  # primary sampling units within strata: the meat from the PSU totals
  psu <- rep(1:20, each = 4)
  strata <- rep(1:2, each = 40)
  fd <- lca(td$items, 2, seed = 1, nrun = 5, weights = w, psu = psu, strata = strata)
  dd <- lca_distal(fd, td$z, method = "naive")
  h <- ref_assign(fd$posterior, "modal")
  P <- psi(unname(coef(dd)))
  Z <- rowsum(P, psu)
  B <- 0
  for (st in 1:2) {
    zh <- Z[unique(psu[strata == st]), , drop = FALSE]
    B <- B + nrow(zh) / (nrow(zh) - 1) * crossprod(sweep(zh, 2, colMeans(zh)))
  }
  A <- -num_jac(function(t) colSums(psi(t)), unname(coef(dd)))
  expect_equal(unname(vcov(dd)), solve(A) %*% B %*% t(solve(A)), tolerance = 1e-6)
  # integer weights: the same estimates as repeating the rows
  wi <- rep(1:2, length.out = nrow(td$items))
  fw <- lca(td$items, 2, seed = 1, nrun = 5, weights = wi)
  rep_rows <- rep(seq_len(nrow(td$items)), wi)
  fr <- lca(td$items[rep_rows, ], 2, seed = 1, nrun = 5)
  skip_if(abs(fw$llik - fr$llik) > 1e-6 || max(abs(fw$P - fr$P)) > 1e-6)
  for (m in c("bch", "ml", "naive")) {
    expect_equal(coef(lca_distal(fw, td$z, method = m)), coef(lca_distal(fr, td$z[rep_rows], method = m)),
                 tolerance = 1e-6)
  }
})

# ---- simulation with known truth -------------------------------------------

# every element of `x` within `tol` of the truth (an absolute tolerance)
expect_near <- function(x, truth, tol) {
  expect_lt(max(abs(x - truth)), tol)
}

sim_lc <- function(n, sep, seed) {
  set.seed(seed)
  x <- rnorm(n)
  # P(class 2 | x) = plogis(-0.3 + 1 * x)
  cls <- 1 + (runif(n) < plogis(-0.3 + x))
  p <- c(0.5 - sep, 0.5 + sep)
  items <- as.data.frame(lapply(1:6, function(j) ifelse(runif(n) < p[cls], "yes", "no")))
  names(items) <- paste0("item", 1:6)
  z <- rnorm(n, c(0, 1)[cls], 1)
  zc <- factor(ifelse(runif(n) < c(0.2, 0.6)[cls], "high", "low"), levels = c("low", "high"))
  list(items = items, cls = cls, x = x, z = z, zc = zc)
}

# the fitted classes in the order of the truth (class 2: "yes" likelier)
sim_fit <- function(s) {
  fit <- lca(s$items, 2, seed = 1, nrun = 5)
  if (fit$probs$item1[1, "yes"] > fit$probs$item1[2, "yes"]) fit <- lca_reorder(fit, 2:1)
  fit
}

# The tolerances are absolute: the step-3 standard errors (about 0.03 for a
# mean, 0.015 for a probability, 0.07 for the slope here) leave out the
# error of the step-1 fit, which with weakly separated classes is of the
# same order (over three simulated data sets the BCH estimates missed the truth by up
# to 0.09, 0.055 and 0.06); the naive estimates miss by far more.
test_that("BCH and ML recover a distal outcome's truth where naive classify-analyze is biased", {
  # weakly separated classes (item probabilities 0.3 / 0.7 on 6 items, 17%
  # misclassified): the naive class means are pulled together
  s <- sim_lc(4000, 0.2, seed = 7)
  fit <- sim_fit(s)
  expect_gt(mean(fit$predclass != s$cls), 0.12)
  for (m in c("bch", "ml")) {
    d <- lca_distal(fit, s$z, method = m)
    expect_near(unname(coef(d)[c("class_1:mean", "class_2:mean")]), c(0, 1), 0.12)
    expect_near(coef(d)[["class_2:mean"]] - coef(d)[["class_1:mean"]], 1, 0.12)
    expect_near(unname(coef(d)[c("class_1:variance", "class_2:variance")]), c(1, 1), 0.15)
    dc <- lca_distal(fit, s$zc, method = m)
    expect_near(unname(coef(dc)[c("class_1:high", "class_2:high")]), c(0.2, 0.6), 0.08)
    expect_lt(glance(d)$wald.p.value, 1e-6)
  }
  nv <- lca_distal(fit, s$z, method = "naive")
  diff_naive <- coef(nv)[["class_2:mean"]] - coef(nv)[["class_1:mean"]]
  # attenuated: well below the true difference of 1, by many standard errors
  expect_lt(diff_naive, 0.8)
  expect_gt((1 - diff_naive) / sqrt(sum(diag(vcov(nv))[1:2])), 5)
  nc <- lca_distal(fit, s$zc, method = "naive")
  expect_lt(coef(nc)[["class_2:high"]] - coef(nc)[["class_1:high"]], 0.3)

  # strongly separated classes (0.1 / 0.9): BCH and ML agree with the truth
  s <- sim_lc(2000, 0.4, seed = 8)
  fit <- sim_fit(s)
  for (m in c("bch", "ml")) {
    d <- lca_distal(fit, s$z, method = m, assignment = "proportional")
    expect_near(unname(coef(d)[1:2]), c(0, 1), 0.12)
    dc <- lca_distal(fit, s$zc, method = m)
    expect_near(unname(coef(dc)[c(2, 4)]), c(0.2, 0.6), 0.08)
  }
})

test_that("BCH and ML recover a covariate's effect where naive classify-analyze is biased", {
  s <- sim_lc(4000, 0.2, seed = 7)
  fit <- sim_fit(s)
  dat <- data.frame(x = s$x)
  for (m in c("bch", "ml")) {
    cv <- lca_covariates(fit, ~ x, dat, method = m)
    expect_near(unname(coef(cv)), c(-0.3, 1), 0.2)
    expect_near(coef(cv)[["class_2:x"]], 1, 0.15)
  }
  nv <- lca_covariates(fit, ~ x, dat, method = "naive")
  expect_lt(coef(nv)[["class_2:x"]], 0.75)
  expect_gt((1 - coef(nv)[["class_2:x"]]) / sqrt(vcov(nv)[2, 2]), 5)
  # strongly separated classes
  s <- sim_lc(2000, 0.4, seed = 8)
  fit <- sim_fit(s)
  for (m in c("bch", "ml")) {
    cv <- lca_covariates(fit, ~ x, data.frame(x = s$x), method = m, assignment = "proportional")
    expect_near(unname(coef(cv)), c(-0.3, 1), 0.2)
  }
})

# ---- interface --------------------------------------------------------------

test_that("tidy(), glance(), print() and the Wald tests", {
  td <- tiny_data()
  fit <- lca(td$items, 2, seed = 1, nrun = 5)
  d <- lca_distal(fit, td$z)
  tb <- tidy(d, conf.int = TRUE)
  expect_named(tb, c("class", "term", "estimate", "std.error", "statistic", "p.value", "conf.low", "conf.high"))
  expect_identical(tb$term, c("mean", "mean", "variance", "variance"))
  expect_equal(tb$conf.low, tb$estimate - qnorm(0.975) * tb$std.error)
  expect_true(all(is.na(tb$statistic[tb$term == "variance"])))
  # Wald test of equal means by hand
  b <- coef(d)[2] - coef(d)[1]
  v <- vcov(d)[1, 1] + vcov(d)[2, 2] - 2 * vcov(d)[1, 2]
  expect_equal(d$wald$statistic[1], unname(b^2 / v))
  gl <- glance(d)
  expect_equal(gl$wald.p.value, pchisq(unname(b^2 / v), 1, lower.tail = FALSE))
  expect_identical(gl$nobs, nrow(td$items))
  expect_output(print(d), "BCH, modal assignment: continuous distal outcome")
  expect_equal(confint(d)[, 1], coef(d) - qnorm(0.975) * sqrt(diag(vcov(d))))
  dc <- lca_distal(fit, td$zc)
  tc <- tidy(dc, conf.int = TRUE)
  expect_identical(tc$term, rep(levels(td$zc), 2))
  expect_true(all(is.na(tc$statistic)))
  expect_true(all(tc$conf.low <= tc$estimate & tc$estimate <= tc$conf.high))
  expect_equal(sum(tc$estimate[tc$class == 1]), 1)
  expect_identical(dc$wald$df[1], 2L)  # (classes - 1) x (levels - 1)
  expect_output(print(dc), "P\\(outcome level \\| class\\)")
  # three classes: the pairwise tests
  d3 <- lca_distal(lca(td$items, 3, seed = 1, nrun = 5), td$z, method = "naive", assignment = "proportional")
  expect_identical(d3$wald$test, c("equal mean in all classes", "class_1 vs class_2", "class_1 vs class_3",
                                   "class_2 vs class_3"))
  expect_identical(d3$wald$df, c(2L, 1L, 1L, 1L))
  # poorly separated classes: a negative BCH variance is reported
  expect_warning(lca_distal(lca(td$items, 3, seed = 1, nrun = 5), td$z, assignment = "proportional"),
                 "BCH estimates include a variance below 0", class = "aspectr_warning_numeric")
  cv <- lca_covariates(fit, ~ x, data.frame(x = td$x))
  tb <- tidy(cv)
  expect_identical(tb$term, c("(Intercept)", "x"))
  expect_identical(tb$class, c(2L, 2L))
  expect_equal(tb$statistic, tb$estimate / tb$std.error)
  expect_identical(cv$wald$test, c("(Intercept) = 0 in all classes", "x = 0 in all classes"))
  expect_output(print(cv), "class membership logit")
  expect_identical(glance(cv)$type, "covariates")
})

test_that("outcomes are aligned to the rows the fit used; missing values are dropped", {
  td <- tiny_data()
  items <- td$items
  items[3, ] <- NA  # every response missing: the fit drops row 3
  fit <- lca(items, 2, seed = 1, nrun = 5)
  expect_identical(fit$N, nrow(items) - 1L)
  a <- lca_distal(fit, td$z)            # one value per row of the data
  b <- lca_distal(fit, td$z[-3])        # one per observation used
  expect_equal(coef(a), coef(b))
  z <- td$z
  z[5] <- NA
  expect_message(d <- lca_distal(fit, z), class = "aspectr_message_dropped")
  expect_identical(d$nobs, fit$N - 1L)
  expect_identical(d$dropped, 1L)
  # D is still that of every observation of the fit
  expect_equal(d$D, a$D)
  dat <- data.frame(x = td$x)
  dat$x[7] <- NA
  expect_message(cv <- lca_covariates(fit, ~ x, dat), class = "aspectr_message_dropped")
  expect_identical(cv$nobs, fit$N - 1L)
  # sharded data: rows of the whole
  sh <- shards(list(items[1:40, ], items[41:80, ]))
  fs <- lca(sh, 2, seed = 1, nrun = 5)
  expect_equal(coef(lca_distal(fs, td$z)), coef(a), tolerance = 1e-6)
})

test_that("bad input gets classed errors", {
  td <- tiny_data()
  fit <- lca(td$items, 2, seed = 1, nrun = 5)
  expect_error(lca_distal(fit, td$z[-1]), class = "aspectr_error_input_length")
  expect_error(lca_distal(fit, td$z[-1]), "observation the fit used \\(80\\), not 79")
  expect_error(lca_distal(fit), class = "aspectr_error_input_argument")
  expect_error(lca_distal(list(), td$z), class = "aspectr_error_input_type")
  expect_error(lca_distal(fit, td$z, method = "bhc"), class = "aspectr_error_input_argument")
  expect_error(lca_distal(fit, td$z, assignment = "soft"), class = "aspectr_error_input_argument")
  expect_error(lca_distal(fit, td$z, type = "count"), class = "aspectr_error_input_argument")
  expect_error(lca_distal(fit, as.character(td$z), type = "continuous"), class = "aspectr_error_input_type")
  expect_error(lca_distal(fit, replace(td$z, 2, Inf)), class = "aspectr_error_input_value")
  expect_error(lca_distal(fit, rep(NA_real_, 80)), class = "aspectr_error_input_empty")
  expect_error(lca_distal(fit, rep(1, 80)), class = "aspectr_error_input_value")
  expect_error(lca_distal(fit, rep("a", 80)), class = "aspectr_error_input_value")
  expect_error(lca_distal(fit, as.list(td$z)), class = "aspectr_error_input_type")
  expect_error(lca_distal(fit, td$z, metod = "ml"), class = "aspectr_error_input_argument")
  expect_error(lca_distal(lca(td$items, 1), td$z), class = "aspectr_error_input_argument")
  expect_error(lca_distal(lca_supervised(td$items, td$cls), td$z), class = "aspectr_error_unsupported")
  reg <- lca(cbind(q1, q2, q3, q4) ~ x, cbind(td$items, x = td$x), 2, seed = 1, nrun = 2)
  expect_error(lca_distal(reg, td$z), class = "aspectr_error_unsupported")
  dat <- data.frame(x = td$x)
  expect_error(lca_covariates(fit, x ~ 1, dat), class = "aspectr_error_input_argument")
  expect_error(lca_covariates(fit, ~ 1, dat), class = "aspectr_error_input_argument")
  expect_error(lca_covariates(fit, ~ y, dat), class = "aspectr_error_input_argument")
  expect_error(lca_covariates(fit, ~ x, dat[-1, , drop = FALSE]), class = "aspectr_error_input_length")
  expect_error(lca_covariates(fit, ~ x, td$x), class = "aspectr_error_input_type")
  expect_error(lca_covariates(fit, ~ x + x2, data.frame(x = td$x, x2 = 2 * td$x)), class = "aspectr_error_input_argument")
  expect_error(lca_covariates(fit, ~ x, data.frame(x = replace(td$x, 1, Inf))), class = "aspectr_error_input_value")
  expect_error(tidy(lca_distal(fit, td$z), conf.level = 2), class = "aspectr_error_input_argument")
})
