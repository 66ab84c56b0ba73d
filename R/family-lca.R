#' Latent class analysis
#'
#' Fits the latent class model (a finite mixture of independent categorical
#' variables; Lazarsfeld's model as in \pkg{poLCA}) to a data frame of
#' categorical variables. The data become the sparse tensor of counts of the
#' observed response patterns, and the model is the KL aspect model on that
#' tensor (Huang and Sidiropoulos: KL CP = latent class model), fitted with
#' random restarts by the EM algorithm accelerated by SQUAREM (Varadhan and
#' Roland 2008; see [plsa()]), which never decreases the likelihood and
#' has EM's fixed points but needs far fewer passes over the data where the
#' likelihood is flat (argument `method`).
#'
#' Missing values: with `na.rm = FALSE` (the default; poLCA's default is
#' `na.rm = TRUE`, give it to reproduce poLCA's numbers) a missing
#' response is left out of that observation's likelihood (the model is
#' marginalized over it), so observations with some missing responses still
#' count; observations with every response missing are dropped. With
#' `na.rm = TRUE` every observation with a missing response is dropped.
#'
#' @section Restarts:
#' With `nrun` random starts, `lca()` uses staged restarts (the short-run
#' strategy of Biernacki, Celeux and Govaert, 2003): every start first runs
#' `short_iter` iterations, then only the `short_keep` starts with the
#' highest likelihood continue to convergence (`max_iter`, `tol`). Staging
#' only chooses which starts continue: a continued start follows exactly the
#' path it would follow alone. If a continued start reaches `max_iter`
#' without converging (a flat likelihood, where a short run says little
#' about where a start ends) the other starts are run to the end as well.
#' `short_iter = 0`, or `short_keep >= nrun`, runs every start to
#' convergence, as \pkg{poLCA} does.
#'
#' The default `short_keep = 1` with `short_iter = 20` SQUAREM iterations
#' (each does the work of up to three EM iterations), or 100 iterations of
#' EM or coordinate descent, was chosen by timing the fits on poLCA's data
#' sets. With plain EM, over 200 seeds of 10 starts on
#' `carcinoma` with 4 classes (several local maxima), 100 iterations found
#' the best log-likelihood in 97.5% of the seeds against 98.5% for full
#' restarts (20 iterations: 91%, 50: 95%). With SQUAREM, 20 iterations
#' found it as often as full restarts: in 99% of 200 seeds on `carcinoma`
#' with 4 classes, in all of 200 seeds on `values` and `election` and of
#' 100 seeds on `carcinoma` and `gss82` (3 classes each; 10 iterations:
#' 96% and 95% on `carcinoma` with 4 classes and `election`), with 1.4 to 5.3
#' times fewer iterations in all than full restarts (the same number on
#' `carcinoma` with 3 classes, whose starts converge within 20). When local maxima
#' are a concern, more starts (`nrun`) are cheap under staging.
#'
#' Threads: while several starts are running, the threads go over the starts
#' (each start's arithmetic does not depend on the thread count, so the
#' result is the same for any `threads`); a single running start uses them
#' over the response patterns (only with several thousand patterns; the
#' summation order then depends on `threads`, so the last digits may too).
#'
#' @section Sharded data:
#' `data` may be data frames with the same variables, coded alike (the same
#' types and factor levels), split by observations with [shards()], in
#' memory or in `.rds` files. The model depends on the data only through the
#' counts of the distinct response patterns, so each shard is read once and
#' its patterns are merged into those of the whole; the fit runs on the
#' merged counts and is the same as `lca()` of all the rows together (the
#' same patterns in the same order: identical numbers), posteriors of every
#' observation included. Only the patterns and each observation's pattern
#' number are kept in memory. With `cluster =` (any cluster of the
#' \pkg{parallel} package, or [mirai::make_cluster()]) the workers read and
#' code the shards, each from files it can read, and only their patterns
#' and pattern numbers reach this process; the fit is the same.
#'
#' @references Biernacki, C., Celeux, G. and Govaert, G. (2003). Choosing
#'   starting values for the EM algorithm for getting the highest likelihood
#'   in multivariate Gaussian mixture models. *Computational Statistics &
#'   Data Analysis* 41, 561-575.
#'
#'   Varadhan, R. and Roland, C. (2008). Simple and globally convergent
#'   methods for accelerating the convergence of any EM algorithm.
#'   *Scandinavian Journal of Statistics*, 35(2), 335-353.
#'
#'   Binder, D. A. (1983). On the variances of asymptotically normal
#'   estimators from complex surveys. *International Statistical Review*
#'   51, 279-292.
#'
#'   Skinner, C. J. (1989). Domain means, regression and multivariate
#'   analysis. In Skinner, C. J., Holt, D. and Smith, T. M. F. (eds.),
#'   *Analysis of Complex Surveys*, 59-87. Wiley.
#'
#'   Vermunt, J. K. and Magidson, J. (2007). Latent class analysis with
#'   sampling weights: a maximum-likelihood approach. *Sociological Methods
#'   & Research* 36, 87-111.
#'
#'   Ramaswamy, V., DeSarbo, W. S., Reibstein, D. J. and Robinson, W. T.
#'   (1993). An empirical pooling approach for estimating marketing mix
#'   elasticities with PIMS data. *Marketing Science* 12, 103-124.
#'
#' @param data A data frame of categorical variables (or, for the formula
#'   method, the data frame holding the formula's variables): factors, character,
#'   logical or whole-number codes. Each needs at least two observed levels.
#'   Or data frames split by observations with [shards()] (see Sharded data).
#' @param k Number of latent classes.
#' @param nrun Number of random starts; the fit with the highest likelihood
#'   is kept (see Restarts), the first of those whose objectives agree to
#'   10 significant digits.
#' @param max_iter,tol Iteration limit and tolerance (relative change of the
#'   KL divergence, i.e. of the log-likelihood) per start.
#' @param na.rm Drop observations with missing responses (`TRUE`) or keep
#'   them and leave the missing responses out of their likelihood (`FALSE`).
#' @param short_iter,short_keep Staged restarts: iterations every start
#'   runs first, and how many of the best starts then continue to
#'   convergence (see Restarts). `short_iter = 0` runs every start to
#'   convergence; `NULL` (default) is 20 for SQUAREM and 100 for EM and
#'   coordinate descent.
#' @param seed,threads,verbose As in [plsa()], except that the starts run
#'   in one call (threads over the starts, see Restarts) rather than through
#'   a [future][future::plan] plan.
#' @param init `"random"` (default), a list of starting `lambda` and
#'   `factors` (one levels x k matrix per variable), or an earlier `lca()`
#'   fit of the same data shape and k (a warm start), as in [plsa()]; it is
#'   the first of the `nrun` starts.
#' @param callback As in [plsa()]: a function of (iteration, objective,
#'   factors) called after every iteration, `FALSE` stops. With a
#'   callback the starts run one after another (staged as without one).
#' @param method `"squarem"` (the default: EM extrapolated by SQUAREM, with
#'   a safeguard that keeps every iteration's likelihood at least that of
#'   the one before), `"em"` (the plain EM algorithm, as \pkg{poLCA}) or
#'   `"cd"` (coordinate descent over the items, as [plsa()]'s default for
#'   matrices; complete responses only, and an iteration's cost grows with
#'   the square of the number of items). All three never decrease the
#'   likelihood and have the same fixed points; on poLCA's data sets
#'   SQUAREM reached poLCA's log-likelihood fastest. One SQUAREM iteration costs up to three EM iterations.
#'   `NULL` picks the default.
#' @param se Compute the standard errors (poLCA's `calc.se`): `TRUE`
#'   (default) or `FALSE`, which leaves `se` out of the fit and saves the
#'   time of the information matrix (a third of a small fit's time).
#' @param cluster For data frames in [shards()]: `NULL` (default) reads
#'   them in this process, one at a time; or a cluster from
#'   [shard_cluster()], [parallel::makeCluster()] or [mirai::make_cluster()] whose workers read
#'   and code them (they need \pkg{aspectr} installed).
#' @param weights Sampling weights: `NULL` (default) or positive numbers,
#'   one per row of `data` (see Sampling weights).
#' @param psu,strata Identifiers of the primary sampling units (clusters)
#'   and of the strata of a survey design, one per row of `data`, for the
#'   sandwich standard errors (see Sampling weights); `NULL` (default): each
#'   observation its own unit, one stratum. (Not to be confused with
#'   `cluster`, the parallel cluster that reads shards.)
#' @param ... Must be empty.
#' @return An object of class `c("aspectr_lca", "aspectr_plsa",
#'   "aspectr_fit")`: the fields of a [plsa()] fit (one factor per variable)
#'   plus
#'   \describe{
#'   \item{probs}{list with, per variable, a k x levels matrix of
#'     \eqn{P(level \mid class)};}
#'   \item{P}{class shares;}
#'   \item{posterior, predclass}{class posteriors (one row per observation
#'     used) and the most probable class;}
#'   \item{llik (also logLik), npar, AIC, BIC}{log-likelihood, number of free parameters and
#'     information criteria (`N` = observations used);}
#'   \item{Gsq, Chisq}{likelihood-ratio and Pearson goodness-of-fit statistics
#'     over the complete response patterns (as poLCA computes them; in
#'     logarithms where a pattern's probability is below the range of
#'     doubles, with hundreds of variables); `NA`, with a warning of class
#'     `aspectr_warning_numeric`, when no observation has every response
#'     observed, and `Chisq` when it is beyond the range of doubles;}
#'   \item{N, Nobs}{observations used, and those without missing responses;}
#'   \item{sampling_weights, sum_weights, design}{with `weights`, `psu` or
#'     `strata`: the weights of the observations used, their sum, and the
#'     numbers of PSUs and strata of the standard errors;}
#'   \item{run_iterations}{iterations run by each start;}
#'   \item{entropy}{the relative entropy of the class posteriors,
#'     \eqn{1 - \sum_i \sum_r -\hat p_{ir} \log \hat p_{ir} / (N \log k)}
#'     (Ramaswamy et al. 1993): 1 when every observation is assigned with
#'     certainty, 0 when the posteriors are uniform. It is not
#'     \pkg{poLCA}'s `poLCA.entropy()` (the entropy of the fitted
#'     response-pattern distribution), which [glance()] reports as `entropy`
#'     next to this one as `relative_entropy`;}
#'   \item{se}{standard errors (see the section Standard errors): `probs`
#'     (per variable, classes x levels), `P` (class shares) and, for a
#'     regression, `coeff` and `vcov` (of the coefficients), and
#'     `vcov_all`, the covariance of all free parameters (see
#'     [vcov.aspectr_lca()]);}
#'   \item{coeff, prior, x, terms}{for a latent class regression: the logit
#'     coefficients (covariates x classes 2..k, class 1 the reference), the
#'     prior class probabilities of every observation, the design matrix and
#'     the covariates' terms. `P` is then the mean prior, which `Gsq` and
#'     `Chisq` use, as in poLCA.}}
#' @section Latent class regression:
#' `lca(cbind(A, B, C) ~ x1 + x2, data, k)` models the prior class
#' probabilities of observation \eqn{i} as a multinomial logit
#' \eqn{P(class = r \mid x_i) \propto \exp(x_i' \beta_r)}, \eqn{\beta_1 = 0}
#' (Dayton and Macready 1988; Bandeen-Roche et al. 1997), fitted by EM with
#' one Newton-Raphson step of \eqn{\beta} per iteration from starts with
#' \eqn{\beta = 0}, as poLCA (Linzer and Lewis 2011) does. Observations
#' with a missing covariate (`NA`, or `NaN` such as `log()` of a negative
#' number) are dropped, as in poLCA, with a message (class
#' `aspectr_message_dropped`); the fit records their number in
#' `dropped_covariate_na`. Covariates must be finite numbers, logicals,
#' characters or factors (a categorical one with at least two values), and
#' none may be one of the manifest variables. The covariates are scaled by
#' powers of 2 for the fit (exact: the coefficients are reported in the
#' covariates' own units), so values near the ends of the double range
#' are fitted like any others. The formula may be given first or, with
#' `data` named, anywhere (`lca(data = df, formula = f, k = 2)`). Missing
#' responses are handled as
#' without covariates. Every start runs to convergence (no staged
#' restarts); the threads go over the starts (the same result for any
#' `threads`).
#' @section Sampling weights:
#' With `weights`, `lca()` maximizes the weighted log-likelihood
#' \eqn{\sum_i w_i \log P(y_i)} (a pseudo-likelihood: Skinner 1989;
#' the weighted latent class analysis of Vermunt and Magidson 2007), by the
#' same algorithms with each response pattern counted by the sum of its
#' observations' weights. With whole-number weights the fit is the fit of
#' the data with each row repeated `weights` times (the same
#' log-likelihood, parameters, information criteria and goodness of fit).
#' `llik`, `AIC`, `BIC`, `Gsq` and `Chisq` refer to the weighted counts,
#' with the sum of the weights as the `N` of BIC: scale sampling weights to
#' sum to the sample size (as is usual) for these to refer to the sample.
#' `N` stays the number of observations used; `sum_weights` and
#' `sampling_weights` hold the weights' sum and the weights used. These
#' are sampling weights: the standard errors treat every row as one
#' sampled unit. For frequency weights (a row standing for several
#' identical observations) repeat the rows instead, which gives the same
#' estimates and the model-based standard errors.
#'
#' The standard errors of a weighted fit are the linearization (sandwich)
#' estimator of Binder (1983): \eqn{V = A^{-} B A^{-}}, where \eqn{A =
#' \sum_i w_i s_i s_i'} is the weighted empirical information (\eqn{s_i}
#' the score of observation \eqn{i} in the parameters of
#' [vcov.aspectr_lca()]; the information as poLCA computes it) and
#' \eqn{B} the covariance of the weighted score totals \eqn{z_c = \sum_{i
#' \in c} w_i s_i} between primary sampling units \eqn{c} within strata
#' \eqn{h}, \eqn{B = \sum_h n_h / (n_h - 1) \sum_{c \in h} (z_c - \bar
#' z_h)(z_c - \bar z_h)'} (with-replacement sampling of the PSUs, as the
#' \pkg{survey} package's default). Without `psu` each observation is its
#' own unit; every stratum needs two units or more. With all weights 1 and
#' no design this is \eqn{N / (N - 1)} times the unweighted covariance.
#' Weights pass to a latent class regression (the logit coefficients'
#' Newton steps and the class shares, the weighted mean prior) and through
#' [lca_rank()]; [anova()] refuses weighted fits (see
#' [anova.aspectr_lca()]). Data in shards take no weights.
#' @section Standard errors:
#' As in poLCA: the empirical information (the sum of the outer products of
#' the observations' score vectors) in the parameters \eqn{\beta} (for the
#' plain model, \eqn{\log(P_r / P_1)}) and \eqn{\log(p_{jrc} / p_{jr1})},
#' inverted (generalized inverse), then the delta method for the
#' probabilities and the class shares.
#' @seealso [lca_supervised()] for the class-conditional closed form when the
#'   classes are known; [predict.aspectr_lca()].
#' @examples
#' # Four binary items (poLCA-style codes), two latent classes
#' set.seed(1)
#' cls <- sample(1:2, 300, replace = TRUE)
#' items <- as.data.frame(lapply(1:4, function(j) ifelse(runif(300) < c(0.2, 0.8)[cls], "yes", "no")))
#' names(items) <- paste0("item", 1:4)
#' fit <- lca(items, 2, seed = 1)
#' fit
#' table(fit$predclass, cls)
#' @export
lca <- function(data, ...) {
  # lca(cbind(A, B) ~ 1, data = df, k) and lca(formula = f, data = df, k):
  # with `data` named, the formula is among `...`; the formula method is
  # called with the arguments as written (so the fit's call shows them)
  f_pos <- lca_formula_position(...)
  if (f_pos > 0) {
    mc <- match.call(expand.dots = FALSE)
    dots <- mc$...
    args <- c(list(formula = dots[[f_pos]]), if (!missing(data)) list(data = mc$data), dots[-f_pos])
    env <- new.env(parent = parent.frame())
    assign("lca", lca.formula, envir = env)
    return(eval(as.call(c(as.name("lca"), args)), env))
  }
  if (missing(data)) {
    abort_input("{.arg data} is missing: it must be a data frame of categorical variables (or a formula, with {.arg data} second).",
                "argument", arg = "data")
  }
  UseMethod("lca")
}

