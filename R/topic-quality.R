# Topic-like fits in one form (topic weights, term distributions, document
# proportions), topic quality (coherence, exclusivity, FREX, size) and the
# relevance ranking of terms.

# The pLSA form of a topic-like fit: `lambda` (P(z)), `beta` (terms x k,
# P(w | z)), `terms` (names), `docs` (names) and `gamma()` (documents x k,
# P(z | d), computed on demand). pLSA fits give their own factors; an NMF
# X ~ WH is normalized as as_plsa() does (Gemulla and Miettinen 2013):
# P(w | z) = H[z, w] / sum_w H[z, w], P(z) proportional to
# sum_d W[d, z] sum_w H[z, w], P(z | d) proportional to W[d, z] sum_w H[z, w].
# A component that is zero throughout keeps its number with beta 0 and
# weight 0. N-way fits have no document-term form.
topic_form <- function(fit, what, call = rlang::caller_env()) {
  if (inherits(fit, "aspectr_plsa")) {
    if (length(fit$dims) != 2) {
      abort_unsupported(paste(what, "of an N-way pLSA fit"),
                        "it needs documents x terms data, not a {length(fit$dims)}-way tensor.",
                        call = call)
    }
    k <- fit$k
    return(list(k = k, lambda = as.numeric(fit$lambda), beta = unname(fit$factors[[2]]),
                terms = term_names(fit), docs = function() doc_names(fit),
                dims = fit$dims, dimnames = fit$dimnames,
                gamma = function() {
                  fit <- rows_in_memory(fit)
                  unname(topic_weights(fit$factors[[1]], fit$lambda))
                }))
  }
  if (inherits(fit, "aspectr_nmf")) {
    H <- unname(fit$H)
    k <- nrow(H)
    rh <- rowSums(H)
    beta <- t(H / ifelse(rh > 0, rh, 1))
    terms <- colnames(fit$H) %||% as.character(seq_len(ncol(H)))
    # (the topic sizes need the column sums of W)
    fit <- rows_in_memory(fit)
    cw <- colSums(fit$W)
    mass <- unname(cw * rh)
    lambda <- if (sum(mass) > 0) mass / sum(mass) else rep(1 / k, k)
    return(list(k = k, lambda = lambda, beta = beta, terms = terms,
                docs = function() rownames(fit$W) %||% as.character(seq_len(fit$dims[1])),
                dims = fit$dims, dimnames = fit$dimnames,
                gamma = function() {
                  fit <- rows_in_memory(fit)
                  unname(topic_weights(sweep(unname(fit$W), 2, ifelse(cw > 0, cw, 1), "/"), lambda))
                }))
  }
  abort_input("{.arg fit} must be an {.cls aspectr_plsa} or {.cls aspectr_nmf} fit, not {describe(fit)}.",
              "type", arg = "fit", call = call)
}

# The top n term indices of each topic (n x k), by P(w | z) or by relevance.
top_term_index <- function(beta, n, relevance = NULL) {
  s <- if (is.null(relevance)) beta else relevance
  matrix(apply(s, 2, function(p) order(p, decreasing = TRUE)[seq_len(n)]), nrow = n)
}

# LDAvis's relevance of term w to topic z (Sievert and Shirley 2014):
# lambda log P(w | z) + (1 - lambda) log(P(w | z) / P(w)), P(w) the model's
# term marginal sum_z P(z) P(w | z). Terms with P(w | z) = 0 get -Inf.
relevance_matrix <- function(beta, weights, lambda) {
  pw <- drop(beta %*% weights)
  r <- lambda * log(beta) + (1 - lambda) * log(sweep(beta, 1, ifelse(pw > 0, pw, 1), "/"))
  r[!(beta > 0)] <- -Inf
  r
}

check_lambda <- function(lambda, call = rlang::caller_env()) {
  check_number(lambda, "lambda", 0, 1, call = call)
}

