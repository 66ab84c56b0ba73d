# nmf() of data in shards(): the same call gives the in-memory fit (the
# same defaults, NNDSVD's start and the extrapolated HALS and ANLS
# included) for every method that runs on shards,
# from memory, from files (out of core) and on clusters; what cannot run on
# shards is refused.

expect_same_nmf <- function(fit, ref, tol = 1e-10) {
  expect_same_fields(fit, ref, c("W", "H", "objective", "initial", "value", "divergence", "rel_error", "weights"),
                     c("iterations", "converged", "run"), tol = tol)
}

# in memory: the same call (messages of fits cut short by max_iter are
# silenced)
ref_nmf <- function(x, k, ...) suppressMessages(nmf(x, k, ...))
quiet_nmf <- function(...) suppressMessages(nmf(...))

test_that("nmf() of 1, 2 and 3 shards equals the in-memory fit for every method", {
  x <- shard_counts(40, 25, seed = 3) * 3  # max(x) is not 1: the fit's scaling
  splits <- list(integer(0), 17L, c(9L, 26L))
  cases <- list(list("frobenius", "hals", NULL), list("frobenius", "hals", FALSE), list("frobenius", "hals", TRUE),
                list("frobenius", "mu", NULL), list("frobenius", "anls", NULL), list("frobenius", "anls", FALSE),
                list("frobenius", "anls", TRUE), list("frobenius", "als", NULL), list("kl", "mu", NULL),
                list("kl", "mu", TRUE),
                list("kl", "cd", NULL))
  for (cs in cases) {
    for (pen in list(c(0, 0), c(0.05, 0.1))) {
      args <- list(loss = cs[[1]], method = cs[[2]], accelerate = cs[[3]], seed = 2, max_iter = 300, tol = 1e-7,
                   L1 = pen, L2 = rev(pen))
      ref <- do.call(ref_nmf, c(list(x, 3), args))
      for (cuts in splits) {
        info <- paste(cs[[1]], cs[[2]], "accelerate", format(cs[[3]]), "penalty", pen[1], "shards",
                      length(cuts) + 1)
        fit <- do.call(quiet_nmf, c(list(shards(split_rows(x, cuts)), 3), args))
        expect_same_nmf(fit, ref)
        expect_identical(fit$shards, length(cuts) + 1L, info = info)
      }
      # the fields that come from the data
      for (f in c("total", "neg_entropy", "row_totals", "scale", "loglik_const", "nnz", "count_data")) {
        expect_equal(fit[[f]], ref[[f]], tolerance = 1e-12, info = paste(info, f))
      }
      if (cs[[1]] == "kl") expect_equal(logLik(fit), logLik(ref), tolerance = 1e-10)
    }
  }
})

test_that("given factors, warm starts, restarts and the callback are exact over shards", {
  x <- shard_counts(36, 22, seed = 5)
  sh <- shards(split_rows(x, c(11L, 20L)))
  W0 <- matrix(seq(0.1, 2, length.out = 36 * 2), 36, 2)
  H0 <- matrix(seq(2, 0.2, length.out = 2 * 22), 2, 22)
  for (init in list(list(W = W0, H = H0), list(W = W0), list(H = H0))) {
    expect_same_nmf(quiet_nmf(sh, 2, init = init, seed = 1, max_iter = 40, tol = 0),
                    ref_nmf(x, 2, init = init, seed = 1, max_iter = 40, tol = 0))
  }
  # continuing from an earlier fit
  a <- quiet_nmf(sh, 2, seed = 3, max_iter = 10, tol = 0)
  expect_same_nmf(quiet_nmf(sh, 2, init = a, max_iter = 15, tol = 0),
                  ref_nmf(x, 2, init = ref_nmf(x, 2, seed = 3, max_iter = 10, tol = 0), max_iter = 15, tol = 0))
  # several starts, staged (KL coordinate descent: the shards' W H made
  # again for each start)
  for (cs in list(c("frobenius", "hals"), c("frobenius", "mu"), c("kl", "cd"))) {
    ref <- ref_nmf(x, 3, loss = cs[1], method = cs[2], seed = 9, nrun = 3, short_iter = 5, short_keep = 1,
                   max_iter = 60)
    fit <- quiet_nmf(sh, 3, loss = cs[1], method = cs[2], seed = 9, nrun = 3, short_iter = 5, short_keep = 1,
                     max_iter = 60)
    expect_same_nmf(fit, ref)
    expect_equal(fit$run_values, ref$run_values, tolerance = 1e-10)
  }
  # the callback sees the same objective and factors, and can stop the fit
  for (cs in list(c("frobenius", "hals"), c("kl", "mu"), c("frobenius", "anls"), c("kl", "cd"))) {
    seen <- list(); seen_ref <- list()
    fit <- quiet_nmf(sh, 2, loss = cs[1], method = cs[2], seed = 4, max_iter = 20, tol = 0,
               callback = function(it, obj, f) { seen[[it]] <<- list(obj, f); it < 5 })
    ref <- ref_nmf(x, 2, loss = cs[1], method = cs[2], seed = 4, max_iter = 20, tol = 0,
                   callback = function(it, obj, f) { seen_ref[[it]] <<- list(obj, f); it < 5 })
    expect_true(fit$stopped)
    expect_length(seen, 5)
    for (i in 1:5) {
      expect_equal(seen[[i]][[1]], seen_ref[[i]][[1]], tolerance = 1e-10)
      expect_equal(seen[[i]][[2]], seen_ref[[i]][[2]], tolerance = 1e-10)
    }
    expect_same_nmf(fit, ref)
  }
  old <- options(aspectr.progress_interval = 0)
  on.exit(options(old))
  expect_message(nmf(sh, 2, seed = 1, max_iter = 3, tol = 0, verbose = TRUE),
                 class = "aspectr_message_progress")
})

