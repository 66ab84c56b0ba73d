// aspectr/sym/symtensor.h — super-symmetric non-negative tensors of order L
// on I points, and the kernels of the symmetric model
//     Z = sum_j g_j o g_j o ... o g_j   (L times),  G = [g_1 .. g_k] >= 0.
//
// Storage: each unordered index set {i_1 <= ... <= i_L} is stored once, with
// its value y and the number of distinct ordered tuples it stands for,
// mult = L! / prod_v c_v!  (c_v = how often index v occurs in the set).
// Sums over all cells of the full tensor are sums over stored sets weighted
// by mult.
//
// Symmetric MTTKRP. For cell weights w (w = 0 off the stored sets),
//     M_ij = sum_{i_2..i_L} w_{i i_2 .. i_L} g_{i_2 j} ... g_{i_L j}
// (the full-tensor contraction of every mode but the first). A stored set
// contributes to row v = i_p, for every position p, the amount
// w * (mult / L) * prod_{q != p} g_{i_q j}: the ordered tuples starting with
// v number mult * c_v / L, and the c_v positions holding v add up to that.
//
// Closed forms over all cells (zeros included), with s_j = sum_i g_ij:
//     sum Z            = sum_j s_j^L
//     sum Z^2          = sum_{j,l} ((G'G)_{jl})^L
//     M_ij for w = 1   = s_j^(L-1)
//     M for w = Z      = G ((G'G) ^ (L-1) elementwise)
// Factors use the core layout: Gt is k x I (one contiguous k-vector per
// point).
#ifndef ASPECTR_SYM_SYMTENSOR_H
#define ASPECTR_SYM_SYMTENSOR_H

#include <armadillo>
#include <cmath>
#include <stdexcept>
#include <vector>
#include "../data.h"
#include "../parallel.h"

namespace aspectr {
namespace sym {

struct SymTensor {
  arma::uword n = 0;            // points (the size of every mode)
  arma::uword L = 3;            // order
  std::vector<index_t> idx;     // L * nnz, set s at idx[s*L .. s*L+L-1], ascending
  arma::vec val;                // y of each stored set
  arma::vec mult;               // distinct ordered tuples per set

  std::size_t nnz() const { return val.n_elem; }
  const index_t* at(std::size_t s) const { return idx.data() + s * L; }

  // Fills mult and checks the invariants (throws std::invalid_argument).
  void finalize() {
    if (L < 2) throw std::invalid_argument("a symmetric tensor needs order >= 2");
    if (idx.size() != L * val.n_elem) throw std::invalid_argument("index and value lengths disagree");
    double Lfact = 1.0;
    for (arma::uword l = 2; l <= L; ++l) Lfact *= static_cast<double>(l);
    mult.set_size(val.n_elem);
    for (std::size_t s = 0; s < val.n_elem; ++s) {
      if (!(val[s] >= 0.0) || !std::isfinite(val[s]))
        throw std::invalid_argument("values must be finite and non-negative");
      const index_t* t = at(s);
      double denom = 1.0, run = 1.0;
      for (arma::uword p = 0; p < L; ++p) {
        if (t[p] >= n) throw std::invalid_argument("index out of range");
        if (p > 0) {
          if (t[p] < t[p - 1]) throw std::invalid_argument("indices of a set must be sorted");
          run = (t[p] == t[p - 1]) ? run + 1.0 : 1.0;
          denom *= run;
        }
      }
      mult[s] = Lfact / denom;
    }
  }

