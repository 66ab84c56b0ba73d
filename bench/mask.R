#!/usr/bin/env Rscript
## bench/mask.R -- missing cells, masks and observed cells in nmf(): the
## cost of a mask per iteration, masked fits against RcppML, and rank by
## masked cross-validation against RcppML on the same held-out cells.
##
## Run from the package root:   Rscript bench/mask.R
## (ASPECTR_BENCH_QUICK=1 runs a small version; ASPECTR_BENCH_ONLY, a
## regular expression, runs only the sections it matches: "cost", "rcppml",
## "cv", "shards".) aspectr must be installed. RcppML and topicmodels are installed by
## this script when missing (as root on Debian the r-cran-* packages first);
## they are bench-only, not dependencies of aspectr.
##
## What RcppML offers. The version that installs here (CRAN 0.3.7) exports
## nmf(), project(), mse(), nnls(), bipartition() and dclust(); its nmf()
## has `mask_zeros = TRUE` (sparse input only: zeros are missing, every
## stored value observed) and nothing else for missing data: no mask of
## arbitrary cells, no weights, and no cross-validation function (the
## crossValidate() of RcppML's development versions is not in 0.3.7). The
## script prints what the installed version exports and its nmf()'s
## arguments. Its mask_zeros is refused for k = 1 and 2 ("not supported
## when k = 1 or 2"), so RcppML has no k = 2 row in the cv section. The
## masked comparisons therefore use observed-cells data
## (ratings: only the stored values count), which both packages fit, and
## for cross-validation the held-out cells are set to zero for RcppML (so
## that mask_zeros leaves them out) and masked for aspectr: the same cells.
##
## Sections.
##  cost: time per iteration of nmf() with a mask of 1% and of 10% of the
##    cells (drawn uniformly over all cells: on sparse data mostly zeros)
##    against the unmasked fit, k = 10, 1 thread, fixed iteration budget,
##    tol = 0, the same random start for every fit of a data set. Unmasked
##    fits run with accelerate = FALSE (the default unmasked HALS/ANLS
##    extrapolate; a masked fit never does), so the same update is compared.
##    Methods: Frobenius HALS, ANLS, MU; KL CD, MU. Data: AssociatedPress
##    (topicmodels; 2246 x 10473, 302k non-zeros) or, without topicmodels, a
##    synthetic 5000 x 2000 at 5% density; and a dense 1500 x 1000 (rank-10
##    exponential factors plus Gaussian noise, clipped at 0). Time per
##    iteration = (time at the last callback - time at the first) /
##    (iterations - 1): the set-up (the mask's conversion, the start) is
##    left out and printed separately as "setup" (the call's time less
##    iterations x time per iteration). Every configuration runs `rounds`
##    times, interleaved (all once, then all again); minima are kept.
##    ratio = masked / unmasked time per iteration of the same method.
##  rcppml: a ratings-like sparse matrix (3000 users x 2000 items, 3% of
##    cells rated 1..5 from a planted rank-10 model plus noise); aspectr
##    nmf(x, 10, observed = x != 0, method = "anls") (random start, and its
##    default NNDSVD start) against RcppML::nmf(x, 10, mask_zeros = TRUE)
##    (its own seeded random start; RcppML cannot take a start; on a
##    300 x 200 check, aspectr's init = "random", seed = 1 and RcppML's
##    seed = 1 gave models equal to 3e-7 after one and five iterations, i.e.
##    the same start and the same ANLS steps, so equal errors are expected
##    and the times compare the same computation), both for a
##    fixed number of iterations (an iteration: W, then H; tol = 0 for
##    aspectr, 1e-12 for RcppML, whose stopping rule is a correlation
##    distance), 1 thread, whole-call times, interleaved rounds, minima.
##    The error is computed the same way from both models' factors: the
##    mean squared error over the rated cells, sum (x - (WH)_ij)^2 / nnz.
##  cv: rank by held-out error on planted data of rank 5, k = 2..8.
##    (1) Ratings-like (observed cells; 2000 x 1000, 5% rated): 10% of the
##    ratings are held out; aspectr fits the rest with observed = , RcppML
##    with mask_zeros = TRUE on the same training matrix (held-out cells
##    zero), 50 iterations each from random starts. (2) Dense, every cell
##    observed and positive (400 x 300): 10% random cells held out; aspectr
##    with mask = , RcppML with the held-out cells set to zero in a sparse
##    copy and mask_zeros = TRUE (the data have no other zeros), 50
##    iterations each; and aspectr's own nmf_rank(method = "mask") (its own
##    random held-out cells, 3 repetitions, its defaults otherwise). Held-out
##    error = sqrt(sum (x - v)^2 / sum x^2) over the held-out cells (as
##    nmf_rank() reports it); the rank each picks is the smallest error.
##  shards: AssociatedPress (or the synthetic sparse data) with a mask of 1%
##    of the cells, k = 10, the same start: time per iteration of the masked
##    fit of the matrix, of shards() of 4 row blocks in memory and of the
##    same blocks in .shard files (read whole, one at a time, for every
##    request of a weighted fit), interleaved rounds, minima; and the
##    relative difference of the objective from the matrix's (the same fit).
##
## The BLAS is left as configured (the reference BLAS here); timings on a
## shared machine are noisy: the 1-minute load average is printed.

