// `tessera deploy` run as a user would: plan S3, deploy it, and check the
// file set and that the node plans hold exactly the plan's geometry; --format
// json, the --out safety rules, --transition's gpu_map, and bad flags (exit
// 2, one error line naming the flag or file).
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <map>
#include <set>
#include <string>
#include <tuple>
#include <vector>

#include "cli_fixture.h"
#include "deployment_builder.h"
#include "tessera/deployment_format.h"
#include "tessera/emit/node_plan.h"

namespace tessera::testing {
namespace {

namespace fs = std::filesystem;

int ErrorLines(const std::string& err) {
  int n = 0;
  for (size_t at = err.find("tessera: error:"); at != std::string::npos;
       at = err.find("tessera: error:", at + 1)) {
    ++n;
  }
  return n;
}

std::set<std::string> Listing(const fs::path& dir) {
  std::set<std::string> files;
  for (const auto& entry : fs::recursive_directory_iterator(dir)) {
    if (entry.is_regular_file()) files.insert(fs::relative(entry.path(), dir).string());
  }
  return files;
}

class DeployCliTest : public CliTest {
 protected:
  // Plans S3 into plan.json once per test.
  void PlanS3() {
    const Outcome plan = Tessera("plan --scenario " + SourcePath("examples/scenarios/s3.yaml") +
                                 " --format json -o " + (dir_ / "plan.json").string());
    ASSERT_EQ(plan.exit_code, 0) << plan.err;
  }
  std::string Plan() const { return (dir_ / "plan.json").string(); }
};

// A plan made with --router jsq cannot be shipped: exit 2, one error line
// naming the rule, nothing written; the same scenario planned with the
// default router deploys, its router file balancing by HAProxy's leastconn.
TEST_F(DeployCliTest, RefusesAPlanWhoseRouterCannotBeShipped) {
  const std::string s3 = SourcePath("examples/scenarios/s3.yaml");
  const fs::path jsq = dir_ / "jsq.json";
  ASSERT_EQ(
      Tessera("plan --scenario " + s3 + " --router jsq --format json -o " + jsq.string()).exit_code,
      0);
  const fs::path out = dir_ / "out";
  const Outcome r = Tessera("deploy --deployment " + jsq.string() + " --out " + out.string());
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_EQ(ErrorLines(r.err), 1) << r.err;
  EXPECT_NE(r.err.find("router is jsq"), std::string::npos) << r.err;
  EXPECT_FALSE(fs::exists(out));
  const Outcome bad = Tessera("deploy --deployment " + jsq.string() + " --out " + out.string() +
                              " --router-image 'a b'");
  EXPECT_EQ(bad.exit_code, 2) << bad.err;
  EXPECT_NE(bad.err.find("--router-image"), std::string::npos) << bad.err;

  PlanS3();
  ASSERT_EQ(Tessera("deploy --deployment " + Plan() + " --out " + out.string()).exit_code, 0);
  EXPECT_NE(ReadAll(out / "router/haproxy.cfg").find("balance leastconn"), std::string::npos);
}

TEST_F(DeployCliTest, DeploysS3WithTheGeometryOfThePlan) {
  PlanS3();
  const fs::path out = dir_ / "out";
  const Outcome r = Tessera("deploy --deployment " + Plan() + " --scenario " +
                            SourcePath("examples/scenarios/s3.yaml") + " --out " + out.string());
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("total"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("file(s) under"), std::string::npos) << r.out;

  Result<Deployment> d = ParseDeploymentJson(ReadAll(dir_ / "plan.json"), "plan.json");
  ASSERT_TRUE(d.ok()) << d.status().message();
  const std::set<std::string> files = Listing(out);
  EXPECT_TRUE(files.count("mig-parted.yaml"));
  EXPECT_TRUE(files.count("k8s/00-namespace.yaml"));
  EXPECT_TRUE(files.count("k8s/20-agent-daemonset.yaml"));
  std::set<std::string> services;
  int processes = 0;
  // (cluster GPU, start) -> (profile, service, batch, procs) of the plan.
  std::map<std::pair<int, int>, std::tuple<std::string, std::string, int, int>> planned;
  for (const GpuAssignment& g : d->gpus) {
    for (const Instance& in : g.instances()) {
      planned[{g.index, in.start}] = {in.profile, in.service, in.batch, in.procs};
      services.insert(in.service);
      processes += in.procs;
    }
  }
  for (const std::string& s : services) {
    EXPECT_TRUE(files.count("triton/" + s + "/config.pbtxt")) << s;
  }
  int serving = 0;
  for (const std::string& f : files) serving += f.starts_with("k8s/40-serving-") ? 1 : 0;
  EXPECT_EQ(serving, processes);

  std::map<std::pair<int, int>, std::tuple<std::string, std::string, int, int>> deployed;
  for (const std::string& f : files) {
    if (!f.starts_with("nodes/")) continue;
    Result<NodePlan> plan = ParseNodePlanJson(ReadAll(out / f), f);
    ASSERT_TRUE(plan.ok()) << plan.status().message();
    EXPECT_EQ("nodes/" + plan->node + ".json", f);
    for (const NodeGpu& g : plan->gpus) {
      EXPECT_EQ(g.cluster_index, plan->node_index * 8 + g.index);
      for (const NodeInstance& in : g.instances) {
        deployed[{g.cluster_index, in.instance.start}] = {in.instance.profile, in.instance.service,
                                                          in.instance.batch, in.instance.procs};
      }
    }
  }
  EXPECT_EQ(deployed, planned);

  // Deploying again into the same folder rewrites deploy's own files.
  const Outcome again =
      Tessera("deploy --deployment " + Plan() + " --out " + out.string() + " --format json");
  ASSERT_EQ(again.exit_code, 0) << again.err;
  EXPECT_NE(again.out.find("\"files\""), std::string::npos);
  EXPECT_NE(again.out.find("\"mig-parted.yaml\""), std::string::npos);
}

TEST_F(DeployCliTest, RefusesAFolderWithOtherFilesUnlessForced) {
  PlanS3();
  const fs::path out = dir_ / "out";
  fs::create_directories(out);
  Write("out/notes.txt", "mine\n");
  const Outcome r = Tessera("deploy --deployment " + Plan() + " --out " + out.string());
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(ErrorLines(r.err), 1) << r.err;
  EXPECT_NE(r.err.find("notes.txt"), std::string::npos) << r.err;
  EXPECT_EQ(Listing(out), std::set<std::string>{"notes.txt"});
  const Outcome forced =
      Tessera("deploy --deployment " + Plan() + " --out " + out.string() + " --force");
  EXPECT_EQ(forced.exit_code, 0) << forced.err;
  EXPECT_EQ(ReadAll(out / "notes.txt"), "mine\n");
}

TEST_F(DeployCliTest, TransitionGpuMapPlacesGpus) {
  const Deployment b = DeploymentBuilder("a100-80gb", "parva")
                           .BareCapacity()
                           .Gpu()
                           .Instance("3g.40gb", 0, "resnet50", 32, 2, 300, 60)
                           .Service("resnet50", 200, 200)
                           .Build();
  Write("b.json", FormatDeploymentJson(b));
  Write("t.json", R"({"format": "tessera-transition", "version": 1, "gpu": "a100-80gb",
    "spare_gpus": 0, "gpu_map": {"0": 5}, "phases": [],
    "summary": {"steps": 0, "phases": 0, "gpus_touched": 0, "peak_gpus": 1,
                "min_capacity_ratio": 0}})");
  const Outcome r =
      Tessera("deploy --deployment " + (dir_ / "b.json").string() + " --transition " +
              (dir_ / "t.json").string() + " --gpus-per-node 4 --nodes alpha,beta --out " +
              (dir_ / "out").string());
  ASSERT_EQ(r.exit_code, 0) << r.err;
  Result<NodePlan> plan = ParseNodePlanJson(ReadAll(dir_ / "out/nodes/beta.json"), "beta.json");
  ASSERT_TRUE(plan.ok()) << plan.status().message() << r.err;
  EXPECT_EQ(plan->gpus[0].index, 1);
  EXPECT_EQ(plan->gpus[0].cluster_index, 5);
}

TEST_F(DeployCliTest, BadInputsExit2WithOneLine) {
  PlanS3();
  const std::string plan = " --deployment " + Plan();
  const std::string out = (dir_ / "o").string();
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"deploy" + plan, "--out"},
      {"deploy --out " + out, "--deployment"},
      {"deploy" + plan + " --out " + out + " --gpus-per-node 0", "--gpus-per-node"},
      {"deploy" + plan + " --out " + out + " --gpus-per-node 17", "--gpus-per-node"},
      {"deploy" + plan + " --out " + out + " --base-port 70000", "--base-port"},
      {"deploy" + plan + " --out " + out + " --base-port 65000", "base port"},
      {"deploy" + plan + " --out " + out + " --nodes Bad_Name", "--nodes"},
      {"deploy" + plan + " --out " + out + " --namespace Bad", "--namespace"},
      {"deploy" + plan + " --out " + out + " --mps-root relative", "--mps-root"},
      {"deploy" + plan + " --out " + out + " --triton-image ''", "--triton-image"},
      {"deploy" + plan + " --out " + out + " --format yaml", "--format"},
      {"deploy" + plan + " --out " + out + " --coeffs c.json", "--coeffs"},
      {"deploy --deployment missing.json --out " + out, "missing.json"},
      {"deploy" + plan + " --out " + out + " --transition missing.json", "missing.json"},
  };
  for (const auto& [args, names] : cases) {
    const Outcome r = Tessera(args);
    EXPECT_EQ(r.exit_code, 2) << args << "\n" << r.err;
    EXPECT_EQ(ErrorLines(r.err), 1) << args << "\n" << r.err;
    EXPECT_NE(r.err.find(names), std::string::npos) << args << "\n" << r.err;
    EXPECT_FALSE(fs::exists(dir_ / "o")) << args;
  }
}

