#include "transition/incremental_plan.h"

#include <gtest/gtest.h>

#include <map>
#include <set>
#include <string>
#include <tuple>
#include <vector>

#include "deployment_builder.h"
#include "tessera/profile/profile_synth.h"
#include "tessera/validator.h"
#include "test_paths.h"
#include "tiny_problem.h"

namespace tessera {
namespace {

using testing::A100;
using testing::BareRule;
using testing::TinyProblem;

// (gpu index, start, profile, batch, procs) of every instance of `service`.
using Place = std::tuple<int, int, std::string, int, int>;
std::multiset<Place> PlacesOf(const Deployment& d, const std::string& service) {
  std::multiset<Place> places;
  for (const GpuAssignment& g : d.gpus) {
    for (const Instance& inst : g.instances()) {
      if (inst.service == service) {
        places.insert({g.index, inst.start, inst.profile, inst.batch, inst.procs});
      }
    }
  }
  return places;
}

int InstancesOf(const Deployment& d) {
  int n = 0;
  for (const GpuAssignment& g : d.gpus) n += static_cast<int>(g.instances().size());
  return n;
}

Result<IncrementalPlan> Replan(const Problem& problem, const Deployment& current,
                               IncrementalOptions options = {}) {
  return PlanIncremental(BuiltinPlanners(), problem, current, options, {});
}

Deployment PlanFromScratch(const Problem& problem) {
  std::string note;
  Result<PlanReport> r = RunDefaultPlanner(BuiltinPlanners(), problem, {}, note);
  EXPECT_TRUE(r.ok()) << r.status().ToString();
  return r->deployment;
}

// Model "m" of the tiny table (tiny_problem.h): every segment as profiled.
DeploymentBuilder& Seg(DeploymentBuilder& b, const std::string& profile, int start,
                       const std::string& service) {
  static const std::map<std::string, std::tuple<int, double, double>> kProfiled = {
      {"1g.10gb", {1, 100, 10}},
      {"2g.20gb", {1, 220, 9}},
      {"3g.40gb", {1, 300, 8}},
      {"7g.80gb", {8, 800, 40}}};
  const auto& [batch, tp, lat] = kProfiled.at(profile);
  return b.Instance(profile, start, service, batch, 1, tp, lat, "m");
}

TEST(IncrementalPlan, UnchangedScenarioKeepsEveryInstance) {
  const Problem p = TinyProblem({1000, 250, 90});
  const Deployment current = PlanFromScratch(p);
  Result<IncrementalPlan> r = Replan(p, current);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->counts.kept, InstancesOf(current));
  EXPECT_EQ(r->counts.moved + r->counts.added + r->counts.removed, 0);
  EXPECT_EQ(r->report.deployment.metrics.gpus, current.metrics.gpus);
  EXPECT_EQ(r->note, "");
}

TEST(IncrementalPlan, FallenRateDropsTheInstanceOnTheEmptiestGpu) {
  // s0 serves 600 req/s with two 3g (300 each): one on a full GPU, one alone.
  DeploymentBuilder b("a100-80gb", "hand");
  b.Gpu();
  Seg(b, "3g.40gb", 4, "s0");
  Seg(b, "2g.20gb", 0, "s1");
  Seg(b, "2g.20gb", 2, "s1");
  b.Gpu();
  Seg(b, "3g.40gb", 4, "s0");
  b.Service("s0", 600, 1000, "m").Service("s1", 440, 1000, "m");
  Deployment current = b.Build();
  current.rule = BareRule();
  ASSERT_TRUE(ValidateDeployment(current, TinyProblem({600, 440})).empty());

  Result<IncrementalPlan> r = Replan(TinyProblem({300, 440}), current);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->counts.kept, 3);
  EXPECT_EQ(r->counts.removed, 1);
  EXPECT_EQ(r->counts.added + r->counts.moved, 0);
  EXPECT_EQ(PlacesOf(r->report.deployment, "s0"), (std::multiset<Place>{{0, 4, "3g.40gb", 1, 1}}));
  EXPECT_EQ(r->report.deployment.metrics.gpus, 1);
}

TEST(IncrementalPlan, RisenRateFillsAHoleOfACurrentGpu) {
  // s0 at 300 req/s on a 3g; at 500 the 200 more fit a 2g (220) in its hole.
  DeploymentBuilder b("a100-80gb", "hand");
  b.Gpu();
  Seg(b, "3g.40gb", 4, "s0");
  b.Service("s0", 300, 1000, "m");
  Result<IncrementalPlan> r = Replan(TinyProblem({500}), b.Build());
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->counts.kept, 1);
  EXPECT_EQ(r->counts.added, 1);
  EXPECT_EQ(r->counts.moved + r->counts.removed, 0);
  EXPECT_EQ(r->report.deployment.metrics.gpus, 1);
  EXPECT_EQ(r->report.deployment.gpus[0].index, 0);
}

