# Random property tests: every fitter on random valid problems (see
# helper-properties.R). ASPECTR_PROPERTY_CASES sets the number of cases per
# fitter (default below); a failure prints the case, its seed and the call
# that reproduces it.

test_that("plsa() holds its properties on random problems", {
  prop_run_fitter("plsa", prop_n_cases(100))
})

test_that("nmf() holds its properties on random problems", {
  prop_run_fitter("nmf", prop_n_cases(100))
})

test_that("ntf() holds its properties on random problems", {
  prop_run_fitter("ntf", prop_n_cases(70))
})

test_that("lca() holds its properties on random problems", {
  prop_run_fitter("lca", prop_n_cases(70))
})

test_that("sntf() holds its properties on random problems", {
  prop_run_fitter("sntf", prop_n_cases(70))
})

test_that("symnmf() holds its properties on random problems", {
  prop_run_fitter("symnmf", prop_n_cases(70))
})
