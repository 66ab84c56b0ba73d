// aspectr/solvers/plsa_weighted_l2_pieces.h — the weighted L2 block
// updates of plsa_weighted.h (pNMF, pNTF with weights per cell) on data in
// pieces (pieces.h): the documents (the first mode) split by rows, each
// piece with its cells, the weights of its rows (its rows' weights and
// deviations; every other mode's weights whole) and its rows of the
// documents' factor, which stay with it. Only k-sized, k x k and d_n-sized
// statistics of a shared mode travel.
//
// The step is the sweep of plsa_weighted.h, block by block:
//  "wl_m0"    the documents' mode prepared: each piece's MTTKRP of its
//             rows, the Gram matrix of the other modes and its deviating
//             cells' products and model values;
//  the documents' columns in turn: column r's diagonal problem on the
//  simplex, min sum_i (1/2 alpha_i u_i^2 - beta_i u_i), has the solution
//  u_i = max(0, (beta_i - mu) / alpha_i) with mu the root of the
//  piecewise linear, convex and decreasing phi(mu) = sum_i u_i(mu) = 1.
//  Its root is found by Newton's method from the left (from the smallest
//  beta_i, or at once when every entry is active), whose iterates rise to
//  it and stop once the set of active entries no longer changes (each
//  step's value is the root of phi on the current set):
//  "wl_coef"  (r) the pieces' alpha_i, beta_i (kept), their sums over the
//             entries of alpha_i > 0 of beta / alpha and 1 / alpha, the
//             smallest beta, the numbers of entries with and without
//             weight against the column;
//  "wl_newton" (mu) the same sums over the entries of beta_i > mu;
//  "wl_apply" (mu, spread) the column's new values and their mass;
//  "wl_fill"  (each) the entries without weight take the rest of the mass
//             (spread: the root below 0, as diag_qp_simplex());
//  "wl_mode"  (mode n) the parts of mode n's MTTKRP, of its Gram matrix and
//             of its columns' common weights (linear in the documents'
//             factor), each piece's deviating cells' products and model
//             values in mode n's order;
//  "wl_dev"   (mode n, column r, the update of the column before) the
//             deviating cells' parts of column r's problem for each index
//             of mode n, which the master solves by diag_qp_simplex();
//  "wl_q"     the parts of the weights' Q and of sum omega g^2;
//  "wl_loss"  those and sum omega g p of a model;
//  "wl_h"     the parts of sum omega p (the model's weighted mass);
//  "wl_kl"    (mass) the parts of sum omega g log(omega g / (omega p / mass)).
// So the iterates equal the in-memory fit's up to rounding (the sums'
// order). The in-memory fit (WeightedPPSRule, below) is this rule on one
// piece, the whole data.
#ifndef ASPECTR_SOLVERS_PLSA_WEIGHTED_L2_PIECES_H
#define ASPECTR_SOLVERS_PLSA_WEIGHTED_L2_PIECES_H

#include <cmath>
#include <limits>
#include <string>
#include <vector>
#include "../pieces.h"
#include "pieces_em.h"
#include "plsa_weighted.h"
#include "plsa_weighted_pieces.h"

namespace aspectr {

// One piece: its cells G (rows counted in the piece), its weights W (mode
// 0's weights those of its rows) and its rows of the documents' factor F0
// (k x rows).
class WeightedPPSPiece {
 public:
  WeightedPPSPiece(const SparseTensor& G, const PlsaWeights& W, arma::mat& F0) : G_(&G), W_(&W), F0_(&F0) {}

