// aspectr/logsum.h — sum_s x_s log(p_s) over non-zeros without a logarithm
// per term, for count data.
//
// For a small whole count x the term is log(p^x). The powers are multiplied
// into a running product kept as mantissa x 2^exponent: each factor's
// exponent is split off with IEEE-754 bit operations, the mantissas (in
// [0.5, 1)) are multiplied and renormalized every 256 factors, and one log
// is taken at the end. Terms with other counts (or denormal p) fall back to
// x * log(p). Exact up to rounding; about a tenth of the cost of a log.
#ifndef ASPECTR_LOGSUM_H
#define ASPECTR_LOGSUM_H

#include <cmath>
#include <cstdint>
#include <cstring>

namespace aspectr {

class LogSum {
 public:
  // mult: 1..kMaxMult for whole counts handled by products, 0 otherwise
  static constexpr int kMaxMult = 8;

  void add(double p, double x, int mult) {
    if (mult > 0 && p > 0.0) {
      double q = p;
      for (int j = 1; j < mult; ++j) q *= p;
      std::uint64_t bits;
      std::memcpy(&bits, &q, sizeof bits);
      const int e = static_cast<int>((bits >> 52) & 0x7ff);
      if (e != 0 && e != 0x7ff) {
        expo_ += e - 1022;
        bits = (bits & ~(std::uint64_t(0x7ff) << 52)) | (std::uint64_t(1022) << 52);
        std::memcpy(&q, &bits, sizeof q);
        mant_ *= q;
        products_ = true;
        if (++count_ == 256) renormalize();
        return;
      }
    }
    direct_ += x * std::log(p);
  }

  // The product part is added as one term: added term by term, its two
  // pieces (about +-0.69 each) would absorb a direct part below 1e-16 (data
  // scaled down by 1e-20, say) and return 0.
  double value() {
    if (!products_) return direct_;
    renormalize();
    return direct_ + (static_cast<double>(expo_) * 0.69314718055994530942 + std::log(mant_));
  }

 private:
  void renormalize() {
    int e;
    mant_ = std::frexp(mant_, &e);
    expo_ += e;
    count_ = 0;
  }
  double mant_ = 1.0;
  long long expo_ = 0;
  int count_ = 0;
  bool products_ = false;
  double direct_ = 0.0;
};

// Multiplicities for LogSum: the count itself when it is a whole number in
// 1..kMaxMult, else 0.
inline int count_multiplicity(double x) {
  const double r = std::round(x);
  if (r >= 1.0 && r <= LogSum::kMaxMult && std::fabs(x - r) <= 1e-12 * r) return static_cast<int>(r);
  return 0;
}

}  // namespace aspectr

#endif
