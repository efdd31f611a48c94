// The heuristic planners' plans, pinned: every MIG heuristic (parva and its
// variants, MIG-serving's fast algorithm with 1, 2 and 4 processes, the
// static cuts) plans a set of generated workloads, and a fingerprint of each
// PlanResult (every GPU in order, empty ones included, and each segment's
// service, triplet and start) must equal the one recorded from the planners
// as they were before their data structures were made near-linear (issue
// 22: indexed best fit in parva, incremental scores in migserving-greedy).
// A planner whose algorithm is meant to change updates its column here,
// saying why in the commit.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstdio>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "tessera/gpu_catalog.h"
#include "tessera/planner.h"
#include "tessera/problem.h"
#include "tessera/profile/profile_synth.h"
#include "tessera/workload/workload_gen.h"

namespace tessera {
namespace {

// FNV-1a over the plan's numbers.
class Fingerprint {
 public:
  void Add(std::int64_t v) {
    for (int byte = 0; byte < 8; ++byte) {
      hash_ ^= static_cast<std::uint64_t>(v >> (8 * byte)) & 0xff;
      hash_ *= 0x100000001b3ULL;
    }
  }
  std::uint64_t hash() const { return hash_; }

 private:
  std::uint64_t hash_ = 0xcbf29ce484222325ULL;
};

// "G<gpus holding a segment> S<segments> <hash>".
std::string FingerprintOf(const PlanResult& plan) {
  Fingerprint f;
  int used = 0, segments = 0;
  for (const std::vector<PlacedSegment>& gpu : plan.mig()) {
    f.Add(-1);
    used += gpu.empty() ? 0 : 1;
    for (const PlacedSegment& s : gpu) {
      ++segments;
      for (std::int64_t v : {s.service, s.triplet.pool, s.triplet.profile, s.triplet.batch,
                             s.triplet.procs, s.start}) {
        f.Add(v);
      }
    }
  }
  char hex[17];
  std::snprintf(hex, sizeof hex, "%016llx", static_cast<unsigned long long>(f.hash()));
  return "G" + std::to_string(used) + " S" + std::to_string(segments) + " " + hex;
}

struct Workload {
  const char* gpu;
  int services;
  RateDistribution rates;
  std::uint64_t seed;
};

// Small to mid-sized workloads on three MIG geometries, rates from a few
// req/s (many services per GPU) to thousands (many GPUs per service).
const std::vector<Workload>& Workloads() {
  static const std::vector<Workload> kWorkloads = {
      {"a100-80gb", 5, NormalRates{100, 30}, 1},     {"a100-80gb", 12, NormalRates{2000, 800}, 2},
      {"a100-80gb", 24, LognormalRates{5, 1.5}, 3},  {"a100-80gb", 40, NormalRates{100, 30}, 4},
      {"a100-80gb", 60, NormalRates{300, 100}, 5},   {"a100-80gb", 80, LognormalRates{4, 1}, 6},
      {"a30-24gb", 30, NormalRates{150, 60}, 7},     {"a30-24gb", 50, LognormalRates{4.5, 1.2}, 8},
      {"h100-80gb", 36, NormalRates{400, 200}, 9},   {"h100-80gb", 70, LognormalRates{3.5, 1}, 10},
      {"a100-80gb", 150, NormalRates{300, 100}, 11}, {"h100-80gb", 120, LognormalRates{5, 1}, 12},
  };
  return kWorkloads;
}

Problem ProblemOf(const Workload& w) {
  WorkloadGenOptions options;
  options.services = w.services;
  options.rates = w.rates;
  options.seed = w.seed;
  options.gpu = w.gpu;
  const GpuModel& gpu = **FindGpu(w.gpu);
  Result<Scenario> scenario = GenerateWorkload(options);
  EXPECT_TRUE(scenario.ok()) << scenario.status().ToString();
  Result<Problem> problem = Problem::Build(*scenario, gpu, DefaultProfiles(gpu), LatencyRule{});
  EXPECT_TRUE(problem.ok()) << problem.status().ToString();
  return *std::move(problem);
}

// Recorded from the planners before issue 22 (commit 0ec6128), one row per
// workload above.
const std::map<std::string, std::vector<std::string>>& Recorded() {
  static const std::map<std::string, std::vector<std::string>> kRecorded = {
      {"parva",
       {"G1 S5 91c59403d93a310b", "G21 S51 5d5d0f9822571378", "G6 S25 cb7d3ba2845d2cb9",
        "G7 S40 e542c0f092c8f37b", "G20 S60 da4cfd7e734f7f97", "G14 S80 ddfd71abe378c445",
        "G12 S30 3398f8482a48717a", "G18 S51 070b1690c148d590", "G9 S36 d277f8957bb73ed9",
        "G11 S70 88dd5eda3f7856f1", "G45 S151 8b188f55b9083867", "G22 S120 96dd4d7c60b14ebf"}},
      {"parva-single",
       {"G1 S5 91c59403d93a310b", "G21 S55 2302453183f7e7dd", "G6 S25 cb7d3ba2845d2cb9",
        "G7 S40 e542c0f092c8f37b", "G20 S60 da4cfd7e734f7f97", "G14 S80 ddfd71abe378c445",
        "G12 S30 3398f8482a48717a", "G18 S51 070b1690c148d590", "G9 S36 919139a449b2a9b9",
        "G11 S70 71788df7aec9b32a", "G45 S151 8b188f55b9083867", "G22 S120 3ebf46607e9e60c4"}},
      {"parva-unopt",
       {"G1 S5 91c59403d93a310b", "G29 S33 88b3629c5f2cd9de", "G6 S25 cb7d3ba2845d2cb9",
        "G7 S40 e542c0f092c8f37b", "G20 S60 da4cfd7e734f7f97", "G14 S80 ddfd71abe378c445",
        "G12 S30 3398f8482a48717a", "G18 S51 070b1690c148d590", "G9 S36 d277f8957bb73ed9",
        "G11 S70 88dd5eda3f7856f1", "G45 S151 8b188f55b9083867", "G22 S120 96dd4d7c60b14ebf"}},
      {"migserving-greedy",
       {"G1 S7 9532f23e2df7ce00", "G20 S46 081adc51af1563e7", "G7 S33 e0f9bd212af7533f",
        "G8 S49 0f59791fc3bbe828", "G20 S106 2b647c4af4a548fa", "G14 S92 05a2f02ebc00d65a",
        "G12 S40 c7688e9331eb415b", "G18 S62 005ff11e27035ea2", "G9 S56 5e241136a89ec304",
        "G11 S73 c14cf5d525e8b3bd", "G46 S256 9768e7f61b8dffe6", "G22 S145 8c56f337a70f8e60"}},
      {"migserving-greedy-mps2",
       {"G1 S7 9532f23e2df7ce00", "G20 S45 aebe0abae3e9d2ee", "G7 S33 e0f9bd212af7533f",
        "G8 S49 0f59791fc3bbe828", "G20 S106 2b647c4af4a548fa", "G14 S92 05a2f02ebc00d65a",
        "G12 S40 c7688e9331eb415b", "G18 S62 005ff11e27035ea2", "G9 S56 5e241136a89ec304",
        "G11 S73 c14cf5d525e8b3bd", "G46 S256 9768e7f61b8dffe6", "G22 S145 8c56f337a70f8e60"}},
      {"migserving-greedy-mps4",
       {"G1 S7 9532f23e2df7ce00", "G20 S45 aebe0abae3e9d2ee", "G7 S33 e0f9bd212af7533f",
        "G8 S49 0f59791fc3bbe828", "G20 S106 2b647c4af4a548fa", "G14 S92 05a2f02ebc00d65a",
        "G12 S40 c7688e9331eb415b", "G18 S62 005ff11e27035ea2", "G9 S56 5e241136a89ec304",
        "G11 S73 c14cf5d525e8b3bd", "G46 S256 9768e7f61b8dffe6", "G22 S145 8c56f337a70f8e60"}},
      {"static-7",
       {"G5 S5 7e1eb70fa0fb5c6e", "G24 S24 5e140f4b73146001", "G24 S24 975f0d228117fc11",
        "G40 S40 9cfa8d122d842981", "G60 S60 5ea57eb207c7fc06", "G80 S80 e16c6a529bd5e966",
        "G30 S30 6fa0570780d90a8c", "G51 S51 328b4ee73dac4c2d", "G36 S36 f9fb806a975c50e9",
        "G70 S70 864752607253ab48", "G150 S150 2bbae5c40ade2ab4", "G120 S120 1a3a669918c3c579"}},
      {"static-7x1",
       {"G1 S7 d41d93af733ee5c0", "G26 S181 0428ef94547adbed", "G7 S47 39be1f63f78721a5",
        "G8 S50 786b1b33b8ed47cd", "G23 S156 bcef8a26224f4992", "G15 S100 43ef9f627f282be1",
        "G13 S49 d2029769414177c2", "G20 S77 899830b86691595e", "G9 S62 a1556b45f6fe2150",
        "G11 S73 9e8d53f8ae2319dd", "G50 S350 5c26b2f94d2f842f", "G23 S158 1ca8490587861c36"}},
      {"static-mix",
       {"G5 S5 1ec4954aaa3c807d", "G26 S64 475d2be832576784", "G24 S26 728e957dd5b80688",
        "G40 S40 54ac5d818ee08f95", "G60 S62 2ed5d994cad30283", "G80 S80 58bc5e08c76106a5",
        "G30 S36 c238ee991145d306", "G52 S59 712f209869174593", "G36 S36 f4b3028e9d1ab125",
        "G70 S70 71895a51ca02d4b4", "G150 S154 714b223dbc15202f", "G120 S120 79e6e08b71553f05"}},

  };
  return kRecorded;
}

TEST(HeuristicPlanGolden, EveryHeuristicPlansEveryWorkloadAsBefore) {
  std::vector<Problem> problems;
  for (const Workload& w : Workloads()) problems.push_back(ProblemOf(w));
  const char* planners[] = {"parva",
                            "parva-single",
                            "parva-unopt",
                            "migserving-greedy",
                            "migserving-greedy-mps2",
                            "migserving-greedy-mps4",
                            "static-7",
                            "static-7x1",
                            "static-mix"};
  for (const char* name : planners) {
    Result<std::unique_ptr<Planner>> planner = BuiltinPlanners().Create(name);
    ASSERT_TRUE(planner.ok()) << name;
    const std::vector<std::string>& recorded = Recorded().at(name);
    ASSERT_EQ(recorded.size(), problems.size()) << name;
    for (size_t k = 0; k < problems.size(); ++k) {
      Result<PlanResult> plan = (*planner)->Plan(problems[k], PlanContext{});
      ASSERT_TRUE(plan.ok()) << name << " on workload " << k << ": " << plan.status().ToString();
      EXPECT_EQ(FingerprintOf(*plan), recorded[k]) << name << " on workload " << k;
    }
  }
}

}  // namespace
}  // namespace tessera
