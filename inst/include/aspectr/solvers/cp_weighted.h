// aspectr/solvers/cp_weighted.h — non-negative CP (ntf()) under a weighted
// loss: missing cells, masks, observed cells and weights per cell and per
// index of each mode.
//
// The model is m_c = sum_r prod_n A_n(i_n, r) (factors stored k x d_n, the
// core's layout; lambda stays 1). The loss sums over the cells c with
// weights omega_c >= 0 (0: a missing or masked cell),
//   Frobenius  sum omega (x - m)^2,
//   KL         sum omega (x log(x / m) - x + m),
// with omega_c = prod_n v_n(i_n) (d + delta_c): weights per index of each
// mode v_n, a base weight d (1: all cells count; 0: only listed ones)
// and deviations delta from it on a sparse set E of cells (a masked
// cell of d = 1 has delta = -1; an observed cell of d = 0 its weight).
// The updates need two parts:
//  * the data weighted, X~ = omega o X, through the unweighted kernels
//    (MTTKRP of X~; ratios x~ / m at its non-zeros): O(nnz k) per mode;
//  * the weights' part of each factor row's Gram matrix (Frobenius) or
//    linear term (KL). With z_c = hadamard_{m != n} A_m(i_m, :) and
//    u_c = prod_{m != n} v_m(i_m), row i of mode n has
//      B_i = v_n(i) (d hadamard_{m != n} A_m' diag(v_m) A_m + sum_{c in E_i} delta_c u_c z_c z_c'),
//      D_i = v_n(i) (d hadamard_{m != n} A_m' v_m         + sum_{c in E_i} delta_c u_c z_c),
//    the common part once per mode. Frobenius never forms B_i: B_i a_i
//    is the common part times a_i plus the values z_c'a_i at the row's
//    deviating cells, kept up to date through the HALS sweep (as
//    nmf/weighted.h's WeightedSide::frobenius()): O(k^2 + |E_i| k) per
//    row, O(|E_i| k) for D_i.
// Each row a_i of mode n then solves its own problem with the other modes
// fixed,
//   Frobenius: min a'B_i a - 2 t_i'a, t_i = MTTKRP(X~)_i,
//   KL:        min D_i'a - sum_{c: i_n = i} x~_c log(z_c'a),
// by one sweep of exact coordinate updates (HALS: with all weights 1,
// cp.h's HALS row by row instead of column by column), the
// multiplicative update a <- a o max(t, eps) / (B_i a + eps) (Lee and
// Seung; monotone, B_i >= 0), one sweep of
// coordinate Newton steps (nmf::KLCD::solve(), as the KL aspect model's
// coordinate descent, solvers/cd.h) or the multiplicative update
// a <- a o (sum x~ z / m) / D_i (Lee and Seung's for KL). Under KL
// coordinate descent each mode starts and ends with the best scale of the
// model (A_n <- A_n sum x~ / sum omega m), which with all weights 1 is the
// normalization of the aspect model's coordinate descent (whose Newton
// steps, invariant to the scale of each coordinate, then take the same
// path). The modes are updated in turn; no update increases its problem,
// so the objective never increases. The objective comes from the same sums:
//   Frobenius: sum omega x^2 + sum_i (a_i'B_i a_i - 2 t_i'a_i)  (last mode),
//   KL:        sum x~ (log x - 1) - sum x~ log m + sum_i D_i'a_i.
// Rows are solved independently (in parallel).
// Rounding can leave a row's B_i or D_i a tiny non-zero where the weights
// of its cells cancel (a slice entirely masked): coefficients below 1e-12
// of the sums they come from count as 0 (such a row is kept as it is; for
// B_i: a coordinate whose diagonal entry is below that, which has no
// weight at any cell, is kept by HALS and the multiplicative update).
// CPWeightedRule holds the modes' updates: the KL multiplicative updates'
// parts (the linear terms' common and deviating parts, the numerators, the
// update), coordinate descent's rows (cd_rows()) and the Frobenius rows'
// update (frobenius_rows(), frobenius_mode()). The iteration (the modes in
// turn, the scales, the balance of the norms, the guard, the value) is
// written once, on data in pieces (cp_weighted_pieces.h); the data in
// memory are one piece of every cell.
#ifndef ASPECTR_SOLVERS_CP_WEIGHTED_H
#define ASPECTR_SOLVERS_CP_WEIGHTED_H

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>
#include <vector>
#include "../loss.h"
#include "../nmf/kl_cd.h"
#include "cp.h"

