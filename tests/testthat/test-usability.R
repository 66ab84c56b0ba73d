# What a user meets first: messages that give a call that works, warnings
# where a result cannot be trusted, the generics a user reaches for.

test_that("residuals() and augment() without the data name their own argument and a call that works", {
  x <- matrix(rpois(60, 3), 12, 5)
  fit <- plsa(x, 2, seed = 1, max_iter = 50)
  e <- expect_error(residuals(fit), class = "aspectr_error_input_argument")
  expect_identical(e$arg, "x")
  expect_match(conditionMessage(e), "`x` is missing", fixed = TRUE)
  expect_match(conditionMessage(e), "residuals(fit, x)", fixed = TRUE)
  expect_false(grepl("f(fit", conditionMessage(e), fixed = TRUE))
  # the call the message gives works
  expect_equal(dim(residuals(fit, x)), dim(x))
  e <- expect_error(augment(fit), class = "aspectr_error_input_argument")
  expect_identical(e$arg, "data")
  expect_match(conditionMessage(e), "augment(fit, data = x)", fixed = TRUE)
  nt <- ntf(array(rpois(60, 3), c(5, 4, 3)), 2, seed = 1, max_iter = 20, tol = 1e-2)
  e <- expect_error(residuals(nt), class = "aspectr_error_input_argument")
  expect_identical(e$arg, "x")
  e <- expect_error(residuals(fit, x[-1, ]), class = "aspectr_error_input_newdata")
  expect_match(conditionMessage(e), "`x` must have the dimensions", fixed = TRUE)
})

test_that("coef() of a family without coefficients is a classed error naming its parameters", {
  x <- matrix(rpois(60, 3), 12, 5)
  fit <- plsa(x, 2, seed = 1, max_iter = 50)
  e <- expect_error(coef(fit), class = "aspectr_error_unsupported")
  expect_match(conditionMessage(e), "fit$factors", fixed = TRUE)
  expect_error(coef(ntf(array(rpois(60, 3), c(5, 4, 3)), 2, seed = 1, max_iter = 20, tol = 1e-2)),
               class = "aspectr_error_unsupported")
  # nmf() keeps its coef(): H
  nf <- nmf(x, 2, seed = 1, max_iter = 50)
  expect_identical(coef(nf), nf$H)
})

test_that("lca() warns when the model has more free parameters than the data identify", {
  # 4 binary items: 16 response patterns, 15 free cells
  set.seed(2)
  d <- data.frame(lapply(1:4, function(i) factor(sample(c("a", "b"), 200, TRUE))))
  names(d) <- paste0("q", 1:4)
  # k = 4: 3 + 4 * 4 = 19 free parameters
  w <- expect_warning(fit <- lca(d, 4, nrun = 2, seed = 1, se = FALSE),
                      class = "aspectr_warning_identification")
  expect_match(conditionMessage(w), "19 free parameters", fixed = TRUE)
  expect_match(conditionMessage(w), "(15:", fixed = TRUE)
  expect_identical(glance(fit)$df, -4)
  # k = 2: 9 parameters, no warning
  expect_no_warning(fit2 <- lca(d, 2, nrun = 2, seed = 1, se = FALSE))
  expect_identical(glance(fit2)$df, 6)
  # lca_rank() reports the same as resid_df, without the warning
  expect_no_warning(r <- lca_rank(d, k = c(2, 4), nrun = 2, seed = 1))
  expect_identical(r$table$resid_df, c(6L, -4L))
  expect_identical(tidy(r), tibble::as_tibble(r$table))
})

