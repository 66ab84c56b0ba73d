# Dirichlet priors and guided (seeded) topics of plsa(): the arguments
# checked and turned into the pseudo-counts the core takes (in count
# units; the core divides them by the total count), see
# inst/include/aspectr/solvers/prior.h.

# `prior`, `seeds` and `seeds_weight` of plsa() for data of sizes `dims`
# (documents x terms) with term names `terms` and total count `total`:
# NULL (no prior, or every pseudo-count 0: the fit is exactly the maximum
# likelihood one) or list(doc = k values or NULL, term = k x n_terms or
# NULL, seeded = the seeded topics' names).
# `term_counts`: a function giving the terms' total counts (for seeds).
plsa_prior <- function(prior, seeds, seeds_weight, k, dims, terms, term_counts, loss, tempering,
                       call = rlang::caller_env()) {
  if (is.null(prior) && is.null(seeds)) return(NULL)
  what <- if (is.null(prior)) "seeds" else "prior"
  if (!identical(loss, "kl")) {
    abort_input("{.arg {what}} applies to {.code loss = \"kl\"} (maximum a posteriori EM); the {loss} fit has no likelihood to put a prior on.",
                "argument", arg = what, call = call)
  }
  if (tempering != 1) {
    abort_input("{.arg {what}} needs {.code tempering = 1}: tempered EM does not maximize a posterior.",
                "argument", arg = what, call = call)
  }
  if (length(dims) != 2) {
    abort_input("{.arg {what}} applies to a matrix of documents x terms, not to {length(dims)}-way data.",
                "argument", arg = what, call = call)
  }
  V <- dims[2]
  doc <- NULL
  term <- NULL
  if (!is.null(prior)) {
    if (is.numeric(prior) && !is.matrix(prior) && length(prior) == 1) prior <- list(terms = prior, documents = prior)
    if (!is.list(prior) || is.null(names(prior)) || !all(names(prior) %in% c("terms", "documents")) ||
        anyDuplicated(names(prior))) {
      abort_input("{.arg prior} must be a non-negative number or a list with elements {.field terms} and/or {.field documents}, not {describe(prior)}.",
                  "type", arg = "prior", call = call)
    }
    if (!is.null(prior$documents)) {
      a <- prior$documents
      if (!is.numeric(a) || is.matrix(a) || !(length(a) %in% c(1, k)) || anyNA(a) || any(!is.finite(a)) || any(a < 0)) {
        abort_input("{.arg prior$documents} must be one non-negative number or {k} (one per topic), finite, not {describe(a)}.",
                    "value", arg = "prior", call = call)
      }
      doc <- rep_len(as.numeric(a), k)
    }
    if (!is.null(prior$terms)) {
      b <- prior$terms
      ok <- is.numeric(b) && !anyNA(b) && all(is.finite(b)) && all(b >= 0)
      if (ok && is.matrix(b)) {
        # the fit's terms x topics layout, or topics x terms
        if (identical(dim(b), as.integer(c(V, k)))) b <- t(b)
        else if (!identical(dim(b), as.integer(c(k, V)))) ok <- FALSE
        if (ok) b <- matrix(as.numeric(b), k, V)
      } else if (ok) {
        ok <- length(b) == 1
        if (ok) b <- matrix(as.numeric(b), k, V)
      }
      if (!ok) {
        abort_input("{.arg prior$terms} must be one non-negative number or a matrix of pseudo-counts, terms x topics ({V} x {k}) or topics x terms, finite, not {describe(prior$terms)}.",
                    "value", arg = "prior", call = call)
      }
      term <- b
    }
  }
  seeded <- character(0)
  seed_terms <- list()
  if (!is.null(seeds)) {
    sw <- check_number(seeds_weight, "seeds_weight", 0, Inf, lower_open = TRUE, call = call)
    nm <- names(seeds)
    if (!is.list(seeds) || !length(seeds) || is.null(nm) || any(is.na(nm) | !nzchar(nm)) || anyDuplicated(nm) ||
        !all(vapply(seeds, function(s) is.character(s) && length(s) > 0 && !anyNA(s), logical(1)))) {
      abort_input("{.arg seeds} must be a named list of character vectors of terms (one element per guided topic, names unique and not empty), not {describe(seeds)}.",
                  "type", arg = "seeds", call = call)
    }
    if (length(seeds) > k) {
      abort_input("{.arg seeds} names {length(seeds)} topics, more than {.arg k} = {k}.",
                  "value", arg = "seeds", call = call)
    }
    if (is.null(terms)) {
      abort_input("{.arg seeds} needs term names: {.arg x} has no column names.",
                  "argument", arg = "seeds", call = call)
    }
    if (is.null(term)) term <- matrix(0, k, V)
    counts <- term_counts()
    seed_terms <- vector("list", length(seeds))
    for (j in seq_along(seeds)) {
      hit <- match(unique(seeds[[j]]), terms)
      if (anyNA(hit)) {
        miss <- unique(seeds[[j]])[is.na(hit)]
        if (all(is.na(hit))) {
          abort_input("None of the terms of {.arg seeds${nm[j]}} ({.val {miss}}) is a column of {.arg x}.",
                      "value", arg = "seeds", call = call)
        }
        cli::cli_warn("{length(miss)} term{?s} of {.arg seeds${nm[j]}} {?is/are} not a column of {.arg x} and {?is/are} left out: {.val {miss}}.",
                      class = c("aspectr_warning_input", "aspectr_warning"), call = call)
        hit <- hit[!is.na(hit)]
      }
      # seededlda's (>= 1.4) pseudo-counts: 100 * weight times the term's count
      term[j, hit] <- term[j, hit] + 100 * sw * counts[hit]
      seed_terms[[j]] <- hit
    }
    seeded <- nm
  }
  if (!is.null(doc) && all(doc == 0)) doc <- NULL
  if (!is.null(term) && all(term == 0)) term <- NULL
  if (is.null(doc) && is.null(term) && !length(seeded)) return(NULL)
  list(doc = doc, term = term, seeded = seeded, seed_terms = seed_terms)
}

