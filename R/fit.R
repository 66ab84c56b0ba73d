# The one result constructor of the fit contract, used by every family's
# fitter. `fields` is the family's list of fields (its own, in its order);
# the contract's core fields are set on it: `family`, `factors` (a named
# list of matrices, one row per index and one column per component),
# `weights` (the components' weights), `params` (the loss and method
# parameters), and `stopped` (whether a callback stopped the fit). Fields the
# list already has keep their place. The class is `aspectr_<family>`, then
# `aspectr_<inherit>` for each family it extends, then `aspectr_fit`.
new_aspectr_fit <- function(family, fields, factors, weights, params, inherit = character()) {
  fit <- unclass(fields)  # (assignments without S3 dispatch)
  fit$family <- family
  fit$factors <- factors
  fit$weights <- weights
  fit$params <- params
  fit$stopped <- isTRUE(fit$stopped)
  class(fit) <- c(paste0("aspectr_", c(family, inherit)), "aspectr_fit")
  fit
}
