# nmf() of data in shards(): the rows of W belong to the rows of X, so W is
# updated shard by shard where the shards are (in this process, streamed
# from files, or on the workers of a cluster) and only H, H H' and the k x n
# and k x k sums W'X and W'W travel. The master runs the in-memory rule's
# steps in the same order on the added parts (aspectr/nmf/shard.h), so the
# fit equals the in-memory fit with the same start up to rounding.

# What nmf() needs of sharded data in place of nmf_data()'s form, after
# checking that the fit asked for can run on shards (data without positive
# entries: nmf_shard_source()).
nmf_shard_data <- function(x, loss, method, accelerate, weighted, call) {
  check_tensor_shards(x, "nmf", call)
  if (length(x$dims) != 2) {
    abort_input("{.arg x} must be a matrix split into {.fn shards} for {.fn nmf}, not {length(x$dims)}-way data (see {.fn ntf}).",
                "value", arg = "x", call = call)
  }
  check_shard_capability("nmf", loss, method, options = list(accelerate = accelerate, mask = weighted), call = call)
  s <- max(vapply(x$meta, function(m) m$top, numeric(1)))
  total <- shard_total(x)
  list(dense = NULL, dims = x$dims, dimnames = x$dimnames, nnz = x$nnz, total = total / s,
       neg_entropy = shard_summary(x)$neg_entropy,
       row_totals = unlist(lapply(x$meta, function(m) m$doc_totals), use.names = FALSE) / s,
       loglik_const = sum(vapply(x$meta, function(m) m$loglik_const, numeric(1))),
       scale = list(s = s, a = sqrt(s)), shards = x)
}

# The cells of an nmf() fit in shards (the fields of nmf_memory_source()):
# `nd` (nmf_shard_data()), `wd` (a weighted fit's weights of the cells,
# nmf_weight_cells(); the shards make their weighted data), `count_data`;
# `prepare(eps, threads)`: the scale (a weighted fit's from the shards'
# weighted data, their session opened to make them) and, for beta <= 0
# with zeros, the floor the shards raise their cells to; `open()` the
# session (for the SVD of an unweighted fit, its products), `draw()` a
# start (random: lazy, drawn by the stores), `progress()` the progress bar,
# `fitter()` the runs, `name_w()` W named in place (or written to
# `files`), `discard`, `close()`.
nmf_shard_source <- function(x, loss, beta, method, accelerate, weighted, wargs, cluster, files, call,
                             env = rlang::caller_env()) {
  force(env)  # (the fit's frame, named by errors raised after this returns)
  nd <- nmf_shard_data(x, loss, method, accelerate, weighted, call = env)
  # (shards have no missing cells: their weights come from the arguments,
  # checked before the data's emptiness as in memory; the weighted data are
  # made by each shard, see nmf_shard_session())
  wd <- if (weighted) {
    nmf_weight_cells(x$dims, x$dimnames, NULL, wargs$mask, wargs$observed, wargs$weights, wargs$row_weights,
                     wargs$col_weights, call = env)
  }
  if (x$nnz == 0) {
    if (weighted) {
      abort_nothing_weighted(call = env)
    }
    abort_input("{.arg x} has no positive entries: there is nothing to fit.", "empty", arg = "x", call = env)
  }
  count_data <- !weighted && shard_count_data(x, "nmf", likelihood = loss == "kl", call = env)
  # (NNDSVD's SVD: of the weighted data, as in memory; under the beta
  # divergence of the data themselves, which its updates read)
  if (weighted && loss != "beta") nd$wcells <- wd
  loglik_const <- if (loss != "kl" || weighted) NA_real_ else nd$loglik_const
  session <- NULL
  sc <- nd$scale
  wk <- NULL
  eps <- NULL
  threads <- NULL
  prepare <- function(eps, threads) {
    eps <<- eps
    threads <<- threads
    if (weighted && loss != "beta") {
      # the shards' weighted data: the fit's scale and data fields come from
      # them, as in memory from the weighted matrix (the beta divergence's
      # updates read the data themselves and each shard's weights, see open())
      session <<- nmf_shard_session(x, cluster, threads, loss, method, NA_real_, c(0, 0), c(0, 0), eps, call, files)
      ws <- session$weigh(wd)
      if (!(ws$st > 0)) {
        abort_nothing_weighted(call = env)
      }
      s <- ws$top
      sc <<- nd$scale <<- list(s = s, a = sqrt(s))
      nd$total <<- ws$st / s
      nd$row_totals <<- ws$rowtot / s
      nd$neg_entropy <<- ws$sxlx / ws$st - log(ws$st)
      # (the cells of positive weighted value, as the weighted matrix's)
      nd$nnz <<- ws$nnz
      wk <<- list(wx2 = ws$sx2 / s^2, klc = (ws$sxl - ws$st * log(s) - ws$st) / s, total = ws$st / s)
    }
    if (loss == "beta") {
      # (the updates read each shard's rows as a dense block)
      check_size(max(x$rows) * as.numeric(nd$dims[2]),
                 paste0("The beta divergence's updates need each shard's rows as a dense block: the largest is ",
                        max(x$rows), " x ", nd$dims[2], " ({size} cells)."), call = env)
      if (beta <= 0 && nd$nnz < prod(as.numeric(nd$dims))) {
        # the divergence is infinite at a zero of x: each shard raises its
        # cells below eps (in units of the scaled x) to it where it is; the
        # data's sums come with the fit
        nmf_floor_eps(eps, beta, env)
        # (the shards' sessions and NNDSVD's SVD read it, as in memory)
        nd$floor <<- eps
      }
    }
    invisible()
  }
  open <- function(L1s, L2s, accelerate) {
    if (is.null(session)) {
      session <<- nmf_shard_session(x, cluster, threads, loss, method, sc$s, L1s, L2s, eps, call, files, accelerate,
                                    beta = beta, x_floor = nd$floor %||% 0)
      # (weighted beta divergence: each shard gets the weights of its cells)
      if (weighted && !(session$weigh_cells(wd) > 0)) {
        abort_nothing_weighted(call = env)
      }
    } else {
      session$configure(sc$s, L1s, L2s, eps, accelerate, threads, c(wk, list(d = wd$d, c = wd$c)))
    }
    # (a weighted fit's SVD reads the weighted data here, shard_nmf_products())
    if (!weighted) session$products
  }
  draw <- function(k, init, svd0) {
    if (identical(init, "random")) return(nmf_lazy_random(nd, k))
    # (u's rows kept by the shards' stores: W made there)
    if (!is.null(svd0) && nrow(svd0$u) == 0) return(nmf_kept_nndsvd(nd, k, init, svd0, session$left_parts()))
    nmf_init(nd, k, init, svd0)
  }
  # NNDSVD's u kept by the stores for the starts nndsvd and nndsvda (whose
  # W the stores make from their rows of u; nndsvdar draws its zeros in
  # W's order, here)
  keep_u <- function(init) {
    if (!is.null(session)) session$keep_u(is.character(init) && init %in% c("nndsvd", "nndsvda"))
  }
  progress <- function(hook, verbose, max_iter) {
    shard_progress(hook, verbose, paste0("nmf (", loss, ", ", method, ", sharded)"), max_iter)
  }
  fitter <- function(L1s, L2s, eps, accelerate, tol, threads, verbose, hook, exact) {
    function(s, iters) session$fit(s, iters, tol, hook, exact = exact)
  }
  # (a W gathered from the shards is named in place: only the runs refer to
  # it, and R would otherwise copy it at its next use; `a`: the columns'
  # scale, when W is written to files)
  name_w <- function(W, dn, a) {
    if (!is.null(files)) return(session$finalize(W, seq_along(dn[[2]]), a, dn, "W"))
    cpp_permute_columns_owned(W, seq_along(dn[[2]]), dn)
    W
  }
  discard <- if (!is.null(files)) function(r) session$discard(r$W)
  close <- function() if (!is.null(session)) session$close()
  environment()
}

