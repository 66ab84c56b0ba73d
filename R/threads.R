#' Number of threads used by default
#'
#' `threads = NULL` in every fitting function means
#' `getOption("aspectr.threads")` when set; otherwise 2 during
#' `R CMD check` (when `_R_CHECK_LIMIT_CORES_` is set) and all detected cores
#' elsewhere, in both cases at most the OpenMP limits `OMP_THREAD_LIMIT`
#' and `OMP_NUM_THREADS` when those environment variables are set (a
#' cluster scheduler or a parallel caller sets them to keep processes from
#' oversubscribing the machine). The option wins over the environment.
#' Results are reproducible for a given seed and thread count; different
#' thread counts agree up to floating-point summation order.
#'
#' @return A positive integer.
#' @examples
#' default_threads()
#' @export
default_threads <- function() {
  opt <- getOption("aspectr.threads")
  if (!is.null(opt)) return(check_whole(opt, "options(aspectr.threads)"))
  lim <- Sys.getenv("_R_CHECK_LIMIT_CORES_", "")
  n <- if (nzchar(lim) && !identical(tolower(lim), "false")) 2L else detected_cores()
  if (is.na(n) || n < 1) n <- 1L
  for (v in c("OMP_THREAD_LIMIT", "OMP_NUM_THREADS")) {
    # OMP_NUM_THREADS may be a list ("4,2"): its first level applies
    e <- suppressWarnings(as.integer(strsplit(Sys.getenv(v, ""), ",", fixed = TRUE)[[1]][1]))
    if (length(e) == 1 && !is.na(e) && e >= 1) n <- min(n, e)
  }
  as.integer(n)
}

resolve_threads <- function(threads, call = rlang::caller_env()) {
  if (is.null(threads)) return(default_threads())
  check_whole(threads, "threads", min = 1, call = call)
}

# parallel::detectCores() runs a shell command on Linux (about 15 ms, more
# than a whole small fit): asked once per session.
the_cores <- new.env(parent = emptyenv())
detected_cores <- function() {
  if (is.null(the_cores$n)) the_cores$n <- parallel::detectCores()
  the_cores$n
}