source("bench/common.R")  # %||%, quick, heading, note, ensure_peer, print_environment, bench_want, per_iteration, fmt_s
options(warn = 1)
t_script <- proc.time()[["elapsed"]]
heading("aspectr masks, missing cells and masked cross-validation (bench/mask.R)", if (quick) "  [QUICK]" else "")
if (!requireNamespace("aspectr", quietly = TRUE)) stop("aspectr must be installed")
suppressPackageStartupMessages(library(Matrix))
have_ml <- ensure_peer("RcppML", deb = "r-cran-rcppml")
have_tm <- ensure_peer("topicmodels", deb = "r-cran-topicmodels", sysreqs = "libgsl-dev")
print_environment(c("aspectr", "RcppML", "topicmodels", "Matrix"))
if (have_ml) {
  RcppML::setRcppMLthreads(1L)
  ex <- sort(getNamespaceExports("RcppML"))
  cat(sprintf("RcppML exports: %s\n", paste(ex, collapse = ", ")))
  cat(sprintf("RcppML::nmf() arguments: %s\n", paste(names(formals(RcppML::nmf)), collapse = ", ")))
  cv_fun <- grep("cross|valid|^cv", ex, value = TRUE, ignore.case = TRUE)
  cat(sprintf("RcppML cross-validation function: %s\n",
              if (length(cv_fun)) paste(cv_fun, collapse = ", ") else "none in this version"))
}


## topicmodels' AssociatedPress as a dgCMatrix without empty rows or columns
associated_press <- function() {
  e <- new.env()
  utils::data("AssociatedPress", package = "topicmodels", envir = e)
  ap <- e$AssociatedPress
  X <- Matrix::sparseMatrix(i = ap$i, j = ap$j, x = as.numeric(ap$v), dims = c(ap$nrow, ap$ncol))
  X[Matrix::rowSums(X) > 0, Matrix::colSums(X) > 0]
}

