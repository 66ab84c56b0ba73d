#!/usr/bin/env Rscript
## bench/plsa-prior.R -- plsa() with a Dirichlet prior (MAP estimation):
## coordinate descent, EM and SQUAREM-extrapolated EM to the same value of
## the objective (the negative log posterior over the total count).
##
## Run from the package root with aspectr installed:
##   Rscript bench/plsa-prior.R
## (ASPECTR_BENCH_QUICK=1: the first 600 documents of each corpus, k = 10.)
##
## Protocol. AssociatedPress (topicmodels) and a corpus of Jane Austen's
## novels (janeaustenr; documents of 60 lines, stop words and terms with
## fewer than 5 tokens removed), k = 20, and the State of the Union
## addresses shipped with aspectr (sotu_dtm), k = 6. Priors: the same pseudo-count for
## the terms and the documents (0.1, 1, 10), a large documents' prior
## alone (100), the terms' alone (0.1, 1), two guided topics (seeds,
## three or four terms each, the default seeds_weight), and those with
## 0.1 on the terms and 0.5 on the documents (the tidy-text vignette's
## guided fit). Every method starts from the same random start (plsa()'s
## draw with seed = 1, which for guided topics puts half of each one's
## term distribution on its terms). First each method runs LONG iterations (tol = 0) for
## its trace; the target is the largest objective of coordinate descent and
## SQUAREM after AT iterations. Then each method is timed with max_iter =
## the iterations it needs to reach the target (tol = 0), whole calls, the
## methods interleaved, REPS rounds in this process; the minimum is
## reported. A method that does not reach the target in LONG iterations is
## marked so. ASPECTR_BENCH_LONG, ASPECTR_BENCH_AT, ASPECTR_BENCH_REPS set
## LONG, AT and REPS.
##
## Measured (bench/results/plsa-prior-2026-11-30.txt): with a prior on the
## documents SQUAREM took 0.03-0.81 of coordinate descent's time to the
## target (15 of 15; 0.03 with 100 on the documents of AssociatedPress and
## Austen), with the terms' alone 0.16-3.45 (coordinate descent faster in
## 4 of 6), for guided topics alone 1.79-3.57. After 300 iterations from
## the same start either method may hold the lower objective. The default
## stays coordinate descent: the tidy-text vignette's guided fit (its own
## document-term matrix, seed 1, tol = 1e-6) converged to a lower
## objective by coordinate descent (1.14935 in 60 iterations, 0.66 s) than
## by SQUAREM (1.15242 in 51, 0.52 s), whose currency topic then took the
## Mexican war's terms; ?plsa gives these figures.

source("bench/common.R")
suppressPackageStartupMessages({
  library(aspectr)
  library(Matrix)
})
LONG <- as.integer(Sys.getenv("ASPECTR_BENCH_LONG", "300"))
AT <- as.integer(Sys.getenv("ASPECTR_BENCH_AT", "60"))
REPS <- as.integer(Sys.getenv("ASPECTR_BENCH_REPS", "3"))
K <- if (quick) 10L else 20L
cat("plsa() with a prior: coordinate descent, EM and SQUAREM (bench/plsa-prior.R)\n")
cat("aspectr", as.character(packageVersion("aspectr")), "from", dirname(find.package("aspectr")), "\n")
cat("k =", K, "(SOTU: 6); LONG =", LONG, "; AT =", AT, "; REPS =", REPS, if (quick) "; quick" else "", "\n")
cat(sprintf("load average at start: %s\n", paste(readLines("/proc/loadavg"), collapse = " ")))

corpora <- text_corpora()
## the State of the Union addresses shipped with aspectr (the tidy-text
## vignette's corpus), fitted with fewer topics
corpora$SOTU <- aspectr::sotu_dtm
if (quick) corpora <- lapply(corpora, function(x) { x <- x[seq_len(min(600, nrow(x))), ]; x[, colSums(x) > 0] })
ks <- c(AssociatedPress = K, Austen = K, SOTU = 6L)
## (ASPECTR_BENCH_CORPORA: a regular expression choosing some by name)
if (nzchar(Sys.getenv("ASPECTR_BENCH_CORPORA")))
  corpora <- corpora[grepl(Sys.getenv("ASPECTR_BENCH_CORPORA"), names(corpora))]