TEST_F(DeployCliTest, MpsPlanIsAnError) {
  Deployment mps;
  mps.gpu = "t4";
  mps.planner = "igniter";
  mps.sharing = Sharing::kMps;
  GpuAssignment gpu;
  gpu.holds = MpsProcesses{{"s", "m", 4, 50, 10, 20, 5, true}};
  mps.gpus.push_back(gpu);
  mps.services.push_back({"s", "m", 10, 100, 20, ServiceStatus::kOk, ""});
  Write("mps.json", FormatDeploymentJson(mps));
  const Outcome r = Tessera("deploy --deployment " + (dir_ / "mps.json").string() + " --out " +
                            (dir_ / "o").string());
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(ErrorLines(r.err), 1) << r.err;
  EXPECT_NE(r.err.find("mps.json: field 'sharing'"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("no MIG instances"), std::string::npos) << r.err;
  EXPECT_FALSE(fs::exists(dir_ / "o"));
}

TEST_F(DeployCliTest, HelpTeachesTheFilesAndThePortsRule) {
  const Outcome r = Tessera("deploy --help");
  EXPECT_EQ(r.exit_code, 0);
  for (const char* words : {"nodes/<node>.json", "mig-parted.yaml", "http = base + 3k",
                            "--model-config-name", "Examples:"}) {
    EXPECT_NE(r.out.find(words), std::string::npos) << words;
  }
  EXPECT_NE(Tessera("--help").out.find("tessera deploy"), std::string::npos);
}

}  // namespace
}  // namespace tessera::testing
