# plsa(loss = "tsallis") of data in shards(): q-EM (Hazan, Haroon and
# Shashua) updates its blocks one after another, each from an MTTKRP with
# the weights t = (g / p)^q of the model entering the step, so a sharded
# iteration makes one pass per mode (aspectr/solvers/qem_shard.h):
#  1. "qem_docs": every shard's weights, its documents' update (kept where
#     the shard is) and its parts of the weights' update and of the row
#     maxima of the documents' factor;
#  2. "qem_norm": with the maxima over all shards, the documents' new
#     factor before its normalization (the row sums over all shards
#     normalize it at the next call, as EM's column sums do) and the part
#     of mode 2's MTTKRP;
#  3. "qem_mode": the part of each further mode's MTTKRP.
# The master updates the weights and the shared modes in the order of the
# in-memory step, so the fit equals the in-memory q-EM fit up to rounding.

# Fits one start (lambda, factors with the document factor whole) by
# sharded q-EM; returns what cpp_plsa_fit returns.
shard_qem_fit <- function(eng, init, global, max_iter, tol, hook, exact) {
  x <- eng$x
  q <- global$q
  N <- length(x$dims)
  lambda <- as.numeric(init$lambda)
  Fg <- lapply(init$factors[-1], t)
  shard_begin(eng, init)
  shard_gc(8 * length(lambda) * x$dims[1], full = TRUE)
  colsum <- NULL
  f <- numeric(0)
  it <- 0L
  converged <- FALSE
  stopped <- FALSE
  model <- function(lambda, Fg) c(global, list(lambda = lambda, factors = Fg))
  reduce <- function(op, args) {
    r <- eng$reduce(eng$run(op, args), "stats")
    colsum <<- NULL
    r
  }
  tsallis <- function() {
    v <- reduce("qem_loss", list(global = model(lambda, Fg), colsum = colsum))$sum
    (1 - v) / (1 - q)
  }
  gather <- function(last = FALSE) {
    F0 <- eng$gather(colsum, last)
    colsum <<- NULL
    F0
  }
  while (it < max_iter) {
    entering <- model(lambda, Fg)
    docs <- reduce("qem_docs", list(global = entering, colsum = colsum))
    before <- (1 - docs$tsum) / (1 - q)
    lambda <- cpp_qem_lambda(lambda, docs$a, q)
    mx <- unclass(docs$mx)
    nrm <- reduce("qem_norm", list(global = entering, mx = mx))
    # the documents' row totals (1 for a component without mass anywhere,
    # which keeps its factor); V_0 = V_0' / total^(1 - q)
    tot <- nrm$tot
    tot[!(mx > -Inf)] <- 1
    shrink <- tot^(1 - q)
    B <- nrm$B / shrink
    V <- list()
    for (n in seq_len(N - 1)) {
      if (n > 1) {
        B <- reduce("qem_mode", list(global = entering, mode = n, V = c(V, Fg[n:(N - 1)])))$B / shrink
      }
      up <- cpp_qem_factor(Fg[[n]], B, q)
      V[[n]] <- up$V
      Fg[[n]] <- up$F
    }
    colsum <- tot
    it <- it + 1L
    # the iteration's garbage (matrices of the documents' size) freed now
    # rather than when R next collects
    shard_iteration_gc(eng, length(lambda), exact)
    r <- shard_iteration(f, before, it, tol, hook, exact, function(last) {
      list(value = tsallis(), model = list(lambda = lambda, factors = c(list(gather()), lapply(Fg, t))))
    })
    f <- r$f
    if (r$status == "stopped") { stopped <- TRUE; break }
    if (r$status == "converged") { converged <- TRUE; break }
  }
  final <- tsallis()
  f <- c(f, final)
  kl <- eng$reduce(eng$run("loss", list(global = model(lambda, Fg), colsum = colsum)), "value")
  colsum <- NULL
  list(lambda = lambda, factors = c(list(gather(last = TRUE)), lapply(Fg, t)), objective = f[-1], initial = f[1],
       iterations = it, converged = converged, stopped = stopped, kl = kl,
       gathered = TRUE)
}

# The q-EM operations on a store (see shard_op_run()): each shard's part,
# added over the store's shards.
shard_qem_op <- function(st, held, op, args) {
  g <- args$global
  parts <- NULL
  for (key in names(st$shards)) {
    h <- st$shards[[key]]
    S <- qem_shard_state(st, key, g)
    # the model entering the step (the documents' factor is normalized at
    # the next iteration's first call)
    fac <- c(list(h$F0), g$factors)
    r <- tryCatch({
      # a shard read again (out of core) makes the step's weights anew
      if (op %in% c("qem_norm", "qem_mode") && !h$keep) cpp_qem_shard_weights(S, g$lambda, fac, g$q, g$threads)
      switch(op,
        qem_docs = cpp_qem_shard_docs(S, g$lambda, fac, g$q, g$threads),
        qem_norm = cpp_qem_shard_norm(S, h$lg, args$mx, h$F0, g$factors, g$q, length(g$dims) > 2, g$threads),
        qem_mode = list(B = cpp_qem_shard_mode(S, c(list(h$V0), args$V), args$mode, g$threads)),
        qem_loss = list(sum = cpp_qem_shard_sum(S, g$lambda, fac, g$q, g$threads)),
        stop("unknown operation ", op))
    }, error = function(e) abort_shard(h$source, "failed: {conditionMessage(e)}"))
    # a shard read for this operation only is let go at once
    if (!h$keep) cpp_qem_shard_release(S)
    rm(S)
    if (op == "qem_docs") {
      st$shards[[key]]$lg <- r$lg
      r$lg <- NULL
    } else if (op == "qem_norm") {
      st$shards[[key]]$Y0 <- r$u
      st$shards[[key]]$V0 <- r$V0
      st$shards[[key]]$lg <- NULL
      r$u <- NULL
      r$V0 <- NULL
    }
    parts <- if (is.null(parts)) r else shard_add(parts, r)
  }
  list(ids = held, stats = parts)
}

# A shard's tensor for q-EM (normalized as the whole data's): made once per
# fit for a shard kept in memory, read again for one streamed from its file
# (a .shard file into the store's buffer, without R objects of its size)
qem_shard_state <- function(st, key, g) {
  h <- st$shards[[key]]
  if (!is.null(h$qem)) return(h$qem)
  if (!h$keep && shard_streamable(h$source)) {
    # out of core from a shard file: read into the store's buffer
    check_shard_file(h$source)
    if (is.null(st$buffer)) st$buffer <- cpp_shard_buffer()
    return(tryCatch(cpp_qem_shard_file(st$buffer, shard_stream_path(h$source), as.integer(c(h$rows, g$dims[-1])), g$top, g$scaled),
                    error = function(e) abort_shard(h$source, "failed: {conditionMessage(e)}")))
  }
  d <- if (h$keep) h$data else shard_data(h$source)
  S <- tryCatch(cpp_qem_shard_state(d$idx, d$val, as.integer(c(h$rows, g$dims[-1])), g$top, g$scaled),
                error = function(e) abort_shard(h$source, "failed: {conditionMessage(e)}"))
  if (h$keep) st$shards[[key]]$qem <- S
  S
}
