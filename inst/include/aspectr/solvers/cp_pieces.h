// aspectr/solvers/cp_pieces.h — non-negative CP under the Frobenius loss
// (ntf(loss = "frobenius"): HALS or multiplicative updates, cp.h)
// on data in pieces (pieces.h): the first mode split by rows, each piece
// with its rows of the first factor, every other mode whole.
//
// The in-memory rules update the modes one after another, mode n from its
// MTTKRP X_n and Gamma_n = hadamard_{m != n} A_m'A_m, then balance the
// components' norms across the modes. Here:
//   * the first mode's rows are local to a piece: given Gamma_1 (the
//     shared modes' Grams, formed by the rule) a piece makes its MTTKRP
//     and updates its rows by the in-memory update's own code
//     (detail::cp_hals_update(), cp_mu_update()); it returns A_1'A_1 of
//     its rows, whose sum over the pieces is the first mode's Gram, and,
//     in the same pass, its part of the second mode's MTTKRP;
//   * every other mode's MTTKRP is summed over the pieces (a pass per
//     mode after the second); the rule updates the mode;
//   * the objective ||X||^2 - 2 <X_N, A_N> + 1'(hadamard_n A_n'A_n)1 comes
//     from ||X||^2 (summed over the pieces once), the last MTTKRP and the
//     Grams, as in memory;
//   * the balancing of the norms scales the shared modes at once, the
//     first mode's rows by factors the pieces apply at the start of the
//     next iteration (CPFrobPieceModel::scale0: pending; gather() applies
//     them to its answer, apply_pending() to the pieces' rows).
// So an iteration passes over the cells N - 1 times, as in one object N,
// and a fit in pieces equals the fit of the data as one piece (ntf() in
// memory: cpp_ntf_fit()) up to rounding.
//
// Requests (inputs: F1 .. F{N-1}, the shared modes' factors k x d_n, and
// scale0, k x 1, the pending factors of the first mode's rows, if any):
//   "cpf_loss"   -> l2 (sum over the cells of x^2 - 2 x m), xnorm (sum x^2),
//                   gram (A_1'A_1 of the piece's rows)
//   "cpf_rows"   gamma (k x k), method (0 HALS, 1 MU), eps: the piece's
//                   rows updated (after scale0) -> gram, mttkrp (mode 2's
//                   part, k x d_2)
//   "cpf_mttkrp" mode n >= 1 -> mttkrp, k x d_n
//   "cpf_scale"  the piece's rows times scale0 -> gram
//   "gather"     -> @F0 (k x rows, x scale0)
#ifndef ASPECTR_SOLVERS_CP_PIECES_H
#define ASPECTR_SOLVERS_CP_PIECES_H

#include <string>
#include <vector>
#include "../pieces.h"
#include "cp.h"
#include "cp_weighted_pieces.h"
#include "pps.h"

namespace aspectr {

enum class CPFrobMethod { HALS, MU };

// One piece: its cells (first index local to the piece, values as the fit
// sees them), its dims and its rows of the first factor (k x rows, the
// caller's memory, updated in place).
class CPFrobPiece {
 public:
  // (aux: k x rows of the piece's own, kept between requests: the L2
  // fit's MTTKRP of the first mode, or nullptr)
  CPFrobPiece(CPCells& X, std::vector<arma::uword> dims, double* A0, arma::uword k, arma::uword rows,
              double* aux = nullptr)
      : X_(X), dims_(std::move(dims)), A0_(A0, k, rows, false, true) {
    if (dims_.size() < 2 || dims_[0] != rows) throw std::logic_error("CP piece: its rows do not match its data");
    if (aux != nullptr) aux_ = arma::mat(aux, k, rows, false, true);
  }

