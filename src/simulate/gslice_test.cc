#include "tessera/gslice.h"

#include <gtest/gtest.h>
#include <sys/wait.h>

#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <sstream>
#include <string>
#include <vector>

#include "tessera/profile_synth.h"
#include "test_paths.h"

namespace tessera {
namespace {

const GpuModel& A100() { return **FindGpu("a100-80gb"); }

// A hand-made table of model "m": 1g.10gb (share 1/7) and 7g.80gb (share 1)
// at batches 1 and 4, plus entries the model must ignore: two processes on
// 2g.20gb, and 1g.20gb (not the primary 1g profile).
ProfileTable HandTable() {
  ProfileTable t;
  auto add = [&t](const char* profile, int batch, int procs, double latency_ms) {
    ProfileEntry e;
    e.key = {"m", "a100-80gb", profile, batch, procs};
    e.throughput_rps = 1000.0 * batch / latency_ms;
    e.latency_ms = latency_ms;
    EXPECT_TRUE(t.Add(e).ok());
  };
  add("1g.10gb", 1, 1, 14);
  add("1g.10gb", 4, 1, 20);
  add("7g.80gb", 1, 1, 2);
  add("7g.80gb", 4, 1, 8);
  add("2g.20gb", 1, 2, 1);
  add("1g.20gb", 1, 1, 1);
  return t;
}

ShareLatencyModel HandModel() { return *ShareLatencyModel::Build(HandTable(), A100(), "m"); }

// ---- ShareLatencyModel --------------------------------------------------

TEST(GsliceShareLatency, UsesPrimaryProfilesWithOneProcess) {
  const std::vector<double> shares = HandModel().Shares();
  ASSERT_EQ(shares.size(), 2u);
  EXPECT_DOUBLE_EQ(shares[0], 1.0 / 7);
  EXPECT_DOUBLE_EQ(shares[1], 1.0);
}

TEST(GsliceShareLatency, InterpolatesInBatchAndShare) {
  const ShareLatencyModel m = HandModel();
  struct Case {
    const char* name;
    int batch;
    double share;
    double expected_ms;
  } cases[] = {
      {"profiled point", 1, 1.0 / 7, 14},
      {"between batches: 14 + (2 - 1) / (4 - 1) x (20 - 14)", 2, 1.0 / 7, 16},
      {"between shares: halfway from 14 to 2", 1, (1.0 / 7 + 1) / 2, 8},
      {"both: batch 2 is 16 at 1/7 and 4 at 1; halfway", 2, (1.0 / 7 + 1) / 2, 10},
      {"below the smallest share: 14 x (1/7) / (1/14)", 1, 1.0 / 14, 28},
      {"a share above 1 is 1", 1, 1.5, 2},
      {"beyond the largest batch: 8 x 8 / 4", 8, 1, 16},
  };
  for (const Case& c : cases)
    EXPECT_NEAR(m.LatencyMs(c.batch, c.share), c.expected_ms, 1e-9) << c.name;
  EXPECT_NEAR(m.ThroughputRps(4, 1), 500, 1e-9);  // 4 requests per 8 ms
}

TEST(GsliceShareLatency, MissingModelIsNotFound) {
  Result<ShareLatencyModel> m = ShareLatencyModel::Build(HandTable(), A100(), "nope");
  ASSERT_FALSE(m.ok());
  EXPECT_EQ(m.status().code(), StatusCode::kNotFound);
  EXPECT_NE(m.status().message().find("nope"), std::string::npos);
}

// ---- Algorithm 1 ----------------------------------------------------------

TEST(GsliceAlgorithm1, HandCases) {
  const GsliceOptions o;  // threshold 5%, max decrease 0.5, min share 0.05
  struct Case {
    const char* name;
    TuningInput in;  // current, SLO, arrivals, avgL, avgT
    TuningAction action;
    double new_share;
  } cases[] = {
      // diffL = 1/50 = 2%, diffT = 3/100 = 3%: both inside 5%.
      {"keep inside the threshold", {0.4, 50, 100, 49, 103}, TuningAction::kKeep, 0.4},
      // diffL = -2%, but diffT = 20%: outside; residualT > 0 and residualL < 0.
      // changeFactor = max(1/51, 20/120) = 1/6: 0.4 x 7/6.
      {"one residual negative increases",
       {0.4, 50, 100, 51, 120},
       TuningAction::kIncrease,
       0.4 * 7 / 6},
      // The paper's Fig. 16 VGG-19: 65 ms against 50, 15 req/s against 35.
      // changeFactor = max(15/65, 20/15) = 4/3: 0.3 x 7/3 = 0.7.
      {"fig. 16 vgg-19 increases", {0.3, 50, 35, 65, 15}, TuningAction::kIncrease, 0.7},
      // The same at 60%: 0.6 x 7/3 = 1.4, capped at the whole GPU.
      {"increase capped at 1", {0.6, 50, 35, 65, 15}, TuningAction::kIncrease, 1},
      // Both residuals positive: changeFactor = max(10/40, 25/125) = 0.25.
      {"decrease", {0.5, 50, 100, 40, 125}, TuningAction::kDecrease, 0.375},
      // changeFactor = 40/10 = 4 would ask for a negative GPU%: cut by 0.5.
      {"decrease capped by max_decrease", {0.3, 50, 100, 10, 110}, TuningAction::kDecrease, 0.15},
      {"decrease floored at min_share", {0.08, 50, 100, 10, 110}, TuningAction::kDecrease, 0.05},
      // A large latency headroom with a small throughput deficit: the paper's
      // rule increases by the larger magnitude, max(40/10, 10/90) = 4.
      {"deficit with headroom increases by the larger factor",
       {0.1, 50, 100, 10, 90},
       TuningAction::kIncrease,
       0.5},
  };
  for (const Case& c : cases) {
    const TuningDecision d = ComputeNewShare(c.in, o);
    EXPECT_EQ(d.action, c.action) << c.name;
    EXPECT_NEAR(d.new_share, c.new_share, 1e-12) << c.name;
  }
}

// ---- Max-min fair allocation --------------------------------------------

TEST(GsliceMaxMinFair, Allocations) {
  struct Case {
    const char* name;
    std::vector<double> demands;
    double capacity;
    bool spare;
    std::vector<double> expected;
  } cases[] = {
      {"under-subscribed: each gets its demand", {0.2, 0.3}, 1, false, {0.2, 0.3}},
      // 0.5 left, shared 2:3.
      {"under-subscribed, spare shared out", {0.2, 0.3}, 1, true, {0.4, 0.6}},
      // Equal split 1/3 fits 0.1; the other two share 0.9 as 6:7.
      {"over-subscribed", {0.1, 0.6, 0.7}, 1, false, {0.1, 0.9 * 6 / 13, 0.9 * 7 / 13}},
      {"over-subscribed, spare changes nothing",
       {0.1, 0.6, 0.7},
       1,
       true,
       {0.1, 0.9 * 6 / 13, 0.9 * 7 / 13}},
      // An equal split, 0.3 each, fits 0.05 and 0.25; the last gets the 0.6 left.
      {"smallest first, in rounds", {0.05, 0.25, 0.9}, 0.9, false, {0.05, 0.25, 0.6}},
      {"equal demands over capacity", {0.8, 0.8}, 1, false, {0.5, 0.5}},
      {"no demand, no share", {0, 0.5}, 1, true, {0, 1}},
  };
  for (const Case& c : cases) {
    const std::vector<double> got = MaxMinFairShares(c.demands, c.capacity, c.spare);
    ASSERT_EQ(got.size(), c.expected.size()) << c.name;
    for (size_t i = 0; i < got.size(); ++i) EXPECT_NEAR(got[i], c.expected[i], 1e-12) << c.name;
  }
}

// ---- The runtime on the Fig. 16 example -----------------------------------

GsliceWorkload Fig16() {
  Result<Scenario> scenario =
      LoadScenarioYaml(testing::SourcePath("examples/scenarios/gslice-fig16.yaml"));
  EXPECT_TRUE(scenario.ok()) << scenario.status().ToString();
  Result<GsliceWorkload> w = BuildGsliceWorkload(*scenario, A100(), DefaultProfiles(A100()));
  EXPECT_TRUE(w.ok()) << w.status().ToString();
  return *w;
}

GsliceReport RunOk(const GsliceWorkload& w, const GsliceOptions& o) {
  Result<GsliceReport> r = RunGslice(w, o);
  EXPECT_TRUE(r.ok()) << r.status().ToString();
  return *r;
}

// Share of the requests completed in periods ending after `from_s` that met
// the SLO, for service `s`.
double ComplianceAfter(const GsliceReport& r, size_t s, double from_s) {
  double within = 0, completed = 0;
  for (const GslicePeriod& p : r.periods) {
    if (p.start_s < from_s - 1e-9 || p.services[s].completed == 0) continue;
    completed += p.services[s].completed;
    within += p.services[s].compliance * p.services[s].completed;
  }
  return completed > 0 ? within / completed : 0;
}

TEST(GsliceRuntime, Fig16ConvergesWithGsliceAndMissesWithStatic) {
  const GsliceWorkload w = Fig16();
  ASSERT_EQ(w.services[0].name, "vgg19");
  GsliceOptions o;  // gslice, 30 s, 30% each, 5 s reload
  const GsliceReport tuned = RunOk(w, o);
  for (size_t s = 0; s < 2; ++s) {
    EXPECT_GE(ComplianceAfter(tuned, s, 20), 0.99) << w.services[s].name;
  }
  EXPECT_GT(tuned.services[0].final_share, 0.5);  // vgg19 got more
  EXPECT_LT(tuned.services[1].final_share, 0.3);  // resnet50 gave some up
  for (const GslicePeriod& p : tuned.periods) {
    EXPECT_LE(p.services[0].share + p.services[1].share, 1 + 1e-9) << "at " << p.end_s;
  }

  o.policy = GslicePolicy::kStatic;
  const GsliceReport fixed = RunOk(w, o);
  EXPECT_LT(ComplianceAfter(fixed, 0, 20), 0.5);   // vgg19 misses
  EXPECT_GE(ComplianceAfter(fixed, 1, 20), 0.99);  // resnet50 does not
  EXPECT_TRUE(fixed.events.empty());
  EXPECT_DOUBLE_EQ(fixed.services[0].final_share, 0.3);
}

TEST(GsliceRuntime, ShadowReloadDelayIsHonoured) {
  const GsliceWorkload w = Fig16();
  for (double delay : {2.0, 5.0, 12.0}) {
    GsliceOptions o;
    o.reload_delay_s = delay;
    const GsliceReport r = RunOk(w, o);
    double first_request = -1;
    for (const GsliceEvent& e : r.events) {
      if (e.kind == GsliceEventKind::kShareRequested && first_request < 0) first_request = e.time_s;
      if (e.kind != GsliceEventKind::kSwitchOver) continue;
      // Every switch-over follows a request of the same service, the delay earlier.
      bool requested = false;
      for (const GsliceEvent& q : r.events) {
        requested |= q.kind == GsliceEventKind::kShareRequested && q.service == e.service &&
                     q.to_share == e.to_share && q.time_s <= e.time_s - delay + 1e-9;
      }
      EXPECT_TRUE(requested) << "switch-over at " << e.time_s << ", delay " << delay;
    }
    ASSERT_GE(first_request, 0) << delay;
    for (const GslicePeriod& p : r.periods) {
      if (p.end_s >= first_request + delay) break;
      for (const GsliceWindow& s : p.services) EXPECT_DOUBLE_EQ(s.share, 0.3) << p.end_s;
    }
  }
}

TEST(GsliceRuntime, IgniterGuardSwitchesOnceToTheShadow) {
  GsliceOptions o;
  o.policy = GslicePolicy::kIgniterGuard;
  const GsliceReport r = RunOk(Fig16(), o);
  ASSERT_EQ(r.events.size(), 1u);  // vgg19 only; resnet50 meets its SLO
  const GsliceEvent& e = r.events[0];
  EXPECT_EQ(e.kind, GsliceEventKind::kSwitchOver);
  EXPECT_EQ(e.service, 0);
  EXPECT_NEAR(e.to_share - e.from_share, 0.10, 1e-12);
  EXPECT_LT(e.time_s, 1.5);  // at the first period's end, plus the batch in flight
}

TEST(GsliceRuntime, DeterministicForASeed) {
  const GsliceWorkload w = Fig16();
  GsliceOptions o;
  o.seed = 3;
  const std::string a = FormatGsliceReportJson(RunOk(w, o));
  EXPECT_EQ(a, FormatGsliceReportJson(RunOk(w, o)));
  o.seed = 4;
  EXPECT_NE(a, FormatGsliceReportJson(RunOk(w, o)));
}

TEST(GsliceRuntime, RecordsUnderprovisioning) {
  // Batches of one at 5% of the SMs: 5.3 ms x (1/7) / 0.05 = 15 ms per
  // ResNet-50 request, 65 req/s against 300: the queue grows and every batch
  // misses 50 ms.
  GsliceWorkload w = Fig16();
  w.services.erase(w.services.begin());
  GsliceOptions o;
  o.policy = GslicePolicy::kStatic;
  o.initial_share = 0.05;
  o.max_batch = 1;
  o.duration_s = 3;
  const GsliceReport r = RunOk(w, o);
  EXPECT_GT(r.services[0].underprovisioned, 0);
  ASSERT_FALSE(r.events.empty());
  EXPECT_EQ(r.events[0].kind, GsliceEventKind::kUnderprovisioned);
}

// ---- Options --------------------------------------------------------------

TEST(GsliceOptions, ValidationNamesTheField) {
  struct Case {
    const char* field;
    std::function<void(GsliceOptions&)> set;
  } cases[] = {
      {"duration_s", [](GsliceOptions& o) { o.duration_s = 0; }},
      {"period_s", [](GsliceOptions& o) { o.period_s = 60; }},
      {"initial_share", [](GsliceOptions& o) { o.initial_share = 1.5; }},
      {"max_batch", [](GsliceOptions& o) { o.max_batch = 0; }},
      {"tuning_threshold", [](GsliceOptions& o) { o.tuning_threshold = -0.1; }},
      {"apply_threshold", [](GsliceOptions& o) { o.apply_threshold = 1; }},
      {"min_share", [](GsliceOptions& o) { o.min_share = 0; }},
      {"max_decrease", [](GsliceOptions& o) { o.max_decrease = 1; }},
      {"reload_delay_s", [](GsliceOptions& o) { o.reload_delay_s = NAN; }},
      {"switch_downtime_s", [](GsliceOptions& o) { o.switch_downtime_s = -1; }},
      {"hold_down_s", [](GsliceOptions& o) { o.hold_down_s = INFINITY; }},
      {"shadow_extra_share", [](GsliceOptions& o) { o.shadow_extra_share = 0; }},
      {"underprovision_batches", [](GsliceOptions& o) { o.underprovision_batches = 0; }},
      {"burst",
       [](GsliceOptions& o) {
         o.arrivals = ArrivalKind::kBursty;
         o.burst.on_share = 2;
       }},
  };
  EXPECT_TRUE(GsliceOptions().Validate().ok());
  for (const Case& c : cases) {
    GsliceOptions o;
    c.set(o);
    const Status s = o.Validate();
    EXPECT_EQ(s.code(), StatusCode::kInvalidArgument) << c.field;
    EXPECT_TRUE(s.message().starts_with(c.field)) << s.message();
  }
}

TEST(GsliceOptions, ServicesMustFitAtTheirInitialShare) {
  GsliceWorkload w = Fig16();
  w.services.push_back(w.services[0]);
  w.services.push_back(w.services[1]);
  GsliceOptions o;  // 4 x 30% = 120%
  Result<GsliceReport> r = RunGslice(w, o);
  ASSERT_FALSE(r.ok());
  EXPECT_TRUE(r.status().message().starts_with("initial_share")) << r.status().message();
  o.initial_share = 0.25;
  EXPECT_TRUE(RunGslice(w, o).ok());
}

TEST(GsliceOptions, PolicyNamesRoundTrip) {
  for (GslicePolicy p : {GslicePolicy::kStatic, GslicePolicy::kGslice, GslicePolicy::kIgniterGuard})
    EXPECT_EQ(*ParseGslicePolicy(GslicePolicyName(p)), p);
  EXPECT_FALSE(ParseGslicePolicy("mps").ok());
}

TEST(GsliceWorkload, UnprofiledModelNamesFileLineAndField) {
  Result<Scenario> s = ParseScenarioYaml(
      "services:\n  - {name: a, model: resnet50, rate_rps: 10, slo_ms: 50}\n", "x.yaml");
  ASSERT_TRUE(s.ok());
  Result<GsliceWorkload> w = BuildGsliceWorkload(*s, A100(), HandTable());
  ASSERT_FALSE(w.ok());
  EXPECT_NE(w.status().message().find("x.yaml:2: field 'model'"), std::string::npos)
      << w.status().message();
}

// ---- The command ------------------------------------------------------------

struct Outcome {
  int exit_code = -1;
  std::string err;
};

Outcome Tessera(const std::string& args) {
  const std::filesystem::path err = testing::FreshTestDir() / "stderr";
  const std::string cmd =
      std::string(TESSERA_BINARY) + " " + args + " >/dev/null 2>" + err.string();
  const int status = std::system(cmd.c_str());
  std::stringstream text;
  text << std::ifstream(err).rdbuf();
  std::filesystem::remove_all(err.parent_path());
  return {WIFEXITED(status) ? WEXITSTATUS(status) : -1, text.str()};
}

TEST(GsliceCommand, BadInputExitsTwoNamingTheFlagOrFile) {
  const std::string fig16 = testing::SourcePath("examples/scenarios/gslice-fig16.yaml");
  struct Case {
    std::string args;
    std::string named;
  } cases[] = {
      {"--scenario nowhere.yaml", "nowhere.yaml"},
      {"--scenario " + fig16 + " --initial-share 0.6", "--initial-share"},
      {"--scenario " + fig16 + " --duration 0", "--duration"},
      {"--scenario " + fig16 + " --reload-delay soon", "--reload-delay"},
      {"--scenario " + fig16 + " --gpu v100", "--gpu"},
  };
  for (const Case& c : cases) {
    const Outcome o = Tessera("gslice " + c.args);
    EXPECT_EQ(o.exit_code, 2) << c.args;
    EXPECT_NE(o.err.find(c.named), std::string::npos) << c.args << ": " << o.err;
  }
  EXPECT_EQ(Tessera("gslice --scenario " + fig16 + " --duration 2s").exit_code, 0);
}

}  // namespace
}  // namespace tessera