## ---------------------------------------------------------------------------
## cost: masked vs unmasked time per iteration
## ---------------------------------------------------------------------------
if (bench_want("cost")) {
  heading("cost: time per iteration with a mask of 1% and 10% of the cells vs unmasked (k = 10, 1 thread)")
  set.seed(20261128)
  sets <- list()
  if (have_tm && !quick) {
    X <- associated_press()
    sets$sparse <- list(name = sprintf("AssociatedPress %d x %d, %d non-zeros (sparse)", nrow(X), ncol(X),
                                       length(X@x)), X = X)
  } else {
    m <- if (quick) 1000L else 5000L; n <- if (quick) 400L else 2000L
    X <- Matrix::rsparsematrix(m, n, 0.05, rand.x = function(k) stats::rpois(k, 2) + 1)
    sets$sparse <- list(name = sprintf("synthetic sparse %d x %d, %d non-zeros", m, n, length(X@x)), X = X)
  }
  local({
    m <- if (quick) 500L else 1500L; n <- if (quick) 300L else 1000L
    W0 <- matrix(stats::rexp(m * 10), m, 10); H0 <- matrix(stats::rexp(10 * n), 10, n)
    sets$dense <<- list(name = sprintf("synthetic dense %d x %d (rank 10 + noise)", m, n),
                        X = pmax(W0 %*% H0 + matrix(stats::rnorm(m * n), m, n), 0))
  })
  methods_cost <- list(c("frobenius", "hals"), c("frobenius", "anls"), c("frobenius", "mu"),
                       c("kl", "cd"), c("kl", "mu"))
  fracs <- c(0, 0.01, 0.10)
  budget <- c(sparse = if (quick) 4L else 5L, dense = if (quick) 4L else 8L)
  rounds <- if (quick) 1L else 3L
  k <- 10L
  cost_rows <- list()
  for (dn in names(sets)) {
    d <- sets[[dn]]
    X <- d$X; m <- nrow(X); n <- ncol(X)
    cells <- as.numeric(m) * n
    subheading(d$name, sprintf("; %d iterations per fit, %d interleaved rounds", budget[[dn]], rounds))
    st <- list(W = matrix(stats::runif(m * k), m, k), H = matrix(stats::runif(k * n), k, n))
    masks <- lapply(fracs, function(f) {
      if (f == 0) return(NULL)
      ij <- arrayInd(sample.int(cells, round(f * cells)), c(m, n))
      Matrix::sparseMatrix(i = ij[, 1], j = ij[, 2], dims = c(m, n))
    })
    cfg <- expand.grid(f = seq_along(fracs), meth = seq_along(methods_cost))
    best <- rep(Inf, nrow(cfg)); setup <- rep(Inf, nrow(cfg)); iters <- integer(nrow(cfg))
    for (r in seq_len(rounds)) {
      for (ci in seq_len(nrow(cfg))) {
        lm <- methods_cost[[cfg$meth[ci]]]
        M <- masks[[cfg$f[ci]]]
        # (KL of the non-integer dense data warns that its likelihood means
        # nothing: muffled)
        res <- tryCatch(per_iteration(function(cb) withCallingHandlers(aspectr::nmf(
          X, k, loss = lm[1], method = lm[2], init = st, max_iter = budget[[dn]], tol = 0,
          accelerate = FALSE, mask = M, threads = 1L, seed = 1L, callback = cb),
          warning = function(w) if (grepl("whole numbers", conditionMessage(w))) invokeRestart("muffleWarning"))),
          error = function(e) { note(paste(lm, collapse = " "), " failed: ", conditionMessage(e)); NULL })
        if (is.null(res)) next
        best[ci] <- min(best[ci], res$per_iter)
        setup[ci] <- min(setup[ci], res$setup)
        iters[ci] <- res$iters
      }
    }
    tab <- data.frame(loss = vapply(cfg$meth, function(i) methods_cost[[i]][1], ""),
                      method = vapply(cfg$meth, function(i) methods_cost[[i]][2], ""),
                      mask = sprintf("%g%%", 100 * fracs[cfg$f]),
                      masked_cells = vapply(cfg$f, function(i) if (fracs[i] == 0) 0 else length(masks[[i]]@i), 0),
                      s_per_iter = best, setup_s = setup, stringsAsFactors = FALSE)
    base <- tab$s_per_iter[cfg$f == 1][cfg$meth]
    tab$ratio <- tab$s_per_iter / base
    out <- tab
    out$s_per_iter <- fmt_s(out$s_per_iter); out$setup_s <- fmt_s(out$setup_s)
    out$ratio <- formatC(out$ratio, format = "f", digits = 2)
    print(out, row.names = FALSE)
    cat(sprintf("load average (1 min): %s\n", loadavg()))
    tab$data <- dn
    cost_rows[[dn]] <- tab
  }
  cost <- do.call(rbind, cost_rows)
  cat("\nSummary: masked / unmasked time per iteration (same method, same start, no extrapolation)\n")
  sm <- cost[cost$mask != "0%", ]
  print(stats::reshape(sm[, c("data", "loss", "method", "mask", "ratio")], idvar = c("data", "loss", "method"),
                       timevar = "mask", direction = "wide"), row.names = FALSE, digits = 3)
}

## ---------------------------------------------------------------------------
## Ratings-like data: planted non-negative model, a fraction of cells rated
## ---------------------------------------------------------------------------
ratings <- function(m, n, density, rank, round_to_stars = TRUE, seed = 1) {
  set.seed(seed)
  W <- matrix(stats::rexp(m * rank), m, rank)
  H <- matrix(stats::rexp(rank * n), rank, n)
  nnz <- round(density * m * n)
  cell <- sample.int(m * n, nnz)
  ij <- arrayInd(cell, c(m, n))
  v <- rowSums(W[ij[, 1], , drop = FALSE] * t(H)[ij[, 2], , drop = FALSE])
  v <- 3 * v / mean(v) + stats::rnorm(nnz, sd = 0.5)
  v <- if (round_to_stars) pmin(pmax(round(v), 1), 5) else pmax(v, 0.05)
  Matrix::sparseMatrix(i = ij[, 1], j = ij[, 2], x = v, dims = c(m, n))
}
## model values at cells (i, j)
cell_values <- function(W, H, i, j) rowSums(W[i, , drop = FALSE] * t(H)[j, , drop = FALSE])
ml_factors <- function(f) list(W = f$w %*% diag(f$d, length(f$d)), H = f$h)

