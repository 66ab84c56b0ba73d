# Multiple-group latent class analysis (lca(..., group = )): hand checks
# (the free model is the sum of per-group fits, the invariant model the
# latent class regression on the group), likelihood-ratio tests, methods,
# errors, and glca (Kim, Jeon, Chung and Park) on its own data.

# Three binary-or-ternary items, two groups with different class shares and
# (for item3) different response probabilities in the second group.
sim_groups <- function(n = 400, seed = 1) {
  set.seed(seed)
  g <- rep(c("north", "south"), c(n, n * 3 / 4))
  cls <- ifelse(runif(length(g)) < ifelse(g == "north", 0.35, 0.65), 1, 2)
  p <- c(0.15, 0.8)
  d <- data.frame(item1 = ifelse(runif(length(g)) < p[cls], "yes", "no"),
                  item2 = ifelse(runif(length(g)) < p[cls], "yes", "no"),
                  item3 = ifelse(runif(length(g)) < ifelse(g == "north", p[cls], rev(p)[cls]), "yes", "no"),
                  item4 = sample(c("low", "mid", "high"), length(g), TRUE),
                  item5 = ifelse(runif(length(g)) < p[cls], "yes", "no"))
  d$item4[cls == 2 & runif(length(g)) < 0.5] <- "high"
  d$region <- g
  d
}

# the permutation of the classes of b that matches those of a (two lists
# of classes x levels matrices)
match_perm <- function(a, b) {
  k <- nrow(a[[1]])
  perms <- if (k == 2) rbind(1:2, 2:1) else as.matrix(expand.grid(rep(list(seq_len(k)), k)))
  perms <- perms[apply(perms, 1, function(o) length(unique(o)) == k), , drop = FALSE]
  cost <- apply(perms, 1, function(o) sum(vapply(names(a), function(v) sum((a[[v]] - b[[v]][o, , drop = FALSE])^2), 1)))
  perms[which.min(cost), ]
}

test_that("the free model is one latent class model per group (log-likelihood, estimates, standard errors)", {
  d <- sim_groups()
  items <- d[1:5]
  fit <- lca(items, 2, group = d$region, invariance = "none", seed = 1, tol = 1e-10)
  expect_s3_class(fit, "aspectr_lca_groups")
  sep <- lapply(c("north", "south"), function(g) lca(items[d$region == g, ], 2, seed = 1, tol = 1e-10))
  expect_equal(fit$llik, sep[[1]]$llik + sep[[2]]$llik, tolerance = 1e-8)
  # npar by hand: per group 1 share logit and 2 * (1 + 1 + 1 + 2 + 1) item parameters
  expect_equal(fit$npar, 2 * (1 + 2 * 6))
  expect_equal(fit$npar, sep[[1]]$npar + sep[[2]]$npar)
  for (i in 1:2) {
    g <- c("north", "south")[i]
    o <- match_perm(fit$probs[[g]], sep[[i]]$probs)
    expect_equal(unname(fit$P[g, ]), unname(sep[[i]]$P[o]), tolerance = 1e-6)
    for (v in names(items)) {
      expect_equal(unname(fit$probs[[g]][[v]]), unname(sep[[i]]$probs[[v]][o, ]), tolerance = 1e-5)
      expect_equal(unname(fit$se$probs[[g]][[v]]), unname(sep[[i]]$se$probs[[v]][o, ]), tolerance = 1e-4)
    }
    expect_equal(unname(fit$se$P[g, ]), unname(sep[[i]]$se$P[o]), tolerance = 1e-4)
  }
  # the classes of the second group are matched to those of the first
  expect_lt(sum((fit$probs$north$item1 - fit$probs$south$item1)^2),
            sum((fit$probs$north$item1 - fit$probs$south$item1[2:1, ])^2))
})

