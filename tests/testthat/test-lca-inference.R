# coef(), vcov(), confint(), anova(), tidy() and glance() of latent class
# fits, against poLCA (Linzer and Lewis) and hand computations.

lca_carcinoma <- function() expand_patterns(polca_carcinoma_patterns)

carcinoma_fit <- function(k = 3) lca(lca_carcinoma(), k, nrun = 20, seed = 1, tol = 1e-10, max_iter = 5000)

test_that("glance() has poLCA's residual df and both entropies", {
  fit <- carcinoma_fit()
  g <- glance(fit)
  # N = 118 is below the 2^7 = 128 cells: resid.df = N - npar = 95
  expect_equal(g$df, 118 - 23)
  expect_equal(g$relative_entropy, fit$entropy)
  # relative entropy by hand from the posteriors
  post <- fit$posterior
  expect_equal(fit$entropy, 1 - sum(-post[post > 0] * log(post[post > 0])) / (118 * log(3)))
  # poLCA.entropy(): the entropy of the fitted cell distribution, by hand
  cells <- as.matrix(expand.grid(rep(list(1:2), 7)))
  pc <- vapply(seq_len(nrow(cells)), function(i) {
    sum(fit$P * Reduce(`*`, lapply(1:7, function(j) fit$probs[[j]][, cells[i, j]])))
  }, numeric(1))
  expect_equal(sum(pc), 1, tolerance = 1e-12)
  expect_equal(g$entropy, -sum(pc[pc > 0] * log(pc[pc > 0])), tolerance = 1e-10)
  # above the cell limit the entropy is not enumerated
  withr_old <- options(aspectr.max_cells = 100)
  on.exit(options(withr_old), add = TRUE)
  expect_true(is.na(glance(fit)$entropy))
  options(withr_old)
  # N above the cells: cells - 1 - npar
  big <- lca(expand_patterns(polca_values_patterns), 2, seed = 1)
  expect_equal(glance(big)$df, 16 - 1 - 9)
  skip_if_not_installed("poLCA")
  set.seed(1)
  p <- poLCA::poLCA(cbind(A, B, C, D, E, F, G) ~ 1, lca_carcinoma(), nclass = 3, nrep = 20,
                    verbose = FALSE, maxiter = 5000, tol = 1e-10)
  expect_equal(fit$llik, p$llik, tolerance = 1e-8)
  expect_equal(g$df, p$resid.df)
  expect_equal(g$entropy, poLCA::poLCA.entropy(p), tolerance = 1e-6)
  expect_equal(glance(big)$df, poLCA::poLCA(cbind(A, B, C, D) ~ 1, expand_patterns(polca_values_patterns),
                                            nclass = 2, verbose = FALSE)$resid.df)
})

test_that("glance()'s residual df matches poLCA's for the election regression (N below the cells)", {
  skip_if_not_installed("poLCA")
  election <- get(utils::data("election", package = "poLCA", envir = environment()))
  f <- cbind(MORALG, CARESG, KNOWG, LEADG, DISHONG, INTELG, MORALB, CARESB, KNOWB, LEADB, DISHONB, INTELB) ~ PARTY
  a <- suppressMessages(lca(f, election, 3, nrun = 1, seed = 1, na.rm = TRUE, max_iter = 30, se = FALSE))
  set.seed(1)
  p <- suppressWarnings(poLCA::poLCA(f, election, nclass = 3, maxiter = 30, verbose = FALSE, calc.se = FALSE))
  expect_equal(glance(a)$df, p$resid.df)
  expect_equal(glance(a)$df, 1188)
})

