#include "util/quantile_histogram.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>
#include <random>
#include <string>
#include <vector>

namespace tessera {
namespace {

// The q-quantile of `sorted` (ascending) by nearest rank: the ceil(q n)-th
// smallest, the smallest for q = 0.
double ExactQuantile(const std::vector<double>& sorted, double q) {
  const size_t n = sorted.size();
  const size_t rank = std::min(n - 1, static_cast<size_t>(std::ceil(q * n)) - (q > 0 ? 1 : 0));
  return sorted[rank];
}

constexpr double kQuantiles[] = {0,   1e-4, 0.01, 0.1,   0.25,   0.5, 0.75,
                                 0.9, 0.95, 0.99, 0.999, 0.9999, 1};

// Checks `h`, fed `samples`, against sorting them: exact count, min and max,
// every quantile within the documented relative error, non-decreasing in q.
void ExpectMatchesSorting(const QuantileHistogram& h, std::vector<double> samples,
                          const std::string& what) {
  std::sort(samples.begin(), samples.end());
  ASSERT_EQ(h.Count(), samples.size()) << what;
  EXPECT_EQ(h.Min(), samples.front()) << what;
  EXPECT_EQ(h.Max(), samples.back()) << what;
  double previous = 0;
  for (const double q : kQuantiles) {
    const double exact = ExactQuantile(samples, q);
    const double got = h.Quantile(q);
    EXPECT_LE(std::abs(got - exact), QuantileHistogram::kRelativeError * exact)
        << what << " q " << q << ": " << got << " against " << exact;
    EXPECT_GE(got, previous) << what << " q " << q;
    previous = got;
  }
}

struct Distribution {
  std::string name;
  std::function<double(std::mt19937_64&)> draw;
};

std::vector<Distribution> Distributions() {
  return {
      {"uniform", [](std::mt19937_64& g) { return std::uniform_real_distribution(5.0, 7.0)(g); }},
      {"exponential",
       [](std::mt19937_64& g) { return std::exponential_distribution(1 / 40.0)(g); }},
      {"lognormal heavy tail",
       [](std::mt19937_64& g) { return std::lognormal_distribution(3.0, 2.0)(g); }},
      {"bimodal",
       [](std::mt19937_64& g) {
         return std::bernoulli_distribution(0.97)(g) ? std::normal_distribution(20.0, 1.0)(g)
                                                     : 900 + std::exponential_distribution(0.1)(g);
       }},
      // Many ties: whole milliseconds.
      {"integers",
       [](std::mt19937_64& g) {
         return static_cast<double>(std::uniform_int_distribution(1, 50)(g));
       }},
      // Twenty binades either side of 1.
      {"wide",
       [](std::mt19937_64& g) {
         return std::exp2(std::uniform_real_distribution(-20.0, 20.0)(g));
       }},
  };
}

TEST(QuantileHistogram, QuantilesAreWithinTheBoundOfSorting) {
  for (const Distribution& d : Distributions()) {
    for (const std::uint64_t seed : {1, 2, 3, 17, 4242}) {
      for (const size_t n : {1, 2, 3, 10, 101, 5000, 200000}) {
        std::mt19937_64 rng(seed);
        std::vector<double> samples(n);
        QuantileHistogram h;
        for (double& x : samples) h.Add(x = d.draw(rng));
        ExpectMatchesSorting(h, samples,
                             d.name + " seed " + std::to_string(seed) + " n " + std::to_string(n));
      }
    }
  }
}

// The answer depends on the samples, not on their order, and the range may
// grow downwards as well as upwards.
TEST(QuantileHistogram, OrderDoesNotMatter) {
  std::mt19937_64 rng(9);
  std::vector<double> samples(20000);
  for (double& x : samples) x = std::lognormal_distribution(0.0, 3.0)(rng);
  QuantileHistogram ascending, descending, shuffled;
  std::vector<double> sorted = samples;
  std::sort(sorted.begin(), sorted.end());
  for (const double x : sorted) ascending.Add(x);
  for (auto it = sorted.rbegin(); it != sorted.rend(); ++it) descending.Add(*it);
  for (const double x : samples) shuffled.Add(x);
  for (const double q : kQuantiles) {
    EXPECT_EQ(ascending.Quantile(q), shuffled.Quantile(q)) << q;
    EXPECT_EQ(descending.Quantile(q), shuffled.Quantile(q)) << q;
  }
  ExpectMatchesSorting(shuffled, samples, "lognormal(0, 3)");
}

// The buckets are 1/1024 of a binade wide: samples 0.2% apart are told
// apart, and the median of two clusters 0.2% apart lands in the right one.
TEST(QuantileHistogram, ResolvesSamplesAFewTenthsOfAPerMilleApart) {
  QuantileHistogram h;
  for (int k = 0; k < 60; ++k) h.Add(100.0);
  for (int k = 0; k < 40; ++k) h.Add(100.2);
  h.Add(50);
  h.Add(150);
  EXPECT_NEAR(h.Quantile(0.5), 100.0, 100.0 * QuantileHistogram::kRelativeError);
  EXPECT_NEAR(h.Quantile(0.9), 100.2, 100.2 * QuantileHistogram::kRelativeError);
  EXPECT_LT(h.Quantile(0.5), h.Quantile(0.9));
  EXPECT_EQ(h.Quantile(0), 50);
  EXPECT_EQ(h.Quantile(1), 150);
}

TEST(QuantileHistogram, ExtremesOfTheDoubleRange) {
  QuantileHistogram zeros;
  for (int k = 0; k < 5; ++k) zeros.Add(0);
  EXPECT_EQ(zeros.Quantile(0.5), 0);
  EXPECT_EQ(zeros.Quantile(1), 0);

  QuantileHistogram wide;
  const double big = std::numeric_limits<double>::max();
  std::vector<double> samples = {0, 1e-300, 1e-3, 1, 1e3, 1e300, big, big, 7};
  for (const double x : samples) wide.Add(x);
  ExpectMatchesSorting(wide, samples, "from 0 to the largest double");
}

}  // namespace
}  // namespace tessera
