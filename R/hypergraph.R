#' Hypergraph affinities among tuples of points
#'
#' Builds the sparse super-symmetric affinity tensor of multi-way clustering
#' (Shashua, Zass and Hazan 2006): every tuple of `order` distinct points is
#' scored by how well one model fits them, and gets the affinity
#' \eqn{\exp(-r^2 / \sigma^2)}, where \eqn{r^2} is the model's fitting
#' residual. Pairwise distances cannot tell that three points lie on one
#' line; a tuple's residual can, which is what lets [multiway_cluster()]
#' separate points on intersecting lines or planes.
#'
#' Residuals: \eqn{r^2} is the mean squared orthogonal distance of the
#' tuple's points to the best-fitting model: a line (`"line"`, an affine
#' subspace of dimension 1), a plane (`"plane"`, dimension 2) or a linear
#' subspace through the origin of dimension `dim` (`"subspace"`), all by the
#' eigenvalues of the points' scatter (Eckart-Young). A user `fun` gets the
#' tuple's points (an `order x ncol(x)` matrix) and returns the residual
#' \eqn{r} (a non-negative number).
#'
#' Tuples: with `n_tuples = NULL` every `order`-subset is scored (refused
#' above `getOption("aspectr.max_tuples", 2e7)` subsets); otherwise
#' `n_tuples` distinct random subsets are drawn (all of them when
#' `n_tuples` reaches their number), the usual way to keep the tensor's size
#' linear in the number of points. Affinities
#' below `cutoff` are dropped, so the tensor stays sparse.
#'
#' @param x A numeric matrix or data frame, one point per row.
#' @param order The number of points per tuple (the tensor's order), at
#'   least one more than the model needs to fit any tuple exactly (3 for
#'   lines, 4 for planes, `dim + 1` for a linear subspace).
#' @param model `"line"`, `"plane"` or `"subspace"`.
#' @param sigma Scale of the affinity. The default is the 10% quantile of
#'   the residuals \eqn{r} of the scored tuples (a tenth of random tuples
#'   fit well when a few structures are present).
#' @param n_tuples Number of random tuples, or `NULL` for all.
#' @param fun Optional residual function of a tuple's points; overrides
#'   `model`.
#' @param dim Dimension of the `"subspace"` model (default `order - 1`).
#' @param cutoff Affinities below this are not stored.
#' @inheritParams plsa
#' @return An [aspectr_symtensor][symtensor()] of order `order` on
#'   `nrow(x)` points, with attributes `sigma` and `tuples` (the number of
#'   tuples scored).
#' @seealso [multiway_cluster()], [sntf()].
#' @references Shashua, A., Zass, R. and Hazan, T. (2006). Multi-way
#'   clustering using super-symmetric non-negative tensor factorization.
#'   ECCV 2006.
#' @examples
#' set.seed(1)
#' t <- runif(30, -1, 1)
#' x <- rbind(cbind(t[1:15], 0.5 * t[1:15]), cbind(t[16:30], -t[16:30]))
#' a <- hypergraph_affinity(x, order = 3, model = "line")
#' a
#' @export
hypergraph_affinity <- function(x, order = 3, model = c("line", "plane", "subspace"), sigma = NULL,
                                n_tuples = NULL, fun = NULL, dim = NULL, cutoff = 1e-8, seed = NULL,
                                threads = NULL) {
  check_required(x, "a numeric matrix or data frame with one point per row")
  seed <- check_seed(seed)
  if (is.data.frame(x)) x <- as.matrix(x)
  check_points(x)
  if (anyNA(x) || any(!is.finite(x))) abort_input("{.arg x} must not contain NA, NaN or Inf; it has {sum(!is.finite(x))} such entr{?y/ies}.", "value", arg = "x")
  if (max(abs(x)) > 1e150) {
    abort_input("{.arg x}'s coordinates must be at most 1e150 in absolute value (their squared distances must be finite), not {format(max(abs(x)))}.",
                "value", arg = "x")
  }
  n <- nrow(x)
  model <- match_option(model, c("line", "plane", "subspace"), "model")
  order <- check_whole(order, "order", min = 2, max = n, what = "at most the number of points")
  if (!is.null(dim) && model != "subspace") {
    abort_input("{.arg dim} applies to {.code model = \"subspace\"} only, not to {.code model = \"{model}\"} (given {describe(dim)}).",
                "argument", arg = "dim")
  }
  q <- switch(model, line = 1L, plane = 2L,
              subspace = if (is.null(dim)) order - 1L else check_whole(dim, "dim", min = 1, max = ncol(x)))
  affine <- model != "subspace"
  if (is.null(fun)) {
    need <- if (affine) q + 2L else q + 1L
    if (order < need) {
      abort_input(c("{.arg order} = {order} is too small for a {model} model: any {order} points fit it exactly.",
                    i = "Use {.code order >= {need}}."), "argument", arg = "order")
    }
  } else if (!is.function(fun)) {
    abort_input("{.arg fun} must be a function of a tuple's points returning a residual, not {describe(fun)}.",
                "type", arg = "fun")
  }
  if (!is.null(sigma)) sigma <- check_number(sigma, "sigma", 0, Inf, lower_open = TRUE)
  cutoff <- check_number(cutoff, "cutoff", 0, 1, upper_open = TRUE)
  threads <- resolve_threads(threads)
  tuples <- if (is.null(n_tuples)) {
    total <- choose(n, order)
    if (total > getOption("aspectr.max_tuples", 2e7)) {
      abort_input(c("Scoring all {format(total, big.mark = ',')} tuples of {n} points is too much.",
                    i = "Set {.arg n_tuples} to sample tuples, or raise {.code options(aspectr.max_tuples)}."),
                  "argument", arg = "n_tuples")
    }
    cpp_all_tuples(n, order)
  } else {
    n_tuples <- check_whole(n_tuples, "n_tuples", min = 1)
    total <- choose(n, order)
    if (n_tuples >= total) {
      cpp_all_tuples(n, order)
    } else if (total <= 2e6 || (n_tuples > total / 2 && total <= getOption("aspectr.max_tuples", 2e7))) {
      # enumerable, or most of all subsets wanted: an exact sample without
      # replacement from the enumeration
      every <- cpp_all_tuples(n, order)
      every[, sort(with_seed(seed, sample.int(total, n_tuples))), drop = FALSE]
    } else {
      with_seed(seed, sample_tuples(n, order, n_tuples))
    }
  }
  r2 <- if (is.null(fun)) {
    tuple_residuals_chunked(x, tuples, q, affine, threads)
  } else {
    vapply(seq_len(ncol(tuples)), function(t) {
      v <- fun(x[tuples[, t] + 1L, , drop = FALSE])
      if (!is.numeric(v) || length(v) != 1 || is.na(v) || v < 0 || !(v <= 1e150)) {
        abort_input("{.arg fun} must return one non-negative number per tuple, at most 1e150 (its square is taken), not {describe(v)}.",
                    "value", arg = "fun", call = rlang::caller_env(4))
      }
      v^2
    }, numeric(1))
  }
  if (is.null(sigma)) {
    sigma <- sqrt(stats::quantile(r2, 0.1, names = FALSE))
    if (!(sigma > 0)) sigma <- sqrt(max(mean(r2), .Machine$double.eps))
  }
  a <- exp(-r2 / sigma^2)
  keep <- a >= cutoff
  idx <- t(tuples[, keep, drop = FALSE] + 1L)
  out <- new_symtensor(idx, a[keep], n, rownames(x))
  attr(out, "sigma") <- sigma
  attr(out, "tuples") <- ncol(tuples)
  out
}

