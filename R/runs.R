# Picking the winning start, shared by every fitter. A run whose final
# objective is not finite (overflow, a NaN from the data or the algorithm) can
# never win; when no run is finite the fit stops with a classed error
# (`aspectr_error_numeric`) that says so, instead of R's "attempt to select
# less than one element".

abort_numeric <- function(message, call = rlang::caller_env(), .envir = parent.frame()) {
  cli::cli_abort(message, class = c("aspectr_error_numeric", "aspectr_error"),
                 call = call, .envir = .envir)
}

warn_numeric <- function(message, .envir = parent.frame()) {
  cli::cli_warn(message, class = c("aspectr_warning_numeric", "aspectr_warning"),
                .envir = .envir)
}

# The runs' values as they are ranked: to 10 significant digits, so that
# runs reaching one optimum by sums in another order (the same starts in
# memory, in shards, on a cluster) rank alike, the first of them winning
# (not whichever rounding favoured). Not finite: Inf.
run_rank_value <- function(values) {
  v <- signif(as.numeric(values), 10)
  v[!is.finite(v)] <- Inf
  v
}

# The runs' indices from the best to the worst: by run_rank_value(), ties
# in the runs' order.
run_order <- function(values) order(run_rank_value(values))

# values: each run's final objective. Returns the index of the best finite
# run (the first of the runs that agree with the smallest value to 10
# significant digits, see run_rank_value()); warns when some runs (not
# all) were not finite.
best_run <- function(values, what = "fit", call = rlang::caller_env()) {
  ok <- is.finite(values)
  if (!any(ok)) {
    n <- length(values)
    abort_numeric(c(
      "The {what} failed: the objective of {if (n == 1) 'the start' else paste('all', n, 'starts')} is not finite ({.val {unique(format(values))}}).",
      i = "This is a numerical failure, not a problem with the input; please report it with the call that produced it."
    ), call = call)
  }
  if (!all(ok)) {
    bad <- sum(!ok)
    warn_numeric("{bad} of {length(values)} starts of the {what} ended with a non-finite objective and {?was/were} discarded.")
  }
  run_order(values)[1]
}

# An argument renamed for one meaning across the package: the old name still
# works, with a classed deprecation warning; both at once is an error.
renamed_arg <- function(new, old, old_name, new_name, old_given, new_given = !is.null(new),
                        call = rlang::caller_env()) {
  if (!old_given) return(new)
  if (new_given) {
    abort_input("Give {.arg {new_name}} only: {.arg {old_name}} is its deprecated name.",
                "argument", arg = old_name, call = call)
  }
  cli::cli_warn(c("{.arg {old_name}} is deprecated; use {.arg {new_name}} (same meaning).",
                  i = "The old name clashed with another meaning of {.arg {old_name}} in the package."),
                class = c("aspectr_warning_deprecated", "aspectr_warning"), call = call)
  old
}

check_callback <- function(callback, call = rlang::caller_env()) {
  if (!is.null(callback) && !is.function(callback)) {
    abort_input("{.arg callback} must be a function of (iteration, objective, factors) or NULL, not {describe(callback)}.",
                "argument", arg = "callback", call = call)
  }
  if (is.function(callback) && !is.primitive(callback)) {
    # it is called with three arguments: it must take them, and need no more
    f <- formals(callback)
    named <- setdiff(names(f), "...")
    required <- sum(vapply(f[named], function(a) identical(a, quote(expr = )), logical(1)))
    if ((!"..." %in% names(f) && length(named) < 3) || required > 3) {
      abort_input("{.arg callback} must be a function of (iteration, objective, factors), not a function of {length(named)} argument{?s} ({.code ({paste(names(f), collapse = ', ')})}).",
                  "argument", arg = "callback", call = call)
    }
  }
  callback
}

# The most random starts (or bootstrap draws) a call takes: more cannot be
# run in a session, and their bookkeeping would not fit in memory
max_runs <- 1e5

# The R side of the end-of-iteration hook the C++ loops call: progress
# messages in non-interactive sessions (every `aspectr.progress_interval`
# seconds, default 2) and the user's callback, which sees the iteration,
# the objective on the reported scale (`value()`) and the factors on the
# user's scale (`model()` of the raw core model). NULL when there is
# nothing to do, so that a plain fit never calls back into R.
fit_hook <- function(callback, verbose, name, value = identity, model = identity) {
  progress <- isTRUE(verbose) && !interactive()
  if (is.null(callback) && !progress) return(NULL)
  interval <- getOption("aspectr.progress_interval", 2)
  last <- proc.time()[["elapsed"]]
  function(it, obj, raw) {
    v <- value(obj)
    if (progress) {
      now <- proc.time()[["elapsed"]]
      if (now - last >= interval) {
        last <<- now
        cli::cli_inform("{name}: iteration {it}, objective {format(signif(v, 8))}",
                        class = "aspectr_message_progress")
      }
    }
    if (!is.null(callback) && isFALSE(callback(it, v, model(raw)))) return(FALSE)
    TRUE
  }
}

