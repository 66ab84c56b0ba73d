# plsa() with missing cells, masks or weights (matrices in memory, and for
# KL shards()): KL by nmf()'s weighted coordinate descent, normalized as
# as_plsa() does;
# Tsallis and L2 by the weighted rules of solvers/plsa_weighted.h. The
# weights are nmf()'s (nmf_weighted_data(), R/nmf-weights.R).

# N-way data (arrays of 3 or more modes, sparse tensors): KL by ntf()'s
# weighted KL coordinate descent, normalized the same way; Tsallis and L2 by
# the same rules over N modes (the weights ntf_weighted_data()'s, R/ntf-weights.R).

# Whether x is fitted as N-way data (the weights of ntf()): an array of 3 or
# more modes or a sparse tensor
plsa_weighted_nway <- function(x) {
  inherits(x, "aspectr_tensor") || (is.array(x) && length(dim(x)) > 2)
}

# The checks every loss shares, then the fit of the loss.
plsa_weighted <- function(x, k, loss, method, q, normalize, init, nrun, max_iter, tol, seed, threads, verbose,
                          short_iter, short_keep, given, wargs, call, env = rlang::caller_env(), cluster = NULL) {
  # (N-way shards: the weighted KL fit is ntf()'s coordinate descent
  # normalized, which ntf() runs on shards)
  nway <- if (inherits(x, "aspectr_shards")) length(x$dims) > 2 else plsa_weighted_nway(x)
  wargs <- plsa_mode_weights(x, wargs, nway, env)
  bad <- names(given)[unlist(given)]
  if (length(bad)) {
    arg <- bad[1]
    abort_input("{.arg {arg}} cannot be used with missing cells, masks or weights in {.fn plsa}.",
                "argument", arg = arg, call = env)
  }
  normalize <- check_flag(normalize, "normalize", call = env)
  if (!normalize && loss != "l2") {
    abort_input("{.arg normalize} = FALSE applies to {.code loss = \"l2\"} only; KL and Tsallis fits are probability models of {.code x / sum(x)}.",
                "argument", arg = "normalize", call = env)
  }
  if (loss == "kl") {
    # (shards: nmf()'s weighted fit of shards, on `cluster` when given)
    # (cluster: checked by plsa())
    if (inherits(x, "aspectr_shards")) wargs$cluster <- cluster
    return(plsa_weighted_kl(x, k, method, init, nrun, max_iter, tol, seed, threads, verbose, wargs, call, env,
                            nway, stg = list(short_iter = short_iter, short_keep = short_keep)))
  }
  # (Tsallis and L2: in memory or on the shards where they are)
  plsa_weighted_fit(x, k, loss, method, q, normalize, init, nrun, max_iter, tol, seed, threads, verbose,
                    wargs, call, env, nway, cluster, stg = list(short_iter = short_iter, short_keep = short_keep))
}

# The weights per index of each mode: `mode_weights` (a list, one entry per
# mode), or row_weights and col_weights, the weights of the first two modes
# (not both forms). -> the weighting arguments of nmf() (matrices:
# mask, observed, weights, row_weights, col_weights) or of ntf() (N-way:
# mask, observed, weights, mode_weights)
plsa_mode_weights <- function(x, wargs, nway, call) {
  mw <- wargs$mode_weights
  wargs$mode_weights <- NULL
  rc <- c("row_weights", "col_weights")
  if (!is.null(mw) && !all(vapply(wargs[rc], is.null, logical(1)))) {
    arg <- rc[!vapply(wargs[rc], is.null, logical(1))][1]
    abort_input("{.arg mode_weights} and {.arg {arg}} cannot both be given: {.arg mode_weights} holds the weights of every mode.",
                "argument", arg = "mode_weights", call = call)
  }
  shards <- inherits(x, "aspectr_shards")
  if (shards && length(x$dims) == 2) {
    if (!is.null(mw)) {
      # (checked as in memory)
      ntf_mode_weights(mw, as.integer(x$dims), call)
      wargs["row_weights"] <- list(mw[[1]]); wargs["col_weights"] <- list(mw[[2]])
    }
    return(wargs)
  }
  # (N-way shards: ntf()'s weights, as N-way data in memory)
  nway <- nway || shards
  dims <- as.integer(if (shards) x$dims else dim(x))
  if (!nway) {
    if (!is.null(mw)) {
      if (length(dims) != 2) return(wargs)  # (x itself is refused by the fit)
      ntf_mode_weights(mw, dims, call)
      wargs["row_weights"] <- list(mw[[1]]); wargs["col_weights"] <- list(mw[[2]])
    }
    return(wargs)
  }
  if (is.null(mw) && !all(vapply(wargs[rc], is.null, logical(1)))) {
    mw <- vector("list", length(dims))
    what <- c("index of the first mode", "index of the second mode")
    for (a in 1:2) {
      if (!is.null(wargs[[rc[a]]])) mw[[a]] <- nmf_weight_vector(wargs[[rc[a]]], dims[a], rc[a], what[a], call)
    }
  }
  wargs[rc] <- NULL
  wargs["mode_weights"] <- list(mw)
  wargs
}

