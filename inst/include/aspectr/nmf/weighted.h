// aspectr/nmf/weighted.h — NMF under a weighted loss: missing cells, masks
// and weights per cell, row and column.
//
// The loss sums over the cells with weights omega_ij >= 0 (0: a missing or
// masked cell),
//   Frobenius  1/2 sum omega (x - v)^2,
//   KL         sum omega (x log(x / v) - x + v),      v = (WH)_ij,
// with omega_ij = r_i c_j (d + delta_ij): row and column weights, a base
// weight d (1: every cell counts; 0: only listed cells do) and deviations
// delta from it on a sparse set E of cells (a missing cell of d = 1 has
// delta = -1; an observed cell of d = 0 its weight). Everything the updates
// need comes from two parts:
//  * the data weighted, X~ = omega o X, through the unweighted kernels
//    (products X~ H', W'X~; ratios x~ / v at its non-zeros): no pass over
//    the unobserved cells, O(nnz k);
//  * the weights' part of the Gram matrices (Frobenius) and of the linear
//    terms (KL), per row i of W:
//      B_i = r_i (d H diag(c) H' + sum_{j in E_i} delta_ij c_j h_j h_j'),
//      D_i = r_i (d H c        + sum_{j in E_i} delta_ij c_j h_j),
//    the common part once per update and O(|E| k^2) (O(|E| k)) on top;
//    and the same for the columns of H with the roles swapped.
// Each row of W (column of H) then solves its own problem
//   Frobenius: min 1/2 w'B_i w - a_i'w (+ penalties), a_i = (X~ H')_i,
//   KL:        min D_i'w - sum_j x~_ij log v_ij (+ penalties),
// by the rules of the unweighted fit with its own B_i or D_i: one HALS
// sweep of exact coordinate updates, exact NNLS (ANLS), the multiplicative
// update (Lee and Seung's, whose weighted form is monotone with B_i w_i in
// the denominator), or KL coordinate descent / multiplicative updates
// (KLCD::solve() and KLMU's majorizer with D_i in place of the column sums).
// The objective comes from the same sums:
//   Frobenius: 1/2 (sum omega x^2 - 2 sum a_i'w_i + sum w_i'B_i w_i),
//   KL:        sum x~ (log x - 1) - sum x~ log v + sum D_i'w_i.
// With all weights 1 these are the unweighted problems.
//
// The fit is one piece holding every row (WeightedPiece: its operations
// "wrow", "wcol" and "weval"); the rule (WeightedNMF) asks for them through
// a Pieces, as the unweighted rules of piece.h do.
#ifndef ASPECTR_NMF_WEIGHTED_H
#define ASPECTR_NMF_WEIGHTED_H

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>
#include <vector>
#include "../pieces.h"
#include "data.h"
#include "kl_cd.h"
#include "piece.h"
#include "rules.h"

namespace aspectr {
namespace nmf {

enum class WeightedMethod { HALS = 0, ANLS = 1, MU = 2, CD = 3 };

// The weights of a piece of m rows (of n columns): r (m), c (n), the base d
// and E by rows (rp: m + 1 offsets into rj/rv) and by columns (cp, ci, cv),
// indices 0-based, deviations non-zero. wx2 = sum omega x^2, klc = sum x~
// (log x - 1) over x > 0, total = sum x~.
struct CellWeights {
  double d = 1.0;
  arma::vec r, c;
  std::vector<arma::uword> rp, rj, cp, ci;
  std::vector<double> rv, cv;
  double wx2 = 0.0, klc = 0.0, total = 0.0;

  // from the cells (i, j, delta) of E, in any order
  void set_cells(arma::uword m, arma::uword n, const std::vector<arma::uword>& I,
                 const std::vector<arma::uword>& J, const std::vector<double>& V) {
    if (I.size() != J.size() || I.size() != V.size()) throw std::invalid_argument("weights: cells of unequal lengths");
    compress(m, I, J, V, rp, rj, rv);
    compress(n, J, I, V, cp, ci, cv);
  }

