#!/usr/bin/env Rscript
## bench/scale.R -- data beyond one object: out-of-core and cluster fits of
## plsa() and nmf() (Frobenius and KL) on data split into shards, against
## the in-memory fit of the same data. Every fit is the same call with the
## defaults (plsa(): KL coordinate descent; nmf(): NNDSVD start, extrapolated
## HALS; nmf(loss = "kl"): coordinate descent), which gives the same fit on
## every backend.
##
## Run from the package root:   Rscript bench/scale.R
##
## Data (seeded): a synthetic corpus of 8 shards of 25000 documents x 20000
## terms, each with about 3.6e6 non-zeros (4.5e6 draws; Zipf-like term
## frequencies, Poisson counts): 200000 x 20000 with about 2.9e7 non-zeros,
## over 4x the out-of-core fit's peak memory, written by
## write_shards() as .shard files (and, for the in-memory fit, as .rds
## files of dgCMatrix pieces). k = 20. Every measurement
## runs in a fresh R process (the files then sit in the page cache):
##  * in memory: the shards read and bound into one dgCMatrix, then
##    plsa(x);
##  * out of core: plsa(shards(files)) without a cluster (one shard read at
##    a time, in every iteration);
##  * cluster: plsa(shards(files), cluster = shard_cluster(2)) (PSOCK
##    workers with TCP's no-delay option, see ?shard_cluster), each worker
##    reading its 4 shards once.
## Peak memory is the peak RSS of the process (the master, for the cluster)
## minus the RSS of a session with aspectr loaded; time per iteration is
## the shortest time between the progress messages of iterations 2 to 2 + n
## (verbose = TRUE, a message every iteration); time to the target is the
## time from the call to the last iteration's message, the target being the
## divergence all the fits reach there (the same fit: the report checks
## that the final objectives agree). Every fit uses 1 thread
## per process, and runs twice, interleaved with the others (the minimum
## time and the largest peak are reported).
##
## The last table extrapolates on paper, from the measured cost per
## non-zero and the bytes one iteration moves, to 1e10 non-zeros on many
## workers over a 10 Gb/s network.
##
## ASPECTR_BENCH_QUICK=1 divides the data by 10 (and n = 3);
## ASPECTR_BENCH_SCALE=0.25 runs a quarter of the full size (any fraction);
## ASPECTR_BENCH_ROUNDS=4 runs every fit 4 times (default 2);
## ASPECTR_BENCH_ONLY="plsa|nmf|kl|factors" picks sections (plsa(),
## nmf() by Frobenius HALS, nmf() by KL coordinate descent, and plsa() on
## the cluster with the documents' factor gathered or written by the
## workers with factor_dir).

source("bench/common.R")

heading("aspectr beyond one object: out-of-core and cluster fits (bench/scale.R)")
if (!requireNamespace("aspectr", quietly = TRUE)) stop("aspectr is not installed (R CMD INSTALL . from the package root).")
print_environment(character())
if (!file.exists("/proc/self/status")) {
  note("/proc/self/status is not available: peak memory cannot be measured here.")
  quit(save = "no")
}

## ASPECTR_BENCH_SCALE: the fraction of the full size to run (documents
## and non-zeros per shard; default 1, 0.1 when quick)
scale <- as.numeric(Sys.getenv("ASPECTR_BENCH_SCALE", if (quick) "0.1" else "1"))
n_shards <- 8
docs <- round(25000 * scale)
terms <- 20000
nnz_per <- round(4.5e6 * scale)
k <- 20
n_more <- if (quick) 3 else 8

