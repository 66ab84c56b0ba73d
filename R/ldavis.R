# The JSON that LDAvis's page reads, from a topic-like fit, with the fit's
# own topic numbers.

#' LDAvis's JSON for a topic model
#'
#' Writes the data that the LDAvis page (Sievert and Shirley 2014) reads,
#' as `LDAvis::createJSON()` computes it, from a [plsa()] fit of a
#' documents x terms matrix or an [nmf()] fit (in the pLSA form of
#' [as_plsa()]): pass the result to `LDAvis::serVis()`. Unlike
#' `createJSON()`'s default, the topics are not reordered by size: topic
#' `z` of the page is topic `z` of the fit (`topic.order` is `1, ..., k`,
#' as with `createJSON(reorder.topics = FALSE)`).
#'
#' The inputs `createJSON()` takes are \eqn{\phi = P(w \mid z)} (the fit's
#' term distributions), \eqn{\theta = P(z \mid d)} ([topics()]) and the
#' documents' lengths (their total counts in the fitted data); what is
#' computed from them follows `createJSON()`: topic sizes
#' \eqn{\sum_d n_d \theta_{dz}}, the inter-topic map (classical scaling of
#' the Jensen-Shannon divergences between topics), term saliency for the
#' default view, and for every \eqn{\lambda} on a grid of step
#' `lambda_step` the `R` most relevant terms of each topic, with their
#' log-probability and log-lift (rounded to 4 digits) and their estimated
#' counts. Terms that no topic uses are left out; a topic lists only terms
#' of positive probability (fewer than `R` when it has fewer).
#'
#' @param fit A [plsa()] fit of a documents x terms matrix or an [nmf()]
#'   fit.
#' @param R Number of terms shown per topic.
#' @param lambda_step Step of the relevance grid in (0, 1].
#' @param file `NULL` (default) or a path to write the JSON to.
#' @param ... Must be empty; an unknown argument is an error.
#' @return The JSON text (a string of class `"json"`), invisibly when
#'   written to `file`.
#' @references Sievert C, Shirley K (2014). LDAvis: A method for
#'   visualizing and interpreting topics. Proceedings of the Workshop on
#'   Interactive Language Learning, Visualization, and Interfaces, 63-70.
#' @seealso [terms()][terms.aspectr_plsa()] with `lambda` for the same
#'   relevance ranking in R.
#' @examples
#' fit <- plsa(sotu_dtm, k = 4, seed = 1, max_iter = 100, tol = 1e-5)
#' json <- as_ldavis_json(fit, R = 10)
#' substr(json, 1, 80)
#' # with LDAvis installed, serVis(json) from it opens the page
#' @export
as_ldavis_json <- function(fit, R = 30, lambda_step = 0.01, file = NULL, ...) {
  check_dots_empty(...)
  check_required(fit, "a pLSA or NMF fit")
  tf <- topic_form(fit, "{.fn as_ldavis_json}")
  R <- check_whole(R, "R")
  lambda_step <- check_number(lambda_step, "lambda_step", 0, 1, lower_open = TRUE)
  if (!is.null(file) && !(is.character(file) && length(file) == 1 && !is.na(file))) {
    abort_input("{.arg file} must be NULL or a file path, not {describe(file)}.", "argument", arg = "file")
  }
  doc_length <- if (inherits(fit, "aspectr_plsa")) fit$doc_totals else fit$row_totals
  theta <- tf$gamma()
  json <- ldavis_json(t(tf$beta), theta, as.numeric(doc_length), tf$terms, R, lambda_step)
  if (!is.null(file)) {
    write_utf8(json, file)
    return(invisible(json))
  }
  json
}

