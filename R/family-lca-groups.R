# Multiple-group latent class analysis (Clogg and Goodman 1985): class
# shares per group, item-response probabilities equal across the groups
# (measurement invariance) or free per group.
#
# The fits reuse the core:
# * full invariance: the joint distribution of (group, responses) is a
#   latent class model with the group as one more indicator,
#   P(g, y) = sum_r P(r) P(g | r) prod_j P(y_j | r), a bijective
#   reparametrization of the multiple-group model with its group sizes
#   P(g) free (P(r | g) = P(r) P(g | r) / P(g)). Its maximum likelihood fit
#   gives the multiple-group fit, whose log-likelihood (of the responses
#   given the groups) is the joint one less sum_g n_g log(n_g / N).
# * no invariance: one latent class model per group (lca() of each group's
#   response patterns, over the levels of the whole data); the
#   log-likelihood is the sum, and the classes of the groups are matched to
#   those of the first group.
# The standard errors come from the empirical information of all free
# parameters of the grouped model at once (lcg_standard_errors()).

#' Multiple-group latent class analysis
#'
#' `lca(data, k, group = g)` fits a latent class model to observations in
#' groups (Clogg and Goodman 1985): every group has its own class shares,
#' and the item-response probabilities are equal across the groups
#' (measurement invariance: the classes mean the same in every group) or
#' free per group.
#' [lca_invariance()] fits the models and tests invariance by the
#' likelihood ratio, as \pkg{glca}'s `gofglca()` (Kim, Jeon, Chung and Park
#' 2023) does.
#'
#' The models, with \eqn{g} an observation's group, \eqn{P_{gr}} the share
#' of class \eqn{r} in group \eqn{g} and \eqn{p_{jrc}^{(g)}} the
#' probability of level \eqn{c} of item \eqn{j} in class \eqn{r}:
#' \deqn{P(y \mid g) = \sum_r P_{gr} \prod_j p_{j r y_j}^{(g)},}
#' with \eqn{p^{(g)}_j = p_j} for every group under `invariance = "full"`
#' and for none under `"none"`. The log-likelihood is that of the responses given the
#' groups (as \pkg{glca}'s); `npar` counts \eqn{G (k - 1)} class-share
#' parameters and the item parameters (\eqn{k \sum_j (L_j - 1)}, once under
#' full invariance, \eqn{G} times without).
#'
#' Fitting: under full invariance the model is the latent class model of
#' the responses with the group as one more item (a reparametrization of
#' it, with \eqn{P(g \mid r)} in place of \eqn{P(r \mid g)}), fitted by
#' [lca()]'s algorithms, staged restarts and threads; it is also the latent
#' class regression `lca(cbind(...) ~ group, data, k)` with the group's
#' indicators as covariates (the same maximum, without its Newton steps).
#' Without invariance each group is fitted by [lca()] (over the levels of
#' all the data), and the classes of every group are then matched to those
#' of the first group (the permutation with the closest item-response
#' probabilities): the likelihood does not depend on the labels, but
#' tables and plots are easier to read. In both the classes are finally
#' ordered by their share in the whole sample.
#'
#' Standard errors are computed as in [lca()] (the empirical information of
#' all free parameters, then the delta method), in the parameters of
#' `coef()` ([aspectr_lca_groups]): for every group the logits \eqn{\log(P_{gr} / P_{g1})} (named
#' `class_r|group`), then the item log-odds \eqn{\log(p_{jrc} / p_{jr1})}
#' (`variable[level]:class_r`, with `|group` without invariance). With
#' sampling weights they are the sandwich estimator of [lca()] (section
#' Sampling weights), with `psu` and `strata` as there; the weights enter
#' the likelihood as in [lca()] and are counted by group for the class
#' shares.
#'
#' @return An object of class `aspectr_lca_groups` with
#'   \describe{
#'   \item{k, groups, invariance, variables, group_var}{the number
#'     of classes, the group labels, the model (`"full"` or `"none"`), the
#'     items and the name of the group column (`NULL` for a vector);}
#'   \item{P}{class shares, groups x classes;}
#'   \item{probs}{per group, a list with per item a classes x levels matrix of
#'     \eqn{P(level \mid class, group)} (the same in every group under full
#'     invariance);}
#'   \item{group, posterior, predclass}{the group of every observation used,
#'     its class posteriors and most probable class;}
#'   \item{llik (also logLik), npar, AIC, BIC, Gsq, Chisq, df}{the
#'     log-likelihood, the number of free parameters, information criteria
#'     (the BIC's `N`: observations used, or the sum of the weights), and
#'     the goodness of fit over the complete response patterns within the
#'     groups, each group's expected counts its size times
#'     \eqn{P(y \mid g)}; `df` is \eqn{\sum_g (\min(n_g, C) - 1)} minus
#'     `npar`, with \eqn{C} the number of cells of the response table;}
#'   \item{N, Ng, Nobs, entropy}{observations used, per group, those without
#'     missing responses, and the relative entropy of the posteriors (as
#'     [lca()]'s);}
#'   \item{se}{standard errors: `P` (groups x classes), `probs` (shaped like
#'     `probs`) and `vcov_all` (see `vcov()` in [aspectr_lca_groups]);}
#'   \item{iterations, converged, run_values, time}{the fitting runs.}}
#' @references Clogg, C. C. and Goodman, L. A. (1985). Simultaneous latent
#'   structure analysis in several groups. *Sociological Methodology* 15,
#'   81-110.
#'
#'   Kim, Y., Jeon, S., Chung, H. and Park, B. (2023). glca: An R package
#'   for multiple-group latent class analysis. *Applied Psychological
#'   Measurement* 46, 439-441.
#' @seealso [lca_invariance()], [anova.aspectr_lca_groups()],
#'   [predict.aspectr_lca_groups()].
#' @examples
#' set.seed(1)
#' g <- rep(c("a", "b"), each = 300)
#' cls <- ifelse(runif(600) < ifelse(g == "a", 0.3, 0.6), 1, 2)
#' items <- as.data.frame(lapply(1:4, function(j) ifelse(runif(600) < c(0.2, 0.8)[cls], "yes", "no")))
#' names(items) <- paste0("item", 1:4)
#' fit <- lca(items, 2, group = g, seed = 1)
#' fit$P
#' free <- lca(items, 2, group = g, invariance = "none", seed = 1)
#' anova(fit, free)
#' @name lca_groups
NULL