test_that("the invariant model is the latent class regression on the group", {
  d <- sim_groups()
  fit <- lca(d, 2, group = "region", seed = 1, tol = 1e-10)
  expect_identical(fit$variables, paste0("item", 1:5))
  expect_identical(fit$group_var, "region")
  # (the regression's EM creeps: a tight tolerance brings it to the maximum)
  reg <- lca(cbind(item1, item2, item3, item4, item5) ~ region, d, 2, seed = 1, tol = 1e-14, max_iter = 20000)
  expect_gte(fit$llik, reg$llik - 1e-8)
  expect_equal(fit$llik, reg$llik, tolerance = 1e-10)
  expect_equal(fit$npar, reg$npar)
  expect_equal(fit$npar, 2 * 1 + 2 * 6)
  o <- match_perm(fit$probs$north, reg$probs)
  for (v in fit$variables) {
    expect_equal(fit$probs$north[[v]], fit$probs$south[[v]])
    expect_equal(unname(fit$probs$north[[v]]), unname(reg$probs[[v]][o, ]), tolerance = 1e-5)
    # the item standard errors do not depend on the coding of the groups
    expect_equal(unname(fit$se$probs$north[[v]]), unname(reg$se$probs[[v]][o, ]), tolerance = 1e-4)
  }
  # class shares of each group: the regression's priors of its rows
  pri <- reg$prior[, o]
  expect_equal(unname(fit$P["north", ]), unname(pri[d$region == "north", ][1, ]), tolerance = 1e-5)
  expect_equal(unname(fit$P["south", ]), unname(pri[d$region == "south", ][1, ]), tolerance = 1e-5)
  # the same groups given as a vector
  fit2 <- lca(d[1:5], 2, group = d$region, seed = 1, tol = 1e-10)
  expect_equal(fit2$llik, fit$llik)
  expect_null(fit2$group_var)
  # the formula interface with a group column
  fit3 <- lca(cbind(item1, item2, item3, item4, item5) ~ 1, d, 2, group = "region", seed = 1, tol = 1e-10)
  expect_equal(fit3$llik, fit$llik)
})

test_that("the likelihood-ratio tests of invariance count parameters", {
  d <- sim_groups()
  full <- lca(d, 2, group = "region", seed = 1, tol = 1e-10)
  none <- lca(d, 2, group = "region", invariance = "none", seed = 1, tol = 1e-10)
  expect_equal(none$npar, full$npar + 2 * 6)
  expect_gte(none$llik, full$llik - 1e-6)
  # item3 differs between the groups in the simulation
  expect_gt(2 * (none$llik - full$llik), 20)
  expect_identical(full$probs$north$item1, full$probs$south$item1)
  expect_false(isTRUE(all.equal(none$probs$north$item3, none$probs$south$item3)))
  a <- anova(none, full)
  expect_s3_class(a, "anova")
  expect_equal(a$Npar, c(full$npar, none$npar))
  expect_equal(a$Df[2], 12L)
  expect_equal(a$LR[2], 2 * (none$llik - full$llik))
  expect_equal(a$`Pr(>Chi)`[2], pchisq(2 * (none$llik - full$llik), 12, lower.tail = FALSE))
  # the model without groups: class shares equal across the groups, (G - 1)(k - 1) = 1 df
  one <- lca(d[1:5], 2, seed = 1, tol = 1e-10)
  a0 <- anova(one, full, none)
  expect_equal(a0$Npar, c(one$npar, full$npar, none$npar))
  expect_equal(a0$Df[2], 1L)
  expect_equal(a0$LR[2], 2 * (full$llik - one$llik))
  expect_gt(a0$LR[2], 20)  # the simulated shares differ (0.35 vs 0.65)
  expect_equal(anova(full, one)$LR, a0$LR[1:2])
  expect_error(anova(full, one, one), class = "aspectr_error_input_argument")
  expect_error(anova(full, lca(d[-1, 1:5], 2, seed = 1)), class = "aspectr_error_input_argument")
  inv <- lca_invariance(d, 2, "region", seed = 1, tol = 1e-10)
  expect_equal(inv$logLik, a$logLik, tolerance = 1e-8)
  expect_named(attr(inv, "fits"), c("full", "none"))
  expect_output(print(a), "multiple-group")
})

