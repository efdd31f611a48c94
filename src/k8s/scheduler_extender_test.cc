// SchedulerExtender (scheduler_extender.h) driven as kube-scheduler drives
// it, against a fake API server and a fake clock: the placements equal
// `tessera replay`'s for every policy, the protocol's answers, reservations,
// binding, restarts and the watch's updates; the readers of Node and Pod
// objects; and mutated protocol bodies.
#include "tessera/k8s/scheduler_extender.h"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <random>
#include <set>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "fuzz_mutator.h"
#include "online/synthetic_trace.h"
#include "tessera/gpu/mig_layout.h"
#include "tessera/gpu_catalog.h"
#include "tessera/online/online_cluster.h"
#include "tessera/online/replay.h"
#include "tessera/online/vm_trace.h"
#include "tessera/util/clock.h"

namespace tessera {
namespace {

using nlohmann::json;

constexpr const char* kNamespace = "team-a";

// The API server: pods by "namespace/name" for GetPod; every Bind recorded,
// answered with `bind_status` after `during_bind` (what happens elsewhere
// while the extender waits for the API server, outside its lock).
class FakeKubeApi : public KubeApi {
 public:
  Result<json> GetPod(const std::string& ns, const std::string& name) override {
    ++get_pod_calls;
    const auto pod = pods.find(ns + "/" + name);
    if (pod == pods.end()) return Status::NotFound("pods \"" + name + "\" not found");
    return pod->second;
  }
  Status Bind(const PodPlacement& placement) override {
    bound.push_back(placement);
    if (during_bind) during_bind();
    return bind_status;
  }

  std::map<std::string, json> pods;
  std::vector<PodPlacement> bound;
  int get_pod_calls = 0;
  Status bind_status;
  std::function<void()> during_bind;
};

const GpuModel& A100() { return *FindMigGpu("A100-80GB").value(); }

KubeNode Node(const std::string& name, int gpus, double cpu_milli = 96000,
              double memory_mib = 393216) {
  return {name, gpus, cpu_milli, memory_mib};
}

// A pending Pod as the API server has it: one container with the resources
// of `limits` (tessera.io/mig-* are written as limits) and CPU/RAM requests.
json PodWithLimits(const std::string& uid, const std::string& name, json limits,
                   const std::string& cpu = "1", const std::string& memory = "1Gi") {
  json resources = {{"limits", std::move(limits)},
                    {"requests", {{"cpu", cpu}, {"memory", memory}}}};
  json container = {{"name", "main"}, {"image", "cuda"}, {"resources", std::move(resources)}};
  json pod;
  pod["apiVersion"] = "v1";
  pod["kind"] = "Pod";
  pod["metadata"] = {{"uid", uid}, {"name", name}, {"namespace", kNamespace}};
  pod["spec"]["containers"] = json::array({std::move(container)});
  pod["status"]["phase"] = "Pending";
  return pod;
}

// A pod asking one slice of `profile`.
json Pod(const std::string& uid, const std::string& name, const std::string& profile,
         const std::string& cpu = "1", const std::string& memory = "1Gi") {
  return PodWithLimits(uid, name, {{std::string(kMigResourcePrefix) + profile, "1"}}, cpu, memory);
}

// A verb's answer, parsed: the extender writes JSON text; text that does not
// parse is an Internal error here.
Result<json> AsJson(const Result<std::string>& text) {
  if (!text.ok()) return text.status();
  json parsed = json::parse(*text, nullptr, false);
  if (parsed.is_discarded()) return Status::Internal("not JSON: " + *text);
  return parsed;
}

// Request bodies, as kube-scheduler writes them.
std::string Args(const json& pod, const std::vector<std::string>& nodes) {
  return json{{"Pod", pod}, {"Nodes", nullptr}, {"NodeNames", nodes}}.dump();
}

std::string BindArgs(const json& pod, const std::string& node) {
  const json& metadata = pod.at("metadata");
  return json{{"PodName", metadata.at("name")},
              {"PodNamespace", metadata.at("namespace")},
              {"PodUID", metadata.at("uid")},
              {"Node", node}}
      .dump();
}

std::vector<std::string> KeptNames(const json& filtered) {
  std::vector<std::string> names;
  for (const json& name : filtered.at("NodeNames")) names.push_back(name.get<std::string>());
  return names;
}

// The state ("reserved", "binding", "bound") of pod `uid` in StateJson, and
// its node; "" when the pod holds no slot.
std::pair<std::string, std::string> StateOf(const SchedulerExtender& extender,
                                            const std::string& uid) {
  const json state = extender.StateJson();
  for (const json& node : state.at("nodes")) {
    for (const json& pod : node.at("pods")) {
      if (pod.at("uid") == uid) return {pod.at("state"), node.at("name")};
    }
  }
  return {"", ""};
}

// Fails when two placements share a memory slice of one GPU, or one sits at
// a start its profile does not allow.
void ExpectLegalAndDisjoint(const std::vector<PodPlacement>& placements) {
  const GpuModel& model = A100();
  std::map<std::pair<std::string, int>, SliceMask> used;
  for (const PodPlacement& p : placements) {
    const int profile = model.ProfileIndex(p.profile);
    ASSERT_GE(profile, 0) << p.profile;
    const std::vector<int>& starts = model.profiles[profile].starts;
    EXPECT_NE(std::find(starts.begin(), starts.end(), p.start), starts.end())
        << p.uid << ": " << p.profile << " at " << p.start;
    const SliceMask mask = MaskOf(model, {profile, p.start});
    SliceMask& gpu = used[{p.node, p.gpu}];
    EXPECT_EQ(gpu & mask, 0u) << p.uid << " overlaps on " << p.node << " GPU " << p.gpu;
    gpu |= mask;
  }
}

// What kube-scheduler does with one pod: Filter over `nodes`, Prioritize the
// kept ones, Bind to the highest score (the first of equals). The node bound,
// or "" when the extender kept no node.
std::string Schedule(SchedulerExtender& extender, const json& pod,
                     const std::vector<std::string>& nodes) {
  const Result<json> filtered = AsJson(extender.Filter(Args(pod, nodes)));
  if (!filtered.ok()) {
    ADD_FAILURE() << filtered.status().ToString();
    return "";
  }
  EXPECT_EQ(filtered->at("Error"), "");
  const std::vector<std::string> kept = KeptNames(*filtered);
  if (kept.empty()) return "";
  const Result<json> scores = AsJson(extender.Prioritize(Args(pod, kept)));
  if (!scores.ok()) {
    ADD_FAILURE() << scores.status().ToString();
    return "";
  }
  EXPECT_EQ(scores->size(), kept.size());
  std::string best;
  int best_score = -1;
  for (const json& host : *scores) {
    if (host.at("Score").get<int>() > best_score) {
      best_score = host.at("Score").get<int>();
      best = host.at("Host").get<std::string>();
    }
  }
  EXPECT_EQ(best_score, kMaxExtenderScore) << "no node carries the policy's score";
  const Result<json> bound = AsJson(extender.Bind(BindArgs(pod, best)));
  if (!bound.ok()) {
    ADD_FAILURE() << bound.status().ToString();
    return "";
  }
  EXPECT_EQ(bound->at("Error"), "") << pod.at("metadata").at("name");
  return best;
}

class SchedulerExtenderTest : public ::testing::Test {
 protected:
  std::unique_ptr<SchedulerExtender> Make(const std::string& policy = "ff",
                                          std::vector<KubeNode> nodes = {Node("node-a", 1),
                                                                         Node("node-b", 1)}) {
    ExtenderOptions options;
    options.policy = policy;
    options.reservation_ttl_s = 30;
    options.clock = &clock_;
    Result<std::unique_ptr<SchedulerExtender>> made = SchedulerExtender::Create(options, api_);
    EXPECT_TRUE(made.ok()) << made.status().ToString();
    if (!made.ok()) return nullptr;
    (*made)->SyncNodes(std::move(nodes));
    (*made)->MarkSynced();
    return std::move(made).value();
  }

