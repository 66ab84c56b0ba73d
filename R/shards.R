#' Data split by rows into shards: in memory, in files, or on a cluster
#'
#' `shards()` describes data too large for one object (or one machine) as
#' pieces that share every mode but the first: the rows (documents,
#' observations) are split across the shards, the columns (terms) and any
#' further modes are common to all. [plsa()], [ntf()] and [nmf()] fit such
#' data exactly as they fit the whole: every iteration is a sum over the
#' non-zero cells (or over the rows), so each shard gives its part of the
#' sums and only the small statistics (k x columns) are added up. Data
#' frames split by observations are shards for [lca()], which merges their
#' response patterns. The fit equals the in-memory fit with the
#' same seed up to rounding (tested to 1e-10), however the rows are split.
#'
#' A shard is read only when it is needed and never all at once. Creating
#' the description reads each shard once, one after another, to learn its
#' size and to check that all shards agree; [print()], [dim()], [nnz()] and
#' [dimnames()] then work without reading anything. Without a cluster, a
#' fit from files reads the shards one at a time in every iteration (out of
#' core: the memory needed is about one shard plus the factors, or less, see
#' below); with
#' `cluster =` each worker reads its own shards once and keeps them.
#'
#' @section Memory out of core:
#' EM ([plsa()] with `loss = "kl"` and `method = "em"` or `"squarem"`, [ntf()] with `loss = "kl"`) reads a
#' `.shard` file a chunk of cells at a time, 65536 by default, and writes
#' each step's statistics over the documents' factor in place: during the
#' fit its memory is then the factors, their working copies and one chunk,
#' whatever the size of a shard (creating the description with [shards()]
#' reads each file whole, one at a time). The
#' chunk can be set with `options(aspectr.shard_chunk = n)` (a whole number
#' of cells); it changes the memory and the speed, not the fit. [nmf()]
#' reads its products (\eqn{W'X} and \eqn{XH'}, or the passes of the KL
#' multiplicative updates or of KL coordinate descent) from the files the
#' same way and updates each shard's rows of \eqn{W} in place (and so does
#' [plsa()]'s default KL coordinate descent of a matrix, which is
#' [nmf()]'s); HALS also
#' keeps \eqn{XH'} of every shard, a matrix the size of \eqn{W}, for its
#' sweeps, and KL coordinate descent gathers one shard's rows at a time for
#' the update of \eqn{W} (12 bytes per non-zero of that shard, read in two
#' passes a chunk at a time). The beta-divergence updates of [nmf()] read
#' each shard into a dense block of its rows a chunk at a time, one shard at
#' a time, twice per iteration. [ntf()] under the Frobenius loss (HALS and
#' multiplicative updates) reads its contractions from the files the same
#' way and updates each shard's rows of the first factor in place, and so
#' does [plsa()] under the L2 loss, which keeps beside them their
#' contraction with the other modes (a matrix the size of the rows). The random starts
#' of [plsa()], [ntf()] and [nmf()] are drawn shard by shard, by the process
#' that holds the shard (the numbers of the in-memory start), never as a
#' whole documents' factor. Other fits read a
#' whole shard at a time.
#'
#' The rows' factor (documents x components) is gathered into the fit at
#' the end; with `factor_dir` (see [plsa()] and [factor_files]) each
#' process writes its shards' rows to files instead, so that on a cluster
#' the factor never reaches this process.
#'
#' @section Files:
#' `x` may name files of these kinds (by their extension):
#' * `.shard`: written by [write_shards()]; the fastest to fit from, read
#'   in every iteration into a buffer that is kept from one read to the
#'   next, without R objects of the shard's size;
#' * `.rds`: one object that [plsa()] accepts, such as a `dgCMatrix`, a base
#'   matrix or a sparse tensor ([sptensor()]);
#' * `.mtx`: a Matrix Market file ([Matrix::readMM()]);
#' * `.tns`: a FROSTT sparse tensor ([read_tns()]); the sizes of its modes
#'   are those of the largest indices, and the shared modes of all `.tns`
#'   shards are taken as the largest over the shards;
#' * `.h5` or `.hdf5`: a sparse matrix in the layout of 10x Genomics
#'   (datasets `data`, `indices`, `indptr` and `shape`, compressed by
#'   columns, at the top of the file or in its first group holding them),
#'   read with \pkg{hdf5r}. Such files hold features in rows and cells in
#'   columns; the shard's rows are the file's columns (its cells), so the
#'   cells are split across the shards. Barcodes and feature ids, when
#'   present, become the dimnames.
#'
#' A file of a fit's rows' factor that `factor_dir` wrote beside a shard
#' file (`<shard>.<factor>.rds`, such as `part1.documents.rds` beside
#' `part1.rds`, which `Sys.glob("dir/*.rds")` picks up with the shards) is
#' refused with an error of class `aspectr_error_input_value` that names
#' it: leave it out of `x`. (A file so named that holds rows of the same
#' columns as the other shards is taken as a shard.)
#'
#' Every file's size and modification time are recorded; a shard file that
#' changes or disappears before it is read again is an error of class
#' `aspectr_error_shard`.
#'
#' Files other than `.shard` (matrices and tensors; not data frames) are
#' converted once, when `shards()` reads them, to a `.shard` file in a
#' cache, which fits without a cluster then read a chunk at a time: an
#' iteration costs what it costs from `.shard` files, instead of parsing
#' the file again at every iteration. The cache is set by
#' `options(aspectr.shard_cache =)`: `TRUE` (the default) a directory in
#' the session's temporary directory, a directory path to keep the
#' conversions across sessions (the file name of a conversion holds the
#' original's path, size and modification time, so a changed file is
#' converted anew, never read from an old conversion), or `FALSE` for none
#' (the originals are read at every iteration). A conversion removed
#' during a session is made again when needed; one that cannot be written
#' leaves the originals to be read. Workers of a cluster keep their
#' shards in memory and read the originals once. [write_shards()] makes
#' `.shard` files of shards of any kind in a directory of one's choosing.
#' Reading files shows a progress bar (the file being read) when it takes
#' more than a few seconds.
#'
#' KL coordinate descent (the default of [plsa()] and of
#' `nmf(loss = "kl")`) of shards in files, fitted in this process, also
#' writes the files' cells once by blocks of columns (every row of each
#' block), so that each iteration updates the columns' factor from whole
#' columns, as in memory, instead of passing over every file about k + 1
#' times (the updates of Hsieh and Dhillon (2011) need every row of a
#' column). The copy takes about as much disk as `.shard` files of the
#' data: a directory named `<first file>-columns-<hash>`, beside the first
#' file (in the cache's directory in the session's temporary directory
#' when that one cannot be written), or in the directory
#' `options(aspectr.shard_cache =)` names. Later fits of the same files
#' reuse it; it is made anew when a file's size or modification time
#' changes. Each set of files (and order) has its own copy, kept until it
#' is removed: delete the `-columns-` directories (plain directories of
#' `.shard` files) once the fits are done, or name a temporary directory in
#' the option. With `options(aspectr.shard_cache = FALSE)` none is made, and
#' fits with `factor_dir` or a cluster (whose rows' factor is elsewhere)
#' pass over the files by rows.
#'
#' On a cluster each of those passes is a round trip to the workers: about
#' 2k of them per iteration for every mode but the first, at rank k. With
#' large shards the workers' arithmetic dominates; with small ones and many
#' topics their latency does (20 iterations of `plsa()` at k = 39 on a
#' 39 x 40 matrix in four shards on two local workers: 4.6 s by coordinate
#' descent, 0.4 s by `method = "em"` or `"squarem"`, which make one or three
#' round trips per iteration).
#'
#' @param x A list of data objects (matrices, `Matrix` matrices, simple
#'   triplet matrices, sparse tensors, arrays; or data frames, for [lca()]),
#'   or a character vector of file paths (see Files; `.rds` files may hold
#'   data frames). Each holds some rows of the data and all of its
#'   columns (and further modes). A shard may hold no counts (its rows are
#'   then documents without counts, as in memory) as long as the data as a
#'   whole has some; each file may be named once.
#' @return An object of class `aspectr_shards`.
#' @seealso [write_shards()] to split data into shard files, [plsa()] with
#'   `cluster =` for fits on several processes or machines (a cluster from
#'   [shard_cluster()]), and
#'   `vignette("large-data", package = "aspectr")`.
#' @examples
#' x <- sotu_dtm
#' parts <- shards(list(x[1:100, ], x[101:200, ], x[201:nrow(x), ]))
#' parts
#' dim(parts)
#'
#' # the same fit as plsa(x, ...)
#' fit <- plsa(parts, k = 4, seed = 1, max_iter = 30, tol = 1e-3)
#'
#' # from files, one shard in memory at a time
#' files <- file.path(tempdir(), paste0("part", 1:3, ".rds"))
#' saveRDS(x[1:100, ], files[1])
#' saveRDS(x[101:200, ], files[2])
#' saveRDS(x[201:nrow(x), ], files[3])
#' fit2 <- plsa(shards(files), k = 4, seed = 1, max_iter = 30, tol = 1e-3)
#' all.equal(fit$factors, fit2$factors)
#' @export
shards <- function(x) {
  check_required(x, "a list of data objects or a character vector of file paths")
  if (is.character(x)) {
    if (!length(x) || anyNA(x) || any(!nzchar(x))) {
      abort_input("{.arg x} must name at least one file, without missing or empty paths; it is {describe(x)}.",
                  "value", arg = "x")
    }
    sources <- lapply(x, shard_file_source)
    paths <- vapply(sources, function(s) s$path, "")
    dup <- which(duplicated(paths))
    if (length(dup)) {
      first <- match(paths[dup[1]], paths)
      abort_input("{.arg x} must name each file once; paths {first} and {dup[1]} are the same file {.path {paths[dup[1]]}}, whose rows would be fitted twice.",
                  "value", arg = "x")
    }
  } else if (is.list(x) && !is.object(x)) {
    if (!length(x)) abort_input("{.arg x} must hold at least one shard; it is an empty list.", "empty", arg = "x")
    sources <- lapply(seq_along(x), function(i) list(kind = "object", object = x[[i]],
                                                      label = paste0("shard ", i)))
  } else {
    abort_input("{.arg x} must be a list of data objects or a character vector of file paths, not {describe(x)}.",
                "type", arg = "x")
  }
  meta <- vector("list", length(sources))
  # (reading and converting files can take a while: cli's bar, shown when
  # it takes more than a few seconds)
  files <- vapply(sources, function(s) identical(s$kind, "file"), logical(1))
  bar <- if (any(files)) {
    cli::cli_progress_bar("shards(): reading files", total = sum(files), clear = TRUE,
                          format = "{cli::pb_name} {cli::pb_bar} {cli::pb_current}/{cli::pb_total} | {cli::pb_status}")
  }
  # (a shard refused names this call)
  with_error_call(for (i in seq_along(sources)) {
    if (files[i]) {
      cli::cli_progress_update(id = bar, set = sum(files[seq_len(i)]) - 1, status = basename(sources[[i]]$path))
    }
    if (identical(sources[[i]]$format, "shard")) {
      # summarized in C++ from the file, without R objects of its size
      meta[[i]] <- shard_file_meta(sources[[i]])
    } else {
      obj <- shard_object(sources[[i]], check = FALSE)
      if (is.data.frame(obj)) {
        meta[[i]] <- frame_meta(obj)
      } else {
        d <- shard_as_aspect(obj, sources[[i]])
        meta[[i]] <- shard_meta(d)
        # (a .tns file's sizes are known once all shards are read: below)
        if (!identical(sources[[i]]$format, "tns")) sources[[i]] <- shard_cache(sources[[i]], d)
        rm(d)
      }
      rm(obj)
    }
  }, environment())
  if (!is.null(bar)) cli::cli_progress_done(id = bar)
  # (a fit's rows' factor written beside the shards, taken with them)
  check_not_factor_files(sources, meta)
  frames <- vapply(meta, function(m) isTRUE(m$frame), logical(1))
  if (all(frames)) return(new_frame_shards(sources, meta))
  if (any(frames)) {
    abort_input("{.arg x} must hold either data frames (for {.fn lca}) or matrices and tensors, not both: {sources[[which(frames)[1]]]$label} is a data frame, {sources[[which(!frames)[1]]]$label} is not.",
                "value", arg = "x")
  }
  out <- new_shards(sources, meta)
  for (i in which(vapply(sources, function(s) identical(s$format, "tns"), logical(1)))) {
    if (!shard_cache_on()) break
    d <- shard_data(out$sources[[i]], check = FALSE)
    d$dims <- as.integer(c(out$rows[i], out$dims[-1]))
    out$sources[[i]] <- shard_cache(out$sources[[i]], d)
    rm(d)
  }
  out
}

# ---------------------------------------------------------------------------
# Files other than .shard are converted once, when shards() reads them, to a
# .shard file in a cache (options(aspectr.shard_cache): TRUE, the default, a
# directory in this session's temporary directory; a directory path, kept
# across sessions; FALSE, none). Out-of-core fits then stream the cached
# file a chunk at a time instead of parsing the original at every
# iteration. The cache file's name holds the original's path, size and
# modification time (and the sizes recorded), so a changed file is never
# read from an old conversion; the original is still checked against what
# shards() recorded before every read.

shard_cache_on <- function() !isFALSE(getOption("aspectr.shard_cache", TRUE))

shard_cache_dir <- function() {
  opt <- getOption("aspectr.shard_cache", TRUE)
  dir <- if (isTRUE(opt)) file.path(tempdir(), "aspectr-shard-cache") else opt
  if (!is.character(dir) || length(dir) != 1 || is.na(dir) || !nzchar(dir)) {
    abort_input("{.code options(aspectr.shard_cache)} must be TRUE, FALSE or a directory path, not {describe(opt)}.",
                "value", arg = "aspectr.shard_cache", call = NULL)
  }
  if (!dir.exists(dir) && !suppressWarnings(dir.create(dir, recursive = TRUE)) && !dir.exists(dir)) return(NULL)
  dir
}

