# plsa(loss = "tsallis" or "l2") of a matrix or N-way data in shards()
# with missing cells, masks or weights: the source of plsa_weighted_fit()
# (R/family-plsa-weights.R) for the shards where they are held. The rules
# are the in-memory fit's, on the shards as pieces: the weighted q-EM
# (solvers/plsa_weighted_pieces.h, PieceWeightedQEM; extrapolated by
# SQUAREM, solvers/pieces_squarem.h, with method "squarem") and the
# weighted L2 block updates (solvers/plsa_weighted_l2_pieces.h,
# PieceWeightedPPS). Each shard keeps its cells, their weights and its rows
# of the documents' factor; only k-sized and k x n statistics travel (the
# documents' columns' root search runs on the master, one request per
# Newton step for all columns). The weights are nmf()'s on shards
# (nmf_weight_cells(), each shard's part by nmf_shard_weight_parts()) for a
# matrix, ntf()'s for N-way data, so the fit equals the in-memory weighted
# fit of the same data and start up to rounding.
# The source's fields are wq_memory_source()'s; `summary` joins the shards'
# summaries of their counted cells, `cell_data` is NULL.
wq_shard_source <- function(x, loss, q, normalize, method, wargs, ctl, cluster, call, env) {
  force(env)  # (the fit's frame, named by errors raised after this returns)
  l2 <- loss == "l2"
  N <- length(x$dims)
  # (cluster: checked by plsa())
  # the weights (matrices: nmf()'s; N-way data: ntf()'s, as in memory) and
  # each shard's part of them, in one form: d, v (per mode), eidx (N x |E|,
  # 0-based, rows counted in the shard) and ev
  if (N == 2) {
    wc <- do.call(nmf_weight_cells, c(list(x$dims, x$dimnames, NULL), wargs[c("mask", "observed", "weights",
                                                                               "row_weights", "col_weights")],
                                     list(call = env)))
    parts <- lapply(nmf_shard_weight_parts(x, wc), function(w) {
      list(d = w$d, v = list(w$r, w$c), eidx = rbind(as.integer(w$ei), as.integer(w$ej)), ev = w$ev)
    })
  } else {
    wc <- ntf_weight_cells(x$dims, NULL, wargs$mask, wargs$observed, wargs$weights, wargs$mode_weights, env)
    parts <- ntf_shard_weight_parts(x, wc)
  }
  offsets <- cumsum(c(0, x$rows))[seq_along(x$rows)]
  eng <- shard_engine(x, cluster, ctl$threads, call)
  src <- new.env(parent = emptyenv())
  src$close <- function() eng$drop()
  ok <- FALSE
  on.exit(if (!ok) eng$drop(), add = TRUE)
  eng$load()
  # each shard's cells of positive weight and value (kept by its store),
  # their weighted total
  res <- eng$each("wq_set", function(g) list(ids = g, w = parts[g], offset = offsets[g], q = q, loss = loss))
  sums <- numeric(0); xsums <- numeric(0); cells <- 0
  summ <- vector("list", length(x$rows))
  for (a in res) {
    sums <- c(sums, a$sums)
    xsums <- c(xsums, a$xsums)
    cells <- cells + sum(a$cells)
    summ[a$ids] <- a$summ
  }
  # (G = x / T: Tsallis T = sum omega x, L2 T = sum x over the cells that
  # count, as in memory)
  WT <- sum(sums)
  T <- if (l2) sum(xsums) else WT
  if (!(cells > 0) || !(T > 0) || !(WT > 0)) {
    abort_nothing_weighted(call = env)
  }
  src$dims <- x$dims
  src$dimnames <- x$dimnames
  src$cells <- cells
  src$total <- T
  src$weights <- wc
  src$nway <- N > 2
  src$cell_data <- NULL
  src$summary <- wqem_summary(summ)
  src$count_data <- function() shard_count_data(x, "plsa", likelihood = FALSE, call = env)
  global <- list(T = T, q = q, threads = ctl$threads, dims = x$dims)
  run <- function(op, input = list()) {
    eng$reduce(eng$run("wq_piece", list(req = op, input = input, global = global)), "stats")
  }
  # (the documents' factor, rows x k: each shard's rows, k x rows)
  gather <- function() {
    out <- NULL
    for (a in eng$run("wq_gather", list(global = global))) {
      for (j in seq_along(a$ids)) {
        if (is.null(out)) out <- matrix(0, x$dims[1], nrow(a$F0[[j]]))
        out[shard_rows(x, a$ids[j]), ] <- t(a$F0[[j]])
      }
    }
    out
  }
  src$hook <- shard_progress(NULL, ctl$verbose, if (l2) "plsa (sharded weighted L2)" else "plsa (sharded weighted q-EM)",
                             ctl$max_iter)
  # (the weights of every mode, those of the shared modes read by the L2
  # rule)
  vall <- if (N == 2) list(wc$r, wc$c) else wc$v
  fn <- function(op, input) {
    if (op == "gather") return(list(F0 = gather()))
    run(op, input)
  }
  src$fit <- function(init, iters) {
    F0 <- as.matrix(init$factors[[1]])
    eng$each("wq_start", function(g) {
      list(ids = g, global = global, F0 = lapply(g, function(i) t(F0[shard_rows(x, i), , drop = FALSE])))
    })
    shared <- lapply(init$factors[-1], function(f) t(as.matrix(f)))
    r <- if (l2) {
      cpp_wl2_pieces_fit(fn, as.numeric(init$lambda), shared, vall, !normalize, as.integer(iters), ctl$tol,
                         ctl$threads, src$hook)
    } else {
      cpp_wqem_pieces_fit(fn, as.numeric(init$lambda), shared, q, as.integer(iters), ctl$tol, ctl$threads,
                          src$hook, FALSE, method, init$squarem_bound %||% 1)
    }
    lam <- as.numeric(r$lambda)
    # sum omega p of the model and the parts of D(G_o || P_o)
    model <- c(list(lambda = matrix(lam)), stats::setNames(r$factors, paste0("F", seq_along(r$factors))))
    ls <- run(if (l2) "wl_h" else "wq_loss", model)
    mass <- sum(lam * as.numeric(ls$H))
    kl <- as.numeric(run(if (l2) "wl_kl" else "wq_kl", c(model, list(mass = mass)))$kl)
    if (l2) {
      # (the pieces' sum omega g log(omega g / P_o) with g = x / T: the
      # shares omega g / S, S = sum omega g)
      S <- WT / T
      kl <- kl / S - log(S)
    }
    list(lambda = lam, factors = c(list(gather()), lapply(r$factors, t)), objective = r$objective, initial = r$initial,
         iterations = r$iterations, converged = r$converged, stopped = r$stopped, mass = mass, kl = kl,
         squarem_bound = r$squarem_bound)
  }
  src$finish <- function(res) res
  ok <- TRUE
  src
}

