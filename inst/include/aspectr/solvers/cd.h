// aspectr/solvers/cd.h — the KL aspect model (matrices and N-way tensors) by
// cyclic coordinate descent over the modes, one row-wise Newton problem per
// index (the row subproblems of CP-APR, Chi and Kolda 2012, each solved by the
// coordinate Newton sweeps of Hsieh and Dhillon 2011, nmf/kl_cd.h).
//
// Write the model of G = x / sum(x) as the CP form
//   m(i_1, ..., i_N) = sum_r a_n(i_n, r) prod_{m != n} U_m(i_m, r),
// with a_n = lambda_r U_n(:, r) carrying the weights and the other modes'
// columns on the simplex. With those
// fixed, the generalized KL divergence sum g log(g / m) - g + m splits over
// the indices i of mode n into independent problems
//   min_{h >= 0} sum_r h_r - sum_{s: i_n(s) = i} g_s log (G_s h),
// G_s(r) = prod_{m != n} U_m(i_m(s), r) (the linear term's coefficients are
// the products of the other modes' column sums, all 1). Each is the column
// problem of KL-NMF by coordinate descent; its Newton steps never increase
// it. After mode n the new a_n is split back into lambda (column masses) and
// U_n (columns on the simplex), which leaves the model unchanged, and the
// next mode takes the weights.
//
// The reported loss is D(G || P) with P the model divided by its total. It
// never increases: entering mode n the model has total 1 (its best scale
// under the generalized divergence D_g of G, where D_g = D(G || P)); the
// mode's Newton steps do not increase D_g, and for any total T,
// D_g >= D(G || P) (rescaling to the best total only lowers D_g). The
// renormalization then restores total 1. One iteration (every mode once)
// costs about N times (gather + k Newton passes) over the non-zeros.
// Rows are solved independently and in parallel, each by arithmetic on its
// own data only, so results do not depend on the number of threads.
//
// The iteration itself (the modes in turn, the split into weights and
// simplex columns, the value, the guard against a step that rounding made
// worse, a prior's majorizers) is PieceKLCDTensor's (cd_pieces.h),
// written once for every backend; this file holds the data in memory as
// its one piece, which solves each mode's rows at once.
#ifndef ASPECTR_SOLVERS_CD_H
#define ASPECTR_SOLVERS_CD_H

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>
#include "../logsum.h"
#include "../loss.h"
#include "../nmf/kl_cd.h"
#include "cd_pieces.h"
#include "em.h"

namespace aspectr {

// The cells of a tensor grouped by their index in each mode, bound once
// and then read only (so that several models may use them at once,
// multistart.h), with the row solver of every mode: the in-memory side of
// the rule (KLCDMemoryPiece).
class KLCDCells {
 public:
  // counts: the raw data values (G = counts / total), whose whole values make
  // the logs of the trace cheap (see logsum.h); the steps work on G.
  explicit KLCDCells(const arma::vec* counts = nullptr, double total = 0.0, int sweeps = 1, int newton = 1)
      : counts_(counts), total_(total), sweeps_(sweeps), newton_(newton), em_(1.0, counts, total) {}

  // Groupings not in the data's own order keep 32-bit positions of the
  // cells (4 bytes a cell) up to this many cells; above, the cells' other
  // indices and values are copied in that order (12 bytes a cell for a
  // matrix). The same numbers either way. Set before bind().
  void set_position_limit(std::size_t n) {
    pos_limit_ = std::min<std::size_t>(n, std::numeric_limits<std::uint32_t>::max());
  }

  void bind(const SparseTensor& G);

  // The rows of mode n solved (A = lambda_r U_n(:, r), k x d_n, in place),
  // the other modes' factors F[m] (F[n] not read) and the rows' terms t.
  // With `logs`, returns sum g log v over the cells, v the model at the
  // solution (see xlogv()).
  double solve_mode(const SparseTensor& G, const std::vector<const arma::mat*>& F, std::size_t n, arma::mat& A,
                    const KLCDRowTerms& t, bool logs, int threads) const;
  // sum g log v over the cells, v the model with H (k x d_n, weights
  // included) in mode n and F[m] in the others
  double xlogv(const SparseTensor& G, const std::vector<const arma::mat*>& F, std::size_t n, const arma::mat& H) const;
  // sum g log g
  double glogg() const { return glogg_; }

