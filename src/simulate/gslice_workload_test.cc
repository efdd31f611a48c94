#include "tessera/simulate/gslice_workload.h"

#include <gtest/gtest.h>

#include <string>

namespace tessera {
namespace {

const GpuModel& A100() { return **FindGpu("a100-80gb"); }

// A table with one entry of model "m", and none of the scenario's model.
ProfileTable OtherModelTable() {
  ProfileTable t;
  ProfileEntry e;
  e.key = {"m", "a100-80gb", "1g.10gb", 1, 1};
  e.throughput_rps = 1000.0 / 14;
  e.latency_ms = 14;
  EXPECT_TRUE(t.Add(e).ok());
  return t;
}

TEST(GsliceWorkload, UnprofiledModelNamesFileLineAndField) {
  Result<Scenario> s = ParseScenarioYaml(
      "services:\n  - {name: a, model: resnet50, rate_rps: 10, slo_ms: 50}\n", "x.yaml");
  ASSERT_TRUE(s.ok());
  Result<GsliceWorkload> w = BuildGsliceWorkload(*s, A100(), OtherModelTable());
  ASSERT_FALSE(w.ok());
  EXPECT_NE(w.status().message().find("x.yaml:2: field 'model'"), std::string::npos)
      << w.status().message();
}

}  // namespace
}  // namespace tessera
