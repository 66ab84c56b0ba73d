loss_label <- function(object) {
  sq <- if (identical(object$method, "squarem")) " with SQUAREM" else ""
  switch(object$loss,
         kl = if (object$tempering < 1) sprintf("KL, tempered EM (beta = %g)%s", object$tempering, sq) else
           if (identical(object$method, "cd")) "KL, coordinate descent" else paste0("KL, EM", sq),
         tsallis = sprintf("Tsallis (q = %g), q-EM%s", object$q, sq),
         l2 = "L2, simplex projections")
}

term_names <- function(object) {
  N <- length(object$dims)
  tn <- object$dimnames[[N]]
  if (is.null(tn)) as.character(seq_len(object$dims[N])) else tn
}

# The ids of mode n in tidy() and augment(): its names, or the indices
# (integers, as augment() gives the cells of unnamed data) when it has none
tidy_ids <- function(object, n) {
  object$dimnames[[n]] %||% seq_len(object$dims[n])
}

doc_names <- function(object) {
  dn <- object$dimnames[[1]]
  if (is.null(dn)) as.character(seq_len(object$dims[1])) else dn
}

#' @export
print.aspectr_plsa <- function(x, n = 5, ...) {
  check_dots_empty(...)
  n <- check_whole(n, "n")
  cat(sprintf("<aspectr_plsa> %d topic%s fitted by pLSA (%s)\n", x$k,
              if (x$k == 1) "" else "s", loss_label(x)))
  if (length(x$dims) == 2) {
    cat(sprintf("data: %s documents x %s terms, %s non-zeros, total %s\n",
                format(x$dims[1], big.mark = ","), format(x$dims[2], big.mark = ","),
                format(x$nnz, big.mark = ","), format(signif(x$total, 6), big.mark = ",")))
  } else {
    cat(sprintf("data: %d-way tensor %s (%s), %s non-zeros, total %s\n", length(x$dims),
                paste(x$dims, collapse = " x "), paste(names(x$factors), collapse = ", "),
                format(x$nnz, big.mark = ","), format(signif(x$total, 6), big.mark = ",")))
  }
  cat(sprintf("objective: %s after %d iteration%s (%s)\n", format(signif(x$value, 7)),
              x$iterations, if (x$iterations == 1) "" else "s",
              if (x$iterations == 0) "closed form" else if (x$converged) "converged" else "not converged"))
  top <- terms(x, n)
  cat(sprintf("\ntop %d %s:\n", n, if (length(x$dims) == 2) "terms" else
    paste0("entries of mode '", names(x$factors)[length(x$dims)], "'")))
  lines <- vapply(seq_len(x$k), function(r) {
    sprintf("  %-9s %5.3f  %s", names(x$lambda)[r], x$lambda[r], paste(top[, r], collapse = ", "))
  }, character(1))
  cat(lines, sep = "\n")
  invisible(x)
}

#' Summarize a pLSA fit
#'
#' @param object An `aspectr_plsa` fit.
#' @param n Number of top terms per topic.
#' @param ... Must be empty; an unknown argument is an error.
#' @return An object of class `summary.aspectr_plsa`: a list with a `topics`
#'   data frame (weight, top terms, share of documents whose most probable
#'   topic it is) and fit statistics; it has its own print method.
#' @examples
#' fit <- plsa(sotu_dtm, k = 3, seed = 1, max_iter = 100)
#' summary(fit)
#' @export
summary.aspectr_plsa <- function(object, n = 8, ...) {
  check_dots_empty(...)
  n <- check_whole(n, "n")
  top <- terms(object, n)
  # (the documents' factor in files: counted as the fit wrote it)
  f0 <- object$factors[[1]]
  classes <- if (inherits(f0, "aspectr_factor_files")) f0$classes else
    tabulate(max.col(topics(object), ties.method = "first"), nbins = object$k)
  topics_df <- data.frame(
    topic = names(object$lambda),
    weight = unname(object$lambda),
    documents = classes / object$dims[1],
    top_terms = apply(top, 2, paste, collapse = ", "),
    stringsAsFactors = FALSE
  )
  free <- isFALSE(object$normalize) || isFALSE(object$count_data)
  ll <- if (free) NA_real_ else logLik(object)
  structure(list(
    call = object$call, k = object$k, loss = loss_label(object),
    dims = object$dims, nnz = object$nnz, total = object$total,
    value = object$value, iterations = object$iterations,
    converged = object$converged, nrun = length(object$run_values), run = object$run,
    logLik = as.numeric(ll), df = if (free) NA_integer_ else attr(ll, "df"),
    AIC = if (free) NA_real_ else AIC(object), BIC = if (free) NA_real_ else BIC(object),
    perplexity = if (free) NA_real_ else train_perplexity(object, ll),
    modes = if (length(object$dims) > 2) names(object$factors) else NULL,
    topics = topics_df
  ), class = "summary.aspectr_plsa")
}

# Per-word perplexity given the document, exp(-sum x log P(w | d) / N), with
# P(w | d) = P(d, w) / P(d) and P(d) the model's document marginal.
train_perplexity <- function(object, ll = logLik(object)) {
  f0 <- object$factors[[1]]
  if (inherits(f0, "aspectr_factor_files")) {
    nlogpd <- f0$nlogpd
  } else {
    pd <- drop(f0 %*% object$lambda)
    n <- object$doc_totals
    nlogpd <- sum(n[n > 0] * log(pd[n > 0]))
  }
  exp(-(as.numeric(ll) - nlogpd) / object$total)
}

