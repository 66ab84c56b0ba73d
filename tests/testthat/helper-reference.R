# Plain-R reference implementations on dense matrices, written from the
# the papers' formulas (not from the C++ code), for tiny problems.

ref_start <- function(x, k, seed) {
  # the starting point plsa(x, k, seed = seed, nrun = 1) draws
  set.seed(seed)
  aspectr:::random_start(dim(x), k)
}

# Model joint distribution U diag(lambda) V'.
ref_model <- function(lambda, U, V) U %*% (lambda * t(V))

# EM / tempered EM (Hofmann 1999): posteriors W^r_ij propto
# (lambda_r U_ir V_jr)^beta, M-step from sum_ij G_ij W^r_ij.
ref_em <- function(x, init, iters, beta = 1) {
  G <- x / sum(x)
  lambda <- init$lambda; U <- init$factors[[1]]; V <- init$factors[[2]]
  k <- length(lambda)
  for (it in seq_len(iters)) {
    P <- lapply(seq_len(k), function(r) (lambda[r] * outer(U[, r], V[, r]))^beta)
    S <- Reduce(`+`, P)
    Y <- lapply(P, function(p) ifelse(G > 0, G * p / S, 0))
    lambda <- vapply(Y, sum, 0)
    U <- sapply(Y, rowSums) / rep(lambda, each = nrow(x))
    V <- sapply(Y, colSums) / rep(lambda, each = ncol(x))
    lambda <- lambda / sum(lambda)
  }
  list(lambda = lambda, U = U, V = V)
}

# q-EM, Hazan, Haroon and Shashua section 3.2, steps (a)-(c) literally: W by Bayes rule,
# lambda from (W G)^q (u v)^(1-q), u from H^q v^(1-q), v from H^q u_new^(1-q).
ref_qem <- function(x, init, iters, q) {
  G <- x / sum(x)
  lambda <- init$lambda; U <- init$factors[[1]]; V <- init$factors[[2]]
  k <- length(lambda)
  for (it in seq_len(iters)) {
    P <- lapply(seq_len(k), function(r) lambda[r] * outer(U[, r], V[, r]))
    S <- Reduce(`+`, P)
    W <- lapply(P, function(p) p / S)
    lam <- vapply(seq_len(k), function(r) {
      sum((W[[r]] * G)^q * outer(U[, r], V[, r])^(1 - q))^(1 / q)
    }, 0)
    lambda_new <- lam / sum(lam)
    for (r in seq_len(k)) {
      H <- W[[r]] * G / lambda_new[r]
      u <- rowSums(H^q * matrix(V[, r]^(1 - q), nrow(x), ncol(x), byrow = TRUE))^(1 / q)
      U[, r] <- u / sum(u)
      v <- colSums(H^q * matrix(U[, r]^(1 - q), nrow(x), ncol(x)))^(1 / q)
      V[, r] <- v / sum(v)
    }
    lambda <- lambda_new
  }
  list(lambda = lambda, U = U, V = V)
}

# Euclidean projection onto the probability simplex by Hazan and Shashua's
# Algorithm 1 (successive projections), with the affine step 1/|I|.
ref_pps_algorithm1 <- function(b, step = c("active", "d")) {
  step <- match.arg(step)
  d <- length(b)
  x <- b
  I <- seq_len(d)
  for (t in seq_len(d)) {
    denom <- if (step == "active") length(I) else d
    x[I] <- x[I] + (1 - sum(x[I])) / denom
    if (all(x[I] > 0)) break
    x[setdiff(seq_len(d), I)] <- 0
    I <- I[x[I] > 0]
    x[setdiff(seq_len(d), I)] <- 0
  }
  x
}

# The simplex QP min ||A x - b||^2, x >= 0, sum x = 1 by quadprog.
ref_simplex_ls <- function(A, b, ridge = 1e-12) {
  k <- ncol(A)
  D <- crossprod(A) + diag(ridge * max(1, max(abs(crossprod(A)))), k)
  sol <- quadprog::solve.QP(Dmat = D, dvec = drop(crossprod(A, b)),
                            Amat = cbind(rep(1, k), diag(k)), bvec = c(1, rep(0, k)),
                            meq = 1)
  pmax(sol$solution, 0) / sum(pmax(sol$solution, 0))
}

