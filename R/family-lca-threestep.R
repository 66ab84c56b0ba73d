# Distal outcomes and covariates of latent class membership after the
# classification ("three-step" analyses): the BCH method (Bolck, Croon and
# Hagenaars 2004; Vermunt 2010; Bakk, Tekle and Vermunt 2013), the ML
# three-step method (Vermunt 2010) and naive classify-analyze, from the
# posteriors of a fitted latent class model.

#' Distal outcomes and covariates of latent classes: BCH and ML three-step
#'
#' Relates the latent classes of a fitted latent class model ([lca()],
#' without covariates) to an external variable measured on the same
#' observations, after the classification, without refitting the
#' measurement model (the stepwise approach of Vermunt 2010):
#' `lca_distal()` estimates the class-specific distribution of a
#' **distal outcome** (continuous: class means and variances; categorical:
#' class-specific probabilities of its levels) with a Wald test of its
#' equality across classes; `lca_covariates()` estimates the multinomial
#' logit of class membership on **covariates** (class 1 the reference, as
#' in [lca()]'s latent class regression).
#'
#' @section Three steps:
#' Step 1 is the fit. Step 2 assigns each observation \eqn{i} to the
#' classes with weights \eqn{w_{is}}: `assignment = "modal"` puts it in its
#' most probable class (`fit$predclass`), `"proportional"` spreads it over
#' the classes by its posteriors \eqn{\hat p_{ir} = P(X = r \mid y_i)}. The
#' assigned class \eqn{W} is an imperfect measure of the latent class
#' \eqn{X}; its errors are the classification error matrix of Vermunt
#' (2010), \deqn{D_{rs} = P(W = s \mid X = r) = \frac{\sum_i v_i \hat p_{ir}
#' w_{is}}{\sum_i v_i \hat p_{ir}},} computed over every observation the
#' fit used (\eqn{v_i} the sampling weights of the fit, 1 without). Step 3
#' relates \eqn{W} to the external variable \eqn{Z} and corrects for
#' \eqn{D}:
#' \describe{
#' \item{`method = "bch"`}{(Bolck, Croon and Hagenaars 2004, in the form of
#'   Vermunt 2010): since \eqn{P(W = s, Z) = \sum_r P(X = r, Z) D_{rs}},
#'   each observation enters the analysis of class \eqn{r} with the weight
#'   \eqn{h_{ir} = \sum_s w_{is} (D^{-1})_{sr}} (weights that may be
#'   negative and sum to 1 over the classes), and the analysis is the
#'   weighted one: class means, variances and probabilities are weighted
#'   means, the covariates' logit a weighted multinomial logit. No
#'   distributional assumption on \eqn{Z} (Bakk and Vermunt 2016).}
#' \item{`method = "ml"`}{(the ML three-step method of Vermunt 2010):
#'   maximizes the likelihood of \eqn{(W, Z)} with \eqn{D} fixed,
#'   \eqn{\sum_i v_i \sum_s w_{is} \log \sum_r P(X = r) f_r(z_i) D_{rs}}
#'   for a distal outcome (normal \eqn{f_r} with class-specific mean and
#'   variance, or class-specific probabilities; the class shares
#'   \eqn{P(X = r)} are estimated too), and \eqn{\sum_i v_i \sum_s w_{is}
#'   \log \sum_r P(X = r \mid x_i) D_{rs}} for covariates. Fitted by EM
#'   and finished by Newton-Raphson steps.}
#' \item{`method = "naive"`}{classify-analyze: the same analysis with the
#'   assignment weights \eqn{w_{is}} and no correction. It attenuates
#'   the differences between classes (Bolck, Croon and Hagenaars 2004) and
#'   is given for contrast.}}
#' For the ML method with a continuous outcome the class-specific normal
#' distributions matter: when the outcome is far from normal within
#' classes BCH is the safer choice (Bakk and Vermunt 2016). For a
#' categorical outcome both estimate the joint distribution of class and
#' outcome without restriction and give the same estimates, unless BCH's
#' fall outside \eqn{[0, 1]}. With poorly separated classes the BCH
#' weights can give a negative probability or variance; that gives a
#' warning (class `aspectr_warning_numeric`), and ML, which stays in
#' range, is the alternative.
#'
#' @section Standard errors:
#' BCH and naive: the estimates solve weighted estimating equations
#' \eqn{\sum_i v_i \psi_i(\theta) = 0} (treating \eqn{D} and the
#' posteriors as known), and their covariance is the sandwich
#' \eqn{A^{-1} B A^{-1}} with \eqn{A} the derivative of the equations and
#' \eqn{B} the covariance of the observations' contributions, each
#' observation with its contributions to every class together (the robust
#' standard errors that the weighted analysis needs, Vermunt 2010, as used
#' by Bakk, Tekle and Vermunt 2013). ML: with modal
#' assignment and no sampling weights the inverse of the observed
#' information of the step-3 likelihood; with proportional assignment (a
#' pseudo-likelihood that counts each observation once per class) or
#' sampling weights the sandwich with the observed information as
#' \eqn{A}. With sampling weights \eqn{B} is the covariance of the weighted
#' totals between the primary sampling units within strata of the fit's
#' design, as for [lca()] (see its section Sampling weights).
#'
#' None of these standard errors accounts for the uncertainty of the
#' step-1 estimates (the posteriors and \eqn{D} are taken as known), so
#' they are somewhat too small, most where the classes are poorly
#' separated (Bakk, Oberski and Vermunt 2014 give a correction).
#'
#' @section Missing values and rows:
#' `outcome` (or `data`) has one value (row) per row of the data given to
#' [lca()], or one per observation the fit used (`fit$N`); with the former,
#' the rows the fit left out (every response missing, with `na.rm = TRUE`
#' a missing response) are left out here too. Observations with a missing
#' outcome or covariate are dropped from step 3, with a message (class
#' `aspectr_message_dropped`); \eqn{D} is still computed from every
#' observation of the fit (missing at random given the responses).
#'
#' @param fit An [lca()] fit with 2 or more classes, without covariates and
#'   not [lca_supervised()].
#' @param outcome The distal outcome: a numeric vector (continuous), or a
#'   factor, character or logical vector (categorical), with one value per
#'   row of the data of the fit or per observation it used (see Missing
#'   values and rows). A numeric outcome must be finite and within
#'   \eqn{\pm 10^{75}}{+-1e75} (the standard errors take its fourth powers).
#' @param method `"bch"` (default), `"ml"` or `"naive"` (see Three steps).
#' @param type `"auto"` (default: numeric outcomes are continuous, others
#'   categorical), `"continuous"` or `"categorical"` (for a numeric code).
#' @param assignment `"modal"` (default) or `"proportional"` (see Three
#'   steps).
#' @param ... Must be empty.
#' @return An object of class `aspectr_distal` (or `aspectr_covariates`),
#'   also `aspectr_threestep`, with `coefficients` (for a continuous outcome
#'   `class_r:mean` and `class_r:variance`; for a categorical one
#'   `class_r:level`, the probabilities; for covariates `class_r:term`, the
#'   logit coefficients against class 1), `vcov`, `shares` (the class
#'   shares of step 3), `D` (rows: latent class, columns: assigned class),
#'   `wald` (a data frame of Wald tests: for a distal outcome of the
#'   equality of its mean or distribution across all classes and between
#'   each pair; for covariates of each term's coefficients being 0),
#'   `logLik` (ML: the step-3 log-likelihood), `nobs`, `dropped`,
#'   `se_type` (`"sandwich"` or `"model"`), and the arguments. Methods:
#'   `print()`, `coef()`, `vcov()`, `confint()`, `nobs()`, `tidy()`
#'   (columns `class`, `term`, `estimate`, `std.error`, `statistic`,
#'   `p.value`, with `conf.int = TRUE` `conf.low` and `conf.high`; the
#'   statistic of a probability or a variance against 0 is not a useful
#'   test and is `NA`; intervals of probabilities are computed on the logit
#'   scale, as in [confint.aspectr_lca()]) and `glance()` (one row: the
#'   method, assignment, number of observations, the overall Wald test,
#'   the step-3 log-likelihood and the classification error
#'   \eqn{\sum_r P_r (1 - D_{rr})}).
#' @references Bakk, Z., Oberski, D. L. and Vermunt, J. K. (2014).
#'   Relating latent class assignments to external variables: standard
#'   errors for correct inference. *Political Analysis* 22, 520-540.
#'
#'   Bakk, Z., Tekle, F. B. and Vermunt, J. K. (2013). Estimating the
#'   association between latent class membership and external variables
#'   using bias-adjusted three-step approaches. *Sociological Methodology*
#'   43, 272-311.
#'
#'   Bakk, Z. and Vermunt, J. K. (2016). Robustness of stepwise latent
#'   class modeling with continuous distal outcomes. *Structural Equation
#'   Modeling* 23, 20-31.
#'
#'   Bolck, A., Croon, M. and Hagenaars, J. (2004). Estimating latent
#'   structure models with categorical variables: one-step versus
#'   three-step estimators. *Political Analysis* 12, 3-27.
#'
#'   Vermunt, J. K. (2010). Latent class modeling with covariates: two
#'   improved three-step approaches. *Political Analysis* 18, 450-469.
#' @seealso [lca()], whose latent class regression (`lca(cbind(...) ~ x,
#'   data, k)`) is the one-step estimate of the covariates' effects.
#' @examples
#' set.seed(1)
#' n <- 600
#' cls <- sample(1:2, n, replace = TRUE, prob = c(0.6, 0.4))
#' items <- as.data.frame(lapply(1:5, function(j) ifelse(runif(n) < c(0.2, 0.8)[cls], "yes", "no")))
#' income <- rnorm(n, mean = c(30, 40)[cls], sd = 8)
#' age <- rnorm(n, 45, 12)
#' fit <- lca(items, 2, seed = 1)
#' d <- lca_distal(fit, income)   # BCH, modal assignment
#' d
#' tidy(d, conf.int = TRUE)
#' lca_distal(fit, income, method = "naive")$coefficients
#' lca_covariates(fit, ~ age, data.frame(age = age), method = "ml")
#' @export
lca_distal <- function(fit, outcome, method = c("bch", "ml", "naive"), type = c("auto", "continuous", "categorical"),
                       assignment = c("modal", "proportional"), ...) {
  call <- match.call()
  check_dots_empty(...)
  check_required(fit, "an `aspectr_lca` fit")
  check_required(outcome, "a vector with one value per row of the data of the fit")
  method <- match_option(method, c("bch", "ml", "naive"), "method")
  type <- match_option(type, c("auto", "continuous", "categorical"), "type")
  assignment <- match_option(assignment, c("modal", "proportional"), "assignment")
  ts_check_fit(fit)
  if (!is.atomic(outcome) || !is.null(dim(outcome)) || is.complex(outcome) || length(outcome) == 0 ||
      (is.object(outcome) && !is.factor(outcome))) {
    abort_input("{.arg outcome} must be a numeric, factor, character or logical vector, not {describe(outcome)}.",
                "type", arg = "outcome")
  }
  z <- ts_align(outcome, fit, "outcome")
  if (type == "auto") type <- if (is.numeric(z) && !is.factor(z)) "continuous" else "categorical"
  if (type == "continuous") {
    if (!is.numeric(z) || is.factor(z)) {
      abort_input("{.arg outcome} must be numeric for {.code type = \"continuous\"}, not {describe(outcome)}.",
                  "type", arg = "outcome")
    }
    if (any(is.infinite(z))) {
      abort_input("{.arg outcome} must be finite; it has {sum(is.infinite(z))} infinite value{?s}.",
                  "value", arg = "outcome")
    }
    if (any(abs(z) > 1e75, na.rm = TRUE)) {
      # (the sandwich standard errors take fourth powers of the values)
      abort_input(c("{.arg outcome} must lie within -1e75 and 1e75, whose fourth powers are finite; its largest absolute value is {format(max(abs(z), na.rm = TRUE))}.",
                    i = "Rescale it (the class means scale with it)."),
                  "value", arg = "outcome")
    }
  }
  keep <- !is.na(z)
  dropped <- sum(!keep)
  if (sum(keep) < 2) {
    abort_input("{.arg outcome} must have at least 2 observed values among the observations the fit used, not {sum(keep)}.",
                "empty", arg = "outcome")
  }
  if (type == "categorical") {
    z <- droplevels(as.factor(z[keep]))
    if (nlevels(z) < 2) {
      abort_input("{.arg outcome} must take at least 2 values for {.code type = \"categorical\"}, not only {.val {levels(z)}}.",
                  "value", arg = "outcome")
    }
  } else {
    z <- as.numeric(z[keep])
    if (stats::var(z) == 0) {
      abort_input("{.arg outcome} must vary: every observed value is {format(z[1])}.", "value", arg = "outcome")
    }
  }
  ts_report_dropped(dropped, "outcome")
  cl <- ts_classify(fit, assignment, method)
  model <- if (type == "continuous") ts_model_continuous(z, fit$k) else ts_model_categorical(z, fit$k)
  res <- ts_estimate(model, cl, keep, method, assignment)
  # the reported parameters and the Wald tests of equality across classes
  k <- fit$k
  cls <- paste0("class_", seq_len(k))
  if (type == "continuous") {
    terms <- c("mean", "variance")
    test_idx <- lapply(seq_len(k), function(r) r)  # the means
  } else {
    terms <- levels(z)
    nc <- length(terms)
    # probabilities of the levels 2..C (those of level 1 follow)
    test_idx <- lapply(seq_len(k), function(r) (r - 1) * nc + seq_len(nc)[-1])
  }
  res$wald <- ts_wald_classes(res$coefficients, res$vcov, test_idx, cls,
                              if (type == "continuous") "mean" else "distribution")
  if (any(res$coefficients[res$kind == "variance"] <= 0) || any(res$coefficients[res$kind == "prob"] < 0)) {
    warn_numeric(c("The {if (method == 'bch') 'BCH ' else ''}estimates include a {if (type == 'continuous') 'variance' else 'probability'} below 0.",
                   i = "The BCH weights can be negative: the classes may be too poorly separated for this outcome; compare {.code method = \"ml\"}."))
  }
  out <- c(res, list(type = type, method = method, assignment = assignment, k = k, terms = terms,
                     nobs = sum(keep), dropped = dropped, call = call,
                     weighted = !is.null(fit$sampling_weights)))
  class(out) <- c("aspectr_distal", "aspectr_threestep")
  out
}

