// aspectr/solvers/multistart.h — random restarts of a lagged solver, run in
// stages and (for several active starts) in parallel over the starts.
//
// Staged restarts (the short-run / "emEM" strategy of Biernacki, Celeux and
// Govaert 2003): every start first runs `short_iter` iterations; only the
// `keep` starts with the smallest objective then continue to convergence.
// short_iter = 0 (or keep >= the number of starts) runs every start to
// convergence. If a continued start reaches max_iter without converging
// (a flat likelihood, where the short-run ranking is unreliable), the other
// starts are run on to the end as well. A start's trajectory does not
// depend on the staging: its iterations are run_solver()'s, by the same
// loop (driver.h's solver_advance(): same stopping rule, same trace), and
// stage 2 only resumes it.
//
// Threads: while two or more starts are active, threads go over the starts
// (each start's own iterations single-threaded, so its result does not depend
// on the thread count); a single remaining start uses the threads over the
// non-zeros as run_solver() does. A rule shared by the starts must be
// usable concurrently after bind() (KLCDRule is); lca()'s EM and SQUAREM
// run a rule per start (pieces_memory.h's AspectEMRule).
//
// `check()` is called on the calling thread between rounds of iterations
// (interrupts, progress); returning false stops every start where it is.
#ifndef ASPECTR_SOLVERS_MULTISTART_H
#define ASPECTR_SOLVERS_MULTISTART_H

#include <algorithm>
#include <cmath>
#include <exception>
#include <limits>
#include <numeric>
#include <stdexcept>
#include <vector>
#include "../control.h"
#include "../data.h"
#include "../driver.h"
#include "../parallel.h"

