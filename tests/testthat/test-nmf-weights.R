# nmf() with missing cells, masks and weights against the plain-R
# references of helper-weighted-reference.R, and their properties.

wt_case <- function(seed, m = 9, n = 7, k = 2, na = 0.2, counts = FALSE) {
  set.seed(seed)
  W <- matrix(runif(m * k), m, k); H <- matrix(runif(k * n), k, n)
  X <- W %*% H + matrix(runif(m * n, 0, 0.2), m, n)
  if (counts) X <- matrix(rpois(m * n, 3 * X), m, n)
  X[sample(m * n, round(na * m * n))] <- NA
  list(X = X, W0 = matrix(runif(m * k), m, k), H0 = matrix(runif(k * n), k, n), k = k)
}

wt_omega <- function(X, cells = NULL, rows = NULL, cols = NULL) {
  Om <- matrix(1, nrow(X), ncol(X))
  if (!is.null(cells)) Om <- cells
  if (!is.null(rows)) Om <- Om * rows
  if (!is.null(cols)) Om <- sweep(Om, 2, cols, "*")
  Om[is.na(X)] <- 0
  Om
}

combos <- list(c("frobenius", "hals"), c("frobenius", "anls"), c("frobenius", "mu"),
               c("kl", "mu"), c("kl", "cd"))

test_that("weighted nmf() equals the plain-R reference for every method", {
  for (cb in combos) for (seed in 1:3) {
    cs <- wt_case(seed, counts = cb[1] == "kl")
    rw <- runif(nrow(cs$X), 0.5, 2); cw <- runif(ncol(cs$X), 0.5, 2)
    cellw <- matrix(runif(length(cs$X), 0, 2), nrow(cs$X))
    for (variant in 1:3) {
      args <- switch(variant,
        list(),                                            # NA only
        list(row_weights = rw, col_weights = cw),          # rows and columns
        list(weights = cellw, row_weights = rw))           # cells and rows
      Om <- wt_omega(cs$X, cells = args$weights, rows = args$row_weights, cols = args$col_weights)
      fit <- do.call(nmf, c(list(cs$X, cs$k, loss = cb[1], method = cb[2], init = list(W = cs$W0, H = cs$H0),
                                 max_iter = 6, tol = 0, eps = 0), args))
      ref <- wref_nmf(cs$X, Om, cs$W0, cs$H0, cb[1], cb[2], 6)
      lab <- paste(cb[1], cb[2], seed, variant)
      expect_equal(unname(fit$W), ref$W, tolerance = 1e-8, label = lab)
      expect_equal(unname(fit$H), ref$H, tolerance = 1e-8, label = lab)
      expect_equal(fit$objective, ref$objective, tolerance = 1e-9, label = lab)
      expect_equal(fit$iterations, 6L)
    }
  }
})

test_that("weighted nmf() with penalties equals the reference", {
  for (cb in combos) {
    cs <- wt_case(11, counts = cb[1] == "kl")
    L1 <- c(0.05, 0.02); L2 <- c(0.1, 0.03)
    fit <- nmf(cs$X, cs$k, loss = cb[1], method = cb[2], init = list(W = cs$W0, H = cs$H0),
               max_iter = 5, tol = 0, eps = 0, L1 = L1, L2 = L2)
    ref <- wref_nmf(cs$X, wt_omega(cs$X), cs$W0, cs$H0, cb[1], cb[2], 5, L1, L2)
    expect_equal(unname(fit$W), ref$W, tolerance = 1e-8, label = paste(cb, collapse = " "))
    expect_equal(unname(fit$H), ref$H, tolerance = 1e-8, label = paste(cb, collapse = " "))
    expect_equal(fit$objective, ref$objective, tolerance = 1e-9, label = paste(cb, collapse = " "))
  }
})