#' @export
print.summary.aspectr_plsa <- function(x, ...) {
  check_dots_empty(...)
  cat("pLSA fit:", x$loss, "\n")
  cat("call: ", paste(deparse(x$call), collapse = "\n"), "\n", sep = "")
  cat(sprintf("data: %s, %d non-zeros, total count %s\n", paste(x$dims, collapse = " x "),
              x$nnz, format(signif(x$total, 6))))
  cat(sprintf("objective %s; %d iteration%s, %s; best of %d start%s (start %d)\n",
              format(signif(x$value, 7)), x$iterations, if (x$iterations == 1) "" else "s",
              if (x$converged) "converged" else "not converged", x$nrun,
              if (x$nrun == 1) "" else "s", x$run))
  if (is.na(x$logLik)) {
    cat("no likelihood: the weights are free (normalize = FALSE)\n\n")
  } else {
    cat(sprintf("log-likelihood %s (df = %d), AIC %s, BIC %s, perplexity %s\n\n",
                format(round(x$logLik, 2), nsmall = 2), x$df, format(round(x$AIC, 2), nsmall = 2),
                format(round(x$BIC, 2), nsmall = 2), format(signif(x$perplexity, 6))))
  }
  tp <- x$topics
  cat(sprintf("%-9s %6s %6s  %s\n", "topic", "weight", if (is.null(x$modes)) "docs" else "mode1",
              if (is.null(x$modes)) "top terms" else paste("top", x$modes[length(x$modes)])))
  cat(sprintf("%-9s %6.3f %5.1f%%  %s\n", tp$topic, tp$weight, 100 * tp$documents,
              tp$top_terms), sep = "")
  invisible(x)
}

#' Topic proportions of the training documents
#'
#' @param object A fitted model.
#' @param mode For N-way fits, the mode whose posteriors
#'   \eqn{P(z \mid i_{mode})} are returned (default 1, the documents of a
#'   matrix).
#' @param ... Must be empty; an unknown argument is an error.
#' @return A documents x k matrix of \eqn{P(z \mid d)}; rows sum to 1.
#'   Documents without counts get the topic weights \eqn{P(z)}.
#' @examples
#' fit <- plsa(sotu_dtm, k = 3, seed = 1, max_iter = 100)
#' round(head(topics(fit)), 3)
#' @export
topics <- function(object, ...) UseMethod("topics")

#' @export
topics.default <- function(object, ...) {
  d <- defer_to_topicmodels("topics", object, ...)
  if (d[[1]]) return(d[[2]])
  abort_input("{.arg object} must be an {.cls aspectr_plsa} or {.cls aspectr_lca} fit, not {describe(object)}.",
              "type", arg = "object")
}

#' @rdname topics
#' @export
topics.aspectr_plsa <- function(object, mode = 1, ...) {
  check_dots_empty(...)
  mode <- check_whole(mode, "mode", max = length(object$dims))
  if (mode == 1) object <- rows_in_memory(object)
  topic_weights(object$factors[[mode]], object$lambda)
}

# P(topic | entry) of a factor u (entries x topics) and the weights lambda;
# an entry without mass takes lambda
topic_weights <- function(u, lambda) {
  p <- sweep(u, 2, lambda, "*")
  s <- rowSums(p)
  empty <- !(s > 0)
  p[!empty, ] <- p[!empty, , drop = FALSE] / s[!empty]
  if (any(empty)) p[empty, ] <- matrix(lambda, sum(empty), length(lambda), byrow = TRUE)
  p
}

#' Top terms of each topic
#'
#' Lists the terms of each topic in decreasing order of
#' \eqn{P(w \mid z)} or, with `lambda` below 1, of their relevance
#' (Sievert and Shirley 2014, the ranking of LDAvis)
#' \deqn{r(w, z) = \lambda \log P(w \mid z) + (1 - \lambda) \log \frac{P(w \mid z)}{P(w)},}{r(w, z) = lambda log P(w | z) + (1 - lambda) log(P(w | z) / P(w)),}
#' where \eqn{P(w) = \sum_z P(z) P(w \mid z)} is the model's marginal of
#' the term (for a KL fit at the EM fixed point, the term's share of the
#' tokens of the data, the marginal LDAvis uses). `lambda = 1` is the order
#' of \eqn{P(w \mid z)}; smaller values favour terms specific to the topic
#' over frequent ones (Sievert and Shirley found 0.6 best for
#' interpretation). A term with \eqn{P(w \mid z) = 0} ranks last.
#'
#' @param x An `aspectr_plsa` fit.
#' @param n Number of terms per topic.
#' @param mode For N-way fits, the mode whose top entries are listed
#'   (default: the last mode, the terms of a matrix).
#' @param lambda The relevance weight, in \[0, 1\] (default 1: by
#'   probability).
#' @param ... Must be empty; an unknown argument is an error.
#' @return A character matrix with `n` rows and one column per topic, the
#'   terms in decreasing order of \eqn{P(w \mid z)} (or of relevance).
#' @references Sievert C, Shirley K (2014). LDAvis: A method for
#'   visualizing and interpreting topics. Proceedings of the Workshop on
#'   Interactive Language Learning, Visualization, and Interfaces, 63-70.
#' @examples
#' fit <- plsa(sotu_dtm, k = 3, seed = 1, max_iter = 100)
#' terms(fit, 5)
#' terms(fit, 5, lambda = 0.6)   # by relevance
#' @export
terms.aspectr_plsa <- function(x, n = 10, mode = length(x$dims), lambda = 1, ...) {
  check_dots_empty(...)
  n <- check_whole(n, "n")
  mode <- check_whole(mode, "mode", max = length(x$dims))
  lambda <- check_lambda(lambda)
  v <- x$factors[[mode]]
  n <- min(n, nrow(v))
  tn <- rownames(v)
  if (is.null(tn)) tn <- as.character(seq_len(nrow(v)))
  # (the relevance needs the whole factor's marginal: a factor in files is read)
  if (lambda < 1 && inherits(v, "aspectr_factor_files")) v <- as.matrix(v)
  # (a factor in files: read a shard at a time)
  out <- if (inherits(v, "aspectr_factor_files")) unlist(lapply(factor_top_rows(v, n), function(i) tn[i])) else
    if (lambda < 1) tn[top_term_index(v, n, relevance_matrix(v, as.numeric(x$lambda), lambda))] else
    apply(v, 2, function(p) tn[order(p, decreasing = TRUE)[seq_len(n)]])
  out <- matrix(out, nrow = n, dimnames = list(NULL, colnames(v)))
  out
}