 private:
  // c log v of one cell into ls (c = S g with the counts, g without)
  void add_log(LogSum& ls, double v, double c) const {
    if (use_counts_) ls.add(std::max(v, 1e-300), c, count_multiplicity(c));
    else ls.add(std::max(v, 1e-300), c, 0);
  }
  double logs_value(LogSum& ls) const { return use_counts_ ? ls.value() / total_ : ls.value(); }

  const arma::vec* counts_;
  double total_;
  int sweeps_, newton_;
  EMRule em_;
  bool prepared_ = false;
  bool use_counts_ = false;
  double glogg_ = 0.0;
  // The cells grouped by their index in one mode: read in place where the
  // data are so ordered, else through their positions (or copied: see
  // set_position_limit()).
  struct Group {
    std::vector<std::size_t> ptr;  // cells of index i at ptr[i]..ptr[i+1]
    std::size_t maxnz = 0;         // the most cells of one index
    const index_t* oth = nullptr;  // cell t's other modes' indices at oth[t * stride + off[j]]
    std::size_t stride = 0;
    std::vector<std::size_t> off;
    const double* val = nullptr;   // the stored values (G's before its scales), in that order
    // when not empty, cell t of the grouping is cell pos[t] of oth and val
    std::vector<std::uint32_t> pos;
    std::vector<index_t> oth_own;
    std::vector<double> val_own;
  };
  std::vector<Group> grp_;
  std::size_t pos_limit_ = std::numeric_limits<std::uint32_t>::max();
};

inline void KLCDCells::bind(const SparseTensor& G) {
  if (prepared_) return;
  prepared_ = true;
  if (G.has_missing())
    throw std::invalid_argument("coordinate descent needs fully observed cells (use EM)");
  em_.loss_only();
  em_.bind(G);
  const std::size_t N = G.order(), nnz = G.nnz();
  const index_t* ix0 = G.indices();
  grp_.assign(N, Group());
  for (std::size_t n = 0; n < N; ++n) {  // cells grouped by their index in mode n
    Group& g = grp_[n];
    std::vector<std::size_t>& p = g.ptr;
    p.assign(G.dims[n] + 1, 0);
    bool sorted = true;
    for (std::size_t s = 0; s < nnz; ++s) {
      const index_t i = ix0[s * N + n];
      ++p[i + 1];
      sorted = sorted && (s == 0 || i >= ix0[(s - 1) * N + n]);
    }
    for (std::size_t i = 0; i < G.dims[n]; ++i) {
      g.maxnz = std::max<std::size_t>(g.maxnz, p[i + 1]);
      p[i + 1] += p[i];
    }
    g.off.clear();
    if (sorted) {  // the data's own order: read in place
      g.oth = ix0;
      g.stride = N;
      for (std::size_t m = 0; m < N; ++m) if (m != n) g.off.push_back(m);
      g.val = G.val.memptr();
    } else if (nnz <= pos_limit_) {
      // the cells' positions in G in this order (4 bytes a cell): their
      // indices and values are read there
      std::vector<std::size_t> next(p.begin(), p.end() - 1);
      g.pos.resize(nnz);
      for (std::size_t s = 0; s < nnz; ++s) g.pos[next[ix0[s * N + n]]++] = static_cast<std::uint32_t>(s);
      g.oth = ix0;
      g.stride = N;
      for (std::size_t m = 0; m < N; ++m) if (m != n) g.off.push_back(m);
      g.val = G.val.memptr();
    } else {  // a copy in this order: the other modes' indices and the values
      std::vector<std::size_t> next(p.begin(), p.end() - 1);
      g.oth_own.resize(nnz * (N - 1));
      g.val_own.resize(nnz);
      for (std::size_t s = 0; s < nnz; ++s) {
        const index_t* ix = ix0 + s * N;
        const std::size_t t = next[ix[n]]++;
        index_t* o = g.oth_own.data() + t * (N - 1);
        for (std::size_t m = 0, j = 0; m < N; ++m) if (m != n) o[j++] = ix[m];
        g.val_own[t] = G.val[s];
      }
      g.oth = g.oth_own.data();
      g.stride = N - 1;
      for (std::size_t m = 0; m + 1 < N; ++m) g.off.push_back(m);
      g.val = g.val_own.data();
    }
  }
  // whether the counts serve the logs, and sum g log g: as EM decides
  // (EM computes sum g log g only when it has the counts). The counts
  // must be G's stored values (read in each grouping's order).
  use_counts_ = counts_ != nullptr && em_.uses_counts() && counts_->memptr() == G.val.memptr();
  glogg_ = counts_ != nullptr ? em_.glogg() : 0.0;
  if (counts_ == nullptr)
    for (std::size_t s = 0; s < nnz; ++s) { const double g = G.value(s); glogg_ += g * std::log(g); }
}

inline double KLCDCells::solve_mode(const SparseTensor& G, const std::vector<const arma::mat*>& F, std::size_t n,
                                    arma::mat& A, const KLCDRowTerms& t, bool logs, int threads) const {
  if (!prepared_) throw std::logic_error("coordinate descent: the cells are not bound");
  const std::size_t N = G.order();
  const arma::uword k = A.n_rows, d = G.dims[n];
  if (A.n_cols != d) throw std::logic_error("coordinate descent: a mode's rows of the wrong size");
  // the Newton steps work on G (so that a rescaled x gives the same
  // arithmetic); the counts (the stored values, then) only make the logs
  // of the trace cheap
  const bool scaled = G.scaled();
  const double ga = G.inv_top, gsc = G.inv_sum;
  const arma::vec ones(k, arma::fill::ones);
  const Group& grp = grp_[n];
  const std::vector<std::size_t>& ptr = grp.ptr;
  const index_t* oth = grp.oth;
  const std::size_t stride = grp.stride;
  const std::size_t* off = grp.off.data();
  const double* gv = grp.val;
  const std::uint32_t* pos = grp.pos.empty() ? nullptr : grp.pos.data();
  const double* cnt = use_counts_ ? gv : nullptr;
  const std::size_t maxnz = grp.maxnz;
  std::vector<double> lg(logs ? d : 0, 0.0);
  const int Tn = effective_threads(threads, G.nnz() * k / 8);
  std::vector<const arma::mat*> others;
  for (std::size_t m = 0; m < N; ++m) if (m != n) others.push_back(F[m]);
  const std::size_t No = others.size();
  const std::size_t extra = t.pseudo != nullptr ? k : 0;
  nmf::dense::parallel_blocks(d, Tn, 4, [&](std::size_t b, std::size_t e) {
    std::vector<double> v(maxnz + extra), gb((maxnz + extra) * k), xs(scaled || pos ? maxnz : 0),
        cs(pos && cnt ? maxnz : 0), xp(extra ? maxnz + extra : 0), coef(t.row_coef ? k : 0);
    for (std::size_t i = b; i < e; ++i) {
      if ((i & 63) == 63) poll();  // (a user's interrupt; interrupt.h: not in a parallel region)
      const std::size_t p0 = ptr[i], nz = ptr[i + 1] - p0;
      // this index's values of G (xb) and counts (cb), contiguous
      const double* xb = gv + p0;
      const double* cb = cnt ? cnt + p0 : nullptr;
      if (pos) {  // gathered from their positions
        const std::uint32_t* q = pos + p0;
        for (std::size_t j = 0; j < nz; ++j) xs[j] = scaled ? gv[q[j]] * ga * gsc : gv[q[j]];
        if (cnt) {
          for (std::size_t j = 0; j < nz; ++j) cs[j] = cnt[q[j]];
          cb = cs.data();
        }
        xb = xs.data();
      } else if (scaled) {  // the values of G from the stored ones
        for (std::size_t j = 0; j < nz; ++j) xs[j] = xb[j] * ga * gsc;
        xb = xs.data();
      }
      // pseudo-cells (their G rows unit vectors) after the row's cells: ld
      // rows in all
      std::size_t np = 0;
      const double* pseudo = nullptr;
      if (extra && !(t.pseudo_if_cells && nz == 0)) {
        pseudo = t.pseudo + i * t.pseudo_stride;
        for (arma::uword r = 0; r < k; ++r) np += pseudo[r] > 0.0;
      }
      const std::size_t ld = nz + np;
      // G (nz x k, column-major): the other modes' product at each cell
      // (cell j's other indices at oth[c * stride + off[m]], c its
      // position: j + p0, or pos[j + p0])
      for (std::size_t j = 0; j < nz; ++j) {
        const index_t* ix = oth + (pos ? static_cast<std::size_t>(pos[p0 + j]) : p0 + j) * stride;
        const double* f = others[0]->colptr(ix[off[0]]);
        for (arma::uword r = 0; r < k; ++r) gb[j + r * ld] = f[r];
        for (std::size_t m = 1; m < No; ++m) {
          const double* fm = others[m]->colptr(ix[off[m]]);
          for (arma::uword r = 0; r < k; ++r) gb[j + r * ld] *= fm[r];
        }
      }
      const double* xr = xb;
      if (np > 0) {
        std::copy(xb, xb + nz, xp.begin());
        std::size_t j = nz;
        for (arma::uword q = 0; q < k; ++q) {
          if (!(pseudo[q] > 0.0)) continue;
          for (arma::uword r = 0; r < k; ++r) gb[j + r * ld] = r == q ? 1.0 : 0.0;
          xp[j++] = pseudo[q];
        }
        xr = xp.data();
      }
      const double* c = t.coef != nullptr ? t.coef : ones.memptr();
      if (t.row_coef) {
        std::fill(coef.begin(), coef.end(), nz > 0 ? t.row_coef[i] : 1.0);
        c = coef.data();
      }
      nmf::KLCD::solve(gb.data(), ld, ld, xr, A.colptr(i), k, c, 0.0, v.data(), sweeps_, newton_);
      if (logs) {
        LogSum ls;
        for (std::size_t j = 0; j < nz; ++j) add_log(ls, v[j], cb ? cb[j] : xb[j]);
        lg[i] = ls.value();
      }
    }
  });
  double xl = 0.0;
  for (double l : lg) xl += l;
  return use_counts_ ? xl / total_ : xl;
}

inline double KLCDCells::xlogv(const SparseTensor& G, const std::vector<const arma::mat*>& F, std::size_t n,
                               const arma::mat& H) const {
  if (!prepared_) throw std::logic_error("coordinate descent: the cells are not bound");
  const std::size_t N = G.order();
  const arma::uword k = H.n_rows;
  const index_t* ix0 = G.indices();
  LogSum ls;
  for (std::size_t s = 0; s < G.nnz(); ++s) {
    const index_t* ix = ix0 + s * N;
    double v = 0.0;
    const double* h = H.colptr(ix[n]);
    for (arma::uword r = 0; r < k; ++r) {
      double z = h[r];
      for (std::size_t m = 0; m < N; ++m) if (m != n) z *= (*F[m])(r, ix[m]);
      v += z;
    }
    add_log(ls, v, use_counts_ ? G.val[s] : G.value(s));
  }
  return logs_value(ls);
}

// (the memory a KLCDMemoryPiece keeps the step's start in, made before
// its KCDPieceBase)
struct KLCDStart {
  KLCDStart(arma::uword k, arma::uword d) : start_(k, d) {}
  arma::mat start_;
};

// The data in memory as the one piece of PieceKLCDTensor (cd_pieces.h),
// which then solves every mode here (request "kcd_mode": the rows of mode
// n, A by reference, solved in place) rather than pass by pass: the piece
// holds every cell of every index. The first factor is the caller's (k x
// d_0), changed in place.
class KLCDMemoryPiece : private KLCDStart, public KCDPieceBase {
 public:
  KLCDMemoryPiece(const SparseTensor& G, const KLCDCells& C, arma::mat& F0)
      : KLCDStart(F0.n_rows, F0.n_cols), KCDPieceBase(F0.memptr(), start_.memptr(), F0.n_rows, F0.n_cols),
        G_(G), C_(C) {}

