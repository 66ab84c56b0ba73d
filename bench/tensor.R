#!/usr/bin/env Rscript
## bench/tensor.R -- sparse 3-way KL CP (Poisson CP / KL aspect model):
## aspectr::plsa() and aspectr::ntf(loss = "kl") against RDFTensor's cp_apr
## and nnTensor's NTF(algorithm = "KL"), plus a scaling study of aspectr.
##
## Run from the package root:   Rscript bench/tensor.R
##
## The peers (RDFTensor, nnTensor) are installed BY THIS SCRIPT when they are
## missing. They are bench-only: NOT dependencies of aspectr and must not be
## listed in its DESCRIPTION (not even in Suggests). RDFTensor has been
## archived on CRAN; when install.packages() cannot find it, the script
## installs its last release from the CRAN archive (with its CRAN
## dependencies pracma, doParallel, foreach). A peer that cannot be installed
## or loaded is skipped with a printed note. aspectr must already be
## installed.
##
## Common objective. Every method is scored by the generalized KL divergence
## D(X || M) = sum x log(x / m) - x + m of the data X from its model
## M = sum_r w_r a_r o b_r o c_r, computed by gkl_obj() below over the
## non-zeros of X plus sum(M) = sum_r w_r prod_n colSums(A_n)[r] (the dense
## model is never formed). For aspectr's fit at its own optimal scale
## (w = lambda * sum(X)), D_gKL = sum(X) * fit$value.
##
## Protocol. Each method runs a fixed iteration budget from a seeded random
## start. The target is the worst (largest) final objective among the
## methods; for each method we report the time it needs to first reach that
## target, read off an objective trace: aspectr's own per-iteration trace
## (time per iteration from a 1-iteration and a full run, the one-off set-up
## included), and for the peers the objective at checkpoints of a
## warm-started run (each chunk restarts the peer from the previous chunk's
## model; only the peer's calls are timed, not the scoring). Ratios are
## time(method) / time(aspectr::plsa, 1 thread). A method whose objective
## goes up (nnTensor's KL update diverges on these data) is reported but
## left out of the target. Because the worst final objective is usually the
## common optimum to 9-10 digits, a second target, the best final objective
## + 0.1%, is also reported (less sensitive to EM's slow last digits).
##
## Peers. RDFTensor::cp_apr is run with alg = "mu" (the multiplicative
## update of Chi and Kolda, the Tensor Toolbox's former default; 10 inner
## iterations per mode per outer iteration) and with alg = "pqnr" (its
## default, projected quasi-Newton row subproblems) on a small budget, since
## its row loops are interpreted R. nnTensor is dense-only: the tensor is
## passed as a dense rTensor Tensor (200 x 150 x 100 = 3M cells, 24 MB), with
## init = "Random" (its default "NMF" initialization runs KL-NMF on every
## unfolding first).
##
## Data. Count tensors drawn from a planted rank-5 Poisson CP model with
## sparse-ish gamma-distributed factor columns: draws are added until the
## number of distinct non-zero cells reaches the target. For the comparison
## (200 x 150 x 100, nnz ~ 50k, k = 5) indices that never occur are removed
## (cp_apr's "mu" update fails on empty slices). The scaling study (aspectr
## only) uses a 1000 x 800 x 600 tensor with nnz 50k, 100k, ..., 800k, k = 5,
## a fixed number of iterations with tol = 0, and reports the time per
## iteration, its ratio per doubling of nnz (target <= 2.2x), and the peak
## memory of one fit, measured in a fresh R process that only reads the
## tensor: its peak resident set size during the fit above the RSS before it
## (/proc/self/status VmHWM after a reset through /proc/self/clear_refs), and
## the rise of R's own heap (gc() "max used" after gc(reset = TRUE)).
##
## Environment: ASPECTR_BENCH_QUICK=1 runs a small version (for testing the
## script); ASPECTR_BENCH_ONLY (a regular expression) runs only the sections
## it matches ("comparison", "scaling"). The BLAS is left as configured (reference BLAS here).

## ---------------------------------------------------------------------------
## 0. Setup: packages
## ---------------------------------------------------------------------------

source("bench/common.R")  # %||%, quick, heading, note, ensure_peer, ...

