# plsa(prior =, seeds =): MAP EM with Dirichlet pseudo-counts (EM, SQUAREM,
# coordinate descent, shards) and guided topics.

# Plain-R MAP EM of the aspect model (documents x terms): `a` pseudo-counts
# on P(z | d) (k), `b` on P(w | z) (k x terms); returns the model after
# `iters` steps and the objective of every model visited (the negative log
# posterior divided by the total count, up to a constant: D(G || P) plus
# the prior's penalty).
map_em_ref <- function(x, lambda, U, V, a, b, iters) {
  S <- sum(x)
  G <- x / S
  objective <- function(lambda, U, V) {
    J <- sweep(U, 2, lambda, `*`)
    P <- J %*% t(V)
    nz <- G > 0
    kl <- sum(G[nz] * log(G[nz] / P[nz]))
    s <- rowSums(J)
    theta <- J[s > 0, , drop = FALSE] / s[s > 0]
    pen_a <- sum(sweep(log(theta), 2, a, `*`)[, a > 0, drop = FALSE])
    pen_b <- sum((b * log(t(V)))[b > 0])
    kl - (pen_a + pen_b) / S
  }
  obj <- objective(lambda, U, V)
  for (it in seq_len(iters)) {
    J <- sweep(U, 2, lambda, `*`)
    P <- J %*% t(V)
    R <- ifelse(G > 0, G / P, 0)
    Y0 <- J * (R %*% V)
    Y1 <- V * (t(R) %*% J)
    g <- rowSums(Y0)
    A <- Y0
    has <- g > 0
    A[has, ] <- g[has] * sweep(Y0[has, , drop = FALSE], 2, a / S, `+`) / (g[has] + sum(a) / S)
    lambda <- colSums(A)
    U <- sweep(A, 2, lambda, `/`)
    Y1 <- Y1 + t(b) / S
    V <- sweep(Y1, 2, colSums(Y1), `/`)
    lambda <- lambda / sum(lambda)
    obj <- c(obj, objective(lambda, U, V))
  }
  list(lambda = lambda, U = U, V = V, objective = obj)
}

prior_counts <- function(m = 12, n = 9, seed = 1) {
  set.seed(seed)
  x <- matrix(stats::rpois(m * n, 2), m, n, dimnames = list(paste0("d", 1:m), paste0("w", 1:n)))
  x[1, ] <- x[1, ] + 1
  x[, 1] <- x[, 1] + 1
  x
}

prior_start <- function(x, k, seed = 2) {
  set.seed(seed)
  U <- matrix(stats::runif(nrow(x) * k), nrow(x), k)
  V <- matrix(stats::runif(ncol(x) * k), ncol(x), k)
  list(lambda = rep(1 / k, k), factors = list(sweep(U, 2, colSums(U), `/`), sweep(V, 2, colSums(V), `/`)))
}