# The position in `...` of a formula given with `data` named: the argument
# named `formula`, else the first unnamed one when it is a formula; 0 if none.
lca_formula_position <- function(...) {
  n <- ...length()
  if (n == 0) return(0L)
  nm <- ...names()
  if (is.null(nm)) nm <- rep("", n)
  nm[is.na(nm)] <- ""
  pos <- match("formula", nm)
  if (is.na(pos)) {
    pos <- which(nm == "")[1]
    if (is.na(pos)) return(0L)
    # (the first unnamed argument would be k: forcing it is harmless)
    if (!inherits(...elt(pos), "formula")) return(0L)
  }
  pos
}

#' @rdname lca
#' @export
lca.default <- function(data, k, nrun = 10, max_iter = 1000, tol = 1e-8, seed = NULL,
                threads = NULL, na.rm = FALSE, verbose = FALSE, short_iter = NULL,
                short_keep = 1, callback = NULL, init = "random", se = TRUE, method = NULL,
                cluster = NULL, weights = NULL, psu = NULL, strata = NULL, group = NULL,
                invariance = "full", ...) {
  call <- match.call()
  check_dots_empty(...)
  if (!is.null(group)) {
    # multiple-group latent class analysis (R/lca-groups.R)
    if (!is.null(cluster) || !is.null(callback) || !identical(init, "random")) {
      abort_input("{.arg group} cannot be combined with {.arg {c('cluster', 'callback', 'init')[c(!is.null(cluster), !is.null(callback), !identical(init, 'random'))]}}.",
                  "argument", arg = "group")
    }
    return(lca_groups_fit(data, k, group, invariance, nrun, max_iter, tol, seed, threads, na.rm,
                          verbose, short_iter, check_whole(short_keep, "short_keep", min = 1), se, method,
                          weights, psu, strata, call))
  }
  if (!identical(invariance, "full")) {
    abort_input("{.arg invariance} is for multiple groups: give {.arg group} too.", "argument", arg = "invariance")
  }
  se <- check_flag(se, "se")
  check_required(data, "a data frame of categorical variables")
  na.rm <- check_flag(na.rm, "na.rm")
  short_keep <- check_whole(short_keep, "short_keep", min = 1)
  sharded <- inherits(data, "aspectr_shards")
  if (sharded && !(is.null(weights) && is.null(psu) && is.null(strata))) {
    given <- c("weights", "psu", "strata")[!c(is.null(weights), is.null(psu), is.null(strata))]
    abort_input(c("{.arg {given}} take{?s/} one value per row of a data frame, and {.arg data} is in shards.",
                  i = "Fit the data frame in memory to use a survey design."),
                "argument", arg = given[1])
  }
  design <- if (sharded || !is.data.frame(data)) NULL else lca_check_design(weights, psu, strata, nrow(data))
  cluster <- check_cluster(cluster, data, arg_x = "data")
  prep <- if (sharded) lca_shards_prepare(data, na.rm, cluster = cluster) else lca_prepare(data, na.rm)
  if (!is.null(design)) prep <- lca_weight_patterns(prep, lca_design_rows(design, prep$rows))
  fit <- lca_run(prep, call, k, nrun, max_iter, tol, seed, threads, verbose, short_iter, short_keep, callback,
                 init, se, method)
  # the rows of `data` the fit used (lca_distal() aligns outcomes to them)
  fit$rows <- prep$rows
  fit$data_nrow <- if (sharded) as.integer(data$dims[1]) else nrow(data)
  if (sharded) fit$shards <- length(data$sources)
  warn_unidentified(fit)
  fit
}

