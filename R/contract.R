# The fit contract: the fields every family's result carries, and the
# generics every family answers. Each family's methods live in its own
# file (family-*.R); here are the help pages those methods share, the
# default methods, the helpers used by several families, and the classed
# error for generics that do not apply.

# A generic that does not apply to a family: a classed error that says why
# and what to use instead.
abort_unsupported <- function(what, why, instead = NULL, call = rlang::caller_env(),
                              .envir = parent.frame()) {
  # the pieces are cli templates, interpolated in the caller's frame
  cli::cli_abort(c(paste0(what, " is not available: ", why), i = instead),
                 class = c("aspectr_error_unsupported", "aspectr_error"), call = call,
                 .envir = .envir)
}

family_label <- function(x) {
  labels <- c(plsa = "pLSA", nmf = "NMF", ntf = "NTF", lca = "latent class", symnmf = "symmetric NMF",
              sntf = "super-symmetric NTF")
  fam <- x$family %||% sub("^aspectr_", "", class(x)[1])
  if (fam %in% names(labels)) labels[[fam]] else fam
}

# the fitted data, converted, for the methods that need it (augment,
# residuals): `data` must be what the model was fitted to; `arg` names the
# method's argument that takes it, `usage` how the method is called
fitted_data <- function(object, data, call = rlang::caller_env(), arg = "data",
                        usage = paste0("f(fit, ", arg, " = x)")) {
  if (missing(data) || is.null(data)) abort_missing_data(arg, usage, call)
  d <- as_aspect_data(data, arg, call = call)
  if (!identical(as.integer(d$dims), as.integer(object$dims))) {
    abort_input("{.arg {arg}} must have the dimensions of the fitted data ({paste(object$dims, collapse = ' x ')}), not {paste(d$dims, collapse = ' x ')}.",
                "newdata", arg = arg, call = call)
  }
  # names on both sides must be the fitted data's, in its order
  for (n in seq_along(d$dims)) {
    a <- object$dimnames[[n]]
    b <- d$dimnames[[n]]
    if (!is.null(a) && !is.null(b) && !identical(as.character(a), as.character(b))) {
      what <- if (length(d$dims) == 2) c("row", "column")[n] else paste("mode", n)
      at <- which(as.character(a) != as.character(b))[1]
      abort_input("{.arg {arg}}'s {what} names must be those of the fitted data, in its order: {what} {at} is {.val {b[at]}}, not {.val {a[at]}}.",
                  "newdata", arg = arg, call = call)
    }
  }
  d
}

# a method called without the fitted data, which its argument `arg` takes
# (`usage`: how to call it)
abort_missing_data <- function(arg, usage, call = rlang::caller_env()) {
  abort_input(c("{.arg {arg}} is missing: this method needs the data the model was fitted to.",
                i = "Call it as {.code {usage}} with the {.arg x} given to the fitter."),
              "argument", arg = arg, call = call)
}

# the terms of the model at the non-zero cells of d: nnz x k, term r being
# weight_r prod_n U_n[i_n, r]
cell_terms <- function(factors, weights, d) {
  p <- rows_of(weights, ncol(d$idx))
  for (n in seq_along(factors)) p <- p * factors[[n]][d$idx[n, ] + 1L, , drop = FALSE]
  p
}

cell_index_columns <- function(d, names_n) {
  cols <- lapply(seq_len(nrow(d$idx)), function(n) {
    i <- d$idx[n, ] + 1L
    dn <- d$dimnames[[n]]
    if (is.null(dn)) i else dn[i]
  })
  names(cols) <- names_n
  cols
}

# ---- logLik -------------------------------------------------------------------

#' Log-likelihood, coefficients and standard errors of every family
#'
#' Under the generalized KL divergence, `nmf()` and `ntf()` fit the Poisson
#' model \eqn{x \sim \mathrm{Poisson}(v)} cell by cell, whose log-likelihood
#' is \eqn{\sum (x \log v - v - \log x!)}; `df` counts the free parameters
#' (\eqn{k (m + n - 1)} for NMF, \eqn{k (\sum_n d_n - N + 1)} for an N-way
#' NTF: each component's scale is shared by its factors) and `nobs` the
#' cells. A latent class fit reports the log-likelihood of its observations
#' (missing responses left out), with `npar` free parameters. Frobenius and
#' beta-divergence fits, and the clustering families, are not likelihood
#' models: their `logLik()` is a classed error (`aspectr_error_unsupported`).
#'
#' @param object A fit.
#' @param ... Must be empty.
#' @return An object of class `logLik`; [AIC()] and [BIC()] work on the fit.
#' @examples
#' fit <- nmf(sotu_dtm, 3, loss = "kl", seed = 1, max_iter = 100)
#' logLik(fit)
#' BIC(fit)
#' @name logLik.aspectr_fit
NULL

