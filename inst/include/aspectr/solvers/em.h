// aspectr/solvers/em.h — EM and tempered EM for the KL aspect model.
//
// Update rule (Hofmann 1999; Huang and Sidiropoulos, eqs. 10-14). With the posterior
//   W_s^r = (lambda_r prod_n U_n(i_n, r))^beta / sum_j (lambda_j prod_n U_n(i_n, j))^beta
// (beta = 1: plain EM; beta < 1: tempered EM), the M-step is
//   y_n(i, r) = sum_{s: i_n = i} g_s W_s^r,  U_n(:, r) = y_n(:, r) / lambda_r,
//   lambda_r = sum_i y_n(i, r).
// Writing t_s = g_s / sum_j (...)^beta, y_n = H_n o MTTKRP(t, {H_m}), with
// H_m = U_m^beta (lambda^beta folded into mode 0), so one pass over the
// non-zeros serves every mode: O(nnz * N * k) per iteration.
// Plain EM never increases D(G || P); the loss returned is D(G || P) of the
// model entering the step (the pass computes it for free).
#ifndef ASPECTR_SOLVERS_EM_H
#define ASPECTR_SOLVERS_EM_H

#include <algorithm>
#include <cstdint>
#include <stdexcept>
#include <vector>
#include "../logsum.h"
#include "../loss.h"
#include "normalize.h"
#include "prior.h"

#include "../unroll.h"

// The fixed-size loops over k in posterior_pass are unrolled (ASPECTR_UNROLL):
// at -O2 GCC keeps w[] in memory otherwise (a load-multiply-store chain per
// mode, about 3x slower at k = 8).

namespace aspectr {

class EMRule {
 public:
  // counts: the raw data values (G = counts / total), used to evaluate the
  // KL divergence of count data without a log per non-zero (see logsum.h).
  explicit EMRule(double beta = 1.0, const arma::vec* counts = nullptr, double total = 0.0)
      : beta_(beta), counts_(counts), total_(total) {}

  // The E-step: the M-step's sufficient statistics y_n (k x d_n, one per
  // mode; row r of y_n sums over the cells to the posterior mass of
  // component r) and `lam`, the posterior sums (the new weights, before
  // normalization); returns D(G || P) of M and sets *merit (when not null)
  // to the function the EM step never increases: D(G || P) for plain EM;
  // for tempered EM the tempered free energy minimized over the
  // posteriors, L_beta = -(1/beta) sum_s g_s log sum_r (lambda_r prod_n
  // U_n(i_n, r))^beta (the E-step minimizes the free energy sum_s g_s
  // sum_r q_r (-log P_r) + (1/beta) sum_s g_s sum_r q_r log q_r over q,
  // giving L_beta; the M-step minimizes its first term over the model).
  // SQUAREM's safeguard compares it (squarem.h).
  // Every statistic is a sum over the non-zeros, so data split by cells
  // (shards of documents, sharing the other modes) give their sums, which
  // the pieces' reduce adds (pieces.h); the M-step is PieceEM's
  // (pieces_em.h: the shared modes and the weights; each piece its
  // documents, by the row sums over all pieces), of the data in memory too
  // (one piece, pieces_memory.h).
  double estep(const SparseTensor& G, const AspectModel& M, int threads, double* merit,
               std::vector<arma::mat>& Y, arma::vec& lam) {
    prepare(G);
    Pass P;
    pass_begin(M, G.dims, missing_, P);
    pass_add(G, M, threads, P);
    return pass_end(P, merit, Y, lam);
  }

  // An E-step's accumulators. estep() makes one pass over all the cells; a
  // shard file read a chunk at a time gives its cells in pieces instead:
  // pass_begin(), then for every piece next_piece() and pass_add(), then
  // pass_end(), with the sums of one pass over all the cells.
  struct Pass {
    bool posterior = false;  // posterior_pass's form (rows padded, a column of ones)
    bool missing = false;    // cells may miss modes
    bool fast_log = false;   // the objective by LogSum (sum g log g added at the end)
    std::vector<arma::mat> H, A;
    arma::vec lb;            // lambda^beta (MTTKRP form) or lambda, padded (posterior form)
    double value = 0.0, lg = 0.0;
    arma::uword k = 0, kp = 0;
    bool in_workspace = false;  // H and A in a Workspace's memory
    std::vector<std::vector<arma::mat>> threads;  // the other threads' A, over the pieces
  };

