# The formula interface of lca() and latent class regression: class
# membership probabilities a multinomial logit of covariates (Dayton and
# Macready 1988; Bandeen-Roche et al. 1997), fitted by EM with one
# Newton-Raphson step of the logit coefficients per iteration, as poLCA
# (Linzer and Lewis 2011) does.

#' @rdname lca
#' @param formula For the formula method: `cbind(A, B, C) ~ 1` (the
#'   manifest variables on the left; `~ 1` is the plain latent class model)
#'   or `cbind(A, B, C) ~ x1 + x2` for latent class regression, where the
#'   prior class probabilities of each observation are a multinomial logit
#'   of the covariates (class 1 the reference), as in poLCA.
#' @export
lca.formula <- function(formula, data, k, nrun = 10, max_iter = 1000, tol = 1e-8, seed = NULL,
                        threads = NULL, na.rm = FALSE, verbose = FALSE, se = TRUE, weights = NULL,
                        psu = NULL, strata = NULL, group = NULL, invariance = "full", ...) {
  call <- match.call()
  check_peer_names(..., fn = "lca")
  check_required(data, "a data frame holding the variables of `formula`")
  check_required(k, "the number of latent classes")
  if (!is.data.frame(data)) {
    abort_input("{.arg data} must be a data frame holding the variables of {.arg formula}, not {describe(data)}.",
                "type", arg = "data")
  }
  if (length(formula) != 3) {
    abort_input("{.arg formula} must have the manifest variables on the left, as in {.code cbind(A, B, C) ~ 1}.",
                "argument", arg = "formula")
  }
  lhs <- formula[[2]]
  vars <- if (is.call(lhs) && identical(lhs[[1]], as.name("cbind"))) vapply(as.list(lhs)[-1], deparse1, "") else deparse1(lhs)
  miss <- setdiff(vars, names(data))
  if (length(miss)) {
    abort_input("{.arg formula} names variable{?s} {.var {miss}} that {.arg data} does not have.",
                "argument", arg = "formula")
  }
  rhs <- stats::delete.response(stats::terms(formula, data = data))
  covars <- all.vars(rhs)
  manifest <- data[vars]
  if (is.character(group) && length(group) == 1 && nrow(data) != 1) {
    # a column of `data` naming the groups
    if (!group %in% names(data)) {
      abort_input("{.arg group} must be a column of {.arg data} or one value per row, and {.arg data} has no column {.val {group}}.",
                  "argument", arg = "group")
    }
    if (group %in% vars) {
      abort_input("{.arg group} names {.var {group}}, a manifest variable of {.arg formula}: a variable cannot both define the groups and measure the classes.",
                  "argument", arg = "group")
    }
    manifest[[group]] <- data[[group]]
  }
  if (!is.null(group) && length(covars)) {
    abort_input(c("{.arg group} cannot be combined with covariates in {.arg formula}.",
                  i = "With item-response probabilities equal across the groups, add the group to the covariates instead."),
                "argument", arg = "group")
  }
  if (!length(covars)) {
    fit <- lca(manifest, k, nrun = nrun, max_iter = max_iter, tol = tol, seed = seed, threads = threads,
               na.rm = na.rm, verbose = verbose, se = se, weights = weights, psu = psu, strata = strata,
               group = group, invariance = invariance, ...)
    fit$call <- call
    return(fit)
  }
  miss <- setdiff(covars, names(data))
  if (length(miss)) {
    abort_input("{.arg formula} names covariate{?s} {.var {miss}} that {.arg data} does not have.",
                "argument", arg = "formula")
  }
  both <- intersect(covars, vars)
  if (length(both)) {
    abort_input("{.arg formula} uses {.var {both}} both as a manifest variable and as a covariate: a variable cannot predict the classes it measures.",
                "argument", arg = "formula")
  }
  check_dots_empty(...)
  design <- lca_check_design(weights, psu, strata, nrow(data))
  mf <- lcr_model_frame(rhs, data)
  # observations with a missing covariate (NA, or NaN such as log() of a
  # negative number) are dropped, as in poLCA; the fit counts them
  cov_ok <- stats::complete.cases(mf)
  dropped <- sum(!cov_ok)
  if (!any(cov_ok)) {
    abort_input("{.arg data} has no observation with every covariate of {.arg formula} observed.",
                "empty", arg = "data")
  }
  prep <- lca_prepare(manifest[cov_ok, , drop = FALSE], na.rm)
  if (!is.null(design)) prep <- lca_weight_patterns(prep, lca_design_rows(design, which(cov_ok)[prep$rows]))
  mf <- mf[cov_ok, , drop = FALSE][prep$rows, , drop = FALSE]
  lcr_check_levels(mf)
  X <- stats::model.matrix(rhs, mf)
  k <- check_whole(k, "k", min = 2, max = nrow(prep$codes),
                   what = "at least 2 for a regression on covariates")
  ctl <- check_fit_controls(nrun, max_iter, tol, seed, threads, verbose)
  # each column scaled by a power of 2 (exact: the same fit bit for bit
  # where nothing overflows), so that covariates near the largest or
  # smallest doubles give the Newton steps numbers they can hold
  m <- lcr_column_scale(X)
  Xs <- sweep(X, 2, m, "*")
  if (qr(Xs)$rank < ncol(Xs)) {
    abort_input("The covariates of {.arg formula} are collinear: the design matrix has rank {qr(Xs)$rank} < {ncol(Xs)} columns.",
                "argument", arg = "formula")
  }
  if (dropped > 0) {
    cli::cli_inform("{.fn lca}: {dropped} observation{?s} with a missing covariate dropped ({.field dropped_covariate_na} of the fit).",
                    class = "aspectr_message_dropped")
  }
  start <- proc.time()[["elapsed"]]
  hook <- fit_hook(NULL, ctl$verbose, "lca()")
  fit <- lcr_fit(prep, Xs, k, ctl$nrun, ctl$max_iter, ctl$tol, ctl$seed, w = prep$design$w,
                 threads = ctl$threads, verbose = ctl$verbose, hook = hook)
  fit <- lcr_result(fit, prep, Xs, k, rhs, call, ctl, proc.time()[["elapsed"]] - start,
                    dropped = dropped, se = check_flag(se, "se"))
  fit <- lcr_unscale(fit, X, m)
  fit$rows <- which(cov_ok)[prep$rows]
  fit$data_nrow <- nrow(data)
  finish_progress(fit, ctl$verbose, "lca()", ctl$max_iter, ctl$tol)
}