test_that("MAP EM equals a plain-R reference on tiny data", {
  x <- prior_counts()
  x[5, ] <- 0  # a document without counts: no topic proportions, no prior term
  k <- 3
  init <- prior_start(x, k)
  a <- c(0.5, 1, 2)
  b <- matrix(stats::runif(k * ncol(x), 0, 3), k, ncol(x))
  ref <- map_em_ref(x, init$lambda, init$factors[[1]], init$factors[[2]], a, b, 7)
  fit <- plsa(x, k, method = "em", init = init, max_iter = 7, tol = 0,
              prior = list(terms = t(b), documents = a))
  ord <- order(ref$lambda, decreasing = TRUE)
  expect_equal(unname(fit$lambda), ref$lambda[ord], tolerance = 1e-8)
  expect_equal(unname(fit$factors$documents), unname(ref$U[, ord]), tolerance = 1e-8)
  expect_equal(unname(fit$factors$terms), unname(ref$V[, ord]), tolerance = 1e-8)
  expect_equal(c(fit$initial, fit$objective), ref$objective, tolerance = 1e-8)
  # the KL divergence is kept apart from the objective
  expect_lt(fit$kl, fit$value)
  # the prior given as topics x terms is the same
  fit2 <- plsa(x, k, method = "em", init = init, max_iter = 7, tol = 0, prior = list(terms = b, documents = a))
  expect_equal(fit2$factors, fit$factors)
  # scalar pseudo-counts
  ref1 <- map_em_ref(x, init$lambda, init$factors[[1]], init$factors[[2]], rep(0.3, k), matrix(0.2, k, ncol(x)), 5)
  fit1 <- plsa(x, k, method = "em", init = init, max_iter = 5, tol = 0, prior = list(terms = 0.2, documents = 0.3))
  expect_equal(c(fit1$initial, fit1$objective), ref1$objective, tolerance = 1e-8)
  expect_equal(sort(unname(fit1$lambda)), sort(ref1$lambda), tolerance = 1e-8)
  # one number is both
  fit3 <- plsa(x, k, method = "em", init = init, max_iter = 5, tol = 0, prior = 0.25)
  ref3 <- map_em_ref(x, init$lambda, init$factors[[1]], init$factors[[2]], rep(0.25, k), matrix(0.25, k, ncol(x)), 5)
  expect_equal(c(fit3$initial, fit3$objective), ref3$objective, tolerance = 1e-8)
  expect_equal(fit3$prior$documents, rep(0.25, k))
})

test_that("prior = 0 is exactly the maximum likelihood fit", {
  x <- prior_counts()
  for (m in c("em", "cd", "squarem")) {
    ml <- plsa(x, 3, method = m, seed = 4, max_iter = 30, tol = 0)
    zero <- plsa(x, 3, method = m, seed = 4, max_iter = 30, tol = 0, prior = list(terms = 0, documents = 0))
    expect_identical(zero$factors, ml$factors)
    expect_identical(zero$objective, ml$objective)
    expect_null(zero$prior)
  }
})

test_that("the negative log posterior never rises (EM, SQUAREM, coordinate descent)", {
  x <- prior_counts(30, 20, seed = 3)
  priors <- list(list(terms = 0.5, documents = 0.5), list(terms = 2, documents = 0), list(terms = 0, documents = 3),
                 list(terms = matrix(stats::runif(20 * 4, 0, 5), 20, 4), documents = c(0.1, 1, 4, 0.5)))
  for (pr in priors) {
    for (m in c("em", "cd", "squarem")) {
      fit <- plsa(x, 4, method = m, seed = 9, max_iter = 150, tol = 0, prior = pr)
      f <- c(fit$initial, fit$objective)
      expect_true(all(is.finite(f)))
      expect_true(all(diff(f) <= 1e-12 * abs(f[-length(f)])), label = paste(m, "monotone"))
    }
  }
})

test_that("coordinate descent and EM reach the same MAP fixed point", {
  x <- prior_counts(30, 20, seed = 5)
  pr <- list(terms = 0.5, documents = 1)
  cd <- plsa(x, 3, method = "cd", seed = 1, max_iter = 3000, tol = 1e-14, prior = pr)
  # EM from coordinate descent's end moves it no more than rounding allows
  em <- plsa(x, 3, method = "em", init = cd, max_iter = 1, tol = 0, prior = pr)
  expect_equal(em$factors$terms, cd$factors$terms, tolerance = 1e-5)
  expect_equal(em$factors$documents, cd$factors$documents, tolerance = 1e-5)
  expect_equal(em$value, cd$value, tolerance = 1e-9)
  # and EM run long reaches the same objective from the same start
  em_long <- plsa(x, 3, method = "squarem", init = cd, max_iter = 500, tol = 1e-14, prior = pr)
  expect_equal(em_long$value, cd$value, tolerance = 1e-8)
})

