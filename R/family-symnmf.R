#' Symmetric non-negative matrix factorization
#'
#' Factors a symmetric non-negative affinity matrix \eqn{A \approx H H'} with
#' \eqn{H \ge 0} (n x k), the graph-clustering counterpart of [nmf()]: row
#' `i` of `H` holds the memberships of point `i`, and the cluster of a point
#' is its largest entry. It is also the building block of the averaging
#' approach of [sntf()].
#'
#' * `"anls"` (default) and `"hals"`: the penalty formulation of Kuang, Yun
#'   and Park (2015),
#'   \eqn{\min_{W, H \ge 0} \frac12\|A - W H'\|_F^2 + \frac{c}{2}\|W -
#'   H\|_F^2 + L1 (\sum W + \sum H)} with \eqn{c} = `coupling`, by alternating exact non-negative
#'   least squares (coordinate descent) or one HALS sweep per block. Both
#'   minimize the penalized objective block by block, so its trace never
#'   increases; the penalty drives `W` and `H` together.
#' * `"fpals"`: the fixed-point ALS of Cichocki et al. (2007, eq. 21),
#'   \eqn{H \leftarrow [(A H - L1)(H'H)^{-1}]_+}, a fixed-point iteration
#'   with no descent guarantee. The map is homogeneous of degree -1 in the
#'   scale of `H`, so, as Cichocki et al. prescribe, columns are normalized after
#'   every step; each iteration gives the directions their least-squares
#'   scales (a k x k NNLS), and that model's objective is the one reported.
#'   Steps are relaxed by `omega`, which is halved whenever the objective
#'   rises: the plain step can cycle between two states.
#'
#' Sparse input stays sparse: every update needs only the product \eqn{A H}
#' and k x k Gram matrices. A `dgCMatrix` is read in place as its own
#' transpose. A sparse symmetric `Matrix` (`dsCMatrix`, one triangle stored)
#' is made a whole `dgCMatrix` (24 bytes per stored entry) when that copy is
#' at most `getOption("aspectr.transpose_limit", 2^30)` bytes, and read in
#' place as its triangle, \eqn{A = T + T' - diag(T)}, beyond (set the option
#' to 0 to read it in place always): the products from the triangle take
#' about 1.6 times as long, the whole fit 1.15 to 1.45 times. The values are
#' divided by the fit's scale as they are read.
#'
#' Besides the relative change `tol`, a fit stops as converged when its
#' objective stays below \eqn{10^{-24} \|A\|_F^2} (an exact
#' factorization, to a relative error of \eqn{10^{-12}}): there the
#' objective falls to its rounding floor, where its relative change never
#' settles. With `tol = 0` every iteration runs.
#'
#' @param a A symmetric non-negative matrix: base `matrix` or any `Matrix`
#'   matrix (sparse stays sparse).
#' @param k Rank, between 1 and `nrow(a)`.
#' @param method `"anls"` (default), `"hals"` or `"fpals"`.
#' @param coupling Penalty of `"anls"`/`"hals"` tying `W` to `H`; default
#'   the largest entry of `a`. Kuang et al. suggest its square, which is
#'   the same for an affinity matrix whose largest entry is 1 and, unlike
#'   the largest entry, does not scale with `a`: for `a` of large entries
#'   it makes `W - H` outweigh the fit, which stops at its start.
#' @param lambda Deprecated name of `coupling` (it clashed with the
#'   component weights `lambda` of pLSA fits); still accepted, with a
#'   warning.
#' @param L1 L1 penalty on the factors.
#' @param omega Relaxation of `"fpals"`, in (0, 2).
#' @param init `"nndsvd"` (default; the non-negative parts of the leading
#'   singular vectors, zeros filled with the mean), `"random"` (uniform on
#'   \eqn{[0, 2\sqrt{\bar a / k}]}, as Kuang et al.) or an `n x k`
#'   non-negative starting matrix, or an earlier `symnmf()` fit of the same
#'   data and k (a warm start from its `H`). With `nrun > 1` the first start
#'   is `init` and the others are random.
#' @inheritParams plsa
#' @return An object of class `c("aspectr_symnmf", "aspectr_fit")`: `H`
#'   (n x k), `membership` (rows of `H` scaled to sum 1), `cluster`,
#'   `objective` (the trace of the objective the method minimizes), `value`,
#'   `sym_objective` (\eqn{\frac12\|A - HH'\|^2 + L1 \sum H} of the returned
#'   `H`), `rel_error` (\eqn{\|A - HH'\|_F / \|A\|_F}), `iterations`,
#'   `converged`, `run`, `run_values`, `time`, `call`.
#'
#'   With `coupling` scaled along (`a * c` with `coupling * c`, `L1 * c^1.5`) the
#'   fit is scale-equivariant: `H` scales by `sqrt(c)`, the objective by
#'   `c^2`; so it is with the default `coupling`, which scales with `a`. When the objective does not fit in a double, a warning
#'   of class `aspectr_warning_numeric` says so.
#' @references Kuang, D., Yun, S. and Park, H. (2015). SymNMF: nonnegative
#'   low-rank approximation of a similarity matrix for graph clustering.
#'   Journal of Global Optimization 62, 545-574.
#' @seealso [sntf()], [nmf()].
#' @examples
#' set.seed(1)
#' H <- cbind(c(runif(15), rep(0, 15)), c(rep(0, 15), runif(15)))
#' A <- tcrossprod(H)
#' fit <- symnmf(A, 2, seed = 1)
#' fit
#' table(fit$cluster, rep(1:2, each = 15))
#' @export
symnmf <- function(a, k, method = c("anls", "hals", "fpals"), coupling = NULL, L1 = 0, omega = 1,
                   init = c("nndsvd", "random"), max_iter = 1000, tol = 1e-6, nrun = 1,
                   short_iter = 0, short_keep = NULL, seed = NULL,
                   threads = NULL, verbose = FALSE, callback = NULL, ..., lambda) {
  call <- match.call()
  check_dots_empty(...)
  coupling <- renamed_arg(coupling, if (missing(lambda)) NULL else lambda, "lambda", "coupling",
                          !missing(lambda))
  check_required(a, "a square symmetric non-negative matrix")
  method <- match_option(method, c("anls", "hals", "fpals"), "method")
  L1 <- check_number(L1, "L1", 0, Inf)
  omega <- check_number(omega, "omega", 0, 2, lower_open = TRUE, upper_open = TRUE)
  if (inherits(a, "aspectr_symtensor")) a <- as_sptensor(a)
  # a sparse symmetric Matrix is made whole (a copy of 24 bytes per stored
  # entry, for faster products) within getOption("aspectr.transpose_limit"),
  # and read in place as its stored triangle beyond; other input is read as
  # the whole matrix (its own transpose: no copy of it)
  triangle <- methods::is(a, "symmetricMatrix") && methods::is(a, "sparseMatrix")
  if (triangle) {
    a <- methods::as(methods::as(a, "dMatrix"), "CsparseMatrix")
    if (nmf_keep_rows(2 * length(a@x))) {
      a <- methods::as(a, "generalMatrix")
      triangle <- FALSE
    }
  }
  nd <- if (triangle) sym_triangle_data(a) else nmf_data(a, "a")
  n <- nd$dims[1]
  if (nd$dims[2] != n) {
    abort_input("{.arg a} must be a square symmetric matrix, not {nd$dims[1]} x {nd$dims[2]}.",
                "value", arg = "a")
  }
  if (!triangle) check_symmetric_matrix(nd)
  nd$symmetric <- TRUE
  k <- check_whole(k, "k", min = 1, max = n, what = "at most the number of points")
  amax <- if (!is.null(nd$dense)) max(nd$dense) else if (length(nd$x)) max(nd$x) else 0
  if (!(amax > 0)) abort_input("{.arg a} has no positive entries.", "value", arg = "a")
  lambda_default <- is.null(coupling)
  coupling <- if (lambda_default) amax else check_number(coupling, "coupling", 0, Inf)
  lambda <- coupling
  ctl <- check_fit_controls(nrun, max_iter, tol, seed, threads, verbose)
  if (inherits(init, "aspectr_fit")) init <- unname(warm_start(init, "symnmf", k, n)$H)
  init <- check_sym_init(init, n, k)
  start <- proc.time()[["elapsed"]]
  # The fit runs on a / s, s a power of 4 near max(a) (so H scales back by
  # the exact power of 2 sqrt(s)): the objective ~ ||a||^2 neither underflows
  # nor overflows at any scale of `a`. The penalties scale along
  # (1/2 ||a - WH'||^2 + lambda/2 ||W - H||^2 + L1 (sum W + sum H) is s^2
  # times the same objective of a / s with lambda / s and L1 / s^1.5).
  s <- pow2_scale(if (!is.null(nd$dense)) nd$dense else nd$x, root = 2)
  nd <- scale_nmf_data(nd, s)
  # (penalties capped at 1e300 in scaled units: that large, they make the
  # zero factor optimal either way)
  L1_s <- min(rescale_value(L1, s, -1.5), 1e300)
  # lambda / s (the default max(a): max(a) / s, between 1 and 4)
  lambda_s <- min(if (lambda_default) amax / s else rescale_value(lambda, s, -1), 1e300)
  scale <- 2 * sqrt(nd$total / (as.numeric(n) * n) / k)
  first <- if (is.matrix(init)) init / sqrt(s) else if (init == "nndsvd") nndsvd_symmetric(nd, k) else NULL
  inits <- with_seed(ctl$seed, lapply(seq_len(ctl$nrun), function(r) {
    if (r == 1 && !is.null(first)) first else matrix(stats::runif(as.numeric(n) * k), n, k) * scale
  }))
  # the start's temporaries (several of H's size) collected before the fit
  # allocates its own, when H is large enough for that to be worth a
  # collection of R's young objects (about a millisecond)
  if (as.numeric(n) * k >= 1e5) invisible(gc(verbose = FALSE, full = FALSE))
  callback <- check_callback(callback)
  comp <- paste0("cluster_", seq_len(k))
  hook <- fit_hook(callback, ctl$verbose, "symnmf()", value = function(v) rescale_value(v, s, 2),
                   model = function(raw) list(H = `dimnames<-`(raw * sqrt(s), list(nd$dimnames[[1]], comp))))
  fit_start <- function(H0, iters) {
    cpp_symnmf_fit(nd$dense, nd$i, nd$p, nd$x, n, H0, H0, method, lambda_s, L1_s, omega, FALSE,
                   iters, ctl$tol, ctl$threads, ctl$verbose, hook, !is.null(callback), nd$div %||% 1,
                   isTRUE(nd$triangle))
  }
  stg <- check_staging(short_iter, short_keep, ctl$nrun)
  out <- fit_pipeline(inits, fit_start, function(r) r$H, hook, ctl, stg, "symnmf()", value = last_objective)
  values <- out$values
  best <- out$best
  res <- out$res
  rel_error <- sqrt(max(2 * (res$sym_objective - L1_s * sum(res$H)), 0) / res$xnorm2)
  scaled <- values[best]
  values <- rescale_value(values, s, 2)
  res$objective <- rescale_value(res$objective, s, 2)
  res$initial <- rescale_value(res$initial, s, 2)
  res$sym_objective <- rescale_value(res$sym_objective, s, 2)
  check_objective_range(values[best], scaled, "symnmf() fit",
                        list(initial = res$initial, objective = res$objective, run_values = values))
  H <- res$H * sqrt(s)
  comp <- paste0("cluster_", seq_len(k))
  dimnames(H) <- list(nd$dimnames[[1]], comp)
  rs <- rowSums(H)
  cluster <- max.col(H, ties.method = "first")
  cluster[!(rs > 0)] <- NA_integer_
  names(cluster) <- nd$dimnames[[1]]
  fit <- list(
    H = H, membership = H / ifelse(rs > 0, rs, NA), cluster = cluster, method = method,
    loss = "frobenius",
    coupling = coupling, L1 = L1, omega = omega, k = k, n = n, nnz = nd$nnz,
    objective = as.numeric(res$objective), value = values[best], initial = res$initial,
    sym_objective = res$sym_objective,
    rel_error = rel_error,
    iterations = as.integer(res$iterations), converged = isTRUE(res$converged),
    run = best, run_values = values, time = proc.time()[["elapsed"]] - start,
    threads = ctl$threads, seed = ctl$seed, call = call, stopped = isTRUE(res$stopped))
  fit <- new_aspectr_fit("symnmf", fit, factors = list(H = H),
                         weights = stats::setNames(colSums(H)^2, comp),
                         params = list(method = method, coupling = coupling, L1 = L1, omega = omega))
  finish_progress(fit, ctl$verbose, "symnmf()", ctl$max_iter, ctl$tol)
}