 private:
  // by the first index, the second ascending within it (a counting sort,
  // stable: cells of the same first index keep the order of the second)
  static void compress(arma::uword d, const std::vector<arma::uword>& A, const std::vector<arma::uword>& B,
                       const std::vector<double>& V, std::vector<arma::uword>& p, std::vector<arma::uword>& idx,
                       std::vector<double>& val) {
    const std::size_t n = A.size();
    std::vector<std::size_t> order(n);
    for (std::size_t s = 0; s < n; ++s) order[s] = s;
    std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return B[a] < B[b]; });
    p.assign(d + 1, 0);
    for (std::size_t s = 0; s < n; ++s) {
      if (A[s] >= d) throw std::invalid_argument("weights: a cell outside the matrix");
      ++p[A[s] + 1];
    }
    for (arma::uword a = 0; a < d; ++a) p[a + 1] += p[a];
    idx.resize(n);
    val.resize(n);
    std::vector<arma::uword> next(p.begin(), p.end() - 1);
    for (std::size_t t = 0; t < n; ++t) {
      const std::size_t s = order[t];
      idx[next[A[s]]] = B[s];
      val[next[A[s]]] = V[s];
      ++next[A[s]];
    }
  }
};

// d + delta_ij of cell (i, j) (E's row i searched)
inline double cell_factor(const CellWeights& w, arma::uword i, arma::uword j) {
  const auto b = w.rj.begin() + w.rp[i], e = w.rj.begin() + w.rp[i + 1];
  const auto it = std::lower_bound(b, e, j);
  return it != e && *it == j ? w.d + w.rv[it - w.rj.begin()] : w.d;
}

// The weighted values r_i c_j (d + delta_ij) x_ij of the cells (row[t],
// col[t], val[t]) of a piece (0-based; its rows those of w.r)
inline std::vector<double> weighted_values(const CellWeights& w, const int* row, const int* col, const double* val,
                                           std::size_t nnz) {
  std::vector<double> out(nnz);
  const arma::uword m = w.r.n_elem, n = w.c.n_elem;
  for (std::size_t t = 0; t < nnz; ++t) {
    if (row[t] < 0 || col[t] < 0 || static_cast<arma::uword>(row[t]) >= m || static_cast<arma::uword>(col[t]) >= n)
      throw std::invalid_argument("weights: a cell outside the piece");
    const arma::uword i = row[t], j = col[t];
    out[t] = val[t] * cell_factor(w, i, j) * w.r[i] * w.c[j];
  }
  return out;
}

// A column's linear term of the KL objective, d s + sum of the deviating
// cells' parts (s = the other factor's weighted sum, d s >= 0), as it is
// added: the deviations are at least -d times their cells' parts, so the
// term is never below 0, and one that cancels to within rounding of d s
// (a factor whose entries at the column's observed cells are all 0) is 0
// exactly. Without this, sums in another order (a matrix in memory and its
// pieces) left +-1e-17 there, whose sign decides the coordinate step when
// no cell depends on it (it keeps its value at 0, goes to 0 above):
// fits of one call differed by backend.
inline double linear_term(double d, double s, double deviations) {
  const double v = d * s + deviations;
  return std::fabs(v) <= 1e-10 * std::fabs(d * s) ? 0.0 : v;
}

// One side of the problem: the factor F (k x p) whose columns are solved,
// given the fixed factor G (k x q); own weights (p), other weights (q), the
// deviations by F's index (p + 1 offsets into idx/val, idx indexing G).
struct WeightedSide {
  const arma::vec& own;
  const arma::vec& other;
  const std::vector<arma::uword>& p;
  const std::vector<arma::uword>& idx;
  const std::vector<double>& val;
  double d;

