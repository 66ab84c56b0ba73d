// aspectr/solvers/plsa_weighted_pieces.h — the weighted q-EM of
// plsa_weighted.h (WeightedQEMRule) on data in pieces (pieces.h): the
// documents (the first mode) split by rows, each piece with its cells, the
// weights of its rows (its rows' weights and deviations; every other
// mode's weights whole) and its rows of the documents' factor, which stay
// with it. Only k-sized and k x d_n statistics travel.
//
// The step is WeightedQEMRule::step's, block by block:
//  "wq_t"    the weights t = omega (g / p)^q of the model entering the step,
//            A = sum t p and H = rowsums(F_0 o Omega-times_0) (S = lambda'H);
//  "wq_b"    (sc: the best scale) t scaled, the documents' MTTKRP B_0 and
//            a_r = F_0(r,:) . B_0(r,:) for the weights' update;
//  the documents' columns: every column's problem (plsa_weighted.h) is
//  solved on the master by the root search of power_qp_simplex()
//  (PowerRoot), its sums over the rows added over the pieces:
//  "wq_coef" the pieces' a_i, b_i (kept) and their parts of the bracket
//            (L, max a, min b, min b of a_i = 0, sum (a / max a)^(1/q));
//  "wq_psi"  (mu, one per column) the parts of psi and its derivative,
//            log-sum-exp style (the largest term and the sums relative to
//            it), one request per Newton step for all columns together;
//  "wq_x"    (mu, spread) the solution's entries and their parts of its
//            mass, the entries a_i = 0 of least cost, the entry nearest
//            its pole (by its global row);
//  "wq_fill" the rest of the mass placed as in power_qp_simplex() and the
//            parts of the column problem's new and old values;
//  "wq_mode" (keep: the columns whose problem does not rise, applied at
//            the first such request) the parts of mode n's MTTKRP and
//            Omega-times, with which the master updates the shared mode
//            by weighted_qem_columns(), as in memory.
//  "wq_loss" the parts of A and H of a model (J);
//  "wq_kl"   (mass: sum omega p of the model) the parts of D(G_o || P_o);
//  "sq_*"    SQUAREM's (pieces_squarem.h: PieceSquarem of this rule), the
//            extrapolated rows normalized by the colsum of the next
//            request.
// So the iterates equal the in-memory fit's up to rounding (the sums'
// order). The in-memory fit (WeightedQEMRule, below; SQUAREM of it:
// run_aspect_piece() of PieceWeightedQEM) is this rule on one piece, the
// whole data.
#ifndef ASPECTR_SOLVERS_PLSA_WEIGHTED_PIECES_H
#define ASPECTR_SOLVERS_PLSA_WEIGHTED_PIECES_H

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>
#include <vector>
#include "../pieces.h"
#include "pieces_em.h"
#include "pieces_squarem.h"
#include "plsa_weighted.h"

