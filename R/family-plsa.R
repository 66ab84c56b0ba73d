#' Probabilistic latent semantic analysis (the aspect model)
#'
#' Fits the aspect model \eqn{P(d, w) = \sum_z P(z) P(d \mid z) P(w \mid z)}
#' to a non-negative matrix of counts (documents in rows, terms in columns),
#' that is, the factorization \eqn{G \approx U \mathrm{diag}(\lambda) V^\top}
#' of \eqn{G = x / \mathrm{sum}(x)} with \eqn{\lambda} and every column of
#' \eqn{U} and \eqn{V} on the probability simplex.
#'
#' @section Losses and algorithms:
#' * `"kl"`: maximum likelihood, i.e. minimization of \eqn{D(G \| P)}. The
#'   default `method = "cd"` is coordinate descent with the coordinate
#'   Newton steps of Hsieh and Dhillon (2011). On a matrix it is the KL
#'   coordinate descent of [nmf()] (`loss = "kl"`, `method = "cd"`, the
#'   same code): the aspect model is the non-negative factorization
#'   \eqn{X \approx W H} with \eqn{W = \mathrm{sum}(x) U
#'   \mathrm{diag}(\lambda)} and \eqn{H = V^\top}, and every iteration
#'   solves H given W, then W given H, then rescales the model so that
#'   \eqn{\mathrm{sum}(WH) = \mathrm{sum}(x)}, where the generalized
#'   divergence \eqn{\sum x \log(x / v) - x + v} is \eqn{\mathrm{sum}(x)
#'   D(G \| P)}; the fit returned is that factorization normalized
#'   (\eqn{P(d \mid z)} and \eqn{P(w \mid z)} the columns of W and the
#'   rows of H on the simplex, \eqn{P(z)} proportional to their products'
#'   totals), and the trace is \eqn{D(G \| P)} after every iteration. With
#'   a `prior` (see Priors and guided topics) and for N-way data it cycles
#'   over the modes instead (documents, then terms, and the further modes);
#'   with the other modes fixed, the weights and one mode's factor are the
#'   solution of independent non-negative problems, one per row, the row
#'   subproblems of CP-APR (Chi and Kolda 2012), solved by the same Newton
#'   steps, renormalized onto the simplex after every mode.
#'   `method = "em"` is the EM algorithm of Hofmann (1999). Both never
#'   increase \eqn{D(G \| P)} and have the same fixed points; coordinate
#'   descent needs far fewer iterations to the same divergence. From the
#'   same start the two may end in different local optima. With `k = 1` the solution is the product
#'   of the marginals of `x` (Huang and Sidiropoulos, Theorem 2) and no
#'   iterations are run. `tempering = beta < 1` gives tempered EM (posteriors
#'   raised to the power `beta` and renormalized); its iterations need not
#'   decrease the KL divergence that is reported (they decrease the
#'   tempered free energy \eqn{-\frac{1}{\beta} \sum g \log \sum_z
#'   P(z, d, w)^\beta}). `method = "squarem"` extrapolates EM (plain or
#'   tempered) by SQUAREM (Varadhan and Roland 2008): from three
#'   consecutive iterates a longer step is taken along the path, kept only
#'   when it does not increase the function the EM step decreases, so the
#'   iterations stay monotone and the fixed points are those of EM; it is
#'   the default with `tempering < 1` (about half of tempered EM's time to
#'   the same objective on AssociatedPress) and needs about a third of
#'   plain EM's time without.
#' * `"tsallis"`: the q-EM algorithm of Hazan, Haroon and Shashua for the
#'   Tsallis divergence \eqn{D_q(G \| P) = (1 - \sum G^q P^{1-q}) / (1 - q)},
#'   `q` in (0, 1). Small `q` makes the fit robust to clutter in sparse data;
#'   `q -> 1` recovers EM. By default q-EM is extrapolated by SQUAREM as
#'   above (`method = "squarem"`, monotone in \eqn{D_q}; 0.4-0.6 of plain
#'   q-EM's time to the same divergence on AssociatedPress); `method = "em"`
#'   gives plain q-EM.
#' * `"l2"`: pNMF of Hazan and Shashua (2007), minimization of
#'   \eqn{\frac12\|G - P\|_F^2} (one half of the squared error, the scale
#'   of every Frobenius objective in the package) by block updates: each factor column by exact
#'   projection onto the probability simplex, the weights by a
#'   simplex-constrained least-squares problem. With `normalize = FALSE`
#'   the weights are only non-negative (the unnormalized model of their
#'   noise analysis, \eqn{X \approx \sum_z w_z u_z \circ v_z} with the
#'   factor columns still on the simplex): the model's total is free, so
#'   under additive noise spread over the whole array it keeps the gap
#'   between a block of high values and the background, which the
#'   normalized fit (whose model must sum to 1) and KL both flatten.
#'
#' Every iteration costs \eqn{O(\mathrm{nnz}(x) k)} (plus \eqn{O(k^2 (m + n))}
#' for `"l2"`) and never forms a dense matrix. EM, q-EM and the L2 updates
#' never increase their objective.
#'
#' @param x Counts with documents in rows and terms in columns: a base
#'   matrix, any `Matrix` matrix (sparse input stays sparse), a
#'   `slam::simple_triplet_matrix` or `tm::DocumentTermMatrix`, a
#'   `quanteda::dfm`, or a 2-way `table`. Entries must be finite and
#'   non-negative; rows or columns without counts are allowed. For N-way
#'   data: an N-way array or `table`, or a sparse tensor ([sptensor()],
#'   [as_sptensor()], [read_tns()]); the model is then the non-negative CP
#'   decomposition with simplex constraints (KL: the EM of Huang and Sidiropoulos; Tsallis: q-EM
#'   over all modes; L2: pNTF) and `factors` holds one matrix per mode. Data
#'   too large for one object: [shards()] (see Sharded data).
#' @param k Number of topics, a whole number between 1 and `min(dim(x))`
#'   (for N-way data, at most the number of non-zero cells).
#' @param loss `"kl"` (default), `"tsallis"` or `"l2"`.
#' @param method The algorithm. For `loss = "kl"`: `"cd"` (the default;
#'   on a matrix without a prior, [nmf()]'s KL coordinate descent),
#'   `"em"` (Hofmann's EM) or `"squarem"` (EM extrapolated by SQUAREM); with
#'   `tempering < 1`, `"squarem"` (the default) or `"em"`. For `"tsallis"`:
#'   `"squarem"` (the default) or `"em"` (plain q-EM). For `"l2"`:
#'   `"blocks"`. `NULL` picks the default.
#' @param q Tsallis parameter in (0, 1), used when `loss = "tsallis"`.
#' @param tempering Tempering exponent in (0, 1] for `loss = "kl"`; 1 is
#'   plain EM.
#' @param normalize For `loss = "l2"`: `TRUE` (default) keeps the weights
#'   on the simplex (a probability model of `x / sum(x)`); `FALSE` lets them
#'   be any non-negative numbers (the fit of `x` itself, divided by
#'   `sum(x)`: `lambda` then need not sum to 1, and `fitted()` is the model
#'   of `x`). Only `TRUE` applies to the other losses.
#' @param init `"random"` (default: weights and columns drawn uniformly,
#'   then normalized), a list with `lambda` (k weights) and `factors` (one
#'   non-negative matrix per mode, d x k; columns are normalized), or an
#'   earlier fit of the same family, rank and data shape, to continue from
#'   its factors (a warm start: with a monotone algorithm it never ends
#'   worse than the fit it starts from). With `nrun > 1` the first start is
#'   `init` and the others random.
#' @param nrun Number of random starts; the fit with the smallest final
#'   objective is kept (the first of those equal to 10 significant
#'   digits). When a non-sequential [future][future::plan] plan is
#'   set and \pkg{future.apply} is installed, the starts run in parallel
#'   through it (with identical results).
#' @param short_iter,short_keep Staged restarts: with `short_keep` below
#'   `nrun`, every start first runs `short_iter` iterations and only the
#'   `short_keep` best continue to `max_iter` (many short runs, the best
#'   continued). The defaults (`short_iter = 0`, `short_keep = nrun`) run
#'   every start in full. EM, q-EM and the other algorithms without hidden
#'   state continue exactly as if uninterrupted; the extrapolated NMF
#'   updates restart their extrapolation.
#' @param max_iter Maximum number of iterations per start.
#' @param tol Convergence tolerance on the relative change of the objective
#'   between iterations; 0 runs `max_iter` iterations.
#' @param seed Integer seed for the random starts, or `NULL` to use (and
#'   advance) R's random number generator, so that [set.seed()] works.
#' @param threads Number of threads; `NULL` uses [default_threads()].
#' @param verbose Show progress: a progress bar with the objective and ETA
#'   in interactive sessions; in non-interactive ones (Rscript, R Markdown) a
#'   message every few seconds (`options(aspectr.progress_interval =)`,
#'   default 2) and a closing message with the iterations, the objective and
#'   whether the fit converged. Messages have class
#'   `aspectr_message_progress`.
#' @param callback `NULL` or a function `callback(iteration, objective,
#'   factors)` called after every iteration with the objective on the
#'   reported scale and the current factors (a named list like the fit's
#'   `factors`); returning `FALSE` stops the fit, which then reports
#'   `stopped = TRUE`. With several starts they run one after another, the
#'   callback sees each, and `FALSE` also skips the starts not yet begun.
#' @param cluster For data split into [shards()]: `NULL` (default) fits in
#'   this process (shards in files are read one at a time in every
#'   iteration), or a cluster: from [shard_cluster()] (PSOCK, on this
#'   machine or on several hosts by name, without TCP's delay of short
#'   messages), [parallel::makeCluster()] (PSOCK or FORK) or
#'   [mirai::make_cluster()] (workers over SSH or on a Slurm, SGE or PBS
#'   allocation). Each worker
#'   reads its share of the shards once (shards in files are read by the
#'   worker itself, so the master never holds them) and keeps them for the
#'   whole fit; per iteration only the topics go out and their statistics
#'   come back. The workers need \pkg{aspectr} installed.
#' @param assay For an `ExpressionSet`, `SummarizedExperiment`,
#'   `SingleCellExperiment` or `Seurat` object `x`: the matrix to fit (see
#'   [as_aspect_data()]). Its features x samples matrix is fitted
#'   transposed, the samples as documents (said in a message), and the
#'   samples' annotations are kept in the fit's `annotation`. `NULL` for
#'   other data.
#' @param factor_dir For data split into [shards()] whose rows' factor (the
#'   documents' topic weights of [plsa()], \eqn{W} of [nmf()], the first
#'   mode's factor of [ntf()]) should not be gathered into this process:
#'   `NULL` (default) gathers it into the fit; the path of a directory, or
#'   `TRUE` for the directory of each shard's file, has the process that
#'   holds each shard write its rows of the factor there as
#'   `<shard>.<factor>.rds` (replacing such a file), and the fit holds an
#'   [`aspectr_factor_files`][factor_files] object in its place. With a
#'   cluster the directory is the workers' (on several hosts, one each can
#'   write to). Not with `callback`. Such a file is not data: [shards()]
#'   refuses it, naming it (error of class `aspectr_error_input_value`),
#'   when it is given among the shards' files, as `Sys.glob("dir/*.rds")`
#'   or `list.files(dir)` of the shards' directory would give it after a
#'   fit with `factor_dir = TRUE`.
#' @param prior Dirichlet pseudo-counts for a smoothed (maximum a
#'   posteriori) KL fit of a matrix, see Priors and guided topics: `NULL`
#'   (default: maximum likelihood), one non-negative number (the same
#'   pseudo-count on every term of every topic and on every topic of every
#'   document), or a list with elements `terms` (one number, or a matrix of
#'   pseudo-counts terms x topics, like `factors$terms`, or topics x terms)
#'   and `documents` (one number or one per topic); a missing element is 0.
#' @param seeds Guided topics: `NULL` (default) or a named list of
#'   character vectors of terms (column names of `x`), one element per
#'   guided topic, at most `k`, for example `list(economy = c("tax",
#'   "budget"), war = c("army", "war"))`. The remaining topics are free.
#' @param seeds_weight The size of the pseudo-counts given to the terms of
#'   each guided topic: a term gets `100 * seeds_weight` times its count in
#'   `x` (the default 0.01: as many pseudo-counts as it has tokens), as in
#'   \pkg{seededlda} (version 1.4 and later). A positive number. Without
#'   `seeds` it has no effect and, when given, raises a warning of class
#'   `aspectr_warning_unused_argument`.
#' @param mask,observed,weights,row_weights,col_weights Missing cells, masks
#'   and weights, as in [nmf()] for a matrix and as in [ntf()] for N-way
#'   data (`NA` cells of `x` are missing too): see "Missing cells and
#'   weights". For N-way data `row_weights` and `col_weights` weigh the
#'   indices of the first two modes.
#' @param mode_weights Non-negative weights per index of each mode, as in
#'   [ntf()]: a list with one entry per mode of `x`, `NULL` or a vector of
#'   that mode's size (for a matrix, the same as `row_weights` and
#'   `col_weights`; not with them).
#' @param ... Must be empty; an unknown argument is an error.
#'
#' @section Missing cells and weights:
#' With `NA` in `x`, `mask`, `observed` or weights (matrices in memory,
#' dense or sparse, whose weights \eqn{\omega_{ij}} are those of [nmf()]: per
#' cell, row and column, 0 for a left-out cell; and N-way data in memory,
#' arrays or sparse tensors, whose weights are those of [ntf()]: per cell
#' and per index of each mode, `mode_weights`), the model is fitted to the
#' cells that count, with their weights, and \eqn{P(d, w)} still covers
#' every cell: [fitted()] gives the left-out cells the model's value (an
#' imputation). The updates use the weighted sums of the observed cells (no
#' imputation inside the loop) and cost, per iteration, a pass over the
#' observed non-zeros plus \eqn{k} operations per left-out or reweighted
#' cell (\eqn{k^2} under `"l2"`), per mode for N-way data.
#' * `"kl"`: maximum likelihood of the observed cells under the Poisson
#'   form of the aspect model, i.e. the weighted KL fit of [nmf()]
#'   (coordinate descent; for N-way data that of [ntf()], `loss = "kl"`,
#'   `method = "cd"`) normalized as [as_plsa()] does (\eqn{\lambda} the
#'   components' masses on the simplex, every factor column on the
#'   simplex). The value
#'   reported is the divergence of the observed cells' share of the counts
#'   from the model's share of them, \eqn{D(G_o \| P_o)}, both normalized
#'   over the cells that count with their weights.
#' * `"tsallis"`: likewise \eqn{D_q(G_o \| P_o) = (1 - \sum \omega
#'   g^q p^{1-q} / (\sum \omega p)^{1-q}) / (1 - q)} with \eqn{G = x /
#'   \sum \omega x}, the weighted Tsallis divergence of the counted cells'
#'   shares (with every weight 1, \eqn{D_q(G \| P)}). It is the weighted
#'   divergence \eqn{\sum \omega (q g + (1 - q) p - g^q p^{1-q}) / (1 - q)}
#'   at the model's best scale: its term \eqn{\sum \omega p}, the model's
#'   weighted mass on the counted cells, replaces the constant
#'   \eqn{\sum p = 1} of the unweighted objective, so that the left-out
#'   cells' share is left to the model. q-EM (Hazan, Haroon and Shashua)
#'   with the E-step statistics weighted by \eqn{\omega} and that mass as
#'   the normalizer: each step rescales the model to its best scale and
#'   minimizes the q-EM bound exactly, block by block (the weights in
#'   closed form, each column of the factors by a one-dimensional root
#'   search, as its normalizer's weights now differ between rows), so the
#'   divergence never rises; `method = "squarem"` (the default)
#'   extrapolates it with the same safeguard as without weights. On very
#'   sparse data a topic may put much of its mass on left-out cells (where
#'   its rank-one shape completes counts seen in their row and column), and
#'   [fitted()] shows it there.
#' * `"l2"`: \eqn{\frac12 \sum \omega (g - p)^2} with \eqn{G = x} divided
#'   by the total of `x` over the counted cells (so that multiplying every
#'   weight by a constant leaves the fit as it is) and \eqn{P} on the
#'   simplex (or free weights with `normalize = FALSE`), by the block
#'   updates of Hazan and Shashua (2007) with the weights: each factor
#'   column solves a least-squares problem on the simplex whose Hessian is
#'   diagonal (one weight per row), solved exactly (the weighted form of
#'   the simplex projection, whose threshold is found by sorting or, for
#'   the documents' factor, by Newton's method on its piecewise linear
#'   equation, which ends at the exact threshold), and the topic weights solve their
#'   simplex- (or sign-) constrained least-squares problem exactly, so the
#'   objective never rises.
#'
#' For N-way data the Tsallis and L2 steps update the weights, then each
#' mode in turn with the others fixed, by the same exact column problems
#' (the other modes' product in place of the terms' factor), so their
#' objectives never rise either.
#'
#' With all weights 1 the Tsallis and L2 steps are those of the unweighted
#' fit. Whole-number row weights (for N-way data, the weights of any mode)
#' give the objective of the data with each row (slice) repeated that many
#' times (at the model whose copies of a row are equal) under `"kl"` and `"tsallis"`, and under `"l2"` with `normalize =
#' FALSE` in the units of the counts; not under `"l2"` with `normalize =
#' TRUE`, whose model of the repeated data would have to sum to 1 over the
#' copies. The same arguments apply to a matrix in [shards()] (in memory,
#' in files, or on the workers of `cluster`; a shard has no `NA`: its
#' missing cells are given by `mask`) and to N-way data in shards, and the
#' fit equals the in-memory one up to
#' rounding: under `"kl"` it is [nmf()]'s weighted fit of the shards (of
#' N-way shards, [ntf()]'s);
#' under `"tsallis"` the weighted q-EM (`method = "em"`, or extrapolated
#' by SQUAREM, `"squarem"`, the default as in memory) and under `"l2"` the
#' weighted block updates run on the shards where they are, each keeping
#' its cells, their weights and its rows of the documents' factor, and only
#' statistics of the size of k or of the other modes travel (the
#' documents' columns' root search adds its sums over the shards: under
#' `"tsallis"` one pass per Newton step for all columns together, under
#' `"l2"` a few passes per column). `prior`, `seeds`, `tempering`,
#' `callback` and `factor_dir` are not available with missing cells or
#' weights.
#'
#' @section Priors and guided topics:
#' With `prior`, a KL fit of a documents x terms matrix is the maximum a
#' posteriori (MAP) estimate under Dirichlet priors on the topics
#' \eqn{P(w \mid z)} and on each document's topic proportions
#' \eqn{P(z \mid d)}, the smoothing of pLSA studied by Lu, Mei and Zhai
#' (2011) that brings it close to LDA in practice. The convention is that of
#' "add-\eqn{a}" smoothing: a pseudo-count \eqn{a} is the parameter
#' \eqn{1 + a} of the Dirichlet density, and EM's M-step adds it to the
#' expected counts,
#' \deqn{P(w \mid z) = \frac{n_{wz} + b_{wz}}{n_z + \sum_w b_{wz}}, \qquad
#' P(z \mid d) = \frac{n_{dz} + a_z}{n_d + \sum_z a_z},}
#' \eqn{n} the expected counts of the E-step (Hofmann 1999, 2001), while
#' \eqn{P(d)} stays the document's share of the counts. Pseudo-counts of 0
#' give exactly the maximum likelihood fit. The reported `objective` (and
#' `value`, `initial`, the trace a `callback` sees) is then the negative log
#' posterior divided by the total count of `x`, up to a constant:
#' \deqn{D(G \| P) - \frac{1}{\sum x} \left(\sum_{d, z} a_z \log P(z \mid d) +
#' \sum_{w, z} b_{wz} \log P(w \mid z)\right)}
#' (documents without counts have no proportions and no prior term); `kl`
#' remains the divergence \eqn{D(G \| P)} alone. EM, SQUAREM and the
#' default coordinate descent never increase it: coordinate descent keeps
#' its row problems, with the pseudo-counts as extra observed cells and the
#' normalizers of the proportions bounded by their tangents or by Jensen's
#' inequality (a majorization), and the same fixed points as MAP EM. The
#' bound of the topics' weights under the documents' pseudo-counts holds
#' each topic's term distribution near where the iteration found it, the
#' more so the larger they are: with a prior on the documents, SQUAREM
#' (`method = "squarem"`) reached the objective of the slower of the two
#' after 60 iterations in 0.03-0.81 of coordinate descent's time in 15
#' comparisons (AssociatedPress and Jane Austen's novels with k = 20, the
#' State of the Union addresses with k = 6; pseudo-counts 0.1, 1 or 10 on
#' both factors, 100 on the documents, or guided topics with 0.1 and 0.5:
#' 0.03 of its time with 100 on the documents of the first two), while
#' with the terms' pseudo-counts alone it took 0.16-3.45 of it and for
#' guided topics alone 1.79-3.57. From the same start the two may end in different local
#' optima, either one the lower. Sharded data
#' ([shards()]) take the same methods with the same default, and give the
#' in-memory fit: each shard solves its documents' rows with their
#' pseudo-counts and adds its part of the terms' majorizer, and each
#' Newton step of the terms' rows takes sums over the shards, to which
#' the terms' pseudo-counts are added once. A fit with a prior keeps it
#' in `prior` (in the fit's topic order), and [predict()] and
#' [perplexity()] fold new documents in with the same pseudo-counts on
#' \eqn{P(z \mid d)}. The prior applies to `loss = "kl"` with `tempering =
#' 1` on a matrix; other losses (L2, Tsallis: no likelihood to put a prior
#' on), tempered EM (which does not maximize a posterior) and N-way data
#' are refused with an error of class `aspectr_error_input_argument`.
#' Small pseudo-counts (0.01-1 on the terms, 0.1-1 on the documents) are
#' the usual range; choose them by held-out perplexity with a validation
#' set ([perplexity()] with `foldin`).
#'
#' With `seeds`, the first `length(seeds)` topics are guided: each gets,
#' on top of `prior`, pseudo-counts on its seed terms in
#' \eqn{P(w \mid z)} (by default each term's own count, see `seeds_weight`),
#' so that EM turns it towards them, as seeded LDA does with its
#' word priors (Watanabe and Zhou 2022, package \pkg{seededlda}). Each
#' random start also puts half of a guided topic's term distribution on
#' its terms (evenly), so that the first E-step gives their tokens to it;
#' the other topics start at random and are free. The guided topics
#' carry their names (`names(seeds)`) in `lambda`, `factors`, [terms()],
#' [tidy()] and [topics()]; the free ones are named `topic_<position>`.
#' Topics are still ordered by their weights. Seed terms not in `x` are
#' dropped with a warning (an error if a topic keeps none).
#'
#' @section Sharded data:
#' `x` may be data split by rows with [shards()]. The fit is computed shard
#' by shard and equal, up to rounding, to the in-memory fit with the same
#' arguments and seed; the document factors are gathered at the end. Under
#' `loss = "kl"` a matrix is fitted by its default coordinate descent
#' (`method = "cd"`, that of [nmf()] on shards: the terms' factor is solved
#' on this process in passes over the shards, the documents' rows where
#' their shard is), by EM (`method = "em"`, plain or tempered) or by EM
#' extrapolated by SQUAREM (`method = "squarem"`: the weights and the
#' shared modes' factors are extrapolated on this process, each shard's
#' rows of the documents' factor where the shard is, which keeps three
#' copies of them, the iterates the extrapolation reads); with `tempering
#' < 1` the default is SQUAREM, as in memory; with a `prior` or `seeds`
#' the default is coordinate descent, as in memory (see Priors and guided
#' topics). N-way data are fitted by the default coordinate
#' descent of [ntf()] on shards (each shard solves its documents' rows;
#' every other mode's rows take their Newton steps from sums over the
#' shards, one pass over the shards per step of all the mode's rows), or
#' by EM or SQUAREM. `loss = "tsallis"` is fitted by
#' q-EM extrapolated by SQUAREM (the default, as in memory) or by q-EM
#' (`method = "em"`), which updates its blocks one after another, so a
#' sharded q-EM iteration passes over the shards once per mode (EM: once;
#' SQUAREM: up to three q-EM or EM iterations per iteration). `loss =
#' "l2"` (matrices and N-way data, with `normalize = FALSE` too) takes the
#' in-memory block steps: each shard keeps its rows of the documents'
#' factor and their contraction with the other modes, and the projection
#' of a documents' column onto the simplex finds its threshold in rounds
#' of sums and counts over the shards (Michelot's 1986 iteration with a
#' grid that brackets the threshold; no pass over the cells); an iteration
#' passes over the cells once per mode, as in memory. (One exception to
#' "up to rounding": a step is kept only when it does not raise the
#' objective (coordinate descent: an iteration; with masks or weights under
#' `loss = "tsallis"`, a column's q-EM step and its sub-problem). Past
#' convergence, as with `tol = 0` and many iterations, a step changes the
#' objective by less than its rounding, and rounding can decide that
#' comparison differently on shards and in memory; the fits then differ in
#' the last iterations by up to about 1e-7. With the default `tol` a fit
#' stops long before.) With
#' `cluster =` the shards are spread over the workers. A failing shard or
#' worker ends the fit with an error of class `aspectr_error_shard` (naming
#' the shard) or `aspectr_error_cluster`.
#'
#' @return An object of class `c("aspectr_plsa", "aspectr_fit")`, a list with
#'   \describe{
#'   \item{lambda}{topic weights \eqn{P(z)}, summing to 1, in decreasing order;}
#'   \item{factors}{list of two matrices: documents x k \eqn{P(d \mid z)} and
#'     terms x k \eqn{P(w \mid z)}, every column summing to 1, with the
#'     dimnames of `x`;}
#'   \item{loss, q, tempering}{the loss and its parameters;}
#'   \item{objective}{the loss after each iteration (`value` is the last;
#'     with a prior, the negative log posterior, see Priors and guided topics);}
#'   \item{prior}{with `prior` or `seeds`: the pseudo-counts (`documents`,
#'     `terms`, in the fit's topic order) and the names of the guided topics
#'     (`guided`);}
#'   \item{iterations, converged}{iterations run by the winning start and
#'     whether it met `tol`;}
#'   \item{run, run_values}{index of the winning start and every start's
#'     final objective;}
#'   \item{time, threads, seed, call}{bookkeeping;}}
#'   and summaries of the data used by the methods (dimensions, total count,
#'   entropy of the data, KL divergence of the fit).
#'
#' @references
#' Hofmann, T. (1999). Probabilistic latent semantic analysis. *UAI'99*.
#'
#' Chi, E. C. and Kolda, T. G. (2012). On tensors, sparsity, and nonnegative
#' factorizations. *SIAM Journal on Matrix Analysis and Applications*,
#' 33(4), 1272-1299.
#'
#' Hsieh, C.-J. and Dhillon, I. S. (2011). Fast coordinate descent methods
#' with variable selection for non-negative matrix factorization. *KDD'11*.
#'
#' Hazan, T. and Shashua, A. (2007). Analysis of L2-loss for probabilistically
#' valid factorizations under general additive noise. Technical report
#' TR-13/2007, Hebrew University.
#'
#' Hazan, T., Haroon, R. and Shashua, A. pLSA for sparse arrays with Tsallis
#' pseudo-additive divergence: noise robustness and algorithm.
#'
#' Huang, K. and Sidiropoulos, N. D. Kullback-Leibler principal component for
#' tensors is not NP-hard.
#'
#' Hofmann, T. (2001). Unsupervised learning by probabilistic latent
#' semantic analysis. *Machine Learning*, 42, 177-196.
#'
#' Lu, Y., Mei, Q. and Zhai, C. (2011). Investigating task performance of
#' probabilistic topic models: an empirical study of PLSA and LDA.
#' *Information Retrieval*, 14(2), 178-203.
#'
#' Watanabe, K. and Zhou, Y. (2022). Theory-driven analysis of large
#' corpora: semisupervised topic classification of the UN speeches.
#' *Social Science Computer Review*, 40(2), 346-366.
#'
#' Michelot, C. (1986). A finite algorithm for finding the projection of a
#' point onto the canonical simplex of R^n. *Journal of Optimization Theory
#' and Applications*, 50(1), 195-200.
#'
#' Varadhan, R. and Roland, C. (2008). Simple and globally convergent
#' methods for accelerating the convergence of any EM algorithm.
#' *Scandinavian Journal of Statistics*, 35(2), 335-353.
#'
#' @seealso [predict.aspectr_plsa()], [topics()], [terms.aspectr_plsa()],
#'   [tidy.aspectr_plsa()], [plot.aspectr_plsa()].
#' @examples
#' fit <- plsa(sotu_dtm, k = 4, seed = 1, max_iter = 100, tol = 1e-4)
#' fit
#' terms(fit, 5)
#' head(topics(fit))
#'
#' # Robust fit under the Tsallis divergence and the L2 (pNMF) fit
#' fit_q <- plsa(sotu_dtm, k = 4, loss = "tsallis", q = 0.5, seed = 1, max_iter = 50, tol = 1e-3)
#' fit_2 <- plsa(sotu_dtm, k = 4, loss = "l2", seed = 1, max_iter = 50, tol = 1e-3)
#'
#' # Smoothed (MAP) fit and guided topics
#' fit_s <- plsa(sotu_dtm, k = 4, seed = 1, max_iter = 100, tol = 1e-4,
#'               prior = list(terms = 0.1, documents = 1))
#' fit_g <- plsa(sotu_dtm, k = 4, seed = 1, max_iter = 100, tol = 1e-4,
#'               seeds = list(economy = c("budget", "inflation"), currency = c("gold", "silver")))
#' terms(fit_g, 6)
#' @export
plsa <- function(x, k, loss = c("kl", "tsallis", "l2"), method = NULL, q = 0.5, tempering = 1, normalize = TRUE,
                 init = "random", nrun = 1, short_iter = 0, short_keep = NULL, max_iter = 1000, tol = 1e-6, seed = NULL, threads = NULL,
                 verbose = FALSE, callback = NULL, cluster = NULL, factor_dir = NULL, assay = NULL,
                 prior = NULL, seeds = NULL, seeds_weight = 0.01, mask = NULL, observed = NULL,
                 weights = NULL, row_weights = NULL, col_weights = NULL, mode_weights = NULL, ...) {
  call <- match.call()
  check_dots_empty(...)
  if (!missing(seeds_weight) && is.null(seeds)) {
    warn_unused_argument("seeds_weight", "it sizes the pseudo-counts of the terms of guided topics, given by {.arg seeds}.",
                         "Give {.arg seeds} (a named list of terms per guided topic), or leave {.arg seeds_weight} out.")
  }
  container <- if (!missing(x)) container_input(x, assay, "rows")
  if (!is.null(container)) x <- container$x
  loss <- match_option(loss, c("kl", "tsallis", "l2"), "loss")
  # (the cluster first, whatever holds the data and whichever fit runs)
  if (!missing(x)) cluster <- check_cluster(cluster, x)
  if (!missing(x) && (nmf_is_weighted(if (!inherits(x, "aspectr_shards")) x, mask, observed, weights,
                                      row_weights, col_weights) || !is.null(mode_weights) ||
                      (is.array(x) && length(dim(x)) > 2 && ntf_is_weighted(x, NULL, NULL, NULL, NULL)))) {
    # missing cells and weights (R/plsa-weights.R)
    return(plsa_weighted(x, k, loss, method, q, normalize, init, nrun, max_iter, tol, seed, threads, verbose,
                         short_iter, short_keep,
                         list(tempering = tempering != 1, prior = !is.null(prior), seeds = !is.null(seeds),
                              callback = !is.null(callback), factor_dir = !is.null(factor_dir)),
                         list(mask = mask, observed = observed, weights = weights, row_weights = row_weights,
                              col_weights = col_weights, mode_weights = mode_weights), call, cluster = cluster))
  }
  if (!is.null(factor_dir) && !missing(x)) {
    # (named after the first mode: the documents of a matrix)
    factor_dir <- factor_paths(factor_dir, x, if (inherits(x, "aspectr_shards")) mode_names(x$dimnames, length(x$dims))[1] else "documents", callback)
  }
  sharded <- !missing(x) && inherits(x, "aspectr_shards")
  if (sharded) {
    # (data in shards: their sizes, names and sums; the cells stay where
    # they are, read by the backend's session)
    check_tensor_shards(x, "plsa")
    data <- list(dims = x$dims, dimnames = x$dimnames, total = shard_total(x), nnz = x$nnz)
  } else {
    # KL fits take a dgCMatrix's cells in its own order, by column, with its
    # own values (no copy): coordinate descent's pass by document visits them
    # through 4-byte positions, and EM's pass goes over blocks of rows, each
    # block's columns in turn (the block's documents' factor stays in
    # cache). q-EM reads them by column too when the documents' factor stays
    # in cache (at most 4 MB) or the documents are no more than the terms;
    # otherwise, and for L2, by row (a copy), which keeps a large documents'
    # factor in order (q-EM by column, measured: as fast on 20000 x 10000 at
    # k = 10, 2.8x as slow on 100000 x 20000 at k = 20, 2.1x as fast on its
    # transpose).
    # (a missing x or k is left to the checks that name it)
    by_column <- loss == "kl" || (loss == "tsallis" && !missing(x) && inherits(x, "Matrix") && length(dim(x)) == 2 && {
      kk <- if (!missing(k) && is.numeric(k) && length(k) == 1 && is.finite(k)) k else 1
      8 * dim(x)[1] * kk <= 2^22 || dim(x)[1] <= dim(x)[2]
    })
    # q-EM by column reads the slots themselves, without an index matrix
    # (the matrix converted once, whichever form is read)
    data <- NULL
    if (by_column && loss == "tsallis") {
      xc <- as_csc(x, "x", rlang::current_env())
      data <- csc_data(xc, "x") %||% as_aspect_data(xc, "x", by_column = TRUE)
      rm(xc)
    }
    if (is.null(data)) data <- as_aspect_data(x, "x", by_column = by_column)
    count_data <- check_count_data(x, data$val, "plsa", likelihood = loss == "kl")
  }
  if (sharded) {
    # (where the conversion of data in memory refuses empty data and warns
    # of non-count data: before k)
    if (x$nnz == 0) abort_input("{.arg x} has no positive entries: there is nothing to fit.", "empty", arg = "x")
    count_data <- shard_count_data(x, "plsa", likelihood = loss == "kl")
  }
  N <- length(data$dims)
  if (N == 2) {
    k <- check_whole(k, "k", min = 1, max = min(data$dims), what = "at most the smaller dimension of `x`")
  } else {
    k <- check_whole(k, "k", min = 1, max = data$nnz %||% length(data$val),
                     what = "at most the number of non-zero cells of `x`")
  }
  q <- check_number(q, "q", 0, 1, lower_open = TRUE, upper_open = TRUE)
  tempering <- check_number(tempering, "tempering", 0, 1, lower_open = TRUE)
  if (tempering != 1 && loss != "kl") {
    abort_input("{.arg tempering} applies to {.code loss = \"kl\"} only; use {.code tempering = 1} with {.code loss = \"{loss}\"}.",
                "argument", arg = "tempering")
  }
  method <- plsa_method(method, loss, tempering)
  if (sharded) {
    # (the refusals of data in shards, from the one table)
    method <- check_shard_capability("plsa", loss, method,
                                     options = list(prior = !is.null(prior) || !is.null(seeds), tensor = N > 2))
  }
  normalize <- check_flag(normalize, "normalize")
  if (!normalize && loss != "l2") {
    abort_input("{.arg normalize} = FALSE applies to {.code loss = \"l2\"} only; KL and Tsallis fits are probability models of {.code x / sum(x)}.",
                "argument", arg = "normalize")
  }
  ctl <- check_fit_controls(nrun, max_iter, tol, seed, threads, verbose)
  nrun <- ctl$nrun; max_iter <- ctl$max_iter; tol <- ctl$tol
  seed <- ctl$seed; threads <- ctl$threads; verbose <- ctl$verbose
  callback <- check_callback(callback)
  stg <- check_staging(short_iter, short_keep, nrun)
  # (the terms' totals, for guided topics: the shards' margins, or the cells')
  pr <- plsa_prior(prior, seeds, seeds_weight, k, data$dims, data$dimnames[[2]],
                   if (sharded) function() Reduce(`+`, lapply(x$meta, function(m) m$margins[[1]])) else
                     function() tabulate_weighted(data$idx[2, ] + 1L, data$val, data$dims[2]),
                   loss, tempering)
  first <- plsa_init(init, "plsa", data$dims, k)
  hook <- fit_hook(callback, verbose, "plsa()",
                   value = if (loss == "l2") function(v) 0.5 * v else identity,
                   model = function(raw) {
                     f <- lapply(seq_len(N), function(n) {
                       m <- raw$factors[[n]]
                       dimnames(m) <- list(data$dimnames[[n]], paste0("topic_", seq_len(k)))
                       m
                     })
                     names(f) <- mode_names(data$dimnames, N)
                     f
                   })
  # (one topic: the product of the margins, one run)
  rank1 <- loss == "kl" && k == 1 && is.null(first) && is.null(pr)
  start <- proc.time()[["elapsed"]]
  # where the cells are: the runs of a start, of the rank-one model, the
  # random starts, the factors' names
  be <- if (sharded) {
    plsa_shard_backend(x, k, loss, method, q, tempering, normalize, rank1, pr, hook, verbose, callback,
                       max_iter, threads, cluster, call, factor_dir)
  } else {
    plsa_memory_backend(data, k, loss, method, q, tempering, normalize, rank1, pr, hook, verbose, callback,
                        threads)
  }
  on.exit(be$close(), add = TRUE)
  if (rank1) {
    out <- fit_pipeline(NULL, NULL, NULL, be$hook, ctl, stg, "plsa()", batch = function(inits) list(be$rank1()))
  } else {
    inits <- with_seed(seed, lapply(seq_len(nrun), function(i) plsa_seeded_start(be$random_start(data$dims, k), pr)))
    if (!is.null(first)) inits[[1]] <- first
    fit_one <- function(init, iters) be$fit(init, iters, tol, be$hook, exact = !is.null(callback))
    out <- fit_pipeline(inits, fit_one, resume_start, be$hook, ctl, stg, "plsa()", sequential = sharded,
                        discard = be$discard)
  }
  values <- out$values
  best <- out$best
  res <- be$finish(out$res)
  fit <- new_plsa(res, data, k = k, loss = loss, q = if (loss == "tsallis") q else NA_real_,
                  tempering = tempering, run = best, values = values,
                  time = proc.time()[["elapsed"]] - start, threads = threads, seed = seed,
                  call = call, own_first = !is.null(res$gathered), summary = be$summary)
  fit$annotation <- container$annotation
  fit <- plsa_with_prior(fit, pr, res$lambda, k)
  fit <- plsa_fields(fit, normalize, method, count_data)
  if (sharded) fit$shards <- length(x$sources)
  finish_progress(fit, verbose, "plsa()", max_iter, tol)
}

