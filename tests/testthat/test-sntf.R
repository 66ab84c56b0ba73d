# Super-symmetric NTF, symmetric tensors and the symmetric kernels.

sparse_sym_data <- function(n = 7, k = 2, keep = 0.5, seed = 3) {
  set.seed(seed)
  G <- matrix(runif(n * k, 0.2, 1), n, k)
  Y <- sym_ref_model(G)
  mask <- array(runif(n^3) < keep, c(n, n, n))
  mask <- sym_ref_symmetrize(mask) > 0
  list(Y = Y * mask, G = G)
}

test_that("symtensor stores each unordered set once and expands exactly", {
  d <- sparse_sym_data()
  y <- as_symtensor(d$Y)
  expect_s3_class(y, "aspectr_symtensor")
  expect_true(all(apply(y$index, 1, function(r) !is.unsorted(r))))
  expect_equal(anyDuplicated(y$index), 0L)
  expect_equal(as.array(y), d$Y, tolerance = 1e-14)
  expect_identical(dim(y), c(7L, 7L, 7L))
  # stored sets = non-zero cells with sorted indices
  nz <- which(d$Y != 0, arr.ind = TRUE)
  expect_equal(length(y$values), sum(apply(nz, 1, function(r) !is.unsorted(r))))
  # the full sparse tensor round trip
  full <- as_sptensor(y)
  expect_equal(nnz(full), sum(d$Y != 0))
  expect_equal(as_symtensor(full)$values, y$values)
  # multiplicities: 6 for distinct, 3 for one repeat, 1 for i = j = k
  m <- aspectr:::sym_multiplicity(rbind(c(1L, 2L, 3L), c(1L, 1L, 2L), c(2L, 3L, 3L), c(4L, 4L, 4L)))
  expect_equal(m, c(6, 3, 3, 1))
  # symtensor() sorts and merges permutations of one set
  s <- symtensor(rbind(c(3, 1, 2), c(2, 3, 1), c(1, 1, 2)), c(2, 2, 5), n = 3)
  expect_equal(s$index, rbind(c(1L, 1L, 2L), c(1L, 2L, 3L)))
  expect_equal(s$values, c(5, 2))
  a <- as.array(s)
  expect_equal(a[3, 2, 1], 2)
  expect_equal(a[2, 1, 1], 5)
  expect_equal(sum(a != 0), 6 + 3)
  expect_snapshot(print(s))
})

test_that("symmetric contraction and objectives match dense references", {
  d <- sparse_sym_data()
  y <- as_symtensor(d$Y)
  set.seed(11)
  G <- matrix(runif(14, 0.1, 1), 7, 2)
  Z <- sym_ref_model(G)
  idx <- t(y$index - 1L)
  r <- aspectr:::cpp_sym_mttkrp(idx, y$values, 7L, G, 1L)
  expect_equal(r$M, sym_ref_contract(d$Y, G), tolerance = 1e-12)
  expect_equal(r$z, Z[y$index], tolerance = 1e-12)
  loss <- function(method, a = 1, b = 0, l1 = 0, yy = y) {
    aspectr:::cpp_sntf_loss(t(yy$index - 1L), yy$values, 7L, G, method, a, b, l1, 1L)
  }
  for (a in c(0.5, 1, 2)) expect_equal(loss("alpha", a), sym_ref_alpha_div(d$Y, Z, a), tolerance = 1e-10)
  expect_equal(loss("beta", 1, 0), sym_ref_beta_div(d$Y, Z, 0), tolerance = 1e-10)
  expect_equal(loss("beta", 1, 1), sym_ref_beta_div(d$Y, Z, 1), tolerance = 1e-10)
  expect_equal(loss("beta", 1, 1), 0.5 * sum((d$Y - Z)^2), tolerance = 1e-10)
  expect_equal(loss("beta", 1, 1, l1 = 0.3), 0.5 * sum((d$Y - Z)^2) + 0.3 * sum(G), tolerance = 1e-10)
  yc <- aspectr:::sym_complete(y)
  expect_equal(length(yc$values), choose(9, 3))
  for (b in c(-0.5, 0.5, 2)) expect_equal(loss("beta", 1, b, yy = yc), sym_ref_beta_div(d$Y, Z, b), tolerance = 1e-10)
  Yp <- d$Y + 0.05
  yp <- aspectr:::sym_complete(as_symtensor(Yp))
  expect_equal(loss("smart", yy = yp), sym_ref_alpha_div(Yp, Z, 0), tolerance = 1e-10)
  expect_equal(loss("beta", 1, -1, yy = yp), sym_ref_beta_div(Yp, Z, -1), tolerance = 1e-10)
})

