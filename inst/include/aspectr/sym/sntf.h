// aspectr/sym/sntf.h — super-symmetric NTF (Cichocki et al. 2007): Y ~ sum_j g_j^(o L).
//
// Multiplicative rules. Every rule has the form g_ij <- g_ij * r_ij^e with
// a ratio r built from the symmetric MTTKRP (symtensor.h), and an exponent
// e = omega * e_MM, where e_MM is the largest exponent for which the step
// minimizes a majorizer of the objective (so omega <= 1 never increases it;
// 1 < omega < 2 over-relaxes, as the paper's omega, without that guarantee).
// The exponents were derived for the symmetric model, where g_j enters every
// cell L times (Jensen's inequality over the k components, the weighted
// AM-GM or tangent bound over the L positions, and
// (sum_i g_i u_i)^L <= s^(L-1) sum_i g_i u_i^L for the total):
//  * alpha (alpha > 0, eq. 8-9):
//      r = M[(Y/Z)^alpha] / s^(L-1),  e_MM = 1/L (alpha <= 1), 1/(L alpha)
//    (the paper's literal step r^(omega/alpha) with omega = 1 diverges
//    without its column normalization: it is L times e_MM at alpha = 1);
//  * smart (alpha = 0, eq. 10-12): g <- g exp(e M[log(Y/Z)] / s^(L-1)),
//    e_MM = 1/L (the alpha -> 0 limit of the alpha rule); needs Y > 0;
//  * beta (eq. 14-17, beta = 0 KL, 1 Frobenius, -1 Itakura-Saito):
//      r = M[Y Z^(beta-1)] / (M[Z^beta] + L1 / L),
//      e_MM = gamma(beta + 1) / L with Fevotte and Idier's gamma(b) = 1/(2-b)
//      for b < 1, 1 for 1 <= b <= 2, 1/(b-1) for b > 2;
//    M[Z^beta] is closed-form for beta = 0 (s^(L-1)) and beta = 1
//    (G (G'G)^(L-1)); other beta visit every cell (complete storage).
//  * unfold (eq. 27-28): fixed-point ALS on the unfolded model,
//      G <- [[M[Y] - L1/L]_+ ((G'G)^(L-1))^-1]_+,
//    relaxed by omega (halved whenever the objective rises, which stops the
//    two-state cycles the plain step can fall into); not a descent method. The map is homogeneous of
//    degree -2 in the scale of G, so iterated as it stands the scale
//    oscillates and diverges (c -> c^-2); as the paper prescribes, columns
//    are normalized after each step, and each iteration starts by giving the
//    directions their least-squares scales (a k x k NNLS), which is also
//    the model whose objective is reported.
// Column normalization: the paper rescales the columns of G to unit sum
// after every step. Here the scale moves into the component weight, which
// leaves the model unchanged, so the normalization is implicit and the
// factor G keeps Y ~ sum_j g_j^(o L) exactly.
// Optional post-steps (no descent guarantee): the sparsity exponent of seed
// eq. 9 applied to unit-sum columns, and the semi-orthogonality step
// G <- G (G'G)^(-1/2) (eq. 29) with negatives clipped and each column
// returned to its previous norm.
#ifndef ASPECTR_SYM_SNTF_H
#define ASPECTR_SYM_SNTF_H

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>
#include "symtensor.h"
#include "../nmf/rules.h"
#include "orthogonal.h"

namespace aspectr {
namespace sym {

enum class Method { Alpha, Smart, Beta, Unfold };

struct Options {
  Method method = Method::Alpha;
  double alpha = 1.0;
  double beta = 0.0;
  double omega = 1.0;
  double sparsity = 0.0;
  double l1 = 0.0;
  bool orthogonal = false;
};

inline double beta_gamma(double b) {
  if (b < 1.0) return 1.0 / (2.0 - b);
  if (b <= 2.0) return 1.0;
  return 1.0 / (b - 1.0);
}

// Divergence pieces computed in the pass over stored sets.
class SNTFRule {
 public:
  static constexpr bool kLagged = true;