test_that("tiny pseudo-counts: coordinate descent still reaches a MAP fixed point", {
  # pseudo-counts far below the data's counts put optima of entries below
  # the smallest model value coordinate descent resolves (1e-150 of the
  # total); such an entry set to 0 must not make the penalty infinite, which
  # undid every step and stopped the fit at its start, "converged"
  x <- prior_counts(30, 20, seed = 5)
  for (pr in list(1e-300, list(documents = 1e-280), list(terms = 1e-290))) {
    cd <- plsa(x, 3, method = "cd", seed = 1, max_iter = 3000, tol = 1e-12, prior = pr)
    expect_true(cd$converged)
    expect_true(is.finite(cd$value))
    expect_gt(cd$iterations, 5)
    expect_lt(cd$value, cd$initial - 0.01)
    # a fixed point: an EM step from its end moves the value by rounding
    em <- plsa(x, 3, method = "em", init = cd, max_iter = 1, tol = 0, prior = pr)
    expect_equal(em$value, cd$value, tolerance = 1e-8)
  }
})

test_that("the prior smooths: no zero probabilities where it adds counts", {
  x <- prior_counts(20, 15, seed = 7)
  x[, 15] <- 0  # a term never seen
  ml <- plsa(x, 3, method = "em", seed = 2, max_iter = 300, tol = 0)
  sm <- plsa(x, 3, method = "squarem", seed = 2, max_iter = 5000, tol = 1e-15, prior = list(terms = 1, documents = 1))
  expect_true(all(ml$factors$terms[15, ] == 0))
  expect_true(all(sm$factors$terms > 0))
  expect_true(all(sm$factors$documents > 0))
  # MAP EM's fixed point: P(w | z) = (n_wz + b) / (n_z + V b)
  post <- plsa(x, 3, method = "em", init = sm, max_iter = 1, tol = 0, prior = list(terms = 1, documents = 1))
  expect_equal(post$factors$terms, sm$factors$terms, tolerance = 1e-6)
  # without pseudo-counts on the documents P(z) = n_z / sum(x), and the
  # unseen term has P(w | z) = b / (n_z + V b) exactly at the fixed point
  st <- plsa(x, 3, method = "squarem", seed = 2, max_iter = 5000, tol = 1e-15, prior = list(terms = 1))
  expect_equal(unname(st$factors$terms[15, ] * (sum(x) * st$lambda + 15)), rep(1, 3), tolerance = 1e-6)
})

test_that("dense and sparse input give the same MAP fit", {
  skip_if_not_installed("Matrix")
  x <- prior_counts(25, 18, seed = 8)
  x[x < 2] <- 0
  x[, 1] <- x[, 1] + 1
  pr <- list(terms = 0.3, documents = 0.7)
  for (m in c("em", "cd")) {
    d <- plsa(x, 3, method = m, seed = 3, max_iter = 50, tol = 0, prior = pr)
    s <- plsa(Matrix::Matrix(x, sparse = TRUE), 3, method = m, seed = 3, max_iter = 50, tol = 0, prior = pr)
    expect_equal(s$factors, d$factors, tolerance = 1e-10)
    expect_equal(s$objective, d$objective, tolerance = 1e-10)
  }
})

expect_same_map_fit <- function(fit, ref, tol = 1e-10) {
  expect_equal(unname(fit$lambda), unname(ref$lambda), tolerance = tol)
  expect_equal(fit$factors, ref$factors, tolerance = tol)
  expect_equal(fit$objective, ref$objective, tolerance = tol)
  expect_equal(fit$initial, ref$initial, tolerance = tol)
  expect_identical(fit$iterations, ref$iterations)
}

test_that("sharded MAP EM equals the in-memory fit", {
  x <- shard_counts()
  b <- matrix(stats::runif(25 * 3, 0, 2), 25, 3)
  pr <- list(terms = b, documents = c(0.5, 1, 2))
  ref <- plsa(x, 3, method = "em", seed = 7, max_iter = 40, tol = 0, prior = pr)
  for (cuts in list(17L, c(9L, 30L))) {
    fit <- plsa(shards(split_rows(x, cuts)), 3, method = "em", seed = 7, max_iter = 40, tol = 0, prior = pr)
    expect_same_map_fit(fit, ref)
    expect_equal(fit$objective, ref$objective, tolerance = 1e-10)
    expect_equal(fit$kl, ref$kl, tolerance = 1e-10)
  }
  # shards in files, read a chunk at a time
  dir <- shard_tempdir()
  parts <- split_rows(x, c(12L, 25L))
  f <- file.path(dir, paste0("s", 1:3, ".rds"))
  for (i in 1:3) saveRDS(parts[[i]], f[i])
  op <- options(aspectr.shard_chunk = 50)
  on.exit(options(op), add = TRUE)
  fit <- plsa(shards(f), 3, method = "em", seed = 7, max_iter = 40, tol = 0, prior = pr)
  expect_same_map_fit(fit, ref)
  expect_equal(fit$objective, ref$objective, tolerance = 1e-10)
})

