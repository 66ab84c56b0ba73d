#' Explore a topic model in the browser
#'
#' Writes one self-contained HTML page (its script, style and data inline:
#' it needs no network) and opens it in the browser: an inter-topic
#' distance map, the terms of a topic ranked by relevance with a slider for
#' \eqn{\lambda}, a term's distribution over the topics, and the documents
#' with the largest share of a topic. Topics keep the fit's own numbers and
#' names (topic 3 of the page is `topics(fit)[, 3]`).
#'
#' The map places the topics by classical scaling ([stats::cmdscale()]) of
#' the Jensen-Shannon distances between their term distributions
#' \eqn{P(w \mid z)}, with circle areas proportional to the topic shares
#' \eqn{P(z)}, as LDAvis does (Sievert and Shirley 2014; Chuang, Manning
#' and Heer 2012). A topic's terms are ranked by relevance
#' \eqn{\lambda \log P(w \mid z) + (1 - \lambda) \log(P(w \mid z) / P(w))}
#' (Sievert and Shirley 2014), \eqn{P(w)} the model's term marginal;
#' \eqn{\lambda = 1} ranks by probability, small \eqn{\lambda} by lift. The
#' bars show a term's expected count in the corpus and within the topic
#' (model probabilities times the data's total count). Clicking a term shows
#' \eqn{P(z \mid w)} and scales the circles by it.
#'
#' For each topic the page holds the `candidates` terms of largest
#' \eqn{P(w \mid z)} and the `candidates` of largest lift, among which the
#' slider ranks (every term when the vocabulary is smaller), so that the
#' page stays small for large vocabularies.
#'
#' @param fit A [plsa()] fit of a matrix (documents x terms), or an
#'   [nmf()] fit with `loss = "kl"` (shown in the pLSA form of
#'   [as_plsa()]).
#' @param file Path of the HTML file to write; `NULL` writes a temporary
#'   file.
#' @param n_terms Number of terms shown per topic (1 to 100).
#' @param n_docs Number of top documents listed per topic (0 to hide them).
#' @param lambda The relevance weight the page opens with, in \[0, 1\].
#' @param candidates Number of terms kept per topic by probability and by
#'   lift (see Details).
#' @param title Title of the page; `NULL` describes the fit.
#' @param open Open the page in the browser ([utils::browseURL()]); by
#'   default in interactive sessions.
#' @return The path of the file, invisibly.
#' @seealso [terms.aspectr_plsa()], [topics()].
#' @examples
#' fit <- plsa(sotu_dtm, k = 6, seed = 1, max_iter = 200)
#' page <- explore(fit, file = tempfile(fileext = ".html"), open = FALSE)
#' file.size(page)
#' @export
explore <- function(fit, file = NULL, n_terms = 30, n_docs = 10, lambda = 0.6, candidates = 200,
                    title = NULL, open = interactive()) {
  check_required(fit, "a plsa() fit or a KL nmf() fit")
  if (inherits(fit, "aspectr_nmf")) {
    if (!identical(fit$loss, "kl")) {
      abort_input("{.arg fit} must be a {.fn plsa} fit or an {.fn nmf} fit with {.code loss = \"kl\"} (a topic model), not an {.fn nmf} fit with {.code loss = \"{fit$loss}\"}.",
                  "argument", arg = "fit")
    }
    fit <- as_plsa(fit)
  }
  if (!inherits(fit, "aspectr_plsa") || inherits(fit, "aspectr_lca") || length(fit$dims) != 2) {
    abort_input("{.arg fit} must be a {.fn plsa} fit of a documents x terms matrix or a KL {.fn nmf} fit, not {if (inherits(fit, 'aspectr_plsa')) paste0('a fit of ', length(fit$dims), '-way data') else describe(fit)}.",
                "argument", arg = "fit")
  }
  n_terms <- check_whole(n_terms, "n_terms", min = 1, max = 100)
  n_docs <- check_whole(n_docs, "n_docs", min = 0)
  lambda <- check_number(lambda, "lambda", 0, 1)
  candidates <- check_whole(candidates, "candidates", min = 1)
  open <- check_flag(open, "open")
  if (!is.null(title) && !(is.character(title) && length(title) == 1 && !is.na(title))) {
    abort_input("{.arg title} must be a string or {.code NULL}, not {describe(title)}.", "type", arg = "title")
  }
  if (is.null(file)) file <- tempfile("aspectr-explore-", fileext = ".html")
  if (!is.character(file) || length(file) != 1 || is.na(file) || !nzchar(file)) {
    abort_input("{.arg file} must be a file path or {.code NULL}, not {describe(file)}.", "type", arg = "file")
  }
  if (dir.exists(file)) abort_input("{.arg file} must be a file path, not the directory {.path {file}}.", "value", arg = "file")
  data <- explore_data(fit, n_terms, n_docs, lambda, candidates, title)
  template <- system.file("explore", "explore.html", package = "aspectr")
  html <- paste(readLines(template, encoding = "UTF-8", warn = FALSE), collapse = "\n")
  html <- sub("__TITLE__", html_escape(unclass(data$title)), html, fixed = TRUE)
  html <- sub("__DATA__", json_encode(data), html, fixed = TRUE)
  write_utf8(html, file)
  if (open) utils::browseURL(normalizePath(file))
  invisible(file)
}

