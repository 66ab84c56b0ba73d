#!/usr/bin/env Rscript
## bench/plsa.R -- time to a common KL objective: aspectr::plsa (KL, its default
## coordinate descent)
## against peer pLSA / KL-NMF implementations in R.
##
## Run from the package root:   Rscript bench/plsa.R
##
## The peers (fastTopics, NMF, svs, and topicmodels for the AssociatedPress
## data) are installed from CRAN BY THIS SCRIPT when they are missing. They
## are NOT dependencies of aspectr and must not be listed in its DESCRIPTION
## (not even in Suggests). A peer that cannot be installed or loaded is
## skipped with a printed note. aspectr itself must already be installed.
## On Debian, prebuilt packages install faster (apt-get install r-cran-nmf
## r-cran-rcppparallel ...), and topicmodels needs `apt-get install libgsl-dev`
## to build from source.
##
## What is compared. Every method fits k = 20 topics from a random start and
## is scored by the same objective, the KL divergence D(G || P) between
## G = X / sum(X) and the model's normalized joint distribution P (for a
## non-negative factorization W H, P = W H / sum(W H)), computed by kl_obj()
## below over the non-zeros of X only. The target is the worst (largest)
## final objective among the methods run with the full iteration budget;
## for each method we report the time it needs to first reach that target,
## read off a per-iteration objective trace (aspectr's own trace, NMF's
## tracked residuals, or kl_obj() at checkpoints of a warm-started run for
## fastTopics; svs has no iteration limit, so it is run to increasingly
## tight tolerances and each run is timed).
##
## Environment: ASPECTR_BENCH_QUICK=1 runs a small version (for testing the
## script); ASPECTR_BENCH_ONLY (a regular expression) runs only the data sets
## it matches ("ap_small", "ap", "synthetic"). The BLAS is left as configured (reference BLAS here).

## ---------------------------------------------------------------------------
## 0. Setup: packages
## ---------------------------------------------------------------------------

source("bench/common.R")  # %||%, quick, heading, note, ensure_peer, loadavg, ...

heading("aspectr pLSA benchmark (bench/plsa.R)")
if (!requireNamespace("Matrix", quietly = TRUE)) stop("the Matrix package is required")
suppressPackageStartupMessages(library(Matrix))

have <- c(
  aspectr     = requireNamespace("aspectr", quietly = TRUE) &&
                exists("plsa", envir = asNamespace("aspectr")),
  fastTopics  = ensure_peer("fastTopics", sysreqs = "libcurl4-openssl-dev"),
  NMF         = ensure_peer("NMF", "on Debian: apt-get install r-cran-nmf", deb = "r-cran-nmf", sysreqs = "r-bioc-biobase"),
  svs         = ensure_peer("svs"),
  topicmodels = ensure_peer("topicmodels", "needs the GSL: apt-get install libgsl-dev", sysreqs = "libgsl-dev")
)
if (!have[["aspectr"]]) {
  note("aspectr is not installed: only the peers are run and ratios are NA ",
       "(install it with R CMD INSTALL . from the package root).")
}
if (have[["NMF"]]) suppressPackageStartupMessages(requireNamespace("NMF"))

print_environment(names(have))

## ---------------------------------------------------------------------------
## 1. Common objective and helpers
## ---------------------------------------------------------------------------

## D(G || P) for G = X / sum(X) and P = W H / sum(W H), over the non-zeros of
## X only, without forming W H: P_ij = sum_r W[i, r] H[r, j] / sum(W H).
## X: dgCMatrix (n x m); W: n x k; H: k x m (all non-negative).
kl_obj <- function(X, W, H) {
  X <- as(X, "CsparseMatrix")
  W <- as.matrix(W)
  H <- as.matrix(H)
  stopifnot(nrow(W) == nrow(X), ncol(H) == ncol(X), ncol(W) == nrow(H))
  ii <- X@i + 1L
  jj <- rep.int(seq_len(ncol(X)), diff(X@p))
  g <- X@x / sum(X@x)
  wh <- numeric(length(g))
  for (r in seq_len(ncol(W))) wh <- wh + W[ii, r] * H[r, jj]
  s_wh <- sum(colSums(W) * rowSums(H))
  keep <- g > 0
  sum(g[keep] * log(g[keep] * s_wh / wh[keep]))
}

