nmf_loss_label <- function(x) {
  switch(x$loss, frobenius = "Frobenius", kl = "generalized KL",
         beta = sprintf("beta divergence (beta = %g)", x$beta))
}

#' @export
print.aspectr_nmf <- function(x, ...) {
  check_dots_empty(...)
  cat(sprintf("<aspectr_nmf> rank-%d NMF, %s loss by %s (init %s)\n", x$k, nmf_loss_label(x),
              toupper(x$method), x$init))
  cat(sprintf("data: %s x %s, %s non-zeros\n", format(x$dims[1], big.mark = ","),
              format(x$dims[2], big.mark = ","), format(x$nnz, big.mark = ",")))
  cat(sprintf("objective %s, relative error %s after %d iteration%s (%s)\n",
              format(signif(x$value, 7)), format(signif(x$rel_error[length(x$rel_error)], 4)),
              x$iterations, if (x$iterations == 1) "" else "s",
              if (x$converged) "converged" else "not converged"))
  invisible(x)
}

#' @export
summary.aspectr_nmf <- function(object, n = 5, ...) {
  check_dots_empty(...)
  n <- check_whole(n, "n")
  W <- object$W
  rn <- rownames(W); if (is.null(rn)) rn <- as.character(seq_len(nrow(W)))
  cn <- colnames(object$H); if (is.null(cn)) cn <- as.character(seq_len(ncol(object$H)))
  # (W in files: read a shard at a time)
  top <- if (inherits(W, "aspectr_factor_files")) factor_top_rows(W, n) else
    lapply(seq_len(ncol(W)), function(j) utils::head(order(W[, j], decreasing = TRUE), n))
  top_rows <- vapply(top, function(i) paste(rn[i], collapse = ", "), character(1))
  top_cols <- apply(object$H, 1, function(h) paste(cn[utils::head(order(h, decreasing = TRUE), n)], collapse = ", "))
  cls <- max.col(t(object$H), ties.method = "first")
  structure(list(
    k = object$k, loss = nmf_loss_label(object), method = object$method, init = object$init,
    dims = object$dims, value = object$value, rel_error = object$rel_error[length(object$rel_error)],
    iterations = object$iterations, converged = object$converged, nrun = length(object$run_values),
    factors = data.frame(factor = colnames(W), size = tabulate(cls, object$k),
                         top_rows = top_rows, top_columns = top_cols, stringsAsFactors = FALSE)
  ), class = "summary.aspectr_nmf")
}

#' @export
print.summary.aspectr_nmf <- function(x, ...) {
  check_dots_empty(...)
  cat(sprintf("NMF of a %d x %d matrix, rank %d, %s loss by %s (init %s)\n", x$dims[1], x$dims[2],
              x$k, x$loss, toupper(x$method), x$init))
  cat(sprintf("objective %s, relative error %s; %d iterations, %s; best of %d start%s\n\n",
              format(signif(x$value, 7)), format(signif(x$rel_error, 4)), x$iterations,
              if (x$converged) "converged" else "not converged", x$nrun, if (x$nrun == 1) "" else "s"))
  f <- x$factors
  cat(sprintf("%-10s %6s  %s\n", "factor", "cols", "top rows | top columns"))
  cat(sprintf("%-10s %6d  %s | %s\n", f$factor, f$size, f$top_rows, f$top_columns), sep = "")
  invisible(x)
}

#' Basis and coefficient matrices of an NMF
#'
#' `basis()` returns \eqn{W} (m x k), `coef()` returns \eqn{H} (k x n).
#'
#' @param object An `aspectr_nmf` fit.
#' @param ... Must be empty; an unknown argument is an error.
#' @return A matrix with dimnames.
#' @examples
#' fit <- nmf(sotu_dtm, 3, seed = 1, max_iter = 50)
#' dim(basis(fit)); dim(coef(fit))
#' @export
basis <- function(object, ...) UseMethod("basis")

#' @rdname basis
#' @export
basis.aspectr_nmf <- function(object, ...) {
  check_dots_empty(...)
  object <- rows_in_memory(object)
  object$W
}

#' @export
basis.default <- function(object, ...) {
  nmf_pkg <- defer_to_nmf_pkg("basis", object, ...)
  if (nmf_pkg[[1]]) return(nmf_pkg[[2]])
  abort_input("{.arg object} must be an {.cls aspectr_nmf} fit, not {describe(object)}.",
              "type", arg = "object")
}