test_that("whole-number weights are replicated rows", {
  d <- sim_groups(200)
  set.seed(5)
  w <- sample(1:3, nrow(d), TRUE)
  rep_d <- d[rep(seq_len(nrow(d)), w), ]
  for (inv in c("full", "none")) {
    a <- lca(d, 2, group = "region", invariance = inv, weights = w, seed = 1, tol = 1e-10)
    b <- lca(rep_d, 2, group = "region", invariance = inv, seed = 1, tol = 1e-10)
    expect_equal(a$llik, b$llik, tolerance = 1e-7)
    expect_equal(a$P, b$P, tolerance = 1e-5)
    expect_equal(a$probs, b$probs, tolerance = 1e-5)
    expect_equal(a$BIC, b$BIC, tolerance = 1e-7)
    expect_equal(a$sum_weights, sum(w))
    expect_true(all(is.finite(unlist(a$se$probs))))
  }
  a <- lca(d, 2, group = "region", weights = w, seed = 1)
  expect_error(anova(a, a), class = "aspectr_error_unsupported")
})

test_that("the sandwich covariance of grouped fits: unit weights give N / (N - 1) times the model-based one", {
  d <- sim_groups(200)
  n <- nrow(d)
  for (inv in c("full", "none")) {
    a <- lca(d, 2, group = "region", invariance = inv, seed = 1, tol = 1e-10)
    b <- lca(d, 2, group = "region", invariance = inv, weights = rep(1, n), seed = 1, tol = 1e-10)
    expect_equal(b$llik, a$llik, tolerance = 1e-10)
    expect_equal(vcov(b), n / (n - 1) * vcov(a), tolerance = 1e-6)
  }
  # PSUs of 10 rows within each region: clustered standard errors differ
  psu <- paste(d$region, ave(seq_len(n), d$region, FUN = function(i) (seq_along(i) - 1) %/% 10))
  c1 <- lca(d, 2, group = "region", psu = psu, seed = 1, tol = 1e-10)
  b <- lca(d, 2, group = "region", weights = rep(1, n), seed = 1, tol = 1e-10)
  expect_equal(c1$llik, b$llik, tolerance = 1e-10)
  expect_true(c1$design$clustered)
  expect_equal(c1$design$n_psu, length(unique(psu)))
  expect_false(isTRUE(all.equal(c1$se$P, b$se$P)))
  expect_output(print(c1), "sandwich")
})