# The covariates' model frame over every row of `data` (missing values
# kept), each variable checked: numbers finite (NA and NaN are missing),
# no complex numbers or lists.
lcr_model_frame <- function(rhs, data, call = rlang::caller_env()) {
  mf <- tryCatch(stats::model.frame(rhs, data, na.action = stats::na.pass),
                 error = function(e) {
                   abort_input("The covariates of {.arg formula} could not be evaluated in {.arg data}: {conditionMessage(e)}",
                               "value", arg = "formula", call = call)
                 })
  for (v in names(mf)) {
    x <- mf[[v]]
    if (is.complex(x) || is.list(x) || !(is.numeric(x) || is.logical(x) || is.character(x) || is.factor(x))) {
      abort_input("Covariate {.var {v}} of {.arg formula} must be numeric, logical, character or a factor, not {describe(x)}.",
                  "type", arg = "formula", call = call)
    }
    if (is.numeric(x) && any(is.infinite(x))) {
      abort_input("Covariate {.var {v}} of {.arg formula} must be finite; it has {sum(is.infinite(x))} infinite value{?s}.",
                  "value", arg = "formula", call = call)
    }
  }
  mf
}

# A categorical covariate needs two values among the observations used.
lcr_check_levels <- function(mf, call = rlang::caller_env()) {
  for (v in names(mf)) {
    x <- mf[[v]]
    if (is.character(x) || is.factor(x) || is.logical(x)) {
      u <- unique(as.character(x))
      if (length(u) < 2) {
        abort_input("Covariate {.var {v}} of {.arg formula} must take at least 2 values among the observations used, not only {.val {u}}.",
                    "value", arg = "formula", call = call)
      }
    }
  }
}