#' @rdname lca_distal
#' @param formula For `lca_covariates()`: a one-sided formula of the
#'   covariates, `~ x1 + x2` (terms as in [stats::model.frame()]: factors,
#'   interactions, transformations).
#' @param data For `lca_covariates()`: a data frame holding the covariates,
#'   with one row per row of the data of the fit or per observation it used.
#' @export
lca_covariates <- function(fit, formula, data, method = c("bch", "ml", "naive"),
                           assignment = c("modal", "proportional"), ...) {
  call <- match.call()
  check_dots_empty(...)
  check_required(fit, "an `aspectr_lca` fit")
  check_required(formula, "a one-sided formula of the covariates, such as `~ age + sex`")
  check_required(data, "a data frame holding the covariates")
  method <- match_option(method, c("bch", "ml", "naive"), "method")
  assignment <- match_option(assignment, c("modal", "proportional"), "assignment")
  ts_check_fit(fit)
  if (!inherits(formula, "formula") || length(formula) != 2) {
    abort_input("{.arg formula} must be a one-sided formula of the covariates, such as {.code ~ age + sex}, not {describe(formula)}.",
                "argument", arg = "formula")
  }
  if (!is.data.frame(data)) {
    abort_input("{.arg data} must be a data frame holding the covariates, not {describe(data)}.",
                "type", arg = "data")
  }
  rhs <- stats::terms(formula, data = data)
  if (!length(all.vars(rhs))) {
    abort_input("{.arg formula} must name at least one covariate, not {.code {deparse1(formula)}}.",
                "argument", arg = "formula")
  }
  miss <- setdiff(all.vars(rhs), names(data))
  if (length(miss)) {
    abort_input("{.arg formula} names covariate{?s} {.var {miss}} that {.arg data} does not have.",
                "argument", arg = "formula")
  }
  data <- ts_align(data, fit, "data")
  mf <- lcr_model_frame(rhs, data)
  keep <- stats::complete.cases(mf)
  dropped <- sum(!keep)
  mf <- droplevels(mf[keep, , drop = FALSE])
  lcr_check_levels(mf)
  X <- stats::model.matrix(rhs, mf)
  if (nrow(X) <= ncol(X)) {
    abort_input("{.arg data} must have more observations with every covariate observed ({nrow(X)}) than coefficients per class ({ncol(X)}).",
                "empty", arg = "data")
  }
  if (qr(X)$rank < ncol(X)) {
    abort_input("The covariates of {.arg formula} are collinear: the design matrix has rank {qr(X)$rank} < {ncol(X)} columns.",
                "argument", arg = "formula")
  }
  ts_report_dropped(dropped, "covariate")
  cl <- ts_classify(fit, assignment, method)
  model <- ts_model_covariates(X, fit$k)
  res <- ts_estimate(model, cl, keep, method, assignment)
  res$wald <- ts_wald_terms(res$coefficients, res$vcov, colnames(X), fit$k)
  out <- c(res, list(method = method, assignment = assignment, k = fit$k, terms = colnames(X),
                     nobs = sum(keep), dropped = dropped, call = call, formula = formula,
                     weighted = !is.null(fit$sampling_weights)))
  class(out) <- c("aspectr_covariates", "aspectr_threestep")
  out
}