dir <- tempfile("aspectr_scale_")
dir.create(dir)
# (under the session's temporary directory: removed when R exits; no
# on.exit() here, which would remove it at once when this file is sourced)
set.seed(20261126)
zipf <- 1 / seq_len(terms)^0.9
rds <- file.path(dir, sprintf("part%02d.rds", seq_len(n_shards)))
for (s in seq_len(n_shards)) {
  m <- Matrix::sparseMatrix(i = sample.int(docs, nnz_per, TRUE),
                            j = sample.int(terms, nnz_per, TRUE, prob = zipf),
                            x = stats::rpois(nnz_per, 1.5) + 1, dims = c(docs, terms))
  saveRDS(m, rds[s], compress = FALSE)
  aspectr::write_shards(list(m), dir, prefix = sprintf("part%02d_", s))
}
rm(m)
invisible(gc())
files <- file.path(dir, sprintf("part%02d_1.shard", seq_len(n_shards)))
shard_mb <- max(file.size(files)) / 1e6
total_mb <- sum(file.size(files)) / 1e6
nnz_total <- aspectr::nnz(aspectr::shards(files))
cat(sprintf("data: %d shards, %d x %d, %.3g non-zeros; %.0f MB in .shard files (largest %.0f MB)\n",
            n_shards, n_shards * docs, terms, nnz_total, total_mb, shard_mb))

# One measurement in a fresh R process: `code` defines fit(iters) and its
# setup; prints peak MB beyond the loaded session and the times.
child <- function(setup, fit_call) {
  script <- tempfile("bench_scale_", fileext = ".R")
  on.exit(unlink(script))
  writeLines(c(
    'files <- commandArgs(TRUE)',
    'rds <- sub("_1[.]shard$", ".rds", files)',
    paste0('k <- ', k, '; n_more <- ', n_more),
    'st <- function() { s <- readLines("/proc/self/status")',
    '  g <- function(f) as.numeric(gsub("[^0-9]", "", grep(paste0("^", f, ":"), s, value = TRUE)))',
    '  c(rss = g("VmRSS"), hwm = g("VmHWM")) }',
    'suppressMessages(library(aspectr))',
    # warm-up: the first fit maps code into memory
    'w <- Matrix::rsparsematrix(50, 40, 0.2, rand.x = function(n) rpois(n, 2) + 1)',
    'invisible(plsa(shards(list(w[1:25, ], w[26:50, ])), 2, max_iter = 2, seed = 1, threads = 1))',
    'invisible(plsa(w, 2, method = "em", max_iter = 2, seed = 1, threads = 1))',
    'invisible(gc())',
    'ok <- tryCatch({ cat("5", file = "/proc/self/clear_refs"); TRUE }, error = function(e) FALSE)',
    'b <- st()',
    setup,
    # one fit; a time stamp at every iteration's progress message
    'options(aspectr.progress_interval = 0); stamps <- numeric(0)',
    paste0('t0 <- proc.time()[["elapsed"]]; fn <- withCallingHandlers(', sprintf(fit_call, "2 + n_more"),
           ', aspectr_message_progress = function(m) { stamps <<- c(stamps, proc.time()[["elapsed"]]); invokeRestart("muffleMessage") })'),
    'e <- st()',
    'stopifnot(fn$iterations == 2 + n_more)',
    'per_it <- min(diff(stamps[seq_len(2 + n_more)])[-1])',
    'cat(sprintf("RESULT %.1f %.4f %.4f %.10g %.4f\\n", if (ok) (e[["hwm"]] - b[["rss"]]) / 1024 else NA, stamps[1] - t0, per_it, fn$value, stamps[2 + n_more] - t0))'),
    script)
  out <- system2(file.path(R.home("bin"), "Rscript"), c("--vanilla", shQuote(script), shQuote(files)),
                 stdout = TRUE, stderr = TRUE)
  line <- grep("^RESULT ", out, value = TRUE)
  if (!length(line)) {
    cat(out, sep = "\n")
    return(c(NA, NA, NA, NA, NA))
  }
  as.numeric(strsplit(line[1], " ")[[1]][-1])
}

# Each fit runs `rounds` times, the fits interleaved (all fits once, then
# again), so that the machine's load falls on all of them alike; the time
# per iteration reported is the minimum over iterations and rounds, the
# peak memory the largest over rounds. ASPECTR_BENCH_ROUNDS sets the count
# (more rounds give steadier minima on a shared machine).
rounds <- as.integer(Sys.getenv("ASPECTR_BENCH_ROUNDS", if (quick) "1" else "2"))

