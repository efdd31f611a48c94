// Structure checks of the transition SVG: one capacity chart per service,
// the floors, the dips below them, both GPU layouts, escaping, determinism.
#include "tessera/emit/transition_svg.h"

#include <gtest/gtest.h>

#include <string>

#include "deployment_builder.h"
#include "svg_check.h"

namespace tessera {
namespace {

const GpuModel& A100() { return **FindGpu("a100-80gb"); }

constexpr char kTricky[] = "bert & <\"tiny\">";

// A: GPU 0 holds b (7g), GPU 1 holds a 3g@0 and a 3g@4 of `a`.
Deployment From() {
  return DeploymentBuilder("a100-80gb", "parva")
      .Gpu()
      .Instance("7g.80gb", 0, kTricky, 8, 1, 800, 40, "m")
      .Gpu()
      .Instance("3g.40gb", 0, "a", 1, 1, 300, 8, "m")
      .Instance("3g.40gb", 4, "a", 1, 1, 300, 8, "m")
      .Service(kTricky, 500, 1000, "m")
      .Service("a", 400, 1000, "m")
      .Build();
}

// B: `a` at a lower rate on one 3g and a new service `c` on a 1g, both on
// B's GPU 1 (cluster GPU 2).
Deployment To() {
  return DeploymentBuilder("a100-80gb", "parva")
      .Gpu()
      .Instance("7g.80gb", 0, kTricky, 8, 1, 800, 40, "m")
      .Gpu()
      .Instance("3g.40gb", 4, "a", 1, 1, 300, 8, "m")
      .Instance("1g.10gb", 0, "c", 1, 1, 100, 10, "m")
      .Service(kTricky, 500, 1000, "m")
      .Service("a", 250, 1000, "m")
      .Service("c", 50, 1000, "m")
      .Build();
}

TransitionStep Step(StepAction action, std::string id, int gpu, std::string profile, int start,
                    std::string service, double throughput_rps = 0) {
  TransitionStep s;
  s.id = std::move(id);
  s.action = action;
  s.gpu = gpu;
  s.profile = std::move(profile);
  s.start = start;
  s.service = std::move(service);
  s.model = "m";
  s.throughput_rps = throughput_rps;
  return s;
}

// Phase 1 creates B's GPU 1 on spare GPU 2; phase 2 empties A's GPU 1,
// dropping `a` to 0 in its worst state (below its floor 250).
Transition Move() {
  Transition t;
  t.gpu = "a100-80gb";
  t.gpu_map = {{0, 0}, {1, 2}};
  t.phases.push_back({{Step(StepAction::kCreate, "s1", 2, "1g.10gb", 0, "c", 100)}});
  t.phases.push_back({{Step(StepAction::kDestroy, "s2", 1, "3g.40gb", 0, "a"),
                       Step(StepAction::kDestroy, "s3", 1, "3g.40gb", 4, "a")}});
  t.phases.push_back({{Step(StepAction::kCreate, "s4", 2, "3g.40gb", 4, "a", 300)}});
  return t;
}

std::string Svg() { return FormatTransitionSvg(From(), To(), Move(), A100()); }

TEST(TransitionSvg, IsWellFormedStandaloneSvg) {
  const std::string svg = Svg();
  EXPECT_TRUE(WellFormedXml(svg));
  EXPECT_NE(svg.find("xmlns=\"http://www.w3.org/2000/svg\""), std::string::npos);
  EXPECT_EQ(svg.find("href"), std::string::npos) << "no external resources";
  EXPECT_TRUE(svg.ends_with("</svg>\n"));
  EXPECT_EQ(svg, Svg()) << "deterministic";
}

TEST(TransitionSvg, DrawsOneCapacityLinePerServiceAndTheFloors) {
  const std::string svg = Svg();
  EXPECT_EQ(Count(svg, "<g class=\"service\""), 3u);
  EXPECT_EQ(Count(svg, "<polyline class=\"capacity\""), 3u);
  // `c` is only in B: floor 0, no line.
  EXPECT_EQ(Count(svg, "<line class=\"floor\""), 2u);
  // Seven states (start, then worst and end of three phases); `a` is below
  // its floor from phase 2's worst state to phase 3's.
  EXPECT_EQ(Count(svg, "<circle class=\"dip\""), 3u);
  EXPECT_NE(svg.find("Lowest capacity / floor: 0.00"), std::string::npos);
}

TEST(TransitionSvg, DrawsBothLayoutsWithBOnTheClusterGpus) {
  const std::string svg = Svg();
  EXPECT_EQ(Count(svg, "<rect class=\"instance\""), 6u);
  EXPECT_NE(svg.find("id=\"before-gpu-1\""), std::string::npos);
  EXPECT_NE(svg.find("id=\"after-gpu-2\""), std::string::npos);
  EXPECT_EQ(svg.find("id=\"after-gpu-1\""), std::string::npos);
}

TEST(TransitionSvg, EscapesServiceNames) {
  const std::string svg = Svg();
  EXPECT_EQ(svg.find(kTricky), std::string::npos);
  EXPECT_NE(svg.find("bert &amp; &lt;&quot;tiny&quot;&gt;"), std::string::npos);
}

}  // namespace
}  // namespace tessera