# The fit of a plsa() start with the data in memory (as the shards' session
# of plsa_shard_backend(), whose fields it has): `fit(init, iters, tol,
# hook, exact)` one run, `rank1()` the rank-one model, `random_start()`,
# `hook` (coordinate descent's: the model of an NMF run), `finish(run)`,
# `close()`, `discard` and `summary` (none).
plsa_memory_backend <- function(data, k, loss, method, q, tempering, normalize, rank1, pr, hook, verbose, callback,
                                threads) {
  N <- length(data$dims)
  # KL coordinate descent of a matrix without a prior is nmf()'s (see
  # plsa_nmf_data()); with a prior, and for N-way data, the rule of
  # solvers/cd.h
  cd_nmf <- loss == "kl" && method == "cd" && N == 2 && is.null(pr) && !rank1
  if (cd_nmf) {
    nd <- plsa_nmf_data(data)
    hook <- fit_hook(callback, verbose, "plsa()", model = function(raw) {
      f <- plsa_from_nmf(raw$W, raw$H)$factors
      for (n in 1:2) dimnames(f[[n]]) <- list(data$dimnames[[n]], paste0("topic_", seq_len(k)))
      names(f) <- mode_names(data$dimnames, N)
      f
    })
  }
  fit <- function(init, iters, tol, hook, exact) {
    if (cd_nmf) {
      W0 <- init$factors[[1]] / rep(plsa_nmf_scales(init$lambda, nd$T, nd$a), each = data$dims[1])
      r <- cpp_plsa_kl_cd(nmf_ptr(nd), W0, t(init$factors[[2]]) / nd$a, iters, tol, threads, verbose,
                          hook, exact)
      return(plsa_from_nmf_run(r, r$total))
    }
    res <- if (!is.null(data$p)) {
      cpp_plsa_tsallis_csc(data$i, data$p, data$val, data$dims, init$lambda, init$factors, q,
                           iters, tol, threads, verbose, hook, exact, method,
                           init$squarem_bound %||% 1)
    } else {
      cpp_plsa_fit(data$idx, data$val, data$dims, init$lambda, init$factors,
                   loss, q, tempering, iters, tol, threads, verbose, !normalize,
                   hook, exact, method, init$squarem_bound %||% 1,
                   pr$doc, pr$term)
    }
    if (loss == "l2") {
      # one half of the squared error, as every Frobenius objective
      res$objective <- 0.5 * res$objective
      res$initial <- 0.5 * res$initial
    }
    res
  }
  list(fit = fit, rank1 = function() plsa_rank1(data, threads), random_start = random_start, hook = hook,
       finish = identity, close = function() invisible(), discard = NULL, summary = NULL)
}

