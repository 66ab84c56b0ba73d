#' Sparse N-way tensors
#'
#' `sptensor()` builds a sparse tensor in coordinate form: one row of
#' `index` (1-based) per non-zero, the values, the dimensions and optional
#' dimnames. Duplicated index rows are summed and zeros dropped. The
#' factorization functions accept it wherever they accept an array, and never
#' form the dense array.
#'
#' @param index An integer matrix with one column per mode and one row per
#'   non-zero, holding 1-based indices (at most `.Machine$integer.max`).
#' @param values Non-negative values, one per row of `index`.
#' @param dims The dimensions, whole numbers between 0 and
#'   `.Machine$integer.max`; by default the largest index of each mode.
#' @param dimnames Optional list of names for each mode (as for arrays).
#' @return An object of class `aspectr_tensor`: a list with `index`,
#'   `values`, `dims` and `dimnames`.
#' @seealso [as_sptensor()] to convert arrays, tables and data frames;
#'   [read_tns()] and [write_tns()] for FROSTT files.
#' @examples
#' x <- sptensor(rbind(c(1, 1, 1), c(2, 3, 1), c(2, 3, 1)), c(1, 2, 5), dims = c(2, 3, 2))
#' x
#' dim(x)
#' nnz(x)
#' as.array(x)[2, 3, 1]
#' @export
sptensor <- function(index, values, dims = NULL, dimnames = NULL) {
  call <- rlang::current_env()
  check_required(index, "a numeric matrix of 1-based indices with one column per mode")
  check_required(values, "a numeric vector with one value per row of `index`")
  if (is.data.frame(index)) index <- as.matrix(index)
  if (!is.matrix(index) || !is.numeric(index)) {
    abort_input("{.arg index} must be a numeric matrix with one column per mode, not {describe(index)}.",
                "type", arg = "index")
  }
  if (ncol(index) < 2) {
    abort_input("{.arg index} must have at least 2 columns (modes), not {ncol(index)}.",
                "type", arg = "index")
  }
  if (!is.numeric(values) || length(values) != nrow(index)) {
    abort_input("{.arg values} must be numeric with one value per row of {.arg index} ({nrow(index)}), not {describe(values)}.",
                "type", arg = "values")
  }
  check_values(as.numeric(values), "values", call = rlang::caller_env(0))
  if (anyNA(index) || any(!is.finite(index)) || any(index < 1) ||
      any(abs(index - round(index)) > 0) || any(index > .Machine$integer.max)) {
    bad <- index[is.na(index) | !is.finite(index) | index < 1 | abs(index - round(index)) > 0 |
                   index > .Machine$integer.max][1]
    abort_input("{.arg index} must hold whole numbers between 1 and 2147483647 (1-based indices), not {describe(bad)}.",
                "value", arg = "index")
  }
  check_index_range(index, "index")
  N <- ncol(index)
  if (is.null(dims)) {
    dims <- if (nrow(index)) apply(index, 2, max) else rep(0L, N)
    if (!is.null(dimnames)) dims <- pmax(dims, lengths(dimnames))
  }
  # the type and length here; the values (NA, infinite, negative, fractional,
  # beyond the integer range) by check_dims()
  if (!is.numeric(dims) || is.object(dims) || length(dims) != N) {
    abort_input("{.arg dims} must give one non-negative whole-number size per mode ({N}), not {describe(dims)}{if (is.numeric(dims) && length(dims) == N) paste0(' (', paste(dims, collapse = ', '), ')') else ''}.",
                "type", arg = "dims")
  }
  check_dims(dims, "dims")
  if (nrow(index) && any(apply(index, 2, max) > dims)) {
    abort_input("{.arg index} has entries beyond {.arg dims} ({paste(dims, collapse = ' x ')}): the largest index per mode is {paste(apply(index, 2, max), collapse = ', ')}.",
                "value", arg = "index")
  }
  if (!is.null(dimnames)) {
    if (!is.list(dimnames) || length(dimnames) != N ||
        any(vapply(seq_len(N), function(n) !is.null(dimnames[[n]]) && length(dimnames[[n]]) != dims[n], logical(1)))) {
      abort_input("{.arg dimnames} must be a list with, for each mode, NULL or one name per index ({paste(dims, collapse = ', ')}), not {describe(dimnames)}{if (is.list(dimnames)) paste0(' with lengths ', paste(lengths(dimnames), collapse = ', ')) else ''}.",
                  "type", arg = "dimnames")
    }
  }
  storage.mode(index) <- "integer"
  values <- as.numeric(values)
  new_sptensor(index, values, as.integer(dims), dimnames)
}

