// aspectr/solvers/cd_pieces.h — the KL aspect model of matrices and N-way
// data by cyclic coordinate descent over the modes (the row problems of
// Chi and Kolda 2012, each solved by the coordinate Newton sweeps of Hsieh
// and Dhillon 2011; the derivation is in solvers/cd.h), written once on
// data in pieces (pieces.h): the first mode split by rows, each piece with
// its rows of the first factor (columns on the simplex over all pieces,
// k x rows), every other mode whole. The data in memory are one piece
// (cd.h, KLCDMemoryPiece); shards, shard files and cluster workers are
// others (KLCDTensorPiece).
//
// An iteration (nmf/kl_cd.h's kcd_iteration(), the one iteration of every
// KL coordinate descent; this rule says what the aspect model solves for):
//  * mode 1: its rows are local to a piece, which solves them with its
//    row solver (nmf::KLCD::solve() of a_1 = lambda_r U_1(:, r), its
//    cells' coefficients the products of the other modes' entries) and
//    keeps a_1; their row sums over the pieces give the weights, and the
//    pieces divide a_1 by them with the next request (a component without
//    mass keeps its old profile, kept by the piece);
//  * every other mode n: each index's problem needs the cells of all
//    pieces. One piece holding them all solves the mode's rows itself
//    ("kcd_mode"). Otherwise the rule takes every index through the
//    Newton steps of KLCD::solve() in the same order (nmf::KLCDColumns),
//    each pass over the pieces adding their parts of the indices' sums
//    (3 x d_n); a piece recomputes or moves v = G h at its cells. Then
//    a_n is split into weights and simplex columns.
// The value after the iteration, D(G || P) = sum g log g - sum g log v +
// log T (v the model at the last mode's solution, T its total), comes
// from one more request, so a fit in pieces equals the in-memory fit up to
// rounding; a step that rounding made worse (beyond the allowance of
// no_rise(), control.h) is undone.
// With a Dirichlet prior (a matrix; prior.h) each mode minimizes a
// majorizer (PieceKLCDTensor): the pieces solve their documents with the
// documents' pseudo-cells and coefficients, then add the documents' sums
// of the terms' majorizer ("kcd_prior"), whose pseudo-cells the rule
// sends with "kcd_mode" or adds to every pass's sums itself; the value
// adds the prior's penalty (the documents' part from the pieces).
//
// Requests (inputs: lambda (k x 1), F1 .. F{N-1} (the shared modes'
// factors, k x d_n) and, when pending, colsum (the first mode's row sums
// that divide the pieces' a_1 before the request is answered)):
//   "kcd_rows"    [prior_doc (k x 1: the documents' pseudo-counts over the
//                 total)] -> mass (k x 1: the row sums of the piece's new a_1)
//   "kcd_prior"   -> colw (k x 1), Dm (the piece's part of the terms'
//                 majorizer's documents' sums, prior.h document_sums())
//   "kcd_pass"    mode, rd, rn, d, reset, hv (at a reset, or for pieces
//                 that keep no v) -> sums (3 x d_n: a2, b1, b2) [, nokeep]
//                 (kcd_mode_pass())
//   "kcd_xlogv"   mode, H (k x d_n) [, prior_doc] -> xlogv (sum g log v, v
//                 the model with H in mode `mode`), glogg (sum g log g),
//                 f0sum (k x 1: the row sums of the piece's first factor)
//                 [, dpen: the documents' penalty of the prior with lambda]
//   "kcd_mode"    mode, A (by reference: the mode's a_n, k x d_n, solved in
//                 place) [, coef (k x 1), cells (k x d_n): a prior's
//                 majorizer] (only a piece holding every cell)
//   "kcd_restore" the first factor of the step's start back
//   "gather"      -> F0 (rows x k)
#ifndef ASPECTR_SOLVERS_CD_PIECES_H
#define ASPECTR_SOLVERS_CD_PIECES_H