#' Fold new documents into a pLSA fit
#'
#' Estimates the topic proportions \eqn{P(z \mid d)} of new documents with the
#' term distributions held fixed, under the fit's own loss: EM fold-in for
#' KL, q-EM for Tsallis, and the simplex-constrained least-squares problem
#' for L2.
#'
#' @param object An `aspectr_plsa` fit.
#' @param newdata Documents x terms counts in any form [plsa()] accepts, or a
#'   named numeric vector for one document. For N-way fits: the cells whose
#'   class posteriors \eqn{P(z \mid i_1, \dots, i_N)} are wanted, as a matrix
#'   of indices with one column per mode (1-based, or names; `NA` leaves a
#'   mode out) or a sparse tensor. When both `newdata` and the fit
#'   have term names, columns are matched by name (terms unknown to the fit
#'   are ignored, and none of them known is an error); otherwise `newdata`
#'   must have one column per fitted term. `NA` cells of a matrix (or of a
#'   vector, or a slam matrix) are missing: a KL fold-in leaves them out
#'   (the proportions that best explain the document's counts over its
#'   observed terms, as [predict.aspectr_nmf()] of a KL fit does, normalized),
#'   and a document without a positive observed count gets \eqn{P(z)}; the
#'   Tsallis and L2 fold-ins, and the KL fold-in with pseudo-counts on
#'   \eqn{P(z \mid d)}, need every cell and refuse them.
#'   Missing `newdata` returns [topics()] of the training documents.
#' @param type `"topics"` for the matrix of \eqn{P(z \mid d)} (rows sum to 1)
#'   or `"class"` for the index of the most probable topic.
#' @param loss The loss of the fold-in: `NULL` (default) uses the fit's;
#'   `"kl"`, `"tsallis"` or `"l2"` fold in under that loss with the fitted
#'   topics, whatever loss learned them (for example topics learned by q-EM,
#'   robust to clutter, and documents reconstructed under KL, as in Hazan,
#'   Haroon and Shashua's classification by reconstruction).
#' @param q Tsallis parameter of a `"tsallis"` fold-in, in (0, 1); `NULL`
#'   uses the fit's `q` (or 0.5 for a fit under another loss).
#' @param max_iter,tol Iteration limit and tolerance (largest change of a
#'   proportion) of the KL and Tsallis fold-in.
#' @param threads Number of threads; `NULL` uses [default_threads()].
#' @param ... Must be empty; an unknown argument is an error.
#' @return A matrix (documents x k) or an integer vector. A document without
#'   counts (or only unknown terms) gets the fit's topic weights \eqn{P(z)}.
#'   For a KL fit with pseudo-counts on \eqn{P(z \mid d)} (`plsa(prior =)`)
#'   the KL fold-in is the maximum a posteriori estimate with those
#'   pseudo-counts, as in the fit.
#' @examples
#' fit <- plsa(sotu_dtm[1:200, ], k = 3, seed = 1, max_iter = 100)
#' predict(fit, sotu_dtm[201:205, ])
#' predict(fit, sotu_dtm[201:205, ], type = "class")
#' @export
predict.aspectr_plsa <- function(object, newdata, type = c("topics", "class"), loss = NULL,
                                 q = NULL, max_iter = 1000, tol = 1e-10, threads = NULL, ...) {
  check_dots_empty(...)
  type <- match_option(type, c("topics", "class"), "type")
  loss <- if (is.null(loss)) object$loss else match_option(loss, c("kl", "tsallis", "l2"), "loss")
  if (loss == "tsallis") {
    q <- if (!is.null(q)) check_number(q, "q", 0, 1, lower_open = TRUE, upper_open = TRUE) else
      if (identical(object$loss, "tsallis")) object$q else 0.5
  } else if (!is.null(q)) {
    abort_input("{.arg q} applies to {.code loss = \"tsallis\"} only, not to a {.val {loss}} fold-in.",
                "argument", arg = "q")
  } else {
    q <- 1
  }
  max_iter <- check_whole(max_iter, "max_iter")
  tol <- check_number(tol, "tol", 0, Inf)
  threads <- resolve_threads(threads)
  if (missing(newdata) || is.null(newdata)) {
    object <- rows_in_memory(object)
    theta <- topics(object)
  } else if (length(object$dims) > 2) {
    theta <- cell_posterior(object, newdata)
  } else if (has_missing_cells(newdata)) {
    theta <- plsa_fold_missing(object, newdata, loss, max_iter, tol, threads)
  } else {
    d <- match_newdata(object, newdata)
    rows <- data_to_rows(d)
    # a fit with pseudo-counts on P(z | d): the MAP fold-in with them
    alpha <- object$prior$documents
    if (loss != "kl" || !any(alpha > 0)) alpha <- NULL
    theta <- cpp_foldin(rows$rowptr, rows$col, rows$val, object$factors[[2]],
                        as.numeric(object$lambda), loss, q, max_iter, tol, threads, alpha)
    dimnames(theta) <- list(d$dimnames[[1]], names(object$lambda))
  }
  if (type == "class") {
    cls <- max.col(theta, ties.method = "first")
    names(cls) <- rownames(theta)
    return(cls)
  }
  theta
}

# Whether newdata, in a form whose NA cells predict() leaves out (a matrix,
# a Matrix, a slam matrix or a vector for one document), has any.
has_missing_cells <- function(newdata) {
  if (inherits(newdata, "simple_triplet_matrix")) return(anyNA(newdata$v))
  (is.matrix(newdata) || methods::is(newdata, "Matrix") || (is.atomic(newdata) && is.null(dim(newdata)))) &&
    anyNA(newdata)
}