# n_tuples distinct random order-subsets of 1..n (0-based columns, each
# sorted), drawn in vectorized batches; for n_tuples well below the number
# of subsets (more than 1e7 here), so repeats are rare.
sample_tuples <- function(n, order, n_tuples) {
  out <- matrix(integer(), order, 0)
  key_of <- function(m) {
    if (order * log2(n) < 52) colSums((m - 1) * n^(seq_len(order) - 1)) else apply(m, 2, paste, collapse = ".")
  }
  keys <- numeric()
  tries <- 0
  while (ncol(out) < n_tuples && tries < 100) {
    tries <- tries + 1
    need <- n_tuples - ncol(out)
    m <- matrix(sample.int(n, order * ceiling(1.2 * need), replace = TRUE), order)
    m <- matrix(m[order(rep(seq_len(ncol(m)), each = order), m)], order)  # sort each column
    ok <- colSums(m[-1, , drop = FALSE] == m[-order, , drop = FALSE]) == 0
    m <- m[, ok, drop = FALSE]
    k <- key_of(m)
    fresh <- !duplicated(k) & !(k %in% keys)
    m <- m[, fresh, drop = FALSE]
    k <- k[fresh]
    take <- seq_len(min(ncol(m), need))
    out <- cbind(out, m[, take, drop = FALSE])
    keys <- c(keys, k[take])
  }
  storage.mode(out) <- "integer"
  out <- out[, do.call(base::order, lapply(seq_len(order), function(p) out[p, ])), drop = FALSE]
  out - 1L
}