# The source with its cache (the .shard conversion of `d`, its data in the
# internal form with the sizes shards() records), made now unless an
# earlier conversion of the same file is there. A cache that cannot be
# written leaves the source as it was (read from the original).
shard_cache <- function(src, d) {
  if (!identical(src$kind, "file") || identical(src$format, "shard") || !shard_cache_on()) return(src)
  dir <- shard_cache_dir()
  if (is.null(dir)) return(src)
  key <- paste(src$path, format(src$size, scientific = FALSE), format(src$mtime, digits = 17),
               paste(d$dims, collapse = "x"), sep = "|")
  stem <- sub("\\.[^.]*$", "", basename(src$path))
  path <- file.path(dir, paste0(stem, "-", shard_cache_hash(key), ".shard"))
  if (!file.exists(path)) {
    # (by row, as write_shards() writes: the same file as it would make)
    if (length(d$dims) == 2 && length(d$val) > 1) {
      o <- order(d$idx[1, ], d$idx[2, ], method = "radix")
      if (is.unsorted(o)) { d$idx <- d$idx[, o, drop = FALSE]; d$val <- d$val[o] }
    }
    part <- paste0(path, ".part", Sys.getpid())
    ok <- tryCatch({ write_shard_bin(d, part); file.rename(part, path) }, error = function(e) FALSE,
                   warning = function(w) FALSE)
    unlink(part)
    if (!isTRUE(ok)) return(src)
  }
  src$cache <- path
  src$cache_dims <- as.integer(d$dims)
  src
}

# Whether a source is streamed from a .shard file out of core (its own, or
# its cache), and that file's path. A cache removed since (a temporary
# directory cleaned) is made again from the original, checked first.
shard_streamable <- function(src) identical(src$format, "shard") || !is.null(src$cache)

shard_stream_path <- function(src) {
  if (identical(src$format, "shard")) return(src$path)
  if (!file.exists(src$cache)) {
    d <- shard_data(src)
    d$dims <- src$cache_dims
    write_shard_bin(d, src$cache)
  }
  src$cache
}

# a cache file's name for `key` (text): 16 hexadecimal digits of its MD5
shard_cache_hash <- function(key) {
  tmp <- tempfile("key")
  on.exit(unlink(tmp))
  writeLines(key, tmp)
  substr(unname(tools::md5sum(tmp)), 1, 16)
}

# ---------------------------------------------------------------------------
# The copy by columns of shard files (aspectr/nmf/columns.h). KL coordinate
# descent out of core updates H from blocks of whole columns, every row in
# each, with W whole in this process: the arithmetic of the matrix in
# memory and one pass over the data, instead of about k + 1 passes over
# the row shards that recompute W H at every cell. Made once, for a fit in
# this process of shards that are all files streamed as .shard (their own
# or their conversion, shard_cache()), by the same cache: beside the first
# file (or, where that directory cannot be written, in the cache's
# directory; in that of options(aspectr.shard_cache) when it names one;
# none when it is FALSE), and reused by later fits. The copy's directory
# is named by the files' paths; its index holds their sizes and
# modification times as shards() recorded them (and the sizes of the
# data), and a copy of files changed since is made anew in its place.

# The copy of `x`'s files: list(dir, paths (its blocks' files), start (the
# blocks' first columns, 0-based, and the number of columns), shards), or
# NULL where there is none (shards not all streamed files, no cache, or a
# copy that cannot be written: the fit then passes over the row shards).
shard_column_copy <- function(x, chunk = 65536) {
  src <- unclass(x)$sources
  if (!shard_cache_on() || length(x$dims) != 2 || !(x$nnz > 0)) return(NULL)
  files <- vapply(src, function(s) identical(s$kind, "file") && shard_streamable(s), logical(1))
  if (!all(files)) return(NULL)
  paths <- vapply(src, function(s) s$path, "")
  key <- c("aspectr copy by columns 1", paste(x$dims, collapse = "x"),
           vapply(seq_along(src), function(i) {
             paste(paths[i], format(src[[i]]$size, scientific = FALSE), format(src[[i]]$mtime, digits = 17),
                   format(x$rows[i], scientific = FALSE), sep = "|")
           }, ""))
  name <- paste0(sub("\\.[^.]*$", "", basename(paths[1])), "-columns-", shard_cache_hash(paths))
  beside <- isTRUE(getOption("aspectr.shard_cache", TRUE))
  for (where in c("beside", "cache")) {
    if (where == "beside") {
      if (!beside || !shard_dir_writable(dirname(paths[1]))) next
      dir <- dirname(paths[1])
    } else {
      dir <- shard_cache_dir()
      if (is.null(dir)) next
    }
    copy <- shard_column_copy_at(file.path(dir, name), key, x, chunk)
    if (!is.null(copy)) return(copy)
  }
  NULL
}

# whether files can be made in `dir` (a function of its own, which the
# tests replace: as root, file.access() finds every directory writable)
shard_dir_writable <- function(dir) isTRUE(file.access(dir, 2) == 0)

# The copy at `path` (a directory): the one there when its index holds
# `key`, else written there anew (in a directory beside it, then renamed
# over it)
shard_column_copy_at <- function(path, key, x, chunk) {
  n <- length(unclass(x)$sources)
  found <- function(index) {
    list(dir = path, paths = file.path(path, index$blocks), start = index$start, shards = n)
  }
  index_file <- file.path(path, "index.rds")
  index <- if (file.exists(index_file)) tryCatch(readRDS(index_file), error = function(e) NULL)
  if (is.list(index) && identical(index$key, key) && all(file.exists(file.path(path, index$blocks)))) {
    return(found(index))
  }
  # (the files as shards() recorded them, before they are read)
  for (s in unclass(x)$sources) check_shard_file(s)
  stream <- vapply(unclass(x)$sources, shard_stream_path, "")
  part <- paste0(path, ".part", Sys.getpid())
  unlink(part, recursive = TRUE)
  if (!suppressWarnings(dir.create(part))) return(NULL)
  on.exit(unlink(part, recursive = TRUE))
  # (blocks of at most the largest shard's cells: the fit's memory, as for
  # the row shards, is of one shard's size)
  block_cells <- max(1, vapply(x$meta, function(m) as.numeric(m$nnz), numeric(1)))
  ok <- tryCatch({
    start <- cpp_kcd_columns_build(stream, as.numeric(x$rows), x$dims[2], block_cells, chunk, part)
    index <- list(key = key, blocks = paste0("block", seq_len(length(start) - 1), ".shard"), start = start)
    saveRDS(index, file.path(part, "index.rds"))
    unlink(path, recursive = TRUE)
    file.rename(part, path)
  }, error = function(e) FALSE, warning = function(w) FALSE)
  if (!isTRUE(ok)) return(NULL)
  found(index)
}

shard_file_source <- function(path) {
  if (!file.exists(path) || dir.exists(path)) {
    # (the copy by columns that KL coordinate descent writes beside the
    # files, picked up by list.files())
    copy <- dir.exists(path) && grepl("-columns-[0-9a-f]+$", basename(path))
    abort_input(c("{.arg x} must name existing files; {.path {path}} {if (dir.exists(path)) 'is a directory' else 'does not exist'}.",
                  i = if (copy) "It is the copy of shard files by columns that KL coordinate descent writes beside them (see {.code ?shards}, Files): list the data files only, say with {.code list.files(pattern = \"\\\\.shard$\")}."),
                "value", arg = "x", call = rlang::caller_env(2))
  }
  base <- basename(path)
  ext <- if (grepl(".", base, fixed = TRUE)) tolower(sub(".*\\.", "", base)) else ""
  format <- switch(ext, shard = "shard", rds = "rds", mtx = "mtx", tns = "tns", h5 = "h5", hdf5 = "h5", NULL)
  if (is.null(format)) {
    abort_input("{.arg x} must name {.file .shard}, {.file .rds}, {.file .mtx}, {.file .tns} or {.file .h5} files; {.path {path}} is none of these.",
                "value", arg = "x", call = rlang::caller_env(2))
  }
  if (format == "h5" && !requireNamespace("hdf5r", quietly = TRUE)) {
    cli::cli_abort(c("Reading {.file .h5} shards needs the {.pkg hdf5r} package.",
                     i = "Install it with {.code install.packages(\"hdf5r\")}."),
                   class = c("aspectr_error_unsupported", "aspectr_error"), call = rlang::caller_env(2))
  }
  path <- normalizePath(path, mustWork = TRUE)
  info <- file.info(path)
  list(kind = "file", path = path, format = format, size = info$size,
       mtime = as.numeric(info$mtime), label = basename(path))
}

# One shard's data in the fitters' form (as_aspect_data), read from its
# source; for files, after checking that the file is the one described.
shard_data <- function(src, check = TRUE) shard_as_aspect(shard_object(src, check), src)

# One shard's object as stored (read from its file)
shard_object <- function(src, check = TRUE) {
  if (identical(src$kind, "object")) return(src$object)
  if (check) check_shard_file(src)
  # (one handler: an error re-raised by a handler of aspectr_error would
  # reach the same tryCatch()'s handler of error, which is outside it)
  tryCatch(read_shard_file(src),
           error = function(e) {
             if (inherits(e, "aspectr_error")) stop(e)
             abort_shard(src, "could not be read: {conditionMessage(e)}")
           })
}

# The internal form of a shard with no cells
empty_shard_data <- function(dims, dimnames) {
  if (is.null(dimnames)) dimnames <- vector("list", length(dims))
  dimnames <- unname(lapply(dimnames, function(d) if (is.null(d)) NULL else as.character(d)))
  list(idx = matrix(integer(0), length(dims), 0), val = numeric(0), dims = as.integer(dims),
       dimnames = dimnames, total = 0)
}

# (a matrix's cells by column, as in memory: a dgCMatrix's values then
# shared, and EM's pass goes over blocks of rows, see shard_by_column())
shard_as_aspect <- function(obj, src) {
  if (inherits(obj, "aspectr_shard_data")) return(unclass(obj))
  # (the converter's refusal, of its kind of bad input: a shard error too)
  refuse <- function(e) {
    if (inherits(e, "aspectr_error_shard")) stop(e)  # (refused already)
    kind <- sub("^aspectr_error_input_", "", grep("^aspectr_error_input_", class(e), value = TRUE)[1])
    # (missing cells: a shard holds none, the fit's mask leaves them out)
    hint <- if (grepl("must not contain missing values", conditionMessage(e), fixed = TRUE)) {
      "Store 0 there and leave the cells out of the fit with {.arg mask} (a logical matrix of the whole data, TRUE where missing), as the fitters' help pages describe."
    }
    abort_shard(src, "is not data a fitter accepts: {conditionMessage(e)}", kind = kind, hint = hint)
  }
  tryCatch(as_aspect_data(obj, arg = src$label, by_column = TRUE),
           aspectr_error_input_empty = function(e) {
             # a shard without counts is valid (its rows are documents with
             # no counts, as in memory) as long as the data as a whole has some
             if (is.null(e$shape)) refuse(e)
             empty_shard_data(e$shape$dims, e$shape$dimnames)
           },
           aspectr_error_input = refuse)
}

# A 2-way shard kept for a whole fit, its cells ordered by column (rows
# increasing in each), once, at the first request that needs it
# (shard_kept_data()): EM's pass then goes over blocks of
# rows, each block's columns in turn, with the block's documents' factor
# in cache and the terms' read in order, as the in-memory fit of a
# dgCMatrix does (measured: a kept shard's pass 6% to 12% faster than by
# row, 8 shards of 25000 x 20000 with 2.7e6 non-zeros each, k = 20).
# Every fit's sums are over the same cells, in another order.
shard_by_column <- function(d) {
  if (length(d$dims) != 2 || length(d$val) < 2 || isTRUE(d$by_column)) return(d)
  o <- order(d$idx[2, ], d$idx[1, ], method = "radix")
  d$by_column <- TRUE
  if (!is.unsorted(o)) return(d)
  d$idx <- d$idx[, o, drop = FALSE]
  d$val <- d$val[o]
  d
}

# A kept shard's cells (the store's `key`): by column (shard_by_column(),
# sorted at the first request and kept so), or, with `any_order`, as read,
# for a state built alike from the cells in any order (nmf()'s unweighted
# one, whose compressed columns and rows come from counting sorts, see
# inst/include/aspectr/nmf/shard.h): such a fit's shards are never sorted
# in R (measured: 0.05 to 0.34 s per shard of 1.8e6 non-zeros on a
# worker). The others take the cells by column (their sums run in the
# cells' order).
shard_kept_data <- function(st, key, any_order = FALSE) {
  d <- st$shards[[key]]$data %||% shard_data(st$shards[[key]]$source)
  if (any_order || isTRUE(d$by_column)) return(d)
  d <- shard_by_column(d)
  st$shards[[key]]$data <- d
  d
}

# A .shard file kept for a fit is read at its first request that needs it
# (shard_kept_data()), not when loaded: nmf() builds its data straight from
# the file (nmf_shard_state()), with no R vectors between
shard_read_late <- function(src) identical(src$kind, "file") && identical(src$format, "shard")

check_shard_file <- function(src) {
  info <- file.info(src$path)
  if (is.na(info$size)) abort_shard(src, "has disappeared since {.fn shards} described it.")
  if (!identical(as.numeric(info$size), as.numeric(src$size)) ||
      !identical(as.numeric(info$mtime), src$mtime)) {
    abort_shard(src, "has changed since {.fn shards} described it (size or modification time); describe the files again.")
  }
}

abort_shard <- function(src, why, call = NULL, .envir = parent.frame(), kind = NA, hint = NULL) {
  what <- if (identical(src$kind, "file")) paste0("Shard file {.path ", src$path, "}") else paste0("Shard ", sub("^shard ", "", src$label))
  # (kind: a shard's data refused as bad input, of that kind, see abort_input())
  input <- if (!is.na(kind)) c(paste0("aspectr_error_input_", kind), "aspectr_error_input")
  cli::cli_abort(c(paste(what, why), i = hint), class = c("aspectr_error_shard", input, "aspectr_error"),
                 shard = src$label, arg = if (!is.null(input)) "x", call = call, .envir = .envir)
}

read_shard_file <- function(src) {
  switch(src$format,
         shard = read_shard_bin(src$path),
         rds = readRDS(src$path),
         mtx = Matrix::readMM(src$path),
         tns = read_tns(src$path),
         h5 = read_h5_sparse(src$path))
}

