// aspectr/solvers/pieces_memory.h — the aspect model's data in memory as
// one piece (pieces.h) of the rules in pieces (pieces_em.h: PieceEM,
// PieceQEM; pieces_squarem.h: PieceSquarem), so that a fit of a matrix or
// tensor in memory runs the very rules that shards, shard files and
// clusters run.
//
// The piece holds the documents' factor (k x d_0, moved in from the model
// and back out after the fit: no copy) and answers the requests of
// pieces_em.h and pieces_squarem.h for all the cells. Being the whole
// data, it normalizes its documents' factor at once, with its own row
// sums (those of all pieces), so the `colsum` a rule sends with its next
// request is its own and is not read again; the arithmetic is that of the
// former in-memory rules (EMRule::mstep(), power_update_rows(),
// SquaremRule::extrapolate()).
#ifndef ASPECTR_SOLVERS_PIECES_MEMORY_H
#define ASPECTR_SOLVERS_PIECES_MEMORY_H

#include <cmath>
#include <limits>
#include <string>
#include <type_traits>
#include <vector>
#include "../kernels.h"
#include "../loss.h"
#include "../pieces.h"
#include "em.h"
#include "pieces_em.h"
#include "pieces_squarem.h"
#include "qem_shard.h"

namespace aspectr {

// What the piece does whatever its cells' form: its documents' factor,
// SQUAREM's requests and the gathering of the factor, the models of the
// requests (not a template: compiled once).
class AspectPieceCommon {
 public:
  explicit AspectPieceCommon(arma::mat& F0) : F0_(&F0) {}

 protected:
  // runs r if it is one of these requests (true), into s
  bool run_common(const Request& r, Stats& s) {
    const std::string& op = r.op;
    if (op == "gather") {
      s.set("F0", arma::mat(F0_->t()));
      return true;
    }
    if (op == "sq_save") {
      sq_[r.num("slot", 0.0) == 0.0 ? 0 : 1] = *F0_;
      return true;
    }
    if (op == "sq_norms") {
      sq_[2] = *F0_;
      double rr = r.num("rr", 0.0), vv = r.num("vv", 0.0);
      squarem_norms(sq_[0], sq_[1], sq_[2], rr, vv);
      s.set("rr", rr);
      s.set("vv", vv);
      return true;
    }
    if (op == "sq_extrapolate") {
      squarem_entries(sq_[0], sq_[1], sq_[2], r.num("a", 1.0), *F0_);
      arma::mat sum(F0_->n_rows, 1);
      for (arma::uword c = 0; c < F0_->n_rows; ++c) {
        double tot = 0.0;
        for (arma::uword i = 0; i < F0_->n_cols; ++i) tot += (*F0_)(c, i);
        sum(c, 0) = tot;
      }
      // (SquaremRule::extrapolate()'s normalization)
      normalize_rows(*F0_, sq_[2]);
      s.set("sum", std::move(sum));
      return true;
    }
    if (op == "sq_restore") {
      *F0_ = sq_[2];
      return true;
    }
    return false;
  }
  // the number of shared modes a request carries (F1, F2, ...)
  static std::size_t shared(const Request& r) { return r.numbered("F").size(); }
  // the request's matrices `name`1, `name`2, ... read in place
  static std::vector<arma::mat> shared_views(const Request& r, const char* name) {
    const std::vector<const arma::mat*> in = r.numbered(name);
    std::vector<arma::mat> out;
    out.reserve(in.size());  // (no reallocation: the views stay views)
    for (const arma::mat* m : in) out.emplace_back(const_cast<double*>(m->memptr()), m->n_rows, m->n_cols, false, true);
    return out;
  }
  // the model of a request, read in place: its weights and shared modes,
  // with the piece's documents' factor
  AspectModel view(const Request& r) const {
    AspectModel M;
    const arma::mat& l = r.mat("lambda");
    M.lambda = arma::vec(const_cast<double*>(l.memptr()), l.n_elem, false, true);
    const std::vector<const arma::mat*> F = r.numbered("F");
    M.F.reserve(1 + F.size());
    M.F.emplace_back(F0_->memptr(), F0_->n_rows, F0_->n_cols, false, true);
    for (const arma::mat* f : F) M.F.emplace_back(const_cast<double*>(f->memptr()), f->n_rows, f->n_cols, false, true);
    return M;
  }

  arma::mat* F0_;
  arma::mat sq_[3];   // SQUAREM's theta0, theta1, theta2 of the documents' factor
};

// DataT: a SparseTensor (EM, tempered EM, q-EM) or a CscMatrix (q-EM).
// `em`: the E-step's rule (bound to G's values and counts, with the
// documents' part of a prior only: the terms' is PieceEM's), or null for
// q-EM; `q`: q-EM's exponent.
template <class DataT>
class AspectMemoryPiece : public AspectPieceCommon {
 public:
  AspectMemoryPiece(const DataT& G, arma::mat& F0, EMRule* em, double q)
      : AspectPieceCommon(F0), G_(&G), em_(em), q_(q) {}