namespace aspectr {

// What the pieces of every weighted pLSA rule (this one and the L2 block
// updates, plsa_weighted_l2_pieces.h) share: the model of a request, its
// lambda and shared factors ("F1", ...) with the piece's documents' factor
// F0; and the piece's part of D(G_o || P_o), G_o = omega g (summing to 1
// over all pieces) and P_o = omega p / mass.
inline AspectModel weighted_piece_model(const Request& r, const arma::mat& F0, std::size_t order) {
  AspectModel M;
  M.lambda = arma::vectorise(r.mat("lambda"));
  M.F.push_back(F0);
  for (std::size_t n = 1; n < order; ++n) M.F.push_back(r.mat("F" + std::to_string(n)));
  return M;
}
inline double weighted_piece_kl(const SparseTensor& G, const PlsaWeights& W, const AspectModel& M, double mass) {
  double kl = 0.0;
  for (std::size_t s = 0; s < G.nnz(); ++s) {
    const double go = W.omega[s] * G.value(s);
    const double po = std::max(W.omega[s] * M.cell(G.at(s)) / mass, std::numeric_limits<double>::min());
    kl += go * std::log(go / po);
  }
  return kl;
}

// A rule in pieces run in memory on one piece holding the whole data (the
// in-memory weighted rules, so that every backend runs one
// implementation): one step of `rule` on M (its documents' factor the
// piece's), whose other factors and weights it updates; or M's loss.
inline AspectPieceModel one_piece_model(const AspectModel& M, const Pieces& P) {
  AspectPieceModel PM;
  PM.lambda = M.lambda;
  PM.F.assign(M.F.begin() + 1, M.F.end());
  PM.P = &P;
  return PM;
}
template <class Piece, class Rule>
double one_piece_step(Piece& piece, Rule& rule, AspectModel& M, int threads) {
  LocalPieces<Piece> P({&piece}, threads);
  AspectPieceModel PM = one_piece_model(M, P);
  const double v = rule.step(P, PM, threads);
  M.lambda = PM.lambda;
  for (std::size_t n = 0; n < PM.F.size(); ++n) M.F[n + 1] = std::move(PM.F[n]);
  return v;
}
template <class Piece, class Rule>
double one_piece_loss(Piece& piece, Rule& rule, const AspectModel& M, int threads) {
  LocalPieces<Piece> P({&piece}, threads);
  AspectPieceModel PM = one_piece_model(M, P);
  return rule.loss(P, PM, threads);
}

// One piece: its cells G (rows counted in the piece), its weights W (mode
// 0's weights those of its rows), its rows of the documents' factor F0
// (k x rows) and the global index of its first row.
class WeightedQEMPiece {
 public:
  WeightedQEMPiece(const SparseTensor& G, const PlsaWeights& W, arma::mat& F0, double q, double offset)
      : G_(&G), W_(&W), F0_(&F0), q_(q), offset_(offset) {}

