// aspectr/solvers/cp_weighted_pieces.h — weighted KL non-negative CP
// (ntf(loss = "kl", method = "mu" or "cd") with missing cells, masks or weights;
// solvers/cp_weighted.h) on data in pieces (pieces.h): the first mode split
// by rows, each piece with its rows of the first factor, every other mode
// whole.
//
// The in-memory rule (CPWeightedRule, multiplicative updates) updates the
// modes one after another, each row of mode n from its numerators
// num(:, i) = sum_{c: i_n = i} (x~_c / m_c) z_c and its linear term
// D_i = v_n(i) (d prod_{m != n} A_m'v_m + sum_{c in E_i} delta_c u_c z_c).
// The first mode's rows are local to a piece (its cells, its deviating
// cells and its rows of the factor), so a piece updates them itself with
// the in-memory rule's own code. For every other mode the numerators and
// the deviations' part of D are sums over the pieces' cells (k x d_n
// each), and the common part needs A_1'v_1 (k) summed over the pieces;
// the rule adds them up and makes the in-memory update of the mode. An
// iteration asks the pieces once per shared mode (the first of these
// requests updates the pieces' rows first) and once for sum x~ log m of
// the result, the objective's data part; so a fit in pieces equals the
// in-memory fit up to rounding. A piece's cells are read in chunks where
// they are in a file (the passes over them are sums).
//
// Under the Frobenius loss (CPWeightedPiecesFrobenius: HALS and the
// multiplicative updates) the rows of every mode are updated by the
// in-memory rule's rows' update (CPWeightedRule::frobenius_rows()): the
// first mode's by the pieces, every other mode's here from the pieces'
// MTTKRP, their part of the common Gram matrix and their deviating cells
// (the model's values there keep the HALS sweep exact, as in memory); then
// the modes' norms are balanced as in memory.
//
// Requests (inputs: F1 .. F{N-1}, the shared modes' factors k x d_n):
//   "ntf_wmode" mode n (>= 1), update (1: the piece's rows of mode 1
//       updated first), num (1: the numerators), xlogv (1: sum x~ log m)
//       -> f0v (A_1'v_1 of the piece's rows), Ddev, Dabs (k x d_n: the
//       deviations' part of D and its absolute values), num, xlogv
//   "ntf_wxlogv" -> xlogv
//   "ntf_wfmode" mode n (>= 1), update, method, eps (Frobenius)
//       -> sq0 (with update), T, G0, @dev (see CPWeightedPiece)
//   "ntf_wscale" c0 (k) -> nothing: the piece's rows of mode 1 rescaled
//   "ntf_wcd0"   -> V (the piece's part of sum D'a of mode 1, coordinate
//       descent; save: the caller keeps the rows for an undo)
//   "ntf_wcdrows" -> V after the piece's rows of mode 1 are solved
//   "ntf_wcdpass" mode n (>= 1), rd, rn, hv -> sums (3 x d_n: a pass of
//       nmf::KLCDColumns)
//   "ntf_wcdrestore" old (k x rows) -> nothing: the rows given back (the
//       whole data: those the piece kept)
//   "ntf_wcdmode" mode n (>= 1), D (k x d_n), A (by reference: mode n's
//       rows, solved in place): the whole data only
//   "ntf_wfrows" mode n (>= 1), update, value, method, eps, gram, keep, A
//       (by reference) -> part [, sq0]: the whole data only (keep: mode
//       n's rows not updated; CPWeightedPiece)
//   "gather"     -> @F0 (k x rows)
#ifndef ASPECTR_SOLVERS_CP_WEIGHTED_PIECES_H
#define ASPECTR_SOLVERS_CP_WEIGHTED_PIECES_H

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <functional>
#include <limits>
#include <memory>
#include <string>
#include <utility>
#include <vector>
#include "../control.h"
#include "../pieces.h"
#include "../shard_file.h"
#include "cp_weighted.h"

namespace aspectr {

// The grouping of a piece's cells by their first index that
// kcd_first_rows() makes: the cells of row i are ptr[i] .. ptr[i + 1] - 1
// in that order, cell t of the order being cell pos(t) of the piece (t
// itself where the cells are in row order). Kept by cells held in memory
// (made at the first solve of a fit's rows, 4 bytes a cell), made again
// for every solve of cells read from a file.
struct CPRowGroups {
  bool ready = false;
  std::size_t rows = 0, cells = 0;
  std::vector<std::size_t> ptr;
  std::size_t maxnz = 1;  // the most cells of a row (at least 1)
  std::vector<std::uint32_t> pos32;  // (up to 2^32 - 1 cells)
  std::vector<std::size_t> pos64;
  std::size_t pos(std::size_t t) const {
    return !pos32.empty() ? pos32[t] : !pos64.empty() ? pos64[t] : t;
  }
  // from the cells' indices (ix0: N per cell, the first the row, below d)
  void make(const index_t* ix0, std::size_t nnz, std::size_t N, std::size_t d, const char* who) {
    ready = false;
    ptr.assign(d + 1, 0);
    bool sorted = true;
    for (std::size_t s = 0; s < nnz; ++s) {
      const index_t i = ix0[s * N];
      if (i >= d) throw std::logic_error(std::string(who) + ": a row out of range");
      ++ptr[i + 1];
      sorted = sorted && (s == 0 || i >= ix0[(s - 1) * N]);
    }
    maxnz = 1;
    for (std::size_t i = 0; i < d; ++i) {
      maxnz = std::max(maxnz, ptr[i + 1]);
      ptr[i + 1] += ptr[i];
    }
    pos32.clear();
    pos64.clear();
    if (!sorted) {
      std::vector<std::size_t> next(ptr.begin(), ptr.end() - 1);
      if (nnz <= std::numeric_limits<std::uint32_t>::max()) {
        pos32.resize(nnz);
        for (std::size_t s = 0; s < nnz; ++s) pos32[next[ix0[s * N]]++] = static_cast<std::uint32_t>(s);
      } else {
        pos64.resize(nnz);
        for (std::size_t s = 0; s < nnz; ++s) pos64[next[ix0[s * N]]++] = s;
      }
    }
    rows = d;
    cells = nnz;
    ready = true;
  }
};

// The cells of a piece's X~, visited as tensors of consecutive cells (the
// passes over them are sums): all at once in memory, or a chunk at a time
// from a shard file. Cells held in memory also give them whole() and keep
// their grouping by row (rows()).
class CPCells {
 public:
  virtual ~CPCells() = default;
  virtual void each(const std::function<void(const SparseTensor&)>& f) = 0;
  virtual const SparseTensor* whole() const { return nullptr; }
  virtual CPRowGroups* rows() { return nullptr; }
};

class MemoryCPCells : public CPCells {
 public:
  explicit MemoryCPCells(const SparseTensor& X) : X_(X) {}
  void each(const std::function<void(const SparseTensor&)>& f) override { f(X_); }
  const SparseTensor* whole() const override { return &X_; }
  CPRowGroups* rows() override { return &rows_; }

