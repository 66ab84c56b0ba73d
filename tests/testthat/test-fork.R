# Fork safety: a process forked after a threaded fit (mclapply, mcparallel,
# future's multicore plan) fits on one thread instead of deadlocking in
# GNU OpenMP, with the values of threads = 1 in the parent.
#
# The scenario runs in a child Rscript under `timeout`, so that a regression
# (a deadlocked child) fails the test instead of hanging the suite.

fork_script <- function() {
  c(
    "suppressPackageStartupMessages(library(aspectr))",
    "out <- function(key, x) cat(key, sprintf('%.17g', x), '\\n')",
    "set.seed(7)",
    # 20000 non-zero cells: every EM pass of a 2-thread fit opens a parallel
    # region (smaller data stay on one thread and never start the pool)
    "X <- matrix(rpois(20000, 3) + 1, 100)",
    "serial <- plsa(X, 5, threads = 1, seed = 1, max_iter = 60, tol = 1e-4)$value",
    "threaded <- plsa(X, 5, threads = 2, seed = 1, max_iter = 60, tol = 1e-4)$value",
    "out('serial', serial); out('threaded', threaded)",
    "out('parent_forked', aspectr:::forked_child())",
    # lca over 4 starts with threads over the starts (multistart.h)
    "D <- data.frame(a = factor(sample(3, 400, TRUE)), b = factor(sample(3, 400, TRUE)),",
    "                c = factor(sample(2, 400, TRUE)))",
    "lser <- lca(D, 2, nrun = 4, seed = 3, threads = 1)$llik",
    "invisible(lca(D, 2, nrun = 4, seed = 3, threads = 2))",
    "out('lca_serial', lser)",
    # the core's dense kernel, reached directly (as a fork cluster's shard
    # operations do): held to one thread by the core's ceiling itself
    "A <- matrix(runif(200 * 150), 200); B <- matrix(runif(120 * 150), 120)",
    "P <- aspectr:::cpp_dense_nn(A, B, 2L)",
    "child <- function(i) {",
    "  f <- plsa(X, 5, threads = 2, seed = 1, max_iter = 60, tol = 1e-4)",
    "  c(f$value, f$threads, default_threads(), aspectr:::forked_child(),",
    "    lca(D, 2, nrun = 4, seed = 3, threads = 2)$llik,",
    "    max(abs(aspectr:::cpp_dense_nn(A, B, 2L) - P)))",
    "}",
    "r <- parallel::mclapply(1:2, child, mc.cores = 2)",
    "for (i in 1:2) out(paste0('mclapply', i), r[[i]])",
    "j <- parallel::mcparallel(child(3))",
    "out('mcparallel', parallel::mccollect(j)[[1]])",
    "if (requireNamespace('future', quietly = TRUE) && future::supportsMulticore()) {",
    "  future::plan(future::multicore, workers = 2)",
    "  out('multicore', future::value(future::future(child(4), seed = NULL)))",
    "}",
    "cat('finished\\n')"
  )
}

test_that("fits in forked children after a threaded fit finish, on one thread, with the serial values", {
  skip_on_os("windows")
  skip_on_cran()
  tmo <- Sys.which("timeout")
  skip_if(!nzchar(tmo), "no timeout command")
  f <- tempfile(fileext = ".R")
  on.exit(unlink(f), add = TRUE)
  writeLines(fork_script(), f)
  rscript <- file.path(R.home("bin"), "Rscript")
  lib <- paste(.libPaths(), collapse = .Platform$path.sep)
  res <- suppressWarnings(system2(tmo, c("120", shQuote(rscript), "--vanilla", shQuote(f)),
                                  stdout = TRUE, stderr = TRUE,
                                  env = c(paste0("R_LIBS=", lib), "OMP_NUM_THREADS=")))
  status <- attr(res, "status")
  expect_null(status)  # 124: killed by the timeout (a deadlock); other: an error
  expect_true("finished" %in% trimws(res), label = paste(res, collapse = "\n"))

  vals <- function(key) {
    line <- grep(paste0("^", key, " "), res, value = TRUE)
    if (length(line) != 1) return(NULL)
    as.numeric(strsplit(trimws(line), " +")[[1]][-1])
  }
  serial <- vals("serial")
  threaded <- vals("threaded")
  lser <- vals("lca_serial")
  expect_length(serial, 1)
  expect_equal(vals("parent_forked"), 0)
  # the parent's two thread counts agree up to summation order
  expect_equal(threaded, serial, tolerance = 1e-8)
  keys <- c("mclapply1", "mclapply2", "mcparallel",
            if (requireNamespace("future", quietly = TRUE)) "multicore")
  for (k in keys) {
    v <- vals(k)
    expect_length(v, 6)
    if (length(v) != 6) next
    # the child's fit ran on one thread: bitwise the parent's serial fit
    expect_identical(v[1], serial, label = k)
    expect_identical(v[2:4], c(1, 1, 1), label = k)  # $threads, default_threads(), forked
    expect_identical(v[5], lser, label = k)
    expect_lt(v[6], 1e-9)  # the core's kernel in the child gives the parent's product
  }
})
