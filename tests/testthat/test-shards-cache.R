# Files other than .shard are converted once, when shards() reads them, to a
# cached .shard file that out-of-core fits stream: the same fit as from the
# original, never from a stale conversion.

cache_files <- function(dir) list.files(dir, pattern = "\\.shard$", full.names = TRUE)

test_that("rds, mtx and tns shards are fitted from a cached .shard conversion, exactly", {
  x <- shard_counts(30, 12, seed = 21)
  x[1:2, ] <- 0  # documents without counts
  parts <- split_rows(x, c(5L, 17L))
  dir <- shard_tempdir()
  cache <- file.path(dir, "cache")
  on.exit(unlink(dir, recursive = TRUE), add = TRUE)
  withr_opt <- options(aspectr.shard_cache = cache)
  on.exit(options(withr_opt), add = TRUE)
  rds <- file.path(dir, paste0("p", 1:3, ".rds"))
  mtx <- file.path(dir, paste0("p", 1:3, ".mtx"))
  tns <- file.path(dir, paste0("p", 1:3, ".tns"))
  for (i in 1:3) {
    saveRDS(parts[[i]], rds[i])
    Matrix::writeMM(Matrix::Matrix(parts[[i]], sparse = TRUE), mtx[i])
    write_tns(as_sptensor(parts[[i]]), tns[i])
  }
  ref <- plsa(x, 3, method = "em", seed = 1, max_iter = 30, tol = 0)
  refn <- suppressMessages(nmf(x, 3, init = "random", seed = 1, max_iter = 30, tol = 0))
  refk <- suppressMessages(nmf(x, 3, loss = "kl", method = "cd", init = "random", accelerate = FALSE, seed = 1,
                               max_iter = 20, tol = 0))
  refq <- plsa(x, 3, loss = "tsallis", q = 0.7, method = "em", seed = 1, max_iter = 20, tol = 0)
  for (files in list(rds, mtx, tns)) {
    before <- length(cache_files(cache))
    sh <- shards(files)
    made <- vapply(sh$sources, function(s) s$cache %||% NA_character_, "")
    expect_false(anyNA(made))
    expect_true(all(file.exists(made)))
    expect_identical(length(cache_files(cache)), before + 3L)
    # a second description of the same files reuses the conversions
    mt <- file.mtime(made)
    sh2 <- shards(files)
    expect_identical(vapply(sh2$sources, function(s) s$cache, ""), made)
    expect_identical(file.mtime(made), mt)
    fit <- plsa(sh, 3, method = "em", seed = 1, max_iter = 30, tol = 0)
    expect_equal(fit$factors, ref$factors, tolerance = 1e-10, ignore_attr = TRUE)
    expect_equal(fit$objective, ref$objective, tolerance = 1e-10)
    fn <- suppressMessages(nmf(sh, 3, init = "random", seed = 1, max_iter = 30, tol = 0))
    expect_equal(fn$W, refn$W, tolerance = 1e-10, ignore_attr = TRUE)
    expect_equal(fn$H, refn$H, tolerance = 1e-10, ignore_attr = TRUE)
    fk <- suppressMessages(nmf(sh, 3, loss = "kl", method = "cd", init = "random", seed = 1, max_iter = 20, tol = 0))
    expect_equal(fk$W, refk$W, tolerance = 1e-10, ignore_attr = TRUE)
    fq <- plsa(sh, 3, loss = "tsallis", q = 0.7, method = "em", seed = 1, max_iter = 20, tol = 0)
    expect_equal(fq$factors, refq$factors, tolerance = 1e-10, ignore_attr = TRUE)
    # a conversion removed since (a cleaned temporary directory) is made again
    unlink(made[2])
    fit2 <- plsa(sh, 3, method = "em", seed = 1, max_iter = 30, tol = 0)
    expect_true(file.exists(made[2]))
    expect_equal(fit2$factors, ref$factors, tolerance = 1e-10, ignore_attr = TRUE)
  }
  # the cached files are the data: written as write_shards() writes them
  direct <- write_shards(parts, file.path(dir, "direct"))
  conv <- shards(rds)$sources
  for (i in 1:3) {
    expect_identical(unname(tools::md5sum(conv[[i]]$cache)), unname(tools::md5sum(direct$sources[[i]]$path)))
  }
})

