#' Non-negative matrix factorization
#'
#' Factorizes a non-negative matrix \eqn{X \approx W H} with \eqn{W \ge 0}
#' (m x k) and \eqn{H \ge 0} (k x n), as in Gemulla and Miettinen's lecture
#' (2013).
#'
#' * `loss = "frobenius"`: \eqn{\frac12\|X - WH\|_F^2}, by HALS
#'   (`method = "hals"`, exact column-wise updates), ANLS (`"anls"`: every
#'   row of W and column of H solved exactly as a non-negative least-squares
#'   problem by coordinate descent), Lee-Seung multiplicative updates
#'   (`"mu"`, with the epsilon guards of Gemulla and Miettinen 2013) or
#'   projected ALS (`"als"`: each factor by unconstrained least squares
#'   through the pseudo-inverse, then its negative entries set to zero;
#'   Berry et al. 2007). Projected ALS is a heuristic: the projection is not
#'   the constrained minimizer, so its objective can rise between iterations
#'   and it need not converge; it is offered for comparison and as the
#'   textbook first step, and ANLS solves the same subproblems exactly.
#' * `loss = "kl"`: the generalized KL divergence
#'   \eqn{\sum x \log(x / v) - x + v}, \eqn{v = (WH)}, by cyclic coordinate
#'   descent (`method = "cd"`, the default; Hsieh and Dhillon 2011) or by the
#'   multiplicative updates of Gemulla and Miettinen (2013) (`"mu"`). Both evaluate ratios at the
#'   non-zeros of `x` only. Coordinate descent gives every entry of H, then
#'   of W, a projected Newton step on its one-variable problem, halved when
#'   a bound on the third derivative cannot guarantee a decrease; a step
#'   costs about one pass over the non-zeros of its column, and far fewer
#'   iterations are needed than with multiplicative updates.
#' * `loss = "beta"`: the beta divergence (`beta = 2` Frobenius, `1` KL,
#'   `0` Itakura-Saito) by the multiplicative updates of Fevotte and Idier
#'   with their monotonicity exponent. `beta = 1` and `2` use the sparse KL
#'   and Frobenius updates; other values need the dense model and refuse
#'   more than `getOption("aspectr.max_cells", 1e8)` cells; under
#'   `beta <= 0` zeros of `x` are replaced by `eps` (see below).
#'
#' With `accelerate = TRUE` (the default without penalties) HALS and ANLS
#' use the extrapolation
#' of Ang and Gillis (2019, "HER"): each factor is updated with the other
#' one extrapolated along its last move, \eqn{Y = X_{new} + \beta (X_{new}
#' - X_{prev})}, and \eqn{\beta} adapts (grows slowly while the objective
#' decreases, shrinks and the step is discarded when it does not). The
#' extrapolated points are projected onto the non-negative orthant (their
#' products with `x` corrected exactly), a component that the extrapolation
#' would push past zero is not extrapolated, and a step that would make a
#' component vanish is replaced by the plain step; candidates are accepted
#' by their full penalized objective. The fit
#' returned is the best non-extrapolated pair and the objective trace is its
#' objective (flat after a discarded step), so the trace still never
#' increases. A step costs about as much as a plain one and fewer are needed
#' to reach a given error. `accelerate = TRUE` given explicitly also
#' extrapolates the KL multiplicative updates the same way (the extrapolated
#' points clipped to stay strictly positive; a step costs one more pass over
#' the non-zeros for the objective). That is off by default: it is faster
#' from a random start on dense data but slower on sparse document-term
#' matrices such as AssociatedPress.
#'
#' Penalties add `L1[1] * sum(W) + L1[2] * sum(H) + L2[1]/2 * ||W||^2 +
#' L2[2]/2 * ||H||^2` to the objective. Every algorithm never increases its
#' objective (beyond rounding: its safeguards treat values within a
#' relative 1e-13 as equal, so that a matrix and its [shards()] take the
#' same steps).
#'
#' The fit runs on `x / max(x)` and the results are scaled back: squared
#' norms cannot
#' overflow, the fit of `c * x` is that of `x` with `W H` scaled by `c` for
#' any `c` from 1e-300 to 1e300, and penalties are rescaled so that the
#' problem solved is the one stated above. `eps` is therefore relative to
#' `max(x)`. An objective beyond the range of doubles (the squared error of
#' data near 1e200) is reported as `Inf` (or 0 when it underflows) with a
#' warning of class `aspectr_warning_numeric`, as is an initial objective,
#' a trace entry or another start's value beyond it when the final value
#' is within (a start far from an exact fit); `W`, `H` and `rel_error`
#' stay finite. With `beta <= 0` the divergence is infinite at zeros of `x`, so
#' those zeros are replaced by `eps` (relative to `max(x)`, as above) and the
#' divergence reported is that of the guarded data. A fit whose model
#' vanishes (`W H = 0` on non-zero `x`, a saddle point of every algorithm) is
#' never reported as converged unless the penalties make it a local minimum
#' (an `L1` penalty on one factor with an `L1` or `L2` penalty on the other,
#' or `sqrt(L2[1] * L2[2])` at least the Frobenius norm of `x`), and it
#' raises a warning of class `aspectr_warning_numeric`. When penalties
#' set a penalized factor to zero (large enough to zero `W` or `H`, such as
#' `L1 = 1e300`; the multiplicative updates and KL coordinate descent leave
#' its entries so small that the model `W H` is at most 1e-12 of `max(x)`
#' everywhere), the fit warns with class `aspectr_warning_zero_factor`
#' instead, whether or not the zero model is a local minimum (also of
#' class `aspectr_warning_numeric` when it is not): the warning names the
#' factor and its penalties, to be taken smaller, and its field `zeroed`
#' holds `"W"`, `"H"` or both.
#'
#' @param x A non-negative matrix: base `matrix`, any `Matrix` matrix (sparse
#'   stays sparse), `slam::simple_triplet_matrix`, `quanteda::dfm`, 2-way
#'   `table`; or a matrix split by rows with [shards()] (see Sharded data).
#' @param k Rank, between 1 and `min(dim(x))`.
#' @param loss `"frobenius"` (default), `"kl"` or `"beta"`.
#' @param beta The beta of `loss = "beta"`. With another loss a `beta`
#'   other than that loss's own (2 for `"frobenius"`, 1 for `"kl"`) has no
#'   effect and raises a warning of class `aspectr_warning_unused_argument`.
#' @param method Frobenius: `"hals"` (default), `"anls"`, `"mu"` or `"als"`; KL:
#'   `"cd"` (default) or `"mu"`; beta: `"mu"`. A method that does not fit
#'   the loss is an error.
#' @param init `"nndsvd"` (default), `"nndsvda"` (zeros filled with the mean
#'   of `x`), `"nndsvdar"` (zeros filled with small random values) or
#'   `"random"` (Boutsidis and Gallopoulos 2008); or a list with starting
#'   `W` and/or `H` (the other drawn at random); or an earlier `nmf()` fit of
#'   the same data shape and k, to continue from its factors (a warm start).
#'   When `init` is not given and
#'   the method is `"mu"` or the loss is KL, `"nndsvda"` is used: zeros of
#'   NNDSVD would stay zero under multiplicative updates, and a zero model
#'   value at a non-zero of `x` has an infinite KL divergence.
#' @param nrun Number of starts (each with its own random numbers); the best
#'   objective is kept (the first of those equal to 10 significant
#'   digits). Runs go through \pkg{future.apply} under a parallel
#'   [future][future::plan] plan.
#' @param L1,L2 Penalties on `W` and `H`: numbers (both) or length-2 vectors.
#' @param max_iter,tol Iteration limit and tolerance on the relative change
#'   of the objective.
#' @param eps The epsilon guard of the multiplicative updates.
#' @param accelerate `NULL` (default), `TRUE` or `FALSE`: extrapolated
#'   updates (Ang and Gillis 2019). `NULL` means `TRUE` for `method = "hals"`
#'   or `"anls"` without penalties, and `FALSE` under `L1`/`L2` penalties (from
#'   some starts the extrapolated fit then ends at a worse point than the
#'   plain one) and for `loss = "kl"`; `TRUE` extrapolates HALS,
#'   ANLS and the KL multiplicative updates and is ignored by KL coordinate
#'   descent and the Frobenius and beta multiplicative updates. `FALSE` gives the plain alternating
#'   updates (HALS updates H, then W; ANLS W, then H).
#' @param cluster For data split into [shards()]: `NULL` (default) fits in
#'   this process (shards in files are read in every iteration), or a
#'   cluster from [shard_cluster()] (PSOCK, on this machine or on several
#'   hosts by name, without TCP's delay of short messages),
#'   [parallel::makeCluster()] (PSOCK or FORK) or [mirai::make_cluster()]. Each worker
#'   reads its share of the shards once and keeps them, with their rows of
#'   `W`; per iteration only `H` goes out and the k x n and k x k sums
#'   \eqn{W'X} and \eqn{W'W} come back (HALS adds one short exchange per
#'   sweep of `W`; KL coordinate descent one per coordinate of `H`, see
#'   Sharded data). The workers need \pkg{aspectr} installed.
#' @param assay For an `ExpressionSet`, `SummarizedExperiment`,
#'   `SingleCellExperiment` or `Seurat` object `x`: the matrix to fit (see
#'   [as_aspect_data()]; default its `"exprs"`, its `"counts"` assay, or the
#'   Seurat default assay's counts). `nmf()` fits it as it is stored,
#'   features x samples, as the NMF package does (the features in the rows
#'   of `W`, the samples in the columns of `H`), says so in a message, and
#'   keeps the samples' annotations in the fit's `annotation` for the
#'   heatmaps of [plot()][plot.aspectr_nmf()]. `NULL` for other data.
#' @param mask Cells left out of the loss (missing or held out): a logical
#'   matrix of the dimensions of `x` (base, or a dense or sparse `Matrix`),
#'   `TRUE` where a cell is left out. `NA` cells of `x` are left out too, without
#'   a mask. For sparse `x` the cells not stored are observed zeros unless
#'   the mask (or `observed`) says otherwise. See "Missing values and weights".
#' @param observed For data where only some cells were observed (ratings,
#'   counts of a sample of cells): a logical matrix like `mask` whose `TRUE`
#'   cells are the only ones that count; every other cell, a zero of sparse
#'   `x` included, is treated as missing. `mask` then leaves out some of them.
#' @param weights Non-negative weights per cell: a numeric matrix of the
#'   dimensions of `x`, or a sparse `Matrix`, whose unlisted cells then weigh
#'   0 (only its cells count). Weight 0 is a missing cell.
#' @param row_weights,col_weights Non-negative weights per row and per column
#'   of `x` (vectors); a cell weighs the product of its row's, its column's
#'   and its own weight. Whole-number row weights give the fit of `x` with
#'   each row repeated that many times.
#' @inheritParams plsa
#'
#' @section Missing values and weights:
#' With `NA` in `x`, `mask`, `observed` or weights the loss sums over the
#' cells with their weights \eqn{\omega_{ij}}:
#' \eqn{\frac12\sum \omega (x - v)^2} or
#' \eqn{\sum \omega (x \log(x/v) - x + v)}, \eqn{v = (WH)_{ij}}; a left-out
#' cell has weight 0 and plays no part in the fit. The updates use the
#' weighted sufficient statistics (no imputation inside the loop, as in the
#' weighted updates of Ho (2008) and the masked coordinate descent of Lin
#' and Boutros (2020)): the products with the weighted data
#' \eqn{\omega \circ x} as in the unweighted fit (a pass over the non-zeros),
#' and for each row of `W` and column of `H` its own Gram matrix (Frobenius)
#' or linear term (KL) from the weights, applied through the model's values
#' at the left-out or reweighted cells: \eqn{k} operations per such cell on
#' top of the unweighted step (\eqn{k^2} for `"anls"`, which solves with the
#' Gram matrix itself), so a fit of the observed cells of sparse data costs
#' \eqn{O(\mathrm{cells} \times k)} per iteration. Each row
#' of `W` (column of `H`) then gets the unweighted method's update with its
#' own Gram matrix: one sweep of exact coordinate updates (`"hals"`), the
#' exact non-negative least-squares solution (`"anls"`), the multiplicative
#' update (`"mu"`), or KL coordinate descent and multiplicative updates with
#' their linear terms; under `loss = "beta"` the multiplicative updates
#' with every cell's terms weighted (dense data). Every method keeps its
#' objective from rising. The extrapolation (`accelerate`) and
#' `method = "als"` are not available with weights.
#'
#' With [shards()] (in memory, in files or on a cluster) the same arguments
#' give the in-memory fit (tested to 1e-10) for `loss = "frobenius"`,
#' `"kl"` and `"beta"`: `mask`, `observed` and `weights` are matrices of the whole data
#' (sparse ones need no memory of its size), each shard receives its rows'
#' part and weighs its own cells, the rows of `W` are solved where they are,
#' and each column of `H` from the added parts of its Gram matrix or linear
#' term (\eqn{k^2} numbers per column with left-out cells under Frobenius).
#' Out of core, each shard's weighted cells are written once to a temporary
#' `.shard` file (one shard in memory at a time; removed when the fit ends)
#' and read from it a chunk at a time, as unweighted shards are. Under
#' `loss = "beta"` each shard reads its own cells, as without weights, and
#' weighs each cell's terms of the updates. One exception: when a row's
#' observed cells do not determine all of its `k` coefficients (its Gram
#' matrix is singular, say where the other factor is 0 at those cells),
#' `"anls"` has many exact solutions, and which one it returns can depend on
#' the rounding of the sums, so storage types (dense, sparse, shards) may
#' give different fits of equal objective at that step, which then part;
#' `"hals"` and the KL methods take one determined step.
#'
#' [fitted()] then gives the model's values on every cell, those of the
#' left-out cells included (an imputation), and [augment()] marks which
#' cells were observed. [nmf_rank()] with `method = "mask"` chooses the rank
#' by leaving out random cells and measuring the error of their imputation.
#' The relative error (`rel_error`) and `divergence` are those of the
#' weighted loss.
#'
#' @section Memory:
#' A `dgCMatrix` is read in place: its values are not copied (the fit's
#' scaling is applied as they are read). By default a copy of its transpose
#' (12 bytes per non-zero) is added, which speeds up the products
#' \eqn{XH'} of HALS, ANLS and the multiplicative updates by about 1.6
#' times and is needed by `loss = "kl"` (whose updates of `W` read the rows
#' of `x`). Without it, the Frobenius fits need about the matrix's own size
#' again or less (the factors and the extrapolation's state) and are 10 to 20
#' percent slower per iteration; with several threads, each thread beyond the
#' first sums \eqn{XH'} into a matrix of the size of `W`, and no more
#' threads take part than fit in the memory of the copy or of four such
#' matrices, whichever is larger. The copy is left out when it would exceed
#' `getOption("aspectr.transpose_limit", 2^30)` bytes: set
#' `options(aspectr.transpose_limit = 0)` to leave it out always, `Inf` to
#' keep it always. Either way the fit is the same up to rounding.
#'
#' @section Sharded data:
#' `x` may be a matrix split by rows with [shards()], in memory, in files or
#' on the workers of `cluster`. The rows of `W` are updated shard by shard
#' and `H` from the sums of all shards, in the order of the in-memory
#' algorithm, so the same call gives the in-memory fit from the same start
#' up to rounding (tested to 1e-10), with the same defaults. This holds for
#' `loss = "frobenius"` with `method = "hals"`, `"anls"` (both extrapolated
#' by default, as in memory: the projections of the extrapolated factors are
#' decided from sums over all shards), `"mu"` or `"als"`, and for
#' `loss = "kl"` with `method = "cd"` or `"mu"` (extrapolated with
#' `accelerate = TRUE`, as in memory), and for `loss = "beta"` (any
#' `beta`, with `L1` penalties, zeros raised to `eps` when `beta <= 0` as in
#' memory). The Frobenius rules, the KL and the beta-divergence
#' multiplicative updates, extrapolated or not, are the very code that fits
#' a matrix in memory, run on each shard where it is. The beta-divergence
#' updates raise the model to powers at every cell, zeros included: each
#' shard's rows are made a dense block (rows x columns of `x`, refused above
#' `getOption("aspectr.max_cells", 1e8)` cells) for each of the two passes of
#' an iteration, and each block's step is checked against the objective
#' summed over all shards, as in memory. KL coordinate descent solves the columns of `H` on the master
#' in passes over the shards: each Newton step needs the sums of a whole
#' column, and the columns advance together, so an iteration takes k + 1
#' passes, and more when a step of some column is halved. Each pass moves
#' three numbers per column of `H` from every worker. A shard kept in memory
#' or on a worker keeps \eqn{WH} at its non-zeros between passes. Out of
#' core in this process (files, no cluster, no `factor_dir`), the columns
#' of `H` are solved whole, as in memory, from a copy of the files by
#' blocks of columns made once and reused by later fits (see [shards()],
#' "Files"): one pass over the data, each block read a chunk at a time
#' (12 bytes per non-zero of a block of at most the largest shard's
#' cells). With `factor_dir` (`W` in files), or where no copy can be made,
#' each pass reads the `.shard` files a chunk at a time and
#' computes \eqn{WH} at each cell again (k times the arithmetic). The
#' update of `W` gathers each file's rows (12 bytes per non-zero of one
#' shard at a time, read in two passes a chunk at a time); other files are
#' read whole for every pass. The multiplicative updates pass over the data once per
#' iteration.
#' Every start works as in memory, with the same default: NNDSVD's
#' singular vectors come from the shards read one at a time on the master
#' (the exact SVD of small data, otherwise the randomized range finder's
#' six passes over the shards), and a random start is drawn where the
#' shards are. With the same `init` and seed the fit is the in-memory fit. Out of core, `.shard` files are read a chunk
#' of cells at a time (see [shards()], "Memory out of core"). `W` is
#' gathered at the end. A failing shard or
#' worker ends the fit with an error of class `aspectr_error_shard` (naming
#' the shard) or `aspectr_error_cluster`.
#'
#' @section Using aspectr with the NMF package:
#' The NMF package (Gaujoux and Seoighe 2010) also exports `nmf()` and
#' `basis()`; R calls the function of the package attached last. Both
#' packages' calls keep working in either order:
#' * `nmf(X, 3)` with a base matrix (or an `ExpressionSet`) and no other
#'   argument could be either package's call: it is the package attached
#'   last's. After `library(aspectr); library(NMF)` it is NMF's and returns
#'   an NMF fit; after `library(NMF); library(aspectr)` it is aspectr's.
#'   Write `aspectr::nmf()` or `NMF::nmf()` to choose regardless of order.
#' * With NMF attached last, `nmf()` calls with an argument only aspectr
#'   has (`k =`, `loss =`, `init =`, `L1 =`, `max_iter =`, `threads =`, ...),
#'   with one of aspectr's losses or methods where NMF's algorithm goes
#'   (`nmf(X, 3, method = "anls")`), or with data NMF does not take (sparse
#'   `Matrix` matrices, slam and tm matrices, [shards()], tensors,
#'   `SummarizedExperiment` objects) are handed to aspectr's `nmf()`; bad
#'   arguments then raise aspectr's classed errors. Everything else is
#'   NMF's, as before.
#' * With aspectr attached last (and NMF loaded), `nmf()` hands to NMF the
#'   calls only NMF can mean: one of NMF's algorithms as the third argument
#'   or `method` (`nmf(X, 3, "brunet")`, `method = "lee"`), several ranks
#'   (`nmf(X, 2:6)`), a seeding method or NMF model as `seed`, a formula,
#'   an NMF model as `x` or `k`, or an argument only NMF has (`rank =`,
#'   `model =`, `rng =`, `.options =`, `.pbackend =`, `.callback =`).
#' * `basis()` and `coef()` return \eqn{W} and \eqn{H} of both packages'
#'   fits in either order; NMF's `nbasis()`, `coefmap()` and `basismap()`
#'   accept aspectr's fits, and its `consensusmap()` a consensus
#'   [nmf_rank()] (with a container's sample annotations as tracks).
#'
#' @return An object of class `c("aspectr_nmf", "aspectr_fit")`: `W`, `H`
#'   (with dimnames), `loss`, `beta`, `method`, `accelerate` (whether the
#'   extrapolation was used), `init`, `objective` (after
#'   each iteration), `rel_error` (relative Frobenius error after each
#'   iteration for unpenalized Frobenius fits, otherwise of the final model),
#'   `value`, `iterations`, `converged`, `run`, `run_values`, `time`, `call`,
#'   `annotation` (the samples' annotations of a container, a data frame
#'   with a row per column of `x`, or `NULL`)
#'   (and `shards`, their number, for sharded data).
#' @references Gaujoux, R. and Seoighe, C. (2010). A flexible R package
#'   for nonnegative matrix factorization. *BMC Bioinformatics* 11, 367.
#'
#'   Hsieh, C.-J. and Dhillon, I. S. (2011). Fast coordinate
#'   descent methods with variable selection for non-negative matrix
#'   factorization. *Proceedings of the 17th ACM SIGKDD*, 1064-1072.
#'
#'   Ang, A. M. S. and Gillis, N. (2019). Accelerating nonnegative
#'   matrix factorization algorithms using extrapolation. *Neural
#'   Computation* 31(2), 417-439.
#'
#'   Berry, M. W., Browne, M., Langville, A. N., Pauca, V. P. and Plemmons,
#'   R. J. (2007). Algorithms and applications for approximate nonnegative
#'   matrix factorization. *Computational Statistics & Data Analysis* 52(1),
#'   155-173.
#'
#'   Gemulla, R. and Miettinen, P. (2013). Non-negative matrix
#'   factorization. Lecture notes, Max Planck Institute for Informatics.
#'
#'   Ho, N.-D. (2008). *Nonnegative matrix factorization algorithms and
#'   applications*. PhD thesis, Universite catholique de Louvain.
#'
#'   Lin, X. and Boutros, P. C. (2020). Optimization and expansion of
#'   non-negative matrix factorization. *BMC Bioinformatics* 21, 7.
#' @seealso [predict.aspectr_nmf()], [as_plsa()], [nmf_rank()].
#' @examples
#' fit <- nmf(sotu_dtm, 5, seed = 1, max_iter = 100)
#' fit
#' head(basis(fit))
#' fit_kl <- nmf(sotu_dtm, 5, loss = "kl", seed = 1, max_iter = 100)
#' as_plsa(fit_kl)
#' @export
nmf <- function(x, k, loss = c("frobenius", "kl", "beta"), beta = 2,
                method = c("hals", "anls", "mu", "cd", "als"),
                init = c("nndsvd", "nndsvda", "nndsvdar", "random"), nrun = 1,
                short_iter = 0, short_keep = NULL,
                L1 = c(0, 0), L2 = c(0, 0), max_iter = 1000, tol = 1e-6, eps = 1e-16,
                accelerate = NULL, seed = NULL, threads = NULL, verbose = FALSE, callback = NULL,
                cluster = NULL, factor_dir = NULL, assay = NULL, mask = NULL, observed = NULL,
                weights = NULL, row_weights = NULL, col_weights = NULL, ...) {
  if (isNamespaceLoaded("NMF") && !isTRUE(nmf_state$from_nmf) &&
      is_nmf_pkg_call(if (!missing(x)) x, if (!missing(k)) k, if (!missing(loss)) loss,
                      if (!missing(method)) method, seed, names(match.call(expand.dots = FALSE)$...))) {
    # a call that only NMF's nmf() can mean (see "Using aspectr with the
    # NMF package")
    cl <- sys.call()
    cl[[1]] <- get("nmf", envir = asNamespace("NMF"))
    return(eval(cl, parent.frame()))
  }
  call <- match.call()
  check_dots_empty(...)
  check_required(x, "a non-negative matrix")
  container <- container_input(x, assay, "columns")
  if (!is.null(container)) x <- container$x
  solvers <- nmf_solvers()
  loss <- match_option(loss, unique(solvers$loss), "loss")
  method_given <- !missing(method)
  if (method_given) method <- match_option(method, unique(solvers$method), "method")
  beta_given <- !missing(beta)
  beta <- check_number(beta, "beta", -Inf, Inf)
  # (a beta other than the loss's own: the beta divergence was meant)
  if (beta_given && loss != "beta" && beta != c(frobenius = 2, kl = 1)[[loss]]) {
    warn_unused_argument("beta", "it is the exponent of {.code loss = \"beta\"}, and the fit's loss is {.val {loss}} (the beta divergence with {.code beta = {c(frobenius = 2, kl = 1)[[loss]]}}).",
                         "For the beta divergence with {.code beta = {format(beta)}}, give {.code loss = \"beta\"}.")
  }
  if (loss == "beta" && beta == 2) loss <- "frobenius"
  if (loss == "beta" && beta == 1) loss <- "kl"
  # the methods of each loss, the default first (the glue's one table)
  of_loss <- solvers$loss == loss
  allowed <- solvers$method[of_loss][order(!solvers$default[of_loss])]
  if (!method_given) {
    method <- allowed[1]
  } else if (!method %in% allowed) {
    abort_input("{.arg method} must be {.or {.val {allowed}}} for {.code loss = \"{loss}\"}, not {.val {method}}.",
                "argument", arg = "method")
  }
  L1 <- check_penalty(L1, "L1")
  L2 <- check_penalty(L2, "L2")
  if (loss == "beta" && any(L2 > 0)) {
    abort_input("{.arg L2} penalties are available for the Frobenius and KL losses, not for {.code loss = \"beta\"}.",
                "argument", arg = "L2")
  }
  cluster <- check_cluster(cluster, x)
  files <- factor_paths(factor_dir, x, "W", callback)
  sharded <- inherits(x, "aspectr_shards")
  start <- proc.time()[["elapsed"]]  # the time includes the input conversion
  # missing cells, masks and weights (see "Missing values and weights"):
  # the fit reads the weighted data x~ = omega o x in place of x
  weighted <- nmf_is_weighted(if (!sharded) x, mask, observed, weights, row_weights, col_weights)
  if (weighted) {
    if (method == "als") {
      abort_input("Missing cells, masks and weights are available for {.arg method} {.or {.val {c('hals', 'anls', 'mu', 'cd')}}}, not {.val als} (a projection, not a minimizer of the weighted loss).",
                  "argument", arg = "method")
    }
    if (isTRUE(accelerate)) {
      abort_input("{.code accelerate = TRUE} is not available with missing cells, masks or weights: the extrapolated updates need the unweighted products.",
                  "argument", arg = "accelerate")
    }
    accelerate <- FALSE
  }
  wargs <- list(mask = mask, observed = observed, weights = weights, row_weights = row_weights,
                col_weights = col_weights)
  # where the cells are (a matrix in memory, or shards): the data's form and
  # sums, their scale, the SVD's products, the starts, the runs
  src <- if (sharded) {
    nmf_shard_source(x, loss, beta, method, accelerate, weighted, wargs, cluster, files, call)
  } else {
    nmf_memory_source(x, loss, beta, method, weighted, wargs)
  }
  on.exit(src$close(), add = TRUE)
  k <- check_whole(k, "k", min = 1, max = min(src$nd$dims), what = "at most the smaller dimension of `x`")
  eps <- check_number(eps, "eps", 0, Inf)
  ctl <- check_fit_controls(nrun, max_iter, tol, seed, threads, verbose)
  nrun <- ctl$nrun; max_iter <- ctl$max_iter; tol <- ctl$tol
  seed <- ctl$seed; threads <- ctl$threads; verbose <- ctl$verbose
  callback <- check_callback(callback)
  stg <- check_staging(short_iter, short_keep, nrun)
  # the fit runs on x / s (s = max(x)): squared norms cannot overflow, the
  # epsilon guards and floors are relative to the data, and the fit of c * x
  # is that of x scaled. Penalties are rescaled so that the problem solved is
  # exactly the one asked for. (With beta <= 0 the zeros of x are raised to
  # eps, in units of the scaled x.)
  src$prepare(eps, threads)
  nd <- src$nd
  sc <- src$sc
  bpow <- if (loss == "beta") beta else c(frobenius = 2, kl = 1)[[loss]]
  if (inherits(init, "aspectr_fit")) {
    # a warm start: the factors of an earlier nmf() fit
    init <- warm_start(init, "nmf", k, nd$dims)
    init <- list(W = unname(init$W), H = unname(init$H))
  }
  if (is.list(init)) {
    init <- check_init_list(init, nd$dims, k)
    init <- lapply(init, function(f) f / sc$a)
  } else if (missing(init) && (method == "mu" || loss == "kl")) {
    # NNDSVD's exact zeros would stay zero under multiplicative updates, and
    # a zero model value at a non-zero count has an infinite KL divergence
    init <- "nndsvda"
  } else {
    init <- match_option(init, c("nndsvd", "nndsvda", "nndsvdar", "random"), "init")
  }
  # penalties in the units of the scaled problem: with x = s x', W = a W',
  # H = a H' (a = sqrt(s)) the loss is s^bpow times that of (x', W', H'), and
  # L1 sum(W) = L1 a sum(W'), L2/2 ||W||^2 = L2 a^2 / 2 ||W'||^2
  # (in logs: s^bpow can under- or overflow)
  # (capped at 1e100: a penalty that large in the units of the scaled data
  # has the zero model as its optimum either way)
  L1s <- pmin(ifelse(L1 > 0, L1 * exp((0.5 - bpow) * log(sc$s)), 0), 1e100)
  L2s <- pmin(ifelse(L2 > 0, L2 * exp((1 - bpow) * log(sc$s)), 0), 1e100)
  # default: on for unpenalized HALS/ANLS, off for the KL multiplicative
  # updates (slower on sparse document-term data, see NEWS) and under
  # penalties (where, from some starts, the extrapolated fit ends more than
  # 1% above the plain one), never used by Frobenius/beta MU
  accelerate <- if (is.null(accelerate)) method %in% c("hals", "anls") && !any(c(L1, L2) > 0) else
    check_flag(accelerate, "accelerate")
  accelerate <- accelerate && (method %in% c("hals", "anls") || (loss == "kl" && method == "mu"))
  # (shards: their session, whose stores hold the shards, on the workers of
  # a cluster or here; NNDSVD's SVD takes the products of an unweighted
  # fit's data from them)
  products <- src$open(L1s, L2s, accelerate)
  if (!is.null(src$keep_u)) src$keep_u(init)
  svd0 <- if (is.character(init) && init != "random") nmf_svd(nd, k, threads, products) else NULL
  # the SVD's temporaries (several of the factors' size) collected before
  # the starts and the fits allocate theirs, when that is worth a collection
  # of R's young objects (about a millisecond); again after the starts
  big <- !sharded && nd$nnz >= 1e6
  if (big && !is.null(svd0)) invisible(gc(verbose = FALSE, full = FALSE))
  inits <- with_seed(seed, lapply(seq_len(nrun), function(i) src$draw(k, init, svd0)))
  if (big) invisible(gc(verbose = FALSE, full = FALSE))
  comp <- paste0("factor_", seq_len(k))
  # the callback's objective and factors on the user's scale (W H = s W' H')
  hook <- fit_hook(callback, verbose, "nmf()",
                   value = function(v) if (v == 0) 0 else v * sc$s^bpow,
                   model = function(raw) {
                     W <- raw$W * sc$a; H <- raw$H * sc$a
                     dimnames(W) <- list(nd$dimnames[[1]], comp)
                     list(W = W, H = `dimnames<-`(t(H), list(nd$dimnames[[2]], comp)))
                   })
  hook <- src$progress(hook, verbose, max_iter)
  fit_start <- src$fitter(L1s, L2s, eps, accelerate, tol, threads, verbose, hook, !is.null(callback))
  resume <- function(r) list(W = r$W, H = r$H)
  out <- fit_pipeline(inits, fit_start, resume, hook, ctl, stg, "nmf()", value = last_objective,
                      sequential = sharded, discard = src$discard)
  values <- out$values
  best <- out$best
  res <- out$res
  if (!is.null(res$restat)) {
    # the sums of shards whose zeros were raised to `x_floor`, as nmf_restat()
    # makes those of the matrix
    nd$total <- res$restat$total
    nd$neg_entropy <- res$restat$xlogx / res$restat$total - log(res$restat$total)
    nd$row_totals <- res$restat$row_totals
    nd$nnz <- prod(nd$dims)
  }
  wd <- src$wd
  count_data <- src$count_data
  loglik_const <- src$loglik_const
  W <- res$W; H <- res$H
  comp <- paste0("factor_", seq_len(k))
  penalized <- any(L1 > 0) || any(L2 > 0)
  # unpenalized HALS and the extrapolated updates return W with unit-norm
  # columns, H carrying the scale (see below)
  unit_w <- !weighted && loss == "frobenius" && !penalized && (method == "hals" || (method == "anls" && accelerate))
  # W's column sums in the scaled problem (W written to files: its run's)
  wsum <- if (is.null(files)) colSums(W) else W$sums
  W <- src$name_w(W, list(nd$dimnames[[1]], comp), if (!unit_w) rep(sc$a, k))
  dimnames(H) <- list(comp, nd$dimnames[[2]])
  xnorm <- sqrt(res$xnorm2)
  # relative error: scale-free, from the scaled problem
  rel <- if (weighted) sqrt(2 * pmax(if (loss == "frobenius" && !penalized) res$objective else res$frobenius, 0)) / xnorm else
    if (loss == "frobenius" && !penalized) sqrt(2 * pmax(res$objective, 0)) / xnorm else
    sqrt(max(res$xnorm2 - 2 * (res$wtxh %||% sum(nmf_WtX(nd, W, threads) * H)) +
               sum((res$WW %||% crossprod(W)) * tcrossprod(H)), 0)) / xnorm
  # a model that vanishes on non-zero data (W H = 0) is a stationary point
  # of every algorithm; it is a local minimum only when both factors carry
  # an L1 penalty, and otherwise never reported as converged
  if (!all(is.finite(wsum)) || !all(is.finite(H))) {
    abort_numeric(c("The fit's factors are not finite: its updates went beyond double precision.",
                    i = if (loss == "beta" && (beta < -1 || beta > 3))
                      paste0("Take a {.arg beta} nearer the usual 0 to 2 than ", format(beta), ".") else
                      paste0("Rescale {.arg x} (its largest value is ", format(signif(sc$s, 3)), ").")))
  }
  vanished <- sum(wsum * rowSums(H)) == 0
  converged <- isTRUE(res$converged)
  # W = H = 0 is a local minimum when an L1 penalty on one factor meets an
  # L1 or L2 penalty on the other, or when sqrt(L2w L2h) >= ||x||_F (which
  # bounds the largest singular value); in the units of the scaled data
  zero_min <- (L1s[1] > 0 && (L1s[2] > 0 || L2s[2] > 0)) || (L1s[2] > 0 && L2s[1] > 0) ||
    sqrt(L2s[1] * L2s[2]) >= sqrt(res$xnorm2)
  if (vanished && !zero_min) converged <- FALSE
  # penalized factors set to zero: said with their penalties (the zero
  # model is then their doing, a local minimum or not)
  zeroed <- nmf_zeroed_factors(wsum, H, L1, L2)
  if (length(zeroed)) {
    warn_zero_factor(zeroed, L1, L2, zero_min)
  } else if (vanished && !zero_min) {
    warn_numeric(c("The fit ended with W H = 0 on non-zero {.arg x}: all its factors vanished, a saddle point, not a fit.",
                   i = "Try another {.arg init} or {.arg seed}, or smaller penalties."))
  }
  # back to the units of x
  # (a zero objective stays zero when s^bpow overflows: no 0 * Inf)
  unscale <- function(v) ifelse(v == 0, 0, v * sc$s^bpow)
  # W H = s W' H'. The algorithms are scale-equivariant, so from the start
  # (W0, H0) scaled by 1 / a they give the iterates of the unscaled problem
  # divided by a: each factor takes a back; except that unpenalized HALS
  # and the extrapolated updates return W with unit-norm columns, H
  # carrying the scale, which stays so
  check_objective_range(unscale(values[best]), values[best], "nmf() fit",
                        list(initial = unscale(res$initial), objective = unscale(as.numeric(res$objective)),
                             run_values = unscale(values), divergence = unscale(res$divergence)))
  # (W in files was written in these units)
  if (unit_w) {
    H <- H * sc$s
  } else {
    if (is.null(files)) {
      W <- W * sc$a
      wsum <- colSums(W)
    } else {
      wsum <- wsum * sc$a
    }
    H <- H * sc$a
  }
  fit <- list(
    W = W, H = H, loss = loss, beta = if (loss == "beta") beta else c(frobenius = 2, kl = 1)[[loss]],
    method = method, accelerate = accelerate,
    init = if (is.list(init)) "user" else init, k = k,
    L1 = L1, L2 = L2,
    objective = unscale(as.numeric(res$objective)), rel_error = rel,
    value = unscale(values[best]),
    divergence = unscale(res$divergence),
    initial = unscale(res$initial), iterations = as.integer(res$iterations),
    converged = converged, run = best, run_values = unscale(values),
    dims = nd$dims, dimnames = nd$dimnames, nnz = nd$nnz, total = nd$total * sc$s,
    neg_entropy = nd$neg_entropy %||% (nd$xlogx / nd$total - log(nd$total)),
    row_totals = nd$row_totals * sc$s, scale = sc$s,
    eps = eps, loglik_const = loglik_const, stopped = isTRUE(res$stopped),
    time = proc.time()[["elapsed"]] - start, threads = threads, seed = seed,
    annotation = container$annotation, call = call
  )
  fit <- new_aspectr_fit("nmf", fit, factors = list(W = W, H = t(H)),
                         weights = stats::setNames(wsum * rowSums(H), comp),
                         params = list(beta = fit$beta, method = method, L1 = L1, L2 = L2, eps = eps,
                                       accelerate = accelerate))
  fit$count_data <- count_data
  if (sharded) fit$shards <- length(x$sources)
  if (weighted) {
    fit$weighting <- list(type = wd$type, base = wd$d, left_out = wd$left_out,
                          mass = if (loss == "kl") unscale(res$mass),
                          observed = if (wd$d == 0) nmf_observed_pattern(wd, nd$dims, nd$dimnames))
  }
  finish_progress(fit, verbose, "nmf()", max_iter, tol)
}

