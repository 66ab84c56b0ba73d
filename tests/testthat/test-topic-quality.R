# Topic quality (coherence, exclusivity, FREX, size), checked against
# plain-R references written from the papers' formulas, hand computations,
# and stm where it is installed.

# Plain-R reference: beta is terms x k (columns P(w | z)), X documents x
# terms; loops over the pairs as the formulas are written.
ref_topic_quality <- function(beta, X, n, eps = 1, w = 0.7) {
  B <- X > 0
  N <- nrow(X)
  V <- nrow(beta); k <- ncol(beta)
  ex <- beta / rowSums(beta)
  ex[is.nan(ex)] <- 0  # a term without probability in any topic
  frex <- 1 / (w / (apply(ex, 2, rank) / V) + (1 - w) / (apply(beta, 2, rank) / V))
  out <- data.frame(umass = numeric(k), npmi = numeric(k), exclusivity = numeric(k), frex = numeric(k))
  for (z in seq_len(k)) {
    v <- order(beta[, z], decreasing = TRUE)[1:n]
    um <- c(); np <- c()
    for (m in 2:n) for (l in 1:(m - 1)) {
      Dl <- sum(B[, v[l]]); Dm <- sum(B[, v[m]]); Dlm <- sum(B[, v[l]] & B[, v[m]])
      um <- c(um, log((Dlm + eps) / Dl))
      p <- Dlm / N
      np <- c(np, if (Dlm == 0) -1 else if (Dlm == N) 1 else log(p / ((Dl / N) * (Dm / N))) / -log(p))
    }
    out$umass[z] <- mean(um)
    out$npmi[z] <- mean(np)
    out$exclusivity[z] <- mean(ex[v, z])
    out$frex[z] <- sum(frex[v, z])
  }
  out
}

tq_x <- matrix(c(2, 1, 0, 0, 0, 0,
                 1, 1, 1, 0, 0, 0,
                 0, 1, 0, 0, 0, 3,
                 0, 0, 2, 1, 0, 0,
                 0, 0, 0, 1, 3, 1,
                 0, 0, 1, 0, 1, 2,
                 1, 0, 0, 0, 0, 1,
                 0, 2, 0, 1, 1, 0), nrow = 8, byrow = TRUE,
               dimnames = list(paste0("d", 1:8), c("a", "b", "c", "d", "e", "f")))

test_that("topic_quality() matches the plain-R reference on a small fit", {
  fit <- plsa(tq_x, 2, seed = 3, max_iter = 500, tol = 1e-10)
  for (n in c(2, 4, 6)) {
    q <- topic_quality(fit, tq_x, n = n)
    ref <- ref_topic_quality(fit$factors$terms, tq_x, n)
    expect_equal(q$umass, ref$umass, tolerance = 1e-12)
    expect_equal(q$npmi, ref$npmi, tolerance = 1e-12)
    expect_equal(q$exclusivity, ref$exclusivity, tolerance = 1e-12)
    expect_equal(q$frex, ref$frex, tolerance = 1e-12)
  }
  q <- topic_quality(fit, tq_x, n = 3, epsilon = 0.01, frex_weight = 0.3)
  ref <- ref_topic_quality(fit$factors$terms, tq_x, 3, eps = 0.01, w = 0.3)
  expect_equal(q$umass, ref$umass, tolerance = 1e-12)
  expect_equal(q$frex, ref$frex, tolerance = 1e-12)
  expect_named(q, c("topic", "size", "umass", "npmi", "exclusivity", "frex", "absent", "top_terms"))
  expect_equal(q$size, unname(fit$lambda))
  # at the EM fixed point the size is the expected share of the tokens,
  # sum x P(z | d, w) / sum x
  fc <- plsa(tq_x, 2, seed = 3, max_iter = 20000, tol = 1e-14)
  nz <- which(tq_x > 0, arr.ind = TRUE)
  post <- sweep(fc$factors[[1]][nz[, 1], ] * fc$factors[[2]][nz[, 2], ], 2, fc$lambda, "*")
  share <- colSums(post / rowSums(post) * tq_x[nz]) / sum(tq_x)
  expect_equal(topic_quality(fc, tq_x)$size, unname(share), tolerance = 1e-8)
  # the top terms in order of P(w | z)
  expect_identical(q$top_terms, apply(terms(fit, 3), 2, paste, collapse = ", "), ignore_attr = TRUE)
  # a larger corpus: the same against the reference, the measures in range
  fs <- plsa(sotu_dtm[1:60, 1:300], 3, seed = 1, max_iter = 200)
  qs <- topic_quality(fs, sotu_dtm[1:60, 1:300], n = 8)
  rs <- ref_topic_quality(fs$factors$terms, as.matrix(sotu_dtm[1:60, 1:300]), 8)
  expect_equal(qs$umass, rs$umass, tolerance = 1e-12)
  expect_equal(qs$npmi, rs$npmi, tolerance = 1e-12)
  expect_equal(qs$frex, rs$frex, tolerance = 1e-12)
  expect_true(all(qs$npmi >= -1 & qs$npmi <= 1))
  expect_true(all(qs$exclusivity >= 1 / 3 & qs$exclusivity <= 1))
  expect_true(all(qs$frex > 0 & qs$frex <= 8))
})

