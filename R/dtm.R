# Long (document, term, count) data to a sparse document-term matrix, and
# the checks that keep weighted or transposed text data from being fitted
# as counts without a word.

#' Cast long text data to a sparse document-term matrix
#'
#' Turns the long form of text data, one row per (document, term) pair with
#' a count (the form `tidytext::unnest_tokens()` followed by
#' `dplyr::count()` produces), into the documents x terms `dgCMatrix` every
#' fitter takes, as `tidytext::cast_sparse()` does. Repeated (document, term)
#' pairs are summed.
#'
#' @param data A data frame.
#' @param document,term The columns naming the document and the term of
#'   each row: bare column names or strings.
#' @param value The column of counts: a bare name or a string; missing
#'   counts every row once (a row per token).
#' @return A `dgCMatrix`, documents x terms, with the document and term
#'   names as dimnames: in the order of the factor levels when the column
#'   is a factor (unused levels dropped), otherwise in order of first
#'   appearance.
#' @seealso [plsa()], [nmf()]
#' @examples
#' long <- data.frame(doc = c("a", "a", "b", "b", "b"),
#'                    word = c("tax", "war", "tax", "budget", "tax"),
#'                    n = c(2, 1, 1, 3, 1))
#' as_dtm(long, doc, word, n)
#' as_dtm(long, "doc", "word")   # every row counted once
#' @export
as_dtm <- function(data, document, term, value) {
  check_required(data, "a data frame with one row per (document, term) pair")
  if (!is.data.frame(data)) {
    abort_input("{.arg data} must be a data frame with one row per (document, term) pair, not {describe(data)}.",
                "type", arg = "data")
  }
  check_required(document, "the column of document names")
  check_required(term, "the column of terms")
  doc_col <- dtm_column(rlang::enquo(document), data, "document")
  term_col <- dtm_column(rlang::enquo(term), data, "term")
  if (missing(value)) {
    v <- rep(1, nrow(data))
  } else {
    val_col <- dtm_column(rlang::enquo(value), data, "value")
    v <- dtm_value(data[[val_col]], val_col)
    check_values(v, "value", rlang::current_env())
  }
  docs <- dtm_levels(data[[doc_col]], doc_col, "document")
  terms <- dtm_levels(data[[term_col]], term_col, "term")
  out <- Matrix::sparseMatrix(i = docs$code, j = terms$code, x = v,
                              dims = c(length(docs$levels), length(terms$levels)),
                              dimnames = list(docs$levels, terms$levels))
  if (any(is.infinite(out@x))) {
    abort_input("{.arg value} of repeated (document, term) rows add up to more than the largest double ({sum(is.infinite(out@x))} cell{?s}); scale them down.",
                "value", arg = "value")
  }
  out
}

# The name of a column given as a bare name or a string.
dtm_column <- function(q, data, arg) {
  expr <- rlang::quo_get_expr(q)
  name <- if (is.character(expr) && length(expr) == 1) expr else
    if (rlang::is_symbol(expr)) rlang::as_string(expr) else NULL
  if (is.null(name)) {
    abort_input("{.arg {arg}} must be a column name (bare or a string), not {.code {rlang::expr_deparse(expr)}}.",
                "argument", arg = arg, call = rlang::caller_env(2))
  }
  if (!name %in% names(data)) {
    abort_input(c("{.arg {arg}} names column {.var {name}}, which {.arg data} does not have.",
                  i = "Its columns: {.var {names(data)}}."),
                "argument", arg = arg, call = rlang::caller_env(2))
  }
  name
}

# The numbers of a value column (as_dtm(), as_sptensor() of a data frame).
dtm_value <- function(v, col, call = rlang::caller_env()) {
  if (!is.numeric(v) || is.object(v)) {
    abort_input("Column {.var {col}} ({.arg value}) must hold non-negative numbers, not {describe(v)}.",
                "type", arg = "value", call = call)
  }
  as.numeric(v)
}

