# Methods of latent class fits for the common generics: autoplot(),
# logLik(), fitted(), residuals(), tidy(), glance(), augment() (the shared
# helpers are in contract.R and autoplot.R).

# Long level names wrapped onto lines of about `width` characters (so an
# axis label is never cut); the result stays unique per variable.
wrap_levels <- function(x, width = 16) {
  vapply(x, function(s) paste(strwrap(s, width = width), collapse = "\n"), character(1), USE.NAMES = FALSE)
}

# Class profiles: one panel per variable, its levels on the vertical axis
# (named there, never inside bars), one horizontal bar per class and level
# (P(level | class)); one legend, of the classes with their shares.
autoplot_lca <- function(object) {
  k <- object$k
  cls <- sprintf("class %d (%.2f)", seq_len(k), object$P)
  d <- do.call(rbind, lapply(names(object$probs), function(v) lca_profile_rows(v, object$probs[[v]], cls)))
  d$panel <- factor(d$panel, levels = names(object$probs))
  lca_profile_plot(d, k, "P(level | class)", "Class profiles")
}

# The rows of the profile plot of one panel: the item's probabilities `m`
# (classes x levels), its levels prefixed by the panel's name (unique
# across panels; the prefix is cut from the axis labels)
lca_profile_rows <- function(panel, m, cls) {
  lv <- paste0(panel, "\r", wrap_levels(colnames(m)))
  data.frame(panel = panel, class = factor(rep(cls, ncol(m)), levels = cls),
             level = factor(rep(lv, each = nrow(m)), levels = rev(lv)), probability = as.vector(m))
}

# The profile plot of latent class fits (autoplot_lca(), the grouped fits'
# autoplot()) from the rows of lca_profile_rows(), `panel` a factor in the
# order of the panels: bars of every class's probability of each level, a
# panel per item, k classes' colours
lca_profile_plot <- function(d, k, xlab, title, subtitle = NULL) {
  J <- nlevels(d$panel)
  ncol <- if (J <= 3) J else if (J <= 4) 2 else if (J <= 9) 3 else 4
  ggplot2::ggplot(d, ggplot2::aes(x = .data$probability, y = .data$level, fill = .data$class)) +
    ggplot2::geom_col(position = ggplot2::position_dodge2(reverse = TRUE, padding = 0.1), width = 0.85) +
    ggplot2::facet_wrap(ggplot2::vars(.data$panel), scales = "free_y", ncol = ncol) +
    ggplot2::scale_y_discrete(labels = function(x) sub("^[^\r]*\r", "", x)) +
    ggplot2::scale_x_continuous(limits = c(0, 1), breaks = c(0, 0.5, 1), labels = c("0", "0.5", "1"),
                                expand = ggplot2::expansion(mult = c(0, 0.02))) +
    ggplot2::scale_fill_manual(values = grDevices::hcl.colors(max(k, 2), "Dark 3")[seq_len(k)]) +
    ggplot2::labs(x = xlab, y = NULL, fill = NULL, title = title, subtitle = subtitle) +
    ggplot2::theme_minimal() +
    ggplot2::theme(legend.position = "top", panel.grid.major.y = ggplot2::element_blank(),
                   panel.spacing.x = ggplot2::unit(1.2, "lines"),
                   axis.text.y = ggplot2::element_text(size = 7.5, lineheight = 0.85),
                   strip.text = ggplot2::element_text(face = "bold"))
}

#' @rdname logLik.aspectr_fit
#' @export
logLik.aspectr_lca <- function(object, ...) {
  check_dots_empty(...)
  structure(object$llik, df = as.integer(object$npar), nobs = object$N, class = "logLik")
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
  tibble::tibble(k = x$k, logLik = x$llik, AIC = x$AIC, BIC = x$BIC, Gsq = x$Gsq,
                 Chisq = x$Chisq, df = lca_resid_df(x), npar = as.integer(x$npar),
                 nobs = x$N, entropy = lca_cell_entropy(x), relative_entropy = x$entropy,
                 iterations = x$iterations, converged = x$converged)
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
