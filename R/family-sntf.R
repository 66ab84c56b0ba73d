#' Super-symmetric non-negative tensor factorization
#'
#' Fits a super-symmetric non-negative tensor \eqn{Y} of order \eqn{L} on
#' \eqn{n} points by \eqn{Y \approx \sum_j g_j \circ g_j \circ \cdots \circ
#' g_j} with \eqn{G = [g_1, \dots, g_k] \ge 0} (n x k), as in Cichocki et al.
#' (2007). With an affinity tensor among tuples of points
#' ([hypergraph_affinity()]) the rows of `G` are soft memberships of the
#' points in `k` clusters (Shashua, Zass and Hazan's multi-way clustering).
#'
#' Methods:
#' * `"alpha"`: the multiplicative alpha-divergence algorithm (eqs.
#'   8-9 of Cichocki et al.), `alpha > 0`; `alpha = 1` is the EMML (Kullback-Leibler) case and
#'   `alpha = 0` selects `"smart"`. Sparse: the ratio is evaluated at stored
#'   sets only.
#' * `"smart"`: the exponentiated-gradient SMART updates (eqs. 10-12) for
#'   the dual KL divergence; needs every cell strictly positive.
#' * `"beta"`: the beta-divergence multiplicative updates with an L1 penalty
#'   (eqs. 14-17): `cichocki_beta = 0` KL, `1` Frobenius (both sparse), `-1`
#'   Itakura-Saito; other values visit every cell, and `cichocki_beta <= -1` needs
#'   strictly positive data.
#' * `"average"`: the averaging approach (section 3.1): the slices are summed
#'   to a symmetric matrix \eqn{\bar Y = G \bar D G'}, factored by the
#'   fixed-point ALS of eq. 21 ([symnmf()] with `method = "fpals"`); `G` is
#'   recovered from \eqn{\tilde G = G \bar D^{1/2}} exactly.
#' * `"unfold"`: the unfolding approach (section 3.2): fixed-point ALS on the
#'   unfolded tensor (eqs. 27-28), \eqn{G \leftarrow [[M - L1/L]_+
#'   ((G'G)^{\circ (L-1)})^{-1}]_+} with \eqn{M} the contraction of `Y` with
#'   `G` in all modes but one.
#'
#' @section Step sizes:
#' The multiplicative methods update \eqn{g_{ij} \leftarrow g_{ij}
#' r_{ij}^{\omega e}} with a ratio \eqn{r} built from the symmetric
#' contraction \eqn{M} of the data with `G` in all modes but one (for
#' `"alpha"`, \eqn{r = M[(Y/Z)^\alpha] / s^{L-1}}, \eqn{Z} the model and
#' \eqn{s_j = \sum_i g_{ij}}). The exponents printed by Cichocki et al.
#' (2007), \eqn{\omega / \alpha} for `"alpha"`, come from the update of one
#' factor of a non-symmetric model, where \eqn{g_j} enters each cell once.
#' In the symmetric model it enters every cell \eqn{L} times, and all
#' \eqn{L} copies move together, so the printed step is \eqn{L} times too
#' long at \eqn{\alpha = 1}. Here \eqn{e} is the largest exponent for which
#' the step minimizes a majorizer of the symmetric objective, built from
#' Jensen's inequality over the \eqn{k} components, the weighted AM-GM (or
#' tangent) bound over the \eqn{L} positions, and \eqn{(\sum_i g_i
#' u_i)^L \le s^{L-1} \sum_i g_i u_i^L} for the total: \eqn{e = 1/L} for
#' alpha in (0, 1] and SMART, \eqn{1/(L\alpha)} for alpha > 1, and
#' \eqn{\gamma(\beta+1)/L} for `"beta"` with Fevotte and Idier's (2011)
#' \eqn{\gamma}. So `omega <= 1` never increases the objective (the tests
#' check every step against a plain-R implementation and the trace for
#' monotonicity), and `1 < omega < 2` over-relaxes (faster in practice, no
#' guarantee).
#'
#' The evidence: on a complete order-3 tensor of 7 points and 2 components,
#' from the same random start (divergence 43.1), 1, 2, 3, 5, 10 and 40
#' steps of the printed exponent (\eqn{\alpha = 1}, \eqn{\omega = 1}, no
#' column normalization) give KL divergences 7.9, 31.8, 69.5, 521,
#' \eqn{5 \times 10^{69}} and NaN, while the exponent \eqn{1/L} gives 20.8,
#' 10.7, 5.8, 2.3, 0.74 and 0.115. The paper normalizes the columns of `G`
#' after every step, which hides the overshoot in the scale; here the scale
#' of each column is kept, which leaves the model unchanged (it is what the
#' normalization's weights absorb), so `G` reproduces `Y` directly.
#'
#' `"average"` and `"unfold"` are fixed-point iterations without a descent
#' guarantee. Their maps are homogeneous of negative degree in the scale of
#' `G` (so the scale would oscillate), hence the column normalization of
#' Cichocki et al.: each iteration works on unit-norm directions, gives them
#' their least-squares scales (a k x k NNLS) and reports that model's
#' objective. `omega` relaxes their steps (\eqn{G \leftarrow (1-\omega) G +
#' \omega G_{new}}) and is halved whenever the objective rises, because the
#' plain step can cycle between two states. The `sparsity` exponent and the
#' `orthogonal` step carry no guarantee either; their objective trace is
#' reported as it comes.
#'
#' @param x A super-symmetric non-negative tensor: a [symtensor()] (each
#'   unordered index set stored once), a dense `n x n x n` array, or a sparse
#'   tensor holding every permutation ([sptensor()]). A symmetric matrix is
#'   an order-2 tensor.
#' @param k Number of components (clusters), between 1 and the number of
#'   points.
#' @param method `"alpha"` (default), `"smart"`, `"beta"`, `"average"` or
#'   `"unfold"`.
#' @param alpha The alpha of the alpha divergence (`>= 0`).
#' @param cichocki_beta The beta of the beta divergence in Cichocki et
#'   al.'s convention, which is [nmf()]'s `beta` minus 1 (`0` KL, `1`
#'   Frobenius, `-1` Itakura-Saito).
#' @param beta Deprecated name of `cichocki_beta` (it clashed with
#'   [nmf()]'s `beta`, on another scale); still accepted, with a warning.
#' @param omega Over-relaxation, in (0, 2): a multiple of the safe step.
#' @param sparsity The sparsity exponent of Cichocki et al.'s eq. 9: after each update
#'   the unit-sum columns are raised to the power `1 + sparsity` (positive
#'   sharpens, negative smooths; typically 0.001-0.005), keeping their
#'   scale.
#' @param L1 L1 penalty `L1 * sum(G)` added to the objective (methods
#'   `"beta"`, `"average"`, `"unfold"`).
#' @param orthogonal If `TRUE`, every iteration ends with the
#'   semi-orthogonality step \eqn{G \leftarrow G (G'G)^{-1/2}} (their eq. 29),
#'   negatives clipped and each column returned to its previous norm; at
#'   convergence the columns have (nearly) disjoint supports, so `G'G` is
#'   (nearly) diagonal. Under divergences that are infinite wherever the
#'   model vanishes on a non-zero cell (`"alpha"` with `alpha >= 1`,
#'   `"beta"` with `beta <= 0`) an entry is not clipped to zero but keeps
#'   at least a tenth of its value at each step, so the objective stays
#'   finite; the columns are then less orthogonal than with the other
#'   divergences.
#' @param init `"nndsvd"` (default): NNDSVD (Boutsidis and Gallopoulos) of
#'   the slice sum \eqn{\bar Y = G \bar D G'}, the non-negative part of
#'   each leading singular vector, zeros filled with the mean and mapped back
#'   to `G`; `"random"` (uniform); or an `n x k` non-negative starting
#'   matrix, or an earlier `sntf()` fit of the same data and k (a warm
#'   start from its `G`). Starts are scaled to the total of `x`. With
#'   `nrun > 1` the first start is `init` and the others are random.
#' @inheritParams plsa
#' @return An object of class `c("aspectr_sntf", "aspectr_fit")`: `G`
#'   (n x k, the factor of \eqn{Y \approx \sum_j g_j^{\circ L}}), `weights`
#'   (\eqn{(\sum_i g_{ij})^L}, the mass of each component), `membership`
#'   (rows of `G` scaled to sum 1), `cluster` (largest entry per row; `NA`
#'   for points without affinity), `objective` (the divergence being
#'   minimized, after each iteration), `value`, `rel_error` (relative
#'   Frobenius error of the model on the full tensor, comparable across
#'   methods), `iterations`, `converged`, `run`, `run_values`, `time`,
#'   `call`.
#'
#'   The fit is scale-equivariant: `x * c` gives `G * c^(1/L)` and the
#'   objective times `c` (alpha, SMART), `c^(beta+1)` (beta) or `c^2`
#'   (`"average"`, `"unfold"`), with `L1` scaled to match. When that
#'   objective does not fit in a double, a warning of class
#'   `aspectr_warning_numeric` says so.
#' @seealso [hypergraph_affinity()], [multiway_cluster()], [symnmf()].
#' @references Cichocki, A., Jankovic, M., Zdunek, R. and Amari, S. (2007).
#'   Sparse super symmetric tensor factorization. ICONIP 2007.
#'
#'   Fevotte, C. and Idier, J. (2011). Algorithms for nonnegative matrix
#'   factorization with the beta-divergence. Neural Computation 23(9).
#'
#'   Shashua, A., Zass, R. and Hazan, T. (2006). Multi-way clustering using
#'   super-symmetric non-negative tensor factorization. ECCV 2006.
#' @examples
#' set.seed(1)
#' G <- cbind(c(runif(10), rep(0, 10)), c(rep(0, 10), runif(10)))
#' Y <- array(0, c(20, 20, 20))
#' for (j in 1:2) Y <- Y + outer(outer(G[, j], G[, j]), G[, j])
#' fit <- sntf(Y, 2, seed = 1)
#' fit
#' table(fit$cluster, rep(1:2, each = 10))
#' @export
sntf <- function(x, k, method = c("alpha", "smart", "beta", "average", "unfold"),
                 alpha = 1, cichocki_beta = 0, omega = 1, sparsity = 0, L1 = 0, orthogonal = FALSE,
                 init = c("nndsvd", "random"), max_iter = 1000, tol = 1e-6, nrun = 1, short_iter = 0, short_keep = NULL, seed = NULL,
                 threads = NULL, verbose = FALSE, callback = NULL, ..., beta) {
  call <- match.call()
  check_dots_empty(...)
  check_required(x, "a super-symmetric tensor")
  method <- match_option(method, c("alpha", "smart", "beta", "average", "unfold"), "method")
  alpha <- check_number(alpha, "alpha", 0, Inf)
  beta <- renamed_arg(cichocki_beta, if (missing(beta)) NULL else beta, "beta", "cichocki_beta",
                      !missing(beta), !missing(cichocki_beta))
  beta <- check_number(beta, "cichocki_beta", -Inf, Inf)
  if (!is.finite(beta)) abort_input("{.arg cichocki_beta} must be finite.", "argument", arg = "cichocki_beta")
  # (alpha = 0 is SMART; its messages then say so)
  smart_as <- if (method == "alpha" && alpha == 0) "{.code alpha = 0} (SMART)" else "{.code method = \"smart\"}"
  if (method == "alpha" && alpha == 0) method <- "smart"
  omega <- check_number(omega, "omega", 0, 2, lower_open = TRUE, upper_open = TRUE)
  sparsity <- check_number(sparsity, "sparsity", -0.5, 0.5)
  L1 <- check_number(L1, "L1", 0, Inf)
  if (!is.finite(L1)) abort_input("{.arg L1} must be finite.", "argument", arg = "L1")
  if (L1 > 0 && method %in% c("alpha", "smart")) {
    abort_input(c("{.arg L1} applies to methods {.val beta}, {.val average} and {.val unfold}.",
                  i = "The alpha and SMART updates control sparsity through {.arg sparsity}."),
                "argument", arg = "L1")
  }
  orthogonal <- check_flag(orthogonal, "orthogonal")
  y <- sntf_data(x)
  n <- y$n; L <- y$order
  if (!length(y$values)) abort_input("{.arg x} has no non-zero entries.", "value", arg = "x")
  k <- check_whole(k, "k", min = 1, max = n, what = "at most the number of points")
  needs_all <- method == "smart" || (method == "beta" && !(beta %in% c(0, 1)))
  if (needs_all) y <- sym_complete(y)
  if ((method == "smart" || (method == "beta" && beta <= -1)) && any(y$values <= 0)) {
    what <- if (method == "smart") smart_as else "{.code cichocki_beta = {beta}}"
    abort_input(paste(what, "needs every cell of {.arg x} strictly positive (it takes log or negative powers of the data)."),
                "value", arg = "x")
  }
  ctl <- check_fit_controls(nrun, max_iter, tol, seed, threads, verbose)
  if (inherits(init, "aspectr_fit")) init <- unname(warm_start(init, "sntf", k, n)$G)
  init <- check_sym_init(init, n, k)
  start <- proc.time()[["elapsed"]]
  # The fit runs on x / s, s a power of 2 near max(x) whose L-th root is a
  # power of 2, so that no divergence under- or overflows at any scale of x;
  # G scales back by s^(1/L), the objective by s^p (p = 1 for the alpha
  # divergences and SMART, beta + 1 for beta, 2 for the Frobenius methods),
  # and L1 enters as L1 s^(1/L) / s^p (L1 / s^1.5 for "average", whose
  # factor scales as sqrt(s)).
  sc <- pow2_scale(y$values, root = 2 * L)
  deg <- switch(method, alpha = 1, smart = 1, beta = beta + 1, 2)
  y$values <- y$values / sc
  L1_s <- min(if (method == "average") rescale_value(L1, sc, -1.5) else rescale_value(L1, sc, 1 / L - deg), 1e100)
  idx0 <- t(y$index - 1L)
  mult <- sym_multiplicity(y$index)
  total <- sum(mult * y$values)
  first <- if (is.matrix(init)) init else if (init == "nndsvd") sntf_nndsvd(y, k) else NULL
  inits <- with_seed(ctl$seed, lapply(seq_len(ctl$nrun), function(r) {
    G0 <- if (r == 1 && !is.null(first)) first else matrix(stats::runif(as.numeric(n) * k, 0.1, 1), n, k)
    s <- colSums(G0)
    G0 * (total / sum(s^L))^(1 / L)
  }))
  slices <- if (method == "average") nmf_data(sym_slice_sum(y), "x") else NULL
  callback <- check_callback(callback)
  comp <- paste0("cluster_", seq_len(k))
  hook <- fit_hook(callback, ctl$verbose, "sntf()",
                   value = function(v) rescale_value(max(v, 0), sc, deg),
                   model = function(raw) {
                     # the averaging approach iterates on G D^(1/2) of the slice sum
                     G <- if (method == "average") {
                       s2 <- colSums(raw)^(2 / L)
                       sweep(raw, 2, ifelse(s2 > 0, s2^((L - 2) / 2), 1), "/")
                     } else raw
                     list(G = `dimnames<-`(G * sc^(1 / L), list(y$names, comp)))
                   })
  fit_start <- function(G0, iters) {
    if (method == "average") {
      sntf_average(slices, L, G0, L1_s, omega, orthogonal, iters, ctl$tol, ctl$threads,
                   ctl$verbose, hook, !is.null(callback))
    } else {
      cpp_sntf_fit(idx0, y$values, n, G0, method, alpha, beta, omega, sparsity, L1_s, orthogonal,
                   iters, ctl$tol, ctl$threads, ctl$verbose, hook, !is.null(callback))
    }
  }
  stg <- check_staging(short_iter, short_keep, ctl$nrun)
  env <- rlang::current_env()
  out <- tryCatch(fit_pipeline(inits, fit_start, function(r) r$G, hook, ctl, stg, "sntf()", value = last_objective),
                  aspectr_error_numeric = function(e) {
                    # (large exponents overflow the divergence's powers of x / model)
                    if (method == "beta" && abs(beta) > 2) {
                      abort_input(c("{.arg cichocki_beta} = {beta} is too large in absolute value for these data: the powers of the data and the model in the beta divergence overflow, and no start has a finite objective.",
                                    i = "Use a {.arg cichocki_beta} between -1 and 1, the usual values (0: KL, 1: Frobenius, -1: Itakura-Saito)."),
                                  "value", arg = "cichocki_beta", call = env)
                    }
                    if (method != "alpha" || alpha <= 1) stop(e)
                    abort_input(c("{.arg alpha} = {alpha} is too large for these data: the powers (x / model)^alpha of the alpha divergence overflow, and no start has a finite objective.",
                                  i = "Use a smaller {.arg alpha}."),
                                "value", arg = "alpha", call = env, parent = e)
                  })
  values <- out$values
  best <- out$best
  res <- out$res
  G <- res$G
  ynorm2 <- sum(mult * y$values^2)
  frob <- cpp_sntf_loss(idx0, y$values, n, G, "beta", 1, 1, 0, ctl$threads)
  # every objective is a divergence plus non-negative penalties: a value
  # below 0 is rounding (at an exact fit), which scaling back would blow up
  values <- pmax(values, 0); res$objective <- pmax(res$objective, 0)
  res$initial <- pmax(res$initial, 0)
  scaled <- values[best]
  values <- rescale_value(values, sc, deg)
  res$objective <- rescale_value(res$objective, sc, deg)
  res$initial <- rescale_value(res$initial, sc, deg)
  check_objective_range(values[best], scaled, "sntf() fit",
                        list(initial = res$initial, objective = res$objective, run_values = values))
  G <- G * sc^(1 / L)
  y$values <- y$values * sc
  fit <- new_sntf(G, y, k, method = method,
           params = list(alpha = alpha, cichocki_beta = beta, omega = omega, sparsity = sparsity, L1 = L1,
                         orthogonal = orthogonal),
           res = res, run = best, values = values, rel_error = sqrt(2 * frob / ynorm2),
           time = proc.time()[["elapsed"]] - start, threads = ctl$threads, seed = ctl$seed,
           call = call)
  finish_progress(fit, ctl$verbose, "sntf()", ctl$max_iter, ctl$tol)
}