# the fields of a plsa() fit beyond new_plsa()'s
plsa_fields <- function(fit, normalize, method, count_data) {
  fit$normalize <- normalize
  fit$method <- method
  fit$params$normalize <- normalize
  fit$params$method <- method
  fit$count_data <- count_data
  fit
}

# The algorithms of a plsa() fit, the default first: KL has coordinate
# descent ("cd"), EM ("em") and EM extrapolated by SQUAREM ("squarem", the
# default with tempering, where coordinate descent does not apply); q-EM
# ("em") and its SQUAREM ("squarem", the default) for Tsallis; block
# updates for L2.
plsa_methods <- function(loss, tempering) {
  switch(loss, kl = if (tempering == 1) c("cd", "em", "squarem") else c("squarem", "em"),
         tsallis = c("squarem", "em"), l2 = "blocks")
}

plsa_method <- function(method, loss, tempering, call = rlang::caller_env()) {
  choices <- plsa_methods(loss, tempering)
  if (is.null(method)) return(choices[1])
  if (loss == "kl" && tempering != 1 && identical(method, "cd")) {
    abort_input("{.arg tempering} < 1 is tempered EM: use {.code method = \"squarem\"} or {.code \"em\"} (or leave {.arg method} unset), not {.val cd}.",
                "argument", arg = "method", call = call)
  }
  match_option(method, choices, "method", call = call)
}