  Stats run(const Request& r, int threads) {
    Stats out;
    if (common(r, out)) return out;
    const std::size_t N = G_.order();
    std::vector<arma::mat> F(N);
    std::vector<const arma::mat*> Fp(N);
    F[0] = arma::mat(F0_.memptr(), F0_.n_rows, F0_.n_cols, false, true);
    for (std::size_t n = 1; n < N; ++n) {
      const arma::mat& m = r.mat("F" + std::to_string(n));
      if (m.n_rows != F0_.n_rows || m.n_cols != G_.dims[n])
        throw std::logic_error("coordinate descent: a shared factor of the wrong size");
      F[n] = arma::mat(const_cast<double*>(m.memptr()), m.n_rows, m.n_cols, false, true);
    }
    for (std::size_t n = 0; n < N; ++n) Fp[n] = &F[n];
    if (r.op == "kcd_rows") {
      first_rows(r, [&](arma::mat& A, const KLCDRowTerms& t) { C_.solve_mode(G_, Fp, 0, A, t, false, threads); });
      out.set("mass", arma::mat(arma::sum(F0_, 1)));
      return out;
    }
    const std::size_t n = static_cast<std::size_t>(r.num("mode", 0.0));
    if (n < 1 || n >= N) throw std::logic_error("coordinate descent: a mode out of range");
    if (r.op == "kcd_mode") {
      arma::mat* A = r.target("A");
      if (A == nullptr || A->n_rows != F0_.n_rows || A->n_cols != G_.dims[n])
        throw std::logic_error("coordinate descent: a mode's rows of the wrong size");
      KLCDRowTerms t;
      if (r.has("coef")) t.coef = r.mat("coef").memptr();
      if (r.has("cells")) {
        t.pseudo = r.mat("cells").memptr();
        t.pseudo_stride = F0_.n_rows;
      }
      const bool last = n + 1 == N;
      const double xl = C_.solve_mode(G_, Fp, n, *A, t, last, threads);
      if (last) {  // (sum g log v of this solution: "kcd_xlogv" of it next)
        H_ = *A;
        xlogv_ = xl;
      }
      return out;
    }
    if (r.op == "kcd_xlogv") {
      const arma::mat& H = r.mat("H");
      const bool known = n + 1 == N && H.n_rows == H_.n_rows && H.n_cols == H_.n_cols &&
                         std::equal(H.begin(), H.end(), H_.begin());
      return xlogv_stats(r, known ? xlogv_ : C_.xlogv(G_, Fp, n, H), C_.glogg());
    }
    throw std::logic_error("unknown request '" + r.op + "' of coordinate descent's piece in memory");
  }

