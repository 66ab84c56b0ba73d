// aspectr/nmf/kl_cd.h — generalized-KL NMF by cyclic coordinate descent
// (Hsieh & Dhillon 2011): each entry of H, then of W, in turn gets
// projected Newton steps on its one-variable problem.
//
// With W fixed, column j of H solves its own problem (and row i of W the
// same one with the roles swapped):
//   min_{h >= 0} f(h) = sum_r c_r h_r + l2/2 |h|^2 - sum_s x_s log v_s,
//   v = G h,
// where s runs over the non-zeros x_s of the column, G (nz x k) holds the
// rows of W at those non-zeros and c_r = sum_i W_ir + l1 (the term
// sum_i v_i of the divergence, over every cell, is linear in h). Along one
// coordinate r, with g = G(:, r) and the current v,
//   f'(h_r)  = c_r + l2 h_r - sum_s g_s x_s / v_s,
//   f''(h_r) = l2 + sum_s g_s^2 x_s / v_s^2,
//   f'''     = -2 sum_s g_s^3 x_s / v_s^3 <= 0.
// A Newton step h_r <- max(0, h_r - f'/f'') that moves up never passes the
// minimizer (f'' only falls to the right) and lowers f. One that moves down
// by d < 0 may overshoot; since f'' is largest at the far end,
//   f(h_r + d) <= f(h_r) + f' d + f''(h_r + d) d^2 / 2,
// and the step is halved until this bound is negative. f''(h_r + d) comes
// with the pass that updates v, which the next step needs anyway. So each
// coordinate step, and each iteration, lowers the objective.
// Without penalties an iteration ends with the best scale of the model,
// H <- H sum X / sum WH (closed form, lowers the objective too), so that
// the fitted total equals that of X, as after a multiplicative update.
//
// The cost of a Newton step is one fused pass over the column's non-zeros
// (v += d g, then the two sums); a column first gathers G (nz k) and
// forms v = G h (nz k). The columns of H (then the rows of W) are solved
// independently and in parallel; each one's arithmetic depends only on its
// own data, so results do not depend on the number of threads. Dense data
// use every cell of a column (zeros add nothing) with G = W, no gather.
#ifndef ASPECTR_NMF_KL_CD_H
#define ASPECTR_NMF_KL_CD_H

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <vector>
#include "../logsum.h"
#include "../pieces.h"
#include "rules.h"