  SNTFRule(const SymTensor& Y, Options o) : o_(o), L_(static_cast<double>(Y.L)), omega_eff_(o.omega) {
    sum_y_ = Y.cell_sum([](double y) { return y; });
    sum_y2_ = Y.cell_sum([](double y) { return y * y; });
    // smallest model value in ratios and logs: 1e-300 relative to the data
    // (an absolute floor would distort data scaled down by 1e-300)
    floor_ = std::max(1e-300 * (Y.val.n_elem ? Y.val.max() : 1.0), std::numeric_limits<double>::min());
    if (o_.method == Method::Alpha && !(o_.alpha > 0.0))
      throw std::invalid_argument("alpha must be positive (alpha = 0 is smart)");
    if (needs_complete() && !Y.complete())
      throw std::invalid_argument("this divergence needs every cell stored");
    if (needs_positive())
      for (double y : Y.val)
        if (!(y > 0.0)) throw std::invalid_argument("this divergence needs strictly positive data");
    if (o_.method == Method::Beta && o_.beta != 0.0 && o_.beta != 1.0 && o_.beta != -1.0) {
      const double b = o_.beta;
      sum_ybeta_ = Y.cell_sum([b](double y) { return y > 0 ? y * std::pow(y, b) / b - std::pow(y, b + 1) / (b + 1) : 0.0; });
    }
  }

  bool needs_complete() const {
    return o_.method == Method::Smart ||
           (o_.method == Method::Beta && o_.beta != 0.0 && o_.beta != 1.0);
  }
  bool needs_positive() const {
    return o_.method == Method::Smart || (o_.method == Method::Beta && o_.beta <= -1.0);
  }
  bool zero_infinite() const {
    return (o_.method == Method::Alpha && o_.alpha >= 1.0) || (o_.method == Method::Beta && o_.beta <= 0.0);
  }
  double exponent() const {
    switch (o_.method) {
      case Method::Alpha: return o_.omega * (o_.alpha <= 1.0 ? 1.0 / L_ : 1.0 / (L_ * o_.alpha));
      case Method::Smart: return o_.omega / L_;
      case Method::Beta: return o_.omega * beta_gamma(o_.beta + 1.0) / L_;
      default: return o_.omega;
    }
  }

  // One update; returns the objective of the model entering it.
  double step(const SymTensor& Y, arma::mat& Gt, int threads) {
    arma::mat M;
    if (o_.method == Method::Unfold) {
      // Gt holds unit-norm directions; scale them optimally, then one FP-ALS step
      pass(Y, Gt, M, threads);
      const double f = scale_optimally(Gt, M);
      if (f > prev_) omega_eff_ = std::max(0.5 * omega_eff_, 1.0 / 64);  // damp an oscillation
      prev_ = f;
      unfold_update(Gt, M);
      post(Gt);
      normalize_columns(Gt);
      return f;
    }
    const double f = pass(Y, Gt, M, threads);
    update(Y, Gt, M, threads);
    post(Gt);
    return f;
  }
  double loss(const SymTensor& Y, const arma::mat& Gt, int threads) {
    arma::mat M;
    if (o_.method == Method::Unfold) {
      arma::mat G = Gt;
      pass(Y, G, M, threads);
      return scale_optimally(G, M);
    }
    return pass(Y, Gt, M, threads);
  }
  // Brings the factor into its reported form: for "unfold" the directions
  // get their least-squares scales.
  void finish(const SymTensor& Y, arma::mat& Gt, int threads) {
    if (o_.method != Method::Unfold) return;
    arma::mat M;
    pass(Y, Gt, M, threads);
    scale_optimally(Gt, M);
  }
  // "unfold" iterates on directions: the starting point is normalized.
  void start(arma::mat& Gt) const {
    if (o_.method == Method::Unfold) normalize_columns(Gt);
  }

 private:

  // the numerator MTTKRP of the rule, and the objective of Gt
  double pass(const SymTensor& Y, const arma::mat& Gt, arma::mat& M, int threads) {
    std::vector<double> acc(1, 0.0);
    const double a = o_.alpha, b = o_.beta;
    double f = 0.0;
    const double pen = o_.l1 * arma::accu(Gt);
    switch (o_.method) {
      case Method::Alpha:
        if (a == 1.0) {
          f = kl_pass(Y, Gt, M, threads);
        } else {
          sym_pass(Y, Gt, [a, fl = floor_](double y, double z, double m, double* c) {
            z = z > fl ? z : fl;
            if (y <= 0) return 0.0;
            const double r = std::pow(y / z, a);
            c[0] += m * r * z;  // y^a z^(1-a)
            return r;
          }, M, acc, threads);
          const double s = acc[0];
          f = (s - sum_y_) / (a * (a - 1.0)) - (sum_y_ - model_total(Gt, Y.L)) / a;
        }
        break;
      case Method::Smart:
        sym_pass(Y, Gt, [fl = floor_](double y, double z, double m, double* c) {
          z = z > fl ? z : fl;
          const double l = std::log(y / z);
          c[0] -= m * z * l;  // z log(z/y)
          return l;
        }, M, acc, threads);
        f = acc[0] + sum_y_ - model_total(Gt, Y.L);
        break;
      case Method::Beta:
        if (b == 0.0) {
          f = kl_pass(Y, Gt, M, threads);
        } else if (b == 1.0) {
          f = frobenius_pass(Y, Gt, M, threads);
        } else {
          sym_pass(Y, Gt, [b, fl = floor_](double y, double z, double m, double* c) {
            z = z > fl ? z : fl;
            if (b == -1.0) c[0] += m * (std::log(z / y) + y / z - 1.0);
            else c[0] += m * (std::pow(z, b + 1) / (b + 1) - y * std::pow(z, b) / b);
            // a zero cell adds nothing to the numerator: where the model
            // vanishes too (rows driven to zero, which -1 < beta < 0 allows
            // since d(0|z) = z^(beta+1)/(beta+1) is finite at z = 0), the
            // floored z^(beta-1) overflows and 0 * Inf would be NaN
            return y > 0 ? y * std::pow(z, b - 1.0) : 0.0;
          }, M, acc, threads);
          f = acc[0] + (b == -1.0 ? 0.0 : sum_ybeta_);
        }
        break;
      case Method::Unfold:
        f = frobenius_pass(Y, Gt, M, threads);
        break;
    }
    return f + pen;
  }

  // generalized KL (alpha = 1, beta = 0): weights y/z
  double kl_pass(const SymTensor& Y, const arma::mat& Gt, arma::mat& M, int threads) {
    std::vector<double> acc(1, 0.0);
    sym_pass(Y, Gt, [fl = floor_](double y, double z, double m, double* c) {
      z = z > fl ? z : fl;
      if (y > 0) c[0] += m * y * std::log(y / z);
      return y / z;
    }, M, acc, threads);
    return acc[0] - sum_y_ + model_total(Gt, Y.L);
  }

  double frobenius_pass(const SymTensor& Y, const arma::mat& Gt, arma::mat& M, int threads) {
    std::vector<double> acc(1, 0.0);
    sym_pass(Y, Gt, [](double y, double z, double m, double* c) {
      c[0] += m * y * z;
      return y;
    }, M, acc, threads);
    const double yz = acc[0];
    return 0.5 * std::max(sum_y2_ - 2.0 * yz + model_sq_total(Gt, Y.L), 0.0);
  }

  void update(const SymTensor& Y, arma::mat& Gt, const arma::mat& M, int threads) {
    const arma::uword k = Gt.n_rows, n = Gt.n_cols;
    const double e = exponent();
    arma::mat D;  // denominator, k x n
    if (o_.method == Method::Beta && o_.beta == 1.0) {
      D = arma::pow(Gt * Gt.t(), L_ - 1.0) * Gt;
    } else if (o_.method == Method::Beta && o_.beta != 0.0) {
      std::vector<double> acc;
      const double b = o_.beta;
      sym_pass(Y, Gt, [b, fl = floor_](double, double z, double, double*) { return std::pow(z > fl ? z : fl, b); },
               D, acc, threads);
    } else {
      const arma::vec s = col_sums(Gt);
      D.set_size(k, n);
      for (arma::uword j = 0; j < k; ++j) D.row(j).fill(std::pow(s[j], L_ - 1.0));
    }
    const double shift = o_.method == Method::Beta ? o_.l1 / L_ : 0.0;
    for (arma::uword i = 0; i < n; ++i)
      for (arma::uword j = 0; j < k; ++j) {
        const double den = D(j, i) + shift;
        if (!(den > 0.0)) continue;
        double& g = Gt(j, i);
        if (o_.method == Method::Smart) g *= std::exp(e * M(j, i) / den);
        else g *= std::pow(std::max(M(j, i), 0.0) / den, e);
      }
  }

