# The rows' factor of a sharded fit written to files (`factor_dir`): each
# store writes its shards' blocks at the end of every run (the runs'
# files, k x rows as the core holds them) and, once the best run is known,
# the fit's factor (rows x k, in the fit's component order and units,
# with names) beside them; the runs' files are then removed. The master
# never holds the factor.

# The files the rows' factor of a fit of `x` is written to, one per shard,
# named after the shard and the factor (`mode`): in `factor_dir`, or with
# `factor_dir = TRUE` beside each shard's file. NULL when not asked for.
factor_paths <- function(factor_dir, x, mode, callback = NULL, call = rlang::caller_env()) {
  if (is.null(factor_dir)) return(NULL)
  # (what factor_dir is, then whether x and callback can take it: the same
  # refusal whether x is in memory or in shards)
  path <- is.character(factor_dir) && length(factor_dir) == 1 && !is.na(factor_dir) && nzchar(factor_dir)
  if (!isTRUE(factor_dir) && !path) {
    abort_input("{.arg factor_dir} must be {.code NULL} (the rows' factor in the fit), {.code TRUE} (beside the shards' files) or the path of a directory, not {describe(factor_dir)}.",
                "type", arg = "factor_dir", call = call)
  }
  if (!inherits(x, "aspectr_shards")) {
    abort_input("{.arg factor_dir} applies to data split into {.fn shards}; {.arg x} is {describe(x)}, whose factors are returned in the fit.",
                "argument", arg = "factor_dir", call = call)
  }
  if (!is.null(callback)) {
    abort_input("{.arg callback} cannot be combined with {.arg factor_dir}: the callback is shown the model with its rows' factor gathered, which {.arg factor_dir} is for keeping out of this process.",
                "argument", arg = "callback", call = call)
  }
  n <- length(x$sources)
  files <- vapply(x$sources, function(s) identical(s$kind, "file"), logical(1))
  if (isTRUE(factor_dir)) {
    if (!all(files)) {
      abort_input("{.arg factor_dir} = {.code TRUE} writes the rows' factor beside the shards' files, but {x$sources[[which(!files)[1]]]$label} is an object, not a file: give a directory.",
                  "argument", arg = "factor_dir", call = call)
    }
    dirs <- vapply(x$sources, function(s) dirname(s$path), character(1))
  } else {
    if (file.exists(factor_dir) && !dir.exists(factor_dir)) {
      abort_input("{.arg factor_dir} must be {.code TRUE} or the path of a directory, not the existing file {.path {factor_dir}}.",
                  "value", arg = "factor_dir", call = call)
    }
    dirs <- rep(normalizePath(factor_dir, mustWork = FALSE), n)
  }
  stems <- vapply(seq_len(n), function(i) {
    if (files[i]) sub("\\.[^.]*$", "", basename(x$sources[[i]]$path)) else paste0("shard", i)
  }, character(1))
  paths <- file.path(dirs, paste0(stems, ".", mode, ".rds"))
  inputs <- vapply(x$sources, function(s) s$path %||% "", character(1))
  clash <- which(paths %in% inputs)
  if (length(clash)) {
    abort_input("{.arg factor_dir} would have a shard's rows' factor written over the shard file {.path {paths[clash[1]]}}: name the shard files apart or give another directory.",
                "value", arg = "factor_dir", call = call)
  }
  dup <- anyDuplicated(paths)
  if (dup) {
    abort_input("{.arg factor_dir} would have two shards write their rows' factor to {.path {paths[dup]}}: shards with the same file name need {.code factor_dir = TRUE} or files named apart.",
                "value", arg = "factor_dir", call = call)
  }
  paths
}