  // Plain EM on tensors of order > 3 or with missing modes (latent class
  // analysis) accumulates the posteriors directly (see posterior_pass);
  // otherwise H_n = U_n^beta (lambda^beta folded into H_0) and the MTTKRP
  // accumulators A_n (and A_N, the weights, needed separately when some
  // cells miss mode 0).
  // (`ws`, when given: in the MTTKRP form, the copies and accumulators
  // live in its memory, kept by the caller from one pass to the next, and
  // the statistics stay there, read by pass_finish() instead of pass_end())
  void pass_begin(const AspectModel& M, const std::vector<arma::uword>& dims, bool missing, Pass& P,
                  Workspace* ws = nullptr) const {
    const std::size_t N = M.order();
    const arma::uword k = M.rank();
    P.k = k;
    P.missing = missing;
    P.posterior = beta_ == 1.0 && (N > 3 || missing);
    P.value = P.lg = 0.0;
    P.in_workspace = false;
    P.threads.clear();
    P.H.assign(N, arma::mat());
    P.A.assign(N + 1, arma::mat());
    if (P.posterior) {
      // factor copies with a column of ones appended; accumulators
      // likewise. Up to k = 16 the rows are padded to kp = 2, 4, 8, 12 or
      // 16 (padding rows of zeros, and lambda 0 there, so they add exact
      // zeros): whole SIMD vectors and a compile-time loop length (odd k
      // was 2-5x slower per cell without).
      const arma::uword kp = k <= 2 ? 2 : k <= 16 ? (k + 3) / 4 * 4 : k;
      P.kp = kp;
      for (std::size_t n = 0; n < N; ++n) {
        P.H[n].zeros(kp, dims[n] + 1);
        P.H[n].submat(0, 0, k - 1, dims[n] - 1) = M.F[n];
        P.H[n].col(dims[n]).ones();
        P.A[n].zeros(kp, dims[n] + 1);
      }
      P.A[N].zeros(kp, 1);
      P.lb.zeros(kp);
      P.lb.head(k) = M.lambda;
      return;
    }
    P.kp = k;
    std::size_t slot = 0;
    // a k x d matrix of the workspace's (filled by the caller)
    auto place = [&](arma::mat& m, arma::uword d) {
      m = arma::mat(ws->get(slot++, static_cast<std::size_t>(k) * d), k, d, false, true);
    };
    for (std::size_t n = 0; n < N; ++n) {
      // (plain EM reads the factors of the modes after the first in place)
      if (n > 0 && beta_ == 1.0) {
        P.H[n] = arma::mat(const_cast<double*>(M.F[n].memptr()), M.F[n].n_rows, M.F[n].n_cols, false, true);
      } else if (ws != nullptr) {
        place(P.H[n], dims[n]);
        if (beta_ == 1.0) P.H[n] = M.F[n];
        else P.H[n] = arma::pow(M.F[n], beta_);
      } else {
        P.H[n] = beta_ == 1.0 ? M.F[n] : arma::pow(M.F[n], beta_);
      }
      if (ws != nullptr) {
        place(P.A[n], dims[n]);
        P.A[n].zeros();
      } else {
        P.A[n].zeros(k, dims[n]);
      }
    }
    P.lb = beta_ == 1.0 ? M.lambda : arma::pow(M.lambda, beta_);
    P.H[0].each_col() %= P.lb;
    P.A[N].zeros(k, 1);
    P.in_workspace = ws != nullptr;
  }

  // The cells of G added to the pass (G's values and counts those bound by
  // the constructor or next_piece()).
  void pass_add(const SparseTensor& G, const AspectModel& M, int threads, Pass& P) {
    prepare(G);
    if (missing_ && !P.missing)
      throw std::runtime_error("cells miss a mode where the data's summary recorded none");
    if (P.posterior && !remap_ready_) make_remap(G);
    const std::size_t N = M.order();
    const int T = effective_threads(threads, G.nnz());
    ThreadAccumulators acc(P.A, T, P.threads);
    std::vector<double> part(T, 0.0), lpart(T, 0.0);
    const bool tempered = beta_ != 1.0;
    const bool fast_log = !tempered && use_counts_;
    P.fast_log = fast_log;
    if (P.posterior) {
      posterior_pass(G, N, T, acc, part, P);
    } else {
      mttkrp_pass(G, M, N, T, acc, part, lpart, P);
    }
    for (double p : part) P.value += p;
    for (double p : lpart) P.lg += p;
  }