# A random start (a list, or an environment of random_start_lazy()) with
# the guided topics' term columns turned towards their terms: half of
# each column's mass spread evenly over its terms, so that the first
# E-step gives their tokens to their topic. The prior then holds the
# topic there.
plsa_seeded_start <- function(init, pr) {
  if (is.null(pr) || !length(pr$seeded)) return(init)
  V <- init$factors[[2]]
  for (j in seq_along(pr$seed_terms)) {
    s <- pr$seed_terms[[j]]
    col <- V[, j] / sum(V[, j])
    add <- numeric(nrow(V))
    add[s] <- 1 / length(s)
    V[, j] <- 0.5 * col + 0.5 * add
  }
  init$factors[[2]] <- V
  init
}

# The fit's topic names with guided topics: the topic fitted as guided
# topic j (core position j) carries the name of seeds[[j]]; the others
# keep "topic_<position>".
plsa_name_topics <- function(fit, pr, lambda_raw) {
  if (is.null(pr) || !length(pr$seeded)) return(fit)
  ord <- plsa_order(as.numeric(lambda_raw))
  nm <- names(fit$lambda)
  guided <- ord <= length(pr$seeded)
  nm[guided] <- pr$seeded[ord[guided]]
  names(fit$lambda) <- nm
  if (!is.null(fit$weights)) names(fit$weights) <- nm
  fit$factors <- lapply(fit$factors, function(f) {
    if (is.matrix(f)) colnames(f) <- nm
    f
  })
  fit
}

# what a fit keeps of its prior (pseudo-counts in count units, the fit's
# topic order)
plsa_prior_field <- function(pr, lambda_raw, k) {
  if (is.null(pr)) return(NULL)
  ord <- plsa_order(as.numeric(lambda_raw))
  list(documents = if (is.null(pr$doc)) rep(0, k) else pr$doc[ord],
       terms = if (is.null(pr$term)) 0 else if (all(pr$term == pr$term[1])) pr$term[1] else t(pr$term[ord, , drop = FALSE]),
       guided = pr$seeded)
}

# a fit with its prior: topic names of guided topics, the prior kept
# (`prior` NULL without one), the objective's meaning
plsa_with_prior <- function(fit, pr, lambda_raw, k) {
  fit <- plsa_name_topics(fit, pr, lambda_raw)
  fit$prior <- plsa_prior_field(pr, lambda_raw, k)
  fit
}
