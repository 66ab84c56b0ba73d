# Missing cells, masks, observed cells and weights in ntf(): equal to a
# plain-R reference (helper-ntf-weighted-reference.R) on tiny arrays, the
# forms of the same weights giving the same fit, monotone objectives, and
# classed errors.

ntfw_case <- function(seed, dims = c(5, 4, 3), k = 2) {
  set.seed(seed)
  A <- lapply(dims, function(d) matrix(stats::runif(d * k), d, k))
  cells <- ntfref_cells(dims)
  X <- array(ntfref_model(A, cells), dims) + array(stats::runif(prod(dims), 0, 0.3), dims)
  X[sample(prod(dims), 6)] <- 0  # some zeros
  start <- lapply(dims, function(d) matrix(stats::runif(d * k, 0.2, 1), d, k))
  list(X = X, start = start, dims = dims, k = k)
}

ntfw_methods <- list(c("frobenius", "hals"), c("frobenius", "mu"), c("kl", "cd"), c("kl", "mu"))

test_that("weighted ntf() equals the plain-R reference for every loss and method", {
  cs <- ntfw_case(1)
  X <- cs$X
  set.seed(11)
  na <- sample(prod(cs$dims), 8)
  Xna <- X; Xna[na] <- NA
  W <- array(stats::runif(prod(cs$dims), 0.5, 2), cs$dims)
  W[sample(prod(cs$dims), 4)] <- 0
  mw <- list(c(1, 2, 0.5, 1, 3), NULL, c(1, 1, 2))
  Om <- W; Om[na] <- 0
  Om_mw <- Om * outer(outer(mw[[1]], rep(1, 4)), mw[[3]])
  for (lm in ntfw_methods) {
    for (with_mw in c(FALSE, TRUE)) {
      fit <- ntf(Xna, cs$k, loss = lm[1], method = lm[2], init = cs$start, max_iter = 6, tol = 0,
                 weights = W, mode_weights = if (with_mw) mw)
      ref <- ntfref_fit(X, if (with_mw) Om_mw else Om, cs$start, lm[1], lm[2], 6)
      info <- paste(lm, collapse = "/")
      expect_equal(fit$iterations, 6L)
      expect_equal(fit$objective, ref$objective, tolerance = 1e-8, info = info)
      expect_equal(ntf_model_array(fit), ref$model, tolerance = 1e-8, info = info)
      # the factors: the reference's, normalized and ordered as the fit's
      nrm <- vapply(ref$A, function(a) if (lm[1] == "kl") colSums(a) else sqrt(colSums(a^2)), numeric(cs$k))
      w <- apply(nrm, 1, prod)
      ord <- order(w, decreasing = TRUE)
      expect_equal(unname(fit$weights), w[ord], tolerance = 1e-8, info = info)
      for (n in 1:3) {
        expect_equal(unname(fit$factors[[n]]), sweep(ref$A[[n]], 2, nrm[, n], "/")[, ord], tolerance = 1e-8,
                     info = info)
      }
      expect_identical(fit$weighting$type, c("missing", "cells", if (with_mw) "modes"))
    }
  }
})

test_that("the reference comparison can fail: a wrong reference differs", {
  cs <- ntfw_case(2)
  X <- cs$X
  M <- array(FALSE, cs$dims); M[c(3, 17, 40, 41)] <- TRUE
  Om <- array(1, cs$dims); Om[M] <- 0
  for (lm in ntfw_methods) {
    fit <- ntf(X, cs$k, loss = lm[1], method = lm[2], init = cs$start, max_iter = 4, tol = 0, mask = M)
    ref <- ntfref_fit(X, Om, cs$start, lm[1], lm[2], 4)
    expect_equal(fit$objective, ref$objective, tolerance = 1e-8)
    # ignoring the mask, or one iteration less
    wrong <- ntfref_fit(X, array(1, cs$dims), cs$start, lm[1], lm[2], 4)
    expect_false(isTRUE(all.equal(ntf_model_array(fit), wrong$model, tolerance = 1e-6)))
    short <- ntfref_fit(X, Om, cs$start, lm[1], lm[2], 3)
    expect_false(isTRUE(all.equal(ntf_model_array(fit), short$model, tolerance = 1e-6)))
  }
})

