// aspectr/summary.h — summaries of a data set's values, shared by the
// fits' reports and the description of shards.
#ifndef ASPECTR_SUMMARY_H
#define ASPECTR_SUMMARY_H

#include <cmath>
#include <cstddef>

namespace aspectr {

// sum g log g with g = val / sum(val) (the negative entropy of the data),
// by way of the largest value (the total may overflow), summed in long
// double as R's sum(); 0 for no values.
inline double neg_entropy(const double* val, std::size_t n) {
  if (n == 0) return 0.0;
  double top = val[0];
  for (std::size_t s = 1; s < n; ++s) if (val[s] > top) top = val[s];
  if (!(top > 0.0)) return 0.0;
  long double sum = 0.0;
  for (std::size_t s = 0; s < n; ++s) sum += val[s] / top;
  const double tot = static_cast<double>(sum);
  long double acc = 0.0;
  for (std::size_t s = 0; s < n; ++s) {
    const double g = (val[s] / top) / tot;
    acc += g * std::log(g);
  }
  return static_cast<double>(acc);
}

}  // namespace aspectr

#endif
