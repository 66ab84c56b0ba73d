# One grid: family x loss x method x option x backend (test-grid.R).
#
# The same call gives the same fit whether the data are a matrix (or array,
# or data frame) in memory, shards() in memory, files of each kind, or
# shards on a 2-worker PSOCK or mirai cluster. The cells are generated from
# the fitters' own argument lists (their losses, nmf()'s methods, the
# options they take) and from the capability table
# (shard_capabilities(): family x loss x method x option), which says for
# every cell what a backend must do:
# * a cell the table allows gives the in-memory fit (factors, weights,
#   objective trace, iterations, method) to 1e-10 on every backend;
# * a cell it refuses raises the table's classed error, with the table's
#   reason, on every backend;
# * a call refused in memory is refused on every backend;
# * with the method left to its default, a backend runs the in-memory
#   default wherever the table allows it (else the method it picks, which
#   must then give the in-memory fit of that method).
# No refusal is written here: a row of the table that comes to run changes
# the cells' expectations by itself. Every row of the table is visited by
# some cell (checked).
#
# The data are tiny (40 x 25 matrices, 18 x 6 x 5 arrays, 3 shards). A
# bigger random grid (random sizes, ranks, splits and seeds, default 2
# cases) runs with the environment variable ASPECTR_GRID_CASES set to a
# count, as ASPECTR_PROPERTY_CASES for helper-properties.R; case i of it is
# reproduced by grid_random_case(i) (see test-grid.R).

grid_n_cases <- function(default = 0) {
  v <- Sys.getenv("ASPECTR_GRID_CASES", "")
  n <- suppressWarnings(as.integer(v))
  if (nzchar(v) && !is.na(n) && n >= 0) n else default
}

# --- data -----------------------------------------------------------------

# A matrix of counts, a 3-way array of counts and a data frame of
# categorical responses, each with its rows cut into shards at `cuts`.
grid_data <- function(m = 40, n = 25, dims3 = c(18, 6, 5), n_lca = 120, cuts = NULL, seed = 1) {
  x <- shard_counts(m, n, seed = seed)
  y <- prop_with_seed(seed + 1, {
    y <- array(stats::rpois(prod(dims3), 2), dims3)
    y[, 1, 1] <- y[, 1, 1] + 1  # no empty row slices
    y
  })
  df <- prop_with_seed(seed + 2, {
    cls <- sample(2, n_lca, TRUE)
    data.frame(a = ifelse(stats::runif(n_lca) < ifelse(cls == 1, 0.8, 0.2), "yes", "no"),
               b = ifelse(stats::runif(n_lca) < ifelse(cls == 1, 0.7, 0.3), "p", "q"),
               c = ifelse(stats::runif(n_lca) < ifelse(cls == 1, 0.6, 0.1), "lo",
                          ifelse(stats::runif(n_lca) < 0.5, "mid", "hi")),
               d = ifelse(stats::runif(n_lca) < ifelse(cls == 1, 0.3, 0.9), "u", "v"))
  })
  cut3 <- function(r) if (is.null(cuts)) round(r * c(0.3, 0.65)) else pmin(pmax(round(r * cuts), 1), r - 1)
  list(matrix = list(x = x, parts = split_rows(x, unique(cut3(m)))),
       tensor = list(x = y, parts = split_rows(y, unique(cut3(dims3[1])))),
       frame = list(x = df, parts = split_rows(df, unique(cut3(n_lca)))))
}

