#' Choose the rank of a non-negative CP decomposition by masked cross-validation
#'
#' For each rank in `k` and each of `nrun` repetitions, a random fraction
#' `holdout` of the cells of `x` is left out of the fit ([ntf()] with
#' `mask =`, see "Missing values and weights" there) and the error of the
#' fitted model on those cells is measured. A repetition holds out the same
#' cells at every rank, so that the ranks are compared on the same cells.
#' The suggested rank is, by default, the smallest whose mean held-out
#' error is within one standard error of the smallest mean (`rule =
#' "1se"`, the one-standard-error rule of Hastie, Tibshirani and Friedman
#' 2009, section 7.10); ranks above the true one fit a little of the noise
#' and their held-out errors differ from it by less than the repetitions
#' do. `rule = "min"` takes the smallest mean. This is the tensor counterpart of
#' [nmf_rank()]`(method = "mask")` (Owen and Perry 2009 for held-out cells
#' in matrix factorization). For sparse data the held-out cells are drawn
#' apart from the non-zero cells and from the zeros (the same fraction of
#' each), so that the held-out error measures both the counts and the
#' zeros; the data stay sparse. Cells missing in `x` (`NA` in an array) are
#' left out of every fit and never held out.
#'
#' @param x A non-negative array (2-way or more; `NA` cells are missing), a
#'   sparse tensor ([sptensor()]) or anything [ntf()] takes in memory.
#' @param k Candidate ranks.
#' @param holdout Fraction of the cells held out in each repetition, in
#'   (0, 0.5].
#' @param nrun Repetitions (each with its own held-out cells, the same at
#'   every rank, and a start per rank).
#' @param loss,method The loss and method of the fits (see [ntf()]).
#' @param max_iter,tol Iteration limit and tolerance of each fit.
#' @param seed Seed of the held-out cells and of the starts (`NULL`: R's
#'   random numbers).
#' @param threads Threads of each fit.
#' @param rule How the rank is suggested: `"1se"` (default) the smallest
#'   rank within one standard error of the smallest mean held-out error
#'   (with one repetition there is no standard error, and it is the
#'   smallest error), `"min"` the smallest mean held-out error.
#' @param ... Not used.
#' @return An `aspectr_nmf_rank` object (printed, plotted and
#'   `autoplot()`ed, with ggplot2, as [nmf_rank()]'s): `table` with, per rank, the mean
#'   held-out relative error `test_error` (the root of the sum of squared
#'   errors over the held-out cells divided by the root of their sum of
#'   squares), its standard deviation over the repetitions `test_sd`, the
#'   standard error of the mean `test_se`, and the same error over the cells
#'   of the fit `train_error`; `best`, the suggested rank; `rule`;
#'   `details`, one row per fit (with `converged`). Fits that do not
#'   converge within `max_iter` are counted in one message at the end.
#' @references Hastie, T., Tibshirani, R. and Friedman, J. (2009). *The
#'   Elements of Statistical Learning*, 2nd ed. Springer.
#'
#'   Owen, A. B. and Perry, P. O. (2009). Bi-cross-validation of
#'   the SVD and the nonnegative matrix factorization. *The Annals of
#'   Applied Statistics* 3(2), 564-594.
#' @seealso [ntf()], [nmf_rank()].
#' @examples
#' set.seed(1)
#' A <- matrix(runif(20 * 3), 20); B <- matrix(runif(15 * 3), 15); C <- matrix(runif(8 * 3), 8)
#' X <- array(0, c(20, 15, 8))
#' for (r in 1:3) X <- X + outer(outer(A[, r], B[, r]), C[, r])
#' X <- X + array(rnorm(length(X), sd = 0.05), dim(X))
#' sel <- ntf_rank(pmax(X, 0), k = 1:5, nrun = 2, seed = 1, max_iter = 200, tol = 1e-4)
#' sel
#' @export
ntf_rank <- function(x, k = 1:6, holdout = 0.1, nrun = 3, loss = c("frobenius", "kl"), method = NULL,
                     max_iter = 500, tol = 1e-5, seed = NULL, threads = NULL, rule = c("1se", "min"), ...) {
  check_dots_empty(...)
  check_required(x, "a non-negative array")
  if (inherits(x, "aspectr_shards")) {
    abort_input("{.arg x} must be data in memory for {.fn ntf_rank}, not {.fn shards}.", "type", arg = "x")
  }
  loss <- match_option(loss, c("frobenius", "kl"), "loss")
  rule <- match_option(rule, c("1se", "min"), "rule")
  # NA cells of an array: left out of every fit (ntf() leaves them out)
  na <- NULL
  x0 <- x
  if (is.array(x) && is.numeric(x) && anyNA(x)) {
    na <- which(is.na(x), arr.ind = TRUE)
    x0[is.na(x0)] <- 0
  }
  d <- as_aspect_data(x0, "x")
  dims <- as.numeric(d$dims)
  if (length(dims) < 2) abort_input("{.arg x} must have at least two modes.", "value", arg = "x")
  if (any(d$val < 0) || any(!is.finite(d$val))) {
    abort_input("{.arg x} must be non-negative and finite where it is not missing.", "value", arg = "x")
  }
  if (!is.numeric(k) || is.object(k) || !length(k) || anyNA(k)) {
    abort_input("{.arg k} must be a non-empty vector of whole-number ranks, not {describe(k)}.", "argument",
                arg = "k")
  }
  k <- sort(vapply(k, check_whole, integer(1), arg = "k", min = 1))
  check_k_distinct(k)
  ctl <- check_rank_controls(holdout, nrun, max_iter, tol, seed, threads)
  holdout <- ctl$holdout; nrun <- ctl$nrun; max_iter <- ctl$max_iter
  tol <- ctl$tol; seed <- ctl$seed; threads <- ctl$threads
  # the cells as linear (column-major) positions, exact in doubles
  strides <- cumprod(c(1, dims[-length(dims)]))
  linear <- function(idx0) drop(crossprod(strides, idx0)) + 1  # idx0: N x cells, 0-based
  nz <- linear(matrix(as.numeric(d$idx), nrow = length(dims)))
  na_lin <- if (is.null(na)) numeric(0) else drop((na - 1) %*% strides) + 1
  cells <- prod(dims)
  dense <- is.array(x) && !inherits(x, "aspectr_tensor")
  grid <- expand.grid(run = seq_len(nrun), k = k)
  # (each repetition holds out the same cells at every rank)
  seeds <- cv_seeds(seed, nrun, nrow(grid))
  res <- lapply(seq_len(nrow(grid)), function(t) {
    held <- with_seed(seeds$held[grid$run[t]], ntf_held_cells(nz, na_lin, cells, holdout, dense))
    left <- arrayInd(c(held, na_lin), dims)
    fit <- rank_fit(ntf(x, grid$k[t], loss = loss, method = method, mask = left, seed = seeds$fit[t],
                        max_iter = max_iter, tol = tol, threads = threads))
    hi <- arrayInd(held, dims)
    xv <- ntf_data_at(d, nz, held)
    v <- cp_values(fit, hi)
    # the error over the cells of the fit: sum (x - v)^2 = sum x^2 - 2 sum x v
    # + sum v^2 over the cells that count (every cell but the left-out ones),
    # in units of the data's largest value (the model's weights divided by
    # it), so that data of any scale neither underflow nor overflow
    train <- setdiff(seq_along(nz), match(c(held, na_lin), nz, nomatch = 0))
    m <- max(d$val)
    fs <- fit
    fs$weights <- fit$weights / m
    xt <- d$val[train] / m
    vt <- cp_values(fs, arrayInd(nz[train], dims))
    v2 <- cp_sum_squares(fs) - sum(cp_values(fs, left)^2)
    sq <- max(sum(xt^2) - 2 * sum(xt * vt) + v2, 0)
    list(k = grid$k[t], run = grid$run[t],
         test_error = rel_error(xv, v),
         train_error = sqrt(sq / max(sum(xt^2), 1e-300)), converged = isTRUE(fit$converged))
  })
  details <- do.call(rbind, lapply(res, as.data.frame))
  tab <- cv_rank_table(details)
  rownames(tab) <- NULL
  rank_convergence(details$converged, max_iter, tol, "ntf_rank()")
  structure(list(table = tab, method = "mask", best = cv_rank_best(tab, rule), details = details,
                 nrun = nrun, rule = rule, family = "ntf"),
            class = "aspectr_nmf_rank")
}

