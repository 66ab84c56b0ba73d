# symnmf(), hypergraph_affinity(), multiway_cluster(), adjusted_rand_index().

planted_affinity <- function(n = 30, k = 3, seed = 1) {
  set.seed(seed)
  H <- matrix(0, n, k)
  size <- n / k
  for (j in seq_len(k)) H[((j - 1) * size + 1):(j * size), j] <- runif(size, 0.5, 1.5)
  list(H = H, A = tcrossprod(H), label = rep(seq_len(k), each = size))
}

# exact NNLS for k = 2 by enumerating the active sets
nnls2 <- function(Q, c) {
  best <- c(0, 0); fbest <- 0
  f <- function(x) 0.5 * sum(x * (Q %*% x)) - sum(c * x)
  cand <- list(solve(Q, c), c(max(c[1] / Q[1, 1], 0), 0), c(0, max(c[2] / Q[2, 2], 0)))
  for (x in cand) if (all(x >= -1e-14) && f(pmax(x, 0)) < fbest) { best <- pmax(x, 0); fbest <- f(best) }
  best
}

test_that("symnmf recovers planted clusters with every method", {
  p <- planted_affinity()
  for (m in c("anls", "hals", "fpals")) {
    fit <- symnmf(p$A, 3, method = m, seed = 1, max_iter = 3000, tol = 1e-10)
    expect_equal(adjusted_rand_index(fit$cluster, p$label), 1)
    expect_lt(fit$rel_error, 1e-3)
    expect_gt(sym_ref_congruence(fit$H, p$H), 0.999)
  }
})

test_that("penalized ANLS and HALS never increase their objective", {
  p <- planted_affinity(seed = 2)
  set.seed(3)
  A <- p$A + 0.05 * tcrossprod(matrix(runif(60), 30))
  for (m in c("anls", "hals")) for (l1 in c(0, 0.01)) {
    fit <- symnmf(A, 3, method = m, L1 = l1, init = "random", seed = 4, max_iter = 200, tol = 0)
    o <- c(fit$initial, fit$objective)
    expect_true(all(diff(o) <= 1e-10 * abs(o[-1])), label = paste(m, l1))
  }
})

test_that("one penalized ANLS step matches a plain-R exact NNLS", {
  set.seed(6)
  A <- tcrossprod(matrix(runif(16), 8)) + diag(0.1, 8)
  H0 <- matrix(runif(16), 8)
  lambda <- 0.7
  fit <- symnmf(A, 2, method = "anls", lambda = lambda, init = H0, max_iter = 1, tol = 0)
  # W <- argmin 1/2 ||A - W H0'||^2 + lambda/2 ||W - H0||^2, then H with W
  Q <- crossprod(H0) + diag(lambda, 2)
  W <- t(vapply(1:8, function(i) nnls2(Q, drop(A[i, ] %*% H0) + lambda * H0[i, ]), numeric(2)))
  Q2 <- crossprod(W) + diag(lambda, 2)
  H <- t(vapply(1:8, function(i) nnls2(Q2, drop(A[i, ] %*% W) + lambda * W[i, ]), numeric(2)))
  expect_equal(unname(fit$H), H, tolerance = 1e-8)
  expect_equal(fit$objective, 0.5 * sum((A - W %*% t(H))^2) + lambda / 2 * sum((W - H)^2), tolerance = 1e-8)
})

test_that("symnmf: dense equals sparse, seeds reproduce, threads agree", {
  p <- planted_affinity(n = 60, k = 3, seed = 7)
  As <- Matrix::Matrix(p$A * (p$A > 0.3), sparse = TRUE)
  Ad <- as.matrix(As)
  a <- symnmf(Ad, 3, seed = 1, max_iter = 30, tol = 0)
  b <- symnmf(As, 3, seed = 1, max_iter = 30, tol = 0)
  expect_equal(a$H, b$H, tolerance = 1e-10)
  c <- symnmf(As, 3, seed = 1, max_iter = 30, tol = 0, threads = 2)
  expect_equal(b$H, c$H, tolerance = 1e-8)
  r1 <- symnmf(As, 3, init = "random", nrun = 2, seed = 9, max_iter = 30)
  r2 <- symnmf(As, 3, init = "random", nrun = 2, seed = 9, max_iter = 30)
  expect_identical(r1$H, r2$H)
})

