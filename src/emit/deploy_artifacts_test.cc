// Tests of the deployment artifacts (deploy_artifacts.h): Kubernetes names,
// Triton's queue delay computed by hand, name collisions and bad options,
// and golden files of every artifact of a small deployment under
// tests/golden/deploy_small/ (regenerate with TESSERA_UPDATE_GOLDEN=1).
#include "tessera/deploy_artifacts.h"

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
    for (const Instance& in : g.instances) {
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

// D = min(SLO - 2 x latency, batch / (rate x throughput / capacity / procs)),
// in whole microseconds, rounded down.
TEST(DeployArtifactsTest, QueueDelayByHand) {
  const Deployment d = Small();
  // resnet50 4g: slack 300 - 120 = 180 ms; its process's rate 900 x 1000 /
  // 1130 / 2 = 398.23 rps fills 32 in 32 x 1130 x 2 / 900000 s = 80.3555 ms.
  Result<int64_t> delay = QueueDelayMicros(d, Find(d, "4g.40gb"));
  ASSERT_TRUE(delay.ok()) << delay.status().message();
  EXPECT_EQ(*delay, 80355);
  // resnet50 1g: 8 x 1130 / (900 x 130) s = 77.2649 ms < 200 ms of slack.
  EXPECT_EQ(*QueueDelayMicros(d, Find(d, "1g.10gb")), 77264);
  // BERT_large 3g: slack 180 - 140 = 40 ms < 16 / 100 s.
  EXPECT_EQ(*QueueDelayMicros(d, Find(d, "3g.40gb")), 40000);
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
  EXPECT_NE(by_path["triton/resnet50/configs/b8.pbtxt"].find("max_queue_delay_microseconds: 77264"),
            std::string::npos);
  EXPECT_NE(by_path["triton/BERT_large/config.pbtxt"].find("max_batch_size: 16"),
            std::string::npos);
  EXPECT_TRUE(by_path.count("k8s/30-service-bert-large.yaml"));
  EXPECT_TRUE(by_path.count("k8s/40-serving-tessera-bert-large-node-0-g0-s4-p2.yaml"));
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
  for (Instance& in : d.gpus[0].instances) {
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
