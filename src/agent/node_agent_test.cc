// NodeAgent through the library, on the fake NVML: what the CLI tests do
// not reach (the lock, half-made instances, reconfiguring in place, MIG and
// MPS without serving processes).
#include "tessera/agent/node_agent.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <set>

#include "agent/supervisor.h"
#include "deployment_builder.h"
#include "tessera/util/text_io.h"
#include "test_paths.h"

namespace tessera {
namespace {

class NodeAgentTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::weakly_canonical(testing::FreshTestDir()).string();
    ::setenv("TESSERA_FAKE_NVML_STATE", (dir_ + "/nvml.json").c_str(), 1);
    ::setenv("TESSERA_FAKE_NVML_DEVICES", "a100-80gb*2", 1);
  }
  void TearDown() override {
    agent::Supervisor s(dir_ + "/state", SystemClock());
    for (const auto& [name, unit] : s.Scan()) (void)s.Kill(name);
    ::unsetenv("TESSERA_FAKE_NVML_STATE");
    ::unsetenv("TESSERA_FAKE_NVML_DEVICES");
    std::filesystem::remove_all(dir_);
  }

  NodePlan Plan(int batch) const {
    const Deployment d = DeploymentBuilder("a100-80gb", "parva")
                             .Gpu()
                             .Instance("3g.40gb", 4, "resnet50", batch, 2, 1000, 40)
                             .Instance("2g.20gb", 0, "bert", 8, 1, 300, 40)
                             .Service("resnet50", 800, 200)
                             .Service("bert", 200, 200)
                             .Build();
    DeployOptions options;
    options.serving.base_port = 25000;
    options.serving.mps_root = dir_ + "/mps";
    Result<std::vector<NodePlan>> plans = BuildNodePlans(d, options);
    EXPECT_TRUE(plans.ok()) << plans.status().ToString();
    return plans->front();
  }

  AgentOptions Options() const {
    AgentOptions o;
    o.state_dir = dir_ + "/state";
    o.mps_command = {TESSERA_STANDIN, "mps", "-d"};
    o.mps_control_command = {TESSERA_STANDIN, "mps-control"};
    o.serve_command = {TESSERA_STANDIN, "serve", "--http-port={http_port}", "--batch={batch}"};
    o.ready_timeout_s = 20;
    o.drain_timeout_s = 5;
    return o;
  }

  Result<std::unique_ptr<NodeAgent>> Open(const NodePlan& plan, AgentOptions options) {
    return NodeAgent::Open("node-0", plan, TESSERA_FAKE_NVML, std::move(options), nullptr);
  }

  std::vector<NvmlGpuInstance> Instances(int gpu) {
    Result<std::unique_ptr<Nvml>> nvml = Nvml::Open(TESSERA_FAKE_NVML);
    EXPECT_TRUE(nvml.ok());
    Result<NvmlGpu> g = (*nvml)->ReadGpu(gpu);
    EXPECT_TRUE(g.ok());
    return g->instances;
  }

  std::string dir_;
};

TEST_F(NodeAgentTest, OneAgentPerStateDirectory) {
  Result<std::unique_ptr<NodeAgent>> first = Open(Plan(8), Options());
  ASSERT_TRUE(first.ok()) << first.status().ToString();
  Result<std::unique_ptr<NodeAgent>> second = Open(Plan(8), Options());
  ASSERT_FALSE(second.ok());
  EXPECT_NE(second.status().message().find("another agent"), std::string::npos);
  EXPECT_NE(second.status().message().find("agent.lock"), std::string::npos);
  first->reset();
  EXPECT_TRUE(Open(Plan(8), Options()).ok());
}

TEST_F(NodeAgentTest, AGpuInstanceLeftWithoutItsComputeInstanceIsCompleted) {
  {
    Result<std::unique_ptr<Nvml>> nvml = Nvml::Open(TESSERA_FAKE_NVML);
    ASSERT_TRUE(nvml.ok());
    ASSERT_TRUE((*nvml)->CreateGpuInstance(0, 9, 4).ok());  // 3g.40gb@4, no CI
  }
  Result<std::unique_ptr<NodeAgent>> agent = Open(Plan(8), Options());
  ASSERT_TRUE(agent.ok()) << agent.status().ToString();
  Result<AgentReport> report = (*agent)->Reconcile();
  ASSERT_TRUE(report.ok()) << report.status().ToString();
  EXPECT_TRUE(report->converged);
  int created = 0;
  for (const AgentStep& s : report->steps) created += s.op == "create-gpu-instance" ? 1 : 0;
  EXPECT_EQ(created, 1);  // only the 2g; the 3g was there
  const std::vector<NvmlGpuInstance> gis = Instances(0);
  ASSERT_EQ(gis.size(), 2u);
  for (const NvmlGpuInstance& gi : gis) EXPECT_EQ(gi.compute_instances.size(), 1u);
}

