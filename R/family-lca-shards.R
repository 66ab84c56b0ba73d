# lca() of data frames in shards(): the observations are split across the
# shards. The latent class model is fitted to the counts of the distinct
# response patterns (lca_prepare()), which add up over the shards: each
# shard is read once and coded, its patterns are merged into those of the
# whole in the order the whole data would give them (first appearance,
# then by the first variable's code), and the fit runs on the merged
# counts. The observations themselves are never all in memory; only their
# patterns' numbers are kept (for the posteriors).

# What shards() records of a data frame
frame_meta <- function(df) {
  list(frame = TRUE, nrow = nrow(df), names = names(df), dims = c(nrow(df), ncol(df)),
       kinds = vapply(df, frame_kind, character(1)),
       levels = lapply(df, function(v) if (is.factor(v)) levels(v)))
}

# how a column's levels are ordered: a factor's own order, numbers by value,
# anything else (character, logical) as factor() sorts it
frame_kind <- function(v) {
  if (is.factor(v)) "factor" else if (is.numeric(v) && !is.object(v)) "number" else "other"
}

new_frame_shards <- function(sources, meta, call = rlang::caller_env()) {
  first <- meta[[1]]
  for (i in seq_along(meta)[-1]) {
    m <- meta[[i]]
    if (!identical(m$names, first$names)) {
      abort_input("Every data frame in {.arg x} must have the same variables in the same order: {sources[[i]]$label} has {.val {m$names}}, {sources[[1]]$label} has {.val {first$names}}.",
                  "value", arg = "x", call = call)
    }
    bad <- which(m$kinds != first$kinds | !vapply(seq_along(m$levels), function(j) {
      identical(m$levels[[j]], first$levels[[j]])
    }, logical(1)))
    if (length(bad)) {
      abort_input("Every data frame in {.arg x} must code its variables alike: variable {.var {first$names[bad[1]]}} of {sources[[i]]$label} has another type or other factor levels than in {sources[[1]]$label}.",
                  "value", arg = "x", call = call)
    }
  }
  rows <- vapply(meta, function(m) as.numeric(m$nrow), numeric(1))
  structure(list(sources = sources, meta = meta, rows = rows,
                 dims = as.integer(c(sum(rows), length(first$names))),
                 dimnames = list(NULL, first$names), nnz = NA_real_, frames = TRUE),
            class = "aspectr_shards")
}

# fitters of matrices and tensors: shards of data frames are for lca()
check_tensor_shards <- function(x, fitter, call = rlang::caller_env()) {
  if (isTRUE(x$frames)) {
    abort_input("{.arg x} holds data frames, which {.fn {fitter}} does not fit; shards of data frames are for {.fn lca}.",
                "type", arg = "x", call = call)
  }
  invisible(x)
}

# One shard's data frame read and coded (lca_prepare()): its patterns,
# their counts and levels, and each observation's pattern number; a
# failure as a value naming the shard (see shard_op())
lca_shard_part <- function(src, na.rm) {
  tryCatch({
    df <- shard_object(src)
    if (!is.data.frame(df)) abort_shard(src, "no longer holds a data frame")
    p <- tryCatch(lca_prepare(df, na.rm, check = FALSE),
                  aspectr_error_input = function(e) abort_shard(src, "is not data {.fn lca} accepts: {conditionMessage(e)}"))
    list(levels = p$levels, idx = p$data$idx, val = p$data$val, row_pattern = p$row_pattern,
         rows = p$rows, complete = p$complete, n = nrow(df))
  }, error = function(e) {
    structure(list(message = conditionMessage(e), shard = e$shard %||% src$label),
              class = "aspectr_shard_failure")
  })
}

# the shards' parts made by the workers of `cluster`, load-balanced (a
# worker that fails ends the fit with a classed error)
lca_shard_parts <- function(cluster, sources, na.rm, call) {
  # (an interrupt while the master waits leaves answers unread: the
  # workers are brought back in step, see cluster_resync())
  tryCatch(in_step(cluster, parallel::clusterApplyLB(cluster, sources, lca_shard_part, na.rm = na.rm)),
           error = function(e) {
             cli::cli_abort(c("A worker of {.arg cluster} failed while reading the shards: {conditionMessage(e)}",
                              i = "The worker may have stopped; restart the cluster to fit again."),
                            class = c("aspectr_error_cluster", "aspectr_error"), call = call)
           })
}

