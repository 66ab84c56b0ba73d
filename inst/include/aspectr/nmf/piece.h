// aspectr/nmf/piece.h — NMF of X split by rows into pieces X_s (m_s x n),
// each with its rows of W (Wt_s, k x m_s), and the rules written once
// against them (pieces.h).
//
// W's rows belong to X's rows, so every update of W given H is made where
// the piece is, from X_s H' and H H'; the update of H given W needs only
// W'X = sum_s W_s'X_s and W'W = sum_s W_s'W_s (k x n and k x k), the
// reduce; the objective 1/2 (||X||^2 - 2 <W'X, H> + <W'W, HH'>) is a sum
// of the same parts. A matrix in memory is one piece; shards in memory,
// shard files and a cluster's workers are several, reached through a
// Pieces.
//
// A piece's cells come from a Cells: the matrix in memory (Data), or a
// shard file read a chunk of cells at a time (the embedding supplies it).
#ifndef ASPECTR_NMF_PIECE_H
#define ASPECTR_NMF_PIECE_H

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>
#include <vector>
#include "../pieces.h"
#include "../shard_file.h"
#include "data.h"
#include "rules.h"
#include "shard.h"

namespace aspectr {
namespace nmf {

// A piece's cells: the two products of every Frobenius update, the norm.
class Cells {
 public:
  virtual ~Cells() = default;
  virtual void XHt(const arma::mat& H, arma::mat& A, int threads) = 0;    // (X_s H')', k x m_s
  virtual void WtX(const arma::mat& Wt, arma::mat& C, int threads) = 0;   // W_s'X_s, k x n
  virtual double xnorm2() = 0;
  virtual double nnz() = 0;
  // generalized KL (KLMU::ratio_pass), v = max(W_i . H_j, 1e-300), t = x / v:
  //   numW (k x m_s) = sum_j t H_j when given, xlogv += sum x log v when given;
  //   numH (k x n)   = sum_i t W_i (kl_cols)
  virtual void kl_rows(const arma::mat& Wt, const arma::mat& H, arma::mat* numW, double* xlogv, int threads) = 0;
  virtual void kl_cols(const arma::mat& Wt, const arma::mat& H, arma::mat& numH, int threads) = 0;
  virtual double kl_constant() = 0;  // sum x log x - x over the non-zeros
  // Projection of an extrapolated factor (rules.h, project_extrapolated),
  // for the rows r with keep[r]: the work of correcting the product by the
  // clipped entries (as project_extrapolated() counts it; a cost, compared
  // with that of a whole product), the non-zeros of each column of X_s
  // (n x 1), and the correction itself: the negative entries of Y set to 0
  // and C += (their negated values) times X_s's rows (is_w: Y = Wt_s,
  // C = W'X, k x n) or columns (Y = H, C = (X_s H')', k x m_s).
  virtual double clip_work(const arma::mat& Y, const std::vector<char>& keep, bool is_w) = 0;
  virtual arma::mat column_counts() = 0;
  virtual void clip_correct(arma::mat& Y, arma::mat& C, const std::vector<char>& keep, bool is_w, int threads) = 0;
  // KL coordinate descent (kl_cd.h). kcd_pass: one pass of KLCDColumns
  // over the cells (kl_cd_pass(): the piece's part of every column's sums,
  // out 3 x n), with v (one per non-zero: G h, moved by the pass) when the
  // cells keep it (keeps_v()), else recomputed from hv. kcd_rows: the
  // piece's rows of W given H (kl_cd_rows()), returning its part of
  // sum x log v. kcd_columns: every column of H solved whole given Wt
  // (KLCD::solve_side(), possible when the piece holds all the rows of
  // X, and whole_columns()); false when the cells cannot.
  virtual bool keeps_v() const = 0;
  virtual bool whole_columns() const = 0;
  virtual void kcd_pass(const arma::mat& Wt, const arma::mat& hv, arma::mat& v, bool reset, const int* rd,
                        const int* rn, const double* d, arma::mat& out, int threads) = 0;
  // (cper: the rows' own linear coefficients, k x m_s, in place of the
  // column sums of H + l1: a weighted loss, nmf/weighted.h)
  virtual double kcd_rows(arma::mat& Wt, const arma::mat& H, double l1, double l2, int threads,
                          const arma::mat* cper = nullptr) = 0;
  virtual bool kcd_columns(arma::mat& H, const arma::mat& Wt, const arma::vec& c, double l2, int threads) = 0;
  // The cells as a dense m_s x n matrix (the beta divergence's updates read
  // every cell, zeros too): the matrix itself when it is dense, else
  // written to `buf` (zeros, then each cell; a file read a chunk at a time)
  // and returned.
  virtual const arma::mat& dense(arma::mat& buf) = 0;
};

// A matrix in memory (not owned). keep_v: whether passes of KL coordinate
// descent keep v = G h between passes (8 bytes per non-zero; not for a
// file's cells, read again for each request).
class MemoryCells : public Cells {
 public:
  explicit MemoryCells(const Data& X, bool keep_v = true) : X_(X), keep_v_(keep_v) {}
  void XHt(const arma::mat& H, arma::mat& A, int threads) override { X_.XHt(H, A, threads); }
  void WtX(const arma::mat& Wt, arma::mat& C, int threads) override { X_.WtX(Wt, C, threads); }
  double xnorm2() override { return X_.xnorm2(); }
  double nnz() override { return X_.nnz(); }
  void kl_rows(const arma::mat& Wt, const arma::mat& H, arma::mat* numW, double* xlogv, int threads) override {
    arma::mat none;
    KLMU::ratio_pass(X_, Wt, H, numW ? *numW : none, xlogv, true, threads, numW != nullptr);
  }
  void kl_cols(const arma::mat& Wt, const arma::mat& H, arma::mat& numH, int threads) override {
    KLMU::ratio_pass(X_, Wt, H, numH, nullptr, false, threads);
  }
  double kl_constant() override { return KLMU::data_constant(X_); }
  double clip_work(const arma::mat& Y, const std::vector<char>& keep, bool is_w) override {
    return projection_work(X_, Y, keep, is_w);
  }
  arma::mat column_counts() override {
    arma::mat c(X_.n_cols(), 1);
    for (arma::uword j = 0; j < X_.n_cols(); ++j)
      c(j, 0) = X_.dense() ? static_cast<double>(X_.n_rows()) : static_cast<double>(X_.S().p[j + 1] - X_.S().p[j]);
    return c;
  }
  void clip_correct(arma::mat& Y, arma::mat& C, const std::vector<char>& keep, bool is_w, int threads) override {
    projection_correct(X_, Y, C, keep, is_w, threads);
  }
  bool keeps_v() const override { return keep_v_; }
  bool whole_columns() const override { return true; }
  void kcd_pass(const arma::mat& Wt, const arma::mat& hv, arma::mat& v, bool reset, const int* rd, const int* rn,
                const double* d, arma::mat& out, int threads) override {
    if (X_.dense()) throw std::logic_error("passes of KL coordinate descent need sparse cells");
    if (X_.S().nnz == 0) {  // a piece without cells adds nothing (and has no v)
      out.zeros(3, X_.S().n_cols);
      return;
    }
    if (!keep_v_) {
      kl_cd_pass(X_, Wt, hv, nullptr, true, rd, rn, d, out, threads);
      return;
    }
    if (v.n_elem != X_.S().nnz) {
      if (!reset) throw std::logic_error("a pass that moves a v never computed");
      v.set_size(X_.S().nnz, 1);
    }
    kl_cd_pass(X_, Wt, hv, v.memptr(), reset, rd, rn, d, out, threads);
  }
  double kcd_rows(arma::mat& Wt, const arma::mat& H, double l1, double l2, int threads,
                  const arma::mat* cper = nullptr) override {
    return kl_cd_rows(X_, Wt, H, l1, l2, false, threads, cper);
  }
  bool kcd_columns(arma::mat& H, const arma::mat& Wt, const arma::vec& c, double l2, int threads) override {
    KLCD::solve_side(X_, false, Wt, H, c, l2, 1, 1, nullptr, threads);
    return true;
  }
  const arma::mat& dense(arma::mat& buf) override {
    if (X_.dense()) return X_.D();
    const Csc& S = X_.S();
    buf.zeros(S.n_rows, S.n_cols);
    for (arma::uword j = 0; j < S.n_cols; ++j) {
      double* col = buf.colptr(j);
      for (std::size_t t = S.p[j]; t < S.p[j + 1]; ++t) col[S.i[t]] += S.val(t);
    }
    return buf;
  }
  const Data& data() const { return X_; }

