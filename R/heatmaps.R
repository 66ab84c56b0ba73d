# Annotated heatmaps, in base graphics and ggplot2 from the same data: the
# coefficient and basis maps of NMF fits and the consensus map of a rank
# selection. Items (samples, columns or rows) run along the x axis, with
# an optional dendrogram above them and annotation tracks between the
# dendrogram and the map; legends and the colour key on the right.

# An annotation for `items` (names, in the order of the factor's rows):
# NULL, a data frame (or a vector or factor, one column) with a row per
# item, matched by row names when they are the items' names; checked.
check_annotation <- function(annotation, items, n_items, what, arg = "annotation",
                             call = rlang::caller_env()) {
  if (is.null(annotation)) return(NULL)
  if (is.atomic(annotation) && is.null(dim(annotation))) {
    annotation <- data.frame(annotation = annotation, stringsAsFactors = FALSE)
  }
  if (is.matrix(annotation)) annotation <- as.data.frame(annotation, stringsAsFactors = FALSE)
  if (!is.data.frame(annotation)) {
    abort_input("{.arg {arg}} must be NULL, a data frame or a vector with one entry per {what}, not {describe(annotation)}.",
                "type", arg = arg, call = call)
  }
  rn <- rownames(annotation)
  if (!is.null(items) && !is.null(rn) && all(items %in% rn) && !identical(rn, as.character(seq_len(nrow(annotation))))) {
    annotation <- annotation[match(items, rn), , drop = FALSE]
  } else if (nrow(annotation) != n_items) {
    abort_input("{.arg {arg}} must have one row per {what} ({n_items}), not {nrow(annotation)}.",
                "argument", arg = arg, call = call)
  }
  if (!ncol(annotation)) return(NULL)
  # (columns that can be drawn as tracks: atomic vectors)
  keep <- vapply(annotation, function(v) is.atomic(v) && is.null(dim(v)), logical(1))
  annotation <- annotation[, keep, drop = FALSE]
  rownames(annotation) <- NULL
  if (!ncol(annotation)) NULL else annotation
}

# Colours of annotation tracks: for each column, the colour of every item
# and a legend (labels and colours). Categories get a qualitative palette;
# numbers a sequential one in 7 bins.
track_colours <- function(tracks) {
  if (is.null(tracks)) return(list())
  # (each track its own palette, so that equal colours in two tracks do not
  # suggest equal meanings)
  qual <- c("Dark 3", "Set 2", "Harmonic", "Dynamic", "Pastel 1", "Cold", "Warm")
  seqs <- c("Purples 3", "Greens 3", "Oranges", "Blues 3", "Reds 3")
  i_q <- 0
  i_s <- 0
  lapply(stats::setNames(names(tracks), names(tracks)), function(nm) {
    v <- tracks[[nm]]
    if (is.numeric(v) && length(unique(v[!is.na(v)])) > 8) {
      br <- pretty(range(v, na.rm = TRUE), 6)
      bin <- cut(v, br, include.lowest = TRUE)
      i_s <<- i_s + 1
      pal <- grDevices::hcl.colors(nlevels(bin), seqs[(i_s - 1) %% length(seqs) + 1], rev = TRUE)
      list(colour = ifelse(is.na(bin), "grey90", pal[as.integer(bin)]),
           legend = stats::setNames(pal, levels(bin)))
    } else {
      f <- if (is.factor(v)) droplevels(v) else factor(v)
      lv <- levels(f)
      i_q <<- i_q + 1
      pal <- grDevices::hcl.colors(max(length(lv), 2), qual[(i_q - 1) %% length(qual) + 1])[seq_along(lv)]
      list(colour = ifelse(is.na(f), "grey90", pal[as.integer(f)]), legend = stats::setNames(pal, lv))
    }
  })
}