# ASPECTR_BENCH_ONLY: a regular expression of the sections to run ("plsa",
# "nmf" for Frobenius HALS, "kl" for KL coordinate descent; bench/common.R)
want <- bench_want
# the figures of each section, kept for bench/readme.R (per fit: peak MB,
# s to the first iteration, s per iteration, final objective)
scale_res <- list()

# The three nmf() fits' figures: objectives, time ratios
report_nmf <- function(res) {
  vals <- vapply(res, function(v) v[4], numeric(1))
  per <- vapply(res, `[`, numeric(1), 3)
  cat(sprintf("final objectives agree to %.2g (relative)\n", diff(range(vals)) / abs(vals[1])))
  tt <- vapply(res, `[`, numeric(1), 5)
  cat(sprintf("time per iteration, out of core / in memory: %.2f (target: at most 1.3); 2 workers speedup over in memory: %.2fx, over out of core: %.2fx (target: at least 1.7x)\n",
              per[2] / per[1], per[1] / per[3], per[2] / per[3]))
  cat(sprintf("time to the target: %.2f s in memory, %.2f s out of core (%.2fx), %.2f s on 2 workers (%.2fx)\n",
              tt[1], tt[2], tt[2] / tt[1], tt[3], tt[3] / tt[1]))
  cat(sprintf("peak beyond the session: %.0f MB in memory, %.0f MB out of core, %.0f MB on the cluster's master\n",
              res[[1]][1], res[[2]][1], res[[3]][1]))
}
run_interleaved <- function(runs) {
  all <- lapply(runs, function(r) NULL)
  for (round in seq_len(rounds)) {
    for (i in seq_along(runs)) {
      v <- child(runs[[i]][[2]], runs[[i]][[3]])
      cat(sprintf("  %-26s peak %7.1f MB beyond the session, %6.2f s to the first iteration (with setup), %.3f s per iteration, %.2f s to the target (round %d)\n",
                  runs[[i]][[1]], v[1], v[2], v[3], v[5], round))
      all[[i]] <- rbind(all[[i]], v)
    }
  }
  out <- lapply(all, function(m) c(max(m[, 1]), min(m[, 2]), min(m[, 3]), m[1, 4], min(m[, 5])))
  names(out) <- vapply(runs, `[[`, "", 1)
  out
}

