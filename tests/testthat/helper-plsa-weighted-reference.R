# Plain-R references of plsa()'s weighted Tsallis and L2 fits (dense, tiny
# data): every cell's weight in a full matrix Omega, the sums written out.
# Independent of the C++ rules' sparse bookkeeping (the weights' parts
# r c (d + delta)) and of their solvers: the column problems are solved by
# uniroot() (Tsallis) and by checking every candidate support (L2), the
# weights' QP by enumerating supports.

# Omega of plsa()'s arguments (dense): NA and masked cells 0
ref_omega <- function(x, mask = NULL, weights = NULL, row_weights = NULL, col_weights = NULL) {
  m <- nrow(x); n <- ncol(x)
  W <- if (is.null(weights)) matrix(1, m, n) else as.matrix(weights)
  W[is.na(x)] <- 0
  if (!is.null(mask)) W[as.matrix(mask)] <- 0
  if (!is.null(row_weights)) W <- W * row_weights
  if (!is.null(col_weights)) W <- sweep(W, 2, col_weights, "*")
  W
}

# G of the fit: x / T, T = sum omega x (Tsallis) or the total of x over
# the cells that count (L2); 0 outside them
ref_G <- function(x, Om, loss) {
  x0 <- x; x0[is.na(x0)] <- 0
  cnt <- Om > 0 & x0 > 0
  T <- if (loss == "tsallis") sum(Om * x0) else sum(x0[cnt])
  ifelse(cnt, x0 / T, 0)
}

ref_model <- function(lambda, U, V) U %*% (lambda * t(V))

ref_tsallis_value <- function(G, Om, lambda, U, V, q) {
  P <- ref_model(lambda, U, V)
  on <- G > 0
  A <- sum(Om[on] * G[on]^q * P[on]^(1 - q))
  S <- sum(Om * P)
  (1 - A * S^(q - 1)) / (1 - q)
}

ref_l2_value <- function(G, Om, lambda, U, V) 0.5 * sum(Om * (G - ref_model(lambda, U, V))^2)

# min sum (b x - a x^(1-q)) on the simplex, by uniroot() on mu
ref_power_simplex <- function(a, b, q, x) {
  P <- a > 0
  if (!any(P)) return(x)
  f <- function(mu) log(sum(((1 - q) * a[P] / (b[P] + mu))^(1 / q)))
  lo <- max((1 - q) * a[P] - b[P])
  hi <- (1 - q) * sum(a[P]^(1 / q))^q - min(b[P])
  # (at lo itself rounding may leave some b + mu <= 0: the first point
  # above it where f is defined)
  if (!is.finite(f(lo))) {
    cand <- lo + (hi - lo) * 2^-(80:1)
    ok <- vapply(cand, function(m) all(b[P] + m > 0) && is.finite(f(m)), logical(1))
    lo <- cand[which(ok)[1]]
  }
  mu <- if (f(lo) <= 0) lo else if (f(hi) >= 0) hi else
    uniroot(f, c(lo, hi), tol = .Machine$double.eps, maxiter = 5000)$root
  Z <- !P
  zmin <- if (any(Z)) min(b[Z]) else Inf
  spread <- any(Z) && mu < -zmin
  if (spread) mu <- -zmin
  out <- numeric(length(a))
  out[P] <- ((1 - q) * a[P] / (b[P] + mu))^(1 / q)
  if (spread) {
    tie <- Z & b <= zmin
    out[tie] <- max(0, 1 - sum(out)) / sum(tie)
  } else {
    out <- out / sum(out)
  }
  out
}

# min sum (alpha x^2 / 2 - beta x) on the simplex: the support is {beta >
# mu}; every candidate support (the t largest beta) is tried and the one
# whose mu is consistent kept
ref_diag_simplex <- function(alpha, beta, x) {
  P <- alpha > 0
  if (!any(P)) return(x)
  ip <- which(P)
  o <- ip[order(beta[ip], decreasing = TRUE)]
  mu <- NA
  for (t in seq_along(o)) {
    s <- o[seq_len(t)]
    m <- (sum(beta[s] / alpha[s]) - 1) / sum(1 / alpha[s])
    nxt <- if (t < length(o)) beta[o[t + 1]] else -Inf
    if (m < beta[o[t]] && m >= nxt) { mu <- m; break }
  }
  Z <- !P
  spread <- any(Z) && mu < 0
  if (spread) mu <- 0
  out <- numeric(length(alpha))
  out[P] <- pmax(0, (beta[P] - mu) / alpha[P])
  if (spread) out[Z] <- max(0, 1 - sum(out)) / sum(Z)
  out
}

# the column problem's solution, kept when it does not raise the problem
ref_keep_better <- function(a, b, q, old) {
  x <- ref_power_simplex(a, b, q, old)
  f <- function(z) sum(b * z - ifelse(z > 0, a * z^(1 - q), 0))
  if (f(x) <= f(old)) x else old
}

