# The fit contract, family by family: the core fields, every generic, and
# the shared arguments. A new family is tested by one entry in
# helper-contract.R.

core_fields <- c("family", "k", "factors", "weights", "loss", "params", "objective", "value",
                 "initial", "iterations", "converged", "stopped", "run", "run_values", "seed",
                 "threads", "time", "call")

for (fam in names(contract_families)) {
  cf <- contract_families[[fam]]

  test_that(paste(fam, "results carry the core fields"), {
    fit <- cf$fit()
    expect_s3_class(fit, c(paste0("aspectr_", fam), "aspectr_fit"))
    expect_true(all(core_fields %in% names(fit)), info = paste(setdiff(core_fields, names(fit)), collapse = ", "))
    expect_identical(fit$family, fam)
    expect_true(is.list(fit$factors) && length(fit$factors) >= 1 && !is.null(names(fit$factors)))
    for (f in fit$factors) expect_equal(ncol(f), fit$k)
    expect_length(fit$weights, fit$k)
    expect_true(all(fit$weights >= 0))
    expect_false(fit$stopped)
    expect_equal(fit$value, fit$run_values[fit$run])
    if (length(fit$objective)) expect_equal(fit$value, fit$objective[length(fit$objective)])
    expect_true(is.list(fit$params))
  })

  test_that(paste(fam, "answers every generic"), {
    fit <- cf$fit()
    expect_output(print(fit))
    s <- summary(fit)
    expect_true(inherits(s, paste0("summary.aspectr_", fam)))
    expect_output(print(s))
    grDevices::pdf(NULL)
    expect_no_error(plot(fit))
    grDevices::dev.off()
    # fitted() is the model rebuilt from the core fields
    if (is.null(cf$rebuild)) {
      expect_error(fitted(fit), class = "aspectr_error_unsupported")
      expect_error(residuals(fit), class = "aspectr_error_unsupported")
    } else {
      fv <- fitted(fit)
      expect_equal(unname(as.array(fv)), unname(as.array(cf$rebuild(fit))), tolerance = 1e-8)
      res <- residuals(fit, cf$data)
      expect_equal(unname(as.array(res)), unname(as.array(cf$data)) - unname(as.array(fv)), tolerance = 1e-8)
    }
    # tidy and glance
    td <- tidy(fit)
    expect_s3_class(td, "tbl_df")
    expect_gt(nrow(td), 0)
    gl <- glance(fit)
    expect_s3_class(gl, "tbl_df")
    expect_equal(nrow(gl), 1)
    expect_equal(gl$k, fit$k)
    # nobs and the likelihood
    expect_true(is.numeric(nobs(fit)) && nobs(fit) > 0)
    if (cf$likelihood) {
      ll <- logLik(fit)
      expect_s3_class(ll, "logLik")
      expect_equal(AIC(fit), -2 * as.numeric(ll) + 2 * attr(ll, "df"))
      expect_equal(BIC(fit), -2 * as.numeric(ll) + log(attr(ll, "nobs")) * attr(ll, "df"))
    } else {
      expect_error(logLik(fit), class = "aspectr_error_unsupported")
    }
    # augment
    au <- if (cf$augment_data) augment(fit, data = cf$data) else augment(fit)
    expect_s3_class(au, "tbl_df")
    # predict on new data (or on the fit)
    p <- if (is.null(cf$newdata)) predict(fit) else predict(fit, cf$newdata)
    expect_true(is.numeric(p) && all(is.finite(p)))
  })
}