# The KL fold-in of documents with missing (NA) cells: the observed cells
# only, each document's scale free, as predict() of a KL nmf() fit does
# (nmf_fold_missing()), with the topics' term distributions as the fixed
# factor; P(z | d) is the result normalized. This maximizes the likelihood
# of the document's counts over its observed terms under
# P(w | d, w observed) = sum_z P(z | d) P(w | z) / sum_z P(z | d) sum_{w'
# observed} P(w' | z); with every cell observed it is the EM fold-in. A
# document without a positive observed count gets P(z), as one without
# counts does.
plsa_fold_missing <- function(object, newdata, loss, max_iter, tol, threads, call = rlang::caller_env()) {
  alpha <- object$prior$documents
  if (loss != "kl" || any(alpha > 0)) {
    n_na <- sum(is.na(if (inherits(newdata, "simple_triplet_matrix")) newdata$v else newdata))
    what <- if (loss == "tsallis") "the Tsallis fold-in" else if (loss == "l2") "the L2 fold-in" else
      "the fold-in of a fit with pseudo-counts on P(z | d) (plsa(prior =))"
    abort_input(c("{.arg newdata} has {n_na} missing (NA) cell{?s}: a KL fold-in without pseudo-counts leaves them out, {what} needs every cell.",
                  i = if (loss != "kl") "Give every cell a value, or fold in with {.code loss = \"kl\"}." else "Give every cell a value."),
                "newdata", arg = "newdata", call = call)
  }
  if (inherits(newdata, "simple_triplet_matrix")) {
    newdata <- Matrix::sparseMatrix(i = newdata$i, j = newdata$j, x = as.numeric(newdata$v),
                                    dims = c(newdata$nrow, newdata$ncol), dimnames = newdata$dimnames)
  } else if (is.null(dim(newdata))) {
    newdata <- matrix(newdata, nrow = 1, dimnames = list(NULL, names(newdata)))
  }
  sparse <- methods::is(newdata, "Matrix")
  # (the observed values checked as the fit checks data: numbers, not
  # negative, finite)
  seen <- newdata
  seen[is.na(seen)] <- 0
  tryCatch(as_aspect_data(seen, "newdata", call = call), aspectr_error_input_empty = function(e) NULL)
  V <- object$dims[2]
  fit_terms <- object$dimnames[[2]]
  new_terms <- colnames(newdata)
  if (!is.null(new_terms) && !is.null(fit_terms)) {
    check_newdata_names(new_terms, fit_terms, "column", call = call)
    map <- match(fit_terms, new_terms)
    if (all(is.na(map))) {
      abort_input(c("The columns of {.arg newdata} do not match the fitted terms.",
                    i = "None of its {length(new_terms)} column names is one of the {length(fit_terms)} terms of the fit."),
                  "newdata", arg = "newdata", call = call)
    }
    # (terms unknown to the fit left out; fitted terms absent from newdata
    # are counts of 0, as without missing cells)
    known <- which(!is.na(map))
    absent <- which(is.na(map))
    x <- newdata[, map[known], drop = FALSE]
    if (length(absent)) {
      zeros <- if (sparse) Matrix::Matrix(0, nrow(x), length(absent), sparse = TRUE) else
        matrix(0, nrow(x), length(absent))
      x <- cbind(x, zeros)[, order(c(known, absent)), drop = FALSE]
    }
  } else if (ncol(newdata) != V) {
    abort_newdata_cols(ncol(newdata), V, call)
  } else {
    x <- newdata
  }
  n <- nrow(x)
  theta <- matrix(as.numeric(object$lambda), n, object$k, byrow = TRUE)
  if (n > 0 && any(x > 0, na.rm = TRUE)) {
    tx <- if (sparse) Matrix::t(x) else t(x)
    C <- nmf_fold_missing(list(loss = "kl", beta = 1, eps = 1e-16), tx, unname(object$factors[[2]]),
                          0, 0, max_iter, tol, threads, call = call)
    s <- colSums(C)
    ok <- is.finite(s) & s > 0
    theta[ok, ] <- t(C[, ok, drop = FALSE]) / s[ok]
  }
  dimnames(theta) <- list(rownames(newdata), names(object$lambda))
  theta
}

# P(z | i_1, ..., i_N) for cells given as an index matrix (1-based, NA for a
# mode left out) or a sparse tensor.
cell_posterior <- function(object, newdata, call = rlang::caller_env()) {
  N <- length(object$dims)
  if (inherits(newdata, "aspectr_tensor")) newdata <- newdata$index
  if (is.data.frame(newdata)) newdata <- as.matrix(newdata)
  if (!is.matrix(newdata) || ncol(newdata) != N) {
    abort_input("{.arg newdata} must be a sparse tensor or a matrix of cell indices with {N} columns, not {describe(newdata)}.",
                "newdata", arg = "newdata", call = call)
  }
  if (is.character(newdata)) {
    newdata <- vapply(seq_len(N), function(n) match(newdata[, n], rownames(object$factors[[n]])),
                      integer(nrow(newdata)))
    newdata <- matrix(newdata, ncol = N)
  }
  bad <- !is.na(newdata) & (newdata < 1 | newdata > rows_of(object$dims, nrow(newdata)))
  if (any(bad)) {
    abort_input("{.arg newdata} has cell indices outside the dimensions of the fit ({paste(object$dims, collapse = ' x ')}), e.g. row {which(rowSums(bad) > 0)[1]}.",
                "newdata", arg = "newdata", call = call)
  }
  p <- rows_of(object$lambda, nrow(newdata))
  for (n in seq_len(N)) {
    ok <- !is.na(newdata[, n])
    # (a factor in files: the shards holding the rows asked for are read)
    p[ok, ] <- p[ok, , drop = FALSE] * factor_rows(object$factors[[n]], newdata[ok, n])
  }
  s <- rowSums(p)
  zero <- !(s > 0)
  p[!zero, ] <- p[!zero, , drop = FALSE] / s[!zero]
  if (any(zero)) p[zero, ] <- matrix(object$lambda, sum(zero), object$k, byrow = TRUE)
  colnames(p) <- names(object$lambda)
  p
}

