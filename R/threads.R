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
#' @section Forked processes:
#' A process forked after aspectr was loaded (the workers of
#' [parallel::mclapply()], [parallel::mcparallel()] and
#' [parallel::makeForkCluster()], future's `multicore` plans) fits on one
#' thread, whatever `threads` or the option asks: the GNU OpenMP runtime
#' does not survive `fork()`, and a parallel region in the child of a
#' process that has run one waits forever. There `default_threads()`
#' returns 1 and fits record `threads = 1`; their results are those of
#' `threads = 1` in the parent. To use several cores for several fits, fork
#' one process per fit as above (each fit single-threaded), or use a socket
#' cluster ([parallel::makePSOCKcluster()], `future::multisession`) whose
#' workers are fresh processes and use threads as usual. Only forks made
#' after aspectr was loaded are seen: load it (`library(aspectr)`) before
#' forking when the parent runs OpenMP code of other packages.
#'
#' @return A positive integer.
#' @aliases threads
#' @examples
#' default_threads()
#' @export
default_threads <- function() {
  if (forked_child()) return(1L)
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
  threads <- check_whole(threads, "threads", min = 1, call = call)
  # one thread in a forked child (see ?threads); the core holds its parallel
  # regions to one thread there too (for calls that reach it directly, such
  # as a fork cluster's shard operations)
  if (forked_child()) 1L else threads
}

# Whether this R process is a child forked after the package was loaded.
forked_child <- function() cpp_forked_child()

# parallel::detectCores() runs a shell command on Linux (about 15 ms, more
# than a whole small fit): asked once per session.
the_cores <- new.env(parent = emptyenv())
detected_cores <- function() {
  if (is.null(the_cores$n)) the_cores$n <- parallel::detectCores()
  the_cores$n
}
