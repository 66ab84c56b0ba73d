lca_values <- function() expand_patterns(polca_values_patterns)
lca_carcinoma <- function() expand_patterns(polca_carcinoma_patterns)

test_that("lca() reproduces poLCA's published log-likelihoods (values, carcinoma)", {
  v <- lca_values()
  ref_v <- c(-543.6498, -504.4677, -503.3011)
  for (k in 1:3) {
    fit <- lca(v, k, nrun = 10, seed = 1, tol = 1e-10, max_iter = 5000)
    expect_lt(abs(fit$llik - ref_v[k]), 1e-4)
    expect_equal(round(fit$llik, 4), ref_v[k])
  }
  cc <- lca_carcinoma()
  ref_c <- c(-317.2568, -293.7050, -289.2858)
  for (k in 2:4) {
    fit <- lca(cc, k, nrun = 20, seed = 1, tol = 1e-10, max_iter = 5000)
    expect_equal(round(fit$llik, 4), ref_c[k - 1])
    expect_identical(fit$npar, (k - 1) + k * 7)
    expect_equal(fit$BIC, -2 * fit$llik + log(118) * fit$npar)
  }
})

test_that("lca() output has poLCA's shape and constraints", {
  fit <- lca(lca_carcinoma(), 3, nrun = 5, seed = 2)
  expect_named(fit$probs, LETTERS[1:7])
  for (p in fit$probs) {
    expect_equal(dim(p), c(3L, 2L))
    expect_equal(unname(rowSums(p)), rep(1, 3), tolerance = 1e-12)
  }
  expect_equal(sum(fit$P), 1, tolerance = 1e-12)
  expect_equal(dim(fit$posterior), c(118L, 3L))
  expect_equal(unname(rowSums(fit$posterior)), rep(1, 118), tolerance = 1e-12)
  expect_identical(fit$predclass, max.col(fit$posterior, ties.method = "first"))
  expect_identical(predict(fit, lca_carcinoma(), type = "class"), fit$predclass)
  expect_equal(as.numeric(logLik(fit)), fit$llik)
  expect_gte(fit$Gsq, 0)
})

test_that("missing responses: lca() agrees with a plain-R MAR EM", {
  set.seed(11)
  n <- 150
  z <- sample(1:2, n, TRUE, prob = c(0.6, 0.4))
  d <- data.frame(a = ifelse(runif(n) < c(0.8, 0.2)[z], 1, 2),
                  b = ifelse(runif(n) < c(0.7, 0.3)[z], 1, 2),
                  c = sample(1:3, n, TRUE),
                  e = ifelse(runif(n) < c(0.9, 0.1)[z], 1, 2))
  d$b[sample(n, 20)] <- NA
  d$c[sample(n, 15)] <- NA
  d$a[1] <- d$b[1] <- d$c[1] <- d$e[1] <- NA   # all missing: dropped
  fit <- lca(d, 2, nrun = 1, seed = 4, tol = 0, max_iter = 30, method = "em")
  expect_equal(fit$N, n - 1)
  codes <- as.matrix(d[-1, ])
  set.seed(4)
  init <- aspectr:::random_start(c(2L, 2L, 3L, 2L), 2)
  ref <- ref_lca_em(codes, init$lambda, init$factors, 30)
  expect_equal(fit$llik, ref$llik, tolerance = 1e-10)
  o <- order(ref$lambda, decreasing = TRUE)
  expect_equal(unname(fit$P), ref$lambda[o], tolerance = 1e-10)
  expect_equal(unname(fit$probs$c), unname(t(ref$probs[[3]])[o, ]), tolerance = 1e-10)
  # na.rm = TRUE uses complete observations only
  cc <- lca(d, 2, seed = 4, na.rm = TRUE, nrun = 3)
  expect_equal(cc$N, sum(stats::complete.cases(d)))
})

