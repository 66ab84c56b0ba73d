# The formula interface, latent class regression, standard errors and
# class reordering, against poLCA (Linzer and Lewis) on its own data.

elect_formula <- cbind(MORALG, CARESG, KNOWG, LEADG, DISHONG, INTELG,
                       MORALB, CARESB, KNOWB, LEADB, DISHONB, INTELB) ~ PARTY

test_that("the formula ~ 1 is the plain latent class model", {
  d <- data.frame(lapply(iris[1:4], cut, 3))
  a <- lca(d, 3, nrun = 4, seed = 2)
  b <- lca(cbind(Sepal.Length, Sepal.Width, Petal.Length, Petal.Width) ~ 1, d, 3, nrun = 4, seed = 2)
  expect_equal(b$llik, a$llik)
  expect_equal(b$probs, a$probs)
  expect_true(is.call(b$call))
})

test_that("latent class regression matches poLCA: log-likelihood, coefficients, standard errors", {
  skip_if_not_installed("poLCA")
  election <- get(utils::data("election", package = "poLCA", envir = environment()))
  a <- lca(elect_formula, election, 3, nrun = 5, seed = 1, na.rm = TRUE, tol = 1e-10)
  # poLCA's maximum of this model (nclass = 3, nrep = 5), to 1e-3
  expect_lt(abs(a$llik - (-16222.3233)), 1e-3)
  expect_equal(a$N, 1300)
  expect_equal(a$npar, 112)
  set.seed(1)
  p <- poLCA::poLCA(elect_formula, election, nclass = 3, nrep = 5, verbose = FALSE)
  expect_equal(a$llik, p$llik, tolerance = 1e-6)
  ord <- vapply(1:3, function(r) which.min(colSums((t(a$probs$MORALG) - p$probs$MORALG[r, ])^2)), 1L)
  b <- lca_reorder(a, ord)
  expect_equal(b$llik, a$llik)
  expect_equal(unname(b$coeff), unname(p$coeff), tolerance = 1e-3)
  expect_equal(unname(b$se$coeff), unname(p$coeff.se), tolerance = 0.05)
  expect_equal(unname(b$se$P), unname(p$P.se), tolerance = 0.05)
  expect_equal(unname(b$se$probs$MORALG), unname(p$probs.se$MORALG), tolerance = 0.05)
  expect_equal(unname(b$posterior), unname(p$posterior), tolerance = 1e-2)
  # goodness of fit with the mean prior, as poLCA
  expect_equal(a$Gsq, p$Gsq, tolerance = 1e-4)
  # the fit's own posteriors are predict() of its training rows
  rows <- as.integer(rownames(a$posterior))
  expect_equal(predict(a, election[rows, ]), a$posterior, tolerance = 1e-10, ignore_attr = TRUE)
  # a missing covariate gives NA
  nd <- election[rows[1:2], ]
  nd$PARTY[1] <- NA
  expect_true(all(is.na(predict(a, nd)[1, ])))
  expect_output(print(a), "class membership regression")
  expect_gt(a$entropy, 0)
  expect_lt(a$entropy, 1)
})

test_that("standard errors of the plain model match poLCA's", {
  skip_if_not_installed("poLCA")
  election <- get(utils::data("election", package = "poLCA", envir = environment()))
  f0 <- update(elect_formula, . ~ 1)
  a <- lca(f0, election, 3, nrun = 10, seed = 1, na.rm = TRUE, tol = 1e-10)
  set.seed(2)
  p <- poLCA::poLCA(f0, election, nclass = 3, nrep = 5, verbose = FALSE)
  expect_equal(a$llik, p$llik, tolerance = 1e-6)
  expect_equal(a$Gsq, p$Gsq, tolerance = 1e-4)
  ord <- vapply(1:3, function(r) which.min(colSums((t(a$probs$MORALG) - p$probs$MORALG[r, ])^2)), 1L)
  b <- lca_reorder(a, ord)
  expect_equal(unname(b$se$P), unname(p$P.se), tolerance = 0.05)
  for (v in names(p$probs.se)) {
    expect_equal(unname(b$se$probs[[v]]), unname(p$probs.se[[v]]), tolerance = 0.05)
  }
})