# The cells of an nmf() fit in memory, as nmf_shard_source() has those of
# shards: `nd` (nmf_data()'s form), `wd` (the weighted data of a weighted
# fit), `count_data`; `prepare(eps, threads)` sets `loglik_const`, scales
# the data (`sc`, nmf_scale()) and raises the zeros of beta <= 0 to eps;
# `open()` (no session: NULL products for the SVD), `draw()` one start,
# `progress()` the hook, `fitter()` the runs of a start, `name_w()` the
# best run's W named, `discard` and `close()` (nothing to free).
nmf_memory_source <- function(x, loss, beta, method, weighted, wargs, call = rlang::caller_env()) {
  force(call)  # (the fit's frame, named by errors raised after this returns)
  wd <- NULL
  if (weighted) {
    wd <- nmf_weighted_data(x, wargs$mask, wargs$observed, wargs$weights, wargs$row_weights, wargs$col_weights,
                            call = call)
    if (wd$observed_cells == 0) {
      abort_nothing_weighted(call = call)
    }
    # (the beta divergence's updates read x itself and the weights)
    x <- if (loss == "beta") wd$x0 else wd$xt
  }
  nd <- nmf_data(x, "x", dense = loss == "beta", call = call)
  # (a weighted fit has no likelihood: no check of counts)
  count_data <- !weighted && check_count_data(x, if (is.null(nd$dense)) nd$x else nd$dense, "nmf",
                                              likelihood = loss == "kl", call = call)
  sc <- NULL
  loglik_const <- NA_real_
  prepare <- function(eps, threads) {
    # the Poisson log-likelihood's data term, sum(x log x - x - log x!)
    if (loss == "kl" && !weighted) {
      loglik_const <<- if (is.null(nd$dense)) cpp_csc_scan(nd$x, nd$i, nd$dims[1], 1, TRUE)$loglik_const else {
        v <- nd$dense[nd$dense > 0]
        sum(v * log(v) - v - lgamma(v + 1))
      }
    }
    sc <<- nmf_scale(nd)
    nd <<- sc$nd
    if (loss == "beta" && beta <= 0 && any(nd$dense <= 0)) {
      nmf_floor_eps(eps, beta, call)
      nd$dense[nd$dense < eps] <<- eps
      nd <<- nmf_restat(nd)
      nd$nnz <<- length(nd$dense)
    }
    # the data in the core's form, once for the SVD, every start and the
    # final products
    # (with X's rows, 12 bytes per non-zero, when within the limit, and
    # always for KL, whose updates of W read them: decided once, here, so that
    # starts run elsewhere by a future plan rebuild the same data)
    nd$rows <<- nmf_keep_rows(length(nd$x), call = call) || loss == "kl"
    nd$ptr <<- nmf_ptr(nd)
    invisible()
  }
  fitter <- function(L1s, L2s, eps, accelerate, tol, threads, verbose, hook, exact) {
    if (weighted && loss == "beta") {
      omega <- nmf_weight_matrix(wd)
      return(function(s, iters) {
        cpp_nmf_beta_weighted_fit(nmf_ptr(nd), s$W, s$H, beta, omega, L1s, L2s, eps, iters, tol, threads,
                                  verbose, hook, exact)
      })
    }
    if (weighted) {
      wk <- nmf_weighted_constants(wd, sc$s)
      return(function(s, iters) {
        cpp_nmf_weighted_fit(nmf_ptr(nd), s$W, s$H, loss, method, wd$d, wd$r, wd$c, wd$ei, wd$ej, wd$ev,
                             wk$wx2, wk$klc, wk$total, L1s, L2s, eps, iters, tol, threads, verbose,
                             hook, exact)
      })
    }
    function(s, iters) {
      cpp_nmf_fit(nmf_ptr(nd), s$W, s$H, loss, method, beta,
                  L1s, L2s, eps, iters, tol, threads, verbose, accelerate, hook, exact)
    }
  }
  open <- function(L1s, L2s, accelerate) NULL
  draw <- function(k, init, svd0) nmf_init(nd, k, init, svd0)
  progress <- function(hook, verbose, max_iter) hook
  name_w <- function(W, dn, a) `dimnames<-`(W, dn)
  discard <- NULL
  close <- function() invisible()
  environment()
}

