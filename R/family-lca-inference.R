# Standard model generics of latent class fits: coef(), vcov(), confint(),
# anova(), and the entropies reported by glance().

# Names of the free parameters, in the order of lca_standard_errors():
# the multinomial logits of the classes 2..k (against class 1) per term of
# the class-membership model (only "(Intercept)" without covariates), then
# for every variable and class the log-odds of the levels 2.. against the
# first level.
lca_param_names <- function(fit, terms = NULL) {
  k <- fit$k
  terms <- terms %||% "(Intercept)"
  cls <- paste0("class_", seq_len(k))
  b <- if (k > 1) as.vector(outer(terms, cls[-1], function(t, r) paste0(r, ":", t))) else character(0)
  items <- unlist(lapply(names(fit$probs), function(v) {
    lv <- colnames(fit$probs[[v]])
    unlist(lapply(cls, function(r) paste0(v, "[", lv[-1], "]:", r)))
  }), use.names = FALSE)
  c(b, items)
}

# The linear map of the free parameters under lca_reorder(fit, order):
# new = Tm %*% old.
lca_reorder_map <- function(fit, order, R) {
  k <- fit$k
  nl <- vapply(fit$probs, ncol, integer(1))
  nb <- R * (k - 1)
  n_all <- nb + k * sum(nl - 1)
  Tm <- matrix(0, n_all, n_all)
  col_of <- function(r) if (r == 1) NULL else (r - 2) * R + seq_len(R)
  for (s in 2:k) {
    rows <- (s - 2) * R + seq_len(R)
    if (!is.null(col_of(order[s]))) Tm[cbind(rows, col_of(order[s]))] <- Tm[cbind(rows, col_of(order[s]))] + 1
    if (!is.null(col_of(order[1]))) Tm[cbind(rows, col_of(order[1]))] <- Tm[cbind(rows, col_of(order[1]))] - 1
  }
  pos <- nb
  for (j in seq_along(nl)) {
    m <- nl[j] - 1
    for (r in seq_len(k)) {
      Tm[cbind(pos + (r - 1) * m + seq_len(m), pos + (order[r] - 1) * m + seq_len(m))] <- 1
    }
    pos <- pos + k * m
  }
  Tm
}

lca_needs_se <- function(object, what, call = rlang::caller_env()) {
  if (isTRUE(object$supervised)) {
    abort_unsupported(paste0("{.fn ", what, "} of a supervised latent class fit"),
                      "its classes are known, so the fit has no sampling covariance of the latent class model.",
                      call = call)
  }
  if (object$k < 2) {
    abort_unsupported(paste0("{.fn ", what, "} of a one-class fit"),
                      "standard errors are computed for 2 or more classes.",
                      "Use {.code logLik(fit)} to compare it with fits of more classes.", call = call)
  }
  if (is.null(object[["se"]]$vcov_all)) {
    abort_unsupported(paste0("{.fn ", what, "} of this fit"),
                      "it was fitted with {.code se = FALSE} (or by an older version of aspectr).",
                      "Refit with {.code se = TRUE} (the default).", call = call)
  }
}

