# Missing cells, masks and weights of nmf() (the core: nmf/weighted.h).
#
# The loss's weights are omega_ij = r_i c_j (d + delta_ij): row weights,
# column weights, a base d (1: every cell counts; 0: only listed cells) and
# deviations delta on a sparse set of cells. nmf_weighted_data() turns the
# user's x, mask, observed, weights, row_weights and col_weights into that
# form and the weighted data x~ = omega o x, which the fit reads in place of
# x.

# Whether the call asks for a weighted fit: a weighting argument, or NA in x.
nmf_is_weighted <- function(x, mask, observed, weights, row_weights, col_weights) {
  !is.null(mask) || !is.null(observed) || !is.null(weights) || !is.null(row_weights) ||
    !is.null(col_weights) || ((is.matrix(x) || methods::is(x, "Matrix")) && anyNA(x))
}

# x as a dense matrix or a dgCMatrix with its NA cells (as (i, j), 1-based)
# set aside and replaced by 0
nmf_weighted_x <- function(x, call) {
  if (methods::is(x, "sparseMatrix")) {
    x <- methods::as(methods::as(methods::as(x, "CsparseMatrix"), "generalMatrix"), "dMatrix")
    na <- which(is.na(x@x))
    cells <- NULL
    if (length(na)) {
      j <- rep(seq_len(ncol(x)), diff(x@p))
      cells <- cbind(x@i[na] + 1L, j[na])
      x@x[na] <- 0
      x <- Matrix::drop0(x)
    }
    return(list(x = x, na = cells, dense = FALSE))
  }
  if (!is.matrix(x) || !(is.numeric(x) || is.logical(x))) {
    abort_input("{.arg x} must be a numeric matrix or a sparse {.cls Matrix} when {.arg mask}, {.arg observed} or weights are given, or when it has missing values, not {describe(x)}.",
                "type", arg = "x", call = call)
  }
  storage.mode(x) <- "double"
  cells <- which(is.na(x), arr.ind = TRUE)
  if (nrow(cells)) x[cells] <- 0 else cells <- NULL
  list(x = x, na = cells, dense = TRUE)
}

# A logical matrix argument (mask, observed) as the (i, j) of its TRUE cells
nmf_cells_arg <- function(m, dims, arg, call) {
  ok <- (is.matrix(m) && is.logical(m)) || methods::is(m, "lMatrix") || methods::is(m, "nMatrix")
  if (!ok) {
    abort_input("{.arg {arg}} must be a logical matrix (base or {.cls Matrix}, dense or sparse) of the dimensions of {.arg x}, not {describe(m)}.",
                "type", arg = arg, call = call)
  }
  if (!identical(as.integer(dim(m)), as.integer(dims))) {
    abort_input("{.arg {arg}} must have the dimensions of {.arg x}, {dims[1]} x {dims[2]}, not {paste(dim(m), collapse = ' x ')}.",
                "value", arg = arg, call = call)
  }
  if (anyNA(m)) {
    abort_input("{.arg {arg}} must not have missing values (TRUE or FALSE for every cell).",
                "value", arg = arg, call = call)
  }
  if (is.matrix(m)) return(which(m, arr.ind = TRUE))
  s <- Matrix::summary(methods::as(methods::as(m, "CsparseMatrix"), "generalMatrix"))
  if (!is.null(s$x)) s <- s[s$x, , drop = FALSE]
  cbind(as.integer(s$i), as.integer(s$j))
}

nmf_weight_vector <- function(v, len, arg, what, call) {
  if (is.null(v)) return(rep(1, len))
  if (!is.numeric(v) || length(v) != len) {
    abort_input("{.arg {arg}} must be a vector of {len} finite non-negative weights, one per {what} of {.arg x}; it is {describe(v)}.",
                "value", arg = arg, call = call)
  }
  check_values(v, arg, call)
  as.numeric(v)
}

