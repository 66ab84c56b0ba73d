# Same call, same fit: every family x loss x method x option of the grid
# (helper-grid.R) on every backend (shards in memory, files of each kind, a
# 2-worker PSOCK and a mirai cluster) gives the in-memory fit to 1e-10, or
# the capability table's refusal.

grid_fit_args <- list(seed = 3, max_iter = 6, tol = 0, nrun = 1)

test_that("every cell of the grid gives the in-memory fit, or the table's refusal, on every backend", {
  tab <- aspectr:::shard_capabilities()
  data <- grid_data()
  cl <- psock_cluster()
  on.exit(parallel::stopCluster(cl), add = TRUE)
  clusters <- list(psock = cl)
  # (without mirai the other backends still run)
  if (requireNamespace("mirai", quietly = TRUE)) {
    cm <- mirai_cluster()
    on.exit(parallel::stopCluster(cm), add = TRUE)
    clusters$mirai <- cm
  }
  dir <- shard_tempdir()
  backends <- lapply(stats::setNames(names(data), names(data)), function(s) {
    grid_backends(s, data[[s]]$parts, dir, clusters)
  })
  cells <- grid_cells(tab)
  res <- run_grid(cells, data, backends, grid_fit_args, tab = tab)
  # every row of the table was visited
  rows <- paste(tab$family, tab$loss, tab$method, tab$option, sep = "|")
  expect_true(all(rows %in% res$visited), info = paste(setdiff(rows, res$visited), collapse = ", "))
  expect_gt(res$counts[["fits"]], 100)
  # (a cell is refused exactly when the table refuses it: it refuses none
  # now, every family x loss x method x option runs on every backend)
  if (all(tab$ok)) expect_identical(res$counts[["refusals"]], 0L) else expect_gt(res$counts[["refusals"]], 0L)
})

test_that("the default method on shards is the in-memory default where the table allows it, else the first it allows", {
  sh <- shards(split_rows(shard_counts(20, 12, seed = 6), 9L))
  y <- prop_with_seed(6, array(stats::rpois(10 * 4 * 3, 2) + 1, c(10, 4, 3)))
  fit <- function(x, f = plsa, ...) suppressMessages(f(x, 2, seed = 1, max_iter = 3, tol = 0, ...))$method
  # (KL coordinate descent of a matrix, with a prior and of N-way data;
  # SQUAREM when tempered)
  expect_identical(fit(sh), "cd")
  expect_identical(fit(sh, prior = 0.1), "cd")
  expect_identical(fit(sh, seeds = list(a = "w1")), "cd")
  expect_identical(fit(sh, tempering = 0.9), "squarem")
  expect_identical(fit(sh, loss = "tsallis"), "squarem")
  # (the weighted q-EM on shards is extrapolated by SQUAREM, as in memory)
  expect_identical(fit(sh, loss = "tsallis", row_weights = rep(1, 20)), "squarem")
  expect_identical(fit(shards(split_rows(y, 5L))), "cd")
  expect_identical(fit(sh, ntf, loss = "kl"), "cd")
  # (weighted KL coordinate descent runs on shards too, the default as in
  # memory)
  expect_identical(fit(sh, ntf, loss = "kl", observed = matrix(TRUE, 20, 12)), "cd")
  expect_identical(fit(sh, loss = "l2", observed = matrix(TRUE, 20, 12)), "blocks")
})

test_that("plsa() of shards: the rows' factor in files, staged restarts and the callback as in memory", {
  x <- shard_counts(26, 15, seed = 12)
  parts <- split_rows(x, c(9L, 17L))
  fit <- function(data, ...) suppressMessages(plsa(data, 3, seed = 4, max_iter = 15, tol = 0, ...))
  ref <- fit(x)
  # the rows' factor written to files, staged restarts (a run resumed from
  # its files) and the callback's objective and factors
  got <- fit(shards(parts), factor_dir = shard_tempdir())
  expect_equal(unname(as.matrix(got$factors$documents)), unname(ref$factors$documents), tolerance = 1e-10)
  expect_equal(got$objective, ref$objective, tolerance = 1e-10)
  st_ref <- fit(x, nrun = 3, short_iter = 4, short_keep = 2)
  st <- fit(shards(parts), nrun = 3, short_iter = 4, short_keep = 2, factor_dir = shard_tempdir())
  expect_identical(st$run, st_ref$run)
  expect_equal(st$run_values, st_ref$run_values, tolerance = 1e-10)
  expect_equal(unname(as.matrix(st$factors$documents)), unname(st_ref$factors$documents), tolerance = 1e-10)
  seen <- list(); seen_ref <- list()
  fit(x, callback = function(it, obj, f) { seen_ref[[it]] <<- list(obj, f); it < 5 })
  fit(shards(parts), callback = function(it, obj, f) { seen[[it]] <<- list(obj, f); it < 5 })
  expect_length(seen, 5)
  for (i in 1:5) {
    expect_equal(seen[[i]][[1]], seen_ref[[i]][[1]], tolerance = 1e-10)
    expect_equal(seen[[i]][[1]], ref$objective[i], tolerance = 1e-10)
    expect_equal(seen[[i]][[2]], seen_ref[[i]][[2]], tolerance = 1e-10)
  }
})

test_that("random grids: random sizes, ranks, shard cuts and seeds give the in-memory fit on every backend", {
  # (ASPECTR_GRID_CASES cases, 2 by default; case i is
  # grid_random_case(i))
  n <- grid_n_cases(2)
  skip_if(n == 0, "ASPECTR_GRID_CASES is 0")
  skip_if_not_installed("mirai")
  cl <- psock_cluster()
  on.exit(parallel::stopCluster(cl), add = TRUE)
  cm <- mirai_cluster()
  on.exit(parallel::stopCluster(cm), add = TRUE)
  for (i in seq_len(n)) {
    case <- grid_random_case(i)
    dir <- shard_tempdir()
    backends <- lapply(stats::setNames(names(case$data), names(case$data)), function(s) {
      grid_backends(s, case$data[[s]]$parts, dir, list(psock = cl, mirai = cm))
    })
    res <- run_grid(case$cells, case$data, backends, case$fit_args, k = case$k, label = paste("case", i))
    expect_gt(sum(res$counts), 0)
    unlink(dir, recursive = TRUE)
  }
})