# A classed warning when the model has more free parameters than the data
# can identify: poLCA's resid.df (glance()'s df) below zero, counting the
# observations themselves (with sampling weights, whatever their scale)
warn_unidentified <- function(fit) {
  df <- lca_resid_df(fit, weighted = FALSE)
  if (fit$k > 1 && df < 0) {
    cli::cli_warn(c("{.fn lca}: the model has {fit$npar} free parameters, more than the data identify ({fit$npar + df}: the observations or the cells of the response table less 1, whichever is fewer); its estimates and standard errors are not unique.",
                    i = "Fit fewer classes (see {.fn lca_rank}), or merge the rare categories of variables with many."),
                  class = c("aspectr_warning_identification", "aspectr_warning"))
  }
  invisible(fit)
}

# expr with warn_unidentified()'s warning muffled (fitters that report the
# degrees of freedom themselves)
quiet_unidentified <- function(expr) {
  withCallingHandlers(expr, aspectr_warning_identification = function(w) invokeRestart("muffleWarning"))
}

# poLCA's resid.df: the observations (their total weight; `weighted =
# FALSE`: their number), or the cells of the response table less 1 when
# fewer, minus the free parameters
lca_resid_df <- function(fit, weighted = TRUE) {
  cells <- prod(vapply(fit$probs, ncol, numeric(1)))
  n <- if (weighted) fit$sum_weights %||% fit$N else fit$N
  min(n, cells - 1) - fit$npar
}

