# Plain-R references of the estimators whose iterations live in the C++
# core (inst/include/aspectr/lca/): the weighted multinomial logit by
# Newton-Raphson with step halving (lca/logit.h), the ML three-step EM with
# its Newton polish and the three step-3 models (lca/threestep.h), and
# latent class regression by EM over random starts (lca/regression.h).
# These are the R implementations the package used before the move,
# unchanged but for their names; test-lca-core.R checks the core against
# them on tiny data.

ref_ts_model_continuous <- function(z, k) {
  n <- length(z)
  cls <- paste0("class_", seq_len(k))
  nms <- c(paste0(cls, ":mean"), paste0(cls, ":variance"))
  kind <- rep(c("mean", "variance"), each = k)
  mom <- function(H) {
    nt <- colSums(H)
    mu <- colSums(H * z) / nt
    R <- z - matrix(mu, n, k, byrow = TRUE)
    s2 <- colSums(H * R^2) / nt
    list(nt = nt, mu = mu, s2 = s2, R = R)
  }
  list(
    names = nms, kind = kind,
    mest = function(H, v) {
      m <- mom(H * v)
      psi <- cbind(H * m$R, H * (m$R^2 - matrix(m$s2, n, k, byrow = TRUE)))
      # d psi_sigma / d mu sums to 0 at the estimates
      list(est = c(m$mu, m$s2), psi = psi, bread = diag(rep(m$nt, 2), 2 * k))
    },
    start = function(H, v) {
      m <- mom(H * v)
      P <- m$nt / sum(m$nt)
      c(log(P[-1] / P[1]), m$mu, pmax(m$s2, 1e-8 * stats::var(z)))
    },
    valid = function(theta) all(theta[(2 * k):(3 * k - 1)] > 0),
    logf = function(theta) {
      g <- c(0, theta[seq_len(k - 1)])
      lp <- g - ref_ts_lse(g)
      mu <- theta[k - 1 + seq_len(k)]
      s2 <- theta[2 * k - 1 + seq_len(k)]
      R <- z - matrix(mu, n, k, byrow = TRUE)
      matrix(lp, n, k, byrow = TRUE) - 0.5 * matrix(log(2 * pi * s2), n, k, byrow = TRUE) -
        R^2 / matrix(2 * s2, n, k, byrow = TRUE)
    },
    grads = function(theta) {
      g <- c(0, theta[seq_len(k - 1)])
      P <- exp(g - ref_ts_lse(g))
      mu <- theta[k - 1 + seq_len(k)]
      s2 <- theta[2 * k - 1 + seq_len(k)]
      np <- 3 * k - 1
      G <- array(0, c(n, k, np))
      for (r in seq_len(k)) {
        if (k > 1) for (s in 2:k) G[, r, s - 1] <- (r == s) - P[s]
        e <- z - mu[r]
        G[, r, k - 1 + r] <- e / s2[r]
        G[, r, 2 * k - 1 + r] <- -0.5 / s2[r] + e^2 / (2 * s2[r]^2)
      }
      G
    },
    hsum = function(theta, C) {
      g <- c(0, theta[seq_len(k - 1)])
      P <- exp(g - ref_ts_lse(g))
      mu <- theta[k - 1 + seq_len(k)]
      s2 <- theta[2 * k - 1 + seq_len(k)]
      np <- 3 * k - 1
      Hs <- matrix(0, np, np)
      gi <- seq_len(k - 1)
      Hs[gi, gi] <- -sum(C) * (diag(P[-1], k - 1) - tcrossprod(P[-1]))
      for (r in seq_len(k)) {
        e <- z - mu[r]
        a <- k - 1 + r
        b <- 2 * k - 1 + r
        Hs[a, a] <- -sum(C[, r]) / s2[r]
        Hs[a, b] <- Hs[b, a] <- -sum(C[, r] * e) / s2[r]^2
        Hs[b, b] <- sum(C[, r] * (0.5 / s2[r]^2 - e^2 / s2[r]^3))
      }
      Hs
    },
    mstep = function(C, theta) {
      m <- mom(C)
      P <- m$nt / sum(m$nt)
      c(log(P[-1] / P[1]), m$mu, m$s2)
    },
    report = function(theta, V) {
      i <- (k - 1) + seq_len(2 * k)
      list(est = theta[i], V = V[i, i, drop = FALSE])
    },
    shares = function(theta) {
      g <- c(0, theta[seq_len(k - 1)])
      exp(g - ref_ts_lse(g))
    }
  )
}

