# Random property tests for every fitter (test-properties.R).
#
# prop_case(fitter, i) draws case i of a fitter: a random *valid* problem
# (data, storage, parameters) and the properties that apply to it. The case
# depends only on (fitter, i), through its seed prop_seed(fitter, i), so a
# failure is reproduced by
#   source("tests/testthat/helper-properties.R"); library(aspectr)
#   prop_check(prop_case("nmf", 17))
# and every failure message also prints the fitter call itself.
#
# The number of cases per fitter is `default` or the environment variable
# ASPECTR_PROPERTY_CASES; ASPECTR_PROPERTY_LOG names a CSV file that receives
# one line per failed (fitter, case, property) for long runs.

prop_fitters <- c("plsa", "nmf", "ntf", "lca", "sntf", "symnmf")

prop_n_cases <- function(default) {
  v <- Sys.getenv("ASPECTR_PROPERTY_CASES", "")
  n <- suppressWarnings(as.integer(v))
  if (nzchar(v) && !is.na(n) && n >= 0) n else default
}

prop_seed <- function(fitter, i) 100000L * match(fitter, prop_fitters) + as.integer(i)

# Evaluates `code` with R's RNG seeded, restoring the previous state.
prop_with_seed <- function(seed, code) {
  env <- globalenv()
  had <- exists(".Random.seed", envir = env, inherits = FALSE)
  old <- if (had) get(".Random.seed", envir = env, inherits = FALSE)
  on.exit({
    if (had) assign(".Random.seed", old, envir = env) else
      if (exists(".Random.seed", envir = env, inherits = FALSE)) rm(".Random.seed", envir = env)
  }, add = TRUE)
  set.seed(seed, kind = "Mersenne-Twister", normal.kind = "Inversion", sample.kind = "Rejection")
  code
}

pick <- function(x, ...) x[[sample.int(length(x), 1, ...)]]

# --- data -----------------------------------------------------------------

# Positive values: counts (Poisson, mean over orders of magnitude) or
# continuous values spread over up to 6 orders of magnitude.
prop_values <- function(n, kind = pick(c("counts", "continuous", "flat"))) {
  switch(kind,
    counts = pmax(stats::rpois(n, 10^stats::runif(1, -0.5, 2)), 1),
    continuous = stats::rexp(n) * 10^stats::runif(n, -3, 3),
    flat = stats::runif(n, 0.5, 1.5))
}

# A multiplier that keeps every value of x inside [1e-290, 1e290]: 1 for
# most cases, anything between 1e-300 and 1e300 otherwise.
prop_multiplier <- function(v, p_extreme = 0.3) {
  if (stats::runif(1) > p_extreme) return(1)
  lo <- -290 - log10(min(v[v > 0])); hi <- 290 - log10(max(v))
  lo <- max(lo, -300); hi <- min(hi, 300)
  if (lo >= hi) return(1)
  # half of the extreme cases at the ends of the range
  e <- if (stats::runif(1) < 0.5) stats::runif(1, lo, hi) else pick(c(lo, hi))
  10^e
}

# A scale factor c for the scale-invariance check (x * c stays in range).
prop_scale_factor <- function(v) {
  lo <- max(-300, -290 - log10(min(v[v > 0]))); hi <- min(300, 290 - log10(max(v)))
  if (lo >= hi) return(1)
  10^stats::runif(1, lo, hi)
}

# Density: dense, random sparsity, or a single non-zero.
prop_density <- function() pick(list(1, 1, stats::runif(1, 0.05, 0.9), 0))

# A non-negative array of the given dims with at least one non-zero;
# density 0 means exactly one non-zero cell.
prop_array <- function(dims, density = prop_density(), kind = pick(c("counts", "continuous", "flat"))) {
  cells <- prod(dims)
  mask <- if (density == 0) seq_len(cells) == sample.int(cells, 1) else stats::runif(cells) < density
  if (!any(mask)) mask[sample.int(cells, 1)] <- TRUE
  x <- array(0, dims)
  x[mask] <- prop_values(sum(mask), kind)
  x
}

# (built from the triplets: Matrix::Matrix() may drop tiny values)
as_dgc <- function(x) {
  nz <- which(x != 0, arr.ind = TRUE)
  Matrix::sparseMatrix(i = nz[, 1], j = nz[, 2], x = x[nz], dims = dim(x))
}

# Dense and sparse storage of a matrix or array.
prop_storage <- function(x, sparse) {
  if (!sparse) return(if (length(dim(x)) == 2) matrix(x, nrow(x)) else x)
  if (length(dim(x)) == 2) as_dgc(matrix(x, nrow(x))) else as_sptensor(x)
}

prop_k <- function(kmax) {
  kmax <- max(1L, as.integer(kmax))
  # k = kmax and k = 1 are drawn often: they are where the edge cases are
  pick(list(1L, kmax, sample.int(kmax, 1)))
}

prop_nnz <- function(x) sum(x != 0)

# --- cases ----------------------------------------------------------------
# A case: fitter, i, seed, fun, args (x is args[[1]]), and
#   dense: the same data in the other storage (or NULL),
#   scale: c for the scale check (or NULL), scale_kind "normalized",
#          "product" (nmf: W H scales by c) or "finite",
#   monotone: whether the objective trace must never rise.

prop_case <- function(fitter, i) {
  seed <- prop_seed(fitter, i)
  gen <- get(paste0("prop_gen_", fitter))
  case <- prop_with_seed(seed, gen())
  case$fitter <- fitter; case$i <- i; case$seed <- seed
  case
}

prop_controls <- function() {
  list(nrun = sample.int(3, 1), seed = sample.int(1e6, 1), threads = sample.int(2, 1))
}

prop_gen_plsa <- function() {
  N <- pick(c(2, 2, 2, 3, 4))
  medium <- N == 2 && stats::runif(1) < 0.1
  dims <- if (medium) sample(50:80, 2) else sample.int(c(12, 12, 8, 5)[N], N, replace = TRUE)
  x <- prop_array(dims, if (medium) stats::runif(1, 0.6, 1) else prop_density())
  x <- x * prop_multiplier(x)
  loss <- pick(c("kl", "kl", "tsallis", "l2"))
  kmax <- if (N == 2) min(dims) else prop_nnz(x)
  k <- prop_k(min(kmax, if (medium) 6 else 12))
  args <- c(list(x = NULL, k = k, loss = loss), prop_controls(),
            list(max_iter = if (medium) 15L else pick(c(1L, 5L, 30L, 100L)),
                 tol = pick(c(0, 1e-6, 1e-10))))
  tempering <- 1
  if (loss == "kl" && stats::runif(1) < 0.4) args$tempering <- tempering <- stats::runif(1, 0.3, 0.99)
  if (loss == "tsallis") args$q <- stats::runif(1, 0.05, 0.95)
  sparse <- stats::runif(1) < 0.5
  args$x <- prop_storage(x, sparse)
  list(fun = "plsa", args = args, dense = prop_storage(x, !sparse),
       scale = prop_scale_factor(x[x > 0]), scale_kind = "normalized",
       monotone = !(loss == "kl" && tempering < 1),
       # the divergences of the normalized data sum terms of the size of
       # g log g (entropy): their rounding is about eps (1 + entropy), which
       # shows at an exact fit (objective 0)
       obj_scale = 1 - sum((x[x > 0] / sum(x)) * log(x[x > 0] / sum(x))))
}

