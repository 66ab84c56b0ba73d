test_that("shard_cluster() gives its workers TCP's no-delay option, and its fits equal the in-memory fit", {
  skip_on_cran()
  before <- getOption("socketOptions")
  cl <- shard_cluster(2)
  on.exit(parallel::stopCluster(cl), add = TRUE)
  expect_s3_class(cl, "SOCKcluster")
  expect_length(cl, 2)
  # workers on this machine: native binary serialization, not XDR
  expect_true(all(vapply(cl, inherits, NA, what = "SOCK0node")))
  # this session's option as it was; the workers' set before they connected
  expect_identical(getOption("socketOptions"), before)
  expect_identical(unlist(parallel::clusterCall(cl, getOption, "socketOptions")), rep("no-delay", 2))
  # aspectr loaded as they started, from this session's library
  expect_identical(unlist(parallel::clusterCall(cl, isNamespaceLoaded, "aspectr")), rep(TRUE, 2))
  set_worker_libs(cl)
  skip_if_not(all(unlist(parallel::clusterCall(cl, requireNamespace, "aspectr", quietly = TRUE))),
              "aspectr is not installed where the workers look")
  x <- with_test_seed(11, matrix(rpois(40 * 12, 3) + 1, 40, 12))
  sh <- shards(list(x[1:15, ], x[16:40, ]))
  ref <- plsa(x, 3, seed = 1, max_iter = 30, tol = 0)
  fit <- plsa(sh, 3, seed = 1, max_iter = 30, tol = 0, cluster = cl)
  expect_equal(fit$factors, ref$factors, tolerance = 1e-10)
  expect_equal(fit$trace, ref$trace, tolerance = 1e-10)
  ref <- nmf(x, 3, seed = 1, max_iter = 30, tol = 0)
  fit <- nmf(sh, 3, seed = 1, max_iter = 30, tol = 0, cluster = cl)
  expect_equal(fit$W, ref$W, tolerance = 1e-10)
  expect_equal(fit$H, ref$H, tolerance = 1e-10)
  # other options of makePSOCKcluster() pass through, with the workers' own
  # expressions run as well
  cl2 <- shard_cluster(1, rscript_args = c("-e", shQuote("options(aspectr.test.flag = 7)")), useXDR = TRUE)
  on.exit(parallel::stopCluster(cl2), add = TRUE)
  # (useXDR given: kept)
  expect_s3_class(cl2[[1]], "SOCKnode")
  expect_false(inherits(cl2[[1]], "SOCK0node"))
  expect_identical(parallel::clusterCall(cl2, function() list(getOption("aspectr.test.flag"), getOption("socketOptions")))[[1]],
                   list(7, "no-delay"))
})

test_that("shard_cluster() refuses a number of workers that is not one, classed", {
  for (bad in list(0, -1, 1.5, NA, NA_character_, c(2, 3), "", Inf, TRUE, list(2))) {
    expect_error(shard_cluster(bad), class = "aspectr_error_input_value", regexp = "workers")
  }
})

test_that("a cluster whose calls wait for TCP's delayed acknowledgement is said so, once per cluster", {
  skip_on_cran()
  cl <- shard_cluster(1)
  on.exit(parallel::stopCluster(cl), add = TRUE)
  # a clock on which the call carrying data takes 40 ms longer than the
  # empty one (the calls alternate: empty, with data)
  clock <- function(extra) {
    n <- 0
    function(expr) {
      force(expr)
      n <<- n + 1
      if (n %% 2 == 0) 0.001 + extra else 0.001
    }
  }
  expect_message(got <- aspectr:::cluster_latency_check(cl, clock(0.040)),
                 class = "aspectr_message_cluster_latency", regexp = "40 ms")
  expect_equal(got, 0.040)
  # once per cluster and session
  expect_no_message(again <- aspectr:::cluster_latency_check(cl, clock(0.040)))
  expect_null(again)
  # a cluster that answers at once is not
  cl2 <- shard_cluster(1)
  on.exit(parallel::stopCluster(cl2), add = TRUE)
  expect_no_message(got <- aspectr:::cluster_latency_check(cl2, clock(0.005)))
  expect_equal(got, 0.005)
  # nor any other kind of cluster
  expect_null(aspectr:::cluster_latency_check(structure(list(), class = "cluster"), clock(1)))
})