 private:
  const SparseTensor& X_;
  CPRowGroups rows_;
};

// A .shard file of X~ (its values divided by `scale` as they are read, a
// power of 2: exact), `chunk` cells at a time into `buf`; dims: the
// piece's.
class FileCPCells : public CPCells {
 public:
  FileCPCells(std::string path, ShardBuffer& buf, std::size_t chunk, double scale, std::vector<arma::uword> dims)
      : path_(std::move(path)), buf_(buf), chunk_(chunk), scale_(scale), dims_(std::move(dims)) {}
  void each(const std::function<void(const SparseTensor&)>& f) override {
    ShardReader rd(path_);
    if (rd.dims() != dims_) throw std::runtime_error("shard file " + path_ + " has changed since the fit wrote it");
    while (rd.next(buf_, chunk_)) {
      const SparseTensor t = shard_tensor(buf_, dims_, scale_, 1.0);
      f(t);
    }
  }

 private:
  std::string path_;
  ShardBuffer& buf_;
  std::size_t chunk_;
  double scale_;
  std::vector<arma::uword> dims_;
};

// The rows of the first mode (A, k x d, in place) solved by KL coordinate
// descent (nmf::KLCD::solve(), one sweep of one Newton step per
// coordinate), every cell of the piece at once, grouped by row: z_of(ix,
// z) the other modes' product at a cell (k values), c_of(i) the row's
// linear coefficients (k). With `pseudo` (k values: a prior's
// pseudo-counts, cd_pieces.h), every row with cells also has a
// pseudo-cell of value pseudo[r] and coefficients the unit vector e_r for
// each pseudo[r] > 0, after its own cells (the documents' majorizer of cd_pieces.h). `who`
// names the piece in errors. Written once for every CP piece that solves
// its rows so (cd_pieces.h, CPWeightedPiece).
template <class ZOf, class COf>
inline void kcd_first_rows(CPCells& cells, std::size_t N, arma::mat& A, ZOf z_of, COf c_of, const char* who,
                           const double* pseudo = nullptr) {
  const arma::uword k = A.n_rows, d = A.n_cols;
  // the cells: in place when held in memory (their grouping kept), else
  // gathered (and grouped) here
  const SparseTensor* X = cells.whole();
  CPRowGroups* kept = X != nullptr ? cells.rows() : nullptr;
  std::vector<index_t> idx;
  std::vector<double> val;
  if (X == nullptr) {
    cells.each([&](const SparseTensor& C) {
      const index_t* ix0 = C.indices();
      idx.insert(idx.end(), ix0, ix0 + C.nnz() * N);
      for (std::size_t s = 0; s < C.nnz(); ++s) val.push_back(C.value(s));
    });
  }
  const std::size_t nnz = X != nullptr ? X->nnz() : val.size();
  const index_t* ix0 = X != nullptr ? X->indices() : idx.data();
  if (X != nullptr && X->order() != N) throw std::logic_error(std::string(who) + ": cells of another order");
  CPRowGroups made;
  CPRowGroups& g = kept != nullptr ? *kept : made;
  if (!g.ready || g.rows != d || g.cells != nnz) g.make(ix0, nnz, N, d, who);
  const std::vector<std::size_t>& ptr = g.ptr;
  std::size_t np = 0;
  if (pseudo) for (arma::uword r = 0; r < k; ++r) np += pseudo[r] > 0.0;
  std::vector<double> gb((g.maxnz + np) * k), xs(g.maxnz + np), v(g.maxnz + np), z(k);
  for (arma::uword i = 0; i < d; ++i) {
    if ((i & 255) == 255) poll();  // (a user's interrupt, interrupt.h)
    const std::size_t p0 = ptr[i], nz = ptr[i + 1] - p0;
    const std::size_t ld = nz + (nz > 0 ? np : 0);
    for (std::size_t t = 0; t < nz; ++t) {
      const std::size_t c = g.pos(p0 + t);
      xs[t] = X != nullptr ? X->value(c) : val[c];
      z_of(ix0 + c * N, z.data());
      for (arma::uword q = 0; q < k; ++q) gb[t + q * ld] = z[q];
    }
    if (ld > nz) {
      std::size_t t = nz;
      for (arma::uword j = 0; j < k; ++j) {
        if (!(pseudo[j] > 0.0)) continue;
        for (arma::uword q = 0; q < k; ++q) gb[t + q * ld] = q == j ? 1.0 : 0.0;
        xs[t++] = pseudo[j];
      }
    }
    nmf::KLCD::solve(gb.data(), ld, ld, xs.data(), A.colptr(i), k, c_of(i), 0.0, v.data(), 1, 1);
  }
}

// One pass of nmf::KLCDColumns for mode n (>= 1) over a piece's cells:
// each index's part of the sums (a2, b1, b2; out 3 x d_n) for the
// coordinates the request names ("rd", "rn": one per index, rd < 0 for
// none), z the other modes' product at a cell (z_of(ix, z): k values;
// zr_of(ix, r): its value r alone, the same product in the same order).
// The model v at each cell is either recomputed, v = hv'z ("hv": the
// mode's iterate, k x d_n), or, where the piece keeps it (`kept`: one
// value per cell, in the order of the piece's cells; the pass then needs
// z only at rd and rn), moved by the step: v += d z[rd] ("d": one step
// per index; "reset" 1: the first pass of the mode, v = hv'z). At a reset
// a piece says "nokeep" 1 without `kept` (0 with), so that the rule sends
// hv with every pass when any piece keeps no v.
// `who` names the piece in errors. Written once for
// every CP piece that solves a mode by coordinate descent (cd_pieces.h,
// CPWeightedPiece).
template <class ZOf, class ZrOf>
inline Stats kcd_mode_pass(CPCells& cells, std::size_t N, std::size_t n, arma::uword k, arma::uword d,
                           const Request& r, ZOf z_of, ZrOf zr_of, const char* who,
                           double* kept = nullptr, std::size_t kept_n = 0) {
  const arma::mat& rdm = r.mat("rd");
  const arma::mat& rnm = r.mat("rn");
  const bool reset = r.num("reset", 1.0) > 0.0;
  const bool recompute = kept == nullptr || reset;
  const arma::mat none;
  const arma::mat& hv = recompute ? r.mat("hv") : none;
  const arma::mat& dm = kept != nullptr && !reset ? r.mat("d") : none;
  if (rdm.n_elem != d || rnm.n_elem != d || (recompute && (hv.n_rows != k || hv.n_cols != d)) ||
      (!recompute && dm.n_elem != d))
    throw std::logic_error(std::string(who) + ": a pass of the wrong size");
  std::vector<int> rd(d), rn(d);
  for (arma::uword j = 0; j < d; ++j) {
    rd[j] = static_cast<int>(rdm[j]);
    rn[j] = static_cast<int>(rnm[j]);
    if (rd[j] >= static_cast<int>(k) || rn[j] >= static_cast<int>(k) || (rd[j] >= 0 && rn[j] < 0))
      throw std::logic_error(std::string(who) + ": a pass's coordinates out of range");
  }
  arma::mat out(3, d, arma::fill::zeros);
  std::vector<double> z(k);
  std::size_t c = 0;  // the cell's position among the piece's cells
  cells.each([&](const SparseTensor& X) {
    const index_t* ix0 = X.indices();
    if (kept != nullptr && c + X.nnz() > kept_n) throw std::logic_error(std::string(who) + ": more cells than values kept");
    for (std::size_t s = 0; s < X.nnz(); ++s, ++c) {
      if ((s & 65535) == 65535) poll();  // (a user's interrupt, interrupt.h)
      const index_t* ix = ix0 + s * N;
      const index_t j = ix[n];
      if (rd[j] < 0) continue;
      double v, zd, zn;
      if (recompute) {
        z_of(ix, z.data());
        const double* h = hv.colptr(j);
        v = 0.0;
        for (arma::uword q = 0; q < k; ++q) v += h[q] * z[q];
        zd = z[rd[j]];
        zn = z[rn[j]];
        if (kept != nullptr) kept[c] = v;
      } else {
        zd = zr_of(ix, rd[j]);
        zn = rn[j] == rd[j] ? zd : zr_of(ix, rn[j]);
        v = kept[c] += dm[j] * zd;
      }
      double* o = out.colptr(j);
      nmf::KLCD::add_terms(zd, zn, X.value(s), v, o[0], o[1], o[2]);
    }
  });
  if (kept != nullptr && c != kept_n) throw std::logic_error(std::string(who) + ": fewer cells than values kept");
  Stats st;
  st.set("sums", out);
  if (reset) st.set("nokeep", kept == nullptr ? 1.0 : 0.0);
  return st;
}

// One piece: its cells of X~ (first index local to the piece), its
// weights (v[0] its rows', deviating cells with a local first index,
// prepared for the piece's dims) and its rows of the first factor (k x
// rows, the caller's memory, updated in place).
//
// `whole`: the piece's cells, when they are every cell of the data in
// memory (X's own cells): the rules then leave each mode's rows to the
// piece (ntf_wcdmode, ntf_wfrows: the in-memory rule's rows of the mode,
// the cells grouped once), and the piece keeps its rows for an undo
// itself.
class CPWeightedPiece {
 public:
  CPWeightedPiece(CPCells& X, const CPWeights& w, double* A0, arma::uword k, arma::uword rows,
                  const SparseTensor* whole = nullptr)
      : X_(X), w_(w), A0_(A0, k, rows, false, true), whole_(whole) {}

