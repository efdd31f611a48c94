#include "tessera/plan/metrics.h"

#include <gtest/gtest.h>

#include <climits>
#include <cmath>

#include "tessera/plan/plan.h"
#include "tiny_problem.h"

namespace tessera {
namespace {

using testing::A100;
using testing::TinyProblem;

TEST(Metrics, SlackAndFragmentationFollowTheirDefinitions) {
  // GPU 0: s0 on 3g@4 (300) + 2g@0 (220); GPU 1: s1 on 1g@0 (100).
  // Rates 400 and 50: capacities 520 and 100, gpcs 5 and 1.
  // internal slack = 1 - (400/520 * 5 + 50/100 * 1) / 6 = 0.27564...
  // external fragmentation = 1 - 6 / (2 * 7) = 0.571428...
  Problem p = TinyProblem({400, 50});
  const auto& s0 = p.services()[0].feasible;
  const auto& s1 = p.services()[1].feasible;
  PlanResult r;
  r.gpus = MigGpus{{{0, s0[2], 4}, {0, s0[1], 0}}, {{1, s1[0], 0}}};
  Deployment d = BuildDeployment(p, r, "hand", {1, "fractional"}, 0.5);
  EXPECT_EQ(d.metrics.gpus, 2);
  EXPECT_EQ(d.metrics.gpcs, 6);
  EXPECT_NEAR(d.metrics.internal_slack, 1 - (400.0 / 520 * 5 + 0.5) / 6, 1e-12);
  EXPECT_NEAR(d.metrics.external_fragmentation, 1 - 6.0 / 14, 1e-12);
  EXPECT_DOUBLE_EQ(d.metrics.gap, 1.0);          // 2 GPUs against a bound of 1
  EXPECT_EQ(d.gpus[0].instances()[0].start, 0);  // sorted by start
}

TEST(LowerBounds, IntegerCoverBeatsFractionalWhenSegmentsAreCoarse) {
  // Seven services of 101 req/s. Fractional: 7 * 101 / 114.3 = 6.19 slices
  // -> 1 GPU. Integer cover: a 1g gives only 100, so each needs 2 slices
  // (a 2g at 220): 14 slices -> 2 GPUs.
  Problem p = TinyProblem(std::vector<double>(7, 101));
  EXPECT_EQ(FractionalBound(p).gpus, 1);
  EXPECT_EQ(IntegerCoverBound(p).gpus, 2);
  LowerBound best = StrongestBound(p);
  EXPECT_EQ(best.gpus, 2);
  EXPECT_EQ(best.kind, "integer-cover");
}

TEST(LowerBounds, MigServingCountsComputeAloneAndNeverBeatsFractional) {
  // 30 services of 101 req/s, 3,030 req/s in all, at the 7g's 114.3 req/s
  // per compute slice: 26.5 slices of 7 -> 4 GPUs (memory, at the 2g's 110
  // req/s per memory slice: 27.5 of 8, also 4).
  Problem p = TinyProblem(std::vector<double>(30, 101));
  EXPECT_EQ(MigServingBound(p).gpus, 4);
  EXPECT_EQ(MigServingBound(p).kind, "migserving");
  std::vector<std::string> kinds;
  for (const LowerBound& b : AllBounds(p)) {
    kinds.push_back(b.kind);
    EXPECT_LE(b.gpus, StrongestBound(p).gpus) << b.kind;
  }
  EXPECT_EQ(kinds, (std::vector<std::string>{"migserving", "fractional", "integer-cover"}));
  EXPECT_LE(MigServingBound(p).gpus, FractionalBound(p).gpus);
}

TEST(LowerBounds, CoverIsExactForOneService) {
  // 400 req/s: 2g + 2g (440) or 3g + 1g (400) = 4 slices; 3 slices give 320.
  // 4 slices of 7 -> 1 GPU; with 8 such services 32 slices -> 5 GPUs.
  EXPECT_EQ(IntegerCoverBound(TinyProblem({400})).gpus, 1);
  EXPECT_EQ(IntegerCoverBound(TinyProblem(std::vector<double>(8, 400))).gpus, 5);
}

TEST(LowerBounds, InfeasibleServicesAddNothing) {
  // SLO 10 ms: budget 5 ms, nothing is fast enough.
  Problem p = TinyProblem({400}, 10);
  EXPECT_TRUE(p.services()[0].feasible.empty());
  EXPECT_EQ(StrongestBound(p).gpus, 0);
}

// Issue 17, class 4: rate / best throughput per slice was cast to int from
// any double (a rate of 1e308 aborted allocating the DP array). Beyond the DP
// the fractional bound stands in, capped, never cast out of range.
TEST(LowerBounds, MinCoveringSlicesStaysDefinedForAnyInput) {
  EXPECT_EQ(MinCoveringSlices({{1, 100}, {7, 800}}, 1000), 9);  // 7 + 1 + 1 slices
  EXPECT_EQ(MinCoveringSlices({{1, 1}}, 1e9), 1'000'000'000);   // the fractional bound
  EXPECT_EQ(MinCoveringSlices({{1, 1}}, 1e308), INT_MAX / 2);
  EXPECT_EQ(MinCoveringSlices({{1, 1e-300}}, 1e7), INT_MAX / 2);
  EXPECT_EQ(MinCoveringSlices({{1, std::nan("")}}, 10), INT_MAX / 2);
}

}  // namespace
}  // namespace tessera