# A 10x-style HDF5 sparse matrix (CSC: data, indices, indptr, shape), its
# columns (cells) as rows. Every object opened is closed right away
# (hdf5r's close_all() runs the garbage collector: 60 ms a file).
read_h5_sparse <- function(path) {
  f <- hdf5r::H5File$new(path, mode = "r")
  opened <- list(f)
  on.exit(for (o in rev(opened)) try(o$close(), silent = TRUE), add = TRUE)
  need <- c("data", "indices", "indptr", "shape")
  has_all <- function(g) all(vapply(need, function(nm) g$exists(nm), logical(1)))
  grp <- f
  if (!has_all(f)) {
    grp <- NULL
    for (nm in names(f)) {
      o <- f[[nm]]
      opened[[length(opened) + 1L]] <- o
      if (inherits(o, "H5Group") && has_all(o)) { grp <- o; break }
    }
    if (is.null(grp)) stop("no group holds the datasets data, indices, indptr and shape")
  }
  get <- function(g, nm) {
    d <- g[[nm]]
    on.exit(d$close())
    d$read()
  }
  shape <- as.numeric(get(grp, "shape"))
  m <- Matrix::sparseMatrix(i = as.integer(get(grp, "indices")) + 1L, p = as.integer(get(grp, "indptr")),
                            x = as.numeric(get(grp, "data")), dims = as.integer(shape[1:2]), index1 = TRUE)
  cells <- if (grp$exists("barcodes")) as.character(get(grp, "barcodes")) else NULL
  feats <- NULL
  if (grp$exists("features")) {
    fe <- grp[["features"]]
    opened[[length(opened) + 1L]] <- fe
    if (fe$exists("id")) feats <- as.character(get(fe, "id"))
  } else if (grp$exists("genes")) {
    feats <- as.character(get(grp, "genes"))
  }
  if (length(cells) != ncol(m)) cells <- NULL
  if (length(feats) != nrow(m)) feats <- NULL
  dimnames(m) <- list(feats, cells)
  Matrix::t(m)
}

# What a fit needs to know of a shard before reading it: its size and
# names, its total (also as sum(val / top), which cannot overflow), its
# largest value, whether it holds counts, its documents' totals and its
# neg-entropy as data of its own (sum g log g with g = val / its total).
shard_meta <- function(d) {
  meta_from_summary(cpp_shard_summary(d$idx, d$val, as.integer(d$dims)), d$dims, d$dimnames)
}

shard_file_meta <- function(src) {
  summ <- tryCatch(cpp_shard_file_summary(src$path),
                   error = function(e) abort_shard(src, "could not be read: {conditionMessage(e)}"))
  dn <- tryCatch(read_shard_names(src$path, length(summ$dims), summ$nnz),
                 error = function(e) abort_shard(src, "could not be read: {conditionMessage(e)}"))
  meta_from_summary(summ, summ$dims, dn)
}

meta_from_summary <- function(summ, dims, dimnames) {
  list(dims = dims, dimnames = dimnames, nnz = summ$nnz, total = summ$total, top = summ$top,
       scaled = summ$scaled, whole = summ$whole, neg_entropy = summ$neg_entropy,
       doc_totals = summ$margins[[1]], loglik_const = summ$loglik_const,
       margins = summ$margins[-1], missing = isTRUE(summ$missing))
}

new_shards <- function(sources, meta) {
  N <- unique(vapply(meta, function(m) length(m$dims), integer(1)))
  if (length(N) != 1) {
    abort_input("Every shard in {.arg x} must have the same number of modes; they have {paste(vapply(meta, function(m) length(m$dims), integer(1)), collapse = ', ')}.",
                "value", arg = "x", call = rlang::caller_env())
  }
  shared <- do.call(rbind, lapply(meta, function(m) m$dims[-1]))
  tns <- vapply(sources, function(s) identical(s$format, "tns"), logical(1))
  dims_shared <- apply(shared, 2, max)
  for (i in seq_along(meta)) {
    if (!tns[i] && !identical(as.numeric(shared[i, ]), as.numeric(dims_shared))) {
      what <- if (N == 2) "columns" else "columns and further modes"
      abort_input("Every shard in {.arg x} must have the same columns (and further modes): {sources[[i]]$label} has {paste(shared[i, ], collapse = ' x ')} {what} ({paste(meta[[i]]$dims, collapse = ' x ')} in all), {sources[[which.max(rowSums(shared))]]$label} has {paste(dims_shared, collapse = ' x ')}.",
                  "value", arg = "x", call = rlang::caller_env())
    }
  }
  # a .tns shard without cells at the end of a shared mode (its sizes are
  # its largest indices) has the sizes of the others, its margins the
  # empty indices' zeros (summed over the shards with the others')
  for (i in which(tns)) {
    if (identical(as.numeric(shared[i, ]), as.numeric(dims_shared))) next
    meta[[i]]$dims <- as.integer(c(meta[[i]]$dims[1], dims_shared))
    meta[[i]]$margins <- lapply(seq_along(meta[[i]]$margins), function(n) {
      m <- meta[[i]]$margins[[n]]
      c(m, numeric(dims_shared[n] - length(m)))
    })
  }
  # the shared modes' names: equal wherever given
  dn_shared <- vector("list", N - 1)
  for (n in seq_len(N - 1)) {
    for (i in seq_along(meta)) {
      nm <- meta[[i]]$dimnames[[n + 1]]
      if (is.null(nm)) next
      if (is.null(dn_shared[[n]])) {
        dn_shared[[n]] <- nm
      } else if (!identical(dn_shared[[n]], nm)) {
        abort_input("Every shard in {.arg x} must have the same columns (and further modes): the names of mode {n + 1} of {sources[[i]]$label} differ from those of an earlier shard.",
                    "value", arg = "x", call = rlang::caller_env())
      }
    }
  }
  rows <- vapply(meta, function(m) as.numeric(m$dims[1]), numeric(1))
  row_names <- lapply(meta, function(m) m$dimnames[[1]])
  dn_rows <- if (all(!vapply(row_names, is.null, logical(1)))) unlist(row_names, use.names = FALSE) else NULL
  dn <- c(list(dn_rows), dn_shared)
  # the modes' names (the first shard's that has them, as the fits name
  # their factors by them)
  for (i in seq_along(meta)) {
    nm <- names(meta[[i]]$dimnames)
    if (length(nm) == N && all(nzchar(nm))) {
      names(dn) <- nm
      break
    }
  }
  for (i in seq_along(meta)) meta[[i]]$dimnames <- NULL
  structure(list(sources = sources, meta = meta, rows = rows,
                 dims = as.integer(c(sum(rows), dims_shared)),
                 dimnames = dn,
                 nnz = sum(vapply(meta, function(m) m$nnz, numeric(1)))),
            class = "aspectr_shards")
}

#' @export
print.aspectr_shards <- function(x, ...) {
  n <- length(x$sources)
  files <- sum(vapply(x$sources, function(s) identical(s$kind, "file"), logical(1)))
  big <- function(v) format(v, big.mark = ",", scientific = FALSE, trim = TRUE)
  frames <- isTRUE(x$frames)
  cat("<aspectr_shards> ", if (frames) paste0(big(x$dims[1]), " observations of ", x$dims[2], " variables") else
        paste0(paste(vapply(x$dims, big, ""), collapse = " x "), ", ", big(x$nnz), " non-zeros"),
      " in ", n, " shard", if (n > 1) "s",
      if (files == n) " (in files)" else if (files) paste0(" (", files, " in files)") else " (in memory)",
      "\n", sep = "")
  show <- utils::head(seq_len(n), 6)
  for (i in show) {
    s <- x$sources[[i]]
    one <- x$rows[i] == 1
    cat("  ", s$label, ": ", big(x$rows[i]),
        if (frames) paste0(" observation", if (!one) "s", "\n") else
          paste0(" row", if (!one) "s", ", ", big(x$meta[[i]]$nnz), " non-zero", if (x$meta[[i]]$nnz != 1) "s", "\n"),
        sep = "")
  }
  if (n > length(show)) cat("  ... and ", n - length(show), " more\n", sep = "")
  invisible(x)
}

#' @export
dim.aspectr_shards <- function(x) x$dims

#' @export
dimnames.aspectr_shards <- function(x) x$dimnames

#' @export
length.aspectr_shards <- function(x) length(unclass(x)$sources)

# ---------------------------------------------------------------------------
# The sharded EM. The state of a fit lives in stores: on the master for
# shards in memory or streamed from files, on the workers of a cluster for
# the shards each one loaded. A store holds its shards' sources (and, when
# kept in memory, their data), each shard's document factor and the
# document statistics of the last E-step, which the next call normalizes
# once the master has added the column sums of all shards: as a matrix of
# their own (Y0), or, for an EM step in place, written over the factor
# (`pending`, with the components without mass in that shard in `dead`).
# The store's `buffer` (shard files) or `work` (kept shards) holds the
# core's working memory from one shard to the next.
#
# Not every cluster sends a call to a fixed worker (a mirai cluster hands
# each call to whichever worker is free), so nothing here assumes it:
# every reply names the shards it covers; the master repeats a call until
# every shard has answered exactly once, and a worker that receives the
# same step twice answers it from its cache. The factors of a start go
# to the worker holding their shards, which refuses those of others.

shard_stores <- new.env(parent = emptyenv())
# the sharded fits started in this process (shard_engine())
shard_fits <- new.env(parent = emptyenv())

# the operations that change a store's state (answered from the cache when
# delivered twice)
shard_steps <- c("step", "nmf_piece", "ntf_wpiece", "ntf_fpiece", "ntf_kpiece", "qem_docs", "qem_norm", "wq_piece",
                 "sq_save", "sq_norms", "sq_extrapolate", "sq_restore")

# The operations on a store, run on the master or on a worker: "load",
# "start", "step", "loss", "gather", "drop", nmf()'s (shard_nmf_op()),
# weighted ntf()'s (shard_ntf_op()), q-EM's (shard_qem_op()), the
# weighted q-EM's (shard_wqem_op()) and SQUAREM's (shard_squarem_op()). Errors
# are returned as values (raised, classed, on the master), naming the
# shard.
shard_op <- function(id, op, seq = 0, args = list()) {
  tryCatch(shard_op_run(id, op, seq, args),
           error = function(e) {
             structure(list(message = conditionMessage(e),
                            shard = e$shard %||% NA_character_), class = "aspectr_shard_failure")
           })
}