namespace aspectr {
namespace nmf {

// The kernels of KL coordinate descent: a side of the problem solved column
// by column (solve_side), one column (solve) and its passes (pass). The
// rule that alternates them, for a matrix in memory and for pieces of it,
// is nmf/piece.h's PieceKLCD.
class KLCD {
 public:
  // Solves every column of Out (k x d) given the fixed factor Ft (k x d':
  // Wt, or H when by_row, i.e. when the columns of Out are the rows of X),
  // with c = the row sums of Ft + l1 (or, cper given, column o's own
  // linear coefficients cper(:, o), k x d: a weighted loss, nmf/weighted.h).
  // xlogv (optional) += sum x log v of the result.
  static void solve_side(const Data& X, bool by_row, const arma::mat& Ft, arma::mat& Out,
                         const arma::vec& c, double l2, int sweeps, int newton, double* xlogv,
                         int threads, const arma::mat* cper = nullptr) {
    if (cper && (cper->n_rows != Out.n_rows || cper->n_cols != Out.n_cols))
      throw std::logic_error("KLCD: per-column coefficients of the wrong size");
    const std::size_t k = Out.n_rows, d = Out.n_cols;
    const bool dense = X.dense();
    if (by_row) X.need_rows();
    const Csc* A = dense ? nullptr : (by_row ? &X.St() : &X.S());
    arma::mat F;  // dense data: the fixed factor column-major (d' x k), G for every column
    std::size_t maxnz = 0;
    if (dense) {
      F = Ft.t();
      maxnz = F.n_rows;
    } else {
      for (std::size_t o = 0; o < d; ++o) maxnz = std::max<std::size_t>(maxnz, A->p[o + 1] - A->p[o]);
    }
    std::vector<double> logs(xlogv ? d : 0, 0.0);
    const double work = dense ? static_cast<double>(X.n_rows()) * X.n_cols() : static_cast<double>(X.S().nnz);
    const int T = effective_threads(threads, static_cast<std::size_t>(work * k / 8));
    dense::parallel_blocks(d, T, 4, [&](std::size_t b, std::size_t e) {
      // xbuf: a row of dense X gathered, or a column's values divided by
      // the stored matrix's div
      std::vector<double> v(maxnz), gbuf(dense ? 0 : maxnz * k),
          xbuf((dense && by_row) || (!dense && A->div != 1.0) ? maxnz : 0);
      for (std::size_t o = b; o < e; ++o) {
        const double* G;
        const double* x;
        std::size_t nz, ld;
        if (dense) {
          G = F.memptr(); ld = nz = F.n_rows;
          if (by_row) {  // row o of X, gathered
            const arma::mat& D = X.D();
            const double* p = D.memptr() + o;
            for (std::size_t j = 0; j < nz; ++j) xbuf[j] = p[j * D.n_rows];
            x = xbuf.data();
          } else {
            x = X.D().colptr(o);
          }
        } else {  // G (nz x k): the fixed factor at the column's non-zeros
          const std::size_t p0 = A->p[o];
          nz = ld = A->p[o + 1] - p0;
          const std::uint32_t* idx = A->i + p0;
          double* gb = gbuf.data();
          for (std::size_t s = 0; s < nz; ++s) {
            const double* f = Ft.colptr(idx[s]);
            for (std::size_t r = 0; r < k; ++r) gb[s + r * nz] = f[r];
          }
          G = gb;
          x = A->x + p0;
          if (A->div != 1.0) {
            for (std::size_t s = 0; s < nz; ++s) xbuf[s] = x[s] / A->div;
            x = xbuf.data();
          }
        }
        solve(G, ld, nz, x, Out.colptr(o), k, cper ? cper->colptr(o) : c.memptr(), l2, v.data(), sweeps, newton);
        if (xlogv) {
          LogSum ls;
          for (std::size_t s = 0; s < nz; ++s)
            if (x[s] > 0.0) ls.add(std::max(v[s], 1e-300), x[s], count_multiplicity(x[s]));
          logs[o] = ls.value();
        }
      }
    });
    if (xlogv) for (double l : logs) *xlogv += l;
  }

  // One column: v = G h, then `sweeps` passes of coordinate Newton steps.
  // v (nz) is a work array and holds G h for the final h on return.
  // A Newton step costs one pass over the non-zeros that updates v and
  // returns the sums the next step needs: those of the same coordinate, or
  // after a coordinate's last step those of the next coordinate (plus the
  // curvature at the new point for the decrease check).
  static void solve(const double* G, std::size_t ld, std::size_t nz, const double* x, double* h,
                    std::size_t k, const double* c, double l2, double* v, int sweeps, int newton) {
    std::fill(v, v + nz, 0.0);
    for (std::size_t r = 0; r < k; ++r) {
      const double hr = h[r];
      if (hr == 0.0) continue;
      const double* __restrict g = G + r * ld;
      double* __restrict vv = v;
#pragma omp simd
      for (std::size_t s = 0; s < nz; ++s) vv[s] += hr * g[s];
    }
    double a2, b1, b2;
    pass(G, 0.0, G, x, v, nz, a2, b1, b2);  // the sums of coordinate 0
    const std::size_t steps = static_cast<std::size_t>(sweeps) * k;
    for (std::size_t q = 0; q < steps; ++q) {
      const std::size_t r = q % k;
      const double* g = G + r * ld;
      const double* gn = q + 1 < steps ? G + ((r + 1) % k) * ld : nullptr;  // next coordinate
      double& hr = h[r];
      double grad = c[r] + l2 * hr - b1, hess = l2 + b2;
      bool next_ready = false;  // b1, b2 hold the next coordinate's sums
      for (int t = 0; t < newton; ++t) {
        double nw;
        if (hess > 0.0) nw = std::max(0.0, hr - grad / hess);
        else nw = grad > 0.0 ? 0.0 : hr;  // no data term: f is linear in h
        double d = nw - hr;
        if (!(d != 0.0) || !std::isfinite(d)) break;
        const bool last = t + 1 == newton;
        const double* want = last && gn ? gn : g;
        pass(g, d, want, x, v, nz, a2, b1, b2);
        double hess1 = l2 + a2;
        if (d < 0.0 && !(grad * d + 0.5 * hess1 * d * d <= 0.0)) {
          // halve the step until the bound guarantees a decrease (or undo it)
          int halvings = 0;
          double s1, s2, s3;
          do {
            const double back = ++halvings > 60 ? d : 0.5 * d;
            pass(g, -back, g, x, v, nz, s2, s1, s3);
            d -= back;
            hess1 = l2 + s2;
          } while (d != 0.0 && !(grad * d + 0.5 * hess1 * d * d <= 0.0));
          hr += d;
          break;  // the next coordinate's sums are computed below
        }
        hr = nw;
        if (last) { next_ready = gn != nullptr; break; }
        grad = c[r] + l2 * nw - b1; hess = l2 + b2;  // want == g
        if (std::fabs(d) <= 1e-10 * nw) break;
      }
      if (gn && !next_ready) pass(g, 0.0, gn, x, v, nz, a2, b1, b2);
    }
  }