test_that("lca_supervised() is the closed form within classes (naive Bayes)", {
  binned <- data.frame(lapply(iris[1:4], cut, 4))
  nb <- lca_supervised(binned, iris$Species)
  expect_equal(unname(nb$P), rep(1 / 3, 3))
  for (j in 1:4) {
    direct <- prop.table(table(iris$Species, binned[[j]]), 1)
    expect_equal(unname(nb$probs[[j]]), unname(unclass(direct)), tolerance = 1e-14)
  }
  # its likelihood is the best any model with those classes can do: an
  # unsupervised fit started anywhere lands at or above it
  un <- lca(binned, 3, nrun = 5, seed = 1)
  expect_gte(un$llik, nb$llik - 1e-8)
  expect_gt(mean(levels(iris$Species)[nb$predclass] == iris$Species), 0.8)
})

test_that("bad LCA input gives classed errors", {
  v <- lca_values()
  expect_error(lca(v, 0), class = "aspectr_error_input_argument")
  expect_error(lca(v, 17), class = "aspectr_error_input_argument")
  one <- v; one$A <- 1
  expect_error(lca(one, 2), class = "aspectr_error_input_value")
  expect_error(lca(v[, 1, drop = FALSE], 2), class = "aspectr_error_input_type")
  expect_error(lca(as.matrix(v), 2), class = "aspectr_error_input_type")
  cont <- v; cont$A <- cont$A + 0.5
  expect_error(lca(cont, 2), class = "aspectr_error_input_type")
  fit <- lca(v, 2, seed = 1, nrun = 2)
  nd <- v[1:3, ]; nd$A[1] <- 3
  expect_error(predict(fit, nd), class = "aspectr_error_input_newdata")
  expect_error(predict(fit, v[, -1]), class = "aspectr_error_input_newdata")
  expect_snapshot(lca(one, 2), error = TRUE)
  expect_snapshot(print(fit))
})

# Five three-level items of 120 observations, and the same with missing
# responses.
lca_items_5 <- function() {
  set.seed(21)
  n <- 120
  d <- as.data.frame(lapply(1:5, function(j) sample(1:3, n, TRUE)))
  dm <- d
  dm[[2]][sample(n, 10)] <- NA
  dm[[1]][sample(n, 8)] <- NA
  list(d = d, dm = dm)
}

test_that("the EM kernel for many items matches a plain-R EM for every k path", {
  # k = 3, 5 (padded to 4, 8), 9 (padded to 12) and 17 (generic), with and
  # without missing responses
  items <- lca_items_5()
  d <- items$d
  dm <- items$dm
  for (k in c(3, 5, 9, 17)) {
    for (x in list(d, dm)) {
      fit <- quiet_unidentified(lca(x, k, method = "em", nrun = 1, seed = 5, tol = 0, max_iter = 15))
      set.seed(5)
      init <- aspectr:::random_start(rep(3L, 5), k)
      ref <- ref_lca_em(as.matrix(x), init$lambda, init$factors, 15)
      expect_equal(fit$llik, ref$llik, tolerance = 1e-10)
      expect_equal(sort(unname(fit$P)), sort(ref$lambda), tolerance = 1e-10)
    }
  }
})

test_that("staged restarts reach the reference log-likelihoods of full restarts", {
  cc <- lca_carcinoma()
  v <- lca_values()
  ref <- list(list(cc, 2, -317.2568), list(cc, 3, -293.7050), list(cc, 4, -289.2858),
              list(v, 2, -504.4677), list(v, 3, -503.3011))
  for (r in ref) {
    staged <- lca(r[[1]], r[[2]], nrun = 20, seed = 1, tol = 1e-10, max_iter = 5000)
    full <- lca(r[[1]], r[[2]], nrun = 20, seed = 1, tol = 1e-10, max_iter = 5000, short_iter = 0)
    expect_equal(round(staged$llik, 4), r[[3]])
    expect_equal(round(full$llik, 4), r[[3]])
    expect_lte(sum(staged$run_iterations), sum(full$run_iterations))
  }
})

