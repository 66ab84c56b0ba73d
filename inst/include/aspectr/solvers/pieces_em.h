// aspectr/solvers/pieces_em.h — EM and q-EM of the aspect model on data
// in pieces (pieces.h): the documents (the first mode) split by rows, each
// piece with its rows of the documents' factor, every other mode whole.
//
// A step asks every piece for its part of the E-step statistics of the
// shared modes (k x d_n, added over the pieces) and of the weights; each
// piece updates its documents' factor itself (normalized by the row sums
// over all pieces with the next request: the pieces keep them). The rule
// then makes the in-memory M-step of the shared modes and the weights, so
// that a fit in pieces equals the in-memory fit up to rounding, and the
// driver (driver.h) runs its loop, stopping rule and callback as for every
// other rule. Where the pieces are (in this process, in files, on the
// workers of a cluster) is the Pieces' business.
//
// Requests (inputs: lambda (k x 1) and F1 .. F{N-1}, the shared modes'
// factors k x d_n, of the model the request is about; colsum when the
// rule normalizes the documents' factor itself):
//   "step"     -> y1 .. y{N-1} (the shared modes' statistics), lam, value
//                 (the objective's part of the model entering the step),
//                 merit (its part of the function the step decreases:
//                 value, or the tempered free energy)
//   "loss"     -> value, penalty (the documents' prior's part of value)
//   "qem_docs" -> tsum, a, mx (row maxima over the pieces, see qem_shard.h)
//   "qem_norm" mx -> tot, B
//   "qem_mode" mode, V1 .. V{N-1} -> B
//   "qem_loss" -> sum
//   "gather"   -> F0 (the documents' factor, d_0 x k)
#ifndef ASPECTR_SOLVERS_PIECES_EM_H
#define ASPECTR_SOLVERS_PIECES_EM_H

#include <cmath>
#include <limits>
#include <new>
#include <string>
#include <vector>
#include "../pieces.h"
#include "normalize.h"
#include "prior.h"

namespace aspectr {

struct AspectPieceModel;

// `view` made a view of `of` (its memory, read and written in place, its
// size fixed), unless it is one already
inline void view_of(arma::mat& view, const arma::mat& of) {
  if (view.memptr() == of.memptr() && view.n_rows == of.n_rows && view.n_cols == of.n_cols && view.mem_state == 2)
    return;
  view.~Mat();
  new (&view) arma::mat(const_cast<double*>(of.memptr()), of.n_rows, of.n_cols, false, true);
}
inline void view_of(arma::vec& view, const arma::vec& of) {
  if (view.memptr() == of.memptr() && view.n_elem == of.n_elem && view.mem_state == 2) return;
  using V = arma::vec;
  view.~V();
  new (&view) arma::vec(const_cast<double*>(of.memptr()), of.n_elem, false, true);
}

// The data's one piece in this process, as the rules call it directly
// (pieces_memory.h's AspectPieceCommon): the operations of the requests
// "step", "loss", "sq_save", "sq_norms", "sq_extrapolate" and
// "sq_restore" (above and pieces_squarem.h), which its run() answers by
// the same functions. A step of a small model is a few microseconds, and
// a request's names and matrices cost as much as the E-step itself: a
// rule given the piece (AspectPieceModel::piece) calls these instead.
class AspectLocalPiece {
 public:
  virtual ~AspectLocalPiece() = default;
  // the E-step of M's model with this piece's documents' factor (updated
  // at once: the piece is the whole data), the shared modes' statistics
  // into Y[1], Y[2], ... (Y[0]: the documents'), the weights' into lam;
  // returns the objective's value of the model entering the step, merit
  // set as pieces_em.h's "merit"
  virtual double em_step(const AspectPieceModel& M, int threads, double& merit, std::vector<arma::mat>& Y,
                         arma::vec& lam) = 0;
  // the objective of M's model; penalty: the documents' prior's part of it
  virtual double em_loss(const AspectPieceModel& M, int threads, double& penalty) = 0;
  // SQUAREM's operations on the documents' factor (pieces_squarem.h)
  virtual void sq_save(int slot) = 0;
  virtual void sq_norms(double& rr, double& vv) = 0;  // (the sums continued)
  virtual void sq_extrapolate(double a) = 0;
  virtual void sq_restore() = 0;
};

// The global part of an aspect model fitted in pieces: the weights and the
// shared modes' factors; the documents' factor stays with the pieces.
struct AspectPieceModel {
  arma::vec lambda;
  std::vector<arma::mat> F;  // modes 2 .. N, k x d_n
  const Pieces* P = nullptr;
  // P's one piece, when the rules may call it directly (null: requests)
  AspectLocalPiece* piece = nullptr;
  // row sums that normalize the pieces' documents' factor, sent with the
  // next request (q-EM: the rule computes them)
  arma::mat colsum;