  // Ends the pass: the statistics (y_n = H_n o A_n, lambda the sum of the
  // posteriors); returns D(G || P) of M (and sets *merit as estep()).
  double pass_end(Pass& P, double* merit, std::vector<arma::mat>& Y, arma::vec& lam) const {
    const std::size_t N = P.H.size();
    const arma::uword k = P.k;
    const double before = pass_finish(P, merit, lam);
    Y.resize(N);
    for (std::size_t n = 0; n < N; ++n) {
      if (P.posterior) Y[n] = P.A[n].submat(0, 0, k - 1, P.A[n].n_cols - 2);
      else if (P.in_workspace) Y[n] = arma::mat(P.A[n]);  // (the workspace stays the caller's)
      else Y[n] = std::move(P.A[n]);
    }
    return before;
  }

  // pass_end() with the statistics left in P.A (the MTTKRP form: y_n in
  // P.A[n]; the posterior form: rows and columns padded).
  double pass_finish(Pass& P, double* merit, arma::vec& lam) const {
    const std::size_t N = P.H.size();
    const arma::uword k = P.k;
    ThreadAccumulators::reduce_into(P.A, P.threads);
    // with a prior (plain EM of a matrix, the MTTKRP form: H_0 = lambda o
    // U_0, the joint P(d, z)), the documents' part of its penalty
    double pen = 0.0;
    if (prior_ != nullptr) {
      if (P.posterior || beta_ != 1.0 || N != 2)
        throw std::runtime_error("a prior needs plain EM of a matrix");
      pen = prior_->documents_penalty(P.H[0]);
    }
    const double before = P.value + (P.fast_log ? glogg_ : 0.0) + pen;
    // (a cell with g > 0 and model value 0 gives log 0 = -inf: +inf)
    if (merit != nullptr) *merit = beta_ != 1.0 ? -P.lg / beta_ : before;
    if (P.posterior) {
      lam = P.A[N].submat(0, 0, k - 1, 0);
      return before;
    }
    for (std::size_t n = 0; n < N; ++n) P.A[n] %= P.H[n];
    if (prior_ != nullptr && !prior_->doc.is_empty()) {
      // the MAP joint P(d, z) in place of the documents' statistics
      prior_->documents(P.A[0]);
      lam = arma::vec(arma::sum(P.A[0], 1));
      return before;
    }
    lam = N > 3 || P.missing ? arma::vec(P.A[N].col(0)) : arma::vec(arma::sum(P.A[0], 1));
    return before;
  }

  // Pieces (see Pass): the raw values of the next piece of cells (the
  // first piece decides whether the objective uses the counts, for all of
  // them, from whether it holds whole counts and from `top`, the largest
  // raw value of all the pieces; sum g log g, unless given, is summed over
  // the pieces).
  void next_piece(const arma::vec* counts, double top) {
    counts_ = counts;
    prepared_ = false;
    pieces_ = true;
    pieces_top_ = top;
  }
  // The loss of a piece's cells without sum g log g where the counts' form
  // is used; loss_end() of their sum is the loss of all of them.
  double loss_piece(const SparseTensor& G, const AspectModel& M, int threads) {
    prepare(G);
    if (!use_counts_) return evaluate_loss(Loss::KL, 1.0, G, M, threads);
    return loss_counted(G, M, threads);
  }
  double loss_end(double parts) const { return use_counts_ ? glogg_ + parts : parts; }

  // Binds the rule to its data once (one tensor for the rule's life).
  // After this, estep() and loss() only read the rule's state, so one rule
  // may serve several models concurrently (threads over random starts, see
  // multistart.h) as long as each call uses threads = 1.
  void bind(const SparseTensor& G) { prepare(G); }
  // For a rule that only evaluates the loss (coordinate descent's): no
  // row blocks (see ColumnBlocks) made when the data are bound.
  void loss_only() { want_blocks_ = false; }
  // after bind(): sum g log g, and whether the trace's logs use the counts
  double glogg() const { return glogg_; }
  // sum g log g given by the caller (one log per non-zero less when the
  // rule is made again for every pass over the same data, as for shards)
  void set_glogg(double v) { glogg_ = v; glogg_known_ = true; }
  bool uses_counts() const { return use_counts_; }
  // after bind(): whether cells miss modes; the tempering exponent
  bool data_missing() const { return missing_; }
  double beta() const { return beta_; }
  // MAP EM with Dirichlet pseudo-counts (plain EM of a matrix; the prior
  // must outlive the rule). The trace is then the negative log posterior
  // divided by the total count (prior.h). For data split into shards of
  // documents each shard's rule has the documents' part only: the terms'
  // pseudo-counts and penalty are added once, to the sums.
  void set_prior(const DirichletPrior* p) { prior_ = p != nullptr && p->any() ? p : nullptr; }
  // the prior's penalty of M (0 without one)
  double penalty(const AspectModel& M) const {
    if (prior_ == nullptr) return 0.0;
    return prior_->documents_penalty(M.lambda, M.F[0]) + prior_->terms_penalty(M.F[1]);
  }

