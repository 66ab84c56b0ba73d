#' Non-negative tensor factorization (non-negative CP)
#'
#' Fits \eqn{X \approx \sum_r w_r\, a_r^{(1)} \circ \cdots \circ a_r^{(N)}} with
#' non-negative factors but without simplex constraints, for N-way arrays and
#' sparse tensors (and matrices, N = 2).
#'
#' * `loss = "frobenius"`: \eqn{\frac12\|X - M\|_F^2} (reported as one half
#'   of the squared error, as every Frobenius fit of the package) by HALS (`method = "hals"`,
#'   exact column-wise updates) or Lee-Seung multiplicative updates
#'   (`method = "mu"`). The residual is never formed: the loss comes from
#'   contractions over the non-zeros and k x k Gram matrices. Factors are
#'   returned with unit Euclidean norm, their scale in `weights`.
#' * `loss = "kl"`: the generalized KL divergence
#'   \eqn{\sum x \log(x/m) - x + m}: at the optimum the total of the model
#'   equals the total of the data, so the fit is the KL aspect model
#'   ([plsa()]) with weights \eqn{w = \lambda \sum X}, and it is computed
#'   as such: by coordinate descent over the modes (`method = "cd"`, the
#'   default; the row subproblems of CP-APR, Chi and Kolda 2012, solved by
#'   coordinate Newton steps) or by the multiplicative (EM-equivalent)
#'   updates of Huang and Sidiropoulos (`method = "mu"`). Factors are
#'   returned with unit sum.
#'
#' @inheritParams plsa
#' @param init `"random"` (default), a list of starting factors (one
#'   non-negative d x k matrix per mode; the model is the sum of the outer
#'   products of their columns), or an earlier `ntf()` fit of the same data
#'   shape and k (a warm start). It is the first of the `nrun` starts.
#' @param x A non-negative N-way array or `table`, a sparse tensor
#'   ([sptensor()]), or a matrix (dense or sparse); or data split along the
#'   first mode with [shards()], fitted shard by shard (see "Data in
#'   shards"), in this process, from files or on the workers of `cluster`:
#'   Frobenius HALS and multiplicative updates, and KL multiplicative
#'   updates (`method = "mu"`; with weights too, see "Missing values and
#'   weights").
#' @param k Rank, a positive whole number (at most the number of non-zeros).
#' @param loss `"frobenius"` (default) or `"kl"`.
#' @param method For Frobenius `"hals"` (default) or `"mu"`; for KL `"cd"`
#'   (default) or `"mu"`. `NULL` picks the default.
#' @param mask Cells left out of the loss (missing or held out): a logical
#'   array of the dimensions of `x` (`TRUE` where a cell is left out; for a
#'   matrix also a logical `Matrix`), a sparse tensor ([sptensor()]) of those
#'   dimensions whose stored cells are left out, or an index matrix (one
#'   column per mode, one row per cell, 1-based). `NA` cells of an array are
#'   left out too, without a mask. The cells a sparse `x` does not store are
#'   observed zeros unless `observed` says otherwise. See "Missing values and
#'   weights".
#' @param observed For data where only some cells were observed: cells in
#'   any of the forms of `mask`, the only ones that count; every other cell,
#'   an unstored zero of a sparse tensor included, is treated as missing.
#'   `mask` then leaves out some of them.
#' @param weights Non-negative weights per cell: a numeric array of the
#'   dimensions of `x`, or a sparse tensor (for a matrix also a sparse
#'   `Matrix`) whose unlisted cells weigh 0 (only its cells count, as with
#'   `observed`). Weight 0 is a missing cell.
#' @param mode_weights Non-negative weights per index of each mode: a list
#'   with one entry per mode, `NULL` or a vector of that mode's size. A cell
#'   weighs the product of its indices' weights and its own weight;
#'   whole-number weights of one mode give the fit of `x` with each slice of
#'   that mode repeated that many times.
#'
#' @section Data in shards:
#' Data split along the first mode with [shards()] are fitted where they
#' are, and the fit equals the in-memory fit with the same arguments and
#' seed up to rounding (factors, weights, objective trace and iterations).
#' Each shard updates its own rows of the first mode's factor; the other
#' modes are updated in turn from sums over the shards (k values per index
#' of the mode, and k x k Gram matrices). Under the Frobenius loss (HALS,
#' the default, or `method = "mu"`) an iteration passes over the shards'
#' cells once per mode after the first: the shards update their rows given
#' the Hadamard product of the other modes' Gram matrices and return, in
#' the same pass, their rows' Gram matrix and their part of the second
#' mode's contraction; the squared norm of the data is summed over the
#' shards once. Under KL, coordinate descent (the default, as in memory)
#' has each shard solve its rows of the first mode, and every other mode's
#' rows take each coordinate Newton step (Hsieh and Dhillon 2011) from sums
#' over the shards, one pass over the shards per step of all the mode's
#' rows (about k + 1 passes per mode); the multiplicative updates (`method
#' = "mu"`) run by the EM passes of [plsa()]. Without weights, the random
#' start's first factor
#' is drawn by the process that holds each shard (the numbers of the
#' in-memory start), never as a whole.
#'
#' @section Missing values and weights:
#' With `NA` in `x`, `mask`, `observed` or weights the loss sums over the
#' cells with their weights \eqn{\omega}: \eqn{\frac12\sum \omega (x - m)^2}
#' or \eqn{\sum \omega (x \log(x/m) - x + m)} with \eqn{m} the model; a
#' left-out cell has weight 0 and plays no part in the fit. The updates use
#' the weighted sufficient statistics (no imputation inside the loop): the
#' contractions (MTTKRP) of the weighted data \eqn{\omega \circ x} as in the
#' unweighted fit (a pass over its non-zeros), and for each row of each
#' factor its own Gram matrix (Frobenius) or linear term (KL) from the
#' weights, which costs \eqn{k^2} (or \eqn{k}) per left-out or reweighted
#' cell on top of the unweighted step. The modes are updated in turn, each
#' row of a factor by its own problem: one sweep of exact coordinate
#' updates (`"hals"`), the multiplicative update of Lee and Seung (2001)
#' with its own Gram matrix (Frobenius `"mu"`), one sweep of coordinate
#' Newton steps from and to the best scale of the model (KL `"cd"`, the row
#' subproblems of Chi and Kolda 2012), or Lee and Seung's KL multiplicative
#' update with its own linear term (KL `"mu"`: with weights the modes are
#' updated one after another, not all from one E-step as the unweighted
#' fit's EM-equivalent updates are, and an iteration passes over the
#' non-zeros once per mode and once for the objective). With all weights
#' 1, HALS, the Frobenius multiplicative updates and KL coordinate descent
#' give the unweighted fit. Every method keeps its objective from rising.
#' The objective is that of the weighted loss (no log-likelihood:
#' [logLik()] refuses the fit);
#' [fitted()] gives the model's values on every cell, those of the
#' left-out cells included (an imputation). The fit's `weighting` says
#' which weights were given.
#'
#' Data split along the first mode with [shards()] take the same arguments
#' with `loss = "kl"` and `method = "cd"` (the default, as in memory) or
#' `"mu"`, and with `loss = "frobenius"` and `method = "hals"` or `"mu"`, in this
#' process, from files or on the workers of `cluster`: each shard receives
#' its rows' part of the weights (those of `mask`, `observed` and `weights`
#' in its rows, its part of the first mode's `mode_weights`) and updates
#' its rows of the first factor itself; the other modes are updated in
#' turn from sums over the shards (k values per index of the mode), as in
#' memory, so the fit equals the in-memory fit from the same start up to
#' rounding. An iteration makes one pass over the shards per mode after
#' the first and one for the objective (Frobenius: one to rescale the
#' first mode's rows, whose norms are balanced with the other modes' as in
#' memory; each pass also brings the deviating cells of the mode's rows,
#' those of `mask`, `observed` and `weights`, k + 2 numbers each; KL
#' coordinate descent: the shards solve their rows of the first mode, with
#' two more passes for the model's best scale, and every other mode takes
#' one pass per Newton step of all its indices, each shard adding its
#' cells' parts of the steps' sums). Shards hold no missing cells: give
#' them with `mask`. Out of core, each shard's weighted cells are written
#' once to a temporary `.shard` file (one shard in memory at a time;
#' removed when the fit ends) and read from it a chunk of cells at a time
#' in every pass, as unweighted shards are.
#'
#' @return An object of class `c("aspectr_ntf", "aspectr_fit")`: `weights`
#'   (decreasing), `factors` (one d_n x k matrix per mode, with dimnames),
#'   `loss`, `method`, `objective` (the loss after each iteration), `value`,
#'   `iterations`, `converged`, `run`, `run_values`, `time`, `call`.
#'
#'   The fit is scale-equivariant: `x * c` gives the same factors, weights
#'   times `c` and (Frobenius) objectives times `c^2`, computed on `x`
#'   divided by a power of 2 so that nothing under- or overflows. When the
#'   objective in the units of `x` does not fit in a double, a warning of
#'   class `aspectr_warning_numeric` says so.
#' @examples
#' set.seed(42)
#' A <- matrix(runif(20 * 3), 20); B <- matrix(runif(15 * 3), 15); C <- matrix(runif(10 * 3), 10)
#' X <- array(0, c(20, 15, 10))
#' for (r in 1:3) X <- X + outer(outer(A[, r], B[, r]), C[, r])
#' fit <- ntf(X, 3, seed = 1)
#' fit
#' fit_kl <- ntf(as_sptensor(round(10 * X)), 3, loss = "kl", seed = 1)
#' # 10% of the cells missing: the fit leaves them out, fitted() imputes them
#' Xm <- X
#' Xm[sample(length(X), 300)] <- NA
#' fit_na <- ntf(Xm, 3, seed = 1)
#' miss <- is.na(Xm)
#' cor(fitted(fit_na)[miss], X[miss])
#' @export
ntf <- function(x, k, loss = c("frobenius", "kl"), method = NULL, nrun = 1,
                short_iter = 0, short_keep = NULL,
                max_iter = 1000, tol = 1e-6, seed = NULL, threads = NULL, verbose = FALSE,
                callback = NULL, init = "random", cluster = NULL, factor_dir = NULL,
                mask = NULL, observed = NULL, weights = NULL, mode_weights = NULL, ...) {
  call <- match.call()
  check_dots_empty(...)
  check_required(x, "a non-negative matrix or array")
  loss <- match_option(loss, c("frobenius", "kl"), "loss")
  cluster <- check_cluster(cluster, x)
  sharded <- inherits(x, "aspectr_shards")
  wargs <- list(mask = mask, observed = observed, weights = weights, mode_weights = mode_weights)
  # missing cells, masks and weights (see "Missing values and weights"): the
  # fit reads the weighted data x~ = omega o x in place of x; on shards
  # (which have no missing cells) only the arguments weigh
  weighted <- if (sharded) !all(vapply(wargs, is.null, logical(1))) else
    ntf_is_weighted(x, mask, observed, weights, mode_weights)
  # the method asked for, as in memory whatever holds the data (the
  # default: the loss's first, or on shards the first the table allows)
  choices <- if (loss == "kl") c("cd", "mu") else c("hals", "mu")
  if (!is.null(method)) {
    if (is.character(method) && length(method) == 1 && !is.na(method) && method %in% c("hals", "mu", "cd")) {
      if (!method %in% choices) {
        abort_input("{.arg method} must be {.or {.val {choices}}} for {.code loss = \"{loss}\"}, not {.val {method}}.",
                    "argument", arg = "method")
      }
    } else {
      method <- match_option(method, choices, "method")
    }
  }
  if (sharded && weighted) {
    # (the capability table's refusals name the argument given)
    given <- names(wargs)[!vapply(wargs, is.null, logical(1))][1]
    m <- if (is.character(method) && length(method) == 1) method else if (loss == "kl") "mu" else "hals"
    check_shard_capability("ntf", loss, m, options = list(mask = TRUE), option_args = c(mask = given))
  }
  # (the name of the factor's files: the first mode's)
  fmode <- if (sharded && length(x$dims) > 2) mode_names(x$dimnames, length(x$dims))[1] else "rows"
  files <- factor_paths(factor_dir, x, fmode, callback)
  if (sharded) {
    check_tensor_shards(x, "ntf")
    # (with weights, the default is the first method the table allows them)
    method <- check_shard_capability("ntf", loss, method, options = list(mask = weighted))
  }
  if (is.null(method)) method <- choices[1]
  if (inherits(x, "aspectr_tensor")) validate_sptensor(x, "x")
  # where the cells are (a matrix or an array in memory, or shards): the
  # data's form and sums, a weighted fit's weights, the starts, the runs
  src <- if (sharded) ntf_shard_source(x, cluster, files, call) else ntf_memory_source(x)
  on.exit(src$close(), add = TRUE)
  src$load(loss, weighted, wargs)
  data <- src$data
  wd <- src$wd
  count_data <- src$count_data
  nnz_x <- src$nnz
  # (shards without a cell to fit: the error of the data in memory)
  if (!(nnz_x > 0)) abort_input("{.arg x} has no positive entries: there is nothing to fit.", "empty", arg = "x")
  k <- check_whole(k, "k", min = 1, max = nnz_x,
                   what = if (weighted) "at most the number of non-zeros of `x` of positive weight" else
                     "at most the number of non-zeros of `x`")
  ctl <- check_fit_controls(nrun, max_iter, tol, seed, threads, verbose)
  nrun <- ctl$nrun; max_iter <- ctl$max_iter; tol <- ctl$tol
  seed <- ctl$seed; threads <- ctl$threads; verbose <- ctl$verbose
  start <- proc.time()[["elapsed"]]
  total <- data$total
  if (loss == "kl" && !is.finite(total)) {
    abort_input(c("The values of {.arg x} sum to more than the largest double: the KL divergence of a fit to them cannot be computed.",
                  i = "Divide {.arg x} by a constant (the KL fit of {.code x / c} has the same factors, its weights divided by {.code c})."),
                "value", arg = "x")
  }
  callback <- check_callback(callback)
  N <- length(data$dims)
  fnames <- if (N == 2) c("rows", "columns") else mode_names(data$dimnames, N)
  comp <- paste0("component_", seq_len(k))
  # the callback's factors: unit-norm (Frobenius) or unit-sum (KL) columns,
  # their scale in the first factor's, so that the outer products add up to
  # the model of x
  name_factors <- function(f) {
    f <- lapply(seq_len(N), function(n) `dimnames<-`(f[[n]], list(data$dimnames[[n]], comp)))
    names(f) <- fnames
    f
  }
  stg <- check_staging(short_iter, short_keep, nrun)
  # a list start: one non-negative d_n x k matrix per mode (the model is the
  # sum of their columns' outer products); a fit: its factors, the weights
  # in the first
  first <- NULL
  if (inherits(init, "aspectr_fit")) {
    init <- warm_start(init, "ntf", k, data$dims)
    f <- unname(init$factors)
    f[[1]] <- sweep(f[[1]], 2, init$weights, "*")
    first <- f
  } else if (is.list(init)) {
    ok <- length(init) == N && all(vapply(seq_len(N), function(n) {
      f <- init[[n]]
      is.matrix(f) && is.numeric(f) && nrow(f) == data$dims[n] && ncol(f) == k &&
        all(is.finite(f)) && all(f >= 0) && all(colSums(f) > 0)
    }, logical(1)))
    if (!ok) {
      abort_input("A list {.arg init} must hold {N} non-negative matri{?x/ces} of sizes {paste(paste(data$dims, k, sep = ' x '), collapse = ', ')} without zero columns.",
                  "argument", arg = "init")
    }
    first <- lapply(init, unname)
  } else {
    match_option(init, "random", "init")
  }
  if (weighted) {
    out <- ntf_weighted_runs(wd, k, loss, method, nrun, first, seed, max_iter, tol, threads, verbose,
                              callback, stg, name_factors, session = src$wsession)
  } else if (loss == "kl") {
    hook <- fit_hook(callback, verbose, "ntf()", value = function(v) v * total,
                     model = function(raw) {
                       f <- raw$factors
                       f[[1]] <- sweep(f[[1]], 2, raw$lambda * total, "*")
                       name_factors(f)
                     })
    # (sharded: the documents' factor drawn by the shards' stores)
    inits <- with_seed(seed, lapply(seq_len(nrun), function(i) src$random_aspect(data$dims, k)))
    if (!is.null(first)) {
      # the aspect-model form: unit-sum columns, their masses in lambda
      mass <- Reduce(`*`, lapply(first, colSums))
      inits[[1]] <- list(lambda = mass / sum(mass),
                         factors = lapply(first, function(f) f / rep(colSums(f), each = nrow(f))))
    }
    fit_start <- src$fitter_kl(method, tol, threads, verbose, hook, !is.null(callback))
    finish_run <- function(res) {
      # D_gKL(X || M) = total * D(G || P) when sum(M) = sum(X)
      res$objective <- res$objective * total
      res$initial <- res$initial * total
      res$weights <- res$lambda * total
      res
    }
    out <- fit_pipeline(inits, fit_start, function(r) list(lambda = r$lambda, factors = r$factors), hook,
                        ctl, stg, "ntf()", value = ntf_scaled_value, finish_run = finish_run,
                        sequential = sharded, discard = src$discard)
  } else {
    # The fit runs on x / s with s a power of 2 near max(x) (exact), so that
    # ||x||^2 and the updates neither underflow nor overflow for any scale of
    # x; weights return scaled by s, objectives by s^2.
    # (shards: the largest of their values, and the total of x / s from
    # each one's total divided by its largest, see shard_meta())
    s <- src$scale()  # (the core divides the values as it reads them)
    # (the total of x / s: that of x can overflow)
    total_s <- if (is.finite(total / s)) total / s else src$total_scaled(s)
    scale <- (total_s / prod(as.numeric(data$dims)))^(1 / length(data$dims))
    # (sharded: the first mode's factor drawn by the shards' stores)
    inits <- with_seed(seed, lapply(seq_len(nrun), function(i) src$random_cp(data$dims, k, scale)))
    if (!is.null(first)) {
      # in the units of x / s: the first factor carries 1 / s
      first[[1]] <- first[[1]] / s
      inits[[1]] <- first
    }
    hook <- fit_hook(callback, verbose, "ntf()", value = function(v) 0.5 * rescale_value(v, s, 2),
                     model = function(raw) {
                       f <- raw$factors
                       f[[1]] <- f[[1]] * s
                       name_factors(f)
                     })
    fit_start <- src$fitter_cp(method, s, tol, threads, verbose, hook, !is.null(callback))
    finish_run <- function(res) {
      res$scaled_value <- run_value(res)
      # reported as one half of the squared error, as every Frobenius fit
      res$objective <- 0.5 * rescale_value(res$objective, s, 2)
      res$initial <- 0.5 * rescale_value(res$initial, s, 2)
      # (a first factor in files: its column norms from the fit, the
      # columns divided as they are written, `scale1`)
      nrm <- vapply(res$factors, function(f) {
        if (inherits(f, "aspectr_shard_run")) res$norm1 else sqrt(colSums(f^2))
      }, numeric(k))
      nrm <- matrix(nrm, nrow = k)
      w <- apply(nrm, 1, prod)
      if (inherits(res$factors[[1]], "aspectr_shard_run")) {
        sc <- nrm[, 1]
        sc[sc == 0] <- 1
        res$scale1 <- 1 / sc
      }
      res$factors <- lapply(seq_along(res$factors), function(n) {
        f <- res$factors[[n]]
        if (inherits(f, "aspectr_shard_run")) return(f)
        sc <- nrm[, n]
        sc[sc == 0] <- 1
        sweep(f, 2, sc, "/")
      })
      res$weights <- w * s
      res
    }
    out <- fit_pipeline(inits, fit_start, function(r) r$factors, hook, ctl, stg, "ntf()",
                        value = ntf_scaled_value, finish_run = finish_run, sequential = sharded,
                        discard = src$discard)
  }
  best <- out$best
  res <- out$res
  scaled <- out$values
  values <- vapply(out$runs, run_value, numeric(1))
  check_objective_range(run_value(res), scaled[best], "ntf() fit",
                        list(initial = res$initial, objective = res$objective, run_values = values))
  ord <- plsa_order(res$weights)  # (ties to 10 digits in the components' order)
  comp <- paste0("component_", seq_len(k))
  if (!is.null(files)) {
    # (a weighted fit's columns to unit sum as they are written)
    res$factors[[1]] <- src$finalize(res$factors[[1]], ord, res$scale1[ord], list(data$dimnames[[1]], comp), fmode)
  }
  factors <- lapply(seq_along(res$factors), function(n) {
    if (inherits(res$factors[[n]], "aspectr_factor_files")) return(res$factors[[n]])
    f <- res$factors[[n]][, ord, drop = FALSE]
    dimnames(f) <- list(data$dimnames[[n]], comp)
    f
  })
  names(factors) <- mode_names(data$dimnames, length(data$dims))
  if (length(data$dims) == 2) names(factors) <- c("rows", "columns")
  loglik_const <- if (loss != "kl" || weighted) NA_real_ else src$loglik_const()
  fit <- list(
    weights = stats::setNames(res$weights[ord], comp),
    factors = factors, loss = loss, method = method, k = k, loglik_const = loglik_const,
    objective = as.numeric(res$objective), value = run_value(res), initial = res$initial,
    iterations = as.integer(res$iterations), converged = isTRUE(res$converged),
    run = best, run_values = values, dims = data$dims, dimnames = data$dimnames,
    total = total, nnz = nnz_x, time = proc.time()[["elapsed"]] - start,
    threads = threads, seed = seed, call = call, stopped = isTRUE(res$stopped)
  )
  fit <- new_aspectr_fit("ntf", fit, factors = factors, weights = fit$weights,
                         params = list(method = method))
  fit$count_data <- count_data
  if (weighted) {
    fit$weighting <- ntf_weighting(wd)
  }
  finish_progress(fit, verbose, "ntf()", max_iter, tol)
}

