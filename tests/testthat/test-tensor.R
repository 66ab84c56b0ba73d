planted_tensor <- function(seed = 1, dims = c(15, 12, 10), k = 3, scale = 1e5) {
  set.seed(seed)
  U <- lapply(dims, function(d) {
    m <- matrix(rexp(d * k)^2, d, k)
    sweep(m, 2, colSums(m), "/")
  })
  lambda <- c(0.5, 0.3, 0.2)[seq_len(k)]
  P <- Reduce(`+`, lapply(seq_len(k), function(r) lambda[r] * Reduce(outer, lapply(U, function(u) u[, r]))))
  list(U = U, lambda = lambda, P = P, x = P * scale)
}


test_that("sptensor() sums duplicates, drops zeros and converts back", {
  x <- sptensor(rbind(c(1, 1, 1), c(2, 3, 1), c(2, 3, 1), c(1, 2, 2)), c(1, 2, 5, 0),
                dims = c(2, 3, 2))
  expect_identical(nnz(x), 2L)
  expect_identical(dim(x), c(2L, 3L, 2L))
  a <- as.array(x)
  expect_identical(a[2, 3, 1], 7)
  expect_identical(sum(a), 8)
  expect_equal(as.array(as_sptensor(a)), a)
  tab <- as_sptensor(UCBAdmissions)
  expect_identical(dimnames(tab), lapply(dimnames(UCBAdmissions), as.character))
  expect_equal(as.array(tab), unclass(UCBAdmissions), ignore_attr = TRUE)
  expect_snapshot(print(tab))
})

test_that("a data frame becomes counts of observed combinations", {
  df <- data.frame(a = c("x", "y", "x", "x"), b = c(TRUE, FALSE, TRUE, NA), c = c(1L, 2L, 1L, 2L))
  t3 <- as_sptensor(df)
  expect_identical(dim(t3), c(2L, 2L, 2L))
  expect_identical(sum(t3$values), 3)          # the row with NA is dropped
  expect_identical(as.array(t3)["x", "TRUE", "1"], 2)
  expect_error(as_sptensor(data.frame(a = 1:3, b = c(0.5, 1, 2))), class = "aspectr_error_input_type")
})

test_that("FROSTT files round-trip exactly; malformed lines are errors", {
  set.seed(1)
  idx <- cbind(sample(50, 200, TRUE), sample(40, 200, TRUE), sample(30, 200, TRUE))
  x <- sptensor(idx, runif(200) * 10^runif(200, -5, 5), dims = c(50, 40, 30))
  f <- tempfile(fileext = ".tns")
  write_tns(x, f)
  y <- read_tns(f, dims = c(50, 40, 30))
  expect_identical(y$index, x$index)
  expect_identical(y$values, x$values)
  expect_identical(y$dims, x$dims)
  bad <- tempfile(fileext = ".tns")
  writeLines(c("1 2 3 4.5", "1 2 3", "2 2 2 1"), bad)
  expect_error(read_tns(bad), class = "aspectr_error_input_value")
  writeLines(c("1 2 3 4.5", "1 x 3 1"), bad)
  expect_error(read_tns(bad), class = "aspectr_error_input_value")
  writeLines(c("1 2 3 4.5", "0 2 3 1"), bad)
  expect_error(read_tns(bad), class = "aspectr_error_input_value")
  writeLines(c("1 2 3 -4.5"), bad)
  expect_error(read_tns(bad), class = "aspectr_error_input_value")
  expect_snapshot(read_tns(bad), error = TRUE,
                  transform = function(x) gsub("'[^']*[.]tns'", "'<file>'", x))
})

test_that("KL EM on tensors matches a plain-R reference and dense equals sparse", {
  pt <- planted_tensor(2, c(6, 5, 4), k = 2)
  x <- round(pt$x / 1e3)
  fit <- plsa(x, 2, method = "em", seed = 3, max_iter = 20, tol = 0, threads = 1)
  set.seed(3)
  ref <- ref_tensor_em(x, aspectr:::random_start(dim(x), 2), 20)
  expect_equal(fitted(fit, type = "probability"), ref$model, tolerance = 1e-10, ignore_attr = TRUE)
  sp <- plsa(as_sptensor(x), 2, method = "em", seed = 3, max_iter = 20, tol = 0, threads = 1)
  expect_equal(sp$factors, fit$factors, tolerance = 1e-13)
  expect_equal(sp$objective, fit$objective, tolerance = 1e-13)
})

test_that("tensor EM, tempered EM, q-EM and their SQUAREM match plain-R references (orders 3 and 4)", {
  or <- function(a, b) if (is.null(a)) b else a
  for (dims in list(c(6, 5, 4), c(4, 3, 3, 2))) {
    set.seed(length(dims))
    x <- array(rpois(prod(dims), 2) + 0, dims)
    for (method in c("em", "squarem")) {
      for (case in list(list(beta = 1), list(beta = 0.8), list(q = 0.6))) {
        iters <- if (method == "em") 15 else 8
        fit <- plsa(x, 2, loss = if (is.null(case$q)) "kl" else "tsallis", q = or(case$q, 0.5),
                    tempering = or(case$beta, 1), method = method, seed = 5, max_iter = iters, tol = 0, threads = 1)
        set.seed(5)
        init <- aspectr:::random_start(dim(x), 2)
        ref <- if (method == "squarem") ref_tensor_squarem(x, init, iters, beta = or(case$beta, 1), q = case$q)
               else if (is.null(case$q)) ref_tensor_em(x, init, iters, beta = case$beta)
               else ref_tensor_qem(x, init, iters, q = case$q)
        expect_equal(fitted(fit, type = "probability"), ref$model, tolerance = 1e-10, ignore_attr = TRUE)
        expect_equal(sort(unname(fit$lambda)), sort(ref$lambda), tolerance = 1e-10)
      }
    }
  }
})

