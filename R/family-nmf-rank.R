#' Choose the rank of an NMF
#'
#' * `method = "cv"`: for every rank and repetition, a random `holdout`
#'   fraction of the cells of `x` is masked, the factorization is fitted to
#'   the remaining cells (masked cells are imputed by the current model and
#'   the fit is repeated from a warm start, which never increases the loss on
#'   the observed cells), and the relative error on the masked cells is
#'   recorded.
#' * `method = "mask"`: the same held-out cells, but every fit leaves them
#'   out of its loss (`nmf(mask = )`, see "Missing values and weights" in
#'   [nmf()]) instead of imputing and refitting, so one fit per rank and
#'   repetition suffices and sparse `x` stays sparse. For sparse `x` the
#'   cells are drawn separately among the non-zeros and the zeros (the same
#'   `holdout` fraction of each), so that held-out error measures both.
#'   The error is the relative error of the held-out cells' imputation,
#'   \eqn{\sqrt{\sum (x - v)^2 / \sum x^2}} over them, and the training error
#'   the fit's relative error on the cells it saw.
#'
#'   For both, a repetition holds out the same cells at every rank, so that
#'   the ranks are compared on the same cells, and the suggested rank is, by
#'   default, the smallest whose mean held-out error is within one standard
#'   error of the smallest mean (`rule = "1se"`, the one-standard-error rule
#'   of Hastie, Tibshirani and Friedman 2009, section 7.10): ranks above the
#'   true one fit a little of the noise, and their held-out errors differ
#'   from its error by less than the repetitions do, so the smallest mean
#'   alone often lands above it. `rule = "min"` takes the smallest mean.
#' * `method = "consensus"` (Brunet et al. 2004): `nrun` fits from random
#'   starts per rank; each assigns every column to its largest coefficient;
#'   the consensus matrix is the share of fits in which two columns share a
#'   cluster. Reported: the cophenetic correlation of average-linkage
#'   clustering of 1 - consensus, the dispersion
#'   \eqn{\mathrm{mean}(4 (C - 1/2)^2)} (Kim and Park 2007), the mean
#'   silhouette width (Rousseeuw 1987) of the k clusters of that
#'   clustering under the dissimilarity 1 - consensus, and `clusters`, the
#'   mean number of clusters the fits actually use. The suggested rank is the largest
#'   whose product of the two measures is within 0.001 of the best (stable
#'   clusterings at several ranks favour the finest), among the ranks whose
#'   fits use all k clusters: spare components that win no column repeat
#'   the consensus of a smaller rank.
#'
#' Both tables also give, averaged over the fits of each rank, the means
#' over components of the [topic_quality()] measures of the fit in its
#' pLSA form (columns as terms, rows as documents): UMass and NPMI
#' coherence of the top `n_top` columns on `x` (co-occurrence: both non-zero
#' in a row), exclusivity and FREX (weight 0.7). For a document-term matrix
#' fitted under the KL loss they weigh held-out error against the
#' interpretability of the topics. Coherence counts co-occurrence, so it
#' needs zeros: on a matrix without zero cells (expression values, say)
#' every pair of columns co-occurs in every row, and UMass and NPMI take
#' one value for every rank (NPMI 1), which says nothing.
#'
#' The (rank, repetition) fits run through \pkg{future.apply} under a
#' parallel [future][future::plan] plan (on a laptop, a multicore server or
#' a cluster backend such as future.batchtools), with results independent of
#' the plan.
#'
#' @param x A non-negative matrix (as for [nmf()]). Cross-validation works
#'   on the dense matrix (refused beyond `getOption("aspectr.max_cells",
#'   1e8)` cells), `"mask"` on `x` as it is stored; consensus clusters the
#'   columns.
#' @param k Ranks to compare.
#' @param method `"cv"`, `"mask"` or `"consensus"`.
#' @param nrun Repetitions (held-out cells for `"cv"` and `"mask"`, the same
#'   at every rank; random starts per rank for `"consensus"`).
#' @param holdout Fraction of cells held out (`"cv"`, `"mask"`).
#' @param loss,method_nmf Passed to [nmf()] as `loss` and `method`.
#' @param max_iter,tol Passed to [nmf()].
#' @param seed Seed for the masks and starts (`NULL`: R's RNG).
#' @param threads Threads per fit.
#' @param n_top Number of top columns (terms) per component for the
#'   quality measures (at least 2; at most the number of columns is used).
#' @param assay For an `ExpressionSet`, `SummarizedExperiment`,
#'   `SingleCellExperiment` or `Seurat` object: the matrix to use, as in
#'   [nmf()] (fitted features x samples; consensus clusters the samples,
#'   whose annotations are kept in `annotation`).
#' @param rule How `"cv"` and `"mask"` suggest a rank: `"1se"` (default) the
#'   smallest rank within one standard error of the smallest mean held-out
#'   error (with `nrun = 1` there is no standard error, and it is the
#'   smallest error), `"min"` the smallest mean held-out error.
#' @param ... Must be empty.
#' @return An object of class `aspectr_nmf_rank`: a list with `table` (one row
#'   per rank; for `"cv"` and `"mask"` the mean held-out error `test_error`, its
#'   standard deviation `test_sd` over the repetitions and the standard
#'   error of the mean `test_se`, the training error and the quality
#'   measures), `method`, `best` (the suggested rank), `rule` (`"cv"`,
#'   `"mask"`), `details`, `nrun`
#'   and `annotation` (the samples' annotations of a container, or
#'   `NULL`); it has `print`, `plot` and `autoplot` methods. `details` holds
#'   the per-run errors for `"cv"` and `"mask"` (and whether each fit
#'   converged, `converged`); for `"consensus"` lists named
#'   by rank: `consensus` (the columns x columns consensus matrices),
#'   `hclust` (their average-linkage clusterings), `cluster` (the consensus
#'   clusters), `labels` (runs x columns: each run's cluster of every
#'   column) and `converged` (one value per run). Fits that do not converge
#'   within `max_iter` are counted in one message at the end, not one
#'   message each.
#' @references Hastie, T., Tibshirani, R. and Friedman, J. (2009). *The
#'   Elements of Statistical Learning*, 2nd ed. Springer.
#'
#'   Brunet, J.-P., Tamayo, P., Golub, T. R. and Mesirov, J. P.
#'   (2004). Metagenes and molecular pattern discovery using matrix
#'   factorization. *PNAS* 101(12), 4164-4169.
#'
#'   Kim, H. and Park, H. (2007). Sparse non-negative matrix factorizations
#'   via alternating non-negativity-constrained least squares for microarray
#'   data analysis. *Bioinformatics* 23(12), 1495-1502.
#'
#'   Rousseeuw, P. J. (1987). Silhouettes: a graphical aid to the
#'   interpretation and validation of cluster analysis. *Journal of
#'   Computational and Applied Mathematics* 20, 53-65.
#' @examples
#' set.seed(1)
#' X <- matrix(runif(60 * 3), 60) %*% matrix(runif(3 * 40), 3) + matrix(runif(2400, 0, 0.05), 60)
#' r <- nmf_rank(X, k = 1:5, nrun = 2, seed = 1)
#' r
#' plot(r)
#' @export
nmf_rank <- function(x, k = 2:10, method = c("cv", "mask", "consensus"), nrun = NULL, holdout = 0.1,
                     loss = "frobenius", method_nmf = NULL, max_iter = 500, tol = 1e-5,
                     seed = NULL, threads = NULL, n_top = 10, assay = NULL, rule = c("1se", "min"), ...) {
  check_dots_empty(...)
  check_required(x, "a non-negative matrix")
  if (inherits(x, "aspectr_shards")) {
    abort_input("{.arg x} must be data in memory for {.fn nmf_rank} (a matrix, a sparse matrix or a container such as a SummarizedExperiment), not {.fn shards}: its fits hold out cells of the whole matrix.",
                "type", arg = "x")
  }
  container <- container_input(x, assay, "columns")
  if (!is.null(container)) x <- container$x
  method <- match_option(method, c("cv", "mask", "consensus"), "method")
  loss <- match_option(loss, unique(nmf_solvers()$loss), "loss")
  if (!is.null(method_nmf)) method_nmf <- match_option(method_nmf, unique(nmf_solvers()$method), "method_nmf")
  max_iter <- check_whole(max_iter, "max_iter")
  tol <- check_number(tol, "tol", 0, Inf)
  # masked cross-validation takes NA cells (left out of every fit, never
  # held out); the other methods need every cell
  na_cells <- NULL
  if (method == "mask" && (is.matrix(x) || methods::is(x, "Matrix")) && anyNA(x)) {
    xx <- nmf_weighted_x(x, rlang::current_env())
    na_cells <- xx$na
    x <- xx$x
  }
  nd <- nmf_data(x, "x", dense = method == "cv")
  if (!is.numeric(k) || is.object(k) || !length(k) || anyNA(k)) {
    abort_input("{.arg k} must be a non-empty vector of whole-number ranks, not {describe(k)}.", "argument", arg = "k")
  }
  k <- vapply(k, check_whole, integer(1), arg = "k", min = 1, max = min(nd$dims),
              what = "at most the smaller dimension of `x`")
  check_k_distinct(k)
  k <- sort(k)
  if (is.null(nrun)) nrun <- if (method %in% c("cv", "mask")) 3L else 10L
  nrun <- check_whole(nrun, "nrun", max = max_runs)
  holdout <- check_number(holdout, "holdout", 0, 0.5, lower_open = TRUE)
  rule <- match_option(rule, c("1se", "min"), "rule")
  seed <- check_seed(seed)
  threads <- resolve_threads(threads)
  n_top <- check_whole(n_top, "n_top", min = 2)
  n_top <- min(n_top, nd$dims[2])
  if (method == "consensus" && k[1] < 2) {
    abort_input("{.arg k} must be at least 2 for consensus clustering, not {k[1]}.", "argument", arg = "k")
  }
  grid <- expand.grid(run = seq_len(nrun), k = k)
  # (cross-validation: each repetition holds out the same cells at every rank)
  seeds <- if (method == "consensus") list(fit = with_seed(seed, sample.int(.Machine$integer.max, nrow(grid)))) else
    cv_seeds(seed, nrun, nrow(grid))
  X <- nd$dense
  tasks <- lapply(seq_len(nrow(grid)), function(t) {
    list(k = grid$k[t], run = grid$run[t], seed = seeds$fit[t], held = seeds$held[grid$run[t]])
  })
  fit_args <- list(loss = loss, max_iter = max_iter, tol = tol, threads = threads)
  if (!is.null(method_nmf)) fit_args$method <- method_nmf
  # the data as topic_quality() reads it: columns as terms, rows as documents
  corpus <- nmf_corpus(nd)
  quality <- function(fit) {
    if (nd$dims[2] < 2) return(c(umass = NA_real_, npmi = NA_real_, exclusivity = NA_real_, frex = NA_real_))
    quality_means(quality_table(topic_form(fit, "{.fn nmf_rank}"), corpus, n_top, 1, 0.7))
  }
  if (method %in% c("cv", "mask")) {
    res <- if (method == "cv") map_runs(tasks, function(tk) cv_one(X, tk, holdout, fit_args, quality)) else {
      xin <- if (!is.null(X)) X else nmf_sparse(nd)
      map_runs(tasks, function(tk) cv_mask_one(xin, tk, holdout, fit_args, quality, na_cells))
    }
    details <- do.call(rbind, lapply(res, as.data.frame))
    tab <- cv_rank_table(details, c("umass", "npmi", "exclusivity", "frex"))
    best <- cv_rank_best(tab, rule)
    converged <- details$converged
  } else {
    n <- nd$dims[2]
    # (refused before any fit is run)
    if (n > 5000) {
      abort_input("Consensus clustering of {n} columns needs {n} x {n} matrices; use {.code method = \"cv\"}.",
                  "argument", arg = "method")
    }
    xin <- if (!is.null(X)) X else nmf_sparse(nd)
    res <- map_runs(tasks, function(tk) {
      fit <- rank_fit(do.call(nmf, c(list(xin, tk$k, init = "random", seed = tk$seed), fit_args)))
      list(k = tk$k, labels = max.col(t(fit$H), ties.method = "first"), quality = quality(fit),
           converged = isTRUE(fit$converged))
    })
    cn <- nd$dimnames[[2]] %||% as.character(seq_len(n))
    per_rank <- lapply(k, function(kk) {
      runs <- Filter(function(r) r$k == kk, res)
      labs <- lapply(runs, `[[`, "labels")
      q <- rowMeans(vapply(runs, `[[`, numeric(4), "quality"))
      C <- Reduce(`+`, lapply(labs, function(l) outer(l, l, "=="))) / length(labs)
      dimnames(C) <- list(cn, cn)
      D <- stats::as.dist(1 - C)
      hc <- stats::hclust(D, "average")
      coph <- if (all(D == 0) || length(unique(as.vector(D))) < 2) 1 else
        suppressWarnings(stats::cor(stats::cophenetic(hc), D))
      cons <- stats::setNames(stats::cutree(hc, min(kk, n)), cn)
      list(row = data.frame(k = kk, cophenetic = coph, dispersion = mean(4 * (C - 0.5)^2),
                            silhouette = mean(silhouette_widths(1 - C, cons)),
                            clusters = mean(vapply(labs, function(l) length(unique(l)), numeric(1))),
                            umass = q[["umass"]], npmi = q[["npmi"]], exclusivity = q[["exclusivity"]],
                            frex = q[["frex"]]),
           consensus = C, hclust = hc, cluster = cons,
           labels = matrix(unlist(labs), nrow = length(labs), byrow = TRUE, dimnames = list(NULL, cn)),
           converged = vapply(runs, function(r) r$converged, logical(1)))
    })
    tab <- do.call(rbind, lapply(per_rank, `[[`, "row"))
    # the largest rank that is (near-)maximal in both stability measures,
    # among the ranks whose runs use all their clusters: a rank-k fit whose
    # columns fall into fewer than k clusters (spare components that win no
    # column) repeats the consensus of a smaller rank and is no evidence of
    # k clusters
    score <- tab$cophenetic * tab$dispersion
    full <- tab$clusters >= tab$k - 0.5
    if (!any(full)) full <- rep(TRUE, nrow(tab))
    best <- max(tab$k[full & score >= max(score[full]) - 1e-3])
    pick <- function(what) stats::setNames(lapply(per_rank, `[[`, what), k)
    details <- list(consensus = pick("consensus"), hclust = pick("hclust"), cluster = pick("cluster"),
                    labels = pick("labels"), converged = pick("converged"))
    converged <- unlist(details$converged)
  }
  rank_convergence(converged, max_iter, tol, "nmf_rank()")
  rownames(tab) <- NULL
  structure(list(table = tab, method = method, best = best, details = details, nrun = nrun,
                 rule = if (method == "consensus") NULL else rule, annotation = container$annotation),
            class = "aspectr_nmf_rank")
}