 private:
  const SparseTensor& G_;
  const KLCDCells& C_;
  arma::mat H_;  // the last mode's latest solution and its sum g log v
  double xlogv_ = 0.0;
};

// KL coordinate descent of data in memory (the in-memory rule's interface,
// run_solver() and multistart.h): PieceKLCDTensor's iteration on the data
// as one KLCDMemoryPiece. The rule keeps no state of its own between
// steps, so after bind() it may serve several models at once.
class KLCDRule {
 public:
  explicit KLCDRule(const arma::vec* counts = nullptr, double total = 0.0, int sweeps = 1, int newton = 1)
      : cells_(counts, total, sweeps, newton) {}
  static constexpr bool kLagged = false;

  void set_position_limit(std::size_t n) { cells_.set_position_limit(n); }
  void bind(const SparseTensor& G) { cells_.bind(G); }

  // One iteration. `prev`, when given, is the loss of M (the value the
  // previous step returned, or loss()): a step that rounding made worse is
  // undone.
  double step(const SparseTensor& G, AspectModel& M, int threads) {
    return step(G, M, threads, std::numeric_limits<double>::quiet_NaN());
  }
  double step(const SparseTensor& G, AspectModel& M, int threads, double prev) {
    return run(G, M, threads, [&](PieceKLCDTensor& rule, const Pieces& P, AspectPieceModel& PM) {
      return rule.step(P, PM, threads, prev);
    });
  }

