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
#include <new>
#include <stdexcept>
#include <string>
#include <tuple>
#include <utility>
#include <vector>
#include "interrupt.h"

namespace aspectr {

// A few named matrices in the order they were set: a flat list, searched
// by name (a request or its statistics hold a handful, and a step of a
// small fit makes several: a node and a key per matrix cost as much as
// such a step). An entry is never move-assigned (erase() and set()
// destroy and rebuild it): a matrix that reads another's memory (view())
// would otherwise copy into that memory. Unlike a map's, a reference to an
// entry (mat(), find()) holds only until a new name is set or one erased.
class NamedMats {
 public:
  struct Entry {
    std::string name;
    arma::mat value;
    Entry(std::string n, arma::mat&& v) : name(std::move(n)), value(std::move(v)) {}
    Entry(Entry&& o) noexcept : name(std::move(o.name)), value(std::move(o.value)) {}
    Entry(const Entry& o) = default;
    Entry& operator=(const Entry&) = delete;
    Entry& operator=(Entry&&) = delete;
  };

  NamedMats() = default;
  NamedMats(const NamedMats& o) : e_(o.e_) {}
  NamedMats(NamedMats&& o) noexcept = default;
  NamedMats& operator=(const NamedMats& o) {
    if (this != &o) {
      e_.clear();
      e_.reserve(o.e_.size());
      for (const Entry& x : o.e_) e_.emplace_back(x);
    }
    return *this;
  }
  NamedMats& operator=(NamedMats&& o) noexcept {
    e_.swap(o.e_);
    o.e_.clear();
    return *this;
  }

  const Entry* find(const std::string& name) const {
    for (const Entry& x : e_)
      if (same(x.name, name)) return &x;
    return nullptr;
  }
  Entry* find(const std::string& name) {
    for (Entry& x : e_)
      if (same(x.name, name)) return &x;
    return nullptr;
  }
  std::size_t count(const std::string& name) const { return find(name) != nullptr ? 1 : 0; }
  std::size_t size() const { return e_.size(); }
  bool empty() const { return e_.empty(); }
  std::vector<Entry>::const_iterator begin() const { return e_.begin(); }
  std::vector<Entry>::const_iterator end() const { return e_.end(); }

  // `name` set to v (an entry of that name rebuilt in its place; the move
  // of a matrix does not throw: it takes the memory of a large one or of a
  // view, and copies a small one into its own)
  arma::mat& set(const std::string& name, arma::mat&& v) {
    if (Entry* x = find(name)) {
      if (&v == &x->value) return x->value;
      x->value.~Mat();
      new (&x->value) arma::mat(std::move(v));
      return x->value;
    }
    if (e_.empty()) e_.reserve(16);
    e_.emplace_back(name, std::move(v));
    return e_.back().value;
  }
  // the matrix `name`, an empty one added if there is none
  arma::mat& slot(const std::string& name) {
    if (Entry* x = find(name)) return x->value;
    return set(name, arma::mat());
  }
  // removes `name` (the later entries rebuilt one place down)
  void erase(const std::string& name) {
    std::size_t i = 0;
    while (i < e_.size() && e_[i].name != name) ++i;
    if (i == e_.size()) return;
    for (; i + 1 < e_.size(); ++i) {
      e_[i].~Entry();
      new (&e_[i]) Entry(std::move(e_[i + 1]));
    }
    e_.pop_back();
  }

 private:
  // (names differ mostly in their last character: F1, F2, ...)
  static bool same(const std::string& a, const std::string& b) {
    return a.size() == b.size() && (a.empty() || a.back() == b.back()) && a == b;
  }
  std::vector<Entry> e_;
};

// Named matrices (scalars are 1 x 1). Reduce: added element by element,
// except names starting with '@', which are concatenated by columns in the
// pieces' order (a row factor gathered from its pieces).
struct Stats {
  NamedMats m;