test_that("a changed original is never read from an old conversion", {
  x <- shard_counts(20, 8, seed = 22)
  dir <- shard_tempdir()
  on.exit(unlink(dir, recursive = TRUE), add = TRUE)
  old <- options(aspectr.shard_cache = file.path(dir, "cache"))
  on.exit(options(old), add = TRUE)
  f <- file.path(dir, c("a.rds", "b.rds"))
  saveRDS(x[1:10, ], f[1])
  saveRDS(x[11:20, ], f[2])
  sh <- shards(f)
  first <- sh$sources[[1]]$cache
  Sys.sleep(1.1)
  y <- x
  y[1, ] <- y[1, ] + 5
  saveRDS(y[1:10, ], f[1])
  # the description made before the change refuses the changed file
  expect_error(plsa(sh, 2, method = "em", seed = 1, max_iter = 5), class = "aspectr_error_shard", regexp = "changed")
  # a new description converts it anew
  sh2 <- shards(f)
  expect_false(identical(sh2$sources[[1]]$cache, first))
  expect_identical(sh2$sources[[2]]$cache, sh$sources[[2]]$cache)
  expect_equal(plsa(sh2, 2, method = "em", seed = 1, max_iter = 20, tol = 0)$factors,
               plsa(y, 2, method = "em", seed = 1, max_iter = 20, tol = 0)$factors, tolerance = 1e-10)
})

test_that("options(aspectr.shard_cache = FALSE) reads the originals, with the same fit", {
  x <- shard_counts(20, 8, seed = 23)
  dir <- shard_tempdir()
  on.exit(unlink(dir, recursive = TRUE), add = TRUE)
  f <- file.path(dir, c("a.rds", "b.rds"))
  saveRDS(x[1:10, ], f[1])
  saveRDS(x[11:20, ], f[2])
  old <- options(aspectr.shard_cache = FALSE)
  on.exit(options(old), add = TRUE)
  sh <- shards(f)
  expect_null(sh$sources[[1]]$cache)
  a <- plsa(sh, 2, method = "em", seed = 1, max_iter = 20, tol = 0)
  options(aspectr.shard_cache = TRUE)
  sh2 <- shards(f)
  expect_true(startsWith(sh2$sources[[1]]$cache, tempdir()))
  b <- plsa(sh2, 2, method = "em", seed = 1, max_iter = 20, tol = 0)
  expect_equal(a$factors, b$factors, tolerance = 1e-12)
  options(aspectr.shard_cache = 3)
  expect_error(shards(f), class = "aspectr_error_input_value", regexp = "aspectr.shard_cache")
  # a cache directory that cannot be made: the originals are read
  options(aspectr.shard_cache = file.path(f[1], "sub"))
  sh3 <- shards(f)
  expect_null(sh3$sources[[1]]$cache)
  expect_equal(plsa(sh3, 2, method = "em", seed = 1, max_iter = 20, tol = 0)$factors, a$factors, tolerance = 1e-12)
})

test_that("data frame shards are not converted", {
  dir <- shard_tempdir()
  on.exit(unlink(dir, recursive = TRUE), add = TRUE)
  f <- file.path(dir, c("a.rds", "b.rds"))
  saveRDS(data.frame(a = c(1, 2, 1), b = c(2, 1, 1)), f[1])
  saveRDS(data.frame(a = c(2, 2, 1), b = c(1, 1, 2)), f[2])
  sh <- shards(f)
  expect_null(sh$sources[[1]]$cache)
})
