# ntf() of data in shards() with missing cells, masks or weights (loss =
# "kl" with method = "cd" or "mu"; loss = "frobenius" with "hals" or "mu"): the
# weighted updates of the in-memory fit (solvers/cp_weighted.h) on pieces
# (solvers/cp_weighted_pieces.h).
# The first mode's rows belong to the shards, which update them in place
# (in this process, read from files, or on the workers of a cluster); the
# other modes are updated on the master from k x d_n sums over the shards,
# mode after mode as in memory, so the fit equals the in-memory fit with
# the same start up to rounding.

# The cells of an ntf() fit in shards (the fields of ntf_memory_source()):
# a weighted fit's shards weigh their cells where they are (the session
# `wsession`, opened by load()), the fit's scale and sums from theirs; the
# other fits' session opened by fitter_kl() (coordinate descent:
# solvers/cd_pieces.h; EM: solvers/pieces_em.h) or fitter_cp() (the CP
# updates, solvers/cp_pieces.h); random starts whose first factor the
# shards' stores draw; the first factor in `files` finalized, a beaten
# run's discarded. (`call`: the fit's, for the sessions' messages; `env`:
# the frame input errors name)
ntf_shard_source <- function(x, cluster, files, call, env = rlang::caller_env()) {
  force(env)  # (the fit's frame, named by errors raised after this returns)
  data <- wd <- nnz <- wsession <- session <- NULL
  count_data <- FALSE
  load <- function(loss, weighted, wargs) {
    if (weighted) {
      # each shard weighs its cells where it is; the fit's scale and sums
      # come from theirs
      wc <- ntf_weight_cells(x$dims, NULL, wargs$mask, wargs$observed, wargs$weights, wargs$mode_weights,
                             call = env)
      wsession <<- ntf_wshard_session(x, cluster, call, files)
      sums <- wsession$weigh(wc)
      wd <<- c(wc, sums, list(dims = x$dims, dimnames = x$dimnames))
      if (!(sums$nnz > 0)) {
        abort_nothing_weighted(call = env)
      }
      data <<- list(dims = x$dims, dimnames = x$dimnames, total = sums$st)
      nnz <<- sums$nnz
    } else {
      data <<- shard_as_data(x)
      count_data <<- shard_count_data(x, "ntf", likelihood = loss == "kl", call = env)
      nnz <<- x$nnz
    }
    invisible()
  }
  random_aspect <- function(dims, k) random_start_lazy(dims, k)
  random_cp <- function(dims, k, scale) ntf_lazy_random(dims, k, scale)
  # (the largest of the shards' values, and the total of x / s from each
  # one's total divided by its largest, see shard_meta())
  tops <- function() vapply(x$meta, function(m) m$top, numeric(1))
  scale <- function() pow2_scale(tops())
  total_scaled <- function(s) sum(vapply(x$meta, function(m) m$scaled, numeric(1)) * (tops() / s))
  fitter_kl <- function(method, tol, threads, verbose, hook, exact) {
    session <<- if (method == "cd") ntf_kshard_session(x, cluster, threads, call, files) else
      shard_em_session(x, cluster, threads, 1, call, files = files)
    function(init, iters) session$fit(init, iters, tol, hook, exact = exact)
  }
  fitter_cp <- function(method, s, tol, threads, verbose, hook, exact) {
    session <<- ntf_fshard_session(x, cluster, threads, s, call, files)
    function(init, iters) session$fit(init, iters, method, tol, hook, exact = exact)
  }
  loglik_const <- function() data$loglik_const
  # (the first mode's factor in files: only the best run's kept)
  finalize <- function(...) (wsession %||% session)$finalize(...)
  discard <- if (!is.null(files)) function(r) session$discard(r$factors[[1]])
  close <- function() {
    if (!is.null(session)) session$close()
    if (!is.null(wsession)) wsession$close()
  }
  environment()
}

