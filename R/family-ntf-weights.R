# Missing cells, masks and weights of ntf() (the core: solvers/cp_weighted.h).
#
# The loss's weights are omega_c = prod_n v_n(i_n) (d + delta_c): weights
# per index of each mode (mode_weights), a base d (1: every cell counts; 0:
# only listed cells) and deviations delta on a sparse set of cells.
# ntf_weighted_data() turns the user's x, mask, observed, weights and
# mode_weights into that form and the weighted data x~ = omega o x, which
# the fit reads in place of x.

# Whether the call asks for a weighted fit: a weighting argument, or NA in x.
ntf_is_weighted <- function(x, mask, observed, weights, mode_weights) {
  if (!is.null(mask) || !is.null(observed) || !is.null(weights) || !is.null(mode_weights)) return(TRUE)
  if (is.array(x) && (is.numeric(x) || is.logical(x))) return(anyNA(x))
  if (methods::is(x, "sparseMatrix") && methods::.hasSlot(x, "x")) return(anyNA(x@x))
  FALSE
}

# A cell's key from its 1-based indices (a matrix, one column per mode):
# its column-major position (exact in doubles) or, for tensors of more than
# 2^53 cells, its indices as text
ntf_cell_keys <- function(ij, dims) {
  if (prod(as.numeric(dims)) <= 2^53) {
    mult <- cumprod(c(1, as.numeric(dims)[-length(dims)]))
    return(drop((ij - 1) %*% mult) + 1)
  }
  do.call(paste, c(lapply(seq_len(ncol(ij)), function(n) ij[, n]), sep = ":"))
}

# x as its cells: 1-based index matrix, values (> 0), dims, dimnames and the
# cells of NA
ntf_weighted_x <- function(x, call) {
  if (inherits(x, "aspectr_tensor")) {
    validate_sptensor(x, "x", call = call)
    v <- as.numeric(x$values)
    na <- is.na(v)
    ij <- x$index
    storage.mode(ij) <- "integer"
    return(list(ij = ij[!na & v != 0, , drop = FALSE], v = v[!na & v != 0], dims = as.integer(x$dims),
                dimnames = ntf_dimnames(x$dimnames, length(x$dims)), na = if (any(na)) ij[na, , drop = FALSE]))
  }
  if (methods::is(x, "sparseMatrix")) {
    x <- methods::as(methods::as(methods::as(x, "CsparseMatrix"), "generalMatrix"), "dMatrix")
    s <- Matrix::summary(x)
    ij <- cbind(as.integer(s$i), as.integer(s$j))
    na <- is.na(s$x)
    keep <- !na & s$x != 0
    return(list(ij = ij[keep, , drop = FALSE], v = as.numeric(s$x[keep]), dims = as.integer(dim(x)),
                dimnames = ntf_dimnames(dimnames(x), 2L), na = if (any(na)) ij[na, , drop = FALSE]))
  }
  if (!is.array(x) || length(dim(x)) < 2 || !(is.numeric(x) || is.logical(x))) {
    abort_input("{.arg x} must be a numeric array or matrix, a sparse {.cls Matrix} or a sparse tensor ({.fn sptensor}) when {.arg mask}, {.arg observed} or weights are given, or when it has missing values, not {describe(x)}.",
                "type", arg = "x", call = call)
  }
  dims <- as.integer(dim(x))
  if (any(dims == 0)) {
    abort_input("{.arg x} must have at least one cell in every mode, not {paste(dims, collapse = ' x ')}.",
                "empty", arg = "x", call = call)
  }
  x <- unclass(x)
  storage.mode(x) <- "double"
  na <- which(is.na(x), arr.ind = TRUE)
  nz <- which(!is.na(x) & x != 0, arr.ind = TRUE)
  list(ij = unname(nz), v = x[nz], dims = dims, dimnames = ntf_dimnames(dimnames(x), length(dims)),
       na = if (nrow(na)) unname(na))
}

# (no names: a NULL for every mode, as the unweighted data and shards have)
ntf_dimnames <- function(dn, N) {
  if (is.null(dn)) return(vector("list", N))
  lapply(dn, function(d) if (is.null(d)) NULL else as.character(d))
}