match_newdata <- function(object, newdata, call = rlang::caller_env()) {
  if (is.numeric(newdata) && is.null(dim(newdata))) {
    newdata <- matrix(newdata, nrow = 1, dimnames = list(NULL, names(newdata)))
  }
  new_terms <- if (inherits(newdata, "simple_triplet_matrix")) newdata$dimnames[[2]] else colnames(newdata)
  fit_terms <- object$dimnames[[2]]
  if (!is.null(new_terms) && !is.null(fit_terms)) check_newdata_names(new_terms, fit_terms, "column", call = call)
  d <- tryCatch(as_aspect_data(newdata, "newdata", call = call),
                aspectr_error_input_empty = function(e) NULL)
  if (is.null(d)) {
    # No positive entries at all: every document gets the prior (names
    # were checked above)
    dims <- dim(newdata)
    if (is.null(new_terms) || is.null(fit_terms)) {
      if (dims[2] != object$dims[2]) abort_newdata_cols(dims[2], object$dims[2], call)
    }
    return(list(idx = matrix(integer(0), 2, 0), val = numeric(0),
                dims = c(dims[1], object$dims[2]),
                dimnames = list(rownames(newdata), fit_terms)))
  }
  if (length(d$dims) != 2) {
    abort_input("{.arg newdata} must be documents x terms, as the fitted data, not data of {length(d$dims)} modes ({paste(d$dims, collapse = ' x ')}).",
                "newdata", arg = "newdata", call = call)
  }
  if (!is.null(new_terms) && !is.null(fit_terms)) {
    map <- match(new_terms, fit_terms)
    if (all(is.na(map))) {
      abort_input(c("The columns of {.arg newdata} do not match the fitted terms.",
                    i = "None of its {length(new_terms)} column names is one of the {length(fit_terms)} terms of the fit."),
                  "newdata", arg = "newdata", call = call)
    }
    j <- map[d$idx[2, ] + 1L]
    keep <- !is.na(j)
    d$idx <- rbind(d$idx[1, keep], j[keep] - 1L)
    d$val <- d$val[keep]
  } else if (d$dims[2] != object$dims[2]) {
    abort_newdata_cols(d$dims[2], object$dims[2], call)
  }
  d$dims[2] <- object$dims[2]
  d
}

# Names by which newdata's columns (or rows) are matched to the fit's must
# be unique on both sides: a duplicated name would match one of them and
# silently drop or misplace the other's values.
check_newdata_names <- function(new, fit, what = "column", call = rlang::caller_env()) {
  dup <- unique(new[duplicated(new) & !is.na(new)])
  if (length(dup)) {
    abort_input(c("The {what} names of {.arg newdata} must be unique to be matched to the fit's by name; {.val {utils::head(dup, 3)}} {?is/are} repeated.",
                  i = "Give each {what} once (sum repeated ones first), or remove the names to match by position."),
                "newdata", arg = "newdata", call = call)
  }
  fdup <- unique(fit[duplicated(fit) & !is.na(fit)])
  if (length(fdup)) {
    abort_input(c("The fit's {what} names are not unique ({.val {utils::head(fdup, 3)}} repeated), so the {what}s of {.arg newdata} cannot be matched to them by name.",
                  i = "Remove the names of {.arg newdata} to match its {what}s by position."),
                "newdata", arg = "newdata", call = call)
  }
  invisible(TRUE)
}

abort_newdata_cols <- function(got, want, call) {
  abort_input(c("{.arg newdata} must have one column per fitted term ({want}), not {got}.",
                i = "Give {.arg newdata} column names to match terms by name."),
              "newdata", arg = "newdata", call = call)
}

#' Fitted values of a pLSA model
#'
#' @param object An `aspectr_plsa` fit.
#' @param type `"counts"` for expected counts (the model distribution times
#'   the total count of the data) or `"probability"` for the joint
#'   distribution \eqn{P(d, w)}.
#' @param ... Must be empty; an unknown argument is an error.
#' @return A dense documents x terms matrix. Refused (with an error of class
#'   `aspectr_error_size`) beyond `getOption("aspectr.max_cells", 1e8)` cells.
#' @examples
#' fit <- plsa(sotu_dtm[1:20, 1:50], k = 2, seed = 1)
#' dim(fitted(fit))
#' @export
fitted.aspectr_plsa <- function(object, type = c("counts", "probability"), ...) {
  check_dots_empty(...)
  type <- match_option(type, c("counts", "probability"), "type")
  object <- rows_in_memory(object)
  check_size(prod(as.numeric(object$dims)), "The fitted matrix would have {size} cells.")
  if (length(object$dims) == 2) {
    p <- object$factors[[1]] %*% (object$lambda * t(object$factors[[2]]))
  } else {
    p <- array(0, object$dims)
    for (r in seq_len(object$k)) {
      p <- p + object$lambda[r] * Reduce(outer, lapply(object$factors, function(f) f[, r]))
    }
  }
  if (type == "counts") p <- p * object$total
  dimnames(p) <- object$dimnames
  p
}