# Internal constructor: sums duplicates, drops zeros, sorts by index.
new_sptensor <- function(index, values, dims, dimnames = NULL, arg = "values", call = rlang::caller_env()) {
  keep <- values != 0
  index <- index[keep, , drop = FALSE]
  values <- values[keep]
  if (nrow(index)) {
    ord <- do.call(order, c(lapply(seq_len(ncol(index)), function(n) index[, n]), method = "radix"))
    index <- index[ord, , drop = FALSE]
    values <- values[ord]
    dup <- c(FALSE, rowSums(index[-1, , drop = FALSE] != index[-nrow(index), , drop = FALSE]) == 0)
    if (any(dup)) {
      grp <- cumsum(!dup)
      values <- as.numeric(rowsum(values, grp, reorder = FALSE))
      index <- index[!dup, , drop = FALSE]
      if (any(is.infinite(values))) {
        abort_input("{.arg {arg}} of the repeated cells add up to more than the largest double ({sum(is.infinite(values))} cell{?s}); scale them down.",
                    "value", arg = arg, call = call)
      }
    }
  }
  dimnames(index) <- NULL
  if (!is.null(dimnames)) dimnames <- lapply(dimnames, function(d) if (is.null(d)) NULL else as.character(d))
  structure(list(index = index, values = values, dims = dims, dimnames = dimnames),
            class = "aspectr_tensor")
}

#' Convert to a sparse tensor
#'
#' @param x A base array or N-way `table`, a matrix, a sparse tensor, or a
#'   data frame of categorical columns (factor, character, logical or
#'   integer codes), which becomes the tensor of counts of the observed
#'   combinations (one mode per column, the levels as dimnames). Rows of a
#'   data frame with missing values in its modes are left out, with a
#'   message saying how many; a missing `value` is an error.
#' @param value For a data frame: the column holding each row's count or
#'   weight (a bare name or a string; it is not a mode), as in the long
#'   form `as.data.frame(table)` (`Freq`) or `dplyr::count()` (`n`)
#'   produce. Without it every row counts once, and a column named like a
#'   count (`n`, `count`, `freq`, `Freq`, `value`, `weight`, `wt`) is an
#'   error rather than silently becoming a mode.
#' @param ... Must be empty; an unknown argument is an error.
#' @return An `aspectr_tensor`.
#' @examples
#' as_sptensor(UCBAdmissions)
#' df <- data.frame(a = c("x", "y", "x"), b = c(TRUE, FALSE, TRUE), c = c(1L, 2L, 1L))
#' as_sptensor(df)$values
#' # long form with a count column
#' long <- as.data.frame(UCBAdmissions)
#' all.equal(as.array(as_sptensor(long, value = Freq)), unclass(UCBAdmissions),
#'           check.attributes = FALSE)
#' @export
as_sptensor <- function(x, ...) UseMethod("as_sptensor")

#' @export
as_sptensor.aspectr_tensor <- function(x, ...) {
  check_dots_empty(...)
  x
}