# "nndsvd", "random", or a non-negative n x k starting matrix
check_sym_init <- function(init, n, k, call = rlang::caller_env()) {
  if (!is.matrix(init)) return(match_option(init, c("nndsvd", "random"), "init", call = call))
  if (!is.numeric(init) || !all(dim(init) == c(n, k)) || anyNA(init) || any(!is.finite(init)) ||
      any(init < 0) || !any(init > 0)) {
    abort_input("A matrix {.arg init} must be a finite non-negative {n} x {k} matrix (not all zero), not {describe(init)}{if (is.numeric(init) && all(dim(init) == c(n, k))) ' with negative, non-finite or only zero entries' else ''}.", "argument",
                arg = "init", call = call)
  }
  init
}

# A sparse symmetric Matrix as its stored triangle (upper or lower), which
# the core reads in place as the whole matrix (X = T + T' - diag(T)), with
# the whole matrix's total and number of non-zeros. `csc` (the matrix
# itself) gives the whole matrix to nmf_sparse()'s users.
sym_triangle_data <- function(a, call = rlang::caller_env()) {
  a <- methods::as(methods::as(a, "dMatrix"), "CsparseMatrix")
  if (any(dim(a) == 0)) {
    abort_input("{.arg a} must have at least one row and one column, not {nrow(a)} x {ncol(a)}.",
                "empty", arg = "a", call = call)
  }
  check_values(a@x, "a", call)
  st <- cpp_triangle_scan(a@i, a@p, a@x)
  if (st$nnz == 0) {
    abort_input("{.arg a} has no positive entries: there is nothing to fit.", "empty", arg = "a", call = call)
  }
  # the names of both sides, the columns' when both are given (as Matrix's
  # dimnames() of a symmetric matrix)
  nm <- a@Dimnames[[2]] %||% a@Dimnames[[1]]
  if (!is.null(nm)) nm <- as.character(nm)
  dn <- list(nm, nm)
  list(dense = NULL, i = a@i, p = a@p, x = a@x, dims = as.integer(dim(a)), dimnames = dn,
       nnz = if (st$nnz <= .Machine$integer.max) as.integer(st$nnz) else st$nnz, total = st$total,
       triangle = TRUE, csc = a)
}