test_that("nmf() of shard files fits out of core as in memory, and detects changed files", {
  x <- shard_counts(41, 23, seed = 7)
  sh <- write_shards(x, shard_tempdir(), n = 3)
  for (cs in list(c("frobenius", "hals"), c("frobenius", "mu"), c("frobenius", "anls"), c("kl", "mu"),
                  c("kl", "cd"))) {
    expect_same_nmf(quiet_nmf(sh, 3, loss = cs[1], method = cs[2], seed = 1, max_iter = 50),
                    ref_nmf(x, 3, loss = cs[1], method = cs[2], seed = 1, max_iter = 50))
  }
  # cells in any order (here shuffled sparse tensors), in memory and in files
  pieces <- lapply(split_rows(x, c(13L, 30L)), function(p) {
    nz <- which(p != 0, arr.ind = TRUE)
    o <- sample(nrow(nz))
    sptensor(nz[o, , drop = FALSE], p[nz][o], dim(p))
  })
  for (loss in c("frobenius", "kl")) {
    ref <- ref_nmf(unname(x), 2, loss = loss, seed = 4, max_iter = 40)
    expect_same_nmf(quiet_nmf(shards(pieces), 2, loss = loss, seed = 4, max_iter = 40), ref)
    expect_same_nmf(quiet_nmf(write_shards(pieces, shard_tempdir()), 2, loss = loss, seed = 4, max_iter = 40), ref)
  }
  dir <- shard_tempdir()
  f <- file.path(dir, c("a.rds", "b.rds"))
  p <- split_rows(x, 20L)
  for (i in 1:2) saveRDS(p[[i]], f[i])
  expect_same_nmf(quiet_nmf(shards(f), 2, method = "mu", seed = 2, max_iter = 30),
                  ref_nmf(x, 2, method = "mu", seed = 2, max_iter = 30))
  # (KL coordinate descent: files read whole at every pass, W H recomputed)
  expect_same_nmf(quiet_nmf(shards(f), 2, loss = "kl", seed = 2, max_iter = 30),
                  ref_nmf(x, 2, loss = "kl", method = "cd", seed = 2, max_iter = 30))
  expect_error(nmf(shards(f), 2, seed = 1, max_iter = 10, tol = 0,
                   callback = function(it, obj, fac) {
                     if (it == 2) { Sys.sleep(1.1); saveRDS(p[[2]][1:5, ], f[2]) }
                     TRUE
                   }),
               class = "aspectr_error_shard", regexp = "b\\.rds.*changed")
})

