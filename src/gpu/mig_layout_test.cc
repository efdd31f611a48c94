#include "tessera/gpu/mig_layout.h"

#include <gtest/gtest.h>

#include "tessera/gpu_catalog.h"

namespace tessera {
namespace {

const GpuModel& Gpu(std::string_view name) { return **FindGpu(name); }

int Index(const GpuModel& gpu, std::string_view profile) {
  int i = gpu.ProfileIndex(profile);
  EXPECT_GE(i, 0) << profile;
  return i;
}

TEST(GpuCatalog, KnowsTheSixGpusCaseInsensitively) {
  for (std::string_view name :
       {"a100-40gb", "A100-80GB", "a30-24gb", "h100-80gb", "h100-94gb", "h200-141gb"}) {
    EXPECT_TRUE(FindGpu(name).ok()) << name;
  }
  Result<const GpuModel*> missing = FindGpu("v100");
  ASSERT_FALSE(missing.ok());
  EXPECT_NE(missing.status().message().find("a100-80gb"), std::string::npos);
}

TEST(GpuCatalog, PrimaryProfilesAreOnePerComputeSize) {
  const GpuModel& a100 = Gpu("a100-80gb");
  std::vector<std::string> names;
  for (int i : a100.PrimaryProfiles()) names.push_back(a100.profiles[i].name);
  EXPECT_EQ(names,
            (std::vector<std::string>{"1g.10gb", "2g.20gb", "3g.40gb", "4g.40gb", "7g.80gb"}));
  const GpuModel& a30 = Gpu("a30-24gb");
  EXPECT_EQ(a30.PrimaryProfiles().size(), 3u);
}

// Table-driven layout counts. A100: 19 maximal layouts, 14 distinct mixes
// (reference section 1.6); A30: 5 layouts (4 | 2,2 | 2,1,1 | 1,1,2 | 1,1,1,1),
// 4 mixes since 2,1,1 and 1,1,2 hold the same profiles.
// With the 2-memory-slice 1g profile added the 8-slice GPUs have 78 / 38.
TEST(MigLayout, MaximalLayoutCounts) {
  struct Case {
    std::string gpu;
    bool all_non_me;
    size_t layouts;
    size_t mixes;
  };
  const std::vector<Case> cases = {
      {"a100-40gb", false, 19, 14}, {"a100-80gb", false, 19, 14},  {"h100-80gb", false, 19, 14},
      {"h100-94gb", false, 19, 14}, {"h200-141gb", false, 19, 14}, {"a30-24gb", false, 5, 4},
      {"a100-80gb", true, 78, 38},
  };
  for (const Case& c : cases) {
    const GpuModel& gpu = Gpu(c.gpu);
    const std::vector<int> profiles = c.all_non_me ? gpu.NonMediaProfiles() : gpu.PrimaryProfiles();
    std::vector<Layout> layouts = EnumerateMaximalLayouts(gpu, profiles);
    EXPECT_EQ(layouts.size(), c.layouts) << c.gpu;
    EXPECT_EQ(DistinctMixes(gpu, layouts).size(), c.mixes) << c.gpu;
    for (const Layout& l : layouts) EXPECT_TRUE(CheckLayout(gpu, l).ok()) << FormatLayout(gpu, l);
  }
}

TEST(MigLayout, FourGAndThreeGCoexistSinceR510) {
  const GpuModel& gpu = Gpu("a100-80gb");
  const Layout layout = {{Index(gpu, "4g.40gb"), 0}, {Index(gpu, "3g.40gb"), 4}};
  EXPECT_TRUE(CheckLayout(gpu, layout).ok());
}

TEST(MigLayout, ThreeGAtZeroBlocksOneGAtSliceThree) {
  const GpuModel& gpu = Gpu("a100-80gb");
  MigSlots slots(gpu);
  slots.Place(Index(gpu, "3g.40gb"), 0);
  EXPECT_FALSE(slots.CanPlace(Index(gpu, "1g.10gb"), 3));
  EXPECT_TRUE(slots.CanPlace(Index(gpu, "1g.10gb"), 4));
  const Layout overlapping = {{Index(gpu, "3g.40gb"), 0}, {Index(gpu, "1g.10gb"), 3}};
  EXPECT_FALSE(CheckLayout(gpu, overlapping).ok());
}

TEST(MigLayout, RejectsDisallowedStartsAndSecondMediaInstance) {
  const GpuModel& gpu = Gpu("a100-80gb");
  EXPECT_FALSE(CheckLayout(gpu, std::vector<Placement>{{Index(gpu, "3g.40gb"), 2}}).ok());
  EXPECT_FALSE(CheckLayout(gpu, std::vector<Placement>{{Index(gpu, "4g.40gb"), 4}}).ok());
  const int me = Index(gpu, "1g.10gb+me");
  EXPECT_FALSE(CheckLayout(gpu, std::vector<Placement>{{me, 0}, {me, 1}}).ok());
}

TEST(MigLayout, PackProfilesFindsALegalLayoutOrNone) {
  const GpuModel& gpu = Gpu("a100-80gb");
  const int g1 = Index(gpu, "1g.10gb"), g2 = Index(gpu, "2g.20gb"), g3 = Index(gpu, "3g.40gb"),
            g4 = Index(gpu, "4g.40gb");
  auto packed = PackProfiles(gpu, std::vector<int>{g1, g2, g4});
  ASSERT_TRUE(packed.has_value());
  EXPECT_TRUE(CheckLayout(gpu, *packed).ok());
  EXPECT_EQ((*packed)[2].start, 0);  // the 4g can only start at 0
  // 3g + 3g + 1g: both 3g halves use all 8 memory slices.
  EXPECT_FALSE(PackProfiles(gpu, std::vector<int>{g3, g3, g1}).has_value());
  // Eight 1g instances do not fit: only seven starts exist.
  EXPECT_FALSE(PackProfiles(gpu, std::vector<int>(8, g1)).has_value());
}

}  // namespace
}  // namespace tessera