  Stats run(const Request& r, int threads) {
    Stats out;
    const arma::mat* scale = r.has("scale0") ? &r.mat("scale0") : nullptr;
    if (scale && scale->n_elem != A0_.n_rows) throw std::logic_error("CP piece: pending scales of the wrong size");
    if (r.op == "gather") {
      arma::mat F0 = A0_;
      if (scale) apply(F0, *scale);
      out.set("@F0", std::move(F0));
      return out;
    }
    if (r.op == "cpf_scale") {
      if (scale) apply(A0_, *scale);
      out.set("gram", arma::mat(A0_ * A0_.t()));
      return out;
    }
    if (r.op == "pps_col" || r.op == "pps_count") return pps(r);
    AspectModel M = model(r);
    if (r.op == "pps_mttkrp") {
      if (aux_.n_rows != A0_.n_rows || aux_.n_cols != A0_.n_cols) throw std::logic_error("CP piece: no room for its MTTKRP");
      aux_ = mttkrp_sum(M, 0, threads);
      return out;
    }
    if (r.op == "pps_kl") {
      double kl = 0.0;
      X_.each([&](const SparseTensor& X) { kl += cell_sum(Loss::KL, 1.0, X, M, threads); });
      out.set("kl", kl);
      return out;
    }
    if (r.op == "cpf_loss") {
      if (scale) apply(M.F[0], *scale);
      double l2 = 0.0, xn = 0.0;
      X_.each([&](const SparseTensor& X) {
        // (as evaluate_loss(): x^2 - 2 x m summed cell by cell, by threads)
        const int T = effective_threads(threads, X.nnz());
        std::vector<double> part(std::max(T, 1), 0.0);
        parallel_chunks(X.nnz(), T, [&](int tid, std::size_t b, std::size_t e) {
          double acc = 0.0;
          X.cells(b, e, [&](std::size_t s, const index_t* ix) {
            const double g = X.value(s);
            acc += g * g - 2.0 * g * M.cell(ix);
          });
          part[tid] = acc;
        });
        for (double p : part) l2 += p;
        xn += X.sum_sq();
      });
      out.set("l2", l2);
      out.set("xnorm", xn);
      out.set("gram", arma::mat(M.F[0] * M.F[0].t()));
      return out;
    }
    if (r.op == "cpf_rows") {
      if (scale) apply(M.F[0], *scale);
      const arma::mat& Gam = r.mat("gamma");
      if (Gam.n_rows != M.rank() || Gam.n_cols != M.rank()) throw std::logic_error("CP piece: Gamma of the wrong size");
      const arma::mat Xn = mttkrp_sum(M, 0, threads);
      if (r.num("method", 0.0) == 0.0) detail::cp_hals_update(M.F[0], Xn, Gam);
      else detail::cp_mu_update(M.F[0], Xn, Gam, r.num("eps", 1e-16));
      A0_ = M.F[0];
      out.set("gram", arma::mat(M.F[0] * M.F[0].t()));
      out.set("mttkrp", mttkrp_sum(M, 1, threads));
      return out;
    }
    if (r.op == "cpf_mttkrp") {
      if (scale) throw std::logic_error("CP piece: a contraction with scales pending");
      const std::size_t n = static_cast<std::size_t>(r.num("mode", 0.0));
      if (n < 1 || n >= M.order()) throw std::logic_error("CP piece: a mode out of range");
      out.set("mttkrp", mttkrp_sum(M, n, threads));
      return out;
    }
    throw std::logic_error("unknown CP piece operation '" + r.op + "'");
  }

