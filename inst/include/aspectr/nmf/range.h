// aspectr/nmf/range.h — the randomized range finder of NNDSVD's SVD for
// large data (Halko, Martinsson and Tropp 2011): Q, an orthonormal basis of
// the range of X Omega after `power` subspace iterations, and B = Q' X, whose
// exact SVD gives X's leading singular triplets (u = Q u_B, range_svd()).
// Q' (l x m, transposed: the layout of the data's products) is held in
// pieces, each piece its block of Q's rows beside the data's rows it
// belongs to: one piece for data in memory (ProductRows), a piece per shard
// for data in shards (the shards' stores: only l x l Grams, l x n matrices
// and, at the end, the m x k left vectors travel). The driver
// (range_svd_pieces()) runs the same steps in the same order on any
// pieces; everything stays in C++ for data in memory, so that the
// iterations' m x l matrices are freed as soon as they are replaced.
#ifndef ASPECTR_NMF_RANGE_H
#define ASPECTR_NMF_RANGE_H

#include <armadillo>
#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <vector>
#include "data.h"
#include "dense.h"

namespace aspectr {
namespace nmf {

// G = Q_b' Q_b of a block of Q's rows given transposed (Qt: l x cols)
inline void gram_rows(const double* Qt, std::size_t l, std::size_t cols, arma::mat& G, int threads) {
  G.set_size(l, l);
  dense::nn(Qt, l, l, cols, Qt, l, l, G.memptr(), threads);
}

// Q_b R^-1 of a block of Q's rows given transposed, in place: each column q
// of Qt becomes Ri' q (Ri = R^-1, upper triangular l x l)
inline void apply_rinv(double* Qt, std::size_t l, std::size_t cols, const arma::mat& Ri) {
  std::vector<double> t(l);
  for (std::size_t c = 0; c < cols; ++c) {
    double* q = Qt + c * l;
    for (std::size_t a = 0; a < l; ++a) {
      const double* ri = Ri.colptr(a);
      double s = 0.0;
      for (std::size_t b = 0; b <= a; ++b) s += ri[b] * q[b];
      t[a] = s;
    }
    std::copy(t.begin(), t.end(), q);
  }
}

// Q' in pieces, each holding its block of Q's rows (transposed) beside its
// data: start(Ht, G) keeps Y' = (X H')' and gives its Gram G = Y'Y;
// apply(Ri, G) makes the blocks Q R^-1 and gives their Gram; btx(B) gives
// Q'X; gather(Qt) and set(Qt) take and give Q' whole (the fallback);
// left(U, u) gives Q U and lets the blocks go. (Virtual: the driver is
// compiled once for every kind of pieces.)
struct RangePieces {
  virtual ~RangePieces() = default;
  virtual void start(const arma::mat& Ht, arma::mat& G) = 0;
  virtual void apply(const arma::mat& Ri, arma::mat& G) = 0;
  virtual void btx(arma::mat& B) = 0;
  virtual void gather(arma::mat& Qt) = 0;
  virtual void set(const arma::mat& Qt) = 0;
  virtual void left(const arma::mat& U, arma::mat& u) = 0;
};

// Q' whole in this process (l x m): one piece; data in memory (X with
// Data's XHt() and WtX()) in ProductRows, none for orthonormalize_rows()
struct HeldRows : RangePieces {
  arma::mat Qt;
  int threads = 1;
  void start(const arma::mat&, arma::mat&) override { throw std::logic_error("no data"); }
  void btx(arma::mat&) override { throw std::logic_error("no data"); }
  void apply(const arma::mat& Ri, arma::mat& G) override {
    apply_rinv(Qt.memptr(), Qt.n_rows, Qt.n_cols, Ri);
    gram_rows(Qt.memptr(), Qt.n_rows, Qt.n_cols, G, threads);
  }
  void gather(arma::mat& out) override { out = Qt; }
  void set(const arma::mat& Q) override { Qt = Q; }
  void left(const arma::mat& U, arma::mat& u) override {
    u = Qt.t() * U;  // m x k
    Qt.reset();
  }
};

template <class Products>
struct ProductRows : HeldRows {
  const Products& X;
  ProductRows(const Products& x, int th) : X(x) { threads = th; }
  void start(const arma::mat& Ht, arma::mat& G) override {
    Qt.reset();
    X.XHt(Ht, Qt, threads);  // l x m
    gram_rows(Qt.memptr(), Qt.n_rows, Qt.n_cols, G, threads);
  }
  void btx(arma::mat& B) override { X.WtX(Qt, B, threads); }  // l x n
};

// Q made orthonormal in its pieces from its Gram G (summed over the
// pieces): Cholesky QR twice (Q <- Q R^-1 with R'R = G; the second pass
// restores orthogonality to rounding for any condition number the first
// one survives). Householder QR of Q gathered (and given back) when G is
// numerically singular or its Cholesky factor nearly so, or of the first
// pass's Q R^-1 (the same range) when the second pass fails or the result
// is not orthonormal to 1e-10.
inline void orthonormalize(RangePieces& P, arma::mat G) {
  const std::size_t l = G.n_rows;
  arma::mat R, Ri;
  auto fallback = [&] {
    arma::mat Qt, Qh, Rh;
    P.gather(Qt);
    if (!Qt.is_finite() || !arma::qr_econ(Qh, Rh, arma::mat(Qt.t())))
      throw std::runtime_error("the QR decomposition of the range failed");
    P.set(arma::mat(Qh.t()));
  };
  for (int pass = 0; pass < 2; ++pass) {
    // (R close to singular, by its diagonal: Householder QR of the current,
    // finite, Q before R^-1 could overflow it)
    if (!G.is_finite() || !arma::chol(R, G) || R.diag().min() <= 1e-8 * R.diag().max() ||
        !arma::solve(Ri, arma::trimatu(R), arma::eye(l, l), arma::solve_opts::no_approx)) {
      fallback();
      return;
    }
    P.apply(Ri, G);  // G: the new Q's Gram
  }
  if (!G.is_finite() || arma::abs(G - arma::eye(l, l)).max() > 1e-10) fallback();
}

// An orthonormal basis of the range of Y, Y given and returned transposed
// (rows, l x m) and transformed in place (orthonormalize() on one piece)
inline void orthonormalize_rows(arma::mat& Qt, int threads) {
  HeldRows P;
  P.threads = threads;
  P.Qt = std::move(Qt);
  arma::mat G;
  gram_rows(P.Qt.memptr(), P.Qt.n_rows, P.Qt.n_cols, G, threads);
  orthonormalize(P, G);
  Qt = std::move(P.Qt);
}

// The leading k singular triplets of X from the range finder on pieces
// (Omega n x l): Y = X Omega, then `power` times Q = orth(Y), Y = X (Q'X)';
// B = Q'X = U S V' (B is l x n, small), u = Q U. False when the SVD of B
// fails.
inline bool range_svd_pieces(RangePieces& P, const arma::mat& Omega, int power, int k, arma::vec& d, arma::mat& u,
                      arma::mat& v) {
  arma::mat G, B;
  P.start(arma::mat(Omega.t()), G);
  for (int it = 0;; ++it) {
    orthonormalize(P, G);
    P.btx(B);  // Q' X: l x n
    if (it == power) break;
    P.start(B, G);  // (X X' Q)'
  }
  arma::mat Ub, Vb;
  arma::vec sb;
  if (!arma::svd_econ(Ub, sb, Vb, B)) return false;
  d = sb.head(k);
  v = Vb.head_cols(k);
  P.left(arma::mat(Ub.head_cols(k)), u);  // m x k
  return true;
}

// The same of data in memory (any type with Data's XHt() and WtX())
template <class Products>
bool range_svd(const Products& X, const arma::mat& Omega, int power, int k, int threads, arma::vec& d,
               arma::mat& u, arma::mat& v) {
  ProductRows<Products> P(X, threads);
  return range_svd_pieces(P, Omega, power, k, d, u, v);
}

}  // namespace nmf
}  // namespace aspectr

#endif
