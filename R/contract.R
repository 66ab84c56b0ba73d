# The fit contract: the fields every family's result carries, and the
# generics every family answers (those not written per family in its own
# file live here, next to the classed error for generics that do not apply).

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
  c(plsa = "pLSA", nmf = "NMF", ntf = "NTF", lca = "latent class", symnmf = "symmetric NMF",
    sntf = "super-symmetric NTF")[[x$family %||% sub("^aspectr_", "", class(x)[1])]]
}

# the fitted data, converted, for the methods that need it (augment,
# residuals): `data` must be what the model was fitted to
fitted_data <- function(object, data, call = rlang::caller_env()) {
  if (missing(data) || is.null(data)) {
    abort_input(c("{.arg data} is missing: this method needs the data the model was fitted to.",
                  i = "Call it as {.code f(fit, data = x)} with the {.arg x} given to the fitter."),
                "argument", arg = "data", call = call)
  }
  d <- as_aspect_data(data, "data", call = call)
  if (!identical(as.integer(d$dims), as.integer(object$dims))) {
    abort_input("{.arg data} must have the dimensions of the fitted data ({paste(object$dims, collapse = ' x ')}), not {paste(d$dims, collapse = ' x ')}.",
                "newdata", arg = "data", call = call)
  }
  d
}