  Stats run(const Request& r, int threads) {
    Stats out;
    if (r.op == "gather") {
      out.set("@F0", arma::mat(A0_));
      return out;
    }
    if (r.op == "ntf_wscale") {
      // the rows rescaled by the rule's balance of the modes' norms
      const arma::mat& c = r.mat("c0");
      if (c.n_elem != A0_.n_rows) throw std::logic_error("weighted CP piece: scales of the wrong size");
      for (arma::uword i = 0; i < A0_.n_cols; ++i)
        for (arma::uword q = 0; q < A0_.n_rows; ++q) A0_(q, i) *= c[q];
      return out;
    }
    if (r.op == "ntf_wcdrestore") {
      // (KL coordinate descent: the step undone, the rows given back)
      const arma::mat& old = whole_ != nullptr && !r.has("old") ? saved_ : r.mat("old");
      if (old.n_rows != A0_.n_rows || old.n_cols != A0_.n_cols)
        throw std::logic_error("weighted CP piece: rows to restore of the wrong size");
      A0_ = old;
      return out;
    }
    AspectModel M = model(r);
    if (r.op == "ntf_wfmode") return frobenius_mode(r, M, threads);
    if (r.op == "ntf_wfrows") return frobenius_whole(r, M, threads);
    // (the whole data: one rule for the fit, its cells checked once)
    CPWeightedRule own(true, CPWeightedMethod::MU, w_);
    CPWeightedRule& rule = whole_ != nullptr ? kept(kl_, true, CPWeightedMethod::MU, 1e-16, false) : own;
    if (r.op == "ntf_wcd0" || r.op == "ntf_wcdrows") {
      // KL coordinate descent of the piece's rows of the first mode: their
      // part of sum D'a (ntf_wcd0), or the rows solved by the in-memory
      // rule's row solver and then that part (ntf_wcdrows)
      // (the whole data: ntf_wcdrows follows ntf_wcd0 with the same shared
      // modes, so with the same linear terms, kept between them)
      arma::mat D;
      if (r.op == "ntf_wcdrows" && whole_ != nullptr && !d0_.is_empty()) D = std::move(d0_);
      else D = rule.linear_terms(M, 0, threads);
      d0_.reset();
      if (r.op == "ntf_wcd0" && whole_ != nullptr) {
        d0_ = D;
        if (r.num("save", 0.0) != 0.0) saved_ = A0_;
      }
      if (r.op == "ntf_wcdrows") {
        if (whole_ != nullptr) grouped().cd_rows(*whole_, M, 0, D, threads);
        else cd_rows(M, D);
        A0_ = M.F[0];
      }
      out.set("V", arma::accu(D % M.F[0]));
      return out;
    }
    if (r.op == "ntf_wcdmode") {
      // (the whole data) mode n's rows, A by reference, solved with the
      // linear terms D
      const std::size_t n = static_cast<std::size_t>(r.num("mode", 0.0));
      arma::mat* A = r.target("A");
      if (whole_ == nullptr || n < 1 || n >= M.order() || A == nullptr || A->n_rows != M.rank() ||
          A->n_cols != M.F[n].n_cols)
        throw std::logic_error("weighted CP piece: a mode's rows it cannot solve");
      M.F[n] = *A;
      grouped().cd_rows(*whole_, M, n, r.mat("D"), threads);
      *A = M.F[n];
      return out;
    }
    if (r.op == "ntf_wcdpass") return cd_pass(M, r);
    if (r.op == "ntf_wxlogv") {
      out.set("xlogv", xlogv(rule, M, threads));
      return out;
    }
    if (r.op != "ntf_wmode") throw std::logic_error("unknown weighted CP piece operation '" + r.op + "'");
    const std::size_t n = static_cast<std::size_t>(r.num("mode", 0.0));
    if (n < 1 || n >= M.order()) throw std::logic_error("weighted CP piece: a mode out of range");
    if (r.num("update", 0.0) != 0.0) {
      // the rows of the first mode, by the in-memory rule's update
      // (CPWeightedRule's numerators, summed over the chunks, and update)
      const arma::mat D = rule.linear_terms(M, 0, threads);
      const arma::mat num = numerators(rule, M, 0, threads);
      CPWeightedRule::kl_mu_apply(M.F[0], num, D);
      A0_ = M.F[0];
    }
    out.set("f0v", arma::mat(M.F[0] * w_.v[0]));
    arma::mat Dd(M.rank(), M.F[n].n_cols, arma::fill::zeros), Da(M.rank(), M.F[n].n_cols, arma::fill::zeros);
    rule.add_deviations(M, n, Dd, Da, threads);
    out.set("Ddev", std::move(Dd));
    out.set("Dabs", std::move(Da));
    if (r.num("num", 0.0) != 0.0) out.set("num", numerators(rule, M, n, threads));
    if (r.num("xlogv", 0.0) != 0.0) out.set("xlogv", xlogv(rule, M, threads));
    return out;
  }

