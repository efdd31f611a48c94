// The GSLICE paper's baselines (default MPS, MPS + SLAB, static limits with
// SLAB, Clipper), contention between co-located processes, the knee-point
// start and the hold-down, on the example scenarios.
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "tessera/profile/profile_synth.h"
#include "tessera/simulate/gslice_report_format.h"
#include "tessera/simulate/gslice_runtime.h"
#include "tessera/simulate/gslice_workload.h"
#include "test_paths.h"

namespace tessera {
namespace {

const GpuModel& A100() { return **FindGpu("a100-80gb"); }

GsliceWorkload Load(const std::string& scenario) {
  Result<Scenario> s = LoadScenarioYaml(testing::SourcePath("examples/scenarios/" + scenario));
  EXPECT_TRUE(s.ok()) << s.status().ToString();
  Result<GsliceWorkload> w = BuildGsliceWorkload(*s, A100(), DefaultProfiles(A100()));
  EXPECT_TRUE(w.ok()) << w.status().ToString();
  return *w;
}

GsliceReport RunOk(const GsliceWorkload& w, const GsliceOptions& o) {
  Result<GsliceReport> r = RunGslice(w, o);
  EXPECT_TRUE(r.ok()) << r.status().ToString();
  return *r;
}

GsliceReport RunPolicy(const GsliceWorkload& w, GslicePolicy policy, double duration_s) {
  GsliceOptions o;
  o.policy = policy;
  o.duration_s = duration_s;
  return RunOk(w, o);
}

// ---- Conformance: Fig. 10 and Table 3 of the paper -------------------------

// The paper's Fig. 10 (V100, SLO 25 ms): GSLICE's aggregate throughput is
// ~6-13x default MPS's on the combinations C1-C4, and MPS + SLAB's is above
// default MPS's in each (Table 3: its GUE 72.7 vs 38.8, 15.8 vs 6.4, 7.8 vs
// 3.4, 7.3 vs 2.0). Ours: A100 modelled from MIG profiles, AlexNet (which has
// no profile here) replaced by MobileNetV2, C4's fourth model VGG-16
// (examples/scenarios/gslice-fig10-c*.yaml).
//
// Tolerance: we require GSLICE >= 2x default MPS, a third of the paper's low
// end, because (1) the scenarios' rates are ones GSLICE keeps up with, so its
// throughput is the offered load, a lower bound of what it could serve
// (default MPS saturates and serves its capacity); (2) default MPS here
// loses only to the even SM split between busy processes and iGniter's L2
// term, while the paper's default MPS also suffered the heavier model
// grabbing the GPU (its Fig. 1), which the model does not have. The ratio
// transfers as a multiple because most of it is batching (the paper's Fig.
// 12a: default MPS runs one request at a time), which helps on any GPU. We
// measured 6.2x, 3.3x, 3.0x and 2.3x at 10 s.
TEST(GsliceConformance, Fig10GsliceServesMultiplesOfDefaultMps) {
  for (const char* c : {"c1", "c2", "c3", "c4"}) {
    const GsliceWorkload w = Load(std::string("gslice-fig10-") + c + ".yaml");
    const GsliceReport gslice = RunPolicy(w, GslicePolicy::kGslice, 10);
    const GsliceReport mps = RunPolicy(w, GslicePolicy::kDefaultMps, 10);
    const GsliceReport slab = RunPolicy(w, GslicePolicy::kMpsSlab, 10);
    EXPECT_GE(gslice.throughput_rps, 2 * mps.throughput_rps) << c;
    // Table 3's ordering: SLAB alone already beats default MPS.
    EXPECT_GT(slab.throughput_rps, mps.throughput_rps) << c;
    // Default MPS misses the SLO for more requests than GSLICE.
    EXPECT_GT(mps.violations, gslice.violations) << c;
  }
}

// ---- The baselines ----------------------------------------------------------

TEST(GsliceBaselines, DefaultMpsHasNoLimitsAndBatchesOfOne) {
  const GsliceReport r = RunPolicy(Load("gslice-fig16.yaml"), GslicePolicy::kDefaultMps, 3);
  EXPECT_EQ(r.initial_shares, "whole-gpu");
  EXPECT_EQ(r.gpus, 1);
  for (const GslicePeriod& p : r.periods) {
    for (const GsliceWindow& s : p.services) {
      EXPECT_DOUBLE_EQ(s.share, 1.0);
      EXPECT_EQ(s.max_batch, 1);
      // Both saturated (600 and 300 req/s one at a time): they split the SMs.
      EXPECT_NEAR(s.effective_share, 0.5, 0.02) << p.end_s;
      EXPECT_GT(s.interference, 1.0);
    }
  }
}

TEST(GsliceBaselines, ClipperRunsEachModelAloneWithAimd) {
  const GsliceWorkload w = Load("gslice-fig10-c3.yaml");
  GsliceOptions o;
  o.policy = GslicePolicy::kClipper;
  o.duration_s = 5;
  const GsliceReport r = RunOk(w, o);
  EXPECT_EQ(r.gpus, 3);  // one GPU per model
  for (const GslicePeriod& p : r.periods) {
    for (const GsliceWindow& s : p.services) {
      EXPECT_DOUBLE_EQ(s.effective_share, 1.0);  // alone: no SM split
      EXPECT_DOUBLE_EQ(s.interference, 1.0);     // and no neighbour's L2
    }
  }
}

// AIMD: from 1, +1 after a batch whose execution fits the SLO, -10% after one
// that does not. VGG-19 alone at 1,500 req/s (more than the whole A100
// serves), SLO 20 ms: every batch is full, so the batch climbs to M + 1, M the
// largest whose execution fits, backs off to floor(0.9 (M + 1)), and climbs
// again; while saturated it stays between the two.
TEST(GsliceBaselines, ClipperAimdSettlesAtTheLargestBatchWithinTheSlo) {
  GsliceWorkload w = Load("gslice-fig16.yaml");
  w.services.erase(w.services.begin() + 1, w.services.end());  // vgg19
  w.services[0].rate_rps = 1500;
  w.services[0].slo_ms = 20;
  GsliceOptions o;
  o.policy = GslicePolicy::kClipper;
  o.duration_s = 3;
  const GsliceReport r = RunOk(w, o);
  const ShareLatencyModel& vgg = w.services[0].performance;
  int largest = 1;
  while (vgg.LatencyMs(largest + 1, 1.0) <= 20) ++largest;
  ASSERT_LT(largest + 1, o.max_batch);  // the ceiling does not bind
  // At the last tick, still saturated (the drain after it adds +1 per batch).
  const int batch = r.periods.back().services[0].max_batch;
  EXPECT_GE(batch, static_cast<int>(std::floor(0.9 * (largest + 1))));
  EXPECT_LE(batch, largest + 1);
  EXPECT_GT(r.periods.front().services[0].max_batch, 1);  // it grew from 1 within 1 s
}

TEST(GsliceBaselines, StaticSlabKeepsTheKneeLimitsAndAdaptsTheBatch) {
  const GsliceWorkload w = Load("gslice-fig10-c3.yaml");
  const GsliceReport r = RunPolicy(w, GslicePolicy::kStaticSlab, 5);
  EXPECT_TRUE(r.events.empty() || r.events.front().kind == GsliceEventKind::kUnderprovisioned);
  bool adapted = false;
  for (size_t s = 0; s < w.services.size(); ++s) {
    const GsliceServiceSummary& sum = r.services[s];
    EXPECT_DOUBLE_EQ(sum.final_share, sum.initial_share) << sum.name;
    EXPECT_EQ(sum.switch_overs, 0);
    adapted |= sum.final_max_batch != 32;
  }
  EXPECT_TRUE(adapted);  // SLAB moved at least one batch off its start
}

// ---- The knee-point start -----------------------------------------------------

TEST(GsliceKnee, KneesAreTheDefaultStartAndFitTheGpu) {
  const GsliceWorkload w = Load("gslice-fig10-c4.yaml");
  const GsliceReport r = RunPolicy(w, GslicePolicy::kStatic, 2);
  EXPECT_EQ(r.initial_shares, "knee");
  double sum = 0, knees = 0;
  for (size_t s = 0; s < w.services.size(); ++s) {
    EXPECT_DOUBLE_EQ(r.services[s].knee_share, w.services[s].performance.KneeShare(1));
    EXPECT_LE(r.services[s].initial_share, r.services[s].knee_share + 1e-12);
    sum += r.services[s].initial_share;
    knees += r.services[s].knee_share;
  }
  EXPECT_LE(sum, 1 + 1e-9);
  // The four knees ask for 15 + 15 + 43 + 43 = 116%: scaled down to fit.
  EXPECT_GT(knees, 1);
  EXPECT_NEAR(sum, 1, 1e-9);
}

// ---- Contention ---------------------------------------------------------------

TEST(GsliceContention, SlowsNeighboursAndCanBeTurnedOff) {
  const GsliceWorkload w = Load("gslice-fig16.yaml");
  GsliceOptions o;
  o.policy = GslicePolicy::kDefaultMps;
  o.duration_s = 3;
  const GsliceReport on = RunOk(w, o);
  o.contention = false;
  const GsliceReport off = RunOk(w, o);
  EXPECT_TRUE(on.contention);
  EXPECT_FALSE(off.contention);
  for (size_t s = 0; s < 2; ++s) {
    EXPECT_GT(on.services[s].p99_ms, off.services[s].p99_ms) << s;
    EXPECT_LT(on.services[s].throughput_rps, off.services[s].throughput_rps) << s;
  }
  for (const GslicePeriod& p : off.periods) {
    for (const GsliceWindow& s : p.services) {
      EXPECT_DOUBLE_EQ(s.effective_share, s.share);
      EXPECT_DOUBLE_EQ(s.interference, 1.0);
    }
  }
  // Limits that fit the GPU split no SMs; only the L2 term remains.
  GsliceOptions g;
  g.initial_share = 0.3;
  g.duration_s = 10;
  const GsliceReport tuned = RunOk(w, g);
  for (const GslicePeriod& p : tuned.periods) {
    for (const GsliceWindow& s : p.services) {
      EXPECT_DOUBLE_EQ(s.effective_share, s.share);
      EXPECT_GT(s.interference, 1.0);
      // iGniter's term: a few percent; one neighbour holding at most the
      // rest of the GPU costs less than alpha_cache x 31.7 (< 0.0024 x 31.7).
      EXPECT_LT(s.interference, 1.076);
    }
  }
}

// ---- The hold-down --------------------------------------------------------------

// Whether some service asks for a new GPU% less than `window_s` after its
// own last switch-over.
bool RetunedWithin(const GsliceReport& r, double window_s) {
  std::vector<double> last_switch(r.services.size(), -1);
  for (const GsliceEvent& e : r.events) {
    if (e.kind == GsliceEventKind::kSwitchOver) last_switch[e.service] = e.time_s;
    if (e.kind == GsliceEventKind::kShareRequested && last_switch[e.service] >= 0 &&
        e.time_s < last_switch[e.service] + window_s - 1e-9) {
      return true;
    }
  }
  return false;
}

TEST(GsliceHoldDown, NoNewShareUntilTheHoldDownHasPassed) {
  const GsliceWorkload w = Load("gslice-fig10-c3.yaml");
  GsliceOptions o;
  o.duration_s = 30;
  // Without a hold-down, a service is retuned 3 s after its switch-over...
  ASSERT_TRUE(RetunedWithin(RunOk(w, o), 10));
  // ...with the paper's 10 s, never before 10 s have passed.
  o.hold_down_s = 10;
  const GsliceReport held = RunOk(w, o);
  EXPECT_FALSE(RetunedWithin(held, 10));
  int requests = 0;
  for (const GsliceEvent& e : held.events) requests += e.kind == GsliceEventKind::kShareRequested;
  EXPECT_GT(requests, 3);  // it still retunes after the hold-down
}

// ---- The report -------------------------------------------------------------------

TEST(GsliceReportJson, CarriesTheComparisonFields) {
  const GsliceReport r = RunPolicy(Load("gslice-fig10-c1.yaml"), GslicePolicy::kClipper, 2);
  const std::string json = FormatGsliceReportJson(r);
  for (const char* field :
       {"\"gpus\": 2", "\"contention\": true", "\"initial_shares\": \"whole-gpu\"",
        "\"throughput_rps\"", "\"violations\"", "\"knee_share\"", "\"effective_share\"",
        "\"interference\"", "\"busy\""}) {
    EXPECT_NE(json.find(field), std::string::npos) << field;
  }
  const std::string table = FormatGsliceReportTable(r);
  EXPECT_NE(table.find("GPUs 2"), std::string::npos) << table;
}

}  // namespace
}  // namespace tessera