test_that("topic_quality() gives the hand-computed values of a known pair", {
  # topic 1 puts a first and b second; topic 2 f first and e second.
  fit <- plsa(tq_x, 2, seed = 3, max_iter = 50)
  fit$factors$terms[, 1] <- c(0.5, 0.3, 0.1, 0.05, 0.03, 0.02)
  fit$factors$terms[, 2] <- c(0.02, 0.03, 0.05, 0.1, 0.3, 0.5)
  q <- topic_quality(fit, tq_x, n = 2)
  # a is in d1, d2, d7 (D = 3); b in d1, d2, d3, d8 (D = 4); both in d1, d2
  # (D = 2) of N = 8 documents. UMass: log((2 + 1) / 3) = 0;
  # NPMI: log((2/8) / ((3/8) (4/8))) / -log(2/8) = log(4/3) / log(4).
  expect_equal(q$umass[1], 0)
  expect_equal(q$npmi[1], log(4 / 3) / log(4))
  # f in d3, d5, d6, d7 (4), e in d5, d6, d8 (3), both in d5, d6 (2):
  # UMass log(3 / 4); NPMI log((2/8) / ((4/8) (3/8))) / log(4)
  expect_equal(q$umass[2], log(3 / 4))
  expect_equal(q$npmi[2], log(4 / 3) / log(4))
  # exclusivity: a's share 0.5 / 0.52, b's 0.3 / 0.33
  expect_equal(q$exclusivity[1], mean(c(0.5 / 0.52, 0.3 / 0.33)))
  # a pair never together: NPMI -1, UMass log(epsilon / D)
  fit$factors$terms[, 1] <- c(0.5, 0.02, 0.03, 0.05, 0.1, 0.3)  # a, then f
  fit$factors$terms[, 2] <- c(0.3, 0.02, 0.03, 0.05, 0.5, 0.1)  # e, then a
  q <- topic_quality(fit, tq_x, n = 2, epsilon = 0.5)
  # a and f: both only in d7 -> D = 1
  expect_equal(q$umass[1], log(1.5 / 3))
  # e (d5, d6, d8) and a (d1, d2, d7): never together
  expect_equal(q$npmi[2], -1)
  expect_equal(q$umass[2], log(0.5 / 3))
})