# The error of beta <= 0 with zeros in x and no positive eps to raise them to
nmf_floor_eps <- function(eps, beta, call) {
  if (!(eps > 0)) {
    abort_input("{.arg eps} must be a positive number when {.code beta = {beta}} and {.arg x} has zero entries (it replaces the zeros), not {eps}.",
                "argument", arg = "eps", call = call)
  }
}

check_penalty <- function(p, arg, call = rlang::caller_env()) {
  if (!is.numeric(p) || !(length(p) %in% 1:2) || anyNA(p) || any(p < 0) || any(!is.finite(p))) {
    abort_input("{.arg {arg}} must be one or two non-negative finite numbers (for W and H), not {describe_values(p)}.",
                "argument", arg = arg, call = call)
  }
  rep_len(as.numeric(p), 2)
}

# The penalized factors that the penalties set to zero ("W", "H"; none:
# character(0)), from W's column sums `wsum` and H (k x columns) in the
# units of the scaled data (largest value 1): when the model W H is zero,
# or negligible (at most 1e-12 anywhere: the multiplicative updates and KL
# coordinate descent shrink a factor towards zero without reaching it),
# those of its penalized factors whose entries are all at most 1e-6 (all
# of them if none is).
nmf_zeroed_factors <- function(wsum, H, L1, L2) {
  pen <- L1 > 0 | L2 > 0
  if (!any(pen)) return(character(0))
  hmax <- if (length(H)) apply(H, 1, max) else numeric(0)
  if (!(sum(wsum * hmax) <= 1e-12)) return(character(0))
  small <- c(max(wsum) <= 1e-6, max(hmax) <= 1e-6) & pen
  c("W", "H")[if (any(small)) small else pen]
}