  Stats run(const Request& r, int threads) {
    const double inf = std::numeric_limits<double>::infinity();
    const CPWeights& W = W_->w;
    const std::size_t N = G_->order();
    arma::mat& A0 = *F0_;
    const arma::uword k = A0.n_rows, d0 = A0.n_cols;
    Stats out;
    wg();
    if (r.op == "wl_m0" || r.op == "wl_mode") {
      const std::size_t n = r.op == "wl_m0" ? 0 : static_cast<std::size_t>(r.num("mode", 1.0));
      if (n >= N) throw std::logic_error("weighted L2 in pieces: a mode out of range");
      M_ = model(r);
      std::vector<const arma::mat*> Fp(N);
      for (std::size_t m = 0; m < N; ++m) Fp[m] = &M_.F[m];
      arma::mat Y;
      mttkrp(*G_, Fp, n, Y, threads, wg_.memptr());
      arma::mat Gam = W.gram(M_.F, n);
      arma::mat b2(k, 1);
      for (arma::uword c = 0; c < k; ++c) {
        double b = 1.0;
        bool first = true;
        for (std::size_t m = 0; m < N; ++m) {
          if (m == n) continue;
          const double s2 = arma::dot(W.v[m], arma::square(M_.F[m].row(c).t()));
          b = first ? s2 : b * s2;
          first = false;
        }
        b2(c, 0) = W.d * b;
      }
      deviations(n);
      if (n == 0) {
        Y0_ = std::move(Y);
        Gam0_ = std::move(Gam);
        b20_ = arma::vectorise(b2);
        return out;
      }
      out.set("Y", std::move(Y));
      out.set("Gam", std::move(Gam));
      out.set("b2", std::move(b2));
      out.set("ndev", static_cast<double>(W.cells()));
      return out;
    }
    if (r.op == "wl_coef") {
      const arma::uword c = static_cast<arma::uword>(r.num("r", 0.0));
      r_ = c;
      const double lam = M_.lambda[c];
      const arma::vec& wa = W.v[0];
      const std::vector<std::size_t>& ptr = W.groups[0].ptr;
      arma::vec coef = M_.lambda % Gam0_.col(c);
      coef[c] = 0.0;
      const arma::rowvec cross = coef.t() * A0;
      alpha_.assign(d0, 0.0);
      beta_.assign(d0, 0.0);
      double s1 = 0.0, s2 = 0.0, bmin = inf, np = 0.0, nz = 0.0;
      for (arma::uword i = 0; i < d0; ++i) {
        double sq = b20_[c], sqabs = b20_[c], cr = cross[i];
        for (std::size_t e = ptr[i]; e < ptr[i + 1]; ++e) {
          const double ze = Z_(c, e);
          const double dv = W.gdelta[0][e] * uE_[e] * ze;
          sq += dv * ze;
          sqabs += std::abs(dv * ze);
          cr += dv * (pE_[e] - lam * A0(c, i) * ze);
        }
        if (wa[i] > 0.0 && sq > 1e-12 * sqabs) {
          alpha_[i] = lam * lam * wa[i] * sq;
          beta_[i] = lam * (Y0_(c, i) - wa[i] * cr);
        }
        if (alpha_[i] > 0.0) {
          s1 += beta_[i] / alpha_[i];
          s2 += 1.0 / alpha_[i];
          bmin = std::min(bmin, beta_[i]);
          np += 1.0;
        } else {
          nz += 1.0;
        }
      }
      out.set("s1", s1);
      out.set("s2", s2);
      out.set("@bmin", bmin);
      out.set("np", np);
      out.set("nz", nz);
      return out;
    }
    if (r.op == "wl_newton") {
      const double mu = r.num("mu", 0.0);
      double s1 = 0.0, s2 = 0.0, cnt = 0.0;
      for (arma::uword i = 0; i < d0; ++i) {
        if (alpha_[i] > 0.0 && beta_[i] > mu) {
          s1 += beta_[i] / alpha_[i];
          s2 += 1.0 / alpha_[i];
          cnt += 1.0;
        }
      }
      out.set("s1", s1);
      out.set("s2", s2);
      out.set("n", cnt);
      return out;
    }
    if (r.op == "wl_apply") {
      const double mu = r.num("mu", 0.0);
      col_.assign(d0, 0.0);
      double used = 0.0;
      for (arma::uword i = 0; i < d0; ++i) {
        if (!(alpha_[i] > 0.0)) continue;
        col_[i] = std::max(0.0, (beta_[i] - mu) / alpha_[i]);
        used += col_[i];
      }
      if (!(r.num("spread", 0.0) > 0.0)) finish_column();
      out.set("used", used);
      return out;
    }
    if (r.op == "wl_fill") {
      const double each = r.num("each", 0.0);
      for (arma::uword i = 0; i < d0; ++i) if (!(alpha_[i] > 0.0)) col_[i] = each;
      finish_column();
      return out;
    }
    if (r.op == "wl_dev") {
      const std::size_t n = static_cast<std::size_t>(r.num("mode", 1.0));
      const arma::uword c = static_cast<arma::uword>(r.num("r", 0.0));
      const double lam = r.num("lam", 0.0);
      const arma::mat& arow = r.mat("arow");
      const std::vector<index_t>& gx = W.gidx[n];
      const std::vector<std::size_t>& ptr = W.groups[n].ptr;
      const arma::uword dn = arow.n_elem;
      if (r.has("ud")) {
        // the column before's update: the model at the deviating cells
        const arma::mat& ud = r.mat("ud");
        const arma::uword ur = static_cast<arma::uword>(r.num("ur", 0.0));
        const double ulam = r.num("ulam", 0.0);
        for (std::size_t e = 0; e < W.cells(); ++e) pE_[e] += ulam * ud[gx[e * N + n]] * Z_(ur, e);
      }
      arma::mat dsq(1, dn, arma::fill::zeros), dabs(1, dn, arma::fill::zeros), dcr(1, dn, arma::fill::zeros);
      for (arma::uword i = 0; i < dn; ++i) {
        for (std::size_t e = ptr[i]; e < ptr[i + 1]; ++e) {
          const double ze = Z_(c, e);
          const double dv = W.gdelta[n][e] * uE_[e] * ze;
          dsq[i] += dv * ze;
          dabs[i] += std::abs(dv * ze);
          dcr[i] += dv * (pE_[e] - lam * arow[i] * ze);
        }
      }
      out.set("dsq", std::move(dsq));
      out.set("dabs", std::move(dabs));
      out.set("dcr", std::move(dcr));
      return out;
    }
    if (r.op == "wl_q" || r.op == "wl_loss") {
      const AspectModel M = model(r);
      out.set("Q", W_->weight_gram(M));
      out.set("wg2", wg2_);
      if (r.op == "wl_loss") {
        double cross = 0.0;
        for (std::size_t s = 0; s < G_->nnz(); ++s) cross += wg_[s] * M.cell(G_->at(s));
        out.set("cross", cross);
      }
      return out;
    }
    if (r.op == "wl_h") {
      const AspectModel M = model(r);
      arma::mat h;
      W_->times(0, M.F, h, threads);
      out.set("H", arma::mat(arma::sum(M.F[0] % h, 1)));
      return out;
    }
    if (r.op == "wl_kl") {
      out.set("kl", weighted_piece_kl(*G_, *W_, model(r), r.num("mass", 1.0)));
      return out;
    }
    throw std::logic_error("weighted L2 in pieces: no request '" + r.op + "'");
  }

