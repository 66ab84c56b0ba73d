// aspectr/solvers/plsa_weighted.h — the aspect model of a matrix or an
// N-way tensor under the Tsallis and L2 losses with weights per cell:
// missing cells, masks, observed cells and weights per cell and per index
// of each mode (plsa() with `NA`, mask, observed, weights, row_weights,
// col_weights, mode_weights).
//
// Model P = U diag(lambda) V' (factors stored k x d, the core's layout),
// every column of U and V on the probability simplex. The weights are
// omega_ij = r_i c_j (d + delta_ij) (as nmf/weighted.h and
// solvers/cp_weighted.h: row and column weights, a base d, deviations delta
// on a sparse set E of cells; 0 for a cell left out). The data G are given
// at the cells where omega x > 0, with omega there (PlsaWeights::omega).
// Omega times a factor, (Omega V)_ir = sum_j omega_ij V_jr, costs
// O((m + n) k + |E| k): r_i (d sum_j c_j V_jr + sum_{j in E_i} delta_ij c_j V_jr).
//
// N-way data: P = sum_r lambda_r F_1(:, r) o ... o F_N(:, r) and omega_c =
// prod_n v_n(i_n) (d + delta_c), cp_weighted.h's CPWeights (which the
// weights hold: its Omega times the other modes' Khatri-Rao product,
// CPWeights::times(), is the "Omega V" below, and CPWeights::gram() the
// common part of the Gram matrices). Everything below holds mode by mode
// with U the factor of the mode updated and V_j. replaced by z_c, the
// product of the other modes' rows at cell c (the rows of the modes
// updated before, new; of the others, old): the L2 sweep and the q-EM
// steps update lambda, then the modes in turn, each by the same exact
// column problems, and the weights' Q of L2 is d hadamard_n F_n' D_n F_n
// plus the deviations' terms. With N = 2 the steps are those of the matrix.
//
// L2 (pNMF, Hazan and Shashua 2007), G = x / sum of x over the cells that
// count: minimize f = 1/2 sum_ij omega_ij (g_ij - p_ij)^2 by exact block
// updates, as PPSPiecesRule (pps.h, cp_pieces.h). Column r of U with
// everything else fixed:
//   f = sum_i (1/2 alpha_i u_i^2 - beta_i u_i) + const,
//   alpha_i = lambda_r^2 sum_j omega_ij V_jr^2,
//   beta_i  = lambda_r (sum_j omega_ij g_ij V_jr
//                       - sum_{s != r} lambda_s U_is sum_j omega_ij V_js V_jr),
// separable with a diagonal Hessian (with omega = 1, alpha_i = lambda_r^2
// ||v_r||^2 for every i, and the solution is pps_update_mode()'s
// projection). Its
// exact minimizer on the simplex: u_i = max(0, (beta_i - mu) / alpha_i)
// with mu the root of the piecewise linear sum_i u_i(mu) = 1 (the
// weighted form of the simplex projection; found by sorting for a shared
// mode, by Newton's method from the left for the documents' mode, whose
// rows may be in pieces: plsa_weighted_l2_pieces.h); rows of
// alpha_i = 0 (no weight against v_r, e.g. a row left out, where beta_i = 0
// too) cost nothing, so they take the mass the others leave (evenly) when
// the root is below 0 (their KKT condition is mu >= 0) and none otherwise.
// The weights: min 1/2 lambda'Q lambda - c'lambda on the simplex (or the
// orthant with free weights, the unnormalized model), with
//   Q = d (U' D_r U) o (V' D_c V) + sum_E delta r c (u_i o v_j)(u_i o v_j)',
//   c = sum_cells omega g (u_i o v_j),
// simplex_qp() / nonneg_qp(). Every block step is an exact minimization,
// so f never increases. Per sweep: two weighted MTTKRPs over the cells,
// O((m + n) k^2 + |E| k^2).
//
// Tsallis (q-EM, Hazan, Haroon and Shashua), G = x / sum(omega x), so that
// sum omega g = 1. The objective is D_q of the observed share of the data
// from the model's share of the same cells (both normalized over them with
// their weights, as the KL fit's D(G_o || P_o)):
//   J(P) = (1 - A S^(q - 1)) / (1 - q),  A = sum omega g^q p^(1-q),
//                                        S = sum_ij omega_ij p_ij,
// invariant to the scale of P (with omega = 1, S = 1 and J = D_q(G || P)).
// It is the scale-profiled form of the weighted alpha-divergence
//   F(P) = q + (1 - q) S(P) - A(P) = sum omega (q g + (1-q) p - g^q p^(1-q)),
// a sum of non-negative cell terms (the weighted mean inequality), whose
// normalizer term (1 - q) sum omega p is what the cells left out need: the
// constant sum p = 1 of the unweighted objective becomes the weighted mass
// of the model on the cells that count. min_s F(s P) = q (1 - (A S^(q-1))^(1/q))
// is increasing in J, at s* = (A / S)^(1/q).
// One step, the model entering it normalized:
//  1. t_ij = omega_ij (g_ij / p_ij)^q at the cells, A and S, the value J;
//     the model rescaled to s* (lambda <- s* lambda, t <- t s*^(-q)), where
//     F(s* P) = min_s F(s P).
//  2. The q-EM bound with the posteriors w_r = lambda_r U_ir V_jr / p_ij of
//     that model (the concavity of p^(1-q)), p^(1-q) >= sum_r w_r^q p_r^(1-q):
//       F <= M = q + (1-q) sum_r lambda_r sum_ij omega_ij U_ir V_jr
//                - sum_r sum_cells t (lambda0 U0 V0)_r^q (lambda U V)_r^(1-q),
//     equal at the model entering. M is minimized block by block, each
//     exactly, the other blocks at their newest values:
//     lambda (free, non-negative: the scale is free in F):
//       lambda_r = (a_r / H_r)^(1/q), a_r = lambda0_r^q sum_i U0_ir B_ir,
//       H_r = sum_ij omega_ij U_ir V_jr, B = MTTKRP_rows(t, V0);
//     U's column r on the simplex: min sum_i ((1-q) lambda_r h_i u_i - a_i u_i^(1-q)),
//       h = Omega v_r, a_i = lambda0_r^q lambda_r^(1-q) U0_ir^q B_ir;
//     V's column r the same with h = Omega' u_r (new U) and B the MTTKRP
//       of t with U0^q o U^(1-q) (qem.h's mixing of updated modes).
//     The column problem is strictly convex; its KKT conditions give
//       u_i = ((1-q) a_i / ((1-q) lambda_r h_i + mu))^(1/q)   (a_i > 0),
//     mu the root of sum_i u_i(mu) = 1, found by Newton's method on
//     log sum_i u_i(mu), convex and decreasing in mu, from a point left of
//     the root (every term at most 1 there), so that the iterates rise
//     monotonically to it (safeguarded by bisection of a bracket of the
//     root where rounding leaves the logarithm undefined). Where the root
//     lies within rounding of an entry's pole mu = -b_i (a_i far below the
//     resolution of b_i + mu, e.g. a row whose weight against the column
//     is tiny, or left as rounding noise by the weights' cancellation),
//     that entry's value cannot be resolved through mu: it takes the mass
//     the others leave, the solution in the limit. A column whose
//     solution (so computed) would raise its problem keeps its values (the
//     monotonicity argument needs no more than a step that does not rise). Entries with a_i = 0 are 0, unless their
//     linear cost (1-q) lambda_r h_i is below -mu at that root: then mu is
//     raised to minus the smallest such cost and those entries of least
//     cost share the rest of the mass evenly (a row left out, h_i = 0).
//     With omega = 1, h_i = 1 for every i and H_r = 1, and the steps are
//     q-EM's (qem.h) up to the scale of lambda.
//  3. lambda renormalized onto the simplex (J is scale invariant).
// Then J(P_new) <= J(P_old): F(P_new) <= M(P_new) <= M(s* P_old) =
// F(s* P_old) = min_s F(s P_old), and min_s F(s P_new) <= F(P_new).
// Per step: two MTTKRPs over the cells, O((m + n) k + |E| k) for the
// weighted sums and O(d) root searches of a few Newton steps per column.
#ifndef ASPECTR_SOLVERS_PLSA_WEIGHTED_H
#define ASPECTR_SOLVERS_PLSA_WEIGHTED_H

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <stdexcept>
#include <vector>
#include "../control.h"
#include "../loss.h"
#include "../simplex.h"
#include "cp_weighted.h"

