# The README shows what tools/demo.R prints today (the block that
# tools/readme-demo.R writes), checked against a fresh run of the demo.

test_that("the README's demo output is what the demo prints", {
  skip_on_cran()
  root <- normalizePath(test_path("..", ".."), mustWork = FALSE)
  readme <- file.path(root, "README.md")
  gen <- file.path(root, "tools", "readme-demo.R")
  skip_if_not(file.exists(readme) && file.exists(gen) && file.exists(file.path(root, "tools", "demo.R")),
              "not run from a source checkout")
  env <- new.env()
  sys.source(gen, envir = env)
  old <- setwd(root)
  on.exit(setwd(old), add = TRUE)
  had_png <- file.exists("aspectr-demo-topics.png")
  lines <- env$readme_demo_lines()
  if (!had_png) unlink("aspectr-demo-topics.png")
  txt <- readLines(readme)
  a <- grep("<!-- demo-output-start -->", txt, fixed = TRUE)
  b <- grep("<!-- demo-output-end -->", txt, fixed = TRUE)
  expect_length(a, 1)
  expect_length(b, 1)
  block <- txt[(a + 2):(b - 3)]  # between the fence and the "..." line
  expect_identical(block, lines)
})