 private:
  AspectModel model(const Request& r) const { return weighted_piece_model(r, *F0_, G_->order()); }
  // omega g at the cells and sum omega g^2 (once)
  void wg() {
    if (wg2_ >= 0.0) return;
    wg_.set_size(G_->nnz());
    wg2_ = 0.0;
    for (std::size_t s = 0; s < G_->nnz(); ++s) {
      wg_[s] = W_->omega[s] * G_->value(s);
      wg2_ += wg_[s] * G_->value(s);
    }
  }
  // the deviating cells in mode n's order: the other modes' product z
  // (Z_'s columns), weight u and the model there (M_)
  void deviations(std::size_t n) {
    const CPWeights& W = W_->w;
    const std::size_t N = M_.order();
    const arma::uword k = M_.rank();
    const std::vector<index_t>& gx = W.gidx[n];
    Z_.set_size(k, W.cells());
    uE_.assign(W.cells(), 0.0);
    pE_.assign(W.cells(), 0.0);
    for (std::size_t e = 0; e < W.cells(); ++e) {
      const index_t* ix = gx.data() + e * N;
      double* z = Z_.colptr(e);
      double u = 1.0;
      bool first = true;
      for (std::size_t m = 0; m < N; ++m) {
        if (m == n) continue;
        const double* f = M_.F[m].colptr(ix[m]);
        if (first) {
          for (arma::uword c = 0; c < k; ++c) z[c] = f[c];
          u = W.v[m][ix[m]];
          first = false;
        } else {
          for (arma::uword c = 0; c < k; ++c) z[c] *= f[c];
          u *= W.v[m][ix[m]];
        }
      }
      uE_[e] = u;
      pE_[e] = arma::dot(M_.lambda, M_.F[n].col(ix[n]) % Z_.col(e));
    }
  }
  // the documents' column r_ takes col_ (and the model at the deviating
  // cells follows)
  void finish_column() {
    const CPWeights& W = W_->w;
    const std::size_t N = G_->order();
    arma::mat& A0 = *F0_;
    const double lam = M_.lambda[r_];
    for (std::size_t e = 0; e < W.cells(); ++e) {
      const arma::uword i = W.gidx[0][e * N];
      pE_[e] += lam * (col_[i] - A0(r_, i)) * Z_(r_, e);
    }
    for (arma::uword i = 0; i < A0.n_cols; ++i) A0(r_, i) = col_[i];
  }
  const SparseTensor* G_;
  const PlsaWeights* W_;
  arma::mat* F0_;
  arma::vec wg_;
  double wg2_ = -1.0;
  AspectModel M_;  // the model entering the mode (its documents' factor a copy)
  arma::mat Y0_, Gam0_, Z_;
  arma::vec b20_;
  std::vector<double> uE_, pE_, alpha_, beta_, col_;
  arma::uword r_ = 0;
};

// The rule on the master (see above; v: the weights of every mode, those
// of the shared modes read; free_weights: lambda only non-negative). A
// step returns the loss 1/2 sum omega (g - p)^2 of the model it leaves.
class PieceWeightedPPS {
 public:
  static constexpr bool kLagged = false;
  PieceWeightedPPS(std::vector<arma::vec> v, bool free_weights) : v_(std::move(v)), free_weights_(free_weights) {}