# What the plots of a cross-validation draw beside the errors: `se`, one
# standard error of each mean held-out error (results made before test_se
# was reported: the standard deviation), and `threshold`, that of the
# one-standard-error rule (NULL under another rule or without an error)
cv_rank_bars <- function(x) {
  tab <- x$table
  se <- tab$test_se %||% tab$test_sd
  i <- which.min(tab$test_error)
  list(se = se, threshold = if (identical(x$rule, "1se") && length(i) && is.finite(se[i])) tab$test_error[i] + se[i])
}

# A legend in one row under the title, clear of the curves.
rank_legend <- function(labels, lty, pch, col = graphics::par("fg")) {
  # (each entry as wide as its label: one width for all, the widest, ran
  # long labels into the next entry)
  widths <- graphics::strwidth(paste0(labels, "    "), cex = 0.75)
  # (one width per entry from R 4.2.0 on)
  if (getRversion() < "4.2.0") widths <- max(widths)
  graphics::legend("bottom", labels, lty = lty, pch = pch, col = col, horiz = TRUE, bty = "n", cex = 0.75,
                   text.width = widths,
                   inset = c(0, 1), xpd = NA, seg.len = 1.5)
}

# The non-zero cells of nmf_data() (dense or CSC) in the internal form
# coherence() reads (0-based rows and columns, values, dims).
nmf_corpus <- function(nd) {
  if (!is.null(nd$dense)) {
    nz <- which(nd$dense != 0, arr.ind = TRUE)
    return(list(idx = t(nz) - 1L, val = nd$dense[nz], dims = nd$dims))
  }
  j <- rep.int(seq_len(nd$dims[2]) - 1L, diff(nd$p))
  list(idx = rbind(nd$i, j), val = nd$x, dims = nd$dims)
}