test_that("NA cells, a mask and weight 0 give the same fit; dense equals sparse", {
  cs <- wt_case(3, m = 12, n = 10, na = 0.25)
  X0 <- cs$X; X0[is.na(X0)] <- 0
  M <- is.na(cs$X)
  for (cb in combos) {
    f <- function(x, ...) nmf(x, 2, loss = cb[1], method = cb[2], init = list(W = cs$W0, H = cs$H0),
                              max_iter = 8, tol = 0, ...)
    a <- f(cs$X)
    b <- f(X0, mask = M)
    d <- f(Matrix::Matrix(X0, sparse = TRUE), mask = Matrix::Matrix(M, sparse = TRUE))
    e <- f(X0, weights = 1 - M * 1)
    lab <- paste(cb, collapse = " ")
    expect_equal(a$W, b$W, tolerance = 1e-12, label = lab)
    expect_equal(a$H, d$H, tolerance = 1e-10, label = lab)
    expect_equal(a$W, d$W, tolerance = 1e-10, label = lab)
    expect_equal(a$objective, e$objective, tolerance = 1e-10, label = lab)
  }
})

test_that("observed cells of sparse data: implicit zeros elsewhere do not count", {
  set.seed(5)
  m <- 15; n <- 12
  Xf <- matrix(runif(m * 2), m) %*% matrix(runif(2 * n), 2)
  obs <- matrix(runif(m * n) < 0.5, m)
  Xs <- Matrix::Matrix(Xf * obs, sparse = TRUE)
  W0 <- matrix(runif(m * 2), m); H0 <- matrix(runif(2 * n), 2)
  a <- nmf(Xs, 2, observed = Matrix::Matrix(obs, sparse = TRUE), init = list(W = W0, H = H0), method = "anls",
           max_iter = 5, tol = 0)
  Xna <- Xf; Xna[!obs] <- NA
  b <- nmf(Xna, 2, init = list(W = W0, H = H0), method = "anls", max_iter = 5, tol = 0)
  expect_equal(a$W, b$W, tolerance = 1e-10)
  expect_equal(a$objective, b$objective, tolerance = 1e-10)
  ref <- wref_nmf(Xf, obs * 1, W0, H0, "frobenius", "anls", 5)
  expect_equal(unname(a$H), ref$H, tolerance = 1e-8)
  # the observed zeros (implicit zeros on observed cells) do count
  obs2 <- obs; obs2[1, ] <- TRUE
  c2 <- nmf(Xs, 2, observed = obs2, init = list(W = W0, H = H0), method = "anls", max_iter = 5, tol = 0)
  ref2 <- wref_nmf(Xf * obs, obs2 * 1, W0, H0, "frobenius", "anls", 5)
  expect_equal(unname(c2$W), ref2$W, tolerance = 1e-8)
  # a sparse weights matrix: only its cells count
  sw <- Matrix::Matrix(obs * 2, sparse = TRUE)
  d2 <- nmf(Xs, 2, weights = sw, init = list(W = W0, H = H0), method = "anls", max_iter = 5, tol = 0)
  ref3 <- wref_nmf(Xf, obs * 2, W0, H0, "frobenius", "anls", 5)
  expect_equal(unname(d2$W), ref3$W, tolerance = 1e-8)
})

test_that("whole-number row weights equal repeated rows", {
  cs <- wt_case(7, m = 8, n = 9, na = 0)
  rw <- c(2, 1, 3, 1, 1, 2, 1, 1)
  rep_rows <- rep(seq_len(8), rw)
  for (cb in combos) {
    a <- nmf(cs$X, 2, loss = cb[1], method = cb[2], row_weights = rw, init = list(W = cs$W0, H = cs$H0),
             max_iter = 7, tol = 0)
    b <- nmf(cs$X[rep_rows, ], 2, loss = cb[1], method = cb[2], row_weights = rep(1, length(rep_rows)),
             init = list(W = cs$W0[rep_rows, ], H = cs$H0), max_iter = 7, tol = 0)
    lab <- paste(cb, collapse = " ")
    expect_equal(a$H, b$H, tolerance = 1e-9, label = lab)
    expect_equal(unname(a$W), unname(b$W[!duplicated(rep_rows), ]), tolerance = 1e-9, label = lab)
    expect_equal(a$objective, b$objective, tolerance = 1e-10, label = lab)
  }
})

