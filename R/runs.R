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