#' @rdname lca
#' @section Groups:
#' With `group`, `lca()` fits a multiple-group latent class model: class
#' shares per group, item-response probabilities equal across the groups
#' or free per group (`invariance`); see [lca_groups] and
#' [lca_invariance()] for the tests of invariance.
#' @param group The group of every row of `data`, a vector
#'   (any type [factor()] accepts, no missing values) or the name of a
#'   column of `data` (which is then not an item). At least 2 groups, each
#'   with at least `k` observations used (and, with `invariance =
#'   "none"`, `k` distinct response patterns).
#' @param invariance With `group`: `"full"` (default: item-response
#'   probabilities equal across the groups) or `"none"` (free per group).
#' @name lca
NULL

# lca() with `group`: the checks, then the fit of the model asked for.
lca_groups_fit <- function(data, k, group, invariance, nrun, max_iter, tol, seed, threads,
                           na.rm, verbose, short_iter, short_keep, se, method, weights, psu, strata,
                           call, env = parent.frame()) {
  # (invariance first: the same refusal whatever holds the data)
  invariance <- match_option(invariance, c("full", "none"), "invariance", call = env)
  if (inherits(data, "aspectr_shards")) {
    abort_input("{.arg group} needs a data frame in memory, and {.arg data} is in shards.",
                "argument", arg = "group", call = env)
  }
  if (!is.data.frame(data)) {
    abort_input("{.arg data} must be a data frame of categorical variables, not {describe(data)}.",
                "type", arg = "data", call = env)
  }
  # the group: a column of data (then not an item) or a vector
  group_var <- NULL
  if (is.character(group) && length(group) == 1 && nrow(data) != 1) {
    if (!group %in% names(data)) {
      abort_input("{.arg group} must be a column of {.arg data} or one value per row, and {.arg data} has no column {.val {group}}.",
                  "argument", arg = "group", call = env)
    }
    group_var <- group
    group <- data[[group_var]]
    data <- data[setdiff(names(data), group_var)]
  }
  if (!is.atomic(group) || !is.null(dim(group)) || length(group) != nrow(data)) {
    abort_input("{.arg group} must be one group per row of {.arg data} ({nrow(data)}) or a column name, not {describe(group)}.",
                "argument", arg = "group", call = env)
  }
  if (anyNA(group)) {
    abort_input("{.arg group} must not have missing values; it has {sum(is.na(group))} (row {which(is.na(group))[1]} first).",
                "value", arg = "group", call = env)
  }
  se <- check_flag(se, "se", call = env)
  na.rm <- check_flag(na.rm, "na.rm", call = env)
  design <- lca_check_design(weights, psu, strata, nrow(data), call = env)
  prep <- lca_prepare(data, na.rm, call = env)
  if (!is.null(design)) prep <- lca_weight_patterns(prep, lca_design_rows(design, prep$rows, call = env))
  grp <- factor(group)[prep$rows]
  dropped_levels <- setdiff(levels(factor(group)), levels(droplevels(grp)))
  grp <- droplevels(grp)
  G <- nlevels(grp)
  if (G < 2) {
    abort_input("{.arg group} must have at least 2 groups among the observations used, not {G} ({.val {levels(grp)}}).",
                "value", arg = "group", call = env)
  }
  if (length(dropped_levels)) {
    cli::cli_inform("{.fn lca}: group{?s} {.val {dropped_levels}} ha{?s/ve} no observation used and {?is/are} left out.",
                    class = "aspectr_message_dropped")
  }
  k <- check_whole(k, "k", min = 2, max = nrow(prep$codes), what = "at least 2 for groups", call = env)
  ng <- tabulate(grp, G)
  if (any(ng < k)) {
    bad <- which(ng < k)[1]
    abort_input("Every group needs at least {.arg k} = {k} observations used; group {.val {levels(grp)[bad]}} of {.arg group} has {ng[bad]}.",
                "value", arg = "group", call = env)
  }
  cells <- lcg_cells(prep, grp)
  if (invariance == "none") {
    npat <- tabulate(cells$group, G)
    if (any(npat < k)) {
      bad <- which(npat < k)[1]
      abort_input(c("With free item-response probabilities every group needs at least {.arg k} = {k} distinct response patterns; group {.val {levels(grp)[bad]}} of {.arg group} has {npat[bad]}.",
                    i = "Use fewer classes, or {.code invariance = \"full\"}."),
                  "value", arg = "group", call = env)
    }
  }
  ctl <- check_fit_controls(nrun, max_iter, tol, seed, threads, verbose, call = env)
  start <- proc.time()[["elapsed"]]
  res <- lcg_fit_core(prep, cells, grp, k, invariance, ctl, short_iter, short_keep, method, call, env)
  fit <- lcg_result(res, prep, cells, grp, k, invariance, group_var, call, se,
                    proc.time()[["elapsed"]] - start)
  finish_progress(fit, ctl$verbose, "lca()", ctl$max_iter, ctl$tol)
}

