## bench/builds.R -- in-memory speed of two installed builds of aspectr on
## the same fits: a change's before and after.
##
##   Rscript bench/builds.R LIB_BEFORE LIB_AFTER     # library folders
##   ASPECTR_BENCH_ROUNDS=5 Rscript bench/builds.R ... # more rounds (3)
##   ASPECTR_BENCH_FITS=prior,nmf_kl Rscript bench/builds.R ... # these fits only
##
## Each round runs every fit in a fresh R process per build, the builds
## interleaved; a process times each fit three times and keeps its minimum.
## Printed: each build's minimum over the rounds and after / before.
## The fits are those whose iteration runs as the rules on pieces with the
## data as one piece (the KL coordinate descent of the aspect model and the
## weighted CP rules):
## * prior: plsa() of AssociatedPress (topicmodels), k = 20, a prior
##   (terms 0.1, documents 0.5), 40 iterations;
## * plsa_kl: plsa() of AssociatedPress, k = 20, 40 iterations (the
##   default, KL coordinate descent);
## * nmf_kl: nmf(loss = "kl") of AssociatedPress, k = 20, 40 iterations
##   (coordinate descent); nmf_wkl: the same, 20 iterations, with 5000
##   random cells masked (the weighted rule);
## * nway: plsa() of a 2000 x 300 x 50 array of 3e5 cells, k = 10, 10
##   iterations (coordinate descent);
## * lca_cd, lca_em, lca_sq: lca() of 5000 x 8 answers of 4 levels, k = 4,
##   4 starts, 300 iterations (coordinate descent, EM, SQUAREM);
## * small_em, small_sq: lca() of 300 x 5 binary answers (32 patterns),
##   k = 3, 300 starts (staged: 100 iterations each, the best to 200), one
##   thread, no standard errors (EM, SQUAREM: where a step costs
##   microseconds); small_two: EM with two threads over the starts;
## * plsa_em: plsa(method = "em") of AssociatedPress, k = 20, 40 iterations;
## * w_mu, w_cd, w_hals: ntf() of a 300 x 100 x 40 Poisson array, 10% of
##   its cells masked, k = 10, 80 iterations (KL multiplicative updates, KL
##   coordinate descent, Frobenius HALS).
## Run from the package root.

source("bench/common.R")
libs <- commandArgs(TRUE)
if (length(libs) != 2 || !all(file.exists(file.path(libs, "aspectr")))) {
  stop("give two library folders, each with aspectr installed: before and after")
}
names(libs) <- c("before", "after")
rounds <- as.integer(Sys.getenv("ASPECTR_BENCH_ROUNDS", "3"))
if (!requireNamespace("topicmodels", quietly = TRUE)) install_quietly("topicmodels")
heading("In-memory speed of two builds (bench/builds.R)")
for (l in names(libs)) {
  v <- read.dcf(file.path(libs[[l]], "aspectr", "DESCRIPTION"), fields = c("Version", "Packaged", "Built"))
  cat(sprintf("%-6s %s (%s)\n", l, libs[[l]], paste(na.omit(v[1, ]), collapse = ", ")))
}

