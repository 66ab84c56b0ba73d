// aspectr/shard_file.h — the binary shard file (R's write_shards()) read
// into a buffer that is reused from one read to the next.
//
// Out-of-core fits read every shard once per iteration. Reading into R
// objects allocates fresh memory each time, and the page faults of that
// memory cost about as much as an EM pass at k = 10; a buffer kept across
// reads costs one copy from the page cache instead.
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

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <stdexcept>
#include <string>
#include <vector>

#include "data.h"

namespace aspectr {

struct ShardBuffer {
  std::vector<arma::uword> dims;
  std::vector<index_t> idx;
  std::vector<double> val;  // the raw values
  std::vector<double> g;    // work space: the normalized values
  std::size_t nnz = 0;
};

namespace detail {
struct File {
  std::FILE* f;
  explicit File(const std::string& path) : f(std::fopen(path.c_str(), "rb")) {}
  ~File() { if (f != nullptr) std::fclose(f); }
};
inline void read_exact(std::FILE* f, void* dst, std::size_t bytes, const std::string& path) {
  if (bytes > 0 && std::fread(dst, 1, bytes, f) != bytes)
    throw std::runtime_error("shard file " + path + " is truncated");
}
}  // namespace detail

// Reads a shard file into `buf` (its vectors keep their capacity).
inline void read_shard_file(const std::string& path, ShardBuffer& buf) {
  detail::File file(path);
  if (file.f == nullptr) throw std::runtime_error("cannot open shard file " + path);
  char magic[8];
  detail::read_exact(file.f, magic, 8, path);
  if (std::memcmp(magic, "ASPSHRD1", 8) != 0)
    throw std::runtime_error(path + " is not a shard file written by write_shards()");
  std::int32_t marker = 0, N = 0;
  detail::read_exact(file.f, &marker, 4, path);
  if (marker != 0x01020304)
    throw std::runtime_error("shard file " + path + " was written on a machine of another byte order");
  detail::read_exact(file.f, &N, 4, path);
  if (N < 2 || N > 64) throw std::runtime_error("shard file " + path + " has an invalid number of modes");
  double nnz_d = 0.0;
  detail::read_exact(file.f, &nnz_d, 8, path);
  std::vector<double> dims_d(static_cast<std::size_t>(N));
  detail::read_exact(file.f, dims_d.data(), 8 * dims_d.size(), path);
  double names_bytes = 0.0;
  detail::read_exact(file.f, &names_bytes, 8, path);
  if (!(nnz_d >= 0.0) || nnz_d != std::floor(nnz_d) || nnz_d > 9e15)
    throw std::runtime_error("shard file " + path + " has an invalid number of non-zeros");
  buf.dims.resize(static_cast<std::size_t>(N));
  for (std::int32_t n = 0; n < N; ++n) {
    const double d = dims_d[static_cast<std::size_t>(n)];
    if (!(d >= 0.0) || d != std::floor(d) || d > 2147483647.0)
      throw std::runtime_error("shard file " + path + " has an invalid size of mode " + std::to_string(n + 1));
    buf.dims[static_cast<std::size_t>(n)] = static_cast<arma::uword>(d);
  }
  buf.nnz = static_cast<std::size_t>(nnz_d);
  buf.idx.resize(buf.nnz * static_cast<std::size_t>(N));
  buf.val.resize(buf.nnz);
  detail::read_exact(file.f, buf.idx.data(), sizeof(index_t) * buf.idx.size(), path);
  detail::read_exact(file.f, buf.val.data(), sizeof(double) * buf.val.size(), path);
}

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
