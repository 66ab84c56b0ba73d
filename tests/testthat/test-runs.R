# Picking the best run and the starts that continue: runs that agree to
# rounding are ties, the first of them winning.

test_that("best_run() takes the first of the runs equal to 10 significant digits", {
  expect_identical(aspectr:::best_run(c(2, 1, 3)), 2L)
  # (the second is smaller only in the 15th digit: a tie)
  expect_identical(aspectr:::best_run(c(0.82543768467038514, 0.82543768467037804)), 1L)
  expect_identical(aspectr:::best_run(c(126.79620950254696, 126.79620950254684)), 1L)
  # a difference in the 9th digit is not a tie
  expect_identical(aspectr:::best_run(c(1.00000001, 1)), 2L)
  expect_identical(aspectr:::best_run(c(-5, -5 - 1e-13, -6)), 3L)
  expect_identical(aspectr:::best_run(c(0, 1e-300)), 1L)
  expect_warning(b <- aspectr:::best_run(c(NaN, 3, 3 - 1e-14, Inf)), class = "aspectr_warning_numeric")
  expect_identical(b, 2L)
  expect_error(aspectr:::best_run(c(NaN, Inf)), class = "aspectr_error_numeric")
  expect_identical(aspectr:::run_order(c(3, 1 + 1e-14, NA, 1, 2)), c(2L, 4L, 5L, 1L, 3L))
})

test_that("starts that reach one optimum give the same fit in memory and in shards", {
  # k = 1: every start reaches the same optimum, and the runs' values differ
  # in rounding only, in another way in shards than in memory (the data and
  # starts of case 8 of the random grid, where the best run of memory and
  # of shards differed before runs were ranked to 10 digits, and the
  # safeguards of KL coordinate descent and of the beta-divergence updates
  # decided by rounding at the objective's floor before they allowed for
  # it: factors 1e-10 and 1e-8 apart)
  case <- grid_random_case(8)
  a <- case$fit_args
  fits <- function(f, x, ...) f(x, 1, nrun = 2, seed = a$seed, max_iter = a$max_iter, tol = 0, ...)
  mask <- grid_options(dim(case$data$matrix$x))$mask$mask
  for (args in list(list(plsa, "matrix", prior = 0.1), list(ntf, "tensor", loss = "frobenius", method = "hals"),
                    list(nmf, "matrix", loss = "beta", beta = 1.5, method = "mu", mask = mask))) {
    d <- case$data[[args[[2]]]]
    m <- suppressWarnings(do.call(fits, c(list(args[[1]], d$x), args[-(1:2)])))
    s <- suppressWarnings(do.call(fits, c(list(args[[1]], shards(d$parts)), args[-(1:2)])))
    expect_identical(s$run, m$run)
    expect_equal(s$initial, m$initial, tolerance = 1e-10)
    expect_equal(s$objective, m$objective, tolerance = 1e-10)
    expect_equal(unname(lapply(s$factors, as.matrix)), unname(lapply(m$factors, as.matrix)), tolerance = 1e-10)
  }
})

test_that("a fit in files keeps the files of the run it reports, whatever the scale of its values", {
  # runs whose values tie to 10 digits before the fit's finish_run() scales
  # them, but not after: the run that wins is the one ranked on the
  # finished values, and its files must not have been discarded
  vals <- c(1.00000000049, 1.00000000001)
  ctl <- list(nrun = 2, max_iter = 5, tol = 0)
  stg <- list(short_iter = 0, short_keep = 2)
  discarded <- integer()
  out <- aspectr:::fit_pipeline(as.list(1:2), function(init, iters) list(id = init, objective = vals[init]),
                                function(r) r, NULL, ctl, stg, "test",
                                finish_run = function(r) { r$objective <- r$objective * 3.7; r },
                                discard = function(r) discarded <<- c(discarded, r$id))
  expect_identical(out$best, 2L)
  expect_false(out$best %in% discarded)
  expect_identical(discarded, 1L)
})