# lca() of prepared data (lca_prepare() or lca_shards_prepare())
lca_run <- function(prep, call, k, nrun, max_iter, tol, seed, threads, verbose, short_iter, short_keep,
                    callback, init, se, method, env = parent.frame()) {
  # (errors name the caller, lca())
  complete <- all(prep$data$idx >= 0L)
  if (is.null(method)) {
    # SQUAREM reached poLCA's optimum fastest on every data set of
    # bench/lca.R (coordinate descent: close on few items, 9x EM's time on
    # 12; plain EM: slow where the likelihood is flat)
    method <- "squarem"
  } else {
    method <- match_option(method, c("squarem", "em", "cd"), "method", call = env)
    if (method == "cd" && !complete) {
      abort_input(c("{.code method = \"cd\"} needs complete responses, and {.arg data} has missing ones.",
                    i = "Use {.code method = \"squarem\"} (the default) or {.code \"em\"}, or {.code na.rm = TRUE} to drop incomplete observations."),
                  "argument", arg = "method", call = env)
    }
  }
  # a SQUAREM iteration does the work of up to three EM iterations and
  # moves further: 20 of them rank the starts as well as 100 EM iterations
  # (see Restarts)
  short_iter <- if (is.null(short_iter)) (if (method == "squarem") 20 else 100) else
    check_whole(short_iter, "short_iter", min = 0, call = env)
  k <- check_whole(k, "k", min = 1, max = ncol(prep$data$idx),
                   what = "at most the number of distinct response patterns", call = env)
  ctl <- check_fit_controls(nrun, max_iter, tol, seed, threads, verbose, call = env)
  nrun <- ctl$nrun; max_iter <- ctl$max_iter; tol <- ctl$tol
  seed <- ctl$seed; threads <- ctl$threads; verbose <- ctl$verbose
  d <- prep$data
  start <- proc.time()[["elapsed"]]
  callback <- check_callback(callback, call = env)
  first <- plsa_init(init, "lca", d$dims, k, call = env)
  hook <- fit_hook(callback, verbose, "lca()", model = function(raw) {
    f <- lapply(seq_along(raw$factors), function(j) {
      `dimnames<-`(raw$factors[[j]], list(prep$levels[[j]], paste0("class_", seq_len(k))))
    })
    names(f) <- prep$vars
    f
  })
  stg <- list(short_iter = short_iter, short_keep = short_keep)
  if (k == 1) {
    # (one class: the product of the margins, one run)
    out <- fit_pipeline(NULL, NULL, NULL, hook, ctl, stg, "lca()", batch = function(inits) list(plsa_rank1(d, threads)),
                        call = env)
  } else if (is.null(callback)) {
    # every start in one call, as blocks, run in the core's threads and
    # staged there (progress messages between rounds of the staged
    # restarts); the starts come back as the pipeline's runs, ranked by
    # their divergence
    blocks <- with_seed(seed, random_start_blocks(d$dims, k, nrun))
    if (!is.null(first)) blocks <- first_start_block(blocks, first, k)
    batch <- function(blocks) {
      starts <- cpp_lca_fit(d$idx, d$val, d$dims, blocks$lambda, blocks$factors, max_iter, tol, threads,
                            short_iter, short_keep, verbose, hook, method)
      lapply(seq_along(starts$kl), function(s) {
        cols <- (s - 1) * k + seq_len(k)
        list(lambda = starts$lambda[, s], factors = lapply(starts$factors, function(m) m[, cols, drop = FALSE]),
             objective = starts$objective[[s]], initial = starts$initial[s], iterations = starts$iterations[s],
             converged = starts$converged[s], kl = starts$kl[s])
      })
    }
    out <- fit_pipeline(blocks, NULL, NULL, hook, ctl, stg, "lca()", value = function(r) r$kl, batch = batch,
                        call = env)
  } else {
    # with a callback the starts run one after another in R (the callback
    # sees every iteration), staged as in the core, by the same rule
    inits <- with_seed(seed, random_starts(d$dims, k, nrun))
    if (!is.null(first)) inits[[1]] <- first
    fit_one <- function(init, iters) {
      cpp_plsa_fit(d$idx, d$val, d$dims, init$lambda, init$factors, "kl", 1, 1, iters, tol,
                   threads, verbose, FALSE, hook, TRUE, method, init$squarem_bound %||% 1)
    }
    out <- fit_pipeline(inits, fit_one, resume_start, hook, ctl, stg, "lca()", call = env)
  }
  values <- out$values
  best <- out$best
  res <- out$res
  run_iterations <- vapply(out$runs, function(r) as.integer(r$iterations), integer(1))
  fit <- new_plsa(res, d, k = k, loss = "kl", q = NA_real_, tempering = 1,
                  run = best, values = values, time = proc.time()[["elapsed"]] - start,
                  threads = threads, seed = seed, call = call, prefix = "class_")
  fit$run_iterations <- run_iterations
  fit$method <- method
  fit <- finish_lca(fit, prep, supervised = FALSE, se = se)
  finish_progress(fit, verbose, "lca()", max_iter, tol)
}