test_that("NA cells, a mask and weight 0 give the same fit; dense equals sparse", {
  cs <- ntfw_case(3)
  X <- cs$X
  set.seed(5)
  cells <- sample(prod(cs$dims), 10)
  Xna <- X; Xna[cells] <- NA
  M <- array(FALSE, cs$dims); M[cells] <- TRUE
  W <- array(1, cs$dims); W[cells] <- 0
  idx <- arrayInd(cells, cs$dims)
  sp <- as_sptensor(X)
  for (lm in ntfw_methods) {
    args <- list(k = cs$k, loss = lm[1], method = lm[2], init = cs$start, max_iter = 5, tol = 0)
    f_na <- do.call(ntf, c(list(Xna), args))
    f_mask <- do.call(ntf, c(list(X, mask = M), args))
    f_w <- do.call(ntf, c(list(X, weights = W), args))
    f_sp <- do.call(ntf, c(list(sp, mask = idx), args))
    f_spt <- do.call(ntf, c(list(sp, mask = sptensor(idx, rep(1, nrow(idx)), dims = cs$dims)), args))
    f_spw <- do.call(ntf, c(list(sp, weights = as_sptensor(W)), args))  # unlisted cells weigh 0: the same here
    for (f in list(f_mask, f_w, f_sp, f_spt, f_spw)) {
      expect_equal(f$objective, f_na$objective, tolerance = 1e-10)
      expect_equal(ntf_model_array(f), ntf_model_array(f_na), tolerance = 1e-10)
    }
    # the mask's cells play no part: changing x there changes nothing
    X2 <- X; X2[cells] <- 100
    f2 <- do.call(ntf, c(list(X2, mask = M), args))
    expect_equal(ntf_model_array(f2), ntf_model_array(f_na), tolerance = 1e-10)
  }
  # a matrix: a sparse Matrix with a logical Matrix mask equals the dense fit
  skip_if_not_installed("Matrix")
  Y <- matrix(cs$X[, , 1], 5)
  MY <- matrix(FALSE, 5, 4); MY[c(2, 7, 11)] <- TRUE
  st <- list(cs$start[[1]], cs$start[[2]])
  a <- ntf(Y, 2, init = st, max_iter = 5, tol = 0, mask = MY)
  b <- ntf(Matrix::Matrix(Y, sparse = TRUE), 2, init = st, max_iter = 5, tol = 0,
           mask = Matrix::Matrix(MY, sparse = TRUE))
  expect_equal(b$objective, a$objective, tolerance = 1e-10)
  expect_equal(unname(fitted(b)), unname(fitted(a)), tolerance = 1e-10)
})

test_that("observed cells of a sparse tensor: the other cells do not count", {
  cs <- ntfw_case(4)
  X <- cs$X
  set.seed(8)
  obs <- sort(sample(prod(cs$dims), 30))
  O <- array(FALSE, cs$dims); O[obs] <- TRUE
  Om <- array(0, cs$dims); Om[obs] <- 1
  sp <- as_sptensor(X)
  oidx <- arrayInd(obs, cs$dims)
  for (lm in ntfw_methods) {
    ref <- ntfref_fit(X, Om, cs$start, lm[1], lm[2], 5)
    a <- ntf(sp, cs$k, loss = lm[1], method = lm[2], init = cs$start, max_iter = 5, tol = 0, observed = oidx)
    b <- ntf(X, cs$k, loss = lm[1], method = lm[2], init = cs$start, max_iter = 5, tol = 0, observed = O)
    expect_equal(a$objective, ref$objective, tolerance = 1e-8)
    expect_equal(ntf_model_array(a), ref$model, tolerance = 1e-8)
    expect_equal(ntf_model_array(b), ref$model, tolerance = 1e-8)
    # observed with weights on them, and a mask on some of them
    W <- array(stats::runif(prod(cs$dims), 0.5, 2), cs$dims)
    M <- array(FALSE, cs$dims); M[obs[1:3]] <- TRUE
    Om2 <- Om * W; Om2[M] <- 0
    ref2 <- ntfref_fit(X, Om2, cs$start, lm[1], lm[2], 5)
    c2 <- ntf(sp, cs$k, loss = lm[1], method = lm[2], init = cs$start, max_iter = 5, tol = 0,
              observed = oidx, weights = W, mask = M)
    expect_equal(c2$objective, ref2$objective, tolerance = 1e-8)
    expect_identical(c2$weighting$base, 0)
  }
})

