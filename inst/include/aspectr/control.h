// aspectr/control.h — stopping rule and callbacks shared by all solvers.
#ifndef ASPECTR_CONTROL_H
#define ASPECTR_CONTROL_H

#include <cmath>
#include <vector>

namespace aspectr {

// Safeguards that compare objectives (a step kept only when its value is
// not above the value before it, an extrapolation kept only when it lowers
// the objective) compare them up to a rounding allowance, kRoundingSlack
// of their size: the same step's sums taken in another order (in memory,
// by shards, on a cluster) differ in their last digits, and at the
// objective's floor a bare comparison would be decided by that rounding,
// differently on every backend.
constexpr double kRoundingSlack = 1e-13;
inline double rounding_slack(double f0) { return std::isfinite(f0) ? kRoundingSlack * std::fabs(f0) : 0.0; }
// f is not above f0 but for rounding (false when f is not a number)
inline bool no_rise(double f, double f0) { return f <= f0 + rounding_slack(f0); }
// f is below f0 by more than rounding (false when f is not a number).
// (The allowance is relative to the objective, not to the sums it is the
// difference of: one relative to ||X||^2 would stop a fit that tends to
// an exact one short of it, where each step lowers the objective by a
// fixed fraction.)
inline bool clear_drop(double f, double f0) { return f < f0 - rounding_slack(f0); }

struct Control {
  int max_iter = 1000;
  double tol = 1e-6;   // relative change of the objective between iterations
  int threads = 1;
  // an objective that stays within `floor` of 0 (> 0; 0: none) has
  // converged: a fit that tends to an exact one falls geometrically to the
  // objective's rounding floor, where its relative change never settles
  // (within, not below: an objective that is not a divergence, such as
  // lca()'s with missing responses, may be negative)
  double floor = 0.0;
};

// Relative-change stopping rule: |f_{t-1} - f_t| <= tol * max(|f_{t-1}|, eps),
// or both within the floor of 0.
struct RelativeChange {
  double tol;
  double floor = 0.0;
  bool operator()(double prev, double cur) const {
    if (!(tol > 0.0)) return false;
    if (floor > 0.0 && std::fabs(prev) <= floor && std::fabs(cur) <= floor) return true;
    const double scale = std::max(std::fabs(prev), 1e-300);
    return std::fabs(prev - cur) <= tol * scale;
  }
};

// A callback that never stops the fit (plain C++ use, tests). Callbacks
// are called once per iteration with the iteration number, the objective
// after it and the current model; `exact()` says whether a rule that only
// knows the objective of the model entering its step (kLagged) must compute
// the objective of the model after it for the callback (an extra pass, done
// only when the callback looks at the model).
struct NoCallback {
  template <class ModelT>
  bool operator()(int, double, const ModelT&) { return true; }
  bool exact() const { return false; }
};

struct FitTrace {
  std::vector<double> objective;  // loss after each iteration
  double initial = 0.0;           // loss of the starting point
  int iterations = 0;
  bool converged = false;
  bool stopped = false;           // the callback asked to stop
};

}  // namespace aspectr

#endif
