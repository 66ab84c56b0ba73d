## bench/common.R -- set-up shared by the benchmark scripts: output helpers,
## installation of bench-only peers (never package dependencies), timing,
## the load of other processes, and the peak memory of a child process.
## Sourced by bench/*.R from the package root.

`%||%` <- function(a, b) if (is.null(a)) b else a
quick <- nzchar(Sys.getenv("ASPECTR_BENCH_QUICK"))
options(width = 200)
# packages come from the CRAN repository R is configured with; a child that
# bench/readme.R starts with --vanilla (no site profile, so no repository)
# gets its parent's through ASPECTR_BENCH_REPOS
if (nzchar(Sys.getenv("ASPECTR_BENCH_REPOS")) && identical(unname(getOption("repos")["CRAN"]), "@CRAN@"))
  options(repos = c(CRAN = Sys.getenv("ASPECTR_BENCH_REPOS")))

heading <- function(...) {
  txt <- paste0(...)
  cat("\n", strrep("=", 78), "\n", txt, "\n", strrep("=", 78), "\n", sep = "")
}
subheading <- function(...) cat("\n--- ", paste0(...), " ---\n", sep = "")
note <- function(...) cat("NOTE: ", paste0(...), "\n", sep = "")

install_quietly <- function(pkgs, ...) {
  tryCatch(withCallingHandlers(
    utils::install.packages(pkgs, Ncpus = 2L, quiet = TRUE, ...),
    warning = function(w) {
      note("installing '", paste(pkgs, collapse = "', '"), "': ", conditionMessage(w))
      invokeRestart("muffleWarning")
    }), error = function(e) note("installing '", paste(pkgs, collapse = "', '"),
                                 "' failed: ", conditionMessage(e)))
}

is_root_debian <- function() {
  identical(unname(Sys.info()[["user"]]), "root") && nzchar(Sys.which("apt-get"))
}
## apt-get install (as root on Debian; refreshes stale package lists once).
apt_install <- function(pkgs) {
  if (!is_root_debian() || !length(pkgs)) return(invisible(FALSE))
  cat(sprintf("apt-get install %s ...\n", paste(pkgs, collapse = " ")))
  run <- function() suppressWarnings(system2("apt-get", c("install", "-y", "-q", "--no-install-recommends", pkgs),
                                              stdout = FALSE, stderr = FALSE,
                                              env = "DEBIAN_FRONTEND=noninteractive"))
  st <- run()
  if (!identical(st, 0L)) {
    suppressWarnings(system2("apt-get", c("update", "-qq"), stdout = FALSE, stderr = FALSE))
    st <- run()
  }
  invisible(identical(st, 0L))
}

## Installs a bench-only peer if missing; TRUE when loadable. `deb`: Debian
## r-cran-* package tried first (as root); `sysreqs`: Debian libraries the
## CRAN source build needs; `archive`: a source tarball in the CRAN archive
## to fall back on, with `deps` from CRAN. ASPECTR_BENCH_NO_INSTALL=1 never
## installs. System libraries the peers need here (Debian): fastTopics
## depends on plotly -> httr -> curl, which needs libcurl4-openssl-dev (its
## missing header is why fastTopics failed to install); NMF needs Biobase,
## a Bioconductor package not on CRAN (Debian's r-bioc-biobase); RcppPlanc
## needs hdf5r (libhdf5-dev) and the system hwloc (libhwloc-dev: it cannot
## download its own here); topicmodels needs the GSL (libgsl-dev).
ensure_peer <- function(pkg, hint = NULL, deb = NULL, sysreqs = NULL, archive = NULL, deps = character()) {
  if (requireNamespace(pkg, quietly = TRUE)) return(TRUE)
  if (nzchar(Sys.getenv("ASPECTR_BENCH_NO_INSTALL"))) {
    note("peer '", pkg, "' is missing and ASPECTR_BENCH_NO_INSTALL is set: skipped.")
    return(FALSE)
  }
  if (!is.null(deb)) apt_install(deb)
  if (requireNamespace(pkg, quietly = TRUE)) return(TRUE)
  if (!is.null(sysreqs)) apt_install(sysreqs)
  cat(sprintf("Installing bench-only peer package '%s' from CRAN ...\n", pkg))
  install_quietly(pkg)
  if (!requireNamespace(pkg, quietly = TRUE) && !is.null(archive)) {
    cat(sprintf("'%s' is not on CRAN for this R; trying the CRAN archive ...\n", pkg))
    miss <- deps[!vapply(deps, requireNamespace, logical(1), quietly = TRUE)]
    if (length(miss)) install_quietly(miss)
    url <- paste0(sub("/$", "", getOption("repos")[["CRAN"]]), "/src/contrib/Archive/", archive)
    install_quietly(url, repos = NULL, type = "source")
  }
  if (requireNamespace(pkg, quietly = TRUE)) return(TRUE)
  note("peer '", pkg, "' is not available and is skipped",
       if (!is.null(hint)) paste0(" (", hint, ")") else "", ".")
  FALSE
}