# The warning (class `aspectr_warning_zero_factor`) that the penalties set
# the factors `zeroed` to zero (or negligible): the fit is the zero model.
# `local_min`: whether the penalties make it a local minimum (otherwise a
# saddle point, also of class `aspectr_warning_numeric` as the warning of a
# vanished fit without such a factor).
warn_zero_factor <- function(zeroed, L1, L2, local_min, call = rlang::caller_env()) {
  on <- match(zeroed, c("W", "H"))
  pens <- c(if (any(L1[on] > 0)) "L1", if (any(L2[on] > 0)) "L2")
  given <- vapply(pens, function(p) {
    v <- get(p)
    paste0(p, " = ", if (v[1] == v[2]) format(v[1]) else paste0("c(", format(v[1]), ", ", format(v[2]), ")"))
  }, character(1))
  what <- paste(zeroed, collapse = " and ")
  tail <- if (local_min) "a local minimum of the penalized objective, not a fit of {.arg x}" else
    "a saddle point, not a fit"
  cli::cli_warn(c(paste0("The penalties set ", what, " to zero (every entry 0 or negligible): the fit is the zero model (W H = 0), ", tail, "."),
                  i = "Take a smaller {.or {.arg {pens}}} (the fit's {.code {given}})."),
                class = c("aspectr_warning_zero_factor", if (!local_min) "aspectr_warning_numeric", "aspectr_warning"),
                zeroed = zeroed, call = call)
}