prop_gen_nmf <- function() {
  medium <- stats::runif(1) < 0.1
  dims <- if (medium) sample(40:70, 2) else sample.int(12, 2, replace = TRUE)
  loss <- pick(c("frobenius", "frobenius", "kl", "kl", "beta"))
  beta <- if (loss == "beta") pick(c(0.5, 1.5, 3, 0, -1, stats::runif(1, 0.1, 0.9))) else NULL
  positive <- !is.null(beta) && beta <= 0
  x <- prop_array(dims, if (positive) 1 else if (medium) stats::runif(1, 0.6, 1) else prop_density())
  x <- x * prop_multiplier(x)
  method <- switch(loss, frobenius = pick(c("hals", "anls", "mu")), kl = pick(c("cd", "mu")), beta = "mu")
  k <- prop_k(min(dims, if (medium) 6 else 12))
  args <- c(list(x = NULL, k = k, loss = loss), if (!is.null(beta)) list(beta = beta),
            list(method = method), prop_controls(),
            list(max_iter = if (medium) 15L else pick(c(1L, 5L, 30L, 100L)),
                 tol = pick(c(0, 1e-6, 1e-10))))
  acc <- pick(list(NULL, TRUE, FALSE))
  if (!is.null(acc)) args$accelerate <- acc
  mu_like <- method == "mu" || loss == "kl"
  init <- pick(if (mu_like) list(NULL, "nndsvda", "nndsvdar", "random", "list") else
    list(NULL, "nndsvd", "nndsvda", "nndsvdar", "random", "list"))
  if (identical(init, "list")) {
    s <- sqrt(mean(x) / k)
    init <- pick(list(list(W = matrix(stats::runif(dims[1] * k), dims[1], k) * s),
                      list(H = matrix(stats::runif(k * dims[2]), k, dims[2]) * s)))
  }
  if (!is.null(init)) args$init <- init
  penalized <- stats::runif(1) < 0.3
  if (penalized) {
    args$L1 <- stats::runif(2) * 10^stats::runif(1, -3, 0) * sqrt(mean(x))
    if (loss != "beta") args$L2 <- stats::runif(2) * 10^stats::runif(1, -3, 0)
  }
  # eps = 0 removes the guard of 0/0 at empty rows and columns: only on
  # strictly positive data
  if (method == "mu" && all(x > 0) && stats::runif(1) < 0.5) args$eps <- 0
  sparse <- stats::runif(1) < 0.5
  args$x <- prop_storage(x, sparse)
  # the scale property holds for unpenalized Frobenius and KL fits; the
  # multiplicative updates' epsilon guard is absolute, so only with eps = 0
  scaled <- loss %in% c("frobenius", "kl") && !penalized && (method != "mu" || identical(args$eps, 0))
  list(fun = "nmf", args = args, dense = prop_storage(x, !sparse),
       scale = prop_scale_factor(x[x > 0]), scale_kind = if (scaled) "product" else "finite",
       monotone = TRUE, obj_scale = if (loss == "frobenius") 0.5 * sum(x^2) else
         sum(x[x > 0] * (1 + abs(log(x[x > 0])))))
}

prop_gen_ntf <- function() {
  N <- pick(c(2, 3, 3, 4))
  medium <- N == 3 && stats::runif(1) < 0.1
  dims <- if (medium) sample(15:20, 3) else sample.int(c(12, 12, 8, 5)[N], N, replace = TRUE)
  x <- prop_array(dims, if (medium) stats::runif(1, 0.6, 1) else prop_density())
  x <- x * prop_multiplier(x)
  loss <- pick(c("frobenius", "kl"))
  args <- c(list(x = NULL, k = prop_k(min(prop_nnz(x), if (medium) 5 else 10)), loss = loss),
            if (loss == "frobenius") list(method = pick(c("hals", "mu"))), prop_controls(),
            list(max_iter = if (medium) 15L else pick(c(1L, 5L, 30L, 100L)),
                 tol = pick(c(0, 1e-6, 1e-10))))
  sparse <- stats::runif(1) < 0.5
  args$x <- prop_storage(x, sparse)
  list(fun = "ntf", args = args, dense = prop_storage(x, !sparse),
       scale = prop_scale_factor(x[x > 0]), scale_kind = "finite", monotone = TRUE,
       # (KL as nmf's: the rounding of its sum of x log(x / m) terms; ntf
       # case 53, an exact fit of 10 x 1 data, ends its starts at -8e-15
       # and -4e-15, which prop_same_fit() takes as tied by this scale)
       obj_scale = if (loss == "frobenius") sum(x^2) else sum(x[x > 0] * (1 + abs(log(x[x > 0])))))
}

prop_gen_lca <- function() {
  J <- sample(2:5, 1)
  n <- sample(3:60, 1)
  p_na <- pick(c(0, 0, 0.1, 0.3))
  cols <- lapply(seq_len(J), function(j) {
    L <- sample(2:4, 1)
    repeat {
      v <- sample.int(L, n, replace = TRUE, prob = stats::runif(L, 0.2, 1))
      v[stats::runif(n) < p_na] <- NA
      if (length(unique(v[!is.na(v)])) >= 2) break
    }
    switch(pick(c("factor", "character", "integer", "logical")),
           factor = factor(letters[v], levels = letters[seq_len(L)]),
           character = c("lo", "mid", "hi", "top")[v],
           integer = v,
           logical = if (L == 2) v == 2 else factor(letters[v]))
  })
  df <- as.data.frame(cols, col.names = paste0("item", seq_len(J)), stringsAsFactors = FALSE)
  na_rm <- p_na > 0 && stats::runif(1) < 0.3
  if (na_rm) {
    # na.rm = TRUE needs complete observations with two levels per variable
    cc <- df[stats::complete.cases(df), , drop = FALSE]
    if (nrow(cc) == 0 || any(vapply(cc, function(v) length(unique(v)) < 2, logical(1)))) na_rm <- FALSE
  }
  rows <- if (na_rm) df[stats::complete.cases(df), , drop = FALSE] else df[rowSums(is.na(df)) < J, , drop = FALSE]
  patterns <- nrow(unique(rows))
  args <- list(data = df, k = prop_k(min(patterns, 4)), nrun = sample.int(3, 1),
               max_iter = pick(c(1L, 5L, 50L, 500L)), tol = pick(c(0, 1e-8)),
               seed = sample.int(1e6, 1), threads = sample.int(2, 1), na.rm = na_rm,
               short_iter = pick(c(0L, 3L, 100L)), short_keep = sample.int(2, 1))
  list(fun = "lca", args = args, dense = NULL, scale = NULL, scale_kind = "none", monotone = TRUE)
}

# All permutations of the rows of a sorted index set.
prop_perms <- function(L) {
  if (L == 1) return(matrix(1L, 1, 1))
  sub <- prop_perms(L - 1)
  do.call(rbind, lapply(seq_len(L), function(first) cbind(first, matrix(setdiff(seq_len(L), first)[sub], nrow(sub)))))
}

# A super-symmetric tensor as symtensor, dense array and full sptensor.
prop_symtensor <- function(n, L, positive, k0) {
  all_sets <- as.matrix(expand.grid(rep(list(seq_len(n)), L)))
  all_sets <- unique(t(apply(all_sets, 1, sort.int)))
  if (is.null(dim(all_sets))) all_sets <- matrix(all_sets, ncol = L)
  kind <- if (positive) "planted" else pick(c("planted", "random", "single"))
  if (kind == "planted") {
    G <- matrix(stats::runif(n * k0) * (stats::runif(n * k0) < 0.7), n, k0)
    if (positive) G <- G + 0.05
    vals <- apply(all_sets, 1, function(s) sum(apply(G[s, , drop = FALSE], 2, prod)))
    if (stats::runif(1) < 0.5) vals <- vals + stats::runif(length(vals), 0, 0.1 * max(vals, 1e-3))
    if (!any(vals > 0)) vals[1] <- 1
    idx <- all_sets
  } else if (kind == "random") {
    keep <- stats::runif(nrow(all_sets)) < stats::runif(1, 0.1, 1)
    if (!any(keep)) keep[sample.int(nrow(all_sets), 1)] <- TRUE
    idx <- all_sets[keep, , drop = FALSE]
    vals <- prop_values(nrow(idx))
  } else {
    idx <- all_sets[sample.int(nrow(all_sets), 1), , drop = FALSE]
    vals <- prop_values(1)
  }
  vals <- vals * prop_multiplier(vals[vals > 0])
  keep <- vals > 0
  symtensor(idx[keep, , drop = FALSE], vals[keep], n = n)
}