#' @rdname logLik.aspectr_fit
#' @export
logLik.aspectr_fit <- function(object, ...) {
  abort_unsupported(paste0("{.fn logLik} of a ", family_label(object), " fit"),
                    "its loss is not a likelihood.",
                    "Compare fits by their objective ({.code fit$value}) or {.fn glance}.")
}

#' @rdname logLik.aspectr_fit
#' @details `coef()` gives the regression-like parameters of the families
#'   that have them: the coefficient matrix \eqn{H} of `nmf()` (as the NMF
#'   package's `coef()`) and the parameters of latent class fits, which
#'   also answer `vcov()`, `confint()` and `anova()`. The other families
#'   (pLSA, NTF, the clustering families) have no coefficients and no
#'   standard errors: these generics, and `terms()` where a family has no
#'   terms, are a classed error (`aspectr_error_unsupported`) that says
#'   what to use instead.
#' @export
coef.aspectr_fit <- function(object, ...) {
  abort_unsupported(paste0("{.fn coef} of a ", family_label(object), " fit"),
                    "the model has no regression coefficients.",
                    "Its parameters are {.code fit$lambda} and {.code fit$factors} (for pLSA also {.fn topics} and {.fn terms}); {.fn tidy} gives them as a table.")
}

#' @rdname logLik.aspectr_fit
#' @export
vcov.aspectr_fit <- function(object, ...) no_standard_errors("vcov", object)

#' @rdname logLik.aspectr_fit
#' @param parm,level Not used: see Details.
#' @export
confint.aspectr_fit <- function(object, parm, level = 0.95, ...) no_standard_errors("confint", object)

#' @rdname logLik.aspectr_fit
#' @export
anova.aspectr_fit <- function(object, ...) {
  abort_unsupported(paste0("{.fn anova} of a ", family_label(object), " fit"),
                    "it has no likelihood-ratio tests between nested fits.",
                    "Choose the rank with the family's {.code *_rank()} function, or compare fits by {.fn glance}.")
}

#' @rdname logLik.aspectr_fit
#' @param x A fit (`terms()`).
#' @export
terms.aspectr_fit <- function(x, ...) {
  abort_unsupported(paste0("{.fn terms} of a ", family_label(x), " fit"),
                    "its components are not distributions over terms.",
                    "Its factors are {.code fit$factors} (or the family's own fields); {.fn tidy} gives them as a table.")
}

no_standard_errors <- function(what, object, call = rlang::caller_env()) {
  abort_unsupported(paste0("{.fn ", what, "} of a ", family_label(object), " fit"),
                    "the fit has no standard errors (they are computed for latent class models).",
                    "Assess the variability of the factors by refitting from other starts ({.arg nrun}, {.arg seed}).",
                    call = call)
}

# ---- fitted and residuals --------------------------------------------------------

#' Fitted values and residuals of every family
#'
#' `fitted()` rebuilds the model from the factors: \eqn{W H} for NMF, the
#' N-way array for NTF, \eqn{H H'} for symmetric NMF, the super-symmetric
#' tensor for SNTF (see [sntf()]), counts or probabilities
#' for pLSA ([fitted.aspectr_plsa()]). `residuals()` is the data minus the
#' fitted values; it needs the data (`x`), which fits do not keep. A latent
#' class fit has neither (its model is a distribution over response
#' patterns): use [predict()] for class posteriors and [glance()] for the
#' goodness-of-fit statistics.
#'
#' @param object A fit.
#' @param x The data the model was fitted to.
#' @param ... Must be empty.
#' @return A matrix or array like the data.
#' @examples
#' a <- crossprod(matrix(rpois(60, 2), 10))
#' fit <- symnmf(a, 2, seed = 1)
#' range(residuals(fit, a))
#' @name residuals.aspectr_fit
NULL