# shards() of files that include a rows' factor written with
# `factor_dir` (`<shard>.<factor>.rds` beside the shard `<shard>.<ext>`,
# picked up with the shards by Sys.glob("dir/*.rds") or list.files()):
# refused, naming the file, instead of fitted as data or refused for its
# columns. A file is taken for such a factor when it is named so beside
# another file of `x` and holds as many rows as that file but other
# columns (number or names: it could not be a shard of the same data);
# two shards of one data set named so (same columns) are not.
check_not_factor_files <- function(sources, meta, call = rlang::caller_env()) {
  n <- length(sources)
  if (n < 2) return(invisible())
  files <- vapply(sources, function(s) identical(s$kind, "file"), logical(1))
  paths <- vapply(sources, function(s) s$path %||% "", character(1))
  base <- basename(paths)
  dirs <- dirname(paths)
  stems <- sub("\\.[^.]*$", "", base)
  frame <- vapply(meta, function(m) isTRUE(m$frame), logical(1))
  prefixes <- paste0(stems, ".")
  ok <- files & !frame
  for (i in which(ok & endsWith(base, ".rds"))) {
    # (the files whose name, less its extension, starts the name of file i)
    like <- ok & dirs == dirs[i] & seq_len(n) != i & startsWith(base[i], prefixes) &
      nchar(base[i]) > nchar(prefixes) + 4L
    for (j in which(like)) {
      prefix <- prefixes[j]
      mi <- meta[[i]]
      mj <- meta[[j]]
      if (length(mi$dims) != 2 || !identical(as.numeric(mi$dims[1]), as.numeric(mj$dims[1]))) next
      shared <- function(m) unname(lapply(m$dimnames[-1], function(d) if (is.null(d)) NULL else as.character(d)))
      if (identical(as.numeric(mi$dims[-1]), as.numeric(mj$dims[-1])) && identical(shared(mi), shared(mj))) next
      mode <- substr(base[i], nchar(prefix) + 1L, nchar(base[i]) - 4L)
      leave_out <- sprintf('grep("\\\\.%s\\\\.rds$", x, invert = TRUE, value = TRUE)', gsub(".", "\\\\.", mode, fixed = TRUE))
      abort_input(c("{.arg x} must name data files only; {.path {paths[i]}} is named as the rows' factor that a fit with {.arg factor_dir} writes beside the shard file {.path {paths[j]}}, and holds its {mi$dims[1]} rows with {mi$dims[2]} columns, not the data's columns.",
                    i = "Leave the factor's files out of {.arg x} (say, with {.code {leave_out}}), or write the factor to a directory of its own ({.code factor_dir = <path>})."),
                  "value", arg = "x", file = paths[i], shard = paths[j], call = call)
    }
  }
  invisible()
}

# (on the process that loads the shard: the directory must take a file)
check_factor_file <- function(src, path) {
  probe <- paste0(path, ".probe", Sys.getpid())
  ok <- suppressWarnings(tryCatch(file.create(probe), error = function(e) FALSE))
  unlink(probe)
  if (!isTRUE(ok)) {
    what <- if (identical(src$kind, "file")) "shard file {.path {src$path}}" else "{src$label}"
    cli::cli_abort(paste0("{.arg factor_dir} must be a directory that the process holding each shard can write to; ",
                          what, " cannot write its rows' factor to {.path {path}} (the directory does not exist or does not take files)."),
                   class = c("aspectr_error_shard", "aspectr_error"), shard = src$label, arg = "factor_dir", call = NULL)
  }
}

# "gather" with files: each of the store's shards' blocks (k x rows) of
# the run written to args$write, their row sums (the components' column
# sums) returned
shard_write_run <- function(st, held, args) {
  sums <- list()
  for (key in names(st$shards)) {
    h <- st$shards[[key]]
    path <- args$write[[h$id]]
    tryCatch(saveRDS(h$F0, path, compress = FALSE), error = function(e) {
      abort_shard(h$source, "could not write its rows' factor to {.path {path}}: {conditionMessage(e)}")
    })
    st$written[[key]] <- union(st$written[[key]], path)
    sums[[key]] <- rowSums(h$F0)
    if (isTRUE(args$hand_over)) st$shards[[key]]$F0 <- NULL
  }
  list(ids = held, sums = sums)
}

# A run's block of shard `i` (k x rows) read back for a resumed start, its
# file then removed (a call delivered twice finds the block loaded)
shard_read_run <- function(st, i, path, k) {
  key <- as.character(i)
  h <- st$shards[[key]]
  if (identical(st$resumed[[key]], path) && !file.exists(path)) return(h$F0)
  F0 <- shard_read_block(h, path, k)
  unlink(path)
  st$written[[key]] <- setdiff(st$written[[key]], path)
  st$resumed[[key]] <- path
  F0
}

