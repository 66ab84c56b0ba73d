# Classed errors. Every input problem is an `aspectr_error_input` (with a
# subclass saying which kind), so callers can catch them with
# tryCatch(..., aspectr_error_input = function(e) ...). Every message names
# the argument, what it must be, and what was given.

abort_input <- function(message, kind, arg = NULL, call = rlang::caller_env(),
                        .envir = parent.frame(), ...) {
  cli::cli_abort(
    message,
    class = c(paste0("aspectr_error_input_", kind), "aspectr_error_input", "aspectr_error"),
    arg = arg, call = call, .envir = .envir, ...
  )
}

# A short description of a value for error messages: the value itself for a
# scalar, otherwise its class and size.
describe <- function(x) {
  if (is.null(x)) return("NULL")
  if (is.function(x)) return("a function")
  if (is.environment(x)) return("an environment")
  if (is.factor(x)) {
    if (length(x) == 1) return(paste0("a factor with value \"", as.character(x), "\""))
    return(paste0("a factor of length ", length(x)))
  }
  if (is.atomic(x) && length(x) == 0) return(paste0("an empty ", typeof(x), " vector"))
  if (is.atomic(x) && length(x) == 1 && is.null(dim(x))) {
    if (is.numeric(x) || is.logical(x)) return(format(x, digits = 15))
    if (is.character(x)) return(if (is.na(x)) "NA (character)" else paste0('"', x, '"'))
    if (is.complex(x)) return(paste0("the complex number ", format(x)))
  }
  d <- dim(x)
  if (!is.null(d) && (is.matrix(x) || is.array(x))) {
    what <- if (is.matrix(x)) "matrix" else "array"
    return(paste0("a ", paste(d, collapse = " x "), " ", typeof(x), " ", what))
  }
  if (is.data.frame(x)) return(paste0("a data frame with ", nrow(x), " rows and ", ncol(x), " columns"))
  if (is.object(x)) return(paste0("an object of class <", class(x)[1], ">"))
  if (is.atomic(x)) return(paste0(if (typeof(x) == "integer") "an " else "a ", typeof(x), " vector of length ", length(x)))
  if (is.list(x)) return(paste0("a list of length ", length(x)))
  paste0("a ", typeof(x))
}

# `x` missing in the caller: "`k` is missing: it must be ...". Call at the
# top of an exported function, one line per required argument.
# A short numeric or logical vector shown by its values, c(1, NA) (at
# most `max` of them); anything else as describe() says it.
describe_values <- function(x, max = 10) {
  if ((is.numeric(x) || is.logical(x)) && !is.object(x) && is.null(dim(x)) && length(x) >= 2 && length(x) <= max) {
    return(paste0("c(", paste(format(x, digits = 15, trim = TRUE), collapse = ", "), ")"))
  }
  describe(x)
}

# Weighted data (missing cells, masks, weights) in which no positive value
# counts: every positive cell is left out or weighs 0. (Both classes: an
# input of nothing to fit, and a bad value of the weighting.)
abort_nothing_weighted <- function(call = rlang::caller_env()) {
  abort_input(c("{.arg x} has no positive value in a cell that counts: there is nothing to fit.",
                i = "Every positive cell is left out (missing, by {.arg mask} or outside {.arg observed}) or weighs 0 (by {.arg weights}, or the weights of its row, column or mode)."),
              c("empty", "value"), arg = "x", call = call)
}

check_required <- function(x, what, arg = rlang::caller_arg(x), call = rlang::caller_env()) {
  if (!missing(x)) return(invisible(TRUE))
  abort_input("{.arg {arg}} is missing: it must be {what}.", "argument", arg = arg, call = call)
}

check_whole <- function(x, arg, min = 1, max = Inf, what = NULL,
                        call = rlang::caller_env()) {
  # whole numbers are returned as integers, so nothing beyond R's integers
  imax <- .Machine$integer.max
  max <- min(max, imax)
  min <- max(min, -imax)
  # (the message is built only for an error: this runs on every fit)
  expected <- function() {
    range <- if (max < imax) paste0(" between ", min, " and ", max) else
      if (min == 1) "" else paste0(" between ", min, " and ", imax)
    kind <- if (min == 1 && max >= imax) "a positive whole number" else "a whole number"
    paste0(kind, range, if (is.null(what)) "" else paste0(" (", what, ")"))
  }
  if (missing(x)) {
    abort_input("{.arg {arg}} is missing: it must be {expected()}.",
                "argument", arg = arg, call = call)
  }
  ok <- is.numeric(x) && !is.object(x) && length(x) == 1 && !is.na(x) && is.finite(x) &&
    abs(x - round(x)) < 1e-8 && x >= min && x <= max
  if (!ok) {
    abort_input("{.arg {arg}} must be {expected()}, not {describe(x)}.",
                "argument", arg = arg, call = call)
  }
  as.integer(round(x))
}

