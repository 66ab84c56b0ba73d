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

template <class Rule, class DataT, class ModelT, class Callback>
FitTrace run_solver(Rule& rule, const DataT& G, ModelT& M, const Control& ctl,
                    Callback& callback) {
  FitTrace tr;
  RelativeChange stop{ctl.tol};
  std::vector<double> f;  // f[t] = loss after t iterations
  if (!Rule::kLagged) f.push_back(rule.loss(G, M, ctl.threads));
  int it = 0;
  while (it < ctl.max_iter) {
    const double v = rule_step(rule, G, M, ctl.threads, f.empty() ? 0.0 : f.back(), 0);
    ++it;
    f.push_back(v);  // lagged: f[it-1]; otherwise f[it]
    const std::size_t known = f.size() - 1;
    bool conv = known >= 1 && stop(f[known - 1], stop_value(rule, f[known], 0));
    // the callback sees iteration `it`, the objective after it and the model
    const double shown = Rule::kLagged && callback.exact() ? rule.loss(G, M, ctl.threads) : f.back();
    if (!callback(it, shown, static_cast<const ModelT&>(M))) { tr.stopped = true; break; }
    if (conv) { tr.converged = true; break; }
  }
  if (Rule::kLagged) f.push_back(rule.loss(G, M, ctl.threads));
  tr.initial = f.front();
  tr.objective.assign(f.begin() + 1, f.end());
  tr.iterations = it;
  return tr;
}

}  // namespace aspectr

#endif
