# Living beside topicmodels. topicmodels (and modeltools) define S4
# generics topics(), terms(), perplexity() and posterior(); whichever
# package is attached last masks the other's topics() and perplexity().
# Both calls must keep working in either order:
# * topicmodels attached last: its S4 generics get methods for aspectr's
#   fits, registered when topicmodels loads, that call aspectr's methods;
# * aspectr attached last: aspectr's S3 generics hand any other object to
#   topicmodels' generic when topicmodels is loaded (topics.default,
#   perplexity.default).
# terms() is stats' S3 generic in both packages (topicmodels makes it S4
# with stats::terms as default, which dispatches to aspectr's S3 methods).

# where the S4 method tables for aspectr's classes live (the namespace is
# sealed when topicmodels loads after aspectr)
s4_registry <- new.env()

register_topicmodels_methods <- function(...) {
  if (!isNamespaceLoaded("topicmodels")) return(invisible(FALSE))
  ok <- tryCatch({
    where <- s4_registry
    register_old_classes(where)
    tm <- asNamespace("topicmodels")
    methods::setMethod(get("topics", tm), "aspectr_plsa",
                       function(x, ...) topics.aspectr_plsa(x, ...), where = where)
    methods::setMethod(get("perplexity", tm), "aspectr_plsa",
                       function(object, newdata, ...) perplexity.aspectr_plsa(object, newdata, ...),
                       where = where)
    methods::setMethod(get("perplexity", tm), "aspectr_nmf",
                       function(object, newdata, ...) perplexity.aspectr_nmf(object, newdata, ...),
                       where = where)
    # posterior() is modeltools' generic, which topicmodels imports
    post <- get0("posterior", envir = tm, mode = "function")
    if (!is.null(post) && methods::is(post, "standardGeneric")) {
      methods::setMethod(post, "aspectr_plsa",
                         function(object, newdata, ...) posterior_plsa(object, newdata, ...),
                         where = where)
    }
    TRUE
  }, error = function(e) FALSE)
  invisible(ok)
}

# topicmodels' posterior(): list(terms = topics x terms P(w | z), topics =
# documents x topics P(z | d)), of new documents when `newdata` is given.
posterior_plsa <- function(object, newdata, ...) {
  terms <- t(object$factors[[length(object$dims)]])
  if (missing(newdata) || is.null(newdata)) object <- rows_in_memory(object)
  theta <- if (missing(newdata) || is.null(newdata)) topics(object) else predict(object, newdata, ...)
  list(terms = terms, topics = theta)
}

# aspectr's S3 generic called on an object of topicmodels: its S4 generic.
defer_to_topicmodels <- function(fun, object, ...) {
  if (isS4(object) && isNamespaceLoaded("topicmodels")) {
    return(list(TRUE, get(fun, asNamespace("topicmodels"))(object, ...)))
  }
  list(FALSE)
}

.onLoad <- function(libname, pkgname) {
  # the documented options' defaults, where the user has not set them
  # (getOption() then shows what a fit uses)
  defaults <- list(aspectr.shard_cache = TRUE, aspectr.progress_interval = 2)
  unset <- !(names(defaults) %in% names(options()))
  if (any(unset)) options(defaults[unset])
  register_topicmodels_methods()
  setHook(packageEvent("topicmodels", "onLoad"), function(...) register_topicmodels_methods())
  register_nmf_methods()
  setHook(packageEvent("NMF", "onLoad"), function(...) register_nmf_methods())
  invisible()
}