prop_sym_dense <- function(y) as.array(y)
prop_sym_full <- function(y) as_sptensor(y)

prop_gen_sntf <- function() {
  L <- pick(c(2, 3, 3, 4))
  n <- sample.int(c(0, 10, 7, 5)[L], 1)
  method <- pick(c("alpha", "alpha", "smart", "beta", "beta", "average", "unfold"))
  args <- list(x = NULL, k = prop_k(n), method = method)
  if (method == "alpha") args$alpha <- pick(c(1, 0.5, 2, 3, stats::runif(1, 0.1, 3)))
  if (method == "beta") args$cichocki_beta <- pick(c(0, 1, -1, 0.5, 2, -0.5))
  positive <- method == "smart" || (method == "beta" && args$cichocki_beta <= -1) ||
    (method == "beta" && !(args$cichocki_beta %in% c(0, 1)) && stats::runif(1) < 0.5)
  y <- prop_symtensor(n, L, positive, k0 = sample.int(3, 1))
  if (stats::runif(1) < 0.4) args$omega <- stats::runif(1, 0.2, 1.9)
  if (method %in% c("alpha", "smart") && stats::runif(1) < 0.3) args$sparsity <- stats::runif(1, -0.005, 0.005)
  if (method %in% c("beta", "average", "unfold") && stats::runif(1) < 0.3) {
    args$L1 <- stats::runif(1) * 10^stats::runif(1, -3, -1) * mean(y$values)
  }
  if (stats::runif(1) < 0.3) args$orthogonal <- TRUE
  init <- pick(list(NULL, "nndsvd", "random", "matrix"))
  if (identical(init, "matrix")) init <- matrix(stats::runif(n * args$k), n, args$k)
  if (!is.null(init)) args$init <- init
  args <- c(args, prop_controls(), list(max_iter = pick(c(1L, 5L, 30L, 100L)), tol = pick(c(0, 1e-6))))
  form <- pick(c("symtensor", "dense", "full"))
  alt <- pick(setdiff(c("symtensor", "dense", "full"), form))
  as_form <- function(f) switch(f, symtensor = y, dense = prop_sym_dense(y), full = prop_sym_full(y))
  args$x <- as_form(form)
  omega <- if (is.null(args$omega)) 1 else args$omega
  list(fun = "sntf", args = args, dense = as_form(alt),
       scale = prop_scale_factor(y$values), scale_kind = "finite",
       # the divergence sums terms of the size of y^deg (deg as in R/family-sntf.R:
       # 1 for alpha and SMART, beta + 1 for beta, 2 otherwise): its
       # rounding is relative to that sum (SMART on data near 1e-154 ends
       # at -2e-168, far below sum(y^2) but eps sum(y))
       obj_scale = sum(as_sptensor(y)$values^switch(method, alpha = , smart = 1, beta = args$cichocki_beta + 1, 2)),
       monotone = method %in% c("alpha", "smart", "beta") && omega <= 1 &&
         is.null(args$sparsity) && !isTRUE(args$orthogonal))
}

prop_gen_symnmf <- function() {
  n <- sample.int(12, 1)
  kind <- pick(c("planted", "planted", "random", "single"))
  if (kind == "planted") {
    H <- matrix(stats::runif(n * 3) * (stats::runif(n * 3) < 0.6), n, 3)
    A <- tcrossprod(H)
    if (stats::runif(1) < 0.5) { E <- matrix(stats::runif(n * n, 0, 0.1), n); A <- A + E + t(E) }
    if (!any(A > 0)) A[1, 1] <- 1
  } else if (kind == "random") {
    A <- prop_array(c(n, n))
    A <- A + t(A)
  } else {
    A <- matrix(0, n, n); i <- sample.int(n, 2, replace = TRUE)
    A[i[1], i[2]] <- A[i[2], i[1]] <- prop_values(1)
  }
  A <- A * prop_multiplier(A[A > 0])
  method <- pick(c("anls", "hals", "fpals"))
  args <- list(a = NULL, k = prop_k(n), method = method)
  lam <- max(A)^2 * 10^stats::runif(1, -2, 1)
  if (method != "fpals" && is.finite(lam) && stats::runif(1) < 0.3) args$coupling <- lam
  if (stats::runif(1) < 0.3) args$L1 <- stats::runif(1) * 10^stats::runif(1, -3, -1) * mean(A)
  if (method == "fpals" && stats::runif(1) < 0.5) args$omega <- stats::runif(1, 0.2, 1.9)
  init <- pick(list(NULL, "nndsvd", "random", "matrix"))
  if (identical(init, "matrix")) init <- matrix(stats::runif(n * args$k), n, args$k) * sqrt(mean(A))
  if (!is.null(init)) args$init <- init
  args <- c(args, prop_controls(), list(max_iter = pick(c(1L, 5L, 30L, 100L)), tol = pick(c(0, 1e-6))))
  sparse <- stats::runif(1) < 0.5
  args$a <- prop_storage(A, sparse)
  list(fun = "symnmf", args = args, dense = prop_storage(A, !sparse),
       scale = prop_scale_factor(A[A > 0]), scale_kind = "finite", obj_scale = 0.5 * sum(A^2),
       monotone = method != "fpals")
}

# --- running and reproducing ----------------------------------------------

# The fitter call as R code: the data deparsed in full when small, through
# prop_case() otherwise.
prop_call_text <- function(case, args = case$args, data_note = NULL) {
  x <- args[[1]]
  small <- length(if (inherits(x, c("aspectr_symtensor", "aspectr_tensor"))) x$values else unlist(x)) <= 300
  data_line <- if (small) {
    paste0("x <- ", paste(deparse(x, control = c("keepNA", "keepInteger", "niceNames", "showAttributes", "digits17"),
                                  width.cutoff = 500L), collapse = "\n"))
  } else {
    sprintf("x <- prop_case(\"%s\", %d)$args[[1]]  # after source(\"tests/testthat/helper-properties.R\")",
            case$fitter, case$i)
  }
  if (!is.null(data_note)) data_line <- paste0(data_line, "\n", data_note)
  rest <- vapply(names(args)[-1], function(nm) {
    paste0(nm, " = ", paste(deparse(args[[nm]], control = c("keepNA", "keepInteger", "niceNames", "digits17"),
                                    width.cutoff = 500L), collapse = ""))
  }, character(1))
  paste0(data_line, "\n", case$fun, "(x, ", paste(rest, collapse = ", "), ")")
}

# Runs the fitter; list(fit, error, warnings).
prop_run <- function(case, args = case$args) {
  warns <- character()
  fit <- tryCatch(
    withCallingHandlers(do.call(get(case$fun, asNamespace("aspectr")), args),
                        warning = function(w) {
                          warns <<- c(warns, paste0("[", class(w)[1], "] ", conditionMessage(w)))
                          invokeRestart("muffleWarning")
                        }),
    error = function(e) e)
  if (inherits(fit, "error")) {
    return(list(fit = NULL, error = paste0("[", paste(class(fit)[1:2], collapse = "/"), "] ",
                                           conditionMessage(fit)), warnings = warns))
  }
  list(fit = fit, error = NULL, warnings = warns)
}

# The statistics a fit reports (besides its factors).
prop_reported <- function(fun, fit) {
  c(fit$value, fit$initial, fit$objective, fit$run_values,
    if (fun == "lca") c(fit$Gsq, fit$Chisq))
}

