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

#include <cstdint>
#include "../logsum.h"
#include "../loss.h"
#include "normalize.h"

#include "../unroll.h"

// The fixed-size loops over k in posterior_step are unrolled (ASPECTR_UNROLL):
// at -O2 GCC keeps w[] in memory otherwise (a load-multiply-store chain per
// mode, about 3x slower at k = 8).

namespace aspectr {

class EMRule {
 public:
  // counts: the raw data values (G = counts / total), used to evaluate the
  // KL divergence of count data without a log per non-zero (see logsum.h).
  explicit EMRule(double beta = 1.0, const arma::vec* counts = nullptr, double total = 0.0)
      : beta_(beta), counts_(counts), total_(total) {}
  static constexpr bool kLagged = true;

  double step(const SparseTensor& G, AspectModel& M, int threads) {
    return step_merit(G, M, threads, nullptr);
  }

  // The step, also giving (when merit is not null) the value of the model
  // entering it of the function the step never increases: D(G || P) for
  // plain EM; for tempered EM the tempered free energy minimized over the
  // posteriors, L_beta = -(1/beta) sum_s g_s log sum_r (lambda_r prod_n
  // U_n(i_n, r))^beta (the E-step minimizes the free energy
  // sum_s g_s sum_r q_r (-log P_r) + (1/beta) sum_s g_s sum_r q_r log q_r
  // over q, giving L_beta; the M-step minimizes its first term over the
  // model). SQUAREM's safeguard compares it (see squarem.h).
  double step_merit(const SparseTensor& G, AspectModel& M, int threads, double* merit) {
    std::vector<arma::mat> Y;
    arma::vec lam;
    const double before = estep(G, M, threads, merit, Y, lam);
    mstep(M, Y, lam);
    return before;
  }

  // The E-step alone: the M-step's sufficient statistics y_n (k x d_n, one
  // per mode; row r of y_n sums over the cells to the posterior mass of
  // component r) and `lam`, the posterior sums (the new weights, before
  // normalization); returns D(G || P) of M (and sets *merit as step_merit).
  // Every statistic is a sum over the non-zeros, so data split by cells
  // (shards of documents, sharing the other modes) give their sums: the
  // sharded fit adds them and applies mstep() (R/shards.R).
  double estep(const SparseTensor& G, const AspectModel& M, int threads, double* merit,
               std::vector<arma::mat>& Y, arma::vec& lam) {
    prepare(G);
    const std::size_t N = M.order();
    const arma::uword k = M.rank();
    // Plain EM on tensors of order > 3 or with missing modes (latent class
    // analysis): accumulate the posteriors directly (see posterior_step).
    if (beta_ == 1.0 && (N > 3 || missing_)) {
      const double v = posterior_step(G, M, threads, Y, lam);
      if (merit != nullptr) *merit = v;
      return v;
    }
    // Tempered factor tables.
    std::vector<arma::mat> H(N);
    for (std::size_t n = 0; n < N; ++n)
      H[n] = beta_ == 1.0 ? M.F[n] : arma::pow(M.F[n], beta_);
    const arma::vec lb = beta_ == 1.0 ? M.lambda : arma::pow(M.lambda, beta_);
    H[0].each_col() %= lb;

    // A[n]: MTTKRP accumulators; A[N]: the weights (needed separately when
    // some cells miss mode 0).
    std::vector<arma::mat> A(N + 1);
    for (std::size_t n = 0; n < N; ++n) A[n].set_size(k, G.dims[n]);
    A[N].set_size(k, 1);
    const bool missing = missing_;
    const int T = effective_threads(threads, G.nnz());
    ThreadAccumulators acc(A, T);
    std::vector<double> part(T, 0.0), lpart(T, 0.0);
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
      parallel_chunks(G.nnz(), T, [&](int tid, std::size_t b, std::size_t e) {
        arma::mat& A0 = acc.get(tid, 0);
        arma::mat& A1 = acc.get(tid, 1);
        LogSum ls;  // thread-local (no false sharing)
        double obj = 0.0, lg = 0.0;
        for (std::size_t s = b; s < e; ++s) {
          const index_t* ix = G.at(s);
          const double* __restrict a = H[0].colptr(ix[0]);
          const double* __restrict c = H[1].colptr(ix[1]);
          double sb = 0.0;
#pragma omp simd reduction(+ : sb)
          for (arma::uword r = 0; r < k; ++r) sb += a[r] * c[r];
          const double g = G.value(s);
          account(ls, obj, lg, s, ix, g, sb);
          if (!(sb > 0.0)) continue;
          const double t = g / sb;
          double* __restrict a0 = A0.colptr(ix[0]);
          double* __restrict a1 = A1.colptr(ix[1]);
#pragma omp simd
          for (arma::uword r = 0; r < k; ++r) {
            a0[r] += t * c[r];
            a1[r] += t * a[r];
          }
        }
        // D(G||P) = sum g log g - (1/total) sum x log p
        part[tid] = fast_log ? -ls.value() / total_ : obj;
        lpart[tid] = lg;
      });
      if (fast_log) part[0] += glogg_;
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
      if (fast_log) part[0] += glogg_;
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
    acc.reduce();
    double before = 0.0;
    for (double p : part) before += p;
    if (merit != nullptr) {
      double lg = 0.0;
      for (double p : lpart) lg += p;
      // (a cell with g > 0 and model value 0 gives log 0 = -inf: +inf)
      *merit = tempered ? -lg / beta_ : before;
    }

    // y_n = H_n o A_n; lambda = sum of the posteriors.
    Y.resize(N);
    for (std::size_t n = 0; n < N; ++n) {
      Y[n] = H[n] % A[n];
      if (n == 0) lam = arma::sum(Y[n], 1);
    }
    if (N > 3 || missing) lam = A[N].col(0);  // generic path
    return before;
  }

