# Held-out evaluation of topic models: per-token perplexity after fold-in.

#' Perplexity of held-out documents
#'
#' Folds the documents of `newdata` into a fitted topic model (their topic
#' proportions \eqn{P(z \mid d)} estimated by EM under KL with the topics
#' \eqn{P(w \mid z)} fixed, as [predict.aspectr_plsa()] does) and returns
#' the per-token perplexity
#' \deqn{\exp\left(-\frac{\sum_{d,w} n_{dw} \log \sum_z P(z \mid d) P(w \mid z)}{\sum_{d,w} n_{dw}}\right),}
#' lower is better; a model that knows nothing of the data (every term
#' equally likely) scores the vocabulary size. For an N-way fit the
#' "documents" are the indices of the first mode and the "tokens" the counts
#' of the cells of the other modes. Terms the fit does not know (matched by
#' column name) are left out and counted in the attribute `dropped`.
#'
#' @section Two definitions:
#' Held-out perplexity depends on where the topic proportions of a
#' held-out document come from:
#' * **Full fold-in** (the default, `foldin = NULL`): \eqn{P(z \mid d)} is
#'   estimated from the held-out document and the same tokens are then
#'   scored. It rewards a model for fitting the very tokens it is scored on:
#'   with many topics and short documents the fold-in nearly reproduces each
#'   document, and the perplexity keeps falling with `k`.
#'   [topicmodels::perplexity()] with `newdata` computes this kind for its
#'   variational (VEM) fits: it folds the documents in by variational EM
#'   with the topics fixed and reports \eqn{\exp(-B / N)}, \eqn{B} the
#'   variational lower bound on the log likelihood of the held-out documents
#'   and \eqn{N} their token count (so its value is an upper bound on that
#'   perplexity, and the two packages' full fold-in numbers are not the
#'   same quantity).
#' * **Document completion** (`foldin` given; Wallach et al. 2009): the
#'   tokens of each held-out document are split in two, the proportions
#'   estimated from one part (`foldin`) and the other part (`newdata`)
#'   scored with the plug-in probabilities \eqn{\sum_z P(z \mid d) P(w \mid z)}.
#'   It measures prediction of unseen tokens and is the definition to
#'   compare models by. The same definition applies to a fit of
#'   \pkg{topicmodels} (`LDA()` or `CTM()`): `perplexity(lda_fit, newdata,
#'   foldin = ...)` takes \eqn{P(z \mid d)} from
#'   `topicmodels::posterior(lda_fit, foldin)` (the normalized variational
#'   parameters for VEM) and \eqn{P(w \mid z)} from the fit, and scores
#'   `newdata` by the formula above, so that pLSA and LDA are measured
#'   alike. With
#'   \pkg{topicmodels} attached after \pkg{aspectr}, its `perplexity()`
#'   masks this one: call `aspectr::perplexity()`.
#'
#' For a fit with pseudo-counts on \eqn{P(z \mid d)} (`plsa(prior =)`) the
#' fold-in is the maximum a posteriori estimate with them (see
#' [predict.aspectr_plsa()]).
#'
#' Without `newdata`, the training perplexity of a KL fit of a matrix, from
#' the fitted \eqn{P(z \mid d)} (as in `summary()`). Passing the training
#' data instead folds it in again: for an EM fit run to convergence the
#' fold-in recovers the fitted \eqn{P(z \mid d)} and the same number.
#'
#' @param object A pLSA fit ([plsa()] under any loss; its topics are used
#'   as they are) or a KL [nmf()] fit (through [as_plsa()]).
#' @param newdata Held-out counts (or `NULL`, see Details): documents x terms like the fitted data
#'   (or, for N-way fits, a tensor whose modes after the first match the
#'   fit's).
#' @param foldin `NULL` (default: the topic proportions of each held-out
#'   document are estimated from `newdata` itself) or counts of the same
#'   documents (same rows, same terms) to estimate them from, the scores
#'   being taken on `newdata`: "document completion", which does not reward
#'   a model for fitting the very tokens it is scored on (see
#'   [plsa_rank()]).
#' @param max_iter,tol Iteration limit and tolerance of the fold-in.
#' @param threads Number of threads; `NULL` uses [default_threads()].
#' @param ... Must be empty; an unknown argument is an error.
#' @return A number, with attributes `tokens` (the counts scored) and
#'   `dropped` (counts of unknown terms left out).
#' @references
#' Wallach, H. M., Murray, I., Salakhutdinov, R. and Mimno, D. (2009).
#' Evaluation methods for topic models. *ICML'09*.
#' @seealso [predict.aspectr_plsa()] for the fold-in.
#' @examples
#' train <- sotu_dtm[seq(1, 240, by = 2), ]
#' test <- sotu_dtm[seq(2, 240, by = 2), ]
#' fit <- plsa(train, k = 5, seed = 1, max_iter = 100, tol = 1e-4)
#' perplexity(fit, test)
#' @export
perplexity <- function(object, newdata, ...) UseMethod("perplexity")

