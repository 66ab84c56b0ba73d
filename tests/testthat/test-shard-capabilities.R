# One table says what runs on data in shards(): every method it allows runs
# there and gives the in-memory fit of the same call; every refusal is a
# classed error naming the argument, with the table's reason.

cap_fit <- function(family, x, loss, method, ...) {
  args <- list(x, 2, loss = loss, method = method, seed = 3, max_iter = 6, tol = 0, ...)
  suppressMessages(suppressWarnings(do.call(family, args)))
}

test_that("every method the capability table allows runs on shards as in memory", {
  tab <- aspectr:::shard_capabilities()
  ok <- tab[tab$ok & is.na(tab$option), ]
  expect_setequal(unique(ok$family), c("nmf", "plsa", "ntf"))
  x <- shard_counts(24, 14, seed = 5)
  sh <- shards(split_rows(x, c(7L, 15L)))
  for (i in seq_len(nrow(ok))) {
    r <- ok[i, ]
    what <- paste(r$family, r$loss, r$method)
    extra <- if (r$loss == "tsallis") list(q = 0.8) else list()
    if (r$loss == "beta") extra$beta <- 0.5
    # (NNDSVD, nmf()'s default start of a matrix, needs the whole matrix's
    # singular vectors: shards start at random, as nmf(init = "random"))
    if (r$family == "nmf") extra$init <- "random"
    mem <- do.call(cap_fit, c(list(r$family, x, r$loss, r$method), extra))
    shd <- do.call(cap_fit, c(list(r$family, sh, r$loss, r$method), extra))
    expect_identical(shd$method, mem$method, info = what)
    expect_equal(shd$objective, mem$objective, tolerance = 1e-10, info = what)
    expect_identical(shd$iterations, mem$iterations, info = what)
  }
})

test_that("every refusal of the capability table is a classed error with its reason", {
  tab <- aspectr:::shard_capabilities()
  no <- tab[!tab$ok, ]
  expect_gt(nrow(no), 5)
  sh <- shards(split_rows(shard_counts(20, 12, seed = 6), 9L))
  y <- array(stats::rpois(10 * 4 * 3, 2) + 1, c(10, 4, 3))
  # an option of the table as the arguments of a fit that has it
  option_args <- list(accelerate = list(accelerate = TRUE), prior = list(prior = 0.1),
                      tensor = list(shards(split_rows(y, 5L))), mask = list(mask = TRUE))
  for (i in seq_len(nrow(no))) {
    r <- no[i, ]
    what <- paste(r$family, r$loss, r$method, r$option)
    args <- list(sh, 2, loss = r$loss, method = r$method)
    if (!is.na(r$option)) {
      expect_true(r$option %in% names(option_args), info = what)
      oa <- option_args[[r$option]]
      if (is.null(names(oa))) args[[1]] <- oa[[1]] else args[names(oa)] <- oa
    }
    if (r$loss == "beta") args$beta <- 0.5
    err <- tryCatch(do.call(r$family, args), error = function(e) e)
    expect_s3_class(err, "aspectr_error_input_argument")
    # (the message's reason is the table's, whatever the line breaks)
    msg <- gsub("\\s+", " ", cli::ansi_strip(conditionMessage(err)))
    expect_true(grepl(r$why, msg, fixed = TRUE), info = paste(what, msg))
  }
  # the default method on shards is the in-memory default where the table
  # allows it (KL coordinate descent of a matrix), else the first it allows
  fit <- suppressMessages(plsa(sh, 2, seed = 1, max_iter = 3, tol = 0))
  expect_identical(fit$method, "cd")
  fit <- suppressMessages(plsa(sh, 2, seed = 1, max_iter = 3, tol = 0, prior = 0.1))
  expect_identical(fit$method, "em")
  fit <- suppressMessages(plsa(sh, 2, seed = 1, max_iter = 3, tol = 0, tempering = 0.9))
  expect_identical(fit$method, "squarem")
  fit <- suppressMessages(plsa(sh, 2, loss = "tsallis", seed = 1, max_iter = 3, tol = 0))
  expect_identical(fit$method, "squarem")
  # (the weighted q-EM on shards has no SQUAREM: its default there is "em")
  fit <- suppressMessages(plsa(sh, 2, loss = "tsallis", seed = 1, max_iter = 3, tol = 0, row_weights = rep(1, 20)))
  expect_identical(fit$method, "em")
  fit <- suppressMessages(plsa(shards(split_rows(y, 5L)), 2, seed = 1, max_iter = 3, tol = 0))
  expect_identical(fit$method, "em")
  fit <- suppressMessages(ntf(sh, 2, loss = "kl", seed = 1, max_iter = 3, tol = 0))
  expect_identical(fit$method, "mu")
})

