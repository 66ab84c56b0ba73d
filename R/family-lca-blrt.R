# The parametric bootstrap likelihood-ratio test of k - 1 against k latent
# classes (McLachlan 1987; Nylund, Asparouhov and Muthen 2007).

#' Bootstrap likelihood-ratio test for the number of latent classes
#'
#' Tests \eqn{k - 1} against \eqn{k} latent classes by the parametric
#' bootstrap of the likelihood ratio (McLachlan 1987; the BLRT of Nylund,
#' Asparouhov and Muthen 2007), since the ratio is not \eqn{\chi^2}
#' distributed (see [anova.aspectr_lca()]). Both models are fitted to
#' `data`; then `B` data sets of the same size are drawn from the fitted
#' \eqn{(k - 1)}-class model (each observation's missing responses kept
#' missing), both models are fitted to each with `nrun` random starts
#' (staged, as in [lca()]), and the p-value is
#' \eqn{(1 + \#\{b: LR_b \ge LR\}) / (B + 1)}.
#'
#' A variable that a bootstrap data set happens to observe at one level
#' only is left out of both fits of that data set (it adds 0 to both
#' log-likelihoods). The draws run in parallel through `future.apply` when a
#' parallel plan is set (each with its own seed, drawn from `seed`, so the
#' result does not depend on the plan); within a fit `threads` go over the
#' starts. More starts (`nrun`) guard against a local maximum of the
#' \eqn{k}-class fit, which would make the test conservative.
#'
#' @param data A data frame of categorical variables, as for [lca()].
#' @param k The number of classes of the alternative, at least 2 (the null
#'   has `k - 1`).
#' @param B Number of bootstrap draws.
#' @param nrun Random starts of every fit (see [lca()]).
#' @param seed Seed of the draws and starts; `NULL` uses R's state.
#' @param threads Threads of every fit (over its starts). The default 1
#'   suits the small fits of a bootstrap, where starting threads costs more
#'   than it saves; run the draws in parallel with a future plan instead
#'   (e.g. `future::plan("multisession")`). `NULL` uses [default_threads()].
#' @param na.rm As in [lca()].
#' @param ... Further arguments to [lca()] (`max_iter`, `tol`, `method`,
#'   `short_iter`, `short_keep`); not sampling weights, for which the
#'   bootstrap of the pseudo-likelihood ratio is not this test.
#' @return An object of class `aspectr_blrt`: `statistic` (the likelihood
#'   ratio \eqn{2 (\ell_k - \ell_{k-1})}), `p.value`, `B`, `k`,
#'   `boot` (the bootstrap ratios), `df` (the difference of the numbers of
#'   parameters, for reference), `unconverged` (draws with a fit that
#'   reached `max_iter`), and the fits `null` and `alternative`;
#'   with `print()` and `tidy()` methods.
#' @references McLachlan, G. J. (1987). On bootstrapping the likelihood
#'   ratio test statistic for the number of components in a normal mixture.
#'   *Applied Statistics* 36, 318-324.
#'
#'   Nylund, K. L., Asparouhov, T. and Muthen, B. O. (2007). Deciding on the
#'   number of classes in latent class analysis and growth mixture
#'   modeling: a Monte Carlo simulation study. *Structural Equation
#'   Modeling* 14, 535-569.
#' @seealso [lca_rank()] for the information criteria over several `k`.
#' @examples
#' binned <- data.frame(lapply(iris[1:4], cut, 3))
#' lca_blrt(binned, k = 3, B = 19, nrun = 3, seed = 1)
#' @export
lca_blrt <- function(data, k, B = 100, nrun = 10, seed = NULL, threads = 1, na.rm = FALSE, ...) {
  call <- match.call()
  check_required(data, "a data frame of categorical variables")
  check_required(k, "the number of classes of the alternative (at least 2)")
  if (!is.data.frame(data)) {
    abort_input("{.arg data} must be a data frame of categorical variables, not {describe(data)}.",
                "type", arg = "data")
  }
  dots <- list(...)
  design_args <- intersect(names(dots), c("weights", "psu", "strata", "cluster", "init", "callback", "se",
                                          "group", "invariance"))
  if (length(design_args)) {
    abort_input("{.fn lca_blrt} does not take {.arg {design_args[1]}}: the bootstrap draws fit unweighted data with random starts.",
                "argument", arg = design_args[1])
  }
  k <- check_whole(k, "k", min = 2)
  B <- check_whole(B, "B", min = 1, max = max_runs)
  nrun <- check_whole(nrun, "nrun", max = max_runs)
  seed <- check_seed(seed)
  na.rm <- check_flag(na.rm, "na.rm")
  # three seeds per data set (the draw, the null's and the alternative's starts)
  seeds <- matrix(with_seed(seed, sample.int(.Machine$integer.max, 3 * (B + 1))), 3)
  start <- proc.time()[["elapsed"]]
  fit_pair <- function(d, s) {
    # (the alternative first: a k beyond what the data take is then named as given)
    f1 <- quiet_unidentified(lca(d, k, nrun = nrun, seed = s[3], threads = threads, na.rm = na.rm, se = FALSE, ...))
    f0 <- quiet_unidentified(lca(d, k - 1, nrun = nrun, seed = s[2], threads = threads, na.rm = na.rm, se = FALSE, ...))
    list(f0 = f0, f1 = f1)
  }
  obs <- fit_pair(data, seeds[, 1])
  null <- obs$f0
  prep <- lca_prepare(data, na.rm)
  mask <- is.na(prep$codes)
  lr_obs <- 2 * (obs$f1$llik - null$llik)
  draws <- map_runs(seq_len(B), function(b) {
    sim <- with_seed(seeds[1, b + 1], lca_simulate(null, mask))
    keep <- vapply(sim, function(v) length(unique(v[!is.na(v)])) >= 2, logical(1))
    sim <- sim[keep]
    # (fewer distinct response patterns than k classes: only on tiny data)
    if (length(sim) < 2 || (nrow(sim) < 1000 && k > nrow(unique(sim)))) return(c(0, 1))
    # (a draw's fit that stops at max_iter is counted, not reported)
    pair <- suppressMessages(fit_pair(sim, seeds[, b + 1]))
    c(2 * (pair$f1$llik - pair$f0$llik), pair$f0$converged && pair$f1$converged)
  })
  boot <- vapply(draws, `[`, numeric(1), 1)
  unconverged <- sum(vapply(draws, `[`, numeric(1), 2) == 0)
  structure(list(statistic = lr_obs, p.value = (1 + sum(boot >= lr_obs - 1e-8 * abs(lr_obs))) / (B + 1),
                 B = B, k = k, boot = boot, df = obs$f1$npar - null$npar, unconverged = unconverged, null = null,
                 alternative = obs$f1, time = proc.time()[["elapsed"]] - start, call = call),
            class = "aspectr_blrt")
}