# a run's objective on the scale its starts are compared (the Frobenius
# runs': that of x / s)
ntf_scaled_value <- function(r) if (is.null(r$scaled_value)) run_value(r) else r$scaled_value

#' @export
print.aspectr_ntf <- function(x, ...) {
  check_dots_empty(...)
  cat(sprintf("<aspectr_ntf> rank-%d non-negative CP, %s loss by %s\n", x$k,
              if (x$loss == "kl") "KL" else "Frobenius", toupper(x$method)))
  cat(sprintf("data: %d-way %s (%s), %s non-zeros\n", length(x$dims),
              paste(x$dims, collapse = " x "), paste(names(x$factors), collapse = ", "),
              format(x$nnz, big.mark = ",")))
  if (!is.null(x$weighting)) {
    what <- c(missing = "missing cells", mask = "a mask", observed = "observed cells", cells = "weights per cell",
              modes = "weights per mode")[x$weighting$type]
    left <- x$weighting$left_out
    cat(sprintf("weighted loss: %s%s\n", paste(what, collapse = ", "),
                if (!is.na(left) && left > 0) sprintf(" (%s cells left out)", format(left, big.mark = ",")) else ""))
  }
  cat(sprintf("objective: %s after %d iteration%s (%s)\n", format(signif(x$value, 7)),
              x$iterations, if (x$iterations == 1) "" else "s",
              if (x$converged) "converged" else "not converged"))
  cat("weights:", paste(format(signif(x$weights, 4)), collapse = " "), "\n")
  invisible(x)
}