test_that("trivial weights give the unweighted KL coordinate descent", {
  cs <- wt_case(8, m = 20, n = 15, na = 0, counts = TRUE)
  W0 <- matrix(runif(40), 20); H0 <- matrix(runif(30), 2)
  a <- nmf(cs$X, 2, loss = "kl", method = "cd", init = list(W = W0, H = H0), max_iter = 10, tol = 0)
  b <- nmf(cs$X, 2, loss = "kl", method = "cd", init = list(W = W0, H = H0), max_iter = 10, tol = 0,
           row_weights = rep(1, 20))
  expect_equal(a$W, b$W, tolerance = 1e-10)
  expect_equal(a$objective, b$objective, tolerance = 1e-12)
  expect_equal(a$divergence, b$divergence, tolerance = 1e-12)
})

test_that("weighted objectives never rise (random cases)", {
  reps <- as.integer(Sys.getenv("ASPECTR_PROPERTY_REPS", "8"))
  for (rep in seq_len(reps)) {
    set.seed(100 + rep)
    m <- sample(5:25, 1); n <- sample(5:25, 1); k <- sample(1:min(4, m, n), 1)
    X <- matrix(rpois(m * n, 2), m)
    X[sample(m * n, sample(0:(m * n %/% 3), 1))] <- NA
    if (all(is.na(X) | X == 0)) next
    all_combos <- c(combos, list(c("beta", "mu")))
    cb <- all_combos[[sample(length(all_combos), 1)]]
    w <- if (runif(1) < 0.5) list(row_weights = runif(m, 0, 3)) else list(weights = matrix(runif(m * n), m))
    pen <- if (runif(1) < 0.3) list(L1 = runif(2, 0, 0.1), L2 = runif(2, 0, 0.1)) else list()
    if (cb[1] == "beta") pen$L2 <- NULL
    # (beta for the beta divergence only: with another loss it has no effect)
    fit <- do.call(nmf, c(list(X, k, loss = cb[1], method = cb[2], init = "random", seed = rep, max_iter = 30,
                               tol = 0), if (cb[1] == "beta") list(beta = runif(1, 0.5, 2.5)), w, pen))
    o <- c(fit$initial, fit$objective)
    expect_true(all(diff(o) <= 1e-9 * abs(o[-length(o)]) + 1e-12), label = paste(cb, collapse = " "))
    expect_true(all(is.finite(fit$W)) && all(is.finite(fit$H)) && all(fit$W >= 0) && all(fit$H >= 0))
  }
})

test_that("a fit with missing cells imputes them; augment() marks them", {
  set.seed(21)
  m <- 60; n <- 40
  Wt <- matrix(runif(m * 3), m); Ht <- matrix(runif(3 * n), 3)
  X <- Wt %*% Ht
  Xn <- X + matrix(runif(m * n, 0, 0.02), m)
  miss <- sample(m * n, 0.2 * m * n)
  Xm <- Xn; Xm[miss] <- NA
  fit <- nmf(Xm, 3, method = "anls", seed = 1, tol = 1e-8, max_iter = 2000)
  expect_true(fit$converged)
  imp <- fitted(fit)[miss]
  expect_lt(sqrt(mean((imp - X[miss])^2)) / sqrt(mean(X^2)), 0.03)
  # a zero-filled fit (the missing cells taken as zeros) imputes far worse
  X0 <- Xm; X0[miss] <- 0
  f0 <- nmf(X0, 3, method = "anls", seed = 1, tol = 1e-8, max_iter = 2000)
  expect_gt(sqrt(mean((fitted(f0)[miss] - X[miss])^2)) / sqrt(mean(X^2)), 0.2)
  expect_equal(sum(fit$weighting$left_out), length(miss))
  au <- augment(fit)
  expect_true("observed" %in% names(au))
  expect_equal(sum(!au$observed), length(miss))
})

