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
// request is its own and is not read again (normalize.h's mstep_mode(),
// power_update_rows(), normalize_rows()). The rules also call it directly
// (AspectLocalPiece, pieces_em.h): no request is built, which on a small
// table (lca()'s) costs as much as the E-step.
#ifndef ASPECTR_SOLVERS_PIECES_MEMORY_H
#define ASPECTR_SOLVERS_PIECES_MEMORY_H

#include <cmath>
#include <limits>
#include <memory>
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
class AspectPieceCommon : public AspectLocalPiece {
 public:
  explicit AspectPieceCommon(arma::mat& F0) : F0_(&F0) {}
  // the documents' factor now at F0 (the piece made again for another model)
  void rebind(arma::mat& F0) { F0_ = &F0; }

  // SQUAREM's operations (AspectLocalPiece; the requests of run_common())
  void sq_save(int slot) override { sq_[slot == 0 ? 0 : 1] = *F0_; }
  void sq_norms(double& rr, double& vv) override {
    sq_[2] = *F0_;
    squarem_norms(sq_[0], sq_[1], sq_[2], rr, vv);
  }
  void sq_extrapolate(double a) override {
    squarem_entries(sq_[0], sq_[1], sq_[2], a, *F0_);
    // (the row sums, which the request returns; then the extrapolated
    // model's normalization in one object)
    sums_.set_size(F0_->n_rows, 1);
    for (arma::uword c = 0; c < F0_->n_rows; ++c) {
      double tot = 0.0;
      for (arma::uword i = 0; i < F0_->n_cols; ++i) tot += (*F0_)(c, i);
      sums_(c, 0) = tot;
    }
    normalize_rows(*F0_, sq_[2]);
  }
  void sq_restore() override { *F0_ = sq_[2]; }
  double em_step(const AspectPieceModel&, int, double&, std::vector<arma::mat>&, arma::vec&) override {
    throw std::logic_error("the piece has no EM rule");
  }
  double em_loss(const AspectPieceModel&, int, double&) override {
    throw std::logic_error("the piece has no EM rule");
  }

