# Methods of multiple-group latent class fits (lca(..., group = )) and the
# likelihood-ratio tests of measurement invariance.

#' Methods for multiple-group latent class fits
#'
#' Generics of a multiple-group latent class fit (`lca(data, k, group =
#' g)`, see [lca_groups]):
#' * `coef()` the free parameters (per group the class logits
#'   \eqn{\log(P_{gr} / P_{g1})}, named `class_r|group`; the item log-odds
#'   \eqn{\log(p_{jrc} / p_{jr1})}, named `variable[level]:class_r`, with
#'   `|group` without invariance), `vcov()` their covariance (the
#'   inverse empirical information, or the sandwich covariance with
#'   sampling weights);
#' * `tidy()` one row per group, item, level and class (`group`,
#'   `variable`, `level`, `class`, `probability`, `std.error`), or with
#'   `what = "classes"` one row per group and class (`group`, `class`,
#'   `share`, `std.error`); `conf.int = TRUE` adds Wald intervals computed
#'   on the logit scale (as [confint.aspectr_lca()]);
#' * `glance()` one row: classes, groups, the invariance, log-likelihood,
#'   AIC, BIC, \eqn{G^2}, \eqn{\chi^2}, residual `df`, `npar`, `nobs`, the
#'   relative entropy of the posteriors, iterations and convergence;
#' * `predict()` class posteriors (or classes) of new observations, which
#'   need their groups: the group column of the fit in `newdata`, or
#'   `group`; `augment()` the same as a tibble (`.group`, `.class`,
#'   `.prob_1`, ...), after the columns of `data` when it is given;
#' * `anova()` likelihood-ratio tests of nested multiple-group fits of the
#'   same data and groups (see [lca_invariance()]); a fit of [lca()]
#'   without groups (and without covariates) of the same items may be one
#'   of them: it is the model with the class shares (and item-response
#'   probabilities) equal across the groups, nested in full invariance, so
#'   the test against it asks whether the class shares differ between the
#'   groups (with \eqn{(G - 1)(k - 1)} degrees of freedom).
#'
#' @param object,x A multiple-group latent class fit (`aspectr_lca_groups`).
#' @param what `"probs"` (item-response probabilities) or `"classes"`
#'   (class shares per group).
#' @param conf.int,conf.level Add Wald confidence intervals at level
#'   `conf.level`.
#' @param newdata A data frame with the items of the fit (and the group
#'   column, when the fit's groups were a column); omitted: the
#'   observations of the fit.
#' @param group For `predict()`: the group of every row of `newdata`,
#'   when the fit's groups were not a column of the data (or to override
#'   it); for `plot()` and `autoplot()`: the group(s) to draw, by label or
#'   number (`autoplot()`: all by default).
#' @param type `"posterior"` or `"class"`.
#' @param digits Digits to print.
#' @param ... For `anova()`, further `aspectr_lca_groups` fits; for
#'   `plot()`, passed to [graphics::barplot()]; otherwise must be empty.
#' @return `coef()` a named vector, `vcov()` a named matrix, `tidy()`,
#'   `glance()` and `augment()` tibbles, `predict()` a matrix or an integer vector,
#'   `anova()` a data frame of class `anova` (one row per fit, ordered by
#'   the number of parameters: classes, parameters, log-likelihood, AIC,
#'   BIC, and the likelihood-ratio statistic, its degrees of freedom and
#'   p-value against the row before; the heading names each model's
#'   invariance).
#' @examples
#' set.seed(1)
#' g <- rep(c("a", "b"), each = 300)
#' cls <- ifelse(runif(600) < ifelse(g == "a", 0.3, 0.6), 1, 2)
#' items <- as.data.frame(lapply(1:4, function(j) ifelse(runif(600) < c(0.2, 0.8)[cls], "yes", "no")))
#' fit <- lca(items, 2, group = g, seed = 1)
#' tidy(fit, "classes")
#' glance(fit)
#' predict(fit, items[1:3, ], group = c("a", "b", "b"))
#' @name aspectr_lca_groups
#' @aliases coef.aspectr_lca_groups
NULL

