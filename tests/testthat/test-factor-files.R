# The rows' factor of a sharded fit written beside the shards (factor_dir)
# instead of gathered: the files hold the in-memory fit's factor, the fit
# is otherwise the gathered one, and only the fit's files remain.

# the fit with its factors read back equals the reference to `tol`
expect_files_fit <- function(fit, ref, tol = 1e-10) {
  expect_true(aspectr:::in_files(fit))
  got <- gather_factors(fit)
  expect_false(aspectr:::in_files(got))
  w <- if (is.null(ref$lambda)) "weights" else "lambda"
  expect_equal(unname(got[[w]]), unname(ref[[w]]), tolerance = tol)
  for (n in seq_along(ref$factors)) expect_equal(got$factors[[n]], ref$factors[[n]], tolerance = tol)
  if (!is.null(ref$W)) expect_equal(got$W, ref$W, tolerance = tol)
  expect_equal(got$objective, ref$objective, tolerance = tol)
  expect_identical(got$iterations, ref$iterations)
  expect_equal(got$value, ref$value, tolerance = tol)
  invisible(got)
}

# the files in `dir` are exactly `expected` (no runs' files left)
expect_dir_files <- function(dir, expected) {
  expect_setequal(list.files(dir), expected)
}

test_that("plsa() writes the documents' factor of the in-memory fit beside each shard", {
  x <- shard_counts(45, 24, seed = 5)
  dir <- shard_tempdir()
  for (cuts in list(integer(0), 20L, c(12L, 30L))) {
    parts <- split_rows(x, cuts)
    f <- file.path(dir, paste0("part", seq_along(parts), ".rds"))
    for (i in seq_along(parts)) saveRDS(parts[[i]], f[i])
    ref <- plsa(x, 3, method = "em", seed = 2, max_iter = 12, tol = 0)
    fit <- plsa(shards(f), 3, method = "em", seed = 2, max_iter = 12, tol = 0, factor_dir = TRUE)
    expect_s3_class(fit$factors$documents, "aspectr_factor_files")
    expect_identical(dim(fit$factors$documents), c(45L, 3L))
    expect_identical(dimnames(fit$factors$documents), dimnames(ref$factors$documents))
    expect_files_fit(fit, ref)
    out <- paste0("part", seq_along(parts), ".documents.rds")
    expect_dir_files(dir, c(basename(f), out))
    # each file: that shard's rows, named, in the fit's topic order
    for (i in seq_along(parts)) {
      m <- readRDS(file.path(dir, out[i]))
      expect_identical(rownames(m), rownames(parts[[i]]))
      expect_identical(colnames(m), paste0("topic_", 1:3))
      expect_equal(m, ref$factors$documents[rownames(parts[[i]]), ], tolerance = 1e-10)
      expect_equal(as.matrix(fit$factors$documents, shards = i), m)
    }
    unlink(file.path(dir, "*"))
  }
})

