// aspectr/parallel.h — reproducible OpenMP over non-zeros.
//
// Work is split into `threads` contiguous chunks (static, by position), each
// thread accumulates into its own buffers, and buffers are reduced in thread
// order. For a fixed thread count the result is bitwise reproducible; across
// thread counts only the summation order differs.
#ifndef ASPECTR_PARALLEL_H
#define ASPECTR_PARALLEL_H

#include <algorithm>
#include <armadillo>
#include <atomic>
#include <chrono>
#include <exception>
#include <vector>
#include "interrupt.h"
#ifdef _OPENMP
#include <omp.h>
#endif

namespace aspectr {

// A ceiling on the threads of every parallel region in this process (0:
// none). The embedding sets it to 1 in a forked child: GNU OpenMP's thread
// pool is not copied by fork(), and a parallel region in the child of a
// process that ran one waits forever for the parent's threads.
inline std::atomic<int>& thread_ceiling() {
  static std::atomic<int> ceiling{0};
  return ceiling;
}

// `threads` held to the ceiling (and to at least 1).
inline int capped_threads(int threads) {
  if (threads < 1) threads = 1;
  const int c = thread_ceiling().load(std::memory_order_relaxed);
  if (c >= 1 && threads > c) threads = c;
  return threads;
}

inline int effective_threads(int threads, std::size_t work) {
  threads = capped_threads(threads);
#ifndef _OPENMP
  threads = 1;
#endif
  // Below this many items per thread the fork/reduce overhead dominates.
  const std::size_t min_chunk = 2048;
  const std::size_t cap = work / min_chunk + 1;
  if (static_cast<std::size_t>(threads) > cap) threads = static_cast<int>(cap);
  return threads;
}

// Runs body(tid, begin, end) over [0, n) in `threads` static chunks.
template <class Body>
inline void parallel_chunks(std::size_t n, int threads, Body body) {
  threads = capped_threads(threads);
  if (threads <= 1) { body(0, std::size_t(0), n); return; }
#ifdef _OPENMP
  const NoPolls quiet;
#pragma omp parallel num_threads(threads)
  {
    const int tid = omp_get_thread_num();
    const int nt = omp_get_num_threads();
    const std::size_t b = n * static_cast<std::size_t>(tid) / nt;
    const std::size_t e = n * static_cast<std::size_t>(tid + 1) / nt;
    body(tid, b, e);
  }
#else
  body(0, std::size_t(0), n);
#endif
}

// The batches of independent runs (random starts) that a loop runs in
// parallel between two calls of its check (interrupts, progress): a batch
// starts as one run per thread; while a full batch takes less than half
// of `target_ms`, the next gets twice the runs per thread (up to `most`),
// half when a batch takes over twice that (a batch cut short by the end
// of the runs says nothing of a full one's time, and does not make it
// grow). Small runs then share one parallel region rather than pay one
// each (on a busy machine a region waits for its slowest thread's turn on
// a core, about a scheduler's time slice), and a check comes about every
// target_ms. target_ms = 0: one run per thread, always. Which runs share a
// batch does not change their results.
class RunBatches {
 public:
  RunBatches(int threads, double target_ms) : threads_(std::max(threads, 1)), target_(target_ms) {}
  // the size of the next batch
  std::size_t size() const { return per_ * static_cast<std::size_t>(threads_); }
  // runs f(), a batch of `n` runs, then adapts the size; `most`: the runs
  // there are
  template <class F>
  void run(std::size_t n, std::size_t most, F f) {
    const auto t0 = std::chrono::steady_clock::now();
    f();
    const double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
    if (target_ > 0.0 && n >= size() && ms < 0.5 * target_ && size() < most) per_ *= 2;
    else if (ms > 2.0 * target_ && per_ > 1) per_ /= 2;
  }

 private:
  int threads_;
  double target_;
  std::size_t per_ = 1;
};

// Runs f(j) for every j in [0, m) on `threads` threads, one index at a
// time (dynamic schedule: tasks of uneven length, such as the random starts
// of a fit); the first exception a task throws is rethrown here, after the
// others have run. (Neither runs poll(), interrupt.h, inside its threads.)
template <class F>
inline void parallel_each(int m, int threads, F f) {
  std::exception_ptr err = nullptr;
  const NoPolls quiet;
#ifdef _OPENMP
#pragma omp parallel for num_threads(threads) schedule(dynamic, 1)
#endif
  for (int j = 0; j < m; ++j) {
    try {
      f(j);
    } catch (...) {
#ifdef _OPENMP
#pragma omp critical(aspectr_parallel_each_err)
#endif
      if (!err) err = std::current_exception();
    }
  }
  if (err) std::rethrow_exception(err);
}

// Per-thread copies of a set of accumulator matrices (thread 0 writes into
// the targets themselves), reduced in thread order by reduce().
class ThreadAccumulators {
 public:
  // (`zero` false: the targets keep what they hold, and the threads' sums
  // are added to it)
  ThreadAccumulators(std::vector<arma::mat>& targets, int threads, bool zero = true)
      : targets_(targets), own_(threads > 1 ? threads - 1 : 0), extra_(&own_) {
    if (zero) for (auto& t : targets_) t.zeros();
    for (auto& set : own_) {
      set.reserve(targets_.size());
      for (auto& t : targets_) set.emplace_back(t.n_rows, t.n_cols, arma::fill::zeros);
    }
  }
  // The threads' sets kept by the caller in `kept` over several uses (made,
  // as zeros, where missing), added to the targets by reduce_into() once
  // at the end: a pass over cells given in pieces allocates them once.
  ThreadAccumulators(std::vector<arma::mat>& targets, int threads, std::vector<std::vector<arma::mat>>& kept)
      : targets_(targets), extra_(&kept) {
    const std::size_t need = threads > 1 ? static_cast<std::size_t>(threads - 1) : 0;
    while (kept.size() < need) {
      kept.emplace_back();
      kept.back().reserve(targets_.size());
      for (auto& t : targets_) kept.back().emplace_back(t.n_rows, t.n_cols, arma::fill::zeros);
    }
  }
  arma::mat& get(int tid, std::size_t which) {
    return tid == 0 ? targets_[which] : (*extra_)[tid - 1][which];
  }
  void reduce() { reduce_into(targets_, *extra_); }
  // the kept sets added to the targets, and let go
  static void reduce_into(std::vector<arma::mat>& targets, std::vector<std::vector<arma::mat>>& sets) {
    for (auto& set : sets)
      for (std::size_t w = 0; w < targets.size(); ++w) targets[w] += set[w];
    sets.clear();
  }

 private:
  std::vector<arma::mat>& targets_;
  std::vector<std::vector<arma::mat>> own_;
  std::vector<std::vector<arma::mat>>* extra_;
};

}  // namespace aspectr

#endif