test_that("a weighted fit of shard files that change says so, naming the file once", {
  x <- shard_counts(40, 12, seed = 13)
  dir <- shard_tempdir()
  f <- file.path(dir, c("a.rds", "b.rds"))
  p <- split_rows(x, 20L)
  mask <- matrix(FALSE, 40, 12)
  mask[3, 4] <- mask[30, 2] <- TRUE
  old <- options(aspectr.shard_cache = FALSE)
  on.exit(options(old), add = TRUE)
  for (fitter in c("nmf", "ntf")) {
    for (i in 1:2) saveRDS(p[[i]], f[i])
    args <- list(shards(f), 2, mask = mask, seed = 1, max_iter = 10, tol = 0,
                 callback = function(it, obj, fac) {
                   if (it == 2) { Sys.sleep(1.1); saveRDS(p[[2]][1:5, ], f[2]) }
                   TRUE
                 })
    if (fitter == "ntf") args$loss <- "frobenius"
    err <- tryCatch(suppressMessages(do.call(fitter, args)), error = function(e) e)
    expect_s3_class(err, "aspectr_error_shard")
    expect_match(conditionMessage(err), "b\\.rds.*changed", info = fitter)
    expect_length(gregexpr("b.rds", conditionMessage(err), fixed = TRUE)[[1]], 1)
  }
})

test_that("nmf() of shard files read a chunk of cells at a time gives the same fit whatever the chunk", {
  x <- shard_counts(45, 26, seed = 12)
  sh <- write_shards(x, shard_tempdir(), n = 3)
  kept <- shards(split_rows(x, cumsum(sh$rows)[1:2]))
  old <- options(aspectr.shard_chunk = NULL)
  on.exit(options(old))
  for (cs in list(c("frobenius", "hals"), c("frobenius", "mu"), c("frobenius", "anls"), c("frobenius", "als"),
                  c("kl", "mu"), c("kl", "cd"))) {
    # (without extrapolation: its projections are corrected from the rows
    # of a shard in memory and recomputed from a file, so those agree to
    # rounding, as tested above, not to the last bit)
    fit_with <- function(y, ...) quiet_nmf(y, 3, loss = cs[1], method = cs[2], seed = 6, max_iter = 25, tol = 0,
                                           accelerate = FALSE, ...)
    fits <- list()
    for (ch in c(1, 7, 5000, 1e6)) {
      options(aspectr.shard_chunk = ch)
      for (th in 1:2) fits[[length(fits) + 1]] <- fit_with(sh, threads = th)
    }
    options(aspectr.shard_chunk = NULL)
    # each product is summed over the file's cells in their order: the chunk
    # and the threads change nothing, and a file written by rows or columns
    # gives the products of the data kept in memory
    for (f in fits[-1]) {
      expect_identical(f$W, fits[[1]]$W)
      expect_identical(f$H, fits[[1]]$H)
      expect_identical(f$objective, fits[[1]]$objective)
    }
    k <- fit_with(kept)
    if (cs[1] == "frobenius") expect_identical(fits[[1]]$W, k$W)
    expect_same_nmf(fits[[1]], ref_nmf(x, 3, loss = cs[1], method = cs[2], seed = 6, max_iter = 25, tol = 0,
                                       accelerate = FALSE))
  }
})

test_that("KL out of core sums its logs in blocks that do not depend on the chunk", {
  # shards of several thousand cells: the blocks of logs straddle chunks
  x <- shard_counts(400, 45, seed = 15)
  sh <- write_shards(x, shard_tempdir(), n = 2)
  old <- options(aspectr.shard_chunk = NULL)
  on.exit(options(old))
  fits <- list()
  for (ch in c(999, 4096, 5000, 1e6)) {
    options(aspectr.shard_chunk = ch)
    for (th in 1:2) {
      fits[[length(fits) + 1]] <- quiet_nmf(sh, 3, loss = "kl", method = "mu", seed = 2, max_iter = 8, tol = 0,
                                            threads = th)
    }
  }
  for (f in fits[-1]) {
    expect_identical(f$objective, fits[[1]]$objective)
    expect_identical(f$W, fits[[1]]$W)
  }
  expect_same_nmf(fits[[1]], ref_nmf(x, 3, loss = "kl", method = "mu", seed = 2, max_iter = 8, tol = 0))
})

test_that("a sharded random start leaves the random stream as the in-memory start does", {
  x <- shard_counts(30, 18, seed = 13)
  sh <- write_shards(x, shard_tempdir(), n = 2)
  # seed = NULL: the session's stream, moved on past the start's draws
  set.seed(21)
  a <- quiet_nmf(sh, 2, seed = NULL, nrun = 2, max_iter = 15, tol = 0)
  after_sharded <- stats::runif(3)
  set.seed(21)
  b <- ref_nmf(x, 2, seed = NULL, nrun = 2, max_iter = 15, tol = 0)
  after_memory <- stats::runif(3)
  expect_identical(after_sharded, after_memory)
  expect_same_nmf(a, b)
  # with a seed, the session's stream is not touched
  set.seed(22)
  invisible(quiet_nmf(sh, 2, seed = 5, max_iter = 3, tol = 0))
  u <- stats::runif(2)
  set.seed(22)
  expect_identical(u, stats::runif(2))
})