#' Latent class model with known classes (naive Bayes)
#'
#' The supervised counterpart of [lca()]: with the class of every observation
#' given, the maximum-likelihood class shares and item-response
#' probabilities are the class frequencies and the within-class marginals
#' (Theorem 2 of Huang and Sidiropoulos applied within each class), i.e. a
#' naive Bayes classifier. Missing responses are left out as in [lca()].
#'
#' @param data A data frame of categorical variables.
#' @param class The known class of each row (a factor or anything
#'   [factor()] accepts), without missing values.
#' @param na.rm As in [lca()].
#' @return An `aspectr_lca` object (with `supervised = TRUE`) whose
#'   `posterior`/`predclass` are the naive-Bayes posteriors of the training
#'   data.
#' @examples
#' binned <- data.frame(lapply(iris[1:4], cut, 3))
#' nb <- lca_supervised(binned, iris$Species)
#' mean(levels(iris$Species)[nb$predclass] == iris$Species)
#' @export
lca_supervised <- function(data, class, na.rm = FALSE) {
  call <- match.call()
  check_required(data, "a data frame of categorical variables")
  check_required(class, "a vector of class labels, one per row of `data`")
  na.rm <- check_flag(na.rm, "na.rm")
  if (!is.data.frame(data)) {
    abort_input("{.arg data} must be a data frame of categorical variables, not {describe(data)}.",
                "type", arg = "data")
  }
  check_labels(class, "class")
  if (length(class) != nrow(data)) {
    abort_input("{.arg class} must give a class for every row of {.arg data} ({nrow(data)}), not {length(class)}.",
                "argument", arg = "class")
  }
  class <- droplevels(as.factor(class))
  prep <- lca_prepare(data, na.rm)
  cls <- class[prep$rows]
  k <- nlevels(cls)
  codes <- prep$codes
  lambda <- as.numeric(table(cls)) / length(cls)
  factors <- lapply(seq_along(prep$levels), function(j) {
    m <- vapply(levels(cls), function(z) {
      x <- codes[cls == z, j]
      tabulate(x[!is.na(x)], nbins = length(prep$levels[[j]]))
    }, numeric(length(prep$levels[[j]])))
    m <- matrix(m, ncol = k)
    s <- colSums(m)
    m[, s > 0] <- sweep(m[, s > 0, drop = FALSE], 2, s[s > 0], "/")
    m
  })
  d <- prep$data
  kl <- cpp_loss(d$idx, d$val, d$dims, lambda, factors, "kl", 1, 1L)
  res <- list(lambda = lambda, factors = factors, objective = numeric(0), initial = kl,
              value = kl, iterations = 0L, converged = TRUE, kl = kl)
  fit <- new_plsa(res, d, k = k, loss = "kl", q = NA_real_, tempering = 1, run = 1L,
                  values = kl, time = 0, threads = 1L, seed = NULL, call = call,
                  sort = FALSE, prefix = "class_")
  names(fit$lambda) <- colnames(fit$factors[[1]]) <- levels(cls)
  for (j in seq_along(fit$factors)) colnames(fit$factors[[j]]) <- levels(cls)
  finish_lca(fit, prep, supervised = TRUE)
}

# The starts of `nrun` calls of random_start() from one draw of uniforms
# (runif(n, a, b) is a + (b - a) * u, so the numbers are identical), as
# blocks: `lambda` k x nrun (start i: column i) and per mode a d x (k nrun)
# matrix (start i: columns (i - 1) k + 1:k), normalized in C++ with the
# sums of colSums() (cpp_start_blocks()).
random_start_blocks <- function(dims, k, nrun) {
  per <- k * (1 + sum(as.numeric(dims)))
  u <- matrix(stats::runif(nrun * per), per, nrun)
  cpp_start_blocks(u, as.integer(dims), as.integer(k))
}

# The same starts as a list of list(lambda, factors).
random_starts <- function(dims, k, nrun) {
  b <- random_start_blocks(dims, k, nrun)
  lapply(seq_len(nrun), function(i) {
    cols <- (i - 1) * k + seq_len(k)
    list(lambda = b$lambda[, i], factors = lapply(b$factors, function(m) m[, cols, drop = FALSE]))
  })
}

# `first` (a checked start: lambda and factors) as the first start of the blocks.
first_start_block <- function(blocks, first, k) {
  blocks$lambda[, 1] <- first$lambda
  for (n in seq_along(blocks$factors)) blocks$factors[[n]][, seq_len(k)] <- first$factors[[n]]
  blocks
}

# The variables' names: those given, and V and its position for a column
# without one (made unique)
lca_var_names <- function(vars, n) {
  if (is.null(vars)) vars <- character(n)
  unnamed <- is.na(vars) | !nzchar(vars)
  if (any(unnamed)) {
    named <- vars[!unnamed]
    new <- make.unique(c(named, paste0("V", which(unnamed))))
    vars[unnamed] <- new[length(named) + seq_len(sum(unnamed))]
  }
  vars
}