## ---------------------------------------------------------------------------
## rcppml: observed-cells fits, aspectr ANLS vs RcppML mask_zeros
## ---------------------------------------------------------------------------
if (bench_want("rcppml")) {
  heading("rcppml: masked fits of ratings-like data, aspectr observed = vs RcppML mask_zeros = TRUE (k = 10, 1 thread)")
  if (!have_ml) {
    note("RcppML unavailable: section skipped.")
  } else {
    x <- if (quick) ratings(600, 400, 0.05, 10) else ratings(3000, 2000, 0.03, 10)
    s <- Matrix::summary(x)
    cat(sprintf("data: %d x %d, %d ratings (%.1f%% of cells), values 1..5, planted rank 10\n",
                nrow(x), ncol(x), nrow(s), 100 * nrow(s) / prod(dim(x))))
    obs <- x != 0
    k <- 10L
    mse_nz <- function(W, H) mean((s$x - cell_values(W, H, s$i, s$j))^2)
    runs <- list(
      "aspectr anls [random]" = function(it) {
        f <- aspectr::nmf(x, k, observed = obs, method = "anls", init = "random", seed = 1L,
                          max_iter = it, tol = 0, threads = 1L)
        list(W = f$W, H = f$H, iters = f$iterations)
      },
      "aspectr anls [nndsvd]" = function(it) {
        f <- aspectr::nmf(x, k, observed = obs, method = "anls", seed = 1L, max_iter = it, tol = 0,
                          threads = 1L)
        list(W = f$W, H = f$H, iters = f$iterations)
      },
      "RcppML nmf mask_zeros [own]" = function(it) {
        f <- RcppML::nmf(x, k, mask_zeros = TRUE, maxit = it, tol = 1e-12, seed = 1, verbose = FALSE,
                         L1 = c(0, 0), diag = TRUE)
        c(ml_factors(f), iters = f$iter)
      })
    budgets <- if (quick) 5L else c(10L, 30L)
    rounds <- if (quick) 1L else 3L
    rows <- list()
    for (b in budgets) {
      tm <- setNames(rep(Inf, length(runs)), names(runs)); err <- tm; its <- tm
      for (r in seq_len(rounds)) {
        for (nm in names(runs)) {
          gc(FALSE)
          t0 <- proc.time()[["elapsed"]]
          f <- runs[[nm]](b)
          t1 <- proc.time()[["elapsed"]] - t0
          tm[nm] <- min(tm[nm], t1)
          err[nm] <- mse_nz(f$W, f$H); its[nm] <- f$iters
        }
      }
      ref <- tm[["aspectr anls [random]"]]
      rows[[length(rows) + 1]] <- data.frame(iterations = b, method = names(runs), ran = its, time_s = tm,
                                             s_per_iter = tm / its, mse_observed = err,
                                             "aspectr/this" = ref / tm, check.names = FALSE)
    }
    tab <- do.call(rbind, rows)
    print(tab, row.names = FALSE, digits = 4)
    cat(sprintf("(noise floor: rating noise sd 0.5 plus rounding to whole stars)\nload average (1 min): %s\n",
                loadavg()))
  }
}

## ---------------------------------------------------------------------------
## cv: rank by held-out error on planted rank-5 data
## ---------------------------------------------------------------------------
rel_heldout <- function(W, H, i, j, v) sqrt(sum((v - cell_values(W, H, i, j))^2) / sum(v^2))
cv_table <- function(ks, fit_ours, fit_ml, i, j, v, rounds) {
  rows <- list()
  for (k in ks) {
    t_a <- t_m <- Inf
    for (r in seq_len(rounds)) {
      gc(FALSE)
      t0 <- proc.time()[["elapsed"]]; fa <- fit_ours(k); t_a <- min(t_a, proc.time()[["elapsed"]] - t0)
      fm <- NULL
      if (have_ml) {
        gc(FALSE)
        t0 <- proc.time()[["elapsed"]]
        fm <- tryCatch(fit_ml(k), error = function(e) {
          if (r == 1) note("RcppML at k = ", k, ": ", conditionMessage(e))
          NULL
        })
        if (!is.null(fm)) t_m <- min(t_m, proc.time()[["elapsed"]] - t0)
      }
    }
    rows[[length(rows) + 1]] <- data.frame(
      k = k, aspectr_heldout = rel_heldout(fa$W, fa$H, i, j, v), aspectr_s = t_a,
      RcppML_heldout = if (!is.null(fm)) rel_heldout(fm$W, fm$H, i, j, v) else NA_real_,
      RcppML_s = if (!is.null(fm)) t_m else NA_real_)
  }
  tab <- do.call(rbind, rows)
  tab$"aspectr/RcppML time" <- tab$aspectr_s / tab$RcppML_s
  print(tab, row.names = FALSE, digits = 4)
  cat(sprintf("rank picked (smallest held-out error): aspectr %d, RcppML %s (planted: 5)\n",
              tab$k[which.min(tab$aspectr_heldout)],
              if (any(is.finite(tab$RcppML_heldout))) as.character(tab$k[which.min(tab$RcppML_heldout)]) else "-"))
  invisible(tab)
}