# ---- input ---------------------------------------------------------------------

ts_check_fit <- function(fit, call = rlang::caller_env()) {
  if (!inherits(fit, "aspectr_lca")) {
    abort_input("{.arg fit} must be an {.cls aspectr_lca} fit from {.fn lca}, not {describe(fit)}.",
                "type", arg = "fit", call = call)
  }
  if (isTRUE(fit$supervised)) {
    abort_unsupported("A three-step analysis of a supervised latent class fit",
                      "its classes are known: analyse the outcome by the known classes directly.", call = call)
  }
  if (fit$k < 2) {
    abort_input("{.arg fit} must have at least 2 classes, not {fit$k}.", "argument", arg = "fit", call = call)
  }
  if (!is.null(fit$coeff)) {
    abort_unsupported("A three-step analysis of a latent class regression",
                      "its posteriors already depend on the covariates, so the classification errors are not those of the measurement model alone.",
                      "Fit the measurement model without covariates ({.code lca(items, k)}), or use the one-step regression itself.",
                      call = call)
  }
  invisible(fit)
}

# `x` (a vector or data frame) restricted to the observations the fit used.
ts_align <- function(x, fit, arg, call = rlang::caller_env()) {
  n <- NROW(x)
  if (n == fit$N) return(x)
  if (!is.null(fit$rows) && !is.null(fit$data_nrow) && n == fit$data_nrow) {
    return(if (is.data.frame(x)) x[fit$rows, , drop = FALSE] else x[fit$rows])
  }
  what <- if (is.data.frame(x)) "row" else "value"
  full <- if (!is.null(fit$data_nrow) && fit$data_nrow != fit$N)
    paste0("the rows of the data of the fit (", fit$data_nrow, ") or ") else ""
  abort_input(paste0("{.arg {arg}} must have one ", what, " per ", if (nzchar(full)) "row: " else "",
                     full, "observation the fit used ({fit$N}), not {n}."),
              "length", arg = arg, call = call)
}