## First time a trace (data frame: iter, time, obj; increasing iter) reaches
## `target`, interpolating linearly between the two bracketing checkpoints
## when `interpolate`; NA if never.
time_to_target <- function(tr, target, interpolate = TRUE) {
  hit <- which(tr$obj <= target)
  if (!length(hit)) return(c(time = NA_real_, iter = NA_real_))
  h <- hit[1]
  if (h == 1 || !interpolate) return(c(time = tr$time[h], iter = tr$iter[h]))
  o0 <- tr$obj[h - 1]; o1 <- tr$obj[h]
  f <- if (o0 > o1) (o0 - target) / (o0 - o1) else 1
  c(time = tr$time[h - 1] + f * (tr$time[h] - tr$time[h - 1]),
    iter = tr$iter[h - 1] + f * (tr$iter[h] - tr$iter[h - 1]))
}

## Iteration counts at which warm-started peers are scored.
checkpoints_upto <- function(n) {
  cp <- c(1:10, seq(12, 30, 2), seq(35, 60, 5), seq(70, 150, 10), seq(175, 1000, 25))
  cp <- cp[cp <= n]
  sort(unique(c(cp, n)))
}

## A result: one row per method with its trace.
result <- function(method, threads, budget, trace, final, full_budget, note = "",
                   sec_per_iter = NA_real_, interpolate = TRUE) {
  list(method = method, threads = threads, budget = budget, trace = trace,
       final = final, full_budget = full_budget, note = note,
       sec_per_iter = sec_per_iter, interpolate = interpolate)
}

## One method's run, through try_method() of bench/common.R.
describe_run <- function(r) {
  sprintf("final objective %.6f%s", r$final,
          if (is.finite(r$sec_per_iter)) sprintf(", %.4f s/iter", r$sec_per_iter) else "")
}

## ---------------------------------------------------------------------------
## 2. Methods
## ---------------------------------------------------------------------------

## aspectr KL-EM. The objective trace is the package's own. Its time per
## iteration is measured from two runs (1 and `iters` iterations) so that the
## one-off cost of the call (input conversion, random start) is separated;
## the time to reach the target includes that one-off cost.
aspectr_fit <- function(X, k, iters, threads) {
  aspectr::plsa(X, k, loss = "kl", max_iter = iters, tol = 0, seed = 1, threads = threads)
}
aspectr_time <- function(fit, wall) {
  t <- fit$time
  if (is.null(t) || !length(t) || !is.numeric(t)) return(wall)
  if (length(t) > 1) t <- if (!is.unsorted(t)) t[length(t)] else sum(t)
  t
}
aspectr_model <- function(fit) {
  list(W = sweep(as.matrix(fit$factors[[1]]), 2, as.numeric(fit$lambda), "*"),
       H = t(as.matrix(fit$factors[[2]])))
}
run_aspectr <- function(X, k, iters, threads) {
  r1 <- elapsed(aspectr_fit(X, k, 1L, threads))
  rN <- elapsed(aspectr_fit(X, k, iters, threads))
  fit <- rN$value
  tN <- aspectr_time(fit, rN$time)
  t1 <- aspectr_time(r1$value, r1$time)
  n_it <- fit$iterations %||% iters
  per_iter <- if (n_it > 1) max((tN - t1) / (n_it - 1), 0) else tN
  setup <- max(t1 - per_iter, 0)
  m <- aspectr_model(fit)
  final <- kl_obj(X, m$W, m$H)
  obj <- as.numeric(fit$objective)
  ## Which iterate is objective[i]? After iteration i (then its last value is
  ## the final objective) or at the start of iteration i (lagging by one).
  lag <- !(length(obj) && abs(obj[length(obj)] - final) <= 1e-7 * abs(final))
  it <- if (lag) seq_along(obj) - 1 else seq_along(obj)
  tr <- data.frame(iter = c(it, n_it), obj = c(obj, final))
  if (!lag && is.numeric(fit$initial) && length(fit$initial) == 1) {
    tr <- rbind(data.frame(iter = 0, obj = fit$initial), tr)  # the random start
  }
  tr <- tr[!duplicated(tr$iter, fromLast = TRUE), ]
  tr$time <- setup + tr$iter * per_iter
  ## plsa()'s default method (coordinate descent)
  r <- result("aspectr plsa (KL, default method)", threads, iters, tr, final, TRUE,
              sec_per_iter = per_iter)
  r$fit <- fit; r$setup <- setup; r$lag <- lag; r$wall <- rN$time
  r
}