ref_project <- function(b) ref_simplex_ls(diag(length(b)), b, ridge = 0)

# pNMF (Hazan and Shashua 2007): U columns then V columns by PPS of
# G^r v / (lambda_r ||v||^2), then lambda by the simplex least squares.
ref_pnmf <- function(x, init, iters) {
  G <- x / sum(x)
  lambda <- init$lambda; U <- init$factors[[1]]; V <- init$factors[[2]]
  k <- length(lambda)
  resid_r <- function(r) G - U[, -r, drop = FALSE] %*% (lambda[-r] * t(V[, -r, drop = FALSE]))
  for (it in seq_len(iters)) {
    for (r in seq_len(k)) {
      if (lambda[r] <= 0) next
      b <- drop(resid_r(r) %*% V[, r]) / (lambda[r] * sum(V[, r]^2))
      U[, r] <- ref_project(b)
    }
    for (r in seq_len(k)) {
      if (lambda[r] <= 0) next
      b <- drop(crossprod(resid_r(r), U[, r])) / (lambda[r] * sum(U[, r]^2))
      V[, r] <- ref_project(b)
    }
    A <- sapply(seq_len(k), function(r) as.vector(outer(U[, r], V[, r])))
    lambda <- ref_simplex_ls(A, as.vector(G))
  }
  list(lambda = lambda, U = U, V = V)
}

tsallis_div <- function(G, P, q) (1 - sum(G[G > 0]^q * P[G > 0]^(1 - q))) / (1 - q)

tiny_counts <- function(seed = 1, m = 12, n = 9, k = 3) {
  set.seed(seed)
  U <- matrix(rexp(m * k), m, k); V <- matrix(rexp(n * k), n, k)
  x <- matrix(rpois(m * n, 3 * (U %*% t(V))), m, n)
  x[x < 2] <- 0
  dimnames(x) <- list(paste0("d", seq_len(m)), paste0("w", seq_len(n)))
  x
}

# EM for the KL CP model of a dense N-way array (Huang and Sidiropoulos);
# tempered EM (beta < 1) with posteriors propto (lambda_r prod_n U_n)^beta.
ref_tensor_em <- function(x, init, iters, beta = 1) {
  G <- x / sum(x)
  lambda <- init$lambda; U <- init$factors
  N <- length(dim(x)); k <- length(lambda)
  comp <- function(r) lambda[r] * Reduce(outer, lapply(U, function(u) u[, r]))
  for (it in seq_len(iters)) {
    P <- lapply(seq_len(k), function(r) comp(r)^beta)
    S <- Reduce(`+`, P)
    Y <- lapply(P, function(p) ifelse(G > 0, G * p / S, 0))
    lambda <- vapply(Y, sum, 0)
    U <- lapply(seq_len(N), function(n) sapply(Y, function(y) apply(y, n, sum)) /
                  rep(lambda, each = dim(x)[n]))
  }
  list(lambda = lambda, U = U, model = Reduce(`+`, lapply(seq_len(k), comp)))
}

# q-EM of a dense N-way array: ref_qem()'s steps (Hazan, Haroon and Shashua,
# section 3.2) with the product over the other modes in place of the other
# matrix factor: W by Bayes rule, lambda from (W G)^q (prod_n u_n)^(1-q),
# then mode after mode u_n from H^q prod_{m != n} u_m^(1-q) (the modes
# before n already new), H = W G / lambda_new.
ref_tensor_qem <- function(x, init, iters, q) {
  G <- x / sum(x)
  lambda <- init$lambda; U <- init$factors
  N <- length(dim(x)); k <- length(lambda)
  produ <- function(F, r) Reduce(outer, lapply(F, function(u) u[, r]))
  for (it in seq_len(iters)) {
    P <- lapply(seq_len(k), function(r) lambda[r] * produ(U, r))
    S <- Reduce(`+`, P)
    W <- lapply(P, function(p) p / S)
    lam <- vapply(seq_len(k), function(r) sum((W[[r]] * G)^q * produ(U, r)^(1 - q))^(1 / q), 0)
    lambda_new <- lam / sum(lam)
    for (r in seq_len(k)) {
      H <- W[[r]] * G / lambda_new[r]
      for (n in seq_len(N)) {
        others <- lapply(seq_len(N), function(m) if (m == n) rep(1, dim(x)[m]) else U[[m]][, r]^(1 - q))
        u <- apply(H^q * Reduce(outer, others), n, sum)^(1 / q)
        U[[n]][, r] <- u / sum(u)
      }
    }
    lambda <- lambda_new
  }
  list(lambda = lambda, U = U, model = Reduce(`+`, lapply(seq_len(k), function(r) lambda[r] * produ(U, r))))
}

