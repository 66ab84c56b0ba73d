# Choosing the number of topics (plsa_rank) and of latent classes
# (lca_rank): one fit per k, a table of criteria, the chosen k.

#' Choose the number of topics of a pLSA model
#'
#' Splits the documents (rows, or first-mode slices of a tensor) at random
#' into a training part and a held-out part, fits [plsa()] on the training
#' documents for every `k`, and scores each fit by the per-token
#' [perplexity()] of the held-out documents and by the log-likelihood, AIC
#' and BIC of the training fit. The held-out perplexity is by document
#' completion: the tokens of each held-out document are split at random in
#' two halves (binomial thinning of the counts), the topic proportions are
#' folded in from one half with the topics fixed, and the other half is
#' scored. (Folding in and scoring the same tokens rewards every extra
#' topic, so its perplexity keeps falling with `k`.) The
#' suggested `k` minimizes the chosen criterion. Beside it, for documents x
#' terms data, the table gives the means over topics of the
#' [topic_quality()] measures of each training fit: UMass and NPMI
#' coherence on the training documents, exclusivity and FREX (weight 0.7),
#' of the top `n_top` terms, to weigh fit against interpretability as stm
#' users do with `searchK()`. The values of `k` (and
#' their restarts) run in parallel through `future.apply` when a parallel
#' [future::plan()] is set, with the same results as sequentially.
#'
#' With `split = "cells"` (matrices) a random `holdout` share of the cells
#' is held out instead (for sparse counts the same share of the non-zeros
#' and of the zeros, drawn apart), every fit sees all documents with those
#' cells left out of its likelihood (`plsa(mask = )`, see "Missing cells
#' and weights" in [plsa()]), and the perplexity is that of the held-out
#' cells' counts under the model's probabilities of those cells,
#' \eqn{\exp(-\sum_h x_h \log(P_h / \sum_h P_h) / \sum_h x_h)}. The table
#' then has no likelihood columns (the fits do not see every cell), and the
#' criterion is the perplexity. A held-out count in a cell to which the
#' model gives probability 0 (KL fits of sparse data have exact zeros in
#' their factors) makes the perplexity infinite: that rank then predicts
#' some held-out counts as impossible. On sparse text this can happen for
#' every `k`; then no `k` is suggested (a warning says so) and held-out
#' documents, the default, are the comparison to use.
#'
#' @param x Counts, as for [plsa()]: documents x terms (or an N-way
#'   tensor).
#' @param k Candidate numbers of topics (whole numbers, at least 1).
#' @param holdout Share of the documents (or of the cells, `split =
#'   "cells"`) held out, in (0, 0.5].
#' @param split `"documents"` (default: held-out documents, completed) or
#'   `"cells"` (held-out cells of a matrix).
#' @param criterion `"perplexity"` (held out, default), `"BIC"` or `"AIC"`
#'   (of the training fit).
#' @param nrun Random starts per `k` (the best is kept).
#' @param max_iter,tol Passed to [plsa()].
#' @param seed Seed of the split and of the starts; `NULL` uses R's state.
#' @param threads Number of threads per fit; `NULL` uses [default_threads()].
#' @param n_top Number of top terms per topic for the quality measures
#'   (at least 2; at most the number of terms is used).
#' @param ... Further arguments to [plsa()] (for instance `tempering`).
#' @return An object of class `c("aspectr_plsa_rank", "aspectr_rank")`:
#'   `table` (one row per `k`: `k`, `perplexity`, `logLik`, `df`, `AIC`,
#'   `BIC`, for matrices of at least two terms `umass`, `npmi`, `exclusivity`, `frex`, then
#'   `iterations`, `converged`), `best` (the suggested `k`; `NA`, with a
#'   warning, when no `k` has a finite criterion),
#'   `criterion`, `heldout` (the held-out row indices), with `print()`,
#'   `plot()`, `autoplot()` and `tidy()` (the table) methods. Fits that do
#'   not converge within `max_iter` are counted in one message at the end
#'   (class `aspectr_message_not_converged`).
#' @seealso [lca_rank()], [nmf_rank()], [perplexity()]
#' @examples
#' r <- plsa_rank(sotu_dtm, k = c(2, 4, 8), max_iter = 100, tol = 1e-4, seed = 1)
#' r
#' plot(r)
#' @export
plsa_rank <- function(x, k = 2:10, holdout = 0.2, criterion = c("perplexity", "BIC", "AIC"),
                      nrun = 1, max_iter = 1000, tol = 1e-6, seed = NULL, threads = NULL,
                      n_top = 10, split = c("documents", "cells"), ...) {
  call <- match.call()
  check_required(x, "a count matrix or tensor")
  criterion <- match_option(criterion, c("perplexity", "BIC", "AIC"), "criterion")
  split <- match_option(split, c("documents", "cells"), "split")
  # (the criteria are likelihoods: data that are not counts are refused
  # before any fit is run)
  if (!inherits(x, "aspectr_shards")) {
    vals <- tryCatch(as_aspect_data(x, "x")$val, aspectr_error_input_empty = function(e) numeric(0))
    if (!check_count_data(x, vals, "plsa_rank", likelihood = FALSE)) {
      why <- if (!is.null(text_weighting(x))) "is weighted" else "has values that are not whole numbers"
      abort_input(c("{.arg x} must hold counts for {.fn plsa_rank}, whose criteria are likelihoods (perplexity, AIC, BIC); it {why}.",
                    i = "Give the raw counts."),
                  "value", arg = "x")
    }
  }
  if (split == "cells") {
    return(plsa_rank_cells(x, k, holdout, criterion, nrun, max_iter, tol, seed, threads, n_top, call, ...))
  }
  ctl <- check_rank_controls(holdout, nrun, max_iter, tol, seed, threads)
  holdout <- ctl$holdout; nrun <- ctl$nrun; max_iter <- ctl$max_iter
  tol <- ctl$tol; seed <- ctl$seed; threads <- ctl$threads
  d <- as_aspect_data(x, "x")
  n_docs <- d$dims[1]
  n_test <- round(holdout * n_docs)
  if (n_docs < 3) {
    abort_input("{.arg x} has {n_docs} document{?s}: too few to hold out one and fit 2.", "argument", arg = "x")
  }
  if (n_test < 1 || n_docs - n_test < 2) {
    abort_input("{.arg holdout} = {format(holdout)} must hold out at least one of the {n_docs} documents of {.arg x} and leave 2 to fit; it holds out {n_test}.",
                "argument", arg = "holdout")
  }
  k <- check_k_vector(k, max = n_docs - n_test, what = "at most the number of training documents")
  test <- with_seed(seed, sort(sample.int(n_docs, n_test)))
  seeds <- with_seed(if (is.null(seed)) NULL else seed + 1L, sample.int(.Machine$integer.max, length(k)))
  rows <- split_rows(x, d, test)
  halves <- with_seed(if (is.null(seed)) NULL else seed + 2L, thin_half(rows$test))
  # (the held-out documents have the fitted columns in their order: matched
  # by position, so that repeated column names, which the fit takes, do not
  # stop the fold-in)
  if (methods::is(halves$score, "Matrix")) {
    colnames(halves$score) <- NULL
    colnames(halves$foldin) <- NULL
  }
  n_top <- check_whole(n_top, "n_top", min = 2)
  quality <- length(d$dims) == 2 && d$dims[2] >= 2
  if (quality) {
    n_top <- min(n_top, d$dims[2])
    train_data <- as_aspect_data(rows$train, "x")
  }
  res <- map_runs(seq_along(k), function(i) {
    fit <- rank_fit(plsa(rows$train, k[i], nrun = nrun, max_iter = max_iter, tol = tol, seed = seeds[i],
                         threads = threads, ...))
    if (!identical(fit$loss, "kl")) {
      abort_input("{.fn plsa_rank} compares likelihood fits: the {.arg loss} must be {.val kl}, not {.val {fit$loss}}.",
                  "argument", arg = "loss", call = call("plsa_rank"))
    }
    ll <- logLik(fit)
    out <- data.frame(k = k[i], perplexity = as.numeric(perplexity(fit, halves$score, foldin = halves$foldin,
                                                                    threads = threads)),
                      logLik = as.numeric(ll), df = attr(ll, "df"), AIC = stats::AIC(fit),
                      BIC = stats::BIC(fit))
    rank_row(out, fit, if (quality) train_data, n_top)
  })
  tab <- do.call(rbind, res)
  rownames(tab) <- NULL
  rank_convergence(tab$converged, max_iter, tol, "plsa_rank()", "criteria", "table$converged")
  best <- rank_best(tab$k, tab[[criterion]], criterion)
  structure(list(table = tab, best = best, criterion = criterion, heldout = test, call = call,
                 what = "topics"),
            class = c("aspectr_plsa_rank", "aspectr_rank"))
}

