#' aspectr: probabilistic and non-negative factorizations
#'
#' Probabilistic and non-negative factorizations of matrices and N-way
#' tensors for topic analysis and clustering, with a C++ core that touches
#' only the non-zero entries of sparse data and runs in parallel.
#'
#' @section Families:
#' * [plsa()]: the aspect model (pLSA) of count matrices and tensors under
#'   the KL divergence (EM, tempered EM; Hofmann 1999), the Tsallis
#'   divergence (q-EM; Hazan, Haroon and Shashua) and the L2 loss (Hazan
#'   and Shashua 2007); [perplexity()], [plsa_rank()], [topic_quality()],
#'   [as_ldavis_json()], fold-in with [predict()][predict.aspectr_plsa()].
#' * [nmf()]: classic NMF under the Frobenius, generalized KL and beta
#'   divergences (HALS, ANLS, ALS, multiplicative updates, coordinate
#'   descent); [nmf_rank()], [as_plsa()].
#' * [ntf()]: non-negative CP decomposition of N-way tensors.
#' * [lca()]: latent class analysis (with a formula interface and latent
#'   class regression), [lca_rank()], [lca_supervised()], [lca_reorder()].
#' * [sntf()] and [symnmf()]: super-symmetric tensor factorization and
#'   symmetric NMF for multi-way and graph clustering; [multiway_cluster()],
#'   [hypergraph_affinity()].
#'
#' Every family shares one fit object, the generics `print`, `summary`,
#' `plot`, `predict`, `fitted`, `residuals`, `tidy`, `glance`, `augment`,
#' `nobs` (and `logLik` where the loss is a likelihood), and the arguments
#' `init`, `nrun`, `short_iter`/`short_keep`, `callback`, `verbose`,
#' `seed`, `threads`, `max_iter`, `tol`. Text data come in as any sparse
#' matrix, a tm or quanteda matrix, or long data through [as_dtm()].
#'
#' @keywords internal
#' @useDynLib aspectr, .registration = TRUE
#' @importFrom Rcpp sourceCpp
#' @importFrom stats predict fitted logLik nobs terms AIC BIC
#' @importFrom generics tidy glance
#' @importFrom Matrix sparseMatrix
#' @importFrom rlang caller_env .data
#' @importFrom grDevices hcl.colors
"_PACKAGE"