test_that("one multiplicative step equals the paper's formulas with the safe exponent", {
  d <- sparse_sym_data()
  y <- as_symtensor(d$Y)
  Yp <- d$Y + 0.05
  yp <- aspectr:::sym_complete(as_symtensor(Yp))
  yc <- aspectr:::sym_complete(y)
  set.seed(12)
  G <- matrix(runif(14, 0.1, 1), 7, 2)
  one <- function(yy, method, a = 1, b = 0, omega = 1, l1 = 0) {
    aspectr:::cpp_sntf_fit(t(yy$index - 1L), yy$values, 7L, G, method, a, b, omega, 0, l1, FALSE,
                           1L, 0, 1L, FALSE)$G
  }
  expect_equal(one(y, "alpha", 1), sym_ref_alpha_step(d$Y, G, 1, 1 / 3), tolerance = 1e-12)
  expect_equal(one(y, "alpha", 0.5), sym_ref_alpha_step(d$Y, G, 0.5, 1 / 3), tolerance = 1e-12)
  expect_equal(one(y, "alpha", 2), sym_ref_alpha_step(d$Y, G, 2, 1 / 6), tolerance = 1e-12)
  expect_equal(one(y, "alpha", 1, omega = 1.5), sym_ref_alpha_step(d$Y, G, 1, 0.5), tolerance = 1e-12)
  expect_equal(one(yp, "smart"), sym_ref_smart_step(Yp, G, 1 / 3), tolerance = 1e-12)
  expect_equal(one(y, "beta", b = 1), sym_ref_beta_step(d$Y, G, 1, 1 / 3), tolerance = 1e-12)
  expect_equal(one(y, "beta", b = 1, l1 = 0.2), sym_ref_beta_step(d$Y, G, 1, 1 / 3, 0.2), tolerance = 1e-12)
  expect_equal(one(yc, "beta", b = 0.5), sym_ref_beta_step(d$Y, G, 0.5, 1 / 3), tolerance = 1e-12)
  expect_equal(one(yc, "beta", b = 2), sym_ref_beta_step(d$Y, G, 2, 1 / 6), tolerance = 1e-12)
  expect_equal(one(yp, "beta", b = -1), sym_ref_beta_step(Yp, G, -1, 1 / 6), tolerance = 1e-12)
})

test_that("the paper's literal exponent diverges where the safe one descends", {
  # eq. 8 with omega = 1 is the exponent 1/alpha, L = 3 times the safe
  # step at alpha = 1: without column normalization it blows up
  d <- sparse_sym_data(keep = 1)
  set.seed(13)
  G <- matrix(runif(14, 0.1, 1), 7, 2)
  f_safe <- f_lit <- numeric(40)
  Gs <- Gl <- G
  for (t in 1:40) {
    Gs <- sym_ref_alpha_step(d$Y, Gs, 1, 1 / 3)
    Gl <- sym_ref_alpha_step(d$Y, Gl, 1, 1)
    f_safe[t] <- sym_ref_alpha_div(d$Y, sym_ref_model(Gs), 1)
    f_lit[t] <- suppressWarnings(sym_ref_alpha_div(d$Y, sym_ref_model(Gl), 1))
  }
  expect_true(all(diff(f_safe) <= 1e-12 * f_safe[-1]))
  expect_true(!is.finite(f_lit[40]) || f_lit[40] > 10 * f_safe[40])
})

test_that("multiplicative methods never increase their objective", {
  d <- sparse_sym_data(n = 9, k = 3, keep = 0.6, seed = 5)
  y <- as_symtensor(d$Y)
  monotone <- function(fit) {
    o <- c(fit$initial, fit$objective)
    all(diff(o) <= 1e-10 * abs(o[-1]) + 1e-12)
  }
  for (a in c(0.5, 1, 2, 3)) {
    fit <- sntf(y, 3, method = "alpha", alpha = a, init = "random", seed = 1, max_iter = 150, tol = 0)
    expect_true(monotone(fit), label = paste("alpha", a))
  }
  Yp <- d$Y + 0.1
  fit <- sntf(Yp, 3, method = "smart", init = "random", seed = 1, max_iter = 150, tol = 0)
  expect_true(monotone(fit))
  for (b in c(-1, -0.5, 0, 0.5, 1, 2)) {
    yy <- if (b <= -1) Yp else y
    for (l1 in c(0, 0.05)) {
      fit <- sntf(yy, 3, method = "beta", cichocki_beta = b, L1 = l1, init = "random", seed = 2, max_iter = 100, tol = 0)
      expect_true(monotone(fit), label = paste("beta", b, "L1", l1))
    }
  }
  # order 4 (the general kernel path)
  set.seed(9)
  G4 <- matrix(runif(12, 0.2, 1), 6, 2)
  Y4 <- array(0, rep(6, 4))
  for (j in 1:2) Y4 <- Y4 + outer(outer(outer(G4[, j], G4[, j]), G4[, j]), G4[, j])
  fit <- sntf(Y4, 2, init = "random", seed = 1, max_iter = 100, tol = 0)
  expect_true(monotone(fit))
  fit <- sntf(Y4, 2, seed = 1, max_iter = 5000, tol = 1e-12)
  expect_lt(fit$rel_error, 1e-3)
  expect_gt(sym_ref_congruence(fit$G, G4), 0.99)
})