# NNDSVD's SVD of data in shards (nmf_svd()), read here a shard at a time:
# each shard's NMF data (its weighted data in a weighted fit, nd$wcells),
# divided by the fit's scale, as nmf_data() makes the matrix's.
shard_nmf_each <- function(nd, f) {
  x <- nd$shards
  parts <- if (!is.null(nd$wcells)) nmf_shard_weight_parts(x, nd$wcells)
  for (i in seq_along(x$rows)) {
    src <- unclass(x)$sources[[i]]
    d <- shard_data(src)
    dims <- as.integer(c(d$dims[1], x$dims[2]))
    if (!is.null(parts)) {
      w <- parts[[i]]
      v <- tryCatch(cpp_nmf_wshard_values(d$idx, d$val, dims, w$d, w$r, w$c, w$ei, w$ej, w$ev),
                    error = function(e) abort_shard(src, "failed: {conditionMessage(e)}"))
      d$idx <- d$idx[, v > 0, drop = FALSE]
      d$val <- v[v > 0]
    }
    f(i, d, dims)
  }
}

# small data: the dense matrix (with beta <= 0, its cells below the floor
# raised to it, as a matrix's are: nd$floor)
shard_nmf_dense <- function(nd) {
  X <- matrix(0, nd$dims[1], nd$dims[2])
  shard_nmf_each(nd, function(i, d, dims) {
    rows <- shard_rows(nd$shards, i)
    X[cbind(rows[1] + d$idx[1, ], d$idx[2, ] + 1L)] <<- d$val / nd$scale$s
  })
  if (!is.null(nd$floor)) X[X < nd$floor] <- nd$floor
  X
}

# otherwise the range finder on pieces (cpp_nmf_range_svd()), a piece per
# shard holding its block of Q' (range_pieces()). Those of a weighted fit,
# read here a shard at a time (its weighted values, see shard_nmf_each());
# an unweighted fit's are kept by its session's stores
# (nmf_shard_session()'s products, shard_nmf_range()).
shard_nmf_products <- function(nd, threads) {
  x <- nd$shards
  held <- vector("list", length(x$rows))
  range_pieces(x, function(op, arg, blocks) {
    out <- vector("list", length(held))
    step <- function(i, S) {
      if (!length(shard_rows(x, i))) return()
      r <- range_piece_step(op, held[[i]], if (is.null(blocks)) arg else blocks[[i]], S, threads)
      held[i] <<- list(r$Qt)
      out[i] <<- list(r$out)
    }
    if (op %in% c("start", "btx")) {
      shard_nmf_each(nd, function(i, d, dims) {
        S <- cpp_nmf_shard_state(d$idx, d$val, dims, nd$scale$s)
        step(i, S)
        cpp_nmf_shard_release(S)
      })
    } else {
      for (i in seq_along(held)) step(i, NULL)
    }
    out
  })
}