test_that("sharded MAP coordinate descent (the default) equals the in-memory fit on every backend", {
  x <- shard_counts()
  b <- with_test_seed(21, matrix(stats::runif(25 * 3, 0, 2), 25, 3))
  parts <- split_rows(x, c(9L, 30L))
  f <- file.path(shard_tempdir(), paste0("s", 1:3, ".rds"))
  for (i in 1:3) saveRDS(parts[[i]], f[i])
  backends <- list(memory = shards(parts), one = shards(list(x)), shard_files = write_shards(parts, shard_tempdir()),
                   rds = shards(f))
  priors <- list(both = list(terms = b, documents = c(0.5, 1, 2)), documents = list(documents = 1),
                 terms = list(terms = 0.3), one = 0.2)
  for (p in names(priors)) {
    ref <- plsa(x, 3, seed = 7, max_iter = 25, tol = 0, prior = priors[[p]])
    expect_identical(ref$method, "cd")
    # the objective (the negative log posterior) never rises and differs
    # from the divergence by the prior's penalty
    expect_true(all(diff(c(ref$initial, ref$objective)) <= 1e-12 * abs(ref$initial)), info = p)
    expect_gt(abs(utils::tail(ref$objective, 1) - ref$kl), 1e-6)
    for (bk in names(backends)) {
      fit <- plsa(backends[[bk]], 3, seed = 7, max_iter = 25, tol = 0, prior = priors[[p]])
      info <- paste(p, bk)
      expect_identical(fit$method, "cd", info = info)
      expect_equal(unname(fit$lambda), unname(ref$lambda), tolerance = 1e-10, info = info)
      expect_equal(fit$factors, ref$factors, tolerance = 1e-10, info = info)
      expect_equal(fit$objective, ref$objective, tolerance = 1e-10, info = info)
      expect_equal(fit$initial, ref$initial, tolerance = 1e-10, info = info)
      expect_identical(fit$iterations, ref$iterations, info = info)
      expect_equal(fit$kl, ref$kl, tolerance = 1e-10, info = info)
      expect_equal(fit$prior, ref$prior, info = info)
    }
  }
  # guided topics (seeds) are a prior too; files read 7 cells at a time
  s <- list(first = c("w1", "w2"), second = "w5")
  ref <- plsa(x, 3, seed = 2, max_iter = 20, tol = 0, seeds = s)
  op <- options(aspectr.shard_chunk = 7)
  on.exit(options(op), add = TRUE)
  for (bk in c("memory", "shard_files")) {
    fit <- plsa(backends[[bk]], 3, seed = 2, max_iter = 20, tol = 0, seeds = s)
    expect_equal(fit$factors, ref$factors, tolerance = 1e-10, info = bk)
    expect_equal(fit$objective, ref$objective, tolerance = 1e-10, info = bk)
  }
  # a converged fit stops at the same iteration
  ref <- plsa(x, 3, seed = 5, prior = 0.5)
  fit <- plsa(backends$memory, 3, seed = 5, prior = 0.5)
  expect_true(ref$converged)
  expect_identical(fit$iterations, ref$iterations)
  expect_equal(fit$factors, ref$factors, tolerance = 1e-10)
})