#' Topic quality: coherence, exclusivity, FREX and size
#'
#' Scores every topic of a fit by the measures topic-model users judge
#' topics and choose `k` by: two coherence measures, computed from the
#' document co-occurrence of the topic's top `n` terms (in the data the model
#' was fitted to, or in a reference corpus), two exclusivity measures
#' computed from the term distributions alone, and the topic's size.
#'
#' Let \eqn{v_1, \dots, v_n} be the topic's `n` most probable terms, in
#' decreasing order of \eqn{P(w \mid z)}; \eqn{D(v)} the number of documents
#' of the corpus containing \eqn{v}, \eqn{D(v, v')} the number containing
#' both, and \eqn{N} the number of documents (rows, empty ones included).
#'
#' * `umass`: the coherence of Mimno et al. (2011), as the mean over the
#'   \eqn{n(n-1)/2} pairs
#'   \deqn{\frac{2}{n(n-1)} \sum_{m=2}^{n} \sum_{l=1}^{m-1}
#'     \log \frac{D(v_m, v_l) + \epsilon}{D(v_l)}}{mean over l < m of
#'     log((D(v_m, v_l) + epsilon) / D(v_l))}
#'   with \eqn{\epsilon} = `epsilon` (1, as in the paper). Mimno et al. and
#'   `stm::semanticCoherence()` report the sum over pairs (\eqn{n(n-1)/2}
#'   times this value; stm uses \eqn{\epsilon = 0.01} in the numerator and
#'   the denominator). At most \eqn{\log(1 + \epsilon)} (a pair always
#'   together); higher is more coherent.
#' * `npmi`: the mean over the \eqn{n(n-1)/2} pairs of the normalized
#'   pointwise mutual information (Bouma 2009; used for topic coherence by
#'   Aletras and Stevenson 2013) of document occurrence, with
#'   \eqn{P(v) = D(v) / N} and \eqn{P(v, v') = D(v, v') / N}:
#'   \deqn{\mathrm{NPMI}(v, v') = \frac{\log \frac{P(v, v')}{P(v) P(v')}}{-\log P(v, v')},}{NPMI(v, v') = log(P(v, v') / (P(v) P(v'))) / -log P(v, v'),}
#'   without smoothing: a pair that never co-occurs takes the limit -1 and a
#'   pair present in every document the limit 1. In \[-1, 1\]; 0 means
#'   independent occurrence.
#'
#'   Both coherences count documents, so they need a corpus with zeros: on
#'   data without zero cells (a dense matrix of expression values, say)
#'   every pair occurs in every document, and every topic scores
#'   \eqn{\log(1 + \epsilon / N)}{log(1 + epsilon / N)} and 1, which says
#'   nothing.
#' * `exclusivity`: the mean over the top `n` terms of
#'   \eqn{P(w \mid z) / \sum_{z'} P(w \mid z')}, the share of the term's
#'   probability across topics that falls to this topic (the exclusivity of
#'   Bischof and Airoldi 2012 as stm computes it). In \[1/k, 1\].
#' * `frex`: stm's exclusivity (Roberts et al. 2014; FREX of Bischof and
#'   Airoldi 2012): the sum over the top `n` terms of the weighted harmonic
#'   mean \eqn{1 / (w / E + (1 - w) / F)} of the term's empirical-CDF rank
#'   \eqn{E} of exclusivity (among all terms, within the topic) and rank
#'   \eqn{F} of \eqn{P(w \mid z)}, with \eqn{w} = `frex_weight` (0.7, stm's
#'   default). It equals `stm::exclusivity(model, M = n, frexw = w)` given
#'   the same term distributions. In (0, n\]. (A term without probability
#'   in any topic has exclusivity 0.)
#' * `size`: the topic's weight \eqn{P(z)}, its share of the tokens under
#'   the model (at the EM fixed point of a KL fit it equals the expected
#'   share of the data's tokens,
#'   \eqn{\sum_{d,w} x_{dw} P(z \mid d, w) / \sum_{d,w} x_{dw}}).
#'
#' Pairs with a term that no document of the corpus contains have no
#' coherence and are left out of the means (`absent` counts such terms,
#' possible in a reference corpus); a topic none of whose pairs is defined
#' gets `NA`. Document co-occurrence counts a document once however often
#' the terms occur in it.
#'
#' pLSA fits are scored as they are; NMF fits (most meaningfully under the
#' KL loss, where they are pLSA models) through the pLSA form of
#' [as_plsa()]: \eqn{P(w \mid z)} the rows of \eqn{H} normalized, topic
#' sizes the components' shares of the total mass.
#'
#' @param fit An [plsa()] fit of a documents x terms matrix, or an [nmf()]
#'   fit (rows documents, columns terms).
#' @param data The documents x terms data the model was fitted to (any form
#'   [plsa()] accepts), for the coherence measures. Give `data` or
#'   `reference`, not both.
#' @param n Number of top terms per topic, at least 2 (at most the number
#'   of terms: a larger value uses them all).
#' @param reference A reference corpus to compute coherence on instead of
#'   the training data: a documents x terms matrix in any form [plsa()]
#'   accepts, its columns matched to the fit's terms by name (terms the
#'   fit does not have are ignored; a top term the reference lacks counts
#'   as absent). Without names on both sides it must have one column per
#'   term of the fit.
#' @param epsilon The count added to the co-occurrences in `umass`, a
#'   positive number (default 1, Mimno et al. 2011).
#' @param frex_weight The weight \eqn{w} of exclusivity in `frex`, in
#'   \[0, 1\] (default 0.7, as stm).
#' @param ... Must be empty; an unknown argument is an error.
#' @return A tibble with one row per topic: `topic`, `size`, `umass`,
#'   `npmi`, `exclusivity`, `frex`, `absent` and `top_terms` (the `n` terms,
#'   comma-separated).
#' @references
#' Aletras N, Stevenson M (2013). Evaluating topic coherence using
#' distributional semantics. Proceedings of IWCS 2013.
#'
#' Bischof J, Airoldi E (2012). Summarizing topical content with word
#' frequency and exclusivity. Proceedings of ICML 2012.
#'
#' Bouma G (2009). Normalized (pointwise) mutual information in
#' collocation extraction. Proceedings of GSCL 2009.
#'
#' Mimno D, Wallach H, Talley E, Leenders M, McCallum A (2011). Optimizing
#' semantic coherence in topic models. Proceedings of EMNLP 2011.
#'
#' Roberts M, Stewart B, Tingley D, et al. (2014). Structural topic models
#' for open-ended survey responses. American Journal of Political Science
#' 58(4), 1064-1082.
#' @seealso [glance()][glance.aspectr_plsa()] for the means over topics,
#'   [plsa_rank()] and [nmf_rank()], which report them by `k`.
#' @examples
#' fit <- plsa(sotu_dtm, k = 4, seed = 1, max_iter = 100, tol = 1e-5)
#' topic_quality(fit, sotu_dtm)
#' # coherence measured on other documents
#' topic_quality(fit, reference = sotu_dtm[1:60, ], n = 5)
#' @export
topic_quality <- function(fit, data = NULL, n = 10, reference = NULL, epsilon = 1,
                          frex_weight = 0.7, ...) {
  check_dots_empty(...)
  check_required(fit, "a pLSA or NMF fit")
  tf <- topic_form(fit, "{.fn topic_quality}")
  n <- quality_n(n, nrow(tf$beta))
  epsilon <- check_number(epsilon, "epsilon", 0, Inf, lower_open = TRUE)
  frex_weight <- check_number(frex_weight, "frex_weight", 0, 1)
  if (is.null(data) && is.null(reference)) {
    abort_input(c("{.arg data} and {.arg reference} are both missing: coherence needs a corpus.",
                  i = "Give the data the model was fitted to as {.arg data}, or a reference corpus as {.arg reference}."),
                "argument", arg = "data")
  }
  if (!is.null(data) && !is.null(reference)) {
    abort_input("Give {.arg data} or {.arg reference}, not both: coherence is computed on one corpus.",
                "argument", arg = "reference")
  }
  corpus <- if (is.null(reference)) fitted_data(tf, data, usage = "topic_quality(fit, data = x)") else reference_data(tf, reference)
  quality_table(tf, corpus, n, epsilon, frex_weight)
}