test_that("bad weighting arguments are classed input errors", {
  X <- matrix(runif(20), 5)
  expect_error(nmf(X, 2, mask = matrix(TRUE, 4, 4)), class = "aspectr_error_input_value")
  expect_error(nmf(X, 2, mask = "a"), class = "aspectr_error_input_type")
  mm <- matrix(FALSE, 5, 4); mm[1] <- NA
  expect_error(nmf(X, 2, mask = mm), class = "aspectr_error_input_value")
  expect_error(nmf(X, 2, weights = -X), class = "aspectr_error_input_value",
               regexp = paste0("20 negative entries \\(the smallest ", format(-max(X), digits = 6), "\\)"))
  W <- X
  W[1:2] <- c(NA, Inf)
  expect_error(nmf(X, 2, weights = W), class = "aspectr_error_input_value", regexp = "`weights` must not contain missing values.*1 missing entry")
  W[1] <- 1
  expect_error(nmf(X, 2, weights = W), class = "aspectr_error_input_value", regexp = "1 infinite entry")
  # (sparse weights: their listed values)
  expect_error(nmf(X, 2, weights = Matrix::sparseMatrix(i = 1:2, j = 1:2, x = c(1, -2), dims = dim(X))),
               class = "aspectr_error_input_value", regexp = "1 negative entry \\(the smallest -2\\)")
  expect_error(ntf(array(runif(24), c(2, 3, 4)), 2, weights = array(-1, c(2, 3, 4))),
               class = "aspectr_error_input_value", regexp = "24 negative entries \\(the smallest -1\\)")
  e <- expect_error(ntf(array(runif(24), c(2, 3, 4)), 2, mode_weights = list(NULL, c(1, Inf, 1), NULL)),
                    class = "aspectr_error_input_value", regexp = "`mode_weights\\[\\[2\\]\\]` must not contain infinite values")
  expect_identical(e$arg, "mode_weights")
  expect_error(nmf(X, 2, row_weights = c(1, 2)), class = "aspectr_error_input_value")
  expect_error(nmf(X, 2, col_weights = c(1, NA, 1, 1)), class = "aspectr_error_input_value")
  expect_error(nmf(X, 2, mask = X > 2, method = "als"), class = "aspectr_error_input_argument")
  expect_error(nmf(X, 2, mask = X > 2, accelerate = TRUE), class = "aspectr_error_input_argument")
  expect_error(nmf(X, 2, mask = matrix(TRUE, 5, 4)), class = "aspectr_error_input_value")
  Xn <- X; Xn[1, 1] <- -1; Xn[2, 2] <- NA
  expect_error(nmf(Xn, 2), class = "aspectr_error_input_value")
  # (on shards: the same checks; see test-nmf-shards-weights.R)
  sh <- shards(list(X[1:2, ], X[3:5, ]))
  expect_error(nmf(sh, 2, mask = X > 2, method = "als"), class = "aspectr_error_input_argument")
  expect_error(nmf(sh, 2, col_weights = c(1, NA, 1, 1)), class = "aspectr_error_input_value")
})

test_that("predict() folds rows and columns with missing cells in from their observed cells", {
  set.seed(31)
  m <- 30; n <- 20
  X <- matrix(runif(m * 3), m) %*% matrix(runif(3 * n), 3)
  for (loss in c("frobenius", "kl")) {
    # (not counts: the KL fit's likelihood warning is beside the point here)
    fit <- suppressWarnings(nmf(X, 3, loss = loss, seed = 1, tol = 1e-10, max_iter = 3000))
    new <- X[1:4, ]
    new[cbind(1:4, c(2, 5, 7, 11))] <- NA
    Wn <- predict(fit, new, tol = 1e-12, max_iter = 5000)
    # the same as the fold-in of each row's observed cells alone
    for (i in 1:4) {
      o <- !is.na(new[i, ])
      sub <- fit
      sub$H <- fit$H[, o, drop = FALSE]
      sub$dims <- c(nrow(fit$W), sum(o))
      w1 <- predict(sub, new[i, o, drop = FALSE], tol = 1e-12, max_iter = 5000)
      expect_equal(unname(Wn[i, ]), unname(w1[1, ]), tolerance = 1e-6, label = paste(loss, i))
    }
    # and the imputation of the missing cells is close to the data
    imp <- (Wn %*% fit$H)[is.na(new)]
    expect_lt(max(abs(imp - X[1:4, ][is.na(new)]) / X[1:4, ][is.na(new)]), 0.05)
    Hn <- predict(fit, t(t(X[, 1:3])), margin = "columns")
    Xc <- X[, 1:3]; Xc[c(1, 40, 77)] <- NA
    Hm <- predict(fit, Xc, margin = "columns", tol = 1e-12, max_iter = 5000)
    expect_equal(dim(Hm), c(3L, 3L))
    expect_true(all(is.finite(Hm)))
  }
})