# Held-out cells (linear positions): a fraction of the non-zeros `nz` and,
# apart, of the zeros (sparse data), or of all cells (dense arrays); never
# the missing ones `na`
ntf_held_cells <- function(nz, na, cells, holdout, dense) {
  if (dense) {
    pool <- if (length(na)) setdiff(seq_len(cells), na) else seq_len(cells)
    return(pool[sample.int(length(pool), max(1L, round(holdout * length(pool))))])
  }
  held_stratified(nz, na, cells, holdout)
}

# x at the cells `at` (linear positions): its values where they are
# non-zero, 0 elsewhere
ntf_data_at <- function(d, nz, at) {
  pos <- match(at, nz)
  ifelse(is.na(pos), 0, d$val[pos])
}

# The CP model's values at the cells `idx` (cells x modes, 1-based)
cp_values <- function(fit, idx) {
  if (!nrow(idx)) return(numeric(0))
  p <- matrix(fit$weights, nrow(idx), fit$k, byrow = TRUE)
  for (n in seq_along(fit$factors)) p <- p * fit$factors[[n]][idx[, n], , drop = FALSE]
  rowSums(p)
}

# The sum of the squares of the CP model over every cell
cp_sum_squares <- function(fit) {
  G <- outer(fit$weights, fit$weights)
  for (f in fit$factors) G <- G * crossprod(f)
  sum(G)
}
