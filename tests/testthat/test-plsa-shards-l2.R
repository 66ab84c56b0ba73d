# plsa(loss = "l2") of data in shards(): the block steps of the in-memory
# fit on pieces (PPSPiecesRule), whose projections of the documents'
# columns onto the simplex find their threshold from sums over the shards.
# The fit equals the in-memory fit from the same start to rounding, on
# every backend.

l2_fields <- c("objective", "initial", "kl", "lambda")

expect_same_l2 <- function(got, ref, info) {
  expect_same_fields(got, ref, l2_fields, same = c("iterations", "converged", "method"), info = info)
  for (n in seq_along(ref$factors)) {
    expect_equal(unname(as.matrix(got$factors[[n]])), unname(ref$factors[[n]]), tolerance = 1e-10,
                 info = paste(info, "factor", n))
  }
}

test_that("plsa(loss = 'l2') of shards equals the in-memory fit in memory, from .shard and .rds files and on a PSOCK cluster", {
  x <- shard_counts(30, 14, seed = 21)
  parts <- split_rows(x, c(1L, 11L, 19L))  # (a shard of one row)
  fit <- function(data, ...) suppressMessages(plsa(data, 3, loss = "l2", seed = 5, max_iter = 40, tol = 0, ...))
  ref <- fit(x)
  # the documents' columns are sparse (the projections cut entries to zero
  # in every shard: the threshold's search takes more than one round)
  expect_true(mean(ref$factors$documents == 0) > 0.1)
  expect_equal(colSums(ref$factors$documents), rep(1, 3), tolerance = 1e-12, ignore_attr = TRUE)
  expect_true(all(diff(ref$objective) <= 1e-15))
  rds_dir <- shard_tempdir()
  rds <- file.path(rds_dir, paste0("p", seq_along(parts), ".rds"))
  for (i in seq_along(parts)) saveRDS(parts[[i]], rds[i])
  cl <- psock_cluster()
  on.exit(parallel::stopCluster(cl), add = TRUE)
  backends <- list(memory = list(shards(parts)), shard_files = list(write_shards(parts, shard_tempdir())),
                   rds_files = list(shards(rds)), psock = list(shards(parts), cluster = cl))
  for (b in names(backends)) {
    got <- do.call(fit, backends[[b]])
    expect_identical(got$method, "blocks", info = b)
    expect_same_l2(got, ref, b)
    expect_identical(got$shards, length(parts), info = b)
  }
  # the weights free (normalize = FALSE), from files and on the cluster
  ref_free <- fit(x, normalize = FALSE)
  expect_false(isTRUE(all.equal(sum(ref_free$lambda), 1)))
  for (b in c("shard_files", "psock")) {
    got <- do.call(fit, c(backends[[b]], list(normalize = FALSE)))
    expect_same_l2(got, ref_free, paste(b, "free"))
    expect_false(got$normalize)
  }
})

test_that("plsa(loss = 'l2') of N-way shards, with files of the rows' factor, staged starts and a callback, equals the in-memory fit", {
  set.seed(8)
  y <- array(stats::rpois(14 * 5 * 4, stats::runif(14 * 5 * 4, 0, 3)), c(14, 5, 4))
  y[, 1, 1] <- y[, 1, 1] + 1
  fit <- function(data, ...) suppressMessages(plsa(data, 2, loss = "l2", seed = 3, max_iter = 25, tol = 0, ...))
  ref <- fit(y)
  expect_same_l2(fit(shards(split_rows(y, c(4L, 9L)))), ref, "3-way")
  x <- shard_counts(24, 12, seed = 22)
  parts <- split_rows(x, c(9L, 15L))
  ref <- fit(x, nrun = 3, short_iter = 5, short_keep = 2)
  got <- fit(shards(parts), nrun = 3, short_iter = 5, short_keep = 2, factor_dir = shard_tempdir())
  expect_s3_class(got$factors$documents, "aspectr_factor_files")
  expect_identical(got$run, ref$run)
  expect_equal(got$run_values, ref$run_values, tolerance = 1e-10)
  expect_same_l2(got, ref, "factor_dir, staged")
  seen <- list(); seen_ref <- list()
  fit(x, callback = function(it, obj, f) { seen_ref[[it]] <<- list(obj, f); it < 4 })
  got <- fit(shards(parts), callback = function(it, obj, f) { seen[[it]] <<- list(obj, f); it < 4 })
  expect_true(got$stopped)
  expect_length(seen, 4)
  for (i in 1:4) expect_equal(seen[[i]], seen_ref[[i]], tolerance = 1e-10)
})

test_that("the threshold found from sums over pieces is the sort's projection onto the simplex", {
  # (PPSPiecesRule's rounds in plain R: each round the sums and counts of
  # the entries above Michelot's iterate t and a grid of 16 thresholds up
  # to a bound above the threshold)
  threshold <- function(b) {
    rounds <- 0
    t <- (sum(b) - 1) / length(b); hi <- max(b); last <- length(b)
    repeat {
      rounds <- rounds + 1
      cand <- t + (hi - t) * (0:15) / 16
      cs <- vapply(cand, function(u) sum(b[b > u]), numeric(1))
      cn <- vapply(cand, function(u) sum(b > u), numeric(1))
      nxt <- (cs[1] - 1) / cn[1]
      if (cn[1] >= last) return(list(tau = nxt, rounds = rounds))
      ok <- cn > 0 & cs - cand * cn >= 1
      a <- max(which(ok), 1)
      ta <- (cs[a] - 1) / cn[a]
      if (a < 16) {
        if (cn[a + 1] == cn[a]) return(list(tau = ta, rounds = rounds))
        hi <- cand[a + 1]
      }
      last <- if (ta >= nxt) cn[a] else cn[1]
      t <- max(ta, nxt)
    }
  }
  set.seed(4)
  cases <- list(stats::rnorm(50), stats::rnorm(7, 3), c(5, 0, 0), stats::runif(30) / 100, -stats::rexp(20),
                c(rep(0.2, 10), rep(-1, 5)), stats::rexp(5000)^3, c(stats::rnorm(3000, -1), stats::rnorm(5, 2)))
  rounds <- numeric(0)
  for (b in cases) {
    th <- threshold(b)
    rounds <- c(rounds, th$rounds)
    expect_equal(pmax(b - th$tau, 0), aspectr:::cpp_project_simplex(b), tolerance = 1e-14)
  }
  # (few rounds where plain Michelot takes many)
  expect_lt(max(rounds), 6)
})