check_symmetric_matrix <- function(nd, call = rlang::caller_env()) {
  if (!is.null(nd$dense)) {
    A <- nd$dense
    if (max(abs(A - t(A))) > 1e-10 * max(abs(A), 1)) abort_not_symmetric(call)
    return(invisible())
  }
  # (one pass in C++; every column's row indices are sorted)
  if (!cpp_csc_symmetric(nd$i, nd$p, nd$x, nd$dims[1], 1e-10)) abort_not_symmetric(call)
  invisible()
}

abort_not_symmetric <- function(call) {
  abort_input(c("{.arg a} must be symmetric: {.code a[i, j]} must equal {.code a[j, i]}.",
                i = "Symmetrize an affinity matrix with {.code (a + t(a)) / 2}."),
              "value", arg = "a", call = call)
}

#' @export
print.aspectr_symnmf <- function(x, ...) {
  check_dots_empty(...)
  cat(sprintf("<aspectr_symnmf> symmetric NMF A ~ HH', %s points, rank %d, %s\n",
              format(x$n, big.mark = ","), x$k,
              switch(x$method, anls = "penalized ANLS", hals = "penalized HALS",
                     fpals = "fixed-point ALS")))
  cat(sprintf("objective: %s after %d iteration%s (%s); relative error %.4g\n",
              format(signif(x$value, 7)), x$iterations, if (x$iterations == 1) "" else "s",
              if (x$converged) "converged" else "not converged", x$rel_error))
  cat("cluster sizes:", paste(tabulate(x$cluster, x$k), collapse = " "), "\n")
  invisible(x)
}

