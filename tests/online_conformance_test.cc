// Online placement on the real Alibaba GPU cluster trace 2023: as recorded
// every policy accepts every VM; stressed (one GPU per host, VMs never leave)
// GRMU shows the paper's effects. Skips when ../shared/data is absent.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <string>

#include "online/alibaba_trace.h"
#include "online/synthetic_trace.h"
#include "tessera/online/online_placer.h"
#include "tessera/online/replay.h"
#include "tessera/online/replay_optimum.h"
#include "test_paths.h"
#include "vm_trace_builder.h"

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

// The regime of issue 38 with departures: 100 single-GPU hosts, lifetimes x 10.
VmTrace LoadDepartures() {
  TraceShaping shaping;
  shaping.max_hosts = 100;
  shaping.gpus_per_host = 1;
  shaping.lifetime = Lifetime::Parse("scale:10").value();
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
    // fair and steer tie GRMU on acceptance (the tests below); GRMU beats
    // the paper's four baselines and the field's two.
    if (policy == "grmu" || policy == "fair" || policy == "steer") continue;
    EXPECT_GT(grmu.accepted, report.accepted) << policy;
    EXPECT_LT(grmu.active_hw_auc, report.active_hw_auc) << policy;
    // lfr rearranges a GPU when nothing fits; the others never migrate.
    if (policy != "lfr") {
      EXPECT_EQ(report.intra_migrations + report.inter_migrations, 0) << policy;
    }
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

// The starvation floor of docs/online-placement.md: half of the fair rate
// r* = min(1, GPUs / GPU demand), each request counting 1 / max_instances of
// a GPU; with departures the demand is the mean number of GPUs the requests
// would keep busy over the replay (the share x lifetime, summed, over the
// span from the first arrival to the last departure).
double StarvationFloor(const VmTrace& trace) {
  double demand = 0, first = trace.vms.front().arrival_s, last = first;
  bool departs = false;
  for (const VmRequest& vm : trace.vms) {
    const double share = 1.0 / trace.gpu->profiles[vm.profile].max_instances;
    if (vm.departure_s == kNeverDeparts) {
      demand += share;
      continue;
    }
    departs = true;
    demand += share * (vm.departure_s - vm.arrival_s);
    last = std::max(last, vm.departure_s);
  }
  if (departs) demand /= last - first;
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
  const VmTrace trace = LoadDepartures();
  const std::map<std::string, ReplayReport> r = ReplayEveryPolicy(trace);
  EXPECT_GE(r.at("fair").accepted, r.at("grmu").accepted);
}

// steer, the policy Tessera steers with, accepts at least as many VMs as every
// other policy both where VMs never leave (fair's reserve: 2,608, the most
// possible) and where they do (frag's placements, the reserve faded), with
// every profile above the starvation floor. The sweep over GPUs per host,
// where no online policy can win every point, is in docs/online-placement.md.
TEST_F(OnlineConformance, SteerAcceptsAtLeastAsMuchAsEveryBaselineInBothRegimes) {
  for (const bool departures : {false, true}) {
    SCOPED_TRACE(departures ? "hosts 100, lifetimes x 10" : "one GPU per host, no departures");
    const VmTrace trace = departures ? LoadDepartures() : LoadStressed();
    const std::map<std::string, ReplayReport> r = ReplayEveryPolicy(trace);
    const ReplayReport& steer = r.at("steer");
    for (const auto& [policy, report] : r) EXPECT_GE(steer.accepted, report.accepted) << policy;
    const double floor = StarvationFloor(trace);
    EXPECT_NEAR(floor, departures ? 0.5 : 0.087, 0.001);
    for (const ProfileTally& p : steer.per_profile) {
      EXPECT_GE(static_cast<double>(p.accepted) / p.requests, floor)
          << trace.gpu->profiles[p.profile].name;
    }
    if (!departures) {
      EXPECT_EQ(steer.accepted, AcceptanceBound(trace));
    }
  }
}

// --- The offline optimum: GRMU's ILP (section 6) over a small window. ---

using testing::VmTraceBuilder;

constexpr double kH = 3600;  // an hour in trace seconds

std::map<std::string, ReplayReport> ReplayQuietly(const VmTrace& trace) {
  std::map<std::string, ReplayReport> reports;
  for (const std::string& policy : BuiltinPlacers().Names()) {
    auto placer = BuiltinPlacers().Create(policy, PlacerOptions{}).value();
    reports[policy] = Replay(trace, *placer).value();
  }
  return reports;
}

// GRMU Table 5 writes each A100 profile as a GI size g_i (memory slices) and
// a last start s_i, starts being multiples of g_i: the encoding the ILP takes
// from the catalog must be the paper's, exactly (integers, no tolerance).
TEST(OptimumConformance, GiEncodingIsGrmuTable5) {
  const GpuModel& gpu = **FindGpu("a100-40gb");
  const std::map<std::string, std::pair<int, int>> table5 = {
      {"1g.5gb", {1, 6}},  {"1g.10gb", {2, 6}}, {"2g.10gb", {2, 4}},
      {"3g.20gb", {4, 4}}, {"4g.20gb", {4, 0}}, {"7g.40gb", {8, 0}}};
  const std::vector<GiEncoding> gi = GiEncodings(gpu);
  int checked = 0;
  for (size_t p = 0; p < gpu.profiles.size(); ++p) {
    auto it = table5.find(gpu.profiles[p].name);
    if (it == table5.end()) continue;
    ++checked;
    EXPECT_EQ(gi[p].g, it->second.first) << it->first;
    EXPECT_EQ(gi[p].s, it->second.second) << it->first;
    std::vector<int> multiples;  // z = g * beta <= s (Eq. 14-16)
    for (int z = 0; z <= gi[p].s; z += gi[p].g) multiples.push_back(z);
    EXPECT_EQ(gi[p].starts, multiples) << it->first;
  }
  EXPECT_EQ(checked, 6);
}

// GRMU Fig. 3 / Table 3: two 1g.5gb placed by the driver's rule land on
// blocks 6 and 4 and leave room for 2 x 1g.10gb; arranged on blocks 2 and 3
// (same CC) they leave room for 3. Online, the policies that keep the
// driver's start (and frag, whose start is the driver's here) accept 2 + 2.
// The offline optimum may arrange them as Table 3's alternative: 2 + 3.
// Counts are integers: exact.
TEST(OptimumConformance, OptimumReachesGrmuTable3AlternativeArrangement) {
  const VmTrace trace = VmTraceBuilder("a100-40gb")
                            .Hosts(1, 1)
                            .Vm("1g.5gb", 0)
                            .Vm("1g.5gb", 1 * kH)
                            .Vm("1g.10gb", 2 * kH)
                            .Vm("1g.10gb", 3 * kH)
                            .Vm("1g.10gb", 4 * kH)
                            .Build();
  const ReplayOptimum opt = SolveReplayOptimum(trace).value();
  ASSERT_TRUE(opt.acceptance_proven && opt.active_hw_proven && opt.migrations_proven);
  EXPECT_EQ(opt.accepted, 2 + 3);  // Table 3, alternative: 1g.10gb capacity 3
  const std::map<std::string, ReplayReport> online = ReplayQuietly(trace);
  for (const auto& [policy, r] : online) {
    EXPECT_LE(r.accepted, opt.accepted) << policy;
    if (r.intra_migrations + r.inter_migrations == 0 && policy != "lfr") {
      EXPECT_EQ(r.accepted, 2 + 2) << policy;  // Table 3, default placement: 2
    }
  }
  // lfr takes 1g.5gb from the edge, as HAMi does: blocks 0 and 1, which
  // leave 2-7 whole and room for the three 1g.10gb without a migration.
  EXPECT_EQ(online.at("lfr").accepted, 2 + 3);
  EXPECT_EQ(online.at("lfr").intra_migrations, 0);
  // GRMU's defragmentation re-creates the GPU largest first after the third
  // 1g.10gb is rejected, which reaches the alternative arrangement; steer's
  // fallback moves one 1g.5gb to make room.
  EXPECT_EQ(online.at("grmu").accepted, 2 + 3);
  EXPECT_EQ(online.at("steer").accepted, 2 + 3);
  EXPECT_EQ(online.at("steer").intra_migrations, 1);
}

// By hand: one single-GPU host. A 7g.40gb arrives at 0 h, a 4g.20gb at 1 h,
// a 3g.20gb at 2 h, all leave at 10 h. Online, the 7g.40gb takes the GPU and
// the other two are turned away (1 accepted, active 0-10 h: 1,000 %h).
// Offline, rejecting the 7g.40gb admits both others: 2 accepted, active
// 1-10 h: 100% x 9 h = 900 %h, no migration.
TEST(OptimumConformance, OptimumMatchesAHandComputedWindow) {
  const VmTrace trace = VmTraceBuilder("a100-40gb")
                            .Hosts(1, 1)
                            .Vm("7g.40gb", 0, 10 * kH)
                            .Vm("4g.20gb", 1 * kH, 10 * kH)
                            .Vm("3g.20gb", 2 * kH, 10 * kH)
                            .Build();
  const ReplayOptimum opt = SolveReplayOptimum(trace).value();
  ASSERT_TRUE(opt.acceptance_proven && opt.active_hw_proven && opt.migrations_proven);
  EXPECT_EQ(opt.accepted, 2);
  EXPECT_NEAR(opt.active_hw_auc, 900, 1e-9);  // exact arithmetic on whole hours
  EXPECT_EQ(opt.intra_migrations + opt.inter_migrations, 0);
  const std::map<std::string, ReplayReport> online = ReplayQuietly(trace);
  EXPECT_EQ(online.at("ff").accepted, 1);
  EXPECT_NEAR(online.at("ff").active_hw_auc, 1000, 1e-9);
}

// The optimum's second objective: with everything accepted, one host active
// at a time beats two. Two hosts of one GPU; two 3g.20gb overlap in time.
// MCC spreads them over both hosts; the optimum packs them on one GPU.
TEST(OptimumConformance, OptimumConsolidatesWhenAcceptanceTies) {
  const VmTrace trace = VmTraceBuilder("a100-40gb")
                            .Hosts(2, 1)
                            .Vm("3g.20gb", 0, 4 * kH)
                            .Vm("3g.20gb", 1 * kH, 4 * kH)
                            .Build();
  const ReplayOptimum opt = SolveReplayOptimum(trace).value();
  ASSERT_TRUE(opt.acceptance_proven && opt.active_hw_proven && opt.migrations_proven);
  EXPECT_EQ(opt.accepted, 2);
  // One host + its GPU of 2 + 2 pieces of hardware for 4 h: 50% x 4 h.
  EXPECT_NEAR(opt.active_hw_auc, 200, 1e-9);
  EXPECT_GT(ReplayQuietly(trace).at("mcc").active_hw_auc, opt.active_hw_auc);
}

// No online policy accepts more than the offline optimum, on random windows
// with departures, two GPUs per host and tight host CPU.
TEST(OptimumConformance, OptimumBoundsEveryPolicyOnRandomWindows) {
  const GpuModel& gpu = **FindGpu("a100-40gb");
  for (std::uint64_t seed = 1; seed <= 2; ++seed) {
    SyntheticTraceOptions o;
    o.hosts = 2;
    o.gpus_per_host = 2;
    o.vms = 12;
    o.arrivals_per_hour = 6;
    o.median_lifetime_s = 3 * 3600.0;
    o.host_cpu_milli = 16000;  // four VMs of 4 cores per host
    o.seed = seed;
    const VmTrace trace = GenerateSyntheticTrace(gpu, o).value();
    OptimumOptions acceptance_only;  // Eq. 3 is what this test checks, and the fastest
    acceptance_only.objectives = 1;
    const ReplayOptimum opt = SolveReplayOptimum(trace, acceptance_only).value();
    ASSERT_TRUE(opt.acceptance_proven) << seed;
    int best_online = 0;
    for (const auto& [policy, r] : ReplayQuietly(trace)) {
      EXPECT_LE(r.accepted, opt.accepted) << policy << " seed " << seed;
      best_online = std::max(best_online, r.accepted);
    }
    EXPECT_GT(best_online, 0) << seed;
  }
}

TEST(OptimumConformance, RejectsWindowsOverTheLimit) {
  VmTraceBuilder builder("a100-40gb");
  builder.Hosts(1, 1);
  for (int i = 0; i <= kOptimumMaxVms; ++i) builder.Vm("1g.5gb", 0, kH);
  const Result<ReplayOptimum> opt = SolveReplayOptimum(builder.Build());
  ASSERT_FALSE(opt.ok());
  EXPECT_NE(opt.status().message().find("at most 40"), std::string::npos) << opt.status().message();
}

}  // namespace
}  // namespace tessera
