// Tests of LoadArrivalTrace (arrivals.h): what a trace CSV may look like, and
// that every malformed one is refused with its file, line and field.
#include <gtest/gtest.h>

#include <array>
#include <filesystem>
#include <random>
#include <string>
#include <vector>

#include "fuzz_mutator.h"
#include "tessera/simulate/arrivals.h"
#include "test_paths.h"

namespace tessera {
namespace {

namespace fs = std::filesystem;

class ArrivalTraceTest : public ::testing::Test {
 protected:
  void SetUp() override { dir_ = testing::FreshTestDir(); }
  void TearDown() override { fs::remove_all(dir_); }

  // Writes `text` to trace.csv and loads it.
  Result<std::map<std::string, std::vector<double>>> Load(const std::string& text) {
    testing::WriteTextFile(Path(), text);
    return LoadArrivalTrace(Path());
  }
  std::string Path() const { return (dir_ / "trace.csv").string(); }

  fs::path dir_;
};

TEST_F(ArrivalTraceTest, GroupsByServiceAndSortsTimes) {
  auto trace = Load(
      "service,time_s\n"
      "web,0.5\n"
      "qa,2\n"
      "web,0.25\n"
      "web,0.5\n"  // two requests at the same instant are two requests
      "qa,0\n");
  ASSERT_TRUE(trace.ok()) << trace.status().ToString();
  ASSERT_EQ(trace->size(), 2u);
  EXPECT_EQ(trace->at("web"), (std::vector<double>{0.25, 0.5, 0.5}));
  EXPECT_EQ(trace->at("qa"), (std::vector<double>{0, 2}));
}

// What spreadsheets and loggers write: a byte-order mark, CRLF, blank lines,
// spaces around fields, exponents, no final newline.
TEST_F(ArrivalTraceTest, ToleratesCrlfBlankLinesAndSpaces) {
  auto trace = Load(
      "\xEF\xBB\xBFservice, time_s\r\n"
      "\r\n"
      " web , 1.5e1\r\n"
      "   \r\n"
      "web,3");
  ASSERT_TRUE(trace.ok()) << trace.status().ToString();
  EXPECT_EQ(trace->at("web"), (std::vector<double>{3, 15}));
}

TEST_F(ArrivalTraceTest, ErrorsNameFileLineAndField) {
  struct Case {
    std::string name;
    std::string text;
    std::string expected;  // the message after "<path>:"
  };
  const std::vector<Case> cases = {
      {"empty file", "", "1: field 'header': empty file, expected 'service,time_s'"},
      {"header only", "service,time_s\n\n",
       "2: field 'row': no requests: expected rows of 'service,time_s' after the header"},
      {"wrong header", "svc,t\nweb,1\n",
       "1: field 'header': expected 'service,time_s', got 'svc,t'"},
      {"swapped header", "time_s,service\n1,web\n",
       "1: field 'header': expected 'service,time_s', got 'time_s,service'"},
      {"extra column", "service,time_s\nweb,1\nweb,2,3\n",
       "3: field 'row': 3 fields but the header has 2: 'web,2,3'"},
      {"missing column", "service,time_s\nweb\n",
       "2: field 'row': 1 fields but the header has 2: 'web'"},
      {"empty service", "service,time_s\n,1\n", "2: field 'service': must not be empty"},
      {"negative time", "service,time_s\nweb,-1\n",
       "2: field 'time_s': must be a finite number >= 0 (seconds), got '-1'"},
      {"NaN time", "service,time_s\nweb,1\nweb,nan\n",
       "3: field 'time_s': must be a finite number >= 0 (seconds), got 'nan'"},
      {"infinite time", "service,time_s\nweb,1e400\n",
       "2: field 'time_s': must be a finite number >= 0 (seconds), got '1e400'"},
      {"unit in time", "service,time_s\nweb,5s\n",
       "2: field 'time_s': must be a finite number >= 0 (seconds), got '5s'"},
      {"empty time", "service,time_s\nweb,\n",
       "2: field 'time_s': must be a finite number >= 0 (seconds), got ''"},
      {"stray CR shown", "service,time_s\nweb,1\rx\n",
       "2: field 'time_s': must be a finite number >= 0 (seconds), got '1\\x0dx'"},
  };
  for (const Case& c : cases) {
    auto trace = Load(c.text);
    ASSERT_FALSE(trace.ok()) << c.name;
    EXPECT_EQ(trace.status().code(), StatusCode::kInvalidArgument) << c.name;
    EXPECT_EQ(trace.status().message(), Path() + ":" + c.expected) << c.name;
  }
}

TEST_F(ArrivalTraceTest, MissingFileIsNotFound) {
  auto trace = LoadArrivalTrace((dir_ / "absent.csv").string());
  ASSERT_FALSE(trace.ok());
  EXPECT_EQ(trace.status().code(), StatusCode::kNotFound);
  EXPECT_NE(trace.status().message().find("absent.csv"), std::string::npos);
  auto directory = LoadArrivalTrace(dir_.string());
  ASSERT_FALSE(directory.ok());
  EXPECT_EQ(directory.status().code(), StatusCode::kIoError);
}

// Mutants of a valid trace: each loads, or fails with a message that starts
// with the file's path; never a crash or an exception. Whatever loads holds
// only finite times >= 0, ascending, under non-empty names.
TEST_F(ArrivalTraceTest, FuzzNeverCrashesAndErrorsNameTheFile) {
  const std::array<std::string, 10> numbers = {"-1",   "NaN", "inf", "1e400", "",
                                               "-0.0", "abc", "0",   "1.5",   "0x10"};
  const std::string bytes = std::string(",\n\r\" :-.0e\x01\xff", 13) + '\0';
  const testing::MutationVocabulary vocabulary = {bytes, numbers};
  const std::string valid =
      "service,time_s\n"
      "web,0.125\n"
      "qa,1.5\n"
      "web,0.0625\n"
      "qa,2e-1\n"
      "web,3\n";
  std::mt19937 rng(20240918);
  constexpr int kRuns = 2000;
  int errors = 0;
  for (int i = 0; i < kRuns; ++i) {
    const std::string mutant = testing::Mutate(valid, rng, vocabulary);
    EXPECT_NO_THROW({
      auto trace = Load(mutant);
      if (!trace.ok()) {
        ++errors;
        EXPECT_TRUE(trace.status().message().starts_with(Path() + ":"))
            << trace.status().message() << "\n--- input:\n"
            << mutant;
        continue;
      }
      for (const auto& [service, times] : *trace) {
        EXPECT_FALSE(service.empty()) << mutant;
        EXPECT_TRUE(std::is_sorted(times.begin(), times.end())) << mutant;
        for (double t : times) EXPECT_TRUE(std::isfinite(t) && t >= 0) << mutant;
      }
    }) << mutant;
  }
  // Sanity: the mutations reach the error paths, and not every one breaks the file.
  EXPECT_GT(errors, kRuns / 10);
  EXPECT_LT(errors, kRuns);
}

}  // namespace
}  // namespace tessera