 private:
  // the model of the request: the piece's rows of the first mode, the
  // shared modes given
  AspectModel model(const Request& r) const {
    AspectModel M;
    const std::size_t N = w_.v.size();
    M.lambda.ones(A0_.n_rows);
    M.F.resize(N);
    M.F[0] = A0_;
    for (std::size_t n = 1; n < N; ++n) {
      M.F[n] = r.mat("F" + std::to_string(n));
      if (M.F[n].n_rows != A0_.n_rows || M.F[n].n_cols != w_.v[n].n_elem)
        throw std::logic_error("weighted CP piece: a shared factor of the wrong size");
    }
    return M;
  }
  // mode n's numerators (k x d_n) over the piece's cells
  arma::mat numerators(CPWeightedRule& rule, const AspectModel& M, std::size_t n, int threads) {
    arma::mat num(M.rank(), M.F[n].n_cols, arma::fill::zeros);
    X_.each([&](const SparseTensor& X) {
      rule.prepare(X);
      arma::mat part;
      CPWeightedRule::kl_numerators(X, M, n, part, threads);
      num += part;
    });
    return num;
  }
  // Frobenius, mode n >= 1: the piece's rows of the first mode first
  // updated (update: by the in-memory rule's rows' update, then sq0 their
  // squared norms per component), then mode n's parts: T (MTTKRP of the
  // piece's X~), G0 = A_1 diag(v_1) A_1' of its rows, and @dev, its
  // deviating cells in mode n's order, a column each: the row of mode n,
  // delta_c u_c and z_c (k)
  Stats frobenius_mode(const Request& r, AspectModel& M, int threads) {
    Stats out;
    const std::size_t N = M.order(), n = static_cast<std::size_t>(r.num("mode", 0.0));
    if (n < 1 || n >= N) throw std::logic_error("weighted CP piece: a mode out of range");
    const arma::uword k = M.rank();
    const CPWeightedMethod method = static_cast<CPWeightedMethod>(static_cast<int>(r.num("method", 0.0)));
    CPWeightedRule rule(false, method, w_, r.num("eps", 1e-16));
    if (r.num("update", 0.0) != 0.0) {
      const arma::mat T = mttkrp_sum(M, 0, threads);
      const arma::mat G = w_.gram(M.F, 0);
      rule.frobenius_rows(M.F[0], w_.v[0], T, G, rule.deviation_cells(M, 0), w_.cells(), N, true, false, threads);
      A0_ = M.F[0];
      out.set("sq0", arma::mat(arma::sum(arma::square(A0_), 1)));
    }
    out.set("T", mttkrp_sum(M, n, threads));
    arma::mat Fv = M.F[0];
    Fv.each_row() %= w_.v[0].t();
    out.set("G0", arma::mat(Fv * M.F[0].t()));
    const CPWeightedRule::MemoryDeviations dev = rule.deviation_cells(M, n);
    const CellGroups& eg = w_.groups[n];
    arma::mat D(k + 2, w_.cells());
    std::vector<double> zs, ezs, es, z(k);
    for (arma::uword i = 0; i < M.F[n].n_cols; ++i) {
      dev(i, zs, ezs, es, z);
      const std::size_t s0 = eg.ptr[i], ne = es.size();
      for (std::size_t s = 0; s < ne; ++s) {
        double* o = D.colptr(s0 + s);
        o[0] = static_cast<double>(i);
        o[1] = es[s];
        for (arma::uword q = 0; q < k; ++q) o[2 + q] = zs[q * ne + s];
      }
    }
    out.set("@dev", std::move(D));
    return out;
  }
  // Frobenius, (the whole data) mode n >= 1, A by reference: the first
  // mode's rows first (update: then sq0, their squared norms per
  // component), then mode n's rows, by the in-memory rule's modes
  // (CPWeightedRule::frobenius_mode(); gram: its check form); part: the
  // objective's part of the result with `value`
  Stats frobenius_whole(const Request& r, AspectModel& M, int threads) {
    Stats out;
    const std::size_t N = M.order(), n = static_cast<std::size_t>(r.num("mode", 0.0));
    arma::mat* A = r.target("A");
    if (whole_ == nullptr || n < 1 || n >= N || A == nullptr || A->n_rows != M.rank() || A->n_cols != M.F[n].n_cols)
      throw std::logic_error("weighted CP piece: a mode's rows it cannot update");
    const CPWeightedMethod method = static_cast<CPWeightedMethod>(static_cast<int>(r.num("method", 0.0)));
    CPWeightedRule& rule = kept(fr_, false, method, r.num("eps", 1e-16), r.num("gram", 0.0) != 0.0);
    if (r.num("update", 0.0) != 0.0) {
      rule.frobenius_mode(*whole_, M, 0, true, false, threads);
      A0_ = M.F[0];
      out.set("sq0", arma::mat(arma::sum(arma::square(A0_), 1)));
    }
    const bool update = r.num("keep", 0.0) == 0.0;
    M.F[n] = *A;
    out.set("part", rule.frobenius_mode(*whole_, M, n, update, r.num("value", 0.0) != 0.0, threads));
    if (update) *A = M.F[n];
    return out;
  }
  // (the whole data) a rule made and prepared on the cells once per fit
  // (its kind the same in every request of a fit)
  CPWeightedRule& kept(std::unique_ptr<CPWeightedRule>& slot, bool kl, CPWeightedMethod method, double eps,
                       bool gram) {
    if (!slot) {
      slot.reset(new CPWeightedRule(kl, method, w_, eps, gram));
      slot->prepare(*whole_);
    }
    return *slot;
  }
  // (the whole data) the rule of coordinate descent, with the cells grouped
  // by each mode
  CPWeightedRule& grouped() { return kept(cd_, true, CPWeightedMethod::CD, 1e-16, false); }
  // the other modes' product at a cell (in the modes' order, as the
  // in-memory rule forms it)
  static void product(const AspectModel& M, const index_t* ix, std::size_t n, double* z) {
    const arma::uword k = M.rank();
    for (arma::uword q = 0; q < k; ++q) z[q] = 1.0;
    for (std::size_t m = 0; m < M.order(); ++m) {
      if (m == n) continue;
      const double* f = M.F[m].colptr(ix[m]);
      for (arma::uword q = 0; q < k; ++q) z[q] *= f[q];
    }
  }
  // the rows of the first mode by CPWeightedRule::cd_rows()'s coordinate
  // descent (nmf::KLCD::solve(), one sweep of one Newton step per
  // coordinate), every cell of the piece at once, grouped by row
  void cd_rows(AspectModel& M, const arma::mat& D) {
    kcd_first_rows(X_, M.order(), M.F[0], [&](const index_t* ix, double* z) { product(M, ix, 0, z); },
                   [&](arma::uword i) { return D.colptr(i); }, "weighted CP piece");
  }

