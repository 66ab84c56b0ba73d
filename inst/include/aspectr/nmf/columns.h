// aspectr/nmf/columns.h — the cells of X, split by rows into shard files,
// copied once by blocks of columns, every row in each: the column pieces
// of a fit out of core (pieces.h, Pieces::map_columns()).
//
// The update of H by KL coordinate descent needs every row of a column.
// From the row pieces it takes about k + 1 passes over every shard an
// iteration (KLCDColumns: each pass adds the pieces' parts of every
// column's sums), and a file keeps no v = W h between passes; from a block
// of whole columns, with W in this process, each column is solved at once
// (KLCD::solve_side(), the matrix in memory's arithmetic): one pass.
//
// A block is a shard file of its own (shard_file.h's layout, without
// names) of m x (its columns), its cells in the order of a matrix
// compressed by columns (by column, the rows increasing in each), which
// is the order the matrix in memory sums a column's cells in.
#ifndef ASPECTR_NMF_COLUMNS_H
#define ASPECTR_NMF_COLUMNS_H

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <stdexcept>
#include <string>
#include <vector>
#include "../shard_file.h"
#include "data.h"

namespace aspectr {
namespace nmf {

namespace columns_detail {
struct OutFile {
  std::FILE* f;
  std::string path;
  OutFile(const std::string& p, const char* mode) : f(std::fopen(p.c_str(), mode)), path(p) {
    if (f == nullptr) throw std::runtime_error("cannot write " + p);
  }
  OutFile(const OutFile&) = delete;
  OutFile& operator=(const OutFile&) = delete;
  ~OutFile() { if (f != nullptr) std::fclose(f); }
  void write(const void* p, std::size_t bytes) {
    if (bytes > 0 && std::fwrite(p, 1, bytes, f) != bytes) throw std::runtime_error("cannot write " + path);
  }
  // closed, with the error of a write that failed late (a full disk)
  void close() {
    const bool bad = std::fflush(f) != 0 || std::ferror(f) != 0;
    const bool shut = std::fclose(f) == 0;
    f = nullptr;
    if (bad || !shut) throw std::runtime_error("cannot write " + path);
  }
};
// a cell on its way to its block: its row in X, its column in the block
struct BlockCell {
  std::uint32_t i, j;
  double x;
};
}  // namespace columns_detail

// A 2-way shard file of m x n holding `nnz` cells (idx: row, column of
// each, 0-based), without names.
inline void write_shard_cells(const std::string& path, arma::uword m, arma::uword n, const index_t* idx,
                              const double* val, std::size_t nnz) {
  columns_detail::OutFile o(path, "wb");
  const std::int32_t head[2] = {0x01020304, 2};
  const double sizes[4] = {static_cast<double>(nnz), static_cast<double>(m), static_cast<double>(n), 0.0};
  o.write("ASPSHRD1", 8);
  o.write(head, sizeof(head));
  o.write(sizes, sizeof(sizes));
  o.write(idx, sizeof(index_t) * 2 * nnz);
  o.write(val, sizeof(double) * nnz);
  o.close();
}

// The copy by columns of the shard files `paths` (2-way; shard s holds
// rows[s] rows, after those of the shards before it, and at most n
// columns), in blocks of contiguous columns of at most `block_cells` cells
// (a column with more is a block of its own), written as
// dir/block<b>.shard. Reads every file twice, `chunk` cells at a time,
// and holds one block at a time; returns the blocks' first columns and n
// (one more entry than blocks).
inline std::vector<arma::uword> build_column_blocks(const std::vector<std::string>& paths,
                                                    const std::vector<arma::uword>& rows, arma::uword n,
                                                    double block_cells, std::size_t chunk, const std::string& dir,
                                                    ShardBuffer& buf) {
  if (paths.size() != rows.size()) throw std::logic_error("a copy by columns of the wrong number of shards");
  // the cells of every column
  std::vector<std::size_t> count(n, 0);
  std::vector<arma::uword> first(paths.size());
  std::uint64_t m = 0;
  for (std::size_t s = 0; s < paths.size(); ++s) {
    first[s] = static_cast<arma::uword>(m);
    m += rows[s];
    ShardReader reader(paths[s]);
    if (reader.dims().size() != 2 || reader.dims()[0] != rows[s] || reader.dims()[1] > n)
      throw std::runtime_error("shard file " + paths[s] + ": its sizes differ from those shards() recorded");
    while (reader.next(buf, chunk)) {
      const index_t* ix = buf.idx.data();
      for (std::size_t t = 0; t < buf.nnz; ++t) {
        if (ix[2 * t] >= rows[s] || ix[2 * t + 1] >= n)
          throw std::runtime_error("shard file " + paths[s] + ": a cell's index is outside the shard's size");
        ++count[ix[2 * t + 1]];
      }
    }
  }
  if (m > 4294967295.0) throw std::runtime_error("too many rows for a copy by columns");
  // the blocks
  std::vector<arma::uword> start(1, 0);
  double acc = 0.0;
  for (arma::uword j = 0; j < n; ++j) {
    if (acc > 0.0 && acc + static_cast<double>(count[j]) > block_cells) {
      start.push_back(j);
      acc = 0.0;
    }
    acc += static_cast<double>(count[j]);
  }
  if (n > 0) start.push_back(n);
  const std::size_t B = start.size() - 1;
  std::vector<std::uint32_t> block(n);
  for (std::size_t b = 0; b < B; ++b)
    for (arma::uword j = start[b]; j < start[b + 1]; ++j) block[j] = static_cast<std::uint32_t>(b);
  const auto name = [&dir](std::size_t b, const char* ext) {
    return dir + "/block" + std::to_string(b + 1) + ext;
  };
  // the cells appended to their block's temporary file in the shards'
  // order, for at most 64 blocks (open files) at a time; then each block
  // in the order of columns, rows increasing, written as a shard file
  const std::size_t group = 64, flush_at = 4096;
  for (std::size_t g0 = 0; g0 < B; g0 += group) {
    const std::size_t g1 = std::min(B, g0 + group);
    {
      std::vector<columns_detail::OutFile*> out;
      std::vector<std::vector<columns_detail::BlockCell>> pend(g1 - g0);
      struct Closer {
        std::vector<columns_detail::OutFile*>& o;
        ~Closer() { for (auto* f : o) delete f; }
      } closer{out};
      for (std::size_t b = g0; b < g1; ++b) out.push_back(new columns_detail::OutFile(name(b, ".tmp"), "wb"));
      for (std::size_t s = 0; s < paths.size(); ++s) {
        ShardReader reader(paths[s]);
        while (reader.next(buf, chunk)) {
          const index_t* ix = buf.idx.data();
          for (std::size_t t = 0; t < buf.nnz; ++t) {
            const std::uint32_t j = ix[2 * t + 1], b = block[j];
            if (b < g0 || b >= g1) continue;
            auto& p = pend[b - g0];
            p.push_back({static_cast<std::uint32_t>(first[s] + ix[2 * t]), static_cast<std::uint32_t>(j - start[b]),
                         buf.val[t]});
            if (p.size() >= flush_at) {
              out[b - g0]->write(p.data(), sizeof(columns_detail::BlockCell) * p.size());
              p.clear();
            }
          }
        }
      }
      for (std::size_t b = g0; b < g1; ++b) {
        auto& p = pend[b - g0];
        out[b - g0]->write(p.data(), sizeof(columns_detail::BlockCell) * p.size());
        out[b - g0]->close();
      }
    }
    for (std::size_t b = g0; b < g1; ++b) {
      const arma::uword nb = start[b + 1] - start[b];
      std::size_t nnz = 0;
      for (arma::uword j = start[b]; j < start[b + 1]; ++j) nnz += count[j];
      std::vector<columns_detail::BlockCell> cells(nnz);
      {
        aspectr::detail::File in(name(b, ".tmp"));
        if (in.f == nullptr) throw std::runtime_error("cannot read " + name(b, ".tmp"));
        aspectr::detail::read_exact(in.f, cells.data(), sizeof(columns_detail::BlockCell) * nnz, name(b, ".tmp"));
      }
      std::remove(name(b, ".tmp").c_str());
      // by column (stable), then rows increasing within each column
      std::vector<std::size_t> at(nb + 1, 0);
      for (const auto& c : cells) ++at[c.j + 1];
      for (arma::uword j = 0; j < nb; ++j) at[j + 1] += at[j];
      std::vector<index_t> idx(2 * nnz);
      std::vector<double> val(nnz);
      {
        std::vector<std::size_t> pos(at.begin(), at.end() - 1);
        std::vector<columns_detail::BlockCell> sorted(nnz);
        for (const auto& c : cells) sorted[pos[c.j]++] = c;
        cells.swap(sorted);
      }
      const auto by_row = [](const columns_detail::BlockCell& a, const columns_detail::BlockCell& c) {
        return a.i < c.i;
      };
      for (arma::uword j = 0; j < nb; ++j) {
        const auto b0 = cells.begin() + static_cast<std::ptrdiff_t>(at[j]);
        const auto b1 = cells.begin() + static_cast<std::ptrdiff_t>(at[j + 1]);
        if (!std::is_sorted(b0, b1, by_row)) std::stable_sort(b0, b1, by_row);
      }
      for (std::size_t t = 0; t < nnz; ++t) {
        idx[2 * t] = cells[t].i;
        idx[2 * t + 1] = cells[t].j;
        val[t] = cells[t].x;
      }
      cells = std::vector<columns_detail::BlockCell>();
      write_shard_cells(name(b, ".shard"), static_cast<arma::uword>(m), nb, idx.data(), val.data(), nnz);
    }
  }
  return start;
}

// A block of the copy (m x nb, its cells by column, rows increasing) as the
// columns of X, read `chunk` cells at a time, its values divided by `scale`
// as those of a shard (shard_csc()).
inline Csc read_column_block(const std::string& path, ShardBuffer& buf, std::size_t chunk, double scale,
                             arma::uword m, arma::uword nb) {
  ShardReader reader(path);
  if (reader.dims().size() != 2 || reader.dims()[0] != m || reader.dims()[1] != nb)
    throw std::runtime_error("the copy by columns " + path + " does not hold the data's sizes");
  Csc A;
  A.n_rows = m;
  A.n_cols = nb;
  A.p.assign(nb + 1, 0);
  A.own(reader.nnz());
  std::size_t t = 0;
  std::int64_t pj = -1, pi = -1;
  while (reader.next(buf, chunk)) {
    const index_t* ix = buf.idx.data();
    for (std::size_t s = 0; s < buf.nnz; ++s, ++t) {
      const std::int64_t i = ix[2 * s], j = ix[2 * s + 1];
      if (i >= static_cast<std::int64_t>(m) || j >= static_cast<std::int64_t>(nb) || j < pj || (j == pj && i <= pi))
        throw std::runtime_error("the copy by columns " + path + " is not in the order of columns");
      ++A.p[static_cast<std::size_t>(j) + 1];
      A.i_store[t] = static_cast<std::uint32_t>(i);
      A.x_store[t] = buf.val[s] / scale;
      pj = j;
      pi = i;
    }
  }
  for (arma::uword j = 0; j < nb; ++j) A.p[j + 1] += A.p[j];
  return A;
}

}  // namespace nmf
}  // namespace aspectr

#endif
