# Plain-R references of weighted NMF (nmf() with NA, mask, observed or
# weights) on tiny dense data: X with 0 in the cells of weight 0, Om the
# weights of every cell. Each iteration updates H given W, then W given H,
# column by column of H and row by row of W, with that column's (row's)
# own Gram matrix or linear term.

# one column's update given the fixed factor F (rows: the cells of the
# column), weights om, data x, current h
wref_frob_col <- function(F, om, x, h, method, l1 = 0, l2 = 0, eps = 0) {
  Q <- crossprod(F, om * F)
  a <- drop(crossprod(F, om * x))
  k <- length(h)
  if (method == "hals") {
    for (r in seq_len(k)) {
      s <- a[r] - l1 - sum(Q[r, -r] * h[-r])
      den <- Q[r, r] + l2
      h[r] <- if (den > 0) max(0, s / den) else if (s < 0) 0 else h[r]
    }
  } else if (method == "anls") {
    # exact NNLS by coordinate descent to convergence
    Ql <- Q + diag(l2, k)
    for (sweep in 1:5000) {
      old <- h
      for (r in seq_len(k)) {
        g <- sum(Ql[r, ] * h) - (a[r] - l1)
        h[r] <- max(0, h[r] - g / Ql[r, r])
      }
      if (max(abs(h - old)) <= 1e-14 * max(h, 1e-300)) break
    }
  } else if (method == "mu") {
    qf <- drop(Q %*% h)
    h <- h * pmax(a, eps) / (qf + l1 + l2 * h + eps)
  }
  h
}

# KL: one column by one sweep of coordinate Newton steps (one step per
# coordinate, halved until the bound guarantees a decrease), or by the
# multiplicative update; the linear term c = sum om F + l1
wref_kl_col <- function(F, om, x, h, method, l1 = 0, l2 = 0, eps = 0) {
  xt <- om * x
  cc <- drop(crossprod(F, om)) + l1
  k <- length(h)
  if (method == "mu") {
    v <- pmax(drop(F %*% h), 1e-300)
    num <- drop(crossprod(F, ifelse(xt > 0, xt / v, 0)))
    if (l2 == 0) return(num * h / (cc + eps))
    cnum <- num * h
    return(2 * cnum / (cc + sqrt(cc^2 + 4 * l2 * cnum) + eps))
  }
  floor_v <- function(v) pmax(v, 1e-150)
  v <- drop(F %*% h)
  for (r in seq_len(k)) {
    g <- F[, r]
    vf <- floor_v(v)
    grad <- cc[r] + l2 * h[r] - sum(g * xt / vf)
    hess <- l2 + sum(g^2 * xt / vf^2)
    nw <- if (hess > 0) max(0, h[r] - grad / hess) else if (grad > 0) 0 else h[r]
    d <- nw - h[r]
    if (d == 0 || !is.finite(d)) next
    v1 <- v + d * g
    hess1 <- l2 + sum(g^2 * xt / floor_v(v1)^2)
    if (d < 0 && !(grad * d + 0.5 * hess1 * d^2 <= 0)) {
      halvings <- 0
      repeat {
        halvings <- halvings + 1
        back <- if (halvings > 60) d else 0.5 * d
        v1 <- v1 - back * g
        d <- d - back
        hess1 <- l2 + sum(g^2 * xt / floor_v(v1)^2)
        if (d == 0 || grad * d + 0.5 * hess1 * d^2 <= 0) break
      }
      h[r] <- h[r] + d
    } else {
      h[r] <- nw
    }
    v <- v1
  }
  h
}

wref_objective <- function(X, Om, W, H, loss, L1 = c(0, 0), L2 = c(0, 0)) {
  V <- W %*% H
  data <- if (loss == "frobenius") 0.5 * sum(Om * (X - V)^2) else
    sum(ifelse(Om * X > 0, Om * X * log(X / V), 0) - Om * X + Om * V)
  data + L1[1] * sum(W) + L1[2] * sum(H) + L2[1] / 2 * sum(W^2) + L2[2] / 2 * sum(H^2)
}

# `iters` iterations from (W, H); returns W, H and the objective after each
wref_nmf <- function(X, Om, W, H, loss, method, iters, L1 = c(0, 0), L2 = c(0, 0), eps = 0) {
  X[Om == 0 | is.na(X)] <- 0
  col <- if (loss == "frobenius") wref_frob_col else wref_kl_col
  obj <- numeric(iters)
  for (it in seq_len(iters)) {
    for (j in seq_len(ncol(X))) H[, j] <- col(W, Om[, j], X[, j], H[, j], method, L1[2], L2[2], eps)
    for (i in seq_len(nrow(X))) W[i, ] <- col(t(H), Om[i, ], X[i, ], W[i, ], method, L1[1], L2[1], eps)
    if (loss == "kl" && method == "cd" && all(c(L1, L2) == 0)) {
      # the best scale of the model
      V <- sum(Om * (W %*% H)); Tt <- sum(Om * X)
      if (V > 0 && Tt > 0) H <- H * (Tt / V)
    }
    obj[it] <- wref_objective(X, Om, W, H, loss, L1, L2)
  }
  list(W = W, H = H, objective = obj)
}
