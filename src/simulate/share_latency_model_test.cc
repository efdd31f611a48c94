#include "tessera/simulate/share_latency_model.h"

#include <gtest/gtest.h>

#include <string>
#include <utility>
#include <vector>

#include "tessera/profile/igniter_model.h"
#include "tessera/profile/profile_synth.h"
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

TEST(GsliceKnee, KneedleOnHandCurves) {
  // Linear all the way: no knee beyond the first point.
  const std::vector<std::pair<double, double>> linear = {{0.25, 1}, {0.5, 2}, {1, 4}};
  EXPECT_DOUBLE_EQ(KneePoint(linear), 0.25);
  // Flat after 40%: the knee is at 40%.
  const std::vector<std::pair<double, double>> flat = {
      {0.2, 50}, {0.4, 100}, {0.6, 101}, {0.8, 102}, {1, 103}};
  EXPECT_DOUBLE_EQ(KneePoint(flat), 0.4);
  // The hand table's model at batch 4: 1/7 -> 200 req/s, 1 -> 500 req/s,
  // linear between, proportional below 1/7: its knee is the profiled 1/7.
  Result<ShareLatencyModel> m = ShareLatencyModel::Build(HandTable(), A100(), "m");
  ASSERT_TRUE(m.ok());
  EXPECT_NEAR(m->KneeShare(4), 0.15, 1e-12);  // the first 1% step above 1/7
}

// Conformance with the paper's section 2.1.3 and Fig. 2 (V100, batch 1):
// "the throughput and latency reach a point of diminishing return ... for
// GNMT, VGG-19 after 70%, for Resnet-50 at ~60%". On the V100 curves of
// iGniter's fitted model (the same GPU as the paper's; throughput of one
// process at 1-100% of the SMs), Kneedle puts VGG-19's knee above
// ResNet-50's, as the paper does, and both well inside the GPU (the paper's
// point: a whole GPU is wasted on one model). Tolerance: only the order and
// the band [25%, 75%] are asserted, because the paper reads its knees off a
// plot by eye ("diminishing returns"), which sits later on the curve than
// Kneedle's point (the slope falling below the whole GPU's average): here
// about 45% and 32%, against 70% and ~60%.
TEST(GsliceKnee, VggKneeAboveResnetKneeOnIgnitersV100Curves) {
  constexpr char kFile[] = "igniter/derived/fitted_coefficients_v100.json";
  TESSERA_SKIP_WITHOUT_SHARED_DATA(kFile);
  Result<MpsCoefficients> c = LoadMpsCoefficients(testing::SharedDataPath(kFile));
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  auto knee = [&](const char* model) {
    std::vector<std::pair<double, double>> curve;
    for (int r = 1; r <= 100; ++r) {
      curve.emplace_back(r / 100.0,
                         PredictAlone(c->hardware, *c->Find(model), 1, r).throughput_rps);
    }
    return KneePoint(curve);
  };
  const double vgg = knee("vgg19"), resnet = knee("resnet50");
  EXPECT_GT(vgg, resnet);
  for (double k : {vgg, resnet}) {
    EXPECT_GE(k, 0.25);
    EXPECT_LE(k, 0.75);
  }
}

// Conformance with the paper's Fig. 3 (AlexNet, V100): "with larger batch
// sizes, the knee shifts towards larger GPU%". On the A100 profiles, for
// every model of the example scenarios, the knee at batch 8 is at least the
// knee at batch 1. Tolerance: none beyond the 1% grid; an ordering holds on
// any GPU where a larger batch has more parallel work.
TEST(GsliceKnee, LargerBatchesMoveTheKneeRight) {
  const ProfileTable profiles = DefaultProfiles(A100());
  for (const char* model : {"mobilenetv2", "resnet50", "vgg16", "vgg19"}) {
    Result<ShareLatencyModel> m = ShareLatencyModel::Build(profiles, A100(), model);
    ASSERT_TRUE(m.ok()) << model;
    EXPECT_GE(m->KneeShare(8), m->KneeShare(1)) << model;
  }
  // Host-bound at batch 1 (ResNet-50 takes 5.35 ms from 2/7 of the SMs up):
  // its knee is the smallest profiled share; at batch 8 it moves to 3/7.
  Result<ShareLatencyModel> resnet = ShareLatencyModel::Build(profiles, A100(), "resnet50");
  EXPECT_LT(resnet->KneeShare(1), 0.2);
  EXPECT_NEAR(resnet->KneeShare(8), 0.43, 0.005);
}

}  // namespace
}  // namespace tessera