test_that("symnmf() at tiny scales: an L1 penalty in the data's units gives finite fits (H = 0)", {
  # random property case symnmf 98: data near 1e-186 with L1 = 6e-4 in the
  # data's units and the then default coupling max(a)^2. In the fit's units
  # (a / s, s near max(a)) the coupling was max(a)^2 / s ~ 1e-186 and L1 / s^1.5
  # ~ 1e276, so the exact NNLS of H given W = 0 solved 1e-186 x = -1e276:
  # the solution overflowed and the substitution's 0 * Inf made H NaN
  # (objective[1] NaN, or all starts NaN and an aspectr_error_numeric).
  # The default coupling is now max(a) (1 to 4 in the fit's units); that
  # scaled problem is the reference below (A with coupling max(A)^2 cc and
  # L1 / cc^1.5), which still takes that path
  A <- matrix(c(1.1245577884837985, 0, 1.2486892428714782, 1.0675290136132389,
                0, 0, 0.54386854241602123, 0,
                1.2486892428714782, 0.54386854241602123, 0, 1.0171220081392676,
                1.0675290136132389, 0, 1.0171220081392676, 0), 4, 4)
  L1 <- 0.0006084369204548024
  for (cc in c(3.7118366757441765e-186, 1e-300)) for (method in c("anls", "hals")) {
    lab <- paste(method, cc)
    for (x in list(A * cc, as_dgc(A * cc))) {
      w <- NULL
      fit <- withCallingHandlers(
        symnmf(x, 3, method = method, L1 = L1, nrun = 3, seed = 757380, max_iter = 20, tol = 0),
        warning = function(cnd) { w <<- c(w, class(cnd)[1]); invokeRestart("muffleWarning") })
      # that large a penalty makes H = 0 optimal (the best fit saves at most
      # 1/2 ||c A||^2 ~ c^2, an H of size sqrt(c) costs L1 sqrt(c))
      expect_true(all(fit$H == 0), label = lab)
      expect_true(all(is.finite(c(fit$objective, fit$initial, fit$run_values, fit$value))), label = lab)
      # the objective 1/2 ||c A||^2 underflows in the data's units: 0, said so
      expect_identical(fit$value, 0, label = lab)
      expect_identical(w, "aspectr_warning_numeric", label = lab)
    }
    # the same problem in the units of A (coupling and L1 rescaled, when
    # representable): the same fit, its objective 1/2 ||A||^2 at every step
    if (cc > 1e-200) {
      ref <- symnmf(A, 3, method = method, coupling = max(A)^2 * cc, L1 = L1 / cc^1.5, nrun = 3,
                    seed = 757380, max_iter = 20, tol = 0)
      expect_true(all(ref$H == 0), label = lab)
      expect_equal(ref$objective, rep(0.5 * sum(A^2), 20), tolerance = 1e-14, label = lab)
    }
  }
})

