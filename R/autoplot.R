# ggplot2 pictures of every family (ggplot2 is suggested, not required):
# autoplot() methods registered on ggplot2's generic when ggplot2 loads.
# Each family's method lives in its own file (family-*.R, rank.R); here
# are their shared help page and the helpers used by several of them.

check_ggplot2 <- function(call = rlang::caller_env()) {
  if (!requireNamespace("ggplot2", quietly = TRUE)) {
    cli::cli_abort(c("{.fn autoplot} needs the {.pkg ggplot2} package.",
                     i = "Install it with {.code install.packages(\"ggplot2\")}, or use {.fn plot}."),
                   class = c("aspectr_error_unsupported", "aspectr_error"), call = call)
  }
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
#'   fit <- plsa(sotu_dtm, 4, seed = 1, max_iter = 50, tol = 1e-4)
#'   ggplot2::autoplot(fit, n = 6)
#' }
#' @name autoplot.aspectr
NULL

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

# (`bars`: a data frame k, lo, hi of error bars; `hline`: a threshold
# drawn dashed)
rank_plot <- function(d, best, ylab, title, bars = NULL, hline = NULL) {
  p <- ggplot2::ggplot(d, ggplot2::aes(x = .data$k, y = .data$value, linetype = .data$curve, shape = .data$curve)) +
    ggplot2::geom_line() + ggplot2::geom_point(size = 2)
  if (!is.null(bars) && nrow(bars)) {
    p <- p + ggplot2::geom_errorbar(data = bars, ggplot2::aes(x = .data$k, ymin = .data$lo, ymax = .data$hi),
                                    inherit.aes = FALSE, width = 0.15)
  }
  if (!is.null(hline)) p <- p + ggplot2::geom_hline(yintercept = hline, linetype = "longdash", colour = "grey50")
  p +
    ggplot2::geom_vline(xintercept = best, linetype = "dotted") +
    ggplot2::scale_x_continuous(breaks = unique(d$k)) +
    ggplot2::labs(x = "k", y = ylab, linetype = NULL, shape = NULL,
                  title = paste0(title, " (suggested k = ", best, ")")) +
    ggplot2::theme_minimal() + ggplot2::theme(legend.position = "top")
}