# ---- tidy and glance ---------------------------------------------------------

#' Tidy and glance at NTF, latent class and clustering fits
#'
#' * NTF: `tidy()` has one row per mode, index and component (`mode`,
#'   `index`, `component`, `value`: the unit-norm or unit-sum factor entry);
#'   `glance()` one row with the rank, loss, objective, iterations,
#'   convergence, `nobs` and, under KL, `logLik`, `AIC`, `BIC`.
#' * Latent classes: `tidy()` one row per variable, level and class
#'   (`variable`, `level`, `class`, `probability`: \eqn{P(level \mid
#'   class)}, summing to 1 over the levels of a variable in a class, and
#'   its `std.error`); `tidy(fit, "classes")` one row per class (`share`,
#'   `std.error`); `tidy(fit, "coefficients")` one row per term and class
#'   2..k of the class-membership logits (`term`, `class`, `estimate`,
#'   `std.error`, `statistic`, `p.value`: a t test with `N - npar` degrees
#'   of freedom, as \pkg{poLCA} prints them). Standard errors are `NA` for
#'   a fit with `se = FALSE`. `glance()` the log-likelihood, AIC, BIC,
#'   \eqn{G^2}, \eqn{\chi^2}, the residual degrees of freedom as
#'   \pkg{poLCA}'s `resid.df` (the number of observations, or the number
#'   of cells of the response table minus 1 when smaller, minus `npar`),
#'   `npar`, `nobs`, and two entropies: `entropy`, that of the fitted
#'   distribution over all cells of the response table,
#'   \eqn{-\sum_y P(y) \log P(y)}, as \pkg{poLCA}'s `poLCA.entropy()`
#'   (`NA` above `getOption("aspectr.max_cells", 1e8)` cells; 16.7 million
#'   cells take about a second), and `relative_entropy`, the
#'   classification certainty \eqn{1 - \sum_i \sum_r -\hat p_{ir} \log
#'   \hat p_{ir} / (N \log k)} of the class posteriors (Ramaswamy et al.
#'   1993; 1 when every observation is assigned with certainty), which is
#'   also `fit$entropy`.
#' * Symmetric NMF and SNTF: `tidy()` one row per point and cluster
#'   (`point`, `cluster`, `membership`: the row of the factor normalized to
#'   sum 1); `glance()` the rank, method, objective, relative error,
#'   iterations, convergence and the number of points.
#'
#' @param x A fit.
#' @param ... Must be empty.
#' @return A tibble.
#' @examples
#' set.seed(1)
#' survey <- data.frame(a = sample(c("yes", "no"), 200, TRUE),
#'                      b = sample(c("low", "mid", "high"), 200, TRUE),
#'                      c = sample(c("yes", "no"), 200, TRUE))
#' fit <- lca(survey, 2, seed = 1)
#' tidy(fit)
#' glance(fit)
#' @references Ramaswamy, V., DeSarbo, W. S., Reibstein, D. J. and
#'   Robinson, W. T. (1993). An empirical pooling approach for estimating
#'   marketing mix elasticities with PIMS data. *Marketing Science* 12,
#'   103-124.
#' @name tidy.aspectr_fit
NULL

membership_tibble <- function(m) {
  pts <- rownames(m) %||% as.character(seq_len(nrow(m)))
  tibble::tibble(point = rep(pts, times = ncol(m)), cluster = rep(seq_len(ncol(m)), each = nrow(m)),
                 membership = as.vector(m))
}

# ---- augment -------------------------------------------------------------------

