# Input conversion: everything users hold becomes one internal form, a list
# with `idx` (N x nnz integer matrix of 0-based indices, sorted by the first
# index), `val` (positive values), `dims`, `dimnames` and `total`.

matrix_like_classes <- "a matrix, a Matrix sparse matrix, a slam/tm simple_triplet_matrix, a quanteda dfm or a 2-way table"

#' Convert data to the form the fitters use
#'
#' Every fitter converts its input once, through this S3 generic, to one
#' internal form: a list with `idx` (an N x nnz integer matrix of 0-based
#' indices of the non-zero cells, sorted by the first index unless
#' `by_column`), `val` (their positive values), `dims` (integer),
#' `dimnames` (a list of N character
#' vectors or `NULL`s) and `total` (`sum(val)`). Methods exist for base
#' matrices, arrays and tables, every `Matrix` class (sparse input stays
#' sparse; a `quanteda::dfm` is one), `slam::simple_triplet_matrix` (and so
#' `tm`'s document-term matrices), the package's sparse tensors, and data
#' frames (an informative error). Another package can make its class
#' fittable by adding a method that returns this form (for instance by
#' converting to a `dgCMatrix` and calling `as_aspect_data()` on it).
#'
#' @param x The data.
#' @param arg The argument name used in error messages.
#' @param call The call reported by errors.
#' @param tensors Whether N-way input (N > 2) is accepted.
#' @param by_column For `Matrix` input: order the cells by column (then
#'   row) instead of by row; the values of a `dgCMatrix` without stored
#'   zeros are then its own `x` slot, shared rather than copied (what
#'   [plsa()]'s KL fits, by coordinate descent or EM, and its Tsallis fits
#'   of matrices with few documents use to save memory).
#' @param ... Passed to methods.
#' @return The internal form described above.
#' @examples
#' str(as_aspect_data(matrix(c(1, 0, 2, 3), 2)))
#' @export
as_aspect_data <- function(x, ...) {
  if (missing(x)) {
    dots <- list(...)
    arg <- dots$arg %||% "x"
    abort_input("{.arg {arg}} is missing: it must be {matrix_like_classes}.", "argument",
                arg = arg, call = dots$call %||% rlang::caller_env())
  }
  UseMethod("as_aspect_data")
}

#' @rdname as_aspect_data
#' @export
as_aspect_data.default <- function(x, arg = "x", call = rlang::caller_env(), tensors = TRUE, ...) {
  if (methods::is(x, "Matrix")) return(as_aspect_data.Matrix(x, arg = arg, call = call, tensors = tensors, ...))
  abort_input("{.arg {arg}} must be {matrix_like_classes}, not {.cls {class(x)}}.",
              "type", arg = arg, call = call)
}

#' @rdname as_aspect_data
#' @export
as_aspect_data.aspectr_tensor <- function(x, arg = "x", call = rlang::caller_env(), tensors = TRUE, ...) {
  if (!tensors) {
    abort_input("{.arg {arg}} must be a 2-way matrix, not {describe(x)}.", "type", arg = arg, call = call)
  }
  tensor_to_data(x, arg, call)
}

#' @rdname as_aspect_data
#' @export
as_aspect_data.simple_triplet_matrix <- function(x, arg = "x", call = rlang::caller_env(), ...) {
  vals <- as.numeric(x$v)
  check_values(vals, arg, call)
  aspect_triplets(as.integer(x$i) - 1L, as.integer(x$j) - 1L, vals, c(x$nrow, x$ncol),
                  x$dimnames, arg, call)
}

#' @rdname as_aspect_data
#' @export
as_aspect_data.TermDocumentMatrix <- function(x, arg = "x", call = rlang::caller_env(), ...) {
  cli::cli_inform(c("{.arg {arg}} is a tm {.cls TermDocumentMatrix} (terms x documents): fitting its transpose, documents x terms.",
                    i = "Give {.code t(x)} or a {.cls DocumentTermMatrix} to silence this."),
                  class = c("aspectr_message_transposed", "aspectr_message"))
  tx <- x
  tx$i <- x$j; tx$j <- x$i
  tx$nrow <- x$ncol; tx$ncol <- x$nrow
  if (!is.null(x$dimnames)) tx$dimnames <- rev(x$dimnames)
  class(tx) <- "simple_triplet_matrix"
  as_aspect_data.simple_triplet_matrix(tx, arg = arg, call = call)
}