  // One pass: v += d gd, then at the new v
  //   a2 = sum gd^2 x / v^2,  b1 = sum gn x / v,  b2 = sum gn^2 x / v^2,
  // with v floored at kFloor and every product formed as (g x / v) (g / v),
  // so that a zero x (dense data) gives 0, never 0 * inf, and a v near 0
  // at a non-zero x gives a huge (or infinite) curvature that only makes
  // the step shorter.
  static constexpr double kFloor = 1e-150;
  // one cell's terms of the sums (pass()'s scalar form; also the sharded
  // passes', nmf/shard.h)
  static inline void add_terms(double gd, double gn, double x, double v, double& sa, double& s1, double& s2) {
    const double inv = 1.0 / (v > kFloor ? v : kFloor);
    const double xi = x * inv, tn = gn * xi;
    sa += (gd * xi) * (gd * inv);
    s1 += tn;
    s2 += tn * (gn * inv);
  }
  static void pass(const double* __restrict gd, double d, const double* __restrict gn,
                   const double* __restrict x, double* __restrict v, std::size_t nz, double& a2,
                   double& b1, double& b2) {
    double sa = 0.0, s1 = 0.0, s2 = 0.0;
    std::size_t s = 0;
#if defined(__GNUC__) || defined(__clang__)
    // two-double vectors, two sets of accumulators (GCC does not vectorize
    // this loop by itself at -O2)
    using dense::v2;
    using dense::load;
    const v2 dd = dense::bcast(d), lo = dense::bcast(kFloor), one = dense::bcast(1.0);
    // named accumulators, not arrays: GCC keeps small arrays in memory at -O2
    v2 a0 = dense::bcast(0.0), a1 = a0, b0 = a0, b1v = a0, c0 = a0, c1 = a0;
    for (; s + 4 <= nz; s += 4) {
      const v2 g0 = load(gd + s), h0 = load(gn + s), x0 = load(x + s);
      const v2 g1 = load(gd + s + 2), h1 = load(gn + s + 2), x1 = load(x + s + 2);
      const v2 v0 = load(v + s) + dd * g0, v1 = load(v + s + 2) + dd * g1;
      dense::store(v + s, v0);
      dense::store(v + s + 2, v1);
      const v2 i0 = one / (v0 > lo ? v0 : lo), i1 = one / (v1 > lo ? v1 : lo);
      const v2 xi0 = x0 * i0, xi1 = x1 * i1;
      const v2 t0 = h0 * xi0, t1 = h1 * xi1;
      a0 += (g0 * xi0) * (g0 * i0);
      a1 += (g1 * xi1) * (g1 * i1);
      b0 += t0;
      b1v += t1;
      c0 += t0 * (h0 * i0);
      c1 += t1 * (h1 * i1);
    }
    sa = dense::hsum(a0 + a1);
    s1 = dense::hsum(b0 + b1v);
    s2 = dense::hsum(c0 + c1);
#endif
    for (; s < nz; ++s) {
      const double vs = v[s] + d * gd[s];
      v[s] = vs;
      add_terms(gd[s], gn[s], x[s], vs, sa, s1, s2);
    }
    a2 = sa; b1 = s1; b2 = s2;
  }

};

// KLCD::solve() for every column of H at once, with the passes over the
// data left to the caller: data split by rows into shards, each of which
// holds its rows of W and adds its part of every column's sums. A column's
// steps are those of solve(), in the same order, each waiting for the sums
// of the pass before it; all columns advance together, so one pass over
// the shards serves every column (columns whose coordinates need
// different passes ask for their own).
//
// A pass, for column j: v = G h over the column's non-zeros (G: the rows of
// W there) is moved by d[j] along coordinate rd[j] (v += d g_rd), or made
// G hv when `reset` (or when the caller keeps no v), and then
//   a2 = sum g_rd^2 x / v^2,  b1 = sum g_rn x / v,  b2 = sum g_rn^2 x / v^2
// are summed (as KLCD::pass()). rd[j] < 0: the column is solved. hv holds
// the coefficients v stands for after the pass.
class KLCDColumns {
 public:
  KLCDColumns(const arma::mat& H, const arma::vec& c, double l2, int sweeps, int newton)
      : H_(H), hv_(H), c_(c), l2_(l2), sweeps_(sweeps), newton_(newton), col_(H.n_cols),
        rd(H.n_cols, 0), rn(H.n_cols, 0), d(H.n_cols, 0.0) {
    if (c.n_elem != H.n_rows || sweeps < 1 || newton < 1)
      throw std::invalid_argument("KLCDColumns: bad sizes or counts");
  }
  // each column j with its own linear coefficients cper(:, j) (k x n: a
  // weighted loss, nmf/weighted.h), as KLCD::solve_side() with cper
  KLCDColumns(const arma::mat& H, const arma::mat& cper, double l2, int sweeps, int newton)
      : H_(H), hv_(H), cper_(cper), l2_(l2), sweeps_(sweeps), newton_(newton), col_(H.n_cols),
        rd(H.n_cols, 0), rn(H.n_cols, 0), d(H.n_cols, 0.0) {
    if (cper.n_rows != H.n_rows || cper.n_cols != H.n_cols || sweeps < 1 || newton < 1)
      throw std::invalid_argument("KLCDColumns: bad sizes or counts");
  }
  // The sums of the pass asked for (nullptr before the first pass); sets
  // rd, rn, d and reset for the next one and returns false when every
  // column is solved.
  bool next(const double* a2, const double* b1, const double* b2) {
    const std::size_t n = H_.n_cols;
    if (started_ && (a2 == nullptr || b1 == nullptr || b2 == nullptr))
      throw std::invalid_argument("KLCDColumns: a pass without its sums");
    if (!started_) {
      started_ = true;
      reset = true;  // v = G h, then the sums of coordinate 0
      std::fill(rd.begin(), rd.end(), 0);
      std::fill(rn.begin(), rn.end(), 0);
      std::fill(d.begin(), d.end(), 0.0);
      for (std::size_t j = 0; j < n; ++j) col_[j].phase = kFirst;
      passes_ = n > 0 && H_.n_rows > 0 ? 1 : 0;
      return passes_ > 0;
    }
    reset = false;
    bool any = false;
    for (std::size_t j = 0; j < n; ++j) {
      if (col_[j].phase != kDone) advance(j, a2[j], b1[j], b2[j]);
      any = any || col_[j].phase != kDone;
    }
    if (any) ++passes_;
    return any;
  }
  const arma::mat& H() const { return H_; }
  const arma::mat& hv() const { return hv_; }
  // the passes asked for so far, and those that halved a step
  std::size_t passes() const { return passes_; }
  std::size_t halved() const { return halved_; }
  std::vector<int> rd, rn;
  std::vector<double> d;
  bool reset = false;