# The backends of one shape of data: named lists of the arguments that
# replace the data (`x`, and `cluster`). Files are written once into `dir`.
grid_backends <- function(shape, parts, dir, clusters) {
  files <- function(ext, writer) {
    f <- file.path(dir, paste0(shape, "-part", seq_along(parts), ".", ext))
    for (i in seq_along(parts)) writer(parts[[i]], f[i])
    shards(f)
  }
  b <- list(memory = list(x = shards(parts)))
  if (shape != "frame") b$shard_files <- list(x = write_shards(parts, file.path(dir, paste0(shape, "-shard"))))
  b$rds_files <- list(x = files("rds", saveRDS))
  if (shape == "matrix") {
    b$mtx_files <- list(x = files("mtx", function(p, f) Matrix::writeMM(Matrix::Matrix(p, sparse = TRUE), f)))
  }
  if (shape != "frame") b$tns_files <- list(x = files("tns", function(p, f) write_tns(as_sptensor(p), f)))
  if (shape == "matrix" && requireNamespace("hdf5r", quietly = TRUE)) {
    b$h5_files <- list(x = files("h5", write_h5_10x))
  }
  for (cl in names(clusters)) b[[cl]] <- list(x = shards(parts), cluster = clusters[[cl]])
  b
}

# A matrix written as a 10x-style .h5 file (features in rows, cells in
# columns: the shard's rows are the file's columns)
write_h5_10x <- function(p, f) {
  m <- methods::as(Matrix::Matrix(t(p), sparse = TRUE), "CsparseMatrix")
  h <- hdf5r::H5File$new(f, mode = "w")
  on.exit(h$close_all())
  g <- h$create_group("matrix")
  g[["data"]] <- m@x
  g[["indices"]] <- m@i
  g[["indptr"]] <- m@p
  g[["shape"]] <- dim(m)
}

# --- the families ---------------------------------------------------------

# What the grid needs of each family: its fitter, the shapes of data it
# takes in shards, its losses and methods (from its argument list where it
# names them, else from the capability table), the arguments a loss needs,
# and the fields a fit is compared on.
grid_families <- function() {
  choices <- function(f, arg) eval(formals(f)[[arg]])
  list(
    plsa = list(fitter = plsa, shapes = c("matrix", "tensor"), losses = choices(plsa, "loss"),
                methods = NULL, loss_args = list(tsallis = list(q = 0.7))),
    nmf = list(fitter = nmf, shapes = "matrix", losses = choices(nmf, "loss"),
               methods = choices(nmf, "method"), loss_args = list(beta = list(beta = 1.5))),
    ntf = list(fitter = ntf, shapes = c("matrix", "tensor"), losses = choices(ntf, "loss"), methods = NULL,
               loss_args = list()),
    lca = list(fitter = lca, shapes = "frame", losses = NA_character_, methods = c("squarem", "em", "cd"),
               loss_args = list())
  )
}

# The options of the capability table (and the fit options the grid varies
# with them) as the arguments of a fit of data of dimensions `dims`: each
# applies to the families whose argument list has its argument.
grid_options <- function(dims) {
  mask <- prop_with_seed(99, array(stats::runif(prod(dims)) < 0.1, dims))
  list(prior = list(prior = 0.1), mask = list(mask = mask), tempering = list(tempering = 0.9),
       accelerate_on = list(accelerate = TRUE), accelerate_off = list(accelerate = FALSE))
}

# The options of the table a fit's arguments make active (the names the
# fitters pass to check_shard_capability())
grid_active <- function(shape, args) {
  c(if (shape == "tensor") "tensor", if (!is.null(args$prior)) "prior", if (!is.null(args$mask)) "mask",
    if (isTRUE(args$accelerate)) "accelerate")
}

