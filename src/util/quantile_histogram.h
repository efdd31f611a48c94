// QuantileHistogram: quantiles of a stream of non-negative samples (the
// serving runtimes' request latencies) in memory that does not grow with the
// number of samples.
//
// Samples are counted in log-linear buckets: every binade [2^e, 2^(e+1)) is
// cut into kSubBuckets = 1024 equal buckets (the top 10 bits of a double's
// mantissa), so a bucket spans 1/1024 of its binade's lower edge, at most
// 0.098% of any sample in it.
//
// Invariants and error bound:
//  * Count(), Min() and Max() are exact; so is the rank of every quantile:
//    Quantile(q) finds the bucket holding the sample of nearest rank
//    (the ceil(q n)-th smallest, the smallest for q = 0) exactly, and returns
//    the bucket's midpoint clamped to [Min(), Max()] (the smallest and the
//    largest sample themselves for the first and last rank). It is within
//    kRelativeError = 2^-11 (0.049%) of that sample, relative to the sample,
//    for samples >= 2^-1022 (every normal double); zero and subnormal
//    samples are off by at most 2^-1033 absolute.
//  * Quantile is non-decreasing in q; Quantile(0) == Min() and
//    Quantile(1) == Max().
//  * The result depends on the samples, not on the order they came in.
//  * Memory: one 8-byte counter per bucket from the smallest sample's to the
//    largest's (at most twice that while the range grows): 8 KiB per
//    doubling of the span, e.g. 80 KiB for samples from 1 ms to 1 s, however
//    many samples there are.
//
// Thread-safety: none; an object is used by one thread at a time.
#ifndef TESSERA_QUANTILE_HISTOGRAM_H_
#define TESSERA_QUANTILE_HISTOGRAM_H_

#include <bit>
#include <cstdint>
#include <limits>
#include <vector>

namespace tessera {

class QuantileHistogram {
 public:
  static constexpr int kSubBucketBits = 10;
  static constexpr int kSubBuckets = 1 << kSubBucketBits;
  // The bound on |Quantile(q) - sample of nearest rank| / sample (above).
  static constexpr double kRelativeError = 1.0 / (2 * kSubBuckets);

  // Counts `x`. REQUIRES: x >= 0 and finite.
  void Add(double x) {
    const std::uint64_t i = Index(x);
    if (i - first_ >= counts_.size()) Cover(i);  // below first_ wraps around
    ++counts_[i - first_];
    ++count_;
    if (x < min_) min_ = x;
    if (x > max_) max_ = x;
  }

  std::uint64_t Count() const { return count_; }
  // +infinity (Min) and 0 (Max) while empty.
  double Min() const { return min_; }
  double Max() const { return max_; }

  // The q-quantile by nearest rank, within kRelativeError of the exact one.
  // REQUIRES: Count() > 0, 0 <= q <= 1.
  double Quantile(double q) const;

 private:
  // The bucket of `x`: its bits above the kept mantissa bits, which for
  // non-negative doubles orders like the values.
  static std::uint64_t Index(double x) {
    return std::bit_cast<std::uint64_t>(x) >> (52 - kSubBucketBits);
  }
  // Grows counts_ to cover bucket `i`, by at least its present size, so that
  // a range growing one bucket at a time costs amortised O(1) per sample.
  void Cover(std::uint64_t i);

  std::vector<std::uint64_t> counts_;  // counts_[k]: bucket first_ + k
  std::uint64_t first_ = 0;
  std::uint64_t count_ = 0;
  double min_ = std::numeric_limits<double>::infinity();
  double max_ = 0;
};

}  // namespace tessera

#endif  // TESSERA_QUANTILE_HISTOGRAM_H_