ref_ts_model_categorical <- function(z, k) {
  n <- length(z)
  lv <- levels(z)
  nc <- length(lv)
  Y <- outer(as.integer(z), seq_len(nc), "==") + 0
  cls <- paste0("class_", seq_len(k))
  nms <- paste0(rep(cls, each = nc), ":", rep(lv, times = k))
  # ML parameters: the class logits, then per class the log-odds of the
  # levels 2..C against level 1
  a_idx <- function(r) k - 1 + (r - 1) * (nc - 1) + seq_len(nc - 1)
  rho_of <- function(theta) {
    t(vapply(seq_len(k), function(r) {
      a <- c(0, theta[a_idx(r)])
      exp(a - ref_ts_lse(a))
    }, numeric(nc)))
  }
  shares <- function(theta) {
    g <- c(0, theta[seq_len(k - 1)])
    exp(g - ref_ts_lse(g))
  }
  list(
    names = nms, kind = rep("prob", k * nc),
    mest = function(H, v) {
      Hv <- H * v
      nt <- colSums(Hv)
      rho <- crossprod(Hv, Y) / nt  # k x C
      psi <- do.call(cbind, lapply(seq_len(k), function(r) H[, r] * (Y - matrix(rho[r, ], n, nc, byrow = TRUE))))
      list(est = as.vector(t(rho)), psi = psi, bread = diag(rep(nt, each = nc), k * nc))
    },
    start = function(H, v) {
      Hv <- H * v
      nt <- colSums(Hv)
      rho <- crossprod(Hv, Y) / nt
      rho <- pmax(rho, 1e-6)
      rho <- rho / rowSums(rho)
      P <- nt / sum(nt)
      c(log(P[-1] / P[1]), as.vector(t(log(rho[, -1, drop = FALSE] / rho[, 1]))))
    },
    valid = function(theta) all(is.finite(theta)),
    logf = function(theta) {
      rho <- rho_of(theta)
      matrix(log(shares(theta)), n, k, byrow = TRUE) + Y %*% t(log(rho))
    },
    grads = function(theta) {
      P <- shares(theta)
      rho <- rho_of(theta)
      np <- k - 1 + k * (nc - 1)
      G <- array(0, c(n, k, np))
      for (r in seq_len(k)) {
        if (k > 1) for (s in 2:k) G[, r, s - 1] <- (r == s) - P[s]
        G[, r, a_idx(r)] <- Y[, -1, drop = FALSE] - matrix(rho[r, -1], n, nc - 1, byrow = TRUE)
      }
      G
    },
    hsum = function(theta, C) {
      P <- shares(theta)
      rho <- rho_of(theta)
      np <- k - 1 + k * (nc - 1)
      Hs <- matrix(0, np, np)
      gi <- seq_len(k - 1)
      Hs[gi, gi] <- -sum(C) * (diag(P[-1], k - 1) - tcrossprod(P[-1]))
      for (r in seq_len(k)) {
        q <- rho[r, -1]
        Hs[a_idx(r), a_idx(r)] <- -sum(C[, r]) * (diag(q, nc - 1) - tcrossprod(q))
      }
      Hs
    },
    mstep = function(C, theta) {
      nt <- colSums(C)
      rho <- crossprod(C, Y) / nt
      if (any(rho <= 0)) rho <- pmax(rho, 1e-300)
      P <- nt / sum(nt)
      c(log(P[-1] / P[1]), as.vector(t(log(rho[, -1, drop = FALSE] / rho[, 1]))))
    },
    report = function(theta, V) {
      rho <- rho_of(theta)
      np <- length(theta)
      J <- matrix(0, k * nc, np)
      for (r in seq_len(k)) {
        p <- rho[r, ]
        # d p / d a, a the log-odds of levels 2..C
        Jr <- -outer(p, p[-1])
        Jr[cbind(2:nc, seq_len(nc - 1))] <- Jr[cbind(2:nc, seq_len(nc - 1))] + p[-1]
        J[(r - 1) * nc + seq_len(nc), a_idx(r)] <- Jr
      }
      list(est = as.vector(t(rho)), V = J %*% V %*% t(J))
    },
    shares = shares
  )
}