# The (group, response pattern) cells of the observations used: for every
# cell its group, pattern, item codes (1-based, NA missing) and count (the
# sum of the weights with sampling weights); for every row its cell.
lcg_cells <- function(prep, grp) {
  G <- nlevels(grp)
  key <- (prep$row_pattern - 1) * G + as.integer(grp)
  ukey <- sort(unique(key))
  row_cell <- match(key, ukey)
  w <- if (is.null(prep$design)) rep(1, length(key)) else prep$design$w
  pat <- (ukey - 1) %/% G + 1
  codes <- t(prep$data$idx[, pat, drop = FALSE]) + 1L
  codes[codes == 0L] <- NA_integer_
  list(group = (ukey - 1) %% G + 1, pattern = pat, codes = codes,
       count = as.numeric(rowsum(w, row_cell, reorder = TRUE)), row_cell = row_cell,
       complete = prep$complete_pattern[pat])
}

# The prepared data of one group's cells, over the levels of all the data
# (a level unobserved in the group gets probability 0).
lcg_group_prep <- function(prep, cells, g) {
  sel <- which(cells$group == g)
  rows <- which(cells$group[cells$row_cell] == g)
  d <- prep$data
  list(data = list(idx = d$idx[, cells$pattern[sel], drop = FALSE], val = cells$count[sel], dims = d$dims,
                   dimnames = d$dimnames, total = sum(cells$count[sel])),
       codes = prep$codes[rows, , drop = FALSE], rows = rows, levels = prep$levels, vars = prep$vars,
       complete = prep$complete[rows], row_pattern = match(cells$row_cell[rows], sel),
       complete_pattern = cells$complete[sel],
       design = if (is.null(prep$design)) NULL else lcg_plain_design(prep$design$w[rows]))
}

