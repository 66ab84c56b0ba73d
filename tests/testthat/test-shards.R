# Sharded fits (shards(), plsa()/ntf() of shards, cluster =): equal to the
# in-memory fit with the same method and seed, from memory, from files of
# every kind and on a PSOCK cluster; faults end in classed errors.

expect_same_fit <- function(fit, ref, tol = 1e-10, names = TRUE) {
  w <- if (is.null(ref$lambda)) "weights" else "lambda"
  expect_equal(unname(fit[[w]]), unname(ref[[w]]), tolerance = tol)
  for (n in seq_along(ref$factors)) {
    if (names) {
      expect_equal(fit$factors[[n]], ref$factors[[n]], tolerance = tol)
    } else {
      expect_equal(unname(fit$factors[[n]]), unname(ref$factors[[n]]), tolerance = tol)
    }
  }
  expect_equal(fit$objective, ref$objective, tolerance = tol)
  expect_equal(fit$initial, ref$initial, tolerance = tol)
  expect_identical(fit$iterations, ref$iterations)
  expect_identical(fit$converged, ref$converged)
  expect_equal(fit$value, ref$value, tolerance = tol)
}

test_that("shards() describes its shards without keeping their data", {
  x <- shard_counts()
  parts <- split_rows(x, c(10, 25))
  sh <- shards(parts)
  expect_s3_class(sh, "aspectr_shards")
  expect_identical(dim(sh), c(40L, 25L))
  expect_identical(dimnames(sh), dimnames(x))
  expect_equal(nnz(sh), sum(x != 0))
  expect_identical(length(sh), 3L)
  expect_output(print(sh), "40 x 25, .* non-zeros in 3 shards \\(in memory\\)")
  expect_output(print(sh), "shard 2: 15 rows")
  # unnamed rows in one shard: no row names
  parts[[2]] <- unname(parts[[2]])
  colnames(parts[[2]]) <- colnames(x)
  expect_null(dimnames(shards(parts))[[1]])
  # files: described, not held
  dir <- shard_tempdir()
  f <- file.path(dir, c("a.rds", "b.rds"))
  saveRDS(x[1:20, ], f[1]); saveRDS(x[21:40, ], f[2])
  sf <- shards(f)
  expect_output(print(sf), "40 x 25, 464 non-zeros in 2 shards \\(in files\\)")
  expect_false(any(vapply(unclass(sf)$sources, function(s) !is.null(s$object), logical(1))))
  expect_lt(as.numeric(utils::object.size(sf)), 20000)
})

test_that("shards() refuses what cannot be one data set, naming the shard", {
  x <- shard_counts()
  expect_error(shards(list(x[1:10, ], x[11:40, 1:20])), class = "aspectr_error_input_value",
               regexp = "same columns.*shard 2 has 20 columns \\(30 x 20 in all\\), shard 1 has 25")
  X <- array(1, c(6, 3, 2))
  expect_error(shards(list(X[1:3, , , drop = FALSE], X[4:6, 1:2, , drop = FALSE])), class = "aspectr_error_input_value",
               regexp = "shard 2 has 2 x 2 columns and further modes \\(3 x 2 x 2 in all\\), shard 1 has 3 x 2")
  y <- x[11:40, ]
  colnames(y)[3] <- "other"
  expect_error(shards(list(x[1:10, ], y)), class = "aspectr_error_input_value", regexp = "names of mode 2")
  expect_error(shards(list(x[1:10, ], array(1, c(2, 25, 2)))), class = "aspectr_error_input_value",
               regexp = "number of modes")
  expect_error(shards(list()), class = "aspectr_error_input_empty")
  expect_error(shards(42), class = "aspectr_error_input_type")
  expect_error(shards(c("a.rds", NA)), class = "aspectr_error_input_value")
  expect_error(shards(file.path(tempdir(), "no-such-file.rds")), class = "aspectr_error_input_value",
               regexp = "does not exist")
  dir <- shard_tempdir()
  txt <- file.path(dir, "x.csv"); writeLines("1,2", txt)
  expect_error(shards(txt), class = "aspectr_error_input_value", regexp = "\\.rds")
  bad <- file.path(dir, "bad.rds"); writeLines("not an rds file", bad)
  expect_error(shards(bad), class = "aspectr_error_shard", regexp = "bad.rds")
  neg <- x; neg[1, 1] <- -1
  expect_error(shards(list(neg)), class = "aspectr_error_shard", regexp = "[Nn]egative|non-negative")
  expect_error(shards(list(x, "a")), class = "aspectr_error_shard", regexp = "shard 2")
  # a shard's data refused are bad input to shards(): the input error's
  # class and argument, and the call that was given them
  err <- tryCatch(shards(list(x, neg)), error = identity)
  expect_s3_class(err, c("aspectr_error_shard", "aspectr_error_input_value", "aspectr_error_input"))
  expect_identical(err$arg, "x")
  expect_identical(err$call[[1]], quote(shards))
  expect_match(conditionMessage(err), "Shard 2 .*non-negative")
  err <- tryCatch(shards(list(x, "a")), error = identity)
  expect_s3_class(err, c("aspectr_error_shard", "aspectr_error_input_type"))
  expect_identical(err$call[[1]], quote(shards))
})

test_that("plsa() of 1, 2 and 3 shards equals the in-memory EM fit", {
  x <- shard_counts()
  ref <- plsa(x, 3, method = "em", seed = 7, max_iter = 60, tol = 1e-9)
  for (cuts in list(integer(0), 17L, c(9L, 30L))) {
    fit <- plsa(shards(split_rows(x, cuts)), 3, method = "em", seed = 7, max_iter = 60, tol = 1e-9)
    expect_same_fit(fit, ref)
    expect_equal(fit$kl, ref$kl, tolerance = 1e-10)
    expect_equal(fit$neg_entropy, ref$neg_entropy, tolerance = 1e-12)
    expect_equal(fit$doc_totals, ref$doc_totals)
    expect_equal(as.numeric(logLik(fit)), as.numeric(logLik(ref)), tolerance = 1e-10)
    expect_identical(fit$method, "em")
    expect_identical(fit$shards, length(cuts) + 1L)
    expect_equal(predict(fit, x[1:5, ]), predict(ref, x[1:5, ]), tolerance = 1e-8)
  }
  # to convergence: the same stopping iteration
  ref <- plsa(x, 3, method = "em", seed = 2, max_iter = 2000, tol = 1e-7)
  fit <- plsa(shards(split_rows(x, c(5L, 20L))), 3, method = "em", seed = 2, max_iter = 2000, tol = 1e-7)
  expect_true(ref$converged)
  expect_same_fit(fit, ref)
})