  // The M-step from the statistics of estep(): every y_n normalized onto
  // the simplex row by row (a row without mass keeps M's), the weights the
  // normalized posterior sums.
  static void mstep(AspectModel& M, std::vector<arma::mat>& Y, const arma::vec& lam) {
    for (std::size_t n = 0; n < M.order(); ++n) {
      normalize_rows(Y[n], M.F[n]);
      M.F[n] = std::move(Y[n]);
    }
    const double tot = arma::accu(lam);
    if (tot > 0.0) M.lambda = lam / tot;
  }

  // Binds the rule to its data once. After this, step() and loss() only read
  // the rule's state, so one rule may serve several models concurrently
  // (threads over random starts, see multistart.h) as long as each call
  // uses threads = 1.
  void bind(const SparseTensor& G) { prepare(G); }
  // after bind(): sum g log g, and whether the trace's logs use the counts
  double glogg() const { return glogg_; }
  // sum g log g given by the caller (one log per non-zero less when the
  // rule is made again for every pass over the same data, as for shards)
  void set_glogg(double v) { glogg_ = v; glogg_known_ = true; }
  bool uses_counts() const { return use_counts_; }

  // The KL divergence of M, by the same formula as the trace of step().
  double loss(const SparseTensor& G, const AspectModel& M, int threads) {
    prepare(G);
    if (!use_counts_) return evaluate_loss(Loss::KL, 1.0, G, M, threads);
    const int T = effective_threads(threads, G.nnz());
    std::vector<double> part(T, 0.0);
    parallel_chunks(G.nnz(), T, [&](int tid, std::size_t b, std::size_t e) {
      LogSum ls;
      for (std::size_t s = b; s < e; ++s)
        ls.add(std::max(M.cell(G.at(s)), kTiny), (*counts_)[s], mult_[s]);
      part[tid] = -ls.value() / total_;
    });
    double tot = glogg_;
    for (double p : part) tot += p;
    return tot;
  }

 private:
  void prepare(const SparseTensor& G) {
    if (prepared_) return;
    prepared_ = true;
    missing_ = G.has_missing();
    const std::size_t N = G.order();
    if (N > 3 || missing_) {  // index for posterior_step: kMissing -> d_n
      const index_t* ix = G.indices();
      remap_.resize(G.index_count());
      for (std::size_t j = 0; j < remap_.size(); ++j) {
        const index_t i = ix[j];
        remap_[j] = i == kMissing ? static_cast<index_t>(G.dims[j % N]) : i;
      }
    }
    if (counts_ == nullptr) return;
    // The count form pays only for whole counts (LogSum's products); data
    // without any (scaled counts, proportions) or with huge values, where
    // sum x log p could overflow, use the terms g log(g / p) of G instead,
    // which do not depend on the scale of the data.
    mult_.resize(G.nnz());
    if (!glogg_known_) glogg_ = 0.0;
    bool whole = false;
    double top = 0.0;
    for (std::size_t s = 0; s < G.nnz(); ++s) {
      mult_[s] = static_cast<std::uint8_t>(count_multiplicity((*counts_)[s]));
      whole = whole || mult_[s] > 0;
      top = std::max(top, (*counts_)[s]);
      if (!glogg_known_) { const double g = G.value(s); glogg_ += g * std::log(g); }
    }
    use_counts_ = whole && top < 1e15 && total_ > 0.0 && std::isfinite(total_);
  }