#' @export
summary.aspectr_ntf <- function(object, ...) {
  check_dots_empty(...)
  fit <- object$value
  structure(list(k = object$k, loss = object$loss, method = object$method,
                 dims = object$dims, value = fit, iterations = object$iterations,
                 converged = object$converged, weights = object$weights,
                 runs = object$run_values,
                 top = lapply(object$factors, function(f) {
                   if (inherits(f, "aspectr_factor_files")) {
                     # (in files: read a shard at a time)
                     nm <- rownames(f) %||% seq_len(nrow(f))
                     top <- vapply(factor_top_rows(f, 3), function(i) paste(nm[i], collapse = ", "), "")
                     return(stats::setNames(top, colnames(f)))
                   }
                   apply(f, 2, function(col) {
                     nm <- rownames(f); if (is.null(nm)) nm <- seq_len(nrow(f))
                     paste(utils::head(nm[order(col, decreasing = TRUE)], 3), collapse = ", ")
                   })
                 })),
            class = "summary.aspectr_ntf")
}

#' @export
print.summary.aspectr_ntf <- function(x, ...) {
  check_dots_empty(...)
  cat(sprintf("Non-negative CP, rank %d, %s loss (%s); objective %s after %d iterations (%s)\n",
              x$k, x$loss, x$method, format(signif(x$value, 7)), x$iterations,
              if (x$converged) "converged" else "not converged"))
  cat(sprintf("best of %d start%s\n\n", length(x$runs), if (length(x$runs) == 1) "" else "s"))
  tab <- data.frame(component = names(x$weights), weight = signif(unname(x$weights), 4))
  for (m in names(x$top)) tab[[paste("top", m)]] <- x$top[[m]]
  print(tab, row.names = FALSE, right = FALSE)
  invisible(x)
}