test_that("topic_quality() on a reference corpus matches terms by name", {
  fit <- plsa(tq_x, 2, seed = 3, max_iter = 200)
  q <- topic_quality(fit, tq_x, n = 3)
  # the same documents, columns shuffled, an unknown term added
  ref <- cbind(tq_x[, c(6, 3, 1, 5, 2, 4)], zz = 1)
  expect_equal(topic_quality(fit, reference = ref, n = 3), q)
  expect_equal(topic_quality(fit, reference = Matrix::Matrix(ref, sparse = TRUE), n = 3), q)
  # other documents: the reference's own co-occurrence
  other <- tq_x[c(1, 2, 5, 8), ]
  qo <- topic_quality(fit, reference = other, n = 3)
  ro <- ref_topic_quality(fit$factors$terms, other, 3)
  expect_equal(qo$umass, ro$umass, tolerance = 1e-12)
  expect_equal(qo$npmi, ro$npmi, tolerance = 1e-12)
  expect_equal(qo$exclusivity, q$exclusivity)
  # a top term the reference lacks: counted as absent, its pairs left out
  top1 <- terms(fit, 3)[, 1]
  miss <- tq_x[, setdiff(colnames(tq_x), top1[1])]
  qm <- topic_quality(fit, reference = miss, n = 3)
  expect_equal(qm$absent[1], 1L)
  B <- miss > 0
  pair <- log((sum(B[, top1[3]] & B[, top1[2]]) + 1) / sum(B[, top1[2]]))
  expect_equal(qm$umass[1], pair)
  # no term in common: an error naming the argument
  bad <- tq_x; colnames(bad) <- toupper(colnames(bad))
  expect_error(topic_quality(fit, reference = bad), class = "aspectr_error_input")
})

test_that("topic_quality() works for NMF fits through the pLSA form", {
  fk <- nmf(sotu_dtm[1:80, 1:400], 3, loss = "kl", seed = 1, max_iter = 200)
  q <- topic_quality(fk, sotu_dtm[1:80, 1:400], n = 6)
  p <- as_plsa(fk)
  # as_plsa() orders topics by weight; topic_quality() keeps the fit's numbers
  qp <- topic_quality(p, sotu_dtm[1:80, 1:400], n = 6)
  o <- match(round(q$size, 12), round(qp$size, 12))
  expect_false(anyNA(o))
  for (col in c("umass", "npmi", "exclusivity", "frex", "top_terms")) {
    expect_equal(q[[col]], qp[[col]][o], tolerance = 1e-10, info = col)
  }
  beta <- t(fk$H / rowSums(fk$H))
  r <- ref_topic_quality(beta, as.matrix(sotu_dtm[1:80, 1:400]), 6)
  expect_equal(q$umass, r$umass, tolerance = 1e-12)
  expect_equal(q$frex, r$frex, tolerance = 1e-12)
  expect_equal(sum(q$size), 1)
})

test_that("glance() reports the means of topic_quality()", {
  fit <- plsa(sotu_dtm[1:80, ], 3, seed = 1, max_iter = 100)
  q <- topic_quality(fit, sotu_dtm[1:80, ])
  g <- glance(fit, data = sotu_dtm[1:80, ])
  expect_equal(g$umass, mean(q$umass))
  expect_equal(g$npmi, mean(q$npmi))
  expect_equal(g$exclusivity, mean(q$exclusivity))
  expect_equal(g$frex, mean(q$frex))
  g0 <- glance(fit)
  expect_true(is.na(g0$umass) && is.na(g0$npmi))
  expect_equal(g0$frex, g$frex)
  expect_equal(glance(fit, data = sotu_dtm[1:80, ], n = 5)$frex, mean(topic_quality(fit, sotu_dtm[1:80, ], n = 5)$frex))
  fk <- nmf(sotu_dtm[1:80, ], 3, loss = "kl", seed = 1, max_iter = 50)
  gk <- glance(fk, data = sotu_dtm[1:80, ])
  expect_equal(gk$umass, mean(topic_quality(fk, sotu_dtm[1:80, ])$umass))
  expect_error(glance(fit, data = sotu_dtm[1:10, ]), class = "aspectr_error_input")
})