# One cross-validation fit: mask, fit with imputation, score the masked cells.
cv_one <- function(X, tk, holdout, fit_args, quality) {
  cells <- length(X)
  mask <- with_seed(tk$held, sample.int(cells, max(1L, round(holdout * cells))))
  Xc <- X
  Xc[mask] <- mean(X[-mask])
  fit <- NULL
  for (outer in seq_len(10)) {
    args <- c(list(Xc, tk$k), fit_args)
    args$init <- if (is.null(fit)) "nndsvda" else list(W = fit$W, H = fit$H)
    if (is.null(fit)) args$seed <- tk$seed
    fit <- rank_fit(do.call(nmf, args))
    V <- fit$W %*% fit$H
    # (relative to the model's values, in units of their largest)
    change <- rel_error(V[mask], Xc[mask])
    Xc[mask] <- V[mask]
    if (change < 1e-4) break
  }
  V <- fit$W %*% fit$H
  c(list(k = tk$k, run = tk$run,
         test_error = rel_error(X[mask], V[mask]),
         train_error = rel_error(X[-mask], V[-mask])),
    as.list(quality(fit)), list(converged = isTRUE(fit$converged)))
}

# A fit of a rank selection's grid, without the warning that a KL fit's
# data are not counts (the imputed cells of cross-validation never are, and
# nmf_rank() and ntf_rank() report no likelihood; plsa_rank() refuses
# non-counts before fitting) and without its message when it
# does not converge: a grid has many fits, and rank_convergence() says once
# how many of them did not.
rank_fit <- function(expr) {
  withCallingHandlers(expr,
                      aspectr_warning_noncount = function(w) invokeRestart("muffleWarning"),
                      aspectr_message_not_converged = function(m) invokeRestart("muffleMessage"))
}