  // The KL divergence of M, by the same formula as the trace of step().
  double loss(const SparseTensor& G, const AspectModel& M, int threads) {
    prepare(G);
    if (!use_counts_) return evaluate_loss(Loss::KL, 1.0, G, M, threads) + penalty(M);
    return glogg_ + loss_counted(G, M, threads) + penalty(M);
  }

 private:
  // pass_add() in the MTTKRP form: t_s = g_s / sum_r w_r per cell, added
  // to A_n at i_n times the leave-one-out product of the other modes.
  void mttkrp_pass(const SparseTensor& G, const AspectModel& M, std::size_t N, int T, ThreadAccumulators& acc,
                   std::vector<double>& part, std::vector<double>& lpart, const Pass& P) const {
    const arma::uword k = P.k;
    const std::vector<arma::mat>& H = P.H;
    const arma::vec& lb = P.lb;
    const bool missing = P.missing;
    const bool tempered = beta_ != 1.0;
    const bool fast_log = !tempered && use_counts_;
    // the objective term of cell s with model value sb (fast paths), and
    // for tempered EM sum g log sb (its free energy, times -beta)
    auto account = [&](LogSum& ls, double& obj, double& lg, std::size_t s, const index_t* ix, double g,
                       double sb) {
      if (fast_log) ls.add(std::max(sb, kTiny), (*counts_)[s], mult_[s]);
      else if (tempered) { obj += kl_term(g, M.cell(ix)); lg += g * std::log(sb); }
      else obj += kl_term(g, sb);
    };

    if (N == 2 && !missing) {
      // one cell: its model value, objective term and statistics
      auto cell = [&](std::size_t s, const index_t* ix, const double* __restrict a, const double* __restrict c,
                      double* __restrict a0, double* __restrict a1, LogSum& ls, double& obj, double& lg) {
        double sb = 0.0;
#pragma omp simd reduction(+ : sb)
        for (arma::uword r = 0; r < k; ++r) sb += a[r] * c[r];
        const double g = G.value(s);
        account(ls, obj, lg, s, ix, g, sb);
        if (!(sb > 0.0)) return;
        const double t = g / sb;
#pragma omp simd
        for (arma::uword r = 0; r < k; ++r) {
          a0[r] += t * c[r];
          a1[r] += t * a[r];
        }
      };
      // (fewer blocks than threads: the blocks on as many threads as there
      // are blocks when there are at least 4, the rows being many; else
      // the pass over the cells in their order, all threads sharing them,
      // with at most 3 blocks' rows to reach at random)
      if (blocks_.nb > 0 && (blocks_.nb >= static_cast<std::size_t>(T) || blocks_.nb >= 4)) {
        // cells in column order (a dgCMatrix's own, read in place): blocks
        // of rows split among the threads, and in each block the columns
        // in turn, so that the documents' factor and accumulator of a
        // block stay in cache while the terms' are read in order. Each
        // accumulator column gets its cells in the order of the pass by
        // row: with one thread, the same sums as for the data by row.
        const ColumnBlocks& B = blocks_;
        const std::size_t d1 = G.dims[1];
        const int TB = static_cast<int>(std::min<std::size_t>(static_cast<std::size_t>(T), B.nb));
        parallel_chunks(B.nb, TB, [&](int tid, std::size_t b, std::size_t e) {
          arma::mat& A0 = acc.get(tid, 0);
          arma::mat& A1 = acc.get(tid, 1);
          LogSum ls;
          double obj = 0.0, lg = 0.0;
          constexpr arma::uword kLocal = 64;
          constexpr std::size_t kAhead = 8;  // cells ahead whose document is prefetched
          double local[kLocal];
          for (std::size_t bl = b; bl < e; ++bl) {
            const std::uint32_t* lo = B.start.data() + bl * d1;
            const std::uint32_t* hi = bl + 1 < B.nb ? lo + d1 : nullptr;
            for (std::size_t j = 0; j < d1; ++j) {
              const std::size_t first = B.colptr[j] + lo[j];
              const std::size_t last = hi != nullptr ? B.colptr[j] + hi[j] : B.colptr[j + 1];
              if (first == last) continue;
              const double* c = H[1].colptr(j);
              double* a1 = A1.colptr(j);
              // the column's accumulator in local memory over its cells
              // (the same additions in the same order)
              double* t1 = k <= kLocal ? local : a1;
              if (t1 != a1) std::copy(a1, a1 + k, t1);
              const double* h0 = H[0].memptr();
              double* p0 = A0.memptr();
              for (std::size_t s = first; s < last; ++s) {
                const index_t* ix = G.at(s);
                if (s + kAhead < last) {
                  const std::size_t ahead = static_cast<std::size_t>(G.at(s + kAhead)[0]) * k;
                  __builtin_prefetch(h0 + ahead);
                  __builtin_prefetch(p0 + ahead, 1);
                }
                const std::size_t off = static_cast<std::size_t>(ix[0]) * k;
                cell(s, ix, h0 + off, c, p0 + off, t1, ls, obj, lg);
              }
              if (t1 != a1) std::copy(t1, t1 + k, a1);
            }
          }
          part[tid] = fast_log ? -ls.value() / total_ : obj;
          lpart[tid] = lg;
        });
        return;
      }
      parallel_chunks(G.nnz(), T, [&](int tid, std::size_t b, std::size_t e) {
        arma::mat& A0 = acc.get(tid, 0);
        arma::mat& A1 = acc.get(tid, 1);
        LogSum ls;  // thread-local (no false sharing)
        double obj = 0.0, lg = 0.0;
        for (std::size_t s = b; s < e; ++s) {
          const index_t* ix = G.at(s);
          cell(s, ix, H[0].colptr(ix[0]), H[1].colptr(ix[1]), A0.colptr(ix[0]), A1.colptr(ix[1]), ls, obj, lg);
        }
        // D(G||P) = sum g log g - (1/total) sum x log p
        part[tid] = fast_log ? -ls.value() / total_ : obj;
        lpart[tid] = lg;
      });
    } else if (N == 3 && !missing) {
      // 3-way fast path: w = a o b o c with lambda^b folded into a
      parallel_chunks(G.nnz(), T, [&](int tid, std::size_t b, std::size_t e) {
        arma::mat& A0 = acc.get(tid, 0);
        arma::mat& A1 = acc.get(tid, 1);
        arma::mat& A2 = acc.get(tid, 2);
        LogSum ls;
        double obj = 0.0, lg = 0.0;
        for (std::size_t s = b; s < e; ++s) {
          const index_t* ix = G.at(s);
          const double* __restrict a = H[0].colptr(ix[0]);
          const double* __restrict bb = H[1].colptr(ix[1]);
          const double* __restrict c = H[2].colptr(ix[2]);
          double sb = 0.0;
#pragma omp simd reduction(+ : sb)
          for (arma::uword r = 0; r < k; ++r) sb += a[r] * bb[r] * c[r];
          const double g = G.value(s);
          account(ls, obj, lg, s, ix, g, sb);
          if (!(sb > 0.0)) continue;
          const double t = g / sb;
          double* __restrict a0 = A0.colptr(ix[0]);
          double* __restrict a1 = A1.colptr(ix[1]);
          double* __restrict a2 = A2.colptr(ix[2]);
#pragma omp simd
          for (arma::uword r = 0; r < k; ++r) {
            a0[r] += t * bb[r] * c[r];
            a1[r] += t * a[r] * c[r];
            a2[r] += t * a[r] * bb[r];
          }
        }
        part[tid] = fast_log ? -ls.value() / total_ : obj;
        lpart[tid] = lg;
      });
    } else {
      std::vector<const arma::mat*> Hp(N);
      for (std::size_t n = 0; n < N; ++n) Hp[n] = &H[n];
      parallel_chunks(G.nnz(), T, [&](int tid, std::size_t b, std::size_t e) {
        std::vector<double> pre(N * k), loo(N * k), w(k), suf(k);
        double obj = 0.0, lg = 0.0;
        for (std::size_t s = b; s < e; ++s) {
          const index_t* ix = G.at(s);
          leave_one_out(Hp, ix, k, pre.data(), loo.data(), suf.data());
          // the full product w_r = lambda_r^b prod_n H_n(r, i_n); lambda^b
          // lives in H_0, so a cell missing mode 0 multiplies it back in
          double sb = 0.0;
          if (ix[0] != kMissing) {
            const double* h0 = H[0].colptr(ix[0]);
            for (arma::uword r = 0; r < k; ++r) { w[r] = h0[r] * loo[r]; sb += w[r]; }
          } else {
            for (arma::uword r = 0; r < k; ++r) { w[r] = lb[r] * loo[r]; sb += w[r]; }
          }
          const double g = G.value(s);
          obj += kl_term(g, tempered ? M.cell(ix) : sb);
          if (tempered) lg += g * std::log(sb);
          if (!(sb > 0.0)) continue;
          const double t = g / sb;
          for (std::size_t n = 0; n < N; ++n) {
            if (ix[n] == kMissing) continue;
            double* an = acc.get(tid, n).colptr(ix[n]);
            if (n == 0 || ix[0] != kMissing) {
              for (arma::uword r = 0; r < k; ++r) an[r] += t * loo[n * k + r];
            } else {  // lambda^b is not in the leave-one-out product here
              for (arma::uword r = 0; r < k; ++r) an[r] += t * lb[r] * loo[n * k + r];
            }
          }
          double* al = acc.get(tid, N).memptr();
          for (arma::uword r = 0; r < k; ++r) al[r] += t * w[r];
        }
        part[tid] = obj;
        lpart[tid] = lg;
      });
    }
  }

