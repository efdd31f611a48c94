// Tests of the deployment artifacts (deploy_artifacts.h): Kubernetes names,
// Triton's queue delay computed by hand, name collisions and bad options,
// and golden files of every artifact of a small deployment under
// tests/golden/deploy_small/ (regenerate with TESSERA_UPDATE_GOLDEN=1).
#include "tessera/emit/deploy_artifacts.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "deployment_builder.h"
#include "small_node_deployment.h"

namespace tessera {
namespace {

namespace fs = std::filesystem;

Deployment Small() { return SmallNodeDeployment(); }

const Instance& Find(const Deployment& d, const std::string& profile) {
  for (const GpuAssignment& g : d.gpus) {
    for (const Instance& in : g.instances()) {
      if (in.profile == profile) return in;
    }
  }
  static const Instance none;
  ADD_FAILURE() << profile;
  return none;
}

TEST(DeployArtifactsTest, KubernetesNames) {
  EXPECT_EQ(KubernetesName("BERT_large"), "bert-large");
  EXPECT_EQ(KubernetesName("--a..b--"), "a-b");
  EXPECT_TRUE(KubernetesName("___").starts_with("x-"));
  EXPECT_TRUE(IsDns1123Label(KubernetesName("___")));
  const std::string long_name(100, 'a');
  const std::string cut = KubernetesName(long_name);
  EXPECT_EQ(cut.size(), 63u);
  EXPECT_TRUE(IsDns1123Label(cut));
  EXPECT_EQ(cut, KubernetesName(long_name));  // stable
  EXPECT_NE(cut, KubernetesName(long_name + "b"));
  EXPECT_LE(KubernetesName(long_name, 55).size(), 55u);
  EXPECT_TRUE(IsDns1123Label("node-0"));
  EXPECT_FALSE(IsDns1123Label("Node-0"));
  EXPECT_FALSE(IsDns1123Label("-a"));
  EXPECT_FALSE(IsDns1123Label(""));
  EXPECT_FALSE(IsDns1123Label(std::string(64, 'a')));
  EXPECT_EQ(MigUuidPath("/var/lib/tessera", 3, 4), "/var/lib/tessera/mig/gpu3-start4.uuid");
}

// D = the batch budget (half the SLO) less the planned batch's latency, in
// whole microseconds, rounded down: the simulator's batcher's delay.
TEST(DeployArtifactsTest, QueueDelayByHand) {
  const Deployment d = Small();
  // resnet50 4g: 300 / 2 - 60 = 90 ms.
  Result<int64_t> delay = QueueDelayMicros(d, Find(d, "4g.40gb"));
  ASSERT_TRUE(delay.ok()) << delay.status().message();
  EXPECT_EQ(*delay, 90000);
  // resnet50 1g: 150 - 50 ms.
  EXPECT_EQ(*QueueDelayMicros(d, Find(d, "1g.10gb")), 100000);
  // BERT_large 3g: 180 / 2 - 70 ms.
  EXPECT_EQ(*QueueDelayMicros(d, Find(d, "3g.40gb")), 20000);
  // No slack: 0.
  Instance slow = Find(d, "3g.40gb");
  slow.latency_ms = 100;
  EXPECT_EQ(*QueueDelayMicros(d, slow), 0);
  slow.service = "nope";
  EXPECT_FALSE(QueueDelayMicros(d, slow).ok());
}

TEST(DeployArtifactsTest, ConfigsUseTheSmallestDelayOfTheirBatch) {
  Result<std::vector<DeployFile>> files = BuildDeployArtifacts(Small(), {});
  ASSERT_TRUE(files.ok()) << files.status().message();
  std::map<std::string, std::string> by_path;
  for (const DeployFile& f : *files) by_path[f.path] = f.content;
  ASSERT_TRUE(by_path.count("triton/resnet50/config.pbtxt"));
  ASSERT_TRUE(by_path.count("triton/resnet50/configs/b8.pbtxt"));
  ASSERT_TRUE(by_path.count("triton/resnet50/configs/b32.pbtxt"));
  EXPECT_EQ(by_path["triton/resnet50/config.pbtxt"], by_path["triton/resnet50/configs/b32.pbtxt"]);
  EXPECT_NE(
      by_path["triton/resnet50/configs/b8.pbtxt"].find("max_queue_delay_microseconds: 100000"),
      std::string::npos);
  EXPECT_NE(by_path["triton/BERT_large/config.pbtxt"].find("max_batch_size: 16"),
            std::string::npos);
  EXPECT_TRUE(by_path.count("k8s/30-service-bert-large.yaml"));
  EXPECT_TRUE(by_path.count("k8s/40-serving-tessera-bert-large-node-0-g0-s4-p2.yaml"));
}

// BuildTritonConfigs is deploy's triton/ files alone, in the same order.
TEST(DeployArtifactsTest, TritonConfigsAreDeploysTritonFiles) {
  Result<std::vector<DeployFile>> files = BuildDeployArtifacts(Small(), {});
  Result<std::vector<DeployFile>> triton = BuildTritonConfigs(Small());
  ASSERT_TRUE(files.ok() && triton.ok());
  std::vector<std::pair<std::string, std::string>> expected, got;
  for (const DeployFile& f : *files) {
    if (f.path.starts_with("triton/")) expected.emplace_back(f.path, f.content);
  }
  for (const DeployFile& f : *triton) got.emplace_back(f.path, f.content);
  EXPECT_FALSE(got.empty());
  EXPECT_EQ(got, expected);
}

TEST(DeployArtifactsTest, RejectsCollidingNamesAndBadOptions) {
  Deployment d = DeploymentBuilder("a100-80gb", "parva")
                     .Gpu()
                     .Instance("3g.40gb", 4, "BERT_large", 16, 1, 400, 70)
                     .Instance("4g.40gb", 0, "bert-large", 32, 1, 1000, 60)
                     .Service("BERT_large", 300, 180)
                     .Service("bert-large", 300, 180)
                     .Build();
  Result<std::vector<DeployFile>> files = BuildDeployArtifacts(d, {});
  ASSERT_FALSE(files.ok());
  EXPECT_NE(files.status().message().find("'BERT_large' and 'bert-large'"), std::string::npos)
      << files.status().message();
  for (Instance& in : d.gpus[0].instances()) {
    if (in.service == "bert-large") in.service = "../x";
  }
  d.services[1].name = "../x";
  files = BuildDeployArtifacts(d, {});
  ASSERT_FALSE(files.ok());
  EXPECT_NE(files.status().message().find("'../x'"), std::string::npos) << files.status().message();

  DeployArtifactOptions bad;
  bad.namespace_name = "Tessera";
  EXPECT_FALSE(BuildDeployArtifacts(Small(), bad).ok());
  bad = {};
  bad.triton_image = "a b";
  EXPECT_FALSE(BuildDeployArtifacts(Small(), bad).ok());
  bad = {};
  bad.driver_lib_dir = "lib";
  EXPECT_FALSE(BuildDeployArtifacts(Small(), bad).ok());
}

// ---------------------------------------------------------------- goldens --

std::string ReadFile(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream buffer;
  buffer << in.rdbuf();
  return buffer.str();
}

// The router ships the plan's rule: the weighted plan's backend balances at
// random by ProxyWeights of each process's SLO-safe capacity, a first plan's
// by balance first with maxconn = two batches; each model's Service points at
// the router, and each process has its own Service; a jsq plan is refused.
TEST(DeployArtifactsTest, RouterFollowsThePlansRule) {
  Deployment d = Small();
  Result<std::vector<DeployFile>> files = BuildDeployArtifacts(d, {});
  ASSERT_TRUE(files.ok()) << files.status().message();
  std::map<std::string, std::string> by_path;
  for (const DeployFile& f : *files) by_path[f.path] = f.content;
  const std::string& cfg = by_path["router/haproxy.cfg"];
  EXPECT_NE(cfg.find("backend resnet50\n    balance random(1)\n"), std::string::npos) << cfg;
  // resnet50: the 4g's two processes run 32 in 60 ms (533 rps) against the
  // 1g's 8 in 50 ms (160 rps): weights 256, 256 and about 256 x 0.3.
  EXPECT_NE(
      cfg.find("server node-0-g0-s0-p0 node-0:20000 check inter 2s fall 2 rise 1 weight 256\n"),
      std::string::npos)
      << cfg;
  EXPECT_NE(by_path["k8s/30-service-resnet50.yaml"].find("targetPort: 9000"), std::string::npos)
      << by_path["k8s/30-service-resnet50.yaml"];
  EXPECT_TRUE(by_path.count("k8s/45-process-tessera-bert-large-node-0-g0-s4-p2.yaml"));
  EXPECT_NE(by_path["k8s/35-router-config.yaml"].find(
                "tessera-bert-large-node-0-g0-s4-p2.tessera.svc.cluster.local:8000"),
            std::string::npos);

  d.rule.router = Router::kFirst;
  files = BuildDeployArtifacts(d, {});
  ASSERT_TRUE(files.ok()) << files.status().message();
  for (const DeployFile& f : *files) by_path[f.path] = f.content;
  EXPECT_NE(by_path["router/haproxy.cfg"].find("balance first"), std::string::npos);
  EXPECT_NE(
      by_path["router/haproxy.cfg"].find("node-0:20000 check inter 2s fall 2 rise 1 maxconn 64\n"),
      std::string::npos)
      << by_path["router/haproxy.cfg"];

  d.rule.router = Router::kShortestQueue;
  files = BuildDeployArtifacts(d, {});
  ASSERT_FALSE(files.ok());
  EXPECT_NE(files.status().message().find("router is jsq"), std::string::npos)
      << files.status().message();
}

TEST(DeployArtifactsTest, MatchesGoldenFiles) {
  Result<std::vector<DeployFile>> files = BuildDeployArtifacts(Small(), {});
  ASSERT_TRUE(files.ok()) << files.status().message();
  const fs::path root = fs::path(TESSERA_SOURCE_DIR) / "tests/golden/deploy_small";
  const char* update = std::getenv("TESSERA_UPDATE_GOLDEN");
  if (update != nullptr && std::string_view(update) == "1") {
    fs::remove_all(root);
    for (const DeployFile& f : *files) {
      fs::create_directories((root / f.path).parent_path());
      std::ofstream(root / f.path, std::ios::binary) << f.content;
    }
    GTEST_SKIP() << "rewrote " << root;
  }
  std::set<std::string> expected;
  for (const auto& entry : fs::recursive_directory_iterator(root)) {
    if (entry.is_regular_file()) expected.insert(fs::relative(entry.path(), root).string());
  }
  std::set<std::string> actual;
  for (const DeployFile& f : *files) {
    actual.insert(f.path);
    EXPECT_TRUE(ReadFile(root / f.path) == f.content)
        << (root / f.path) << " differs; if the change is intended, rerun with "
        << "TESSERA_UPDATE_GOLDEN=1 and review the diff";
  }
  EXPECT_EQ(actual, expected);
}

}  // namespace
}  // namespace tessera