# Label size for `n` labels sharing `inches` of the device, at most
# `max_cex`, at least 0.35 (labels then overlap rather than vanish).
label_cex <- function(n, inches, max_cex = 1) {
  char_h <- graphics::par("cin")[2]
  max(0.35, min(max_cex, 0.95 * inches / (max(n, 1) * char_h)))
}

# A heatmap of `z` (rows: what is drawn up the y axis, top first; columns:
# the items along the x axis), with `dend` (an hclust of the items, whose
# order the columns already follow) above and `tracks` (a data frame with
# a row per item) between.
base_heatmap <- function(z, zlim, palette, main, key_label, dend = NULL, tracks = NULL,
                         xlab = NULL) {
  n <- ncol(z)
  nr <- nrow(z)
  tc <- track_colours(tracks)
  nt <- length(tc)
  op <- graphics::par(no.readonly = TRUE)
  on.exit(graphics::par(op), add = TRUE)
  din <- graphics::par("din")
  # panels: dendrogram, tracks, map (left); legends (right). The
  # dendrogram and the tracks take fixed heights (inches; the first one
  # also holds the title), the map the rest.
  title_in <- 0.4
  fixed <- c(if (!is.null(dend)) min(1.3, 0.2 * din[2]) + title_in,
             if (nt) 0.19 * nt + 0.05 + if (is.null(dend)) title_in else 0)
  np <- length(fixed) + 1
  graphics::layout(cbind(seq_len(np), np + 1), widths = c(5, 1.35),
                   heights = c(vapply(fixed, function(h) graphics::lcm(h * 2.54), ""), "1"))
  graphics::par(cex = 1)
  xl <- colnames(z) %||% as.character(seq_len(n))
  yl <- rownames(z) %||% as.character(seq_len(nr))
  # label sizes from the device: the map takes about 5/6.35 of the width
  # and 5/sum(heights) of the height
  map_w <- din[1] * 5 / 6.35 - 1.2
  map_h <- din[2] - sum(fixed) - 1
  cex_x <- label_cex(n, map_w, 0.9)
  cex_y <- label_cex(nr, map_h, 0.9)
  # margins from the labels' widths, in lines
  lines_of <- function(labels, cex) max(graphics::strwidth(labels, units = "inches", cex = cex)) /
    graphics::par("csi")
  left <- max(3, min(14, lines_of(c(yl, names(tc)), cex_y) + 1))
  bottom <- max(2, min(14, lines_of(xl, cex_x) + 0.5 + if (is.null(xlab)) 0 else 1.3))
  xlim <- c(0.5, n + 0.5)
  title_drawn <- FALSE
  draw_title <- function() {
    if (!title_drawn) {
      # (shrunk to the width of the panel's figure region when long)
      fig_in <- diff(graphics::par("fig")[1:2]) * din[1]
      w <- graphics::strwidth(main, units = "inches", cex = 1.15, font = 2)
      graphics::title(main = main, line = 0.6, cex.main = min(1.15, 1.15 * 0.95 * fig_in / w), xpd = NA)
    }
    title_drawn <<- TRUE
  }
  title_lines <- title_in / graphics::par("csi")
  if (!is.null(dend)) {
    graphics::par(mar = c(0, left, title_lines, 0.5))
    graphics::plot(stats::as.dendrogram(dend), leaflab = "none", axes = FALSE, xlim = xlim,
                   xaxs = "i", yaxs = "i")
    draw_title()
  }
  if (nt) {
    graphics::par(mar = c(0.05, left, if (is.null(dend)) title_lines else 0.05, 0.5))
    # (as a raster: no seams between cells)
    colours <- do.call(cbind, lapply(rev(tc), `[[`, "colour"))
    u <- unique(as.vector(colours))
    idx <- matrix(match(colours, u), nrow = n)
    graphics::image(seq_len(n), seq_len(nt), idx, col = u, zlim = c(1, length(u)), axes = FALSE,
                    xlab = "", ylab = "", xlim = xlim, ylim = c(0.5, nt + 0.5), useRaster = TRUE)
    graphics::abline(h = seq_len(nt - 1) + 0.5, col = "white", lwd = 2)
    graphics::axis(2, at = rev(seq_len(nt)), labels = names(tc), las = 1, tick = FALSE,
                   line = -0.6, cex.axis = 0.8)
    draw_title()
  }
  graphics::par(mar = c(bottom, left, if (np == 1) title_lines else 0.15, 0.5))
  graphics::image(seq_len(n), seq_len(nr), t(z[rev(seq_len(nr)), , drop = FALSE]), col = palette,
                  zlim = zlim, axes = FALSE, xlab = "", ylab = "", useRaster = TRUE)
  draw_title()
  graphics::axis(1, at = seq_len(n), labels = xl, las = 2, tick = FALSE, line = -0.6, cex.axis = cex_x)
  graphics::axis(2, at = seq_len(nr), labels = rev(yl), las = 1, tick = FALSE, line = -0.6, cex.axis = cex_y)
  if (!is.null(xlab)) graphics::mtext(xlab, side = 1, line = bottom - 1.1, cex = 0.9)
  graphics::box()
  # legends: the colour key, then one block per track
  graphics::par(mar = c(1, 0.3, title_lines, 0.3))
  graphics::plot.new()
  graphics::plot.window(c(0, 1), c(0, 1), xaxs = "i", yaxs = "i")
  ys <- seq(0.74, 0.92, length.out = length(palette) + 1)
  graphics::rect(0.05, ys[-length(ys)], 0.22, ys[-1], col = palette, border = NA)
  graphics::rect(0.05, min(ys), 0.22, max(ys), border = "grey40")
  graphics::text(0.27, c(min(ys), max(ys)), format(zlim, digits = 3), adj = 0, cex = 0.8)
  graphics::text(0.05, 0.935, key_label, adj = c(0, 0), cex = 0.8, xpd = NA)
  y <- 0.70
  for (t in seq_len(nt)) {
    lg <- tc[[t]]$legend
    if (length(lg) > 12) lg <- lg[unique(round(seq(1, length(lg), length.out = 12)))]
    r <- graphics::legend(0, y, legend = names(lg), fill = lg, border = NA, bty = "n", title = names(tc)[t],
                          title.adj = 0, cex = 0.8, xpd = NA, y.intersp = 0.9)
    y <- y - r$rect$h - 0.02
  }
  invisible()
}