test_that("a rank selection whose every k has an infinite criterion suggests none and says so", {
  # (the rule itself: the smallest finite value, the first of a tie)
  expect_identical(rank_best(2:5, c(3, Inf, 1, 1), "perplexity"), 4L)
  w <- expect_warning(b <- rank_best(2:3, c(Inf, Inf), "perplexity"), class = "aspectr_warning_rank")
  expect_identical(b, NA_integer_)
  expect_match(conditionMessage(w), "split = \"documents\"", fixed = TRUE)
  # held-out cells of sparse counts: KL fits give probability 0 to some
  x <- sotu_dtm[1:60, order(Matrix::colSums(sotu_dtm), decreasing = TRUE)[1:200]]
  expect_warning(r <- plsa_rank(x, k = c(2, 4), seed = 1, max_iter = 30, tol = 1e-3, split = "cells"),
                 class = "aspectr_warning_rank")
  expect_true(all(is.infinite(r$table$perplexity)))
  expect_identical(r$best, NA_integer_)
  expect_output(print(r), "suggested k: none", fixed = TRUE)
  expect_error(plot(r), class = "aspectr_error_input_value")
  expect_identical(tidy(r), tibble::as_tibble(r$table))
})

test_that("arguments named as in poLCA, NMF, topicmodels and stm get this package's name", {
  d <- data.frame(a = factor(c("x", "y", "x", "y")), b = factor(c("x", "x", "y", "y")))
  e <- expect_error(lca(d, 2, nrep = 3), class = "aspectr_error_input_argument")
  expect_match(conditionMessage(e), "`nrep` is poLCA's name: here it is `nrun`", fixed = TRUE)
  e <- expect_error(lca(d, k = 2, maxiter = 10), class = "aspectr_error_input_argument")
  expect_match(conditionMessage(e), "here it is `max_iter`", fixed = TRUE)
  e <- expect_error(plsa(matrix(1:6, 2), K = 2), class = "aspectr_error_input_argument")
  expect_match(conditionMessage(e), "here it is `k`", fixed = TRUE)
  # an ordinary misspelling still gets the closest argument
  e <- expect_error(plsa(matrix(1:6, 2), 2, max_itr = 5), class = "aspectr_error_input_argument")
  expect_match(conditionMessage(e), "Did you mean `max_iter`", fixed = TRUE)
})

test_that("a callback that cannot take (iteration, objective, factors) is refused up front", {
  x <- matrix(rpois(60, 3), 12, 5)
  for (cb in list(function(x) x, function(i, o) TRUE, function(a, b, c, d) TRUE)) {
    e <- expect_error(plsa(x, 2, callback = cb, max_iter = 5, seed = 1), class = "aspectr_error_input_argument")
    expect_identical(e$arg, "callback")
    expect_error(nmf(x, 2, callback = cb, max_iter = 5, seed = 1), class = "aspectr_error_input_argument")
  }
  # three arguments, dots, or more with defaults are fine
  seen <- 0
  for (cb in list(function(i, o, f) { seen <<- seen + 1; TRUE }, function(...) TRUE,
                  function(i, o, f, extra = 1) TRUE)) {
    expect_s3_class(plsa(x, 2, callback = cb, max_iter = 3, tol = 0, seed = 1), "aspectr_plsa")
  }
  expect_identical(seen, 3)
})

test_that("counts of starts and draws beyond what a session can run are input errors", {
  x <- matrix(rpois(60, 3), 12, 5)
  d <- data.frame(a = factor(rep(c("x", "y"), 10)), b = factor(rep(c("x", "y"), each = 10)))
  expect_error(plsa(x, 2, nrun = 1e9), class = "aspectr_error_input")
  expect_error(nmf_rank(x, 2:3, nrun = 1e9), class = "aspectr_error_input")
  expect_error(lca_blrt(d, 2, B = 1e9), class = "aspectr_error_input")
  expect_error(lca_rank(d, 1:2, blrt = 1e9), class = "aspectr_error_input")
})

test_that("an nmf() start list without the names W or H is refused", {
  x <- matrix(runif(60), 12, 5)
  expect_error(nmf(x, 2, init = list(1)), class = "aspectr_error_input_argument")
  expect_error(nmf(x, 2, init = list(matrix(1, 12, 2))), class = "aspectr_error_input_argument")
})

test_that("every family's residuals() without the data is a classed error", {
  a <- tcrossprod(matrix(runif(20), 10, 2))
  e <- expect_error(residuals(symnmf(a, 2, seed = 1, max_iter = 20)), class = "aspectr_error_input_argument")
  expect_match(conditionMessage(e), "residuals(fit, x)", fixed = TRUE)
})

