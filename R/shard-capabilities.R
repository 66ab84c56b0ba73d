# What each fitter runs on data in shards(): one table (family x loss x
# method), from which the fitters take their refusals and those write their
# messages. A method runs on shards when its rule is written against pieces
# of the data (rows of the first mode, each with its rows of the first
# factor); the others need every cell of a row of a shared mode at once.

shard_capabilities <- function() {
  cap <- function(family, loss, method, ok, why = NA_character_, option = NA_character_) {
    data.frame(family = family, loss = loss, method = method, option = option, ok = ok, why = why,
               stringsAsFactors = FALSE)
  }
  rbind(
    cap("nmf", "frobenius", c("hals", "anls", "mu", "als"), TRUE),
    cap("nmf", "kl", c("cd", "mu"), TRUE),
    cap("nmf", "beta", "mu", TRUE),
    # (coordinate descent of a matrix is nmf()'s rule, which runs on pieces;
    # of N-way data and with a prior, solvers/cd_pieces.h)
    cap("plsa", "kl", c("cd", "em", "squarem"), TRUE),
    cap("plsa", "tsallis", c("squarem", "em"), TRUE),
    # (missing cells, masks and weights: the weighted q-EM runs on pieces,
    # solvers/plsa_weighted_pieces.h, and its SQUAREM, pieces_squarem.h;
    # the weighted L2 block updates, solvers/plsa_weighted_l2_pieces.h)
    cap("plsa", "l2", "blocks", TRUE),
    cap("ntf", "kl", c("cd", "mu"), TRUE),
    cap("ntf", "frobenius", c("hals", "mu"), TRUE),
    # missing cells, masks and weights: nmf()'s weighted rule runs on pieces
    # (nmf/weighted.h; the beta divergence's, nmf/piece.h, with each piece's
    # weights), and ntf()'s KL coordinate descent and multiplicative
    # updates, Frobenius HALS and multiplicative updates
    # (solvers/cp_weighted_pieces.h)
    NULL
  )
}

# The methods of `family` (and `loss`) that run on shards, as text.
shard_runs <- function(family, loss = NULL) {
  tab <- shard_capabilities()
  tab <- tab[tab$family == family & tab$ok & is.na(tab$option), , drop = FALSE]
  losses <- if (is.null(loss)) unique(tab$loss) else intersect(loss, tab$loss)
  parts <- vapply(losses, function(l) {
    sprintf("{.code loss = \"%s\"} with {.code method = %s}", l,
            paste0("\"", tab$method[tab$loss == l], "\"", collapse = " or "))
  }, character(1))
  paste(parts, collapse = "; ")
}

# Refuses a fit of data in shards that the table does not allow: the loss
# and method asked for (method NULL: the default on shards, the first of
# `default`, the family's own order of methods, that runs on shards with
# `options`, else the first the table allows for the loss), with `options`
# (named flags of the fit: those TRUE are checked against the table's
# refusals of options: "prior" a prior or
# guided topics, "tensor" N-way data, "mask" missing cells, masks or
# weights; `option_args`, a named character vector, names the argument the
# user gave for an option when it is not the option's own name). Returns
# the method to run.
check_shard_capability <- function(family, loss, method, options = NULL, default = NULL,
                                   call = rlang::caller_env(), option_args = NULL) {
  tab <- shard_capabilities()
  tab <- tab[tab$family == family, , drop = FALSE]
  active <- names(options)[vapply(options, isTRUE, logical(1))]
  opts <- tab[!is.na(tab$option) & tab$option %in% active & tab$loss == loss, , drop = FALSE]
  refusal <- function(m) opts[opts$method %in% m, , drop = FALSE]
  row <- refusal(method)
  if (nrow(row)) {
    opt <- row$option[1]
    if (opt == "mask") {
      # (masks and weights: no method of the loss takes them on shards)
      a <- if (opt %in% names(option_args)) option_args[[opt]] else opt
      abort_input(paste0("{.arg ", a, "} cannot be used with {.code loss = \"{loss}\"}, {.code method = \"{method}\"} and data in {.fn shards}: ",
                         row$why[1], "."),
                  "argument", arg = a, call = call)
    }
    runs <- tab$method[is.na(tab$option) & tab$ok & tab$loss == loss]
    runs <- runs[vapply(runs, function(m) !nrow(refusal(m)), logical(1))]
    with_what <- switch(opt, prior = "with {.arg prior} or {.arg seeds} and data in {.fn shards}",
                        tensor = "with N-way data in {.fn shards}")
    abort_input(paste0("{.arg method} must be ", paste0("{.val ", runs, "}", collapse = " or "),
                       " for {.code loss = \"{loss}\"} ", with_what, ", not {.val {method}}: ", row$why[1], "."),
                "argument", arg = "method", call = call)
  }
  tab <- tab[is.na(tab$option), , drop = FALSE]
  if (!loss %in% tab$loss[tab$ok]) {
    why <- tab$why[tab$loss == loss][1]
    abort_input(paste0("{.arg loss} must be one that runs on data in {.fn shards} for {.fn ", family, "}, not {.val {loss}}",
                       if (!is.na(why)) ": {why}" else "", ". On shards {.fn ", family, "} runs ",
                       shard_runs(family), "."),
                "argument", arg = "loss", call = call)
  }
  runs <- tab$method[tab$loss == loss & tab$ok]
  if (is.null(method)) {
    free <- runs[vapply(runs, function(m) !nrow(refusal(m)), logical(1))]
    pref <- intersect(default, free)
    return(if (length(pref)) pref[1] else free[1])
  }
  if (!(is.character(method) && length(method) == 1 && !is.na(method) && method %in% runs)) {
    row <- tab[tab$loss == loss & !tab$ok & tab$method %in% method, , drop = FALSE]
    why <- if (nrow(row)) row$why[1] else NA_character_
    abort_input(paste0("{.arg method} must be ", paste0("{.val ", runs, "}", collapse = " or "),
                       " for {.code loss = \"{loss}\"} with data in {.fn shards}, not {describe(method)}",
                       if (!is.na(why)) ": {why}" else "", "."),
                "argument", arg = "method", call = call)
  }
  method
}
