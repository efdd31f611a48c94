// Draws from std::mt19937_64 computed here rather than by <random>'s
// distributions, whose algorithms differ between standard libraries: a seed
// then gives the same traces and workloads everywhere. Internal to the
// library.
#ifndef TESSERA_UTIL_RANDOM_DRAWS_H_
#define TESSERA_UTIL_RANDOM_DRAWS_H_

#include <cmath>
#include <cstddef>
#include <numbers>
#include <random>

namespace tessera {

// Uniform on [0, 1) from the top 53 bits of one draw.
inline double Uniform(std::mt19937_64& rng) { return static_cast<double>(rng() >> 11) * 0x1.0p-53; }

// An index in [0, n) from one draw, by remainder (its bias is below n / 2^64).
// REQUIRES: n > 0.
inline size_t UniformIndex(std::mt19937_64& rng, size_t n) {
  return static_cast<size_t>(rng() % n);
}

// Box-Muller, one of the pair per call, so each call takes exactly two draws
// and a caller's stream stays aligned. 1 - U is in (0, 1].
inline double StandardNormal(std::mt19937_64& rng) {
  const double radius = std::sqrt(-2 * std::log(1 - Uniform(rng)));
  return radius * std::cos(2 * std::numbers::pi * Uniform(rng));
}

}  // namespace tessera

#endif  // TESSERA_UTIL_RANDOM_DRAWS_H_
