// aspectr/nmf/piece.h — NMF of X split by rows into pieces X_s (m_s x n),
// each with its rows of W (Wt_s, k x m_s), and the rules written once
// against them (pieces.h).
//
// W's rows belong to X's rows, so every update of W given H is made where
// the piece is, from X_s H' and H H'; the update of H given W needs only
// W'X = sum_s W_s'X_s and W'W = sum_s W_s'W_s (k x n and k x k), the
// reduce; the objective 1/2 (||X||^2 - 2 <W'X, H> + <W'W, HH'>) is a sum
// of the same parts. A matrix in memory is one piece (the rule's steps on
// it are the in-memory ones); shards in memory, shard files and the
// workers of a cluster are several, reached through a Pieces.
//
// A piece's cells come from a Cells: the matrix in memory (Data), or a
// shard file read a chunk of cells at a time (the embedding supplies it).
#ifndef ASPECTR_NMF_PIECE_H
#define ASPECTR_NMF_PIECE_H

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>
#include "../pieces.h"
#include "../shard_file.h"
#include "data.h"
#include "rules.h"
#include "shard.h"

namespace aspectr {
namespace nmf {

// A piece's cells: the two products every Frobenius update needs and the
// squared norm.
class Cells {
 public:
  virtual ~Cells() = default;
  virtual void XHt(const arma::mat& H, arma::mat& A, int threads) = 0;    // (X_s H')', k x m_s
  virtual void WtX(const arma::mat& Wt, arma::mat& C, int threads) = 0;   // W_s'X_s, k x n
  virtual double xnorm2() = 0;
  virtual double nnz() = 0;
};

// A matrix in memory (not owned).
class MemoryCells : public Cells {
 public:
  explicit MemoryCells(const Data& X) : X_(X) {}
  void XHt(const arma::mat& H, arma::mat& A, int threads) override { X_.XHt(H, A, threads); }
  void WtX(const arma::mat& Wt, arma::mat& C, int threads) override { X_.WtX(Wt, C, threads); }
  double xnorm2() override { return X_.xnorm2(); }
  double nnz() override { return X_.nnz(); }
  const Data& data() const { return X_; }

 private:
  const Data& X_;
};

// A shard file (m_s x n_s, n_s <= n columns of the fit), read `cells` cells
// at a time into `buf` for each product (stream_products(): each element
// summed in the file's order), never held whole; its values divided by
// `scale`.
class FileCells : public Cells {
 public:
  FileCells(std::string path, ShardBuffer& buf, std::size_t cells, double scale, arma::uword n)
      : path_(std::move(path)), buf_(buf), cells_(cells), scale_(scale), n_(n) {
    ShardReader reader(path_);
    nnz_ = static_cast<double>(reader.nnz());
  }
  void XHt(const arma::mat& H, arma::mat& A, int) override {
    ShardReader reader(path_);
    x2_ = stream_products(reader, buf_, cells_, scale_, nullptr, nullptr, &H, &A);
  }
  void WtX(const arma::mat& Wt, arma::mat& C, int) override {
    ShardReader reader(path_);
    C.set_size(Wt.n_rows, n_);
    x2_ = stream_products(reader, buf_, cells_, scale_, &Wt, &C, nullptr, nullptr);
  }
  double xnorm2() override {
    if (x2_ < 0.0) {
      ShardReader reader(path_);
      x2_ = stream_products(reader, buf_, cells_, scale_, nullptr, nullptr, nullptr, nullptr);
    }
    return x2_;
  }
  double nnz() override { return nnz_; }