#' Choose the number of latent classes
#'
#' Fits [lca()] for every `k` and tabulates the log-likelihood, number of
#' parameters, AIC, BIC, the likelihood-ratio and Pearson statistics
#' (\eqn{G^2}, \eqn{X^2}) and the residual degrees of freedom, as poLCA
#' users compare them, with the sample-size adjusted BIC (SABIC, Sclove
#' 1987: \eqn{\log((N + 2) / 24)} per parameter) and the consistent AIC
#' (CAIC, Bozdogan 1987: \eqn{\log N + 1} per parameter), and optionally
#' the p-value of the bootstrap likelihood-ratio test of every `k` against
#' `k - 1` classes ([lca_blrt()]); the suggested `k` minimizes the chosen
#' criterion (BIC by default, the usual choice for latent class models).
#' The values of `k` run in parallel through `future.apply` when a
#' parallel plan is set.
#' @references Bozdogan, H. (1987). Model selection and Akaike's
#'   information criterion (AIC): the general theory and its analytical
#'   extensions. *Psychometrika* 52, 345-370.
#'
#'   Sclove, S. L. (1987). Application of model-selection criteria to some
#'   problems in multivariate analysis. *Psychometrika* 52, 333-343.
#'
#' @param data A data frame of categorical variables, as for [lca()].
#' @param k Candidate numbers of classes (whole numbers, at least 1).
#' @param criterion `"BIC"` (default), `"AIC"`, `"SABIC"` or `"CAIC"`.
#' @param blrt Number of bootstrap draws of [lca_blrt()] for every `k`
#'   above 1 (column `blrt_p`: `k` against `k - 1` classes); 0 (default)
#'   skips the test. Not with sampling weights.
#' @param nrun Random starts per `k` (see [lca()]).
#' @param seed Seed of the starts; `NULL` uses R's state.
#' @param ... Further arguments to [lca()] (`max_iter`, `tol`, `na.rm`,
#'   `threads`, `weights`, `psu`, `strata`, ...); with sampling weights the
#'   table holds the weighted (pseudo-)likelihood and its criteria.
#' @return An object of class `c("aspectr_lca_rank", "aspectr_rank")`:
#'   `table` (one row per `k`: `k`, `logLik`, `npar`, `AIC`, `BIC`,
#'   `SABIC`, `CAIC`, `Gsq`, `Chisq`, `resid_df` (as poLCA's `resid.df`: the number of observations,
#'   or of cells of the response table minus 1 when smaller, minus `npar`),
#'   `converged`, and with `blrt > 0` `blrt_p`), `best`, `criterion`, `fits` (the
#'   [lca()] fits), with `print()`, `plot()`, `autoplot()` and `tidy()`
#'   (the table) methods.
#' @seealso [plsa_rank()], [nmf_rank()]
#' @examples
#' binned <- data.frame(lapply(iris[1:4], cut, 3))
#' r <- lca_rank(binned, k = 1:4, nrun = 5, seed = 1)
#' r
#' @export
lca_rank <- function(data, k = 1:6, criterion = c("BIC", "AIC", "SABIC", "CAIC"), nrun = 10, seed = NULL,
                     blrt = 0, ...) {
  call <- match.call()
  check_required(data, "a data frame of categorical variables")
  criterion <- match_option(criterion, c("BIC", "AIC", "SABIC", "CAIC"), "criterion")
  blrt <- check_whole(blrt, "blrt", min = 0, max = max_runs)
  nrun <- check_whole(nrun, "nrun", max = max_runs)
  seed <- check_seed(seed)
  k <- check_k_vector(k, max = .Machine$integer.max)
  grouping <- intersect(...names(), c("group", "invariance"))
  if (length(grouping)) {
    abort_input(c("{.fn lca_rank} does not take {.arg {grouping[1]}}: it compares models without groups.",
                  i = "Compare multiple-group fits of several {.arg k} by their AIC and BIC ({.fn glance}), and their invariance with {.fn lca_invariance}."),
                "argument", arg = grouping[1])
  }
  seeds <- with_seed(seed, sample.int(.Machine$integer.max, length(k)))
  # (a k the data cannot identify shows as a negative resid_df, not a warning)
  fits <- map_runs(seq_along(k), function(i) quiet_unidentified(lca(data, k[i], nrun = nrun, seed = seeds[i], ...)))
  tab <- do.call(rbind, lapply(fits, function(f) {
    n <- f$sum_weights %||% f$N
    data.frame(k = f$k, logLik = f$llik, npar = as.integer(f$npar), AIC = f$AIC, BIC = f$BIC,
               SABIC = -2 * f$llik + log((n + 2) / 24) * f$npar, CAIC = -2 * f$llik + (log(n) + 1) * f$npar,
               Gsq = f$Gsq, Chisq = f$Chisq,
               resid_df = as.integer(lca_resid_df(f, weighted = FALSE)),
               converged = f$converged)
  }))
  rownames(tab) <- NULL
  if (blrt > 0) {
    bseeds <- with_seed(seed, sample.int(.Machine$integer.max, length(k) + 1))[-1]
    tab$blrt_p <- vapply(seq_along(k), function(i) {
      if (k[i] < 2) return(NA_real_)
      lca_blrt(data, k[i], B = blrt, nrun = nrun, seed = bseeds[i], ...)$p.value
    }, numeric(1))
  }
  best <- tab$k[which.min(tab[[criterion]])]
  structure(list(table = tab, best = best, criterion = criterion, fits = fits, call = call,
                 what = "classes"),
            class = c("aspectr_lca_rank", "aspectr_rank"))
}