 private:
  enum Phase { kFirst, kNewton, kHalve, kNext, kDone };
  struct Col {
    Phase phase = kFirst;
    std::size_t q = 0;  // the step: coordinate q % k of sweep q / k
    int t = 0;          // Newton step of the coordinate
    int halvings = 0;
    bool last = false, next_ready = false;
    double grad = 0.0, hess = 0.0, nw = 0.0, step = 0.0, back = 0.0, b1 = 0.0, b2 = 0.0;
  };
  std::size_t k() const { return H_.n_rows; }
  long next_coord(const Col& s) const {
    return s.q + 1 < static_cast<std::size_t>(sweeps_) * k() ? static_cast<long>((s.q % k() + 1) % k()) : -1;
  }
  void ask(std::size_t j, Phase ph, std::size_t r, double dd, long want) {
    Col& s = col_[j];
    s.phase = ph;
    rd[j] = static_cast<int>(r);
    rn[j] = static_cast<int>(want);
    d[j] = dd;
    hv_(r, j) += dd;
  }
  // the coordinate's first Newton step, from the sums of its pass
  void begin(std::size_t j) {
    Col& s = col_[j];
    const std::size_t r = s.q % k();
    s.grad = (cper_.n_elem ? cper_(r, j) : c_[r]) + l2_ * H_(r, j) - s.b1;
    s.hess = l2_ + s.b2;
    s.t = 0;
    s.next_ready = false;
    newton(j);
  }
  void newton(std::size_t j) {
    Col& s = col_[j];
    const std::size_t r = s.q % k();
    if (s.t >= newton_) { end_coordinate(j); return; }
    const double hr = H_(r, j);
    double nw;
    if (s.hess > 0.0) nw = std::max(0.0, hr - s.grad / s.hess);
    else nw = s.grad > 0.0 ? 0.0 : hr;
    const double dd = nw - hr;
    if (!(dd != 0.0) || !std::isfinite(dd)) { end_coordinate(j); return; }
    s.last = s.t + 1 == newton_;
    const long gn = next_coord(s);
    s.nw = nw;
    s.step = dd;
    ask(j, kNewton, r, dd, s.last && gn >= 0 ? gn : static_cast<long>(r));
  }
  void halve(std::size_t j) {
    Col& s = col_[j];
    ++halved_;
    s.back = ++s.halvings > 60 ? s.step : 0.5 * s.step;
    ask(j, kHalve, s.q % k(), -s.back, static_cast<long>(s.q % k()));
  }
  void end_coordinate(std::size_t j) {
    Col& s = col_[j];
    const std::size_t r = s.q % k();
    hv_(r, j) = H_(r, j);  // v stands for h again (up to the rounding of its steps)
    const long gn = next_coord(s);
    if (gn >= 0 && !s.next_ready) { ask(j, kNext, r, 0.0, gn); return; }
    next_step(j);
  }
  void next_step(std::size_t j) {
    Col& s = col_[j];
    if (++s.q >= static_cast<std::size_t>(sweeps_) * k()) {
      s.phase = kDone;
      rd[j] = -1;
      rn[j] = -1;
      d[j] = 0.0;
      return;
    }
    begin(j);
  }
  void advance(std::size_t j, double a2, double b1, double b2) {
    Col& s = col_[j];
    const std::size_t r = s.q % k();
    switch (s.phase) {
      case kFirst:
      case kNext:
        s.b1 = b1;
        s.b2 = b2;
        if (s.phase == kFirst) begin(j); else next_step(j);
        return;
      case kNewton: {
        s.b1 = b1;
        s.b2 = b2;
        const double hess1 = l2_ + a2, dd = s.step;
        if (dd < 0.0 && !(s.grad * dd + 0.5 * hess1 * dd * dd <= 0.0)) {
          s.halvings = 0;
          halve(j);
          return;
        }
        H_(r, j) = s.nw;
        if (s.last) {
          s.next_ready = next_coord(s) >= 0;
          end_coordinate(j);
          return;
        }
        s.grad = c_[r] + l2_ * s.nw - b1;
        s.hess = l2_ + b2;
        if (std::fabs(dd) <= 1e-10 * s.nw) { end_coordinate(j); return; }
        ++s.t;
        newton(j);
        return;
      }
      case kHalve: {
        s.step -= s.back;
        const double hess1 = l2_ + a2, dd = s.step;
        if (dd != 0.0 && !(s.grad * dd + 0.5 * hess1 * dd * dd <= 0.0)) { halve(j); return; }
        H_(r, j) += dd;
        end_coordinate(j);
        return;
      }
      case kDone:
        return;
    }
  }

