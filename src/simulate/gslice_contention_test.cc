#include "simulate/gslice_contention.h"

#include <gtest/gtest.h>

#include <vector>

#include "tessera/profile/igniter_model.h"
#include "test_paths.h"

namespace tessera {
namespace {

TEST(GsliceContentionModel, SmsAreSplitOnlyWhenLimitsOversubscribe) {
  // Limits that fit: untouched, however busy the neighbours.
  EXPECT_DOUBLE_EQ(EffectiveShare(0.3, std::vector<MpsNeighbour>{{0.7, 1}}), 0.3);
  // Default MPS, two busy processes: half each; three: a third.
  EXPECT_DOUBLE_EQ(EffectiveShare(1, std::vector<MpsNeighbour>{{1, 1}}), 0.5);
  EXPECT_DOUBLE_EQ(EffectiveShare(1, std::vector<MpsNeighbour>{{1, 1}, {1, 1}}), 1.0 / 3);
  // An idle neighbour takes nothing; one busy a quarter of the time, a little.
  EXPECT_DOUBLE_EQ(EffectiveShare(1, std::vector<MpsNeighbour>{{1, 0}}), 1);
  EXPECT_DOUBLE_EQ(EffectiveShare(1, std::vector<MpsNeighbour>{{1, 0.25}}), 0.8);
  EXPECT_DOUBLE_EQ(EffectiveShare(0.6, {}), 0.6);
}

TEST(GsliceContentionModel, L2InterferenceGrowsWithNeighboursShareAndActivity) {
  EXPECT_DOUBLE_EQ(InterferenceFactor(0.002, {}), 1);
  const double one = InterferenceFactor(0.002, std::vector<MpsNeighbour>{{1, 1}});
  EXPECT_DOUBLE_EQ(one, 1 + 0.002 * kL2PercentPerShare);
  EXPECT_DOUBLE_EQ(InterferenceFactor(0.002, std::vector<MpsNeighbour>{{1, 0.5}}),
                   1 + 0.001 * kL2PercentPerShare);
  EXPECT_GT(InterferenceFactor(0.002, std::vector<MpsNeighbour>{{1, 1}, {0.5, 1}}), one);
}

// The per-model alpha_cache are iGniter's fit (its artifact's curve_fit on
// the V100 profiles): equal to the shared file's to the 4 significant digits
// kept (tolerance 5e-7, half the last digit).
TEST(GsliceContentionModel, AlphaCacheIsIgnitersFit) {
  constexpr char kFile[] = "igniter/derived/fitted_coefficients_v100.json";
  TESSERA_SKIP_WITHOUT_SHARED_DATA(kFile);
  Result<MpsCoefficients> c = LoadMpsCoefficients(testing::SharedDataPath(kFile));
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  double sum = 0;
  for (const WorkloadCoefficients& w : c->workloads) {
    EXPECT_NEAR(ContentionAlphaCache(w.model), w.alpha_cache, 5e-7) << w.model;
    sum += w.alpha_cache;
  }
  ASSERT_EQ(c->workloads.size(), 4u);
  EXPECT_NEAR(ContentionAlphaCache("mobilenetv2"), sum / 4, 5e-7);
}

}  // namespace
}  // namespace tessera