# SQUAREM (ref_squarem_loop()) of tensor EM, tempered EM or q-EM, with the
# safeguard on the function the base step decreases.
ref_tensor_squarem <- function(x, init, iters, beta = 1, q = NULL) {
  G <- x / sum(x)
  pos <- G > 0
  k <- length(init$lambda)
  fstep <- function(th) {
    r <- if (is.null(q)) ref_tensor_em(x, th, 1, beta = beta) else ref_tensor_qem(x, th, 1, q = q)
    list(lambda = r$lambda, factors = r$U)
  }
  model <- function(th, b = 1) Reduce(`+`, lapply(seq_len(k), function(r)
    (th$lambda[r] * Reduce(outer, lapply(th$factors, function(u) u[, r])))^b))
  merit <- function(th) {
    if (!is.null(q)) return(tsallis_div(G, model(th), q))
    -sum(G[pos] * log(model(th, beta)[pos])) / beta
  }
  extrapolate <- function(th, t1, t2, ext) {
    lam <- ext(th$lambda, t1$lambda, t2$lambda)
    F <- lapply(seq_along(th$factors), function(n) {
      u <- ext(th$factors[[n]], t1$factors[[n]], t2$factors[[n]])
      sweep(u, 2, colSums(u), "/")
    })
    list(lambda = lam / sum(lam), factors = F)
  }
  th <- ref_squarem_loop(init[c("lambda", "factors")], iters, fstep, function(th) c(th$lambda, unlist(th$factors)),
                         extrapolate, function(tx, th) merit(tx) <= merit(th))
  list(lambda = th$lambda, U = th$factors, model = model(th))
}

# EM for latent classes with responses missing at random (left out of the
# likelihood): codes is n x J with NA, probs[[j]] is levels x k.
ref_lca_em <- function(codes, lambda, probs, iters) {
  n <- nrow(codes); J <- ncol(codes); k <- length(lambda)
  post_fun <- function() {
    p <- matrix(lambda, n, k, byrow = TRUE)
    for (j in seq_len(J)) {
      ok <- !is.na(codes[, j])
      p[ok, ] <- p[ok, ] * probs[[j]][codes[ok, j], , drop = FALSE]
    }
    p
  }
  for (it in seq_len(iters)) {
    p <- post_fun()
    post <- p / rowSums(p)
    lambda <- colMeans(post)
    probs <- lapply(seq_len(J), function(j) {
      ok <- !is.na(codes[, j])
      m <- sapply(seq_len(k), function(z) tapply(post[ok, z], factor(codes[ok, j], levels = seq_len(nrow(probs[[j]]))), sum))
      m[is.na(m)] <- 0
      sweep(m, 2, colSums(m), "/")
    })
  }
  p <- post_fun()
  list(lambda = lambda, probs = probs, llik = sum(log(rowSums(p))))
}

# SQUAREM (as ref_squarem) over ref_lca_em's steps; the merit is minus the
# log-likelihood (missing responses left out).
ref_lca_squarem <- function(codes, lambda, probs, iters) {
  extrapolate <- function(th, t1, t2, ext) {
    lam <- ext(th$lambda, t1$lambda, t2$lambda)
    pr <- lapply(seq_along(th$probs), function(j) {
      m <- ext(th$probs[[j]], t1$probs[[j]], t2$probs[[j]])
      sweep(m, 2, colSums(m), "/")
    })
    tx <- ref_lca_em(codes, lam / sum(lam), pr, 0)
    tx$lambda <- lam / sum(lam)
    tx$probs <- pr
    tx
  }
  th <- list(lambda = lambda, probs = probs, llik = ref_lca_em(codes, lambda, probs, 0)$llik)
  ref_squarem_loop(th, iters, function(th) ref_lca_em(codes, th$lambda, th$probs, 1),
                   function(th) c(th$lambda, unlist(th$probs)), extrapolate,
                   function(tx, th) tx$llik >= th$llik)
}