test_that("staging only decides which starts continue, not their path", {
  cc <- lca_carcinoma()
  staged <- lca(cc, 3, nrun = 6, seed = 3, short_iter = 10, tol = 1e-9)
  full <- lca(cc, 3, nrun = 6, seed = 3, short_iter = 0, tol = 1e-9)
  b <- staged$run
  # the continued start is where it would be without staging
  expect_identical(staged$run_values[b], full$run_values[b])
  expect_identical(staged$run_iterations[b], full$run_iterations[b])
  # the others stopped after the short runs (or converged before)
  others <- staged$run_iterations[-b]
  expect_true(all(others <= 10))
  expect_true(any(others == 10))
  # short_keep = nrun is full restarts
  all_kept <- lca(cc, 3, nrun = 6, seed = 3, short_iter = 10, short_keep = 6, tol = 1e-9)
  expect_identical(all_kept$run_values, full$run_values)
  # a continued start that does not converge within max_iter (tol = 0):
  # every start runs on to max_iter
  slow <- lca(cc, 3, nrun = 4, seed = 3, short_iter = 10, tol = 0, max_iter = 40)
  expect_identical(slow$run_iterations, rep(40L, 4))
})

test_that("lca(): same seed same result; threads over starts equal serial", {
  v <- lca_values()
  strip <- function(f) f[setdiff(names(f), c("time", "call", "threads"))]
  a <- lca(v, 3, nrun = 6, seed = 9)
  b <- lca(v, 3, nrun = 6, seed = 9)
  expect_identical(strip(a), strip(b))
  for (s in c(0, 20)) {
    one <- lca(v, 3, nrun = 6, seed = 9, threads = 1, short_iter = s)
    two <- lca(v, 3, nrun = 6, seed = 9, threads = 2, short_iter = s)
    expect_identical(strip(one), strip(two))
  }
})

test_that("lca()'s batched starts are random_start()'s numbers", {
  for (dims in list(c(2L, 2L, 3L), c(4L, 2L, 5L, 3L, 2L))) {
    for (k in c(2L, 3L)) {
      a <- aspectr:::with_seed(7, lapply(1:4, function(i) aspectr:::random_start(dims, k)))
      b <- aspectr:::with_seed(7, aspectr:::random_starts(dims, k, 4))
      expect_identical(b, a)
    }
  }
})

test_that("lca()'s data preparation equals a plain-R reference on random data frames", {
  n_cases <- prop_n_cases(60)
  set.seed(20261126)
  for (case in seq_len(n_cases)) {
    n <- sample(c(1, 3, 40, 300), 1)
    J <- sample(2:6, 1)
    d <- as.data.frame(lapply(seq_len(J), function(j) {
      L <- sample(2:6, 1)
      x <- sample(seq_len(L), n, TRUE)
      v <- switch(sample(6, 1), x, as.numeric(x) * 2 - 1, factor(letters[x], levels = rev(letters[1:6])),
                  letters[x], x - 4L, factor(x, levels = 1:9))
      if (runif(1) < 0.6) v[sample(n, max(1, n %/% 4))] <- NA
      v
    }), stringsAsFactors = FALSE)
    names(d) <- paste0("item", seq_len(J))
    for (na.rm in c(FALSE, TRUE)) {
      ref <- ref_lca_prepare(d, na.rm)
      got <- tryCatch(aspectr:::lca_prepare(d, na.rm), aspectr_error_input = function(e) NULL)
      if (length(ref$rows) == 0 || any(ref$dims < 2)) {
        expect_null(got)
        next
      }
      expect_identical(unname(got$data$idx), ref$idx)
      expect_identical(got$data$val, ref$val)
      expect_identical(got$data$dims, ref$dims)
      expect_identical(got$levels, ref$levels)
      expect_identical(got$codes, ref$codes)
      expect_identical(got$rows, ref$rows)
      expect_identical(got$row_pattern, ref$row_pattern)
    }
  }
})

test_that("restart controls give classed errors", {
  v <- lca_values()
  expect_error(lca(v, 2, short_iter = -1), class = "aspectr_error_input_argument")
  expect_error(lca(v, 2, short_iter = 1.5), class = "aspectr_error_input_argument")
  expect_error(lca(v, 2, short_keep = 0), class = "aspectr_error_input_argument")
  expect_error(lca(v, 2, short_keep = NA), class = "aspectr_error_input_argument")
})

