# Bioconductor and Seurat containers: an ExpressionSet (Biobase), a
# SummarizedExperiment or SingleCellExperiment, a Seurat object. They hold
# features x samples matrices with sample annotations; none of their
# packages is needed by aspectr (the methods run only on their objects, so
# their packages are loaded then).

# The kind of container `x` is, or NULL.
container_kind <- function(x) {
  if (!isS4(x)) return(NULL)
  for (cl in c("ExpressionSet", "SummarizedExperiment", "Seurat")) {
    if (methods::is(x, cl)) return(cl)
  }
  NULL
}

container_pkg <- c(ExpressionSet = "Biobase", SummarizedExperiment = "SummarizedExperiment",
                   Seurat = "SeuratObject")

# The matrix of a container and its samples' annotations: list(x, annotation,
# kind, assay), `x` features x samples (`samples = "columns"`, as the NMF
# package fits it) or samples x features (`"rows"`, the documents of the
# aspect model), said in a message. NULL when `x` is no container (then
# `assay` must be NULL).
container_input <- function(x, assay = NULL, samples = c("rows", "columns"), arg = "x",
                            call = rlang::caller_env()) {
  samples <- match.arg(samples)
  kind <- container_kind(x)
  if (is.null(kind)) {
    if (!is.null(assay)) {
      abort_input("{.arg assay} selects the matrix of an {.cls ExpressionSet}, {.cls SummarizedExperiment}, {.cls SingleCellExperiment} or {.cls Seurat} object; {.arg {arg}} is {describe(x)}, so {.arg assay} must be {.code NULL}.",
                  "argument", arg = "assay", call = call)
    }
    return(NULL)
  }
  pkg <- container_pkg[[kind]]
  if (!requireNamespace(pkg, quietly = TRUE)) {
    abort_input("{.arg {arg}} is a {.cls {class(x)[1]}} object, which needs the {.pkg {pkg}} package to be read; install it.",
                "type", arg = arg, call = call)
  }
  got <- switch(kind,
    ExpressionSet = container_eset(x, assay, call),
    SummarizedExperiment = container_se(x, assay, call),
    Seurat = container_seurat(x, assay, call))
  m <- got$x
  if (!is.matrix(m) && !methods::is(m, "Matrix")) {
    # (a DelayedArray or other matrix-like assay)
    m <- tryCatch(methods::as(m, "dgCMatrix"), error = function(e) as.matrix(m))
  }
  if (length(dim(m)) != 2) {
    abort_input("The {.val {got$assay}} matrix of {.arg {arg}} must be 2-way, not {describe(m)}.",
                "type", arg = arg, call = call)
  }
  ann <- got$annotation
  if (!is.null(ann)) {
    ann <- as.data.frame(ann, stringsAsFactors = FALSE)
    if (nrow(ann) != ncol(m)) ann <- NULL else rownames(ann) <- colnames(m)
  }
  what <- sprintf("%d features x %d samples", nrow(m), ncol(m))
  cls <- class(x)[1]
  ann_note <- if (is.null(ann) || !ncol(ann)) NULL else
    c(i = "Its sample annotations ({paste(utils::head(names(ann), 4), collapse = ', ')}{if (ncol(ann) > 4) ', ...' else ''}) are kept in the fit's {.field annotation}.")
  if (samples == "rows") {
    m <- t(m)
    cli::cli_inform(c("{.arg {arg}} is a {.cls {cls}} ({what}, the {.val {got$assay}} matrix): fitting its transpose, samples x features.",
                      ann_note),
                    class = c("aspectr_message_container", "aspectr_message_orientation", "aspectr_message_transposed", "aspectr_message"))
  } else {
    cli::cli_inform(c("{.arg {arg}} is a {.cls {cls}} ({what}, the {.val {got$assay}} matrix): fitting it as features x samples, as the NMF package does (features in the rows of {.field W}, samples in the columns of {.field H}).",
                      ann_note),
                    class = c("aspectr_message_container", "aspectr_message_orientation", "aspectr_message"))
  }
  list(x = m, annotation = ann, kind = cls, assay = got$assay)
}