test_that("tidy, glance and augment hold what they say", {
  # pLSA: beta sums to 1 per topic; augment has one row per non-zero cell
  # and .topic the largest posterior
  fit <- contract_families$plsa$fit()
  td <- tidy(fit)
  expect_equal(as.vector(tapply(td$beta, td$topic, sum)), rep(1, fit$k))
  au <- augment(fit, data = cd$x)
  expect_equal(nrow(au), sum(cd$x > 0))
  i <- match(au$document, rownames(cd$x)); j <- match(au$term, colnames(cd$x))
  post <- sweep(fit$factors[[1]][i, ] * fit$factors[[2]][j, ], 2, fit$lambda, "*")
  expect_identical(au$.topic, max.col(post, ties.method = "first"))
  expect_equal(au$count, cd$x[cbind(i, j)])
  expect_equal(unname(au$.fitted), unname(fitted(fit)[cbind(i, j)]))
  # NMF under KL: the Poisson log-likelihood by hand
  fn <- contract_families$nmf$fit()
  v <- fitted(fn)
  expect_equal(as.numeric(logLik(fn)), sum(dpois(cd$x, v, log = TRUE)), tolerance = 1e-10)
  expect_equal(nobs(fn), length(cd$x))
  # NTF under KL likewise
  ft <- ntf(cd$y, 2, loss = "kl", seed = 1, max_iter = 50)
  expect_equal(as.numeric(logLik(ft)), sum(dpois(cd$y, fitted(ft), log = TRUE)), tolerance = 1e-10)
  expect_error(logLik(contract_families$ntf$fit()), class = "aspectr_error_unsupported")
  # the NTF fold-in of the fitted slices gives back their rows
  fk <- ntf(cd$y, 2, seed = 1, max_iter = 2000, tol = 1e-12)
  expect_equal(unname(predict(fk, cd$y)), unname(sweep(fk$factors[[1]], 2, fk$weights, "*")),
               tolerance = 1e-5)
  # LCA: its own tidiers
  fl <- contract_families$lca$fit()
  tl <- tidy(fl)
  expect_named(tl, c("variable", "level", "class", "probability", "std.error"))
  expect_equal(nrow(tl), fl$k * (3 + 2 + 3))
  sums <- tapply(tl$probability, list(tl$variable, tl$class), sum)
  expect_equal(as.vector(sums), rep(1, length(sums)))
  gl <- glance(fl)
  expect_equal(gl$logLik, fl$llik)
  expect_equal(gl$npar, as.integer(fl$npar))
  expect_equal(gl$nobs, 60)
  expect_equal(gl$df, 3 * 2 * 3 - fl$npar - 1)
  expect_equal(nobs(fl), 60)
  al <- augment(fl)
  expect_equal(nrow(al), 60)
  expect_identical(al$.class, unname(fl$predclass))
  expect_equal(unname(as.matrix(al[, c(".prob_1", ".prob_2")])), unname(fl$posterior))
  al2 <- augment(fl, data = cd$lc)
  expect_equal(al2$.class, al$.class)
  expect_identical(al2$a, cd$lc$a)
  # clustering families: membership rows sum to 1, .cluster is the argmax
  fs <- contract_families$symnmf$fit()
  ts <- tidy(fs)
  expect_equal(as.vector(tapply(ts$membership, ts$point, sum)), rep(1, nrow(cd$A)))
  as <- augment(fs)
  expect_identical(as$.cluster, unname(fs$cluster))
})

test_that("nmf predict() folds in new documents as rows by default", {
  fit <- nmf(cd$x, 2, seed = 1, max_iter = 500, tol = 1e-10, method = "anls")
  w_new <- predict(fit, cd$x[1:3, ])
  expect_equal(dim(w_new), c(3L, 2L))
  expect_equal(rownames(w_new), rownames(cd$x)[1:3])
  expect_equal(unname(w_new), unname(fit$W[1:3, ]), tolerance = 1e-5)
  h_new <- predict(fit, cd$x[, 1:2], margin = "columns")
  expect_equal(dim(h_new), c(2L, 2L))
})

