# Numerical safeguards: SNTF with alpha >= 2 and the orthogonality step,
# scale invariance of every scale-free fit, index and size checks of sparse
# tensors, storage-independent symnmf starts, nnz() of symtensors.

multipliers <- c(1e-300, 1e-150, 1e-20, 1e20, 1e150, 1e300)

# ---- 1. SNTF: alpha >= 2 with orthogonal = TRUE -----------------------------

test_that("sntf() with alpha >= 2 gives finite, correct fits with and without the orthogonality step", {
  p <- sym_ref_planted(n = 12, k = 3, overlap = 0.2, seed = 4)
  offdiag <- function(G) { C <- stats::cov2cor(crossprod(G)); max(abs(C[upper.tri(C)])) }
  for (a in c(2, 3, 5)) {
    plain <- NULL
    for (o in c(FALSE, TRUE)) {
      fit <- sntf(p$Y, 3, alpha = a, orthogonal = o, seed = 1, max_iter = 400, tol = 1e-8)
      lab <- paste("alpha", a, "orthogonal", o)
      expect_true(all(is.finite(fit$objective)), label = lab)
      expect_true(all(is.finite(fit$G)) && all(fit$G >= 0), label = lab)
      # the reported objective is the alpha divergence of the returned G
      # (plain-R dense reference)
      ref <- sym_ref_alpha_div(p$Y, sym_ref_model(unname(fit$G)), a)
      expect_equal(fit$value, ref, tolerance = 1e-6 * max(1, abs(ref)), label = lab)
      if (fit$converged) {
        o2 <- c(fit$initial, fit$objective)
        m <- length(o2)
        expect_lte(abs(o2[m - 2] - o2[m - 1]), 1e-8 * abs(o2[m - 2]))
      }
      if (!o) {
        plain <- fit
        expect_gt(sym_ref_congruence(fit$G, p$G), 0.99)
      } else {
        # the step makes the columns more orthogonal than the plain fit
        expect_lt(offdiag(fit$G), offdiag(plain$G))
      }
    }
  }
})

# ---- 2. Scale invariance ----------------------------------------------------

test_that("plsa() on matrices is scale invariant for every loss, dense and sparse", {
  set.seed(1)
  X <- matrix(rpois(200, 2), 20)
  configs <- list(list(loss = "kl"), list(loss = "kl", tempering = 0.8),
                  list(loss = "tsallis", q = 0.5), list(loss = "l2"))
  for (cf in configs) {
    for (sparse in c(FALSE, TRUE)) {
      conv <- if (sparse) function(x) Matrix::Matrix(x, sparse = TRUE) else identity
      ref <- do.call(plsa, c(list(conv(X), 2, seed = 1), cf))
      for (m in multipliers) {
        lab <- paste(cf$loss, cf$tempering, sparse, m)
        fit <- do.call(plsa, c(list(conv(X * m), 2, seed = 1), cf))
        expect_equal(fit$factors, ref$factors, tolerance = 1e-10, label = lab)
        expect_equal(fit$lambda, ref$lambda, tolerance = 1e-10, label = lab)
        expect_equal(fit$value, ref$value, tolerance = 1e-10, label = lab)
        expect_identical(fit$converged, ref$converged, label = lab)
        expect_identical(fit$iterations, ref$iterations, label = lab)
      }
    }
  }
})

test_that("plsa() on N-way tensors is scale invariant (dense array and sptensor)", {
  set.seed(2)
  X <- array(rpois(4 * 5 * 3, 2), c(4, 5, 3))
  for (loss in c("kl", "tsallis", "l2")) {
    ref <- plsa(X, 2, loss = loss, seed = 1, max_iter = 300)
    for (m in multipliers) {
      for (x in list(X * m, as_sptensor(X * m))) {
        fit <- plsa(x, 2, loss = loss, seed = 1, max_iter = 300)
        expect_equal(fit$factors, ref$factors, tolerance = 1e-10, label = paste(loss, m))
        expect_equal(fit$value, ref$value, tolerance = 1e-10, label = paste(loss, m))
      }
    }
  }
})