test_that("NNDSVD's SVD of shards, by the products of the stores holding them, gives the in-memory start and fit", {
  skip_on_cran()
  # (above 400 in both dimensions: the randomized range finder, whose
  # products of the data the workers compute from their shards)
  x <- with_test_seed(21, Matrix::rsparsematrix(900, 420, 0.05, rand.x = function(n) stats::rpois(n, 3) + 1))
  cuts <- c(250L, 600L)
  ref_h <- nmf(x, 4, max_iter = 15, tol = 0)
  ref_k <- nmf(x, 4, loss = "kl", max_iter = 8, tol = 0)
  same <- function(fit, ref, info) {
    expect_equal(fit$W, ref$W, tolerance = 1e-10, info = info)
    expect_equal(fit$H, ref$H, tolerance = 1e-10, info = info)
    expect_equal(fit$objective, ref$objective, tolerance = 1e-10, info = info)
    expect_identical(fit$iterations, ref$iterations, info = info)
  }
  cl <- psock_cluster()
  on.exit(parallel::stopCluster(cl), add = TRUE)
  sh <- shards(split_rows(x, cuts))
  # the SVD's steps on the data: by the stores holding the shards (the
  # workers on a cluster, this process's stores out of core), never by
  # reading the shards apart from them
  count <- function(fun) {
    n <- new.env()
    n$n <- 0
    trace(fun, bquote(assign("n", get("n", envir = .(n)) + 1, envir = .(n))),
          where = asNamespace("aspectr"), print = FALSE)
    n
  }
  apart <- count("shard_nmf_products")
  here <- count("shard_nmf_range")
  on.exit(untrace("shard_nmf_products", where = asNamespace("aspectr")), add = TRUE)
  on.exit(untrace("shard_nmf_range", where = asNamespace("aspectr")), add = TRUE)
  same(nmf(sh, 4, max_iter = 15, tol = 0, cluster = cl), ref_h, "PSOCK, HALS")
  same(nmf(sh, 4, loss = "kl", max_iter = 8, tol = 0, cluster = cl), ref_k, "PSOCK, KL")
  files <- write_shards(split_rows(x, cuts), shard_tempdir())
  same(nmf(files, 4, max_iter = 15, tol = 0, cluster = cl), ref_h, "PSOCK, .shard files")
  expect_identical(here$n, 0)
  # (out of core: the range finder's 13 steps, each by this process's
  # store: 3 products X H' kept, 2 x 3 times R^-1 applied, 3 products Q'X
  # and Q U at the end)
  same(nmf(files, 4, max_iter = 15, tol = 0), ref_h, "out of core")
  same(nmf(sh, 4, max_iter = 15, tol = 0), ref_h, "shards in memory")
  expect_identical(here$n, 26)
  expect_identical(apart$n, 0)
  skip_if_not_installed("mirai")
  cm <- mirai_cluster()
  on.exit(parallel::stopCluster(cm), add = TRUE)
  same(nmf(sh, 4, max_iter = 15, tol = 0, cluster = cm), ref_h, "mirai")
})

test_that("a damaged .shard file kept by a cluster's workers is a shard error naming it, whichever fit reads it first", {
  skip_on_cran()
  cl <- psock_cluster()
  on.exit(parallel::stopCluster(cl), add = TRUE)
  x <- with_test_seed(13, matrix(rpois(30 * 10, 3) + 1, 30, 10))
  dir <- shard_tempdir()
  files <- unclass(write_shards(x, dir, n = 2))$sources
  paths <- vapply(files, function(s) s$path, "")
  # (a matrix: the first cell's row at byte 48, which shards() does not read)
  spoil <- function(at, value, size) {
    f <- tempfile("damaged_", tmpdir = dir, fileext = ".shard")
    file.copy(paths[1], f)
    con <- file(f, "r+b")
    seek(con, at, rw = "write")
    writeBin(value, con, size = size)
    close(con)
    shards(c(f, paths[2]))
  }
  rows <- spoil(48, 100000L, 4)
  # nmf() builds its data from the file itself, the others read it whole
  for (fit in list(function(s) nmf(s, 2, seed = 1, max_iter = 3, cluster = cl),
                   function(s) nmf(s, 2, loss = "kl", init = "random", seed = 1, max_iter = 3, cluster = cl),
                   function(s) plsa(s, 2, seed = 1, max_iter = 3, cluster = cl))) {
    expect_error(fit(rows), class = "aspectr_error_shard", regexp = "damaged_.*outside its dimensions")
  }
  # the workers answer the next fit
  expect_equal(nmf(shards(paths), 2, seed = 1, max_iter = 5, tol = 0, cluster = cl)$W,
               nmf(x, 2, seed = 1, max_iter = 5, tol = 0)$W, tolerance = 1e-10)
})

