// Tests of Problem::Build and Problem::BuildPool (problem.h): the triplets of
// a mixed pool carry the GPU model they run on, a one-model pool is what
// Build makes, and bad pools are rejected.
#include "tessera/problem.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "tessera/gpu_catalog.h"
#include "tessera/profile/profile_synth.h"
#include "tessera/profile_table.h"
#include "tessera/scenario.h"

namespace tessera {
namespace {

const GpuModel& Gpu(const std::string& name) { return **FindGpu(name); }

// The embedded profiles of A100-80GB and H100-80GB in one table.
ProfileTable A100AndH100Profiles() {
  ProfileTable table = DefaultProfiles(Gpu("a100-80gb"));
  Status merged = table.Merge(DefaultProfiles(Gpu("h100-80gb")));
  EXPECT_TRUE(merged.ok()) << merged.ToString();
  return table;
}

// Two services with SLOs loose enough for many triplets on both models.
Scenario TwoServices() {
  Scenario s;
  s.name = "two";
  s.services = {{"web", "resnet50", 900, 400, 0}, {"qa", "bert-large", 40, 3000, 0}};
  return s;
}

// Field-by-field equality; `pool` is compared separately where it differs.
void ExpectSameTriplet(const Triplet& got, const Triplet& want, const std::string& where) {
  EXPECT_EQ(got.profile, want.profile) << where;
  EXPECT_EQ(got.batch, want.batch) << where;
  EXPECT_EQ(got.procs, want.procs) << where;
  EXPECT_DOUBLE_EQ(got.throughput_rps, want.throughput_rps) << where;
  EXPECT_DOUBLE_EQ(got.latency_ms, want.latency_ms) << where;
}

TEST(ProblemPool, TripletsCarryTheirPoolEntryAndItsGpu) {
  const ProfileTable profiles = A100AndH100Profiles();
  const GpuModel& a100 = Gpu("a100-80gb");
  const GpuModel& h100 = Gpu("h100-80gb");
  Result<Problem> pool = Problem::BuildPool(TwoServices(), {{&a100, 4.10, 0}, {&h100, 6.98, 8}},
                                            profiles, LatencyRule{});
  ASSERT_TRUE(pool.ok()) << pool.status().ToString();
  ASSERT_EQ(pool->pool().size(), 2u);
  EXPECT_EQ(&pool->gpu(), &a100);  // the first of the pool
  EXPECT_EQ(pool->pool()[0].gpu, &a100);
  EXPECT_EQ(pool->pool()[1].gpu, &h100);
  EXPECT_DOUBLE_EQ(pool->pool()[1].price_per_hour, 6.98);
  EXPECT_EQ(pool->pool()[1].max_count, 8);

  // Each service's triplets are those of A100 alone (pool 0), then those of
  // H100 alone (pool 1), with the profile index of their own model.
  Result<Problem> only_a100 = Problem::Build(TwoServices(), a100, profiles, LatencyRule{});
  Result<Problem> only_h100 = Problem::Build(TwoServices(), h100, profiles, LatencyRule{});
  ASSERT_TRUE(only_a100.ok() && only_h100.ok());
  ASSERT_EQ(pool->services().size(), 2u);
  for (size_t s = 0; s < pool->services().size(); ++s) {
    const std::vector<Triplet>& mixed = pool->services()[s].feasible;
    const std::vector<Triplet>& a = only_a100->services()[s].feasible;
    const std::vector<Triplet>& h = only_h100->services()[s].feasible;
    ASSERT_FALSE(a.empty()) << "service " << s;
    ASSERT_FALSE(h.empty()) << "service " << s;
    ASSERT_EQ(mixed.size(), a.size() + h.size()) << "service " << s;
    for (size_t t = 0; t < mixed.size(); ++t) {
      const bool on_a100 = t < a.size();
      const std::string where = "service " + std::to_string(s) + " triplet " + std::to_string(t);
      EXPECT_EQ(mixed[t].pool, on_a100 ? 0 : 1) << where;
      ExpectSameTriplet(mixed[t], on_a100 ? a[t] : h[t - a.size()], where);
      // The profile index names a profile of the triplet's own model, and the
      // table holds that (model, gpu, profile, batch, procs) with its numbers.
      const GpuModel& model = *pool->pool()[mixed[t].pool].gpu;
      ASSERT_LT(mixed[t].profile, static_cast<int>(model.profiles.size())) << where;
      const ProfileEntry* e =
          profiles.Find({pool->services()[s].service.model, model.name,
                         model.profiles[mixed[t].profile].name, mixed[t].batch, mixed[t].procs});
      ASSERT_NE(e, nullptr) << where;
      EXPECT_DOUBLE_EQ(e->throughput_rps, mixed[t].throughput_rps) << where;
    }
    // The fastest triplet is the faster of the two models' fastest.
    const ServiceSpec& spec = pool->services()[s];
    ASSERT_TRUE(spec.fastest.has_value());
    const Triplet& fa = *only_a100->services()[s].fastest;
    const Triplet& fh = *only_h100->services()[s].fastest;
    EXPECT_DOUBLE_EQ(spec.fastest->latency_ms, std::min(fa.latency_ms, fh.latency_ms));
    EXPECT_EQ(spec.fastest->pool, fh.latency_ms < fa.latency_ms ? 1 : 0);
  }
}

TEST(ProblemPool, BuildIsBuildPoolWithOneUnpricedOffer) {
  const ProfileTable profiles = A100AndH100Profiles();
  const GpuModel& h100 = Gpu("h100-80gb");
  Result<Problem> built = Problem::Build(TwoServices(), h100, profiles, LatencyRule{});
  Result<Problem> pooled =
      Problem::BuildPool(TwoServices(), {{&h100, 0, 0}}, profiles, LatencyRule{});
  ASSERT_TRUE(built.ok()) << built.status().ToString();
  ASSERT_TRUE(pooled.ok()) << pooled.status().ToString();
  for (const Problem* p : {&*built, &*pooled}) {
    ASSERT_EQ(p->pool().size(), 1u);
    EXPECT_EQ(p->pool()[0].gpu, &h100);
    EXPECT_EQ(p->pool()[0].price_per_hour, 0);
    EXPECT_EQ(p->pool()[0].max_count, 0);
    EXPECT_EQ(&p->gpu(), &h100);
    EXPECT_FALSE(p->priced());
  }
  ASSERT_EQ(built->services().size(), pooled->services().size());
  for (size_t s = 0; s < built->services().size(); ++s) {
    const std::vector<Triplet>& a = built->services()[s].feasible;
    const std::vector<Triplet>& b = pooled->services()[s].feasible;
    ASSERT_EQ(a.size(), b.size()) << "service " << s;
    for (size_t t = 0; t < a.size(); ++t) {
      ExpectSameTriplet(b[t], a[t], "triplet " + std::to_string(t));
      EXPECT_EQ(a[t].pool, 0);
      EXPECT_EQ(b[t].pool, 0);
    }
  }
}

TEST(ProblemPool, PricedIffSomeOfferHasAPrice) {
  const ProfileTable profiles = A100AndH100Profiles();
  const GpuModel* a100 = &Gpu("a100-80gb");
  const GpuModel* h100 = &Gpu("h100-80gb");
  struct Case {
    std::string name;
    std::vector<GpuOffer> pool;
    bool priced;
  };
  const std::vector<Case> cases = {
      {"one unpriced", {{a100, 0, 0}}, false},
      {"one priced", {{a100, 4.1, 0}}, true},
      {"two unpriced, one capped", {{a100, 0, 0}, {h100, 0, 3}}, false},
      {"only the second priced", {{a100, 0, 0}, {h100, 6.98, 0}}, true},
      {"both priced", {{a100, 4.1, 2}, {h100, 6.98, 0}}, true},
  };
  for (const Case& c : cases) {
    Result<Problem> p = Problem::BuildPool(TwoServices(), c.pool, profiles, LatencyRule{});
    ASSERT_TRUE(p.ok()) << c.name << ": " << p.status().ToString();
    EXPECT_EQ(p->priced(), c.priced) << c.name;
  }
}

TEST(ProblemPool, NotFoundWhenAModelLacksProfilesOnOnePoolModel) {
  // Profiles for A100 only: the H100 of the pool has none for resnet50.
  const ProfileTable a100_only = DefaultProfiles(Gpu("a100-80gb"));
  Result<Problem> p =
      Problem::BuildPool(TwoServices(), {{&Gpu("a100-80gb"), 4.1, 0}, {&Gpu("h100-80gb"), 7, 0}},
                         a100_only, LatencyRule{});
  ASSERT_FALSE(p.ok());
  EXPECT_EQ(p.status().code(), StatusCode::kNotFound);
  EXPECT_NE(p.status().message().find("h100-80gb"), std::string::npos) << p.status().message();
  EXPECT_NE(p.status().message().find("resnet50"), std::string::npos) << p.status().message();
  // The same pool in the other order fails the same way.
  Result<Problem> q =
      Problem::BuildPool(TwoServices(), {{&Gpu("h100-80gb"), 7, 0}, {&Gpu("a100-80gb"), 4.1, 0}},
                         a100_only, LatencyRule{});
  ASSERT_FALSE(q.ok());
  EXPECT_EQ(q.status().code(), StatusCode::kNotFound);
}

TEST(ProblemPool, RejectsBadPools) {
  const ProfileTable profiles = A100AndH100Profiles();
  const GpuModel* a100 = &Gpu("a100-80gb");
  const GpuModel* h100 = &Gpu("h100-80gb");
  struct Case {
    std::string name;
    std::vector<GpuOffer> pool;
  };
  const std::vector<Case> cases = {
      {"empty pool", {}},
      {"negative price", {{a100, 4.1, 0}, {h100, -1, 0}}},
      {"negative cap", {{a100, 4.1, -2}}},
      {"null model", {{a100, 4.1, 0}, {nullptr, 6.98, 0}}},
  };
  for (const Case& c : cases) {
    Result<Problem> p = Problem::BuildPool(TwoServices(), c.pool, profiles, LatencyRule{});
    ASSERT_FALSE(p.ok()) << c.name;
    EXPECT_EQ(p.status().code(), StatusCode::kInvalidArgument) << c.name;
  }
}

// x = ln(1 / (1 - q)) (L / B) / (SLO - L (2B - 1) / B); share = x / (e^x - 1).
TEST(LatencyRuleHeadroom, UsableShareFollowsItsClosedForm) {
  LatencyRule rule;  // queueing, q = 0.995, Poisson
  ASSERT_TRUE(rule.SetCapacity("queueing").ok());
  const double x = std::log(200.0) * (50.0 / 8) / (200 - 50.0 * 15 / 8);
  EXPECT_NEAR(rule.UsableShare(8, 50, 200, 0), x / std::expm1(x), 1e-12);
  // More slack or bigger batches leave more of the throughput usable.
  EXPECT_LT(rule.UsableShare(8, 50, 200, 0), rule.UsableShare(8, 50, 400, 0));
  EXPECT_LT(rule.UsableShare(1, 20, 100, 0), rule.UsableShare(32, 20, 100, 0));
  EXPECT_GT(rule.UsableShare(8, 50, 200, 0), 0.8);
  EXPECT_LT(rule.UsableShare(8, 50, 200, 0), 0.9);
  // No slack left: nothing is usable.
  EXPECT_EQ(rule.UsableShare(4, 100, 150, 0), 0);
}

TEST(LatencyRuleHeadroom, BurstsScaleTheShareAndTheBareRuleCountsEverything) {
  LatencyRule bursty, queueing;
  ASSERT_TRUE(bursty.SetCapacity("bursty:0.5").ok());
  ASSERT_TRUE(queueing.SetCapacity("queueing").ok());
  EXPECT_NEAR(bursty.UsableShare(8, 50, 200, 0), 0.5 * queueing.UsableShare(8, 50, 200, 0), 1e-12);
  LatencyRule bare;
  bare.queueing_headroom = false;
  EXPECT_EQ(bare.UsableShare(8, 50, 200, 0), 1);
  EXPECT_EQ(ParvaArtifactRule().UsableShare(8, 50, 200, 0), 1);
  LatencyRule bad;
  bad.headroom_quantile = 1;
  EXPECT_FALSE(bad.Validate().ok());
  bad = LatencyRule{};
  ASSERT_TRUE(bad.SetCapacity("queueing").ok());
  bad.burst_on_share = 0;
  EXPECT_FALSE(bad.Validate().ok());
}

TEST(LatencyRuleHeadroom, TripletsCountTheirUsableCapacity) {
  const Result<Problem> p = Problem::Build(TwoServices(), Gpu("a100-80gb"),
                                           DefaultProfiles(Gpu("a100-80gb")), LatencyRule{});
  ASSERT_TRUE(p.ok()) << p.status().ToString();
  for (const ServiceSpec& spec : p->services()) {
    for (const Triplet& t : spec.feasible) {
      EXPECT_NEAR(t.capacity_rps,
                  t.throughput_rps *
                      LatencyRule{}.UsableShare(t.batch, t.latency_ms, spec.service.slo_ms, 0),
                  1e-9 * t.throughput_rps);
      EXPECT_GT(t.capacity_rps, 0);
      EXPECT_LT(t.capacity_rps, t.throughput_rps);
    }
  }
}

// Under the pooled rule, capacities are counted only for the triplets the
// latency rule allows, and for the fastest: each still carries CountedRps,
// and the feasible triplets are exactly the allowed entries that count.
TEST(LatencyRuleHeadroom, PooledTripletsAndTheFastestCarryTheirCountedRate) {
  LatencyRule rule;
  ASSERT_TRUE(rule.SetCapacity("pooled").ok());
  rule.router = Router::kShortestQueue;
  const GpuModel& gpu = Gpu("a100-80gb");
  const ProfileTable profiles = DefaultProfiles(gpu);
  // A third service whose SLO is 1.5 x resnet50's fastest batch: no batch
  // fits half of it, yet the fastest leaves time to wait, so counts.
  double fastest_ms = INFINITY;
  for (const ProfileEntry* e : profiles.EntriesFor("resnet50", gpu.name)) {
    fastest_ms = std::min(fastest_ms, e->latency_ms);
  }
  Scenario s = TwoServices();
  s.services.push_back({"tight", "resnet50", 500, 1.5 * fastest_ms, 0});
  const Result<Problem> p = Problem::Build(s, gpu, profiles, rule);
  ASSERT_TRUE(p.ok()) << p.status().ToString();
  ASSERT_EQ(p->services().size(), 3u);
  const auto counted = [&](const Triplet& t, const Service& service) {
    return rule.CountedRps(t.batch, t.procs, t.throughput_rps, t.latency_ms, service.slo_ms,
                           service.rate_rps);
  };
  for (const ServiceSpec& spec : p->services()) {
    const Service& service = spec.service;
    size_t allowed = 0;
    for (const ProfileEntry* e : profiles.EntriesFor(service.model, gpu.name)) {
      const Triplet t{0, e->key.batch, e->key.procs, e->throughput_rps, e->latency_ms, 0, 0};
      allowed += rule.Allows(t.latency_ms, t.procs, service.slo_ms) && counted(t, service) > 0;
    }
    EXPECT_EQ(spec.feasible.size(), allowed) << service.name;
    for (const Triplet& t : spec.feasible) {
      EXPECT_EQ(t.capacity_rps, counted(t, service)) << service.name;
    }
    ASSERT_TRUE(spec.fastest.has_value()) << service.name;
    EXPECT_EQ(spec.fastest->capacity_rps, counted(*spec.fastest, service)) << service.name;
  }
  EXPECT_TRUE(p->services()[2].feasible.empty());
  EXPECT_GT(p->services()[2].fastest->capacity_rps, 0);
}

// Issue 17, class 4: the planners' loops scale with each service's rate over
// its segments' capacity (a rate of 1e12 took > 10 GB). A problem bounds it
// per service and in all, naming the service, its rate and the profile.
TEST(ProblemLimits, PlansTooLargeToPlanInBoundedTimeAreInputErrors) {
  ProfileTable slow;
  ASSERT_TRUE(slow.Add({{"x", "a100-80gb", "1g.10gb", 1, 1}, 1, 10, {}, {}}).ok());
  ASSERT_TRUE(slow.Add({{"x", "a100-80gb", "7g.80gb", 1, 1}, 7, 10, {}, {}}).ok());
  LatencyRule bare;
  bare.queueing_headroom = false;
  Scenario one;
  one.source = "big.yaml";
  one.services = {{"a", "x", 100'000, 1000, 3}};
  EXPECT_TRUE(Problem::Build(one, Gpu("a100-80gb"), slow, bare).ok());  // 100,000: the limit
  one.services[0].rate_rps = 100'001;
  Result<Problem> p = Problem::Build(one, Gpu("a100-80gb"), slow, bare);
  ASSERT_FALSE(p.ok());
  EXPECT_EQ(p.status().message(),
            "big.yaml:3: field 'rate_rps': 100001 req/s needs 100001 segments of 1g.10gb on "
            "a100-80gb (its best batch 1 x 1 procs counts 1 req/s); a service may need at most "
            "100000 (input limits): lower the rate, or split the service");
  Scenario many;
  many.source = "many.yaml";
  for (int i = 0; i < 36; ++i)
    many.services.push_back({std::to_string(i), "x", 100'000, 1000, i + 2});
  p = Problem::Build(many, Gpu("a100-80gb"), slow, bare);
  ASSERT_FALSE(p.ok());
  EXPECT_EQ(p.status().message(),
            "many.yaml: field 'services': the services need up to 3.6e+06 segments in all, about "
            "4.0 GB of memory to plan; a scenario may need at most 3.5e+06 (about 3.9 GB; input "
            "limits): plan it in parts");
}

TEST(ProblemLimits, PoolPricesAndCapsAreWithinTheirLimits) {
  const ProfileTable profiles = A100AndH100Profiles();
  const GpuModel& a100 = Gpu("a100-80gb");
  for (const GpuOffer& bad :
       {GpuOffer{&a100, 1e25, 0}, GpuOffer{&a100, 1e-9, 0}, GpuOffer{&a100, 1, 2'000'000}}) {
    EXPECT_FALSE(Problem::BuildPool(TwoServices(), {bad}, profiles, LatencyRule{}).ok())
        << bad.price_per_hour << " " << bad.max_count;
  }
  EXPECT_TRUE(
      Problem::BuildPool(TwoServices(), {{&a100, 1e5, 1'000'000}}, profiles, LatencyRule{}).ok());
}

}  // namespace
}  // namespace tessera