 protected:
  // runs r if it is one of these requests (true), into s
  bool run_common(const Request& r, Stats& s) {
    const std::string& op = r.op;
    if (op == "gather") {
      s.set("F0", arma::mat(F0_->t()));
      return true;
    }
    if (op == "sq_save") {
      sq_save(r.num("slot", 0.0) == 0.0 ? 0 : 1);
      return true;
    }
    if (op == "sq_norms") {
      double rr = r.num("rr", 0.0), vv = r.num("vv", 0.0);
      sq_norms(rr, vv);
      s.set("rr", rr);
      s.set("vv", vv);
      return true;
    }
    if (op == "sq_extrapolate") {
      sq_extrapolate(r.num("a", 1.0));
      s.set("sum", arma::mat(sums_));
      return true;
    }
    if (op == "sq_restore") {
      sq_restore();
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
  // mv_ made the model of `lambda` and the shared modes F with the
  // piece's documents' factor, read in place (views; no memory allocated
  // once mv_ has the model's order)
  void view_into(const arma::vec& lambda, const std::vector<arma::mat>& F) {
    view_of(mv_.lambda, lambda);
    mv_.F.resize(1 + F.size());
    view_of(mv_.F[0], *F0_);
    for (std::size_t n = 0; n < F.size(); ++n) view_of(mv_.F[n + 1], F[n]);
  }
  AspectModel mv_;
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
  arma::mat sums_;    // the extrapolated rows' sums before their normalization
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

  // the E-step and the documents' M-step (AspectLocalPiece; the request
  // "step"), of the model in M (its views kept in mv_)
  double em_step(const AspectPieceModel& M, int threads, double& merit, std::vector<arma::mat>& Y,
                 arma::vec& lam) override {
    if (em_ == nullptr) throw std::logic_error("the piece has no EM rule");
    if constexpr (std::is_same<DataT, SparseTensor>::value) {
      view_into(M.lambda, M.F);
      const double value = em_->estep(*G_, mv_, threads, &merit, Y, lam);
      // (the M-step of the documents' mode)
      mstep_mode(Y[0], *F0_);
      return value;
    } else {
      throw std::logic_error("EM needs the cells as a tensor");
    }
  }
  double em_loss(const AspectPieceModel& M, int threads, double& penalty) override {
    if (em_ == nullptr) throw std::logic_error("the piece has no EM rule");
    if constexpr (std::is_same<DataT, SparseTensor>::value) {
      view_into(M.lambda, M.F);
      penalty = em_->penalty(mv_);
      return em_->loss(*G_, mv_, threads);
    } else {
      throw std::logic_error("EM needs the cells as a tensor");
    }
  }

  Stats run(const Request& r, int threads) {
    Stats s;
    const std::string& op = r.op;
    if (op == "step" || op == "loss") {
      AspectPieceModel M;
      const arma::mat& l = r.mat("lambda");
      M.lambda = arma::vec(const_cast<double*>(l.memptr()), l.n_elem, false, true);
      M.F = shared_views(r, "F");
      if (op == "loss") {
        double penalty = 0.0;
        s.set("value", em_loss(M, threads, penalty));
        s.set("penalty", penalty);
        return s;
      }
      std::vector<arma::mat> Y;
      arma::vec lam;
      double merit = 0.0;
      const double value = em_step(M, threads, merit, Y, lam);
      for (std::size_t n = 1; n < Y.size(); ++n) s.set("y" + std::to_string(n), std::move(Y[n]));
      s.set("lam", arma::mat(std::move(lam)));
      s.set("value", value);
      s.set("merit", merit);
      return s;
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
// `direct`: P's piece, which the rules then call directly (AspectLocalPiece),
// or null.
template <class Rule, class Callback>
FitTrace run_aspect_piece(Rule& base, const Pieces& P, arma::mat& F0, AspectModel& M, const Control& ctl,
                          Callback& cb, bool squarem, double& bound, AspectLocalPiece* direct = nullptr) {
  AspectPieceModel PM;
  PM.lambda = std::move(M.lambda);
  PM.F.assign(std::make_move_iterator(M.F.begin() + 1), std::make_move_iterator(M.F.end()));
  PM.P = &P;
  PM.piece = direct;
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

// EM, or SQUAREM of it, of data in memory with the interface of the
// in-memory rules (run_solver(), multistart.h): PieceEM (in PieceSquarem)
// on the data as one AspectMemoryPiece, which the rules call directly, so
// that lca()'s starts run the rules of every other backend. An object
// keeps a start's state (SQUAREM's step bound, the piece's SQUAREM blocks,
// the statistics' memory): one per start; the E-step's EMRule may be
// shared by all of them once bound.
class AspectEMRule {
 public:
  AspectEMRule(EMRule& em, bool squarem) : em_(&em), squarem_(squarem), sq_(rule_) {}
  AspectEMRule(const AspectEMRule& o) : em_(o.em_), squarem_(o.squarem_), sq_(rule_) {
    sq_.set_step_bound(o.sq_.step_bound());
  }
  AspectEMRule& operator=(const AspectEMRule&) = delete;
  static constexpr bool kLagged = true;

  void bind(const SparseTensor& G) { em_->bind(G); }
  double step_bound() const { return sq_.step_bound(); }
  void set_step_bound(double a) { sq_.set_step_bound(a); }

  double step(const SparseTensor& G, AspectModel& M, int threads) {
    return with(G, M, [&](const Pieces& P, AspectPieceModel& PM) {
      return squarem_ ? sq_.step(P, PM, threads) : rule_.step(P, PM, threads);
    });
  }
  double loss(const SparseTensor& G, const AspectModel& M, int threads) {
    AspectModel C = M;
    return with(G, C, [&](const Pieces& P, AspectPieceModel& PM) { return rule_.loss(P, PM, threads); });
  }

 private:
  // f on M's model in pieces: the piece with M's documents' factor, PM_
  // with views of its weights and other modes (the rules change them in
  // place, never their sizes)
  template <class F>
  double with(const SparseTensor& G, AspectModel& M, F f) {
    // (the E-step's EMRule is bound to one tensor for its life)
    if (G_ != nullptr && G_ != &G) throw std::logic_error("an AspectEMRule serves the one tensor it first took");
    if (!piece_) {
      G_ = &G;
      piece_.reset(new AspectMemoryPiece<SparseTensor>(G, M.F[0], em_, 1.0));
      P_.reset(new LocalPieces<AspectMemoryPiece<SparseTensor>>({piece_.get()}, 1));
      PM_.P = P_.get();
      PM_.piece = piece_.get();
    }
    piece_->rebind(M.F[0]);
    view_of(PM_.lambda, M.lambda);
    PM_.F.resize(M.F.size() - 1);
    for (std::size_t n = 0; n + 1 < M.F.size(); ++n) view_of(PM_.F[n], M.F[n + 1]);
    return f(*P_, PM_);
  }

  EMRule* em_;
  bool squarem_;
  PieceEM rule_;
  PieceSquarem<PieceEM> sq_;
  const SparseTensor* G_ = nullptr;
  std::unique_ptr<AspectMemoryPiece<SparseTensor>> piece_;
  std::unique_ptr<LocalPieces<AspectMemoryPiece<SparseTensor>>> P_;
  AspectPieceModel PM_;
};

}  // namespace aspectr

#endif
