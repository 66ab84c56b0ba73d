## bench/file-kinds.R -- time per iteration of out-of-core fits from each
## file kind shards() reads (.shard, .rds, .mtx, .tns, 10x-style .h5), with
## the one-time conversion to a cached .shard file (the default) and
## without it (options(aspectr.shard_cache = FALSE): the original parsed
## at every iteration). Each fit runs in interleaved rounds; minima are
## reported, with ratios to the .shard files of the same data.
##
##   Rscript bench/file-kinds.R            # 20000 x 5000 at 5%, 4 shards
##   ASPECTR_BENCH_QUICK=1 Rscript bench/file-kinds.R   # 4000 x 1500, 3 rounds
##   ASPECTR_BENCH_UNCACHED=rds,h5 Rscript bench/file-kinds.R   # uncached runs of these kinds only
##
## Run from the package root with aspectr installed.

source("bench/common.R")
suppressPackageStartupMessages(library(aspectr))
if (!requireNamespace("hdf5r", quietly = TRUE)) apt_install("r-cran-hdf5r")
have_h5 <- requireNamespace("hdf5r", quietly = TRUE)

m <- if (quick) 4000 else 20000
n <- if (quick) 1500 else 5000
density <- 0.05
n_shards <- 4
k <- 10
rounds <- if (quick) 3 else 2
uncached_kinds <- Sys.getenv("ASPECTR_BENCH_UNCACHED")
iters <- c(plsa_em = 5, nmf_hals = 5, nmf_klcd = 2)

heading("Out-of-core fits by file kind: ", m, " x ", n, " at ", density * 100, "%, ", n_shards,
        " shards, k = ", k, ", 1 thread")
set.seed(1)
x <- Matrix::rsparsematrix(m, n, density, rand.x = function(r) stats::rpois(r, 2) + 1)
cuts <- round(seq(0, m, length.out = n_shards + 1))
parts <- lapply(seq_len(n_shards), function(i) x[(cuts[i] + 1):cuts[i + 1], , drop = FALSE])
rm(x)
dir <- tempfile("kinds")
dir.create(dir)
files <- list(shard = write_shards(parts, file.path(dir, "shard"))$sources)
files$shard <- vapply(files$shard, function(s) s$path, "")
files$rds <- file.path(dir, sprintf("p%d.rds", seq_len(n_shards)))
files$mtx <- file.path(dir, sprintf("p%d.mtx", seq_len(n_shards)))
files$tns <- file.path(dir, sprintf("p%d.tns", seq_len(n_shards)))
if (have_h5) files$h5 <- file.path(dir, sprintf("p%d.h5", seq_len(n_shards)))
for (i in seq_len(n_shards)) {
  p <- parts[[i]]
  saveRDS(p, files$rds[i])
  Matrix::writeMM(p, files$mtx[i])
  s <- Matrix::summary(p)
  write_tns(sptensor(cbind(s$i, s$j), s$x, dims = dim(p)), files$tns[i])
  if (have_h5) {
    # 10x layout: features in rows, cells (this shard's rows) in columns
    tp <- methods::as(Matrix::t(p), "CsparseMatrix")
    f <- hdf5r::H5File$new(files$h5[i], mode = "w")
    f[["data"]] <- tp@x
    f[["indices"]] <- tp@i
    f[["indptr"]] <- tp@p
    f[["shape"]] <- dim(tp)
    f$close_all()
  }
}
rm(parts)
invisible(gc())
cat(sprintf("%s: %.1f MB on disk\n", names(files),
            vapply(files, function(f) sum(file.size(f)) / 2^20, numeric(1))), sep = "")

fit_once <- function(sh, what) {
  t0 <- proc.time()[["elapsed"]]
  fit <- switch(what,
    plsa_em = plsa(sh, k, method = "em", seed = 1, max_iter = iters[[what]], tol = 0, threads = 1),
    nmf_hals = nmf(sh, k, init = "random", seed = 1, max_iter = iters[[what]], tol = 0, threads = 1),
    nmf_klcd = nmf(sh, k, loss = "kl", method = "cd", init = "random", seed = 1, max_iter = iters[[what]],
                   tol = 0, threads = 1))
  list(per_iter = (proc.time()[["elapsed"]] - t0) / fit$iterations, value = fit$value)
}

subheading("describing the files (with the cache: the one-time conversion)")
described <- list()
for (kind in names(files)) {
  for (cache in c(TRUE, FALSE)) {
    options(aspectr.shard_cache = cache)
    t0 <- proc.time()[["elapsed"]]
    described[[paste(kind, cache)]] <- shards(files[[kind]])
    cat(sprintf("%-6s cache %-5s shards(): %6.2f s\n", kind, cache, proc.time()[["elapsed"]] - t0))
  }
}
options(aspectr.shard_cache = TRUE)

best <- list()
values <- list()
for (r in seq_len(rounds)) {
  for (what in names(iters)) {
    for (kind in names(files)) {
      for (cache in c(TRUE, FALSE)) {
        if (kind == "shard" && !cache) next
        # (the uncached fits, which parse every file at every iteration,
        # run once: they are the slow "before")
        if (!cache && r > 1) next
        # (KL coordinate descent passes over the data several times per
        # iteration: its uncached fits would take hours from text files)
        if (!cache && what == "nmf_klcd" && kind %in% c("mtx", "tns")) next
        # (ASPECTR_BENCH_UNCACHED="rds,h5" limits the slow uncached runs)
        if (!cache && nzchar(uncached_kinds) && !kind %in% strsplit(uncached_kinds, ",")[[1]]) next
        key <- paste(what, kind, cache)
        res <- suppressMessages(fit_once(described[[paste(kind, cache)]], what))
        best[[key]] <- min(best[[key]] %||% Inf, res$per_iter)
        values[[key]] <- res$value
      }
    }
  }
}

subheading("time per iteration (cached: minimum of ", rounds, " rounds; uncached: one round) and ratio to .shard files")
cat(sprintf("%-9s %-6s %14s %8s %16s %8s %10s\n", "fit", "kind", "cached s/iter", "ratio", "uncached s/iter",
            "ratio", "speed-up"))
for (what in names(iters)) {
  ref <- best[[paste(what, "shard", TRUE)]]
  for (kind in names(files)) {
    a <- best[[paste(what, kind, TRUE)]]
    b <- if (kind == "shard") NA else best[[paste(what, kind, FALSE)]] %||% NA
    cat(sprintf("%-9s %-6s %14.3f %7.2fx %16s %8s %10s\n", what, kind, a, a / ref,
                if (is.na(b)) "-" else sprintf("%.3f", b), if (is.na(b)) "-" else sprintf("%.2fx", b / ref),
                if (is.na(b)) "-" else sprintf("%.1fx", b / a)))
  }
  v <- unlist(values[grep(paste0("^", what, " "), names(values))])
  cat(sprintf("%-9s objectives agree to %.1e (relative)\n", what, max(abs(v - v[1])) / abs(v[1])))
}
unlink(dir, recursive = TRUE)
