#' Super-symmetric sparse tensors
#'
#' A super-symmetric tensor of order `L` on `n` points has the same value at
#' every permutation of an index tuple (an affinity among `L` points does not
#' depend on their order). `symtensor()` stores each unordered index set
#' once: row `s` of `index` holds the `L` point indices of set `s` (in any
#' order; they are sorted on input), `values[s]` its value. Cells not listed
#' are zero. [hypergraph_affinity()] returns this class, and [sntf()] works on
#' it without ever forming the `n^L` array.
#'
#' `as_symtensor()` converts a dense `n x n x ... x n` array (checked for
#' super-symmetry) or a sparse tensor holding every permutation of each set.
#' `as.array()` and [as_sptensor()] expand to the full tensor.
#'
#' @param index An integer matrix with one row per set and `L` columns
#'   (1-based point indices).
#' @param values Non-negative values, one per row of `index`.
#' @param n The number of points (default: the largest index).
#' @param names Optional point names (length `n`).
#' @return An object of class `aspectr_symtensor`: `index` (sorted rows),
#'   `values`, `n`, `order`, `names`.
#' @examples
#' y <- symtensor(rbind(c(1, 2, 3), c(3, 2, 1), c(2, 2, 4)), c(0.5, 0.5, 1), n = 4)
#' y
#' dim(as.array(y))
#' @export
symtensor <- function(index, values, n = NULL, names = NULL) {
  check_required(index, "a numeric matrix with one row per set of point indices")
  check_required(values, "a numeric vector with one value per row of `index`")
  if (is.data.frame(index)) index <- as.matrix(index)
  if (!is.matrix(index) || !is.numeric(index) || ncol(index) < 2 || anyNA(index)) {
    abort_input("{.arg index} must be a numeric matrix with one row per set and at least 2 columns, without NA, not {describe(index)}{if (is.numeric(index) && anyNA(index)) ' with NA' else ''}.",
                "type", arg = "index")
  }
  if (any(!is.finite(index)) || any(index < 1) || any(index != round(index))) {
    bad <- index[!is.finite(index) | index < 1 | index != round(index)][1]
    abort_input("{.arg index} must hold 1-based whole-number point indices, not {describe(bad)}.", "value", arg = "index")
  }
  if (!is.numeric(values) || length(values) != nrow(index)) {
    abort_input("{.arg values} must be numeric with one value per row of {.arg index} ({nrow(index)}), not {describe(values)}.",
                "type", arg = "values")
  }
  check_values(values, "values", rlang::current_env())
  if (is.null(n)) n <- if (length(index)) max(index) else 0L
  n <- check_whole(n, "n", min = 1)
  if (length(index) && max(index) > n) {
    abort_input("{.arg index} refers to point {max(index)} but {.arg n} is {n}.", "value", arg = "index")
  }
  if (!is.null(names) && length(names) != n) {
    abort_input("{.arg names} must have one name per point ({n}), not {length(names)}.", "type", arg = "names")
  }
  storage.mode(index) <- "integer"
  new_symtensor(index, as.numeric(values), n, names)
}

# Sorts each row, merges repeated sets (which must agree), drops zeros.
new_symtensor <- function(index, values, n, names = NULL, call = rlang::caller_env()) {
  L <- ncol(index)
  if (nrow(index)) {
    index <- t(apply(index, 1, sort.int))
    if (L == 1) index <- t(index)
    dim(index) <- c(length(values), L)
    keep <- values != 0
    index <- index[keep, , drop = FALSE]
    values <- values[keep]
  }
  if (nrow(index)) {
    ord <- do.call(order, c(lapply(seq_len(L), function(p) index[, p]), method = "radix"))
    index <- index[ord, , drop = FALSE]
    values <- values[ord]
    dup <- c(FALSE, rowSums(index[-1, , drop = FALSE] != index[-nrow(index), , drop = FALSE]) == 0)
    if (any(dup)) {
      prev <- which(dup) - 1L
      if (any(abs(values[dup] - values[prev]) > 1e-10 * pmax(abs(values[dup]), 1))) {
        abort_input(c("{.arg index} has an unordered index set more than once with different values ({values[prev][abs(values[dup] - values[prev]) > 1e-10 * pmax(abs(values[dup]), 1)][1]} and {values[dup][abs(values[dup] - values[prev]) > 1e-10 * pmax(abs(values[dup]), 1)][1]}).",
                      i = "A super-symmetric tensor has one value per set, whatever the order of its indices."),
                    "value", arg = "index", call = call)
      }
      index <- index[!dup, , drop = FALSE]
      values <- values[!dup]
    }
  }
  storage.mode(index) <- "integer"
  dimnames(index) <- NULL
  structure(list(index = index, values = values, n = as.integer(n), order = as.integer(L),
                 names = if (is.null(names)) NULL else as.character(names)),
            class = "aspectr_symtensor")
}