# Mean cosine between matched columns of A and B, maximized over the
# column permutations (factors are identified up to order and scale).
congruence <- function(A, B) {
  k <- ncol(A)
  perms <- function(v) if (length(v) <= 1) list(v) else
    do.call(c, lapply(seq_along(v), function(i) lapply(perms(v[-i]), function(p) c(v[i], p))))
  cosm <- crossprod(A, B) / outer(sqrt(colSums(A^2)), sqrt(colSums(B^2)))
  max(vapply(perms(seq_len(k)), function(p) mean(cosm[cbind(seq_len(k), p)]), 0))
}

# HALS sweeps of the rows of F (d x k) for min 1/2 ||A' ... ||: column r of F
# is the exact minimizer max(0, (A_r - F_{-r} B_{-r,r}) / B_rr) with the
# others fixed; up to max_s sweeps, stopping once a sweep moves F by less
# than 1/10 of the first sweep (Gillis & Glineur 2012).
ref_hals_sweeps <- function(F, A, B, max_s) {
  for (s in seq_len(max_s)) {
    F0 <- F
    for (r in seq_len(ncol(F))) {
      if (B[r, r] > 0) F[, r] <- pmax(0, (A[, r] - F[, -r, drop = FALSE] %*% B[-r, r]) / B[r, r])
    }
    ch <- sum((F - F0)^2)
    if (s == 1) first <- ch else if (ch <= 0.01 * first) break
  }
  F
}

# Extrapolated HALS (Ang & Gillis 2019), H first: H given the extrapolated
# Wy = W + beta (W - W_prev), then Hy = Hn + beta (Hn - H), W given Hy
# (warm starts at the extrapolated points, projected onto W, H >= 0); the
# pair (Wn, Hn) is kept when its objective is lower (then beta grows by
# gamma up to bbar, bbar by gbar up to 1), otherwise the iterate stays and
# the next step starts from it without extrapolation (bbar = beta,
# beta = beta / eta). Returns the iterate (unit-norm columns of W), the
# objective after every iteration and the number of rejected steps.
# The HER acceptance rule (Ang & Gillis): keep the candidate pair when it
# lowers the objective and grow beta, else restart from the last iterate
# and shrink beta. `st` holds W, H, Wprev, Hy, f, beta, bbar, rejected.
her_accept <- function(st, Wn, Hn, fn, eta, gamma, gbar) {
  if (fn < st$f) {
    st$Wprev <- st$W; st$W <- Wn; st$H <- Hn; st$f <- fn
    st$beta <- min(st$bbar, gamma * st$beta); st$bbar <- min(1, gbar * st$bbar)
  } else {
    st$Wprev <- st$W; st$Hy <- st$H
    st$bbar <- st$beta; st$beta <- st$beta / eta
    st$rejected <- st$rejected + 1
  }
  st
}

# The projection of an extrapolated factor Y onto Y >= 0, except that a
# component (column of W, margin 2; row of H, margin 1) whose projection keeps
# less than half the norm of its base is the base's.
ref_her_project <- function(Y, base, margin) {
  P <- pmax(Y, 0)
  short <- apply(P^2, margin, sum) < 0.25 * apply(base^2, margin, sum)
  if (margin == 2) P[, short] <- base[, short] else P[short, ] <- base[short, ]
  P
}

