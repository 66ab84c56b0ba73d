# Runs `lines` as an R script in a process of its own, in a session of its
# own (setsid: a signal the script sends goes to that process alone, or to
# its process group as a terminal's Ctrl-C does), with this library path
# and aspectr attached, and gives the lines "<key> <value>" it printed as a
# named character vector (skips where there is no setsid or kill, or when
# the script printed none of them).
run_signal_script <- function(lines, args = character(), timeout = 300, what = "") {
  skip_on_cran()
  skip_on_os("windows")
  skip_if(Sys.which("kill") == "" || Sys.which("setsid") == "", "no kill or setsid command")
  script <- tempfile(fileext = ".R")
  on.exit(unlink(script), add = TRUE)
  writeLines(c(sprintf(".libPaths(%s)", paste(deparse(.libPaths()), collapse = "")),
               "suppressPackageStartupMessages(library(aspectr))", lines), script)
  out <- suppressWarnings(system2(Sys.which("setsid"), c(shQuote(file.path(R.home("bin"), "Rscript")), shQuote(script), args),
                                  stdout = TRUE, stderr = FALSE, timeout = timeout))
  got <- grep("^[a-z]+ ", out, value = TRUE)
  if (!length(got)) skip(paste("the script did not run (no signal?)", what))
  stats::setNames(trimws(sub("^[a-z]+ ", "", got)), sub(" .*", "", got))
}