check_init_list <- function(init, dims, k, call = rlang::caller_env()) {
  bad <- setdiff(names(init), c("W", "H"))
  if (length(bad) || !length(init) || is.null(names(init)) || any(!nzchar(names(init)))) {
    abort_input("A list {.arg init} must have elements {.code W} and/or {.code H}, not {if (length(init)) paste0('elements ', paste0('\"', names(init) %||% '', '\"', collapse = ', ')) else 'an empty list'}.", "argument",
                arg = "init", call = call)
  }
  ok <- function(m, d) is.matrix(m) && is.numeric(m) && all(dim(m) == d) && !anyNA(m) &&
    all(is.finite(m)) && all(m >= 0)
  given <- function(m, d) paste0(describe(m), if (is.matrix(m) && is.numeric(m) && all(dim(m) == d))
    " with negative, missing or infinite entries" else "")
  if (!is.null(init$W) && !ok(init$W, c(dims[1], k))) {
    abort_input("{.arg init}: {.code init$W} must be a finite non-negative {dims[1]} x {k} matrix, not {given(init$W, c(dims[1], k))}.",
                "argument", arg = "init", call = call)
  }
  if (!is.null(init$H) && !ok(init$H, c(k, dims[2]))) {
    abort_input("{.arg init}: {.code init$H} must be a finite non-negative {k} x {dims[2]} matrix, not {given(init$H, c(k, dims[2]))}.",
                "argument", arg = "init", call = call)
  }
  init
}