ref_her <- function(X, W0, H0, iters, beta0 = 0.5, eta = 1.5, gamma = 1.01, gbar = 1.005) {
  m <- nrow(X); n <- ncol(X); k <- ncol(W0); nnz <- sum(X != 0)
  max_s <- function(cost, d) min(25, 1 + floor(0.5 * cost / (d * k^2)))
  obj <- function(W, H) 0.5 * sum((X - W %*% H)^2)
  W <- W0; H <- H0; Wprev <- W0; Hy <- H0
  beta <- beta0; bbar <- 1; f <- obj(W, H); trace <- numeric(0); rejected <- 0
  for (it in seq_len(iters)) {
    Wy <- ref_her_project(W + beta * (W - Wprev), W, 2)
    Hn <- t(ref_hals_sweeps(t(Hy), t(X) %*% Wy, crossprod(Wy), max_s(nnz * k + m * k^2, n)))
    Hy <- ref_her_project(Hn + beta * (Hn - H), Hn, 1)
    Wn <- ref_hals_sweeps(Wy, X %*% t(Hy), tcrossprod(Hy), max_s(nnz * k + n * k^2, m))
    st <- her_accept(list(W = W, H = H, Wprev = Wprev, Hy = Hy, f = f, beta = beta, bbar = bbar,
                          rejected = rejected), Wn, Hn, obj(Wn, Hn), eta, gamma, gbar)
    W <- st$W; H <- st$H; Wprev <- st$Wprev; Hy <- st$Hy; f <- st$f
    beta <- st$beta; bbar <- st$bbar; rejected <- st$rejected
    trace <- c(trace, f)
  }
  s <- sqrt(colSums(W^2)); s[s == 0] <- 1
  list(W = sweep(W, 2, s, "/"), H = H * s, objective = trace, rejected = rejected)
}

# Extrapolated KL multiplicative updates (HER as in ref_her, with the KL
# multiplicative update as the block step): H from the last extrapolated H
# given Wy, W from Wy given Hy; the extrapolated points are clipped below at
# 1e-10 times the largest entry of the iterate they come from. Returns the iterate (W, H), the
# generalized-KL objective after every iteration and the rejected steps.
ref_kl_her <- function(X, W0, H0, iters, eps = 1e-16, beta0 = 0.5, eta = 1.5, gamma = 1.01,
                       gbar = 1.005) {
  nz <- X != 0
  obj <- function(W, H) {
    V <- W %*% H
    sum(X[nz] * log(X[nz] / V[nz])) - sum(X) + sum(V)
  }
  ratio <- function(W, H) { R <- matrix(0, nrow(X), ncol(X)); R[nz] <- X[nz] / (W %*% H)[nz]; R }
  clip <- function(F, ref) pmax(F, 1e-10 * max(ref, 0))
  W <- W0; H <- H0; Wprev <- W0; Hy <- H0
  beta <- beta0; bbar <- 1; f <- obj(W, H); trace <- numeric(0); rejected <- 0
  for (it in seq_len(iters)) {
    Wy <- clip(W + beta * (W - Wprev), W)
    Hn <- Hy * crossprod(Wy, ratio(Wy, Hy)) / (colSums(Wy) + eps)
    Hy <- clip(Hn + beta * (Hn - H), Hn)
    Wn <- Wy * tcrossprod(ratio(Wy, Hy), Hy) / rep(rowSums(Hy) + eps, each = nrow(X))
    st <- her_accept(list(W = W, H = H, Wprev = Wprev, Hy = Hy, f = f, beta = beta, bbar = bbar,
                          rejected = rejected), Wn, Hn, obj(Wn, Hn), eta, gamma, gbar)
    W <- st$W; H <- st$H; Wprev <- st$Wprev; Hy <- st$Hy; f <- st$f
    beta <- st$beta; bbar <- st$bbar; rejected <- st$rejected
    trace <- c(trace, f)
  }
  list(W = W, H = H, objective = trace, rejected = rejected)
}