  FakeClock clock_;
  FakeKubeApi api_;
};

// ---- 1. The extender places as `tessera replay` does ----

struct Slot {
  std::string node;
  int gpu = -1;
  int start = -1;
  bool operator==(const Slot&) const = default;
};

std::string NodeName(int host) { return fmt::format("node-{:03}", host); }

// Where Replay puts each VM of `trace` under `policy` with migrations off
// (nullopt: rejected), and how many it accepts.
std::vector<std::optional<Slot>> ReplaySlots(const VmTrace& trace, const std::string& policy,
                                             int& accepted) {
  PlacerOptions placer_options;
  placer_options.defragment = false;
  placer_options.consolidate_every_s = 0;
  std::unique_ptr<OnlinePlacer> placer = BuiltinPlacers().Create(policy, placer_options).value();
  // Without departures or maintenance, event k is the arrival of VM k.
  std::vector<std::optional<Slot>> slots;
  ReplayOptions options;
  options.after_event = [&](const OnlineCluster& cluster) {
    const VmLocation where = cluster.LocationOf(static_cast<int>(slots.size()));
    if (where.gpu < 0) {
      slots.emplace_back();
      return;
    }
    const int host = cluster.HostOf(where.gpu);
    slots.push_back(Slot{NodeName(host), where.gpu - cluster.FirstGpuOf(host), where.start});
  };
  const Result<ReplayReport> report = Replay(trace, *placer, options);
  EXPECT_TRUE(report.ok()) << report.status().ToString();
  accepted = report.ok() ? report->accepted : -1;
  EXPECT_EQ(slots.size(), trace.vms.size());
  return slots;
}

// A trace that fills `hosts` x `gpus` A100-80GB with VMs that never leave
// (the later ones are mostly refused), each VM with its own CPU and RAM: a
// host's CPU or RAM sometimes runs out before its GPUs, and one VM in five
// asks for more CPU than any host has.
VmTrace BusyTrace(int hosts, int gpus, int vms, std::uint64_t seed) {
  SyntheticTraceOptions options;
  options.hosts = hosts;
  options.gpus_per_host = gpus;
  options.host_cpu_milli = 40000;
  options.host_memory_mib = 96 * 1024;
  options.vms = vms;
  options.median_lifetime_s = kNeverDeparts;
  options.seed = seed;
  VmTrace trace = GenerateSyntheticTrace(A100(), options).value();
  std::mt19937 rng(static_cast<std::mt19937::result_type>(seed));
  for (VmRequest& vm : trace.vms) {
    vm.cpu_milli = rng() % 5 == 0 ? 40500 : 500 * static_cast<double>(1 + rng() % 16);
    vm.memory_mib = 2048 * static_cast<double>(1 + rng() % 8);
  }
  return trace;
}

// Drives a fresh extender over `trace` as kube-scheduler does (a pod per VM,
// in trace order, the clock at its arrival, every node offered) and expects
// every VM bound where Replay puts it, or refused where Replay refuses it.
void ExpectSchedulingAsReplayed(const VmTrace& trace, const std::string& policy) {
  int replay_accepted = 0;
  const std::vector<std::optional<Slot>> expected = ReplaySlots(trace, policy, replay_accepted);
  ASSERT_EQ(expected.size(), trace.vms.size());

  FakeKubeApi api;
  FakeClock clock;
  ExtenderOptions options;
  options.policy = policy;
  options.clock = &clock;
  std::unique_ptr<SchedulerExtender> extender = SchedulerExtender::Create(options, api).value();
  std::vector<KubeNode> nodes;
  std::vector<std::string> names;
  for (size_t h = 0; h < trace.hosts.size(); ++h) {
    const HostSpec& host = trace.hosts[h];
    names.push_back(NodeName(static_cast<int>(h)));
    nodes.push_back({names.back(), host.gpus, host.cpu_milli, host.memory_mib});
  }
  extender->SyncNodes(nodes);
  extender->MarkSynced();

  double now_ms = 0;
  int accepted = 0;
  for (const VmRequest& vm : trace.vms) {
    clock.Advance(vm.arrival_s * 1000 - now_ms);
    now_ms = vm.arrival_s * 1000;
    const json pod = Pod("uid-" + std::to_string(vm.id), vm.name, A100().profiles[vm.profile].name,
                         fmt::format("{}m", vm.cpu_milli), fmt::format("{}Mi", vm.memory_mib));
    const size_t binds = api.bound.size();
    const std::string node = Schedule(*extender, pod, names);
    ASSERT_TRUE(extender->CheckInvariants().ok()) << extender->CheckInvariants().ToString();
    const std::optional<Slot>& want = expected[vm.id];
    if (node.empty()) {
      EXPECT_EQ(api.bound.size(), binds);
      ASSERT_FALSE(want.has_value())
          << vm.name << ": the replay places it on " << want->node << " GPU " << want->gpu
          << " start " << want->start << "; the extender keeps no node";
      continue;
    }
    ++accepted;
    ASSERT_EQ(api.bound.size(), binds + 1);
    const PodPlacement& got = api.bound.back();
    ASSERT_TRUE(want.has_value()) << vm.name << ": the replay refuses it; the extender binds "
                                  << got.node << " GPU " << got.gpu << " start " << got.start;
    ASSERT_EQ((Slot{got.node, got.gpu, got.start}), *want)
        << vm.name << ": the extender binds " << got.node << " GPU " << got.gpu << " start "
        << got.start << "; the replay places it on " << want->node << " GPU " << want->gpu
        << " start " << want->start;
    EXPECT_EQ(got.profile, A100().profiles[vm.profile].name);
    EXPECT_EQ(StateOf(*extender, got.uid).first, "bound");
  }
  EXPECT_EQ(accepted, replay_accepted);
  // Every VM bound is resident; the cluster filled and refused some.
  EXPECT_EQ(extender->Placements().size(), static_cast<size_t>(accepted));
  EXPECT_GT(accepted, 0);
  EXPECT_LT(accepted, static_cast<int>(trace.vms.size()));
  ExpectLegalAndDisjoint(extender->Placements());
}

TEST_F(SchedulerExtenderTest, DrivenLikeKubeSchedulerEveryPolicyPlacesWhereTheReplayDoes) {
  struct Shape {
    int hosts, gpus, vms, seeds;
  };
  for (const std::string& policy : BuiltinPlacers().Names()) {
    for (const Shape shape : {Shape{6, 4, 240, 3}, Shape{2, 2, 40, 100}}) {
      for (int seed = 1; seed <= shape.seeds; ++seed) {
        SCOPED_TRACE(fmt::format("policy {}, {} hosts x {} GPUs, seed {}", policy, shape.hosts,
                                 shape.gpus, seed));
        ASSERT_NO_FATAL_FAILURE(ExpectSchedulingAsReplayed(
            BusyTrace(shape.hosts, shape.gpus, shape.vms, seed), policy));
      }
    }
  }
}

// ---- 2. Filter's answers ----

TEST_F(SchedulerExtenderTest, AnUnknownProfileFailsEveryNodeNamingItAndTheKnownOnes) {
  auto extender = Make();
  const Result<json> filtered =
      AsJson(extender->Filter(Args(Pod("u1", "big", "9g.1tb"), {"node-a", "node-b"})));
  ASSERT_TRUE(filtered.ok()) << filtered.status().ToString();
  EXPECT_EQ(filtered->at("NodeNames"), json::array());
  EXPECT_EQ(filtered->at("Error"), "");
  EXPECT_TRUE(filtered->at("FailedNodes").empty());
  const json& unresolvable = filtered->at("FailedAndUnresolvableNodes");
  ASSERT_EQ(unresolvable.size(), 2u);
  for (const std::string node : {"node-a", "node-b"}) {
    const std::string reason = unresolvable.at(node);
    EXPECT_NE(reason.find("'9g.1tb'"), std::string::npos) << reason;
    for (const std::string known :
         {"1g.10gb", "1g.20gb", "2g.20gb", "3g.40gb", "4g.40gb", "7g.80gb"}) {
      EXPECT_NE(reason.find(known), std::string::npos) << known << " missing from: " << reason;
    }
    EXPECT_EQ(reason.find("+me"), std::string::npos) << reason;
  }
  EXPECT_TRUE(extender->Placements().empty());
  EXPECT_EQ(extender->counters().declined, 1);
}

TEST_F(SchedulerExtenderTest, APodWithoutATesseraResourcePassesEveryNodeUntouched) {
  auto extender = Make();
  const json pod = PodWithLimits("u1", "web", {{"cpu", "2"}});
  // Even a node Tessera does not know passes.
  const Result<json> filtered =
      AsJson(extender->Filter(Args(pod, {"node-a", "cpu-node", "node-b"})));
  ASSERT_TRUE(filtered.ok()) << filtered.status().ToString();
  EXPECT_EQ(KeptNames(*filtered), (std::vector<std::string>{"node-a", "cpu-node", "node-b"}));
  EXPECT_TRUE(filtered->at("FailedNodes").empty());
  EXPECT_TRUE(filtered->at("FailedAndUnresolvableNodes").empty());
  EXPECT_EQ(filtered->at("Error"), "");
  EXPECT_TRUE(extender->Placements().empty());
  const Result<json> scores = AsJson(extender->Prioritize(Args(pod, {"node-a", "node-b"})));
  ASSERT_TRUE(scores.ok());
  for (const json& host : *scores) EXPECT_EQ(host.at("Score"), 0) << host;
}

TEST_F(SchedulerExtenderTest, APodAskingTwoSlicesOrTwoProfilesFailsEveryNode) {
  auto extender = Make();
  json two_profiles = Pod("u2", "greedy", "1g.10gb");
  json second = two_profiles["spec"]["containers"][0];
  second["name"] = "side";
  second["resources"]["limits"] = {{"tessera.io/mig-3g.40gb", "1"}};
  two_profiles["spec"]["containers"].push_back(second);
  const std::pair<json, std::string> cases[] = {
      {PodWithLimits("u1", "twice", {{"tessera.io/mig-1g.10gb", "2"}}),
       "asks for 2 tessera.io/mig-1g.10gb slices; a pod gets exactly one"},
      {two_profiles, "asks for two MIG profiles (1g.10gb and 3g.40gb)"}};
  for (const auto& [pod, message] : cases) {
    const Result<json> filtered = AsJson(extender->Filter(Args(pod, {"node-a", "node-b"})));
    ASSERT_TRUE(filtered.ok()) << filtered.status().ToString();
    EXPECT_EQ(filtered->at("NodeNames"), json::array());
    const json& unresolvable = filtered->at("FailedAndUnresolvableNodes");
    ASSERT_EQ(unresolvable.size(), 2u) << unresolvable;
    for (const auto& [node, reason] : unresolvable.items()) {
      EXPECT_NE(reason.get<std::string>().find(message), std::string::npos) << reason;
    }
  }
  EXPECT_TRUE(extender->Placements().empty());
}

TEST_F(SchedulerExtenderTest, ANodeWithoutTheLabelIsUnresolvableAndAFullOneFails) {
  auto extender = Make();
  ASSERT_EQ(Schedule(*extender, Pod("u1", "whole", "7g.80gb"), {"node-a"}), "node-a");
  const Result<json> filtered = AsJson(
      extender->Filter(Args(Pod("u2", "small", "1g.10gb"), {"node-a", "cpu-node", "node-b"})));
  ASSERT_TRUE(filtered.ok()) << filtered.status().ToString();
  EXPECT_EQ(KeptNames(*filtered), std::vector<std::string>{"node-b"});
  const json& unresolvable = filtered->at("FailedAndUnresolvableNodes");
  ASSERT_EQ(unresolvable.size(), 1u);
  EXPECT_NE(unresolvable.at("cpu-node").get<std::string>().find(kGpusLabel), std::string::npos);
  const json& failed = filtered->at("FailedNodes");
  ASSERT_EQ(failed.size(), 1u);
  EXPECT_NE(failed.at("node-a").get<std::string>().find("no free 1g.10gb placement"),
            std::string::npos)
      << failed;
}

TEST_F(SchedulerExtenderTest, TheNodeListFormAnswersTheKeptNodeObjects) {
  auto extender = Make();
  ASSERT_EQ(Schedule(*extender, Pod("u1", "whole", "7g.80gb"), {"node-a"}), "node-a");
  json list = {{"kind", "NodeList"}, {"apiVersion", "v1"}, {"metadata", json::object()}};
  for (const std::string name : {"node-a", "node-b"}) {
    list["items"].push_back({{"metadata", {{"name", name}, {"labels", {{kGpusLabel, "1"}}}}},
                             {"status", {{"allocatable", {{"cpu", "96"}}}}}});
  }
  const Result<json> filtered =
      AsJson(extender->Filter(json{{"Pod", Pod("u2", "half", "3g.40gb")}, {"Nodes", list}}.dump()));
  ASSERT_TRUE(filtered.ok()) << filtered.status().ToString();
  EXPECT_TRUE(filtered->at("NodeNames").is_null()) << *filtered;
  const json& nodes = filtered->at("Nodes");
  EXPECT_EQ(nodes.at("kind"), "NodeList");
  EXPECT_EQ(nodes.at("items"), json::array({list["items"][1]}));
  EXPECT_EQ(filtered->at("FailedNodes").size(), 1u);
  EXPECT_EQ(StateOf(*extender, "u2"),
            std::make_pair(std::string("reserved"), std::string("node-b")));
}

TEST_F(SchedulerExtenderTest, MalformedBodiesAreInvalidArguments) {
  auto extender = Make();
  const json pod = Pod("u1", "p", "1g.10gb");
  json no_pod = json::parse(R"({"NodeNames": ["node-a"]})");
  json no_nodes = {{"Pod", pod}};
  json names_not_array = json::parse(R"({"NodeNames": "node-a"})");
  names_not_array["Pod"] = pod;
  json nameless_node = json::parse(R"({"Nodes": {"items": [{"metadata": 1}]}})");
  nameless_node["Pod"] = pod;
  for (const json& args : {json::array(), no_pod, no_nodes, names_not_array, nameless_node}) {
    EXPECT_EQ(AsJson(extender->Filter(args.dump())).status().code(), StatusCode::kInvalidArgument)
        << args;
    EXPECT_EQ(AsJson(extender->Prioritize(args.dump())).status().code(),
              StatusCode::kInvalidArgument)
        << args;
  }
  json bind = json::parse(BindArgs(pod, "node-a"));
  bind.erase("PodUID");
  EXPECT_EQ(AsJson(extender->Bind(bind.dump())).status().code(), StatusCode::kInvalidArgument);
  // Not JSON, or JSON nested deeper than any body of Tessera's.
  const std::string deep = std::string(100'000, '[') + std::string(100'000, ']');
  for (const std::string& text : {std::string("{\"Pod\": "), deep}) {
    const Status filtered = extender->Filter(text).status();
    EXPECT_EQ(filtered.code(), StatusCode::kInvalidArgument);
    EXPECT_TRUE(filtered.message().starts_with("invalid JSON") ||
                filtered.message().find("nested deeper") != std::string::npos)
        << filtered.ToString();
    EXPECT_EQ(extender->Bind(text).status().code(), StatusCode::kInvalidArgument);
  }
  EXPECT_TRUE(extender->Placements().empty());
}

// ---- 3. Before the first lists ----

TEST_F(SchedulerExtenderTest, BeforeMarkSyncedFilterAnswersAnErrorAndReservesNothing) {
  ExtenderOptions options;
  options.clock = &clock_;
  auto extender = SchedulerExtender::Create(options, api_).value();
  extender->SyncNodes({Node("node-a", 1)});
  EXPECT_FALSE(extender->synced());
  const json pod = Pod("u1", "early", "1g.10gb");
  const Result<json> filtered = AsJson(extender->Filter(Args(pod, {"node-a"})));
  ASSERT_TRUE(filtered.ok()) << filtered.status().ToString();
  EXPECT_NE(filtered->at("Error").get<std::string>().find("still reading"), std::string::npos);
  EXPECT_EQ(filtered->at("NodeNames"), json::array());
  EXPECT_TRUE(extender->Placements().empty());
  extender->MarkSynced();
  EXPECT_EQ(KeptNames(AsJson(extender->Filter(Args(pod, {"node-a"}))).value()),
            std::vector<std::string>{"node-a"});
  EXPECT_EQ(extender->Placements().size(), 1u);
}

// ---- 4. Reservations ----

TEST_F(SchedulerExtenderTest, AFilterReservesItsSlotForTheNextPodsFilter) {
  auto extender = Make();
  const Result<json> first =
      AsJson(extender->Filter(Args(Pod("u1", "a", "7g.80gb"), {"node-a", "node-b"})));
  ASSERT_TRUE(first.ok());
  EXPECT_EQ(KeptNames(*first), (std::vector<std::string>{"node-a", "node-b"}));
  ASSERT_EQ(extender->Placements().size(), 1u);
  EXPECT_EQ(extender->Placements()[0].node, "node-a");
  EXPECT_EQ(StateOf(*extender, "u1"),
            std::make_pair(std::string("reserved"), std::string("node-a")));
  const Result<json> second =
      AsJson(extender->Filter(Args(Pod("u2", "b", "7g.80gb"), {"node-a", "node-b"})));
  ASSERT_TRUE(second.ok());
  EXPECT_EQ(KeptNames(*second), std::vector<std::string>{"node-b"});
  EXPECT_TRUE(second->at("FailedNodes").contains("node-a"));
  EXPECT_EQ(StateOf(*extender, "u2").second, "node-b");
  // A third finds no node; nothing is reserved for it.
  const Result<json> third =
      AsJson(extender->Filter(Args(Pod("u3", "c", "7g.80gb"), {"node-a", "node-b"})));
  ASSERT_TRUE(third.ok());
  EXPECT_EQ(third->at("NodeNames"), json::array());
  EXPECT_EQ(third->at("FailedNodes").size(), 2u);
  EXPECT_EQ(extender->Placements().size(), 2u);
  EXPECT_TRUE(extender->CheckInvariants().ok());
}

TEST_F(SchedulerExtenderTest, AReservationNotBoundWithinItsTtlIsFreed) {
  auto extender = Make();
  ASSERT_TRUE(AsJson(extender->Filter(Args(Pod("u1", "a", "7g.80gb"), {"node-a", "node-b"}))).ok());
  clock_.Advance(20'000);
  ASSERT_TRUE(AsJson(extender->Filter(Args(Pod("u2", "b", "7g.80gb"), {"node-a", "node-b"}))).ok());
  EXPECT_EQ(StateOf(*extender, "u2").second, "node-b");
  clock_.Advance(15'000);  // u1's 30 s are over, u2's are not
  const Result<json> third =
      AsJson(extender->Filter(Args(Pod("u3", "c", "7g.80gb"), {"node-a", "node-b"})));
  ASSERT_TRUE(third.ok());
  EXPECT_EQ(KeptNames(*third), std::vector<std::string>{"node-a"});
  EXPECT_EQ(extender->counters().reservations_expired, 1);
  EXPECT_EQ(StateOf(*extender, "u1").first, "");
  EXPECT_EQ(StateOf(*extender, "u3").second, "node-a");
  EXPECT_TRUE(extender->CheckInvariants().ok());
  // A Prioritize after its reservation expired places the pod again.
  clock_.Advance(31'000);
  const json late = Pod("u3", "c", "7g.80gb");
  const Result<json> scores = AsJson(extender->Prioritize(Args(late, {"node-a", "node-b"})));
  ASSERT_TRUE(scores.ok());
  EXPECT_EQ(*scores, json::parse(R"([{"Host":"node-a","Score":10},{"Host":"node-b","Score":0}])"));
  EXPECT_EQ(StateOf(*extender, "u3"),
            std::make_pair(std::string("reserved"), std::string("node-a")));
  EXPECT_EQ(extender->counters().reservations_expired, 3);
  const Result<json> bound = AsJson(extender->Bind(BindArgs(late, "node-a")));
  ASSERT_TRUE(bound.ok());
  EXPECT_EQ(bound->at("Error"), "");
  EXPECT_EQ(api_.get_pod_calls, 0);  // bound from the fresh reservation
}

TEST_F(SchedulerExtenderTest, ARefilterOfThePodReplacesItsReservation) {
  auto extender = Make();
  const json pod = Pod("u1", "a", "7g.80gb");
  ASSERT_TRUE(AsJson(extender->Filter(Args(pod, {"node-a", "node-b"}))).ok());
  ASSERT_TRUE(AsJson(extender->Filter(Args(pod, {"node-a", "node-b"}))).ok());
  ASSERT_EQ(extender->Placements().size(), 1u);
  EXPECT_EQ(extender->Placements()[0].node, "node-a");
  const Result<json> moved = AsJson(extender->Filter(Args(pod, {"node-b"})));
  ASSERT_TRUE(moved.ok());
  EXPECT_EQ(KeptNames(*moved), std::vector<std::string>{"node-b"});
  ASSERT_EQ(extender->Placements().size(), 1u);
  EXPECT_EQ(extender->Placements()[0].node, "node-b");
  EXPECT_TRUE(extender->CheckInvariants().ok());
  // node-a is free again.
  EXPECT_EQ(Schedule(*extender, Pod("u2", "b", "7g.80gb"), {"node-a", "node-b"}), "node-a");
}

// ---- 5. Bind ----

TEST_F(SchedulerExtenderTest, BindToTheReservedNodeCreatesTheBindingWithTheSlot) {
  auto extender = Make("ff", {Node("node-a", 1)});
  const json first = Pod("u1", "a", "3g.40gb", "2500m", "8Gi");
  const json second = Pod("u2", "b", "3g.40gb");
  ASSERT_EQ(Schedule(*extender, first, {"node-a"}), "node-a");
  ASSERT_EQ(Schedule(*extender, second, {"node-a"}), "node-a");
  ASSERT_EQ(api_.bound.size(), 2u);
  EXPECT_EQ(api_.get_pod_calls, 0);  // the reservations hold the pods
  const PodPlacement& a = api_.bound[0];
  EXPECT_EQ(a.uid, "u1");
  EXPECT_EQ(a.ns, kNamespace);
  EXPECT_EQ(a.name, "a");
  EXPECT_EQ(a.node, "node-a");
  EXPECT_EQ(a.gpu, 0);
  EXPECT_EQ(a.profile, "3g.40gb");
  EXPECT_DOUBLE_EQ(a.cpu_milli, 2500);
  EXPECT_DOUBLE_EQ(a.memory_mib, 8192);
  // 3g.40gb starts at 0 or 4: the two pods share the GPU.
  EXPECT_EQ((std::set<int>{api_.bound[0].start, api_.bound[1].start}), (std::set<int>{0, 4}));
  EXPECT_EQ(StateOf(*extender, "u1").first, "bound");
  EXPECT_EQ(StateOf(*extender, "u2").first, "bound");
  EXPECT_EQ(extender->counters().binds, 2);
  ExpectLegalAndDisjoint(extender->Placements());
}

TEST_F(SchedulerExtenderTest, BindToAnotherNodePlacesThePodThereByThePolicy) {
  auto extender = Make();
  const json pod = Pod("u1", "a", "7g.80gb");
  api_.pods[std::string(kNamespace) + "/a"] = pod;
  ASSERT_TRUE(AsJson(extender->Filter(Args(pod, {"node-a", "node-b"}))).ok());
  EXPECT_EQ(StateOf(*extender, "u1").second, "node-a");
  const Result<json> bound = AsJson(extender->Bind(BindArgs(pod, "node-b")));
  ASSERT_TRUE(bound.ok());
  EXPECT_EQ(bound->at("Error"), "");
  EXPECT_EQ(api_.get_pod_calls, 1);
  ASSERT_EQ(api_.bound.size(), 1u);
  EXPECT_EQ(api_.bound[0].node, "node-b");
  EXPECT_EQ(StateOf(*extender, "u1"), std::make_pair(std::string("bound"), std::string("node-b")));
  ASSERT_EQ(extender->Placements().size(), 1u);  // node-a's reservation is gone
  EXPECT_EQ(Schedule(*extender, Pod("u2", "b", "7g.80gb"), {"node-a", "node-b"}), "node-a");
}

TEST_F(SchedulerExtenderTest, BindWithoutAReservationOrRoomAnswersWhy) {
  auto extender = Make();
  const json pod = Pod("u1", "a", "7g.80gb");
  // The API server does not know the pod.
  Result<json> bound = AsJson(extender->Bind(BindArgs(pod, "node-a")));
  ASSERT_TRUE(bound.ok());
  EXPECT_NE(bound->at("Error").get<std::string>().find("pods \"a\" not found"), std::string::npos)
      << *bound;
  // No room on the node.
  api_.pods[std::string(kNamespace) + "/a"] = pod;
  ASSERT_EQ(Schedule(*extender, Pod("u2", "b", "7g.80gb"), {"node-a"}), "node-a");
  bound = AsJson(extender->Bind(BindArgs(pod, "node-a")));
  ASSERT_TRUE(bound.ok());
  EXPECT_NE(bound->at("Error").get<std::string>().find("no free 7g.80gb placement on node node-a"),
            std::string::npos)
      << *bound;
  // Another UID under the same name.
  json renamed = json::parse(BindArgs(pod, "node-b"));
  renamed["PodUID"] = "u9";
  bound = AsJson(extender->Bind(renamed.dump()));
  ASSERT_TRUE(bound.ok());
  EXPECT_NE(bound->at("Error").get<std::string>().find("another UID"), std::string::npos);
  EXPECT_EQ(extender->counters().bind_failures, 3);
  EXPECT_EQ(extender->Placements().size(), 1u);
  EXPECT_TRUE(extender->CheckInvariants().ok());
}

TEST_F(SchedulerExtenderTest, AFailedBindingAnswersTheApiErrorAndFreesTheSlot) {
  auto extender = Make("ff", {Node("node-a", 1)});
  const json pod = Pod("u1", "a", "7g.80gb");
  ASSERT_TRUE(AsJson(extender->Filter(Args(pod, {"node-a"}))).ok());
  api_.bind_status = Status::IoError("Post \"https://api/binding\": connection refused");
  const Result<json> bound = AsJson(extender->Bind(BindArgs(pod, "node-a")));
  ASSERT_TRUE(bound.ok());
  const std::string error = bound->at("Error");
  EXPECT_NE(error.find("connection refused"), std::string::npos) << error;
  EXPECT_NE(error.find(std::string(kNamespace) + "/a"), std::string::npos) << error;
  EXPECT_TRUE(extender->Placements().empty());
  EXPECT_EQ(extender->counters().bind_failures, 1);
  EXPECT_TRUE(extender->CheckInvariants().ok());
  // The scheduler retries the pod; the slot is there for it.
  api_.bind_status = Status::Ok();
  EXPECT_EQ(Schedule(*extender, pod, {"node-a"}), "node-a");
}

TEST_F(SchedulerExtenderTest, BindOfABoundPodIsIdempotentOnItsNodeAndRefusedElsewhere) {
  auto extender = Make();
  const json pod = Pod("u1", "a", "1g.10gb");
  ASSERT_EQ(Schedule(*extender, pod, {"node-a", "node-b"}), "node-a");
  Result<json> again = AsJson(extender->Bind(BindArgs(pod, "node-a")));
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(again->at("Error"), "");
  EXPECT_EQ(api_.bound.size(), 1u);
  again = AsJson(extender->Bind(BindArgs(pod, "node-b")));
  ASSERT_TRUE(again.ok());
  EXPECT_NE(again->at("Error").get<std::string>().find("already bound to node-a"),
            std::string::npos);
  EXPECT_EQ(api_.bound.size(), 1u);
  // Its filter now answers an Error: it is not the scheduler's to place.
  const Result<json> filtered = AsJson(extender->Filter(Args(pod, {"node-a", "node-b"})));
  ASSERT_TRUE(filtered.ok());
  EXPECT_NE(filtered->at("Error").get<std::string>().find("already bound"), std::string::npos);
  EXPECT_EQ(extender->Placements().size(), 1u);
}

// The API call runs outside the lock: a node change in the meantime (the
// watch's UpsertNode rebuilds the cluster) must not lose the binding pod.
TEST_F(SchedulerExtenderTest, ANodeChangeWhileTheApiBindsKeepsThePod) {
  auto extender = Make();
  // A pod come and gone: the rebuild renumbers the requests of the others.
  ASSERT_TRUE(AsJson(extender->Filter(Args(Pod("gone", "gone", "1g.10gb"), {"node-a"}))).ok());
  extender->Forget("gone");
  ASSERT_TRUE(AsJson(extender->Filter(Args(Pod("u0", "other", "1g.10gb"), {"node-a"}))).ok());
  const json pod = Pod("u1", "a", "7g.80gb");
  int changes = 0;
  api_.during_bind = [&] {
    EXPECT_EQ(StateOf(*extender, api_.bound.back().uid).first, "binding");
    extender->UpsertNode(Node("node-c", 1, 1000.0 * ++changes));
  };
  ASSERT_EQ(Schedule(*extender, pod, {"node-b"}), "node-b");
  EXPECT_EQ(StateOf(*extender, "u1"), std::make_pair(std::string("bound"), std::string("node-b")));
  EXPECT_EQ(extender->counters().bind_failures, 0);

  // A binding that fails while the node set changes frees its slot.
  const json next = Pod("u2", "b", "3g.40gb");
  api_.bind_status = Status::IoError("etcd timeout");
  ASSERT_TRUE(AsJson(extender->Filter(Args(next, {"node-a"}))).ok());
  const Result<json> bound = AsJson(extender->Bind(BindArgs(next, "node-a")));
  ASSERT_TRUE(bound.ok());
  EXPECT_NE(bound->at("Error").get<std::string>().find("etcd timeout"), std::string::npos)
      << *bound;
  EXPECT_EQ(StateOf(*extender, "u2").first, "");
  EXPECT_TRUE(extender->CheckInvariants().ok()) << extender->CheckInvariants().ToString();
  api_.during_bind = nullptr;
  api_.bind_status = Status::Ok();
  EXPECT_EQ(Schedule(*extender, next, {"node-a"}), "node-a");
  EXPECT_EQ(extender->Placements().size(), 3u);
}

// ---- 6. Restarts and the watch ----

TEST_F(SchedulerExtenderTest, ARestartedExtenderRebuildsThePlacementsFromTheBoundPods) {
  const std::vector<KubeNode> nodes = {Node("node-a", 2), Node("node-b", 2), Node("node-c", 1)};
  const std::vector<std::string> names = {"node-a", "node-b", "node-c"};
  const char* profiles[] = {"1g.10gb", "3g.40gb", "2g.20gb", "7g.80gb", "1g.20gb", "4g.40gb"};
  for (const std::string& policy : BuiltinPlacers().Names()) {
    SCOPED_TRACE(policy);
    auto first = Make(policy, nodes);
    for (int i = 0; i < 10; ++i) {
      Schedule(*first, Pod("u" + std::to_string(i), "p" + std::to_string(i), profiles[i % 6]),
               names);
    }
    const std::vector<PodPlacement> before = first->Placements();
    ASSERT_GE(before.size(), 5u);

    FakeKubeApi api;
    ExtenderOptions options;
    options.policy = policy;
    options.clock = &clock_;
    auto second = SchedulerExtender::Create(options, api).value();
    second->SyncNodes(nodes);
    second->SyncBoundPods(before);
    second->MarkSynced();
    const std::vector<PodPlacement> after = second->Placements();
    ASSERT_EQ(after.size(), before.size());
    for (size_t i = 0; i < after.size(); ++i) {
      EXPECT_EQ(after[i].uid, before[i].uid);
      EXPECT_EQ(std::tie(after[i].ns, after[i].name, after[i].node, after[i].gpu, after[i].start,
                         after[i].profile),
                std::tie(before[i].ns, before[i].name, before[i].node, before[i].gpu,
                         before[i].start, before[i].profile))
          << after[i].uid;
      EXPECT_EQ(StateOf(*second, after[i].uid).first, "bound");
    }
    EXPECT_EQ(second->counters().adopted, static_cast<long long>(before.size()));
    // The next pod gets a free, legal slot.
    const std::string node = Schedule(*second, Pod("new", "new", "1g.10gb"), names);
    EXPECT_FALSE(node.empty());
    EXPECT_EQ(second->Placements().size(), before.size() + 1);
    ExpectLegalAndDisjoint(second->Placements());
    EXPECT_TRUE(second->CheckInvariants().ok()) << second->CheckInvariants().ToString();
  }
}

PodPlacement Bound(const std::string& uid, const std::string& node, int gpu, int start,
                   const std::string& profile, double cpu_milli = 1000) {
  return {uid, kNamespace, "pod-" + uid, node, gpu, start, profile, cpu_milli, 1024};
}

TEST_F(SchedulerExtenderTest, AdoptRefusesAConflictingOrIllegalSlotAndChangesNothing) {
  auto extender = Make();
  ASSERT_TRUE(extender->Adopt(Bound("u1", "node-a", 0, 0, "3g.40gb")).ok());
  ASSERT_TRUE(extender->Adopt(Bound("u2", "node-a", 0, 4, "3g.40gb")).ok());
  const std::vector<PodPlacement> before = extender->Placements();
  const json state = extender->StateJson()["nodes"];
  const PodPlacement refused[] = {
      Bound("u3", "node-a", 0, 0, "1g.10gb"),   // taken by u1
      Bound("u3", "node-b", 0, 2, "3g.40gb"),   // 3g.40gb starts at 0 or 4
      Bound("u3", "node-b", 1, 0, "1g.10gb"),   // node-b has one GPU
      Bound("u3", "node-b", 0, 0, "9g.1tb"),    // no such profile
      Bound("u1", "node-a", 0, 4, "3g.40gb"),   // u1 moved onto u2
      Bound("u1", "node-b", 0, 3, "4g.40gb"),   // u1 moved to an illegal start
      Bound("u1", "node-b", 3, 0, "1g.10gb")};  // u1 moved beyond node-b's GPUs
  for (const PodPlacement& pod : refused) {
    const Status adopted = extender->Adopt(pod);
    EXPECT_EQ(adopted.code(), StatusCode::kInvalidArgument)
        << pod.uid << " " << pod.node << " " << pod.gpu << " " << pod.start;
    EXPECT_EQ(extender->StateJson()["nodes"], state) << adopted.ToString();
    EXPECT_TRUE(extender->CheckInvariants().ok()) << extender->CheckInvariants().ToString();
  }
  EXPECT_EQ(extender->Placements().size(), before.size());
  EXPECT_EQ(extender->counters().adopt_conflicts, 7);
  // A reservation that a refused Adopt tried to move stays, and expires.
  ASSERT_TRUE(AsJson(extender->Filter(Args(Pod("u4", "d", "1g.10gb"), {"node-b"}))).ok());
  EXPECT_EQ(extender->Adopt(Bound("u4", "node-a", 0, 0, "1g.10gb")).code(),
            StatusCode::kInvalidArgument);
  EXPECT_EQ(StateOf(*extender, "u4"),
            std::make_pair(std::string("reserved"), std::string("node-b")));
  clock_.Advance(31'000);
  ASSERT_TRUE(AsJson(extender->Filter(Args(Pod("u5", "e", "1g.10gb"), {"node-b"}))).ok());
  EXPECT_EQ(StateOf(*extender, "u4").first, "");
  EXPECT_EQ(extender->counters().reservations_expired, 1);
  extender->Forget("u5");
  // The annotations are the truth: a legal move is taken.
  ASSERT_TRUE(extender->Adopt(Bound("u1", "node-b", 0, 0, "3g.40gb")).ok());
  EXPECT_EQ(StateOf(*extender, "u1").second, "node-b");
}

TEST_F(SchedulerExtenderTest, APodOnAnUnknownNodeWaitsForIt) {
  auto extender = Make();
  ASSERT_TRUE(extender->Adopt(Bound("u1", "node-z", 1, 4, "3g.40gb")).ok());
  ASSERT_TRUE(extender->Adopt(Bound("u2", "node-z", 1, 4, "1g.10gb")).ok());  // u1's slot
  EXPECT_TRUE(extender->Placements().empty());
  EXPECT_EQ(extender->StateJson()["waiting_for_node"], 2);
  extender->UpsertNode(Node("node-z", 2));
  ASSERT_EQ(extender->Placements().size(), 1u);
  const PodPlacement placed = extender->Placements()[0];
  EXPECT_EQ(std::tie(placed.uid, placed.node, placed.gpu, placed.start),
            std::make_tuple(std::string("u1"), std::string("node-z"), 1, 4));
  EXPECT_EQ(StateOf(*extender, "u1").first, "bound");
  // The second to claim the slot is refused once its node is there.
  EXPECT_EQ(extender->StateJson()["waiting_for_node"], 0);
  EXPECT_EQ(extender->counters().adopt_conflicts, 1);
  EXPECT_TRUE(extender->CheckInvariants().ok());
}

TEST_F(SchedulerExtenderTest, ANodeRemovedAndAddedAgainKeepsItsBoundPods) {
  auto extender = Make();
  ASSERT_EQ(Schedule(*extender, Pod("u1", "a", "3g.40gb"), {"node-a"}), "node-a");
  ASSERT_TRUE(AsJson(extender->Filter(Args(Pod("u2", "b", "3g.40gb"), {"node-a"}))).ok());
  ASSERT_TRUE(AsJson(extender->Filter(Args(Pod("u3", "c", "3g.40gb"), {"node-b"}))).ok());
  const PodPlacement bound = api_.bound.at(0);
  extender->RemoveNode("node-a");
  // u2's reservation on node-a is dropped; u3's on node-b stays.
  EXPECT_EQ(StateOf(*extender, "u1").first, "");
  EXPECT_EQ(StateOf(*extender, "u2").first, "");
  EXPECT_EQ(StateOf(*extender, "u3"),
            std::make_pair(std::string("reserved"), std::string("node-b")));
  EXPECT_TRUE(extender->CheckInvariants().ok());
  extender->UpsertNode(Node("node-a", 1));
  EXPECT_EQ(StateOf(*extender, "u1"), std::make_pair(std::string("bound"), std::string("node-a")));
  const std::vector<PodPlacement> after = extender->Placements();
  ASSERT_EQ(after.size(), 2u);
  EXPECT_EQ(std::tie(after[0].uid, after[0].gpu, after[0].start),
            std::tie(bound.uid, bound.gpu, bound.start));
  EXPECT_TRUE(extender->CheckInvariants().ok());
  // A node sorted before the others moves every host index; no pod moves.
  extender->UpsertNode(Node("node-0", 1));
  EXPECT_EQ(StateOf(*extender, "u1"), std::make_pair(std::string("bound"), std::string("node-a")));
  EXPECT_EQ(StateOf(*extender, "u3"),
            std::make_pair(std::string("reserved"), std::string("node-b")));
  EXPECT_TRUE(extender->CheckInvariants().ok());
}

// Adopt refuses a slot that is illegal or taken, never a bound pod for the
// CPU or RAM it asks: the pod runs on its GPU whatever the node states.
TEST_F(SchedulerExtenderTest, ANodeWhoseCpuShrinksKeepsItsBoundPods) {
  auto extender = Make("ff", {Node("node-a", 1, 8000)});
  ASSERT_EQ(Schedule(*extender, Pod("u1", "a", "3g.40gb", "6"), {"node-a"}), "node-a");
  const PodPlacement bound = api_.bound.at(0);
  extender->UpsertNode(Node("node-a", 1, 4000));
  EXPECT_EQ(StateOf(*extender, "u1"), std::make_pair(std::string("bound"), std::string("node-a")));
  EXPECT_EQ(extender->counters().adopt_conflicts, 0);
  ASSERT_TRUE(extender->Adopt(Bound("u2", "node-a", 0, 4 - bound.start, "3g.40gb", 9000)).ok());
  EXPECT_EQ(extender->Placements().size(), 2u);
  EXPECT_TRUE(extender->CheckInvariants().ok()) << extender->CheckInvariants().ToString();
  // Their GPU is full.
  EXPECT_EQ(Schedule(*extender, Pod("u3", "c", "1g.10gb"), {"node-a"}), "");
  ExpectLegalAndDisjoint(extender->Placements());
}

TEST_F(SchedulerExtenderTest, ForgetFreesTheSlot) {
  auto extender = Make("ff", {Node("node-a", 1)});
  ASSERT_EQ(Schedule(*extender, Pod("u1", "a", "7g.80gb"), {"node-a"}), "node-a");
  EXPECT_EQ(Schedule(*extender, Pod("u2", "b", "7g.80gb"), {"node-a"}), "");
  extender->Forget("u1");
  EXPECT_TRUE(extender->Placements().empty());
  EXPECT_TRUE(extender->CheckInvariants().ok());
  EXPECT_EQ(Schedule(*extender, Pod("u2", "b", "7g.80gb"), {"node-a"}), "node-a");
  extender->Forget("no-such-pod");
  EXPECT_EQ(extender->Placements().size(), 1u);
}

// Pods that come and go leave requests in the policy's trace; past 100,000
// of them, over four per live pod, a rebuild drops the dead ones and keeps
// every live placement.
TEST_F(SchedulerExtenderTest, ChurnDoesNotGrowTheTraceWithoutBound) {
  auto extender = Make("grmu", {Node("node-a", 2), Node("node-b", 2)});
  ASSERT_EQ(Schedule(*extender, Pod("kept", "kept", "3g.40gb"), {"node-a", "node-b"}), "node-a");
  for (int i = 0; i < 100'010; ++i) {
    const std::string uid = "churn-" + std::to_string(i);
    ASSERT_TRUE(extender->Filter(Args(Pod(uid, uid, "1g.10gb"), {"node-a", "node-b"})).ok());
    extender->Forget(uid);
  }
  const json state = extender->StateJson();
  EXPECT_LT(state["trace_requests"].get<int>(), 100'000);
  ASSERT_EQ(extender->Placements().size(), 1u);
  EXPECT_EQ(extender->Placements()[0].uid, "kept");
  EXPECT_TRUE(extender->CheckInvariants().ok());
}

TEST_F(SchedulerExtenderTest, SyncBoundPodsForgetsBoundPodsMissingFromTheListButKeepsReservations) {
  auto extender = Make("ff", {Node("node-a", 1), Node("node-b", 1), Node("node-c", 1)});
  ASSERT_EQ(Schedule(*extender, Pod("u1", "a", "1g.10gb"), {"node-a"}), "node-a");
  ASSERT_EQ(Schedule(*extender, Pod("u2", "b", "1g.10gb"), {"node-a"}), "node-a");
  ASSERT_TRUE(AsJson(extender->Filter(Args(Pod("u3", "c", "1g.10gb"), {"node-b"}))).ok());
  ASSERT_TRUE(extender->Adopt(Bound("u4", "node-z", 0, 0, "1g.10gb")).ok());  // waits
  std::vector<PodPlacement> listed;
  for (const PodPlacement& p : extender->Placements()) {
    if (p.uid == "u2") listed.push_back(p);
  }
  listed.push_back(Bound("u5", "node-c", 0, 6, "1g.10gb"));
  extender->SyncBoundPods(listed);
  EXPECT_EQ(StateOf(*extender, "u1").first, "");
  EXPECT_EQ(StateOf(*extender, "u2").first, "bound");
  EXPECT_EQ(StateOf(*extender, "u3").first, "reserved");
  EXPECT_EQ(StateOf(*extender, "u5").first, "bound");
  EXPECT_EQ(extender->StateJson()["waiting_for_node"], 0);  // u4 is gone too
  extender->UpsertNode(Node("node-z", 1));
  EXPECT_EQ(StateOf(*extender, "u4").first, "");
  EXPECT_TRUE(extender->CheckInvariants().ok());
}

// ---- 7. Node and Pod objects ----

TEST(KubeObjectsTest, ParseKubeQuantity) {
  const std::pair<const char*, double> good[] = {
      {"500m", 0.5},   {"4", 4},        {"16Gi", 16.0 * (1 << 30)}, {"1.5G", 1.5e9},
      {"1e3", 1000},   {"0", 0},        {"100Ki", 102400},          {"2k", 2000},
      {"250u", 25e-5}, {"3Mi", 3 << 20}};
  for (const auto& [text, value] : good) {
    const Result<double> parsed = ParseKubeQuantity(text, "cpu");
    ASSERT_TRUE(parsed.ok()) << text << ": " << parsed.status().ToString();
    EXPECT_DOUBLE_EQ(*parsed, value) << text;
  }
  for (const char* bad : {"", "-1", "12x", "m", "Gi", "NaN", "inf", "1e400", "1 Gi", "0x10"}) {
    const Result<double> parsed = ParseKubeQuantity(bad, "spec.memory");
    ASSERT_FALSE(parsed.ok()) << bad << " parsed as " << *parsed;
    EXPECT_EQ(parsed.status().code(), StatusCode::kInvalidArgument);
    EXPECT_NE(parsed.status().message().find("spec.memory: not a Kubernetes quantity"),
              std::string::npos)
        << parsed.status().message();
  }
}

json NodeObject(const std::string& name, std::optional<std::string> gpus) {
  json node = {{"metadata", {{"name", name}, {"labels", {{"kubernetes.io/os", "linux"}}}}}};
  if (gpus) node["metadata"]["labels"][kGpusLabel] = *gpus;
  return node;
}

TEST(KubeObjectsTest, KubeNodeFromObject) {
  Result<std::optional<KubeNode>> node = KubeNodeFromObject(NodeObject("cpu-1", std::nullopt));
  ASSERT_TRUE(node.ok());
  EXPECT_FALSE(node->has_value());

  json unquoted = NodeObject("gpu-1", std::nullopt);
  unquoted["metadata"]["labels"][kGpusLabel] = 4;  // label values are strings
  for (const json& object :
       {NodeObject("gpu-1", "four"), NodeObject("gpu-1", "-1"), NodeObject("gpu-1", "2.5"),
        NodeObject("gpu-1", "70000"), NodeObject("gpu-1", ""), unquoted}) {
    node = KubeNodeFromObject(object);
    ASSERT_FALSE(node.ok()) << object;
    EXPECT_NE(node.status().message().find("gpu-1"), std::string::npos) << node.status().message();
    EXPECT_NE(node.status().message().find(kGpusLabel), std::string::npos)
        << node.status().message();
  }

  json object = NodeObject("gpu-1", "4");
  object["status"]["capacity"] = {{"cpu", "64"}, {"memory", "512Gi"}};
  object["status"]["allocatable"] = {{"cpu", "63500m"}, {"memory", "500Gi"}, {"pods", "110"}};
  node = KubeNodeFromObject(object);
  ASSERT_TRUE(node.ok() && node->has_value()) << node.status().ToString();
  EXPECT_EQ((*node)->name, "gpu-1");
  EXPECT_EQ((*node)->gpus, 4);
  EXPECT_DOUBLE_EQ((*node)->cpu_milli, 63500);
  EXPECT_DOUBLE_EQ((*node)->memory_mib, 500 * 1024);

  object["status"].erase("allocatable");
  node = KubeNodeFromObject(object);
  ASSERT_TRUE(node.ok() && node->has_value());
  EXPECT_DOUBLE_EQ((*node)->cpu_milli, 64000);
  EXPECT_DOUBLE_EQ((*node)->memory_mib, 512 * 1024);

  object["status"]["capacity"].erase("cpu");
  node = KubeNodeFromObject(object);
  ASSERT_TRUE(node.ok() && node->has_value());
  EXPECT_EQ((*node)->cpu_milli, std::numeric_limits<double>::infinity());
  EXPECT_DOUBLE_EQ((*node)->memory_mib, 512 * 1024);

  object["status"]["capacity"]["memory"] = "lots";
  node = KubeNodeFromObject(object);
  ASSERT_FALSE(node.ok());
  EXPECT_NE(node.status().message().find("status.capacity.memory"), std::string::npos)
      << node.status().message();

  object.erase("status");
  node = KubeNodeFromObject(object);
  ASSERT_TRUE(node.ok() && node->has_value());
  EXPECT_TRUE(std::isinf((*node)->cpu_milli) && std::isinf((*node)->memory_mib));

  EXPECT_FALSE(KubeNodeFromObject(json{{"metadata", json::object()}}).ok());
  EXPECT_FALSE(KubeNodeFromObject(json::array()).ok());
}

TEST(KubeObjectsTest, PodSliceFromObject) {
  json pod = Pod("u1", "train", "3g.40gb", "1500m", "6Gi");
  Result<std::optional<PodSlice>> slice = PodSliceFromObject(pod);
  ASSERT_TRUE(slice.ok() && slice->has_value()) << slice.status().ToString();
  EXPECT_EQ((*slice)->uid, "u1");
  EXPECT_EQ((*slice)->ns, kNamespace);
  EXPECT_EQ((*slice)->name, "train");
  EXPECT_EQ((*slice)->profile, "3g.40gb");
  EXPECT_DOUBLE_EQ((*slice)->cpu_milli, 1500);
  EXPECT_DOUBLE_EQ((*slice)->memory_mib, 6144);

  // A limit is the request: both written count once.
  json& resources = pod["spec"]["containers"][0]["resources"];
  resources["requests"]["tessera.io/mig-3g.40gb"] = "1";
  slice = PodSliceFromObject(pod);
  ASSERT_TRUE(slice.ok() && slice->has_value()) << slice.status().ToString();
  EXPECT_EQ((*slice)->profile, "3g.40gb");

  // A request alone counts, with no limits or with limits of other resources.
  resources.erase("limits");
  slice = PodSliceFromObject(pod);
  ASSERT_TRUE(slice.ok() && slice->has_value()) << slice.status().ToString();
  resources["limits"] = {{"cpu", "2"}, {"memory", "8Gi"}};
  slice = PodSliceFromObject(pod);
  ASSERT_TRUE(slice.ok() && slice->has_value()) << slice.status().ToString();
  EXPECT_EQ((*slice)->profile, "3g.40gb");

  // CPU and memory requests are summed over the containers.
  json sidecar = {{"name", "side"},
                  {"resources", {{"requests", {{"cpu", "250m"}, {"memory", "512Mi"}}}}}};
  pod["spec"]["containers"].push_back(sidecar);
  pod["metadata"].erase("namespace");
  slice = PodSliceFromObject(pod);
  ASSERT_TRUE(slice.ok() && slice->has_value());
  EXPECT_EQ((*slice)->ns, "default");
  EXPECT_DOUBLE_EQ((*slice)->cpu_milli, 1750);
  EXPECT_DOUBLE_EQ((*slice)->memory_mib, 6656);

  slice = PodSliceFromObject(PodWithLimits("u2", "web", {{"cpu", "1"}}));
  ASSERT_TRUE(slice.ok());
  EXPECT_FALSE(slice->has_value());

  const std::pair<json, std::string> bad[] = {
      {PodWithLimits("u3", "zero", {{"tessera.io/mig-1g.10gb", "0"}}), "asks for 0"},
      {PodWithLimits("u3", "half", {{"tessera.io/mig-1g.10gb", "500m"}}), "asks for 0.5"},
      {PodWithLimits("u3", "word", {{"tessera.io/mig-1g.10gb", "one"}}),
       "spec.containers[0].resources.tessera.io/mig-1g.10gb: not a Kubernetes quantity"},
      {PodWithLimits("u3", "cpu", {{"tessera.io/mig-1g.10gb", "1"}}, "lots"), "requests.cpu"},
      {json{{"metadata", {{"uid", "u3"}}}}, "Pod.metadata.name: missing"},
      {json{{"metadata", {{"name", 7}}}}, "Pod.metadata.name: must be a string"}};
  for (const auto& [object, message] : bad) {
    slice = PodSliceFromObject(object);
    ASSERT_FALSE(slice.ok()) << object;
    EXPECT_NE(slice.status().message().find(message), std::string::npos)
        << slice.status().message();
  }
}

json BoundPodObject(std::map<std::string, std::string> annotations) {
  json pod = Pod("u1", "train", "3g.40gb", "2", "4Gi");
  pod["metadata"]["annotations"] = annotations;
  pod["spec"]["nodeName"] = "node-a";
  pod["status"]["phase"] = "Running";
  return pod;
}

TEST(KubeObjectsTest, PlacementFromPod) {
  const std::map<std::string, std::string> full = {{std::string(kGpuAnnotation), "1"},
                                                   {std::string(kStartAnnotation), "4"},
                                                   {std::string(kProfileAnnotation), "3g.40gb"}};
  Result<std::optional<PodPlacement>> placement = PlacementFromPod(BoundPodObject(full));
  ASSERT_TRUE(placement.ok() && placement->has_value()) << placement.status().ToString();
  const PodPlacement& p = **placement;
  EXPECT_EQ(std::tie(p.uid, p.ns, p.name, p.node, p.profile),
            std::make_tuple(std::string("u1"), std::string(kNamespace), std::string("train"),
                            std::string("node-a"), std::string("3g.40gb")));
  EXPECT_EQ(p.gpu, 1);
  EXPECT_EQ(p.start, 4);
  EXPECT_DOUBLE_EQ(p.cpu_milli, 2000);
  EXPECT_DOUBLE_EQ(p.memory_mib, 4096);

  // Not Tessera's, finished, or not bound: no placement.
  placement = PlacementFromPod(BoundPodObject({}));
  ASSERT_TRUE(placement.ok());
  EXPECT_FALSE(placement->has_value());
  for (const char* phase : {"Succeeded", "Failed"}) {
    json pod = BoundPodObject(full);
    pod["status"]["phase"] = phase;
    placement = PlacementFromPod(pod);
    ASSERT_TRUE(placement.ok());
    EXPECT_FALSE(placement->has_value()) << phase;
  }
  json unbound = BoundPodObject(full);
  unbound["spec"].erase("nodeName");
  placement = PlacementFromPod(unbound);
  ASSERT_TRUE(placement.ok());
  EXPECT_FALSE(placement->has_value());

  // Partial or malformed annotations.
  std::map<std::string, std::string> partial = full;
  partial.erase(std::string(kStartAnnotation));
  placement = PlacementFromPod(BoundPodObject(partial));
  ASSERT_FALSE(placement.ok());
  for (std::string_view name : {kGpuAnnotation, kStartAnnotation, kProfileAnnotation}) {
    EXPECT_NE(placement.status().message().find(name), std::string::npos)
        << placement.status().message();
  }
  const std::pair<std::string, std::string> malformed[] = {{std::string(kStartAnnotation), "9"},
                                                           {std::string(kStartAnnotation), "x"},
                                                           {std::string(kGpuAnnotation), "-1"}};
  for (const auto& [key, value] : malformed) {
    std::map<std::string, std::string> annotations = full;
    annotations[key] = value;
    placement = PlacementFromPod(BoundPodObject(annotations));
    ASSERT_FALSE(placement.ok()) << key << "=" << value;
    EXPECT_NE(placement.status().message().find("pod team-a/train: " + key), std::string::npos)
        << placement.status().message();
  }
}

// ---- 8. Mutated protocol bodies ----

// The candidate node names of ExtenderArgs that the extender accepted.
std::vector<std::string> CandidateNames(json args) {
  std::vector<std::string> names;
  if (!args["NodeNames"].is_null()) {
    for (const json& name : args["NodeNames"]) names.push_back(name.get<std::string>());
  } else if (args["Nodes"]["items"].is_array()) {
    for (json node : args["Nodes"]["items"]) {
      names.push_back(node["metadata"]["name"].get<std::string>());
    }
  }
  return names;
}

bool IsReasonMap(const json& reasons) {
  if (!reasons.is_object()) return false;
  for (const auto& [node, reason] : reasons.items()) {
    if (!reason.is_string() || reason.get<std::string>().empty()) return false;
  }
  return true;
}

// What is wrong with an ExtenderFilterResult for `args`, or "".
std::string FilterFault(const json& args, json result) {
  if (!result.is_object() || result.size() != 5) return "not the five fields";
  if (!result["Error"].is_string()) return "Error not a string";
  if (!IsReasonMap(result["FailedNodes"]) || !IsReasonMap(result["FailedAndUnresolvableNodes"])) {
    return "failed nodes not a map of reasons";
  }
  const bool by_name = args.contains("NodeNames") && !args.at("NodeNames").is_null();
  json kept_field = result[by_name ? "NodeNames" : "Nodes"];
  if (!result[by_name ? "Nodes" : "NodeNames"].is_null()) return "both Nodes and NodeNames";
  std::vector<std::string> kept;
  if (by_name) {
    if (!kept_field.is_array()) return "NodeNames not an array";
    for (const json& name : kept_field) {
      if (!name.is_string()) return "a kept name not a string";
      kept.push_back(name.get<std::string>());
    }
  } else {
    if (!kept_field.is_object() || !kept_field["items"].is_array()) return "Nodes not a list";
    for (json node : kept_field["items"]) {
      if (!node["metadata"]["name"].is_string()) return "a kept node without a name";
      kept.push_back(node["metadata"]["name"].get<std::string>());
    }
  }
  const std::vector<std::string> candidates = CandidateNames(args);
  const std::set<std::string> offered(candidates.begin(), candidates.end());
  for (const std::string& name : kept) {
    if (offered.count(name) == 0) return "kept a node not offered: " + name;
    if (result["FailedNodes"].contains(name) ||
        result["FailedAndUnresolvableNodes"].contains(name)) {
      return "kept and failed: " + name;
    }
  }
  if (!result["Error"].get<std::string>().empty()) return kept.empty() ? "" : "kept on an Error";
  for (const std::string& name : candidates) {
    if (std::find(kept.begin(), kept.end(), name) == kept.end() &&
        !result["FailedNodes"].contains(name) &&
        !result["FailedAndUnresolvableNodes"].contains(name)) {
      return "node neither kept nor failed: " + name;
    }
  }
  return "";
}

std::string PrioritizeFault(const json& args, json result) {
  const std::vector<std::string> candidates = CandidateNames(args);
  if (!result.is_array() || result.size() != candidates.size()) return "not one score per node";
  std::set<std::string> chosen;
  for (size_t i = 0; i < result.size(); ++i) {
    json& host = result[i];
    if (!host.is_object() || host.size() != 2 || host["Host"] != candidates[i] ||
        !host["Score"].is_number_integer()) {
      return "not {Host, Score} in the candidates' order";
    }
    const int score = host["Score"].get<int>();
    if (score != 0 && score != kMaxExtenderScore) return "a score other than 0 or 10";
    if (score > 0) chosen.insert(candidates[i]);
  }
  return chosen.size() <= 1 ? "" : "several nodes chosen";
}

std::string BindFault(json result) {
  return result.is_object() && result.size() == 1 && result["Error"].is_string() ? ""
                                                                                 : "not {Error}";
}

TEST(SchedulerExtenderFuzz, MutatedBodiesGetAWellFormedAnswerOrInvalidArgument) {
  FakeClock clock;
  FakeKubeApi api;
  ExtenderOptions options;
  options.policy = "grmu";
  options.clock = &clock;
  auto extender = SchedulerExtender::Create(options, api).value();
  extender->SyncNodes({Node("node-0", 2), Node("node-1", 2, 8000), Node("node-2", 1)});
  extender->MarkSynced();

  const json a = Pod("uid-a", "a", "1g.10gb");
  const json b = Pod("uid-b", "b", "3g.40gb", "3", "12Gi");
  const json c = Pod("uid-c", "c", "2g.20gb", "500m");
  const json web = PodWithLimits("uid-w", "web", {{"cpu", "1"}});
  for (const json& pod : {a, b, c, web}) {
    const std::string name = pod.at("metadata").at("name");
    api.pods[std::string(kNamespace) + "/" + name] = pod;
  }
  json list = {{"kind", "NodeList"}, {"apiVersion", "v1"}, {"metadata", json::object()}};
  for (const std::string name : {"node-0", "node-1", "node-2", "cpu-0"}) {
    list["items"].push_back({{"metadata", {{"name", name}}}});
  }
  enum Verb { kFilter, kPrioritize, kBind };
  const std::vector<std::pair<Verb, json>> seeds = {
      {kFilter, json::parse(Args(a, {"node-0", "node-1", "node-2"}))},
      {kFilter, {{"Pod", b}, {"Nodes", list}, {"NodeNames", nullptr}}},
      {kFilter, json::parse(Args(web, {"node-0", "cpu-0"}))},
      {kPrioritize, json::parse(Args(a, {"node-0", "node-1"}))},
      {kBind, json::parse(BindArgs(a, "node-0"))},
      {kBind, json::parse(BindArgs(c, "node-1"))}};

  std::mt19937 rng(20260611);
  std::map<std::string, int> outcomes;
  for (int round = 0; round < 2000; ++round) {
    clock.Advance(7'000);  // reservations expire now and then
    if (round % 50 == 49 && !extender->Placements().empty()) {
      extender->Forget(extender->Placements().front().uid);  // a pod leaves
    }
    for (const auto& [verb, seed] : seeds) {
      const std::string text =
          round == 0 ? seed.dump(1) : testing::Mutate(seed.dump(1), rng, testing::JsonMutations());
      const json args = json::parse(text, nullptr, false);
      Result<json> answer = Status::Internal("not called");
      std::string fault;
      switch (verb) {
        case kFilter:
          answer = AsJson(extender->Filter(text));
          if (answer.ok() && !args.is_discarded()) fault = FilterFault(args, *answer);
          break;
        case kPrioritize:
          answer = AsJson(extender->Prioritize(text));
          if (answer.ok() && !args.is_discarded()) fault = PrioritizeFault(args, *answer);
          break;
        case kBind:
          answer = AsJson(extender->Bind(text));
          if (answer.ok()) fault = BindFault(*answer);
          break;
      }
      if (answer.ok() && args.is_discarded()) fault = "answered a body that is not JSON";
      if (!answer.ok()) {
        ASSERT_EQ(answer.status().code(), StatusCode::kInvalidArgument)
            << answer.status().ToString() << "\n--- body:\n"
            << text;
        ++outcomes[args.is_discarded() ? "unparsable" : "invalid"];
        continue;
      }
      ASSERT_EQ(fault, "") << answer->dump() << "\n--- body:\n" << text;
      ++outcomes[verb == kBind && answer->at("Error") == "" ? "bound" : "answered"];
      const Status invariants = extender->CheckInvariants();
      ASSERT_TRUE(invariants.ok()) << invariants.ToString() << "\n--- body:\n" << text;
    }
  }
  ExpectLegalAndDisjoint(extender->Placements());
  // The mutants reach the success paths and the errors alike.
  EXPECT_GT(outcomes["answered"], 1000) << outcomes["answered"];
  EXPECT_GT(outcomes["invalid"], 300) << outcomes["invalid"];
  EXPECT_GT(outcomes["unparsable"], 300) << outcomes["unparsable"];
  EXPECT_GT(outcomes["bound"], 100) << outcomes["bound"];
}

}  // namespace
}  // namespace tessera
