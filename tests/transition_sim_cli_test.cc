// `tessera simulate --transition T.json --step-seconds X`: the real binary
// runs S1's plan through a hand-written transition that moves one instance
// to a spare GPU.
#include <gtest/gtest.h>

#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "cli_fixture.h"
#include "test_paths.h"

namespace tessera {
namespace {

namespace fs = std::filesystem;
using nlohmann::ordered_json;
using testing::CliTest;
using testing::Outcome;

const std::vector<std::string> kWindows = {"before", "phase 1", "phase 2", "after"};

class TransitionSimCliTest : public CliTest {
 protected:
  void SetUp() override {
    CliTest::SetUp();
    plan_ = dir_ / "plan.json";
    Outcome o = Tessera("plan --scenario " + Scenario() + " --format json -o " + plan_.string());
    ASSERT_EQ(o.exit_code, 0) << o.err;
  }

  static std::string Scenario() { return testing::SourcePath("examples/scenarios/s1.yaml"); }

  // Phase 1 creates a copy of GPU 0's first instance on a spare GPU; phase 2
  // destroys the original (`destroy_id` names that step). `destroy_gpu`
  // overrides the destroyed instance's GPU, to write a step that does not
  // apply.
  fs::path MoveFirstInstance(const std::string& destroy_id = "s2", int destroy_gpu = 0) {
    const ordered_json plan = ordered_json::parse(testing::ReadAll(plan_));
    const ordered_json& first = plan["gpus"][0]["instances"][0];
    const int spare = static_cast<int>(plan["gpus"].size());
    ordered_json create = {{"id", "s1"},
                           {"action", "create"},
                           {"gpu", spare},
                           {"profile", first["profile"]},
                           {"start", first["start"]},
                           {"service", first["service"]},
                           {"model", first["model"]},
                           {"batch", first["batch"]},
                           {"procs", first["procs"]},
                           {"throughput_rps", first["throughput_rps"]}};
    ordered_json destroy = {{"id", destroy_id},        {"action", "destroy"},
                            {"gpu", destroy_gpu},      {"profile", first["profile"]},
                            {"start", first["start"]}, {"service", first["service"]}};
    ordered_json gpu_map = ordered_json::object();
    for (int g = 0; g < spare; ++g) gpu_map[std::to_string(g)] = g;
    const ordered_json t = {{"format", "tessera-transition"},
                            {"version", 1},
                            {"gpu", plan["gpu"]},
                            {"spare_gpus", 1},
                            {"gpu_map", gpu_map},
                            {"phases", {{{"steps", {create}}}, {{"steps", {destroy}}}}},
                            {"summary",
                             {{"steps", 2},
                              {"phases", 2},
                              {"gpus_touched", 2},
                              {"peak_gpus", spare + 1},
                              {"min_capacity_ratio", 1}}}};
    return Write("t.json", t.dump(2));
  }

  Outcome Simulate(const fs::path& transition, const std::string& flags) {
    return Tessera("simulate --scenario " + Scenario() + " --deployment " + plan_.string() +
                   " --transition " + transition.string() + " " + flags);
  }

  fs::path plan_;
};

TEST_F(TransitionSimCliTest, TableAddsEveryWindowsServices) {
  Outcome o = Simulate(MoveFirstInstance(), "--step-seconds 2");
  ASSERT_EQ(o.exit_code, 0) << o.err;
  EXPECT_TRUE(o.out.starts_with("Simulation: 8 s simulated, ")) << o.out;
  const size_t windows = o.out.find("\nWindows (requests by arrival time)\n");
  ASSERT_NE(windows, std::string::npos) << o.out;
  for (const std::string& w : kWindows) {
    EXPECT_NE(o.out.find("\n  " + w + " ", windows), std::string::npos) << w << "\n" << o.out;
  }
}

TEST_F(TransitionSimCliTest, JsonAddsAWindowsArray) {
  const fs::path t = MoveFirstInstance();
  Outcome o = Simulate(t, "--step-seconds 2s --format json --seed 5");
  ASSERT_EQ(o.exit_code, 0) << o.err;
  const ordered_json r = ordered_json::parse(o.out, nullptr, false);
  ASSERT_TRUE(r.is_object()) << o.out;
  std::vector<std::string> keys;
  for (const auto& [key, value] : r.items()) keys.push_back(key);
  EXPECT_EQ(keys, (std::vector<std::string>{"duration_s", "requests", "services", "gpus",
                                            "instances", "windows"}));
  EXPECT_EQ(r["duration_s"], 8);
  ASSERT_EQ(r["windows"].size(), kWindows.size());
  for (size_t s = 0; s < r["services"].size(); ++s) {
    long requests = 0;
    for (size_t w = 0; w < kWindows.size(); ++w) {
      const ordered_json& window = r["windows"][w];
      EXPECT_EQ(window["name"], kWindows[w]);
      EXPECT_EQ(window["start_s"], 2 * w);
      EXPECT_EQ(window["end_s"], 2 * (w + 1));
      ASSERT_EQ(window["services"].size(), r["services"].size());
      EXPECT_EQ(window["services"][s]["name"], r["services"][s]["name"]);
      requests += window["services"][s]["requests"].get<long>();
    }
    EXPECT_EQ(requests, r["services"][s]["requests"].get<long>()) << r["services"][s]["name"];
  }
  EXPECT_EQ(Simulate(t, "--step-seconds 2s --format json --seed 5").out, o.out);
}

TEST_F(TransitionSimCliTest, BadInputExitsTwoWithOneLine) {
  const fs::path t = MoveFirstInstance();
  struct Case {
    std::string flags;
    std::string says;
  };
  const std::vector<Case> cases = {
      {"", "--step-seconds: required with --transition"},
      {"--step-seconds 0", "--step-seconds"},
      {"--step-seconds 2 --duration 5s", "--duration"},
  };
  for (const Case& c : cases) {
    Outcome o = Simulate(t, c.flags);
    EXPECT_EQ(o.exit_code, 2) << c.flags << "\n" << o.err;
    EXPECT_TRUE(o.err.starts_with("tessera: error: ")) << o.err;
    EXPECT_EQ(o.err.find('\n'), o.err.size() - 1) << "one line: " << o.err;
    EXPECT_NE(o.err.find(c.says), std::string::npos) << c.flags << "\n" << o.err;
  }
  Outcome alone = Tessera("simulate --scenario " + Scenario() + " --deployment " + plan_.string() +
                          " --step-seconds 2");
  EXPECT_EQ(alone.exit_code, 2) << alone.err;
  EXPECT_NE(alone.err.find("--transition"), std::string::npos) << alone.err;
  // GPU 99 holds nothing to destroy.
  Outcome stale = Simulate(MoveFirstInstance("gone", 99), "--step-seconds 2");
  EXPECT_EQ(stale.exit_code, 2) << stale.err;
  EXPECT_NE(stale.err.find("t.json"), std::string::npos) << stale.err;
  EXPECT_NE(stale.err.find("step 'gone'"), std::string::npos) << stale.err;
}

}  // namespace
}  // namespace tessera