# The cells: every family, loss, method (NA: the default) and shape, plain;
# on matrices also with each option the fitter takes.
grid_cells <- function(tab = aspectr:::shard_capabilities(), families = grid_families()) {
  cells <- list()
  for (fam in names(families)) {
    sp <- families[[fam]]
    opt_names <- names(grid_options(1))
    args_of <- names(formals(sp$fitter))
    if (fam == "lca") args_of <- names(formals(aspectr:::lca.default))
    for (loss in sp$losses) {
      methods <- sp$methods
      if (is.null(methods)) methods <- unique(tab$method[tab$family == fam & tab$loss == loss])
      for (method in c(NA, methods)) {
        for (shape in sp$shapes) {
          cells[[length(cells) + 1]] <- list(family = fam, loss = loss, method = method, shape = shape, option = NA)
          if (shape == "tensor") next
          for (o in opt_names) {
            arg <- names(grid_options(1)[[o]])
            if (arg %in% args_of) {
              cells[[length(cells) + 1]] <- list(family = fam, loss = loss, method = method, shape = shape,
                                                 option = o)
            }
          }
        }
      }
    }
  }
  do.call(rbind, lapply(cells, as.data.frame, stringsAsFactors = FALSE))
}

# What the table says of a cell: "ok", or the refusal's reason (a string,
# NA when the table has none to give: a loss or method it does not list)
grid_verdict <- function(tab, family, loss, method, active) {
  t <- tab[tab$family == family & tab$loss == loss, , drop = FALSE]
  base <- t[is.na(t$option) & t$method == method, , drop = FALSE]
  if (!any(base$ok)) return(list(ok = FALSE, why = if (nrow(base)) base$why[!base$ok][1] else NA_character_))
  opt <- t[!t$ok & t$method == method & t$option %in% active, , drop = FALSE]
  if (nrow(opt)) return(list(ok = FALSE, why = opt$why[1]))
  list(ok = TRUE, why = NA_character_)
}

# The fields a fit is compared on
grid_fields <- function(family) {
  switch(family,
         lca = list(equal = c("probs", "P", "posterior", "llik", "run_values"), same = c("iterations", "predclass", "method")),
         list(equal = c("weights", "objective", "initial", "run_values"), same = c("iterations", "method")))
}

# `fit` equals the in-memory `ref` in every field of the grid; the factors
# compared without their names (files of some kinds keep none)
expect_grid_fit <- function(fit, ref, family, info) {
  fl <- grid_fields(family)
  expect_same_fields(fit, ref, fl$equal, fl$same, info = info, unname = TRUE)
  if (family != "lca") {
    f <- function(x) unname(lapply(x$factors, function(m) unname(as.matrix(m))))
    expect_equal(f(fit), f(ref), tolerance = 1e-10, info = paste(info, "factors"))
  }
}