## fastTopics Poisson NMF X ~ L F' (P = L F' / sum(L F')), warm-started from
## checkpoint to checkpoint; the time is fastTopics' own per-iteration timing
## (progress$timing, which includes its per-iteration loss evaluation but not
## the per-call setup).
run_fasttopics <- function(X, k, iters, method, nc, L0, F0) {
  fit <- fastTopics::init_poisson_nmf(X, F = F0, L = L0, verbose = "none")
  tr <- data.frame(iter = 0, time = 0, obj = kl_obj(X, fit$L, t(fit$F)))
  done <- 0
  for (cp in checkpoints_upto(iters)) {
    fit <- suppressWarnings(suppressMessages(
      fastTopics::fit_poisson_nmf(X, fit0 = fit, numiter = cp - done, method = method,
                                  control = list(nc = nc), verbose = "none")))
    done <- cp
    tr <- rbind(tr, data.frame(iter = cp, time = sum(fit$progress$timing),
                               obj = kl_obj(X, fit$L, t(fit$F))))
  }
  result(sprintf("fastTopics fit_poisson_nmf(%s)", method), nc, iters, tr,
         tr$obj[nrow(tr)], TRUE, sec_per_iter = tr$time[nrow(tr)] / iters)
}

## NMF (Brunet multiplicative KL updates) on the dense matrix. One run with
## the KL residual tracked every `every` iterations. After each Lee-Seung KL
## update sum(W H) = sum(X), so the generalized KL residual / sum(X) equals
## D(G || P); the final value is checked against kl_obj(). The time per
## iteration is the wall time of the run divided by the iterations (it
## includes NMF's one-off setup and the tracking).
run_nmf <- function(X, k, iters, W0, H0, every = 5L) {
  Xd <- as.matrix(X)
  old <- NMF::nmf.options(track.interval = every)
  on.exit(NMF::nmf.options(old), add = TRUE)
  r <- elapsed(NMF::nmf(Xd, k, "brunet", seed = NMF::nmfModel(W = W0, H = H0),
                        .stop = as.integer(iters), .options = list(track = TRUE)))
  fit <- r$value
  res <- NMF::residuals(fit, track = TRUE)
  it <- as.numeric(names(res))
  W <- NMF::basis(fit); H <- NMF::coef(fit)
  final <- kl_obj(X, W, H)
  n_it <- NMF::niter(fit)
  per_iter <- r$time / n_it
  tr <- data.frame(iter = c(it, n_it), obj = c(as.numeric(res) / sum(X@x), final))
  tr <- tr[!duplicated(tr$iter, fromLast = TRUE), ]
  tr <- tr[order(tr$iter), ]
  tr$time <- tr$iter * per_iter
  chk <- abs(as.numeric(res[length(res)]) / sum(X@x) - final)
  result("NMF nmf(brunet), dense", 1L, iters, tr, final, FALSE,
         note = sprintf("track every %d; |residual/sum(X) - kl_obj| at last track = %.1e",
                        every, chk),
         sec_per_iter = per_iter)
}