TEST(IncrementalPlan, NewRemovedAndChangedServices) {
  // s1 is removed, s0's SLO changes (re-planned), s2 is new; the GPU of s1
  // keeps its index for what is placed there.
  DeploymentBuilder b("a100-80gb", "hand");
  b.Gpu();
  Seg(b, "3g.40gb", 4, "s0");
  b.Gpu();
  Seg(b, "2g.20gb", 0, "s1");
  b.Service("s0", 300, 1000, "m").Service("s1", 200, 1000, "m");
  const Deployment current = b.Build();
  Scenario next = testing::TinyScenario({300, 100});
  next.services[0].slo_ms = 900;
  next.services[1].name = "s2";
  const Problem p = *Problem::Build(next, A100(), testing::TinyTable(), BareRule());
  Result<IncrementalPlan> r = Replan(p, current);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->counts.kept + r->counts.removed + r->counts.moved, 2);
  EXPECT_EQ(PlacesOf(r->report.deployment, "s1").size(), 0u);
  EXPECT_EQ(r->report.deployment.metrics.gpus, 1);
  EXPECT_TRUE(ValidateDeployment(r->report.deployment, p).empty());
}

TEST(IncrementalPlan, CompactsWhenKeepingEverythingNeedsTooManyGpus) {
  // Two 3g of unchanged services on two GPUs; from scratch they share one.
  DeploymentBuilder b("a100-80gb", "hand");
  b.Gpu();
  Seg(b, "3g.40gb", 4, "s0");
  b.Gpu();
  Seg(b, "3g.40gb", 4, "s1");
  b.Service("s0", 300, 1000, "m").Service("s1", 300, 1000, "m");
  Result<IncrementalPlan> r = Replan(TinyProblem({300, 300}), b.Build());
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->scratch_gpus, 1);
  EXPECT_TRUE(r->scratch_proven);
  EXPECT_EQ(r->allowed_gpus, 1);
  EXPECT_EQ(r->report.deployment.metrics.gpus, 1);
  EXPECT_EQ(r->counts.kept, 1);
  EXPECT_EQ(r->counts.moved, 1);
  EXPECT_EQ(r->note, "");
}

TEST(IncrementalPlan, UsesThePlanFromScratchWhenTheIncrementalOneExceedsTheAllowance) {
  // s0's 800 req/s as 3g + 2g + 3g (8 compute slices) cannot share one GPU;
  // from scratch a single 7g serves it.
  DeploymentBuilder b("a100-80gb", "hand");
  b.Gpu();
  Seg(b, "2g.20gb", 0, "s0");
  Seg(b, "3g.40gb", 4, "s0");
  b.Gpu();
  Seg(b, "3g.40gb", 4, "s0");
  b.Service("s0", 800, 1000, "m");
  const Deployment current = b.Build();
  Result<IncrementalPlan> r = Replan(TinyProblem({800}), current);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->report.deployment.metrics.gpus, 1);
  EXPECT_NE(r->note.find("plan from scratch is used"), std::string::npos) << r->note;
  EXPECT_EQ(r->counts.removed, 3);
  EXPECT_EQ(r->counts.added, 1);

  // One extra GPU allowed: the incremental plan stands.
  IncrementalOptions one_more;
  one_more.max_extra_gpus = 1;
  r = Replan(TinyProblem({800}), current, one_more);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->allowed_gpus, 2);
  EXPECT_EQ(r->counts.kept, 3);
  EXPECT_EQ(r->note, "");
}

TEST(IncrementalPlan, RejectsAPlanItCannotKeep) {
  DeploymentBuilder other("h100-80gb", "hand");
  other.Gpu();
  other.Service("s0", 300, 1000, "m");
  Result<IncrementalPlan> r = Replan(TinyProblem({300}), other.Build());
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(r.status().message().rfind("gpu: ", 0), 0u) << r.status().message();

  DeploymentBuilder overlap("a100-80gb", "hand");
  overlap.Gpu();
  Seg(overlap, "3g.40gb", 4, "s0");
  overlap.Gpu();
  Seg(overlap, "3g.40gb", 0, "s0");
  Seg(overlap, "2g.20gb", 2, "s0");
  overlap.Service("s0", 300, 1000, "m");
  r = Replan(TinyProblem({300}), overlap.Build());
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().message().rfind("gpus[1]: ", 0), 0u) << r.status().message();

  IncrementalOptions mps;
  mps.planner = "igniter";
  r = Replan(TinyProblem({300}), PlanFromScratch(TinyProblem({300})), mps);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kInvalidArgument);
}

// ParvaGPU's S6 with the embedded profiles and the default rule.
Scenario S6() {
  Result<Scenario> s = LoadScenarioYaml(testing::SourcePath("examples/scenarios/s6.yaml"));
  EXPECT_TRUE(s.ok()) << s.status().ToString();
  return *s;
}