  bool has(const std::string& name) const { return m.count(name) > 0; }
  const arma::mat& mat(const std::string& name) const {
    const NamedMats::Entry* x = m.find(name);
    if (x == nullptr) throw std::logic_error("a piece's statistics lack '" + name + "'");
    return x->value;
  }
  double num(const std::string& name) const { return mat(name)(0, 0); }
  // the matrix moved out (the statistics keep an empty one)
  arma::mat take(const std::string& name) {
    NamedMats::Entry* x = m.find(name);
    if (x == nullptr) throw std::logic_error("a piece's statistics lack '" + name + "'");
    return std::move(x->value);
  }
  double num(const std::string& name, double otherwise) const {
    const NamedMats::Entry* x = m.find(name);
    return x == nullptr ? otherwise : x->value(0, 0);
  }
  void set(const std::string& name, arma::mat v) { m.set(name, std::move(v)); }
  void set(const std::string& name, double v) {
    arma::mat x(1, 1);
    x(0, 0) = v;
    m.set(name, std::move(x));
  }

  // adds `o` (the next piece's statistics) to these
  void add(const Stats& o) {
    for (const NamedMats::Entry& kv : o.m) {
      NamedMats::Entry* it = m.find(kv.name);
      if (it == nullptr) { m.set(kv.name, arma::mat(kv.value)); continue; }
      if (!kv.name.empty() && kv.name[0] == '@') {
        m.set(kv.name, arma::join_rows(it->value, kv.value));
      } else {
        if (it->value.n_rows != kv.value.n_rows || it->value.n_cols != kv.value.n_cols)
          throw std::logic_error("pieces' statistics '" + kv.name + "' differ in size");
        it->value += kv.value;
      }
    }
  }
};

// An operation asked of every piece: its name and inputs (the rule's
// global factors and numbers).
struct Request {
  std::string op;
  NamedMats in;
  std::map<std::string, arma::mat*> refs;  // ref()

  Request() = default;
  explicit Request(std::string o) : op(std::move(o)) {}
  Request& with(const std::string& name, arma::mat v) { in.set(name, std::move(v)); return *this; }
  // `v` itself, not a copy: it must outlive the request's map()
  Request& view(const std::string& name, const arma::mat& v) {
    in.set(name, arma::mat(const_cast<double*>(v.memptr()), v.n_rows, v.n_cols, false, true));
    return *this;
  }
  Request& with(const std::string& name, double v) {
    arma::mat x(1, 1);
    x(0, 0) = v;
    in.set(name, std::move(x));
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
  // the inputs `prefix`1, `prefix`2, ... up to the first one missing (a
  // factor per mode), found in one pass
  std::vector<const arma::mat*> numbered(const char* prefix) const {
    const std::size_t len = std::char_traits<char>::length(prefix);
    std::vector<const arma::mat*> out;
    for (const NamedMats::Entry& x : in) {
      const std::string& nm = x.name;
      if (nm.size() <= len || nm.compare(0, len, prefix) != 0) continue;
      std::size_t i = 0;
      bool digits = true;
      for (std::size_t c = len; c < nm.size() && digits; ++c) {
        digits = nm[c] >= '0' && nm[c] <= '9' && (c > len || nm[c] != '0');
        if (digits) i = 10 * i + static_cast<std::size_t>(nm[c] - '0');
      }
      if (!digits || i == 0 || i > in.size()) continue;
      if (out.size() < i) out.resize(i, nullptr);
      out[i - 1] = &x.value;
    }
    for (std::size_t i = 0; i < out.size(); ++i)
      if (out[i] == nullptr) { out.resize(i); break; }
    return out;
  }
  const arma::mat& mat(const std::string& name) const {
    const NamedMats::Entry* x = in.find(name);
    if (x == nullptr) throw std::logic_error("request '" + op + "' lacks '" + name + "'");
    return x->value;
  }
  double num(const std::string& name, double otherwise) const {
    const NamedMats::Entry* x = in.find(name);
    return x == nullptr ? otherwise : x->value(0, 0);
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
    // (a user's interrupt looked for before each piece's part)
    poll();
    if (pieces_.size() == 1) return pieces_[0]->run(r, threads_);
    Stats out;
    for (std::size_t i = 0; i < pieces_.size(); ++i) {
      if (i > 0) poll();
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