#' Coefficients, covariance, confidence intervals and tests of latent class fits
#'
#' The free parameters of a latent class model ([lca()]) in one
#' parametrization, the one in which the standard errors are computed (as
#' in \pkg{poLCA}):
#' \itemize{
#' \item the multinomial logits of the class shares against class 1,
#'   \eqn{\log(P_r / P_1)}, \eqn{r = 2, \ldots, k}, named `class_r:(Intercept)`;
#'   for a latent class regression the logit coefficients of every term of
#'   the covariates instead (`class_r:term`, the columns of `fit$coeff`);
#' \item for every variable \eqn{j}, class \eqn{r} and level \eqn{c \ge 2}
#'   the log-odds of the level against the first level,
#'   \eqn{\log(p_{jrc} / p_{jr1})}, named `variable[level]:class_r`.
#' }
#' A probability estimated at 0 gives a log-odds of `-Inf` (and one at 1
#' for the first level `Inf`); their variances are 0.
#'
#' `vcov()` is the inverse (generalized inverse) of the empirical
#' information, the sum of the outer products of the observations' score
#' vectors, as \pkg{poLCA} computes it; for a fit with sampling weights it
#' is the sandwich (robust) covariance (see [lca()], section Sampling
#' weights). Its diagonal gives the standard errors in `fit$se` by the
#' delta method.
#'
#' `confint()` gives Wald intervals: with `type = "coef"` (default) of the
#' free parameters above; with `type = "probs"` of the item-response
#' probabilities \eqn{p_{jrc}} (rows `variable[level]:class_r`) and the
#' class shares (rows `P:class_r`), each computed on the logit scale,
#' \eqn{\mathrm{logit}(p) \pm z \, se(p) / (p (1 - p))}, and transformed
#' back, so they lie in \eqn{[0, 1]} and contain the estimate (an estimate
#' of exactly 0 or 1 gives the interval \eqn{[p, p]}).
#'
#' `anova()` compares nested fits of the same data (fewer classes, or fewer
#' covariates, nested in more) by the likelihood-ratio statistic
#' \eqn{2 (\ell_1 - \ell_0)} referred to \eqn{\chi^2} with the difference
#' of the numbers of free parameters as degrees of freedom. For nested
#' covariate sets with the same number of classes this is the usual test.
#' For a different number of classes the statistic is **not**
#' \eqn{\chi^2}-distributed: the smaller model lies on the boundary of the
#' larger one's parameter space (a class share of 0) and its parameters are
#' not identified there (McLachlan and Peel 2000, section 6.4), so the
#' p-value shown is not valid; use a parametric bootstrap of the
#' likelihood ratio (McLachlan 1987; Nylund, Asparouhov and Muthen 2007)
#' or the information criteria (the table's AIC and BIC). For fits with
#' sampling weights the statistic is a pseudo-likelihood ratio, not
#' \eqn{\chi^2}-distributed either; `anova()` refuses them.
#'
#' @param object An `aspectr_lca` fit (fitted with `se = TRUE`, the default,
#'   for `vcov()` and `confint()`).
#' @param parm Parameters (names or positions) to include; all by default.
#' @param level Confidence level.
#' @param type `"coef"` (the free parameters) or `"probs"` (item-response
#'   probabilities and class shares).
#' @param ... For `anova()`, further `aspectr_lca` fits of the same data;
#'   otherwise must be empty.
#' @return `coef()`: a named vector; `vcov()`: a named matrix;
#'   `confint()`: a matrix with columns of the lower and upper limits;
#'   `anova()`: a data frame of class `anova` with one row per fit
#'   (ordered by the number of parameters): classes, parameters,
#'   log-likelihood, AIC, BIC, and from the second row on the
#'   likelihood-ratio statistic, its degrees of freedom and p-value against
#'   the row before.
#' @references McLachlan, G. J. (1987). On bootstrapping the likelihood
#'   ratio test statistic for the number of components in a normal mixture.
#'   *Applied Statistics* 36, 318-324.
#'
#'   McLachlan, G. and Peel, D. (2000). *Finite Mixture Models*. Wiley.
#'
#'   Nylund, K. L., Asparouhov, T. and Muthen, B. O. (2007). Deciding on the
#'   number of classes in latent class analysis and growth mixture
#'   modeling: a Monte Carlo simulation study. *Structural Equation
#'   Modeling* 14, 535-569.
#' @examples
#' set.seed(1)
#' cls <- sample(1:2, 300, replace = TRUE)
#' items <- as.data.frame(lapply(1:4, function(j) ifelse(runif(300) < c(0.2, 0.8)[cls], "yes", "no")))
#' names(items) <- paste0("item", 1:4)
#' fit2 <- lca(items, 2, seed = 1)
#' coef(fit2)
#' sqrt(diag(vcov(fit2)))[1:3]
#' confint(fit2, type = "probs")
#' fit1 <- lca(items, 1)
#' anova(fit1, fit2)  # see the caveat for the number of classes
#' @name coef.aspectr_lca
#' @importFrom stats coef vcov confint anova
#' @export
coef.aspectr_lca <- function(object, ...) {
  check_dots_empty(...)
  k <- object$k
  beta <- if (k < 2) numeric(0) else if (!is.null(object$coeff)) as.vector(object$coeff) else
    log(object$P[-1] / object$P[1])
  items <- unlist(lapply(object$probs, function(p) {
    unlist(lapply(seq_len(nrow(p)), function(r) log(p[r, -1] / p[r, 1])))
  }), use.names = FALSE)
  stats::setNames(c(unname(beta), items),
                  lca_param_names(object, if (is.null(object$coeff)) NULL else rownames(object$coeff)))
}