#include <algorithm>
#include <cmath>
#include <limits>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>
#include "../control.h"
#include "../nmf/kl_cd.h"
#include "../pieces.h"
#include "cp_weighted_pieces.h"
#include "pieces_em.h"

namespace aspectr {

// A mode's rows' linear coefficients and pseudo-cells (a prior's
// majorizers, PieceKLCDTensor): none, 1 for every coefficient.
struct KLCDRowTerms {
  const double* coef = nullptr;      // k values, the same for every row
  const double* row_coef = nullptr;  // or one value per row (every topic's)
  const double* pseudo = nullptr;    // pseudo-cells: k values for each row,
  std::size_t pseudo_stride = 0;     // row i's at pseudo + i * stride (0: the same for all)
  bool pseudo_if_cells = false;      // only on rows with cells (the documents)
};

// What every piece of PieceKLCDTensor does alike, whatever holds its
// cells: its rows of the first factor F0 (k x rows) and a matrix of the
// same size it keeps the first factor of the step's start in (both the
// caller's memory, changed in place); the requests "gather",
// "kcd_restore" and "kcd_prior", the pending row sums, the first mode's
// rows around the piece's row solver, and the answer of "kcd_xlogv".
class KCDPieceBase {
 protected:
  KCDPieceBase(double* F0, double* aux, arma::uword k, arma::uword rows)
      : F0_(F0, k, rows, false, true), aux_(aux, k, rows, false, true) {}

  // runs r if it is one of the common requests (true), into out; applies
  // the pending row sums of any request
  bool common(const Request& r, Stats& out) {
    if (r.has("colsum")) normalize(arma::vectorise(r.mat("colsum")));
    if (r.op == "gather") {
      out.set("F0", arma::mat(F0_.t()));
      return true;
    }
    if (r.op == "kcd_restore") {
      F0_ = aux_;
      return true;
    }
    if (r.op == "kcd_prior") {
      arma::vec colw(F0_.n_rows, arma::fill::zeros);
      double Dm = 0.0;
      DirichletPrior::document_sums(arma::vectorise(r.mat("lambda")), F0_, colw, Dm);
      out.set("colw", arma::mat(colw));
      out.set("Dm", Dm);
      return true;
    }
    return false;
  }
  // the piece's rows of the first mode: a_1 = lambda_r U_1(:, r) solved by
  // solve(A, terms) (with the request's prior_doc, its documents'
  // majorizer: each row's coefficients from its entering mass), kept in
  // F0; the start's profile in aux
  template <class Solve>
  void first_rows(const Request& r, Solve solve) {
    const arma::uword k = F0_.n_rows;
    const arma::vec lambda = arma::vectorise(r.mat("lambda"));
    if (lambda.n_elem != k) throw std::logic_error("coordinate descent piece: weights of the wrong size");
    aux_ = F0_;
    arma::mat A = F0_;
    A.each_col() %= lambda;
    KLCDRowTerms t;
    arma::vec doc, coef;
    if (r.has("prior_doc")) {
      DirichletPrior pr;
      pr.doc = doc = arma::vectorise(r.mat("prior_doc"));
      if (doc.n_elem != k) throw std::logic_error("coordinate descent piece: a prior of the wrong size");
      const arma::rowvec s0 = arma::sum(A, 0);
      coef.set_size(A.n_cols);
      for (arma::uword i = 0; i < A.n_cols; ++i) coef[i] = pr.document_coef(s0[i]);
      t.row_coef = coef.memptr();
      t.pseudo = doc.memptr();
      t.pseudo_if_cells = true;
    }
    solve(A, t);
    F0_ = A;
  }
  // the answer of "kcd_xlogv": the cells' sum g log v and g log g, the
  // first factor's row sums and, with the request's prior_doc, the
  // documents' penalty of the prior with lambda
  Stats xlogv_stats(const Request& r, double xlogv, double glogg) const {
    Stats out;
    out.set("xlogv", xlogv);
    out.set("glogg", glogg);
    out.set("f0sum", arma::mat(arma::sum(F0_, 1)));
    if (r.has("prior_doc")) {
      DirichletPrior pr;
      pr.doc = arma::vectorise(r.mat("prior_doc"));
      out.set("dpen", pr.documents_penalty(arma::vectorise(r.mat("lambda")), F0_));
    }
    return out;
  }