#' @rdname aspectr_lca_groups
#' @export
print.aspectr_lca_groups <- function(x, digits = 3, ...) {
  check_dots_empty(...)
  digits <- check_whole(digits, "digits", min = 0, max = 15)
  inv <- switch(x$invariance, full = "item-response probabilities equal across groups",
                none = "item-response probabilities free per group")
  cat(sprintf("<aspectr_lca_groups> multiple-group latent class model: %d classes, %d variables, %d groups, N = %d\n",
              x$k, length(x$variables), x$G, x$N))
  cat(inv, "\n", sep = "")
  if (!is.null(x$sum_weights)) cat(sprintf("sampling weights (sum %s); sandwich standard errors\n",
                                           format(signif(x$sum_weights, 6))))
  cat(sprintf("log-likelihood %.4f, npar %d, AIC %.4f, BIC %.4f, G^2 %.4f, X^2 %.4f\n",
              x$llik, as.integer(x$npar), x$AIC, x$BIC, x$Gsq, x$Chisq))
  cat("\nclass shares by group:\n")
  print(round(x$P, digits))
  cat("\nitem-response probabilities P(level | class", if (x$invariance == "full") ")" else ", group)", ":\n", sep = "")
  for (v in x$variables) {
    if (x$invariance == "none") {
      for (g in x$groups) {
        cat("$", v, " [", g, "]\n", sep = "")
        print(round(x$probs[[g]][[v]], digits))
      }
    } else {
      cat("$", v, "\n", sep = "")
      print(round(x$probs[[1]][[v]], digits))
    }
  }
  invisible(x)
}

#' @rdname aspectr_lca_groups
#' @export
summary.aspectr_lca_groups <- function(object, ...) {
  check_dots_empty(...)
  structure(list(k = object$k, G = object$G, N = object$N, Ng = object$Ng, invariance = object$invariance,
                 fit = c(logLik = object$llik, npar = object$npar, AIC = object$AIC, BIC = object$BIC,
                         Gsq = object$Gsq, Chisq = object$Chisq, df = object$df),
                 classes = tidy(object, "classes")),
            class = "summary.aspectr_lca_groups")
}

#' @export
print.summary.aspectr_lca_groups <- function(x, ...) {
  check_dots_empty(...)
  cat(sprintf("Multiple-group latent class model, %d classes, %d groups (%s), N = %d\n",
              x$k, x$G, paste(sprintf("%s: %d", names(x$Ng), x$Ng), collapse = ", "), x$N))
  cat("measurement invariance:", x$invariance, "\n\n")
  print(noquote(vapply(x$fit, function(v) format(round(v, 4)), character(1))))
  cat("\nclass shares by group:\n")
  cls <- as.data.frame(x$classes)
  cls$share <- round(cls$share, 4)
  cls$std.error <- round(cls$std.error, 4)
  print(cls, row.names = FALSE)
  invisible(x)
}

#' @rdname aspectr_lca_groups
#' @export
logLik.aspectr_lca_groups <- function(object, ...) {
  check_dots_empty(...)
  structure(object$llik, df = as.integer(object$npar), nobs = object$N, class = "logLik")
}

#' @export
nobs.aspectr_lca_groups <- function(object, ...) {
  check_dots_empty(...)
  object$N
}

#' @rdname aspectr_lca_groups
#' @export
coef.aspectr_lca_groups <- function(object, ...) {
  check_dots_empty(...)
  b <- as.vector(t(log(object$P[, -1, drop = FALSE] / object$P[, 1])))
  items <- unlist(lapply(seq_along(object$variables), function(j) {
    v <- object$variables[j]
    gs <- if (object$invariance == "none") object$groups else object$groups[1]
    unlist(lapply(gs, function(g) {
      p <- object$probs[[g]][[v]]
      unlist(lapply(seq_len(nrow(p)), function(r) log(p[r, -1] / p[r, 1])))
    }))
  }), use.names = FALSE)
  stats::setNames(c(b, items), lcg_param_names(object))
}

#' @rdname aspectr_lca_groups
#' @export
vcov.aspectr_lca_groups <- function(object, ...) {
  check_dots_empty(...)
  if (is.null(object[["se"]]$vcov_all)) {
    abort_unsupported("{.fn vcov} of this fit", "it was fitted with {.code se = FALSE}.",
                      "Refit with {.code se = TRUE} (the default).")
  }
  object$se$vcov_all
}