ref_ts_model_covariates <- function(X, k) {
  n <- nrow(X)
  p <- ncol(X)
  cls <- paste0("class_", seq_len(k))
  nms <- as.vector(outer(colnames(X), cls[-1], function(t, r) paste0(r, ":", t)))
  probs <- function(theta) {
    eta <- cbind(0, X %*% matrix(theta, p, k - 1))
    eta <- eta - ref_ts_rowmax(eta)
    e <- exp(eta)
    e / rowSums(e)
  }
  # the information of a weighted multinomial logit, sum_i s_i
  # (diag(p_i) - p_i p_i')[-1, -1] kron x_i x_i'
  info <- function(Pm, s) {
    I <- matrix(0, p * (k - 1), p * (k - 1))
    for (r in 2:k) for (u in r:k) {
      d <- s * (Pm[, r] * (r == u) - Pm[, r] * Pm[, u])
      b <- crossprod(X * d, X)
      ir <- (r - 2) * p + seq_len(p)
      iu <- (u - 2) * p + seq_len(p)
      I[ir, iu] <- b
      I[iu, ir] <- t(b)
    }
    I
  }
  list(
    names = nms, kind = rep("coef", length(nms)),
    mest = function(H, v) {
      Hv <- H * v
      theta <- ref_ts_multinom(X, Hv, rep(0, p * (k - 1)), probs, info)
      Pm <- probs(theta)
      s <- rowSums(H)
      psi <- do.call(cbind, lapply(2:k, function(r) X * (H[, r] - s * Pm[, r])))
      list(est = theta, psi = psi, bread = info(Pm, rowSums(Hv)))
    },
    start = function(H, v) ref_ts_multinom(X, H * v, rep(0, p * (k - 1)), probs, info),
    valid = function(theta) all(is.finite(theta)),
    logf = function(theta) log(probs(theta)),
    grads = function(theta) {
      Pm <- probs(theta)
      G <- array(0, c(n, k, p * (k - 1)))
      for (r in seq_len(k)) for (s in 2:k) {
        G[, r, (s - 2) * p + seq_len(p)] <- X * ((r == s) - Pm[, s])
      }
      G
    },
    hsum = function(theta, C) -info(probs(theta), rowSums(C)),
    mstep = function(C, theta) ref_ts_multinom(X, C, theta, probs, info, max_iter = 1),
    report = function(theta, V) list(est = theta, V = V),
    shares = function(theta) colMeans(probs(theta))
  )
}

ref_ts_rowmax <- function(m) m[cbind(seq_len(nrow(m)), max.col(m, ties.method = "first"))]

ref_ts_lse <- function(x) {
  m <- max(x)
  m + log(sum(exp(x - m)))
}

# The weighted multinomial logit: maximizes sum_i sum_r Wt_ir log p_r(x_i)
# by Newton-Raphson with step halving (concave when every row's weights
# sum to a positive number, as BCH weights do).
ref_ts_multinom <- function(X, Wt, theta, probs, info, max_iter = 100, tol = 1e-12) {
  k <- ncol(Wt)
  s <- rowSums(Wt)
  obj <- function(th) sum(Wt * log(probs(th)))
  cur <- obj(theta)
  for (it in seq_len(max_iter)) {
    Pm <- probs(theta)
    grad <- as.vector(crossprod(X, (Wt - s * Pm)[, -1, drop = FALSE]))
    I <- info(Pm, s)
    step <- tryCatch(solve(I, grad), error = function(e) ref_ginv(I) %*% grad)
    step <- as.vector(step)
    if (max(abs(step)) < tol * (1 + max(abs(theta)))) break
    t <- 1
    repeat {
      new <- theta + t * step
      val <- obj(new)
      if (is.finite(val) && val >= cur - 1e-12 * abs(cur)) break
      t <- t / 2
      if (t < 1e-10) break
    }
    if (t < 1e-10) break  # no progress: at the maximum to rounding
    theta <- new
    cur <- val
  }
  theta
}