ts_report_dropped <- function(dropped, what) {
  if (dropped > 0) {
    cli::cli_inform("{dropped} observation{?s} with a missing {what} left out of step 3.",
                    class = "aspectr_message_dropped")
  }
}

# Step 2: assignment weights W (N x k), sampling weights v, the
# classification error matrix D (Vermunt 2010) and the weights of step 3
# (H: BCH h_ir = (W D^-1)_ir, naive W), with the fit's design.
ts_classify <- function(fit, assignment, method, call = rlang::caller_env()) {
  post <- fit$posterior
  k <- fit$k
  N <- nrow(post)
  W <- if (assignment == "modal") {
    m <- matrix(0, N, k)
    m[cbind(seq_len(N), fit$predclass)] <- 1
    m
  } else unname(post)
  v <- fit$sampling_weights %||% rep(1, N)
  pv <- post * v
  D <- crossprod(pv, W) / colSums(pv)
  cls <- paste0("class_", seq_len(k))
  dimnames(D) <- list(latent = cls, assigned = cls)
  Dinv <- NULL
  if (method != "naive") {
    never <- which(colSums(W) == 0)
    rc <- rcond(D)
    if (length(never) || rc < 1e-10) {
      why <- if (length(never)) paste0("class ", never[1], " is nobody's most probable class, so the classification error matrix is singular.") else
        "the classification error matrix is singular (the classes are not separated)."
      abort_unsupported(paste0("The ", if (method == "bch") "BCH" else "ML three-step", " correction for this fit"),
                        why, "Use {.code assignment = \"proportional\"}, or fewer classes.", call = call)
    }
    Dinv <- solve(D)
  }
  design <- if (is.null(fit$sampling_weights)) NULL else
    c(fit$design_units, list(n_psu = length(fit$design_units$unit_stratum)))
  list(W = W, v = v, D = D, Dinv = Dinv, post = post, design = design,
       shares = colSums(pv) / sum(v))
}

