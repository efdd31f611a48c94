// The scheduler extender against a real Kubernetes control plane
// (docs/kubernetes.md): etcd, kube-apiserver and kube-scheduler built from
// the pinned Go modules (KubeTestCluster), `tessera serve --kubeconfig` as
// the extender, Node objects without kubelets, and pods created through the
// API server in trace order. What the scheduler binds is compared with
// `tessera replay` on the same sequence.
#include <gtest/gtest.h>
#include <httplib.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <map>
#include <random>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "agent_fixture.h"
#include "k8s_cluster.h"
#include "k8s_trace_support.h"
#include "online/alibaba_trace.h"
#include "tessera/gpu/mig_layout.h"
#include "tessera/gpu_catalog.h"
#include "tessera/k8s/kube_client.h"
#include "tessera/k8s/kube_manifests.h"
#include "tessera/k8s/scheduler_extender.h"
#include "tessera/online/online_placer.h"
#include "tessera/online/replay.h"

namespace tessera::testing {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

// A pod's scheduling outcome as the API server shows it.
struct PodView {
  std::string name;
  std::string uid;
  std::string node;           // "" while pending
  std::string unschedulable;  // PodScheduled=False message, "" otherwise
  std::optional<PodPlacement> placement;
};

class KubeExtenderTest : public KubeControlPlaneTest {
 protected:
  void TearDown() override {
    cluster_.reset();  // the scheduler first: it calls the daemon
    daemon_.reset();
    CliTest::TearDown();
  }

  // `tessera serve --kubeconfig` on `port` (0: any), waiting until it has
  // listed the cluster.
  void StartDaemon(const std::string& gpu, int port = 0) {
    const fs::path log = dir_ / "serve.log";
    std::ofstream(log, std::ios::trunc).close();
    daemon_ = std::make_unique<Background>(std::vector<std::string>{},
                                           "serve --listen 127.0.0.1:" + std::to_string(port) +
                                               " --db " + Quote((dir_ / "tessera.db").string()) +
                                               " --kubeconfig " + Quote(cluster_->kubeconfig()) +
                                               " --node-gpu " + gpu + " --policy grmu",
                                           log.string());
    const std::string marker = "listening on http://127.0.0.1:";
    ASSERT_TRUE(Eventually(
        [&] {
          const std::string text = daemon_->Log();
          const size_t at = text.find(marker);
          if (at == std::string::npos) return false;
          port_ = std::atoi(text.c_str() + at + marker.size());
          return port_ > 0;
        },
        30))
        << "no 'listening on' line from tessera serve:\n"
        << daemon_->Log();
    ASSERT_TRUE(Eventually([&] { return State().value("synced", false); }, 30))
        << "the extender did not list the cluster:\n"
        << daemon_->Log();
  }

  void StartScheduler() {
    SchedulerConfigOptions options;
    options.extender_url = "http://127.0.0.1:" + std::to_string(port_) + "/scheduler";
    const Status started =
        cluster_->StartScheduler(cluster_->SchedulerConfig(SchedulerExtenderYaml(options)));
    ASSERT_TRUE(started.ok()) << started.ToString();
  }

  json State() {
    httplib::Client http("127.0.0.1", port_);
    http.set_read_timeout(10, 0);
    const httplib::Result reply = http.Get("/scheduler/state");
    if (!reply || reply->status != 200) return json::object();
    return json::parse(reply->body, nullptr, false);
  }

  // Creates the Nodes of `list`, then its Pods one by one, in list order.
  void Create(const json& list, const std::string& kind) {
    for (const json& item : list["items"]) {
      if (item["kind"] != kind) continue;
      const std::string path = kind == "Node" ? "/api/v1/nodes" : "/api/v1/namespaces/default/pods";
      Result<json> created = client_->Post(path, item);
      ASSERT_TRUE(created.ok()) << created.status().ToString();
    }
  }