#' @export
as_sptensor.default <- function(x, ...) {
  check_dots_empty(...)
  if (!(is.array(x) || is.matrix(x)) || !(is.numeric(x) || is.logical(x))) {
    abort_input("{.arg x} must be a numeric array, a table, a data frame or a sparse tensor, not {describe(x)}.",
                "type", arg = "x")
  }
  v <- as.numeric(unclass(x))
  check_values(v, "x", call = rlang::caller_env(0))
  dims <- dim(x)
  nz <- which(v != 0)
  index <- arrayInd(nz, dims)
  new_sptensor(index, v[nz], as.integer(dims), dimnames(x))
}

#' @rdname as_sptensor
#' @export
as_sptensor.data.frame <- function(x, value, ...) {
  check_dots_empty(...)
  w <- NULL
  if (!missing(value)) {
    col <- dtm_column(rlang::enquo(value), x, "value")
    w <- dtm_value(x[[col]], col)
    x <- x[setdiff(names(x), col)]
  } else {
    counts <- intersect(names(x), c("n", "count", "counts", "freq", "Freq", "value", "weight", "wt"))
    counts <- counts[vapply(x[counts], is.numeric, logical(1))]
    if (length(counts)) {
      abort_input(c("Column {.var {counts[1]}} of {.arg x} looks like a count, which would become a mode of the tensor.",
                    i = "Name it as {.arg value} ({.code value = {counts[1]}}), or make it a factor to use it as a mode."),
                  "argument", arg = "value")
    }
  }
  if (ncol(x) < 2) {
    abort_input("{.arg x} must have at least 2 columns (modes), not {ncol(x)}.", "type", arg = "x")
  }
  if (!is.null(w) && anyNA(w)) {
    abort_input("Column {.var {col}} ({.arg value}) must not contain missing values; it has {sum(is.na(w))}.",
                "value", arg = "value")
  }
  keep <- stats::complete.cases(x)
  if (!all(keep)) {
    cli::cli_inform("{sum(!keep)} row{?s} of {.arg x} with missing values {?is/are} left out (of {length(keep)}).",
                    class = "aspectr_message_dropped")
  }
  x <- x[keep, , drop = FALSE]
  if (!is.null(w)) {
    w <- w[keep]
    check_values(w, "value", rlang::current_env())
  }
  f <- lapply(names(x), function(v) as_categorical(x[[v]], v, parent = "x"))
  dims <- vapply(f, nlevels, integer(1))
  index <- vapply(f, as.integer, integer(nrow(x)))
  if (!is.matrix(index)) index <- matrix(index, nrow = nrow(x))
  dn <- lapply(f, levels)
  names(dn) <- names(x)
  # (repeated combinations are summed, zero weights dropped)
  new_sptensor(index, if (is.null(w)) rep(1, nrow(x)) else w, dims, dn, arg = "value", call = rlang::current_env())
}

as_categorical <- function(v, name, call = rlang::caller_env(), parent = "data") {
  if (is.factor(v)) return(droplevels(v))
  if (is.character(v) || is.logical(v)) return(factor(v))
  if (is.numeric(v)) {
    if (any(is.infinite(v))) {
      abort_input("Column {.var {name}} of {.arg {parent}} must be categorical (factor, character, logical or whole-number codes), not infinite ({sum(is.infinite(v))} value{?s}).",
                  "value", arg = parent, call = call)
    }
    if (any(abs(v - round(v)) > 0, na.rm = TRUE)) {
      abort_input("Column {.var {name}} of {.arg {parent}} must be categorical (factor, character, logical or whole-number codes), not continuous (e.g. {v[!is.na(v) & abs(v - round(v)) > 0][1]}).",
                  "type", arg = parent, call = call)
    }
    # factor(v) without its as.character() of every value (same result for
    # whole numbers, whose printed forms are distinct)
    u <- sort(unique(v[!is.na(v)]))
    lv <- as.character(u)
    if (anyDuplicated(lv)) return(factor(v))
    return(structure(match(v, u), levels = lv, class = "factor"))
  }
  abort_input("Column {.var {name}} of {.arg {parent}} must be categorical, not {describe(v)}.",
              "type", arg = parent, call = call)
}

