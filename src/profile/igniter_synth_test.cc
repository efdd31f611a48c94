// Synthesized iGniter coefficients (igniter_synth.h): the method's ratios on
// the V100 -> T4 pair of iGniter's 5.3, and its errors.
#include "tessera/profile/igniter_synth.h"

#include <gtest/gtest.h>

namespace tessera {
namespace {

MpsCoefficients Base() {
  MpsCoefficients c;
  c.hardware = {"v100-16gb", 1530, 300, 53.5, 2.5, 1e7, -1.0, 0.004, -0.009};
  WorkloadCoefficients w;
  w.model = "resnet50";
  w.kernels = 80;
  w.sched_ms = 0.07;
  w.load_bytes = 602112;
  w.feedback_bytes = 4000;
  w.k = {-0.0175, 58.26, -0.0104, 0.345, 1.909};
  w.alpha_cache = 0.002;
  w.power = {0.16, 4.6};
  w.cache = {0.022, -0.19};
  c.workloads.push_back(w);
  return c;
}

SynthTarget T4() {
  SynthTarget t;
  t.from = *FindGpu("v100-16gb");
  t.to = *FindGpu("t4-16gb");
  t.max_frequency_mhz = 1590;
  t.power_cap_w = 70;
  t.pcie_bytes_per_ms = 5.882e6;
  return t;
}

TEST(IgniterSynth, ScalesTheV100ToTheT4) {
  SynthRatios r;
  Result<MpsCoefficients> t4 = SynthesizeMpsCoefficients(Base(), T4(), &r);
  ASSERT_TRUE(t4.ok()) << t4.status().ToString();
  // 80 SMs at 1530 MHz against 40 at 1590: about the paper's "2x".
  const double c = 80.0 * 1530 / (40.0 * 1590);
  EXPECT_DOUBLE_EQ(r.compute, c);
  const double idle = 53.5 * 70 / 300;
  EXPECT_DOUBLE_EQ(r.power, (70 - idle) / (300 - 53.5));
  const MpsHardware& hw = t4->hardware;
  EXPECT_EQ(hw.gpu, "t4-16gb");
  EXPECT_DOUBLE_EQ(hw.unit_pct, 5);  // 40 SMs in pairs
  EXPECT_DOUBLE_EQ(hw.idle_power_w, idle);
  EXPECT_DOUBLE_EQ(hw.pcie_bytes_per_ms, 5.882e6);
  EXPECT_DOUBLE_EQ(hw.alpha_f, -1.0 * (1590.0 / 1530) / r.power);
  EXPECT_DOUBLE_EQ(hw.alpha_sch, 0.004);
  const WorkloadCoefficients& w = t4->workloads[0];
  const MpsCoefficients base = Base();
  const WorkloadCoefficients& v = base.workloads[0];
  // The solo active time at any batch and share is C times the V100's.
  for (int b : {1, 8, 32}) {
    for (double pct : {10.0, 50.0, 100.0}) {
      EXPECT_NEAR(w.ActiveMs(b, pct), c * v.ActiveMs(b, pct), 1e-9 * c * v.ActiveMs(b, pct));
    }
  }
  EXPECT_DOUBLE_EQ(w.k[3], v.k[3]);
  EXPECT_DOUBLE_EQ(w.power[0], v.power[0] * c * r.power);
  EXPECT_DOUBLE_EQ(w.power[1], v.power[1] * r.power);
  EXPECT_DOUBLE_EQ(w.cache[0], v.cache[0] * c);
  EXPECT_DOUBLE_EQ(w.cache[1], v.cache[1]);
  EXPECT_EQ(w.kernels, 80);
  EXPECT_DOUBLE_EQ(w.sched_ms, 0.07);
  // What is written reads back.
  Result<MpsCoefficients> back = ParseMpsCoefficientsJson(FormatMpsCoefficientsJson(*t4), "t4");
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  EXPECT_EQ(back->workloads[0].k, w.k);
}

TEST(IgniterSynth, DefaultsAndErrors) {
  SynthTarget t = T4();
  t.pcie_bytes_per_ms.reset();
  t.idle_power_w = 20;
  Result<MpsCoefficients> ok = SynthesizeMpsCoefficients(Base(), t);
  ASSERT_TRUE(ok.ok());
  EXPECT_DOUBLE_EQ(ok->hardware.pcie_bytes_per_ms, 1e7);
  EXPECT_DOUBLE_EQ(ok->hardware.idle_power_w, 20);

  t.idle_power_w = 70;  // not below the cap
  Result<MpsCoefficients> bad = SynthesizeMpsCoefficients(Base(), t);
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("idle power of t4-16gb"), std::string::npos);
  t = T4();
  t.max_frequency_mhz = 0;
  EXPECT_FALSE(SynthesizeMpsCoefficients(Base(), t).ok());
  t = T4();
  t.power_cap_w = -1;
  EXPECT_FALSE(SynthesizeMpsCoefficients(Base(), t).ok());
  t = T4();
  t.to = nullptr;
  EXPECT_FALSE(SynthesizeMpsCoefficients(Base(), t).ok());
  MpsCoefficients odd = Base();
  odd.hardware.idle_power_w = 300;  // the source's idle at its cap
  EXPECT_FALSE(SynthesizeMpsCoefficients(odd, T4()).ok());
}

}  // namespace
}  // namespace tessera
