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

# aspectr beside NMF: nmf() and basis() are exported by both. Each order
# runs in a fresh R process with an NMF call and aspectr calls.
run_nmf_order <- function(first, second) {
  script <- tempfile(fileext = ".R")
  writeLines(c(
    sprintf("suppressMessages({library(%s); library(%s)})", first, second),
    "set.seed(2); X <- matrix(rpois(30 * 12, 4), 30, 12, dimnames = list(paste0('g', 1:30), paste0('s', 1:12)))",
    "last <- search()[2]",
    # NMF's calls, as NMF users write them
    "ref <- NMF::nmf(X, 3, 'brunet', seed = 123)",
    "b <- suppressWarnings(nmf(X, 3, 'brunet', seed = 123))",
    "stopifnot(methods::is(b, 'NMFfit'), isTRUE(all.equal(NMF::basis(b), NMF::basis(ref))))",
    "stopifnot(identical(basis(b), NMF::basis(b)), identical(coef(b), NMF::coef(b)))",
    "sv <- nmf(X, 2:3, nrun = 2, seed = 1, .options = 'p1')",
    "stopifnot(methods::is(sv, 'NMF.rank'))",
    # aspectr's calls
    "a <- suppressWarnings(nmf(X, 3, loss = 'kl', seed = 1, max_iter = 500))",
    "a_ref <- suppressWarnings(aspectr::nmf(X, 3, loss = 'kl', seed = 1, max_iter = 500))",
    "stopifnot(inherits(a, 'aspectr_nmf'), a$loss == 'kl', isTRUE(all.equal(a$W, a_ref$W)))",
    # the fit records the call as written (not the generic's internal one)
    "stopifnot(identical(a$call[[2]], quote(X)), identical(a$call$loss, 'kl'))",
    "stopifnot(identical(basis(a), a$W), identical(coef(a), a$H))",
    "s <- nmf(Matrix::Matrix(X, sparse = TRUE), 3, seed = 1)",
    "stopifnot(inherits(s, 'aspectr_nmf'))",
    "h <- nmf(X, 3, method = 'anls', seed = 1)",
    "stopifnot(inherits(h, 'aspectr_nmf'), h$method == 'anls')",
    "kk <- nmf(X, k = 2, seed = 1)",
    "stopifnot(inherits(kk, 'aspectr_nmf'), kk$k == 2)",
    "e <- tryCatch(nmf(X, 3, loss = 'poisson'), aspectr_error_input = function(e) 'classed')",
    "stopifnot(identical(e, 'classed'))",
    "stopifnot(NMF::nbasis(a) == 3)",
    # NMF's heatmaps of aspectr's fits and consensus rank selections
    "grDevices::pdf(NULL)",
    "cm <- coefmap(a)",
    "r <- aspectr::nmf_rank(X, 2:3, method = 'consensus', nrun = 2, seed = 1)",
    "cs <- consensusmap(r)",
    "grDevices::dev.off()",
    "stopifnot(identical(cm$colInd, NMF::coefmap(NMF::nmfModel(W = a$W, H = a$H))$colInd))",
    "stopifnot(length(cs$colInd) == 12)",
    # the ambiguous call: the package attached last
    "amb <- suppressWarnings(nmf(X, 3))",
    "cat(last, class(amb)[1], '\\n')",
    # an ExpressionSet: NMF has its own method
    "if (requireNamespace('Biobase', quietly = TRUE)) {",
    "  es <- Biobase::ExpressionSet(X)",
    "  e1 <- suppressMessages(nmf(es, 3, loss = 'kl', seed = 1, max_iter = 500))",
    "  stopifnot(inherits(e1, 'aspectr_nmf'), !is.null(e1$annotation))",
    "  e2 <- suppressMessages(suppressWarnings(nmf(es, 3)))",
    "  cat(last, 'eset', class(e2)[1], '\\n')",
    "}",
    "cat('ok\\n')"
  ), script)
  suppressWarnings(system2(file.path(R.home("bin"), "Rscript"), c("--vanilla", script), stdout = TRUE,
                           stderr = TRUE, env = paste0("R_LIBS=", paste(.libPaths(), collapse = ":"))))
}

test_that("nmf(), basis() and coef() of both packages work with NMF attached first or last", {
  skip_on_cran()
  skip_if_not_installed("NMF")
  out <- run_nmf_order("aspectr", "NMF")
  info <- paste(c("aspectr then NMF", out), collapse = "\n")
  expect_true("ok" %in% out, info = info)
  # NMF attached last: the ambiguous nmf(X, 3) is NMF's
  expect_true(any(grepl("^package:NMF NMFfit", out)), info = info)
  if (requireNamespace("Biobase", quietly = TRUE)) {
    expect_true(any(grepl("^package:NMF eset NMFfit", out)), info = info)
  }
  out <- run_nmf_order("NMF", "aspectr")
  info <- paste(c("NMF then aspectr", out), collapse = "\n")
  expect_true("ok" %in% out, info = info)
  # aspectr attached last: the ambiguous nmf(X, 3) is aspectr's
  expect_true(any(grepl("^package:aspectr aspectr_nmf", out)), info = info)
  if (requireNamespace("Biobase", quietly = TRUE)) {
    expect_true(any(grepl("^package:aspectr eset aspectr_nmf", out)), info = info)
  }
})

test_that("nmf() calls that only NMF can mean are recognized only with NMF loaded", {
  X <- matrix(c(1, 2, 3, 4, 5, 6), 2)
  if (!isNamespaceLoaded("NMF")) {
    expect_false(is_nmf_pkg_call(X, 2, "brunet", NULL, NULL, NULL))
    expect_error(nmf(X, 2, "brunet"), class = "aspectr_error_input")
  }
  skip_if_not_installed("NMF")
  loadNamespace("NMF")
  expect_true(is_nmf_pkg_call(X, 2, "brunet", NULL, NULL, NULL))
  expect_true(is_nmf_pkg_call(X, 2, NULL, "lee", NULL, NULL))
  expect_true(is_nmf_pkg_call(X, 2:3, NULL, NULL, NULL, NULL))
  expect_true(is_nmf_pkg_call(X, 2, NULL, NULL, "nndsvd", NULL))
  expect_true(is_nmf_pkg_call(X, 2, NULL, NULL, NULL, ".options"))
  expect_false(is_nmf_pkg_call(X, 2, "kl", NULL, NULL, NULL))
  expect_false(is_nmf_pkg_call(X, 2, NULL, "hals", 1, c("max_iter", "tol")))
  expect_false(is_nmf_pkg_call(X, 2, NULL, NULL, NULL, NULL))
  # an aspectr error is still aspectr's, not handed to NMF
  expect_error(nmf(X, 2, loss = "poisson"), class = "aspectr_error_input")
})