# Powers of 2 that bring each column's largest magnitude into [0.5, 1)
# (1 for a column of zeros).
lcr_column_scale <- function(X) {
  top <- apply(abs(X), 2, max)
  e <- ifelse(top > 0, -floor(log2(top)) - 1, 0)
  2^e
}

# The fit of scaled covariates X * m back in the units of X: coefficients
# (and their standard errors and covariance) times m by covariate.
lcr_unscale <- function(fit, X, m) {
  fit$x <- X
  if (all(m == 1)) return(fit)
  fit$coeff <- fit$coeff * m
  # (fit[["se"]]: fit$se would match fit$seed when there is none)
  has_se <- is.list(fit[["se"]]) && !is.null(fit[["se"]]$coeff)
  if (has_se) {
    fit$se$coeff <- fit$se$coeff * m
    mm <- unname(rep(m, ncol(fit$coeff)))
    fit$se$vcov <- fit$se$vcov * outer(mm, mm)
    # (the covariance of all free parameters: the coefficients first)
    if (!is.null(fit$se$vcov_all)) {
      sa <- unname(c(mm, rep(1, nrow(fit$se$vcov_all) - length(mm))))
      fit$se$vcov_all <- fit$se$vcov_all * outer(sa, sa)
    }
  }
  # (an NA standard error is a coefficient the data do not determine,
  # warn_undetermined(): not an overflow)
  bad <- !is.finite(fit$coeff) | (if (has_se) is.infinite(fit$se$coeff) | is.nan(fit$se$coeff) else FALSE)
  if (any(bad)) {
    cli::cli_warn("{.fn lca}: {sum(bad)} coefficient{?s} or standard error{?s} overflow{?s/} in the units of the covariates; rescale the covariates.",
                  class = c("aspectr_warning_numeric", "aspectr_warning"))
  }
  fit
}

# Multinomial-logit class priors: N x k, class 1 the reference.
lcr_prior <- function(X, beta) {
  xb <- X %*% beta
  eta <- cbind(numeric(nrow(xb)), xb)
  eta <- eta - eta[cbind(seq_len(nrow(eta)), max.col(eta, ties.method = "first"))]
  e <- exp(eta)
  e / rowSums(e)
}

# EM for latent class regression from nrun random starts, in the C++ core
# (lca/regression.h; `threads` over the starts); the best run. With
# sampling weights `w` (one per observation) every sum over the
# observations is weighted: the weighted (pseudo-)likelihood. `hook`:
# fit_hook()'s progress messages.
lcr_fit <- function(prep, X, k, nrun, max_iter, tol, seed, w = NULL, threads = 1L, verbose = FALSE,
                    hook = NULL, call = rlang::caller_env()) {
  codes <- prep$codes
  nl <- lengths(prep$levels)
  starts <- with_seed(seed, lapply(seq_len(nrun), function(s) {
    lapply(nl, function(l) { m <- matrix(stats::runif(l * k), l); sweep(m, 2, colSums(m), "/") })
  }))
  storage.mode(codes) <- "integer"
  out <- cpp_lcr_fit(codes, as.integer(nl), X, w, starts, k, max_iter, tol, threads, verbose, hook)
  values <- -out$loglik
  best <- best_run(values, "lca() fit", call = call)
  # the priors and posteriors of the best run's parameters (the E step
  # that gave its log-likelihood)
  e <- cpp_lcr_estep(codes, as.integer(nl), X, w, out$probs[[best]], out$beta[[best]])
  rownames(e$prior) <- rownames(e$posterior) <- rownames(X)
  list(probs = out$probs[[best]], beta = out$beta[[best]], prior = e$prior, posterior = e$posterior,
       llik = e$loglik, objective = out$objective[[best]], iterations = out$iterations[best],
       converged = out$converged[best], run = best, run_values = values, run_iterations = out$iterations)
}

