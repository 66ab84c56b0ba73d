# lca() of data frames split into shards(): the same fit as lca() of the
# whole data frame (the merged response patterns are the whole data's, in
# the same order), from memory and from files; misuse is refused.

survey_data <- function(n = 240, seed = 3) {
  old <- if (exists(".Random.seed", globalenv())) get(".Random.seed", globalenv())
  on.exit(if (!is.null(old)) assign(".Random.seed", old, globalenv()))
  set.seed(seed)
  cls <- sample(2, n, TRUE)
  df <- data.frame(
    a = factor(ifelse(stats::runif(n) < ifelse(cls == 1, 0.8, 0.2), "yes", "no"), levels = c("yes", "no", "maybe")),
    b = ifelse(stats::runif(n) < ifelse(cls == 1, 0.7, 0.3), 3, 100000),
    c = ifelse(stats::runif(n) < ifelse(cls == 1, 0.6, 0.1), "lo", ifelse(stats::runif(n) < 0.5, "mid", "hi")),
    d = stats::runif(n) < ifelse(cls == 1, 0.3, 0.9))
  df$b[sample(n, 20)] <- NA
  df$c[sample(n, 15)] <- NA
  df[1:3, ] <- NA  # observations with every response missing are dropped
  df
}

expect_same_lca <- function(fit, ref) {
  expect_identical(fit$probs, ref$probs)
  expect_identical(fit$P, ref$P)
  expect_identical(fit$posterior, ref$posterior)
  expect_identical(fit$predclass, ref$predclass)
  expect_identical(fit$llik, ref$llik)
  expect_identical(fit$iterations, ref$iterations)
  expect_identical(fit$run_iterations, ref$run_iterations)
  for (f in c("N", "Nobs", "npar", "AIC", "BIC", "Gsq", "Chisq", "entropy")) {
    expect_identical(fit[[f]], ref[[f]], label = f)
  }
  expect_equal(fit$se, ref$se, tolerance = 1e-12)
}

test_that("lca() of data frame shards equals lca() of the whole data frame", {
  df <- survey_data()
  parts <- list(df[1:70, ], df[71:160, ], df[161:240, ])
  sh <- shards(parts)
  expect_identical(dim(sh), c(240L, 4L))
  expect_identical(dimnames(sh)[[2]], names(df))
  expect_output(print(sh), "240 observations of 4 variables in 3 shards")
  for (m in c("squarem", "em", "cd")) {
    for (na in c(FALSE, TRUE)) {
      if (m == "cd" && !na) next
      ref <- lca(df, 2, nrun = 3, seed = 1, method = m, na.rm = na)
      fit <- lca(sh, 2, nrun = 3, seed = 1, method = m, na.rm = na)
      expect_same_lca(fit, ref)
      expect_identical(fit$shards, 3L)
    }
  }
  # one class, a callback, one shard per observation block of any size
  expect_same_lca(lca(shards(list(df)), 1), lca(df, 1))
  seen <- 0
  fit <- lca(shards(list(df[1:5, ], df[6:240, ])), 3, nrun = 2, seed = 4,
             callback = function(it, obj, f) { seen <<- seen + 1; TRUE })
  expect_gt(seen, 0)
  expect_same_lca(fit, lca(df, 3, nrun = 2, seed = 4, callback = function(...) TRUE))
  # predict() of the sharded fit
  expect_equal(predict(fit, df[4:10, ]), predict(lca(df, 3, nrun = 2, seed = 4), df[4:10, ]))
})

test_that("lca() of shards reproduces poLCA's published fit, from .rds files", {
  v <- expand_patterns(polca_values_patterns)
  dir <- shard_tempdir()
  f <- file.path(dir, paste0("values", 1:3, ".rds"))
  cut <- split(seq_len(nrow(v)), rep(1:3, c(50, 100, nrow(v) - 150)))
  for (i in 1:3) saveRDS(v[cut[[i]], ], f[i])
  fit <- lca(shards(f), 3, nrun = 10, seed = 1)
  expect_equal(fit$llik, -503.3011, tolerance = 1e-7)
  expect_same_lca(fit, lca(v, 3, nrun = 10, seed = 1))
  # a level that occurs in one shard only, a variable constant within a shard
  w <- v
  w$A[1:3] <- 3
  w <- w[order(w$B), ]
  rownames(w) <- NULL
  ws <- shards(list(w[1:60, ], w[61:nrow(w), ]))
  expect_identical(length(unique(w$B[1:60])), 1L)
  expect_same_lca(lca(ws, 2, nrun = 2, seed = 2), lca(w, 2, nrun = 2, seed = 2))
  # a file that changed since shards() described it
  sh <- shards(f)
  Sys.sleep(1.1)
  saveRDS(v[1:10, ], f[2])
  expect_error(lca(sh, 2), class = "aspectr_error_shard", regexp = "values2\\.rds.*changed")
})