test_that("latent class regression recovers planted coefficients; reorder is exact", {
  set.seed(21)
  n <- 1500
  x <- rnorm(n)
  eta <- cbind(0, -0.5 + 1.5 * x)
  cls <- 1 + (runif(n) < exp(eta[, 2]) / (1 + exp(eta[, 2])))
  p <- list(c(0.9, 0.2), c(0.8, 0.1), c(0.15, 0.85), c(0.2, 0.9))
  d <- data.frame(lapply(p, function(pp) factor(rbinom(n, 1, pp[cls]))), x = x)
  names(d)[1:4] <- c("A", "B", "C", "D")
  d$A[sample(n, 100)] <- NA
  d$x[1:7] <- NA
  fit <- lca(cbind(A, B, C, D) ~ x, d, 2, nrun = 4, seed = 1)
  expect_equal(fit$N, n - 7)
  expect_equal(fit$dropped_covariate_na, 7)
  # class 1 of the fit may be either planted class
  b <- fit$coeff[, 1]
  if (b[2] < 0) b <- -b
  expect_equal(unname(b[2]), 1.5, tolerance = 0.25)
  expect_equal(fit$npar, 1 * 2 + 2 * 4)
  # the objective never rises
  expect_true(all(diff(fit$objective) <= 1e-8 * abs(fit$objective[-1])))
  # reordering: same likelihood, the same priors permuted, inverse undoes it
  r <- lca_reorder(fit, 2:1)
  expect_equal(lcr_prior(r$x, r$coeff), fit$prior[, 2:1], ignore_attr = TRUE, tolerance = 1e-12)
  expect_equal(r$se$coeff[, 1], fit$se$coeff[, 1], tolerance = 1e-8)
  back <- lca_reorder(r, 2:1)
  expect_equal(back$coeff, fit$coeff, tolerance = 1e-12)
  expect_equal(back$probs, fit$probs)
  expect_equal(r$predclass, 3L - fit$predclass)
  # without standard errors: the same fit, and print shows the coefficients alone
  nose <- lca(cbind(A, B, C, D) ~ x, d, 2, nrun = 4, seed = 1, se = FALSE)
  expect_null(nose[["se"]])
  expect_identical(nose$coeff, fit$coeff)
  out <- capture.output(print(nose))
  expect_true(any(grepl("Coefficient", out)))
  expect_false(any(grepl("Std. error", out)))
  expect_true(any(grepl("Std. error", capture.output(print(fit)))))
  expect_null(lca_reorder(nose, 2:1)[["se"]])
})

test_that("expected pattern frequencies sum to N over every complete pattern", {
  d <- data.frame(lapply(iris[1:3], cut, 2))
  fit <- lca(d, 2, seed = 1)
  pats <- expand.grid(lapply(d, levels))
  f <- predict(fit, pats, type = "frequency")
  expect_equal(sum(f), fit$N, tolerance = 1e-10)
  expect_error(predict(fit, type = "frequency"), class = "aspectr_error_input_argument")
})

test_that("predict() of a regression fit for no observations gives none, without R's warnings", {
  set.seed(8)
  d <- data.frame(lapply(iris[1:3], cut, 2), x = iris$Petal.Width)
  fit <- suppressMessages(lca(cbind(Sepal.Length, Sepal.Width, Petal.Length) ~ x, d, 2, seed = 1))
  # (R warned of a zero-extent matrix and of a result whose rows are not a
  # multiple of a vector's length)
  expect_no_warning(post <- predict(fit, newdata = d[0, ]))
  expect_identical(dim(post), c(0L, 2L))
  expect_no_warning(cls <- predict(fit, newdata = d[0, ], type = "class"))
  expect_length(cls, 0)
  expect_equal(predict(fit, newdata = d[1:3, ]), fit$posterior[1:3, ], tolerance = 1e-8, ignore_attr = TRUE)
})

test_that("formula errors name the argument", {
  d <- data.frame(a = factor(c(1, 2, 1, 2)), b = factor(c(1, 1, 2, 2)), x = 1:4, y = 2 * (1:4))
  expect_error(lca(~ x, d, 2), class = "aspectr_error_input_argument")
  expect_error(lca(cbind(a, zz) ~ 1, d, 2), "zz", class = "aspectr_error_input_argument")
  expect_error(lca(cbind(a, b) ~ q, d, 2), "q", class = "aspectr_error_input_argument")
  expect_error(lca(cbind(a, b) ~ x + y, d, 2), "collinear", class = "aspectr_error_input_argument")
  expect_error(lca(cbind(a, b) ~ x, as.matrix(d), 2), class = "aspectr_error_input_type")
  expect_error(lca(cbind(a, b) ~ x, d, 1), class = "aspectr_error_input_argument")
  expect_error(lca(), class = "aspectr_error_input_argument")
  expect_error(lca_reorder(quiet_unidentified(lca(d[1:2], 2, seed = 1)), c(1, 1)), class = "aspectr_error_input_argument")
})

test_that("pattern-level standard errors equal the observation-level sum", {
  set.seed(5)
  d <- data.frame(lapply(1:5, function(j) factor(sample(1:3, 400, TRUE))))
  d[sample(400, 30), 2] <- NA
  fit <- lca(d, 2, seed = 1, nrun = 3)
  codes <- vapply(d, as.integer, integer(400))
  obs <- lca_standard_errors(codes, matrix(1, 400, 1), fit, post = fit$posterior)
  expect_equal(obs$P, fit$se$P, tolerance = 1e-10)
  expect_equal(obs$probs, fit$se$probs, tolerance = 1e-10)
})