## The 1-minute load average (timings are only meaningful on an idle machine).
loadavg <- function() {
  if (file.exists("/proc/loadavg")) strsplit(readLines("/proc/loadavg", 1L), " ")[[1]][1] else "?"
}

## Prints package versions, R, BLAS, cores and the mode.
print_environment <- function(pkgs) {
  vers <- vapply(pkgs, function(p) {
    if (requireNamespace(p, quietly = TRUE)) as.character(utils::packageVersion(p)) else "not available"
  }, character(1))
  cat(sprintf("%-14s %s\n", pkgs, vers), sep = "")
  cat(sprintf("R %s; BLAS: %s; cores: %d\n", getRversion(),
              basename(extSoftVersion()[["BLAS"]] %||% "?"), parallel::detectCores()))
  cat(sprintf("mode: %s\n", if (quick) "QUICK (ASPECTR_BENCH_QUICK set)" else "full"))
  cat(sprintf("load average at start: %s\n", paste(utils::head(strsplit(readLines("/proc/loadavg"), " ")[[1]], 3), collapse = " ")))
}

## ASPECTR_BENCH_ONLY: a regular expression of the sections a script runs
## (each script names its sections in its header); unset runs them all.
## bench/readme.R uses it to run only the parts the README's table needs.
bench_want <- function(section) {
  only <- Sys.getenv("ASPECTR_BENCH_ONLY", "")
  !nzchar(only) || grepl(only, section)
}

## Runs one method, turning an error into a printed note (the bench goes
## on); `describe(r)` gives the line printed after a successful run (by
## default the calling script's describe_run()).
try_method <- function(label, expr, describe = describe_run) {
  cat(sprintf("  %-36s ... ", label))
  r <- tryCatch(expr, error = function(e) {
    cat("FAILED\n")
    note(label, " failed: ", conditionMessage(e))
    NULL
  })
  if (!is.null(r)) cat(describe(r), "\n", sep = "")
  r
}

## Wall time of an expression: list(value, time).
elapsed <- function(expr) {
  t0 <- proc.time()[["elapsed"]]
  value <- force(expr)
  list(value = value, time = proc.time()[["elapsed"]] - t0)
}