#' Plot a non-negative CP fit
#'
#' @param x An `aspectr_ntf` fit.
#' @param type `"factors"` (profiles of each component in each mode) or
#'   `"convergence"`.
#' @param ... Passed to the base graphics functions.
#' @return `x`, invisibly.
#' @examples
#' fit <- ntf(as_sptensor(UCBAdmissions), 2, seed = 1)
#' plot(fit)
#' @export
plot.aspectr_ntf <- function(x, type = c("factors", "convergence"), ...) {
  type <- match_option(type, c("factors", "convergence"), "type")
  if (type == "convergence") {
    graphics::plot(seq_along(x$objective), x$objective, type = "l", xlab = "iteration",
                   ylab = "objective", main = "Convergence", ...)
    return(invisible(x))
  }
  x <- rows_in_memory(x)
  N <- length(x$factors)
  nc <- min(N, 3)
  op <- graphics::par(mfrow = c(ceiling(N / nc), nc), mar = c(5, 4, 2, 1))
  on.exit(graphics::par(op), add = TRUE)
  cols <- grDevices::hcl.colors(x$k, "Dark 3")
  for (n in seq_len(N)) {
    f <- x$factors[[n]]
    labs <- rownames(f)
    title <- names(x$factors)[n] %||% paste("mode", n)
    if (!is.null(labs) && nrow(f) <= 30) {
      # a categorical mode: grouped bars with its level names
      graphics::barplot(t(f), beside = TRUE, col = cols, names.arg = labs, las = if (max(nchar(labs)) > 4) 2 else 1,
                        ylab = "loading", main = title, cex.names = 0.8, ...)
    } else {
      graphics::matplot(f, type = if (nrow(f) <= 30) "b" else "l", lty = 1, pch = 19, cex = 0.6, col = cols,
                        xlab = "index", ylab = "loading", main = title, xaxt = "n", ...)
      at <- pretty(c(1, nrow(f)))
      graphics::axis(1, at = at[at >= 1 & at <= nrow(f) & at == round(at)])
    }
    if (n == 1) {
      graphics::legend("topright", colnames(f) %||% paste("component", seq_len(x$k)), fill = cols,
                       bty = "n", cex = 0.75)
    }
  }
  invisible(x)
}