#' @rdname coef.aspectr_lca
#' @export
vcov.aspectr_lca <- function(object, ...) {
  check_dots_empty(...)
  lca_needs_se(object, "vcov")
  object$se$vcov_all
}

#' @rdname coef.aspectr_lca
#' @export
confint.aspectr_lca <- function(object, parm, level = 0.95, type = c("coef", "probs"), ...) {
  check_dots_empty(...)
  type <- match_option(type, c("coef", "probs"), "type")
  level <- check_number(level, "level", 0, 1, lower_open = TRUE, upper_open = TRUE)
  lca_needs_se(object, "confint")
  z <- stats::qnorm(1 - (1 - level) / 2)
  if (type == "coef") {
    est <- coef(object)
    se <- sqrt(pmax(diag(object$se$vcov_all), 0))
    lo <- est - z * se
    hi <- est + z * se
  } else {
    pr <- lca_prob_table(object)
    est <- stats::setNames(pr$estimate, pr$name)
    ci <- logit_wald(pr$estimate, pr$std.error, z)
    lo <- ci$low
    hi <- ci$high
  }
  out <- cbind(lo, hi)
  pct <- paste(format(100 * c((1 - level) / 2, 1 - (1 - level) / 2), trim = TRUE, scientific = FALSE, digits = 3), "%")
  dimnames(out) <- list(names(est), pct)
  if (!missing(parm)) {
    ok <- if (is.numeric(parm)) parm %in% seq_along(est) else parm %in% names(est)
    if (!length(parm) || anyNA(parm) || !all(ok)) {
      abort_input("{.arg parm} must name or number parameters of the fit ({length(est)} of them), not {describe(parm)}.",
                  "argument", arg = "parm")
    }
    out <- out[parm, , drop = FALSE]
  }
  out
}

# Wald intervals on the logit scale, transformed back: p in [0, 1], se of p.
logit_wald <- function(p, se, z) {
  interior <- p > 0 & p < 1 & is.finite(se)
  lo <- hi <- p
  s <- se[interior] / (p[interior] * (1 - p[interior]))
  l <- stats::qlogis(p[interior])
  lo[interior] <- stats::plogis(l - z * s)
  hi[interior] <- stats::plogis(l + z * s)
  # (plogis(qlogis(p)) may differ from p in the last bit)
  list(low = pmin(lo, p), high = pmax(hi, p))
}

# Item-response probabilities and class shares with their standard errors
# (NA without them), one row each.
lca_prob_table <- function(object) {
  se <- object[["se"]]
  rows <- lapply(names(object$probs), function(v) {
    p <- object$probs[[v]]  # classes x levels
    s <- if (is.null(se)) p * NA_real_ else se$probs[[v]]
    data.frame(name = as.vector(t(outer(rownames(p), colnames(p), function(r, l) paste0(v, "[", l, "]:", r)))),
               variable = v, level = rep(colnames(p), times = nrow(p)),
               class = rep(seq_len(nrow(p)), each = ncol(p)),
               estimate = as.vector(t(p)), std.error = as.vector(t(s)), stringsAsFactors = FALSE)
  })
  P <- object$P
  shares <- data.frame(name = paste0("P:", names(P)), variable = NA_character_, level = NA_character_,
                       class = seq_along(P), estimate = unname(P),
                       std.error = if (is.null(se)) NA_real_ else unname(se$P), stringsAsFactors = FALSE)
  out <- do.call(rbind, c(rows, list(shares)))
  rownames(out) <- NULL
  out
}