test_that("every Frobenius objective is one half of the squared error", {
  f <- nmf(cd$x, 2, seed = 1, max_iter = 30)
  expect_equal(f$value, 0.5 * sum((cd$x - fitted(f))^2), tolerance = 1e-8)
  f <- ntf(cd$y, 2, seed = 1, max_iter = 30)
  expect_equal(f$value, 0.5 * sum((cd$y - fitted(f))^2), tolerance = 1e-8)
  f <- plsa(cd$x, 2, loss = "l2", seed = 1, max_iter = 30)
  expect_equal(f$value, 0.5 * sum((cd$x / sum(cd$x) - fitted(f, type = "probability"))^2), tolerance = 1e-8)
  f <- symnmf(cd$A, 2, method = "fpals", seed = 1, max_iter = 30)
  expect_equal(f$value, 0.5 * sum((cd$A - fitted(f))^2), tolerance = 1e-8)
  f <- sntf(cd$Y, 2, method = "unfold", seed = 1, max_iter = 30)
  expect_equal(f$value, 0.5 * sum((as.array(cd$Y) - fitted(f))^2), tolerance = 1e-8)
  f <- sntf(cd$Y, 2, method = "beta", cichocki_beta = 1, seed = 1, max_iter = 30)
  expect_equal(f$value, 0.5 * sum((as.array(cd$Y) - fitted(f))^2), tolerance = 1e-8)
})

test_that("renamed arguments still work, with a classed deprecation warning", {
  f_new <- symnmf(cd$A, 2, coupling = 2, seed = 1, max_iter = 20)
  expect_warning(f_old <- symnmf(cd$A, 2, lambda = 2, seed = 1, max_iter = 20),
                 class = "aspectr_warning_deprecated")
  expect_equal(f_old$H, f_new$H)
  expect_equal(f_new$coupling, 2)
  s_new <- sntf(cd$Y, 2, method = "beta", cichocki_beta = 0.5, seed = 1, max_iter = 20)
  expect_warning(s_old <- sntf(cd$Y, 2, method = "beta", beta = 0.5, seed = 1, max_iter = 20),
                 class = "aspectr_warning_deprecated")
  expect_equal(s_old$G, s_new$G)
  expect_error(symnmf(cd$A, 2, coupling = 1, lambda = 1), class = "aspectr_error_input_argument")
})

for (fam in names(contract_families)) {
  cf <- contract_families[[fam]]

  test_that(paste(fam, "calls back every iteration and stops exactly where asked"), {
    seen <- list()
    cb <- function(iteration, objective, factors) {
      seen[[length(seen) + 1]] <<- list(it = iteration, obj = objective, f = factors)
      TRUE
    }
    fit <- suppressMessages(cf$fit(callback = cb, max_iter = 6, tol = 0, nrun = 1))
    its <- vapply(seen, `[[`, numeric(1), "it")
    expect_equal(its, seq_len(fit$iterations))
    objs <- vapply(seen, `[[`, numeric(1), "obj")
    expect_equal(objs, fit$objective, tolerance = 1e-10)
    last <- seen[[length(seen)]]$f
    expect_identical(names(last), names(fit$factors))
    for (n in names(last)) expect_equal(dim(last[[n]]), dim(fit$factors[[n]]))
    # stop at iteration 3
    fit3 <- suppressMessages(cf$fit(callback = function(iteration, objective, factors) iteration < 3,
                                    max_iter = 50, tol = 0, nrun = 1))
    expect_equal(fit3$iterations, 3)
    expect_true(fit3$stopped)
    expect_false(fit3$converged)
    # an error in the callback is an R error
    expect_error(cf$fit(callback = function(...) stop("boom"), nrun = 1), "boom")
    expect_error(cf$fit(callback = "no"), class = "aspectr_error_input_argument")
  })

  test_that(paste(fam, "reports progress as messages in non-interactive sessions"), {
    withr_opts <- options(aspectr.progress_interval = 0)
    on.exit(options(withr_opts))
    msgs <- character()
    fit <- withCallingHandlers(cf$fit(verbose = TRUE, max_iter = 5, tol = 0, nrun = 1),
                               aspectr_message_progress = function(m) {
                                 msgs <<- c(msgs, conditionMessage(m))
                                 invokeRestart("muffleMessage")
                               })
    expect_gte(length(msgs), 2)
    expect_match(msgs[length(msgs)], paste0(fit$iterations, " iteration"))
    expect_match(msgs[length(msgs)], "not converged|converged")
  })

  test_that(paste(fam, "shows a cli progress bar with objective and ETA when interactive"), {
    # cli draws bars when it deems the session interactive (as messages in a
    # non-dynamic output); cli's own test helper makes every update due
    with_ticks <- get0("cli_with_ticks", asNamespace("cli"), mode = "function")
    skip_if(is.null(with_ticks), "this cli has no cli_with_ticks()")
    old <- options(rlang_interactive = TRUE, cli.dynamic = FALSE)
    on.exit(options(old))
    msgs <- character()
    # (lca reports between rounds of 25 iterations)
    with_ticks(withCallingHandlers(cf$fit(verbose = TRUE, max_iter = 30, tol = 0, nrun = 1),
                                   message = function(m) {
                                     msgs <<- c(msgs, conditionMessage(m))
                                     invokeRestart("muffleMessage")
                                   }))
    bar <- grep("ETA", msgs, value = TRUE)
    expect_gte(length(bar), 1)
    expect_match(bar[1], "obj [-0-9.e+]+")
    expect_match(bar[1], "[0-9]+/30")
  })
}