#' Adjusted Rand index
#'
#' Agreement of two partitions of the same objects, corrected for chance
#' (Hubert and Arabie 1985): 1 for identical partitions (up to relabelling),
#' about 0 for independent ones.
#'
#' @param x,y Two vectors of labels of the same length (factor, character,
#'   logical or numeric codes), at least 2 objects.
#' @param na.rm A missing label (`NA`) is an error by default; `TRUE` drops
#'   every object with a missing label in `x` or `y` (for instance the
#'   unassigned points of [multiway_cluster()]) before comparing.
#' @return A number, at most 1.
#' @examples
#' adjusted_rand_index(c(1, 1, 2, 2), c("a", "a", "b", "b"))
#' adjusted_rand_index(c(1, 1, 2, NA), c("a", "a", "b", "b"), na.rm = TRUE)
#' adjusted_rand_index(iris$Species, kmeans(iris[, 1:4], 3)$cluster)
#' @export
adjusted_rand_index <- function(x, y, na.rm = FALSE) {
  check_required(x, "a vector of labels"); check_required(y, "a vector of labels")
  na.rm <- check_flag(na.rm, "na.rm")
  check_labels(x, "x", na_ok = na.rm); check_labels(y, "y", na_ok = na.rm)
  if (length(x) != length(y)) {
    abort_input("{.arg x} and {.arg y} must have the same length, not {length(x)} and {length(y)}.",
                "value", arg = "y")
  }
  ok <- !(is.na(x) | is.na(y))
  if (sum(ok) < 2) {
    abort_input("{.arg x} and {.arg y} must label at least 2 objects{if (na.rm) ' without NA' else ''}, not {sum(ok)}.",
                "value", arg = "x")
  }
  tab <- table(as.character(x[ok]), as.character(y[ok]))
  comb2 <- function(v) sum(v * (v - 1) / 2)
  n <- sum(tab)
  index <- comb2(tab)
  a <- comb2(rowSums(tab)); b <- comb2(colSums(tab))
  expected <- a * b / comb2(n)
  maximum <- (a + b) / 2
  if (maximum == expected) return(if (index == maximum) 1 else 0)
  (index - expected) / (maximum - expected)
}