# A cell argument (mask, observed) as the 1-based indices of its cells: a
# logical array of x's dims (base, or a logical Matrix for N = 2), a sparse
# tensor of x's dims (its stored cells), or an index matrix (one column per
# mode, one row per cell)
ntf_cells_arg <- function(m, dims, arg, call) {
  N <- length(dims)
  shape <- paste(dims, collapse = " x ")
  if (inherits(m, "aspectr_tensor")) {
    validate_sptensor(m, arg, call = call)
    if (!identical(as.integer(m$dims), dims)) {
      abort_input("{.arg {arg}} must be a sparse tensor of the dimensions of {.arg x}, {shape}, not {paste(m$dims, collapse = ' x ')}.",
                  "value", arg = arg, call = call)
    }
    ij <- m$index[!is.na(m$values) & m$values != 0, , drop = FALSE]
    storage.mode(ij) <- "integer"
    return(unname(ij))
  }
  if (methods::is(m, "lMatrix") || methods::is(m, "nMatrix")) {
    if (N != 2 || !identical(as.integer(dim(m)), dims)) {
      abort_input("{.arg {arg}} must have the dimensions of {.arg x}, {shape}, not {paste(dim(m), collapse = ' x ')}.",
                  "value", arg = arg, call = call)
    }
    s <- Matrix::summary(methods::as(methods::as(m, "CsparseMatrix"), "generalMatrix"))
    if (!is.null(s$x)) {
      if (anyNA(s$x)) {
        abort_input("{.arg {arg}} must not have missing values (TRUE or FALSE for every cell).",
                    "value", arg = arg, call = call)
      }
      s <- s[s$x, , drop = FALSE]
    }
    return(cbind(as.integer(s$i), as.integer(s$j)))
  }
  if (is.array(m) && is.logical(m)) {
    if (!identical(as.integer(dim(m)), dims)) {
      abort_input("{.arg {arg}} must be a logical array of the dimensions of {.arg x}, {shape}, not {paste(dim(m), collapse = ' x ')}.",
                  "value", arg = arg, call = call)
    }
    if (anyNA(m)) {
      abort_input("{.arg {arg}} must not have missing values (TRUE or FALSE for every cell).",
                  "value", arg = arg, call = call)
    }
    return(unname(which(m, arr.ind = TRUE)))
  }
  if (is.matrix(m) && is.numeric(m) && ncol(m) == N) {
    bad <- is.na(m) | m < 1 | m != round(m) | m > rep(dims, each = nrow(m))
    if (any(bad)) {
      w <- which(bad, arr.ind = TRUE)[1, ]
      abort_input("{.arg {arg}} as an index matrix must hold whole numbers between 1 and the size of each mode ({paste(dims, collapse = ', ')}), not {format(m[w[1], w[2]])} in column {w[2]}.",
                  "value", arg = arg, call = call)
    }
    storage.mode(m) <- "integer"
    return(unname(m))
  }
  abort_input("{.arg {arg}} must be a logical array of the dimensions of {.arg x} ({shape}), a sparse tensor of those dimensions or an index matrix with {N} columns (one row per cell), not {describe(m)}.",
              "type", arg = arg, call = call)
}

# weights as list(ij, w, sparse): a dense numeric array of x's dims (every
# cell's weight) or a sparse form (a sparse tensor of x's dims, or a sparse
# Matrix for N = 2) whose listed cells weigh their values and the others 0
ntf_weights_arg <- function(w, dims, call) {
  shape <- paste(dims, collapse = " x ")
  if (inherits(w, "aspectr_tensor") || methods::is(w, "sparseMatrix")) {
    if (!identical(as.integer(dim(w)), dims)) {
      abort_input("{.arg weights} must have the dimensions of {.arg x}, {shape}, not {paste(dim(w), collapse = ' x ')}.",
                  "value", arg = "weights", call = call)
    }
    if (inherits(w, "aspectr_tensor")) {
      validate_sptensor(w, "weights", call = call)
      ij <- w$index; v <- as.numeric(w$values)
    } else {
      s <- Matrix::summary(methods::as(methods::as(methods::as(w, "CsparseMatrix"), "generalMatrix"), "dMatrix"))
      ij <- cbind(as.integer(s$i), as.integer(s$j)); v <- as.numeric(s$x)
    }
    check_values(v, "weights", call)
    storage.mode(ij) <- "integer"
    return(list(ij = unname(ij), w = v, sparse = TRUE))
  }
  if (!(is.array(w) && is.numeric(w))) {
    abort_input("{.arg weights} must be a numeric array of the dimensions of {.arg x} ({shape}) or a sparse tensor (or sparse {.cls Matrix}) of weights per cell, not {describe(w)}.",
                "type", arg = "weights", call = call)
  }
  if (!identical(as.integer(dim(w)), dims)) {
    abort_input("{.arg weights} must have the dimensions of {.arg x}, {shape}, not {paste(dim(w), collapse = ' x ')}.",
                "value", arg = "weights", call = call)
  }
  w <- unclass(w)
  storage.mode(w) <- "double"
  check_values(w, "weights", call)
  list(w = w, sparse = FALSE)
}