sntf_data <- function(x, call = rlang::caller_env()) {
  if (inherits(x, "aspectr_symtensor")) return(x)
  # (the converters' errors name the fitter's call)
  if (inherits(x, "aspectr_tensor") || (is.array(x) && length(dim(x)) >= 2)) {
    return(with_error_call(as_symtensor(x), call))
  }
  if (methods::is(x, "Matrix") || inherits(x, "simple_triplet_matrix")) {
    return(with_error_call(as_symtensor(as_sptensor(x)), call))
  }
  abort_input("{.arg x} must be a super-symmetric tensor: a {.cls aspectr_symtensor}, a dense array, or a sparse tensor, not {describe(x)}.",
              "type", arg = "x", call = call)
}

# distinct ordered tuples of each sorted set: L! / prod(counts!)
sym_multiplicity <- function(index) {
  L <- ncol(index)
  if (!nrow(index)) return(numeric())
  runs <- matrix(1, nrow(index), L)
  denom <- rep(1, nrow(index))
  if (L > 1) for (p in 2:L) {
    same <- index[, p] == index[, p - 1]
    runs[, p] <- ifelse(same, runs[, p - 1] + 1, 1)
    denom <- denom * runs[, p]
  }
  factorial(L) / denom
}

# The slice sum  Ybar = sum over the last L-2 modes, a sparse n x n matrix.
sym_slice_sum <- function(y) {
  full <- sym_expand(y, raw = TRUE)
  Matrix::sparseMatrix(i = full$index[, 1], j = full$index[, 2], x = full$values,
                       dims = c(y$n, y$n))
}