# The session of one fit: shards loaded; `weigh(wc)` gives each shard its
# part of the weights `wc` (ntf_weight_cells()) and returns the sums of the
# weighted data; `configure(s, klc, threads, loss, method, wx2)` the fit's
# scale, loss and method; `fit(init, iters,
# tol, hook, exact)` runs one start (factors d_n x k; with `files`, the
# first mode's written beside the shards, an aspectr_shard_run); `close()`
# clears the workers.
ntf_wshard_session <- function(x, cluster, call, files = NULL) {
  eng <- shard_engine(x, cluster, 1L, call)
  eng$set_files(files)
  tryCatch(eng$load(), error = function(e) { eng$drop(); stop(e) })
  global <- list(dims = x$dims, threads = 1L, s = NA_real_,
                 chunk = if (is.null(cluster) && shard_files_streamed(x)) shard_chunk(call))
  wc <- NULL
  klc <- NA_real_
  weigh <- function(w) {
    wc <<- w
    parts <- ntf_shard_weight_parts(x, w)
    res <- eng$each("ntf_wset", function(g) list(ids = g, w = parts[g]))
    sums <- list()
    for (a in res) for (j in seq_along(a$ids)) sums[[a$ids[j]]] <- a$sums[[j]]
    field <- function(f) vapply(sums, `[[`, numeric(1), f)
    list(nnz = sum(field("nnz")), st = sum(field("st")), stl = sum(field("stl")), sx2 = sum(field("sx2")),
         top = max(field("top")))
  }
  loss <- "kl"; method <- "mu"; wx2 <- 0; total <- 0
  configure <- function(s, constant, threads, loss_ = "kl", method_ = "mu", wx2_ = 0, total_ = 0) {
    global$s <<- s
    global$threads <<- threads
    klc <<- constant
    loss <<- loss_; method <<- method_; wx2 <<- wx2_; total <<- total_
    invisible()
  }
  fit <- function(init, iters, tol, hook, exact) {
    run <- function(op, args = list()) eng$reduce(eng$run(op, c(list(global = global), args)), "stats")
    eng$begin(F0 = init[[1]])
    fn <- function(op, input) {
      if (op == "gather") return(list(`@F0` = t(eng$gather())))
      run("ntf_wpiece", list(req = op, input = input))
    }
    cb <- function(it, value, model) {
      shard_iteration_gc(eng, ncol(init[[2]]), exact)
      if (is.null(hook)) TRUE else hook(it, value, model)
    }
    r <- cpp_ntf_weighted_pieces_fit(fn, init[-1], wc$d, wc$v, klc, as.integer(iters), tol, global$threads, cb,
                                     exact, loss, method, wx2, total)
    list(factors = c(list(eng$gather(last = TRUE)), r$shared), objective = r$objective, initial = r$initial,
         iterations = r$iterations, converged = r$converged, stopped = r$stopped)
  }
  list(weigh = weigh, configure = configure, fit = fit, close = eng$drop, finalize = eng$finalize,
       discard = eng$discard, files = !is.null(files))
}

# Each shard's part of the weights `wc` (ntf_weight_cells()): its rows'
# weights of the first mode, the other modes' and its deviating cells
# (their first index counted in the shard)
ntf_shard_weight_parts <- function(x, wc) {
  lapply(shard_cell_split(x, wc$eidx[1, ] + 1L), function(p) {
    e <- wc$eidx[, p$sel, drop = FALSE]
    if (ncol(e)) e[1, ] <- e[1, ] - (p$rows[1] - 1L)
    list(d = wc$d, v = c(list(wc$v[[1]][p$rows]), wc$v[-1]), eidx = e, ev = wc$ev[p$sel])
  })
}

# The operations of the weighted fit on a store (see shard_op_run()):
# "ntf_wset" (the shards' weights) and "ntf_wpiece" (a request of
# CPWeightedPiece, added over the store's shards). A shard kept in memory
# has its weighted cells made once; one streamed from a .shard file has
# them written once to a .shard file of their own, read a chunk at a time
# for each request; another file is read and weighed again for each
# request (one shard at a time).
shard_ntf_op <- function(st, held, op, args) {
  if (op == "ntf_wset") return(shard_ntf_wset(st, held, args))
  if (op == "ntf_fpiece") return(shard_ntf_fop(st, held, args))
  if (op == "ntf_kpiece") return(shard_ntf_fop(st, held, args, kcd = TRUE))
  if (op != "ntf_wpiece") stop("unknown operation ", op)
  g <- args$global
  parts <- NULL
  for (key in names(st$shards)) {
    h <- st$shards[[key]]
    fail <- function(e) abort_shard(h$source, "failed: {conditionMessage(e)}")
    streamed <- !h$keep && !is.null(h$wfile)
    S <- ntf_wshard_state(st, key, g, streamed)
    file <- NULL
    if (streamed) {
      if (is.null(st$buffer)) st$buffer <- cpp_shard_buffer()
      file <- list(buffer = st$buffer, path = h$wfile, scale = g$s, chunk = g$chunk %||% 65536)
    }
    input <- args$input
    # (KL coordinate descent: the rows entering a step kept, a copy, to
    # give back when rounding made the step worse)
    if (args$req == "ntf_wcd0" && isTRUE(input$save == 1)) st$shards[[key]]$F0keep <- h$F0 + 0
    if (args$req == "ntf_wcdrestore") input$old <- h$F0keep
    r <- tryCatch(cpp_ntf_wpiece_run(S, file, h$F0, args$req, input, g$threads), error = fail)
    # a shard read for this operation only is let go at once
    if (!h$keep && !streamed) cpp_ntf_wshard_release(S)
    rm(S)
    parts <- if (is.null(parts)) r else shard_add(parts, r)
  }
  list(ids = held, stats = parts)
}