  // G diag(other) G' (k x k) and G other (k)
  void common(const arma::mat& G, arma::mat& Gc, arma::vec& gc, int threads) const {
    arma::mat Gs = G;
    for (arma::uword j = 0; j < G.n_cols; ++j) Gs.col(j) *= std::sqrt(other[j]);
    Gc = gram(Gs, threads);
    gc = G * other;
  }
  // column o's Gram matrix: own_o (d Gc + sum delta other_j g_j g_j')
  void gram_of(arma::uword o, const arma::mat& G, const arma::mat& Gc, arma::mat& Q) const {
    const arma::uword k = G.n_rows;
    Q = Gc * d;
    for (arma::uword s = p[o]; s < p[o + 1]; ++s) {
      const double f = val[s] * other[idx[s]];
      const double* g = G.colptr(idx[s]);
      for (arma::uword b = 0; b < k; ++b) {
        const double fb = f * g[b];
        double* q = Q.colptr(b);
        for (arma::uword a = 0; a < k; ++a) q[a] += fb * g[a];
      }
    }
    Q *= own[o];
  }
  // column o's linear term: own_o (d gc + sum delta other_j g_j)
  // (linear_term(): the deviations added apart, then to d gc)
  void linear_of(arma::uword o, const arma::mat& G, const arma::vec& gc, double* out) const {
    const arma::uword k = G.n_rows;
    for (arma::uword a = 0; a < k; ++a) out[a] = 0.0;
    for (arma::uword s = p[o]; s < p[o + 1]; ++s) {
      const double f = val[s] * other[idx[s]];
      const double* g = G.colptr(idx[s]);
      for (arma::uword a = 0; a < k; ++a) out[a] += f * g[a];
    }
    for (arma::uword a = 0; a < k; ++a) out[a] = own[o] * linear_term(d, gc[a], out[a]);
  }
  // every column's linear term (k x p)
  arma::mat linear(const arma::mat& G, arma::uword pcols, int threads) const {
    const arma::vec gc = G * other;
    arma::mat L(G.n_rows, pcols);
    const int T = effective_threads(threads, pcols * G.n_rows * 4);
    dense::parallel_blocks(pcols, T, 64, [&](std::size_t b, std::size_t e) {
      for (std::size_t o = b; o < e; ++o) linear_of(o, G, gc, L.colptr(o));
    });
    return L;
  }