  // one pass of nmf::KLCDColumns for shared mode n: the piece's part of
  // every index's sums (a2, b1, b2), the model v = hv'z recomputed at each
  // cell (rd, rn: the coordinates of each index, rd < 0 for none)
  Stats cd_pass(const AspectModel& M, const Request& r) {
    const std::size_t N = M.order(), n = static_cast<std::size_t>(r.num("mode", 0.0));
    if (n < 1 || n >= N) throw std::logic_error("weighted CP piece: a mode out of range");
    std::vector<double> z(M.rank());
    return kcd_mode_pass(X_, N, n, M.rank(), M.F[n].n_cols, r,
                         [&](const index_t* ix, double* zz) { product(M, ix, n, zz); },
                         [&](const index_t* ix, int q) {
                           product(M, ix, n, z.data());
                           return z[q];
                         }, "weighted CP piece");
  }

  // MTTKRP of mode n over the piece's cells (k x d_n)
  arma::mat mttkrp_sum(const AspectModel& M, std::size_t n, int threads) {
    const std::size_t N = M.order();
    std::vector<const arma::mat*> Fp(N);
    for (std::size_t m = 0; m < N; ++m) Fp[m] = &M.F[m];
    arma::mat T(M.rank(), M.F[n].n_cols, arma::fill::zeros);
    X_.each([&](const SparseTensor& X) {
      arma::mat part;
      mttkrp(X, Fp, n, part, threads, nullptr);
      T += part;
    });
    return T;
  }
  double xlogv(CPWeightedRule& rule, const AspectModel& M, int threads) {
    double v = 0.0;
    X_.each([&](const SparseTensor& X) {
      rule.prepare(X);
      v += CPWeightedRule::xlogv(X, M, threads);
    });
    return v;
  }