# Runs every cell of `cells` on every backend; returns the counts of cells
# and of (cell, backend) pairs visited, by outcome.
run_grid <- function(cells, data, backends, fit_args, k = 2, label = NULL,
                     option_backends = c("memory", "shard_files", "psock"), tab = aspectr:::shard_capabilities(),
                     families = grid_families()) {
  visited <- character()
  counts <- c(fits = 0L, refusals = 0L, memory_refusals = 0L)
  quiet <- function(f, args) suppressMessages(suppressWarnings(do.call(f, args)))
  for (i in seq_len(nrow(cells))) {
    cl <- cells[i, ]
    sp <- families[[cl$family]]
    d <- data[[cl$shape]]
    args <- c(fit_args, if (!is.na(cl$loss)) c(list(loss = cl$loss), sp$loss_args[[cl$loss]]),
              if (!is.na(cl$method)) list(method = cl$method),
              if (!is.na(cl$option)) grid_options(dim(d$x))[[cl$option]])
    if (cl$family == "lca") args$na.rm <- TRUE
    info <- paste(c(label, cl$family, cl$loss, cl$method, cl$shape, cl$option), collapse = " ")
    ref <- tryCatch(quiet(sp$fitter, c(list(d$x, k), args)), error = function(e) e)
    active <- grid_active(cl$shape, args)
    bk <- backends[[cl$shape]]
    # (the options on the kept shards, .shard files and a PSOCK cluster:
    # files of other kinds fit from their .shard conversion, a mirai
    # cluster as a PSOCK one; the plain cells visit every backend)
    if (!is.na(cl$option)) bk <- bk[intersect(names(bk), option_backends)]
    if (inherits(ref, "error")) {
      # refused in memory: refused on every backend (with an option, on the
      # kept shards: the plain cell visits the others)
      if (!is.na(cl$option)) bk <- bk["memory"]
      expect(inherits(ref, "aspectr_error_input"), paste(info, "memory: not a classed error:", conditionMessage(ref)))
      for (b in names(bk)) {
        got <- tryCatch(quiet(sp$fitter, c(list(bk[[b]]$x, k, cluster = bk[[b]]$cluster), args)),
                        error = function(e) e)
        expect(inherits(got, "aspectr_error_input"),
               paste(info, b, "is not refused as in memory:", if (inherits(got, "error")) conditionMessage(got) else "it runs"))
      }
      counts["memory_refusals"] <- counts["memory_refusals"] + length(bk)
      next
    }
    method <- if (is.na(cl$method)) ref$method else cl$method
    v <- if (cl$family == "lca") list(ok = TRUE) else grid_verdict(tab, cl$family, cl$loss, method, active)
    if (is.na(cl$method) && !v$ok) {
      # the default in memory is refused on shards: the backends run the
      # method they pick, which the table allows, and give the in-memory
      # fit of it (or, when the table allows no method of the loss, refuse
      # as the table says)
      alt <- tryCatch(quiet(sp$fitter, c(list(bk$memory$x, k), args)), error = function(e) e)
      if (!inherits(alt, "error")) {
        v <- grid_verdict(tab, cl$family, cl$loss, alt$method, active)
        expect(v$ok, paste(info, "the default on shards,", alt$method, ", is not one the table allows"))
        method <- args$method <- alt$method
        ref <- quiet(sp$fitter, c(list(d$x, k), args))
      }
    }
    for (b in names(bk)) {
      what <- paste(info, b)
      got <- tryCatch(quiet(sp$fitter, c(list(bk[[b]]$x, k, cluster = bk[[b]]$cluster), args)),
                      error = function(e) e)
      if (v$ok) {
        if (inherits(got, "error")) {
          fail(paste(what, "refused, but the table allows it:", conditionMessage(got)))
          next
        }
        expect_grid_fit(got, ref, cl$family, what)
        counts["fits"] <- counts["fits"] + 1L
      } else {
        expect(inherits(got, "aspectr_error_input_argument"),
               paste(what, "is not the table's refusal:", if (inherits(got, "error")) conditionMessage(got) else "it runs"))
        if (inherits(got, "error") && !is.na(v$why)) {
          msg <- gsub("\\s+", " ", cli::ansi_strip(conditionMessage(got)))
          expect_true(grepl(v$why, msg, fixed = TRUE), info = paste(what, msg))
        }
        counts["refusals"] <- counts["refusals"] + 1L
      }
    }
    visited <- c(visited, paste(cl$family, cl$loss, method, if (length(active)) active else NA, sep = "|"))
  }
  list(counts = counts, visited = unique(visited))
}

# Case i of the random grid: random sizes, rank, shard cuts, seed and
# iterations, and a random tenth of the cells (at least 12)
grid_random_case <- function(i, cells = grid_cells()) {
  prop_with_seed(700000L + as.integer(i), {
    m <- sample(12:60, 1); n <- sample(6:30, 1)
    dims3 <- c(sample(8:24, 1), sample(3:7, 1), sample(3:6, 1))
    cuts <- sort(stats::runif(2, 0.1, 0.9))
    list(data = grid_data(m, n, dims3, n_lca = sample(60:200, 1), cuts = cuts, seed = sample(1e5, 1)),
         k = sample(1:3, 1),
         fit_args = list(seed = sample(1e5, 1), max_iter = sample(3:10, 1), tol = 0, nrun = sample(1:2, 1)),
         cells = cells[sort(sample(nrow(cells), max(12, nrow(cells) %/% 10))), , drop = FALSE])
  })
}