# ---- models of step 3 --------------------------------------------------------------
# Each model has: `names`; `kind` (per parameter); `mest(H, v)`: the
# weighted estimates with h_ir weights (BCH, naive) and, for the sandwich,
# `psi` (n x npar contributions, before the weights v) and `bread` (A);
# for ML: `core`, the model of the C++ core's ML three-step fit
# (lca/threestep.h: its type and data), `start(H, v)` the ML parameter
# vector theta from the naive estimates, `report(theta, V)` the reported
# coefficients and their covariance, and `shares(theta)` the class shares.

ts_model_continuous <- function(z, k) {
  n <- length(z)
  cls <- paste0("class_", seq_len(k))
  nms <- c(paste0(cls, ":mean"), paste0(cls, ":variance"))
  kind <- rep(c("mean", "variance"), each = k)
  mom <- function(H) {
    nt <- colSums(H)
    mu <- colSums(H * z) / nt
    R <- z - matrix(mu, n, k, byrow = TRUE)
    s2 <- colSums(H * R^2) / nt
    list(nt = nt, mu = mu, s2 = s2, R = R)
  }
  list(
    names = nms, kind = kind,
    core = list(type = "continuous", data = as.numeric(z), nc = 0L),
    mest = function(H, v) {
      m <- mom(H * v)
      psi <- cbind(H * m$R, H * (m$R^2 - matrix(m$s2, n, k, byrow = TRUE)))
      # d psi_sigma / d mu sums to 0 at the estimates
      list(est = c(m$mu, m$s2), psi = psi, bread = diag(rep(m$nt, 2), 2 * k))
    },
    start = function(H, v) {
      m <- mom(H * v)
      P <- m$nt / sum(m$nt)
      c(log(P[-1] / P[1]), m$mu, pmax(m$s2, 1e-8 * stats::var(z)))
    },
    report = function(theta, V) {
      i <- (k - 1) + seq_len(2 * k)
      list(est = theta[i], V = V[i, i, drop = FALSE])
    },
    shares = function(theta) ts_shares(theta, k)
  )
}

