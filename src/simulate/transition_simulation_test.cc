#include "tessera/simulate/transition_simulation.h"

#include <gtest/gtest.h>

#include <string>

#include "deployment_builder.h"
#include "tiny_problem.h"

namespace tessera {
namespace {

using testing::TinyProblem;

constexpr double kStepS = 20;

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

// A create of model "m" at batch 1, one process (TinyTable's entries).
TransitionStep Create(std::string id, int gpu, std::string profile, int start, std::string service,
                      double throughput_rps) {
  TransitionStep s = Destroy(std::move(id), gpu, std::move(profile), start, std::move(service));
  s.action = StepAction::kCreate;
  s.model = "m";
  s.throughput_rps = throughput_rps;
  return s;
}

Transition Phases(std::vector<std::vector<TransitionStep>> phases) {
  Transition t;
  t.gpu = "a100-80gb";
  for (auto& steps : phases) t.phases.push_back({std::move(steps)});
  return t;
}

// Service s0 of model "m" at 100 req/s on GPU 0: 3g.40gb@0 and 3g.40gb@4
// (batch 1 in 8 ms: 125 req/s each as the simulator runs them), or only the
// one at 4.
Deployment TwoOnGpu0(bool both = true) {
  DeploymentBuilder b("a100-80gb", "test");
  b.Gpu();
  if (both) b.Instance("3g.40gb", 0, "s0", 1, 1, 300, 8, "m");
  return b.Instance("3g.40gb", 4, "s0", 1, 1, 300, 8, "m").Service("s0", 100, 1000, "m").Build();
}

Result<TransitionSimReport> RunTransition(const Deployment& a, const Transition& t,
                                          std::uint64_t seed = 3,
                                          std::optional<Router> router = std::nullopt) {
  SimOptions options;
  options.seed = seed;
  options.router = router;
  return SimulateTransition(a, t, TinyProblem({100}), options, kStepS);
}

TEST(TransitionSim, AnEmptyTransitionIsAPlainSimulationOfA) {
  const Deployment a = TwoOnGpu0();
  Result<TransitionSimReport> r = RunTransition(a, Phases({}));
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  SimOptions options;
  options.seed = 3;
  options.duration_s = 2 * kStepS;
  Result<SimReport> plain = Simulate(*BuildServingModel(a, TinyProblem({100})), options);
  ASSERT_TRUE(plain.ok()) << plain.status().ToString();
  EXPECT_EQ(FormatSimReportJson(r->overall), FormatSimReportJson(*plain));
  ASSERT_EQ(r->windows.size(), 2u);
  EXPECT_EQ(r->windows[0].name, "before");
  EXPECT_EQ(r->windows[1].name, "after");
  EXPECT_EQ(r->windows[1].start_s, kStepS);
  EXPECT_EQ(r->windows[1].end_s, 2 * kStepS);
  EXPECT_EQ(r->windows[0].services[0].requests + r->windows[1].services[0].requests,
            plain->services[0].requests);
}

// Both routers, and the plan's (weighted).
const std::optional<Router> kRouters[] = {std::nullopt, Router::kShortestQueue};

// One instance moves to a spare GPU, destroyed in phase 1 and created in
// phase 2; the other (125 req/s for 100) carries the service meanwhile.
TEST(TransitionSim, AMoveKeepsComplianceWhenTheRestCarriesTheLoad) {
  for (const std::optional<Router> router : kRouters) {
    SCOPED_TRACE(router ? "jsq" : "weighted");
    Result<TransitionSimReport> r =
        RunTransition(TwoOnGpu0(),
                      Phases({{Destroy("s1", 0, "3g.40gb", 4, "s0")},
                              {Create("s2", 1, "3g.40gb", 0, "s0", 300)}}),
                      3, router);
    ASSERT_TRUE(r.ok()) << r.status().ToString();
    EXPECT_EQ(r->overall.duration_s, 4 * kStepS);
    EXPECT_EQ(r->overall.services[0].dropped, 0);
    EXPECT_GE(r->overall.services[0].compliance, kComplianceTarget);
    ASSERT_EQ(r->windows.size(), 4u);
    EXPECT_EQ(r->windows[1].name, "phase 1");
    EXPECT_EQ(r->windows[2].name, "phase 2");
    EXPECT_EQ(r->windows[2].start_s, 2 * kStepS);
    for (const TransitionWindowReport& w : r->windows) {
      EXPECT_GT(w.services[0].requests, 0) << w.name;
      EXPECT_GE(w.services[0].compliance, kComplianceTarget) << w.name;
    }
    // GPU 0's 3g@0, its 3g@4 (requests in the first quarter of the run
    // only) and the spare GPU's (the last quarter only): 100 req/s at 125.
    ASSERT_EQ(r->overall.instances.size(), 3u);
    EXPECT_EQ(r->overall.gpus.size(), 2u);
    EXPECT_GT(r->overall.instances[1].busy_share, 0);
    EXPECT_LT(r->overall.instances[1].busy_share, 0.25);
    EXPECT_EQ(r->overall.instances[2].gpu, 1);
    EXPECT_GT(r->overall.instances[2].busy_share, 0);
    EXPECT_LT(r->overall.instances[2].busy_share, 0.25);
  }
}

// The lives the rehearsal runs are the simulator's: A's instances, then
// what the steps start on the spare GPU, each with the phases bounding it,
// its acceptance window, and its planned batch's latency from the profiles.
TEST(TransitionSim, LivesListEveryInstanceWithItsPhasesAndLatency) {
  Result<TransitionLives> lives = BuildTransitionLives(
      TwoOnGpu0(),
      Phases({{Destroy("s1", 0, "3g.40gb", 4, "s0")}, {Create("s2", 1, "3g.40gb", 0, "s0", 300)}}),
      TinyProblem({100}), kStepS);
  ASSERT_TRUE(lives.ok()) << lives.status().ToString();
  ASSERT_EQ(lives->deployment.gpus.size(), 2u);
  EXPECT_EQ(lives->deployment.gpus[1].index, 1);
  const std::vector<std::pair<int, int>> phases = {{0, 0}, {0, 1}, {2, 0}};
  EXPECT_EQ(lives->phases, phases);
  ASSERT_EQ(lives->model.instances.size(), 3u);
  EXPECT_EQ(lives->model.instances[1].accepts_until_s, kStepS);
  EXPECT_EQ(lives->model.instances[2].accepts_from_s, 3 * kStepS);
  const Instance& created = lives->deployment.gpus[1].instances()[0];
  EXPECT_EQ(created.latency_ms, lives->model.instances[2].latency_ms[created.batch - 1]);
  EXPECT_GT(created.latency_ms, 0);
}

// The only instance is destroyed and its replacement created in the same
// phase: nothing takes s0's requests during that phase.
TEST(TransitionSim, RemovingEveryInstanceOfAServiceDropsItsRequestsMeanwhile) {
  for (const std::optional<Router> router : kRouters) {
    SCOPED_TRACE(router ? "jsq" : "weighted");
    Result<TransitionSimReport> r = RunTransition(
        TwoOnGpu0(false),
        Phases({{Destroy("s1", 0, "3g.40gb", 4, "s0"), Create("s2", 1, "3g.40gb", 4, "s0", 300)}}),
        3, router);
    ASSERT_TRUE(r.ok()) << r.status().ToString();
    ASSERT_EQ(r->windows.size(), 3u);
    const ServiceReport& during = r->windows[1].services[0];
    EXPECT_GT(during.requests, 0);
    EXPECT_EQ(during.dropped, during.requests);
    EXPECT_EQ(during.compliance, 0);
    EXPECT_EQ(r->windows[0].services[0].dropped, 0);
    EXPECT_EQ(r->windows[2].services[0].dropped, 0);
    EXPECT_EQ(r->overall.services[0].dropped, during.requests);
  }
}

TEST(TransitionSim, FormatsEveryWindow) {
  Result<TransitionSimReport> r = RunTransition(
      TwoOnGpu0(false),
      Phases({{Destroy("s1", 0, "3g.40gb", 4, "s0"), Create("s2", 1, "3g.40gb", 4, "s0", 300)}}));
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  const std::string table = FormatTransitionSimTable(*r);
  EXPECT_TRUE(table.starts_with(FormatSimReportTable(r->overall))) << table;
  EXPECT_NE(table.find("\n  phase 1         20       40  s0"), std::string::npos) << table;
  EXPECT_NE(table.find("0.00  MISS\n"), std::string::npos) << table;
  const std::string json = FormatTransitionSimJson(*r);
  EXPECT_NE(json.find("\"windows\": [\n    {\n      \"name\": \"before\",\n      \"start_s\": 0,\n"
                      "      \"end_s\": 20,\n      \"services\": ["),
            std::string::npos)
      << json;
  EXPECT_NE(json.find("\"name\": \"after\""), std::string::npos) << json;
}

TEST(TransitionSim, SameSeedSameReport) {
  const Transition t =
      Phases({{Destroy("s1", 0, "3g.40gb", 4, "s0")}, {Create("s2", 1, "3g.40gb", 0, "s0", 300)}});
  Result<TransitionSimReport> a = RunTransition(TwoOnGpu0(), t, 11);
  Result<TransitionSimReport> b = RunTransition(TwoOnGpu0(), t, 11);
  ASSERT_TRUE(a.ok() && b.ok());
  EXPECT_EQ(FormatSimReportJson(a->overall), FormatSimReportJson(b->overall));
  for (size_t w = 0; w < a->windows.size(); ++w) {
    EXPECT_EQ(a->windows[w].services[0].requests, b->windows[w].services[0].requests);
    EXPECT_EQ(a->windows[w].services[0].p99_ms, b->windows[w].services[0].p99_ms);
  }
}

TEST(TransitionSim, AStepThatDoesNotApplyIsNamed) {
  // No 3g@4 of s0 on GPU 0 once s1 destroyed it.
  Result<TransitionSimReport> r = RunTransition(
      TwoOnGpu0(),
      Phases({{Destroy("s1", 0, "3g.40gb", 4, "s0")}, {Destroy("s7", 0, "3g.40gb", 4, "s0")}}));
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(r.status().message().find("step 's7'"), std::string::npos) << r.status().message();
  // A create over a live instance.
  r = RunTransition(TwoOnGpu0(), Phases({{Create("c1", 0, "3g.40gb", 0, "s0", 300)}}));
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("step 'c1'"), std::string::npos) << r.status().message();
  SimOptions options;
  EXPECT_FALSE(SimulateTransition(TwoOnGpu0(), Phases({}), TinyProblem({100}), options, 0).ok());
}

}  // namespace
}  // namespace tessera
