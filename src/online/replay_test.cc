// The replay driver: metrics on hand-made traces, and the safety properties
// of every policy on random synthetic traces (legal state after every event,
// no VM lost or placed twice).
#include "tessera/online/replay.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "online/synthetic_trace.h"
#include "vm_trace_builder.h"

namespace tessera {
namespace {

using testing::VmTraceBuilder;

ReplayReport ReplayWith(const VmTrace& trace, std::string_view policy, PlacerOptions options = {}) {
  auto placer = BuiltinPlacers().Create(policy, options).value();
  return Replay(trace, *placer).value();
}

TEST(Replay, ActiveHardwareCountsAHostAndAllItsGpusWhileItRunsAnyVm) {
  // Two hosts with two GPUs each (6 pieces of hardware); both VMs land on
  // host 0, busy from 0 s to 5,400 s: rate 3/6.
  const VmTrace t = VmTraceBuilder("a100-40gb")
                        .Hosts(2, 2)
                        .Vm("1g.5gb", 0, 3600)
                        .Vm("1g.5gb", 1800, 5400)
                        .Build();
  const ReplayReport r = ReplayWith(t, "ff");
  EXPECT_EQ(r.requests, 2);
  EXPECT_EQ(r.accepted, 2);
  EXPECT_DOUBLE_EQ(r.acceptance, 1);
  EXPECT_DOUBLE_EQ(r.duration_s, 5400);
  ASSERT_EQ(r.samples.size(), 2u);
  EXPECT_DOUBLE_EQ(r.samples[0].active_hw_rate, 0.5);
  EXPECT_DOUBLE_EQ(r.samples[1].active_hw_rate, 0.5);  // over the 1,800 s it covers
  EXPECT_EQ(r.samples[0].arrivals, 2);
  EXPECT_EQ(r.samples[0].resident_vms, 2);
  EXPECT_EQ(r.samples[1].resident_vms, 0);
  EXPECT_DOUBLE_EQ(r.active_hw_auc, 50 * 1.5);  // percent-hours
  EXPECT_EQ(r.peak_resident_vms, 2);
  EXPECT_EQ(r.intra_migrations + r.inter_migrations, 0);
}

// t0 + 2 h - t0 is a hair under 2 h in doubles when t0 = 1,234.567 s: the
// time that closes hour 1 once fell back into it and the replay never ended.
TEST(Replay, AnHourEndThatRoundsBackIntoItsHourStillEnds) {
  const VmTrace t =
      VmTraceBuilder("a100-40gb").Hosts(1, 1).Vm("1g.5gb", 1234.567, 1234.567 + 3 * 3600).Build();
  const ReplayReport r = ReplayWith(t, "ff");
  EXPECT_EQ(r.samples.size(), 3u);
  EXPECT_NEAR(r.active_hw_auc, 100 * 3.0, 1e-6);  // rounding only
}

TEST(Replay, CountsAcceptancePerProfileAndPerHour) {
  // One GPU: the 7g.40gb fills it, so the 3g.20gb an hour later is refused
  // until the first leaves.
  const VmTrace t = VmTraceBuilder("a100-40gb")
                        .Hosts(1, 1)
                        .Vm("7g.40gb", 0, 7200)
                        .Vm("3g.20gb", 3600)
                        .Vm("3g.20gb", 7200)
                        .Build();
  const ReplayReport r = ReplayWith(t, "ff");
  EXPECT_EQ(r.accepted, 2);
  ASSERT_EQ(r.per_profile.size(), 2u);
  EXPECT_EQ(t.gpu->profiles[r.per_profile[0].profile].name, "3g.20gb");
  EXPECT_EQ(r.per_profile[0].requests, 2);
  EXPECT_EQ(r.per_profile[0].accepted, 1);
  EXPECT_EQ(r.per_profile[1].accepted, 1);
  ASSERT_EQ(r.samples.size(), 3u);
  EXPECT_EQ(r.samples[1].arrivals, 1);
  EXPECT_EQ(r.samples[1].accepted, 0);
  EXPECT_EQ(r.samples[2].cumulative_accepted, 2);  // the departure at 7,200 s came first
}

TEST(Replay, RejectsBadOptions) {
  const VmTrace t = VmTraceBuilder("a100-40gb").Hosts(1, 1).Vm("1g.5gb", 0).Build();
  auto placer = BuiltinPlacers().Create("ff", PlacerOptions{}).value();
  ReplayOptions o;
  o.bucket_s = 0;
  EXPECT_FALSE(Replay(t, *placer, o).ok());
}

// Issue 17, classes 1 and 8: the series has a bucket per hour of the trace's
// span and the cluster an entry per GPU, so every trace, whatever made it,
// stays within the input limits.
TEST(Replay, RejectsTracesBeyondTheInputLimits) {
  auto placer = BuiltinPlacers().Create("mecc", PlacerOptions{}).value();
  const VmTrace far =
      VmTraceBuilder("a100-40gb").Hosts(1, 1).Vm("1g.5gb", 0).Vm("1g.5gb", 1e21).Build();
  Result<ReplayReport> r = Replay(far, *placer);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().message(),
            "replay: VM vm-1 arrives at 1e+21 s and departs at inf s; times must be a finite "
            "number in [0, 1e+10] with departure >= arrival");
  const VmTrace late = VmTraceBuilder("a100-40gb").Hosts(1, 1).Vm("1g.5gb", 0, 1e300).Build();
  EXPECT_FALSE(Replay(late, *placer).ok());
  VmTrace huge = VmTraceBuilder("a100-40gb").Hosts(1, 1).Vm("1g.5gb", 0).Build();
  huge.hosts.assign(40'000, HostSpec{"h", 96000, 393216, 65'536});
  r = Replay(huge, *placer);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().message(),
            "replay: the trace's hosts hold 2621440000 GPUs; must be an integer in [1, 1e+06], "
            "got 2.62144e+09");
}