# One message for the fits of a rank selection that did not converge
# (`converged`: one logical per fit; `scores`: what those fits may
# overstate; `where`: the result's record of which fits converged)
rank_convergence <- function(converged, max_iter, tol, fn, scores = "errors", where = "details$converged") {
  n <- sum(!converged)
  if (n == 0) return(invisible(NULL))
  what <- sprintf("%d of the %d fits of %s did not converge in %d iterations (tol %s)", n, length(converged), fn,
                  max_iter, format(tol))
  cli::cli_inform(c("{what}.",
                    i = "Their {scores} may be too high: raise {.arg max_iter} or {.arg tol}; {.code {where}} says which."),
                  class = "aspectr_message_not_converged")
}

# One (rank, repetition) of method = "mask": the held-out cells left out of
# the fit by a mask (stratified over non-zeros and zeros for sparse x)
cv_mask_one <- function(x, tk, holdout, fit_args, quality, na_cells = NULL) {
  ij <- with_seed(tk$held, held_cells(x, holdout, na_cells))
  left <- rbind(ij, na_cells)
  M <- Matrix::sparseMatrix(i = left[, 1], j = left[, 2], dims = dim(x))
  fit <- rank_fit(do.call(nmf, c(list(x, tk$k, mask = M, init = "nndsvda", seed = tk$seed), fit_args)))
  xv <- as.numeric(x[ij])
  v <- rowSums(fit$W[ij[, 1], , drop = FALSE] * t(fit$H)[ij[, 2], , drop = FALSE])
  c(list(k = tk$k, run = tk$run,
         test_error = rel_error(xv, v),
         train_error = fit$rel_error[length(fit$rel_error)]),
    as.list(quality(fit)), list(converged = isTRUE(fit$converged)))
}

