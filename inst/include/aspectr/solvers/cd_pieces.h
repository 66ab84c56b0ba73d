// aspectr/solvers/cd_pieces.h — the KL aspect model of N-way data by cyclic
// coordinate descent over the modes (solvers/cd.h, KLCDRule: the row
// problems of Chi and Kolda 2012, each solved by the coordinate Newton
// sweeps of Hsieh and Dhillon 2011) on data in pieces (pieces.h): the
// first mode split by rows, each piece with its rows of the first factor
// (columns on the simplex over all pieces, k x rows), every other mode
// whole.
//
// An iteration makes the in-memory iteration's steps in its order:
//  * mode 1: its rows are local to a piece, which solves them with the
//    in-memory row solver (nmf::KLCD::solve() of a_1 = lambda_r U_1(:, r),
//    its cells' coefficients the products of the other modes' entries)
//    and keeps a_1; their row sums over the pieces give the weights, and
//    the pieces divide a_1 by them with the next request (a component
//    without mass keeps its old profile, kept by the piece);
//  * every other mode n: each index's problem needs the cells of all
//    pieces. The rule takes every index through the Newton steps of
//    KLCD::solve() in the same order (nmf::KLCDColumns), each pass over
//    the pieces adding their parts of the indices' sums (3 x d_n); a
//    piece recomputes v = G h at its cells from the coefficients sent;
//    then a_n is split into weights and simplex columns as in memory.
// The value after the iteration, D(G || P) = sum g log g - sum g log v +
// log T (v the model at the last mode's solution, T its total), comes
// from one more pass, so a fit in pieces equals the in-memory fit up to
// rounding; as in memory a step that rounding made worse is undone.
// With a Dirichlet prior (a matrix; prior.h) each mode minimizes
// KLCDRule's majorizer: the pieces solve their documents with the
// documents' pseudo-cells and coefficients, then add the documents' sums
// of the terms' majorizer ("kcd_prior"), whose pseudo-cells the rule adds
// to every pass's sums itself; the value adds the prior's penalty (the
// documents' part from the pieces).
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
//   "kcd_restore" the first factor of the step's start back
//   "gather"      -> F0 (rows x k)
#ifndef ASPECTR_SOLVERS_CD_PIECES_H
#define ASPECTR_SOLVERS_CD_PIECES_H

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>
#include <string>
#include <vector>
#include "../nmf/kl_cd.h"
#include "../pieces.h"
#include "cp_weighted_pieces.h"
#include "pieces_em.h"

namespace aspectr {

// One piece: its cells (values g = x / sum(x), first index local), its
// rows of the first factor F0 (k x rows) and a matrix of the same size it
// keeps the first factor of the step's start in (both the caller's
// memory, changed in place).
class KLCDTensorPiece {
 public:
  // (v: the model's value at each of the piece's cells, kept between the
  // passes of a mode, kcd_mode_pass(); nullptr: recomputed in each pass)
  KLCDTensorPiece(CPCells& X, std::vector<arma::uword> dims, double* F0, double* aux, arma::uword k,
                  double* v = nullptr, std::size_t v_n = 0)
      : X_(X), dims_(std::move(dims)), F0_(F0, k, dims_.at(0), false, true), aux_(aux, k, dims_.at(0), false, true),
        v_(v), v_n_(v_n) {}

  Stats run(const Request& r, int) {
    Stats out;
    if (r.has("colsum")) normalize(arma::vectorise(r.mat("colsum")));
    if (r.op == "gather") {
      out.set("F0", arma::mat(F0_.t()));
      return out;
    }
    if (r.op == "kcd_restore") {
      F0_ = aux_;
      return out;
    }
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
      rows(F, arma::vectorise(r.mat("lambda")), r);
      out.set("mass", arma::mat(arma::sum(F0_, 1)));
      return out;
    }
    if (r.op == "kcd_prior") {
      arma::vec colw(F0_.n_rows, arma::fill::zeros);
      double Dm = 0.0;
      DirichletPrior::document_sums(arma::vectorise(r.mat("lambda")), F0_, colw, Dm);
      out.set("colw", arma::mat(colw));
      out.set("Dm", Dm);
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
      out.set("xlogv", xl);
      out.set("glogg", gl);
      out.set("f0sum", arma::mat(arma::sum(F0_, 1)));
      if (r.has("prior_doc")) {
        DirichletPrior pr;
        pr.doc = arma::vectorise(r.mat("prior_doc"));
        out.set("dpen", pr.documents_penalty(arma::vectorise(r.mat("lambda")), F0_));
      }
      return out;
    }
    throw std::logic_error("unknown request '" + r.op + "' of a coordinate descent piece");
  }

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
  // gp = the product of the modes other than n at the cell's indices (in
  // the modes' order, as KLCDRule forms it)
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
  // the piece's rows of the first mode: a_1 = lambda_r U_1(:, r), each row
  // solved with its cells (KLCDRule::step()'s row solver; with the
  // request's prior_doc, its documents' majorizer), kept in F0; the start's
  // profile in aux
  void rows(const std::vector<arma::mat>& F, const arma::vec& lambda, const Request& r) {
    const std::size_t N = dims_.size();
    const arma::uword k = F0_.n_rows;
    if (lambda.n_elem != k) throw std::logic_error("coordinate descent piece: weights of the wrong size");
    // (every cell at once, a file's chunks gathered, grouped by row)
    aux_ = F0_;
    arma::mat A = F0_;
    A.each_col() %= lambda;
    const arma::vec ones(k, arma::fill::ones);
    if (r.has("prior_doc")) {
      // (each row's coefficients from its entering mass, as KLCDRule's)
      DirichletPrior pr;
      pr.doc = arma::vectorise(r.mat("prior_doc"));
      if (pr.doc.n_elem != k) throw std::logic_error("coordinate descent piece: a prior of the wrong size");
      const arma::rowvec s0 = arma::sum(A, 0);
      arma::vec coef(k);
      kcd_first_rows(X_, N, A, [&](const index_t* ix, double* z) { product(F, ix, 0, z); },
                     [&](arma::uword i) {
                       coef.fill(pr.document_coef(s0[i]));
                       return coef.memptr();
                     }, "coordinate descent piece", pr.doc.memptr());
    } else {
      kcd_first_rows(X_, N, A, [&](const index_t* ix, double* z) { product(F, ix, 0, z); },
                     [&](arma::uword) { return ones.memptr(); }, "coordinate descent piece");
    }
    F0_ = A;
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
  arma::mat F0_, aux_;
  double* v_;
  std::size_t v_n_;
};

// The rule (KLCDRule's iteration, one Newton sweep of one step per
// coordinate) on pieces; the model's first factor stays with the pieces.
// `prior` (a matrix only; in the core's units, prior.h): KLCDRule's MAP
// fit.
class PieceKLCDTensor {
 public:
  static constexpr bool kLagged = false;
  explicit PieceKLCDTensor(DirichletPrior prior = DirichletPrior()) : prior_(std::move(prior)) {}