# Moore-Penrose inverse (MASS::ginv without the dependency).
MASS_ginv <- function(A, tol = sqrt(.Machine$double.eps)) {
  s <- svd(A)
  pos <- s$d > max(tol * s$d[1], 0)
  if (!any(pos)) return(array(0, dim(A)[2:1]))
  s$v[, pos, drop = FALSE] %*% (t(s$u[, pos, drop = FALSE]) / s$d[pos])
}

# The parameters among `which` that an information matrix does not
# determine: those with a part (squared length above 1e-4) in its
# numerically null space, the directions MASS_ginv() drops, along which the
# likelihood is flat to rounding and the variance unbounded (separation:
# coefficients on their way to infinity; collinear covariates). The
# generalized inverse gives them a variance near 0 instead.
info_undetermined <- function(info, which, tol = sqrt(.Machine$double.eps)) {
  s <- svd(info)
  null <- s$v[, !(s$d > max(tol * s$d[1], 0)), drop = FALSE]
  if (!ncol(null) || !length(which)) return(which[0])
  which[rowSums(null[which, , drop = FALSE]^2) > 1e-4]
}

# A classed warning that the standard errors of some coefficients are NA
# (info_undetermined()).
warn_undetermined <- function(names, what = "{.fn lca}") {
  one <- length(names) == 1
  cli::cli_warn(c(paste0(what, ": the data do not determine ", if (one) "the coefficient" else "the coefficients",
                         " {.var {names}}: the likelihood is flat along ", if (one) "it" else "them",
                         " (separation, where a covariate predicts the classes perfectly and the coefficients grow without bound, or collinear covariates); ",
                         if (one) "its estimate is not meaningful and its standard error is NA." else
                           "their estimates are not meaningful and their standard errors are NA."),
                  i = "Remove or merge the covariates that separate the classes."),
                class = c("aspectr_warning_separation", "aspectr_warning"))
}

# The covariance T V T' of linear maps T of parameters of covariance V,
# where V's NA rows and columns (parameters the data do not determine,
# info_undetermined()) make NA the results that involve them, and only
# those (in a product 0 * NA is NA)
linear_cov <- function(Tm, V) {
  lost <- which(is.na(diag(V)))
  if (!length(lost)) return(Tm %*% V %*% t(Tm))
  V[is.na(V)] <- 0
  out <- Tm %*% V %*% t(Tm)
  hit <- which(rowSums(Tm[, lost, drop = FALSE] != 0) > 0)
  out[hit, ] <- NA_real_
  out[, hit] <- NA_real_
  out
}