test_that("KL coordinate descent over shards takes the steps of the in-memory solver", {
  # KLCDColumns with the passes of one shard against KLCD::solve_side(), for
  # sweeps and Newton steps per coordinate beyond the one nmf() uses, on data
  # whose steps down overshoot (halved), and with l2 = 0 on empty columns
  # (where f is linear)
  halved <- 0
  for (case in 1:12) {
    set.seed(700 + case)
    m <- sample(5:30, 1); n <- sample(3:12, 1); k <- sample(1:4, 1)
    x <- matrix(stats::rpois(m * n, 0.7), m, n) * stats::rexp(m * n)^3
    x[, 1] <- 0  # an empty column
    nz <- which(x != 0, arr.ind = TRUE)
    X <- cpp_nmf_shard_state(t(nz - 1L), x[nz], c(m, n), 1, 1L)
    Wt <- matrix(stats::rexp(k * m), k, m)
    H <- matrix(stats::rexp(k * n) * 3, k, n)
    cs <- rowSums(Wt) + if (case %% 3 == 0) 0.1 else 0
    l2 <- if (case %% 2 == 0) 0.05 else 0
    sweeps <- c(1L, 2L, 3L)[case %% 3 + 1]
    newton <- c(1L, 3L)[case %% 2 + 1]
    r <- cpp_kcd_local(X, Wt, H, cs, l2, sweeps, newton, 2L)
    expect_equal(r$H, r$ref, tolerance = 1e-12, info = paste("case", case))
    expect_true(all(r$H >= 0))
    expect_gte(r$passes, sweeps * k + 1)
    halved <- halved + r$halved
  }
  expect_gt(halved, 0)
  # a piece refuses a pass without the coefficients it needs, and one that
  # moves a v it never computed
  x <- shard_counts(12, 5, seed = 9)
  nz <- which(x != 0, arr.ind = TRUE)
  X <- cpp_nmf_shard_state(t(nz - 1L), x[nz], dim(x), 1)
  Wt <- matrix(1, 2, 12)
  pass <- list(rd = matrix(0, 1, 5), rn = matrix(1, 1, 5), d = matrix(0.1, 1, 5))
  expect_error(cpp_nmf_piece_run(X, NULL, Wt, cpp_piece_slots(), "kcd_pass", c(pass, reset = 1), 1L, TRUE),
               "coefficients")
  expect_error(cpp_nmf_piece_run(X, NULL, Wt, cpp_piece_slots(), "kcd_pass", c(pass, reset = 0), 1L, TRUE),
               "never computed")
  expect_error(cpp_nmf_piece_run(X, NULL, Wt, cpp_piece_slots(), "kcd_pass",
                                 modifyList(pass, list(reset = 1, hv = matrix(1, 2, 5), rd = matrix(2, 1, 5))),
                                 1L, TRUE),
               "out of range")
  # one shard holds every row: H's columns are solved whole there, as in
  # memory; two shards take the passes; both give the in-memory fit
  x <- shard_counts(30, 16, seed = 8)
  one <- quiet_nmf(shards(list(x)), 3, loss = "kl", seed = 3, max_iter = 25, tol = 0, L2 = c(0, 0.01))
  mem <- ref_nmf(x, 3, loss = "kl", seed = 3, max_iter = 25, tol = 0, L2 = c(0, 0.01))
  expect_same_nmf(one, mem, tol = 1e-13)
  two <- quiet_nmf(shards(split_rows(x, 13L)), 3, loss = "kl", seed = 3, max_iter = 25, tol = 0, L2 = c(0, 0.01))
  expect_same_nmf(two, mem)
  expect_true(all(diff(two$objective) <= 1e-9 * abs(two$objective[-1])))
  # a shard without counts adds nothing to the passes (kept in memory, and
  # in a file)
  x[14:17, ] <- 0
  p3 <- split_rows(x, c(13L, 17L))
  mem0 <- ref_nmf(x, 3, loss = "kl", seed = 4, max_iter = 10, tol = 0)
  expect_same_nmf(quiet_nmf(shards(p3), 3, loss = "kl", seed = 4, max_iter = 10, tol = 0), mem0)
  expect_same_nmf(quiet_nmf(write_shards(p3, shard_tempdir()), 3, loss = "kl", seed = 4, max_iter = 10, tol = 0),
                  mem0)
  # the default method of loss = "kl" is coordinate descent, on shards too
  x <- shard_counts(30, 16, seed = 8)
  fit <- quiet_nmf(shards(split_rows(x, 11L)), 2, loss = "kl", seed = 3, max_iter = 40)
  expect_identical(fit$method, "cd")
  expect_same_nmf(fit, ref_nmf(x, 2, loss = "kl", seed = 3, max_iter = 40))
})

