// The exact planner's word on time and its start (optimality itself is in
// tests/exact_*.cc): wherever its deadline passes it returns a valid plan
// with a proven bound no better than it; its warm-start planners' plan is
// where branch and bound starts, so it is never worse than theirs; its model
// has one column per cover and mix and is loaded into the solver once.
// Deadlines are read on a FakeClock: no test reads the wall clock.
#include "planners/exact/exact_planner.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "planners/exact/service_covers.h"
#include "tessera/gpu/mig_layout.h"
#include "tessera/plan/plan.h"
#include "tessera/profile/profile_synth.h"
#include "tessera/validator.h"
#include "tessera/workload/workload_gen.h"
#include "tiny_problem.h"

namespace tessera {
namespace {

using testing::A100;
using testing::TinyProblem;

// MIG-serving's normal-1 workload (`tessera gen --preset normal-1`: 24
// services needing about 265 GPUs) on the embedded A100 profiles.
const Problem& Normal1() {
  static const Problem problem = [] {
    Result<Scenario> scenario = GenerateWorkload(WorkloadPresets()[0].options);
    EXPECT_TRUE(scenario.ok());
    return *Problem::Build(*scenario, A100(), DefaultProfiles(A100()), LatencyRule{});
  }();
  return problem;
}

int GpusOf(const PlanResult& plan) {
  return static_cast<int>(std::count_if(plan.mig().begin(), plan.mig().end(),
                                        [](const auto& segments) { return !segments.empty(); }));
}

// The validator's findings on `plan` of `problem`.
std::vector<Violation> Violations(const Problem& problem, const PlanResult& plan) {
  return ValidateDeployment(BuildDeployment(problem, plan, "exact", {0, "none"}, 0), problem);
}

std::vector<std::unique_ptr<Planner>> Planners(std::unique_ptr<Planner> planner) {
  std::vector<std::unique_ptr<Planner>> planners;
  planners.push_back(std::move(planner));
  return planners;
}

// A warm-start planner that returns a plan made beforehand.
class FixedPlanner final : public Planner {
 public:
  explicit FixedPlanner(PlanResult plan) : plan_(std::move(plan)) {}
  std::string_view Name() const override { return "fixed"; }
  Result<PlanResult> Plan(const Problem&, const PlanContext&) const override { return plan_; }