test_that("answers left unread on a socket cluster (an interrupted call) are read past: the fit and later calls are in step", {
  skip_on_cran()
  cl <- psock_cluster()
  on.exit(parallel::stopCluster(cl), add = TRUE)
  pids <- unlist(parallel::clusterCall(cl, Sys.getpid))
  x <- with_test_seed(12, matrix(rpois(30 * 10, 3) + 1, 30, 10))
  sh <- shards(list(x[1:12, ], x[13:30, ]))
  ref <- plsa(x, 2, seed = 1, max_iter = 20, tol = 0)
  # what an interrupted call leaves: worker 1's answer (a value) and worker
  # 2's (an error) sent and never read
  send <- utils::getFromNamespace("sendCall", "parallel")
  send(cl[[1]], function() "left over", list())
  send(cl[[2]], function() stop("left over"), list())
  fit <- plsa(sh, 2, seed = 1, max_iter = 20, tol = 0, cluster = cl)
  expect_equal(fit$factors, ref$factors, tolerance = 1e-10)
  expect_equal(fit$trace, ref$trace, tolerance = 1e-10)
  # the workers answer the next call, not an earlier one
  expect_identical(unlist(parallel::clusterCall(cl, Sys.getpid)), pids)
  # a cluster that has stopped is still said to be unreachable
  parallel::stopCluster(cl)
  on.exit()
  expect_error(plsa(sh, 2, seed = 1, cluster = cl), class = "aspectr_error_cluster", regexp = "could not be reached")
})

test_that("an answer whose reading was cut in the middle is read past: the workers are back in step at once", {
  skip_on_cran()
  cl <- psock_cluster()
  on.exit(parallel::stopCluster(cl), add = TRUE)
  pids <- unlist(parallel::clusterCall(cl, Sys.getpid))
  send <- utils::getFromNamespace("sendCall", "parallel")
  # What an interrupt in the middle of reading the answers leaves. Worker
  # 1's answer holds, after a mark, the start of a serialization of 10^6
  # bytes that never come, and the master has read it up to the mark: an
  # unserialize() of the rest waits for ever (as the master did in some
  # runs of the Ctrl-C test below). Worker 2's answer (8 MB) has been read
  # for its first 100 KB only, the rest still coming.
  mark <- charToRaw("aspectr-cut-here")
  send(cl[[1]], function(r) r, list(c(mark, serialize(raw(1e6), NULL)[1:64])))
  send(cl[[2]], function(n) stats::runif(n), list(1e6))
  seen <- raw(0)
  while (length(seen) < 4096 && !identical(utils::tail(seen, length(mark)), mark)) {
    seen <- c(seen, readBin(cl[[1]]$con, "raw", 1))
  }
  expect_identical(utils::tail(seen, length(mark)), mark)
  expect_length(readBin(cl[[2]]$con, "raw", 1e5), 1e5)
  # (the wait bounds the test, should the workers not be found in step)
  took <- system.time(synced <- aspectr:::cluster_resync(cl, wait = 10))[["elapsed"]]
  expect_true(synced)
  expect_lt(took, 5)
  # the workers answer the next call, not an earlier one, and fit
  expect_identical(unlist(parallel::clusterCall(cl, Sys.getpid)), pids)
  x <- with_test_seed(12, matrix(rpois(30 * 10, 3) + 1, 30, 10))
  ref <- plsa(x, 2, seed = 1, max_iter = 20, tol = 0)
  fit <- plsa(shards(list(x[1:12, ], x[13:30, ])), 2, seed = 1, max_iter = 20, tol = 0, cluster = cl)
  expect_equal(fit$factors, ref$factors, tolerance = 1e-10)
  # (the workers of a cluster made with useXDR = FALSE answer in R's native
  # format, whose header differs)
  cl2 <- shard_cluster(1, useXDR = FALSE)
  on.exit(parallel::stopCluster(cl2), add = TRUE)
  pid <- parallel::clusterCall(cl2, Sys.getpid)[[1]]
  send(cl2[[1]], function() "left over", list())
  expect_true(aspectr:::cluster_resync(cl2, wait = 10))
  expect_identical(parallel::clusterCall(cl2, Sys.getpid)[[1]], pid)
})

