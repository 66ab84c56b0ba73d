# KL coordinate descent of N-way data in shards(): ntf(loss = "kl",
# method = "cd") and plsa(method = "cd") run the in-memory iteration on the
# pieces (each shard solves its rows of the first mode, the other modes'
# Newton steps come from sums over the shards), so the same call gives the
# in-memory fit from shards in memory, shard files and on a cluster.

# an N-way array of counts, every row (slice of mode 1) with a value
kcd_array <- function(dims, seed = 1) {
  old <- if (exists(".Random.seed", globalenv())) get(".Random.seed", globalenv())
  on.exit(if (!is.null(old)) assign(".Random.seed", old, globalenv()))
  set.seed(seed)
  k <- 3
  A <- lapply(dims, function(d) matrix(stats::runif(d * k), d, k))
  m <- array(0, dims)
  for (r in seq_len(k)) m <- m + Reduce(outer, lapply(A, function(a) a[, r]))
  X <- array(stats::rpois(length(m), 3 * m), dims)
  X[cbind(seq_len(dims[1]), matrix(1L, dims[1], length(dims) - 1))] <- 2
  dimnames(X) <- lapply(seq_along(dims), function(n) paste0(letters[n], seq_len(dims[n])))
  X
}

kcd_cases <- list(list(dims = c(14, 6, 5), cuts = c(4L, 9L)), list(dims = c(9, 4, 3, 5), cuts = c(2L, 3L, 7L)))

# the fits of `x` by ntf(loss = "kl", method = "cd") and plsa(method = "cd")
kcd_fits <- function(x, ...) {
  list(ntf = suppressMessages(ntf(x, 3, loss = "kl", method = "cd", seed = 2, max_iter = 30, tol = 1e-9, ...)),
       plsa = suppressMessages(plsa(x, 3, method = "cd", seed = 2, max_iter = 30, tol = 1e-9, ...)))
}

expect_same_kcd <- function(fits, refs, info = NULL) {
  for (f in names(refs)) {
    expect_same_fields(fits[[f]], refs[[f]], c("factors", "weights", "objective", "initial", "value"),
                       c("iterations", "converged", "method", "dims"), info = paste(info, f))
  }
}

test_that("KL coordinate descent of 3-way and 4-way arrays in shards equals the in-memory fit; the objective never rises", {
  for (cs in kcd_cases) {
    X <- kcd_array(cs$dims, seed = length(cs$dims))
    info <- paste0(length(cs$dims), "-way")
    refs <- kcd_fits(X)
    fits <- kcd_fits(shards(split_rows(X, cs$cuts)))
    expect_same_kcd(fits, refs, info)
    for (f in fits) {
      expect_identical(f$method, "cd")
      expect_gt(f$iterations, 5)
      # (coordinate descent never raises the divergence; rounding aside)
      expect_true(all(diff(c(f$initial, f$objective)) <= 1e-12 * f$initial), info = info)
    }
    # plsa()'s default for KL is coordinate descent, on shards too
    expect_identical(suppressMessages(plsa(shards(split_rows(X, cs$cuts)), 2, seed = 1, max_iter = 3))$method, "cd")
  }
  # one shard, and one row per shard
  X <- kcd_array(c(5, 4, 3), seed = 9)
  refs <- kcd_fits(X)
  expect_same_kcd(kcd_fits(shards(list(X))), refs, "one shard")
  expect_same_kcd(kcd_fits(shards(split_rows(X, 1:4))), refs, "rows")
  # ntf() of a matrix by the same rule
  x <- shard_counts(20, 9, seed = 5)
  fit <- function(x) suppressMessages(ntf(x, 3, loss = "kl", method = "cd", seed = 2, max_iter = 30, tol = 1e-9))
  expect_same_kcd(list(ntf = fit(shards(split_rows(x, c(6L, 13L))))), list(ntf = fit(x)), "matrix")
})