test_that("se = FALSE skips the standard errors and changes nothing else", {
  skip_if_not_installed("poLCA")
  data("carcinoma", package = "poLCA", envir = environment())
  a <- lca(carcinoma, 3, seed = 1, threads = 1)
  b <- lca(carcinoma, 3, seed = 1, threads = 1, se = FALSE)
  expect_false(is.null(a[["se"]]))
  expect_null(b[["se"]])
  expect_identical(b$probs, a$probs)
  expect_identical(b$llik, a$llik)
  expect_identical(b$posterior, a$posterior)
  f <- lca(cbind(A, B, C, D, E, F, G) ~ 1, carcinoma, k = 3, seed = 1, threads = 1, se = FALSE)
  expect_null(f[["se"]])
  expect_identical(f$llik, a$llik)
})

test_that("coordinate descent matches a plain-R reference and is monotone", {
  set.seed(21)
  n <- 120
  d <- as.data.frame(lapply(1:5, function(j) sample(1:3, n, TRUE)))
  for (k in c(2, 3)) {
    fit <- lca(d, k, nrun = 1, seed = 5, tol = 0, max_iter = 6, se = FALSE, method = "cd")
    expect_identical(fit$method, "cd")
    expect_identical(fit$params$method, "cd")
    set.seed(5)
    init <- aspectr:::random_start(rep(3L, 5), k)
    ref <- ref_plsa_cd(unclass(table(d)), init, 6)
    expect_equal(fit$objective, ref$objective, tolerance = 1e-10)
    expect_equal(sort(unname(fit$P)), sort(ref$lambda), tolerance = 1e-10)
  }
  # several starts, threads over them, staged: monotone, the same as serial
  a <- lca(d, 3, nrun = 6, seed = 2, threads = 1, short_iter = 5, se = FALSE, method = "cd")
  b <- lca(d, 3, nrun = 6, seed = 2, threads = 2, short_iter = 5, se = FALSE, method = "cd")
  expect_identical(a$probs, b$probs)
  expect_identical(a$run_values, b$run_values)
  expect_true(all(diff(c(a$initial, a$objective)) <= 1e-13))
  # missing responses: coordinate descent refused, SQUAREM the default
  dm <- d
  dm[[1]][1:5] <- NA
  expect_identical(lca(dm, 2, nrun = 1, seed = 1, max_iter = 5, se = FALSE)$method, "squarem")
  expect_error(lca(dm, 2, method = "cd"), class = "aspectr_error_input_argument")
  expect_identical(lca(dm, 2, nrun = 1, seed = 1, max_iter = 5, na.rm = TRUE, se = FALSE,
                       method = "cd")$method, "cd")
  d9 <- as.data.frame(lapply(1:9, function(j) sample(1:2, n, TRUE)))
  expect_identical(lca(d9, 2, nrun = 1, seed = 1, max_iter = 5, se = FALSE)$method, "squarem")
  expect_identical(lca(d9, 2, nrun = 1, seed = 1, max_iter = 5, se = FALSE, method = "cd")$method, "cd")
  expect_error(lca(d, 2, method = "newton"), class = "aspectr_error_input_argument")
})

test_that("SQUAREM (the default) matches a plain-R reference, with and without missing responses", {
  items <- lca_items_5()
  d <- items$d
  dm <- items$dm
  for (k in c(2, 3)) {
    for (x in list(d, dm)) {
      fit <- lca(x, k, nrun = 1, seed = 5, tol = 0, max_iter = 8, se = FALSE)
      expect_identical(fit$method, "squarem")
      set.seed(5)
      init <- aspectr:::random_start(rep(3L, 5), k)
      ref <- ref_lca_squarem(as.matrix(x), init$lambda, init$factors, 8)
      expect_equal(fit$llik, ref$llik, tolerance = 1e-10)
      expect_equal(sort(unname(fit$P)), sort(ref$lambda), tolerance = 1e-10)
      # the extrapolation moved it past plain EM's 8 iterations
      em <- lca(x, k, nrun = 1, seed = 5, tol = 0, max_iter = 8, se = FALSE, method = "em")
      expect_gt(fit$llik, em$llik)
      # constraints
      expect_equal(sum(fit$P), 1, tolerance = 1e-12)
      for (p in fit$probs) expect_equal(unname(rowSums(p)), rep(1, k), tolerance = 1e-12)
    }
  }
  # several starts, threads over them, staged: monotone, the same as serial,
  # the same with a callback (the starts then run one by one from R)
  a <- lca(dm, 3, nrun = 6, seed = 2, threads = 1, short_iter = 5, se = FALSE)
  b <- lca(dm, 3, nrun = 6, seed = 2, threads = 2, short_iter = 5, se = FALSE)
  cb <- lca(dm, 3, nrun = 6, seed = 2, threads = 1, short_iter = 5, se = FALSE,
            callback = function(...) TRUE)
  expect_identical(a$probs, b$probs)
  expect_identical(a$run_values, b$run_values)
  expect_equal(cb$run_values, a$run_values, tolerance = 1e-12)
  expect_identical(cb$run_iterations, a$run_iterations)
  expect_true(all(diff(c(a$initial, a$objective)) <= 1e-13))
})

