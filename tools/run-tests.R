# Runs tests/testthat against the installed package and prints the totals.
Sys.setenv(NOT_CRAN = "true")  # run snapshot and slower tests too
library(testthat)
library(aspectr)
res <- as.data.frame(testthat::test_dir("tests/testthat", package = "aspectr",
                                         load_package = "installed",
                                         reporter = testthat::ProgressReporter$new(show_praise = FALSE),
                                         stop_on_failure = FALSE))
passed <- sum(res$passed)
failed <- sum(res$failed) + sum(res$error)
skipped <- sum(res$skipped)
cat("\n", sprintf("%d passed, %d failed, %d skipped", passed, failed, skipped), "\n", sep = "")
quit(status = if (failed > 0) 1 else 0)
