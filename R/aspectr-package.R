#' aspectr: probabilistic and non-negative factorizations
#'
#' Fits the aspect model (pLSA) to sparse count matrices under the
#' Kullback-Leibler divergence (EM, tempered EM), the Tsallis divergence
#' (q-EM) and the L2 loss (simplex-projection block updates), with a C++ core
#' that only touches the non-zero entries of the data. Start with [plsa()].
#'
#' @keywords internal
#' @useDynLib aspectr, .registration = TRUE
#' @importFrom Rcpp sourceCpp
#' @importFrom stats predict fitted logLik nobs terms AIC BIC
#' @importFrom generics tidy glance
#' @importFrom Matrix sparseMatrix
#' @importFrom rlang caller_env
#' @importFrom grDevices hcl.colors
"_PACKAGE"