  Stats run(const Request& r, int threads) {
    Stats s;
    const std::string& op = r.op;
    if (op == "step" || op == "loss") {
      if (em_ == nullptr) throw std::logic_error("the piece has no EM rule");
      if constexpr (std::is_same<DataT, SparseTensor>::value) {
        const AspectModel M = view(r);
        if (op == "loss") {
          s.set("value", em_->loss(*G_, M, threads));
          s.set("penalty", em_->penalty(M));
          return s;
        }
        std::vector<arma::mat> Y;
        arma::vec lam;
        double merit = 0.0;
        const double value = em_->estep(*G_, M, threads, &merit, Y, lam);
        // (EMRule::mstep() of the documents' mode)
        mstep_mode(Y[0], *F0_);
        for (std::size_t n = 1; n < Y.size(); ++n) s.set("y" + std::to_string(n), std::move(Y[n]));
        s.set("lam", arma::mat(std::move(lam)));
        s.set("value", value);
        s.set("merit", merit);
        return s;
      } else {
        throw std::logic_error("EM needs the cells as a tensor");
      }
    }
    if (op == "qem_docs") {
      const AspectModel M = view(r);
      const double tsum = qem_weights(*G_, M, q_, threads, t_);
      arma::vec a, mx;
      qem_shard_docs(*G_, M, t_, q_, threads, a, lg_, mx);
      s.set("tsum", tsum);
      s.set("a", arma::mat(std::move(a)));
      s.set("mx", arma::mat(std::move(mx)));
      return s;
    }
    if (op == "qem_norm") {
      // the documents' update of power_update_rows() from the logs of
      // "qem_docs" and the maxima (a dead row keeps the old one), then
      // V_0 = old^q o new^(1-q) and mode 2's MTTKRP, as in one object:
      // nothing is left to scale, and the rows' totals reported are 1
      const arma::vec mx = arma::vectorise(r.mat("mx"));
      const double ninf = -std::numeric_limits<double>::infinity();
      arma::mat u(lg_.n_rows, lg_.n_cols);
      for (arma::uword c = 0; c < u.n_rows; ++c) {
        if (!(mx[c] > ninf)) {
          u.row(c) = F0_->row(c);
          continue;
        }
        double tot = 0.0;
        for (arma::uword i = 0; i < u.n_cols; ++i) {
          u(c, i) = std::exp(lg_(c, i) - mx[c]);
          tot += u(c, i);
        }
        for (arma::uword i = 0; i < u.n_cols; ++i) u(c, i) /= tot;
      }
      lg_.reset();
      V0_ = arma::pow(*F0_, q_) % arma::pow(u, 1.0 - q_);
      *F0_ = std::move(u);
      std::vector<const arma::mat*> Vp(1 + shared(r), &V0_);
      std::vector<arma::mat> F = shared_views(r, "F");
      for (std::size_t n = 0; n < F.size(); ++n) Vp[n + 1] = &F[n];
      arma::mat B;
      mttkrp(*G_, Vp, 1, B, threads, t_.memptr());
      s.set("tot", arma::mat(F0_->n_rows, 1, arma::fill::ones));
      s.set("B", std::move(B));
      return s;
    }
    if (op == "qem_mode") {
      std::vector<arma::mat> V = shared_views(r, "V");
      std::vector<const arma::mat*> Vp(1 + V.size(), &V0_);
      for (std::size_t n = 0; n < V.size(); ++n) Vp[n + 1] = &V[n];
      arma::mat B;
      mttkrp(*G_, Vp, static_cast<std::size_t>(r.num("mode", 0.0)), B, threads, t_.memptr());
      s.set("B", std::move(B));
      return s;
    }
    if (op == "qem_loss") {
      s.set("sum", cell_sum(Loss::Tsallis, q_, *G_, view(r), threads));
      return s;
    }
    if (run_common(r, s)) return s;
    throw std::logic_error("unknown request '" + op + "' of the aspect model's piece");
  }

 private:
  const DataT* G_;
  EMRule* em_;
  double q_;
  arma::vec t_;       // q-EM's weights of the step's model
  arma::mat lg_, V0_;  // q-EM's documents' logs, V_0
};

// A rule of pieces_em.h (or SQUAREM of it, when `squarem`, from the step
// bound `bound`, which is updated) on the data in memory as one piece P
// (an AspectMemoryPiece of the documents' factor F0, M's moved there by
// the caller: this moves it back).
template <class Rule, class Callback>
FitTrace run_aspect_piece(Rule& base, const Pieces& P, arma::mat& F0, AspectModel& M, const Control& ctl,
                          Callback& cb, bool squarem, double& bound) {
  AspectPieceModel PM;
  PM.lambda = std::move(M.lambda);
  PM.F.assign(std::make_move_iterator(M.F.begin() + 1), std::make_move_iterator(M.F.end()));
  PM.P = &P;
  FitTrace tr;
  if (squarem) {
    PieceSquarem<Rule> rule(base);
    rule.set_step_bound(bound);
    tr = run_solver(rule, P, PM, ctl, cb);
    bound = rule.step_bound();
  } else {
    tr = run_solver(base, P, PM, ctl, cb);
  }
  M.lambda = std::move(PM.lambda);
  M.F[0] = std::move(F0);
  for (std::size_t n = 0; n < PM.F.size(); ++n) M.F[n + 1] = std::move(PM.F[n]);
  return tr;
}

}  // namespace aspectr

#endif