## svs::fast_plsa (EM in R on the dense table; no iteration limit, stops when
## the log-likelihood gain falls under the absolute `tol`). Run to decreasing
## tolerances from the same seed (the same EM path); each run is timed in
## full, and the time to target is that of the first run that reaches it.
run_svs <- function(X, k, tols, time_cap) {
  Xd <- as.matrix(X)
  tr <- data.frame(iter = numeric(0), time = numeric(0), obj = numeric(0))
  for (tl in tols) {
    set.seed(1)
    r <- elapsed(svs::fast_plsa(Xd, k, symmetric = TRUE, tol = tl))
    o <- r$value
    W <- sweep(as.matrix(o$prob1), 2, as.numeric(o$prob0), "*")
    H <- t(as.matrix(o$prob2))
    tr <- rbind(tr, data.frame(iter = tl, time = r$time, obj = kl_obj(X, W, H)))
    if (r$time > time_cap) break
  }
  result("svs fast_plsa, dense", 1L, NA, tr, tr$obj[nrow(tr)], FALSE,
         note = sprintf("runs to loglik tol %s (the 'iters' column is the tol)",
                        paste(format(tr$iter), collapse = ", ")),
         interpolate = FALSE)
}

## ---------------------------------------------------------------------------
## 3. One data set: run everything, pick the target, print the table
## ---------------------------------------------------------------------------

