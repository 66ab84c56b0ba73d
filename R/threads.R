#' Number of threads used by default
#'
#' `threads = NULL` in every fitting function means
#' `getOption("aspectr.threads")` when set; otherwise 2 during
#' `R CMD check` (when `_R_CHECK_LIMIT_CORES_` is set) and all detected cores
#' elsewhere. Results are reproducible for a given seed and thread count;
#' different thread counts agree up to floating-point summation order.
#'
#' @return A positive integer.
#' @examples
#' default_threads()
#' @export
default_threads <- function() {
  opt <- getOption("aspectr.threads")
  if (!is.null(opt)) return(check_whole(opt, "options(aspectr.threads)"))
  lim <- Sys.getenv("_R_CHECK_LIMIT_CORES_", "")
  if (nzchar(lim) && !identical(tolower(lim), "false")) return(2L)
  n <- parallel::detectCores()
  if (is.na(n) || n < 1) 1L else as.integer(n)
}

resolve_threads <- function(threads, call = rlang::caller_env()) {
  if (is.null(threads)) return(default_threads())
  check_whole(threads, "threads", min = 1, call = call)
}