# The factors to compare between two fits.
prop_parts <- function(fun, fit) {
  switch(fun,
    plsa = , lca = c(list(lambda = fit$lambda), fit$factors),
    # W H is unchanged by W D, D^-1 H: compare in one gauge (unit-norm
    # columns of W); the fitters do not promise one
    nmf = local({
      s <- sqrt(colSums(fit$W^2)); s[s == 0] <- 1
      list(W = sweep(fit$W, 2, s, "/"), H = fit$H * s)
    }),
    ntf = c(list(weights = fit$weights), fit$factors),
    sntf = list(G = fit$G),
    symnmf = list(H = fit$H))
}

prop_numbers <- function(fun, fit) {
  c(prop_parts(fun, fit), list(objective = fit$objective, value = fit$value),
    if (fun == "lca") list(posterior = fit$posterior, llik = fit$llik),
    if (fun %in% c("nmf", "sntf", "symnmf")) list(rel_error = fit$rel_error))
}

# Largest relative difference between the parts of two fits (max norm of
# the difference over max norm of the first, per part).
prop_rel_diff <- function(a, b) {
  if (length(a) != length(b)) return(Inf)
  d <- mapply(function(u, v) {
    u <- as.numeric(u); v <- as.numeric(v)
    if (length(u) != length(v)) return(Inf)
    s <- max(abs(u), 0)
    if (s == 0) return(if (max(abs(v), 0) == 0) 0 else Inf)
    max(abs(u - v)) / s
  }, a, b)
  max(d, 0)
}

prop_strip <- function(fit) {
  fit$time <- NULL; fit$call <- NULL
  unclass(fit)
}

prop_nonneg <- function(m, tol = 1e-10) all(m >= -tol * max(abs(m), 0))
prop_simplex_cols <- function(m, tol = 1e-10) {
  m <- as.matrix(m)
  prop_nonneg(m, 0) && all(abs(colSums(m) - 1) <= tol)
}

# The constraints of the model; NULL when they hold, else a description.
prop_constraints <- function(fun, fit) {
  bad <- character()
  if (fun %in% c("plsa", "lca")) {
    if (!prop_simplex_cols(fit$lambda)) bad <- c(bad, "lambda not on the simplex")
    for (n in seq_along(fit$factors)) {
      if (!prop_simplex_cols(fit$factors[[n]])) bad <- c(bad, sprintf("factor %d: a column not on the simplex", n))
    }
    if (fun == "lca") {
      if (!prop_simplex_cols(t(fit$posterior))) bad <- c(bad, "posterior rows do not sum to 1")
      for (p in fit$probs) if (!prop_simplex_cols(t(p))) bad <- c(bad, "probs rows do not sum to 1")
    }
  } else {
    for (nm in names(prop_parts(fun, fit))) {
      if (!prop_nonneg(prop_parts(fun, fit)[[nm]])) {
        bad <- c(bad, sprintf("%s has negative entries (min %g)", nm, min(prop_parts(fun, fit)[[nm]])))
      }
    }
  }
  if (length(bad)) paste(bad, collapse = "; ") else NULL
}

# How closely two fits of the same problem that differ only by rounding
# (storage, scale) must agree: coordinate descent (nmf, and plsa/ntf under
# KL, whose Newton steps take a rounding-level decision at an exact fit)
# lets rounding grow along the flat directions of a degenerate problem
# (about 5e-8 seen for an over-parametrized exact fit): 1e-6; the other
# algorithms 1e-8.
prop_agree_tol <- function(case) {
  a <- case$args
  cd <- case$fun == "nmf" ||
    (case$fun == "plsa" && (is.null(a$loss) || identical(a$loss, "kl")) && !isTRUE(a$tempering < 1) &&
       !identical(a$method, "em")) ||
    (case$fun == "ntf" && identical(a$loss, "kl") && !identical(a$method, "mu"))
  if (cd) 1e-6 else 1e-8
}

prop_monotone <- function(o, initial = NULL, obj_scale = NULL, slack = 1e-10) {
  if (length(o) < 2) return(NULL)
  # squared losses evaluated through Gram matrices (||X||^2 - 2 <X, M> +
  # ||M||^2) round to about eps ||X||^2 in absolute terms
  scale <- max(abs(c(o, initial[is.finite(initial)], obj_scale)))
  # relative slack, plus the rounding of a sum of terms of the size of the
  # largest objective (a divergence reaching 0 can come out as -2e-16)
  up <- diff(o) > slack * pmax(abs(o[-1]), abs(o[-length(o)])) + 1e-14 * scale
  if (!any(up)) return(NULL)
  j <- which(up)[1]
  sprintf("objective rises at iteration %d: %.17g -> %.17g (%d rises)", j + 1, o[j], o[j + 1], sum(up))
}

