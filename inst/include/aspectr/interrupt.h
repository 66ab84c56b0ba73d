// aspectr/interrupt.h — a user's interrupt seen inside an iteration.
//
// The driver's callback looks for an interrupt after every iteration
// (driver.h), and an iteration of large data can take seconds. Work that
// may run long between two such looks (a request to the pieces, a chunk of
// cells read from a file, a pass over a piece's cells) calls poll(), which
// at most every 50 ms runs the check the embedding set
// (set_interrupt_check(); in R, a check that throws Rcpp's interrupt
// exception, which ends the fit as the callback's does).
//
// poll() does nothing until a check is set, on any thread but the one
// that set it, and inside a parallel region (parallel.h opens a NoPolls
// scope around each), where an exception must not escape a thread. The
// check may throw: code that polls holds its state so that the fit can
// be abandoned there (the caller's model is then not a result).
#ifndef ASPECTR_INTERRUPT_H
#define ASPECTR_INTERRUPT_H

#include <chrono>
#include <thread>

namespace aspectr {

namespace detail {
struct PollState {
  void (*check)() = nullptr;
  std::thread::id owner;
  int quiet = 0;  // open NoPolls scopes (on the owner's thread)
  unsigned long long calls = 0;
  std::chrono::steady_clock::time_point last{};
};
inline PollState& poll_state() {
  static PollState s;
  return s;
}
inline bool poll_owner() {
  const PollState& s = poll_state();
  return s.check != nullptr && std::this_thread::get_id() == s.owner;
}
}  // namespace detail

// The embedding's check (nullptr: none), run by poll() on this thread.
inline void set_interrupt_check(void (*check)()) {
  detail::PollState& s = detail::poll_state();
  s.owner = std::this_thread::get_id();
  s.check = check;
  s.quiet = 0;
}

// Looks for an interrupt where that is allowed (see above), at most every
// 50 ms; the check, when it runs, may throw.
inline void poll() {
  if (!detail::poll_owner()) return;
  detail::PollState& s = detail::poll_state();
  if (s.quiet > 0) return;
  ++s.calls;
  const auto now = std::chrono::steady_clock::now();
  if (now - s.last < std::chrono::milliseconds(50)) return;
  s.last = now;
  s.check();
}

// How many times poll() was allowed to look since the check was set
// (whether or not 50 ms had passed): where a fit looks, for tests.
inline unsigned long long polls() { return detail::poll_state().calls; }

// A scope in which poll() does nothing (a parallel region, opened on the
// thread that starts it).
class NoPolls {
 public:
  NoPolls() : on_(detail::poll_owner()) {
    if (on_) ++detail::poll_state().quiet;
  }
  ~NoPolls() {
    if (on_) --detail::poll_state().quiet;
  }
  NoPolls(const NoPolls&) = delete;
  NoPolls& operator=(const NoPolls&) = delete;

 private:
  bool on_;
};

}  // namespace aspectr

#endif