test_that("every sharded family and method writes the fit's factor (objects into a directory)", {
  x <- shard_counts(40, 22, seed = 8)
  parts <- split_rows(x, c(15L, 27L))
  dir <- shard_tempdir()
  # SQUAREM of q-EM and of tempered EM (their default), plain q-EM
  ref <- plsa(x, 3, loss = "tsallis", q = 0.6, seed = 1, max_iter = 10, tol = 0)
  expect_files_fit(plsa(shards(parts), 3, loss = "tsallis", q = 0.6, seed = 1, max_iter = 10, tol = 0,
                        factor_dir = dir), ref)
  ref <- plsa(x, 2, tempering = 0.8, seed = 3, max_iter = 10, tol = 0)
  expect_files_fit(plsa(shards(parts), 2, tempering = 0.8, seed = 3, max_iter = 10, tol = 0, factor_dir = dir), ref)
  ref <- plsa(x, 3, loss = "tsallis", q = 0.6, method = "em", seed = 1, max_iter = 10, tol = 0)
  expect_files_fit(plsa(shards(parts), 3, loss = "tsallis", q = 0.6, method = "em", seed = 1, max_iter = 10, tol = 0,
                        factor_dir = dir), ref)
  # the rank-1 closed form
  ref <- plsa(x, 1, seed = 1)
  expect_files_fit(plsa(shards(parts), 1, method = "em", seed = 1, factor_dir = dir), ref)
  expect_dir_files(dir, paste0("shard", 1:3, ".documents.rds"))
  # nmf: W in the units of x (HALS: unit-norm columns; the others scaled)
  for (a in list(c("frobenius", "hals"), c("frobenius", "mu"), c("kl", "cd"), c("kl", "mu"))) {
    ref <- nmf(shards(parts), 3, loss = a[1], method = a[2], init = "random", seed = 4, max_iter = 8, tol = 0)
    fit <- nmf(shards(parts), 3, loss = a[1], method = a[2], init = "random", seed = 4, max_iter = 8, tol = 0,
               factor_dir = dir)
    expect_s3_class(fit$W, "aspectr_factor_files")
    expect_identical(fit$factors$W, fit$W)
    got <- expect_files_fit(fit, ref)
    expect_identical(got$W, ref$W)
    expect_equal(fit$weights, ref$weights, tolerance = 1e-12)
    expect_equal(fit$rel_error, ref$rel_error, tolerance = 1e-12)
    # and the in-memory fit of the same start
    mem <- nmf(x, 3, loss = a[1], method = a[2], init = "random", seed = 4, max_iter = 8, tol = 0)
    expect_equal(got$W, mem$W, tolerance = 1e-8)
  }
  # penalized (W scaled by the fit's factor a)
  ref <- nmf(shards(parts), 2, init = "random", L1 = c(0.5, 0), seed = 2, max_iter = 8, tol = 0)
  expect_files_fit(nmf(shards(parts), 2, init = "random", L1 = c(0.5, 0), seed = 2, max_iter = 8, tol = 0,
                       factor_dir = dir), ref)
  # ntf, 2-way and 3-way
  ref <- ntf(x, 2, loss = "kl", method = "mu", seed = 1, max_iter = 10, tol = 0)
  expect_files_fit(ntf(shards(parts), 2, loss = "kl", method = "mu", seed = 1, max_iter = 10, tol = 0, factor_dir = dir), ref)
  X <- array(stats::rpois(18 * 5 * 4, 2), c(18, 5, 4)); X[, 1, 1] <- 1
  dimnames(X) <- list(paste0("a", 1:18), NULL, NULL)
  names(dimnames(X)) <- c("users", "items", "days")
  ref <- ntf(X, 2, loss = "kl", method = "mu", seed = 1, max_iter = 10, tol = 0)
  fit <- ntf(shards(split_rows(X, 9L)), 2, loss = "kl", method = "mu", seed = 1, max_iter = 10, tol = 0, factor_dir = dir)
  expect_files_fit(fit, ref)
  expect_true(all(file.exists(file.path(dir, paste0("shard", 1:2, ".", names(fit$factors)[1], ".rds")))))
  expect_false(any(grepl("\\.run|\\.probe", list.files(dir))))
})

test_that("restarts and staged starts keep only the best run's factor", {
  x <- shard_counts(36, 20, seed = 9)
  parts <- split_rows(x, 18L)
  dir <- shard_tempdir()
  ref <- plsa(x, 3, method = "em", seed = 6, nrun = 4, short_iter = 3, short_keep = 2, max_iter = 12, tol = 0)
  fit <- plsa(shards(parts), 3, method = "em", seed = 6, nrun = 4, short_iter = 3, short_keep = 2, max_iter = 12, tol = 0,
              factor_dir = dir)
  expect_identical(fit$run, ref$run)
  expect_equal(fit$run_values, ref$run_values, tolerance = 1e-10)
  expect_files_fit(fit, ref)
  expect_dir_files(dir, paste0("shard", 1:2, ".documents.rds"))
  ref <- nmf(shards(parts), 2, init = "random", seed = 6, nrun = 3, short_iter = 2, short_keep = 2,
             max_iter = 8, tol = 0)
  fit <- nmf(shards(parts), 2, init = "random", seed = 6, nrun = 3, short_iter = 2, short_keep = 2,
             max_iter = 8, tol = 0, factor_dir = dir)
  expect_identical(fit$run, ref$run)
  expect_files_fit(fit, ref)
  expect_dir_files(dir, c(paste0("shard", 1:2, ".documents.rds"), paste0("shard", 1:2, ".W.rds")))
})

