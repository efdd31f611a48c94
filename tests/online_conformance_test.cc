// Online placement on the real Alibaba GPU cluster trace 2023: as recorded
// every policy accepts every VM; stressed (one GPU per host, VMs never leave)
// GRMU shows the paper's effects. Skips when ../shared/data is absent.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <string>

#include "tessera/alibaba_trace.h"
#include "tessera/online_placer.h"
#include "tessera/replay.h"
#include "test_paths.h"

namespace tessera {
namespace {

constexpr const char* kTraceDir = "alibaba-gpu-2023/csv/";

VmTrace LoadShaped(const TraceShaping& shaping) {
  const std::string dir = testing::SharedDataPath(kTraceDir);
  VmTrace trace = LoadAlibabaTrace(dir + "openb_node_list_gpu_node.csv",
                                   dir + "openb_pod_list_default.csv", **FindGpu("a100-40gb"))
                      .value();
  return ShapeTrace(std::move(trace), shaping).value();
}

// The stressed replay: one GPU per host, VMs never leave.
VmTrace LoadStressed() {
  TraceShaping shaping;
  shaping.gpus_per_host = 1;
  shaping.lifetime.mode = Lifetime::Mode::kNone;
  return LoadShaped(shaping);
}

// Every policy's report; the cluster's invariants are checked every 64 events.
std::map<std::string, ReplayReport> ReplayEveryPolicy(const VmTrace& trace) {
  std::map<std::string, ReplayReport> reports;
  for (const std::string& policy : BuiltinPlacers().Names()) {
    auto placer = BuiltinPlacers().Create(policy, PlacerOptions{}).value();
    int events = 0;
    ReplayOptions options;
    options.after_event = [&](const OnlineCluster& c) {
      if (++events % 64 == 0) {
        ASSERT_TRUE(c.CheckInvariants().ok()) << policy;
      }
    };
    reports[policy] = Replay(trace, *placer, options).value();
  }
  return reports;
}

double ProfileAcceptance(const ReplayReport& r, const GpuModel& gpu, std::string_view profile) {
  for (const ProfileTally& p : r.per_profile) {
    if (gpu.profiles[p.profile].name == profile)
      return static_cast<double>(p.accepted) / p.requests;
  }
  return -1;
}

class OnlineConformance : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!testing::SharedDataPresent(kTraceDir)) {
      GTEST_SKIP() << "../shared/data/alibaba-gpu-2023 is absent: the real-trace checks need it";
    }
  }
};

TEST_F(OnlineConformance, AsRecordedTheTraceBarelyLoadsItsClusterAndEveryPolicyAcceptsAll) {
  const VmTrace trace = LoadShaped({});
  for (const auto& [policy, r] : ReplayEveryPolicy(trace)) {
    EXPECT_EQ(r.requests, 8063) << policy;
    EXPECT_EQ(r.accepted, 8063) << policy;
    EXPECT_LT(r.peak_resident_vms, 100) << policy;  // a few dozen on 6,212 GPUs
  }
}

TEST_F(OnlineConformance, StressedGrmuAcceptsMostWithTheLeastActiveHardware) {
  const VmTrace trace = LoadStressed();
  const std::map<std::string, ReplayReport> r = ReplayEveryPolicy(trace);
  const ReplayReport& grmu = r.at("grmu");
  for (const auto& [policy, report] : r) {
    // fair ties GRMU on acceptance (the next test); GRMU beats the paper's
    // four baselines.
    if (policy == "grmu" || policy == "fair") continue;
    EXPECT_GT(grmu.accepted, report.accepted) << policy;
    EXPECT_LT(grmu.active_hw_auc, report.active_hw_auc) << policy;
    EXPECT_EQ(report.intra_migrations + report.inter_migrations, 0) << policy;
  }
  EXPECT_LE(grmu.migration_share, 0.01);
  // The paper's per-profile shape against MCC: more 3g and 4g, fewer 7g.
  const GpuModel& gpu = *trace.gpu;
  const ReplayReport& mcc = r.at("mcc");
  for (const char* gains : {"3g.20gb", "4g.20gb"}) {
    EXPECT_GT(ProfileAcceptance(grmu, gpu, gains), ProfileAcceptance(mcc, gpu, gains)) << gains;
  }
  EXPECT_LT(ProfileAcceptance(grmu, gpu, "7g.40gb"), ProfileAcceptance(mcc, gpu, "7g.40gb"));
}