# Data frame -> pattern-count tensor with missing modes (index -1) (with
# `check = FALSE` also when a variable has fewer than 2 observed levels or
# no observation is kept: a shard of the data, see lca_shards_prepare()). The
# codes, levels and patterns come from one C++ pass (cpp_lca_patterns());
# character and logical columns become factors first, and a whole-number
# column whose values print alike (e.g. 1e15 and 1e15 + 1) is coded by
# factor(), as as_categorical() does.
lca_prepare <- function(data, na.rm, call = rlang::caller_env(), check = TRUE) {
  if (!is.data.frame(data)) {
    abort_input("{.arg data} must be a data frame of categorical variables, not {.cls {class(data)}}.",
                "type", arg = "data", call = call)
  }
  if (ncol(data) < 2) {
    abort_input("{.arg data} must have at least 2 variables, not {ncol(data)}.",
                "type", arg = "data", call = call)
  }
  vars <- lca_var_names(names(data), ncol(data))
  if (anyDuplicated(vars)) {
    # (predict() and the methods match the variables by name)
    dup <- unique(vars[duplicated(vars)])
    abort_input("{.arg data} has more than one column named {.var {dup}}: each variable needs a name of its own.",
                "value", arg = "data", call = call)
  }
  cols <- unclass(data)
  names(cols) <- NULL
  attr(cols, "row.names") <- NULL
  shaped <- vapply(cols, function(v) !is.null(dim(v)) || is.list(v), logical(1))
  if (any(shaped)) {
    # (a matrix or data frame column, or a list column: several values per row)
    bad <- vars[shaped]
    what <- class(cols[[which(shaped)[1]]])[1]
    abort_input(paste0("{.arg data} must have one categorical variable per column; ",
                       if (length(bad) == 1) "column {.var {bad}} holds" else "columns {.var {bad}} hold",
                       " a matrix, data frame or list (the first: {.cls {what}}); split ",
                       if (length(bad) == 1) "it" else "them", " into columns of their own."),
                "type", arg = "data", call = call)
  }
  direct <- vapply(cols, function(v) is.factor(v) || (is.numeric(v) && !is.object(v)), logical(1))
  for (j in which(direct)) {
    if (is.double(cols[[j]]) && any(is.infinite(cols[[j]]))) {
      abort_input("Variable {.var {vars[j]}} of {.arg data} must hold categories (whole-number codes, a factor or character), not infinite values; it has {sum(is.infinite(cols[[j]]))}.",
                  "value", arg = "data", call = call)
    }
  }
  for (j in which(!direct)) cols[[j]] <- as_categorical(cols[[j]], vars[j], call = call)
  res <- cpp_lca_patterns(cols, na.rm)
  if (res$bad > 0) {  # a continuous column: as_categorical()'s error
    j <- res$bad
    as_categorical(cols[[j]], vars[j], call = call)
  }
  levs <- lapply(seq_along(cols), function(j) {
    v <- cols[[j]]
    if (is.factor(v)) levels(v)[res$levels[[j]]] else as.character(res$levels[[j]])
  })
  # (only doubles can print alike)
  clash <- vapply(cols, is.double, logical(1))
  for (j in which(clash)) clash[j] <- anyDuplicated(levs[[j]]) > 0
  if (any(clash)) {
    for (j in which(clash)) cols[[j]] <- factor(cols[[j]])
    res <- cpp_lca_patterns(cols, na.rm)
    levs[clash] <- lapply(which(clash), function(j) levels(cols[[j]])[res$levels[[j]]])
  }
  nl <- res$nlev
  if (check && any(nl < 2)) {
    bad <- vars[nl < 2]
    abort_input(paste(if (length(bad) > 1) "Variables" else "Variable",
                      "{.var {bad}} of {.arg data} must have at least 2 observed levels, not {paste(nl[nl < 2], collapse = ', ')}."),
                "value", arg = "data", call = call)
  }
  if (check && !length(res$rows)) {
    abort_input("{.arg data} has no observation with {if (na.rm) 'all' else 'any'} responses observed.",
                "empty", arg = "data", call = call)
  }
  names(levs) <- vars
  codes <- res$codes
  colnames(codes) <- vars
  idx <- res$idx
  dimnames(idx) <- list(vars, NULL)
  data_list <- list(idx = idx, val = res$val, dims = nl, dimnames = levs, total = sum(res$val))
  list(data = data_list, codes = codes, rows = res$rows, levels = levs, vars = vars,
       complete = rowSums(is.na(codes)) == 0, row_pattern = res$row_pattern,
       complete_pattern = colSums(idx < 0L) == 0)
}

# The joint probabilities P(class, pattern) of response patterns (a
# patterns x k matrix; missing responses, NA, left out), and the class
# posteriors from them (a pattern of probability 0: the class shares), as
# cell_posterior() computes them.
pattern_joint <- function(lambda, factors, pats) {
  p <- matrix(lambda, nrow(pats), length(lambda), byrow = TRUE)
  for (n in seq_len(ncol(pats))) {
    ok <- !is.na(pats[, n])
    if (all(ok)) {
      p <- p * factors[[n]][pats[, n], , drop = FALSE]
    } else {
      p[ok, ] <- p[ok, , drop = FALSE] * factors[[n]][pats[ok, n], , drop = FALSE]
    }
  }
  p
}

joint_posterior <- function(p, s, lambda) {
  zero <- !(s > 0)
  if (any(zero)) {
    p[!zero, ] <- p[!zero, , drop = FALSE] / s[!zero]
    p[zero, ] <- matrix(lambda, sum(zero), length(lambda), byrow = TRUE)
  } else {
    p <- p / s
  }
  colnames(p) <- names(lambda)
  p
}

finish_lca <- function(fit, prep, supervised, se = TRUE) {
  k <- fit$k
  cls_names <- names(fit$lambda)
  probs <- lapply(seq_along(fit$factors), function(j) {
    m <- t(fit$factors[[j]])
    dimnames(m) <- list(cls_names, prep$levels[[j]])
    m
  })
  names(probs) <- prep$vars
  names(fit$factors) <- prep$vars
  # posteriors per response pattern, then per observation (the joint
  # probabilities once: cell_posterior()'s and cell_probability()'s numbers)
  pats <- t(prep$data$idx) + 1L
  pats[pats == 0L] <- NA_integer_
  joint <- pattern_joint(fit$lambda, fit$factors, pats)
  cell <- rowSums(joint)
  pat_post <- joint_posterior(joint, cell, fit$lambda)
  post <- pat_post[prep$row_pattern, , drop = FALSE]
  rownames(post) <- rownames(prep$codes)
  N <- nrow(prep$codes)
  dr <- prep$design
  # with sampling weights the (pseudo-)log-likelihood sums the patterns'
  # log-probabilities times their total weights
  ll <- if (is.null(dr)) as.numeric(logLik(fit)) else sum(prep$data$val * log(cell))
  n_ic <- if (is.null(dr)) N else sum(dr$w)
  npar <- (k - 1) + k * sum(lengths(prep$levels) - 1)
  # goodness of fit over the complete response patterns (poLCA's definition)
  gof <- lca_goodness_of_fit(fit, prep, cell)
  gsq <- gof[["Gsq"]]
  chisq <- gof[["Chisq"]]
  fit <- unclass(fit)  # (the assignments below then skip S3 dispatch)
  fit$probs <- probs
  fit$P <- fit$lambda
  fit$posterior <- post
  fit$predclass <- max.col(pat_post, ties.method = "first")[prep$row_pattern]
  fit$llik <- ll
  fit$logLik <- ll
  fit$npar <- npar
  fit$AIC <- -2 * ll + 2 * npar
  fit$BIC <- -2 * ll + log(n_ic) * npar
  fit$Gsq <- gsq
  fit$Chisq <- chisq
  fit$N <- N
  fit$Nobs <- sum(prep$complete)
  fit$variables <- prep$vars
  fit$supervised <- supervised
  fit$entropy <- lca_entropy(post)
  if (!is.null(dr)) fit <- lca_design_fields(fit, dr)
  if (se && !supervised && k > 1) {
    # without covariates every observation of a response pattern has the
    # same scores: the information is summed over patterns with their counts
    # (with sampling weights: their total weights, and each PSU's weighted
    # score total is its patterns' scores times its rows' weights)
    pat_codes <- pats
    design <- if (is.null(dr)) NULL else
      list(M = Matrix::sparseMatrix(i = dr$unit, j = prep$row_pattern, x = dr$w,
                                    dims = c(dr$n_units, nrow(pat_codes))), dr = dr)
    fit$se <- lca_standard_errors(pat_codes, matrix(1, nrow(pat_codes), 1), fit, post = pat_post,
                                  w = prep$data$val, design = design)
  }
  new_aspectr_fit("lca", fit, factors = fit$factors, weights = fit$P,
                  params = if (is.null(fit[["method"]])) list() else list(method = fit[["method"]]),
                  inherit = "plsa")
}