# createJSON()'s computation (LDAvis), topics in the fit's order: phi is
# k x terms, theta documents x k.
ldavis_json <- function(phi, theta, doc_length, vocab, R, lambda_step) {
  K <- nrow(phi)
  topic_frequency <- colSums(theta * doc_length)
  topic_proportion <- topic_frequency / sum(topic_frequency)
  mds <- ldavis_mds(phi)
  term_topic_frequency <- phi * topic_frequency
  term_frequency <- colSums(term_topic_frequency)
  # (terms no topic uses: createJSON() refuses them)
  used <- term_frequency > 0
  phi <- phi[, used, drop = FALSE]
  vocab <- vocab[used]
  term_topic_frequency <- term_topic_frequency[, used, drop = FALSE]
  term_frequency <- term_frequency[used]
  R <- min(R, length(vocab))
  term_proportion <- term_frequency / sum(term_frequency)
  phi <- t(phi)  # terms x k
  topic_given_term <- phi / rowSums(phi)
  kernel <- topic_given_term * log(sweep(topic_given_term, 2, topic_proportion, "/"))
  kernel[topic_given_term == 0] <- 0
  saliency <- term_proportion * rowSums(kernel)
  default_terms <- order(saliency, decreasing = TRUE)[seq_len(R)]
  counts <- as.integer(term_frequency[default_terms])
  Rs <- rev(seq_len(R))
  default <- data.frame(Term = vocab[default_terms], logprob = Rs, loglift = Rs, Freq = counts,
                        Total = counts, Category = "Default", stringsAsFactors = FALSE)
  lift <- phi / term_proportion
  logphi <- log(phi)
  loglift <- log(lift)
  # the R most relevant terms of positive probability of each topic, for
  # every lambda of the grid
  picks <- lapply(seq(0, 1, by = lambda_step), function(l) {
    rel <- l * logphi + (1 - l) * loglift
    do.call(rbind, lapply(seq_len(K), function(z) {
      pos <- which(phi[, z] > 0)
      i <- pos[order(rel[pos, z], decreasing = TRUE)[seq_len(min(R, length(pos)))]]
      if (!length(i)) return(NULL)
      data.frame(term = i, topic = z)
    }))
  })
  picks <- unique(do.call(rbind, picks))
  tinfo <- data.frame(Term = vocab[picks$term], Category = paste0("Topic", picks$topic),
                      logprob = round(logphi[cbind(picks$term, picks$topic)], 4),
                      loglift = round(loglift[cbind(picks$term, picks$topic)], 4),
                      stringsAsFactors = FALSE)
  tinfo$Total <- term_frequency[picks$term]
  tinfo$Freq <- term_topic_frequency[cbind(picks$topic, picks$term)]
  tinfo <- rbind(default, tinfo[, names(default)])
  # the terms' distributions over topics, for the circles of a highlighted
  # term: counts rounded, those below 0.5 left out, shares of the term
  m <- sort(unique(match(tinfo$Term, vocab)))
  tmp <- term_topic_frequency[, m, drop = FALSE]
  big <- which(tmp >= 0.5, arr.ind = TRUE)
  tt <- data.frame(Term = vocab[m][big[, 2]], Topic = big[, 1], Freq = round(tmp[big]),
                   stringsAsFactors = FALSE)
  tt$Freq <- tt$Freq / term_frequency[match(tt$Term, vocab)]
  tt <- tt[order(tt$Term, tt$Topic), , drop = FALSE]
  mds_dat <- list(x = mds[, 1], y = mds[, 2], topics = seq_len(K), Freq = topic_proportion * 100,
                  cluster = rep(1L, K))
  out <- list(mdsDat = mds_dat, tinfo = as.list(tinfo[c("Term", "Freq", "Total", "Category", "logprob", "loglift")]),
              token.table = as.list(tt[c("Topic", "Freq", "Term")]), R = scalar(R),
              lambda.step = scalar(lambda_step),
              plot.opts = list(xlab = scalar("PC1"), ylab = scalar("PC2")),
              topic.order = seq_len(K))
  structure(to_json(out), class = "json")
}

# LDAvis's inter-topic map: the Jensen-Shannon divergences between the
# topics' term distributions, reduced to two dimensions by classical scaling
# (a column of zeros where there are fewer than two dimensions).
ldavis_mds <- function(phi) {
  K <- nrow(phi)
  js <- function(x, y) {
    m <- 0.5 * (x + y)
    lhs <- ifelse(x == 0, 0, x * (log(x) - log(m)))
    rhs <- ifelse(y == 0, 0, y * (log(y) - log(m)))
    0.5 * sum(lhs) + 0.5 * sum(rhs)
  }
  D <- matrix(0, K, K)
  for (a in seq_len(K)) for (b in seq_len(a - 1)) D[a, b] <- D[b, a] <- js(phi[a, ], phi[b, ])
  xy <- matrix(0, K, 2)
  if (K > 1) {
    fit <- suppressWarnings(stats::cmdscale(stats::as.dist(D), k = min(2, K - 1)))
    xy[, seq_len(ncol(fit))] <- fit
  }
  xy
}

# A small JSON writer: named lists are objects, vectors arrays, and values
# marked by scalar() single values.
to_json <- function(x) {
  if (is.list(x)) {
    parts <- vapply(names(x), function(nm) paste0(json_string(nm), ":", to_json(x[[nm]])), "")
    return(paste0("{", paste(parts, collapse = ","), "}"))
  }
  v <- if (is.character(x)) json_string(unclass(x)) else if (is.logical(x)) ifelse(x, "true", "false") else {
    if (any(!is.finite(x))) stop("internal: a value to write to JSON is not finite")
    if (is.integer(x)) as.character(x) else formatC(unclass(x), digits = 15, format = "g")
  }
  if (inherits(x, "json_scalar")) v else paste0("[", paste(v, collapse = ","), "]")
}

scalar <- function(x) structure(x, class = "json_scalar")

json_string <- function(s) {
  s <- enc2utf8(as.character(s))
  s <- gsub("\\", "\\\\", s, fixed = TRUE)
  s <- gsub("\"", "\\\"", s, fixed = TRUE)
  s <- gsub("\n", "\\n", s, fixed = TRUE)
  s <- gsub("\r", "\\r", s, fixed = TRUE)
  s <- gsub("\t", "\\t", s, fixed = TRUE)
  ctrl <- grepl("[\001-\037]", s)
  if (any(ctrl)) {
    s[ctrl] <- vapply(s[ctrl], function(t) {
      cp <- utf8ToInt(t)
      paste(ifelse(cp < 32, sprintf("\\u%04x", cp), vapply(cp, intToUtf8, "")), collapse = "")
    }, "")
  }
  paste0("\"", s, "\"")
}