# A data set drawn from a fitted latent class model (its class shares and
# item probabilities), one row per row of `mask` with the responses where
# `mask` is TRUE missing: a data frame of level codes.
lca_simulate <- function(fit, mask) {
  n <- nrow(mask)
  z <- sample.int(fit$k, n, replace = TRUE, prob = fit$P)
  out <- lapply(seq_along(fit$probs), function(j) {
    p <- fit$probs[[j]]  # classes x levels
    cum <- t(apply(p, 1, cumsum))
    u <- stats::runif(n)
    y <- 1L + as.integer(rowSums(u > cum[z, -ncol(p), drop = FALSE]))
    y[mask[, j]] <- NA_integer_
    y
  })
  names(out) <- names(fit$probs)
  as.data.frame(out)
}

#' @export
print.aspectr_blrt <- function(x, ...) {
  check_dots_empty(...)
  cat(sprintf("Bootstrap likelihood-ratio test: %d vs %d latent classes\n", x$k - 1L, x$k))
  cat(sprintf("LR = %.4f (%d more parameters), p = %s from %d parametric bootstrap draws\n",
              x$statistic, as.integer(x$df), format(signif(x$p.value, 4)), x$B))
  cat(sprintf("bootstrap LR: median %.3f, 95th percentile %.3f\n", stats::median(x$boot),
              stats::quantile(x$boot, 0.95, names = FALSE)))
  if (x$unconverged > 0) {
    cat(sprintf("%d draw%s reached max_iter before converging\n", x$unconverged, if (x$unconverged == 1) "" else "s"))
  }
  invisible(x)
}

#' @export
tidy.aspectr_blrt <- function(x, ...) {
  check_dots_empty(...)
  tibble::tibble(null_classes = x$k - 1L, classes = x$k, statistic = x$statistic, df = x$df,
                 p.value = x$p.value, B = x$B, method = "parametric bootstrap likelihood ratio")
}