  arma::mat H_, hv_;
  arma::vec c_;
  arma::mat cper_;
  double l2_;
  int sweeps_, newton_;
  std::vector<Col> col_;
  bool started_ = false;
  std::size_t passes_ = 0, halved_ = 0;
};

}  // namespace nmf

// The rows of a factor shared by the pieces (A, k x d: their iterate, one
// column a row) solved by KLCDColumns with linear coefficients c (k values,
// or k x d: one column each) and L2 penalty l2, every Newton pass of all
// the rows a request to the pieces: make() (the rule's request, its mode
// named where it has modes) with the pass's coordinates ("rd", "rn"),
// steps ("d") and, at a reset or when a piece keeps no v, iterate ("hv"),
// whose summed "sums" (3 x d: a2, b1, b2) drive the next step. Returns the
// rows. Written once for every rule that solves a shared factor so: nmf()'s
// H (piece.h PieceKLCD, weighted.h), a mode of the aspect model and of
// weighted CP (solvers/cd_pieces.h, solvers/cp_weighted_pieces.h).
//
// `own(St, solver)`, when given, adds to the summed sums (St, d x 3) those
// of cells the master holds itself (a prior's pseudo-cells,
// PieceKLCDTensor) for the pass the solver asked for (its rd, rn and hv()).
template <class Coef, class MakeRequest, class Own>
inline arma::mat kcd_mode_by_passes(const Pieces& P, const arma::mat& A, const Coef& c, double l2, MakeRequest make,
                                    Own own) {
  const arma::uword d = A.n_cols;
  nmf::KLCDColumns solver(A, c, l2, 1, 1);
  arma::mat rd(1, d), rn(1, d), dm(1, d);
  bool more = solver.next(nullptr, nullptr, nullptr);
  bool nokeep = true;  // (a piece that keeps no v: hv with every pass; learnt at the first, a reset)
  while (more) {
    for (arma::uword j = 0; j < d; ++j) {
      rd[j] = solver.rd[j];
      rn[j] = solver.rn[j];
      dm[j] = solver.d[j];
    }
    Request r = make();
    r.view("rd", rd).view("rn", rn).view("d", dm).with("reset", solver.reset ? 1.0 : 0.0);
    if (solver.reset || nokeep) r.view("hv", solver.hv());
    const Stats s = P.map(r);
    if (solver.reset) nokeep = s.num("nokeep", 0.0) > 0.0;
    arma::mat St = s.mat("sums").t();
    if (St.n_rows != d || St.n_cols != 3) throw std::logic_error("a pass's sums of the wrong size");
    own(St, solver);
    more = solver.next(St.colptr(0), St.colptr(1), St.colptr(2));
  }
  return solver.H();
}
template <class Coef, class MakeRequest>
inline arma::mat kcd_mode_by_passes(const Pieces& P, const arma::mat& A, const Coef& c, double l2, MakeRequest make) {
  return kcd_mode_by_passes(P, A, c, l2, make, [](arma::mat&, const nmf::KLCDColumns&) {});
}

// A shared mode's problem in one iteration of kcd_iteration(): a_n (k x
// d_n) where it is solved (`A`: the rule's own `held`, or the model's
// factor itself, which the requests also see) and its linear coefficients,
// one per row (c) or one column each (cper, when `per`), with L2 penalty
// l2. Filled in place (A may point at held).
struct KCDMode {
  arma::mat held;
  arma::mat* A = nullptr;
  arma::vec c;
  arma::mat cper;
  bool per = false;
  double l2 = 0.0;
};

// What a rule of kcd_iteration() does where its model asks for nothing of
// its own; a rule derives from it and declares only what differs. No
// guard, and the shared modes before the rows; nothing kept for an undo;
// one shared mode; no column pieces; the pieces' own "kcd_pass"; no cells
// held by the rule; nothing after a mode.
struct KCDRuleDefaults {
  static constexpr bool kGuard = false, kRowsFirst = false;
  template <class Model>
  void kcd_save(const Pieces&, Model&, bool) {}
  template <class Model>
  void kcd_restore(const Pieces&, Model&) {}
  template <class Model>
  std::size_t kcd_modes(const Model&) const {
    return 1;
  }
  template <class Model>
  bool kcd_columns(const Pieces&, Model&, std::size_t, KCDMode&) const {
    return false;
  }
  template <class Model>
  Request kcd_pass(const Model&, std::size_t) const {
    return Request("kcd_pass");
  }
  void kcd_own(arma::mat&, const nmf::KLCDColumns&, std::size_t) const {}
  template <class Model>
  void kcd_leave(const Pieces&, Model&, std::size_t, KCDMode&) {}
};

// One iteration of KL coordinate descent on data in pieces, written once
// for every model fitted by it: nmf()'s matrices (nmf/piece.h PieceKLCD;
// with cell weights, nmf/weighted.h WeightedNMF), the aspect model of
// matrices and N-way data with its priors (solvers/cd_pieces.h
// PieceKLCDTensor) and weighted CP (solvers/cp_weighted_pieces.h
// CPWeightedPiecesCD). The factor split by rows is solved where its rows
// are (rule.kcd_rows()); every shared mode n = 1 .. rule.kcd_modes(M) is
// solved whole: by the one piece holding every cell (the data in memory:
// rule.kcd_whole(), rule.kcd_solve_whole()), by column pieces
// (rule.kcd_columns(), where the rule and the data have them), or else by
// KLCDColumns' Newton passes over the pieces (kcd_mode_by_passes, each
// pass rule.kcd_pass(M, n)'s request; cells the rule holds itself, a
// prior's pseudo-cells, added by rule.kcd_own()). The rules differ in
// what they solve for: the linear terms (kcd_enter()), the scale or
// normalization after each mode (kcd_leave()), whether the rows come
// first (Rule::kRowsFirst) or after the shared modes, and the value
// (kcd_value()). A rule with Rule::kGuard undoes a step that rounding made
// worse than `prev`, the value entering it (no_rise(), control.h):
// kcd_save() keeps what kcd_restore() puts back.
template <class Rule, class Model>
double kcd_iteration(Rule& rule, const Pieces& P, Model& M, double prev) {
  const bool guard = Rule::kGuard && std::isfinite(prev);
  rule.kcd_save(P, M, guard);
  if (Rule::kRowsFirst) rule.kcd_rows(P, M);
  const bool whole = rule.kcd_whole(P, M);
  const std::size_t S = rule.kcd_modes(M);
  for (std::size_t n = 1; n <= S; ++n) {
    KCDMode m;
    rule.kcd_enter(P, M, n, whole, m);
    if (m.A == nullptr) throw std::logic_error("coordinate descent: a mode without its factor");
    if (whole) {
      rule.kcd_solve_whole(P, M, n, m);
    } else if (!rule.kcd_columns(P, M, n, m)) {
      auto make = [&] { return rule.kcd_pass(M, n); };
      auto own = [&](arma::mat& St, const nmf::KLCDColumns& sv) { rule.kcd_own(St, sv, n); };
      *m.A = m.per ? kcd_mode_by_passes(P, *m.A, m.cper, m.l2, make, own)
                   : kcd_mode_by_passes(P, *m.A, m.c, m.l2, make, own);
    }
    rule.kcd_leave(P, M, n, m);
  }
  if (!Rule::kRowsFirst) rule.kcd_rows(P, M);
  double value = rule.kcd_value(P, M);
  if (guard && !no_rise(value, prev)) {
    rule.kcd_restore(P, M);
    value = prev;
  }
  return value;
}

}  // namespace aspectr

#endif
