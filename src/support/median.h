// Median and percentiles of timing samples: the one definition every latency summary uses
// (tessera run/bench, --profile, measured costs, refit errors).
//
// percentile(sorted, q) interpolates linearly between the closest ranks (NumPy's default), so
// percentile(s, 0.5) is the middle sample of an odd count and the mean of the two middle samples
// of an even count: median({1, 3, 2, 10}) = 2.5. lower_median takes the lower of the two middle
// samples instead, always a sample itself: of two rounds, one disturbed, the undisturbed one.
// Header-only; samples are at most thousands.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <vector>

namespace tessera {

// `sorted` ascending and non-empty; q in [0, 1].
inline double percentile(const std::vector<double>& sorted, double q) {
  const double pos = q * static_cast<double>(sorted.size() - 1);
  const auto lo = static_cast<size_t>(std::floor(pos));
  const size_t hi = std::min(lo + 1, sorted.size() - 1);
  return sorted[lo] + (sorted[hi] - sorted[lo]) * (pos - static_cast<double>(lo));
}

// The median of any samples; 0 for none.
inline double median(std::vector<double> samples) {
  if (samples.empty()) return 0.0;
  std::sort(samples.begin(), samples.end());
  return percentile(samples, 0.5);
}

// The middle sample of an odd count, the lower of the two middle ones of an even count; 0 for none.
inline double lower_median(std::vector<double> samples) {
  if (samples.empty()) return 0.0;
  const auto middle = samples.begin() + static_cast<std::ptrdiff_t>((samples.size() - 1) / 2);
  std::nth_element(samples.begin(), middle, samples.end());
  return *middle;
}

}  // namespace tessera