# The aspectr_lca object of a latent class regression.
lcr_result <- function(res, prep, X, k, rhs, call, ctl, time, dropped, se = TRUE) {
  cls <- paste0("class_", seq_len(k))
  factors <- lapply(seq_along(res$probs), function(j) {
    m <- res$probs[[j]]
    dimnames(m) <- list(prep$levels[[j]], cls)
    m
  })
  names(factors) <- prep$vars
  probs <- lapply(factors, t)
  beta <- res$beta
  dimnames(beta) <- list(colnames(X), cls[-1])
  prior <- res$prior
  colnames(prior) <- cls
  post <- res$posterior
  colnames(post) <- cls
  N <- nrow(prep$codes)
  npar <- (k - 1) * ncol(X) + k * sum(lengths(prep$levels) - 1)
  ll <- res$llik
  dr <- prep$design
  # the class shares: the (weighted) mean prior
  P <- stats::setNames(if (is.null(dr)) colMeans(prior) else colSums(prior * dr$w) / sum(dr$w), cls)
  n_ic <- if (is.null(dr)) N else sum(dr$w)
  fit <- list(
    k = k, lambda = P, factors = factors,
    loss = "kl", q = NA_real_, tempering = 1, objective = res$objective, value = -ll,
    initial = res$objective[1], iterations = res$iterations, converged = res$converged,
    run = res$run, run_values = res$run_values, run_iterations = res$run_iterations, dims = as.integer(lengths(prep$levels)),
    dimnames = unname(prep$levels), total = N, time = time, threads = ctl$threads, seed = ctl$seed,
    call = call, probs = probs, P = P, prior = prior,
    posterior = post, predclass = max.col(post, ties.method = "first"), llik = ll, logLik = ll,
    npar = npar, AIC = -2 * ll + 2 * npar, BIC = -2 * ll + log(n_ic) * npar, Gsq = NA_real_,
    Chisq = NA_real_, N = N, Nobs = sum(prep$complete), variables = prep$vars, supervised = FALSE,
    coeff = beta, x = X, terms = rhs, dropped_covariate_na = dropped
  )
  if (!is.null(dr)) fit <- lca_design_fields(fit, dr)
  if (se) {
    design <- if (is.null(dr)) NULL else
      list(M = Matrix::sparseMatrix(i = dr$unit, j = seq_len(N), x = dr$w, dims = c(dr$n_units, N)), dr = dr)
    fit$se <- lca_standard_errors(prep$codes, X, fit, w = dr$w, design = design)
  }
  fit$entropy <- lca_entropy(post)
  # goodness of fit over the complete response patterns with the mean
  # prior, as poLCA computes it for regression models
  gof <- lca_goodness_of_fit(fit, prep)
  fit$Gsq <- gof[["Gsq"]]
  fit$Chisq <- gof[["Chisq"]]
  new_aspectr_fit("lca", fit, factors = fit$factors, weights = fit$P, params = list(regression = TRUE),
                  inherit = "plsa")
}