 private:
  static void apply(arma::mat& A, const arma::mat& scale) {
    // (row r times scale[r], as balance_norms() multiplies it)
    for (arma::uword r = 0; r < A.n_rows; ++r) A.row(r) *= scale[r];
  }
  // the L2 fit's projection of the first mode's column `row` onto the
  // simplex, in rounds (PPSPiecesRule): "pps_col" finishes the column
  // `prev` (>= 0) with the threshold `tau`, then puts the target b of
  // column `row` (>= 0; pps_target() from the piece's MTTKRP and rows, with
  // `coef` and `den`) in its place -> sum, count (of b); row < 0 -> gram.
  // (and @max, the largest entry of b). With `whole` (a piece of every
  // row), it puts b's projection in place of the column, and returns
  // nothing. "pps_count": row, t (thresholds,
  // m x 1) -> sum, count (m x 1) of the entries of b above each.
  Stats pps(const Request& r) {
    Stats out;
    const double row = r.num("row", -1.0);
    if (r.op == "pps_count") {
      const arma::mat& t = r.mat("t");
      arma::mat sum(t.n_elem, 1, arma::fill::zeros), count(t.n_elem, 1, arma::fill::zeros);
      for (arma::uword i = 0; i < A0_.n_cols; ++i) {
        const double b = A0_(static_cast<arma::uword>(row), i);
        for (arma::uword j = 0; j < t.n_elem; ++j)
          if (b > t[j]) { sum[j] += b; count[j] += 1.0; }
      }
      out.set("sum", std::move(sum));
      out.set("count", std::move(count));
      return out;
    }
    const double prev = r.num("prev", -1.0), tau = r.num("tau", 0.0);
    if (prev >= 0.0) {
      const arma::uword p = static_cast<arma::uword>(prev);
      for (arma::uword i = 0; i < A0_.n_cols; ++i) A0_(p, i) = std::max(A0_(p, i) - tau, 0.0);
    }
    if (row < 0.0) {
      out.set("gram", arma::mat(A0_ * A0_.t()));
      return out;
    }
    if (aux_.n_rows != A0_.n_rows || aux_.n_cols != A0_.n_cols) throw std::logic_error("CP piece: no MTTKRP of its rows");
    const arma::uword q = static_cast<arma::uword>(row);
    arma::rowvec b(A0_.n_cols);
    pps_target(aux_, A0_, arma::vectorise(r.mat("coef")), r.num("den", 1.0), q, b.memptr());
    if (r.num("whole", 0.0) != 0.0) {
      // (a piece of every row: the column projected here, as
      // pps_update_mode() projects it)
      project_simplex(b.memptr(), b.memptr(), b.n_elem, work_);
      A0_.row(q) = b;
      return out;
    }
    A0_.row(q) = b;
    out.set("sum", arma::accu(b));
    out.set("count", static_cast<double>(b.n_elem));
    out.set("@max", b.n_elem ? b.max() : -std::numeric_limits<double>::infinity());
    return out;
  }
  AspectModel model(const Request& r) const {
    AspectModel M;
    const std::size_t N = dims_.size();
    if (r.has("lambda")) M.lambda = arma::vectorise(r.mat("lambda")); else M.lambda.ones(A0_.n_rows);
    M.F.resize(N);
    M.F[0] = A0_;
    for (std::size_t n = 1; n < N; ++n) {
      M.F[n] = r.mat("F" + std::to_string(n));
      if (M.F[n].n_rows != A0_.n_rows || M.F[n].n_cols != dims_[n])
        throw std::logic_error("CP piece: a shared factor of the wrong size");
    }
    return M;
  }
  // mode n's MTTKRP (k x d_n) over the piece's cells
  arma::mat mttkrp_sum(const AspectModel& M, std::size_t n, int threads) {
    std::vector<const arma::mat*> Fp(M.order());
    for (std::size_t m = 0; m < M.order(); ++m) Fp[m] = &M.F[m];
    arma::mat sum;
    bool first = true;
    X_.each([&](const SparseTensor& X) {
      arma::mat part;
      mttkrp(X, Fp, n, part, threads);
      if (first) sum = std::move(part);
      else sum += part;
      first = false;
    });
    if (first) sum.zeros(M.rank(), M.F[n].n_cols);
    return sum;
  }

