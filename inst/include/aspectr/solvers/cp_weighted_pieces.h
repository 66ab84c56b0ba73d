// aspectr/solvers/cp_weighted_pieces.h — weighted KL non-negative CP
// (ntf(loss = "kl", method = "mu") with missing cells, masks or weights;
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
// Requests (inputs: F1 .. F{N-1}, the shared modes' factors k x d_n):
//   "ntf_wmode" mode n (>= 1), update (1: the piece's rows of mode 1
//       updated first), num (1: the numerators), xlogv (1: sum x~ log m)
//       -> f0v (A_1'v_1 of the piece's rows), Ddev, Dabs (k x d_n: the
//       deviations' part of D and its absolute values), num, xlogv
//   "ntf_wxlogv" -> xlogv
//   "gather"     -> @F0 (k x rows)
#ifndef ASPECTR_SOLVERS_CP_WEIGHTED_PIECES_H
#define ASPECTR_SOLVERS_CP_WEIGHTED_PIECES_H

#include <functional>
#include <string>
#include <utility>
#include <vector>
#include "../pieces.h"
#include "../shard_file.h"
#include "cp_weighted.h"

namespace aspectr {

// The cells of a piece's X~, visited as tensors of consecutive cells (the
// passes over them are sums): all at once in memory, or a chunk at a time
// from a shard file.
class CPCells {
 public:
  virtual ~CPCells() = default;
  virtual void each(const std::function<void(const SparseTensor&)>& f) = 0;
};

class MemoryCPCells : public CPCells {
 public:
  explicit MemoryCPCells(const SparseTensor& X) : X_(X) {}
  void each(const std::function<void(const SparseTensor&)>& f) override { f(X_); }

 private:
  const SparseTensor& X_;
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

// One piece: its cells of X~ (first index local to the piece), its
// weights (v[0] its rows', deviating cells with a local first index,
// prepared for the piece's dims) and its rows of the first factor (k x
// rows, the caller's memory, updated in place).
class CPWeightedPiece {
 public:
  CPWeightedPiece(CPCells& X, const CPWeights& w, double* A0, arma::uword k, arma::uword rows)
      : X_(X), w_(w), A0_(A0, k, rows, false, true) {}

  Stats run(const Request& r, int threads) {
    Stats out;
    if (r.op == "gather") {
      out.set("@F0", arma::mat(A0_));
      return out;
    }
    AspectModel M = model(r);
    CPWeightedRule rule(true, CPWeightedMethod::MU, w_);
    if (r.op == "ntf_wxlogv") {
      out.set("xlogv", xlogv(rule, M, threads));
      return out;
    }
    if (r.op != "ntf_wmode") throw std::logic_error("unknown weighted CP piece operation '" + r.op + "'");
    const std::size_t n = static_cast<std::size_t>(r.num("mode", 0.0));
    if (n < 1 || n >= M.order()) throw std::logic_error("weighted CP piece: a mode out of range");
    if (r.num("update", 0.0) != 0.0) {
      // the rows of the first mode, by the in-memory rule's update
      // (CPWeightedRule::kl_mode(), its numerators summed over the chunks)
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
};

}  // namespace aspectr

#endif
