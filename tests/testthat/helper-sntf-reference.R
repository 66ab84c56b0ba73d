# Plain-R dense references for super-symmetric tensors of order 3 (tests only).

sym_ref_model <- function(G) {
  n <- nrow(G)
  Z <- array(0, c(n, n, n))
  for (j in seq_len(ncol(G))) Z <- Z + outer(outer(G[, j], G[, j]), G[, j])
  Z
}

# M_ij = sum_{t,q} W_itq g_tj g_qj
sym_ref_contract <- function(W, G) {
  n <- nrow(G); k <- ncol(G)
  out <- matrix(0, n, k)
  for (j in seq_len(k)) {
    gg <- outer(G[, j], G[, j])
    for (i in seq_len(n)) out[i, j] <- sum(W[i, , ] * gg)
  }
  out
}

# the average of an array over all 6 permutations of its modes
sym_ref_symmetrize <- function(Y) {
  p <- list(c(1, 2, 3), c(1, 3, 2), c(2, 1, 3), c(2, 3, 1), c(3, 1, 2), c(3, 2, 1))
  Reduce(`+`, lapply(p, function(q) aperm(Y, q))) / 6
}

sym_ref_alpha_div <- function(Y, Z, a) {
  if (a == 1) return(sum(ifelse(Y > 0, Y * log(Y / Z), 0) - Y + Z))
  if (a == 0) return(sum(Z * log(Z / Y) + Y - Z))
  sum((Y^a * Z^(1 - a) - Y) / (a * (a - 1)) - (Y - Z) / a)
}

sym_ref_beta_div <- function(Y, Z, b) {
  if (b == 0) return(sum(ifelse(Y > 0, Y * log(Y / Z), 0) - Y + Z))
  if (b == -1) return(sum(log(Z / Y) + Y / Z - 1))
  sum(ifelse(Y > 0, Y^(b + 1), 0) / b - Y * Z^b / b - ifelse(Y > 0, Y^(b + 1), 0) / (b + 1) + Z^(b + 1) / (b + 1))
}

# one step of each multiplicative rule, written from the paper's formulas
# with the majorization exponent e
sym_ref_alpha_step <- function(Y, G, a, e) {
  Z <- sym_ref_model(G)
  W <- ifelse(Y > 0, (Y / Z)^a, 0)
  den <- matrix(colSums(G)^2, nrow(G), ncol(G), byrow = TRUE)
  G * (sym_ref_contract(W, G) / den)^e
}
sym_ref_smart_step <- function(Y, G, e) {
  Z <- sym_ref_model(G)
  den <- matrix(colSums(G)^2, nrow(G), ncol(G), byrow = TRUE)
  G * exp(e * sym_ref_contract(log(Y / Z), G) / den)
}
sym_ref_beta_step <- function(Y, G, b, e, l1 = 0) {
  Z <- sym_ref_model(G)
  G * (sym_ref_contract(Y * Z^(b - 1), G) / (sym_ref_contract(Z^b, G) + l1 / 3))^e
}

# planted super-symmetric data: k blocks of n/k points, a little overlap
sym_ref_planted <- function(n = 24, k = 3, overlap = 0.05, seed = 1) {
  set.seed(seed)
  G <- matrix(0, n, k)
  size <- n / k
  for (j in seq_len(k)) G[((j - 1) * size + 1):(j * size), j] <- stats::runif(size, 0.5, 1.5)
  G <- G + matrix(stats::runif(n * k, 0, overlap), n, k)
  list(G = G, Y = sym_ref_model(G))
}

# mean best absolute cosine between the columns of two factors
sym_ref_congruence <- function(A, B) {
  A <- sweep(A, 2, sqrt(colSums(A^2)), "/")
  B <- sweep(B, 2, sqrt(colSums(B^2)), "/")
  C <- abs(crossprod(A, B))
  mean(apply(C, 2, max))
}

# three noisy lines through the origin plus uniform outliers (2-D)
sym_ref_lines <- function(n_per = 40, n_out = 20, noise = 0.02, seed = 7) {
  set.seed(seed)
  ang <- c(0, pi / 3, 2 * pi / 3)
  x <- NULL; lab <- NULL
  for (j in 1:3) {
    t <- stats::runif(n_per, -1, 1)
    x <- rbind(x, cbind(t * cos(ang[j]), t * sin(ang[j])) + matrix(stats::rnorm(2 * n_per, sd = noise), n_per))
    lab <- c(lab, rep(j, n_per))
  }
  x <- rbind(x, matrix(stats::runif(2 * n_out, -1, 1), n_out))
  list(x = x, label = c(lab, rep(0, n_out)))
}
