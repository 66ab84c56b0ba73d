test_that("q-EM matches the literal formulas of Hazan, Haroon and Shashua from the same start", {
  x <- tiny_counts(8)
  for (q in c(0.3, 0.8)) {
    fit <- plsa(x, 3, loss = "tsallis", q = q, method = "em", seed = 2, max_iter = 15, tol = 0, threads = 1)
    ref <- ref_qem(x, ref_start(x, 3, 2), 15, q = q)
    expect_equal(unname(fitted(fit, type = "probability")),
                 ref_model(ref$lambda, ref$U, ref$V), tolerance = 1e-9, ignore_attr = TRUE)
    G <- x / sum(x)
    expect_equal(fit$value, tsallis_div(G, ref_model(ref$lambda, ref$U, ref$V), q),
                 tolerance = 1e-9)
  }
})

test_that("q-EM and its SQUAREM never increase D_q and keep the constraints", {
  x <- tiny_counts(9, 40, 30, 4)
  for (q in c(0.05, 0.5, 0.95)) for (method in c("em", "squarem")) {
    fit <- plsa(x, 4, loss = "tsallis", q = q, method = method, seed = 1, max_iter = 200, tol = 0)
    expect_identical(fit$method, method)
    tr <- c(fit$initial, fit$objective)
    expect_true(all(diff(tr) <= 1e-12 * max(abs(tr))))
    expect_equal(sum(fit$lambda), 1, tolerance = 1e-10)
    expect_true(all(abs(colSums(fit$factors[[2]]) - 1) < 1e-10))
    expect_true(all(is.finite(unlist(fit$factors))))
  }
})

test_that("q-EM by SQUAREM (the default) matches a plain-R reference and reaches q-EM's fixed points", {
  x <- tiny_counts(8)
  for (q in c(0.3, 0.8)) {
    fit <- plsa(x, 3, loss = "tsallis", q = q, seed = 2, max_iter = 12, tol = 0, threads = 1)
    expect_identical(fit$method, "squarem")
    ref <- ref_squarem(x, ref_start(x, 3, 2), 12, q = q)
    expect_equal(unname(fitted(fit, type = "probability")),
                 ref_model(ref$lambda, ref$U, ref$V), tolerance = 1e-9, ignore_attr = TRUE)
  }
  # a converged fit is a fixed point of plain q-EM, and no worse than q-EM
  # from the same start after as many passes over the data
  x <- tiny_counts(9, 40, 30, 4)
  sq <- plsa(x, 4, loss = "tsallis", q = 0.5, seed = 3, max_iter = 2000, tol = 1e-13)
  expect_true(sq$converged)
  one <- plsa(x, 4, loss = "tsallis", q = 0.5, method = "em", init = sq, max_iter = 1, tol = 0)
  expect_equal(unname(one$factors), unname(sq$factors), tolerance = 1e-6)
  sq30 <- plsa(x, 4, loss = "tsallis", q = 0.5, seed = 3, max_iter = 30, tol = 0)
  em90 <- plsa(x, 4, loss = "tsallis", q = 0.5, method = "em", seed = 3, max_iter = 90, tol = 0)
  expect_lte(sq30$value, em90$value)
})

test_that("q close to 1 approaches EM", {
  x <- tiny_counts(10)
  em <- plsa(x, 2, method = "em", seed = 4, max_iter = 30, tol = 0)
  qe <- plsa(x, 2, loss = "tsallis", q = 1 - 1e-7, method = "em", seed = 4, max_iter = 30, tol = 0)
  expect_equal(fitted(qe), fitted(em), tolerance = 1e-5)
})

# Hazan, Haroon and Shashua, section 4: two uniform blocks plus sparse random noise on 60% of
# the entries, noise as strong as the signal. The KL fit reproduces the
# data's own mix (its mass inside the blocks stays near the data's ~57%),
# whereas q-EM with small q puts essentially all of its mass on the blocks.
# Thresholds: measured 0.996-0.999 for q = 0.05 and 0.55-0.56 for EM over
# several noise draws; we ask for > 0.97 and < 0.65.
test_that("two-block experiment: q-EM recovers the blocks where EM fails", {
  set.seed(2024)
  n <- 60
  S <- matrix(0, n, n); S[5:20, 8:25] <- 1; S[30:52, 33:56] <- 1
  E <- matrix(0, n, n); nz <- sample(n * n, round(0.6 * n * n))
  E[nz] <- runif(length(nz))
  x <- S + E
  inside <- S > 0
  mass <- function(fit) sum(fitted(fit, type = "probability")[inside])
  em <- plsa(x, 2, seed = 1, nrun = 3, tol = 1e-9, max_iter = 3000)
  qem <- plsa(x, 2, loss = "tsallis", q = 0.05, seed = 1, nrun = 3, tol = 1e-9, max_iter = 3000)
  expect_gt(mass(qem), 0.97)
  expect_lt(mass(em), 0.65)
  # each q-EM topic is one block: its document and term profiles live there
  rows <- list(5:20, 30:52)
  for (r in 1:2) {
    u <- qem$factors[[1]][, r]
    expect_gt(max(sum(u[rows[[1]]]), sum(u[rows[[2]]])), 0.95)
  }
})

