// aspectr/driver.h — the iteration loop every solver shares.
//
// A Rule provides step(G, M, threads) -> loss and loss(G, M, threads); rules
// with kLagged = true return the loss of the model *entering* the step (EM and
// q-EM get it for free in their pass over the non-zeros), others the loss
// after it. The driver turns both into one trace (loss after each iteration),
// applies the stopping rule, and calls back once per iteration with the
// iteration number, the newest loss and the model; a callback returning false
// stops the fit (interrupts, a user's callback).
#ifndef ASPECTR_DRIVER_H
#define ASPECTR_DRIVER_H

#include <vector>
#include "control.h"
#include "data.h"

namespace aspectr {

// The value the stopping rule compares with the previous loss: the loss
// itself, or rule.candidate() when the rule has one (rules that may reject a
// step report an unchanged loss then, and the candidate says whether the
// rejected step still moved).
template <class Rule>
auto stop_value(const Rule& rule, double v, int) -> decltype(rule.candidate(), double()) {
  return rule.candidate();
}
template <class Rule>
double stop_value(const Rule&, double v, long) { return v; }

// One step of a rule. Rules without lag may take the loss of the model
// entering the step (`prev`, known to the caller from the step before) as a
// fourth argument, to keep that model when rounding would make the step
// worse (see solvers/cd.h); the others get the usual three.
template <class Rule, class DataT, class ModelT>
auto rule_step(Rule& rule, const DataT& G, ModelT& M, int threads, double prev, int)
    -> decltype(rule.step(G, M, threads, prev)) {
  return rule.step(G, M, threads, prev);
}
template <class Rule, class DataT, class ModelT>
double rule_step(Rule& rule, const DataT& G, ModelT& M, int threads, double, long) {
  return rule.step(G, M, threads);
}

// A fit's iterations so far: the trace (f[t] = the loss after t
// iterations; a lagged rule's newest entry is that of the model entering
// its last step, until solver_finish()), the iterations, and whether the
// stopping rule or the caller ended them.
struct SolverState {
  std::vector<double> f;
  int iterations = 0;
  bool converged = false;
  bool stopped = false;
  bool finished(int max_iter) const { return converged || stopped || iterations >= max_iter; }
};

// The trace's start: a rule without lag reports the loss after each step,
// so the trace begins with the loss of the start (a lagged rule's first
// step returns it).
template <class Rule, class DataT, class ModelT>
void solver_begin(Rule& rule, const DataT& G, ModelT& M, SolverState& s, int threads) {
  if (!Rule::kLagged && s.f.empty()) s.f.push_back(rule.loss(G, M, threads));
}

// The loop itself, for every solver (run_solver() below; the random starts
// of multistart.h, which advance each start a round at a time): up to n
// more iterations (ctl.max_iter in all), each followed by after(it, M)
// (false: the caller stops the fit), then the stopping rule.
template <class Rule, class DataT, class ModelT, class After>
void solver_advance(Rule& rule, const DataT& G, ModelT& M, SolverState& s, int n, const Control& ctl,
                    int threads, After after) {
  const RelativeChange stop{ctl.tol, ctl.floor};
  for (int j = 0; j < n && !s.finished(ctl.max_iter); ++j) {
    const double v = rule_step(rule, G, M, threads, s.f.empty() ? 0.0 : s.f.back(), 0);
    ++s.iterations;
    s.f.push_back(v);  // lagged: f[it-1]; otherwise f[it]
    const std::size_t known = s.f.size() - 1;
    const bool conv = known >= 1 && stop(s.f[known - 1], stop_value(rule, s.f[known], 0));
    if (!after(s.iterations, static_cast<const ModelT&>(M))) { s.stopped = true; break; }
    if (conv) s.converged = true;
  }
}

// The trace's end: a lagged rule's loss of the final model.
template <class Rule, class DataT, class ModelT>
void solver_finish(Rule& rule, const DataT& G, ModelT& M, SolverState& s, int threads) {
  if (Rule::kLagged) s.f.push_back(rule.loss(G, M, threads));
}

template <class Rule, class DataT, class ModelT, class Callback>
FitTrace run_solver(Rule& rule, const DataT& G, ModelT& M, const Control& ctl,
                    Callback& callback) {
  SolverState s;
  solver_begin(rule, G, M, s, ctl.threads);
  solver_advance(rule, G, M, s, ctl.max_iter, ctl, ctl.threads, [&](int it, const ModelT& model) {
    // the callback sees iteration `it`, the objective after it and the model
    const double shown = Rule::kLagged && callback.exact() ? rule.loss(G, M, ctl.threads) : s.f.back();
    return static_cast<bool>(callback(it, shown, model));
  });
  solver_finish(rule, G, M, s, ctl.threads);
  FitTrace tr;
  tr.converged = s.converged;
  tr.stopped = s.stopped;
  tr.initial = s.f.front();
  tr.objective.assign(s.f.begin() + 1, s.f.end());
  tr.iterations = s.iterations;
  return tr;
}

}  // namespace aspectr

#endif