# Standard errors by the empirical information (the outer product of the
# observations' score vectors), as poLCA computes them: parameters are the
# logit coefficients of the class priors and, for every variable and
# class, the log-ratios log(p_c / p_1) of the response probabilities; the
# standard errors of the probabilities and of the class shares follow by
# the delta method. A list: `probs` (per variable, classes x levels),
# `P` (class shares), `coeff` (regression coefficients; NULL without
# covariates), `vcov` (of the coefficients).
# With sampling weights, `design` is list(M, dr): M (PSUs x rows of
# `codes`) holds the weights of the rows in each PSU, and the covariance
# is the sandwich A^- B A^- with A the weighted empirical information
# (`w` the rows' total weights) and B the between-PSU covariance of the
# weighted score totals (lca_meat()).
lca_standard_errors <- function(codes, X, fit, post = fit$posterior, w = NULL, design = NULL) {
  k <- fit$k
  if (!is.null(design)) {
    # the sandwich is the same for the weights times any number: they are
    # divided by a power of 4 near the largest (exactly, and their square
    # roots by a power of 2), so that the information and the meat, of the
    # weights' size and its square, neither overflow nor underflow
    s <- 4^floor(log(max(w, design$M@x), 4))
    if (is.finite(s) && s > 0 && s != 1) {
      w <- w / s
      design$M <- design$M / s
    }
  }
  prior <- if (!is.null(fit$prior)) fit$prior else matrix(fit$P, nrow(codes), k, byrow = TRUE)
  R <- ncol(X)
  nl <- vapply(fit$probs, ncol, integer(1))
  # The score vectors of rows i of a block: the logit coefficients
  # x_i (post_ir - prior_ir), r = 2..k, then the response log-ratios
  # post_ir ([y_ij = c] - p_jrc), c >= 2. The information is accumulated
  # over blocks of rows (weighted by `w`, the count of each row when the
  # rows are response patterns), so memory stays bounded on large data.
  scores <- function(rows) {
    S <- do.call(cbind, lapply(2:k, function(r) X[rows, , drop = FALSE] * (post[rows, r] - prior[rows, r])))
    for (j in seq_along(nl)) {
      p <- fit$probs[[j]]   # k x levels
      cj <- codes[rows, j]
      ok <- !is.na(cj)
      for (r in seq_len(k)) {
        Y <- matrix(0, length(rows), nl[j] - 1)
        Y[ok, ] <- outer(cj[ok], 2:nl[j], "==") - matrix(p[r, -1], sum(ok), nl[j] - 1, byrow = TRUE)
        S <- cbind(S, post[rows, r] * Y)
      }
    }
    S
  }
  n <- nrow(codes)
  info <- 0
  Z <- 0
  for (start in seq(1, n, by = 20000)) {
    rows <- start:min(n, start + 19999)
    S <- scores(rows)
    if (!is.null(design)) Z <- Z + as.matrix(design$M[, rows, drop = FALSE] %*% S)
    if (!is.null(w)) S <- S * sqrt(w[rows])
    info <- info + crossprod(S)
  }
  S <- NULL
  V <- MASS_ginv(info)
  if (!is.null(design)) V <- V %*% lca_meat(Z, design$dr) %*% V
  nb <- R * (k - 1)
  nms <- lca_param_names(fit, colnames(X))
  dimnames(V) <- list(nms, nms)
  out <- list(vcov_all = V)
  lost <- integer(0)
  # coefficients
  if (R > 1 || !is.null(fit$coeff)) {
    se_b <- matrix(sqrt(pmax(diag(V)[seq_len(nb)], 0)), R, k - 1, dimnames = dimnames(fit$coeff))
    Vc <- unname(V[seq_len(nb), seq_len(nb), drop = FALSE])
    lost <- info_undetermined(info, seq_len(nb))
    if (length(lost)) {
      se_b[lost] <- NA_real_
      Vc[lost, ] <- NA_real_
      Vc[, lost] <- NA_real_
      warn_undetermined(nms[lost])
    }
    out$coeff <- se_b
    out$vcov <- Vc
  }
  # class shares (the mean prior) by the delta method
  J <- matrix(0, k, nb)
  for (r in seq_len(k)) for (s in 2:k) {
    d <- prior[, r] * ((r == s) - prior[, s])
    J[r, (s - 2) * R + seq_len(R)] <- if (is.null(w)) colMeans(X * d) else colSums(X * d * w) / sum(w)
  }
  Vb <- V[seq_len(nb), seq_len(nb), drop = FALSE]
  out$P <- stats::setNames(sqrt(pmax(diag(J %*% Vb %*% t(J)), 0)), names(fit$P))
  # response probabilities by the delta method within each (variable, class)
  pos <- nb
  out$probs <- lapply(seq_along(nl), function(j) {
    p <- fit$probs[[j]]
    se <- p * 0
    for (r in seq_len(k)) {
      ix <- pos + seq_len(nl[j] - 1)
      pos <<- pos + nl[j] - 1
      Jp <- -outer(p[r, ], p[r, -1])
      Jp[cbind(2:nl[j], seq_len(nl[j] - 1))] <- Jp[cbind(2:nl[j], seq_len(nl[j] - 1))] + p[r, -1]
      se[r, ] <- sqrt(pmax(diag(Jp %*% V[ix, ix, drop = FALSE] %*% t(Jp)), 0))
    }
    se
  })
  names(out$probs) <- names(fit$probs)
  # (the class shares and probabilities keep the generalized inverse's
  # covariance: the flat directions change no prior, so no share, to rounding)
  if (length(lost)) {
    out$vcov_all[lost, ] <- NA_real_
    out$vcov_all[, lost] <- NA_real_
  }
  out
}