  arma::mat F0_, aux_;

 private:
  // the first factor's rows divided by the row sums over all pieces (a
  // row without mass: the start's profile)
  void normalize(const arma::vec& mass) {
    if (mass.n_elem != F0_.n_rows) throw std::logic_error("coordinate descent piece: row sums of the wrong size");
    for (arma::uword c = 0; c < F0_.n_rows; ++c) {
      if (mass[c] > 0.0) F0_.row(c) = F0_.row(c) / mass[c];
      else F0_.row(c) = aux_.row(c);
    }
  }
};

// One piece: its cells (values g = x / sum(x), first index local), its
// rows of the first factor and the step's start (KCDPieceBase).
class KLCDTensorPiece : public KCDPieceBase {
 public:
  // (v: the model's value at each of the piece's cells, kept between the
  // passes of a mode, kcd_mode_pass(); nullptr: recomputed in each pass)
  KLCDTensorPiece(CPCells& X, std::vector<arma::uword> dims, double* F0, double* aux, arma::uword k,
                  double* v = nullptr, std::size_t v_n = 0)
      : KCDPieceBase(F0, aux, k, dims.at(0)), X_(X), dims_(std::move(dims)), v_(v), v_n_(v_n) {}

  Stats run(const Request& r, int) {
    Stats out;
    if (common(r, out)) return out;
    const std::size_t N = dims_.size();
    std::vector<arma::mat> F(N);  // views: F[0] the piece's, F[n] shared
    F[0] = arma::mat(F0_.memptr(), F0_.n_rows, F0_.n_cols, false, true);
    for (std::size_t n = 1; n < N; ++n) {
      // (a pass of mode n does not read F_n, and is not sent it)
      if (r.op == "kcd_pass" && !r.has("F" + std::to_string(n))) continue;
      const arma::mat& m = r.mat("F" + std::to_string(n));
      if (m.n_rows != F0_.n_rows || m.n_cols != dims_[n])
        throw std::logic_error("coordinate descent piece: a shared factor of the wrong size");
      F[n] = arma::mat(const_cast<double*>(m.memptr()), m.n_rows, m.n_cols, false, true);
    }
    if (r.op == "kcd_rows") {
      // (every cell at once, a file's chunks gathered, grouped by row)
      first_rows(r, [&](arma::mat& A, const KLCDRowTerms& t) {
        const arma::vec ones(F0_.n_rows, arma::fill::ones);
        arma::vec coef(F0_.n_rows);
        kcd_first_rows(X_, N, A, [&](const index_t* ix, double* z) { product(F, ix, 0, z); },
                       [&](arma::uword i) -> const double* {
                         if (t.row_coef == nullptr) return ones.memptr();
                         coef.fill(t.row_coef[i]);
                         return coef.memptr();
                       }, "coordinate descent piece", t.pseudo);
      });
      out.set("mass", arma::mat(arma::sum(F0_, 1)));
      return out;
    }
    const std::size_t n = static_cast<std::size_t>(r.num("mode", 0.0));
    if (n < 1 || n >= N) throw std::logic_error("coordinate descent piece: a mode out of range");
    for (std::size_t m = 1; m < N; ++m)
      if (m != n && F[m].n_cols != dims_[m]) throw std::logic_error("coordinate descent piece: a shared factor missing");
    if (r.op == "kcd_pass") return pass(F, n, r);
    if (r.op == "kcd_xlogv") {
      const arma::mat& H = r.mat("H");
      if (H.n_rows != F0_.n_rows || H.n_cols != dims_[n]) throw std::logic_error("coordinate descent piece: bad H");
      double xl = 0.0, gl = 0.0;
      const arma::uword k = F0_.n_rows;
      std::vector<double> gp(k);
      X_.each([&](const SparseTensor& X) {
        const index_t* ix0 = X.indices();
        for (std::size_t s = 0; s < X.nnz(); ++s) {
          if ((s & 65535) == 65535) poll();  // (a user's interrupt, interrupt.h)
          const index_t* ix = ix0 + s * N;
          const double g = X.value(s);
          product(F, ix, n, gp.data());
          const double* h = H.colptr(ix[n]);
          double v = 0.0;
          for (arma::uword c = 0; c < k; ++c) v += h[c] * gp[c];
          xl += g * std::log(std::max(v, 1e-300));
          if (g > 0.0) gl += g * std::log(g);
        }
      });
      return xlogv_stats(r, xl, gl);
    }
    throw std::logic_error("unknown request '" + r.op + "' of a coordinate descent piece");
  }