  CPCells& X_;
  std::vector<arma::uword> dims_;
  arma::mat A0_;
  arma::mat aux_;
  std::vector<double> work_;  // project_simplex()'s
};

// The global part of a CP model fitted in pieces: the shared modes'
// factors (F[n - 1]: mode n + 1, k x d_n) and the pending scales of the
// first mode's rows (empty: none); the pieces hold the first mode.
struct CPFrobPieceModel {
  std::vector<arma::mat> F;
  arma::mat scale0;
  const Pieces* P = nullptr;
  Request request(const std::string& op) const {
    Request r(op);
    for (std::size_t n = 0; n < F.size(); ++n) r.view("F" + std::to_string(n + 1), F[n]);
    if (!scale0.is_empty()) r.view("scale0", scale0);
    return r;
  }
  // the first mode's factor, k x d_1
  arma::mat gather() const { return P->map(request("gather")).mat("@F0"); }
  // the pending scales applied to the pieces' rows; returns the first
  // mode's Gram
  arma::mat apply_pending() {
    arma::mat g = P->map(request("cpf_scale")).take("gram");
    scale0.reset();
    return g;
  }
};

// The rule: HALS or multiplicative updates (cp.h), mode after mode, on pieces.
class CPFrobPiecesRule {
 public:
  explicit CPFrobPiecesRule(CPFrobMethod method, double eps = 1e-16) : method_(method), eps_(eps) {}
  static constexpr bool kLagged = false;

  double step(const Pieces& P, CPFrobPieceModel& M, int) {
    const std::size_t N = M.F.size() + 1;
    if (N < 2) throw std::logic_error("a CP model needs at least 2 modes");
    const arma::uword k = M.F[0].n_rows;
    if (xn_ < 0.0) xn_ = P.map(M.request("cpf_loss")).num("xnorm");
    // the Grams A_n'A_n (k x k) of every mode, the first's from the pieces
    std::vector<arma::mat> G(N);
    for (std::size_t n = 1; n < N; ++n) G[n] = M.F[n - 1] * M.F[n - 1].t();
    // the first mode: Gamma over the shared modes (in the order of
    // gram_hadamard())
    arma::mat Gam(k, k, arma::fill::ones);
    for (std::size_t m = 1; m < N; ++m) Gam %= G[m];
    Request rows = M.request("cpf_rows");
    rows.with("gamma", Gam).with("method", method_ == CPFrobMethod::HALS ? 0.0 : 1.0).with("eps", eps_);
    Stats s = P.map(rows);
    M.scale0.reset();  // (applied by the pieces)
    G[0] = s.take("gram");
    arma::mat Xn = s.take("mttkrp");
    for (std::size_t n = 1; n < N; ++n) {
      if (n > 1) {
        Request r = M.request("cpf_mttkrp");
        r.with("mode", static_cast<double>(n));
        Xn = P.map(r).take("mttkrp");
      }
      arma::mat& A = M.F[n - 1];
      if (Xn.n_rows != A.n_rows || Xn.n_cols != A.n_cols) throw std::logic_error("the pieces' MTTKRP has the wrong size");
      arma::mat Gn(k, k, arma::fill::ones);
      for (std::size_t m = 0; m < N; ++m) if (m != n) Gn %= G[m];
      if (method_ == CPFrobMethod::HALS) detail::cp_hals_update(A, Xn, Gn);
      else detail::cp_mu_update(A, Xn, Gn, eps_);
      G[n] = A * A.t();
    }
    // the objective: ||X||^2 - 2 <X_N, A_N> + 1'(hadamard_n A_n'A_n)1
    arma::mat Q(k, k, arma::fill::ones);
    for (std::size_t m = 0; m < N; ++m) Q %= G[m];
    const double inner = arma::accu(Xn % M.F[N - 2]);
    const double f = std::max(xn_ - 2.0 * inner + arma::accu(Q), 0.0);
    // the norms balanced, as detail::balance_norms(): the first mode's
    // norms from its Gram, its rows scaled by the pieces next time
    arma::mat nrm(k, N);
    for (arma::uword r = 0; r < k; ++r) {
      nrm(r, 0) = std::sqrt(std::max(G[0](r, r), 0.0));
      for (std::size_t n = 1; n < N; ++n) nrm(r, n) = arma::norm(M.F[n - 1].row(r), 2);
    }
    const arma::mat c = detail::balance_scales(nrm);
    for (arma::uword r = 0; r < k; ++r)
      for (std::size_t n = 1; n < N; ++n) M.F[n - 1].row(r) *= c(r, n);
    M.scale0 = c.col(0);
    return f;
  }

