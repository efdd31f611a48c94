// Small pieces both serving runtimes (simulator.cc, gslice_runtime.cc) share: seeds
// of independent random streams and tail quantiles of latency samples.
#ifndef TESSERA_SERVE_SAMPLING_H_
#define TESSERA_SERVE_SAMPLING_H_

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <vector>

namespace tessera {

// A well-mixed seed for stream `stream` of a run seeded `seed` (SplitMix64),
// so that, e.g., every service draws independent arrivals.
inline std::uint64_t StreamSeed(std::uint64_t seed, std::uint64_t stream) {
  std::uint64_t z = seed + 0x9e3779b97f4a7c15ULL * (stream + 1);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

// The q-quantile of `values` by nearest rank; reorders them.
// REQUIRES: !values.empty(), 0 <= q <= 1.
inline double NearestRankQuantile(std::vector<float>& values, double q) {
  const size_t n = values.size();
  const size_t rank = std::min(n - 1, static_cast<size_t>(std::ceil(q * n)) - (q > 0 ? 1 : 0));
  std::nth_element(values.begin(), values.begin() + rank, values.end());
  return values[rank];
}

}  // namespace tessera

#endif  // TESSERA_SERVE_SAMPLING_H_