 private:
  std::string path_;
  ShardBuffer& buf_;
  std::size_t cells_;
  double scale_, nnz_ = 0.0, x2_ = -1.0;
  arma::uword n_;
};

// What a piece keeps between requests besides its rows of W: matrices of
// its rows' size by name ("A": (X_s H')' for the sweeps of one update).
// Its holder owns it for the fit (a store of a shard engine, or the fit
// of a matrix in memory).
using Slots = std::map<std::string, arma::mat>;

// One piece: its cells, its rows of W (a view of the holder's memory,
// k x m_s, written in place) and its slots.
//
// Operations (Request::op), with inputs:
//   "eval"   s?        -> C = W_s'X_s, WW = W_s'W_s, xnorm2, nnz, s1 = sum W_s, s2 = sum W_s^2
//   "wtx"    s?        -> C
//   "sweep"  HH, l1, l2, H (first sweep of an update: A = (X_s H')' made)
//                      -> change (one HALS sweep of W_s, the squared change)
//   "wfin"             -> WW, inner = <A, W_s>, wsq = row sums of W_s^2 (k x 1), s1, s2
//   "block"  H, HH, l1, l2, eps, method (FrobMethod)
//                      -> W_s given H by one block update (MU, ANLS, ALS),
//                         then C, WW, s1, s2 of the new W_s
//   "gather" s?        -> @Wt (W_s, concatenated over the pieces)
//   "scale"  s         -> nothing (the rescaling alone)
// `s`, when given, first divides row r of W_s by s[r] (a rescaling the
// rule made of the whole W: unit_rows()).
class Piece {
 public:
  Piece(Cells& X, double* Wt, arma::uword k, arma::uword m, Slots& slots)
      : X_(X), Wt_(Wt, k, m, false, true), slots_(slots) {}
  arma::mat& Wt() { return Wt_; }

  Stats run(const Request& r, int threads) {
    Stats out;
    if (r.has("s")) rescale(r.mat("s"));
    const std::string& op = r.op;
    if (op == "eval") {
      arma::mat C;
      X_.WtX(Wt_, C, threads);
      out.set("C", std::move(C));
      w_sums(out, threads);
      out.set("xnorm2", X_.xnorm2());
      out.set("nnz", X_.nnz());
    } else if (op == "wtx") {
      arma::mat C;
      X_.WtX(Wt_, C, threads);
      out.set("C", std::move(C));
    } else if (op == "sweep") {
      arma::mat& A = slot("A");
      if (r.has("H")) X_.XHt(r.mat("H"), A, threads);
      out.set("change", FrobeniusHALS::update_rows(Wt_, A, r.mat("HH"), r.num("l1", 0.0), r.num("l2", 0.0),
                                                    threads));
    } else if (op == "wfin") {
      w_sums(out, threads);
      auto it = slots_.find("A");
      out.set("inner", it != slots_.end() && it->second.n_elem == Wt_.n_elem ? inner(it->second, Wt_) : 0.0);
      arma::mat wsq(Wt_.n_rows, 1, arma::fill::zeros);
      for (arma::uword i = 0; i < Wt_.n_cols; ++i)
        for (arma::uword q = 0; q < Wt_.n_rows; ++q) wsq(q, 0) += Wt_(q, i) * Wt_(q, i);
      out.set("wsq", std::move(wsq));
    } else if (op == "block") {
      arma::mat A;
      X_.XHt(r.mat("H"), A, threads);
      frob_block(static_cast<FrobMethod>(static_cast<int>(r.num("method", 0.0))), Wt_, A, r.mat("HH"),
                 r.num("l1", 0.0), r.num("l2", 0.0), r.num("eps", 0.0), 1, threads);
      A.reset();
      arma::mat C;
      X_.WtX(Wt_, C, threads);
      out.set("C", std::move(C));
      w_sums(out, threads);
    } else if (op == "gather") {
      out.set("@Wt", arma::mat(Wt_));
    } else if (op == "scale") {
      // (the rescaling only)
    } else {
      throw std::logic_error("unknown piece operation '" + op + "'");
    }
    return out;
  }