# The ML three-step estimates: EM with D fixed, then Newton-Raphson steps;
# returns theta, the log-likelihood, the observed information and the
# observations' score vectors (times their weights).
ref_ts_ml <- function(model, W, v, D, max_iter = 2000, tol = 1e-9) {
  omega <- W * v  # record (i, s) weights
  estep <- function(theta) {
    lf <- model$logf(theta)
    mx <- ref_ts_rowmax(lf)
    E <- exp(lf - mx)
    A <- E %*% D  # n x k (assigned classes s)
    pos <- omega > 0
    ll <- sum(omega[pos] * (mx[row(omega)[pos]] + log(A[pos])))
    R <- ifelse(pos, omega / A, 0)
    C <- E * (R %*% t(D))
    list(ll = ll, C = C, E = E, A = A)
  }
  theta <- model$start(W, v)
  e <- estep(theta)
  converged <- FALSE
  it <- 0L
  for (it in seq_len(max_iter)) {
    new <- model$mstep(e$C, theta)
    en <- estep(new)
    change <- en$ll - e$ll
    theta <- new
    e <- en
    if (abs(change) < tol * (abs(e$ll) + 1)) { converged <- TRUE; break }
  }
  # Newton-Raphson polish (quadratic convergence near the maximum)
  derivs <- function(theta, e) {
    G <- model$grads(theta)
    np <- dim(G)[3]
    U <- matrix(0, nrow(W), np)
    for (r in seq_len(ncol(W))) U <- U + e$C[, r] * G[, r, ]
    Hs <- model$hsum(theta, e$C)
    for (r in seq_len(ncol(W))) Hs <- Hs + crossprod(G[, r, ] * e$C[, r], G[, r, ])
    for (s in seq_len(ncol(W))) {
      if (!any(omega[, s] > 0)) next
      Q <- e$E * matrix(D[, s], nrow(W), ncol(W), byrow = TRUE) / e$A[, s]
      u <- matrix(0, nrow(W), np)
      for (r in seq_len(ncol(W))) u <- u + Q[, r] * G[, r, ]
      u[!is.finite(u)] <- 0
      Hs <- Hs - crossprod(u * omega[, s], u)
    }
    list(U = U, grad = colSums(U), info = -Hs)
  }
  d <- derivs(theta, e)
  for (i in seq_len(50)) {
    step <- tryCatch(solve(d$info, d$grad), error = function(err) NULL)
    if (is.null(step) || any(!is.finite(step))) break
    if (max(abs(step)) < 1e-12 * (1 + max(abs(theta)))) { converged <- TRUE; break }
    t <- 1
    ok <- FALSE
    while (t > 1e-6) {
      cand <- theta + t * step
      if (model$valid(cand)) {
        ec <- estep(cand)
        if (is.finite(ec$ll) && ec$ll >= e$ll - 1e-10 * abs(e$ll)) { ok <- TRUE; break }
      }
      t <- t / 2
    }
    if (!ok) break
    small <- max(abs(cand - theta)) < 1e-8 * (1 + max(abs(theta))) ||
      (t == 1 && ec$ll - e$ll < 1e-13 * abs(e$ll))
    theta <- cand
    e <- ec
    d <- derivs(theta, e)
    if (small) { converged <- TRUE; break }
  }
  list(theta = theta, loglik = e$ll, info = d$info, U = d$U, iterations = it, converged = converged)
}

# Multinomial-logit class priors: N x k, class 1 the reference.
ref_lcr_prior <- function(X, beta) {
  eta <- cbind(0, X %*% beta)
  eta <- eta - eta[cbind(seq_len(nrow(eta)), max.col(eta, ties.method = "first"))]
  e <- exp(eta)
  e / rowSums(e)
}

# log P(y_i | class r) for every observation and class (missing responses
# left out): N x k.
ref_lcr_loglik_items <- function(codes, probs) {
  N <- nrow(codes)
  k <- ncol(probs[[1]])
  out <- matrix(0, N, k)
  for (j in seq_along(probs)) {
    lpj <- log(rbind(probs[[j]], 1))           # a missing response (NA -> last row) adds 0
    cj <- codes[, j]
    cj[is.na(cj)] <- nrow(lpj)
    out <- out + lpj[cj, , drop = FALSE]
  }
  out
}