# the terms of the model at the non-zero cells of d: nnz x k, term r being
# weight_r prod_n U_n[i_n, r]
cell_terms <- function(factors, weights, d) {
  p <- matrix(weights, ncol(d$idx), length(weights), byrow = TRUE)
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

#' Log-likelihood of NMF, NTF and latent class fits
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

#' @rdname logLik.aspectr_fit
#' @export
logLik.aspectr_ntf <- function(object, ...) {
  check_dots_empty(...)
  if (object$loss != "kl") {
    abort_unsupported("{.fn logLik} of a Frobenius NTF",
                      "only the generalized KL loss is a likelihood (the Poisson model).",
                      "Compare fits by their objective, or fit {.code ntf(x, k, loss = \"kl\")}.")
  }
  abort_noncount(object)
  N <- length(object$dims)
  df <- object$k * (sum(object$dims) - N + 1)
  structure(object$loglik_const - object$value, df = as.integer(df),
            nobs = prod(as.numeric(object$dims)), class = "logLik")
}

#' @rdname logLik.aspectr_fit
#' @export
logLik.aspectr_lca <- function(object, ...) {
  check_dots_empty(...)
  structure(object$llik, df = as.integer(object$npar), nobs = object$N, class = "logLik")
}

#' @rdname logLik.aspectr_fit
#' @export
logLik.aspectr_fit <- function(object, ...) {
  abort_unsupported(paste0("{.fn logLik} of a ", family_label(object), " fit"),
                    "its loss is not a likelihood.",
                    "Compare fits by their objective ({.code fit$value}) or {.fn glance}.")
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
  a <- as.matrix(x)
  if (!identical(dim(a), c(object$n, object$n))) {
    abort_input("{.arg x} must be the fitted {object$n} x {object$n} matrix, not {describe(x)}.", "newdata", arg = "x")
  }
  a - fitted(object)
}

#' @rdname residuals.aspectr_fit
#' @export
residuals.aspectr_plsa <- function(object, x, ...) {
  check_dots_empty(...)
  object <- rows_in_memory(object)
  d <- fitted_data(object, x)
  arr <- array(0, d$dims)
  arr[t(d$idx + 1L)] <- d$val
  if (length(d$dims) == 2) arr <- matrix(arr, d$dims[1])
  out <- arr - unname(fitted(object))
  dimnames(out) <- object$dimnames
  out
}

#' @rdname residuals.aspectr_fit
#' @export
residuals.aspectr_ntf <- function(object, x, ...) {
  check_dots_empty(...)
  object <- rows_in_memory(object)
  d <- fitted_data(object, x)
  arr <- array(0, d$dims)
  arr[t(d$idx + 1L)] <- d$val
  out <- arr - unname(fitted(object))
  dimnames(out) <- object$dimnames
  out
}

#' @rdname residuals.aspectr_fit
#' @export
residuals.aspectr_sntf <- function(object, x, ...) {
  check_dots_empty(...)
  y <- as.array(as_symtensor(x))
  f <- fitted(object)
  if (!identical(dim(y), dim(f))) {
    abort_input("{.arg x} must be the fitted tensor ({paste(dim(f), collapse = ' x ')}), not {paste(dim(y), collapse = ' x ')}.",
                "newdata", arg = "x")
  }
  y - f
}

#' @rdname residuals.aspectr_fit
#' @export
fitted.aspectr_lca <- function(object, ...) {
  abort_unsupported("{.fn fitted} of a latent class fit",
                    "the model is a distribution over response patterns, not a fitted value per observation.",
                    "Use {.code predict(fit)} for class posteriors, {.code glance(fit)} for G-squared and chi-squared.")
}

#' @rdname residuals.aspectr_fit
#' @export
residuals.aspectr_lca <- function(object, ...) {
  abort_unsupported("{.fn residuals} of a latent class fit",
                    "the model is a distribution over response patterns, not a fitted value per observation.",
                    "Use {.code glance(fit)} for G-squared and chi-squared.")
}

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
#' @export
tidy.aspectr_ntf <- function(x, ...) {
  check_dots_empty(...)
  x <- rows_in_memory(x)
  rows <- lapply(seq_along(x$factors), function(n) {
    f <- x$factors[[n]]
    idx <- rownames(f) %||% as.character(seq_len(nrow(f)))
    tibble::tibble(mode = names(x$factors)[n], index = rep(idx, times = x$k),
                   component = rep(seq_len(x$k), each = nrow(f)), value = as.vector(f))
  })
  do.call(rbind, rows)
}

#' @rdname tidy.aspectr_fit
#' @export
glance.aspectr_ntf <- function(x, ...) {
  check_dots_empty(...)
  kl <- x$loss == "kl" && !isFALSE(x$count_data)
  ll <- if (kl) logLik(x) else NA_real_
  tibble::tibble(k = x$k, loss = x$loss, method = x$method, objective = x$value,
                 iterations = x$iterations, converged = x$converged, stopped = isTRUE(x$stopped),
                 logLik = as.numeric(ll), AIC = if (kl) AIC(x) else NA_real_,
                 BIC = if (kl) BIC(x) else NA_real_, nobs = nobs(x))
}

#' @rdname tidy.aspectr_fit
#' @param what For a latent class fit: `"probs"` (item-response
#'   probabilities), `"classes"` (class shares) or `"coefficients"` (the
#'   multinomial logits of class membership: the regression coefficients
#'   of a latent class regression, or \eqn{\log(P_r / P_1)} of a plain
#'   model). Unique abbreviations are accepted.
#' @param conf.int,conf.level Add Wald confidence intervals (`conf.low`,
#'   `conf.high`) at level `conf.level`; for probabilities and class shares
#'   computed on the logit scale and transformed back (see
#'   [confint.aspectr_lca()]).
#' @export
tidy.aspectr_lca <- function(x, what = c("probs", "classes", "coefficients"), conf.int = FALSE,
                             conf.level = 0.95, ...) {
  check_dots_empty(...)
  choices <- c("probs", "classes", "coefficients")
  if (!identical(what, choices) && is.character(what) && length(what) == 1 && !is.na(what) &&
      !is.na(pmatch(what, choices))) what <- choices[pmatch(what, choices)]
  what <- match_option(what, choices, "what")
  conf.int <- check_flag(conf.int, "conf.int")
  conf.level <- check_number(conf.level, "conf.level", 0, 1, lower_open = TRUE, upper_open = TRUE)
  z <- stats::qnorm(1 - (1 - conf.level) / 2)
  if (what == "coefficients") {
    if (x$k < 2) {
      abort_unsupported("{.code tidy(fit, \"coefficients\")} of a one-class fit",
                        "it has no class-membership logits.")
    }
    est <- coef(x)
    nb <- (x$k - 1) * (if (is.null(x$coeff)) 1L else nrow(x$coeff))
    terms <- if (is.null(x$coeff)) "(Intercept)" else rownames(x$coeff)
    se <- if (is.null(x[["se"]]$vcov_all)) rep(NA_real_, nb) else unname(sqrt(pmax(diag(x$se$vcov_all)[seq_len(nb)], 0)))
    b <- unname(est[seq_len(nb)])
    stat <- b / se
    # as poLCA prints them: t with N - npar degrees of freedom
    out <- tibble::tibble(term = rep(terms, times = x$k - 1),
                          class = rep(seq_len(x$k)[-1], each = length(terms)),
                          estimate = b, std.error = se, statistic = stat,
                          p.value = 2 * stats::pt(abs(stat), max(x$N - x$npar, 1), lower.tail = FALSE))
    if (conf.int) {
      out$conf.low <- b - z * se
      out$conf.high <- b + z * se
    }
    return(out)
  }
  tab <- lca_prob_table(x)
  tab <- if (what == "probs") tab[!is.na(tab$variable), , drop = FALSE] else tab[is.na(tab$variable), , drop = FALSE]
  # (probabilities: variable by variable, levels within classes, as before)
  if (what == "probs") {
    ord <- unlist(lapply(names(x$probs), function(v) {
      i <- which(tab$variable == v)
      i[order(match(tab$level[i], colnames(x$probs[[v]])), tab$class[i])]
    }))
    tab <- tab[ord, , drop = FALSE]
    out <- tibble::tibble(variable = tab$variable, level = tab$level, class = tab$class,
                          probability = tab$estimate, std.error = tab$std.error)
  } else {
    out <- tibble::tibble(class = tab$class, share = tab$estimate, std.error = tab$std.error)
  }
  if (conf.int) {
    ci <- logit_wald(tab$estimate, tab$std.error, z)
    out$conf.low <- ci$low
    out$conf.high <- ci$high
  }
  out
}

#' @rdname tidy.aspectr_fit
#' @export
glance.aspectr_lca <- function(x, ...) {
  check_dots_empty(...)
  # residual degrees of freedom as poLCA's resid.df: the observations, or
  # the cells of the response table less 1 when fewer, minus the free
  # parameters
  cells <- prod(vapply(x$probs, ncol, numeric(1)))
  n <- x$sum_weights %||% x$N
  tibble::tibble(k = x$k, logLik = x$llik, AIC = x$AIC, BIC = x$BIC, Gsq = x$Gsq,
                 Chisq = x$Chisq, df = min(n, cells - 1) - x$npar, npar = as.integer(x$npar),
                 nobs = x$N, entropy = lca_cell_entropy(x), relative_entropy = x$entropy,
                 iterations = x$iterations, converged = x$converged)
}

membership_tibble <- function(m) {
  pts <- rownames(m) %||% as.character(seq_len(nrow(m)))
  tibble::tibble(point = rep(pts, times = ncol(m)), cluster = rep(seq_len(ncol(m)), each = nrow(m)),
                 membership = as.vector(m))
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
#'   document-term matrix or `tidytext::unnest_tokens()` and
#'   `dplyr::count()` make it): the table as it is, with `.topic` added as
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
#' @export
augment.aspectr_plsa <- function(x, data, ...) {
  check_dots_empty(...)
  x <- rows_in_memory(x)
  if (!is.null(x$weighting) && !(!missing(data) && is.data.frame(data))) {
    # (missing cells, masks, weights: the cells left out too, imputed)
    if (length(x$dims) == 2) return(plsa_augment_weighted(x, if (!missing(data)) data))
    return(nway_augment_weighted(x, if (!missing(data)) data, as.numeric(x$lambda) * x$total, "count", ".topic"))
  }
  if (!missing(data) && is.data.frame(data)) {
    if (length(x$dims) != 2) {
      abort_input("{.arg data} must be the fitted tensor for an N-way fit, not a data frame.",
                  "type", arg = "data")
    }
    return(augment_long(data, x$factors[[1]], x$factors[[2]], as.numeric(x$lambda),
                        doc_names(x), term_names(x)))
  }
  d <- fitted_data(x, data)
  p <- cell_terms(x$factors, as.numeric(x$lambda), d)
  cols <- cell_index_columns(d, if (length(d$dims) == 2) c("document", "term") else names(x$factors))
  tibble::as_tibble(c(cols, list(count = d$val, .fitted = rowSums(p) * x$total,
                                 .topic = max.col(p, ties.method = "first"))))
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
  d <- fitted_data(x, data)
  p <- cell_terms(list(x$W, t(x$H)), rep(1, x$k), d)
  cols <- cell_index_columns(d, c("row", "column"))
  tibble::as_tibble(c(cols, list(value = d$val, .fitted = rowSums(p),
                                 .component = max.col(p, ties.method = "first"))))
}

#' @rdname augment.aspectr_fit
#' @export
augment.aspectr_ntf <- function(x, data, ...) {
  check_dots_empty(...)
  x <- rows_in_memory(x)
  if (!is.null(x$weighting)) return(nway_augment_weighted(x, if (!missing(data)) data, as.numeric(x$weights)))
  d <- fitted_data(x, data)
  p <- cell_terms(x$factors, as.numeric(x$weights), d)
  cols <- cell_index_columns(d, names(x$factors))
  tibble::as_tibble(c(cols, list(value = d$val, .fitted = rowSums(p),
                                 .component = max.col(p, ties.method = "first"))))
}

#' @rdname augment.aspectr_fit
#' @export
augment.aspectr_lca <- function(x, data = NULL, ...) {
  check_dots_empty(...)
  post <- if (is.null(data)) x$posterior else predict(x, data)
  cls <- max.col(post, ties.method = "first")
  probs <- as.data.frame(unname(post))
  names(probs) <- paste0(".prob_", seq_len(ncol(post)))
  out <- tibble::tibble(.class = cls)
  out <- cbind(out, probs)
  if (!is.null(data)) out <- cbind(as.data.frame(data), out)
  tibble::as_tibble(out)
}

# tidytext's augment() of a long (document, term, ...) table: the table as
# it is with `.topic`, the component with the largest P(z | d, w), i.e. of
# weight_z U[d, z] V[w, z]; NA for a document or term the fit does not
# have, or a cell to which the model gives no probability.
augment_long <- function(data, U, V, weights, docs, terms, call = rlang::caller_env()) {
  miss <- setdiff(c("document", "term"), names(data))
  if (length(miss)) {
    abort_input(c("{.arg data} must be a matrix like the fitted data or a long table with columns {.var document} and {.var term}; it has no column{?s} {.var {miss}}.",
                  i = "Rename its columns (tidytext's {.fn tidy} of a document-term matrix names them so)."),
                "argument", arg = "data", call = call)
  }
  i <- match(as.character(data$document), docs)
  j <- match(as.character(data$term), terms)
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

#' @rdname augment.aspectr_fit
#' @export
augment.aspectr_symnmf <- function(x, data = NULL, ...) {
  check_dots_empty(...)
  augment_clusters(x, data)
}

#' @rdname augment.aspectr_fit
#' @export
augment.aspectr_sntf <- function(x, data = NULL, ...) {
  check_dots_empty(...)
  augment_clusters(x, data)
}

# ---- summary of multiway_cluster ------------------------------------------------

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