# After the fit: the closing progress line (non-interactive sessions), and
# one message when the winning start ran out of iterations (not when the
# user asked for a fixed number of them with tol = 0, nor when a callback
# stopped it).
finish_progress <- function(fit, verbose, name, max_iter, tol) {
  status <- if (isTRUE(fit$stopped)) "stopped by the callback" else
    if (isTRUE(fit$converged)) "converged" else "not converged"
  if (isTRUE(verbose) && !interactive()) {
    cli::cli_inform("{name}: {fit$iterations} iteration{?s}, objective {format(signif(fit$value, 8))}, {status}",
                    class = "aspectr_message_progress")
  }
  if (!isTRUE(fit$converged) && !isTRUE(fit$stopped) && tol > 0 && max_iter > 0 &&
      isTRUE(fit$iterations >= max_iter)) {
    o <- fit$objective
    rel <- if (length(o) >= 2 && abs(o[length(o) - 1]) > 0) abs(o[length(o) - 1] - o[length(o)]) / abs(o[length(o) - 1]) else NA
    if (!is.finite(rel) || rel > 1e6) rel <- NA
    cli::cli_inform(c("{name} did not converge in {max_iter} iteration{?s}{if (is.na(rel)) '' else paste0(' (last relative change ', format(signif(rel, 3)), ', tol ', format(tol), ')')}.",
                      i = "Raise {.arg max_iter} or {.arg tol} to let it converge."),
                    class = "aspectr_message_not_converged")
  }
  invisible(fit)
}

# A warm start: `init` an earlier fit of the same family, rank and data
# shape (classed input errors otherwise); returns the fit.
warm_start <- function(init, family, k, dims, call = rlang::caller_env()) {
  init <- rows_in_memory(init)
  got <- init$family %||% sub("^aspectr_", "", class(init)[1])
  if (!identical(got, family)) {
    abort_input("{.arg init} is a {.fn {got}} fit; a warm start needs a {.fn {family}} fit.",
                "argument", arg = "init", call = call)
  }
  if (!identical(as.integer(init$k), as.integer(k))) {
    abort_input("{.arg init} is a fit with k = {init$k}; a warm start needs k = {k}.",
                "argument", arg = "init", call = call)
  }
  fdims <- if (family %in% c("symnmf", "sntf")) init$n else init$dims
  if (!identical(as.numeric(fdims), as.numeric(dims))) {
    # (lca() calls its data `data`, symnmf() its matrix `a`)
    data_arg <- switch(family, lca = "data", symnmf = "a", "x")
    abort_input("{.arg init} was fitted to data of size {paste(fdims, collapse = ' x ')}; a warm start needs the shape of {.arg {data_arg}}, {paste(dims, collapse = ' x ')}.",
                "argument", arg = "init", call = call)
  }
  init
}

# A list start for the aspect-model families: lambda (k) and factors (one
# d_n x k matrix per mode), checked and put on the simplex.
check_aspect_init <- function(init, dims, k, call = rlang::caller_env()) {
  ok <- is.list(init) && is.numeric(init$lambda) && length(init$lambda) == k &&
    is.list(init$factors) && length(init$factors) == length(dims) &&
    all(vapply(seq_along(dims), function(n) {
      f <- init$factors[[n]]
      # (no NA or NaN, none negative or infinite: in passes that allocate nothing)
      is.matrix(f) && is.numeric(f) && nrow(f) == dims[n] && ncol(f) == k && length(f) > 0 &&
        !anyNA(f) && min(f) >= 0 && max(f) < Inf && all(colSums(f) > 0)
    }, logical(1))) && all(is.finite(init$lambda)) && all(init$lambda >= 0) && sum(init$lambda) > 0
  if (!ok) {
    # (what was given: its parts)
    given <- if (!is.list(init)) describe(init) else
      paste0("lambda ", describe(init$lambda), ", factors ",
             if (is.list(init$factors)) paste(vapply(init$factors, describe, ""), collapse = ", ") else describe(init$factors))
    abort_input("A list {.arg init} must have {.code lambda} ({k} non-negative weights) and {.code factors} ({length(dims)} non-negative matri{?x/ces} of sizes {paste(paste(dims, k, sep = ' x '), collapse = ', ')}, no zero column), not {given}.",
                "argument", arg = "init", call = call)
  }
  list(lambda = as.numeric(init$lambda) / sum(init$lambda),
       factors = lapply(init$factors, function(f) unname(f) / rep(colSums(f), each = nrow(f))))
}

