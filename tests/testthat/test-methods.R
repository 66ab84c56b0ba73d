sotu_fit <- function(loss = "kl", ...) {
  plsa(sotu_dtm[1:120, ], 4, loss = loss, seed = 1, max_iter = 60, ...)
}

test_that("predict folds in new documents under each loss", {
  x <- tiny_counts(13, 30, 20)
  for (loss in c("kl", "tsallis", "l2")) {
    fit <- plsa(x[1:25, ], 3, loss = loss, seed = 1, max_iter = 300, tol = 1e-10)
    p <- predict(fit, x[26:30, ])
    expect_equal(dim(p), c(5L, 3L))
    expect_equal(rownames(p), rownames(x)[26:30])
    expect_equal(unname(rowSums(p)), rep(1, 5), tolerance = 1e-12)
    expect_true(all(p >= 0))
    cls <- predict(fit, x[26:30, ], type = "class")
    expect_identical(unname(cls), max.col(p, ties.method = "first"))
  }
})

test_that("KL fold-in maximizes the document likelihood (vs a reference optimizer)", {
  x <- tiny_counts(14, 30, 20)
  fit <- plsa(x[1:25, ], 3, seed = 1, max_iter = 500, tol = 1e-10)
  V <- fit$factors$terms
  doc <- x[27, ]
  p <- predict(fit, doc)
  ll <- function(th) sum(doc[doc > 0] * log(drop(V %*% th)[doc > 0]))
  # brute force over a fine simplex grid cannot beat the fold-in
  g <- expand.grid(a = seq(0, 1, 0.02), b = seq(0, 1, 0.02))
  g <- g[g$a + g$b <= 1, ]
  best <- max(apply(g, 1, function(z) ll(c(z[1], z[2], 1 - z[1] - z[2]))))
  expect_gte(ll(drop(p)), best - 1e-9)
})

test_that("L2 fold-in solves the simplex least-squares problem", {
  skip_if_not_installed("quadprog")
  x <- tiny_counts(15, 30, 20)
  fit <- plsa(x[1:25, ], 3, loss = "l2", seed = 1, max_iter = 200)
  doc <- x[28, ]
  p <- drop(predict(fit, doc))
  ref <- ref_simplex_ls(fit$factors$terms, doc / sum(doc), ridge = 0)
  expect_equal(p, ref, tolerance = 1e-6, ignore_attr = TRUE)
})

test_that("predicting the training documents under KL reproduces topics()", {
  x <- tiny_counts(16, 30, 20)
  fit <- plsa(x, 3, seed = 1, max_iter = 5000, tol = 1e-13)
  expect_equal(predict(fit, x), topics(fit), tolerance = 1e-4)
  expect_identical(predict(fit), topics(fit))
})

test_that("newdata columns are matched by name; empty documents get the prior", {
  x <- tiny_counts(17, 30, 20)
  fit <- plsa(x[1:25, ], 3, seed = 1, max_iter = 100)
  nd <- x[26:28, ]
  shuffled <- nd[, rev(seq_len(ncol(nd)))]
  expect_equal(predict(fit, shuffled), predict(fit, nd), tolerance = 1e-12)
  extra <- cbind(nd, unknown_term = 5)
  expect_equal(predict(fit, extra), predict(fit, nd), tolerance = 1e-12)
  empty <- nd; empty[2, ] <- 0
  p <- predict(fit, empty)
  expect_equal(p[2, ], fit$lambda, ignore_attr = TRUE)
  # a document with counts only for unknown terms also gets the prior
  only_unknown <- matrix(c(0, 0, 3), 1, dimnames = list("q", c("w1", "w2", "zzz")))
  only_unknown[1, 1:2] <- 0
  expect_equal(drop(predict(fit, only_unknown)), unname(fit$lambda), ignore_attr = TRUE)
  all_zero <- nd * 0
  expect_equal(unname(predict(fit, all_zero)), matrix(fit$lambda, 3, 3, byrow = TRUE),
               ignore_attr = TRUE)
  # unnamed newdata must have one column per term
  expect_equal(predict(fit, unname(nd)), predict(fit, nd), ignore_attr = TRUE)
})