# The largest index and size the core addresses: indices are R integers
# (and 32-bit unsigned in the core, whose largest value marks a missing mode).
max_tensor_index <- .Machine$integer.max

check_index_range <- function(index, arg, call = rlang::caller_env()) {
  if (!length(index)) return(invisible())
  top <- max(index)
  if (top > max_tensor_index) {
    abort_input("{.arg {arg}} must hold indices between 1 and {max_tensor_index} (the largest the package addresses), not {format(top, digits = 15)}.",
                "value", arg = arg, call = call)
  }
  invisible()
}

check_dims <- function(dims, arg, call = rlang::caller_env()) {
  bad <- !is.finite(dims) | dims < 0 | abs(dims - round(dims)) > 0 | dims > max_tensor_index
  if (any(bad)) {
    v <- dims[which(bad)[1]]
    abort_input("{.arg {arg}} must hold whole numbers between 0 and {max_tensor_index}, not {format(v, digits = 15)}.",
                "value", arg = arg, call = call)
  }
  invisible()
}

# Checks a sparse tensor's fields (one built by hand with structure() skips
# sptensor()'s checks): integer-valued indices in 1..dims, one value per
# index row, valid sizes.
validate_sptensor <- function(x, arg = "x", call = rlang::caller_env()) {
  dims <- x$dims; index <- x$index; values <- x$values
  if (!is.numeric(dims) || length(dims) < 2 || anyNA(dims)) {
    abort_input("{.arg {arg}} is a sparse tensor with invalid {.field dims}: at least 2 sizes are needed, not {describe(dims)}.",
                "type", arg = arg, call = call)
  }
  check_dims(dims, paste0(arg, "$dims"), call = call)
  if (!is.matrix(index) || !is.numeric(index) || ncol(index) != length(dims)) {
    abort_input("{.arg {arg}} is a sparse tensor whose {.field index} must be a numeric matrix with {length(dims)} columns.",
                "type", arg = arg, call = call)
  }
  if (!is.numeric(values) || length(values) != nrow(index)) {
    abort_input("{.arg {arg}} is a sparse tensor whose {.field values} must hold one number per row of {.field index} ({nrow(index)}), not {length(values)}.",
                "type", arg = arg, call = call)
  }
  if (nrow(index)) {
    # (one pass in C++: the element-wise tests in R made several temporaries
    # of the index's size)
    w <- cpp_first_bad_index(index, as.integer(dims))
    if (length(w)) {
      abort_input("{.arg {arg}} has index {format(index[w[1], w[2]], digits = 15)} in mode {w[2]} (row {w[1]}); indices must be whole numbers between 1 and {.field dims} ({dims[w[2]]}).",
                  "value", arg = arg, call = call)
    }
  }
  invisible(x)
}

#' @export
dim.aspectr_tensor <- function(x) x$dims

#' @export
dimnames.aspectr_tensor <- function(x) x$dimnames

#' Number of non-zero entries
#'
#' @param x A sparse tensor, a super-symmetric tensor (counted as its stored
#'   index sets), a `Matrix`, a `slam::simple_triplet_matrix` or a numeric or
#'   logical base matrix/array. Missing values are an error.
#' @return The number of non-zero entries.
#' @examples
#' nnz(as_sptensor(UCBAdmissions))
#' @export
nnz <- function(x) {
  check_required(x, "a sparse tensor, a matrix or an array")
  if (inherits(x, "aspectr_tensor")) return(length(x$values))
  if (inherits(x, "aspectr_shards")) return(x$nnz)
  # a super-symmetric tensor stores each index set once: its non-zero cells
  # are every distinct permutation of the stored sets
  if (inherits(x, "aspectr_symtensor")) return(sum(sym_multiplicity(x$index)))
  if (methods::is(x, "Matrix")) {
    n <- Matrix::nnzero(x, na.counted = NA)
    if (is.na(n)) abort_input("{.arg x} must not contain missing values.", "value", arg = "x")
    return(n)
  }
  v <- if (inherits(x, "simple_triplet_matrix")) {
    x$v
  } else if ((is.matrix(x) || is.array(x)) && (is.numeric(x) || is.logical(x))) {
    as.vector(unclass(x))
  } else {
    abort_input("{.arg x} must be a sparse tensor, a {.cls Matrix}, a simple triplet matrix or a numeric matrix or array, not {describe(x)}.",
                "type", arg = "x")
  }
  if (anyNA(v)) {
    abort_input("{.arg x} must not contain missing values; it has {sum(is.na(v))}.", "value", arg = "x")
  }
  sum(v != 0)
}