#' @rdname basis
#' @export
coef.aspectr_nmf <- function(object, ...) {
  check_dots_empty(...)
  object$H
}

#' Fitted values and residuals of an NMF
#'
#' @param object An `aspectr_nmf` fit.
#' @param ... Must be empty; an unknown argument is an error.
#' @return The dense matrix \eqn{WH} (or \eqn{X - WH} for `residuals()`, which
#'   needs the data `x` again), refused beyond
#'   `getOption("aspectr.max_cells", 1e8)` cells.
#' @examples
#' fit <- nmf(sotu_dtm[1:30, 1:40], 2, seed = 1)
#' range(residuals(fit, sotu_dtm[1:30, 1:40]))
#' @export
fitted.aspectr_nmf <- function(object, ...) {
  check_dots_empty(...)
  object <- rows_in_memory(object)
  check_size(prod(as.numeric(object$dims)), "The fitted matrix would have {size} cells.")
  object$W %*% object$H
}

#' @rdname fitted.aspectr_nmf
#' @param x The data the model was fitted to.
#' @export
residuals.aspectr_nmf <- function(object, x, ...) {
  check_dots_empty(...)
  object <- rows_in_memory(object)
  if (missing(x)) {
    abort_input("{.arg x} is missing: {.fn residuals} needs the fitted data, a {object$dims[1]} x {object$dims[2]} matrix ({.code residuals(fit, x)}).", "argument", arg = "x")
  }
  nd <- nmf_data(x, "x")
  if (!identical(nd$dims, object$dims)) {
    abort_input("{.arg x} must be {object$dims[1]} x {object$dims[2]} like the fitted data, not {nd$dims[1]} x {nd$dims[2]}.",
                "newdata", arg = "x")
  }
  X <- if (!is.null(nd$dense)) nd$dense else as.matrix(nmf_sparse(nd))
  r <- X - fitted(object)
  dimnames(r) <- dimnames(fitted(object))
  r
}