test_that("tempered EM, N-way data, ntf() and restarts are exact over shards", {
  x <- shard_counts(30, 20, seed = 3)
  parts <- split_rows(x, c(11L, 19L))
  ref <- plsa(x, 2, method = "em", tempering = 0.8, seed = 3, max_iter = 40, tol = 0)
  expect_same_fit(plsa(shards(parts), 2, method = "em", tempering = 0.8, seed = 3, max_iter = 40, tol = 0), ref)

  X <- array(stats::rpois(20 * 6 * 5, 2), c(20, 6, 5))
  X[, 1, 1] <- X[, 1, 1] + 1
  p3 <- split_rows(X, c(7L, 12L))
  ref <- plsa(X, 3, method = "em", seed = 4, max_iter = 40, tol = 0)
  expect_same_fit(plsa(shards(p3), 3, method = "em", seed = 4, max_iter = 40, tol = 0), ref)
  ref <- ntf(X, 3, loss = "kl", method = "mu", seed = 4, max_iter = 40, tol = 0)
  fit <- ntf(shards(p3), 3, loss = "kl", method = "mu", seed = 4, max_iter = 40, tol = 0)
  expect_same_fit(fit, ref)
  expect_equal(fit$loglik_const, ref$loglik_const, tolerance = 1e-12)
  expect_equal(fit$weights, ref$weights, tolerance = 1e-10)
  # (the default, coordinate descent, as in memory)
  ref <- ntf(X, 3, loss = "kl", seed = 4, max_iter = 20, tol = 0)
  fit <- ntf(shards(p3), 3, loss = "kl", seed = 4, max_iter = 20, tol = 0)
  expect_identical(fit$method, "cd")
  expect_same_fit(fit, ref)
  expect_equal(fit$weights, ref$weights, tolerance = 1e-10)

  # several starts, staged restarts, a warm start
  ref <- plsa(x, 3, method = "em", seed = 5, nrun = 4, short_iter = 5, short_keep = 2, max_iter = 50, tol = 1e-9)
  fit <- plsa(shards(parts), 3, method = "em", seed = 5, nrun = 4, short_iter = 5, short_keep = 2, max_iter = 50, tol = 1e-9)
  expect_identical(fit$run, ref$run)
  expect_equal(fit$run_values, ref$run_values, tolerance = 1e-10)
  expect_same_fit(fit, ref)
  warm_ref <- plsa(x, 3, method = "em", init = ref, max_iter = 10, tol = 0)
  warm <- plsa(shards(parts), 3, method = "em", init = fit, max_iter = 10, tol = 0)
  expect_same_fit(warm, warm_ref)
  expect_lte(warm$value, fit$value + 1e-12)
  # same seed, same result
  expect_identical(plsa(shards(parts), 3, method = "em", seed = 9, max_iter = 15)$factors,
                   plsa(shards(parts), 3, method = "em", seed = 9, max_iter = 15)$factors)
})

test_that("Tsallis fits over shards (SQUAREM of q-EM, the default) equal the in-memory fit, on matrices and N-way data", {
  x <- shard_counts(34, 21, seed = 21)
  for (q in c(0.3, 0.8)) {
    ref <- plsa(x, 3, loss = "tsallis", q = q, seed = 2, max_iter = 3000, tol = 1e-7)
    for (cuts in list(integer(0), 15L, c(6L, 22L))) {
      fit <- plsa(shards(split_rows(x, cuts)), 3, loss = "tsallis", q = q, seed = 2, max_iter = 3000, tol = 1e-7)
      expect_same_fit(fit, ref)
      expect_equal(fit$kl, ref$kl, tolerance = 1e-10)
      expect_identical(fit$loss, "tsallis")
      expect_identical(fit$q, q)
    }
  }
  expect_true(ref$converged)
  # 3- and 4-way data: one pass per mode
  for (d in list(c(18, 6, 5), c(16, 4, 3, 3))) {
    X <- with_test_seed(1, array(stats::rpois(prod(d), 2), d))
    X[cbind(seq_len(d[1]), matrix(1L, d[1], length(d) - 1))] <- 1
    cuts <- c(5L, 11L)
    ref <- plsa(X, 2, loss = "tsallis", q = 0.5, seed = 6, max_iter = 30, tol = 0)
    expect_same_fit(plsa(shards(split_rows(X, cuts)), 2, loss = "tsallis", q = 0.5, seed = 6, max_iter = 30, tol = 0),
                    ref)
  }
  # restarts, a warm start, a given start with k = 1, the callback
  ref <- plsa(x, 2, loss = "tsallis", seed = 5, nrun = 3, short_iter = 4, short_keep = 1,
              max_iter = 40, tol = 1e-9)
  fit <- plsa(shards(split_rows(x, 12L)), 2, loss = "tsallis", seed = 5, nrun = 3, short_iter = 4, short_keep = 1,
              max_iter = 40, tol = 1e-9)
  expect_same_fit(fit, ref)
  expect_equal(fit$run_values, ref$run_values, tolerance = 1e-10)
  expect_same_fit(plsa(shards(split_rows(x, 12L)), 2, loss = "tsallis", init = fit, max_iter = 5, tol = 0),
                  plsa(x, 2, loss = "tsallis", init = ref, max_iter = 5, tol = 0))
  expect_same_fit(plsa(shards(split_rows(x, 12L)), 1, loss = "tsallis", seed = 1, max_iter = 5, tol = 0),
                  plsa(x, 1, loss = "tsallis", seed = 1, max_iter = 5, tol = 0))
  seen <- list(); seen_ref <- list()
  fit <- plsa(shards(split_rows(x, 12L)), 2, loss = "tsallis", seed = 3, max_iter = 20, tol = 0,
              callback = function(it, obj, f) { seen[[it]] <<- list(obj, f); it < 4 })
  ref <- plsa(x, 2, loss = "tsallis", seed = 3, max_iter = 20, tol = 0,
              callback = function(it, obj, f) { seen_ref[[it]] <<- list(obj, f); it < 4 })
  expect_true(fit$stopped)
  expect_equal(seen, seen_ref, tolerance = 1e-10)
  expect_same_fit(fit, ref)
  # out of core, from .shard and .rds files
  dir <- shard_tempdir()
  sh <- write_shards(x, dir, n = 3)
  ref <- plsa(x, 3, loss = "tsallis", q = 0.4, seed = 8, max_iter = 25, tol = 0)
  expect_same_fit(plsa(sh, 3, loss = "tsallis", q = 0.4, seed = 8, max_iter = 25, tol = 0), ref)
  f <- file.path(dir, c("a.rds", "b.rds"))
  p <- split_rows(x, 17L)
  for (i in 1:2) saveRDS(p[[i]], f[i])
  expect_same_fit(plsa(shards(f), 3, loss = "tsallis", q = 0.4, seed = 8, max_iter = 25, tol = 0), ref)
})

test_that("the callback sees the in-memory fit's iterations over shards and can stop it", {
  x <- shard_counts(30, 20, seed = 8)
  parts <- split_rows(x, 12L)
  seen <- list(); seen_ref <- list()
  fit <- plsa(shards(parts), 3, method = "em", seed = 1, max_iter = 20, tol = 0,
              callback = function(it, obj, f) { seen[[it]] <<- list(obj, f); it < 6 })
  ref <- plsa(x, 3, method = "em", seed = 1, max_iter = 20, tol = 0,
              callback = function(it, obj, f) { seen_ref[[it]] <<- list(obj, f); it < 6 })
  expect_true(fit$stopped)
  expect_identical(fit$iterations, 6L)
  expect_length(seen, 6)
  for (i in 1:6) {
    expect_equal(seen[[i]][[1]], seen_ref[[i]][[1]], tolerance = 1e-10)
    expect_equal(seen[[i]][[2]], seen_ref[[i]][[2]], tolerance = 1e-10)
  }
  expect_same_fit(fit, ref)
  # progress messages in a non-interactive session
  old <- options(aspectr.progress_interval = 0)
  on.exit(options(old))
  expect_message(plsa(shards(parts), 2, method = "em", seed = 1, max_iter = 3, tol = 0, verbose = TRUE),
                 class = "aspectr_message_progress")
})