# n at least 2, at most the number of terms (as terms() caps it); a fit of
# one term has no pairs to score
quality_n <- function(n, V, arg = "n", call = rlang::caller_env()) {
  n <- check_whole(n, arg, min = 2, call = call)
  if (V < 2) {
    abort_unsupported("Topic quality of a fit of one term", "coherence scores pairs of terms.",
                      call = call)
  }
  min(n, V)
}

quality_table <- function(tf, corpus, n, epsilon, frex_weight) {
  top <- top_term_index(tf$beta, n)
  coh <- coherence(top, corpus, epsilon)
  ex <- exclusivity_scores(tf$beta, top, frex_weight)
  tibble::tibble(topic = seq_len(tf$k), size = tf$lambda, umass = coh$umass, npmi = coh$npmi,
                 exclusivity = ex$exclusivity, frex = ex$frex, absent = coh$absent,
                 top_terms = apply(top, 2, function(i) paste(tf$terms[i], collapse = ", ")))
}

# The means over topics that glance() and the rank tables report.
quality_means <- function(q) {
  c(umass = mean(q$umass, na.rm = TRUE), npmi = mean(q$npmi, na.rm = TRUE),
    exclusivity = mean(q$exclusivity), frex = mean(q$frex))
}

# A reference corpus in the internal form, its columns mapped onto the fit's
# terms (by name when both have names, otherwise by position).
reference_data <- function(tf, reference, call = rlang::caller_env()) {
  ref_terms <- if (inherits(reference, "simple_triplet_matrix")) reference$dimnames[[2]] else colnames(reference)
  d <- as_aspect_data(reference, "reference", call = call, tensors = FALSE)
  fit_terms <- tf$dimnames[[2]]
  if (!is.null(ref_terms) && !is.null(fit_terms)) {
    j <- match(as.character(ref_terms), fit_terms)[d$idx[2, ] + 1L]
    if (all(is.na(j))) {
      abort_input(c("The columns of {.arg reference} do not match the fitted terms.",
                    i = "None of its {length(ref_terms)} column names is one of the {length(fit_terms)} terms of the fit."),
                  "newdata", arg = "reference", call = call)
    }
    keep <- !is.na(j)
    d$idx <- rbind(d$idx[1, keep], j[keep] - 1L)
    d$val <- d$val[keep]
  } else if (d$dims[2] != tf$dims[2]) {
    abort_input(c("{.arg reference} must have one column per fitted term ({tf$dims[2]}), not {d$dims[2]}.",
                  i = "Give {.arg reference} column names to match terms by name."),
                "newdata", arg = "reference", call = call)
  }
  d$dims[2] <- tf$dims[2]
  d
}