# The range finder's steps on data in pieces, a piece per shard of `x`
# (the function RRangePieces calls, see cpp_nmf_range_svd()):
# `steps(op, arg, blocks)` runs a step on every shard (`arg` to all, or
# `blocks`, one per shard) and gives the answers: for "gather" and "left"
# each shard's block (NULL for a shard without rows) in the shards' order,
# bound here; otherwise Grams and products, added here (each the sum over
# one or more shards, in the shards' order).
range_pieces <- function(x, steps) {
  function(op, arg) {
    if (op == "set") {
      steps(op, NULL, lapply(seq_along(x$rows), function(i) arg[, shard_rows(x, i), drop = FALSE]))
      return(NULL)
    }
    parts <- steps(op, if (op == "start") t(arg) else arg, NULL)
    parts <- parts[!vapply(parts, is.null, logical(1))]
    switch(op, gather = do.call(cbind, parts), left = do.call(rbind, parts), Reduce(`+`, parts))
  }
}

# whether a step's answers are added over the shards (range_pieces())
range_step_adds <- function(op) op %in% c("start", "apply", "btx")

# A step of the range finder on a shard's piece: `Qt` its block of Q' (l x
# its rows, NULL before "start"), `S` its NMF data (cpp_nmf_shard_state(),
# for "start" and "btx"); gives the block kept and the answer (see
# RRangePieces): "start" (arg H', n x l: X H' kept as rows, its Gram),
# "apply" (arg R^-1: the Gram), "btx" (Q' X), "gather" (the block), "set"
# (arg the new block), "left" (arg U: Q U; the block let go).
range_piece_step <- function(op, Qt, arg, S, threads) {
  switch(op,
    start = {
      Qt <- t(cpp_nmf_product(S, arg, "XZ", threads))
      list(Qt = Qt, out = cpp_range_piece("gram", Qt, NULL, threads))
    },
    apply = {
      r <- cpp_range_piece("apply", Qt, arg, threads)
      list(Qt = r$Qt, out = r$G)
    },
    btx = list(Qt = Qt, out = cpp_nmf_product(S, t(Qt), "WtX", threads)),
    gather = list(Qt = Qt, out = Qt),
    set = list(Qt = arg, out = NULL),
    left = list(Qt = NULL, out = crossprod(Qt, arg)),
    stop("internal error: unknown step of the range finder"))
}

