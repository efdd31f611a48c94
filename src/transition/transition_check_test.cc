// Tests of CheckTransition (transition_check.h) on hand-made transitions: a
// legal one passes with its measured summary; each broken rule is reported
// once, naming the phase, the step and the rule.
#include "tessera/transition/transition_check.h"

#include <gtest/gtest.h>

#include <array>
#include <random>
#include <string>
#include <vector>

#include "deployment_builder.h"
#include "fuzz_mutator.h"
#include "tessera/transition/transition_format.h"

namespace tessera {
namespace {

// A: GPU 0: 4g.40gb@0 bert (400 req/s), 3g.40gb@4 resnet50 (300);
//    GPU 1: 3g.40gb@4 resnet50 (300). bert 300 req/s, resnet50 500.
Deployment PlanA() {
  return DeploymentBuilder("a100-80gb", "parva")
      .BareCapacity()
      .Gpu()
      .Instance("4g.40gb", 0, "bert", 8, 2, 400, 50)
      .Instance("3g.40gb", 4, "resnet50", 32, 2, 300, 60)
      .Gpu()
      .Instance("3g.40gb", 4, "resnet50", 32, 2, 300, 60)
      .Service("bert", 300, 150)
      .Service("resnet50", 500, 200)
      .Build();
}

// B: GPU 0 as in A; GPU 1: 3g.40gb@0 resnet50, 2g.20gb@4 vit (new, 80 req/s).
Deployment PlanB() {
  return DeploymentBuilder("a100-80gb", "parva")
      .BareCapacity()
      .Gpu()
      .Instance("4g.40gb", 0, "bert", 8, 2, 400, 50)
      .Instance("3g.40gb", 4, "resnet50", 32, 2, 300, 60)
      .Gpu()
      .Instance("3g.40gb", 0, "resnet50", 32, 2, 300, 60)
      .Instance("2g.20gb", 4, "vit", 4, 1, 100, 30)
      .Service("bert", 300, 150)
      .Service("resnet50", 500, 200)
      .Service("vit", 80, 100)
      .Build();
}

TransitionStep Create(std::string id, int gpu, std::string profile, int start, std::string service,
                      int batch, int procs, double rps) {
  TransitionStep s;
  s.id = std::move(id);
  s.action = StepAction::kCreate;
  s.gpu = gpu;
  s.profile = std::move(profile);
  s.start = start;
  s.model = service;
  s.service = std::move(service);
  s.batch = batch;
  s.procs = procs;
  s.throughput_rps = rps;
  return s;
}

TransitionStep Destroy(std::string id, int gpu, std::string profile, int start,
                       std::string service) {
  TransitionStep s;
  s.id = std::move(id);
  s.action = StepAction::kDestroy;
  s.gpu = gpu;
  s.profile = std::move(profile);
  s.start = start;
  s.service = std::move(service);
  return s;
}

TransitionStep NewResnet() { return Create("s1", 1, "3g.40gb", 0, "resnet50", 32, 2, 300); }
TransitionStep OldResnet() { return Destroy("s2", 1, "3g.40gb", 4, "resnet50"); }
TransitionStep Vit() { return Create("s3", 1, "2g.20gb", 4, "vit", 4, 1, 100); }

// A legal transition A -> B: make the new resnet50 first, then free slices
// 4-7 of GPU 1, then create vit there. resnet50 never drops below 600 req/s
// (floor 500): ratio 1.2.
Transition Legal() {
  Transition t;
  t.gpu = "a100-80gb";
  t.gpu_map = {{0, 0}, {1, 1}};
  t.phases = {{{NewResnet()}}, {{OldResnet()}}, {{Vit()}}};
  t.summary = {3, 3, 1, 2, 1.2};
  return t;
}

// The check's violations; expects exactly one, containing every one of
// `parts`.
void ExpectOneViolation(const Transition& t, const std::vector<std::string>& parts) {
  const TransitionCheck check = CheckTransition(PlanA(), PlanB(), t);
  ASSERT_EQ(check.violations.size(), 1u) << ::testing::PrintToString(check.violations);
  for (const std::string& part : parts) {
    EXPECT_NE(check.violations[0].find(part), std::string::npos)
        << "'" << part << "' not in: " << check.violations[0];
  }
}

// Whether some violation contains every one of `parts`.
bool HasViolation(const TransitionCheck& check, const std::vector<std::string>& parts) {
  for (const std::string& v : check.violations) {
    bool all = true;
    for (const std::string& part : parts) all = all && v.find(part) != std::string::npos;
    if (all) return true;
  }
  return false;
}

TEST(TransitionCheck, ALegalTransitionPassesWithItsMeasuredSummary) {
  const TransitionCheck check = CheckTransition(PlanA(), PlanB(), Legal());
  EXPECT_TRUE(check.ok()) << ::testing::PrintToString(check.violations);
  EXPECT_EQ(check.measured.steps, 3);
  EXPECT_EQ(check.measured.phases, 3);
  EXPECT_EQ(check.measured.gpus_touched, 1);
  EXPECT_EQ(check.measured.peak_gpus, 2);
  EXPECT_DOUBLE_EQ(check.measured.min_capacity_ratio, 1.2);
}

TEST(TransitionCheck, ANoOpTransitionBetweenEqualPlansPasses) {
  Transition t;
  t.gpu = "a100-80gb";
  t.gpu_map = {{0, 0}, {1, 1}};
  t.summary = {0, 0, 0, 2, 1.2};
  const TransitionCheck check = CheckTransition(PlanA(), PlanA(), t);
  EXPECT_TRUE(check.ok()) << ::testing::PrintToString(check.violations);
}

TEST(TransitionCheck, AReconfigureInPlacePasses) {
  const Deployment a = DeploymentBuilder("a100-80gb", "parva")
                           .BareCapacity()
                           .Gpu()
                           .Instance("7g.80gb", 0, "old", 8, 1, 100, 50)
                           .Service("old", 90, 150)
                           .Build();
  const Deployment b = DeploymentBuilder("a100-80gb", "parva")
                           .BareCapacity()
                           .Gpu()
                           .Instance("7g.80gb", 0, "new", 16, 2, 120, 50)
                           .Service("new", 90, 150)
                           .Build();
  TransitionStep r = Create("s1", 0, "7g.80gb", 0, "new", 16, 2, 120);
  r.action = StepAction::kReconfigure;
  r.from_service = "old";
  Transition t;
  t.gpu = "a100-80gb";
  t.gpu_map = {{0, 0}};
  t.phases = {{{r}}};
  t.summary = {1, 1, 1, 1, 1};
  const TransitionCheck check = CheckTransition(a, b, t);
  EXPECT_TRUE(check.ok()) << ::testing::PrintToString(check.violations);
}

TEST(TransitionCheck, ACreateOnSlicesADestroyOfTheSamePhaseFreesIsRejected) {
  Transition t = Legal();
  t.phases = {{{NewResnet()}}, {{OldResnet(), Vit()}}};
  t.summary.phases = 2;
  ExpectOneViolation(t, {"phase 2, step s3 (create 2g.20gb@4 on GPU 1)",
                         "uses slices of 3g.40gb@4 of resnet50 that step s2 frees in the same "
                         "phase",
                         "(rule a)"});
}

TEST(TransitionCheck, ACreateOnALiveInstanceIsRejected) {
  Transition t = Legal();
  t.phases = {{{NewResnet(), Vit()}}, {{OldResnet()}}};
  t.summary.phases = 2;
  const TransitionCheck check = CheckTransition(PlanA(), PlanB(), t);
  EXPECT_TRUE(HasViolation(
      check, {"phase 1, step s3 (create 2g.20gb@4 on GPU 1)",
              "overlaps 3g.40gb@4 of resnet50, held throughout the phase", "(rule a)"}))
      << ::testing::PrintToString(check.violations);
}

TEST(TransitionCheck, AnIllegalStartIsRejected) {
  Transition t = Legal();
  t.phases[0].steps[0].start = 2;
  const TransitionCheck check = CheckTransition(PlanA(), PlanB(), t);
  EXPECT_TRUE(HasViolation(check, {"phase 1, step s1 (create 3g.40gb@2 on GPU 1)",
                                   "cannot start at memory slice 2", "(rule a)"}))
      << ::testing::PrintToString(check.violations);
}

TEST(TransitionCheck, ACapacityDipBelowTheFloorIsRejected) {
  Transition t = Legal();
  t.phases = {{{OldResnet()}}, {{NewResnet(), Vit()}}};
  t.summary = {3, 2, 1, 2, 0.6};
  ExpectOneViolation(
      t, {"phase 1, steps s2: resnet50 drops to 300 req/s < its floor 500", "(rule b)"});
}

TEST(TransitionCheck, GpusBeyondTheSpareBudgetAreRejected) {
  Transition t = Legal();
  // resnet50 moves through spare GPU 2 and back: 3 GPUs hold instances.
  TransitionStep via = Create("s4", 2, "7g.80gb", 0, "resnet50", 32, 2, 300);
  t.phases.insert(t.phases.begin(), {{via}});
  t.phases.push_back({{Destroy("s5", 2, "7g.80gb", 0, "resnet50")}});
  t.summary = {5, 5, 2, 3, 1.2};
  TransitionCheck check = CheckTransition(PlanA(), PlanB(), t);
  // Every phase holds GPUs 0, 1 and 2.
  EXPECT_EQ(check.violations.size(), 5u) << ::testing::PrintToString(check.violations);
  EXPECT_TRUE(HasViolation(check, {"phase 1: 3 GPUs hold an instance, more than max(GPUs of A, "
                                   "GPUs of B) + 0 spare = 2 (rule c)"}));
  t.spare_gpus = 1;
  check = CheckTransition(PlanA(), PlanB(), t);
  EXPECT_TRUE(check.ok()) << ::testing::PrintToString(check.violations);
}

TEST(TransitionCheck, AMissingInstanceInTheFinalStateIsRejected) {
  Transition t = Legal();
  t.phases.pop_back();
  t.summary = {2, 2, 1, 2, 1.2};
  ExpectOneViolation(t, {"final state: GPU 1 (B's GPU 1): missing 2g.20gb@4 of vit (rule d)"});
}

TEST(TransitionCheck, AnExtraInstanceInTheFinalStateIsRejected) {
  Transition t = Legal();
  t.phases.back().steps.push_back(Create("s4", 1, "1g.10gb", 6, "vit", 1, 1, 20));
  t.summary.steps = 4;
  ExpectOneViolation(t, {"final state: GPU 1 (B's GPU 1): extra 1g.10gb@6 of vit, not in B "
                         "(rule d)"});
}

TEST(TransitionCheck, AWrongBatchInTheFinalStateIsRejected) {
  Transition t = Legal();
  t.phases.back().steps[0].batch = 9;
  ExpectOneViolation(t, {"final state: GPU 1 (B's GPU 1): 2g.20gb@4 runs vit (vit, batch 9 x 1",
                         "where B runs vit (vit, batch 4 x 1", "(rule d)"});
}

TEST(TransitionCheck, AGpuMapThatIsNotOneToOneIsRejected) {
  Transition t = Legal();
  t.gpu_map = {{0, 0}, {1, 0}};
  const TransitionCheck check = CheckTransition(PlanA(), PlanB(), t);
  EXPECT_TRUE(HasViolation(check, {"gpu_map: B's GPUs 0 and 1 both map to cluster GPU 0 "
                                   "(rule d)"}))
      << ::testing::PrintToString(check.violations);
  t.gpu_map = {{0, 0}};
  EXPECT_TRUE(HasViolation(CheckTransition(PlanA(), PlanB(), t),
                           {"gpu_map: B's GPU 1 is not mapped (rule d)"}));
}

TEST(TransitionCheck, DestroyingAnAbsentInstanceIsRejected) {
  Transition t = Legal();
  t.phases[1].steps.push_back(Destroy("s4", 0, "1g.10gb", 0, "bert"));
  t.summary.steps = 4;
  t.summary.gpus_touched = 2;
  ExpectOneViolation(t, {"phase 2, step s4 (destroy 1g.10gb@0 on GPU 0)",
                         "GPU 0 holds no 1g.10gb@0 of bert at the phase's start (rule a)"});
}

TEST(TransitionCheck, ADuplicateStepIdIsRejected) {
  Transition t = Legal();
  t.phases[2].steps[0].id = "s1";
  ExpectOneViolation(t, {"phase 3, step s1: the step id is used more than once"});
}

TEST(TransitionCheck, ASummaryThatLiesIsRejected) {
  Transition t = Legal();
  t.summary.steps = 2;
  t.summary.min_capacity_ratio = 1.5;
  const TransitionCheck check = CheckTransition(PlanA(), PlanB(), t);
  EXPECT_EQ(check.violations.size(), 2u) << ::testing::PrintToString(check.violations);
  EXPECT_TRUE(HasViolation(check, {"summary.steps: records 2, the replay measures 3"}));
  EXPECT_TRUE(
      HasViolation(check, {"summary.min_capacity_ratio: records 1.5, the replay measures 1.2"}));
}

// Under the queueing capacity rule an instance counts for its SLO-safe share
// of its throughput (TransitionCapacity), as the planners count it: a floor
// the raw throughput would keep can be a dip.
TEST(TransitionCheck, CapacityIsTheSloSafeShareOfTheThroughput) {
  Deployment a = PlanA();
  Deployment b = PlanB();
  a.rule.queueing_headroom = true;
  b.rule.queueing_headroom = true;
  const TransitionCapacity shares(a, b);
  const Instance& first = a.gpus.front().instances().front();
  const double share =
      a.rule.CountedRps(first.batch, first.procs, first.throughput_rps, first.latency_ms,
                        a.services.front().slo_ms, a.services.front().rate_rps) /
      first.throughput_rps;
  ASSERT_LT(share, 1);
  EXPECT_DOUBLE_EQ(shares.Of(first), first.throughput_rps * share);
  const TransitionCheck bare = CheckTransition(PlanA(), PlanB(), Legal());
  const TransitionCheck safe = CheckTransition(a, b, Legal());
  EXPECT_LT(safe.measured.min_capacity_ratio, bare.measured.min_capacity_ratio);
}

TEST(TransitionCheck, MpsPlansAreRejected) {
  Deployment a = PlanA();
  a.sharing = Sharing::kMps;
  const TransitionCheck check = CheckTransition(a, PlanB(), Legal());
  EXPECT_TRUE(HasViolation(check, {"A is an MPS plan", "MIG instances only"}))
      << ::testing::PrintToString(check.violations);
}

// Whatever parses, however odd its numbers (starts far off the GPU, GPU
// indices up to the limit), the replay reports on without crashing.
TEST(TransitionCheck, MutatedTransitionsAreReplayedWithoutCrashing) {
  const std::array<std::string, 8> numbers = {"0",  "1",  "7",          "31",
                                              "32", "64", "2147483647", "1000000"};
  const std::string bytes = "{}[],\":0123456789";
  const testing::MutationVocabulary vocabulary = {bytes, numbers};
  const std::string json = FormatTransitionJson(Legal());
  std::mt19937 rng(17);
  int parsed = 0;
  for (int i = 0; i < 3000; ++i) {
    Result<Transition> t = ParseTransitionJson(testing::Mutate(json, rng, vocabulary), "m.json");
    if (!t.ok()) continue;
    ++parsed;
    const TransitionCheck check = CheckTransition(PlanA(), PlanB(), *t);
    if (t->gpu != "a100-80gb") continue;  // the replay stops at a foreign GPU model
    EXPECT_EQ(check.measured.phases, static_cast<int>(t->phases.size()));
  }
  EXPECT_GT(parsed, 100);
}

// 1,000 GPUs, each 7 x 1g.10gb, every instance replaced one phase at a time:
// the replay handles it (the checker runs on 1,000-GPU transitions).
TEST(TransitionCheck, AThousandGpuTransitionReplays) {
  DeploymentBuilder a("a100-80gb", "parva");
  DeploymentBuilder b("a100-80gb", "parva");
  a.BareCapacity();
  b.BareCapacity();
  Transition t;
  t.gpu = "a100-80gb";
  t.spare_gpus = 1;
  for (int g = 0; g < 1000; ++g) {
    a.Gpu();
    b.Gpu();
    t.gpu_map[g] = g + 1;
    for (int s = 0; s < 7; ++s) {
      a.Instance("1g.10gb", s, "svc", 1, 1, 10, 5);
      b.Instance("1g.10gb", s, "svc", 2, 1, 10, 5);
    }
  }
  a.Service("svc", 50'000, 100);
  b.Service("svc", 50'000, 100);
  // Shift every GPU's work one GPU up, from the top (GPU 999 onto the spare
  // 1000) down: per GPU, a phase of creates, then a phase of destroys.
  int id = 0;
  for (int g = 999; g >= 0; --g) {
    TransitionPhase create;
    TransitionPhase destroy;
    for (int s = 0; s < 7; ++s) {
      create.steps.push_back(
          Create("c" + std::to_string(++id), g + 1, "1g.10gb", s, "svc", 2, 1, 10));
      destroy.steps.push_back(Destroy("d" + std::to_string(id), g, "1g.10gb", s, "svc"));
    }
    t.phases.push_back(std::move(create));
    t.phases.push_back(std::move(destroy));
  }
  t.summary = {14'000, 2'000, 1001, 1001, 70'000.0 / 50'000};
  const TransitionCheck check = CheckTransition(a.Build(), b.Build(), t);
  EXPECT_TRUE(check.ok()) << ::testing::PrintToString(check.violations);
  EXPECT_EQ(check.measured.peak_gpus, 1001);
}

}  // namespace
}  // namespace tessera
