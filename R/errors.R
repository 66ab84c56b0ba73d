# Classed errors. Every input problem is an `aspectr_error_input` (with a
# subclass saying which kind), so callers can catch them with
# tryCatch(..., aspectr_error_input = function(e) ...).

abort_input <- function(message, kind, arg = NULL, call = rlang::caller_env(),
                        .envir = parent.frame()) {
  cli::cli_abort(
    message,
    class = c(paste0("aspectr_error_input_", kind), "aspectr_error_input", "aspectr_error"),
    arg = arg, call = call, .envir = .envir
  )
}

describe <- function(x) {
  if (is.null(x)) return("NULL")
  if (length(x) == 1 && (is.numeric(x) || is.logical(x))) return(format(x))
  if (length(x) == 1 && is.character(x)) return(paste0('"', x, '"'))
  paste0("a ", class(x)[1], " of length ", length(x))
}

check_whole <- function(x, arg, min = 1, max = Inf, what = NULL,
                        call = rlang::caller_env()) {
  ok <- is.numeric(x) && length(x) == 1 && !is.na(x) && is.finite(x) &&
    abs(x - round(x)) < 1e-8 && x >= min && x <= max
  if (!ok) {
    range <- if (is.finite(max)) paste0(" between ", min, " and ", max) else
      if (min == 1) "" else paste0(" of at least ", min)
    kind <- if (min == 1 && !is.finite(max)) "a positive whole number" else "a whole number"
    note <- if (is.null(what)) "" else paste0(" (", what, ")")
    abort_input("{.arg {arg}} must be {kind}{range}{note}, not {describe(x)}.",
                "argument", arg = arg, call = call)
  }
  as.integer(round(x))
}

check_number <- function(x, arg, lower = -Inf, upper = Inf, lower_open = FALSE,
                         upper_open = FALSE, call = rlang::caller_env()) {
  ok <- is.numeric(x) && length(x) == 1 && !is.na(x)
  if (ok) {
    ok <- (if (lower_open) x > lower else x >= lower) &&
      (if (upper_open) x < upper else x <= upper)
  }
  if (!ok) {
    lb <- if (lower_open) "(" else "["
    ub <- if (upper_open) ")" else "]"
    abort_input("{.arg {arg}} must be a number in {lb}{lower}, {upper}{ub}, not {describe(x)}.",
                "argument", arg = arg, call = call)
  }
  as.numeric(x)
}

check_flag <- function(x, arg, call = rlang::caller_env()) {
  if (!(is.logical(x) && length(x) == 1 && !is.na(x))) {
    abort_input("{.arg {arg}} must be TRUE or FALSE, not {describe(x)}.",
                "argument", arg = arg, call = call)
  }
  x
}

match_option <- function(x, choices, arg, call = rlang::caller_env()) {
  if (identical(x, choices)) return(choices[1])
  if (!(is.character(x) && length(x) == 1 && !is.na(x) && x %in% choices)) {
    abort_input("{.arg {arg}} must be one of {.or {.val {choices}}}, not {describe(x)}.",
                "argument", arg = arg, call = call)
  }
  x
}

check_dots_empty <- function(..., call = rlang::caller_env()) {
  if (...length() > 0) {
    nms <- names(list(...))
    if (is.null(nms)) nms <- rep("", ...length())
    nms[nms == ""] <- "<unnamed>"
    abort_input("Unknown argument{?s}: {.arg {nms}}.", "argument", call = call)
  }
  invisible()
}

# Refuses dense results or passes larger than getOption("aspectr.max_cells")
# (class aspectr_error_size). `message` may refer to {size}, the formatted
# size.
check_size <- function(size, message, limit = getOption("aspectr.max_cells", 1e8),
                       hint = "Raise {.code options(aspectr.max_cells)} to allow it.",
                       call = rlang::caller_env()) {
  if (size <= limit) return(invisible())
  size <- format(size, big.mark = ",")
  cli::cli_abort(c(message, i = hint), class = c("aspectr_error_size", "aspectr_error"), call = call)
}

# The controls every fitting function shares, validated in one place.
check_fit_controls <- function(nrun, max_iter, tol, seed, threads, verbose,
                               call = rlang::caller_env()) {
  list(
    nrun = check_whole(nrun, "nrun", call = call),
    max_iter = check_whole(max_iter, "max_iter", call = call),
    tol = check_number(tol, "tol", 0, Inf, call = call),
    seed = if (is.null(seed)) NULL else
      check_whole(seed, "seed", min = -.Machine$integer.max, call = call),
    threads = resolve_threads(threads, call = call),
    verbose = check_flag(verbose, "verbose", call = call)
  )
}