if (want("plsa")) {
  runs <- list(
    list("in memory (1 process)",
         'x <- do.call(rbind, lapply(rds, readRDS)); invisible(gc())',
         'plsa(x, k, max_iter = %s, tol = 0, seed = 1, threads = 1, verbose = TRUE)'),
    list("out of core (1 process)",
         'sh <- shards(files)',
         'plsa(sh, k, max_iter = %s, tol = 0, seed = 1, threads = 1, verbose = TRUE)'),
    list("cluster, 2 PSOCK workers",
         paste('sh <- shards(files); cl <- aspectr::shard_cluster(2); invisible(parallel::clusterCall(cl, function(p) .libPaths(p), .libPaths()))',
               # the workers load aspectr before the timed fits
               'invisible(plsa(shards(list(w[1:25, ], w[26:50, ])), 2, max_iter = 2, seed = 1, threads = 1, cluster = cl))', sep = "; "),
         'plsa(sh, k, max_iter = %s, tol = 0, seed = 1, threads = 1, cluster = cl, verbose = TRUE)')
  )
  res <- scale_res$plsa <- run_interleaved(runs)
  vals <- vapply(res, function(v) v[4], numeric(1))
  cat(sprintf("final objectives agree to %.2g (relative)\n", diff(range(vals)) / abs(vals[1])))

  mem <- vapply(res, `[`, numeric(1), 1)
  per_it <- vapply(res, `[`, numeric(1), 3)
  factors_mb <- (n_shards * docs + terms) * k * 8 / 1e6
  heading("Out of core")
  tab <- data.frame(
    fit = names(res)[1:2],
    peak_MB = round(mem[1:2], 1),
    s_per_iteration = round(per_it[1:2], 3),
    stringsAsFactors = FALSE)
  print(tab, row.names = FALSE)
  budget <- shard_mb + factors_mb
  cat(sprintf("\nout-of-core peak / in-memory peak: %.2f\n", mem[2] / mem[1]))
  cat(sprintf("one shard (%.0f MB) + factors (%.0f MB) = %.0f MB; out-of-core peak is %.2fx that (target: at most 1.2x)\n",
              shard_mb, factors_mb, budget, mem[2] / budget))
  cat(sprintf("data / out-of-core peak: %.1fx (the data is that many times the memory the fit needed)\n",
              total_mb / mem[2]))
  cat(sprintf("time per iteration, out of core / in memory: %.2f (target: at most 1.3)\n", per_it[2] / per_it[1]))
  tt <- vapply(res, `[`, numeric(1), 5)
  cat(sprintf("time to the target: %.2f s in memory, %.2f s out of core (%.2fx), %.2f s on 2 workers (%.2fx)\n",
              tt[1], tt[2], tt[2] / tt[1], tt[3], tt[3] / tt[1]))

  heading("Cluster: 2 local PSOCK workers vs 1 process")
  # bytes moved per iteration: the step's message to each worker (weights,
  # the term factor and the documents' column sums) and its reply (the term
  # statistics, column sums, weights, values), serialized as the cluster
  # sends them
  msg_out <- length(serialize(list(global = list(dims = c(n_shards * docs, terms), tempering = 1, threads = 1,
                                                 total = 1, top = 1, scaled = 1, lambda = numeric(k),
                                                 factors = list(matrix(0, terms, k))),
                                   colsum = numeric(k)), NULL))
  msg_back <- length(serialize(list(y = list(matrix(0, terms, k)), colsum = numeric(k), lam = numeric(k),
                                    value = 0, merit = 0, glogg = 0), NULL))
  cat(sprintf("speedup over the in-memory fit: %.2fx; over the out-of-core fit: %.2fx (target: at least 1.7x)\n",
              per_it[1] / per_it[3], per_it[2] / per_it[3]))
  cat(sprintf("time per iteration: %.3f s (1 process, in memory), %.3f s (2 workers)\n", per_it[1], per_it[3]))
  cat(sprintf("bytes moved per iteration: %.2f MB (%.2f MB out and %.2f MB back per worker)\n",
              2 * (msg_out + msg_back) / 1e6, msg_out / 1e6, msg_back / 1e6))
  cat(sprintf("master's peak memory with the cluster: %.1f MB (the data stays with the workers)\n", mem[3]))

  heading("On paper: 1e10 non-zeros, k = 100, 1e5 terms, 10 Gb/s")
  # compute scales with nnz * k; per worker and iteration the master
  # sends and receives k x terms doubles; a flat reduce moves them over the
  # master's link one worker after another, a tree reduce in log2(P) rounds
  c_nnz <- per_it[1] / nnz_total / k  # seconds per non-zero and component
  big_nnz <- 1e10; big_k <- 100; big_terms <- 1e5; link <- 10e9 / 8
  bytes_w <- 2 * big_k * big_terms * 8
  paper <- do.call(rbind, lapply(c(16, 64, 256), function(P) {
    comp <- c_nnz * big_nnz * big_k / P
    flat <- P * bytes_w / link
    tree <- ceiling(log2(P)) * bytes_w / link
    data.frame(workers = P, compute_s = round(comp, 1), reduce_flat_s = round(flat, 1),
               reduce_tree_s = round(tree, 2), iteration_flat_s = round(comp + flat, 1))
  }))
  print(paper, row.names = FALSE)
  P_star <- sqrt(c_nnz * big_nnz * big_k * link / bytes_w)
  cat(sprintf("\nmeasured cost: %.3g s per non-zero and component; %.0f MB per worker per iteration\n",
              c_nnz, bytes_w / 1e6))
  cat(sprintf("the flat reduce costs as much as the computation from about %.0f workers on\n", P_star))
}