#' @export
print.aspectr_tensor <- function(x, n = 6, ...) {
  check_dots_empty(...)
  n <- check_whole(n, "n", min = 0)
  N <- length(x$dims)
  cells <- prod(as.numeric(x$dims))
  cat(sprintf("<aspectr_tensor> %d-way sparse tensor, %s, %s non-zeros (%.3g%% dense), total %s\n",
              N, paste(x$dims, collapse = " x "), format(nnz(x), big.mark = ","),
              100 * nnz(x) / cells, format(signif(sum(x$values), 6))))
  if (!is.null(names(x$dimnames))) cat("modes:", paste(names(x$dimnames), collapse = ", "), "\n")
  show <- min(n, nnz(x))
  if (show > 0) {
    idx <- x$index[seq_len(show), , drop = FALSE]
    df <- as.data.frame(idx)
    names(df) <- if (is.null(names(x$dimnames))) paste0("i", seq_len(N)) else names(x$dimnames)
    df$value <- x$values[seq_len(show)]
    print(df, row.names = FALSE)
    if (nnz(x) > show) cat(sprintf("# ... %s more non-zeros\n", format(nnz(x) - show, big.mark = ",")))
  }
  invisible(x)
}

#' @export
as.array.aspectr_tensor <- function(x, ...) {
  check_size(prod(as.numeric(x$dims)), "The dense array would have {size} cells.")
  a <- array(0, dim = x$dims, dimnames = x$dimnames)
  a[x$index] <- x$values
  a
}

