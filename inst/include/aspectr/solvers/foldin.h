// aspectr/solvers/foldin.h — fold-in of new documents with the term factors
// and weights held fixed (Gemulla and Miettinen 2013).
//
// For a document x (term counts) and fixed V (k x n_terms, rows on the
// simplex), find theta on the simplex = P(z | d) such that sum_r theta_r V(r, :)
// is closest to x / sum(x) under the fit's own loss:
//   KL:      EM on theta, theta_r <- theta_r sum_w xhat_w V(r,w) / p_w (concave)
//   Tsallis: q-EM on theta, theta_r propto theta_r (sum_w t_w V(r,w))^(1/q),
//            t_w = (xhat_w / p_w)^q (never increases D_q)
//   L2:      the simplex QP min ||V' theta - xhat||^2 (exact, active set)
// A document without counts carries no evidence: its result is the prior
// (the fit's topic weights lambda).
#ifndef ASPECTR_SOLVERS_FOLDIN_H
#define ASPECTR_SOLVERS_FOLDIN_H

#include "../loss.h"
#include "../simplex.h"
#include "normalize.h"

namespace aspectr {

struct FoldinData {     // documents in compressed-row form
  std::vector<std::size_t> rowptr;   // n_docs + 1
  std::vector<index_t> col;          // term indices
  std::vector<double> val;           // counts
};

// `alpha` (KL, optional): Dirichlet pseudo-counts of theta (k, in counts),
// giving the MAP fold-in theta_r <- (n theta_r a_r + alpha_r) / (n + sum alpha)
// with n the document's count (MAP EM, see prior.h).
inline arma::mat fold_in(const FoldinData& D, const arma::mat& V, const arma::vec& prior,
                         Loss loss, double q, int max_iter, double tol, int threads,
                         const arma::vec* alpha = nullptr) {
  const arma::uword k = V.n_rows;
  const std::size_t n_docs = D.rowptr.size() - 1;
  arma::mat theta(k, n_docs);
  arma::mat Q;
  if (loss == Loss::L2) Q = V * V.t();
  const int T = effective_threads(threads, D.val.size() / 8 + n_docs);
  parallel_chunks(n_docs, T, [&](int, std::size_t b, std::size_t e) {
    std::vector<double> p, t;
    arma::vec th(k), a(k);
    for (std::size_t d = b; d < e; ++d) {
      const std::size_t lo = D.rowptr[d], hi = D.rowptr[d + 1];
      double tot = 0.0;
      for (std::size_t s = lo; s < hi; ++s) tot += D.val[s];
      th = prior;
      if (!(tot > 0.0)) { theta.col(d) = th; continue; }
      const std::size_t m = hi - lo;
      if (loss == Loss::L2) {
        arma::vec c(k, arma::fill::zeros);
        for (std::size_t s = lo; s < hi; ++s)
          c += (D.val[s] / tot) * V.col(D.col[s]);
        th.fill(1.0 / static_cast<double>(k));
        simplex_qp(Q, c, th);
        theta.col(d) = th;
        continue;
      }
      p.resize(m); t.resize(m);
      for (int it = 0; it < max_iter; ++it) {
        for (std::size_t s = 0; s < m; ++s)
          p[s] = std::max(arma::dot(th, V.col(D.col[lo + s])), kTiny);
        a.zeros();
        if (loss == Loss::KL) {
          for (std::size_t s = 0; s < m; ++s) a += (D.val[lo + s] / tot / p[s]) * V.col(D.col[lo + s]);
          arma::vec nw = th % a;
          if (alpha != nullptr) nw = nw * tot + *alpha;
          const double z = arma::accu(nw);
          if (z > 0) nw /= z;
          const double change = arma::abs(nw - th).max();
          th = nw;
          if (change < tol) break;
        } else {
          for (std::size_t s = 0; s < m; ++s)
            a += std::pow(D.val[lo + s] / tot / p[s], q) * V.col(D.col[lo + s]);
          arma::vec nw = th;
          arma::mat F = th.t();          // 1 x k as a "row" distribution
          arma::mat Am = a.t();
          power_update_rows(F, Am, 1.0 / q);
          nw = F.t();
          const double change = arma::abs(nw - th).max();
          th = nw;
          if (change < tol) break;
        }
      }
      theta.col(d) = th;
    }
  });
  return theta;
}

}  // namespace aspectr

#endif