test_that("planted super-symmetric factors are recovered by every method", {
  p <- sym_ref_planted(n = 24, k = 3, overlap = 0.05)
  for (m in c("alpha", "smart", "beta", "unfold", "average")) {
    fit <- sntf(p$Y, 3, method = m, seed = 1, max_iter = 3000, tol = 1e-10)
    expect_gt(sym_ref_congruence(fit$G, p$G), 0.99)
    expect_equal(sort(unname(tabulate(fit$cluster, 3))), c(8, 8, 8))
    if (m != "average") expect_lt(fit$rel_error, 1e-3)
  }
  fit <- sntf(p$Y, 3, seed = 1, tol = 1e-12, max_iter = 5000)
  expect_equal(fitted(fit), p$Y, tolerance = 1e-5)
  # scale is kept: sum_j g_j^3 reproduces Y, weights are the component masses
  expect_equal(unname(fit$weights), unname(colSums(fit$G)^3))
  expect_equal(unname(rowSums(fit$membership)), rep(1, 24))
})

test_that("the slice sum is G diag(colSums(G)) G' and averaging recovers G", {
  p <- sym_ref_planted(n = 12, k = 2, overlap = 0)
  y <- as_symtensor(p$Y)
  A <- as.matrix(aspectr:::sym_slice_sum(y))
  expect_equal(A, apply(p$Y, c(1, 2), sum), tolerance = 1e-12)
  expect_equal(A, p$G %*% diag(colSums(p$G)) %*% t(p$G), tolerance = 1e-12)
  fit <- sntf(y, 2, method = "average", seed = 1, tol = 1e-12, max_iter = 3000)
  ord <- order(fit$G[1, ], decreasing = TRUE)
  expect_equal(unname(fit$G[, ord]), p$G, tolerance = 1e-4)
})

test_that("dense, full sparse and symmetric storage give the same fit", {
  d <- sparse_sym_data(n = 8, k = 2, keep = 0.6, seed = 21)
  a <- sntf(d$Y, 2, seed = 3, max_iter = 50, tol = 0)
  b <- sntf(as_symtensor(d$Y), 2, seed = 3, max_iter = 50, tol = 0)
  c <- sntf(as_sptensor(d$Y), 2, seed = 3, max_iter = 50, tol = 0)
  expect_equal(a$G, b$G, tolerance = 1e-12)
  expect_equal(a$G, c$G, tolerance = 1e-12)
  expect_equal(a$objective, b$objective, tolerance = 1e-12)
})

test_that("seeds reproduce and threads agree", {
  d <- sym_ref_lines(n_per = 20, n_out = 5)
  aff <- hypergraph_affinity(d$x, 3, "line")
  f1 <- sntf(aff, 3, nrun = 3, seed = 42, threads = 1, max_iter = 60, tol = 0)
  f2 <- sntf(aff, 3, nrun = 3, seed = 42, threads = 1, max_iter = 60, tol = 0)
  expect_identical(f1$G, f2$G)
  f3 <- sntf(aff, 3, nrun = 3, seed = 42, threads = 2, max_iter = 60, tol = 0)
  expect_equal(f1$G, f3$G, tolerance = 1e-8)
  f4 <- sntf(aff, 3, nrun = 3, seed = 43, init = "random", threads = 1, max_iter = 60, tol = 0)
  expect_false(isTRUE(all.equal(f1$G, f4$G)))
  set.seed(5); g1 <- sntf(aff, 3, init = "random", max_iter = 20)
  set.seed(5); g2 <- sntf(aff, 3, init = "random", max_iter = 20)
  expect_identical(g1$G, g2$G)
})