test_that("the callback's factors are the model on the user's scale", {
  last <- NULL
  fit <- nmf(cd$x * 1e6, 2, seed = 1, max_iter = 8, tol = 0,
             callback = function(i, o, f) { last <<- f; TRUE })
  expect_equal(last$W %*% t(last$H), fitted(fit), tolerance = 1e-10, ignore_attr = TRUE)
  fit <- ntf(cd$y, 2, seed = 1, max_iter = 8, tol = 0, callback = function(i, o, f) { last <<- f; TRUE })
  expect_equal(outer_model(last, rep(1, 2)), fitted(fit), tolerance = 1e-10, ignore_attr = TRUE)
  fit <- symnmf(cd$A * 1e3, 2, seed = 1, max_iter = 8, tol = 0, callback = function(i, o, f) { last <<- f; TRUE })
  expect_equal(tcrossprod(last$H), fitted(fit), tolerance = 1e-10, ignore_attr = TRUE)
})

test_that("a fit that runs out of iterations says so once", {
  n_msg <- 0
  withCallingHandlers(plsa(cd$x, 2, nrun = 3, max_iter = 2, seed = 1),
                      aspectr_message_not_converged = function(m) {
                        n_msg <<- n_msg + 1
                        invokeRestart("muffleMessage")
                      })
  expect_equal(n_msg, 1)
  expect_no_message(plsa(cd$x, 2, max_iter = 2, tol = 0, seed = 1), class = "aspectr_message_not_converged")
  expect_no_message(plsa(cd$x, 2, max_iter = 5000, tol = 1e-6, seed = 1), class = "aspectr_message_not_converged")
})

for (fam in names(contract_families)) {
  cf <- contract_families[[fam]]
  test_that(paste(fam, "continues from an earlier fit and never gets worse"), {
    fit1 <- suppressMessages(cf$fit(max_iter = 10, nrun = 1))
    fit2 <- suppressMessages(cf$fit(init = fit1, max_iter = 10, nrun = 1))
    expect_lte(fit2$value, fit1$value * (1 + 1e-12) + 1e-300)
    # the warm start begins where the first fit ended (symnmf restarts its
    # W at H, sntf rescales its start to the total of x: no higher)
    expect_equal(fit2$initial, fit1$value, tolerance = 1e-3)
    expect_lte(fit2$initial, fit1$value * (1 + 1e-9))
    # a fit of another family or rank is refused
    other <- if (fam == "plsa") contract_families$nmf$fit() else contract_families$plsa$fit()
    expect_error(cf$fit(init = other), class = "aspectr_error_input_argument")
    expect_error(cf$fit(init = fit1, k = 3), class = "aspectr_error_input_argument", regexp = "k = 3")
  })
}

