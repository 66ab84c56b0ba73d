// aspectr/nmf/nndsvd.h — NNDSVD (Boutsidis and Gallopoulos 2008) from the
// leading singular triplets, with u's rows possibly in blocks held apart
// (the shards of a fit): each block gives its part of a column's sums
// (nndsvd_part()), the parts in the blocks' order give the column's choice
// and scales (nndsvd_column()), and each block makes its rows of W from
// them (nndsvd_rows()). For u whole (one block) this is the plain
// computation. Sums of squares run in long double, as R's sum().
#ifndef ASPECTR_NMF_NNDSVD_H
#define ASPECTR_NMF_NNDSVD_H

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <vector>

namespace aspectr {
namespace nmf {

// A block's part of column j of u: the sums of squares of its positive and
// negative parts, the parts' largest entries and the first entry of
// largest magnitude (0 for an empty block).
struct NndsvdPart {
  long double ssp = 0.0L, ssn = 0.0L;
  double maxp = 0.0, maxn = 0.0, first = 0.0;
};

inline NndsvdPart nndsvd_part(const double* x, std::size_t len) {
  NndsvdPart p;
  std::size_t at = 0;
  for (std::size_t i = 0; i < len; ++i) {
    const double a = x[i] > 0.0 ? x[i] : 0.0, b = x[i] < 0.0 ? -x[i] : 0.0;
    p.ssp += a * a;
    p.ssn += b * b;
    p.maxp = std::max(p.maxp, a);
    p.maxn = std::max(p.maxn, b);
    if (std::fabs(x[i]) > std::fabs(x[at])) at = i;
  }
  if (len > 0) p.first = x[at];
  return p;
}

// Column j's choice: for j > 0 the positive or the negative parts of
// (u, v), whichever has the larger product of norms (at a tie, to
// rounding, the part holding u's first entry of largest magnitude); the
// scale r of both factors' columns and the norms nu, nv they are divided
// by (j = 0: W = r |u|, H = r |v|, nu = nv = 1 unused). `parts`: u's
// blocks in order; `v` (n) whole.
struct NndsvdColumn {
  bool pos = true;
  double r = 0.0, nu = 1.0, nv = 1.0;
  // the largest entry of the column of W (for the zeros' threshold)
  double wmax = 0.0;
};

inline NndsvdColumn nndsvd_column(std::size_t j, const std::vector<NndsvdPart>& parts, const double* v,
                                  std::size_t n, double dj) {
  NndsvdColumn c;
  NndsvdPart u;  // the blocks' sums in their order; the first largest entry
  double top = -1.0;
  for (const NndsvdPart& p : parts) {
    u.ssp += p.ssp;
    u.ssn += p.ssn;
    u.maxp = std::max(u.maxp, p.maxp);
    u.maxn = std::max(u.maxn, p.maxn);
    if (std::fabs(p.first) > top) {
      top = std::fabs(p.first);
      u.first = p.first;
    }
  }
  if (j == 0) {
    c.r = std::sqrt(dj);
    c.wmax = c.r * std::max(u.maxp, u.maxn);
    return c;
  }
  const NndsvdPart vp = nndsvd_part(v, n);
  const double nup = std::sqrt(static_cast<double>(u.ssp)), nun = std::sqrt(static_cast<double>(u.ssn));
  const double nvp = std::sqrt(static_cast<double>(vp.ssp)), nvn = std::sqrt(static_cast<double>(vp.ssn));
  const double np = nup * nvp, nn = nun * nvn;
  c.pos = std::fabs(np - nn) <= 1e-10 * std::max(np, nn) ? u.first > 0.0 : np >= nn;
  c.nu = std::max(c.pos ? nup : nun, 1e-300);
  c.nv = std::max(c.pos ? nvp : nvn, 1e-300);
  c.r = std::sqrt(dj * (c.pos ? np : nn));
  // (x -> r (x / nu) is monotone: the largest entry of the part gives W's)
  c.wmax = c.r * ((c.pos ? u.maxp : u.maxn) / c.nu);
  return c;
}

// Entries of a column of a factor from a column x (len) of u or v: out[i *
// stride] = r |x_i| (j = 0) or r (part_i / norm).
inline void nndsvd_rows(std::size_t j, const NndsvdColumn& c, bool of_v, const double* x, std::size_t len,
                        double* out, std::size_t stride) {
  const double norm = of_v ? c.nv : c.nu;
  for (std::size_t i = 0; i < len; ++i) {
    double e;
    if (j == 0) {
      e = c.r * std::fabs(x[i]);
    } else {
      const double p = c.pos ? (x[i] > 0.0 ? x[i] : 0.0) : (x[i] < 0.0 ? -x[i] : 0.0);
      e = c.r * (p / norm);
    }
    out[i * stride] = e;
  }
}

}  // namespace nmf
}  // namespace aspectr

#endif