# min 1/2 l'Ql - c'l on the simplex (or the orthant): every support tried
ref_qp <- function(Q, c, simplex) {
  k <- length(c)
  best <- NULL; bestv <- Inf
  for (code in seq_len(2^k - 1)) {
    s <- which(bitwAnd(code, 2^(seq_len(k) - 1)) > 0)
    l <- numeric(k)
    if (simplex) {
      K <- rbind(cbind(Q[s, s, drop = FALSE], 1), c(rep(1, length(s)), 0))
      sol <- tryCatch(solve(K, c(c[s], 1)), error = function(e) NULL)
      if (is.null(sol)) next
      l[s] <- sol[seq_along(s)]
    } else {
      sol <- tryCatch(solve(Q[s, s, drop = FALSE], c[s]), error = function(e) NULL)
      if (is.null(sol)) next
      l[s] <- sol
    }
    if (any(l < -1e-14)) next
    l <- pmax(l, 0)
    v <- 0.5 * sum(l * (Q %*% l)) - sum(c * l)
    if (v < bestv - 1e-15) { bestv <- v; best <- l }
  }
  if (simplex) best / sum(best) else best
}

# One weighted L2 sweep (U's columns, V's columns, the weights), as the
# rule's order
ref_l2_step <- function(G, Om, lambda, U, V, normalize = TRUE) {
  k <- length(lambda)
  for (mode in 1:2) {
    A <- if (mode == 1) U else V
    B <- if (mode == 1) V else U
    O <- if (mode == 1) Om else t(Om)
    Gm <- if (mode == 1) G else t(G)
    for (r in seq_len(k)) {
      lam <- lambda[r]
      if (!(lam > 0)) next
      others <- A[, -r, drop = FALSE] %*% (lambda[-r] * t(B[, -r, drop = FALSE]))
      alpha <- lam^2 * as.numeric(O %*% B[, r]^2)
      beta <- lam * as.numeric((O * (Gm - others)) %*% B[, r])
      beta[alpha == 0] <- 0
      A[, r] <- ref_diag_simplex(alpha, beta, A[, r])
    }
    if (mode == 1) U <- A else V <- A
  }
  Q <- matrix(0, k, k); cv <- numeric(k)
  for (r in seq_len(k)) {
    Pr <- outer(U[, r], V[, r])
    cv[r] <- sum(Om * G * Pr)
    for (s in seq_len(k)) Q[r, s] <- sum(Om * Pr * outer(U[, s], V[, s]))
  }
  lambda <- ref_qp(Q, cv, normalize)
  list(lambda = lambda, U = U, V = V)
}

# One weighted q-EM step (see solvers/plsa_weighted.h)
ref_tsallis_step <- function(G, Om, lambda, U, V, q) {
  k <- length(lambda)
  P <- ref_model(lambda, U, V)
  on <- G > 0
  A <- sum(Om[on] * G[on]^q * P[on]^(1 - q))
  S <- sum(Om * P)
  sc <- (A / S)^(1 / q)
  lam0 <- lambda * sc
  Tm <- matrix(0, nrow(G), ncol(G))
  Tm[on] <- Om[on] * (G[on] / (sc * P[on]))^q
  U0 <- U; V0 <- V
  B <- Tm %*% V0
  H <- colSums(U0 * (Om %*% V0))
  lam <- lam0
  for (r in seq_len(k)) {
    a <- lam0[r]^q * sum(U0[, r] * B[, r])
    if (H[r] > 0) lam[r] <- if (a > 0) (a / H[r])^(1 / q) else 0
  }
  hU <- Om %*% V0
  for (r in seq_len(k)) {
    if (!(lam[r] > 0)) next
    a <- lam0[r]^q * lam[r]^(1 - q) * U0[, r]^q * B[, r]
    U[, r] <- ref_keep_better(a, (1 - q) * lam[r] * hU[, r], q, U[, r])
  }
  Mix <- U0^q * U^(1 - q)
  B1 <- t(Tm) %*% Mix
  hV <- t(Om) %*% U
  for (r in seq_len(k)) {
    if (!(lam[r] > 0)) next
    a <- lam0[r]^q * lam[r]^(1 - q) * V0[, r]^q * B1[, r]
    V[, r] <- ref_keep_better(a, (1 - q) * lam[r] * hV[, r], q, V[, r])
  }
  list(lambda = lam / sum(lam), U = U, V = V)
}

# `iters` steps from (lambda, U, V); the model and the objective after
# every step
ref_plsa_weighted <- function(x, Om, loss, lambda, U, V, iters, q = 0.5, normalize = TRUE) {
  G <- ref_G(x, Om, loss)
  obj <- numeric(iters)
  for (it in seq_len(iters)) {
    s <- if (loss == "l2") ref_l2_step(G, Om, lambda, U, V, normalize) else ref_tsallis_step(G, Om, lambda, U, V, q)
    lambda <- s$lambda; U <- s$U; V <- s$V
    obj[it] <- if (loss == "l2") ref_l2_value(G, Om, lambda, U, V) else ref_tsallis_value(G, Om, lambda, U, V, q)
  }
  list(lambda = lambda, U = U, V = V, objective = obj)
}

# The reference's model in plsa()'s topic order (by decreasing weight)
ref_sorted <- function(ref) {
  perm <- order(ref$lambda, decreasing = TRUE)
  list(lambda = ref$lambda[perm], U = ref$U[, perm, drop = FALSE], V = ref$V[, perm, drop = FALSE])
}
