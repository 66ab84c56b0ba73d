# Malformed calls to every exported function and method. Each must raise a
# classed `aspectr_error_input` (or a more specific subclass) whose message
# names the argument at fault (and, where given, shows the value given).
# One line per case: mal(<call>, <argument named in the message>,
# <error subclass kind or NULL>, <text of the value given>).

mal <- function(expr, arg, kind = NULL, value = NULL) {
  list(expr = substitute(expr), arg = arg,
       class = if (is.null(kind)) "aspectr_error_input" else paste0("aspectr_error_input_", kind),
       value = value)
}

# ---- fixtures (small, fitted once) ----
x <- tiny_counts()                                   # 12 x 9, with dimnames
neg <- x; neg[1, 1] <- -2
na <- x; na[2, 2] <- NA
inf <- x; inf[3, 3] <- Inf
arr <- array(c(5, 0, 2, 1, 3, 0, 1, 4, 2, 0, 3, 1, 2, 2, 0, 1, 1, 3, 0, 2, 4, 1, 0, 2), c(2, 3, 4))
arr_neg <- arr; arr_neg[1] <- -1
set.seed(3)
G <- matrix(runif(12), 6, 2)
Y <- outer(outer(G[, 1], G[, 1]), G[, 1]) + outer(outer(G[, 2], G[, 2]), G[, 2])
sym <- as_symtensor(Y)
A <- tcrossprod(G)
A_asym <- A; A_asym[1, 2] <- A_asym[1, 2] + 1
lc <- data.frame(a = c(1, 2, 1, 2, 1, 2, 2, 1, 1, 2), b = c(1, 1, 2, 2, 1, 2, 1, 2, 2, 1),
                 c = c(2, 1, 2, 1, 1, 2, 2, 1, 2, 2))
cls <- c(1, 2, 1, 2, 1, 2, 2, 1, 1, 2)
pts <- cbind(seq(0, 1, length.out = 12), c(seq(0, 1, length.out = 6), seq(1, 0, length.out = 6)))
pts_na <- pts; pts_na[1, 1] <- NA
idx <- rbind(c(1, 1, 1), c(2, 3, 1), c(2, 1, 4))
tens <- sptensor(idx, c(1, 2, 3))
sidx <- rbind(c(1, 2, 3), c(2, 2, 4))
tns_dir <- tempfile("tns")
dir.create(tns_dir)
writeLines("1,2", file.path(tns_dir, "a.csv"))
sh <- shards(list(x[1:6, ], x[7:12, ]))
sh_cl <- structure(list(list()), class = c("SOCKcluster", "cluster"))
tns_file <- function(name, lines) {
  f <- file.path(tns_dir, name)
  writeLines(lines, f)
  f
}
tns_good <- tns_file("good.tns", c("1 1 1 2", "2 3 1 1"))
tns_text <- tns_file("text.tns", c("1 1 1 2", "2 x 1 1"))
tns_ragged <- tns_file("ragged.tns", c("1 1 1 2", "2 3 1"))
tns_neg <- tns_file("neg.tns", c("1 1 1 2", "2 3 1 -1"))
tns_zero <- tns_file("zero.tns", c("0 1 1 2"))
tns_empty <- tns_file("empty.tns", c("# nothing"))

dup_cols <- x[1:3, ]
colnames(dup_cols)[2] <- colnames(x)[1]
dup_rows <- x[, 1:2]
rownames(dup_rows)[2] <- rownames(x)[1]
lc_cov <- data.frame(a = c(1, 2, 1, 2, 1, 2, 2, 1, 1, 2), b = c(1, 1, 2, 2, 1, 2, 1, 2, 2, 1),
                     z = seq(0, 1, length.out = 10), s = "u")
lc_cov_inf <- lc_cov; lc_cov_inf$z[2] <- Inf
lc_cov_cplx <- lc_cov; lc_cov_cplx$z <- complex(real = lc_cov$z, imaginary = 1)
lc_cov_const <- lc_cov
lc_cov_na <- lc_cov; lc_cov_na$z <- NA_real_
lc_inf <- lc; lc_inf$a[1] <- Inf
long_na_level <- data.frame(a = addNA(factor(c("d1", NA))), b = c("w1", "w2"), n = 1:2)
long_list <- data.frame(a = c("d1", "d2"), b = c("w1", "w2"), n = 1:2)
long_list$a <- I(list("d1", "d2"))
sh_files <- write_shards(x, file.path(tns_dir, "sh"), 2)

fp <- plsa(x, 2, seed = 1, max_iter = 10)
fp3 <- plsa(arr, 2, seed = 1, max_iter = 10)
fn <- nmf(x, 2, seed = 1, max_iter = 10)
ft <- ntf(arr, 2, seed = 1, max_iter = 10)
fl <- lca(lc, 2, nrun = 2, seed = 1, max_iter = 20)
fs <- sntf(sym, 2, seed = 1, max_iter = 10)
fsym <- symnmf(A, 2, seed = 1, max_iter = 10)
fmw <- multiway_cluster(pts, 2, nrun = 1, seed = 1, max_iter = 10, threads = 1)