namespace aspectr {

enum class CPWeightedMethod { HALS = 0, MU = 1, CD = 2 };

// Cells of a list (N indices each) grouped by their index in one mode:
// those of index i at pos[ptr[i]] .. pos[ptr[i + 1] - 1] (stable: in the
// list's order within an index).
struct CellGroups {
  std::vector<std::size_t> ptr, pos;
  std::size_t maxnz = 0;
  void build(const index_t* ix, std::size_t N, std::size_t ncell, std::size_t mode, arma::uword d) {
    ptr.assign(d + 1, 0);
    for (std::size_t s = 0; s < ncell; ++s) {
      const index_t i = ix[s * N + mode];
      if (i >= d) throw std::invalid_argument("weighted CP: a cell outside the tensor");
      ++ptr[i + 1];
    }
    maxnz = 0;
    for (arma::uword i = 0; i < d; ++i) {
      maxnz = std::max(maxnz, ptr[i + 1]);
      ptr[i + 1] += ptr[i];
    }
    pos.resize(ncell);
    std::vector<std::size_t> next(ptr.begin(), ptr.end() - 1);
    for (std::size_t s = 0; s < ncell; ++s) pos[next[ix[s * N + mode]]++] = s;
  }
};

// The weights: d, v (one vector per mode, all 1 when not given), the
// deviations (cells in idx, N 0-based indices each, values in delta) and
// the data's constants (on the data the fit reads): wx2 = sum omega x^2,
// klc = sum x~ (log x - 1) over x > 0, total = sum x~.
struct CPWeights {
  double d = 1.0;
  std::vector<arma::vec> v;
  std::vector<index_t> idx;
  std::vector<double> delta;
  double wx2 = 0.0, klc = 0.0, total = 0.0;
  std::vector<CellGroups> groups;  // E by mode (prepare())
  // E in each mode's group order (prepare()): cell p of mode n's order has
  // indices gidx[n][p * N ..] and deviation gdelta[n][p] (the row updates
  // read a row's cells contiguously)
  std::vector<std::vector<index_t>> gidx;
  std::vector<std::vector<double>> gdelta;

  std::size_t cells() const { return delta.size(); }
  void prepare(const std::vector<arma::uword>& dims) {
    const std::size_t N = dims.size();
    if (v.size() != N) throw std::invalid_argument("weighted CP: one weight vector per mode needed");
    for (std::size_t n = 0; n < N; ++n)
      if (v[n].n_elem != dims[n]) throw std::invalid_argument("weighted CP: a mode's weights have the wrong length");
    if (idx.size() != N * delta.size()) throw std::invalid_argument("weighted CP: cells and deviations disagree");
    groups.assign(N, CellGroups());
    for (std::size_t n = 0; n < N; ++n) groups[n].build(idx.data(), N, delta.size(), n, dims[n]);
    gidx.assign(N, std::vector<index_t>());
    gdelta.assign(N, std::vector<double>());
    for (std::size_t n = 0; n < N; ++n) {
      const std::vector<std::size_t>& pos = groups[n].pos;
      gidx[n].resize(idx.size());
      gdelta[n].resize(delta.size());
      for (std::size_t p = 0; p < pos.size(); ++p) {
        std::copy(idx.begin() + pos[p] * N, idx.begin() + (pos[p] + 1) * N, gidx[n].begin() + p * N);
        gdelta[n][p] = delta[pos[p]];
      }
    }
  }