# The data divided by s = max(x) (so the scaled data are the same, to
# rounding, for x and c * x: the fit, its starts included, does not depend on
# the scale), with its statistics recomputed on the scaled values (they
# cannot overflow). a = sqrt(s) scales the factors. Sparse values are not
# copied: `div` records the divisor, which the core applies as it reads
# them (cpp_nmf_data()).
nmf_scale <- function(nd) {
  s <- if (!is.null(nd$dense)) max(nd$dense) else nd$top %||% max(nd$x)
  if (s == 1) return(list(nd = nd, s = 1, a = 1))
  if (!is.null(nd$dense)) nd$dense <- nd$dense / s else nd$div <- s
  list(nd = nmf_restat(nd), s = s, a = sqrt(s))
}

nmf_restat <- function(nd) {
  st <- if (!is.null(nd$dense)) cpp_dense_scan(nd$dense) else
    cpp_csc_scan(nd$x, nd$i, nd$dims[1], nd$div %||% 1, FALSE)
  nd$total <- st$total; nd$xlogx <- st$xlogx
  nd$row_totals <- st$row_totals
  nd
}

# The data of a fit in the core's form (cpp_nmf_data()), made once and used
# by every start, the SVD and the final products; made again where the
# pointer did not survive (a start run in another R process by a future
# plan receives `nd` serialized).
nmf_ptr <- function(nd) {
  if (!is.null(nd$ptr) && cpp_nmf_data_alive(nd$ptr)) return(nd$ptr)
  cpp_nmf_data(nd$dense, nd$i, nd$p, nd$x, nd$dims, nd$div %||% 1, isTRUE(nd$symmetric),
               isTRUE(nd$rows), isTRUE(nd$triangle))
}