# a run's file of a shard's rows, checked to be the k x rows block written
shard_read_block <- function(h, path, k) {
  F0 <- tryCatch(readRDS(path), error = function(e) {
    abort_shard(h$source, "could not read its rows' factor from {.path {path}}: {conditionMessage(e)}")
  })
  if (!is.double(F0) || !identical(as.numeric(dim(F0)), as.numeric(c(k, h$rows)))) {
    abort_shard(h$source, "found its rows' factor in {.path {path}} changed since the fit wrote it.")
  }
  F0
}

# "write_final": the fit's factor of each of the store's shards in
# args$ids, from the best run's file, written to a file beside its final
# name (renamed by "commit_final" once every shard's is written). A call
# delivered twice answers from what was written.
shard_write_final <- function(st, held, args) {
  mine <- which(args$ids %in% held)
  if (!length(mine)) return(list(ids = integer(0)))
  info <- list()
  for (j in mine) {
    key <- as.character(args$ids[j])
    h <- st$shards[[key]]
    if (is.null(st$final[[key]])) {
      path <- args$final[[j]]
      tmp <- args$tmp[[j]]
      st$written[[key]] <- union(st$written[[key]], tmp)
      F0 <- shard_read_block(h, args$run[[j]], args$k)
      out <- t(F0[args$ord, , drop = FALSE])
      rm(F0)
      if (!is.null(args$scale)) out <- out * rep(args$scale, each = nrow(out))
      dimnames(out) <- list(args$rownames[[j]], args$colnames)
      tryCatch(saveRDS(out, tmp, compress = FALSE), error = function(e) {
        abort_shard(h$source, "could not write its rows' factor to {.path {path}}: {conditionMessage(e)}")
      })
      # (a rename keeps the modification time)
      fi <- file.info(tmp)
      st$final[[key]] <- list(tmp = tmp, size = as.numeric(fi$size), mtime = as.numeric(fi$mtime))
      if (!is.null(args$lambda)) {
        # (plsa) the documents' most probable topics, counted, and their part
        # of the training perplexity's sum n_d log P(d)
        p <- topic_weights(out, args$lambda)
        st$final[[key]]$classes <- tabulate(max.col(p, ties.method = "first"), nbins = ncol(out))
        n <- args$totals[[j]]
        pd <- drop(out %*% args$lambda)
        st$final[[key]]$nlogpd <- sum(n[n > 0] * log(pd[n > 0]))
        rm(p)
      }
      rm(out)
    }
    info[[length(info) + 1L]] <- st$final[[key]]
  }
  list(ids = args$ids[mine], info = info)
}

# "commit_final": each of the store's shards' file renamed to its final
# name, and every run's file of the shard removed
shard_commit_final <- function(st, held, args) {
  for (key in names(st$shards)) {
    f <- st$final[[key]]
    if (is.null(f) || isTRUE(f$committed)) next
    h <- st$shards[[key]]
    path <- args$final[[h$id]]
    if (!file.rename(f$tmp, path)) {
      abort_shard(h$source, "could not write its rows' factor to {.path {path}} (the file could not be replaced).")
    }
    st$written[[key]] <- setdiff(st$written[[key]], f$tmp)
    unlink(st$written[[key]])
    st$written[[key]] <- NULL
    st$final[[key]]$committed <- TRUE
  }
  list(ids = held)
}

new_factor_files <- function(paths, rows, k, names, info, mode, labels) {
  structure(list(paths = paths, rows = as.numeric(rows), k = as.integer(k), dimnames = names,
                 size = vapply(info, function(i) i$size, numeric(1)),
                 mtime = vapply(info, function(i) i$mtime, numeric(1)),
                 mode = mode, labels = labels),
            class = "aspectr_factor_files")
}

