// What both serving runtimes (simulator.cc, gslice_runtime.cc) share: seeds of
// independent random streams (their latency quantiles: quantile_histogram.h).
#ifndef TESSERA_SERVE_SAMPLING_H_
#define TESSERA_SERVE_SAMPLING_H_

#include <cstdint>

namespace tessera {

// A well-mixed seed for stream `stream` of a run seeded `seed` (SplitMix64),
// so that, e.g., every service draws independent arrivals.
inline std::uint64_t StreamSeed(std::uint64_t seed, std::uint64_t stream) {
  std::uint64_t z = seed + 0x9e3779b97f4a7c15ULL * (stream + 1);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

}  // namespace tessera

#endif  // TESSERA_SERVE_SAMPLING_H_