  double step(const Pieces& P, AspectPieceModel& M, int) {
    const std::size_t N = M.F.size() + 1;
    const arma::uword k = M.lambda.n_elem;
    if (v_.size() != N) throw std::logic_error("weighted L2 in pieces: one weight vector per mode needed");
    // the documents' columns in turn
    P.map(M.request("wl_m0"));
    for (arma::uword r = 0; r < k; ++r) {
      if (!(M.lambda[r] > 0.0)) continue;  // a zero-weight component does not enter the loss
      document_column(P, r);
    }
    // the shared modes
    arma::mat Y;
    for (std::size_t n = 1; n < N; ++n) {
      arma::mat& A = M.F[n - 1];
      const arma::uword dn = A.n_cols;
      const arma::vec& wa = v_[n];
      Request mr = M.request("wl_mode");
      mr.with("mode", static_cast<double>(n));
      Stats sm = P.map(mr);
      Y = sm.take("Y");
      const arma::mat& Gam = sm.mat("Gam");
      const arma::mat& b2 = sm.mat("b2");
      if (Y.n_rows != k || Y.n_cols != dn || Gam.n_rows != k || Gam.n_cols != k)
        throw std::logic_error("the pieces' statistics of a mode have the wrong size");
      const bool dev = sm.num("ndev") > 0.0;
      std::vector<double> alpha(dn), beta(dn), col(dn);
      arma::mat ud;
      arma::uword ur = 0;
      double ulam = 0.0;
      for (arma::uword r = 0; r < k; ++r) {
        const double lam = M.lambda[r];
        if (!(lam > 0.0)) continue;
        arma::vec coef = M.lambda % Gam.col(r);
        coef[r] = 0.0;
        const arma::rowvec cross = coef.t() * A;  // sum_{s != r} lambda_s A_is Gam_sr
        arma::mat dsq, dabs, dcr;
        if (dev) {
          Request dr("wl_dev");
          const arma::mat arow = A.row(r);
          dr.with("mode", static_cast<double>(n)).with("r", static_cast<double>(r)).with("lam", lam)
            .view("arow", arow);
          if (ud.n_elem) dr.with("ud", ud).with("ur", static_cast<double>(ur)).with("ulam", ulam);
          Stats ds = P.map(dr);
          dsq = ds.take("dsq");
          dabs = ds.take("dabs");
          dcr = ds.take("dcr");
        }
        for (arma::uword i = 0; i < dn; ++i) {
          double sq = b2(r, 0), sqabs = b2(r, 0), cr = cross[i];
          if (dev) {
            sq += dsq[i];
            sqabs += dabs[i];
            cr += dcr[i];
          }
          if (!(wa[i] > 0.0) || !(sq > 1e-12 * sqabs)) {
            alpha[i] = 0.0; beta[i] = 0.0;  // no weight against this component
          } else {
            alpha[i] = lam * lam * wa[i] * sq;
            beta[i] = lam * (Y(r, i) - wa[i] * cr);
          }
          col[i] = A(r, i);
        }
        diag_qp_simplex(alpha, beta, col.data(), dn);
        ud.set_size(1, dn);
        for (arma::uword i = 0; i < dn; ++i) {
          ud[i] = col[i] - A(r, i);
          A(r, i) = col[i];
        }
        ur = r;
        ulam = lam;
      }
    }
    // the weights; Y is the last mode's MTTKRP with the others' new factors
    const Stats sq = P.map(M.request("wl_q"));
    const arma::mat& Q = sq.mat("Q");
    const arma::vec cv = arma::sum(Y % M.F[N - 2], 1);
    if (free_weights_) nonneg_qp(Q, cv, M.lambda); else simplex_qp(Q, cv, M.lambda);
    return 0.5 * (sq.num("wg2") + arma::as_scalar(M.lambda.t() * Q * M.lambda) - 2.0 * arma::dot(cv, M.lambda));
  }

