// aspectr/solvers/pieces_squarem.h — SQUAREM (squarem.h) of EM, tempered
// EM, q-EM or the weighted q-EM on data in pieces (pieces_em.h: PieceEM,
// PieceQEM; plsa_weighted_pieces.h: PieceWeightedQEM), the data in memory
// being one piece.
//
// The step is squarem.h's squarem_step(), with its
// arithmetic (squarem_norms(), squarem_entries(), squarem_weights()) on
// the global part of the model (lambda and the shared modes' factors) in
// the rule and on the documents' factor in the pieces, which keep theta0,
// theta1 and theta2 of their rows:
//   "sq_save" slot   the pieces' rows of the documents' factor (normalized
//                    by the pending row sums) kept as theta0 (slot 0) or
//                    theta1 (slot 1)
//   "sq_norms"       kept as theta2 -> rr, vv (the pieces' parts of
//                    ||r||^2 and ||v||^2, added over them; a piece that
//                    is the only one, Pieces::in_place(), gets the sums
//                    so far as rr and vv and returns them continued)
//   "sq_extrapolate" a -> sum (k: the row sums over the pieces of
//                    theta0 + 2 a r + a^2 v floored at 1/10 of theta2's
//                    entries; the pieces normalize their rows by them
//                    with the next request, a row without mass taking
//                    theta2's, as normalize_rows() does in one object)
//   "sq_restore"     theta2 again (the extrapolated step rejected)
// The norms are over all of theta, summed in the order lambda, the
// documents' factor, the shared modes' factors (a piece that is the only
// one continues the sums), so that a fit in pieces is the in-memory fit up
// to rounding: the same step lengths, the same accepted steps, the same
// step bound.
#ifndef ASPECTR_SOLVERS_PIECES_SQUAREM_H
#define ASPECTR_SOLVERS_PIECES_SQUAREM_H

#include <algorithm>
#include <cmath>
#include <vector>
#include "pieces_em.h"
#include "squarem.h"

namespace aspectr {

template <class Base>
class PieceSquarem {
 public:
  explicit PieceSquarem(Base& base) : base_(&base) {}
  static constexpr bool kLagged = true;

  // the step-length bound a_max (read and set to resume a fit where an
  // earlier call left it)
  double step_bound() const { return step_max_; }
  void set_step_bound(double a) { step_max_ = std::isfinite(a) && a >= 1.0 ? a : 1.0; }

  double step(const Pieces& P, AspectPieceModel& M, int threads) {
    Ops ops{this, &P, &M, threads};
    return squarem_step(ops, step_max_);
  }

  double loss(const Pieces& P, AspectPieceModel& M, int threads) { return base_->loss(P, M, threads); }

 private:
  // squarem_step()'s operations (squarem.h) on the model in pieces: the
  // global part here, theta0, theta1 and theta2 kept in the members; the
  // documents' factor by the pieces' requests above, or by the one piece
  // called directly (AspectPieceModel::piece). The norms are summed in the
  // order lambda, the documents', the others (one piece in this process
  // continues the sums, and returns them).
  struct Ops {
    PieceSquarem* rule;
    const Pieces* P;
    AspectPieceModel* M;
    int threads;
    double step(double* merit) { return rule->base_->step_merit(*P, *M, threads, merit); }
    // (the piece called directly where the model has it, pieces_em.h)
    void keep(int t) {
      if (M->piece != nullptr) {
        M->colsum.reset();
        M->piece->sq_save(t);
      } else {
        P->map(M->request("sq_save").with("slot", static_cast<double>(t)));
      }
      (t == 0 ? rule->lam0_ : rule->lam1_) = M->lambda;
      (t == 0 ? rule->F0_ : rule->F1_) = M->F;
    }
    void norms(double& rr, double& vv) {
      squarem_norms(rule->lam0_, rule->lam1_, M->lambda, rr, vv);
      if (M->piece != nullptr) {
        M->colsum.reset();
        M->piece->sq_norms(rr, vv);
      } else {
        Request nr = M->request("sq_norms");
        if (P->in_place()) nr.with("rr", rr).with("vv", vv);
        const Stats nrm = P->map(nr);
        if (P->in_place()) {
          rr = nrm.num("rr");
          vv = nrm.num("vv");
        } else {
          rr += nrm.num("rr");
          vv += nrm.num("vv");
        }
      }
      for (std::size_t n = 0; n < M->F.size(); ++n) squarem_norms(rule->F0_[n], rule->F1_[n], M->F[n], rr, vv);
    }
    bool extrapolate(double a) {
      rule->lam2_ = M->lambda;
      rule->F2_ = M->F;
      // (weights that cannot be renormalized: theta2, which the pieces hold)
      if (!squarem_weights(rule->lam0_, rule->lam1_, rule->lam2_, a, M->lambda)) return false;
      for (std::size_t n = 0; n < M->F.size(); ++n) {
        squarem_entries(rule->F0_[n], rule->F1_[n], rule->F2_[n], a, M->F[n]);
        normalize_rows(M->F[n], rule->F2_[n]);
      }
      if (M->piece != nullptr) {
        // (the piece normalizes its rows at once: no row sums pending)
        M->colsum.reset();
        M->piece->sq_extrapolate(a);
        return true;
      }
      const Stats ex = P->map(M->request("sq_extrapolate").with("a", a));
      M->colsum = arma::mat(arma::vectorise(ex.mat("sum")));
      return true;
    }
    void restore() {
      M->lambda = rule->lam2_;
      M->F = rule->F2_;
      M->colsum.reset();
      if (M->piece != nullptr) M->piece->sq_restore();
      else P->map(M->request("sq_restore"));
    }
  };

  Base* base_;
  double step_max_ = 1.0;
  // theta0, theta1, theta2's global parts of the current step
  arma::vec lam0_, lam1_, lam2_;
  std::vector<arma::mat> F0_, F1_, F2_;
};

}  // namespace aspectr

#endif