  CPCells& X_;
  const CPWeights& w_;
  arma::mat A0_;
  const SparseTensor* whole_;
  std::unique_ptr<CPWeightedRule> cd_, kl_, fr_;
  arma::mat saved_;  // (the whole data: the rows kept for an undo)
  arma::mat d0_;     // (the whole data: ntf_wcd0's linear terms)
};

// The global part of a CP model fitted in pieces: the shared modes'
// factors (F[n - 1]: mode n + 1, k x d_n); the pieces hold the first.
struct CPPieceModel {
  std::vector<arma::mat> F;
  const Pieces* P = nullptr;
  Request request(const std::string& op) const {
    Request r(op);
    for (std::size_t n = 0; n < F.size(); ++n) r.view("F" + std::to_string(n + 1), F[n]);
    return r;
  }
  // the first mode's factor, k x d_1
  arma::mat gather() const { return P->map(request("gather")).mat("@F0"); }
};

// The rule: CPWeightedRule's KL multiplicative updates, mode after mode,
// on pieces. `w`: the weights of the whole data (d, v of every mode, klc).
class CPWeightedPiecesMU {
 public:
  explicit CPWeightedPiecesMU(const CPWeights& w) : w_(w) {}
  static constexpr bool kLagged = false;

  double step(const Pieces& P, CPPieceModel& M, int) {
    const std::size_t N = M.F.size() + 1;
    double V = 0.0;
    for (std::size_t n = 1; n < N; ++n) {
      const Stats s = P.map(mode_request(M, n, n == 1, true, false));
      const arma::mat D = linear_terms(s, M, n);
      arma::mat& A = M.F[n - 1];
      const arma::mat& num = s.mat("num");
      if (num.n_rows != A.n_rows || num.n_cols != A.n_cols)
        throw std::logic_error("the pieces' numerators have the wrong size");
      CPWeightedRule::kl_mu_apply(A, num, D);
      if (n + 1 == N) V = arma::accu(D % A);
    }
    const double xl = P.map(M.request("ntf_wxlogv")).num("xlogv");
    return w_.klc - xl + V;
  }

  double loss(const Pieces& P, CPPieceModel& M, int) {
    const std::size_t N = M.F.size() + 1;
    const Stats s = P.map(mode_request(M, N - 1, false, false, true));
    const arma::mat D = linear_terms(s, M, N - 1);
    return w_.klc - s.num("xlogv") + arma::accu(D % M.F[N - 2]);
  }

 private:
  Request mode_request(const CPPieceModel& M, std::size_t n, bool update, bool num, bool xlogv) const {
    Request r = M.request("ntf_wmode");
    r.with("mode", static_cast<double>(n)).with("update", update ? 1.0 : 0.0).with("num", num ? 1.0 : 0.0)
        .with("xlogv", xlogv ? 1.0 : 0.0);
    return r;
  }
  // mode n's linear terms from the pieces' sums, as CPWeightedRule's
  // linear_terms()
  arma::mat linear_terms(const Stats& s, const CPPieceModel& M, std::size_t n) const {
    const std::size_t N = M.F.size() + 1;
    std::vector<arma::vec> fv(N);
    fv[0] = arma::vectorise(s.mat("f0v"));
    for (std::size_t m = 1; m < N; ++m) if (m != n) fv[m] = M.F[m - 1] * w_.v[m];
    const arma::vec g = CPWeightedRule::combine_linear(fv, n, w_.d);
    arma::mat D = s.mat("Ddev"), ref = s.mat("Dabs");
    if (D.n_rows != g.n_elem || D.n_cols != M.F[n - 1].n_cols || ref.n_rows != D.n_rows || ref.n_cols != D.n_cols)
      throw std::logic_error("the pieces' linear terms have the wrong size");
    D.each_col() += g;
    ref.each_col() += arma::abs(g);
    CPWeightedRule::finish_linear(w_.v[n], D, ref);
    return D;
  }
  const CPWeights& w_;
  friend class CPWeightedPiecesCD;
};

// The rule: CPWeightedRule's KL coordinate descent (nmf/kl_cd.h's
// kcd_iteration(), with this model's linear terms and scales; one sweep of one Newton
// step per coordinate, each mode from and to the best scale of the model),
// mode after mode, on pieces: the first mode's rows solved where they are
// (ntf_wcd0 and ntf_wcdrows, the scales between from the pieces' sums),
// every other mode's by nmf::KLCDColumns here, its Newton steps' sums
// added over the pieces (ntf_wcdpass, one request per step of all the
// mode's indices), its linear terms from the pieces' parts as the
// multiplicative updates'. A step that rounding made worse is undone, as
// in memory (the pieces given back their rows). `w`: the weights of the
// whole data (d, v of every mode, klc, total = sum x~).
//
// `whole`: the pieces are one piece holding every cell (the data in
// memory), which then solves each mode's rows itself (ntf_wcdmode).
class CPWeightedPiecesCD : public KCDRuleDefaults {
 public:
  explicit CPWeightedPiecesCD(const CPWeights& w, bool whole = false) : w_(w), mu_(w), whole_(whole) {}
  static constexpr bool kLagged = false;