# A seed for R's generator: NULL or a whole number in R's integer range.
check_seed <- function(seed, arg = "seed", call = rlang::caller_env()) {
  if (is.null(seed)) return(NULL)
  check_whole(seed, arg, min = -.Machine$integer.max, max = .Machine$integer.max,
              what = "or NULL", call = call)
}

# A finite number in an interval; the interval's infinite ends are open
# (Inf, NaN and NA are always refused).
check_number <- function(x, arg, lower = -Inf, upper = Inf, lower_open = FALSE,
                         upper_open = FALSE, call = rlang::caller_env()) {
  if (missing(x)) {
    abort_input("{.arg {arg}} is missing: it must be {number_range(lower, upper, lower_open, upper_open)}.",
                "argument", arg = arg, call = call)
  }
  ok <- is.numeric(x) && !is.object(x) && length(x) == 1 && !is.na(x) && is.finite(x)
  if (ok) {
    ok <- (if (lower_open) x > lower else x >= lower) &&
      (if (upper_open) x < upper else x <= upper)
  }
  if (!ok) {
    abort_input("{.arg {arg}} must be {number_range(lower, upper, lower_open, upper_open)}, not {describe(x)}.",
                "argument", arg = arg, call = call)
  }
  as.numeric(x)
}

number_range <- function(lower, upper, lower_open = FALSE, upper_open = FALSE) {
  if (!is.finite(lower) && !is.finite(upper)) return("a finite number")
  lb <- if (lower_open || !is.finite(lower)) "(" else "["
  ub <- if (upper_open || !is.finite(upper)) ")" else "]"
  what <- if (is.finite(lower) && is.finite(upper)) "a number" else "a finite number"
  paste0(what, " in ", lb, format(lower), ", ", format(upper), ub)
}