 private:
  const Data& X_;
  bool keep_v_;
};

// A shard file (m_s x n_s, n_s <= n), read `cells` cells at a time into
// `buf` for each product (stream_products(): each element summed in the
// file's order), never whole; its values divided by `scale`.
class FileCells : public Cells {
 public:
  FileCells(std::string path, ShardBuffer& buf, std::size_t cells, double scale, arma::uword n)
      : path_(std::move(path)), buf_(buf), cells_(cells), scale_(scale), n_(n) {
    ShardReader reader(path_);
    nnz_ = static_cast<double>(reader.nnz());
    m_ = reader.dims().empty() ? 0 : reader.dims()[0];
  }
  void XHt(const arma::mat& H, arma::mat& A, int) override {
    ShardReader reader(path_);
    if (A.n_rows != H.n_rows || A.n_cols != m_) A.set_size(H.n_rows, m_);
    const double x2 = stream_products(reader, buf_, cells_, scale_, nullptr, nullptr, &H, &A, x2_ < 0.0);
    if (x2_ < 0.0) x2_ = x2;
  }
  void WtX(const arma::mat& Wt, arma::mat& C, int) override {
    ShardReader reader(path_);
    C.set_size(Wt.n_rows, n_);
    const double x2 = stream_products(reader, buf_, cells_, scale_, &Wt, &C, nullptr, nullptr, x2_ < 0.0);
    if (x2_ < 0.0) x2_ = x2;
  }
  double xnorm2() override {
    if (x2_ < 0.0) {
      ShardReader reader(path_);
      x2_ = stream_products(reader, buf_, cells_, scale_, nullptr, nullptr, nullptr, nullptr);
    }
    return x2_;
  }
  double nnz() override { return nnz_; }
  void kl_rows(const arma::mat& Wt, const arma::mat& H, arma::mat* numW, double* xlogv, int threads) override {
    ShardReader reader(path_);
    if (numW) numW->set_size(Wt.n_rows, Wt.n_cols);
    stream_kl(reader, buf_, cells_, scale_, Wt, H, numW, nullptr, xlogv, nullptr, nullptr, threads);
  }
  void kl_cols(const arma::mat& Wt, const arma::mat& H, arma::mat& numH, int threads) override {
    ShardReader reader(path_);
    numH.set_size(Wt.n_rows, n_);
    stream_kl(reader, buf_, cells_, scale_, Wt, H, nullptr, &numH, nullptr, nullptr, nullptr, threads);
  }
  // (a file's correction is one pass over its cells that does the
  // product's arithmetic only at the cells of the rows (W) or columns (H)
  // with clipped entries: never more than recomputing the product, which
  // is that pass with the arithmetic at every cell; so it is always the
  // correction)
  double clip_work(const arma::mat&, const std::vector<char>&, bool) override { return 0.0; }
  arma::mat column_counts() override {
    ShardReader reader(path_);
    arma::mat c(n_, 1, arma::fill::zeros);
    while (reader.next(buf_, cells_)) {
      const std::size_t d = reader.dims().size();
      for (std::size_t t = 0; t < buf_.nnz; ++t) {
        const auto j = buf_.idx[d * t + 1];
        if (j >= n_) throw std::runtime_error("a cell's index is outside the shard's size");
        c(j, 0) += 1.0;
      }
    }
    return c;
  }
  void clip_correct(arma::mat& Y, arma::mat& C, const std::vector<char>& keep, bool is_w, int) override {
    // C += the clipped part's product, P = max(0, -Y) in the kept rows, at
    // the cells of the rows (is_w: Y = Wt_s, C = W'X, k x n) or columns
    // (Y = H, C = (X_s H')', k x m_s) of Y with clipped entries, only for
    // those entries (ri/dv[beg[c], beg[c + 1]) of column c of Y); each
    // element of C summed over its cells in the file's order
    const arma::uword k = Y.n_rows;
    std::vector<std::size_t> beg(Y.n_cols + 1, 0);
    std::vector<arma::uword> ri;
    std::vector<double> dv;
    clip_negatives(Y, keep, beg, ri, dv);
    if (ri.empty()) return;
    ShardReader reader(path_);
    const std::vector<arma::uword>& dims = reader.dims();
    if (dims.size() != 2) throw std::runtime_error("a shard of nmf() must be a matrix");
    const arma::uword m = dims[0], n = dims[1];
    if (C.n_rows != k || (is_w ? (Y.n_cols != m || C.n_cols < n) : (Y.n_cols < n || C.n_cols != m)))
      throw std::logic_error("factors of the wrong size for the shard");
    double* __restrict cp = C.memptr();
    const std::size_t* bp = beg.data();
    const arma::uword* rp = ri.data();
    const double* dp = dv.data();
    while (reader.next(buf_, cells_)) {
      const index_t* ix = buf_.idx.data();
      const double* vv = buf_.val.data();
      // (each value scaled where it is used: most cells are not)
      for (std::size_t t = 0; t < buf_.nnz; ++t) {
        const std::size_t i = ix[2 * t], j = ix[2 * t + 1];
        if (i >= m || j >= n) throw std::runtime_error("a cell's index is outside the shard's size");
        const std::size_t from = is_w ? i : j;
        const std::size_t a0 = bp[from], a1 = bp[from + 1];
        if (a0 == a1) continue;
        const double x = vv[t] / scale_;
        double* o = cp + (is_w ? j : i) * k;
        for (std::size_t a = a0; a < a1; ++a) o[rp[a]] += x * dp[a];
      }
    }
  }
  // (v is not kept: every pass recomputes it at each cell it reads)
  bool keeps_v() const override { return false; }
  bool whole_columns() const override { return false; }
  void kcd_pass(const arma::mat& Wt, const arma::mat& hv, arma::mat&, bool, const int* rd, const int* rn,
                const double*, arma::mat& out, int threads) override {
    ShardReader reader(path_);
    stream_kl_cd_pass(reader, buf_, cells_, scale_, Wt, hv, rd, rn, out, threads);
  }
  // the rows gathered in two passes over the file (12 bytes per non-zero)
  double kcd_rows(arma::mat& Wt, const arma::mat& H, double l1, double l2, int threads,
                  const arma::mat* cper = nullptr) override {
    const Data rows(stream_rows_csc(path_, buf_, cells_, scale_, m_, n_));
    return kl_cd_rows(rows, Wt, H, l1, l2, true, threads, cper);
  }
  bool kcd_columns(arma::mat&, const arma::mat&, const arma::vec&, double, int) override { return false; }
  const arma::mat& dense(arma::mat& buf) override {
    ShardReader reader(path_);
    buf.zeros(m_, n_);
    double x2 = 0.0;
    while (reader.next(buf_, cells_)) {
      const index_t* ix = buf_.idx.data();
      const double* xv = scale_chunk(buf_, m_, n_, scale_, x2, nullptr);
      for (std::size_t t = 0; t < buf_.nnz; ++t) buf(ix[2 * t], ix[2 * t + 1]) += xv[t];
    }
    return buf;
  }
  double kl_constant() override {
    ShardReader reader(path_);
    double c = 0.0;
    arma::mat W0(1, reader.dims()[0], arma::fill::zeros), H0(1, n_, arma::fill::zeros);
    stream_kl(reader, buf_, cells_, scale_, W0, H0, nullptr, nullptr, nullptr, &c, nullptr, threads_one());
    return c;
  }

 private:
  static int threads_one() { return 1; }
  std::string path_;
  ShardBuffer& buf_;
  std::size_t cells_;
  double scale_, nnz_ = 0.0, x2_ = -1.0;
  arma::uword n_, m_ = 0;
};

// A column piece (Pieces::map_columns()): X's columns [j0, j0 + nb), every
// row, with the whole W (Wt, k x m, the fit's, not owned). Operation:
//   "kcd_cols" H (k x n), c, l2 -> @H (k x nb): its columns of H solved
//              given W (Cells::kcd_columns(), as in memory)
class ColumnPiece {
 public:
  ColumnPiece(Cells& X, const arma::mat& Wt, arma::uword j0, arma::uword nb) : X_(X), Wt_(Wt), j0_(j0), nb_(nb) {}

  Stats run(const Request& r, int threads) {
    Stats out;
    if (r.op == "kcd_cols") {
      const arma::mat& H = r.mat("H");
      if (j0_ + nb_ > H.n_cols || H.n_rows != Wt_.n_rows) throw std::logic_error("a column piece outside H");
      arma::mat Hb = nb_ ? arma::mat(H.cols(j0_, j0_ + nb_ - 1)) : arma::mat(H.n_rows, 0);
      if (!X_.kcd_columns(Hb, Wt_, arma::vec(r.mat("c")), r.num("l2", 0.0), threads))
        throw std::logic_error("a column piece that cannot solve its columns");
      out.set("@H", std::move(Hb));
    } else {
      throw std::logic_error("unknown column piece operation '" + r.op + "'");
    }
    return out;
  }