# NNDSVD start from the slice sum: Ybar ~ Gt Gt' with Gt = G D^(1/2),
# D = diag(colSums(G))^(L-2); back to G by s = colSums(Gt)^(2/L).
sntf_nndsvd <- function(y, k) {
  L <- y$order
  Gt <- nndsvd_symmetric(nmf_data(sym_slice_sum(y), "x"), k)
  sc <- colSums(Gt)^(2 / L)
  sweep(Gt, 2, sc^((L - 2) / 2), "/")
}

# NNDSVD of a symmetric non-negative matrix A ~ H H': per leading singular
# pair the larger (in norm) of the positive and negative parts, scaled by
# the square root of the singular value; zeros filled with the mean.
nndsvd_symmetric <- function(nd, k) {
  # the same start whatever the storage: up to 400 points nmf_svd() takes
  # an exact SVD of dense input but a randomized one of sparse input, so
  # small sparse matrices are made dense for it
  if (is.null(nd$dense) && nd$dims[1] <= 400) {
    nd <- list(dense = as.matrix(nmf_sparse(nd)), dims = nd$dims)
  }
  s <- nmf_svd(nd, k)
  n <- nd$dims[1]
  H <- vapply(seq_len(k), function(j) {
    u <- s$u[, j]
    p <- pmax(u, 0); m <- pmax(-u, 0)
    v <- if (sum(p^2) >= sum(m^2)) p else m
    v / max(sqrt(sum(v^2)), 1e-300) * sqrt(s$d[j])
  }, numeric(n))
  H <- matrix(H, n, k)
  fill <- mean(H)
  H[H <= 0] <- if (fill > 0) fill else 1
  H
}

