// aspectr/aspectr.h — umbrella header of the aspectr C++ core.
// Header-only, depends on Armadillo and the C++ standard library only (no R).
#ifndef ASPECTR_ASPECTR_H
#define ASPECTR_ASPECTR_H

#include "data.h"
#include "parallel.h"
#include "kernels.h"
#include "simplex.h"
#include "loss.h"
#include "control.h"
#include "driver.h"
#include "solvers/normalize.h"
#include "solvers/em.h"
#include "solvers/cd.h"
#include "patterns.h"
#include "shard_file.h"
#include "summary.h"
#include "solvers/multistart.h"
#include "solvers/qem.h"
#include "solvers/qem_shard.h"
#include "solvers/squarem.h"
#include "solvers/pps.h"
#include "solvers/cp.h"
#include "solvers/foldin.h"
#include "nmf/data.h"
#include "nmf/rules.h"
#include "nmf/kl_cd.h"
#include "nmf/range.h"
#include "nmf/shard.h"
#include "pieces.h"
#include "nmf/piece.h"
#include "solvers/pieces_em.h"
#include "sym/symtensor.h"
#include "sym/sntf.h"
#include "sym/symnmf.h"
#include "sym/hypergraph.h"

#endif