 private:
  arma::mat& slot(const std::string& name) {
    arma::mat& a = slots_[name];
    if (a.n_rows != Wt_.n_rows || a.n_cols != Wt_.n_cols) a.set_size(Wt_.n_rows, Wt_.n_cols);
    return a;
  }
  void rescale(const arma::mat& s) {
    if (s.n_elem != Wt_.n_rows) throw std::logic_error("scales of the wrong size");
    for (arma::uword i = 0; i < Wt_.n_cols; ++i) {
      double* w = Wt_.colptr(i);
      for (arma::uword q = 0; q < Wt_.n_rows; ++q) w[q] /= s[q];
    }
  }
  void w_sums(Stats& out, int threads) {
    out.set("WW", gram(Wt_, threads));
    out.set("s1", arma::accu(Wt_));
    out.set("s2", arma::accu(arma::square(Wt_)));
  }
  Cells& X_;
  arma::mat Wt_;
  Slots& slots_;
};

// The global part of a fit in pieces: H (k x n) and the pieces, which hold
// W. (The driver's callback asks for W through them.)
struct PieceModel {
  arma::mat H;
  const Pieces* P = nullptr;
  // the s of the next request: a rescaling of W not yet made by the pieces
  arma::mat pending;
  // W (k x m), gathered from the pieces
  arma::mat gather() const {
    Request r("gather");
    if (pending.n_elem) r.with("s", pending);
    const_cast<PieceModel*>(this)->pending.reset();
    return P->map(r).mat("@Wt");
  }
};

// Penalty::value() from W's sums (s1, s2 of the pieces) and H
inline double piece_penalty(const Penalty& pen, const Stats& w, const arma::mat& H) {
  double v = 0.0;
  if (pen.l1w != 0) v += pen.l1w * w.num("s1");
  if (pen.l1h != 0) v += pen.l1h * arma::accu(H);
  if (pen.l2w != 0) v += 0.5 * pen.l2w * w.num("s2");
  if (pen.l2h != 0) v += 0.5 * pen.l2h * arma::accu(arma::square(H));
  return v;
}

// Frobenius HALS (rules.h, FrobeniusHALS) on pieces: H given W from the
// reduced W'X and W'W, a few sweeps; then W given H by sweeps made by the
// pieces, each sweep a map whose summed change drives the same stopping
// rule as in memory; then W's rows to unit norm (H takes the scale), the
// pieces rescaling theirs with the next request.
class PieceHALS {
 public:
  PieceHALS(Penalty p, double m, double n) : pen_(p), m_(m), n_(n) {}
  static constexpr bool kLagged = false;

  double step(const Pieces& P, PieceModel& M, int threads) {
    const double k = static_cast<double>(M.H.n_rows);
    if (!init_) start(P, M);
    const double pass = nnz_ * k;
    // H given W (W'X of the rescaled W)
    if (have_c_) {
      have_c_ = false;
    } else {
      Request r("wtx");
      take_pending(r, M);
      C_ = P.map(r).mat("C");
    }
    FrobeniusHALS::sweeps(M.H, C_, WW_, pen_.l1h, pen_.l2h, FrobeniusHALS::max_sweeps(pass + m_ * k * k, n_, k),
                          threads);
    const arma::mat HH = gram(M.H, threads);
    // W given H: sweeps by the pieces, the stopping rule on the summed change
    const int ms = FrobeniusHALS::max_sweeps(pass + n_ * k * k, m_, k);
    double first = 0.0;
    for (int sw = 0; sw < ms; ++sw) {
      Request r("sweep");
      r.with("HH", HH).with("l1", pen_.l1w).with("l2", pen_.l2w);
      if (sw == 0) r.with("H", M.H);
      const double ch = P.map(r).num("change");
      if (sw == 0) first = ch;
      else if (ch <= FrobeniusHALS::kStop * FrobeniusHALS::kStop * first) break;
    }
    const Stats w = P.map(Request("wfin"));
    WW_ = w.mat("WW");
    const double v = xnorm2_ - 2.0 * w.num("inner") + inner(WW_, HH);
    const double obj = 0.5 * std::max(v, 0.0) + penalty(w, M.H);
    if (!pen_.any()) {
      // unit_rows(): W's rows to unit norm, H's rows take the scale
      const arma::mat& wsq = w.mat("wsq");
      arma::mat s(wsq.n_rows, 1);
      for (arma::uword r = 0; r < s.n_rows; ++r) {
        const double nr = std::sqrt(wsq(r, 0));
        s(r, 0) = nr > 0.0 && std::isfinite(nr) ? nr : 1.0;
      }
      for (arma::uword j = 0; j < M.H.n_cols; ++j)
        for (arma::uword r = 0; r < s.n_rows; ++r) M.H(r, j) *= s(r, 0);
      WW_.each_col() /= s.col(0);
      WW_.each_row() /= s.col(0).t();
      M.pending = s;
    }
    return obj;
  }