  // Frobenius: every column f_o of F given A (k x p: the data's part) by
  // `method` (HALS sweep, ANLS, MU) with its own Gram (update = false: F as
  // it is); returns the objective's part  sum_o (-a_o'f_o + 1/2 f_o'Q_o f_o)
  // after the update.
  double frobenius(WeightedMethod method, arma::mat& F, const arma::mat& A, const arma::mat& G, double l1,
                   double l2, double eps, int threads, bool update = true) const {
    // Q_o f = own_o (d Gc f + sum_s e_s u_s g_s) with u_s = g_s'f the model
    // at the deviating cells s of column o (e_s = delta_s other_j): HALS and
    // MU keep u (and Gc f) up to date instead of forming Q_o, O(k^2 +
    // |E_o| k) per column; ANLS needs Q_o itself (O(|E_o| k^2)).
    const arma::uword k = F.n_rows, pc = F.n_cols;
    arma::mat Gc;
    arma::vec gc;
    common(G, Gc, gc, threads);
    std::vector<double> part(pc, 0.0);
    const bool gram = update && method == WeightedMethod::ANLS;
    const double work = static_cast<double>(pc) * k * k + static_cast<double>(idx.size()) * k * (gram ? k : 1);
    const int T = effective_threads(threads, static_cast<std::size_t>(work / 4));
    dense::parallel_blocks(pc, T, 16, [&](std::size_t b, std::size_t e) {
      arma::mat Q(gram ? k : 0, gram ? k : 0);
      std::vector<double> c(k), g(k), gf(k), u, qf(k), gs, es;
      BppWork w(k);
      for (std::size_t o = b; o < e; ++o) {
        double* f = F.colptr(o);
        const double* a = A.colptr(o);
        const arma::uword s0 = p[o], s1 = p[o + 1], ne = s1 - s0;
        const double own_o = own[o];
        // the fixed factor at the column's deviating cells, gathered once
        // (gs[r * ne + s] = G(r, j_s): each coordinate's values contiguous),
        // and their coefficients es[s] = delta_s other_j
        gs.resize(ne * k);
        es.resize(ne);
        for (arma::uword s = 0; s < ne; ++s) {
          const double* gj = G.colptr(idx[s0 + s]);
          for (arma::uword r = 0; r < k; ++r) gs[r * ne + s] = gj[r];
          es[s] = val[s0 + s] * other[idx[s0 + s]];
        }
        // Gc f and u at the current f
        auto model = [&]() {
          for (arma::uword r = 0; r < k; ++r) {
            double t = 0.0;
            for (arma::uword q = 0; q < k; ++q) t += Gc(r, q) * f[q];
            gf[r] = t;
          }
          u.assign(ne, 0.0);
          for (arma::uword q = 0; q < k; ++q) {
            const double fq = f[q];
            const double* gq = gs.data() + q * ne;
            for (arma::uword s = 0; s < ne; ++s) u[s] += gq[s] * fq;
          }
        };
        bool fresh = false;  // Gc f and u are those of f
        if (update) {
          switch (method) {
            case WeightedMethod::HALS: {
              model();
              fresh = true;
              for (arma::uword r = 0; r < k; ++r) {
                const double* gr = gs.data() + r * ne;
                double eu = 0.0, egg = 0.0;
                for (arma::uword s = 0; s < ne; ++s) {
                  const double eg = es[s] * gr[s];
                  eu += eg * u[s];
                  egg += eg * gr[s];
                }
                const double qr = own_o * (d * gf[r] + eu), qrr = own_o * (d * Gc(r, r) + egg);
                const double num = a[r] - l1 - (qr - qrr * f[r]);
                const double den = qrr + l2;
                const double nw = den > 0.0 ? std::max(0.0, num / den) : (num < 0.0 ? 0.0 : f[r]);
                const double dlt = nw - f[r];
                if (dlt != 0.0) {
                  f[r] = nw;
                  for (arma::uword q = 0; q < k; ++q) gf[q] += dlt * Gc(q, r);
                  for (arma::uword s = 0; s < ne; ++s) u[s] += dlt * gr[s];
                }
              }
              break;
            }
            case WeightedMethod::ANLS: {
              gram_of(o, G, Gc, Q);
              Q.diag() += l2;
              for (arma::uword r = 0; r < k; ++r) c[r] = a[r] - l1;
              nnls_exact(Q, c.data(), f, k, w, g.data());
              break;
            }
            case WeightedMethod::MU: {
              model();
              for (arma::uword r = 0; r < k; ++r) {
                const double* gr = gs.data() + r * ne;
                double t = 0.0;
                for (arma::uword s = 0; s < ne; ++s) t += es[s] * u[s] * gr[s];
                qf[r] = d * gf[r] + t;
              }
              for (arma::uword r = 0; r < k; ++r)
                f[r] *= std::max(a[r], eps) / (own_o * qf[r] + l1 + l2 * f[r] + eps);
              break;
            }
            default:
              throw std::logic_error("weighted Frobenius: unknown method");
          }
        }
        // -a'f + 1/2 f'Q f = -a'f + 1/2 own_o (d f'Gc f + sum_s e_s u_s^2)
        if (!fresh) model();
        double quad = 0.0, lin = 0.0;
        for (arma::uword r = 0; r < k; ++r) { quad += d * f[r] * gf[r]; lin += a[r] * f[r]; }
        for (arma::uword s = 0; s < ne; ++s) quad += es[s] * u[s] * u[s];
        part[o] = 0.5 * own_o * quad - lin;
      }
    });
    double out = 0.0;
    for (double v : part) out += v;
    return out;
  }