heading("aspectr sparse tensor (KL CP) benchmark (bench/tensor.R)")
have <- c(
  aspectr   = requireNamespace("aspectr", quietly = TRUE) &&
              exists("plsa", envir = asNamespace("aspectr")),
  RDFTensor = ensure_peer("RDFTensor", "archived on CRAN",
                          archive = "RDFTensor/RDFTensor_1.3.tar.gz",
                          deps = c("pracma", "doParallel", "foreach")),
  nnTensor  = ensure_peer("nnTensor")
)
if (!have[["aspectr"]]) stop("aspectr is not installed (R CMD INSTALL . from the package root).")
if (have[["nnTensor"]] && !requireNamespace("rTensor", quietly = TRUE)) {
  note("rTensor (needed for nnTensor's input) is missing; nnTensor is skipped.")
  have[["nnTensor"]] <- FALSE
}
print_environment(names(have))
t_bench <- proc.time()[["elapsed"]]

## ---------------------------------------------------------------------------
## 1. Data, objective, helpers
## ---------------------------------------------------------------------------

## Draws from a planted rank-k Poisson CP model until `nnz` distinct cells
## are non-zero. Returns list(index (1-based, nnz x 3), values, dims, truth).
planted_tensor <- function(dims, k, nnz, seed, shape = 0.3) {
  set.seed(seed)
  U <- lapply(dims, function(d) {
    m <- matrix(stats::rgamma(d * k, shape) + 1e-3, d, k)
    sweep(m, 2, colSums(m), "/")
  })
  lambda <- stats::rgamma(k, 2); lambda <- lambda / sum(lambda)
  strides <- c(1, cumprod(as.numeric(dims))[-length(dims)])
  keys <- numeric(0)
  batch <- ceiling(nnz / 2)
  repeat {
    z <- sample.int(k, batch, replace = TRUE, prob = lambda)
    key <- numeric(batch)
    for (n in seq_along(dims)) {
      idx <- integer(batch)
      for (r in seq_len(k)) {
        sel <- which(z == r)
        if (length(sel)) idx[sel] <- sample.int(dims[n], length(sel), replace = TRUE,
                                                 prob = U[[n]][, r])
      }
      key <- key + (idx - 1) * strides[n]
    }
    keys <- c(keys, key)
    u <- length(unique(keys))
    if (u >= nnz) break
    ## aim the next batch at the remaining distinct cells
    batch <- max(1000, ceiling(as.numeric(nnz - u) * length(keys) / u))
  }
  keys <- sort(keys)
  r <- rle(keys)
  ukey <- r$values
  index <- matrix(0L, length(ukey), length(dims))
  rem <- ukey
  for (n in rev(seq_along(dims))) {
    index[, n] <- as.integer(rem %/% strides[n]) + 1L
    rem <- rem %% strides[n]
  }
  list(index = index, values = as.numeric(r$lengths), dims = as.integer(dims),
       truth = list(lambda = lambda, factors = U), draws = length(keys))
}

## Removes indices that never occur (re-numbering each mode).
compress_tensor <- function(tn) {
  for (n in seq_len(ncol(tn$index))) {
    used <- sort(unique(tn$index[, n]))
    tn$index[, n] <- match(tn$index[, n], used)
    tn$dims[n] <- length(used)
  }
  tn
}

## Generalized KL D(X || M) over the non-zeros of X plus sum(M), with
## M = sum_r w_r prod_n A_n[, r].
gkl_obj <- function(index, values, factors, weights) {
  factors <- lapply(factors, as.matrix)
  m <- matrix(weights, nrow(index), length(weights), byrow = TRUE)
  for (n in seq_along(factors)) m <- m * factors[[n]][index[, n], , drop = FALSE]
  m <- rowSums(m)
  sum_m <- sum(weights * Reduce(`*`, lapply(factors, colSums)))
  pos <- values > 0
  sum(values[pos] * log(values[pos] / m[pos])) - sum(values) + sum_m
}

## First time a trace (iter, time, obj) reaches `target`, interpolating
## linearly between the bracketing checkpoints; NA if never.
time_to_target <- function(tr, target) {
  hit <- which(tr$obj <= target * (1 + 1e-12))
  if (!length(hit)) return(c(time = NA_real_, iter = NA_real_))
  h <- hit[1]
  if (h == 1) return(c(time = tr$time[h], iter = tr$iter[h]))
  o0 <- tr$obj[h - 1]; o1 <- tr$obj[h]
  f <- if (o0 > o1) min(max((o0 - target) / (o0 - o1), 0), 1) else 1
  c(time = tr$time[h - 1] + f * (tr$time[h] - tr$time[h - 1]),
    iter = tr$iter[h - 1] + f * (tr$iter[h] - tr$iter[h - 1]))
}

