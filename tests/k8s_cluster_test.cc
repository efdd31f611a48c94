// The test cluster of the extender's tests (k8s_cluster.h): a real etcd,
// kube-apiserver and kube-scheduler accept a node, schedule a pod on it, and
// a start that fails says why. Without the binaries (scripts/k8s-bins.sh
// builds them; `make test` runs it first) these tests fail, saying so.
#include "k8s_cluster.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <string>
#include <thread>

#include "tessera/k8s/kube_client.h"
#include "test_paths.h"

namespace tessera::testing {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

class KubeClusterTest : public ::testing::Test {
 protected:
  void SetUp() override { dir_ = FreshTestDir(); }
  // A failed test's directory stays, with its processes' logs.
  void TearDown() override {
    if (HasFailure()) {
      std::fprintf(stderr, "the cluster's files and logs are in %s\n", dir_.c_str());
    } else {
      std::filesystem::remove_all(dir_);
    }
  }

  std::filesystem::path dir_;
};

nlohmann::json GpuNode(const std::string& name) {
  const nlohmann::json resources = {{"cpu", "64"}, {"memory", "256Gi"}, {"pods", "110"}};
  return {
      {"apiVersion", "v1"},
      {"kind", "Node"},
      {"metadata", {{"name", name}, {"labels", {{"tessera.io/gpus", "8"}}}}},
      {"status",
       {{"capacity", resources},
        {"allocatable", resources},
        {"conditions", {{{"type", "Ready"}, {"status", "True"}, {"reason", "KubeletReady"}}}}}}};
}

nlohmann::json BusyboxPod(const std::string& name) {
  return {{"apiVersion", "v1"},
          {"kind", "Pod"},
          {"metadata", {{"name", name}}},
          {"spec",
           {{"containers",
             {{{"name", "main"},
               {"image", "busybox"},
               {"command", {"sleep", "3600"}},
               {"resources", {{"requests", {{"cpu", "1"}, {"memory", "1Gi"}}}}}}}}}}};
}

TEST_F(KubeClusterTest, SchedulesAPodOnTheOnlyNode) {
  auto cluster = KubeTestCluster::Start(dir_, KubeBinDir());
  ASSERT_TRUE(cluster.ok()) << cluster.status().ToString();
  auto client = KubeClient::Create((*cluster)->config());
  ASSERT_TRUE(client.ok()) << client.status().ToString();

  const auto node = (*client)->Post("/api/v1/nodes", GpuNode("gpu-node-0"));
  ASSERT_TRUE(node.ok()) << node.status().ToString();
  // A node's status is kept on create: the scheduler sees its allocatable.
  EXPECT_EQ((*node)["status"]["allocatable"]["cpu"], "64");
  EXPECT_EQ((*node)["metadata"]["labels"]["tessera.io/gpus"], "8");

  const Status started = (*cluster)->StartScheduler((*cluster)->SchedulerConfig());
  ASSERT_TRUE(started.ok()) << started.ToString();
  const auto pod = (*client)->Post("/api/v1/namespaces/default/pods", BusyboxPod("busybox"));
  ASSERT_TRUE(pod.ok()) << pod.status().ToString();

  // No kubelet runs the pod: being bound to the node is all that happens.
  std::string node_name;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  while (node_name.empty() && std::chrono::steady_clock::now() < deadline) {
    const auto now = (*client)->Get("/api/v1/namespaces/default/pods/busybox");
    ASSERT_TRUE(now.ok()) << now.status().ToString();
    node_name = (*now)["spec"].value("nodeName", "");
    if (node_name.empty()) std::this_thread::sleep_for(std::chrono::milliseconds(200));
  }
  EXPECT_EQ(node_name, "gpu-node-0") << "the pod was not scheduled within 60 s";
}

TEST_F(KubeClusterTest, SchedulerConfigErrorReportsTheSchedulersLog) {
  auto cluster = KubeTestCluster::Start(dir_, KubeBinDir());
  ASSERT_TRUE(cluster.ok()) << cluster.status().ToString();

  const Status bad = (*cluster)->StartScheduler((*cluster)->SchedulerConfig("noSuchField: 1\n"));
  EXPECT_EQ(bad.code(), StatusCode::kIoError);
  EXPECT_THAT(bad.message(), HasSubstr("kube-scheduler"));
  EXPECT_THAT(bad.message(), HasSubstr("noSuchField"));

  // The failed scheduler is gone: another one starts.
  const Status good = (*cluster)->StartScheduler((*cluster)->SchedulerConfig());
  EXPECT_TRUE(good.ok()) << good.ToString();
  EXPECT_TRUE((*cluster)->StopScheduler().ok());
  EXPECT_EQ((*cluster)->StopScheduler().code(), StatusCode::kInvalidArgument);
}

TEST_F(KubeClusterTest, MissingBinaryIsNamedWithTheScriptThatBuildsIt) {
  std::filesystem::create_directories(dir_ / "bin");
  const auto cluster = KubeTestCluster::Start(dir_ / "work", (dir_ / "bin").string());
  ASSERT_FALSE(cluster.ok());
  EXPECT_EQ(cluster.status().code(), StatusCode::kNotFound);
  EXPECT_THAT(cluster.status().message(), HasSubstr((dir_ / "bin" / "etcd").string()));
  EXPECT_THAT(cluster.status().message(), HasSubstr("scripts/k8s-bins.sh"));
}

// Stand-ins for the three binaries; etcd writes 30 lines and exits 3.
TEST_F(KubeClusterTest, ProcessThatExitsReportsTheEndOfItsLog) {
  const std::filesystem::path bin = dir_ / "bin";
  std::filesystem::create_directories(bin);
  WriteTextFile(bin / "etcd",
                "#!/bin/sh\nfor i in $(seq 1 30); do echo \"etcd line $i\"; done\n"
                "exit 3\n");
  WriteTextFile(bin / "kube-apiserver", "#!/bin/sh\nexit 1\n");
  WriteTextFile(bin / "kube-scheduler", "#!/bin/sh\nexit 1\n");
  for (const char* name : {"etcd", "kube-apiserver", "kube-scheduler"}) {
    std::filesystem::permissions(bin / name, std::filesystem::perms::owner_all);
  }

  const auto cluster = KubeTestCluster::Start(dir_ / "work", bin.string());
  ASSERT_FALSE(cluster.ok());
  const std::string& message = cluster.status().message();
  EXPECT_THAT(message, HasSubstr("etcd-0 exited with status 3 before it was ready"));
  EXPECT_THAT(message, HasSubstr((dir_ / "work" / "logs" / "etcd-0.log").string()));
  // The last 20 lines, no more.
  EXPECT_THAT(message, HasSubstr("\netcd line 11\n"));
  EXPECT_THAT(message, HasSubstr("\netcd line 30"));
  EXPECT_THAT(message, Not(HasSubstr("\netcd line 10\n")));
}

}  // namespace
}  // namespace tessera::testing
