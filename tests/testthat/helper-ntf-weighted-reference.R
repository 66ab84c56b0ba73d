# Plain-R reference of weighted ntf() (NA, mask, observed, weights,
# mode_weights) on tiny dense arrays: X with anything in the cells of weight
# 0, Om the weights of every cell, A a list of d_n x k factors. Each
# iteration updates the modes in turn, every index of a mode by its own
# problem over the cells of that index (the row updates of
# helper-weighted-reference.R with the other modes' products in the rows
# of F); KL coordinate descent starts and ends each mode with the best
# scale,
# Frobenius balances the column norms across modes after each iteration.

# every cell's 1-based indices (column-major)
ntfref_cells <- function(dims) arrayInd(seq_len(prod(dims)), dims)

# the model at every cell
ntfref_model <- function(A, cells) {
  P <- 1
  for (n in seq_along(A)) P <- P * A[[n]][cells[, n], , drop = FALSE]
  rowSums(P)
}

ntfref_objective <- function(X, Om, A, cells, loss) {
  m <- ntfref_model(A, cells)
  x <- as.vector(X); om <- as.vector(Om)
  if (loss == "frobenius") return(0.5 * sum(om * (x - m)^2))
  sum(ifelse(om * x > 0, om * x * log(x / m), 0) - om * x + om * m)
}

ntfref_balance <- function(A) {
  k <- ncol(A[[1]])
  for (r in seq_len(k)) {
    nrm <- vapply(A, function(a) sqrt(sum(a[, r]^2)), numeric(1))
    if (any(!(nrm > 0))) next
    target <- exp(mean(log(nrm)))
    for (n in seq_along(A)) A[[n]][, r] <- A[[n]][, r] * target / nrm[n]
  }
  A
}

# `iters` iterations from A; returns A and the objective after each
ntfref_fit <- function(X, Om, A, loss, method, iters) {
  dims <- dim(Om)
  X <- array(as.vector(X), dims)
  X[Om == 0 | is.na(X)] <- 0
  cells <- ntfref_cells(dims)
  x <- as.vector(X); om <- as.vector(Om)
  N <- length(dims)
  obj <- numeric(iters)
  for (it in seq_len(iters)) {
    for (n in seq_len(N)) {
      Z <- 1
      for (m in seq_len(N)[-n]) Z <- Z * A[[m]][cells[, m], , drop = FALSE]
      if (loss == "kl" && method == "cd") {
        # from the best scale of the model
        V <- sum(om * ntfref_model(A, cells)); Tt <- sum(om * x)
        if (V > 0 && Tt > 0) A[[n]] <- A[[n]] * (Tt / V)
        Z <- 1
        for (m in seq_len(N)[-n]) Z <- Z * A[[m]][cells[, m], , drop = FALSE]
      }
      for (i in seq_len(dims[n])) {
        sel <- cells[, n] == i
        F <- Z[sel, , drop = FALSE]
        A[[n]][i, ] <- if (loss == "frobenius") wref_frob_col(F, om[sel], x[sel], A[[n]][i, ], method, eps = 1e-16) else
          wref_kl_col(F, om[sel], x[sel], A[[n]][i, ], method)
      }
      if (loss == "kl" && method == "cd") {
        V <- sum(om * ntfref_model(A, cells)); Tt <- sum(om * x)
        if (V > 0 && Tt > 0) A[[n]] <- A[[n]] * (Tt / V)
      }
    }
    if (loss == "frobenius") A <- ntfref_balance(A)
    obj[it] <- ntfref_objective(X, Om, A, cells, loss)
  }
  list(A = A, objective = obj, model = array(ntfref_model(A, cells), dims))
}

# A fit's model at every cell, as an array
ntf_model_array <- function(fit) {
  dims <- fit$dims
  array(ntfref_model(lapply(seq_along(fit$factors), function(n) {
    f <- unname(fit$factors[[n]])
    if (n == 1) f <- sweep(f, 2, fit$weights, "*")
    f
  }), ntfref_cells(dims)), dims)
}