test_that("sharded MAP EM and coordinate descent on a PSOCK cluster equal the in-memory fit", {
  skip_on_cran()
  cl <- psock_cluster()
  on.exit(parallel::stopCluster(cl), add = TRUE)
  x <- shard_counts(45, 24, seed = 11)
  pr <- list(terms = 0.4, documents = c(1, 0.2, 0.5))
  ref <- plsa(x, 3, method = "em", seed = 3, max_iter = 15, tol = 0, prior = pr)
  dir <- shard_tempdir()
  parts <- split_rows(x, c(12L, 30L))
  f <- file.path(dir, paste0("p", 1:3, ".rds"))
  for (i in 1:3) saveRDS(parts[[i]], f[i])
  ref_cd <- plsa(x, 3, seed = 3, max_iter = 15, tol = 0, prior = pr)
  for (sh in list(shards(parts), shards(f))) {
    fit <- plsa(sh, 3, method = "em", seed = 3, max_iter = 15, tol = 0, prior = pr, cluster = cl)
    expect_same_map_fit(fit, ref)
    expect_equal(fit$kl, ref$kl, tolerance = 1e-10)
    # the default, coordinate descent
    fit <- plsa(sh, 3, seed = 3, max_iter = 15, tol = 0, prior = pr, cluster = cl)
    expect_same_map_fit(fit, ref_cd)
    expect_equal(fit$kl, ref_cd$kl, tolerance = 1e-10)
  }
})

test_that("priors and guided topics refuse what they cannot do, with classed errors", {
  x <- prior_counts()
  expect_error(plsa(x, 2, prior = -1), class = "aspectr_error_input_value")
  expect_error(plsa(x, 2, prior = list(terms = -1)), class = "aspectr_error_input_value")
  expect_error(plsa(x, 2, prior = list(documents = c(1, 2, 3))), class = "aspectr_error_input_value",
               regexp = "one per topic")
  expect_error(plsa(x, 2, prior = list(terms = matrix(1, 3, 3))), class = "aspectr_error_input_value",
               regexp = "9 x 2")
  expect_error(plsa(x, 2, prior = list(terms = NA_real_)), class = "aspectr_error_input_value")
  expect_error(plsa(x, 2, prior = list(term = 1)), class = "aspectr_error_input_type")
  expect_error(plsa(x, 2, prior = "a"), class = "aspectr_error_input_type")
  expect_error(plsa(x, 2, loss = "l2", prior = 1), class = "aspectr_error_input_argument", regexp = "kl")
  expect_error(plsa(x, 2, loss = "tsallis", prior = 1), class = "aspectr_error_input_argument")
  expect_error(plsa(x, 2, tempering = 0.8, prior = 1), class = "aspectr_error_input_argument", regexp = "tempering")
  expect_error(plsa(array(1, c(3, 3, 3)), 2, prior = 1), class = "aspectr_error_input_argument", regexp = "3-way")
  expect_error(plsa(x, 2, seeds = c("w1", "w2")), class = "aspectr_error_input_type")
  expect_error(plsa(x, 2, seeds = list(a = "w1", "w2")), class = "aspectr_error_input_type")
  expect_error(plsa(x, 2, seeds = list(a = "w1", a = "w2")), class = "aspectr_error_input_type")
  expect_error(plsa(x, 1, seeds = list(a = "w1", b = "w2")), class = "aspectr_error_input_value", regexp = "more than")
  expect_error(plsa(x, 2, seeds = list(a = "nope")), class = "aspectr_error_input_value", regexp = "nope")
  expect_warning(plsa(x, 2, seeds = list(a = c("w1", "nope")), max_iter = 5), class = "aspectr_warning_input")
  expect_error(plsa(x, 2, seeds = list(a = "w1"), seeds_weight = 0), class = "aspectr_error_input")
  y <- x; colnames(y) <- NULL
  expect_error(plsa(y, 2, seeds = list(a = "w1")), class = "aspectr_error_input_argument", regexp = "column names")
})

