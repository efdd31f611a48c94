#include "tessera/simulate/gslice_runtime.h"

#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <string>
#include <vector>

#include "tessera/profile/profile_synth.h"
#include "tessera/simulate/gslice_report_format.h"
#include "tessera/simulate/gslice_workload.h"
#include "test_paths.h"

namespace tessera {
namespace {

const GpuModel& A100() { return **FindGpu("a100-80gb"); }

// ---- The runtime on the Fig. 16 example -----------------------------------

GsliceWorkload Fig16() {
  Result<Scenario> scenario =
      LoadScenarioYaml(testing::SourcePath("examples/scenarios/gslice-fig16.yaml"));
  EXPECT_TRUE(scenario.ok()) << scenario.status().ToString();
  Result<GsliceWorkload> w = BuildGsliceWorkload(*scenario, A100(), DefaultProfiles(A100()));
  EXPECT_TRUE(w.ok()) << w.status().ToString();
  return *w;
}

// The paper's Fig. 16 starts both services at 30% ("We assume the 'knee' GPU
// percentages of the IF models are unknown"), not at their knees.
GsliceOptions Fig16Options() {
  GsliceOptions o;
  o.initial_share = 0.3;
  return o;
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
  GsliceOptions o = Fig16Options();  // gslice, 30 s, 30% each, 5 s reload
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
    GsliceOptions o = Fig16Options();
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
  GsliceOptions o = Fig16Options();
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
      {"knee_batch", [](GsliceOptions& o) { o.knee_batch = 0; }},
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
  GsliceOptions o = Fig16Options();  // 4 x 30% = 120%
  Result<GsliceReport> r = RunGslice(w, o);
  ASSERT_FALSE(r.ok());
  EXPECT_TRUE(r.status().message().starts_with("initial_share")) << r.status().message();
  o.initial_share = 0.25;
  EXPECT_TRUE(RunGslice(w, o).ok());
  o.initial_share.reset();  // the knees, scaled down to fit
  EXPECT_TRUE(RunGslice(w, o).ok());
}

TEST(GsliceOptions, PolicyNamesRoundTrip) {
  for (GslicePolicy p : {GslicePolicy::kStatic, GslicePolicy::kGslice, GslicePolicy::kIgniterGuard,
                         GslicePolicy::kDefaultMps, GslicePolicy::kMpsSlab,
                         GslicePolicy::kStaticSlab, GslicePolicy::kClipper})
    EXPECT_EQ(*ParseGslicePolicy(GslicePolicyName(p)), p);
  EXPECT_FALSE(ParseGslicePolicy("mps").ok());
}

}  // namespace
}  // namespace tessera
