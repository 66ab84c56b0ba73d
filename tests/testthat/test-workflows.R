# Text-mining workflows: long data, tm matrices, weighted input, perplexity.

long <- data.frame(doc = c("a", "a", "b", "b", "b", "c"),
                   word = c("tax", "war", "tax", "budget", "tax", "war"),
                   n = c(2, 1, 1, 3, 1, 4), stringsAsFactors = FALSE)

test_that("as_dtm() casts long data to a documents x terms dgCMatrix", {
  m <- as_dtm(long, doc, word, n)
  expect_s4_class(m, "dgCMatrix")
  expect_equal(dimnames(m), list(c("a", "b", "c"), c("tax", "war", "budget")))
  ref <- matrix(c(2, 2, 0, 1, 0, 4, 0, 3, 0), 3, dimnames = dimnames(m))
  expect_equal(as.matrix(m), ref)
  # strings work as bare names; without value every row counts once
  expect_equal(as_dtm(long, "doc", "word", "n"), m)
  ones <- as_dtm(long, doc, word)
  expect_equal(as.matrix(ones)["b", "tax"], 2)
  expect_equal(sum(ones), nrow(long))
  # factor columns keep their level order, unused levels dropped
  f <- long
  f$doc <- factor(f$doc, levels = c("z", "c", "b", "a"))
  expect_equal(rownames(as_dtm(f, doc, word, n)), c("c", "b", "a"))
  # the result fits like any matrix
  fit <- plsa(m, 1)
  expect_equal(fit$dimnames[[2]], colnames(m))
})

test_that("as_dtm() errors name the argument", {
  expect_error(as_dtm(long, doc, wrd, n), class = "aspectr_error_input_argument")
  expect_error(as_dtm(long, doc, word, wrd), "wrd")
  expect_error(as_dtm(as.matrix(long), doc, word), class = "aspectr_error_input_type")
  bad <- long
  bad$n[1] <- -1
  expect_error(as_dtm(bad, doc, word, n), class = "aspectr_error_input_value")
  bad$n <- as.character(long$n)
  expect_error(as_dtm(bad, doc, word, n), class = "aspectr_error_input_type")
  bad <- long
  bad$doc[2] <- NA
  expect_error(as_dtm(bad, doc, word, n), class = "aspectr_error_input_value")
})

test_that("fitters given long data point to as_dtm()", {
  expect_error(plsa(long, 2), "as_dtm\\(data, doc, word, n\\)", class = "aspectr_error_input_type")
  expect_error(nmf(long, 2), "as_dtm", class = "aspectr_error_input_type")
  num <- data.frame(a = 1:3, b = 3:1)
  expect_error(plsa(num, 1), "as.matrix", class = "aspectr_error_input_type")
})

test_that("as_sptensor() takes a value column and refuses a count column as a mode", {
  ucb <- as.data.frame(UCBAdmissions)
  expect_error(as_sptensor(ucb), "Freq", class = "aspectr_error_input_argument")
  s <- as_sptensor(ucb, value = Freq)
  expect_equal(s$dims, dim(UCBAdmissions))
  expect_equal(as.array(s), unclass(UCBAdmissions), ignore_attr = TRUE)
  expect_equal(as_sptensor(ucb, value = "Freq"), s)
  # repeated combinations are summed
  two <- rbind(ucb, ucb)
  expect_equal(sum(as_sptensor(two, value = Freq)$values), 2 * sum(UCBAdmissions))
  # a count-like name that is a factor is a mode
  f <- data.frame(a = c("x", "y"), n = factor(c(1, 2)))
  expect_equal(as_sptensor(f)$dims, c(2L, 2L))
  expect_error(as_sptensor(ucb, value = Admit), class = "aspectr_error_input_type")
})

test_that("a tm TermDocumentMatrix is fitted as documents x terms, with a message", {
  tdm <- structure(list(i = c(1L, 2L, 3L, 3L, 4L), j = c(1L, 1L, 1L, 2L, 2L), v = c(1, 2, 1, 1, 2),
                        nrow = 4L, ncol = 2L,
                        dimnames = list(Terms = c("a", "b", "c", "d"), Docs = c("1", "2"))),
                   class = c("TermDocumentMatrix", "simple_triplet_matrix"),
                   weighting = c("term frequency", "tf"))
  expect_message(fit <- plsa(tdm, 1), class = "aspectr_message_transposed")
  expect_equal(fit$dims, c(2L, 4L))
  expect_equal(fit$dimnames[[2]], c("a", "b", "c", "d"))
  dense <- matrix(0, 2, 4)
  dense[cbind(tdm$j, tdm$i)] <- tdm$v
  expect_equal(suppressMessages(as_aspect_data(tdm))$val, as_aspect_data(dense)$val)
  expect_equal(suppressMessages(as_aspect_data(tdm))$idx, as_aspect_data(dense)$idx)
})