test_that("shards in .rds, .mtx, .tns and .h5 files give the in-memory fit", {
  x <- shard_counts(36, 22, seed = 4)
  parts <- split_rows(x, c(10L, 24L))
  ref <- plsa(x, 3, method = "em", seed = 2, max_iter = 40, tol = 0)
  dir <- shard_tempdir()
  write_parts <- function(ext, writer) {
    f <- file.path(dir, paste0("part", seq_along(parts), ".", ext))
    for (i in seq_along(parts)) writer(parts[[i]], f[i])
    f
  }
  files <- list(
    rds = write_parts("rds", function(p, f) saveRDS(Matrix::Matrix(p, sparse = TRUE), f)),
    mtx = write_parts("mtx", function(p, f) Matrix::writeMM(Matrix::Matrix(p, sparse = TRUE), f)),
    tns = write_parts("tns", function(p, f) write_tns(as_sptensor(p), f))
  )
  if (requireNamespace("hdf5r", quietly = TRUE)) {
    files$h5 <- write_parts("h5", function(p, f) {
      m <- methods::as(Matrix::Matrix(t(p), sparse = TRUE), "CsparseMatrix")
      h <- hdf5r::H5File$new(f, mode = "w")
      g <- h$create_group("matrix")
      g[["data"]] <- m@x
      g[["indices"]] <- m@i
      g[["indptr"]] <- m@p
      g[["shape"]] <- dim(m)
      g[["barcodes"]] <- colnames(m)
      fe <- g$create_group("features")
      fe[["id"]] <- rownames(m)
      h$close_all()
    })
  }
  for (kind in names(files)) {
    sh <- shards(files[[kind]])
    expect_identical(dim(sh), dim(x), info = kind)
    fit <- plsa(sh, 3, method = "em", seed = 2, max_iter = 40, tol = 0)
    expect_same_fit(fit, ref, names = kind %in% c("rds", "h5"))
  }
  # a .tns shard whose last columns are empty takes the shared size of the others
  short <- parts[[1]]
  short[, 22] <- 0
  write_tns(as_sptensor(short), files$tns[1])
  sh <- shards(files$tns)
  expect_identical(dim(sh), dim(x))
  # ... and its margins: zeros at the empty columns (they were a column
  # short, and recycled when added to the others': case 84 of the random
  # grid, plsa(k = 1) on .tns files 0.810 against 0.801 in memory)
  expect_identical(sh$meta[[1]]$dims, dim(short))
  expect_equal(sh$meta[[1]]$margins[[1]], unname(colSums(short)))
  x2 <- rbind(short, parts[[2]], parts[[3]])
  for (args in list(list(k = 1), list(k = 2, prior = 0.1, seed = 3, max_iter = 20, tol = 0))) {
    m <- do.call(plsa, c(list(x2), args))
    for (cache in c(TRUE, FALSE)) {
      old <- options(aspectr.shard_cache = cache)
      f <- do.call(plsa, c(list(sh), args))
      options(old)
      expect_equal(f$objective, m$objective, tolerance = 1e-10, info = paste(args$k, cache))
      u <- function(fit) unname(lapply(fit$factors, function(a) unname(as.matrix(a))))
      expect_equal(u(f), u(m), tolerance = 1e-10, info = paste(args$k, cache))
    }
  }
})

test_that("a shard file that changes or disappears during a fit is an error naming it", {
  x <- shard_counts(30, 20, seed = 6)
  dir <- shard_tempdir()
  f <- file.path(dir, c("a.rds", "b.rds", "c.rds"))
  p <- split_rows(x, c(10L, 20L))
  for (i in 1:3) saveRDS(p[[i]], f[i])
  sh <- shards(f)
  # rewritten while the fit runs (after its second iteration)
  expect_error(plsa(sh, 2, method = "em", seed = 1, max_iter = 10, tol = 0,
                    callback = function(it, obj, fac) {
                      if (it == 2) saveRDS(p[[2]][1:5, ], f[2])
                      TRUE
                    }),
               class = "aspectr_error_shard", regexp = "b\\.rds.*changed")
  sh <- shards(f)
  file.remove(f[3])
  expect_error(plsa(sh, 2, method = "em", seed = 1, max_iter = 5), class = "aspectr_error_shard",
               regexp = "c\\.rds.*disappeared")
})

test_that("sharded fits refuse what they cannot do exactly", {
  x <- shard_counts()
  sh <- shards(split_rows(x, 20L))
  expect_error(plsa(sh, 2, loss = "tsallis", tempering = 0.9), class = "aspectr_error_input_argument", regexp = "tempering")
  expect_error(plsa(sh, 2, loss = "tsallis", q = 1), class = "aspectr_error_input")
  # (the L2 loss runs on shards; normalize = FALSE is its own, as in memory)
  expect_error(plsa(sh, 2, normalize = FALSE), class = "aspectr_error_input_argument", regexp = "normalize")
  expect_error(plsa(sh, 2, tempering = 0.9, method = "cd"), class = "aspectr_error_input_argument",
               regexp = "tempering")
  expect_error(plsa(sh, 0), class = "aspectr_error_input")
  expect_error(plsa(sh, 26), class = "aspectr_error_input")
  expect_error(plsa(sh, 2, tempering = 2), class = "aspectr_error_input")
  expect_error(ntf(sh, 2, method = "cd"), class = "aspectr_error_input_argument", regexp = "hals")
  expect_error(plsa(x, 2, cluster = "localhost"), class = "aspectr_error_input_type")
  cl <- structure(list(), class = c("SOCKcluster", "cluster"))
  expect_error(plsa(sh, 2, method = "em", cluster = cl), class = "aspectr_error_input_value", regexp = "no workers")
  expect_warning(plsa(shards(list(x / 2)), 2, method = "em", seed = 1, max_iter = 3), class = "aspectr_warning_noncount")
})

test_that("a 2-worker PSOCK cluster gives the in-memory fit and leaves its workers clean", {
  skip_on_cran()
  cl <- psock_cluster()
  on.exit(parallel::stopCluster(cl), add = TRUE)
  x <- shard_counts(45, 24, seed = 11)
  ref <- plsa(x, 3, method = "em", seed = 3, max_iter = 15, tol = 0)
  dir <- shard_tempdir()
  parts <- split_rows(x, c(12L, 30L))
  f <- file.path(dir, paste0("p", 1:3, ".rds"))
  for (i in 1:3) saveRDS(parts[[i]], f[i])
  for (sh in list(shards(parts), shards(f), shards(split_rows(x, 20L)), shards(list(x)))) {
    fit <- plsa(sh, 3, method = "em", seed = 3, max_iter = 15, tol = 0, cluster = cl)
    expect_same_fit(fit, ref)
  }
  # tempered, several starts
  ref <- plsa(x, 2, tempering = 0.9, seed = 4, nrun = 2, max_iter = 8, tol = 0)
  fit <- plsa(shards(f), 2, tempering = 0.9, seed = 4, nrun = 2, max_iter = 8, tol = 0, cluster = cl)
  expect_same_fit(fit, ref)
  expect_identical(fit$run, ref$run)
  # Tsallis q-EM
  ref <- plsa(x, 3, loss = "tsallis", q = 0.7, seed = 2, max_iter = 15, tol = 0)
  expect_same_fit(plsa(shards(f), 3, loss = "tsallis", q = 0.7, seed = 2, max_iter = 15, tol = 0, cluster = cl), ref)
  # ntf on 3-way shards
  X <- array(stats::rpois(18 * 5 * 4, 2), c(18, 5, 4)); X[, 1, 1] <- 1
  ref <- ntf(X, 2, loss = "kl", method = "mu", seed = 1, max_iter = 10, tol = 0)
  expect_same_fit(ntf(shards(split_rows(X, 9L)), 2, loss = "kl", method = "mu", seed = 1, max_iter = 10, tol = 0,
                      cluster = cl), ref)
  # the workers hold nothing afterwards, also after an error in a worker
  stores <- function() unlist(parallel::clusterEvalQ(cl, length(ls(asNamespace("aspectr")$shard_stores))))
  expect_identical(stores(), c(0L, 0L))
  sh <- shards(f)
  Sys.sleep(1.1)
  saveRDS(parts[[3]][1:4, ], f[3])
  expect_error(plsa(sh, 2, method = "em", seed = 1, max_iter = 5, cluster = cl), class = "aspectr_error_shard",
               regexp = "p3\\.rds.*changed.*worker 2")
  expect_identical(stores(), c(0L, 0L))
  # and the cluster still works
  expect_identical(unlist(parallel::clusterCall(cl, function() 42)), c(42, 42))
})