test_that("NNDSVD starts of shards are the in-memory starts, by the exact SVD and by the range finder", {
  # small data: the exact SVD of the shards read into one matrix
  x <- shard_counts(40, 25, seed = 6) * 2
  parts <- split_rows(x, c(11L, 30L))
  for (init in c("nndsvd", "nndsvda", "nndsvdar")) {
    for (loss in c("frobenius", "kl")) {
      args <- list(init = init, loss = loss, seed = 4, max_iter = 25)
      ref <- do.call(ref_nmf, c(list(x, 3), args))
      expect_same_nmf(do.call(quiet_nmf, c(list(shards(parts), 3), args)), ref)
      # out of core
      expect_same_nmf(do.call(quiet_nmf, c(list(write_shards(parts, shard_tempdir()), 3), args)), ref)
    }
  }
  # the extrapolated KL updates out of core, penalized
  args <- list(loss = "kl", method = "mu", accelerate = TRUE, L2 = 0.01, max_iter = 60)
  ref <- do.call(ref_nmf, c(list(x, 3), args))
  expect_same_nmf(do.call(quiet_nmf, c(list(write_shards(parts, shard_tempdir()), 3), args)), ref)
  # the default start is NNDSVD on shards too: one iteration from it
  one <- quiet_nmf(shards(parts), 3, max_iter = 1)
  expect_equal(one$initial, ref_nmf(x, 3, init = "nndsvd", max_iter = 1)$initial, tolerance = 1e-10)
  expect_false(isTRUE(all.equal(one$initial, ref_nmf(x, 3, init = "random", seed = 1, max_iter = 1)$initial)))
  # larger data: the randomized range finder, its products added over the
  # shards (a shard without counts among them)
  set.seed(12)
  X <- Matrix::rsparsematrix(430, 405, 0.02, rand.x = function(n) stats::rpois(n, 3) + 1)
  X[201:210, ] <- 0
  X <- Matrix::drop0(X)
  nd <- list(shards = shards(list(X[1:200, ], X[201:210, ], X[211:430, ])), dims = dim(X),
             scale = list(s = max(X)))
  omega <- matrix(stats::rnorm(405 * 8), 405, 8)
  ref <- aspectr:::cpp_nmf_range_svd(aspectr:::nmf_ptr(aspectr:::nmf_scale(aspectr:::nmf_data(X, "x"))$nd), omega, 2L, 3L, 1L)
  got <- aspectr:::cpp_nmf_range_svd(aspectr:::shard_nmf_products(nd, 1L), omega, 2L, 3L, 1L, nd$dims)
  expect_equal(got$d, ref$d, tolerance = 1e-10)
  expect_equal(abs(crossprod(got$u, ref$u)), diag(3), tolerance = 1e-8)
  expect_equal(abs(crossprod(got$v, ref$v)), diag(3), tolerance = 1e-8)
  # (the stores make W from the rows of u they keep: NNDSVD's W is never
  # gathered; nndsvdar's zeros are drawn in W's order, by the master)
  ns <- asNamespace("aspectr")
  made <- new.env()
  made$n <- 0
  trace("cpp_nndsvd_blocks", bquote(if (op == "block" && is.null(c)) assign("n", get("n", envir = .(made)) + 1, envir = .(made))),
        where = ns, print = FALSE)
  on.exit(untrace("cpp_nndsvd_blocks", where = ns), add = TRUE)
  for (loss in c("frobenius", "kl")) {
    ref <- ref_nmf(X, 3, loss = loss, max_iter = 8)
    expect_same_nmf(quiet_nmf(nd$shards, 3, loss = loss, max_iter = 8), ref)
  }
  expect_equal(made$n, 6)  # (nndsvd, then nndsvda: 3 shards each)
  ref <- ref_nmf(X, 3, init = "nndsvdar", seed = 2, max_iter = 8)
  expect_same_nmf(quiet_nmf(nd$shards, 3, init = "nndsvdar", seed = 2, max_iter = 8), ref)
  expect_equal(made$n, 6)
})