# A shard's weighted cells: x~ = omega x at its cells where x~ > 0, from
# its data and its part of the weights (ntf_shard_weight_parts())
ntf_wshard_cells <- function(d, w, rows) {
  dims <- as.integer(c(rows, d$dims[-1]))
  ij <- t(d$idx) + 1L
  wc <- list(d = w$d, v = w$v, ev = w$ev, ek = ntf_cell_keys(t(w$eidx) + 1L, dims))
  tv <- ntf_weigh_values(ij, d$val, dims, wc)
  pos <- tv > 0
  list(idx = d$idx[, pos, drop = FALSE], xv = d$val[pos], tv = tv[pos], dims = dims)
}

# The weights of the store's shards among `args$ids`, by shard_wset()
# (R/family-nmf-shards.R): each one's sums of its weighted data (unscaled)
shard_ntf_wset <- function(st, held, args) {
  shard_wset(st, held, args, "wntf", function(d, w, rows, streamed) {
    wd <- ntf_wshard_cells(d, w, rows)
    list(sums = list(nnz = length(wd$tv), st = sum(wd$tv), stl = sum(wd$tv * log(wd$xv)),
                     sx2 = sum(wd$tv * wd$xv), top = if (length(wd$xv)) max(wd$xv) else 0),
         cells = if (streamed) list(idx = wd$idx, val = wd$tv, dims = wd$dims))
  })
}

# A shard's state of the weighted fit (cpp_ntf_wshard_state(), its cells
# divided by the fit's scale g$s; its weights alone when `streamed` from
# its weighted file), see shard_weighted_state()
ntf_wshard_state <- function(st, key, g, streamed = FALSE) {
  shard_weighted_state(st, key, "wntf", streamed, function(h, w) {
    if (streamed) return(cpp_ntf_wshard_state(NULL, NULL, as.integer(c(h$rows, g$dims[-1])), w$d, w$v, w$eidx, w$ev))
    d <- if (h$keep) shard_kept_data(st, key) else shard_data(h$source)
    wd <- ntf_wshard_cells(d, w, h$rows)
    cpp_ntf_wshard_state(wd$idx, wd$tv / g$s, wd$dims, w$d, w$v, w$eidx, w$ev)
  })
}

# ntf(loss = "frobenius") of data in shards(): the HALS or multiplicative
# updates of the in-memory fit (solvers/cp.h) on pieces
# (solvers/cp_pieces.h). Each shard updates its rows of the first factor
# itself, from the shared modes' Grams; the other modes are updated on the
# master from their contractions (k x d_n) summed over the shards, mode
# after mode as in memory, so the fit equals the in-memory fit from the
# same start up to rounding.