Problem ProblemOf(const Scenario& s) {
  Result<Problem> p = Problem::Build(s, A100(), DefaultProfiles(A100()), LatencyRule{});
  EXPECT_TRUE(p.ok()) << p.status().ToString();
  return *p;
}

Service& Named(Scenario& s, const std::string& name) {
  for (Service& service : s.services) {
    if (service.name == name) return service;
  }
  ADD_FAILURE() << "no service " << name;
  return s.services.front();
}

// Every service but `changed` keeps its instances exactly in place.
void ExpectOnlyChanged(const Deployment& before, const Deployment& after,
                       const std::set<std::string>& changed) {
  for (const ServiceOutcome& s : before.services) {
    if (changed.count(s.name)) continue;
    EXPECT_EQ(PlacesOf(after, s.name), PlacesOf(before, s.name)) << s.name;
  }
}

// On S6 the plan from scratch is proven optimal and leaves no room to
// spare, so with the default allowance (0 extra GPUs) a change that needs a
// GPU more than from scratch takes the plan from scratch, saying why; with
// one extra GPU allowed only the changed services' instances change.
class IncrementalS6 : public ::testing::Test {
 protected:
  void SetUp() override { current_ = PlanFromScratch(ProblemOf(S6())); }

  // Re-plans `next` with the default allowance and with one extra GPU; the
  // latter returned.
  IncrementalPlan BothWays(const Scenario& next, const std::set<std::string>& changed) {
    Result<IncrementalPlan> r = Replan(ProblemOf(next), current_);
    EXPECT_TRUE(r.ok()) << r.status().ToString();
    EXPECT_LE(r->report.deployment.metrics.gpus, r->allowed_gpus);
    EXPECT_TRUE(r->scratch_proven);
    EXPECT_EQ(r->allowed_gpus, r->scratch_gpus);
    if (r->note.empty()) {
      ExpectOnlyChanged(current_, r->report.deployment, changed);
    } else {
      EXPECT_EQ(r->report.deployment.metrics.gpus, r->scratch_gpus);
      EXPECT_NE(r->note.find("plan from scratch is used"), std::string::npos) << r->note;
    }
    IncrementalOptions one_more;
    one_more.max_extra_gpus = 1;
    Result<IncrementalPlan> k1 = Replan(ProblemOf(next), current_, one_more);
    EXPECT_TRUE(k1.ok()) << k1.status().ToString();
    EXPECT_EQ(k1->note, "");
    EXPECT_LE(k1->report.deployment.metrics.gpus, k1->allowed_gpus);
    EXPECT_EQ(k1->allowed_gpus, k1->scratch_gpus + 1);
    EXPECT_EQ(k1->counts.moved, 0);
    ExpectOnlyChanged(current_, k1->report.deployment, changed);
    return *k1;
  }

  Deployment current_;
};

TEST_F(IncrementalS6, Unchanged) {
  Result<IncrementalPlan> r = Replan(ProblemOf(S6()), current_);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->counts.kept, InstancesOf(current_));
  EXPECT_EQ(r->counts.moved + r->counts.added + r->counts.removed, 0);
  EXPECT_EQ(r->report.deployment.metrics.gpus, current_.metrics.gpus);
}

TEST_F(IncrementalS6, OneRateDoubledAddsOnlyThatServicesInstances) {
  Scenario next = S6();
  Named(next, "bert").rate_rps *= 2;
  const IncrementalPlan r = BothWays(next, {"bert"});
  EXPECT_EQ(r.counts.kept, InstancesOf(current_));
  EXPECT_EQ(r.counts.removed, 0);
  EXPECT_GT(r.counts.added, 0);
}

TEST_F(IncrementalS6, ServiceRemovedAndRateReduced) {
  Scenario next = S6();
  next.services.erase(next.services.begin() + 10);  // vgg19
  Named(next, "resnet50").rate_rps *= 0.4;
  const IncrementalPlan r = BothWays(next, {"vgg19", "resnet50"});
  EXPECT_EQ(r.counts.added, 0);
  EXPECT_GE(r.counts.removed, static_cast<int>(PlacesOf(current_, "vgg19").size()) + 1);
  EXPECT_LT(r.report.deployment.metrics.gpus, current_.metrics.gpus);
}

TEST_F(IncrementalS6, TightenedSloReplansOnlyThatService) {
  Scenario next = S6();
  Named(next, "densenet121").slo_ms = 120;
  const IncrementalPlan r = BothWays(next, {"densenet121"});
  EXPECT_EQ(r.counts.removed, static_cast<int>(PlacesOf(current_, "densenet121").size()));
  EXPECT_EQ(r.counts.kept + r.counts.removed, InstancesOf(current_));
}

}  // namespace
}  // namespace tessera