# With sampling weights, the prepared data of lca()'s core runs need a
# design for their (weighted) log-likelihood; the standard errors are
# computed afterwards over all the groups (lcg_standard_errors()), so it
# is each row its own unit.
lcg_plain_design <- function(w) {
  list(w = w, unit = seq_along(w), unit_stratum = rep("1", length(w)), n_units = length(w),
       clustered = FALSE, stratified = FALSE)
}

# Full invariance or none by lca()'s core: list(P = G x k, rho = per group
# the items' levels x k matrices, iterations, converged, run_values).
lcg_fit_core <- function(prep, cells, grp, k, invariance, ctl, short_iter, short_keep,
                         method, call, env) {
  G <- nlevels(grp)
  fit_one <- function(p) {
    # (the goodness of fit of these inner fits is not reported: its
    # warnings are left to the grouped fit)
    withCallingHandlers(
      lca_run(p, call, k, ctl$nrun, ctl$max_iter, ctl$tol, ctl$seed, ctl$threads, FALSE, short_iter,
              short_keep, NULL, "random", FALSE, method, env = env),
      aspectr_warning_numeric = function(w) invokeRestart("muffleWarning"))
  }
  if (invariance == "full") {
    # the group as the first item of a latent class model of (group, y)
    d <- prep$data
    gp <- list(data = list(idx = rbind(as.integer(cells$group) - 1L, d$idx[, cells$pattern, drop = FALSE]),
                           val = cells$count, dims = c(G, d$dims), dimnames = c(list(levels(grp)), d$dimnames),
                           total = sum(cells$count)),
               codes = cbind(as.integer(grp), prep$codes), rows = prep$rows,
               levels = c(list(levels(grp)), prep$levels), vars = c(".group", prep$vars),
               complete = prep$complete, row_pattern = cells$row_cell, complete_pattern = cells$complete,
               design = if (is.null(prep$design)) NULL else lcg_plain_design(prep$design$w))
    f <- fit_one(gp)
    joint <- sweep(f$factors[[1]], 2, f$lambda, "*")  # P(g, r)
    P <- joint / rowSums(joint)
    items <- lapply(f$factors[-1], unname)
    rho <- rep(list(items), G)
    return(list(P = unname(P), rho = rho, iterations = f$iterations, converged = f$converged,
                run_values = f$run_values))
  }
  fits <- lapply(seq_len(G), function(g) fit_one(lcg_group_prep(prep, cells, g)))
  P <- t(vapply(fits, function(f) unname(f$lambda), numeric(k)))
  rho <- lapply(fits, function(f) lapply(f$factors, unname))
  # the classes of every group matched to those of the first
  for (g in seq_len(G)[-1]) {
    o <- lcg_match_classes(rho[[1]], rho[[g]])
    P[g, ] <- P[g, o]
    rho[[g]] <- lapply(rho[[g]], function(m) m[, o, drop = FALSE])
  }
  list(P = P, rho = rho, iterations = sum(vapply(fits, function(f) f$iterations, numeric(1))),
       converged = all(vapply(fits, function(f) isTRUE(f$converged), logical(1))),
       run_values = `colnames<-`(vapply(fits, function(f) f$run_values, numeric(ctl$nrun)), levels(grp)))
}

# The permutation of the classes of `b` (list of levels x k matrices) that
# brings its item-response probabilities closest (sum of squares) to
# those of `a`: every permutation up to 7 classes, else greedily.
lcg_match_classes <- function(a, b) {
  k <- ncol(a[[1]])
  D <- matrix(0, k, k)  # D[r, s]: class r of a against class s of b
  for (j in seq_along(a)) {
    for (r in seq_len(k)) D[r, ] <- D[r, ] + colSums((b[[j]] - a[[j]][, r])^2)
  }
  if (k <= 7) {
    perms <- lcg_permutations(k)
    cost <- apply(perms, 1, function(o) sum(D[cbind(seq_len(k), o)]))
    return(perms[which.min(cost), ])
  }
  o <- integer(k)
  for (step in seq_len(k)) {
    i <- which(D == min(D), arr.ind = TRUE)[1, ]
    o[i[1]] <- i[2]
    D[i[1], ] <- Inf
    D[, i[2]] <- Inf
  }
  o
}

lcg_permutations <- function(k) {
  if (k == 1) return(matrix(1L, 1, 1))
  p <- lcg_permutations(k - 1)
  do.call(rbind, lapply(seq_len(k), function(i) cbind(i, ifelse(p >= i, p + 1L, p))))
}