# G^2 and X^2 over the complete response patterns (poLCA's definition),
# with the model's class shares `lambda`. NA, with a warning that says why,
# when no observation has every response (tiny data with missing values),
# and X^2 when it is beyond the range of doubles. An observed pattern whose
# probability underflows (hundreds of variables) is taken in logs: G^2
# stays finite.
lca_goodness_of_fit <- function(fit, prep, cell = NULL) {
  comp <- prep$complete_pattern
  if (!any(comp)) {
    warn_numeric(c("{.field Gsq} and {.field Chisq} are {.val {NA}}: no observation has every response observed.",
                   i = "They are computed over the complete response patterns, as in poLCA."))
    return(c(Gsq = NA_real_, Chisq = NA_real_))
  }
  obs <- prep$data$val[comp]
  nobs <- sum(obs)
  pats <- t(prep$data$idx[, comp, drop = FALSE]) + 1L
  # (else the model probability of every pattern)
  cell <- if (is.null(cell)) cell_probability(fit, pats) else cell[comp]
  if (all(cell > 0)) {
    expected <- nobs * cell
    out <- c(Gsq = 2 * sum(obs * log(obs / expected)),
             Chisq = sum((obs - expected)^2 / expected) + (nobs - sum(expected)))
  } else {
    # X^2 = sum(obs^2 / expected) - nobs (the observed counts sum to nobs)
    lc <- log_cell_probability(fit, pats)
    out <- c(Gsq = 2 * sum(obs * (log(obs / nobs) - lc)),
             Chisq = sum(exp(2 * log(obs) - log(nobs) - lc)) - nobs)
  }
  if (!is.finite(out[["Chisq"]])) {
    out[["Chisq"]] <- NA_real_
    if (2 * log(max(obs)) > 700) {
      # (the counts themselves: sampling weights of a huge scale)
      big <- signif(max(obs), 3)
      warn_numeric("{.field Chisq} is {.val {NA}}: it is beyond the range of doubles (a response pattern's weighted count is {big}; scale the weights to sum to the number of observations).")
    } else {
      e10 <- round(min(log_cell_probability(fit, pats)) / log(10))
      warn_numeric("{.field Chisq} is {.val {NA}}: it is beyond the range of doubles (the model gives an observed response pattern a probability of about 10^{e10}).")
    }
  }
  out
}

# log P(pattern) of complete patterns (rows of `index`), for probabilities
# below the doubles' range: log-sum-exp over the classes.
log_cell_probability <- function(object, index) {
  lp <- matrix(log(object$lambda), nrow(index), object$k, byrow = TRUE)
  for (n in seq_len(ncol(index))) lp <- lp + log(object$factors[[n]][index[, n], , drop = FALSE])
  m <- apply(lp, 1, max)
  m[!is.finite(m)] <- 0
  m + log(rowSums(exp(lp - m)))
}

# Relative entropy of the class posteriors (1: every observation assigned
# with certainty, 0: posteriors uniform).
lca_entropy <- function(post) {
  k <- ncol(post)
  if (k < 2) return(1)
  h <- -sum(post[post > 0] * log(post[post > 0]))
  1 - h / (nrow(post) * log(k))
}