# A shard's part of the summary of the counted cells (`idx`, N x cells,
# 0-based, rows counted in the shard; their values `x`; `rows` the shard's):
# new_plsa()'s summary of them (cpp_data_summary()), their largest value,
# their total in units of it and their number
counted_summary_part <- function(idx, x, rows) {
  if (!length(x)) return(list(top = 0, scaled = 0, neg = 0, doc = numeric(rows), cells = 0))
  s <- cpp_data_summary(idx, x, rows)
  top <- max(x)
  list(top = top, scaled = sum(x / top), neg = s$neg_entropy, doc = s$doc_totals, cells = length(x))
}

# The summary of the counted cells of every shard (their parts from
# counted_summary_part(), in the shards' order), joined as the shards'
# summaries are (glogg_join())
wqem_summary <- function(parts) {
  part <- glogg_join(vapply(parts, `[[`, numeric(1), "top"), vapply(parts, `[[`, numeric(1), "scaled"),
                     vapply(parts, `[[`, numeric(1), "neg"))
  list(neg_entropy = sum(part), doc_totals = unlist(lapply(parts, `[[`, "doc"), use.names = FALSE))
}

# The weighted q-EM's operations on a store (shard_op_run()):
#  "wq_set"    each shard's cells of positive weight and value, their
#              weights (omega = r c (d + delta), as plsa_weighted_data())
#              and their weighted total, kept by the store (not with
#              keep = FALSE), and the summary of those cells;
#  "wq_start"  a start's rows of the documents' factor;
#  "wq_piece"  a request of the rule (WeightedQEMPiece), added over the
#              store's shards;
#  "wq_gather" the shards' rows of the documents' factor (k x rows).
shard_wqem_op <- function(st, held, op, args) {
  if (op %in% c("wq_set", "wq_start")) {
    mine <- args$ids %in% held
    ids <- args$ids[mine]
    out <- list(ids = ids)
    for (j in seq_along(ids)) {
      key <- as.character(ids[j])
      h <- st$shards[[key]]
      fail <- function(e) abort_shard(h$source, "failed: {conditionMessage(e)}")
      if (op == "wq_start") {
        cpp_wqem_piece_factor(wqem_state(st, key, args$global), args$F0[mine][[j]])
        next
      }
      w <- args$w[mine][[j]]
      d <- if (h$keep) shard_kept_data(st, key) else shard_data(h$source)
      cw <- tryCatch(wqem_shard_cells(d, w), error = fail)
      # (args$keep = FALSE: the summary alone, plsa_shards_counted_summary())
      if (!isFALSE(args$keep)) {
        st$shards[[key]]$wq <- c(cw, list(w = w, offset = args$offset[mine][j], q = args$q,
                                          loss = args$loss %||% "tsallis", state = NULL))
      }
      out$sums <- c(out$sums, sum(cw$omega * cw$x))
      out$xsums <- c(out$xsums, sum(cw$x))
      out$cells <- c(out$cells, length(cw$x))
      # (the summary of the counted cells, as new_plsa() makes that of the
      # in-memory fit's)
      out$summ <- c(out$summ, list(counted_summary_part(cw$idx, cw$x, h$rows)))
      rm(d)
    }
    return(out)
  }
  g <- args$global
  if (op == "wq_gather") {
    return(list(ids = held, F0 = lapply(st$shards, function(h) cpp_wqem_piece_factor(h$wq$state))))
  }
  if (op != "wq_piece") stop("unknown operation ", op)
  parts <- NULL
  for (key in names(st$shards)) {
    h <- st$shards[[key]]
    cw <- h$wq
    cw$state <- wqem_state(st, key, g)
    r <- tryCatch(cpp_wqem_piece_run(cw$state, args$req, args$input, g$threads),
                  error = function(e) abort_shard(h$source, "failed: {conditionMessage(e)}"))
    parts <- if (is.null(parts)) r else shard_add(parts, r)
  }
  list(ids = held, stats = parts)
}