test_that("a worker that dies ends the fit with a classed error, without hanging", {
  skip_on_cran()
  skip_on_os("windows")
  # (the killed worker's connection is closed by hand: stopCluster() stops
  # at the first node it cannot reach)
  cl <- psock_cluster()
  on.exit(for (node in cl) try(close(node$con), silent = TRUE), add = TRUE)
  pids <- unlist(parallel::clusterCall(cl, Sys.getpid))
  x <- shard_counts(40, 20, seed = 2)
  t0 <- proc.time()[["elapsed"]]
  expect_error(plsa(shards(split_rows(x, 20L)), 2, method = "em", seed = 1, max_iter = 50, tol = 0, cluster = cl,
                    callback = function(it, obj, f) {
                      if (it == 2) tools::pskill(pids[2], tools::SIGKILL)
                      TRUE
                    }),
               class = "aspectr_error_cluster", regexp = "worker")
  expect_lt(proc.time()[["elapsed"]] - t0, 60)
})

test_that("random splits of random data give the in-memory fit (property)", {
  n_cases <- prop_n_cases(6)
  for (i in seq_len(n_cases)) {
    prop_with_seed(900000L + i, {
      N <- sample(2:3, 1)
      dims <- c(sample(8:30, 1), sample(4:12, N - 1))
      X <- array(stats::rpois(prod(dims), stats::runif(1, 0.3, 3)), dims)
      X[cbind(seq_len(dims[1]), matrix(1L, dims[1], N - 1))] <- 1  # no empty rows
      ns <- sample(1:4, 1)
      cuts <- sort(sample(seq_len(dims[1] - 1), ns - 1))
      k <- sample(1:3, 1)
      beta <- if (N == 2 && stats::runif(1) < 0.3) 0.85 else 1
      loss <- if (beta == 1 && stats::runif(1) < 0.4) "tsallis" else "kl"
      q <- stats::runif(1, 0.1, 0.95)
      seed <- sample(1000, 1)
    })
    info <- sprintf("case %d: dims %s, %d shards, k = %d, tempering %g, loss %s (q %.3f)", i,
                    paste(dims, collapse = "x"), ns, k, beta, loss, q)
    # (a matrix under plain KL: its default coordinate descent; else EM)
    m <- if (N == 2 && beta == 1 && loss == "kl") "cd" else "em"
    ref <- plsa(X, k, loss = loss, q = q, method = m, tempering = beta, seed = seed, max_iter = 25, tol = 1e-10)
    fit <- plsa(shards(split_rows(X, cuts)), k, loss = loss, q = q, method = m, tempering = beta, seed = seed,
                max_iter = 25, tol = 1e-10)
    expect_equal(fit$factors, ref$factors, tolerance = 1e-10, info = info)
    expect_equal(fit$objective, ref$objective, tolerance = 1e-10, info = info)
    expect_identical(fit$iterations, ref$iterations, info = info)
  }
})

test_that("shards are spread over the workers in contiguous groups of about equal size", {
  g <- asNamespace("aspectr")$shard_groups
  expect_identical(g(c(5, 5), 2), list(1L, 2L))
  expect_identical(g(c(9, 1), 2), list(1L, 2L))
  expect_identical(g(c(5, 5, 5), 8), list(1L, 2L, 3L))
  expect_identical(g(rep(1, 6), 2), list(1:3, 4:6))
  expect_identical(g(c(10, 1, 1, 1, 1, 6), 2), list(1L, 2:6))
  expect_identical(unlist(g(stats::runif(50), 3)), 1:50)
  expect_length(g(rep(1, 50), 3), 3)
})

test_that("a mirai cluster, which does not pin calls to workers, gives the in-memory fit", {
  skip_on_cran()
  cl <- mirai_cluster()
  on.exit(parallel::stopCluster(cl), add = TRUE)
  x <- shard_counts(50, 30, seed = 12)
  parts <- split_rows(x, c(10L, 22L, 37L))
  ref <- plsa(x, 3, method = "em", seed = 6, max_iter = 10, tol = 0)
  for (i in 1:3) {
    expect_same_fit(plsa(shards(parts), 3, method = "em", seed = 6, max_iter = 10, tol = 0, cluster = cl), ref)
  }
  X <- array(stats::rpois(24 * 5 * 4, 2), c(24, 5, 4)); X[, 1, 1] <- 1
  expect_same_fit(plsa(shards(split_rows(X, c(6L, 13L, 19L))), 2, loss = "tsallis", seed = 2, max_iter = 12, tol = 0,
                       cluster = cl),
                  plsa(X, 2, loss = "tsallis", seed = 2, max_iter = 12, tol = 0))
  ref <- plsa(x, 2, method = "em", seed = 1, nrun = 3, max_iter = 15, tol = 0)
  expect_same_fit(plsa(shards(parts[1:2 + 2]), 2, method = "em", seed = 1, nrun = 3, max_iter = 15, tol = 0, cluster = cl),
                  plsa(do.call(rbind, parts[3:4]), 2, method = "em", seed = 1, nrun = 3, max_iter = 15, tol = 0))
})

test_that("an interrupt stops a cluster fit and leaves the workers clean and usable", {
  skip_on_cran()
  cl <- psock_cluster()
  on.exit(parallel::stopCluster(cl), add = TRUE)
  x <- shard_counts(40, 20, seed = 5)
  sh <- shards(split_rows(x, 20L))
  got <- tryCatch(plsa(sh, 2, method = "em", seed = 1, max_iter = 50, tol = 0, cluster = cl,
                       callback = function(it, obj, f) {
                         if (it == 3) rlang::interrupt()
                         TRUE
                       }),
                  interrupt = function(e) "interrupted")
  expect_identical(got, "interrupted")
  expect_identical(unlist(parallel::clusterEvalQ(cl, length(ls(asNamespace("aspectr")$shard_stores)))), c(0L, 0L))
  # the next fit on the same cluster is exact
  ref <- plsa(x, 2, method = "em", seed = 1, max_iter = 10, tol = 0)
  expect_same_fit(plsa(sh, 2, method = "em", seed = 1, max_iter = 10, tol = 0, cluster = cl), ref)
})