# The session of one fit on x / s (s a power of 2, the scale of the
# in-memory fit): `fit(init, iters, method, tol, hook, exact)` runs one
# start (factors d_n x k of x / s; with `files`, the first mode's written
# beside the shards, an aspectr_shard_run, whose column norms are then the
# run's `norm1`); `close()` clears the workers.
ntf_fshard_session <- function(x, cluster, threads, s, call, files = NULL) {
  eng <- shard_engine(x, cluster, threads, call)
  eng$set_files(files)
  tryCatch(eng$load(), error = function(e) { eng$drop(); stop(e) })
  global <- list(dims = x$dims, threads = threads, s = s,
                 chunk = if (is.null(cluster) && shard_files_streamed(x)) shard_chunk(call))
  fit <- function(init, iters, method, tol, hook, exact) {
    run <- function(op, args = list()) eng$reduce(eng$run(op, c(list(global = global), args)), "stats")
    f0 <- init[[1]]
    if (inherits(f0, "ntf_lazy_start")) {
      eng$begin(draw = list(kind = "nmf", state = f0$state, k = f0$k, m = f0$m, scale = f0$scale))
    } else {
      eng$begin(F0 = f0)
    }
    rm(f0)
    gram <- NULL
    fn <- function(op, input) {
      if (op == "gather") {
        F0 <- t(eng$gather())
        if (!is.null(input$scale0)) F0 <- F0 * as.vector(input$scale0)
        return(list(`@F0` = F0))
      }
      r <- run("ntf_fpiece", list(req = op, input = input))
      if (op == "cpf_scale") gram <<- r$gram
      r
    }
    cb <- function(it, value, model) {
      shard_iteration_gc(eng, ncol(init[[2]]), exact)
      if (is.null(hook)) TRUE else hook(it, value, model)
    }
    r <- cpp_ntf_pieces_fit(fn, init[-1], method, as.integer(iters), tol, threads, cb, exact)
    # (the column norms of a first factor in files: from the pieces' Gram)
    if (!is.null(files) && is.null(gram)) gram <- run("ntf_fpiece", list(req = "cpf_scale", input = list()))$gram
    F0 <- eng$gather(last = TRUE)
    norm1 <- if (inherits(F0, "aspectr_shard_run")) sqrt(pmax(diag(gram), 0))
    list(factors = c(list(F0), r$shared), objective = r$objective, initial = r$initial,
         iterations = r$iterations, converged = r$converged, stopped = r$stopped, norm1 = norm1)
  }
  list(fit = fit, close = eng$drop, finalize = eng$finalize, discard = eng$discard)
}

# The random start of the Frobenius fit (ntf()'s: d_n x k uniforms times
# `scale`, mode after mode) with the first mode's factor kept as the
# generator's state before its draws (drawn again a column at a time by
# the shards' stores, see shard_start_column(): no matrix of the first
# mode's size outside the shards); the stream moves on as the in-memory
# draws move it.
ntf_lazy_random <- function(dims, k, scale) {
  state <- get0(".Random.seed", envir = globalenv(), inherits = FALSE)
  if (is.null(state)) {
    return(lapply(dims, function(d) matrix(stats::runif(as.numeric(d) * k), d, k) * scale))
  }
  m <- as.numeric(dims[1])
  left <- m * k
  while (left > 0) {
    d <- min(left, 2^20)
    stats::runif(d)
    left <- left - d
  }
  c(list(structure(list(state = state, k = k, m = m, scale = scale), class = "ntf_lazy_start")),
    lapply(dims[-1], function(d) matrix(stats::runif(as.numeric(d) * k), d, k) * scale))
}

# "ntf_fpiece": a request of CPFrobPiece (args$req, args$input), added over
# the store's shards. A shard kept in memory has its cells (divided by the
# fit's scale) made once; one streamed from a .shard file is read a chunk
# at a time in each request; another file is read again for each request
# (one shard at a time). With `kcd` ("ntf_kpiece"): a request of KL
# coordinate descent (KLCDTensorPiece), the shard keeping the step's start
# of its rows beside them.
shard_ntf_fop <- function(st, held, args, kcd = FALSE) {
  g <- args$global
  parts <- NULL
  for (key in names(st$shards)) {
    h <- st$shards[[key]]
    fail <- function(e) abort_shard(h$source, "failed: {conditionMessage(e)}")
    dims <- as.integer(c(h$rows, g$dims[-1]))
    S <- NULL
    file <- NULL
    # (plsa()'s L2 fit: the numbers a shard keeps beside its rows, and its
    # rounds of the projection, which do not read the cells)
    aux <- NULL
    if (isTRUE(args$aux) || kcd) {
      aux <- h$aux
      if (is.null(aux) || !identical(dim(aux), dim(h$F0))) {
        aux <- matrix(0, nrow(h$F0), ncol(h$F0))
        st$shards[[key]]$aux <- aux
      }
    }
    if (args$req %in% c("pps_col", "pps_count", "kcd_restore")) {
      # (no cells)
    } else if (!h$keep && shard_streamable(h$source)) {
      check_shard_file(h$source)
      if (is.null(st$buffer)) st$buffer <- cpp_shard_buffer()
      file <- list(buffer = st$buffer, path = shard_stream_path(h$source), scale = g$s, chunk = g$chunk %||% 65536)
    } else {
      S <- ntf_shard_state(st, key, g, kcd)
    }
    kv <- if (kcd && h$keep && is.null(file)) st$shards[[key]]$kv
    r <- tryCatch(if (kcd) cpp_ntf_kpiece_run(S, file, dims, h$F0, args$req, args$input, g$threads, aux, kv) else
                    cpp_ntf_fpiece_run(S, file, dims, h$F0, args$req, args$input, g$threads, aux), error = fail)
    rm(aux, kv)
    # a shard read for this operation only is let go at once
    if (!h$keep && !is.null(S)) cpp_ntf_fshard_release(S)
    rm(S)
    parts <- if (is.null(parts)) r else shard_add(parts, r)
  }
  list(ids = held, stats = parts)
}