  double loss(const Pieces& P, PieceModel& M, int threads) {
    if (!init_) start(P, M);
    Request r("eval");
    take_pending(r, M);
    const Stats e = P.map(r);
    return half(e, M.H, threads) + penalty(e, M.H);
  }

 private:
  void start(const Pieces& P, PieceModel& M) {
    Request r("eval");
    take_pending(r, M);
    const Stats e = P.map(r);
    xnorm2_ = e.num("xnorm2");
    nnz_ = e.num("nnz");
    C_ = e.mat("C");
    WW_ = e.mat("WW");
    have_c_ = true;
    init_ = true;
  }
  static void take_pending(Request& r, PieceModel& M) {
    if (M.pending.n_elem) r.with("s", M.pending);
    M.pending.reset();
  }
  double half(const Stats& e, const arma::mat& H, int threads) const {
    const double v = xnorm2_ - 2.0 * inner(e.mat("C"), H) + inner(e.mat("WW"), gram(H, threads));
    return 0.5 * std::max(v, 0.0);
  }
  double penalty(const Stats& w, const arma::mat& H) const { return piece_penalty(pen_, w, H); }
  Penalty pen_;
  double m_, n_;
  bool init_ = false, have_c_ = false;
  double xnorm2_ = 0.0, nnz_ = 0.0;
  arma::mat C_, WW_;
};


// Alternating Frobenius updates (rules.h, AlternatingFrobenius: MU, ANLS,
// ALS) on pieces: W given H by the pieces (one request: their block
// update, then W'X and W'W of the new W), then H given W from the reduced
// sums; the objective from the same sums.
class PieceAlternating {
 public:
  PieceAlternating(FrobMethod method, Penalty p, double eps) : method_(method), pen_(p), eps_(eps) {}
  static constexpr bool kLagged = false;

  double step(const Pieces& P, PieceModel& M, int threads) {
    if (HH_.n_elem == 0) HH_ = gram(M.H, threads);  // else: H is unchanged since the last step
    Request r("block");
    r.with("H", M.H).with("HH", HH_).with("l1", pen_.l1w).with("l2", pen_.l2w).with("eps", eps_)
        .with("method", static_cast<double>(static_cast<int>(method_)));
    const Stats w = P.map(r);
    if (xnorm2_ < 0.0) xnorm2_ = P.map(Request("eval")).num("xnorm2");
    frob_block(method_, M.H, w.mat("C"), w.mat("WW"), pen_.l1h, pen_.l2h, eps_, 1, threads);
    HH_ = gram(M.H, threads);
    const double v = xnorm2_ - 2.0 * inner(w.mat("C"), M.H) + inner(w.mat("WW"), HH_);
    return 0.5 * std::max(v, 0.0) + piece_penalty(pen_, w, M.H);
  }
  double loss(const Pieces& P, PieceModel& M, int threads) {
    const Stats e = P.map(Request("eval"));
    xnorm2_ = e.num("xnorm2");
    const double v = xnorm2_ - 2.0 * inner(e.mat("C"), M.H) + inner(e.mat("WW"), gram(M.H, threads));
    return 0.5 * std::max(v, 0.0) + piece_penalty(pen_, e, M.H);
  }

 private:
  FrobMethod method_;
  Penalty pen_;
  double eps_, xnorm2_ = -1.0;
  arma::mat HH_;
};

}  // namespace nmf
}  // namespace aspectr

#endif