test_that("seeds_weight without seeds has no effect, and says so (aspectr_warning_unused_argument)", {
  set.seed(2)
  x <- matrix(rpois(20 * 8, 3), 20, 8, dimnames = list(NULL, paste0("w", 1:8)))
  w <- expect_warning(f <- plsa(x, 2, seeds_weight = 2, seed = 1, max_iter = 10),
                      class = "aspectr_warning_unused_argument")
  expect_s3_class(w, "aspectr_warning_input")
  expect_identical(w$arg, "seeds_weight")
  expect_match(conditionMessage(w), "`seeds_weight`.*no effect")
  expect_match(conditionMessage(w), "`seeds`")
  # the fit is the unguided one
  expect_equal(f$factors, plsa(x, 2, seed = 1, max_iter = 10)$factors)
  # (also where the fit is weighted)
  expect_warning(plsa(x, 2, seeds_weight = 2, weights = matrix(1, 20, 8), seed = 1, max_iter = 5),
                 class = "aspectr_warning_unused_argument")
  # with seeds, or left at its default: no warning
  expect_no_warning(plsa(x, 2, seeds = list(a = "w1"), seeds_weight = 2, seed = 1, max_iter = 5))
  expect_no_warning(plsa(x, 2, seed = 1, max_iter = 5))
})

# planted topics: 4 blocks of 10 terms; every document mostly one block
planted_corpus <- function(seed = 1, docs = 120) {
  set.seed(seed)
  V <- 40
  blocks <- split(seq_len(V), rep(1:4, each = 10))
  x <- matrix(0L, docs, V, dimnames = list(paste0("doc", seq_len(docs)), paste0("t", seq_len(V))))
  for (d in seq_len(docs)) {
    main <- ((d - 1) %% 4) + 1
    p <- rep(0.02, V)
    p[blocks[[main]]] <- p[blocks[[main]]] + c(rep(0.5, 3), rep(0.2, 7))
    x[d, ] <- stats::rmultinom(1, 60, p)
  }
  list(x = x, blocks = lapply(blocks, function(b) paste0("t", b)))
}

test_that("guided topics recover their planted terms and carry their names", {
  pc <- planted_corpus()
  x <- pc$x
  # seeds: one weak term of block 3 and one of block 1
  seeds <- list(sport = c("t24", "t25"), economy = c("t6", "t7"))
  for (m in c("em", "cd")) {
    fit <- plsa(x, 4, method = m, seed = 3, max_iter = 500, tol = 1e-9, seeds = seeds)
    expect_setequal(intersect(names(fit$lambda), c("sport", "economy")), c("sport", "economy"))
    top <- terms(fit, 10)
    expect_setequal(top[, "sport"], pc$blocks[[3]])
    expect_setequal(top[, "economy"], pc$blocks[[1]])
    td <- tidy(fit)
    expect_true(all(c("sport", "economy") %in% td$topic))
    expect_identical(colnames(fit$factors$documents), names(fit$lambda))
    expect_identical(fit$prior$guided, c("sport", "economy"))
    # the other topics are free: they take the other two blocks
    free <- setdiff(names(fit$lambda), c("sport", "economy"))
    got <- lapply(free, function(z) sort(top[, z]))
    expect_setequal(vapply(got, paste, "", collapse = " "),
                    vapply(pc$blocks[c(2, 4)], function(b) paste(sort(b), collapse = " "), ""))
  }
  # the same guided fit over shards (EM, and the default coordinate descent,
  # to convergence: past it, with tol = 0, an iteration changes the
  # objective by less than its rounding, and rounding decides whether the
  # iteration is kept, see ?plsa)
  for (m in c("em", "cd")) {
    fit <- plsa(x, 4, method = m, seed = 3, max_iter = 1000, tol = 1e-10, seeds = seeds)
    sh <- plsa(shards(split_rows(x, 50L)), 4, method = if (m == "em") m, seed = 3, max_iter = 1000, tol = 1e-10,
               seeds = seeds)
    expect_identical(sh$method, m)
    expect_true(sh$converged)
    expect_identical(sh$iterations, fit$iterations)
    expect_identical(names(sh$lambda), names(fit$lambda))
    expect_equal(sh$factors$terms, fit$factors$terms, tolerance = 1e-9)
  }
})

