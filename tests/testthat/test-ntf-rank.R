# ntf_rank(): the rank of a CP decomposition by masked cross-validation

planted_cp <- function(dims, k, seed, noise = 0.02) {
  set.seed(seed)
  fac <- lapply(dims, function(d) matrix(stats::rexp(d * k), d, k))
  X <- array(0, dims)
  for (r in seq_len(k)) X <- X + Reduce(outer, lapply(fac, function(f) f[, r]))
  pmax(X + array(stats::rnorm(prod(dims), sd = noise * mean(X)), dims), 0)
}

test_that("the model's values and sum of squares are those of fitted()", {
  X <- planted_cp(c(7, 6, 5), 2, 1)
  fit <- ntf(X, 3, seed = 2, max_iter = 50)
  idx <- arrayInd(seq_along(X), dim(X))
  expect_equal(aspectr:::cp_values(fit, idx), as.vector(fitted(fit)), tolerance = 1e-12)
  expect_equal(aspectr:::cp_sum_squares(fit), sum(fitted(fit)^2), tolerance = 1e-12)
})

test_that("ntf_rank() finds the planted rank of dense and sparse tensors", {
  X <- planted_cp(c(20, 15, 8), 3, 1)
  sel <- ntf_rank(X, k = 1:5, nrun = 2, seed = 1, max_iter = 300)
  expect_s3_class(sel, "aspectr_nmf_rank")
  expect_identical(sel$best, 3L)
  expect_identical(sel$table$k, 1:5)
  expect_true(all(sel$table$test_sd >= 0))
  expect_lt(sel$table$test_error[3], sel$table$test_error[2] / 5)
  # training error falls with the rank (to rounding of the fits' stops)
  expect_true(all(diff(sel$table$train_error) <= 1e-3))
  expect_identical(nrow(sel$details), 10L)
  expect_output(print(sel), "CP \\(ntf\\) rank selection by cross-validation on masked cells")
  # tidy(): the table, one row per rank (as for plsa_rank() and lca_rank())
  td <- tidy(sel)
  expect_s3_class(td, "tbl_df")
  expect_identical(td$k, 1:5)
  expect_identical(as.data.frame(td), sel$table)
  expect_error(tidy(sel, what = "runs"), class = "aspectr_error_input_argument")
  # the one-standard-error rule by default; "min": the smallest mean
  expect_identical(sel$rule, "1se")
  expect_equal(sel$table$test_se, sel$table$test_sd / sqrt(2))
  mn <- ntf_rank(X, k = 1:5, nrun = 2, seed = 1, max_iter = 300, rule = "min")
  expect_identical(mn$best, mn$table$k[which.min(mn$table$test_error)])
  expect_identical(mn$details, sel$details)
  # sparse (three quarters zeros, from factors with zeros), held out apart
  # from the non-zeros
  set.seed(3)
  dims <- c(30, 24, 8)
  fac <- lapply(dims, function(d) { f <- matrix(stats::rexp(d * 2), d, 2); f[sample(d * 2, d)] <- 0; f })
  M <- array(0, dims)
  for (r in 1:2) M <- M + Reduce(outer, lapply(fac, function(f) f[, r]))
  sp <- as_sptensor(M * (1 + array(stats::rnorm(length(M), sd = 0.03), dims)))
  ss <- ntf_rank(sp, k = 1:4, nrun = 2, seed = 2, max_iter = 300)
  expect_identical(ss$best, 2L)
  # the same seed gives the same selection
  expect_identical(ntf_rank(sp, k = 1:4, nrun = 2, seed = 2, max_iter = 300)$details, ss$details)
  # Poisson counts of a planted rank-2 model under KL: rank 2 is within two
  # standard deviations of the best, and far better than rank 1
  set.seed(5)
  fac <- lapply(c(30, 20, 6), function(d) matrix(stats::rexp(d * 2), d, 2))
  M <- array(0, c(30, 20, 6))
  for (r in 1:2) M <- M + Reduce(outer, lapply(fac, function(f) f[, r]))
  Y <- array(stats::rpois(length(M), 25 * M / mean(M)), dim(M))
  sk <- ntf_rank(as_sptensor(Y), k = 1:4, loss = "kl", nrun = 2, seed = 2, max_iter = 300)
  te <- sk$table$test_error
  expect_lt(te[2], te[1] / 2)
  expect_lte(te[2], min(te) + 2 * max(sk$table$test_sd))
})