#' @rdname symtensor
#' @param x A super-symmetric dense array, a sparse tensor ([sptensor()])
#'   holding every permutation of each set, or a symmetric tensor.
#' @param tol Tolerance of the symmetry check, relative to the largest
#'   value.
#' @param ... Must be empty; an unknown argument is an error.
#' @export
as_symtensor <- function(x, ...) UseMethod("as_symtensor")

#' @export
as_symtensor.aspectr_symtensor <- function(x, ...) {
  check_dots_empty(...)
  x
}

#' @rdname symtensor
#' @export
as_symtensor.default <- function(x, tol = 1e-10, ...) {
  check_dots_empty(...)
  tol <- check_number(tol, "tol", 0, Inf)
  if (!is.array(x) || !is.numeric(x) || length(dim(x)) < 2 || length(unique(dim(x))) != 1) {
    abort_input("{.arg x} must be a numeric array with all dimensions equal (n x n x ... x n), not {describe(x)}.",
                "type", arg = "x")
  }
  if (anyNA(x) || any(!is.finite(x)) || any(x < 0)) {
    abort_input("{.arg x} must be finite and non-negative; it has {sum(is.na(x) | !is.finite(x) | x < 0, na.rm = TRUE)} entr{?y/ies} that {?is/are} not.", "value", arg = "x")
  }
  d <- dim(x); L <- length(d)
  scale <- max(abs(x), 1)
  perms <- sym_permutations(L)
  for (p in seq_len(nrow(perms))[-1]) {
    if (max(abs(x - aperm(x, perms[p, ]))) > tol * scale) {
      abort_input(c("{.arg x} is not super-symmetric: it changes under a permutation of its modes.",
                    i = "Every permutation of an index tuple must hold the same value."),
                  "value", arg = "x")
    }
  }
  nz <- which(x != 0, arr.ind = TRUE)
  if (length(nz)) {
    nz <- matrix(nz, ncol = L)
    sorted <- apply(nz, 1, function(r) !is.unsorted(r))
    if (L == 1) sorted <- TRUE
    nz <- nz[sorted, , drop = FALSE]
  } else {
    nz <- matrix(integer(), 0, L)
  }
  nm <- dimnames(x)[[1]]
  new_symtensor(nz, as.numeric(x[nz]), d[1], nm)
}

#' @rdname symtensor
#' @export
as_symtensor.aspectr_tensor <- function(x, tol = 1e-10, ...) {
  check_dots_empty(...)
  tol <- check_number(tol, "tol", 0, Inf)
  validate_sptensor(x, "x")
  d <- x$dims
  if (length(unique(d)) != 1) {
    abort_input("A super-symmetric tensor needs all dimensions equal; {.arg x} is {paste(d, collapse = ' x ')}.",
                "value", arg = "x")
  }
  sorted <- if (nrow(x$index)) apply(x$index, 1, function(r) !is.unsorted(r)) else logical()
  y <- new_symtensor(x$index[sorted, , drop = FALSE], x$values[sorted], d[1], x$dimnames[[1]])
  full <- sym_expand(y)
  same <- nrow(full$index) == nrow(x$index) &&
    all(full$index == x$index) && max(abs(full$values - x$values), 0) <= tol * max(abs(x$values), 1)
  if (!same) {
    abort_input(c("{.arg x} is not super-symmetric: some permutation of a stored index tuple is missing or has another value.",
                  i = "Use {.fn symtensor} to give each unordered set once."),
                "value", arg = "x")
  }
  y
}

# All permutations of 1:L (rows), the identity first.
sym_permutations <- function(L) {
  if (L == 1) return(matrix(1L, 1, 1))
  sub <- sym_permutations(L - 1)
  out <- do.call(rbind, lapply(seq_len(L), function(first) {
    rest <- setdiff(seq_len(L), first)
    cbind(first, matrix(rest[sub], nrow(sub)))
  }))
  storage.mode(out) <- "integer"
  unname(out)
}