 private:
  Cells& X_;
  const arma::mat& Wt_;
  arma::uword j0_, nb_;
};

// What a piece keeps between requests besides its rows of W: matrices of
// its rows' size by name ("A": (X_s H')' for one update's sweeps), owned
// by its holder for the fit.
using Slots = std::map<std::string, arma::mat>;

// The sums that decide which rows of an extrapolated factor Y (k x d) are
// projected (project_extrapolated()): proj[r] = sum of Y(r, c)^2 over its
// positive entries, full[r] = sum of base(r, c)^2, in the order of the
// columns (a zero added for the other entries: no branch per entry)
inline void projection_sums(const arma::mat& Y, const arma::mat& base, double* __restrict proj,
                            double* __restrict full) {
  const arma::uword k = Y.n_rows;
  for (arma::uword r = 0; r < k; ++r) proj[r] = full[r] = 0.0;
  for (arma::uword c = 0; c < Y.n_cols; ++c) {
    const double* __restrict y = Y.colptr(c);
    const double* __restrict b = base.colptr(c);
    for (arma::uword r = 0; r < k; ++r) {
      proj[r] += y[r] > 0.0 ? y[r] * y[r] : 0.0;
      full[r] += b[r] * b[r];
    }
  }
}

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
//   "klmu"   H, l1, l2, eps, constant?
//                      -> the KL multiplicative update of W_s (KLMU::step):
//                         xlogv, s1, s2, wsum0 of the W_s entering it, then
//                         num (H's numerators) and wsum of the new W_s;
//                         constant (sum x log x - x) when asked
//   "kleval" H         -> xlogv, constant, wsum, s1, s2, pieces (1 per
//                         piece), whole (1 when the piece can solve H's
//                         columns whole: kcd_columns)
//   "kcd_pass" rd, rn, d, reset, hv?
//                      -> sums (3 x n): the piece's part of a pass of
//                         KLCDColumns; nokeep = 1 when hv must come with
//                         every pass (the piece keeps no v)
//   "kcd_cols" H, Wt?, c, l2
//                      -> H: every column solved whole (one piece only)
//   "kcd_rows" H, l1, l2 -> W_s given H by KL coordinate descent: xlogv of
//                         the new model, wsum, s1, s2
//                         (a column piece's "kcd_cols": ColumnPiece)
//   "her_*"            the parts of an extrapolated step (PieceHER)
//   "klher_*"          the parts of an extrapolated KL step (PieceKLHER)
//   "beta_*"           the parts of a beta-divergence step (PieceBetaMU)
//   "gather" s?, sv?   -> @Wt (W_s, concatenated over the pieces; sv: the
//                         copy's rows divided by sv, W_s untouched)
//   "scale"  s         -> nothing (the rescaling alone)
// `s`, when given, first divides row r of W_s by s[r] (a rescaling the
// rule made of the whole W: unit_rows()).
class Piece {
 public:
  Piece(Cells& X, double* Wt, arma::uword k, arma::uword m, Slots& slots)
      : X_(X), Wt_(Wt, k, m, false, true), slots_(slots) {}
  arma::mat& Wt() { return Wt_; }
  // The weights of the piece's cells (m_s x n, not owned; nmf/weighted.h's
  // omega) for the beta-divergence operations: their divergence, P and Q
  // weighted cell by cell as BetaMU weighs them in memory
  void weigh(const arma::mat* Om) { Om_ = Om; }

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
    } else if (op == "klmu") {
      // KLMU::step's part of the piece: the objective's terms of the model
      // entering the step, W_s given H, the numerators of H with the new W_s
      w_sums(out, threads, false);
      out.set("wsum0", arma::mat(arma::sum(Wt_, 1)));
      if (r.num("constant", 0.0) != 0.0) out.set("constant", X_.kl_constant());
      const arma::mat& H = r.mat("H");
      arma::mat num;
      double xlogv = 0.0;
      X_.kl_rows(Wt_, H, &num, &xlogv, threads);
      const arma::vec hsum = arma::sum(H, 1);
      KLMU(Penalty(), r.num("eps", 0.0)).mm_update(Wt_, num, Wt_, hsum, r.num("l1", 0.0), r.num("l2", 0.0));
      num.reset();
      arma::mat numH;
      X_.kl_cols(Wt_, H, numH, threads);
      out.set("num", std::move(numH));
      out.set("xlogv", xlogv);
      out.set("wsum", arma::mat(arma::sum(Wt_, 1)));
    } else if (op == "klher_init") {
      // the iterate's objective terms (as "kleval") and its largest entry;
      // the previous W is the iterate (slot Wo empty)
      slots_["Wo"].reset();
      kl_eval(out, r.mat("H"), threads);
      out.set("@wmax", arma::mat(1, 1, arma::fill::value(Wt_.n_elem ? Wt_.max() : 0.0)));
    } else if (op == "klher_h") {
      // Wy = W + b (W - W_prev) (slot Wy; W_prev: slot Wo, or W itself when
      // it is empty) clipped below at lo, and H's numerators given Wy at H
      // (the last extrapolated H)
      const arma::mat& Wo = slots_["Wo"];
      arma::mat& Wy = slot("Wy");
      const double b = r.num("b", 0.0), lo = r.num("lo", 0.0);
      const arma::mat& Wp = Wo.n_elem ? Wo : static_cast<const arma::mat&>(Wt_);
      for (arma::uword j = 0; j < Wy.n_elem; ++j) {
        const double v = Wt_[j] + b * (Wt_[j] - Wp[j]);
        Wy[j] = v < lo ? lo : v;
      }
      arma::mat numH;
      X_.kl_cols(Wy, r.mat("H"), numH, threads);
      out.set("num", std::move(numH));
      out.set("wysum", arma::mat(arma::sum(Wy, 1)));
    } else if (op == "klher_w") {
      // the candidate Wn (slot) given Hy from Wy, and the objective terms
      // of (Wn, Hn)
      const arma::mat& Wy = slot("Wy");
      const arma::mat& Hy = r.mat("H");
      arma::mat num;
      X_.kl_rows(Wy, Hy, &num, nullptr, threads);
      arma::mat& Wn = slot("Wn");
      KLMU(Penalty(), r.num("eps", 0.0)).mm_update(Wn, num, Wy, arma::vec(arma::sum(Hy, 1)), r.num("l1", 0.0),
                                                  r.num("l2", 0.0));
      num.reset();
      double xlogv = 0.0;
      X_.kl_rows(Wn, r.mat("Hn"), nullptr, &xlogv, threads);
      out.set("xlogv", xlogv);
      out.set("wsum", arma::mat(arma::sum(Wn, 1)));
      out.set("s1", arma::accu(Wn));
      out.set("s2", arma::accu(arma::square(Wn)));
      out.set("@wmax", arma::mat(1, 1, arma::fill::value(Wn.n_elem ? Wn.max() : 0.0)));
    } else if (op == "klher_accept") {
      // the candidate becomes the iterate, the iterate the previous W
      arma::mat& Wo = slot("Wo");
      Wo = Wt_;
      Wt_ = slot("Wn");
    } else if (op == "klher_reject") {
      slots_["Wo"].reset();
    } else if (op == "kleval") {
      kl_eval(out, r.mat("H"), threads);
      out.set("pieces", 1.0);
      out.set("whole", X_.whole_columns() ? 1.0 : 0.0);
    } else if (op == "kcd_pass") {
      const bool reset = r.num("reset", 0.0) != 0.0;
      const arma::mat& rdm = r.mat("rd");
      const arma::mat& rnm = r.mat("rn");
      const arma::mat& dm = r.mat("d");
      const arma::uword n = rdm.n_elem;
      if (rnm.n_elem != n || dm.n_elem != n) throw std::logic_error("a pass of the wrong size");
      std::vector<int> rd(n), rn(n);
      for (arma::uword j = 0; j < n; ++j) {
        rd[j] = static_cast<int>(rdm[j]);
        rn[j] = static_cast<int>(rnm[j]);
        if (rd[j] >= static_cast<int>(Wt_.n_rows) || rn[j] >= static_cast<int>(Wt_.n_rows) || (rd[j] >= 0 && rn[j] < 0))
          throw std::logic_error("a pass's coordinates out of range");
      }
      const bool keeps = X_.keeps_v();
      if (!r.has("hv") && (reset || !keeps)) throw std::logic_error("a pass without its coefficients");
      static const arma::mat none;
      arma::mat sums;
      X_.kcd_pass(Wt_, r.has("hv") ? r.mat("hv") : none, slots_["v"], reset, rd.data(), rn.data(), dm.memptr(),
                  sums, threads);
      out.set("sums", std::move(sums));
      if (reset) out.set("nokeep", keeps ? 0.0 : 1.0);
    } else if (op == "kcd_cols") {
      arma::mat H = r.mat("H");
      if (!X_.kcd_columns(H, Wt_, arma::vec(r.mat("c")), r.num("l2", 0.0), threads))
        throw std::logic_error("a piece that cannot solve whole columns was asked to");
      out.set("H", std::move(H));
    } else if (op == "kcd_rows") {
      out.set("xlogv", X_.kcd_rows(Wt_, r.mat("H"), r.num("l1", 0.0), r.num("l2", 0.0), threads));
      out.set("wsum", arma::mat(arma::sum(Wt_, 1)));
      w_sums(out, threads, false);
    } else if (op == "her_init") {
      // the iterate's products: W'X, (X H')' (slot PH), W's sums; the
      // previous W is the iterate (slot Wo empty: see "her_wy")
      slots_["Wo"].reset();
      X_.XHt(r.mat("H"), slot("PH"), threads);
      arma::mat C;
      X_.WtX(Wt_, C, threads);
      out.set("C", std::move(C));
      w_sums(out, threads);
      out.set("wsum", arma::mat(arma::sum(Wt_, 1)));
      out.set("xnorm2", X_.xnorm2());
      out.set("nnz", X_.nnz());
      out.set("colnnz", X_.column_counts());
    } else if (op == "her_wy") {
      // Wy = W + b (W - W_prev) in slot Wn, and the sums that decide which
      // of its rows are projected (project_extrapolated()). W_prev is slot
      // Wo, or W itself when Wo is empty (at the start and after a
      // rejected step: the same numbers as a copy of W, without the copy)
      const arma::mat& Wo = slots_["Wo"];
      arma::mat& Wn = slots_["Wn"];
      Wn = extrapolated(Wt_, Wo.n_elem ? Wo : Wt_, r.num("b", 0.0), threads);
      arma::mat proj(Wt_.n_rows, 1), full(Wt_.n_rows, 1);
      projection_sums(Wn, Wt_, proj.memptr(), full.memptr());
      out.set("proj", std::move(proj));
      out.set("full", std::move(full));
    } else if (op == "her_wwork") {
      arma::mat& Wn = slot("Wn");
      const std::vector<char> keep = keep_of(r.mat("keep"), Wn);
      out.set("work", X_.clip_work(Wn, keep, true));
    } else if (op == "her_wproj") {
      // Wy projected: rows not kept are the iterate's; the clipped entries'
      // correction of W'X (or, `recompute`, the whole product) returned, or
      // made in the rule's Wy'X itself when it comes by reference ("Cy")
      arma::mat& Wn = slot("Wn");
      const std::vector<char> keep = keep_of(r.mat("keep"), Wn);
      for (arma::uword q = 0; q < Wn.n_rows; ++q) if (!keep[q]) Wn.row(q) = Wt_.row(q);
      arma::mat* Cy = r.target("Cy");
      if (r.num("recompute", 0.0) != 0.0) {
        for (arma::uword c = 0; c < Wn.n_cols; ++c) {
          double* y = Wn.colptr(c);
          for (arma::uword q = 0; q < Wn.n_rows; ++q) if (keep[q] && y[q] < 0.0) y[q] = 0.0;
        }
        if (Cy) {
          X_.WtX(Wn, *Cy, threads);
        } else {
          arma::mat C;
          X_.WtX(Wn, C, threads);
          out.set("C", std::move(C));
        }
      } else if (Cy) {
        // summed apart and then added, as the pieces' corrections are (in
        // a buffer kept for the fit)
        arma::mat& corr = slots_["corr"];
        corr.zeros(Wn.n_rows, Cy->n_cols);
        X_.clip_correct(Wn, corr, keep, true, threads);
        *Cy += corr;
      } else {
        arma::mat corr(Wn.n_rows, static_cast<arma::uword>(r.num("n", 0.0)), arma::fill::zeros);
        X_.clip_correct(Wn, corr, keep, true, threads);
        out.set("corr", std::move(corr));
      }
      out.set("WW", gram(Wn, threads));
    } else if (op == "her_w") {
      // (X Hn')' (slot Pn); Ay = Pn + b (Pn - PH), projected as Hy (rows
      // not kept: Pn's; the product with Hy recomputed, `recompute`: Hy
      // comes projected; or Ay corrected by Hy's clipped entries: Hy comes
      // with them, and is clipped in place when it comes by reference);
      // then the first block update of Wn given Ay and Hy Hy'
      arma::mat& Pn = slot("Pn");
      X_.XHt(r.mat("Hn"), Pn, threads);
      arma::mat& Ay = slot("Ay");
      Ay = extrapolated(Pn, slot("PH"), r.num("b", 0.0), threads);
      const std::vector<char> keep = keep_of(r.mat("keep"), Wt_);
      for (arma::uword q = 0; q < Ay.n_rows; ++q) if (!keep[q]) Ay.row(q) = Pn.row(q);
      if (r.num("recompute", 0.0) != 0.0) {
        X_.XHt(r.mat("Hy"), Ay, threads);
      } else if (arma::mat* Hr = r.target("Hy")) {
        X_.clip_correct(*Hr, Ay, keep, false, threads);
      } else {
        arma::mat Hy = r.mat("Hy");
        X_.clip_correct(Hy, Ay, keep, false, threads);
      }
      arma::mat& Wn = slot("Wn");
      const arma::mat& HH = r.mat("HH");
      if (r.num("anls", 0.0) != 0.0) {
        FrobeniusANLS::solve_all(Wn, Ay, HH, r.num("l1", 0.0), r.num("l2", 0.0), threads);
      } else {
        out.set("change", FrobeniusHALS::update_rows(Wn, Ay, HH, r.num("l1", 0.0), r.num("l2", 0.0), threads));
      }
    } else if (op == "her_sweep") {
      out.set("change", FrobeniusHALS::update_rows(slot("Wn"), slot("Ay"), r.mat("HH"), r.num("l1", 0.0),
                                                    r.num("l2", 0.0), threads));
    } else if (op == "her_fin") {
      // the candidate Wn's W'X and sums
      arma::mat& Wn = slot("Wn");
      slots_.erase("Ay");
      arma::mat C;
      X_.WtX(Wn, C, threads);
      out.set("C", std::move(C));
      out.set("WW", gram(Wn, threads));
      out.set("s1", arma::accu(Wn));
      out.set("s2", arma::accu(arma::square(Wn)));
      out.set("wsum", arma::mat(arma::sum(Wn, 1)));
    } else if (op == "her_accept") {
      // the candidate Wn becomes the iterate, the iterate the previous W
      // (Wo takes Wn's memory, then W and Wo swap their entries)
      arma::mat& Wo = slots_["Wo"];
      Wo.swap(slots_["Wn"]);
      if (Wo.n_rows != Wt_.n_rows || Wo.n_cols != Wt_.n_cols) throw std::logic_error("a candidate W never made");
      std::swap_ranges(Wt_.memptr(), Wt_.memptr() + Wt_.n_elem, Wo.memptr());
      slots_["PH"].swap(slots_["Pn"]);
    } else if (op == "her_reject") {
      slots_["Wo"].reset();  // the previous W is the iterate
    } else if (op == "beta_w") {
      // W_s given H by the beta-divergence update (BetaMU::step's W block):
      // the ratios R from the numerators and denominators H P', H Q' of the
      // model entering the step (slots NW, DW when `ready`: made by the
      // last "beta_h" or "beta_eval" for this W_s and H), W_s0 (slot W0)
      // and R kept; `retry`: R and W_s0 of the last first try. W_s = W_s0 o
      // R^(gamma t); then the divergence of the new model, W_s's sums and
      // H's numerators and denominators W_s P, W_s Q given the new W_s
      const BetaMU bm = beta_rule(r);
      arma::mat buf;
      const arma::mat& D = beta_cells(buf, r.num("floor", 0.0));
      const arma::mat& H = r.mat("H");
      arma::mat& W0 = slots_["W0"];
      arma::mat& R = slots_["R"];
      arma::mat P, Q;
      if (r.num("retry", 0.0) == 0.0) {
        arma::mat& NW = slots_["NW"];
        arma::mat& DW = slots_["DW"];
        if (r.num("ready", 0.0) == 0.0 || NW.n_rows != Wt_.n_rows || NW.n_cols != Wt_.n_cols) {
          bm.powers(arma::mat(Wt_.t() * H), D, P, Q);
          NW = H * P.t();
          DW = H * Q.t();
        }
        R = bm.ratios(Wt_, NW, DW, r.num("l1", 0.0), r.num("l2", 0.0));
        W0 = Wt_;
      } else if (W0.n_rows != Wt_.n_rows || W0.n_cols != Wt_.n_cols) {
        throw std::logic_error("a retried beta step never begun");
      }
      const double g = bm.gamma() * r.num("t", 1.0);
      for (arma::uword j = 0; j < Wt_.n_elem; ++j) Wt_[j] = W0[j] * (g == 1.0 ? R[j] : std::pow(R[j], g));
      const arma::mat V = Wt_.t() * H;
      out.set("div", bm.divergence(D, V));
      w_sums(out, threads, false);
      bm.powers(V, D, P, Q);
      out.set("num", arma::mat(Wt_ * P));
      out.set("den", arma::mat(Wt_ * Q));
    } else if (op == "beta_wkeep") {
      // no step of W_s lowered the objective: W_s0 again, and H's
      // numerators and denominators given it
      const arma::mat& W0 = slots_["W0"];
      if (W0.n_rows != Wt_.n_rows || W0.n_cols != Wt_.n_cols) throw std::logic_error("a beta step never begun");
      Wt_ = W0;
      const BetaMU bm = beta_rule(r);
      arma::mat buf, P, Q;
      const arma::mat& D = beta_cells(buf, r.num("floor", 0.0));
      bm.powers(arma::mat(Wt_.t() * r.mat("H")), D, P, Q);
      out.set("num", arma::mat(Wt_ * P));
      out.set("den", arma::mat(Wt_ * Q));
    } else if (op == "beta_h" || op == "beta_eval") {
      // the divergence of (W_s, H) (H: a candidate of the H block, or the
      // model), and the numerators and denominators of the next update of
      // W_s given H (slots NW, DW); "beta_eval" adds W_s's sums
      const BetaMU bm = beta_rule(r);
      arma::mat buf, P, Q;
      const arma::mat& D = beta_cells(buf, r.num("floor", 0.0));
      const arma::mat& H = r.mat("H");
      const arma::mat V = Wt_.t() * H;
      out.set("div", bm.divergence(D, V));
      bm.powers(V, D, P, Q);
      slots_["NW"] = H * P.t();
      slots_["DW"] = H * Q.t();
      if (op == "beta_eval") w_sums(out, threads, false);
    } else if (op == "beta_final") {
      // the final model's terms as nmf() reports them: the divergence of
      // (W_s, H), W'X, W'W and the sums of the data the fit read (with
      // zeros raised to `floor`): sum x^2, sum x, sum x log x, row sums
      // (weighted: sum omega x^2 in place of sum x^2, and frob)
      const BetaMU bm = beta_rule(r);
      arma::mat buf;
      const arma::mat& D = beta_cells(buf, r.num("floor", 0.0));
      out.set("div", bm.divergence(D, arma::mat(Wt_.t() * r.mat("H"))));
      out.set("C", arma::mat(Wt_ * D));
      w_sums(out, threads);
      double x2 = 0.0, tot = 0.0, xlx = 0.0;
      arma::mat rowtot(1, D.n_rows, arma::fill::zeros);
      for (arma::uword j = 0; j < D.n_cols; ++j)
        for (arma::uword i = 0; i < D.n_rows; ++i) {
          const double x = D(i, j);
          x2 += x * x;
          tot += x;
          if (x > 0.0) xlx += x * std::log(x);
          rowtot(0, i) += x;
        }
      if (Om_) {
        // weighted: sum omega x^2 and sum omega (x - v)^2 (the relative
        // error of a weighted fit)
        const arma::mat V = Wt_.t() * r.mat("H");
        double wx2 = 0.0, we2 = 0.0;
        for (arma::uword j = 0; j < D.n_elem; ++j) {
          const double e = D[j] - V[j];
          we2 += (*Om_)[j] * e * e;
          wx2 += (*Om_)[j] * D[j] * D[j];
        }
        x2 = wx2;
        out.set("frob", we2);
      }
      out.set("xnorm2", x2);
      out.set("total", tot);
      out.set("xlogx", xlx);
      out.set("@rowtot", std::move(rowtot));
    } else if (op == "gather") {
      out.set("@Wt", arma::mat(Wt_));
      if (r.has("sv")) {
        arma::mat& g = out.m.slot("@Wt");
        const arma::mat& sv = r.mat("sv");
        for (arma::uword i = 0; i < g.n_cols; ++i)
          for (arma::uword q = 0; q < g.n_rows; ++q) g(q, i) /= sv[q];
      }
    } else if (op == "scale") {
      // (the rescaling only)
    } else {
      throw std::logic_error("unknown piece operation '" + op + "'");
    }
    return out;
  }