# The sharded NMF of one fit: shards loaded (or described for streaming);
# `fit(init, iters, tol, hook, exact)` runs one start (the fields of
# cpp_nmf_fit()'s answer), `close()` clears the workers. `beta`: that of
# loss = "beta"; `x_floor`: its cells (of the scaled data) below it raised
# to it (beta <= 0 with zeros in x, as nmf() raises a matrix's).
nmf_shard_session <- function(x, cluster, threads, loss, method, s, L1s, L2s, eps, call, files = NULL,
                              accelerate = FALSE, total = NULL, beta = 2, x_floor = 0) {
  eng <- shard_engine(x, cluster, threads, call)
  eng$set_files(files)
  tryCatch(eng$load(), error = function(e) { eng$drop(); stop(e) })
  global <- list(dims = x$dims, s = s, kl = loss == "kl", loss = loss, beta = beta, floor = x_floor,
                 method = method, accelerate = accelerate,
                 l1 = L1s[1], l2 = L2s[1],
                 eps = eps, threads = threads, total = total %||% (shard_total(x) / s),
                 chunk = if (is.null(cluster) && shard_files_streamed(x)) shard_chunk(call))
  # `fit_from(begin, H, ...)`: a start whose W the caller puts on the
  # stores, `begin(eng, run)` (plsa()'s coordinate descent converts its
  # start there, see plsa_cd_shard_session())
  fit_from <- function(begin, H, iters, tol, hook, exact) {
    run <- function(op, args = list()) {
      eng$reduce(eng$run(op, c(list(global = global), args)), "stats")
    }
    begin(eng, run)
    shard_gc(8 * nrow(H) * x$dims[1], full = TRUE)  # the blocks sent: memory of the documents' size
    nmf_pieces_fit(eng, run, H, global, L1s, L2s, iters, tol, hook, exact, wconf)
  }
  # A weighted fit (missing cells, masks, weights; nmf_weight_cells()'s
  # `wc`): each shard gets the weights of its rows; returns the sums of the
  # weighted data (nmf_shard_weights()), from which the fit's scale comes
  # (set with configure()), as in memory from the weighted matrix.
  weigh <- function(wc) {
    parts <- nmf_shard_weight_parts(x, wc)
    res <- eng$each("nmf_wset", function(g) list(ids = g, w = parts[g]))
    sums <- list()
    for (a in res) for (j in seq_along(a$ids)) sums[[a$ids[j]]] <- a$sums[[j]]
    global$weighted <<- TRUE
    list(sx2 = sum(vapply(sums, `[[`, numeric(1), "sx2")), sxl = sum(vapply(sums, `[[`, numeric(1), "sxl")),
         st = sum(vapply(sums, `[[`, numeric(1), "st")), top = max(vapply(sums, `[[`, numeric(1), "top")),
         sxlx = sum(vapply(sums, `[[`, numeric(1), "sxlx")),
         nnz = sum(vapply(sums, `[[`, numeric(1), "nnz")),
         rowtot = unlist(lapply(sums, `[[`, "rowtot"), use.names = FALSE))
  }
  # The weights of a weighted beta-divergence fit (nmf_weight_cells()'s
  # `wc`): each shard keeps those of its cells, which its beta-divergence
  # operations weigh (the data unweighted, as in memory); returns the
  # weighted data's total
  weigh_cells <- function(wc) {
    parts <- nmf_shard_weight_parts(x, wc)
    res <- eng$each("nmf_wset", function(g) list(ids = g, w = parts[g], only = TRUE))
    global$wbeta <<- TRUE
    # (the weighted data's total, whether anything is left to fit)
    sum(vapply(res, function(a) sum(vapply(a$sums, `[[`, numeric(1), "st")), numeric(1)))
  }
  # the fit's scale and penalties (and the weighted loss's constants), when
  # they come after the session (a weighted fit: from weigh())
  configure <- function(s, L1s, L2s, eps, accelerate, threads, wfit = NULL) {
    global$s <<- s; global$l1 <<- L1s[1]; global$l2 <<- L2s[1]; global$eps <<- eps
    global$threads <<- threads
    global$accelerate <<- accelerate
    L1s <<- L1s; L2s <<- L2s
    wconf <<- wfit
    invisible()
  }
  # NNDSVD's range finder on the stores holding the shards (range_pieces()):
  # each keeps its shards' blocks of Q' (shard_nmf_range())
  # the stores' answers, one per shard, in the shards' order
  in_order <- function(res) {
    parts <- vector("list", length(x$rows))
    for (a in res) for (j in seq_along(a$ids)) parts[a$ids[j]] <- list(a$out[[j]])
    parts
  }
  pieces <- range_pieces(x, function(op, arg, blocks) {
    res <- if (is.null(blocks)) eng$run("nmf_range", list(global = global, step = op, arg = arg)) else
      eng$each("nmf_range", function(g) list(ids = g, global = global, step = op, blocks = blocks[g]))
    if (range_step_adds(op)) {
      # (each store's sum over its shards, the stores in their shards' order)
      first <- vapply(res, function(a) if (length(a$ids)) min(a$ids) else Inf, numeric(1))
      return(lapply(res[order(first)], `[[`, "out"))
    }
    in_order(res)
  })
  # With `keep_u(TRUE)` (an NNDSVD start, nndsvd or nndsvda) the last step
  # leaves each shard's rows of u with it: only their parts of the columns'
  # sums (cpp_nndsvd_blocks("part")) come back, kept here for left_parts() in the
  # shards' order, and the range finder gets u without rows; the stores
  # then make their rows of W (nmf_kept_nndsvd(), nmf_shard_fit())
  keep <- FALSE
  kept_parts <- NULL
  products <- function(op, arg) {
    if (op != "left" || !keep) return(pieces(op, arg))
    parts <- in_order(eng$run("nmf_range", list(global = global, step = op, arg = arg, keep = TRUE)))
    kept_parts <<- parts[!vapply(parts, is.null, logical(1))]
    matrix(0, 0, ncol(arg))
  }
  wconf <- NULL
  list(fit = function(init, iters, tol, hook, exact) {
    nmf_shard_fit(fit_from, init, iters, tol, hook, exact)
  }, fit_from = fit_from, close = eng$drop, finalize = eng$finalize, discard = eng$discard,
  weigh = weigh, weigh_cells = weigh_cells, configure = configure, products = products,
  keep_u = function(on) keep <<- on, left_parts = function() kept_parts)
}

# Each shard's part of the weights `wc` (nmf_weight_cells()): its rows'
# weights, the columns' and its deviating cells (rows counted in the shard)
nmf_shard_weight_parts <- function(x, wc) {
  ri <- wc$ei + 1L
  lapply(shard_cell_split(x, ri), function(p) {
    list(d = wc$d, r = wc$r[p$rows], c = wc$c, ei = as.integer(ri[p$sel] - p$rows[1]), ej = wc$ej[p$sel],
         ev = wc$ev[p$sel])
  })
}

# Cells split by the shards holding their rows (`ri`, 1-based rows of the
# first mode): for each shard its rows and which cells lie in them
shard_cell_split <- function(x, ri) {
  lapply(seq_along(x$rows), function(i) {
    rows <- shard_rows(x, i)
    sel <- if (length(rows)) ri >= rows[1] & ri <= rows[length(rows)] else rep(FALSE, length(ri))
    list(rows = rows, sel = sel)
  })
}

nmf_shard_fit <- function(fit_from, init, max_iter, tol, hook, exact) {
  if (!is.null(init$nndsvd)) {
    # NNDSVD's W made by the stores from their rows of u
    begin <- function(eng, run) eng$begin(nndsvd = init$nndsvd)
    H <- init$H
  } else if (!is.null(init$state)) {
    # nmf_init()'s draws: W's by the stores, a column at a time; then H's
    k <- init$k
    begin <- function(eng, run) {
      eng$begin(draw = list(kind = "nmf", state = init$state, k = k, m = init$m, scale = init$scale))
    }
    H <- shard_draws_after(init$state, init$m * k, function() {
      matrix(stats::runif(k * init$n), k, init$n) * init$scale
    })
  } else {
    begin <- function(eng, run) eng$begin(init$W)
    H <- init$H
  }
  fit_from(begin, H, max_iter, tol, hook, exact)
}