test_that("write_shards() writes .shard files that fit as the in-memory data", {
  x <- shard_counts(37, 21, seed = 13)
  dir <- shard_tempdir()
  sh <- write_shards(x, dir, n = 3)
  expect_s3_class(sh, "aspectr_shards")
  expect_length(sh, 3)
  expect_identical(dim(sh), dim(x))
  expect_identical(dimnames(sh), dimnames(x))
  expect_equal(nnz(sh), sum(x != 0))
  expect_true(all(file.exists(file.path(dir, paste0("shard", 1:3, ".shard")))))
  # rows split in order, about equal non-zeros, none empty
  rows <- unclass(sh)$rows
  expect_identical(sum(rows), 37)
  expect_true(all(rows > 0))
  ref <- plsa(x, 3, method = "em", seed = 4, max_iter = 30, tol = 1e-10)
  fit <- plsa(sh, 3, method = "em", seed = 4, max_iter = 30, tol = 1e-10)
  expect_same_fit(fit, ref)
  expect_equal(fit$neg_entropy, ref$neg_entropy, tolerance = 1e-12)
  expect_equal(fit$doc_totals, ref$doc_totals)
  # the summaries of .shard files equal those of the same data in memory
  mem <- shards(split_rows(x, cumsum(rows)[1:2]))
  for (i in 1:3) {
    a <- unclass(sh)$meta[[i]]; b <- unclass(mem)$meta[[i]]
    for (f in c("nnz", "total", "top", "scaled", "whole", "neg_entropy", "loglik_const", "doc_totals", "margins")) {
      expect_equal(a[[f]], b[[f]], tolerance = 1e-14, info = f)
    }
  }
  # pieces, and N-way data; one shard per piece
  X <- array(stats::rpois(12 * 5 * 4, 2), c(12, 5, 4)); X[, 1, 1] <- 1
  sh3 <- write_shards(split_rows(X, c(4L, 9L)), shard_tempdir(), prefix = "t")
  expect_identical(dim(sh3), dim(X))
  expect_same_fit(plsa(sh3, 2, method = "em", seed = 1, max_iter = 20, tol = 0),
                  plsa(X, 2, method = "em", seed = 1, max_iter = 20, tol = 0))
  expect_same_fit(ntf(sh3, 2, loss = "kl", method = "mu", seed = 1, max_iter = 20, tol = 0),
                  ntf(X, 2, loss = "kl", method = "mu", seed = 1, max_iter = 20, tol = 0))
  expect_same_fit(ntf(sh3, 2, loss = "kl", seed = 1, max_iter = 20, tol = 0),
                  ntf(X, 2, loss = "kl", seed = 1, max_iter = 20, tol = 0))
  # each row its own shard
  expect_length(write_shards(x[1:4, ], shard_tempdir(), n = 4), 4)
})

test_that("write_shards() splits shards() anew into n shards, from files of any kind", {
  x <- shard_counts(37, 21, seed = 13)
  whole <- write_shards(x, shard_tempdir(), n = 3)
  # three shards in memory, split otherwise, written as 3 and as 2 new
  # shards: the rows of one object split into n (the same files)
  mem <- shards(split_rows(x, c(5L, 30L)))
  again <- write_shards(mem, shard_tempdir(), n = 3)
  expect_identical(unclass(again)$rows, unclass(whole)$rows)
  for (i in 1:3) {
    expect_identical(unname(tools::md5sum(unclass(again)$sources[[i]]$path)),
                     unname(tools::md5sum(unclass(whole)$sources[[i]]$path)))
  }
  two <- write_shards(mem, shard_tempdir(), n = 2)
  expect_length(two, 2)
  expect_identical(dimnames(two), dimnames(x))
  expect_identical(unclass(two)$rows, unclass(write_shards(x, shard_tempdir(), n = 2))$rows)
  # one file (here .rds) into 4 .shard files that fit as the data
  f <- tempfile(fileext = ".rds")
  saveRDS(x, f)
  four <- write_shards(shards(f), shard_tempdir(), n = 4)
  expect_length(four, 4)
  expect_identical(sum(unclass(four)$rows), 37)
  expect_same_fit(plsa(four, 3, seed = 4, max_iter = 15, tol = 0), plsa(x, 3, seed = 4, max_iter = 15, tol = 0))
  # rows without names in one shard: none kept; N-way shards
  mem2 <- shards(list(unname(x[1:10, ]), x[11:37, ]))
  expect_null(rownames(write_shards(mem2, shard_tempdir(), n = 2)))
  X <- array(stats::rpois(12 * 5 * 4, 2), c(12, 5, 4)); X[, 1, 1] <- 1
  X3 <- write_shards(shards(split_rows(X, c(4L, 9L))), shard_tempdir(), n = 5)
  expect_length(X3, 5)
  expect_same_fit(ntf(X3, 2, loss = "kl", seed = 1, max_iter = 10, tol = 0),
                  ntf(X, 2, loss = "kl", seed = 1, max_iter = 10, tol = 0))
  expect_error(write_shards(mem, shard_tempdir(), n = 38), class = "aspectr_error_input", regexp = "37")
})

test_that("write_shards() splits shard files anew into their own directory without losing them", {
  x <- shard_counts(40, 15, seed = 21)
  dir <- shard_tempdir()
  three <- write_shards(x, dir, n = 3)
  ref <- write_shards(x, shard_tempdir(), n = 6)
  # (every file read whole before any is replaced: the same bytes as a
  # split of the data into another directory)
  six <- write_shards(three, dir, n = 6)
  expect_length(six, 6)
  for (i in 1:6) {
    expect_identical(unname(tools::md5sum(unclass(six)$sources[[i]]$path)),
                     unname(tools::md5sum(unclass(ref)$sources[[i]]$path)))
  }
  expect_identical(sort(list.files(dir, all.files = TRUE, no.. = TRUE)), sprintf("shard%d.shard", 1:6))
  # fewer shards into the same directory: the leftovers of the earlier
  # split are named in a warning
  expect_warning(two <- write_shards(six, dir, n = 2), class = "aspectr_warning_input",
                 regexp = "4 shard files of prefix \"shard\".*shard3.shard, shard4.shard, shard5.shard, ...")
  expect_same_fit(plsa(two, 3, seed = 4, max_iter = 10, tol = 0), plsa(x, 3, seed = 4, max_iter = 10, tol = 0))
  # a description of files changed since is a shard error, not one of dir
  expect_error(write_shards(three, shard_tempdir()), class = "aspectr_error_shard", regexp = "has changed")
  # pieces that do not fit together: refused before anything is written
  bad_dir <- file.path(shard_tempdir(), "new")
  expect_error(write_shards(list(x[1:20, ], x[21:40, 1:10]), bad_dir), class = "aspectr_error_input_value",
               regexp = "20 x 10")
  named <- x
  colnames(named) <- paste0("w", 1:15)
  other <- named
  colnames(other)[2] <- "zz"
  expect_error(write_shards(list(named[1:20, ], other[21:40, ]), bad_dir), class = "aspectr_error_input_value",
               regexp = "column names")
  expect_false(dir.exists(bad_dir) && length(list.files(bad_dir, all.files = TRUE, no.. = TRUE)) > 0)
})