  // Frobenius, the columns of F (k x p) given A (k x p) and explicit Gram
  // matrices: column o's is own_o (d Gc + sum of the blocks of Bg (k^2 x t)
  // whose column in bcol is o): the update of frobenius() with Q_o formed
  // (the fit of several pieces, whose deviating cells of a column are
  // spread over them).
  static void frobenius_gram(WeightedMethod method, arma::mat& F, const arma::mat& A, const arma::mat& Gc,
                             const arma::vec& own, double d, const arma::mat& bcol, const arma::mat& Bg, double l1,
                             double l2, double eps, int threads) {
    const arma::uword k = F.n_rows, pc = F.n_cols;
    // the blocks by column, in their order
    std::vector<arma::uword> bp(pc + 1, 0), bi(bcol.n_elem);
    for (arma::uword t = 0; t < bcol.n_elem; ++t) {
      const double o = bcol[t];
      if (!(o >= 0.0) || o >= static_cast<double>(pc)) throw std::logic_error("a Gram block of no column");
      ++bp[static_cast<arma::uword>(o) + 1];
    }
    for (arma::uword o = 0; o < pc; ++o) bp[o + 1] += bp[o];
    {
      std::vector<arma::uword> next(bp.begin(), bp.end() - 1);
      for (arma::uword t = 0; t < bcol.n_elem; ++t) bi[next[static_cast<arma::uword>(bcol[t])]++] = t;
    }
    const int T = effective_threads(threads, static_cast<std::size_t>(pc) * k * k + bcol.n_elem * k * k);
    dense::parallel_blocks(pc, T, 16, [&](std::size_t b, std::size_t e) {
      arma::mat Q(k, k);
      std::vector<double> c(k), g(k), qf(k);
      BppWork w(k);
      for (std::size_t o = b; o < e; ++o) {
        Q = Gc * d;
        for (arma::uword s = bp[o]; s < bp[o + 1]; ++s) {
          const double* q = Bg.colptr(bi[s]);
          for (arma::uword a = 0; a < k * k; ++a) Q[a] += q[a];
        }
        Q *= own[o];
        double* f = F.colptr(o);
        const double* a = A.colptr(o);
        for (arma::uword r = 0; r < k; ++r) {
          double t = 0.0;
          for (arma::uword q = 0; q < k; ++q) t += Q(r, q) * f[q];
          qf[r] = t;
        }
        switch (method) {
          case WeightedMethod::HALS:
            for (arma::uword r = 0; r < k; ++r) {
              const double num = a[r] - l1 - (qf[r] - Q(r, r) * f[r]);
              const double den = Q(r, r) + l2;
              const double nw = den > 0.0 ? std::max(0.0, num / den) : (num < 0.0 ? 0.0 : f[r]);
              const double dlt = nw - f[r];
              if (dlt != 0.0) {
                f[r] = nw;
                for (arma::uword q = 0; q < k; ++q) qf[q] += dlt * Q(q, r);
              }
            }
            break;
          case WeightedMethod::ANLS:
            Q.diag() += l2;
            for (arma::uword r = 0; r < k; ++r) c[r] = a[r] - l1;
            nnls_exact(Q, c.data(), f, k, w, g.data());
            break;
          case WeightedMethod::MU:
            for (arma::uword r = 0; r < k; ++r) f[r] *= std::max(a[r], eps) / (qf[r] + l1 + l2 * f[r] + eps);
            break;
          default:
            throw std::logic_error("weighted Frobenius: unknown method");
        }
      }
    });
  }
};

// The one piece of a weighted fit: the weighted data X~ (m x n), the
// weights and W (a view of the holder's k x m memory).
//   "wcol" H, loss (0 Frobenius, 1 KL), method, l1, l2, eps
//                  -> H: every column solved given W (the piece holds every row)
//   "wrow" H, loss, method, l1, l2, eps
//                  -> W given H; then the objective's data part of the new
//                     model: "part" (Frobenius: sum -a'w + 1/2 w'Bw; KL:
//                     sum D'w - x~ log v), "V" (KL: sum D'w), s1, s2
//   "weval" H, loss -> part, V, s1, s2 of the model as it is
//   "gather"       -> @Wt
class WeightedPiece {
 public:
  // X: the weighted data's cells (MemoryCells, or FileCells of a .shard file
  // of them); slots (for "kcd_pass") only for a piece of several
  WeightedPiece(Cells& X, const CellWeights& w, double* Wt, arma::uword k, arma::uword m, Slots* slots = nullptr)
      : X_(X), w_(w), Wt_(Wt, k, m, false, true), slots_(slots) {}
  arma::mat& Wt() { return Wt_; }