check_k_vector <- function(k, max, what = NULL, call = rlang::caller_env()) {
  if (!is.numeric(k) || is.object(k) || !length(k) || anyNA(k)) {
    abort_input("{.arg k} must be a non-empty vector of whole numbers, not {describe(k)}.",
                "argument", arg = "k", call = call)
  }
  k <- vapply(k, check_whole, integer(1), arg = "k", min = 1, max = max, what = what, call = call)
  check_k_distinct(k, call)
  sort(k)
}

# A rank sweep's ranks each once (a repeated rank would be fitted and
# reported twice, or silently merged).
# The controls a rank selection by held-out data shares: the held-out
# fraction (in (0, 0.5]), repetitions, each fit's limits, seed and threads
check_rank_controls <- function(holdout, nrun, max_iter, tol, seed, threads, call = rlang::caller_env()) {
  list(holdout = check_number(holdout, "holdout", 0, 0.5, lower_open = TRUE, call = call),
       nrun = check_whole(nrun, "nrun", max = max_runs, call = call), max_iter = check_whole(max_iter, "max_iter", call = call),
       tol = check_number(tol, "tol", 0, Inf, call = call), seed = check_seed(seed, call = call),
       threads = resolve_threads(threads, call = call))
}

# The seeds of held-out cross-validation (nmf_rank(), ntf_rank()): one per
# repetition for the held-out cells, the same at every rank, so that the
# ranks are compared on the same cells (paired), and one per fit
cv_seeds <- function(seed, nrun, nfit) {
  s <- with_seed(seed, sample.int(.Machine$integer.max, nrun + nfit))
  list(held = s[seq_len(nrun)], fit = s[nrun + seq_len(nfit)])
}