# -> list(xt (the weighted data: matrix or dgCMatrix), d, r, c, ei, ej, ev
#    (0-based cells and their deviations), xv, tv (x and x~ at the cells
#    where x~ > 0), left_out (the cells of weight 0 as an ngCMatrix, for
#    augment(); NULL when only listed cells count), type)
nmf_weighted_data <- function(x, mask, observed, weights, row_weights, col_weights,
                              call = rlang::caller_env()) {
  xx <- nmf_weighted_x(x, call)
  x <- xx$x
  dims <- as.integer(dim(x))
  m <- dims[1]; n <- dims[2]
  vals <- if (xx$dense) x else x@x
  if (any(vals < 0) || any(!is.finite(vals))) {
    abort_input("{.arg x} must be non-negative and finite where it is not missing.", "value", arg = "x", call = call)
  }
  wc <- nmf_weight_cells(dims, dimnames(x), xx$na, mask, observed, weights, row_weights, col_weights, call)
  d <- wc$d; r <- wc$r; cw <- wc$c; ij <- wc$ij; delta <- wc$ev
  # the weighted data: x r_i c_j f_ij
  if (xx$dense) {
    f <- matrix(d, m, n)
    f[ij] <- d + delta
    xt <- x * f * outer(r, cw)
    pos <- which(xt > 0)
    xv <- x[pos]; tv <- xt[pos]
  } else {
    s <- Matrix::summary(x)
    kx <- (s$j - 1) * m + s$i
    pos <- match(kx, (ij[, 2] - 1) * m + ij[, 1])
    fx <- ifelse(is.na(pos), d, d + delta[pos])
    tvall <- s$x * fx * r[s$i] * cw[s$j]
    xt <- Matrix::sparseMatrix(i = s$i, j = s$j, x = tvall, dims = dims)
    xt <- Matrix::drop0(xt)
    xt <- methods::as(xt, "dgCMatrix")
    pos <- tvall > 0
    xv <- s$x[pos]; tv <- tvall[pos]
  }
  dimnames(xt) <- dimnames(x)
  c(wc[c("d", "r", "c", "ei", "ej", "ev", "left_out", "type", "zero_cells")],
    list(xt = xt, x0 = x, xv = xv, tv = tv, observed_cells = sum(tv > 0)))
}

# The weights of the cells of an m x n matrix (dims) from the arguments of
# nmf() (`na`: the (i, j) of its missing cells, or NULL): -> list(d, r, c,
# ij (1-based), ei, ej, ev (0-based cells and their deviations), left_out
# (the cells of weight 0 as an ngCMatrix, for augment(); NULL when only
# listed cells count), type, zero_cells)
nmf_weight_cells <- function(dims, dimnames, na, mask, observed, weights, row_weights, col_weights,
                             call = rlang::caller_env()) {
  dims <- as.integer(dims)
  m <- dims[1]; n <- dims[2]
  r <- nmf_weight_vector(row_weights, m, "row_weights", "row", call)
  cw <- nmf_weight_vector(col_weights, n, "col_weights", "column", call)
  key <- function(ij) (ij[, 2] - 1) * m + ij[, 1]  # a cell's position, column-major (exact in doubles)
  # the cells' factors f_ij = d + delta_ij: a named vector by key
  d <- 1
  f_keys <- numeric(0); f_vals <- numeric(0)
  set <- function(keys, values) {
    # (a cell given twice, e.g. NA and in the mask, is set once: the last)
    last <- !duplicated(keys, fromLast = TRUE)
    keys <- keys[last]; values <- values[last]
    pos <- match(keys, f_keys)
    new <- is.na(pos)
    f_vals[pos[!new]] <<- values[!new]
    f_keys <<- c(f_keys, keys[new]); f_vals <<- c(f_vals, values[new])
  }
  if (!is.null(observed)) {
    obs <- nmf_cells_arg(observed, dims, "observed", call)
    d <- 0
    set(key(obs), rep(1, nrow(obs)))
  }
  if (!is.null(weights)) {
    if (methods::is(weights, "sparseMatrix")) {
      w <- Matrix::summary(methods::as(methods::as(weights, "CsparseMatrix"), "generalMatrix"))
      wij <- cbind(as.integer(w$i), as.integer(w$j)); wv <- as.numeric(w$x)
    } else if (is.matrix(weights) && is.numeric(weights)) {
      wij <- NULL; wv <- NULL
    } else {
      abort_input("{.arg weights} must be a numeric matrix (base or sparse {.cls Matrix}) of non-negative weights per cell, not {describe(weights)}.",
                  "type", arg = "weights", call = call)
    }
    if (!identical(as.integer(dim(weights)), dims)) {
      abort_input("{.arg weights} must have the dimensions of {.arg x}, {m} x {n}, not {paste(dim(weights), collapse = ' x ')}.",
                  "value", arg = "weights", call = call)
    }
    check_values(if (is.null(wv)) weights else wv, "weights", call)
    if (is.null(wij)) {
      # dense: every cell's weight; with `observed`, on its cells only
      if (d == 1) {
        ij <- which(weights != 1, arr.ind = TRUE)
        set(key(ij), weights[ij])
      } else {
        ij <- arrayInd(f_keys, dims)
        f_vals <- weights[ij]
      }
    } else if (d == 1) {
      # sparse weights: only the cells listed count
      d <- 0
      set(key(wij), wv)
    } else {
      pos <- match(f_keys, key(wij))
      f_vals <- ifelse(is.na(pos), 0, wv[pos])
    }
  }
  left <- NULL
  if (!is.null(mask)) left <- nmf_cells_arg(mask, dims, "mask", call)
  if (!is.null(na)) left <- rbind(left, na)
  if (!is.null(left)) set(key(left), rep(0, nrow(left)))
  delta <- f_vals - d
  keep <- delta != 0
  f_keys <- f_keys[keep]; delta <- delta[keep]
  ij <- arrayInd(f_keys, dims)
  # the cells of weight 0 (for augment() and imputation): with d = 1 the
  # listed cells of factor 0 and rows/columns of weight 0
  zero <- if (d == 1) ij[delta == -1, , drop = FALSE] else NULL
  left_out <- if (!is.null(zero))
    Matrix::sparseMatrix(i = zero[, 1], j = zero[, 2], dims = dims, dimnames = dimnames) else NULL
  type <- c(if (!is.null(na)) "missing", if (!is.null(mask)) "mask", if (!is.null(observed)) "observed",
            if (!is.null(weights)) "cells", if (!is.null(row_weights)) "rows", if (!is.null(col_weights)) "columns")
  list(d = d, r = r, c = cw, ij = ij, ei = as.integer(ij[, 1] - 1L), ej = as.integer(ij[, 2] - 1L),
       ev = as.numeric(delta), left_out = left_out, type = type,
       zero_cells = if (is.null(zero)) NA_real_ else nrow(zero))
}