test_that("symnmf reads a sparse matrix in place, one triangle stored or both", {
  p <- planted_affinity(n = 60, k = 3, seed = 8)
  A <- p$A * (p$A > 0.3) * 3  # largest entry above 1: the fit divides as it reads
  As <- Matrix::Matrix(A, sparse = TRUE)
  expect_s4_class(As, "dsCMatrix")
  Al <- Matrix::forceSymmetric(As, "L")
  expect_identical(Al@uplo, "L")
  Ag <- methods::as(As, "generalMatrix")
  expect_s4_class(Ag, "dgCMatrix")
  Ag0 <- Ag; Ag0@x <- Ag@x + 0
  As0 <- As; As0@x <- As@x + 0
  in_place <- function(...) {
    old <- options(aspectr.transpose_limit = 0)
    on.exit(options(old))
    symnmf(...)
  }
  for (m in c("anls", "hals", "fpals")) {
    a <- symnmf(A, 3, method = m, seed = 1, max_iter = 25, tol = 0)
    b <- in_place(As, 3, method = m, seed = 1, max_iter = 25, tol = 0)
    l <- in_place(Al, 3, method = m, seed = 1, max_iter = 25, tol = 0, threads = 2)
    w <- symnmf(Al, 3, method = m, seed = 1, max_iter = 25, tol = 0)  # made whole
    g <- symnmf(Ag, 3, method = m, seed = 1, max_iter = 25, tol = 0)
    for (f in list(b, l, w, g)) {
      expect_equal(f$H, a$H, tolerance = 1e-10, info = m)
      expect_equal(f$objective, a$objective, tolerance = 1e-10, info = m)
      expect_equal(f$rel_error, a$rel_error, tolerance = 1e-10, info = m)
      expect_identical(f$nnz, a$nnz)
    }
  }
  expect_identical(Ag, Ag0)
  expect_identical(As, As0)
  # one stored triangle (upper or lower) read as the whole matrix: its
  # products (divided on read; 1 to 3 threads), total and non-zeros
  Af <- as.matrix(Ag)
  for (T in list(As, Al)) {
    nd <- aspectr:::sym_triangle_data(T)
    expect_equal(nd$total, sum(Af), tolerance = 1e-14)
    expect_identical(nd$nnz, sum(Af != 0))
    tp <- aspectr:::cpp_nmf_data(NULL, T@i, T@p, T@x, dim(T), 3, TRUE, TRUE, TRUE)
    for (k in c(1, 3, 9)) {
      F <- matrix(runif(60 * k), 60, k)
      for (th in 1:3) {
        expect_equal(aspectr:::cpp_nmf_product(tp, F, "WtX", th), crossprod(F, Af) / 3, tolerance = 1e-14)
        expect_equal(aspectr:::cpp_nmf_product(tp, F, "XZ", th), Af %*% F / 3, tolerance = 1e-14)
      }
    }
  }
  # a triangle's values are checked as any input's; names on one side name
  # both, the columns' when the two differ (as Matrix's dimnames())
  neg <- As; neg@x[3] <- -1
  expect_error(symnmf(neg, 2), class = "aspectr_error_input_value")
  nm <- As; nm@Dimnames <- list(NULL, paste0("p", 1:60))
  for (fit in list(symnmf, in_place)) {
    expect_error(fit(neg, 2), class = "aspectr_error_input_value")
    nm@Dimnames <- list(NULL, paste0("p", 1:60))
    expect_identical(rownames(fit(nm, 2, max_iter = 2)$H), paste0("p", 1:60))
    nm@Dimnames <- list(paste0("r", 1:60), paste0("p", 1:60))
    expect_identical(rownames(fit(nm, 2, max_iter = 2)$H), paste0("p", 1:60))
    nm@Dimnames <- list(paste0("r", 1:60), NULL)
    expect_identical(rownames(fit(nm, 2, max_iter = 2)$H), paste0("r", 1:60))
    zero <- Matrix::forceSymmetric(Matrix::sparseMatrix(i = 1, j = 2, x = 0, dims = c(3, 3)))
    expect_error(fit(zero, 1), class = "aspectr_error_input_empty")
    empty <- Matrix::forceSymmetric(Matrix::Matrix(0, 0, 0, sparse = TRUE))
    expect_error(fit(empty, 1), class = "aspectr_error_input_empty")
  }
  # above 400 points NNDSVD's SVD is randomized, of the sparse matrix read
  # as its stored triangle
  q <- planted_affinity(n = 450, k = 3, seed = 9)
  # (clusters of different weights and a little noise: well separated
  # singular values, so that the start is determined up to rounding; every
  # cell non-zero: the matrix is fitted dense)
  Hq <- q$H %*% diag(c(1, 2, 3))
  N <- matrix(runif(450^2, 0, 0.01), 450)
  B <- tcrossprod(Hq) + N + t(N)
  expect_false(is.null(aspectr:::nmf_data(B, "a")$dense))
  expect_s4_class(Bs <- Matrix::Matrix(B, sparse = TRUE), "dsCMatrix")
  fd <- symnmf(B, 3, seed = 1, max_iter = 10, tol = 0)
  fs <- in_place(Bs, 3, seed = 1, max_iter = 10, tol = 0)
  expect_equal(fs$H, fd$H, tolerance = 1e-8)
  expect_equal(fs$objective, fd$objective, tolerance = 1e-10)
  fw <- symnmf(Bs, 3, seed = 1, max_iter = 10, tol = 0)
  expect_equal(fw$H, fd$H, tolerance = 1e-8)
  # its triangles' products on several threads (each its own sums, added
  # in thread order: another summation order than one thread's), divided
  # on read
  for (T in list(Bs, Matrix::forceSymmetric(Bs, "L"))) {
    tp <- aspectr:::cpp_nmf_data(NULL, T@i, T@p, T@x, dim(T), 3, TRUE, TRUE, TRUE)
    for (k in c(1, 3, 9)) {
      F <- matrix(runif(450 * k), 450, k)
      one <- aspectr:::cpp_nmf_product(tp, F, "WtX", 1L)
      expect_equal(one, crossprod(F, B) / 3, tolerance = 1e-13, info = paste(T@uplo, k))
      expect_equal(aspectr:::cpp_nmf_product(tp, F, "XZ", 2L), B %*% F / 3, tolerance = 1e-13)
      for (th in 2:3) {
        many <- aspectr:::cpp_nmf_product(tp, F, "WtX", th)
        expect_equal(many, one, tolerance = 1e-14, info = paste(T@uplo, k, th))
        if (aspectr:::cpp_openmp()) expect_false(identical(many, one), info = paste(T@uplo, k, th))
      }
    }
  }
  # a triangle's data serve symnmf() only: nmf()'s updates refuse them
  expect_error(aspectr:::cpp_nmf_fit(tp, matrix(1, 450, 2), matrix(1, 2, 450), "frobenius", "hals", 2,
                                     c(0, 0), c(0, 0), 1e-16, 2L, 0, 1L, FALSE),
               "not a triangle")
  # the symmetry check of compressed columns: a different mirror value, a
  # missing mirror entry
  expect_true(aspectr:::cpp_csc_symmetric(Ag@i, Ag@p, Ag@x, 60L, 1e-10))
  bad <- Ag; bad@x[5] <- bad@x[5] * (1 + 1e-6)
  expect_false(aspectr:::cpp_csc_symmetric(bad@i, bad@p, bad@x, 60L, 1e-10))
  expect_error(symnmf(bad, 3), class = "aspectr_error_input_value")
  near <- Ag; near@x[5] <- near@x[5] * (1 + 1e-13)
  expect_true(aspectr:::cpp_csc_symmetric(near@i, near@p, near@x, 60L, 1e-10))
  tri <- Matrix::sparseMatrix(i = c(1, 2, 3), j = c(2, 3, 3), x = c(1, 2, 3), dims = c(3, 3))
  expect_false(aspectr:::cpp_csc_symmetric(tri@i, tri@p, tri@x, 3L, 1e-10))
  expect_error(symnmf(tri, 1), class = "aspectr_error_input_value")
})