#' Augment data with the components of a fit
#'
#' Shaped like \pkg{tidytext}'s `augment()` for topic models.
#'
#' * pLSA, NMF and NTF: one row per non-zero cell of `data` (the data the
#'   model was fitted to), with its indices (`document` and `term` for a
#'   matrix, one column per mode for N-way data), the `count` (or `value`),
#'   `.fitted` (the model's value at the cell) and `.topic` (pLSA) or
#'   `.component` (NMF, NTF): the component that contributes most to the
#'   cell, i.e. the largest posterior \eqn{P(z \mid d, w)}.
#' * pLSA, NMF and NTF with missing cells, masks or weights: one row per
#'   cell left out of the loss (its `count` or `value` `NA`, `observed`
#'   `FALSE`, `.fitted` the model's imputation) and, when `data` is given
#'   (with its `NA`), per observed cell of it (its non-zero cells, or with
#'   `observed =` the cells listed there; `observed` `TRUE`).
#' * pLSA and NMF with `data` a long table, one row per (document, term)
#'   pair with columns `document` and `term` (as `tidytext::tidy()` of a
#'   document-term matrix makes it; `word`, the column
#'   `tidytext::unnest_tokens()` and `dplyr::count()` make, is taken for
#'   `term` when there is none): the table as it is, with `.topic` added as
#'   tidytext's `augment()` adds it, the most probable topic of each token
#'   given its document, \eqn{\arg\max_z P(z \mid d, w)} (for an NMF,
#'   the component with the largest \eqn{W_{dz} H_{zw}}). Documents and
#'   terms are matched to the fit's by name (by number when the fit has no
#'   names); a document or term the fit does not have, or a cell the model
#'   gives no probability, gets `NA`. The rows need not be the fitted
#'   cells: any (document, term) pair of the fit can be asked for.
#' * Latent classes: one row per observation (of `data`, or of the fitted
#'   data when `data` is omitted) with `.class` and the posteriors
#'   `.prob_1`, ..., `.prob_k`.
#' * Symmetric NMF and SNTF: one row per point with `.cluster` (`NA` for
#'   points without membership) and `.prob_1`, ..., `.prob_k` (the
#'   normalized memberships); `data`, when given, is bound in front.
#'
#' @param x A fit.
#' @param data The data (see above).
#' @param ... Must be empty.
#' @return A tibble.
#' @examples
#' fit <- plsa(sotu_dtm, 3, seed = 1, max_iter = 50)
#' head(augment(fit, data = sotu_dtm))
#' # a long (document, term, n) table, as tidytext makes it
#' long <- data.frame(document = rownames(sotu_dtm)[c(1, 1, 2)],
#'                    term = c("wars", "taxation", "wars"), n = c(3, 1, 2))
#' augment(fit, data = long)
#' @name augment.aspectr_fit
NULL

# tidytext's augment() of a long (document, term, ...) table: the table as
# it is with `.topic`, the component with the largest P(z | d, w), i.e. of
# weight_z U[d, z] V[w, z]; NA for a document or term the fit does not
# have, or a cell to which the model gives no probability.
augment_long <- function(data, U, V, weights, docs, terms, call = rlang::caller_env()) {
  term_col <- if (!"term" %in% names(data) && "word" %in% names(data)) "word" else "term"
  miss <- setdiff(c("document", term_col), names(data))
  if (length(miss)) {
    abort_input(c("{.arg data} must be a matrix like the fitted data or a long table with columns {.var document} and {.var term}; it has no column{?s} {.var {miss}}.",
                  i = "Rename its columns (tidytext's {.fn tidy} of a document-term matrix names them so)."),
                "argument", arg = "data", call = call)
  }
  i <- match(as.character(data$document), docs)
  j <- match(as.character(data[[term_col]]), terms)
  ok <- !is.na(i) & !is.na(j)
  topic <- rep(NA_integer_, nrow(data))
  if (any(ok)) {
    p <- sweep(U[i[ok], , drop = FALSE] * V[j[ok], , drop = FALSE], 2, weights, "*")
    z <- max.col(p, ties.method = "first")
    z[!(rowSums(p) > 0)] <- NA_integer_
    topic[ok] <- z
  }
  out <- tibble::as_tibble(data)
  out$.topic <- topic
  out
}

augment_clusters <- function(x, data) {
  m <- x$membership
  probs <- as.data.frame(unname(m))
  names(probs) <- paste0(".prob_", seq_len(ncol(m)))
  out <- cbind(data.frame(point = rownames(m) %||% as.character(seq_len(nrow(m))),
                          .cluster = unname(x$cluster), stringsAsFactors = FALSE), probs)
  if (!is.null(data)) {
    if (NROW(data) != nrow(m)) {
      abort_input("{.arg data} must have one row per point ({nrow(m)}), not {NROW(data)}.",
                  "argument", arg = "data", call = rlang::caller_env())
    }
    out <- cbind(as.data.frame(data), out)
  }
  tibble::as_tibble(out)
}