test_that("weighted or fractional data under a likelihood loss warn, and logLik refuses", {
  x <- matrix(c(4, 1, 0, 2, 3, 1, 0, 5, 2), 3)
  w <- structure(list(i = c(1L, 2L), j = c(1L, 2L), v = c(0.5, 0.25), nrow = 2L, ncol = 2L,
                      dimnames = NULL),
                 class = c("DocumentTermMatrix", "simple_triplet_matrix"),
                 weighting = c("term frequency - inverse document frequency", "tf-idf"))
  expect_warning(fw <- plsa(w, 1), "tf-idf|inverse document", class = "aspectr_warning_noncount")
  expect_error(logLik(fw), class = "aspectr_error_unsupported")
  expect_true(is.na(glance(fw)$logLik))
  expect_true(is.na(summary(fw)$logLik))
  expect_warning(f <- plsa(x / 3, 2, seed = 1), class = "aspectr_warning_noncount")
  expect_error(AIC(f), class = "aspectr_error_unsupported")
  expect_warning(f <- nmf(x / 3, 2, loss = "kl", seed = 1, max_iter = 20), class = "aspectr_warning_noncount")
  expect_error(logLik(f), class = "aspectr_error_unsupported")
  y <- array(c(1.5, 2, 3, 1, 0, 2, 1, 4), c(2, 2, 2))
  expect_warning(f <- suppressMessages(ntf(y, 1, loss = "kl", seed = 1, max_iter = 20)),
                 class = "aspectr_warning_noncount")
  expect_error(logLik(f), class = "aspectr_error_unsupported")
  # counts and non-likelihood losses stay silent and keep their likelihood
  expect_no_warning(f <- plsa(x, 2, seed = 1))
  expect_true(is.finite(as.numeric(logLik(f))))
  expect_no_warning(suppressMessages(plsa(x / 3, 2, loss = "l2", seed = 1)))
  expect_no_warning(nmf(x / 3, 2, seed = 1, max_iter = 20))
})

test_that("perplexity() matches a plain-R fold-in and scoring", {
  set.seed(3)
  x <- matrix(rpois(8 * 12, 3), 8, dimnames = list(NULL, paste0("w", 1:12)))
  fit <- plsa(x[1:6, ], 2, seed = 1, max_iter = 2000, tol = 1e-12)
  new <- x[7:8, ]
  phi <- fit$factors[[2]]  # P(w | z)
  # plain-R EM fold-in of each held-out document
  theta <- t(apply(new, 1, function(n) {
    t <- fit$lambda / sum(fit$lambda)
    for (i in 1:5000) {
      p <- drop(phi %*% t)
      t <- t * drop(crossprod(phi, n / p)) / sum(n)
    }
    t
  }))
  p <- theta %*% t(phi)
  ref <- exp(-sum(new * log(p)) / sum(new))
  got <- perplexity(fit, new)
  expect_equal(as.numeric(got), ref, tolerance = 1e-6)
  expect_equal(attr(got, "tokens"), sum(new))
  # training perplexity: fold-in of the training data recovers the fit
  expect_equal(as.numeric(perplexity(fit, x[1:6, ])), perplexity(fit), tolerance = 1e-6)
  # a uniform model scores the vocabulary size; the fit does better
  expect_lt(as.numeric(got), ncol(x))
  # unknown terms are left out and counted
  extra <- cbind(new, zz = c(5, 0))
  g2 <- perplexity(fit, extra)
  expect_equal(as.numeric(g2), as.numeric(got), tolerance = 1e-10)
  expect_equal(attr(g2, "dropped"), 5)
})

