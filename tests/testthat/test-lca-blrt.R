# lca_blrt(): the parametric bootstrap likelihood-ratio test of k - 1 vs k
# classes.

test_that("lca_simulate() draws from the fitted model, keeping missing responses missing", {
  fit <- lca(expand_patterns(polca_values_patterns), 2, seed = 1)
  n <- 40000
  mask <- matrix(FALSE, n, 4)
  mask[1:100, 2] <- TRUE
  set.seed(1)
  sim <- aspectr:::lca_simulate(fit, mask)
  expect_equal(dim(sim), c(n, 4L))
  expect_true(all(is.na(sim[1:100, 2])))
  expect_false(anyNA(sim[-(1:100), ]))
  # marginals and a pairwise table against the model
  for (j in 1:4) {
    expect_equal(mean(sim[[j]] == 2, na.rm = TRUE), sum(fit$P * fit$probs[[j]][, 2]), tolerance = 0.02)
  }
  both <- mean(sim[[1]] == 2 & sim[[3]] == 2)
  expect_equal(both, sum(fit$P * fit$probs[[1]][, 2] * fit$probs[[3]][, 2]), tolerance = 0.03)
})

test_that("lca_blrt() rejects too few classes and keeps enough; it is reproducible", {
  set.seed(3)
  n <- 400
  z <- sample(1:2, n, TRUE)
  two <- data.frame(lapply(1:5, function(j) ifelse(runif(n) < c(0.9, 0.1)[z], "y", "n")))
  t2 <- lca_blrt(two, k = 2, B = 19, nrun = 3, seed = 1)
  expect_s3_class(t2, "aspectr_blrt")
  expect_equal(t2$statistic, 2 * (t2$alternative$llik - t2$null$llik))
  expect_length(t2$boot, 19)
  # the observed ratio beats every draw: the smallest p-value, 1 / (B + 1)
  expect_gt(t2$statistic, max(t2$boot))
  expect_equal(t2$p.value, 1 / 20)
  expect_equal(t2$p.value, (1 + sum(t2$boot >= t2$statistic)) / 20)
  t3 <- lca_blrt(two, k = 3, B = 19, nrun = 3, seed = 1)
  expect_gt(t3$p.value, 0.05)
  expect_equal(t3$p.value, (1 + sum(t3$boot >= t3$statistic)) / 20)
  expect_true(all(t3$boot >= -1e-6))
  expect_identical(lca_blrt(two, k = 3, B = 19, nrun = 3, seed = 1)$boot, t3$boot)
  expect_output(print(t3), "2 vs 3 latent classes")
  td <- tidy(t3)
  expect_equal(td$p.value, t3$p.value)
  expect_equal(td$df, 6)
  expect_error(lca_blrt(two, k = 1), class = "aspectr_error_input")
  expect_error(lca_blrt(two, k = 2, B = 0), class = "aspectr_error_input")
  expect_error(lca_blrt(two, k = 2, weights = rep(1, n)), class = "aspectr_error_input")
  expect_error(lca_blrt(as.matrix(two), k = 2), class = "aspectr_error_input")
})

test_that("lca_rank() has SABIC, CAIC and, on request, the bootstrap p-values", {
  set.seed(3)
  n <- 300
  z <- sample(1:2, n, TRUE)
  two <- data.frame(lapply(1:5, function(j) ifelse(runif(n) < c(0.9, 0.1)[z], "y", "n")))
  r <- lca_rank(two, k = 1:3, nrun = 3, seed = 1, blrt = 9)
  tab <- r$table
  expect_equal(tab$SABIC, -2 * tab$logLik + log((n + 2) / 24) * tab$npar)
  expect_equal(tab$CAIC, -2 * tab$logLik + (log(n) + 1) * tab$npar)
  expect_true(is.na(tab$blrt_p[1]))
  expect_equal(tab$blrt_p[2], 1 / 10)
  expect_true(all(tab$blrt_p[-1] >= 1 / 10 & tab$blrt_p[-1] <= 1))
  expect_identical(lca_rank(two, k = 1:3, nrun = 3, seed = 1, criterion = "CAIC")$best,
                   tab$k[which.min(tab$CAIC)])
  expect_null(lca_rank(two, k = 1:2, nrun = 2, seed = 1)$table$blrt_p)
})

test_that("lca_blrt() names the k it was given when the data take fewer classes", {
  set.seed(1)
  d <- as.data.frame(lapply(1:4, function(j) sample(c("yes", "no"), 100, TRUE)))
  expect_error(lca_blrt(d, 20, B = 2), class = "aspectr_error_input", regexp = "not 20")
})