shard_op_run <- function(id, op, seq, args) {
  st <- get0(id, envir = shard_stores, inherits = FALSE)
  if (op == "load") {
    if (is.null(st)) {
      st <- new.env(parent = emptyenv())
      st$shards <- list()
      st$seq <- -1
      assign(id, st, envir = shard_stores)
    }
    for (j in seq_along(args$ids)) {
      # (a fit that writes the rows' factor to files finds out now, not
      # after its iterations, whether it can write there)
      if (!is.null(args$files)) check_factor_file(args$sources[[j]], args$files[[j]])
      st$shards[[as.character(args$ids[j])]] <- list(
        id = args$ids[j], source = args$sources[[j]], keep = args$keep, rows = args$rows[j],
        data = if (args$keep && !shard_read_late(args$sources[[j]])) shard_data(args$sources[[j]]))
    }
    return(list(ids = args$ids))
  }
  held <- if (is.null(st)) integer(0) else vapply(st$shards, function(h) h$id, numeric(1))
  if (op == "drop") {
    if (!is.null(st)) {
      # the runs' files of the rows' factor not made into the fit's, and
      # the weighted copies of streamed shards (a weighted nmf())
      unlink(c(unlist(st$written), st$wfiles))
      rm(list = id, envir = shard_stores)
    }
    return(list(ids = held))
  }
  if (!length(held)) return(list(ids = integer(0)))
  if (op %in% c("start", "draw", "resume", "nndsvd")) {
    # a start's documents' factor: given ("start"), drawn here from the
    # generator's state ("draw", see shard_random_blocks()) or read from
    # the files of an earlier run's ("resume")
    mine <- args$ids %in% held
    if (!any(mine)) return(list(ids = integer(0)))  # not this worker's
    ids <- args$ids[mine]
    F0 <- switch(op, start = args$F0[mine],
                 draw = shard_random_blocks(args$rows, ids, args$state, args$k, shard_start_column(args)),
                 resume = lapply(ids, function(i) shard_read_run(st, i, args$paths[[i]], args$k)),
                 nndsvd = lapply(ids, function(i) {
                   # (NNDSVD's W from the shard's rows of u, see nmf_kept_nndsvd())
                   u <- st$shards[[as.character(i)]]$u
                   cpp_nndsvd_blocks("block", u %||% matrix(0, 0, (length(args$spec) - 2) / 3), args$spec)
                 }))
    for (j in seq_along(ids)) {
      key <- as.character(ids[j])
      st$shards[[key]]$F0 <- F0[[j]]
      st$shards[[key]]$Y0 <- NULL
      st$shards[[key]]$pending <- FALSE
    }
    st$colsum <- NULL
    st$seq <- -1
    return(list(ids = ids))
  }
  if (op == "write_final") return(shard_write_final(st, held, args))
  if (op == "commit_final") return(shard_commit_final(st, held, args))
  if (op == "discard") {
    # a run's files no longer needed (a worse start's)
    for (key in names(st$shards)) {
      path <- args$paths[[st$shards[[key]]$id]]
      unlink(path)
      st$written[[key]] <- setdiff(st$written[[key]], path)
    }
    return(list(ids = held))
  }
  # a step delivered twice: the first answer (the step is not idempotent)
  if (op %in% shard_steps && identical(seq, st$seq)) return(st$reply)
  # the answer, kept for a second delivery of a step
  answer <- function(out) {
    if (op %in% shard_steps) {
      st$seq <- seq
      st$reply <- out
    }
    out
  }
  if (startsWith(op, "nmf_")) return(answer(shard_nmf_op(st, held, op, args)))
  if (startsWith(op, "ntf_")) return(answer(shard_ntf_op(st, held, op, args)))
  # the weighted q-EM's (shard_wqem_op(), R/plsa-weights-shards.R)
  if (startsWith(op, "wq_")) return(answer(shard_wqem_op(st, held, op, args)))
  # the row sums that normalize the documents' factors of the last step
  # (with the operation after it; every shard is normalized during that
  # operation, see shard_normalize())
  st$colsum <- args$colsum
  if (startsWith(op, "qem_")) {
    shard_normalize(st)
    return(answer(shard_qem_op(st, held, op, args)))
  }
  if (startsWith(op, "sq_")) {
    shard_normalize(st)
    return(answer(shard_squarem_op(st, held, op, args)))
  }
  if (op == "gather") {
    if (isTRUE(args$last)) {
      if (!is.null(st$buffer)) cpp_shard_buffer_free(st$buffer)
      st$buffer <- NULL
      # nmf()'s (X H')' of the shards, not needed after the last operation
      # and their W H at the cells (KL coordinate descent)
      # and SQUAREM's iterates of the documents' factor
      # and the MTTKRPs of plsa()'s L2 fit
      a_bytes <- sum(vapply(st$shards, function(h) 8 * (length(h$A) + length(h$v) + length(unlist(h$sq)) +
                                                          length(h$aux)), numeric(1)))
      if (a_bytes > 0) {
        for (key in names(st$shards)) {
          st$shards[[key]]$A <- NULL
          st$shards[[key]]$v <- NULL
          st$shards[[key]]$sq <- NULL
          st$shards[[key]]$aux <- NULL
        }
        shard_gc(a_bytes, full = TRUE)
      }
    }
    shard_normalize(st)
    if (!is.null(args$write)) return(shard_write_run(st, held, args))
    F0 <- lapply(st$shards, function(h) h$F0)
    # the last gather in this process hands the factors over (the master's
    # copy is then the only one)
    if (isTRUE(args$hand_over)) for (key in names(st$shards)) st$shards[[key]]$F0 <- NULL
    return(list(ids = held, F0 = F0))
  }
  g <- args$global
  out <- list(ids = held)
  # the shared modes' statistics, added to in place by every shard's pass
  acc <- if (op == "step") lapply(g$factors, function(f) matrix(0, nrow(f), ncol(f))) else NULL
  for (key in names(st$shards)) {
    # (normalized shard by shard: no second copy of all the documents'
    # factors at once)
    shard_normalize(st, key)
    h <- st$shards[[key]]
    fac <- c(list(h$F0), g$factors)
    if (!h$keep && shard_streamable(h$source)) {
      # out of core from a shard file: read a chunk at a time into this
      # store's buffer, the step's statistics written over the factor
      check_shard_file(h$source)
      if (is.null(st$buffer)) st$buffer <- cpp_shard_buffer()
      r <- tryCatch(
        cpp_em_shard_file(st$buffer, shard_stream_path(h$source), as.integer(c(h$rows, g$dims[-1])), g$lambda, fac,
                          g$tempering, g$total, g$top, g$scaled, g$threads, loss_only = op == "loss",
                          glogg = g$glogg[[h$id]], acc = acc, missing = isTRUE(g$missing[h$id]),
                          chunk = g$chunk %||% 65536, in_place = op == "step",
                          doc_prior = g$doc_prior),
        error = function(e) abort_shard(h$source, "failed: {conditionMessage(e)}"))
    } else {
      # the tensor and the rule: made once per fit for a shard kept in
      # memory, for this request only from a file of another kind
      state <- h$state
      if (is.null(state)) {
        d <- if (h$keep) shard_kept_data(st, key) else shard_data(h$source)
        state <- tryCatch(
          cpp_em_shard_state(d$idx, d$val, as.integer(c(d$dims[1], g$dims[-1])), g$tempering,
                             g$total, g$top, g$scaled, g$glogg[[h$id]], g$doc_prior),
          error = function(e) abort_shard(h$source, "failed: {conditionMessage(e)}"))
        rm(d)
        if (h$keep) st$shards[[key]]$state <- state
      }
      # (kept: a step in place, its matrices in memory the store keeps for
      # all its shards)
      in_place <- op == "step" && h$keep
      if (in_place && is.null(st$work)) st$work <- cpp_shard_buffer()
      r <- tryCatch(cpp_em_shard_run(state, g$lambda, fac, g$threads, loss_only = op == "loss", acc = acc,
                                     work = if (in_place) st$work),
                    error = function(e) abort_shard(h$source, "failed: {conditionMessage(e)}"))
      rm(state)
    }
    if (op == "loss") {
      out$value <- (out$value %||% 0) + r$value
      if (!is.null(r$penalty)) out$penalty <- (out$penalty %||% 0) + r$penalty
      next
    }
    if (isTRUE(r$in_place)) {
      # the statistics written over the factor (see cpp_em_shard_file())
      cs <- r$colsum
      st$shards[[key]]$dead <- r$dead
      st$shards[[key]]$pending <- TRUE
    } else {
      # the statistics replace the factor, of which only the rows of
      # components without mass here are kept (where they have none in any
      # shard they stay as they are, see shard_normalize())
      y0 <- r$y[[1]]
      cs <- rowSums(y0)
      dead <- !(cs > 0 & is.finite(cs))
      st$shards[[key]]$F0 <- if (any(dead)) `[<-`(h$F0, !dead, , value = 0) else NULL
      st$shards[[key]]$Y0 <- y0
    }
    part <- list(colsum = cs, lam = r$lam, value = r$value,
                 merit = r$merit, glogg = r$glogg)
    out$stats <- if (is.null(out$stats)) part else shard_add(out$stats, part)
  }
  if (op == "step") out$stats <- c(list(y = acc), out$stats)
  answer(out)
}

# the document factors (k x rows, the core's layout) of the shards `keys`
# from the last E-step's statistics and their row sums over all shards
# (`st$colsum`, sent with the operation after the step; a component
# without mass keeps its factor, as in memory)
shard_normalize <- function(st, keys = names(st$shards)) {
  if (is.null(st$colsum)) return(invisible())
  for (key in keys) {
    if (isTRUE(st$shards[[key]]$pending)) {
      cpp_em_normalize_in_place(st$shards[[key]]$F0, st$colsum, st$shards[[key]]$dead)
      st$shards[[key]]$pending <- FALSE
      st$shards[[key]]$dead <- NULL
      next
    }
    y <- st$shards[[key]]$Y0
    if (is.null(y)) next
    st$shards[[key]]$F0 <- normalize_rows_r(y, st$shards[[key]]$F0, st$colsum)
    st$shards[[key]]$Y0 <- NULL
  }
  invisible()
}

# k x d statistics onto the simplex row by row (by the row sums `s`); a row
# without mass keeps the old one
normalize_rows_r <- function(y, old, s = rowSums(y)) {
  ok <- s > 0 & is.finite(s)
  if (all(ok)) return(y / s)
  y[ok, ] <- y[ok, , drop = FALSE] / s[ok]
  y[!ok, ] <- old[!ok, , drop = FALSE]
  y
}

# Collects R's garbage when a fit's matrices of the documents' size (or
# the terms') are large, `bytes` being their size: R would otherwise hold
# several iterations' worth before it next collects. (A collection costs
# milliseconds, a full one much more, which small fits should not pay.)
shard_gc <- function(bytes, full = FALSE) {
  if (bytes > 2^25) invisible(gc(verbose = FALSE, full = full))
  invisible()
}

# The collection after an iteration of a sharded fit with k components: in
# this process its garbage may hold matrices of the documents' size; with a
# cluster, the master's holds only the statistics of the other modes (the
# documents' stay on the workers), and a collection each iteration would
# only slow the cluster down (about 15 ms of the master's time per
# iteration at 200000 documents, k = 20), unless a callback was shown the
# model (`exact`: a gathered documents' factor each iteration).
shard_iteration_gc <- function(eng, k, exact = FALSE) {
  d <- eng$x$dims
  shard_gc(8 * k * if (isTRUE(eng$local) || isTRUE(exact)) sum(d) else sum(d[-1]))
}

shard_add <- function(a, b) {
  if (inherits(a, "shard_max")) return(structure(pmax(a, b), class = "shard_max"))
  if (is.numeric(a)) return(a + b)
  if (is.list(a)) {
    out <- a
    # (a piece's statistics named "@...": concatenated by columns, as the
    # core's Stats::add does, in the order of the parts)
    cat_by <- startsWith(names(a) %||% rep("", length(a)), "@")
    for (nm in seq_along(a)) {
      out[[nm]] <- if (cat_by[nm]) {
        # (kept as a list of the parts, joined once by the core, see
        # stats_from_r(): no copies of a growing matrix)
        c(if (is.list(a[[nm]])) a[[nm]] else list(a[[nm]]), if (is.list(b[[nm]])) b[[nm]] else list(b[[nm]]))
      } else {
        shard_add(a[[nm]], b[[nm]])
      }
    }
    return(out)
  }
  a
}

# The engine of one fit: `load()` and `start(blocks)` send each worker its
# shards and their document factors, `run(op, args)` runs an operation on
# every store and returns one answer per store (each shard answered
# exactly once), `drop()` clears the stores.
shard_engine <- function(x, cluster, threads, call) {
  # (the fit's name on the workers: this process, a count and the time,
  # without a draw from the session's random numbers)
  shard_fits$count <- (shard_fits$count %||% 0) + 1
  id <- paste0("fit", Sys.getpid(), "_", shard_fits$count, "_", format(Sys.time(), "%H%M%OS6"))
  n <- length(x$sources)
  groups <- if (is.null(cluster)) list(seq_len(n)) else
    shard_groups(vapply(x$meta, function(m) m$nnz, numeric(1)), length(cluster))
  all_ids <- seq_len(n)
  seq_no <- 0
  rounds <- if (is.null(cluster)) 1L else 10L * length(cluster) + 10L
  keep <- !is.null(cluster) || all(vapply(x$sources, function(s) identical(s$kind, "object"), logical(1)))
  loaded <- integer(0)
  # the files the rows' factor is written to (factor_dir), one per shard,
  # or NULL (gathered into the fit); the runs' files are numbered
  files <- NULL
  run_no <- 0

  fail <- function(e) {
    cli::cli_abort(c("A worker of {.arg cluster} failed during the sharded fit: {conditionMessage(e)}",
                     i = "The worker may have stopped; the fit is abandoned (restart the cluster to fit again)."),
                   class = c("aspectr_error_cluster", "aspectr_error"), call = call)
  }
  check <- function(res) {
    for (j in seq_along(res)) {
      r <- res[[j]]
      if (inherits(r, "aspectr_shard_failure")) {
        where <- if (is.null(cluster)) "" else paste0(" (on worker ", j, ")")
        cli::cli_abort(paste0("{r$message}", where),
                       class = c("aspectr_error_shard", "aspectr_error"), shard = r$shard, call = call)
      }
    }
    res
  }
  # A call to the workers. An interrupt (Ctrl-C) while the master waits
  # for their answers stops the call even with interrupts suspended (R
  # takes it in the wait on the sockets), leaving answers unread on a
  # socket cluster; the workers are then brought back in step
  # (cluster_resync()) before they are cleared, and the fit stops.
  out_of_step <- FALSE
  on_cluster <- function(expr) {
    withCallingHandlers(suspendInterrupts(tryCatch(expr, error = function(e) {
      out_of_step <<- TRUE
      fail(e)
    })), interrupt = function(e) out_of_step <<- TRUE)
  }
  # one call per payload (each payload reaches one worker)
  apply_each <- function(op, payloads, checked = TRUE) {
    res <- if (is.null(cluster)) lapply(payloads, function(p) shard_op(id, op, 0, p)) else
      on_cluster(parallel::clusterApply(cluster, payloads, shard_op_payload, id = id, op = op))
    if (checked) check(res) else res
  }
  eng <- list(x = x, groups = groups, keep = keep, local = is.null(cluster))
  # (a fit in this process: its one store, whose shards the core may reach
  # directly, see shard_nmf_local())
  eng$store <- function() if (is.null(cluster)) get0(id, envir = shard_stores, inherits = FALSE)
  eng$set_files <- function(paths) files <<- paths
  eng$writes_files <- function() !is.null(files)
  eng$load <- function() {
    res <- apply_each("load", lapply(groups, function(g) {
      list(ids = g, sources = x$sources[g], rows = x$rows[g], keep = keep, files = files[g])
    }), checked = FALSE)
    # what was loaded is dropped at the end, also after a failure here
    loaded <<- sort(unlist(lapply(res, function(r) if (inherits(r, "aspectr_shard_failure")) NULL else r$ids)))
    if (!length(loaded)) loaded <<- 0L
    check(res)
    invisible()
  }
  # `payload(ids)` to the stores holding the shards `ids`: each group's to
  # the worker that loaded it (a cluster that pins calls to workers takes
  # them at once); those refused go to every worker, and each takes the
  # part of its own shards. Returns the answers.
  eng$each <- function(op, payload) {
    res <- apply_each(op, lapply(groups, payload))
    taken <- unlist(lapply(res, function(a) a$ids))
    rest <- setdiff(all_ids, taken)
    if (length(rest)) res <- c(res, eng$run(op, payload(rest), expect = rest))
    res
  }
  eng$start <- function(blocks) {
    eng$each("start", function(g) list(ids = g, F0 = blocks[g]))
    invisible()
  }
  # A start's documents' factor to the stores: `F0` whole (rows x k), or
  # the files of an earlier run (shard_write_run()), or, with `draw`, a
  # random start drawn by each store for its own shards from the
  # generator's state (shard_random_blocks(); the master then never holds
  # the documents' factor), or, with `nndsvd`, NNDSVD's made by each store
  # from its shards' rows of u (nmf_kept_nndsvd())
  eng$begin <- function(F0 = NULL, draw = NULL, nndsvd = NULL) {
    if (!is.null(nndsvd)) {
      eng$run("nndsvd", c(nndsvd, list(ids = all_ids)))
    } else if (!is.null(draw)) {
      eng$run("draw", c(draw, list(ids = all_ids, rows = x$rows)))
    } else if (inherits(F0, "aspectr_shard_run")) {
      eng$run("resume", list(ids = all_ids, paths = F0$paths, k = length(F0$sums)))
    } else {
      eng$start(lapply(seq_along(x$rows), function(i) t(F0[shard_rows(x, i), , drop = FALSE])))
    }
    invisible()
  }
  eng$run <- function(op, args = list(), expect = all_ids) {
    seq_no <<- seq_no + 1
    got <- list()
    have <- integer(0)
    for (r in seq_len(rounds)) {
      res <- if (is.null(cluster)) list(shard_op(id, op, seq_no, args)) else
        on_cluster(parallel::clusterCall(cluster, shard_op, id, op, seq_no, args))
      for (a in check(res)) {
        if (!length(a$ids) || all(a$ids %in% have)) next
        if (any(a$ids %in% have)) fail(simpleError("two workers answered for the same shard"))
        got[[length(got) + 1L]] <- a
        have <- c(have, a$ids)
      }
      if (all(expect %in% have)) return(got)  # (every worker got one call)
    }
    fail(simpleError(paste0("no worker answered for shard ", paste(setdiff(expect, have), collapse = ", "))))
  }
  eng$drop <- function() {
    if (out_of_step) {
      out_of_step <<- FALSE
      # (its sockets left in the middle of a message: the stores go with
      # the workers)
      if (!resync_or_tell(cluster)) loaded <<- integer(0)
    }
    if (length(loaded)) try(eng$run("drop", expect = setdiff(loaded, 0L)), silent = TRUE)
    loaded <<- integer(0)
    invisible()
  }
  eng$reduce <- function(res, what) Reduce(shard_add, lapply(res, function(a) a[[what]]))
  # a run's files of the rows' factor removed (a start that is not the best)
  eng$discard <- function(run) {
    if (inherits(run, "aspectr_shard_run")) eng$run("discard", list(paths = run$paths))
    invisible()
  }
  # The fit's rows' factor written to `files` from the run's files `run`
  # (rows x k, components in the order `ord`, column r multiplied by
  # scale[r], named `names`); every run's files are then removed. Returns
  # the factor as an aspectr_factor_files object.
  # With the topics' weights `lambda` (in the fit's order), what
  # summary.aspectr_plsa() needs of the factor is found on the way (see
  # shard_write_final()).
  eng$finalize <- function(run, ord, scale = NULL, names = list(NULL, NULL), mode = "documents",
                           lambda = NULL) {
    rn <- names[[1]]
    # every shard's file written beside its final name first, then all
    # renamed (a failure leaves no shard's file replaced)
    res <- eng$each("write_final", function(g) {
      list(ids = g, run = run$paths[g], final = files[g], tmp = paste0(files[g], ".", id), k = length(ord),
           ord = ord, scale = scale, colnames = names[[2]],
           rownames = if (!is.null(rn)) lapply(g, function(i) rn[shard_rows(x, i)]),
           lambda = lambda, totals = if (!is.null(lambda)) lapply(x$meta[g], function(m) m$doc_totals))
    })
    eng$run("commit_final", list(ids = all_ids, final = files))
    info <- list()
    for (a in res) for (j in seq_along(a$ids)) info[[a$ids[j]]] <- a$info[[j]]
    out <- new_factor_files(files, x$rows, length(ord), names, info, mode,
                            vapply(x$sources, function(s) s$label, character(1)))
    if (!is.null(lambda)) {
      out$classes <- Reduce(`+`, lapply(info, function(i) i$classes))
      out$nlogpd <- sum(vapply(info, function(i) i$nlogpd, numeric(1)))
    }
    out
  }
  # the documents' factor (rows x k) from every shard's (normalized first
  # by `colsum`, see shard_normalize()), placed by the shards' numbers,
  # whatever order the workers answer in
  # (filled block by block: no temporaries of the documents' size; with
  # `last`, the stores' file buffers are let go first, their data read for
  # the last time)
  eng$gather <- function(colsum = NULL, last = FALSE) {
    # (with files: each store writes its shards' factors, see
    # shard_write_run(), and the run's files stand for the factor)
    if (last && !is.null(files)) {
      run_no <<- run_no + 1
      paths <- paste0(files, ".", id, ".run", run_no)
      parts <- eng$run("gather", list(colsum = colsum, last = TRUE, hand_over = is.null(cluster),
                                      write = paths))
      sums <- Reduce(`+`, lapply(parts, function(p) Reduce(`+`, p$sums)))
      return(structure(list(paths = paths, sums = sums, rows = x$rows), class = "aspectr_shard_run"))
    }
    # (in this process the last gather hands the stores' factors over; a
    # cluster's workers keep theirs, as a call may reach a worker twice)
    parts <- eng$run("gather", list(colsum = colsum, last = last, hand_over = last && is.null(cluster)))
    k <- NULL
    for (p in parts) for (b in p$F0) k <- nrow(b)
    out <- matrix(0, sum(x$rows), k)
    freed <- 0
    # (collected every 32 MB, or every sixteenth of the factor if that is
    # more: a full collection costs a fraction of a second)
    every <- max(2^25, 8 * length(out) / 16)
    for (i in seq_along(parts)) {
      for (j in seq_along(parts[[i]]$ids)) {
        out[shard_rows(x, parts[[i]]$ids[j]), ] <- t(parts[[i]]$F0[[j]])
        if (last) {
          # the blocks let go as they are placed
          freed <- freed + 8 * length(parts[[i]]$F0[[j]])
          parts[[i]]$F0[j] <- list(NULL)
          if (freed > every) {
            # (in full: the blocks are as old as the fit)
            invisible(gc(verbose = FALSE))
            freed <- 0
          }
        }
      }
    }
    out
  }
  eng
}