TEST(Replay, EmptyTraceGivesAnEmptyReport) {
  const VmTrace t = VmTraceBuilder("a100-40gb").Hosts(1, 1).Build();
  const ReplayReport r = ReplayWith(t, "grmu");
  EXPECT_EQ(r.requests, 0);
  EXPECT_EQ(r.acceptance, 0);
}

// Tracks which VMs are resident after every event and checks that each VM
// becomes resident at most once, stays until it leaves, and never returns.
class ResidencyChecker {
 public:
  explicit ResidencyChecker(const VmTrace& trace) : state_(trace.vms.size(), kNever) {}

  void Observe(const OnlineCluster& c) {
    ASSERT_TRUE(c.CheckInvariants().ok()) << c.CheckInvariants().ToString();
    int resident = 0;
    for (size_t v = 0; v < state_.size(); ++v) {
      const bool now = c.LocationOf(static_cast<int>(v)).gpu >= 0;
      resident += now;
      if (now && state_[v] == kGone) FAIL() << "VM " << v << " came back";
      if (!now && state_[v] == kResident) state_[v] = kGone, ++departed_;
      if (now) state_[v] = kResident;
    }
    ASSERT_EQ(resident, c.resident_vms());
  }

  int departed() const { return departed_; }
  int resident() const {
    return static_cast<int>(std::count(state_.begin(), state_.end(), kResident));
  }

 private:
  enum State { kNever, kResident, kGone };
  std::vector<State> state_;
  int departed_ = 0;
};

struct PropertyCase {
  int hosts, gpus_per_host, vms;
  double median_lifetime_s;
};

TEST(Replay, EveryPolicyKeepsTheClusterLegalAndLosesNoVm) {
  const std::vector<PropertyCase> cases = {
      {3, 2, 300, 1800}, {2, 4, 300, 20000}, {4, 1, 200, kNeverDeparts}, {1, 8, 250, 5000}};
  for (const GpuModel* gpu :
       {FindGpu("a100-40gb").value(), FindGpu("a30-24gb").value(), FindGpu("h100-80gb").value()}) {
    for (const PropertyCase& pc : cases) {
      for (std::uint64_t seed = 1; seed <= 3; ++seed) {
        SyntheticTraceOptions so;
        so.hosts = pc.hosts;
        so.gpus_per_host = pc.gpus_per_host;
        so.vms = pc.vms;
        so.median_lifetime_s = pc.median_lifetime_s;
        so.arrivals_per_hour = 120;
        so.host_cpu_milli = 32000;  // CPU binds too
        so.seed = seed;
        const VmTrace trace = GenerateSyntheticTrace(*gpu, so).value();
        for (const std::string& policy : BuiltinPlacers().Names()) {
          SCOPED_TRACE(gpu->name + " " + policy + " seed " + std::to_string(seed));
          PlacerOptions po;
          po.consolidate_every_s = 1800;
          auto placer = BuiltinPlacers().Create(policy, po).value();
          ResidencyChecker checker(trace);
          ReplayOptions ro;
          ro.after_event = [&](const OnlineCluster& c) { checker.Observe(c); };
          const ReplayReport r = Replay(trace, *placer, ro).value();
          EXPECT_GT(r.accepted, 0);
          EXPECT_LE(r.accepted, r.requests);
          // Every accepted VM is either still resident or departed once.
          EXPECT_EQ(checker.resident() + checker.departed(), r.accepted);
          if (pc.median_lifetime_s == kNeverDeparts) {
            EXPECT_EQ(checker.departed(), 0);
          }
          int per_profile = 0;
          for (const ProfileTally& p : r.per_profile) per_profile += p.accepted;
          EXPECT_EQ(per_profile, r.accepted);
          ASSERT_FALSE(r.samples.empty());
          EXPECT_EQ(r.samples.back().cumulative_accepted, r.accepted);
          EXPECT_EQ(r.samples.back().cumulative_arrivals, r.requests);
        }
      }
    }
  }
}

TEST(Replay, IsDeterministic) {
  SyntheticTraceOptions so;
  so.vms = 400;
  so.hosts = 2;
  so.seed = 7;
  const VmTrace trace = GenerateSyntheticTrace(*FindGpu("a100-40gb").value(), so).value();
  for (const std::string& policy : BuiltinPlacers().Names()) {
    const ReplayReport a = ReplayWith(trace, policy), b = ReplayWith(trace, policy);
    EXPECT_EQ(a.accepted, b.accepted) << policy;
    EXPECT_EQ(a.active_hw_auc, b.active_hw_auc) << policy;
    EXPECT_EQ(a.migrations.size(), b.migrations.size()) << policy;
  }
}

}  // namespace
}  // namespace tessera