#' Multi-way clustering
#'
#' Clusters points by the structure that tuples of them share: builds the
#' hypergraph affinity tensor ([hypergraph_affinity()]) and factors it by
#' super-symmetric NTF ([sntf()]); each point goes to the component with the
#' largest entry in its row of `G`.
#'
#' @section Outliers:
#' A point that lies on none of the structures (an outlier) belongs to few
#' well-fitting tuples, so its row of `G` is small. The strength of a point
#' is the largest entry of its row divided by the median of that quantity
#' over the points of its cluster; a point whose strength is below
#' `outlier` gets `NA`. The default 0.25 separated planted outliers (points
#' at least 0.2 off every line, or 0.3 off every plane, in the unit square
#' or cube) from points on the structures in our simulations, where points
#' on a structure had strength at least 0.3 and outliers at most 0.19 for
#' lines, 0.28 for planes (raise `outlier` when outliers are close to the
#' structures; 0 labels every point). Points in no kept tuple have a zero
#' row and always get `NA`.
#'
#' @inheritParams hypergraph_affinity
#' @param k Number of clusters.
#' @param outlier Strength below which a point is an outlier and gets `NA`
#'   (see the section Outliers), a number in \[0, 1).
#' @param method,nrun,max_iter,tol Passed to [sntf()].
#' @param ... Further arguments to [sntf()] (`alpha`, `omega`, `sparsity`,
#'   `orthogonal`, ...).
#' @return An object of class `aspectr_multiway`: `cluster` (labels, `NA`
#'   for outliers), `strength` (see Outliers), `membership`, `fit` (the
#'   [sntf()] fit),
#'   `affinity` (the tensor), `sigma`, `time`, `call`.
#' @examples
#' set.seed(1)
#' t <- runif(40, -1, 1)
#' x <- rbind(cbind(t[1:20], 0.5 * t[1:20]), cbind(t[21:40], -t[21:40])) +
#'   matrix(rnorm(80, sd = 0.01), 40)
#' mc <- multiway_cluster(x, 2, model = "line", seed = 1)
#' table(mc$cluster, rep(1:2, each = 20))
#' @export
multiway_cluster <- function(x, k, order = 3, model = c("line", "plane", "subspace"), sigma = NULL,
                             n_tuples = NULL, fun = NULL, dim = NULL, outlier = 0.25,
                             method = "alpha", nrun = 10,
                             max_iter = 1000, tol = 1e-6, seed = NULL, threads = NULL, ...) {
  call <- match.call()
  check_required(x, "a numeric matrix or data frame with one point per row")
  check_points(if (is.data.frame(x)) as.matrix(x) else x)
  k <- check_whole(k, "k", min = 1, max = max(NROW(x), 1), what = "at most the number of points")
  outlier <- check_number(outlier, "outlier", 0, 1, upper_open = TRUE)
  check_fit_controls(nrun, max_iter, tol, seed, threads, FALSE)
  start <- proc.time()[["elapsed"]]
  aff <- hypergraph_affinity(x, order = order, model = model, sigma = sigma, n_tuples = n_tuples,
                             fun = fun, dim = dim, seed = seed, threads = threads)
  if (!length(aff$values)) {
    abort_input("No tuple has an affinity above the cutoff: increase {.arg sigma}.", "value", arg = "sigma")
  }
  fit <- sntf(aff, k, method = method, nrun = nrun, max_iter = max_iter, tol = tol, seed = seed,
              threads = threads, ...)
  # strength: the largest entry of a point's row of G relative to the
  # median of that over its cluster; weak points are outliers
  G <- fit$G
  top <- apply(G, 1, max)
  cluster <- fit$cluster
  strength <- rep(0, length(top))
  for (j in unique(stats::na.omit(cluster))) {
    in_j <- which(cluster == j)
    strength[in_j] <- top[in_j] / stats::median(top[in_j])
  }
  names(strength) <- names(cluster)
  cluster[strength < outlier | !(top > 0)] <- NA_integer_
  structure(list(cluster = cluster, strength = strength, outlier = outlier,
                 membership = fit$membership, fit = fit, affinity = aff,
                 sigma = attr(aff, "sigma"), k = k, order = aff$order,
                 time = proc.time()[["elapsed"]] - start, call = call),
            class = "aspectr_multiway")
}

#' @export
print.aspectr_multiway <- function(x, ...) {
  check_dots_empty(...)
  cat(sprintf("<aspectr_multiway> %d clusters of %s points from order-%d affinities (%s of %s tuples kept, sigma %.3g)\n",
              x$k, format(length(x$cluster), big.mark = ","), x$order,
              format(length(x$affinity$values), big.mark = ","),
              format(attr(x$affinity, "tuples"), big.mark = ","), x$sigma))
  cat("cluster sizes:", paste(tabulate(x$cluster, x$k), collapse = " "),
      if (anyNA(x$cluster)) sprintf("(%d unassigned)", sum(is.na(x$cluster))) else "", "\n")
  cat(sprintf("sntf: %s, relative error %.4g, %d iterations\n", sntf_label(x$fit), x$fit$rel_error,
              x$fit$iterations))
  invisible(x)
}