cases <- list(
  # plsa
  mal(plsa(), "x", "argument"),
  mal(plsa(x), "k", "argument"),
  mal(plsa(Matrix::Matrix(x, sparse = TRUE), loss = "tsallis"), "k", "argument"),
  mal(plsa(loss = "tsallis"), "x", "argument"),
  mal(plsa(x, NA), "k", "argument", "NA"),
  mal(plsa(x, NaN), "k", "argument", "NaN"),
  mal(plsa(x, Inf), "k", "argument", "Inf"),
  mal(plsa(x, -1), "k", "argument", "-1"),
  mal(plsa(x, 2.5), "k", "argument", "2.5"),
  mal(plsa(x, 10), "k", "argument", "10"),
  mal(plsa(x, numeric(0)), "k", "argument", "empty"),
  mal(plsa(x, c(2, 3)), "k", "argument", "length 2"),
  mal(plsa(x, "2"), "k", "argument", '"2"'),
  mal(plsa(x, TRUE), "k", "argument", "TRUE"),
  mal(plsa(arr, 100), "k", "argument", "100"),
  mal(plsa(arr, 2, mode_weights = list(1:2)), "mode_weights", "type"),
  mal(plsa(arr, 2, mode_weights = list(1:3, NULL, NULL)), "mode_weights", "value"),
  mal(plsa(arr, 2, mask = array(FALSE, c(2, 3, 5))), "mask", "value", "2 x 3 x 5"),
  mal(plsa(arr, 2, loss = "l2", weights = array(-1, dim(arr))), "weights", "value"),
  mal(plsa(arr, 2, row_weights = 1:2, mode_weights = list(1:2, NULL, NULL)), "mode_weights", "argument"),
  mal(plsa(x, 2, loss = "poisson"), "loss", "argument", '"poisson"'),
  mal(plsa(x, 2, method = "mu"), "method", "argument", '"mu"'),
  mal(plsa(x, 2, method = NA), "method", "argument", "NA"),
  mal(plsa(x, 2, method = c("em", "cd")), "method", "argument"),
  mal(plsa(x, 2, method = "cd", tempering = 0.5), "method", "argument", '"cd"'),
  mal(plsa(x, 2, loss = "l2", method = "em"), "method", "argument", '"em"'),
  mal(plsa(x, 2, loss = c("kl", "l2")), "loss", "argument"),
  mal(plsa(x, 2, loss = NA_character_), "loss", "argument"),
  mal(plsa(x, 2, loss = "tsallis", q = 1), "q", "argument", "1"),
  mal(plsa(x, 2, q = Inf), "q", "argument", "Inf"),
  mal(plsa(x, 2, q = NA), "q", "argument", "NA"),
  mal(plsa(x, 2, tempering = Inf), "tempering", "argument", "Inf"),
  mal(plsa(x, 2, tempering = 0), "tempering", "argument", "0"),
  mal(plsa(x, 2, loss = "l2", tempering = 0.5), "tempering", "argument"),
  mal(plsa(x, 2, nrun = 0), "nrun", "argument", "0"),
  mal(plsa(x, 2, max_iter = -5), "max_iter", "argument", "-5"),
  mal(plsa(x, 2, max_iter = 1e10), "max_iter", "argument", "1e+10"),
  mal(plsa(x, 2, tol = -1), "tol", "argument", "-1"),
  mal(plsa(x, 2, tol = Inf), "tol", "argument", "Inf"),
  mal(plsa(x, 2, tol = NaN), "tol", "argument", "NaN"),
  mal(plsa(x, 2, seed = 2^40), "seed", "argument", "1099511627776"),
  mal(plsa(x, 2, seed = 1.5), "seed", "argument", "1.5"),
  mal(plsa(x, 2, seed = "a"), "seed", "argument", '"a"'),
  mal(plsa(x, 2, threads = 0), "threads", "argument", "0"),
  mal(plsa(x, 2, threads = Inf), "threads", "argument", "Inf"),
  mal(plsa(x, 2, verbose = "yes"), "verbose", "argument", '"yes"'),
  mal(plsa(x, 2, maxiter = 10), "maxiter", "argument", "10"),
  mal(plsa(x, 2, max_iter = 5, 7), "loss", "argument", "7"),
  mal(plsa(neg, 2), "x", "value", "-2"),
  mal(plsa(na, 2, loss = "tsallis", tempering = 0.8), "tempering", "argument"),
  mal(plsa(inf, 2), "x", "value"),
  mal(plsa(x[0, ], 2), "x", "empty"),
  mal(plsa(x * 0, 2), "x", "empty"),
  mal(plsa(letters, 2), "x", "type"),
  mal(plsa(as.data.frame(x), 2), "x", "type"),
  mal(plsa(list(1, 2), 2), "x", "type"),
  # nmf
  mal(nmf(), "x", "argument"),
  mal(nmf(x), "k", "argument"),
  mal(nmf(x, 0), "k", "argument", "0"),
  mal(nmf(x, 2, loss = "is"), "loss", "argument", '"is"'),
  mal(nmf(x, 2, method = "alx"), "method", "argument", '"alx"'),
  mal(nmf(x, 2, loss = "kl", method = "hals"), "method", "argument"),
  mal(nmf(x, 2, loss = "beta", beta = Inf), "beta", "argument", "Inf"),
  mal(nmf(x, 2, beta = NA), "beta", "argument", "NA"),
  mal(nmf(x, 2, init = "svd"), "init", "argument", '"svd"'),
  mal(nmf(x, 2, init = list(W = matrix(1, 3, 3))), "init", "argument", "3 x 3"),
  mal(nmf(x, 2, init = list(W = -matrix(1, 12, 2))), "init", "argument"),
  mal(nmf(x, 2, init = list(H = matrix(Inf, 2, 9))), "init", "argument"),
  mal(nmf(x, 2, init = list(Q = 1)), "init", "argument", '"Q"'),
  mal(plsa(x, 2, init = list(lambda = c(0.5, 0.5), factors = list(matrix(1, 3, 2), matrix(1, 9, 2)))), "init",
      "argument", "3 x 2"),
  # a factor with a value that is NA, NaN, infinite or negative, or a zero column
  mal(plsa(x, 2, init = list(lambda = c(0.5, 0.5), factors = list(`[<-`(matrix(1, 12, 2), 5, 1, NA), matrix(1, 9, 2)))),
      "init", "argument"),
  mal(plsa(x, 2, init = list(lambda = c(0.5, 0.5), factors = list(matrix(1, 12, 2), `[<-`(matrix(1, 9, 2), 2, 2, NaN)))),
      "init", "argument"),
  mal(plsa(x, 2, init = list(lambda = c(0.5, 0.5), factors = list(`[<-`(matrix(1, 12, 2), 1, 2, Inf), matrix(1, 9, 2)))),
      "init", "argument"),
  mal(plsa(x, 2, init = list(lambda = c(0.5, 0.5), factors = list(matrix(1, 12, 2), `[<-`(matrix(1, 9, 2), 9, 1, -1e-300)))),
      "init", "argument"),
  mal(plsa(x, 2, init = list(lambda = c(0.5, 0.5), factors = list(cbind(1, numeric(12)), matrix(1, 9, 2)))),
      "init", "argument"),
  mal(lca(lc, 2, init = lca(cbind(lc, d = lc$a), 2, seed = 1)), "init", "argument", "`data`"),
  mal(nmf(x, 2, L1 = -1), "L1", "argument", "-1"),
  mal(nmf(x, 2, L1 = c(1, 2, 3)), "L1", "argument", "c(1, 2, 3)"),
  mal(nmf(x, 2, L1 = c(-1, 0)), "L1", "argument", "c(-1, 0)"),
  mal(nmf(x, 2, L2 = Inf), "L2", "argument", "Inf"),
  mal(nmf(x, 2, L1 = NA), "L1", "argument", "NA"),
  mal(nmf(x, 2, loss = "beta", beta = 0.5, L2 = 1), "L2", "argument"),
  mal(nmf(x, 2, method = "mu", eps = Inf), "eps", "argument", "Inf"),
  mal(nmf(x, 2, eps = -1), "eps", "argument", "-1"),
  mal(nmf(x, 2, accelerate = "yes"), "accelerate", "argument", '"yes"'),
  mal(nmf(x, 2, nrun = 2.5), "nrun", "argument", "2.5"),
  mal(nmf(x, 2, seed = 2^40), "seed", "argument", "1099511627776"),
  mal(nmf(x, 2, threads = "two"), "threads", "argument", '"two"'),
  mal(nmf(x, 2, tol = -1e-3), "tol", "argument", "-0.001"),
  mal(nmf(x, 2, verbose = NA), "verbose", "argument", "NA"),
  mal(nmf(x, 2, itmax = 5), "itmax", "argument", "5"),
  mal(nmf(neg, 2), "x", "value"),
  mal(nmf(x, 2, loss = "beta", beta = 0, eps = 0), "eps", "argument"),
  # ntf
  mal(ntf(), "x", "argument"),
  mal(ntf(arr), "k", "argument"),
  mal(ntf(arr, 0), "k", "argument", "0"),
  mal(ntf(arr, Inf), "k", "argument", "Inf"),
  mal(ntf(arr, 2, loss = "beta"), "loss", "argument", '"beta"'),
  mal(ntf(arr, 2, loss = "kl", method = "hals"), "method", "argument", '"hals"'),
  mal(ntf(arr, 2, method = "cd"), "method", "argument", '"cd"'),
  mal(ntf(arr, 2, method = 1), "method", "argument", "1"),
  mal(ntf(arr, 2, method = "anls"), "method", "argument", '"anls"'),
  mal(ntf(arr, 2, loss = "kl", method = "hals"), "method", "argument"),
  mal(ntf(arr, 2, tol = Inf), "tol", "argument", "Inf"),
  mal(ntf(arr, 2, seed = -2^40), "seed", "argument"),
  mal(ntf(arr, 2, max_iter = 0), "max_iter", "argument", "0"),
  mal(ntf(arr, 2, foo = 1), "foo", "argument"),
  mal(ntf(arr_neg, 2), "x", "value"),
  # lca
  mal(lca(), "data", "argument"),
  mal(lca(lc), "k", "argument"),
  mal(lca(lc, 0), "k", "argument", "0"),
  mal(lca(lc, 100), "k", "argument", "100"),
  mal(lca(lc, 2, se = NA), "se", "argument", "NA"),
  mal(lca(lc, 2, psu = c(1:9, NA)), "psu", "argument", "1 missing"),
  mal(lca(lc, 2, method = "mu"), "method", "argument", "\"mu\""),
  mal(lca(lc, 2, se = "yes"), "se", "argument", "\"yes\""),
  mal(lca(as.matrix(lc), 2), "data", "type"),
  mal(lca(lc[, 1, drop = FALSE], 2), "data", "type"),
  mal(lca(data.frame(a = c(0.5, 1.5, 2), b = 1:3), 2), "data", "type", "0.5"),
  mal(lca(data.frame(a = c(1, 1, 1), b = c(1, 2, 1)), 2), "data", "value"),
  mal(lca(lc, 2, na.rm = NA), "na.rm", "argument", "NA"),
  mal(lca(lc, 2, short_iter = -1), "short_iter", "argument", "-1"),
  mal(lca(lc, 2, short_keep = 0), "short_keep", "argument", "0"),
  mal(lca(lc, 1, short_iter = Inf), "short_iter", "argument", "Inf"),
  mal(lca(lc, 2, nrun = NA), "nrun", "argument", "NA"),
  mal(lca(lc, 2, seed = 2^31), "seed", "argument", "2147483648"),
  mal(lca(lc, 2, nclass = 2), "nclass", "argument"),
  # lca_supervised
  mal(lca_supervised(), "data", "argument"),
  mal(lca_supervised(lc), "class", "argument"),
  mal(lca_supervised(lc, cls + 0.5), "class", "argument"),
  mal(lca_supervised(lc, rnorm(10)), "class", "argument"),
  mal(lca_supervised(lc, cls[-1]), "class", "argument", "9"),
  mal(lca_supervised(lc, c(NA, cls[-1])), "class", "value"),
  mal(lca_supervised(lc, as.list(cls)), "class", "argument", "list"),
  mal(lca_supervised(as.matrix(lc), cls), "data", "type"),
  mal(lca_supervised(lc, cls, na.rm = "no"), "na.rm", "argument", '"no"'),
  # predict / summary / print / plot for lca
  mal(predict(fl, lc, foo = 1), "foo", "argument"),
  mal(predict(fl, as.matrix(lc)), "newdata", "newdata"),
  mal(predict(fl, lc[, 1:2]), "newdata", "newdata"),
  mal(predict(fl, data.frame(a = 3, b = 1, c = 1)), "newdata", "newdata"),
  mal(predict(fl, type = "prob"), "type", "argument", '"prob"'),
  mal(summary(fl, foo = 1), "foo", "argument"),
  mal(print(fl, digits = -1), "digits", "argument", "-1"),
  mal(print(fl, foo = 1), "foo", "argument"),
  # sntf
  mal(sntf(), "x", "argument"),
  mal(sntf(sym), "k", "argument"),
  mal(sntf(sym, 0), "k", "argument", "0"),
  mal(sntf(sym, 100), "k", "argument", "100"),
  mal(sntf(sym, 2, method = "gamma"), "method", "argument", '"gamma"'),
  mal(sntf(sym, 2, method = "beta", cichocki_beta = 1e300, seed = 1), "cichocki_beta", "value", "1e+300"),
  mal(sntf(sym, 2, alpha = Inf), "alpha", "argument", "Inf"),
  mal(sntf(sym, 2, alpha = -1), "alpha", "argument", "-1"),
  mal(sntf(sym, 2, cichocki_beta = Inf), "cichocki_beta", "argument", "Inf"),
  mal(sntf(sym, 2, cichocki_beta = 1, beta = 1), "beta", "argument"),
  mal(sntf(sym, 2, omega = 2), "omega", "argument", "2"),
  mal(sntf(sym, 2, sparsity = 1), "sparsity", "argument", "1"),
  mal(sntf(sym, 2, method = "beta", L1 = Inf), "L1", "argument", "Inf"),
  mal(sntf(sym, 2, L1 = 1), "L1", "argument"),
  mal(sntf(sym, 2, orthogonal = 1), "orthogonal", "argument", "1"),
  mal(sntf(sym, 2, init = "svd"), "init", "argument", '"svd"'),
  mal(sntf(sym, 2, init = matrix(-1, 6, 2)), "init", "argument"),
  mal(sntf(sym, 2, init = matrix(1, 2, 2)), "init", "argument", "2 x 2"),
  mal(sntf(sym, 2, seed = 2^40), "seed", "argument"),
  mal(sntf(sym, 2, nrun = Inf), "nrun", "argument", "Inf"),
  mal(sntf(sym, 2, alpah = 1), "alpah", "argument"),
  mal(sntf("a", 2), "x", "type", '"a"'),
  mal(sntf(array(1, c(2, 3, 2)), 2), "x", "type"),
  mal(predict(fs, newdata = sym), "newdata", "argument"),
  mal(predict(fs, foo = 1), "foo", "argument"),
  mal(summary(fs, foo = 1), "foo", "argument"),
  mal(plot(fs, type = "x"), "type", "argument", '"x"'),
  mal(fitted(fs, foo = 1), "foo", "argument"),
  # symnmf
  mal(symnmf(), "a", "argument"),
  mal(symnmf(A), "k", "argument"),
  mal(symnmf(A, 0), "k", "argument", "0"),
  mal(symnmf(A, 2, method = "mu"), "method", "argument", '"mu"'),
  mal(symnmf(A, 2, coupling = Inf), "coupling", "argument", "Inf"),
  mal(symnmf(A, 2, coupling = -1), "coupling", "argument", "-1"),
  mal(symnmf(A, 2, coupling = 1, lambda = 1), "lambda", "argument"),
  mal(symnmf(A, 2, L1 = Inf), "L1", "argument", "Inf"),
  mal(symnmf(A, 2, omega = 0), "omega", "argument", "0"),
  mal(symnmf(A[, -1], 2), "a", "value", "6 x 5"),
  mal(symnmf(A_asym, 2), "a", "value"),
  mal(symnmf(A, 2, init = matrix(1, 3, 3)), "init", "argument", "3 x 3"),
  mal(symnmf(A, 2, seed = 2^40), "seed", "argument"),
  mal(symnmf(A, 2, nrun = -1), "nrun", "argument", "-1"),
  mal(symnmf(A, 2, lamda = 1), "lamda", "argument"),
  mal(predict(fsym, type = "prob"), "type", "argument"),
  mal(print(fsym, foo = 1), "foo", "argument"),
  # hypergraph_affinity
  mal(hypergraph_affinity(), "x", "argument"),
  mal(hypergraph_affinity(pts, n_tuples = 10, seed = 2^40), "seed", "argument", "1099511627776"),
  mal(hypergraph_affinity(pts, seed = "a"), "seed", "argument", '"a"'),
  mal(hypergraph_affinity(pts, order = 1), "order", "argument", "1"),
  mal(hypergraph_affinity(pts, order = Inf), "order", "argument", "Inf"),
  mal(hypergraph_affinity(pts, model = "circle"), "model", "argument", '"circle"'),
  mal(hypergraph_affinity(pts, sigma = Inf), "sigma", "argument", "Inf"),
  mal(hypergraph_affinity(pts, sigma = 0), "sigma", "argument", "0"),
  mal(hypergraph_affinity(pts, n_tuples = -1), "n_tuples", "argument", "-1"),
  mal(hypergraph_affinity(pts, cutoff = 1), "cutoff", "argument", "1"),
  mal(hypergraph_affinity(pts, fun = "abs"), "fun", "type", '"abs"'),
  mal(hypergraph_affinity(pts, model = "subspace", dim = 10), "dim", "argument", "10"),
  mal(hypergraph_affinity(pts, order = 3, model = "plane"), "order", "argument"),
  mal(hypergraph_affinity(pts_na), "x", "value"),
  mal(hypergraph_affinity(letters), "x", "type"),
  mal(hypergraph_affinity(pts, threads = 0), "threads", "argument", "0"),
  # multiway_cluster
  mal(multiway_cluster(), "x", "argument"),
  mal(multiway_cluster(pts), "k", "argument"),
  mal(multiway_cluster(pts, 0), "k", "argument", "0"),
  mal(multiway_cluster(matrix(numeric(0), 30, 0), 2, seed = 1), "x", "empty", "30 points of none"),
  mal(hypergraph_affinity(matrix(numeric(0), 30, 0)), "x", "empty", "30 points of none"),
  mal(multiway_cluster(pts, 2, seed = 2^40), "seed", "argument"),
  mal(multiway_cluster(pts, 2, nrun = 0), "nrun", "argument", "0"),
  mal(multiway_cluster(pts, 2, tol = Inf), "tol", "argument", "Inf"),
  mal(multiway_cluster(pts, 2, max_iter = 5, method = "x"), "method", "argument", '"x"'),
  mal(multiway_cluster(pts, 2, max_iter = 5, foo = 1), "foo", "argument"),
  mal(predict(fmw, foo = 1), "foo", "argument"),
  mal(predict(fmw, newdata = pts), "newdata", "argument"),
  mal(print(fmw, foo = 1), "foo", "argument"),
  mal(plot(fmw, data = pts[-1, ]), "data", "argument", "11 x 2"),
  mal(hypergraph_affinity(pts, model = "line", dim = 1), "dim", "argument", "1"),
  # ntf_rank
  mal(ntf_rank(), "x", "argument"),
  mal(ntf_rank(arr, k = numeric(0)), "k", "argument"),
  mal(ntf_rank(arr, k = c(2, 2)), "k", "argument"),
  mal(ntf_rank(-arr, k = 2), "x", "value"),
  mal(ntf_rank(arr, k = 2, holdout = 0.9), "holdout", "argument", "0.9"),
  mal(ntf_rank(arr, k = 2, nrun = 0), "nrun", "argument", "0"),
  mal(ntf_rank(arr, k = 2, loss = "l1"), "loss", "argument", '"l1"'),
  mal(ntf_rank(shards(list(arr)), k = 2), "x", "type"),
  # nmf_rank
  mal(nmf_rank(), "x", "argument"),
  mal(nmf_rank(shards(list(x[1:6, ], x[7:12, ])), k = 2), "x", "type", "shards"),
  mal(nmf_rank(x, k = numeric(0)), "k", "argument", "empty"),
  mal(nmf_rank(x, k = c(2, NA)), "k", "argument"),
  mal(nmf_rank(x, k = c(2, 100)), "k", "argument", "100"),
  mal(nmf_rank(x, k = 2:3, method = "bic"), "method", "argument", '"bic"'),
  mal(nmf_rank(x, k = 2:3, holdout = 0.9), "holdout", "argument", "0.9"),
  mal(nmf_rank(x, k = 2:3, nrun = 0), "nrun", "argument", "0"),
  mal(nmf_rank(x, k = 2:3, seed = 2^40), "seed", "argument"),
  mal(nmf_rank(x, k = 2:3, loss = "l1"), "loss", "argument", '"l1"'),
  mal(nmf_rank(x, k = 2:3, method_nmf = "alx"), "method_nmf", "argument", '"alx"'),
  mal(nmf_rank(x, k = 2:3, tol = Inf), "tol", "argument", "Inf"),
  mal(nmf_rank(x, k = 1:2, method = "consensus"), "k", "argument", "1"),
  mal(nmf_rank(x, k = 2:3, runs = 2), "runs", "argument"),
  # as_plsa
  mal(as_plsa(), "fit", "argument"),
  mal(as_plsa(fn), "fit", "argument", "frobenius"),
  mal(as_plsa(x), "fit", "argument", "12 x 9"),
  # sptensor
  mal(sptensor(), "index", "argument"),
  mal(sptensor(idx), "values", "argument"),
  mal(sptensor(letters, 1), "index", "type"),
  mal(sptensor(matrix(1:3, ncol = 1), 1:3), "index", "type", "1"),
  mal(sptensor(idx, 1), "values", "type", "1"),
  mal(sptensor(idx, c(1, NA, 2)), "values", "value"),
  mal(sptensor(idx, c(1, -1, 2)), "values", "value", "-1"),
  mal(sptensor(idx, c(1, Inf, 2)), "values", "value"),
  mal(sptensor(idx - 1, 1:3), "index", "value", "0"),
  mal(sptensor(idx + 0.5, 1:3), "index", "value", "1.5"),
  mal(sptensor(idx, 1:3, dims = c(1, 1)), "dims", "type"),
  mal(sptensor(idx, 1:3, dims = c(1, 1, 1)), "dims", "value"),
  mal(sptensor(idx, 1:3, dims = c(Inf, 5, 5)), "dims", "value", "Inf"),
  mal(sptensor(idx, 1:3, dims = c(-1, 5, 5)), "dims", "value", "-1"),
  mal(sptensor(idx, 1:3, dimnames = list("a")), "dimnames", "type"),
  mal(sptensor(idx, c("a", "b", "c")), "values", "type"),
  # shards, and fits of shards
  mal(shards(), "x", "argument"),
  mal(shards(42), "x", "type", "42"),
  mal(shards(list()), "x", "empty"),
  mal(shards(c("a.rds", NA)), "x", "value"),
  mal(shards(file.path(tns_dir, "missing.rds")), "x", "value", "missing.rds"),
  mal(shards(file.path(tns_dir, "a.csv")), "x", "value", "a.csv"),
  mal(shards(list(x, x[, 1:3])), "x", "value", "12 x 3"),
  mal(shards(list(x, array(1, c(2, 9, 2)))), "x", "value"),
  mal(plsa(sh, 2, normalize = FALSE), "normalize", "argument"),
  mal(plsa(sh, 2, loss = "l2", normalize = NA), "normalize", "argument", "NA"),
  mal(plsa(sh, 2, method = "blocks"), "method", "argument", "blocks"),
  mal(plsa(sh, 2, prior = "a"), "prior", "type", "a"),
  mal(ntf(sh, 2, loss = "kl", method = "blocks"), "method", "argument", "blocks"),
  mal(plsa(sh, 0), "k", "argument", "0"),
  mal(plsa(x, 2, cluster = 1), "cluster", "type", "1"),
  mal(plsa(x, 2, cluster = sh_cl), "cluster", "argument"),
  mal(write_shards(x), "dir", "argument"),
  mal(write_shards(x, 1), "dir", "type", "1"),
  mal(write_shards(x, NA_character_), "dir", "type"),
  mal(write_shards(x, tns_dir, n = 0), "n", "argument", "0"),
  mal(write_shards(x, tns_dir, n = 13), "n", "argument", "13"),
  mal(write_shards(list(x), tns_dir, n = 2), "n", "argument"),
  mal(write_shards(list(), tns_dir), "x", "empty"),
  mal(write_shards(x, tns_dir, prefix = 1), "prefix", "type", "1"),
  mal(write_shards(neg, tns_dir), "x", "value"),
  mal(shard_cluster(0), "workers", "value", "0"),
  mal(shard_cluster(1.5), "workers", "value", "1.5"),
  mal(shard_cluster(c(2, 3)), "workers", "value"),
  mal(shard_cluster(NA), "workers", "value"),
  mal(shard_cluster(""), "workers", "value"),
  mal(gather_factors(), "x", "argument"),
  mal(gather_factors(1), "x", "type", "1"),
  mal(plsa(x, 2, factor_dir = tns_dir), "factor_dir", "argument"),
  mal(plsa(shards(list(x)), 2, factor_dir = 1), "factor_dir", "type", "1"),
  mal(nmf(shards(list(x)), 2, factor_dir = NA), "factor_dir", "type"),
  # as_sptensor
  mal(as_sptensor("a"), "x", "type", '"a"'),
  mal(as_sptensor(list(1)), "x", "type"),
  mal(as_sptensor(arr_neg), "x", "value"),
  mal(as_sptensor(arr, foo = 1), "foo", "argument"),
  mal(as_sptensor(tens, 1), "as_sptensor.aspectr_tensor()", "argument", "unnamed"),
  mal(as_sptensor(data.frame(a = 1:3)), "x", "type", "1"),
  mal(as_sptensor(data.frame(a = c(0.5, 1), b = 1:2)), "x", "type", "0.5"),
  mal(as_sptensor(sym, foo = 1), "foo", "argument"),
  # read_tns / write_tns
  mal(read_tns(), "file", "argument"),
  mal(read_tns(1), "file", "type", "1"),
  mal(read_tns(file.path(tns_dir, "missing.tns")), "file", "type", "missing.tns"),
  mal(read_tns(tns_dir), "file", "type", "directory"),
  mal(read_tns(c("a", "b")), "file", "type", "length 2"),
  mal(read_tns(NA_character_), "file", "type"),
  mal(read_tns(tns_text), "file", "value", "Line 2"),
  mal(read_tns(tns_ragged), "file", "value", "Line 2"),
  mal(read_tns(tns_neg), "file", "value", "Line 2"),
  mal(read_tns(tns_zero), "file", "value", "Line 1"),
  mal(read_tns(tns_empty), "file", "empty"),
  mal(read_tns(tns_good, dims = c(1, 1, 1)), "dims", "value"),
  mal(write_tns(), "x", "argument"),
  mal(write_tns(tens), "file", "argument"),
  mal(write_tns(tens, 1), "file", "type", "1"),
  mal(write_tns(tens, file.path(tns_dir, "no", "such", "x.tns")), "file", "type"),
  mal(write_tns("a", file.path(tns_dir, "a.tns")), "x", "type"),
  # symtensor / as_symtensor
  mal(symtensor(), "index", "argument"),
  mal(symtensor(sidx), "values", "argument"),
  mal(symtensor(matrix(1:3, ncol = 1), 1:3), "index", "type"),
  mal(symtensor(sidx, c(1, -1)), "values", "value", "-1"),
  mal(symtensor(sidx - 1, c(1, 1)), "index", "value", "0"),
  mal(symtensor(sidx, c(1, 1), n = 2), "index", "value", "4"),
  mal(symtensor(sidx, c(1, 1), n = 4.5), "n", "argument", "4.5"),
  mal(symtensor(sidx, c(1, 1), names = "a"), "names", "type", "1"),
  mal(symtensor(rbind(c(1, 2, 3), c(3, 2, 1)), c(1, 2)), "index", "value"),
  mal(as_symtensor("a"), "x", "type", '"a"'),
  mal(as_symtensor(array(1:8, c(2, 2, 2))), "x", "value"),
  mal(as_symtensor(array(1, c(2, 3))), "x", "type", "2 x 3"),
  mal(as_symtensor(array(-1, c(2, 2, 2))), "x", "value"),
  mal(as_symtensor(Y, tol = -1), "tol", "argument", "-1"),
  mal(as_symtensor(Y, tol = Inf), "tol", "argument", "Inf"),
  mal(as_symtensor(Y, foo = 1), "foo", "argument"),
  mal(as_symtensor(sym, foo = 1), "foo", "argument"),
  mal(as_symtensor(tens), "x", "value"),
  mal(print(sym, foo = 1), "foo", "argument"),
  mal(print(tens, n = -1), "n", "argument", "-1"),
  # nnz
  mal(nnz(), "x", "argument"),
  mal(nnz("a"), "x", "type", '"a"'),
  mal(nnz(list(1)), "x", "type"),
  mal(nnz(data.frame(a = 1)), "x", "type"),
  mal(nnz(NULL), "x", "type", "NULL"),
  mal(nnz(matrix(c(1, NA), 1)), "x", "value"),
  mal(nnz(Matrix::Matrix(c(1, NA, 0, 2), 2, sparse = TRUE)), "x", "value"),
  # adjusted_rand_index
  mal(adjusted_rand_index(c(1, NA, 2), c(1, 1, 2)), "x", "value", "NA"),
  mal(adjusted_rand_index(c(1, 1, 2), c(1, NA, 2)), "y", "value", "NA"),
  mal(adjusted_rand_index(1:3, 1:4), "y", "value", "3 and 4"),
  mal(adjusted_rand_index(c(0.5, 1.5), c(1, 2)), "x", "argument"),
  mal(adjusted_rand_index(1:2), "y", "argument"),
  mal(adjusted_rand_index(1, 1), "x", "value", "1"),
  mal(adjusted_rand_index(list(1, 2), 1:2), "x", "argument", "list"),
  mal(adjusted_rand_index(1:3, 1:3, na.rm = "yes"), "na.rm", "argument", '"yes"'),
  mal(adjusted_rand_index(c(1, NA, 2), c(1, 2, NA), na.rm = TRUE), "x", "value", "1"),
  # default_threads
  mal(local({ op <- options(aspectr.threads = 0); on.exit(options(op)); default_threads() }),
      "options(aspectr.threads)", "argument", "0"),
  mal(local({ op <- options(aspectr.threads = "a"); on.exit(options(op)); default_threads() }),
      "options(aspectr.threads)", "argument", '"a"'),
  mal(local({ op <- options(aspectr.threads = 2.5); on.exit(options(op)); default_threads() }),
      "options(aspectr.threads)", "argument", "2.5"),
  # topics / basis / terms
  mal(topics(1), "object", "type", "1"),
  mal(topics(fp, mode = 3), "mode", "argument", "3"),
  mal(topics(fp, mode = 0), "mode", "argument", "0"),
  mal(topics(fp, foo = 1), "foo", "argument"),
  mal(basis(1), "object", "type", "1"),
  mal(basis(fn, foo = 1), "foo", "argument"),
  mal(terms(fp, 0), "n", "argument", "0"),
  mal(terms(fp, n = Inf), "n", "argument", "Inf"),
  mal(terms(fp, mode = 5), "mode", "argument", "5"),
  mal(terms(fp, foo = 1), "foo", "argument"),
  # predict for plsa and nmf fits
  mal(predict(fp, x, foo = 1), "foo", "argument", "1"),
  mal(predict(fp, x, maxiter = 5), "maxiter", "argument"),
  mal(predict(fp, x, type = "prob"), "type", "argument", '"prob"'),
  mal(predict(fp, unname(x)[, -1]), "newdata", "newdata", "8"),
  mal(predict(fp, `colnames<-`(x, paste0("zz", 1:9))), "newdata", "newdata"),
  mal(predict(fp, x, max_iter = 0), "max_iter", "argument", "0"),
  mal(predict(fp, x, tol = Inf), "tol", "argument", "Inf"),
  mal(predict(fp, x, threads = -1), "threads", "argument", "-1"),
  mal(predict(fp, neg), "newdata", "value"),
  mal(predict(fp, "a"), "newdata", "type"),
  mal(predict(fp3, matrix(1, 1, 2)), "newdata", "newdata", "1 x 2"),
  mal(predict(fp3, matrix(c(5, 1, 1), 1)), "newdata", "newdata"),
  mal(predict(fn, x, foo = 1), "foo", "argument"),
  mal(predict(fn, x[-1, ], margin = "columns"), "newdata", "newdata", "1"),
  mal(predict(fn, unname(x)[-1, ], margin = "columns"), "newdata", "newdata", "11"),
  mal(predict(fn, x[, -1]), "newdata", "newdata", "1"),
  mal(predict(fn, unname(x)[, -1]), "newdata", "newdata", "8"),
  mal(predict(fn, x, margin = "diag"), "margin", "argument", '"diag"'),
  mal(predict(fn, x, type = "W"), "type", "argument", '"W"'),
  mal(predict(fn, x, max_iter = -1), "max_iter", "argument", "-1"),
  mal(predict(fn, as.data.frame(x)), "newdata", "type"),
  mal(augment(fp), "data", "argument"),
  mal(as_aspect_data(), "x", "argument"),
  mal(as_aspect_data(letters), "x", "type"),
  mal(terms(fn, 0), "n", "argument", "0"),
  mal(terms(fn, margin = "x"), "margin", "argument", '"x"'),
  mal(augment(fp, data = x[-1, ]), "data", "newdata"),
  mal(augment(fp, data = x, foo = 1), "foo", "argument"),
  mal(augment(fn, data = "a"), "data", "type"),
  mal(augment(fp, data = data.frame(doc = 1, word = "a")), "data", "argument"),
  mal(topic_quality(), "fit", "argument"),
  mal(topic_quality(fp), "data", "argument"),
  mal(topic_quality(fp, x, n = 1), "n", "argument", "1"),
  mal(topic_quality(fp, x, epsilon = -1), "epsilon", "argument", "-1"),
  mal(topic_quality(fp, x, frex_weight = 1.5), "frex_weight", "argument", "1.5"),
  mal(topic_quality(fp, x, reference = x), "reference", "argument"),
  mal(topic_quality(fp, reference = unname(x[, 1:3])), "reference", "newdata"),
  mal(topic_quality(lc, x), "fit", "type"),
  mal(topic_quality(fp, x, foo = 1), "foo", "argument"),
  mal(terms(fp, lambda = 2), "lambda", "argument", "2"),
  mal(terms(fn, lambda = NA), "lambda", "argument", "NA"),
  mal(tidy(fp, lambda = -0.5), "lambda", "argument", "-0.5"),
  mal(tidy(fn, n = 0), "n", "argument", "0"),
  mal(tidy(fp, "gamma", n = 3), "n", "argument"),
  mal(glance(fp, data = x[-1, ]), "data", "newdata"),
  mal(glance(fp, n = 1), "n", "argument", "1"),
  mal(as_ldavis_json(), "fit", "argument"),
  mal(as_ldavis_json(fp, R = 0), "R", "argument", "0"),
  mal(as_ldavis_json(fp, lambda_step = 2), "lambda_step", "argument", "2"),
  mal(as_ldavis_json(fp, file = NA), "file", "argument"),
  mal(plsa_rank(x, k = 2, n_top = 1), "n_top", "argument", "1"),
  mal(nmf_rank(x, k = 2:3, n_top = 0), "n_top", "argument", "0"),
  # summary / tidy / glance / plot / print / fitted / residuals / logLik / coef
  mal(summary(fp, foo = 1), "foo", "argument"),
  mal(summary(fp, n = -1), "n", "argument", "-1"),
  mal(summary(fn, n = 0), "n", "argument", "0"),
  mal(summary(fn, foo = 1), "foo", "argument"),
  mal(summary(ft, foo = 1), "foo", "argument"),
  mal(tidy(fp, matrix = "theta"), "matrix", "argument", '"theta"'),
  mal(tidy(fp, foo = 1), "foo", "argument"),
  mal(tidy(fn, matrix = "theta"), "matrix", "argument", '"theta"'),
  mal(tidy(fn, foo = 1), "foo", "argument"),
  mal(glance(fp, foo = 1), "foo", "argument"),
  mal(glance(fn, foo = 1), "foo", "argument"),
  mal(plot(fp, type = "bars"), "type", "argument", '"bars"'),
  mal(plot(fp, n = 0), "n", "argument", "0"),
  mal(plot(fp, topics = 5), "topics", "argument", "5"),
  mal(plot(fp, topics = 0.5), "topics", "argument", "0.5"),
  mal(plot(fn, type = "V"), "type", "argument", '"V"'),
  mal(plot(ft, type = "x"), "type", "argument", '"x"'),
  mal(print(fp, foo = 1), "foo", "argument"),
  mal(print(fp, n = 0), "n", "argument", "0"),
  mal(print(fn, foo = 1), "foo", "argument"),
  mal(print(ft, foo = 1), "foo", "argument"),
  mal(print(fs, foo = 1), "foo", "argument"),
  mal(fitted(fp, type = "x"), "type", "argument", '"x"'),
  mal(fitted(fp, foo = 1), "foo", "argument"),
  mal(fitted(fn, foo = 1), "foo", "argument"),
  mal(fitted(ft, foo = 1), "foo", "argument"),
  mal(residuals(fn), "x", "argument"),
  mal(residuals(fn, x[-1, ]), "x", "newdata", "11 x 9"),
  mal(residuals(fn, x, foo = 1), "foo", "argument"),
  mal(logLik(fp, foo = 1), "foo", "argument"),
  mal(coef(fn, foo = 1), "foo", "argument"),
  mal(as_dtm(), "data", "argument"),
  mal(as_dtm(x, a, b), "data", "type", "matrix"),
  mal(as_dtm(lc), "document", "argument"),
  mal(as_dtm(lc, a), "term", "argument"),
  mal(as_dtm(lc, zz, b), "document", "argument"),
  mal(as_dtm(lc, a, b, zz), "value", "argument"),
  mal(as_dtm(lc, a, b, a + b), "value", "argument"),
  mal(as_dtm(data.frame(a = "d", b = "w", n = -1), a, b, n), "value", "value", "-1"),
  mal(as_dtm(data.frame(a = "d", b = "w", n = "1"), a, b, n), "value", "type"),
  mal(as_sptensor(data.frame(a = 1:2, b = 1:2, n = 3:4)), "value", "argument"),
  mal(as_sptensor(lc, value = zz), "value", "argument"),
  mal(perplexity(fp, unname(x[, 1:3])), "newdata", "newdata", "3"),
  mal(perplexity(fp, x, max_iter = 0), "max_iter", "argument", "0"),
  mal(perplexity(fp, x, foo = 1), "foo", "argument"),
  mal(perplexity(1, x), "object", "type", "1"),
  mal(perplexity(fp, x, foldin = x[1:2, ]), "foldin", "newdata"),
  mal(plsa_rank(), "x", "argument"),
  mal(plsa_rank(x, k = 0), "k", "argument", "0"),
  mal(plsa_rank(x, k = 2, holdout = 0.9), "holdout", "argument", "0.9"),
  mal(plsa_rank(x, k = 2, criterion = "x"), "criterion", "argument"),
  mal(lca_rank(), "data", "argument"),
  mal(lca_rank(lc, k = 1:2, nrun = 0), "nrun", "argument", "0"),
  mal(lca_rank(lc, k = NA), "k", "argument"),
  mal(lca_reorder(), "fit", "argument"),
  mal(lca_reorder(fp), "fit", "type"),
  mal(lca_reorder(lca(lc, 2, seed = 1), 1:3), "order", "argument"),
  mal(lca_reorder(lca(lc, 2, seed = 1), c(1, NA)), "order", "argument", "c(1, NA)"),
  mal(lca(cbind(a, b) ~ zz, lc, 2), "formula", "argument"),
  mal(lca(cbind(a, b) ~ 1, lc), "k", "argument"),
  # found by fuzzing the newer surfaces: each names its argument
  mal(predict(fp, dup_cols), "newdata", "newdata", "w1"),
  mal(perplexity(fp, dup_cols), "newdata", "newdata", "w1"),
  mal(predict(fn, dup_cols), "newdata", "newdata", "w1"),
  mal(predict(fn, dup_rows, margin = "columns"), "newdata", "newdata"),
  mal(predict(fl, cbind(lc, lc["a"])), "newdata", "newdata"),
  mal(lca(cbind(a, b) ~ z, lc_cov_inf, 2), "formula", "value", "infinite"),
  mal(lca(cbind(a, b) ~ z, lc_cov_cplx, 2), "formula", "type", "complex"),
  mal(lca(cbind(a, b) ~ s, lc_cov_const, 2), "formula", "value", "\"u\""),
  mal(lca(cbind(a, b) ~ a, lc, 2), "formula", "argument"),
  mal(lca(cbind(a, b) ~ z, lc_cov_na, 2), "data", "empty"),
  mal(lca(lc_inf, 2), "data", "value", "infinite"),
  mal(lca(cbind(a, b) ~ 1, data = lc), "k", "argument"),
  mal(as_sptensor(data.frame(a = c(1, Inf), b = 1:2)), "x", "value", "infinite"),
  mal(as_dtm(long_na_level, a, b, n), "document", "value", "NA"),
  mal(as_dtm(long_list, a, b, n), "document", "type", "AsIs"),
  mal(plsa_rank(x, k = c(2, 2)), "k", "argument", "distinct"),
  mal(nmf_rank(x, k = c(2, 2)), "k", "argument", "distinct"),
  mal(lca_rank(lc, k = c(2, 2)), "k", "argument", "distinct"),
  mal(shards(c(tns_good, tns_good)), "x", "value", "each file once"),
  mal(write_shards(x, tns_good), "dir", "value", "existing file"),
  mal(write_shards(x, file.path(tns_good, "sub")), "dir", "value"),
  mal(write_shards(x, tns_dir, prefix = "../up"), "prefix", "value", "../up"),
  mal(write_shards(sh, tns_dir, n = 1000), "n", "argument", "1000"),
  mal(write_shards(list(x * 0, x * 0), tns_dir), "x", "empty"),
  mal(plsa(sh_files, 2, factor_dir = tns_good), "factor_dir", "value"),
  mal(lca_blrt(), "data", "argument"),
  mal(lca_blrt(lc), "k", "argument"),
  mal(lca_blrt(x, 2), "data", "type", "matrix"),
  mal(lca_blrt(lc, 1), "k", "argument", "1"),
  mal(lca_blrt(lc, 2, B = 0), "B", "argument", "0"),
  mal(lca_distal(), "fit", "argument"),
  mal(lca_distal(fl), "outcome", "argument"),
  mal(lca_distal(fn, 1:10), "fit", "type"),
  mal(lca_distal(fl, 1:9), "outcome", "length", "9"),
  mal(lca_distal(fl, as.list(1:10)), "outcome", "type"),
  mal(lca_distal(fl, 1:10, method = "bhc"), "method", "argument", "\"bhc\""),
  mal(lca_distal(fl, 1:10, assignment = "soft"), "assignment", "argument", "\"soft\""),
  mal(lca_distal(fl, 1:10, type = "count"), "type", "argument", "\"count\""),
  mal(lca_distal(fl, c(1:9, Inf)), "outcome", "value", "infinite"),
  mal(lca_covariates(fl, ~ z, data.frame(z = 1:9)), "data", "length", "9"),
  mal(lca_covariates(fl, z ~ 1, data.frame(z = 1:10)), "formula", "argument"),
  mal(lca_covariates(fl, ~ z, 1:10), "data", "type"),
  mal(lca_covariates(fl, ~ w, data.frame(z = 1:10)), "formula", "argument", "w"),
  mal(lca_invariance(), "data", "argument"),
  mal(lca_invariance(lc), "k", "argument"),
  mal(lca_invariance(lc, 2), "group", "argument"),
  mal(lca_invariance(lc, 2, "nope"), "group", "argument", "nope"),
  mal(lca(lc, 2, group = rep(1, 10)), "group", "value"),
  mal(lca(lc, 2, group = c(NA, rep(1:2, length.out = 9))), "group", "value"),
  mal(lca(lc, 2, group = rep(1:2, 5), invariance = "partial"), "invariance", "argument", "partial"),
  mal(explore(), "fit", "argument"),
  mal(explore(fn, open = FALSE), "fit", "argument"),
  mal(explore(fl, open = FALSE), "fit", "argument"),
  mal(explore(fp3, open = FALSE), "fit", "argument"),
  mal(explore(fp, n_terms = 0, open = FALSE), "n_terms", "argument", "0"),
  mal(explore(fp, lambda = -1, open = FALSE), "lambda", "argument", "-1"),
  mal(explore(fp, open = NA), "open", "argument"),
  mal(explore(fp, file = tns_dir, open = FALSE), "file", "value")
)