test_that("guided topics agree with seededlda on the same corpus", {
  skip_if_not_installed("seededlda")
  skip_if_not_installed("quanteda")
  pc <- planted_corpus(seed = 2, docs = 200)
  x <- pc$x
  seeds <- list(sport = c("t24", "t25"), economy = c("t6", "t7"))
  fit <- plsa(x, 4, seed = 1, max_iter = 500, tol = 1e-9, seeds = seeds)
  dfm <- quanteda::as.dfm(x)
  dict <- quanteda::dictionary(seeds)
  set.seed(1)
  sl <- seededlda::textmodel_seededlda(dfm, dict, residual = 2, max_iter = 500, verbose = FALSE)
  sl_terms <- seededlda::terms(sl, 10)
  ours <- terms(fit, 10)
  for (z in names(seeds)) {
    # both put the planted block of the topic's seeds on top
    expect_gte(length(intersect(ours[, z], sl_terms[, z])), 8)
  }
  # and assign documents alike
  main <- ((seq_len(nrow(x)) - 1) %% 4) + 1
  ours_doc <- colnames(fit$factors$documents)[max.col(predict(fit, x))]
  sl_doc <- as.character(seededlda::topics(sl))
  expect_gte(mean(ours_doc[main == 3] == "sport"), 0.9)
  expect_gte(mean(sl_doc[main == 3] == "sport"), 0.9)
})

test_that("the fold-in of a smoothed fit is MAP with its pseudo-counts", {
  x <- prior_counts(20, 12, seed = 11)
  a <- c(0.5, 2, 1)
  fit <- plsa(x, 3, method = "em", seed = 1, max_iter = 200, tol = 0, prior = list(terms = 0.1, documents = a))
  new <- x[1:4, ]
  new[2, ] <- rev(new[2, ])
  theta <- predict(fit, new, tol = 1e-14, max_iter = 10000)
  V <- fit$factors$terms
  al <- fit$prior$documents
  for (d in 1:4) {
    n <- new[d, ]
    p <- as.vector(V %*% theta[d, ])
    s <- colSums(V * (n / p))
    upd <- (theta[d, ] * s + al) / (sum(n) + sum(al))
    expect_equal(unname(upd), unname(theta[d, ]), tolerance = 1e-8)
  }
  # without a prior the fold-in is maximum likelihood: a different answer
  ml <- fit
  ml$prior <- NULL
  expect_gt(max(abs(predict(ml, new) - theta)), 1e-4)
})

test_that("document completion scores a topicmodels fit by the same formula", {
  skip_if_not_installed("topicmodels")
  skip_if_not_installed("slam")
  pc <- planted_corpus(seed = 4, docs = 40)
  x <- pc$x
  dtm <- slam::as.simple_triplet_matrix(x)
  lda <- topicmodels::LDA(dtm, k = 4, control = list(seed = 1, em = list(iter.max = 30)))
  set.seed(5)
  test <- planted_corpus(seed = 6, docs = 8)$x
  half <- matrix(stats::rbinom(length(test), test, 0.5), nrow(test), dimnames = dimnames(test))
  rest <- test - half
  got <- aspectr::perplexity(lda, rest, foldin = half)
  theta <- topicmodels::posterior(lda, newdata = slam::as.simple_triplet_matrix(half))$topics
  p <- theta %*% exp(lda@beta)
  want <- exp(-sum(rest * log(p)) / sum(rest))
  expect_equal(as.numeric(got), want, tolerance = 1e-10)
  expect_equal(attr(got, "tokens"), sum(rest))
  # the same definition for a pLSA fit: its own fold-in of the same half
  fit <- plsa(x, 4, seed = 1, prior = list(terms = 0.1, documents = 0.5))
  th <- predict(fit, half)
  q <- th %*% t(fit$factors$terms)
  expect_equal(as.numeric(aspectr::perplexity(fit, rest, foldin = half)),
               exp(-sum(rest * log(q)) / sum(rest)), tolerance = 1e-8)
  expect_error(aspectr::perplexity(lda, rest, foldin = half[1:3, ]), class = "aspectr_error_input_newdata")
})