#' @export
print.aspectr_nmf_rank <- function(x, ...) {
  check_dots_empty(...)
  cat(sprintf("%s rank selection by %s (%d run%s per rank); suggested rank: %d%s\n\n",
              if (identical(x$family, "ntf")) "CP (ntf)" else "NMF",
              switch(x$method, cv = "cross-validation on held-out cells",
                     mask = "cross-validation on masked cells", "consensus clustering"),
              x$nrun, if (x$nrun == 1) "" else "s", x$best,
              switch(x$rule %||% "", "1se" = if (x$nrun > 1) " (one-standard-error rule)" else "",
                     min = " (smallest held-out error)", "")))
  tab <- x$table
  num <- vapply(tab, is.double, logical(1))
  tab[num] <- lapply(tab[num], signif, 4)
  tab$best <- ifelse(tab$k == x$best, "*", "")
  print(tab, row.names = FALSE)
  invisible(x)
}

#' Plot a rank selection
#'
#' `type = "stability"` (default): for cross-validation, held-out and
#' training error by rank (bars: one standard error of the mean held-out
#' error; dashed: the one-standard-error rule's threshold); for consensus, the score the rank is chosen by
#' (cophenetic correlation times dispersion) with its two factors. The
#' suggested rank is circled and marked by a dotted line.
#' `type = "consensus"` (consensus selections): the consensus map of rank
#' `k`, the share of runs in which two columns of the data fall in the same
#' cluster, ordered by the average-linkage dendrogram drawn above it, with
#' annotation tracks (the `annotation` given and the consensus clusters),
#' as the NMF package's `consensusmap()` draws it.
#'
#' @param x An `aspectr_nmf_rank` result.
#' @param type `"stability"` or `"consensus"`.
#' @param k For `"consensus"`: the rank (default the suggested one).
#' @param annotation For `"consensus"`: a data frame (or a vector) with one
#'   row per column of the data, drawn as tracks; `NULL` (default) uses the
#'   samples' annotations of a container (the result's `annotation`),
#'   `FALSE` draws none.
#' @param ... For `"stability"`: passed to [graphics::plot()].
#' @return `x`, invisibly.
#' @examples
#' set.seed(1)
#' X <- matrix(runif(60 * 3), 60) %*% matrix(runif(3 * 40), 3) + matrix(runif(2400, 0, 0.05), 60)
#' r <- nmf_rank(X, k = 2:4, method = "consensus", nrun = 5, seed = 1)
#' plot(r)
#' plot(r, type = "consensus", annotation = data.frame(half = rep(1:2, each = 20)))
#' @export
plot.aspectr_nmf_rank <- function(x, type = c("stability", "consensus"), k = NULL, annotation = NULL, ...) {
  type <- match_option(type, c("stability", "consensus"), "type")
  if (type == "consensus") {
    check_dots_empty(...)
    cm <- consensus_map(x, k, annotation)
    base_heatmap(cm$z, c(0, 1), map_palette(), cm$main, "consensus", dend = cm$dend, tracks = cm$tracks)
    return(invisible(x))
  }
  tab <- x$table
  if (x$method %in% c("cv", "mask")) {
    sb <- cv_rank_bars(x)
    se <- sb$se
    yl <- range(c(tab$test_error - se, tab$test_error + se, tab$train_error), na.rm = TRUE)
    graphics::plot(tab$k, tab$test_error, type = "b", pch = 19, ylim = yl, xlab = "rank k",
                   ylab = "relative error", main = "Held-out error by rank", xaxt = "n", ...)
    bars <- is.finite(se) & se > 0
    if (any(bars)) {
      graphics::arrows(tab$k[bars], (tab$test_error - se)[bars], tab$k[bars], (tab$test_error + se)[bars],
                       angle = 90, code = 3, length = 0.03)
    }
    graphics::lines(tab$k, tab$train_error, type = "b", lty = 2, pch = 1)
    if (!is.null(sb$threshold)) {
      graphics::abline(h = sb$threshold, lty = 5, col = "grey50")
      rank_legend(c("held out", "training", "smallest + 1 SE", "suggested rank"), lty = c(1, 2, 5, 3),
                  pch = c(19, 1, NA, NA), col = c(rep(graphics::par("fg"), 2), "grey50", graphics::par("fg")))
    } else {
      rank_legend(c("held out", "training", "suggested rank"), lty = c(1, 2, 3), pch = c(19, 1, NA))
    }
    y_best <- tab$test_error[tab$k == x$best]
  } else {
    # the score the rank is chosen by, and its two factors
    score <- tab$cophenetic * tab$dispersion
    yl <- range(c(score, tab$cophenetic, tab$dispersion), na.rm = TRUE)
    graphics::plot(tab$k, score, type = "b", pch = 19, ylim = yl, xlab = "rank k",
                   ylab = "stability", main = "Consensus stability by rank", xaxt = "n", ...)
    graphics::lines(tab$k, tab$cophenetic, type = "b", lty = 2, pch = 1)
    graphics::lines(tab$k, tab$dispersion, type = "b", lty = 4, pch = 2)
    rank_legend(c("cophenetic x dispersion", "cophenetic", "dispersion", "suggested rank"),
                lty = c(1, 2, 4, 3), pch = c(19, 1, 2, NA))
    y_best <- score[tab$k == x$best]
  }
  graphics::axis(1, at = tab$k)
  # (no rank suggested when no rank has a finite error)
  if (!is.na(x$best)) {
    graphics::abline(v = x$best, lty = 3)
    graphics::points(x$best, y_best, pch = 21, cex = 2)
  }
  invisible(x)
}