#' Log-likelihood, AIC and BIC of a pLSA fit
#'
#' The multinomial log-likelihood \eqn{\sum_{d,w} x_{dw} \log P(d, w)} of the
#' data the model was fitted to (without the multinomial coefficient), with
#' `df` the number of free parameters \eqn{(k - 1) + k (m - 1) + k (n - 1)}
#' and `nobs` the total count. It is what EM maximizes; for fits under other
#' losses it measures the same model by the same yardstick.
#'
#' @param object An `aspectr_plsa` fit.
#' @param ... Must be empty; an unknown argument is an error.
#' @return An object of class `logLik`; [AIC()] and [BIC()] work on the fit.
#' @examples
#' fit <- plsa(sotu_dtm, k = 3, seed = 1, max_iter = 100)
#' logLik(fit)
#' BIC(fit)
#' @export
logLik.aspectr_plsa <- function(object, ...) {
  check_dots_empty(...)
  if (isFALSE(object$normalize)) {
    cli::cli_abort(c("The fit has no likelihood: with {.code normalize = FALSE} its weights are free, so it is not a probability model.",
                     i = "Refit with {.code normalize = TRUE} (or another loss) to compare models by likelihood."),
                   class = c("aspectr_error_unsupported", "aspectr_error"))
  }
  abort_noncount(object)
  ll <- object$total * (object$neg_entropy - object$kl)
  k <- object$k
  df <- (k - 1) + k * sum(object$dims - 1)
  structure(ll, df = as.integer(df), nobs = object$total, class = "logLik")
}

#' @export
nobs.aspectr_plsa <- function(object, ...) {
  check_dots_empty(...)
  object$total
}

#' Tidy a pLSA or NMF fit
#'
#' Shaped like the tidiers of \pkg{tidytext} for topic models, in the same
#' columns for every topic-like fit.
#'
#' An NMF \eqn{X \approx WH} is tidied in its pLSA form, normalized as
#' [as_plsa()] does (Gemulla and Miettinen 2013): `beta` is
#' \eqn{P(w \mid z) = H_{zw} / \sum_w H_{zw}} (the rows of \eqn{H}
#' scaled to sum to 1) and `gamma` is \eqn{P(z \mid d)} proportional to
#' \eqn{W_{dz} \sum_w H_{zw}} (the rows of \eqn{W} scaled by the
#' components' totals, then to sum to 1); the components keep their
#' numbers (a component that is zero throughout has `beta` 0 and a row of
#' `W` that is zero gets the components' weights). For the KL loss this is
#' the pLSA model the fit is; for other losses it is the same rescaling.
#' `matrix = "W"` and `"H"` give the raw factors.
#'
#' @param x An `aspectr_plsa` or `aspectr_nmf` fit.
#' @param matrix `"beta"` for per-topic term probabilities (columns `topic`,
#'   `term`, `beta`) or `"gamma"` for per-document topic proportions (columns
#'   `document`, `topic`, `gamma`); for NMF fits also `"W"` (columns `row`,
#'   `factor`, `value`) and `"H"` (`factor`, `column`, `value`). Documents,
#'   terms, rows and columns are given by their names, or by their numbers
#'   (integers, as [augment()][augment.aspectr_plsa()] gives them) when the
#'   data had none.
#' @param lambda For `"beta"`: `NULL` (default) or a relevance weight in
#'   \[0, 1\]; when given, a `relevance` column (LDAvis's relevance, Sievert
#'   and Shirley 2014, see [terms()][terms.aspectr_plsa()]) is added and
#'   the rows of each topic are ordered by decreasing relevance.
#' @param n For `"beta"`: `NULL` (default, all terms in the order of the
#'   data) or the number of terms kept per topic, the most probable (or,
#'   with `lambda`, the most relevant) ones, in decreasing order.
#' @param data For `glance()`: the documents x terms data the model was
#'   fitted to; with it the coherence means `umass` and `npmi` are computed,
#'   without it they are `NA` (the data are not stored in the fit).
#' @param n For `glance()`: the number of top terms per topic the quality
#'   measures use.
#' @param ... Must be empty; an unknown argument is an error.
#' @references Gemulla R, Miettinen P (2013). Non-negative matrix
#'   factorization. Lecture notes, Max Planck Institute for Informatics.
#'
#'   Sievert C, Shirley K (2014). LDAvis: A method for visualizing and
#'   interpreting topics.
#' @return A tibble (the `topic` column holds the topics' numbers, or their
#'   names for a fit with guided topics, `plsa(seeds =)`). `glance()` has one row: `k`, the loss, the objective,
#'   iterations, convergence, `logLik`, `AIC`, `BIC` (`NA` where the fit is
#'   not a likelihood), `nobs`, the dimensions, and the means over topics of
#'   the [topic_quality()] measures `umass`, `npmi` (with `data`),
#'   `exclusivity` and `frex` (FREX weight 0.7; `NA` for N-way fits).
#' @examples
#' fit <- plsa(sotu_dtm, k = 3, seed = 1, max_iter = 100)
#' tidy(fit)
#' tidy(fit, lambda = 0.6, n = 5)    # the 5 most relevant terms per topic
#' tidy(fit, matrix = "gamma")
#' glance(fit)
#' glance(fit, data = sotu_dtm)
#' @export
tidy.aspectr_plsa <- function(x, matrix = c("beta", "gamma"), lambda = NULL, n = NULL, ...) {
  check_dots_empty(...)
  matrix <- match_option(matrix, c("beta", "gamma"), "matrix")
  out <- if (matrix == "beta") {
    tidy_beta(x$factors[[length(x$dims)]], tidy_ids(x, length(x$dims)), as.numeric(x$lambda), lambda, n)
  } else {
    check_beta_only(lambda, n)
    x <- rows_in_memory(x)
    g <- topics(x)
    tibble::tibble(document = rep(tidy_ids(x, 1), times = x$k),
                   topic = rep(seq_len(x$k), each = nrow(g)),
                   gamma = as.vector(g))
  }
  # guided topics (plsa(seeds =)): the topics by name
  if (length(x$prior$guided)) out$topic <- names(x$lambda)[out$topic]
  out
}