bench_dataset <- function(name, X, k, plan) {
  t_start <- proc.time()[["elapsed"]]
  on.exit(cat(sprintf("\n(%s: %.1f s; load average now %s)\n", name,
                      proc.time()[["elapsed"]] - t_start, loadavg())), add = TRUE)
  heading(sprintf("Data: %s -- %d x %d, nnz = %d (density %.3f%%), sum = %.0f, k = %d",
                  name, nrow(X), ncol(X), length(X@x),
                  100 * length(X@x) / prod(dim(X)), sum(X@x), k))
  nnz <- length(X@x)
  set.seed(1)
  W0 <- matrix(runif(nrow(X) * k), nrow(X), k)   # shared random start for
  H0 <- matrix(runif(k * ncol(X)), k, ncol(X))   # fastTopics and NMF
  res <- list()

  subheading("fits")
  if (have[["aspectr"]]) {
    for (th in plan$aspectr_threads) {
      res[[length(res) + 1]] <- try_method(sprintf("aspectr plsa threads=%d", th),
                                           run_aspectr(X, k, plan$iters, th))
    }
  } else note("aspectr skipped (not installed)")

  if (have[["fastTopics"]]) {
    for (v in plan$fasttopics) {
      res[[length(res) + 1]] <- try_method(
        sprintf("fastTopics %s nc=%d (%d its)", v$method, v$nc, v$iters),
        run_fasttopics(X, k, v$iters, v$method, v$nc, W0, t(H0)))
    }
  } else note("fastTopics skipped (not available)")

  if (!have[["NMF"]]) {
    note("NMF skipped (not available)")
  } else if (is.null(plan$nmf_iters)) {
    note("NMF brunet skipped: ", plan$nmf_skip)
  } else {
    res[[length(res) + 1]] <- try_method(sprintf("NMF brunet (%d its)", plan$nmf_iters),
                                         run_nmf(X, k, plan$nmf_iters, W0, H0))
  }

  if (!have[["svs"]]) {
    note("svs skipped (not available)")
  } else if (is.null(plan$svs_tols)) {
    note("svs fast_plsa skipped: ", plan$svs_skip)
  } else {
    res[[length(res) + 1]] <- try_method("svs fast_plsa (tol sequence)",
                                         run_svs(X, k, plan$svs_tols, plan$svs_cap))
  }
  res <- Filter(Negate(is.null), res)
  if (!length(res)) { note("no method ran on ", name); return(invisible(NULL)) }

  ## aspectr checks
  asp <- Filter(function(r) startsWith(r$method, "aspectr"), res)
  if (length(asp)) {
    subheading("aspectr checks")
    a1 <- asp[[1]]
    obj <- as.numeric(a1$fit$objective)
    cat(sprintf("objective trace: %d values for %d iterations; interpreted as %s\n",
                length(obj), a1$fit$iterations %||% NA,
                if (a1$lag) "the value at the START of each iteration (lags by one)"
                else "the value AFTER each iteration (last = final model)"))
    incr <- if (length(obj) > 1) max(diff(obj)) else 0
    cat(sprintf("largest increase along the trace: %.3e (EM is monotone: should be <= ~1e-12)\n", incr))
    cat(sprintf("kl_obj(final model) = %.10f; last trace value = %.10f\n",
                a1$final, obj[length(obj)]))
    cat(sprintf("fit$time = %s s, wall = %.3f s, one-off setup ~ %.3f s, per iteration %.4f s\n",
                format(a1$fit$time %||% NA), a1$wall, a1$setup, a1$sec_per_iter))
    cat(sprintf("per-iteration cost / (nnz * k): %.2f ns (threads = %d)\n",
                1e9 * a1$sec_per_iter / (nnz * k), a1$threads))
    if (length(asp) > 1) {
      for (a in asp[-1]) {
        cat(sprintf("per-iteration cost / (nnz * k): %.2f ns (threads = %d); speed-up %.2fx; |final(t=%d) - final(t=1)| = %.2e\n",
                    1e9 * a$sec_per_iter / (nnz * k), a$threads,
                    a1$sec_per_iter / a$sec_per_iter, a$threads, abs(a$final - a1$final)))
      }
    }
  }

  ## target: worst final objective among the full-budget methods
  full <- Filter(function(r) r$full_budget, res)
  if (!length(full)) full <- res
  finals <- vapply(full, function(r) r$final, numeric(1))
  if (!any(is.finite(finals))) { note("no finite final objective on ", name); return(invisible(NULL)) }
  target <- max(finals[is.finite(finals)])
  who <- full[[which(finals == target)[1]]]
  subheading("target")
  cat(sprintf("target objective = %.8f (worst final among full-budget methods: %s, threads=%d)\n",
              target, who$method, who$threads))
  all_final <- vapply(res, function(r) r$final, 0)
  cat(sprintf("best final objective = %.8f\n", min(all_final[is.finite(all_final)])))

  ## table
  tt <- t(vapply(res, function(r) time_to_target(r$trace, target, r$interpolate), numeric(2)))
  base <- which(vapply(res, function(r) startsWith(r$method, "aspectr") && r$threads == 1, TRUE))
  base_t <- if (length(base)) tt[base[1], "time"] else NA_real_
  lower <- vapply(res, function(r) max(r$trace$time), 0)  # for "not reached": a lower bound
  tab <- data.frame(
    method = vapply(res, function(r) r$method, ""),
    threads = vapply(res, function(r) as.integer(r$threads), 0L),
    budget = vapply(res, function(r) if (is.na(r$budget)) "tol" else as.character(r$budget), ""),
    iters_to_target = ifelse(is.na(tt[, "iter"]), "not reached", formatC(tt[, "iter"], format = "g", digits = 4)),
    time_to_target_s = ifelse(is.na(tt[, "time"]), sprintf(">%.1f", lower), sprintf("%.3f", tt[, "time"])),
    ratio_to_aspectr_t1 = ifelse(is.na(tt[, "time"]), sprintf(">%.1f", lower / base_t),
                                 sprintf("%.2f", tt[, "time"] / base_t)),
    s_per_iter = signif(vapply(res, function(r) r$sec_per_iter, 0), 3),
    final_objective = sprintf("%.6f", vapply(res, function(r) r$final, 0)),
    stringsAsFactors = FALSE
  )
  subheading(sprintf("RESULTS %s: time to reach objective %.6f", name, target))
  print(tab, row.names = FALSE, right = FALSE)
  not_reached <- which(is.na(tt[, "time"]))
  for (i in not_reached) {
    cat(sprintf("  %s (threads=%d): did not reach the target within its budget (%.1f s)\n",
                res[[i]]$method, res[[i]]$threads, max(res[[i]]$trace$time)))
  }
  for (r in res) if (nzchar(r$note)) cat(sprintf("  note %s: %s\n", r$method, r$note))

  is_asp <- startsWith(tab$method, "aspectr")
  peer_t <- tt[!is_asp, "time"]
  if (any(is.finite(peer_t)) && any(is_asp)) {
    j <- which(!is_asp)[which.min(replace(peer_t, !is.finite(peer_t), Inf))]
    cat(sprintf("\nfastest peer: %s (threads=%d), %.3f s to target\n",
                tab$method[j], tab$threads[j], tt[j, "time"]))
    for (i in which(is_asp)) {
      cat(sprintf("fastest-peer time / aspectr (threads=%d) time = %.2f\n",
                  tab$threads[i], tt[j, "time"] / tt[i, "time"]))
    }
  } else if (any(is_asp)) {
    cat("\nno peer reached the target\n")
  }
  invisible(list(table = tab, target = target, results = res))
}