# Model probability of complete cells (index matrix, 1-based).
cell_probability <- function(object, index) {
  p <- rows_of(object$lambda, nrow(index))
  for (n in seq_len(ncol(index))) p <- p * object$factors[[n]][index[, n], , drop = FALSE]
  rowSums(p)
}

# The responses of `newdata` (a data frame) to the fit's `variables` as
# codes of their `levels` (one vector per variable; NA where missing), an
# observations x variables matrix; the columns `need` (the variables and
# any covariates) checked present, once each, and every level known
lca_newdata_codes <- function(newdata, variables, levels, need = variables, call = rlang::caller_env()) {
  miss <- setdiff(need, names(newdata))
  if (length(miss)) {
    abort_input("{.arg newdata} lacks the variable{?s} {.var {miss}}.", "newdata", arg = "newdata", call = call)
  }
  dup <- intersect(need, names(newdata)[duplicated(names(newdata))])
  if (length(dup)) {
    abort_input("{.arg newdata} has more than one column named {.var {dup}}: the variables of the fit are matched by name.",
                "newdata", arg = "newdata", call = call)
  }
  codes <- vapply(seq_along(variables), function(j) {
    v <- variables[j]
    x <- newdata[[v]]
    code <- match(as.character(x), levels[[j]])
    bad <- !is.na(x) & is.na(code)
    if (any(bad)) {
      abort_input("{.arg newdata}${v} has level{?s} {.val {unique(as.character(x[bad]))}} unknown to the fit.",
                  "newdata", arg = "newdata", call = call)
    }
    code
  }, integer(nrow(newdata)))
  matrix(codes, nrow(newdata), length(variables), dimnames = list(NULL, variables))
}

#' Class posteriors for new observations
#'
#' @param object An `aspectr_lca` fit.
#' @param newdata A data frame with the fitted variables (matched by name;
#'   levels matched by label). Missing responses are left out of the
#'   posterior. Omitted: the posteriors of the training observations.
#'   For a latent class regression `newdata` also needs the covariates
#'   (an observation with a missing covariate gets `NA`).
#' @param type `"posterior"` (one row per observation), `"class"` (the most
#'   probable class) or `"frequency"`: the expected frequency of each row's
#'   response pattern, `N` times its model probability (missing responses
#'   marginalized; a regression uses the mean prior), as poLCA's
#'   `poLCA.predcell()`; for a fit with sampling weights the sum of the
#'   weights takes the place of `N`. Posteriors do not depend on the
#'   weights other than through the fitted model.
#' @param ... Must be empty; an unknown argument is an error.
#' @return A matrix or an integer vector.
#' @examples
#' set.seed(1)
#' cls <- sample(1:2, 300, replace = TRUE)
#' items <- as.data.frame(lapply(1:4, function(j) ifelse(runif(300) < c(0.2, 0.8)[cls], "yes", "no")))
#' fit <- lca(items, 2, seed = 1)
#' predict(fit, items[1:3, ])
#' @export
predict.aspectr_lca <- function(object, newdata, type = c("posterior", "class", "frequency"), ...) {
  check_dots_empty(...)
  type <- match_option(type, c("posterior", "class", "frequency"), "type")
  if (type == "frequency" && (missing(newdata) || is.null(newdata))) {
    abort_input("{.arg newdata} is missing: {.code type = \"frequency\"} needs the response patterns to evaluate.",
                "argument", arg = "newdata")
  }
  if (missing(newdata) || is.null(newdata)) {
    post <- object$posterior
  } else {
    if (!is.data.frame(newdata)) {
      abort_input("{.arg newdata} must be a data frame with the fitted variables, not {describe(newdata)}.",
                  "newdata", arg = "newdata")
    }
    idx <- lca_newdata_codes(newdata, object$variables, lapply(object$variables, function(v) rownames(object$factors[[v]])),
                             need = c(object$variables, if (!is.null(object$coeff)) all.vars(object$terms)))
    if (type == "frequency") {
      p <- rows_of(object$lambda, nrow(idx))
      for (n in seq_len(ncol(idx))) {
        ok <- !is.na(idx[, n])
        p[ok, ] <- p[ok, , drop = FALSE] * object$factors[[n]][idx[ok, n], , drop = FALSE]
      }
      return(stats::setNames((object$sum_weights %||% object$N) * rowSums(p), rownames(newdata)))
    }
    if (is.null(object$coeff)) {
      post <- cell_posterior(object, idx)
    } else {
      # a regression: each observation's prior from its covariates
      uniform <- object
      uniform$lambda <- rep(1 / object$k, object$k)
      X <- stats::model.matrix(object$terms, stats::model.frame(object$terms, newdata, na.action = stats::na.pass))
      post <- cell_posterior(uniform, idx) * lcr_prior(X, object$coeff)
      post <- post / rowSums(post)
      colnames(post) <- names(object$P)
    }
    rownames(post) <- rownames(newdata)
  }
  if (type == "class") return(max.col(post, ties.method = "first"))
  post
}

