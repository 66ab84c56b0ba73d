# nmf() of data in shards(): the rows of W belong to the rows of X, so W is
# updated shard by shard where the shards are (in this process, streamed
# from files, or on the workers of a cluster) and only H, H H' and the k x n
# and k x k sums W'X and W'W travel. The master runs the in-memory rule's
# steps in the same order on the added parts (aspectr/nmf/shard.h), so the
# fit equals the in-memory fit with the same start up to rounding.

# What nmf() needs of sharded data in place of nmf_data()'s form, after
# checking that the fit asked for can run on shards.
nmf_shard_data <- function(x, loss, method, accelerate, init, init_missing, call) {
  check_tensor_shards(x, "nmf", call)
  if (length(x$dims) != 2) {
    abort_input("{.arg x} must be a matrix split into {.fn shards} for {.fn nmf}, not {length(x$dims)}-way data (see {.fn ntf}).",
                "value", arg = "x", call = call)
  }
  if (x$nnz == 0) abort_input("{.arg x} has no non-zero cells.", "empty", arg = "x", call = call)
  ok <- (loss == "frobenius" && method %in% c("hals", "anls", "mu", "als")) || (loss == "kl" && method %in% c("cd", "mu"))
  if (!ok) {
    abort_input("{.code loss = \"{loss}\"} with {.code method = \"{method}\"} needs the data in one object; for data in {.fn shards} use {.code loss = \"frobenius\"} ({.val hals}, {.val anls}, {.val mu} or {.val als}) or {.code loss = \"kl\"} ({.val cd} or {.val mu}).",
                "argument", arg = "method", call = call)
  }
  if (isTRUE(accelerate) && loss == "kl") {
    abort_input("{.arg accelerate} must be {.code NULL} or {.code FALSE} for KL updates of data in {.fn shards}, not {.code TRUE}: the extrapolated KL updates are fitted in one object.",
                "argument", arg = "accelerate", call = call)
  }
  if (is.character(init) && !init_missing && !identical(init, "random")) {
    abort_input("{.arg init} must be {.val random}, a list of factors or an earlier fit for data in {.fn shards}, not {.val {init}}: NNDSVD needs the singular vectors of the whole matrix.",
                "argument", arg = "init", call = call)
  }
  s <- max(vapply(x$meta, function(m) m$top, numeric(1)))
  total <- shard_total(x)
  list(dense = NULL, dims = x$dims, dimnames = x$dimnames, nnz = x$nnz, total = total / s,
       neg_entropy = shard_summary(x)$neg_entropy,
       row_totals = unlist(lapply(x$meta, function(m) m$doc_totals), use.names = FALSE) / s,
       loglik_const = sum(vapply(x$meta, function(m) m$loglik_const, numeric(1))),
       scale = list(s = s, a = sqrt(s)))
}

# The sharded NMF of one fit: shards loaded (or described for streaming);
# `fit(init, iters, tol, hook, exact)` runs one start (the fields of
# cpp_nmf_fit()'s answer), `close()` clears the workers.
nmf_shard_session <- function(x, cluster, threads, loss, method, s, L1s, L2s, eps, call, files = NULL,
                              accelerate = FALSE) {
  eng <- shard_engine(x, cluster, threads, call)
  eng$set_files(files)
  tryCatch(eng$load(), error = function(e) { eng$drop(); stop(e) })
  global <- list(dims = x$dims, s = s, kl = loss == "kl", method = method, accelerate = accelerate,
                 l1 = L1s[1], l2 = L2s[1],
                 eps = eps, threads = threads, total = shard_total(x) / s,
                 chunk = if (is.null(cluster) && shard_files_streamed(x)) shard_chunk(call))
  list(fit = function(init, iters, tol, hook, exact) {
    nmf_shard_fit(eng, init, global, L1s, L2s, iters, tol, hook, exact)
  }, close = eng$drop, finalize = eng$finalize, discard = eng$discard)
}