child <- '
suppressMessages({library(aspectr); library(topicmodels)})
data(AssociatedPress)
x <- Matrix::sparseMatrix(i = AssociatedPress$i, j = AssociatedPress$j, x = AssociatedPress$v, dims = dim(AssociatedPress))
set.seed(1); dims <- c(2000, 300, 50)
idx <- unique(cbind(sample(dims[1], 3e5, TRUE), sample(dims[2], 3e5, TRUE), sample(dims[3], 3e5, TRUE)))
a <- array(0, dims); a[idx] <- rpois(nrow(idx), 2) + 1
set.seed(2); lc <- data.frame(lapply(1:8, function(j) factor(sample(1:4, 5000, TRUE))))
set.seed(4); sm <- data.frame(lapply(1:5, function(j) factor(sample(1:2, 300, TRUE))))
set.seed(5); apmask <- Matrix::sparseMatrix(i = sample(nrow(x), 5000, TRUE), j = sample(ncol(x), 5000, TRUE), x = TRUE, dims = dim(x))
set.seed(3); wd <- c(300, 100, 40); w <- array(rpois(prod(wd), 0.3), wd); mask <- array(runif(prod(wd)) < 0.1, wd)
tm <- function(expr) {  # (a call, evaluated anew each time)
  t <- Inf
  for (i in 1:3) t <- min(t, system.time(suppressWarnings(eval(expr, globalenv())))[[3]])
  t
}
fits <- alist(prior = plsa(x, 20, seed = 1, prior = list(terms = 0.1, documents = 0.5), max_iter = 40, tol = 0),
       plsa_kl = plsa(x, 20, seed = 1, max_iter = 40, tol = 0),
       nmf_kl = nmf(x, 20, loss = "kl", seed = 1, max_iter = 40, tol = 0),
       nmf_wkl = nmf(x, 20, loss = "kl", seed = 1, max_iter = 20, tol = 0, mask = apmask),
       nway = plsa(a, 10, seed = 1, max_iter = 10, tol = 0),
       lca_cd = lca(lc, 4, seed = 1, method = "cd", nrun = 4, max_iter = 300, tol = 0),
       lca_em = lca(lc, 4, seed = 1, method = "em", nrun = 4, max_iter = 300, tol = 0),
       lca_sq = lca(lc, 4, seed = 1, method = "squarem", nrun = 4, max_iter = 300, tol = 0),
       small_em = lca(sm, 3, seed = 1, method = "em", nrun = 300, max_iter = 200, tol = 0, threads = 1, se = FALSE),
       small_sq = lca(sm, 3, seed = 1, method = "squarem", nrun = 300, max_iter = 200, tol = 0, threads = 1, se = FALSE),
       small_two = lca(sm, 3, seed = 1, method = "em", nrun = 300, max_iter = 200, tol = 0, threads = 2, se = FALSE),
       plsa_em = plsa(x, 20, seed = 1, method = "em", max_iter = 40, tol = 0),
       w_mu = ntf(w, 10, loss = "kl", method = "mu", mask = mask, seed = 1, max_iter = 80, tol = 0),
       w_cd = ntf(w, 10, loss = "kl", method = "cd", mask = mask, seed = 1, max_iter = 80, tol = 0),
       w_hals = ntf(w, 10, loss = "frobenius", method = "hals", mask = mask, seed = 1, max_iter = 80, tol = 0))
only <- strsplit(Sys.getenv("ASPECTR_BENCH_FITS"), ",")[[1]]
if (length(only)) fits <- fits[only]
r <- vapply(fits, tm, 0)
cat(paste(names(r), format(r, digits = 4)), sep = "\n")
'
one <- function(lib) {
  script <- tempfile(fileext = ".R")
  on.exit(unlink(script))
  writeLines(c(sprintf(".libPaths(c(%s, .libPaths()))", deparse(normalizePath(lib))), child), script)
  out <- system2(file.path(R.home("bin"), "Rscript"), script, stdout = TRUE)
  kv <- strsplit(trimws(out[grepl("^[a-z_]+ ", out)]), " +")
  stats::setNames(as.numeric(vapply(kv, `[`, "", 2)), vapply(kv, `[`, "", 1))
}
res <- list(before = NULL, after = NULL)
for (r in seq_len(rounds)) {
  for (l in names(libs)) {
    t <- one(libs[[l]])
    cat(sprintf("round %d %-6s %s\n", r, l, paste(names(t), format(t, nsmall = 3), collapse = "  ")))
    res[[l]] <- rbind(res[[l]], t)
  }
}
b <- apply(res$before, 2, min)
a <- apply(res$after, 2, min)
subheading("seconds, minimum over the rounds")
print(data.frame(fit = names(b), before = b, after = a[names(b)], ratio = round(a[names(b)] / b, 2)), row.names = FALSE)