#' @export
print.aspectr_lca <- function(x, digits = 3, ...) {
  check_dots_empty(...)
  digits <- check_whole(digits, "digits", min = 0, max = 15)
  cat(sprintf("<aspectr_lca> %s latent class model: %d classes, %d variables, N = %d%s\n",
              if (x$supervised) "supervised (naive Bayes)" else "unsupervised",
              x$k, length(x$variables), x$N,
              if (x$N > x$Nobs) sprintf(" (%d with missing responses)", x$N - x$Nobs) else ""))
  if (!is.null(x$sum_weights)) {
    cat(sprintf("sampling weights (sum %s); sandwich standard errors%s\n", format(signif(x$sum_weights, 6)),
                if (x$design$clustered || x$design$stratified)
                  sprintf(" over %d PSUs in %d strat%s", x$design$n_psu, x$design$n_strata,
                          if (x$design$n_strata == 1) "um" else "a") else ""))
  }
  cat(sprintf("log-likelihood %.4f, npar %d, AIC %.4f, BIC %.4f, G^2 %.4f, X^2 %.4f\n",
              x$llik, as.integer(x$npar), x$AIC, x$BIC, x$Gsq, x$Chisq))
  if (!x$supervised) {
    cat(sprintf("best of %d start%s; %d iterations, %s\n", length(x$run_values),
                if (length(x$run_values) == 1) "" else "s", x$iterations,
                if (x$iterations == 0) "closed form" else if (x$converged) "converged" else "not converged"))
  }
  cat("\nclass shares:\n")
  print(round(x$P, digits))
  cat("\nitem-response probabilities P(level | class):\n")
  for (v in names(x$probs)) {
    cat("$", v, "\n", sep = "")
    print(round(x$probs[[v]], digits))
  }
  if (!is.null(x$coeff)) print_lca_coefficients(x, digits)
  invisible(x)
}

# The logit coefficients of a latent class regression with standard
# errors, t values and p values (as poLCA prints them).
print_lca_coefficients <- function(x, digits = 3) {
  cat("\nclass membership regression (multinomial logit, class_1 the reference):\n")
  for (r in colnames(x$coeff)) {
    b <- x$coeff[, r]
    if (is.null(x[["se"]])) {  # fitted with se = FALSE
      tab <- cbind(Coefficient = b)
    } else {
      se <- x[["se"]]$coeff[, r]
      tab <- cbind(Coefficient = b, `Std. error` = se, `t value` = b / se,
                   `Pr(>|t|)` = 2 * stats::pt(abs(b / se), x$N - x$npar, lower.tail = FALSE))
    }
    cat(r, "/ class_1:\n")
    print(round(tab, digits))
  }
}

#' @export
summary.aspectr_lca <- function(object, ...) {
  check_dots_empty(...)
  structure(list(
    k = object$k, N = object$N, Nobs = object$Nobs, supervised = object$supervised,
    method = object[["method"]],
    fit = c(logLik = object$llik, npar = object$npar, AIC = object$AIC, BIC = object$BIC,
            Gsq = object$Gsq, Chisq = object$Chisq),
    classes = data.frame(class = names(object$P), share = unname(object$P),
                         predicted = tabulate(object$predclass, object$k) / object$N),
    probs = object$probs, runs = object$run_values
  ), class = "summary.aspectr_lca")
}

#' @export
print.summary.aspectr_lca <- function(x, ...) {
  check_dots_empty(...)
  cat(sprintf("Latent class model (%s), %d classes, N = %d (%d complete)\n\n",
              if (x$supervised) "supervised" else switch(x[["method"]] %||% "em", cd = "coordinate descent", squarem = "EM with SQUAREM", "EM"),
              x$k, x$N, x$Nobs))
  # (each statistic in its own notation: one huge X^2 would put them all in
  # scientific notation)
  print(noquote(vapply(x$fit, function(v) format(round(v, 4)), character(1))))
  cat("\n")
  cls <- x$classes
  cls$share <- round(cls$share, 4)
  cls$predicted <- round(cls$predicted, 4)
  print(cls, row.names = FALSE)
  if (length(x$runs) > 1) {
    cat(sprintf("\n%d starts; log-likelihood spread of the final starts: %s\n", length(x$runs),
                format(signif(diff(range(x$runs)), 3))))
  }
  invisible(x)
}

#' Plot item-response probabilities of a latent class model
#'
#' One panel per variable, its levels named on the vertical axis, with one
#' horizontal bar per class for each level: \eqn{P(level \mid class)}.
#' One legend, of the classes and their shares, below the panels. Long
#' level names are wrapped onto several lines.
#'
#' @param x An `aspectr_lca` fit.
#' @param ... Passed to [graphics::barplot()].
#' @return `x`, invisibly.
#' @examples
#' set.seed(1)
#' cls <- sample(1:2, 300, replace = TRUE)
#' items <- as.data.frame(lapply(1:4, function(j) ifelse(runif(300) < c(0.2, 0.8)[cls], "yes", "no")))
#' plot(lca(items, 2, seed = 1))
#' @export
plot.aspectr_lca <- function(x, ...) {
  J <- length(x$probs)
  k <- x$k
  nc <- if (J <= 3) J else if (J <= 4) 2 else if (J <= 9) 3 else 4
  nr <- ceiling(J / nc)
  cols <- grDevices::hcl.colors(max(k, 2), "Dark 3")[seq_len(k)]
  labs <- lapply(x$probs, function(m) wrap_levels(colnames(m)))
  op <- graphics::par(no.readonly = TRUE)
  on.exit(graphics::par(op), add = TRUE)
  # (a group of a multiple-group fit is named above the panels)
  top <- if (is.null(x[["main"]])) 0 else 1.6
  graphics::par(mfrow = c(nr, nc), oma = c(2.4, 0, top, 0), mgp = c(1.6, 0.5, 0), tcl = -0.3)
  cex_axis <- if (nr * nc > 6) 1.05 else 0.95
  # the left margin fits the longest (wrapped) level name, in lines
  width <- max(vapply(unlist(labs), function(l) max(graphics::strwidth(strsplit(l, "\n")[[1]], "inches")), 1))
  left <- min(width * cex_axis / graphics::par("csi") + 0.8, 12)
  graphics::par(mar = c(2.6, left, 1.6, 0.6))
  for (v in names(x$probs)) {
    m <- x$probs[[v]]  # classes x levels
    lv <- labs[[v]]
    graphics::barplot(m[rev(seq_len(k)), rev(seq_len(ncol(m))), drop = FALSE], beside = TRUE, horiz = TRUE,
                      names.arg = rev(lv), col = rev(cols), border = NA, xlim = c(0, 1), las = 1,
                      main = v, cex.names = cex_axis, cex.axis = cex_axis, cex.main = 1,
                      xlab = "", ...)
  }
  if (top > 0) graphics::mtext(x[["main"]], side = 3, outer = TRUE, line = 0.3, font = 2)
  # one legend below the panels, in the outer margin
  graphics::par(fig = c(0, 1, 0, 1), oma = c(0, 0, 0, 0), mar = c(0, 0, 0, 0), new = TRUE, cex = 1)
  graphics::plot.new()
  graphics::legend("bottom", legend = sprintf("class %d (%.2f)", seq_len(k), x$P), fill = cols, border = NA,
                   horiz = TRUE, bty = "n", cex = 0.95, xpd = NA, inset = c(0, 0.005))
  invisible(x)
}

#' @export
nobs.aspectr_lca <- function(object, ...) {
  check_dots_empty(...)
  object$N
}