# KL: nmf()'s (N-way: ntf()'s) weighted KL coordinate descent, normalized
# as as_plsa() does; the value is D(G_o || P_o) over the cells that count
# (both shares normalized over them): with T = sum x~, the weighted
# divergence D and S = sum omega v, (D + T - S) / T + log(S / T)
plsa_weighted_kl <- function(x, k, method, init, nrun, max_iter, tol, seed, threads, verbose, wargs, call, env,
                             nway = FALSE, stg = list(short_iter = 0, short_keep = NULL)) {
  if (!is.null(method) && !identical(method, "cd")) {
    abort_input("{.arg method} must be {.val cd} (or {.code NULL}) with missing cells, masks or weights, not {describe(method)}.",
                "argument", arg = "method", call = env)
  }
  if (!(identical(init, "random") || is.list(init))) {
    abort_input("{.arg init} must be {.val random} or a list of starting factors with missing cells, masks or weights, not {describe(init)}.",
                "argument", arg = "init", call = env)
  }
  if (nway) return(plsa_weighted_kl_nway(x, k, init, nrun, max_iter, tol, seed, threads, verbose, wargs, call, env,
                                         stg))
  nmf_init <- "random"
  dims <- if (inherits(x, "aspectr_shards")) x$dims else dim(x)
  if (is.list(init) && length(dims) == 2) {
    # a start (or a fit to start from) checked as plsa()'s, then its pLSA
    # factors (documents, terms, weights) as W = P(d|z) diag(lambda),
    # H = P(w|z)'
    k <- plsa_weighted_k(k, dims, NA_real_, env)
    first <- plsa_init(init, "plsa", dims, k, call = env)
    # (in the data's units: the model's total that of x, so that the first
    # coordinate descent starts at the start's fit, not a scaled one)
    tot <- if (inherits(x, "aspectr_shards")) shard_total(x) else sum(x, na.rm = TRUE)
    if (!(is.finite(tot) && tot > 0)) tot <- 1
    nmf_init <- list(W = sweep(as.matrix(first$factors[[1]]), 2, tot * as.numeric(first$lambda), "*"),
                     H = t(as.matrix(first$factors[[2]])))
  }
  fit <- plsa_inner_fit(do.call(nmf, c(list(x, k, loss = "kl", method = "cd", init = nmf_init, nrun = nrun,
                                            max_iter = max_iter, tol = tol, seed = seed, threads = threads,
                                            verbose = verbose), stg, wargs)), call)
  out <- as_plsa(fit)
  tot <- fit$total; D <- fit$divergence; S <- fit$weighting$mass
  out$value <- out$kl <- (D + tot - S) / tot + log(S / tot)
  # the trace: coordinate descent rescales the model to S = T every
  # iteration, so each value is D / T
  out$objective <- fit$objective / tot
  out$run <- fit$run
  out$run_values <- fit$run_values / tot
  out$initial <- NA_real_
  out$method <- "cd"
  out$weighting <- fit$weighting
  out$call <- call
  finish_progress(out, FALSE, "plsa()", max_iter, tol)
}

# The fit of nmf() or ntf() in a plsa() call: its message that it did not
# converge held back (plsa() says it, finish_progress()), and its errors
# naming the user's call, `call`, not the inner fitter's
plsa_inner_fit <- function(expr, call) {
  withCallingHandlers(with_error_call(expr, call),
                      aspectr_message_not_converged = function(m) invokeRestart("muffleMessage"))
}