#' Fold new documents (rows) or new columns into an NMF
#'
#' By default, new rows of the data (new documents, as `nmf()` and
#' [as_plsa()] treat rows) get their rows of \eqn{W} with \eqn{H} held fixed;
#' with `margin = "columns"`, new columns get their columns of \eqn{H} with
#' \eqn{W} fixed. Either way the fold-in is under the fit's own loss and
#' penalties: exact non-negative least squares for Frobenius, sweeps of
#' coordinate Newton steps (as in `nmf(method = "cd")`) to convergence for
#' KL, and multiplicative updates to convergence for beta divergences. Each
#' new row or column is a convex problem, so the result does not depend on
#' the fit's method. `NA` cells of `newdata` are left out of the loss (as
#' `nmf()` leaves out missing cells; Frobenius and KL fits), so that rows
#' with missing values get their coefficients from their observed cells,
#' and \eqn{W_{new} H} imputes the rest. A new row (column) with no observed
#' cell has nothing to be fitted to: its coefficients (and class) are `NA`.
#'
#' @param object An `aspectr_nmf` fit.
#' @param newdata A matrix (any form [nmf()] accepts). For `margin =
#'   "rows"`: new rows over the fit's columns (matched by name when both have
#'   column names). For `margin = "columns"`: the fit's rows (matched by name
#'   when both have row names) and new columns. Missing: the fitted `W`
#'   (rows) or `H` (columns). A `SummarizedExperiment`,
#'   `SingleCellExperiment`, `ExpressionSet` or `Seurat` object gives its
#'   matrix as [nmf()] fits one, features x samples: its samples are new
#'   columns, and `margin` is then `"columns"` unless given.
#' @param type `"coef"` (the coefficients) or `"class"` (the index of the
#'   largest coefficient of each new row or column).
#' @param margin `"rows"` or `"columns"`: `"rows"` by default, `"columns"`
#'   when `newdata` is a container.
#' @param max_iter,tol Limits of the iterations for KL and beta: at most
#'   `max_iter` sweeps, stopping when no coefficient moves by more than
#'   `tol` times the largest one.
#' @param threads Number of threads.
#' @param ... Must be empty; an unknown argument is an error.
#' @return For rows, an n_new x k matrix (new rows of `W`); for columns a
#'   k x n_new matrix (new columns of `H`); or an integer vector.
#' @examples
#' fit <- nmf(sotu_dtm[1:200, ], 4, seed = 1, max_iter = 100)
#' predict(fit, sotu_dtm[201:205, ], type = "class")
#' @export
predict.aspectr_nmf <- function(object, newdata, type = c("coef", "class"),
                                margin = c("rows", "columns"), max_iter = 1000,
                                tol = 1e-8, threads = NULL, ...) {
  check_dots_empty(...)
  type <- match_option(type, c("coef", "class"), "type")
  # (a container's samples are new columns: nmf() fits a container as
  # features x samples)
  container <- if (!missing(newdata) && !is.null(newdata)) {
    withCallingHandlers(container_input(newdata, NULL, "columns", arg = "newdata"),
                        aspectr_message_orientation = function(m) invokeRestart("muffleMessage"))
  }
  if (!is.null(container)) {
    newdata <- container$x
    if (missing(margin)) margin <- "columns"
  }
  margin <- match_option(margin, c("rows", "columns"), "margin")
  max_iter <- check_whole(max_iter, "max_iter")
  tol <- check_number(tol, "tol", 0, Inf)
  threads <- resolve_threads(threads)
  rows <- margin == "rows"
  if (missing(newdata) || is.null(newdata)) {
    if (rows) object <- rows_in_memory(object)
    out <- if (rows) object$W else object$H
  } else if (rows) {
    # new rows x ~ W_new H: the columns of t(x) projected onto t(H)
    if (!(is.matrix(newdata) || methods::is(newdata, "Matrix"))) {
      newdata <- nmf_as_matrix(newdata)
    }
    cn_new <- colnames(newdata)
    cn_fit <- colnames(object$H)
    if (!is.null(cn_new) && !is.null(cn_fit)) {
      check_newdata_names(cn_new, cn_fit, "column")
      map <- match(cn_fit, cn_new)
      if (anyNA(map)) {
        # (new columns over the fitted rows: the other margin)
        cols <- !is.null(rownames(newdata)) && !is.null(rownames(object$W)) &&
          all(rownames(object$W) %in% rownames(newdata))
        abort_input(c("{.arg newdata} lacks {sum(is.na(map))} of the fitted columns (matched by name), for example {.val {utils::head(cn_fit[is.na(map)], 3)}}.",
                      if (cols) c(i = "It has every fitted row: for new columns use {.code margin = \"columns\"}.")),
                    "newdata", arg = "newdata")
      }
      newdata <- newdata[, map, drop = FALSE]
    } else if (NCOL(newdata) != ncol(object$H)) {
      abort_input("{.arg newdata} must have {ncol(object$H)} columns like the fitted data (new rows over the same columns), not {NCOL(newdata)}.",
                  "newdata", arg = "newdata")
    }
    tx <- if (methods::is(newdata, "Matrix")) Matrix::t(newdata) else t(as.matrix(newdata))
    # (no new rows: none, as plsa()'s predict() gives; the fold-in would
    # refuse the transposed empty matrix, naming its sizes the wrong way)
    out <- if (NROW(newdata) == 0) matrix(numeric(0), 0, ncol(object$W)) else
      t(nmf_fold(object, tx, t(object$H), object$L1[1], object$L2[1], max_iter, tol, threads))
    dimnames(out) <- list(rownames(newdata), colnames(object$W))
  } else {
    rn_new <- rownames(newdata)
    rn_fit <- rownames(object$W)
    if (!is.null(rn_new) && !is.null(rn_fit)) {
      check_newdata_names(rn_new, rn_fit, "row")
      map <- match(rn_fit, rn_new)
      if (anyNA(map)) {
        abort_input("{.arg newdata} lacks {sum(is.na(map))} of the fitted rows (matched by name).",
                    "newdata", arg = "newdata")
      }
      newdata <- newdata[map, , drop = FALSE]
    } else if (NROW(newdata) != nrow(object$W)) {
      abort_input("{.arg newdata} must have {nrow(object$W)} rows like the fitted data, not {NROW(newdata)}.",
                  "newdata", arg = "newdata")
    }
    object <- rows_in_memory(object)
    out <- nmf_fold(object, newdata, object$W, object$L1[2], object$L2[2], max_iter, tol, threads)
    dimnames(out) <- list(colnames(object$W), colnames(newdata))
  }
  if (type == "class") {
    cls <- if (rows) max.col(out, ties.method = "first") else max.col(t(out), ties.method = "first")
    names(cls) <- if (rows) rownames(out) else colnames(out)
    return(cls)
  }
  out
}