# The weighted loss's constants for the fit on x / s: sum omega x^2,
# sum x~ (log x - 1) and sum x~ (all on the scaled data)
nmf_weighted_constants <- function(wd, s) {
  xv <- wd$xv / s; tv <- wd$tv / s
  list(wx2 = sum(tv * xv), klc = sum(tv * (log(xv) - 1)), total = sum(tv))
}

# The cells of positive weight when only listed cells count (base 0), as an
# ngCMatrix
nmf_observed_pattern <- function(wd, dims, dimnames) {
  pos <- wd$ev > 0 & wd$r[wd$ei + 1L] > 0 & wd$c[wd$ej + 1L] > 0
  Matrix::sparseMatrix(i = wd$ei[pos] + 1L, j = wd$ej[pos] + 1L, dims = dims, dimnames = dimnames)
}

# augment() of a weighted fit: a row per cell, with `observed` (whether the
# cell took part in the fit) and the model's value (an imputation where it
# did not): the cells left out, and the observed cells of `data` (its
# non-zero cells, or with `observed =` the observed cells) when given
nmf_augment_weighted <- function(x, data) {
  cl <- weighted_cells(x$weighting, x$dims, data)
  ij <- cl$ij
  p <- x$W[ij[, 1], , drop = FALSE] * t(x$H)[ij[, 2], , drop = FALSE]
  rn <- rownames(x$W); cn <- colnames(x$H)
  tibble::tibble(row = if (is.null(rn)) ij[, 1] else rn[ij[, 1]],
                 column = if (is.null(cn)) ij[, 2] else cn[ij[, 2]],
                 value = cl$value, observed = cl$observed, .fitted = unname(rowSums(p)),
                 .component = max.col(p, ties.method = "first"))
}