  std::vector<PodView> Pods() {
    Result<json> list = client_->Get("/api/v1/namespaces/default/pods");
    EXPECT_TRUE(list.ok()) << list.status().ToString();
    std::vector<PodView> pods;
    if (!list.ok()) return pods;
    for (const json& pod : (*list)["items"]) {
      PodView view;
      view.name = pod["metadata"]["name"];
      view.uid = pod["metadata"]["uid"];
      view.node = pod["spec"].value("nodeName", "");
      for (const json& c : pod["status"].value("conditions", json::array())) {
        if (c.value("type", "") == "PodScheduled" && c.value("status", "") == "False")
          view.unschedulable = c.value("message", "?");
      }
      Result<std::optional<PodPlacement>> placement = PlacementFromPod(pod);
      EXPECT_TRUE(placement.ok()) << placement.status().ToString();
      if (placement.ok()) view.placement = *placement;
      pods.push_back(std::move(view));
    }
    return pods;
  }

  // Waits until each of `count` pods is bound or refused, and returns them.
  std::vector<PodView> Settled(size_t count, double timeout_s = 180) {
    std::vector<PodView> pods;
    EXPECT_TRUE(Eventually(
        [&] {
          pods = Pods();
          size_t settled = 0;
          for (const PodView& p : pods) settled += !p.node.empty() || !p.unschedulable.empty();
          return pods.size() == count && settled == count;
        },
        timeout_s))
        << "pods not settled; daemon log:\n"
        << daemon_->Log();
    return pods;
  }

  // Every bound pod carries a legal placement on its node, and no two share
  // a memory slice; the extender's state holds exactly those placements.
  void ExpectLegalAndDisjoint(const std::vector<PodView>& pods, const GpuModel& gpu) {
    std::map<std::pair<std::string, int>, SliceMask> used;
    std::set<std::string> bound_uids;
    for (const PodView& p : pods) {
      if (p.node.empty()) continue;
      ASSERT_TRUE(p.placement.has_value()) << p.name << " is bound without Tessera's annotations";
      EXPECT_EQ(p.placement->node, p.node);
      const auto profile =
          std::find_if(gpu.profiles.begin(), gpu.profiles.end(),
                       [&](const MigProfile& m) { return m.name == p.placement->profile; });
      ASSERT_NE(profile, gpu.profiles.end()) << p.name;
      EXPECT_NE(std::find(profile->starts.begin(), profile->starts.end(), p.placement->start),
                profile->starts.end())
          << p.name << ": " << profile->name << " may not start at " << p.placement->start;
      const SliceMask mask =
          MaskOf(gpu, {static_cast<int>(profile - gpu.profiles.begin()), p.placement->start});
      SliceMask& taken = used[{p.node, p.placement->gpu}];
      EXPECT_EQ(taken & mask, 0u) << p.name << " overlaps another pod on " << p.node << " GPU "
                                  << p.placement->gpu;
      taken |= mask;
      bound_uids.insert(p.uid);
    }
    std::set<std::string> state_uids;
    const json state = State();
    for (const json& node : state["nodes"]) {
      for (const json& pod : node["pods"]) {
        if (pod["state"] == "bound") state_uids.insert(pod["uid"].get<std::string>());
      }
    }
    EXPECT_EQ(state_uids, bound_uids) << "the extender's state differs from the annotations";
  }

  // `tessera replay` of the trace in `trace_flags` with GRMU as the extender
  // runs it (no migrations): its JSON report.
  json Replay(const std::string& trace_flags) {
    const Outcome outcome =
        Tessera("replay " + trace_flags + " --policy grmu --no-defragment --format json");
    EXPECT_EQ(outcome.exit_code, 0) << outcome.err;
    const json reports = json::parse(outcome.out, nullptr, false);
    EXPECT_TRUE(reports.is_array() && reports.size() == 1) << outcome.out;
    return reports.is_array() && !reports.empty() ? reports[0] : json::object();
  }