  void prepare(const SparseTensor& G) {
    if (prepared_) return;
    prepared_ = true;
    missing_ = G.has_missing();
    const std::size_t N = G.order();
    remap_ready_ = false;
    if (N > 3 || missing_) make_remap(G);
    blocks_ = ColumnBlocks();
    if (N == 2 && !missing_ && !pieces_ && want_blocks_) blocks_.build(G);
    if (counts_ == nullptr) return;
    // The count form pays only for whole counts (LogSum's products); data
    // without any (scaled counts, proportions) or with huge values, where
    // sum x log p could overflow, use the terms g log(g / p) of G instead,
    // which do not depend on the scale of the data.
    mult_.resize(G.nnz());
    const bool first = !pieces_ || !pieces_seen_;
    if (!glogg_known_ && first) glogg_ = 0.0;
    bool whole = false;
    double top = 0.0;
    for (std::size_t s = 0; s < G.nnz(); ++s) {
      mult_[s] = static_cast<std::uint8_t>(count_multiplicity((*counts_)[s]));
      whole = whole || mult_[s] > 0;
      top = std::max(top, (*counts_)[s]);
      if (!glogg_known_) { const double g = G.value(s); glogg_ += g * std::log(g); }
    }
    if (pieces_) top = std::max(top, pieces_top_);
    if (first) use_counts_ = whole && top < 1e15 && total_ > 0.0 && std::isfinite(total_);
    pieces_seen_ = pieces_;
  }

