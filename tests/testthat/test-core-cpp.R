# The C++ core (inst/include/aspectr/) compiles and fits in a plain C++
# program without R, and gives the same numbers as the same fits through R.

core_compiler <- function() {
  r <- file.path(R.home("bin"), "R")
  cfg <- function(v) suppressWarnings(system2(r, c("CMD", "config", v), stdout = TRUE, stderr = FALSE))
  cxx <- cfg("CXX17")
  if (!length(cxx) || !nzchar(cxx[1])) cxx <- cfg("CXX")
  if (!length(cxx) || !nzchar(cxx[1])) return(NULL)
  list(cxx = cxx[1], std = cfg("CXX17STD")[1], libs = c(cfg("LAPACK_LIBS"), cfg("BLAS_LIBS"), cfg("FLIBS")))
}

test_that("the core compiles and fits without R, with the numbers R gets", {
  skip_on_cran()
  cc <- core_compiler()
  skip_if(is.null(cc), "no C++ compiler configured")
  src <- test_path("core", "core_fit.cpp")
  inc <- system.file("include", package = "aspectr")
  arma <- system.file("include", package = "RcppArmadillo")
  skip_if(!nzchar(inc) || !nzchar(arma), "headers not installed")
  exe <- file.path(tempdir(), "aspectr_core_fit")
  words <- strsplit(cc$cxx, " ")[[1]]
  args <- c(words[-1], if (!is.na(cc$std)) cc$std, "-O1", "-I", shQuote(inc), "-I", shQuote(arma),
            "-DARMA_DONT_USE_WRAPPER", shQuote(src), "-o", shQuote(exe),
            unlist(strsplit(paste(cc$libs, collapse = " "), " ")))
  log <- suppressWarnings(system2(words[1], args, stdout = TRUE, stderr = TRUE))
  expect_true(file.exists(exe), label = paste(c("compiled", log), collapse = "\n"))
  skip_if(!file.exists(exe))
  # the program includes no R header: check the sources it sees
  hdr <- list.files(file.path(inc, "aspectr"), pattern = "\\.h$", recursive = TRUE, full.names = TRUE)
  expect_false(any(grepl("#include <(R|Rcpp|Rinternals|RcppArmadillo)", unlist(lapply(hdr, readLines)))))
  out <- system2(exe, stdout = TRUE)
  expect_identical(attr(out, "status"), NULL)
  kv <- strsplit(out, " ")
  val <- function(name) as.numeric(vapply(Filter(function(p) p[1] == name, kv), `[[`, "", 2))
  expect_equal(val("em_monotone"), 1)
  expect_equal(val("em_iterations"), 50)
  expect_equal(val("cd_same_copy"), 1)
  expect_equal(val("cd_same_scaled"), 1)
  # the named matrices of requests and statistics (a view replaced, an entry
  # erased, a copy, numbered inputs, statistics added)
  expect_equal(val("named_view_kept"), 1)
  expect_equal(val("named_erase"), 1)
  expect_equal(val("named_copy"), 1)
  expect_equal(val("named_numbered"), 1)
  expect_equal(val("named_add"), 1)

  # the same fits through R
  X <- matrix(c(3, 0, 1, 0, 2, 0, 4, 0, 1, 0, 2, 1, 5, 0, 0, 0, 0, 1, 6, 2, 1, 3, 0, 0, 4, 0, 2, 2, 1, 0),
              6, 5, byrow = TRUE)
  k <- 2
  start <- function(d, n) {
    F <- outer(seq_len(d) - 1, seq_len(k) - 1, function(i, r) 1 + ((i + 2 * r + n) %% 3))
    sweep(F, 2, colSums(F), "/")
  }
  d <- aspectr:::as_aspect_data(X)
  res <- aspectr:::cpp_plsa_fit(d$idx, d$val, d$dims, rep(1 / k, k), list(start(6, 0), start(5, 1)),
                                "kl", 1, 1, 50L, 0, 1L, FALSE)
  expect_equal(val("em_objective"), res$objective[50], tolerance = 1e-12)
  expect_equal(val("em_lambda"), res$lambda, tolerance = 1e-12)
  expect_equal(val("em_terms"), as.vector(res$factors[[2]]), tolerance = 1e-12)
  W0 <- outer(0:5, 0:1, function(i, r) 1 + ((i + 2 * r) %% 3))
  H0 <- t(outer(0:4, 0:1, function(j, r) 1 + ((j + 2 * r + 1) %% 3)))
  fit <- nmf(X, 2, init = list(W = W0, H = H0), accelerate = FALSE, max_iter = 30, tol = 0)
  # nmf() fits X / max(X) and scales back: the objective scales by max(X)^2
  expect_equal(val("hals_objective"), fit$value, tolerance = 1e-10)
})