 private:
  // the beta-divergence rule's arithmetic (BetaMU) for a request's b, eps
  BetaMU beta_rule(const Request& r) const {
    if (Om_ && (Om_->n_rows != Wt_.n_cols || (r.has("H") && Om_->n_cols != r.mat("H").n_cols)))
      throw std::logic_error("a piece's weights of the wrong size");
    return BetaMU(r.num("b", 2.0), Penalty(), r.num("eps", 0.0), Om_);
  }
  // the cells, dense, with entries below `floor` raised to it (nmf() with
  // beta <= 0 and zeros in x: in memory the data come raised)
  const arma::mat& beta_cells(arma::mat& buf, double floor) {
    const arma::mat& D = X_.dense(buf);
    if (!(floor > 0.0)) return D;
    if (&D != &buf) buf = D;
    for (arma::uword j = 0; j < buf.n_elem; ++j)
      if (buf[j] < floor) buf[j] = floor;
    return buf;
  }
  static std::vector<char> keep_of(const arma::mat& keep, const arma::mat& W) {
    if (keep.n_elem != W.n_rows) throw std::logic_error("a projection's rows of the wrong size");
    std::vector<char> out(keep.n_elem);
    for (arma::uword q = 0; q < keep.n_elem; ++q) out[q] = keep[q] != 0.0;
    return out;
  }
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
  // the KL objective's terms of (W_s, H): s1, s2, wsum, xlogv, constant
  void kl_eval(Stats& out, const arma::mat& H, int threads) {
    w_sums(out, threads, false);
    out.set("wsum", arma::mat(arma::sum(Wt_, 1)));
    double xlogv = 0.0;
    X_.kl_rows(Wt_, H, nullptr, &xlogv, threads);
    out.set("xlogv", xlogv);
    out.set("constant", X_.kl_constant());
  }
  void w_sums(Stats& out, int threads, bool with_gram = true) {
    if (with_gram) out.set("WW", gram(Wt_, threads));
    out.set("s1", arma::accu(Wt_));
    out.set("s2", arma::accu(arma::square(Wt_)));
  }
  Cells& X_;
  arma::mat Wt_;
  Slots& slots_;
  const arma::mat* Om_ = nullptr;
};

