## Reduced same-process comparison for nmf(loss = "kl") with and without
## extrapolation (accelerate) against fastTopics scd, from the shared random
## start of bench/nmf.R; target = the worst final objective after 50
## iterations among the three (usually aspectr plain MU). 1 thread.
## Rscript bench/kl-her.R [dense|AP|SOTU ...]
suppressMessages(library(Matrix))
args <- commandArgs(TRUE); if (!length(args)) args <- c("dense", "AP", "SOTU")
cat("load:", readLines("/proc/loadavg"), "\n")
gkl <- function(X, W, H) {
  Tm <- as(as(X, "CsparseMatrix"), "TsparseMatrix"); i <- Tm@i + 1L; j <- Tm@j + 1L; x <- Tm@x
  v <- pmax(rowSums(W[i, , drop = FALSE] * t(H)[j, , drop = FALSE]), 1e-300)
  sum(x * log(x / v)) - sum(x) + sum(colSums(W) * rowSums(H))
}
make <- function(name) {
  set.seed(20240611)
  if (name == "dense") {
    m <- 2000L; n <- 1000L; r <- 10L
    Ws <- matrix(rexp(m * r), m, r); Hs <- matrix(rexp(r * n), r, n)
    return(list(X = pmax(Ws %*% Hs + matrix(rnorm(m * n), m, n), 0), k = 10L))
  }
  if (name == "AP") {
    e <- new.env(); data("AssociatedPress", package = "topicmodels", envir = e); ap <- e$AssociatedPress
    X <- sparseMatrix(i = ap$i, j = ap$j, x = as.numeric(ap$v), dims = c(ap$nrow, ap$ncol))
    return(list(X = X[rowSums(X) > 0, colSums(X) > 0], k = 20L))
  }
  X <- as(as(aspectr::sotu_dtm, "CsparseMatrix"), "generalMatrix"); dimnames(X) <- NULL
  list(X = X[rowSums(X) > 0, colSums(X) > 0], k = 20L)
}
for (dn in args) {
  d <- make(dn); X <- d$X; k <- d$k; m <- nrow(X); n <- ncol(X)
  set.seed(101)
  scale <- sqrt(mean(if (is(X, "sparseMatrix")) colSums(X) / m else X) / k)
  st <- list(W = matrix(runif(m * k), m, k) * scale, H = matrix(runif(k * n), k, n) * scale)
  run <- list(
    asp_mu = function(it) { f <- aspectr::nmf(X, k, loss = "kl", init = st, max_iter = it, tol = 0, threads = 1,
                                              accelerate = FALSE); list(tr = f$objective, W = f$W, H = f$H) },
    asp_her = function(it) { f <- aspectr::nmf(X, k, loss = "kl", init = st, max_iter = it, tol = 0, threads = 1,
                                               accelerate = TRUE); list(tr = f$objective, W = f$W, H = f$H) },
    ft_scd = function(it) {
      fit0 <- suppressWarnings(fastTopics::init_poisson_nmf(X, F = t(st$H), L = st$W, verbose = "none"))
      f <- suppressWarnings(fastTopics::fit_poisson_nmf(X, fit0 = fit0, numiter = it, method = "scd",
                                                        control = list(nc = 1), verbose = "none"))
      list(tr = f$progress$dev / 2, W = f$L, H = t(f$F)) })
  B <- 50L
  bud <- lapply(run, function(f) f(B))
  finals <- sapply(names(bud), function(id) gkl(X, bud[[id]]$W, bud[[id]]$H))
  target <- max(finals)
  cat(sprintf("\n%s %d x %d k=%d  finals: %s  target %.6g\n", dn, m, n, k,
              paste(sprintf("%s=%.6g", names(finals), finals), collapse = " "), target))
  out <- list()
  for (id in names(run)) {
    tr <- bud[[id]]$tr; off <- finals[[id]] - tr[length(tr)]   # align each trace to gkl()
    ns <- which(tr + off <= target * (1 + 1e-9))[1]
    if (is.na(ns)) { cat(id, ": not reached\n"); next }
    reps <- 3L; tm <- numeric(reps)
    for (r in seq_len(reps)) tm[r] <- system.time(res <- run[[id]](ns))[["elapsed"]]
    e <- gkl(X, res$W, res$H)
    out[[id]] <- median(tm)
    cat(sprintf("  %-8s n* = %3d  time %.3f s (median of %d)  obj %.6g  %s\n", id, ns, median(tm), reps, e,
                if (e <= target * (1 + 1e-9)) "ok" else "MISS"))
  }
  if (!is.null(out$ft_scd)) for (id in c("asp_mu", "asp_her")) if (!is.null(out[[id]]))
    cat(sprintf("  ratio %s / ft_scd = %.2f\n", id, out[[id]] / out$ft_scd))
}
cat("load:", readLines("/proc/loadavg"), "\n")