# E step over the cells: log P(y, r | g) per cell and class, the cells'
# log-probabilities and the posteriors.
lcg_estep <- function(cells, P, rho) {
  G <- nrow(P)
  k <- ncol(P)
  lp <- matrix(0, nrow(cells$codes), k)
  for (g in seq_len(G)) {
    sel <- which(cells$group == g)
    if (!length(sel)) next
    m <- matrix(log(P[g, ]), length(sel), k, byrow = TRUE)
    for (j in seq_along(rho[[g]])) {
      cj <- cells$codes[sel, j]
      ok <- !is.na(cj)
      m[ok, ] <- m[ok, , drop = FALSE] + log(rho[[g]][[j]][cj[ok], , drop = FALSE])
    }
    lp[sel, ] <- m
  }
  mx <- lp[cbind(seq_len(nrow(lp)), max.col(lp, ties.method = "first"))]
  mx[!is.finite(mx)] <- 0
  e <- exp(lp - mx)
  s <- rowSums(e)
  list(post = e / s, lcell = mx + log(s))
}

# The aspectr_lca_groups object of a fit (P, rho): classes ordered by their
# share of the whole sample, log-likelihood, posteriors, goodness of fit,
# standard errors.
lcg_result <- function(res, prep, cells, grp, k, invariance, group_var, call, se, time) {
  G <- nlevels(grp)
  gl <- levels(grp)
  w_g <- as.numeric(rowsum(cells$count, cells$group, reorder = TRUE))
  o <- order(colSums(res$P * w_g), decreasing = TRUE)
  cls <- paste0("class_", seq_len(k))
  P <- res$P[, o, drop = FALSE]
  dimnames(P) <- list(gl, cls)
  rho <- lapply(res$rho, function(items) {
    out <- lapply(seq_along(items), function(j) {
      m <- t(items[[j]][, o, drop = FALSE])
      dimnames(m) <- list(cls, prep$levels[[j]])
      m
    })
    names(out) <- prep$vars
    out
  })
  names(rho) <- gl
  e <- lcg_estep(cells, P, lapply(rho, function(items) lapply(items, t)))
  ll <- sum(cells$count * e$lcell)
  post <- e$post[cells$row_cell, , drop = FALSE]
  dimnames(post) <- list(rownames(prep$codes), cls)
  nl <- lengths(prep$levels)
  npar <- G * (k - 1) + k * sum(nl - 1) * (if (invariance == "none") G else 1)
  dr <- prep$design
  n_ic <- if (is.null(dr)) nrow(prep$codes) else sum(dr$w)
  # goodness of fit over the complete patterns, within the groups
  comp <- cells$complete
  gsq <- chisq <- NA_real_
  if (any(comp)) {
    nc <- as.numeric(rowsum(cells$count[comp], cells$group[comp], reorder = FALSE)[as.character(cells$group[comp]), 1])
    obs <- cells$count[comp]
    lexp <- log(nc) + e$lcell[comp]
    gsq <- 2 * sum(obs * (log(obs) - lexp))
    chisq <- sum(exp(2 * log(obs) - lexp)) - sum(obs)
    if (!is.finite(chisq)) chisq <- NA_real_
  } else {
    warn_numeric(c("{.field Gsq} and {.field Chisq} are {.val {NA}}: no observation has every response observed.",
                   i = "They are computed over the complete response patterns, as in poLCA."))
  }
  cells_table <- prod(as.numeric(nl))
  fit <- list(k = k, groups = gl, G = G, invariance = invariance,
              variables = prep$vars, group_var = group_var, P = P, probs = rho, group = grp,
              posterior = post, predclass = max.col(post, ties.method = "first"),
              llik = ll, logLik = ll, npar = npar, AIC = -2 * ll + 2 * npar,
              BIC = -2 * ll + log(n_ic) * npar, Gsq = gsq, Chisq = chisq,
              df = sum(pmin(tabulate(grp, G), cells_table) - 1) - npar,
              N = nrow(prep$codes), Ng = stats::setNames(tabulate(grp, G), gl), Nobs = sum(prep$complete),
              entropy = lca_entropy(post), iterations = res$iterations, converged = res$converged,
              run_values = res$run_values, time = time, call = call, levels = prep$levels)
  if (!is.null(dr)) fit <- lca_design_fields(fit, dr)
  class(fit) <- "aspectr_lca_groups"
  if (se) fit$se <- lcg_standard_errors(fit, cells, e$post, dr)
  fit
}