  double loss(const Pieces& P, AspectPieceModel& M, int) {
    const Stats s = P.map(M.request("wl_loss"));
    const arma::mat& Q = s.mat("Q");
    return 0.5 * (s.num("wg2") + arma::as_scalar(M.lambda.t() * Q * M.lambda) - 2.0 * s.num("cross"));
  }

 private:
  // column r of the documents' factor: diag_qp_simplex()'s problem with its
  // rows in the pieces, its root by Newton's method on phi (see above)
  static void document_column(const Pieces& P, arma::uword r) {
    const Stats c = P.map(Request("wl_coef").with("r", static_cast<double>(r)));
    if (!(c.num("np") > 0.0)) return;  // no entry with weight: the column is kept
    const double bmin = c.mat("@bmin").min();
    double mu = (c.num("s1") - 1.0) / c.num("s2");
    if (!(mu <= bmin)) {
      // phi(bmin) > 1: Newton's steps from there, each the root of phi on
      // the entries active at the step before
      mu = bmin;
      double prev = -1.0;
      for (int it = 0; it < 100000; ++it) {
        const Stats s = P.map(Request("wl_newton").with("mu", mu));
        const double cnt = s.num("n");
        if (cnt == prev || !(s.num("s2") > 0.0)) break;
        prev = cnt;
        const double next = (s.num("s1") - 1.0) / s.num("s2");
        if (!(next > mu)) break;
        mu = next;
      }
    }
    // entries without weight against the column take the mass the others
    // leave (evenly) when the root is below 0
    const double nz = c.num("nz");
    const bool spread = nz > 0.0 && mu < 0.0;
    if (spread) mu = 0.0;
    Request ar("wl_apply");
    ar.with("mu", mu).with("spread", spread ? 1.0 : 0.0);
    const double used = P.map(ar).num("used");
    if (spread) P.map(Request("wl_fill").with("each", std::max(0.0, 1.0 - used) / nz));
  }
  std::vector<arma::vec> v_;
  bool free_weights_;
};

// Weighted L2 (pNMF, pNTF) of a matrix or tensor in memory
// (plsa_weighted.h): the rule in pieces on one piece holding the whole
// data, so that every backend runs one implementation. free_weights:
// lambda only non-negative. The loss reported is 1/2 sum omega (g - p)^2.
class WeightedPPSRule {
 public:
  static constexpr bool kLagged = false;
  WeightedPPSRule(const PlsaWeights& w, bool free_weights) : w_(&w), free_weights_(free_weights) {}

  double step(const SparseTensor& G, AspectModel& M, int threads) {
    WeightedPPSPiece piece(G, *w_, M.F[0]);
    PieceWeightedPPS rule(w_->w.v, free_weights_);
    return one_piece_step(piece, rule, M, threads);
  }

  double loss(const SparseTensor& G, const AspectModel& M, int threads) const {
    arma::mat F0 = M.F[0];
    WeightedPPSPiece piece(G, *w_, F0);
    PieceWeightedPPS rule(w_->w.v, free_weights_);
    return one_piece_loss(piece, rule, M, threads);
  }

 private:
  const PlsaWeights* w_;
  bool free_weights_;
};

}  // namespace aspectr

#endif
