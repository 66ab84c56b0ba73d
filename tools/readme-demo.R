# Writes the output of tools/demo.R that the README shows (the corpus line
# and the fit's summary) between the README's demo-output markers, so that
# the README shows what the demo prints today. Run from the package root
# with aspectr installed: Rscript tools/readme-demo.R
# (tests/testthat/test-readme.R checks the block against a fresh fit).
readme_demo_lines <- function() {
  out <- utils::capture.output(source("tools/demo.R", echo = FALSE, local = new.env()))
  end <- which(out == "Mean topic share by era:")[1]
  out <- out[seq_len(end - 1)]
  while (length(out) && !nzchar(out[length(out)])) out <- out[-length(out)]
  out
}
if (sys.nframe() == 0L) {
  lines <- readme_demo_lines()
  readme <- readLines("README.md")
  a <- grep("<!-- demo-output-start -->", readme, fixed = TRUE)
  b <- grep("<!-- demo-output-end -->", readme, fixed = TRUE)
  stopifnot(length(a) == 1, length(b) == 1, b > a)
  readme <- c(readme[seq_len(a)], "```", lines, "...", "```", readme[b:length(readme)])
  writeLines(readme, "README.md")
  unlink("aspectr-demo-topics.png")
  cat("README.md: demo output block updated (", length(lines), " lines)\n", sep = "")
}
