#!/usr/bin/env Rscript
## bench/plsa-cd.R -- plsa()'s default KL solver against nmf()'s KL
## coordinate descent, and against the plsa() of another installed version
## of aspectr (the default before plsa() ran nmf()'s rule).
##
## Run from the package root:
##   ASPECTR_BEFORE_LIB=/path/to/other/library Rscript bench/plsa-cd.R
## (ASPECTR_AFTER_LIB: the library of the version under test; default: the
## first library that has aspectr). Without ASPECTR_BEFORE_LIB the "before"
## row is skipped.
##
## What is compared. On AssociatedPress (topicmodels, k = 20) and a corpus of
## Jane Austen's novels (janeaustenr, documents of 60 lines, stop words and
## terms with fewer than 5 tokens removed, k = 20), every method starts from
## the same random start (plsa()'s draw with seed 1; for nmf(), W = U
## diag(lambda) sum(X), H = V') and is scored by D(G || P) (plsa()'s
## objective; nmf()'s generalized divergence divided by sum(X), which is
## that when sum(W H) = sum(X), as its coordinate descent keeps it). First
## every method runs `LONG` iterations (tol = 0) for its trace; the target
## is the largest of their objectives after `AT` iterations (every method
## reaches it by then). Then each method is timed with max_iter = the
## iterations it needs to reach the target (tol = 0), whole calls
## (input conversion included), each in a fresh R process, the methods
## interleaved, `REPS` rounds; the minimum is reported (the machine may be
## shared). Before the timed call each process makes the same call once
## with max_iter = 1 (a warm-up, alike for every method): the package's R
## code is not byte-compiled at installation (ByteCompile: no), so R's JIT
## compiles each function at its first call in a session, a cost of the
## session (tens of milliseconds, larger for a longer R path), not of
## the solver; ASPECTR_BENCH_COLD=1 times the first call instead. Threads: ASPECTR_BENCH_THREADS (default 1); ASPECTR_BENCH_LONG,
## ASPECTR_BENCH_AT and ASPECTR_BENCH_REPS set LONG, AT and REPS.

args <- commandArgs(trailingOnly = TRUE)
`%||%` <- function(a, b) if (is.null(a)) b else a
LONG <- as.integer(Sys.getenv("ASPECTR_BENCH_LONG", "120"))
AT <- as.integer(Sys.getenv("ASPECTR_BENCH_AT", "60"))
REPS <- as.integer(Sys.getenv("ASPECTR_BENCH_REPS", "3"))
THREADS <- as.integer(Sys.getenv("ASPECTR_BENCH_THREADS", "1"))
K <- 20L

## ---- worker: one fit in this process, printed as one line ------------------
if (length(args) && args[1] == "--worker") {
  corpus <- args[2]; method <- args[3]; iters <- as.integer(args[4]); datafile <- args[5]
  suppressPackageStartupMessages(library(aspectr))
  x <- readRDS(datafile)[[corpus]]
  st <- aspectr:::with_seed(1, aspectr:::random_start(dim(x), K))
  S <- sum(x)
  fit <- function(iters) {
    if (method == "nmf") {
      f <- nmf(x, K, loss = "kl", method = "cd", max_iter = iters, tol = 0, threads = THREADS,
               init = list(W = st$factors[[1]] * rep(st$lambda * S, each = nrow(x)), H = t(st$factors[[2]])))
      f$objective / S
    } else {
      plsa(x, K, init = st, max_iter = iters, tol = 0, threads = THREADS)$objective
    }
  }
  if (!nzchar(Sys.getenv("ASPECTR_BENCH_COLD"))) suppressWarnings(suppressMessages(invisible(fit(1))))
  t <- system.time(obj <- fit(iters))[["elapsed"]]
  cat("RESULT", t, format(obj, digits = 17), "\n")
  quit(save = "no")
}

