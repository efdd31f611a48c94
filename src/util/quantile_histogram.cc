// QuantileHistogram (quantile_histogram.h): bucket growth and the quantile walk.
#include "util/quantile_histogram.h"

#include <algorithm>
#include <cmath>

namespace tessera {
namespace {

constexpr int kDroppedBits = 52 - QuantileHistogram::kSubBucketBits;

// The bucket of the largest finite double: the last one a sample can reach.
constexpr std::uint64_t kLastIndex =
    std::bit_cast<std::uint64_t>(std::numeric_limits<double>::max()) >> kDroppedBits;

// The middle of bucket `b`, the doubles whose bits start with b's. For the
// last bucket its upper edge is +infinity, and so is the middle (the caller
// clamps it to the largest sample).
double Midpoint(std::uint64_t b) {
  const double lo = std::bit_cast<double>(b << kDroppedBits);
  const double hi = std::bit_cast<double>((b + 1) << kDroppedBits);
  return lo + (hi - lo) / 2;
}

}  // namespace

void QuantileHistogram::Cover(std::uint64_t i) {
  if (counts_.empty()) {
    first_ = i;
    counts_.assign(1, 0);
    return;
  }
  const std::uint64_t size = counts_.size();
  if (i >= first_) {
    const std::uint64_t last = std::min(kLastIndex, std::max(i, first_ + 2 * size - 1));
    counts_.resize(last - first_ + 1, 0);
  } else {
    const std::uint64_t grow = std::min(first_, std::max(first_ - i, size));
    counts_.insert(counts_.begin(), grow, 0);
    first_ -= grow;
  }
}

double QuantileHistogram::Quantile(double q) const {
  const std::uint64_t n = count_;
  const std::uint64_t rank =
      std::min(n - 1, static_cast<std::uint64_t>(std::ceil(q * n)) - (q > 0 ? 1 : 0));
  if (rank == 0) return min_;
  if (rank == n - 1) return max_;
  std::uint64_t seen = 0;
  size_t k = 0;
  while ((seen += counts_[k]) <= rank) ++k;
  return std::clamp(Midpoint(first_ + k), min_, max_);
}

}  // namespace tessera
