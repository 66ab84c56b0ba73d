// src/r_adapters.cpp — the out-of-line part of RCallback: everything that
// touches cli's C progress API, in one translation unit (see r_adapters.h).
#include "r_adapters.h"
#include <cli/progress.h>
#include <cstdio>

namespace aspectr_r {

RCallback::RCallback(bool verbose, int max_iter, const std::string& name, SEXP hook,
                     bool want_model)
    : verbose_(verbose), hook_(hook), want_model_(want_model && !Rf_isNull(hook)) {
  // (the bar of interactive sessions, as rlang and cli judge them; in
  // others the R-side hook writes progress messages, fit_hook() in
  // R/runs.R, and a bar too printed both)
  if (verbose_) {
    Rcpp::Function is_interactive("is_interactive", Rcpp::Environment::namespace_env("rlang"));
    verbose_ = Rcpp::as<bool>(is_interactive());
  }
  if (verbose_) {
    bar_ = cli_progress_bar(static_cast<double>(max_iter), R_NilValue);
    cli_progress_set_name(bar_, name.c_str());
    cli_progress_set_format(bar_, "%s", "{cli::pb_name} {cli::pb_bar} {cli::pb_current}/{cli::pb_total} | ETA {cli::pb_eta} | {cli::pb_status}");
  }
}

RCallback::~RCallback() {
  if (verbose_) cli_progress_done(bar_);
}

bool RCallback::tick(int it, double obj) {
  if (verbose_ && CLI_SHOULD_TICK) {
    char buf[64];
    std::snprintf(buf, sizeof(buf), "obj %.7g", obj);
    cli_progress_set_status(bar_, buf);
    cli_progress_set(bar_, static_cast<double>(it));
  }
  Rcpp::checkUserInterrupt();
  return true;
}

}  // namespace aspectr_r