# The cells augment() lists for a weighted fit of a matrix (`weighting`:
# the fit's, with the pattern of the cells left out and, with `observed =`,
# of the observed cells): ij (1-based, by column), their values in `data`
# (NA where left out) and whether each took part in the fit
weighted_cells <- function(weighting, dims, data, call = rlang::caller_env(2)) {
  ij <- matrix(integer(0), 0, 2); val <- numeric(0); obs <- logical(0)
  lo <- weighting$left_out
  if (!is.null(lo)) {
    s <- Matrix::summary(lo)
    ij <- rbind(ij, cbind(as.integer(s$i), as.integer(s$j)))
    val <- c(val, rep(NA_real_, nrow(s))); obs <- c(obs, rep(FALSE, nrow(s)))
  }
  pat <- weighting$observed
  if (!is.null(data)) {
    if (!identical(as.integer(dim(data)), as.integer(dims))) {
      abort_input("{.arg data} must have the dimensions of the fitted data ({paste(dims, collapse = ' x ')}), not {paste(dim(data), collapse = ' x ')}.",
                  "newdata", arg = "data", call = call)
    }
    if (!is.null(pat)) {
      s <- Matrix::summary(pat)
      cells <- cbind(as.integer(s$i), as.integer(s$j))
    } else {
      dd <- if (methods::is(data, "sparseMatrix")) Matrix::summary(methods::as(data, "CsparseMatrix")) else NULL
      cells <- if (is.null(dd)) which(!is.na(data) & data != 0, arr.ind = TRUE) else {
        dd <- dd[!is.na(dd$x) & dd$x != 0, , drop = FALSE]
        cbind(as.integer(dd$i), as.integer(dd$j))
      }
      if (!is.null(lo) && nrow(cells)) cells <- cells[!as.logical(lo[cells]), , drop = FALSE]
    }
    v <- if (nrow(cells)) as.numeric(data[cells]) else numeric(0)
    ij <- rbind(ij, unname(cells)); val <- c(val, v); obs <- c(obs, rep(TRUE, nrow(cells)))
  }
  ord <- order(ij[, 2], ij[, 1])
  list(ij = ij[ord, , drop = FALSE], value = val[ord], observed = obs[ord])
}

# nmf_fold() for x with NA cells: the weighted projection (the cells left
# out), on x / s with B / w as nmf_fold() scales
nmf_fold_missing <- function(object, x, B, l1, l2, max_iter, tol, threads, call = rlang::caller_env(2)) {
  if (!object$loss %in% c("frobenius", "kl")) {
    abort_input("{.arg newdata} with missing values can be folded into Frobenius and KL fits, not into a {.code loss = \"{object$loss}\"} fit.",
                "newdata", arg = "newdata", call = call)
  }
  wd <- nmf_weighted_data(x, NULL, NULL, NULL, NULL, NULL, call = call)
  if (wd$observed_cells == 0) {
    abort_input("{.arg newdata} has no positive value in an observed cell: there is nothing to fold in.",
                "newdata", arg = "newdata", call = call)
  }
  s <- if (length(wd$tv)) max(wd$tv) else 1
  xt <- wd$xt / s
  nd <- nmf_data(xt, "newdata", call = call)
  nd$rows <- object$loss == "kl"
  B <- unname(B)
  w <- max(B)
  if (!(w > 0)) w <- 1
  b <- object$beta
  l1 <- if (l1 > 0) l1 * exp((1 - b) * log(s) - log(w)) else 0
  l2 <- if (l2 > 0) l2 * exp((2 - b) * log(s) - 2 * log(w)) else 0
  C0 <- matrix(1, ncol(B), ncol(xt))
  C <- cpp_nmf_weighted_project(nmf_ptr(nd), B / w, C0, object$loss, wd$d, wd$r, wd$c, wd$ei, wd$ej, wd$ev,
                                l1, l2, object$eps, max_iter, tol, threads)
  C <- C * (s / w)
  # (a column without an observed cell has no data to fit: NA, not the
  # penalties' minimizer or the start)
  seen <- if (methods::is(x, "Matrix")) Matrix::colSums(!is.na(x)) else colSums(!is.na(x))
  C[, seen == 0] <- NA_real_
  C
}

# The weights of every cell, a dense m x n matrix (the beta divergence's
# updates)
nmf_weight_matrix <- function(wd) {
  dims <- dim(wd$x0)
  f <- matrix(wd$d, dims[1], dims[2])
  f[cbind(wd$ei + 1L, wd$ej + 1L)] <- wd$d + wd$ev
  f * outer(wd$r, wd$c)
}