test_that("nmf_rank(method = \"mask\") finds a planted rank, dense and sparse", {
  set.seed(41)
  m <- 60; n <- 50
  X <- matrix(runif(m * 3), m) %*% matrix(runif(3 * n), 3) + matrix(runif(m * n, 0, 0.02), m)
  r <- nmf_rank(X, k = 1:5, method = "mask", nrun = 2, seed = 1, method_nmf = "anls", tol = 1e-5,
                max_iter = 3000)
  expect_s3_class(r, "aspectr_nmf_rank")
  expect_equal(r$best, 3L)
  expect_equal(nrow(r$details), 10L)
  expect_true(all(r$table$test_error[r$table$k != 3] > r$table$test_error[r$table$k == 3]))
  expect_output(print(r), "masked cells")
  # sparse counts of a planted rank-4 Poisson model
  W <- matrix(rgamma(120 * 4, 0.3), 120); H <- matrix(rgamma(4 * 80, 0.3), 4)
  C <- matrix(rpois(120 * 80, 3 * W %*% H), 120)
  Cs <- Matrix::Matrix(C, sparse = TRUE)
  r2 <- nmf_rank(Cs, k = 2:6, method = "mask", nrun = 2, seed = 2, loss = "kl", tol = 1e-6, max_iter = 500)
  expect_equal(r2$best, 4L)
  # the same cells are held out for the same seed: reproducible
  r3 <- nmf_rank(Cs, k = 2:6, method = "mask", nrun = 2, seed = 2, loss = "kl", tol = 1e-6, max_iter = 500)
  expect_identical(r2$table, r3$table)
})

test_that("weighted beta-divergence updates equal the plain-R reference", {
  ref_beta <- function(X, Om, W, H, b, iters) {
    g <- if (b < 1) 1 / (2 - b) else if (b > 2) 1 / (b - 1) else 1
    lo <- exp(-690 / max(1, 2 - b))
    div <- function(V) {
      V <- pmax(V, 1e-300)
      sum(Om * pmax(0, (X^b + (b - 1) * V^b - b * X * V^(b - 1)) / (b * (b - 1))))
    }
    obj <- numeric(iters)
    for (it in seq_len(iters)) {
      V <- pmax(W %*% H, lo)
      W <- W * (pmax((Om * X * V^(b - 2)) %*% t(H), 0) / ((Om * V^(b - 1)) %*% t(H)))^g
      V <- pmax(W %*% H, lo)
      H <- H * (pmax(t(W) %*% (Om * X * V^(b - 2)), 0) / (t(W) %*% (Om * V^(b - 1))))^g
      obj[it] <- div(W %*% H)
    }
    list(W = W, H = H, objective = obj)
  }
  for (b in c(0.5, 1.5, 3)) {
    cs <- wt_case(50 + 10 * b, m = 8, n = 6, na = 0.2)
    rw <- runif(8, 0.5, 2)
    Om <- wt_omega(cs$X, rows = rw)
    X0 <- cs$X; X0[is.na(X0)] <- 0
    fit <- nmf(cs$X, 2, loss = "beta", beta = b, init = list(W = cs$W0[1:8, ], H = cs$H0[, 1:6]), max_iter = 5,
               tol = 0, eps = 0, row_weights = rw)
    ref <- ref_beta(X0, Om, cs$W0[1:8, ], cs$H0[, 1:6], b, 5)
    expect_equal(unname(fit$W), ref$W, tolerance = 1e-8, label = paste("beta", b))
    expect_equal(unname(fit$H), ref$H, tolerance = 1e-8, label = paste("beta", b))
    expect_equal(fit$objective, ref$objective, tolerance = 1e-9, label = paste("beta", b))
    # and the unweighted updates are those with every weight 1
    f1 <- nmf(X0, 2, loss = "beta", beta = b, init = list(W = cs$W0[1:8, ], H = cs$H0[, 1:6]), max_iter = 5,
              tol = 0, eps = 0)
    f2 <- nmf(X0, 2, loss = "beta", beta = b, init = list(W = cs$W0[1:8, ], H = cs$H0[, 1:6]), max_iter = 5,
              tol = 0, eps = 0, row_weights = rep(1, 8))
    expect_equal(f1$W, f2$W, tolerance = 1e-13)
  }
})

