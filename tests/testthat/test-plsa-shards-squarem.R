# SQUAREM (Varadhan and Roland 2008) of EM, tempered EM and q-EM on data in
# shards(): the rule extrapolates the weights and the shared modes' factors,
# the shards their rows of the documents' factor, with the in-memory rule's
# arithmetic; so the same call gives the in-memory fit (the default method
# with tempering and for Tsallis, and when named), from memory and files.

expect_same_sq <- function(fit, ref, info = NULL, tol = 1e-10) {
  expect_identical(fit$method, ref$method, info = info)
  expect_equal(unname(fit$lambda), unname(ref$lambda), tolerance = tol, info = info)
  for (n in seq_along(ref$factors)) {
    expect_equal(unname(as.matrix(fit$factors[[n]])), unname(as.matrix(ref$factors[[n]])), tolerance = tol,
                 info = paste(info, "factor", n))
  }
  expect_equal(fit$objective, ref$objective, tolerance = tol, info = info)
  expect_equal(fit$initial, ref$initial, tolerance = tol, info = info)
  expect_equal(fit$kl, ref$kl, tolerance = tol, info = info)
  expect_identical(fit$iterations, ref$iterations, info = info)
  expect_identical(fit$converged, ref$converged, info = info)
}

sq_cases <- list(
  kl = list(method = "squarem"),
  tempered_default = list(tempering = 0.8),
  tempered = list(tempering = 0.8, method = "squarem"),
  tsallis_default = list(loss = "tsallis", q = 0.5),
  tsallis = list(loss = "tsallis", q = 0.5, method = "squarem"),
  tsallis_small_q = list(loss = "tsallis", q = 0.2, method = "squarem")
)

test_that("SQUAREM of EM, tempered EM and q-EM on shards in memory and in files gives the in-memory fit", {
  x <- shard_counts(40, 25, seed = 1)
  parts <- split_rows(x, c(12L, 27L))
  dir <- shard_tempdir()
  rds <- file.path(dir, paste0("p", 1:3, ".rds"))
  for (i in 1:3) saveRDS(parts[[i]], rds[i])
  backends <- list(memory = shards(parts), one = shards(list(x)), shard_files = write_shards(parts, shard_tempdir()),
                   rds_files = shards(rds))
  for (case in names(sq_cases)) {
    args <- c(list(k = 3, seed = 2, max_iter = 150, tol = 1e-8), sq_cases[[case]])
    ref <- suppressMessages(do.call(plsa, c(list(x), args)))
    expect_identical(ref$method, "squarem", info = case)
    for (b in names(backends)) {
      fit <- suppressMessages(do.call(plsa, c(list(backends[[b]]), args)))
      expect_same_sq(fit, ref, info = paste(case, b))
    }
    # the iterations never raise the function EM (q-EM) decreases: the
    # divergence reported for plain EM and q-EM (tempered EM decreases its
    # free energy, not the divergence reported)
    if (is.null(sq_cases[[case]]$tempering)) {
      expect_true(all(diff(c(fit$initial, fit$objective)) <= 1e-12 * abs(fit$objective[1])), info = case)
    }
    # (extrapolated: ahead of the plain rule after as many iterations)
    em <- suppressMessages(do.call(plsa, c(list(backends$memory), utils::modifyList(args, list(method = "em", tol = 0, max_iter = 20)))))
    sq <- suppressMessages(do.call(plsa, c(list(backends$memory), utils::modifyList(args, list(tol = 0, max_iter = 20)))))
    expect_lt(sq$objective[20], em$objective[20])
  }
})

test_that("SQUAREM on N-way data in shards and with a prior gives the in-memory fit", {
  set.seed(3)
  y <- array(stats::rpois(14 * 5 * 4, 2), c(14, 5, 4))
  y[, 1, 1] <- y[, 1, 1] + 1
  parts <- split_rows(y, c(4L, 9L))
  for (case in c("kl", "tempered_default", "tsallis_default")) {
    args <- c(list(k = 2, seed = 2, max_iter = 40, tol = 0), sq_cases[[case]])
    ref <- suppressMessages(do.call(plsa, c(list(y), args)))
    expect_identical(ref$method, "squarem")
    expect_same_sq(suppressMessages(do.call(plsa, c(list(shards(parts)), args))), ref, info = paste("3-way", case))
  }
  # a prior (the documents' pseudo-counts in the shards' merit, the terms'
  # in the rule's)
  x <- shard_counts(30, 18, seed = 4)
  args <- list(k = 3, method = "squarem", prior = list(terms = 0.1, documents = 1), seed = 1, max_iter = 60, tol = 0)
  ref <- do.call(plsa, c(list(x), args))
  expect_same_sq(do.call(plsa, c(list(shards(split_rows(x, 13L))), args)), ref, info = "prior")
})