test_that("semi-orthogonality makes the columns (nearly) orthogonal", {
  p <- sym_ref_planted(n = 30, k = 3, overlap = 0.2, seed = 4)
  set.seed(4)
  Y <- sym_ref_symmetrize(p$Y * exp(array(rnorm(30^3, 0, 0.1), rep(30, 3))))
  offdiag <- function(G) { C <- stats::cov2cor(crossprod(G)); max(abs(C[upper.tri(C)])) }
  for (m in c("alpha", "unfold", "average")) {
    plain <- sntf(Y, 3, method = m, seed = 1)
    orth <- sntf(Y, 3, method = m, orthogonal = TRUE, seed = 1, max_iter = 3000)
    expect_true(orth$converged)
    # G'G diagonal up to the clipping of negatives: cosines below 0.06,
    # against about 0.2 without the step
    expect_lt(offdiag(orth$G), 0.06)
    expect_gt(offdiag(plain$G), 3 * offdiag(orth$G))
    expect_true(all(orth$G >= 0))
  }
})

test_that("sparsity exponent sharpens memberships", {
  p <- sym_ref_planted(n = 24, k = 3, overlap = 0.3, seed = 8)
  plain <- sntf(p$Y, 3, seed = 1, max_iter = 300)
  sharp <- sntf(p$Y, 3, sparsity = 0.005, seed = 1, max_iter = 300)
  gini <- function(M) mean(apply(M, 1, max))
  expect_gt(gini(sharp$membership), gini(plain$membership))
})

test_that("sntf methods print, summarise, plot and predict", {
  p <- sym_ref_planted(n = 12, k = 2, overlap = 0.05)
  fit <- sntf(p$Y, 2, seed = 1)
  expect_snapshot(print(fit))
  expect_snapshot(print(summary(fit)))
  expect_identical(predict(fit, type = "class"), fit$cluster)
  expect_identical(predict(fit), fit$membership)
  pdf(NULL); on.exit(grDevices::dev.off())
  expect_invisible(plot(fit))
  expect_invisible(plot(fit, "convergence"))
  expect_error(predict(fit, newdata = p$Y), class = "aspectr_error_input")
})

test_that("sntf rejects bad input with classed errors", {
  p <- sym_ref_planted(n = 6, k = 2)
  bad <- p$Y; bad[1, 2, 3] <- bad[1, 2, 3] + 1
  expect_error(sntf(bad, 2), class = "aspectr_error_input_value")
  expect_snapshot(sntf(bad, 2), error = TRUE)
  neg <- p$Y; neg[1, 1, 1] <- -1
  expect_error(sntf(neg, 2), class = "aspectr_error_input_value")
  expect_error(sntf(p$Y, 7), class = "aspectr_error_input_argument")
  expect_error(sntf(p$Y, 0), class = "aspectr_error_input_argument")
  expect_error(sntf(array(1, c(3, 3, 4)), 1), class = "aspectr_error_input_type")
  expect_error(sntf(p$Y * (p$Y > 0.5), 2, method = "smart"), class = "aspectr_error_input_value")
  expect_error(sntf(p$Y, 2, method = "alpha", L1 = 1), class = "aspectr_error_input_argument")
  expect_error(sntf(p$Y, 2, omega = 2), class = "aspectr_error_input_argument")
  expect_error(sntf(p$Y, 2, method = "nope"), class = "aspectr_error_input_argument")
  expect_error(sntf(p$Y, 2, init = matrix(1, 5, 2)), class = "aspectr_error_input_argument")
  expect_error(sntf("a", 2), class = "aspectr_error_input_type")
  expect_error(symtensor(rbind(c(1, 2, 3), c(3, 2, 1)), c(1, 2)), class = "aspectr_error_input_value")
  sp <- sptensor(rbind(c(1, 2, 3)), 1, dims = c(3, 3, 3))
  expect_error(as_symtensor(sp), class = "aspectr_error_input_value")
})

test_that("dense results and every-cell passes respect aspectr.max_cells", {
  p <- sym_ref_planted(n = 12, k = 2)
  fit <- sntf(p$Y, 2, seed = 1, max_iter = 5)
  old <- options(aspectr.max_cells = 100)
  on.exit(options(old))
  expect_error(fitted(fit), class = "aspectr_error_size")
  expect_error(as.array(as_symtensor(p$Y)), class = "aspectr_error_size")
  # 364 index sets > 100 / 4: SMART would visit them all
  expect_error(sntf(p$Y + 0.1, 2, method = "smart"), class = "aspectr_error_size")
  expect_snapshot(fitted(fit), error = TRUE)
})