## Checkpoints (cumulative iteration counts) for warm-started peers.
checkpoints_upto <- function(n, dense = FALSE) {
  cp <- if (dense) c(1:10, seq(12, 30, 2), seq(35, 60, 5), seq(70, 150, 10), seq(175, 2000, 25))
        else c(1, 2, 3, 5, 8, 12, 16, 20, seq(30, 100, 10), seq(125, 2000, 25))
  cp <- cp[cp <= n]
  sort(unique(c(cp, n)))
}

## One method's run, through try_method() of bench/common.R.
describe_run <- function(r) {
  sprintf("%d it, final D_gKL %.4f, %.2f s, %.4f s/iter", as.integer(r$iters), r$final,
          r$total_time, r$sec_per_iter)
}

## ---------------------------------------------------------------------------
## 2. Methods
## ---------------------------------------------------------------------------

## aspectr::plsa / ntf (KL). Trace: the package's own objective after each
## iteration; time per iteration from a 1-iteration run and the full run.
run_aspectr <- function(tn, x, k, iters, threads, fun = c("plsa", "ntf")) {
  fun <- match.arg(fun)
  S <- sum(tn$values)
  fit_it <- function(n) {
    if (fun == "plsa") {
      aspectr::plsa(x, k, loss = "kl", max_iter = n, tol = 0, seed = 1, threads = threads)
    } else {
      aspectr::ntf(x, k, loss = "kl", max_iter = n, tol = 0, seed = 1, threads = threads)
    }
  }
  r1 <- elapsed(fit_it(1L))
  rN <- elapsed(fit_it(iters))
  fit <- rN$value
  n_it <- fit$iterations
  per_iter <- max((rN$time - r1$time) / max(n_it - 1, 1), 0)
  setup <- max(r1$time - per_iter, 0)
  if (fun == "plsa") {
    weights <- as.numeric(fit$lambda) * S
    obj <- as.numeric(fit$objective) * S
  } else {
    weights <- as.numeric(fit$weights)
    obj <- as.numeric(fit$objective)
  }
  final <- gkl_obj(tn$index, tn$values, fit$factors, weights)
  if (abs(final - obj[length(obj)]) > 1e-6 * abs(final)) {
    note(sprintf("aspectr::%s: its last objective %.6f differs from gkl_obj %.6f", fun,
                 obj[length(obj)], final))
  }
  tr <- data.frame(iter = seq_along(obj), obj = obj)
  tr$time <- setup + tr$iter * per_iter
  list(trace = tr, final = final, iters = n_it, total_time = rN$time,
       sec_per_iter = per_iter, setup = setup)
}

quiet_call <- function(expr) {
  out <- NULL
  utils::capture.output(out <- suppressWarnings(force(expr)))
  out
}

## RDFTensor::cp_apr, warm-started in chunks; only its calls are timed.
run_cp_apr <- function(tn, k, iters, alg = "mu", seed = 1) {
  X <- list(subs = tn$index, vals = tn$values, size = tn$dims, nnz = length(tn$values))
  set.seed(seed)
  init <- list(lambda = rep(1, k),
               u = lapply(tn$dims, function(d) matrix(stats::runif(d * k) + 0.1, d, k)))
  cps <- checkpoints_upto(iters)
  M <- init
  done <- 0L
  tt <- 0
  tr <- data.frame(iter = integer(0), time = numeric(0), obj = numeric(0))
  for (cp in cps) {
    ## printitn = 0 makes its "mu" loop fail (iter %% 0 is NA): print rarely
    ## and swallow the banner (and the row traces "pqnr" always prints).
    opts <- list(alg = alg, init = M, maxiters = cp - done, printitn = 1e9, stoptol = 1e-4)
    r <- elapsed(quiet_call(RDFTensor::cp_apr(X, k, opts)))
    M <- r$value$M
    tt <- tt + r$time
    done <- cp
    obj <- gkl_obj(tn$index, tn$values, M$u, M$lambda)
    tr[nrow(tr) + 1L, ] <- list(cp, tt, obj)
  }
  list(trace = tr, final = tr$obj[nrow(tr)], iters = done, total_time = tt,
       sec_per_iter = tt / done)
}