test_that("staged restarts resume SQUAREM's step bound on shards, and the rows' factor goes to files", {
  x <- shard_counts(40, 25, seed = 1)
  parts <- split_rows(x, c(12L, 27L))
  for (case in c("kl", "tempered_default", "tsallis_default")) {
    # (25 iterations: run on further with tol = 0, tempered SQUAREM's step
    # lengths come to be decided by rounding, which differs between the sums
    # over shards and over the whole)
    args <- c(list(k = 3, seed = 3, max_iter = 25, tol = 0), sq_cases[[case]])
    staged <- c(args, list(nrun = 2, short_iter = 6, short_keep = 1))
    ref <- suppressMessages(do.call(plsa, c(list(x), staged)))
    fit <- suppressMessages(do.call(plsa, c(list(shards(parts)), staged)))
    expect_same_sq(fit, ref, info = case)
    expect_equal(fit$run_values, ref$run_values, tolerance = 1e-10)
    files <- suppressMessages(do.call(plsa, c(list(shards(parts)), staged, list(factor_dir = shard_tempdir()))))
    expect_same_sq(files, ref, info = paste(case, "factor_dir"))
    # the first start is kept, and its staged run is the uninterrupted run
    # (the bound resumed where the short run left it; a restart from its
    # factors alone, with the bound at 1, takes another path)
    expect_identical(fit$run, 1L)
    one <- suppressMessages(do.call(plsa, c(list(shards(parts)), args)))
    expect_equal(fit$objective, one$objective, tolerance = 1e-10, info = case)
    short <- suppressMessages(do.call(plsa, c(list(shards(parts)), utils::modifyList(args, list(max_iter = 6)))))
    again <- suppressMessages(do.call(plsa, c(list(shards(parts)), utils::modifyList(args, list(
      seed = NULL, max_iter = 19, init = list(lambda = short$lambda, factors = lapply(short$factors, as.matrix)))))))
    expect_gt(max(abs(again$objective - one$objective[7:25])), 1e-8)
  }
})

test_that("the callback sees the in-memory SQUAREM iterations over shards and can stop it", {
  x <- shard_counts(30, 20, seed = 8)
  parts <- split_rows(x, c(9L, 20L))
  for (case in c("kl", "tsallis_default")) {
    seen <- list(); seen_ref <- list()
    args <- c(list(k = 3, seed = 3, max_iter = 30, tol = 0), sq_cases[[case]])
    ref <- do.call(plsa, c(list(x), args, list(callback = function(it, obj, f) { seen_ref[[it]] <<- list(obj, f); it < 6 })))
    fit <- do.call(plsa, c(list(shards(parts)), args, list(callback = function(it, obj, f) { seen[[it]] <<- list(obj, f); it < 6 })))
    expect_length(seen, 6)
    expect_equal(seen, seen_ref, tolerance = 1e-10)
    expect_true(fit$stopped)
    expect_same_sq(fit, ref, info = case)
  }
})

test_that("the weighted q-EM on shards is extrapolated by SQUAREM as in memory", {
  x <- shard_counts(20, 12, seed = 6)
  sh <- shards(split_rows(x, 9L))
  w <- seq(0.5, 2, length.out = 20)
  fit <- suppressWarnings(plsa(sh, 2, loss = "tsallis", method = "squarem", row_weights = w, seed = 1,
                               max_iter = 10, tol = 0))
  ref <- suppressWarnings(plsa(x, 2, loss = "tsallis", method = "squarem", row_weights = w, seed = 1,
                               max_iter = 10, tol = 0))
  expect_same_sq(fit, ref)
})