  Stats run(const Request& r, int threads) {
    const double q = q_;
    const double inf = std::numeric_limits<double>::infinity();
    const std::size_t N = G_->order();
    arma::mat& F0 = *F0_;
    const arma::uword k = F0.n_rows, dn = F0.n_cols;
    Stats out;
    // (SQUAREM's requests, and its extrapolated rows normalized by their
    // sums over the pieces when the next request brings them)
    if (r.has("colsum")) normalize_by(r.mat("colsum"));
    if (r.op == "sq_save") {
      sq_[r.num("slot", 0.0) == 0.0 ? 0 : 1] = F0;
      return out;
    }
    if (r.op == "sq_norms") {
      sq_[2] = F0;
      double rr = r.num("rr", 0.0), vv = r.num("vv", 0.0);
      squarem_norms(sq_[0], sq_[1], sq_[2], rr, vv);
      out.set("rr", rr);
      out.set("vv", vv);
      return out;
    }
    if (r.op == "sq_extrapolate") {
      squarem_entries(sq_[0], sq_[1], sq_[2], r.num("a", 1.0), F0);
      arma::mat sum(k, 1);
      for (arma::uword c = 0; c < k; ++c) {
        double tot = 0.0;
        for (arma::uword i = 0; i < dn; ++i) tot += F0(c, i);
        sum(c, 0) = tot;
      }
      out.set("sum", std::move(sum));
      return out;
    }
    if (r.op == "sq_restore") {
      F0 = sq_[2];
      return out;
    }
    if (r.op == "wq_t" || r.op == "wq_loss") {
      const AspectModel M = model(r);
      double A = 0.0;
      if (r.op == "wq_t") {
        t_.set_size(G_->nnz());
        for (std::size_t s = 0; s < G_->nnz(); ++s) {
          const double g = G_->value(s);
          const double p = std::max(M.cell(G_->at(s)), kTiny);
          const double ts = W_->omega[s] * std::pow(g / p, q);
          t_[s] = ts;
          A += ts * p;
        }
      } else {
        for (std::size_t s = 0; s < G_->nnz(); ++s) {
          const double g = G_->value(s);
          const double p = std::max(M.cell(G_->at(s)), kTiny);
          A += W_->omega[s] * g * std::pow(p / g, 1.0 - q);
        }
      }
      W_->times(0, M.F, h0_, threads);
      out.set("A", A);
      out.set("H", arma::mat(arma::sum(M.F[0] % h0_, 1)));
      return out;
    }
    if (r.op == "wq_b") {
      t_ *= std::pow(r.num("sc", 1.0), -q);
      const AspectModel M = model(r);
      Fold_ = F0;
      std::vector<const arma::mat*> Fp(N);
      for (std::size_t m = 0; m < N; ++m) Fp[m] = &M.F[m];
      mttkrp(*G_, Fp, 0, B0_, threads, t_.memptr());
      arma::mat a(k, 1);
      for (arma::uword r2 = 0; r2 < k; ++r2) a(r2, 0) = arma::dot(Fold_.row(r2), B0_.row(r2));
      out.set("a", a);
      mixed_ = false;
      return out;
    }
    if (r.op == "wq_coef") {
      const arma::vec lam0 = arma::vectorise(r.mat("lam0")), lam = arma::vectorise(r.mat("lambda"));
      const double p = 1.0 / q;
      a_.zeros(k, dn);
      b_.zeros(k, dn);
      la_.zeros(k, dn);
      arma::mat L(k, 1), amax(k, 1), bmin(k, 1), zmin(k, 1), sp(k, 1), np(k, 1);
      std::vector<double> a(dn), b(dn);
      for (arma::uword c = 0; c < k; ++c) {
        L(c, 0) = -inf; amax(c, 0) = 0.0; bmin(c, 0) = inf; zmin(c, 0) = inf; sp(c, 0) = 0.0; np(c, 0) = 0.0;
        if (!(lam[c] > 0.0)) continue;
        weighted_qem_coefs(Fold_, B0_, h0_, c, lam0[c], lam[c], q, a.data(), b.data());
        for (arma::uword i = 0; i < dn; ++i) {
          a_(c, i) = a[i];
          b_(c, i) = b[i];
          if (a[i] > 0.0) {
            const double ca = (1.0 - q) * a[i];
            la_(c, i) = std::log(ca);
            L(c, 0) = std::max(L(c, 0), ca - b[i]);
            amax(c, 0) = std::max(amax(c, 0), a[i]);
            bmin(c, 0) = std::min(bmin(c, 0), b[i]);
            np(c, 0) += 1.0;
          } else {
            zmin(c, 0) = std::min(zmin(c, 0), b[i]);
          }
        }
        for (arma::uword i = 0; i < dn; ++i) if (a[i] > 0.0) sp(c, 0) += std::pow(a[i] / amax(c, 0), p);
      }
      out.set("@L", L);
      out.set("@amax", amax);
      out.set("@bmin", bmin);
      out.set("@zmin", zmin);
      out.set("@sp", sp);
      out.set("np", np);
      return out;
    }
    if (r.op == "wq_psi") {
      const arma::vec mu = arma::vectorise(r.mat("mu")), act = arma::vectorise(r.mat("act"));
      const double p = 1.0 / q;
      arma::mat mx(k, 1), s(k, 1), ds(k, 1), bad(k, 1, arma::fill::zeros);
      std::vector<double> lt(dn);
      for (arma::uword c = 0; c < k; ++c) {
        mx(c, 0) = -inf; s(c, 0) = 0.0; ds(c, 0) = 0.0;
        if (!(act[c] > 0.0)) continue;
        bool fin = true;
        for (arma::uword i = 0; i < dn && fin; ++i) {
          if (!(a_(c, i) > 0.0)) continue;
          const double den = b_(c, i) + mu[c];
          if (!(den > 0.0)) { fin = false; break; }
          lt[i] = p * (la_(c, i) - std::log(den));
          mx(c, 0) = std::max(mx(c, 0), lt[i]);
        }
        if (!fin) { bad(c, 0) = 1.0; mx(c, 0) = -inf; continue; }
        for (arma::uword i = 0; i < dn; ++i) {
          if (!(a_(c, i) > 0.0)) continue;
          const double w = std::exp(lt[i] - mx(c, 0));
          s(c, 0) += w;
          ds(c, 0) += w / (b_(c, i) + mu[c]);
        }
      }
      out.set("@mx", mx);
      out.set("@s", s);
      out.set("@ds", ds);
      out.set("bad", bad);
      return out;
    }
    if (r.op == "wq_x") {
      const arma::vec mu = arma::vectorise(r.mat("mu")), act = arma::vectorise(r.mat("act"));
      const arma::vec spread = arma::vectorise(r.mat("spread")), zmin = arma::vectorise(r.mat("zmin"));
      const double p = 1.0 / q;
      X_ = Fold_;
      arma::mat used(k, 1, arma::fill::zeros), nz(k, 1, arma::fill::zeros), near(k, 1), first(k, 1);
      for (arma::uword c = 0; c < k; ++c) {
        near(c, 0) = inf; first(c, 0) = -1.0;
        if (!(act[c] > 0.0)) continue;
        for (arma::uword i = 0; i < dn; ++i) {
          X_(c, i) = 0.0;
          if (a_(c, i) > 0.0) {
            X_(c, i) = std::exp(p * (la_(c, i) - std::log(b_(c, i) + mu[c])));
            used(c, 0) += X_(c, i);
            const double rel = (b_(c, i) + mu[c]) / (std::abs(b_(c, i)) + std::abs(mu[c]));
            if (rel < near(c, 0)) { near(c, 0) = rel; first(c, 0) = offset_ + static_cast<double>(i); }
          } else if (spread[c] > 0.0 && b_(c, i) <= zmin[c]) {
            nz(c, 0) += 1.0;
          }
        }
      }
      out.set("used", used);
      out.set("nz", nz);
      out.set("@near", near);
      out.set("@first", first);
      return out;
    }
    if (r.op == "wq_fill") {
      // kind: 1 the entries a_i = 0 of least cost get `amt` each; 2 the
      // entry of global row `best` gets `amt` more; 3 divided by `amt`
      const arma::vec act = arma::vectorise(r.mat("act")), kind = arma::vectorise(r.mat("kind"));
      const arma::vec amt = arma::vectorise(r.mat("amt")), best = arma::vectorise(r.mat("best"));
      const arma::vec zmin = arma::vectorise(r.mat("zmin"));
      arma::mat fnew(k, 1, arma::fill::zeros), fold(k, 1, arma::fill::zeros);
      std::vector<double> a(dn), b(dn), x(dn), o(dn);
      for (arma::uword c = 0; c < k; ++c) {
        if (!(act[c] > 0.0)) continue;
        for (arma::uword i = 0; i < dn; ++i) {
          if (kind[c] == 1.0 && !(a_(c, i) > 0.0) && b_(c, i) <= zmin[c]) X_(c, i) = amt[c];
          else if (kind[c] == 2.0 && offset_ + static_cast<double>(i) == best[c]) X_(c, i) += amt[c];
          else if (kind[c] == 3.0 && a_(c, i) > 0.0) X_(c, i) /= amt[c];
          a[i] = a_(c, i); b[i] = b_(c, i); x[i] = X_(c, i); o[i] = F0(c, i);
        }
        fnew(c, 0) = power_problem_value(a.data(), b.data(), q, x.data(), dn);
        fold(c, 0) = power_problem_value(a.data(), b.data(), q, o.data(), dn);
      }
      out.set("fnew", fnew);
      out.set("fold", fold);
      return out;
    }
    if (r.op == "wq_mode") {
      if (r.has("keep")) {
        const arma::vec keep = arma::vectorise(r.mat("keep"));
        for (arma::uword c = 0; c < k; ++c) if (keep[c] > 0.0) F0.row(c) = X_.row(c);
      }
      const std::size_t n = static_cast<std::size_t>(r.num("mode", 1.0));
      if (n < 1 || n >= N) throw std::logic_error("weighted q-EM in pieces: a mode out of range");
      if (!mixed_) {
        Mix0_ = arma::pow(Fold_, q) % arma::pow(F0, 1.0 - q);
        mixed_ = true;
      }
      const AspectModel M = model(r);
      std::vector<arma::mat> V(N);
      std::vector<const arma::mat*> Fp(N);
      Fp[0] = &Mix0_;
      for (std::size_t m = 1; m < N; ++m) {
        const std::string vn = "V" + std::to_string(m);
        Fp[m] = m < n ? &r.mat(vn) : &M.F[m];
      }
      arma::mat B, h;
      mttkrp(*G_, Fp, n, B, threads, t_.memptr());
      W_->times(n, M.F, h, threads);
      out.set("B", B);
      out.set("h", h);
      return out;
    }
    if (r.op == "wq_kl") {
      out.set("kl", weighted_piece_kl(*G_, *W_, model(r), r.num("mass", 1.0)));
      return out;
    }
    if (r.op == "gather") {
      out.set("@F0", F0);
      return out;
    }
    throw std::logic_error("weighted q-EM in pieces: no request '" + r.op + "'");
  }

