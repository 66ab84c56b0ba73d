// src/fork_glue.cpp — one thread in a forked child.
//
// GNU OpenMP keeps its pool of worker threads across parallel regions; fork()
// copies only the calling thread, so a parallel region in the child of a
// process that already ran one waits forever for threads that do not exist
// (parallel::mclapply(), mcparallel(), future's multicore plans, fork
// clusters). When this library is loaded it registers a handler that runs in
// every child forked afterwards and holds the core's thread ceiling at 1
// there (aspectr/parallel.h); the process id at load tells the R side too.
#include <Rcpp.h>
#include "aspectr/parallel.h"
#ifndef _WIN32
#include <pthread.h>
#include <unistd.h>
#endif

namespace {

#ifndef _WIN32
volatile int forked = 0;
const pid_t loaded_in = getpid();

void in_child() {
  forked = 1;
  aspectr::thread_ceiling().store(1, std::memory_order_relaxed);
}

// (at load; glibc drops the handler again when the library is unloaded)
const int registered = pthread_atfork(nullptr, nullptr, in_child);
#endif

}  // namespace

// Whether this process is a child forked after the package was loaded (its
// parallel regions then run on one thread).
// [[Rcpp::export]]
bool cpp_forked_child() {
#ifndef _WIN32
  (void)registered;
  if (!forked && getpid() != loaded_in) {
    // (a fork the handler did not see)
    forked = 1;
    aspectr::thread_ceiling().store(1, std::memory_order_relaxed);
  }
  return forked != 0;
#else
  return false;
#endif
}