# The same picture in ggplot2: the map as tiles, the tracks as rows of
# squares above it (their own colour scale), the dendrogram as segments.
gg_heatmap <- function(z, zlim, palette, main, key_label, dend = NULL, tracks = NULL, xlab = NULL) {
  n <- ncol(z)
  nr <- nrow(z)
  xl <- colnames(z) %||% as.character(seq_len(n))
  yl <- rownames(z) %||% as.character(seq_len(nr))
  # one fill scale for the map and the tracks: the map's values binned into
  # the palette's colours (the key drawn from an invisible colour layer),
  # the tracks' levels with their own colours (in the legend)
  bins <- findInterval(as.vector(z), seq(zlim[1], zlim[2], length.out = length(palette) + 1),
                       all.inside = TRUE)
  heat_keys <- sprintf("\u00a0map%03d", seq_along(palette))
  d <- data.frame(x = rep(seq_len(n), each = nr), y = rep(rev(seq_len(nr)), n), value = as.vector(z),
                  key = heat_keys[bins])
  fills <- stats::setNames(palette, heat_keys)
  breaks_y <- seq_len(nr)
  labels_y <- rev(yl)
  top <- nr + 0.5
  tc <- track_colours(tracks)
  nt <- length(tc)
  # track rows and the dendrogram take the shares of the map's height the
  # base picture gives them
  th <- 0.044 * nr
  td <- NULL
  legend_keys <- character()
  if (nt) {
    td <- do.call(rbind, lapply(seq_len(nt), function(t) {
      lv <- names(tc[[t]]$legend)[match(tc[[t]]$colour, tc[[t]]$legend)]
      lv[is.na(lv)] <- "NA"
      data.frame(x = seq_len(n), y = top + 0.02 * nr + (nt - t + 0.5) * th,
                 key = paste0(names(tc)[t], ": ", lv))
    }))
    for (t in seq_len(nt)) {
      lg <- tc[[t]]$legend
      keys <- paste0(names(tc)[t], ": ", names(lg))
      fills <- c(fills, stats::setNames(lg, keys))
      legend_keys <- c(legend_keys, keys)
    }
    fills <- c(fills, stats::setNames("grey90", "NA"))
    breaks_y <- c(breaks_y, top + 0.02 * nr + (rev(seq_len(nt)) - 0.5) * th)
    labels_y <- c(labels_y, names(tc))
    top <- top + 0.02 * nr + nt * th
  }
  p <- ggplot2::ggplot() +
    ggplot2::geom_tile(data = d, ggplot2::aes(x = .data$x, y = .data$y, fill = .data$key)) +
    ggplot2::geom_point(data = d, ggplot2::aes(x = .data$x, y = .data$y, colour = .data$value), alpha = 0) +
    ggplot2::scale_colour_gradientn(colours = palette, limits = zlim, name = key_label)
  if (nt) {
    p <- p + ggplot2::geom_tile(data = td, ggplot2::aes(x = .data$x, y = .data$y, fill = .data$key),
                                height = 0.9 * th)
  }
  p <- p + ggplot2::scale_fill_manual(values = fills, breaks = legend_keys, name = NULL,
                                      guide = if (nt) "legend" else "none")
  if (!is.null(dend)) {
    seg <- dendrogram_segments(dend)
    h <- max(seg$y1, seg$y2)
    sc <- if (h > 0) 0.26 * nr / h else 0
    seg$y1 <- top + 0.02 * nr + seg$y1 * sc
    seg$y2 <- top + 0.02 * nr + seg$y2 * sc
    p <- p + ggplot2::geom_segment(data = seg, ggplot2::aes(x = .data$x1, y = .data$y1, xend = .data$x2, yend = .data$y2),
                                   linewidth = 0.3)
  }
  p + ggplot2::scale_x_continuous(breaks = seq_len(n), labels = xl, expand = c(0, 0)) +
    ggplot2::scale_y_continuous(breaks = breaks_y, labels = labels_y, expand = c(0, 0.02 * nr)) +
    ggplot2::labs(x = xlab, y = NULL, title = main) +
    ggplot2::theme_minimal() +
    ggplot2::theme(panel.grid = ggplot2::element_blank(),
                   axis.text.x = ggplot2::element_text(angle = 90, hjust = 1, vjust = 0.5,
                                                       size = max(5, min(9, 400 / n))),
                   axis.text.y = ggplot2::element_text(size = max(4, min(9, 220 / nr))))
}