test_that("predict() folds in under a chosen loss, whatever loss learned the topics", {
  set.seed(11)
  x <- matrix(rpois(30 * 12, 2), 30, 12)
  fit_q <- plsa(x, 3, loss = "tsallis", q = 0.3, seed = 1, max_iter = 200)
  newx <- matrix(rpois(4 * 12, 3), 4, 12)
  # plain-R KL fold-in (EM on the document's proportions, topics fixed)
  V <- fit_q$factors[[2]]
  ref <- t(apply(newx, 1, function(b) {
    th <- rep(1 / 3, 3)
    for (i in 1:5000) {
      p <- as.vector(V %*% th)
      th_new <- th * colSums(V * (b / ifelse(p > 0, p, 1))) / sum(b)
      if (max(abs(th_new - th)) < 1e-13) { th <- th_new; break }
      th <- th_new
    }
    th
  }))
  got <- predict(fit_q, newx, loss = "kl", tol = 1e-13, max_iter = 5000)
  expect_equal(unname(got), unname(ref), tolerance = 1e-8)
  # the default is the fit's loss, and differs from the KL fold-in
  expect_gt(max(abs(predict(fit_q, newx) - got)), 1e-4)
  expect_equal(predict(fit_q, newx), predict(fit_q, newx, loss = "tsallis", q = 0.3))
  # a Tsallis fold-in of a KL fit with q near 1 is the KL fold-in
  fit_k <- plsa(x, 3, seed = 1, max_iter = 200)
  expect_equal(predict(fit_k, newx, loss = "tsallis", q = 0.99999, tol = 1e-12),
               predict(fit_k, newx, tol = 1e-12), tolerance = 1e-3)
  expect_error(predict(fit_k, newx, q = 0.5), class = "aspectr_error_input_argument")
  expect_error(predict(fit_k, newx, loss = "x"), class = "aspectr_error_input_argument")
  expect_error(predict(fit_k, newx, loss = "tsallis", q = 1), class = "aspectr_error_input_argument")
})

test_that("q-EM of a dgCMatrix by column (in place) and by row (a copy) both give the dense fit", {
  # (the cells are read by column when the documents' factor is small or
  # the documents are no more than the terms, by row otherwise: here 3000
  # documents at k = 200 make a 4.8 MB factor)
  for (cs in list(list(m = 60, n = 40, k = 3), list(m = 40, n = 60, k = 3), list(m = 3000, n = 250, k = 200))) {
    set.seed(cs$m)
    xs <- Matrix::rsparsematrix(cs$m, cs$n, 0.08, rand.x = function(n) stats::rpois(n, 2) + 1)
    xs[cbind(seq_len(cs$m), rep_len(seq_len(cs$n), cs$m))] <- 1
    xs[cbind(rep_len(seq_len(cs$m), cs$n), seq_len(cs$n))] <- 1
    a <- plsa(xs, cs$k, loss = "tsallis", method = "em", q = 0.6, max_iter = 3, tol = 0, seed = 1)
    b <- plsa(as.matrix(xs), cs$k, loss = "tsallis", method = "em", q = 0.6, max_iter = 3, tol = 0, seed = 1)
    expect_equal(a$factors, b$factors, tolerance = 1e-10)
    expect_equal(a$objective, b$objective, tolerance = 1e-12)
  }
})