  json Manifests(const std::string& trace_flags) {
    const fs::path path = dir_ / "trace.json";
    const Outcome outcome = Tessera("k8s manifests " + trace_flags + " -o " + Quote(path.string()));
    EXPECT_EQ(outcome.exit_code, 0) << outcome.err;
    return json::parse(ReadAll(path), nullptr, false);
  }

  // Accepted per profile name, from the replay's report or from the pods.
  static std::map<std::string, int> ReplayAccepted(const json& report) {
    std::map<std::string, int> accepted;
    for (const json& t : report["per_profile"]) accepted[t["profile"]] = t["accepted"];
    return accepted;
  }
  static std::map<std::string, int> BoundAccepted(const std::vector<PodView>& pods,
                                                  const json& list) {
    std::map<std::string, std::string> profile_of;
    for (const json& item : list["items"]) {
      if (item["kind"] != "Pod") continue;
      for (const auto& [name, value] : item["spec"]["containers"][0]["resources"]["limits"].items())
        profile_of[item["metadata"]["name"]] = name.substr(kMigResourcePrefix.size());
    }
    std::map<std::string, int> accepted;
    for (const auto& [name, profile] : profile_of) accepted[profile] += 0;
    for (const PodView& p : pods) {
      if (!p.node.empty()) ++accepted[profile_of[p.name]];
    }
    return accepted;
  }

