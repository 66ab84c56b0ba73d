# as_ldavis_json(): LDAvis's data computed as createJSON() does, with the
# fit's own topic numbers; checked by a plain-R reference and against LDAvis
# where it is installed.

lv_x <- sotu_dtm[1:80, ]
lv_x <- lv_x[, Matrix::colSums(lv_x) > 0][, 1:400]
lv_x <- lv_x[Matrix::rowSums(lv_x) > 0, ]

test_that("as_ldavis_json() holds LDAvis's fields with the fit's topic numbers", {
  skip_if_not_installed("jsonlite")
  fit <- plsa(lv_x, 4, seed = 1, max_iter = 3000, tol = 1e-12)
  js <- as_ldavis_json(fit, R = 15)
  expect_s3_class(js, "json")
  j <- jsonlite::fromJSON(js)
  expect_named(j, c("mdsDat", "tinfo", "token.table", "R", "lambda.step", "plot.opts", "topic.order"))
  expect_identical(j$topic.order, 1:4)
  expect_identical(j$mdsDat$topics, 1:4)
  expect_equal(j$R, 15)
  expect_equal(j$lambda.step, 0.01)
  # topic sizes: sum_d n_d P(z | d), at the EM fixed point N P(z)
  expect_equal(j$mdsDat$Freq, 100 * unname(fit$lambda), tolerance = 1e-6)
  # the map: classical scaling of the Jensen-Shannon divergences, by hand
  phi <- t(fit$factors$terms)
  jsd <- function(p, q) {
    m <- (p + q) / 2
    0.5 * sum(ifelse(p > 0, p * log(p / m), 0)) + 0.5 * sum(ifelse(q > 0, q * log(q / m), 0))
  }
  D <- outer(1:4, 1:4, Vectorize(function(a, b) jsd(phi[a, ], phi[b, ])))
  xy <- cmdscale(as.dist(D), k = 2)
  expect_equal(j$mdsDat$x, unname(xy[, 1]), tolerance = 1e-10)
  expect_equal(j$mdsDat$y, unname(xy[, 2]), tolerance = 1e-10)
  # every topic lists its most relevant terms for each lambda of the grid,
  # with their log-probabilities
  ti <- as.data.frame(j$tinfo)
  expect_equal(sum(ti$Category == "Default"), 15)
  v <- fit$factors$terms
  for (l in c(0, 0.3, 0.6, 1)) {
    top <- terms(fit, 15, lambda = l)
    for (z in 1:4) expect_true(all(top[, z] %in% ti$Term[ti$Category == paste0("Topic", z)]))
  }
  t1 <- ti[ti$Category == "Topic1", ]
  expect_equal(t1$logprob, round(log(v[t1$Term, 1]), 4), ignore_attr = TRUE)
  pw <- drop(v %*% fit$lambda)
  expect_equal(t1$loglift, round(log(v[t1$Term, 1] / pw[t1$Term]), 4), tolerance = 1e-6,
               ignore_attr = TRUE)
  # the term's estimated count in the topic and in all
  N <- sum(lv_x)
  expect_equal(t1$Freq, N * fit$lambda[1] * v[t1$Term, 1], tolerance = 1e-6, ignore_attr = TRUE)
  expect_equal(t1$Total, N * pw[t1$Term], tolerance = 1e-6, ignore_attr = TRUE)
  # a highlighted term's counts in the topics, rounded (those below 0.5
  # left out), as shares of its estimated total
  tk <- as.data.frame(j$token.table)
  cnt <- N * fit$lambda[tk$Topic] * v[cbind(match(tk$Term, rownames(v)), tk$Topic)]
  expect_true(all(cnt >= 0.5 - 1e-6))
  expect_equal(tk$Freq, round(cnt) / (N * pw[tk$Term]), tolerance = 1e-6, ignore_attr = TRUE)
  # written to a file: the same text
  f <- tempfile(fileext = ".json")
  expect_invisible(as_ldavis_json(fit, R = 15, file = f))
  expect_identical(paste(readLines(f, encoding = "UTF-8"), collapse = "\n"), unclass(js)[1])
})