## ---------------------------------------------------------------------------
## 4. Data
## ---------------------------------------------------------------------------

## Planted pLSA: P(d, w) = P(d) sum_z P(z | d) P(w | z), with P(z | d) ~
## Dirichlet(alpha), each P(w | z) a randomly permuted Zipf(s) law (so the
## counts look like text), document lengths ~ Poisson(doc_len). Tokens are
## drawn per topic with the alias method and summed into a dgCMatrix.
make_synthetic <- function(n_docs, n_terms, k, doc_len, alpha = 0.1, s = 1.1, seed = 1) {
  set.seed(seed)
  zipf <- seq_len(n_terms)^(-s)
  beta <- t(vapply(seq_len(k), function(z) sample(zipf), numeric(n_terms)))
  beta <- beta / rowSums(beta)
  theta <- matrix(rgamma(n_docs * k, alpha), n_docs, k)
  theta <- theta / pmax(rowSums(theta), .Machine$double.xmin)
  len <- rpois(n_docs, doc_len)
  cnt <- vapply(seq_len(n_docs), function(d) rmultinom(1L, len[d], theta[d, ])[, 1], numeric(k))
  ii <- vector("list", k); jj <- vector("list", k)
  for (z in seq_len(k)) {
    ii[[z]] <- rep.int(seq_len(n_docs), cnt[z, ])
    jj[[z]] <- sample.int(n_terms, length(ii[[z]]), replace = TRUE, prob = beta[z, ])
  }
  X <- sparseMatrix(i = unlist(ii), j = unlist(jj), x = 1, dims = c(n_docs, n_terms))
  drop_empty(X)
}

## Drop all-zero rows and columns (fastTopics and NMF's Brunet updates need
## none; aspectr allows them).
drop_empty <- function(X) {
  X <- X[rowSums(X) > 0, colSums(X) > 0, drop = FALSE]
  as(X, "CsparseMatrix")
}

k <- 20L
datasets <- list()

if (have[["topicmodels"]]) {
  data("AssociatedPress", package = "topicmodels", envir = environment())
  ap <- AssociatedPress
  X_ap <- sparseMatrix(i = ap$i, j = ap$j, x = as.numeric(ap$v), dims = c(ap$nrow, ap$ncol))
  X_ap <- as(X_ap, "CsparseMatrix")
  stopifnot(inherits(X_ap, "dgCMatrix"), all(dim(X_ap) == c(2246, 10473)))
  ## a small corner of AP, on which the dense-in-R svs can run too
  n_small <- c(100, 300)  # svs needs seconds per iteration beyond this
  ord_d <- order(rowSums(X_ap), decreasing = TRUE)[seq_len(n_small[1])]
  ord_w <- order(colSums(X_ap), decreasing = TRUE)[seq_len(n_small[2])]
  X_small <- drop_empty(X_ap[sort(ord_d), sort(ord_w)])
} else {
  note("topicmodels unavailable: AssociatedPress is skipped")
}

ft <- function(method, nc, iters) list(method = method, nc = nc, iters = iters)