 private:
  AspectModel model(const Request& r) const { return weighted_piece_model(r, *F0_, G_->order()); }
  // the rows divided by their sums over every piece (normalize_rows()'s
  // arithmetic; a row without mass takes theta2's)
  void normalize_by(const arma::mat& colsum) {
    arma::mat& F0 = *F0_;
    if (colsum.n_elem != F0.n_rows) throw std::logic_error("weighted q-EM piece: row sums of the wrong size");
    for (arma::uword c = 0; c < F0.n_rows; ++c) {
      const double tot = colsum[c];
      if (tot > 0.0 && std::isfinite(tot)) {
        for (arma::uword i = 0; i < F0.n_cols; ++i) F0(c, i) /= tot;
      } else {
        if (sq_[2].n_rows != F0.n_rows || sq_[2].n_cols != F0.n_cols)
          throw std::logic_error("weighted q-EM piece: a row without mass and no SQUAREM step");
        for (arma::uword i = 0; i < F0.n_cols; ++i) F0(c, i) = sq_[2](c, i);
      }
    }
  }
  const SparseTensor* G_;
  const PlsaWeights* W_;
  arma::mat* F0_;
  arma::mat sq_[3];  // SQUAREM's theta0, theta1, theta2 of the piece's rows
  double q_, offset_;
  arma::vec t_;
  arma::mat h0_, B0_, Fold_, a_, b_, la_, X_, Mix0_;
  bool mixed_ = false;
};

// The rule on the master (see above). Lagged: a step returns J of the
// model entering it.
class PieceWeightedQEM {
 public:
  explicit PieceWeightedQEM(double q) : q_(q) {}
  static constexpr bool kLagged = true;