# Checks every property of a case; a named character vector of failures
# (names: property), empty when all hold.
prop_check <- function(case) {
  fails <- character()
  fail <- function(prop, msg, args = case$args, note = NULL) {
    fails[[length(fails) + 1]] <<- paste0(msg, "\n  reproduce:\n", prop_call_text(case, args, note))
    names(fails)[length(fails)] <<- prop
  }
  fun <- case$fun
  r <- prop_run(case)
  if (!is.null(r$error)) {
    fail("no_error", paste("error on valid input:", r$error))
    return(fails)
  }
  warns <- r$warnings
  # random real-valued data under KL: the documented note that the
  # likelihood of non-count data means nothing
  warns <- warns[!grepl("[aspectr_warning_noncount]", warns, fixed = TRUE)]
  # nmf(): penalties that set a factor to zero say so (class
  # aspectr_warning_zero_factor): due only when the model W H vanished
  # (is at most 1e-12 of the data's largest value, as nmf() judges it)
  zero_w <- grepl("[aspectr_warning_zero_factor]", warns, fixed = TRUE)
  if (any(zero_w)) {
    wh <- if (fun == "nmf" && !is.null(r$fit)) max(r$fit$W %*% r$fit$H) else NA
    if (!isTRUE(wh <= 1e-11 * max(case$args[[1]]))) {
      fail("no_warning", sprintf("an aspectr_warning_zero_factor for a model that does not vanish (max(W H) = %g)", wh))
    }
    warns <- warns[!zero_w]
  }
  # lca(): the warning that the data cannot identify the model is due
  # exactly when poLCA's resid.df, counting the observations, is below
  # zero (and there are classes)
  if (fun == "lca") {
    ident <- grepl("[aspectr_warning_identification]", warns, fixed = TRUE)
    cells <- prod(vapply(r$fit$probs, ncol, numeric(1)))
    due <- r$fit$k > 1 && min(r$fit$N, cells - 1) - r$fit$npar < 0
    if (due && !any(ident)) fail("warned", "more free parameters than the data identify, without an aspectr_warning_identification")
    if (!due && any(ident)) fail("no_warning", "an aspectr_warning_identification for a model the data identify")
    warns <- warns[!ident]
  }
  # a statistic reported as non-finite (an objective, the initial value, a
  # trace entry, a start's value; lca's goodness of fit) is never silent:
  # the classed numeric warning says so, and is then due
  numeric_w <- grepl("[aspectr_warning_numeric]", warns, fixed = TRUE)
  if (!all(is.finite(prop_reported(fun, r$fit)))) {
    if (!any(numeric_w)) fail("warned", "a reported statistic is not finite, without an aspectr_warning_numeric")
    warns <- warns[!numeric_w]
  }
  if (length(warns) && prop_objective_overflows(case)) warns <- warns[!prop_overflow_warning(warns)]
  if (length(warns) && prop_objective_underflows(case, r$fit)) warns <- warns[!prop_overflow_warning(warns)]
  if (length(warns)) fail("no_warning", paste("warning:", paste(warns, collapse = " | ")))
  fit <- r$fit
  nums <- prop_numbers(fun, fit)
  notfin <- names(nums)[!vapply(nums, function(v) all(is.finite(unlist(v))), logical(1))]
  # nmf reports its objective in the units of x: when that value is beyond
  # the double range (the squared error of data near 1e290), it is Inf by
  # design; W, H and rel_error must stay finite
  if (fun %in% c("nmf", "ntf", "sntf", "symnmf") && prop_objective_overflows(case)) {
    inf_ok <- vapply(c("objective", "value"), function(nm) all(is.finite(nums[[nm]]) | nums[[nm]] == Inf), logical(1))
    notfin <- setdiff(notfin, c("objective", "value")[inf_ok])
  }
  if (length(notfin)) fail("finite", paste("not finite:", paste(notfin, collapse = ", ")))
  cons <- prop_constraints(fun, fit)
  if (!is.null(cons)) fail("constraints", cons)
  # every objective is a divergence (plus non-negative penalties)
  if (fun != "lca" && !length(notfin)) {
    o <- fit$objective
    scale <- max(abs(c(o, fit$initial[is.finite(fit$initial)], case$obj_scale)))
    if (length(o) && min(o) < -1e-12 * scale) {
      fail("nonnegative", sprintf("negative objective %.17g (iteration %d)", min(o), which.min(o)))
    }
  }
  if (case$monotone && !length(notfin) && all(is.finite(fit$objective))) {
    mono <- prop_monotone(fit$objective, fit$initial, case$obj_scale)
    if (!is.null(mono)) fail("monotone", mono)
  }
  # identical results for identical seeds
  r2 <- prop_run(case)
  if (is.null(r2$fit) || !identical(prop_strip(fit), prop_strip(r2$fit))) {
    fail("same_seed", if (is.null(r2$fit)) paste("second run failed:", r2$error) else
      sprintf("second run with the same seed differs (largest relative difference %g)",
              prop_rel_diff(prop_numbers(fun, fit), prop_numbers(fun, r2$fit))))
  }
  # dense == sparse storage
  if (!is.null(case$dense)) {
    a <- case$args; a[[1]] <- case$dense
    r3 <- prop_run(case, a)
    if (is.null(r3$fit)) fail("dense_sparse", paste("other storage fails:", r3$error), a) else {
      d <- prop_same_fit(case, fit, r3$fit, case$args, a)
      # nmf: dense and sparse products sum in other orders, and rounding
      # differences grow over the iterations of a fit that has not
      # converged (to about 1e-7): 1e-6 for nmf, 1e-8 elsewhere
      if (!(d <= prop_agree_tol(case))) fail("dense_sparse", sprintf("storage %s vs %s: factors differ by %g (relative)",
                                                    class(case$args[[1]])[1], class(a[[1]])[1], d), a)
    }
  }
  # scale invariance
  if (!is.null(case$scale) && case$scale_kind != "none") {
    cc <- case$scale
    a <- case$args; a[[1]] <- prop_scaled(a[[1]], cc)
    # a user start is in the units of the data: scaled with it
    if (is.list(a$init)) a$init <- lapply(a$init, function(m) m * sqrt(cc))
    # so is symnmf's start matrix H (A ~ H H'); unscaled, a start of 1e-2 on
    # data near 1e-174 has an objective beyond the double range (sntf
    # rescales its start to the data's total itself)
    if (fun == "symnmf" && is.matrix(a$init)) a$init <- a$init * sqrt(cc)
    note <- sprintf("c <- %s\nx <- %s", format(cc, digits = 17), prop_scale_text(a[[1]]))
    r4 <- prop_run(case, a)
    if (is.null(r4$fit)) fail("scale", paste("scaled data fails:", r4$error), case$args, note) else {
      nums4 <- prop_numbers(fun, r4$fit)
      bad4 <- names(nums4)[!vapply(nums4, function(v) all(is.finite(unlist(v))), logical(1))]
      if (fun %in% c("nmf", "ntf", "sntf", "symnmf") && prop_objective_overflows(case, cc)) {
        inf_ok <- vapply(c("objective", "value"), function(nm) all(is.finite(nums4[[nm]]) | nums4[[nm]] == Inf), logical(1))
        bad4 <- setdiff(bad4, c("objective", "value")[inf_ok])
      }
      d <- switch(case$scale_kind,
        normalized = max(prop_rel_diff(prop_parts(fun, fit), prop_parts(fun, r4$fit)),
                         # the divergence of the normalized data is scale-free too
                         abs(fit$value - r4$fit$value) / max(abs(fit$value), 1e-4)),
        product = prop_rel_diff(list(fit$W %*% fit$H),
                                list((r4$fit$W / sqrt(cc)) %*% (r4$fit$H / sqrt(cc)))),
        finite = 0)
      # an exact fit (objective 0 up to rounding) of plsa's KL coordinate
      # descent (nmf()'s rule, which has no step to keep the entering model
      # where rounding would make a step worse): the factorization is not
      # unique there and rounding moves it along the flat directions; the
      # model P is unique: compared instead
      if (fun == "plsa" && d > prop_agree_tol(case) && !is.null(case$obj_scale) &&
          max(abs(c(fit$value, r4$fit$value))) <= 1e-12 * case$obj_scale) {
        d <- prop_rel_diff(list(fitted(fit, type = "probability")), list(fitted(r4$fit, type = "probability")))
      }
      # starts that tie (their values agree to rounding; for plsa the value is
      # scale-free) can be ranked differently by rounding: another winner
      if (!identical(fit$run, r4$fit$run) && fun == "plsa" &&
          max(abs(fit$run_values - r4$fit$run_values)) <= 1e-8 * max(1, abs(fit$run_values))) d <- 0
      # an SVD start (NNDSVD*) of data whose leading singular values tie is
      # not unique: x and c x differ by rounding and may start elsewhere
      if (fun == "nmf" && prop_svd_ties(case)) d <- 0
      # a relative stopping rule (tol > 0) on an objective at rounding level
      # (an exact fit: plsa case 98, k = 12 on 24 cells, ends near 1e-17)
      # stops x and c x at different iterations; compared at the same count
      # (tol = 0) the fits must agree
      if (!(d <= 1e-8) && !length(bad4) && case$scale_kind == "normalized" &&
          !identical(fit$iterations, r4$fit$iterations) && isTRUE(case$args$tol > 0)) {
        a1 <- case$args; a1$tol <- 0; a$tol <- 0
        a1$max_iter <- a$max_iter <- min(fit$iterations, r4$fit$iterations, a1$max_iter)
        g1 <- prop_run(case, a1)$fit; g4 <- prop_run(case, a)$fit
        if (!is.null(g1) && !is.null(g4)) {
          d <- max(prop_rel_diff(prop_parts(fun, g1), prop_parts(fun, g4)),
                   abs(g1$value - g4$value) / max(abs(g1$value), 1e-4))
        }
      }
      # SQUAREM's accept test at a rounding tie (prop_squarem()): compared by EM
      if (!(d <= prop_agree_tol(case)) && !length(bad4) && case$scale_kind == "normalized" &&
          prop_squarem(case, case$args)) {
        # (`a` as drawn: the check above may have shortened it)
        a$max_iter <- case$args$max_iter
        e <- prop_em_diff(case, case$args, a, function(g1, g4) {
          max(prop_rel_diff(prop_parts(fun, g1), prop_parts(fun, g4)), abs(g1$value - g4$value) / max(abs(g1$value), 1e-4))
        })
        if (!is.null(e)) d <- e
      }
      if (length(bad4)) {
        fail("scale", sprintf("fit of x * %g is not finite: %s", cc, paste(bad4, collapse = ", ")), case$args, note)
      } else if (!(d <= prop_agree_tol(case))) {
        fail("scale", sprintf("fit of x * %g differs by %g (relative, %s)", cc, d,
                              if (case$scale_kind == "product") "W H / c" else "normalized factors and objective"),
             case$args, note)
      }
    }
  }
  # serial == threaded
  a <- case$args; a$threads <- if (identical(as.integer(a$threads), 1L)) 2L else 1L
  r5 <- prop_run(case, a)
  if (is.null(r5$fit)) fail("threads", paste("threads =", a$threads, "fails:", r5$error), a) else {
    d <- prop_same_fit(case, fit, r5$fit, case$args, a)
    if (!(d <= 1e-10)) fail("threads", sprintf("threads %d vs %d: factors differ by %g (relative)",
                                               case$args$threads, a$threads, d), a)
  }
  # after this process ran the fit on 2 threads (above), the same fit in a
  # forked child asking for 2 threads finishes, on one thread, with the
  # serial fit's numbers (GNU OpenMP does not survive fork(); ?threads)
  if (prop_fork_due(case) && !is.null(r5$fit)) {
    serial <- if (identical(as.integer(case$args$threads), 1L)) fit else r5$fit
    a <- case$args; a$threads <- 2L
    job <- parallel::mcparallel(prop_run(case, a), silent = TRUE)
    rf <- parallel::mccollect(job, wait = FALSE, timeout = 60)
    if (is.null(rf)) {
      tools::pskill(job$pid, tools::SIGKILL)
      parallel::mccollect(job, wait = FALSE)
      fail("fork", "the fit in a forked child gave no result in 60 s (a deadlock)", a)
    } else {
      rf <- rf[[1]]
      if (inherits(rf, "try-error") || is.null(rf$fit)) {
        fail("fork", paste("the fit in a forked child failed:", if (inherits(rf, "try-error")) rf else rf$error), a)
      } else if (!identical(as.integer(rf$fit$threads), 1L) ||
                 !identical(prop_numbers(fun, rf$fit), prop_numbers(fun, serial))) {
        fail("fork", sprintf("the fit in a forked child (threads recorded: %s) differs from the serial fit by %g (relative)",
                             format(rf$fit$threads), prop_rel_diff(prop_numbers(fun, rf$fit), prop_numbers(fun, serial))), a)
      }
    }
  }
  c(fails, prop_check_surfaces(case))
}