# `assay` among `available` (a name or a position), or the default, or the
# first with a message
pick_assay <- function(assay, available, default, what, call) {
  if (!length(available)) {
    abort_input("The object has no {what}s: there is nothing to fit.", "empty", arg = "x", call = call)
  }
  if (is.null(assay)) {
    if (default %in% available) return(default)
    cli::cli_inform("The object has no {.val {default}} {what}: fitting its first, {.val {available[1]}} (choose one with {.arg assay}: {.val {available}}).",
                    class = c("aspectr_message_container", "aspectr_message"))
    return(available[1])
  }
  if (is.numeric(assay) && length(assay) == 1 && !is.na(assay) && assay >= 1 &&
      assay <= length(available) && assay == round(assay)) {
    return(available[assay])
  }
  if (!is.character(assay) || length(assay) != 1 || !assay %in% available) {
    abort_input("{.arg assay} must be one of the object's {what}s, {.or {.val {available}}} (or its position), not {describe(assay)}.",
                "argument", arg = "assay", call = call)
  }
  assay
}

container_eset <- function(x, assay, call) {
  available <- Biobase::assayDataElementNames(x)
  a <- pick_assay(assay, available, "exprs", "assay data element", call)
  list(x = Biobase::assayDataElement(x, a), annotation = Biobase::pData(x), assay = a)
}

container_se <- function(x, assay, call) {
  available <- SummarizedExperiment::assayNames(x)
  if (is.null(available) && length(SummarizedExperiment::assays(x))) {
    available <- as.character(seq_along(SummarizedExperiment::assays(x)))
  }
  a <- pick_assay(assay, available, "counts", "assay", call)
  m <- if (a %in% SummarizedExperiment::assayNames(x)) SummarizedExperiment::assay(x, a) else
    SummarizedExperiment::assay(x, as.integer(a))
  list(x = m, annotation = as.data.frame(SummarizedExperiment::colData(x)), assay = a)
}

container_seurat <- function(x, assay, call) {
  a <- pick_assay(assay, SeuratObject::Assays(x), SeuratObject::DefaultAssay(x), "assay", call)
  get_layer <- function(layer) {
    if (utils::packageVersion("SeuratObject") >= "5.0.0") {
      # (LayerData() is SeuratObject 5's; looked up so that older versions
      # install and check cleanly)
      getExportedValue("SeuratObject", "LayerData")(x, assay = a, layer = layer)
    } else {
      SeuratObject::GetAssayData(x, slot = layer, assay = a)
    }
  }
  m <- get_layer("counts")
  what <- "counts"
  if (any(dim(m) == 0)) {
    m <- get_layer("data")
    what <- "data"
    cli::cli_inform("The {.val {a}} assay holds no counts: fitting its {.val data}.",
                    class = c("aspectr_message_container", "aspectr_message"))
  }
  list(x = m, annotation = x[[]], assay = paste0(a, " ", what))
}

#' @rdname as_aspect_data
#' @param assay For an `ExpressionSet` (\pkg{Biobase}), a
#'   `SummarizedExperiment` or `SingleCellExperiment`, or a `Seurat` object:
#'   the matrix to fit, by name or position: an assay data element of an
#'   `ExpressionSet` (default `"exprs"`), an assay of a
#'   `SummarizedExperiment` (default `"counts"`, else the first with a
#'   message), a Seurat assay (default the object's default assay; its
#'   counts, or its data when it holds no counts). Containers hold features
#'   x samples: `as_aspect_data()` gives samples x features (the documents
#'   of the aspect model), says so in a message, and adds the samples'
#'   annotations (`pData()`, `colData()` or the Seurat metadata) as
#'   `annotation`.
#' @export
as_aspect_data.ExpressionSet <- function(x, arg = "x", call = rlang::caller_env(), assay = NULL, ...) {
  container_data(x, arg, call, assay, ...)
}

#' @rdname as_aspect_data
#' @export
as_aspect_data.SummarizedExperiment <- function(x, arg = "x", call = rlang::caller_env(), assay = NULL, ...) {
  container_data(x, arg, call, assay, ...)
}

#' @rdname as_aspect_data
#' @export
as_aspect_data.Seurat <- function(x, arg = "x", call = rlang::caller_env(), assay = NULL, ...) {
  container_data(x, arg, call, assay, ...)
}

container_data <- function(x, arg, call, assay, tensors = TRUE, by_column = FALSE, ...) {
  got <- container_input(x, assay, "rows", arg = arg, call = call)
  d <- as_aspect_data(got$x, arg = arg, call = call, tensors = tensors, by_column = by_column)
  d$annotation <- got$annotation
  d
}