  // Omega times the other modes' Khatri-Rao product: column i of the
  // result (k x d_n) is sum_{c: i_n = i} omega_c z_c, z_c = hadamard_{m !=
  // n} F_m(:, i_m) (F: one k x d_m factor per mode; F[n] is not read), the
  // KL rows' linear terms D_i (see above), O(d_n k + |E| k N). cutoff:
  // coefficients below 1e-12 of the sums they come from count as 0.
  arma::mat times(const std::vector<arma::mat>& F, std::size_t n, int threads, bool cutoff) const {
    std::vector<arma::vec> fv(F.size());
    for (std::size_t m = 0; m < F.size(); ++m) if (m != n) fv[m] = F[m] * v[m];
    const arma::vec g = combine(fv, n, d);
    const arma::uword dn = F[n].n_cols;
    arma::mat D(g.n_elem, dn), ref(g.n_elem, dn);
    D.each_col() = g;
    ref.each_col() = arma::abs(g);
    add_deviations(F, n, D, ref, threads);
    finish(v[n], D, ref, cutoff);
    return D;
  }
  // its parts (also those of the rule on pieces, where the first mode's
  // A_0 v_0 is a sum over the pieces and each piece adds its own cells'
  // deviations): the common part d prod_{m != n} fv[m], fv[m] = F_m v_m
  // (k each; fv[n] not read)
  static arma::vec combine(const std::vector<arma::vec>& fv, std::size_t n, double d) {
    arma::vec g(fv[n == 0 ? 1 : 0].n_elem, arma::fill::ones);
    for (std::size_t m = 0; m < fv.size(); ++m) if (m != n) g %= fv[m];
    g *= d;
    return g;
  }
  // the deviating cells' parts sum_{c in E_i} delta_c u_c z_c added to D
  // (k x d_n) and their absolute values to ref
  void add_deviations(const std::vector<arma::mat>& F, std::size_t n, arma::mat& D, arma::mat& ref,
                      int threads) const {
    const std::size_t N = F.size();
    const arma::uword k = F[n].n_rows, dn = F[n].n_cols;
    const CellGroups& eg = groups[n];
    const int Tn = effective_threads(threads, (dn + cells()) * k);
    nmf::dense::parallel_blocks(dn, Tn, 64, [&](std::size_t b, std::size_t e) {
      std::vector<double> z(k);
      for (std::size_t i = b; i < e; ++i) {
        double* o = D.colptr(i);
        double* rf = ref.colptr(i);
        for (std::size_t s = eg.ptr[i]; s < eg.ptr[i + 1]; ++s) {
          // the other modes' product z and weight u of the cell
          const index_t* ix = gidx[n].data() + s * N;
          for (arma::uword r = 0; r < k; ++r) z[r] = 1.0;
          double u = 1.0;
          for (std::size_t m = 0; m < N; ++m) {
            if (m == n) continue;
            const double* f = F[m].colptr(ix[m]);
            for (arma::uword r = 0; r < k; ++r) z[r] *= f[r];
            u *= v[m][ix[m]];
          }
          const double f = gdelta[n][s] * u;
          for (arma::uword r = 0; r < k; ++r) { o[r] += f * z[r]; rf[r] += std::fabs(f * z[r]); }
        }
      }
    });
  }
  // each row's sum times v_n(i); with `cutoff`, coefficients below 1e-12 of
  // their sums of absolute values set to 0
  static void finish(const arma::vec& vn, arma::mat& D, const arma::mat& ref, bool cutoff) {
    for (arma::uword i = 0; i < D.n_cols; ++i) {
      const double vi = vn[i];
      double* o = D.colptr(i);
      const double* rf = ref.colptr(i);
      for (arma::uword r = 0; r < D.n_rows; ++r) o[r] = !cutoff || o[r] > 1e-12 * rf[r] ? o[r] * vi : 0.0;
    }
  }