# The averaging approach: symmetric NMF of the slice sum, and back.
sntf_average <- function(nd, L, G0, L1, omega, orthogonal, max_iter, tol, threads, verbose,
                         hook = NULL, want_model = FALSE) {
  s0 <- colSums(G0)
  H0 <- sweep(G0, 2, s0^((L - 2) / 2), "*")
  r <- cpp_symnmf_fit(nd$dense, nd$i, nd$p, nd$x, nd$dims[1], H0, H0, "fpals", 0, L1, omega, orthogonal,
                      max_iter, tol, threads, verbose, hook, want_model, nd$div %||% 1)
  Ht <- r$H
  s <- colSums(Ht)^(2 / L)
  G <- sweep(Ht, 2, ifelse(s > 0, s^((L - 2) / 2), 1), "/")
  list(G = G, objective = r$objective, initial = r$initial, iterations = r$iterations,
       converged = r$converged, stopped = r$stopped)
}

new_sntf <- function(G, y, k, method, params, res, run, values, rel_error, time, threads, seed, call) {
  L <- y$order
  w <- colSums(G)^L
  ord <- order(w, decreasing = TRUE)
  G <- G[, ord, drop = FALSE]
  w <- w[ord]
  comp <- paste0("cluster_", seq_len(k))
  dimnames(G) <- list(y$names, comp)
  rs <- rowSums(G)
  membership <- G / ifelse(rs > 0, rs, NA)
  cluster <- max.col(G, ties.method = "first")
  cluster[!(rs > 0)] <- NA_integer_
  names(cluster) <- y$names
  fit <- c(list(
    G = G, weights = stats::setNames(w, comp), membership = membership, cluster = cluster,
    method = method,
    loss = switch(method, alpha = "alpha", smart = "dual_kl", beta = "beta", "frobenius")),
    params, list(
    k = k, order = L, n = y$n, nnz = length(y$values),
    objective = as.numeric(res$objective), value = values[run], initial = res$initial,
    rel_error = rel_error, iterations = as.integer(res$iterations),
    converged = isTRUE(res$converged), run = run, run_values = values,
    time = time, threads = threads, seed = seed, call = call, stopped = isTRUE(res$stopped)))
  new_aspectr_fit("sntf", fit, factors = list(G = G), weights = fit$weights,
                  params = c(list(method = method), params))
}

