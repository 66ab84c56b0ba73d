# Bioconductor and Seurat containers: fitted as their matrix would be, in
# the orientation each family uses, with the samples' annotations kept.

container_counts <- function(genes = 40, samples = 12) {
  set.seed(3)
  W <- matrix(rexp(genes * 2), genes)
  H <- cbind(matrix(c(3, 0.1), 2, samples / 2), matrix(c(0.1, 3), 2, samples / 2))
  m <- matrix(rpois(genes * samples, W %*% H * 4), genes, samples,
              dimnames = list(paste0("gene", seq_len(genes)), paste0("S", seq_len(samples))))
  m
}
container_pheno <- function(m) {
  data.frame(type = rep(c("ALL", "AML"), each = ncol(m) / 2), batch = rep(1:3, length.out = ncol(m)),
             row.names = colnames(m))
}

test_that("nmf() of an ExpressionSet fits its features x samples matrix and keeps pData", {
  skip_if_not_installed("Biobase")
  m <- container_counts()
  pd <- container_pheno(m)
  es <- Biobase::ExpressionSet(assayData = m, phenoData = Biobase::AnnotatedDataFrame(pd))
  expect_message(fit <- nmf(es, 2, seed = 1), class = "aspectr_message_container")
  ref <- nmf(m, 2, seed = 1)
  expect_equal(fit$W, ref$W)
  expect_equal(fit$H, ref$H)
  expect_identical(dim(basis(fit)), c(40L, 2L))
  expect_identical(colnames(coef(fit)), colnames(m))
  expect_identical(fit$annotation$type, pd$type)
  expect_identical(rownames(fit$annotation), colnames(coef(fit)))
  # the two groups of samples fall in the two factors
  cls <- max.col(t(coef(fit)))
  expect_equal(as.vector(table(cls, pd$type)[, "ALL"] * table(cls, pd$type)[, "AML"]), c(0, 0))
  # a matrix has no annotation
  expect_null(ref$annotation)
})

test_that("as_aspect_data() and plsa() take a container as samples x features", {
  skip_if_not_installed("Biobase")
  m <- container_counts()
  es <- Biobase::ExpressionSet(assayData = m, phenoData = Biobase::AnnotatedDataFrame(container_pheno(m)))
  expect_message(d <- as_aspect_data(es), class = "aspectr_message_transposed")
  ref <- as_aspect_data(t(m))
  expect_identical(d$dims, c(12L, 40L))
  expect_identical(d[names(ref)], ref)
  expect_identical(d$annotation$type, container_pheno(m)$type)
  expect_message(fit <- plsa(es, 2, seed = 1, max_iter = 50), class = "aspectr_message_transposed")
  fit_ref <- plsa(t(m), 2, seed = 1, max_iter = 50)
  expect_equal(topics(fit), topics(fit_ref))
  expect_identical(rownames(topics(fit)), colnames(m))
  expect_identical(rownames(fit$annotation), colnames(m))
})

test_that("SummarizedExperiment: the counts assay by default, another by name, the first otherwise", {
  skip_if_not_installed("SummarizedExperiment")
  m <- container_counts()
  pd <- container_pheno(m)
  se <- SummarizedExperiment::SummarizedExperiment(
    assays = list(logcounts = log1p(m), counts = m), colData = pd)
  expect_message(fit <- nmf(se, 2, seed = 1), "counts")
  expect_equal(fit$W, nmf(m, 2, seed = 1)$W)
  expect_identical(fit$annotation$batch, pd$batch)
  fit_log <- suppressMessages(nmf(se, 2, seed = 1, assay = "logcounts"))
  expect_equal(fit_log$H, nmf(log1p(m), 2, seed = 1)$H)
  fit_pos <- suppressMessages(nmf(se, 2, seed = 1, assay = 1))
  expect_equal(fit_pos$H, fit_log$H)
  # no counts: the first assay, said
  se2 <- SummarizedExperiment::SummarizedExperiment(assays = list(norm = m / 2))
  said <- character()
  fit2 <- withCallingHandlers(nmf(se2, 2, seed = 1), message = function(m) {
    said <<- c(said, conditionMessage(m))
    invokeRestart("muffleMessage")
  })
  expect_true(any(grepl("no \"counts\" assay", said)), info = paste(said, collapse = "\n"))
  expect_equal(fit2$W, nmf(m / 2, 2, seed = 1)$W)
  expect_error(suppressMessages(nmf(se, 2, assay = "tpm")), class = "aspectr_error_input_argument")
  expect_error(suppressMessages(nmf(se, 2, assay = 3)), class = "aspectr_error_input_argument")
  expect_error(nmf(m, 2, assay = "counts"), class = "aspectr_error_input_argument")
  # negative values (log ratios) are an input error, not a crash
  se3 <- SummarizedExperiment::SummarizedExperiment(assays = list(counts = m - 5))
  expect_error(suppressMessages(nmf(se3, 2)), class = "aspectr_error_input_value")
})