test_that("a fit that fails leaves no runs' files; bad factor_dir values are classed errors", {
  x <- shard_counts(30, 20, seed = 2)
  parts <- split_rows(x, 15L)
  dir <- shard_tempdir()
  # a failure while the fit's files are written (after every run's are)
  trace("shard_write_final", quote(stop("disk full")), print = FALSE, where = asNamespace("aspectr"))
  expect_error(plsa(shards(parts), 2, method = "em", seed = 1, nrun = 2, max_iter = 5, factor_dir = dir), "disk full")
  untrace("shard_write_final", where = asNamespace("aspectr"))
  expect_identical(list.files(dir), character(0))
  # not sharded, not files, not a path, with a callback
  expect_error(plsa(x, 2, factor_dir = dir), class = "aspectr_error_input_argument", regexp = "shards")
  expect_error(nmf(x, 2, factor_dir = dir), class = "aspectr_error_input_argument")
  expect_error(plsa(shards(parts), 2, method = "em", factor_dir = TRUE), class = "aspectr_error_input_argument",
               regexp = "shard 1 is an object")
  expect_error(plsa(shards(parts), 2, method = "em", factor_dir = 3), class = "aspectr_error_input_type", regexp = "factor_dir")
  expect_error(plsa(shards(parts), 2, method = "em", factor_dir = c(dir, dir)), class = "aspectr_error_input_type")
  expect_error(plsa(shards(parts), 2, method = "em", factor_dir = dir, callback = function(...) TRUE),
               class = "aspectr_error_input_argument", regexp = "callback")
  # two shard files of one name in one directory
  d1 <- file.path(dir, "a"); d2 <- file.path(dir, "b")
  dir.create(d1); dir.create(d2)
  saveRDS(parts[[1]], file.path(d1, "p.rds")); saveRDS(parts[[2]], file.path(d2, "p.rds"))
  sh <- shards(file.path(c(d1, d2), "p.rds"))
  expect_error(plsa(sh, 2, method = "em", factor_dir = dir), class = "aspectr_error_input_value", regexp = "p\\.documents\\.rds")
  # a shard file the factor would be written over
  saveRDS(parts[[1]], file.path(d1, "q.rds")); saveRDS(parts[[2]], file.path(d1, "q.documents.rds"))
  expect_error(plsa(shards(file.path(d1, c("q.rds", "q.documents.rds"))), 2, method = "em", factor_dir = TRUE),
               class = "aspectr_error_input_value", regexp = "written over")
  fit <- plsa(sh, 2, method = "em", seed = 1, max_iter = 5, factor_dir = TRUE)
  expect_true(all(file.exists(file.path(c(d1, d2), "p.documents.rds"))))
  # a directory that does not exist: found when the shards are loaded,
  # before any iteration
  expect_error(plsa(shards(parts), 2, method = "em", seed = 1, factor_dir = file.path(dir, "none"),
                    callback = NULL), class = "aspectr_error_shard", regexp = "cannot write")
  expect_false(dir.exists(file.path(dir, "none")))
})

test_that("a failure while the fit's files are written leaves an earlier fit's files as they were", {
  x <- shard_counts(30, 20, seed = 6)
  parts <- split_rows(x, 15L)
  dir <- shard_tempdir()
  first <- plsa(shards(parts), 2, method = "em", seed = 1, max_iter = 5, factor_dir = dir)
  before <- lapply(first$factors$documents$paths, readRDS)
  # the second shard's file cannot be made: nothing is renamed
  trace("shard_read_block", quote(if (grepl("shard2", path)) stop("disk full")), print = FALSE,
        where = asNamespace("aspectr"))
  expect_error(plsa(shards(parts), 2, method = "em", seed = 2, max_iter = 5, factor_dir = dir), "disk full")
  untrace("shard_read_block", where = asNamespace("aspectr"))
  expect_identical(lapply(first$factors$documents$paths, readRDS), before)
  expect_equal(as.matrix(first$factors$documents), gather_factors(first)$factors$documents)
  expect_dir_files(dir, paste0("shard", 1:2, ".documents.rds"))
})

test_that("several starts keep the files of the best start so far only; staged ones one per start", {
  x <- shard_counts(30, 20, seed = 7)
  parts <- split_rows(x, c(10L, 20L))
  dir <- shard_tempdir()
  seen <- new.env()
  trace("shard_write_final", substitute(assign("files", list.files(dirname(args$final[[1]])), envir = e),
                                        list(e = seen)), print = FALSE, where = asNamespace("aspectr"))
  on.exit(untrace("shard_write_final", where = asNamespace("aspectr")), add = TRUE)
  ref <- plsa(x, 2, method = "em", seed = 3, nrun = 4, max_iter = 6, tol = 0)
  fit <- plsa(shards(parts), 2, method = "em", seed = 3, nrun = 4, max_iter = 6, tol = 0, factor_dir = dir)
  expect_files_fit(fit, ref)
  runs <- grep("\\.run[0-9]+$", seen$files, value = TRUE)
  expect_length(runs, 3)  # one start's, one file per shard
  expect_length(unique(sub(".*\\.run", "", runs)), 1)
  ref <- nmf(shards(parts), 2, init = "random", seed = 3, nrun = 3, short_iter = 2, short_keep = 1,
             max_iter = 6, tol = 0)
  fit <- nmf(shards(parts), 2, init = "random", seed = 3, nrun = 3, short_iter = 2, short_keep = 1,
             max_iter = 6, tol = 0, factor_dir = dir)
  expect_files_fit(fit, ref)
  expect_length(grep("\\.W\\..*\\.run[0-9]+$", seen$files), 9)  # the resumed start's short run removed
  expect_false(any(grepl("\\.run|\\.fit", list.files(dir))))
})