## nnTensor::NTF(algorithm = "KL") on the dense tensor, warm-started in
## chunks through initA (rank x d_n matrices; the weights S folded back into
## the last mode).
run_nntensor <- function(tn, k, iters, seed = 1) {
  dense <- array(0, tn$dims)
  dense[tn$index] <- tn$values
  Xt <- rTensor::as.tensor(dense)
  rm(dense)
  cps <- checkpoints_upto(iters)
  A <- NULL
  done <- 0L
  tt <- 0
  tr <- data.frame(iter = integer(0), time = numeric(0), obj = numeric(0))
  set.seed(seed)
  for (cp in cps) {
    r <- elapsed(nnTensor::NTF(Xt, rank = k, algorithm = "KL", init = "Random", initA = A,
                               num.iter = cp - done, thr = 1e-300))
    fit <- r$value
    tt <- tt + r$time
    done <- cp
    A <- fit$A
    N <- length(A)
    A[[N]] <- A[[N]] * fit$S      # rows scaled back
    obj <- gkl_obj(tn$index, tn$values, lapply(fit$A, t), fit$S)
    tr[nrow(tr) + 1L, ] <- list(cp, tt, obj)
  }
  list(trace = tr, final = tr$obj[nrow(tr)], iters = done, total_time = tt,
       sec_per_iter = tt / done)
}

## ---------------------------------------------------------------------------
## 3. Comparison
## ---------------------------------------------------------------------------