# plsa(loss = "kl", method = "cd") of a matrix runs nmf()'s KL coordinate
# descent (the rule PieceKLCD of nmf/piece.h, Hsieh and Dhillon 2011, the
# one that runs nmf(loss = "kl", method = "cd") and every sharded fit) on
# the counts X: the aspect model P(d, w) = sum_z lambda_z U_dz V_wz is the
# NMF W H with W = U diag(lambda) sum(X), H = V', and every NMF model with
# positive column sums of W and row sums of H is such a model normalized
# (P(d | z) = W's columns, P(w | z) = H's rows on the simplex, lambda
# proportional to colSums(W) * rowSums(H)). With sum(W H) = sum(X), which
# the rule's closed-form rescaling restores after every iteration, the
# generalized divergence sum x log(x / v) - x + v is sum(X) D(G || P): the
# same objective, minimized by the same steps; the trace is divided by
# sum(X). Not for a prior (its penalty is on the normalized factors, whose
# normalizers couple the rows of W and of H: no penalty of W and H
# separately, which is all the rule takes; solvers/cd.h majorizes it) nor
# for N-way data (the rule is one of matrices): those run solvers/cd.h.
#
# The data of that fit (as nmf_data(), by column with the rows kept, which
# the rule's update of W reads), divided by the largest count as nmf()
# divides them; T: their total; a: how the start's scale is split between
# W and H (1: W carries it, see plsa_nmf_scales(); the steps are
# equivariant under W D, D^-1 H, and with any other split of a scale of
# the data, as nmf()'s square root of it, counts near the ends of the range
# of doubles would put squares of the factors' entries outside it)
plsa_nmf_data <- function(data) {
  idx <- data$idx
  dims <- data$dims
  i <- idx[1, ]; j <- idx[2, ]; v <- data$val
  if (is.unsorted(j * as.numeric(dims[1]) + i, strictly = TRUE)) {
    ord <- order(j, i, method = "radix")
    i <- i[ord]; j <- j[ord]; v <- v[ord]
  }
  s <- max(v)
  div <- s
  # (counts below the normal range, where 1 / s overflows: divided here)
  if (!is.finite(1 / s)) { v <- v / s; div <- 1 }
  # (the total of the divided counts: sum(x) itself may overflow)
  T <- if (div == 1) sum(v) else sum(v / s)
  list(dense = NULL, i = as.integer(i), p = as.integer(c(0L, cumsum(tabulate(j + 1L, nbins = dims[2])))),
       x = as.numeric(v), dims = as.integer(dims), div = div, rows = TRUE, T = T, a = 1)
}