check_flag <- function(x, arg, call = rlang::caller_env()) {
  if (missing(x) || !(is.logical(x) && length(x) == 1 && !is.na(x))) {
    given <- if (missing(x)) "missing" else describe(x)
    abort_input("{.arg {arg}} must be TRUE or FALSE, not {given}.",
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

# Arguments of the packages users come from, by their name there: this
# package's name and the package's (check_dots_empty()'s hint)
peer_argument_names <- list(
  nclass = c("k", "poLCA"), nrep = c("nrun", "poLCA"), maxiter = c("max_iter", "poLCA"),
  calc.se = c("se", "poLCA"), rank = c("k", "the NMF package"), K = c("k", "topicmodels and stm"),
  max.em.its = c("max_iter", "stm")
)

peer_hint <- function(nm) {
  alias <- peer_argument_names[[nm]]
  paste0("{.arg ", nm, "} is ", alias[2], "'s name: here it is {.arg ", alias[1], "}.")
}

# Refuses, in `...` passed on to another function, an argument named as in
# a peer package (peer_argument_names) for one of the calling function's
# own: check_dots_empty()'s hint, before the own argument is found missing.
check_peer_names <- function(..., fn, call = rlang::caller_env()) {
  nms <- ...names()
  known <- names(formals(sys.function(-1)))
  for (nm in intersect(nms, names(peer_argument_names))) {
    alias <- peer_argument_names[[nm]]
    if (alias[1] %in% known) {
      abort_input(c("{.arg {nm}} is not an argument of {.fn {fn}} and the functions it calls.",
                    i = peer_hint(nm)),
                  "argument", arg = nm, call = call)
    }
  }
}

# The warning that an argument given has no effect (class
# `aspectr_warning_unused_argument`, an `aspectr_warning_input`): `arg` is
# ignored, `why` says what it needs (cli markup, evaluated in the
# caller's frame), `hint` what to do.
warn_unused_argument <- function(arg, why, hint = NULL, call = rlang::caller_env(), .envir = parent.frame()) {
  cli::cli_warn(c(paste0("{.arg ", arg, "} has no effect and is ignored: ", why), i = hint),
                class = c("aspectr_warning_unused_argument", "aspectr_warning_input", "aspectr_warning"),
                arg = arg, call = call, .envir = .envir)
}

# Refuses anything in `...`: an unknown (or misspelled) argument is an error
# that names it, shows the value given and suggests the closest argument of
# the calling function.
check_dots_empty <- function(..., call = rlang::caller_env()) {
  n <- ...length()
  if (n == 0) return(invisible())
  nms <- ...names()
  if (is.null(nms)) nms <- rep("", n)
  nms[is.na(nms)] <- ""
  fn <- sys.function(-1)
  known <- setdiff(names(formals(fn)), "...")
  f <- sys.call(-1)[[1]]
  fname <- if (is.symbol(f)) as.character(f) else
    if (is.call(f) && length(f) == 3 && is.symbol(f[[3]])) as.character(f[[3]]) else "this function"
  values <- vapply(seq_len(n), function(i) {
    v <- tryCatch(...elt(i), error = function(e) NULL)
    describe(v)
  }, character(1))
  named <- nzchar(nms)
  nms <- gsub("([{}])", "\\1\\1", nms)
  values <- gsub("([{}])", "\\1\\1", values)
  lines <- character()
  if (any(named)) {
    lines <- c(lines, paste0("has no argument ", paste0("{.arg ", nms[named], "} (given ", values[named], ")",
                                                        collapse = " or ")))
  }
  if (any(!named)) {
    lines <- c(lines, paste0("got ", sum(!named), " extra unnamed argument", if (sum(!named) > 1) "s" else "",
                             " (given ", paste(values[!named], collapse = ", "), ")"))
  }
  hint <- character()
  for (nm in nms[named]) {
    alias <- peer_argument_names[[nm]]
    if (!is.null(alias) && alias[1] %in% known) {
      hint <- c(hint, i = peer_hint(nm))
    } else if (length(known)) {
      d <- utils::adist(tolower(nm), tolower(known))[1, ]
      best <- which.min(d)
      if (d[best] <= (if (nchar(nm) <= 4) 1 else 2)) {
        hint <- c(hint, i = paste0("Did you mean {.arg ", known[best], "} instead of {.arg ", nm, "}?"))
      }
    }
  }
  known_txt <- if (length(hint) || !length(known)) "" else
    paste0("; its arguments are ", paste0("{.arg ", known, "}", collapse = ", "))
  fn_txt <- if (fname == "this function") fname else paste0("{.fn ", fname, "}")
  abort_input(c(paste0(fn_txt, " ", paste(lines, collapse = " and "),
                       known_txt, "."), hint),
              "argument", call = call)
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
    nrun = check_whole(nrun, "nrun", max = max_runs, call = call),
    max_iter = check_whole(max_iter, "max_iter", call = call),
    tol = check_number(tol, "tol", 0, Inf, call = call),
    seed = check_seed(seed, call = call),
    threads = resolve_threads(threads, call = call),
    verbose = check_flag(verbose, "verbose", call = call)
  )
}

# A vector of class labels (factor, character, logical or whole-number
# codes), without continuous values.
check_labels <- function(x, arg, na_ok = FALSE, call = rlang::caller_env()) {
  ok <- is.atomic(x) && is.null(dim(x)) && length(x) > 0 &&
    (is.factor(x) || is.character(x) || is.logical(x) ||
       (is.numeric(x) && !is.object(x) && all(is.finite(x[!is.na(x)])) &&
          all(abs(x[!is.na(x)] - round(x[!is.na(x)])) == 0)))
  if (!ok) {
    abort_input("{.arg {arg}} must be a vector of class labels (factor, character, logical or whole-number codes), not {describe(x)}{if (is.numeric(x) && length(x)) paste0(' with non-integer values such as ', format(x[!is.na(x) & (!is.finite(x) | abs(x - round(x)) > 0)][1], digits = 15)) else ''}.",
                "argument", arg = arg, call = call)
  }
  if (!na_ok && anyNA(x)) {
    abort_input("{.arg {arg}} must not contain missing labels; it has {sum(is.na(x))} NA{?s} (the first at position {which(is.na(x))[1]}).",
                "value", arg = arg, call = call)
  }
  invisible(x)
}

# expr, its aspectr errors naming `call` (a call, or the frame of one: the
# user's call) instead of the function that raised them (an inner fitter
# or a converter the fitter calls, e.g. as_symtensor() in sntf())
with_error_call <- function(expr, call) {
  if (is.environment(call)) call <- rlang::frame_call(call)
  tryCatch(expr, aspectr_error = function(e) {
    e$call <- call
    stop(e)
  })
}