# Every tenth case also runs in a forked child (not on Windows, where there
# is no fork), chosen by the case's number so that the cases' draws do not
# change.
prop_fork_due <- function(case) .Platform$OS.type == "unix" && case$i %% 10 == 0

# Relative difference of two fits of the same data that should agree (other
# storage, other thread count). Rounding differences legitimately change two
# discrete choices, which are then taken out of the comparison:
# * the winning start, when starts tie (the run values of both fits agree to
#   1e-10 relative, but the minimum is another start): compare run values;
# * the stopping iteration, when the relative change of the objective is
#   within rounding of `tol`: compare both fits with tol = 0 (the same
#   number of iterations).
prop_same_fit <- function(case, f1, f2, args1, args2) {
  fun <- case$fun
  d <- prop_rel_diff(prop_parts(fun, f1), prop_parts(fun, f2))
  if (d == 0) return(d)
  # (run values at the rounding level of 0, exact fits, tie too: their
  # relative difference means nothing. plsa cases 190, 196, 433 of a
  # 1000-case run, sharded vs in memory: every start fits exactly, values
  # 0 and +-2.2e-16, and the minimum is another start. The allowance is the
  # rounding of a divergence, as in the non-negativity check: 1e-12 times
  # the objective's scale)
  if (!identical(f1$run, f2$run) && length(f1$run_values) == length(f2$run_values) &&
      all(is.finite(f1$run_values)) && all(is.finite(f2$run_values)) &&
      (prop_rel_diff(list(f1$run_values), list(f2$run_values)) <= 1e-10 ||
       max(abs(f1$run_values - f2$run_values)) <= 1e-12 * max(c(case$obj_scale, 0)))) {
    return(0)
  }
  if (!identical(f1$iterations, f2$iterations) && isTRUE(args1$tol > 0)) {
    args1$tol <- 0; args2$tol <- 0
    args1$max_iter <- args2$max_iter <- min(f1$iterations, f2$iterations, args1$max_iter)
    g1 <- prop_run(case, args1)$fit; g2 <- prop_run(case, args2)$fit
    if (!is.null(g1) && !is.null(g2)) d <- prop_rel_diff(prop_parts(fun, g1), prop_parts(fun, g2))
    if (d <= 1e-10) return(d)
  }
  if (d > 1e-10 && prop_squarem(case, args1)) {
    e <- prop_em_diff(case, args1, args2, function(g1, g2) prop_rel_diff(prop_parts(fun, g1), prop_parts(fun, g2)))
    if (!is.null(e)) return(e)
  }
  d
}

# Whether a case's fit is plsa's SQUAREM (the default for Tsallis and
# tempered KL). SQUAREM accepts an extrapolated step when the merit there is
# no larger than at the step's start; where the two are within rounding (at
# convergence, and along the flat directions of an over-parametrized model)
# two fits that differ by rounding (storage, scale, threads) decide
# differently, and their paths then part by the step, far more than
# rounding. Seen in a run of 1000 cases: plsa case 786 (threads 1 vs 2 agree
# to 2e-13 for 12 steps; at step 13 an extrapolation of 3e-9 whose merit
# ties the start's to 1e-17 is taken by one and not the other: 1.6e-8,
# 2.3e-9 at the end), cases 136, 542, 817 (converged, values equal to
# 4e-16: factors apart by 5e-8 to 1.6e-7, the resolution sqrt(eps) at which
# a minimum fixes its point), 290, 518, 620, 682, 998 (1e-8 to 2e-7), 784
# (k = 12 on 168 cells, unconverged after 100 steps: 1.3e-5), 955 and 987
# (another start wins). The same fits by the base rule (method = "em",
# whose steps are continuous maps of the model) agreed to 2e-11 or better in
# every one of them: they are then compared instead. This keeps every
# computation on the data (products, normalization, reductions: SQUAREM's
# merit and steps are EM's) under the check; what it leaves out is the
# accept test and the extrapolation, which act on the model alone.
prop_squarem <- function(case, args) {
  if (case$fun != "plsa") return(FALSE)
  m <- args$method
  if (!is.null(m)) return(identical(m, "squarem"))
  identical(args$loss, "tsallis") || (identical(args$loss, "kl") && isTRUE(args$tempering < 1))
}

# The difference (by `metric`) of the same two fits by EM, to a fixed
# number of steps (tol = 0); NULL when one fails.
prop_em_diff <- function(case, args1, args2, metric) {
  args1$method <- args2$method <- "em"
  args1$tol <- args2$tol <- 0
  g1 <- prop_run(case, args1)$fit; g2 <- prop_run(case, args2)$fit
  if (is.null(g1) || is.null(g2)) return(NULL)
  # starts that tie (plsa's values are scale-free; exact fits of
  # over-parametrized models end at rounding level, case 998) may be ranked
  # differently, as in the scale check
  if (!identical(g1$run, g2$run) && length(g1$run_values) == length(g2$run_values) &&
      all(is.finite(c(g1$run_values, g2$run_values))) &&
      max(abs(g1$run_values - g2$run_values)) <= 1e-8 * max(1, abs(g1$run_values))) return(0)
  metric(g1, g2)
}

# Whether the objective of an nmf case can exceed the double range: the
# divergence is of the order of sum(x^b) (b = 2 for Frobenius, 1 for KL, beta
# otherwise, at least 1 for this bound), plus penalties of the order of
# L1 sum(x).
prop_objective_overflows <- function(case, cc = 1) {
  d <- if (is.null(case$dense)) case$args[[1]] else case$dense
  x <- if (inherits(d, c("aspectr_tensor", "aspectr_symtensor"))) d$values else as.numeric(as.matrix(d))
  x <- x[x > 0] * cc
  a <- case$args
  b <- switch(case$fun,
    nmf = switch(a$loss, frobenius = 2, kl = 1, beta = max(a$beta, 1)),
    ntf = if (identical(a$loss, "kl")) 1 else 2,
    # sntf's cichocki_beta (0 KL, 1 Frobenius) has an objective of degree
    # cichocki_beta + 1 in the data (deg in R/family-sntf.R)
    sntf = max(2, if (is.numeric(a$cichocki_beta)) a$cichocki_beta + 1 else 2, if (is.numeric(a$alpha)) a$alpha else 2),
    2)
  # the objective in the data's units is of the order of sum(x^b) (over- or
  # underflowing with it), plus penalties of the order of L sum(x)
  tot <- sum(x^b)
  # (symnmf's default coupling is max(a))
  lam <- if (case$fun == "symnmf" && is.null(a$coupling)) max(x) else a$coupling
  !is.finite(tot) || tot < 1e-290 || !is.finite(max(c(a$L1, 0)) * sum(x)) ||
    !is.finite(max(c(a$L2, lam, 0)) * sum(x))
}

