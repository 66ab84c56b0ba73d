# Runs `lines` as an R script in a process of its own, in a session of its
# own (setsid: a signal the script sends goes to that process alone, or to
# its process group as a terminal's Ctrl-C does), with this library path
# and aspectr attached, and gives the lines "<key> <value>" it printed as a
# named character vector (skips where there is no setsid or kill, or when
# the script printed none of them). A script still running after `timeout`
# seconds is killed by the `timeout` command, outside its session (system2()'s
# own timeout stops the setsid command, not the script in its new session,
# and then waits on the script's output for as long as the script runs: a
# script that hung, say in a cluster's socket, held up the whole suite).
run_signal_script <- function(lines, args = character(), timeout = 300, what = "") {
  skip_on_cran()
  skip_on_os("windows")
  skip_if(Sys.which("kill") == "" || Sys.which("setsid") == "", "no kill or setsid command")
  script <- tempfile(fileext = ".R")
  on.exit(unlink(script), add = TRUE)
  writeLines(c(sprintf(".libPaths(%s)", paste(deparse(.libPaths()), collapse = "")),
               "suppressPackageStartupMessages(library(aspectr))", lines), script)
  cmd <- c(shQuote(Sys.which("setsid")), shQuote(file.path(R.home("bin"), "Rscript")), shQuote(script), args)
  out <- if (nzchar(Sys.which("timeout"))) {
    suppressWarnings(system2(Sys.which("timeout"), c("-s", "KILL", as.character(timeout), cmd), stdout = TRUE, stderr = FALSE))
  } else {
    suppressWarnings(system2(cmd[1], cmd[-1], stdout = TRUE, stderr = FALSE, timeout = timeout))
  }
  got <- grep("^[a-z]+ ", out, value = TRUE)
  if (!length(got)) skip(paste("the script did not run (no signal?)", what))
  stats::setNames(trimws(sub("^[a-z]+ ", "", got)), sub(" .*", "", got))
}
