// aspectr/sym/symnmf.h — symmetric NMF  A ~ H H'  (A symmetric n x n,
// H >= 0 n x k; the core stores Ht, k x n).
//
//  * anls / hals: the penalty formulation of Kuang, Yun and Park (2015),
//      min_{W,H >= 0} 1/2 ||A - W H'||^2 + lambda/2 ||W - H||^2
//                     + l1 (sum W + sum H),
//    by alternating exact non-negative least squares (nmf::nnls_exact: block
//    principal pivoting, coordinate descent where a block is singular) or
//    one HALS sweep per block. Both minimize the penalized
//    objective block by block, so it never increases. The returned factor
//    is H; with lambda large enough W = H at the limit.
//  * fpals: the fixed-point ALS of Cichocki et al. (2007) eq. 21,
//      H <- [(A H - l1) (H'H)^-1]_+,
//    relaxed by omega (1 = the paper's step), with the paper's column
//    normalization and least-squares scales (SymFPALSRule); the objective
//    1/2 ||A - H H'||^2 + l1 sum H is reported but not guaranteed to fall.
//    The plain step can cycle between two states; each time the objective
//    rises, the relaxation is halved (to 1/64 at least), which stops it.
#ifndef ASPECTR_SYM_SYMNMF_H
#define ASPECTR_SYM_SYMNMF_H

#include <cmath>
#include "../nmf/data.h"
#include "../nmf/rules.h"
#include "orthogonal.h"

namespace aspectr {
namespace sym {

struct SymModel {
  arma::mat Wt;  // k x n (penalty methods; equals Ht for fpals)
  arma::mat Ht;  // k x n
};

enum class SymMethod { ANLS, HALS, FPALS };

// 1/2 ||A - H H'||^2 + l1 sum H, from C = (A H)'
inline double sym_objective(const nmf::Data& A, const arma::mat& Ht, const arma::mat& C, double l1) {
  const arma::mat HH = Ht * Ht.t();
  const double v = A.xnorm2() - 2.0 * arma::accu(C % Ht) + arma::accu(HH % HH);
  return 0.5 * std::max(v, 0.0) + l1 * arma::accu(Ht);
}

// Penalized ANLS / HALS (never increase the penalized objective).
class SymNMFRule {
 public:
  static constexpr bool kLagged = false;
  SymNMFRule(SymMethod m, double lambda, double l1) : m_(m), lambda_(lambda), l1_(l1) {}

  double step(const nmf::Data& A, SymModel& M, int threads) {
    arma::mat C;
    A.WtX(M.Ht, C, threads);  // (A H)'
    block(M.Wt, C, M.Ht, threads);
    A.WtX(M.Wt, C, threads);  // (A W)'
    block(M.Ht, C, M.Wt, threads);
    return penalized(A, M, C);
  }
  double loss(const nmf::Data& A, const SymModel& M, int threads) const {
    arma::mat C;
    A.WtX(M.Wt, C, threads);
    return penalized(A, M, C);
  }

 private:
  // F <- argmin_{F >= 0} 1/2 ||A - F O'||^2 + lambda/2 ||F - O||^2 + l1 sum F
  // (columns of F independent), with C = (A O)'.
  void block(arma::mat& F, const arma::mat& C, const arma::mat& O, int threads) const {
    const arma::uword k = F.n_rows, n = F.n_cols;
    const arma::mat OO = O * O.t();
    if (m_ == SymMethod::HALS) {
      // one exact sweep over the rows of F
      const arma::mat R = C + lambda_ * O;
      nmf::FrobeniusHALS::update_rows(F, R, OO, l1_, lambda_, threads);
      return;
    }
    arma::mat Q = OO;
    Q.diag() += lambda_;
    const arma::mat R = C + lambda_ * O - l1_;
    const int T = effective_threads(threads, n * k * k / 8);
    parallel_chunks(n, T, [&](int, std::size_t b, std::size_t e) {
      std::vector<double> g(k);
      nmf::BppWork w(k);
      for (std::size_t i = b; i < e; ++i) nmf::nnls_exact(Q, R.colptr(i), F.colptr(i), k, w, g.data());
    });
  }

  // 1/2 ||A - W H'||^2 + lambda/2 ||W - H||^2 + l1 (sum W + sum H), with
  // CW = (A W)': ||A - WH'||^2 = ||A||^2 - 2 <(A W)', H'> + <W'W, H'H>.
  double penalized(const nmf::Data& A, const SymModel& M, const arma::mat& CW) const {
    const double fit = A.xnorm2() - 2.0 * arma::accu(CW % M.Ht) +
                       arma::accu((M.Wt * M.Wt.t()) % (M.Ht * M.Ht.t()));
    return 0.5 * std::max(fit, 0.0) + 0.5 * lambda_ * arma::accu(arma::square(M.Wt - M.Ht)) +
           l1_ * (arma::accu(M.Wt) + arma::accu(M.Ht));
  }