  // EM step by direct accumulation of the posteriors, for plain EM on
  // N-way tensors (any N, missing modes allowed): per cell s,
  //   w_r = lambda_r prod_{n observed} U_n(r, i_n),  p_r = g_s w_r / sum_j w_j,
  //   y_n(:, i_n) += p (every observed mode),  lambda_new += p.
  // This is the same map as the MTTKRP form of step() (y_n = H_n o A_n) but
  // costs 2 N k flops per cell instead of about 4 N k, needs no
  // leave-one-out products and has no branch per mode: a missing index
  // points at an extra column of ones in the factor copy (and at a
  // discarded column of the accumulator). Small k is a compile-time
  // constant (template dispatch below), so w stays in registers.
  double posterior_step(const SparseTensor& G, const AspectModel& M, int threads,
                        std::vector<arma::mat>& Y, arma::vec& lam_out) {
    const std::size_t N = M.order();
    const arma::uword k = M.rank();
    // factor copies with a column of ones appended; accumulators likewise.
    // Up to k = 16 the rows are padded to kp = 2, 4, 8, 12 or 16 (padding
    // rows of zeros, and lambda 0 there, so they add exact zeros): whole
    // SIMD vectors and a compile-time loop length (odd k was 2-5x slower
    // per cell without).
    const arma::uword kp = k <= 2 ? 2 : k <= 16 ? (k + 3) / 4 * 4 : k;
    std::vector<arma::mat> H(N), A(N + 1);
    for (std::size_t n = 0; n < N; ++n) {
      H[n].zeros(kp, G.dims[n] + 1);
      H[n].submat(0, 0, k - 1, G.dims[n] - 1) = M.F[n];
      H[n].col(G.dims[n]).ones();
      A[n].set_size(kp, G.dims[n] + 1);
    }
    A[N].set_size(kp, 1);
    arma::vec lam(kp, arma::fill::zeros);
    lam.head(k) = M.lambda;
    const int T = effective_threads(threads, G.nnz());
    ThreadAccumulators acc(A, T);
    std::vector<double> part(T, 0.0);
    const bool fast_log = use_counts_;
    parallel_chunks(G.nnz(), T, [&](int tid, std::size_t b, std::size_t e) {
      std::vector<const double*> hp(N);
      std::vector<double*> ap(N);
      for (std::size_t n = 0; n < N; ++n) {
        hp[n] = H[n].memptr();
        ap[n] = acc.get(tid, n).memptr();
      }
      double* al = acc.get(tid, N).memptr();
      PosteriorPass pass{remap_.data(), G.val.memptr(), G.inv_top, G.inv_sum, N, hp.data(), ap.data(), al,
                         lam.memptr(), fast_log ? counts_->memptr() : nullptr,
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
    acc.reduce();
    double before = fast_log ? glogg_ : 0.0;
    for (double p : part) before += p;
    Y.resize(N);
    for (std::size_t n = 0; n < N; ++n) Y[n] = A[n].submat(0, 0, k - 1, G.dims[n] - 1);
    lam_out = A[N].submat(0, 0, k - 1, 0);
    return before;
  }

  // One pass of posterior_step over cells [b, e). Returns sum x log p (via
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

  double beta_;
  const arma::vec* counts_;
  double total_;
  bool prepared_ = false;
  bool missing_ = false;
  bool use_counts_ = false;
  std::vector<std::uint8_t> mult_;
  std::vector<index_t> remap_;
  double glogg_ = 0.0;
  bool glogg_known_ = false;
};

}  // namespace aspectr

#endif