test_that("shards of data frames are refused where they cannot be one data set", {
  df <- survey_data(60)
  expect_error(shards(list(df, matrix(1, 2, 2))), class = "aspectr_error_input_value", regexp = "data frame")
  expect_error(shards(list(df, df[, 2:1])), class = "aspectr_error_input_value", regexp = "same variables")
  df2 <- df
  df2$a <- factor(as.character(df2$a))
  expect_error(shards(list(df, df2)), class = "aspectr_error_input_value", regexp = "`a`")
  df3 <- df
  df3$b <- as.character(df3$b)
  expect_error(shards(list(df, df3)), class = "aspectr_error_input_value", regexp = "`b`")
  sh <- shards(list(df[1:30, ], df[31:60, ]))
  expect_error(plsa(sh, 2), class = "aspectr_error_input_type", regexp = "lca")
  expect_error(nmf(sh, 2), class = "aspectr_error_input_type", regexp = "lca")
  expect_error(ntf(sh, 2, loss = "kl"), class = "aspectr_error_input_type", regexp = "lca")
  expect_error(lca(shards(list(matrix(1, 2, 2))), 2), class = "aspectr_error_input_type", regexp = "data frames")
  expect_error(lca(sh, 2, na.rm = NA), class = "aspectr_error_input")
  expect_error(lca(sh, 0), class = "aspectr_error_input")
  # a variable with one observed level over all shards
  one <- data.frame(a = rep("x", 10), b = rep(c("u", "v"), 5))
  expect_error(lca(shards(list(one[1:5, ], one[6:10, ])), 2), class = "aspectr_error_input_value",
               regexp = "at least 2 observed levels")
  # continuous values in a shard
  cont <- data.frame(a = c(1.5, 2, 1), b = c(1, 2, 1))
  expect_error(lca(shards(list(cont)), 2), class = "aspectr_error_shard", regexp = "continuous")
})

test_that("random splits of random survey data give lca()'s fit (property)", {
  n_cases <- prop_n_cases(6)
  for (i in seq_len(n_cases)) {
    prop_with_seed(920000L + i, {
      n <- sample(20:120, 1)
      J <- sample(2:5, 1)
      df <- as.data.frame(lapply(seq_len(J), function(j) {
        lv <- sample(2:4, 1)
        v <- sample(lv, n, TRUE)
        v[stats::runif(n) < 0.1] <- NA
        switch(sample(3, 1), v, letters[v], factor(v, levels = rev(seq_len(lv))))
      }))
      names(df) <- paste0("q", seq_len(J))
      df[cbind(1:2, 1:2)] <- df[cbind(3:4, 1:2)]  # keep every variable's levels in play
      cuts <- sort(sample(n - 1, sample(0:3, 1)))
      parts <- lapply(split(seq_len(n), findInterval(seq_len(n), cuts + 1)), function(r) df[r, , drop = FALSE])
      k <- sample(1:3, 1)
      na <- stats::runif(1) < 0.3
    })
    info <- sprintf("case %d: n %d, J %d, %d shards, k %d, na.rm %s", i, n, J, length(parts), k, na)
    # (random data of few rows: a k they cannot identify warns alike)
    ref <- tryCatch(quiet_unidentified(lca(df, k, nrun = 2, seed = i, na.rm = na, se = FALSE)),
                    aspectr_error_input = function(e) e)
    fit <- tryCatch(quiet_unidentified(lca(shards(unname(parts)), k, nrun = 2, seed = i, na.rm = na, se = FALSE)),
                    aspectr_error_input = function(e) e)
    if (inherits(ref, "error")) {
      expect_s3_class(fit, "aspectr_error_input")
      next
    }
    expect_identical(fit$probs, ref$probs, info = info)
    expect_identical(fit$posterior, ref$posterior, info = info)
    expect_identical(fit$llik, ref$llik, info = info)
  }
})

test_that("on a cluster the workers read and code the shards; the fit is the same", {
  skip_on_cran()
  df <- survey_data(300, seed = 8)
  dir <- shard_tempdir()
  f <- file.path(dir, paste0("wave", 1:4, ".rds"))
  cut <- split(seq_len(nrow(df)), rep(1:4, c(40, 100, 60, 100)))
  for (i in 1:4) saveRDS(df[cut[[i]], ], f[i])
  ref <- lca(df, 2, nrun = 3, seed = 4)
  # the master reads no shard
  reads <- new.env()
  trace("shard_object", substitute(assign("n", (e$n %||% 0) + 1, envir = e), list(e = reads)), print = FALSE,
        where = asNamespace("aspectr"))
  on.exit(untrace("shard_object", where = asNamespace("aspectr")), add = TRUE)
  for (make in list(psock_cluster, mirai_cluster)) {
    cl <- make()
    fit <- lca(shards(f), 2, nrun = 3, seed = 4, cluster = cl)
    expect_same_lca(fit, ref)
    expect_identical(fit$shards, 4L)
    # a shard that changed: a classed error naming it, the cluster usable
    sh <- shards(f)
    Sys.sleep(1.1)
    saveRDS(df[cut[[3]][1:5], ], f[3])
    expect_error(lca(sh, 2, cluster = cl), class = "aspectr_error_shard", regexp = "wave3\\.rds.*changed")
    saveRDS(df[cut[[3]], ], f[3])
    expect_identical(unlist(parallel::clusterCall(cl, function() 7)), c(7, 7))
    parallel::stopCluster(cl)
  }
  expect_identical(reads$n %||% 0, 16)  # shards() describing them (the master's only reads)
  expect_error(lca(df, 2, cluster = "a"), class = "aspectr_error_input_type", regexp = "cluster")
  cl <- structure(list(), class = c("SOCKcluster", "cluster"))
  expect_error(lca(df, 2, cluster = cl), class = "aspectr_error_input_value")
})