test_that("a file of the factor that changes or disappears is detected when read", {
  x <- shard_counts(30, 20, seed = 4)
  dir <- shard_tempdir()
  fit <- plsa(shards(split_rows(x, 15L)), 2, method = "em", seed = 1, max_iter = 5, factor_dir = dir)
  f <- fit$factors$documents
  expect_error(as.matrix(f, shards = 3), class = "aspectr_error_input_value", regexp = "1 to 2")
  Sys.sleep(1.1)
  saveRDS(matrix(0, 2, 2), f$paths[2])
  expect_error(as.matrix(f), class = "aspectr_error_shard", regexp = "changed")
  expect_error(gather_factors(fit), class = "aspectr_error_shard")
  expect_identical(nrow(as.matrix(f, shards = 1)), 15L)
  unlink(f$paths[1])
  expect_error(as.matrix(f, shards = 1), class = "aspectr_error_shard", regexp = "disappeared")
  expect_error(gather_factors(list()), class = "aspectr_error_input_type")
  expect_output(print(fit$factors$documents), "documents: 30 x 2 in 2 files")
})

test_that("a fit with its factor in files: every method answers as on the gathered fit", {
  x <- shard_counts(40, 25, seed = 12)
  parts <- split_rows(x, c(10L, 26L))
  dir <- shard_tempdir()
  new <- x[1:4, ]
  fits <- list(
    plsa = plsa(shards(parts), 3, method = "em", seed = 1, max_iter = 10, factor_dir = dir),
    nmf = nmf(shards(parts), 3, loss = "kl", init = "random", seed = 1, max_iter = 10, factor_dir = dir),
    ntf = ntf(shards(parts), 3, loss = "kl", seed = 1, max_iter = 10, factor_dir = dir))
  calls <- list(
    summary = function(f) summary(f), print = function(f) capture.output(print(f)),
    terms = function(f) if (f$family == "ntf") NULL else terms(f),
    terms_rows = function(f) switch(f$family, nmf = terms(f, 4, margin = "rows"), plsa = terms(f, 4, mode = 1), NULL),
    basis = function(f) if (f$family == "nmf") basis(f),
    predict_cols = function(f) if (f$family == "nmf") predict(f, newdata = x[, 1:3], margin = "columns"),
    topics = function(f) if (f$family == "plsa") topics(f),
    topics_terms = function(f) if (f$family == "plsa") topics(f, mode = 2),
    predict = function(f) predict(f), predict_new = function(f) predict(f, newdata = new),
    fitted = function(f) fitted(f), residuals = function(f) residuals(f, x),
    augment = function(f) augment(f, data = x), tidy = function(f) tidy(f),
    tidy2 = function(f) switch(f$family, plsa = tidy(f, matrix = "gamma"), nmf = tidy(f, matrix = "H"), NULL),
    glance = function(f) glance(f), logLik = function(f) logLik(f), nobs = function(f) nobs(f),
    perplexity = function(f) if (f$family != "ntf") perplexity(f),
    perplexity_new = function(f) if (f$family != "ntf") perplexity(f, newdata = new),
    plot = function(f) { grDevices::pdf(NULL); on.exit(grDevices::dev.off()); plot(f); TRUE },
    plot_rows = function(f) {
      grDevices::pdf(NULL); on.exit(grDevices::dev.off())
      switch(f$family, nmf = plot(f, type = "W"), ntf = plot(f, type = "factors"), plsa = plot(f, type = "weights"))
      TRUE
    },
    as_plsa = function(f) if (f$family == "nmf") as_plsa(f)$lambda,
    warm = function(f) switch(f$family, plsa = plsa(x, 3, init = f, max_iter = 2),
                              nmf = nmf(x, 3, init = f, max_iter = 2),
                              ntf = ntf(x, 3, loss = "kl", init = f, max_iter = 2))$value)
  for (fam in names(fits)) {
    fit <- fits[[fam]]
    got <- gather_factors(fit)
    for (cn in names(calls)) {
      r <- suppressWarnings(calls[[cn]](fit))
      # (the fit in files is left as it is: its factor is read, not kept)
      expect_s3_class(fit$factors[[1]], "aspectr_factor_files")
      if (cn %in% c("print", "plot", "plot_rows")) next
      want <- suppressWarnings(calls[[cn]](got))
      if (cn == "summary") { r$call <- want$call <- NULL }
      expect_equal(r, want, tolerance = 1e-10, info = paste(fam, cn))
    }
  }
  # terms by relevance reads the whole factor's marginal
  fit <- fits$plsa
  expect_equal(terms(fit, 4, mode = 1, lambda = 0.5), terms(gather_factors(fit), 4, mode = 1, lambda = 0.5))
})