test_that("symnmf prints, predicts and rejects bad input", {
  p <- planted_affinity(n = 12, k = 2)
  set.seed(2)
  noisy <- p$A + tcrossprod(matrix(runif(24, 0, 0.3), 12))
  fit <- symnmf(noisy, 2, seed = 1, max_iter = 10, tol = 0)
  expect_snapshot(print(fit))
  expect_identical(predict(fit, type = "class"), fit$cluster)
  pdf(NULL); on.exit(grDevices::dev.off())
  expect_invisible(plot(fit))
  bad <- p$A; bad[1, 2] <- bad[1, 2] + 1
  expect_error(symnmf(bad, 2), class = "aspectr_error_input_value")
  expect_snapshot(symnmf(bad, 2), error = TRUE)
  expect_error(symnmf(-p$A, 2), class = "aspectr_error_input_value")
  expect_error(symnmf(p$A, 13), class = "aspectr_error_input_argument")
  expect_error(symnmf(p$A[, 1:5], 2), class = "aspectr_error_input_value")
  expect_error(symnmf(p$A, 2, method = "mu"), class = "aspectr_error_input_argument")
})

test_that("tuple residuals are the distances to the best-fitting model", {
  # collinear points fit a line exactly: affinity 1
  x <- cbind(c(0, 1, 2, 5), c(0, 2, 4, 0))
  a <- hypergraph_affinity(x, 3, "line", sigma = 1)
  expect_equal(a$values[match("1.2.3", apply(a$index, 1, paste, collapse = "."))], 1)
  # a triangle: mean squared distance to the total-least-squares line
  tri <- x[c(1, 2, 4), ]
  sv <- svd(scale(tri, scale = FALSE))$d
  r2 <- sv[2]^2 / 3
  expect_equal(a$values[match("1.2.4", apply(a$index, 1, paste, collapse = "."))], exp(-r2))
  # a user function giving the same residual gives the same tensor
  f <- function(p) sqrt(svd(scale(p, scale = FALSE))$d[2]^2 / nrow(p))
  b <- hypergraph_affinity(x, 3, fun = f, sigma = 1)
  expect_equal(b$values, a$values, tolerance = 1e-12)
  # planes need 4 points; 4 coplanar points in 3-D fit exactly
  set.seed(1)
  P <- cbind(runif(6), runif(6)); P <- cbind(P, 0.3 * P[, 1] - 0.2 * P[, 2] + 1)
  pl <- hypergraph_affinity(P, 4, "plane", sigma = 1)
  expect_equal(pl$values, rep(1, choose(6, 4)), tolerance = 1e-12)
  # a 2-D linear subspace through the origin
  S <- P[, 1:2] %*% rbind(c(1, 0, 2), c(0, 1, -1))
  sub <- hypergraph_affinity(S, 3, "subspace", dim = 2, sigma = 1)
  expect_equal(sub$values, rep(1, choose(6, 3)), tolerance = 1e-12)
  # all tuples, or a reproducible sample
  expect_equal(attr(hypergraph_affinity(P[, 1:2], 3, cutoff = 0), "tuples"), choose(6, 3))
  pts <- matrix(runif(100), 50)
  s1 <- hypergraph_affinity(pts, 3, n_tuples = 500, seed = 3, cutoff = 0)
  s2 <- hypergraph_affinity(pts, 3, n_tuples = 500, seed = 3, cutoff = 0)
  s3 <- hypergraph_affinity(pts, 3, n_tuples = 500, seed = 4, cutoff = 0)
  # exactly n_tuples distinct sorted triples, the same for the same seed
  expect_equal(attr(s1, "tuples"), 500)
  expect_equal(nrow(s1$index), 500)
  expect_equal(anyDuplicated(s1$index), 0L)
  expect_true(all(s1$index[, 1] < s1$index[, 2] & s1$index[, 2] < s1$index[, 3]))
  expect_identical(s1, s2)
  expect_false(identical(s1$index, s3$index))
  # n_tuples beyond the number of triples gives all of them
  expect_equal(attr(hypergraph_affinity(pts[1:6, ], 3, n_tuples = 1000, seed = 1, cutoff = 0), "tuples"),
               choose(6, 3))
})