  // the index for posterior_pass: kMissing -> d_n
  void make_remap(const SparseTensor& G) {
    const std::size_t N = G.order();
    const index_t* ix = G.indices();
    remap_.resize(G.index_count());
    for (std::size_t j = 0; j < remap_.size(); ++j) {
      const index_t i = ix[j];
      remap_[j] = i == kMissing ? static_cast<index_t>(G.dims[j % N]) : i;
    }
    remap_ready_ = true;
  }

  // -(1/total) sum x log p over G's cells, by LogSum (use_counts_)
  double loss_counted(const SparseTensor& G, const AspectModel& M, int threads) const {
    const int T = effective_threads(threads, G.nnz());
    std::vector<double> part(T, 0.0);
    parallel_chunks(G.nnz(), T, [&](int tid, std::size_t b, std::size_t e) {
      LogSum ls;
      for (std::size_t s = b; s < e; ++s)
        ls.add(std::max(M.cell(G.at(s)), kTiny), (*counts_)[s], mult_[s]);
      part[tid] = -ls.value() / total_;
    });
    double tot = 0.0;
    for (double p : part) tot += p;
    return tot;
  }

  // pass_add() by direct accumulation of the posteriors, for plain EM on
  // N-way tensors (any N, missing modes allowed): per cell s,
  //   w_r = lambda_r prod_{n observed} U_n(r, i_n),  p_r = g_s w_r / sum_j w_j,
  //   y_n(:, i_n) += p (every observed mode),  lambda_new += p.
  // This is the same map as the MTTKRP form (y_n = H_n o A_n) but costs
  // 2 N k flops per cell instead of about 4 N k, needs no leave-one-out
  // products and has no branch per mode: a missing index points at the
  // factor copy's extra column of ones (and at a discarded column of the
  // accumulator). Small k is a compile-time constant (template dispatch
  // below), so w stays in registers.
  void posterior_pass(const SparseTensor& G, std::size_t N, int T, ThreadAccumulators& acc,
                      std::vector<double>& part, const Pass& P) const {
    const arma::uword kp = P.kp;
    const bool fast_log = use_counts_;
    parallel_chunks(G.nnz(), T, [&](int tid, std::size_t b, std::size_t e) {
      std::vector<const double*> hp(N);
      std::vector<double*> ap(N);
      for (std::size_t n = 0; n < N; ++n) {
        hp[n] = P.H[n].memptr();
        ap[n] = acc.get(tid, n).memptr();
      }
      double* al = acc.get(tid, N).memptr();
      PosteriorPass pass{remap_.data(), G.val.memptr(), G.inv_top, G.inv_sum, N, hp.data(), ap.data(), al,
                         P.lb.memptr(), fast_log ? counts_->memptr() : nullptr,
                         fast_log ? mult_.data() : nullptr};
      double obj;
      switch (kp) {
        case 2: obj = pass.run<2>(b, e); break;
        case 4: obj = pass.run<4>(b, e); break;
        case 8: obj = pass.run<8>(b, e); break;
        case 12: obj = pass.run<12>(b, e); break;
        case 16: obj = pass.run<16>(b, e); break;
        default: obj = pass.run_any(kp, b, e); break;
      }
      part[tid] = fast_log ? -obj / total_ : obj;
    });
  }