test_that("the KL value of scaled-down data is the KL divergence (not the negative entropy)", {
  set.seed(1)
  X <- matrix(rpois(200, 2), 20)
  fit <- plsa(X * 1e-20, 2, seed = 1)
  G <- X / sum(X)
  P <- fit$factors[[1]] %*% diag(fit$lambda) %*% t(fit$factors[[2]])
  expect_equal(fit$value, sum(ifelse(G > 0, G * log(G / P), 0)), tolerance = 1e-8)
  expect_gt(fit$value, 0)
})

test_that("plsa() fits data whose total exceeds the double range", {
  set.seed(1)
  X <- matrix(rpois(200, 2), 20) * 1e7
  ref <- plsa(X, 2, seed = 1)
  fit <- plsa(X * 1e300, 2, seed = 1)  # sum(X * 1e300) is Inf
  expect_equal(fit$factors, ref$factors, tolerance = 1e-10)
  expect_equal(fit$value, ref$value, tolerance = 1e-10)
  expect_equal(fit$neg_entropy, ref$neg_entropy, tolerance = 1e-12)
  expect_true(is.finite(fit$kl))
})

test_that("ntf() is scale equivariant: same normalized factors, weights scaled", {
  set.seed(3)
  X <- array(rpois(5 * 4 * 3, 3), c(5, 4, 3))
  for (cf in list(list(loss = "frobenius", method = "hals"), list(loss = "frobenius", method = "mu"),
                  list(loss = "kl"))) {
    ref <- do.call(ntf, c(list(X, 2, seed = 1, max_iter = 200), cf))
    for (m in multipliers) {
      lab <- paste(cf$loss, cf$method, m)
      fit <- suppressWarnings(do.call(ntf, c(list(as_sptensor(X * m), 2, seed = 1, max_iter = 200), cf)))
      expect_equal(fit$factors, ref$factors, tolerance = 1e-10, label = lab)
      expect_equal(unname(fit$weights / m), unname(ref$weights), tolerance = 1e-10, label = lab)
      expect_true(all(is.finite(fit$weights)), label = lab)
    }
  }
  # an objective that does not fit in a double is reported with a warning
  expect_warning(ntf(X * 1e300, 2, seed = 1, max_iter = 20), class = "aspectr_warning_numeric")
  # the values are divided by s = 2^1023 as they are read, unless 1 / s is
  # not a normal number (as here): then a divided copy is fitted
  ref <- ntf(X, 2, seed = 1, max_iter = 200)
  big <- X / max(X) * 2^1023
  # (x's total overflows: the start's scale comes from the total of x / s)
  fit <- suppressWarnings(ntf(big, 2, seed = 1, max_iter = 200))
  expect_equal(fit$factors, ref$factors, tolerance = 1e-10)
  # a KL fit, whose objective is in units of the total, asks for x / c
  expect_error(ntf(big, 2, loss = "kl", seed = 1), class = "aspectr_error_input_value")
})