# The page's data: topics, map, candidate terms with their probabilities,
# expected counts, term marginals, P(z | w) of the terms shown, top documents.
explore_data <- function(fit, n_terms, n_docs, lambda, candidates, title) {
  k <- fit$k
  # (the numbers as the page holds them, 12 significant digits: the page
  # and this ranking see the same values)
  phi <- signif(fit$factors[[2]], 12)          # terms x k, columns P(w | z)
  lam <- as.numeric(fit$lambda)
  vocab <- fit$dimnames[[2]] %||% paste0("term_", seq_len(nrow(phi)))
  topics <- names(fit$lambda) %||% paste0("topic_", seq_len(k))
  pw <- signif(as.numeric(fit$factors[[2]] %*% lam), 12)   # the model's P(w)
  total <- if (is.finite(fit$total) && fit$total > 0) fit$total else 1
  # candidate terms per topic: the largest P(w | z) and the largest lift
  # (ties broken as the page breaks them: relevance to 1e-9, then the
  # probability, then the vocabulary's order)
  cand <- lapply(seq_len(k), function(z) {
    p <- phi[, z]
    ok <- which(p > 0)
    by_p <- ok[order(-p[ok], ok)]
    if (length(ok) <= 2 * candidates) return(by_p)
    lift <- round(log(p[ok] / pw[ok]) * 1e9)
    unique(c(by_p[seq_len(candidates)], ok[order(-lift, -p[ok], ok)][seq_len(candidates)]))
  })
  # the terms on the page: candidates and the most frequent overall
  overall <- order(pw, decreasing = TRUE)[seq_len(min(n_terms, length(pw)))]
  keep <- sort(unique(c(unlist(cand), overall)))
  at <- match(seq_along(pw), keep)
  tt <- sweep(phi[keep, , drop = FALSE], 2, lam, "*")
  tt <- tt / pmax(rowSums(tt), .Machine$double.xmin)
  docs <- NULL
  if (n_docs > 0 && !inherits(fit$factors[[1]], "aspectr_factor_files")) {
    theta <- topic_weights(fit$factors[[1]], lam)
    dn <- fit$dimnames[[1]] %||% paste0("document_", seq_len(nrow(theta)))
    docs <- lapply(seq_len(k), function(z) {
      o <- order(theta[, z], decreasing = TRUE)[seq_len(min(n_docs, nrow(theta)))]
      lapply(o, function(i) list(json_scalar(dn[i]), json_scalar(theta[i, z])))
    })
  }
  list(
    title = json_scalar(title %||% paste0("aspectr: ", k, " topics of ", fit$dims[1], " documents x ", fit$dims[2], " terms")),
    info = json_scalar(sprintf("%s fit, k = %d, %s tokens", if (identical(fit$converted_from, "aspectr_nmf")) "KL NMF (pLSA form)" else
      paste0("pLSA (", fit$loss, ")"), k, format(total, big.mark = ",", scientific = FALSE))),
    n_terms = json_scalar(n_terms), lambda = json_scalar(lambda), topics = topics, size = lam,
    map = explore_map(phi, lam),
    vocab = vocab[keep], pw = pw[keep], freq = pw[keep] * total,
    candidates = lapply(cand, function(cz) at[cz] - 1L),
    phi = lapply(seq_len(k), function(z) phi[cand[[z]], z]),
    est = lapply(seq_len(k), function(z) phi[cand[[z]], z] * lam[z] * total),
    term_topics = lapply(seq_len(nrow(tt)), function(i) tt[i, ]),
    docs = docs
  )
}

