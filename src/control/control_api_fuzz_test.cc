// The control plane's API under mutated requests, as the CLI's parsers are
// fuzzed in-tree: every seed of fuzz/corpus/fuzz_control_api/ (the libFuzzer
// harness's corpus) mutated by testing::Mutate, in a fixed order on one plane,
// so that state one request builds (a scenario, plans, transitions, node
// reports) meets the next. No request may crash, throw, answer 500, or answer
// a 4xx that is not the API's error object; every JSON reply parses.
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "api_request_text.h"
#include "fuzz_mutator.h"
#include "tessera/control/control_plane.h"
#include "tessera/control/sqlite_store.h"
#include "tiny_problem.h"

namespace tessera {
namespace {

namespace fs = std::filesystem;
using Json = nlohmann::json;

// JSON's mutations, with the bytes of paths and queries among the insertions.
const std::string kRequestBytes = std::string(",\n\r\"' :{}[]\\/?&=%\x01\xff", 20) + '\0';
const testing::MutationVocabulary kRequestMutations = {kRequestBytes,
                                                       testing::JsonMutations().numbers};

std::vector<std::string> Seeds() {
  std::vector<fs::path> paths;
  for (const auto& entry :
       fs::directory_iterator(fs::path(TESSERA_SOURCE_DIR) / "fuzz/corpus/fuzz_control_api")) {
    paths.push_back(entry.path());
  }
  std::sort(paths.begin(), paths.end());
  std::vector<std::string> seeds;
  for (const fs::path& path : paths) {
    std::ifstream in(path, std::ios::binary);
    std::stringstream text;
    text << in.rdbuf();
    seeds.push_back(text.str());
  }
  return seeds;
}

// Checks one reply against Handle's contract; returns what is wrong, or "".
std::string Fault(const ApiResponse& response) {
  if (response.status >= 500 && response.status != 503) return "a 5xx";
  if (response.content_type != "application/json") return "";
  const Json body = Json::parse(response.body, nullptr, false);
  if (body.is_discarded()) return "a JSON reply that does not parse";
  if (response.status < 400) return "";
  const Json* error = body.contains("error") ? &body["error"] : nullptr;
  if (error == nullptr || !error->is_object() || !(*error)["code"].is_string() ||
      !(*error)["message"].is_string() ||
      !((*error)["field"].is_string() || (*error)["field"].is_null())) {
    return "a 4xx without the error object";
  }
  return "";
}

TEST(ControlApiFuzz, MutatedRequestsNeverCrashOrAnswerOutsideTheContract) {
  const fs::path dir = fs::path(::testing::TempDir()) / "control_api_fuzz";
  fs::remove_all(dir);
  fs::create_directories(dir);
  Result<std::unique_ptr<SqliteStore>> store = SqliteStore::Open((dir / "api.db").string());
  ASSERT_TRUE(store.ok()) << store.status().ToString();
  ControlOptions options;
  options.wall_time = [] { return std::string("2025-01-01T00:00:00Z"); };
  options.routers = {"edge"};
  // The tiny profiles under the papers' bare rule (tiny_problem.h).
  options.inputs.profile_table = std::make_shared<const ProfileTable>(testing::TinyTable());
  options.inputs.capacity_rule = "bare";
  options.inputs.router = "weighted";
  Result<std::unique_ptr<ControlPlane>> plane = ControlPlane::Open(std::move(*store), options);
  ASSERT_TRUE(plane.ok()) << plane.status().ToString();

  const std::vector<std::string> seeds = Seeds();
  ASSERT_GE(seeds.size(), 5u) << "the seed corpus fuzz/corpus/fuzz_control_api/ is missing";
  std::mt19937 rng(20261126);
  std::map<int, int> statuses;
  for (int round = 0; round < 300; ++round) {
    for (const std::string& seed : seeds) {
      // Every seed as it is first (valid requests build state), then mutants.
      const std::string text = round == 0 ? seed : testing::Mutate(seed, rng, kRequestMutations);
      ApiResponse response;
      EXPECT_NO_THROW(response = (*plane)->Handle(testing::ParseRequestText(text)));
      ++statuses[response.status];
      const std::string fault = Fault(response);
      ASSERT_TRUE(fault.empty()) << fault << ": HTTP " << response.status << " " << response.body
                                 << "\n--- request:\n"
                                 << text;
    }
  }
  // The mutants reach both the handlers' success paths and their errors.
  EXPECT_GT(statuses[200] + statuses[201], 100);
  EXPECT_GT(statuses[400], 100);
  fs::remove_all(dir);
}

}  // namespace
}  // namespace tessera