ntf_mode_weights <- function(mw, dims, call) {
  N <- length(dims)
  if (is.null(mw)) return(lapply(dims, function(d) rep(1, d)))
  if (!is.list(mw) || length(mw) != N) {
    abort_input("{.arg mode_weights} must be a list with one entry per mode of {.arg x} ({N}): NULL or a vector of non-negative weights per index, not {describe(mw)}.",
                "type", arg = "mode_weights", call = call)
  }
  lapply(seq_len(N), function(n) {
    v <- mw[[n]]
    if (is.null(v)) return(rep(1, dims[n]))
    if (!is.numeric(v) || length(v) != dims[n]) {
      abort_input("{.arg mode_weights}[[{n}]] must be NULL or {dims[n]} finite non-negative weights, one per index of mode {n} of {.arg x}; it is {describe(v)}.",
                  "value", arg = "mode_weights", call = call)
    }
    check_values(v, "mode_weights", call, label = paste0("mode_weights[[", n, "]]"))
    as.numeric(v)
  })
}

# -> list(idx (N x nnz, 0-based: the cells of x~ > 0), xv, tv, omega (x,
#    x~ and the weights there), dims, dimnames, d, v (per mode), eidx (N x |E|, 0-based), ev
#    (deviations), total_weight (the sum of all weights), type, left_out
#    (number of cells of weight 0 for base 1))
ntf_weighted_data <- function(x, mask, observed, weights, mode_weights, call = rlang::caller_env()) {
  xx <- ntf_weighted_x(x, call)
  dims <- xx$dims
  if (any(xx$v < 0) || any(!is.finite(xx$v))) {
    abort_input("{.arg x} must be non-negative and finite where it is not missing.", "value", arg = "x", call = call)
  }
  wc <- ntf_weight_cells(dims, xx$na, mask, observed, weights, mode_weights, call)
  tv <- ntf_weigh_values(xx$ij, xx$v, dims, wc)
  pos <- tv > 0
  ij <- xx$ij[pos, , drop = FALSE]
  idx <- t(ij) - 1L
  storage.mode(idx) <- "integer"
  # (omega at those cells: the weights of plsa()'s N-way rules)
  c(list(idx = idx, xv = xx$v[pos], tv = tv[pos], omega = ntf_weigh_values(ij, 1, dims, wc), dims = dims,
         dimnames = xx$dimnames),
    wc[c("d", "v", "eidx", "ev", "total_weight", "type", "left_out")])
}