test_that("methods: coef, vcov, tidy, glance, predict, print, summary", {
  d <- sim_groups()
  fit <- lca(d, 2, group = "region", invariance = "none", seed = 1)
  cf <- coef(fit)
  expect_length(cf, fit$npar)
  V <- vcov(fit)
  expect_identical(rownames(V), names(cf))
  expect_true(all(diag(V) >= 0))
  expect_true("item4[low]:class_2|south" %in% names(cf))
  expect_true("item1[yes]:class_2|north" %in% names(cf))
  expect_false("item1[yes]:class_2" %in% names(cf))
  expect_true("item1[yes]:class_2" %in% names(coef(lca(d, 2, group = "region", seed = 1, se = FALSE))))
  expect_equal(cf[["class_2|north"]], log(fit$P["north", 2] / fit$P["north", 1]))
  tp <- tidy(fit)
  expect_named(tp, c("group", "variable", "level", "class", "probability", "std.error"))
  expect_equal(nrow(tp), 2 * 2 * (2 + 2 + 2 + 3 + 2))
  sums <- tapply(tp$probability, paste(tp$group, tp$variable, tp$class), sum)
  expect_equal(as.vector(sums), rep(1, length(sums)))
  tc <- tidy(fit, "classes", conf.int = TRUE)
  expect_equal(tc$share, as.vector(t(fit$P)))
  expect_true(all(tc$conf.low <= tc$share & tc$share <= tc$conf.high))
  gl <- glance(fit)
  expect_equal(gl$logLik, fit$llik)
  expect_equal(gl$npar, fit$npar)
  # residual df: per group min(n_g, cells) - 1, less npar (48 cells, fewer than n_g)
  expect_equal(fit$npar, 2 * 1 + 2 * 2 * 6)
  expect_equal(gl$df, 2 * (48 - 1) - fit$npar)
  expect_equal(fit$Ng, c(north = 400L, south = 300L))
  expect_equal(AIC(fit), fit$AIC)
  expect_equal(BIC(fit), fit$BIC)
  # predict() of the training rows (the group from the column) is the posterior
  expect_equal(predict(fit, d), fit$posterior, ignore_attr = TRUE, tolerance = 1e-10)
  swapped <- predict(fit, d[1:5, 1:5], group = rep("south", 5))
  expect_false(isTRUE(all.equal(swapped, fit$posterior[1:5, ], check.attributes = FALSE)))
  expect_equal(predict(fit, type = "class"), fit$predclass)
  au <- augment(fit)
  expect_equal(au$.group, as.character(fit$group))
  expect_equal(au$.prob_2, unname(fit$posterior[, 2]))
  au2 <- augment(fit, d[1:4, ])
  expect_equal(au2$.group, d$region[1:4])
  expect_equal(au2$.class, fit$predclass[1:4])
  expect_named(au2, c(names(d), ".group", ".class", ".prob_1", ".prob_2"))
  expect_output(print(fit), "item-response probabilities free per group")
  expect_output(print(fit), "$item4 [south]", fixed = TRUE)
  expect_output(print(summary(fit)), "Multiple-group latent class model")
  expect_error(predict(fit, d[1:5], group = rep("east", nrow(d))), class = "aspectr_error_input")
  expect_error(predict(fit, d[1:5]), class = "aspectr_error_input_argument")
  # an item twice in newdata: refused as by lca()'s predict() (it took the
  # first silently); an unknown level named
  dd <- cbind(d[1:3, ], d[1:3, 2, drop = FALSE])
  expect_error(predict(fit, dd), "more than one column named", class = "aspectr_error_input_newdata")
  bad <- d[1:3, ]; bad[[2]] <- "nowhere"
  expect_error(predict(fit, bad), "unknown to the fit", class = "aspectr_error_input_newdata")
  expect_error(tidy(fit, "coefficients"), class = "aspectr_error_input")
  skip_if_not_installed("ggplot2")
  p <- ggplot2::autoplot(fit)
  expect_s3_class(p, "ggplot")
  # without invariance every item per group; under full invariance once
  expect_equal(nlevels(p$data$panel), 5 * 2)
  expect_true("item3: south" %in% levels(p$data$panel))
  pf <- ggplot2::autoplot(lca(d, 2, group = "region", seed = 1, se = FALSE))
  expect_equal(levels(pf$data$panel), paste0("item", 1:5, " (all groups)"))
  expect_equal(nlevels(ggplot2::autoplot(fit, group = "north")$data$panel), 5)
  expect_match(p$labels$subtitle, "north")
  grDevices::pdf(NULL)
  on.exit(grDevices::dev.off(), add = TRUE)
  expect_invisible(plot(fit, group = "south"))
  expect_error(plot(fit, group = "east"), class = "aspectr_error_input_argument")
  nose <- lca(d, 2, group = "region", seed = 1, se = FALSE)
  expect_error(vcov(nose), class = "aspectr_error_unsupported")
  expect_true(all(is.na(tidy(nose)$std.error)))
})

test_that("bad groups are classed input errors", {
  d <- sim_groups(100)
  expect_error(lca(d, 2, group = "nope"), class = "aspectr_error_input_argument")
  expect_error(lca(d[1:5], 2, group = rep("a", nrow(d))), class = "aspectr_error_input_value")
  g <- d$region
  g[3] <- NA
  expect_error(lca(d[1:5], 2, group = g), class = "aspectr_error_input_value")
  expect_error(lca(d[1:5], 2, group = g[-1]), class = "aspectr_error_input_argument")
  g <- d$region
  g[1] <- "tiny"
  expect_error(lca(d[1:5], 2, group = g), "tiny", class = "aspectr_error_input_value")
  # invariance is "full" or "none"
  expect_error(lca(d, 2, group = "region", invariance = "partial"), "invariance", class = "aspectr_error_input")
  expect_error(lca(d, 2, group = "region", invariance = "partial"), class = "aspectr_error_input_argument")
  expect_error(lca(d, 2, group = "region", invariance = "some"), class = "aspectr_error_input")
  expect_error(lca(d, 2, group = "region", free_items = "item1"), "free_items",
               class = "aspectr_error_input_argument")
  expect_error(lca(d[1:5], 2, invariance = "none"), "group", class = "aspectr_error_input_argument")
  expect_error(lca(d, 1, group = "region"), class = "aspectr_error_input_argument")
  expect_error(lca(cbind(item1, item2, item3) ~ item4, d, 2, group = "region"), class = "aspectr_error_input_argument")
  expect_error(lca(cbind(item1, item2, item3) ~ 1, d, 2, group = "item1"), class = "aspectr_error_input_argument")
  expect_error(lca(d, 2, group = "region", callback = function(...) TRUE), "callback",
               class = "aspectr_error_input_argument")
  expect_error(lca(shards(list(d[1:50, 1:5], d[51:100, 1:5])), 2, group = d$region),
               class = "aspectr_error_input_argument")
  # too few distinct response patterns in a group for free probabilities
  d2 <- d
  d2$region[1:3] <- "small"
  d2[1:3, 1:5] <- d2[1, 1:5]
  expect_error(lca(d2, 2, group = "region", invariance = "none"), "distinct", class = "aspectr_error_input_value")
  fit <- lca(d, 2, group = "region", seed = 1)
  # a latent class regression is not among the grouped models
  expect_error(anova(fit, lca(cbind(item1, item2, item3, item4, item5) ~ region, d, 2, seed = 1, nrun = 2)),
               class = "aspectr_error_input_type")
  expect_error(anova(fit, lca(d[-1, ], 2, group = "region", seed = 1)), class = "aspectr_error_input_argument")
  expect_error(lca_invariance(d, 2, "region", invariance = "full"), class = "aspectr_error_input_argument")
  expect_error(lca_invariance(d, 2, "region", weights = rep(1, nrow(d))), class = "aspectr_error_unsupported")
  # the class-number tools compare models without groups
  expect_error(lca_rank(d[1:5], 1:2, group = d$region), "group", class = "aspectr_error_input_argument")
  expect_error(lca_blrt(d[1:5], 2, B = 2, group = d$region), "group", class = "aspectr_error_input_argument")
})

