// The node agent end to end, without a GPU (issue 19, item 5): S3 is planned,
// `tessera deploy` writes its node plans, `tessera agent` applies them on the
// project's fake NVML with stand-in MPS daemons and serving processes
// (tessera-standin, which check the environment the real ones need and
// answer /v2/health/ready), and the machine must then hold exactly the
// plan's geometry and processes; then the day-to-night transition is planned
// and run through the agent. Also: a second run does nothing, a GPU with MIG
// off is exit 2 naming the GPU and the provisioning step, an NVML failure is
// reported with GPU, profile and start and a later run converges, and
// inventory reads the machine without changing it.
#include <gtest/gtest.h>

#include "agent_fixture.h"

namespace tessera::testing {
namespace {

namespace fs = std::filesystem;

class AgentCliTest : public AgentTest {
 protected:
  // Plans `scenario` (examples/scenarios/<scenario>.yaml) into <name>.json.
  void Plan(const std::string& scenario, const std::string& name) {
    const Outcome o = Tessera("plan --scenario " + SourcePath("examples/scenarios/" + scenario) +
                              " --format json -o " + (dir_ / (name + ".json")).string());
    ASSERT_EQ(o.exit_code, 0) << o.err;
  }
  // `tessera deploy` of <name>.json into the directory <name>/.
  void Deploy(const std::string& name, const std::string& extra = "") {
    const Outcome o =
        Tessera("deploy --deployment " + (dir_ / (name + ".json")).string() + " --out " +
                (dir_ / name).string() + " --base-port 21000 --mps-root " +
                (dir_ / "mps").string() + " " + extra);
    ASSERT_EQ(o.exit_code, 0) << o.err;
  }
  fs::path NodePlan(const std::string& name) const { return dir_ / name / "nodes" / "node-0.json"; }
};

TEST_F(AgentCliTest, AppliesS3ThenMovesItFromDayToNight) {
  Plan("s3.yaml", "day");
  Plan("s3-night.yaml", "night");
  Deploy("day");
  ASSERT_TRUE(fs::exists(NodePlan("day")));
  ASSERT_FALSE(fs::exists(dir_ / "day" / "nodes" / "node-1.json")) << "S3 fits one node of 8 GPUs";
  const nlohmann::json day = ReadJson(NodePlan("day"));

  Outcome o = OnMachine(AgentArgs(NodePlan("day").string()) + " --once");
  ASSERT_EQ(o.exit_code, 0) << o.out << o.err;
  EXPECT_NE(o.out.find("node node-0: converged to its plan"), std::string::npos) << o.out;
  EXPECT_EQ(MachineGeometry(), PlanGeometry(day));
  EXPECT_EQ(RunningUnits(), PlanUnits(day));
  ExpectJournalClosed();

  // Run twice, the second run does nothing.
  o = OnMachine(AgentArgs(NodePlan("day").string()) + " --once --format json");
  ASSERT_EQ(o.exit_code, 0) << o.err;
  const nlohmann::json again = nlohmann::json::parse(o.out, nullptr, false);
  EXPECT_TRUE(again["converged"].get<bool>());
  EXPECT_EQ(again["steps"].size(), 0u) << o.out;

  // Day to night: plan the transition, write the node as it is after it, run it.
  const fs::path t = dir_ / "t.json";
  o = Tessera("transition --scenario " + SourcePath("examples/scenarios/s3-night.yaml") +
              " --from " + (dir_ / "day.json").string() + " --to " +
              (dir_ / "night.json").string() + " --spare-gpus 1 --format json -o " + t.string());
  ASSERT_EQ(o.exit_code, 0) << o.err;
  Deploy("night", "--transition " + t.string());
  const nlohmann::json night = ReadJson(NodePlan("night"));
  o = OnMachine(AgentArgs(NodePlan("night").string()) + " --transition " + t.string() +
                " --format json");
  ASSERT_EQ(o.exit_code, 0) << o.out << o.err;
  const nlohmann::json moved = nlohmann::json::parse(o.out, nullptr, false);
  EXPECT_TRUE(moved["converged"].get<bool>());
  EXPECT_EQ(moved["phases_run"].get<int>(), nlohmann::json::parse(ReadAll(t))["phases"].size());
  EXPECT_EQ(MachineGeometry(), PlanGeometry(night));
  EXPECT_EQ(RunningUnits(), PlanUnits(night));
  ExpectJournalClosed();

  // The same transition again: every phase is done, nothing runs.
  o = OnMachine(AgentArgs(NodePlan("night").string()) + " --transition " + t.string() +
                " --format json");
  ASSERT_EQ(o.exit_code, 0) << o.err;
  const nlohmann::json done = nlohmann::json::parse(o.out, nullptr, false);
  EXPECT_EQ(done["phases_run"].get<int>(), 0);
  EXPECT_EQ(done["steps"].size(), 0u) << o.out;

  // The night plan applied to a day node through reconcile converges too,
  // and the day plan given as the transition's target is refused.
  o = OnMachine(AgentArgs(NodePlan("day").string()) + " --transition " + t.string());
  EXPECT_EQ(o.exit_code, 2) << o.out << o.err;
  EXPECT_NE(o.err.find("is not this node after"), std::string::npos) << o.err;
}

TEST_F(AgentCliTest, AGpuWithMigOffIsExitTwoNamingItAndHowToProvisionIt) {
  Plan("s3.yaml", "day");
  Deploy("day");
  const Outcome o =
      OnMachine(AgentArgs(NodePlan("day").string()) + " --once", "a100-80gb:mig-off,a100-80gb*7");
  EXPECT_EQ(o.exit_code, 2) << o.out << o.err;
  EXPECT_NE(o.err.find("GPU 0"), std::string::npos) << o.err;
  EXPECT_NE(o.err.find("MIG mode off"), std::string::npos) << o.err;
  EXPECT_NE(o.err.find("nvidia-smi -i 0 -mig 1"), std::string::npos) << o.err;
  EXPECT_EQ(std::count(o.err.begin(), o.err.end(), '\n'), 1) << o.err;
  EXPECT_TRUE(RunningUnits().empty());
}

TEST_F(AgentCliTest, AnNvmlFailureNamesGpuProfileAndStartAndALaterRunConverges) {
  Plan("s3.yaml", "day");
  Deploy("day");
  Outcome o = TesseraEnv(MachineEnv() +
                             "TESSERA_FAKE_NVML_FAIL=nvmlDeviceCreateGpuInstanceWithPlacement:2:"
                             "INSUFFICIENT_RESOURCES ",
                         AgentArgs(NodePlan("day").string()) + " --once");
  EXPECT_EQ(o.exit_code, 3) << o.out << o.err;
  EXPECT_NE(o.out.find("NOT converged"), std::string::npos) << o.out;
  EXPECT_NE(o.out.find("failed: create-gpu-instance: GPU "), std::string::npos) << o.out;
  EXPECT_NE(o.out.find(", profile "), std::string::npos) << o.out;
  EXPECT_NE(o.out.find(", start "), std::string::npos) << o.out;
  EXPECT_NE(o.out.find("NVML_ERROR_INSUFFICIENT_RESOURCES"), std::string::npos) << o.out;
  ExpectJournalClosed();
  o = OnMachine(AgentArgs(NodePlan("day").string()) + " --once");
  EXPECT_EQ(o.exit_code, 0) << o.out << o.err;
  EXPECT_EQ(MachineGeometry(), PlanGeometry(ReadJson(NodePlan("day"))));
}

TEST_F(AgentCliTest, AGpuLostWhileDestroyingIsReportedAndTheJournalStaysClosed) {
  Plan("s3.yaml", "day");
  Plan("s3-night.yaml", "night");
  Deploy("day");
  Deploy("night");
  ASSERT_EQ(OnMachine(AgentArgs(NodePlan("day").string()) + " --once").exit_code, 0);
  // The night plan, applied by reconcile, destroys some of the day's instances.
  Outcome o =
      TesseraEnv(MachineEnv() + "TESSERA_FAKE_NVML_FAIL=nvmlGpuInstanceDestroy:1+:GPU_IS_LOST ",
                 AgentArgs(NodePlan("night").string()) + " --once");
  EXPECT_EQ(o.exit_code, 3) << o.out << o.err;
  EXPECT_NE(o.out.find("failed: destroy-gpu-instance: GPU "), std::string::npos) << o.out;
  EXPECT_NE(o.out.find("NVML_ERROR_GPU_IS_LOST"), std::string::npos) << o.out;
  ExpectJournalClosed();
  o = OnMachine(AgentArgs(NodePlan("night").string()) + " --once");
  EXPECT_EQ(o.exit_code, 0) << o.out << o.err;
  EXPECT_EQ(MachineGeometry(), PlanGeometry(ReadJson(NodePlan("night"))));
  EXPECT_EQ(RunningUnits(), PlanUnits(ReadJson(NodePlan("night"))));
}

TEST_F(AgentCliTest, InstancesAndProcessesOutsideThePlanAreRemoved) {
  Plan("s3.yaml", "day");
  Deploy("day");
  // A node that ran something else: every instance of a 1g layout on GPU 7.
  const nlohmann::json day = ReadJson(NodePlan("day"));
  nlohmann::json other = day;
  other["gpus"] = nlohmann::json::array();
  nlohmann::json gpu = day["gpus"][0];
  gpu["index"] = 7;
  gpu["cluster_index"] = 7;
  for (auto& instance : gpu["instances"]) {
    for (auto& p : instance["processes"]) {
      p["name"] = "old-" + p["name"].get<std::string>();
      p["http_port"] = p["http_port"].get<int>() + 3000;
      p["grpc_port"] = p["grpc_port"].get<int>() + 3000;
      p["metrics_port"] = p["metrics_port"].get<int>() + 3000;
    }
  }
  other["gpus"].push_back(gpu);
  const fs::path old_plan = Write("old.json", other.dump(2));
  Outcome o = OnMachine(AgentArgs(old_plan.string()) + " --once");
  ASSERT_EQ(o.exit_code, 0) << o.out << o.err;
  ASSERT_FALSE(RunningUnits().empty());

  o = OnMachine(AgentArgs(NodePlan("day").string()) + " --once");
  ASSERT_EQ(o.exit_code, 0) << o.out << o.err;
  EXPECT_EQ(MachineGeometry(), PlanGeometry(day));
  EXPECT_EQ(RunningUnits(), PlanUnits(day));
}

TEST_F(AgentCliTest, InventoryListsPlacementsAndChangesNothing) {
  Plan("s3.yaml", "day");
  Deploy("day");
  ASSERT_EQ(OnMachine(AgentArgs(NodePlan("day").string()) + " --once").exit_code, 0);
  const std::string before = ReadAll(fake_state_);
  const Outcome o = OnMachine("agent inventory --nvml " + Quote(TESSERA_FAKE_NVML));
  ASSERT_EQ(o.exit_code, 0) << o.err;
  EXPECT_NE(o.out.find("GPU 0: "), std::string::npos) << o.out;
  EXPECT_NE(o.out.find("MIG on"), std::string::npos) << o.out;
  EXPECT_NE(o.out.find("MIG-"), std::string::npos) << o.out;
  const nlohmann::json day = ReadJson(NodePlan("day"));
  const nlohmann::json& first = day["gpus"][0]["instances"][0];
  EXPECT_NE(o.out.find(first["profile"].get<std::string>()), std::string::npos) << o.out;
  EXPECT_EQ(ReadAll(fake_state_), before);
}

TEST_F(AgentCliTest, BadInputIsExitTwoOnOneLine) {
  Plan("s3.yaml", "day");
  Deploy("day");
  const std::string plan = NodePlan("day").string();
  struct Case {
    std::string args;
    std::string says;
  };
  const std::vector<Case> cases = {
      {"agent --plan " + plan + " --state-dir st --once", "--node, --plan and --state-dir"},
      {AgentArgs(plan, "node-9") + " --once", "does not match the plan's node"},
      {AgentArgs((dir_ / "missing.json").string()) + " --once", "missing.json"},
      {AgentArgs(plan) + " --phase 2", "--phase needs --transition"},
      {"agent --node node-0 --plan " + plan +
           " --state-dir st --nvml /nonexistent/libnvml.so --once",
       "/nonexistent/libnvml.so"},
      {AgentArgs(plan) + " --ready-timeout 0", "--ready-timeout"},
      {"agent inventory --nvml /nonexistent/libnvml.so", "/nonexistent/libnvml.so"},
  };
  for (const Case& c : cases) {
    const Outcome o = OnMachine(c.args);
    EXPECT_EQ(o.exit_code, 2) << c.args << "\n" << o.err;
    EXPECT_NE(o.err.find(c.says), std::string::npos) << c.args << "\n" << o.err;
    EXPECT_EQ(std::count(o.err.begin(), o.err.end(), '\n'), 1) << c.args << "\n" << o.err;
  }
}

}  // namespace
}  // namespace tessera::testing
