#include "tessera/planners/gslice_tuning.h"

#include <gtest/gtest.h>

#include <vector>

namespace tessera {
namespace {

// ---- Algorithm 1 ----------------------------------------------------------

TEST(GsliceAlgorithm1, HandCases) {
  const TuningOptions o;  // threshold 5%, max decrease 0.5, min share 0.05
  struct Case {
    const char* name;
    TuningInput in;  // current, SLO, arrivals, avgL, avgT
    TuningAction action;
    double new_share;
  } cases[] = {
      // diffL = 1/50 = 2%, diffT = 3/100 = 3%: both inside 5%.
      {"keep inside the threshold", {0.4, 50, 100, 49, 103}, TuningAction::kKeep, 0.4},
      // diffL = -2%, but diffT = 20%: outside; residualT > 0 and residualL < 0.
      // changeFactor = max(1/51, 20/120) = 1/6: 0.4 x 7/6.
      {"one residual negative increases",
       {0.4, 50, 100, 51, 120},
       TuningAction::kIncrease,
       0.4 * 7 / 6},
      // The paper's Fig. 16 VGG-19: 65 ms against 50, 15 req/s against 35.
      // changeFactor = max(15/65, 20/15) = 4/3: 0.3 x 7/3 = 0.7.
      {"fig. 16 vgg-19 increases", {0.3, 50, 35, 65, 15}, TuningAction::kIncrease, 0.7},
      // The same at 60%: 0.6 x 7/3 = 1.4, capped at the whole GPU.
      {"increase capped at 1", {0.6, 50, 35, 65, 15}, TuningAction::kIncrease, 1},
      // Both residuals positive: changeFactor = max(10/40, 25/125) = 0.25.
      {"decrease", {0.5, 50, 100, 40, 125}, TuningAction::kDecrease, 0.375},
      // changeFactor = 40/10 = 4 would ask for a negative GPU%: cut by 0.5.
      {"decrease capped by max_decrease", {0.3, 50, 100, 10, 110}, TuningAction::kDecrease, 0.15},
      {"decrease floored at min_share", {0.08, 50, 100, 10, 110}, TuningAction::kDecrease, 0.05},
      // A large latency headroom with a small throughput deficit: the paper's
      // rule increases by the larger magnitude, max(40/10, 10/90) = 4.
      {"deficit with headroom increases by the larger factor",
       {0.1, 50, 100, 10, 90},
       TuningAction::kIncrease,
       0.5},
  };
  for (const Case& c : cases) {
    const TuningDecision d = ComputeNewShare(c.in, o);
    EXPECT_EQ(d.action, c.action) << c.name;
    EXPECT_NEAR(d.new_share, c.new_share, 1e-12) << c.name;
  }
}

// ---- Max-min fair allocation --------------------------------------------

TEST(GsliceMaxMinFair, Allocations) {
  struct Case {
    const char* name;
    std::vector<double> demands;
    double capacity;
    bool spare;
    std::vector<double> expected;
  } cases[] = {
      {"under-subscribed: each gets its demand", {0.2, 0.3}, 1, false, {0.2, 0.3}},
      // 0.5 left, shared 2:3.
      {"under-subscribed, spare shared out", {0.2, 0.3}, 1, true, {0.4, 0.6}},
      // Equal split 1/3 fits 0.1; the other two share 0.9 as 6:7.
      {"over-subscribed", {0.1, 0.6, 0.7}, 1, false, {0.1, 0.9 * 6 / 13, 0.9 * 7 / 13}},
      {"over-subscribed, spare changes nothing",
       {0.1, 0.6, 0.7},
       1,
       true,
       {0.1, 0.9 * 6 / 13, 0.9 * 7 / 13}},
      // An equal split, 0.3 each, fits 0.05 and 0.25; the last gets the 0.6 left.
      {"smallest first, in rounds", {0.05, 0.25, 0.9}, 0.9, false, {0.05, 0.25, 0.6}},
      {"equal demands over capacity", {0.8, 0.8}, 1, false, {0.5, 0.5}},
      {"no demand, no share", {0, 0.5}, 1, true, {0, 1}},
  };
  for (const Case& c : cases) {
    const std::vector<double> got = MaxMinFairShares(c.demands, c.capacity, c.spare);
    ASSERT_EQ(got.size(), c.expected.size()) << c.name;
    for (size_t i = 0; i < got.size(); ++i) EXPECT_NEAR(got[i], c.expected[i], 1e-12) << c.name;
  }
}

}  // namespace
}  // namespace tessera