# A fit whose rule is written against pieces (aspectr/nmf/piece.h): the
# loop, the stopping rule and the rule run in the core; each request goes
# to every shard where it is (run("nmf_piece")) and the added statistics
# go back.
nmf_pieces_fit <- function(eng, run, H, global, L1s, L2s, max_iter, tol, hook, exact, wconf = NULL) {
  k <- nrow(H)
  last_W <- NULL
  fn <- function(op, input) {
    if (op == "gather") {
      if (!is.null(input$s)) run("nmf_piece", list(req = "scale", input = input))
      # (a factor written to files stays there: the callback gets its handle)
      last_W <<- eng$gather()
      # (the model's W when it is rescaled from the rule's iterate)
      if (!is.null(input$sv) && is.matrix(last_W)) last_W <<- sweep(last_W, 2, drop(input$sv), "/")
      return(list(`@Wt` = if (is.matrix(last_W)) t(last_W) else matrix(0, k, 0)))
    }
    run("nmf_piece", list(req = op, input = input))
  }
  # (the shards of this process reached by the core directly, where it can)
  local <- if (is.null(wconf)) shard_nmf_local(eng, global)
  cb <- function(it, value, model) {
    # (the shards reached by the core leave no R garbage of the rows' size)
    if (is.null(local)) shard_iteration_gc(eng, k, exact)
    if (!is.null(model) && is.null(local)) model$W <- last_W
    if (is.null(hook)) TRUE else hook(it, value, model)
  }
  # KL coordinate descent of shard files in this process: H updated from
  # the files' copy by columns (shard_column_copy()), W whole here
  cols <- NULL
  if (is.null(wconf) && isTRUE(global$kl) && identical(global$method, "cd") && isTRUE(eng$local) &&
      !eng$writes_files() && !isTRUE(eng$keep)) {
    copy <- shard_column_copy(eng$x, global$chunk %||% 65536)
    if (!is.null(copy)) cols <- function(op, input) run("nmf_cols", list(req = op, input = input, copy = copy))
  }
  loss <- if (global$kl) "kl" else "frobenius"
  if (!is.null(wconf)) {
    # the weighted rule (nmf/weighted.h), its divergence from the core
    r <- cpp_nmf_weighted_pieces_fit(fn, H, loss, global$method, wconf$d, wconf$c, wconf$wx2, wconf$klc,
                                     wconf$total, L1s, L2s, global$eps, as.integer(max_iter), tol, global$threads,
                                     cb, exact)
    return(list(W = eng$gather(last = TRUE), H = r$H, objective = r$objective, initial = r$initial,
                iterations = r$iterations, converged = r$converged, stopped = r$stopped, xnorm2 = r$xnorm2,
                divergence = r$divergence, frobenius = r$frobenius, mass = r$mass))
  }
  if (identical(global$loss, "beta")) loss <- "beta"
  r <- cpp_nmf_pieces_fit(fn, H, as.numeric(eng$x$dims[1]), loss, global$method,
                          L1s, L2s, global$eps, isTRUE(global$accelerate), global$total,
                          as.integer(max_iter), tol, global$threads, cb, exact, global$beta %||% 2,
                          global$floor %||% 0, cols, local)
  H <- r$H
  if (loss == "beta") {
    # the divergence of the data the fit read (zeros raised to the floor),
    # term by term as in memory, and the products of the relative error
    last <- fn("beta_final", list(H = H, b = global$beta, eps = global$eps, floor = global$floor))
    xnorm2 <- drop(last$xnorm2)
    restat <- if (global$floor > 0) {
      list(total = drop(last$total), xlogx = drop(last$xlogx), row_totals = unlist(lapply(rt <- last$`@rowtot`, as.numeric)))
    }
    # (weighted: xnorm2 sum omega x^2, and the weighted squared error)
    return(list(W = eng$gather(last = TRUE), H = H, objective = r$objective, initial = r$initial,
                iterations = r$iterations, converged = r$converged, stopped = r$stopped, xnorm2 = xnorm2,
                divergence = drop(last$div), wtxh = sum(last$C * H), WW = last$WW, restat = restat,
                frobenius = if (isTRUE(global$wbeta)) 0.5 * drop(last$frob)))
  }
  # the final model's divergence without the penalties, W'X . H and W'W
  # for the relative error
  last <- fn("eval", list())
  xnorm2 <- drop(last$xnorm2)
  divergence <- if (global$kl) {
    e <- fn("kleval", list(H = H))
    drop(e$constant - e$xlogv) + sum(e$wsum * rowSums(H))
  } else {
    0.5 * max(xnorm2 - 2 * cpp_nmf_inner(last$C, H) + cpp_nmf_inner(last$WW, cpp_nmf_gram(H, global$threads)), 0)
  }
  list(W = eng$gather(last = TRUE), H = H, objective = r$objective, initial = r$initial,
       iterations = r$iterations, converged = r$converged, stopped = r$stopped, xnorm2 = xnorm2,
       divergence = divergence, wtxh = sum(last$C * H), WW = last$WW)
}