// The starvation floor of docs/online-placement.md: half of the fair rate,
// the GPUs over the GPU demand of all requests (each counting 1 /
// max_instances of its profile), at most 1.
double StarvationFloor(const VmTrace& trace) {
  double demand = 0;
  for (const VmRequest& vm : trace.vms)
    demand += 1.0 / trace.gpu->profiles[vm.profile].max_instances;
  int gpus = 0;
  for (const HostSpec& host : trace.hosts) gpus += host.gpus;
  return 0.5 * std::min(1.0, gpus / demand);
}

// On an A100-40GB a 4g.20gb and a 7g.40gb each need memory slices 0-3, so no
// GPU holds two of them: at most one per GPU, plus every smaller request.
int AcceptanceBound(const VmTrace& trace) {
  int whole = 0, smaller = 0, gpus = 0;
  for (const VmRequest& vm : trace.vms) {
    const std::string& name = trace.gpu->profiles[vm.profile].name;
    (name == "4g.20gb" || name == "7g.40gb" ? whole : smaller) += 1;
  }
  for (const HostSpec& host : trace.hosts) gpus += host.gpus;
  return std::min(whole, gpus) + smaller;
}

// Stressed, GRMU already accepts the most any policy can (364 7g.40gb + 849
// 4g.20gb + every smaller VM = 2,608), but only 6.95% of the 7g.40gb: below
// the floor. fair accepts as many and keeps every profile above the floor.
TEST_F(OnlineConformance, StressedFairAcceptsTheMostPossibleAndStarvesNoProfile) {
  const VmTrace trace = LoadStressed();
  const std::map<std::string, ReplayReport> r = ReplayEveryPolicy(trace);
  const int bound = AcceptanceBound(trace);
  EXPECT_EQ(bound, 2608);
  for (const auto& [policy, report] : r) EXPECT_LE(report.accepted, bound) << policy;
  const ReplayReport& fair = r.at("fair");
  const ReplayReport& grmu = r.at("grmu");
  EXPECT_EQ(grmu.accepted, bound);
  EXPECT_EQ(fair.accepted, bound);
  const double floor = StarvationFloor(trace);
  EXPECT_NEAR(floor, 0.087, 0.001);  // 1,213 GPUs for 6,971 GPUs of demand, halved
  const GpuModel& gpu = *trace.gpu;
  for (const ProfileTally& p : fair.per_profile) {
    EXPECT_GE(ProfileAcceptance(fair, gpu, gpu.profiles[p.profile].name), floor)
        << gpu.profiles[p.profile].name;
  }
  EXPECT_LT(ProfileAcceptance(grmu, gpu, "7g.40gb"), floor);
  EXPECT_GT(ProfileAcceptance(fair, gpu, "7g.40gb"), 1.3 * ProfileAcceptance(grmu, gpu, "7g.40gb"));
}

// Unstressed, and with departures on a small cluster, the learned cap costs
// little against GRMU's fixed 30%.
TEST_F(OnlineConformance, FairKeepsUpWithGrmuWithDepartures) {
  TraceShaping shaping;
  shaping.max_hosts = 100;
  shaping.gpus_per_host = 1;
  shaping.lifetime = Lifetime::Parse("scale:10").value();
  const VmTrace trace = LoadShaped(shaping);
  const std::map<std::string, ReplayReport> r = ReplayEveryPolicy(trace);
  EXPECT_GE(r.at("fair").accepted, r.at("grmu").accepted);
}

}  // namespace
}  // namespace tessera