#' @rdname as_aspect_data
#' @export
as_aspect_data.Matrix <- function(x, arg = "x", call = rlang::caller_env(), by_column = FALSE, ...) {
  x <- as_csc(x, arg, call)
  dims <- dim(x)
  # the checks and the triplets ordered by row (or by column) in one C++
  # pass over the slots (aspect_triplets() would hold several temporaries
  # of nnz size)
  tr <- cpp_csc_triplets(x@i, x@p, x@x, dims[1], isTRUE(by_column))
  ck <- tr$checks
  if (ck$na > 0 || ck$inf > 0 || ck$neg > 0) check_values(x@x, arg, call)
  # by column, without stored zeros: the values are the slot itself (R
  # shares it with the input, no copy)
  val <- if (isTRUE(by_column) && is.null(tr$val)) x@x else tr$val
  if (any(dims == 0) || length(val) == 0) {
    return(aspect_triplets(integer(0), integer(0), numeric(0), dims, dimnames(x), arg, call))
  }
  dn <- dimnames(x)
  if (!is.null(dn)) dn <- lapply(dn, function(d) if (is.null(d)) NULL else as.character(d))
  list(idx = tr$idx, val = val, dims = as.integer(dims),
       dimnames = if (is.null(dn)) list(NULL, NULL) else unname(dn), total = tr$total)
}

# A 2-way Matrix as a dgCMatrix (the same object when it is one: its slots
# shared), its slots checked against each other
as_csc <- function(x, arg, call) {
  if (length(dim(x)) != 2) abort_input("{.arg {arg}} must be a 2-way matrix, not {describe(x)}.", "type", arg = arg, call = call)
  x <- methods::as(methods::as(methods::as(x, "dMatrix"), "generalMatrix"), "CsparseMatrix")
  dims <- dim(x)
  if (length(x@p) != dims[2] + 1 || length(x@i) != length(x@x) || x@p[length(x@p)] != length(x@x)) {
    abort_input("{.arg {arg}} is a malformed sparse matrix: its slots {.field p}, {.field i} and {.field x} disagree ({length(x@p)} column pointers ending at {x@p[length(x@p)]}, {length(x@i)} row indices, {length(x@x)} values for {dims[2]} columns).",
                "value", arg = arg, call = call)
  }
  x
}

# A dgCMatrix (from as_csc()) read in place: as
# as_aspect_data(by_column = TRUE), with the slots `i` and `p` in place of
# `idx` (no index matrix: 8 bytes a cell fewer); NULL when that form does
# not apply (stored zeros, or nothing stored), the caller then using
# as_aspect_data(). Bad values raise as_aspect_data()'s errors.
csc_data <- function(x, arg = "x", call = rlang::caller_env()) {
  dims <- dim(x)
  tr <- cpp_csc_triplets(x@i, x@p, x@x, dims[1], TRUE, build = FALSE)
  ck <- tr$checks
  if (ck$na > 0 || ck$inf > 0 || ck$neg > 0) check_values(x@x, arg, call)
  if (any(dims == 0) || length(x@x) == 0 || tr$kept != length(x@x)) return(NULL)
  dn <- dimnames(x)
  if (!is.null(dn)) dn <- lapply(dn, function(d) if (is.null(d)) NULL else as.character(d))
  list(idx = NULL, i = x@i, p = x@p, val = x@x, dims = as.integer(dims),
       dimnames = if (is.null(dn)) list(NULL, NULL) else unname(dn), total = tr$total)
}

#' @rdname as_aspect_data
#' @export
as_aspect_data.array <- function(x, arg = "x", call = rlang::caller_env(), tensors = TRUE, ...) {
  if (length(dim(x)) > 2) {
    if (!tensors) abort_input("{.arg {arg}} must be a 2-way matrix, not {describe(x)}.", "type", arg = arg, call = call)
    return(tensor_to_data(x, arg, call))
  }
  if (length(dim(x)) < 2) {
    # (a fitter of tensors takes arrays of any order from 2 on)
    what <- if (tensors) "a matrix or an array of 2 or more modes" else matrix_like_classes
    abort_input("{.arg {arg}} must be {what}, not {describe(x)}.", "type", arg = arg, call = call)
  }
  if (!(is.numeric(x) || is.logical(x))) {
    abort_input("{.arg {arg}} must hold numbers, not {typeof(x)} values.", "type", arg = arg, call = call)
  }
  x <- unclass(x)
  storage.mode(x) <- "double"
  check_values(as.vector(x), arg, call)
  dims <- dim(x)
  nz <- which(x != 0)
  aspect_triplets(as.integer((nz - 1) %% dims[1]), as.integer((nz - 1) %/% dims[1]), x[nz], dims,
                  dimnames(x), arg, call)
}

#' @rdname as_aspect_data
#' @export
as_aspect_data.matrix <- as_aspect_data.array

#' @rdname as_aspect_data
#' @export
as_aspect_data.table <- function(x, arg = "x", call = rlang::caller_env(), tensors = TRUE, ...) {
  as_aspect_data.array(x, arg = arg, call = call, tensors = tensors)
}