# The operations of nmf_shard_fit() on a store (see shard_op_run()): each
# shard's part, added over the store's shards. The shards' rows of W (F0)
# and their A = (X H')' are the store's and are written in place; the k x n
# products W'X of all its shards go to one accumulator. A .shard file
# streamed out of core is read a chunk of cells at a time for each product
# or ratio pass (no whole shard in memory; KL coordinate descent's update of
# W gathers the file's rows, 12 bytes per non-zero); kept shards and other
# files use the NMF data of nmf_shard_state().
shard_nmf_op <- function(st, held, op, args) {
  if (op == "nmf_wset") return(shard_nmf_wset(st, held, args))
  if (op == "nmf_cols") return(shard_nmf_cols(st, held, args))
  if (op == "nmf_range") return(shard_nmf_range(st, held, args))
  if (op != "nmf_piece") stop("unknown operation ", op)
  g <- args$global
  if (isTRUE(g$weighted)) return(shard_nmf_wop(st, held, args))
  # (a request that reads the cells)
  need_data <- args$req %in% c("eval", "wtx", "block", "klmu", "kleval", "her_init", "her_wwork", "her_wproj",
                               "her_w", "her_fin", "kcd_pass", "kcd_cols", "kcd_rows", "klher_init", "klher_h",
                               "klher_w", "beta_w", "beta_wkeep", "beta_h", "beta_eval", "beta_final") ||
    (args$req == "sweep" && !is.null(args$input$H))
  parts <- NULL
  for (key in names(st$shards)) {
    h <- st$shards[[key]]
    fail <- function(e) abort_shard(h$source, "failed: {conditionMessage(e)}")
    streamed <- need_data && !h$keep && shard_streamable(h$source)
    X <- if (need_data && !streamed) nmf_shard_state(st, key, g) else NULL
    # a shard file read a chunk at a time into the store's buffer
    file <- NULL
    if (streamed) {
      check_shard_file(h$source)
      if (is.null(st$buffer)) st$buffer <- cpp_shard_buffer()
      file <- list(buffer = st$buffer, path = shard_stream_path(h$source), dims = as.integer(c(h$rows, g$dims[2])),
                   scale = g$s, chunk = g$chunk %||% 65536)
    }
    if (is.null(h$slots)) st$shards[[key]]$slots <- h$slots <- cpp_piece_slots()
    # (a weighted beta-divergence fit: the shard's weights with its cells)
    w <- if (isTRUE(g$wbeta) && startsWith(args$req, "beta_")) {
      if (is.null(h$w)) stop("internal error: a shard of a weighted fit without its weights")
      h$w
    }
    r <- tryCatch(cpp_nmf_piece_run(X, file, h$F0, h$slots, args$req, args$input, g$threads, isTRUE(h$keep), w),
                  error = fail)
    # a shard read for this operation only is let go at once
    if (!h$keep && !is.null(X)) cpp_nmf_shard_release(X)
    rm(X)
    parts <- if (is.null(parts)) r else shard_add(parts, r)
  }
  list(ids = held, stats = parts)
}

# The shards of a fit in this process as the core's pieces (StorePieces,
# src/nmf_shard_glue.cpp): each one's NMF data kept in memory or its .shard
# file (that of another kind's cache) streamed, its rows of W and slots;
# the core then runs every request on them without a trip through R, as
# shard_nmf_op() would (with a weighted beta-divergence fit's weights of
# each shard's cells, kept for the fit). NULL where requests go through R:
# a cluster, factor files, a shard file read whole again for each request,
# and a weighted beta-divergence fit of shards not all kept in memory
# (whose weights are made per request, one shard at a time, so that a fit
# out of core holds one shard's: cpp_nmf_piece_run()).
shard_nmf_local <- function(eng, g) {
  st <- shard_local_store(eng)
  if (is.null(st)) return(NULL)
  if (isTRUE(g$wbeta) && !all(vapply(st$shards, function(h) isTRUE(h$keep), logical(1)))) return(NULL)
  keys <- names(st$shards)
  shards <- lapply(keys, function(key) {
    h <- st$shards[[key]]
    if (is.null(h$slots)) st$shards[[key]]$slots <- h$slots <- cpp_piece_slots()
    s <- if (isTRUE(h$keep)) list(state = nmf_shard_state(st, key, g), Wt = h$F0, slots = h$slots, kept = TRUE) else {
      check_shard_file(h$source)
      if (is.null(st$buffer)) st$buffer <- cpp_shard_buffer()
      path <- tryCatch(shard_stream_path(h$source), error = function(e) abort_shard(h$source, "failed: {conditionMessage(e)}"))
      list(state = NULL, file = list(buffer = st$buffer, path = path, dims = as.integer(c(h$rows, g$dims[2])),
                                     scale = g$s, chunk = g$chunk %||% 65536),
           Wt = h$F0, slots = h$slots, kept = FALSE)
    }
    if (isTRUE(g$wbeta)) {
      if (is.null(h$w)) stop("internal error: a shard of a weighted fit without its weights")
      s$weights <- h$w
    }
    s
  })
  fail <- function(i, why) abort_shard(st$shards[[keys[i]]]$source, "failed: {why}")
  list(shards = shards, fail = fail)
}