  // d hadamard_{m != n} F_m diag(v_m) F_m' (the common part of the rows'
  // Gram matrices, see above)
  arma::mat gram(const std::vector<arma::mat>& F, std::size_t n) const {
    const std::size_t N = F.size();
    const arma::uword k = F[n].n_rows;
    arma::mat G(k, k, arma::fill::ones);
    for (std::size_t m = 0; m < N; ++m) {
      if (m == n) continue;
      arma::mat Fv = F[m];
      Fv.each_row() %= v[m].t();
      G %= Fv * F[m].t();
    }
    G *= d;
    return G;
  }
};

class CPWeightedRule {
 public:
  // gram: Frobenius rows with their Gram matrices formed (the rule before
  // the model's values at the deviating cells were used; equal up to
  // rounding, kept to check that)
  CPWeightedRule(bool kl, CPWeightedMethod method, const CPWeights& w, double eps = 1e-16, bool gram = false)
      : kl_(kl), method_(method), w_(w), eps_(eps), gram_(gram) {
    if (kl && method == CPWeightedMethod::HALS) throw std::invalid_argument("weighted CP: HALS is a Frobenius method");
    if (!kl && method == CPWeightedMethod::CD) throw std::invalid_argument("weighted CP: coordinate descent is a KL method");
  }
  // (the iteration is the rules' on pieces, cp_weighted_pieces.h: the data
  // in memory are one piece, which runs this rule's modes)

 private:
  void prepare(const SparseTensor& X) {
    if (prepared_) return;
    prepared_ = true;
    if (X.has_missing()) throw std::invalid_argument("weighted CP: cells with a missing index are not supported");
    if (w_.groups.size() != X.order()) throw std::logic_error("weighted CP: the weights are not prepared");
    if (kl_ && method_ == CPWeightedMethod::CD) {
      xg_.assign(X.order(), CellGroups());
      for (std::size_t n = 0; n < X.order(); ++n) xg_[n].build(X.indices(), X.order(), X.nnz(), n, X.dims[n]);
    }
  }

  // the other modes' product z (k) and weight u of deviation cell e (of
  // the cells' order; grouped: of mode n's group order)
  void deviation(const AspectModel& M, std::size_t n, std::size_t e, double* z, double& u,
                 bool grouped = false) const {
    const std::size_t N = M.order();
    const arma::uword k = M.rank();
    const index_t* ix = (grouped ? w_.gidx[n].data() : w_.idx.data()) + e * N;
    for (arma::uword r = 0; r < k; ++r) z[r] = 1.0;
    u = 1.0;
    for (std::size_t m = 0; m < N; ++m) {
      if (m == n) continue;
      const double* f = M.F[m].colptr(ix[m]);
      for (arma::uword r = 0; r < k; ++r) z[r] *= f[r];
      u *= w_.v[m][ix[m]];
    }
  }

  // Frobenius, mode n: every row updated (update) by the method; returns
  // sum_i (a_i'B_i a_i - 2 t_i'a_i) when `value`, else 0.
  //
  // B_i a = v_n(i) (G a + sum_{c in E_i} e_c y_c z_c) with G = d hadamard_{m
  // != n} A_m' diag(v_m) A_m, e_c = delta_c u_c and y_c = z_c'a the model's
  // values at the row's deviating cells (z_c the other modes' product at
  // cell c): HALS keeps G a and y up to date through its sweep, the
  // multiplicative update and the objective take B_i a from them, O(k^2 +
  // |E_i| k) per row instead of forming B_i (O(|E_i| k^2)). With gram_
  // (an internal check) B_i is formed as before the rewrite.
  double frobenius_mode(const SparseTensor& X, AspectModel& M, std::size_t n, bool update, bool value,
                        int threads) const {
    if (gram_ || M.order() < 2) return frobenius_mode_gram(X, M, n, update, value, threads);
    const std::size_t N = M.order();
    std::vector<const arma::mat*> Fp(N);
    for (std::size_t m = 0; m < N; ++m) Fp[m] = &M.F[m];
    arma::mat T;
    mttkrp(X, Fp, n, T, threads, nullptr);
    const arma::mat G = common_gram(M, n);
    return frobenius_rows(M.F[n], w_.v[n], T, G, deviation_cells(M, n), w_.cells(), N, update, value, threads);
  }