  Stats run(const Request& r, int threads) {
    Stats out;
    const bool kl = r.num("loss", 0.0) != 0.0;
    const WeightedMethod method = static_cast<WeightedMethod>(static_cast<int>(r.num("method", 0.0)));
    const double l1 = r.num("l1", 0.0), l2 = r.num("l2", 0.0), eps = r.num("eps", 0.0);
    const std::string& op = r.op;
    if (op == "wcol") {
      arma::mat H = r.mat("H");
      const WeightedSide side{w_.c, w_.r, w_.cp, w_.ci, w_.cv, w_.d};
      if (!kl) {
        arma::mat C;
        X_.WtX(Wt_, C, threads);
        side.frobenius(method, H, C, Wt_, l1, l2, eps, threads);
      } else {
        arma::mat Dl = side.linear(Wt_, H.n_cols, threads);
        if (method == WeightedMethod::CD) {
          // (whole columns: the one piece of a matrix in memory)
          auto* mem = dynamic_cast<MemoryCells*>(&X_);
          if (!mem) throw std::logic_error("whole columns of weighted cells not in memory");
          const arma::mat cper = Dl + l1;
          const arma::vec none(H.n_rows, arma::fill::zeros);
          KLCD::solve_side(mem->data(), false, Wt_, H, none, l2, 1, 1, nullptr, threads, &cper);
        } else {
          kl_update(method, X_, false, Wt_, H, Dl, l1, l2, eps, nullptr, threads);
        }
      }
      out.set("H", std::move(H));
    } else if (op == "wrow" || op == "weval") {
      const arma::mat& H = r.mat("H");
      const WeightedSide side{w_.r, w_.c, w_.rp, w_.rj, w_.rv, w_.d};
      const bool update = op == "wrow";
      if (!kl) {
        arma::mat A;
        X_.XHt(H, A, threads);
        out.set("part", side.frobenius(method, Wt_, A, H, l1, l2, eps, threads, update));
      } else {
        arma::mat Dl = side.linear(H, Wt_.n_cols, threads);
        double xlogv = 0.0;
        if (update) kl_update(method, X_, true, H, Wt_, Dl, l1, l2, eps, &xlogv, threads);
        else X_.kl_rows(Wt_, H, nullptr, &xlogv, threads);
        const double V = arma::accu(Dl % Wt_);
        out.set("V", V);
        out.set("part", V - xlogv);
        out.set("xlogv", xlogv);
      }
      out.set("s1", arma::accu(Wt_));
      out.set("s2", arma::accu(arma::square(Wt_)));
    } else if (op == "wcstat") {
      // the piece's part of the columns' problems (a fit of several pieces):
      // Frobenius: C = W_s'X~_s, G = W_s' diag(r_s) W_s, and for each column
      // o with deviating cells here (@bcol) the block sum delta r_i w_i w_i'
      // (@bgram, k^2); KL: wr = W_s' r_s and Ddev (k x n) = sum delta r_i w_i
      // per column, and with H (multiplicative updates) H's numerators num
      const WeightedSide side{w_.c, w_.r, w_.cp, w_.ci, w_.cv, w_.d};
      const arma::uword k = Wt_.n_rows, n = w_.c.n_elem;
      if (!kl) {
        arma::mat C;
        X_.WtX(Wt_, C, threads);
        out.set("C", std::move(C));
        arma::mat Gc;
        arma::vec gc;
        side.common(Wt_, Gc, gc, threads);
        out.set("G", std::move(Gc));
        arma::uword t = 0;
        for (arma::uword o = 0; o < n; ++o) t += w_.cp[o + 1] > w_.cp[o] ? 1 : 0;
        arma::mat bcol(1, t), Bg(k * k, t, arma::fill::zeros);
        t = 0;
        for (arma::uword o = 0; o < n; ++o) {
          if (w_.cp[o + 1] == w_.cp[o]) continue;
          bcol[t] = static_cast<double>(o);
          double* q = Bg.colptr(t);
          for (arma::uword s = w_.cp[o]; s < w_.cp[o + 1]; ++s) {
            const double f = w_.cv[s] * w_.r[w_.ci[s]];
            const double* g = Wt_.colptr(w_.ci[s]);
            for (arma::uword b = 0; b < k; ++b) {
              const double fb = f * g[b];
              for (arma::uword a = 0; a < k; ++a) q[b * k + a] += fb * g[a];
            }
          }
          ++t;
        }
        out.set("@bcol", std::move(bcol));
        out.set("@bgram", std::move(Bg));
      } else {
        out.set("wr", arma::mat(Wt_ * w_.r));
        arma::mat Dd(k, n, arma::fill::zeros);
        for (arma::uword o = 0; o < n; ++o) {
          double* q = Dd.colptr(o);
          for (arma::uword s = w_.cp[o]; s < w_.cp[o + 1]; ++s) {
            const double f = w_.cv[s] * w_.r[w_.ci[s]];
            const double* g = Wt_.colptr(w_.ci[s]);
            for (arma::uword a = 0; a < k; ++a) q[a] += f * g[a];
          }
        }
        out.set("Ddev", std::move(Dd));
        if (r.has("H")) {
          arma::mat num;
          X_.kl_cols(Wt_, r.mat("H"), num, threads);
          out.set("num", std::move(num));
        }
      }
    } else if (op == "kcd_pass") {
      if (!slots_) throw std::logic_error("a pass of KL coordinate descent on a piece without slots");
      Piece piece(X_, Wt_.memptr(), Wt_.n_rows, Wt_.n_cols, *slots_);
      return piece.run(r, threads);
    } else if (op == "gather") {
      out.set("@Wt", arma::mat(Wt_));
    } else if (op == "scale") {
      // (nothing to rescale: the weighted rules keep W as it is)
    } else {
      throw std::logic_error("unknown weighted piece operation '" + op + "'");
    }
    return out;
  }