# The table of anova() of latent class fits `fits` (in the order of their
# numbers of parameters): each one's classes, parameters, log-likelihood
# and information criteria, and the likelihood-ratio test against the one
# before it
anova_lca_table <- function(fits) {
  ll <- vapply(fits, function(f) f$llik, numeric(1))
  np <- vapply(fits, function(f) as.numeric(f$npar), numeric(1))
  lr <- c(NA, 2 * diff(ll))
  df <- c(NA, diff(np))
  p <- ifelse(!is.na(df) & df > 0, stats::pchisq(pmax(lr, 0), df, lower.tail = FALSE), NA_real_)
  tab <- data.frame(Classes = vapply(fits, function(f) as.integer(f$k), integer(1)),
                    Npar = as.integer(np), logLik = ll,
                    AIC = vapply(fits, function(f) f$AIC, numeric(1)),
                    BIC = vapply(fits, function(f) f$BIC, numeric(1)),
                    LR = lr, Df = as.integer(df), `Pr(>Chi)` = p, check.names = FALSE)
  rownames(tab) <- paste("Model", seq_along(fits))
  tab
}

# What anova() asks of every set of latent class fits: at least two, and
# none with sampling weights.
anova_lca_common <- function(fits, what, call = rlang::caller_env()) {
  if (length(fits) < 2) {
    abort_input("{.fn anova} of {what} needs at least 2 fits of the same data, not {length(fits)}.",
                "argument", arg = "...", call = call)
  }
  if (any(vapply(fits, function(f) !is.null(f$sampling_weights), logical(1)))) {
    abort_unsupported("{.fn anova} of fits with sampling weights",
                      "the ratio of weighted pseudo-likelihoods is not chi-squared distributed.",
                      "Compare them by their information criteria, or by a design-based (Rao-Scott) test.",
                      call = call)
  }
}

#' @rdname coef.aspectr_lca
#' @export
anova.aspectr_lca <- function(object, ...) {
  fits <- c(list(object), list(...))
  # with a multiple-group fit among them: the tests of the grouped models
  if (any(vapply(fits, inherits, logical(1), what = "aspectr_lca_groups"))) {
    return(anova.aspectr_lca_groups(object, ...))
  }
  ok <- vapply(fits, inherits, logical(1), what = "aspectr_lca")
  if (!all(ok)) {
    abort_input("Every argument of {.fn anova} must be an {.cls aspectr_lca} fit; argument {which(!ok)[1]} is {describe(fits[[which(!ok)[1]]])}.",
                "type", arg = "...")
  }
  anova_lca_common(fits, "latent class fits")
  same <- vapply(fits, function(f) identical(f$N, fits[[1]]$N) && identical(f$variables, fits[[1]]$variables) &&
                   identical(lapply(f$probs, colnames), lapply(fits[[1]]$probs, colnames)), logical(1))
  if (!all(same)) {
    abort_input("The fits given to {.fn anova} must be of the same data (the same variables, levels and number of observations); fit {which(!same)[1]} is not.",
                "argument", arg = "...")
  }
  fits <- fits[order(vapply(fits, function(f) f$npar, numeric(1)))]
  # fits of one number of classes are nested when each one's covariates
  # are among the next one's (a model without covariates: the intercept)
  covariates <- function(f) if (is.null(f$coeff)) "(Intercept)" else rownames(f$coeff)
  for (i in seq_along(fits)[-1]) {
    a <- fits[[i - 1]]; b <- fits[[i]]
    if (!all(covariates(a) %in% covariates(b))) {
      lack <- setdiff(covariates(a), covariates(b))
      abort_input(c("The fits given to {.fn anova} must be nested: one has the covariates {.var {covariates(a)}} ({a$k} classes, {a$npar} parameters), the other {.var {covariates(b)}} ({b$k} classes, {b$npar} parameters), without {.var {lack}}.",
                    i = "Compare models that are not nested by their information criteria ({.fn AIC}, {.fn BIC})."),
                  "argument", arg = "...")
    }
  }
  tab <- anova_lca_table(fits)
  ks <- tab$Classes
  head <- "Likelihood-ratio tests of nested latent class models\n"
  if (any(tab$LR < 0, na.rm = TRUE)) {
    head <- paste0(head, "A negative likelihood ratio: the larger model's fit is below the smaller one's maximum\n",
                   "(a local maximum); refit it with more random starts (nrun) before testing.\n")
  }
  if (length(unique(ks)) > 1) {
    head <- paste0(head, "Models with different numbers of classes: the likelihood ratio is not chi-squared\n",
                   "distributed (a boundary of the parameter space), so those p-values are not valid;\n",
                   "use a parametric bootstrap or the information criteria.\n")
  }
  structure(tab, heading = head, class = c("anova", "data.frame"))
}

