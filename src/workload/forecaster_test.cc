#include "tessera/workload/forecaster.h"

#include <gtest/gtest.h>

#include <cmath>
#include <vector>

namespace tessera {
namespace {

std::unique_ptr<Forecaster> Make(std::string_view name) {
  Result<std::unique_ptr<Forecaster>> f = BuiltinForecasters().Create(name);
  EXPECT_TRUE(f.ok()) << f.status().message();
  return std::move(*f);
}

TEST(Forecaster, RegistryListsTheFour) {
  EXPECT_EQ(BuiltinForecasters().JoinedNames(), "holt, holt-fast, last, seasonal");
  EXPECT_FALSE(BuiltinForecasters().Create("arima").ok());
}

TEST(Forecaster, LastIsFlat) {
  const std::vector<double> seen = {1, 2, 3};
  EXPECT_EQ(Make("last")->Forecast(seen, {}, 3), (std::vector<double>{3, 3, 3}));
}

TEST(Forecaster, HoltFollowsARampAndNeverGoesBelowZero) {
  std::vector<double> ramp;
  for (int m = 0; m < 200; ++m) ramp.push_back(100 + 2 * m);
  const std::vector<double> ahead = Make("holt")->Forecast(ramp, {}, 10);
  ASSERT_EQ(ahead.size(), 10u);
  for (int k = 0; k < 10; ++k) EXPECT_NEAR(ahead[k], 100 + 2 * (200 + k), 1.0) << k;
  std::vector<double> falling;
  for (int m = 0; m < 200; ++m) falling.push_back(std::max(0.0, 400 - 2.0 * m));
  for (double v : Make("holt")->Forecast(falling, {}, 100)) EXPECT_GE(v, 0);
}

TEST(Forecaster, HoltFastTurnsWithTheLoadWhereHoltStillFalls) {
  // 100 minutes falling by 10 req/s a minute, then 5 rising by 8.
  std::vector<double> turn;
  for (int m = 0; m < 100; ++m) turn.push_back(2000 - 10 * m);
  for (int k = 1; k <= 5; ++k) turn.push_back(1000 + 8 * k);
  const double last = turn.back();
  EXPECT_LT(Make("holt")->Forecast(turn, {}, 10).back(), last);
  EXPECT_GT(Make("holt-fast")->Forecast(turn, {}, 10).back(), last + 50);
  // On a steady ramp both follow it.
  std::vector<double> ramp;
  for (int m = 0; m < 200; ++m) ramp.push_back(100 + 2 * m);
  EXPECT_NEAR(Make("holt-fast")->Forecast(ramp, {}, 10).back(), 100 + 2 * 209, 1.0);
}

TEST(Forecaster, SeasonalReadsThePreviousDayScaledToTheRecentLevel) {
  std::vector<double> yesterday;
  for (int m = 0; m < 1440; ++m) yesterday.push_back(100 + 50 * std::sin(m * 2 * M_PI / 1440));
  std::vector<double> today;
  for (int m = 0; m < 600; ++m) today.push_back(1.2 * yesterday[m]);
  const std::vector<double> ahead = Make("seasonal")->Forecast(today, yesterday, 30);
  for (int k = 0; k < 30; ++k) EXPECT_NEAR(ahead[k], 1.2 * yesterday[600 + k], 1e-9);
  // Past the end of the previous day it wraps around; without one it is last.
  EXPECT_NEAR(Make("seasonal")->Forecast(today, yesterday, 2000)[1439], 1.2 * yesterday[599], 1e-9);
  EXPECT_EQ(Make("seasonal")->Forecast(today, {}, 2), (std::vector<double>(2, today.back())));
}

}  // namespace
}  // namespace tessera