if (bench_want("comparison")) {
K <- 5L
dims_cmp <- if (quick) c(60L, 50L, 40L) else c(200L, 150L, 100L)
nnz_cmp <- if (quick) 8000L else 50000L
tn <- compress_tensor(planted_tensor(dims_cmp, K, nnz_cmp, seed = 42))
x <- aspectr::sptensor(tn$index, tn$values, dims = tn$dims)
S <- sum(tn$values)
heading(sprintf("Comparison: %s tensor, nnz = %d, total count %d, k = %d",
                paste(tn$dims, collapse = " x "), length(tn$values), as.integer(S), K))
cat(sprintf("planted model: D_gKL(X || truth scaled to sum(X)) = %.4f\n",
            gkl_obj(tn$index, tn$values, tn$truth$factors, tn$truth$lambda * S)))

budget <- if (quick) {
  c(aspectr = 200L, cp_apr_mu = 10L, cp_apr_pqnr = 2L, nnTensor = 10L)
} else {
  c(aspectr = 1000L, cp_apr_mu = 60L, cp_apr_pqnr = 30L, nnTensor = 40L)
}
cat(sprintf("iteration budgets: %s\n",
            paste(sprintf("%s %d", names(budget), budget), collapse = ", ")))
invisible(aspectr::plsa(x, K, loss = "kl", max_iter = 2L, tol = 0, seed = 1))  # warm-up

res <- list()
res[["aspectr::plsa (1 thr)"]] <- try_method("aspectr::plsa (1 thread)",
  run_aspectr(tn, x, K, budget[["aspectr"]], 1L, "plsa"))
res[["aspectr::plsa (2 thr)"]] <- try_method("aspectr::plsa (2 threads)",
  run_aspectr(tn, x, K, budget[["aspectr"]], 2L, "plsa"))
res[["aspectr::ntf kl (2 thr)"]] <- try_method("aspectr::ntf(loss = 'kl') (2 threads)",
  run_aspectr(tn, x, K, budget[["aspectr"]], 2L, "ntf"))
if (have[["RDFTensor"]]) {
  res[["RDFTensor::cp_apr mu"]] <- try_method("RDFTensor::cp_apr (alg = 'mu')",
    run_cp_apr(tn, K, budget[["cp_apr_mu"]], "mu"))
  res[["RDFTensor::cp_apr pqnr"]] <- try_method("RDFTensor::cp_apr (alg = 'pqnr')",
    run_cp_apr(tn, K, budget[["cp_apr_pqnr"]], "pqnr"))
}
if (have[["nnTensor"]]) {
  res[["nnTensor::NTF KL"]] <- try_method("nnTensor::NTF (algorithm = 'KL')",
    run_nntensor(tn, K, budget[["nnTensor"]]))
}
res <- res[!vapply(res, is.null, logical(1))]

finals <- vapply(res, `[[`, numeric(1), "final")
## A method whose objective did not go down (final above its first
## checkpoint, or not finite) has diverged: it is shown but does not set the
## common target.
descends <- vapply(res, function(r) is.finite(r$final) && r$final <= r$trace$obj[1], logical(1))
for (m in names(res)[!descends]) {
  note(sprintf("%s diverged (objective %.4g after iteration %d, %.4g at the end); it is left out of the target.",
               m, res[[m]]$trace$obj[1], as.integer(res[[m]]$trace$iter[1]), res[[m]]$final))
}
in_target <- descends
target <- max(finals[in_target])
worst <- names(finals)[in_target][which.max(finals[in_target])]
subheading(sprintf("target = worst final objective = %.4f (%s)", target, worst))
ref <- "aspectr::plsa (1 thr)"
ttt <- lapply(res, function(r) time_to_target(r$trace, target))
t_ref <- ttt[[ref]][["time"]] %||% NA_real_
## A second, looser target: within 0.1% of the best final objective (what a
## user would call converged); less sensitive to the last digits of the
## worst method.
target2 <- min(finals[in_target]) * (1 + 1e-3)
ttt2 <- lapply(res, function(r) time_to_target(r$trace, target2))
t_ref2 <- ttt2[[ref]][["time"]] %||% NA_real_
tab <- data.frame(
  method = names(res),
  budget_iter = vapply(res, function(r) as.integer(r$iters), integer(1)),
  total_s = sprintf("%.2f", vapply(res, `[[`, numeric(1), "total_time")),
  s_per_iter = sprintf("%.5f", vapply(res, `[[`, numeric(1), "sec_per_iter")),
  final_gkl = sprintf("%.4f", finals),
  diverged = ifelse(descends, "", "yes"),
  iter_to_target = sprintf("%.1f", vapply(ttt, `[[`, numeric(1), "iter")),
  time_to_target_s = sprintf("%.4f", vapply(ttt, `[[`, numeric(1), "time")),
  ratio_vs_aspectr1 = sprintf("%.1fx", vapply(ttt, `[[`, numeric(1), "time") / t_ref),
  stringsAsFactors = FALSE)
print(tab, row.names = FALSE, right = FALSE)
cat(sprintf("\nSecond target: best final objective + 0.1%% = %.4f\n", target2))
tab2 <- data.frame(
  method = names(res),
  iter_to_target2 = sprintf("%.1f", vapply(ttt2, `[[`, numeric(1), "iter")),
  time_to_target2_s = sprintf("%.4f", vapply(ttt2, `[[`, numeric(1), "time")),
  ratio_vs_aspectr1 = sprintf("%.1fx", vapply(ttt2, `[[`, numeric(1), "time") / t_ref2),
  stringsAsFactors = FALSE)
print(tab2, row.names = FALSE, right = FALSE)
cat("\n(ratio = time to target of the method / that of aspectr::plsa with 1 thread;\n",
    " NA: the method never reached the target within its budget)\n", sep = "")
if ("RDFTensor::cp_apr mu" %in% names(res)) {
  r <- ttt[["RDFTensor::cp_apr mu"]][["time"]] / t_ref
  cat(sprintf("\naspectr speed-up over RDFTensor::cp_apr (mu), time to target: %.1fx  (target >= 50x: %s)\n",
              r, if (is.finite(r) && r >= 50) "met" else "NOT met"))
  cat(sprintf("  same, to the second target (best + 0.1%%): %.1fx\n",
              ttt2[["RDFTensor::cp_apr mu"]][["time"]] / t_ref2))
  if ("RDFTensor::cp_apr pqnr" %in% names(res)) {
    cat(sprintf("aspectr speed-up over RDFTensor::cp_apr (pqnr): %.1fx (target), %.1fx (second target)\n",
                ttt[["RDFTensor::cp_apr pqnr"]][["time"]] / t_ref,
                ttt2[["RDFTensor::cp_apr pqnr"]][["time"]] / t_ref2))
  }
  r2 <- res[["RDFTensor::cp_apr mu"]]$sec_per_iter / res[[ref]]$sec_per_iter
  cat(sprintf("per outer iteration (cp_apr mu: 10 inner MU steps per mode) vs per EM iteration: %.0fx\n", r2))
}
if ("nnTensor::NTF KL" %in% names(res)) {
  r <- ttt[["nnTensor::NTF KL"]][["time"]] / t_ref
  cat(sprintf("aspectr speed-up over nnTensor::NTF (KL), time to target: %s\n",
              if (is.finite(r)) sprintf("%.1fx", r) else "NA (target not reached by nnTensor)"))
  r2 <- res[["nnTensor::NTF KL"]]$sec_per_iter / res[[ref]]$sec_per_iter
  cat(sprintf("per iteration, nnTensor vs aspectr: %.0fx\n", r2))
}
subheading("objective traces (checkpoints)")
for (m in names(res)) {
  tr <- res[[m]]$trace
  show <- if (nrow(tr) > 12) tr[unique(round(seq(1, nrow(tr), length.out = 12))), ] else tr
  cat(sprintf("%s:\n", m))
  cat(sprintf("  iter %s\n  time %s\n  obj  %s\n",
              paste(sprintf("%10d", as.integer(show$iter)), collapse = ""),
              paste(sprintf("%10.3f", show$time), collapse = ""),
              paste(sprintf("%10.1f", show$obj), collapse = "")))
}
}  # comparison