sntf_label <- function(x) {
  switch(x$method,
         alpha = sprintf("alpha-divergence (alpha = %g) multiplicative", x$alpha),
         smart = "SMART (alpha = 0)",
         beta = sprintf("beta-divergence (cichocki_beta = %g) multiplicative", x$cichocki_beta),
         average = "averaging approach (symmetric NMF of the slice sum, FP-ALS)",
         unfold = "unfolding approach (FP-ALS)")
}

#' @export
print.aspectr_sntf <- function(x, ...) {
  check_dots_empty(...)
  cat(sprintf("<aspectr_sntf> %d components of a super-symmetric order-%d tensor on %s points\n",
              x$k, x$order, format(x$n, big.mark = ",")))
  cat(sprintf("method: %s%s\n", sntf_label(x), if (x$orthogonal) ", semi-orthogonal" else ""))
  cat(sprintf("objective: %s after %d iteration%s (%s); relative error %.4g\n",
              format(signif(x$value, 7)), x$iterations, if (x$iterations == 1) "" else "s",
              if (x$converged) "converged" else "not converged", x$rel_error))
  sizes <- tabulate(x$cluster, x$k)
  cat("cluster sizes:", paste(sizes, collapse = " "),
      if (anyNA(x$cluster)) sprintf("(%d unassigned)", sum(is.na(x$cluster))) else "", "\n")
  invisible(x)
}