test_that("SingleCellExperiment: sparse counts stay sparse and give the matrix's fit", {
  skip_if_not_installed("SingleCellExperiment")
  m <- container_counts()
  sm <- Matrix::Matrix(m * (m > 3), sparse = TRUE)
  sce <- SingleCellExperiment::SingleCellExperiment(assays = list(counts = sm),
                                                    colData = container_pheno(m))
  fit <- suppressMessages(nmf(sce, 2, loss = "kl", seed = 1, max_iter = 200))
  ref <- nmf(sm, 2, loss = "kl", seed = 1, max_iter = 200)
  expect_equal(fit$H, ref$H)
  expect_identical(fit$annotation$type, container_pheno(m)$type)
  r <- suppressMessages(nmf_rank(sce, k = 2:3, method = "consensus", nrun = 3, seed = 1))
  expect_identical(r$annotation$type, container_pheno(m)$type)
})

test_that("Seurat objects: the default assay's counts, cells as samples", {
  skip_if_not_installed("SeuratObject")
  m <- container_counts()
  sm <- Matrix::Matrix(m, sparse = TRUE)
  seu <- suppressWarnings(SeuratObject::CreateSeuratObject(counts = sm, meta.data = container_pheno(m)))
  expect_message(fit <- nmf(seu, 2, seed = 1), "RNA counts")
  expect_equal(fit$W, nmf(sm, 2, seed = 1)$W)
  expect_identical(fit$annotation$type, container_pheno(m)$type)
  expect_error(suppressMessages(nmf(seu, 2, assay = "ADT")), class = "aspectr_error_input_argument")
})

test_that("predict() of an nmf() fit takes new samples as a container: new columns, as nmf() fits them", {
  skip_if_not_installed("SingleCellExperiment")
  m <- container_counts()
  sm <- Matrix::Matrix(m * (m > 3), sparse = TRUE)
  old <- seq_len(ncol(sm) - 4)
  sce <- SingleCellExperiment::SingleCellExperiment(assays = list(counts = sm[, old]))
  new <- SingleCellExperiment::SingleCellExperiment(assays = list(counts = sm[, -old]))
  fit <- suppressMessages(nmf(sce, 2, loss = "kl", seed = 1, max_iter = 200))
  ref <- predict(fit, sm[, -old], margin = "columns")
  expect_identical(dim(ref), c(2L, 4L))
  expect_silent(p <- predict(fit, new))
  expect_equal(p, ref)
  expect_equal(predict(fit, new, margin = "columns"), ref)
  expect_equal(predict(fit, new, type = "class"), predict(fit, sm[, -old], margin = "columns", type = "class"))
  se <- SummarizedExperiment::SummarizedExperiment(assays = list(counts = as.matrix(sm[, -old])))
  expect_equal(predict(fit, se), ref)
  # new columns given as a matrix without margin: refused, pointing to it
  expect_error(predict(fit, sm[, -old]), class = "aspectr_error_input_newdata", regexp = "margin = \"columns\"")
  # an unrelated matrix is refused without the hint
  other <- sm[, -old]
  rownames(other) <- paste0("x", seq_len(nrow(other)))
  err <- tryCatch(predict(fit, other), error = function(e) e)
  expect_s3_class(err, "aspectr_error_input_newdata")
  expect_false(grepl("margin", conditionMessage(err)))
})