# A shard's cells for a CP piece (divided by the fit's scale): made once
# per fit for a shard kept in memory (with `kcd`, also the model's value at
# each cell that KL coordinate descent keeps between the passes of a mode,
# `kv`), read again from a file of another kind than .shard (those are
# streamed, see shard_ntf_fop())
ntf_shard_state <- function(st, key, g, kcd = FALSE) {
  h <- st$shards[[key]]
  if (!is.null(h$fntf)) return(h$fntf)
  fail <- function(e) abort_shard(h$source, "failed: {conditionMessage(e)}")
  d <- if (h$keep) shard_kept_data(st, key) else shard_data(h$source)
  S <- tryCatch(cpp_ntf_fshard_state(d$idx, d$val, as.integer(c(h$rows, g$dims[-1])), g$s), error = fail)
  if (h$keep) {
    st$shards[[key]]$fntf <- S
    st$shards[[key]]$data <- NULL
    if (kcd) st$shards[[key]]$kv <- numeric(length(d$val))
  }
  S
}

# The shards of a KL coordinate descent in this process, for the core to
# run every request on them (cpp_aspect_pieces_fit(local =), as
# shard_ntf_fop() would): each kept in memory (its cells, rows of the
# first factor, the step's start and the model's values at its cells) or
# a .shard file (that of another kind's cache) streamed. NULL where
# requests go through R: a cluster, factor files, a shard file read whole
# again for each request.
ntf_kcd_local <- function(eng, g) {
  st <- shard_local_store(eng)
  if (is.null(st)) return(NULL)
  keys <- names(st$shards)
  shards <- lapply(keys, function(key) {
    h <- st$shards[[key]]
    if (is.null(h$aux) || !identical(dim(h$aux), dim(h$F0))) st$shards[[key]]$aux <- matrix(0, nrow(h$F0), ncol(h$F0))
    out <- list(dims = as.integer(c(h$rows, g$dims[-1])), F0 = h$F0, aux = st$shards[[key]]$aux)
    if (isTRUE(h$keep)) {
      out$state <- ntf_shard_state(st, key, g, kcd = TRUE)
      out$kv <- st$shards[[key]]$kv
      return(out)
    }
    check_shard_file(h$source)
    if (is.null(st$buffer)) st$buffer <- cpp_shard_buffer()
    path <- tryCatch(shard_stream_path(h$source), error = function(e) abort_shard(h$source, "failed: {conditionMessage(e)}"))
    c(out, list(file = list(buffer = st$buffer, path = path, scale = g$s, chunk = g$chunk %||% 65536)))
  })
  fail <- function(i, why) abort_shard(st$shards[[keys[i]]]$source, "failed: {why}")
  list(shards = shards, fail = fail)
}

# The engine of a CP fit of shards whose values are those of the in-memory
# fit, x / sum(x) (divided by the largest value first: the scale `s`), its
# shards loaded (and dropped again if that fails), with the requests'
# common inputs (`global`).
cp_shard_engine <- function(x, cluster, threads, call, files = NULL) {
  top <- max(vapply(x$meta, function(m) m$top, numeric(1)))
  scaled <- sum(vapply(x$meta, function(m) m$scaled * m$top, numeric(1))) / top
  eng <- shard_engine(x, cluster, threads, call)
  eng$set_files(files)
  tryCatch(eng$load(), error = function(e) { eng$drop(); stop(e) })
  list(eng = eng, global = list(dims = x$dims, threads = threads, s = top * scaled,
                                chunk = if (is.null(cluster) && shard_files_streamed(x)) shard_chunk(call)))
}