#' Read and write FROSTT `.tns` files
#'
#' A `.tns` file has one non-zero per line: the N 1-based indices, then the
#' value, separated by white space; lines starting with `#` are comments.
#' `write_tns()` writes values with 17 significant digits, so a round trip is
#' exact.
#'
#' @param file A path.
#' @param dims Optional dimensions (default: the largest index per mode).
#' @param x A sparse tensor (or anything [as_sptensor()] accepts).
#' @return `read_tns()`: an `aspectr_tensor`; `write_tns()`: `file`,
#'   invisibly.
#' @examples
#' f <- tempfile(fileext = ".tns")
#' x <- as_sptensor(UCBAdmissions)
#' write_tns(x, f)
#' y <- read_tns(f)
#' all.equal(x$values, y$values)
#' @export
read_tns <- function(file, dims = NULL) {
  check_required(file, "the path of an existing file")
  if (!is.character(file) || length(file) != 1 || is.na(file) || !nzchar(file)) {
    abort_input("{.arg file} must be the path of an existing file, not {describe(file)}.", "type", arg = "file")
  }
  if (!file.exists(file) || dir.exists(file)) {
    abort_input("{.arg file} must be the path of an existing file, not {.path {file}}{if (dir.exists(file)) ', a directory' else ', which does not exist'}.",
                "type", arg = "file")
  }
  # the fast path (count.fields() and scan() in C): a million lines in a
  # second or two; anything irregular is read again below, line by line,
  # to say which line is at fault
  fast <- read_tns_fast(file)
  if (!is.null(fast)) return(sptensor(fast$index, fast$val, dims = dims))
  lines <- readLines(file, warn = FALSE)
  lines <- trimws(lines)
  lines <- lines[nzchar(lines) & !startsWith(lines, "#")]
  if (!length(lines)) abort_input("{.arg file} ({.file {file}}) has no entries.", "empty", arg = "file")
  parts <- strsplit(lines, "[[:space:]]+")
  len <- lengths(parts)
  if (length(unique(len)) != 1 || len[1] < 3) {
    bad <- which(len != len[1] | len < 3)[1]
    if (is.na(bad)) bad <- 1
    abort_input("Line {bad} of {.arg file} ({.file {file}}) is malformed: every line needs the same number (at least 3) of fields, N indices then a value, not {len[bad]} (line 1 has {len[1]}).",
                "value", arg = "file")
  }
  num <- suppressWarnings(matrix(as.numeric(unlist(parts)), ncol = len[1], byrow = TRUE))
  if (anyNA(num)) {
    bad <- which(rowSums(is.na(num)) > 0)[1]
    abort_input("Line {bad} of {.arg file} ({.file {file}}) has a field that is not a number: {.val {lines[bad]}}.", "value", arg = "file")
  }
  N <- len[1] - 1
  index <- num[, seq_len(N), drop = FALSE]
  if (any(index < 1) || any(index != round(index))) {
    bad <- which(rowSums(index < 1 | index != round(index)) > 0)[1]
    abort_input("Line {bad} of {.arg file} ({.file {file}}) has an index that is not a positive whole number: {.val {lines[bad]}}.",
                "value", arg = "file")
  }
  val <- num[, N + 1]
  if (any(val < 0) || any(!is.finite(val))) {
    bad <- which(val < 0 | !is.finite(val))[1]
    abort_input("Line {bad} of {.arg file} ({.file {file}}) has a value that is negative or not finite: {val[bad]}.",
                "value", arg = "file")
  }
  sptensor(index, val, dims = dims)
}

# The indices and values of a well-formed .tns file, or NULL (anything
# irregular: the line-by-line reader then says what and where).
read_tns_fast <- function(file) {
  nf <- tryCatch(utils::count.fields(file, sep = "", quote = "", comment.char = "#", blank.lines.skip = TRUE),
                 error = function(e) NULL, warning = function(w) NULL)
  if (!length(nf) || anyNA(nf) || any(nf != nf[1]) || nf[1] < 3) return(NULL)
  v <- tryCatch(scan(file, what = double(), sep = "", quote = "", comment.char = "#", quiet = TRUE),
                error = function(e) NULL, warning = function(w) NULL)
  if (is.null(v) || length(v) != length(nf) * nf[1] || anyNA(v)) return(NULL)
  num <- matrix(v, ncol = nf[1], byrow = TRUE)
  N <- nf[1] - 1
  index <- num[, seq_len(N), drop = FALSE]
  val <- num[, N + 1]
  if (any(index < 1) || any(index != round(index)) || any(val < 0) || any(!is.finite(val))) return(NULL)
  list(index = index, val = val)
}

#' @rdname read_tns
#' @export
write_tns <- function(x, file) {
  check_required(x, "a sparse tensor or an array")
  check_required(file, "a file path")
  if (!is.character(file) || length(file) != 1 || is.na(file) || !nzchar(file)) {
    abort_input("{.arg file} must be a file path (one string), not {describe(file)}.", "type", arg = "file")
  }
  if (!dir.exists(dirname(file)) || dir.exists(file)) {
    abort_input("{.arg file} must be a file path in an existing directory, not {.path {file}}.", "type", arg = "file")
  }
  x <- as_sptensor(x)
  # (formatted by column, not line by line: a million cells in seconds)
  cols <- lapply(seq_len(ncol(x$index)), function(j) formatC(x$index[, j], format = "d", big.mark = ""))
  vals <- trimws(formatC(x$values, digits = 17, format = "g"))
  writeLines(do.call(paste, c(cols, list(vals))), file)
  invisible(file)
}