# The N-way KL fit: ntf()'s weighted KL coordinate descent (its factors'
# columns sum to 1, the components' masses in its weights), as the aspect
# model: lambda the weights on the simplex (a component of no mass: weight 0
# and uniform columns); the value and trace as the matrix's
plsa_weighted_kl_nway <- function(x, k, init, nrun, max_iter, tol, seed, threads, verbose, wargs, call, env,
                                  stg = list(short_iter = 0, short_keep = NULL)) {
  sharded <- inherits(x, "aspectr_shards")
  if (sharded) {
    # the weights' parts (ntf() gives each shard those of its cells; the
    # model's weighted mass needs only these)
    wd <- ntf_weight_cells(x$dims, NULL, wargs$mask, wargs$observed, wargs$weights, wargs$mode_weights, env)
    wd$dims <- x$dims
    # the cells that count (positive weighted value), as in memory: their
    # number bounds k, their summary is the fit's
    summ <- plsa_shards_counted_summary(x, wd, wargs$cluster, call)
    if (!(summ$cells > 0)) {
      abort_nothing_weighted(call = env)
    }
    k <- plsa_weighted_k(k, x$dims, summ$cells, env)
    # (as in memory: whether the values are counts, without the warning of
    # a likelihood)
    count_data <- shard_count_data(x, "plsa", likelihood = FALSE, call = env)
  } else {
    wd <- do.call(ntf_weighted_data, c(list(x), wargs, list(call = env)))
    if (!length(wd$tv)) {
      abort_nothing_weighted(call = env)
    }
    k <- plsa_weighted_k(k, wd$dims, length(wd$tv), env)
    count_data <- check_count_data(x, wd$xv, "plsa", likelihood = FALSE, call = env)
  }
  ctl <- check_fit_controls(nrun, max_iter, tol, seed, threads, verbose, call = env)
  first <- plsa_init(init, "plsa", wd$dims, k, call = env)
  ntf_init <- "random"
  if (!is.null(first)) {
    ntf_init <- lapply(first$factors, as.matrix)
    ntf_init[[1]] <- sweep(ntf_init[[1]], 2, as.numeric(first$lambda), "*")
  }
  fit <- plsa_inner_fit(do.call(ntf, c(list(x, k, loss = "kl", method = "cd", init = ntf_init,
                                            nrun = ctl$nrun, max_iter = ctl$max_iter, tol = ctl$tol,
                                            seed = ctl$seed, threads = ctl$threads, verbose = ctl$verbose),
                                       stg, wargs)), call)
  w <- as.numeric(fit$weights)
  factors <- lapply(fit$factors, function(f) {
    f <- unname(as.matrix(f))
    empty <- !(colSums(f) > 0)
    if (any(empty)) f[, empty] <- 1 / nrow(f)
    f
  })
  lambda <- w / sum(w)
  tot <- fit$total
  S <- plsa_weighted_mass(wd, w, factors)
  kl <- (fit$value + tot - S) / tot + log(S / tot)
  res <- list(lambda = lambda, factors = factors, objective = fit$objective / tot, initial = NA_real_,
              iterations = fit$iterations, converged = fit$converged, stopped = fit$stopped, kl = kl)
  data <- if (sharded) list(dims = fit$dims, dimnames = fit$dimnames, total = tot, nnz = fit$nnz) else
    list(dims = wd$dims, dimnames = wd$dimnames, total = tot, idx = wd$idx, val = wd$xv)
  out <- new_plsa(res, data, k = k, loss = "kl", q = NA_real_, tempering = 1, run = fit$run,
                  values = fit$run_values / tot, time = fit$time,
                  threads = ctl$threads, seed = ctl$seed, call = call,
                  summary = if (sharded) summ$summary)
  out$value <- kl
  out$weighting <- c(fit$weighting, list(mass = S))
  finish_progress(plsa_fields(out, TRUE, "cd", count_data), FALSE, "plsa()", ctl$max_iter, ctl$tol)
}