test_that("multiple-group fits match glca on its nyts18 data", {
  skip_if_not_installed("glca")
  nyts18 <- get(utils::data("nyts18", package = "glca", envir = environment()))
  items <- c("ECIGT", "ECIGAR", "ESLT", "EELCIGT", "EHOOKAH")
  d <- nyts18[c(items, "SEX")]
  f <- glca::item(ECIGT, ECIGAR, ESLT, EELCIGT, EHOOKAH) ~ 1
  for (inv in c(TRUE, FALSE)) {
    g <- glca::glca(f, group = SEX, data = nyts18, nclass = 2, measure.inv = inv, n.init = 10,
                    seed = 1, verbose = FALSE, eps = 1e-10)
    a <- lca(d, 2, group = "SEX", invariance = if (inv) "full" else "none", seed = 1, tol = 1e-10)
    expect_equal(a$llik, g$gof$loglik, tolerance = 1e-6)
    expect_equal(a$npar, g$model$npar)
    expect_equal(a$AIC, g$gof$AIC, tolerance = 1e-6)
    expect_equal(a$BIC, g$gof$BIC, tolerance = 1e-6)
    for (sx in c("Male", "Female")) {
      rho <- lapply(g$param$rho[[sx]], function(m) { colnames(m) <- c("Yes", "No"); m })
      names(rho) <- items
      o <- match_perm(a$probs[[sx]], rho)
      expect_equal(unname(a$P[sx, ]), unname(g$param$gamma[sx, o]), tolerance = 1e-4)
      for (v in items) {
        expect_equal(unname(a$probs[[sx]][[v]]), unname(rho[[v]][o, ]), tolerance = 1e-4)
        if (!inv) {
          # glca's standard errors come from another information matrix:
          # they agree within a third
          ratio <- a$se$probs[[sx]][[v]][, 1] / g$std.err$rho[[sx]][[v]][o, 1]
          expect_true(all(ratio > 0.75 & ratio < 1.33), label = paste(sx, v, "standard errors near glca's"))
        }
      }
    }
  }
  # G^2 over the complete response patterns: glca's with complete cases
  # (with missing responses glca's saturated model keeps them)
  g <- glca::glca(f, group = SEX, data = nyts18, nclass = 2, n.init = 10, seed = 1, verbose = FALSE,
                  eps = 1e-10, na.rm = TRUE)
  a <- lca(d, 2, group = "SEX", seed = 1, tol = 1e-10, na.rm = TRUE)
  expect_equal(a$N, g$model$N)
  expect_equal(a$llik, g$gof$loglik, tolerance = 1e-6)
  expect_equal(a$Gsq, g$gof$Gsq, tolerance = 1e-5)
  # standard errors: glca's (its own information matrix) agree to a few percent
  expect_equal(a$se$P[, 1], g$std.err$gamma[, which.max(g$param$gamma[1, ])], tolerance = 0.05, ignore_attr = TRUE)
  # glca's test of measurement invariance
  g1 <- glca::glca(f, group = SEX, data = nyts18, nclass = 2, seed = 1, verbose = FALSE)
  g2 <- glca::glca(f, group = SEX, data = nyts18, nclass = 2, measure.inv = FALSE, seed = 1, verbose = FALSE)
  gt <- glca::gofglca(g1, g2, test = "chisq")$dtable
  inv <- lca_invariance(d, 2, "SEX", seed = 1)
  expect_equal(inv$Df[2], as.integer(gt[2, "Df"]))
  expect_equal(inv$LR[2], gt[2, "Deviance"], tolerance = 1e-3)
})