test_that("plsa() with missing cells is the normalized weighted KL fit, valued on the observed cells", {
  set.seed(61)
  m <- 25; n <- 18
  X <- matrix(rpois(m * n, 4 * (matrix(runif(m * 2), m) %*% matrix(runif(2 * n), 2))), m)
  X[sample(m * n, 60)] <- NA
  p <- plsa(X, 2, seed = 3, max_iter = 200, tol = 1e-9)
  f <- nmf(X, 2, loss = "kl", method = "cd", init = "random", seed = 3, max_iter = 200, tol = 1e-9)
  q <- as_plsa(f)
  expect_equal(p$factors, q$factors, tolerance = 1e-12)
  expect_equal(as.numeric(p$lambda), as.numeric(q$lambda), tolerance = 1e-12)
  # the value: D(G_o || P_o) over the observed cells
  P <- p$factors[[1]] %*% diag(as.numeric(p$lambda)) %*% t(p$factors[[2]])
  o <- !is.na(X)
  G <- X[o] / sum(X[o]); Po <- P[o] / sum(P[o])
  expect_equal(p$value, sum(ifelse(G > 0, G * log(G / Po), 0)), tolerance = 1e-9)
  expect_equal(p$objective[length(p$objective)], p$value, tolerance = 1e-9)
  expect_true(all(diff(p$objective) <= 1e-12))
  # the same with a mask on the zero-filled data
  X0 <- X; X0[!o] <- 0
  p2 <- plsa(X0, 2, mask = !o, seed = 3, max_iter = 200, tol = 1e-9)
  expect_equal(p2$factors, p$factors, tolerance = 1e-12)
  expect_error(plsa(X, 2, loss = "tsallis", tempering = 0.8), class = "aspectr_error_input_argument")
  expect_error(plsa(X, 2, tempering = 0.8), class = "aspectr_error_input_argument")
  expect_error(plsa(X, 2, method = "em"), class = "aspectr_error_input_argument")
  expect_error(plsa(X, 2, callback = function(...) TRUE), class = "aspectr_error_input_argument")
})

test_that("a cell both NA and masked is left out once", {
  set.seed(42)
  m <- 30; n <- 20
  x <- pmax(matrix(rexp(m * 3), m) %*% matrix(rexp(3 * n), 3) + matrix(rnorm(m * n, sd = .3), m), 0)
  gone <- matrix(runif(m * n) < 0.2, m)
  x_na <- replace(x, gone, NA)
  a <- nmf(x_na, 3, seed = 1, max_iter = 30, tol = 0)
  b <- nmf(x_na, 3, seed = 1, max_iter = 30, tol = 0, mask = gone)
  d <- nmf(replace(x, gone, 0), 3, seed = 1, max_iter = 30, tol = 0, mask = gone)
  expect_equal(fitted(a), fitted(b), tolerance = 1e-12)
  expect_equal(fitted(a), fitted(d), tolerance = 1e-12)
  expect_equal(sum(b$weighting$left_out), sum(gone))
})

test_that("masked cross-validation takes NA cells; plsa_rank() holds out cells", {
  set.seed(43)
  m <- 50; n <- 40
  X <- matrix(runif(m * 3), m) %*% matrix(runif(3 * n), 3) + matrix(runif(m * n, 0, 0.02), m)
  Xna <- X; Xna[sample(m * n, 200)] <- NA
  r <- nmf_rank(Xna, k = 2:4, method = "mask", nrun = 1, seed = 1, method_nmf = "anls", tol = 1e-5,
                max_iter = 2000)
  expect_equal(r$best, 3L)
  expect_error(nmf_rank(Xna, k = 2:3, method = "cv"), class = "aspectr_error_input")
  # pLSA by held-out cells of planted counts
  W <- matrix(rgamma(80 * 3, 2), 80) * rep(c(1, 0.05), c(40, 40)); H <- matrix(rgamma(3 * 60, 2), 3)
  W[cbind(1:80, rep(1:3, length.out = 80))] <- W[cbind(1:80, rep(1:3, length.out = 80))] * 8
  C <- Matrix::Matrix(matrix(rpois(80 * 60, W %*% H), 80), sparse = TRUE)
  pr <- plsa_rank(C, k = 1:5, split = "cells", seed = 1, tol = 1e-6, max_iter = 500)
  expect_s3_class(pr, "aspectr_plsa_rank")
  expect_equal(pr$best, 3L)
  expect_true(all(c("k", "perplexity", "iterations") %in% names(pr$table)))
  expect_error(plsa_rank(C, k = 2:3, split = "cells", criterion = "BIC"), class = "aspectr_error_input_argument")
})