test_that("generics a family does not have are classed errors", {
  nt <- ntf(array(rpois(60, 3), c(5, 4, 3)), 2, seed = 1, max_iter = 20, tol = 1e-2)
  for (f in list(vcov, confint, anova, terms, coef)) expect_error(f(nt), class = "aspectr_error_unsupported")
  fit <- plsa(matrix(rpois(60, 3), 12, 5), 2, seed = 1, max_iter = 50)
  expect_error(vcov(fit), class = "aspectr_error_unsupported")
})

test_that("as_ldavis_json() to a file it cannot write is an input error, without base warnings", {
  fit <- plsa(matrix(rpois(60, 3), 12, 5), 2, seed = 1, max_iter = 50)
  expect_no_warning(e <- expect_error(as_ldavis_json(fit, file = file.path(tempfile(), "no", "x.json")),
                                      class = "aspectr_error_input_value"))
  expect_identical(e$arg, "file")
})

test_that("topic_quality() and residuals() refuse data whose names are not the fit's", {
  x <- matrix(rpois(120, 3), 12, 10, dimnames = list(NULL, paste0("t", 1:10)))
  fit <- plsa(x, 2, seed = 1, max_iter = 50)
  y <- x
  colnames(y) <- paste0("z", 1:10)
  e <- expect_error(topic_quality(fit, y, n = 3), class = "aspectr_error_input_newdata")
  expect_match(conditionMessage(e), "column 1 is \"z1\", not \"t1\"", fixed = TRUE)
  expect_error(residuals(fit, y), class = "aspectr_error_input_newdata")
  expect_identical(topic_quality(fit, unname(x), n = 3), topic_quality(fit, x, n = 3))
})

test_that("input messages name the argument and say it once", {
  x <- matrix(rpois(60, 3), 12, 5)
  e <- expect_error(shards(list(x, x[0, ])), class = "aspectr_error_input")
  expect_identical(lengths(regmatches(conditionMessage(e), gregexpr("is not data a fitter accepts", conditionMessage(e)))), 1L)
  e <- expect_error(multiway_cluster(NULL, 2), class = "aspectr_error_input")
  expect_identical(e$arg, "x")
  e <- expect_error(multiway_cluster(matrix(0, 0, 2), 2), class = "aspectr_error_input_type")
  expect_identical(e$arg, "x")
  expect_error(hypergraph_affinity(rbind(c(1e300, 0), c(0, 1), c(1, 1), c(2, 2)), order = 3),
               class = "aspectr_error_input_value")
  d <- data.frame(a = factor(rep(c("x", "y"), 10)), b = factor(rep(c("x", "y"), each = 10)))
  e <- expect_error(lca(d, 2, psu = rep(1, 20), nrun = 1, seed = 1), class = "aspectr_error_input_argument")
  expect_match(conditionMessage(e), "`psu` must give every stratum", fixed = TRUE)
})

test_that("poLCA's nclass in lca()'s formula interface is named before k is found missing", {
  d <- data.frame(a = factor(rep(c("x", "y"), 10)), b = factor(rep(c("x", "y"), each = 10)))
  e <- expect_error(lca(cbind(a, b) ~ 1, d, nclass = 2), class = "aspectr_error_input_argument")
  expect_identical(e$arg, "nclass")
  expect_match(conditionMessage(e), "here it is `k`", fixed = TRUE)
})

test_that("predict() of an NMF gives NA for a new row or column with no observed cell", {
  set.seed(1)
  x <- matrix(rpois(40 * 20, 2), 40, 20)
  fit <- nmf(x, 2, seed = 1, max_iter = 200)
  new <- x[1:3, ]
  new[2, ] <- NA
  new[3, 1:5] <- NA
  p <- predict(fit, new)
  expect_true(all(is.na(p[2, ])))
  expect_false(anyNA(p[-2, ]))
  # the rows with cells are those of the rows alone
  expect_equal(p[c(1, 3), ], predict(fit, new[c(1, 3), ]), tolerance = 1e-12)
  expect_identical(unname(predict(fit, new, type = "class"))[2], NA_integer_)
  newc <- x[, 1:2]
  newc[, 1] <- NA
  pc <- predict(fit, newc, margin = "columns")
  expect_true(all(is.na(pc[, 1])))
  expect_false(anyNA(pc[, 2]))
  expect_equal(unname(pc[, 2]), unname(predict(fit, x[, 2, drop = FALSE], margin = "columns")[, 1]), tolerance = 1e-8)
})