#' A factor written to files
#'
#' A fit of data in [shards()] with `factor_dir` writes its rows' factor
#' (the documents' topic weights of [plsa()], the first mode's factor of
#' [ntf()], \eqn{W} of [nmf()]) to one `.rds` file per shard instead of
#' gathering it into the fit, for data whose rows' factor does not fit in
#' one process either. In the fit that factor is an `aspectr_factor_files`
#' object: it knows its size, names and files without reading them. Each
#' file holds one shard's rows of the factor as a matrix (rows x
#' components, named), readable with [readRDS()].
#'
#' `as.matrix()` reads the files (all of them, or the shards `shards`) and
#' binds their rows; `gather_factors()` reads them into the fit, which is
#' then an ordinary fit. Every method of the fit works as on the gathered
#' fit. Those that need only the terms' factor, or the rows one shard at a
#' time, read no more than that: [print()], [summary()] and [terms()]
#' (reading one file at a time where they list rows), [glance()],
#' [logLik()], the [perplexity()] of a [plsa()] fit, and [predict()] of new
#' documents (or, for N-way data, of cells: only the files holding their
#' rows are read). Those that need the whole rows' factor (such as
#' [topics()], [augment()], [fitted()], [tidy()] of it or a plot of it, a
#' warm start, and every method of a KL [nmf()] fit that goes through
#' [as_plsa()]) read the files first, as `gather_factors()` does (the
#' factor must then fit in memory). A file that has
#' changed since the fit wrote it is an error of class
#' `aspectr_error_shard`.
#'
#' @param x An `aspectr_factor_files` object (for `as.matrix()`), or a fit
#'   (for `gather_factors()`).
#' @param shards Which shards' rows to read (numbers), or `NULL` for all.
#' @param ... Unused.
#' @return `as.matrix()`: the factor's rows of the shards read, as a
#'   matrix. `gather_factors()`: the fit with its factors in memory.
#' @seealso [shards()] and `vignette("large-data", package = "aspectr")`.
#' @examples
#' x <- sotu_dtm
#' parts <- shards(list(x[1:100, ], x[101:nrow(x), ]))
#' dir <- tempfile("factors")
#' dir.create(dir)
#' fit <- plsa(parts, k = 3, seed = 1, max_iter = 20, tol = 1e-4, factor_dir = dir)
#' fit$factors$documents
#' list.files(dir)
#' head(as.matrix(fit$factors$documents, shards = 2))
#' fit <- gather_factors(fit)
#' dim(fit$factors$documents)
#' @name factor_files
NULL

#' @rdname factor_files
#' @export
gather_factors <- function(x) {
  check_required(x, "a fit whose rows' factor is in files")
  if (!inherits(x, "aspectr_fit")) {
    abort_input("{.arg x} must be a fit of {.pkg aspectr}, not {describe(x)}.", "type", arg = "x")
  }
  read <- function(f) if (inherits(f, "aspectr_factor_files")) as.matrix(f) else f
  cls <- oldClass(x)
  x <- unclass(x)
  for (n in seq_along(x$factors)) x$factors[[n]] <- read(x$factors[[n]])
  if (!is.null(x$W)) x$W <- if (is.matrix(x$factors$W)) x$factors$W else read(x$W)
  class(x) <- cls
  x
}

#' @rdname factor_files
#' @export
as.matrix.aspectr_factor_files <- function(x, shards = NULL, ...) {
  n <- length(x$paths)
  if (is.null(shards)) shards <- seq_len(n)
  if (!is.numeric(shards) || anyNA(shards) || any(shards < 1 | shards > n) || any(shards != round(shards))) {
    abort_input("{.arg shards} must be shard numbers from 1 to {n}, not {describe(shards)}.", "value", arg = "shards")
  }
  parts <- lapply(shards, function(i) {
    info <- file.info(x$paths[i])
    why <- if (is.na(info$size)) "has disappeared since the fit wrote it." else
      if (!identical(as.numeric(info$size), x$size[i]) || !identical(as.numeric(info$mtime), x$mtime[i]))
        "has changed since the fit wrote it (size or modification time)."
    if (!is.null(why)) {
      cli::cli_abort(paste("The file {.path {x$paths[i]}} of the rows' factor of", x$labels[i], why),
                     class = c("aspectr_error_shard", "aspectr_error"), shard = x$labels[i])
    }
    readRDS(x$paths[i])
  })
  if (length(parts) == 1) return(parts[[1]])
  do.call(rbind, parts)
}

