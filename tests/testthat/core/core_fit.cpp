// A plain C++ program (no R) that fits tiny problems with the aspectr core:
// proof that inst/include/aspectr/ has no R dependency. Built and run by
// test-core-cpp.R, which compares its output with the same fits through R.
// Prints one "name value" line per result.
#include <aspectr/aspectr.h>
#include <cmath>
#include <cstdio>

int main() {
  // a 6 x 5 count matrix, COO
  const double X[6][5] = {{3, 0, 1, 0, 2}, {0, 4, 0, 1, 0}, {2, 1, 5, 0, 0},
                          {0, 0, 1, 6, 2}, {1, 3, 0, 0, 4}, {0, 2, 2, 1, 0}};
  aspectr::SparseTensor T;
  T.dims = {6, 5};
  std::vector<double> vals;
  for (int i = 0; i < 6; ++i)
    for (int j = 0; j < 5; ++j)
      if (X[i][j] != 0) {
        T.idx.push_back(static_cast<aspectr::index_t>(i));
        T.idx.push_back(static_cast<aspectr::index_t>(j));
        vals.push_back(X[i][j]);
      }
  T.val = arma::vec(vals);
  T.validate();
  const aspectr::SparseTensor G = T.normalized();
  // a deterministic start: column r of factor n is proportional to
  // 1 + ((i + 2 r + n) mod 3), lambda uniform
  const arma::uword k = 2;
  aspectr::AspectModel M;
  M.lambda = arma::vec(k, arma::fill::value(1.0 / k));
  for (std::size_t n = 0; n < 2; ++n) {
    arma::mat F(k, T.dims[n]);
    for (arma::uword r = 0; r < k; ++r) {
      for (arma::uword i = 0; i < T.dims[n]; ++i) F(r, i) = 1.0 + ((i + 2 * r + n) % 3);
      F.row(r) /= arma::accu(F.row(r));
    }
    M.F.push_back(F);
  }
  aspectr::Control ctl;
  ctl.max_iter = 50;
  ctl.tol = 0;
  ctl.threads = 1;
  aspectr::NoCallback cb;
  // EM: the rules in pieces on the data as one piece (lca()'s in-memory rule)
  aspectr::EMRule em(1.0);
  aspectr::AspectEMRule rule(em, false);
  rule.bind(G);
  const aspectr::FitTrace tr = aspectr::run_solver(rule, G, M, ctl, cb);
  bool monotone = true;
  for (std::size_t t = 1; t < tr.objective.size(); ++t)
    if (tr.objective[t] > tr.objective[t - 1] * (1 + 1e-12) + 1e-15) monotone = false;
  std::printf("em_iterations %d\n", tr.iterations);
  std::printf("em_objective %.17g\n", tr.objective.back());
  std::printf("em_monotone %d\n", monotone ? 1 : 0);
  for (arma::uword r = 0; r < k; ++r) std::printf("em_lambda %.17g\n", M.lambda[r]);
  for (arma::uword r = 0; r < k; ++r)
    for (arma::uword j = 0; j < T.dims[1]; ++j) std::printf("em_terms %.17g\n", M.F[1](r, j));

  // coordinate descent, with the cells grouped in place (mode 0, the
  // data's order), by their positions (mode 1), or copied (every grouping
  // not in the data's order, by a position limit of 0); and from the
  // counts read with scales, as the R glue does: the same numbers
  {
    const aspectr::AspectModel M0 = M;
    double obj[3];
    arma::mat terms[3];
    for (int v = 0; v < 3; ++v) {
      aspectr::AspectModel Mc = M0;
      // the start above was fitted by EM: take it again
      for (std::size_t n = 0; n < 2; ++n) {
        for (arma::uword r = 0; r < k; ++r) {
          for (arma::uword i = 0; i < T.dims[n]; ++i) Mc.F[n](r, i) = 1.0 + ((i + 2 * r + n) % 3);
          Mc.F[n].row(r) /= arma::accu(Mc.F[n].row(r));
        }
      }
      Mc.lambda.fill(1.0 / k);
      aspectr::SparseTensor S = T;
      if (v == 2) S.normalize_scales();
      // the counts are the scaled tensor's stored values (as in the glue)
      const arma::vec counts(S.val.memptr(), S.val.n_elem, false, true);
      const double total = arma::accu(counts);
      aspectr::KLCDRule cd(v == 2 ? &counts : nullptr, total);
      if (v == 1) cd.set_position_limit(0);
      ctl.max_iter = 20;
      const aspectr::FitTrace tc = aspectr::run_solver(cd, v == 2 ? S : G, Mc, ctl, cb);
      obj[v] = tc.objective.back();
      terms[v] = Mc.F[1];
    }
    std::printf("cd_same_copy %d\n", obj[0] == obj[1] && arma::approx_equal(terms[0], terms[1], "absdiff", 0.0) ? 1 : 0);
    std::printf("cd_same_scaled %d\n", std::fabs(obj[0] - obj[2]) <= 1e-13 && arma::approx_equal(terms[0], terms[2], "absdiff", 1e-13) ? 1 : 0);
  }

  // NMF by HALS on the dense matrix from the same start pattern
  arma::mat D(6, 5);
  for (int i = 0; i < 6; ++i)
    for (int j = 0; j < 5; ++j) D(i, j) = X[i][j];
  aspectr::nmf::Data data(D);
  aspectr::nmf::Model nm;
  nm.Wt = arma::mat(k, 6);
  nm.H = arma::mat(k, 5);
  for (arma::uword r = 0; r < k; ++r) {
    for (arma::uword i = 0; i < 6; ++i) nm.Wt(r, i) = 1.0 + ((i + 2 * r) % 3);
    for (arma::uword j = 0; j < 5; ++j) nm.H(r, j) = 1.0 + ((j + 2 * r + 1) % 3);
  }
  aspectr::nmf::FrobeniusHALS hals(aspectr::nmf::Penalty{});
  ctl.max_iter = 30;
  const aspectr::FitTrace th = aspectr::run_solver(hals, data, nm, ctl, cb);
  std::printf("hals_objective %.17g\n", th.objective.back());

  // a request's and statistics' named matrices (pieces.h)
  {
    arma::mat A(3, 2, arma::fill::value(1.0)), B(2, 2, arma::fill::value(2.0));
    aspectr::Request r("op");
    r.view("A", A).view("B", B).with("c", 3.0);
    // replacing a view never writes into the matrix it read
    r.with("A", arma::mat(3, 2, arma::fill::value(9.0)));
    std::printf("named_view_kept %d\n", arma::accu(A) == 6.0 && r.mat("A")(0, 0) == 9.0 ? 1 : 0);
    // an erased entry: the later ones keep their values, a view its memory
    r.in.erase("A");
    B(0, 0) = 5.0;
    std::printf("named_erase %d\n", !r.has("A") && r.mat("B")(0, 0) == 5.0 && r.num("c", 0.0) == 3.0 ? 1 : 0);
    // a copy holds copies
    aspectr::Request c = r;
    B(0, 0) = 7.0;
    std::printf("named_copy %d\n", c.mat("B")(0, 0) == 5.0 && r.mat("B")(0, 0) == 7.0 ? 1 : 0);
    // numbered inputs: up to the first one missing
    aspectr::Request f("op");
    f.with("F2", 2.0).with("F1", 1.0).with("F4", 4.0).with("F10", 10.0).with("F01", 0.0);
    const std::vector<const arma::mat*> F = f.numbered("F");
    std::printf("named_numbered %d\n", F.size() == 2 && (*F[0])(0, 0) == 1.0 && (*F[1])(0, 0) == 2.0 ? 1 : 0);
    // statistics added: summed, '@' names joined by columns in order
    aspectr::Stats s1, s2;
    s1.set("x", 1.0);
    s1.set("@g", arma::mat(2, 1, arma::fill::value(1.0)));
    s2.set("@g", arma::mat(2, 2, arma::fill::value(2.0)));
    s2.set("x", 2.0);
    s2.set("y", 4.0);
    s1.add(s2);
    const arma::mat& g = s1.mat("@g");
    std::printf("named_add %d\n", s1.num("x") == 3.0 && s1.num("y") == 4.0 && g.n_cols == 3 && g(0, 0) == 1.0 && g(1, 2) == 2.0 ? 1 : 0);
  }
  return monotone ? 0 : 1;
}
