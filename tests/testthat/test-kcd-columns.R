# KL coordinate descent of shard files in one process updates H from the
# files' copy by columns (aspectr/nmf/columns.h): every column solved whole
# with the in-memory arithmetic. The fit equals the in-memory fit (factors,
# objective trace, iterations), the copy is made once and reused, made anew
# when a file changes, and made in the cache's directory when the files'
# cannot be written; fits that keep W elsewhere (factor_dir, a cluster)
# still pass over the row shards, with the same fit.

# the copies by columns in `dir`
column_copies <- function(dir) list.files(dir, pattern = "-columns-[0-9a-f]{16}$", full.names = TRUE)

# the number of requests to the column pieces during `code`
count_column_requests <- function(code) {
  counter <- new.env()
  counter$n <- 0
  trace("shard_nmf_cols", substitute(assign("n", e$n + 1, envir = e), list(e = counter)), print = FALSE,
        where = asNamespace("aspectr"))
  on.exit(untrace("shard_nmf_cols", where = asNamespace("aspectr")))
  force(code)
  counter$n
}

expect_same_plsa <- function(fit, ref, info = NULL) {
  expect_equal(unname(fit$lambda), unname(ref$lambda), tolerance = 1e-10, info = info)
  for (n in seq_along(ref$factors)) expect_equal(fit$factors[[n]], ref$factors[[n]], tolerance = 1e-10, info = info)
  expect_equal(fit$objective, ref$objective, tolerance = 1e-10, info = info)
  expect_identical(fit$iterations, ref$iterations, info = info)
  expect_identical(fit$converged, ref$converged, info = info)
}
expect_same_kl_nmf <- function(fit, ref, info = NULL) {
  for (f in c("W", "H", "objective", "initial", "divergence")) {
    expect_equal(fit[[f]], ref[[f]], tolerance = 1e-10, info = paste(info, f))
  }
  expect_identical(fit$iterations, ref$iterations, info = info)
  expect_identical(fit$converged, ref$converged, info = info)
}

quiet <- function(code) suppressMessages(code)

test_that("plsa() and nmf(loss = 'kl') of .shard files update H by columns and equal the in-memory fit", {
  x <- shard_counts(60, 30, seed = 7) * 2
  dir <- shard_tempdir()
  sh <- write_shards(split_rows(x, c(17L, 40L)), dir)
  ref <- quiet(plsa(x, 3, seed = 2, max_iter = 40, tol = 1e-9))
  calls <- count_column_requests(fit <- quiet(plsa(sh, 3, seed = 2, max_iter = 40, tol = 1e-9)))
  expect_same_plsa(fit, ref)
  # one request to the column pieces an iteration
  expect_identical(calls, as.numeric(fit$iterations))
  copy <- column_copies(dir)
  expect_length(copy, 1)
  # the copy, listed with the data files, is named as what it is
  expect_error(shards(list.files(dir, full.names = TRUE)), class = "aspectr_error_input_value",
               regexp = "copy of shard files by columns")
  # several blocks of columns, each at most the largest shard's cells (a
  # column with more alone)
  index <- readRDS(file.path(copy, "index.rds"))
  expect_gt(length(index$blocks), 1)
  expect_identical(index$start[c(1, length(index$start))], c(0, 30))
  # nmf()'s KL coordinate descent (the default of loss = "kl"), with
  # penalties and several starts
  for (args in list(list(seed = 3, max_iter = 30, tol = 0), list(seed = 4, max_iter = 25, L1 = c(0.01, 0.02)),
                    list(seed = 5, nrun = 3, max_iter = 15, L2 = c(0, 0.05)))) {
    refn <- quiet(do.call(nmf, c(list(x, 3, loss = "kl"), args)))
    calls <- count_column_requests(fitn <- quiet(do.call(nmf, c(list(sh, 3, loss = "kl"), args))))
    expect_same_kl_nmf(fitn, refn, info = paste(names(args), unlist(args), collapse = " "))
    expect_gt(calls, 0)
  }
  # the copy is the data by columns: the blocks joined are the matrix
  got <- matrix(0, 60, 30)
  for (b in seq_along(index$blocks)) {
    d <- aspectr:::read_shard_bin(file.path(copy, index$blocks[b]))
    got[cbind(d$idx[1, ] + 1L, d$idx[2, ] + index$start[b] + 1L)] <- d$val
    expect_false(is.unsorted(d$idx[2, ] * 1e6 + d$idx[1, ], strictly = TRUE))
  }
  expect_identical(got, unname(x))
})

