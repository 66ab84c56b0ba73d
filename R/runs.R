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

# values: each run's final objective. Returns the index of the best finite
# run; warns when some runs (not all) were not finite.
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
  which.min(replace(values, !ok, Inf))
}
