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
#include "em.h"

namespace aspectr {

class KLCDRule {
 public:
  // counts: the raw data values (G = counts / total), whose whole values make
  // the logs of the trace cheap (see logsum.h); the steps work on G.
  explicit KLCDRule(const arma::vec* counts = nullptr, double total = 0.0, int sweeps = 1,
                    int newton = 1)
      : counts_(counts), total_(total), sweeps_(sweeps), newton_(newton), em_(1.0, counts, total) {}
  static constexpr bool kLagged = false;

  // Groupings not in the data's own order keep 32-bit positions of the
  // cells (4 bytes a cell) up to this many cells; above, the cells' other
  // indices and values are copied in that order (12 bytes a cell for a
  // matrix). The same numbers either way. Set before bind().
  void set_position_limit(std::size_t n) {
    pos_limit_ = std::min<std::size_t>(n, std::numeric_limits<std::uint32_t>::max());
  }

  void bind(const SparseTensor& G) { prepare(G); }

  // One iteration. `prev`, when given, is the loss of M (the value the
  // previous step returned, or loss()): a step that rounding made worse is
  // undone. The rule keeps no state of its own between steps, so after
  // bind() it may serve several models at once (multistart.h).
  double step(const SparseTensor& G, AspectModel& M, int threads) {
    return step(G, M, threads, std::numeric_limits<double>::quiet_NaN());
  }
  double step(const SparseTensor& G, AspectModel& M, int threads, double prev) {
    prepare(G);
    const std::size_t N = M.order();
    const arma::uword k = M.rank();
    // the Newton steps work on G (so that a rescaled x gives the same
    // arithmetic); the counts (the stored values, then) only make the logs
    // of the trace cheap
    const bool scaled = G.scaled();
    const double ga = G.inv_top, gsc = G.inv_sum;
    const arma::vec ones(k, arma::fill::ones);
    // the entering model, kept to undo a step that rounding made worse
    const bool guard = std::isfinite(prev);
    AspectModel entering;
    if (guard) entering = M;
    double xlogv = 0.0, T = 0.0;
    for (std::size_t n = 0; n < N; ++n) {
      const arma::uword d = G.dims[n];
      // a_n = lambda_r U_n(:, r), k x d (one contiguous row problem per index)
      arma::mat A = M.F[n];
      A.each_col() %= M.lambda;
      const Group& grp = grp_[n];
      const std::vector<std::size_t>& ptr = grp.ptr;
      const index_t* oth = grp.oth;
      const std::size_t stride = grp.stride;
      const std::size_t* off = grp.off.data();
      const double* gv = grp.val;
      const std::uint32_t* pos = grp.pos.empty() ? nullptr : grp.pos.data();
      const double* cnt = use_counts_ ? gv : nullptr;
      const std::size_t maxnz = grp.maxnz;
      const bool last = n + 1 == N;
      std::vector<double> logs(last ? d : 0, 0.0);
      const int Tn = effective_threads(threads, G.nnz() * k / 8);
      // with a prior: the linear coefficients and pseudo-cells of the rows'
      // majorizers (see set_prior())
      PriorRows pr;
      if (prior_ != nullptr) prior_rows(M, A, n, pr);
      const bool with_prior = prior_ != nullptr;
      std::vector<const arma::mat*> others;
      for (std::size_t m = 0; m < N; ++m) if (m != n) others.push_back(&M.F[m]);
      const std::size_t No = others.size();
      nmf::dense::parallel_blocks(d, Tn, 4, [&](std::size_t b, std::size_t e) {
        const std::size_t extra = with_prior ? k : 0;
        std::vector<double> v(maxnz + extra), gb((maxnz + extra) * k), xs(scaled || pos ? maxnz : 0),
            cs(pos && cnt ? maxnz : 0), xp(extra ? maxnz + extra : 0), coef(extra ? k : 0);
        for (std::size_t i = b; i < e; ++i) {
          const std::size_t p0 = ptr[i], nz = ptr[i + 1] - p0;
          // this index's values of G (xb) and counts (cb), contiguous
          const double* xb = gv + p0;
          const double* cb = cnt ? cnt + p0 : nullptr;
          if (pos) {  // gathered from their positions
            const std::uint32_t* q = pos + p0;
            for (std::size_t t = 0; t < nz; ++t) xs[t] = scaled ? gv[q[t]] * ga * gsc : gv[q[t]];
            if (cnt) {
              for (std::size_t t = 0; t < nz; ++t) cs[t] = cnt[q[t]];
              cb = cs.data();
            }
            xb = xs.data();
          } else if (scaled) {  // the values of G from the stored ones
            for (std::size_t t = 0; t < nz; ++t) xs[t] = xb[t] * ga * gsc;
            xb = xs.data();
          }
          // pseudo-cells of a prior (their G rows unit vectors) after the
          // row's cells: ld rows in all
          std::size_t np = 0;
          const double* pseudo = nullptr;
          if (with_prior && !(n == 0 && nz == 0)) {
            pseudo = pr.cells.colptr(n == 0 ? 0 : i);
            for (arma::uword r = 0; r < k; ++r) np += pseudo[r] > 0.0;
          }
          const std::size_t ld = nz + np;
          // G (nz x k, column-major): the other modes' product at each cell
          // (cell t's other indices at oth[c * stride + off[j]], c its
          // position: t + p0, or pos[t + p0])
          for (std::size_t t = 0; t < nz; ++t) {
            const index_t* ix = oth + (pos ? static_cast<std::size_t>(pos[p0 + t]) : p0 + t) * stride;
            const double* f = others[0]->colptr(ix[off[0]]);
            for (arma::uword r = 0; r < k; ++r) gb[t + r * ld] = f[r];
            for (std::size_t m = 1; m < No; ++m) {
              const double* fm = others[m]->colptr(ix[off[m]]);
              for (arma::uword r = 0; r < k; ++r) gb[t + r * ld] *= fm[r];
            }
          }
          const double* c = ones.memptr();
          const double* xr = xb;
          if (with_prior) {
            if (np > 0) {
              std::copy(xb, xb + nz, xp.begin());
              std::size_t t = nz;
              for (arma::uword j = 0; j < k; ++j) {
                if (!(pseudo[j] > 0.0)) continue;
                for (arma::uword r = 0; r < k; ++r) gb[t + r * ld] = r == j ? 1.0 : 0.0;
                xp[t++] = pseudo[j];
              }
              xr = xp.data();
            }
            if (n == 0) {
              std::fill(coef.begin(), coef.end(), nz > 0 ? pr.coef[i] : 1.0);
              c = coef.data();
            } else {
              c = pr.coef.memptr();
            }
          }
          nmf::KLCD::solve(gb.data(), ld, ld, xr, A.colptr(i), k, c, 0.0,
                           v.data(), sweeps_, newton_);
          if (last) {
            LogSum ls;
            if (cb) {  // sum c log v, c = S g
              for (std::size_t t = 0; t < nz; ++t) ls.add(std::max(v[t], 1e-300), cb[t], count_multiplicity(cb[t]));
            } else {
              for (std::size_t t = 0; t < nz; ++t) ls.add(std::max(v[t], 1e-300), xb[t], 0);
            }
            logs[i] = ls.value();
          }
        }
      });
      if (last) for (double l : logs) xlogv += l;
      // split a_n back into weights and columns on the simplex
      const arma::vec mass = arma::sum(A, 1);
      T = arma::accu(mass);
      if (!(T > 0.0) || !std::isfinite(T))
        throw std::runtime_error("coordinate descent: the model vanished (no positive mass left)");
      for (arma::uword r = 0; r < k; ++r) {
        if (mass[r] > 0.0) M.F[n].row(r) = A.row(r) / mass[r];
        // a column without mass keeps its old profile, with weight 0
      }
      M.lambda = mass / T;
    }
    // P = m / T with m the model of G: D(G || P) = sum g log g - sum g log m
    // + log T, where sum g log m = (1/S) sum c log m with counts c
    double value = glogg_ - (use_counts_ ? xlogv / total_ : xlogv) + std::log(T) + em_.penalty(M);
    // The iteration cannot increase the divergence, but at an exact fit the
    // divergence is 0 up to the rounding of its terms (each of size log nnz),
    // and the Newton steps jitter there: keep the entering model then.
    if (guard && value > prev) {
      M = std::move(entering);
      value = prev;
    }
    return value;
  }