// The global part of a fit in pieces: H (k x n) and the pieces, holding W
// (the driver's callback asks them for W).
struct PieceModel {
  arma::mat H;
  const Pieces* P = nullptr;
  // the s of the next request: a rescaling of W not yet made by the pieces
  arma::mat pending;
  // a rescaling of the model's W that the pieces' W does not have (theirs
  // is the rule's iterate): applied to copies only, until the fit ends
  arma::mat view;
  // W (k x m), gathered from the pieces
  arma::mat gather() const {
    Request r("gather");
    if (pending.n_elem) r.with("s", pending);
    if (view.n_elem) r.with("sv", view);
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
// reduced W'X and W'W, a few sweeps; then W given H by the pieces' sweeps,
// whose summed change drives the in-memory stopping rule; then W's rows to
// unit norm (H takes the scale), the pieces rescaling theirs next request.
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
      C_ = P.map(r).take("C");
    }
    FrobeniusHALS::sweeps(M.H, C_, WW_, pen_.l1h, pen_.l2h, FrobeniusHALS::max_sweeps(pass + m_ * k * k, n_, k),
                          threads);
    const arma::mat HH = gram(M.H, threads);
    // W given H: sweeps by the pieces, the stopping rule on the summed change
    const int ms = FrobeniusHALS::max_sweeps(pass + n_ * k * k, m_, k);
    double first = 0.0;
    for (int sw = 0; sw < ms; ++sw) {
      Request r("sweep");
      r.view("HH", HH).with("l1", pen_.l1w).with("l2", pen_.l2w);
      if (sw == 0) r.view("H", M.H);
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
    r.view("H", M.H).view("HH", HH_).with("l1", pen_.l1w).with("l2", pen_.l2w).with("eps", eps_)
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

// Generalized-KL multiplicative updates (rules.h, KLMU) on pieces: the
// pieces update their rows of W given H and return H's numerators; the
// objective (of the model entering the step: lagged) from their sums.
class PieceKLMU {
 public:
  PieceKLMU(Penalty p, double eps) : pen_(p), eps_(eps) {}
  static constexpr bool kLagged = true;

  double step(const Pieces& P, PieceModel& M, int threads) {
    Request r("klmu");
    r.view("H", M.H).with("l1", pen_.l1w).with("l2", pen_.l2w).with("eps", eps_);
    if (!have_const_) r.with("constant", 1.0);
    const Stats w = P.map(r);
    if (!have_const_) { const_ = w.num("constant"); have_const_ = true; }
    const arma::vec hsum = arma::sum(M.H, 1);
    const double before = const_ - w.num("xlogv") + arma::dot(arma::vec(w.mat("wsum0")), hsum) +
                          piece_penalty(pen_, w, M.H);
    KLMU(Penalty(), eps_).mm_update(M.H, w.mat("num"), M.H, arma::vec(w.mat("wsum")), pen_.l1h, pen_.l2h);
    (void)threads;
    return before;
  }
  double loss(const Pieces& P, PieceModel& M, int) {
    const Stats e = P.map(Request("kleval").view("H", M.H));
    const_ = e.num("constant");
    have_const_ = true;
    return const_ - e.num("xlogv") + arma::dot(arma::vec(e.mat("wsum")), arma::vec(arma::sum(M.H, 1))) +
           piece_penalty(pen_, e, M.H);
  }

 private:
  Penalty pen_;
  double eps_;
  bool have_const_ = false;
  double const_ = 0.0;
};

// Beta-divergence multiplicative updates (rules.h, BetaMU: Fevotte and
// Idier 2011, safeguarded) on pieces: W_s given H where each piece is (its
// numerators H P' and denominators H Q', P = x v^(b-2), Q = v^(b-1) over
// every cell, zeros included), then H given W from the added W_s P and
// W_s Q; each block's step F o R^(gamma t) is tried at t = 1, 1/2, ...
// against the objective summed over the pieces, as in memory, and a block
// with no such step stays. The divergence is BetaMU's, term by term on
// every piece's dense cells; `floor` raises the cells below it (nmf()'s
// guard of zeros when beta <= 0). A piece keeps, between requests, only
// k x m_s matrices (W_s0, R, the next update's sums): the m_s x n model
// is made for each request.
class PieceBetaMU {
 public:
  PieceBetaMU(double beta, Penalty p, double eps, double floor = 0.0)
      : b_(beta), pen_(p), eps_(eps), floor_(floor), gamma_(BetaMU(beta, Penalty(), eps).gamma()) {}
  static constexpr bool kLagged = false;

  double step(const Pieces& P, PieceModel& M, int threads) {
    if (!have_) loss(P, M, threads);
    // W given H
    Stats w;
    bool moved = false;
    double t = 1.0;
    for (int tries = 0; tries < 60; ++tries, t *= 0.5) {
      Request r = base("beta_w");
      r.view("H", M.H).with("l1", pen_.l1w).with("l2", pen_.l2w).with("t", t)
          .with("ready", ready_ ? 1.0 : 0.0).with("retry", tries ? 1.0 : 0.0);
      w = P.map(r);
      const double f = w.num("div") + piece_penalty(pen_, w, M.H);
      if (no_rise(f, f_)) {
        f_ = f;
        ws_.set("s1", w.num("s1"));
        ws_.set("s2", w.num("s2"));
        moved = true;
        break;
      }
    }
    ready_ = false;
    if (!moved) {
      Request r = base("beta_wkeep");
      r.view("H", M.H);
      w = P.map(r);
    }
    // H given W
    const arma::mat R = BetaMU(b_, Penalty(), eps_).ratios(M.H, w.mat("num"), w.mat("den"), pen_.l1h, pen_.l2h);
    w = Stats();
    const arma::mat H0 = M.H;
    t = 1.0;
    for (int tries = 0; tries < 60; ++tries, t *= 0.5) {
      const double g = gamma_ * t;
      for (arma::uword j = 0; j < M.H.n_elem; ++j) M.H[j] = H0[j] * (g == 1.0 ? R[j] : std::pow(R[j], g));
      Request r = base("beta_h");
      r.view("H", M.H);
      const double f = P.map(r).num("div") + piece_penalty(pen_, ws_, M.H);
      if (no_rise(f, f_)) {
        f_ = f;
        ready_ = true;
        return f_;
      }
    }
    M.H = H0;  // no step lowers the objective: H stays
    return f_;
  }

  double loss(const Pieces& P, PieceModel& M, int) {
    Request r = base("beta_eval");
    r.view("H", M.H);
    const Stats e = P.map(r);
    ws_.set("s1", e.num("s1"));
    ws_.set("s2", e.num("s2"));
    f_ = e.num("div") + piece_penalty(pen_, e, M.H);
    have_ = true;
    ready_ = true;
    return f_;
  }

 private:
  Request base(const char* op) const {
    Request r(op);
    r.with("b", b_).with("eps", eps_);
    if (floor_ > 0.0) r.with("floor", floor_);
    return r;
  }
  double b_;
  Penalty pen_;
  double eps_, floor_, gamma_;
  bool have_ = false, ready_ = false;
  double f_ = 0.0;
  Stats ws_;
};

// Extrapolated KL multiplicative updates (HER of Ang and Gillis 2019, as
// PieceHER, with the KL multiplicative update as the block step) on
// pieces: H is updated from the last extrapolated H given
// Wy = W + beta (W - W_prev), Hy = Hn + beta (Hn - H), W from Wy given Hy,
// and the pair (Wn, Hn) is kept only if its objective is lower by more
// than rounding (clear_drop(), control.h; then
// beta <- min(bbar, gamma beta), bbar <- min(1, gbar bbar)); otherwise
// bbar <- beta, beta <- beta / eta and the next step starts from the
// iterate unextrapolated. Multiplicative updates need strictly positive
// factors, so the extrapolated points are clipped below at 1e-10 times the
// largest entry of the iterate they come from (its W's: the largest over
// the pieces). W, the previous W, Wy and the candidate are the pieces'
// (their rows); H, Hy and the test are the rule's. Per step: two ratio
// passes of plain MU (numerators of H at (Wy, Hy_prev), of W at (Wy, Hy))
// and one objective pass at (Wn, Hn), about 1.2-1.3x a plain MU step.
class PieceKLHER {
 public:
  PieceKLHER(Penalty p, double eps, HerParams hp) : pen_(p), eps_(eps), hp_(hp), beta_(hp.beta0) {}
  static constexpr bool kLagged = false;
  double candidate() const { return cand_; }

  double step(const Pieces& P, PieceModel& M, int threads) {
    if (!init_) start(P, M);
    const KLMU mu(Penalty(), eps_);
    // H given Wy, from the last extrapolated H
    const Stats h = P.map(Request("klher_h").with("b", beta_).with("lo", 1e-10 * std::max(wmax_, 0.0))
                              .view("H", Hy_));
    arma::mat Hn(H_.n_rows, H_.n_cols);
    mu.mm_update(Hn, h.mat("num"), Hy_, arma::vec(h.mat("wysum")), pen_.l1h, pen_.l2h);
    // extrapolated H; W given it, from Wy
    Hy_ = Hn + beta_ * (Hn - H_);
    clip(Hy_, Hn);
    const Stats w = P.map(Request("klher_w").view("H", Hy_).view("Hn", Hn).with("l1", pen_.l1w)
                              .with("l2", pen_.l2w).with("eps", eps_));
    cand_ = const_ - w.num("xlogv") + arma::dot(arma::vec(w.mat("wsum")), arma::vec(arma::sum(Hn, 1))) +
            piece_penalty(pen_, w, Hn);
    if (clear_drop(cand_, f_)) {
      P.map(Request("klher_accept"));
      H_ = std::move(Hn);
      f_ = cand_;
      wmax_ = largest(w);
      beta_ = std::min(bbar_, hp_.gamma * beta_);
      bbar_ = std::min(1.0, hp_.gamma_bar * bbar_);
      M.H = H_;
    } else {
      P.map(Request("klher_reject"));
      Hy_ = H_;
      bbar_ = beta_;
      beta_ /= hp_.eta;
    }
    (void)threads;
    return f_;
  }
  double loss(const Pieces& P, PieceModel& M, int) {
    const Stats e = P.map(Request("kleval").view("H", M.H));
    return e.num("constant") - e.num("xlogv") +
           arma::dot(arma::vec(e.mat("wsum")), arma::vec(arma::sum(M.H, 1))) + piece_penalty(pen_, e, M.H);
  }

 private:
  void start(const Pieces& P, PieceModel& M) {
    H_ = M.H;
    Hy_ = H_;
    const Stats e = P.map(Request("klher_init").view("H", H_));
    const_ = e.num("constant");
    f_ = const_ - e.num("xlogv") + arma::dot(arma::vec(e.mat("wsum")), arma::vec(arma::sum(H_, 1))) +
         piece_penalty(pen_, e, H_);
    wmax_ = largest(e);
    init_ = true;
  }
  static double largest(const Stats& s) {
    const arma::mat& m = s.mat("@wmax");
    return m.n_elem ? m.max() : 0.0;
  }
  // onto {F >= lo}, lo = 1e-10 times the largest entry of the iterate ref
  static void clip(arma::mat& F, const arma::mat& ref) {
    const double lo = 1e-10 * std::max(ref.max(), 0.0);
    F.transform([lo](double v) { return v < lo ? lo : v; });
  }
  Penalty pen_;
  double eps_;
  HerParams hp_;
  double beta_, bbar_ = 1.0, f_ = 0.0, cand_ = 0.0, const_ = 0.0, wmax_ = 0.0;
  bool init_ = false;
  arma::mat H_, Hy_;  // iterate, last extrapolated H
};

// Generalized-KL coordinate descent (kl_cd.h, Hsieh and Dhillon 2011) on
// pieces: kcd_iteration() (kl_cd.h, the one iteration of every KL
// coordinate descent), with H the one shared mode. H given W: with one piece holding every row, each column of H is
// solved whole where the cells are (KLCD::solve_side()); so it is by the
// column pieces where the data have them (Pieces::map_columns(): shard
// files copied by columns, W in this process), one pass over the data in
// place of about k + 1; otherwise the rule's KLCDColumns takes every
// column through the same Newton steps in the same order, each pass over
// the pieces adding their parts of the columns' sums. W given H: each piece its rows. Then, without penalties,
// the best scale of the model in closed form (H <- a H, a = sum X / sum WH),
// so that the fitted total equals that of X. Every coordinate step lowers
// the objective, so every iteration does.
class PieceKLCD : public KCDRuleDefaults {
 public:
  // total: sum X (the cells as the pieces see them)
  PieceKLCD(Penalty p, double total) : pen_(p), total_(total) {}
  static constexpr bool kLagged = false;

  double step(const Pieces& P, PieceModel& M, int) {
    if (!init_) start(P, M);
    return kcd_iteration(*this, P, M, std::numeric_limits<double>::quiet_NaN());
  }
  double loss(const Pieces& P, PieceModel& M, int) {
    const Stats e = P.map(Request("kleval").view("H", M.H));
    take(e);
    return const_ - e.num("xlogv") + arma::dot(arma::vec(wsum_), arma::vec(arma::sum(M.H, 1))) +
           piece_penalty(pen_, e, M.H);
  }

  // kcd_iteration()'s rule: H, the one shared mode, then W's rows (the
  // defaults); every coordinate step lowers the objective (no guard)
  bool kcd_whole(const Pieces&, const PieceModel&) const { return whole_; }
  // H given W: c = the column sums of W + l1
  void kcd_enter(const Pieces&, PieceModel& M, std::size_t, bool, KCDMode& m) {
    c_ = wsum_ + pen_.l1h;
    m.A = &M.H;
    m.c = arma::vec(c_);
    m.l2 = pen_.l2h;
  }
  void kcd_solve_whole(const Pieces& P, PieceModel& M, std::size_t, KCDMode&) {
    M.H = P.map(Request("kcd_cols").view("H", M.H).view("c", c_).with("l2", pen_.l2h)).take("H");
  }
  bool kcd_columns(const Pieces& P, PieceModel& M, std::size_t, KCDMode&) {
    if (!P.has_columns()) return false;
    arma::mat H = P.map_columns(Request("kcd_cols").view("H", M.H).view("c", c_).with("l2", pen_.l2h)).take("@H");
    if (H.n_rows != M.H.n_rows || H.n_cols != M.H.n_cols) throw std::logic_error("column pieces that miss columns");
    M.H = std::move(H);
    return true;
  }
  // W given H; the pass also returns sum x log v of the new model
  void kcd_rows(const Pieces& P, PieceModel& M) {
    rows_ = P.map(Request("kcd_rows").view("H", M.H).with("l1", pen_.l1w).with("l2", pen_.l2w));
    wsum_ = rows_.mat("wsum");
  }
  double kcd_value(const Pieces&, PieceModel& M) {
    const double xlogv = rows_.num("xlogv");
    const double V = arma::dot(arma::vec(wsum_), arma::vec(arma::sum(M.H, 1)));
    if (!pen_.any() && V > 0.0 && total_ > 0.0) {
      // the best scale: the objective falls by sum X log a - sum X + sum WH
      const double a = total_ / V;
      M.H *= a;
      return const_ - xlogv - total_ * std::log(a) + total_;
    }
    return const_ - xlogv + V + piece_penalty(pen_, rows_, M.H);
  }

 private:
  void start(const Pieces& P, PieceModel& M) { take(P.map(Request("kleval").view("H", M.H))); }
  void take(const Stats& e) {
    const_ = e.num("constant");
    wsum_ = e.mat("wsum");
    whole_ = e.num("pieces", 0.0) == 1.0 && e.num("whole", 0.0) == 1.0;
    init_ = true;
  }
  Penalty pen_;
  double total_, const_ = 0.0;
  bool init_ = false, whole_ = false;
  arma::mat wsum_, c_;
  Stats rows_;
};

// Extrapolated HALS/ANLS (Ang and Gillis 2019; rules.h: HerParams) on
// pieces. The iterate W, the previous W, the candidate and the products
// (X H')' of the iterate and the candidate are the pieces' (their rows);
// H, its extrapolation, W'X of the iterate and of the previous W, beta
// and the acceptance test are the rule's. The projections of the
// extrapolated factors decide their rows from sums over all pieces, as in
// memory. The model returned has W's columns at unit norm (the pieces' W
// is the iterate: the scale is applied to copies of it, and to the pieces'
// W when the fit ends).
template <bool kAnls>
class PieceHER {
 public:
  PieceHER(Penalty p, HerParams hp, double m) : pen_(p), hp_(hp), beta_(hp.beta0), m_(m) {}
  static constexpr bool kLagged = false;
  double candidate() const { return cand_; }

  double step(const Pieces& P, PieceModel& M, int threads) {
    if (!init_) start(P, M, threads);
    const double k = static_cast<double>(H_.n_rows), n = static_cast<double>(H_.n_cols);
    const double pass = nnz_ * k;
    // (the last extrapolated H is the warm start: moved, not copied)
    Attempt c = attempt(P, beta_, std::move(Hy_), pass, n, k, threads);
    if (beta_ > 0.0 && lost_component(c)) c = attempt(P, 0.0, H_, pass, n, k, threads);
    cand_ = c.f;
    if (clear_drop(cand_, f_)) {
      P.map(Request("her_accept"));
      Co_ = std::move(CW_); CW_ = std::move(c.Cn);
      H_ = std::move(c.Hn); Hy_ = std::move(c.Hy);
      wsum_ = c.wsum;
      wsq_ = c.wsq;
      f_ = cand_;
      beta_ = std::min(bbar_, hp_.gamma * beta_);
      bbar_ = std::min(1.0, hp_.gamma_bar * bbar_);
      output(M);
    } else {
      P.map(Request("her_reject"));
      Co_.reset();  // the previous W is the iterate
      Hy_ = H_;
      bbar_ = beta_;
      beta_ /= hp_.eta;
    }
    return f_;
  }
  double loss(const Pieces& P, PieceModel& M, int threads) {
    if (!init_) { start(P, M, threads); return f_; }
    const Stats e = P.map(Request("eval"));
    return objective(e.mat("C"), H_, e.mat("WW"), gram(H_, threads), e) ;
  }

 private:
  struct Attempt {
    arma::mat Hn, Hy, Cn;
    arma::vec wsum, wsq;
    double f = 0.0;
  };
  void start(const Pieces& P, PieceModel& M, int threads) {
    H_ = M.H;
    Hy_ = H_;
    Stats e = P.map(Request("her_init").view("H", H_));
    CW_ = e.take("C");
    Co_.reset();
    xnorm2_ = e.num("xnorm2");
    nnz_ = e.num("nnz");
    colnnz_ = e.mat("colnnz");
    wsum_ = arma::vec(e.mat("wsum"));
    f_ = objective(CW_, H_, e.mat("WW"), gram(H_, threads), e);
    init_ = true;
  }
  double objective(const arma::mat& C, const arma::mat& H, const arma::mat& D, const arma::mat& HH,
                   const Stats& w) const {
    const double v = xnorm2_ - 2.0 * inner(C, H) + inner(D, HH);
    return 0.5 * std::max(v, 0.0) + piece_penalty(pen_, w, H);
  }
  // the model returned: (W, H) of the iterate, W's rows at unit norm
  void output(PieceModel& M) const {
    M.H = H_;
    M.view.reset();
    if (pen_.any()) return;
    // unit_rows(): norms from W'W's diagonal of the iterate
    arma::mat s(H_.n_rows, 1);
    for (arma::uword r = 0; r < s.n_rows; ++r) {
      const double nr = std::sqrt(wsq_[r]);
      s(r, 0) = nr > 0.0 && std::isfinite(nr) ? nr : 1.0;
    }
    const double* sp = s.memptr();
    for (arma::uword j = 0; j < M.H.n_cols; ++j) {
      double* h = M.H.colptr(j);
      for (arma::uword r = 0; r < s.n_rows; ++r) h[r] *= sp[r];
    }
    M.view = s;
  }
  static std::vector<char> keep_rows(const arma::mat& proj, const arma::mat& full, arma::mat& keep) {
    std::vector<char> kp(proj.n_elem);
    keep.set_size(proj.n_elem, 1);
    for (arma::uword r = 0; r < proj.n_elem; ++r) {
      kp[r] = !(proj[r] < 0.25 * full[r]);
      keep(r, 0) = kp[r] ? 1.0 : 0.0;
    }
    return kp;
  }
  // (Hwarm: the warm start of H, taken)
  Attempt attempt(const Pieces& P, double b, arma::mat Hwarm, double pass, double n, double k, int threads) {
    Attempt a;
    // one piece in this process: it works on the rule's Wy'X and Hy itself
    const bool own = P.in_place();
    // W side: Wy (the pieces'), its projection decided from sums over all
    // pieces, Wy'X from the iterates' products and the clipped entries
    const Stats wy = P.map(Request("her_wy").with("b", b));
    arma::mat keepW;
    const std::vector<char> kw = keep_rows(wy.mat("proj"), wy.mat("full"), keepW);
    // (Co_ empty: the previous W'X is the iterate's)
    arma::mat Cy = extrapolated(CW_, Co_.n_elem ? Co_ : CW_, b, threads);
    for (arma::uword r = 0; r < Cy.n_rows; ++r) if (!kw[r]) Cy.row(r) = CW_.row(r);
    const double work = P.map(Request("her_wwork").with("keep", keepW)).num("work");
    const bool recompute = work > 0.05 * nnz_ * k;
    Request wq("her_wproj");
    wq.with("keep", keepW).with("recompute", recompute ? 1.0 : 0.0).with("n", n);
    if (own) wq.ref("Cy", Cy);
    Stats wp = P.map(wq);
    if (!own) {
      if (recompute) Cy = wp.take("C"); else Cy += wp.mat("corr");
    }
    // H given Wy
    a.Hn = std::move(Hwarm);
    if (kAnls) FrobeniusANLS::solve_all(a.Hn, Cy, wp.mat("WW"), pen_.l1h, pen_.l2h, threads);
    else FrobeniusHALS::sweeps(a.Hn, Cy, wp.mat("WW"), pen_.l1h, pen_.l2h,
                               FrobeniusHALS::max_sweeps(pass + m_ * k * k, n, k), threads);
    // Hy and its projection (the rule's; the pieces correct their (X Hy')')
    a.Hy = extrapolated(a.Hn, H_, b, threads);
    std::vector<double> proj(H_.n_rows), full(H_.n_rows);
    projection_sums(a.Hy, a.Hn, proj.data(), full.data());
    arma::mat keepH(H_.n_rows, 1);
    std::vector<char> kh(H_.n_rows);
    for (arma::uword r = 0; r < H_.n_rows; ++r) {
      kh[r] = !(proj[r] < 0.25 * full[r]);
      keepH(r, 0) = kh[r] ? 1.0 : 0.0;
      if (!kh[r]) a.Hy.row(r) = a.Hn.row(r);
    }
    // The clipped entries (negative, in kept rows): their work, as the
    // pieces count it, decides between correcting (X Hy')' by them and
    // recomputing it; while it can still be a correction, where they are
    // and their values are noted (the pieces' correction reads them)
    const double limit = 0.05 * nnz_ * k;
    double hwork = 0.0;
    bool noted = true;
    std::vector<arma::uword> at;
    std::vector<double> neg;
    const arma::uword kk = H_.n_rows;
    const char* khp = kh.data();
    for (arma::uword c = 0; c < a.Hy.n_cols; ++c) {
      const double* y = a.Hy.colptr(c);
      arma::uword nc = 0;
      for (arma::uword r = 0; r < kk; ++r) nc += static_cast<arma::uword>(khp[r] != 0 && y[r] < 0.0);
      hwork += colnnz_(c, 0) * static_cast<double>(nc);
      if (noted && nc > 0)
        for (arma::uword r = 0; r < kk; ++r)
          if (khp[r] && y[r] < 0.0) { at.push_back(c * kk + r); neg.push_back(y[r]); }
      if (noted && hwork > limit) { noted = false; at.clear(); neg.clear(); }
    }
    const bool hre = hwork > limit;
    if (hre) {
      for (arma::uword c = 0; c < a.Hy.n_cols; ++c) {
        double* y = a.Hy.colptr(c);
        for (arma::uword r = 0; r < kk; ++r) if (khp[r] && y[r] < 0.0) y[r] = 0.0;
      }
    } else {
      for (arma::uword i = 0; i < at.size(); ++i) a.Hy[at[i]] = 0.0;
    }
    const arma::mat HHy = gram(a.Hy, threads);
    // W given Hy, warm start at Wy: the pieces' block updates. Hy goes
    // projected for a recomputed product, else with its clipped entries
    // (clipped again by the piece that takes it by reference, else here)
    Request wr("her_w");
    if (!hre) for (arma::uword i = 0; i < at.size(); ++i) a.Hy[at[i]] = neg[i];
    if (!hre && own) wr.ref("Hy", a.Hy); else wr.view("Hy", a.Hy);
    wr.view("Hn", a.Hn).with("keep", keepH).with("recompute", hre ? 1.0 : 0.0)
      .with("b", b).view("HH", HHy).with("l1", pen_.l1w).with("l2", pen_.l2w).with("anls", kAnls ? 1.0 : 0.0);
    const double first = P.map(wr).num("change", 0.0);
    if (!hre && !own) for (arma::uword i = 0; i < at.size(); ++i) a.Hy[at[i]] = 0.0;
    if (!kAnls) {
      const int ms = FrobeniusHALS::max_sweeps(pass + n * k * k, m_, k);
      for (int sw = 1; sw < ms; ++sw) {
        const double ch = P.map(Request("her_sweep").view("HH", HHy).with("l1", pen_.l1w).with("l2", pen_.l2w))
                              .num("change");
        if (ch <= FrobeniusHALS::kStop * FrobeniusHALS::kStop * first) break;
      }
    }
    Stats fin = P.map(Request("her_fin"));
    a.Cn = fin.take("C");
    a.wsum = arma::vec(fin.mat("wsum"));
    a.wsq = arma::vec(fin.mat("WW").diag());
    a.f = objective(a.Cn, a.Hn, fin.mat("WW"), gram(a.Hn, threads), fin);
    return a;
  }
  bool lost_component(const Attempt& a) const {
    const arma::vec h0 = arma::sum(H_, 1), h1 = arma::sum(a.Hn, 1);
    for (arma::uword r = 0; r < wsum_.n_elem; ++r)
      if (wsum_[r] > 0.0 && h0[r] > 0.0 && !(a.wsum[r] * h1[r] > 1e-12 * (wsum_[r] * h0[r]))) return true;
    return false;
  }
  Penalty pen_;
  HerParams hp_;
  double beta_, bbar_ = 1.0, f_ = 0.0, cand_ = 0.0, m_;
  double xnorm2_ = 0.0, nnz_ = 0.0;
  bool init_ = false;
  arma::mat H_, Hy_, CW_, Co_, colnnz_;
  arma::vec wsum_, wsq_;
};

}  // namespace nmf
}  // namespace aspectr

#endif
