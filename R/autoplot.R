# ggplot2 pictures of every family (ggplot2 is suggested, not required):
# autoplot() methods registered on ggplot2's generic when ggplot2 loads.

check_ggplot2 <- function(call = rlang::caller_env()) {
  if (!requireNamespace("ggplot2", quietly = TRUE)) {
    cli::cli_abort(c("{.fn autoplot} needs the {.pkg ggplot2} package.",
                     i = "Install it with {.code install.packages(\"ggplot2\")}, or use {.fn plot}."),
                   class = c("aspectr_error_unsupported", "aspectr_error"), call = call)
  }
}

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

#' ggplot2 pictures of aspectr fits
#'
#' `autoplot()` methods (for [ggplot2::autoplot()]; ggplot2 must be
#' installed) for every family:
#' * pLSA fits: the top terms of each topic (\eqn{P(w \mid z)}), one facet
#'   per topic on one shared scale, terms ordered within each facet;
#' * NMF fits: the pictures of [plot()][plot.aspectr_nmf()] for the same
#'   `type`: the coefficient map (`"H"`, the default) or basis map (`"W"`)
#'   with annotation tracks, the convergence trace, the column clusters;
#' * LCA fits: class profiles, one facet per variable with its levels
#'   named on the vertical axis (long names wrapped) and one horizontal bar
#'   per class, \eqn{P(level \mid class)}; one legend, of the classes with
#'   their shares;
#' * NTF fits: the factor of each mode, bars with the level names for
#'   categorical modes (named, at most 30 levels), lines otherwise;
#' * symmetric NMF, SNTF and multi-way clustering results: the membership
#'   matrix as a heatmap, points ordered by cluster;
#' * rank selections ([plsa_rank()], [lca_rank()], [nmf_rank()]): the
#'   criterion by rank with the suggested rank marked; for [nmf_rank()] by
#'   consensus, `type = "consensus"` draws the consensus map of rank `k` as
#'   [plot()][plot.aspectr_nmf_rank()] does.
#'
#' @param object A fit or rank selection.
#' @param n Number of top entries per component (for NMF maps: columns
#'   or rows shown, as in [plot.aspectr_nmf()]).
#' @param type For NMF: `"H"` (default), `"W"`, `"convergence"` or
#'   `"clusters"`; for [nmf_rank()]: `"stability"` (default) or
#'   `"consensus"`.
#' @param annotation For NMF maps and consensus maps: tracks, as in
#'   [plot.aspectr_nmf()] and [plot.aspectr_nmf_rank()].
#' @param k For consensus maps: the rank (default the suggested one).
#' @param ... Must be empty.
#' @return A ggplot object.
#' @examples
#' if (requireNamespace("ggplot2", quietly = TRUE)) {
#'   fit <- plsa(sotu_dtm, 4, seed = 1, max_iter = 50)
#'   ggplot2::autoplot(fit, n = 6)
#' }
#' @name autoplot.aspectr
NULL

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

#' @rdname autoplot.aspectr
#' @exportS3Method ggplot2::autoplot
autoplot.aspectr_nmf <- function(object, n = NULL, type = c("H", "W", "convergence", "clusters"),
                                 annotation = NULL, ...) {
  check_dots_empty(...)
  check_ggplot2()
  if (!is.null(n)) n <- check_whole(n, "n")
  type <- match_option(type, c("H", "W", "convergence", "clusters"), "type")
  if (type == "convergence") {
    d <- data.frame(iteration = seq_along(object$objective), objective = object$objective)
    return(ggplot2::ggplot(d, ggplot2::aes(x = .data$iteration, y = .data$objective)) +
             ggplot2::geom_line() + ggplot2::scale_y_log10() +
             ggplot2::labs(title = "Convergence") + ggplot2::theme_minimal())
  }
  if (type == "clusters") {
    cls <- max.col(t(object$H), ties.method = "first")
    d <- data.frame(factor = factor(seq_len(object$k)), columns = tabulate(cls, object$k))
    return(ggplot2::ggplot(d, ggplot2::aes(x = .data$factor, y = .data$columns)) +
             ggplot2::geom_col(fill = "grey50") +
             ggplot2::labs(title = "Column clusters") + ggplot2::theme_minimal())
  }
  md <- nmf_map(object, type, n, annotation)
  gg_heatmap(md$z, c(0, 1), map_palette(), md$main, "share of the\ncomponent's\nmaximum",
             tracks = md$tracks, xlab = md$xlab)
}