test_that("trivial weights give the unweighted fits (HALS, MU, KL coordinate descent)", {
  cs <- ntfw_case(5)
  ones <- array(1, cs$dims)
  for (lm in list(c("frobenius", "hals"), c("frobenius", "mu"), c("kl", "cd"))) {
    X <- if (lm[1] == "kl") round(10 * cs$X) else cs$X  # (counts: no warning)
    a <- ntf(X, cs$k, loss = lm[1], method = lm[2], init = cs$start, max_iter = 8, tol = 0)
    b <- ntf(X, cs$k, loss = lm[1], method = lm[2], init = cs$start, max_iter = 8, tol = 0, weights = ones)
    info <- paste(lm, collapse = "/")
    expect_equal(b$objective, a$objective, tolerance = 1e-8, info = info)
    expect_equal(ntf_model_array(b), ntf_model_array(a), tolerance = 1e-8, info = info)
    expect_equal(b$weights, a$weights, tolerance = 1e-8, info = info)
  }
})

test_that("whole-number weights of one mode's slices equal repeated slices", {
  cs <- ntfw_case(6)
  mw1 <- c(2, 1, 1, 3, 0)
  rows <- c(1, 1, 2, 3, 4, 4, 4)
  Xr <- cs$X[rows, , , drop = FALSE]
  st_r <- cs$start; st_r[[1]] <- cs$start[[1]][rows, , drop = FALSE]
  for (lm in list(c("frobenius", "hals"), c("kl", "cd"), c("kl", "mu"), c("frobenius", "mu"))) {
    a <- ntf(cs$X, cs$k, loss = lm[1], method = lm[2], init = cs$start, max_iter = 6, tol = 0,
             mode_weights = list(mw1, NULL, NULL))
    b <- ntf(Xr, cs$k, loss = lm[1], method = lm[2], init = st_r, max_iter = 6, tol = 0,
             weights = array(1, dim(Xr)))
    info <- paste(lm, collapse = "/")
    expect_equal(a$objective, b$objective, tolerance = 1e-8, info = info)
    expect_equal(ntf_model_array(a)[rows, , ], ntf_model_array(b), tolerance = 1e-8, info = info)
  }
})

test_that("a masked matrix: ntf() and nmf() reach the same completion", {
  set.seed(9)
  W0 <- matrix(stats::runif(12 * 2), 12); H0 <- matrix(stats::runif(2 * 9), 2)
  Y <- W0 %*% H0
  M <- matrix(FALSE, 12, 9); M[sample(length(M), 20)] <- TRUE
  a <- ntf(Y, 2, mask = M, seed = 1, max_iter = 5000, tol = 1e-14)
  b <- nmf(Y, 2, mask = M, seed = 1, max_iter = 5000, tol = 1e-14)
  expect_lt(a$value, 1e-12 * sum(Y^2))
  expect_equal(fitted(a)[M], Y[M], tolerance = 1e-4)
  expect_equal(fitted(a)[M], fitted(b)[M], tolerance = 1e-4)
  ak <- ntf(Y, 2, loss = "kl", mask = M, seed = 1, max_iter = 5000, tol = 1e-14)
  expect_equal(fitted(ak)[M], Y[M], tolerance = 1e-3)
})

