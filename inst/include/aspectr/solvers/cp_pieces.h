// aspectr/solvers/cp_pieces.h — non-negative CP under the Frobenius loss
// (ntf(loss = "frobenius"): HALS or multiplicative updates, solvers/cp.h)
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
//   * every other mode's MTTKRP is a sum over the pieces (one pass per
//     mode after the second), and the rule updates the mode itself;
//   * the objective ||X||^2 - 2 <X_N, A_N> + 1'(hadamard_n A_n'A_n)1 comes
//     from ||X||^2 (summed over the pieces once), the last MTTKRP and the
//     Grams, as in memory;
//   * the balancing of the norms scales the shared modes at once, the
//     first mode's rows by factors the pieces apply at the start of the
//     next iteration (CPFrobPieceModel::scale0: pending; gather() applies
//     them to what it returns, apply_pending() to the pieces' rows).
// So an iteration passes over the cells N - 1 times, as in one object N,
// and a fit in pieces equals the fit of the data as one piece (ntf() of
// data in memory: cpp_ntf_fit()) up to rounding.
//
// Requests (inputs: F1 .. F{N-1}, the shared modes' factors k x d_n, and
// scale0, k x 1, the pending factors of the first mode's rows, if any):
//   "cpf_loss"   -> l2 (sum over the cells of x^2 - 2 x m), xnorm (sum x^2),
//                   gram (A_1'A_1 of the piece's rows)
//   "cpf_rows"   gamma (k x k), method (0 HALS, 1 MU), eps: the piece's
//                   rows updated (after scale0) -> gram, mttkrp (mode 2's
//                   part, k x d_2)
//   "cpf_mttkrp" mode n (>= 1) -> mttkrp (k x d_n)
//   "cpf_scale"  the piece's rows multiplied by scale0 -> gram
//   "gather"     -> @F0 (k x rows, times scale0)
#ifndef ASPECTR_SOLVERS_CP_PIECES_H
#define ASPECTR_SOLVERS_CP_PIECES_H

#include <string>
#include <vector>
#include "../pieces.h"
#include "cp.h"
#include "cp_weighted_pieces.h"

namespace aspectr {

enum class CPFrobMethod { HALS, MU };

// One piece: its cells (first index local to the piece, values as the fit
// sees them), its dims and its rows of the first factor (k x rows, the
// caller's memory, updated in place).
class CPFrobPiece {
 public:
  CPFrobPiece(CPCells& X, std::vector<arma::uword> dims, double* A0, arma::uword k, arma::uword rows)
      : X_(X), dims_(std::move(dims)), A0_(A0, k, rows, false, true) {
    if (dims_.size() < 2 || dims_[0] != rows) throw std::logic_error("CP piece: its rows do not match its data");
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
    AspectModel M = model(r);
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
  AspectModel model(const Request& r) const {
    AspectModel M;
    const std::size_t N = dims_.size();
    M.lambda.ones(A0_.n_rows);
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

}  // namespace aspectr

#endif