test_that("an N-way plsa() fit names its files after the first mode and predicts cells from the shards read", {
  X <- array(stats::rpois(20 * 5 * 4, 2), c(20, 5, 4)); X[, 1, 1] <- 1
  dimnames(X) <- list(users = paste0("u", 1:20), items = NULL, days = NULL)
  dir <- shard_tempdir()
  ref <- plsa(X, 2, method = "em", seed = 2, max_iter = 10, tol = 0)
  fit <- plsa(shards(split_rows(X, c(7L, 14L))), 2, method = "em", seed = 2, max_iter = 10, tol = 0, factor_dir = dir)
  expect_files_fit(fit, ref)
  expect_identical(names(fit$factors), names(ref$factors))
  expect_dir_files(dir, paste0("shard", 1:3, ".users.rds"))
  expect_output(print(fit$factors$users), "users: 20 x 2 in 3 files")
  # cells of the first and the third shard (the second not read)
  cells <- rbind(c(2, 1, 1), c(18, 3, 2), c(NA, 2, 4), c(5, 5, 3))
  reads <- new.env()
  trace("as.matrix.aspectr_factor_files", substitute(assign("n", c(e$n, shards), envir = e), list(e = reads)),
        print = FALSE, where = asNamespace("aspectr"))
  on.exit(untrace("as.matrix.aspectr_factor_files", where = asNamespace("aspectr")), add = TRUE)
  expect_equal(predict(fit, newdata = cells), predict(ref, newdata = cells), tolerance = 1e-10)
  expect_setequal(reads$n, c(1, 3))
  expect_equal(aspectr:::factor_rows(fit$factors$users, c(20, 1, 8, 8)), unname(ref$factors$users[c(20, 1, 8, 8), ]),
               tolerance = 1e-10)
})

test_that("on a 2-worker PSOCK cluster each worker writes its shards' factor; the master never holds it", {
  skip_on_cran()
  cl <- psock_cluster()
  on.exit(parallel::stopCluster(cl), add = TRUE)
  x <- shard_counts(45, 24, seed = 11)
  dir <- shard_tempdir()
  parts <- split_rows(x, c(12L, 30L))
  f <- file.path(dir, paste0("p", 1:3, ".rds"))
  for (i in 1:3) saveRDS(parts[[i]], f[i])
  ref <- plsa(x, 3, method = "em", seed = 3, nrun = 2, max_iter = 15, tol = 0)
  # the master's documents' factor: neither drawn nor gathered here
  trace("shard_random_blocks", quote(assign("drawn", TRUE, envir = globalenv())), print = FALSE,
        where = asNamespace("aspectr"))
  on.exit(untrace("shard_random_blocks", where = asNamespace("aspectr")), add = TRUE)
  assign("drawn", FALSE, envir = globalenv())
  on.exit(rm("drawn", envir = globalenv()), add = TRUE)
  fit <- plsa(shards(f), 3, method = "em", seed = 3, nrun = 2, max_iter = 15, tol = 0, cluster = cl, factor_dir = TRUE)
  expect_false(get("drawn", envir = globalenv()))
  expect_files_fit(fit, ref)
  expect_identical(fit$run, ref$run)
  expect_dir_files(dir, c(basename(f), paste0("p", 1:3, ".documents.rds")))
  # without files the cluster's start is drawn on the workers too, the same
  expect_equal(plsa(shards(f), 3, method = "em", seed = 3, nrun = 2, max_iter = 15, tol = 0, cluster = cl)$factors,
               ref$factors, tolerance = 1e-10)
  ref <- nmf(shards(f), 2, init = "random", seed = 5, max_iter = 8, tol = 0)
  expect_files_fit(nmf(shards(f), 2, init = "random", seed = 5, max_iter = 8, tol = 0, cluster = cl,
                       factor_dir = TRUE), ref)
  stores <- function() unlist(parallel::clusterEvalQ(cl, length(ls(asNamespace("aspectr")$shard_stores))))
  expect_identical(stores(), c(0L, 0L))
  expect_false(any(grepl("\\.run|\\.probe", list.files(dir))))
})