test_that("coef() and vcov() are the documented parametrization; the delta method gives fit$se", {
  fit <- carcinoma_fit()
  b <- coef(fit)
  V <- vcov(fit)
  expect_length(b, fit$npar)
  expect_equal(dim(V), c(fit$npar, fit$npar))
  expect_identical(rownames(V), names(b))
  expect_identical(colnames(V), names(b))
  expect_equal(V, t(V))
  expect_equal(unname(b[c("class_2:(Intercept)", "class_3:(Intercept)")]), unname(log(fit$P[2:3] / fit$P[1])))
  expect_equal(unname(b["B[2]:class_2"]), log(fit$probs$B[2, 2] / fit$probs$B[2, 1]))
  # class shares: softmax(0, b2, b3), delta method by hand
  P <- fit$P
  J <- rbind(-P[1] * P[2:3], diag(P[2:3]) - outer(P[2:3], P[2:3]))
  Vb <- V[1:2, 1:2]
  expect_equal(unname(sqrt(diag(J %*% Vb %*% t(J)))), unname(fit$se$P), tolerance = 1e-10)
  # a binary item: se(p_2) = p_2 (1 - p_2) se(logit p_2)
  for (r in 1:3) {
    nm <- paste0("E[2]:class_", r)
    p2 <- fit$probs$E[r, 2]
    expect_equal(unname(p2 * (1 - p2) * sqrt(max(V[nm, nm], 0))), unname(fit$se$probs$E[r, 2]), tolerance = 1e-8)
  }
  # the standard errors of the shares match poLCA's (classes matched by share)
  skip_if_not_installed("poLCA")
  set.seed(1)
  p <- poLCA::poLCA(cbind(A, B, C, D, E, F, G) ~ 1, lca_carcinoma(), nclass = 3, nrep = 20,
                    verbose = FALSE, maxiter = 5000, tol = 1e-10)
  ord <- vapply(1:3, function(r) which.min(abs(fit$P - p$P[r])), 1L)
  expect_equal(unname(fit$se$P[ord]), unname(p$P.se), tolerance = 1e-3)
  expect_equal(unname(fit$se$probs$E[ord, ]), unname(p$probs.se$E), tolerance = 1e-3)
})

test_that("confint() is Wald on the logit scale, inside [0, 1] for probabilities", {
  fit <- carcinoma_fit()
  ci <- confint(fit)
  se <- sqrt(pmax(diag(vcov(fit)), 0))
  expect_equal(unname(ci[, 1]), unname(coef(fit) - qnorm(0.975) * se))
  expect_equal(unname(ci[, 2]), unname(coef(fit) + qnorm(0.975) * se))
  expect_identical(colnames(ci), c("2.5 %", "97.5 %"))
  cp <- confint(fit, type = "probs", level = 0.9)
  est <- c(unlist(lapply(fit$probs, function(p) as.vector(t(p)))), fit$P)
  expect_equal(nrow(cp), length(est))
  expect_true(all(cp >= 0 & cp <= 1))
  expect_true(all(cp[, 1] <= est + 1e-15 & cp[, 2] >= est - 1e-15))
  # an interior probability: the interval by hand on the logit scale
  p <- fit$probs$D[2, 2]
  s <- fit$se$probs$D[2, 2]
  z <- qnorm(0.95)
  expect_equal(unname(cp["D[2]:class_2", ]), plogis(qlogis(p) + c(-1, 1) * z * s / (p * (1 - p))))
  expect_equal(unname(cp["P:class_1", ]),
               plogis(qlogis(fit$P[[1]]) + c(-1, 1) * z * fit$se$P[[1]] / (fit$P[[1]] * (1 - fit$P[[1]]))))
  expect_equal(confint(fit, "B[2]:class_1"), ci["B[2]:class_1", , drop = FALSE])
  expect_error(confint(fit, "nope"), class = "aspectr_error_input")
  expect_error(confint(fit, level = 1.5), class = "aspectr_error_input")
  expect_error(vcov(lca(lca_carcinoma(), 3, seed = 1, se = FALSE)), class = "aspectr_error_unsupported")
})