#' @rdname tidy.aspectr_plsa
#' @export
glance.aspectr_plsa <- function(x, data = NULL, n = 10, ...) {
  check_dots_empty(...)
  lik <- !isFALSE(x$normalize) && !isFALSE(x$count_data)
  ll <- if (lik) logLik(x) else NA_real_
  q <- glance_quality(x, data, n)
  tibble::tibble(k = x$k, loss = x$loss, objective = x$value,
                 iterations = x$iterations, converged = x$converged,
                 logLik = as.numeric(ll), AIC = if (lik) AIC(x) else NA_real_,
                 BIC = if (lik) BIC(x) else NA_real_,
                 nobs = x$total, n_documents = x$dims[1], n_terms = x$dims[2],
                 umass = q[["umass"]], npmi = q[["npmi"]], exclusivity = q[["exclusivity"]],
                 frex = q[["frex"]])
}

# The beta tibble of a terms x k matrix of P(w | z): every (topic, term)
# pair in topic order, or with `lambda` a relevance column and each topic's
# rows by decreasing relevance; with `n` the top n of each topic.
tidy_beta <- function(beta, terms, weights, lambda = NULL, n = NULL, call = rlang::caller_env()) {
  k <- ncol(beta)
  V <- nrow(beta)
  if (!is.null(lambda)) lambda <- check_lambda(lambda, call = call)
  n <- if (is.null(n)) V else min(check_whole(n, "n", call = call), V)
  if (is.null(lambda) && n == V) {
    return(tibble::tibble(topic = rep(seq_len(k), each = V), term = rep(terms, times = k),
                          beta = as.vector(beta)))
  }
  rel <- if (is.null(lambda)) NULL else relevance_matrix(beta, weights, lambda)
  top <- top_term_index(beta, n, rel)
  out <- tibble::tibble(topic = rep(seq_len(k), each = n), term = terms[as.vector(top)],
                        beta = beta[cbind(as.vector(top), rep(seq_len(k), each = n))])
  if (!is.null(lambda)) out$relevance <- rel[cbind(as.vector(top), rep(seq_len(k), each = n))]
  out
}

check_beta_only <- function(lambda, n, call = rlang::caller_env()) {
  if (!is.null(lambda) || !is.null(n)) {
    abort_input("{.arg {if (is.null(lambda)) 'n' else 'lambda'}} applies to {.code matrix = \"beta\"} only.",
                "argument", arg = if (is.null(lambda)) "n" else "lambda", call = call)
  }
}

# The topic-quality means of glance(): exclusivity and FREX from the fit
# alone, coherence only with the data (NA without); NA for N-way fits.
glance_quality <- function(x, data, n, call = rlang::caller_env()) {
  na <- c(umass = NA_real_, npmi = NA_real_, exclusivity = NA_real_, frex = NA_real_)
  if (length(x$dims) != 2) {
    if (!is.null(data)) {
      abort_unsupported("{.arg data} in {.fn glance} of an N-way fit",
                        "topic coherence needs documents x terms data.", call = call)
    }
    return(na)
  }
  # (an NMF whose W is in files: exclusivity and FREX need only the terms'
  # distributions, the rows of H normalized; coherence needs the fit's rows)
  if (inherits(x, "aspectr_nmf") && in_files(x) && is.null(data)) {
    H <- unname(x$H)
    rh <- rowSums(H)
    tf <- list(beta = t(H / ifelse(rh > 0, rh, 1)))
  } else {
    tf <- topic_form(x, "{.fn glance}", call = call)
  }
  if (nrow(tf$beta) < 2) return(na)
  n <- quality_n(n, nrow(tf$beta), call = call)
  top <- top_term_index(tf$beta, n)
  ex <- exclusivity_scores(tf$beta, top, 0.7)
  out <- c(umass = NA_real_, npmi = NA_real_, exclusivity = mean(ex$exclusivity),
           frex = mean(ex$frex))
  if (!is.null(data)) {
    coh <- coherence(top, fitted_data(tf, data, call = call), 1)
    out[["umass"]] <- mean(coh$umass, na.rm = TRUE)
    out[["npmi"]] <- mean(coh$npmi, na.rm = TRUE)
  }
  out
}

#' Plot a pLSA fit
#'
#' @param x An `aspectr_plsa` fit.
#' @param type `"terms"` (bar charts of the top terms of each topic),
#'   `"weights"` (topic weights) or `"convergence"` (objective per
#'   iteration).
#' @param n Number of terms per topic for `type = "terms"`.
#' @param topics Which topics to show for `type = "terms"` (default: all, at
#'   most 12).
#' @param ... Passed to the underlying base graphics function.
#' @return `x`, invisibly.
#' @examples
#' fit <- plsa(sotu_dtm, k = 4, seed = 1, max_iter = 100, tol = 1e-5)
#' plot(fit)
#' plot(fit, type = "convergence")
#' @export
plot.aspectr_plsa <- function(x, type = c("terms", "weights", "convergence"), n = 8,
                              topics = NULL, ...) {
  type <- match_option(type, c("terms", "weights", "convergence"), "type")
  n <- check_whole(n, "n")
  if (!is.null(topics) && !(is.numeric(topics) && length(topics) && !anyNA(topics) &&
                            all(topics == round(topics)) && all(topics >= 1 & topics <= x$k))) {
    abort_input("{.arg topics} must be NULL or whole numbers between 1 and {x$k} (the number of topics), not {describe(topics)}{if (is.numeric(topics) && length(topics) > 1) paste0(' (', paste(utils::head(topics, 6), collapse = ', '), ')') else ''}.",
                "argument", arg = "topics")
  }
  if (type == "convergence") {
    if (!length(x$objective)) {
      cli::cli_inform("The fit used the closed form (no iterations); nothing to plot.")
      return(invisible(x))
    }
    graphics::plot(seq_along(x$objective), x$objective, type = "l",
                   xlab = "iteration", ylab = paste("objective:", loss_label(x)),
                   main = "Convergence", ...)
  } else if (type == "weights") {
    graphics::barplot(x$lambda, names.arg = seq_len(x$k), xlab = "topic",
                      ylab = "P(z)", main = "Topic weights", ...)
  } else {
    if (is.null(topics)) topics <- seq_len(min(x$k, 12))
    topics <- topics[topics >= 1 & topics <= x$k]
    nt <- length(topics)
    nc <- ceiling(sqrt(nt))
    nr <- ceiling(nt / nc)
    op <- graphics::par(mfrow = c(nr, nc), mar = c(3, 7, 2, 1), las = 1)
    on.exit(graphics::par(op), add = TRUE)
    # text sized to the device: mfrow's automatic shrinking (to 2/3 with
    # three or more rows) undone, and the term labels as large as the
    # panel's height allows for n bars
    graphics::par(cex = 0.85)
    v <- x$factors[[length(x$dims)]]
    tn <- term_names(x)
    # one scale for every panel, so the bars compare across topics
    xmax <- max(v[, topics, drop = FALSE])
    shown <- unlist(lapply(topics, function(r) tn[order(v[, r], decreasing = TRUE)[seq_len(min(n, nrow(v)))]]))
    panel_h <- graphics::par("din")[2] / nr - 5 * graphics::par("csi")
    names_cex <- label_cex(min(n, nrow(v)) * 1.25, panel_h, 0.9)
    left <- max(graphics::strwidth(shown, units = "inches", cex = names_cex)) / graphics::par("csi") + 1
    graphics::par(mar = c(3, min(12, max(3, left)), 2, 1))
    for (r in topics) {
      o <- order(v[, r], decreasing = TRUE)[seq_len(min(n, nrow(v)))]
      # defaults the caller's graphics arguments override
      args <- list(main = sprintf("topic %d (%.2f)", r, x$lambda[r]), cex.names = names_cex / graphics::par("cex"),
                   col = "steelblue", border = NA, xlim = c(0, xmax))
      dots <- list(...)
      args[names(dots)] <- dots
      do.call(graphics::barplot, c(list(rev(v[o, r]), names.arg = rev(tn[o]), horiz = TRUE), args))
    }
  }
  invisible(x)
}