test_that("value checks count missing, infinite, negative and zero values in one pass", {
  v <- c(3, NA, -2, 0, Inf, NaN, -Inf, 0, 7)
  expect_identical(aspectr:::cpp_value_counts(v),
                   c(na = 2, inf = 2, negative = 2, zero = 2, min = -Inf))
  expect_identical(aspectr:::cpp_value_counts(c(4L, NA, 0L, -3L)),
                   c(na = 1, inf = 0, negative = 1, zero = 1, min = -3))
  expect_identical(aspectr:::cpp_value_counts(c(TRUE, FALSE, NA)),
                   c(na = 1, inf = 0, negative = 0, zero = 1, min = 0))
  expect_identical(aspectr:::cpp_value_counts(numeric(0))[["min"]], Inf)
  e <- tryCatch(aspectr:::check_values(c(1, -0.5, -2.25, 3), "x", NULL), error = identity)
  expect_s3_class(e, "aspectr_error_input_value")
  expect_match(conditionMessage(e), "2 negative entries (the smallest -2.25)", fixed = TRUE)
  e <- tryCatch(aspectr:::check_values(c(1, NA, 3), "x", NULL), error = identity)
  expect_match(conditionMessage(e), "1 missing entry", fixed = TRUE)
  # a hand-built tensor's explicit zeros are dropped before the fit
  t0 <- structure(list(index = cbind(c(1L, 2L, 2L), c(1L, 1L, 2L), c(1L, 2L, 2L)), values = c(2, 0, 5),
                       dims = c(2L, 2L, 2L), dimnames = NULL), class = c("aspectr_sptensor", "aspectr_tensor"))
  d <- aspectr:::tensor_to_data(t0, "x", NULL)
  expect_identical(d$val, c(2, 5))
  expect_identical(d$idx, matrix(c(0L, 0L, 0L, 1L, 1L, 1L), 3, 2))
})

test_that("symnmf() is scale equivariant (H scales by the square root)", {
  set.seed(4)
  H0 <- matrix(runif(30), 15, 2)
  A <- tcrossprod(H0) + 0.01
  for (method in c("anls", "hals", "fpals")) {
    ref <- symnmf(A, 2, method = method, coupling = 1, seed = 1, max_iter = 300)
    for (m in multipliers) {
      fit <- suppressWarnings(symnmf(A * m, 2, method = method, coupling = m, seed = 1, max_iter = 300))
      lab <- paste(method, m)
      expect_equal(unname(fit$H / sqrt(m)), unname(ref$H), tolerance = 1e-10, label = lab)
      expect_equal(fit$rel_error, ref$rel_error, tolerance = 1e-8, label = lab)
      expect_identical(fit$iterations, ref$iterations, label = lab)
    }
  }
})

test_that("symnmf()'s default coupling (the largest entry) scales with the data", {
  # the former default, max(a)^2, made lambda/2 ||W - H||^2 outweigh the fit
  # of data of large entries: symnmf(A * 1e10) stopped at its start
  # (1 iteration, rel_error 0.36, "converged"), and from x 10 on needed
  # other iterations than A
  set.seed(4)
  H0 <- matrix(runif(30), 15, 2)
  A <- tcrossprod(H0) + 0.01
  A <- A / max(A)  # largest entry 1: the default coupling is 1
  for (method in c("anls", "hals")) {
    ref <- symnmf(A, 2, method = method, seed = 1, max_iter = 300)
    expect_identical(ref$coupling, 1)
    expect_true(ref$converged && ref$iterations > 5, label = method)
    expect_equal(ref$H, symnmf(A, 2, method = method, coupling = 1, seed = 1, max_iter = 300)$H)
    for (m in c(1e-200, 1e-10, 7, 1e10, 1e200)) {
      fit <- suppressWarnings(symnmf(A * m, 2, method = method, seed = 1, max_iter = 300))
      lab <- paste(method, m)
      expect_equal(fit$coupling, m, label = lab)
      expect_equal(unname(fit$H / sqrt(m)), unname(ref$H), tolerance = 1e-10, label = lab)
      expect_equal(fit$rel_error, ref$rel_error, tolerance = 1e-8, label = lab)
      expect_identical(fit$iterations, ref$iterations, label = lab)
    }
  }
})