# Silhouette widths (Rousseeuw 1987) of the clustering `cl` under the
# dissimilarity matrix `d`: (b - a) / max(a, b), a the mean dissimilarity to
# the own cluster, b to the nearest other; 0 for a point alone in its
# cluster, and for every point when there is one cluster.
silhouette_widths <- function(d, cl) {
  groups <- sort(unique(cl))
  if (length(groups) < 2) return(rep(0, length(cl)))
  # mean dissimilarity of every point to every cluster (itself left out)
  size <- tabulate(match(cl, groups), length(groups))
  sums <- vapply(groups, function(g) rowSums(d[, cl == g, drop = FALSE]), numeric(length(cl)))
  sums <- matrix(sums, nrow = length(cl))
  own <- match(cl, groups)
  n_own <- size[own] - 1
  a <- ifelse(n_own > 0, sums[cbind(seq_along(cl), own)] / pmax(n_own, 1), 0)
  other <- sweep(sums, 2, size, "/")
  other[cbind(seq_along(cl), own)] <- Inf
  b <- apply(other, 1, min)
  w <- ifelse(n_own > 0, (b - a) / pmax(a, b), 0)
  w[!is.finite(w)] <- 0
  w
}

# A fraction of the non-zero cells `nz` and, apart, of the zero cells
# (linear positions among `cells`), never the missing ones `na`
held_stratified <- function(nz, na, cells, holdout) {
  a <- nz[sample.int(length(nz), max(1L, round(holdout * length(nz))))]
  want <- round(holdout * (cells - length(nz) - length(na)))
  z <- numeric(0)
  while (length(z) < want) {
    cand <- unique(floor(stats::runif(2 * (want - length(z)) + 10) * cells) + 1)
    z <- unique(c(z, cand[!cand %in% nz & !cand %in% na]))
  }
  c(a, z[seq_len(want)])
}