# (functions of the namespace, so that sending them to a worker does not
# send the caller's environment)
shard_op_payload <- function(payload, id, op) shard_op(id, op, 0, payload)

# Fits one start (lambda, factors with the document factor whole) by
# sharded EM (`q` NULL) or q-EM; returns what cpp_plsa_fit returns. The
# rule, its loop and stopping rule run in the core (solvers/pieces_em.h,
# cpp_aspect_pieces_fit()); each request goes to every shard where it is
# and the added statistics go back.
# With `term_prior` (k x terms pseudo-counts, plsa_prior()) the terms'
# statistics get them (in the core's units) before they are normalized,
# and the objective the prior's penalty of the terms (the documents' comes
# with the shards' values).
# With `squarem`, the rule is extrapolated by SQUAREM (PieceSquarem,
# solvers/pieces_squarem.h: the shards keep their rows of its iterates,
# shard_squarem_op()), from the step bound `init$squarem_bound`.
shard_em_fit <- function(eng, init, global, max_iter, tol, hook, exact, term_prior = NULL, squarem = FALSE) {
  x <- eng$x
  nF <- length(x$dims) - 1L
  shard_begin(eng, init)
  k <- length(init$lambda)
  shard_gc(8 * k * x$dims[1], full = TRUE)  # the blocks sent: memory of the documents' size
  # the row sums that normalize the shards' documents' factors, sent with
  # the next operation (EM: from the step's answer; q-EM: from the rule)
  colsum <- NULL
  model_of <- function(input) {
    c(global, list(lambda = drop(input$lambda), factors = lapply(seq_len(nF), function(n) input[[paste0("F", n)]])))
  }
  fn <- function(op, input) {
    if (!is.null(input$colsum)) colsum <<- drop(input$colsum)
    if (op == "gather") {
      F0 <- eng$gather(colsum, FALSE)
      colsum <<- NULL
      return(list(F0 = F0))
    }
    g <- model_of(input)
    args <- switch(op,
      qem_norm = list(global = g, mx = drop(input$mx)),
      qem_mode = list(global = g, mode = as.integer(input$mode),
                      V = lapply(seq_len(nF), function(n) input[[paste0("V", n)]])),
      # (SQUAREM's requests need no model; the rejected step's pending
      # row sums are dropped with it)
      sq_save = list(colsum = colsum, slot = as.integer(input$slot)),
      sq_extrapolate = list(colsum = colsum, a = drop(input$a)),
      sq_restore = list(),
      sq_norms = list(colsum = colsum),
      list(global = g, colsum = colsum))
    res <- eng$run(op, args)
    colsum <<- NULL
    if (op == "loss") {
      return(list(value = eng$reduce(res, "value"), penalty = as.double(eng$reduce(res, "penalty") %||% 0)))
    }
    if (startsWith(op, "sq_")) {
      st <- eng$reduce(res, "stats")
      return(if (is.null(st)) list() else lapply(st, as.double))
    }
    st <- eng$reduce(res, "stats")
    rm(res)
    out <- list()
    if (op == "step") {
      colsum <<- st$colsum
      for (n in seq_len(nF)) out[[paste0("y", n)]] <- st$y[[n]]
      out$lam <- st$lam
      out$value <- st$value
      out$merit <- st$merit
    } else {
      for (nm in names(st)) out[[nm]] <- as.double(unclass(st[[nm]]))
      for (nm in c("B", "a")) if (is.matrix(st[[nm]])) out[[nm]] <- st[[nm]]
    }
    # the pass's garbage (statistics of the documents' size) freed now
    # rather than when R next collects: an out-of-core fit holds about one
    # shard and the factors
    if (op %in% c("step", "qem_docs")) shard_iteration_gc(eng, k, exact)
    out
  }
  q <- global$q
  b <- if (!is.null(term_prior)) term_prior / global$total
  r <- cpp_aspect_pieces_fit(fn, as.numeric(init$lambda), lapply(init$factors[-1], t),
                             if (is.null(q)) "em" else "qem", q %||% 1, b, as.integer(max_iter), tol,
                             global$threads, hook, exact, squarem, init$squarem_bound %||% 1)
  if (!is.null(r$colsum)) colsum <- drop(r$colsum)
  kl <- r$kl
  if (!is.null(q)) {
    # (q-EM's objective is the Tsallis loss: the divergence of the final
    # model, as plsa() reports it)
    kl <- eng$reduce(eng$run("loss", list(global = model_of(c(list(lambda = r$lambda),
                                                               stats::setNames(r$factors, paste0("F", seq_len(nF))))),
                                          colsum = colsum)), "value")
    colsum <- NULL
  }
  F0 <- eng$gather(colsum, last = TRUE)
  list(lambda = r$lambda, factors = c(list(F0), lapply(r$factors, t)), objective = r$objective,
       initial = r$initial, iterations = r$iterations, converged = r$converged, stopped = r$stopped, kl = kl,
       gathered = TRUE, squarem_bound = r$squarem_bound)
}

# `cluster` checked, and given only with data in shards()
check_cluster <- function(cluster, x, call = rlang::caller_env(), arg_x = "x") {
  if (is.null(cluster)) return(NULL)
  if (!inherits(cluster, "cluster")) {
    abort_input("{.arg cluster} must be a cluster from {.fn parallel::makeCluster} (or {.fn mirai::make_cluster}), not {describe(cluster)}.",
                "type", arg = "cluster", call = call)
  }
  if (!length(cluster)) abort_input("{.arg cluster} has no workers.", "value", arg = "cluster", call = call)
  if (!inherits(x, "aspectr_shards")) {
    abort_input("{.arg cluster} applies to data split into {.fn shards}; {.arg {arg_x}} is {describe(x)}, fitted in this process.",
                "argument", arg = "cluster", call = call)
  }
  check_cluster_workers(cluster, call)
  cluster
}

# Every worker of the cluster must load this version of aspectr (the
# operations sent are its functions): asked once, before any shard is sent,
# with a function that does not need aspectr on the worker.
check_cluster_workers <- function(cluster, call) {
  # (a call interrupted earlier, by aspectr or by the user, may have left
  # answers unread)
  synced <- cluster_resync(cluster)
  if (inherits(synced, "error")) {
    cli::cli_abort(c("The {length(cluster)} worker{?s} of {.arg cluster} could not be reached: {conditionMessage(synced)}",
                     i = "The cluster may have stopped; start it again."),
                   class = c("aspectr_error_cluster", "aspectr_error"), call = call)
  }
  probe <- function() {
    if (!requireNamespace("aspectr", quietly = TRUE)) return(NA_character_)
    as.character(getNamespaceVersion("aspectr"))
  }
  environment(probe) <- globalenv()
  got <- tryCatch(in_step(cluster, parallel::clusterCall(cluster, probe)), error = function(e) e)
  n <- length(cluster)
  if (inherits(got, "error")) {
    cli::cli_abort(c("The {n} worker{?s} of {.arg cluster} could not be reached: {conditionMessage(got)}",
                     i = "The cluster may have stopped; start it again."),
                   class = c("aspectr_error_cluster", "aspectr_error"), call = call)
  }
  got <- vapply(got, function(v) if (is.character(v) && length(v) == 1) v else NA_character_, "")
  here <- as.character(getNamespaceVersion("aspectr"))
  if (anyNA(got)) {
    bad <- which(is.na(got))
    which_txt <- paste(if (length(bad) > 1) "workers" else "worker", paste(bad, collapse = ", "))
    of_txt <- paste(n, if (n > 1) "workers" else "worker")
    cli::cli_abort(c("{.pkg aspectr} is not available on {which_txt} of the {of_txt} of {.arg cluster}.",
                     i = "Install it in a library the workers search (their {.code .libPaths()})."),
                   class = c("aspectr_error_cluster", "aspectr_error"), call = call)
  }
  if (any(got != here)) {
    bad <- which(got != here)
    which_txt <- paste(if (length(bad) > 1) "Workers" else "Worker", paste(bad, collapse = ", "))
    versions <- paste(unique(got[bad]), collapse = ", ")
    cli::cli_abort(c("{which_txt} of {.arg cluster} run{if (length(bad) == 1) 's' else ''} {.pkg aspectr} {versions}, this process {here}: every process of a sharded fit must run the same version.",
                     i = "Install the same version on the workers."),
                   class = c("aspectr_error_cluster", "aspectr_error"), call = call)
  }
  cluster_latency_check(cluster)
  invisible(TRUE)
}