# plsa(loss = "l2") of data in shards(): the block steps of the in-memory
# fit (solvers/pps.h) on pieces (PPSPiecesRule, solvers/cp_pieces.h): the
# shards keep their rows of the documents' factor and, during an
# iteration, their MTTKRP of it ("ntf_fpiece" with `aux`); each column of
# the documents' factor is projected onto the simplex with a threshold
# found from sums over the shards, the other modes and the weights are
# updated on the master, so the fit equals the in-memory fit from the same
# start up to rounding. The values are those of the in-memory fit, x /
# sum(x) (divided by the largest value first).
# `fit(init, iters, tol, hook, exact, free)` runs one start (lambda and
# factors d_n x k, the documents' as shard_begin() takes it); `free`: the
# weights only non-negative (normalize = FALSE).
plsa_l2_shard_session <- function(x, cluster, threads, call, files = NULL) {
  se <- cp_shard_engine(x, cluster, threads, call, files)
  eng <- se$eng
  global <- se$global
  fit <- function(init, iters, tol, hook, exact, free = FALSE) {
    run <- function(op, args = list()) eng$reduce(eng$run(op, c(list(global = global), args)), "stats")
    lambda <- as.numeric(init$lambda)
    shared <- init$factors[-1]
    shard_begin(eng, init)
    fn <- function(op, input) {
      if (op == "gather") return(list(`@F0` = t(eng$gather())))
      run("ntf_fpiece", list(req = op, input = input, aux = TRUE))
    }
    cb <- function(it, value, model) {
      shard_iteration_gc(eng, length(lambda), exact)
      if (is.null(hook)) TRUE else hook(it, value, model)
    }
    r <- cpp_pps_pieces_fit(fn, lambda, shared, free, as.integer(iters), tol, threads, cb, exact)
    # (one half of the squared error, as in memory)
    list(lambda = r$lambda, factors = c(list(eng$gather(last = TRUE)), r$shared), objective = 0.5 * r$objective,
         initial = 0.5 * r$initial, iterations = r$iterations, converged = r$converged, stopped = r$stopped,
         kl = r$kl)
  }
  list(fit = fit, close = eng$drop, finalize = eng$finalize, discard = eng$discard)
}

# ntf(loss = "kl", method = "cd") and plsa(method = "cd") of N-way data in
# shards(): the in-memory coordinate descent over the modes (solvers/cd.h)
# on pieces (solvers/cd_pieces.h). Each shard solves its rows of the first
# mode itself and keeps them; every other mode's rows are solved on the
# master, each Newton step from sums over the shards' cells (one pass over
# the shards per step of all the mode's rows), in the order of the
# in-memory steps, so the fit equals the in-memory fit from the same start
# up to rounding. The values are those of the in-memory fit, x / sum(x)
# (divided by the largest value first).
# `fit(init, iters, tol, hook, exact)` runs one start (lambda and factors
# d_n x k, the first mode's as shard_begin() takes it) and returns what
# shard_em_fit() returns. `prior` (plsa_prior(), a matrix): the MAP fit of
# the in-memory rule, its pseudo-counts in the core's units (divided by
# the data's total).
ntf_kshard_session <- function(x, cluster, threads, call, files = NULL, prior = NULL) {
  se <- cp_shard_engine(x, cluster, threads, call, files)
  eng <- se$eng
  global <- se$global
  total <- if (!is.null(prior)) shard_total(x)
  doc_prior <- if (!is.null(prior$doc)) as.numeric(prior$doc) / total
  term_prior <- if (!is.null(prior$term)) prior$term / total
  fit <- function(init, iters, tol, hook, exact) {
    run <- function(op, args = list()) eng$reduce(eng$run(op, c(list(global = global), args)), "stats")
    lambda <- as.numeric(init$lambda)
    shared <- lapply(init$factors[-1], t)
    shard_begin(eng, init)
    fn <- function(op, input) {
      if (op == "gather") return(list(F0 = eng$gather()))
      run("ntf_kpiece", list(req = op, input = input)) %||% list()
    }
    # (shards in this process: the core runs the requests on them itself)
    local <- ntf_kcd_local(eng, global)
    cb <- function(it, value, model) {
      if (is.null(local)) shard_iteration_gc(eng, length(lambda), exact)
      if (is.null(hook)) TRUE else hook(it, value, model)
    }
    r <- cpp_aspect_pieces_fit(fn, lambda, shared, "kcd", 1, term_prior, as.integer(iters), tol, threads, cb, exact,
                               doc_prior = doc_prior, local = local)
    rm(local)
    F0 <- eng$gather(last = TRUE)
    list(lambda = r$lambda, factors = c(list(F0), lapply(r$factors, t)), objective = r$objective,
         initial = r$initial, iterations = r$iterations, converged = r$converged, stopped = r$stopped, kl = r$kl,
         gathered = TRUE)
  }
  list(fit = fit, close = eng$drop, finalize = eng$finalize, discard = eng$discard)
}