# The start of that fit: W's column r is U's divided by these (Piece's
# "scale" request divides a piece's rows of W the same way): W = U
# diag(lambda) T a and H = V' / a, so that sum(W H) = T (nmf()'s start
# W = U diag(lambda) sum(x), H = V' in the units of the data divided by
# their largest count)
plsa_nmf_scales <- function(lambda, T, a) 1 / (as.numeric(lambda) * T * a)

# The aspect model of an NMF model (W m x k, H k x n; `ws` the column sums
# of W when W itself is not at hand): lambda and the factors on the simplex.
# A topic whose W column or H row has no mass gets weight 0 and a uniform
# column.
plsa_from_nmf <- function(W, H, ws = colSums(W)) {
  hs <- rowSums(H)
  mass <- ws * hs
  lambda <- mass / sum(mass)
  norm <- function(F, s) {
    ok <- s > 0 & is.finite(s)
    F <- F / rep(ifelse(ok, s, 1), each = nrow(F))
    if (!all(ok)) F[, !ok] <- 1 / nrow(F)
    F
  }
  U <- if (is.matrix(W)) norm(W, ws) else W
  list(lambda = lambda, factors = list(U, norm(t(H), hs)))
}

# A plsa() run from a fit of plsa_nmf_data() (cpp_plsa_kl_cd() or a
# sharded fit: W, H, the trace on pLSA's scale, the generalized divergence
# of the final model): the aspect model, the trace, D(G || P) of the final
# model (with v = W H, V = sum(v): sum x log(x / v) = divergence + T - V and
# D(G || P) = that / T + log(V / T)). `T`: sum(X) as the fit's rule took it.
plsa_from_nmf_run <- function(r, T) {
  ws <- if (is.matrix(r$W)) colSums(r$W) else r$W$sums
  m <- plsa_from_nmf(r$W, r$H, ws)
  V <- sum(ws * rowSums(r$H))
  list(lambda = m$lambda, factors = m$factors, objective = as.numeric(r$objective), initial = r$initial,
       iterations = r$iterations, converged = r$converged, stopped = r$stopped,
       kl = (r$divergence + T - V) / T + log(V / T), wsum = ws, gathered = if (is.matrix(r$W)) TRUE)
}