test_that("sntf() is scale equivariant (G scales by the L-th root)", {
  p <- sym_ref_planted(n = 9, k = 3, overlap = 0.1, seed = 2)
  # noisy, so that no objective sits at the level of rounding errors (the
  # fixed-point methods damp their step when it rises)
  set.seed(2)
  p$Y <- sym_ref_symmetrize(p$Y * exp(array(rnorm(9^3, 0, 0.1), rep(9, 3))))
  for (cf in list(list(method = "alpha", alpha = 1), list(method = "alpha", alpha = 2),
                  list(method = "beta", beta = 1), list(method = "unfold"), list(method = "average"))) {
    ref <- do.call(sntf, c(list(p$Y, 3, seed = 1, max_iter = 200, tol = 0), cf))
    for (m in multipliers) {
      lab <- paste(cf$method, cf$alpha, cf$beta, m)
      fit <- suppressWarnings(do.call(sntf, c(list(p$Y * m, 3, seed = 1, max_iter = 200, tol = 0), cf)))
      # "average" is a fixed-point iteration whose damping reacts to rises
      # of the objective: a one-ulp change of the input (x * m is not exactly
      # representable) moves its path by about 1e-10
      tol <- if (cf$method == "average") 1e-8 else 1e-10
      expect_equal(unname(fit$G / m^(1 / 3)), unname(ref$G), tolerance = tol, label = lab)
      expect_lt(abs(fit$rel_error - ref$rel_error), 1e-7)
      expect_true(all(is.finite(fit$G)), label = lab)
      expect_false(is.nan(fit$value), label = lab)
    }
  }
})

# ---- 3. Index and size checks of sparse tensors ------------------------------

test_that("sptensor() and read_tns() refuse indices and sizes the package cannot address", {
  big <- 2^31
  expect_error(sptensor(rbind(c(1, big)), 1), class = "aspectr_error_input_value")
  expect_error(sptensor(rbind(c(1, big)), 1), "2147483647")
  expect_error(sptensor(rbind(c(1, 1)), 1, dims = c(2, big)), class = "aspectr_error_input_value")
  expect_error(sptensor(rbind(c(1, 1)), 1, dims = c(2, -1)), class = "aspectr_error_input_value")
  expect_error(sptensor(rbind(c(1, 1)), 1, dims = c(2, 1.5)), class = "aspectr_error_input_value")
  expect_error(sptensor(rbind(c(1, 1)), 1, dims = c(2, Inf)), class = "aspectr_error_input_value")
  # no coercion warning on the way
  expect_no_warning(try(sptensor(rbind(c(1, big)), 1), silent = TRUE))
  f <- tempfile(fileext = ".tns")
  writeLines(c("1 1 1", "2 3000000000 2"), f)
  expect_error(read_tns(f), class = "aspectr_error_input_value")
  writeLines(c("1 1 1", "2 3 2"), f)
  expect_error(read_tns(f, dims = c(2, -3)), class = "aspectr_error_input_value")
  expect_equal(dim(read_tns(f)), c(2L, 3L))
})