test_that("NNDSVD from u's rows in blocks (each shard's, kept by its store) is NNDSVD of u whole, ties included", {
  by_blocks <- function(nd, s, k, init, cuts) {
    parts <- lapply(seq_along(cuts[-1]), function(b) s$u[seq_len(cuts[b + 1] - cuts[b]) + cuts[b], , drop = FALSE])
    kept <- aspectr:::nmf_kept_nndsvd(nd, k, init, s, lapply(parts, function(u) aspectr:::cpp_nndsvd_blocks("part", u)))
    W <- do.call(rbind, lapply(parts, function(u) t(aspectr:::cpp_nndsvd_blocks("block", u, kept$nndsvd$spec))))
    list(W = W, H = kept$H)
  }
  set.seed(31)
  s <- svd(matrix(runif(60 * 25), 60, 25), nu = 6, nv = 6)
  s$d <- s$d[1:6]
  nd <- list(dims = c(60, 25), total = 700)
  # exact ties of the two parts, the first largest entry in a later block,
  # and a block without rows
  t <- list(u = cbind(c(1, 1, 1, 1) / 2, c(1, -1, 2, -2) / sqrt(10), c(0, 0, 0, 1), c(-1, 1, -2, 2) / sqrt(10)),
            v = cbind(c(1, 1, 1) / sqrt(3), c(1, -1, 0) / sqrt(2), c(1, 0, 0), c(0, 1, -1) / sqrt(2)),
            d = c(4, 3, 2, 1))
  for (init in c("nndsvd", "nndsvda")) {
    ref <- aspectr:::nmf_init(nd, 6, init, s)
    for (cuts in list(c(0, 60), c(0, 17, 40, 60), c(0, 0, 31, 31, 60))) {
      expect_identical(by_blocks(nd, s, 6, init, cuts), ref)
    }
    nt <- list(dims = c(4, 3), total = 5)
    ref <- aspectr:::nmf_init(nt, 4, init, t)
    for (cuts in list(c(0, 4), c(0, 2, 4), c(0, 1, 3, 4), c(0, 0, 2, 4))) {
      expect_identical(by_blocks(nt, t, 4, init, cuts), ref)
    }
  }
})

test_that("NNDSVD's range finder on shards: each shard keeps its rows of the range through the steps, and the Householder fallback gathers them", {
  ns <- asNamespace("aspectr")
  # (the steps run on each shard, in order)
  record <- function() {
    e <- new.env()
    e$ops <- character(0)
    trace("range_piece_step", bquote(assign("ops", c(get("ops", envir = .(e)), op), envir = .(e))),
          where = ns, print = FALSE)
    e
  }
  on.exit(untrace("range_piece_step", where = ns), add = TRUE)
  in_memory <- function(X, omega, k) {
    aspectr:::cpp_nmf_range_svd(aspectr:::nmf_ptr(aspectr:::nmf_scale(aspectr:::nmf_data(X, "x"))$nd), omega, 2L, k, 1L)
  }
  same_svd <- function(got, ref, k) {
    expect_equal(got$d, ref$d, tolerance = 1e-10)
    expect_equal(crossprod(got$u), diag(k), tolerance = 1e-10)
    expect_equal(abs(crossprod(got$u, ref$u)), diag(k), tolerance = 1e-8)
    expect_equal(abs(crossprod(got$v, ref$v)), diag(k), tolerance = 1e-8)
  }
  # full rank: Cholesky QR twice on the summed Grams, the blocks kept
  set.seed(31)
  X <- Matrix::rsparsematrix(450, 410, 0.03, rand.x = function(n) stats::rpois(n, 3) + 1)
  nd <- list(shards = shards(list(X[1:150, ], X[151:450, ])), dims = dim(X), scale = list(s = max(X)))
  omega <- matrix(stats::rnorm(410 * 7), 410, 7)
  e <- record()
  got <- aspectr:::cpp_nmf_range_svd(aspectr:::shard_nmf_products(nd, 1L), omega, 2L, 4L, 1L, nd$dims)
  expect_identical(e$ops, c(rep(rep(c("start", "apply", "apply", "btx"), each = 2), 3), "left", "left"))
  same_svd(got, in_memory(X, omega, 4L), 4L)
  # rank 2: the range's Gram is singular, so the range is gathered, made
  # orthonormal by Householder's QR and given back to the shards
  W <- Matrix::rsparsematrix(450, 2, 0.4, rand.x = function(n) stats::runif(n, 1, 2))
  H <- Matrix::rsparsematrix(2, 410, 0.4, rand.x = function(n) stats::runif(n, 1, 2))
  X2 <- methods::as(W %*% H, "CsparseMatrix")
  nd2 <- list(shards = shards(list(X2[1:200, ], X2[201:450, ])), dims = dim(X2), scale = list(s = max(X2)))
  e <- record()
  got <- aspectr:::cpp_nmf_range_svd(aspectr:::shard_nmf_products(nd2, 1L), omega, 2L, 2L, 1L, nd2$dims)
  expect_true(all(c("gather", "set") %in% e$ops))
  expect_equal(sum(e$ops == "gather"), sum(e$ops == "set"))
  same_svd(got, in_memory(X2, omega, 2L), 2L)
  # the fit from that start, out of core and in memory
  expect_same_nmf(quiet_nmf(write_shards(list(X2[1:200, ], X2[201:450, ]), shard_tempdir()), 2, max_iter = 5),
                  ref_nmf(X2, 2, max_iter = 5))
})