# poLCA's poLCA.entropy(): the entropy of the fitted distribution over
# every cell of the response table, -sum_y P(y) log P(y) (with the class
# shares P, the mean prior for a regression). The cells are enumerated in
# blocks (the first variables' cells times blocks of the others'); NA above
# `max_cells` cells.
lca_cell_entropy <- function(fit, max_cells = getOption("aspectr.max_cells", 1e8)) {
  probs <- fit$probs
  nl <- vapply(probs, ncol, integer(1))
  if (prod(as.numeric(nl)) > max_cells) return(NA_real_)
  k <- fit$k
  # per-class probabilities of the cells of a set of variables (cells x k,
  # the first variable varying fastest)
  cells_of <- function(js) {
    m <- matrix(1, 1, k)
    for (j in js) {
      pj <- t(probs[[j]])  # levels x k
      m <- m[rep(seq_len(nrow(m)), times = nrow(pj)), , drop = FALSE] *
        pj[rep(seq_len(nrow(pj)), each = nrow(m)), , drop = FALSE]
    }
    m
  }
  J <- length(nl)
  cum <- cumprod(as.numeric(nl))
  split <- max(1L, sum(cum <= 2^16))
  inner <- cells_of(seq_len(split))
  outer <- if (split < J) cells_of((split + 1):J) else matrix(1, 1, k)
  outer <- sweep(outer, 2, fit$P, "*")
  block <- max(1L, floor(2^20 / nrow(inner)))
  h <- 0
  for (start in seq(1, nrow(outer), by = block)) {
    rows <- start:min(nrow(outer), start + block - 1)
    p <- inner %*% t(outer[rows, , drop = FALSE])
    p <- p[p > 0]
    h <- h - sum(p * log(p))
  }
  h
}

# ---- sampling weights ------------------------------------------------------------

# Checks `weights`, `psu` and `strata` (each NULL or one value per row of
# the data, `n` rows); NULL when none is given, else list(w, psu, strata)
# over all rows (weights 1 when only a design is given).
lca_check_design <- function(weights, psu, strata, n, call = rlang::caller_env()) {
  if (is.null(weights) && is.null(psu) && is.null(strata)) return(NULL)
  if (is.null(weights)) {
    weights <- rep(1, n)
  } else if (!is.numeric(weights) || is.object(weights) || length(weights) != n || anyNA(weights) ||
             any(!is.finite(weights)) || any(weights <= 0)) {
    given <- if (is.numeric(weights) && length(weights) == n) {
      bad <- which(is.na(weights) | !is.finite(weights) | weights <= 0)[1]
      paste0("a value ", format(weights[bad]), " at row ", bad)
    } else describe(weights)
    abort_input("{.arg weights} must be positive finite numbers, one per row of {.arg data} ({n}), not {given}.",
                "argument", arg = "weights", call = call)
  }
  check_ids <- function(x, arg) {
    if (is.null(x)) return(NULL)
    if (!is.atomic(x) || !is.null(dim(x)) || length(x) != n || anyNA(x)) {
      # (the right form with missing values: say how many)
      given <- if (is.atomic(x) && is.null(dim(x)) && length(x) == n) paste0(describe(x), " with ", sum(is.na(x)), " missing") else describe(x)
      abort_input("{.arg {arg}} must be identifiers without missing values, one per row of {.arg data} ({n}), not {given}.",
                  "argument", arg = arg, call = call)
    }
    as.character(x)
  }
  psu <- check_ids(psu, "psu")
  strata <- check_ids(strata, "strata")
  list(w = as.numeric(weights), psu = psu, strata = strata)
}