  // One pass of posterior_pass over cells [b, e). Returns sum x log p (via
  // LogSum) when counts are given, else the KL divergence contribution.
  struct PosteriorPass {
    const index_t* idx;
    const double* g;         // stored values, times ga and gb (SparseTensor::value())
    double ga, gb;
    std::size_t N;
    const double* const* h;  // per mode: k x (d_n + 1), column-major
    double* const* a;        // per mode accumulators, same shape
    double* lam_acc;
    const double* lambda;
    const double* counts;    // null: KL terms with a log each
    const std::uint8_t* mult;

    template <int K>
    double run(std::size_t b, std::size_t e) const {
      LogSum ls;
      double obj = 0.0;
      const double* __restrict lam = lambda;
      double* __restrict la = lam_acc;
      for (std::size_t s = b; s < e; ++s) {
        const index_t* ix = idx + s * N;
        double w[K];
ASPECTR_UNROLL
        for (int r = 0; r < K; ++r) w[r] = lam[r];
        for (std::size_t n = 0; n < N; ++n) {
          const double* hc = h[n] + static_cast<std::size_t>(ix[n]) * K;
ASPECTR_UNROLL
          for (int r = 0; r < K; ++r) w[r] *= hc[r];
        }
        double sb = 0.0;
ASPECTR_UNROLL
        for (int r = 0; r < K; ++r) sb += w[r];
        const double gs = g[s] * ga * gb;
        if (counts != nullptr) ls.add(std::max(sb, kTiny), counts[s], mult[s]);
        else obj += kl_term(gs, sb);
        if (!(sb > 0.0)) continue;
        const double t = gs / sb;
ASPECTR_UNROLL
        for (int r = 0; r < K; ++r) { w[r] *= t; la[r] += w[r]; }
        for (std::size_t n = 0; n < N; ++n) {
          double* ac = a[n] + static_cast<std::size_t>(ix[n]) * K;
ASPECTR_UNROLL
          for (int r = 0; r < K; ++r) ac[r] += w[r];
        }
      }
      return counts != nullptr ? ls.value() : obj;
    }

