// aspectr/pieces.h — the data of a fit as cells in pieces.
//
// Every solver's iteration is a map over pieces of the data (a piece: a
// source of cells with its rows' block of the first factor, which stays
// with it) and a reduce of small statistics (k x columns). A rule asks
// for an operation by a Request (its name and inputs) and gets the Stats
// of all pieces added up, in the pieces' order. Where the pieces are is
// the Pieces' business: one piece in memory (a matrix), several in this
// process (shards in memory or in files), or on the workers of a cluster
// (the embedding sends the request there and adds the answers). The
// operations themselves are written once, for one piece (e.g.
// nmf/piece.h), and every backend runs the same ones; so one rule, one
// loop (driver.h) and one stopping rule serve every backend.
#ifndef ASPECTR_PIECES_H
#define ASPECTR_PIECES_H

#include <armadillo>
#include <map>
#include <stdexcept>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

namespace aspectr {

// Named matrices (scalars are 1 x 1). Reduce: added element by element,
// except names starting with '@', which are concatenated by columns in the
// pieces' order (a row factor gathered from its pieces).
struct Stats {
  std::map<std::string, arma::mat> m;

  bool has(const std::string& name) const { return m.count(name) > 0; }
  const arma::mat& mat(const std::string& name) const {
    auto it = m.find(name);
    if (it == m.end()) throw std::logic_error("a piece's statistics lack '" + name + "'");
    return it->second;
  }
  double num(const std::string& name) const { return mat(name)(0, 0); }
  // the matrix moved out (the statistics keep an empty one)
  arma::mat take(const std::string& name) {
    auto it = m.find(name);
    if (it == m.end()) throw std::logic_error("a piece's statistics lack '" + name + "'");
    return std::move(it->second);
  }
  double num(const std::string& name, double otherwise) const {
    auto it = m.find(name);
    return it == m.end() ? otherwise : it->second(0, 0);
  }
  void set(const std::string& name, arma::mat v) { m[name] = std::move(v); }
  void set(const std::string& name, double v) {
    arma::mat x(1, 1);
    x(0, 0) = v;
    m[name] = std::move(x);
  }

  // adds `o` (the next piece's statistics) to these
  void add(const Stats& o) {
    for (const auto& kv : o.m) {
      auto it = m.find(kv.first);
      if (it == m.end()) { m.insert(kv); continue; }
      if (!kv.first.empty() && kv.first[0] == '@') {
        it->second = arma::join_rows(it->second, kv.second);
      } else {
        if (it->second.n_rows != kv.second.n_rows || it->second.n_cols != kv.second.n_cols)
          throw std::logic_error("pieces' statistics '" + kv.first + "' differ in size");
        it->second += kv.second;
      }
    }
  }
};

// An operation asked of every piece: its name and inputs (the rule's
// global factors and numbers).
struct Request {
  std::string op;
  std::map<std::string, arma::mat> in;
  std::map<std::string, arma::mat*> refs;  // ref()

  Request() = default;
  explicit Request(std::string o) : op(std::move(o)) {}
  Request& with(const std::string& name, arma::mat v) { in[name] = std::move(v); return *this; }
  // `v` itself, not a copy: it must outlive the request's map()
  Request& view(const std::string& name, const arma::mat& v) {
    in.erase(name);
    in.emplace(std::piecewise_construct, std::forward_as_tuple(name),
               std::forward_as_tuple(const_cast<double*>(v.memptr()), v.n_rows, v.n_cols, false, true));
    return *this;
  }
  Request& with(const std::string& name, double v) {
    arma::mat x(1, 1);
    x(0, 0) = v;
    in[name] = std::move(x);
    return *this;
  }
  // `v` itself, which the piece reads and may change in place (a factor it
  // clips, a product it adds to): only for a Pieces that runs requests on
  // one piece in this process (Pieces::in_place()); elsewhere the rule
  // sends its inputs by view() or with() and takes the results from the
  // Stats. Not among `in` (a request that must reach other processes
  // never carries one).
  Request& ref(const std::string& name, arma::mat& v) {
    refs[name] = &v;
    return *this;
  }
  // the matrix given by ref(), or nullptr
  arma::mat* target(const std::string& name) const {
    auto it = refs.find(name);
    return it == refs.end() ? nullptr : it->second;
  }
  bool has(const std::string& name) const { return in.count(name) > 0; }
  const arma::mat& mat(const std::string& name) const {
    auto it = in.find(name);
    if (it == in.end()) throw std::logic_error("request '" + op + "' lacks '" + name + "'");
    return it->second;
  }
  double num(const std::string& name, double otherwise) const {
    auto it = in.find(name);
    return it == in.end() ? otherwise : it->second(0, 0);
  }
};

// The data of a fit, in pieces. map() runs the request on every piece and
// returns the sum of their statistics (Stats::add, in the pieces' order).
class Pieces {
 public:
  virtual ~Pieces() = default;
  virtual Stats map(const Request& r) const = 0;
  // whether every request runs on one piece in this process, which may
  // then read and write the matrices the request carries by ref()
  virtual bool in_place() const { return false; }
  // The same cells as column pieces, where the backend has them: each
  // holds every row of a block of columns (a column's cells in the order
  // of the matrix in memory) with the whole first factor, which is then in
  // this process (e.g. a copy of shard files by columns, nmf/columns.h).
  // map_columns() runs the request on each, in the order of their
  // columns, and adds their statistics (names starting with '@' come back
  // joined: a factor of the columns, whole). A rule asks has_columns()
  // first; the column pieces' operations are listed with the rule's
  // pieces' (e.g. nmf/piece.h, ColumnPiece).
  virtual bool has_columns() const { return false; }
  virtual Stats map_columns(const Request& r) const {
    throw std::logic_error("request '" + r.op + "' to column pieces the data do not have");
  }
};

// Pieces held in this process: `Piece` is a type with
//   Stats run(const Request&, int threads)
// (one piece's operations); the pieces are visited in order.
template <class Piece>
class LocalPieces : public Pieces {
 public:
  LocalPieces(std::vector<Piece*> pieces, int threads) : pieces_(std::move(pieces)), threads_(threads) {}
  Stats map(const Request& r) const override {
    if (!r.refs.empty() && !in_place()) throw std::logic_error("request '" + r.op + "' by reference to several pieces");
    if (pieces_.size() == 1) return pieces_[0]->run(r, threads_);
    Stats out;
    for (std::size_t i = 0; i < pieces_.size(); ++i) {
      if (i == 0) out = pieces_[i]->run(r, threads_);
      else out.add(pieces_[i]->run(r, threads_));
    }
    return out;
  }
  bool in_place() const override { return pieces_.size() == 1; }

 private:
  std::vector<Piece*> pieces_;
  int threads_;
};

}  // namespace aspectr

#endif