# The segments of an hclust's dendrogram, leaves at 1..n in its order
dendrogram_segments <- function(hc) {
  n <- length(hc$order)
  leaf_x <- integer(n)
  leaf_x[hc$order] <- seq_len(n)
  m <- hc$merge
  node_x <- numeric(nrow(m))
  pos <- function(i) if (i < 0) c(leaf_x[-i], 0) else c(node_x[i], hc$height[i])
  segs <- vector("list", nrow(m))
  for (i in seq_len(nrow(m))) {
    a <- pos(m[i, 1])
    b <- pos(m[i, 2])
    h <- hc$height[i]
    node_x[i] <- (a[1] + b[1]) / 2
    segs[[i]] <- data.frame(x1 = c(a[1], b[1], a[1]), y1 = c(a[2], b[2], h),
                            x2 = c(a[1], b[1], b[1]), y2 = c(h, h, h))
  }
  do.call(rbind, segs)
}

# The data of an NMF factor map: `m` items x components, each component
# scaled to its maximum, the `n` items with the largest scaled loadings
# of every component in turn, ordered by dominant component and then by
# loading; returned as components x items with the items' dominant
# component and positions (in `m`).
factor_map_data <- function(m, n) {
  k <- ncol(m)
  s <- sweep(m, 2, pmax(apply(m, 2, max), 1e-300), "/")
  keep <- seq_len(nrow(s))
  if (nrow(s) > n) {
    ranks <- apply(s, 2, order, decreasing = TRUE)
    keep <- unique(as.vector(t(ranks)))[seq_len(n)]
  }
  s <- s[keep, , drop = FALSE]
  dom <- max.col(s, ties.method = "first")
  ord <- order(dom, -s[cbind(seq_len(nrow(s)), dom)])
  z <- t(s[ord, , drop = FALSE])
  if (is.null(colnames(z))) colnames(z) <- as.character(keep[ord])
  rownames(z) <- colnames(m) %||% paste0("factor_", seq_len(k))
  list(z = z, items = keep[ord], dominant = dom[ord], total = nrow(m))
}

