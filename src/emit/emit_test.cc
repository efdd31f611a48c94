// Tests of the Deployment emitters: golden files for the ParvaGPU CSV, the
// text table and the SVG (regenerate with TESSERA_UPDATE_GOLDEN=1), plus
// property checks each format must keep whatever the goldens say.

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <functional>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

#include "deployment_builder.h"
#include "svg_check.h"
#include "tessera/deployment_format.h"
#include "tessera/gpu_catalog.h"

namespace tessera {
namespace {

const GpuModel& A100() { return **FindGpu("a100-80gb"); }

constexpr std::string_view kTrickyName = "bert & <\"tiny\">";
constexpr std::string_view kGptReason =
    "no (profile, batch, procs) triplet has latency < 0.5 x SLO = 5 ms; the fastest is "
    "7g.80gb, batch 1, 1 proc at 18.2 ms";

// Three A100-80GB GPUs: a 3g@4 + 2g@0 + 1g@2 + 1g@3 mix, a whole 7g, and a
// half-empty GPU; a service whose name needs XML escaping and one infeasible
// service.
Deployment Small() {
  return DeploymentBuilder("a100-80gb", "parva")
      .Gpu()
      .Instance("3g.40gb", 4, "resnet50", 64, 2, 1288.9, 98.0)
      .Instance("2g.20gb", 0, "vgg19", 32, 2, 410.5, 120.3)
      .Instance("1g.10gb", 2, std::string(kTrickyName), 16, 3, 150.2, 44.1)
      .Instance("1g.10gb", 3, "vgg19", 8, 1, 60.0, 70.2)
      .Gpu()
      .Instance("7g.80gb", 0, "resnet50", 128, 3, 2500.0, 150.0)
      .Gpu()
      .Instance("4g.40gb", 0, "vgg19", 64, 1, 300.0, 140.0)
      .Service("resnet50", 3000, 205)
      .Service("vgg19", 700, 300)
      .Service(std::string(kTrickyName), 120, 100, "bert")
      .Infeasible("gpt-j", 50, 10, std::string(kGptReason))
      .LowerBound(2, "integer-cover")
      .PlanMs(1.25)
      .Build();
}

// `gpus` GPUs, each holding a 4g@0 + 2g@4 + 1g@6 for services a, b, c.
Deployment Wide(int gpus, int gpus_per_node = 8) {
  DeploymentBuilder b("a100-80gb", "parva", gpus_per_node);
  for (int i = 0; i < gpus; ++i) {
    b.Gpu()
        .Instance("1g.10gb", 6, "c", 1, 1, 10, 5)
        .Instance("4g.40gb", 0, "a", 8, 2, 100, 20)
        .Instance("2g.20gb", 4, "b", 4, 1, 50, 10);
  }
  return b.Service("a", 50.0 * gpus, 100)
      .Service("b", 20.0 * gpus, 50)
      .Service("c", 5, 20)
      .LowerBound(gpus, "fractional")
      .Build();
}

std::vector<std::string> Lines(std::string_view text) {
  std::vector<std::string> lines;
  std::istringstream in{std::string(text)};
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

// ---------------------------------------------------------------- goldens --

std::string GoldenPath(std::string_view name) {
  return std::string(TESSERA_SOURCE_DIR) + "/tests/golden/" + std::string(name);
}

bool ReadFile(const std::string& path, std::string& text) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return false;
  std::ostringstream buffer;
  buffer << in.rdbuf();
  text = buffer.str();
  return true;
}

// Where `actual` first departs from `expected`, as a few -/+ lines with
// context, so a failing golden says what changed without a diff tool.
std::string DiffHint(std::string_view expected, std::string_view actual) {
  std::vector<std::string> e = Lines(expected), a = Lines(actual);
  size_t first = 0;
  while (first < e.size() && first < a.size() && e[first] == a[first]) ++first;
  std::ostringstream hint;
  hint << "first difference at line " << first + 1 << " (expected " << e.size() << " lines, got "
       << a.size() << ")\n";
  size_t from = first >= 2 ? first - 2 : 0;
  for (size_t i = from; i < first; ++i) hint << "  " << e[i] << "\n";
  for (size_t i = first; i < std::min(e.size(), first + 3); ++i) hint << "- " << e[i] << "\n";
  for (size_t i = first; i < std::min(a.size(), first + 3); ++i) hint << "+ " << a[i] << "\n";
  return hint.str();
}

struct GoldenCase {
  std::string file;
  std::function<std::string(const Deployment&)> format;
};

class EmitGoldenTest : public testing::TestWithParam<GoldenCase> {};

TEST_P(EmitGoldenTest, MatchesGoldenFile) {
  const GoldenCase& c = GetParam();
  std::string actual = c.format(Small());
  std::string path = GoldenPath(c.file);
  const char* update = std::getenv("TESSERA_UPDATE_GOLDEN");
  if (update != nullptr && std::string_view(update) == "1") {
    std::ofstream(path, std::ios::binary) << actual;
    GTEST_SKIP() << "rewrote " << path;
  }
  std::string expected;
  ASSERT_TRUE(ReadFile(path, expected))
      << "missing golden " << path << "; create it with TESSERA_UPDATE_GOLDEN=1";
  EXPECT_TRUE(expected == actual) << path << " differs; if the change is intended, rerun with "
                                  << "TESSERA_UPDATE_GOLDEN=1 and review the diff.\n"
                                  << DiffHint(expected, actual);
}

INSTANTIATE_TEST_SUITE_P(
    EmitSmall, EmitGoldenTest,
    testing::Values(GoldenCase{"small.parva.csv",
                               [](const Deployment& d) { return FormatParvaCsv(d, A100()); }},
                    GoldenCase{"small.table.txt",
                               [](const Deployment& d) { return FormatDeploymentTable(d); }},
                    GoldenCase{"small.svg",
                               [](const Deployment& d) { return FormatDeploymentSvg(d, A100()); }}),
    [](const testing::TestParamInfo<GoldenCase>& info) {
      std::string name = info.param.file;
      std::replace(name.begin(), name.end(), '.', '_');
      return name;
    });

// ------------------------------------------------------------- Parva CSV --

TEST(EmitParvaCsv, GroupsByGpuAndSortsBySizeDescending) {
  EXPECT_EQ(FormatParvaCsv(Small(), A100()),
            "Num instance,Num GPU,Model,Placement,Instance size,Batch size,Num proc\n"
            "0,0,resnet50,4,3,64,2\n"
            "0,0,vgg19,0,2,32,2\n"
            "0,0,bert,2,1,16,3\n"
            "0,0,vgg19,3,1,8,1\n"
            "0,1,resnet50,0,7,128,3\n"
            "0,2,vgg19,0,4,64,1\n");
}

TEST(EmitParvaCsv, NumGpuRestartsInEachNode) {
  std::vector<std::string> lines = Lines(FormatParvaCsv(Wide(10), A100()));
  ASSERT_EQ(lines.size(), 1u + 10 * 3);
  for (int gpu = 0; gpu < 10; ++gpu) {
    std::string prefix = std::to_string(gpu / 8) + "," + std::to_string(gpu % 8) + ",";
    EXPECT_EQ(lines[1 + 3 * gpu], prefix + "a,0,4,8,2") << "GPU " << gpu;
    EXPECT_EQ(lines[2 + 3 * gpu], prefix + "b,4,2,4,1") << "GPU " << gpu;
    EXPECT_EQ(lines[3 + 3 * gpu], prefix + "c,6,1,1,1") << "GPU " << gpu;
  }
}

// Nodes 4 wide: index % 8 would number GPU 5 as 5; its position in node 1 is 1.
TEST(EmitParvaCsv, NumGpuIsThePositionWithinTheNodeWhateverItsWidth) {
  std::vector<std::string> lines = Lines(FormatParvaCsv(Wide(6, 4), A100()));
  ASSERT_EQ(lines.size(), 1u + 6 * 3);
  const std::vector<std::string> expected = {"0,0,", "0,1,", "0,2,", "0,3,", "1,0,", "1,1,"};
  for (int gpu = 0; gpu < 6; ++gpu) {
    EXPECT_EQ(lines[1 + 3 * gpu].substr(0, 4), expected[gpu]) << "GPU " << gpu;
  }
}

TEST(EmitParvaCsv, OrdersGpusByIndexEvenWhenListedOutOfOrder) {
  Deployment d = DeploymentBuilder("a100-80gb", "parva")
                     .Gpu(9, 1)
                     .Instance("7g.80gb", 0, "late", 1, 1, 1, 1)
                     .Gpu(8, 1)
                     .Instance("7g.80gb", 0, "early", 1, 1, 1, 1)
                     .Build();
  EXPECT_EQ(FormatParvaCsv(d, A100()),
            "Num instance,Num GPU,Model,Placement,Instance size,Batch size,Num proc\n"
            "1,0,early,0,7,1,1\n"
            "1,1,late,0,7,1,1\n");
}

// ------------------------------------------------------------------- SVG --

TEST(EmitSvg, IsWellFormedStandaloneSvg) {
  std::string svg = FormatDeploymentSvg(Small(), A100());
  EXPECT_TRUE(WellFormedXml(svg));
  EXPECT_NE(svg.find("xmlns=\"http://www.w3.org/2000/svg\""), std::string::npos);
  EXPECT_NE(svg.find("viewBox=\"0 0 "), std::string::npos);
  EXPECT_EQ(svg.find("href"), std::string::npos) << "no external resources";
  EXPECT_TRUE(svg.ends_with("</svg>\n"));
}

TEST(EmitSvg, DrawsOneRectanglePerInstance) {
  EXPECT_EQ(Count(FormatDeploymentSvg(Small(), A100()), "<rect class=\"instance\""), 6u);
  EXPECT_EQ(Count(FormatDeploymentSvg(Wide(3), A100()), "<rect class=\"instance\""), 9u);
}

TEST(EmitSvg, EscapesServiceNames) {
  std::string svg = FormatDeploymentSvg(Small(), A100());
  EXPECT_EQ(svg.find(kTrickyName), std::string::npos);
  EXPECT_NE(svg.find("bert &amp; &lt;&quot;tiny&quot;&gt;"), std::string::npos);
  EXPECT_TRUE(WellFormedXml(svg));
}

TEST(EmitSvg, LabelsGpuRowsAndIsDeterministic) {
  std::string svg = FormatDeploymentSvg(Wide(10), A100());
  EXPECT_NE(svg.find("GPU 9 (node 1)"), std::string::npos);
  EXPECT_EQ(svg, FormatDeploymentSvg(Wide(10), A100()));
}

// 120 GPUs stack into 120 rows: the picture grows taller, not wider.
TEST(EmitSvg, RendersLargePlans) {
  auto height = [](const std::string& svg) {
    size_t at = svg.find("height=\"") + 8;
    return std::stoi(svg.substr(at, svg.find('"', at) - at));
  };
  std::string small = FormatDeploymentSvg(Wide(2), A100());
  std::string large = FormatDeploymentSvg(Wide(120), A100());
  EXPECT_TRUE(WellFormedXml(large));
  EXPECT_EQ(Count(large, "<rect class=\"instance\""), 360u);
  EXPECT_NE(large.find("GPU 119 (node 14)"), std::string::npos);
  EXPECT_GT(height(large), height(small) + 100 * 60);
}

// ----------------------------------------------------------------- table --

TEST(EmitTable, MentionsEveryServiceAndTheInfeasibleReason) {
  Deployment d = Small();
  std::string table = FormatDeploymentTable(d);
  for (const ServiceOutcome& s : d.services) EXPECT_NE(table.find(s.name), std::string::npos);
  EXPECT_NE(table.find("INFEASIBLE"), std::string::npos);
  // The reason is word-wrapped; every word of it must be there.
  std::istringstream words{std::string(kGptReason)};
  for (std::string word; words >> word;) EXPECT_NE(table.find(word), std::string::npos) << word;
}

TEST(EmitTable, FitsA100ColumnTerminalWithoutColourCodes) {
  Deployment d = Small();
  d.services[0].name = std::string(200, 'n');  // long names are cut, not wrapped
  std::string table = FormatDeploymentTable(d) + FormatDeploymentTable(Wide(10));
  for (const std::string& line : Lines(table)) EXPECT_LE(line.size(), 100u) << line;
  EXPECT_EQ(table.find('\x1b'), std::string::npos);
}

TEST(EmitTable, HasOneBlockPerGpuAndTheMetrics) {
  std::string table = FormatDeploymentTable(Wide(10));
  EXPECT_NE(table.find("GPU 0 (node 0)"), std::string::npos);
  EXPECT_NE(table.find("GPU 9 (node 1)"), std::string::npos);
  EXPECT_EQ(Count(table, "\nGPU "), 10u);
  for (std::string_view key : {"gpus", "gpcs", "internal slack %", "external fragmentation %",
                               "lower bound", "gap %", "plan ms"}) {
    EXPECT_NE(table.find(key), std::string::npos) << key;
  }
}

}  // namespace
}  // namespace tessera
