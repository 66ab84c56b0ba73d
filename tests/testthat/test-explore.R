# explore(): one self-contained page; its data against the fit; the page
# driven in a real headless browser (chromium) when one is installed.

explore_fit <- function() plsa(sotu_dtm[1:120, ], 5, seed = 3, max_iter = 150)

relevance_order <- function(fit, z, lambda, n) {
  # (as the page holds them: 12 significant digits)
  phi <- signif(fit$factors[[2]][, z], 12)
  pw <- signif(as.numeric(fit$factors[[2]] %*% fit$lambda), 12)
  rel <- lambda * log(phi) + (1 - lambda) * log(phi / pw)
  rel <- round(rel * 1e9)
  rel[!(phi > 0)] <- -Inf
  rownames(fit$factors[[2]])[order(-rel, -phi, seq_along(phi))[seq_len(n)]]
}

page_data <- function(file) {
  html <- paste(readLines(file, warn = FALSE, encoding = "UTF-8"), collapse = "\n")
  json <- sub('(?s).*<script id="explore-data" type="application/json">(.*?)</script>.*', "\\1", html, perl = TRUE)
  jsonlite::fromJSON(gsub("<\\/", "</", json, fixed = TRUE), simplifyVector = FALSE)
}

test_that("explore() writes one self-contained page with the fit's own topics", {
  fit <- explore_fit()
  f <- tempfile(fileext = ".html")
  expect_identical(explore(fit, file = f, open = FALSE), f)
  html <- paste(readLines(f, warn = FALSE), collapse = "\n")
  # nothing fetched from the network: no external scripts, styles or images
  expect_false(grepl("<script[^>]+src=", html))
  expect_false(grepl("<link", html, fixed = TRUE))
  expect_false(grepl("<img", html, fixed = TRUE))
  expect_false(grepl("https://", html, fixed = TRUE))
  skip_if_not_installed("jsonlite")
  d <- page_data(f)
  expect_identical(unlist(d$topics), names(fit$lambda))
  expect_equal(unlist(d$size), unname(fit$lambda), tolerance = 1e-6)
  # the candidates hold each topic's relevance ranking for every lambda
  vocab <- unlist(d$vocab)
  for (z in 1:5) {
    cand <- unlist(d$candidates[[z]]) + 1
    phi <- unlist(d$phi[[z]])
    expect_equal(phi, unname(fit$factors[[2]][vocab[cand], z]), tolerance = 1e-6)
    for (lam in c(0, 0.6, 1)) {
      pw <- unlist(d$pw)[cand]
      rel <- round((lam * log(phi) + (1 - lam) * log(phi / pw)) * 1e9)
      expect_identical(vocab[cand][order(-rel, -phi, cand)][1:30], relevance_order(fit, z, lam, 30))
    }
  }
  expect_identical(relevance_order(fit, 2, 1, 10), unname(terms(fit, 10)[, 2]))
  # P(z | w) of the terms shown, and the top documents
  w <- "silver"
  i <- match(w, vocab)
  pzw <- fit$factors[[2]][w, ] * fit$lambda
  expect_equal(unlist(d$term_topics[[i]]), unname(pzw / sum(pzw)), tolerance = 1e-6)
  th <- topics(fit)
  top <- rownames(th)[order(th[, 3], decreasing = TRUE)[1:10]]
  expect_identical(vapply(d$docs[[3]], function(p) p[[1]], ""), top)
  # a KL NMF fit is shown in its pLSA form
  fn <- suppressMessages(nmf(sotu_dtm[1:120, ], 4, loss = "kl", seed = 1, max_iter = 50))
  f2 <- explore(fn, file = tempfile(fileext = ".html"), open = FALSE, n_docs = 0)
  d2 <- page_data(f2)
  expect_equal(unlist(d2$size), unname(as_plsa(fn)$lambda), tolerance = 1e-6)
  expect_null(d2$docs)
})

test_that("explore() refuses what it cannot show, classed", {
  fit <- explore_fit()
  expect_error(explore(), class = "aspectr_error_input_argument")
  expect_error(explore(suppressMessages(nmf(sotu_dtm[1:50, ], 2, max_iter = 5))), class = "aspectr_error_input_argument",
               regexp = "loss")
  lc <- data.frame(a = c(1, 2, 1, 2, 1, 2), b = c(1, 1, 2, 2, 1, 2))
  expect_error(explore(quiet_unidentified(lca(lc, 2, seed = 1))), class = "aspectr_error_input_argument")
  expect_error(explore(plsa(array(rpois(24, 3) + 1, c(2, 3, 4)), 2, seed = 1)), class = "aspectr_error_input_argument",
               regexp = "3-way")
  expect_error(explore(fit, n_terms = 0, open = FALSE), class = "aspectr_error_input_argument")
  expect_error(explore(fit, lambda = 2, open = FALSE), class = "aspectr_error_input_argument")
  expect_error(explore(fit, file = tempdir(), open = FALSE), class = "aspectr_error_input_value")
  expect_error(explore(fit, file = 1, open = FALSE), class = "aspectr_error_input_type")
})