test_that("multiple-group fits with missing responses match glca on gss08", {
  skip_if_not_installed("glca")
  gss08 <- get(utils::data("gss08", package = "glca", envir = environment()))
  items <- c("DEFECT", "HLTH", "RAPE", "POOR", "SINGLE", "NOMORE")
  f <- glca::item(DEFECT, HLTH, RAPE, POOR, SINGLE, NOMORE) ~ 1
  g <- glca::glca(f, group = SEX, data = gss08, nclass = 2, seed = 1, verbose = FALSE, eps = 1e-10)
  a <- lca(gss08[c(items, "SEX")], 2, group = "SEX", seed = 1, tol = 1e-10)
  expect_equal(a$N, g$model$N)
  expect_equal(a$llik, g$gof$loglik, tolerance = 1e-6)
  o <- match_perm(a$probs$MALE[1], list(DEFECT = `colnames<-`(g$param$rho$MALE$DEFECT, c("YES", "NO"))))
  expect_equal(unname(a$P), unname(g$param$gamma[, o]), tolerance = 1e-4)
})

test_that("three groups, numeric and factor groups, unused levels and dropped rows", {
  d <- sim_groups(300)
  set.seed(9)
  g3 <- sample(1:3, nrow(d), TRUE)  # numeric group codes
  none <- lca(d[1:5], 2, group = g3, invariance = "none", seed = 1, tol = 1e-10)
  sep <- vapply(1:3, function(g) lca(d[g3 == g, 1:5], 2, seed = 1, tol = 1e-10)$llik, 1)
  expect_equal(none$llik, sum(sep), tolerance = 1e-8)
  expect_identical(none$groups, c("1", "2", "3"))
  expect_equal(dim(none$P), c(3L, 2L))
  full <- lca(d[1:5], 2, group = g3, seed = 1, tol = 1e-10)
  d$g3 <- factor(g3)
  reg <- lca(cbind(item1, item2, item3, item4, item5) ~ g3, d, 2, seed = 1, tol = 1e-14, max_iter = 20000)
  expect_equal(full$llik, reg$llik, tolerance = 1e-9)
  expect_equal(anova(full, none)$Df[2], 2L * 2L * 6L)
  # an unused factor level is no group
  gf <- factor(g3, levels = 1:4)
  f4 <- lca(d[1:5], 2, group = gf, seed = 1)
  expect_equal(f4$G, 3L)
  expect_equal(f4$llik, full$llik, tolerance = 1e-6)
  # a group whose rows are all dropped (na.rm = TRUE) is left out, with a message
  d3 <- d[1:5]
  d3$item2[g3 == 2] <- NA
  expect_message(f7 <- lca(d3, 2, group = g3, na.rm = TRUE, seed = 1), "2", class = "aspectr_message_dropped")
  expect_identical(f7$groups, c("1", "3"))
  # rows dropped by na.rm = TRUE leave their group's count
  d2 <- d[1:5]
  d2$item1[g3 == 3][1:5] <- NA
  f5 <- lca(d2, 2, group = g3, na.rm = TRUE, seed = 1)
  expect_equal(unname(f5$Ng), tabulate(g3, 3) - c(0, 0, 5))
  expect_equal(f5$N, nrow(d2) - 5)
  f6 <- lca(d2, 2, group = g3, seed = 1)  # missing responses kept
  expect_equal(f6$N, nrow(d2))
  expect_lt(f6$Nobs, f6$N)
})