# nmf_data() output divided by s (dense, compressed-column and Matrix forms).
scale_nmf_data <- function(nd, s) {
  if (s == 1) return(nd)
  # sparse values are divided as the core reads them (no scaled copy)
  if (!is.null(nd$dense)) nd$dense <- nd$dense / s else nd$div <- (nd$div %||% 1) * s
  if (!is.null(nd$total)) nd$total <- nd$total / s
  nd
}

#' @export
nobs.aspectr_symnmf <- function(object, ...) {
  check_dots_empty(...)
  object$n
}

#' @export
summary.aspectr_symnmf <- function(object, ...) {
  check_dots_empty(...)
  conf <- apply(object$membership, 1, max)
  structure(list(
    k = object$k, n = object$n, method = object$method, value = object$value,
    rel_error = object$rel_error, iterations = object$iterations, converged = object$converged,
    clusters = data.frame(cluster = seq_len(object$k),
                          size = tabulate(object$cluster, object$k),
                          mean_membership = vapply(seq_len(object$k), function(j) {
                            in_j <- which(object$cluster == j)
                            if (length(in_j)) mean(conf[in_j]) else NA_real_
                          }, numeric(1)))
  ), class = "summary.aspectr_symnmf")
}

#' @export
print.summary.aspectr_symnmf <- function(x, ...) {
  check_dots_empty(...)
  cat(sprintf("Symmetric NMF (%s), %d clusters of %s points\n", x$method, x$k,
              format(x$n, big.mark = ",")))
  cat(sprintf("objective %s, relative error %.4g; %d iterations, %s\n\n",
              format(signif(x$value, 7)), x$rel_error, x$iterations,
              if (x$converged) "converged" else "not converged"))
  print(x$clusters, row.names = FALSE, digits = 3)
  invisible(x)
}

# ---- autoplot, fitted, residuals, tidy, glance, augment ----------------------

#' @rdname autoplot.aspectr
#' @exportS3Method ggplot2::autoplot
autoplot.aspectr_symnmf <- function(object, ...) {
  check_dots_empty(...)
  check_ggplot2()
  membership_heatmap(object$membership, object$cluster, "Cluster memberships (symmetric NMF)")
}

#' @rdname residuals.aspectr_fit
#' @export
fitted.aspectr_symnmf <- function(object, ...) {
  check_dots_empty(...)
  check_size(as.numeric(object$n)^2, "The fitted matrix would have {size} cells.")
  tcrossprod(object$H)
}

#' @rdname residuals.aspectr_fit
#' @export
residuals.aspectr_symnmf <- function(object, x, ...) {
  check_dots_empty(...)
  if (missing(x)) abort_missing_data("x", "residuals(fit, x)")
  a <- as.matrix(x)
  if (!identical(dim(a), c(object$n, object$n))) {
    abort_input("{.arg x} must be the fitted {object$n} x {object$n} matrix, not {describe(x)}.", "newdata", arg = "x")
  }
  a - fitted(object)
}

#' @rdname tidy.aspectr_fit
#' @export
tidy.aspectr_symnmf <- function(x, ...) {
  check_dots_empty(...)
  membership_tibble(x$membership)
}

#' @rdname tidy.aspectr_fit
#' @export
glance.aspectr_symnmf <- function(x, ...) {
  check_dots_empty(...)
  tibble::tibble(k = x$k, method = x$method, objective = x$value, rel_error = x$rel_error,
                 iterations = x$iterations, converged = x$converged, stopped = isTRUE(x$stopped),
                 n_points = x$n)
}

#' @rdname augment.aspectr_fit
#' @export
augment.aspectr_symnmf <- function(x, data = NULL, ...) {
  check_dots_empty(...)
  augment_clusters(x, data)
}