 private:
  // gp = the product of the modes other than n at the cell's indices (in
  // the modes' order, as KLCDCells forms it)
  void product(const std::vector<arma::mat>& F, const index_t* ix, std::size_t n, double* gp) const {
    const arma::uword k = F0_.n_rows;
    bool first = true;
    for (std::size_t m = 0; m < F.size(); ++m) {
      if (m == n) continue;
      const double* f = F[m].colptr(ix[m]);
      if (first) {
        for (arma::uword c = 0; c < k; ++c) gp[c] = f[c];
        first = false;
      } else {
        for (arma::uword c = 0; c < k; ++c) gp[c] *= f[c];
      }
    }
  }
  // entry q of product() (the same products in the same order)
  double product_at(const std::vector<arma::mat>& F, const index_t* ix, std::size_t n, arma::uword q) const {
    double z = 0.0;
    bool first = true;
    for (std::size_t m = 0; m < F.size(); ++m) {
      if (m == n) continue;
      const double f = F[m](q, ix[m]);
      if (first) { z = f; first = false; } else { z *= f; }
    }
    return z;
  }
  // one pass of KLCDColumns for mode n: the piece's part of every index's
  // sums (a2, b1, b2), v = G hv at each cell (kept, or recomputed)
  Stats pass(const std::vector<arma::mat>& F, std::size_t n, const Request& r) const {
    return kcd_mode_pass(X_, dims_.size(), n, F0_.n_rows, dims_[n], r,
                         [&](const index_t* ix, double* z) { product(F, ix, n, z); },
                         [&](const index_t* ix, int q) { return product_at(F, ix, n, static_cast<arma::uword>(q)); },
                         "coordinate descent piece", v_, v_n_);
  }

  CPCells& X_;
  std::vector<arma::uword> dims_;
  double* v_;
  std::size_t v_n_;
};

// The rule (one Newton sweep of one step per coordinate) on pieces; the model's first factor stays with the pieces.
// `prior` (a matrix only; in the core's units, prior.h): the MAP fit.
// `whole`: the pieces are one piece holding every cell (KLCDMemoryPiece,
// cd.h, the data in memory), which then solves each mode's rows itself
// (one request "kcd_mode" per mode, the rows by reference) rather than
// through a request per Newton pass.
//
// MAP estimation with Dirichlet pseudo-counts: the objective is then
// D(G || P) plus the prior's penalty (prior.h), the negative log
// posterior over the total count. With the other mode fixed, the model's
// total free and the penalty (invariant to that total) added, the mode's
// problem still bounds the objective from above with equality at the
// entering model, as above, but its rows are coupled and not convex
// through the normalizers of theta and phi. Each iteration minimizes a
// majorizer instead, equal at the entering model (J0 its joint), so the
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
class PieceKLCDTensor : public KCDRuleDefaults {
 public:
  static constexpr bool kLagged = false;
  explicit PieceKLCDTensor(DirichletPrior prior = DirichletPrior())
      : own_(std::make_shared<const DirichletPrior>(std::move(prior))), prior_(*own_) {}
  // (a prior the caller keeps, or none)
  PieceKLCDTensor(const DirichletPrior* prior, bool whole)
      : prior_(prior != nullptr ? *prior : none()), whole_(whole) {}