test_that("write_shards() refuses bad arguments, and bad .shard files are shard errors", {
  x <- shard_counts()
  expect_error(write_shards(x), class = "aspectr_error_input", regexp = "dir")
  expect_error(write_shards(x, 1), class = "aspectr_error_input_type", regexp = "dir")
  expect_error(write_shards(x, shard_tempdir(), n = 0), class = "aspectr_error_input", regexp = "n")
  expect_error(write_shards(x, shard_tempdir(), n = 41), class = "aspectr_error_input", regexp = "n")
  expect_error(write_shards(list(x), shard_tempdir(), n = 2), class = "aspectr_error_input_argument", regexp = "n")
  expect_error(write_shards(list(), shard_tempdir()), class = "aspectr_error_input_empty")
  expect_error(write_shards(-x, shard_tempdir()), class = "aspectr_error_input")
  dir <- shard_tempdir()
  bad <- file.path(dir, "bad.shard")
  writeBin(charToRaw("not a shard file at all"), bad)
  expect_error(shards(bad), class = "aspectr_error_shard", regexp = "bad\\.shard.*write_shards")
  sh <- write_shards(x, dir, n = 2)
  f <- unclass(sh)$sources[[2]]$path
  # truncated while a fit runs
  expect_error(plsa(sh, 2, method = "em", seed = 1, max_iter = 5, tol = 0,
                    callback = function(it, obj, fac) {
                      if (it == 2) writeBin(readBin(f, "raw", 100), f)
                      TRUE
                    }),
               class = "aspectr_error_shard", regexp = "shard2\\.shard")
  # a file of another byte order
  raw <- readBin(file.path(dir, "shard1.shard"), "raw", 1e6)
  raw[9:12] <- rev(raw[9:12])
  swapped <- file.path(dir, "swapped.shard")
  writeBin(raw, swapped)
  expect_error(shards(swapped), class = "aspectr_error_shard", regexp = "byte order")
  # a cell index out of range (the header intact): every fit's first read
  # of it is a shard error naming the file (nmf()'s NNDSVD start included)
  damaged <- file.path(dir, "damaged.shard")
  file.copy(file.path(dir, "shard1.shard"), damaged)
  con <- file(damaged, "r+b")
  seek(con, 8 + 8 + 8 * 4, rw = "write")  # the first cell's row (a matrix: N = 2)
  writeBin(100000L, con, size = 4)
  close(con)
  dsh <- shards(damaged)
  expect_error(nmf(dsh, 2, seed = 1, max_iter = 5), class = "aspectr_error_shard", regexp = "damaged\\.shard")
  expect_error(plsa(dsh, 2, seed = 1, max_iter = 5), class = "aspectr_error_shard", regexp = "damaged\\.shard")
})

test_that("print() of shards counts a shard's row and non-zero in the singular", {
  x <- shard_counts(3, 5, seed = 1)
  x[1, ] <- c(4, 0, 0, 0, 0)
  out <- capture.output(print(shards(list(x[1, , drop = FALSE], x[2:3, ]))))
  expect_match(out[2], ": 1 row, 1 non-zero$")
  expect_match(out[3], ": 2 rows, [0-9]+ non-zeros$")
})

test_that("a component without mass keeps its factors over shards, as in memory", {
  x <- shard_counts(30, 12, seed = 2)
  init <- prop_with_seed(5, list(lambda = c(0.5, 0.5, 0),
                                 factors = list(matrix(stats::runif(90), 30, 3), matrix(stats::runif(36), 12, 3))))
  ref <- plsa(x, 3, method = "em", init = init, max_iter = 10, tol = 0)
  expect_identical(unname(ref$lambda[3]), 0)
  expect_same_fit(plsa(shards(split_rows(x, 10L)), 3, method = "em", init = init, max_iter = 10, tol = 0), ref)
  # out of core, where the step writes over the documents' factor: a
  # component without mass anywhere, and one without mass in one shard only
  sh <- write_shards(split_rows(x, 10L), shard_tempdir())
  expect_same_fit(plsa(sh, 3, method = "em", init = init, max_iter = 10, tol = 0), ref)
  init2 <- init
  init2$lambda <- c(0.4, 0.3, 0.3)
  init2$factors[[1]][1:10, 2] <- 0
  ref2 <- plsa(x, 3, method = "em", init = init2, max_iter = 10, tol = 0)
  expect_same_fit(plsa(sh, 3, method = "em", init = init2, max_iter = 10, tol = 0), ref2)
  expect_same_fit(plsa(shards(split_rows(x, 10L)), 3, method = "em", init = init2, max_iter = 10, tol = 0), ref2)
})

test_that("a FORK cluster gives the in-memory fit", {
  skip_on_cran()
  skip_on_os("windows")
  cl <- parallel::makeForkCluster(2)
  on.exit(parallel::stopCluster(cl), add = TRUE)
  x <- shard_counts(30, 16, seed = 21)
  ref <- plsa(x, 2, method = "em", seed = 8, max_iter = 10, tol = 0)
  expect_same_fit(plsa(shards(split_rows(x, c(8L, 19L))), 2, method = "em", seed = 8, max_iter = 10, tol = 0, cluster = cl), ref)
})

test_that("shards of values at the ends of the double range give the in-memory fit", {
  # the cells are normalized by scale factors where 1 / max and 1 / (sum of
  # values / max) are normal numbers, else by dividing a copy: both ways,
  # in memory and from .shard files, for EM and q-EM
  x <- shard_counts(30, 12, seed = 21)
  for (s in c(2^-1060, 2^1000)) {
    y <- x * s
    ref <- suppressWarnings(plsa(y, 2, method = "em", seed = 3, max_iter = 25, tol = 0))
    refx <- plsa(x, 2, method = "em", seed = 3, max_iter = 25, tol = 0)
    expect_equal(ref$factors, refx$factors, tolerance = 1e-10)
    fit <- suppressWarnings(plsa(shards(split_rows(y, c(11L, 20L))), 2, method = "em", seed = 3, max_iter = 25, tol = 0))
    expect_same_fit(fit, ref)
    dir <- shard_tempdir()
    sh <- suppressWarnings(write_shards(y, dir, n = 2))
    fit <- suppressWarnings(plsa(sh, 2, method = "em", seed = 3, max_iter = 25, tol = 0))
    expect_same_fit(fit, ref)
    refq <- suppressWarnings(plsa(y, 2, loss = "tsallis", seed = 3, max_iter = 15, tol = 0))
    fitq <- suppressWarnings(plsa(sh, 2, loss = "tsallis", seed = 3, max_iter = 15, tol = 0))
    expect_same_fit(fitq, refq)
  }
})

test_that("out of core, EM reads a shard file a chunk at a time and gives the in-memory fit", {
  # every chunk size from one cell to the whole shard: the passes are sums
  # over the cells, the objective adds sum g log g once per shard
  old <- options(aspectr.shard_chunk = NULL)
  on.exit(options(old), add = TRUE)
  x <- shard_counts(37, 21, seed = 17)
  sh <- write_shards(x, shard_tempdir(), n = 3)
  ref <- plsa(x, 3, method = "em", seed = 2, max_iter = 25, tol = 0)
  reft <- plsa(x, 3, tempering = 0.85, seed = 2, max_iter = 25, tol = 0)
  ref3 <- plsa(x, 3, method = "em", seed = 5, nrun = 3, max_iter = 20, tol = 0)
  for (chunk in c(1, 5, 64, 1e6)) {
    options(aspectr.shard_chunk = chunk)
    expect_same_fit(plsa(sh, 3, method = "em", seed = 2, max_iter = 25, tol = 0), ref)
    expect_same_fit(plsa(sh, 3, tempering = 0.85, seed = 2, max_iter = 25, tol = 0), reft)
    # restarts: the best run's documents' factor is put in order in place
    fit3 <- plsa(sh, 3, method = "em", seed = 5, nrun = 3, max_iter = 20, tol = 0)
    expect_same_fit(fit3, ref3)
    expect_equal(fit3$run_values, ref3$run_values, tolerance = 1e-10)
    expect_false(is.unsorted(rev(fit3$lambda)))
  }
  # N-way: 3 modes (MTTKRP form) and 4 (posterior form)
  options(aspectr.shard_chunk = 4)
  set.seed(3)
  for (d in list(c(14, 5, 4), c(12, 4, 3, 3))) {
    X <- array(stats::rpois(prod(d), 1.5), d)
    X[cbind(seq_len(d[1]), matrix(1, d[1], length(d) - 1))] <- 1
    shN <- write_shards(split_rows(X, c(5L, 9L)), shard_tempdir(), prefix = "t")
    expect_same_fit(plsa(shN, 2, method = "em", seed = 1, max_iter = 15, tol = 0),
                    plsa(X, 2, method = "em", seed = 1, max_iter = 15, tol = 0))
  }
})