# A random `holdout` share of the cells of a matrix, as (i, j): for sparse
# x the same share of its non-zeros and of its zeros (drawn apart), so that
# both are held out; for dense x of all cells
held_cells <- function(x, holdout, na_cells = NULL) {
  dims <- dim(x)
  cells <- prod(as.numeric(dims))
  # (cells already missing, as (i, j), are never drawn: they are zeros of x
  # here, and stay out of the zeros' share)
  na <- if (is.null(na_cells)) numeric(0) else (na_cells[, 2] - 1) * dims[1] + na_cells[, 1]
  held <- if (methods::is(x, "sparseMatrix")) {
    s <- Matrix::summary(x)
    nz <- (s$j - 1) * dims[1] + s$i
    held_stratified(nz, na, cells, holdout)
  } else {
    pool <- if (length(na)) setdiff(seq_len(cells), na) else seq_len(cells)
    pool[sample.int(length(pool), max(1L, round(holdout * length(pool))))]
  }
  arrayInd(held, dims)
}

# One row per rank, as printed: the table of `nmf_rank()` or `ntf_rank()`
# (the runs' rows are in `details`)
#' @export
tidy.aspectr_nmf_rank <- function(x, ...) {
  check_dots_empty(...)
  tibble::as_tibble(x$table)
}