# The store of a fit's shards when the core may run every request on them
# itself (shard_nmf_local(), ntf_kcd_local()): the shards in this process,
# each kept in memory or a .shard file streamed. NULL on a cluster, with
# factor files or with a shard file read whole again for each request.
shard_local_store <- function(eng) {
  if (!isTRUE(eng$local) || eng$writes_files()) return(NULL)
  st <- eng$store()
  if (is.null(st) || !length(st$shards)) return(NULL)
  if (!all(vapply(st$shards, function(h) isTRUE(h$keep) || shard_streamable(h$source), logical(1)))) return(NULL)
  st
}

# A request to the column pieces (Pieces::map_columns()): every block of
# the files' copy by columns (shard_column_copy()), read a chunk at a time
# into the store's buffer, with W whole, from this store's shards (a fit
# in this process: the store holds them all)
shard_nmf_cols <- function(st, held, args) {
  g <- args$global
  copy <- args$copy
  ids <- vapply(st$shards, function(h) h$id, numeric(1))
  if (length(ids) != copy$shards) stop("internal error: column pieces without every shard's rows")
  Wt <- do.call(cbind, lapply(st$shards[order(ids)], function(h) h$F0))
  if (is.null(st$buffer)) st$buffer <- cpp_shard_buffer()
  blocks <- list(paths = copy$paths, start = copy$start, buffer = st$buffer, scale = g$s, chunk = g$chunk %||% 65536)
  r <- tryCatch(cpp_nmf_columns_run(blocks, Wt, args$req, args$input, g$threads),
                error = function(e) {
                  abort_shard(list(kind = "file", path = copy$dir), "(the shards' copy by columns) failed: {conditionMessage(e)}")
                })
  list(ids = held, stats = r)
}

# A shard's data for NMF (divided by the fit's scale): made once per fit
# for a shard kept in memory, read again from a file of another kind than
# .shard (those are streamed, see shard_nmf_op())
nmf_shard_state <- function(st, key, g) {
  h <- st$shards[[key]]
  if (!is.null(h$nmf)) return(h$nmf)
  fail <- function(e) abort_shard(h$source, "failed: {conditionMessage(e)}")
  if (h$keep && is.null(h$data) && shard_read_late(h$source)) {
    # (a .shard file read whole into the store's buffer, see shard_read_late())
    check_shard_file(h$source)
    if (is.null(st$buffer)) st$buffer <- cpp_shard_buffer()
    X <- tryCatch(cpp_nmf_shard_state_file(st$buffer, h$source$path, as.integer(c(h$rows, g$dims[2])), g$s),
                  error = function(e) abort_shard(h$source, "could not be read: {conditionMessage(e)}"))
    if (is.numeric(X)) abort_shard(h$source, "could not be read: {shard_fault_text(X, c(h$rows, g$dims[2]))}")
    st$shards[[key]]$nmf <- X
    return(X)
  }
  d <- if (h$keep) shard_kept_data(st, key, any_order = TRUE) else shard_data(h$source)
  X <- tryCatch(cpp_nmf_shard_state(d$idx, d$val, as.integer(c(d$dims[1], g$dims[2])), g$s),
                error = fail)
  if (h$keep) {
    # the NMF data replace the cells for the rest of the fit (its store is
    # dropped at the end)
    st$shards[[key]]$nmf <- X
    st$shards[[key]]$data <- NULL
  }
  X
}

# A weighted fit's weights to the store's shards among `args$ids` (their
# parts of nmf_shard_weight_parts()), by shard_wset(): each one's sums of
# its weighted data (cpp_nmf_wshard_sums(), unscaled); `only`: the weights
# kept, no weighted file written (a weighted beta-divergence fit)
shard_nmf_wset <- function(st, held, args) {
  shard_wset(st, held, args, "wnmf", function(d, w, rows, streamed) {
    dims <- as.integer(c(d$dims[1], length(w$c)))
    sums <- cpp_nmf_wshard_sums(d$idx, d$val, dims, w$d, w$r, w$c, w$ei, w$ej, w$ev)
    if (!streamed) return(list(sums = sums))
    xt <- cpp_nmf_wshard_values(d$idx, d$val, dims, w$d, w$r, w$c, w$ei, w$ej, w$ev)
    pos <- xt > 0
    list(sums = sums, cells = list(idx = d$idx[, pos, drop = FALSE], val = xt[pos], dims = dims))
  })
}

# The weights of a weighted fit to the store's shards among `args$ids`
# (args$w, their parts), kept by each shard (its fit's state `slot` made
# anew); returns each one's sums of its weighted data, weigh(d, w, rows,
# streamed)$sums. A shard streamed out of core (`streamed`) gets its
# weighted cells (weigh()'s `cells`: idx, val, dims) written once to a
# .shard file of their own, read a chunk at a time as unweighted shards are
# (removed when the store is dropped). `args$only`: the weights kept and
# the sums made, no file written.
shard_wset <- function(st, held, args, slot, weigh) {
  mine <- args$ids %in% held
  ids <- args$ids[mine]
  w <- args$w[mine]
  sums <- vector("list", length(ids))
  for (j in seq_along(ids)) {
    key <- as.character(ids[j])
    h <- st$shards[[key]]
    fail <- function(e) abort_shard(h$source, "failed: {conditionMessage(e)}")
    st$shards[[key]]$w <- w[[j]]
    st$shards[[key]][[slot]] <- NULL
    d <- if (h$keep) shard_kept_data(st, key) else shard_data(h$source)
    streamed <- !isTRUE(args$only) && !h$keep && shard_streamable(h$source)
    r <- tryCatch(weigh(d, w[[j]], h$rows, streamed), error = fail)
    sums[j] <- list(r$sums)
    if (streamed) {
      path <- tempfile("aspectr_weighted_", fileext = ".shard")
      st$wfiles <- c(st$wfiles, path)
      cl <- r$cells
      tryCatch(write_shard_bin(list(idx = cl$idx, val = cl$val, dims = cl$dims,
                                    dimnames = vector("list", length(cl$dims))), path), error = fail)
      st$shards[[key]]$wfile <- path
    }
    rm(d, r)
  }
  list(ids = ids, sums = sums)
}