  // sum over all cells of f(y) for a function with f(0) = 0
  template <class F>
  double cell_sum(F f) const {
    double v = 0.0;
    for (std::size_t s = 0; s < val.n_elem; ++s) v += mult[s] * f(val[s]);
    return v;
  }
  // number of cells of the full tensor
  double cells() const { return std::pow(static_cast<double>(n), static_cast<double>(L)); }
  // number of distinct unordered sets: C(n + L - 1, L)
  double sets() const {
    double c = 1.0;
    for (arma::uword l = 0; l < L; ++l) c = c * static_cast<double>(n + l) / static_cast<double>(l + 1);
    return c;
  }
  bool complete() const { return static_cast<double>(val.n_elem) == sets(); }
};

// The sym MTTKRP pass. For every stored set s it computes z_s (the model at
// the set) and calls weight(y_s, z_s, m_s, acc), which returns the cell weight
// w_s and may add to the thread's scalar accumulators acc[0..nacc) (it gets
// the set's multiplicity m, to weight sums over all cells). Returns
// M (k x n, core layout) and the reduced scalars.
template <class Weight>
void sym_pass(const SymTensor& Y, const arma::mat& Gt, Weight weight, arma::mat& M,
              std::vector<double>& acc, int threads) {
  const arma::uword k = Gt.n_rows, L = Y.L;
  const std::size_t nnz = Y.nnz(), nacc = acc.size();
  std::vector<arma::mat> targets(1, arma::mat(k, Y.n));
  // threads only pay off for passes of more than ~100k set-components
  const int T = effective_threads(threads, nnz * k / 64);
  ThreadAccumulators bufs(targets, T);
  std::vector<std::vector<double>> part(T, std::vector<double>(nacc, 0.0));
  const double invL = 1.0 / static_cast<double>(L);
  parallel_chunks(nnz, T, [&](int tid, std::size_t b, std::size_t e) {
    arma::mat& out = bufs.get(tid, 0);
    std::vector<double>& a = part[tid];
    std::vector<double> pre((L + 1) * k), suf((L + 1) * k), zj(k);
    for (std::size_t s = b; s < e; ++s) {
      const index_t* t = Y.at(s);
      if (L == 3) {
        const double* __restrict g0 = Gt.colptr(t[0]);
        const double* __restrict g1 = Gt.colptr(t[1]);
        const double* __restrict g2 = Gt.colptr(t[2]);
        double z = 0.0;
        for (arma::uword j = 0; j < k; ++j) z += g0[j] * g1[j] * g2[j];
        const double w = weight(Y.val[s], z, Y.mult[s], a.data()) * Y.mult[s] * invL;
        if (w == 0.0) continue;
        double* __restrict o0 = out.colptr(t[0]);
        double* __restrict o1 = out.colptr(t[1]);
        double* __restrict o2 = out.colptr(t[2]);
        for (arma::uword j = 0; j < k; ++j) {
          o0[j] += w * g1[j] * g2[j];
          o1[j] += w * g0[j] * g2[j];
          o2[j] += w * g0[j] * g1[j];
        }
        continue;
      }
      // general order: prefix and suffix products
      for (arma::uword j = 0; j < k; ++j) { pre[j] = 1.0; suf[L * k + j] = 1.0; }
      for (arma::uword p = 0; p < L; ++p) {
        const double* g = Gt.colptr(t[p]);
        for (arma::uword j = 0; j < k; ++j) pre[(p + 1) * k + j] = pre[p * k + j] * g[j];
      }
      for (arma::uword p = L; p-- > 0;) {
        const double* g = Gt.colptr(t[p]);
        for (arma::uword j = 0; j < k; ++j) suf[p * k + j] = suf[(p + 1) * k + j] * g[j];
      }
      double z = 0.0;
      for (arma::uword j = 0; j < k; ++j) z += pre[L * k + j];
      const double w = weight(Y.val[s], z, Y.mult[s], a.data()) * Y.mult[s] * invL;
      if (w == 0.0) continue;
      for (arma::uword p = 0; p < L; ++p) {
        double* o = out.colptr(t[p]);
        for (arma::uword j = 0; j < k; ++j) o[j] += w * pre[p * k + j] * suf[(p + 1) * k + j];
      }
    }
  });
  bufs.reduce();
  M = std::move(targets[0]);
  for (std::size_t q = 0; q < nacc; ++q) {
    double v = 0.0;
    for (int t = 0; t < T; ++t) v += part[t][q];
    acc[q] = v;
  }
}

// s_j = sum_i g_ij
inline arma::vec col_sums(const arma::mat& Gt) { return arma::sum(Gt, 1); }

// sum over all cells of Z: sum_j s_j^L
inline double model_total(const arma::mat& Gt, arma::uword L) {
  const arma::vec s = col_sums(Gt);
  double v = 0.0;
  for (double x : s) v += std::pow(x, static_cast<double>(L));
  return v;
}

// (G'G)^(p) elementwise power, from Gt (k x n)
inline arma::mat gram_power(const arma::mat& Gt, double p) {
  return arma::pow(Gt * Gt.t(), p);
}

// sum over all cells of Z^2
inline double model_sq_total(const arma::mat& Gt, arma::uword L) {
  return arma::accu(gram_power(Gt, static_cast<double>(L)));
}

}  // namespace sym
}  // namespace aspectr

#endif
