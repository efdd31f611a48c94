#include "tessera/online/vm_trace.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "tessera/gpu_catalog.h"

namespace tessera {
namespace {

const GpuModel& A100() { return **FindGpu("a100-40gb"); }

// Three hosts (the middle one without GPUs) and three VMs, one endless.
VmTrace SmallTrace() {
  VmTrace trace;
  trace.gpu = &A100();
  trace.hosts = {{"h0", 1000, 4096, 2}, {"h1", 1000, 4096, 0}, {"h2", 1000, 4096, 8}};
  trace.vms = {
      {0, "a", 0, 1, 1, 10, 20}, {1, "b", 6, 1, 1, 15, kNeverDeparts}, {2, "c", 6, 1, 1, 30, 30}};
  return trace;
}

bool Mentions(const std::vector<std::string>& notes, const std::string& text) {
  for (const std::string& note : notes) {
    if (note.find(text) != std::string::npos) return true;
  }
  return false;
}

TEST(VmTrace, TotalGpusSumsHosts) {
  EXPECT_EQ(SmallTrace().TotalGpus(), 10);
  EXPECT_EQ(VmTrace{}.TotalGpus(), 0);
}

TEST(VmTrace, RequestsPerProfileIsIndexedLikeTheCatalog) {
  const std::vector<int> counts = RequestsPerProfile(SmallTrace());
  ASSERT_EQ(counts.size(), A100().profiles.size());
  EXPECT_EQ(counts[0], 1);
  EXPECT_EQ(counts[6], 2);
  EXPECT_EQ(counts[1] + counts[2] + counts[3] + counts[4] + counts[5], 0);
  EXPECT_TRUE(RequestsPerProfile(VmTrace{}).empty());
}

TEST(Lifetime, ParsesEveryMode) {
  Result<Lifetime> trace = Lifetime::Parse("trace");
  ASSERT_TRUE(trace.ok());
  EXPECT_EQ(trace->mode, Lifetime::Mode::kTrace);
  Result<Lifetime> none = Lifetime::Parse("none");
  ASSERT_TRUE(none.ok());
  EXPECT_EQ(none->mode, Lifetime::Mode::kNone);
  Result<Lifetime> scale = Lifetime::Parse("scale:2.5");
  ASSERT_TRUE(scale.ok()) << scale.status().ToString();
  EXPECT_EQ(scale->mode, Lifetime::Mode::kScale);
  EXPECT_DOUBLE_EQ(scale->factor, 2.5);
}

TEST(Lifetime, RejectsAnythingElseSayingWhatIsAccepted) {
  for (const char* bad : {"", "Trace", "scale", "scale:", "scale:0", "scale:-1", "scale:inf",
                          "scale:nan", "scale:2x", "never", " none"}) {
    Result<Lifetime> parsed = Lifetime::Parse(bad);
    ASSERT_FALSE(parsed.ok()) << bad;
    EXPECT_EQ(parsed.status().code(), StatusCode::kInvalidArgument);
    EXPECT_NE(parsed.status().message().find("'trace', 'none' or 'scale:K'"), std::string::npos)
        << parsed.status().message();
  }
}

TEST(TraceShaping, DefaultsChangeNothingButDropGpulessHosts) {
  Result<VmTrace> shaped = ShapeTrace(SmallTrace(), TraceShaping{});
  ASSERT_TRUE(shaped.ok()) << shaped.status().ToString();
  ASSERT_EQ(shaped->hosts.size(), 2u);
  EXPECT_EQ(shaped->hosts[1].name, "h2");
  EXPECT_TRUE(Mentions(shaped->notes, "dropped 1 hosts without GPUs"));
  EXPECT_EQ(shaped->vms[0].departure_s, 20);
  EXPECT_EQ(shaped->vms[1].departure_s, kNeverDeparts);
}

TEST(TraceShaping, MaxHostsKeepsTheFirstHosts) {
  TraceShaping shaping;
  shaping.max_hosts = 1;
  Result<VmTrace> shaped = ShapeTrace(SmallTrace(), shaping);
  ASSERT_TRUE(shaped.ok()) << shaped.status().ToString();
  ASSERT_EQ(shaped->hosts.size(), 1u);
  EXPECT_EQ(shaped->hosts[0].name, "h0");
  EXPECT_TRUE(Mentions(shaped->notes, "kept the first 1 of 3 hosts"));
  shaping.max_hosts = 10;
  shaped = ShapeTrace(SmallTrace(), shaping);
  ASSERT_TRUE(shaped.ok());
  EXPECT_EQ(shaped->hosts.size(), 2u);  // all three, less the GPU-less one
}

TEST(TraceShaping, GpusPerHostMakesGpulessHostsUsable) {
  TraceShaping shaping;
  shaping.gpus_per_host = 4;
  Result<VmTrace> shaped = ShapeTrace(SmallTrace(), shaping);
  ASSERT_TRUE(shaped.ok()) << shaped.status().ToString();
  ASSERT_EQ(shaped->hosts.size(), 3u);
  for (const HostSpec& host : shaped->hosts) EXPECT_EQ(host.gpus, 4);
  EXPECT_EQ(shaped->TotalGpus(), 12);
  EXPECT_TRUE(Mentions(shaped->notes, "GPUs per host set to 4"));
}

TEST(TraceShaping, LifetimeNoneNeverDeparts) {
  TraceShaping shaping;
  shaping.lifetime = *Lifetime::Parse("none");
  Result<VmTrace> shaped = ShapeTrace(SmallTrace(), shaping);
  ASSERT_TRUE(shaped.ok());
  for (const VmRequest& vm : shaped->vms) EXPECT_EQ(vm.departure_s, kNeverDeparts);
  EXPECT_EQ(shaped->vms[0].arrival_s, 10);
}

TEST(TraceShaping, LifetimeScaleStretchesFromArrival) {
  TraceShaping shaping;
  shaping.lifetime = *Lifetime::Parse("scale:3");
  Result<VmTrace> shaped = ShapeTrace(SmallTrace(), shaping);
  ASSERT_TRUE(shaped.ok());
  EXPECT_DOUBLE_EQ(shaped->vms[0].departure_s, 10 + 3 * 10);
  EXPECT_EQ(shaped->vms[1].departure_s, kNeverDeparts);
  EXPECT_EQ(shaped->vms[2].departure_s, 30);  // departs at once, still
  EXPECT_TRUE(Mentions(shaped->notes, "scaled by 3"));
}

TEST(TraceShaping, RejectsBadKnobs) {
  TraceShaping shaping;
  shaping.max_hosts = 0;
  EXPECT_NE(shaping.Validate().message().find("max hosts"), std::string::npos);
  EXPECT_FALSE(ShapeTrace(SmallTrace(), shaping).ok());
  shaping = {};
  shaping.gpus_per_host = 0;
  EXPECT_NE(shaping.Validate().message().find("GPUs per host"), std::string::npos);
  shaping = {};
  shaping.lifetime = {Lifetime::Mode::kScale, 0};
  EXPECT_NE(shaping.Validate().message().find("scale factor"), std::string::npos);
  shaping.lifetime.factor = kNeverDeparts;
  EXPECT_EQ(shaping.Validate().code(), StatusCode::kInvalidArgument);
}

// Issue 17, classes 1 and 8: shaping keeps a trace within the input limits:
// GPUs in all (summed in 64 bits, not an int) and departure times (a scale
// that overflows must not read as "never departs").
TEST(TraceShaping, KeepsTheTraceWithinTheInputLimits) {
  TraceShaping shaping;
  shaping.gpus_per_host = 65'536;
  VmTrace trace = SmallTrace();
  trace.hosts.assign(40'000, HostSpec{"h", 1000, 4096, 1});
  Result<VmTrace> shaped = ShapeTrace(trace, shaping);
  ASSERT_FALSE(shaped.ok());
  EXPECT_EQ(shaped.status().message(),
            "shaping: 40000 hosts hold 2621440000 GPUs in all; a replayed cluster holds an "
            "integer in [1, 1e+06] (keep fewer hosts or set fewer GPUs per host)");
  shaping = {};
  shaping.lifetime = *Lifetime::Parse("scale:1e308");
  shaped = ShapeTrace(SmallTrace(), shaping);
  ASSERT_FALSE(shaped.ok());
  EXPECT_EQ(shaped.status().message(),
            "lifetime: VM a would depart at inf s; trace times must be a finite number in [0, "
            "1e+10]");
}

TEST(TraceShaping, NoHostLeftIsAnError) {
  VmTrace trace = SmallTrace();
  trace.hosts = {{"h1", 1000, 4096, 0}};
  Result<VmTrace> shaped = ShapeTrace(trace, TraceShaping{});
  ASSERT_FALSE(shaped.ok());
  EXPECT_EQ(shaped.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(shaped.status().message().find("no host"), std::string::npos);
}

}  // namespace
}  // namespace tessera