# The summary of the cells of shards `x` that an N-way weighted fit counts
# (positive weighted value under ntf_weight_cells()'s `wd`), as new_plsa()
# makes that of the in-memory fit's cells, and their number: each shard's
# part made where it is read, by the weighted q-EM's "wq_set" without
# keeping its cells (files: on `cluster`'s workers, which may hold files
# the session cannot reach; shards in memory: here, not sent to them)
plsa_shards_counted_summary <- function(x, wd, cluster, call) {
  parts <- ntf_shard_weight_parts(x, wd)
  objects <- all(vapply(unclass(x)$sources, function(s) identical(s$kind, "object"), logical(1)))
  eng <- shard_engine(x, if (!objects) cluster, 1L, call)
  on.exit(eng$drop(), add = TRUE)
  eng$load()
  summ <- vector("list", length(x$rows))
  for (a in eng$each("wq_set", function(g) list(ids = g, w = parts[g], keep = FALSE))) summ[a$ids] <- a$summ
  list(summary = wqem_summary(summ), cells = sum(vapply(summ, `[[`, numeric(1), "cells")))
}

# k of a weighted fit: as without weights, at most the smaller dimension
# of a matrix (a 2-way sparse tensor too) and at most the number of
# non-zeros (here: of positive weight) of N-way data
plsa_weighted_k <- function(k, dims, nnz, call) {
  if (length(dims) == 2) {
    return(check_whole(k, "k", min = 1, max = min(dims), what = "at most the smaller dimension of `x`", call = call))
  }
  check_whole(k, "k", min = 1, max = nnz, what = "at most the number of non-zeros of `x` of positive weight",
              call = call)
}

# sum_c omega_c m_c of the model m = sum_r w_r prod_n F_n(i_n, r) under the
# weights of ntf_weighted_data() (d times the weighted margins' product, plus
# the deviations at their cells)
plsa_weighted_mass <- function(wd, w, factors) {
  N <- length(factors)
  marg <- Reduce(`*`, lapply(seq_len(N), function(n) colSums(wd$v[[n]] * factors[[n]])))
  S <- wd$d * sum(w * marg)
  if (length(wd$ev)) {
    e <- t(wd$eidx) + 1L
    p <- matrix(w, nrow(e), length(w), byrow = TRUE)
    u <- wd$ev
    for (n in seq_len(N)) {
      p <- p * factors[[n]][e[, n], , drop = FALSE]
      u <- u * wd$v[[n]][e[, n]]
    }
    S <- S + sum(u * rowSums(p))
  }
  S
}

# The data of a weighted Tsallis or L2 fit: the cells where omega x > 0
# (idx: N x nnz, 0-based; x, omega there), the weights' parts for the C++
# rules (d, v: one weight vector per mode, eidx: N x |E| 0-based cells of
# the deviations ev) and G = x / T: Tsallis T = sum omega x (so that sum
# omega g = 1), L2 T = sum x over those cells (the counted cells' total, so
# that the fit does not change when every weight is multiplied by a
# constant). Matrices take nmf()'s weights (nmf_weighted_data()), N-way
# data ntf()'s (ntf_weighted_data()).
plsa_weighted_data <- function(x, loss, wargs, call, nway = FALSE) {
  empty <- function() {
    abort_nothing_weighted(call = call)
  }
  if (nway) {
    wd <- do.call(ntf_weighted_data, c(list(x), wargs, list(call = call)))
    if (!length(wd$tv)) empty()
    xv <- wd$xv
    om <- wd$omega
    T <- if (loss == "tsallis") sum(om * xv) else sum(xv)
    N <- length(wd$dims)
    return(list(wd = wd, idx = wd$idx, x = xv, g = xv / T, omega = om, T = T, dims = wd$dims,
                dimnames = wd$dimnames %||% vector("list", N), d = wd$d, v = wd$v, eidx = wd$eidx, ev = wd$ev))
  }
  wd <- do.call(nmf_weighted_data, c(list(x), wargs, list(call = call)))
  m <- nrow(wd$x0)
  ij <- if (is.matrix(wd$xt)) which(wd$xt > 0, arr.ind = TRUE) else {
    s <- Matrix::summary(wd$xt)
    s <- s[s$x > 0, , drop = FALSE]
    cbind(as.integer(s$i), as.integer(s$j))
  }
  if (!nrow(ij)) empty()
  xv <- as.numeric(wd$x0[ij])
  # omega at those cells: r_i c_j (d + delta_ij)
  pos <- match((ij[, 2] - 1) * m + ij[, 1], wd$ej * as.numeric(m) + wd$ei + 1)
  f <- ifelse(is.na(pos), wd$d, wd$d + wd$ev[pos])
  om <- wd$r[ij[, 1]] * wd$c[ij[, 2]] * f
  T <- if (loss == "tsallis") sum(om * xv) else sum(xv)
  eidx <- rbind(as.integer(wd$ei), as.integer(wd$ej))
  list(wd = wd, idx = rbind(ij[, 1] - 1L, ij[, 2] - 1L), x = xv, g = xv / T, omega = om, T = T,
       dims = as.integer(dim(wd$x0)), dimnames = dimnames(wd$x0) %||% list(NULL, NULL),
       d = wd$d, v = list(wd$r, wd$c), eidx = eidx, ev = wd$ev)
}