#' @export
summary.aspectr_sntf <- function(object, ...) {
  check_dots_empty(...)
  conf <- apply(object$membership, 1, max)
  structure(list(
    k = object$k, method = sntf_label(object), order = object$order, n = object$n,
    value = object$value, rel_error = object$rel_error, iterations = object$iterations,
    converged = object$converged, runs = object$run_values,
    table = data.frame(cluster = colnames(object$G), size = tabulate(object$cluster, object$k),
                       weight = signif(unname(object$weights), 4),
                       mean_membership = vapply(seq_len(object$k), function(j) {
                         m <- conf[which(object$cluster == j)]
                         if (length(m)) mean(m) else NA_real_
                       }, numeric(1)))),
    class = "summary.aspectr_sntf")
}

#' @export
print.summary.aspectr_sntf <- function(x, ...) {
  check_dots_empty(...)
  cat(sprintf("Super-symmetric NTF, order %d, %d points, %d components\n", x$order, x$n, x$k))
  cat(sprintf("%s; objective %s after %d iterations (%s), relative error %.4g\n", x$method,
              format(signif(x$value, 7)), x$iterations, if (x$converged) "converged" else "not converged",
              x$rel_error))
  cat(sprintf("best of %d start%s\n\n", length(x$runs), if (length(x$runs) == 1) "" else "s"))
  print(x$table, row.names = FALSE, digits = 4)
  invisible(x)
}

