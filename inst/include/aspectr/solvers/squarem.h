// aspectr/solvers/squarem.h — SQUAREM extrapolation (Varadhan and Roland
// 2008, scheme S3, with its adaptive bound on the step length) of a
// monotone fixed-point rule (EM, tempered EM, q-EM), with a safeguard that
// keeps it monotone.
//
// With F the base rule's map (one step) and theta the model (lambda and the
// factors, every component's distribution on the simplex):
//   theta1 = F(theta0), theta2 = F(theta1),
//   r = theta1 - theta0, v = theta2 - 2 theta1 + theta0,
//   a = min(||r|| / ||v||, a_max)   (a <= 1 gives theta2 itself),
//   theta' = theta0 + 2 a r + a^2 v, every entry kept at least 1/10 of
//            theta2's (EM keeps a zero at zero for ever, and entries that
//            head for zero would be extrapolated below it), every
//            distribution renormalized,
//   theta_new = F(theta') when f(theta') < f(theta0) by more than
//   rounding (clear_drop(), control.h), else theta2,
// where f is the function the base step never increases (its "merit": the
// KL divergence for EM, the tempered free energy for tempered EM, the
// Tsallis divergence for q-EM), which the base step reports for the model
// entering it in the same pass. Then f(theta_new) <= f(theta0) either way:
// the iterates never increase f, and a fixed point of the extrapolated map
// is one of F. The bound a_max starts at 1, is multiplied by 4 when a step
// as long as it succeeds (or a = a_max <= 1) and divided by 4 (not below 1)
// when one fails. One step costs three passes of the base rule (two when
// a <= 1).
//
// The rule keeps a_max between steps: one object serves one model (the
// base rule may be shared).
#ifndef ASPECTR_SOLVERS_SQUAREM_H
#define ASPECTR_SOLVERS_SQUAREM_H

#include <algorithm>
#include <cmath>
#include "../control.h"
#include "../data.h"
#include "normalize.h"

namespace aspectr {

// The arithmetic of a SQUAREM step, block by block (a block: lambda or a
// factor, or a piece's rows of the documents' factor, see
// pieces_squarem.h): the same for every model held in one object or in
// pieces.
constexpr double kSquaremGrow = 4.0;     // the bound's factor
constexpr double kSquaremFloor = 0.1;    // entries kept >= this times theta2's
constexpr double kSquaremMinStep = 1.0 + 1e-3;  // shorter: theta2 itself

// ||r||^2 and ||v||^2 of one block added to rr and vv (r = a1 - a0,
// v = a2 - 2 a1 + a0)
inline void squarem_norms(const arma::mat& a0, const arma::mat& a1, const arma::mat& a2, double& rr, double& vv) {
  const double* p0 = a0.memptr();
  const double* p1 = a1.memptr();
  const double* p2 = a2.memptr();
  for (arma::uword j = 0; j < a0.n_elem; ++j) {
    const double r = p1[j] - p0[j], v = p2[j] - 2.0 * p1[j] + p0[j];
    rr += r * r;
    vv += v * v;
  }
}

// theta0 + 2 a r + a^2 v of one block into `out`, every entry kept at
// least kSquaremFloor times theta2's (before the renormalization)
inline void squarem_entries(const arma::mat& a0, const arma::mat& a1, const arma::mat& a2, double a,
                            arma::mat& out) {
  const double c1 = 2.0 * a, c2 = a * a;
  out.set_size(a0.n_rows, a0.n_cols);
  const double* p0 = a0.memptr();
  const double* p1 = a1.memptr();
  const double* p2 = a2.memptr();
  double* o = out.memptr();
  for (arma::uword j = 0; j < a0.n_elem; ++j) {
    const double x = p0[j] + c1 * (p1[j] - p0[j]) + c2 * (p2[j] - 2.0 * p1[j] + p0[j]);
    const double lo = p2[j] * kSquaremFloor;
    o[j] = x > lo ? x : lo;  // (NaN: lo)
  }
}

// the weights extrapolated and renormalized into `out`; false when they
// cannot be (no mass, or not finite)
inline bool squarem_weights(const arma::vec& l0, const arma::vec& l1, const arma::vec& l2, double a, arma::vec& out) {
  arma::mat l;
  squarem_entries(l0, l1, l2, a, l);
  const double s = arma::accu(l);
  if (!(s > 0.0) || !std::isfinite(s)) return false;
  out = arma::vec(l.memptr(), l.n_elem) / s;
  return true;
}

template <class Base>
class SquaremRule {
 public:
  explicit SquaremRule(Base& base) : base_(&base) {}
  // the loss returned is the base rule's (lagged) loss of the model entering
  static constexpr bool kLagged = true;