namespace aspectr {

struct MultiStartControl {
  int max_iter = 1000;
  double tol = 1e-8;
  int threads = 1;
  int short_iter = 0;  // iterations of stage 1; 0: no staging
  int keep = 1;        // starts continued after stage 1
  int round = 25;      // iterations between calls of check()
  double floor = 0.0;  // the stopping rule's floor (control.h's Control::floor)
  // a batch's target time (ms; parallel.h's RunBatches; 0: one start per
  // thread, always)
  double batch_ms = 20.0;
};

// A start: its model and its iterations so far (driver.h's SolverState;
// finished: converged or at max_iter).
struct StartRun : SolverState {
  AspectModel M;
  bool continued = false; // selected for stage 2 (or no staging)
  double value() const { return f.empty() ? 0.0 : f.back(); }
};

// A start's value as starts are ranked: to 10 significant digits, as R's
// signif(v, 10) rounds it (R/runs.R, run_rank_value(), which ranks the runs
// in R; the same arithmetic for 1e-306 < |v| < 1e306, v itself beyond),
// so that starts reaching one optimum by sums in another order rank alike,
// in their order; not finite: +Inf.
inline double pow10_int(int n) {
  // (10^n by repeated squaring, as R's R_pow_di())
  double x = 10.0, r = 1.0;
  for (;;) {
    if (n & 1) r *= x;
    if (n >>= 1) x *= x; else break;
  }
  return r;
}
inline double run_rank_value(double v) {
  if (!std::isfinite(v)) return std::numeric_limits<double>::infinity();
  if (v == 0.0) return v;
  const double sgn = v < 0.0 ? -1.0 : 1.0;
  const double x = std::fabs(v);
  const double l10 = std::log10(x);
  if (!(std::fabs(l10) < 306.0)) return v;
  int e10 = 9 - static_cast<int>(std::floor(l10));
  double p10 = 1.0;
  if (e10 > 308) {
    p10 = pow10_int(e10 - 308);
    e10 = 308;
  }
  if (e10 > 0) {
    const double p = pow10_int(e10);
    return sgn * (std::nearbyint((x * p) * p10) / p) / p10;
  }
  const double p = pow10_int(-e10);
  return sgn * (std::nearbyint(x / p) * p);
}

namespace detail {

// Advances one start by up to n iterations (driver.h's loop).
template <class Rule>
void advance_start(Rule& rule, const SparseTensor& G, StartRun& s, int n,
                   const MultiStartControl& ctl, int threads) {
  Control c;
  c.max_iter = ctl.max_iter;
  c.tol = ctl.tol;
  c.floor = ctl.floor;
  // (a user's interrupt looked for between iterations, where the start
  // runs on the thread that set the check: interrupt.h)
  solver_advance(rule, G, s.M, s, n, c, threads, [](int, const AspectModel&) {
    poll();
    return true;
  });
}

// Runs `n` more iterations on every start in `active` (threads over starts
// when there are several); rule_of(i) is start i's rule.
template <class RuleOf>
void advance_all(RuleOf& rule_of, const SparseTensor& G, std::vector<StartRun>& runs,
                 const std::vector<std::size_t>& active, int n, const MultiStartControl& ctl,
                 int inner_threads) {
  const int m = static_cast<int>(active.size());
  int T = capped_threads(ctl.threads);
  if (T > m) T = m;
#ifndef _OPENMP
  T = 1;
#endif
  if (T <= 1) {
    for (std::size_t a : active) advance_start(rule_of(a), G, runs[a], n, ctl, inner_threads);
    return;
  }
  parallel_each(m, T, [&](int j) { advance_start(rule_of(active[j]), G, runs[active[j]], n, ctl, 1); });
}

}  // namespace detail

// Fits every start of `inits`; returns one StartRun per start (in order),
// each with its final loss appended to the trace. Stops early (leaving the
// starts where they are) when check() returns false; `stopped` reports it.
// rule_of(i) gives start i's rule, of type Rule, already bound to G: one
// rule for every start (a rule without state between steps, usable
// concurrently after bind()) or one per start (a rule with state, such as
// SQUAREM's step bound); see the two overloads below.
template <class Rule, class RuleOf, class Check>
std::vector<StartRun> multistart_with(RuleOf rule_of, const SparseTensor& G,
                                      std::vector<AspectModel> inits, const MultiStartControl& ctl,
                                      Check& check, bool* stopped) {
  const std::size_t S = inits.size();
  std::vector<StartRun> runs(S);
  for (std::size_t i = 0; i < S; ++i) runs[i].M = std::move(inits[i]);
  // a rule without lag reports the loss after each step: the trace starts
  // with the loss of the start (a lagged rule's first step returns it)
  for (std::size_t i = 0; i < S; ++i) solver_begin(rule_of(i), G, runs[i].M, runs[i], ctl.threads);
  const int round = std::max(1, ctl.round);
  bool halted = false;

  // progress: iterations of the most advanced start, best value so far
  auto report = [&]() {
    int it = 0;
    double best = 0.0;
    bool any = false;
    for (const StartRun& r : runs) {
      if (r.f.empty()) continue;
      it = std::max(it, r.iterations);
      if (!any || r.value() < best) best = r.value();
      any = true;
    }
    if (!check(it, best)) halted = true;
  };
  // Rounds of `round` iterations; within a round the active starts go in
  // batches (parallel.h's RunBatches: one start per thread, more while a
  // batch is quick), and check() runs after every batch, so the time
  // between checks is about that of a batch (not of every start: with
  // nrun = 1000 that was many seconds before an interrupt was seen). Each
  // start runs single-threaded unless it is the only active one, so
  // results do not depend on the batching.
  RunBatches batches(ctl.threads, ctl.batch_ms);
  auto run_to_end = [&](std::vector<std::size_t> active, int limit) {
    int done = 0;
    while (!active.empty() && done < limit && !halted) {
      const int n = std::min(round, limit - done);
      const int inner = active.size() == 1 ? ctl.threads : 1;
      for (std::size_t b = 0; b < active.size() && !halted;) {
        const std::size_t e = std::min(b + batches.size(), active.size());
        const std::vector<std::size_t> part(active.begin() + b, active.begin() + e);
        batches.run(part.size(), runs.size(), [&] { detail::advance_all(rule_of, G, runs, part, n, ctl, inner); });
        report();
        b = e;
      }
      done += n;
      active.erase(std::remove_if(active.begin(), active.end(),
                                  [&](std::size_t a) { return runs[a].finished(ctl.max_iter); }),
                   active.end());
    }
  };

  std::vector<std::size_t> all(S);
  std::iota(all.begin(), all.end(), std::size_t(0));
  const bool staged = ctl.short_iter > 0 && ctl.short_iter < ctl.max_iter &&
                      static_cast<std::size_t>(std::max(ctl.keep, 1)) < S;
  if (staged) {
    run_to_end(all, ctl.short_iter);
    // keep the best `keep` starts by their newest (lagged) loss
    std::vector<std::size_t> order = all;
    std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
      return run_rank_value(runs[a].value()) < run_rank_value(runs[b].value());
    });
    std::vector<std::size_t> cont;
    for (int j = 0; j < std::max(ctl.keep, 1); ++j) {
      runs[order[j]].continued = true;
      if (!runs[order[j]].finished(ctl.max_iter)) cont.push_back(order[j]);
    }
    std::sort(cont.begin(), cont.end());
    run_to_end(cont, ctl.max_iter);
    // Fallback: a continued start that used up max_iter without converging
    // means a flat likelihood (slow EM), where the short-run ranking says
    // little about where starts end; then every other start runs on too.
    bool slow = false;
    for (std::size_t a : order)
      if (runs[a].continued && !runs[a].converged) slow = true;
    if (slow && !halted) {
      std::vector<std::size_t> rest;
      for (std::size_t a : all) {
        if (runs[a].continued) continue;
        runs[a].continued = true;
        if (!runs[a].finished(ctl.max_iter)) rest.push_back(a);
      }
      run_to_end(rest, ctl.max_iter);
    }
  } else {
    for (StartRun& r : runs) r.continued = true;
    run_to_end(all, ctl.max_iter);
  }
  // final loss of every start (the lagged trace's last entry)
  for (std::size_t i = 0; i < S; ++i) solver_finish(rule_of(i), G, runs[i].M, runs[i], ctl.threads);
  if (stopped) *stopped = halted;
  return runs;
}

// One rule for every start.
template <class Rule, class Check>
std::vector<StartRun> multistart(Rule& rule, const SparseTensor& G, std::vector<AspectModel> inits,
                                 const MultiStartControl& ctl, Check& check, bool* stopped = nullptr) {
  rule.bind(G);
  auto rule_of = [&rule](std::size_t) -> Rule& { return rule; };
  return multistart_with<Rule>(rule_of, G, std::move(inits), ctl, check, stopped);
}

// One rule per start (rules[i] for start i; each bound here).
template <class Rule, class Check>
std::vector<StartRun> multistart(std::vector<Rule>& rules, const SparseTensor& G,
                                 std::vector<AspectModel> inits, const MultiStartControl& ctl,
                                 Check& check, bool* stopped = nullptr) {
  if (rules.size() != inits.size())
    throw std::invalid_argument("multistart: one rule per start is needed");
  for (Rule& r : rules) r.bind(G);
  auto rule_of = [&rules](std::size_t i) -> Rule& { return rules[i]; };
  return multistart_with<Rule>(rule_of, G, std::move(inits), ctl, check, stopped);
}

}  // namespace aspectr

#endif