# Runs the starts of a fit, shared by the fitters. fit_start(init, iters)
# runs one start for at most `iters` iterations and returns the glue's list;
# resume(res) is the start that continues a run from its result. Staged
# restarts: with short_keep < nrun, every start first runs short_iter
# iterations and only the short_keep best continue (their traces joined);
# the algorithms without hidden state (EM, q-EM, multiplicative updates,
# HALS, ANLS, coordinate descent) continue exactly as if uninterrupted, the
# extrapolated ones restart their extrapolation. With a hook (a callback or
# progress messages) the starts run one after another, and a start stopped
# by the callback ends the fit.
run_starts <- function(inits, fit_start, resume, hook, max_iter, short_iter, short_keep) {
  n <- length(inits)
  staged <- starts_staged(n, max_iter, short_iter, short_keep)
  run_all <- function(starts, iters) {
    if (is.null(hook)) return(map_runs(starts, function(s) fit_start(s, iters)))
    out <- list()
    for (i in seq_along(starts)) {
      out[[i]] <- fit_start(starts[[i]], iters)
      if (isTRUE(out[[i]]$stopped)) break
    }
    out
  }
  if (!staged) return(run_all(inits, max_iter))
  runs <- run_all(inits, short_iter)
  if (any(vapply(runs, function(r) isTRUE(r$stopped), logical(1)))) return(runs)
  v <- vapply(runs, run_value, numeric(1))
  for (i in run_order(v)[seq_len(short_keep)]) {
    r <- runs[[i]]
    if (isTRUE(r$converged)) next
    more <- run_all(list(resume(r)), max_iter - short_iter)[[1]]
    more$objective <- c(r$objective, more$objective)
    more$initial <- r$initial
    more$iterations <- r$iterations + more$iterations
    runs[[i]] <- more
  }
  runs
}

check_staging <- function(short_iter, short_keep, nrun, call = rlang::caller_env()) {
  short_iter <- check_whole(short_iter, "short_iter", min = 0, call = call)
  short_keep <- if (is.null(short_keep)) nrun else check_whole(short_keep, "short_keep", min = 1, call = call)
  list(short_iter = short_iter, short_keep = short_keep)
}

# The one fit pipeline after the starts are drawn, shared by every family:
# the starts run (staged restarts, the hook; `sequential` for the shards,
# whose sessions run one start at a time), each run finished by the
# family's `finish_run()` (its objective on the reported scale), the best
# finite run picked by `value()`. `discard(run)` (factors in files) frees a
# run that can no longer win as soon as a better one ends, when the starts
# are not staged. `batch(inits)`, when given, runs every start at once in
# place of run_starts() (lca()'s starts in the core's threads, staged
# there as run_starts() stages them) and returns their runs. Returns the
# runs, their values, the best run's index and the best run.
fit_pipeline <- function(inits, fit_start, resume, hook, ctl, stg, what, value = run_value,
                         finish_run = NULL, sequential = FALSE, discard = NULL, batch = NULL,
                         call = rlang::caller_env()) {
  if (!is.null(discard) && !starts_staged(ctl$nrun, ctl$max_iter, stg$short_iter, stg$short_keep)) {
    # (ranked as best_of_runs() ranks them: the finished run's value)
    fit_start <- keep_best_run(fit_start, discard,
                               function(r) value(if (is.null(finish_run)) r else finish_run(r)))
  }
  if (sequential) hook <- hook %||% function(...) TRUE
  runs <- if (!is.null(batch)) batch(inits) else
    run_starts(inits, fit_start, resume, hook, ctl$max_iter, stg$short_iter, stg$short_keep)
  if (!is.null(finish_run)) runs <- lapply(runs, finish_run)
  best_of_runs(runs, what, value, call = call)
}

# The best run of a fit's runs (by `value()`, see best_run()): the runs,
# their values, the best one's index and the best run.
best_of_runs <- function(runs, what, value = run_value, call = rlang::caller_env()) {
  values <- vapply(runs, value, numeric(1))
  best <- best_run(values, paste(what, "fit"), call = call)
  list(runs = runs, values = values, best = best, res = runs[[best]])
}

# a run's final objective
last_objective <- function(r) r$objective[length(r$objective)]