test_that("SQUAREM, coordinate descent and EM reach poLCA's optimum; SQUAREM's is a fixed point of EM (values, k = 3)", {
  skip_if_not_installed("poLCA")
  data("values", package = "poLCA", envir = environment())
  sq <- lca(values, 3, nrun = 10, seed = 1, tol = 1e-11, max_iter = 1000, se = FALSE)
  cd <- lca(values, 3, nrun = 10, seed = 1, tol = 1e-11, max_iter = 1000, se = FALSE, method = "cd")
  em <- suppressMessages(lca(values, 3, nrun = 10, seed = 1, tol = 1e-11, max_iter = 1000, se = FALSE,
                             method = "em"))
  for (f in list(sq, cd)) {
    expect_true(f$converged)
    expect_equal(f$llik, -503.3011, tolerance = 1e-7)  # poLCA's published best
    expect_gte(f$llik, em$llik - 1e-9)
  }
  # where the likelihood is flat, EM crawls: SQUAREM needs far fewer
  # iterations of its own (each at most three EM steps)
  expect_lt(3 * sq$iterations, em$iterations)
  # one more EM step from SQUAREM's optimum moves nothing
  step <- lca(values, 3, nrun = 1, init = sq, method = "em", max_iter = 1, tol = 0, se = FALSE)
  expect_equal(step$llik, sq$llik, tolerance = 1e-9)
  expect_equal(unname(step$P), unname(sq$P), tolerance = 1e-5)
})

test_that("Gsq and Chisq on tiny data: NA with a classed warning when undefined, else poLCA's formulas", {
  # N = 3 and no observation with every response: no complete pattern
  d <- data.frame(A = c(2, 3, NA), B = c(NA, 1, 2), C = c(1, NA, 3))
  expect_warning(f <- lca(d, 1, seed = 1), "no observation has every response", class = "aspectr_warning_numeric")
  expect_identical(c(f$Gsq, f$Chisq), c(NA_real_, NA_real_))
  expect_true(is.finite(f$llik))
  expect_warning(g <- lca(cbind(A, B, C) ~ 1, d, 1, seed = 1), class = "aspectr_warning_numeric")
  expect_identical(c(g$Gsq, g$Chisq), c(NA_real_, NA_real_))
  # N = 3 with two complete rows: finite, and the plain-R formulas over the
  # complete patterns (poLCA's definition)
  d2 <- data.frame(A = c(2, 3, NA), B = c(2, 1, 2), C = c(1, 4, 3))
  for (k in 1:2) {
    # (k = 2: 9 free parameters for 3 observations, which lca() says)
    if (k == 1) expect_no_warning(f <- lca(d2, k, seed = 1, nrun = 3))
    else expect_warning(f <- lca(d2, k, seed = 1, nrun = 3), class = "aspectr_warning_identification")
    comp <- stats::complete.cases(d2)
    cell <- vapply(which(comp), function(i) {
      sum(f$P * Reduce(`*`, lapply(names(d2), function(v) f$probs[[v]][, as.character(d2[i, v])])))
    }, numeric(1))
    obs <- rep(1, sum(comp)); e <- sum(obs) * cell
    expect_equal(f$Gsq, 2 * sum(obs * log(obs / e)), tolerance = 1e-10)
    expect_equal(f$Chisq, sum((obs - e)^2 / e) + sum(obs) - sum(e), tolerance = 1e-10)
  }
})