# Columns of x (any form nmf() accepts) fitted with the basis B fixed
# (x ~ B C, B m x k) under the fit's loss and the penalties l1, l2 on C.
# Solved on x / s with B / w (s = max(x), w = max(B)), as the fit: with
# x = s x', B = w B', C = (s / w) C' the loss is s^b times that of the
# scaled problem, whose penalties on C are l1 s^(1-b) / w and
# l2 s^(2-b) / w^2.
nmf_fold <- function(object, x, B, l1, l2, max_iter, tol, threads, call = rlang::caller_env()) {
  if ((is.matrix(x) || methods::is(x, "Matrix")) && anyNA(x)) {
    return(nmf_fold_missing(object, x, B, l1, l2, max_iter, tol, threads, call = call))
  }
  nd <- nmf_data(x, "newdata", dense = object$loss == "beta", call = call)
  sc <- nmf_scale(nd)
  nd <- sc$nd
  if (object$loss == "beta" && object$beta <= 0) nd$dense[nd$dense < object$eps] <- object$eps
  B <- unname(B)
  w <- max(B)
  if (!(w > 0)) w <- 1
  b <- object$beta
  l1 <- if (l1 > 0) l1 * exp((1 - b) * log(sc$s) - log(w)) else 0
  l2 <- if (l2 > 0) l2 * exp((2 - b) * log(sc$s) - 2 * log(w)) else 0
  C <- cpp_nmf_project(nmf_ptr(nd), B / w, object$loss,
                       object$beta, c(0, l1), c(0, l2), object$eps, max_iter, tol, threads)
  C * (sc$s / w)
}

#' Convert a KL NMF to the pLSA form
#'
#' A fit of \eqn{X \approx WH} under the generalized KL divergence is a pLSA
#' model after "normalizing by rescaling" (Gemulla and Miettinen 2013): with
#' \eqn{s_r = \sum_i W_{ir} \sum_j H_{rj}}, \eqn{L = W \mathrm{diag}(1/\sum_i W_{ir})},
#' \eqn{\Sigma = \mathrm{diag}(s / \sum s)}, \eqn{R = \mathrm{diag}(1/\sum_j H_{rj}) H},
#' so that \eqn{L \Sigma R = WH / \mathrm{sum}(WH)}.
#'
#' @param fit An `aspectr_nmf` fit with `loss = "kl"`.
#' @return An `aspectr_plsa` object (rows of the data as documents, columns
#'   as terms) whose methods all work.
#' @examples
#' fit <- nmf(sotu_dtm, 4, loss = "kl", seed = 1, max_iter = 200)
#' p <- as_plsa(fit)
#' terms(p, 5)
#' @export
as_plsa <- function(fit) {
  check_required(fit, "an `aspectr_nmf` fit with `loss = \"kl\"`")
  if (!inherits(fit, "aspectr_nmf") || fit$loss != "kl") {
    abort_input("{.arg fit} must be an {.cls aspectr_nmf} fit with {.code loss = \"kl\"}, not {if (inherits(fit, 'aspectr_nmf')) paste0('one with loss = \"', fit$loss, '\"') else describe(fit)}.",
                "argument", arg = "fit")
  }
  fit <- rows_in_memory(fit)
  W <- unname(fit$W); H <- unname(fit$H)
  cw <- colSums(W); rh <- rowSums(H)
  keep <- cw > 0 & rh > 0
  if (!any(keep)) {
    abort_numeric(c("The fit has no component with mass: all its factors vanished ({.code W H = 0}), so it has no pLSA form.",
                    "i" = "Refit with another {.arg seed} or {.arg init} (or smaller weights or penalties)."))
  }
  W <- W[, keep, drop = FALSE]; H <- H[keep, , drop = FALSE]; cw <- cw[keep]; rh <- rh[keep]
  mass <- cw * rh
  res <- list(lambda = mass / sum(mass), factors = list(sweep(W, 2, cw, "/"), t(H / rh)),
              objective = numeric(0), initial = NA_real_, iterations = fit$iterations,
              converged = fit$converged)
  # the data summaries the methods need come from the model itself: the KL
  # NMF optimum reproduces the row and column totals of x
  total <- fit$total
  P <- list(lambda = res$lambda, factors = res$factors)
  res$value <- NA_real_
  d <- list(dims = fit$dims, dimnames = fit$dimnames, total = total,
            idx = matrix(integer(0), 2, 0), val = numeric(0))
  out <- new_plsa(res, d, k = length(res$lambda), loss = "kl", q = NA_real_, tempering = 1,
                  run = 1L, values = NA_real_, time = fit$time, threads = fit$threads,
                  seed = fit$seed, call = fit$call)
  # the KL divergence D(G || P) of the normalized model P = WH / S, S =
  # sum(WH), from the unpenalized generalized KL of the fit, D_KL(X || WH) =
  # sum x log(x / v) - T + S (T = sum(x)): D(G || P) = (D_KL + T - S) / T +
  # log(S / T). It equals D_KL / T only when S = T, which penalties break.
  S <- sum(cw * rh)
  dkl <- fit$divergence %||% fit$value
  out$value <- out$kl <- (dkl + total - S) / total + log(S / total)
  out$nnz <- fit$nnz
  out$neg_entropy <- fit$neg_entropy
  out$doc_totals <- fit$row_totals
  out$converted_from <- "aspectr_nmf"
  out
}