# The table of a held-out cross-validation by rank (details: one row per
# fit, with k, test_error, train_error and any other numeric columns,
# averaged): test_sd is the errors' standard deviation over the
# repetitions and test_se that of their mean
cv_rank_table <- function(details, extra = character(0)) {
  do.call(rbind, lapply(split(details, details$k), function(d) {
    n <- nrow(d)
    sdv <- if (n > 1) stats::sd(d$test_error) else NA_real_
    out <- data.frame(k = d$k[1], test_error = mean(d$test_error), test_sd = sdv, test_se = sdv / sqrt(n),
                      train_error = mean(d$train_error))
    for (e in extra) out[[e]] <- mean(d[[e]])
    out
  }))
}

# The suggested rank of a cross-validation table: the smallest mean
# held-out error ("min"), or the smallest rank whose mean is within one
# standard error of that smallest mean ("1se": Hastie, Tibshirani and
# Friedman 2009, section 7.10; the standard error of the best rank's mean,
# none with one repetition)
cv_rank_best <- function(tab, rule) {
  if (!any(is.finite(tab$test_error))) {
    cli::cli_warn("No rank has a finite held-out error: there is no rank to suggest.",
                  class = c("aspectr_warning_rank", "aspectr_warning"))
    return(NA_integer_)
  }
  i <- which.min(tab$test_error)
  if (rule == "min" || !is.finite(tab$test_se[i])) return(tab$k[i])
  min(tab$k[which(tab$test_error <= tab$test_error[i] + tab$test_se[i])])
}