# Whether sparse data of `nnz` non-zeros keep a transposed copy (their rows,
# 12 bytes per non-zero) for faster products: when that copy is at most
# getOption("aspectr.transpose_limit", 2^30) bytes.
nmf_keep_rows <- function(nnz, call = rlang::caller_env()) {
  limit <- getOption("aspectr.transpose_limit", 2^30)
  if (!is.numeric(limit) || length(limit) != 1 || is.na(limit) || limit < 0)
    abort_input(c("{.code options(aspectr.transpose_limit)} must be a single number of bytes, 0 or more (or {.code Inf}).",
                  x = "It is {.val {format(limit)}}."), "option", call = call)
  12 * as.numeric(nnz) <= limit
}

# x -> list(dense = matrix or NULL, i, p, x (CSC), dims, dimnames, nnz, total)
nmf_data <- function(x, arg, dense = FALSE, call = rlang::caller_env()) {
  fast <- nmf_data_dense(x, dense) %||% nmf_data_csc(x, dense)
  if (!is.null(fast)) return(fast)
  d <- as_aspect_data(x, arg, call = call, tensors = FALSE)
  dims <- d$dims
  ord <- order(d$idx[2, ], d$idx[1, ], method = "radix")
  i <- d$idx[1, ord]; j <- d$idx[2, ord]; v <- d$val[ord]
  p <- c(0L, cumsum(tabulate(j + 1L, nbins = dims[2])))
  dm <- NULL
  if (dense || (is.matrix(x) && length(v) > 0.3 * prod(as.numeric(dims)))) {
    check_size(prod(as.numeric(dims)),
               paste0("This fit needs the dense ", dims[1], " x ", dims[2], " matrix ({size} cells)."),
               call = call)
    dm <- matrix(0, dims[1], dims[2])
    dm[cbind(i + 1L, j + 1L)] <- v
  }
  i <- as.integer(i); v <- as.numeric(v)
  st <- cpp_csc_scan(v, i, dims[1], 1, FALSE)
  list(dense = dm, i = i, p = as.integer(p), x = v, dims = dims,
       dimnames = d$dimnames, nnz = length(v), total = d$total,
       xlogx = st$xlogx, row_totals = st$row_totals, top = st$top)
}

# A plain numeric matrix that will be fitted dense: one pass in C++ checks it
# and computes its statistics, and the matrix is used as it is (no triplets,
# no copy when it is already double). NULL when the general path must handle
# it (other classes, sparse enough for the sparse path, empty, or invalid
# values, which the general path reports).
nmf_data_dense <- function(x, dense) {
  if (!is.matrix(x) || is.object(x) || !(is.double(x) || is.integer(x) || is.logical(x)) ||
      any(dim(x) == 0)) {
    return(NULL)
  }
  cells <- prod(as.numeric(dim(x)))
  if (cells > getOption("aspectr.max_cells", 1e8)) return(NULL)
  if (!is.double(x)) storage.mode(x) <- "double"
  s <- cpp_dense_scan(x)
  if (s$bad > 0 || s$nnz == 0 || !(dense || s$nnz > 0.3 * cells)) return(NULL)
  dn <- dimnames(x)
  dn <- if (is.null(dn)) list(NULL, NULL) else
    unname(lapply(dn, function(d) if (is.null(d)) NULL else as.character(d)))
  list(dense = x, i = integer(0), p = integer(0), x = numeric(0), dims = as.integer(dim(x)),
       dimnames = dn, nnz = as.integer(s$nnz), total = s$total, xlogx = s$xlogx,
       row_totals = s$row_totals)
}

# A dgCMatrix with positive finite values is already in the form the fit
# needs (Matrix keeps the row indices of a column sorted): its slots are used
# as they are, without triplets or copies, and one pass in C++ checks them
# and computes their statistics. NULL when the general path must handle it
# (other classes, explicit zeros, invalid values, which that path reports).
nmf_data_csc <- function(x, dense) {
  if (dense || !methods::is(x, "dgCMatrix") || any(dim(x) == 0) || !length(x@x)) return(NULL)
  dims <- as.integer(dim(x))
  st <- cpp_csc_scan(x@x, x@i, dims[1], 1, FALSE)
  if (st$bad > 0) return(NULL)
  dn <- unname(lapply(x@Dimnames, function(d) if (is.null(d)) NULL else as.character(d)))
  list(dense = NULL, i = x@i, p = x@p, x = x@x, dims = dims, dimnames = dn, nnz = length(x@x),
       total = st$total, xlogx = st$xlogx, row_totals = st$row_totals, top = st$top,
       csc = x)
}