test_that("weighted fits are the same for any thread count and seed-reproducible", {
  set.seed(71)
  # (large enough for two threads to share every pass)
  X <- matrix(rpois(300 * 200, 3), 300)
  X[sample(length(X), 6000)] <- NA
  cw <- runif(200)
  for (cb in combos) {
    a <- nmf(X, 8, loss = cb[1], method = cb[2], seed = 5, max_iter = 10, tol = 0, threads = 1, col_weights = cw)
    b <- nmf(X, 8, loss = cb[1], method = cb[2], seed = 5, max_iter = 10, tol = 0, threads = 2, col_weights = cw)
    expect_identical(a$W, b$W, label = paste(cb, collapse = " "))
    expect_identical(a$objective, b$objective, label = paste(cb, collapse = " "))
  }
})

test_that("nmf_rank() holds out the same cells at every rank and suggests by the one-standard-error rule", {
  # known answers of the rule on a table
  tab <- data.frame(k = 2:5, test_error = c(0.30, 0.101, 0.100, 0.102), test_se = c(0.01, 0.002, 0.002, 0.003))
  expect_identical(aspectr:::cv_rank_best(tab, "1se"), 3L)
  expect_identical(aspectr:::cv_rank_best(tab, "min"), 4L)
  tab$test_se <- NA_real_  # one repetition: no standard error, the smallest error
  expect_identical(aspectr:::cv_rank_best(tab, "1se"), 4L)
  # a rank whose error is NA is passed over
  tab2 <- data.frame(k = 2:5, test_error = c(0.3, NA, 0.1, 0.105), test_se = c(0.01, NA, 0.01, 0.01))
  expect_identical(aspectr:::cv_rank_best(tab2, "1se"), 4L)
  # a planted rank 4 whose smallest mean held-out error fell at 5 to 7 when
  # each fit drew its own cells
  set.seed(1)
  X <- matrix(rgamma(300 * 4, 1), 300) %*% matrix(rgamma(4 * 120, 1), 4) + matrix(runif(300 * 120, 0, 0.1), 300)
  r <- suppressMessages(nmf_rank(X, k = 2:6, method = "mask", nrun = 3, seed = 1, threads = 1))
  expect_identical(r$best, 4L)
  expect_identical(r$rule, "1se")
  expect_equal(r$table$test_se, r$table$test_sd / sqrt(3))
  expect_output(print(r), "one-standard-error rule")
  rm <- suppressMessages(nmf_rank(X, k = 2:6, method = "mask", nrun = 3, seed = 1, threads = 1, rule = "min"))
  expect_identical(rm$best, rm$table$k[which.min(rm$table$test_error)])
  expect_identical(rm$details, r$details)
  # every fit's held-out error, recomputed with repetition r's cells (the
  # same at every rank) and the fit's own start
  s <- aspectr:::cv_seeds(1L, 3, nrow(r$details))
  for (t in c(1, 5, 8, 13)) {
    d <- r$details[t, ]
    ij <- aspectr:::with_seed(s$held[d$run], aspectr:::held_cells(X, 0.1, NULL))
    M <- Matrix::sparseMatrix(i = ij[, 1], j = ij[, 2], dims = dim(X))
    f <- suppressMessages(nmf(X, d$k, mask = M, init = "nndsvda", seed = s$fit[t], loss = "frobenius",
                              max_iter = 500, tol = 1e-5, threads = 1))
    v <- rowSums(f$W[ij[, 1], , drop = FALSE] * t(f$H)[ij[, 2], , drop = FALSE])
    expect_equal(d$test_error, sqrt(sum((X[ij] - v)^2) / sum(X[ij]^2)), tolerance = 1e-12)
  }
  expect_error(nmf_rank(X, k = 2:3, rule = "max"), class = "aspectr_error_input_argument", regexp = "rule")
})