# Long level names wrapped onto lines of about `width` characters (so an
# axis label is never cut); the result stays unique per variable.
wrap_levels <- function(x, width = 16) {
  vapply(x, function(s) paste(strwrap(s, width = width), collapse = "\n"), character(1), USE.NAMES = FALSE)
}

# Class profiles: one panel per variable, its levels on the vertical axis
# (named there, never inside bars), one horizontal bar per class and level
# (P(level | class)); one legend, of the classes with their shares.
autoplot_lca <- function(object) {
  k <- object$k
  cls <- sprintf("class %d (%.2f)", seq_len(k), object$P)
  d <- do.call(rbind, lapply(names(object$probs), function(v) {
    m <- object$probs[[v]]  # classes x levels
    lv <- paste0(v, "\r", wrap_levels(colnames(m)))
    data.frame(variable = v, class = factor(rep(cls, ncol(m)), levels = cls),
               level = factor(rep(lv, each = nrow(m)), levels = rev(lv)),
               probability = as.vector(m))
  }))
  d$variable <- factor(d$variable, levels = names(object$probs))
  J <- length(object$probs)
  ncol <- if (J <= 3) J else if (J <= 4) 2 else if (J <= 9) 3 else 4
  ggplot2::ggplot(d, ggplot2::aes(x = .data$probability, y = .data$level, fill = .data$class)) +
    ggplot2::geom_col(position = ggplot2::position_dodge2(reverse = TRUE, padding = 0.1), width = 0.85) +
    ggplot2::facet_wrap(ggplot2::vars(.data$variable), scales = "free_y", ncol = ncol) +
    ggplot2::scale_y_discrete(labels = function(x) sub("^[^\r]*\r", "", x)) +
    ggplot2::scale_x_continuous(limits = c(0, 1), breaks = c(0, 0.5, 1), labels = c("0", "0.5", "1"),
                                expand = ggplot2::expansion(mult = c(0, 0.02))) +
    ggplot2::scale_fill_manual(values = grDevices::hcl.colors(max(k, 2), "Dark 3")[seq_len(k)]) +
    ggplot2::labs(x = "P(level | class)", y = NULL, fill = NULL, title = "Class profiles") +
    ggplot2::theme_minimal() +
    ggplot2::theme(legend.position = "top", panel.grid.major.y = ggplot2::element_blank(),
                   panel.spacing.x = ggplot2::unit(1.2, "lines"),
                   axis.text.y = ggplot2::element_text(size = 7.5, lineheight = 0.85),
                   strip.text = ggplot2::element_text(face = "bold"))
}

#' @rdname autoplot.aspectr
#' @exportS3Method ggplot2::autoplot
autoplot.aspectr_ntf <- function(object, ...) {
  check_dots_empty(...)
  check_ggplot2()
  object <- rows_in_memory(object)
  modes <- names(object$factors) %||% paste("mode", seq_along(object$factors))
  d <- do.call(rbind, lapply(seq_along(object$factors), function(n) {
    f <- object$factors[[n]]
    data.frame(mode = modes[n], index = rep(seq_len(nrow(f)), ncol(f)),
               level = rep(rownames(f) %||% as.character(seq_len(nrow(f))), ncol(f)),
               component = factor(rep(colnames(f) %||% seq_len(ncol(f)), each = nrow(f))),
               loading = as.vector(f),
               categorical = !is.null(rownames(f)) && nrow(f) <= 30)
  }))
  d$mode <- factor(d$mode, levels = modes)
  cat_d <- d[d$categorical, ]
  num_d <- d[!d$categorical, ]
  p <- ggplot2::ggplot() +
    ggplot2::facet_wrap(ggplot2::vars(.data$mode), scales = "free") +
    ggplot2::labs(y = "loading", x = NULL, colour = NULL, fill = NULL, title = "Factors by mode") +
    ggplot2::theme_minimal()
  if (nrow(cat_d)) {
    cat_d$level <- factor(cat_d$level, levels = unique(cat_d$level))
    p <- p + ggplot2::geom_col(data = cat_d, ggplot2::aes(x = .data$level, y = .data$loading, fill = .data$component),
                               position = "dodge")
  }
  if (nrow(num_d)) {
    p <- p + ggplot2::geom_line(data = num_d, ggplot2::aes(x = .data$index, y = .data$loading, colour = .data$component,
                                                           group = .data$component))
  }
  p
}