test_that("q-EM of a dgCMatrix read from its slots equals q-EM of its cells by column, bit for bit", {
  # (the slots i and p in place of a 2 x nnz index matrix: the same cells in
  # the same order, so the same sums; with empty rows and columns, whose
  # cells the column pointers skip)
  # (over 4096 cells: 2 and 3 threads split them, so that a thread's first
  # cell is found by the column pointers, here among empty columns)
  set.seed(11)
  x <- Matrix::rsparsematrix(300, 200, 0.15, rand.x = function(n) stats::rpois(n, 3) + 1)
  x[, c(1, 2, 66:70, 99:101, 133, 134, 200)] <- 0
  x[c(3, 150, 300), ] <- 0
  x <- Matrix::drop0(x)
  expect_gt(length(x@x), 3 * 2048)
  d <- as_aspect_data(x, "x", by_column = TRUE)
  init <- aspectr:::with_seed(5, aspectr:::random_start(d$dims, 4))
  for (method in c("em", "squarem")) for (threads in 1:3) for (q in c(0.3, 0.8)) {
    a <- aspectr:::cpp_plsa_fit(d$idx, d$val, d$dims, init$lambda, init$factors, "tsallis", q, 1, 15, 0,
                                threads, FALSE, FALSE, NULL, FALSE, method, 1)
    b <- aspectr:::cpp_plsa_tsallis_csc(x@i, x@p, x@x, dim(x), init$lambda, init$factors, q, 15, 0,
                                        threads, FALSE, NULL, FALSE, method, 1)
    expect_identical(b, a)
  }
  # plsa() takes that route for this matrix, and the fit is the dense one's
  # (the empty rows and columns get no mass)
  # (the route each fit takes, recorded by tracing the two entry points)
  tr <- new.env()
  tr$routes <- character(0)
  ns <- asNamespace("aspectr")
  for (fn in c("cpp_plsa_tsallis_csc", "cpp_plsa_fit")) {
    suppressMessages(trace(fn, substitute(assign("routes", c(get("routes", envir = tr), f), envir = tr),
                                      list(tr = tr, f = fn)),
                           where = ns, print = FALSE))
  }
  on.exit(suppressMessages(untrace(c("cpp_plsa_tsallis_csc", "cpp_plsa_fit"), where = ns)), add = TRUE)
  f <- plsa(x, 4, loss = "tsallis", q = 0.5, max_iter = 20, tol = 0, seed = 2)
  expect_identical(tr$routes, "cpp_plsa_tsallis_csc")
  g <- plsa(as.matrix(x), 4, loss = "tsallis", q = 0.5, max_iter = 20, tol = 0, seed = 2)
  expect_identical(tr$routes, c("cpp_plsa_tsallis_csc", "cpp_plsa_fit"))
  expect_equal(f$factors, g$factors, tolerance = 1e-10)
  expect_equal(f$objective, g$objective, tolerance = 1e-12)
  expect_equal(unname(f$doc_totals), unname(Matrix::rowSums(x)))
  expect_equal(sum(f$factors[[1]][c(3, 150, 300), ]), 0)
})

test_that("q-EM of a dgCMatrix: stored zeros, huge values and bad values", {
  set.seed(12)
  x <- Matrix::rsparsematrix(50, 30, 0.15, rand.x = function(n) stats::rpois(n, 2) + 1)
  # stored zeros: the cells without them (another route, the same fit)
  z <- x
  z@x[c(1, 5, 9)] <- 0
  a <- plsa(z, 3, loss = "tsallis", max_iter = 10, tol = 0, seed = 1)
  b <- plsa(Matrix::drop0(z), 3, loss = "tsallis", max_iter = 10, tol = 0, seed = 1)
  expect_equal(a$factors, b$factors, tolerance = 1e-12)
  expect_equal(a$objective, b$objective, tolerance = 1e-12)
  # values near the largest double (1 / max is not a normal number: the
  # values are divided in a copy) give the fit of the data scaled down
  h <- x * (1.6e308 / max(x@x))
  expect_true(all(is.finite(h@x)))
  hx <- h@x + 0  # (a copy of the values: the fit must leave the matrix's own alone)
  fh <- plsa(h, 3, loss = "tsallis", max_iter = 10, tol = 0, seed = 1, nrun = 2)
  expect_identical(h@x, hx)
  expect_equal(unname(fh$doc_totals), unname(Matrix::rowSums(h)))
  fh <- plsa(h, 3, loss = "tsallis", max_iter = 10, tol = 0, seed = 1)
  fx <- plsa(x, 3, loss = "tsallis", max_iter = 10, tol = 0, seed = 1)
  expect_equal(fh$factors, fx$factors, tolerance = 1e-10)
  expect_equal(fh$objective, fx$objective, tolerance = 1e-10)
  # a negative value is named, as for every input; a missing one is a
  # missing cell (as in a dense matrix)
  bad <- x
  bad@x[2] <- -1
  expect_error(plsa(bad, 3, loss = "tsallis"), class = "aspectr_error_input")
  bad@x[2] <- NA
  fb <- plsa(bad, 3, loss = "tsallis", max_iter = 5, tol = 0, seed = 1)
  expect_identical(fb$weighting$type, "missing")
  expect_equal(sum(fb$weighting$left_out), 1)
})