  // MAP estimation with Dirichlet pseudo-counts (a matrix only; the prior
  // must outlive the rule): the objective is then D(G || P) plus the
  // prior's penalty (prior.h), the negative log posterior over the total
  // count. With the other mode fixed, the model's total free and the
  // penalty (invariant to that total) added, the mode's problem still
  // bounds the objective from above with equality at the entering model,
  // as above, but its rows are coupled and not convex through the
  // normalizers of theta and phi. Each iteration minimizes a majorizer
  // instead, equal at the entering model (J0 its joint), so the
  // objective still never increases:
  //  * documents (row d, J = P(d, .)): -sum a_z log J_z is convex (k
  //    pseudo-cells a_z with unit-vector rows of G);
  //    (sum a) log sum_z J_z is concave, bounded by its tangent at J0: the
  //    linear coefficient 1 + sum a / sum J0.
  //  * terms (row w, J = lambda o phi(w, .)), with lambda_z = sum_w J_wz and
  //    s_d = sum_z lambda_z U_dz: the penalty is
  //    -sum b log J + sum_z (B_z - D a_z) log lambda_z + (sum a) sum_d log s_d
  //    (B_z = sum_w b_zw, D the documents with mass). Concave pieces by
  //    their tangents (linear coefficients (sum a) sum_d U_dz / s0_d and,
  //    where B_z > D a_z, (B_z - D a_z) / lambda0_z); where D a_z > B_z,
  //    -(D a_z - B_z) log lambda_z by Jensen's bound with weights
  //    phi0(w, z): pseudo-cells b_zw + (D a_z - B_z) phi0(w, z).
  void set_prior(const DirichletPrior* p) {
    prior_ = p != nullptr && p->any() ? p : nullptr;
    em_.set_prior(prior_);
  }