  // The deviating cells of the rows of mode n, from the weights' list
  // (grouped by mode n): cells(i, zs, ezs, es) writes those of row i, the
  // other modes' products zs[r * ne + s] (each coordinate's values
  // contiguous), their coefficients es[s] = delta_c u_c and ezs = es z.
  struct MemoryDeviations {
    const CPWeights& w;
    const AspectModel& M;
    std::size_t n;
    std::vector<std::size_t> om;  // the other modes
    void operator()(std::size_t i, std::vector<double>& zs, std::vector<double>& ezs, std::vector<double>& es,
                    std::vector<double>& z) const {
      const std::size_t N = M.order();
      const arma::uword k = M.rank();
      const std::size_t s0 = w.groups[n].ptr[i], ne = w.groups[n].ptr[i + 1] - s0;
      zs.resize(ne * k);
      ezs.resize(ne * k);
      es.resize(ne);
      for (std::size_t s = 0; s < ne; ++s) {
        // z = the product of the other modes' rows (as deviation())
        const index_t* ix = w.gidx[n].data() + (s0 + s) * N;
        const double* f0 = M.F[om[0]].colptr(ix[om[0]]);
        double u = w.v[om[0]][ix[om[0]]];
        if (om.size() == 1) {
          for (arma::uword r = 0; r < k; ++r) z[r] = f0[r];
        } else {
          const double* f1 = M.F[om[1]].colptr(ix[om[1]]);
          u *= w.v[om[1]][ix[om[1]]];
          for (arma::uword r = 0; r < k; ++r) z[r] = f0[r] * f1[r];
          for (std::size_t j = 2; j < om.size(); ++j) {
            const double* fj = M.F[om[j]].colptr(ix[om[j]]);
            u *= w.v[om[j]][ix[om[j]]];
            for (arma::uword r = 0; r < k; ++r) z[r] *= fj[r];
          }
        }
        const double f = w.gdelta[n][s0 + s] * u;
        es[s] = f;
        for (arma::uword r = 0; r < k; ++r) {
          zs[r * ne + s] = z[r];
          ezs[r * ne + s] = f * z[r];
        }
      }
    }
  };
  MemoryDeviations deviation_cells(const AspectModel& M, std::size_t n) const {
    MemoryDeviations out{w_, M, n, {}};
    for (std::size_t m = 0; m < M.order(); ++m) if (m != n) out.om.push_back(m);
    return out;
  }

