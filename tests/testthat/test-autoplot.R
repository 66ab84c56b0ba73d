# ggplot2 pictures of every family build without error and show what they say.

test_that("autoplot() draws every family and rank selection", {
  skip_if_not_installed("ggplot2")
  built <- function(p) {
    expect_s3_class(p, "ggplot")
    b <- ggplot2::ggplot_build(p)
    f <- tempfile(fileext = ".png")
    grDevices::png(f)
    on.exit(grDevices::dev.off())
    print(p)
    b
  }
  fit <- suppressMessages(plsa(sotu_dtm[1:60, ], 3, seed = 1, max_iter = 30))
  b <- built(ggplot2::autoplot(fit, n = 5))
  d <- b$data[[1]]
  expect_equal(nrow(d), 15)
  # one shared x scale: every panel has the same range
  ranges <- lapply(b$layout$panel_params, function(pp) pp$x$continuous_range)
  expect_true(all(vapply(ranges, identical, TRUE, ranges[[1]])))
  # the top term of each topic is its largest P(term | topic)
  expect_equal(sort(tapply(d$x, d$PANEL, max)), sort(apply(fit$factors[[2]], 2, max)), ignore_attr = TRUE)
  nf <- suppressMessages(nmf(sotu_dtm[1:60, ], 3, seed = 1, max_iter = 30))
  built(ggplot2::autoplot(nf, n = 4))
  built(ggplot2::autoplot(nf, n = 4, type = "W"))
  lc <- lca(data.frame(lapply(iris[1:4], cut, 3)), 2, seed = 1)
  b <- built(ggplot2::autoplot(lc))
  # one horizontal bar per variable, level and class, as long as its probability
  expect_equal(sort(b$data[[1]]$xmax), sort(unlist(lc$probs, use.names = FALSE)), tolerance = 1e-12)
  expect_equal(unique(b$data[[1]]$xmin), 0)
  # the level names are the vertical axis of their variable's panel; one legend (the classes)
  for (j in 1:4) {
    expect_setequal(b$layout$panel_params[[j]]$y$get_labels(), colnames(lc$probs[[j]]))
  }
  expect_identical(levels(b$plot$data$class), sprintf("class %d (%.2f)", 1:2, lc$P))
  # long level names are wrapped, not cut
  long <- lc
  colnames(long$probs[[1]]) <- c("a very long level name indeed", "short", "another long level name")
  b <- built(ggplot2::autoplot(long))
  expect_setequal(gsub("\n", " ", b$layout$panel_params[[1]]$y$get_labels()), colnames(long$probs[[1]]))
  nt <- suppressMessages(ntf(as_sptensor(UCBAdmissions), 2, seed = 1))
  built(ggplot2::autoplot(nt))
  y <- array(rpois(40 * 3 * 2, 3), c(40, 3, 2))
  built(ggplot2::autoplot(suppressMessages(ntf(y, 2, seed = 1))))
  A <- tcrossprod(matrix(runif(30), 15))
  built(ggplot2::autoplot(suppressMessages(symnmf(A, 2, seed = 1))))
  set.seed(1)
  t <- runif(30, -1, 1)
  x <- rbind(cbind(t[1:15], 0.5 * t[1:15]), cbind(t[16:30], -t[16:30])) + matrix(rnorm(60, sd = 0.01), 30)
  mc <- multiway_cluster(x, 2, model = "line", seed = 1)
  built(ggplot2::autoplot(mc))
  built(ggplot2::autoplot(mc$fit))
  r <- lca_rank(data.frame(lapply(iris[1:4], cut, 3)), k = 1:3, nrun = 2, seed = 1)
  built(ggplot2::autoplot(r))
  pr <- suppressMessages(plsa_rank(sotu_dtm[1:80, ], k = 2:3, seed = 1, max_iter = 30))
  built(ggplot2::autoplot(pr))
  set.seed(2)
  X <- matrix(runif(20 * 3), 20) %*% matrix(runif(3 * 15), 3)
  built(ggplot2::autoplot(suppressMessages(nmf_rank(X, k = 2:3, nrun = 2, seed = 1))))
  expect_error(ggplot2::autoplot(fit, foo = 1), class = "aspectr_error_input_argument")
})

test_that("plot() of a latent class fit draws every variable and restores the device", {
  lc <- lca(data.frame(lapply(iris[1:4], cut, 3)), 2, seed = 1)
  f <- tempfile(fileext = ".png")
  grDevices::png(f, 800, 600)
  on.exit(grDevices::dev.off())
  before <- graphics::par(c("mfrow", "mar", "oma", "cex"))
  expect_identical(plot(lc), lc)
  expect_identical(graphics::par(c("mfrow", "mar", "oma", "cex")), before)
})

test_that("autoplot() draws the NMF pictures plot() draws, with the same data", {
  skip_if_not_installed("ggplot2")
  set.seed(4)
  X <- matrix(rpois(30 * 12, 3), 30, 12, dimnames = list(paste0("g", 1:30), paste0("s", 1:12)))
  fit <- nmf(X, 3, seed = 1)
  ann <- data.frame(group = rep(c("a", "b"), 6), row.names = colnames(X))
  b <- ggplot2::ggplot_build(ggplot2::autoplot(fit, annotation = ann))
  md <- nmf_map(fit, "H", 40, ann)
  # the map's tiles: every component x column once, placed as in plot()
  tiles <- b$data[[1]]
  expect_identical(nrow(tiles), 36L)
  expect_equal(sort(unique(tiles$x)), 1:12)
  # the tracks' tiles (group and dominant factor) above the map
  tr <- b$data[[3]]
  expect_identical(nrow(tr), 24L)
  expect_true(all(tr$y > 3.5))
  expect_s3_class(ggplot2::autoplot(fit, type = "W", n = 10), "ggplot")
  expect_s3_class(ggplot2::autoplot(fit, type = "convergence"), "ggplot")
  expect_identical(ggplot2::ggplot_build(ggplot2::autoplot(fit, type = "clusters"))$data[[1]]$y,
                   as.numeric(tabulate(max.col(t(fit$H), ties.method = "first"), 3)))
  co <- nmf_rank(X, k = 2:3, method = "consensus", nrun = 3, seed = 1)
  bc <- ggplot2::ggplot_build(ggplot2::autoplot(co, type = "consensus", annotation = ann))
  # map tiles, colour layer, track tiles, dendrogram segments
  expect_identical(nrow(bc$data[[1]]), 144L)
  expect_identical(nrow(bc$data[[4]]), 3L * 11L)
  expect_error(ggplot2::autoplot(co, type = "consensus", k = 7), class = "aspectr_error_input_argument")
})
