library(testthat)
library(aspectr)

test_check("aspectr")