## ---------------------------------------------------------------------------
## 4. Scaling study (aspectr only)
## ---------------------------------------------------------------------------

## Memory of one fit, measured in a fresh R process (in this process freed
## memory is reused and the peak RSS hardly moves): the child reads the
## tensor, loads aspectr and warms it up on a tiny tensor, then resets the
## peak RSS (/proc/self/clear_refs) and R's gc() peak and runs the fit.
## Returns c(peak RSS above the RSS before the fit (MB), R heap peak above
## the heap before the fit (MB)), NA when it cannot be measured.
mem_child_script <- function() {
  f <- tempfile("aspectr_mem_", fileext = ".R")
  writeLines(c(
    'a <- commandArgs(TRUE); x <- readRDS(a[1]); k <- as.integer(a[2])',
    'it <- as.integer(a[3]); th <- as.integer(a[4])',
    'st <- function() { s <- readLines("/proc/self/status")',
    '  g <- function(f) as.numeric(gsub("[^0-9]", "", grep(paste0("^", f, ":"), s, value = TRUE)))',
    '  c(rss = g("VmRSS"), hwm = g("VmHWM")) }',
    'set.seed(1); w <- aspectr::sptensor(cbind(sample(10, 60, TRUE), sample(10, 60, TRUE), sample(10, 60, TRUE)), rep(1, 60))',
    'invisible(aspectr::plsa(w, 2, max_iter = 2, tol = 0, seed = 1, threads = th))',
    'invisible(gc(reset = TRUE)); g0 <- sum(gc()[, 2])',
    'ok <- tryCatch({ cat("5", file = "/proc/self/clear_refs"); TRUE }, error = function(e) FALSE)',
    'b <- st()',
    'fit <- aspectr::plsa(x, k, loss = "kl", max_iter = it, tol = 0, seed = 1, threads = th)',
    'e <- st(); g <- gc()',
    'cat(sprintf("MEM %.1f %.1f\\n", if (ok) (e[["hwm"]] - b[["rss"]]) / 1024 else NA, sum(g[, ncol(g)]) - g0))'),
    f)
  f
}
fit_memory <- function(x, k, iters, threads, script) {
  rds <- tempfile("aspectr_x_", fileext = ".rds")
  saveRDS(x, rds, compress = FALSE)
  on.exit(unlink(rds))
  out <- tryCatch(system2(file.path(R.home("bin"), "Rscript"),
                          c("--vanilla", shQuote(script), shQuote(rds), k, iters, threads),
                          stdout = TRUE, stderr = FALSE), error = function(e) character())
  line <- grep("^MEM ", out, value = TRUE)
  if (!length(line)) return(c(rss = NA_real_, heap = NA_real_))
  v <- suppressWarnings(as.numeric(strsplit(line[1], " ")[[1]][2:3]))
  c(rss = v[1], heap = v[2])
}