test_that("the copy is reused, made anew when a file changes, and fits of other kinds use it", {
  x <- shard_counts(48, 26, seed = 11)
  dir <- shard_tempdir()
  parts <- split_rows(x, c(20L, 33L))
  f <- file.path(dir, paste0("part", 1:3, ".rds"))
  for (i in 1:3) saveRDS(parts[[i]], f[i])
  ref <- quiet(plsa(x, 2, seed = 1, max_iter = 30, tol = 0))
  expect_same_plsa(quiet(plsa(shards(f), 2, seed = 1, max_iter = 30, tol = 0)), ref)
  copy <- column_copies(dir)
  expect_length(copy, 1)
  made <- list.files(copy, full.names = TRUE)
  old <- as.POSIXct("2020-01-01 00:00:00", tz = "UTC")
  for (p in made) Sys.setFileTime(p, old)
  # a second fit (new shards() of the same files) reads the copy as it is
  fit2 <- quiet(nmf(shards(f), 2, loss = "kl", seed = 6, max_iter = 20, tol = 0))
  expect_same_kl_nmf(fit2, quiet(nmf(x, 2, loss = "kl", seed = 6, max_iter = 20, tol = 0)))
  expect_identical(as.numeric(file.mtime(made)), rep(as.numeric(old), length(made)))
  # a file changed: the copy is made anew, in the same place, for the new data
  x2 <- x
  x2[25:30, ] <- x2[25:30, ] + 1
  Sys.sleep(1.1)
  saveRDS(x2[21:33, ], f[2])
  fit3 <- quiet(plsa(shards(f), 2, seed = 1, max_iter = 30, tol = 0))
  expect_same_plsa(fit3, quiet(plsa(x2, 2, seed = 1, max_iter = 30, tol = 0)))
  expect_identical(column_copies(dir), copy)
  expect_true(all(file.mtime(list.files(copy, full.names = TRUE)) > old))
  # Matrix Market files too
  mdir <- shard_tempdir()
  fm <- file.path(mdir, paste0("part", 1:3, ".mtx"))
  for (i in 1:3) Matrix::writeMM(methods::as(parts[[i]], "CsparseMatrix"), fm[i])
  refn <- quiet(nmf(unname(x), 2, loss = "kl", seed = 2, max_iter = 25, tol = 0))
  expect_same_kl_nmf(quiet(nmf(shards(fm), 2, loss = "kl", seed = 2, max_iter = 25, tol = 0)), refn)
  expect_length(column_copies(mdir), 1)
})

test_that("a directory that cannot be written leaves the copy in the cache's; none without a cache", {
  x <- shard_counts(40, 22, seed = 13)
  dir <- shard_tempdir()
  sh <- write_shards(split_rows(x, 18L), dir)
  cache <- file.path(shard_tempdir(), "cache")
  old <- options(aspectr.shard_cache = TRUE)
  on.exit(options(old), add = TRUE)
  writable <- aspectr:::shard_dir_writable
  utils::assignInNamespace("shard_dir_writable", function(d) !identical(normalizePath(d), normalizePath(dir)),
                           "aspectr")
  on.exit(utils::assignInNamespace("shard_dir_writable", writable, "aspectr"), add = TRUE)
  ref <- quiet(plsa(x, 2, seed = 3, max_iter = 25, tol = 0))
  before <- column_copies(file.path(tempdir(), "aspectr-shard-cache"))
  calls <- count_column_requests(fit <- quiet(plsa(sh, 2, seed = 3, max_iter = 25, tol = 0)))
  expect_same_plsa(fit, ref)
  expect_gt(calls, 0)
  expect_length(column_copies(dir), 0)
  expect_length(setdiff(column_copies(file.path(tempdir(), "aspectr-shard-cache")), before), 1)
  # a cache directory named by the option takes the copy
  options(aspectr.shard_cache = cache)
  expect_same_plsa(quiet(plsa(sh, 2, seed = 3, max_iter = 25, tol = 0)), ref)
  expect_length(column_copies(cache), 1)
  # no cache: the row shards' passes, the same fit, no copy
  options(aspectr.shard_cache = FALSE)
  utils::assignInNamespace("shard_dir_writable", writable, "aspectr")
  calls <- count_column_requests(fit <- quiet(plsa(sh, 2, seed = 3, max_iter = 25, tol = 0)))
  expect_same_plsa(fit, ref)
  expect_identical(calls, 0)
  expect_length(column_copies(dir), 0)
})

test_that("with factor_dir and on a PSOCK cluster the fit still equals the in-memory one", {
  skip_on_cran()
  x <- shard_counts(44, 24, seed = 17)
  dir <- shard_tempdir()
  parts <- split_rows(x, c(15L, 30L))
  f <- file.path(dir, paste0("part", 1:3, ".rds"))
  for (i in 1:3) saveRDS(parts[[i]], f[i])
  ref <- quiet(plsa(x, 2, seed = 4, max_iter = 20, tol = 0))
  # W written to files: not in this process, so no copy by columns
  calls <- count_column_requests(fit <- quiet(plsa(shards(f), 2, seed = 4, max_iter = 20, tol = 0,
                                                   factor_dir = TRUE)))
  expect_identical(calls, 0)
  got <- gather_factors(fit)
  expect_same_plsa(got, ref)
  refn <- quiet(nmf(x, 2, loss = "kl", seed = 4, max_iter = 20, tol = 0))
  gotn <- gather_factors(quiet(nmf(shards(f), 2, loss = "kl", seed = 4, max_iter = 20, tol = 0, factor_dir = TRUE)))
  expect_same_kl_nmf(gotn, refn)
  cl <- psock_cluster()
  on.exit(parallel::stopCluster(cl), add = TRUE)
  calls <- count_column_requests(fit <- quiet(plsa(shards(f), 2, seed = 4, max_iter = 20, tol = 0, cluster = cl)))
  expect_identical(calls, 0)
  expect_same_plsa(fit, ref)
  expect_same_kl_nmf(quiet(nmf(shards(f), 2, loss = "kl", seed = 4, max_iter = 20, tol = 0, cluster = cl)), refn)
})