test_that("KL coordinate descent of .shard files (also read a few cells at a time) and .rds files equals the in-memory fit", {
  X <- kcd_array(c(13, 5, 4), seed = 6)
  refs <- kcd_fits(X)
  sh <- write_shards(X, shard_tempdir(), n = 3)
  expect_same_kcd(kcd_fits(sh), refs, ".shard")
  old <- options(aspectr.shard_chunk = 7)
  on.exit(options(old), add = TRUE)
  expect_same_kcd(kcd_fits(sh), refs, ".shard, chunks of 7")
  options(old)
  dir <- shard_tempdir()
  f <- file.path(dir, c("a.rds", "b.rds"))
  p <- split_rows(X, 6L)
  for (i in 1:2) saveRDS(p[[i]], f[i])
  expect_same_kcd(kcd_fits(shards(f)), refs, ".rds")
  # the first mode's factor written to files (a directory for each fit)
  got <- list(ntf = suppressMessages(ntf(sh, 3, loss = "kl", method = "cd", seed = 2, max_iter = 30, tol = 1e-9,
                                          factor_dir = shard_tempdir())),
              plsa = suppressMessages(plsa(sh, 3, method = "cd", seed = 2, max_iter = 30, tol = 1e-9,
                                           factor_dir = shard_tempdir())))
  for (g in names(got)) {
    expect_equal(unname(as.matrix(got[[g]]$factors[[1]])), unname(refs[[g]]$factors[[1]]), tolerance = 1e-10,
                 info = paste(g, "factor_dir"))
    expect_equal(got[[g]]$objective, refs[[g]]$objective, tolerance = 1e-10, info = paste(g, "factor_dir"))
    expect_equal(unname(got[[g]]$weights), unname(refs[[g]]$weights), tolerance = 1e-10, info = paste(g, "factor_dir"))
  }
})

test_that("KL coordinate descent of shards: several starts and the callback as in memory", {
  X <- kcd_array(c(10, 5, 4), seed = 4)
  sh <- shards(split_rows(X, c(3L, 7L)))
  fit <- function(x, ...) suppressMessages(ntf(x, 2, loss = "kl", method = "cd", seed = 5, tol = 0, ...))
  expect_same_fields(fit(sh, nrun = 3, max_iter = 15), fit(X, nrun = 3, max_iter = 15),
                     c("factors", "weights", "objective", "run_values"), c("run", "iterations"), info = "nrun")
  seen <- list(); seen_ref <- list()
  fit(X, max_iter = 20, callback = function(it, obj, f) { seen_ref[[it]] <<- list(obj, f); it < 4 })
  fit(sh, max_iter = 20, callback = function(it, obj, f) { seen[[it]] <<- list(obj, f); it < 4 })
  expect_length(seen, 4)
  for (i in 1:4) {
    expect_equal(seen[[i]][[1]], seen_ref[[i]][[1]], tolerance = 1e-10)
    expect_equal(seen[[i]][[2]], seen_ref[[i]][[2]], tolerance = 1e-10)
  }
})

test_that("KL coordinate descent of shards on a PSOCK cluster equals the in-memory fit", {
  skip_on_cran()
  cl <- tryCatch(psock_cluster(), error = function(e) skip(paste("no cluster:", conditionMessage(e))))
  on.exit(parallel::stopCluster(cl), add = TRUE)
  for (cs in kcd_cases) {
    X <- kcd_array(cs$dims, seed = length(cs$dims))
    expect_same_kcd(kcd_fits(shards(split_rows(X, cs$cuts)), cluster = cl), kcd_fits(X),
                    paste0(length(cs$dims), "-way, cluster"))
  }
  stores <- function(cl) unlist(parallel::clusterEvalQ(cl, length(ls(asNamespace("aspectr")$shard_stores))))
  expect_identical(stores(cl), c(0L, 0L))
})