ts_model_categorical <- function(z, k) {
  n <- length(z)
  lv <- levels(z)
  nc <- length(lv)
  Y <- outer(as.integer(z), seq_len(nc), "==") + 0
  cls <- paste0("class_", seq_len(k))
  nms <- paste0(rep(cls, each = nc), ":", rep(lv, times = k))
  # ML parameters: the class logits, then per class the log-odds of the
  # levels 2..C against level 1
  a_idx <- function(r) k - 1 + (r - 1) * (nc - 1) + seq_len(nc - 1)
  rho_of <- function(theta) {
    t(vapply(seq_len(k), function(r) {
      a <- c(0, theta[a_idx(r)])
      exp(a - ts_lse(a))
    }, numeric(nc)))
  }
  list(
    names = nms, kind = rep("prob", k * nc),
    core = list(type = "categorical", data = as.integer(z), nc = nc),
    mest = function(H, v) {
      Hv <- H * v
      nt <- colSums(Hv)
      rho <- crossprod(Hv, Y) / nt  # k x C
      psi <- do.call(cbind, lapply(seq_len(k), function(r) H[, r] * (Y - matrix(rho[r, ], n, nc, byrow = TRUE))))
      list(est = as.vector(t(rho)), psi = psi, bread = diag(rep(nt, each = nc), k * nc))
    },
    start = function(H, v) {
      Hv <- H * v
      nt <- colSums(Hv)
      rho <- crossprod(Hv, Y) / nt
      rho <- pmax(rho, 1e-6)
      rho <- rho / rowSums(rho)
      P <- nt / sum(nt)
      c(log(P[-1] / P[1]), as.vector(t(log(rho[, -1, drop = FALSE] / rho[, 1]))))
    },
    report = function(theta, V) {
      rho <- rho_of(theta)
      np <- length(theta)
      J <- matrix(0, k * nc, np)
      for (r in seq_len(k)) {
        p <- rho[r, ]
        # d p / d a, a the log-odds of levels 2..C
        Jr <- -outer(p, p[-1])
        Jr[cbind(2:nc, seq_len(nc - 1))] <- Jr[cbind(2:nc, seq_len(nc - 1))] + p[-1]
        J[(r - 1) * nc + seq_len(nc), a_idx(r)] <- Jr
      }
      list(est = as.vector(t(rho)), V = J %*% V %*% t(J))
    },
    shares = function(theta) ts_shares(theta, k)
  )
}

ts_model_covariates <- function(X, k, call = rlang::caller_env()) {
  p <- ncol(X)
  cls <- paste0("class_", seq_len(k))
  nms <- as.vector(outer(colnames(X), cls[-1], function(t, r) paste0(r, ":", t)))
  list(
    names = nms, kind = rep("coef", length(nms)),
    core = list(type = "covariates", data = unname(X), nc = 0L),
    mest = function(H, v) {
      Hv <- H * v
      m <- ts_multinom(X, Hv, call = call)
      s <- rowSums(H)
      psi <- do.call(cbind, lapply(2:k, function(r) X * (H[, r] - s * m$probs[, r])))
      list(est = m$theta, psi = psi, bread = m$info)
    },
    start = function(H, v) ts_multinom(X, H * v, call = call)$theta,
    report = function(theta, V) list(est = theta, V = V),
    shares = function(theta) colMeans(lcr_prior(X, matrix(theta, p, k - 1))),
    probs = function(theta) lcr_prior(X, matrix(theta, p, k - 1))
  )
}

# The class shares of the class logits theta[1:(k - 1)] (class 1 the
# reference).
ts_shares <- function(theta, k) {
  g <- c(0, theta[seq_len(k - 1)])
  exp(g - ts_lse(g))
}

ts_lse <- function(x) {
  m <- max(x)
  m + log(sum(exp(x - m)))
}

# The weighted multinomial logit: maximizes sum_i sum_r Wt_ir log p_r(x_i)
# (p_r(x_i) the class probabilities, class 1 the reference) by
# Newton-Raphson with step halving in the C++ core (lca/logit.h; concave
# when every row's weights sum to a positive number, as BCH weights do).
# Returns the coefficients `theta`, the class probabilities `probs` and
# the information `info` (row weights rowSums(Wt)) at them.
ts_multinom <- function(X, Wt, call = rlang::caller_env()) {
  k <- ncol(Wt)
  m <- cpp_logit_newton(X, Wt, rep(0, ncol(X) * (k - 1)))
  if (!all(is.finite(m$theta)) || !all(is.finite(m$info))) {
    abort_numeric(c("The multinomial logit of class membership on the covariates failed: its coefficients are not finite.",
                    i = "Rescale the covariates, or use fewer classes or covariates."), call = call)
  }
  m
}

# ---- step 3 ----------------------------------------------------------------------

