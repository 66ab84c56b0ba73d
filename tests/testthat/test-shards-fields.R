# Same call, same fit: every field of a fit of shards() equals the fit of
# the matrix or array in memory (not only the factors and the trace), for
# each family, with and without masks and weights. (Fields a fit of shards
# had otherwise: the weighted nmf()'s nnz of x rather than of the weighted
# data, the weighted pLSA's entropy and documents' totals of every cell
# rather than of those counted, the weighted N-way fits' dimnames, the
# N-way weighted KL pLSA's count_data, entropy and documents' totals.)

fields_cases <- function() {
  set.seed(2)
  x <- matrix(rpois(30 * 12, 3), 30, 12)
  a <- array(rpois(10 * 6 * 4, 2), c(10, 6, 4))
  M <- matrix(runif(length(x)) < 0.1, 30, 12)
  W <- matrix(runif(length(x), 0.5, 2), 30, 12)
  Ma <- array(runif(length(a)) < 0.1, dim(a))
  mat <- list(
    plsa_kl = list(plsa, list(k = 3)), plsa_em = list(plsa, list(k = 3, method = "em")),
    plsa_tsallis = list(plsa, list(k = 3, loss = "tsallis")), plsa_l2 = list(plsa, list(k = 3, loss = "l2")),
    plsa_prior = list(plsa, list(k = 3, prior = 0.5)), plsa_k1 = list(plsa, list(k = 1)),
    plsa_kl_weights = list(plsa, list(k = 3, weights = W)),
    plsa_tsallis_mask = list(plsa, list(k = 3, loss = "tsallis", mask = M)),
    plsa_l2_mask = list(plsa, list(k = 3, loss = "l2", mask = M)),
    nmf_frobenius = list(nmf, list(k = 3)), nmf_kl = list(nmf, list(k = 3, loss = "kl")),
    nmf_beta = list(nmf, list(k = 3, loss = "beta", beta = 0.5)),
    nmf_frobenius_mask = list(nmf, list(k = 3, mask = M)),
    nmf_kl_weights = list(nmf, list(k = 3, loss = "kl", weights = W)),
    nmf_beta_mask = list(nmf, list(k = 3, loss = "beta", beta = 0.5, mask = M)))
  arr <- list(
    ntf_frobenius = list(ntf, list(k = 2)), ntf_kl = list(ntf, list(k = 2, loss = "kl")),
    ntf_frobenius_mask = list(ntf, list(k = 2, mask = Ma)), ntf_kl_mask = list(ntf, list(k = 2, loss = "kl", mask = Ma)),
    plsa_nway = list(plsa, list(k = 2)), plsa_nway_tsallis_mask = list(plsa, list(k = 2, loss = "tsallis", mask = Ma)),
    plsa_nway_kl_mask = list(plsa, list(k = 2, mask = Ma)))
  c(lapply(mat, function(cs) c(cs, list(x = x, s = shards(list(x[1:10, ], x[11:30, ]))))),
    lapply(arr, function(cs) c(cs, list(x = a, s = shards(list(a[1:4, , ], a[5:10, , ]))))))
}

test_that("every field of a fit of shards() equals the in-memory fit's", {
  cases <- fields_cases()
  skip_fields <- c("time", "call", "shards", "threads")
  for (nm in names(cases)) {
    cs <- cases[[nm]]
    fit <- function(d) suppressMessages(suppressWarnings(do.call(cs[[1]], c(list(d), cs[[2]],
                                                                          list(seed = 1, max_iter = 30)))))
    m <- fit(cs$x)
    s <- fit(cs$s)
    fm <- setdiff(names(unclass(m)), skip_fields)
    fs <- setdiff(names(unclass(s)), skip_fields)
    expect_setequal(fs, fm)
    for (f in intersect(fm, fs)) {
      expect_equal(s[[f]], m[[f]], tolerance = 1e-8, label = paste(nm, f))
    }
  }
})