#' @export
fitted.aspectr_ntf <- function(object, ...) {
  check_dots_empty(...)
  object <- rows_in_memory(object)
  check_size(prod(as.numeric(object$dims)), "The fitted array would have {size} cells.")
  p <- array(0, object$dims)
  for (r in seq_len(object$k)) {
    p <- p + object$weights[r] * Reduce(outer, lapply(object$factors, function(f) f[, r]))
  }
  if (length(object$dims) == 2) p <- matrix(p, object$dims[1])
  dimnames(p) <- object$dimnames
  p
}

# A power of 2 near the largest of v (dividing by it is exact) whose
# `root`-th root is a power of 2 too.
pow2_scale <- function(v, root = 1) {
  m <- if (length(v)) max(max(v), -min(v)) else 0  # (max |v| without a copy)
  if (!(m > 0) || !is.finite(m)) return(1)
  2^(root * floor(log2(m) / root))
}

# The objective of a fit to data scaled by s can over- or underflow when
# reported in the data's units (||x||^2 of x near 1e300 is not a double).
# `reported`: the fit's other statistics in the data's units (a named list:
# the initial objective, the trace, the other starts' values, ...), which
# can overflow where the final value does not (a trace from a poor start
# down to an exact fit); one warning either way.
check_objective_range <- function(value, scaled, what, reported = list()) {
  if (!is.finite(value) || (value == 0 && scaled > 0)) {
    warn_numeric("The objective of the {what} {if (is.finite(value)) 'underflows' else 'overflows'} in the units of the data (it is reported as {.val {value}}); the factors are unaffected.")
    return(invisible())
  }
  bad <- names(reported)[!vapply(reported, function(v) all(is.finite(v)), logical(1))]
  if (length(bad)) {
    warn_numeric("The {what} reports {.field {bad}} as {.val {Inf}}: {cli::qty(length(bad))}{?it overflows/they overflow} in the units of the data; the final value ({.val {value}}) and the factors are unaffected.")
  }
  invisible()
}