# The relative error of the values v at cells whose data are x,
# sqrt(sum((x - v)^2) / sum(x^2)), in units of the largest |x| so that data
# of any scale neither underflow nor overflow; cells whose data are all 0:
# sqrt(sum(v^2)) / 1e-150, large for any v not 0.
rel_error <- function(x, v) {
  m <- if (length(x)) max(abs(x)) else 0
  if (!(m > 0)) return(sqrt(sum(v^2)) / 1e-150)
  sqrt(sum(((x - v) / m)^2) / sum((x / m)^2))
}

check_k_distinct <- function(k, call = rlang::caller_env()) {
  dup <- unique(k[duplicated(k)])
  if (length(dup)) {
    abort_input("{.arg k} must hold distinct ranks, not {describe(k)} repeating {.val {as.character(dup)}}.",
                "argument", arg = "k", call = call)
  }
  invisible(k)
}

# Training and held-out parts of the data by first-mode index, in the
# class of the input where possible (matrices, Matrix, tensors).
split_rows <- function(x, d, test) {
  if (length(d$dims) == 2) {
    m <- Matrix::sparseMatrix(i = d$idx[1, ] + 1L, j = d$idx[2, ] + 1L, x = d$val, dims = d$dims,
                              dimnames = if (all(vapply(d$dimnames, is.null, TRUE))) NULL else
                                lapply(d$dimnames, function(v) v %||% as.character(seq_len(0))))
    if (!is.null(d$dimnames[[2]])) colnames(m) <- d$dimnames[[2]]
    return(list(train = m[-test, , drop = FALSE], test = m[test, , drop = FALSE]))
  }
  t <- new_sptensor(t(d$idx + 1L), d$val, d$dims, d$dimnames)
  keep_rows <- function(rows) {
    sel <- t$index[, 1] %in% rows
    idx <- t$index[sel, , drop = FALSE]
    idx[, 1] <- match(idx[, 1], rows)
    dims <- t$dims
    dims[1] <- length(rows)
    dn <- t$dimnames
    if (!is.null(dn) && !is.null(dn[[1]])) dn[[1]] <- dn[[1]][rows]
    new_sptensor(idx, t$values[sel], dims, dn)
  }
  list(train = keep_rows(setdiff(seq_len(d$dims[1]), test)), test = keep_rows(test))
}

# Two random halves of held-out counts: whole counts by binomial thinning,
# other values split in two equal parts. list(foldin, score), each in the
# class of `x` (a sparse matrix or a tensor).
thin_half <- function(x) {
  v <- if (inherits(x, "aspectr_tensor")) x$values else x@x
  whole <- abs(v - round(v)) < 1e-8
  a <- v / 2
  a[whole] <- stats::rbinom(sum(whole), round(v[whole]), 0.5)
  b <- v - a
  if (inherits(x, "aspectr_tensor")) {
    fa <- x; fa$values <- a
    fb <- x; fb$values <- b
    keep_a <- a > 0; keep_b <- b > 0
    fa$index <- fa$index[keep_a, , drop = FALSE]; fa$values <- a[keep_a]
    fb$index <- fb$index[keep_b, , drop = FALSE]; fb$values <- b[keep_b]
    return(list(foldin = fa, score = fb))
  }
  fa <- x; fa@x <- a
  fb <- x; fb@x <- b
  list(foldin = Matrix::drop0(fa), score = Matrix::drop0(fb))
}