test_that("a worker that does not answer, or has gone, is said so after a bounded wait; a late answer is read past later", {
  skip_on_cran()
  cl <- psock_cluster()
  on.exit({
    try(parallel::stopCluster(cl), silent = TRUE)
    # (the connection to the worker killed below, which stopCluster() may
    # leave open)
    for (node in cl) try(close(node$con), silent = TRUE)
  }, add = TRUE)
  pids <- unlist(parallel::clusterCall(cl, Sys.getpid))
  send <- utils::getFromNamespace("sendCall", "parallel")
  # worker 2 busy for 4 s with a call whose answer was never read
  send(cl[[2]], function() Sys.sleep(4), list())
  took <- system.time(synced <- aspectr:::cluster_resync(cl, wait = 1))[["elapsed"]]
  expect_s3_class(synced, "error")
  expect_match(conditionMessage(synced), "worker 2 did not answer within 1 s", fixed = TRUE)
  expect_lt(took, 3.5)
  # once it has answered (that call, then the first token), in step again
  expect_true(aspectr:::cluster_resync(cl, wait = 10))
  expect_identical(unlist(parallel::clusterCall(cl, Sys.getpid)), pids)
  # a worker that has gone: its connection closed
  tools::pskill(pids[2], tools::SIGKILL)
  took <- system.time(synced <- aspectr:::cluster_resync(cl, wait = 10))[["elapsed"]]
  expect_s3_class(synced, "error")
  expect_match(conditionMessage(synced), "worker 2", fixed = TRUE)
  expect_lt(took, 5)
})

test_that("Ctrl-C during a fit on a PSOCK cluster stops it and leaves the cluster in step, or says to start it again", {
  # (in its own process, the signal to that process alone or to its process
  # group, reaching the workers too). The interrupt may stop the master in
  # the middle of reading an answer; the workers are then out of step for
  # good, and the fit must say so rather than leave them answering earlier
  # calls.
  script <- c(
    "group <- commandArgs(TRUE)[1] == 'group'",
    "after <- commandArgs(TRUE)[2]",
    "cl <- shard_cluster(2)",
    "f <- function(p) .libPaths(p); environment(f) <- globalenv()",
    "invisible(parallel::clusterCall(cl, f, .libPaths()))",
    "pids <- unlist(parallel::clusterCall(cl, Sys.getpid))",
    "set.seed(3); x <- Matrix::rsparsematrix(20000, 4000, 0.01, rand.x = function(n) rpois(n, 3) + 1)",
    "sh <- write_shards(x, tempfile(), n = 2)",
    "target <- if (group) paste0('-', trimws(system(sprintf('ps -o pgid= %d', Sys.getpid()), intern = TRUE))) else Sys.getpid()",
    "system(sprintf('sh -c \"sleep %s; kill -s INT -- %s\" &', after, target))",
    "told <- FALSE",
    "r <- withCallingHandlers(tryCatch(plsa(sh, 20, seed = 1, tol = 0, max_iter = 1e6, cluster = cl), interrupt = function(e) 'interrupted'),",
    "  aspectr_message_cluster = function(m) { told <<- TRUE; invokeRestart('muffleMessage') })",
    "cat('interrupted', identical(r, 'interrupted'), '\\n')",
    "cat('told', told, '\\n')",
    "if (!told) cat('instep', identical(tryCatch(unlist(parallel::clusterCall(cl, Sys.getpid)), error = function(e) NULL), pids), '\\n')",
    "y <- x[1:300, ]; shy <- shards(list(y[1:100, ], y[101:300, ]))",
    "ref <- plsa(y, 3, seed = 1, tol = 0, max_iter = 3)",
    "fit <- tryCatch(plsa(shy, 3, seed = 1, tol = 0, max_iter = 3, cluster = cl), aspectr_error_cluster = function(e) 'refused')",
    "cat('refit', if (told) identical(fit, 'refused') else isTRUE(all.equal(fit$factors, ref$factors, tolerance = 1e-10)), '\\n')"
  )
  # (4 s: inside an iteration; 0.2 s: in the checks of the workers before
  # the fit, which were left out of step 5 times in 5)
  for (how in c("process", "group", "process 0.2")) {
    args <- strsplit(how, " ")[[1]]
    got <- run_signal_script(script, c(args[1], if (length(args) > 1) args[2] else "4"), timeout = 180,
                             what = paste("(workers without aspectr?)", how))
    expect_identical(got[["interrupted"]], "TRUE", label = how)
    if (got[["told"]] == "FALSE") expect_identical(got[["instep"]], "TRUE", label = how)
    expect_identical(got[["refit"]], "TRUE", label = how)
  }
})
