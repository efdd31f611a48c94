#include "planners/exact/service_covers.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <string>
#include <vector>

#include "tiny_problem.h"

namespace tessera {
namespace {

using testing::A100;
using testing::TinyProblem;
using testing::TinyScenario;
using testing::TinyTable;

using Counts = std::vector<int>;

// Counts per resource of `set` from (profile name, count) pairs.
Counts CountsOf(const CoverSet& set, const std::map<std::string, int>& by_profile) {
  Counts counts(set.resources.size(), 0);
  for (const auto& [name, n] : by_profile) {
    const int profile = A100().ProfileIndex(name);
    for (size_t r = 0; r < set.resources.size(); ++r) {
      if (set.resources[r].profile == profile) counts[r] = n;
    }
  }
  return counts;
}

double Capacity(const ServiceClass& c, const Counts& counts) {
  double capacity = 0;
  for (size_t r = 0; r < counts.size(); ++r) {
    if (counts[r] > 0) capacity += counts[r] * c.best[r]->capacity_rps;
  }
  return capacity;
}

// Covers the rate, and dropping any one segment does not.
bool IsMinimalCover(const ServiceClass& c, const Counts& counts) {
  const double capacity = Capacity(c, counts);
  if (!CoversRate(capacity, c.rate_rps)) return false;
  for (size_t r = 0; r < counts.size(); ++r) {
    if (counts[r] > 0 && CoversRate(capacity - c.best[r]->capacity_rps, c.rate_rps)) {
      return false;
    }
  }
  return true;
}

// Every minimal cover, by trying every count vector up to the most segments
// of each resource a minimal cover can hold (ceil(rate / throughput)).
std::vector<Counts> MinimalCoversByGrid(const ServiceClass& c) {
  std::vector<int> most(c.best.size(), 0);
  for (size_t r = 0; r < c.best.size(); ++r) {
    if (c.best[r]) most[r] = static_cast<int>(std::ceil(c.rate_rps / c.best[r]->capacity_rps));
  }
  std::vector<Counts> covers;
  Counts counts(c.best.size(), 0);
  while (true) {
    if (IsMinimalCover(c, counts)) covers.push_back(counts);
    size_t r = 0;  // odometer increment
    while (r < counts.size() && counts[r] == most[r]) counts[r++] = 0;
    if (r == counts.size()) break;
    ++counts[r];
  }
  std::sort(covers.begin(), covers.end());
  return covers;
}

std::vector<Counts> Sorted(std::vector<Counts> covers) {
  std::sort(covers.begin(), covers.end());
  return covers;
}

TEST(ServiceCovers, ResourcesAreTheProfilesSomeServiceCanUseSorted) {
  const CoverSet set = BuildCoverSet(TinyProblem({250}), {.per_class = 20000});
  const std::vector<Resource> expected = {{0, A100().ProfileIndex("1g.10gb")},
                                          {0, A100().ProfileIndex("2g.20gb")},
                                          {0, A100().ProfileIndex("3g.40gb")},
                                          {0, A100().ProfileIndex("7g.80gb")}};
  EXPECT_EQ(set.resources, expected);
}

TEST(ServiceCovers, CoversOf250RequestsAreTheFiveCountedByHand) {
  // Throughputs 1g 100, 2g 220, 3g 300, 7g 800. Minimal covers of 250 req/s:
  //   7g (800); 3g (300); 2g + 2g (440, one 2g is 220); 2g + 1g (320: 220
  //   alone and 100 alone fall short); 1g x 3 (300, two give 200).
  // Any cover with a 3g or a 7g and something else is not minimal.
  const CoverSet set = BuildCoverSet(TinyProblem({250}), {.per_class = 20000});
  ASSERT_EQ(set.classes.size(), 1u);
  const std::vector<Counts> expected = Sorted({
      CountsOf(set, {{"7g.80gb", 1}}),
      CountsOf(set, {{"3g.40gb", 1}}),
      CountsOf(set, {{"2g.20gb", 2}}),
      CountsOf(set, {{"2g.20gb", 1}, {"1g.10gb", 1}}),
      CountsOf(set, {{"1g.10gb", 3}}),
  });
  EXPECT_EQ(Sorted(set.classes[0].covers), expected);
}

TEST(ServiceCovers, EveryCoverIsMinimalAndEveryMinimalCoverIsListed) {
  // Rates on and off the segment throughputs' multiples.
  for (double rate : {1.0, 100.0, 219.0, 220.0, 440.5, 800.0, 1234.0, 2500.0}) {
    const CoverSet set = BuildCoverSet(TinyProblem({rate}), {.per_class = 20000});
    ASSERT_EQ(set.classes.size(), 1u) << rate;
    const ServiceClass& c = set.classes[0];
    ASSERT_FALSE(c.covers.empty()) << rate;
    for (const Counts& cover : c.covers) {
      EXPECT_TRUE(IsMinimalCover(c, cover)) << "rate " << rate;
    }
    EXPECT_EQ(Sorted(c.covers), MinimalCoversByGrid(c)) << "rate " << rate;
  }
}

TEST(ServiceCovers, IdenticalServicesFormOneClassWithMultiplicity) {
  const CoverSet set = BuildCoverSet(TinyProblem({250, 400, 250, 250}), {.per_class = 20000});
  ASSERT_EQ(set.classes.size(), 2u);
  EXPECT_EQ(set.classes[0].services, (std::vector<int>{0, 2, 3}));
  EXPECT_EQ(set.classes[0].rate_rps, 250);
  EXPECT_EQ(set.classes[0].covers.size(), 5u);
  EXPECT_EQ(set.classes[1].services, (std::vector<int>{1}));
  EXPECT_EQ(set.classes[1].rate_rps, 400);
}

TEST(ServiceCovers, SameRateButDifferentTripletsAreDifferentClasses) {
  // SLO 30 ms: budget 15 ms excludes the 7g (40 ms), so s1 has no 7g covers.
  Scenario s = TinyScenario({250, 250});
  s.services[1].slo_ms = 30;
  const Problem problem = *Problem::Build(s, A100(), TinyTable(), testing::BareRule());
  const CoverSet set = BuildCoverSet(problem, {.per_class = 20000});
  ASSERT_EQ(set.classes.size(), 2u);
  EXPECT_EQ(set.classes[1].services, (std::vector<int>{1}));
  const Counts seven = CountsOf(set, {{"7g.80gb", 1}});
  const auto r7 = std::find(seven.begin(), seven.end(), 1) - seven.begin();
  EXPECT_TRUE(set.classes[0].best[r7].has_value());
  EXPECT_FALSE(set.classes[1].best[r7].has_value());
  EXPECT_EQ(set.classes[1].covers.size(), 4u);  // the five by hand, less the 7g
}

TEST(ServiceCovers, ServiceWithNoFeasibleTripletIsInNoClass) {
  // SLO 10 ms: budget 5 ms, below every latency of the table (8 to 40 ms).
  Scenario s = TinyScenario({250, 300, 250});
  s.services[1].slo_ms = 10;
  const Problem problem = *Problem::Build(s, A100(), TinyTable(), testing::BareRule());
  ASSERT_TRUE(problem.services()[1].feasible.empty());
  const CoverSet set = BuildCoverSet(problem, {.per_class = 20000});
  ASSERT_EQ(set.classes.size(), 1u);
  EXPECT_EQ(set.classes[0].services, (std::vector<int>{0, 2}));

  const CoverSet none = BuildCoverSet(TinyProblem({250}, /*slo_ms=*/10), {.per_class = 20000});
  EXPECT_TRUE(none.classes.empty());
  EXPECT_TRUE(none.resources.empty());
}

TEST(ServiceCovers, BestTripletHasTheMostThroughputThenTheSmallerBatch) {
  // 1g: batch 4 gives 150 req/s at 30 ms, more than batch 1's 100 at 10 ms.
  // 2g: batch 2 ties batch 1 at 220 req/s; the smaller batch wins.
  ProfileTable table = TinyTable();
  ASSERT_TRUE(table.Add({{"m", "a100-80gb", "1g.10gb", 4, 1}, 150, 30, {}, {}}).ok());
  ASSERT_TRUE(table.Add({{"m", "a100-80gb", "2g.20gb", 2, 1}, 220, 12, {}, {}}).ok());
  Scenario s = TinyScenario({250, 250});
  s.services[1].slo_ms = 40;  // budget 20 ms: the 1g batch 4 is too slow
  const Problem problem = *Problem::Build(s, A100(), table, testing::BareRule());
  const CoverSet set = BuildCoverSet(problem, {.per_class = 20000});
  ASSERT_EQ(set.classes.size(), 2u);
  const auto r1 = std::find(set.resources.begin(), set.resources.end(),
                            Resource{0, A100().ProfileIndex("1g.10gb")}) -
                  set.resources.begin();
  const auto r2 = r1 + 1;  // 2g.20gb sorts right after 1g.10gb among used profiles
  ASSERT_EQ(set.resources[r2].profile, A100().ProfileIndex("2g.20gb"));
  EXPECT_EQ(set.classes[0].best[r1]->throughput_rps, 150);
  EXPECT_EQ(set.classes[0].best[r1]->batch, 4);
  EXPECT_EQ(set.classes[1].best[r1]->throughput_rps, 100);
  EXPECT_EQ(set.classes[0].best[r2]->batch, 1);
}

TEST(ServiceCovers, MaxCoversLimitLeavesCoversEmpty) {
  // 250 req/s: the search generates exactly its five minimal covers as
  // candidates (7g | 3g | 2g 2g | 2g 1g | 1g 1g 1g), so a limit of 5 keeps
  // them and a limit of 4 gives up, leaving the class with its service.
  EXPECT_EQ(BuildCoverSet(TinyProblem({250}), {.per_class = 5}).classes[0].covers.size(), 5u);
  const CoverSet limited = BuildCoverSet(TinyProblem({250, 5000}), {.per_class = 4});
  ASSERT_EQ(limited.classes.size(), 2u);
  EXPECT_EQ(limited.classes[0].services, (std::vector<int>{0}));
  EXPECT_TRUE(limited.classes[0].covers.empty());
  EXPECT_EQ(limited.classes[1].services, (std::vector<int>{1}));
  EXPECT_TRUE(limited.classes[1].covers.empty());
  EXPECT_GT(BuildCoverSet(TinyProblem({5000}), {.per_class = 20000}).classes[0].covers.size(), 4u);
}

TEST(ServiceCovers, SegmentCountAndComputeSlices) {
  const Problem problem = TinyProblem({250});
  const CoverSet set = BuildCoverSet(problem, {.per_class = 20000});
  EXPECT_EQ(SegmentCount({}), 0);
  EXPECT_EQ(SegmentCount({1, 2, 0, 3}), 6);
  // 1g + 2g + 3g + 7g = 1 + 2 + 3 + 7 compute slices.
  EXPECT_EQ(ComputeSlices(problem, set, {1, 1, 1, 1}), 13);
  // Three 1g and two 3g: 3 + 6.
  EXPECT_EQ(ComputeSlices(problem, set, CountsOf(set, {{"1g.10gb", 3}, {"3g.40gb", 2}})), 9);
  EXPECT_EQ(ComputeSlices(problem, set, {0, 0, 0, 0}), 0);
}

}  // namespace
}  // namespace tessera