test_that("topics() gives the prior for training documents without counts", {
  x <- tiny_counts(18)
  x[3, ] <- 0
  fit <- plsa(x, 2, seed = 1, max_iter = 50)
  tp <- topics(fit)
  expect_equal(tp[3, ], fit$lambda, ignore_attr = TRUE)
  expect_equal(unname(rowSums(tp)), rep(1, nrow(x)), tolerance = 1e-12)
})

test_that("saveRDS/readRDS round trip predicts identically", {
  fit <- sotu_fit()
  f <- tempfile(fileext = ".rds")
  saveRDS(fit, f)
  back <- readRDS(f)
  expect_identical(predict(back, sotu_dtm[121:130, ]), predict(fit, sotu_dtm[121:130, ]))
  expect_identical(terms(back, 5), terms(fit, 5))
})

test_that("logLik, AIC and BIC follow from the multinomial likelihood", {
  x <- tiny_counts(19)
  fit <- plsa(x, 2, seed = 1, max_iter = 200)
  P <- fitted(fit, type = "probability")
  ll <- sum(x[x > 0] * log(P[x > 0]))
  expect_equal(as.numeric(logLik(fit)), ll, tolerance = 1e-10)
  df <- 1 + 2 * (nrow(x) - 1) + 2 * (ncol(x) - 1)
  expect_identical(attr(logLik(fit), "df"), as.integer(df))
  expect_equal(AIC(fit), -2 * ll + 2 * df, tolerance = 1e-10)
  expect_equal(BIC(fit), -2 * ll + log(sum(x)) * df, tolerance = 1e-10)
  expect_equal(sum(fitted(fit)), sum(x), tolerance = 1e-10)
})

test_that("terms(), tidy() and glance() have the documented shapes", {
  fit <- sotu_fit()
  tt <- terms(fit, 6)
  expect_equal(dim(tt), c(6L, 4L))
  v <- fit$factors$terms
  expect_identical(unname(tt[1, 1]), rownames(v)[which.max(v[, 1])])
  b <- tidy(fit)
  expect_named(b, c("topic", "term", "beta"))
  expect_equal(nrow(b), 4 * ncol(sotu_dtm))
  expect_equal(as.vector(tapply(b$beta, b$topic, sum)), rep(1, 4), tolerance = 1e-10)
  g <- tidy(fit, matrix = "gamma")
  expect_named(g, c("document", "topic", "gamma"))
  expect_equal(as.vector(tapply(g$gamma, g$document, sum)), rep(1, 120), tolerance = 1e-10)
  gl <- glance(fit)
  expect_equal(nrow(gl), 1)
  expect_equal(gl$logLik, as.numeric(logLik(fit)))
})

test_that("print and summary are stable", {
  fit <- sotu_fit()
  expect_snapshot(print(fit))
  expect_snapshot(summary(fit))
  expect_snapshot(print(plsa(sotu_dtm[1:50, ], 1)))
})

test_that("plots draw without error", {
  fit <- sotu_fit("tsallis")
  f <- tempfile(fileext = ".pdf")
  grDevices::pdf(f)
  on.exit(grDevices::dev.off())
  expect_identical(plot(fit), fit)
  expect_identical(plot(fit, type = "weights"), fit)
  expect_identical(plot(fit, type = "convergence"), fit)
  expect_message(plot(plsa(sotu_dtm[1:30, ], 1), type = "convergence"), "closed form")
})

test_that("verbose fits show progress and give the same result", {
  x <- tiny_counts(20)
  quiet <- plsa(x, 2, seed = 1, max_iter = 30)
  withr_opts <- options(cli.progress_show_after = 0, cli.dynamic = FALSE)
  on.exit(options(withr_opts))
  loud <- plsa(x, 2, seed = 1, max_iter = 30, verbose = TRUE)
  expect_identical(loud$factors, quiet$factors)
})

test_that("fitted() refuses very large dense results", {
  fit <- sotu_fit()
  old <- options(aspectr.max_cells = 100)
  on.exit(options(old))
  expect_error(fitted(fit), class = "aspectr_error_size")
})

test_that("the summary's perplexity is per word given the document", {
  x <- tiny_counts(21)
  fit <- plsa(x, 2, seed = 1, max_iter = 100)
  P <- fitted(fit, type = "probability")
  Pwd <- P / rowSums(P)
  direct <- exp(-sum(x[x > 0] * log(Pwd[x > 0])) / sum(x))
  expect_equal(summary(fit)$perplexity, direct, tolerance = 1e-10)
})