#' @export
predict.aspectr_multiway <- function(object, newdata = NULL, type = c("membership", "class"), ...) {
  check_dots_empty(...)
  predict(object$fit, newdata = newdata, type = type)
}

#' @rdname plot.aspectr_sntf
#' @param data For a multi-way clustering: the points (first two columns
#'   plotted, coloured by cluster, unassigned points as grey crosses); without
#'   it the membership heatmap of the fit.
#' @export
plot.aspectr_multiway <- function(x, data = NULL, ...) {
  if (!is.null(data) && !((is.matrix(data) || is.data.frame(data)) && NROW(data) == length(x$cluster))) {
    abort_input("{.arg data} must be NULL or the clustered points, a matrix or data frame with {length(x$cluster)} rows, not {describe(data)}.",
                "argument", arg = "data")
  }
  if (is.null(data) || ncol(as.matrix(data)) < 2) return(invisible(plot(x$fit, ...)))
  data <- as.matrix(data)
  cols <- grDevices::hcl.colors(x$k, "Dark 3")
  pc <- ifelse(is.na(x$cluster), "grey70", cols[x$cluster])
  graphics::plot(data[, 1], data[, 2], col = pc, pch = ifelse(is.na(x$cluster), 4, 19),
                 xlab = colnames(data)[1] %||% "x1", ylab = colnames(data)[2] %||% "x2",
                 main = "Multi-way clusters", ...)
  invisible(x)
}

# The residuals in chunks of tuples, so that R sees an interrupt between
# chunks (each well under a second) instead of after all 2e7 tuples.
tuple_residuals_chunked <- function(x, tuples, q, affine, threads, chunk = 1e5) {
  nt <- ncol(tuples)
  if (nt <= chunk) return(cpp_tuple_residuals(x, tuples, q, affine, threads))
  out <- numeric(nt)
  for (b in seq(1, nt, by = chunk)) {
    e <- min(b + chunk - 1, nt)
    out[b:e] <- cpp_tuple_residuals(x, tuples[, b:e, drop = FALSE], q, affine, threads)
  }
  out
}

# ---- summary and autoplot of multi-way clusterings ---------------------------

#' @rdname autoplot.aspectr
#' @exportS3Method ggplot2::autoplot
autoplot.aspectr_multiway <- function(object, ...) {
  check_dots_empty(...)
  check_ggplot2()
  cl <- object$cluster
  cl[is.na(cl)] <- object$k + 1L
  membership_heatmap(object$membership, cl, "Memberships (outliers last)")
}

#' @export
summary.aspectr_multiway <- function(object, ...) {
  check_dots_empty(...)
  cl <- object$cluster
  structure(list(
    k = object$k, n = length(cl), order = object$order, unassigned = sum(is.na(cl)),
    outlier = object$outlier, sigma = object$sigma,
    clusters = data.frame(cluster = seq_len(object$k), size = tabulate(cl, object$k),
                          median_strength = vapply(seq_len(object$k), function(j) {
                            s <- object$strength[which(cl == j)]
                            if (length(s)) stats::median(s) else NA_real_
                          }, numeric(1))),
    fit = summary(object$fit)
  ), class = "summary.aspectr_multiway")
}

#' @export
print.summary.aspectr_multiway <- function(x, ...) {
  check_dots_empty(...)
  cat(sprintf("Multi-way clustering: %d clusters of %s points from order-%d affinities (sigma %.3g)\n",
              x$k, format(x$n, big.mark = ","), x$order, x$sigma))
  cat(sprintf("%d point%s unassigned (strength below %g)\n\n", x$unassigned,
              if (x$unassigned == 1) "" else "s", x$outlier))
  print(x$clusters, row.names = FALSE, digits = 3)
  invisible(x)
}

# x: a numeric matrix of at least two points (rows)
check_points <- function(x, call = rlang::caller_env()) {
  if (!is.matrix(x) || !is.numeric(x) || nrow(x) < 2) {
    abort_input("{.arg x} must be a numeric matrix or data frame with one point per row (at least 2), not {describe(x)}.",
                "type", arg = "x", call = call)
  }
  if (ncol(x) < 1) {
    abort_input("{.arg x} must give each point at least one coordinate (a column), not {nrow(x)} points of none.",
                "empty", arg = "x", call = call)
  }
}