#' @rdname tidy.aspectr_plsa
#' @export
tidy.aspectr_nmf <- function(x, matrix = c("beta", "gamma", "W", "H"), lambda = NULL, n = NULL, ...) {
  check_dots_empty(...)
  matrix <- match_option(matrix, c("beta", "gamma", "W", "H"), "matrix")
  if (matrix == "beta") {
    tf <- topic_form(x, "{.fn tidy} of {.code beta}")
    return(tidy_beta(tf$beta, tidy_ids(x, 2), tf$lambda, lambda, n))
  }
  check_beta_only(lambda, n)
  if (matrix == "gamma") {
    tf <- topic_form(x, "{.fn tidy} of {.code gamma}")
    g <- tf$gamma()
    return(tibble::tibble(document = rep(tidy_ids(x, 1), times = tf$k),
                          topic = rep(seq_len(tf$k), each = nrow(g)),
                          gamma = as.vector(g)))
  }
  if (matrix == "W") {
    x <- rows_in_memory(x)
    rn <- rownames(x$W) %||% seq_len(nrow(x$W))
    tibble::tibble(row = rep(rn, times = x$k), factor = rep(seq_len(x$k), each = nrow(x$W)),
                   value = as.vector(x$W))
  } else {
    cn <- colnames(x$H) %||% seq_len(ncol(x$H))
    tibble::tibble(factor = rep(seq_len(x$k), times = ncol(x$H)), column = rep(cn, each = x$k),
                   value = as.vector(x$H))
  }
}

#' @rdname tidy.aspectr_plsa
#' @export
glance.aspectr_nmf <- function(x, data = NULL, n = 10, ...) {
  check_dots_empty(...)
  q <- glance_quality(x, data, n)
  tibble::tibble(k = x$k, loss = x$loss, method = x$method, objective = x$value,
                 rel_error = x$rel_error[length(x$rel_error)], iterations = x$iterations,
                 converged = x$converged, n_rows = x$dims[1], n_cols = x$dims[2],
                 umass = q[["umass"]], npmi = q[["npmi"]], exclusivity = q[["exclusivity"]],
                 frex = q[["frex"]])
}

