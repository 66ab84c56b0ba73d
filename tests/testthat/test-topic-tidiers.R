# One tidy shape for every topic-like fit: tidy() of NMF fits in pLSA's
# columns, and augment() of tidytext's long (document, term, n) tables.

tt_x <- sotu_dtm[1:60, ]
tt_x <- tt_x[, Matrix::colSums(tt_x) > 0][, 1:300]

test_that("tidy() of an NMF gives beta and gamma in pLSA's columns", {
  fk <- suppressMessages(nmf(tt_x, 3, loss = "kl", seed = 1, max_iter = 300))
  b <- tidy(fk)
  expect_named(b, c("topic", "term", "beta"))
  expect_identical(b, tidy(fk, "beta"))
  expect_equal(nrow(b), 3 * ncol(tt_x))
  # beta: the rows of H scaled to sum to 1, topics keep the fit's numbers
  expect_equal(b$beta, as.vector(t(fk$H / rowSums(fk$H))))
  expect_identical(b$term, rep(colnames(tt_x), 3))
  expect_equal(as.vector(tapply(b$beta, b$topic, sum)), rep(1, 3))
  g <- tidy(fk, "gamma")
  expect_named(g, c("document", "topic", "gamma"))
  expect_identical(g$document, rep(rownames(tt_x), 3))
  G <- matrix(g$gamma, ncol = 3)
  # gamma: P(z | d) proportional to W[d, z] sum_w H[z, w]
  ref <- sweep(fk$W, 2, rowSums(fk$H), "*")
  expect_equal(G, unname(ref / rowSums(ref)))
  expect_equal(rowSums(G), rep(1, nrow(tt_x)))
  # the same as the pLSA form of as_plsa() (which orders topics by weight)
  p <- as_plsa(fk)
  o <- order(colSums(fk$W) * rowSums(fk$H), decreasing = TRUE)
  expect_equal(G[, o], unname(topics(p)), tolerance = 1e-10)
  expect_equal(matrix(b$beta, ncol = 3)[, o], unname(p$factors[[2]]), tolerance = 1e-10)
  # and in the columns of a pLSA fit
  fp <- plsa(tt_x, 3, seed = 1, max_iter = 50)
  expect_identical(names(tidy(fp)), names(b))
  expect_identical(names(tidy(fp, "gamma")), names(g))
  # the raw factors as before
  expect_named(tidy(fk, "W"), c("row", "factor", "value"))
  expect_named(tidy(fk, "H"), c("factor", "column", "value"))
  expect_error(tidy(fk, "W", lambda = 0.5), class = "aspectr_error_input", regexp = "lambda")
  expect_error(tidy(fk, "theta"), class = "aspectr_error_input", regexp = "matrix")
  # a Frobenius NMF: the same rescaling
  ff <- nmf(tt_x, 2, seed = 1, max_iter = 100)
  expect_equal(tidy(ff)$beta, as.vector(t(ff$H / rowSums(ff$H))))
})

test_that("a component that is zero throughout keeps its number", {
  fk <- suppressMessages(nmf(tt_x, 3, loss = "kl", seed = 1, max_iter = 50))
  fk$H[2, ] <- 0
  b <- tidy(fk)
  expect_equal(b$beta[b$topic == 2], rep(0, ncol(tt_x)))
  expect_equal(sum(b$beta[b$topic == 1]), 1)
  G <- matrix(tidy(fk, "gamma")$gamma, ncol = 3)
  expect_equal(G[, 2], rep(0, nrow(tt_x)))
  expect_equal(rowSums(G), rep(1, nrow(tt_x)))
  expect_equal(topic_quality(fk, tt_x)$size[2], 0)
})

test_that("augment() takes tidytext's long table and adds .topic per (document, term)", {
  fit <- plsa(tt_x, 3, seed = 1, max_iter = 100)
  m <- as.matrix(tt_x)
  nz <- which(m > 0, arr.ind = TRUE)
  long <- data.frame(document = rownames(m)[nz[, 1]], term = colnames(m)[nz[, 2]], n = m[nz])
  long <- long[sample(nrow(long)), ]   # any row order
  au <- augment(fit, data = long)
  expect_s3_class(au, "tbl_df")
  expect_named(au, c("document", "term", "n", ".topic"))
  expect_identical(au$document, long$document)
  expect_identical(au$n, long$n)
  # the most probable topic of the token given its document, by hand
  i <- match(long$document, rownames(m)); j <- match(long$term, colnames(m))
  post <- sweep(fit$factors[[1]][i, ] * fit$factors[[2]][j, ], 2, fit$lambda, "*")
  expect_identical(au$.topic, max.col(post, ties.method = "first"))
  # the same topics as the matrix form's augment
  am <- augment(fit, data = tt_x)
  key <- paste(am$document, am$term)
  expect_identical(au$.topic, am$.topic[match(paste(long$document, long$term), key)])
  # from as_dtm() and back: a tidytext workflow
  fit2 <- plsa(as_dtm(long, document, term, n), 3, seed = 1, max_iter = 20)
  expect_false(anyNA(augment(fit2, data = long)$.topic))
  # unknown documents or terms: NA; pairs outside the data are answered
  extra <- data.frame(document = c(rownames(m)[1], "nowhere", rownames(m)[2]),
                      term = c("zzz", colnames(m)[1], colnames(m)[3]), n = 1)
  ae <- augment(fit, data = extra)
  expect_identical(is.na(ae$.topic), c(TRUE, TRUE, FALSE))
  expect_identical(ae$.topic[3], unname(which.max(fit$lambda * fit$factors[[1]][2, ] * fit$factors[[2]][3, ])))
  # tidytext's `word` (unnest_tokens() and count()) for `term`
  wd <- long; names(wd)[2] <- "word"
  aw <- augment(fit, data = wd)
  expect_identical(aw$.topic, augment(fit, data = long)$.topic)
  expect_identical(names(aw), c(names(wd), ".topic"))
  # columns named otherwise: a classed error naming them
  bad <- long; names(bad)[2] <- "token"
  expect_error(augment(fit, data = bad), class = "aspectr_error_input", regexp = "term")
})