# Tsallis and L2 with missing cells, masks or weights: the weighted q-EM and
# block updates of solvers/plsa_weighted.h, written against pieces
# (solvers/plsa_weighted_pieces.h, plsa_weighted_l2_pieces.h) and run
# where the cells are: by the source of the data, wq_memory_source() (one
# piece in this process) or wq_shard_source() (shards() where they are
# held, R/family-plsa-weights-shards.R); the checks, starts, staged
# restarts and result are one sequence. The objective: for Tsallis, the
# divergence D_q(G_o || P_o) of the counted cells' share of the data from
# the model's share of them, both normalized over them with their weights;
# for L2, 1/2 sum omega (g - p)^2 with P on the simplex.
plsa_weighted_fit <- function(x, k, loss, method, q, normalize, init, nrun, max_iter, tol, seed, threads, verbose,
                              wargs, call, env, nway = FALSE, cluster = NULL,
                              stg = list(short_iter = 0, short_keep = NULL)) {
  sharded <- inherits(x, "aspectr_shards")
  # (the method asked for, as in memory whatever holds the data)
  if (!is.null(method)) method <- match_option(method, plsa_methods(loss, 1), "method", call = env)
  if (sharded) {
    check_tensor_shards(x, "plsa", env)
    # (the capability table's refusals name the argument given)
    given <- names(wargs)[!vapply(wargs, is.null, logical(1))][1]
    method <- check_shard_capability("plsa", loss, method, options = list(tensor = length(x$dims) > 2, mask = TRUE),
                                     default = plsa_methods(loss, 1), call = env,
                                     option_args = if (!is.na(given)) c(mask = given))
  } else {
    method <- method %||% plsa_methods(loss, 1)[1]
  }
  q <- check_number(q, "q", 0, 1, lower_open = TRUE, upper_open = TRUE, call = env)
  ctl <- check_fit_controls(nrun, max_iter, tol, seed, threads, verbose, call = env)
  stg <- check_staging(stg$short_iter, stg$short_keep, ctl$nrun, call = env)
  src <- if (sharded) wq_shard_source(x, loss, q, normalize, method, wargs, ctl, cluster, call, env) else
    wq_memory_source(x, loss, q, normalize, method, wargs, ctl, nway, env)
  on.exit(src$close(), add = TRUE)
  k <- plsa_weighted_k(k, src$dims, src$cells, env)
  count_data <- src$count_data()
  first <- plsa_init(init, "plsa", src$dims, k, call = env)
  start <- proc.time()[["elapsed"]]
  inits <- with_seed(ctl$seed, lapply(seq_len(ctl$nrun), function(i) random_start(src$dims, k)))
  if (!is.null(first)) inits[[1]] <- first
  # (the staged restarts of short_iter and short_keep, as without weights;
  # shards: one start at a time on their session)
  out <- fit_pipeline(inits, src$fit, resume_start, src$hook, ctl, stg, "plsa()", sequential = sharded, call = env)
  res <- src$finish(out$res)
  src$close()
  # (counts: the model times the counted cells' total; Tsallis: scaled so
  # that its weighted total on them is the data's)
  total <- if (loss == "tsallis") src$total / res$mass else src$total
  fit <- new_plsa(res, c(list(dims = src$dims, dimnames = src$dimnames, total = total, nnz = src$cells), src$cell_data),
                  k = k, loss = loss, q = if (loss == "tsallis") q else NA_real_, tempering = 1, run = out$best,
                  values = out$values, time = proc.time()[["elapsed"]] - start, threads = ctl$threads, seed = ctl$seed,
                  call = call, summary = src$summary)
  # (nmf()'s record of the weights for a matrix, ntf()'s for N-way data,
  # whose cells left out augment() lists)
  wr <- src$weights
  fit$weighting <- if (src$nway) ntf_weighting(wr) else
    list(type = wr$type, base = wr$d, left_out = wr$left_out,
         observed = if (wr$d == 0) nmf_observed_pattern(wr, src$dims, src$dimnames))
  fit <- plsa_fields(fit, normalize, method, count_data)
  if (sharded) fit$shards <- length(x$sources)
  finish_progress(fit, ctl$verbose, "plsa()", ctl$max_iter, ctl$tol)
}