# The weights of a fit from the arguments (and the cells `na` of x that are
# missing, 1-based, or NULL): list(d, v (per mode), ek (keys of the
# deviating cells), eidx (N x |E|, 0-based), ev (deviations), total_weight,
# type, left_out); no cell of x is needed (data in shards).
ntf_weight_cells <- function(dims, na, mask, observed, weights, mode_weights, call = rlang::caller_env()) {
  N <- length(dims)
  v <- ntf_mode_weights(mode_weights, dims, call)
  keys <- list(); fs <- list()  # the cells' factors f = d + delta; later entries win
  add <- function(k, f) { keys[[length(keys) + 1]] <<- k; fs[[length(fs) + 1]] <<- f }
  d <- 1
  obs <- NULL
  if (!is.null(observed)) {
    obs <- ntf_cells_arg(observed, dims, "observed", call)
    d <- 0
  }
  if (!is.null(weights)) {
    wa <- ntf_weights_arg(weights, dims, call)
    if (!wa$sparse) {
      if (d == 1) {
        ij <- which(wa$w != 1, arr.ind = TRUE)
        if (N == 2 && !is.matrix(ij)) ij <- matrix(ij, ncol = 2)
        add(ntf_cell_keys(ij, dims), wa$w[ij])
      } else {
        add(ntf_cell_keys(obs, dims), wa$w[obs])
      }
    } else if (d == 1) {
      d <- 0
      add(ntf_cell_keys(wa$ij, dims), wa$w)
    } else {
      ok <- ntf_cell_keys(obs, dims)
      pos <- match(ok, ntf_cell_keys(wa$ij, dims))
      add(ok, ifelse(is.na(pos), 0, wa$w[pos]))
    }
  } else if (!is.null(obs)) {
    add(ntf_cell_keys(obs, dims), rep(1, nrow(obs)))
  }
  left <- NULL
  if (!is.null(mask)) left <- ntf_cells_arg(mask, dims, "mask", call)
  if (!is.null(na)) left <- rbind(left, na)
  if (!is.null(left)) add(ntf_cell_keys(left, dims), rep(0, nrow(left)))
  ek <- unlist(keys); ef <- unlist(fs)
  if (is.null(ek)) { ek <- numeric(0); ef <- numeric(0) }
  last <- !duplicated(ek, fromLast = TRUE)
  ek <- ek[last]; ef <- ef[last]
  delta <- ef - d
  keep <- delta != 0
  ek <- ek[keep]; delta <- delta[keep]
  eij <- ntf_key_cells(ek, dims)
  eidx <- t(eij) - 1L
  storage.mode(eidx) <- "integer"
  total_weight <- d * prod(vapply(v, sum, numeric(1))) + sum(delta * ntf_index_weights(eij, v))
  type <- c(if (!is.null(na)) "missing", if (!is.null(mask)) "mask", if (!is.null(observed)) "observed",
            if (!is.null(weights)) "cells", if (!is.null(mode_weights)) "modes")
  list(d = d, v = v, ek = ek, eidx = eidx, ev = as.numeric(delta), total_weight = total_weight, type = type,
       left_out = if (d == 1) sum(delta == -1) else NA_real_)
}

# the product of the cells' (1-based ij) weights per index, prod_n v_n(i_n)
ntf_index_weights <- function(ij, v) {
  out <- rep(1, nrow(ij))
  for (n in seq_along(v)) out <- out * v[[n]][ij[, n]]
  out
}

# The data weighted, x omega with omega = prod_n v_n(i_n) (d + delta), at
# the cells ij (1-based, one row per cell) of values xv; `wc` as from
# ntf_weight_cells() (its `ek` the keys of its cells in `dims`).
ntf_weigh_values <- function(ij, xv, dims, wc) {
  pos <- match(ntf_cell_keys(ij, dims), wc$ek)
  f <- ifelse(is.na(pos), wc$d, wc$d + wc$ev[pos])
  xv * f * ntf_index_weights(ij, wc$v)
}

# the 1-based indices of cells from their keys
ntf_key_cells <- function(k, dims) {
  N <- length(dims)
  if (!length(k)) return(matrix(integer(0), 0, N))
  if (is.character(k)) {
    out <- do.call(rbind, lapply(strsplit(k, ":", fixed = TRUE), as.integer))
    storage.mode(out) <- "integer"
    return(out)
  }
  out <- arrayInd(k, dims)
  storage.mode(out) <- "integer"
  out
}

