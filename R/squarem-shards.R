# plsa() by SQUAREM (Varadhan and Roland 2008) of data in shards(): the
# rule (solvers/pieces_squarem.h, PieceSquarem, driven by shard_em_fit())
# extrapolates the weights and the shared modes' factors itself and asks
# the shards for their rows of the documents' factor:
#  "sq_save" (slot 0 or 1): the rows, normalized, kept as theta0 or theta1;
#  "sq_norms": kept as theta2, and their parts of ||r||^2 and ||v||^2;
#  "sq_extrapolate" (a): theta0 + 2 a r + a^2 v floored at a tenth of
#     theta2's entries, and its row sums, which added over all shards
#     normalize it with the next operation (a row without mass anywhere
#     takes theta2's, see shard_normalize());
#  "sq_restore": theta2 again (the extrapolated step was rejected).
# The arithmetic is the in-memory rule's (cpp_squarem_piece_norms(),
# cpp_squarem_piece_extrapolate()), so the fit is the in-memory fit up to
# rounding.

# SQUAREM's operations on a store (see shard_op_run(); the pending row sums
# have normalized every shard's rows before): each shard's part, added over
# the store's shards. The iterates are copies of their own (a step in place
# writes over the documents' factor, see cpp_em_shard_file()).
shard_squarem_op <- function(st, held, op, args) {
  own <- function(m) m + 0
  parts <- NULL
  for (key in names(st$shards)) {
    h <- st$shards[[key]]
    sq <- h$sq %||% list(NULL, NULL, NULL)
    r <- NULL
    if (op == "sq_save") {
      sq[[args$slot + 1L]] <- own(h$F0)
    } else if (op == "sq_norms") {
      sq[[3]] <- own(h$F0)
      n <- cpp_squarem_piece_norms(sq[[1]], sq[[2]], sq[[3]])
      r <- list(rr = n[1], vv = n[2])
    } else if (op == "sq_extrapolate") {
      e <- cpp_squarem_piece_extrapolate(sq[[1]], sq[[2]], sq[[3]], args$a)
      # (normalized by the row sums over all shards at the next operation,
      # shard_normalize(); theta2's rows where they have no mass)
      st$shards[[key]]$Y0 <- e$x
      st$shards[[key]]$F0 <- own(sq[[3]])
      r <- list(sum = e$sum)
    } else if (op == "sq_restore") {
      st$shards[[key]]$F0 <- own(sq[[3]])
      st$shards[[key]]$Y0 <- NULL
    } else {
      stop("unknown operation ", op)
    }
    if (op %in% c("sq_extrapolate", "sq_restore")) {
      st$shards[[key]]$pending <- FALSE
      st$shards[[key]]$dead <- NULL
    }
    st$shards[[key]]$sq <- sq
    if (!is.null(r)) parts <- if (is.null(parts)) r else shard_add(parts, r)
  }
  list(ids = held, stats = parts)
}