test_that("chunks of whole and of fractional values give the in-memory objective", {
  # the first chunk of a shard decides whether its objective counts the
  # whole values (LogSum) or takes a log per cell; both are the KL divergence
  old <- options(aspectr.shard_chunk = 3)
  on.exit(options(old), add = TRUE)
  x <- shard_counts(24, 10, seed = 8)
  for (rows in list(1:2, 20:24)) {
    y <- x
    y[rows, ] <- y[rows, ] * 0.37
    ref <- suppressWarnings(plsa(y, 2, method = "em", seed = 6, max_iter = 20, tol = 0))
    sh <- write_shards(y, shard_tempdir(), n = 2)
    fit <- suppressWarnings(plsa(sh, 2, method = "em", seed = 6, max_iter = 20, tol = 0))
    expect_same_fit(fit, ref)
    expect_equal(fit$kl, ref$kl, tolerance = 1e-10)
  }
})

test_that("the chunk option of out-of-core fits is checked", {
  sh <- write_shards(shard_counts(12, 6, seed = 2), shard_tempdir(), n = 2)
  for (bad in list(0, -1, 2.5, "a", NA_real_, c(1, 2))) {
    old <- options(aspectr.shard_chunk = bad)
    expect_error(plsa(sh, 2, method = "em", max_iter = 2), class = "aspectr_error_input_argument", regexp = "aspectr.shard_chunk")
    options(old)
  }
})

test_that("threads over chunks and over kept shards give the in-memory fit", {
  # chunks of 5000 cells split over 2 threads (the last, smaller chunk over
  # one): the threads' sums are kept over the chunks and added once
  old <- options(aspectr.shard_chunk = 5000)
  on.exit(options(old), add = TRUE)
  set.seed(12)
  x <- Matrix::rsparsematrix(400, 300, 0.2, rand.x = function(n) stats::rpois(n, 2) + 1)
  x[, 1] <- x[, 1] + 1
  ref <- plsa(x, 4, method = "em", seed = 3, max_iter = 12, tol = 0, threads = 1)
  sh <- write_shards(x, shard_tempdir(), n = 2)
  expect_same_fit(plsa(sh, 4, method = "em", seed = 3, max_iter = 12, tol = 0, threads = 2), ref, names = FALSE)
  expect_same_fit(plsa(shards(split_rows(x, 150L)), 4, method = "em", seed = 3, max_iter = 12, tol = 0, threads = 2),
                  ref, names = FALSE)
  reft <- plsa(x, 4, tempering = 0.9, seed = 3, max_iter = 12, tol = 0, threads = 1)
  expect_same_fit(plsa(sh, 4, tempering = 0.9, seed = 3, max_iter = 12, tol = 0, threads = 2), reft,
                  names = FALSE)
})

test_that("a sharded fit draws from the session's random numbers as the in-memory fit does", {
  x <- shard_counts(30, 18, seed = 14)
  sh <- shards(split_rows(x, 12L))
  set.seed(31)
  a <- plsa(sh, 2, method = "em", seed = NULL, max_iter = 5, tol = 0)
  after_sharded <- stats::runif(3)
  set.seed(31)
  b <- plsa(x, 2, method = "em", seed = NULL, max_iter = 5, tol = 0)
  expect_identical(stats::runif(3), after_sharded)
  expect_equal(a$factors, b$factors, tolerance = 1e-10)
  # with a seed, the session's stream is left as it was
  set.seed(32)
  invisible(plsa(sh, 2, method = "em", seed = 4, max_iter = 3, tol = 0))
  u <- stats::runif(2)
  set.seed(32)
  expect_identical(u, stats::runif(2))
})

test_that("a sharded random start is drawn shard by shard with the numbers of the whole start", {
  # plsa() of shards keeps the documents' part of a random start as the
  # generator's state and its column sums, and draws each shard's rows a
  # column at a time: the same numbers as random_start(), bit for bit, and
  # the session's stream left where random_start() leaves it
  x <- shards(list(matrix(1, 7, 4), matrix(1, 5, 4), matrix(1, 9, 4)))
  set.seed(31)
  ref <- aspectr:::random_start(x$dims, 3)
  after_ref <- stats::runif(1)
  set.seed(31)
  lazy <- aspectr:::random_start_lazy(x$dims, 3)
  after_lazy <- stats::runif(1)
  expect_identical(after_lazy, after_ref)
  expect_identical(lazy$lambda, ref$lambda)
  expect_identical(lazy$factors[-1], ref$factors[-1])
  # each store draws the blocks of its own shards (here all, then the
  # first and the third)
  spec <- list(kind = "plsa", state = lazy$state, k = 3, d0 = lazy$d0, colsum = lazy$colsum)
  set.seed(5); state <- .Random.seed
  blocks <- aspectr:::shard_random_blocks(x$rows, 1:3, lazy$state, 3, aspectr:::shard_start_column(spec))
  expect_identical(.Random.seed, state)  # the session's stream untouched
  expect_identical(t(do.call(cbind, blocks)), ref$factors[[1]])
  some <- aspectr:::shard_random_blocks(x$rows, c(1, 3), lazy$state, 3, aspectr:::shard_start_column(spec))
  expect_identical(some, blocks[c(1, 3)])
  # nmf's start: W's columns by the stores, H's draws after them
  set.seed(8)
  W <- matrix(stats::runif(21 * 2), 21, 2) * 0.5
  H <- matrix(stats::runif(2 * 4), 2, 4) * 0.5
  set.seed(8); st <- .Random.seed
  spec <- list(kind = "nmf", k = 2, m = 21, scale = 0.5)
  wb <- aspectr:::shard_random_blocks(x$rows, 1:3, st, 2, aspectr:::shard_start_column(spec))
  expect_identical(t(do.call(cbind, wb)), W)
  expect_identical(aspectr:::shard_draws_after(st, 21 * 2, function() matrix(stats::runif(2 * 4), 2, 4) * 0.5), H)
})