test_that("hypergraph_affinity rejects bad input", {
  x <- matrix(runif(20), 10)
  expect_error(hypergraph_affinity(x, 3, "plane"), class = "aspectr_error_input_argument")
  expect_error(hypergraph_affinity(x, 2, "line"), class = "aspectr_error_input_argument")
  expect_error(hypergraph_affinity(x, 11), class = "aspectr_error_input_argument")
  x2 <- x; x2[1, 1] <- NA
  expect_error(hypergraph_affinity(x2, 3), class = "aspectr_error_input_value")
  expect_error(hypergraph_affinity(x, 3, fun = function(p) -1), class = "aspectr_error_input_value")
  expect_error(hypergraph_affinity(letters, 3), class = "aspectr_error_input_type")
  expect_error(hypergraph_affinity(x, 3, n_tuples = 0), class = "aspectr_error_input_argument")
})

test_that("multi-way clustering separates intersecting lines that pairwise methods mix", {
  d <- sym_ref_lines(n_per = 40, n_out = 20, noise = 0.02, seed = 7)
  inl <- d$label > 0
  mc <- multiway_cluster(d$x, 3, model = "line", seed = 1, threads = 1)
  expect_s3_class(mc, "aspectr_multiway")
  ari <- adjusted_rand_index(mc$cluster[inl], d$label[inl])
  # measured 0.925 on this data; k-means gets 0.17
  expect_gt(ari, 0.85)
  set.seed(1)
  km <- stats::kmeans(d$x, 3, nstart = 10)$cluster
  expect_lt(adjusted_rand_index(km[inl], d$label[inl]), ari - 0.4)
  expect_snapshot(print(mc))
  sampled <- multiway_cluster(d$x, 3, n_tuples = 20000, seed = 1)
  expect_gt(adjusted_rand_index(sampled$cluster[inl], d$label[inl]), 0.8)
})