  // a request about this model (the pending row sums go with it)
  Request request(const std::string& op) const {
    Request r(op);
    r.view("lambda", lambda);
    for (std::size_t n = 0; n < F.size(); ++n) r.view("F" + std::to_string(n + 1), F[n]);
    if (colsum.n_elem) {
      r.with("colsum", colsum);
      const_cast<AspectPieceModel*>(this)->colsum.reset();
    }
    return r;
  }
  // the documents' factor (d_0 x k)
  arma::mat gather() const { return P->map(request("gather")).mat("F0"); }
};

// EM (or tempered EM: the pieces' E-step) with the terms' Dirichlet
// pseudo-counts `b` (k x d_1, in the core's units; empty: none) added to
// the sums of the first shared mode before they are normalized, and their
// penalty to the objective (prior.h; the documents' pseudo-counts are the
// pieces'). Lagged: a step returns the objective of the model entering it.
class PieceEM {
 public:
  explicit PieceEM(arma::mat term_prior = arma::mat()) { prior_.term = std::move(term_prior); }
  static constexpr bool kLagged = true;

  double step(const Pieces& P, AspectPieceModel& M, int threads) { return step_merit(P, M, threads, nullptr); }
  // the step, also giving (merit not null) the value of the model entering
  // it of the function the step never increases (EMRule::estep(): the
  // divergence with the prior's penalty, or the tempered free energy; the
  // pieces' "merit", added over them)
  double step_merit(const Pieces& P, AspectPieceModel& M, int threads, double* merit) {
    // the statistics: Y_[n + 1] of shared mode n, lam_
    double value = 0.0, m = 0.0;
    if (M.piece != nullptr) {
      // (a user's interrupt looked for, as a request to pieces does)
      poll();
      M.colsum.reset();
      value = M.piece->em_step(M, threads, m, Y_, lam_);
    } else {
      Stats s = P.map(M.request("step"));
      value = s.num("value");
      m = s.num("merit");
      Y_.resize(M.F.size() + 1);
      for (std::size_t n = 0; n < M.F.size(); ++n) Y_[n + 1] = s.take("y" + std::to_string(n + 1));
      lam_ = arma::vectorise(s.mat("lam"));
    }
    const double pen = terms_penalty(M);
    const double before = value + pen;
    if (merit != nullptr) *merit = m + pen;
    if (Y_.size() != M.F.size() + 1) throw std::logic_error("the pieces' statistics lack a mode");
    for (std::size_t n = 0; n < M.F.size(); ++n) {
      arma::mat& Y = Y_[n + 1];
      if (Y.n_rows != M.F[n].n_rows || Y.n_cols != M.F[n].n_cols)
        throw std::logic_error("the pieces' statistics of a mode have the wrong size");
      if (n == 0) prior_.terms(Y);
      mstep_mode(Y, M.F[n]);
    }
    mstep_weights(lam_, M.lambda);
    return before;
  }
  double loss(const Pieces& P, AspectPieceModel& M, int threads) {
    double v = 0.0, penalty = 0.0;
    if (M.piece != nullptr) {
      poll();
      M.colsum.reset();
      v = M.piece->em_loss(M, threads, penalty);
    } else {
      const Stats s = P.map(M.request("loss"));
      v = s.num("value");
      penalty = s.num("penalty", 0.0);
    }
    kl_ = v - penalty;
    return v + terms_penalty(M);
  }
  // D(G || P) of the model of the last loss(), without the prior's penalty
  double kl() const { return kl_; }