  // ||X - M||^2 as evaluate_loss() computes it (the cells' part summed by
  // the pieces, the Grams' with lambda = 1)
  double loss(const Pieces& P, CPFrobPieceModel& M, int) {
    const std::size_t N = M.F.size() + 1;
    const arma::uword k = M.F[0].n_rows;
    const Stats s = P.map(M.request("cpf_loss"));
    xn_ = s.num("xnorm");
    arma::mat Q(k, k, arma::fill::ones);
    Q %= s.mat("gram");
    for (std::size_t n = 1; n < N; ++n) Q %= M.F[n - 1] * M.F[n - 1].t();
    const arma::vec lambda(k, arma::fill::ones);
    return s.num("l2") + arma::as_scalar(lambda.t() * Q * lambda);
  }

 private:
  CPFrobMethod method_;
  double eps_;
  double xn_ = -1.0;
};

// pLSA under the L2 loss (solvers/pps.h: block coordinate descent
// with every column of every mode projected onto the simplex, then the
// weights) on pieces. The first mode's column r spans the pieces: each
// piece puts its entries of the target b (from its MTTKRP of the first
// mode, made once per iteration and kept beside its rows, and its rows)
// in place of the column, and the projection's threshold tau, with the
// column max(b - tau, 0), is found from sums over the pieces alone: the
// support S of the projection is {b > tau} with tau = (sum_S b - 1) / |S|,
// which rounds of sums and counts over the pieces of the entries above a
// few thresholds find (threshold(): Michelot's (1986) iteration from S =
// all entries, with a grid that brackets tau). The same support and
// threshold as the sort of project_simplex(), up to the order of the sums.
// Every other mode and the weights are updated from their MTTKRPs summed
// over the pieces by pps_update_mode() and pps_weights() themselves. The
// data in memory are one piece (plsa_glue.cpp), which projects each
// column of the first mode itself, by the sort of pps_update_mode(); so a
// fit in pieces equals the in-memory fit up to rounding. free_weights: the
// weights are only non-negative (not on the simplex), the unnormalized L2
// model of Hazan & Shashua's noise analysis; fitted to G = X / sum(X) it
// is the fit of X divided by sum(X).
struct PPSPieceModel {
  arma::vec lambda;
  std::vector<arma::mat> F;  // modes 2 .. N, k x d_n
  const Pieces* P = nullptr;
  Request request(const std::string& op) const {
    Request r(op);
    for (std::size_t n = 0; n < F.size(); ++n) r.view("F" + std::to_string(n + 1), F[n]);
    return r;
  }
  arma::mat gather() const { return P->map(request("gather")).mat("@F0"); }
};

class PPSPiecesRule {
 public:
  explicit PPSPiecesRule(bool free_weights) : free_weights_(free_weights) {}
  static constexpr bool kLagged = false;