    double run_any(arma::uword k, std::size_t b, std::size_t e) const {
      LogSum ls;
      double obj = 0.0;
      std::vector<double> w(k);
      for (std::size_t s = b; s < e; ++s) {
        const index_t* ix = idx + s * N;
        for (arma::uword r = 0; r < k; ++r) w[r] = lambda[r];
        for (std::size_t n = 0; n < N; ++n) {
          const double* hc = h[n] + static_cast<std::size_t>(ix[n]) * k;
          for (arma::uword r = 0; r < k; ++r) w[r] *= hc[r];
        }
        double sb = 0.0;
        for (arma::uword r = 0; r < k; ++r) sb += w[r];
        const double gs = g[s] * ga * gb;
        if (counts != nullptr) ls.add(std::max(sb, kTiny), counts[s], mult[s]);
        else obj += kl_term(gs, sb);
        if (!(sb > 0.0)) continue;
        const double t = gs / sb;
        for (arma::uword r = 0; r < k; ++r) { w[r] *= t; lam_acc[r] += w[r]; }
        for (std::size_t n = 0; n < N; ++n) {
          double* ac = a[n] + static_cast<std::size_t>(ix[n]) * k;
          for (arma::uword r = 0; r < k; ++r) ac[r] += w[r];
        }
      }
      return counts != nullptr ? ls.value() : obj;
    }
  };

  // The row blocks of 2-way data held in column order (by column, rows
  // increasing within each, as a dgCMatrix): the cells of block b in
  // column j are positions colptr[j] + start[b * d1 + j] up to the next
  // block's start (the column's end for the last block). Blocks of about
  // kBlockRows rows keep a block's documents' factor and accumulator (2 k
  // doubles a row: 5 MB at k = 20) in the last-level cache; smaller blocks
  // were slower on sparse data (few cells per block and column, and the
  // terms' factor read once per block). Their number is capped so that
  // `start` takes at most a byte per cell. nb = 0: the data are not in
  // that order, or have too few rows for blocks to matter.
  struct ColumnBlocks {
    static constexpr std::size_t kBlockRows = 16384;
    std::size_t nb = 0;
    std::vector<std::size_t> colptr;
    std::vector<std::uint32_t> start;
    void build(const SparseTensor& G) {
      const std::size_t nnz = G.nnz(), d0 = G.dims[0], d1 = G.dims[1];
      nb = 0;
      if (nnz == 0 || d1 == 0) return;
      const index_t* ix = G.indices();
      for (std::size_t s = 1; s < nnz; ++s) {
        const index_t* p = ix + 2 * (s - 1);
        const index_t* q = ix + 2 * s;
        if (!(q[1] > p[1] || (q[1] == p[1] && q[0] > p[0]))) return;
      }
      std::size_t want = (d0 + kBlockRows - 1) / kBlockRows;
      const std::size_t cap = std::max<std::size_t>(1, nnz / (4 * d1));
      if (want > cap) want = cap;
      if (want < 2) return;
      const std::size_t rows = (d0 + want - 1) / want;
      colptr.assign(d1 + 1, 0);
      for (std::size_t s = 0; s < nnz; ++s) ++colptr[ix[2 * s + 1] + 1];
      for (std::size_t j = 0; j < d1; ++j) colptr[j + 1] += colptr[j];
      start.assign(want * d1, 0);
      for (std::size_t j = 0; j < d1; ++j) {
        const std::size_t len = colptr[j + 1] - colptr[j];
        std::size_t off = 0;
        for (std::size_t b = 0; b < want; ++b) {
          while (off < len && ix[2 * (colptr[j] + off)] < b * rows) ++off;
          start[b * d1 + j] = static_cast<std::uint32_t>(off);
        }
      }
      nb = want;
    }
  };

  double beta_;
  const arma::vec* counts_;
  double total_;
  bool prepared_ = false;
  bool missing_ = false;
  bool use_counts_ = false;
  std::vector<std::uint8_t> mult_;
  std::vector<index_t> remap_;
  bool remap_ready_ = false;  // remap_ made for the data prepared
  bool want_blocks_ = true;   // row blocks for data in column order (loss_only())
  ColumnBlocks blocks_;
  bool pieces_ = false;       // cells given in pieces (next_piece())
  bool pieces_seen_ = false;  // the first piece prepared
  double pieces_top_ = 0.0;
  double glogg_ = 0.0;
  bool glogg_known_ = false;
  const DirichletPrior* prior_ = nullptr;
};

}  // namespace aspectr

#endif
