// Tests of NodePlan (node_plan.h): the ports and names rule, thread
// percentages, MPS directories, node split and gpu_map, the serving
// command's placeholders, the JSON round trip, and the strict parser's
// errors (each naming the source and the JSON path), hostile inputs included.
#include "tessera/emit/node_plan.h"

#include <gtest/gtest.h>

#include <array>
#include <random>
#include <string>
#include <vector>

#include "deployment_builder.h"
#include "fuzz_mutator.h"
#include "small_node_deployment.h"
#include "tessera/gpu_catalog.h"

namespace tessera {
namespace {

const GpuModel& A100() { return **FindGpu("a100-80gb"); }

Deployment Small() { return SmallNodeDeployment(); }

NodePlan OnePlan(const Deployment& d, const DeployOptions& options = {}) {
  Result<std::vector<NodePlan>> plans = BuildNodePlans(d, options);
  EXPECT_TRUE(plans.ok()) << plans.status().message();
  EXPECT_EQ(plans->size(), 1u);
  return plans->front();
}

TEST(NodePlanTest, PortsNamesAndThreadPercentageFollowTheRule) {
  const NodePlan plan = OnePlan(Small());
  EXPECT_EQ(plan.node, "node-0");
  EXPECT_EQ(plan.gpu, "a100-80gb");
  ASSERT_EQ(plan.gpus.size(), 2u);
  const NodeGpu& g0 = plan.gpus[0];
  ASSERT_EQ(g0.instances.size(), 2u);
  // Sorted by start.
  const NodeInstance& resnet = g0.instances[0];
  EXPECT_EQ(resnet.instance.profile, "4g.40gb");
  EXPECT_EQ(resnet.profile_id, A100().FindProfile("4g.40gb")->id);
  EXPECT_EQ(resnet.memory_slices, 4);
  EXPECT_EQ(resnet.compute_slices, 4);
  ASSERT_EQ(resnet.processes.size(), 2u);
  EXPECT_EQ(resnet.processes[1].name, "resnet50-gpu0-start0-p1");
  EXPECT_EQ(resnet.processes[1].http_port, 20003);  // k = 1
  EXPECT_EQ(resnet.processes[1].active_thread_percentage, 50);
  const NodeInstance& bert = g0.instances[1];
  ASSERT_EQ(bert.processes.size(), 3u);
  // k = (0 x 8 + 4) x 48 + 0 = 192: http = 20000 + 576.
  EXPECT_EQ(bert.processes[0].http_port, 20576);
  EXPECT_EQ(bert.processes[0].grpc_port, 20577);
  EXPECT_EQ(bert.processes[0].metrics_port, 20578);
  EXPECT_EQ(bert.processes[2].http_port, 20582);
  EXPECT_EQ(bert.processes[2].active_thread_percentage, 34);  // ceil(100 / 3)
  EXPECT_EQ(bert.processes[2].model_config, "b16");
  EXPECT_EQ(bert.pipe_directory, "/run/tessera/mps/gpu0-start4/pipe");
  EXPECT_EQ(bert.log_directory, "/run/tessera/mps/gpu0-start4/log");
  EXPECT_EQ(bert.instance.model, "bert");
  const std::vector<std::string> expected = {"tritonserver",
                                             "--model-repository=/models",
                                             "--model-control-mode=explicit",
                                             "--load-model=BERT_large",
                                             "--model-config-name=b16",
                                             "--http-port=20576",
                                             "--grpc-port=20577",
                                             "--metrics-port=20578"};
  EXPECT_EQ(bert.processes[0].command, expected);
  // Local GPU 1: k = (1 x 8 + 0) x 48 = 384.
  EXPECT_EQ(plan.gpus[1].instances[0].processes[0].http_port, 20000 + 3 * 384);
  EXPECT_EQ(plan.gpus[1].instances[0].processes[0].active_thread_percentage, 100);
}

TEST(NodePlanTest, ThreadPercentageIsTheCeiling) {
  Instance in{"7g.80gb", 0, "s", "m", 4, 7, 100, 10};
  Result<NodeInstance> node = BuildNodeInstance(ServingSettings{}, A100(), 0, in);
  ASSERT_TRUE(node.ok()) << node.status().message();
  EXPECT_EQ(node->processes[0].active_thread_percentage, 15);  // ceil(100 / 7)
  in.procs = 48;
  node = BuildNodeInstance(ServingSettings{}, A100(), 7, in);
  ASSERT_TRUE(node.ok()) << node.status().message();
  EXPECT_EQ(node->processes[47].active_thread_percentage, 3);
  // The highest port of 8 GPUs: k = (7 x 8 + 0) x 48 + 47.
  EXPECT_EQ(node->processes[47].metrics_port, 20000 + 3 * ((7 * 8) * 48 + 47) + 2);
}

TEST(NodePlanTest, NodesSplitByGpusPerNode) {
  DeploymentBuilder b("a100-80gb", "parva");
  for (int i = 0; i < 10; ++i) b.Gpu().Instance("7g.80gb", 0, "s", 8, 1, 100, 10);
  const Deployment d = b.Service("s", 500, 100).Build();
  Result<std::vector<NodePlan>> eight = BuildNodePlans(d, {});
  ASSERT_TRUE(eight.ok()) << eight.status().message();
  ASSERT_EQ(eight->size(), 2u);
  EXPECT_EQ((*eight)[0].gpus.size(), 8u);
  EXPECT_EQ((*eight)[1].node, "node-1");
  EXPECT_EQ((*eight)[1].gpus[1].index, 1);
  EXPECT_EQ((*eight)[1].gpus[1].cluster_index, 9);
  DeployOptions four;
  four.gpus_per_node = 4;
  four.node_names = {"a", "b", "c"};
  Result<std::vector<NodePlan>> three = BuildNodePlans(d, four);
  ASSERT_TRUE(three.ok()) << three.status().message();
  ASSERT_EQ(three->size(), 3u);
  EXPECT_EQ((*three)[2].node, "c");
  EXPECT_EQ((*three)[2].node_index, 2);
  EXPECT_EQ((*three)[2].gpus.size(), 2u);
  EXPECT_EQ((*three)[2].gpus[1].index, 1);
  EXPECT_EQ((*three)[2].gpus_per_node, 4);
  four.node_names = {"a", "b"};
  Result<std::vector<NodePlan>> short_names = BuildNodePlans(d, four);
  ASSERT_FALSE(short_names.ok());
  EXPECT_NE(short_names.status().message().find("2 node name(s)"), std::string::npos);
  four.node_names = {"a", "B_c", "d"};
  EXPECT_FALSE(BuildNodePlans(d, four).ok());
}

TEST(NodePlanTest, GpuMapIsAppliedFirst) {
  DeployOptions options;
  options.gpu_map = {{0, 9}, {1, 2}};
  Result<std::vector<NodePlan>> plans = BuildNodePlans(Small(), options);
  ASSERT_TRUE(plans.ok()) << plans.status().message();
  ASSERT_EQ(plans->size(), 2u);
  EXPECT_EQ((*plans)[0].node, "node-0");
  EXPECT_EQ((*plans)[0].gpus[0].index, 2);
  EXPECT_EQ((*plans)[0].gpus[0].instances[0].instance.profile, "1g.10gb");
  EXPECT_EQ((*plans)[0].gpus[0].instances[0].processes[0].http_port, 20000 + 3 * (2 * 8 * 48));
  EXPECT_EQ((*plans)[1].node, "node-1");
  EXPECT_EQ((*plans)[1].gpus[0].index, 1);
  EXPECT_EQ((*plans)[1].gpus[0].cluster_index, 9);
  options.gpu_map = {{0, 9}};
  Result<std::vector<NodePlan>> missing = BuildNodePlans(Small(), options);
  ASSERT_FALSE(missing.ok());
  EXPECT_NE(missing.status().message().find("GPU 1"), std::string::npos);
  options.gpu_map = {{0, 3}, {1, 3}};
  EXPECT_FALSE(BuildNodePlans(Small(), options).ok());
}

TEST(NodePlanTest, RejectsMpsPlansAndUnknownPlaceholders) {
  Deployment mps = Small();
  mps.sharing = Sharing::kMps;
  Result<std::vector<NodePlan>> plans = BuildNodePlans(mps, {});
  ASSERT_FALSE(plans.ok());
  EXPECT_NE(plans.status().message().find("no MIG instances"), std::string::npos);
  DeployOptions options;
  options.serving.command = {"tritonserver", "--port={htp_port}"};
  plans = BuildNodePlans(Small(), options);
  ASSERT_FALSE(plans.ok());
  EXPECT_NE(plans.status().message().find("{htp_port}"), std::string::npos);
  options.serving.command = {"run", "{pipe_directory}:{gpu}:{start}:{process}:{batch}:{service}"};
  const NodePlan plan = OnePlan(Small(), options);
  EXPECT_EQ(plan.gpus[0].instances[1].processes[2].command[1],
            "/run/tessera/mps/gpu0-start4/pipe:0:4:2:16:BERT_large");
  options.serving = {};
  options.serving.base_port = 65000;
  plans = BuildNodePlans(Small(), options);
  ASSERT_FALSE(plans.ok());
  EXPECT_NE(plans.status().message().find("base port"), std::string::npos);
}

TEST(NodePlanTest, JsonRoundTrips) {
  DeployOptions options;
  options.node_names = {"gpu-node-a"};
  options.serving.model_repository = "/srv/models \"quoted\"";
  const NodePlan plan = OnePlan(Small(), options);
  const std::string once = FormatNodePlanJson(plan);
  EXPECT_EQ(once.back(), '\n');
  EXPECT_NE(once.find("\"format\": \"tessera-nodeplan\""), std::string::npos);
  Result<NodePlan> parsed = ParseNodePlanJson(once, "n.json");
  ASSERT_TRUE(parsed.ok()) << parsed.status().message();
  EXPECT_EQ(FormatNodePlanJson(*parsed), once);
  EXPECT_EQ(parsed->gpus[0].instances[1].processes[2].command,
            plan.gpus[0].instances[1].processes[2].command);
}

// Mutants of a valid node plan either parse, and then write and read back
// the same (and expand their commands), or fail with a message naming the
// file: never crash. (fuzz/fuzz_node_plan_json.cc does the same unbounded.)
TEST(NodePlanTest, MutantsFailCleanlyOrRoundTrip) {
  const std::array<std::string, 10> numbers = {
      "-1", "NaN", "1e400", "", "\"x\"", "1.5", "null", "[]", "{}", "99999999999999999999"};
  const std::string bytes = std::string(",\n\"' :{}[]\\\x01\xff", 14) + '\0';
  const testing::MutationVocabulary vocabulary = {bytes, numbers};
  const std::string json = FormatNodePlanJson(OnePlan(Small()));
  std::mt19937 rng(19);
  int parsed = 0;
  for (int i = 0; i < 2000; ++i) {
    const std::string mutant = testing::Mutate(json, rng, vocabulary);
    Result<NodePlan> plan = ParseNodePlanJson(mutant, "m.json");
    if (!plan.ok()) {
      EXPECT_TRUE(plan.status().message().starts_with("m.json: ")) << plan.status().message();
      continue;
    }
    ++parsed;
    const std::string once = FormatNodePlanJson(*plan);
    Result<NodePlan> again = ParseNodePlanJson(once, "once.json");
    ASSERT_TRUE(again.ok()) << again.status().ToString() << "\n" << once;
    EXPECT_EQ(FormatNodePlanJson(*again), once);
    for (const NodeGpu& gpu : plan->gpus) {
      for (const NodeInstance& in : gpu.instances) {
        for (const NodeProcess& p : in.processes) {
          (void)ExpandCommand(plan->serving.command, plan->serving, in, p, gpu.index);
        }
      }
    }
  }
  EXPECT_GT(parsed, 0);  // some mutants are still node plans
}

std::string Replace(std::string text, const std::string& from, const std::string& to) {
  const size_t at = text.find(from);
  EXPECT_NE(at, std::string::npos) << from;
  if (at != std::string::npos) text.replace(at, from.size(), to);
  return text;
}

struct BadCase {
  std::string from;
  std::string to;
  std::string error;  // a substring of the message after "n.json: "
};

TEST(NodePlanTest, ParserErrorsNameTheSourceAndPath) {
  const std::string good = FormatNodePlanJson(OnePlan(Small()));
  const std::vector<BadCase> cases = {
      {"\"version\": 1", "\"version\": 2", "version: expected 1, got 2"},
      {"\"format\": \"tessera-nodeplan\"", "\"format\": \"x\"", "format: expected"},
      {"\"node\": \"node-0\"", "\"node\": \"Node_0\"", "node: \"Node_0\" is not a DNS-1123"},
      {"\"gpus_per_node\": 8", "\"gpus_per_node\": 0", "gpus_per_node: must be an integer"},
      {"\"gpu\": \"a100-80gb\"", "\"gpu\": \"t4\"", "gpu: "},
      {"\"base_port\": 20000", "\"base_port\": 70000", "serving.base_port: must be"},
      {"\"mps_command\": [", "\"mps_command\": [1, ", "serving.mps_command[0]: expected a string"},
      {"\"index\": 1,\n      \"cluster_index\": 1", "\"index\": 0,\n      \"cluster_index\": 1",
       "gpus[1].index: duplicate local GPU index 0"},
      {"\"index\": 1,\n      \"cluster_index\": 1", "\"index\": 8,\n      \"cluster_index\": 1",
       "gpus[1].index: must be an integer in [0, 7]"},
      {"\"profile_id\": 5", "\"profile_id\": 6", "gpus[0].instances[0].profile_id: 4g.40gb has ID"},
      {"\"start\": 4", "\"start\": 3", "gpus[0].instances[1].start: 3g.40gb may not start"},
      {"\"start\": 4", "\"start\": 0", "gpus[0].instances[1].start: 3g.40gb at 0 overlaps"},
      {"\"memory_slices\": 4", "\"memory_slices\": 3", "gpus[0].instances[0].memory_slices"},
      {"\"profile\": \"4g.40gb\"", "\"profile\": \"5g.50gb\"", "gpus[0].instances[0].profile"},
      {"\"procs\": 2", "\"procs\": 3", "gpus[0].instances[0].processes: lists 2 process(es)"},
      {"\"batch\": 32", "\"batch\": 0", "gpus[0].instances[0].batch: must be"},
      {"\"latency_ms\": 60", "\"latency_ms\": -1", "gpus[0].instances[0].latency_ms"},
      {"\"pipe_directory\"", "\"pipe_dir\"", "gpus[0].instances[0].mps.pipe_dir: unknown key"},
      {"\"http_port\": 20003", "\"http_port\": 20000",
       "gpus[0].instances[0].processes[1].http_port: port 20000 is used twice"},
      {"\"active_thread_percentage\": 34", "\"active_thread_percentage\": 101",
       "gpus[0].instances[1].processes[0].active_thread_percentage"},
      {"\"name\": \"resnet50-gpu0-start0-p1\"", "\"name\": \"resnet50-gpu0-start0-p0\"",
       "gpus[0].instances[0].processes[1].name: duplicate process name"},
      {"\"index\": 1,\n              \"name\"", "\"index\": 0,\n              \"name\"",
       "gpus[0].instances[0].processes[1].index: expected 1, got 0"},
      {"\"model_config\": \"b8\"", "\"model_config\": \"\"", "model_config: must not be empty"},
      {"\"node_index\": 0,", "", "node_index: missing"},
      {"\"node_index\": 0,", "\"node_index\": 0, \"extra\": 1,", "extra: unknown key"},
      {"\"node_index\": 0,", "\"node_index\": 0, \"node_index\": 0,", "duplicate key"},
  };
  for (const BadCase& c : cases) {
    const std::string text = Replace(good, c.from, c.to);
    Result<NodePlan> parsed = ParseNodePlanJson(text, "n.json");
    ASSERT_FALSE(parsed.ok()) << c.to;
    EXPECT_EQ(parsed.status().code(), StatusCode::kInvalidArgument);
    EXPECT_TRUE(parsed.status().message().starts_with("n.json: ")) << parsed.status().message();
    EXPECT_NE(parsed.status().message().find(c.error), std::string::npos)
        << "expected \"" << c.error << "\" in: " << parsed.status().message();
  }
}

// Hostile inputs (no CLI command reads a NodePlan yet): each is a clean
// InvalidArgument naming the source, never a crash or a hang.
TEST(NodePlanTest, HostileInputsAreCleanErrors) {
  const std::string good = FormatNodePlanJson(OnePlan(Small()));
  std::vector<std::string> inputs = {
      "",
      "{",
      "null",
      "[]",
      std::string(100000, '['),
      std::string("\0\1\2\xff\xfe", 5),
      good.substr(0, good.size() / 2),
      Replace(good, "\"batch\": 32", "\"batch\": 1e308"),
      Replace(good, "\"batch\": 32", "\"batch\": NaN"),
      Replace(good, "\"batch\": 32", "\"batch\": 2147483648"),
      Replace(good, "\"batch\": 32", "\"batch\": 2.5"),
      Replace(good, "\"node_index\": 0", "\"node_index\": -1"),
      Replace(good, "\"service\": \"resnet50\"", "\"service\": \"\xc3\x28\""),
      Replace(good, "\"gpus\": [", "\"gpus\": {\"a\": ["),
      Replace(
          good, "\"command\": [",
          std::string("\"command\": [") + std::string(5000, '[') + std::string(5000, ']') + ", "),
  };
  for (const std::string& text : inputs) {
    Result<NodePlan> parsed = ParseNodePlanJson(text, "n.json");
    ASSERT_FALSE(parsed.ok()) << text.substr(0, 80);
    EXPECT_EQ(parsed.status().code(), StatusCode::kInvalidArgument);
    EXPECT_TRUE(parsed.status().message().starts_with("n.json: ")) << parsed.status().message();
    EXPECT_LT(parsed.status().message().size(), 2000u);
  }
}

}  // namespace
}  // namespace tessera