nmf_shard_fit <- function(eng, init, global, L1s, L2s, max_iter, tol, hook, exact) {
  x <- eng$x
  if (!is.null(init$state)) {
    # nmf_init()'s draws: W's by the stores, a column at a time; then H's
    k <- init$k
    eng$begin(draw = list(kind = "nmf", state = init$state, k = k, m = init$m, scale = init$scale))
    H <- shard_draws_after(init$state, init$m * k, function() {
      matrix(stats::runif(k * init$n), k, init$n) * init$scale
    })
  } else {
    k <- nrow(init$H)
    eng$begin(init$W)
    H <- init$H
  }
  shard_gc(8 * k * x$dims[1], full = TRUE)  # the blocks sent: memory of the documents' size
  run <- function(op, args = list()) {
    eng$reduce(eng$run(op, c(list(global = global), args)), "stats")
  }
  if (!(global$kl && global$method == "cd")) {
    return(nmf_pieces_fit(eng, run, H, global, L1s, L2s, max_iter, tol, hook, exact))
  }
  threads <- global$threads
  penalized <- any(c(L1s, L2s) > 0)
  # Penalty::value()
  pen <- function(w, H) {
    v <- 0
    if (L1s[1] != 0) v <- v + L1s[1] * w$s1
    if (L1s[2] != 0) v <- v + L1s[2] * sum(H)
    if (L2s[1] != 0) v <- v + 0.5 * L2s[1] * w$s2
    if (L2s[2] != 0) v <- v + 0.5 * L2s[2] * sum(H^2)
    v
  }
  kl_value <- function(p, H, penalty = TRUE) {
    ev$constant - p$xlogv + sum(p$wsum * rowSums(H)) + if (penalty) pen(p, H) else 0
  }
  ev <- run("nmf_eval", list(H = H))
  # KL coordinate descent knows the objective of the model it makes (not
  # lagged)
  f <- kl_value(ev, H)
  wsum <- ev$wsum
  it <- 0L
  converged <- FALSE
  stopped <- FALSE
  while (it < max_iter) {
    # KLCD::step(): H's columns solved by the master in passes over the
    # shards, then each shard's rows of W, then the best scale of the model
    H <- nmf_kcd_h(run, H, wsum + L1s[2], L2s[2], !eng$keep)
    st <- run("nmf_kcd_rows", list(H = H))
    wsum <- st$wsum
    V <- sum(wsum * rowSums(H))
    if (!penalized && V > 0 && global$total > 0) {
      a <- global$total / V
      H <- H * a
      v <- ev$constant - st$xlogv - global$total * log(a) + global$total
    } else {
      v <- ev$constant - st$xlogv + V + pen(st, H)
    }
    it <- it + 1L
    # the iteration's garbage (statistics of the terms' size) freed now
    # rather than when R next collects
    shard_iteration_gc(eng, k, exact)
    r <- shard_iteration(f, v, it, tol, hook, exact, function(last) {
      list(value = last, model = list(W = eng$gather(), H = H))
    })
    f <- r$f
    if (r$status == "stopped") { stopped <- TRUE; break }
    if (r$status == "converged") { converged <- TRUE; break }
  }
  # the final model's divergence without the penalties and W'X . H for the
  # relative error
  last <- run("nmf_eval", list(H = H, wtx = TRUE))
  list(W = eng$gather(last = TRUE), H = H, objective = f[-1], initial = f[1], iterations = it,
       converged = converged, stopped = stopped, xnorm2 = ev$xnorm2, divergence = kl_value(last, H, penalty = FALSE),
       wtxh = sum(last$C * H), WW = last$D)
}