if (bench_want("scaling")) {
dims_sc <- if (quick) c(300L, 250L, 200L) else c(1000L, 800L, 600L)
nnz_sc <- if (quick) c(20000L, 40000L, 80000L) else c(50000L, 100000L, 200000L, 400000L, 800000L)
iters_sc <- if (quick) 10L else 60L
heading(sprintf("Scaling: aspectr::plsa KL on %s, k = %d, %d iterations (tol = 0)",
                paste(dims_sc, collapse = " x "), K, iters_sc))
mem_script <- mem_child_script()
sc <- list()
for (nz in nnz_sc) {
  ts <- planted_tensor(dims_sc, K, nz, seed = 7)
  xs <- aspectr::sptensor(ts$index, ts$values, dims = ts$dims)
  rm(ts)
  invisible(gc())
  for (th in 1:2) {
    ## timings: best of three runs each of 1 and of iters_sc iterations
    tN <- min(vapply(1:3, function(i) elapsed(aspectr::plsa(xs, K, loss = "kl", max_iter = iters_sc,
                                                             tol = 0, seed = 1, threads = th))$time,
                     numeric(1)))
    t1 <- min(vapply(1:3, function(i) elapsed(aspectr::plsa(xs, K, loss = "kl", max_iter = 1L,
                                                             tol = 0, seed = 1, threads = th))$time,
                     numeric(1)))
    per_iter <- (tN - t1) / (iters_sc - 1)
    mem <- fit_memory(xs, K, iters_sc, th, mem_script)
    sc[[length(sc) + 1L]] <- data.frame(
      nnz = length(xs$values), threads = th, total_s = tN, setup_s = max(t1 - per_iter, 0),
      ms_per_iter = 1000 * per_iter, peak_rss_delta_mb = mem[["rss"]],
      r_heap_peak_mb = mem[["heap"]])
  }
  rm(xs)
  invisible(gc())
}
unlink(mem_script)
sc <- do.call(rbind, sc)
for (th in 1:2) {
  s <- sc[sc$threads == th, ]
  s$ratio_per_doubling <- c(NA, s$ms_per_iter[-1] / s$ms_per_iter[-nrow(s)])
  s$ns_per_nnz_iter <- 1e6 * s$ms_per_iter / s$nnz
  s$rss_bytes_per_nnz <- 1024^2 * s$peak_rss_delta_mb / s$nnz
  subheading(sprintf("threads = %d", th))
  out <- data.frame(
    nnz = s$nnz, total_s = sprintf("%.3f", s$total_s), setup_s = sprintf("%.3f", s$setup_s),
    ms_per_iter = sprintf("%.2f", s$ms_per_iter),
    ratio_per_doubling = ifelse(is.na(s$ratio_per_doubling), "-",
                                sprintf("%.2fx", s$ratio_per_doubling)),
    ns_per_nnz_iter = sprintf("%.1f", s$ns_per_nnz_iter),
    peak_rss_delta_mb = sprintf("%.1f", s$peak_rss_delta_mb),
    rss_bytes_per_nnz = sprintf("%.0f", s$rss_bytes_per_nnz),
    r_heap_delta_mb = sprintf("%.1f", s$r_heap_peak_mb))
  print(out, row.names = FALSE, right = FALSE)
  worst <- max(s$ratio_per_doubling, na.rm = TRUE)
  cat(sprintf("largest time ratio per doubling of nnz: %.2fx (target <= 2.2x: %s)\n",
              worst, if (worst <= 2.2) "met" else "NOT met"))
}
s1 <- sc[sc$threads == 1, ]; s2 <- sc[sc$threads == 2, ]
cat(sprintf("\nspeed-up of 2 threads over 1 (time per iteration): %s\n",
            paste(sprintf("%s: %.2fx", format(s1$nnz, big.mark = ","), s1$ms_per_iter / s2$ms_per_iter),
                  collapse = ", ")))
if (sum(is.finite(s1$peak_rss_delta_mb)) > 1) {
  fit <- stats::lm(peak_rss_delta_mb ~ nnz, data = s1)
  cat(sprintf("peak RSS above baseline ~ %.1f MB + %.0f bytes per non-zero (1 thread, linear fit)\n",
              coef(fit)[[1]], coef(fit)[[2]] * 1024^2))
}
}  # scaling
cat(sprintf("\nTotal bench time: %.1f s\n", proc.time()[["elapsed"]] - t_bench))