test_that("perplexity() for N-way fits and KL NMF; errors", {
  set.seed(4)
  y <- array(rpois(5 * 4 * 3, 4), c(5, 4, 3))
  fit <- plsa(y, 2, seed = 1, max_iter = 3000, tol = 1e-13)
  # with the fitted P(z | first index), fold-in of the training data is a fixed point
  th <- topics(fit)
  B <- function(j, l) fit$factors[[2]][j, ] * fit$factors[[3]][l, ]
  ll <- 0
  for (i in 1:5) for (j in 1:4) for (l in 1:3) ll <- ll + y[i, j, l] * log(sum(th[i, ] * B(j, l)))
  expect_equal(as.numeric(perplexity(fit, y)), exp(-ll / sum(y)), tolerance = 1e-6)
  expect_error(perplexity(fit, y[, 1:3, ]), class = "aspectr_error_input_newdata")
  x <- matrix(rpois(60, 3), 6)
  nf <- nmf(x, 2, loss = "kl", seed = 1, max_iter = 500, tol = 1e-10)
  expect_equal(as.numeric(perplexity(nf, x)), as.numeric(perplexity(as_plsa(nf), x)))
  expect_error(perplexity(nmf(x, 2, seed = 1, max_iter = 10), x), class = "aspectr_error_unsupported")
  expect_error(perplexity(lm(1 ~ 1), x), class = "aspectr_error_input_type")
  l2 <- suppressMessages(plsa(x, 2, loss = "l2", normalize = FALSE, seed = 1, max_iter = 20))
  expect_error(perplexity(l2, x), class = "aspectr_error_unsupported")
})

test_that("the N-way fold-in (in the core) equals a plain-R EM, and keeps slices without counts at the prior", {
  ref_foldin <- function(B, doc, val, n_docs, prior, max_iter, tol) {
    theta <- matrix(prior, n_docs, length(prior), byrow = TRUE)
    n_d <- tabulate_weighted_ref(doc, val, n_docs)
    for (it in seq_len(max_iter)) {
      p <- pmax(rowSums(B * theta[doc, , drop = FALSE]), .Machine$double.xmin)
      S <- matrix(0, n_docs, ncol(B))
      for (s in seq_along(doc)) S[doc[s], ] <- S[doc[s], ] + B[s, ] * val[s] / p[s]
      new <- theta * S / ifelse(n_d > 0, n_d, 1)
      new[n_d == 0, ] <- theta[n_d == 0, ]
      change <- max(abs(new - theta))
      theta <- new
      if (change <= tol) break
    }
    theta
  }
  tabulate_weighted_ref <- function(i, w, n) vapply(seq_len(n), function(j) sum(w[i == j]), numeric(1))
  for (case in 1:5) {
    set.seed(40 + case)
    k <- sample(1:4, 1); n_docs <- sample(2:6, 1); n <- sample(5:30, 1)
    B <- matrix(stats::rexp(n * k), n, k)
    doc <- sample(seq_len(n_docs - 1), n, replace = TRUE)  # the last slice has no cells
    val <- stats::rpois(n, 3) + 1
    prior <- stats::rexp(k); prior <- prior / sum(prior)
    iters <- c(1L, 5L, 200L)[case %% 3 + 1]
    got <- aspectr:::cpp_foldin_cells(B, doc, as.double(val), n_docs, prior, iters, 1e-12)
    expect_equal(got, ref_foldin(B, doc, val, n_docs, prior, iters, 1e-12), tolerance = 1e-12, info = paste("case", case))
    expect_equal(got[n_docs, ], prior)
    expect_equal(rowSums(got), rep(1, n_docs), tolerance = 1e-12)
  }
})

test_that("default_threads() respects the option, then OMP_THREAD_LIMIT and OMP_NUM_THREADS", {
  old_env <- Sys.getenv(c("OMP_THREAD_LIMIT", "OMP_NUM_THREADS", "_R_CHECK_LIMIT_CORES_"), unset = NA)
  old_opt <- options(aspectr.threads = NULL)
  on.exit({
    options(old_opt)
    for (v in names(old_env)) if (is.na(old_env[[v]])) Sys.unsetenv(v) else do.call(Sys.setenv, as.list(old_env[v]))
  })
  Sys.unsetenv(c("OMP_THREAD_LIMIT", "OMP_NUM_THREADS"))
  Sys.setenv("_R_CHECK_LIMIT_CORES_" = "TRUE")
  expect_equal(default_threads(), 2L)
  Sys.setenv(OMP_THREAD_LIMIT = "1")
  expect_equal(default_threads(), 1L)
  Sys.unsetenv("OMP_THREAD_LIMIT")
  Sys.setenv(OMP_NUM_THREADS = "1,2")
  expect_equal(default_threads(), 1L)
  Sys.setenv(OMP_NUM_THREADS = "junk")
  expect_equal(default_threads(), 2L)
  options(aspectr.threads = 3)
  Sys.setenv(OMP_THREAD_LIMIT = "1")
  expect_equal(default_threads(), 3L)
  # without the check limit: the cores detected once per session
  options(aspectr.threads = NULL)
  Sys.unsetenv(c("OMP_THREAD_LIMIT", "OMP_NUM_THREADS", "_R_CHECK_LIMIT_CORES_"))
  expect_identical(default_threads(), as.integer(parallel::detectCores()))
  cache <- aspectr:::the_cores
  n0 <- cache$n
  on.exit(cache$n <- n0, add = TRUE)
  cache$n <- 5L  # a cached count is used as it is, without asking again
  expect_identical(default_threads(), 5L)
})