mode_names <- function(dn, N) {
  if (N == 2) return(c("documents", "terms"))
  nm <- names(dn)
  if (is.null(nm) || any(!nzchar(nm)) || anyDuplicated(nm)) paste0("mode_", seq_len(N)) else nm
}

# Where a start stopped, to run it on (with SQUAREM's step bound, so that
# a resumed start follows the path of one run without stopping).
resume_start <- function(r) list(lambda = r$lambda, factors = r$factors, squarem_bound = r$squarem_bound)

run_value <- function(res) {
  if (length(res$objective)) res$objective[length(res$objective)] else res$value
}

# KL with k = 1: the closed form (Huang and Sidiropoulos, Theorem 2), no iterations.
plsa_rank1 <- function(data, threads) {
  factors <- lapply(seq_along(data$dims), function(n) {
    m <- tabulate_weighted(data$idx[n, ] + 1L, data$val, data$dims[n])
    matrix(m / sum(m), ncol = 1)
  })
  kl <- cpp_loss(data$idx, data$val, data$dims, 1, factors, "kl", 1, threads)
  list(lambda = 1, factors = factors, objective = numeric(0), initial = kl,
       value = kl, iterations = 0L, converged = TRUE, kl = kl)
}

# An n x length(v) matrix whose every row is v (matrix(v, n, byrow = TRUE)
# warns when n is 0)
rows_of <- function(v, n) matrix(rep(v, each = n), n, length(v))