#' Plot a super-symmetric NTF or symmetric NMF fit
#'
#' @param x An `aspectr_sntf` or `aspectr_symnmf` fit.
#' @param type `"membership"` (heatmap of the soft memberships, points
#'   ordered by cluster) or `"convergence"` (objective per iteration).
#' @param ... Passed to the base graphics functions.
#' @return `x`, invisibly.
#' @examples
#' set.seed(1)
#' G <- cbind(c(runif(10), rep(0, 10)), c(rep(0, 10), runif(10)))
#' fit <- symnmf(tcrossprod(G), 2, seed = 1)
#' plot(fit)
#' plot(fit, "convergence")
#' @export
plot.aspectr_sntf <- function(x, type = c("membership", "convergence"), ...) {
  type <- match_option(type, c("membership", "convergence"), "type")
  if (type == "convergence") {
    graphics::plot(seq_along(x$objective), x$objective, type = "l", xlab = "iteration",
                   ylab = "objective", main = "Convergence", ...)
    return(invisible(x))
  }
  m <- x$membership
  ord <- order(x$cluster, -apply(m, 1, max, na.rm = TRUE), na.last = TRUE)
  mm <- m[ord, , drop = FALSE]
  mm[is.na(mm)] <- 0
  # (the clusters' names label the axis: no axis title beside them to overlap)
  graphics::image(seq_len(nrow(mm)), seq_len(ncol(mm)), mm, col = grDevices::hcl.colors(50, "YlOrRd", rev = TRUE),
                  xlab = "point (ordered by cluster)", ylab = if (is.null(colnames(mm))) "cluster" else "",
                  main = "Soft memberships", axes = FALSE, ...)
  graphics::axis(2, at = seq_len(ncol(mm)), labels = colnames(mm), las = 1, cex.axis = 0.7)
  graphics::box()
  invisible(x)
}