test_that("ntf_rank() leaves NA cells out of every fit and never holds them out", {
  X <- planted_cp(c(15, 12, 6), 2, 7)
  Xm <- X
  set.seed(3)
  Xm[sample(length(X), 100)] <- NA
  sel <- ntf_rank(Xm, k = 1:3, nrun = 2, seed = 4, max_iter = 300)
  te <- sel$table$test_error
  expect_lt(te[2], te[1] / 3)
  expect_lte(te[2], min(te) + 2 * max(sel$table$test_sd))
  expect_true(all(is.finite(unlist(sel$table))))
  # held-out cells are drawn among the cells that are not missing
  na <- which(is.na(Xm))
  set.seed(9)
  held <- aspectr:::ntf_held_cells(numeric(0), na, length(X), 0.2, TRUE)
  expect_length(intersect(held, na), 0)
  expect_length(held, round(0.2 * (length(X) - length(na))))
  # sparse: the same share of non-zeros and of zeros
  nz <- c(3, 8, 20, 21, 40)
  held <- aspectr:::ntf_held_cells(nz, 5, 100, 0.4, FALSE)
  expect_identical(sum(held %in% nz), 2L)
  expect_identical(sum(!held %in% nz), as.integer(round(0.4 * 94)))
  expect_false(5 %in% held)
})

test_that("ntf_rank() checks its arguments", {
  X <- planted_cp(c(6, 5, 4), 2, 1)
  expect_error(ntf_rank(X, holdout = 0.7), class = "aspectr_error_input_argument")
  expect_error(ntf_rank(X, k = "a"), class = "aspectr_error_input_argument")
  expect_error(ntf_rank(X, k = c(2, 2)), class = "aspectr_error_input")
  expect_error(ntf_rank(-X), class = "aspectr_error_input_value")
  expect_error(ntf_rank(X, loss = "beta"), class = "aspectr_error_input")
  expect_error(ntf_rank(shards(list(X[1:3, , ], X[4:6, , ]))), class = "aspectr_error_input_type")
  expect_error(ntf_rank(X, nrun = 0), class = "aspectr_error_input")
})

test_that("ntf_rank()'s errors do not depend on the data's scale", {
  X <- planted_cp(c(8, 7, 6), 2, 4)
  one <- ntf_rank(X, k = 1:2, nrun = 2, seed = 1, max_iter = 50)
  for (s in c(1e-300, 1e200)) {
    sel <- suppressWarnings(ntf_rank(X * s, k = 1:2, nrun = 2, seed = 1, max_iter = 50))
    expect_equal(sel$table$test_error, one$table$test_error, tolerance = 1e-6)
    expect_equal(sel$table$train_error, one$table$train_error, tolerance = 1e-6)
  }
})

test_that("ntf_rank() says once how many of its fits did not converge", {
  X <- planted_cp(c(8, 7, 6), 2, 3)
  got <- collect_messages(ntf_rank(X, k = 1:2, nrun = 2, seed = 1, max_iter = 2, tol = 0))
  sel <- got$value
  msgs <- got$messages
  expect_length(msgs, 1)
  expect_s3_class(msgs[[1]], "aspectr_message_not_converged")
  expect_match(conditionMessage(msgs[[1]]), "4 of the 4 fits of ntf_rank\\(\\) did not converge in 2 iterations")
  expect_identical(sel$details$converged, rep(FALSE, 4))
})