test_that("separation: coefficients the data do not determine get NA standard errors and a warning", {
  set.seed(5)
  n <- 400
  cls <- sample(1:2, n, TRUE)
  d <- as.data.frame(lapply(1:4, function(j) ifelse(runif(n) < c(0.2, 0.8)[cls], "yes", "no")))
  names(d) <- paste0("y", 1:4)
  # s = 1 exactly when y1 and y2 are "yes": it predicts the classes perfectly
  d$s <- as.integer(d$y1 == "yes" & d$y2 == "yes")
  expect_warning(r <- lca(cbind(y1, y2, y3, y4) ~ s, d, k = 2, seed = 1), class = "aspectr_warning_separation")
  expect_true(all(is.na(r$se$coeff)))
  expect_true(all(is.na(vcov(r)[1:2, 1:2])))
  # (the generalized inverse gave them about 1e-12)
  expect_true(all(is.finite(unlist(r$se$probs))))
  # a covariate that does not separate: no warning, finite standard errors
  d$x <- rnorm(n) + cls
  expect_no_warning(r2 <- lca(cbind(y1, y2, y3, y4) ~ x, d, k = 2, seed = 1))
  expect_true(all(is.finite(r2$se$coeff) & r2$se$coeff > 0))
  # a rescaled covariate beside the separating one: no overflow warning for the NA
  w <- character(0)
  withCallingHandlers(r3 <- lca(cbind(y1, y2, y3, y4) ~ s + x, transform(d, x = 1000 * x), k = 2, seed = 1),
                      warning = function(c) { w <<- c(w, class(c)[1]); invokeRestart("muffleWarning") })
  expect_identical(unique(w), "aspectr_warning_separation")
  # reordering the classes keeps NA to the parameters that involve them
  ro <- lca_reorder(r, 2:1)
  expect_true(all(is.na(ro$se$coeff)))
  expect_identical(sum(is.na(ro$se$vcov_all)), sum(is.na(r$se$vcov_all)))
  expect_true(all(is.finite(unlist(ro$se$probs))))
  # the ML three-step estimates with a covariate that separates the classes
  fit <- lca(d[, 1:4], 2, seed = 1)
  s2 <- data.frame(s = as.integer(fit$predclass == 2))
  expect_warning(lca_covariates(fit, ~ s, s2, method = "ml"), class = "aspectr_warning_separation")
  expect_no_warning(lca_covariates(fit, ~ x, data.frame(x = rnorm(n)), method = "ml"))
})

test_that("anova() refuses regressions that are not nested", {
  set.seed(3)
  n <- 300
  x <- rnorm(n)
  cls <- ifelse(runif(n) < plogis(0.5 + 1.2 * x), 1, 2)
  d <- as.data.frame(lapply(1:4, function(j) ifelse(runif(n) < c(0.2, 0.8)[cls], "yes", "no")))
  names(d) <- paste0("y", 1:4)
  d$x <- x
  d$f <- sample(c("u", "v"), n, TRUE)
  a <- lca(cbind(y1, y2, y3, y4) ~ f, d, k = 2, seed = 1)
  b <- lca(cbind(y1, y2, y3, y4) ~ x, d, k = 2, seed = 1)
  expect_error(anova(a, b), class = "aspectr_error_input_argument", regexp = "nested")
  # nor across numbers of classes
  p3 <- lca(d[, 1:4], k = 3, seed = 1)
  expect_error(anova(b, p3), class = "aspectr_error_input_argument", regexp = "nested")
  # nested: the plain model within the regression
  p <- lca(d[, 1:4], k = 2, seed = 1)
  tab <- anova(p, b)
  expect_equal(tab$LR[2], 2 * (b$llik - p$llik))
  expect_equal(tab$Df[2], 1L)
})

test_that("latent class regression's starts give the same fits on one thread and on two", {
  # the starts run in batches over the threads (each start on one thread;
  # batches grow while they are quick): neither the thread count nor the
  # batching changes a start's iterations
  set.seed(3)
  n <- 300
  z <- rnorm(n)
  cls <- ifelse(runif(n) < plogis(1.5 * z), 1, 2)
  d <- data.frame(lapply(1:4, function(j) factor(ifelse(runif(n) < c(0.85, 0.2)[cls], "a", "b"))), z = z)
  names(d)[1:4] <- paste0("Y", 1:4)
  f <- cbind(Y1, Y2, Y3, Y4) ~ z
  a <- lca(f, d, 2, nrun = 12, seed = 4, threads = 1, se = FALSE)
  b <- lca(f, d, 2, nrun = 12, seed = 4, threads = 2, se = FALSE)
  expect_identical(a$run_values, b$run_values)
  expect_identical(a$coeff, b$coeff)
  expect_identical(a$iterations, b$iterations)
  expect_length(a$run_values, 12)
})
