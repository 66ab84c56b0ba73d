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
// The rule keeps a_max between steps: one object serves one model.
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

// One SQUAREM step (above) of a model held by `ops`: the algorithm (its
// step length, bound and safeguard) of PieceSquarem (pieces_squarem.h: a
// model in pieces, the data in memory being one piece). `ops` gives
//   double step(double* merit)  the base step; returns its (lagged) value
//                               and sets *merit, when merit is not null,
//                               to f of the model entering it
//   void keep(int t)            the model kept as theta_t (t = 0, 1)
//   void norms(double& rr, double& vv)  ||r||^2 and ||v||^2 added to rr
//                               and vv, the model being theta2
//   bool extrapolate(double a)  theta2 kept and the model made theta' of
//                               step length a; false (the model left at
//                               theta2) when the weights cannot be
//                               renormalized
//   void restore()              the model theta2 again
// `step_max` is the bound a_max, updated. Returns the value of the model
// entering the step (the base rule's, lagged).
template <class Ops>
double squarem_step(Ops& ops, double& step_max) {
  double f0 = 0.0, fx = 0.0;
  ops.keep(0);
  const double v0 = ops.step(&f0);  // theta1, f0 = f(theta0)
  ops.keep(1);
  ops.step(nullptr);                // theta2
  double rr = 0.0, vv = 0.0;
  ops.norms(rr, vv);
  if (!(vv > 0.0) || !std::isfinite(rr) || !std::isfinite(vv)) return v0;
  const double len = std::min(std::sqrt(rr / vv), step_max);
  const bool longest = len == step_max;
  if (!(len > kSquaremMinStep)) {  // theta' would be theta2
    if (longest) step_max *= kSquaremGrow;
    return v0;
  }
  if (!ops.extrapolate(len)) {
    if (longest) step_max = std::max(1.0, step_max / kSquaremGrow);
    return v0;
  }
  ops.step(&fx);                            // F(theta'), fx = f(theta')
  const bool accept = clear_drop(fx, f0);  // (false when fx is not finite)
  if (!accept) ops.restore();
  if (longest) step_max = accept ? step_max * kSquaremGrow : std::max(1.0, step_max / kSquaremGrow);
  return v0;
}

}  // namespace aspectr

#endif
