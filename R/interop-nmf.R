# Living beside the NMF package (Gaujoux and Seoighe 2010). Both packages
# export nmf() and basis(); whichever is attached last masks the other's.
# * NMF attached last: its S4 generics get methods, registered when NMF
#   loads (or when aspectr loads after it): basis(), nbasis(), coefmap()
#   and basismap() of aspectr's fits, consensusmap() of nmf_rank()'s; nmf() of the inputs NMF has no method
#   for (sparse matrices, slam/tm matrices, shards, Bioconductor containers
#   other than ExpressionSet) and nmf() of a matrix or ExpressionSet called
#   with an argument only aspectr's nmf() has (loss =, init =, ...), or
#   with one of aspectr's loss or method names where NMF's algorithm goes.
#   NMF's methods for those last signatures are kept and called otherwise.
# * aspectr attached last: its nmf() hands a call that can only be NMF's
#   (an NMF algorithm, several ranks, NMF-only arguments, an NMF model) to
#   NMF's generic; basis() of any S4 object goes to NMF's basis().
# coef() is stats' generic in both (NMF makes it S4 with the S3 dispatch as
# its default), so coef() of either fit works in either order.

# arguments of aspectr::nmf() that NMF's nmf() does not have
aspectr_nmf_only_args <- function() {
  c("k", "loss", "beta", "init", "short_iter", "short_keep", "L1", "L2", "max_iter", "tol",
    "eps", "accelerate", "threads", "verbose", "callback", "cluster", "factor_dir", "assay")
}

# arguments of NMF::nmf() that aspectr's nmf() does not have
nmf_pkg_only_args <- function() {
  c("rank", "model", "rng", ".options", ".opt", ".pbackend", ".callback", "maxIter")
}

aspectr_nmf_losses <- c("frobenius", "kl", "beta")
aspectr_nmf_methods <- c("hals", "anls", "mu", "cd", "als")

# Whether `name` (a string) names one of NMF's algorithms.
is_nmf_algorithm <- function(name) {
  if (!is.character(name) || length(name) != 1 || is.na(name) || !isNamespaceLoaded("NMF")) return(FALSE)
  algo <- get("nmfAlgorithm", envir = asNamespace("NMF"))
  tryCatch({ algo(name); TRUE }, error = function(e) FALSE)
}

# Whether a call of aspectr::nmf() can only be meant for NMF::nmf() (NMF's
# namespace loaded): its arguments as given (NULL when missing) and the
# names of the arguments in `...`.
is_nmf_pkg_call <- function(x, k, loss, method, seed, dot_names) {
  if (!isNamespaceLoaded("NMF")) return(FALSE)
  is_nmf_obj <- function(o) isS4(o) && methods::is(o, "NMF")
  if (any(dot_names %in% nmf_pkg_only_args())) return(TRUE)
  if (inherits(x, "formula") || is_nmf_obj(x) || is_nmf_obj(k)) return(TRUE)
  if (is.numeric(k) && length(k) > 1) return(TRUE)
  # the third argument: NMF's algorithm
  foreign <- function(m, own) {
    !is.null(m) && (!is.character(m) || length(m) > 1 && any(vapply(m, is_nmf_algorithm, TRUE)) ||
                      length(m) == 1 && !m %in% own && is_nmf_algorithm(m))
  }
  if (foreign(loss, aspectr_nmf_losses) || foreign(method, aspectr_nmf_methods)) return(TRUE)
  # NMF's seeding: a method name, a list or an NMF model
  if (!is.null(seed) && (is.character(seed) || is.list(seed) || is_nmf_obj(seed))) return(TRUE)
  FALSE
}

# set while NMF's generic hands a call to aspectr's nmf() (which then must
# not hand it back)
nmf_state <- new.env()

# aspectr's basis() called on an object of NMF: its S4 generic.
defer_to_nmf_pkg <- function(fun, object, ...) {
  if (isS4(object) && isNamespaceLoaded("NMF")) {
    return(list(TRUE, get(fun, envir = asNamespace("NMF"))(object, ...)))
  }
  list(FALSE)
}

# The S4 classes of aspectr's objects (registered once, where the methods
# go: aspectr's namespace is sealed when NMF or topicmodels loads after it)
register_old_classes <- function(where) {
  if (isTRUE(where$.old_classes)) return(invisible())
  methods::setOldClass("aspectr_fit", where = where)
  methods::setOldClass(c("aspectr_plsa", "aspectr_fit"), where = where)
  methods::setOldClass(c("aspectr_lca", "aspectr_plsa", "aspectr_fit"), where = where)
  methods::setOldClass(c("aspectr_nmf", "aspectr_fit"), where = where)
  methods::setOldClass(c("aspectr_nmf_rank", "aspectr_rank"), where = where)
  where$.old_classes <- TRUE
  invisible()
}