test_that("nmf() of shards refuses what it cannot do exactly", {
  x <- shard_counts()
  sh <- shards(split_rows(x, 20L))
  expect_error(nmf(sh, 2, loss = "beta", beta = 0.5, mask = TRUE), class = "aspectr_error_input_type",
               regexp = "mask")
  expect_error(nmf(sh, 2, accelerate = "yes"), class = "aspectr_error_input")
  expect_error(nmf(sh, 0), class = "aspectr_error_input")
  expect_error(nmf(sh, 26), class = "aspectr_error_input")
  X <- array(stats::rpois(12 * 5 * 4, 2), c(12, 5, 4)); X[, 1, 1] <- 1
  expect_error(nmf(shards(split_rows(X, 5L)), 2), class = "aspectr_error_input_value", regexp = "ntf")
  expect_error(nmf(x, 2, cluster = structure(list(1), class = c("SOCKcluster", "cluster"))),
               class = "aspectr_error_input_argument", regexp = "shards")
  # non-counts warn only under KL, as in memory
  expect_no_warning(nmf(shards(list(x / 2)), 2, seed = 1, max_iter = 3))
  expect_warning(nmf(shards(list(x / 2)), 2, loss = "kl", method = "mu", seed = 1, max_iter = 3),
                 class = "aspectr_warning_noncount")
})

test_that("nmf() of shards on a PSOCK and a mirai cluster equals the in-memory fit", {
  skip_on_cran()
  x <- shard_counts(45, 24, seed = 11)
  parts <- split_rows(x, c(12L, 30L))
  cl <- psock_cluster()
  on.exit(parallel::stopCluster(cl), add = TRUE)
  for (cs in list(c("frobenius", "hals"), c("frobenius", "anls"), c("kl", "mu"), c("kl", "cd"))) {
    ref <- ref_nmf(x, 3, loss = cs[1], method = cs[2], seed = 3, nrun = 2, max_iter = 40)
    expect_same_nmf(quiet_nmf(shards(parts), 3, loss = cs[1], method = cs[2], seed = 3, nrun = 2,
                        max_iter = 40, cluster = cl), ref)
  }
  # the extrapolated KL updates, with the default NNDSVD start
  expect_same_nmf(quiet_nmf(shards(parts), 3, loss = "kl", method = "mu", accelerate = TRUE, max_iter = 40,
                            cluster = cl),
                  ref_nmf(x, 3, loss = "kl", method = "mu", accelerate = TRUE, max_iter = 40))
  stores <- function(cl) unlist(parallel::clusterEvalQ(cl, length(ls(asNamespace("aspectr")$shard_stores))))
  expect_identical(stores(cl), c(0L, 0L))
  skip_if_not_installed("mirai")
  cm <- mirai::make_cluster(2)
  on.exit(parallel::stopCluster(cm), add = TRUE)
  set_worker_libs(cm)
  # (mirai hands a call to any free worker: the steps that change W must
  # reach each shard exactly once)
  for (i in 1:2) {
    expect_same_nmf(quiet_nmf(shards(parts), 3, seed = 5, max_iter = 30, L1 = 0.01, cluster = cm),
                    ref_nmf(x, 3, seed = 5, max_iter = 30, L1 = 0.01))
  }
  for (m in c("mu", "cd")) {
    expect_same_nmf(quiet_nmf(shards(parts), 2, loss = "kl", method = m, seed = 5, max_iter = 30, cluster = cm),
                    ref_nmf(x, 2, loss = "kl", method = m, seed = 5, max_iter = 30))
  }
})