test_that("tidy() has standard errors, intervals and the membership coefficients", {
  fit <- carcinoma_fit()
  td <- tidy(fit, conf.int = TRUE)
  expect_named(td, c("variable", "level", "class", "probability", "std.error", "conf.low", "conf.high"))
  expect_equal(td$probability[td$variable == "C" & td$level == "2"], unname(fit$probs$C[, 2]))
  expect_equal(td$std.error[td$variable == "C" & td$level == "2"], unname(fit$se$probs$C[, 2]))
  expect_true(all(td$conf.low <= td$probability & td$probability <= td$conf.high))
  expect_named(tidy(fit), c("variable", "level", "class", "probability", "std.error"))
  cl <- tidy(fit, "classes", conf.int = TRUE)
  expect_equal(cl$share, unname(fit$P))
  expect_equal(cl$std.error, unname(fit$se$P))
  co <- tidy(fit, "coeff")
  expect_named(co, c("term", "class", "estimate", "std.error", "statistic", "p.value"))
  expect_equal(co$estimate, unname(log(fit$P[2:3] / fit$P[1])))
  expect_equal(co$statistic, co$estimate / co$std.error)
  expect_equal(co$p.value, 2 * pt(abs(co$statistic), 118 - 23, lower.tail = FALSE))
  expect_error(tidy(fit, "nonsense"), class = "aspectr_error_input")
  # a regression: the coefficients and their standard errors, as poLCA's
  set.seed(21)
  n <- 800
  x <- rnorm(n)
  z <- 1 + (runif(n) < plogis(-0.3 + 1.2 * x))
  d <- data.frame(x = x, A = ifelse(runif(n) < c(0.85, 0.15)[z], 1, 2), B = ifelse(runif(n) < c(0.8, 0.2)[z], 1, 2),
                  C = ifelse(runif(n) < c(0.9, 0.3)[z], 1, 2), D = ifelse(runif(n) < c(0.7, 0.1)[z], 1, 2))
  rf <- lca(cbind(A, B, C, D) ~ x, d, 2, nrun = 4, seed = 1)
  tc <- tidy(rf, "coefficients", conf.int = TRUE)
  expect_identical(tc$term, c("(Intercept)", "x"))
  expect_equal(tc$estimate, unname(rf$coeff[, 1]))
  expect_equal(tc$std.error, unname(rf$se$coeff[, 1]))
  expect_equal(unname(coef(rf)[1:2]), unname(rf$coeff[, 1]))
  expect_equal(unname(vcov(rf)[1:2, 1:2]), rf$se$vcov)
  expect_equal(tc$conf.high - tc$estimate, qnorm(0.975) * tc$std.error)
  skip_if_not_installed("poLCA")
  set.seed(1)
  p <- poLCA::poLCA(cbind(A, B, C, D) ~ x, d, nclass = 2, nrep = 4, verbose = FALSE)
  sgn <- if (sign(p$coeff[2]) == sign(rf$coeff[2, 1])) 1 else -1
  if (sgn < 0) rf <- lca_reorder(rf, 2:1)
  tc <- tidy(rf, "coefficients")
  expect_equal(tc$estimate, unname(as.vector(p$coeff)), tolerance = 1e-3)
  expect_equal(tc$std.error, unname(as.vector(p$coeff.se)), tolerance = 1e-2)
})

test_that("lca_reorder() carries vcov() along", {
  fit <- carcinoma_fit()
  r <- lca_reorder(fit, c(2, 3, 1))
  V <- vcov(fit)
  Vr <- vcov(r)
  # items: the blocks of the classes moved
  for (v in c("A", "D", "G")) {
    expect_equal(Vr[paste0(v, "[2]:class_1"), paste0(v, "[2]:class_1")], V[paste0(v, "[2]:class_2"), paste0(v, "[2]:class_2")])
  }
  expect_equal(unname(coef(r)), unname(coef(lca_reorder(fit, c(2, 3, 1)))))
  expect_equal(unname(coef(r)[1:2]), unname(log(r$P[2:3] / r$P[1])))
  # the new logits b'_2 = b_3 - b_2, b'_3 = -b_2: their variances by hand
  expect_equal(Vr[1, 1], V[2, 2] + V[1, 1] - 2 * V[1, 2])
  expect_equal(Vr[2, 2], V[1, 1])
  # reordering back is the identity
  expect_equal(vcov(lca_reorder(r, c(3, 1, 2))), V)
})

test_that("anova() gives the likelihood-ratio table of nested fits", {
  cc <- lca_carcinoma()
  f1 <- lca(cc, 1)
  f2 <- lca(cc, 2, seed = 1, nrun = 10)
  f3 <- carcinoma_fit()
  a <- anova(f3, f1, f2)
  expect_s3_class(a, "anova")
  expect_equal(a$Classes, 1:3)
  expect_equal(a$LR[2:3], 2 * c(f2$llik - f1$llik, f3$llik - f2$llik))
  expect_equal(a$Df[2:3], c(8L, 8L))
  expect_equal(a[["Pr(>Chi)"]][3], pchisq(2 * (f3$llik - f2$llik), 8, lower.tail = FALSE))
  expect_match(attr(a, "heading"), "not chi-squared")
  expect_error(anova(f1), class = "aspectr_error_input")
  expect_error(anova(f1, lca(cc[-1, ], 2, seed = 1)), class = "aspectr_error_input")
  expect_error(anova(f1, 3), class = "aspectr_error_input")
  # nested covariates with the same classes: no caveat
  set.seed(5)
  d <- cc
  d$x <- rnorm(nrow(d))
  r0 <- lca(cbind(A, B, C, D, E, F, G) ~ 1, d, 2, seed = 1, nrun = 10)
  r1 <- lca(cbind(A, B, C, D, E, F, G) ~ x, d, 2, seed = 1, nrun = 10)
  a2 <- anova(r0, r1)
  expect_equal(a2$Df[2], 1L)
  expect_equal(a2$LR[2], 2 * (r1$llik - r0$llik))
  expect_no_match(attr(a2, "heading"), "not chi-squared")
})