test_that("plsa_rank() and nmf_rank() report coherence and exclusivity", {
  r <- suppressMessages(plsa_rank(sotu_dtm[1:80, 1:500], k = 2:3, seed = 1, max_iter = 50, n_top = 5))
  expect_true(all(c("umass", "npmi", "exclusivity", "frex") %in% names(r$table)))
  # the values are those of the training fit (refitted here with the same seed)
  train <- sotu_dtm[1:80, 1:500][-r$heldout, ]
  seeds <- local({
    set.seed(2); sample.int(.Machine$integer.max, 2)
  })
  f2 <- plsa(train, 2, seed = seeds[1], max_iter = 50)
  q2 <- topic_quality(f2, train, n = 5)
  expect_equal(r$table$umass[1], mean(q2$umass), tolerance = 1e-10)
  expect_equal(r$table$frex[1], mean(q2$frex), tolerance = 1e-10)
  cv <- suppressMessages(nmf_rank(as.matrix(sotu_dtm[1:40, 1:60]), k = 2:3, nrun = 2, seed = 1))
  expect_true(all(c("umass", "npmi", "exclusivity", "frex") %in% names(cv$table)))
  expect_true(all(cv$table$npmi >= -1 & cv$table$npmi <= 1))
  co <- suppressMessages(nmf_rank(sotu_dtm[1:40, 1:60], k = 2:3, nrun = 2, seed = 1, loss = "kl",
                                  method = "consensus"))
  expect_true(all(c("umass", "npmi", "exclusivity", "frex") %in% names(co$table)))
  # consensus fits are reproducible: the quality of the first run by hand
  s <- local({ set.seed(1); sample.int(.Machine$integer.max, 4) })
  f <- nmf(sotu_dtm[1:40, 1:60], 2, loss = "kl", init = "random", seed = s[1], max_iter = 500, tol = 1e-5)
  f2b <- nmf(sotu_dtm[1:40, 1:60], 2, loss = "kl", init = "random", seed = s[2], max_iter = 500, tol = 1e-5)
  qq <- (aspectr:::quality_means(topic_quality(f, sotu_dtm[1:40, 1:60])) +
           aspectr:::quality_means(topic_quality(f2b, sotu_dtm[1:40, 1:60]))) / 2
  expect_equal(co$table$umass[1], qq[["umass"]], tolerance = 1e-10)
  expect_equal(co$table$exclusivity[1], qq[["exclusivity"]], tolerance = 1e-10)
  expect_error(plsa_rank(sotu_dtm[1:80, 1:500], k = 2, n_top = 1), class = "aspectr_error_input")
})

test_that("topic_quality() refuses what it cannot score", {
  fit <- plsa(tq_x, 2, seed = 3, max_iter = 50)
  expect_error(topic_quality(fit), class = "aspectr_error_input")
  expect_error(topic_quality(fit, tq_x, reference = tq_x), class = "aspectr_error_input")
  expect_error(topic_quality(fit, tq_x, n = 1), class = "aspectr_error_input", regexp = "n")
  # n beyond the number of terms uses them all, as terms() does
  expect_equal(topic_quality(fit, tq_x, n = 7), topic_quality(fit, tq_x, n = 6))
  expect_error(topic_quality(fit, tq_x, epsilon = 0), class = "aspectr_error_input")
  expect_error(topic_quality(fit, tq_x, frex_weight = 2), class = "aspectr_error_input")
  expect_error(topic_quality(fit, tq_x[1:3, ]), class = "aspectr_error_input")
  expect_error(topic_quality(list(), tq_x), class = "aspectr_error_input")
  expect_error(topic_quality(fit, tq_x, foo = 1), class = "aspectr_error_input")
  y <- array(rpois(60, 2), c(3, 4, 5))
  expect_error(topic_quality(plsa(y, 2, seed = 1, max_iter = 20), y), class = "aspectr_error_unsupported")
})

# stm is not a declared dependency (it cannot be installed from the
# distribution's packages): used here only where a developer has it, looked
# up by name
peer_fun <- function(pkg, name) get(name, envir = asNamespace(pkg))

