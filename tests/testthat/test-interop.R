# aspectr beside topicmodels: topics(), terms(), perplexity() and
# posterior() of both packages' fits work whichever package is attached
# last. Each order runs in a fresh R process.

run_order <- function(first, second) {
  script <- tempfile(fileext = ".R")
  writeLines(c(
    sprintf("suppressMessages({library(%s); library(%s)})", first, second),
    "data('AssociatedPress', package = 'topicmodels')",
    "ap <- AssociatedPress[1:60, ]",
    "lda <- topicmodels::LDA(ap, k = 2, control = list(seed = 1))",
    "fit <- suppressMessages(aspectr::plsa(ap, 2, seed = 1, max_iter = 30))",
    "lc <- aspectr::lca(data.frame(lapply(iris[1:4], cut, 3)), 2, seed = 1)",
    "nf <- suppressMessages(aspectr::nmf(ap[, 1:500], 2, loss = 'kl', seed = 1, max_iter = 30))",
    "stopifnot(identical(topics(lda), topicmodels::topics(lda)))",
    "stopifnot(identical(topics(fit), aspectr::topics(fit)), is.matrix(topics(fit)))",
    "stopifnot(identical(topics(lc), aspectr::topics(lc)))",
    "stopifnot(identical(terms(lda, 3), topicmodels::terms(lda, 3)))",
    "stopifnot(identical(dim(terms(fit, 3)), c(3L, 2L)))",
    "stopifnot(all.equal(perplexity(lda), topicmodels::perplexity(lda)))",
    "stopifnot(all.equal(perplexity(fit, ap), aspectr::perplexity(fit, ap)))",
    "stopifnot(is.finite(perplexity(nf, ap[, 1:500])))",
    "p <- topicmodels::posterior(fit)",
    "stopifnot(identical(dim(p$terms), c(2L, ncol(ap))), isTRUE(all.equal(p$topics, aspectr::topics(fit))))",
    "cat('ok\\n')"
  ), script)
  out <- suppressWarnings(system2(file.path(R.home("bin"), "Rscript"), c("--vanilla", script), stdout = TRUE,
                                  stderr = TRUE, env = paste0("R_LIBS=", paste(.libPaths(), collapse = ":"))))
  out
}

test_that("topics/terms/perplexity/posterior work with aspectr attached first or last", {
  skip_on_cran()
  skip_if_not_installed("topicmodels")
  for (ord in list(c("aspectr", "topicmodels"), c("topicmodels", "aspectr"))) {
    out <- run_order(ord[1], ord[2])
    expect_true("ok" %in% out, info = paste(c(paste(ord, collapse = " then "), out), collapse = "\n"))
  }
})

test_that("aspectr's generics on foreign objects: an input error without topicmodels", {
  expect_error(topics(lm(1 ~ 1)), class = "aspectr_error_input_type")
  expect_error(perplexity(lm(1 ~ 1), matrix(1)), class = "aspectr_error_input_type")
})