# Coordinates of the topics: classical scaling of the Jensen-Shannon
# distances between the columns of phi (one topic: the origin; two: a line).
explore_map <- function(phi, lam) {
  k <- ncol(phi)
  if (k == 1) return(list(x = 0, y = 0))
  js <- matrix(0, k, k)
  for (a in seq_len(k - 1)) for (b in (a + 1):k) {
    p <- phi[, a]; q <- phi[, b]; m <- (p + q) / 2
    kl <- function(u) { i <- u > 0; sum(u[i] * log(u[i] / m[i])) }
    js[a, b] <- js[b, a] <- sqrt(max(0.5 * kl(p) + 0.5 * kl(q), 0))
  }
  if (k == 2) return(list(x = c(-js[1, 2] / 2, js[1, 2] / 2), y = c(0, 0)))
  xy <- suppressWarnings(stats::cmdscale(js, k = 2))
  if (ncol(xy) < 2) xy <- cbind(xy, 0)
  list(x = unname(xy[, 1]), y = unname(xy[, 2]))
}

html_escape <- function(x) {
  x <- gsub("&", "&amp;", x, fixed = TRUE)
  x <- gsub("<", "&lt;", x, fixed = TRUE)
  x <- gsub(">", "&gt;", x, fixed = TRUE)
  gsub("\"", "&quot;", x, fixed = TRUE)
}

# JSON of lists (named: objects; unnamed: arrays) and vectors (arrays,
# whatever their length; json_scalar() marks a single value), safe to
# inline in a <script> element ("</" written as "<\\/").
json_scalar <- function(x) structure(x, class = "aspectr_json_scalar")

json_encode <- function(x) {
  if (is.null(x)) return("null")
  if (inherits(x, "aspectr_json_scalar")) return(json_atoms(unclass(x))[1])
  if (is.list(x)) {
    if (!is.null(names(x)) && all(nzchar(names(x)))) {
      return(paste0("{", paste0(json_atoms(names(x)), ":", vapply(x, json_encode, ""), collapse = ","), "}"))
    }
    return(paste0("[", paste(vapply(x, json_encode, ""), collapse = ","), "]"))
  }
  paste0("[", paste(json_atoms(x), collapse = ","), "]")
}

json_atoms <- function(x) {
  if (is.character(x) || is.factor(x)) {
    v <- enc2utf8(as.character(x))
    na <- is.na(v)
    v <- gsub("\\", "\\\\", v, fixed = TRUE)
    v <- gsub("\"", "\\\"", v, fixed = TRUE)
    v <- gsub("\n", "\\n", v, fixed = TRUE)
    v <- gsub("\r", "\\r", v, fixed = TRUE)
    v <- gsub("\t", "\\t", v, fixed = TRUE)
    v <- gsub("[[:cntrl:]]", " ", v)
    v <- gsub("</", "<\\/", v, fixed = TRUE)
    v <- paste0("\"", v, "\"")
    v[na] <- "null"
    return(v)
  }
  if (is.logical(x)) return(ifelse(is.na(x), "null", ifelse(x, "true", "false")))
  x <- as.numeric(x)
  v <- trimws(formatC(x, digits = 12, format = "g"))
  v[!is.finite(x)] <- "null"
  v
}

# text written to `file` in UTF-8; a file that cannot be written is an
# input error naming `file` (not R's warning and error)
write_utf8 <- function(text, file, call = rlang::caller_env()) {
  ok <- tryCatch({ writeLines(enc2utf8(text), file, useBytes = TRUE); TRUE }, error = function(e) conditionMessage(e),
                 warning = function(w) conditionMessage(w))
  if (!isTRUE(ok)) abort_input("{.arg file} could not be written: {ok}", "value", arg = "file", call = call)
  invisible()
}
