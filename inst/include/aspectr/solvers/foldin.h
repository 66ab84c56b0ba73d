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

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>
#include <vector>
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

// KL fold-in of the first-mode slices of an N-way tensor with the other
// modes' factors fixed: B (cells x k) holds, per non-zero cell, the product
// of the fixed factors' entries, doc (cells) the cell's slice (0-based) and
// val its count. EM on every slice's theta (n_docs x k) at once, from the
// weights `prior` (summing to one), until the largest change of an entry
// is at most tol; a slice without counts keeps the prior.
inline arma::mat fold_in_cells(const arma::mat& B, const std::vector<std::size_t>& doc, const arma::vec& val,
                               std::size_t n_docs, const arma::vec& prior, int max_iter, double tol) {
  const arma::uword k = B.n_cols, n = B.n_rows;
  if (doc.size() != n || val.n_elem != n || prior.n_elem != k)
    throw std::invalid_argument("fold_in_cells: inputs of different sizes");
  arma::mat theta(n_docs, k);
  for (std::size_t d = 0; d < n_docs; ++d) theta.row(d) = prior.t();
  arma::vec nd(n_docs, arma::fill::zeros);
  for (arma::uword s = 0; s < n; ++s) {
    if (doc[s] >= n_docs) throw std::invalid_argument("fold_in_cells: a cell outside the slices");
    nd[doc[s]] += val[s];
  }
  arma::mat S(n_docs, k);
  for (int it = 0; it < max_iter; ++it) {
    S.zeros();
    for (arma::uword s = 0; s < n; ++s) {
      const std::size_t d = doc[s];
      double p = 0.0;
      for (arma::uword r = 0; r < k; ++r) p += B(s, r) * theta(d, r);
      p = std::max(p, std::numeric_limits<double>::min());
      const double w = val[s] / p;
      for (arma::uword r = 0; r < k; ++r) S(d, r) += B(s, r) * w;
    }
    double change = 0.0;
    for (std::size_t d = 0; d < n_docs; ++d) {
      if (!(nd[d] > 0.0)) continue;
      for (arma::uword r = 0; r < k; ++r) {
        const double nw = theta(d, r) * S(d, r) / nd[d];
        change = std::max(change, std::fabs(nw - theta(d, r)));
        theta(d, r) = nw;
      }
    }
    if (change <= tol) break;
  }
  return theta;
}

}  // namespace aspectr

#endif