if (bench_want("cv")) {
  heading("cv: held-out error by rank, planted rank 5, 10% held out, k = 2..8 (1 thread)")
  ks <- 2:8
  iters <- if (quick) 20L else 50L
  rounds <- if (quick) 1L else 2L
  if (!have_ml) note("RcppML unavailable: aspectr alone.")

  subheading("(1) ratings-like (only the rated cells count): aspectr observed = vs RcppML mask_zeros = TRUE")
  x <- if (quick) ratings(600, 300, 0.08, 5, FALSE) else ratings(2000, 1000, 0.05, 5, FALSE)
  s <- Matrix::summary(x)
  set.seed(2)
  test <- sample.int(nrow(s), round(0.1 * nrow(s)))
  xtr <- Matrix::sparseMatrix(i = s$i[-test], j = s$j[-test], x = s$x[-test], dims = dim(x))
  cat(sprintf("data: %d x %d, %d ratings (continuous, noise sd 0.5), %d held out; %d iterations per fit, minima of %d rounds\n",
              nrow(x), ncol(x), nrow(s), length(test), iters, rounds))
  obs <- xtr != 0
  cv_table(ks,
           function(k) aspectr::nmf(xtr, k, observed = obs, method = "anls", init = "random", seed = 1L,
                                    max_iter = iters, tol = 0, threads = 1L),
           function(k) ml_factors(RcppML::nmf(xtr, k, mask_zeros = TRUE, maxit = iters, tol = 1e-12, seed = 1,
                                              verbose = FALSE, L1 = c(0, 0))),
           s$i[test], s$j[test], s$x[test], rounds)

  subheading("(2) dense, every cell observed: aspectr mask = vs RcppML (held-out cells zeroed, mask_zeros = TRUE)")
  set.seed(3)
  m <- if (quick) 200L else 400L; n <- if (quick) 150L else 300L
  W0 <- matrix(stats::rexp(m * 5), m, 5); H0 <- matrix(stats::rexp(5 * n), 5, n)
  xd <- pmax(W0 %*% H0 + matrix(stats::rnorm(m * n, sd = 0.5), m, n), 0.01)
  held <- sample.int(m * n, round(0.1 * m * n))
  hij <- arrayInd(held, c(m, n))
  M <- Matrix::sparseMatrix(i = hij[, 1], j = hij[, 2], dims = c(m, n))
  xz <- xd; xz[held] <- 0
  xz <- methods::as(xz, "CsparseMatrix")
  cat(sprintf("data: %d x %d dense, rank-5 exponential factors + N(0, 0.5^2) noise, clipped at 0.01 (no zeros); %d cells held out\n",
              m, n, length(held)))
  cv_table(ks,
           function(k) aspectr::nmf(xd, k, mask = M, method = "anls", init = "random", seed = 1L,
                                    max_iter = iters, tol = 0, threads = 1L),
           function(k) ml_factors(RcppML::nmf(xz, k, mask_zeros = TRUE, maxit = iters, tol = 1e-12, seed = 1,
                                              verbose = FALSE, L1 = c(0, 0))),
           hij[, 1], hij[, 2], xd[held], rounds)

  subheading("(3) the same dense data: aspectr nmf_rank(method = \"mask\") (its own held-out cells, 3 repetitions)")
  t0 <- proc.time()[["elapsed"]]
  n_unconv <- 0L
  sel <- withCallingHandlers(aspectr::nmf_rank(xd, k = ks, method = "mask", seed = 1, threads = 1L),
                             message = function(m) if (grepl("did not converge", conditionMessage(m))) {
                               n_unconv <<- n_unconv + 1L
                               invokeRestart("muffleMessage")
                             })
  t_sel <- proc.time()[["elapsed"]] - t0
  if (n_unconv) note(n_unconv, " of its fits stopped at max_iter = 500 before tol = 1e-5 (messages muffled)")
  print(sel)
  cat(sprintf("nmf_rank(method = \"mask\"): %.1f s for %d ranks x %d repetitions; picked %d (planted: 5)\n",
              t_sel, length(ks), sel$nrun, sel$best))
}