  // KL: every column of Out (k x p) given Ft, with linear terms Dl (k x p,
  // without l1), by coordinate descent (by_row only: the rows of W) or the
  // multiplicative update; xlogv (by_row only) gets sum x~ log v of the
  // result.
  static void kl_update(WeightedMethod method, Cells& X, bool by_row, const arma::mat& Ft, arma::mat& Out,
                        const arma::mat& Dl, double l1, double l2, double eps, double* xlogv, int threads) {
    if (method == WeightedMethod::CD) {
      if (!by_row) throw std::logic_error("weighted KL coordinate descent of columns by rows");
      const arma::mat cper = Dl + l1;
      const double v = X.kcd_rows(Out, Ft, l1, l2, threads, &cper);
      if (xlogv) *xlogv += v;
      return;
    }
    if (method != WeightedMethod::MU) throw std::logic_error("weighted KL: unknown method");
    arma::mat num;
    if (by_row) X.kl_rows(Out, Ft, &num, nullptr, threads);
    else X.kl_cols(Ft, Out, num, threads);
    KLMU mu(Penalty(), eps);
    for (arma::uword o = 0; o < Out.n_cols; ++o)
      for (arma::uword r = 0; r < Out.n_rows; ++r)
        Out(r, o) = mu.mm_root(num(r, o) * Out(r, o), Dl(r, o) + l1, l2);
    if (xlogv) {
      double v = 0.0;
      X.kl_rows(Out, Ft, nullptr, &v, threads);
      *xlogv = v;
    }
  }

 private:
  Cells& X_;
  const CellWeights& w_;
  arma::mat Wt_;
  Slots* slots_;
};

// The rule: H given W, then W given H, by `method`; under KL without
// penalties coordinate descent ends with the best scale of the model, as
// the unweighted rule does (H <- a H, a = sum x~ / sum omega v).
class WeightedNMF : public KCDRuleDefaults {
 public:
  WeightedNMF(bool kl, WeightedMethod method, Penalty p, double eps, const CellWeights& w)
      : kl_(kl), method_(method), pen_(p), eps_(eps), w_(w) {}
  static constexpr bool kLagged = false;

  double step(const Pieces& P, PieceModel& M, int threads) {
    if (kl_ && method_ == WeightedMethod::CD) return kcd_iteration(*this, P, M, std::numeric_limits<double>::quiet_NaN());
    if (P.in_place()) {
      M.H = P.map(base("wcol", M.H).with("l1", pen_.l1h).with("l2", pen_.l2h)).take("H");
    } else {
      columns(P, M, threads);
    }
    return value(P.map(base("wrow", M.H).with("l1", pen_.l1w).with("l2", pen_.l2w)), M.H);
  }
  double loss(const Pieces& P, PieceModel& M, int) {
    return value(P.map(base("weval", M.H)), M.H);
  }
  // the objective without penalties (the fit's divergence); mass (KL):
  // sum omega v
  double divergence(const Pieces& P, PieceModel& M, double* mass = nullptr) {
    const Stats s = P.map(base("weval", M.H));
    if (mass) *mass = kl_ ? s.num("V") : 0.0;
    return kl_ ? w_.klc + s.num("part") : 0.5 * w_.wx2 + s.num("part");
  }