# A socket cluster's workers answer in the order they are asked, and the
# master reads one answer per worker a call: a call interrupted while the
# master waited (Ctrl-C stops the wait on the sockets even with interrupts
# suspended) leaves the answers of the workers not yet read on their
# sockets, and the next call would take them for its own. An interrupt in
# the middle of reading an answer leaves the rest of that answer, which no
# unserialize() can read: it takes bytes from the middle of the answer for
# the start of one, and may wait for ever for bytes that never come. So
# each worker is sent a call echoing a token, and the bytes on its socket
# are read as they come, never waiting for more than are there, up to the
# end of the answer carrying the token (the last a worker sends); what came
# before it (whole answers left over, the rest of a cut one) is dropped. A
# worker that was interrupted too (Ctrl-C in a terminal reaches the workers
# it started) drops its answer and echoes the token at once. Returns TRUE,
# or the error when a worker cannot be reached, closes its connection or
# sends nothing for `wait` seconds without having answered with the token
# (still busy, or left waiting for the rest of a call whose sending was
# cut: the cluster must be started again). Other clusters (mirai's) match
# every answer to its call: nothing to do.
cluster_resync <- function(cluster, wait = 30) {
  if (!inherits(cluster, "SOCKcluster")) return(TRUE)
  shard_fits$syncs <- (shard_fits$syncs %||% 0) + 1
  token <- paste0("aspectr-sync-", Sys.getpid(), "-", shard_fits$syncs)
  echo <- function(x) x
  environment(echo) <- globalenv()
  cons <- lapply(cluster, function(node) node$con)
  if (!all(vapply(cons, inherits, NA, what = "sockconn"))) return(cluster_resync_calls(cluster, echo, token))
  # (the connections' timeouts, which parallel's reads and writes wait
  # for, restored also after an error or an interrupt: 0 while reading
  # here, where a read must not wait)
  timeouts <- list()
  on.exit(for (j in seq_along(timeouts)) try(socketTimeout(cons[[j]], timeouts[[j]]), silent = TRUE))
  # every worker sent the call first (they answer at the same time), each
  # as parallel's sendCall() frames it: one serialized list
  call <- list(type = "EXEC", data = list(fun = echo, args = list(token), return = TRUE, tag = NULL), tag = NULL)
  for (j in seq_along(cons)) {
    sent <- tryCatch({
      timeouts[[j]] <- socketTimeout(cons[[j]], max(1L, as.integer(ceiling(wait))))
      serialize(call, cons[[j]])
    }, error = function(e) e)
    if (inherits(sent, "error")) return(simpleError(paste0("worker ", j, ": ", conditionMessage(sent))))
  }
  for (j in seq_along(cons)) {
    got <- tryCatch(read_to_token(cons[[j]], token, wait), error = function(e) e)
    if (inherits(got, "error")) return(simpleError(paste0("worker ", j, ": ", conditionMessage(got))))
    if (!isTRUE(got)) {
      return(simpleError(paste0("worker ", j, switch(got,
        silent = paste0(" did not answer within ", wait, " s"),
        closed = " closed its connection",
        " answers out of step with the calls it was sent"))))
    }
  }
  TRUE
}

# The bytes on the socket `con` read until the answer carrying `token`
# ends them, waiting at most `wait` seconds for the next byte; TRUE, or
# "silent" (no byte came), "closed" or "out of step" (bytes, but not that
# answer)
read_to_token <- function(con, token, wait) {
  socketTimeout(con, 0)
  heard <- FALSE
  tail <- raw(0)
  now <- function() proc.time()[["elapsed"]]
  last <- now()
  repeat {
    left <- wait - (now() - last)
    if (left <= 0) return(if (heard) "out of step" else "silent")
    if (!socketSelect(list(con), timeout = left)) next
    # (with the timeout 0, what is there and no more)
    got <- readBin(con, "raw", 262144L)
    # (ready, and nothing to read: the end of the connection)
    if (!length(got)) return("closed")
    heard <- TRUE
    last <- now()
    # (the answer sought is a few hundred bytes)
    tail <- c(tail, got)
    if (length(tail) > 8192L) tail <- tail[(length(tail) - 8191L):length(tail)]
    # (the token's answer is the last the worker sends: while more bytes
    # are there, it has not all come)
    if (!socketSelect(list(con), timeout = 0) && token_answer_at_end(tail, token)) return(TRUE)
  }
}

# Whether the bytes `x` end with a worker's answer carrying `token`: each
# start of a serialization in `x` (the header's format "X\n" (XDR) or "B\n"
# (native, little-endian) and version 2 or 3), the last first, is read as
# one; a start inside the rest of a cut answer does not give that answer
token_answer_at_end <- function(x, token) {
  n <- length(x)
  if (n < 14L) return(FALSE)
  b <- as.integer(x)
  at <- function(k) b[k + seq_len(n - 5L)]
  starts <- which(at(1L) == 10L & ((at(0L) == 88L & at(2L) == 0L & at(3L) == 0L & at(4L) == 0L & at(5L) %in% 2:3) |
                                   (at(0L) == 66L & at(2L) %in% 2:3 & at(3L) == 0L & at(4L) == 0L & at(5L) == 0L)))
  for (i in rev(starts)) {
    msg <- tryCatch(unserialize(x[i:n]), error = function(e) NULL)
    if (is.list(msg) && identical(msg$value, token)) return(TRUE)
  }
  FALSE
}

# cluster_resync() for a socket cluster whose nodes' connections are not
# sockets (not parallel's own nodes), whose bytes cannot be read without
# waiting: each worker asked to echo the token by parallel's own call
cluster_resync_calls <- function(cluster, echo, token) {
  for (j in seq_along(cluster)) {
    got <- tryCatch(parallel::clusterCall(cluster[j], echo, token)[[1]], error = function(e) e)
    if (!identical(got, token)) {
      return(simpleError(if (inherits(got, "error")) conditionMessage(got) else
        paste0("worker ", j, " answers out of step with the calls it was sent")))
    }
  }
  TRUE
}

# cluster_resync(), with a message when the workers cannot be brought back
# in step (the cluster must be started again); whether they were
resync_or_tell <- function(cluster) {
  synced <- tryCatch(cluster_resync(cluster), error = function(e) e)
  if (isTRUE(synced)) return(TRUE)
  cli::cli_inform(c("!" = "The workers of {.arg cluster} could not be brought back in step after the call that stopped: {conditionMessage(synced)}",
                    i = "Stop the cluster ({.fn parallel::stopCluster}) and start a new one."),
                  class = c("aspectr_message_cluster", "aspectr_message"))
  FALSE
}

# `expr`, a call to the workers of `cluster` outside a fit's engine (the
# checks before a fit, the reading of lca()'s shards): an interrupt in it
# leaves the workers in step, or says that they cannot be
in_step <- function(cluster, expr) {
  withCallingHandlers(suspendInterrupts(expr), interrupt = function(e) resync_or_tell(cluster))
}

# A PSOCK cluster made without TCP's no-delay option holds back the end of
# every message longer than about 4 KB until the other end acknowledges the
# start, which Linux delays by about 40 ms: every call of a fit that
# carries data (several per iteration) then waits that long. Timed once per
# cluster and session, with a call carrying nothing and one carrying 16 KB;
# a note says what to do when the second is slower by more than 15 ms.
# (`timer(expr)`: the seconds `expr` takes; replaced in the tests)
cluster_latency_check <- function(cluster, timer = elapsed_time) {
  if (!inherits(cluster, "SOCKcluster")) return(invisible(NULL))
  key <- paste(vapply(cluster, function(node) {
    if (inherits(node$con, "connection")) paste(as.integer(node$con), summary(node$con)$description) else ""
  }, ""), collapse = "|")
  if (isTRUE(cluster_latency_seen[[key]])) return(invisible(NULL))
  assign(key, TRUE, envir = cluster_latency_seen)
  echo <- function(v) NULL
  environment(echo) <- globalenv()
  payload <- numeric(2048)
  small <- big <- Inf
  for (i in 1:2) {
    small <- min(small, timer(in_step(cluster, parallel::clusterCall(cluster, echo, 0))))
    big <- min(big, timer(in_step(cluster, parallel::clusterCall(cluster, echo, payload))))
  }
  if (big - small > 0.015) {
    ms <- round(1000 * (big - small))
    cli::cli_inform(c("Each call to the workers of {.arg cluster} that carries data waits about {ms} ms for TCP's delayed acknowledgement; a sharded fit makes several such calls per iteration.",
                      i = "A cluster from {.fn shard_cluster} answers in well under a millisecond (it sets TCP's no-delay option on both ends of each connection)."),
                    class = c("aspectr_message_cluster_latency", "aspectr_message"))
  }
  invisible(big - small)
}
cluster_latency_seen <- new.env(parent = emptyenv())

# The seconds `expr` takes to evaluate (system.time() would first run the
# garbage collector, 0.1 to 0.2 s each time in a session holding data)
elapsed_time <- function(expr) {
  t0 <- proc.time()[["elapsed"]]
  force(expr)
  proc.time()[["elapsed"]] - t0
}

#' A cluster of R processes for sharded fits
#'
#' `shard_cluster()` starts a cluster of R processes, on this machine or on
#' other hosts, as [parallel::makePSOCKcluster()] does, with TCP's no-delay
#' option on both ends of every connection. A sharded fit ([plsa()],
#' [nmf()], [ntf()] or [lca()] of [shards()] with `cluster =`) sends its
#' workers several calls per iteration. On a connection without that
#' option, the end of every message longer than about 4 KB waits until the
#' other end acknowledges its start, which Linux delays by about 40 ms; with
#' it, such a call returns in well under a millisecond. The option is a
#' property of each connection, set when the cluster is made: a cluster
#' from [parallel::makeCluster()] gets it when this process and its workers
#' have `options(socketOptions = "no-delay")` set before they connect
#' (R 4.1.0 or later; see [socketConnection()]), which is what this
#' function does. A fit on a cluster whose calls wait says so, once per
#' cluster and session. Clusters of [mirai::make_cluster()] do not wait.
#' Workers started on this machine (`workers` a number) exchange messages
#' in R's native binary serialization instead of XDR (`useXDR = FALSE` of
#' [parallel::makePSOCKcluster()], unless `useXDR` is given), which they
#' read without converting every number: a fit's exchanges are exact
#' either way. The workers load aspectr as they start (from this session's
#' library, or else their own), so that the first fit does not wait for it.
#'
#' An interrupt (Ctrl-C) stops a fit between the workers' answers, or in
#' the middle of reading one. On a socket cluster (this function's, or
#' [parallel::makeCluster()]'s) the answers not yet read when it came, and
#' the rest of an answer cut in the middle, are read and dropped before the
#' fit returns, so that the workers answer the next call, the fit's or
#' yours, and not an earlier one. A worker that sends nothing for 30
#' seconds (still busy with a long call, or left waiting for the rest of a
#' call whose sending was cut) cannot be brought back in step: the fit
#' says so, and the next fit on that cluster is refused with an error of
#' class `aspectr_error_cluster` if the worker still does not answer; stop
#' the cluster ([parallel::stopCluster()]) and start a new one.
#'
#' @param workers The number of workers on this machine, or the host names
#'   of the workers (one name per worker, as for
#'   [parallel::makePSOCKcluster()]; the workers are started over SSH).
#' @param ... Further options of [parallel::makePSOCKcluster()]
#'   (`rscript_args`, `outfile`, `port`, `user`, `master`, ...).
#' @return A cluster of class `SOCKcluster`: pass it as `cluster =` to the
#'   fits of [shards()] (or to any function of the parallel package) and
#'   stop it with [parallel::stopCluster()].
#' @seealso [shards()]; `vignette("large-data", package = "aspectr")`.
#' @examples
#' \donttest{
#' x <- Matrix::rsparsematrix(200, 50, 0.2, rand.x = function(n) rpois(n, 3) + 1)
#' parts <- shards(list(x[1:100, ], x[101:200, ]))
#' cl <- shard_cluster(2)
#' # the workers find aspectr in this session's library
#' invisible(parallel::clusterCall(cl, eval, call(".libPaths", .libPaths())))
#' fit <- plsa(parts, k = 3, seed = 1, cluster = cl)
#' parallel::stopCluster(cl)
#' }
#' @export
shard_cluster <- function(workers = 2L, ...) {
  ok <- (is.numeric(workers) && length(workers) == 1 && !is.na(workers) && workers >= 1 &&
           workers == round(workers) && is.finite(workers)) ||
    (is.character(workers) && length(workers) >= 1 && !anyNA(workers) && all(nzchar(workers)))
  if (!ok) {
    abort_input("{.arg workers} must be a whole number of at least 1 or the workers' host names, not {describe(workers)}.",
                "value", arg = "workers")
  }
  dots <- list(...)
  # (each worker sets the option before it connects: an expression run
  # before its loop; this process's end takes it from the option here)
  dots$rscript_args <- c(dots$rscript_args, "-e", shQuote("options(socketOptions = 'no-delay')"))
  # workers on this machine share its byte order: their messages in R's
  # native binary serialization rather than XDR, which converts every
  # number (unless `useXDR` is given)
  if (is.numeric(workers) && is.null(dots$useXDR)) dots$useXDR <- FALSE
  old <- options(socketOptions = "no-delay")
  on.exit(options(old), add = TRUE)
  cl <- do.call(parallel::makePSOCKcluster, c(list(names = if (is.numeric(workers)) as.integer(workers) else workers), dots))
  # the workers load aspectr now, from this session's library or their
  # own, all at once (about a second each, mostly the Matrix package),
  # rather than when the first fit asks them for its version; where they
  # cannot, that fit says so (check_cluster_workers())
  load <- function(lib) {
    suppressMessages(requireNamespace("aspectr", lib.loc = unique(c(lib, .libPaths())), quietly = TRUE))
    NULL
  }
  environment(load) <- globalenv()
  try(parallel::clusterCall(cl, load, dirname(getNamespaceInfo("aspectr", "path"))), silent = TRUE)
  cl
}

# The hook of a sharded fit with the progress bar of interactive sessions
# (in memory the core draws it)
shard_progress <- function(hook, verbose, name, max_iter) {
  if (!(isTRUE(verbose) && interactive())) return(hook)
  bar <- cli::cli_progress_bar(name, total = max_iter, .envir = parent.frame())
  function(it, obj, raw) {
    cli::cli_progress_update(id = bar, set = it)
    if (is.null(hook)) TRUE else hook(it, obj, raw)
  }
}