#' @export
print.aspectr_rank <- function(x, ...) {
  check_dots_empty(...)
  what <- if (inherits(x, "aspectr_plsa_rank")) "topics (pLSA)" else "latent classes"
  how <- if (x$criterion == "perplexity") "held-out perplexity" else x$criterion
  cat(sprintf("Number of %s by %s; suggested k: %s\n\n", what, how,
              if (is.na(x$best)) "none (every k's criterion is infinite)" else format(x$best)))
  tab <- x$table
  num <- vapply(tab, is.double, logical(1))
  tab[num] <- lapply(tab[num], signif, 6)
  tab$best <- ifelse(tab$k == x$best, "*", "")
  print(tab, row.names = FALSE)
  invisible(x)
}

#' Plot a choice of the number of topics or classes
#'
#' The criterion by `k` (held-out perplexity, or AIC and BIC), the
#' suggested `k` circled and marked by a dotted line, integer ticks.
#'
#' @param x An `aspectr_plsa_rank` or `aspectr_lca_rank` result.
#' @param ... Passed to [graphics::plot()].
#' @return `x`, invisibly.
#' @examples
#' r <- plsa_rank(sotu_dtm, k = c(2, 4, 6), max_iter = 200, tol = 1e-3, seed = 1)
#' plot(r)
#' @export
plot.aspectr_rank <- function(x, ...) {
  tab <- x$table
  rank_check_plottable(x)
  if (x$criterion == "perplexity") {
    y <- tab$perplexity
    graphics::plot(tab$k, y, type = "b", pch = 19, xlab = "number of topics k", xaxt = "n",
                   ylab = "held-out perplexity", main = "Held-out perplexity by k", ...)
  } else {
    y <- tab[[x$criterion]]
    yl <- range(c(tab$AIC, tab$BIC))
    graphics::plot(tab$k, tab$BIC, type = "b", pch = 19, ylim = yl, xaxt = "n",
                   xlab = paste("number of", x$what, "k"), ylab = "information criterion",
                   main = paste("AIC and BIC by k"), ...)
    graphics::lines(tab$k, tab$AIC, type = "b", pch = 1, lty = 2)
    rank_legend(c("BIC", "AIC", paste("suggested k (", x$criterion, ")", sep = "")), lty = c(1, 2, 3),
                pch = c(19, 1, NA))
  }
  graphics::axis(1, at = tab$k)
  graphics::abline(v = x$best, lty = 3)
  graphics::points(x$best, y[tab$k == x$best], pch = 21, cex = 2)
  invisible(x)
}

#' @export
tidy.aspectr_rank <- function(x, ...) {
  check_dots_empty(...)
  tibble::as_tibble(x$table)
}

# The suggested k: the smallest finite value of the criterion (the first
# k of a tie). None finite (every rank predicts some held-out counts as
# impossible): NA, with a classed warning.
rank_best <- function(k, values, criterion) {
  ok <- is.finite(values)
  if (!any(ok)) {
    cli::cli_warn(c("Every {.arg k}'s {criterion} is infinite, so no {.arg k} is suggested: each fit gives probability 0 to some held-out counts.",
                    i = "KL fits of sparse counts have exact zeros in their factors; compare the ranks on held-out documents ({.code split = \"documents\"}, the default)."),
                  class = c("aspectr_warning_rank", "aspectr_warning"))
    return(NA_integer_)
  }
  k[ok][which.min(values[ok])]
}

# a rank selection whose criterion has no finite value cannot be plotted
rank_check_plottable <- function(x, call = rlang::caller_env()) {
  if (is.na(x$best)) {
    abort_input("{.arg x} has no finite {x$criterion} for any {.arg k}: there is nothing to plot.",
                "value", arg = "x", call = call)
  }
}

