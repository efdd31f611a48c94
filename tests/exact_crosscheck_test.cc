// Cross-check of the exact planner on 200 random small scenarios: every
// registered planner's plan passes the validator, "exact" never uses more
// GPUs than any of them, and, where an independent brute force is
// tractable, "exact" uses exactly the fewest GPUs it finds. The exact
// planner's per-service fallback (classes with too many covers) must agree
// whenever it proves optimality.
//
// The brute force shares nothing with the planner but the Problem and the
// MIG geometry primitives (MigSlots): it lists each service's minimal
// segment counts per profile itself, every total the services' choices can
// add up to, and the fewest GPUs holding each total, from the legal
// single-GPU profile mixes it enumerates slice by slice.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <iostream>
#include <map>
#include <memory>
#include <numeric>
#include <optional>
#include <random>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "planners/exact/exact_planner.h"
#include "tessera/gpu/mig_layout.h"
#include "tessera/gpu_catalog.h"
#include "tessera/plan/plan.h"
#include "tessera/profile/profile_synth.h"
#include "tessera/validator.h"

namespace tessera {
namespace {

constexpr int kScenarios = 200;
constexpr std::uint64_t kSeed = 0x7e55e7a;
// Beyond these the brute force is skipped: totals the services' cover
// choices add up to, and segments in one total.
constexpr size_t kMaxTotals = 20000;
constexpr int kMaxSegments = 40;
constexpr int kNoPlan = 1 << 20;  // more GPUs than any plan here

using Counts = std::vector<int>;  // segments per profile of Profiles()

// ---- Random scenarios ----------------------------------------------------

const ProfileTable& ProfilesOf(const GpuModel& gpu) {
  static std::map<std::string, ProfileTable> cache;
  auto it = cache.find(gpu.name);
  if (it == cache.end()) it = cache.emplace(gpu.name, DefaultProfiles(gpu)).first;
  return it->second;
}

// Mostly A100s; some A30s (4 slices, other geometry) and H100s.
const GpuModel& RandomGpu(std::mt19937_64& rng) {
  const double u = std::uniform_real_distribution<double>(0, 1)(rng);
  return **FindGpu(u < 0.7 ? "a100-80gb" : u < 0.85 ? "a30-24gb" : "h100-80gb");
}

double LogUniform(std::mt19937_64& rng, double lo, double hi) {
  return std::exp(std::uniform_real_distribution<double>(std::log(lo), std::log(hi))(rng));
}

// The fastest latency and the most throughput of a whole GPU for `model`.
std::pair<double, double> FastestAndWholeGpu(const ProfileTable& table, const std::string& model,
                                             const GpuModel& gpu) {
  double fastest = INFINITY, whole = 0;
  for (const ProfileEntry* e : table.EntriesFor(model, gpu.name)) {
    fastest = std::min(fastest, e->latency_ms);
    if (gpu.FindProfile(e->key.profile)->compute_slices == gpu.compute_slices) {
      whole = std::max(whole, e->throughput_rps);
    }
  }
  return {fastest, whole};
}

// A rate that is `share` of a whole GPU's throughput or, now and then, an
// exact multiple of one segment's throughput (where the capacity rule's
// tolerance decides whether a cover covers).
double RandomRate(std::mt19937_64& rng, const ProfileTable& table, const std::string& model,
                  const GpuModel& gpu, double share) {
  const std::vector<const ProfileEntry*> entries = table.EntriesFor(model, gpu.name);
  if (std::uniform_real_distribution<double>(0, 1)(rng) < 0.15) {
    const ProfileEntry* e =
        entries[std::uniform_int_distribution<size_t>(0, entries.size() - 1)(rng)];
    return e->throughput_rps * std::uniform_int_distribution<int>(1, 3)(rng);
  }
  return std::max(1.0, std::round(share * FastestAndWholeGpu(table, model, gpu).second));
}

// 1 to 4 services sharing about 0.2 to 3.5 whole GPUs of demand; SLOs
// mostly 1.1 to 20 times the fastest feasible one, sometimes below it. Now
// and then a service repeats the one before it (a class of two).
Scenario RandomScenario(std::mt19937_64& rng, const GpuModel& gpu) {
  const ProfileTable& table = ProfilesOf(gpu);
  const std::vector<std::string> models = table.Models();
  const int n = std::uniform_int_distribution<int>(1, 4)(rng);
  const double demand = std::uniform_real_distribution<double>(0.2, 3.5)(rng);
  std::vector<double> weights(n);
  for (double& w : weights) w = std::uniform_real_distribution<double>(0.1, 1)(rng);
  const double total_weight = std::accumulate(weights.begin(), weights.end(), 0.0);
  std::uniform_real_distribution<double> coin(0, 1);
  Scenario s;
  s.name = "random";
  s.gpu = gpu.name;
  for (int i = 0; i < n; ++i) {
    Service svc;
    if (i > 0 && coin(rng) < 0.2) {
      svc = s.services.back();
    } else {
      svc.model = models[std::uniform_int_distribution<size_t>(0, models.size() - 1)(rng)];
      svc.rate_rps = RandomRate(rng, table, svc.model, gpu, demand * weights[i] / total_weight);
      const double fastest = FastestAndWholeGpu(table, svc.model, gpu).first;
      svc.slo_ms =
          fastest / 0.5 * (coin(rng) < 0.92 ? LogUniform(rng, 1.1, 20) : LogUniform(rng, 0.6, 1));
    }
    svc.name = "svc" + std::to_string(i);
    s.services.push_back(svc);
  }
  return s;
}

std::string Describe(const Scenario& s) {
  std::ostringstream out;
  out.precision(17);
  out << "gpu " << s.gpu << ":";
  for (const Service& svc : s.services) {
    out << " {" << svc.model << ", rate " << svc.rate_rps << ", slo " << svc.slo_ms << "}";
  }
  return out.str();
}

// ---- Independent brute force ---------------------------------------------

// The profiles some feasible triplet uses, ascending.
std::vector<int> Profiles(const Problem& problem) {
  std::set<int> used;
  for (const ServiceSpec& spec : problem.services()) {
    for (const Triplet& t : spec.feasible) used.insert(t.profile);
  }
  return {used.begin(), used.end()};
}

// Per profile of `profiles`, the service's most throughput (0 = none).
std::vector<double> BestThroughputs(const ServiceSpec& spec, const std::vector<int>& profiles) {
  std::vector<double> best(profiles.size(), 0);
  for (const Triplet& t : spec.feasible) {
    const size_t k = std::find(profiles.begin(), profiles.end(), t.profile) - profiles.begin();
    best[k] = std::max(best[k], t.capacity_rps);
  }
  return best;
}

double Capacity(const Counts& counts, const std::vector<double>& best) {
  double capacity = 0;
  for (size_t k = 0; k < counts.size(); ++k) capacity += counts[k] * best[k];
  return capacity;
}

// Covers `rate`, and no single segment can be dropped.
bool Minimal(const Counts& counts, const std::vector<double>& best, double rate) {
  const double capacity = Capacity(counts, best);
  if (!CoversRate(capacity, rate)) return false;
  for (size_t k = 0; k < counts.size(); ++k) {
    if (counts[k] > 0 && CoversRate(capacity - best[k], rate)) return false;
  }
  return true;
}

// Every minimal count vector. A count of a profile stops growing once the
// segments before its last one already cover the rate (that last one could
// be dropped), so the search is finite.
void MinimalCovers(const std::vector<double>& best, double rate, size_t k, Counts& counts,
                   std::vector<Counts>& out) {
  if (k == counts.size()) {
    if (Minimal(counts, best, rate)) out.push_back(counts);
    return;
  }
  const double before = Capacity(counts, best);
  for (int n = 0; best[k] > 0 || n == 0; ++n) {
    if (n > 0 && CoversRate(before + (n - 1) * best[k], rate)) break;
    counts[k] = n;
    MinimalCovers(best, rate, k + 1, counts, out);
  }
  counts[k] = 0;
}

// Every total of segments per profile the services' minimal covers can add
// up to, or nullopt beyond kMaxTotals totals or kMaxSegments segments.
std::optional<std::set<Counts>> Totals(const Problem& problem, const std::vector<int>& profiles) {
  std::set<Counts> totals = {Counts(profiles.size(), 0)};
  for (const ServiceSpec& spec : problem.services()) {
    if (spec.feasible.empty()) continue;
    std::vector<Counts> covers;
    Counts scratch(profiles.size(), 0);
    MinimalCovers(BestThroughputs(spec, profiles), spec.service.rate_rps, 0, scratch, covers);
    std::set<Counts> next;
    for (const Counts& total : totals) {
      for (const Counts& cover : covers) {
        Counts sum = total;
        for (size_t k = 0; k < sum.size(); ++k) sum[k] += cover[k];
        if (std::accumulate(sum.begin(), sum.end(), 0) > kMaxSegments) return std::nullopt;
        next.insert(std::move(sum));
      }
    }
    if (next.size() > kMaxTotals) return std::nullopt;
    totals = std::move(next);
  }
  return totals;
}

// Every legal mix of `profiles` on one GPU: each memory slice from `slice`
// on is left free or starts one instance that MigSlots allows there.
void LegalMixes(const GpuModel& gpu, const std::vector<int>& profiles, int slice, MigSlots& slots,
                Counts& mix, std::set<Counts>& out) {
  if (slice == gpu.memory_slices) {
    out.insert(mix);
    return;
  }
  LegalMixes(gpu, profiles, slice + 1, slots, mix, out);
  for (size_t k = 0; k < profiles.size(); ++k) {
    if (!slots.CanPlace(profiles[k], slice)) continue;
    slots.Place(profiles[k], slice);
    ++mix[k];
    LegalMixes(gpu, profiles, slice + 1, slots, mix, out);
    --mix[k];
    slots.Remove(profiles[k], slice);
  }
}

// The legal mixes no other legal mix contains: any GPU's instances fit in
// one of them, so they are the only first GPUs worth trying.
std::vector<Counts> UndominatedMixes(const GpuModel& gpu, const std::vector<int>& profiles) {
  std::set<Counts> all;
  MigSlots slots(gpu);
  Counts mix(profiles.size(), 0);
  LegalMixes(gpu, profiles, 0, slots, mix, all);
  std::vector<Counts> out;
  for (const Counts& a : all) {
    const bool dominated = std::any_of(all.begin(), all.end(), [&](const Counts& b) {
      return a != b && std::equal(a.begin(), a.end(), b.begin(), std::less_equal<int>());
    });
    if (!dominated) out.push_back(a);
  }
  return out;
}

// The fewest GPUs whose legal layouts hold `need`: 0 for nothing, else one
// GPU holding some mix plus the fewest for what is left.
int FewestGpus(const Counts& need, const std::vector<Counts>& mixes, std::map<Counts, int>& memo) {
  if (std::all_of(need.begin(), need.end(), [](int n) { return n == 0; })) return 0;
  if (auto it = memo.find(need); it != memo.end()) return it->second;
  int best = kNoPlan;
  for (const Counts& mix : mixes) {
    Counts rest = need;
    for (size_t k = 0; k < rest.size(); ++k) rest[k] = std::max(0, rest[k] - mix[k]);
    if (rest == need) continue;
    best = std::min(best, 1 + FewestGpus(rest, mixes, memo));
  }
  return memo[need] = best;
}

// The fewest GPUs of any plan using best triplets, or nullopt when the
// brute force is intractable.
std::optional<int> BruteForceGpus(const Problem& problem) {
  const std::vector<int> profiles = Profiles(problem);
  const std::optional<std::set<Counts>> totals = Totals(problem, profiles);
  if (!totals) return std::nullopt;
  const std::vector<Counts> mixes = UndominatedMixes(problem.gpu(), profiles);
  std::map<Counts, int> memo;
  int best = kNoPlan;
  for (const Counts& total : *totals) best = std::min(best, FewestGpus(total, mixes, memo));
  return best;
}

// ---- The test --------------------------------------------------------------

struct Planned {
  int gpus = 0;
  bool proven_optimal = false;  // the planner proved it (exact planners only)
};

// Every registered planner's plan, each validated, and the exact planner's
// made to model every service by its segment counts instead of its covers
// ("exact-per-service": the fallback for classes with too many covers; a
// 2 s limit, as it can stall where covers take milliseconds).
std::map<std::string, Planned> PlanWithEveryPlanner(const Problem& problem) {
  const Scenario& scenario = problem.scenario();
  std::vector<std::unique_ptr<Planner>> planners;
  for (const std::string& name : BuiltinPlanners().Names()) {
    auto planner = BuiltinPlanners().Create(name);
    EXPECT_TRUE(planner.ok());
    // The MPS planners share whole GPUs: they plan other problems.
    if (planner.ok() && (*planner)->Mode() != Sharing::kMps) {
      planners.push_back(std::move(*planner));
    }
  }
  planners.push_back(NewExactPlanner(
      {.default_time_limit_s = 2, .max_covers = 1, .tie_break = false}, "exact-per-service"));
  std::map<std::string, Planned> planned;
  for (const std::unique_ptr<Planner>& planner : planners) {
    const std::string name(planner->Name());
    Result<PlanReport> report = RunPlanner(*planner, problem, PlanContext{});
    EXPECT_TRUE(report.ok()) << name << ": " << report.status().ToString();
    if (!report.ok()) continue;
    const std::vector<Violation> violations = ValidateDeployment(report->deployment, problem);
    EXPECT_TRUE(violations.empty()) << name << " on " << Describe(scenario) << "\n"
                                    << FormatViolations(violations);
    const Metrics& m = report->deployment.metrics;
    planned[name] = {m.gpus, m.proven_optimal.value_or(false)};
  }
  return planned;
}

TEST(ExactCrosscheck, FewestGpusOfAllPlannersAndOfABruteForce) {
  std::mt19937_64 rng(kSeed);
  int brute_forced = 0, nonzero = 0, beaten = 0, per_service_proven = 0;
  std::map<int, int> histogram;  // exact's GPUs -> scenarios
  for (int i = 0; i < kScenarios; ++i) {
    const GpuModel& gpu = RandomGpu(rng);
    const Scenario scenario = RandomScenario(rng, gpu);
    const std::string where = "scenario " + std::to_string(i) + ": " + Describe(scenario);
    // Every other scenario under the bare capacity rule, the rest under the
    // default queueing-aware one.
    LatencyRule rule;
    rule.queueing_headroom = i % 2 == 1;
    Result<Problem> problem = Problem::Build(scenario, gpu, ProfilesOf(gpu), rule);
    ASSERT_TRUE(problem.ok()) << problem.status().ToString();
    const std::map<std::string, Planned> planned = PlanWithEveryPlanner(*problem);
    ASSERT_TRUE(planned.contains("exact") && planned.contains("exact-per-service"));
    const int exact = planned.at("exact").gpus;
    // With nothing to serve there is nothing to prove.
    const bool serves = exact > 0;
    EXPECT_EQ(planned.at("exact").proven_optimal, serves) << where;
    for (const auto& [name, plan] : planned) {
      EXPECT_LE(exact, plan.gpus) << "exact vs " << name << ", " << where;
      beaten += name != "exact-per-service" && plan.gpus > exact;
    }
    // The fallback is exact too, but may stop at its time limit unproven.
    const Planned& per_service = planned.at("exact-per-service");
    per_service_proven += per_service.proven_optimal;
    if (per_service.proven_optimal) {
      EXPECT_EQ(per_service.gpus, exact) << where;
    }
    if (const std::optional<int> brute = BruteForceGpus(*problem)) {
      ++brute_forced;
      EXPECT_EQ(exact, *brute) << where;
    }
    ++histogram[exact];
    nonzero += exact > 0;
  }
  std::cout << brute_forced << " of " << kScenarios << " scenarios brute-forced; exact GPUs:";
  for (const auto& [n, count] : histogram) std::cout << " " << n << "x" << count;
  std::cout << "; other planners used more GPUs " << beaten << " times; exact-per-service proven "
            << per_service_proven << " times\n";
  // The generator aims at 1 to about 4 GPUs; most scenarios must need some.
  EXPECT_GE(nonzero, kScenarios * 9 / 10);
  // 180 of 200 when written: the queueing-aware half needs more segments,
  // and 20 scenarios exceed the brute force's limits.
  EXPECT_GE(brute_forced, kScenarios * 85 / 100);
}

}  // namespace
}  // namespace tessera