test_that("augment() of an NMF takes the long table too", {
  fk <- suppressMessages(nmf(tt_x, 3, loss = "kl", seed = 1, max_iter = 100))
  m <- as.matrix(tt_x)
  nz <- which(m > 0, arr.ind = TRUE)
  long <- data.frame(document = rownames(m)[nz[, 1]], term = colnames(m)[nz[, 2]], n = m[nz])
  au <- augment(fk, data = long)
  expect_named(au, c("document", "term", "n", ".topic"))
  ref <- max.col(fk$W[nz[, 1], ] * t(fk$H)[nz[, 2], ], ties.method = "first")
  expect_identical(au$.topic, ref)
  # and the matrix still
  expect_named(augment(fk, data = tt_x), c("row", "column", "value", ".fitted", ".component"))
})

test_that("augment() has tidytext's layout for topicmodels' LDA", {
  skip_if_not_installed("tidytext")
  skip_if_not_installed("topicmodels")
  skip_if_not_installed("slam")
  dtm <- slam::as.simple_triplet_matrix(as.matrix(tt_x[1:30, 1:120]))
  dtm <- dtm[, slam::col_sums(dtm) > 0]
  dtm <- dtm[slam::row_sums(dtm) > 0, ]
  class(dtm) <- c("DocumentTermMatrix", "simple_triplet_matrix")
  attr(dtm, "weighting") <- c("term frequency", "tf")
  lda <- topicmodels::LDA(dtm, k = 2, control = list(seed = 1))
  long <- tidytext::tidy(dtm)
  ref <- generics::augment(lda, data = long)
  fit <- plsa(dtm, 2, seed = 1, max_iter = 100)
  au <- augment(fit, data = long)
  # the same columns, rows and keys; the topics are each model's own
  expect_identical(names(au), names(ref))
  expect_identical(au$document, ref$document)
  expect_identical(au$term, ref$term)
  expect_identical(au$count, ref$count)
  expect_true(all(au$.topic %in% 1:2) && all(ref$.topic %in% 1:2))
  # tidytext's tidy() of the fits has the same columns
  expect_identical(names(tidy(fit)), names(tidytext::tidy(lda, matrix = "beta")))
  expect_identical(names(tidy(fit, "gamma")), names(tidytext::tidy(lda, matrix = "gamma")))
})

test_that("tidy() and augment() give unnamed documents and terms the same integer ids", {
  set.seed(21)
  X <- matrix(rpois(12 * 7, 2), 12, 7)
  fit <- suppressMessages(plsa(X, k = 2, seed = 1))
  g <- tidy(fit, matrix = "gamma")
  b <- tidy(fit)
  a <- augment(fit, data = X)
  expect_identical(g$document, rep(1:12, times = 2))
  expect_identical(b$term, rep(1:7, times = 2))
  expect_type(a$document, "integer")
  expect_type(a$term, "integer")
  # joins on the ids: every cell finds its document's proportions and its term's probabilities
  j <- merge(a, g[g$topic == 1, ], by = "document")
  expect_identical(nrow(j), nrow(a))
  expect_equal(j$gamma, unname(topics(fit)[j$document, 1]))
  j2 <- merge(a, b[b$topic == 2, ], by = "term")
  expect_equal(j2$beta, unname(fit$factors[[2]][j2$term, 2]))
  # the cells of a fit with missing values, too
  Xn <- X
  Xn[2, 3] <- NA
  fw <- suppressMessages(plsa(Xn, k = 2, seed = 1))
  aw <- augment(fw)
  expect_identical(aw$document, 2L)
  expect_identical(aw$term, 3L)
  expect_identical(tidy(fw, matrix = "gamma")$document, rep(1:12, times = 2))
  # an NMF: its pLSA form and raw factors
  nf <- suppressMessages(nmf(X, 2, seed = 1))
  expect_identical(tidy(nf, matrix = "gamma")$document, rep(1:12, times = 2))
  expect_identical(tidy(nf)$term, rep(1:7, times = 2))
  expect_identical(tidy(nf, matrix = "W")$row, rep(1:12, times = 2))
  expect_identical(tidy(nf, matrix = "H")$column, rep(1:7, each = 2))
  expect_type(augment(nf, X)$row, "integer")
  # named data keep their names
  dimnames(X) <- list(paste0("d", 1:12), paste0("w", 1:7))
  fn <- suppressMessages(plsa(X, k = 2, seed = 1))
  expect_identical(tidy(fn, matrix = "gamma")$document, rep(rownames(X), times = 2))
  expect_identical(tidy(fn)$term, rep(colnames(X), times = 2))
})