# The factor map of an NMF fit (type "H": the columns of the data, "W":
# its rows) with its tracks: the annotation given (or, for "H", the fit's
# own: the samples of a container) and each item's dominant factor.
nmf_map <- function(x, type, n, annotation, call = rlang::caller_env()) {
  if (type == "W") x <- rows_in_memory(x)
  m <- if (type == "W") x$W else t(x$H)
  what <- if (type == "W") "row of the data" else "column of the data"
  if (is.null(annotation) && type == "H") annotation <- x$annotation
  if (isFALSE(annotation)) annotation <- NULL
  ann <- check_annotation(annotation, rownames(m), nrow(m), what, call = call)
  if (is.null(n)) n <- if (nrow(m) <= 100) nrow(m) else 40L
  md <- factor_map_data(m, n)
  tracks <- data.frame(factor = factor(rownames(md$z)[md$dominant], levels = rownames(md$z)))
  if (!is.null(ann)) tracks <- cbind(ann[md$items, , drop = FALSE], tracks)
  shown <- if (md$total > n) paste0(", top ", n, " of ", md$total) else ""
  list(z = md$z, tracks = tracks,
       main = if (type == "H") paste0("Coefficient map (H)", shown) else paste0("Basis map (W)", shown),
       xlab = if (type == "H") "columns of the data" else "rows of the data")
}

map_palette <- function() grDevices::hcl.colors(50, "YlOrRd", rev = TRUE)

# The consensus map of a rank selection at rank k
consensus_map <- function(x, k, annotation, call = rlang::caller_env()) {
  if (x$method != "consensus") {
    abort_input("{.code type = \"consensus\"} needs a rank selection by {.code method = \"consensus\"}, not {.val {x$method}}.",
                "argument", arg = "type", call = call)
  }
  ks <- as.integer(names(x$details$consensus))
  if (is.null(k)) k <- x$best
  if (!(is.numeric(k) && length(k) == 1 && !is.na(k) && k %in% ks)) {
    abort_input("{.arg k} must be one of the ranks compared, {.or {ks}}, not {describe(k)}.",
                "argument", arg = "k", call = call)
  }
  key <- as.character(k)
  C <- x$details$consensus[[key]]
  hc <- x$details$hclust[[key]]
  o <- hc$order
  if (is.null(annotation)) annotation <- x$annotation
  if (isFALSE(annotation)) annotation <- NULL
  ann <- check_annotation(annotation, rownames(C), nrow(C), "column of the data", call = call)
  tracks <- data.frame(cluster = factor(x$details$cluster[[key]][o]))
  if (!is.null(ann)) tracks <- cbind(ann[o, , drop = FALSE], tracks)
  list(z = C[o, o, drop = FALSE], dend = hc, tracks = tracks,
       main = sprintf("Consensus map, rank %d (%d runs; cophenetic %.3f)", k, x$nrun,
                      x$table$cophenetic[x$table$k == k]))
}
