# A user's interrupt is looked for inside long iterations (between the
# requests to the pieces, the chunks read from a shard file, blocks of
# cells of a pass, an LCA start's iterations), not only after each one.

polls_during <- function(expr) {
  p0 <- aspectr:::cpp_interrupt_polls()
  force(expr)
  aspectr:::cpp_interrupt_polls() - p0
}

test_that("a fit looks for an interrupt inside its iterations, on every path", {
  set.seed(1)
  x <- Matrix::rsparsematrix(400, 300, 0.7, rand.x = function(n) rpois(n, 3) + 1)  # > 65536 cells
  # one iteration of EM on a matrix: its requests to the piece, and the
  # blocks of cells of its passes
  one <- polls_during(plsa(x, 3, method = "em", max_iter = 1, tol = 0, seed = 1, threads = 1))
  three <- polls_during(plsa(x, 3, method = "em", max_iter = 3, tol = 0, seed = 1, threads = 1))
  expect_gte(one, 1)
  expect_gte(three - one, 2)
  # q-EM's passes (the polls of 2 more iterations: none of the setup's)
  q1 <- polls_during(plsa(x, 3, loss = "tsallis", max_iter = 1, tol = 0, seed = 1, threads = 1))
  q3 <- polls_during(plsa(x, 3, loss = "tsallis", max_iter = 3, tol = 0, seed = 1, threads = 1))
  expect_gte(q3 - q1, 8)
  # KL coordinate descent of a tensor in shard files: each request, each chunk read
  set.seed(2)
  idx <- cbind(sample(60, 3000, TRUE), sample(20, 3000, TRUE), sample(10, 3000, TRUE))
  idx <- unique(idx)
  tt <- sptensor(idx, rpois(nrow(idx), 2) + 1, dims = c(60, 20, 10))
  sh <- write_shards(tt, tempfile(), n = 2)
  k1 <- polls_during(ntf(sh, 3, loss = "kl", max_iter = 1, tol = 0, seed = 1))
  k3 <- polls_during(ntf(sh, 3, loss = "kl", max_iter = 3, tol = 0, seed = 1))
  expect_gte(k3 - k1, 8)
  # an LCA start: between its iterations
  d <- data.frame(a = factor(sample(3, 200, TRUE)), b = factor(sample(2, 200, TRUE)),
                  c = factor(sample(4, 200, TRUE)))
  n5 <- polls_during(lca(d, 2, nrun = 1, max_iter = 5, tol = 0, seed = 1, se = FALSE, threads = 1))
  n20 <- polls_during(lca(d, 2, nrun = 1, max_iter = 20, tol = 0, seed = 1, se = FALSE, threads = 1))
  expect_gte(n20 - n5, 10)
})

test_that("Ctrl-C inside a long iteration stops the fit, and the next fit is right", {
  # (in a process of its own: an iteration of several seconds on shard
  # files, interrupted inside it; then the same process fits again)
  got <- run_signal_script(c(
    "set.seed(1); n <- 1.5e6",
    "idx <- unique(cbind(sample(3000, n, TRUE), sample(300, n, TRUE), sample(100, n, TRUE)))",
    "tt <- sptensor(idx, rpois(nrow(idx), 3) + 1, dims = c(3000, 300, 100))",
    "sh <- write_shards(tt, tempfile(), n = 2)",
    "system(sprintf('sh -c \"sleep 3; kill -s INT %d\" &', Sys.getpid()))",
    "r <- tryCatch(ntf(sh, 20, loss = 'kl', tol = 0, max_iter = 1e6, seed = 1, threads = 1), interrupt = function(e) 'interrupted')",
    "cat('interrupted', identical(r, 'interrupted'), '\\n')",
    "y <- sptensor(idx[idx[, 1] <= 40, ], 1 + (idx[idx[, 1] <= 40, 2] %% 3), dims = c(40, 300, 100))",
    "ref <- ntf(y, 3, loss = 'kl', tol = 0, max_iter = 3, seed = 1)",
    "fit <- ntf(write_shards(y, tempfile(), n = 2), 3, loss = 'kl', tol = 0, max_iter = 3, seed = 1)",
    "cat('refit', isTRUE(all.equal(fit$factors, ref$factors, tolerance = 1e-10)), '\\n')"
  ))
  expect_identical(got[["interrupted"]], "TRUE")
  expect_identical(got[["refit"]], "TRUE")
})