  double step(const Pieces& P, AspectPieceModel& M, int) {
    const double q = q_;
    const arma::uword k = M.lambda.n_elem;
    // 1. t, A, S and J; the model at its best scale
    const Stats s1 = P.map(M.request("wq_t"));
    const double A = s1.num("A");
    const arma::vec H = arma::vectorise(s1.mat("H"));
    const double S = arma::dot(M.lambda, H);
    const double before = weighted_qem_value(A, S, q);
    if (!(A > 0.0) || !(S > 0.0)) return before;
    const double sc = std::pow(A / S, 1.0 / q);
    // (the pieces' model: the shared factors entering the step)
    const arma::vec a = arma::vectorise(P.map(M.request("wq_b").with("sc", sc)).mat("a"));
    M.lambda *= sc;
    const arma::vec lam0 = M.lambda;
    const std::vector<arma::mat> F0 = M.F;
    // 2. lambda, the documents' columns, then the shared modes in turn
    for (arma::uword r = 0; r < k; ++r) {
      const double ar = std::pow(lam0[r], q) * a[r];
      if (H[r] > 0.0) M.lambda[r] = ar > 0.0 ? std::pow(ar / H[r], 1.0 / q) : 0.0;
    }
    const arma::vec keep = document_columns(P, M, lam0);
    std::vector<arma::mat> Mix(M.F.size());
    for (std::size_t n = 0; n < M.F.size(); ++n) {
      Request mr = M.request("wq_mode");
      mr.with("mode", static_cast<double>(n + 1));
      if (n == 0) mr.with("keep", arma::mat(keep));
      for (std::size_t m = 0; m < n; ++m) mr.view("V" + std::to_string(m + 1), Mix[m]);
      const Stats sm = P.map(mr);
      const arma::mat& B = sm.mat("B");
      const arma::mat& h = sm.mat("h");
      if (B.n_rows != M.F[n].n_rows || B.n_cols != M.F[n].n_cols || h.n_rows != B.n_rows || h.n_cols != B.n_cols)
        throw std::logic_error("the pieces' MTTKRP of a mode has the wrong size");
      weighted_qem_columns(M.F[n], F0[n], B, h, lam0, M.lambda, q);
      Mix[n] = arma::pow(F0[n], q) % arma::pow(M.F[n], 1.0 - q);
    }
    // 3. back onto the simplex
    const double tot = arma::accu(M.lambda);
    if (tot > 0.0 && std::isfinite(tot)) M.lambda /= tot; else M.lambda = lam0 / arma::accu(lam0);
    return before;
  }