test_that("weighted objectives never rise (random cases)", {
  reps <- as.integer(Sys.getenv("ASPECTR_PROPERTY_REPS", "4"))
  for (rep in seq_len(reps)) {
    set.seed(100 + rep)
    dims <- sample(3:6, sample(2:4, 1), replace = TRUE)
    k <- sample(1:3, 1)
    X <- array(stats::rpois(prod(dims), 2), dims)
    X[1] <- X[1] + 1
    na <- sample(prod(dims), max(1, prod(dims) %/% 5))
    X[na] <- NA
    W <- array(stats::rexp(prod(dims)), dims)
    for (lm in ntfw_methods) {
      fit <- ntf(X, k, loss = lm[1], method = lm[2], seed = rep, max_iter = 30, tol = 0, weights = W)
      tr <- c(fit$initial, fit$objective)
      expect_true(all(is.finite(tr)))
      expect_true(all(diff(tr) <= 1e-10 * abs(tr[-length(tr)])), info = paste(lm, collapse = "/"))
    }
  }
})

test_that("a masked slice keeps its start; fitted() imputes masked cells", {
  cs <- ntfw_case(7)
  M <- array(FALSE, cs$dims); M[2, , ] <- TRUE  # index 2 of mode 1 never observed
  for (lm in ntfw_methods) {
    fit <- ntf(cs$X, cs$k, loss = lm[1], method = lm[2], init = cs$start, max_iter = 5, tol = 0, mask = M)
    expect_true(all(is.finite(fitted(fit))))
    expect_true(all(diff(c(fit$initial, fit$objective)) <= 1e-10 * fit$initial))
  }
})

test_that("a weighted fit prints its weighting, has no likelihood and tidies", {
  cs <- ntfw_case(10)
  Xc <- round(10 * cs$X)
  Xc[c(2, 9)] <- NA
  fit <- ntf(Xc, 2, loss = "kl", seed = 1, max_iter = 20, tol = 0)
  expect_output(print(fit), "weighted loss: missing cells \\(2 cells left out\\)")
  expect_error(logLik(fit), class = "aspectr_error_unsupported")
  gl <- glance(fit)
  expect_true(is.na(gl$logLik))
  expect_equal(gl$objective, fit$value)
  expect_equal(fitted(fit), ntf_model_array(fit), tolerance = 1e-12, ignore_attr = TRUE)
  expect_false(anyNA(fitted(fit)))
})

test_that("the callback sees each iteration's objective and model; it can stop the fit", {
  cs <- ntfw_case(9)
  M <- array(FALSE, cs$dims); M[c(1, 8, 30)] <- TRUE
  for (lm in ntfw_methods) {
    seen <- numeric(0); last <- NULL
    fit <- ntf(cs$X, cs$k, loss = lm[1], method = lm[2], init = cs$start, max_iter = 5, tol = 0, mask = M,
               callback = function(i, o, f) { seen[i] <<- o; last <<- f; TRUE })
    expect_equal(seen, fit$objective, tolerance = 1e-12)
    # the callback's factors: the model of the fit
    P <- array(ntfref_model(lapply(last, unname), ntfref_cells(cs$dims)), cs$dims)
    expect_equal(P, ntf_model_array(fit), tolerance = 1e-10)
    fit2 <- ntf(cs$X, cs$k, loss = lm[1], method = lm[2], init = cs$start, max_iter = 50, tol = 0, mask = M,
                callback = function(i, o, f) i < 3)
    expect_equal(fit2$iterations, 3L)
    expect_true(fit2$stopped)
  }
})