# prop_objective_overflows() judges by the size of the data alone; but an
# objective is the data's scale times a relative misfit, and a (nearly)
# exact fit of data near 1e-130 (symnmf of a 1 x 1 matrix) has an objective
# below the double range although sum(x^2) is not. Such an underflow is
# legitimate when the same problem on the data brought near 1 by a power of
# 2 (the fitters scale internally by powers of 2, so the computation is the
# same) has an objective v1 with v1 * 2^(p b) below the smallest subnormal
# double (b the degree of the objective in the data), or when that fit is
# exact to rounding (v1 <= 1e-12 sum(x1^b)): then the objective is rounding
# noise (symnmf case 136 ends at 2.4e-161 on data near 3, an equal fit at
# another scale at 3e-31), and 0 is as right as its rescaled value. Only for
# reported values of 0 and without penalty arguments, which do not scale
# along.
prop_objective_underflows <- function(case, fit) {
  a <- case$args
  if (is.null(fit) || !identical(fit$value, 0) || case$fun %in% c("plsa", "lca")) return(FALSE)
  if (any(vapply(c("L1", "L2", "coupling"), function(nm) !is.null(a[[nm]]) && any(a[[nm]] != 0), logical(1)))) return(FALSE)
  b <- switch(case$fun,
    nmf = switch(if (is.null(a$loss)) "frobenius" else a$loss, frobenius = 2, kl = 1,
                 beta = if (is.null(a$beta)) 2 else a$beta),
    ntf = if (identical(a$loss, "kl")) 1 else 2,
    sntf = switch(if (is.null(a$method)) "alpha" else a$method, alpha = 1, smart = 1,
                  beta = if (is.null(a$cichocki_beta)) 1 else a$cichocki_beta + 1, 2),
    2)
  if (is.null(b)) return(FALSE)
  d <- a[[1]]
  x <- if (inherits(d, c("aspectr_tensor", "aspectr_symtensor"))) d$values else as.numeric(as.matrix(d))
  p <- floor(log2(max(x)))
  a[[1]] <- prop_scaled(d, 2^-p)
  if (is.list(a$init)) a$init <- lapply(a$init, function(m) m * 2^(-p / 2))
  if (is.matrix(a$init)) return(FALSE)  # a symmetric start scales by the L-th root: not worth it here
  r <- prop_run(case, a)
  x1 <- x[x > 0] * 2^-p
  !is.null(r$fit) && is.finite(r$fit$value) && r$fit$value >= 0 &&
    (log2(r$fit$value) + p * b < -1074 || r$fit$value <= 1e-12 * sum(x1^b))
}

# The classed warning that an objective over- or underflows in the data's
# units (by design, when prop_objective_overflows()).
prop_overflow_warning <- function(w) grepl("in the units of the data", w, fixed = TRUE)

prop_svd_ties <- function(case) {
  a <- case$args
  if (is.list(a$init) || identical(a$init, "random")) return(FALSE)
  x <- as.matrix(if (is.null(case$dense)) a[[1]] else case$dense)
  x <- x / max(x)
  d <- svd(x, nu = 0, nv = 0)$d
  d <- d[seq_len(min(length(d), a$k + 1))]
  length(d) > 1 && min(abs(diff(d))) <= 1e-6 * d[1]
}

prop_scaled <- function(x, cc) {
  if (inherits(x, c("aspectr_symtensor", "aspectr_tensor"))) { x$values <- x$values * cc; return(x) }
  x * cc
}

prop_scale_text <- function(x) if (inherits(x, c("aspectr_symtensor", "aspectr_tensor"))) "x; x$values <- x$values * c" else "x * c"

# Runs n cases of a fitter, one expectation per case; logs failures to
# ASPECTR_PROPERTY_LOG when set.
prop_run_fitter <- function(fitter, n) {
  log <- Sys.getenv("ASPECTR_PROPERTY_LOG", "")
  for (i in seq_len(n)) {
    case <- prop_case(fitter, i)
    fails <- prop_check(case)
    if (nzchar(log) && length(fails)) {
      utils::write.table(data.frame(fitter = fitter, case = i, property = names(fails),
                                    message = gsub("\n.*", "", fails)),
                         log, append = file.exists(log), sep = ",", row.names = FALSE,
                         col.names = !file.exists(log), qmethod = "double")
    }
    testthat::expect(length(fails) == 0, paste0(
      sprintf("%s case %d (seed %d): %d propert%s failed\n", fitter, i, case$seed, length(fails),
              if (length(fails) == 1) "y" else "ies"),
      sprintf("  (all of them: prop_check(prop_case(\"%s\", %d)))\n", fitter, i),
      paste0("* ", names(fails), ": ", fails, collapse = "\n")))
  }
}

# --- the surfaces around a fit ----------------------------------------------
# Sharded fits (some shards without counts) equal to the in-memory fit of
# the same method; newdata matched by name (permuted names give the same
# prediction, a repeated name is a classed refusal); lca()'s formula with
# `data` named, and covariates near the edges of the doubles. Drawn from a
# seed of their own, so the draws of the cases above stay as they were.
prop_check_surfaces <- function(case) {
  out <- character()
  add <- function(prop, msg, code) {
    out[[length(out) + 1]] <<- paste0(msg, "\n  reproduce: prop_check_surfaces(prop_case(\"", case$fitter,
                                      "\", ", case$i, "))", if (!missing(code)) paste0("\n", code))
    names(out)[length(out)] <<- prop
  }
  prop_with_seed(case$seed + 50000L, {
    if (case$fun %in% c("plsa", "nmf", "ntf")) prop_surface_shards(case, add)
    if (case$fun %in% c("plsa", "nmf")) prop_surface_newdata(case, add)
    if (case$fun == "lca") prop_surface_lca(case, add)
  })
  out
}

prop_dense <- function(case) {
  for (x in list(case$args[[1]], case$dense)) if (is.array(x)) return(x)
  NULL
}

