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
# The rule (solvers/pieces_em.h, PieceQEM; driven by shard_em_fit())
# updates the weights and the shared modes in the order of the in-memory
# step, so the fit equals the in-memory q-EM fit up to rounding.

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
  d <- if (h$keep) shard_kept_data(st, key) else shard_data(h$source)
  S <- tryCatch(cpp_qem_shard_state(d$idx, d$val, as.integer(c(h$rows, g$dims[-1])), g$top, g$scaled),
                error = function(e) abort_shard(h$source, "failed: {conditionMessage(e)}"))
  if (h$keep) st$shards[[key]]$qem <- S
  S
}