tabulate_weighted <- function(i, w, n) {
  out <- numeric(n)
  ok <- i >= 1L  # 0: a missing mode (lca() with missing responses)
  if (!all(ok)) { i <- i[ok]; w <- w[ok] }
  if (!length(i)) return(out)
  s <- rowsum(w, i, reorder = TRUE)
  out[as.integer(rownames(s))] <- s[, 1]
  out
}

random_start <- function(dims, k) {
  lambda <- stats::runif(k, 0.5, 1.5)
  factors <- lapply(dims, random_factor, k = k)
  list(lambda = lambda / sum(lambda), factors = factors)
}

# A d x k factor of random_start(): uniforms on [0.1, 1], each column
# divided by its sum
random_factor <- function(d, k) {
  # in place, column by column (no temporaries of the factor's size)
  m <- stats::runif(as.numeric(d) * k, 0.1, 1)
  dim(m) <- c(d, k)
  s <- colSums(m)
  for (r in seq_len(k)) m[, r] <- m[, r] / s[r]
  m
}

# random_start() of a sharded fit with the documents' factor kept as the
# generator's state before its draws and the column sums of the draws
# (drawn again a column at a time, each shard's rows taken, by
# each shard's store, see shard_begin()): no matrix of the documents' size outside the
# shards. The same numbers, and the stream moves on as random_start()
# moves it.
random_start_lazy <- function(dims, k) {
  lambda <- stats::runif(k, 0.5, 1.5)
  state <- get(".Random.seed", envir = globalenv(), inherits = FALSE)
  d0 <- as.numeric(dims[1])
  # (uniforms are drawn one by one: k draws of d0 are the draw of d0 * k)
  colsum <- vapply(seq_len(k), function(r) colSums(matrix(stats::runif(d0, 0.1, 1), ncol = 1)), numeric(1))
  list2env(list(lambda = lambda / sum(lambda),
                factors = c(list(NULL), lapply(dims[-1], random_factor, k = k)),
                state = state, colsum = colsum, k = k, d0 = d0))
}