# EM for latent class regression from nrun random starts; the best run.
# With sampling weights `w` (one per observation) every sum over the
# observations is weighted: the weighted (pseudo-)likelihood.
ref_lcr_fit <- function(prep, X, k, nrun, max_iter, tol, seed, w = NULL) {
  codes <- prep$codes
  nl <- lengths(prep$levels)
  R <- ncol(X)
  starts <- with_seed(seed, lapply(seq_len(nrun), function(s) {
    lapply(nl, function(l) { m <- matrix(stats::runif(l * k), l); sweep(m, 2, colSums(m), "/") })
  }))
  # level indicators per variable (levels x N, sparse); missing: no level
  onehot <- lapply(seq_along(nl), function(j) {
    ok <- which(!is.na(codes[, j]))
    Matrix::sparseMatrix(i = codes[ok, j], j = ok, x = 1, dims = c(nl[j], nrow(codes)))
  })
  runs <- lapply(starts, function(probs) {
    beta <- matrix(0, R, k - 1)
    ll_old <- -Inf
    trace <- numeric(0)
    converged <- FALSE
    for (it in seq_len(max_iter)) {
      e <- ref_lcr_estep(X, beta, codes, probs, w)
      prior <- e$prior; post <- e$post; ll <- e$ll
      trace <- c(trace, -ll)
      if (is.finite(ll_old) && abs(ll - ll_old) <= tol * max(1, abs(ll))) {
        converged <- TRUE
        break
      }
      ll_old <- ll
      # M step: item-response probabilities (missing responses left out)
      probs <- lapply(seq_along(nl), function(j) {
        m <- as.matrix(onehot[[j]] %*% (if (is.null(w)) post else post * w))   # levels x k (missing responses left out)
        m <- pmax(m, 1e-300)
        sweep(m, 2, colSums(m), "/")
      })
      # one Newton-Raphson step of the logit coefficients
      beta <- beta + ref_lcr_newton_step(X, post, prior, w)
    }
    if (!converged) {
      # the model after the last M step
      e <- ref_lcr_estep(X, beta, codes, probs, w)
      prior <- e$prior; post <- e$post; ll <- e$ll
      trace[length(trace)] <- -ll
    }
    list(probs = probs, beta = beta, prior = prior, posterior = post, llik = ll, objective = trace,
         iterations = length(trace), converged = converged)
  })
  values <- vapply(runs, function(r) -r$llik, numeric(1))
  best <- best_run(values, "lca() fit")
  out <- runs[[best]]
  out$run <- best
  out$run_values <- values
  out
}

# Gradient and Hessian of sum_i sum_r post_ir log prior_ir in the
# coefficients of classes 2..k; the Newton step (R x (k - 1)).
ref_lcr_newton_step <- function(X, post, prior, w = NULL) {
  k <- ncol(prior)
  R <- ncol(X)
  Xw <- if (is.null(w)) X else X * w  # (the weights enter the sums once)
  g <- crossprod(Xw, post[, -1, drop = FALSE] - prior[, -1, drop = FALSE])
  H <- matrix(0, R * (k - 1), R * (k - 1))
  for (a in 2:k) for (b in 2:k) {
    d <- prior[, a] * ((a == b) - prior[, b])
    ia <- (a - 2) * R + seq_len(R)
    ib <- (b - 2) * R + seq_len(R)
    H[ia, ib] <- -crossprod(Xw, X * d)
  }
  step <- tryCatch(solve(-H, as.vector(g)), error = function(e) ref_ginv(-H) %*% as.vector(g))
  matrix(step, R, k - 1)
}

# Moore-Penrose inverse (MASS::ginv without the dependency).
ref_ginv <- function(A, tol = sqrt(.Machine$double.eps)) {
  s <- svd(A)
  pos <- s$d > max(tol * s$d[1], 0)
  if (!any(pos)) return(array(0, dim(A)[2:1]))
  s$v[, pos, drop = FALSE] %*% (t(s$u[, pos, drop = FALSE]) / s$d[pos])
}

# E step of latent class regression: class priors from the logit
# coefficients, posteriors and the log-likelihood (log-sum-exp per row).
ref_lcr_estep <- function(X, beta, codes, probs, w = NULL) {
  prior <- ref_lcr_prior(X, beta)
  lp <- log(prior) + ref_lcr_loglik_items(codes, probs)
  mx <- lp[cbind(seq_len(nrow(lp)), max.col(lp, ties.method = "first"))]
  post <- exp(lp - mx)
  s <- rowSums(post)
  list(prior = prior, post = post / s, ll = if (is.null(w)) sum(mx + log(s)) else sum(w * (mx + log(s))))
}