ts_estimate <- function(model, cl, keep, method, assignment, call = rlang::caller_env()) {
  W <- cl$W[keep, , drop = FALSE]
  v <- cl$v[keep]
  design <- cl$design
  unit <- if (is.null(design)) NULL else design$unit[keep]
  meat <- function(U) {
    # U: contributions of the observations, already times v
    if (is.null(design)) return(crossprod(U))
    Z <- rowsum(U, unit, reorder = TRUE)
    full <- matrix(0, design$n_psu, ncol(U))
    full[as.integer(rownames(Z)), ] <- Z
    lca_meat(full, list(unit_stratum = design$unit_stratum))
  }
  if (method != "ml") {
    H <- if (method == "bch") W %*% cl$Dinv else W
    m <- model$mest(H, v)
    Ainv <- ts_solve(m$bread)
    V <- Ainv %*% meat(m$psi * v) %*% t(Ainv)
    est <- m$est
    nt <- colSums(H * v)
    shares <- nt / sum(nt)
    ll <- NA_real_
    se_type <- "sandwich"
    iterations <- NA_integer_
    converged <- NA
  } else {
    ml <- ts_ml(model, W, v, cl$D, call = call)
    if (!ml$converged) {
      warn_numeric("The ML three-step estimates did not converge in {ml$iterations} EM iterations and the Newton steps after them.")
    }
    if (assignment == "modal" && is.null(cl$design)) {
      Vt <- ts_solve(ml$info)
      se_type <- "model"
    } else {
      Iinv <- ts_solve(ml$info)
      Vt <- Iinv %*% meat(ml$U) %*% Iinv
      se_type <- "sandwich"
    }
    if (!is.null(model$probs) && any(model$probs(ml$theta) < 1e-8)) {
      # (as glm() warns of fitted probabilities numerically 0 or 1: the
      # information of such a fit is near 0 in every direction, so it
      # cannot tell separation itself)
      cli::cli_warn(c("The ML three-step estimates give some observations class probabilities numerically 0 or 1: a covariate may separate the classes, and then the coefficients grow without bound and their standard errors and tests are not valid.",
                      i = "Remove or merge the covariates that separate the classes, or use {.code method = \"bch\"}."),
                    class = c("aspectr_warning_separation", "aspectr_warning"))
    }
    rep <- model$report(ml$theta, Vt)
    est <- rep$est
    V <- rep$V
    shares <- model$shares(ml$theta)
    ll <- ml$loglik
    iterations <- ml$iterations
    converged <- ml$converged
  }
  names(est) <- model$names
  dimnames(V) <- list(model$names, model$names)
  names(shares) <- colnames(cl$D)
  list(coefficients = est, vcov = V, kind = model$kind, shares = shares, D = cl$D, fit_shares = cl$shares,
       logLik = ll, se_type = se_type, iterations = iterations, converged = converged)
}

ts_solve <- function(A) {
  tryCatch(solve(A), error = function(e) MASS_ginv(A))
}

# The ML three-step estimates: EM with D fixed, then Newton-Raphson steps,
# in the C++ core (lca/threestep.h); returns theta, the log-likelihood, the
# observed information, the observations' score vectors (times their
# weights), the EM iterations and whether it converged.
ts_ml <- function(model, W, v, D, max_iter = 2000, tol = 1e-9, call = rlang::caller_env()) {
  theta <- model$start(W, v)
  if (!all(is.finite(theta))) {
    abort_numeric(c("The ML three-step estimation failed: its start (the naive estimates) is not finite.",
                    i = "Use {.code method = \"bch\"}, or fewer classes."), call = call)
  }
  res <- cpp_ts_ml(model$core$type, model$core$data, ncol(W), model$core$nc, W, v, D, theta, max_iter, tol)
  if (!res$finite) {
    abort_numeric(c("The ML three-step estimation failed: the log-likelihood of step 3 is not finite after {res$iterations} EM iteration{?s}.",
                    i = "Use {.code method = \"bch\"}, or fewer classes."), call = call)
  }
  res
}

# ---- Wald tests --------------------------------------------------------------------

ts_wald <- function(b, V) {
  q <- length(b)
  Vi <- tryCatch(solve(V), error = function(e) MASS_ginv(V))
  stat <- as.numeric(crossprod(b, Vi %*% b))
  c(statistic = stat, df = q, p.value = stats::pchisq(stat, q, lower.tail = FALSE))
}

# Equality of the parameters `idx[[r]]` across the classes: overall, then
# each pair of classes.
ts_wald_classes <- function(est, V, idx, cls, what) {
  k <- length(idx)
  contrast <- function(r, s) {
    M <- matrix(0, length(idx[[r]]), length(est))
    M[cbind(seq_along(idx[[r]]), idx[[r]])] <- 1
    M[cbind(seq_along(idx[[s]]), idx[[s]])] <- -1
    M
  }
  Call <- do.call(rbind, lapply(2:k, function(r) contrast(r, 1)))
  rows <- list(c(ts_wald(Call %*% est, Call %*% V %*% t(Call))))
  labels <- paste("equal", what, "in all classes")
  if (k > 2) {
    for (r in 1:(k - 1)) for (s in (r + 1):k) {
      M <- contrast(s, r)
      rows <- c(rows, list(ts_wald(M %*% est, M %*% V %*% t(M))))
      labels <- c(labels, paste0(cls[r], " vs ", cls[s]))
    }
  }
  out <- as.data.frame(do.call(rbind, rows))
  out$df <- as.integer(out$df)
  cbind(test = labels, out, stringsAsFactors = FALSE)
}

# Each covariate term's coefficients (all classes) equal to 0.
ts_wald_terms <- function(est, V, terms, k) {
  p <- length(terms)
  rows <- lapply(seq_len(p), function(j) {
    i <- (seq_len(k - 1) - 1) * p + j
    ts_wald(est[i], V[i, i, drop = FALSE])
  })
  out <- as.data.frame(do.call(rbind, rows))
  out$df <- as.integer(out$df)
  cbind(test = paste0(terms, " = 0 in all classes"), out, stringsAsFactors = FALSE)
}