test_that("every allowed method gives the in-memory fit on every backend: shards in memory, .shard and .rds files, PSOCK and mirai clusters", {
  tab <- aspectr:::shard_capabilities()
  ok <- tab[tab$ok & is.na(tab$option), ]
  x <- shard_counts(22, 13, seed = 11)
  parts <- split_rows(x, c(8L, 15L))
  rds_dir <- shard_tempdir()
  rds <- file.path(rds_dir, paste0("p", 1:3, ".rds"))
  for (i in 1:3) saveRDS(parts[[i]], rds[i])
  backends <- list(memory = list(data = shards(parts)),
                   shard_files = list(data = write_shards(parts, shard_tempdir())),
                   rds_files = list(data = shards(rds)))
  cl <- psock_cluster()
  on.exit(parallel::stopCluster(cl), add = TRUE)
  backends$psock <- list(data = shards(parts), cluster = cl)
  if (requireNamespace("mirai", quietly = TRUE)) {
    cm <- mirai_cluster()
    on.exit(parallel::stopCluster(cm), add = TRUE)
    backends$mirai <- list(data = shards(parts), cluster = cm)
  }
  # a three-way tensor for the families that take one (plsa, ntf)
  y <- array(stats::rpois(12 * 5 * 4, 2), c(12, 5, 4))
  y[, 1, 1] <- y[, 1, 1] + 1
  yparts <- split_rows(y, 5L)
  for (i in seq_len(nrow(ok))) {
    r <- ok[i, ]
    extra <- list(seed = 2, max_iter = 5, tol = 0)
    if (r$loss == "tsallis") extra$q <- 0.7
    if (r$loss == "beta") extra$beta <- 1.5
    if (r$family == "nmf") extra$init <- "random"
    fit <- function(data, ...) {
      suppressMessages(suppressWarnings(do.call(r$family, c(list(data, 2, loss = r$loss, method = r$method),
                                                           extra, list(...)))))
    }
    ref <- fit(x)
    for (b in names(backends)) {
      what <- paste(r$family, r$loss, r$method, b)
      got <- do.call(fit, backends[[b]])
      expect_equal(got$objective, ref$objective, tolerance = 1e-10, info = what)
      expect_identical(got$iterations, ref$iterations, info = what)
      if (r$family == "nmf") {
        expect_equal(got$W, ref$W, tolerance = 1e-10, info = what)
        expect_equal(got$H, ref$H, tolerance = 1e-10, info = what)
      } else {
        expect_equal(got$lambda, ref$lambda, tolerance = 1e-10, info = what)
        for (n in seq_along(ref$factors)) {
          expect_equal(unname(as.matrix(got$factors[[n]])), unname(as.matrix(ref$factors[[n]])),
                       tolerance = 1e-10, info = paste(what, "factor", n))
        }
      }
    }
    # (N-way data where the table allows the method on them)
    nway <- !any(tab$family == r$family & tab$loss == r$loss & tab$method == r$method & !tab$ok &
                   tab$option %in% "tensor")
    if (r$family != "nmf" && nway) {
      ref3 <- fit(y)
      got3 <- fit(shards(yparts))
      expect_equal(got3$objective, ref3$objective, tolerance = 1e-10, info = paste(r$family, r$loss, "3-way"))
      expect_equal(got3$lambda, ref3$lambda, tolerance = 1e-10, info = paste(r$family, r$loss, "3-way"))
    }
  }
})

test_that("plsa()'s default on shards is the in-memory default: the same fit on every backend", {
  x <- shard_counts(26, 15, seed = 12)
  parts <- split_rows(x, c(9L, 17L))
  fit <- function(data, ...) suppressMessages(plsa(data, 3, seed = 4, max_iter = 15, tol = 0, ...))
  ref <- fit(x)
  expect_identical(ref$method, "cd")
  cl <- psock_cluster()
  on.exit(parallel::stopCluster(cl), add = TRUE)
  backends <- list(memory = list(shards(parts)), shard_files = list(write_shards(parts, shard_tempdir())),
                   psock = list(shards(parts), cluster = cl))
  for (b in names(backends)) {
    got <- do.call(fit, backends[[b]])
    expect_identical(got$method, "cd", info = b)
    expect_equal(got$objective, ref$objective, tolerance = 1e-10, info = b)
    expect_equal(got$initial, ref$initial, tolerance = 1e-10, info = b)
    expect_equal(got$kl, ref$kl, tolerance = 1e-10, info = b)
    expect_identical(got$iterations, ref$iterations, info = b)
    expect_equal(got$lambda, ref$lambda, tolerance = 1e-10, info = b)
    for (n in 1:2) expect_equal(got$factors[[n]], ref$factors[[n]], tolerance = 1e-10, info = paste(b, n))
  }
  # the rows' factor written to files, staged restarts (a run resumed from
  # its files) and the callback's objective and factors
  dir <- shard_tempdir()
  got <- fit(shards(parts), factor_dir = dir)
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