  double step(const Pieces& P, AspectPieceModel& M, int threads) {
    return step(P, M, threads, std::numeric_limits<double>::quiet_NaN());
  }
  double step(const Pieces& P, AspectPieceModel& M, int, double prev) {
    const double value = kcd_iteration(*this, P, M, prev);
    prev_kl_ = kl_;
    return value;
  }

  // kcd_iteration()'s rule: the first mode's rows in the pieces, then
  // every other mode, each split into weights and simplex columns; a step
  // that rounding made worse is undone
  static constexpr bool kGuard = true, kRowsFirst = true;
  void kcd_save(const Pieces&, AspectPieceModel& M, bool) {
    if (prior_.any() && M.F.size() != 1) throw std::logic_error("coordinate descent in pieces: a prior needs a matrix");
    lambda0_ = M.lambda;
    F0_ = M.F;
  }
  void kcd_restore(const Pieces& P, AspectPieceModel& M) {
    M.lambda = lambda0_;
    M.F = F0_;
    M.colsum.reset();
    P.map(Request("kcd_restore"));
    kl_ = prev_kl_;
  }
  // mode 1, in the pieces; its split pending (colsum, with the next
  // request); with a prior, the terms' majorizer at the model entering
  void kcd_rows(const Pieces& P, AspectPieceModel& M) {
    const arma::uword k = M.lambda.n_elem;
    const arma::vec mass = arma::vectorise(P.map(with_doc(M.request("kcd_rows"))).mat("mass"));
    T_ = total(mass);
    M.lambda = mass / T_;
    M.colsum = arma::mat(mass);
    coef_.ones(k);
    cells_.reset();
    if (prior_.any()) {
      const Stats st = P.map(M.request("kcd_prior"));
      prior_.term_majorizer(M.lambda, arma::vectorise(st.mat("colw")), st.num("Dm"), M.F[0], coef_, cells_);
    }
  }
  bool kcd_whole(const Pieces&, const AspectPieceModel&) const { return whole_; }
  std::size_t kcd_modes(const AspectPieceModel& M) const { return M.F.size(); }
  // a_n = diag(lambda) F_n
  void kcd_enter(const Pieces&, AspectPieceModel& M, std::size_t n, bool, KCDMode& m) {
    m.held = M.F[n - 1];
    m.held.each_col() %= M.lambda;
    m.A = &m.held;
    m.c = coef_;
  }
  void kcd_solve_whole(const Pieces& P, AspectPieceModel& M, std::size_t n, KCDMode& m) {
    Request r = M.request("kcd_mode");
    r.with("mode", static_cast<double>(n)).ref("A", m.held);
    if (prior_.any()) r.view("coef", coef_).view("cells", cells_);
    P.map(r);
  }
  // (the other modes' factors: not this mode's, nor the weights)
  Request kcd_pass(const AspectPieceModel& M, std::size_t n) const {
    Request r = M.request("kcd_pass");
    r.in.erase("F" + std::to_string(n));
    r.in.erase("lambda");
    r.with("mode", static_cast<double>(n));
    return r;
  }
  // the prior's pseudo-cells: cell e_j of value cells(j, w), model
  // hv(j, w); only cells rd and rn have a non-zero term (the others add
  // zeros), taken in the order of j
  void kcd_own(arma::mat& St, const nmf::KLCDColumns& sv, std::size_t) const {
    if (!prior_.any()) return;
    const arma::mat& hv = sv.hv();
    for (arma::uword w = 0; w < St.n_rows; ++w) {
      const int rd = sv.rd[w], rn = sv.rn[w];
      if (rd < 0) continue;
      const double* pc = cells_.colptr(w);
      const int first = std::min(rd, rn), second = std::max(rd, rn);
      for (int j : {first, second}) {
        if (pc[j] > 0.0)
          nmf::KLCD::add_terms(j == rd ? 1.0 : 0.0, j == rn ? 1.0 : 0.0, pc[j], hv(j, w), St(w, 0), St(w, 1), St(w, 2));
        if (first == second) break;
      }
    }
  }
  void kcd_leave(const Pieces&, AspectPieceModel& M, std::size_t n, KCDMode& m) {
    const arma::vec mass = arma::sum(m.held, 1);
    T_ = total(mass);
    for (arma::uword r = 0; r < mass.n_elem; ++r)
      if (mass[r] > 0.0) M.F[n - 1].row(r) = m.held.row(r) / mass[r];
    M.lambda = mass / T_;
    if (n == M.F.size()) last_ = std::move(m.held);
  }
  double kcd_value(const Pieces& P, AspectPieceModel& M) {
    const std::size_t S = M.F.size();
    const Stats e = P.map(with_doc(M.request("kcd_xlogv").with("mode", static_cast<double>(S)).view("H", last_)));
    kl_ = e.num("glogg") - e.num("xlogv") + std::log(T_);
    return kl_ + penalty(e, M);
  }