# Every distinct ordered tuple of every stored set: an aspectr_tensor. A
# permutation p of a sorted set x gives a new tuple unless it reorders equal
# values, so p is kept for x exactly when x[p_i] != x[p_j] for every
# inversion (i < j, p_i > p_j) of p.
sym_expand <- function(y, raw = FALSE) {
  L <- y$order
  dn <- if (is.null(y$names)) NULL else rep(list(y$names), L)
  if (!nrow(y$index)) {
    return(new_sptensor(matrix(integer(), 0, L), numeric(), rep(y$n, L), dn))
  }
  perms <- sym_permutations(L)
  x <- y$index
  parts <- lapply(seq_len(nrow(perms)), function(r) {
    p <- perms[r, ]
    ok <- rep(TRUE, nrow(x))
    for (i in seq_len(L - 1)) for (j in (i + 1):L) {
      if (p[i] > p[j]) ok <- ok & x[, p[i]] != x[, p[j]]
    }
    list(idx = x[ok, p, drop = FALSE], val = y$values[ok])
  })
  idx <- do.call(rbind, lapply(parts, `[[`, "idx"))
  val <- unlist(lapply(parts, `[[`, "val"), use.names = FALSE)
  if (raw) return(list(index = idx, values = val))
  new_sptensor(idx, val, rep(y$n, L), dn)
}

#' @export
as_sptensor.aspectr_symtensor <- function(x, ...) {
  check_dots_empty(...)
  sym_expand(x)
}

#' @export
as.array.aspectr_symtensor <- function(x, ...) as.array(sym_expand(x))

#' @export
dim.aspectr_symtensor <- function(x) rep(x$n, x$order)

#' @export
print.aspectr_symtensor <- function(x, n = 6, ...) {
  check_dots_empty(...)
  n <- check_whole(n, "n", min = 0)
  sets <- choose(x$n + x$order - 1, x$order)
  cat(sprintf("<aspectr_symtensor> super-symmetric tensor of order %d on %s points, %s stored sets (%.3g%% of %s)\n",
              x$order, format(x$n, big.mark = ","), format(length(x$values), big.mark = ","),
              100 * length(x$values) / sets, format(sets, big.mark = ",")))
  show <- min(n, length(x$values))
  if (show > 0) {
    df <- as.data.frame(x$index[seq_len(show), , drop = FALSE])
    names(df) <- paste0("i", seq_len(x$order))
    df$value <- x$values[seq_len(show)]
    print(df, row.names = FALSE)
    if (length(x$values) > show) cat(sprintf("# ... %s more sets\n", format(length(x$values) - show, big.mark = ",")))
  }
  invisible(x)
}

# Every unordered set of the full tensor with its value (zeros included),
# for divergences that visit every cell.
sym_complete <- function(y, call = rlang::caller_env()) {
  sets <- choose(y$n + y$order - 1, y$order)
  check_size(sets, "This divergence visits every cell: {size} index sets.",
             limit = getOption("aspectr.max_cells", 1e8) / 4,
             hint = "Raise {.code options(aspectr.max_cells)} to allow it, or use a sparse-friendly method.",
             call = call)
  if (length(y$values) == sets) return(y)
  all_sets <- sym_all_sets(y$n, y$order)
  key_all <- do.call(paste, c(as.data.frame(all_sets), sep = "."))
  key <- do.call(paste, c(as.data.frame(y$index), sep = "."))
  v <- numeric(nrow(all_sets))
  v[match(key, key_all)] <- y$values
  structure(list(index = all_sets, values = v, n = y$n, order = y$order, names = y$names),
            class = "aspectr_symtensor")
}

# All sorted index sets (i_1 <= ... <= i_L) of 1..n, in lexicographic order.
sym_all_sets <- function(n, L) {
  out <- matrix(seq_len(n), ncol = 1)
  if (L > 1) for (p in 2:L) {
    last <- out[, p - 1]
    reps <- n - last + 1L
    out <- cbind(out[rep(seq_len(nrow(out)), reps), , drop = FALSE],
                 unlist(lapply(last, function(a) a:n)))
  }
  storage.mode(out) <- "integer"
  unname(out)
}