  // The KL divergence of M (the same formula as the EM trace; with a
  // prior, plus its penalty).
  double loss(const SparseTensor& G, const AspectModel& M, int threads) { return em_.loss(G, M, threads); }

 private:
  void prepare(const SparseTensor& G) {
    if (prepared_) return;
    prepared_ = true;
    if (G.has_missing())
      throw std::invalid_argument("coordinate descent needs fully observed cells (use EM)");
    em_.loss_only();
    em_.bind(G);  // for loss(), which may then serve several models at once
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

  // the majorizers' coefficients and pseudo-cells of one mode (set_prior())
  struct PriorRows {
    arma::vec coef;   // documents: one per row; terms: one per topic
    arma::mat cells;  // pseudo-cells: documents k x 1, terms k x n_terms
  };
  void prior_rows(const AspectModel& M, const arma::mat& J, std::size_t n, PriorRows& pr) const {
    if (M.order() != 2) throw std::invalid_argument("a prior needs a matrix");
    const arma::uword k = M.rank();
    const DirichletPrior& P = *prior_;
    if (n == 0) {
      const arma::rowvec s0 = arma::sum(J, 0);
      pr.coef.set_size(J.n_cols);
      for (arma::uword d = 0; d < J.n_cols; ++d) pr.coef[d] = P.document_coef(s0[d]);
      pr.cells = P.doc.is_empty() ? arma::vec(k, arma::fill::zeros) : P.doc;
      return;
    }
    arma::vec colw(k, arma::fill::zeros);
    double Dm = 0.0;
    DirichletPrior::document_sums(M.lambda, M.F[0], colw, Dm);
    P.term_majorizer(M.lambda, colw, Dm, M.F[1], pr.coef, pr.cells);
    // (pseudo-cells of row w: column w of a k x n_terms matrix)
  }

  const DirichletPrior* prior_ = nullptr;
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

}  // namespace aspectr

#endif
