// The GRMU paper's worked examples (sections 4-5, Fig. 2-3, Table 3) on the
// A100-40GB, whose six profiles are exactly the paper's.
#include "tessera/online/mig_capability.h"

#include <gtest/gtest.h>

#include <set>
#include <utility>
#include <vector>

namespace tessera {
namespace {

const GpuModel& A100() { return *FindGpu("a100-40gb").value(); }

int P(std::string_view name) { return A100().ProfileIndex(name); }

SliceMask Used(std::initializer_list<int> slices) {
  SliceMask m = 0;
  for (int s : slices) m |= SliceMask{1} << s;
  return m;
}

std::vector<int> Capacities(const CapabilityTable& t, SliceMask used) {
  std::vector<int> c;
  for (const char* p : {"1g.5gb", "1g.10gb", "2g.10gb", "3g.20gb", "4g.20gb", "7g.40gb"}) {
    c.push_back(t.ProfileCapacity(used, P(p)));
  }
  return c;
}

TEST(CapabilityTable, ProfilesAreTheSixWithoutMediaExtensions) {
  CapabilityTable t(A100());
  ASSERT_EQ(t.profiles().size(), 6u);
  EXPECT_EQ(t.Slot(P("1g.5gb+me")), -1);
  EXPECT_EQ(t.Capability(0), 7 + 4 + 3 + 2 + 1 + 1);
}

TEST(CapabilityTable, Fig2bFreeBlocks124567HaveCc9) {
  CapabilityTable t(A100());
  const SliceMask used = Used({0, 3});  // free: {1, 2, 4, 5, 6, 7}
  EXPECT_EQ(t.Capability(used), 9);
  EXPECT_EQ(Capacities(t, used), (std::vector<int>{5, 2, 1, 1, 0, 0}));
}

TEST(CapabilityTable, Fig3ConfigurationsHaveTable3Capacities) {
  CapabilityTable t(A100());
  // Original: the driver's two 1g.5gb (blocks 6 and 4); alternative: the same
  // two instances on blocks 2 and 3.
  const SliceMask original = Used({4, 6});
  const SliceMask alternative = Used({2, 3});
  EXPECT_EQ(Capacities(t, original), (std::vector<int>{5, 2, 2, 1, 1, 0}));
  EXPECT_EQ(Capacities(t, alternative), (std::vector<int>{5, 3, 2, 1, 0, 0}));
  EXPECT_EQ(t.Capability(original), 11);
  EXPECT_EQ(t.Capability(alternative), 11);
}

TEST(CapabilityTable, TwoSmallestInstancesOnAnEmptyGpuLandOnBlocks6Then4) {
  CapabilityTable t(A100());
  const int first = t.AssignStart(0, P("1g.5gb"));
  EXPECT_EQ(first, 6);
  EXPECT_EQ(t.AssignStart(Used({first}), P("1g.5gb")), 4);
}

TEST(CapabilityTable, AssignStartMaximisesCcAndRefusesWhatDoesNotFit) {
  CapabilityTable t(A100());
  EXPECT_EQ(t.AssignStart(0, P("3g.20gb")), 4);  // leaves 4g@0 possible
  EXPECT_EQ(t.AssignStart(Used({4, 5, 6, 7}), P("3g.20gb")), 0);
  EXPECT_EQ(t.AssignStart(Used({0}), P("4g.20gb")), -1);
  EXPECT_EQ(t.AssignStart(Used({7}), P("7g.40gb")), -1);
  EXPECT_EQ(t.AssignStart(0, P("1g.5gb+me")), -1);  // not in the profile set
}

// Section 5.1: a depth-first walk adding one instance at a time from an empty
// GPU reaches 723 distinct configurations, 78 of them terminal.
TEST(CapabilityTable, DepthFirstWalkReaches723ConfigurationsAnd78Terminal) {
  CapabilityTable t(A100());
  using Config = std::set<std::pair<int, int>>;  // (profile, start)
  std::set<Config> seen;
  int terminal = 0;
  std::vector<std::pair<Config, SliceMask>> stack{{{}, 0}};
  while (!stack.empty()) {
    auto [config, used] = stack.back();
    stack.pop_back();
    if (!seen.insert(config).second) continue;
    bool extended = false;
    for (int p : t.profiles()) {
      for (int start : A100().profiles[p].starts) {
        const SliceMask mask = MaskOf(A100(), {p, start});
        if (start + A100().profiles[p].memory_slices > 8 || (mask & used)) continue;
        Config next = config;
        next.insert({p, start});
        stack.push_back({next, used | mask});
        extended = true;
      }
    }
    terminal += !extended;
  }
  EXPECT_EQ(seen.size(), 723u);
  EXPECT_EQ(terminal, 78);
}

TEST(CapabilityTable, FragmentationIsZeroWhenFullAndCountsUnusableSpace) {
  CapabilityTable t(A100());
  EXPECT_EQ(t.Fragmentation(0xff), 0);
  // Empty: 1g.5gb leaves block 7 (1/1), 2g.10gb blocks 6-7 (2/2), 4g.20gb
  // blocks 4-7 (4/4); the others tile the GPU.
  EXPECT_DOUBLE_EQ(t.Fragmentation(0), 3);
  // Free {1,2,4,5,6,7} strands more space than free {4..7}.
  EXPECT_GT(t.Fragmentation(Used({0, 3})), t.Fragmentation(Used({0, 1, 2, 3})));
}

TEST(CapabilityTable, LargestFreeRunIsTheLongestStretchOfFreeSlices) {
  CapabilityTable t(A100());
  EXPECT_EQ(t.LargestFreeRun(0), 8);
  EXPECT_EQ(t.LargestFreeRun(0xff), 0);
  EXPECT_EQ(t.LargestFreeRun(Used({0})), 7);
  EXPECT_EQ(t.LargestFreeRun(Used({2, 3})), 4);     // free {0,1} and {4..7}
  EXPECT_EQ(t.LargestFreeRun(Used({1, 4, 6})), 2);  // free {0}, {2,3}, {5}, {7}
}

// frag's measure: for every profile, the free slices none of its free
// allowed starts covers, summed (docs/online-placement.md).
TEST(CapabilityTable, StrandedSlicesCountTheFreeSlicesEachProfileCannotUse) {
  CapabilityTable t(A100());
  EXPECT_EQ(t.StrandedSlices(0xff), 0);
  // Empty: slice 7 for 1g.5gb (starts 0-6), 6-7 for 2g.10gb (0, 2, 4), 4-7
  // for 4g.20gb (0); 1g.10gb, 3g.20gb and 7g.40gb tile the GPU.
  EXPECT_EQ(t.StrandedSlices(0), 1 + 2 + 4);
  // A 4g.20gb on 0-3: free 4-7. 1g.5gb strands 7, 2g.10gb 6-7, 4g.20gb and
  // 7g.40gb all four: 1 + 2 + 4 + 4.
  EXPECT_EQ(t.StrandedSlices(Used({0, 1, 2, 3})), 11);
  // A 3g.20gb on 4-7: free 0-3, which only 7g.40gb cannot use.
  EXPECT_EQ(t.StrandedSlices(Used({4, 5, 6, 7})), 4);
  // A 1g.5gb on 6: free 0-5 and 7. 1g.5gb, 1g.10gb and 2g.10gb each strand
  // 7; 3g.20gb and 4g.20gb strand 4, 5 and 7; 7g.40gb all 7.
  EXPECT_EQ(t.StrandedSlices(Used({6})), 1 + 1 + 1 + 3 + 3 + 7);
}

TEST(CapabilityTable, ExpectedCapabilityWeighsEachProfilesStarts) {
  CapabilityTable t(A100());
  std::vector<double> only_1g10(6, 0);
  only_1g10[t.Slot(P("1g.10gb"))] = 1;
  EXPECT_DOUBLE_EQ(t.ExpectedCapability(Used({2, 3}), only_1g10), 3);
  EXPECT_DOUBLE_EQ(t.ExpectedCapability(Used({4, 6}), only_1g10), 2);
  std::vector<double> uniform(6, 1);
  EXPECT_DOUBLE_EQ(t.ExpectedCapability(Used({4, 6}), uniform), 11);
}

TEST(CapabilityTable, WorksForTheFourSliceA30) {
  CapabilityTable t(*FindGpu("a30-24gb").value());
  EXPECT_EQ(t.Capability(0), 4 + 2 + 1);
  EXPECT_EQ(t.FreeSlices(0b0011), 2);
}

}  // namespace
}  // namespace tessera