  // FP-ALS step of the unfolded model: G <- [[M - l1/L]_+ H^-1]_+,
  // H = (G'G)^(L-1), relaxed by omega.
  void unfold_update(arma::mat& Gt, const arma::mat& M) {
    arma::mat H = gram_power(Gt, L_ - 1.0);
    H.diag() += 1e-12 * (H.diag().max() > 0.0 ? H.diag().max() : 1.0);  // relative: scale-free
    arma::mat R = arma::clamp(M - o_.l1 / L_, 0.0, arma::datum::inf);
    arma::mat Gn = arma::clamp(arma::solve(H, R, arma::solve_opts::likely_sympd), 0.0, arma::datum::inf);
    if (omega_eff_ != 1.0) Gn = arma::clamp((1.0 - omega_eff_) * Gt + omega_eff_ * Gn, 0.0, arma::datum::inf);
    Gt = std::move(Gn);
  }

  static void normalize_columns(arma::mat& Gt) {
    for (arma::uword j = 0; j < Gt.n_rows; ++j) {
      const double nn = arma::norm(Gt.row(j));
      if (nn > 0.0) Gt.row(j) /= nn;
    }
  }

  // Given directions U (rows of Gt) and M = M[Y](U), sets the column scales
  // to the non-negative least-squares optimum of 1/2 ||Y - sum_j lambda_j
  // u_j^(o L)||^2 (a k x k NNLS: Q = (U'U)^(o L), c_j = <Y, u_j^(o L)> =
  // sum_i M_ij u_ij), rescales Gt and M accordingly and returns the
  // objective of the scaled model.
  double scale_optimally(arma::mat& Gt, arma::mat& M) const {
    const arma::uword k = Gt.n_rows;
    const arma::mat Q = gram_power(Gt, L_);
    arma::vec c = arma::sum(M % Gt, 1);
    arma::vec lam(k, arma::fill::ones), g(k);
    for (arma::uword j = 0; j < k; ++j) lam[j] = Q(j, j) > 0 ? std::max(c[j], 0.0) / Q(j, j) : 0.0;
    nmf::nnls_cd(Q, c.memptr(), lam.memptr(), k, g.memptr());
    for (arma::uword j = 0; j < k; ++j) {
      const double a = std::pow(lam[j], 1.0 / L_);
      Gt.row(j) *= a;
      M.row(j) *= std::pow(lam[j], (L_ - 1.0) / L_);
    }
    const double fit = sum_y2_ - 2.0 * arma::dot(c, lam) + arma::as_scalar(lam.t() * Q * lam);
    return 0.5 * std::max(fit, 0.0) + o_.l1 * arma::accu(Gt);
  }

  void post(arma::mat& Gt) const {
    const arma::uword k = Gt.n_rows;
    if (o_.sparsity != 0.0) {
      for (arma::uword j = 0; j < k; ++j) {
        const double s = arma::accu(Gt.row(j));
        if (!(s > 0.0)) continue;
        arma::rowvec c = arma::pow(Gt.row(j) / s, 1.0 + o_.sparsity);
        const double cs = arma::accu(c);
        if (cs > 0.0) Gt.row(j) = c * (s / cs);
      }
    }
    // Under divergences that are infinite where the model vanishes on a
    // stored cell (alpha >= 1, beta <= 0), the clipped zeros of the step made
    // the objective infinite (alpha > 1 overflowed to NaN); there each entry
    // keeps at least a tenth of its value, so the model stays positive and
    // the step still shrinks the overlaps.
    if (o_.orthogonal) orthogonalize(Gt, true, zero_infinite() ? 0.1 : 0.0);
  }

  Options o_;
  double L_;
  double omega_eff_ = 1.0, prev_ = arma::datum::inf;
  double sum_y_ = 0.0, sum_y2_ = 0.0, sum_ybeta_ = 0.0;
  double floor_ = 1e-300;
};

}  // namespace sym
}  // namespace aspectr

#endif