test_that("random splits of random data give the in-memory nmf() fit (property)", {
  n_cases <- prop_n_cases(6)
  for (i in seq_len(n_cases)) {
    prop_with_seed(910000L + i, {
      m <- sample(8:40, 1); n <- sample(5:20, 1); k <- sample(1:min(4, m, n), 1)
      x <- matrix(stats::rpois(m * n, stats::runif(1, 0.3, 4)), m, n) * stats::runif(1, 1e-3, 1e3)
      x[cbind(seq_len(m), sample(n, m, replace = TRUE))] <- 1
      cuts <- sort(sample(m - 1, sample(0:min(4, m - 1), 1)))
      cs <- list(c("frobenius", "hals"), c("frobenius", "mu"), c("frobenius", "anls"), c("kl", "mu"),
                 c("kl", "cd"))[[sample(5, 1)]]
      pen <- if (stats::runif(1) < 0.5) c(0, 0) else stats::runif(2, 0, 0.1)
      args <- list(loss = cs[1], method = cs[2], seed = i, max_iter = 60, L1 = pen)
      ref <- do.call(ref_nmf, c(list(x, k), args))
      fit <- do.call(quiet_nmf, c(list(shards(split_rows(x, cuts)), k), args))
      expect_same_nmf(fit, ref, tol = 1e-9)
    })
  }
})

test_that("every operation that changes a store gives the same answer when delivered twice", {
  # A one-node cluster in this process that runs every call twice and
  # answers with the second run, as when a mirai cluster hands a call to a
  # worker that already had it: the fits must equal the in-memory ones.
  registerS3method("sendData", "aspectr_twice_node", function(node, data) {
    if (identical(data$type, "EXEC")) {
      run <- function() tryCatch(do.call(data$data$fun, data$data$args, quote = TRUE),
                                 error = function(e) structure(conditionMessage(e), class = "try-error"))
      run()
      node$box$value <- run()
    }
    invisible(NULL)
  }, envir = asNamespace("parallel"))
  registerS3method("recvData", "aspectr_twice_node", function(node) {
    list(type = "VALUE", value = node$box$value, success = TRUE, tag = NULL)
  }, envir = asNamespace("parallel"))
  cl <- structure(list(structure(list(box = new.env()), class = "aspectr_twice_node")),
                  class = c("aspectr_twice_cluster", "cluster"))
  x <- shard_counts(30, 18, seed = 31)
  sh <- shards(split_rows(x, c(9L, 20L)))
  for (cs in list(c("frobenius", "hals"), c("frobenius", "mu"), c("kl", "mu"), c("kl", "cd"))) {
    expect_same_nmf(quiet_nmf(sh, 3, loss = cs[1], method = cs[2], seed = 1, max_iter = 25, cluster = cl),
                    ref_nmf(x, 3, loss = cs[1], method = cs[2], seed = 1, max_iter = 25))
  }
  ref <- plsa(x, 3, method = "em", seed = 2, max_iter = 10, tol = 0)
  fit <- plsa(sh, 3, method = "em", seed = 2, max_iter = 10, tol = 0, cluster = cl)
  expect_equal(fit$factors, ref$factors, tolerance = 1e-10)
  expect_equal(fit$objective, ref$objective, tolerance = 1e-10)
  X <- array(stats::rpois(15 * 4 * 3, 2), c(15, 4, 3)); X[, 1, 1] <- 1
  # (q-EM and its SQUAREM, the default: the extrapolation's steps too)
  for (m in c("em", "squarem")) {
    ref <- plsa(X, 2, loss = "tsallis", method = m, seed = 2, max_iter = 10, tol = 0)
    fit <- plsa(shards(split_rows(X, 7L)), 2, loss = "tsallis", method = if (m == "em") m, seed = 2, max_iter = 10,
                tol = 0, cluster = cl)
    expect_identical(fit$method, m)
    expect_equal(fit$factors, ref$factors, tolerance = 1e-10)
    expect_equal(fit$objective, ref$objective, tolerance = 1e-10)
  }
})
