#include "tessera/share_latency_model.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

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

}  // namespace
}  // namespace tessera