  double step(const Pieces& P, AspectPieceModel& M, int threads) {
    return step(P, M, threads, std::numeric_limits<double>::quiet_NaN());
  }
  double step(const Pieces& P, AspectPieceModel& M, int, double prev) {
    const std::size_t S = M.F.size();
    const arma::uword k = M.lambda.n_elem;
    const bool guard = std::isfinite(prev);
    const bool with_prior = prior_.any();
    if (with_prior && S != 1) throw std::logic_error("coordinate descent in pieces: a prior needs a matrix");
    const arma::vec lambda0 = M.lambda;
    const std::vector<arma::mat> F0 = M.F;
    // mode 1, in the pieces; its split pending (colsum, with the next request)
    arma::vec mass = arma::vectorise(P.map(with_doc(M.request("kcd_rows"))).mat("mass"));
    double T = total(mass);
    M.lambda = mass / T;
    M.colsum = arma::mat(mass);
    const arma::vec ones(k, arma::fill::ones);
    arma::vec coef = ones;
    arma::mat cells;  // the terms' pseudo-cells (k x d_2), with a prior
    if (with_prior) {
      const Stats st = P.map(M.request("kcd_prior"));
      prior_.term_majorizer(M.lambda, arma::vectorise(st.mat("colw")), st.num("Dm"), M.F[0], coef, cells);
    }
    arma::mat last;
    for (std::size_t n = 1; n <= S; ++n) {
      arma::mat A = M.F[n - 1];
      A.each_col() %= M.lambda;
      auto make = [&] {
        // (the other modes' factors: not this mode's, nor the weights)
        Request r = M.request("kcd_pass");
        r.in.erase("F" + std::to_string(n));
        r.in.erase("lambda");
        r.with("mode", static_cast<double>(n));
        return r;
      };
      if (with_prior) {
        A = kcd_mode_by_passes(P, A, coef, make, [&](arma::mat& St, const nmf::KLCDColumns& sv) {
          // the pseudo-cells' terms: cell e_j of value cells(j, w), model hv(j, w)
          const arma::mat& hv = sv.hv();
          for (arma::uword w = 0; w < St.n_rows; ++w) {
            const int rd = sv.rd[w], rn = sv.rn[w];
            if (rd < 0) continue;
            const double* pc = cells.colptr(w);
            for (arma::uword j = 0; j < k; ++j) {
              if (!(pc[j] > 0.0)) continue;
              nmf::KLCD::add_terms(static_cast<int>(j) == rd ? 1.0 : 0.0, static_cast<int>(j) == rn ? 1.0 : 0.0,
                                   pc[j], hv(j, w), St(w, 0), St(w, 1), St(w, 2));
            }
          }
        });
      } else {
        A = kcd_mode_by_passes(P, A, ones, make);
      }
      mass = arma::sum(A, 1);
      T = total(mass);
      for (arma::uword r = 0; r < k; ++r)
        if (mass[r] > 0.0) M.F[n - 1].row(r) = A.row(r) / mass[r];
      M.lambda = mass / T;
      if (n == S) last = std::move(A);
    }
    const Stats e = P.map(with_doc(M.request("kcd_xlogv").with("mode", static_cast<double>(S)).view("H", last)));
    kl_ = e.num("glogg") - e.num("xlogv") + std::log(T);
    double value = kl_ + penalty(e, M);
    if (guard && value > prev) {
      M.lambda = lambda0;
      M.F = F0;
      M.colsum.reset();
      P.map(Request("kcd_restore"));
      value = prev;
      kl_ = prev_kl_;
    }
    prev_kl_ = kl_;
    return value;
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
  // a request with the documents' pseudo-counts, when there are any
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

  DirichletPrior prior_;
  double kl_ = std::numeric_limits<double>::quiet_NaN(), prev_kl_ = std::numeric_limits<double>::quiet_NaN();
};

}  // namespace aspectr

#endif