# ---- autoplot, residuals, augment --------------------------------------------

# Top entries of each component as horizontal bars, one facet per
# component, on one shared scale, bars ordered within their facet.
top_bars <- function(m, n, labels, value_label, facet_label, title) {
  k <- ncol(m)
  rows <- lapply(seq_len(k), function(r) {
    o <- order(m[, r], decreasing = TRUE)[seq_len(min(n, nrow(m)))]
    data.frame(component = facet_label[r], item = labels[o], value = m[o, r], rank = seq_along(o))
  })
  d <- do.call(rbind, rows)
  d$component <- factor(d$component, levels = facet_label)
  # an item label unique within its facet, ordered by rank (reordered within facets)
  d$key <- factor(paste(d$component, d$rank, sep = "\r"),
                  levels = rev(unique(paste(d$component, d$rank, sep = "\r"))))
  lab <- stats::setNames(d$item, as.character(d$key))
  ggplot2::ggplot(d, ggplot2::aes(x = .data$value, y = .data$key)) +
    ggplot2::geom_col(fill = "steelblue") +
    ggplot2::facet_wrap(ggplot2::vars(.data$component), scales = "free_y") +
    ggplot2::scale_y_discrete(labels = function(b) lab[b]) +
    ggplot2::labs(x = value_label, y = NULL, title = title) +
    ggplot2::theme_minimal() +
    # (room on the right for the last facet's last tick label)
    ggplot2::theme(plot.margin = ggplot2::margin(5.5, 16, 5.5, 5.5))
}

#' @rdname autoplot.aspectr
#' @exportS3Method ggplot2::autoplot
autoplot.aspectr_plsa <- function(object, n = 10, ...) {
  check_dots_empty(...)
  check_ggplot2()
  n <- check_whole(n, "n")
  if (inherits(object, "aspectr_lca")) return(autoplot_lca(object))
  v <- object$factors[[length(object$dims)]]
  top_bars(v, n, term_names(object), "P(term | topic)",
           sprintf("topic %d (%.2f)", seq_len(object$k), object$lambda), "Top terms per topic")
}

#' @rdname residuals.aspectr_fit
#' @export
residuals.aspectr_plsa <- function(object, x, ...) {
  check_dots_empty(...)
  object <- rows_in_memory(object)
  d <- fitted_data(object, x, arg = "x", usage = "residuals(fit, x)")
  arr <- array(0, d$dims)
  arr[t(d$idx + 1L)] <- d$val
  if (length(d$dims) == 2) arr <- matrix(arr, d$dims[1])
  out <- arr - unname(fitted(object))
  dimnames(out) <- object$dimnames
  out
}

#' @rdname augment.aspectr_fit
#' @export
augment.aspectr_plsa <- function(x, data, ...) {
  check_dots_empty(...)
  x <- rows_in_memory(x)
  if (!is.null(x$weighting) && !(!missing(data) && is.data.frame(data))) {
    # (missing cells, masks, weights: the cells left out too, imputed)
    if (length(x$dims) == 2) return(plsa_augment_weighted(x, if (!missing(data)) data))
    return(nway_augment_weighted(x, if (!missing(data)) data, as.numeric(x$lambda) * x$total, "count", ".topic"))
  }
  if (!missing(data) && is.data.frame(data)) {
    if (length(x$dims) != 2) {
      abort_input("{.arg data} must be the fitted tensor for an N-way fit, not a data frame.",
                  "type", arg = "data")
    }
    return(augment_long(data, x$factors[[1]], x$factors[[2]], as.numeric(x$lambda),
                        doc_names(x), term_names(x)))
  }
  d <- fitted_data(x, data, usage = "augment(fit, data = x)")
  p <- cell_terms(x$factors, as.numeric(x$lambda), d)
  cols <- cell_index_columns(d, if (length(d$dims) == 2) c("document", "term") else names(x$factors))
  tibble::as_tibble(c(cols, list(count = d$val, .fitted = rowSums(p) * x$total,
                                 .topic = max.col(p, ties.method = "first"))))
}