  // Frobenius, the rows of A (k x d_n, mode n) given their data's part T
  // (MTTKRP of X~), the common Gram matrix G and their deviating cells
  // (`cells`, as MemoryDeviations; ncells of them in all, N modes: the
  // work's estimate): every row updated (update) by the method; returns
  // sum_i (a_i'B_i a_i - 2 t_i'a_i) when `value`, else 0.
  template <class Cells>
  double frobenius_rows(arma::mat& A, const arma::vec& vn, const arma::mat& T, const arma::mat& G,
                        const Cells& cells, std::size_t ncells, std::size_t N, bool update, bool value,
                        int threads) const {
    const arma::uword k = A.n_rows, dn = A.n_cols;
    if (T.n_rows != k || T.n_cols != dn || vn.n_elem != dn) throw std::logic_error("weighted CP: rows of the wrong size");
    std::vector<double> part(dn, 0.0);
    const double work = static_cast<double>(dn) * k * k + static_cast<double>(ncells) * k * (N + 2);
    const int Tn = effective_threads(threads, static_cast<std::size_t>(work / 4));
    nmf::dense::parallel_blocks(dn, Tn, 16, [&](std::size_t b, std::size_t e) {
      std::vector<double> z(k), gf(k), qf(k), ezz(k), ref(k), zs, ezs, es, y;
      for (std::size_t i = b; i < e; ++i) {
        const double vi = vn[i];
        // the row's deviating cells (see MemoryDeviations), and per
        // coordinate the deviations' part of B_i's diagonal, ezz[r] = sum
        // es z_r^2, and ref[r] = |G(r, r)| + sum |es| z_r^2 (the scale of
        // B_i(r, r))
        cells(i, zs, ezs, es, z);
        const std::size_t ne = es.size();
        for (arma::uword r = 0; r < k; ++r) {
          const double* zr = zs.data() + r * ne;
          const double* ezr = ezs.data() + r * ne;
          double sz = 0.0, sa = 0.0;
          for (std::size_t s = 0; s < ne; ++s) {
            const double q = ezr[s] * zr[s];
            sz += q;
            sa += std::fabs(q);
          }
          ezz[r] = sz;
          ref[r] = std::fabs(G(r, r)) + sa;
        }
        double* a = A.colptr(i);
        const double* t = T.colptr(i);
        // G a and y at the current a
        auto model = [&]() {
          for (arma::uword r = 0; r < k; ++r) {
            double v = 0.0;
            for (arma::uword q = 0; q < k; ++q) v += G(r, q) * a[q];
            gf[r] = v;
          }
          y.assign(ne, 0.0);
          for (arma::uword q = 0; q < k; ++q) {
            const double aq = a[q];
            const double* zq = zs.data() + q * ne;
            for (std::size_t s = 0; s < ne; ++s) y[s] += zq[s] * aq;
          }
        };
        bool fresh = false;  // G a and y are those of a
        if (update) {
          model();
          if (method_ == CPWeightedMethod::HALS) {
            fresh = true;
            for (arma::uword r = 0; r < k; ++r) {
              const double qrr = vi * (G(r, r) + ezz[r]);
              if (!(qrr > 1e-12 * vi * ref[r])) continue;  // no weight on this coordinate
              const double* zr = zs.data() + r * ne;
              const double* ezr = ezs.data() + r * ne;
              double ey = 0.0;
              for (std::size_t s = 0; s < ne; ++s) ey += ezr[s] * y[s];
              const double qr = vi * (gf[r] + ey);
              const double nw = std::max(0.0, (t[r] - (qr - qrr * a[r])) / qrr);
              const double dlt = nw - a[r];
              if (dlt != 0.0) {
                a[r] = nw;
                const double* gr = G.colptr(r);
                for (arma::uword q = 0; q < k; ++q) gf[q] += dlt * gr[q];
                for (std::size_t s = 0; s < ne; ++s) y[s] += dlt * zr[s];
              }
            }
          } else {
            for (arma::uword r = 0; r < k; ++r) {
              if (!(vi * (G(r, r) + ezz[r]) > 1e-12 * vi * ref[r])) {
                qf[r] = 0.0;  // no weight on this coordinate (t_r = 0: kept)
                continue;
              }
              const double* ezr = ezs.data() + r * ne;
              double ey = 0.0;
              for (std::size_t s = 0; s < ne; ++s) ey += ezr[s] * y[s];
              qf[r] = std::max(vi * (gf[r] + ey), 0.0);
            }
            for (arma::uword r = 0; r < k; ++r) a[r] *= std::max(t[r], eps_) / (qf[r] + eps_);
          }
        }
        if (value) {
          // a'B_i a - 2 t'a = v_n(i) (a'G a + sum e_c y_c^2) - 2 t'a
          if (!fresh) model();
          double quad = 0.0, lin = 0.0;
          for (arma::uword r = 0; r < k; ++r) { quad += a[r] * gf[r]; lin += t[r] * a[r]; }
          for (std::size_t s = 0; s < ne; ++s) quad += es[s] * y[s] * y[s];
          part[i] = vi * quad - 2.0 * lin;
        }
      }
    });
    double out = 0.0;
    for (double v : part) out += v;
    return out;
  }

  // d hadamard_{m != n} A_m' diag(v_m) A_m
  arma::mat common_gram(const AspectModel& M, std::size_t n) const { return w_.gram(M.F, n); }