#' @rdname aspectr_lca_groups
#' @export
tidy.aspectr_lca_groups <- function(x, what = c("probs", "classes"), conf.int = FALSE, conf.level = 0.95, ...) {
  check_dots_empty(...)
  what <- match_option(what, c("probs", "classes"), "what")
  conf.int <- check_flag(conf.int, "conf.int")
  conf.level <- check_number(conf.level, "conf.level", 0, 1, lower_open = TRUE, upper_open = TRUE)
  se <- x[["se"]]
  if (what == "classes") {
    s <- if (is.null(se)) x$P * NA_real_ else se$P
    out <- tibble::tibble(group = rep(x$groups, times = x$k), class = rep(seq_len(x$k), each = x$G),
                          share = as.vector(x$P), std.error = as.vector(s))
    out <- out[order(match(out$group, x$groups), out$class), ]
    est <- out$share
  } else {
    rows <- lapply(x$groups, function(g) {
      do.call(rbind, lapply(x$variables, function(v) {
        p <- x$probs[[g]][[v]]  # classes x levels
        s <- if (is.null(se)) p * NA_real_ else se$probs[[g]][[v]]
        tibble::tibble(group = g, variable = v, level = rep(colnames(p), each = nrow(p)),
                       class = rep(seq_len(nrow(p)), times = ncol(p)), probability = as.vector(p),
                       std.error = as.vector(s))
      }))
    })
    out <- do.call(rbind, rows)
    est <- out$probability
  }
  if (conf.int) {
    ci <- logit_wald(est, out$std.error, stats::qnorm(1 - (1 - conf.level) / 2))
    out$conf.low <- ci$low
    out$conf.high <- ci$high
  }
  out
}

#' @rdname aspectr_lca_groups
#' @export
glance.aspectr_lca_groups <- function(x, ...) {
  check_dots_empty(...)
  tibble::tibble(k = x$k, groups = x$G, invariance = x$invariance, logLik = x$llik, AIC = x$AIC,
                 BIC = x$BIC, Gsq = x$Gsq, Chisq = x$Chisq, df = x$df, npar = as.integer(x$npar),
                 nobs = x$N, relative_entropy = x$entropy, iterations = x$iterations,
                 converged = x$converged)
}

#' @rdname aspectr_lca_groups
#' @export
predict.aspectr_lca_groups <- function(object, newdata, group = NULL, type = c("posterior", "class"), ...) {
  check_dots_empty(...)
  type <- match_option(type, c("posterior", "class"), "type")
  if (missing(newdata) || is.null(newdata)) {
    post <- object$posterior
  } else {
    if (!is.data.frame(newdata)) {
      abort_input("{.arg newdata} must be a data frame with the fitted variables, not {describe(newdata)}.",
                  "newdata", arg = "newdata")
    }
    if (is.null(group)) {
      if (is.null(object$group_var) || !object$group_var %in% names(newdata)) {
        abort_input(c("{.arg group} is missing: the class posteriors of new observations depend on their groups.",
                      i = "Give {.arg group} (one per row of {.arg newdata}){if (!is.null(object$group_var)) paste0(' or a column ', object$group_var, ' in newdata')}."),
                    "argument", arg = "group")
      }
      group <- newdata[[object$group_var]]
    }
    if (!is.atomic(group) || length(group) != nrow(newdata)) {
      abort_input("{.arg group} must give the group of every row of {.arg newdata} ({nrow(newdata)}), not {describe(group)}.",
                  "argument", arg = "group")
    }
    gi <- match(as.character(group), object$groups)
    bad <- is.na(gi)
    if (any(bad)) {
      unknown <- unique(as.character(group[bad]))
      known <- paste0('"', object$groups, '"', collapse = ", ")
      abort_input("{.arg group} must name groups of the fit ({known}), not {.val {unknown}}.",
                  "newdata", arg = "group")
    }
    codes <- lca_newdata_codes(newdata, object$variables, object$levels)
    rho <- lapply(object$probs, function(items) lapply(items, t))
    post <- lcg_estep(list(codes = codes, group = gi), object$P, rho)$post
    dimnames(post) <- list(rownames(newdata), colnames(object$P))
  }
  if (type == "class") return(max.col(post, ties.method = "first"))
  post
}

#' @rdname aspectr_lca_groups
#' @param data For `augment()`: new observations (as `newdata` of
#'   `predict()`), or `NULL` (default) for the observations of the fit.
#' @export
augment.aspectr_lca_groups <- function(x, data = NULL, group = NULL, ...) {
  check_dots_empty(...)
  post <- if (is.null(data)) x$posterior else predict(x, data, group = group)
  probs <- as.data.frame(unname(post))
  names(probs) <- paste0(".prob_", seq_len(ncol(post)))
  out <- cbind(tibble::tibble(.group = if (is.null(data)) as.character(x$group) else
    if (is.null(group)) as.character(data[[x$group_var]]) else as.character(group),
    .class = max.col(post, ties.method = "first")), probs)
  if (!is.null(data)) out <- cbind(as.data.frame(data), out)
  tibble::as_tibble(out)
}