for (nm in names(corpora)) {
  x <- corpora[[nm]]
  cat(sprintf("%s: %d x %d, %d non-zeros, %g tokens\n", nm, nrow(x), ncol(x), length(x@x), sum(x)))
}

## (each: plsa()'s prior, or seeds: guided topics, whose terms get
## pseudo-counts, with the default seeds_weight)
priors <- list("terms = documents = 0.1" = 0.1, "terms = documents = 1" = 1, "terms = documents = 10" = 10,
               "documents = 100" = list(documents = 100), "terms = 0.1" = list(terms = 0.1),
               "terms = 1" = list(terms = 1), "seeds" = "seeds",
               "seeds, terms = 0.1, documents = 0.5" = list(seeds = TRUE, prior = list(terms = 0.1, documents = 0.5)))
## (ASPECTR_BENCH_PRIORS: a regular expression choosing some of them by name)
if (nzchar(Sys.getenv("ASPECTR_BENCH_PRIORS")))
  priors <- priors[grepl(Sys.getenv("ASPECTR_BENCH_PRIORS"), names(priors))]
seeds <- list(AssociatedPress = list(economy = c("economy", "inflation", "budget", "prices"),
                                     courts = c("court", "judge", "jury", "trial")),
              Austen = list(money = c("money", "fortune", "pounds", "income"),
                            family = c("father", "mother", "sister", "brother")),
              SOTU = list(economy = c("inflation", "budget", "percent"), currency = c("gold", "silver", "currency")))
methods <- c("cd", "squarem", "em")
fit <- function(x, pr, m, iters) {
  sd <- NULL
  if (identical(pr, "seeds") || (is.list(pr) && isTRUE(pr$seeds))) {
    sd <- lapply(seeds[[nm]], intersect, colnames(x))
    pr <- if (is.list(pr)) pr$prior
  }
  t <- system.time(f <- plsa(x, ks[[nm]], method = m, prior = pr, seeds = sd, seed = 1, max_iter = iters,
                             tol = 0))[["elapsed"]]
  list(time = t, objective = f$objective)
}
summary_rows <- list()
for (nm in names(corpora)) {
  x <- corpora[[nm]]
  for (pn in names(priors)) {
    pr <- priors[[pn]]
    cat("\n=== ", nm, " (k = ", ks[[nm]], "), prior: ", pn, " ===\n", sep = "")
    traces <- lapply(setNames(methods, methods), function(m) fit(x, pr, m, LONG)$objective)
    target <- max(vapply(traces[c("cd", "squarem")], function(o) o[min(AT, length(o))], numeric(1)))
    need <- vapply(traces, function(o) { i <- which(o <= target)[1]; i },
                   integer(1))
    cat(sprintf("target %.10g (the larger of cd's and SQUAREM's objectives after %d iterations)\n", target, AT))
    cat(sprintf("objective after %d iterations: %s\n", LONG,
                paste(sprintf("%s %.10g", methods, vapply(traces, function(o) o[length(o)], 0)), collapse = ", ")))
    times <- matrix(NA_real_, REPS, length(methods), dimnames = list(NULL, methods))
    for (r in seq_len(REPS)) for (m in methods) if (!is.na(need[[m]])) times[r, m] <- fit(x, pr, m, need[[m]])$time
    best <- apply(times, 2, function(v) if (all(is.na(v))) NA_real_ else min(v, na.rm = TRUE))
    cat(sprintf("%-8s %10s %10s %10s\n", "method", "iterations", "time (s)", "vs cd"))
    for (m in methods) {
      if (is.na(need[[m]])) cat(sprintf("%-8s %10s %10s %10s\n", m, paste0(">", LONG), "-", "-"))
      else cat(sprintf("%-8s %10d %10.3f %10.2f\n", m, need[[m]], best[[m]], best[[m]] / best[["cd"]]))
    }
    summary_rows[[length(summary_rows) + 1]] <- data.frame(corpus = nm, prior = pn, t(best), check.names = FALSE)
  }
}
cat("\n=== time to the target (s), minima ===\n")
s <- do.call(rbind, summary_rows)
s$`squarem / cd` <- round(s$squarem / s$cd, 2)
print(s, row.names = FALSE)
cat(sprintf("\nload average at end: %s\n", paste(readLines("/proc/loadavg"), collapse = " ")))