## Peak memory of running `code` (a character vector of R lines that may use
## the object `x`, read from an RDS file) in a fresh R process: the peak
## resident set size above the RSS before the code (/proc/self/status VmHWM
## after a reset through /proc/self/clear_refs), in MB; NA when unavailable.
child_peak_mb <- function(x, setup, code) {
  rds <- tempfile("bench_x_", fileext = ".rds")
  script <- tempfile("bench_mem_", fileext = ".R")
  on.exit(unlink(c(rds, script)))
  saveRDS(x, rds, compress = FALSE)
  writeLines(c(
    'x <- readRDS(commandArgs(TRUE)[1])',
    'st <- function() { s <- readLines("/proc/self/status")',
    '  g <- function(f) as.numeric(gsub("[^0-9]", "", grep(paste0("^", f, ":"), s, value = TRUE)))',
    '  c(rss = g("VmRSS"), hwm = g("VmHWM")) }',
    setup,
    'invisible(gc())',
    'ok <- tryCatch({ cat("5", file = "/proc/self/clear_refs"); TRUE }, error = function(e) FALSE)',
    'b <- st()',
    code,
    'e <- st()',
    'cat(sprintf("MEM %.1f\\n", if (ok) (e[["hwm"]] - b[["rss"]]) / 1024 else NA))'), script)
  out <- tryCatch(system2(file.path(R.home("bin"), "Rscript"), c("--vanilla", shQuote(script), shQuote(rds)),
                          stdout = TRUE, stderr = FALSE), error = function(e) character())
  line <- grep("^MEM ", out, value = TRUE)
  if (!length(line)) return(NA_real_)
  suppressWarnings(as.numeric(strsplit(line[1], " ")[[1]][2]))
}

## Seconds per iteration of a fit from callback time stamps; `run(cb)`
## calls the fitter with callback = cb (the time between the first and last
## callbacks over the iterations between them; setup = the rest of the call).
per_iteration <- function(run) {
  stamps <- numeric(0)
  cb <- function(iteration, objective, factors) {
    stamps[length(stamps) + 1L] <<- proc.time()[["elapsed"]]
    TRUE
  }
  gc(FALSE)
  t0 <- proc.time()[["elapsed"]]
  fit <- run(cb)
  total <- proc.time()[["elapsed"]] - t0
  n <- length(stamps)
  it <- (stamps[n] - stamps[1]) / (n - 1)
  list(per_iter = it, total = total, setup = total - n * it, iters = n, fit = fit)
}
fmt_s <- function(s) ifelse(is.na(s), "NA", formatC(s, format = "g", digits = 3))

# Two corpora of the topic benchmarks (documents x terms, sparse counts,
# the terms' names as column names): AssociatedPress (topicmodels) and
# Jane Austen's novels (janeaustenr; documents of 60 lines, stop words
# (tidytext) and terms with fewer than 5 tokens removed). A corpus whose
# packages are missing is skipped with a note.
text_corpora <- function() {
  corpora <- list()
  if (requireNamespace("topicmodels", quietly = TRUE) && requireNamespace("slam", quietly = TRUE)) {
    e <- new.env()
    utils::data("AssociatedPress", package = "topicmodels", envir = e)
    ap <- e$AssociatedPress
    corpora$AssociatedPress <- Matrix::sparseMatrix(i = ap$i, j = ap$j, x = as.numeric(ap$v),
                                                    dims = c(ap$nrow, ap$ncol),
                                                    dimnames = list(NULL, ap$dimnames$Terms))
  } else {
    note("topicmodels is not installed: AssociatedPress skipped")
  }
  if (requireNamespace("janeaustenr", quietly = TRUE) && requireNamespace("tidytext", quietly = TRUE)) {
    b <- janeaustenr::austen_books()
    doc <- paste(b$book, ave(seq_along(b$book), b$book, FUN = function(i) (seq_along(i) - 1) %/% 60))
    tok <- strsplit(tolower(b$text), "[^a-z']+")
    d <- rep(doc, lengths(tok))
    w <- unlist(tok)
    keep <- nzchar(w) & !w %in% tidytext::stop_words$word
    d <- d[keep]
    w <- w[keep]
    keep <- w %in% names(which(table(w) >= 5))
    dd <- factor(d[keep])
    ww <- factor(w[keep])
    x <- Matrix::sparseMatrix(i = as.integer(dd), j = as.integer(ww), x = 1, dims = c(nlevels(dd), nlevels(ww)),
                              dimnames = list(NULL, levels(ww)))
    corpora$Austen <- x[Matrix::rowSums(x) > 0, ]
  } else {
    note("janeaustenr or tidytext is not installed: the Austen corpus skipped")
  }
  corpora
}
