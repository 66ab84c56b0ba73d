# pLSA topic analysis of 240 State of the Union addresses (1790-2020).
library(aspectr)
cat("Corpus:", nrow(sotu_dtm), "addresses x", ncol(sotu_dtm), "terms,",
    format(sum(sotu_dtm), big.mark = ","), "tokens\n\n")

fit <- plsa(sotu_dtm, k = 10, nrun = 3, seed = 2024, tol = 1e-7, max_iter = 2000)
print(summary(fit, n = 10))

# When was each topic in use? Mean topic share by half-century.
era <- cut(sotu_meta$year, breaks = c(1789, 1850, 1900, 1950, 2000, 2021),
           labels = c("1790-1850", "1851-1900", "1901-1950", "1951-2000", "2001-2020"))
share <- apply(topics(fit), 2, function(g) tapply(g, era, mean))
cat("\nMean topic share by era:\n")
print(round(share, 2))

# Fold in the most recent addresses as if they were new documents.
docs <- sotu_meta$doc_id[match(c(1862, 1941, 1990), sotu_meta$year)]
cat("\nTopic proportions of three addresses folded in as new documents:\n")
print(round(predict(fit, sotu_dtm[docs, ]), 2))

out <- file.path(getwd(), "aspectr-demo-topics.png")
grDevices::png(out, width = 1400, height = 1000, res = 110)
plot(fit, n = 8)
invisible(grDevices::dev.off())
cat("\nPlot of the top terms per topic written to", out, "\n")