test_that("as_ldavis_json() works for NMF fits and escapes term names", {
  skip_if_not_installed("jsonlite")
  fk <- suppressMessages(nmf(lv_x, 3, loss = "kl", seed = 1, max_iter = 100))
  j <- jsonlite::fromJSON(as_ldavis_json(fk, R = 10))
  expect_identical(j$topic.order, 1:3)
  # sizes: sum_d n_d P(z | d), P(z | d) proportional to W[d, z] sum_w H[z, w]
  G <- sweep(fk$W, 2, rowSums(fk$H), "*")
  s <- colSums(G / rowSums(G) * Matrix::rowSums(lv_x))
  expect_equal(j$mdsDat$Freq, 100 * unname(s / sum(s)), tolerance = 1e-10)
  x <- as.matrix(lv_x[1:30, 1:50])
  x <- x[, colSums(x) > 0]
  colnames(x)[1:3] <- c("say \"hi\"", "back\\slash", "tab\there")
  fit <- plsa(x, 2, seed = 1, max_iter = 100)
  j2 <- jsonlite::fromJSON(as_ldavis_json(fit, R = ncol(x)))
  expect_true(all(colnames(x)[1:3] %in% j2$tinfo$Term))
  # two topics: a one-dimensional map, y is 0
  expect_equal(j2$mdsDat$y, c(0, 0))
  expect_error(as_ldavis_json(fit, R = 0), class = "aspectr_error_input", regexp = "R")
  expect_error(as_ldavis_json(fit, lambda_step = 0), class = "aspectr_error_input", regexp = "lambda_step")
  expect_error(as_ldavis_json(fit, file = 1), class = "aspectr_error_input", regexp = "file")
  expect_error(as_ldavis_json(lm(1 ~ 1)), class = "aspectr_error_input")
})

# LDAvis is not a declared dependency (it cannot be installed from the
# distribution's packages): compared with where a developer has it, looked
# up by name
create_json <- function(...) get("createJSON", envir = asNamespace("LDAvis"))(...)

test_that("as_ldavis_json() equals LDAvis::createJSON(reorder.topics = FALSE)", {
  skip_if_not_installed("LDAvis")
  skip_if_not_installed("jsonlite")
  fit <- plsa(lv_x, 4, seed = 1, max_iter = 200)
  # (createJSON needs every term in use and saliency defined: smoothed phi)
  phi <- t(fit$factors$terms) + 1e-6
  phi <- phi / rowSums(phi)
  fit$factors$terms[] <- t(phi)
  theta <- topics(fit)
  n <- Matrix::rowSums(lv_x)
  # (LDAvis writes 7 significant digits: the tolerances below)
  ref <- jsonlite::fromJSON(create_json(phi = phi, theta = theta, doc.length = n,
                                               vocab = colnames(lv_x),
                                               term.frequency = Matrix::colSums(lv_x), R = 12,
                                               reorder.topics = FALSE))
  ours <- jsonlite::fromJSON(as_ldavis_json(fit, R = 12))
  expect_equal(ours$mdsDat$Freq, ref$mdsDat$Freq, tolerance = 1e-6)
  expect_equal(ours$mdsDat$x, ref$mdsDat$x, tolerance = 1e-6)
  expect_equal(ours$mdsDat$y, ref$mdsDat$y, tolerance = 1e-6)
  expect_identical(ours$topic.order, ref$topic.order)
  key <- function(t) paste(t$Category, t$Term)
  a <- as.data.frame(ours$tinfo); b <- as.data.frame(ref$tinfo)
  expect_setequal(key(a), key(b))
  b <- b[match(key(a), key(b)), ]
  expect_equal(a$logprob[a$Category != "Default"], b$logprob[a$Category != "Default"], tolerance = 1e-6)
  expect_equal(a$loglift[a$Category != "Default"], b$loglift[a$Category != "Default"], tolerance = 1e-6)
  expect_equal(a$Freq, b$Freq, tolerance = 1e-6)
  expect_equal(a$Total, b$Total, tolerance = 1e-6)
  tt_a <- as.data.frame(ours$token.table); tt_b <- as.data.frame(ref$token.table)
  expect_equal(nrow(tt_a), nrow(tt_b))
  expect_identical(tt_a$Term, tt_b$Term)
  expect_equal(tt_a$Freq, tt_b$Freq, tolerance = 1e-6)
})