test_that("a kept 2-way shard holds its cells by column, and a fit of shuffled cells is the in-memory fit", {
  set.seed(41)
  m <- Matrix::rsparsematrix(40, 25, 0.2, rand.x = function(n) stats::rpois(n, 2) + 1)
  d <- as_aspect_data(m)
  o <- sample(length(d$val))
  shuffled <- structure(list(idx = d$idx[, o], val = d$val[o], dims = d$dims, dimnames = d$dimnames),
                        class = "aspectr_shard_data")
  b <- aspectr:::shard_by_column(unclass(shuffled))
  key <- b$idx[2, ] * 1e6 + b$idx[1, ]
  expect_false(is.unsorted(key, strictly = TRUE))
  expect_equal(sort(b$val), sort(d$val))
  expect_equal(Matrix::sparseMatrix(i = b$idx[1, ] + 1, j = b$idx[2, ] + 1, x = b$val, dims = d$dims), m,
               ignore_attr = TRUE)
  # a kept shard is loaded as read, and put in that order at the first
  # request that needs it (shard_kept_data())
  id <- "test_by_column"
  on.exit(aspectr:::shard_op(id, "drop"), add = TRUE)
  src <- list(kind = "object", object = shuffled, label = "shard 1")
  aspectr:::shard_op(id, "load", 0, list(ids = 1, sources = list(src), rows = d$dims[1], keep = TRUE))
  st <- get(id, envir = aspectr:::shard_stores)
  expect_identical(st$shards[["1"]]$data$idx, shuffled$idx)
  kept <- aspectr:::shard_kept_data(st, "1")
  expect_identical(kept$idx, b$idx)
  expect_identical(kept$val, b$val)
  expect_identical(st$shards[["1"]]$data$idx, b$idx)
  # 3-way data stay as they are
  t3 <- list(idx = rbind(c(1L, 0L), c(0L, 1L), c(0L, 0L)), val = c(1, 2), dims = c(2L, 2L, 1L))
  expect_identical(aspectr:::shard_by_column(t3), t3)
  # shards given as shuffled cells (the fit sorts them) and as matrices
  half <- function(rows) {
    p <- as_aspect_data(m[rows, ])
    o <- sample(length(p$val))
    structure(list(idx = p$idx[, o], val = p$val[o], dims = p$dims, dimnames = p$dimnames),
              class = "aspectr_shard_data")
  }
  f1 <- plsa(shards(list(half(1:17), half(18:40))), 3, method = "em", max_iter = 25, tol = 0, seed = 4)
  f0 <- plsa(m, 3, method = "em", max_iter = 25, tol = 0, seed = 4)
  expect_equal(f1$factors, f0$factors, tolerance = 1e-10)
  expect_equal(f1$objective, f0$objective, tolerance = 1e-10)
})

test_that("topics whose weights tie to rounding come out in the same order in memory and in shards", {
  x <- rbind(diag(4), diag(4))
  f <- function(d) plsa(d, 4, seed = 1, max_iter = 8, tol = 0)
  a <- f(x)
  b <- f(shards(list(x[1:3, ], x[4:8, ])))
  expect_equal(b$factors, a$factors, tolerance = 1e-10)
  expect_equal(b$lambda, a$lambda, tolerance = 1e-10)
  # (a smaller weight by rounding first keeps its place; by value it would be last)
  expect_identical(plsa_order(c(0.25 - 2^-54, 0.25, 0.25, 0.25)), 1:4)
  expect_identical(plsa_order(c(0.1, 0.3, 0.2, 0.3)), c(2L, 4L, 3L, 1L))
})

test_that("a kept shard's cells are sorted by column at the first request that needs it, and nmf()'s state takes them as read", {
  x <- with_test_seed(3, Matrix::rsparsematrix(30, 8, 0.4, rand.x = function(n) rpois(n, 3) + 1))
  dir <- tempfile("kept")
  dir.create(dir)
  on.exit(unlink(dir, recursive = TRUE), add = TRUE)
  src <- write_shards(list(x), dir)$sources[[1]]
  d <- aspectr:::shard_data(src)
  # (cells as read from a .shard file: by row, so sorting them changes
  # their order)
  o <- order(d$idx[2, ], d$idx[1, ])
  expect_true(is.unsorted(o))
  st <- new.env()
  st$shards <- list("1" = list(id = 1, keep = TRUE, data = d))
  expect_identical(aspectr:::shard_kept_data(st, "1", any_order = TRUE), d)
  expect_null(st$shards[["1"]]$data$by_column)
  s1 <- aspectr:::shard_kept_data(st, "1")
  expect_identical(s1$idx, d$idx[, o])
  expect_identical(s1$val, d$val[o])
  expect_true(s1$by_column)
  # kept sorted: a later request takes the kept cells as they are, without
  # sorting again (cells put out of order behind the mark come back so)
  expect_identical(st$shards[["1"]]$data, s1)
  st$shards[["1"]]$data$idx <- d$idx
  expect_identical(aspectr:::shard_kept_data(st, "1")$idx, d$idx)
  # nmf()'s shard state is the same from the cells in either order
  a <- aspectr:::cpp_nmf_shard_state(d$idx, d$val, dim(x), 2)
  b <- aspectr:::cpp_nmf_shard_state(s1$idx, s1$val, dim(x), 2)
  Z <- with_test_seed(4, matrix(runif(8 * 3), 8, 3))
  expect_identical(aspectr:::cpp_nmf_product(a, Z, "XZ", 1L), aspectr:::cpp_nmf_product(b, Z, "XZ", 1L))
  W <- with_test_seed(5, matrix(runif(30 * 3), 30, 3))
  expect_identical(aspectr:::cpp_nmf_product(a, W, "WtX", 1L), aspectr:::cpp_nmf_product(b, W, "WtX", 1L))
})

test_that("a .shard file read whole gives its cells, and a damaged one a message of what is wrong", {
  x <- shard_counts(12, 7, seed = 3)
  dir <- tempfile("shard_read_"); dir.create(dir)
  on.exit(unlink(dir, recursive = TRUE), add = TRUE)
  write_shards(list(x), dir, prefix = "r")
  path <- file.path(dir, "r1.shard")
  d <- aspectr:::read_shard_bin(path)
  expect_equal(d$dims, dim(x))
  m <- matrix(0, nrow(x), ncol(x))
  m[cbind(d$idx[1, ] + 1L, d$idx[2, ] + 1L)] <- d$val
  expect_identical(m, unname(x) + 0)
  expect_equal(d$total, sum(x + 0))
  nnz <- length(d$val)
  # (the header: 48 bytes for a matrix; then 2 x nnz indices, nnz values)
  at_val <- 8 + 4 + 4 + 8 + 8 * 2 + 8 + 4 * 2 * nnz
  damage <- function(offset, value, size) {
    f <- tempfile("damaged_", tmpdir = dir, fileext = ".shard")
    file.copy(path, f)
    con <- file(f, "r+b")
    seek(con, offset, rw = "write")
    writeBin(value, con, size = size)
    close(con)
    f
  }
  # values: negative, zero, NaN, infinite (the last cell's, so that the
  # whole array is looked at)
  for (v in c(-1, 0, NaN, Inf)) {
    expect_error(aspectr:::read_shard_bin(damage(at_val + 8 * (nnz - 1), v, 8)),
                 "not positive and finite")
  }
  # indices: a row beyond the rows, a negative column (an R NA), a column
  # equal to the count of columns
  expect_error(aspectr:::read_shard_bin(damage(48 + 4 * 2 * (nnz - 1), 12L, 4)), "outside its dimensions \\(12 x 7\\)")
  expect_error(aspectr:::read_shard_bin(damage(48 + 4, NA_integer_, 4)), "outside its dimensions")
  expect_error(aspectr:::read_shard_bin(damage(48 + 4 * 3, 7L, 4)), "outside its dimensions")
  expect_identical(aspectr:::read_shard_bin(damage(48 + 4 * 3, 6L, 4))$idx[2, 2], 6L)
})