test_that("bad weighting arguments are classed input errors naming the argument", {
  cs <- ntfw_case(8)
  X <- cs$X
  expect_error(ntf(X, 2, mask = array(TRUE, c(5, 4, 2))), class = "aspectr_error_input_value")
  expect_error(ntf(X, 2, mask = "a"), class = "aspectr_error_input_type")
  expect_error(ntf(X, 2, mask = cbind(1, 1, 9)), class = "aspectr_error_input_value")
  expect_error(ntf(X, 2, observed = array(NA, cs$dims)), class = "aspectr_error_input_value")
  W <- array(1, cs$dims); W[1] <- -1
  expect_error(ntf(X, 2, weights = W), class = "aspectr_error_input_value")
  expect_error(ntf(X, 2, weights = array(1, c(5, 4))), class = "aspectr_error_input_value")
  expect_error(ntf(X, 2, weights = "w"), class = "aspectr_error_input_type")
  expect_error(ntf(X, 2, mode_weights = list(1:5, NULL)), class = "aspectr_error_input_type")
  expect_error(ntf(X, 2, mode_weights = list(1:4, NULL, NULL)), class = "aspectr_error_input_value")
  Xn <- X; Xn[1] <- -1; Xn[2] <- NA
  expect_error(ntf(Xn, 2), class = "aspectr_error_input_value")
  expect_error(ntf(X, 2, mask = array(TRUE, cs$dims)), class = "aspectr_error_input_value")
  err <- tryCatch(ntf(X, 2, weights = array(1, c(5, 4))), error = identity)
  expect_match(conditionMessage(err), "weights")
  expect_identical(err$arg, "weights")
  # shards: every method runs with a mask, KL coordinate descent the
  # default as in memory (test-ntf-shards-weights.R)
  sh <- shards(split_rows(round(10 * X), 2L))
  expect_identical(suppressMessages(ntf(sh, 2, loss = "kl", mask = array(FALSE, cs$dims), seed = 1,
                                        max_iter = 3))$method, "cd")
  # (the Frobenius loss with a mask runs on shards, by HALS as in memory)
  expect_identical(suppressMessages(ntf(sh, 2, mask = array(FALSE, cs$dims), seed = 1, max_iter = 3))$method,
                   "hals")
})

test_that("Frobenius HALS and MU through the model's values equal the Gram-forming updates (random cases)", {
  # the rule applies each row's Gram matrix through the model's values at
  # its left-out or reweighted cells; option aspectr.ntf_gram forms the
  # matrices instead (the same updates up to rounding)
  reps <- as.integer(Sys.getenv("ASPECTR_PROPERTY_REPS", "4"))
  for (rep in seq_len(reps)) {
    set.seed(200 + rep)
    dims <- sample(3:7, sample(2:4, 1), replace = TRUE)
    k <- sample(1:4, 1)
    X <- array(stats::rexp(prod(dims)), dims)
    X[sample(prod(dims), prod(dims) %/% 4)] <- 0
    M <- array(stats::runif(prod(dims)) < 0.2, dims)
    M[ntfref_cells(dims)[, 1] == 1] <- TRUE  # (index 1 of mode 1 never observed)
    W <- array(stats::runif(prod(dims), 0.2, 3), dims)
    mw <- lapply(dims, function(d) if (stats::runif(1) < 0.5) stats::runif(d, 0.5, 2))
    obs <- array(stats::runif(prod(dims)) < 0.6, dims)
    start <- lapply(dims, function(d) matrix(stats::runif(d * k, 0.2, 1), d, k))
    for (m in c("hals", "mu")) {
      for (form in 1:2) {
        args <- list(X, k, method = m, init = start, max_iter = 8, tol = 0, weights = W, mode_weights = mw)
        args <- if (form == 1) c(args, list(mask = M)) else c(args, list(observed = obs))
        a <- do.call(ntf, args)
        op <- options(aspectr.ntf_gram = TRUE)
        b <- tryCatch(do.call(ntf, args), finally = options(op))
        info <- paste(m, form, rep)
        expect_equal(a$objective, b$objective, tolerance = 1e-10, info = info)
        expect_equal(ntf_model_array(a), ntf_model_array(b), tolerance = 1e-10, info = info)
      }
    }
  }
})