## ---- driver ------------------------------------------------------------------
source("bench/common.R")
lib_of <- function(v, default) { p <- Sys.getenv(v, default); if (nzchar(p)) p else NULL }
after_lib <- lib_of("ASPECTR_AFTER_LIB", dirname(find.package("aspectr")))
before_lib <- lib_of("ASPECTR_BEFORE_LIB", "")
libs <- c(before = before_lib, after = after_lib, nmf = after_lib)
cat("aspectr plsa() vs nmf() KL coordinate descent (bench/plsa-cd.R)\n")
cat("libraries: before =", before_lib %||% "(none)", "; after and nmf =", after_lib, "\n")
ver <- function(lib) {
  out <- system2("Rscript", c("-e", shQuote("cat(as.character(packageVersion('aspectr')))")),
                 env = paste0("R_LIBS=", lib), stdout = TRUE)
  out[length(out)]
}
for (m in names(libs)) if (!is.null(libs[[m]])) cat(m, ": aspectr", ver(libs[[m]]), "\n")
cat("threads:", THREADS, "; LONG =", LONG, "; AT =", AT, "; REPS =", REPS,
    if (nzchar(Sys.getenv("ASPECTR_BENCH_COLD"))) "; cold (the first call of the session timed)" else "; warm-up call before the timed one", "\n")
cat(sprintf("load average at start: %s\n", paste(readLines("/proc/loadavg"), collapse = " ")))

## the corpora (documents x terms, sparse counts)
suppressPackageStartupMessages(library(Matrix))
corpora <- text_corpora()
datafile <- tempfile(fileext = ".rds")
saveRDS(corpora, datafile)
for (nm in names(corpora)) {
  x <- corpora[[nm]]
  cat(sprintf("%s: %d x %d, %d non-zeros, %g tokens\n", nm, nrow(x), ncol(x), length(x@x), sum(x)))
}

run <- function(corpus, method, iters) {
  out <- system2("Rscript", c("bench/plsa-cd.R", "--worker", corpus, method, iters, datafile),
                 env = paste0("R_LIBS=", libs[[method]]), stdout = TRUE, stderr = FALSE)
  line <- grep("^RESULT", out, value = TRUE)
  if (!length(line)) stop("a run failed: ", paste(out, collapse = "\n"))
  v <- scan(text = sub("^RESULT", "", line), quiet = TRUE)
  list(time = v[1], objective = v[-1])
}

methods <- names(libs)[!vapply(libs, is.null, logical(1))]
for (corpus in names(corpora)) {
  cat("\n=== ", corpus, " (k = ", K, ") ===\n", sep = "")
  traces <- lapply(setNames(methods, methods), function(m) run(corpus, m, LONG)$objective)
  target <- max(vapply(traces, function(o) o[min(AT, length(o))], numeric(1)))
  need <- vapply(traces, function(o) which(o <= target)[1], integer(1))
  cat(sprintf("target D(G || P) = %.10g (the largest objective after %d iterations)\n", target, AT))
  cat(sprintf("objective after %d iterations: %s\n", LONG,
              paste(sprintf("%s %.10g", methods, vapply(traces, function(o) o[length(o)], 0)), collapse = ", ")))
  times <- matrix(NA_real_, REPS, length(methods), dimnames = list(NULL, methods))
  for (r in seq_len(REPS)) for (m in methods) times[r, m] <- run(corpus, m, need[[m]])$time
  best <- apply(times, 2, min)
  cat(sprintf("%-7s %10s %12s %12s %10s\n", "method", "iterations", "time (s)", "s/iteration", "vs nmf"))
  for (m in methods) {
    cat(sprintf("%-7s %10d %12.3f %12.4f %10.2f\n", m, need[[m]], best[[m]], best[[m]] / need[[m]],
                best[[m]] / best[["nmf"]]))
  }
  cat("all times (s):\n"); print(round(times, 3))
}
cat(sprintf("\nload average at end: %s\n", paste(readLines("/proc/loadavg"), collapse = " ")))