# The sparse data as a dgCMatrix, divided by `div` (small data only: the
# exact SVD and the rank's cross-validation)
nmf_sparse <- function(nd) {
  X <- nd$csc %||% Matrix::sparseMatrix(i = nd$i, p = nd$p, x = nd$x, dims = nd$dims, index1 = FALSE)
  if (!is.null(nd$div) && nd$div != 1) X@x <- X@x / nd$div
  X
}

nmf_WtX <- function(nd, W, threads = 1L) {
  if (!is.null(nd$dense)) cpp_dense_tn(W, nd$dense, threads) else
    cpp_nmf_product(nmf_ptr(nd), W, "WtX", threads)
}

# Leading k singular triplets: exact for small dense data, otherwise a
# randomized range finder (Halko et al. 2011) with two power iterations
# (seeded from its own stream so that it does not depend on nrun).
nmf_svd <- function(nd, k, threads = 1L, products = NULL) {
  dense <- !is.null(nd$dense)
  sharded <- !is.null(nd$shards)
  # small data: the exact SVD, of the dense form also for sparse storage, so
  # that dense and sparse storage of the same matrix give the same start
  # (and data in shards, read into that form, too)
  if (min(nd$dims) <= 400 && prod(as.numeric(nd$dims)) <= 4e6) {
    X <- if (sharded) shard_nmf_dense(nd) else if (dense) nd$dense else as.matrix(nmf_sparse(nd))
    s <- svd(X, nu = k, nv = k)
    return(list(d = s$d[seq_len(k)], u = s$u, v = s$v))
  }
  # the range finder in C++ (with the package's kernels: R's reference BLAS
  # is several times slower; sparse data are read in place), with two power
  # iterations; data in shards as pieces, each shard keeping its rows of
  # the range's basis (by the stores holding them: `products`, see
  # range_pieces())
  l <- min(k + 10, min(nd$dims))
  omega <- with_seed(20240601L, matrix(stats::rnorm(nd$dims[2] * l), nd$dims[2], l))
  if (sharded) {
    return(cpp_nmf_range_svd(products %||% shard_nmf_products(nd, threads), omega, 2L, k, threads, nd$dims))
  }
  cpp_nmf_range_svd(nmf_ptr(nd), omega, 2L, k, threads)
}

# A random start of a sharded fit kept as the generator's state before its
# draws (made again, a column of W at a time, by the stores, see eng$begin()): no
# matrix of the documents' size outside the shards' stores. The stream is
# moved on past the draws as nmf_init() moves it. Without a state (no seed
# and no draws yet in the session) the start is drawn now.
nmf_lazy_random <- function(nd, k) {
  state <- get0(".Random.seed", envir = globalenv(), inherits = FALSE)
  if (is.null(state)) return(nmf_init(nd, k, "random", NULL))
  m <- as.numeric(nd$dims[1]); n <- as.numeric(nd$dims[2])
  left <- m * k + k * n
  while (left > 0) {
    d <- min(left, 2^20)
    stats::runif(d)
    left <- left - d
  }
  list(state = state, scale = sqrt(nd$total / (m * n) / k), m = m, n = n, k = k)
}

# NNDSVD (Boutsidis and Gallopoulos 2008) and its variants, or random.
nmf_init <- function(nd, k, init, svd0) {
  m <- as.numeric(nd$dims[1]); n <- as.numeric(nd$dims[2])
  avg <- nd$total / (m * n)
  if (is.list(init)) {
    scale <- sqrt(avg / k)
    W <- init$W %||% (matrix(stats::runif(m * k), m, k) * scale)
    H <- init$H %||% (matrix(stats::runif(k * n), k, n) * scale)
    return(list(W = W, H = H))
  }
  if (init == "random") {
    scale <- sqrt(avg / k)
    return(list(W = matrix(stats::runif(m * k), m, k) * scale,
                H = matrix(stats::runif(k * n), k, n) * scale))
  }
  # NNDSVD: for each singular pair after the first, the positive or the
  # negative parts of (u, v), whichever has the larger product of norms; at
  # a tie of the two (to rounding) the choice must not depend on the sign
  # the SVD gave (u, v) or on rounding: the part that holds the largest
  # entry of u (nmf_nndsvd())
  wh <- nmf_nndsvd(svd0, k)
  W <- wh$W; H <- wh$H
  # the zeros of NNDSVD: exact zeros, and entries that are zero but for
  # rounding (below 1e-12 times the largest entry), so that data equal up to
  # rounding (x and c * x scaled back) get the same start
  if (init %in% c("nndsvda", "nndsvdar")) {
    zw <- W <= 1e-12 * max(W); zh <- H <= 1e-12 * max(H)
  }
  if (init == "nndsvda") {
    W[zw] <- avg; H[zh] <- avg
  } else if (init == "nndsvdar") {
    W[zw] <- stats::runif(sum(zw), 0, avg / 100)
    H[zh] <- stats::runif(sum(zh), 0, avg / 100)
  }
  list(W = W, H = H)
}

# NNDSVD's factors W (m x k) and H (k x n) from the leading k singular
# triplets `s` (u whole as one block of cpp_nndsvd_blocks())
nmf_nndsvd <- function(s, k) {
  u <- if (ncol(s$u) == k) s$u else s$u[, seq_len(k), drop = FALSE]
  plan <- nmf_nndsvd_plan(list(cpp_nndsvd_blocks("part", u)), s, k)
  list(W = cpp_nndsvd_blocks("block", u, c(plan$spec, -Inf, 0), TRUE), H = plan$H)
}

# The columns' choices and scales from u's blocks' `parts`
# (cpp_nndsvd_blocks("part"), in order): `spec` (r, nu, choices), H, and
# W's largest entry
nmf_nndsvd_plan <- function(parts, s, k) {
  P <- cpp_nndsvd_blocks("plan", parts, if (ncol(s$v) == k) s$v else s$v[, seq_len(k), drop = FALSE], s$d[seq_len(k)])
  list(spec = c(P[, 2], P[, 3], P[, 1]), H = P[, -(1:3), drop = FALSE], wmax = attr(P, "wmax"))
}

# NNDSVD's start (nndsvd or nndsvda) of data in shards whose stores kept
# their rows of u (`parts`: their cpp_nndsvd_blocks("part"), in the
# shards' order): H here, and what the stores make their rows of W from
# (cpp_nndsvd_blocks("block")), as nmf_init() makes W (the zeros of
# nndsvda: at or below 1e-12 times W's largest entry)
nmf_kept_nndsvd <- function(nd, k, init, svd0, parts) {
  plan <- nmf_nndsvd_plan(parts, svd0, k)
  avg <- nd$total / (as.numeric(nd$dims[1]) * as.numeric(nd$dims[2]))
  H <- plan$H
  thr <- -Inf
  if (init == "nndsvda") {
    H[H <= 1e-12 * max(H)] <- avg
    thr <- 1e-12 * plan$wmax
  }
  list(nndsvd = list(spec = c(plan$spec, thr, avg)), H = H)
}

`%||%` <- function(a, b) if (is.null(a)) b else a

# nmf()'s solver table (loss, method, default), from the glue that runs them
nmf_solvers <- function() cpp_nmf_solvers()