#' @rdname logLik.aspectr_fit
#' @export
terms.aspectr_lca_groups <- function(x, ...) {
  abort_unsupported("{.fn terms} of a multiple-group latent class fit",
                    "its classes are distributions over the items' categories, not over terms.",
                    "{.fn tidy} gives its item-response probabilities by group and class; {.fn coef} its parameters.")
}

#' @rdname aspectr_lca_groups
#' @export
anova.aspectr_lca_groups <- function(object, ...) {
  fits <- c(list(object), list(...))
  grouped <- vapply(fits, inherits, logical(1), what = "aspectr_lca_groups")
  # a plain latent class model of the same items (no covariates): the
  # grouped model with class shares equal across the groups
  plain <- vapply(fits, function(f) inherits(f, "aspectr_lca") && !isTRUE(f$supervised) && is.null(f$coeff),
                  logical(1))
  ok <- grouped | plain
  if (!all(ok)) {
    abort_input("Every argument of {.fn anova} must be a multiple-group {.cls aspectr_lca_groups} fit (or a latent class fit of the same items without covariates); argument {which(!ok)[1]} is {describe(fits[[which(!ok)[1]]])}.",
                "type", arg = "...")
  }
  if (sum(plain) > 1) {
    abort_input("{.fn anova} of multiple-group fits takes at most one fit without groups, not {sum(plain)}.",
                "argument", arg = "...")
  }
  if (any(plain)) {
    f1 <- fits[[which(grouped)[1]]]
    f0 <- fits[[which(plain)]]
    same <- identical(f0$N, f1$N) && identical(f0$variables, f1$variables) &&
      identical(unname(lapply(f0$probs, colnames)), unname(f1$levels))
    if (!same) {
      abort_input("The fit without groups given to {.fn anova} must be of the same data as the grouped fits (the same items, levels and observations).",
                  "argument", arg = "...")
    }
  }
  anova_lca_common(fits, "multiple-group latent class fits")
  gfits <- fits[grouped]
  f1 <- gfits[[1]]
  same <- vapply(gfits, function(f) identical(f$Ng, f1$Ng) && identical(f$variables, f1$variables) &&
                   identical(f$levels, f1$levels) && identical(as.integer(f$group), as.integer(f1$group)),
                 logical(1))
  if (!all(same)) {
    abort_input("The fits given to {.fn anova} must be of the same data and groups (the same variables, levels, groups and observations); fit {which(grouped)[which(!same)[1]]} is not.",
                "argument", arg = "...")
  }
  fits <- fits[order(vapply(fits, function(f) f$npar, numeric(1)))]
  tab <- anova_lca_table(fits)
  inv <- vapply(fits, function(f) {
    if (!inherits(f, "aspectr_lca_groups")) return("one group (class shares and item probabilities equal across groups)")
    switch(f$invariance, full = "item probabilities equal across groups (full invariance)",
           none = "item probabilities free per group (no invariance)")
  }, character(1))
  head <- paste0("Likelihood-ratio tests of nested multiple-group latent class models\n",
                 paste0("Model ", seq_along(fits), ": ", inv, "\n", collapse = ""))
  if (length(unique(tab$Classes)) > 1) {
    head <- paste0(head, "Models with different numbers of classes: the likelihood ratio is not chi-squared\n",
                   "distributed (a boundary of the parameter space), so those p-values are not valid;\n",
                   "use the information criteria.\n")
  }
  structure(tab, heading = head, class = c("anova", "data.frame"))
}