  // the step and J of the model entering it (SQUAREM's merit,
  // pieces_squarem.h)
  double step_merit(const Pieces& P, AspectPieceModel& M, int threads, double* merit) {
    const double v = step(P, M, threads);
    if (merit != nullptr) *merit = v;
    return v;
  }

  double loss(const Pieces& P, AspectPieceModel& M, int) {
    const Stats s = P.map(M.request("wq_loss"));
    return weighted_qem_value(s.num("A"), arma::dot(M.lambda, arma::vectorise(s.mat("H"))), q_);
  }

 private:
  // The documents' columns by power_qp_simplex()'s steps with the sums
  // over their rows added over the pieces; returns the columns to keep
  // (those whose problem does not rise), which the pieces take with the
  // next request.
  arma::vec document_columns(const Pieces& P, AspectPieceModel& M, const arma::vec& lam0) const {
    const double q = q_, p = 1.0 / q;
    const double inf = std::numeric_limits<double>::infinity();
    const arma::uword k = M.lambda.n_elem;
    const Stats cf = P.map(M.request("wq_coef").with("lam0", arma::mat(lam0)));
    const arma::mat& Lp = cf.mat("@L");
    const arma::mat& ap = cf.mat("@amax");
    const arma::mat& spp = cf.mat("@sp");
    const arma::vec np = arma::vectorise(cf.mat("np"));
    arma::vec L(k), R(k), zmin(k), act(k, arma::fill::zeros);
    for (arma::uword r = 0; r < k; ++r) {
      L[r] = Lp.row(r).max();
      zmin[r] = cf.mat("@zmin").row(r).min();
      if (!(M.lambda[r] > 0.0) || !(np[r] > 0.0)) continue;
      act[r] = 1.0;
      const double amax = ap.row(r).max();
      double sp = 0.0;
      for (arma::uword j = 0; j < ap.n_cols; ++j)
        if (ap(r, j) > 0.0) sp += spp(r, j) * (ap(r, j) == amax ? 1.0 : std::pow(ap(r, j) / amax, p));
      R[r] = (1.0 - q) * amax * std::pow(sp, q) - cf.mat("@bmin").row(r).min();
    }
    // psi and its derivative of every column asked for (want), from the
    // pieces' parts
    arma::vec v(k), dv(k);
    auto psi = [&](const arma::vec& mu, const arma::vec& want) {
      Request pr("wq_psi");
      pr.with("mu", arma::mat(mu));
      pr.with("act", arma::mat(want));
      const Stats s = P.map(pr);
      const arma::mat& mx = s.mat("@mx");
      const arma::mat& ss = s.mat("@s");
      const arma::mat& ds = s.mat("@ds");
      const arma::vec bad = arma::vectorise(s.mat("bad"));
      for (arma::uword r = 0; r < k; ++r) {
        if (!(want[r] > 0.0)) continue;
        if (bad[r] > 0.0) { v[r] = inf; dv[r] = 0.0; continue; }
        const double m = mx.row(r).max();
        double t = 0.0, d = 0.0;
        for (arma::uword j = 0; j < mx.n_cols; ++j) {
          if (!(mx(r, j) > -inf)) continue;
          const double e = mx(r, j) == m ? 1.0 : std::exp(mx(r, j) - m);
          t += ss(r, j) * e;
          d += ds(r, j) * e;
        }
        dv[r] = -p * d / t;
        v[r] = m + std::log(t);
      }
    };
    std::vector<PowerRoot> root(k);
    {
      arma::vec want(k, arma::fill::zeros);
      for (arma::uword r = 0; r < k; ++r) if (act[r] > 0.0 && R[r] > L[r]) want[r] = 1.0;
      if (arma::any(want > 0.0)) psi(R, want);
      for (arma::uword r = 0; r < k; ++r)
        if (act[r] > 0.0) root[r].start(L[r], R[r], want[r] > 0.0 && !(v[r] >= 0.0));
    }
    for (;;) {
      arma::vec want(k, arma::fill::zeros), mu(k, arma::fill::zeros);
      for (arma::uword r = 0; r < k; ++r) {
        if (act[r] > 0.0 && root[r].active()) want[r] = 1.0;
        mu[r] = root[r].mu;
      }
      if (!arma::any(want > 0.0)) break;
      psi(mu, want);
      for (arma::uword r = 0; r < k; ++r) if (want[r] > 0.0) root[r].feed(v[r], dv[r]);
    }
    arma::vec mu(k), spread(k, arma::fill::zeros);
    for (arma::uword r = 0; r < k; ++r) {
      mu[r] = root[r].mu;
      if (act[r] > 0.0 && zmin[r] < inf && mu[r] < -zmin[r]) { spread[r] = 1.0; mu[r] = -zmin[r]; }
    }
    Request xr("wq_x");
    xr.with("mu", arma::mat(mu)).with("act", arma::mat(act)).with("spread", arma::mat(spread))
      .with("zmin", arma::mat(zmin));
    const Stats xs = P.map(xr);
    const arma::vec used = arma::vectorise(xs.mat("used")), nz = arma::vectorise(xs.mat("nz"));
    const arma::mat& near = xs.mat("@near");
    const arma::mat& first = xs.mat("@first");
    arma::vec kind(k, arma::fill::zeros), amt(k, arma::fill::zeros), best(k);
    best.fill(-1.0);
    for (arma::uword r = 0; r < k; ++r) {
      if (!(act[r] > 0.0)) continue;
      if (spread[r] > 0.0) {
        kind[r] = 1.0;
        amt[r] = std::max(0.0, 1.0 - used[r]) / nz[r];
      } else if (used[r] < 1.0 - 1e-12) {
        // the entry nearest its pole (the first such row)
        double nb = inf;
        for (arma::uword j = 0; j < near.n_cols; ++j) {
          if (near(r, j) < nb || (near(r, j) == nb && first(r, j) < best[r])) { nb = near(r, j); best[r] = first(r, j); }
        }
        kind[r] = 2.0;
        amt[r] = 1.0 - used[r];
      } else if (used[r] > 0.0) {
        kind[r] = 3.0;
        amt[r] = used[r];
      }
    }
    Request fr("wq_fill");
    fr.with("act", arma::mat(act)).with("kind", arma::mat(kind)).with("amt", arma::mat(amt))
      .with("best", arma::mat(best)).with("zmin", arma::mat(zmin));
    const Stats fs = P.map(fr);
    const arma::vec fnew = arma::vectorise(fs.mat("fnew")), fold = arma::vectorise(fs.mat("fold"));
    arma::vec keep(k, arma::fill::zeros);
    // (not above the old value but for rounding: the sums of the pieces)
    for (arma::uword r = 0; r < k; ++r) if (act[r] > 0.0 && no_rise(fnew[r], fold[r])) keep[r] = 1.0;
    return keep;
  }
  double q_;
};

// Weighted q-EM of a matrix or tensor in memory (plsa_weighted.h): the
// rule in pieces on one piece holding the whole data, so that every
// backend runs one implementation. The loss reported is J.
class WeightedQEMRule {
 public:
  static constexpr bool kLagged = true;
  WeightedQEMRule(const PlsaWeights& w, double q) : w_(&w), q_(q) {}

  double step(const SparseTensor& G, AspectModel& M, int threads) {
    WeightedQEMPiece piece(G, *w_, M.F[0], q_, 0.0);
    PieceWeightedQEM rule(q_);
    return one_piece_step(piece, rule, M, threads);
  }

  double loss(const SparseTensor& G, const AspectModel& M, int threads) const {
    arma::mat F0 = M.F[0];
    WeightedQEMPiece piece(G, *w_, F0, q_, 0.0);
    PieceWeightedQEM rule(q_);
    return one_piece_loss(piece, rule, M, threads);
  }

 private:
  const PlsaWeights* w_;
  double q_;
};

}  // namespace aspectr

#endif