#' Reorder the classes of a latent class fit
#'
#' Latent classes come out in an arbitrary order (poLCA users reorder them
#' with `poLCA.reorder()` and a refit). `lca_reorder()` permutes the classes
#' of a fit directly: item-response probabilities, class shares,
#' posteriors, predicted classes, standard errors and, for a latent class
#' regression, the logit coefficients re-expressed against the new first
#' class (with their covariance, exactly: the likelihood does not change).
#'
#' @param fit An `aspectr_lca` fit.
#' @param order A permutation of `1:k`: `order[1]` becomes class 1, and so
#'   on. The default orders the classes by decreasing share.
#' @return The fit with its classes reordered (named `class_1`, ...).
#' @examples
#' binned <- data.frame(lapply(iris[1:4], cut, 3))
#' fit <- lca(binned, 3, seed = 1)
#' fit$P
#' lca_reorder(fit, c(3, 1, 2))$P
#' @export
lca_reorder <- function(fit, order = base::order(fit$P, decreasing = TRUE)) {
  check_required(fit, "an `aspectr_lca` fit")
  if (!inherits(fit, "aspectr_lca")) {
    abort_input("{.arg fit} must be an {.cls aspectr_lca} fit, not {describe(fit)}.", "type", arg = "fit")
  }
  k <- fit$k
  if (!is.numeric(order) || length(order) != k || anyNA(order) || !setequal(order, seq_len(k))) {
    abort_input("{.arg order} must be a permutation of 1:{k}, not {describe_values(order)}.", "argument", arg = "order")
  }
  order <- as.integer(order)
  cls <- paste0("class_", seq_len(k))
  rename <- function(m, byrow = FALSE) {
    if (byrow) { m <- m[order, , drop = FALSE]; rownames(m) <- cls } else { m <- m[, order, drop = FALSE]; colnames(m) <- cls }
    m
  }
  fit$factors <- lapply(fit$factors, rename)
  fit$probs <- lapply(fit$probs, rename, byrow = TRUE)
  fit$lambda <- stats::setNames(fit$lambda[order], cls)
  fit$P <- stats::setNames(fit$P[order], cls)
  fit$weights <- fit$P
  fit$posterior <- rename(fit$posterior)
  fit$predclass <- match(fit$predclass, order)
  if (!is.null(fit$prior)) fit$prior <- rename(fit$prior)
  if (!is.null(fit[["se"]])) {
    fit$se$probs <- lapply(fit$se$probs, rename, byrow = TRUE)
    fit$se$P <- stats::setNames(fit$se$P[order], cls)
  }
  if (!is.null(fit[["se"]]$vcov_all)) {
    # the covariance of all free parameters: the logits of the classes
    # re-expressed against the new first class, the item log-odds blocks
    # of each class moved with it
    V <- fit$se$vcov_all
    R <- if (is.null(fit$coeff)) 1L else nrow(fit$coeff)
    Tm <- lca_reorder_map(fit, order, R)
    V <- linear_cov(Tm, V)
    nms <- lca_param_names(fit, if (is.null(fit$coeff)) NULL else rownames(fit$coeff))
    dimnames(V) <- list(nms, nms)
    fit$se$vcov_all <- V
  }
  if (!is.null(fit$coeff)) {
    R <- nrow(fit$coeff)
    # B (R x k, class 1 column 0) -> B[, order] - B[, order[1]]: linear in vec(beta)
    A <- matrix(0, R * (k - 1), R * (k - 1))
    col_of <- function(r) if (r == 1) NULL else (r - 2) * R + seq_len(R)
    for (s in 2:k) {
      rows <- (s - 2) * R + seq_len(R)
      if (!is.null(col_of(order[s]))) A[cbind(rows, col_of(order[s]))] <- A[cbind(rows, col_of(order[s]))] + 1
      if (!is.null(col_of(order[1]))) A[cbind(rows, col_of(order[1]))] <- A[cbind(rows, col_of(order[1]))] - 1
    }
    beta <- matrix(A %*% as.vector(fit$coeff), R, k - 1, dimnames = list(rownames(fit$coeff), cls[-1]))
    fit$coeff <- beta
    if (!is.null(fit[["se"]])) {
      V <- linear_cov(A, fit$se$vcov)
      fit$se$vcov <- V
      fit$se$coeff <- matrix(sqrt(pmax(diag(V), 0)), R, k - 1, dimnames = dimnames(beta))
    }
  }
  fit
}