  // D(G || P) of the model (with a prior, plus its penalty)
  double loss(const Pieces& P, AspectPieceModel& M, int) {
    const std::size_t S = M.F.size();
    arma::mat H = M.F[S - 1];
    H.each_col() %= M.lambda;
    const Stats e = P.map(with_doc(M.request("kcd_xlogv").with("mode", static_cast<double>(S)).view("H", H)));
    arma::vec tot = arma::vectorise(e.mat("f0sum")) % arma::sum(H, 1);
    for (std::size_t n = 0; n + 1 < S; ++n) tot %= arma::sum(M.F[n], 1);
    kl_ = prev_kl_ = e.num("glogg") - e.num("xlogv") + std::log(arma::accu(tot));
    return kl_ + penalty(e, M);
  }
  // D(G || P) of the model of the last step or loss(), without the prior's
  // penalty
  double kl() const { return kl_; }

 private:
  static double total(const arma::vec& mass) {
    const double T = arma::accu(mass);
    if (!(T > 0.0) || !std::isfinite(T))
      throw std::runtime_error("coordinate descent: the model vanished (no positive mass left)");
    return T;
  }
  // a request with the documents' pseudo-counts, when there are any (a
  // request built in place, or a temporary: moved, as a copy would copy
  // the factors it views)
  Request& with_doc(Request& r) const {
    if (!prior_.doc.is_empty()) r.view("prior_doc", prior_.doc);
    return r;
  }
  Request with_doc(Request&& r) const {
    if (!prior_.doc.is_empty()) r.view("prior_doc", prior_.doc);
    return std::move(r);
  }
  // the prior's penalty of the model (the documents' part from the pieces' "dpen")
  double penalty(const Stats& e, const AspectPieceModel& M) const {
    if (!prior_.any()) return 0.0;
    return (prior_.doc.is_empty() ? 0.0 : e.num("dpen")) + prior_.terms_penalty(M.F[0]);
  }

  static const DirichletPrior& none() {
    static const DirichletPrior p;
    return p;
  }

  std::shared_ptr<const DirichletPrior> own_;
  const DirichletPrior& prior_;
  bool whole_ = false;
  // the step's: its start (for an undo), the model's total, the terms'
  // linear coefficients and pseudo-cells (a prior's majorizer: k x d_2),
  // the last mode's a_n
  arma::vec lambda0_, coef_;
  std::vector<arma::mat> F0_;
  double T_ = 0.0;
  arma::mat cells_, last_;
  double kl_ = std::numeric_limits<double>::quiet_NaN(), prev_kl_ = std::numeric_limits<double>::quiet_NaN();
};

}  // namespace aspectr

#endif