# ---- methods -----------------------------------------------------------------------

ts_method_label <- function(x) {
  switch(x$method, bch = "BCH", ml = "ML three-step", naive = "naive classify-analyze")
}

#' @export
print.aspectr_threestep <- function(x, digits = 3, ...) {
  check_dots_empty(...)
  digits <- check_whole(digits, "digits", min = 0, max = 15)
  distal <- inherits(x, "aspectr_distal")
  cat(sprintf("<%s> %s, %s assignment: %s, %d classes, N = %d%s\n",
              class(x)[1], ts_method_label(x), x$assignment,
              if (distal) paste(x$type, "distal outcome") else "covariates of class membership",
              x$k, x$nobs, if (x$dropped > 0) sprintf(" (%d dropped: missing values)", x$dropped) else ""))
  cat(sprintf("standard errors: %s%s\n", if (x$se_type == "sandwich") "sandwich (robust)" else "ML (observed information)",
              if (x$weighted) ", with the sampling weights of the fit" else ""))
  cat("\nclassification error matrix D = P(assigned class | latent class):\n")
  print(round(x$D, digits))
  td <- tidy(x)
  cat("\n")
  if (distal) {
    if (x$type == "continuous") {
      tab <- cbind(share = x$shares,
                   mean = x$coefficients[paste0(names(x$shares), ":mean")],
                   `se(mean)` = sqrt(diag(x$vcov))[paste0(names(x$shares), ":mean")],
                   variance = x$coefficients[paste0(names(x$shares), ":variance")])
      print(round(tab, digits))
    } else {
      m <- matrix(x$coefficients, x$k, length(x$terms), byrow = TRUE, dimnames = list(names(x$shares), x$terms))
      cat("P(outcome level | class):\n")
      print(round(cbind(share = x$shares, m), digits))
    }
  } else {
    cat("class membership logit (class_1 the reference):\n")
    tab <- as.data.frame(td[, c("class", "term", "estimate", "std.error", "statistic", "p.value")])
    num <- vapply(tab, is.numeric, logical(1))
    tab[num] <- lapply(tab[num], round, digits)
    print(tab, row.names = FALSE)
  }
  cat("\nWald tests:\n")
  w <- x$wald
  w$statistic <- round(w$statistic, digits)
  w$p.value <- format.pval(w$p.value, digits = max(1, digits))
  print(w, row.names = FALSE)
  invisible(x)
}

#' @export
coef.aspectr_threestep <- function(object, ...) {
  check_dots_empty(...)
  object$coefficients
}

#' @export
vcov.aspectr_threestep <- function(object, ...) {
  check_dots_empty(...)
  object$vcov
}

#' @export
nobs.aspectr_threestep <- function(object, ...) {
  object$nobs
}

#' @param x An `aspectr_distal` or `aspectr_covariates` result (for the
#'   methods).
#' @param conf.int,conf.level For `tidy()`: add Wald confidence intervals
#'   (`conf.low`, `conf.high`) at level `conf.level`.
#' @rdname lca_distal
#' @export
tidy.aspectr_threestep <- function(x, conf.int = FALSE, conf.level = 0.95, ...) {
  check_dots_empty(...)
  conf.int <- check_flag(conf.int, "conf.int")
  conf.level <- check_number(conf.level, "conf.level", 0, 1, lower_open = TRUE, upper_open = TRUE)
  z <- stats::qnorm(1 - (1 - conf.level) / 2)
  est <- unname(x$coefficients)
  se <- unname(sqrt(pmax(diag(x$vcov), 0)))
  nm <- names(x$coefficients)
  cls <- as.integer(sub("^class_([0-9]+):.*$", "\\1", nm))
  term <- sub("^class_[0-9]+:", "", nm)
  stat <- ifelse(x$kind %in% c("mean", "coef"), est / se, NA_real_)
  out <- tibble::tibble(class = cls, term = term, estimate = est, std.error = se, statistic = stat,
                        p.value = 2 * stats::pnorm(-abs(stat)))
  if (conf.int) {
    lo <- est - z * se
    hi <- est + z * se
    pr <- x$kind == "prob"
    if (any(pr)) {
      ci <- logit_wald(est[pr], se[pr], z)
      lo[pr] <- ci$low
      hi[pr] <- ci$high
    }
    out$conf.low <- lo
    out$conf.high <- hi
  }
  out
}

#' @rdname lca_distal
#' @export
glance.aspectr_threestep <- function(x, ...) {
  check_dots_empty(...)
  w <- x$wald[1, ]
  tibble::tibble(method = x$method, assignment = x$assignment,
                 type = if (inherits(x, "aspectr_distal")) x$type else "covariates",
                 k = x$k, nobs = x$nobs, dropped = x$dropped,
                 wald.statistic = w$statistic, wald.df = w$df, wald.p.value = w$p.value,
                 logLik = x$logLik, classification_error = sum(x$fit_shares * (1 - diag(x$D))),
                 se_type = x$se_type)
}
