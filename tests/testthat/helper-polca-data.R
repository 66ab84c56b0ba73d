# Response-pattern counts of the `values` (N = 216) and `carcinoma` (N = 118)
# data sets of the poLCA package (GPL-2; Linzer and Lewis), expanded back to
# one row per observation. Used for poLCA's published log-likelihoods.
expand_patterns <- function(p) {
  d <- p[rep(seq_len(nrow(p)), p$n), setdiff(names(p), "n")]
  rownames(d) <- NULL
  d
}
polca_values_patterns <- structure(list(A = c(1, 1, 1, 1, 1, 1, 1, 1, 2, 2, 2, 2, 2, 2, 
2, 2), B = c(1, 1, 1, 1, 2, 2, 2, 2, 1, 1, 1, 1, 2, 2, 2, 2), 
    C = c(1, 1, 2, 2, 1, 1, 2, 2, 1, 1, 2, 2, 1, 1, 2, 2), D = c(1, 
    2, 1, 2, 1, 2, 1, 2, 1, 2, 1, 2, 1, 2, 1, 2), n = c(20L, 
    2L, 9L, 2L, 6L, 1L, 4L, 1L, 38L, 7L, 24L, 6L, 25L, 6L, 23L, 
    42L)), row.names = c(1L, 9L, 5L, 13L, 3L, 11L, 7L, 15L, 2L, 
10L, 6L, 14L, 4L, 12L, 8L, 16L), class = "data.frame")
polca_carcinoma_patterns <- structure(list(A = c(1, 1, 1, 1, 1, 1, 2, 2, 2, 2, 2, 2, 2, 2, 
2, 2, 2, 2, 2, 2), B = c(1, 1, 2, 2, 2, 2, 1, 1, 2, 2, 2, 2, 
2, 2, 2, 2, 2, 2, 2, 2), C = c(1, 1, 1, 1, 1, 1, 1, 2, 1, 1, 
1, 1, 1, 1, 1, 1, 2, 2, 2, 2), D = c(1, 1, 1, 1, 1, 1, 1, 1, 
1, 1, 1, 1, 1, 2, 2, 2, 1, 1, 2, 2), E = c(1, 2, 1, 1, 2, 2, 
1, 2, 1, 1, 2, 2, 2, 1, 2, 2, 2, 2, 2, 2), F = c(1, 1, 1, 1, 
1, 1, 1, 1, 1, 1, 1, 1, 2, 1, 1, 2, 1, 2, 1, 2), G = c(1, 1, 
1, 2, 1, 2, 1, 2, 1, 2, 1, 2, 2, 2, 2, 2, 2, 2, 2, 2), n = c(34L, 
2L, 6L, 1L, 4L, 5L, 2L, 1L, 2L, 1L, 2L, 7L, 1L, 1L, 2L, 3L, 13L, 
5L, 10L, 16L)), row.names = c(1L, 5L, 3L, 8L, 6L, 11L, 2L, 13L, 
4L, 9L, 7L, 12L, 17L, 10L, 15L, 19L, 14L, 18L, 16L, 20L), class = "data.frame")