# Names of the free parameters of a grouped fit, in the order of coef().
lcg_param_names <- function(fit) {
  k <- fit$k
  cls <- paste0("class_", seq_len(k))
  b <- as.vector(outer(cls[-1], fit$groups, function(r, g) paste0(r, "|", g)))
  items <- unlist(lapply(fit$variables, function(v) {
    lv <- fit$levels[[match(v, fit$variables)]]
    one <- unlist(lapply(cls, function(r) paste0(v, "[", lv[-1], "]:", r)))
    if (fit$invariance == "none") unlist(lapply(fit$groups, function(g) paste0(one, "|", g))) else one
  }), use.names = FALSE)
  c(b, items)
}

# Standard errors of a grouped fit: the empirical information of all free
# parameters (per group the class logits; per item, class (and group
# without invariance) the log-odds of the levels against the first), summed over
# the cells with their counts; with sampling weights the sandwich of
# lca_standard_errors(). Then the delta method.
lcg_standard_errors <- function(fit, cells, post, dr) {
  k <- fit$k
  G <- fit$G
  nl <- lengths(fit$levels)
  free <- fit$invariance == "none"
  C <- nrow(cells$codes)
  gi <- cells$group
  blocks <- list()
  # class logits of every group
  for (g in seq_len(G)) {
    S <- matrix(0, C, k - 1)
    sel <- gi == g
    S[sel, ] <- post[sel, -1, drop = FALSE] - matrix(fit$P[g, -1], sum(sel), k - 1, byrow = TRUE)
    blocks[[length(blocks) + 1]] <- S
  }
  for (j in seq_along(nl)) {
    cj <- cells$codes[, j]
    ok <- !is.na(cj)
    for (gg in if (free) seq_len(G) else 1L) {
      sel <- if (free) ok & gi == gg else ok
      p <- fit$probs[[gg]][[j]]  # k x levels
      for (r in seq_len(k)) {
        # (free per group: only the cells of its group; equal: all)
        Y <- matrix(0, C, nl[j] - 1)
        Y[sel, ] <- outer(cj[sel], 2:nl[j], "==") - matrix(p[r, -1], sum(sel), nl[j] - 1, byrow = TRUE)
        blocks[[length(blocks) + 1]] <- post[, r] * Y
      }
    }
  }
  S <- do.call(cbind, blocks)
  info <- crossprod(S * sqrt(cells$count))
  V <- MASS_ginv(info)
  if (!is.null(dr)) {
    M <- Matrix::sparseMatrix(i = dr$unit, j = cells$row_cell, x = dr$w, dims = c(dr$n_units, C))
    V <- V %*% lca_meat(as.matrix(M %*% S), dr) %*% V
  }
  nms <- lcg_param_names(fit)
  dimnames(V) <- list(nms, nms)
  # class shares of every group by the delta method
  seP <- fit$P * 0
  for (g in seq_len(G)) {
    ix <- (g - 1) * (k - 1) + seq_len(k - 1)
    p <- fit$P[g, ]
    J <- -outer(p, p[-1])
    J[cbind(2:k, seq_len(k - 1))] <- J[cbind(2:k, seq_len(k - 1))] + p[-1]
    seP[g, ] <- sqrt(pmax(diag(J %*% V[ix, ix, drop = FALSE] %*% t(J)), 0))
  }
  pos <- G * (k - 1)
  se_probs <- lapply(fit$probs, function(items) lapply(items, function(m) m * 0))
  for (j in seq_along(nl)) {
    for (gg in if (free) seq_len(G) else 1L) {
      p <- fit$probs[[gg]][[j]]
      se <- p * 0
      for (r in seq_len(k)) {
        ix <- pos + seq_len(nl[j] - 1)
        pos <- pos + nl[j] - 1
        Jp <- -outer(p[r, ], p[r, -1])
        Jp[cbind(2:nl[j], seq_len(nl[j] - 1))] <- Jp[cbind(2:nl[j], seq_len(nl[j] - 1))] + p[r, -1]
        se[r, ] <- sqrt(pmax(diag(Jp %*% V[ix, ix, drop = FALSE] %*% t(Jp)), 0))
      }
      if (free) se_probs[[gg]][[j]] <- se else for (g in seq_len(G)) se_probs[[g]][[j]] <- se
    }
  }
  list(P = seP, probs = se_probs, vcov_all = V)
}