# The design restricted to the rows a fit uses (`rows`), with the PSU
# (each row its own without `psu`; within its stratum) and stratum of every
# row, checked: at least 2 PSUs per stratum.
lca_design_rows <- function(design, rows, call = rlang::caller_env()) {
  w <- design$w[rows]
  strata <- if (is.null(design$strata)) rep("1", length(rows)) else design$strata[rows]
  psu <- if (is.null(design$psu)) as.character(seq_along(rows)) else design$psu[rows]
  unit <- paste(strata, psu, sep = "\r")  # PSUs are nested in strata
  unit_id <- match(unit, unique(unit))
  unit_stratum <- strata[!duplicated(unit)]
  per <- table(unit_stratum)
  if (any(per < 2)) {
    bad <- names(per)[per < 2][1]
    given <- c("psu", "strata")[c(!is.null(design$psu), !is.null(design$strata))]
    abort_input(c(paste0("{.arg {given}} must give every stratum at least 2 primary sampling units with observations used",
                         if (is.null(design$strata)) " (without {.arg strata} the data are one stratum)" else "",
                         if (is.null(design$psu)) " (without {.arg psu} every row is its own unit)" else "",
                         ", and stratum {.val {bad}} has {per[[bad]]}."),
                  i = if (is.null(design$strata)) "Give more than one primary sampling unit in {.arg psu}." else "Merge it with a similar stratum."),
                "argument", arg = if (is.null(design$strata)) "psu" else "strata", call = call)
  }
  list(w = w, unit = unit_id, unit_stratum = unit_stratum, n_units = length(unit_stratum),
       clustered = !is.null(design$psu), stratified = !is.null(design$strata))
}

# The pattern counts of prepared data replaced by the sums of the weights
# of the rows of each pattern (the weighted, pseudo-, likelihood).
lca_weight_patterns <- function(prep, dr) {
  val <- as.numeric(rowsum(dr$w, prep$row_pattern, reorder = TRUE))
  prep$data$val <- val
  prep$data$total <- sum(val)
  prep$design <- dr
  prep
}

# The meat of the sandwich (Binder 1983): the between-PSU covariance of the
# weighted score totals of the PSUs within strata, n_h / (n_h - 1) times
# the sum of squares about the stratum mean. `Z` is the n_units x npar
# matrix of the PSUs' weighted score totals.
lca_meat <- function(Z, dr) {
  B <- 0
  for (h in unique(dr$unit_stratum)) {
    zh <- Z[dr$unit_stratum == h, , drop = FALSE]
    nh <- nrow(zh)
    zc <- sweep(zh, 2, colMeans(zh))
    B <- B + nh / (nh - 1) * crossprod(zc)
  }
  B
}

# The fields of a fit with sampling weights: the rows' weights, their sum
# (the N of BIC) and the design of the standard errors.
lca_design_fields <- function(fit, dr) {
  fit$sampling_weights <- dr$w
  fit$sum_weights <- sum(dr$w)
  fit$design <- list(clustered = dr$clustered, stratified = dr$stratified, n_psu = dr$n_units,
                     n_strata = length(unique(dr$unit_stratum)))
  # each observation's PSU and each PSU's stratum (for lca_distal())
  fit$design_units <- list(unit = dr$unit, unit_stratum = dr$unit_stratum)
  fit
}