#' @rdname plot.aspectr_sntf
#' @export
plot.aspectr_symnmf <- plot.aspectr_sntf

#' Memberships and clusters of the fitted points
#'
#' @param object An `aspectr_sntf` or `aspectr_symnmf` fit.
#' @param newdata Not used: the memberships are those of the fitted points
#'   (new points need their affinities to be refitted).
#' @param type `"membership"` (n x k matrix, rows summing to 1) or `"class"`
#'   (cluster labels).
#' @param ... Must be empty; an unknown argument is an error.
#' @return A matrix or an integer vector.
#' @examples
#' set.seed(1)
#' G <- cbind(c(runif(10), rep(0, 10)), c(rep(0, 10), runif(10)))
#' fit <- symnmf(tcrossprod(G), 2, seed = 1)
#' predict(fit, type = "class")
#' @export
predict.aspectr_sntf <- function(object, newdata = NULL, type = c("membership", "class"), ...) {
  check_dots_empty(...)
  type <- match_option(type, c("membership", "class"), "type")
  if (!is.null(newdata)) {
    abort_input(c("{.arg newdata} must be NULL: {.fn predict} for symmetric factorizations returns the fitted points' memberships, not {describe(newdata)}.",
                  i = "To place new points, add them to the affinities and refit."),
                "argument", arg = "newdata")
  }
  if (type == "class") object$cluster else object$membership
}

#' @rdname predict.aspectr_sntf
#' @export
predict.aspectr_symnmf <- predict.aspectr_sntf

#' @export
fitted.aspectr_sntf <- function(object, ...) {
  check_dots_empty(...)
  check_size(as.numeric(object$n)^object$order, "The fitted array would have {size} cells.")
  G <- unname(object$G)
  out <- array(0, rep(object$n, object$order))
  for (j in seq_len(ncol(G))) {
    term <- G[, j]
    if (object$order > 1) for (p in 2:object$order) term <- outer(term, G[, j])
    out <- out + term
  }
  out
}

#' @export
nobs.aspectr_sntf <- function(object, ...) {
  check_dots_empty(...)
  object$n
}

# ---- autoplot, residuals, tidy, glance, augment ------------------------------

#' @rdname autoplot.aspectr
#' @exportS3Method ggplot2::autoplot
autoplot.aspectr_sntf <- function(object, ...) {
  check_dots_empty(...)
  check_ggplot2()
  membership_heatmap(object$membership, object$cluster, "Cluster memberships (SNTF)")
}

#' @rdname residuals.aspectr_fit
#' @export
residuals.aspectr_sntf <- function(object, x, ...) {
  check_dots_empty(...)
  if (missing(x)) abort_missing_data("x", "residuals(fit, x)")
  y <- as.array(as_symtensor(x))
  f <- fitted(object)
  if (!identical(dim(y), dim(f))) {
    abort_input("{.arg x} must be the fitted tensor ({paste(dim(f), collapse = ' x ')}), not {paste(dim(y), collapse = ' x ')}.",
                "newdata", arg = "x")
  }
  y - f
}

#' @rdname tidy.aspectr_fit
#' @export
tidy.aspectr_sntf <- function(x, ...) {
  check_dots_empty(...)
  membership_tibble(x$membership)
}

#' @rdname tidy.aspectr_fit
#' @export
glance.aspectr_sntf <- function(x, ...) {
  check_dots_empty(...)
  tibble::tibble(k = x$k, method = x$method, order = x$order, objective = x$value,
                 rel_error = x$rel_error, iterations = x$iterations, converged = x$converged,
                 stopped = isTRUE(x$stopped), n_points = x$n)
}

#' @rdname augment.aspectr_fit
#' @export
augment.aspectr_sntf <- function(x, data = NULL, ...) {
  check_dots_empty(...)
  augment_clusters(x, data)
}