test_that("nmf_rank() under KL does not warn that its imputed cells are not counts", {
  set.seed(4)
  C <- matrix(rpois(40 * 30, 3), 40)
  expect_no_warning(r <- suppressMessages(nmf_rank(C, k = 2:3, method = "cv", loss = "kl", nrun = 1, seed = 1,
                                                   max_iter = 50, threads = 1)))
  expect_true(all(is.finite(r$table$test_error)))
})

test_that("nmf_rank() says once how many of its fits did not converge", {
  set.seed(5)
  X <- matrix(runif(30 * 3), 30) %*% matrix(runif(3 * 20), 3) + matrix(runif(600, 0, 0.05), 30)
  for (m in c("cv", "mask", "consensus")) {
    got <- collect_messages(nmf_rank(X, k = 2:3, method = m, nrun = 2, seed = 1, max_iter = 3, tol = 0, threads = 1))
    r <- got$value
    msgs <- got$messages
    expect_length(msgs, 1)
    expect_s3_class(msgs[[1]], "aspectr_message_not_converged")
    expect_match(conditionMessage(msgs[[1]]), "4 of the 4 fits of nmf_rank\\(\\) did not converge in 3 iterations")
    conv <- unname(if (m == "consensus") unlist(r$details$converged) else r$details$converged)
    expect_identical(conv, rep(FALSE, 4))
  }
  # fits that converge: no message
  expect_no_message(r <- nmf_rank(X, k = 2:3, method = "mask", nrun = 2, seed = 1, max_iter = 5000, tol = 1e-4,
                                  threads = 1))
  expect_identical(r$details$converged, rep(TRUE, 4))
})

test_that("weighting errors say what is wrong with the weights", {
  set.seed(6)
  X <- matrix(runif(600), 30, 20)
  expect_error(nmf(X, 3, row_weights = c(-1, rep(1, 29))), class = "aspectr_error_input_value",
               regexp = "`row_weights` must be non-negative; it has 1 negative entry \\(the smallest -1\\)")
  expect_error(nmf(X, 3, col_weights = 1:3), class = "aspectr_error_input_value", regexp = "it is an integer vector")
  # nothing left to fit: named as such, whichever argument left it out
  for (args in list(list(mask = matrix(TRUE, 30, 20)), list(weights = matrix(0, 30, 20)), list(row_weights = rep(0, 30)))) {
    e <- expect_error(do.call(nmf, c(list(X, 3), args)), class = "aspectr_error_input_empty")
    expect_s3_class(e, "aspectr_error_input_value")
    expect_match(conditionMessage(e), "no positive value in a cell that counts")
  }
  expect_error(plsa(X * 10, 2, mask = matrix(TRUE, 30, 20)), class = "aspectr_error_input_empty",
               regexp = "cell that counts")
})

test_that("fits and rank selections of data at the ends of double precision fail or warn, classed", {
  set.seed(7)
  X <- matrix(runif(600), 30, 20)
  expect_error(nmf(X, 3, loss = "beta", beta = 1e10, max_iter = 20), class = "aspectr_error_numeric", regexp = "beta")
  # held-out errors in the units of the data's largest value: tiny data as any other
  r_one <- suppressWarnings(nmf_rank(X, k = 1:2, nrun = 2, seed = 1, max_iter = 50))
  for (s in c(1e-300, 1e160)) {
    for (m in c("cv", "mask")) {
      r_s <- suppressWarnings(nmf_rank(X * s, k = 1:2, method = m, nrun = 2, seed = 1, max_iter = 50))
      r_1 <- if (m == "cv") r_one else suppressWarnings(nmf_rank(X, k = 1:2, method = m, nrun = 2, seed = 1, max_iter = 50))
      expect_equal(r_s$table$test_error, r_1$table$test_error, tolerance = 1e-6)
      expect_equal(r_s$table$train_error, r_1$table$train_error, tolerance = 1e-6)
    }
  }
})