  double step(const Pieces& P, CPPieceModel& M, int threads) {
    return step(P, M, threads, std::numeric_limits<double>::quiet_NaN());
  }
  double step(const Pieces& P, CPPieceModel& M, int, double prev) { return kcd_iteration(*this, P, M, prev); }

  // kcd_iteration()'s rule: the first mode's rows in the pieces (kept by
  // them for an undo), then every other mode, each from and to the best
  // scale; a step that rounding made worse is undone
  static constexpr bool kGuard = true, kRowsFirst = true;
  void kcd_save(const Pieces&, CPPieceModel& M, bool guard) {
    save_ = guard;
    entering_.clear();
    if (guard) entering_ = M.F;
    V_ = 0.0;
  }
  void kcd_restore(const Pieces& P, CPPieceModel& M) {
    M.F = std::move(entering_);
    P.map(Request("ntf_wcdrestore"));
  }
  void kcd_rows(const Pieces& P, CPPieceModel& M) {
    const double total = w_.total;
    const arma::uword k = M.F[0].n_rows;
    const double V0 = P.map(M.request("ntf_wcd0").with("save", save_ ? 1.0 : 0.0)).num("V");
    if (V0 > 0.0 && total > 0.0) scale(P, k, total / V0);
    const double V1 = P.map(M.request("ntf_wcdrows")).num("V");
    if (V1 > 0.0 && total > 0.0) scale(P, k, total / V1);
  }
  bool kcd_whole(const Pieces&, const CPPieceModel&) const { return whole_; }
  std::size_t kcd_modes(const CPPieceModel& M) const { return M.F.size(); }
  // the mode's linear terms from the pieces, and its factor at their best scale
  void kcd_enter(const Pieces& P, CPPieceModel& M, std::size_t n, bool, KCDMode& m) {
    Request mr = M.request("ntf_wmode");
    mr.with("mode", static_cast<double>(n)).with("update", 0.0).with("num", 0.0).with("xlogv", 0.0);
    const Stats s = P.map(mr);
    m.per = true;
    m.cper = mu_.linear_terms(s, M, n);
    m.A = &M.F[n - 1];
    const double W0 = arma::accu(m.cper % *m.A);
    if (W0 > 0.0 && w_.total > 0.0) *m.A *= w_.total / W0;
  }
  void kcd_solve_whole(const Pieces& P, CPPieceModel& M, std::size_t n, KCDMode& m) {
    Request r = M.request("ntf_wcdmode");
    r.with("mode", static_cast<double>(n)).view("D", m.cper).ref("A", *m.A);
    P.map(r);
  }
  Request kcd_pass(const CPPieceModel& M, std::size_t n) const {
    Request r = M.request("ntf_wcdpass");
    r.with("mode", static_cast<double>(n));
    return r;
  }
  void kcd_leave(const Pieces&, CPPieceModel&, std::size_t, KCDMode& m) {
    arma::mat& A = *m.A;
    V_ = arma::accu(m.cper % A);
    if (V_ > 0.0 && w_.total > 0.0) {
      A *= w_.total / V_;
      V_ = arma::accu(m.cper % A);
    }
  }
  double kcd_value(const Pieces& P, CPPieceModel& M) {
    const double xl = P.map(M.request("ntf_wxlogv")).num("xlogv");
    return w_.klc - xl + V_;
  }

  double loss(const Pieces& P, CPPieceModel& M, int threads) { return mu_.loss(P, M, threads); }

 private:
  // the pieces' rows of the first mode times c
  static void scale(const Pieces& P, arma::uword k, double c) {
    arma::mat c0(k, 1);
    c0.fill(c);
    P.map(Request("ntf_wscale").with("c0", c0));
  }
  const CPWeights& w_;
  CPWeightedPiecesMU mu_;
  bool whole_;
  // the step's: whether the pieces keep its start's rows, the model it
  // entered with (for an undo), sum D o A of its last mode
  bool save_ = false;
  std::vector<arma::mat> entering_;
  double V_ = 0.0;
};

// The rule under the Frobenius loss: CPWeightedRule's HALS sweeps or
// multiplicative updates, mode after mode, on pieces: the first mode's
// rows where they are, every other mode's rows here from the pieces'
// parts (their MTTKRP, A_1 diag(v_1) A_1' and their deviating cells), by
// the in-memory rows' update (CPWeightedRule::frobenius_rows()); then the
// modes' norms balanced as in memory. `w`: the weights of the whole data
// (d, v of every mode, wx2).
//
// `whole`: the pieces are one piece holding every cell (the data in
// memory), which then updates each mode's rows itself (ntf_wfrows, by
// CPWeightedRule::frobenius_mode(); `gram`: its check form).
class CPWeightedPiecesFrobenius {
 public:
  CPWeightedPiecesFrobenius(const CPWeights& w, CPWeightedMethod method, double eps = 1e-16, bool whole = false,
                            bool gram = false)
      : w_(w), method_(method), eps_(eps), rule_(false, method, w, eps, gram), whole_(whole), gram_(gram) {}
  static constexpr bool kLagged = false;