TEST_F(NodeAgentTest, ANewBatchReplacesTheProcessesAndKeepsTheInstance) {
  {
    Result<std::unique_ptr<NodeAgent>> agent = Open(Plan(8), Options());
    ASSERT_TRUE(agent.ok()) << agent.status().ToString();
    ASSERT_TRUE((*agent)->Reconcile()->converged);
  }
  const std::vector<NvmlGpuInstance> before = Instances(0);
  Result<std::unique_ptr<NodeAgent>> agent = Open(Plan(16), Options());
  ASSERT_TRUE(agent.ok());
  Result<AgentReport> report = (*agent)->Reconcile();
  ASSERT_TRUE(report.ok());
  EXPECT_TRUE(report->converged);
  std::set<std::string> ops;
  for (const AgentStep& s : report->steps) ops.insert(s.op);
  EXPECT_EQ(ops, (std::set<std::string>{"drain", "stop-process", "start-process", "wait-ready"}));
  const std::vector<NvmlGpuInstance> after = Instances(0);
  ASSERT_EQ(after.size(), before.size());
  for (size_t i = 0; i < after.size(); ++i) EXPECT_EQ(after[i].id, before[i].id);
}

TEST_F(NodeAgentTest, WithoutServingItRunsMigAndMpsAndWritesTheMigUuids) {
  AgentOptions options = Options();
  options.serving = false;
  Result<std::unique_ptr<NodeAgent>> agent = Open(Plan(8), options);
  ASSERT_TRUE(agent.ok());
  Result<AgentReport> report = (*agent)->Reconcile();
  ASSERT_TRUE(report.ok());
  EXPECT_TRUE(report->converged);
  agent::Supervisor s(dir_ + "/state", SystemClock());
  const auto units = s.Scan();
  EXPECT_EQ(units.size(), 2u);
  EXPECT_EQ(units.count("mps:gpu0-start4"), 1u);
  Result<std::string> uuid = ReadTextFile(dir_ + "/state/mig/gpu0-start4.uuid");
  ASSERT_TRUE(uuid.ok());
  EXPECT_EQ(uuid->rfind("MIG-", 0), 0u) << *uuid;
}

TEST_F(NodeAgentTest, AStepAKilledAgentLeftOpenIsClosedAndReported) {
  std::filesystem::create_directories(dir_ + "/state");
  std::ofstream(dir_ + "/state/journal.jsonl")
      << "{\"seq\":1,\"event\":\"begin\",\"op\":\"create-gpu-instance\",\"gpu\":0,"
         "\"profile\":\"3g.40gb\",\"start\":4,\"detail\":\"\"}\n";
  Result<std::unique_ptr<NodeAgent>> agent = Open(Plan(8), Options());
  ASSERT_TRUE(agent.ok()) << agent.status().ToString();
  Result<AgentReport> report = (*agent)->Reconcile();
  ASSERT_TRUE(report.ok());
  EXPECT_TRUE(report->converged);
  ASSERT_FALSE(report->notes.empty());
  EXPECT_NE(report->notes.front().find("step 1 (create-gpu-instance on GPU 0, 3g.40gb at start 4) "
                                       "was interrupted"),
            std::string::npos)
      << report->notes.front();
  Result<std::string> journal = ReadTextFile(dir_ + "/state/journal.jsonl");
  ASSERT_TRUE(journal.ok());
  EXPECT_NE(journal->find("\"of\":1,\"ok\":false,\"interrupted\":true"), std::string::npos);
}

TEST_F(NodeAgentTest, ThePlansGpusMustExist) {
  NodePlan plan = Plan(8);
  plan.gpus[0].index = 5;
  Result<std::unique_ptr<NodeAgent>> agent = Open(plan, Options());
  ASSERT_FALSE(agent.ok());
  EXPECT_EQ(agent.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(agent.status().message().find("GPU 5"), std::string::npos);
  EXPECT_NE(agent.status().message().find("2 GPU(s)"), std::string::npos);
}

}  // namespace
}  // namespace tessera