test_that("hand-built tensors with bad indices or sizes are refused before the core", {
  mk <- function(index, dims) structure(list(index = index, values = rep(1, nrow(index)), dims = dims,
                                             dimnames = NULL), class = "aspectr_tensor")
  ok <- rbind(c(1L, 1L, 1L), c(2L, 2L, 2L), c(1L, 2L, 2L))
  expect_s3_class(plsa(mk(ok, c(2L, 2L, 2L)), 2, seed = 1, max_iter = 5), "aspectr_plsa")
  zero <- ok; zero[2, 2] <- 0L
  expect_error(plsa(mk(zero, c(2L, 2L, 2L)), 2, seed = 1), class = "aspectr_error_input_value")
  expect_error(ntf(mk(zero, c(2L, 2L, 2L)), 2, seed = 1), class = "aspectr_error_input_value")
  beyond <- ok; beyond[3, 1] <- 5L
  expect_error(plsa(mk(beyond, c(2L, 2L, 2L)), 2, seed = 1), class = "aspectr_error_input_value")
  expect_error(plsa(mk(beyond, c(2L, 2L, 2L)), 2, seed = 1), "mode 1")
  neg <- ok; neg[1, 3] <- -4L
  expect_error(ntf(mk(neg, c(2L, 2L, 2L)), 2, seed = 1), class = "aspectr_error_input_value")
  expect_error(plsa(mk(ok, c(2, 2, 2.5)), 2, seed = 1), class = "aspectr_error_input_value")
  expect_error(plsa(mk(ok, c(2L, NA, 2L)), 2, seed = 1), class = "aspectr_error_input")
  expect_error(sntf(mk(zero, c(2L, 2L, 2L)), 1, seed = 1), class = "aspectr_error_input_value")
  # values: negative, missing or infinite refused; explicit zeros dropped
  # (the fit equals that without the zero cells)
  mkv <- function(values) structure(list(index = rbind(ok, c(2L, 1L, 1L)), values = values, dims = c(2L, 2L, 2L),
                                         dimnames = NULL), class = "aspectr_tensor")
  for (v in list(c(1, 2, -1, 1), c(1, NA, 1, 1), c(1, Inf, 1, 1), c(1, NaN, 1, 1))) {
    expect_error(ntf(mkv(v), 1, loss = "kl", seed = 1), class = "aspectr_error_input_value")
    expect_error(plsa(mkv(v), 1, seed = 1), class = "aspectr_error_input_value")
  }
  with0 <- ntf(mkv(c(1, 2, 3, 0)), 2, loss = "kl", seed = 1, max_iter = 20)
  tw <- mk(ok, c(2L, 2L, 2L)); tw$values <- c(1, 2, 3)
  without <- ntf(tw, 2, loss = "kl", seed = 1, max_iter = 20)
  expect_identical(with0$nnz, 3L)
  expect_equal(with0$objective, without$objective, tolerance = 1e-12)
  expect_true(is.finite(logLik(with0)))
  # the C++ boundary refuses a 0 index even when the R checks are bypassed
  expect_error(aspectr:::cpp_index0_t(matrix(c(1L, 0L), 1)), "1-based")
  d <- list(idx = rbind(c(0L, 1L), c(0L, 5L)), val = c(1, 1), dims = c(2L, 2L))
  expect_error(aspectr:::cpp_loss(d$idx, d$val, d$dims, c(0.5, 0.5), list(diag(2) / 1, diag(2) / 1),
                                  "kl", 1, 1L), "index out of range")
})

test_that("random starts on huge modes do not overflow integers", {
  # d * k beyond the integer range: the size is computed in doubles (the
  # allocation itself is not attempted here: only the size arithmetic)
  d <- 1073741824L; k <- 4L
  expect_false(is.na(as.numeric(d) * k))
  expect_warning(d * k, "NAs produced by integer overflow")
  src <- deparse(aspectr:::random_factor)
  expect_true(any(grepl("as.numeric(d) * k", src, fixed = TRUE)))
  # and lca's draw of all starts
  expect_equal(lengths(aspectr:::random_starts(c(2L, 3L), 2L, 2)[[1]]$factors), c(4L, 6L))
})

# ---- 4. Consistency ---------------------------------------------------------

test_that("symnmf() gives the same fit for dense and sparse storage", {
  set.seed(6)
  t <- runif(90)
  pts <- rbind(cbind(t[1:30], 0.5 * t[1:30]), cbind(t[31:60], 1 - t[31:60]), cbind(t[61:90], 0.2 + 0 * t[61:90]))
  pts <- pts + matrix(rnorm(180, 0, 0.01), 90)
  A <- exp(-as.matrix(dist(pts))^2 / 0.02)
  S <- Matrix::Matrix(A * (A > 1e-3), sparse = TRUE)
  D <- as.matrix(S)
  for (method in c("anls", "hals", "fpals")) {
    a <- symnmf(D, 3, method = method, seed = 1, max_iter = 200)
    b <- symnmf(S, 3, method = method, seed = 1, max_iter = 200)
    expect_equal(unname(a$H), unname(b$H), tolerance = 1e-10, label = method)
    expect_equal(adjusted_rand_index(a$cluster, b$cluster), 1)
  }
})

