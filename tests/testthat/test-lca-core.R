# The LCA estimators whose iterations live in the C++ core
# (inst/include/aspectr/lca/: logit.h, threestep.h, regression.h) against
# the plain-R implementations they replaced (helper-lca-reference.R), on
# tiny data, and properties of the regression EM.

# tiny step-3 data: an outcome, a categorical outcome, covariates, class
# posteriors of k classes, their assignment weights W, sampling weights v
# and the classification error matrix D
core_ts_data <- function(n = 60, k = 2, seed = 1, assignment = "modal", weighted = FALSE) {
  set.seed(seed)
  cls <- sample(seq_len(k), n, TRUE)
  post <- matrix(runif(n * k, 0, 0.6), n, k)
  post[cbind(seq_len(n), cls)] <- post[cbind(seq_len(n), cls)] + 1.2
  post <- post / rowSums(post)
  W <- if (assignment == "modal") {
    m <- matrix(0, n, k)
    m[cbind(seq_len(n), max.col(post, ties.method = "first"))] <- 1
    m
  } else post
  v <- if (weighted) runif(n, 0.5, 2) else rep(1, n)
  D <- crossprod(post * v, W) / colSums(post * v)
  x <- rnorm(n) + 0.5 * cls
  list(z = rnorm(n, cls, 0.5 + cls / 2), zc = factor(sample(c("a", "b", "c"), n, TRUE), levels = c("a", "b", "c")),
       X = cbind(`(Intercept)` = 1, x = x, x2 = rnorm(n)), W = W, v = v, D = D, post = post, k = k)
}

test_that("the core's weighted multinomial logit equals the plain-R Newton-Raphson", {
  for (k in 2:3) for (weighted in c(FALSE, TRUE)) {
    d <- core_ts_data(k = k, seed = 10 + k, weighted = weighted)
    # BCH weights (negative entries, rows summing to 1) and plain posteriors
    for (H in list(d$W %*% solve(d$D), d$post)) {
      got <- ts_model_covariates(d$X, k)$mest(H, d$v)
      ref <- ref_ts_model_covariates(d$X, k)$mest(H, d$v)
      expect_equal(got$est, ref$est, tolerance = 1e-10)
      expect_equal(got$psi, ref$psi, tolerance = 1e-10)
      expect_equal(got$bread, ref$bread, tolerance = 1e-10)
    }
    # one safeguarded step from a point away from the maximum (the M step
    # of the ML covariates' EM), and the full fit from there
    renv <- environment(ref_ts_model_covariates(d$X, k)$mest)
    th <- rep(c(0.5, -0.4, 0.3), k - 1)
    Wt <- d$post * d$v
    for (it in c(1, 100)) {
      got <- cpp_logit_newton(d$X, Wt, th, it)
      ref <- ref_ts_multinom(d$X, Wt, th, renv$probs, renv$info, max_iter = it)
      expect_equal(got$theta, ref, tolerance = 1e-10)
      expect_equal(got$probs, renv$probs(ref), tolerance = 1e-10)
      expect_equal(got$info, renv$info(renv$probs(ref), rowSums(Wt)), tolerance = 1e-10)
    }
    expect_gt(max(abs(cpp_logit_newton(d$X, Wt, th, 1)$theta - th)), 1e-3)
  }
})

