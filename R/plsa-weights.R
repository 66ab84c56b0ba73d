# plsa() with missing cells, masks or weights (matrices in memory, and for
# KL shards()): KL by nmf()'s weighted coordinate descent, normalized as
# as_plsa() does;
# Tsallis and L2 by the weighted rules of solvers/plsa_weighted.h. The
# weights are nmf()'s (nmf_weighted_data(), R/nmf-weights.R).

# The checks every loss shares, then the fit of the loss.
plsa_weighted <- function(x, k, loss, method, q, normalize, init, nrun, max_iter, tol, seed, threads, verbose,
                          given, wargs, call, env = rlang::caller_env(), cluster = NULL) {
  if (inherits(x, "aspectr_shards") && loss != "kl") {
    abort_input("Missing cells, masks and weights are available in {.fn plsa} for {.fn shards} with {.code loss = \"kl\"}, not {.val {loss}} (its weighted rules are fitted in one object).",
                "argument", arg = "loss", call = env)
  }
  if (length(dim(x)) > 2) {
    abort_input("Missing cells, masks and weights are available in {.fn plsa} for matrices, not for {length(dim(x))}-way arrays (see {.fn ntf}).",
                "argument", arg = "x", call = env)
  }
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
    if (inherits(x, "aspectr_shards")) wargs$cluster <- check_cluster(cluster, x)
    return(plsa_weighted_kl(x, k, method, init, nrun, max_iter, tol, seed, threads, verbose, wargs, call, env))
  }
  plsa_weighted_fit(x, k, loss, method, q, normalize, init, nrun, max_iter, tol, seed, threads, verbose,
                    wargs, call, env)
}

# KL: nmf()'s weighted KL coordinate descent, normalized as as_plsa() does;
# the value is D(G_o || P_o) over the cells that count (both shares
# normalized over them): with T = sum x~, the weighted divergence D and
# S = sum omega v, (D + T - S) / T + log(S / T)
plsa_weighted_kl <- function(x, k, method, init, nrun, max_iter, tol, seed, threads, verbose, wargs, call, env) {
  if (!is.null(method) && !identical(method, "cd")) {
    abort_input("{.arg method} must be {.val cd} (or {.code NULL}) with missing cells, masks or weights, not {describe(method)}.",
                "argument", arg = "method", call = env)
  }
  if (!(identical(init, "random") || is.list(init))) {
    abort_input("{.arg init} must be {.val random} or a list of starting factors with missing cells, masks or weights, not {describe(init)}.",
                "argument", arg = "init", call = env)
  }
  nmf_init <- "random"
  if (is.list(init) && !inherits(init, "aspectr_fit")) {
    # pLSA factors (documents, terms, weights) as W = P(d|z) diag(lambda), H = P(w|z)'
    f <- init$factors %||% list(init[[1]], init[[2]])
    lam <- init$lambda %||% rep(1 / k, k)
    nmf_init <- list(W = sweep(as.matrix(f[[1]]), 2, lam, "*"), H = t(as.matrix(f[[2]])))
  }
  fit <- do.call(nmf, c(list(x, k, loss = "kl", method = "cd", init = nmf_init, nrun = nrun, max_iter = max_iter,
                             tol = tol, seed = seed, threads = threads, verbose = verbose), wargs))
  out <- as_plsa(fit)
  tot <- fit$total; D <- fit$divergence; S <- fit$weighting$mass
  out$value <- out$kl <- (D + tot - S) / tot + log(S / tot)
  # the trace: coordinate descent rescales the model to S = T every
  # iteration, so each value is D / T
  out$objective <- fit$objective / tot
  out$initial <- NA_real_
  out$method <- "cd"
  out$weighting <- fit$weighting
  out$call <- call
  out
}

# The data of a weighted Tsallis or L2 fit: the cells where omega x > 0
# (idx: 2 x nnz, 0-based; x, omega there) and the weights' parts for the
# C++ rules, with G = x / T: Tsallis T = sum omega x (so that sum omega g =
# 1), L2 T = sum x over those cells (the counted cells' total, so that the
# fit does not change when every weight is multiplied by a constant).
plsa_weighted_data <- function(x, loss, wargs, call) {
  wd <- do.call(nmf_weighted_data, c(list(x), wargs, list(call = call)))
  m <- nrow(wd$x0)
  ij <- if (is.matrix(wd$xt)) which(wd$xt > 0, arr.ind = TRUE) else {
    s <- Matrix::summary(wd$xt)
    s <- s[s$x > 0, , drop = FALSE]
    cbind(as.integer(s$i), as.integer(s$j))
  }
  if (!nrow(ij)) {
    abort_input("{.arg x} has no positive value in a cell of positive weight: there is nothing to fit.",
                "empty", arg = "x", call = call)
  }
  xv <- as.numeric(wd$x0[ij])
  # omega at those cells: r_i c_j (d + delta_ij)
  pos <- match((ij[, 2] - 1) * m + ij[, 1], wd$ej * as.numeric(m) + wd$ei + 1)
  f <- ifelse(is.na(pos), wd$d, wd$d + wd$ev[pos])
  om <- wd$r[ij[, 1]] * wd$c[ij[, 2]] * f
  T <- if (loss == "tsallis") sum(om * xv) else sum(xv)
  list(wd = wd, idx = rbind(ij[, 1] - 1L, ij[, 2] - 1L), x = xv, g = xv / T, omega = om, T = T,
       dims = as.integer(dim(wd$x0)), dimnames = dimnames(wd$x0) %||% list(NULL, NULL))
}