test_that("k = 1 on a tensor is the product of the marginals (Theorem 2)", {
  x <- round(planted_tensor(4)$x / 100)
  fit <- plsa(x, 1)
  expect_identical(fit$iterations, 0L)
  for (n in 1:3) {
    expect_equal(fit$factors[[n]][, 1], apply(x, n, sum) / sum(x), tolerance = 1e-14, ignore_attr = TRUE)
  }
})

test_that("every loss decreases its objective on a sparse tensor and keeps the constraints", {
  set.seed(5)
  idx <- cbind(sample(30, 600, TRUE), sample(25, 600, TRUE), sample(20, 600, TRUE), sample(4, 600, TRUE))
  x <- sptensor(idx, rpois(600, 3) + 1)
  for (loss in c("kl", "tsallis", "l2")) {
    fit <- plsa(x, 3, loss = loss, q = 0.4, seed = 1, max_iter = 60, tol = 0)
    tr <- c(fit$initial, fit$objective)
    expect_true(all(diff(tr) <= 1e-12 * max(abs(tr))), info = loss)
    expect_length(fit$factors, 4)
    for (f in fit$factors) expect_true(all(abs(colSums(f) - 1) < 1e-10), info = loss)
    expect_equal(sum(fit$lambda), 1, tolerance = 1e-12)
  }
})

test_that("plsa recovers a planted low-rank tensor (congruence > 0.99)", {
  pt <- planted_tensor(6)
  for (loss in c("kl", "l2")) {
    fit <- plsa(pt$x, 3, loss = loss, seed = 1, nrun = 5, tol = 1e-12, max_iter = 3000)
    for (n in 1:3) expect_gt(congruence(fit$factors[[n]], pt$U[[n]]), 0.99)
    expect_equal(sort(unname(fit$lambda)), sort(pt$lambda), tolerance = 0.01)
  }
})

test_that("predict() on a tensor gives cell posteriors", {
  pt <- planted_tensor(7)
  fit <- plsa(pt$x, 3, seed = 1, max_iter = 200)
  cells <- rbind(c(1, 1, 1), c(3, 5, 2), c(15, 12, 10))
  p <- predict(fit, cells)
  manual <- t(apply(cells, 1, function(i) {
    v <- fit$lambda * fit$factors[[1]][i[1], ] * fit$factors[[2]][i[2], ] * fit$factors[[3]][i[3], ]
    v / sum(v)
  }))
  expect_equal(p, manual, ignore_attr = TRUE, tolerance = 1e-12)
  expect_identical(predict(fit, cells, type = "class"), max.col(p, ties.method = "first"))
  # NA leaves a mode out
  p_na <- predict(fit, rbind(c(3, NA, 2)))
  v <- fit$lambda * fit$factors[[1]][3, ] * fit$factors[[3]][2, ]
  expect_equal(drop(p_na), v / sum(v), ignore_attr = TRUE)
  expect_error(predict(fit, rbind(c(16, 1, 1))), class = "aspectr_error_input_newdata")
  expect_error(predict(fit, rbind(c(1, 1))), class = "aspectr_error_input_newdata")
})

test_that("bad tensors give classed errors", {
  expect_error(sptensor(matrix(c(1, 2), 1), -1), class = "aspectr_error_input_value")
  expect_error(sptensor(matrix(c(0, 2), 1), 1), class = "aspectr_error_input_value")
  expect_error(sptensor(matrix(c(1, 2), 1), 1:2), class = "aspectr_error_input_type")
  expect_error(sptensor(matrix(c(1, 5), 1), 1, dims = c(2, 2)), class = "aspectr_error_input_value")
  # (an NA cell is missing: left out of the fit, see test-plsa-weights-nway.R)
  a <- array(1, c(2, 2, 2)); a[1] <- NA
  expect_identical(plsa(a, 2, seed = 1, max_iter = 5, tol = 0)$weighting$type, "missing")
  a[1] <- -1
  expect_error(plsa(a, 2), class = "aspectr_error_input_value")
  expect_error(plsa(array(0, c(2, 2, 2)), 1), class = "aspectr_error_input_empty")
  expect_error(plsa(array(1, c(2, 2, 2)), 9), class = "aspectr_error_input_argument")
})

test_that("as_sptensor() of a data frame says how many rows it leaves out, and refuses missing or overflowing counts", {
  ld <- as.data.frame(UCBAdmissions)
  ld$Gender[1] <- NA
  expect_message(t1 <- as_sptensor(ld, value = Freq), class = "aspectr_message_dropped", regexp = "1 row of `x`")
  expect_equal(sum(t1$values), sum(ld$Freq[-1]))
  ld2 <- as.data.frame(UCBAdmissions)
  ld2$Freq[3] <- NA
  expect_error(as_sptensor(ld2, value = Freq), class = "aspectr_error_input_value", regexp = "it has 1")
  big <- data.frame(a = c("x", "x"), b = c("y", "y"), n = c(1e308, 1e308))
  expect_error(as_sptensor(big, value = n), class = "aspectr_error_input_value", regexp = "largest double")
  expect_error(as_dtm(big, a, b, n), class = "aspectr_error_input_value", regexp = "largest double")
  expect_error(sptensor(rbind(c(1, 1), c(1, 1)), c(1e308, 1e308), dims = c(1, 1)),
               class = "aspectr_error_input_value", regexp = "`values`")
  # complete rows: no message, the counts kept
  expect_no_message(t2 <- as_sptensor(as.data.frame(UCBAdmissions), value = Freq))
  expect_equal(sum(t2$values), sum(UCBAdmissions))
})