# NMF's model of an aspectr fit (for NMF's heatmaps)
as_nmf_model <- function(object) {
  object <- rows_in_memory(object)
  model <- get("nmfModel", envir = asNamespace("NMF"))
  model(W = as.matrix(object$W), H = object$H)
}

register_nmf_methods <- function(...) {
  if (!isNamespaceLoaded("NMF")) return(invisible(FALSE))
  ok <- tryCatch({
    where <- s4_registry
    register_old_classes(where)
    ns <- asNamespace("NMF")
    gen <- function(name) get(name, envir = ns)
    methods::setMethod(gen("basis"), "aspectr_nmf", function(object, ...) basis.aspectr_nmf(object, ...),
                       where = where)
    methods::setMethod(gen("nbasis"), "aspectr_nmf", function(x, ...) x$k, where = where)
    # (the samples' annotations of a container as NMF's column tracks)
    methods::setMethod(gen("coefmap"), "aspectr_nmf", function(object, ...) {
      args <- list(...)
      if (is.null(args$annCol) && !is.null(object$annotation)) args$annCol <- object$annotation
      do.call(gen("coefmap"), c(list(as_nmf_model(object)), args))
    }, where = where)
    methods::setMethod(gen("consensusmap"), "aspectr_nmf_rank", function(object, k = NULL, ...) {
      consensus_map(object, k, FALSE)  # (checks the method and k)
      args <- list(...)
      if (is.null(args$annCol) && !is.null(object$annotation)) args$annCol <- object$annotation
      do.call(gen("consensusmap"), c(list(object$details$consensus[[as.character(k %||% object$best)]]), args))
    }, where = where)
    methods::setMethod(gen("basismap"), "aspectr_nmf",
                       function(object, ...) gen("basismap")(as_nmf_model(object), ...), where = where)
    register_nmf_fit_methods(gen("nmf"), where)
    TRUE
  }, error = function(e) FALSE)
  invisible(ok)
}

# nmf(): every input NMF has no method for goes to aspectr; NMF's methods
# for a matrix (and an ExpressionSet) are wrapped to send a call with
# aspectr's arguments to aspectr and every other call to NMF's own method.
register_nmf_fit_methods <- function(generic, where) {
  to_aspectr <- function(x, rank, method, ...) {
    old <- nmf_state$from_nmf
    nmf_state$from_nmf <- TRUE
    on.exit(nmf_state$from_nmf <- old)
    if (missing(method)) {
      if (missing(rank)) nmf(x, ...) else nmf(x, rank, ...)
    } else if (is.character(method) && length(method) == 1 && method %in% aspectr_nmf_losses) {
      if (missing(rank)) nmf(x, loss = method, ...) else nmf(x, rank, loss = method, ...)
    } else {
      if (missing(rank)) nmf(x, method = method, ...) else nmf(x, rank, method = method, ...)
    }
  }
  wants_aspectr <- function(method, dot_names) {
    any(dot_names %in% aspectr_nmf_only_args()) ||
      (!missing(method) && is.character(method) && length(method) == 1 &&
         method %in% c(aspectr_nmf_losses, aspectr_nmf_methods) && !is_nmf_algorithm(method))
  }
  # (the fit records the call as the user wrote it)
  with_call <- function(fit, call) {
    if (inherits(fit, "aspectr_fit")) fit$call <- call
    fit
  }
  methods::setMethod(generic, methods::signature(x = "ANY", rank = "ANY", method = "ANY"),
                     function(x, rank, method, ...) with_call(to_aspectr(x, rank, method, ...), sys.call()),
                     where = where)
  # NMF's own methods, kept the first time (a second registration must not
  # wrap the wrapper)
  if (is.null(where$.nmf_methods)) {
    sigs <- list(c("matrix", "numeric", "missing"), c("matrix", "numeric", "character"),
                 c("matrix", "missing", "ANY"))
    if (methods::existsMethod(generic, c("ExpressionSet", "ANY", "ANY"))) {
      sigs <- c(sigs, list(c("ExpressionSet", "ANY", "ANY")))
    }
    where$.nmf_methods <- lapply(stats::setNames(sigs, vapply(sigs, paste, "", collapse = ",")),
                                 function(s) methods::getMethod(generic, s))
  }
  for (nm in names(where$.nmf_methods)) {
    local({
      own <- where$.nmf_methods[[nm]]
      methods::setMethod(generic, strsplit(nm, ",")[[1]], function(x, rank, method, ...) {
        dots <- names(match.call(expand.dots = FALSE)$...)
        if (!wants_aspectr(method, dots)) return(own(x, rank, method, ...))
        with_call(to_aspectr(x, rank, method, ...), sys.call())
      }, where = where)
    })
  }
  invisible()
}
