test_that("projection onto the simplex matches a QP solver", {
  skip_if_not_installed("quadprog")
  set.seed(42)
  for (d in c(1, 2, 5, 30, 200)) {
    for (rep in 1:5) {
      b <- rnorm(d, sd = c(0.1, 1, 10)[rep %% 3 + 1])
      x <- aspectr:::cpp_project_simplex(b)
      expect_gte(min(x), 0)
      expect_equal(sum(x), 1, tolerance = 1e-12)
      expect_equal(x, ref_project(b), tolerance = 1e-8)
    }
  }
})

test_that("Hazan and Shashua's Algorithm 1 needs the step 1/|I| and then agrees", {
  set.seed(7)
  b <- c(0.9, 0.5, -0.2, 0.3, 0.05, -1)
  exact <- aspectr:::cpp_project_simplex(b)
  expect_equal(ref_pps_algorithm1(b, "active"), exact, tolerance = 1e-12)
  # The printed step 1/d leaves the point off the simplex.
  wrong <- ref_pps_algorithm1(b, "d")
  expect_gt(abs(sum(wrong) - 1), 1e-3)
  for (i in 1:50) {
    b <- rnorm(sample(2:40, 1))
    expect_equal(ref_pps_algorithm1(b, "active"), aspectr:::cpp_project_simplex(b),
                 tolerance = 1e-10)
  }
})

test_that("the k-dimensional simplex QP matches quadprog", {
  skip_if_not_installed("quadprog")
  set.seed(3)
  for (k in c(2, 3, 5, 10)) {
    for (rep in 1:10) {
      A <- matrix(runif(40 * k), 40, k)
      b <- runif(40)
      x <- aspectr:::cpp_simplex_qp(crossprod(A), drop(crossprod(A, b)))
      ref <- ref_simplex_ls(A, b, ridge = 0)
      obj <- function(z) sum((A %*% z - b)^2)
      expect_equal(sum(x), 1, tolerance = 1e-12)
      expect_gte(min(x), 0)
      expect_lte(obj(x), obj(ref) + 1e-10)
      expect_equal(x, ref, tolerance = 1e-6)
    }
  }
  # singular Gram matrix (duplicated column): still feasible and optimal
  A <- matrix(runif(60), 20, 3); A <- cbind(A, A[, 1])
  b <- runif(20)
  x <- aspectr:::cpp_simplex_qp(crossprod(A), drop(crossprod(A, b)))
  expect_equal(sum(x), 1, tolerance = 1e-12)
  ref <- ref_simplex_ls(A, b, ridge = 1e-12)
  expect_lte(sum((A %*% x - b)^2), sum((A %*% ref - b)^2) + 1e-9)
})