membership_heatmap <- function(m, cluster, title) {
  ord <- order(cluster, -apply(m, 1, max))
  pts <- rownames(m) %||% as.character(seq_len(nrow(m)))
  d <- data.frame(point = factor(rep(pts[ord], ncol(m)), levels = rev(pts[ord])),
                  component = factor(rep(seq_len(ncol(m)), each = nrow(m))),
                  membership = as.vector(m[ord, , drop = FALSE]))
  ggplot2::ggplot(d, ggplot2::aes(x = .data$component, y = .data$point, fill = .data$membership)) +
    ggplot2::geom_tile() +
    ggplot2::scale_fill_gradient(low = "white", high = "#08306B") +
    ggplot2::labs(x = "cluster", y = "point", title = title) +
    ggplot2::theme_minimal() +
    ggplot2::theme(axis.text.y = if (nrow(m) > 60) ggplot2::element_blank() else ggplot2::element_text(size = 7))
}

#' @rdname autoplot.aspectr
#' @exportS3Method ggplot2::autoplot
autoplot.aspectr_symnmf <- function(object, ...) {
  check_dots_empty(...)
  check_ggplot2()
  membership_heatmap(object$membership, object$cluster, "Cluster memberships (symmetric NMF)")
}

#' @rdname autoplot.aspectr
#' @exportS3Method ggplot2::autoplot
autoplot.aspectr_sntf <- function(object, ...) {
  check_dots_empty(...)
  check_ggplot2()
  membership_heatmap(object$membership, object$cluster, "Cluster memberships (SNTF)")
}

#' @rdname autoplot.aspectr
#' @exportS3Method ggplot2::autoplot
autoplot.aspectr_multiway <- function(object, ...) {
  check_dots_empty(...)
  check_ggplot2()
  cl <- object$cluster
  cl[is.na(cl)] <- object$k + 1L
  membership_heatmap(object$membership, cl, "Memberships (outliers last)")
}

rank_plot <- function(d, best, ylab, title) {
  ggplot2::ggplot(d, ggplot2::aes(x = .data$k, y = .data$value, linetype = .data$curve, shape = .data$curve)) +
    ggplot2::geom_line() + ggplot2::geom_point(size = 2) +
    ggplot2::geom_vline(xintercept = best, linetype = "dotted") +
    ggplot2::scale_x_continuous(breaks = unique(d$k)) +
    ggplot2::labs(x = "k", y = ylab, linetype = NULL, shape = NULL,
                  title = paste0(title, " (suggested k = ", best, ")")) +
    ggplot2::theme_minimal() + ggplot2::theme(legend.position = "top")
}

#' @rdname autoplot.aspectr
#' @exportS3Method ggplot2::autoplot
autoplot.aspectr_rank <- function(object, ...) {
  check_dots_empty(...)
  check_ggplot2()
  tab <- object$table
  if (object$criterion == "perplexity") {
    d <- data.frame(k = tab$k, value = tab$perplexity, curve = "held-out perplexity")
    return(rank_plot(d, object$best, "held-out perplexity", "Number of topics"))
  }
  d <- rbind(data.frame(k = tab$k, value = tab$BIC, curve = "BIC"),
             data.frame(k = tab$k, value = tab$AIC, curve = "AIC"))
  rank_plot(d, object$best, "information criterion", paste("Number of", object$what))
}

#' @rdname autoplot.aspectr
#' @exportS3Method ggplot2::autoplot
autoplot.aspectr_nmf_rank <- function(object, type = c("stability", "consensus"), k = NULL,
                                      annotation = NULL, ...) {
  check_dots_empty(...)
  check_ggplot2()
  type <- match_option(type, c("stability", "consensus"), "type")
  if (type == "consensus") {
    cm <- consensus_map(object, k, annotation)
    return(gg_heatmap(cm$z, c(0, 1), map_palette(), cm$main, "consensus", dend = cm$dend,
                      tracks = cm$tracks))
  }
  tab <- object$table
  d <- if (object$method %in% c("cv", "mask")) {
    rbind(data.frame(k = tab$k, value = tab$test_error, curve = "held out"),
          data.frame(k = tab$k, value = tab$train_error, curve = "training"))
  } else {
    rbind(data.frame(k = tab$k, value = tab$cophenetic * tab$dispersion, curve = "cophenetic x dispersion"),
          data.frame(k = tab$k, value = tab$cophenetic, curve = "cophenetic"),
          data.frame(k = tab$k, value = tab$dispersion, curve = "dispersion"))
  }
  rank_plot(d, object$best, if (object$method %in% c("cv", "mask")) "relative error" else "stability",
            if (identical(object$family, "ntf")) "CP (ntf) rank" else "NMF rank")
}