# A request of a weighted fit (WeightedPiece, nmf/weighted.h) on the store's
# shards: each shard's weighted data made once for a shard kept in memory,
# read and weighted again for each request from a file (one shard at a
# time)
shard_nmf_wop <- function(st, held, args) {
  g <- args$global
  reads <- !args$req %in% c("gather", "scale")
  parts <- NULL
  for (key in names(st$shards)) {
    h <- st$shards[[key]]
    fail <- function(e) abort_shard(h$source, "failed: {conditionMessage(e)}")
    streamed <- reads && !h$keep && !is.null(h$wfile)
    S <- if (reads) nmf_wshard_state(st, key, g, streamed) else NULL
    file <- NULL
    if (streamed) {
      if (is.null(st$buffer)) st$buffer <- cpp_shard_buffer()
      file <- list(buffer = st$buffer, path = h$wfile, dims = as.integer(c(h$rows, g$dims[2])), scale = g$s,
                   chunk = g$chunk %||% 65536)
    }
    if (is.null(h$slots)) st$shards[[key]]$slots <- h$slots <- cpp_piece_slots()
    r <- tryCatch(cpp_nmf_wpiece_run(S, file, h$F0, h$slots, args$req, args$input, g$threads, isTRUE(h$keep)),
                  error = fail)
    if (!h$keep && !streamed && !is.null(S)) cpp_nmf_wshard_release(S)
    rm(S)
    parts <- if (is.null(parts)) r else shard_add(parts, r)
  }
  list(ids = held, stats = parts)
}

# A step of NNDSVD's range finder (range_piece_step()) on the store's
# shards among `args$ids` (all it holds without ids), each keeping its
# block of Q' between the steps (nmf_shard_session()'s products): the
# answers by shard, or their sum over the store's shards in their order
# when they are added (range_step_adds())
shard_nmf_range <- function(st, held, args) {
  mine <- if (is.null(args$ids)) held else args$ids[args$ids %in% held]
  mine <- sort(mine)
  g <- args$global
  out <- lapply(mine, function(i) {
    key <- as.character(i)
    h <- st$shards[[key]]
    if (!h$rows) return(NULL)
    S <- if (args$step %in% c("start", "btx")) nmf_shard_state(st, key, g)
    arg <- if (is.null(args$blocks)) args$arg else args$blocks[[match(i, args$ids)]]
    r <- tryCatch(range_piece_step(args$step, h$range, arg, S, g$threads),
                  error = function(e) abort_shard(h$source, "failed: {conditionMessage(e)}"))
    if (!is.null(S) && !h$keep) cpp_nmf_shard_release(S)
    st$shards[[key]]["range"] <- list(r$Qt)
    if (isTRUE(args$keep)) {
      # (the shard's rows of u kept for its rows of W: their parts of the
      # columns' sums back, see nmf_shard_session())
      st$shards[[key]]$u <- r$out
      return(cpp_nndsvd_blocks("part", r$out))
    }
    r$out
  })
  if (range_step_adds(args$step)) {
    out <- out[!vapply(out, is.null, logical(1))]
    out <- if (length(out)) Reduce(`+`, out)
  }
  list(ids = mine, out = out)
}

# A shard's state of a weighted fit (cpp_nmf_wshard_state()): its weights
# and weighted cells (its weights alone when `streamed` from its weighted
# file), see shard_weighted_state()
nmf_wshard_state <- function(st, key, g, streamed = FALSE) {
  shard_weighted_state(st, key, "wnmf", streamed, function(h, w) {
    d <- if (streamed) list(dims = h$rows) else if (h$keep) shard_kept_data(st, key) else shard_data(h$source)
    cpp_nmf_wshard_state(d$idx, d$val, as.integer(c(d$dims[1], g$dims[2])), g$s, w$d, w$r, w$c, w$ei, w$ej, w$ev)
  })
}

# A shard's state of a weighted fit, made by `make(h, w)` from the shard's
# entry and its weights: once for a shard kept in memory or `streamed`
# from its weighted file (kept in the entry's `slot`, the shard's data then
# let go), again for each request otherwise
shard_weighted_state <- function(st, key, slot, streamed, make) {
  h <- st$shards[[key]]
  if (!is.null(h[[slot]])) return(h[[slot]])
  if (is.null(h$w)) stop("internal error: a shard of a weighted fit without its weights")
  # (a shard that could not be read says so already)
  S <- tryCatch(make(h, h$w), error = function(e) {
    if (inherits(e, "aspectr_error_shard")) stop(e)
    abort_shard(h$source, "failed: {conditionMessage(e)}")
  })
  if (h$keep || streamed) {
    st$shards[[key]][[slot]] <- S
    st$shards[[key]]$data <- NULL
  }
  S
}