# UMass and NPMI coherence of each topic's top terms (n x k indices into the
# terms) from the document co-occurrence of the corpus `d` (internal form).
coherence <- function(top, d, epsilon) {
  n <- nrow(top)
  u <- unique(as.vector(top))
  N <- d$dims[1]
  keep <- d$idx[2, ] + 1L
  pos <- match(keep, u)
  sel <- !is.na(pos) & d$val > 0
  B <- Matrix::sparseMatrix(i = d$idx[1, sel] + 1L, j = pos[sel], x = 1,
                            dims = c(N, length(u)))
  # (repeated cells cannot occur: the internal form has one entry per cell)
  D <- as.matrix(Matrix::crossprod(B))
  df <- diag(D)
  pairs <- which(upper.tri(matrix(0, n, n)), arr.ind = TRUE)  # (l, m), l < m
  l <- pairs[, 1]; m <- pairs[, 2]
  res <- lapply(seq_len(ncol(top)), function(z) {
    v <- match(top[, z], u)
    dl <- df[v[l]]; dm <- df[v[m]]; dlm <- D[cbind(v[l], v[m])]
    ok <- dl > 0 & dm > 0
    umass <- log((dlm[ok] + epsilon) / dl[ok])
    pl <- dl[ok] / N; pm <- dm[ok] / N; plm <- dlm[ok] / N
    npmi <- ifelse(plm == 0, -1, ifelse(plm == 1, 1, log(plm / (pl * pm)) / -log(plm)))
    c(umass = if (any(ok)) mean(umass) else NA_real_,
      npmi = if (any(ok)) mean(npmi) else NA_real_,
      absent = sum(df[v] == 0))
  })
  res <- do.call(rbind, res)
  list(umass = unname(res[, "umass"]), npmi = unname(res[, "npmi"]),
       absent = as.integer(res[, "absent"]))
}

# Exclusivity (mean share of the top terms' probability across topics) and
# stm's FREX-based exclusivity of each topic.
exclusivity_scores <- function(beta, top, w) {
  V <- nrow(beta)
  s <- rowSums(beta)
  ex <- beta / ifelse(s > 0, s, 1)
  ex_rank <- apply(ex, 2, rank) / V
  fr_rank <- apply(beta, 2, rank) / V
  frex <- 1 / (w / ex_rank + (1 - w) / fr_rank)
  k <- ncol(beta)
  list(exclusivity = vapply(seq_len(k), function(z) mean(ex[top[, z], z]), numeric(1)),
       frex = vapply(seq_len(k), function(z) sum(frex[top[, z], z]), numeric(1)))
}