test_that("nmf_rank plots mark the suggested rank on the plotted curve", {
  set.seed(1)
  W <- matrix(runif(40 * 2), 40)
  H <- matrix(runif(2 * 30), 2)
  X <- W %*% H + matrix(runif(1200, 0, 0.02), 40)
  for (m in c("cv", "consensus")) {
    r <- suppressMessages(nmf_rank(X, k = 2:4, method = m, nrun = 3, seed = 1))
    f <- tempfile(fileext = ".png")
    grDevices::png(f)
    expect_identical(plot(r), r)
    grDevices::dev.off()
    expect_gt(file.size(f), 1000)
  }
})

test_that("plsa_rank() recovers a planted number of topics by document completion", {
  set.seed(3)
  k0 <- 4
  V <- matrix(0, 150, k0)
  for (j in 1:k0) V[sample(150, 30), j] <- runif(30)
  V <- sweep(V, 2, colSums(V), "/")
  Th <- matrix(rgamma(200 * k0, 0.3), 200)
  Th <- Th / rowSums(Th)
  X <- t(sapply(1:200, function(i) rmultinom(1, 150, V %*% Th[i, ])))
  r <- suppressMessages(plsa_rank(X, k = 2:6, nrun = 2, seed = 1, tol = 1e-7))
  expect_s3_class(r, "aspectr_rank")
  expect_equal(r$best, k0)
  expect_equal(r$table$k, 2:6)
  expect_equal(which.min(r$table$BIC) + 1L, k0)
  expect_length(r$heldout, 40)
  # same seed, same result
  r2 <- suppressMessages(plsa_rank(X, k = 2:6, nrun = 2, seed = 1, tol = 1e-7))
  expect_identical(r2$table, r$table)
  expect_equal(suppressMessages(plsa_rank(X, k = 2:6, nrun = 2, seed = 1, tol = 1e-7, criterion = "BIC"))$best, k0)
  expect_output(print(r), "suggested k: 4")
  f <- tempfile(fileext = ".png")
  grDevices::png(f)
  expect_identical(plot(r), r)
  grDevices::dev.off()
  # document completion: the fold-in half and the scored half are disjoint
  # halves of the held-out counts
  h <- with_seed(1, thin_half(Matrix::Matrix(X[1:5, ], sparse = TRUE)))
  expect_equal(as.matrix(h$foldin + h$score), X[1:5, ], ignore_attr = TRUE)
  expect_error(plsa_rank(X[1:2, ], k = 2), class = "aspectr_error_input_argument")
  expect_error(plsa_rank(X, k = 0), class = "aspectr_error_input_argument")
  expect_error(suppressMessages(plsa_rank(X, k = 2, loss = "l2")), class = "aspectr_error_input_argument")
})

test_that("plsa_rank() says once how many of its fits did not converge", {
  set.seed(8)
  X <- matrix(rpois(40 * 25, 2), 40)
  for (split in c("documents", "cells")) {
    got <- collect_messages(plsa_rank(X, k = 2:4, nrun = 2, seed = 1, max_iter = 3, split = split))
    r <- got$value
    msgs <- got$messages
    expect_length(msgs, 1)
    expect_s3_class(msgs[[1]], "aspectr_message_not_converged")
    expect_match(conditionMessage(msgs[[1]]), "3 of the 3 fits of plsa_rank\\(\\) did not converge in 3 iterations")
    expect_match(conditionMessage(msgs[[1]]), "table$converged", fixed = TRUE)
    expect_identical(r$table$converged, rep(FALSE, 3))
  }
  # fits that converge: no message
  expect_no_message(r <- plsa_rank(X, k = 2:3, seed = 1, max_iter = 5000, tol = 1e-4),
                    class = "aspectr_message_not_converged")
  expect_true(all(r$table$converged))
})

