#include "tessera/transition.h"

#include <gtest/gtest.h>

#include <map>
#include <set>
#include <string>
#include <tuple>
#include <vector>

#include "deployment_builder.h"
#include "tessera/gpu_catalog.h"
#include "tessera/transition/transition_check.h"
#include "transition/transition_internal.h"

namespace tessera {
namespace {

int CountSteps(const Transition& t, StepAction action) {
  int n = 0;
  for (const TransitionPhase& p : t.phases) {
    for (const TransitionStep& s : p.steps) n += s.action == action;
  }
  return n;
}

Transition PlanOk(const Deployment& a, const Deployment& b, int spare = 0) {
  Result<TransitionPlan> plan = PlanTransition(a, b, {spare});
  EXPECT_TRUE(plan.ok()) << plan.status().ToString();
  if (!plan.ok()) return {};
  EXPECT_TRUE(plan->transition.has_value()) << plan->reason;
  if (!plan->transition) return {};
  const Transition& t = *plan->transition;
  const TransitionCheck check = CheckTransition(a, b, t);
  for (const std::string& v : check.violations) ADD_FAILURE() << v;
  EXPECT_GE(t.summary.min_capacity_ratio, 1 - 1e-9);
  int steps = 0;
  for (const TransitionPhase& p : t.phases) {
    EXPECT_FALSE(p.steps.empty());
    steps += static_cast<int>(p.steps.size());
  }
  EXPECT_EQ(t.summary.steps, steps);
  EXPECT_EQ(t.summary.phases, static_cast<int>(t.phases.size()));
  return t;
}

TEST(StepActionName, NamesEachAction) {
  EXPECT_EQ(StepActionName(StepAction::kCreate), "create");
  EXPECT_EQ(StepActionName(StepAction::kDestroy), "destroy");
  EXPECT_EQ(StepActionName(StepAction::kReconfigure), "reconfigure");
}

Deployment TwoGpus(double rate_x = 100, double rate_y = 100) {
  return DeploymentBuilder("a100-80gb", "parva")
      .BareCapacity()
      .Gpu()
      .Instance("4g.40gb", 0, "x", 8, 1, 150, 20)
      .Instance("3g.40gb", 4, "y", 8, 1, 90, 20)
      .Gpu()
      .Instance("7g.80gb", 0, "y", 16, 2, 200, 30)
      .Service("x", rate_x, 100)
      .Service("y", rate_y, 100)
      .Build();
}

TEST(PlanTransition, IdenticalPlansNeedNoStep) {
  const Deployment a = TwoGpus();
  const Transition t = PlanOk(a, a);
  EXPECT_EQ(t.summary.steps, 0);
  EXPECT_EQ(t.summary.phases, 0);
  EXPECT_EQ(t.summary.gpus_touched, 0);
  EXPECT_EQ(t.summary.peak_gpus, 2);
  EXPECT_EQ(t.gpu, "a100-80gb");
  EXPECT_EQ(t.gpu_map, (std::map<int, int>{{0, 0}, {1, 1}}));
}

TEST(PlanTransition, SwappedGpusNeedNoStep) {
  const Deployment a = TwoGpus();
  Deployment b = a;
  std::swap(b.gpus[0].mig(), b.gpus[1].mig());
  const Transition t = PlanOk(a, b);
  EXPECT_EQ(t.summary.steps, 0);
  EXPECT_EQ(t.gpu_map, (std::map<int, int>{{0, 1}, {1, 0}}));
}

TEST(PlanTransition, RateIncreaseOnlyCreates) {
  const Deployment a = TwoGpus(100, 100);
  const Deployment b = DeploymentBuilder("a100-80gb", "parva")
                           .BareCapacity()
                           .Gpu()
                           .Instance("7g.80gb", 0, "y", 16, 2, 200, 30)
                           .Gpu()
                           .Instance("4g.40gb", 0, "x", 8, 1, 150, 20)
                           .Instance("3g.40gb", 4, "y", 8, 1, 90, 20)
                           .Gpu()
                           .Instance("4g.40gb", 0, "x", 8, 1, 150, 20)
                           .Gpu()
                           .Instance("7g.80gb", 0, "y", 16, 2, 200, 30)
                           .Service("x", 250, 100)
                           .Service("y", 400, 100)
                           .Build();
  const Transition t = PlanOk(a, b);
  EXPECT_EQ(CountSteps(t, StepAction::kCreate), 2);
  EXPECT_EQ(t.summary.steps, 2);
  EXPECT_EQ(t.summary.phases, 1);
  EXPECT_EQ(t.summary.peak_gpus, 4);
  // B's GPUs 1 and 0 keep A's 0 and 1; the two new ones follow A's indices.
  EXPECT_EQ(t.gpu_map.at(1), 0);
  EXPECT_EQ(t.gpu_map.at(0), 1);
  EXPECT_EQ((std::set<int>{t.gpu_map.at(2), t.gpu_map.at(3)}), (std::set<int>{2, 3}));
}

TEST(PlanTransition, ReconfiguresInPlace) {
  const Deployment a = TwoGpus();
  const Deployment b = DeploymentBuilder("a100-80gb", "parva")
                           .BareCapacity()
                           .Gpu()
                           .Instance("4g.40gb", 0, "x", 8, 1, 150, 20)
                           .Instance("3g.40gb", 4, "z", 4, 2, 70, 20)
                           .Gpu()
                           .Instance("7g.80gb", 0, "y", 16, 2, 200, 30)
                           .Service("x", 100, 100)
                           .Service("y", 100, 100)
                           .Service("z", 50, 100)
                           .Build();
  const Transition t = PlanOk(a, b);
  ASSERT_EQ(t.summary.steps, 1);
  const TransitionStep& s = t.phases[0].steps[0];
  EXPECT_EQ(s.id, "s1");
  EXPECT_EQ(s.action, StepAction::kReconfigure);
  EXPECT_EQ(s.gpu, 0);
  EXPECT_EQ(s.profile, "3g.40gb");
  EXPECT_EQ(s.start, 4);
  EXPECT_EQ(s.service, "z");
  EXPECT_EQ(s.from_service, "y");
  EXPECT_EQ(s.batch, 4);
  EXPECT_EQ(s.procs, 2);
  EXPECT_DOUBLE_EQ(s.throughput_rps, 70);
}

// Each service has one whole GPU in A and half of each GPU in B: every new
// instance needs slices the other service's only instance holds.
Deployment CycleFrom() {
  return DeploymentBuilder("a100-80gb", "parva")
      .BareCapacity()
      .Gpu()
      .Instance("7g.80gb", 0, "x", 16, 2, 120, 30)
      .Gpu()
      .Instance("7g.80gb", 0, "y", 16, 2, 120, 30)
      .Service("x", 100, 100)
      .Service("y", 100, 100)
      .Build();
}

Deployment CycleTo() {
  return DeploymentBuilder("a100-80gb", "parva")
      .BareCapacity()
      .Gpu()
      .Instance("4g.40gb", 0, "x", 8, 1, 110, 20)
      .Instance("3g.40gb", 4, "y", 8, 1, 50, 20)
      .Gpu()
      .Instance("4g.40gb", 0, "y", 8, 1, 110, 20)
      .Instance("3g.40gb", 4, "x", 8, 1, 50, 20)
      .Service("x", 100, 100)
      .Service("y", 100, 100)
      .Build();
}

TEST(PlanTransition, CycleNeedsASpareGpu) {
  Result<TransitionPlan> none = PlanTransition(CycleFrom(), CycleTo(), {0});
  ASSERT_TRUE(none.ok());
  EXPECT_FALSE(none->transition.has_value());
  EXPECT_EQ(none->spare_gpus_needed, 1);
  EXPECT_NE(none->reason.find("x, y"), std::string::npos) << none->reason;

  const Transition t = PlanOk(CycleFrom(), CycleTo(), 1);
  EXPECT_EQ(t.spare_gpus, 1);
  EXPECT_EQ(t.summary.peak_gpus, 3);
  EXPECT_EQ(t.summary.steps, 6);  // 4 creates, 2 destroys
  EXPECT_EQ(t.summary.phases, 4);
  // One B GPU went to the spare (index 2).
  std::set<int> used;
  for (const auto& [b, c] : t.gpu_map) used.insert(c);
  EXPECT_TRUE(used.count(2));
}

TEST(NaiveTransition, DestroysThenCreatesAndBreaksTheFloors) {
  Result<TransitionPlan> plan = PlanTransition(CycleFrom(), CycleTo(), {1});
  ASSERT_TRUE(plan.ok() && plan->transition);
  const Transition naive = NaiveTransition(CycleFrom(), CycleTo(), plan->transition->gpu_map);
  ASSERT_EQ(naive.phases.size(), 2u);
  for (const TransitionStep& s : naive.phases[0].steps) EXPECT_EQ(s.action, StepAction::kDestroy);
  for (const TransitionStep& s : naive.phases[1].steps) EXPECT_EQ(s.action, StepAction::kCreate);
  EXPECT_EQ(naive.summary.steps, 6);
  EXPECT_EQ(naive.summary.phases, 2);
  EXPECT_DOUBLE_EQ(naive.summary.min_capacity_ratio, 0);
  EXPECT_EQ(naive.gpu_map, plan->transition->gpu_map);
  EXPECT_EQ(naive.phases[0].steps[0].id, "s1");
  EXPECT_EQ(naive.phases[1].steps.back().id, "s6");

  // On the identity map the naive order touches both GPUs, with no spare.
  const Transition in_place = NaiveTransition(CycleFrom(), CycleTo(), {{0, 0}, {1, 1}});
  EXPECT_EQ(in_place.summary.peak_gpus, 2);
  EXPECT_EQ(in_place.spare_gpus, 0);
  EXPECT_EQ(in_place.summary.gpus_touched, 2);
}

TEST(PlanTransition, MediaExtensionsWaitForTheOldOne) {
  // At most one 1g.10gb+me per GPU: the new one waits for the old one's destroy.
  const Deployment a = DeploymentBuilder("a100-80gb", "parva")
                           .BareCapacity()
                           .Gpu()
                           .Instance("1g.10gb+me", 0, "v", 1, 1, 30, 20)
                           .Instance("3g.40gb", 4, "v", 8, 1, 90, 20)
                           .Service("v", 50, 100)
                           .Build();
  const Deployment b = DeploymentBuilder("a100-80gb", "parva")
                           .BareCapacity()
                           .Gpu()
                           .Instance("1g.10gb+me", 2, "v", 1, 1, 30, 20)
                           .Instance("3g.40gb", 4, "v", 8, 1, 90, 20)
                           .Service("v", 50, 100)
                           .Build();
  const Transition t = PlanOk(a, b);
  ASSERT_EQ(t.phases.size(), 2u);
  EXPECT_EQ(t.phases[0].steps[0].action, StepAction::kDestroy);
  EXPECT_EQ(t.phases[1].steps[0].action, StepAction::kCreate);
}

TEST(PlanTransition, FewerGpusEmptiesTheRest) {
  const Deployment a = DeploymentBuilder("a100-80gb", "parva")
                           .BareCapacity()
                           .Gpu()
                           .Instance("3g.40gb", 0, "x", 8, 1, 90, 20)
                           .Gpu()
                           .Instance("7g.80gb", 0, "y", 16, 2, 200, 30)
                           .Gpu()
                           .Instance("3g.40gb", 0, "x", 8, 1, 90, 20)
                           .Instance("3g.40gb", 4, "y", 8, 1, 90, 20)
                           .Service("x", 170, 100)
                           .Service("y", 250, 100)
                           .Build();
  const Deployment b = DeploymentBuilder("a100-80gb", "parva")
                           .BareCapacity()
                           .Gpu()
                           .Instance("7g.80gb", 0, "y", 16, 2, 200, 30)
                           .Gpu()
                           .Instance("3g.40gb", 0, "x", 8, 1, 90, 20)
                           .Service("x", 80, 100)
                           .Service("y", 150, 100)
                           .Build();
  const Transition t = PlanOk(a, b);
  EXPECT_EQ(t.gpu_map.at(0), 1);
  EXPECT_EQ(CountSteps(t, StepAction::kCreate), 0);
  EXPECT_EQ(CountSteps(t, StepAction::kDestroy), 2);
  EXPECT_EQ(t.summary.phases, 1);
}

TEST(PlanTransition, MixedPoolsMapWithinAModel) {
  auto build = [](bool swapped) {
    DeploymentBuilder builder("a100-80gb", "parva");
    builder.Gpu().Instance("7g.80gb", 0, swapped ? "y" : "x", 16, 2, 200, 30);
    builder.Gpu().Instance("7g.80gb", 0, swapped ? "x" : "y", 16, 2, 200, 30);
    builder.Gpu().Instance("7g.80gb", 0, "x", 16, 2, 300, 30);
    Deployment d = builder.Service("x", 100, 100).Service("y", 100, 100).Build();
    d.gpus[2].gpu = "h100-80gb";
    return d;
  };
  const Deployment a = build(false);
  Deployment b = build(true);
  // B's H100 comes first: it can only go onto A's H100 (index 2). (The
  // checker takes one GPU model per transition, so it is not asked.)
  std::swap(b.gpus[0], b.gpus[2]);
  Result<TransitionPlan> plan = PlanTransition(a, b, {});
  ASSERT_TRUE(plan.ok() && plan->transition) << plan.status().ToString();
  EXPECT_EQ(plan->transition->summary.steps, 0);
  EXPECT_EQ(plan->transition->gpu_map.at(b.gpus[0].index), 2);
  EXPECT_EQ(plan->transition->gpu_map.at(b.gpus[1].index), 0);
}

TEST(PlanTransition, FromAndToNothing) {
  const Deployment none = DeploymentBuilder("a100-80gb", "parva").BareCapacity().Build();
  const Deployment a = TwoGpus();
  EXPECT_EQ(PlanOk(none, none).summary.steps, 0);
  const Transition up = PlanOk(none, a);
  EXPECT_EQ(CountSteps(up, StepAction::kCreate), 3);
  EXPECT_EQ(up.summary.phases, 1);
  EXPECT_EQ(up.gpu_map, (std::map<int, int>{{0, 0}, {1, 1}}));  // new GPUs from index 0
  const Transition down = PlanOk(a, none);
  EXPECT_EQ(CountSteps(down, StepAction::kDestroy), 3);
  EXPECT_EQ(down.summary.phases, 1);
}

TEST(PlanTransition, MapsEmptyGpusOfB) {
  const Deployment a = TwoGpus();
  Deployment b = a;
  b.gpus.push_back({});
  b.gpus.back().index = 7;
  const Transition t = PlanOk(a, b);
  EXPECT_EQ(t.summary.steps, 0);
  ASSERT_EQ(t.gpu_map.size(), 3u);
  EXPECT_EQ(t.gpu_map.at(7), 2);  // a GPU of its own: it holds nothing
}

// A destroy and, phases later, a create in the same place on an emptied GPU
// become one reconfigure in the create's phase (or nothing, when the
// instance is the same).
TEST(MergeReplaced, DestroyThenCreateInPlaceBecomesAReconfigure) {
  using namespace transition_internal;
  const Deployment a = DeploymentBuilder("a100-80gb", "parva")
                           .BareCapacity()
                           .Gpu()
                           .Instance("3g.40gb", 0, "x", 8, 1, 100, 20)
                           .Instance("3g.40gb", 4, "y", 8, 1, 100, 20)
                           .Service("x", 50, 100)
                           .Service("y", 50, 100)
                           .Build();
  Parsed parsed = *Parse(a, a, /*validate=*/true);
  const Inst x = parsed.a.gpus[0].insts[0], y = parsed.a.gpus[0].insts[1];
  Inst z = y;
  z.service = x.service;
  Schedule schedule;
  schedule.ok = true;
  schedule.layout = MatchGpus(parsed);
  schedule.phases = {{{StepAction::kDestroy, 0, x, {}}, {StepAction::kDestroy, 0, y, {}}},
                     {{StepAction::kCreate, 0, {}, x}, {StepAction::kCreate, 0, {}, z}}};
  MergeReplaced(parsed, schedule, 1);
  ASSERT_EQ(schedule.phases.size(), 1u);
  ASSERT_EQ(schedule.phases[0].size(), 1u);
  EXPECT_EQ(schedule.phases[0][0].action, StepAction::kReconfigure);
  EXPECT_TRUE(SameInstance(schedule.phases[0][0].from, y));
  EXPECT_TRUE(SameInstance(schedule.phases[0][0].to, z));
}

TEST(PlanTransition, RejectsBadInput) {
  const Deployment a = TwoGpus();
  Deployment mps = a;
  mps.sharing = Sharing::kMps;
  EXPECT_EQ(PlanTransition(mps, a, {}).status().code(), StatusCode::kInvalidArgument);
  Deployment h100 = a;
  h100.gpu = "h100-80gb";
  EXPECT_EQ(PlanTransition(a, h100, {}).status().code(), StatusCode::kInvalidArgument);
  Deployment overlap = a;
  overlap.gpus[1].mig().push_back(overlap.gpus[0].instances()[0]);
  Result<TransitionPlan> r = PlanTransition(a, overlap, {});
  EXPECT_EQ(r.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(r.status().message().find("to: GPU 1"), std::string::npos) << r.status().message();
  Deployment twice = a;
  twice.gpus[1].index = 0;
  EXPECT_EQ(PlanTransition(twice, a, {}).status().code(), StatusCode::kInvalidArgument);
  Deployment unknown = a;
  unknown.gpus[0].instances()[0].profile = "9g.90gb";
  EXPECT_EQ(PlanTransition(unknown, a, {}).status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(PlanTransition(a, a, {-1}).status().code(), StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace tessera