namespace aspectr {

// The weights of the cells (see above): those of weighted CP (w: d, the
// weights per index of each mode, the deviations' cells and delta, see
// cp_weighted.h; prepare() groups the deviations by mode) and omega at the
// data's cells (in the data's order).
struct PlsaWeights {
  CPWeights w;
  arma::vec omega;

  std::size_t order() const { return w.v.size(); }
  std::size_t cells() const { return w.cells(); }

  void prepare(const std::vector<arma::uword>& dims, std::size_t nnz) {
    if (omega.n_elem != nnz) throw std::invalid_argument("weighted pLSA: one weight per data cell needed");
    w.prepare(dims);
  }

  // out(:, i) = sum_{c: i_n = i} omega_c z_c for the indices i of mode n,
  // z_c the product of the other modes' columns at the cell's indices
  // (F: the factors, k x d_m; F[n] is not read)
  void times(std::size_t n, const std::vector<arma::mat>& F, arma::mat& out, int threads = 1) const {
    out = w.times(F, n, threads, false);
  }

  // sum_c omega_c p_c of the model
  double model_mass(const AspectModel& M, int threads = 1) const {
    arma::mat h;
    times(0, M.F, h, threads);
    return arma::dot(M.lambda, arma::sum(M.F[0] % h, 1));
  }