# KL coordinate descent as in nmf(method = "cd") (Hsieh & Dhillon 2011):
# every column of H, then every row of W, coordinates in order, one
# projected Newton step each, halved while the third-derivative bound
# grad d + hess(h + d) d^2 / 2 does not guarantee a decrease; without
# penalties H is then scaled to make sum(WH) = sum(X). `halved`
# counts the halvings (tests make sure the branch is exercised).
ref_cd_solve <- function(x, G, h, cc, l2, env) {
  G <- G[x > 0, , drop = FALSE]; x <- x[x > 0]  # zeros add nothing but sum(v)
  for (r in seq_along(h)) {
    v <- drop(G %*% h); g <- G[, r]
    grad <- cc[r] + l2 * h[r] - sum(g * x / v)
    hess <- l2 + sum(g^2 * x / v^2)
    nw <- if (hess > 0) max(0, h[r] - grad / hess) else if (grad > 0) 0 else h[r]
    d <- nw - h[r]
    if (d < 0) repeat {
      hess1 <- l2 + sum(g^2 * x / (v + d * g)^2)
      if (grad * d + 0.5 * hess1 * d^2 <= 0) break
      d <- d / 2; env$halved <- env$halved + 1
    }
    h[r] <- h[r] + d
  }
  h
}
ref_kl_cd <- function(X, W0, H0, iters, l1 = c(0, 0), l2 = c(0, 0)) {
  env <- new.env(); env$halved <- 0
  W <- W0; H <- H0; objective <- numeric(0); nz <- X > 0
  for (it in seq_len(iters)) {
    cw <- colSums(W) + l1[2]
    for (j in seq_len(ncol(X))) H[, j] <- ref_cd_solve(X[, j], W, H[, j], cw, l2[2], env)
    ch <- rowSums(H) + l1[1]
    for (i in seq_len(nrow(X))) W[i, ] <- ref_cd_solve(X[i, ], t(H), W[i, ], ch, l2[1], env)
    if (all(c(l1, l2) == 0)) H <- H * sum(X) / sum(W %*% H)  # the best scale
    V <- W %*% H
    objective <- c(objective, sum(X[nz] * log(X[nz] / V[nz])) - sum(X) + sum(V) + l1[1] * sum(W) +
                     l1[2] * sum(H) + l2[1] / 2 * sum(W^2) + l2[2] / 2 * sum(H^2))
  }
  list(W = W, H = H, objective = objective, halved = env$halved)
}

# The KL aspect model by coordinate descent over the modes (plsa(method =
# "cd")), for a dense matrix or N-way array of counts: mode n's factor
# takes the weights and the total, A = sum(x) U_n diag(lambda); every index
# i of mode n solves its row problem min_h sum(h) - sum_s x_s log(G_s h)
# over the non-zero cells s of slice i (G_s: the product of the other
# modes' columns at s) by ref_cd_solve(); A is then split back into
# weights (column masses) and columns on the simplex. The objective is
# D(G || P) after every iteration.
ref_plsa_cd <- function(x, init, iters) {
  env <- new.env(); env$halved <- 0
  x <- as.array(x); d <- dim(x); N <- length(d)
  lambda <- init$lambda; U <- init$factors; k <- length(lambda)
  cells <- which(x > 0, arr.ind = TRUE); vals <- x[cells]
  model <- function() Reduce(`+`, lapply(seq_len(k), function(r) lambda[r] * Reduce(outer, lapply(U, function(u) u[, r]))))
  objective <- numeric(0)
  for (it in seq_len(iters)) {
    for (n in seq_len(N)) {
      A <- sum(x) * U[[n]] * rep(lambda, each = d[n])
      for (i in seq_len(d[n])) {
        s <- which(cells[, n] == i)
        G <- matrix(1, length(s), k)
        for (m in setdiff(seq_len(N), n)) G <- G * U[[m]][cells[s, m], , drop = FALSE]
        A[i, ] <- ref_cd_solve(vals[s], G, A[i, ], rep(1, k), 0, env)
      }
      mass <- colSums(A)
      for (r in which(mass > 0)) U[[n]][, r] <- A[, r] / mass[r]
      lambda <- mass / sum(mass)
    }
    P <- model(); g <- x / sum(x)
    objective <- c(objective, sum(g[g > 0] * log(g[g > 0] / P[g > 0])))
  }
  list(lambda = lambda, U = U, model = model(), objective = objective, halved = env$halved)
}