 private:
  double terms_penalty(const AspectPieceModel& M) const {
    return prior_.term.is_empty() || M.F.empty() ? 0.0 : prior_.terms_penalty(M.F[0]);
  }
  DirichletPrior prior_;
  double kl_ = std::numeric_limits<double>::quiet_NaN();
  // a step's statistics (the vector kept from step to step; the M-step
  // takes its matrices' memory where the factors own theirs)
  std::vector<arma::mat> Y_;
  arma::vec lam_;
};

// q-EM (Tsallis loss; qem.h) in pieces: the blocks one after another, each
// from an MTTKRP of the weights t = (g / p)^q of the model entering the
// step (qem_shard.h): the pieces' weights and documents' update, the
// weights lambda, then each shared mode in turn. Lagged.
class PieceQEM {
 public:
  explicit PieceQEM(double q) : q_(q) {}
  static constexpr bool kLagged = true;

  double step(const Pieces& P, AspectPieceModel& M, int threads) { return step_merit(P, M, threads, nullptr); }
  // (the merit, SQUAREM's, is the loss: q-EM never increases it)
  double step_merit(const Pieces& P, AspectPieceModel& M, int, double* merit) {
    const arma::vec lambda0 = M.lambda;
    const std::vector<arma::mat> F0 = M.F;
    // the requests are about the model entering the step
    AspectPieceModel E;
    E.lambda = lambda0;
    E.F = F0;
    Request dr = M.request("qem_docs");
    const Stats docs = P.map(dr);
    const double before = (1.0 - docs.num("tsum")) / (1.0 - q_);
    if (merit != nullptr) *merit = before;
    {
      const arma::vec a = arma::vectorise(docs.mat("a"));
      arma::vec av(a.n_elem);
      for (arma::uword r = 0; r < a.n_elem; ++r) av[r] = std::pow(lambda0[r], q_) * a[r];
      power_update_vec(M.lambda, av, 1.0 / q_);
    }
    const arma::vec mx = arma::vectorise(docs.mat("mx"));
    const Stats nrm = P.map(E.request("qem_norm").with("mx", arma::mat(mx)));
    // the documents' row totals (1 for a component without mass anywhere,
    // which keeps its factor); V_0 = V_0' / total^(1 - q)
    arma::vec tot = arma::vectorise(nrm.mat("tot"));
    for (arma::uword r = 0; r < tot.n_elem; ++r)
      if (!(mx[r] > -std::numeric_limits<double>::infinity())) tot[r] = 1.0;
    arma::vec shrink(tot.n_elem);
    for (arma::uword r = 0; r < tot.n_elem; ++r) shrink[r] = std::pow(tot[r], 1.0 - q_);
    arma::mat B = nrm.mat("B");
    std::vector<arma::mat> V;
    for (std::size_t n = 0; n < M.F.size(); ++n) {
      if (n > 0) {
        Request mr = E.request("qem_mode");
        mr.with("mode", static_cast<double>(n + 1));
        for (std::size_t t = 0; t < M.F.size(); ++t)
          mr.view("V" + std::to_string(t + 1), t < n ? V[t] : M.F[t]);
        B = P.map(mr).mat("B");
      }
      if (B.n_rows != M.F[n].n_rows || B.n_cols != M.F[n].n_cols)
        throw std::logic_error("the pieces' MTTKRP of a mode has the wrong size");
      B.each_col() /= shrink;
      const arma::mat old = M.F[n];
      power_update_rows(M.F[n], B, 1.0 / q_);
      V.push_back(arma::pow(old, q_) % arma::pow(M.F[n], 1.0 - q_));
    }
    M.colsum = arma::mat(tot);
    return before;
  }
  double loss(const Pieces& P, AspectPieceModel& M, int) {
    const double v = P.map(M.request("qem_loss")).num("sum");
    return (1.0 - v) / (1.0 - q_);
  }

 private:
  double q_;
};

}  // namespace aspectr

#endif