#' @rdname as_aspect_data
#' @export
as_aspect_data.data.frame <- function(x, arg = "x", call = rlang::caller_env(), ...) {
  abort_input(c("{.arg {arg}} must be {matrix_like_classes}, not a data frame.",
                i = data_frame_hint(x)),
              "type", arg = arg, call = call)
}

# The internal form from 0-based triplets: zeros dropped, sorted by row.
aspect_triplets <- function(ii, jj, vals, dims, dn, arg, call) {
  if (any(dims == 0)) {
    abort_input("{.arg {arg}} must have at least one row and one column, not {dims[1]} x {dims[2]}.",
                "empty", arg = arg, call = call)
  }
  keep <- vals != 0
  if (!all(keep)) { ii <- ii[keep]; jj <- jj[keep]; vals <- vals[keep] }
  if (length(vals) == 0) {
    # (the shape rides along: a shard may hold no counts, see shard_as_aspect())
    abort_input("{.arg {arg}} has no positive entries: there is nothing to fit.",
                "empty", arg = arg, call = call, shape = list(dims = as.integer(dims), dimnames = dn))
  }
  ord <- order(ii, jj, method = "radix")
  if (!is.null(dn)) dn <- lapply(dn, function(d) if (is.null(d)) NULL else as.character(d))
  list(
    idx = rbind(ii[ord], jj[ord]),
    val = as.numeric(vals[ord]),
    dims = as.integer(dims),
    dimnames = if (is.null(dn)) list(NULL, NULL) else unname(dn),
    total = sum(vals)
  )
}

# Values that must be finite and non-negative (data, weights): a classed
# error naming the first kind of bad value, their count (and the smallest
# negative). `label`: how the message names the argument when it is part of
# one, e.g. "mode_weights[[2]]" (the condition's `arg` stays `arg`).
check_values <- function(v, arg, call, label = arg) {
  # (one C++ pass, no temporaries of the values' length)
  ck <- if (is.double(v) || is.integer(v) || is.logical(v)) cpp_value_counts(v) else cpp_value_counts(as.double(v))
  # (counts printed as whole numbers, as sum() of logicals gave them)
  n_bad <- function(what) {
    n <- ck[[what]]
    if (n <= .Machine$integer.max) as.integer(n) else n
  }
  if (ck[["na"]] > 0) {
    abort_input("{.arg {label}} must not contain missing values (NA or NaN); it has {n_bad('na')} missing entr{?y/ies}.",
                "value", arg = arg, call = call)
  }
  if (ck[["inf"]] > 0) {
    abort_input("{.arg {label}} must not contain infinite values; it has {n_bad('inf')} infinite entr{?y/ies}.",
                "value", arg = arg, call = call)
  }
  if (ck[["negative"]] > 0) {
    abort_input("{.arg {label}} must be non-negative; it has {n_bad('negative')} negative entr{?y/ies} (the smallest {format(ck[['min']], digits = 6)}).",
                "value", arg = arg, call = call)
  }
  invisible(ck)
}

tensor_to_data <- function(x, arg, call) {
  if (!inherits(x, "aspectr_tensor")) {
    if (!(is.numeric(x) || is.logical(x))) {
      abort_input("{.arg {arg}} must hold numbers, not {typeof(x)} values.", "type", arg = arg, call = call)
    }
    check_values(as.vector(unclass(x)), arg, call)
    x <- as_sptensor(x)
  } else {
    # a hand-built tensor: indices, dims and values checked before the core,
    # explicit zeros dropped (as sptensor() drops them)
    validate_sptensor(x, arg, call = call)
    ck <- check_values(x$values, arg, call)
    if (ck[["zero"]] > 0) {
      zero <- x$values == 0
      x$index <- x$index[!zero, , drop = FALSE]
      x$values <- x$values[!zero]
    }
  }
  dims <- x$dims
  if (any(dims == 0)) {
    abort_input("{.arg {arg}} must have at least one index in every mode, not {paste(dims, collapse = ' x ')}.",
                "empty", arg = arg, call = call)
  }
  if (!length(x$values)) {
    abort_input("{.arg {arg}} has no positive entries: there is nothing to fit.",
                "empty", arg = arg, call = call, shape = list(dims = as.integer(dims), dimnames = x$dimnames))
  }
  dn <- x$dimnames
  if (is.null(dn)) dn <- vector("list", length(dims))
  list(idx = cpp_index0_t(x$index), val = x$values, dims = as.integer(dims),
       dimnames = dn, total = sum(x$values))
}

# Row-compressed form of the internal data (for fold-in).
data_to_rows <- function(d) {
  counts <- tabulate(d$idx[1, ] + 1L, nbins = d$dims[1])
  list(rowptr = c(0, cumsum(as.numeric(counts))), col = as.integer(d$idx[2, ]), val = d$val)
}