  double step(const Pieces& P, CPPieceModel& M, int threads) {
    const std::size_t N = M.F.size() + 1;
    const arma::uword k = M.F[0].n_rows;
    double part = 0.0;
    arma::vec sq0;
    for (std::size_t n = 1; n < N; ++n) {
      if (whole_) {
        const Stats s = P.map(whole_request(M, n, n == 1, n + 1 == N));
        if (n == 1) sq0 = arma::vectorise(s.mat("sq0"));
        part = s.num("part");
        continue;
      }
      const Stats s = P.map(mode_request(M, n, n == 1));
      if (n == 1) sq0 = arma::vectorise(s.mat("sq0"));
      part = mode(s, M, n, true, n + 1 == N, threads);
    }
    const double f = std::max(w_.wx2 + part, 0.0);
    // the modes' norms balanced (detail::balance_norms()), the first
    // mode's rows rescaled where they are
    arma::mat nrm(k, N);
    for (arma::uword r = 0; r < k; ++r) {
      nrm(r, 0) = std::sqrt(sq0[r]);
      for (std::size_t n = 1; n < N; ++n) nrm(r, n) = arma::norm(M.F[n - 1].row(r), 2);
    }
    const arma::mat c = detail::balance_scales(nrm);
    for (arma::uword r = 0; r < k; ++r)
      for (std::size_t n = 1; n < N; ++n) M.F[n - 1].row(r) *= c(r, n);
    P.map(Request("ntf_wscale").with("c0", arma::mat(c.col(0))));
    return f;
  }

  double loss(const Pieces& P, CPPieceModel& M, int threads) {
    const std::size_t N = M.F.size() + 1;
    if (whole_) {
      // (the value of the last mode's rows, kept as they are)
      Request r = whole_request(M, N - 1, false, true);
      r.with("keep", 1.0);
      return std::max(w_.wx2 + P.map(r).num("part"), 0.0);
    }
    const Stats s = P.map(mode_request(M, N - 1, false));
    return std::max(w_.wx2 + mode(s, M, N - 1, false, true, threads), 0.0);
  }

 private:
  // (the whole data) mode n's rows updated in the piece, the first mode's
  // first with `first`
  Request whole_request(CPPieceModel& M, std::size_t n, bool first, bool value) const {
    Request r = M.request("ntf_wfrows");
    r.with("mode", static_cast<double>(n)).with("update", first ? 1.0 : 0.0).with("value", value ? 1.0 : 0.0)
        .with("method", static_cast<double>(method_)).with("eps", eps_).with("gram", gram_ ? 1.0 : 0.0)
        .ref("A", M.F[n - 1]);
    return r;
  }
  Request mode_request(const CPPieceModel& M, std::size_t n, bool update) const {
    Request r = M.request("ntf_wfmode");
    r.with("mode", static_cast<double>(n)).with("update", update ? 1.0 : 0.0)
        .with("method", static_cast<double>(method_)).with("eps", eps_);
    return r;
  }
  // mode n's rows from the pieces' parts
  double mode(const Stats& s, CPPieceModel& M, std::size_t n, bool update, bool value, int threads) const {
    const std::size_t N = M.F.size() + 1;
    arma::mat& A = M.F[n - 1];
    const arma::uword k = A.n_rows, dn = A.n_cols;
    // the common Gram matrix, as CPWeights::gram() (the first mode's part
    // added over the pieces)
    arma::mat G(k, k, arma::fill::ones);
    G %= s.mat("G0");
    for (std::size_t m = 1; m < N; ++m) {
      if (m == n) continue;
      arma::mat Fv = M.F[m - 1];
      Fv.each_row() %= w_.v[m].t();
      G %= Fv * M.F[m - 1].t();
    }
    G *= w_.d;
    // the deviating cells by row of mode n (stable: the pieces' order)
    const arma::mat& D = s.mat("@dev");
    if (D.n_cols && D.n_rows != k + 2) throw std::logic_error("the pieces' deviating cells have the wrong size");
    PieceDeviations dev;
    dev.k = k;
    dev.ptr.assign(dn + 1, 0);
    for (arma::uword c = 0; c < D.n_cols; ++c) {
      const double i = D(0, c);
      if (!(i >= 0.0) || i >= static_cast<double>(dn)) throw std::logic_error("a deviating cell of no row");
      ++dev.ptr[static_cast<std::size_t>(i) + 1];
    }
    for (arma::uword i = 0; i < dn; ++i) dev.ptr[i + 1] += dev.ptr[i];
    dev.cols.resize(D.n_cols);
    {
      std::vector<std::size_t> next(dev.ptr.begin(), dev.ptr.end() - 1);
      for (arma::uword c = 0; c < D.n_cols; ++c) dev.cols[next[static_cast<std::size_t>(D(0, c))]++] = c;
    }
    dev.D = &D;
    return rule_.frobenius_rows(A, w_.v[n], s.mat("T"), G, dev, D.n_cols, N, update, value, threads);
  }
  // a row's deviating cells from the pieces' columns (see MemoryDeviations)
  struct PieceDeviations {
    arma::uword k = 0;
    std::vector<std::size_t> ptr, cols;
    const arma::mat* D = nullptr;
    void operator()(std::size_t i, std::vector<double>& zs, std::vector<double>& ezs, std::vector<double>& es,
                    std::vector<double>&) const {
      const std::size_t s0 = ptr[i], ne = ptr[i + 1] - s0;
      zs.resize(ne * k);
      ezs.resize(ne * k);
      es.resize(ne);
      for (std::size_t s = 0; s < ne; ++s) {
        const double* o = D->colptr(cols[s0 + s]);
        const double f = o[1];
        es[s] = f;
        for (arma::uword r = 0; r < k; ++r) {
          zs[r * ne + s] = o[2 + r];
          ezs[r * ne + s] = f * o[2 + r];
        }
      }
    }
  };
  const CPWeights& w_;
  CPWeightedMethod method_;
  double eps_;
  CPWeightedRule rule_;
  bool whole_, gram_;
};

}  // namespace aspectr

#endif