# The starts of a weighted ntf() fit (ntf()'s runs: factors in the units of
# x, `objective` and `initial` in those of the loss, weights of the
# components). The fit runs on x / s with s a power of 2 (exact) near the
# largest value, as the unweighted Frobenius fit; `first`: a start given
# (factors in the units of x). With `session` (data in shards,
# ntf_wshard_session(), which has weighed them: `wd` then holds the
# weights and the weighted data's sums, see its weigh()) each start runs
# on the shards.
ntf_weighted_runs <- function(wd, k, loss, method, nrun, first, seed, max_iter, tol, threads, verbose,
                              callback, stg, name_factors, session = NULL, call = rlang::caller_env()) {
  N <- length(wd$dims)
  if (is.null(session)) {
    s <- pow2_scale(wd$xv)
    xv <- wd$xv / s; tv <- wd$tv / s
    wx2 <- sum(tv * xv)
    klc <- sum(tv * (log(xv) - 1))
    total <- sum(tv)
  } else {
    # (the sums of the shards' weighted data: st = sum x~, stl = sum x~
    # log x, sx2 = sum x~ x, top the largest x where x~ > 0)
    s <- pow2_scale(wd$top)
    wx2 <- wd$sx2 / s / s
    klc <- (wd$stl - wd$st * (log(s) + 1)) / s
    total <- wd$st / s
  }
  if (!is.finite(wx2) || !is.finite(klc) || !is.finite(total)) {
    abort_input("The weighted values of {.arg x} sum to more than the largest double: the weighted loss cannot be computed.",
                "value", arg = "weights")
  }
  # random starts of the scale of the weighted mean of x / s
  scale <- (total / max(wd$total_weight, .Machine$double.xmin))^(1 / N)
  if (!is.finite(scale) || !(scale > 0)) scale <- 1
  inits <- with_seed(seed, lapply(seq_len(nrun), function(i) {
    lapply(wd$dims, function(d) matrix(stats::runif(as.numeric(d) * k), d, k) * scale)
  }))
  if (!is.null(first)) {
    first[[1]] <- first[[1]] / s
    inits[[1]] <- first
  }
  kl <- loss == "kl"
  hook <- fit_hook(callback, verbose, "ntf()",
                   value = function(v) if (kl) v * s else 0.5 * rescale_value(v, s, 2),
                   model = function(raw) {
                     f <- raw$factors
                     f[[1]] <- f[[1]] * s
                     name_factors(f)
                   })
  # (internal check: option aspectr.ntf_gram = TRUE forms each row's Gram
  # matrix in the Frobenius updates, the earlier form of the same rule)
  cmethod <- if (!kl && isTRUE(getOption("aspectr.ntf_gram"))) paste0(method, ":gram") else method
  fit_start <- if (is.null(session)) {
    function(init, iters) {
      cpp_ntf_weighted_fit(wd$idx, tv, wd$dims, init, loss, cmethod, wd$d, wd$v, wd$eidx, wd$ev,
                           wx2, klc, total, iters, tol, threads, verbose, hook, !is.null(callback))
    }
  } else {
    session$configure(s, klc, threads, loss, method, wx2, total)
    function(init, iters) session$fit(init, iters, tol, hook, exact = !is.null(callback))
  }
  # (the first mode's factor in files: only the best run's kept)
  discard <- if (!is.null(session) && session$files) function(r) session$discard(r$factors[[1]])
  finish_run <- function(res) {
    res$scaled_value <- run_value(res)
    if (kl) {
      res$objective <- res$objective * s
      res$initial <- res$initial * s
    } else {
      # reported as one half of the squared error, as every Frobenius fit
      res$objective <- 0.5 * rescale_value(res$objective, s, 2)
      res$initial <- 0.5 * rescale_value(res$initial, s, 2)
    }
    # unit-norm (Frobenius) or unit-sum (KL) columns, their scale in the
    # weights (a first factor in files, see ntf_wshard_session(): its
    # column sums, the columns divided as they are written, `scale1`)
    nrm <- vapply(res$factors, function(f) {
      if (inherits(f, "aspectr_shard_run")) f$sums else if (kl) colSums(f) else sqrt(colSums(f^2))
    }, numeric(k))
    nrm <- matrix(nrm, nrow = k)
    sc <- nrm
    sc[sc == 0] <- 1
    if (inherits(res$factors[[1]], "aspectr_shard_run")) res$scale1 <- 1 / sc[, 1]
    res$factors <- lapply(seq_along(res$factors), function(n) {
      if (inherits(res$factors[[n]], "aspectr_shard_run")) return(res$factors[[n]])
      sweep(res$factors[[n]], 2, sc[, n], "/")
    })
    res$weights <- apply(nrm, 1, prod) * s
    res
  }
  fit_pipeline(inits, fit_start, function(r) r$factors, hook, list(nrun = nrun, max_iter = max_iter), stg,
               "ntf()", value = ntf_scaled_value, finish_run = finish_run,
               sequential = !is.null(session), discard = discard, call = call)
}