test_that("the core's ML three-step equals the plain-R EM and Newton steps for every step-3 model", {
  for (k in 2:3) for (assignment in c("modal", "proportional")) for (weighted in c(FALSE, TRUE)) {
    d <- core_ts_data(k = k, seed = k, assignment = assignment, weighted = weighted)
    models <- list(
      continuous = list(ts_model_continuous(d$z, k), ref_ts_model_continuous(d$z, k)),
      categorical = list(ts_model_categorical(d$zc, k), ref_ts_model_categorical(d$zc, k)),
      covariates = list(ts_model_covariates(d$X, k), ref_ts_model_covariates(d$X, k)))
    for (m in names(models)) {
      info <- paste(m, k, assignment, weighted)
      # converged, and stopped after 2 EM iterations (the Newton steps from
      # further away)
      for (max_iter in c(2000, 2)) {
        got <- ts_ml(models[[m]][[1]], d$W, d$v, d$D, max_iter = max_iter)
        ref <- ref_ts_ml(models[[m]][[2]], d$W, d$v, d$D, max_iter = max_iter)
        expect_equal(got$theta, ref$theta, tolerance = 1e-8, info = info)
        expect_equal(got$loglik, ref$loglik, tolerance = 1e-12, info = info)
        expect_equal(got$info, ref$info, tolerance = 1e-8, info = info)
        expect_equal(got$U, ref$U, tolerance = 1e-8, info = info)
        expect_identical(got$iterations, as.integer(ref$iterations), info = info)
        expect_identical(got$converged, ref$converged, info = info)
        if (max_iter == 2000) full <- got
      }
      # the maximum: the score is 0, the EM has moved from the start
      expect_true(full$converged, info = info)
      expect_lt(max(abs(colSums(full$U))), 1e-6 * max(1, abs(full$loglik)))
      expect_gt(max(abs(full$theta - models[[m]][[1]]$start(d$W, d$v))), 1e-4)
    }
  }
})

test_that("a non-finite step-3 log-likelihood is a classed error, not a silent NaN", {
  d <- core_ts_data(k = 2, seed = 3)
  model <- ts_model_continuous(d$z, 2)
  # variances so small that an assigned class has density 0 for an
  # observation: log 0 at the start
  model$start <- function(H, v) c(0, -50, 50, 1e-6, 1e-6)
  expect_error(ts_ml(model, d$W, d$v, diag(2)), class = "aspectr_error_numeric")
  model$start <- function(H, v) c(0, NaN, 1, 1, 1)
  expect_error(ts_ml(model, d$W, d$v, d$D), "not finite", class = "aspectr_error_numeric")
})

core_lcr_data <- function(n = 120, seed = 1) {
  set.seed(seed)
  x <- rnorm(n)
  cls <- 1 + (runif(n) < plogis(-0.3 + 1.2 * x))
  p <- c(0.2, 0.8)
  d <- data.frame(a = ifelse(runif(n) < p[cls], "y", "n"), b = ifelse(runif(n) < p[cls], "y", "n"),
                  c = sample(c("l", "m", "h"), n, TRUE), e = ifelse(runif(n) < rev(p)[cls], "y", "n"))
  d$b[sample(n, 10)] <- NA
  d$c[sample(n, 8)] <- NA
  list(items = d, X = cbind(`(Intercept)` = 1, x = x, g = rep(0:1, length.out = n)), w = runif(n, 0.5, 2))
}

test_that("the core's latent class regression EM equals the plain-R EM: every start, the best run", {
  td <- core_lcr_data()
  prep <- lca_prepare(td$items, na.rm = FALSE)
  X <- td$X[prep$rows, ]
  w <- td$w[prep$rows]
  for (k in 2:3) for (wt in list(NULL, w)) for (max_iter in c(1000, 7)) {
    info <- paste(k, is.null(wt), max_iter)
    got <- lcr_fit(prep, X, k, nrun = 3, max_iter = max_iter, tol = 1e-10, seed = 5, w = wt)
    ref <- ref_lcr_fit(prep, X, k, nrun = 3, max_iter = max_iter, tol = 1e-10, seed = 5, w = wt)
    expect_equal(got$run_values, ref$run_values, tolerance = 1e-10, info = info)
    expect_identical(got$run, ref$run, info = info)
    expect_equal(got$probs, ref$probs, tolerance = 1e-8, info = info)
    expect_equal(got$beta, ref$beta, tolerance = 1e-8, info = info)
    expect_equal(got$prior, ref$prior, tolerance = 1e-8, info = info)
    expect_equal(got$posterior, ref$posterior, tolerance = 1e-8, info = info)
    expect_equal(got$llik, ref$llik, tolerance = 1e-12, info = info)
    expect_equal(got$objective, ref$objective, tolerance = 1e-10, info = info)
    expect_identical(got$iterations, ref$iterations, info = info)
    expect_identical(got$converged, ref$converged, info = info)
    expect_identical(got$converged, max_iter > 7, info = info)
  }
})