  SymMethod m_;
  double lambda_, l1_;
};

// Fixed-point ALS of Cichocki et al. (2007) eq. 21, H <- [(A H - l1)(H'H)^-1]_+. The map
// is homogeneous of degree -1 in the scale of H (c -> 1/c), so, as the paper
// prescribes, columns are normalized after each step; each iteration starts
// by giving the directions U their least-squares scales
// (mu = NNLS((U'U)^(o2), diag(U'AU)), H = U mu^(1/2)), and the objective of
// that scaled H is the one reported (lagged: the model entering the step).
class SymFPALSRule {
 public:
  static constexpr bool kLagged = true;
  SymFPALSRule(double l1, double omega, bool orthogonal = false)
      : l1_(l1), omega_(omega), orthogonal_(orthogonal) {}

  void start(SymModel& M) const { normalize(M.Ht); M.Wt = M.Ht; }
  double step(const nmf::Data& A, SymModel& M, int threads) {
    arma::mat C;
    A.WtX(M.Ht, C, threads);
    const double f = scale(A, M.Ht, C);
    if (f > prev_) omega_ = std::max(0.5 * omega_, 1.0 / 64);  // damp an oscillation
    prev_ = f;
    arma::mat HH = M.Ht * M.Ht.t();
    HH.diag() += 1e-12 * (HH.diag().max() > 0.0 ? HH.diag().max() : 1.0);  // relative: scale-free
    // The step is solved in units of r, a power of 2 (exact), when the
    // right-hand side is huge: an l1 near the 1e300 cap over a nearly
    // singular H'H gives a solution beyond the double range (Inf - Inf =
    // NaN). The normalization below makes the result scale-free, so the
    // relaxed step is formed in those units too.
    const arma::mat R = C - l1_;
    const double rmax = arma::abs(R).max();
    const double r = rmax > 1e100 ? std::exp2(std::ceil(std::log2(rmax))) : 1.0;
    arma::mat Hn = arma::clamp(arma::solve(HH, r == 1.0 ? R : arma::mat(R / r), arma::solve_opts::likely_sympd),
                               0.0, arma::datum::inf);
    if (omega_ != 1.0) Hn = arma::clamp((1.0 - omega_) / r * M.Ht + omega_ * Hn, 0.0, arma::datum::inf);
    if (orthogonal_) orthogonalize(Hn);
    normalize(Hn);
    M.Ht = std::move(Hn);
    M.Wt = M.Ht;
    return f;
  }
  double loss(const nmf::Data& A, const SymModel& M, int threads) const {
    arma::mat C, H = M.Ht;
    A.WtX(H, C, threads);
    return scale(A, H, C);
  }
  void finish(const nmf::Data& A, SymModel& M, int threads) const {
    arma::mat C;
    A.WtX(M.Ht, C, threads);
    scale(A, M.Ht, C);
    M.Wt = M.Ht;
  }

 private:
  static void normalize(arma::mat& Ht) {
    // unit-norm rows (columns of H)
    for (arma::uword j = 0; j < Ht.n_rows; ++j) {
      const double nn = arma::norm(Ht.row(j));
      if (nn > 0.0) Ht.row(j) /= nn;
    }
  }
  // scales the directions (rows of Ht) optimally; C = (A U)' is rescaled
  // with them; returns the objective of the scaled H.
  double scale(const nmf::Data& A, arma::mat& Ht, arma::mat& C) const {
    const arma::uword k = Ht.n_rows;
    const arma::mat UU = Ht * Ht.t();
    const arma::mat Q = UU % UU;
    arma::vec c = arma::sum(C % Ht, 1), mu(k), g(k);
    for (arma::uword j = 0; j < k; ++j) mu[j] = Q(j, j) > 0 ? std::max(c[j], 0.0) / Q(j, j) : 0.0;
    nmf::nnls_cd(Q, c.memptr(), mu.memptr(), k, g.memptr());
    for (arma::uword j = 0; j < k; ++j) {
      const double a = std::sqrt(mu[j]);
      Ht.row(j) *= a;
      C.row(j) *= a;
    }
    return sym_objective(A, Ht, C, l1_);
  }

  double l1_, omega_;
  bool orthogonal_;
  double prev_ = arma::datum::inf;
};

}  // namespace sym
}  // namespace aspectr

#endif