#' @rdname perplexity
#' @export
perplexity.aspectr_plsa <- function(object, newdata, foldin = NULL, max_iter = 1000, tol = 1e-10,
                                    threads = NULL, ...) {
  check_dots_empty(...)
  if (isFALSE(object$normalize)) {
    abort_unsupported("{.fn perplexity} of this fit",
                      "with {.code normalize = FALSE} it is not a probability model.",
                      "Refit with {.code normalize = TRUE}.")
  }
  if (missing(newdata) || is.null(newdata)) {
    if (length(object$dims) != 2 || is.null(object$doc_totals) || !identical(object$loss, "kl")) {
      abort_input("{.arg newdata} is missing: the training perplexity without data is available for KL fits of a matrix; give the data to score.",
                  "argument", arg = "newdata")
    }
    return(train_perplexity(object))
  }
  max_iter <- check_whole(max_iter, "max_iter")
  tol <- check_number(tol, "tol", 0, Inf)
  threads <- resolve_threads(threads)
  N <- length(object$dims)
  if (N == 2) {
    d <- match_newdata(object, newdata)
    offered <- tryCatch(as_aspect_data(newdata, "newdata")$total, aspectr_error_input_empty = function(e) 0)
  } else {
    d <- as_aspect_data(newdata, "newdata")
    if (length(d$dims) != N || any(d$dims[-1] != object$dims[-1])) {
      abort_input("{.arg newdata} must have the fitted sizes {paste(object$dims[-1], collapse = ' x ')} in the modes after the first, not {paste(d$dims[-1], collapse = ' x ')}.",
                  "newdata", arg = "newdata")
    }
    offered <- d$total
  }
  # cells the model gives probability zero under every topic (terms absent
  # from the training data) are unknown terms too
  kc <- known_cells(d, Reduce(`*`, lapply(2:N, function(n) object$factors[[n]][d$idx[n, ] + 1L, , drop = FALSE])))
  d <- kc$d
  B <- kc$B
  if (!is.null(foldin)) {
    # proportions from other counts of the same documents
    fd <- if (N == 2) match_newdata(object, foldin) else as_aspect_data(foldin, "foldin")
    if (!identical(as.integer(fd$dims), as.integer(d$dims))) {
      abort_input("{.arg foldin} must have the shape of {.arg newdata} ({paste(d$dims, collapse = ' x ')}), not {paste(fd$dims, collapse = ' x ')}.",
                  "newdata", arg = "foldin")
    }
    theta <- foldin_theta(object, fd, max_iter, tol, threads)
  } else {
    theta <- foldin_theta(object, d, max_iter, tol, threads, B)
  }
  score_tokens(d, B, theta, offered)
}

#' @rdname perplexity
#' @export
perplexity.aspectr_nmf <- function(object, newdata, ...) {
  if (!identical(object$loss, "kl")) {
    abort_unsupported("{.fn perplexity} of a {object$loss} NMF",
                      "only a KL fit is a topic model.",
                      "Fit {.code nmf(x, k, loss = \"kl\")} or {.fn plsa}.")
  }
  object <- rows_in_memory(object)
  perplexity(as_plsa(object), newdata, ...)
}

#' @export
perplexity.default <- function(object, newdata, ...) {
  if (isS4(object) && methods::is(object, "TopicModel") && !missing(newdata) && !is.null(list(...)$foldin)) {
    return(completion_topicmodels(object, newdata, ...))
  }
  d <- if (missing(newdata)) defer_to_topicmodels("perplexity", object, ...) else
    defer_to_topicmodels("perplexity", object, newdata, ...)
  if (d[[1]]) return(d[[2]])
  abort_input("{.arg object} must be a {.fn plsa} or KL {.fn nmf} fit, not {describe(object)}.",
              "type", arg = "object")
}