# The cells of an ntf() fit in memory, as ntf_shard_source() has those of
# shards: `load(loss, weighted, wargs)` sets `data` (as_aspect_data()'s form;
# a weighted fit's weighted values), `wd` (the weighted data), `count_data`
# and `nnz`; `random_aspect()` and `random_cp()` a random start of the KL
# (aspect-model) and the Frobenius (CP) runs, `scale()` the fit's scale
# and `total_scaled(s)` the data's total divided by it, `fitter_kl()` and
# `fitter_cp()` a start's runs, `loglik_const()`, `finalize`, `discard`
# and `close()` (no files, nothing to free).
ntf_memory_source <- function(x, call = rlang::caller_env()) {
  force(call)  # (the fit's frame, named by errors raised after this returns)
  data <- wd <- nnz <- wsession <- NULL
  count_data <- FALSE
  load <- function(loss, weighted, wargs) {
    if (weighted) {
      wd <<- ntf_weighted_data(x, wargs$mask, wargs$observed, wargs$weights, wargs$mode_weights, call = call)
      if (!length(wd$tv)) {
        abort_nothing_weighted(call = call)
      }
      data <<- list(idx = wd$idx, val = wd$tv, dims = wd$dims, dimnames = wd$dimnames, total = sum(wd$tv))
      # (a weighted fit has no likelihood)
      nnz <<- length(wd$tv)
    } else {
      data <<- as_aspect_data(x, "x", call = call)
      count_data <<- check_count_data(x, data$val, "ntf", likelihood = loss == "kl", call = call)
      nnz <<- length(data$val)
    }
    invisible()
  }
  random_aspect <- function(dims, k) random_start(dims, k)
  random_cp <- function(dims, k, scale) {
    lapply(dims, function(d) matrix(stats::runif(as.numeric(d) * k), d, k) * scale)
  }
  scale <- function() pow2_scale(data$val)
  total_scaled <- function(s) cpp_csc_scan(data$val, integer(0), 0L, s, FALSE)$total
  fitter_kl <- function(method, tol, threads, verbose, hook, exact) {
    function(init, iters) {
      cpp_plsa_fit(data$idx, data$val, data$dims, init$lambda, init$factors,
                   "kl", 1, 1, iters, tol, threads, verbose, FALSE, hook, exact,
                   if (method == "cd") "cd" else "em")
    }
  }
  fitter_cp <- function(method, s, tol, threads, verbose, hook, exact) {
    function(init, iters) {
      cpp_ntf_fit(data$idx, data$val, data$dims, init, method, iters, tol, threads, verbose, hook, exact, s)
    }
  }
  # (no temporaries)
  loglik_const <- function() cpp_csc_scan(data$val, integer(0), 0L, 1, TRUE)$loglik_const
  finalize <- discard <- NULL
  close <- function() invisible()
  environment()
}