test_that("topic_quality() agrees with stm's exclusivity and semantic coherence", {
  skip_if_not_installed("stm")
  skip_if_not_installed("slam")
  # (terms that occur: stm's term probabilities are never 0)
  X <- as.matrix(sotu_dtm[1:80, ])
  X <- X[, colSums(X) > 0][, 1:400]
  fit <- plsa(X, 3, seed = 1, max_iter = 200)
  # (smoothed, as stm's are: EM may drive some to 0)
  beta <- fit$factors$terms + 1e-5
  fit$factors$terms <- beta <- sweep(beta, 2, colSums(beta), "/")
  model <- list(beta = list(logbeta = list(t(log(beta)))))
  q <- topic_quality(fit, X, n = 10, epsilon = 0.01)
  expect_equal(q$frex, peer_fun("stm", "exclusivity")(model, M = 10, frexw = 0.7), tolerance = 1e-12)
  # stm sums over pairs log((D(m, l) + 0.01) / (D(l) + 0.01)) (with pairs
  # ordered by first appearance across topics, the rank order for topic 1);
  # the sum of ours is log((D(m, l) + 0.01) / D(l)): their difference is
  # sum over pairs of log((D(l) + 0.01) / D(l))
  stm_coh <- peer_fun("stm", "semCoh1beta")(slam::as.simple_triplet_matrix(X), 10, beta = t(log(beta)))
  v <- order(beta[, 1], decreasing = TRUE)[1:10]
  Dl <- colSums(X[, v] > 0)
  corr <- sum(vapply(2:10, function(m) sum(log((Dl[1:(m - 1)] + 0.01) / Dl[1:(m - 1)])), 0))
  expect_equal(stm_coh[1], q$umass[1] * 45 - corr, tolerance = 1e-10)
})

# ---- relevance (Sievert and Shirley 2014) ----------------------------------

ref_relevance <- function(beta, weights, lambda) {
  pw <- drop(beta %*% weights)
  lambda * log(beta) + (1 - lambda) * log(beta / pw)
}

test_that("terms(lambda = 1) keeps the order of P(w | z), ties included", {
  fit <- plsa(sotu_dtm[1:80, ], 4, seed = 1, max_iter = 100)
  expect_identical(terms(fit, 12, lambda = 1), terms(fit, 12))
  v <- fit$factors$terms
  expect_identical(unname(terms(fit, 12, lambda = 1)),
                   unname(apply(v, 2, function(p) rownames(v)[order(p, decreasing = TRUE)[1:12]])))
  # ties: equal probabilities keep the data's order under every lambda = 1 path
  ft <- plsa(tq_x, 2, seed = 3, max_iter = 50)
  ft$factors$terms[, 1] <- c(0.2, 0.2, 0.2, 0.2, 0.1, 0.1)
  expect_identical(unname(terms(ft, 6, lambda = 1)[, 1]), c("a", "b", "c", "d", "e", "f"))
  expect_identical(tidy(ft, lambda = 1, n = 6)$term[1:6], c("a", "b", "c", "d", "e", "f"))
})