# plsa_rank(split = "cells"): held-out cells left out of every fit
plsa_rank_cells <- function(x, k, holdout, criterion, nrun, max_iter, tol, seed, threads, n_top, call, ...) {
  if (criterion != "perplexity") {
    abort_input("{.arg criterion} must be {.val perplexity} with {.code split = \"cells\"} (the fits do not see every cell), not {.val {criterion}}.",
                "argument", arg = "criterion")
  }
  if (!(is.matrix(x) || methods::is(x, "Matrix")) || length(dim(x)) != 2) {
    abort_input("{.arg x} must be a matrix (base or {.cls Matrix}) with {.code split = \"cells\"}, not {describe(x)}.",
                "type", arg = "x")
  }
  ctl <- check_rank_controls(holdout, nrun, max_iter, tol, seed, threads)
  holdout <- ctl$holdout; nrun <- ctl$nrun; max_iter <- ctl$max_iter
  tol <- ctl$tol; seed <- ctl$seed; threads <- ctl$threads
  n_top <- check_whole(n_top, "n_top", min = 2)
  k <- check_k_vector(k, max = min(dim(x)), what = "at most the smaller dimension of `x`")
  ij <- with_seed(seed, held_cells(x, holdout))
  M <- Matrix::sparseMatrix(i = ij[, 1], j = ij[, 2], dims = dim(x))
  xh <- as.numeric(x[ij])
  seeds <- with_seed(if (is.null(seed)) NULL else seed + 1L, sample.int(.Machine$integer.max, length(k)))
  quality <- ncol(x) >= 2
  if (quality) {
    n_top <- min(n_top, ncol(x))
    xt <- x
    xt[ij] <- 0
    train_data <- as_aspect_data(xt, "x")
  }
  res <- map_runs(seq_along(k), function(i) {
    fit <- rank_fit(plsa(x, k[i], mask = M, nrun = nrun, max_iter = max_iter, tol = tol, seed = seeds[i],
                         threads = threads, ...))
    U <- fit$factors[[1]]; V <- fit$factors[[2]]
    P <- rowSums((U[ij[, 1], , drop = FALSE] * V[ij[, 2], , drop = FALSE]) %*% diag(as.numeric(fit$lambda),
                                                                                     length(fit$lambda)))
    P <- P / sum(P)
    pos <- xh > 0
    out <- data.frame(k = k[i], perplexity = exp(-sum(xh[pos] * log(P[pos])) / sum(xh)))
    rank_row(out, fit, if (quality) train_data, n_top)
  })
  tab <- do.call(rbind, res)
  rownames(tab) <- NULL
  rank_convergence(tab$converged, max_iter, tol, "plsa_rank()", "perplexities", "table$converged")
  best <- rank_best(tab$k, tab$perplexity, "perplexity")
  structure(list(table = tab, best = best, criterion = "perplexity", heldout = ij, call = call,
                 what = "topics", split = "cells"),
            class = c("aspectr_plsa_rank", "aspectr_rank"))
}

# A row of plsa_rank()'s table completed: the means of the topic quality
# measures on `train_data` (when given) and the fit's iterations
rank_row <- function(out, fit, train_data, n_top) {
  if (!is.null(train_data)) {
    q <- quality_means(quality_table(topic_form(fit, "{.fn plsa_rank}"), train_data, n_top, 1, 0.7))
    out <- cbind(out, as.data.frame(as.list(q)))
  }
  cbind(out, data.frame(iterations = fit$iterations, converged = fit$converged))
}

# ---- autoplot ----------------------------------------------------------------

#' @rdname autoplot.aspectr
#' @exportS3Method ggplot2::autoplot
autoplot.aspectr_rank <- function(object, ...) {
  check_dots_empty(...)
  check_ggplot2()
  rank_check_plottable(object)
  tab <- object$table
  if (object$criterion == "perplexity") {
    d <- data.frame(k = tab$k, value = tab$perplexity, curve = "held-out perplexity")
    return(rank_plot(d, object$best, "held-out perplexity", "Number of topics"))
  }
  d <- rbind(data.frame(k = tab$k, value = tab$BIC, curve = "BIC"),
             data.frame(k = tab$k, value = tab$AIC, curve = "AIC"))
  rank_plot(d, object$best, "information criterion", paste("Number of", object$what))
}
