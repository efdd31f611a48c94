// The shipped day shape (examples/days/alibaba-2023-day.csv) is what
// scripts/day-shape.py derives from the Alibaba GPU trace 2023, and reads as
// a day of rates.
#include <gtest/gtest.h>

#include <cstdio>
#include <string>

#include "tessera/util/text_io.h"
#include "tessera/workload/day_rates.h"
#include "test_paths.h"

namespace tessera {
namespace {

TEST(DayShape, ShippedFileIsTheTracesFold) {
  const std::string pods = "alibaba-gpu-2023/csv/openb_pod_list_default.csv";
  TESSERA_SKIP_WITHOUT_SHARED_DATA(pods);
  const std::string command = "python3 " + testing::SourcePath("scripts/day-shape.py") + " " +
                              testing::SharedDataPath(pods);
  FILE* pipe = popen(command.c_str(), "r");
  ASSERT_NE(pipe, nullptr);
  std::string derived;
  char buffer[4096];
  for (size_t n; (n = fread(buffer, 1, sizeof buffer, pipe)) > 0;) derived.append(buffer, n);
  ASSERT_EQ(pclose(pipe), 0) << command;
  Result<std::string> shipped =
      ReadTextFile(testing::SourcePath("examples/days/alibaba-2023-day.csv"));
  ASSERT_TRUE(shipped.ok());
  EXPECT_EQ(derived, *shipped);
}

TEST(DayShape, ReadsAsADayPeakingAtOneWithAFourfoldSwing) {
  Scenario one;
  one.services = {{"a", "resnet50", 100, 200, 0}};
  Result<DayRates> day =
      LoadDayRates(testing::SourcePath("examples/days/alibaba-2023-day.csv"), one);
  ASSERT_TRUE(day.ok()) << day.status().message();
  ASSERT_EQ(day->minutes(), 1440);
  double low = 1e9;
  double high = 0;
  for (const auto& row : day->rps) {
    low = std::min(low, row[0]);
    high = std::max(high, row[0]);
  }
  EXPECT_NEAR(high, 100, 0.2);
  EXPECT_NEAR(high / low, 4.0, 0.05);
}

}  // namespace
}  // namespace tessera
