#include "planners/parva/parva_planner.h"

#include <gtest/gtest.h>

#include "tessera/plan/plan.h"
#include "tessera/validator.h"
#include "tiny_problem.h"

namespace tessera {
namespace {

using testing::TinyProblem;

Deployment PlanWith(const ParvaOptions& options, const Problem& problem) {
  auto planner = NewParvaPlanner(options, "parva");
  Result<PlanReport> report = RunPlanner(*planner, problem, PlanContext{});
  EXPECT_TRUE(report.ok());
  const Deployment& d = report->deployment;
  EXPECT_TRUE(ValidateDeployment(d, problem).empty());
  return d;
}

std::vector<std::string> Profiles(const Deployment& d) {
  std::vector<std::string> out;
  for (const GpuAssignment& g : d.gpus) {
    for (const Instance& i : g.instances())
      out.push_back(i.profile + "@" + std::to_string(i.start));
  }
  return out;
}

TEST(ParvaPlanner, ExactMultipleLeavesTheLastSegmentToCoverOne) {
  // 1600 req/s: the optimal 7g serves 800, n = floor(1600/800) = 2, one fewer
  // as 1600 is an exact multiple; the last segment covering 800 is a 7g.
  ParvaOptions o;
  o.optimize = false;
  Deployment d = PlanWith(o, TinyProblem({1600}));
  EXPECT_EQ(Profiles(d), (std::vector<std::string>{"7g.80gb@0", "7g.80gb@0"}));
}

TEST(ParvaPlanner, LastSegmentIsTheSmallestThatCoversTheRemainder) {
  // 1000 req/s: one 7g (800), remainder 200: 1g gives 100, 2g 220 -> 2g.
  ParvaOptions o;
  o.optimize = false;
  Deployment d = PlanWith(o, TinyProblem({1000}));
  EXPECT_EQ(Profiles(d), (std::vector<std::string>{"7g.80gb@0", "2g.20gb@0"}));
}

TEST(ParvaPlanner, OptimizationSplitsALightGpuIntoSmallSegments) {
  // 250 req/s: the last (only) segment is a 3g (300) at start 4, using 3 <= 4
  // slices, so the optimization frees 300 req/s and re-serves it: 2g is more
  // efficient than 1g (110 > 100 per slice), floor(300/220) = 1 2g, then
  // ceil(80/100) = 1 1g: 2g@0 and 1g at the first free preferred start, 6.
  ParvaOptions unopt;
  unopt.optimize = false;
  EXPECT_EQ(Profiles(PlanWith(unopt, TinyProblem({250}))), (std::vector<std::string>{"3g.40gb@4"}));
  EXPECT_EQ(Profiles(PlanWith({}, TinyProblem({250}))),
            (std::vector<std::string>{"2g.20gb@0", "1g.10gb@6"}));
}

TEST(ParvaPlanner, BestFitFillsTheFullestGpuThatHasRoom) {
  // Two services of 1000 req/s: 7g + 2g each. The 7g take GPUs 0 and 1;
  // both 2g go to GPU 2 (the only GPU with room), at starts 0 and 4.
  ParvaOptions o;
  o.optimize = false;
  Deployment d = PlanWith(o, TinyProblem({1000, 1000}));
  ASSERT_EQ(d.gpus.size(), 3u);
  EXPECT_EQ(Profiles(d),
            (std::vector<std::string>{"7g.80gb@0", "7g.80gb@0", "2g.20gb@0", "2g.20gb@4"}));
}

TEST(ParvaPlanner, SingleVariantUsesOneProcessPerSegment) {
  ProfileTable t = testing::TinyTable();
  ASSERT_TRUE(t.Add({{"m", "a100-80gb", "1g.10gb", 1, 2}, 180, 11, {}, {}}).ok());
  Problem p =
      *Problem::Build(testing::TinyScenario({150}), testing::A100(), t, testing::BareRule());
  ParvaOptions single;
  single.use_mps = false;
  auto planner = NewParvaPlanner(single, "parva-single");
  Result<PlanReport> report = RunPlanner(*planner, p, PlanContext{});
  ASSERT_TRUE(report.ok());
  for (const GpuAssignment& g : report->deployment.gpus) {
    for (const Instance& i : g.instances()) EXPECT_EQ(i.procs, 1);
  }
}

TEST(ParvaPlanner, OptionsValidate) {
  ParvaOptions o;
  EXPECT_TRUE(o.Validate().ok());
  o.optimize_threshold = -1;
  EXPECT_FALSE(o.Validate().ok());
}

}  // namespace
}  // namespace tessera