test_that("the list of malformed calls is long and covers every export", {
  expect_gte(length(cases), 150)
  called <- unique(unlist(lapply(cases, function(cs) all.names(cs$expr))))
  exports <- c("plsa", "shards", "write_shards", "nmf", "ntf", "lca", "lca_supervised", "sntf", "symnmf",
               "multiway_cluster", "hypergraph_affinity", "nmf_rank", "as_plsa", "sptensor",
               "as_sptensor", "read_tns", "write_tns", "symtensor", "as_symtensor", "nnz",
               "adjusted_rand_index", "default_threads", "topics", "basis", "predict",
               "summary", "terms", "tidy", "glance", "plot", "print", "fitted", "residuals",
               "gather_factors", "explore", "lca_blrt", "lca_distal", "lca_covariates", "lca_invariance",
               "ntf_rank", "shard_cluster")
  expect_setequal(setdiff(exports, called), character(0))
  expect_true(all(getNamespaceExports("aspectr") %in% c(called, "sotu_dtm")))
})

test_that("every malformed call is a classed input error naming its argument", {
  env <- environment()
  for (cs in cases) {
    label <- paste(deparse(cs$expr, width.cutoff = 500L), collapse = " ")
    err <- expect_error(eval(cs$expr, env), class = cs$class, label = label)
    if (is.null(err)) next
    expect_s3_class(err, "aspectr_error")
    msg <- gsub("\\s+", " ", conditionMessage(err))
    name <- paste0("`", cs$arg, "`")
    expect_true(grepl(name, msg, fixed = TRUE),
                label = paste0(label, ": message names ", name, " (", msg, ")"))
    if (!is.null(cs$value)) {
      expect_true(grepl(cs$value, msg, fixed = TRUE),
                  label = paste0(label, ": message shows ", cs$value, " (", msg, ")"))
    }
  }
})