#' Plot an NMF
#'
#' @param x An `aspectr_nmf` fit.
#' @param type `"H"` (the default: the coefficient map, the columns of the
#'   data, samples for genomics data, against the components), `"W"` (the
#'   basis map, the rows of the data against the components),
#'   `"convergence"` (objective per iteration) or `"clusters"` (column
#'   counts per factor when columns are assigned to their largest
#'   coefficient). The maps scale each component to its maximum, keep the
#'   `n` columns (rows) with the largest loadings, taken from every
#'   component in turn, order them by dominant component, and draw
#'   annotation tracks above them: the `annotation` given and each one's
#'   dominant factor. Labels are sized to the device. [ggplot2::autoplot()]
#'   draws the same pictures.
#' @param n For the maps: how many columns or rows to show at most;
#'   `NULL` (default) shows all when there are at most 100 (the samples of
#'   most genomics data), otherwise 40.
#' @param annotation For the maps: a data frame (or a vector) with one row
#'   per column of the data (`"H"`) or row (`"W"`), matched by row names
#'   when they are the data's names, drawn as tracks; `NULL` (default) uses
#'   the samples' annotations of a Bioconductor or Seurat container for
#'   `"H"` (the fit's `annotation`), `FALSE` draws none.
#' @param ... For `"convergence"` and `"clusters"`: passed to the base
#'   graphics function.
#' @return `x`, invisibly.
#' @examples
#' fit <- nmf(sotu_dtm, 4, seed = 1, max_iter = 50)
#' plot(fit)
#' year <- as.integer(substr(sub("^.*-", "", rownames(sotu_dtm)), 1, 4))
#' plot(fit, type = "W", annotation = data.frame(century = paste0(year %/% 100 + 1, "th")))
#' plot(fit, type = "convergence")
#' @export
plot.aspectr_nmf <- function(x, type = c("H", "W", "convergence", "clusters"), n = NULL,
                             annotation = NULL, ...) {
  type <- match_option(type, c("H", "W", "convergence", "clusters"), "type")
  if (!is.null(n)) n <- check_whole(n, "n")
  if (type == "convergence") {
    graphics::plot(seq_along(x$objective), x$objective, type = "l", log = "y",
                   xlab = "iteration", ylab = "objective", main = "Convergence", ...)
  } else if (type %in% c("W", "H")) {
    check_dots_empty(...)
    md <- nmf_map(x, type, n, annotation)
    base_heatmap(md$z, c(0, 1), map_palette(), md$main, "share of the\ncomponent's\nmaximum",
                 tracks = md$tracks, xlab = md$xlab)
  } else {
    cls <- max.col(t(x$H), ties.method = "first")
    graphics::barplot(tabulate(cls, x$k), names.arg = seq_len(x$k), xlab = "factor",
                      ylab = "columns", main = "Column clusters", ...)
  }
  invisible(x)
}

# newdata in any form nmf() accepts, as a matrix or Matrix (for subsetting
# and transposing): other forms go through the input conversion, which
# refuses what nmf() refuses with the same classed errors
nmf_as_matrix <- function(x, arg = "newdata", call = rlang::caller_env()) {
  d <- as_aspect_data(x, arg, call = call, tensors = FALSE)
  Matrix::sparseMatrix(i = d$idx[1, ] + 1L, j = d$idx[2, ] + 1L, x = d$val, dims = d$dims,
                       dimnames = d$dimnames)
}

#' Top features of each NMF component
#'
#' The columns of the data (terms, for a document-term matrix) with the
#' largest coefficients in each row of \eqn{H}, like [terms.aspectr_plsa()]
#' for topics; `margin = "rows"` lists the rows (documents) with the largest
#' entries of each column of \eqn{W}.
#'
#' @param x An `aspectr_nmf` fit.
#' @param n Number of features per component.
#' @param margin `"columns"` (default) or `"rows"`.
#' @param lambda The relevance weight in \[0, 1\] (default 1: by
#'   coefficient): below 1, features are ranked by LDAvis's relevance
#'   (Sievert and Shirley 2014) in the pLSA form of the fit (see
#'   [terms()][terms.aspectr_plsa()] and [as_plsa()]).
#' @param ... Must be empty.
#' @return A character matrix with `n` rows and one column per component.
#' @examples
#' fit <- nmf(sotu_dtm, 3, seed = 1, max_iter = 50)
#' terms(fit, 5)
#' terms(fit, 5, lambda = 0.6)
#' @export
terms.aspectr_nmf <- function(x, n = 10, margin = c("columns", "rows"), lambda = 1, ...) {
  check_dots_empty(...)
  n <- check_whole(n, "n")
  margin <- match_option(margin, c("columns", "rows"), "margin")
  lambda <- check_lambda(lambda)
  v <- if (margin == "columns") t(x$H) else x$W
  n <- min(n, nrow(v))
  tn <- rownames(v)
  if (is.null(tn)) tn <- as.character(seq_len(nrow(v)))
  if (lambda < 1) {
    # relevance in the pLSA form: the columns' (or rows') distributions
    # given each component and the components' weights
    tf <- topic_form(x, "{.fn terms} by relevance")
    p <- if (margin == "columns") tf$beta else {
      W <- unname(x$W)
      sweep(W, 2, pmax(colSums(W), 1e-300), "/")
    }
    out <- tn[top_term_index(p, n, relevance_matrix(p, tf$lambda, lambda))]
  } else {
  # (W in files: read a shard at a time)
  out <- if (inherits(v, "aspectr_factor_files")) unlist(lapply(factor_top_rows(v, n), function(i) tn[i])) else
    apply(v, 2, function(p) tn[order(p, decreasing = TRUE)[seq_len(n)]])
  }
  matrix(out, nrow = n, dimnames = list(NULL, colnames(x$W)))
}