# SQUAREM (Varadhan and Roland 2008, scheme S3 with the adaptive bound on
# the step) around one step of EM, tempered EM (ref_em) or q-EM (ref_qem),
# with the monotone safeguard on the function that step decreases (KL, the
# tempered free energy, D_q); entries of the extrapolated point are kept at
# least 1/10 of the second EM iterate's, and every distribution renormalized.
ref_squarem <- function(x, init, iters, beta = 1, q = NULL) {
  G <- x / sum(x)
  pos <- G > 0
  fstep <- function(th) {
    i <- list(lambda = th$lambda, factors = list(th$U, th$V))
    if (is.null(q)) ref_em(x, i, 1, beta = beta) else ref_qem(x, i, 1, q = q)
  }
  merit <- function(th) {
    if (!is.null(q)) return(tsallis_div(G, ref_model(th$lambda, th$U, th$V), q))
    S <- Reduce(`+`, lapply(seq_along(th$lambda), function(r) (th$lambda[r] * outer(th$U[, r], th$V[, r]))^beta))
    -sum(G[pos] * log(S[pos])) / beta
  }
  extrapolate <- function(th, t1, t2, ext) {
    lam <- ext(th$lambda, t1$lambda, t2$lambda)
    U <- ext(th$U, t1$U, t2$U); V <- ext(th$V, t1$V, t2$V)
    list(lambda = lam / sum(lam), U = sweep(U, 2, colSums(U), "/"), V = sweep(V, 2, colSums(V), "/"))
  }
  ref_squarem_loop(list(lambda = init$lambda, U = init$factors[[1]], V = init$factors[[2]]), iters,
                   fstep, function(th) c(th$lambda, th$U, th$V), extrapolate,
                   function(tx, th) merit(tx) <= merit(th))
}

# The SQUAREM iterations shared by the references: fstep() is one base step,
# flat() the parameters as one vector, extrapolate() the renormalized
# extrapolation (from ext(), which floors entries at 1/10 of theta2's) and
# better() the safeguard (the candidate no worse than theta0).
ref_squarem_loop <- function(th, iters, fstep, flat, extrapolate, better) {
  smax <- 1
  for (it in seq_len(iters)) {
    t1 <- fstep(th); t2 <- fstep(t1)
    r <- flat(t1) - flat(th); v <- flat(t2) - 2 * flat(t1) + flat(th)
    a <- min(sqrt(sum(r^2) / sum(v^2)), smax)
    longest <- a == smax
    if (!(a > 1 + 1e-3)) {
      if (longest) smax <- 4 * smax
      th <- t2
      next
    }
    ext <- function(p0, p1, p2) pmax(p0 + 2 * a * (p1 - p0) + a^2 * (p2 - 2 * p1 + p0), 0.1 * p2)
    tx <- extrapolate(th, t1, t2, ext)
    accept <- better(tx, th)
    th <- if (accept) fstep(tx) else t2
    if (longest) smax <- if (accept) 4 * smax else max(1, smax / 4)
  }
  th
}

# lca()'s data preparation in plain R (the package's earlier R code): codes
# by variable, kept rows, distinct patterns (first seen), their counts, the
# index matrix ordered by the first variable's code (stable).
ref_lca_prepare <- function(data, na.rm) {
  vars <- names(data)
  f <- lapply(data, function(v) {
    if (is.factor(v)) return(droplevels(v))
    if (is.numeric(v)) {
      u <- sort(unique(v[!is.na(v)]))
      return(structure(match(v, u), levels = as.character(u), class = "factor"))
    }
    factor(v)
  })
  nl <- vapply(f, nlevels, integer(1))
  codes <- vapply(f, as.integer, integer(nrow(data)))
  if (!is.matrix(codes)) codes <- matrix(codes, nrow = nrow(data))
  colnames(codes) <- vars
  miss <- is.na(codes)
  rows <- if (na.rm) which(rowSums(miss) == 0) else which(rowSums(miss) < ncol(codes))
  codes <- codes[rows, , drop = FALSE]
  key <- do.call(paste, c(as.data.frame(ifelse(is.na(codes), 0L, codes)), sep = "\r"))
  first <- !duplicated(key)
  pid <- match(key, key[first])
  pat <- codes[first, , drop = FALSE]
  counts <- as.numeric(tabulate(pid, sum(first)))
  idx <- t(pat) - 1L
  idx[is.na(idx)] <- -1L
  ord <- order(idx[1, ], method = "radix")
  inv <- integer(length(ord))
  inv[ord] <- seq_along(ord)
  levs <- lapply(f, levels)
  names(levs) <- vars
  list(idx = unname(idx[, ord, drop = FALSE]), val = counts[ord], dims = unname(nl), levels = levs,
       codes = codes, rows = rows, row_pattern = inv[pid])
}