test_that("shards in this process run in the core; kept shards keep the model's value at their cells between passes, files recompute it; all give the in-memory fit", {
  X <- kcd_array(c(12, 5, 4), seed = 4)
  refs <- kcd_fits(X)
  # the requests that reach a shard through R, and which passes carried the
  # iterate hv (needed by a piece that recomputes v = hv'z at its cells)
  # and which the steps alone
  seen <- new.env()
  reset <- function() { seen$calls <- 0L; seen$hv <- 0L; seen$steps <- 0L }
  count <- function() {
    input <- get("input", parent.frame())
    seen$calls <- seen$calls + 1L
    if (identical(get("op", parent.frame()), "kcd_pass")) {
      if (is.null(input$hv)) seen$steps <- seen$steps + 1L else seen$hv <- seen$hv + 1L
    }
  }
  ns <- asNamespace("aspectr")
  suppressMessages(trace("cpp_ntf_kpiece_run", tracer = bquote(.(count)()), print = FALSE, where = ns))
  on.exit(suppressMessages(untrace("cpp_ntf_kpiece_run", where = ns)), add = TRUE)
  parts <- split_rows(X, c(3L, 8L))
  files <- write_shards(parts, shard_tempdir())
  # in this process: every request runs in the core, none through R
  for (sh in list(kept = shards(parts), files = files)) {
    reset()
    expect_same_kcd(kcd_fits(sh), refs, "in this process")
    expect_identical(seen$calls, 0L)
  }
  # with the rows' factor written to files the requests go through R: kept
  # shards send hv only with the first pass of each of the 2 shared modes,
  # to each of the 3 shards, in every iteration, the steps alone with the
  # others; files need hv with every pass
  reset()
  kept <- kcd_fits(shards(parts), factor_dir = shard_tempdir())
  for (f in names(refs)) {
    expect_equal(kept[[f]]$objective, refs[[f]]$objective, tolerance = 1e-10)
    expect_identical(kept[[f]]$iterations, refs[[f]]$iterations)
  }
  expect_identical(seen$hv, 3L * 2L * (kept$ntf$iterations + kept$plsa$iterations))
  expect_gt(seen$steps, seen$hv)
  reset()
  streamed <- kcd_fits(files, factor_dir = shard_tempdir())
  expect_identical(seen$steps, 0L)
  expect_gt(seen$hv, 0L)
  for (f in names(refs)) expect_equal(streamed[[f]]$objective, kept[[f]]$objective, tolerance = 1e-12)
})

test_that("a shard file that disappears during a coordinate descent in this process ends it with a classed error naming it", {
  X <- kcd_array(c(12, 5, 4), seed = 5)
  sh <- write_shards(split_rows(X, c(3L, 8L)), shard_tempdir())
  path <- sh$sources[[2]]$path
  gone <- function(it, value, factors) {
    if (it == 2) file.remove(path)
    TRUE
  }
  expect_error(suppressMessages(ntf(sh, 3, loss = "kl", method = "cd", seed = 2, max_iter = 10, callback = gone)),
               class = "aspectr_error_shard", regexp = basename(path))
})

test_that("shards in this process answer at once on threads with the fit of one after another, bit for bit", {
  x <- kcd_array(c(16, 6, 5), seed = 4)
  sh <- shards(split_rows(x, c(3L, 7L, 12L)))
  strip <- function(f) f[setdiff(names(f), c("time", "call", "threads"))]
  one <- kcd_fits(sh, threads = 1)
  two <- kcd_fits(sh, threads = 2)
  expect_identical(strip(two$ntf), strip(one$ntf))
  expect_identical(strip(two$plsa), strip(one$plsa))
  # a matrix with a prior (the rule of N-way data, passes over the shards)
  set.seed(5)
  m <- matrix(stats::rpois(40 * 15, 1) + (seq_len(40) %% 3 == 0), 40, 15)
  m[, 1] <- m[, 1] + 1
  msh <- shards(split_rows(m, c(10L, 25L)))
  pr <- list(terms = 0.1, documents = 0.5)
  a <- suppressMessages(plsa(msh, 3, seed = 1, max_iter = 25, prior = pr, threads = 1))
  b <- suppressMessages(plsa(msh, 3, seed = 1, max_iter = 25, prior = pr, threads = 2))
  expect_identical(strip(b), strip(a))
  ref <- suppressMessages(plsa(m, 3, seed = 1, max_iter = 25, prior = pr))
  expect_equal(b$factors, ref$factors, tolerance = 1e-10)
})