# The same call on every backend, with the defaults (NNDSVD's start, the
# extrapolated HALS), is the same fit. Out of core, every iteration reads
# each shard for each product; on the cluster each worker keeps its shards
# and their rows of W.
nmf_runs <- list(
  list("in memory (1 process)",
       'x <- do.call(rbind, lapply(rds, readRDS)); invisible(gc())',
       'nmf(x, k, max_iter = %s, tol = 0, seed = 1, threads = 1, verbose = TRUE)'),
  list("out of core (1 process)",
       'sh <- shards(files)',
       'nmf(sh, k, max_iter = %s, tol = 0, seed = 1, threads = 1, verbose = TRUE)'),
  list("cluster, 2 PSOCK workers",
       paste('sh <- shards(files); cl <- aspectr::shard_cluster(2); invisible(parallel::clusterCall(cl, function(p) .libPaths(p), .libPaths()))',
             'invisible(nmf(shards(list(w[1:25, ], w[26:50, ])), 2, max_iter = 2, seed = 1, threads = 1, cluster = cl))', sep = "; "),
       'nmf(sh, k, max_iter = %s, tol = 0, seed = 1, threads = 1, cluster = cl, verbose = TRUE)')
)
if (want("nmf")) {
  heading("nmf() (Frobenius HALS: the defaults, NNDSVD start and extrapolation) on the same shards")
  report_nmf(scale_res$nmf <- run_interleaved(nmf_runs))
}

if (want("kl")) {
  heading("nmf(loss = \"kl\") (coordinate descent, NNDSVD start) on the same shards")
  # The master solves H's columns in passes over the shards (k + 1 or more
  # per iteration, each moving three sums per column); each shard updates
  # its rows of W. Out of core, every pass reads each shard once (v = W H at
  # the shard's cells recomputed) and W's update gathers its rows; on the
  # cluster each worker keeps its shards, their rows of W and W H at their
  # cells.
  kcd_runs <- lapply(nmf_runs, function(r) {
    r[[3]] <- sub("nmf\\((x|sh), k, ", "nmf(\\1, k, loss = \"kl\", ", r[[3]])
    r
  })
  report_nmf(scale_res$kl <- run_interleaved(kcd_runs))
}

if (want("factors")) {
  heading("plsa() on 2 PSOCK workers: the documents' factor gathered vs written by the workers (factor_dir)")
  # With factor_dir each worker draws its shards' rows of the random start,
  # keeps them, and writes the fit's rows beside the shard files: the
  # master's memory no longer holds a matrix of the documents' size.
  fdir <- file.path(dir, "factors")
  dir.create(fdir)
  # (the peak counted from the end of the setup: describing the shards and
  # starting the workers are the same for both)
  setup <- paste('sh <- shards(files); cl <- aspectr::shard_cluster(2); invisible(parallel::clusterCall(cl, function(p) .libPaths(p), .libPaths()))',
                 'invisible(plsa(shards(list(w[1:25, ], w[26:50, ])), 2, max_iter = 2, seed = 1, threads = 1, cluster = cl))',
                 'invisible(gc()); if (ok) cat("5", file = "/proc/self/clear_refs")', sep = "; ")
  runs <- list(
    list("factor gathered", setup,
         'plsa(sh, k, max_iter = %s, tol = 0, seed = 1, threads = 1, cluster = cl, verbose = TRUE)'),
    list("factor_dir", setup,
         paste0('plsa(sh, k, max_iter = %s, tol = 0, seed = 1, threads = 1, cluster = cl, verbose = TRUE, factor_dir = "',
                fdir, '")')))
  res <- run_interleaved(runs)
  vals <- vapply(res, function(v) v[4], numeric(1))
  cat(sprintf("final objectives agree to %.2g (relative)\n", diff(range(vals)) / abs(vals[1])))
  doc_mb <- n_shards * docs * k * 8 / 1e6
  cat(sprintf("documents' factor: %.0f MB; master's peak during the fit: %.1f MB gathered, %.1f MB with factor_dir\n",
              doc_mb, res[[1]][1], res[[2]][1]))
  written <- list.files(fdir, full.names = TRUE)
  cat(sprintf("time per iteration: %.3f s gathered, %.3f s with factor_dir; %d files written, %.1f MB\n",
              res[[1]][3], res[[2]][3], length(written), sum(file.size(written)) / 1e6))
}