# Tsallis and L2 with missing cells, masks or weights: the weighted q-EM and
# block updates of solvers/plsa_weighted.h (the objective: for Tsallis, the
# divergence D_q(G_o || P_o) of the counted cells' share of the data from
# the model's share of them, both normalized over them with their weights;
# for L2, 1/2 sum omega (g - p)^2 with P on the simplex)
plsa_weighted_fit <- function(x, k, loss, method, q, normalize, init, nrun, max_iter, tol, seed, threads, verbose,
                              wargs, call, env) {
  method <- match_option(method %||% plsa_methods(loss, 1)[1], plsa_methods(loss, 1), "method", call = env)
  q <- check_number(q, "q", 0, 1, lower_open = TRUE, upper_open = TRUE, call = env)
  ctl <- check_fit_controls(nrun, max_iter, tol, seed, threads, verbose, call = env)
  dat <- plsa_weighted_data(x, loss, wargs, env)
  wd <- dat$wd
  dims <- dat$dims
  k <- check_whole(k, "k", min = 1, max = min(dims), what = "at most the smaller dimension of `x`", call = env)
  count_data <- check_count_data(x, dat$x, "plsa", likelihood = FALSE, call = env)
  first <- plsa_init(init, "plsa", dims, k, call = env)
  start <- proc.time()[["elapsed"]]
  inits <- with_seed(ctl$seed, lapply(seq_len(ctl$nrun), function(i) random_start(dims, k)))
  if (!is.null(first)) inits[[1]] <- first
  runs <- lapply(inits, function(init) {
    cpp_plsa_weighted_fit(dat$idx, dat$g, dat$omega, dims, wd$d, wd$r, wd$c, wd$ei, wd$ej, wd$ev,
                          as.numeric(init$lambda), lapply(init$factors, as.matrix), loss,
                          if (loss == "tsallis") q else 0.5, ctl$max_iter, ctl$tol, ctl$threads, ctl$verbose,
                          !normalize, method, init$squarem_bound %||% 1)
  })
  values <- vapply(runs, run_value, numeric(1))
  best <- best_run(values, "plsa() fit")
  res <- runs[[best]]
  # D(G_o || P_o): the counted cells' shares of the data and of the model,
  # both with their weights
  lam <- as.numeric(res$lambda)
  U <- res$factors[[1]]; V <- res$factors[[2]]
  i <- dat$idx[1, ] + 1L; j <- dat$idx[2, ] + 1L
  p <- rowSums(U[i, , drop = FALSE] * rep(lam, each = length(i)) * V[j, , drop = FALSE])
  mass <- sum(wd$r * (plsa_omega_times(wd, V %*% diag(lam, length(lam))) * U))
  go <- dat$omega * dat$x / sum(dat$omega * dat$x)
  res$kl <- sum(go * log(go / pmax(dat$omega * p / mass, .Machine$double.xmin)))
  # counts: the model times the counted cells' total (Tsallis: scaled so
  # that its weighted total on them is the data's)
  total <- if (loss == "tsallis") sum(dat$omega * dat$x) / mass else dat$T
  data <- list(dims = dims, dimnames = dat$dimnames, total = total, nnz = length(dat$x),
               idx = dat$idx, val = dat$x)
  fit <- new_plsa(res, data, k = k, loss = loss, q = if (loss == "tsallis") q else NA_real_,
                  tempering = 1, run = best, values = values, time = proc.time()[["elapsed"]] - start,
                  threads = ctl$threads, seed = ctl$seed, call = call)
  fit$weighting <- list(type = wd$type, base = wd$d, left_out = wd$left_out,
                        observed = if (wd$d == 0) nmf_observed_pattern(wd, dims, dat$dimnames))
  finish_progress(plsa_fields(fit, normalize, method, count_data), ctl$verbose, "plsa()", ctl$max_iter, ctl$tol)
}

# (Omega B)_i. = sum_j omega_ij B_j. without the row weights r_i (B: n x k):
# d c'B plus the deviations' part
plsa_omega_times <- function(wd, B) {
  m <- length(wd$r)
  out <- matrix(wd$d * colSums(wd$c * B), m, ncol(B), byrow = TRUE)
  if (length(wd$ev)) {
    add <- (wd$ev * wd$c[wd$ej + 1L]) * B[wd$ej + 1L, , drop = FALSE]
    s <- rowsum(add, wd$ei + 1L)
    rows <- as.integer(rownames(s))
    out[rows, ] <- out[rows, ] + s
  }
  out
}
