// The pooled capacity rule (latency_rule.h, docs/capacity-rules.md): its
// utilisation bound, the usable rate, the batch-latency factor, the rate
// margin and the rule's text and validation.
#include "tessera/latency_rule.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <random>
#include <tuple>
#include <vector>

namespace tessera {
namespace {

LatencyRule Pooled() {
  LatencyRule rule;
  EXPECT_TRUE(rule.SetCapacity("pooled").ok());
  rule.router = Router::kShortestQueue;
  return rule;
}

// Values solved by hand (a fixed point of rho = z / (e^z - 1) by bisection
// in a separate script), at q = 0.995.
TEST(PooledUtilisationTest, MatchesHandComputedValues) {
  EXPECT_NEAR(PooledUtilisation(100, 1, 8, 0.995), 0.972329, 1e-5);
  EXPECT_NEAR(PooledUtilisation(1000, 1, 8, 0.995), 0.997339, 1e-5);
  EXPECT_NEAR(PooledUtilisation(10, 2, 1, 0.995), 0.882668, 1e-5);
  EXPECT_NEAR(PooledUtilisation(10, 2, 4, 0.995), 0.867420, 1e-5);
  EXPECT_NEAR(PooledUtilisation(1, 3, 1, 0.995), 0.533836, 1e-5);
}

TEST(PooledUtilisationTest, IsTheLargestRhoThatHoldsTheTail) {
  const double k = 40, th = 1.5, q = 0.995;
  const int b = 8;
  const double rho = PooledUtilisation(k, th, b, q);
  const double z = std::log(1 / (1 - q)) * rho / (k * (th - b * rho / k));
  EXPECT_NEAR(rho, z / std::expm1(z), 1e-9);
}

TEST(PooledUtilisationTest, MonotoneInInFlightAndWaitBudgetAndBoundedByOne) {
  for (int b : {1, 4, 32}) {
    double last = 0;
    for (double k : {1.0, 3.0, 10.0, 30.0, 100.0, 1000.0, 1e4}) {
      const double rho = PooledUtilisation(k, 1.2, b, 0.995);
      EXPECT_GE(rho, last) << "K " << k << " B " << b;
      EXPECT_GE(rho, 0);
      EXPECT_LT(rho, 1);
      last = rho;
    }
    last = 0;
    for (double th : {0.1, 0.5, 1.0, 2.0, 5.0, 20.0}) {
      const double rho = PooledUtilisation(50, th, b, 0.995);
      EXPECT_GE(rho, last) << "th " << th << " B " << b;
      EXPECT_LT(rho, 1);
      last = rho;
    }
  }
}

TEST(PooledUtilisationTest, TheGranularityBoundsItAndNoBudgetLeavesNothing) {
  // Batches start every B rho / K batch times: with half a batch time to
  // wait, K = 4 and B = 8, rho must stay below 0.25 (more processes than
  // the rate needs, so that one starts often enough).
  const double rho = PooledUtilisation(4, 0.5, 8, 0.995);
  EXPECT_GT(rho, 0);
  EXPECT_LT(rho, 0.25);
  EXPECT_EQ(PooledUtilisation(100, 0, 1, 0.995), 0);
}

TEST(PooledUtilisationTest, OneProcessIsCloseToThePerProcessRule) {
  // A pool whose rate one process carries: K = B rho. Per process, the
  // queueing rule's share at the same B, L and SLO.
  LatencyRule queueing;
  const int b = 8;
  const double latency = 40, slo = 200;
  const double per_process = queueing.UsableShare(b, latency, slo, 0);
  // The pooled share at the rate one process carries at that share.
  const double rate = per_process * b * 1000 / latency;
  const double pooled =
      PooledUtilisation(rate * latency / 1000, (slo - latency) / latency, b, 0.995);
  EXPECT_NEAR(pooled, per_process, 0.02);
}

// The tail condition of docs/capacity-rules.md at utilisation `rho`.
bool HoldsTheTail(double rho, double k, double th, int b, double q) {
  const double left = th - b * rho / k;
  const double z = std::log(1 / (1 - q)) / k * rho / left;
  return left > 0 && rho <= z / std::expm1(z);
}

// The bound as documented: 1 when 1 holds, else the largest multiple of
// 2^-40 that holds (0 when none does), by binary search on the multiples,
// which is what bisection on [0, 1] to 1e-12 finds.
double GridUtilisation(double k, double th, int b, double q) {
  if (HoldsTheTail(1, k, th, b, q)) return 1;
  int64_t lo = 0, hi = int64_t{1} << 40;  // lo holds (or is 0), hi does not
  while (hi - lo > 1) {
    const int64_t mid = lo + (hi - lo) / 2;
    (HoldsTheTail(std::ldexp(static_cast<double>(mid), -40), k, th, b, q) ? lo : hi) = mid;
  }
  return std::ldexp(static_cast<double>(lo), -40);
}

TEST(PooledUtilisationTest, IsExactlyTheBisectionsAnswer) {
  std::mt19937_64 rng(7);
  std::uniform_real_distribution<double> log_k(-2, 5), log_th(-3, 2);
  std::uniform_int_distribution<int> log2_b(0, 8);
  int checked = 0;
  for (int i = 0; i < 20000; ++i) {
    const double k = std::pow(10, log_k(rng)), th = std::pow(10, log_th(rng));
    const int b = 1 << log2_b(rng);
    for (const double q : {0.9, 0.99, 0.995, 0.999}) {
      ASSERT_EQ(PooledUtilisation(k, th, b, q), GridUtilisation(k, th, b, q))
          << "K " << k << " th " << th << " B " << b << " q " << q;
      ++checked;
    }
  }
  // Edges: no budget, a budget the granularity alone exhausts, and one so
  // large that the whole rate is usable.
  for (const auto& [k, th, b] : std::vector<std::tuple<double, double, int>>{
           {100, 0, 1}, {4, 0.5, 8}, {1e-3, 1, 256}, {1e6, 1e3, 1}, {1, 1e-9, 1}}) {
    EXPECT_EQ(PooledUtilisation(k, th, b, 0.995), GridUtilisation(k, th, b, 0.995))
        << "K " << k << " th " << th << " B " << b;
  }
  EXPECT_EQ(checked, 80000);
}

TEST(LatencyRuleTest, PooledShareGrowsWithTheServiceRate) {
  const LatencyRule rule = Pooled();
  const double small = rule.UsableShare(8, 40, 200, 100);
  const double large = rule.UsableShare(8, 40, 200, 10000);
  EXPECT_GT(large, small);
  EXPECT_GT(large, 0.95);
  // The per-process rule does not depend on the rate.
  LatencyRule queueing;
  EXPECT_EQ(queueing.UsableShare(8, 40, 200, 100), queueing.UsableShare(8, 40, 200, 10000));
}

TEST(LatencyRuleTest, PooledUsableRateIsCappedByBatchOverLatency) {
  const LatencyRule rule = Pooled();
  // 2 processes of batch 4 in 10 ms: at most 800 req/s, whatever the profile says.
  EXPECT_DOUBLE_EQ(rule.UsableRps(4, 2, 830, 10), 800);
  EXPECT_DOUBLE_EQ(rule.UsableRps(4, 2, 790, 10), 790);
  LatencyRule queueing;
  EXPECT_DOUBLE_EQ(queueing.UsableRps(4, 2, 830, 10), 830);
}

TEST(LatencyRuleTest, CountedRateIsUsableTimesShareOverTheMargin) {
  LatencyRule rule = Pooled();
  rule.rate_margin = 0.05;
  const double share = rule.UsableShare(4, 10, 60, 2000);
  EXPECT_DOUBLE_EQ(rule.CountedRps(4, 2, 830, 10, 60, 2000), 800 * share / 1.05);
  // The share is sized for the margin's rate: more than without a margin.
  LatencyRule plain = Pooled();
  EXPECT_GT(share, plain.UsableShare(4, 10, 60, 2000));
  EXPECT_DOUBLE_EQ(plain.UsableShare(4, 10, 60, 2100), share);
}

TEST(LatencyRuleTest, BatchLatencyFactorIsTheLognormalQuantile) {
  LatencyRule rule = Pooled();
  // cv 0.05: sigma^2 = ln(1.0025); z(0.995) = 2.5758.
  const double sigma = std::sqrt(std::log1p(0.0025));
  EXPECT_NEAR(rule.BatchLatencyFactor(), std::exp(2.5758293 * sigma - sigma * sigma / 2), 1e-6);
  rule.headroom_quantile = 0.99;
  EXPECT_NEAR(rule.BatchLatencyFactor(), 1.1218, 1e-4);
  EXPECT_EQ(LatencyRule().BatchLatencyFactor(), 1);
}

// A pool recovers from an excursion within 10 batch times: rho <= r / (1 +
// r), r = sqrt(10 K), so its spare capacity shrinks like 1 / sqrt(K), not
// like the waiting tail's 1 / K. It binds only for large pools.
TEST(LatencyRuleTest, PooledShareIsCappedByTheRecoveryBound) {
  EXPECT_NEAR(PooledRecoveryBound(712), 0.98829, 1e-5);
  EXPECT_NEAR(PooledRecoveryBound(10), 10.0 / 11, 1e-12);
  EXPECT_LT(PooledRecoveryBound(100), PooledRecoveryBound(1000));
  // A generated scenario's bert-large pool: 10,680 req/s in batches of 16 of
  // 66.7 ms under a 150 ms SLO. The tail alone allows 99.7%, which one
  // minute of Poisson traffic met at 58% to 100% of requests by the seed.
  const double in_flight = 10680 * 66.6761 / 1000;
  const double wait_budget = (150 - 66.6761 * Pooled().BatchLatencyFactor()) / 66.6761;
  EXPECT_GT(PooledUtilisation(in_flight, wait_budget, 16, 0.995), 0.996);
  EXPECT_EQ(Pooled().UsableShare(16, 66.6761, 150, 10680), PooledRecoveryBound(in_flight));
  // A small pool keeps the tail's answer.
  EXPECT_EQ(Pooled().UsableShare(8, 30, 100, 300),
            PooledUtilisation(300 * 30 / 1000.0, (100 - 30 * Pooled().BatchLatencyFactor()) / 30, 8,
                              0.995));
}

TEST(LatencyRuleTest, PooledRuleCountsTheBatchQuantileInTheSloNotTheBatchBudget) {
  // The batch budget bounds the profiled latency, as under every rule: 49 ms
  // fits half of 100 ms though 49 x 1.136 does not.
  EXPECT_TRUE(Pooled().Allows(49, 1, 100));
  EXPECT_FALSE(Pooled().Allows(50, 1, 100));
  EXPECT_EQ(Pooled().Allows(49, 1, 100), LatencyRule().Allows(49, 1, 100));
  // The waiting budget is what the SLO leaves after the batch's quantile.
  const double factor = Pooled().BatchLatencyFactor();
  EXPECT_EQ(Pooled().UsableShare(8, 49, 100, 2000),
            PooledUtilisation(2000 * 49 / 1000.0, (100 - 49 * factor) / 49, 8, 0.995));
  // A batch whose quantile alone takes the SLO counts for nothing.
  EXPECT_EQ(Pooled().UsableShare(8, 49, 49 * factor, 2000), 0);
}

TEST(LatencyRuleTest, BatchLatencyFactorFollowsEachRuleAskedInTurn) {
  // The factor is remembered between calls: rules asked in turn must each
  // still get their own, the closed form exp(z sigma - sigma^2 / 2).
  const auto closed_form = [](double cv, double z) {
    const double sigma = std::sqrt(std::log1p(cv * cv));
    return std::exp(z * sigma - sigma * sigma / 2);
  };
  LatencyRule wide = Pooled();
  wide.batch_cv = 0.2;
  LatencyRule loose = Pooled();
  loose.headroom_quantile = 0.99;
  for (int round = 0; round < 2; ++round) {
    EXPECT_NEAR(Pooled().BatchLatencyFactor(), closed_form(0.05, 2.5758293), 1e-6);
    EXPECT_NEAR(wide.BatchLatencyFactor(), closed_form(0.2, 2.5758293), 1e-6);
    EXPECT_NEAR(loose.BatchLatencyFactor(), closed_form(0.05, 2.3263479), 1e-6);
    EXPECT_EQ(LatencyRule().BatchLatencyFactor(), 1);
  }
}

TEST(LatencyRuleTest, PooledTextRoundTripsAndValidates) {
  LatencyRule rule;
  ASSERT_TRUE(rule.SetCapacity("pooled:0.1").ok());
  EXPECT_TRUE(rule.pooled);
  EXPECT_DOUBLE_EQ(rule.batch_cv, 0.1);
  EXPECT_EQ(rule.CapacityName(), "pooled:0.1");
  ASSERT_TRUE(rule.SetCapacity("pooled").ok());
  EXPECT_EQ(rule.CapacityName(), "pooled");
  EXPECT_FALSE(rule.SetCapacity("pooled:0.9").ok());
  EXPECT_FALSE(rule.SetCapacity("pooled:x").ok());
  // Pooling needs the router that pools.
  rule.router = Router::kWeighted;
  EXPECT_FALSE(rule.Validate().ok());
  rule.router = Router::kShortestQueue;
  EXPECT_TRUE(rule.Validate().ok());
  rule.rate_margin = 1.5;
  EXPECT_FALSE(rule.Validate().ok());
  rule.rate_margin = 0.1;
  EXPECT_TRUE(rule.Validate().ok());
  ASSERT_TRUE(rule.SetCapacity("queueing").ok());
  EXPECT_FALSE(rule.pooled);
}

}  // namespace
}  // namespace tessera
