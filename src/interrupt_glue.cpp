// src/interrupt_glue.cpp — a user's interrupt inside an iteration.
//
// The core looks for an interrupt inside long iterations through
// aspectr/interrupt.h's poll(); this sets R's check there when the library
// is loaded (a static initializer, on R's thread, the one thread poll()
// then runs it on). The check throws Rcpp's interrupt exception, which
// the exported function's boundary turns into an R interrupt.
#include <Rcpp.h>
#include "aspectr/interrupt.h"

namespace {

void r_interrupt_check() { Rcpp::checkUserInterrupt(); }

const bool check_set = (aspectr::set_interrupt_check(&r_interrupt_check), true);

}  // namespace

// How many times the core has been allowed to look for an interrupt in
// this process (tests: a long iteration looks inside itself).
// [[Rcpp::export]]
double cpp_interrupt_polls() {
  (void)check_set;
  return static_cast<double>(aspectr::polls());
}