test_that("terms() and tidy() rank by LDAvis's relevance", {
  x <- sotu_dtm[1:80, ]
  x <- x[, Matrix::colSums(x) > 0]
  fit <- plsa(x, 4, seed = 1, max_iter = 2000, tol = 1e-12)
  v <- fit$factors$terms
  # the model's term marginal is the data's term share at the EM fixed point
  expect_equal(drop(v %*% fit$lambda), Matrix::colSums(x) / sum(x), tolerance = 1e-6,
               ignore_attr = TRUE)
  for (lam in c(0, 0.6)) {
    r <- ref_relevance(v, fit$lambda, lam)
    r[v == 0] <- -Inf
    want <- unname(apply(r, 2, function(s) rownames(v)[order(s, decreasing = TRUE)[1:10]]))
    expect_identical(unname(terms(fit, 10, lambda = lam)), want)
    td <- tidy(fit, lambda = lam)
    expect_named(td, c("topic", "term", "beta", "relevance"))
    expect_equal(nrow(td), length(v))
    expect_equal(td$relevance, r[cbind(match(td$term, rownames(v)), td$topic)])
    expect_equal(td$beta, v[cbind(match(td$term, rownames(v)), td$topic)])
    expect_true(all(tapply(td$relevance, td$topic, function(s) !is.unsorted(rev(s)))))
    tn <- tidy(fit, lambda = lam, n = 10)
    expect_equal(nrow(tn), 40)
    expect_identical(tn$term, as.vector(want))
  }
  # lambda = 0.6 brings up terms specific to the topic: their lift is higher
  lift <- function(terms, z) mean(log(v[terms, z] / drop(v %*% fit$lambda)[terms]))
  t1 <- terms(fit, 10)[, 1]; t6 <- terms(fit, 10, lambda = 0.6)[, 1]
  expect_gte(lift(t6, 1), lift(t1, 1))
  # top n by probability without lambda
  tb <- tidy(fit, n = 3)
  expect_named(tb, c("topic", "term", "beta"))
  expect_identical(tb$term, as.vector(terms(fit, 3)))
  expect_error(terms(fit, 5, lambda = 1.5), class = "aspectr_error_input", regexp = "lambda")
  expect_error(tidy(fit, lambda = -1), class = "aspectr_error_input", regexp = "lambda")
  expect_error(tidy(fit, "gamma", lambda = 0.5), class = "aspectr_error_input", regexp = "lambda")
  expect_error(tidy(fit, n = 0), class = "aspectr_error_input", regexp = "n")
})

test_that("NMF terms() by relevance are those of its pLSA form", {
  fk <- nmf(sotu_dtm[1:80, ], 3, loss = "kl", seed = 1, max_iter = 300)
  p <- as_plsa(fk)
  a <- terms(fk, 8, lambda = 0.5)
  b <- terms(p, 8, lambda = 0.5)
  # as_plsa() orders the topics by weight
  o <- order(colSums(fk$W) * rowSums(fk$H), decreasing = TRUE)
  expect_identical(unname(a[, o]), unname(b))
  expect_identical(terms(fk, 8, lambda = 1), terms(fk, 8))
  tb <- tidy(fk, lambda = 0.5, n = 8)
  expect_identical(tb$term, as.vector(a))
})

test_that("plsa_rank() takes repeated column names, and refuses data that are not counts before fitting", {
  d <- as.matrix(sotu_dtm[1:40, 1:200])
  colnames(d)[2] <- colnames(d)[1]
  r <- plsa_rank(d, k = 2:3, seed = 1, max_iter = 50, tol = 1e-4)
  expect_true(all(is.finite(r$table$perplexity)))
  # the same held-out documents and fits as with unique names
  d2 <- d
  colnames(d2)[2] <- "another"
  expect_equal(r$table$perplexity, plsa_rank(d2, k = 2:3, seed = 1, max_iter = 50, tol = 1e-4)$table$perplexity,
               tolerance = 1e-12)
  expect_error(plsa_rank(d / 2, k = 2:3), class = "aspectr_error_input_value", regexp = "not whole numbers")
  expect_error(plsa_rank(d / 2, k = 2:3, split = "cells"), class = "aspectr_error_input_value",
               regexp = "not whole numbers")
  # weighted text data (tm's record of tf-idf), whole numbers or not
  w <- d
  attr(w, "weighting") <- c("term frequency - inverse document frequency", "tf-idf")
  expect_error(plsa_rank(w, k = 2:3), class = "aspectr_error_input_value", regexp = "it is weighted")
  expect_error(plsa_rank(w, k = 2:3, split = "cells"), class = "aspectr_error_input_value", regexp = "it is weighted")
  expect_error(plsa_rank(d[1:2, ], k = 2), class = "aspectr_error_input_argument", regexp = "`x` has 2 documents")
  expect_error(plsa_rank(d, k = 2:3, holdout = 1e-9), class = "aspectr_error_input", regexp = "holdout")
})