test_that("multi-way clustering labels planted outliers NA, lines and planes", {
  # points on two lines (planes) plus points at least 0.2 (0.3) off all of them
  lines <- function(s) {
    set.seed(s)
    t <- runif(60, -1, 1)
    x <- rbind(cbind(t[1:30], 0.5 * t[1:30]), cbind(t[31:60], -t[31:60])) +
      matrix(rnorm(120, sd = 0.01), 60)
    o <- cbind(runif(40, -1, 1), runif(40, -1, 1))
    o <- o[abs(o[, 2] - 0.5 * o[, 1]) > 0.2 & abs(o[, 2] + o[, 1]) > 0.2, , drop = FALSE][1:6, ]
    list(x = rbind(x, o), label = c(rep(1:2, each = 30), rep(NA, 6)))
  }
  planes <- function(s) {
    set.seed(s)
    p1 <- matrix(runif(80, -1, 1), 40); p1 <- cbind(p1, 0.5 * p1[, 1] - 0.3 * p1[, 2])
    p2 <- matrix(runif(80, -1, 1), 40); p2 <- cbind(p2, -p2[, 1] + 0.8 * p2[, 2])
    x <- rbind(p1, p2) + matrix(rnorm(240, sd = 0.01), 80)
    o <- matrix(runif(300, -1, 1), 100)
    o <- o[abs(o[, 3] - (0.5 * o[, 1] - 0.3 * o[, 2])) > 0.3 &
             abs(o[, 3] - (-o[, 1] + 0.8 * o[, 2])) > 0.3, , drop = FALSE][1:6, ]
    list(x = rbind(x, o), label = c(rep(1:2, each = 40), rep(NA, 6)))
  }
  for (s in 1:3) {
    d <- lines(s)
    mc <- multiway_cluster(d$x, 2, model = "line", seed = s, threads = 1)
    out <- is.na(d$label)
    expect_true(all(is.na(mc$cluster[out])))
    expect_false(anyNA(mc$cluster[!out]))
    expect_gt(adjusted_rand_index(mc$cluster[!out], d$label[!out]), 0.9)
    expect_true(all(mc$strength[out] < 0.25) && all(mc$strength[!out] >= 0.25))
    # outlier = 0 labels every point (with a positive row of G)
    all_in <- multiway_cluster(d$x, 2, model = "line", seed = s, threads = 1, outlier = 0)
    expect_false(anyNA(all_in$cluster))
    d <- planes(s)
    mc <- multiway_cluster(d$x, 2, order = 4, model = "plane", seed = s, threads = 1)
    out <- is.na(d$label)
    expect_true(all(is.na(mc$cluster[out])))
    expect_false(anyNA(mc$cluster[!out]))
    expect_gt(adjusted_rand_index(mc$cluster[!out], d$label[!out]), 0.9)
  }
  expect_error(multiway_cluster(d$x, 2, outlier = 1), class = "aspectr_error_input_argument")
  expect_error(multiway_cluster(d$x, 2, outlier = -0.1), class = "aspectr_error_input_argument")
})

test_that("adjusted_rand_index matches pair counting", {
  ari_pairs <- function(x, y) {
    n <- length(x); a <- b <- c <- d <- 0
    for (i in 1:(n - 1)) for (j in (i + 1):n) {
      sx <- x[i] == x[j]; sy <- y[i] == y[j]
      if (sx && sy) a <- a + 1 else if (sx) b <- b + 1 else if (sy) c <- c + 1 else d <- d + 1
    }
    2 * (a * d - b * c) / ((a + b) * (b + d) + (a + c) * (c + d))
  }
  set.seed(2)
  for (r in 1:3) {
    x <- sample(1:3, 25, TRUE); y <- sample(letters[1:4], 25, TRUE)
    expect_equal(adjusted_rand_index(x, y), ari_pairs(x, y), tolerance = 1e-12)
  }
  expect_equal(adjusted_rand_index(c(1, 1, 2, 2), c("b", "b", "a", "a")), 1)
  expect_error(adjusted_rand_index(1:3, 1:4), class = "aspectr_error_input_value")
})

test_that("an exact symmetric factorization converges, dense and sparse, by every method", {
  # the objective falls geometrically to its rounding floor, where its
  # relative change never settles: 1000 iterations and converged = FALSE
  set.seed(1)
  H <- cbind(c(runif(15), rep(0, 15)), c(rep(0, 15), runif(15)))
  A <- tcrossprod(H)
  for (m in c("anls", "hals")) {
    for (a in list(A, Matrix::Matrix(A, sparse = TRUE))) {
      f <- symnmf(a, 2, method = m, seed = 1, threads = 1)
      expect_true(f$converged, info = m)
      expect_lt(f$iterations, 500)
      expect_lt(sqrt(sum((A - tcrossprod(f$H))^2) / sum(A^2)), 1e-10)
    }
  }
  # with tol = 0 every iteration runs, as documented
  f0 <- suppressMessages(symnmf(A, 2, method = "hals", seed = 1, threads = 1, tol = 0, max_iter = 60))
  expect_identical(f0$iterations, 60L)
})
