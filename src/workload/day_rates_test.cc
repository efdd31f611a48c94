#include "tessera/workload/day_rates.h"

#include <gtest/gtest.h>

#include <array>
#include <random>
#include <string>

#include "fuzz_mutator.h"

namespace tessera {
namespace {

Scenario TwoServices() {
  Scenario s;
  s.name = "two";
  s.source = "two.yaml";
  s.services = {{"a", "resnet50", 100, 200, 0}, {"b", "vgg19", 40, 400, 0}};
  return s;
}

TEST(DayRates, AShapeScalesEveryServiceAndSkipsComments) {
  const Result<DayRates> day = ParseDayRates(
      "# a comment\nminute,multiplier\n0,0.5\n\n1,1\n# more\n2,0.25\n", "day.csv", TwoServices());
  ASSERT_TRUE(day.ok()) << day.status().message();
  EXPECT_TRUE(day->shape);
  ASSERT_EQ(day->minutes(), 3);
  EXPECT_DOUBLE_EQ(day->rps[0][0], 50);
  EXPECT_DOUBLE_EQ(day->rps[0][1], 20);
  EXPECT_DOUBLE_EQ(day->rps[1][1], 40);
  EXPECT_DOUBLE_EQ(day->PeakOf(0, 0, 3), 100);
  EXPECT_DOUBLE_EQ(day->PeakOf(0, 2, 99), 25);
}

TEST(DayRates, PerServiceColumnsInAnyOrder) {
  const Result<DayRates> day =
      ParseDayRates("minute,b,a\n0,7,70\n1,8,80\n", "day.csv", TwoServices());
  ASSERT_TRUE(day.ok()) << day.status().message();
  EXPECT_FALSE(day->shape);
  EXPECT_DOUBLE_EQ(day->rps[1][0], 80);
  EXPECT_DOUBLE_EQ(day->rps[1][1], 8);
  EXPECT_EQ(day->ByService(), (std::vector<std::vector<double>>{{70, 80}, {7, 8}}));
}

TEST(DayRates, BadFilesNameFileLineAndField) {
  const std::array<std::pair<const char*, const char*>, 10> cases = {{
      {"", "day.csv: no header"},
      {"minute,multiplier\n0,1\n", "day.csv: at least 2 minutes"},
      {"time,multiplier\n0,1\n1,1\n", "day.csv:1: field 'time': the first column must be 'minute'"},
      {"minute,a,c\n0,1,1\n1,1,1\n", "day.csv:1: field 'c': no service"},
      {"minute,a\n0,1\n1,1\n", "day.csv:1: field 'b': no column for this service"},
      {"minute,a,a,b\n0,1,1,1\n", "day.csv:1: field 'a': column given twice"},
      {"minute,multiplier\n0,1\n2,1\n", "day.csv:3: field 'minute': minutes must count"},
      {"minute,multiplier\n0,1\n1,0\n",
       "day.csv:3: field 'multiplier': must be a finite number in (0, 1000]"},
      {"minute,a,b\n0,1,nan\n1,1,1\n", "day.csv:2: field 'b': must be"},
      {"minute,multiplier\n0,1,2\n1,1\n", "day.csv:2: field 'minute': expected 2 fields"},
  }};
  for (const auto& [text, error] : cases) {
    const Result<DayRates> day = ParseDayRates(text, "day.csv", TwoServices());
    ASSERT_FALSE(day.ok()) << text;
    EXPECT_EQ(day.status().message().rfind(error, 0), 0u) << day.status().message();
  }
}

TEST(DayRates, AMultiplierThatPushesARateOutOfRangeIsRefused) {
  Scenario s = TwoServices();
  s.services[0].rate_rps = 1e5;
  const Result<DayRates> day = ParseDayRates("minute,multiplier\n0,1\n1,1000\n", "day.csv", s);
  ASSERT_FALSE(day.ok());
  EXPECT_NE(day.status().message().find("day.csv:3: field 'multiplier': service 'a'"),
            std::string::npos)
      << day.status().message();
}

TEST(DayRates, AWeekIsTheLimit) {
  std::string text = "minute,multiplier\n";
  for (int m = 0; m <= kMaxDayMinutes; ++m) text += std::to_string(m) + ",1\n";
  const Result<DayRates> day = ParseDayRates(text, "week.csv", TwoServices());
  ASSERT_FALSE(day.ok());
  EXPECT_NE(day.status().message().find("at most 10080 minutes"), std::string::npos);
}

// Mutants of a valid file: a value, or an error naming the file.
TEST(DayRatesFuzz, MutantsNeverCrashAndErrorsNameTheFile) {
  static const std::array<std::string, 10> numbers = {"-1",  "nan", "inf", "1e400", "",
                                                      "abc", "0",   "1.5", "2000",  "-0"};
  static const std::string bytes = std::string(",\n\r# \t\x01\xff", 8) + '\0';
  const testing::MutationVocabulary vocabulary = {bytes, numbers};
  const std::string valid = "# shape\nminute,multiplier\n0,0.5\n1,1\n2,0.75\n3,0.25\n";
  const std::string columns = "minute,a,b\n0,10,4\n1,20,5\n2,30,6\n";
  std::mt19937 rng(7);
  int errors = 0;
  for (int i = 0; i < 3000; ++i) {
    const std::string mutant = testing::Mutate(i % 2 ? valid : columns, rng, vocabulary);
    const Result<DayRates> day = ParseDayRates(mutant, "m.csv", TwoServices());
    if (!day.ok()) {
      ++errors;
      EXPECT_EQ(day.status().message().rfind("m.csv", 0), 0u) << day.status().message();
      continue;
    }
    for (const auto& row : day->rps) {
      for (double r : row) EXPECT_TRUE(limits::kRateRps.Contains(r));
    }
  }
  EXPECT_GT(errors, 100);
}

}  // namespace
}  // namespace tessera