  // several SquaremRules may share one base rule (one per start of
  // multistart.h), which must then be usable concurrently after bind()
  void bind(const SparseTensor& G) { base_->bind(G); }

  // the step-length bound a_max, read and set to resume a fit where an
  // earlier call left it (staged restarts run from R)
  double step_bound() const { return step_max_; }
  void set_step_bound(double a) { step_max_ = std::isfinite(a) && a >= 1.0 ? a : 1.0; }

  // (G: what the base rule's steps take, see data.h)
  template <class DataT>
  double step(const DataT& G, AspectModel& M, int threads) {
    // (the copies go to members, whose memory is reused from step to step)
    AspectModel& M0 = m0_;
    AspectModel& M1 = m1_;
    AspectModel& M2 = m2_;
    M0 = M;
    double f0 = 0.0, fx = 0.0;
    const double v0 = base_->step_merit(G, M, threads, &f0);  // M = theta1, f0 = f(theta0)
    M1 = M;
    base_->step_merit(G, M, threads, nullptr);                // M = theta2
    double rr = 0.0, vv = 0.0;
    squarem_norms(M0.lambda, M1.lambda, M.lambda, rr, vv);
    for (std::size_t n = 0; n < M.order(); ++n) squarem_norms(M0.F[n], M1.F[n], M.F[n], rr, vv);
    if (!(vv > 0.0) || !std::isfinite(rr) || !std::isfinite(vv)) return v0;
    const double len = std::min(std::sqrt(rr / vv), step_max_);
    const bool longest = len == step_max_;
    if (!(len > kMinStep)) {  // theta' would be theta2
      if (longest) step_max_ *= kGrow;
      return v0;
    }
    M2 = M;
    if (!extrapolate(M0, M1, M2, len, M)) {
      M = M2;
      if (longest) step_max_ = std::max(1.0, step_max_ / kGrow);
      return v0;
    }
    base_->step_merit(G, M, threads, &fx);  // M = F(theta'), fx = f(theta')
    const bool accept = clear_drop(fx, f0);  // (false when fx is not finite)
    if (!accept) M = M2;
    if (longest) step_max_ = accept ? step_max_ * kGrow : std::max(1.0, step_max_ / kGrow);
    return v0;
  }

  template <class DataT>
  double loss(const DataT& G, const AspectModel& M, int threads) {
    return base_->loss(G, M, threads);
  }

  // theta' = theta0 + 2 a r + a^2 v into M (see above); false when the
  // weights cannot be renormalized
  static bool extrapolate(const AspectModel& M0, const AspectModel& M1, const AspectModel& M2, double a,
                          AspectModel& M) {
    if (!squarem_weights(M0.lambda, M1.lambda, M2.lambda, a, M.lambda)) return false;
    M.F.resize(M0.F.size());
    for (std::size_t n = 0; n < M0.F.size(); ++n) {
      squarem_entries(M0.F[n], M1.F[n], M2.F[n], a, M.F[n]);
      // rows are components, each a distribution over the mode's indices;
      // a row can lack mass only where theta2's does (a dead component,
      // the floor keeps every other one), and keeps theta2's
      normalize_rows(M.F[n], M2.F[n]);
    }
    return true;
  }

 private:
  Base* base_;
  double step_max_ = 1.0;
  AspectModel m0_, m1_, m2_;  // theta0, theta1, theta2 of the current step
  static constexpr double kGrow = kSquaremGrow;
  static constexpr double kMinStep = kSquaremMinStep;
};

}  // namespace aspectr

#endif