## ---------------------------------------------------------------------------
## shards: a masked fit of shards (in memory, in .shard files) vs the matrix
## ---------------------------------------------------------------------------
if (bench_want("shards")) {
  heading("shards: masked fits of shards() vs the same masked fit of the matrix (1% mask, k = 10, 1 thread)")
  set.seed(20261129)
  if (have_tm && !quick) {
    X <- associated_press()
    name <- sprintf("AssociatedPress %d x %d, %d non-zeros", nrow(X), ncol(X), length(X@x))
  } else {
    X <- Matrix::rsparsematrix(1000L, 400L, 0.05, rand.x = function(k) stats::rpois(k, 2) + 1)
    name <- sprintf("synthetic sparse %d x %d", nrow(X), ncol(X))
  }
  m <- nrow(X); n <- ncol(X); k <- 10L
  ij <- arrayInd(sample.int(as.numeric(m) * n, round(0.01 * m * n)), c(m, n))
  M <- Matrix::sparseMatrix(i = ij[, 1], j = ij[, 2], dims = c(m, n))
  st <- list(W = matrix(stats::runif(m * k), m, k), H = matrix(stats::runif(k * n), k, n))
  cuts <- round(seq(0, m, length.out = 5))
  parts <- lapply(1:4, function(i) X[(cuts[i] + 1):cuts[i + 1], , drop = FALSE])
  dir <- tempfile("maskshards"); dir.create(dir)
  backends <- list(matrix = X, `shards (memory, 4)` = aspectr::shards(parts),
                   `shards (.shard files, 4)` = aspectr::write_shards(parts, dir))
  iters <- if (quick) 4L else 6L
  rounds <- if (quick) 1L else 2L
  subheading(name, sprintf("; %d masked cells, %d iterations per fit, %d interleaved rounds", nrow(ij), iters, rounds))
  meths <- list(c("frobenius", "hals"), c("frobenius", "anls"), c("frobenius", "mu"), c("kl", "cd"), c("kl", "mu"))
  cfg <- expand.grid(b = seq_along(backends), meth = seq_along(meths))
  best <- rep(Inf, nrow(cfg)); obj <- rep(NA_real_, nrow(cfg))
  for (r in seq_len(rounds)) {
    for (ci in seq_len(nrow(cfg))) {
      lm <- meths[[cfg$meth[ci]]]
      res <- tryCatch(per_iteration(function(cb) suppressMessages(aspectr::nmf(
        backends[[cfg$b[ci]]], k, loss = lm[1], method = lm[2], init = st, max_iter = iters, tol = 0,
        mask = M, threads = 1L, callback = cb))),
        error = function(e) { note(paste(lm, collapse = " "), " failed: ", conditionMessage(e)); NULL })
      if (is.null(res)) next
      best[ci] <- min(best[ci], res$per_iter)
      obj[ci] <- res$fit$value
    }
  }
  tab <- data.frame(loss = vapply(cfg$meth, function(i) meths[[i]][1], ""),
                    method = vapply(cfg$meth, function(i) meths[[i]][2], ""),
                    data = names(backends)[cfg$b], s_per_iter = fmt_s(best),
                    ratio = formatC(best / best[cfg$b == 1][cfg$meth], format = "f", digits = 2),
                    objective_rel_diff = formatC(abs(obj / obj[cfg$b == 1][cfg$meth] - 1), format = "e", digits = 1),
                    stringsAsFactors = FALSE)
  print(tab, row.names = FALSE)
  cat("ratio: time per iteration / that of the matrix (same method, mask and start); objective_rel_diff: |value / matrix's - 1|\n")
  cat(sprintf("load average (1 min): %s\n", loadavg()))
  unlink(dir, recursive = TRUE)
}

cat(sprintf("\nload average (1 min) at the end: %s; total %.0f s\n", loadavg(),
            proc.time()[["elapsed"]] - t_script))