#' @export
summary.aspectr_nmf_rank <- function(object, ...) {
  check_dots_empty(...)
  structure(list(method = object$method, best = object$best, table = object$table,
                 nrun = object$nrun), class = "summary.aspectr_nmf_rank")
}

#' @export
print.summary.aspectr_nmf_rank <- function(x, ...) {
  check_dots_empty(...)
  cat(sprintf("NMF rank selection by %s (%s start%s per k): chosen k = %s\n\n",
              switch(x$method, cv = "cross-validation", mask = "masked cross-validation", "consensus clustering"),
              format(x$nrun), if (identical(x$nrun, 1)) "" else "s", format(x$best)))
  print(as.data.frame(x$table), row.names = FALSE, digits = 4)
  invisible(x)
}

# ---- autoplot ----------------------------------------------------------------

#' @rdname autoplot.aspectr
#' @exportS3Method ggplot2::autoplot
autoplot.aspectr_nmf_rank <- function(object, type = c("stability", "consensus"), k = NULL,
                                      annotation = NULL, ...) {
  check_dots_empty(...)
  check_ggplot2()
  type <- match_option(type, c("stability", "consensus"), "type")
  if (type == "consensus") {
    cm <- consensus_map(object, k, annotation)
    return(gg_heatmap(cm$z, c(0, 1), map_palette(), cm$main, "consensus", dend = cm$dend,
                      tracks = cm$tracks))
  }
  tab <- object$table
  d <- if (object$method %in% c("cv", "mask")) {
    rbind(data.frame(k = tab$k, value = tab$test_error, curve = "held out"),
          data.frame(k = tab$k, value = tab$train_error, curve = "training"))
  } else {
    rbind(data.frame(k = tab$k, value = tab$cophenetic * tab$dispersion, curve = "cophenetic x dispersion"),
          data.frame(k = tab$k, value = tab$cophenetic, curve = "cophenetic"),
          data.frame(k = tab$k, value = tab$dispersion, curve = "dispersion"))
  }
  bars <- hline <- NULL
  if (object$method %in% c("cv", "mask")) {
    sb <- cv_rank_bars(object)
    ok <- is.finite(sb$se) & sb$se > 0
    bars <- data.frame(k = tab$k[ok], lo = (tab$test_error - sb$se)[ok], hi = (tab$test_error + sb$se)[ok])
    hline <- sb$threshold
  }
  rank_plot(d, object$best, if (object$method %in% c("cv", "mask")) "relative error" else "stability",
            if (identical(object$family, "ntf")) "CP (ntf) rank" else "NMF rank", bars, hline)
}