  // Q of the L2 weights' problem (see above): d hadamard_n F_n diag(v_n)
  // F_n' plus the deviations' rank-one terms
  arma::mat weight_gram(const AspectModel& M) const {
    const std::size_t N = M.order();
    arma::mat Q = w.d * ((M.F[0].each_row() % w.v[0].t()) * M.F[0].t());
    for (std::size_t n = 1; n < N; ++n) Q %= (M.F[n].each_row() % w.v[n].t()) * M.F[n].t();
    for (std::size_t e = 0; e < w.cells(); ++e) {
      const index_t* ix = w.idx.data() + e * N;
      arma::vec z = M.F[0].col(ix[0]);
      double f = w.delta[e] * w.v[0][ix[0]];
      for (std::size_t n = 1; n < N; ++n) {
        z %= M.F[n].col(ix[n]);
        f *= w.v[n][ix[n]];
      }
      Q += f * (z * z.t());
    }
    return Q;
  }
};

// min sum_i (1/2 alpha_i x_i^2 - beta_i x_i) over the simplex (alpha >= 0;
// entries of alpha_i = 0 have beta_i = 0, see above). x: the current point
// on entry, the minimizer on exit (kept when every alpha_i is 0).
inline void diag_qp_simplex(const std::vector<double>& alpha, const std::vector<double>& beta, double* x,
                            std::size_t dn) {
  std::vector<std::size_t> P, Z;
  for (std::size_t i = 0; i < dn; ++i) (alpha[i] > 0.0 ? P : Z).push_back(i);
  if (P.empty()) return;
  std::sort(P.begin(), P.end(), [&](std::size_t a, std::size_t b) { return beta[a] > beta[b]; });
  double sb = 0.0, sa = 0.0, mu = 0.0;
  for (std::size_t t = 0; t < P.size(); ++t) {
    const std::size_t i = P[t];
    sb += beta[i] / alpha[i];
    sa += 1.0 / alpha[i];
    const double m = (sb - 1.0) / sa;
    if (beta[i] - m > 0.0) mu = m;
  }
  const bool spread = !Z.empty() && mu < 0.0;
  if (spread) mu = 0.0;
  double used = 0.0;
  for (std::size_t i : P) {
    x[i] = std::max(0.0, (beta[i] - mu) / alpha[i]);
    used += x[i];
  }
  for (std::size_t i : Z) x[i] = spread ? std::max(0.0, 1.0 - used) / static_cast<double>(Z.size()) : 0.0;
}

// The root search of power_qp_simplex() as a state machine, so that a fit
// in pieces (plsa_weighted_pieces.h) runs the same iterates with psi's sums
// added over its pieces: start() with the bracket [L, R] and whether to
// search (else the root is R); while active(), feed() psi and its
// derivative at mu. Newton's method from L, bisection wherever psi is not
// finite or a step leaves the bracket; not converged (the root within
// rounding of an entry's pole): R, whose sum is at most 1.
struct PowerRoot {
  double L = 0.0, R = 0.0, mu = 0.0;
  int it = 0;
  int phase = 0;  // 0 done, 1 Newton, 2 the last value after 400 steps
  void start(double L0, double R0, bool search) {
    L = L0; R = R0; it = 0;
    if (search) { mu = L; phase = 1; } else { mu = R; phase = 0; }
  }
  bool active() const { return phase != 0; }
  void feed(double v, double dpsi) {
    if (phase == 2 || (std::isfinite(v) && std::abs(v) <= 1e-15)) { finish(v); return; }
    if (v > 0.0) L = mu; else R = mu;
    double next = std::isfinite(v) && dpsi < 0.0 ? mu - v / dpsi : L - 1.0;
    if (!(next > L && next < R)) next = L + 0.5 * (R - L);
    if (next == mu || !(next > L && next < R)) { finish(v); return; }
    mu = next;
    if (++it >= 400) phase = 2;
  }
 private:
  void finish(double v) {
    if (!(std::isfinite(v) && std::abs(v) <= 1e-12)) mu = R;
    phase = 0;
  }
};

// min sum_i (b_i x_i - a_i x_i^(1-q)) over the simplex (a, b >= 0), see
// above. x: the current point on entry, the minimizer on exit (kept when
// every a_i is 0).
inline void power_qp_simplex(const std::vector<double>& a, const std::vector<double>& b, double q, double* x,
                             std::size_t dn) {
  const double p = 1.0 / q;
  std::vector<std::size_t> P;
  double zmin = std::numeric_limits<double>::infinity();
  for (std::size_t i = 0; i < dn; ++i) {
    if (a[i] > 0.0) P.push_back(i); else zmin = std::min(zmin, b[i]);
  }
  if (P.empty()) return;
  // (1 - q) a_i and log of it; the bracket [L, R] of the root: at
  // L = max_i ((1 - q) a_i - b_i) every term is at most 1 and one is 1 (the
  // sum >= 1); at R = (1 - q) ||a||_(1/q) - min_i b_i every term is at most
  // a_i^(1/q) / sum a^(1/q) (the sum <= 1)
  const double inf = std::numeric_limits<double>::infinity();
  std::vector<double> la(P.size());
  double L = -inf, amax = 0.0, bmin = inf;
  for (std::size_t t = 0; t < P.size(); ++t) {
    const double ca = (1.0 - q) * a[P[t]];
    la[t] = std::log(ca);
    L = std::max(L, ca - b[P[t]]);
    amax = std::max(amax, a[P[t]]);
    bmin = std::min(bmin, b[P[t]]);
  }
  double sp = 0.0;
  for (std::size_t t = 0; t < P.size(); ++t) sp += std::pow(a[P[t]] / amax, p);
  double R = (1.0 - q) * amax * std::pow(sp, q) - bmin;
  // psi(mu) = log sum_i exp(p (la_i - log(b_i + mu))), convex decreasing;
  // +inf where some b_i + mu <= 0 (rounding, at L itself when a_i is far
  // below b_i)
  std::vector<double> lt(P.size());
  auto psi = [&](double m, double* dpsi) {
    double mx = -inf;
    for (std::size_t t = 0; t < P.size(); ++t) {
      const double den = b[P[t]] + m;
      if (!(den > 0.0)) return inf;
      lt[t] = p * (la[t] - std::log(den));
      mx = std::max(mx, lt[t]);
    }
    double s = 0.0, ds = 0.0;
    for (std::size_t t = 0; t < P.size(); ++t) {
      const double w = std::exp(lt[t] - mx);
      s += w;
      ds += w / (b[P[t]] + m);
    }
    *dpsi = -p * ds / s;
    return mx + std::log(s);
  };
  // Newton's method from L (from the left of the root of a convex
  // decreasing function its iterates rise to the root), bisection of the
  // bracket wherever psi is not finite or a step leaves the bracket
  // (PowerRoot, which the fit in pieces shares)
  double dpsi = 0.0;
  PowerRoot root;
  root.start(L, R, R > L && !(psi(R, &dpsi) >= 0.0));
  while (root.active()) {
    const double v = psi(root.mu, &dpsi);
    root.feed(v, dpsi);
  }
  double mu = root.mu;
  const bool spread = zmin < std::numeric_limits<double>::infinity() && mu < -zmin;
  if (spread) mu = -zmin;
  double used = 0.0;
  for (std::size_t i = 0; i < dn; ++i) x[i] = 0.0;
  for (std::size_t t = 0; t < P.size(); ++t) {
    const std::size_t i = P[t];
    x[i] = std::exp(p * (la[t] - std::log(b[i] + mu)));
    used += x[i];
  }
  if (spread) {
    std::size_t nz = 0;
    for (std::size_t i = 0; i < dn; ++i) if (!(a[i] > 0.0) && b[i] <= zmin) ++nz;
    const double each = std::max(0.0, 1.0 - used) / static_cast<double>(nz);
    for (std::size_t i = 0; i < dn; ++i) if (!(a[i] > 0.0) && b[i] <= zmin) x[i] = each;
  } else if (used < 1.0 - 1e-12) {
    // The root is within rounding of the pole -b_i of one entry (an entry
    // whose a_i is far below the resolution of b_i + mu: its value jumps
    // between neighbouring doubles of mu, the others' do not): that entry
    // takes the rest of the mass, the solution in the limit.
    std::size_t best = P[0];
    double near = inf;
    for (std::size_t t = 0; t < P.size(); ++t) {
      const std::size_t i = P[t];
      const double rel = (b[i] + mu) / (std::abs(b[i]) + std::abs(mu));
      if (rel < near) { near = rel; best = i; }
    }
    x[best] += 1.0 - used;
  } else if (used > 0.0) {
    for (std::size_t t = 0; t < P.size(); ++t) x[P[t]] /= used;
  }
}

// (The weighted L2 rule, WeightedPPSRule, is that in pieces on one piece:
// plsa_weighted_l2_pieces.h.)

// The q-EM column problem of column r of a factor (see above): a_i =
// f F0_ri^q B_ri (f = lam0_r^q lam_r^(1-q)) and the linear costs
// b_i = (1-q) lam_r h_ri, for the entries i in [0, dn)
inline void weighted_qem_coefs(const arma::mat& F0, const arma::mat& B, const arma::mat& h, arma::uword r,
                               double lam0, double lam, double q, double* a, double* b) {
  const double f = std::pow(lam0, q) * std::pow(lam, 1.0 - q);
  for (arma::uword i = 0; i < F0.n_cols; ++i) {
    a[i] = F0(r, i) > 0.0 && B(r, i) > 0.0 ? f * std::pow(F0(r, i), q) * B(r, i) : 0.0;
    b[i] = (1.0 - q) * lam * std::max(h(r, i), 0.0);
  }
}

// sum_i (b_i x_i - a_i x_i^(1-q)), the column problem's value at x
inline double power_problem_value(const double* a, const double* b, double q, const double* x, std::size_t dn) {
  double f = 0.0;
  for (std::size_t i = 0; i < dn; ++i) f += b[i] * x[i] - (x[i] > 0.0 ? a[i] * std::pow(x[i], 1.0 - q) : 0.0);
  return f;
}

// J from A and S (see above)
inline double weighted_qem_value(double A, double S, double q) {
  if (!(S > 0.0)) return 1.0 / (1.0 - q);
  return (1.0 - A * std::pow(S, q - 1.0)) / (1.0 - q);
}

// every column r of F (k x d): the problem above with a_i =
// lam0_r^q lam_r^(1-q) F0_ri^q B_ri and linear costs (1-q) lam_r h_ri;
// kept only when it does not raise the column's problem (rounding near a
// pole can leave the root search short of the minimizer, and the bound
// needs no more than a step that does not rise)
inline void weighted_qem_columns(arma::mat& F, const arma::mat& F0, const arma::mat& B, const arma::mat& h,
                                 const arma::vec& lam0, const arma::vec& lam, double q) {
  const arma::uword k = F.n_rows, dn = F.n_cols;
  std::vector<double> a(dn), b(dn), col(dn), old(dn);
  for (arma::uword r = 0; r < k; ++r) {
    if (!(lam[r] > 0.0)) continue;
    weighted_qem_coefs(F0, B, h, r, lam0[r], lam[r], q, a.data(), b.data());
    for (arma::uword i = 0; i < dn; ++i) old[i] = col[i] = F(r, i);
    power_qp_simplex(a, b, q, col.data(), dn);
    const double fnew = power_problem_value(a.data(), b.data(), q, col.data(), dn);
    const double fold = power_problem_value(a.data(), b.data(), q, old.data(), dn);
    if (!no_rise(fnew, fold)) continue;  // (B and h: sums over the pieces)
    for (arma::uword i = 0; i < dn; ++i) F(r, i) = col[i];
  }
}

// (The weighted q-EM rule, WeightedQEMRule, is that in pieces on one piece:
// plsa_weighted_pieces.h.)

}  // namespace aspectr

#endif