  // frobenius_mode() with each row's B_i formed (O(|E_i| k^2) per row)
  double frobenius_mode_gram(const SparseTensor& X, AspectModel& M, std::size_t n, bool update, bool value,
                             int threads) const {
    const std::size_t N = M.order();
    const arma::uword k = M.rank(), dn = X.dims[n];
    std::vector<const arma::mat*> Fp(N);
    for (std::size_t m = 0; m < N; ++m) Fp[m] = &M.F[m];
    arma::mat T;
    mttkrp(X, Fp, n, T, threads, nullptr);
    const arma::mat G = common_gram(M, n);
    const CellGroups& eg = w_.groups[n];
    arma::mat& A = M.F[n];
    std::vector<double> part(dn, 0.0);
    const double work = static_cast<double>(dn) * k * k + static_cast<double>(w_.cells()) * k * k;
    const int Tn = effective_threads(threads, static_cast<std::size_t>(work / 4));
    nmf::dense::parallel_blocks(dn, Tn, 16, [&](std::size_t b, std::size_t e) {
      arma::mat Q(k, k);
      std::vector<double> z(k), ref(k), qf(k);
      for (std::size_t i = b; i < e; ++i) {
        const double vi = w_.v[n][i];
        Q = G;
        for (arma::uword r = 0; r < k; ++r) ref[r] = std::fabs(G(r, r));
        for (std::size_t s = eg.ptr[i]; s < eg.ptr[i + 1]; ++s) {
          const std::size_t c = eg.pos[s];
          double u;
          deviation(M, n, c, z.data(), u);
          const double f = w_.delta[c] * u;
          for (arma::uword bb = 0; bb < k; ++bb) {
            const double fb = f * z[bb];
            double* q = Q.colptr(bb);
            for (arma::uword a = 0; a < k; ++a) q[a] += fb * z[a];
            ref[bb] += std::fabs(fb * z[bb]);
          }
        }
        Q *= vi;
        double* a = A.colptr(i);
        const double* t = T.colptr(i);
        if (update) {
          if (method_ == CPWeightedMethod::HALS) {
            for (arma::uword r = 0; r < k; ++r) {
              const double den = Q(r, r);
              if (!(den > 1e-12 * vi * ref[r])) continue;  // no weight on this coordinate
              double s = t[r];
              const double* q = Q.colptr(r);
              for (arma::uword j = 0; j < k; ++j) if (j != r) s -= q[j] * a[j];
              a[r] = std::max(0.0, s / den);
            }
          } else {
            for (arma::uword r = 0; r < k; ++r) {
              if (!(Q(r, r) > 1e-12 * vi * ref[r])) {
                qf[r] = 0.0;  // no weight on this coordinate (t_r = 0: kept)
                continue;
              }
              double s = 0.0;
              for (arma::uword j = 0; j < k; ++j) s += Q(r, j) * a[j];
              qf[r] = std::max(s, 0.0);
            }
            for (arma::uword r = 0; r < k; ++r) a[r] *= std::max(t[r], eps_) / (qf[r] + eps_);
          }
        }
        if (value) {
          double v = 0.0;
          for (arma::uword r = 0; r < k; ++r) {
            double s = 0.0;
            for (arma::uword j = 0; j < k; ++j) s += Q(r, j) * a[j];
            v += a[r] * (s - 2.0 * t[r]);
          }
          part[i] = v;
        }
      }
    });
    double out = 0.0;
    for (double v : part) out += v;
    return out;
  }

  // KL, mode n: the rows' linear terms D (k x d_n), with coefficients below
  // 1e-12 of their sums set to 0
  arma::mat linear_terms(const AspectModel& M, std::size_t n, int threads) const {
    return w_.times(M.F, n, threads, true);
  }

  // linear_terms()'s parts, for the rule on pieces (cp_weighted_pieces.h):
  // CPWeights's
  static arma::vec combine_linear(const std::vector<arma::vec>& fv, std::size_t n, double d) {
    return CPWeights::combine(fv, n, d);
  }
  void add_deviations(const AspectModel& M, std::size_t n, arma::mat& D, arma::mat& ref, int threads) const {
    w_.add_deviations(M.F, n, D, ref, threads);
  }
  static void finish_linear(const arma::vec& vn, arma::mat& D, const arma::mat& ref) {
    CPWeights::finish(vn, D, ref, true);
  }

  // KL multiplicative update, mode n: num(:, i) = sum_{c: i_n = i} (x~_c /
  // m_c) z_c, in one pass over the non-zeros (m_c = a_i'z_c)
  static void kl_numerators(const SparseTensor& X, const AspectModel& M, std::size_t n, arma::mat& num,
                            int threads) {
    const std::size_t N = M.order();
    const arma::uword k = M.rank(), dn = X.dims[n];
    const arma::mat& A = M.F[n];
    std::vector<arma::mat> target(1);
    target[0].zeros(k, dn);
    const int Tn = effective_threads(threads, X.nnz());
    ThreadAccumulators acc(target, Tn);
    parallel_chunks(X.nnz(), Tn, [&](int tid, std::size_t b, std::size_t e) {
      arma::mat& Nm = acc.get(tid, 0);
      std::vector<double> z(k);
      X.cells(b, e, [&](std::size_t s, const index_t* ix) {
        for (arma::uword r = 0; r < k; ++r) z[r] = 1.0;
        for (std::size_t m = 0; m < N; ++m) {
          if (m == n) continue;
          const double* f = M.F[m].colptr(ix[m]);
          for (arma::uword r = 0; r < k; ++r) z[r] *= f[r];
        }
        const double* a = A.colptr(ix[n]);
        double mv = 0.0;
        for (arma::uword r = 0; r < k; ++r) mv += a[r] * z[r];
        const double q = X.value(s) / std::max(mv, kTiny);
        double* o = Nm.colptr(ix[n]);
        for (arma::uword r = 0; r < k; ++r) o[r] += q * z[r];
      });
    });
    acc.reduce();
    num = std::move(target[0]);
  }