dtm_levels <- function(v, col, arg) {
  if (!is.atomic(v) || is.null(v) || (!is.null(dim(v)) && length(dim(v)) > 1)) {
    abort_input("Column {.var {col}} ({.arg {arg}}) must be a vector of names (character, factor or numbers), not {describe(v)}.",
                "type", arg = arg, call = rlang::caller_env(2))
  }
  if (is.factor(v) && any(as.integer(v) %in% which(is.na(levels(v))))) {
    abort_input("Column {.var {col}} ({.arg {arg}}) must not contain missing values; it is a factor with an {.val NA} level used by {sum(as.integer(v) %in% which(is.na(levels(v))))} row{?s}.",
                "value", arg = arg, call = rlang::caller_env(2))
  }
  if (anyNA(v)) {
    abort_input("Column {.var {col}} ({.arg {arg}}) must not contain missing values; it has {sum(is.na(v))}.",
                "value", arg = arg, call = rlang::caller_env(2))
  }
  f <- if (is.factor(v)) droplevels(v) else factor(v, levels = unique(v))
  list(code = as.integer(f), levels = levels(f))
}

# A data frame given where a matrix is expected: long text data gets
# as_dtm(), a numeric wide one as.matrix().
data_frame_hint <- function(x) {
  kinds <- vapply(x, function(v) if (is.numeric(v) && !is.object(v)) "num" else "cat", "")
  if (sum(kinds == "cat") == 2 && sum(kinds == "num") <= 1) {
    cols <- names(x)
    args <- paste(c(cols[kinds == "cat"], cols[kinds == "num"]), collapse = ", ")
    return(paste0("For long (document, term, count) data use {.code as_dtm(data, ", args, ")}."))
  }
  if (all(kinds == "num")) return("Convert a numeric data frame with {.code as.matrix()}.")
  "Long (document, term, count) data: {.code as_dtm()}; a numeric table of counts: {.code as.matrix()}."
}

# The weighting of tm or quanteda text data when it is not raw counts
# (tm's "weighting" attribute, quanteda's dfm_weight()/dfm_tfidf() record),
# else NULL.
text_weighting <- function(x) {
  w <- attr(x, "weighting")
  if (!is.null(w) && length(w) >= 2 && !identical(w[[2]], "tf")) return(w[[1]])
  if (methods::is(x, "dfm") && methods::.hasSlot(x, "meta")) {
    meta <- tryCatch(methods::slot(x, "meta")$object, error = function(e) NULL)
    tf <- meta$weight_tf$scheme %||% "count"
    df <- meta$weight_df$scheme %||% "unary"
    if (!identical(tf, "count") || !identical(df, "unary")) {
      return(paste0("quanteda weighting ", tf, if (!identical(df, "unary")) paste0(" x ", df)))
    }
  }
  NULL
}

# Whether a fit under a likelihood loss sees counts. Warns (class
# `aspectr_warning_noncount`) when the data are weighted or not whole
# numbers, since the likelihood of such a fit means nothing; the result
# records it and logLik() refuses. `values` are the non-zero values (or the
# dense matrix).
check_count_data <- function(x, values, fitter, likelihood = TRUE, call = rlang::caller_env()) {
  weighting <- text_weighting(x)
  counts <- is.null(weighting) && cpp_all_whole(values)
  if (!counts && likelihood) {
    warn_noncount(if (!is.null(weighting)) paste0("{.arg x} is weighted (", gsub("([{}])", "\\1\\1", weighting), "), not counts") else
      "{.arg x} has values that are not whole numbers", fitter, call)
  }
  counts
}

warn_noncount <- function(why, fitter, call) {
  cli::cli_warn(c(paste0(why, ": {.fn ", fitter, "} fits it, but its likelihood means nothing."),
                  i = "{.fn logLik}, {.fn AIC} and {.fn BIC} will refuse this fit; use raw counts to compare models by likelihood."),
                class = c("aspectr_warning_noncount", "aspectr_warning"), call = call)
}

abort_noncount <- function(object, call = rlang::caller_env()) {
  if (!isFALSE(object$count_data)) return(invisible())
  abort_unsupported("{.fn logLik} of this fit",
                    "it was fitted to data that are not counts (weighted or with fractional values), so its likelihood means nothing.",
                    "Refit to the raw counts to compare models by likelihood.", call = call)
}