 private:
  PlanResult plan_;
};

TEST(ExactPlanner, ModelHasAColumnPerCoverAndMixAndIsLoadedOnce) {
  const Problem problem = TinyProblem({250, 400, 250, 900});
  Result<ExactRun> run = PlanExact(problem, {}, ExactOptions{}, {});
  ASSERT_TRUE(run.ok()) << run.status().ToString();
  const CoverSet set = BuildCoverSet(problem, {});
  long covers = 0;
  for (const ServiceClass& c : set.classes) covers += static_cast<long>(c.covers.size());
  std::vector<int> profiles;
  for (const Resource& r : set.resources) profiles.push_back(r.profile);
  const long mixes =
      static_cast<long>(DistinctMixes(A100(), EnumerateMaximalLayouts(A100(), profiles)).size());
  const ExactStats& stats = run->stats;
  EXPECT_EQ(stats.model_loads, 1);
  EXPECT_EQ(stats.classes, 3);
  EXPECT_EQ(stats.per_service_classes, 0);
  EXPECT_EQ(stats.covers, covers);
  // Columns: the GPUs, one per mix, one per cover. Rows: GPUs = their mixes,
  // one per class (its members), one per resource (instances).
  EXPECT_EQ(stats.columns, 1 + mixes + covers);
  EXPECT_EQ(stats.rows, 1 + 3 + static_cast<long>(set.resources.size()));
  ASSERT_TRUE(run->plan.proof);
  EXPECT_TRUE(run->plan.proof->optimal);
}

TEST(ExactPlanner, TotalCoverLimitModelsTheLargestClassesPerService) {
  // 250 req/s has 5 minimal covers, 5,000 req/s hundreds: a total of 100
  // lists the first and models the second per service; the plan is as good.
  const Problem problem = TinyProblem({250, 5000});
  Result<ExactRun> all = PlanExact(problem, {}, ExactOptions{}, {});
  Result<ExactRun> limited = PlanExact(problem, {}, ExactOptions{.max_total_covers = 100}, {});
  ASSERT_TRUE(all.ok() && limited.ok());
  EXPECT_EQ(all->stats.per_service_classes, 0);
  EXPECT_EQ(limited->stats.per_service_classes, 1);
  EXPECT_EQ(limited->stats.covers, 5);
  EXPECT_LT(limited->stats.columns, all->stats.columns);
  EXPECT_EQ(GpusOf(limited->plan), GpusOf(all->plan));
  EXPECT_TRUE(limited->plan.proof && limited->plan.proof->optimal);
}

// Every reading of the clock 1 ms later, and limits from 1 ms to 4 s of it:
// the deadline passes in every phase in turn (branch and bound also stops
// on CBC's own clock, given the time left). Each time the plan is valid, its
// bound is proven (no more than the plan), and the model is loaded at most
// once.
TEST(ExactPlanner, DeadlineInAnyPhaseReturnsAValidPlanWithItsBound) {
  const Problem& problem = Normal1();
  const std::vector<std::unique_ptr<Planner>> warm_start =
      Planners(std::move(BuiltinPlanners().Create("parva")).value());
  std::set<std::string> phases;
  for (double limit_ms = 1; limit_ms <= 4096; limit_ms *= 2) {
    FakeClock clock(0, 1);
    const PlanContext context{.time_limit_s = limit_ms / 1000, .clock = &clock};
    Result<ExactRun> run = PlanExact(problem, context, ExactOptions{}, warm_start);
    ASSERT_TRUE(run.ok()) << limit_ms << " ms: " << run.status().ToString();
    ASSERT_TRUE(run->plan.proof) << limit_ms;
    const SolverProof& proof = *run->plan.proof;
    EXPECT_EQ(GpusOf(run->plan), proof.objective) << limit_ms;
    EXPECT_GE(proof.bound, 0) << limit_ms;
    EXPECT_LE(proof.bound, proof.objective) << limit_ms;
    EXPECT_EQ(proof.optimal, proof.bound == proof.objective) << limit_ms;
    EXPECT_LE(run->stats.model_loads, 1) << limit_ms;
    EXPECT_TRUE(Violations(problem, run->plan).empty()) << limit_ms;
    phases.insert(run->stats.stopped_in);
  }
  for (const char* phase : {"warm start", "covers", "relaxation", "branch and bound"}) {
    EXPECT_TRUE(phases.contains(phase)) << phase;
  }
}

// migserving-greedy's plan of normal-1 (265 GPUs when written) beats the
// relaxation rounded. Given as the warm start, it is where branch and bound
// starts, and the plan is never worse than it; without it, the exact planner
// stopped at the same point (the same fake clock) does worse.
TEST(ExactPlanner, WarmStartMakesItNoWorseThanTheHeuristic) {
  const Problem& problem = Normal1();
  Result<PlanResult> greedy =
      (*BuiltinPlanners().Create("migserving-greedy"))->Plan(problem, PlanContext{});
  ASSERT_TRUE(greedy.ok());
  const int heuristic = GpusOf(*greedy);
  const std::vector<std::unique_ptr<Planner>> warm_start =
      Planners(std::make_unique<FixedPlanner>(*greedy));
  for (double limit_ms : {256, 4096}) {
    FakeClock with_clock(0, 1), without_clock(0, 1);
    Result<ExactRun> with =
        PlanExact(problem, {.time_limit_s = limit_ms / 1000, .clock = &with_clock}, {}, warm_start);
    Result<ExactRun> without =
        PlanExact(problem, {.time_limit_s = limit_ms / 1000, .clock = &without_clock}, {}, {});
    ASSERT_TRUE(with.ok()) << with.status().ToString();
    EXPECT_EQ(with->stats.start, "fixed") << limit_ms;
    EXPECT_LE(GpusOf(with->plan), heuristic) << limit_ms;
    EXPECT_TRUE(Violations(problem, with->plan).empty()) << limit_ms;
    if (without.ok()) {
      EXPECT_GT(GpusOf(without->plan), heuristic) << limit_ms;
      EXPECT_EQ(without->stats.start, "rounded") << limit_ms;
    }
  }
}

}  // namespace
}  // namespace tessera