# The page's self-test (#selftest) run in headless chromium: its result,
# or a skip when no browser is installed.
browser_selftest <- function(f) {
  skip_on_cran()
  skip_if_not_installed("jsonlite")
  browser <- Sys.which(c("chromium", "chromium-browser", "google-chrome"))
  browser <- browser[nzchar(browser)][1]
  skip_if(is.na(browser), "no chromium installed")
  url <- paste0("file://", normalizePath(f), "#selftest")
  args <- c("--headless", "--no-sandbox", "--disable-gpu", "--virtual-time-budget=5000", "--dump-dom", url)
  timeout <- Sys.which("timeout")
  # (the browser is not ours to instrument: a sanitizer runtime preloaded
  # into R, tools/sanitize.sh, is not passed on to it)
  env <- "LD_PRELOAD="
  out <- if (nzchar(timeout)) system2(timeout, c("90", browser, args), stdout = TRUE, stderr = FALSE, env = env) else
    system2(browser, args, stdout = TRUE, stderr = FALSE, env = env)
  dom <- paste(out, collapse = "\n")
  res <- regmatches(dom, regexpr('(?s)<pre id="selftest-result"[^>]*>.*?</pre>', dom, perl = TRUE))
  expect_length(res, 1)
  json <- sub('(?s)<pre id="selftest-result"[^>]*>(.*?)</pre>', "\\1", res, perl = TRUE)
  json <- gsub("&quot;", "\"", gsub("&amp;", "&", gsub("&lt;", "<", gsub("&gt;", ">", json, fixed = TRUE), fixed = TRUE), fixed = TRUE), fixed = TRUE)
  jsonlite::fromJSON(json)
}

test_that("the page works in a headless browser: topics click, the slider re-ranks, terms show their topics", {
  fit <- explore_fit()
  f <- explore(fit, file = tempfile(fileext = ".html"), open = FALSE)
  r <- browser_selftest(f)
  # no error in the page's console
  expect_length(r$errors, 0)
  expect_identical(r$circles, 5L)
  # clicking topic 2's circle selects it (the fit's own number and name)
  expect_identical(r$selected, "1")
  expect_match(r$title, "topic_2", fixed = TRUE)
  expect_identical(r$lambda1, relevance_order(fit, 2, 0.6, 30))
  # the slider at 0 re-ranks by lift
  expect_identical(r$lambda_shown, "0.00")
  expect_identical(r$lambda0, relevance_order(fit, 2, 0, 30))
  expect_false(identical(r$lambda0, r$lambda1))
  # clicking a term lists P(topic | term)
  w <- r$clicked_term
  pzw <- fit$factors[[2]][w, ] * fit$lambda
  pzw <- pzw / sum(pzw)
  shown <- pzw[pzw >= 0.005]
  expect_identical(r$term_topics[, 1], names(shown))
  expect_equal(as.numeric(r$term_topics[, 2]), round(unname(shown), 3), tolerance = 1e-9)
  th <- topics(fit)
  expect_identical(r$docs, rownames(th)[order(th[, 2], decreasing = TRUE)[1:10]])
})

test_that("the map: circle areas by topic share, topic numbers readable where topics coincide", {
  fit <- explore_fit()
  # topics 2 and 4 made identical to topic 1: three circles on one spot
  phi <- fit$factors[[2]]
  phi[, 2] <- phi[, 4] <- phi[, 1]
  fit$factors[[2]] <- phi
  f <- explore(fit, file = tempfile(fileext = ".html"), open = FALSE)
  r <- browser_selftest(f)
  expect_length(r$errors, 0)
  # areas proportional to the shares P(z) (radius^2 / share the same for all)
  expect_equal(r$radii^2 / unname(fit$lambda), rep(r$radii[1]^2 / fit$lambda[[1]], 5), tolerance = 1e-6)
  # one label per topic, the fit's numbers, no two label boxes overlapping
  lab <- r$labels
  expect_setequal(lab[, 1], as.character(1:5))
  box <- matrix(as.numeric(lab[, 2:5]), ncol = 4)
  overlap <- outer(seq_len(5), seq_len(5), Vectorize(function(a, b) {
    a < b && box[a, 1] < box[b, 1] + box[b, 3] - 0.5 && box[b, 1] < box[a, 1] + box[a, 3] - 0.5 &&
      box[a, 2] < box[b, 2] + box[b, 4] - 0.5 && box[b, 2] < box[a, 2] + box[a, 4] - 0.5
  }))
  expect_false(any(overlap))
  # the labels moved off their circles' common centre are tied to it
  expect_gte(r$leaders, 2)
})