#' Tests of measurement invariance across groups in latent class analysis
#'
#' Fits the multiple-group latent class model ([lca_groups]) with the
#' item-response probabilities equal across the groups (full measurement
#' invariance) and free per group (no invariance), and compares them by
#' likelihood-ratio tests and information criteria, as \pkg{glca}'s
#' `gofglca()` (Kim, Jeon, Chung and Park 2023) does. The models are nested
#' (both have class shares per group, and full invariance is the model
#' without invariance with the item probabilities set equal), so the likelihood ratio is
#' asymptotically \eqn{\chi^2} with the difference of the numbers of
#' parameters as degrees of freedom (Clogg and Goodman 1985), provided the
#' fits reach their maxima (use enough starts, `nrun`).
#'
#' @param data A data frame of categorical variables (the items and, when
#'   `group` names a column, the groups).
#' @param k Number of latent classes.
#' @param group As in [lca()]: a column name or one group per row.
#' @param ... Further arguments of [lca()] (such as `nrun`, `seed`,
#'   `na.rm`); not `invariance`, nor sampling weights (whose
#'   pseudo-likelihood ratio is not \eqn{\chi^2}-distributed: compare
#'   weighted fits by their information criteria).
#' @return The [anova()] table of the fits (class `anova`), with the fits in
#'   its attribute `"fits"` (a list named `full` and `none`).
#' @references Clogg, C. C. and Goodman, L. A. (1985). Simultaneous latent
#'   structure analysis in several groups. *Sociological Methodology* 15,
#'   81-110.
#'
#'   Kim, Y., Jeon, S., Chung, H. and Park, B. (2023). glca: An R package
#'   for multiple-group latent class analysis. *Applied Psychological
#'   Measurement* 46, 439-441.
#' @examples
#' set.seed(1)
#' g <- rep(c("a", "b"), each = 300)
#' cls <- ifelse(runif(600) < ifelse(g == "a", 0.3, 0.6), 1, 2)
#' items <- as.data.frame(lapply(1:4, function(j) ifelse(runif(600) < c(0.2, 0.8)[cls], "yes", "no")))
#' items$g <- g
#' lca_invariance(items, 2, "g", seed = 1)
#' @export
lca_invariance <- function(data, k, group, ...) {
  check_required(data, "a data frame of categorical variables")
  check_required(k, "the number of latent classes")
  check_required(group, "a column name of `data` or one group per row")
  if ("invariance" %in% ...names()) {
    abort_input("{.arg invariance} is set by {.fn lca_invariance}, which fits every model.", "argument",
                arg = "invariance")
  }
  if (any(c("weights", "psu", "strata") %in% ...names())) {
    abort_unsupported("{.fn lca_invariance} with sampling weights",
                      "the ratio of weighted pseudo-likelihoods is not chi-squared distributed.",
                      "Fit the models with {.fn lca} and compare their information criteria.")
  }
  fits <- list(full = lca(data, k, group = group, invariance = "full", ...))
  fits$none <- lca(data, k, group = group, invariance = "none", ...)
  tab <- do.call(anova, unname(fits))
  attr(tab, "fits") <- fits
  tab
}

#' @rdname aspectr_lca_groups
#' @export
plot.aspectr_lca_groups <- function(x, group = 1, ...) {
  plot.aspectr_lca(lcg_group_fit(x, group), ...)
  invisible(x)
}

# One group of a grouped fit as the fields plot.aspectr_lca() and
# autoplot_lca() use.
lcg_group_fit <- function(x, group, call = rlang::caller_env()) {
  g <- if (is.numeric(group) && length(group) == 1 && group >= 1 && group <= x$G && group == round(group)) group else
    match(as.character(group), x$groups)
  if (length(g) != 1 || is.na(g)) {
    abort_input("{.arg group} must be one of the groups of the fit ({.val {x$groups}}) or its number, not {describe(group)}.",
                "argument", arg = "group", call = call)
  }
  list(probs = x$probs[[g]], P = x$P[g, ], k = x$k, group = x$groups[g],
       main = paste0("Class profiles of group ", x$groups[g]))
}

#' @rdname aspectr_lca_groups
#' @details `plot()` draws the class profiles of one group (`group`: its
#'   label or number) as [plot.aspectr_lca()]; `autoplot()` those of every
#'   group (or of `group`): one panel per item under full invariance, one
#'   per item and group without invariance, with the class shares of the
#'   groups in the subtitle.
#' @exportS3Method ggplot2::autoplot
autoplot.aspectr_lca_groups <- function(object, group = NULL, ...) {
  check_dots_empty(...)
  check_ggplot2()
  gs <- if (is.null(group)) seq_len(object$G) else vapply(group, function(g) {
    match(lcg_group_fit(object, g)$group, object$groups)
  }, integer(1))
  k <- object$k
  cls <- paste("class", seq_len(k))
  # under full invariance every item is drawn once, without it per group
  panels <- do.call(rbind, lapply(object$variables, function(v) {
    if (object$invariance == "none") data.frame(variable = v, g = gs, panel = paste0(v, ": ", object$groups[gs])) else
      data.frame(variable = v, g = gs[1], panel = if (object$G > 1) paste0(v, " (all groups)") else v)
  }))
  d <- do.call(rbind, lapply(seq_len(nrow(panels)), function(i) {
    lca_profile_rows(panels$panel[i], object$probs[[panels$g[i]]][[panels$variable[i]]], cls)
  }))
  d$panel <- factor(d$panel, levels = panels$panel)
  shares <- paste(vapply(gs, function(g) sprintf("%s %s", object$groups[g],
                                                  paste(sprintf("%.2f", object$P[g, ]), collapse = "/")), ""),
                  collapse = "; ")
  lca_profile_plot(d, k, "P(level | class, group)", "Class profiles by group",
                   subtitle = paste("class shares:", shares))
}