# A fit whose rule is written against pieces (aspectr/nmf/piece.h): the
# loop, the stopping rule and the rule run in the core; each request goes
# to every shard where it is (run("nmf_piece")) and the added statistics
# go back.
nmf_pieces_fit <- function(eng, run, H, global, L1s, L2s, max_iter, tol, hook, exact) {
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
  cb <- function(it, value, model) {
    shard_iteration_gc(eng, k, exact)
    if (!is.null(model)) model$W <- last_W
    if (is.null(hook)) TRUE else hook(it, value, model)
  }
  r <- cpp_nmf_pieces_fit(fn, H, as.numeric(eng$x$dims[1]), if (global$kl) "kl" else "frobenius", global$method,
                          L1s, L2s, global$eps, isTRUE(global$accelerate),
                          as.integer(max_iter), tol, global$threads, cb, exact)
  H <- r$H
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

# H's columns by KL coordinate descent given the shards' W (c: W's column
# sums + l1): the master's solver asks for passes over the shards, each
# shard adding its part of every column's sums, until every column is done.
# Shards kept for the fit keep their v = G h between passes; the others
# compute it from the coefficients sent (`with_hv`).
nmf_kcd_h <- function(run, H, c, l2, with_hv) {
  solver <- cpp_kcd_columns(H, c, l2)
  req <- cpp_kcd_next(solver, NULL, with_hv)
  while (!req$done) {
    req$done <- NULL
    sums <- run("nmf_kcd_pass", req)$sums
    req <- cpp_kcd_next(solver, sums, with_hv)
  }
  req$H
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
  g <- args$global
  parts <- NULL
  acc <- NULL
  wtx_to <- function(k) {
    if (is.null(acc)) acc <<- matrix(0, k, g$dims[2])
    acc
  }
  for (key in names(st$shards)) {
    h <- st$shards[[key]]
    F0 <- h$F0
    k <- nrow(F0)
    fail <- function(e) abort_shard(h$source, "failed: {conditionMessage(e)}")
    # (a request of a fit in pieces that reads the cells)
    piece_data <- op == "nmf_piece" &&
      (args$req %in% c("eval", "wtx", "block", "klmu", "kleval", "her_init", "her_wwork", "her_wproj", "her_w",
                       "her_fin") ||
         (args$req == "sweep" && !is.null(args$input$H)))
    need_data <- op %in% c("nmf_eval", "nmf_kcd_pass", "nmf_kcd_rows") || piece_data
    streamed <- need_data && !h$keep && shard_streamable(h$source)
    # (a shard read for one operation: only the layout it needs)
    layout <- if (h$keep) 0L else if (op == "nmf_kcd_rows") 2L else if (op == "nmf_kcd_pass") 1L else 0L
    X <- if (need_data && !streamed) nmf_shard_state(st, key, g, layout) else NULL
    # a shard file read a chunk at a time into the store's buffer, by `f`
    # (one of the cpp_nmf_shard_*stream() functions)
    if (streamed) {
      check_shard_file(h$source)
      stream_path <- shard_stream_path(h$source)
      if (is.null(st$buffer)) st$buffer <- cpp_shard_buffer()
    }
    from_file <- function(f, ...) f(st$buffer, stream_path, as.integer(c(h$rows, g$dims[2])), g$s, ...)
    if (op == "nmf_piece" && is.null(h$slots)) st$shards[[key]]$slots <- h$slots <- cpp_piece_slots()
    r <- tryCatch(switch(op,
      # (KL coordinate descent's objective)
      nmf_eval = if (streamed) {
        from_file(cpp_nmf_shard_kl_eval_stream, F0, args$H, isTRUE(args$wtx), if (isTRUE(args$wtx)) wtx_to(k),
                  g$chunk %||% 65536, g$threads)
      } else {
        cpp_nmf_shard_eval(X, F0, args$H, TRUE, isTRUE(args$wtx), if (isTRUE(args$wtx)) wtx_to(k), g$threads)
      },
      nmf_piece = cpp_nmf_piece_run(
        X,
        if (streamed) {
          list(buffer = st$buffer, path = stream_path, dims = as.integer(c(h$rows, g$dims[2])), scale = g$s,
               chunk = g$chunk %||% 65536)
        },
        F0, h$slots, args$req, args$input, g$threads),
      nmf_kcd_pass = if (streamed) {
        from_file(cpp_nmf_shard_kcd_pass_stream, F0, args$hv, args$rd, args$rn, g$chunk %||% 65536, g$threads)
      } else {
        # the shard's v = G h (kept shards: kept between passes, made on
        # the first pass of each solve, which computes it)
        if (h$keep && (is.null(h$v) || length(h$v) != cpp_nmf_shard_nnz(X))) {
          if (!isTRUE(args$reset)) stop("internal error: a pass that moves a v never computed")
          st$shards[[key]]$v <- h$v <- numeric(cpp_nmf_shard_nnz(X))
        }
        cpp_nmf_shard_kcd_pass(X, F0, args$hv, if (h$keep) h$v, isTRUE(args$reset), args$rd, args$rn,
                               args$d, g$threads)
      },
      nmf_kcd_rows = {
        # (a shard file streamed: its rows gathered in two passes, a chunk at
        # a time)
        if (streamed) X <- from_file(cpp_nmf_shard_rows_stream, g$chunk %||% 65536)
        cpp_nmf_shard_kcd_rows(X, F0, args$H, g$l1, g$l2, layout == 2L, g$threads)
      },
      stop("unknown operation ", op)),
      error = fail)
    # a shard read for this operation only is let go at once
    if (!h$keep && !is.null(X)) cpp_nmf_shard_release(X)
    rm(X)
    parts <- if (is.null(parts)) r else shard_add(parts, r)
  }
  if (!is.null(acc)) parts$C <- acc
  list(ids = held, stats = parts)
}

# A shard's data for NMF (divided by the fit's scale): made once per fit
# for a shard kept in memory, read again from a file of another kind than
# .shard (those are streamed, see shard_nmf_op())
nmf_shard_state <- function(st, key, g, layout = 0L) {
  h <- st$shards[[key]]
  if (!is.null(h$nmf)) return(h$nmf)
  fail <- function(e) abort_shard(h$source, "failed: {conditionMessage(e)}")
  d <- if (h$keep) h$data else shard_data(h$source)
  X <- tryCatch(cpp_nmf_shard_state(d$idx, d$val, as.integer(c(d$dims[1], g$dims[2])), g$s, layout),
                error = fail)
  if (h$keep) {
    # the NMF data replace the cells for the rest of the fit (its store is
    # dropped at the end)
    st$shards[[key]]$nmf <- X
    st$shards[[key]]$data <- NULL
  }
  X
}
