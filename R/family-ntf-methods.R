# Methods of NTF fits for the common generics: autoplot(), logLik(),
# residuals(), tidy(), glance(), augment() (print, summary, plot, fitted
# and predict are in family-ntf.R; the shared helpers in contract.R).

#' @rdname autoplot.aspectr
#' @exportS3Method ggplot2::autoplot
autoplot.aspectr_ntf <- function(object, ...) {
  check_dots_empty(...)
  check_ggplot2()
  object <- rows_in_memory(object)
  modes <- names(object$factors) %||% paste("mode", seq_along(object$factors))
  d <- do.call(rbind, lapply(seq_along(object$factors), function(n) {
    f <- object$factors[[n]]
    data.frame(mode = modes[n], index = rep(seq_len(nrow(f)), ncol(f)),
               level = rep(rownames(f) %||% as.character(seq_len(nrow(f))), ncol(f)),
               component = factor(rep(colnames(f) %||% seq_len(ncol(f)), each = nrow(f))),
               loading = as.vector(f),
               categorical = !is.null(rownames(f)) && nrow(f) <= 30)
  }))
  d$mode <- factor(d$mode, levels = modes)
  cat_d <- d[d$categorical, ]
  num_d <- d[!d$categorical, ]
  p <- ggplot2::ggplot() +
    ggplot2::facet_wrap(ggplot2::vars(.data$mode), scales = "free") +
    ggplot2::labs(y = "loading", x = NULL, colour = NULL, fill = NULL, title = "Factors by mode") +
    ggplot2::theme_minimal()
  if (nrow(cat_d)) {
    cat_d$level <- factor(cat_d$level, levels = unique(cat_d$level))
    p <- p + ggplot2::geom_col(data = cat_d, ggplot2::aes(x = .data$level, y = .data$loading, fill = .data$component),
                               position = "dodge")
  }
  if (nrow(num_d)) {
    p <- p + ggplot2::geom_line(data = num_d, ggplot2::aes(x = .data$index, y = .data$loading, colour = .data$component,
                                                           group = .data$component))
  }
  p
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

#' @rdname residuals.aspectr_fit
#' @export
residuals.aspectr_ntf <- function(object, x, ...) {
  check_dots_empty(...)
  object <- rows_in_memory(object)
  d <- fitted_data(object, x, arg = "x", usage = "residuals(fit, x)")
  arr <- array(0, d$dims)
  arr[t(d$idx + 1L)] <- d$val
  out <- arr - unname(fitted(object))
  dimnames(out) <- object$dimnames
  out
}

#' @rdname tidy.aspectr_fit
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

#' @rdname augment.aspectr_fit
#' @export
augment.aspectr_ntf <- function(x, data, ...) {
  check_dots_empty(...)
  x <- rows_in_memory(x)
  if (!is.null(x$weighting)) return(nway_augment_weighted(x, if (!missing(data)) data, as.numeric(x$weights)))
  d <- fitted_data(x, data, usage = "augment(fit, data = x)")
  p <- cell_terms(x$factors, as.numeric(x$weights), d)
  cols <- cell_index_columns(d, names(x$factors))
  tibble::as_tibble(c(cols, list(value = d$val, .fitted = rowSums(p),
                                 .component = max.col(p, ties.method = "first"))))
}
