// aspectr/shard_file.h — the binary shard file (R's write_shards()) read
// into a buffer that is reused from one read to the next.
//
// Out-of-core fits read every shard once per iteration. Reading into R
// objects allocates fresh memory each time, and the page faults of that
// memory cost about as much as an EM pass at k = 10; a buffer kept across
// reads costs one copy from the page cache instead. EM reads a file a chunk
// of cells at a time (ShardReader) into that buffer.
//
// Layout (native byte order, checked by a marker):
//   char[8]  "ASPSHRD1"
//   int32    0x01020304 (byte-order marker)
//   int32    N, the number of modes
//   double   nnz
//   double   dims[N]
//   double   bytes of the trailing names block (R's serialized dimnames)
//   int32    idx[N * nnz]   0-based, cell s at [s*N .. s*N+N-1]
//   double   val[nnz]
//   (names block)
#ifndef ASPECTR_SHARD_FILE_H
#define ASPECTR_SHARD_FILE_H

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <limits>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>
#include "interrupt.h"
#if !defined(_WIN32)
#include <sys/types.h>
#endif

#include "data.h"

namespace aspectr {

struct ShardBuffer {
  std::vector<arma::uword> dims;
  std::vector<index_t> idx;
  std::vector<double> val;  // the raw values
  std::vector<double> g;    // work space: the normalized values
  std::size_t nnz = 0;
  Workspace work;           // the passes' matrices (EMRule::pass_begin)
};

namespace detail {
struct File {
  std::FILE* f;
  explicit File(const std::string& path) : f(std::fopen(path.c_str(), "rb")) {}
  File(const File&) = delete;
  File& operator=(const File&) = delete;
  ~File() { if (f != nullptr) std::fclose(f); }
};
inline void read_exact(std::FILE* f, void* dst, std::size_t bytes, const std::string& path) {
  if (bytes > 0 && std::fread(dst, 1, bytes, f) != bytes)
    throw std::runtime_error("shard file " + path + " is truncated");
}
// (files beyond 2 GiB: 64-bit offsets)
inline bool seek_to(std::FILE* f, std::uint64_t offset) {
#if defined(_WIN32)
  return _fseeki64(f, static_cast<__int64>(offset), SEEK_SET) == 0;
#else
  // (where off_t has 32 bits, an offset beyond it is refused, not cut)
  if (offset > static_cast<std::uint64_t>(std::numeric_limits<off_t>::max())) return false;
  return fseeko(f, static_cast<off_t>(offset), SEEK_SET) == 0;
#endif
}
}  // namespace detail

// A shard file's header: its modes' sizes and number of cells, checked.
struct ShardHeader {
  std::vector<arma::uword> dims;
  std::size_t nnz = 0;
  // bytes before the indices
  std::uint64_t offset() const { return 8 + 4 + 4 + 8 + 8 * static_cast<std::uint64_t>(dims.size()) + 8; }
};

inline ShardHeader read_shard_header(std::FILE* f, const std::string& path) {
  char magic[8];
  detail::read_exact(f, magic, 8, path);
  if (std::memcmp(magic, "ASPSHRD1", 8) != 0)
    throw std::runtime_error(path + " is not a shard file written by write_shards()");
  std::int32_t marker = 0, N = 0;
  detail::read_exact(f, &marker, 4, path);
  if (marker != 0x01020304)
    throw std::runtime_error("shard file " + path + " was written on a machine of another byte order");
  detail::read_exact(f, &N, 4, path);
  if (N < 2 || N > 64) throw std::runtime_error("shard file " + path + " has an invalid number of modes");
  double nnz_d = 0.0;
  detail::read_exact(f, &nnz_d, 8, path);
  std::vector<double> dims_d(static_cast<std::size_t>(N));
  detail::read_exact(f, dims_d.data(), 8 * dims_d.size(), path);
  double names_bytes = 0.0;
  detail::read_exact(f, &names_bytes, 8, path);
  if (!(nnz_d >= 0.0) || nnz_d != std::floor(nnz_d) || nnz_d > 9e15)
    throw std::runtime_error("shard file " + path + " has an invalid number of non-zeros");
  ShardHeader h;
  h.dims.resize(static_cast<std::size_t>(N));
  for (std::int32_t n = 0; n < N; ++n) {
    const double d = dims_d[static_cast<std::size_t>(n)];
    if (!(d >= 0.0) || d != std::floor(d) || d > 2147483647.0)
      throw std::runtime_error("shard file " + path + " has an invalid size of mode " + std::to_string(n + 1));
    h.dims[static_cast<std::size_t>(n)] = static_cast<arma::uword>(d);
  }
  h.nnz = static_cast<std::size_t>(nnz_d);
  return h;
}

// Reads a shard file into `buf` (its vectors keep their capacity).
inline void read_shard_file(const std::string& path, ShardBuffer& buf) {
  detail::File file(path);
  if (file.f == nullptr) throw std::runtime_error("cannot open shard file " + path);
  const ShardHeader h = read_shard_header(file.f, path);
  buf.dims = h.dims;
  buf.nnz = h.nnz;
  buf.idx.resize(buf.nnz * buf.dims.size());
  buf.val.resize(buf.nnz);
  detail::read_exact(file.f, buf.idx.data(), sizeof(index_t) * buf.idx.size(), path);
  detail::read_exact(file.f, buf.val.data(), sizeof(double) * buf.val.size(), path);
}

// Reads a shard file's cells into memory the caller provides (an R
// vector's, with no buffer between): `alloc(dims, nnz)` returns where the
// indices (N * nnz 32-bit integers, cell s at [s*N .. s*N+N-1]) and the
// values (nnz doubles) go.
template <class Alloc>
inline void read_shard_file_into(const std::string& path, Alloc alloc) {
  detail::File file(path);
  if (file.f == nullptr) throw std::runtime_error("cannot open shard file " + path);
  const ShardHeader h = read_shard_header(file.f, path);
  const std::pair<void*, double*> dst = alloc(h.dims, h.nnz);
  if (h.nnz == 0) return;
  detail::read_exact(file.f, dst.first, sizeof(index_t) * h.nnz * h.dims.size(), path);
  detail::read_exact(file.f, dst.second, sizeof(double) * h.nnz, path);
}

// What is wrong with a shard's cells, in one pass over each array: 0
// nothing, 1 a value that is not positive and finite, 2 an index outside
// its mode's size (idx as read_shard_file_into() gives it; as signed
// integers, an R NA is negative).
inline int shard_cells_fault(const std::int32_t* idx, const double* val, std::size_t nnz,
                             const std::vector<arma::uword>& dims) {
  for (std::size_t s = 0; s < nnz; ++s) {
    if (!(val[s] > 0.0) || !std::isfinite(val[s])) return 1;
  }
  const std::size_t N = dims.size();
  std::vector<std::int64_t> size(dims.begin(), dims.end());
  for (std::size_t s = 0; s < nnz; ++s) {
    const std::int32_t* c = idx + s * N;
    for (std::size_t n = 0; n < N; ++n) {
      if (c[n] < 0 || static_cast<std::int64_t>(c[n]) >= size[n]) return 2;
    }
  }
  return 0;
}

// A shard file read a chunk of cells at a time, through two streams (one
// at the indices, one at the values): an out-of-core fit then holds a
// chunk, not the shard (the passes over the cells are sums, see
// EMRule::Pass).
class ShardReader {
 public:
  explicit ShardReader(const std::string& path) : path_(path), idx_(path), val_(path) {
    if (idx_.f == nullptr || val_.f == nullptr) throw std::runtime_error("cannot open shard file " + path);
    head_ = read_shard_header(idx_.f, path);
    const std::uint64_t at = head_.offset() + sizeof(index_t) * static_cast<std::uint64_t>(head_.nnz) * head_.dims.size();
    if (!detail::seek_to(val_.f, at)) throw std::runtime_error("shard file " + path + " is truncated");
  }
  const std::vector<arma::uword>& dims() const { return head_.dims; }
  std::size_t nnz() const { return head_.nnz; }
  // The next at most `cells` cells into `buf` (its dims set, its vectors
  // keeping their capacity); false when none are left. Looks for a user's
  // interrupt first (interrupt.h).
  bool next(ShardBuffer& buf, std::size_t cells) {
    if (done_ >= head_.nnz) return false;
    poll();  // (a user's interrupt, between chunks)
    const std::size_t m = std::min(std::max<std::size_t>(cells, 1), head_.nnz - done_);
    buf.dims = head_.dims;
    buf.nnz = m;
    buf.idx.resize(m * head_.dims.size());
    buf.val.resize(m);
    detail::read_exact(idx_.f, buf.idx.data(), sizeof(index_t) * buf.idx.size(), path_);
    detail::read_exact(val_.f, buf.val.data(), sizeof(double) * m, path_);
    done_ += m;
    return true;
  }

 private:
  std::string path_;
  detail::File idx_, val_;
  ShardHeader head_;
  std::size_t done_ = 0;
};

// The tensor of the buffer's cells, its values the raw ones divided by
// top and then by scaled (the whole data's maximum and scaled total, see
// SparseTensor::normalize): by its scales, indices and values borrowed
// from the buffer (or, where the scales would not be normal numbers, the
// values divided into the buffer's second array); validated.
inline SparseTensor shard_tensor(ShardBuffer& buf, const std::vector<arma::uword>& dims,
                                 double top, double scaled) {
  SparseTensor t;
  t.dims = dims;
  t.view = buf.idx.data();
  if (!(top > 0.0 && scaled > 0.0) || t.set_scales(top, scaled)) {
    buf.g = std::vector<double>();  // not needed
    t.val = arma::vec(buf.val.data(), buf.nnz, false, true);
    t.validate();
    return t;
  }
  buf.g.resize(buf.nnz);
  for (std::size_t s = 0; s < buf.nnz; ++s) buf.g[s] = buf.val[s] / top / scaled;
  t.val = arma::vec(buf.g.data(), buf.nnz, false, true);
  t.validate();
  return t;
}

}  // namespace aspectr

#endif