  // the multiplicative update of A (k x d_n) from its numerators and linear terms
  static void kl_mu_apply(arma::mat& A, const arma::mat& num, const arma::mat& D) {
    for (arma::uword i = 0; i < A.n_cols; ++i)
      for (arma::uword r = 0; r < A.n_rows; ++r)
        if (D(r, i) > 0.0) A(r, i) *= num(r, i) / D(r, i);
  }

  // KL coordinate descent, mode n: the rows of A = M.F[n] solved with the
  // linear terms D (one sweep of one Newton step per coordinate,
  // nmf::KLCD::solve()), each from its cells of X~ (grouped by prepare())
  void cd_rows(const SparseTensor& X, AspectModel& M, std::size_t n, const arma::mat& D, int threads) const {
    if (xg_.size() != X.order()) throw std::logic_error("weighted CP: the cells are not grouped");
    const std::size_t N = M.order();
    const arma::uword k = M.rank(), dn = X.dims[n];
    arma::mat& A = M.F[n];
    const CellGroups& xg = xg_[n];
    const index_t* ix0 = X.indices();
    const int Tn = effective_threads(threads, X.nnz() * k / 8 + dn);
    nmf::dense::parallel_blocks(dn, Tn, 4, [&](std::size_t b, std::size_t e) {
      std::vector<double> gb(std::max<std::size_t>(xg.maxnz, 1) * k), xs(std::max<std::size_t>(xg.maxnz, 1)),
          v(std::max<std::size_t>(xg.maxnz, 1));
      for (std::size_t i = b; i < e; ++i) {
        const std::size_t p0 = xg.ptr[i], nz = xg.ptr[i + 1] - p0;
        for (std::size_t t = 0; t < nz; ++t) {
          const std::size_t c = xg.pos[p0 + t];
          const index_t* ix = ix0 + c * N;
          xs[t] = X.value(c);
          for (arma::uword r = 0; r < k; ++r) gb[t + r * nz] = 1.0;
          for (std::size_t m = 0; m < N; ++m) {
            if (m == n) continue;
            const double* f = M.F[m].colptr(ix[m]);
            for (arma::uword r = 0; r < k; ++r) gb[t + r * nz] *= f[r];
          }
        }
        nmf::KLCD::solve(gb.data(), nz, nz, xs.data(), A.colptr(i), k, D.colptr(i), 0.0, v.data(), 1, 1);
      }
    });
  }

  // sum x~ log m over the non-zeros of X~
  static double xlogv(const SparseTensor& X, const AspectModel& M, int threads) {
    arma::vec mv;
    model_at_nonzeros(X, M, mv, threads);
    double s = 0.0;
    for (std::size_t t = 0; t < X.nnz(); ++t) s += X.value(t) * std::log(std::max(mv[t], kTiny));
    return s;
  }

  // (the pieces' form of the KL multiplicative updates, cp_weighted_pieces.h)
  friend class CPWeightedPiece;
  friend class CPWeightedPiecesMU;
  friend class CPWeightedPiecesFrobenius;

  bool kl_;
  CPWeightedMethod method_;
  const CPWeights& w_;
  double eps_;
  bool gram_;
  bool prepared_ = false;
  std::vector<CellGroups> xg_;  // X~'s non-zeros by mode (coordinate descent)
};

}  // namespace aspectr

#endif