# x * s^p for s a power of 2, with 0 kept 0 (not 0 * Inf) and the power
# formed without an intermediate over- or underflow of s^p where possible.
rescale_value <- function(x, s, p) {
  if (s == 1 || p == 0) return(x)
  e <- log2(s) * p
  out <- x * 2^(e / 2) * 2^(e / 2)
  out[x == 0] <- 0
  out
}

#' @export
nobs.aspectr_ntf <- function(object, ...) {
  check_dots_empty(...)
  prod(as.numeric(object$dims))
}

#' Fold new slices into an NTF
#'
#' New entries of the first mode (new documents, subjects, ...) given as an
#' array whose other modes match the fit: their factor rows are fitted with
#' every other factor fixed, under the fit's loss (exact non-negative least
#' squares under Frobenius, coordinate descent under KL), on the fit's
#' scale (the weights folded into the other modes).
#'
#' @param object An `aspectr_ntf` fit.
#' @param newdata An array with dimensions `c(n_new, dim(x)[-1])`, or a
#'   sparse tensor with those dimensions. Omitted: the fitted first-mode
#'   factor times the weights.
#' @param type `"coef"` (the new rows of the first factor, times the
#'   weights: n_new x k) or `"class"` (the component with the largest
#'   coefficient).
#' @param max_iter,tol Iteration limit and tolerance of the fold-in.
#' @param threads Number of threads; `NULL` uses [default_threads()].
#' @param ... Must be empty.
#' @return A matrix or an integer vector.
#' @examples
#' y <- array(rpois(4 * 5 * 3, 3), c(4, 5, 3))
#' fit <- ntf(y, 2, seed = 1)
#' predict(fit, y[1:2, , , drop = FALSE])
#' @export
predict.aspectr_ntf <- function(object, newdata, type = c("coef", "class"), max_iter = 1000,
                                tol = 1e-8, threads = NULL, ...) {
  check_dots_empty(...)
  type <- match_option(type, c("coef", "class"), "type")
  max_iter <- check_whole(max_iter, "max_iter")
  tol <- check_number(tol, "tol", 0, Inf)
  threads <- resolve_threads(threads)
  comp <- names(object$weights) %||% paste0("component_", seq_len(object$k))
  if (missing(newdata) || is.null(newdata)) {
    object <- rows_in_memory(object)
    coef <- sweep(object$factors[[1]], 2, object$weights, "*")
  } else {
    d <- as_aspect_data(newdata, "newdata")
    if (length(d$dims) != length(object$dims) || !all(d$dims[-1] == object$dims[-1])) {
      abort_input("{.arg newdata} must have dimensions c(n_new, {paste(object$dims[-1], collapse = ', ')}) like the fitted data, not {paste(d$dims, collapse = ' x ')}.",
                  "newdata", arg = "newdata")
    }
    # the other modes matched by name where both have names
    for (n in seq_along(d$dims)[-1]) {
      nn <- d$dimnames[[n]]
      fn <- object$dimnames[[n]]
      if (is.null(nn) || is.null(fn)) next
      check_newdata_names(nn, fn, paste0("mode ", n, " index"))
      map <- match(nn, fn)
      if (anyNA(map)) {
        abort_input("The mode {n} names of {.arg newdata} must be those of the fit; {.val {utils::head(nn[is.na(map)], 3)}} {?is/are} not.",
                    "newdata", arg = "newdata")
      }
      d$idx[n, ] <- as.integer(map[d$idx[n, ] + 1L] - 1L)
    }
    # mode-1 unfolding: x_(1) ~ coef t(B), B the Khatri-Rao product of the
    # other (unit-norm or unit-sum) factors (cells of the other modes x k,
    # the first of them varying fastest), so coef = the first factor times
    # the weights
    others <- object$factors[-1]
    B <- matrix(1, 1, object$k)
    for (f in others) B <- do.call(rbind, lapply(seq_len(nrow(f)), function(i) sweep(B, 2, f[i, ], "*")))
    cells <- prod(d$dims[-1])
    check_size(cells * object$k, "The fold-in basis would have {size} cells.")
    lin <- 1 + colSums((d$idx[-1, , drop = FALSE]) * cumprod(c(1, d$dims[-c(1, length(d$dims))])))
    X <- Matrix::sparseMatrix(i = lin, j = d$idx[1, ] + 1L, x = d$val, dims = c(cells, d$dims[1]))
    sc <- nmf_scale(nmf_data(X, "newdata"))
    nd <- sc$nd
    s <- sc$s
    w <- max(B)
    if (!(w > 0)) w <- 1
    coef <- cpp_nmf_project(nmf_ptr(nd), B / w, object$loss, 2,
                            c(0, 0), c(0, 0), 1e-16, max_iter, tol, threads)
    coef <- t(coef) * (s / w)
    rownames(coef) <- d$dimnames[[1]]
  }
  colnames(coef) <- comp
  if (type == "class") {
    cls <- max.col(coef, ties.method = "first")
    names(cls) <- rownames(coef)
    return(cls)
  }
  coef
}