# A shard's piece (made once per fit): its cells as shares of the weighted
# total (G = x / T), their weights and its rows of the documents' factor
wqem_state <- function(st, key, g) {
  h <- st$shards[[key]]
  cw <- h$wq
  if (!is.null(cw$state)) return(cw$state)
  w <- cw$w
  S <- tryCatch(
    cpp_wqem_piece_state(cw$idx, cw$x / g$T, cw$omega, as.integer(c(h$rows, g$dims[-1])), w$d, w$v, w$eidx,
                         w$ev, cw$q, cw$offset, cw$loss %||% "tsallis"),
    error = function(e) abort_shard(h$source, "failed: {conditionMessage(e)}"))
  st$shards[[key]]$wq$state <- S
  # (the piece holds its cells: R's copies let go)
  st$shards[[key]]$wq[c("idx", "x", "omega")] <- NULL
  S
}

# A shard's cells where omega x > 0 (idx: N x cells, 0-based, rows counted
# in the shard), their values x and weights omega = prod_n v_n(i_n)
# (d + delta) (w: the shard's part of the weights, wq_shard_source())
# as in memory: matrices as plsa_weighted_data(), N-way data as
# ntf_weighted_data()
wqem_shard_cells <- function(d, w) {
  idx <- d$idx
  x <- as.numeric(d$val)
  if (length(w$v) == 2) {
    r <- w$v[[1]]; cw <- w$v[[2]]
    m <- length(r)
    f <- rep(w$d, length(x))
    if (length(w$ev) && length(x)) {
      pos <- match(as.numeric(idx[2, ]) * m + idx[1, ], as.numeric(w$eidx[2, ]) * m + w$eidx[1, ])
      f[!is.na(pos)] <- w$d + w$ev[pos[!is.na(pos)]]
    }
    om <- r[idx[1, ] + 1L] * cw[idx[2, ] + 1L] * f
  } else {
    dims <- as.integer(vapply(w$v, length, integer(1)))
    ij <- t(idx) + 1L
    ek <- ntf_cell_keys(t(w$eidx) + 1L, dims)
    om <- ntf_weigh_values(ij, rep(1, nrow(ij)), dims, list(d = w$d, v = w$v, ek = ek, ev = w$ev))
  }
  keep <- om * x > 0
  list(idx = idx[, keep, drop = FALSE], x = x[keep], omega = om[keep])
}