  // KL coordinate descent: kcd_iteration()'s rule, as the unweighted one
  // (PieceKLCD): H, the one shared mode, with the linear terms of the
  // weights, then W's rows; without penalties the best scale of the model
  // (H <- a H, a = sum x~ / sum omega v)
  // (the data in one piece: "wcol" solves H, its linear terms its own)
  bool kcd_whole(const Pieces& P, const PieceModel&) const { return P.in_place(); }
  void kcd_enter(const Pieces& P, PieceModel& M, std::size_t, bool whole, KCDMode& m) {
    m.A = &M.H;
    m.l2 = pen_.l2h;
    if (whole) return;
    m.per = true;
    m.cper = linear_terms(P, M);
    m.cper += pen_.l1h;
  }
  void kcd_solve_whole(const Pieces& P, PieceModel& M, std::size_t, KCDMode&) {
    M.H = P.map(base("wcol", M.H).with("l1", pen_.l1h).with("l2", pen_.l2h)).take("H");
  }
  void kcd_rows(const Pieces& P, PieceModel& M) {
    rows_ = P.map(base("wrow", M.H).with("l1", pen_.l1w).with("l2", pen_.l2w));
  }
  double kcd_value(const Pieces&, PieceModel& M) {
    if (!pen_.any()) {
      const double V = rows_.num("V"), T = w_.total;
      if (V > 0.0 && T > 0.0) {
        const double a = T / V;
        M.H *= a;
        return w_.klc - rows_.num("xlogv") - T * std::log(a) + T;
      }
    }
    return value(rows_, M.H);
  }

 private:
  // H given W from the pieces' parts (several pieces: a column's cells and
  // its deviating cells spread over them): the same update as "wcol", with
  // each column's Gram matrix (Frobenius) or linear term (KL) added up
  void columns(const Pieces& P, PieceModel& M, int threads) {
    const arma::uword k = M.H.n_rows, n = M.H.n_cols;
    if (w_.c.n_elem != n) throw std::logic_error("column weights of the wrong size");
    if (!kl_) {
      Request r = base("wcstat", M.H);
      r.in.erase("H");
      Stats s = P.map(r);
      const arma::mat C = s.take("C");
      WeightedSide::frobenius_gram(method_, M.H, C, s.mat("G"), w_.c, w_.d, s.mat("@bcol"), s.mat("@bgram"),
                                   pen_.l1h, pen_.l2h, eps_, threads);
      return;
    }
    if (method_ != WeightedMethod::MU) throw std::logic_error("weighted KL: unknown method");
    arma::mat num;
    const arma::mat D = linear_terms(P, M, &num);
    KLMU mu(Penalty(), eps_);
    for (arma::uword o = 0; o < n; ++o)
      for (arma::uword a = 0; a < k; ++a) M.H(a, o) = mu.mm_root(num(a, o) * M.H(a, o), D(a, o) + pen_.l1h, pen_.l2h);
  }
  // KL's linear terms of H from the pieces' parts (several pieces),
  // D(:, o) = c_o (d W'r + Ddev(:, o)); `num`, when asked for, the
  // multiplicative update's numerators
  arma::mat linear_terms(const Pieces& P, const PieceModel& M, arma::mat* num = nullptr) const {
    const arma::uword k = M.H.n_rows, n = M.H.n_cols;
    if (w_.c.n_elem != n) throw std::logic_error("column weights of the wrong size");
    Request r = base("wcstat", M.H);
    if (num == nullptr) r.in.erase("H");  // (the numerators only for MU)
    Stats s = P.map(r);
    const arma::vec wr = arma::vec(s.mat("wr"));
    arma::mat D = s.take("Ddev");
    if (D.n_rows != k || D.n_cols != n) throw std::logic_error("linear terms of the wrong size");
    for (arma::uword o = 0; o < n; ++o)
      for (arma::uword a = 0; a < k; ++a) D(a, o) = w_.c[o] * linear_term(w_.d, wr[a], D(a, o));
    if (num != nullptr) *num = s.take("num");
    return D;
  }
  Request base(const char* op, const arma::mat& H) const {
    Request r(op);
    r.view("H", H).with("loss", kl_ ? 1.0 : 0.0).with("method", static_cast<double>(method_)).with("eps", eps_);
    return r;
  }
  double value(const Stats& s, const arma::mat& H) const {
    const double data = kl_ ? w_.klc + s.num("part") : std::max(0.5 * w_.wx2 + s.num("part"), 0.0);
    return data + piece_penalty(pen_, s, H);
  }
  bool kl_;
  WeightedMethod method_;
  Penalty pen_;
  double eps_;
  const CellWeights& w_;
  Stats rows_;  // (coordinate descent: the step's rows' statistics)
};

}  // namespace nmf
}  // namespace aspectr

#endif