# P(z | document) of the documents in `d` (internal form, aligned to the
# fit's terms) by KL fold-in; `B` (the fixed factors' products at d's
# cells) when already at hand.
foldin_theta <- function(object, d, max_iter, tol, threads, B = NULL) {
  N <- length(object$dims)
  if (is.null(B)) B <- Reduce(`*`, lapply(2:N, function(n) object$factors[[n]][d$idx[n, ] + 1L, , drop = FALSE]))
  keep <- rowSums(B) > 0
  d$idx <- d$idx[, keep, drop = FALSE]
  d$val <- d$val[keep]
  B <- B[keep, , drop = FALSE]
  if (N > 2) return(foldin_nway(d, B, object$lambda, max_iter, tol))
  # (the fit's columns in their order: matched by position, so that a fit
  # with repeated column names folds in too)
  known <- Matrix::sparseMatrix(i = d$idx[1, ] + 1L, j = d$idx[2, ] + 1L, x = d$val, dims = d$dims)
  predict(object, known, loss = "kl", max_iter = max_iter, tol = tol, threads = threads)
}

# EM fold-in of first-mode slices with the other modes' factors fixed: B
# holds, per non-zero cell, the product of the fixed factors' entries (the
# iterations in the core: solvers/foldin.h, fold_in_cells()).
foldin_nway <- function(d, B, lambda, max_iter, tol) {
  cpp_foldin_cells(B, d$idx[1, ] + 1L, as.double(d$val), as.integer(d$dims[1]), lambda / sum(lambda),
                   as.integer(max_iter), tol)
}

# The cells of `d` the model gives a positive probability under some topic
# (B: per cell, the fixed factors' products), with their rows of B; cells
# of terms absent from the training data are left out, and newdata with no
# such count is refused.
known_cells <- function(d, B, call = rlang::caller_env()) {
  keep <- rowSums(B) > 0
  d$idx <- d$idx[, keep, drop = FALSE]
  d$val <- d$val[keep]
  if (sum(d$val) == 0) {
    abort_input("{.arg newdata} has no counts of terms the fit knows: there is nothing to score.",
                "empty", arg = "newdata", call = call)
  }
  list(d = d, B = B[keep, , drop = FALSE])
}

# Document completion for a topicmodels fit (LDA or CTM): P(z | d) from
# topicmodels::posterior() of `foldin`, P(w | z) from the fit, the tokens
# of `newdata` scored as perplexity.aspectr_plsa() scores them.
completion_topicmodels <- function(object, newdata, foldin, ...) {
  check_dots_empty(...)
  rlang::check_installed(c("topicmodels", "slam"), "to score a topicmodels fit")
  terms <- object@terms
  k <- object@k
  fake <- list(dims = c(0L, length(terms)), dimnames = list(NULL, terms))
  d <- match_newdata(fake, newdata)
  fd <- match_newdata(fake, foldin)
  if (!identical(as.integer(fd$dims), as.integer(d$dims))) {
    abort_input("{.arg foldin} must have the shape of {.arg newdata} ({paste(d$dims, collapse = ' x ')}), not {paste(fd$dims, collapse = ' x ')}.",
                "newdata", arg = "foldin")
  }
  offered <- d$total %||% 0
  phi <- t(exp(object@beta))  # terms x k
  kc <- known_cells(d, phi[d$idx[2, ] + 1L, , drop = FALSE])
  d <- kc$d
  B <- kc$B
  # the fold-in part as the fit's own document-term matrix (documents
  # without tokens there get the posterior of an empty document)
  stm <- slam::simple_triplet_matrix(i = fd$idx[1, ] + 1L, j = fd$idx[2, ] + 1L, v = fd$val,
                                     nrow = fd$dims[1], ncol = length(terms),
                                     dimnames = list(as.character(seq_len(fd$dims[1])), terms))
  theta <- topicmodels::posterior(object, newdata = stm)$topics
  score_tokens(d, B, theta, offered)
}

# exp(-sum n log p / sum n) over the cells of `d` (internal form) with p
# their plug-in probabilities, B the terms' factor at the cells and theta
# the documents' proportions
score_tokens <- function(d, B, theta, offered) {
  p <- rowSums(B * theta[d$idx[1, ] + 1L, , drop = FALSE])
  tokens <- sum(d$val)
  structure(exp(-sum(d$val * log(p)) / tokens), tokens = tokens, dropped = offered - tokens)
}