test_that("an alpha too large for the data is an input error naming alpha", {
  set.seed(1)
  y <- array(rpois(6^3, 2) + 0, c(6, 6, 6))
  y <- y + aperm(y, c(2, 1, 3)) + aperm(y, c(3, 2, 1)) + aperm(y, c(1, 3, 2)) + aperm(y, c(2, 3, 1)) +
    aperm(y, c(3, 1, 2))
  e <- expect_error(sntf(y, 2, alpha = 1e4, max_iter = 5), class = "aspectr_error_input_value")
  expect_identical(e$arg, "alpha")
  expect_s3_class(e$parent, "aspectr_error_numeric")
  expect_no_error(suppressMessages(sntf(y, 2, alpha = 5, max_iter = 5)))
})

test_that("lca_distal() refuses outcomes whose squares overflow; terms() of grouped fits is classed", {
  set.seed(1)
  d <- data.frame(lapply(1:4, function(i) factor(sample(1:3, 150, TRUE))))
  names(d) <- paste0("y", 1:4)
  fit <- quiet_unidentified(lca(d, 2, seed = 1, nrun = 2))
  z <- rnorm(150)
  z[3] <- 1e80
  e <- expect_error(lca_distal(fit, z, method = "naive"), class = "aspectr_error_input_value")
  expect_identical(e$arg, "outcome")
  z[3] <- 1e70
  expect_no_error(lca_distal(fit, z, method = "naive"))
  expect_no_error(lca_distal(fit, z, method = "bch"))
  g <- quiet_unidentified(lca(d, 2, group = rep(c("a", "b"), 75), seed = 1, nrun = 2))
  expect_error(terms(g), class = "aspectr_error_unsupported")
})

test_that("hypergraph residuals that are not finite and SMART's positive data are named", {
  set.seed(1)
  P <- matrix(runif(20), 10)
  e <- expect_error(hypergraph_affinity(P, order = 3, fun = function(p) Inf), class = "aspectr_error_input_value")
  expect_identical(e$arg, "fun")
  expect_error(hypergraph_affinity(P, order = 3, fun = function(p) 1e200), class = "aspectr_error_input_value")
  expect_s3_class(hypergraph_affinity(P, order = 3, fun = function(p) sum(p)), "aspectr_symtensor")
  y <- array(0, c(5, 5, 5))
  y[1, 1, 1] <- 2
  e <- expect_error(sntf(y, 1, alpha = 0), class = "aspectr_error_input_value")
  expect_match(conditionMessage(e), "`alpha = 0` (SMART)", fixed = TRUE)
  e <- expect_error(sntf(y, 1, method = "smart"), class = "aspectr_error_input_value")
  expect_match(conditionMessage(e), "`method = \"smart\"`", fixed = TRUE)
})

test_that("a shard with missing values points to the mask", {
  x <- matrix(rpois(60, 2), 12)
  x[2, 3] <- NA
  e <- expect_error(shards(list(x[1:5, ], x[6:12, ])), class = "aspectr_error_shard")
  expect_s3_class(e, "aspectr_error_input_value")
  expect_match(conditionMessage(e), "leave the cells out of the fit with `mask`", fixed = TRUE)
  x[2, 3] <- 0
  m <- matrix(FALSE, 12, 5)
  m[2, 3] <- TRUE
  expect_equal(suppressMessages(nmf(shards(list(x[1:5, ], x[6:12, ])), 2, mask = m, seed = 1, max_iter = 20))$objective,
               suppressMessages(nmf(x, 2, mask = m, seed = 1, max_iter = 20))$objective, tolerance = 1e-10)
})