#' @export
dim.aspectr_factor_files <- function(x) as.integer(c(sum(x$rows), x$k))

#' @export
dimnames.aspectr_factor_files <- function(x) x$dimnames

#' @export
print.aspectr_factor_files <- function(x, ...) {
  big <- function(v) format(v, big.mark = ",", scientific = FALSE, trim = TRUE)
  n <- length(x$paths)
  cat("<aspectr_factor_files> ", x$mode, ": ", big(sum(x$rows)), " x ", x$k, " in ", n, " file",
      if (n > 1) "s", "\n", sep = "")
  show <- utils::head(seq_len(n), 6)
  for (i in show) cat("  ", x$paths[i], ": ", big(x$rows[i]), " rows\n", sep = "")
  if (n > length(show)) cat("  ... and ", n - length(show), " more\n", sep = "")
  invisible(x)
}

# The rows of the n largest entries of each column of a factor in files,
# read a shard at a time (as order(decreasing = TRUE) on the whole column:
# ties in the order of the rows)
factor_top_rows <- function(f, n) {
  top <- replicate(f$k, list(i = numeric(0), v = numeric(0)), simplify = FALSE)
  first <- cumsum(c(0, f$rows))
  for (s in seq_along(f$paths)) {
    m <- as.matrix(f, shards = s)
    for (j in seq_len(f$k)) {
      i <- c(top[[j]]$i, first[s] + seq_len(nrow(m)))
      v <- c(top[[j]]$v, m[, j])
      o <- utils::head(order(v, decreasing = TRUE), n)
      top[[j]] <- list(i = i[o], v = v[o])
    }
    rm(m)
  }
  lapply(top, function(t) t$i)
}

# Rows `i` of a factor (a matrix, or in files: only the shards holding
# them read)
factor_rows <- function(f, i) {
  if (!inherits(f, "aspectr_factor_files")) return(f[i, , drop = FALSE])
  out <- matrix(0, length(i), f$k)
  if (!length(i)) return(out)
  first <- cumsum(c(0, f$rows))
  s <- findInterval(i - 1, first, rightmost.closed = FALSE)
  for (j in unique(s)) {
    m <- as.matrix(f, shards = j)
    at <- s == j
    out[at, ] <- m[i[at] - first[j], , drop = FALSE]
  }
  out
}

# Whether a fit holds a factor written to files
in_files <- function(object) {
  any(vapply(object$factors, function(f) inherits(f, "aspectr_factor_files"), logical(1))) ||
    inherits(object$W, "aspectr_factor_files")
}

# The accessor of a fit's factors for the methods that need its whole rows'
# factor: a fit whose rows' factor is in files (factor_dir) is returned with
# its factors read (gather_factors()), so that every method answers as for
# the fit gathered; any other fit as it is
rows_in_memory <- function(object) if (in_files(object)) gather_factors(object) else object

# `fit_one` of a sharded fit whose rows' factor is written to files,
# keeping the files of the best start so far only (by `value(run)`, ranked
# as best_run() ranks the values, the first of equal ones winning): the
# others' are removed as soon as a better start ends. (Staged starts keep
# theirs until resumed.)
keep_best_run <- function(fit_one, discard, value = run_value) {
  force(fit_one)  # (the caller's name is given the wrapper)
  force(discard)
  force(value)
  best <- NULL
  function(init, iters) {
    r <- fit_one(init, iters)
    v <- value(r)
    v <- if (length(v) != 1) Inf else run_rank_value(v)
    if (is.null(best) || v < best$v) {
      if (!is.null(best)) discard(best$r)
      best <<- list(r = r, v = v)
    } else {
      discard(r)
    }
    r
  }
}

# whether run_starts() stages the starts
starts_staged <- function(n, max_iter, short_iter, short_keep) {
  n > 1 && short_keep < n && short_iter > 0 && short_iter < max_iter
}