test_that("perplexity(foldin =) estimates proportions from other counts of the same documents", {
  set.seed(8)
  x <- matrix(rpois(10 * 12, 3), 10, dimnames = list(NULL, paste0("w", 1:12)))
  fit <- plsa(x[1:7, ], 2, seed = 1, max_iter = 2000, tol = 1e-12)
  a <- x[8:10, ]
  b <- matrix(rpois(36, 3), 3, dimnames = dimnames(a))
  theta <- predict(fit, a, loss = "kl", tol = 1e-12)
  p <- theta %*% t(fit$factors[[2]])
  expect_equal(as.numeric(perplexity(fit, b, foldin = a)), exp(-sum(b * log(p)) / sum(b)), tolerance = 1e-6)
  expect_error(perplexity(fit, b, foldin = a[1:2, ]), class = "aspectr_error_input_newdata")
})

test_that("lca_rank() tabulates fit statistics and picks the planted classes by BIC", {
  set.seed(11)
  n <- 600
  cls <- sample(1:3, n, TRUE, prob = c(0.5, 0.3, 0.2))
  p <- list(c(0.9, 0.1, 0.2), c(0.8, 0.2, 0.9), c(0.1, 0.9, 0.8), c(0.2, 0.85, 0.1), c(0.9, 0.9, 0.1))
  dat <- as.data.frame(lapply(p, function(pp) factor(rbinom(n, 1, pp[cls]))))
  r <- lca_rank(dat, k = 1:5, nrun = 5, seed = 1)
  expect_s3_class(r, "aspectr_lca_rank")
  expect_equal(r$best, 3)
  expect_equal(r$table$npar, (r$table$k - 1) + r$table$k * 5)
  expect_equal(r$table$resid_df, 2^5 - r$table$npar - 1)
  expect_equal(r$table$BIC, vapply(r$fits, function(f) f$BIC, 0))
  expect_equal(lca_rank(dat, k = 1:5, nrun = 5, seed = 1, criterion = "AIC")$best, which.min(r$table$AIC))
  expect_output(print(r), "by BIC; suggested k: 3")
  f <- tempfile(fileext = ".png")
  grDevices::png(f)
  expect_identical(plot(r), r)
  grDevices::dev.off()
  expect_error(lca_rank(dat, k = "a"), class = "aspectr_error_input_argument")
})

test_that("factor heatmaps keep the top items of every component; profile plots draw", {
  f <- suppressMessages(nmf(sotu_dtm, 3, seed = 1, max_iter = 30))
  drawn <- function(expr) {
    p <- tempfile(fileext = ".png")
    grDevices::png(p)
    on.exit(grDevices::dev.off())
    force(expr)
    TRUE
  }
  expect_true(drawn(plot(f, "H", n = 12)))
  expect_true(drawn(plot(f, "W")))
  # the 12 rows kept: the top 4 of each component
  H <- t(f$H)
  s <- sweep(H, 2, apply(H, 2, max), "/")
  ranks <- apply(s, 2, order, decreasing = TRUE)
  keep <- unique(as.vector(t(ranks)))[1:12]
  for (j in 1:3) expect_true(all(ranks[1:3, j] %in% keep))
  nt <- suppressMessages(ntf(as_sptensor(UCBAdmissions), 2, seed = 1))
  expect_true(drawn(plot(nt)))
  lc <- lca(data.frame(lapply(iris[1:4], cut, 3)), 2, seed = 1)
  expect_true(drawn(plot(lc)))
  same <- data.frame(a = factor(c("y", "n", "y", "y")), b = factor(c("n", "n", "y", "y")))
  expect_true(drawn(plot(lca(same[rep(1:4, 5), ], 1))))
})

test_that("a weighted quanteda-like dfm is recognized as not counts", {
  # quanteda's dfm is a dgCMatrix subclass recording its weighting in the
  # `meta` slot; a class of the same shape stands in for it here
  if (!methods::isClass("dfm")) {
    methods::setClass("dfm", contains = "dgCMatrix", slots = c(meta = "list"), where = globalenv())
    on.exit(methods::removeClass("dfm", where = globalenv()), add = TRUE)
  }
  m <- Matrix::Matrix(matrix(c(2, 0, 1, 3, 1, 0, 0, 2, 4), 3), sparse = TRUE)
  counts <- methods::new("dfm", m, meta = list(object = list(weight_tf = list(scheme = "count"),
                                                              weight_df = list(scheme = "unary"))))
  tfidf <- methods::new("dfm", m * 0.5, meta = list(object = list(weight_tf = list(scheme = "count"),
                                                                   weight_df = list(scheme = "inverse"))))
  expect_null(text_weighting(counts))
  expect_match(text_weighting(tfidf), "inverse")
  expect_warning(plsa(tfidf, 1), "inverse", class = "aspectr_warning_noncount")
  expect_no_warning(plsa(counts, 1))
})