prop_surface_shards <- function(case, add) {
  a <- case$args
  if (case$fun == "plsa" && a$loss == "l2") return()
  if (case$fun == "nmf" && a$loss == "beta") return()
  if (case$fun == "ntf" && a$loss != "kl") return()
  # (an objective beyond the double range is Inf by design, and starts that
  # all reach it tie: which wins is not the property's)
  if (case$fun %in% c("nmf", "ntf") && prop_objective_overflows(case)) return()
  x <- prop_dense(case)
  if (is.null(x) || dim(x)[1] < 2) return()
  m <- dim(x)[1]
  s <- sample(2:min(4, m), 1)
  cuts <- sort(sample(seq_len(m - 1), s - 1))
  b <- c(0, cuts, m)
  rows <- lapply(seq_len(s), function(i) seq.int(b[i] + 1, b[i + 1]))
  # one shard without counts (half the cases), while the data keeps some
  if (stats::runif(1) < 0.5) {
    z <- sample.int(s, 1)
    y <- do.call(`[<-`, c(list(x, rows[[z]]), rep(list(TRUE), length(dim(x)) - 1), list(value = 0)))
    if (sum(y > 0) > 0) x <- y
  }
  # ANLS and ALS solve each subproblem exactly: with k above the rank of the
  # data (nmf case 915 with a shard of zeros: 6 non-zero rows, k = 7) the
  # subproblems are singular, their solutions not unique, and the in-memory
  # and sharded solvers may take different ones
  if (case$fun == "nmf" && isTRUE(a$method %in% c("anls", "als")) && length(dim(x)) == 2 &&
      a$k >= qr(x)$rank) return()
  take <- function(r) do.call(`[`, c(list(x, r), rep(list(TRUE), length(dim(x)) - 1), list(drop = FALSE)))
  parts <- lapply(rows, take)
  mem <- a
  mem[[1]] <- x
  mem$tol <- 0
  mem$max_iter <- min(a$max_iter, 30L)
  if (case$fun == "plsa") mem$method <- "em"
  if (case$fun == "ntf") mem$method <- "mu"
  if (case$fun == "nmf") {
    # (the same call: only the extrapolated KL updates need the data in
    # one object)
    if (identical(a$loss, "kl")) mem$accelerate <- FALSE
    if (!is.list(mem$init)) mem$init <- "random"
    mem$eps <- NULL
  }
  sh <- mem
  sh[[1]] <- shards(parts)
  if (case$fun == "ntf") sh$accelerate <- NULL
  r1 <- prop_run(case, mem)
  r2 <- prop_run(case, sh)
  code <- paste0("  shards of rows ", paste(vapply(rows, function(r) paste0(min(r), ":", max(r)), ""), collapse = ", "),
                 if (any(vapply(parts, function(p) all(p == 0), logical(1)))) " (one without counts)" else "")
  if (is.null(r1$fit)) return()  # what memory refuses is not this property's
  if (is.null(r2$fit)) return(add("shards", paste("sharded fit fails:", r2$error), code))
  d <- prop_same_fit(case, r1$fit, r2$fit, mem, sh)
  # an exact fit (objective at rounding level of the start's: nmf case 91,
  # rank 1 data near 1e111 with k = 5; nmf 848, one non-zero with k = 9;
  # nmf 915, 7 x 11 with k = 7; ntf case 53, 10 x 1 with k = 10) has many
  # factorizations: rounding (of another summation order) steers the
  # iterates to one or another, and starts whose values tie at that level
  # are ranked either way. Then the models must agree.
  f1 <- r1$fit; f2 <- r2$fit
  exact <- function(f) {
    scale <- max(abs(c(f$initial, f$objective, f$run_values)), na.rm = TRUE)
    is.finite(scale) && all(abs(f$run_values) <= 1e-10 * scale)
  }
  if (!(d <= 1e-8) && exact(f1) && exact(f2)) d <- prop_rel_diff(list(fitted(f1)), list(fitted(f2)))
  if (!(d <= 1e-8)) add("shards", sprintf("sharded fit differs from the in-memory fit by %g (relative)", d), code)
}

prop_surface_newdata <- function(case, add) {
  x <- prop_dense(case)
  if (is.null(x) || length(dim(x)) != 2 || ncol(x) < 2) return()
  a <- case$args
  dimnames(x) <- list(paste0("r", seq_len(nrow(x))), paste0("c", seq_len(ncol(x))))
  a[[1]] <- x
  a$max_iter <- min(a$max_iter, 5L)
  a$nrun <- 1L
  r <- prop_run(case, a)
  if (is.null(r$fit)) return()
  nd <- x[seq_len(min(3, nrow(x))), , drop = FALSE]
  perm <- sample.int(ncol(x))
  p1 <- tryCatch(predict(r$fit, nd), error = function(e) e)
  # (a prediction that fails or is not finite is not this property's: the
  # names are; nmf case 998, beta = -1 with L1 near 1e100 and eps = 0, folds
  # in to NaN)
  if (inherits(p1, "error") || !all(is.finite(p1))) return()
  p2 <- tryCatch(predict(r$fit, nd[, perm, drop = FALSE]), error = function(e) e)
  if (inherits(p2, "error")) return(add("newdata", paste("permuted names fail:", conditionMessage(p2))))
  d <- prop_rel_diff(list(p1), list(p2))
  if (!(d <= 1e-8)) add("newdata", sprintf("permuted column names change the prediction by %g", d))
  dup <- nd
  j <- sample.int(ncol(x), 2)
  colnames(dup)[j[2]] <- colnames(dup)[j[1]]
  e <- tryCatch(predict(r$fit, dup), error = function(e) e)
  if (!inherits(e, "aspectr_error_input_newdata")) {
    add("newdata", paste("a repeated column name is not refused:", if (inherits(e, "error")) conditionMessage(e) else "a prediction"))
  }
}

prop_surface_lca <- function(case, add) {
  a <- case$args
  df <- a$data
  vars <- names(df)
  f <- stats::as.formula(paste0("cbind(", paste(vars, collapse = ", "), ") ~ 1"))
  r1 <- prop_run(case, a)
  if (is.null(r1$fit)) return()
  named <- a
  named$data <- NULL
  named <- c(list(f), list(data = df), named)
  r2 <- prop_run(case, named)
  if (is.null(r2$fit)) return(add("formula", paste("lca(formula, data = ) fails:", r2$error)))
  if (!identical(r1$fit$llik, r2$fit$llik) || !identical(r1$fit$probs, r2$fit$probs)) {
    add("formula", "lca(formula, data = ) differs from lca(data)")
  }
  # a covariate near the edges of the doubles (k >= 2)
  if (a$k < 2) return()
  z <- stats::rnorm(nrow(df))
  e <- stats::runif(1, -300, 300)
  cov <- df
  cov$zz <- z * 10^e
  g <- stats::as.formula(paste0("cbind(", paste(vars, collapse = ", "), ") ~ zz"))
  b <- list(g, cov, k = a$k, nrun = 1L, seed = a$seed, max_iter = 200L, na.rm = a$na.rm)
  r3 <- prop_run(case, b)
  if (is.null(r3$fit)) {
    if (!grepl("aspectr_error", r3$error, fixed = TRUE) && !grepl("^\\[aspectr", r3$error)) {
      add("covariate", paste("unclassed error for a covariate near 1e", round(e), ":", r3$error))
    }
    return()
  }
  nums <- c(r3$fit$llik, r3$fit$coeff, unlist(r3$fit$se))
  if (!all(is.finite(r3$fit$llik)) || !all(is.finite(r3$fit$coeff))) {
    add("covariate", sprintf("covariate near 1e%d: not finite", round(e)))
    return()
  }
  cov$zz <- z
  r4 <- prop_run(case, list(g, cov, k = a$k, nrun = 1L, seed = a$seed, max_iter = 200L, na.rm = a$na.rm))
  # (compared when both converged: small data often separate the classes by
  # the covariate, the coefficients then grow without bound and where the
  # fit stops depends on rounding; lca cases 425 and 965)
  # and when the model is identified: more free parameters than the
  # response patterns' saturated model (lca case 965: 4 classes of 2 items,
  # 22 parameters for 8 cells) leave a ridge of equal likelihood, along
  # which rounding moves the stopping point
  identified <- !is.null(r4$fit) && r4$fit$npar <= prod(as.numeric(r4$fit$dims)) - 1
  if (identified && isTRUE(r3$fit$converged) && isTRUE(r4$fit$converged) &&
      abs(r4$fit$llik - r3$fit$llik) > 1e-6 * max(1, abs(r4$fit$llik))) {
    add("covariate", sprintf("covariate scaled by 1e%d changes the log-likelihood by %g", round(e),
                             r4$fit$llik - r3$fit$llik))
  }
}

# The value of expr and the messages it gave (muffled), in order
collect_messages <- function(expr) {
  msgs <- list()
  value <- withCallingHandlers(expr, message = function(c) {
    msgs[[length(msgs) + 1]] <<- c
    invokeRestart("muffleMessage")
  })
  list(value = value, messages = msgs)
}
