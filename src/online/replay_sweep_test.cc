#include "tessera/online/replay_sweep.h"

#include <gtest/gtest.h>

#include "vm_trace_builder.h"

namespace tessera {
namespace {

using testing::VmTraceBuilder;

TEST(ReplaySweep, ParsesAKnobAndItsValues) {
  const SweepSpec spec = ParseSweep("lifetime=scale:10,none,trace").value();
  EXPECT_EQ(spec.knob, SweepKnob::kLifetime);
  EXPECT_EQ(spec.name, "lifetime");
  EXPECT_EQ(spec.values, (std::vector<std::string>{"scale:10", "none", "trace"}));
  EXPECT_EQ(ParseSweep("heavy-share=0,1").value().knob, SweepKnob::kHeavyShare);
}

TEST(ReplaySweep, RejectsBadSpecsNamingTheProblem) {
  for (const char* bad :
       {"", "gpus-per-host", "gpus-per-host=", "gpus-per-host=1,", "gpus-per-host=1.5",
        "gpus-per-host=0", "arrival-rate=0", "arrival-rate=nan", "heavy-share=-0.1",
        "lifetime=scale:0", "colour=red"}) {
    const Result<SweepSpec> spec = ParseSweep(bad);
    ASSERT_FALSE(spec.ok()) << bad;
    EXPECT_NE(spec.status().message().find("--sweep"), std::string::npos) << bad;
  }
  std::string many = "gpus-per-host=1";
  for (int i = 0; i < kMaxSweepValues; ++i) many += ",1";
  EXPECT_FALSE(ParseSweep(many).ok());
}

TEST(ReplaySweep, ArrivalRateCompressesArrivalsAndKeepsLifetimes) {
  VmTrace trace = VmTraceBuilder("a100-40gb")
                      .Hosts(1, 1)
                      .Vm("1g.5gb", 100, 200)
                      .Vm("1g.5gb", 500)
                      .Vm("1g.5gb", 900, 1900)
                      .Build();
  PlacerOptions options;
  ASSERT_TRUE(ApplySweepValue(SweepKnob::kArrivalRate, "4", trace, options).ok());
  EXPECT_DOUBLE_EQ(trace.vms[0].arrival_s, 100);
  EXPECT_DOUBLE_EQ(trace.vms[0].departure_s, 200);
  EXPECT_DOUBLE_EQ(trace.vms[1].arrival_s, 200);
  EXPECT_EQ(trace.vms[1].departure_s, kNeverDeparts);
  EXPECT_DOUBLE_EQ(trace.vms[2].arrival_s, 300);
  EXPECT_DOUBLE_EQ(trace.vms[2].departure_s, 1300);
}

TEST(ReplaySweep, OtherKnobsShapeTheClusterOrThePlacer) {
  const VmTrace base = VmTraceBuilder("a100-40gb").Hosts(2, 1).Vm("1g.5gb", 0, 10).Build();
  VmTrace trace = base;
  PlacerOptions options;
  ASSERT_TRUE(ApplySweepValue(SweepKnob::kGpusPerHost, "4", trace, options).ok());
  EXPECT_EQ(trace.TotalGpus(), 8);
  trace = base;
  ASSERT_TRUE(ApplySweepValue(SweepKnob::kLifetime, "none", trace, options).ok());
  EXPECT_EQ(trace.vms[0].departure_s, kNeverDeparts);
  trace = base;
  ASSERT_TRUE(ApplySweepValue(SweepKnob::kHeavyShare, "0.6", trace, options).ok());
  EXPECT_DOUBLE_EQ(options.heavy_share, 0.6);
  EXPECT_EQ(trace.vms[0].departure_s, 10);  // the trace untouched
  EXPECT_FALSE(ApplySweepValue(SweepKnob::kHeavyShare, "2", trace, options).ok());
}

}  // namespace
}  // namespace tessera