# A weighted N-way fit's `weighting` (ntf_weighted_data()'s wd): type, base,
# left_out (the number of cells of weight 0 for base 1) and `cells`, the
# cells augment() lists (1-based, a row each): `left`, those of weight 0
# (base 1), and `observed`, those of positive weight (base 0: the only
# cells that count)
ntf_weighting <- function(wd) {
  f <- wd$d + wd$ev
  cells <- function(sel) {
    out <- t(wd$eidx[, sel, drop = FALSE]) + 1L
    storage.mode(out) <- "integer"
    unname(out)
  }
  list(type = wd$type, base = wd$d, left_out = wd$left_out,
       cells = list(left = if (wd$d == 1) cells(f == 0), observed = if (wd$d == 0) cells(f > 0)))
}

# augment() of a weighted N-way fit: a row per cell left out (`value` NA,
# `observed` FALSE, `.fitted` the model's imputation) and, with `data` (an
# array, `NA` where missing, or a sparse tensor), per observed cell of it:
# its non-zero cells other than those left out, or with `observed =` the
# cells listed there. `weights`: the components' weights of the model
# (factors' columns times weights is the model); `names_n` the modes'
# column names; `value`, `comp` the names of the value and component
# columns.
nway_augment_weighted <- function(x, data, weights, value = "value", comp = ".component",
                                  call = rlang::caller_env()) {
  dims <- as.integer(x$dims)
  N <- length(dims)
  cl <- x$weighting$cells
  ij <- if (is.null(cl$left)) matrix(integer(0), 0, N) else cl$left
  val <- rep(NA_real_, nrow(ij)); obs <- rep(FALSE, nrow(ij))
  if (!is.null(data)) {
    dd <- if (inherits(data, "aspectr_tensor")) as.integer(data$dims) else as.integer(dim(data))
    if (!identical(dd, dims)) {
      abort_input("{.arg data} must have the dimensions of the fitted data ({paste(dims, collapse = ' x ')}), not {paste(dd, collapse = ' x ')}.",
                  "newdata", arg = "data", call = call)
    }
    if (!is.null(cl$observed)) {
      cells <- cl$observed
      v <- if (inherits(data, "aspectr_tensor")) {
        d <- as_aspect_data(data, "data", call = call)
        pos <- match(ntf_cell_keys(cells, dims), ntf_cell_keys(t(d$idx) + 1L, dims))
        ifelse(is.na(pos), 0, d$val[pos])
      } else as.numeric(data[cells])
    } else {
      if (inherits(data, "aspectr_tensor")) {
        d <- as_aspect_data(data, "data", call = call)
        cells <- t(d$idx) + 1L; v <- d$val
        keep <- v != 0
        cells <- cells[keep, , drop = FALSE]; v <- v[keep]
      } else if (inherits(data, "sparseMatrix")) {
        # (a sparse matrix's stored cells; which() takes no sparse logicals)
        s <- Matrix::summary(methods::as(methods::as(data, "CsparseMatrix"), "generalMatrix"))
        keep <- !is.na(s$x) & s$x != 0
        cells <- cbind(as.integer(s$i), as.integer(s$j))[keep, , drop = FALSE]
        v <- as.numeric(s$x[keep])
      } else {
        cells <- which(!is.na(data) & data != 0, arr.ind = TRUE)
        v <- as.numeric(data[cells])
      }
      if (nrow(ij) && nrow(cells)) {
        out <- ntf_cell_keys(cells, dims) %in% ntf_cell_keys(ij, dims)
        cells <- cells[!out, , drop = FALSE]; v <- v[!out]
      }
    }
    ij <- rbind(ij, unname(cells)); val <- c(val, v); obs <- c(obs, rep(TRUE, nrow(cells)))
  }
  storage.mode(ij) <- "integer"
  ord <- do.call(order, rev(lapply(seq_len(N), function(n) ij[, n])))
  ij <- ij[ord, , drop = FALSE]; val <- val[ord]; obs <- obs[ord]
  p <- rows_of(weights, nrow(ij))
  for (n in seq_len(N)) p <- p * x$factors[[n]][ij[, n], , drop = FALSE]
  cols <- lapply(seq_len(N), function(n) {
    dn <- x$dimnames[[n]]
    if (is.null(dn)) ij[, n] else dn[ij[, n]]
  })
  names(cols) <- names(x$factors)
  out <- c(cols, stats::setNames(list(val, obs, unname(rowSums(p)), max.col(p, ties.method = "first")),
                                 c(value, "observed", ".fitted", comp)))
  tibble::as_tibble(out)
}