# The fit of a plsa() start with the data in shards (the fields of
# plsa_memory_backend()): KL coordinate descent, EM (plain or tempered) or
# q-EM over the shards, SQUAREM of EM or q-EM, or the L2 block steps, by
# the session of the method; `finish(run)` writes the best run's
# documents' factor to `files` (factor_dir) and lets the shards go.
plsa_shard_backend <- function(x, k, loss, method, q, tempering, normalize, rank1, pr, hook, verbose, callback,
                               max_iter, threads, cluster, call, files) {
  N <- length(x$dims)
  summ <- shard_summary(x)
  # (coordinate descent of a matrix: nmf()'s; of N-way data, and with a
  # prior, as in memory: that of solvers/cd_pieces.h, ntf_kshard_session())
  cd <- method == "cd" && !rank1 && N == 2 && is.null(pr)
  kcd <- method == "cd" && !rank1 && !cd
  if (cd) {
    # nmf()'s KL coordinate descent on the shards (plsa_cd_shard_session())
    session <- plsa_cd_shard_session(x, cluster, threads, call, files)
    hook <- fit_hook(callback, verbose, "plsa()", value = function(v) v / session$T,
                     model = function(raw) {
                       f <- plsa_from_nmf(raw$W, raw$H)$factors
                       for (n in 1:2) dimnames(f[[n]]) <- list(x$dimnames[[n]], paste0("topic_", seq_len(k)))
                       names(f) <- mode_names(x$dimnames, N)
                       f
                     })
  } else if (loss == "l2") {
    # the block steps on the shards (plsa_l2_shard_session())
    session <- plsa_l2_shard_session(x, cluster, threads, call, files)
    l2_fit <- session$fit
    session$fit <- function(init, iters, tol, hook, exact) l2_fit(init, iters, tol, hook, exact, free = !normalize)
  } else if (kcd) {
    session <- ntf_kshard_session(x, cluster, threads, call, files, prior = pr)
  } else {
    session <- shard_em_session(x, cluster, threads, tempering, call, q = if (loss == "tsallis") q, files = files,
                                prior = pr, squarem = method == "squarem")
  }
  hook <- shard_progress(hook, verbose, paste0(if (loss == "tsallis") "plsa (sharded q-EM" else
    if (loss == "l2") "plsa (sharded L2" else
    if (cd || kcd) "plsa (sharded KL CD" else "plsa (sharded EM", if (method == "squarem") ", SQUAREM", ")"), max_iter)
  finish <- function(res) {
    if (!is.null(files)) {
      # the best run's factor written in the fit's order, the runs' removed
      ord <- plsa_order(res$lambda)
      # (coordinate descent's run holds W: its columns normalized on the way)
      res$factors[[1]] <- session$finalize(res$factors[[1]], ord,
                                           if (cd) ifelse(res$wsum[ord] > 0, 1 / res$wsum[ord], 0),
                                           list(x$dimnames[[1]], paste0("topic_", seq_len(k))),
                                           mode = mode_names(x$dimnames, N)[1], lambda = as.numeric(res$lambda)[ord])
    }
    # the shards let go before the result is made (memory of the documents'
    # size; closing again on exit does nothing)
    session$close()
    res
  }
  list(fit = session$fit, rank1 = function() session$rank1(), random_start = random_start_lazy, hook = hook,
       finish = finish, close = function() session$close(),
       discard = if (!is.null(files)) function(r) session$discard(r$factors[[1]]),
       summary = summ)
}

# The sharded EM of one fit: the shards loaded (on the workers, or
# described for streaming), `fit(init, iters, tol, hook, exact)` running one
# start (what cpp_plsa_fit returns), `close()` dropping the workers' state.
# `prior` (plsa_prior()): the documents' pseudo-counts go to every shard's
# E-step (each turns its documents' statistics into their MAP joint, see
# prior.h); shard_em_fit() gives the terms' to the rule (PieceEM), which adds them
# once to the sums over the shards.
shard_em_session <- function(x, cluster, threads, tempering, call, q = NULL, files = NULL, prior = NULL,
                             squarem = FALSE) {
  top <- max(vapply(x$meta, function(m) m$top, numeric(1)))
  global <- list(dims = x$dims, tempering = tempering, threads = threads,
                 total = shard_total(x), top = top,
                 scaled = sum(vapply(x$meta, function(m) m$scaled * m$top, numeric(1))) / top,
                 glogg = shard_glogg(x), q = q,
                 missing = vapply(x$meta, function(m) isTRUE(m$missing), logical(1)),
                 chunk = if (is.null(cluster) && shard_files_streamed(x)) shard_chunk(call),
                 doc_prior = prior$doc)
  # shards in memory are converted once; in files, on a cluster, read once
  # by their worker; in files without one, read in every iteration
  eng <- shard_engine(x, cluster, threads, call)
  eng$set_files(files)
  tryCatch(eng$load(), error = function(e) { eng$drop(); stop(e) })
  rank1 <- function() {
    docs <- unlist(lapply(x$meta, function(m) m$doc_totals), use.names = FALSE)
    factors <- c(list(docs), lapply(seq_along(x$dims)[-1], function(n) {
      Reduce(`+`, lapply(x$meta, function(m) m$margins[[n - 1]]))
    }))
    factors <- lapply(factors, function(m) matrix(m / sum(m), ncol = 1))
    eng$start(lapply(seq_along(x$rows), function(i) t(factors[[1]][shard_rows(x, i), , drop = FALSE])))
    kl <- eng$reduce(eng$run("loss", list(global = c(global, list(lambda = 1, factors = lapply(factors[-1], t))))), "value")
    if (!is.null(files)) factors[[1]] <- eng$gather(NULL, last = TRUE)
    list(lambda = 1, factors = factors, objective = numeric(0), initial = kl,
         value = kl, iterations = 0L, converged = TRUE, kl = kl)
  }
  list(fit = function(init, iters, tol, hook, exact) {
    shard_em_fit(eng, init, global, iters, tol, hook, exact, term_prior = prior$term, squarem = squarem)
  },
       rank1 = rank1, close = eng$drop, finalize = eng$finalize, discard = eng$discard)
}

# plsa()'s KL coordinate descent of a matrix in shards: nmf()'s session
# (nmf_shard_session(): the rule PieceKLCD on the shards where they are)
# with plsa()'s start and result converted as in memory (plsa_nmf_data()):
# the same scale of the data (the largest count), the stores' rows of the
# documents' factor (drawn, sent or resumed from a run's files, as for EM)
# scaled by Piece's "scale" request into W, the fit's W and H normalized.
# `fit()` returns a run as plsa_from_nmf_run(); T: the data's scaled total.
plsa_cd_shard_session <- function(x, cluster, threads, call, files = NULL) {
  s <- max(vapply(x$meta, function(m) m$top, numeric(1)))
  # (the total of the divided counts, from each shard's sum of its counts
  # divided by its largest: sum(x) itself may overflow)
  T <- sum(vapply(x$meta, function(m) m$scaled * (m$top / s), numeric(1)))
  a <- 1  # (as plsa_nmf_data())
  session <- nmf_shard_session(x, cluster, threads, "kl", "cd", s, c(0, 0), c(0, 0), 0, call, files, total = T)
  fit <- function(init, iters, tol, hook, exact) {
    sw <- plsa_nmf_scales(init$lambda, T, a)
    H <- t(init$factors[[2]]) / a
    F0 <- init$factors[[1]]
    # (a run's files hold W itself: its columns' sums divided out too)
    if (inherits(F0, "aspectr_shard_run")) sw <- sw * F0$sums
    rm(F0)
    r <- session$fit_from(function(eng, run) {
      shard_begin(eng, init)
      run("nmf_piece", list(req = "scale", input = list(s = matrix(sw, ncol = 1))))
    }, H, iters, tol, hook, exact)
    r$objective <- r$objective / T
    r$initial <- r$initial / T
    plsa_from_nmf_run(r, T)
  }
  list(fit = fit, T = T, close = session$close, finalize = session$finalize, discard = session$discard)
}

# What the fitters read of sharded data in place of as_aspect_data()'s
# form (no cells)
shard_as_data <- function(x) {
  list(dims = x$dims, dimnames = x$dimnames, total = shard_total(x), nnz = x$nnz,
       loglik_const = sum(vapply(x$meta, function(m) m$loglik_const, numeric(1))))
}

# Whether sharded data are counts (check_count_data() for shards)
shard_count_data <- function(x, fitter, likelihood = TRUE, call = rlang::caller_env()) {
  whole <- all(vapply(x$meta, function(m) isTRUE(m$whole), logical(1)))
  if (!whole && likelihood) warn_noncount("{.arg x} has values that are not whole numbers", fitter, call)
  whole
}

shard_total <- function(x) sum(vapply(x$meta, function(m) m$total, numeric(1)))

# The cells an out-of-core EM reads from a shard file at a time (option
# aspectr.shard_chunk, see ?shards)
shard_chunk <- function(call = rlang::caller_env()) {
  as.numeric(check_whole(getOption("aspectr.shard_chunk", 65536), "options(aspectr.shard_chunk)",
                         what = "cells read at a time", call = call))
}

# whether a fit without a cluster streams some shards from .shard files
shard_files_streamed <- function(x) {
  any(vapply(x$sources, shard_streamable, logical(1)))
}

# sum g log g (g = x / sum(x)) and the documents' totals of sharded data,
# from the shards' own: with c = (shard total) / (total), a shard's g is c
# times its own, so its part of the sum is c (its own sum + log c)
shard_summary <- function(x) {
  list(neg_entropy = sum(shard_glogg(x)),
       doc_totals = unlist(lapply(x$meta, function(m) m$doc_totals), use.names = FALSE))
}

# every shard's part of sum g log g
shard_glogg <- function(x) {
  glogg_join(vapply(x$meta, function(m) m$top, numeric(1)), vapply(x$meta, function(m) m$scaled, numeric(1)),
             vapply(x$meta, function(m) m$neg_entropy, numeric(1)))
}

# Each part's share of sum g log g over the cells of several parts (G the
# cells over their joint total), from each part's largest value `tops`, its
# total in units of it `sc` and its own sum g log g `neg` (G over its total)
glogg_join <- function(tops, sc, neg) {
  share <- sc * tops / sum(sc * tops)
  ifelse(share > 0, share * (neg + log(share)), 0)
}

# The documents' factor of a start, taken out of it when the start is an
# environment (random starts of sharded fits: so that a start waiting for
# its turn, or done, does not hold memory of the documents' size).
shard_take_start <- function(init) {
  F0 <- init$factors[[1]]
  if (is.environment(init)) init$factors <- NULL
  F0
}

# A start of plsa()'s or ntf()'s sharded EM to the stores: for a start of
# random_start_lazy(), drawn by each store for its shards
shard_begin <- function(eng, init) {
  if (!is.null(init$state)) {
    return(eng$begin(draw = list(kind = "plsa", state = init$state, k = init$k, d0 = init$d0,
                                 colsum = init$colsum)))
  }
  eng$begin(shard_take_start(init))
}

# The column function of a random start drawn by the stores
# (eng$begin(draw = )): column r of the documents' factor, all documents,
# as random_start_lazy() ("plsa") or nmf_lazy_random() ("nmf") drew it
shard_start_column <- function(spec) {
  switch(spec$kind,
         plsa = function(r) stats::runif(spec$d0, 0.1, 1) / spec$colsum[r],
         nmf = function(r) stats::runif(spec$m) * spec$scale)
}

# The blocks (k x rows, the core's layout) of the shards `ids` of a
# random start's documents' factor, drawn again: with the session's
# generator at `state` (put back afterwards), `column(r)` draws column r of
# the factor (all documents, the shards' `rows` one after another), a
# column at a time, and each shard's rows of it fill row r of its block.
shard_random_blocks <- function(rows, ids, state, k, column) {
  with_rng_state(state, {
    first <- cumsum(c(0, rows))
    blocks <- lapply(rows[ids], function(r) matrix(0, k, r))
    for (r in seq_len(k)) {
      u <- column(r)
      for (j in seq_along(ids)) blocks[[j]][r, ] <- u[seq.int(first[ids[j]] + 1, length.out = rows[ids[j]])]
    }
    blocks
  })
}

# What the session's generator draws after skipping `skip` uniforms from
# `state` (put back afterwards): `after()`'s draws
shard_draws_after <- function(state, skip, after) {
  with_rng_state(state, {
    while (skip > 0) {
      d <- min(skip, 2^20)
      stats::runif(d)
      skip <- skip - d
    }
    after()
  })
}

# `code` evaluated with the session's generator at `state`, its state put
# back afterwards
with_rng_state <- function(state, code) {
  env <- globalenv()
  old <- get0(".Random.seed", envir = env, inherits = FALSE)
  on.exit(if (is.null(old)) rm(".Random.seed", envir = env) else assign(".Random.seed", old, envir = env))
  assign(".Random.seed", state, envir = env)
  code
}

# the rows of the whole data held by shard i
shard_rows <- function(x, i) seq.int(sum(x$rows[seq_len(i - 1)]) + 1, length.out = x$rows[i])

# Shards 1..n in contiguous groups for w workers, about equal in non-zeros:
# one shard per worker when there are no more shards than workers, else
# each shard goes to the worker whose share of the non-zeros holds its
# middle.
shard_groups <- function(nnz, w) {
  n <- length(nnz)
  if (n <= w) return(as.list(seq_len(n)))
  mid <- cumsum(nnz) - nnz / 2
  grp <- pmin(w, floor(mid / max(sum(nnz), 1) * w) + 1)
  groups <- lapply(seq_len(w), function(j) which(grp == j))
  groups[lengths(groups) > 0]
}