if (exists("X_small")) {
  datasets$ap_small <- list(
    name = sprintf("AP corner (longest %d docs x %d most frequent terms)", n_small[1], n_small[2]),
    X = X_small,
    plan = list(iters = 200L, aspectr_threads = c(1L, 2L),
                fasttopics = list(ft("scd", 1L, 200L), ft("em", 1L, 200L)),
                nmf_iters = 200L,
                svs_tols = if (quick) c(30, 3) else c(30, 3, 0.3, 0.03), svs_cap = 40))
}
if (exists("X_ap")) {
  it_ap <- if (quick) 30L else 200L
  it_ft <- if (quick) 20L else 100L
  datasets$ap <- list(
    name = "AssociatedPress", X = if (quick) drop_empty(X_ap[1:600, ]) else X_ap,
    plan = list(iters = it_ap, aspectr_threads = c(1L, 2L),
                fasttopics = list(ft("scd", 1L, it_ft), ft("scd", 2L, it_ft), ft("em", 1L, it_ft)),
                nmf_iters = if (quick) 10L else 60L,
                svs_tols = NULL,
                svs_skip = sprintf(paste0("its EM works on dense n*m*k arrays in R (about %.0f GB ",
                                          "per copy here, several copies per iteration); run on the ",
                                          "AP corner above instead"),
                                   8 * prod(dim(X_ap)) * k / 2^30)))
}
syn_dims <- if (quick) c(4000, 4000) else c(20000, 20000)
datasets$synthetic <- list(
  name = sprintf("synthetic planted pLSA (%d docs x %d terms)", syn_dims[1], syn_dims[2]),
  X = NULL,
  plan = list(iters = if (quick) 30L else 200L, aspectr_threads = c(1L, 2L),
              fasttopics = list(ft("scd", 1L, if (quick) 10L else 20L),
                                ft("scd", 2L, if (quick) 10L else 20L)),
              nmf_iters = NULL,
              nmf_skip = sprintf(paste0("dense %d x %d matrix (%.1f GB) and O(n m k) per ",
                                        "iteration (about 20 s/iteration extrapolated from AP)"),
                                 syn_dims[1], syn_dims[2], 8 * prod(syn_dims) / 2^30),
              svs_tols = NULL,
              svs_skip = "dense n*m*k arrays in R; infeasible at this size"))

## ---------------------------------------------------------------------------
## 5. Run
## ---------------------------------------------------------------------------

## ASPECTR_BENCH_ONLY (bench/common.R): the data sets to run, by name
## ("ap_small", "ap", "synthetic"; e.g. "synthetic" for bench/readme.R)
datasets <- datasets[vapply(names(datasets), bench_want, logical(1))]
t_all <- proc.time()[["elapsed"]]
out <- list()
for (nm in names(datasets)) {
  d <- datasets[[nm]]
  if (is.null(d$X)) {
    t_gen <- elapsed(make_synthetic(syn_dims[1], syn_dims[2], k, doc_len = 400,
                                    alpha = 0.1, s = 1.1, seed = 1))
    d$X <- t_gen$value
    cat(sprintf("\n(generated the synthetic data in %.1f s: per-document topic mix ~ Dirichlet(0.1), ",
                t_gen$time),
        "topics = permuted Zipf(1.1) laws, ~400 tokens per document)\n", sep = "")
  }
  out[[nm]] <- bench_dataset(d$name, d$X, k, d$plan)
  d$X <- NULL
  gc(verbose = FALSE)
}

heading("Summary")
for (nm in names(out)) {
  o <- out[[nm]]
  if (is.null(o)) next
  cat(sprintf("\n%s (target %.6f):\n", datasets[[nm]]$name, o$target))
  print(o$table[, c("method", "threads", "time_to_target_s", "ratio_to_aspectr_t1",
                    "final_objective")], row.names = FALSE, right = FALSE)
}
cat(sprintf("\nTotal bench time: %.1f s\n", proc.time()[["elapsed"]] - t_all))
