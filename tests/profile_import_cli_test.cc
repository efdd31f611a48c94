// End-to-end tests of `tessera profiles import`: ParvaGPU's measured profiles,
// written as Triton's tools document their CSVs, import through the command
// line into a table that plans like the original; bad input exits 2 naming
// the file, line and column, or the flag.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>
#include <tuple>
#include <vector>

#include "cli_fixture.h"
#include "tessera/profile_io.h"
#include "triton_csv_writer.h"

namespace tessera {
namespace {

using testing::Outcome;
namespace fs = std::filesystem;

class ProfileImportCli : public testing::CliTest {
 protected:
  void SetUp() override {
    CliTest::SetUp();
    if (!testing::SharedDataPresent("parvagpu/prof_data")) {
      GTEST_SKIP() << "../shared/data/parvagpu/prof_data is absent";
    }
    Result<ProfileTable> parva = LoadProfiles(ProfData());
    ASSERT_TRUE(parva.ok()) << parva.status().message();
    parva_ = std::move(*parva);
  }
  static std::string ProfData() { return testing::SharedDataPath("parvagpu/prof_data"); }

  // What a plan places: per GPU, each instance's (profile, start, service,
  // batch, procs), from `tessera plan --format json`.
  std::vector<std::vector<std::tuple<std::string, int, std::string, int, int>>> Placements(
      const std::string& profiles, int row, const std::string& planner) {
    const Outcome o = Tessera("plan --profiles " + profiles + " --parva-slo " +
                              testing::SharedDataPath("parvagpu/SLO") + " --row " +
                              std::to_string(row) + " --planner " + planner + " --format json");
    EXPECT_EQ(o.exit_code, 0) << o.err;
    const nlohmann::json plan = nlohmann::json::parse(o.out, nullptr, false);
    std::vector<std::vector<std::tuple<std::string, int, std::string, int, int>>> gpus;
    if (plan.is_discarded()) return gpus;
    for (const nlohmann::json& gpu : plan["gpus"]) {
      auto& instances = gpus.emplace_back();
      for (const nlohmann::json& i : gpu["instances"]) {
        instances.emplace_back(i["profile"], i["start"], i["service"], i["batch"], i["procs"]);
      }
    }
    return gpus;
  }

  ProfileTable parva_;
};

// Conformance (docs/profile-import.md): ParvaGPU's 1,747 measured A100-80GB
// configurations, written as Model Analyzer's inference table (one file per
// MIG profile) and imported, plan ParvaGPU's scenario rows 1-6 on the very
// same GPUs, instances, batches and processes as prof_data itself does.
TEST_F(ProfileImportCli, PlansOnImportedProfilesLikeOnParvaGpus) {
  std::string files;
  for (const auto& [profile, text] : testing::ModelAnalyzerCsvs(parva_)) {
    files += " profile=" + profile + ":" + Write("ma-" + profile + ".csv", text).string();
  }
  const fs::path imported = dir_ / "imported.csv";
  const Outcome o = Tessera("profiles import --from model-analyzer --gpu a100-80gb" + files +
                            " -o " + imported.string());
  ASSERT_EQ(o.exit_code, 0) << o.err;
  EXPECT_EQ(o.err,
            "tessera: imported 1747 profile rows (11 models) from 5 files; set aside 1747 Model "
            "Analyzer rows whose concurrency differs from their instance count\n");
  // Exact equality of plans: the imported throughputs differ from
  // prof_data's only by the 6-digit rounding of the CSV (at most 5e-6
  // relative), which moves no plan of these rows.
  for (const std::string planner : {"parva", "exact"}) {
    for (int row = 1; row <= 6; ++row) {
      const auto want = Placements(ProfData(), row, planner);
      ASSERT_FALSE(want.empty());
      EXPECT_EQ(Placements(imported.string(), row, planner), want)
          << "row " << row << ", planner " << planner;
    }
  }
}

TEST_F(ProfileImportCli, PerfAnalyzerFilesWithSettingsMergeIntoOneTable) {
  ProfileTable resnet;
  for (const ProfileEntry& e : parva_.entries()) {
    if (e.key.model == "resnet50") {
      ASSERT_TRUE(resnet.Add(e).ok());
    }
  }
  std::string files;
  for (const auto& [key, text] : testing::PerfAnalyzerCsvs(resnet)) {
    const auto& [model, profile, batch] = key;
    const std::string name = fmt::format("{}-{}-b{}.csv", model, profile, batch);
    files += fmt::format(" profile={},batch={}:{}", profile, batch, Write(name, text).string());
  }
  // `profile` is an alias of `profiles`.
  const Outcome o = Tessera("profile import --from perf-analyzer --model ResNet50" + files);
  ASSERT_EQ(o.exit_code, 0) << o.err;
  Result<ProfileTable> back = ParseTesseraProfileCsv(o.out, "stdout");
  ASSERT_TRUE(back.ok()) << back.status().message();
  ASSERT_EQ(back->size(), resnet.size());
  for (const ProfileEntry& want : resnet.entries()) {
    const ProfileEntry* got = back->Find(want.key);
    ASSERT_NE(got, nullptr);
    EXPECT_EQ(testing::Micros(got->latency_ms), testing::Micros(want.latency_ms));
  }
}

// Needs no shared data.
class ProfileImportCliErrors : public testing::CliTest {};

TEST_F(ProfileImportCliErrors, BadInputExitsTwoNamingWhere) {
  const std::string header = "Concurrency,Inferences/Second,p99 latency,Avg latency\n";
  const fs::path a = Write("a.csv", header + "1,100,12000,10000\n");
  const fs::path garbled = Write("garbled.csv", header + "1,100,12000,10000\n2,1OO,1,1\n");
  const std::string base = "profiles import --from perf-analyzer --model resnet50 --batch 4 ";
  const std::vector<std::pair<std::string, std::string>> cases = {
      {base + "--mig-profile 3g.40gb " + a.string() + " " + a.string(),
       a.string() +
           ":2: field 'row': duplicate entry (resnet50, a100-80gb, 3g.40gb, batch 4, "
           "procs 1), first at " +
           a.string() + ":2"},
      {base + "--mig-profile 3g.40gb " + garbled.string(),
       garbled.string() + ":3: field 'Inferences/Second': not a number: '1OO'"},
      {base + a.string(), a.string() + ": --mig-profile: required"},
      {base + "--mig-profile 3g.40gb --gpu t4 " + a.string(), a.string() + ": --gpu: "},
      {base + "--mig-profile 3g.40gb --latency p42 " + a.string(),
       "--latency: unknown latency 'p42'"},
      {base + "profile=3g.40gb,size=2:" + a.string(), "FILE 'profile=3g.40gb,size=2:"},
      {"profiles import --from model-analyzer --mig-profile 3g.40gb " + a.string(),
       a.string() + ":1: field 'Throughput (infer/sec)': missing column"},
  };
  for (const auto& [args, want] : cases) {
    const Outcome o = Tessera(args);
    EXPECT_EQ(o.exit_code, 2) << args;
    EXPECT_TRUE(o.err.starts_with("tessera: error: " + want)) << o.err << "\nwant: " << want;
    EXPECT_TRUE(o.out.empty()) << o.out;
  }
  EXPECT_EQ(Tessera("profiles import " + a.string()).exit_code, 2);  // --from is required
}

}  // namespace
}  // namespace tessera