for (fam in names(contract_families)) {
  cf <- contract_families[[fam]]
  test_that(paste(fam, "runs staged restarts: many short starts, the best continued"), {
    calls <- 0
    fit <- suppressMessages(cf$fit(nrun = 3, short_iter = 2, short_keep = 1, max_iter = 10, tol = 0,
                                   callback = function(...) { calls <<- calls + 1; TRUE }))
    # three starts of 2 iterations, one continued for 8 more
    expect_equal(calls, 3 * 2 + 8)
    expect_equal(fit$iterations, 10)
    expect_length(fit$run_values, 3)
  })
}

test_that("a staged start continues exactly as if uninterrupted (EM)", {
  full <- plsa(cd$x, 2, nrun = 3, max_iter = 30, tol = 0, seed = 7)
  staged <- plsa(cd$x, 2, nrun = 3, max_iter = 30, tol = 0, seed = 7, short_iter = 5, short_keep = 1)
  expect_equal(staged$value, full$run_values[staged$run], tolerance = 1e-12)
  expect_length(staged$objective, 30)
  expect_error(plsa(cd$x, 2, short_iter = -1), class = "aspectr_error_input_argument")
  expect_error(plsa(cd$x, 2, short_keep = 0), class = "aspectr_error_input_argument")
})

test_that("lca() with a callback stages its starts exactly as without one", {
  binned <- data.frame(lapply(iris[1:4], cut, 3))
  a <- lca(binned, 3, nrun = 8, seed = 2, short_iter = 20, short_keep = 2)
  n <- 0
  b <- lca(binned, 3, nrun = 8, seed = 2, short_iter = 20, short_keep = 2,
           callback = function(i, o, f) { n <<- n + 1; TRUE })
  expect_identical(b$run_iterations, a$run_iterations)
  expect_equal(n, sum(a$run_iterations))
  expect_equal(b$posterior, a$posterior, tolerance = 1e-12)
  expect_equal(b$run_values, a$run_values, tolerance = 1e-10)
})

test_that("nmf fit and predict share one loss table; an unknown loss is an error", {
  fit <- nmf(cd$x, 2, loss = "kl", seed = 1, max_iter = 300, tol = 1e-10)
  expect_equal(unname(predict(fit, cd$x[1:3, ])), unname(fit$W[1:3, ]), tolerance = 1e-3)
  bad <- fit
  bad$loss <- "hellinger"
  expect_error(predict(bad, cd$x[1:3, ]), "hellinger")
})

test_that("input conversion is an S3 generic other packages can extend", {
  expect_true(is.function(as_aspect_data))
  d <- as_aspect_data(cd$x)
  expect_equal(d$dims, dim(cd$x))
  expect_equal(sum(d$val), sum(cd$x))
  expect_identical(as_aspect_data(Matrix::Matrix(cd$x, sparse = TRUE))$val, d$val)
  # a class of another package: a method is enough to fit it
  obj <- structure(list(m = cd$x), class = "my_counts")
  registerS3method("as_aspect_data", "my_counts",
                   function(x, ...) as_aspect_data(x$m, ...), envir = asNamespace("aspectr"))
  expect_equal(plsa(obj, 2, seed = 1, max_iter = 20)$value, plsa(cd$x, 2, seed = 1, max_iter = 20)$value)
  expect_error(as_aspect_data(data.frame(a = 1)), class = "aspectr_error_input_type")
  expect_error(as_aspect_data(list(1)), class = "aspectr_error_input_type")
})

test_that("terms() lists the top features of NMF components", {
  fit <- nmf(cd$x, 2, seed = 1, max_iter = 50)
  tt <- terms(fit, 3)
  expect_equal(dim(tt), c(3L, 2L))
  expect_identical(tt[, 1], colnames(cd$x)[order(fit$H[1, ], decreasing = TRUE)[1:3]])
  expect_identical(terms(fit, 2, margin = "rows")[, 2], rownames(cd$x)[order(fit$W[, 2], decreasing = TRUE)[1:2]])
  expect_error(terms(fit, 0), class = "aspectr_error_input_argument")
})