# The data of a weighted Tsallis or L2 fit in memory (plsa_weighted_data()),
# as plsa_weighted_fit() reads a source: dims, dimnames, cells (the counted
# cells' number), total (Tsallis: sum omega x, L2: sum x over the counted
# cells), weights (the weights' record), nway, cell_data (the counted
# cells, from which new_plsa() summarizes the data), summary (NULL: made
# from cell_data), hook (NULL: the core reports progress), count_data(),
# fit(init, iters) (a start's run by the rules on one piece, the whole
# data), finish(res) (the best run's D(G_o || P_o)), close()
wq_memory_source <- function(x, loss, q, normalize, method, wargs, ctl, nway, call) {
  force(call)  # (the fit's frame, named by errors raised after this returns)
  dat <- plsa_weighted_data(x, loss, wargs, call, nway)
  src <- new.env(parent = emptyenv())
  src$dims <- dat$dims
  src$dimnames <- dat$dimnames
  src$cells <- length(dat$x)
  src$total <- dat$T
  src$weights <- dat$wd
  src$nway <- nway
  src$cell_data <- list(idx = dat$idx, val = dat$x)
  src$summary <- NULL
  src$hook <- NULL
  src$count_data <- function() check_count_data(x, dat$x, "plsa", likelihood = FALSE, call = call)
  src$fit <- function(init, iters) {
    cpp_plsa_weighted_fit(dat$idx, dat$g, dat$omega, dat$dims, dat$d, dat$v, dat$eidx, dat$ev,
                          as.numeric(init$lambda), lapply(init$factors, as.matrix), loss,
                          if (loss == "tsallis") q else 0.5, iters, ctl$tol, ctl$threads, ctl$verbose,
                          !normalize, method, init$squarem_bound %||% 1)
  }
  src$finish <- function(res) {
    # D(G_o || P_o): the counted cells' shares of the data and of the model,
    # both with their weights (mass: sum omega p of the model)
    lam <- as.numeric(res$lambda)
    p <- res$factors[[1]][dat$idx[1, ] + 1L, , drop = FALSE] * rep(lam, each = ncol(dat$idx))
    for (n in seq_along(dat$dims)[-1]) p <- p * res$factors[[n]][dat$idx[n, ] + 1L, , drop = FALSE]
    p <- rowSums(p)
    go <- dat$omega * dat$x / sum(dat$omega * dat$x)
    res$kl <- sum(go * log(go / pmax(dat$omega * p / res$mass, .Machine$double.xmin)))
    res
  }
  src$close <- function() invisible(NULL)
  src
}

# augment() of a weighted fit of a matrix: a row per cell left out and per
# observed cell of `data` (weighted_cells()), `observed` marking which took
# part in the fit, `.fitted` the model's count there (an imputation where
# the cell was left out)
plsa_augment_weighted <- function(x, data) {
  cl <- weighted_cells(x$weighting, x$dims, data)
  ij <- cl$ij
  lam <- as.numeric(x$lambda)
  p <- x$factors[[1]][ij[, 1], , drop = FALSE] * rep(lam, each = nrow(ij)) * x$factors[[2]][ij[, 2], , drop = FALSE]
  dn <- x$dimnames[[1]]; tn <- x$dimnames[[2]]
  tibble::tibble(document = if (is.null(dn)) ij[, 1] else dn[ij[, 1]],
                 term = if (is.null(tn)) ij[, 2] else tn[ij[, 2]],
                 count = cl$value, observed = cl$observed, .fitted = unname(rowSums(p)) * x$total,
                 .topic = max.col(p, ties.method = "first"))
}