test_that("the regression's starts run over threads with the same result", {
  td <- core_lcr_data(150, seed = 4)
  prep <- lca_prepare(td$items, na.rm = FALSE)
  X <- td$X[prep$rows, ]
  one <- lcr_fit(prep, X, 3, nrun = 5, max_iter = 300, tol = 1e-9, seed = 2, threads = 1)
  two <- lcr_fit(prep, X, 3, nrun = 5, max_iter = 300, tol = 1e-9, seed = 2, threads = 2)
  expect_identical(two, one)
})

test_that("the regression EM's objective never rises, in every start", {
  for (seed in 1:3) {
    td <- core_lcr_data(200, seed = seed)
    prep <- lca_prepare(td$items, na.rm = FALSE)
    nl <- lengths(prep$levels)
    for (k in 2:3) for (wt in list(NULL, td$w[prep$rows])) {
      starts <- with_seed(seed, lapply(1:4, function(s) {
        lapply(nl, function(l) { m <- matrix(runif(l * k), l); sweep(m, 2, colSums(m), "/") })
      }))
      out <- cpp_lcr_fit(prep$codes, nl, td$X[prep$rows, ], wt, starts, k, 500, 1e-12)
      for (o in out$objective) {
        expect_gt(length(o), 5)
        expect_true(all(diff(o) <= 1e-12 * abs(o[-1])))
      }
      expect_equal(-out$loglik, vapply(out$objective, function(o) o[length(o)], 1))
    }
  }
})

test_that("a start whose likelihood is not finite is passed over with a classed warning", {
  td <- core_lcr_data()
  prep <- lca_prepare(td$items, na.rm = FALSE)
  nl <- lengths(prep$levels)
  good <- lapply(nl, function(l) cbind(seq_len(l), rev(seq_len(l))) / (l * (l + 1) / 2))
  bad <- good
  bad[[1]][] <- 0  # no response of variable 1 is possible in any class
  out <- cpp_lcr_fit(prep$codes, nl, td$X[prep$rows, ], NULL, list(bad, good), 2, 100, 1e-8)
  expect_false(is.finite(out$loglik[1]))
  expect_identical(out$iterations[1], 1L)
  expect_false(out$converged[1])
  expect_true(is.finite(out$loglik[2]))
  expect_warning(best <- best_run(-out$loglik, "lca() fit"), class = "aspectr_warning_numeric")
  expect_identical(best, 2L)
})

test_that("a latent class regression reports progress as messages in non-interactive sessions", {
  td <- core_lcr_data()
  dat <- cbind(td$items, as.data.frame(td$X[, -1]))
  old <- options(aspectr.progress_interval = 0)
  on.exit(options(old))
  msgs <- character()
  fit <- withCallingHandlers(lca(cbind(a, b, c, e) ~ x + g, dat, 2, nrun = 2, seed = 1, verbose = TRUE),
                             aspectr_message_progress = function(m) {
                               msgs <<- c(msgs, conditionMessage(m))
                               invokeRestart("muffleMessage")
                             })
  # between rounds of 25 iterations, as lca(): the most advanced start's
  # iteration and the best objective so far
  its <- as.integer(sub(".*iteration ([0-9]+), objective.*", "\\1", grep("iteration [0-9]+, objective", msgs, value = TRUE)))
  expect_gte(length(its), ceiling(max(fit$run_iterations) / 25))
  expect_identical(its, sort(its))
  expect_identical(max(its), max(fit$run_iterations))
  expect_match(msgs[length(msgs)], paste0(fit$iterations, " iterations, objective"))
  quiet <- lca(cbind(a, b, c, e) ~ x + g, dat, 2, nrun = 2, seed = 1)
  expect_identical(quiet$coeff, fit$coeff)
})