  std::unique_ptr<Background> daemon_;
  int port_ = 0;
};

// The bound pods' (node, GPU, start), by pod name.
std::map<std::string, std::tuple<std::string, int, int>> BoundPlaces(
    const std::vector<PodView>& pods) {
  std::map<std::string, std::tuple<std::string, int, int>> placed;
  for (const PodView& p : pods) {
    if (!p.node.empty() && p.placement)
      placed[p.name] = {p.node, p.placement->gpu, p.placement->start};
  }
  return placed;
}

// 200 pods of six profiles on 20 nodes x 8 GPUs, GRMU: every pod bound,
// legal and disjoint placements, the same acceptance per profile as
// `tessera replay` (the Alibaba slice below has refusals to match too);
// then deleting pods frees their slots for new ones.
TEST_F(KubeExtenderTest, MixedProfilesMatchReplayAndDeletionFreesSlots) {
  // A fifth of the pods want a whole GPU, within GRMU's heavy basket (30%
  // of 160 GPUs): the whole sequence fits, and replay accepts all of it.
  const std::string trace =
      WriteMixedTrace(dir_, 20, 8, 200, {0.25, 0.15, 0.15, 0.15, 0.1, 0.2}, 7);
  const json list = Manifests(trace);
  const json replay = Replay(trace);
  StartDaemon("A100-80GB");
  StartScheduler();
  Create(list, "Node");
  ASSERT_TRUE(Eventually([&] { return State()["nodes"].size() == 20; }, 30));

  const auto start = Clock::now();
  Create(list, "Pod");
  std::vector<PodView> pods = Settled(200);
  const double seconds = SecondsSince(start);
  ExpectLegalAndDisjoint(pods, A100_80());
  size_t bound = 0;
  for (const PodView& p : pods) bound += !p.node.empty();
  std::printf(
      "[ figure ] 200 pods of six profiles on 20 nodes x 8 A100-80GB through kube-scheduler + "
      "extender in %.1f s: %zu bound; tessera replay accepts %d\n",
      seconds, bound, replay["accepted"].get<int>());
  EXPECT_EQ(bound, 200u) << "every pod is bound";
  EXPECT_EQ(static_cast<int>(bound), replay["accepted"].get<int>());
  EXPECT_EQ(BoundAccepted(pods, list), ReplayAccepted(replay));
  EXPECT_EQ(ReplayAccepted(replay).size(), 6u) << "the trace asks for all six profiles";
  TraceShaping never_leave;
  never_leave.lifetime.mode = Lifetime::Mode::kNone;
  const ReplayOutcome expected = ReplayInProcess(
      (dir_ / "nodes.csv").string(), (dir_ / "pods.csv").string(), A100_80(), never_leave);
  EXPECT_EQ(BoundPlaces(pods), expected.placed)
      << "kube-scheduler with the extender placed pods elsewhere than the replay";

  // Delete 30 bound pods: their slots leave the state, and 30 new 1g.10gb
  // pods are bound beside the others without overlap.
  std::set<std::string> deleted;
  for (const PodView& p : pods) {
    if (p.node.empty() || deleted.size() == 30) continue;
    ASSERT_TRUE(
        client_->Delete("/api/v1/namespaces/default/pods/" + p.name + "?gracePeriodSeconds=0")
            .ok());
    deleted.insert(p.uid);
  }
  ASSERT_TRUE(Eventually(
      [&] {
        const json state = State();
        for (const json& node : state["nodes"])
          for (const json& pod : node["pods"])
            if (deleted.count(pod["uid"].get<std::string>())) return false;
        return true;
      },
      30))
      << State().dump();
  json extra = Manifests(trace);
  json fresh = json::array();
  for (int i = 0; i < 30; ++i) {
    json pod = extra["items"][20 + 1 + i];  // light pods' shape, renamed
    pod["metadata"]["name"] = "extra-" + std::to_string(i);
    pod["spec"]["containers"][0]["resources"]["limits"] = {{"tessera.io/mig-1g.10gb", "1"}};
    fresh.push_back(pod);
  }
  Create({{"items", fresh}}, "Pod");
  pods = Settled(200 - 30 + 30);
  ExpectLegalAndDisjoint(pods, A100_80());
  for (const PodView& p : pods) {
    if (p.name.rfind("extra-", 0) == 0) {
      EXPECT_FALSE(p.node.empty()) << p.name << p.unschedulable;
    }
  }
}

// Killing the extender mid-run loses nothing: its successor rebuilds every
// placement from the annotations before it answers, and the pods created
// after it are placed around them. A profile the nodes' GPU lacks gets a
// FailedScheduling reason that names it.
TEST_F(KubeExtenderTest, RestartLosesNothingAndUnknownProfileIsExplained) {
  const std::string trace = WriteMixedTrace(dir_, 20, 8, 200, {0.5, 0.2, 0.2, 0.1, 0, 0}, 11);
  json list = Manifests(trace);
  // Pod 0 asks for a whole GPU so that shares normalise; make it light too.
  list["items"][20]["spec"]["containers"][0]["resources"]["limits"] = {
      {"tessera.io/mig-1g.10gb", "1"}};
  StartDaemon("A100-80GB");
  StartScheduler();
  Create(list, "Node");
  ASSERT_TRUE(Eventually([&] { return State()["nodes"].size() == 20; }, 30));

  json first = list, second = list;
  first["items"] = json::array();
  second["items"] = json::array();
  for (size_t i = 0; i < list["items"].size(); ++i) {
    if (list["items"][i]["kind"] != "Pod") continue;
    (i < 20 + 100 ? first : second)["items"].push_back(list["items"][i]);
  }
  Create(first, "Pod");
  std::vector<PodView> pods = Settled(100);
  ExpectLegalAndDisjoint(pods, A100_80());
  std::map<std::string, PodPlacement> before;
  for (const PodView& p : pods) {
    ASSERT_FALSE(p.node.empty()) << p.name << ": " << p.unschedulable;
    before[p.uid] = *p.placement;
  }

  const int port = port_;
  daemon_->Kill();
  StartDaemon("A100-80GB", port);
  std::map<std::string, PodPlacement> rebuilt;
  const json state = State();
  for (const json& node : state["nodes"]) {
    for (const json& pod : node["pods"]) {
      PodPlacement& p = rebuilt[pod["uid"].get<std::string>()];
      p.name = pod["name"].get<std::string>();
      p.node = node["name"].get<std::string>();
      p.gpu = pod["gpu"].get<int>();
      p.start = pod["start"].get<int>();
    }
  }
  ASSERT_EQ(rebuilt.size(), before.size()) << state.dump();
  for (const auto& [uid, p] : before) {
    ASSERT_EQ(rebuilt.count(uid), 1u) << p.name;
    EXPECT_EQ(rebuilt[uid].node, p.node) << p.name;
    EXPECT_EQ(rebuilt[uid].gpu, p.gpu) << p.name;
    EXPECT_EQ(rebuilt[uid].start, p.start) << p.name;
  }

  Create(second, "Pod");
  pods = Settled(200);
  ExpectLegalAndDisjoint(pods, A100_80());
  for (const PodView& p : pods) EXPECT_FALSE(p.node.empty()) << p.name << ": " << p.unschedulable;
  for (const PodView& p : pods) {
    if (before.count(p.uid)) {
      EXPECT_EQ(p.placement->gpu, before[p.uid].gpu);
      EXPECT_EQ(p.placement->start, before[p.uid].start);
    }
  }

  // The node agent makes node-00's slices real: the extender's NodePlan of
  // the node, applied by `tessera agent --no-serving` on a fake 8-GPU
  // machine, leaves exactly the annotated instances.
  {
    httplib::Client http("127.0.0.1", port_);
    const httplib::Result plan = http.Get("/scheduler/nodes/node-00/plan");
    ASSERT_TRUE(plan && plan->status == 200) << (plan ? plan->body : "no reply");
    const fs::path plan_file = Write("node-00.json", plan->body);
    const std::string agent_dir = (dir_ / "agent").string();
    ::setenv("TESSERA_FAKE_NVML_STATE", (dir_ / "nvml.json").c_str(), 1);
    ::setenv("TESSERA_FAKE_NVML_DEVICES", "a100-80gb*8", 1);
    const std::string standin = TESSERA_STANDIN;
    const Outcome applied =
        Tessera("agent --node node-00 --plan " + Quote(plan_file.string()) + " --state-dir " +
                Quote(agent_dir) + " --nvml " + Quote(TESSERA_FAKE_NVML) +
                " --once --no-serving --quiet" + " --mps-command " + Quote(standin + " mps -d") +
                " --mps-control-command " + Quote(standin + " mps-control"));
    const Outcome listed =
        Tessera("agent inventory --nvml " + Quote(TESSERA_FAKE_NVML) + " --format json");
    ::unsetenv("TESSERA_FAKE_NVML_STATE");
    ::unsetenv("TESSERA_FAKE_NVML_DEVICES");
    agent::Supervisor supervisor(agent_dir, SystemClock());
    for (const auto& [name, unit] : supervisor.Scan()) (void)supervisor.Kill(name);
    ASSERT_EQ(applied.exit_code, 0) << applied.err;
    ASSERT_EQ(listed.exit_code, 0) << listed.err;
    std::set<std::pair<int, int>> annotated, created;
    for (const PodView& p : pods) {
      if (p.node == "node-00") annotated.insert({p.placement->gpu, p.placement->start});
    }
    const json inventory = json::parse(listed.out, nullptr, false);
    ASSERT_TRUE(inventory.is_object()) << listed.out;
    for (const json& gpu : inventory["gpus"]) {
      for (const json& gi : gpu["gpu_instances"])
        created.insert({gpu["index"].get<int>(), gi["start"].get<int>()});
    }
    EXPECT_FALSE(annotated.empty());
    EXPECT_EQ(created, annotated);
  }

  // 1g.5gb is an A100-40GB profile: managed, but not on these nodes.
  json odd = second["items"][0];
  odd["metadata"]["name"] = "odd-profile";
  odd["spec"]["containers"][0]["resources"]["limits"] = {{"tessera.io/mig-1g.5gb", "1"}};
  Create({{"items", {odd}}}, "Pod");
  std::string reason;
  ASSERT_TRUE(Eventually(
      [&] {
        for (const PodView& p : Pods())
          if (p.name == "odd-profile") reason = p.unschedulable;
        return !reason.empty();
      },
      60));
  EXPECT_NE(reason.find("unknown MIG profile '1g.5gb'"), std::string::npos) << reason;
  EXPECT_NE(reason.find("a100-80gb offers 1g.10gb, 1g.20gb"), std::string::npos) << reason;
  std::printf("[ figure ] FailedScheduling: %s\n", reason.c_str());
}

// The Alibaba trace's first 500 MIG-sized pods, stressed as GRMU's paper
// does (one GPU per host, no departures), through the real scheduler and
// through `tessera replay`: the same acceptance, per profile, and the same
// GPUs in use.
TEST_F(KubeExtenderTest, AlibabaSliceMatchesReplay) {
  const std::string nodes_csv = "alibaba-gpu-2023/csv/openb_node_list_gpu_node.csv";
  const std::string pods_csv = "alibaba-gpu-2023/csv/openb_pod_list_default.csv";
  if (!SharedDataPresent(nodes_csv) || !SharedDataPresent(pods_csv))
    GTEST_SKIP() << "the Alibaba GPU trace is not in " << SharedDataPath("");
  const std::string trace = "--nodes " + Quote(SharedDataPath(nodes_csv)) + " --pods " +
                            Quote(SharedDataPath(pods_csv)) +
                            " --gpu A100-40GB --hosts 200 --gpus-per-host 1 --max-pods 500 "
                            "--lifetime none";
  const json list = Manifests(trace);
  const json replay = Replay(trace);
  StartDaemon("A100-40GB");
  StartScheduler();
  Create(list, "Node");
  ASSERT_TRUE(Eventually([&] { return State()["nodes"].size() == 200; }, 30));
  const auto start = Clock::now();
  Create(list, "Pod");
  const std::vector<PodView> pods = Settled(500, 300);
  const double seconds = SecondsSince(start);
  ExpectLegalAndDisjoint(pods, **FindMigGpu("A100-40GB"));
  std::set<std::pair<std::string, int>> active;
  size_t bound = 0;
  for (const PodView& p : pods) {
    if (p.node.empty()) continue;
    ++bound;
    active.insert({p.node, p.placement->gpu});
  }
  EXPECT_EQ(static_cast<int>(bound), replay["accepted"].get<int>());
  EXPECT_EQ(BoundAccepted(pods, list), ReplayAccepted(replay));

  // The replay's placements and GPUs in use at its end (the same code
  // in-process).
  TraceShaping shaping;
  shaping.max_hosts = 200;
  shaping.gpus_per_host = 1;
  shaping.max_vms = 500;
  shaping.lifetime.mode = Lifetime::Mode::kNone;
  const ReplayOutcome expected = ReplayInProcess(
      SharedDataPath(nodes_csv), SharedDataPath(pods_csv), **FindMigGpu("A100-40GB"), shaping);
  const int replay_active = expected.active_gpus;
  EXPECT_EQ(static_cast<int>(active.size()), replay_active);
  EXPECT_EQ(BoundPlaces(pods), expected.placed)
      << "kube-scheduler with the extender placed pods elsewhere than the replay";
  std::printf(
      "[ figure ] Alibaba slice, 500 pods on 200 A100-40GB: kube-scheduler + extender bound %zu "
      "(%.1f%%) on %zu GPUs in %.1f s; tessera replay accepted %d on %d GPUs\n",
      bound, 100.0 * bound / 500, active.size(), seconds, replay["accepted"].get<int>(),
      replay_active);
}

}  // namespace
}  // namespace tessera::testing