test_that("Gsq of patterns whose probability underflows is computed in logs; Chisq beyond the doubles is NA with a warning", {
  set.seed(1)
  J <- 1000  # (1/2)^1000-size pattern probabilities: below the doubles
  d <- as.data.frame(matrix(sample(1:2, 3 * J, TRUE), 3))
  d[1, ] <- 1; d[2, ] <- 2
  expect_warning(f <- lca(d, 1, seed = 1, se = FALSE), "beyond the range of doubles",
                 class = "aspectr_warning_numeric")
  expect_identical(f$Chisq, NA_real_)
  # k = 1: P(pattern) is the product of the marginal frequencies
  lp <- vapply(1:3, function(i) sum(vapply(seq_len(J), function(j) log(mean(d[[j]] == d[i, j])), numeric(1))),
               numeric(1))
  expect_true(any(lp < log(.Machine$double.xmin)))
  expect_equal(f$Gsq, 2 * sum(-log(3) - lp), tolerance = 1e-10)
})

test_that("predict() of no observations gives none of each type, without R's warning", {
  set.seed(5)
  d <- data.frame(a = sample(1:2, 60, TRUE), b = sample(1:3, 60, TRUE), c = sample(1:2, 60, TRUE))
  fit <- suppressMessages(lca(d, 2, seed = 1, max_iter = 50))
  # (R warned of a zero-extent matrix made from the dimensions and weights)
  expect_no_warning(post <- predict(fit, newdata = d[0, ]))
  expect_identical(dim(post), c(0L, 2L))
  expect_identical(dim(predict(fit, newdata = d[1:2, ])), c(2L, 2L))
  expect_no_warning(cls <- predict(fit, newdata = d[0, ], type = "class"))
  expect_length(cls, 0)
  expect_no_warning(fr <- predict(fit, newdata = d[0, ], type = "frequency"))
  expect_length(fr, 0)
})

test_that("lca() names an unnamed column alone, and refuses matrix columns by name", {
  set.seed(2)
  d <- as.data.frame(lapply(1:4, function(j) sample(c("yes", "no"), 100, TRUE)))
  names(d) <- c("item1", "", "item3", "V2")
  f <- lca(d, 2, seed = 1)
  expect_identical(names(f$probs), c("item1", "V2.1", "item3", "V2"))
  # no names at all: V1, V2, ...
  d0 <- d
  names(d0) <- rep("", 4)
  expect_identical(names(lca(d0, 2, seed = 1)$probs), paste0("V", 1:4))
  expect_identical(aspectr:::lca_var_names(NULL, 3), paste0("V", 1:3))
  dm <- d
  names(dm) <- paste0("item", 1:4)
  dm$m <- matrix(0:1, nrow(dm), 2)
  expect_error(lca(dm, 2), class = "aspectr_error_input_type", regexp = "`m`")
})

test_that("lca() of a model that fits the table exactly stops as converged", {
  set.seed(31)
  df <- data.frame(a = factor(sample(1:2, 200, TRUE)), b = factor(sample(1:3, 200, TRUE)))
  for (m in c("squarem", "em", "cd")) {
    # (more parameters than the table identifies: it is fitted exactly)
    fit <- suppressWarnings(lca(df, 2, seed = 1, method = m))
    expect_true(fit$converged)
    expect_lt(fit$iterations, 1000)
    expect_lt(abs(fit$Gsq), 1e-8)
  }
  # a model that does not fit exactly still runs to its tolerance
  df$c <- factor(sample(1:2, 200, TRUE))
  fit <- lca(df, 2, seed = 1, nrun = 1, tol = 1e-10, max_iter = 5000)
  expect_gt(fit$Gsq, 1e-3)
  tr <- fit$objective
  n <- length(tr)
  expect_lt(abs(tr[n - 1] - tr[n]), 1e-10 * abs(tr[n]) + 1e-300)
})