  double step(const Pieces& P, PPSPieceModel& M, int) {
    const std::size_t N = M.F.size() + 1;
    const arma::uword k = M.lambda.n_elem;
    if (xn_ < 0.0) xn_ = P.map(M.request("cpf_loss")).num("xnorm");
    std::vector<arma::mat> G(N);
    for (std::size_t n = 1; n < N; ++n) G[n] = M.F[n - 1] * M.F[n - 1].t();
    arma::mat Gam(k, k, arma::fill::ones);
    for (std::size_t m = 1; m < N; ++m) Gam %= G[m];
    P.map(M.request("pps_mttkrp"));
    // (one piece in this process, every row: it projects each column
    // itself, by pps_update_mode()'s sort)
    const bool whole = P.in_place();
    double prev = -1.0, tau = 0.0, den;
    arma::vec coef;
    for (arma::uword r = 0; r < k; ++r) {
      if (!pps_coef(Gam, M.lambda, r, coef, den)) continue;
      Request cr("pps_col");
      cr.with("prev", prev).with("tau", tau).with("row", static_cast<double>(r)).with("coef", arma::mat(coef))
          .with("den", den);
      if (whole) {
        P.map(cr.with("whole", 1.0));
        continue;
      }
      const Stats s = P.map(cr);
      tau = threshold(P, r, s.num("sum"), s.num("count"), s.mat("@max").max());
      prev = static_cast<double>(r);
    }
    G[0] = P.map(Request("pps_col").with("prev", prev).with("tau", tau).with("row", -1.0)).take("gram");
    arma::mat X;
    std::vector<double> work;
    for (std::size_t n = 1; n < N; ++n) {
      X = P.map(M.request("cpf_mttkrp").with("mode", static_cast<double>(n))).take("mttkrp");
      arma::mat& U = M.F[n - 1];
      if (X.n_rows != U.n_rows || X.n_cols != U.n_cols) throw std::logic_error("the pieces' MTTKRP has the wrong size");
      arma::mat Gn(k, k, arma::fill::ones);
      for (std::size_t m = 0; m < N; ++m) if (m != n) Gn %= G[m];
      pps_update_mode(U, X, Gn, M.lambda, work);
      G[n] = U * U.t();
    }
    arma::mat Q(k, k, arma::fill::ones);
    for (std::size_t m = 0; m < N; ++m) Q %= G[m];
    return xn_ + pps_weights(Q, arma::sum(X % M.F[N - 2], 1), M.lambda, free_weights_);
  }

  // ||G - P||^2 as evaluate_loss() computes it
  double loss(const Pieces& P, PPSPieceModel& M, int) {
    const std::size_t N = M.F.size() + 1;
    const Stats s = P.map(M.request("cpf_loss").view("lambda", M.lambda));
    xn_ = s.num("xnorm");
    arma::mat Q = s.mat("gram");
    for (std::size_t n = 1; n < N; ++n) Q %= M.F[n - 1] * M.F[n - 1].t();
    return s.num("l2") + arma::as_scalar(M.lambda.t() * Q * M.lambda);
  }

 private:
  // The threshold of column r's projection (entries b over the pieces:
  // their sum, count and largest). Michelot's iterate t (from the support
  // S(t) = {b > t}: (sum_S b - 1) / |S|) never passes the threshold tau,
  // the root of h(t) = sum_{b > t} (b - t) = 1 (h decreasing); each round
  // asks for h and S at t and at a grid up to a bound above tau, which
  // brackets tau between neighbours t_a <= tau < t_b. When no entry lies
  // between them (equal counts) or Michelot's iterate stays (S(t) keeps
  // its count), S(t_a) is the support and tau its iterate: exact. (Each
  // round makes a Michelot step, so the rounds end; the grid makes them
  // few.)
  static double threshold(const Pieces& P, arma::uword r, double sum, double count, double top) {
    const arma::uword m = 16;
    double t = (sum - 1.0) / count, hi = top, last = count;
    for (int round = 0; round < 10000; ++round) {
      arma::mat cand(m, 1);
      for (arma::uword j = 0; j < m; ++j) cand[j] = t + (hi - t) * static_cast<double>(j) / m;
      const Stats c = P.map(Request("pps_count").with("row", static_cast<double>(r)).with("t", cand));
      const arma::mat& cs = c.mat("sum");
      const arma::mat& cn = c.mat("count");
      if (!(cn[0] > 0.0)) return t;
      const double next = (cs[0] - 1.0) / cn[0];
      if (cn[0] >= last) return next;  // (S(t) as before: t is tau)
      arma::uword a = 0;
      for (arma::uword j = 1; j < m; ++j)
        if (cn[j] > 0.0 && cs[j] - cand[j] * cn[j] >= 1.0) a = j;
      const double ta = (cs[a] - 1.0) / cn[a];
      if (a + 1 < m) {
        if (cn[a + 1] == cn[a]) return ta;
        hi = cand[a + 1];
      }
      // (the larger lower bound, and the count of the support it came from)
      last = ta >= next ? cn[a] : cn[0];
      t = std::max(ta, next);
    }
    return t;
  }
  bool free_weights_;
  double xn_ = -1.0;
};

}  // namespace aspectr

#endif