test_that("nnz() counts the non-zero cells of a symtensor", {
  p <- sym_ref_planted(n = 6, k = 2, overlap = 0, seed = 3)
  y <- as_symtensor(p$Y)
  expect_equal(nnz(y), sum(p$Y != 0))
  expect_equal(nnz(y), nnz(as_sptensor(y)))
  y2 <- symtensor(rbind(c(1, 1, 1), c(1, 2, 3), c(1, 1, 2)), c(1, 2, 3), n = 3)
  expect_equal(nnz(y2), 1 + 6 + 3)
})

test_that("the multistart loop of lca() checks for interrupts between starts", {
  # before, the check came once per round of iterations over every start
  # (nrun = 1000 starts ran for many seconds between checks); now once per
  # batch of starts: with batches of one start per thread (batch_ms = 0)
  # once per `threads` starts
  d <- data.frame(a = rep(c("x", "y"), 30), b = rep(c("u", "v", "w"), 20), c = rep(c("p", "q"), each = 30))
  prep <- aspectr:::lca_prepare(d, FALSE)$data
  b <- aspectr:::with_seed(1, aspectr:::random_start_blocks(prep$dims, 2L, 40))
  count <- function(threads, batch_ms) {
    aspectr:::cpp_lca_check_count(prep$idx, prep$val, prep$dims, b$lambda, b$factors, 11L, 0, threads, 10L, 1L,
                                  batch_ms)
  }
  expect_gte(count(1L, 0), 40)
  expect_gte(count(2L, 0), 20)
  # batches of quick starts grow (each batch under 20 ms here: 40 starts of
  # 10 iterations on 12 cells take well under a millisecond), so the checks
  # are fewer; a batch that took 1e-9 ms would not grow
  expect_lt(count(1L, 20), 40)
  expect_lt(count(2L, 20), 20)
  expect_gte(count(1L, 1e-9), 40)
  # batching does not change the fits
  f1 <- lca(d, 2, nrun = 40, seed = 1, short_iter = 10, threads = 1)
  f2 <- lca(d, 2, nrun = 40, seed = 1, short_iter = 10, threads = 2)
  expect_equal(f1$run_values, f2$run_values, tolerance = 1e-12)
})

test_that("a seeded fit leaves the caller's random number generator as it was", {
  env <- globalenv()
  saved <- if (exists(".Random.seed", envir = env)) get(".Random.seed", envir = env)
  saved_kind <- RNGkind()
  on.exit({
    do.call(RNGkind, as.list(saved_kind))
    if (is.null(saved)) rm(".Random.seed", envir = env) else assign(".Random.seed", saved, envir = env)
  })
  draw <- function() aspectr:::with_seed(5, stats::runif(3))
  ref <- draw()
  # the default generators: the state is restored, and the draws inside are
  # the same whatever state came before
  set.seed(11)
  before <- get(".Random.seed", envir = env)
  expect_identical(draw(), ref)
  expect_identical(get(".Random.seed", envir = env), before)
  # other generators: kinds and state restored, the same draws inside
  suppressWarnings(RNGkind("L'Ecuyer-CMRG", "Box-Muller", "Rounding"))
  suppressWarnings(set.seed(3))
  before <- get(".Random.seed", envir = env)
  expect_identical(suppressWarnings(draw()), ref)
  expect_identical(suppressWarnings(RNGkind()), c("L'Ecuyer-CMRG", "Box-Muller", "Rounding"))
  expect_identical(get(".Random.seed", envir = env), before)
  RNGkind("Mersenne-Twister", "Inversion", "Rejection")
  # no seed yet: none afterwards
  rm(".Random.seed", envir = env)
  expect_identical(draw(), ref)
  expect_false(exists(".Random.seed", envir = env, inherits = FALSE))
  # an lca() fit with a seed
  set.seed(12)
  before <- get(".Random.seed", envir = env)
  invisible(quiet_unidentified(lca(data.frame(a = rep(1:2, 10), b = rep(1:2, each = 10)), 2, seed = 1, nrun = 2, se = FALSE)))
  expect_identical(get(".Random.seed", envir = env), before)
})