test_that("Frobenius HALS and MU equal the plain-R reference on a larger masked and weighted case", {
  set.seed(31)
  dims <- c(9, 7, 6); k <- 4
  A <- lapply(dims, function(d) matrix(stats::runif(d * k), d, k))
  X <- array(ntfref_model(A, ntfref_cells(dims)), dims) + array(stats::runif(prod(dims), 0, 0.2), dims)
  M <- array(stats::runif(prod(dims)) < 0.3, dims)
  M[2, , ] <- TRUE  # index 2 of mode 1 never observed: its row is kept (up to the balancing)
  W <- array(stats::runif(prod(dims), 0.3, 3), dims)
  Om <- W; Om[M] <- 0
  start <- lapply(dims, function(d) matrix(stats::runif(d * k, 0.2, 1), d, k))
  for (m in c("hals", "mu")) {
    fit <- ntf(X, k, method = m, init = start, max_iter = 10, tol = 0, mask = M, weights = W)
    ref <- ntfref_fit(X, Om, start, "frobenius", m, 10)
    expect_equal(fit$objective, ref$objective, tolerance = 1e-8, info = m)
    expect_equal(ntf_model_array(fit), ref$model, tolerance = 1e-8, info = m)
  }
})

test_that("augment() of a weighted ntf() fit lists the cells left out, imputed, and the observed ones", {
  set.seed(21)
  y <- array(stats::rpois(60, 3) + 1, c(5, 4, 3), dimnames = list(letters[1:5], LETTERS[1:4], NULL))
  gone <- rbind(c(2, 1, 1), c(1, 2, 3), c(5, 4, 2))
  yn <- y; yn[gone] <- NA
  for (loss in c("kl", "frobenius")) {
    fit <- suppressMessages(ntf(yn, 2, loss = loss, seed = 1, max_iter = 20))
    a <- augment(fit)
    expect_identical(nrow(a), 3L)
    expect_false(any(a$observed))
    expect_true(all(is.na(a$value)))
    ord <- gone[order(gone[, 3], gone[, 2], gone[, 1]), ]
    expect_identical(a$mode_1, letters[ord[, 1]])
    expect_equal(a$.fitted, fitted(fit)[ord], tolerance = 1e-12, info = loss)
    b <- augment(fit, data = yn)
    expect_identical(sum(b$observed), length(y) - 3L)
    ob <- b[b$observed, ]
    expect_equal(ob$value, y[cbind(match(ob$mode_1, letters), match(ob$mode_2, LETTERS), ob$mode_3)])
    expect_error(augment(fit, data = yn[-1, , ]), class = "aspectr_error_input_newdata")
  }
  # only the observed cells count: augment() lists them
  obs <- rbind(c(1, 1, 1), c(2, 2, 2), c(3, 3, 3), c(4, 4, 1), c(5, 1, 2), c(1, 3, 3))
  fit <- suppressMessages(ntf(y, 2, loss = "kl", observed = obs, seed = 1, max_iter = 10))
  # (no cell left out, no data: no rows, and no warning from R of a
  # zero-extent matrix, as there was)
  expect_no_warning(a0 <- augment(fit))
  expect_identical(nrow(a0), 0L)
  expect_named(a0, c("mode_1", "mode_2", "mode_3", "value", "observed", ".fitted", ".component"))
  fw <- suppressMessages(ntf(y, 2, weights = array(stats::runif(60, 0.5, 2), dim(y)), seed = 1, max_iter = 10))
  expect_no_warning(a0 <- augment(fw))
  expect_identical(nrow(a0), 0L)
  b <- augment(fit, data = y)
  expect_identical(nrow(b), nrow(obs))
  expect_true(all(b$observed))
  expect_equal(sort(b$value), sort(y[obs]))
})