# lca_prepare() of the data frames of shards, one at a time (or by the
# workers of `cluster`): each shard's patterns with their levels, then the
# levels of the whole (a factor's levels that occur anywhere, in its order;
# the union of numbers, sorted; otherwise factor()'s sorted union) and the
# patterns merged in the whole data's order.
lca_shards_prepare <- function(x, na.rm, call = rlang::caller_env(), cluster = NULL) {
  if (!isTRUE(x$frames)) {
    abort_input("{.arg data} must be shards of data frames for {.fn lca}, not of matrices or tensors.",
                "type", arg = "data", call = call)
  }
  meta <- x$meta[[1]]
  vars <- meta$names
  vars <- lca_var_names(vars, length(meta$kinds))
  if (anyDuplicated(vars)) vars <- paste0("V", seq_along(meta$kinds))
  J <- length(vars)
  # (on a cluster: read and coded by the workers, a failure named by its
  # shard and raised here)
  parts <- if (is.null(cluster)) lapply(x$sources, lca_shard_part, na.rm = na.rm) else
    lca_shard_parts(cluster, x$sources, na.rm, call)
  for (p in parts) {
    if (inherits(p, "aspectr_shard_failure")) {
      cli::cli_abort("{p$message}", class = c("aspectr_error_shard", "aspectr_error"), shard = p$shard, call = call)
    }
  }
  levs <- lapply(seq_len(J), function(j) {
    lab <- unique(unlist(lapply(parts, function(p) p$levels[[j]]), use.names = FALSE))
    switch(meta$kinds[[j]],
           factor = meta$levels[[j]][meta$levels[[j]] %in% lab],
           number = lab[order(as.numeric(lab))],
           sort(lab))
  })
  nl <- lengths(levs)
  if (any(nl < 2)) {
    bad <- vars[nl < 2]
    abort_input(paste(if (length(bad) > 1) "Variables" else "Variable",
                      "{.var {bad}} of {.arg data} must have at least 2 observed levels, not {paste(nl[nl < 2], collapse = ', ')}."),
                "value", arg = "data", call = call)
  }
  # the patterns of the whole data in order of first appearance
  keys <- character(0)
  counts <- numeric(0)
  idx <- list()
  row_pattern <- rows <- list()
  offset <- 0
  for (i in seq_along(parts)) {
    p <- parts[[i]]
    g <- p$idx
    for (j in seq_len(J)) {
      map <- match(p$levels[[j]], levs[[j]]) - 1L
      ok <- g[j, ] >= 0L
      g[j, ok] <- map[g[j, ok] + 1L]
    }
    key <- do.call(paste, c(lapply(seq_len(J), function(j) g[j, ]), sep = ","))
    first_seen <- unique(p$row_pattern)
    new <- first_seen[!key[first_seen] %in% keys]
    keys <- c(keys, key[new])
    idx[[i]] <- g[, new, drop = FALSE]
    id <- match(key, keys)
    counts <- c(counts, numeric(length(new)))
    counts <- counts + tabulate_weighted(id, p$val, length(keys))
    row_pattern[[i]] <- id[p$row_pattern]
    rows[[i]] <- p$rows + offset
    offset <- offset + p$n
  }
  idx <- do.call(cbind, idx)
  row_pattern <- unlist(row_pattern, use.names = FALSE)
  if (!length(row_pattern)) {
    abort_input("{.arg data} has no observation with {if (na.rm) 'all' else 'any'} responses observed.",
                "empty", arg = "data", call = call)
  }
  # the tensor's cells: by the first variable's code, ties in order of appearance
  ord <- order(idx[1, ], method = "radix")
  idx <- idx[, ord, drop = FALSE]
  counts <- counts[ord]
  row_pattern <- match(row_pattern, ord)
  storage.mode(idx) <- "integer"
  dimnames(idx) <- list(vars, NULL)
  names(levs) <- vars
  complete <- unlist(lapply(parts, function(p) p$complete), use.names = FALSE)
  list(data = list(idx = idx, val = counts, dims = as.integer(nl), dimnames = levs, total = sum(counts)),
       codes = matrix(0L, length(row_pattern), 0), rows = unlist(rows, use.names = FALSE), levels = levs,
       vars = vars, complete = complete, row_pattern = row_pattern,
       complete_pattern = colSums(idx < 0L) == 0)
}