#' Write data as shard files for out-of-core and cluster fits
#'
#' Splits data by rows into shards and writes each as a `.shard` file, a
#' binary form that fits read directly into a buffer kept from one
#' iteration to the next: an out-of-core fit from such files costs little
#' more per iteration than the in-memory fit ([shards()] converts files of
#' other kinds to such files once, in a cache). The files hold the non-zero cells, the sizes and
#' the names; they are read on machines of the same byte order.
#'
#' @param x Data [plsa()] accepts (a matrix, a sparse matrix, a sparse
#'   tensor, ...), split into `n` shards of consecutive rows with about
#'   equal numbers of non-zeros; or a list of such pieces (rows split
#'   already), each written as one shard; or [shards()] of matrices or
#'   tensors (in memory or in files of any kind), each shard written as one
#'   `.shard` file: the way to convert `.rds`, `.mtx`, `.tns` or `.h5` shards
#'   once. A piece or shard may hold no counts (its rows are documents
#'   without counts), as long as `x` as a whole has some.
#' @param dir Directory to write into (created if missing). It must not be
#'   an existing file. It may be the directory of the shard files `x`
#'   describes (to split them anew): every shard is written under a
#'   temporary name first, and the files are renamed to theirs once all are
#'   written, so the old files stay whole until then (the directory needs
#'   room for both sets meanwhile), and a failure while writing leaves the
#'   old files as they were. Shard files of the same `prefix` that a split
#'   does not write (left from an earlier split into more shards) are named
#'   in a warning: read the directory's files by the names returned.
#' @param n Number of shards when `x` is one object; `NULL` chooses one
#'   shard per 5 million non-zeros. With [shards()], `NULL` writes each
#'   shard as one file, and a number splits the rows of all of them anew
#'   into `n` shards of consecutive rows with about equal numbers of
#'   non-zeros (e.g. one large `.h5` file into several `.shard` files for
#'   a cluster's workers), reading one shard at a time.
#' @param prefix File names are `prefix` followed by the shard's number; a
#'   plain name (no directory part).
#' @return The shards written, as [shards()] describes them.
#' @seealso [shards()].
#' @examples
#' dir <- file.path(tempdir(), "sotu")
#' parts <- write_shards(sotu_dtm, dir, n = 4)
#' parts
#' fit <- plsa(parts, k = 4, seed = 1, max_iter = 30, tol = 1e-3)
#' @export
write_shards <- function(x, dir, n = NULL, prefix = "shard") {
  check_required(x, "data to split or a list of pieces")
  check_required(dir, "a directory path")
  if (!is.character(dir) || length(dir) != 1 || is.na(dir) || !nzchar(dir)) {
    abort_input("{.arg dir} must be a directory path, not {describe(dir)}.", "type", arg = "dir")
  }
  if (!is.character(prefix) || length(prefix) != 1 || is.na(prefix)) {
    abort_input("{.arg prefix} must be a string, not {describe(prefix)}.", "type", arg = "prefix")
  }
  if (grepl("[/\\\\]", prefix) || prefix %in% c(".", "..")) {
    abort_input("{.arg prefix} must be a plain file name prefix without a directory part, not {.val {prefix}}; give the directory as {.arg dir}.",
                "value", arg = "prefix")
  }
  if (inherits(x, "aspectr_shards")) {
    if (isTRUE(x$frames)) {
      abort_input("{.arg x} holds data frames (for {.fn lca}), which {.fn write_shards} does not write; {.file .shard} files hold matrices and tensors.",
                  "type", arg = "x")
    }
    if (is.null(n)) {
      count <- length(x$sources)
      # one shard read at a time (never all in memory)
      piece <- function(i) shard_data(x$sources[[i]])
    } else {
      n <- check_whole(n, "n", min = 1, max = sum(x$rows), what = "at most the number of rows of `x`")
      piece <- resplit_shards(x, n)
      count <- n
    }
  } else if (is.list(x) && !is.object(x)) {
    if (!is.null(n)) {
      abort_input("{.arg n} applies to one object to split; {.arg x} is a list of {length(x)} piece{?s}, each written as a shard.",
                  "argument", arg = "n")
    }
    if (!length(x)) abort_input("{.arg x} must hold at least one piece; it is an empty list.", "empty", arg = "x")
    pieces <- lapply(seq_along(x), function(i) {
      lbl <- paste0("x[[", i, "]]")
      tryCatch(as_aspect_data(x[[i]], arg = lbl),
               aspectr_error_input_empty = function(e) {
                 if (is.null(e$shape)) stop(e)
                 empty_shard_data(e$shape$dims, e$shape$dimnames)
               })
    })
    if (all(vapply(pieces, function(p) length(p$val) == 0, logical(1)))) {
      abort_input("{.arg x} has no positive entries in any of its {length(pieces)} piece{?s}: there is nothing to fit.",
                  "empty", arg = "x")
    }
    # (the pieces must fit together: checked before any file is written)
    for (i in seq_along(pieces)[-1]) {
      if (!identical(as.numeric(pieces[[i]]$dims[-1]), as.numeric(pieces[[1]]$dims[-1]))) {
        abort_input("{.arg x} must hold pieces with the same columns (and further modes); {.code x[[{i}]]} is {paste(pieces[[i]]$dims, collapse = ' x ')}, {.code x[[1]]} {paste(pieces[[1]]$dims, collapse = ' x ')}.",
                    "value", arg = "x")
      }
      a <- pieces[[i]]$dimnames[-1]
      b <- pieces[[1]]$dimnames[-1]
      clash <- any(vapply(seq_along(a), function(m) !is.null(a[[m]]) && m <= length(b) && !is.null(b[[m]]) &&
                            !identical(as.character(a[[m]]), as.character(b[[m]])), logical(1)))
      if (clash) {
        abort_input("{.arg x} must hold pieces with the same column names (and names of further modes); those of {.code x[[{i}]]} differ from those of {.code x[[1]]}.",
                    "value", arg = "x")
      }
    }
    count <- length(pieces)
    piece <- function(i) pieces[[i]]
  } else {
    d <- as_aspect_data(x, "x")
    nz <- length(d$val)
    if (is.null(n)) n <- max(1, ceiling(nz / 5e6))
    n <- check_whole(n, "n", min = 1, max = d$dims[1], what = "at most the number of rows of `x`")
    pieces <- split_aspect_data(d, n)
    rm(d)
    count <- length(pieces)
    piece <- function(i) pieces[[i]]
  }
  shard_dir(dir)
  files <- file.path(dir, sprintf(paste0("%s%0", nchar(count), "d.shard"), prefix, seq_len(count)))
  # Every shard is written under a temporary name and the set renamed only
  # once all are written: the files being read (shards of `dir` split
  # again into `dir`) are whole until then, and a failure while writing
  # leaves the files of `dir` as they were.
  parts <- file.path(dir, sprintf(".%s.%d.partial", basename(files), Sys.getpid()))
  on.exit(unlink(parts[file.exists(parts)]), add = TRUE)
  for (i in seq_len(count)) {
    # (the piece read first: its errors are its own, not the directory's)
    d <- piece(i)
    ok <- tryCatch({ write_shard_bin(d, parts[i]); TRUE },
                   error = function(e) conditionMessage(e), warning = function(w) conditionMessage(w))
    rm(d)
    if (!isTRUE(ok)) {
      abort_input("{.arg dir} must be a directory {.fn write_shards} can write into; writing {.path {files[i]}} failed: {ok}",
                  "value", arg = "dir")
    }
  }
  for (i in seq_len(count)) {
    if (!file.rename(parts[i], files[i])) {
      abort_input("{.arg dir} must be a directory {.fn write_shards} can write into; {.path {files[i]}} could not be replaced.",
                  "value", arg = "dir")
    }
  }
  warn_stale_shards(dir, prefix, files)
  shards(files)
}

# Shard files of the same prefix in `dir` that this split did not write
# (an earlier split into more shards, or of other digits): a later
# shards(Sys.glob(...)) would take them as data.
warn_stale_shards <- function(dir, prefix, files, call = rlang::caller_env()) {
  all <- list.files(dir)
  rest <- substring(all, nchar(prefix) + 1L)
  other <- setdiff(all[startsWith(all, prefix) & grepl("^[0-9]+\\.shard$", rest)], basename(files))
  if (length(other)) {
    n <- length(other)
    what <- sprintf("%d shard file%s of prefix \"%s\" that this split did not write, from an earlier one: %s%s", n,
                    if (n == 1) "" else "s", prefix, paste(utils::head(other, 3), collapse = ", "),
                    if (n > 3) ", ..." else "")
    cli::cli_warn(c("{.arg dir} also holds {what}.",
                    i = paste0("Remove ", if (n == 1) "it" else "them",
                               " before reading the directory's files as one data set (say, with {.code Sys.glob()}).")),
                  class = c("aspectr_warning_input", "aspectr_warning"), call = call)
  }
  invisible(other)
}

# The directory write_shards() writes into: created if missing; an existing
# file, or a directory that cannot be created or written, is refused.
shard_dir <- function(dir, call = rlang::caller_env()) {
  if (file.exists(dir) && !dir.exists(dir)) {
    abort_input("{.arg dir} must be a directory, not the existing file {.path {dir}}.", "value", arg = "dir", call = call)
  }
  if (!dir.exists(dir)) {
    made <- suppressWarnings(dir.create(dir, recursive = TRUE))
    if (!made || !dir.exists(dir)) {
      abort_input("{.arg dir} must be a directory that can be created; {.path {dir}} could not be (a part of the path is a file, or not writable).",
                  "value", arg = "dir", call = call)
    }
  }
  if (file.access(dir, 2) != 0) {
    abort_input("{.arg dir} must be a writable directory; {.path {dir}} is not writable.", "value", arg = "dir", call = call)
  }
  invisible(dir)
}

# Rows 1..m of the internal form in n contiguous pieces of about equal
# non-zeros (every piece at least one row).
split_aspect_data <- function(d, n) {
  b <- row_groups(tabulate(d$idx[1, ] + 1L, d$dims[1]), n)
  lapply(seq_len(n), function(j) slice_rows(d, b$begins[j], b$ends[j]))
}

# The first and last rows of n contiguous groups of the rows whose
# non-zeros are per_row, about equal in non-zeros (each at least one row)
row_groups <- function(per_row, n) {
  m <- length(per_row)
  cum <- cumsum(as.numeric(per_row))
  tot <- max(cum[m], 1)
  ends <- vapply(seq_len(n - 1), function(j) which(cum >= tot * j / n)[1], integer(1))
  ends <- pmax(ends, seq_len(n - 1))
  for (j in seq_along(ends)) ends[j] <- min(max(ends[j], if (j > 1) ends[j - 1] + 1L else 1L), m - (n - j))
  ends <- c(ends, m)
  list(begins = c(1L, ends[-n] + 1L), ends = ends)
}

# Rows b..e of the internal form d (its rows numbered from b)
slice_rows <- function(d, b, e) {
  b <- as.integer(b)
  e <- as.integer(e)
  rows <- d$idx[1, ] + 1L
  keep <- rows >= b & rows <= e
  idx <- d$idx[, keep, drop = FALSE]
  idx[1, ] <- idx[1, ] - (b - 1L)
  dn <- d$dimnames
  if (!is.null(dn[[1]])) dn[[1]] <- dn[[1]][b:e]
  list(idx = idx, val = d$val[keep], dims = c(e - b + 1L, d$dims[-1]), dimnames = dn)
}

# write_shards() of shards() with n: the rows of every shard in n new
# shards of consecutive rows, about equal in non-zeros (the row counts
# from a first reading of each shard); piece(j) gives new shard j, asked
# for in order, from the shards it spans, each read once more (the last
# one read kept: a single shard is read once).
resplit_shards <- function(x, n) {
  S <- length(x$sources)
  kept <- list(i = 0L, d = NULL)
  read <- function(i) {
    if (kept$i != i) {
      d <- shard_data(x$sources[[i]])
      d$dims <- as.integer(c(x$rows[i], x$dims[-1]))
      kept <<- list(i = i, d = d)
    }
    kept$d
  }
  per_row <- unlist(lapply(seq_len(S), function(i) tabulate(read(i)$idx[1, ] + 1L, x$rows[i])))
  b <- row_groups(per_row, n)
  first <- cumsum(c(1, x$rows))[seq_len(S)]  # each shard's first row in the whole
  function(j) {
    lo <- b$begins[j]
    hi <- b$ends[j]
    parts <- list()
    for (i in which(first <= hi & first + x$rows - 1 >= lo)) {
      parts[[length(parts) + 1]] <- slice_rows(read(i), max(lo, first[i]) - first[i] + 1L,
                                               min(hi, first[i] + x$rows[i] - 1) - first[i] + 1L)
    }
    rows <- vapply(parts, function(p) p$dims[1], numeric(1))
    off <- cumsum(c(0, rows))
    idx <- do.call(cbind, lapply(seq_along(parts), function(q) {
      ix <- parts[[q]]$idx
      ix[1, ] <- ix[1, ] + as.integer(off[q])
      ix
    }))
    rn <- lapply(parts, function(p) p$dimnames[[1]])
    dn <- parts[[1]]$dimnames
    if (!is.null(dn)) dn[1] <- list(if (all(!vapply(rn, is.null, logical(1)))) unlist(rn))
    list(idx = idx, val = unlist(lapply(parts, `[[`, "val")), dims = as.integer(c(hi - lo + 1, x$dims[-1])),
         dimnames = dn)
  }
}

write_shard_bin <- function(d, path) {
  con <- file(path, "wb")
  on.exit(close(con))
  N <- length(d$dims)
  names_raw <- serialize(d$dimnames, NULL, xdr = FALSE)
  writeBin(charToRaw("ASPSHRD1"), con)
  writeBin(c(16909060L, as.integer(N)), con, size = 4)  # 0x01020304, N
  writeBin(c(as.numeric(length(d$val)), as.numeric(d$dims), as.numeric(length(names_raw))), con, size = 8)
  writeBin(as.vector(d$idx), con, size = 4)
  writeBin(as.numeric(d$val), con, size = 8)
  writeBin(names_raw, con)
  invisible(path)
}

# A .shard file whole, in the internal form (with its names)
read_shard_bin <- function(path) {
  # (read and checked in C++: values positive and finite, each index within
  # its mode's size)
  d <- cpp_read_shard_file(path)
  if (d$fault) stop(shard_fault_text(d$fault, d$dims))
  dn <- read_shard_names(path, length(d$dims), length(d$val))
  structure(list(idx = d$idx, val = d$val, dims = d$dims, dimnames = dn, total = sum(d$val)),
            class = "aspectr_shard_data")
}

# what a fault of a .shard file's cells (shard_cells_fault()) means
shard_fault_text <- function(fault, dims) {
  if (fault == 1L) return("it holds values that are not positive and finite")
  paste0("it holds cell indices outside its dimensions (", paste(dims, collapse = " x "), "): it is damaged")
}

# the dimnames stored at the end of a .shard file
read_shard_names <- function(path, N, nnz) {
  con <- file(path, "rb")
  on.exit(close(con))
  seek(con, 8 + 8 + 8)
  head <- readBin(con, "double", N + 1, size = 8)
  names_bytes <- head[N + 1]
  seek(con, 8 + 8 + 8 + 8 * (N + 1) + 4 * N * nnz + 8 * nnz)
  dn <- if (names_bytes > 0) unserialize(readBin(con, "raw", names_bytes)) else NULL
  if (is.null(dn)) vector("list", N) else dn
}
