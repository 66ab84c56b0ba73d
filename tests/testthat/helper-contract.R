# The families under the fit contract: one entry each, so a new family is
# tested by adding one line. `fit(...)` fits small data (extra arguments go
# to the fitter), `data` is what was fitted, `newdata` what predict() takes,
# `likelihood` whether logLik() applies, `augment_data` whether augment()
# needs the fitted data (the clustering families augment their points),
# `rebuild(fit)` the model rebuilt
# from the core fields (factors and weights) in the shape of fitted().
contract_data <- function() {
  set.seed(42)
  x <- matrix(rpois(12 * 9, 3), 12, 9, dimnames = list(paste0("d", 1:12), paste0("w", 1:9)))
  y <- array(rpois(5 * 4 * 3, 3), c(5, 4, 3))
  G <- cbind(c(runif(5), rep(0, 4)), c(rep(0, 4), runif(5)))
  A <- tcrossprod(G) + 0.01
  Y <- as_symtensor(outer(outer(G[, 1], G[, 1]), G[, 1]) + outer(outer(G[, 2], G[, 2]), G[, 2]))
  lc <- data.frame(a = sample(c("x", "y", "z"), 60, TRUE), b = sample(c("p", "q"), 60, TRUE),
                   c = sample(c("u", "v", "w"), 60, TRUE))
  list(x = x, y = y, A = A, Y = Y, lc = lc)
}
cd <- contract_data()

# calls f with the defaults, overridden by the arguments given
with_defaults <- function(f, defaults, ...) {
  args <- list(...)
  # a `k` given replaces the defaults' positional one (the second: with
  # both, the positional 2 went to the next argument, e.g. nmf()'s beta)
  if ("k" %in% names(args) && (is.null(names(defaults)) || names(defaults)[2] == "")) defaults <- defaults[-2]
  do.call(f, utils::modifyList(defaults, args))
}

outer_model <- function(factors, weights) {
  m <- 0
  for (r in seq_along(weights)) {
    m <- m + weights[r] * Reduce(outer, lapply(factors, function(f) f[, r]))
  }
  m
}

contract_families <- list(
  plsa = list(fit = function(...) with_defaults(plsa, list(cd$x, 2, seed = 1, max_iter = 50), ...), data = cd$x,
              newdata = cd$x[1:3, ], likelihood = TRUE, frobenius = FALSE, augment_data = TRUE,
              rebuild = function(f) f$total * outer_model(f$factors, f$weights)),
  nmf = list(fit = function(...) with_defaults(nmf, list(cd$x, 2, loss = "kl", seed = 1, max_iter = 50), ...), data = cd$x,
             newdata = cd$x[1:3, ], likelihood = TRUE, frobenius = FALSE, augment_data = TRUE,
             rebuild = function(f) f$factors$W %*% t(f$factors$H)),
  ntf = list(fit = function(...) with_defaults(ntf, list(cd$y, 2, seed = 1, max_iter = 50), ...), data = cd$y,
             newdata = cd$y[1:2, , , drop = FALSE], likelihood = FALSE, frobenius = TRUE,
             augment_data = TRUE,
             rebuild = function(f) outer_model(f$factors, f$weights)),
  lca = list(fit = function(...) with_defaults(lca, list(cd$lc, 2, seed = 1, nrun = 2, max_iter = 50), ...), data = cd$lc,
             newdata = cd$lc[1:5, ], likelihood = TRUE, frobenius = FALSE, augment_data = FALSE,
             rebuild = NULL),
  symnmf = list(fit = function(...) with_defaults(symnmf, list(cd$A, 2, seed = 1, max_iter = 50), ...), data = cd$A,
                newdata = NULL, likelihood = FALSE, frobenius = TRUE, augment_data = FALSE,
                rebuild = function(f) tcrossprod(f$factors$H)),
  sntf = list(fit = function(...) with_defaults(sntf, list(cd$Y, 2, seed = 1, max_iter = 50), ...), data = cd$Y,
              newdata = NULL, likelihood = FALSE, frobenius = FALSE, augment_data = FALSE,
              rebuild = function(f) outer_model(rep(list(f$factors$G), 3), rep(1, f$k)))
)