  // MAP estimation with Dirichlet pseudo-counts (a matrix only; the prior
  // must outlive the rule): see PieceKLCDTensor.
  void set_prior(const DirichletPrior* p) { prior_ = p != nullptr && p->any() ? p : nullptr; }

  // The KL divergence of M (with a prior, plus its penalty).
  double loss(const SparseTensor& G, const AspectModel& M, int threads) {
    AspectModel C = M;
    return run(G, C, threads, [&](PieceKLCDTensor& rule, const Pieces& P, AspectPieceModel& PM) {
      return rule.loss(P, PM, threads);
    });
  }

 private:
  template <class F>
  double run(const SparseTensor& G, AspectModel& M, int threads, F f) {
    cells_.bind(G);
    KLCDMemoryPiece piece(G, cells_, M.F[0]);
    LocalPieces<KLCDMemoryPiece> P({&piece}, threads);
    AspectPieceModel PM;
    PM.lambda = std::move(M.lambda);
    PM.F.assign(std::make_move_iterator(M.F.begin() + 1), std::make_move_iterator(M.F.end()));
    PM.P = &P;
    PieceKLCDTensor rule(prior_, true);
    double value = 0.0;
    try {
      value = f(rule, P, PM);
    } catch (...) {
      give_back(PM, M);
      throw;
    }
    give_back(PM, M);
    return value;
  }
  static void give_back(AspectPieceModel& PM, AspectModel& M) {
    M.lambda = std::move(PM.lambda);
    for (std::size_t n = 0; n < PM.F.size(); ++n) M.F[n + 1] = std::move(PM.F[n]);
  }

  KLCDCells cells_;
  const DirichletPrior* prior_ = nullptr;
};

}  // namespace aspectr

#endif