# Evaluates `code` with R's RNG seeded by `seed` (restoring the previous
# state afterwards), or with the current RNG state when `seed` is NULL. The
# generator kinds are fixed for seeded draws, so a given seed gives the same
# numbers in any session and in future's workers (which use L'Ecuyer-CMRG).
with_seed <- function(seed, code) {
  if (is.null(seed)) return(code)
  env <- globalenv()
  old <- env[[".Random.seed"]]
  if (is.integer(old) && length(old) && identical(old[[1L]], 10403L)) {
    # the generators are already Mersenne-Twister, Inversion and Rejection
    # (the kinds are the first element of .Random.seed, read again at the
    # next draw): restoring the seed restores everything
    on.exit(assign(".Random.seed", old, envir = env), add = TRUE)
  } else {
    old_kind <- RNGkind()
    on.exit({
      RNGkind(old_kind[1], old_kind[2], old_kind[3])
      if (!is.null(old)) assign(".Random.seed", old, envir = env) else
        if (exists(".Random.seed", envir = env, inherits = FALSE)) rm(".Random.seed", envir = env)
    }, add = TRUE)
  }
  set.seed(seed, kind = "Mersenne-Twister", normal.kind = "Inversion", sample.kind = "Rejection")
  code
}

# Runs the starts sequentially or, under a non-sequential future plan,
# through future.apply. Starting points were drawn beforehand, so both give
# identical results.
map_runs <- function(inits, fun, sequential = FALSE) {
  if (length(inits) > 1 && !sequential && use_future()) {
    return(future.apply::future_lapply(inits, fun, future.seed = NULL))
  }
  lapply(inits, fun)
}

use_future <- function() {
  requireNamespace("future", quietly = TRUE) &&
    requireNamespace("future.apply", quietly = TRUE) &&
    !inherits(future::plan(), "sequential")
}

# (`own_first`: the first factor is a matrix that only `res` and the runs
# it came from refer to, the shards' gather's, put in order in place)
new_plsa <- function(res, data, k, loss, q, tempering, run, values, time, threads,
                     seed, call, sort = TRUE, prefix = "topic_", summary = NULL, own_first = FALSE) {
  lambda <- as.numeric(res$lambda)
  ord <- if (sort) plsa_order(lambda) else seq_len(k)
  topic_names <- paste0(prefix, seq_len(k))
  factors <- lapply(seq_along(res$factors), function(n) {
    f <- res$factors[[n]]
    dn <- list(data$dimnames[[n]], topic_names)
    if (inherits(f, "aspectr_factor_files")) return(f)  # (written in this order, named)
    if (n == 1 && own_first && is.double(f) && is.matrix(f) && identical(dim(f), c(as.integer(data$dims[1]), as.integer(k)))) {
      cpp_permute_columns_owned(f, ord, dn)
      return(f)
    }
    f <- f[, ord, drop = FALSE]
    dimnames(f) <- dn
    f
  })
  names(factors) <- mode_names(data$dimnames, length(data$dims))
  # sum g log g with G = val / total (by way of max(val): the total may
  # overflow) and the totals by first index, in one C++ pass
  summ <- summary %||% cpp_data_summary(data$idx %||% data$i, data$val, data$dims[1])
  fit <- list(
    lambda = stats::setNames(lambda[ord], topic_names),
    factors = factors,
    loss = loss, q = q, tempering = tempering,
    objective = as.numeric(res$objective),
    value = run_value(res),
    initial = res$initial,
    iterations = as.integer(res$iterations),
    converged = isTRUE(res$converged),
    k = k, run = run, run_values = values,
    dims = data$dims, dimnames = data$dimnames,
    total = data$total, nnz = data$nnz %||% length(data$val),
    neg_entropy = summ$neg_entropy,
    doc_totals = summ$doc_totals,
    kl = res$kl,
    time = time, threads = threads, seed = seed, call = call, stopped = isTRUE(res$stopped)
  )
  new_aspectr_fit("plsa", fit, factors = fit$factors, weights = fit$lambda,
                  params = list(q = q, tempering = tempering, normalize = TRUE))
}

# the order of a fit's topics: by weight, the largest first; weights equal
# to 10 significant digits in the order of the fit's components, so that
# fits equal up to rounding (in memory, in shards) order tied topics alike
plsa_order <- function(lambda) order(-signif(as.numeric(lambda), 10))

# init of the aspect-model fitters (plsa, lca): NULL for random starts, or
# the first start as list(lambda, factors)
plsa_init <- function(init, family, dims, k, call = rlang::caller_env()) {
  if (inherits(init, "aspectr_fit")) {
    init <- warm_start(init, family, k, dims, call = call)
    return(check_aspect_init(list(lambda = as.numeric(init$lambda), factors = init$factors), dims, k,
                             call = call))
  }
  if (is.list(init)) return(check_aspect_init(init, dims, k, call = call))
  match_option(init, "random", "init", call = call)
  NULL
}