test_that("a mirai cluster (calls not pinned to workers) writes the same factor", {
  skip_on_cran()
  x <- shard_counts(30, 20, seed = 3)
  ref <- plsa(x, 2, method = "em", seed = 1, max_iter = 10, tol = 0)
  cl <- mirai_cluster()
  on.exit(parallel::stopCluster(cl), add = TRUE)
  dir <- shard_tempdir()
  fit <- plsa(shards(split_rows(x, c(10L, 20L))), 2, method = "em", seed = 1, max_iter = 10, tol = 0, cluster = cl,
              factor_dir = dir)
  expect_files_fit(fit, ref)
  expect_dir_files(dir, paste0("shard", 1:3, ".documents.rds"))
  # nmf, several starts
  parts <- split_rows(x, 12L)
  ref <- nmf(shards(parts), 2, init = "random", seed = 2, nrun = 3, max_iter = 6, tol = 0)
  fit <- nmf(shards(parts), 2, init = "random", seed = 2, nrun = 3, max_iter = 6, tol = 0, cluster = cl,
             factor_dir = dir)
  expect_identical(fit$run, ref$run)
  expect_files_fit(fit, ref)
  expect_false(any(grepl("\\.run|\\.probe|\\.fit", list.files(dir))))
})

test_that("shards() refuses a rows' factor written beside the shard files, naming it", {
  x <- shard_counts(30, 20, seed = 4)
  parts <- split_rows(x, 15L)
  dir <- shard_tempdir()
  f <- file.path(dir, paste0("part", 1:2, ".rds"))
  for (i in 1:2) saveRDS(parts[[i]], f[i])
  fit <- plsa(shards(f), 3, method = "em", seed = 1, max_iter = 5, tol = 0, factor_dir = TRUE)
  expect_dir_files(dir, c(basename(f), paste0("part", 1:2, ".documents.rds")))
  # what a glob or list.files() of the directory gives
  err <- expect_error(shards(Sys.glob(file.path(dir, "*.rds"))), class = "aspectr_error_input_value",
                      regexp = "part1\\.documents\\.rds")
  expect_identical(basename(err$file), "part1.documents.rds")
  expect_identical(basename(err$shard), "part1.rds")
  expect_match(conditionMessage(err), "factor_dir")
  expect_error(shards(list.files(dir, pattern = "rds$", full.names = TRUE)), class = "aspectr_error_input_value",
               regexp = "documents\\.rds")
  # the hint's expression leaves the factor out; the fit's files are read
  # as before
  leave_out <- grep("\\.documents\\.rds$", Sys.glob(file.path(dir, "*.rds")), invert = TRUE, value = TRUE)
  expect_identical(dim(shards(leave_out)), dim(x))
  expect_identical(rownames(as.matrix(fit$factors$documents)), rownames(x))
  unlink(file.path(dir, "*"))
  # .shard files with nmf()'s W beside them, and a factor whose columns
  # are as many as the data's unnamed ones (it was taken as data)
  y <- unname(x[, 1:3])
  parts <- write_shards(y, dir, n = 2)
  fit <- nmf(parts, 3, init = "random", seed = 1, max_iter = 5, factor_dir = TRUE)
  expect_dir_files(dir, c(paste0("shard", 1:2, ".shard"), paste0("shard", 1:2, ".W.rds")))
  expect_error(shards(list.files(dir, full.names = TRUE)), class = "aspectr_error_input_value",
               regexp = "shard1\\.W\\.rds")
  expect_identical(dim(shards(Sys.glob(file.path(dir, "*.shard")))), dim(y))
  # a shard of the same columns named so is a shard
  unlink(file.path(dir, "*"))
  f <- file.path(dir, c("q.rds", "q.more.rds"))
  saveRDS(x[1:15, ], f[1]); saveRDS(x[16:30, ], f[2])
  expect_identical(dim(shards(f)), dim(x))
})
