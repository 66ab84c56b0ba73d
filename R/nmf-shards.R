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
  if (isTRUE(accelerate)) {
    abort_input("{.arg accelerate} must be {.code NULL} or {.code FALSE} for data in {.fn shards}, not {.code TRUE}: the extrapolated updates are fitted in one object.",
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
nmf_shard_session <- function(x, cluster, threads, loss, method, s, L1s, L2s, eps, call, files = NULL) {
  eng <- shard_engine(x, cluster, threads, call)
  eng$set_files(files)
  tryCatch(eng$load(), error = function(e) { eng$drop(); stop(e) })
  global <- list(dims = x$dims, s = s, kl = loss == "kl", method = method, l1 = L1s[1], l2 = L2s[1],
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
  kl <- global$kl
  method <- global$method
  threads <- global$threads
  penalized <- any(c(L1s, L2s) > 0)
  run <- function(op, args = list()) {
    eng$reduce(eng$run(op, c(list(global = global), args)), "stats")
  }
  if (!kl) return(nmf_pieces_fit(eng, run, H, global, L1s, L2s, max_iter, tol, hook, exact))
  # Penalty::value()
  pen <- function(w, H) {
    v <- 0
    if (L1s[1] != 0) v <- v + L1s[1] * w$s1
    if (L1s[2] != 0) v <- v + L1s[2] * sum(H)
    if (L2s[1] != 0) v <- v + 0.5 * L2s[1] * w$s2
    if (L2s[2] != 0) v <- v + 0.5 * L2s[2] * sum(H^2)
    v
  }
  gram <- function(F) cpp_nmf_gram(F, threads)
  half_frob <- function(C, D, H, HH) {
    0.5 * max(ev$xnorm2 - 2 * cpp_nmf_inner(C, H) + cpp_nmf_inner(D, HH), 0)
  }
  kl_value <- function(p, H, penalty = TRUE) {
    ev$constant - p$xlogv + sum(p$wsum * rowSums(H)) + if (penalty) pen(p, H) else 0
  }
  # HALS leaves W with unit rows (the core's layout), H carrying the scale;
  # the shards rescale their rows when next asked (`pending`)
  pending <- NULL
  flush <- function() {
    if (!is.null(pending)) run("nmf_scale", list(s = pending))
    pending <<- NULL
  }
  gather <- function(last = FALSE) {
    flush()
    eng$gather(last = last)
  }
  ev <- run("nmf_eval", list(H = H))
  HH <- gram(H)
  # KL coordinate descent knows the objective of the model it makes (not
  # lagged, as the multiplicative updates are)
  kcd <- kl && method == "cd"
  f <- if (kcd) kl_value(ev, H) else if (kl) numeric(0) else half_frob(ev$C, ev$D, H, HH) + pen(ev, H)
  wsum <- ev$wsum
  C <- ev$C
  WW <- ev$D
  # HALS: the sweeps a factor of d columns gets (FrobeniusHALS::max_sweeps)
  sweeps_for <- function(cost, d) min(25, 1 + floor(0.5 * (cost / max(d * k * k, 1))))
  pass <- x$nnz * k
  m <- as.numeric(x$dims[1]); n <- as.numeric(x$dims[2])
  it <- 0L
  converged <- FALSE
  stopped <- FALSE
  while (it < max_iter) {
    if (kcd) {
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
    } else if (kl) {
      st <- run("nmf_kl", list(H = H))
      v <- kl_value(c(st$old, list(xlogv = st$xlogv)), H)
      H <- cpp_nmf_update_h(H, st$num, NULL, st$wsum, "kl", L1s[2], L2s[2], global$eps, 1L, threads)
    } else if (method == "hals") {
      if (it > 0) {
        C <- run("nmf_c", list(s = pending))$C
        pending <- NULL
      }
      H <- cpp_nmf_update_h(H, C, WW, numeric(0), "hals", L1s[2], L2s[2], global$eps,
                            as.integer(sweeps_for(pass + m * k * k, n)), threads)
      HH <- gram(H)
      ms <- sweeps_for(pass + n * k * k, m)
      first <- 0
      sw <- 0
      while (sw < ms) {
        ch <- run("nmf_sweep", list(first = sw == 0, H = if (sw == 0) H, HH = HH))$change
        sw <- sw + 1
        if (sw == 1) first <- ch else if (ch <= 0.1 * 0.1 * first) break
      }
      w <- run("nmf_wfin")
      WW <- w$D
      v <- 0.5 * max(ev$xnorm2 - 2 * w$inner + cpp_nmf_inner(WW, HH), 0) + pen(w, H)
      if (!penalized) {
        # unit_rows(): W's rows to unit norm, H's rows take the scale. A row
        # whose sum of squares is 0 or not finite (entries below 1e-154 or
        # above 1e154 in units of max(x)) keeps its scale here, where the
        # in-memory rule takes a scaled norm: the model is the same, its
        # split between W and H differs.
        nr <- sqrt(w$wsq)
        sc <- ifelse(nr > 0 & is.finite(nr), nr, 1)
        WW <- WW / sc
        WW <- t(t(WW) / sc)
        H <- H * sc
        pending <- sc
      }
    } else {
      st <- run("nmf_alt", list(H = H, HH = HH))
      H <- cpp_nmf_update_h(H, st$C, st$D, numeric(0), method, L1s[2], L2s[2], global$eps, 1L, threads)
      HH <- gram(H)
      v <- half_frob(st$C, st$D, H, HH) + pen(st, H)
    }
    it <- it + 1L
    # the iteration's garbage (statistics of the terms' size) freed now
    # rather than when R next collects
    shard_iteration_gc(eng, k, exact)
    # (the KL trace is lagged: the callback's objective is the new model's)
    r <- shard_iteration(f, v, it, tol, hook, exact, function(last) {
      if (kl && !kcd) {
        flush()
        last <- kl_value(run("nmf_eval", list(H = H)), H)
      }
      list(value = last, model = list(W = gather(), H = H))
    })
    f <- r$f
    if (r$status == "stopped") { stopped <- TRUE; break }
    if (r$status == "converged") { converged <- TRUE; break }
  }
  flush()
  # the final model's objective (lagged KL), its divergence without the
  # penalties and W'X . H for the relative error
  last <- run("nmf_eval", list(H = H, wtx = TRUE))
  HH <- gram(H)
  if (kl) {
    if (!kcd) f <- c(f, kl_value(last, H))
    divergence <- kl_value(last, H, penalty = FALSE)
  } else {
    divergence <- half_frob(last$C, last$D, H, HH)
  }
  list(W = gather(last = TRUE), H = H, objective = f[-1], initial = f[1], iterations = it,
       converged = converged, stopped = stopped, xnorm2 = ev$xnorm2, divergence = divergence,
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
      return(list(`@Wt` = if (is.matrix(last_W)) t(last_W) else matrix(0, k, 0)))
    }
    run("nmf_piece", list(req = op, input = input))
  }
  cb <- function(it, value, model) {
    shard_iteration_gc(eng, k, exact)
    if (!is.null(model)) model$W <- last_W
    if (is.null(hook)) TRUE else hook(it, value, model)
  }
  r <- cpp_nmf_pieces_fit(fn, H, as.numeric(eng$x$dims[1]), global$method, L1s, L2s, global$eps,
                          as.integer(max_iter), tol, global$threads, cb, exact)
  H <- r$H
  last <- run("nmf_eval", list(H = H, wtx = TRUE))
  HH <- cpp_nmf_gram(H, global$threads)
  divergence <- 0.5 * max(last$xnorm2 - 2 * cpp_nmf_inner(last$C, H) + cpp_nmf_inner(last$D, HH), 0)
  list(W = eng$gather(last = TRUE), H = H, objective = r$objective, initial = r$initial,
       iterations = r$iterations, converged = r$converged, stopped = r$stopped, xnorm2 = last$xnorm2,
       divergence = divergence, wtxh = sum(last$C * H), WW = last$D)
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
    first <- op == "nmf_sweep" && isTRUE(args$first)
    # (a request of a fit in pieces that reads the cells)
    piece_data <- op == "nmf_piece" &&
      (args$req %in% c("eval", "wtx", "block") || (args$req == "sweep" && !is.null(args$input$H)))
    need_data <- op %in% c("nmf_eval", "nmf_alt", "nmf_c", "nmf_kl", "nmf_kcd_pass", "nmf_kcd_rows") || first ||
      piece_data
    streamed <- need_data && !h$keep && shard_streamable(h$source)
    # (a shard read for one operation: only the layout it needs)
    layout <- if (h$keep) 0L else if (op == "nmf_kcd_rows") 2L else if (op == "nmf_kcd_pass") 1L else 0L
    X <- if (need_data && !streamed) nmf_shard_state(st, key, g, layout) else NULL
    # a shard file read a chunk at a time into the store's buffer, by `f`
    # (one of the cpp_nmf_shard_*stream() functions)
    if (streamed) {
      check_shard_file(h$source)
      stream_path <- shard_stream_path(h$source)
    }
    from_file <- function(f, ...) {
      if (is.null(st$buffer)) st$buffer <- cpp_shard_buffer()
      f(st$buffer, stream_path, as.integer(c(h$rows, g$dims[2])), g$s, ...)
    }
    stream <- function(Wt = NULL, acc = NULL, H = NULL, A = NULL) {
      from_file(cpp_nmf_shard_stream, Wt, acc, H, A, g$chunk %||% 65536)
    }
    if (op == "nmf_piece" && is.null(h$slots)) st$shards[[key]]$slots <- h$slots <- cpp_piece_slots()
    if (first && (is.null(h$A) || !identical(dim(h$A), dim(F0)))) {
      st$shards[[key]]$A <- h$A <- matrix(0, k, ncol(F0))
    }
    if (op %in% c("nmf_c", "nmf_scale") && !is.null(args$s)) cpp_nmf_scale_in_place(F0, args$s)
    r <- tryCatch(switch(op,
      nmf_eval = if (streamed && g$kl) {
        from_file(cpp_nmf_shard_kl_eval_stream, F0, args$H, isTRUE(args$wtx), if (isTRUE(args$wtx)) wtx_to(k),
                  g$chunk %||% 65536, g$threads)
      } else if (streamed) {
        c(cpp_nmf_wsums(F0, NULL, g$threads), list(xnorm2 = stream(F0, wtx_to(k))))
      } else {
        cpp_nmf_shard_eval(X, F0, args$H, g$kl, isTRUE(args$wtx), if (!g$kl || isTRUE(args$wtx)) wtx_to(k),
                           g$threads)
      },
      nmf_alt = if (streamed) {
        A <- matrix(0, k, ncol(F0))
        stream(H = args$H, A = A)
        cpp_nmf_block_in_place(F0, A, args$HH, g$method, g$l1, g$l2, g$eps, g$threads)
        rm(A)
        stream(F0, wtx_to(k))
        cpp_nmf_wsums(F0, NULL, g$threads)
      } else {
        cpp_nmf_shard_alt(X, F0, args$H, args$HH, g$method, g$l1, g$l2, g$eps, wtx_to(k), g$threads)
      },
      nmf_c = {
        if (streamed) stream(F0, wtx_to(k)) else cpp_nmf_shard_wtx(X, F0, wtx_to(k), g$threads)
        list()
      },
      nmf_scale = list(),
      nmf_sweep = {
        if (first && streamed) stream(H = args$H, A = h$A)
        list(change = cpp_nmf_shard_sweep(if (first && !streamed) X, F0, h$A, args$H, args$HH, g$l1, g$l2,
                                          g$threads))
      },
      nmf_wfin = cpp_nmf_wsums(F0, h$A, g$threads),
      nmf_piece = cpp_nmf_piece_run(
        if (!streamed) X,
        if (streamed) {
          if (is.null(st$buffer)) st$buffer <- cpp_shard_buffer()
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
      nmf_kl = if (streamed) {
        from_file(cpp_nmf_shard_kl_stream, F0, args$H, g$l1, g$l2, g$eps, g$chunk %||% 65536, g$threads)
      } else {
        cpp_nmf_shard_kl(X, F0, args$H, g$l1, g$l2, g$eps, g$threads)
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
