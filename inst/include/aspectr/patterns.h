// aspectr/patterns.h — categorical data as a count tensor of response
// patterns (latent class analysis): codes per variable, then the distinct
// patterns of the observations and their counts.
//
// Codes are 1-based with 0 for a missing response. code_whole() gives a
// column of whole numbers its codes (the ranks of its sorted distinct
// values); code_factor() keeps a factor's levels that occur, in level order.
// count_patterns() finds the distinct patterns of the kept observations in
// order of first appearance, then orders them by their first variable's
// code (stable: ties keep first-appearance order), which is the order of the
// tensor's cells.
#ifndef ASPECTR_PATTERNS_H
#define ASPECTR_PATTERNS_H

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <string>
#include <unordered_map>
#include <vector>

namespace aspectr {
namespace patterns {

// A column of whole numbers (missing: `missing[i]`). `values` receives the
// sorted distinct values, `codes` their ranks (1-based; 0 when missing).
// Returns the index of the first value that is not a whole number (NaN and
// infinities are treated as values, as R's is.na() and round() do: NaN is
// missing, an infinity a value), or -1.
template <class T, class IsMissing>
long code_whole(const T* x, std::size_t n, IsMissing missing, std::vector<T>& values, int* codes) {
  values.clear();
  for (std::size_t i = 0; i < n; ++i) {
    if (missing(i)) continue;
    const double v = static_cast<double>(x[i]);
    if (std::isfinite(v) && v != std::round(v)) return static_cast<long>(i);
    values.push_back(x[i]);
  }
  std::sort(values.begin(), values.end());
  values.erase(std::unique(values.begin(), values.end()), values.end());
  for (std::size_t i = 0; i < n; ++i) {
    if (missing(i)) {
      codes[i] = 0;
    } else {
      codes[i] = 1 + static_cast<int>(std::lower_bound(values.begin(), values.end(), x[i]) - values.begin());
    }
  }
  return -1;
}

// A factor's codes (1..nlevels, 0 missing) -> codes among the levels that
// occur; `used` receives those levels (1-based, in level order).
inline void code_factor(const int* x, std::size_t n, int nlevels, std::vector<int>& used, int* codes) {
  std::vector<int> map(static_cast<std::size_t>(nlevels) + 1, 0);
  for (std::size_t i = 0; i < n; ++i)
    if (x[i] >= 1 && x[i] <= nlevels) map[x[i]] = 1;
  used.clear();
  for (int l = 1; l <= nlevels; ++l)
    if (map[l]) {
      used.push_back(l);
      map[l] = static_cast<int>(used.size());
    }
  for (std::size_t i = 0; i < n; ++i) codes[i] = x[i] >= 1 && x[i] <= nlevels ? map[x[i]] : 0;
}

struct PatternTable {
  std::vector<int> rows;             // kept observations (0-based)
  std::vector<int> idx;              // J x P, 0-based codes, -1 missing
  std::vector<double> counts;        // P
  std::vector<int> row_pattern;      // per kept row: its pattern (0-based, in cell order)
  std::size_t P = 0;
};

// codes: n x J column-major, 1-based, 0 missing; nlev: levels per variable.
// Keeps the observations with every response (drop_incomplete) or with at
// least one.
inline PatternTable count_patterns(const int* codes, std::size_t n, std::size_t J,
                                   const std::vector<int>& nlev, bool drop_incomplete) {
  PatternTable t;
  for (std::size_t i = 0; i < n; ++i) {
    std::size_t miss = 0;
    for (std::size_t j = 0; j < J; ++j) miss += codes[i + j * n] == 0;
    if (drop_incomplete ? miss == 0 : miss < J) t.rows.push_back(static_cast<int>(i));
  }
  // mixed-radix key (levels + 1 per variable) when it fits 64 bits, else bytes
  double space = 1.0;
  for (std::size_t j = 0; j < J; ++j) space *= static_cast<double>(nlev[j]) + 1.0;
  const bool numeric = space < 9.0e18;
  std::vector<int> first;  // first row of each pattern, first-seen order
  std::vector<int> pid(t.rows.size());
  std::vector<double> cnt;
  auto add = [&](auto& seen, const auto& key, std::size_t r) {
    auto it = seen.find(key);
    if (it == seen.end()) {
      const int p = static_cast<int>(first.size());
      seen.emplace(key, p);
      first.push_back(t.rows[r]);
      cnt.push_back(1.0);
      pid[r] = p;
    } else {
      pid[r] = it->second;
      cnt[it->second] += 1.0;
    }
  };
  if (numeric) {
    std::unordered_map<std::uint64_t, int> seen;
    seen.reserve(t.rows.size() * 2 + 1);
    for (std::size_t r = 0; r < t.rows.size(); ++r) {
      const std::size_t i = static_cast<std::size_t>(t.rows[r]);
      std::uint64_t key = 0, mult = 1;
      for (std::size_t j = 0; j < J; ++j) {
        key += mult * static_cast<std::uint64_t>(codes[i + j * n]);
        mult *= static_cast<std::uint64_t>(nlev[j]) + 1u;
      }
      add(seen, key, r);
    }
  } else {
    std::unordered_map<std::string, int> seen;
    std::string key(J * sizeof(int), '\0');
    for (std::size_t r = 0; r < t.rows.size(); ++r) {
      const std::size_t i = static_cast<std::size_t>(t.rows[r]);
      for (std::size_t j = 0; j < J; ++j) std::memcpy(&key[j * sizeof(int)], &codes[i + j * n], sizeof(int));
      add(seen, key, r);
    }
  }
  // cell order: by the first variable's code (missing first), stable
  const std::size_t P = first.size();
  std::vector<int> ord(P);
  for (std::size_t p = 0; p < P; ++p) ord[p] = static_cast<int>(p);
  std::stable_sort(ord.begin(), ord.end(), [&](int a, int b) { return codes[first[a]] < codes[first[b]]; });
  std::vector<int> inv(P);
  for (std::size_t p = 0; p < P; ++p) inv[ord[p]] = static_cast<int>(p);
  t.P = P;
  t.idx.resize(J * P);
  t.counts.resize(P);
  for (std::size_t p = 0; p < P; ++p) {
    const std::size_t i = static_cast<std::size_t>(first[ord[p]]);
    for (std::size_t j = 0; j < J; ++j) t.idx[p * J + j] = codes[i + j * n] - 1;
    t.counts[p] = cnt[ord[p]];
  }
  t.row_pattern.resize(t.rows.size());
  for (std::size_t r = 0; r < t.rows.size(); ++r) t.row_pattern[r] = inv[pid[r]];
  return t;
}

}  // namespace patterns
}  // namespace aspectr

#endif