#' @export
nobs.aspectr_nmf <- function(object, ...) {
  check_dots_empty(...)
  prod(as.numeric(object$dims))
}

# ---- autoplot, logLik, augment -----------------------------------------------

#' @rdname autoplot.aspectr
#' @exportS3Method ggplot2::autoplot
autoplot.aspectr_nmf <- function(object, n = NULL, type = c("H", "W", "convergence", "clusters"),
                                 annotation = NULL, ...) {
  check_dots_empty(...)
  check_ggplot2()
  if (!is.null(n)) n <- check_whole(n, "n")
  type <- match_option(type, c("H", "W", "convergence", "clusters"), "type")
  if (type == "convergence") {
    d <- data.frame(iteration = seq_along(object$objective), objective = object$objective)
    return(ggplot2::ggplot(d, ggplot2::aes(x = .data$iteration, y = .data$objective)) +
             ggplot2::geom_line() + ggplot2::scale_y_log10() +
             ggplot2::labs(title = "Convergence") + ggplot2::theme_minimal())
  }
  if (type == "clusters") {
    cls <- max.col(t(object$H), ties.method = "first")
    d <- data.frame(factor = factor(seq_len(object$k)), columns = tabulate(cls, object$k))
    return(ggplot2::ggplot(d, ggplot2::aes(x = .data$factor, y = .data$columns)) +
             ggplot2::geom_col(fill = "grey50") +
             ggplot2::labs(title = "Column clusters") + ggplot2::theme_minimal())
  }
  md <- nmf_map(object, type, n, annotation)
  gg_heatmap(md$z, c(0, 1), map_palette(), md$main, "share of the\ncomponent's\nmaximum",
             tracks = md$tracks, xlab = md$xlab)
}

#' @rdname logLik.aspectr_fit
#' @export
logLik.aspectr_nmf <- function(object, ...) {
  check_dots_empty(...)
  if (object$loss != "kl") {
    abort_unsupported("{.fn logLik} of a {object$loss} NMF",
                      "only the generalized KL loss is a likelihood (the Poisson model).",
                      "Compare fits by their objective, or fit {.code nmf(x, k, loss = \"kl\")}.")
  }
  abort_noncount(object)
  df <- object$k * (sum(object$dims) - 1)
  structure(object$loglik_const - object$divergence, df = as.integer(df),
            nobs = prod(as.numeric(object$dims)), class = "logLik")
}

#' @rdname augment.aspectr_fit
#' @export
augment.aspectr_nmf <- function(x, data, ...) {
  check_dots_empty(...)
  x <- rows_in_memory(x)
  if (!is.null(x$weighting)) return(nmf_augment_weighted(x, if (!missing(data)) data))
  if (!missing(data) && is.data.frame(data)) {
    return(augment_long(data, unname(x$W), t(unname(x$H)), rep(1, x$k),
                        rownames(x$W) %||% as.character(seq_len(x$dims[1])),
                        colnames(x$H) %||% as.character(seq_len(x$dims[2]))))
  }
  d <- fitted_data(x, data, usage = "augment(fit, data = x)")
  p <- cell_terms(list(x$W, t(x$H)), rep(1, x$k), d)
  cols <- cell_index_columns(d, c("row", "column"))
  tibble::as_tibble(c(cols, list(value = d$val, .fitted = rowSums(p),
                                 .component = max.col(p, ties.method = "first"))))
}