test_that("a dgCMatrix becomes the same triplets as a dense matrix (stored zeros, empty rows, names)", {
  # as_aspect_data() reads a sparse matrix's slots in C++; a dense matrix
  # goes through the plain-R path: both must give the same data
  set.seed(8)
  for (case in seq_len(prop_n_cases(40))) {
    m <- sample(1:30, 1); n <- sample(1:25, 1)
    X <- Matrix::rsparsematrix(m, n, runif(1, 0.02, 0.6), rand.x = function(k) stats::rpois(k, 2) + 0.5)
    if (case %% 3 == 0) dimnames(X) <- list(paste0("r", seq_len(m)), paste0("c", seq_len(n)))
    if (case %% 4 == 0 && length(X@x)) X@x[seq_along(X@x) %% 3 == 0] <- 0  # stored zeros
    D <- as.matrix(X)
    a <- tryCatch(as_aspect_data(X), aspectr_error_input_empty = function(e) "empty")
    b <- tryCatch(as_aspect_data(D), aspectr_error_input_empty = function(e) "empty")
    expect_identical(a, b)
    if (is.list(a)) {
      # by column: the same cells, and without stored zeros the values are
      # the dgCMatrix's own slot
      bc <- as_aspect_data(X, by_column = TRUE)
      ord <- order(bc$idx[1, ], bc$idx[2, ])
      expect_identical(bc$idx[, ord, drop = FALSE], a$idx)
      expect_identical(bc$val[ord], a$val)
      expect_identical(bc[c("dims", "dimnames", "total")], a[c("dims", "dimnames", "total")])
      if (!any(X@x == 0)) expect_identical(bc$val, X@x)
    }
  }
  bad <- Matrix::rsparsematrix(6, 5, 0.5)
  bad@x <- abs(bad@x)
  na <- bad; na@x[1] <- NA
  inf <- bad; inf@x[2] <- Inf
  neg <- bad; neg@x[3] <- -1
  expect_error(as_aspect_data(na), class = "aspectr_error_input_value")
  expect_error(as_aspect_data(inf), class = "aspectr_error_input_value")
  expect_error(as_aspect_data(neg), "smallest -1", class = "aspectr_error_input_value")
})

test_that("a sparse matrix whose slots disagree is a classed input error", {
  X <- Matrix::sparseMatrix(i = c(1, 2, 3), j = c(1, 2, 2), x = c(1, 2, 3), dims = c(3, 2))
  bad <- X
  bad@x <- c(1, 2)  # one value short (bypassing validity)
  expect_error(as_aspect_data(bad), "malformed", class = "aspectr_error_input_value")
  expect_error(plsa(bad, 1), "malformed", class = "aspectr_error_input_value")
  bad <- X
  bad@p <- c(0L, 1L, 2L)  # the pointers end before the last cell
  expect_error(as_aspect_data(bad), "malformed", class = "aspectr_error_input_value")
})
