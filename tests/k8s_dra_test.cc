// The mig.tessera.io DRA driver against a real Kubernetes control plane
// (docs/dra.md): etcd, kube-apiserver and kube-scheduler built from the
// pinned Go modules (KubeTestCluster), `tessera serve` answering the
// driver's offers, the driver's controller (tessera-dra, scripts/
// k8s-bins.sh builds it) publishing ResourceSlices, Node objects without
// kubelets, and one ResourceClaim and one pod per trace pod created in trace
// order. The scheduler's own DRA allocator picks the devices; steered, it can
// only take the policy's choice, and what it took is compared with
// `tessera replay` on the same sequence; publishing every placement, the
// allocator chooses alone, and both are reported side by side.
#include <gtest/gtest.h>
#include <httplib.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <map>
#include <optional>
#include <set>
#include <sstream>
#include <string>
#include <tuple>
#include <vector>

#include "agent_fixture.h"
#include "k8s_cluster.h"
#include "k8s_trace_support.h"
#include "tessera/dra_offers_request.h"
#include "tessera/gpu/mig_layout.h"
#include "tessera/gpu_catalog.h"
#include "tessera/k8s/kube_client.h"
#include "tessera/online/mig_capability.h"
#include "tessera/util/text_io.h"

namespace tessera::testing {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

constexpr const char* kDriver = "mig.tessera.io";
constexpr const char* kClaims = "/apis/resource.k8s.io/v1/namespaces/default/resourceclaims";
constexpr const char* kPods = "/api/v1/namespaces/default/pods";

// A trace pod: its name and the MIG profile it asks for.
struct TracePod {
  std::string name;
  std::string profile;
};

// "" when something accepts connections on the Unix socket `path`, or why
// not.
std::string ConnectUnix(const std::string& path) {
  const int fd = ::socket(AF_UNIX, SOCK_STREAM, 0);
  if (fd < 0) return std::strerror(errno);
  sockaddr_un address{};
  address.sun_family = AF_UNIX;
  std::snprintf(address.sun_path, sizeof address.sun_path, "%s", path.c_str());
  const int connected = ::connect(fd, reinterpret_cast<const sockaddr*>(&address), sizeof address);
  const std::string why = connected == 0 ? "" : std::strerror(errno);
  ::close(fd);
  return why;
}

// Where a claim's device is: node, GPU, start (from the device's name,
// "gpu<G>-<profile>-s<S>").
using Place = std::tuple<std::string, int, int>;

Place PlaceOf(const std::string& node, const std::string& device) {
  const int gpu = std::atoi(device.c_str() + 3);
  const int start = std::atoi(device.c_str() + device.rfind("-s") + 2);
  return {node, gpu, start};
}

// One run of a trace through the cluster.
struct RunOutcome {
  std::map<std::string, Place> placed;        // by pod name
  std::map<std::string, std::string> device;  // by pod name: the device name
  std::set<std::string> rejected;
  double seconds = 0;
};

class KubeDraTest : public KubeControlPlaneTest {
 protected:
  void SetUp() override {
    if (Status s = RequireBinary(KubeBinDir(), "tessera-dra"); !s.ok()) {
      CliTest::SetUp();
      FAIL() << s.ToString();
    }
    KubeControlPlaneTest::SetUp();
    ASSERT_FALSE(HasFatalFailure());
    fs::create_directories(dir_ / "logs");
    processes_ = std::make_unique<TestProcesses>(dir_ / "logs");
    Result<std::vector<int>> ports = FreePorts(2);
    ASSERT_TRUE(ports.ok()) << ports.status().ToString();
    serve_port_ = (*ports)[0];
    status_port_ = (*ports)[1];
    const Status launched = processes_->Launch(
        "serve", {TESSERA_BINARY, "serve", "--listen", "127.0.0.1:" + std::to_string(serve_port_),
                  "--db", (dir_ / "tessera.db").string()});
    ASSERT_TRUE(launched.ok()) << launched.ToString();
    httplib::Client probe("127.0.0.1", serve_port_);
    SetProbeTimeouts(probe);
    const Status ready =
        processes_->WaitReady("serve", 30, [&] { return ProbeHttp(probe, "/healthz"); });
    ASSERT_TRUE(ready.ok()) << ready.ToString();
    const json device_class = json::parse(R"({
      "apiVersion": "resource.k8s.io/v1", "kind": "DeviceClass",
      "metadata": {"name": "mig.tessera.io"},
      "spec": {"selectors": [{"cel": {"expression": "device.driver == \"mig.tessera.io\""}}]}})");
    const Result<json> created =
        client_->Post("/apis/resource.k8s.io/v1/deviceclasses", device_class);
    ASSERT_TRUE(created.ok()) << created.status().ToString();
  }

  void TearDown() override {
    cluster_.reset();
    processes_.reset();
    CliTest::TearDown();
  }

  // The driver's controller, steered by GRMU through `tessera serve`, or
  // publishing every placement.
  void StartController(const std::string& gpu, bool publish_all) {
    const Status launched = processes_->Launch(
        "controller",
        {KubeBinDir() + "/tessera-dra", "controller", "--kubeconfig", cluster_->kubeconfig(),
         "--tessera", "http://127.0.0.1:" + std::to_string(serve_port_), "--gpu", gpu, "--policy",
         "grmu", "--publish", publish_all ? "all" : "steered", "--status-listen",
         "127.0.0.1:" + std::to_string(status_port_)});
    ASSERT_TRUE(launched.ok()) << launched.ToString();
    httplib::Client probe("127.0.0.1", status_port_);
    SetProbeTimeouts(probe);
    const Status ready =
        processes_->WaitReady("controller", 60, [&] { return ProbeHttp(probe, "/healthz"); });
    ASSERT_TRUE(ready.ok()) << ready.ToString();
  }

  void StopController() { ASSERT_TRUE(processes_->Stop("controller").ok()); }

  json ControllerStatus() {
    httplib::Client http("127.0.0.1", status_port_);
    http.set_read_timeout(5, 0);
    const httplib::Result reply = http.Get("/status");
    if (!reply || reply->status != 200) return json::object();
    return json::parse(reply->body, nullptr, false);
  }

  // The trace's nodes, each annotated with its GPUs as the node plugin
  // writes them; the pods in trace order.
  std::vector<TracePod> CreateTrace(const std::string& trace_flags, const std::string& model) {
    const fs::path path = dir_ / "trace.json";
    const Outcome outcome = Tessera("k8s manifests " + trace_flags + " -o " + Quote(path.string()));
    EXPECT_EQ(outcome.exit_code, 0) << outcome.err;
    const json list = json::parse(ReadAll(path), nullptr, false);
    std::vector<TracePod> pods;
    for (json item : list["items"]) {
      if (item["kind"] == "Node") {
        const std::string name = item["metadata"]["name"];
        const int gpus =
            std::stoi(item["metadata"]["labels"]["tessera.io/gpus"].get<std::string>());
        json annotation = json::array();
        for (int g = 0; g < gpus; ++g) {
          annotation.push_back(
              {{"index", g}, {"uuid", "GPU-" + name + "-" + std::to_string(g)}, {"model", model}});
        }
        item["metadata"]["annotations"] = {{"mig.tessera.io/gpus", annotation.dump()}};
        const Result<json> created = client_->Post("/api/v1/nodes", item);
        EXPECT_TRUE(created.ok()) << created.status().ToString();
        nodes_.push_back({name, gpus});
        continue;
      }
      for (const auto& [resource, value] :
           item["spec"]["containers"][0]["resources"]["limits"].items()) {
        pods.push_back({item["metadata"]["name"], resource.substr(resource.find("mig-") + 4)});
      }
    }
    return pods;
  }

  // A claim for one device of the driver's class with `pod`'s profile.
  static json ClaimOf(const TracePod& pod) {
    json claim = json::parse(R"({
      "apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim", "metadata": {},
      "spec": {"devices": {"requests": [{"name": "mig", "exactly": {
        "deviceClassName": "mig.tessera.io", "selectors": [{"cel": {}}]}}]}}})");
    claim["metadata"]["name"] = pod.name;
    claim["spec"]["devices"]["requests"][0]["exactly"]["selectors"][0]["cel"]["expression"] =
        std::string("device.attributes[\"") + kDriver + "\"].profile == \"" + pod.profile + "\"";
    return claim;
  }

  // A pod using `claim`.
  static json PodOf(const TracePod& pod, const std::string& claim) {
    json object = json::parse(R"({
      "apiVersion": "v1", "kind": "Pod", "metadata": {},
      "spec": {"resourceClaims": [{"name": "mig"}],
               "containers": [{"name": "main", "image": "registry.k8s.io/pause:3.10",
                               "resources": {"claims": [{"name": "mig"}]}}]}})");
    object["metadata"]["name"] = pod.name;
    object["spec"]["resourceClaims"][0]["resourceClaimName"] = claim;
    return object;
  }

  // Every published device of the driver: (pool, device name).
  std::set<std::pair<std::string, std::string>> Published() {
    std::set<std::pair<std::string, std::string>> out;
    const Result<json> list = client_->Get("/apis/resource.k8s.io/v1/resourceslices");
    EXPECT_TRUE(list.ok()) << list.status().ToString();
    if (!list.ok()) return out;
    for (const json& slice : (*list)["items"]) {
      if (slice["spec"]["driver"] != kDriver) continue;
      for (const json& device : slice["spec"].value("devices", json::array())) {
        out.emplace(slice["spec"]["pool"]["name"].get<std::string>(),
                    device["name"].get<std::string>());
      }
    }
    return out;
  }

  // The claim's (pool, device), when allocated.
  std::optional<std::pair<std::string, std::string>> Allocation(const std::string& claim) {
    const Result<json> got = client_->Get(std::string(kClaims) + "/" + claim);
    if (!got.ok() || !(*got)["status"].contains("allocation")) return std::nullopt;
    const json& result = (*got)["status"]["allocation"]["devices"]["results"][0];
    return std::make_pair(result["pool"].get<std::string>(), result["device"].get<std::string>());
  }

  // PodScheduled=False's message, or "".
  std::string Unschedulable(const std::string& pod) {
    const Result<json> got = client_->Get(std::string(kPods) + "/" + pod);
    if (!got.ok()) return "";
    for (const json& c : (*got)["status"].value("conditions", json::array())) {
      if (c.value("type", "") == "PodScheduled" && c.value("status", "") == "False")
        return c.value("message", "?");
    }
    return "";
  }

  // The pod and its claim gone, as the kubelet and the resource claim
  // controller (neither runs here) would end them: the pod deleted at once,
  // the claim's finalizer lifted, the claim deleted.
  void Delete(const std::string& pod, const std::string& claim) {
    ASSERT_TRUE(client_->Delete(std::string(kPods) + "/" + pod + "?gracePeriodSeconds=0").ok());
    const Result<json> patched = client_->MergePatch(std::string(kClaims) + "/" + claim,
                                                     {{"metadata", {{"finalizers", nullptr}}}});
    ASSERT_TRUE(patched.ok()) << patched.status().ToString();
    ASSERT_TRUE(client_->Delete(std::string(kClaims) + "/" + claim).ok());
  }

  // What the controller must publish now, steered: the allocated devices
  // and the policy's offers for the log so far (the same library call
  // `tessera serve` answers with).
  std::set<std::pair<std::string, std::string>> Expected(const std::string& gpu,
                                                         const DraOffers& offers,
                                                         const RunOutcome& run) {
    std::set<std::pair<std::string, std::string>> want;
    for (const auto& [pod, device] : run.device)
      want.emplace(std::get<0>(run.placed.at(pod)), device);
    for (const DraOffer& offer : offers.offers) want.emplace(offer.node, DeviceName(offer));
    (void)gpu;
    return want;
  }

  // Every legal device of every node: what publish-every-placement shows.
  std::set<std::pair<std::string, std::string>> EveryDevice(const GpuModel& gpu) const {
    std::set<std::pair<std::string, std::string>> all;
    const CapabilityTable table(gpu);
    for (const auto& [node, gpus] : nodes_) {
      for (int g = 0; g < gpus; ++g) {
        for (int index : table.profiles()) {
          for (int start : gpu.profiles[index].starts) {
            all.emplace(node, DeviceName({gpu.profiles[index].name, node, g, start}));
          }
        }
      }
    }
    return all;
  }

  // Publishing every placement: waits until all are in the API server, then
  // until a probe claim is allocated (the scheduler has read them), and
  // deletes the probe.
  void AwaitEveryDevice(const GpuModel& gpu) {
    const auto want = EveryDevice(gpu);
    ASSERT_TRUE(Eventually([&] { return Published() == want; }, 120, 100))
        << "not every placement was published (" << Published().size() << " of " << want.size()
        << "):\n"
        << processes_->LogTail("controller");
    const TracePod probe{"probe", gpu.profiles[CapabilityTable(gpu).profiles()[0]].name};
    ASSERT_TRUE(client_->Post(kClaims, ClaimOf(probe)).ok());
    ASSERT_TRUE(client_->Post(kPods, PodOf(probe, "probe")).ok());
    ASSERT_TRUE(Eventually([&] { return Allocation("probe").has_value(); }, 60, 20))
        << Unschedulable("probe");
    Delete("probe", "probe");
    ASSERT_TRUE(Eventually([&] { return !client_->Get(std::string(kClaims) + "/probe").ok(); }, 30))
        << "the probe claim is still there";
  }

  static std::string DeviceName(const DraOffer& offer) {
    std::string label = offer.profile;
    for (char& c : label) {
      if (c == '.' || c == '+') c = '-';
    }
    return "gpu" + std::to_string(offer.gpu) + "-" + label + "-s" + std::to_string(offer.start);
  }

  // Creates each pod's claim and the pod, one after the other, each once
  // the one before is allocated or refused. Steered, the slices are first
  // checked to hold exactly the allocated devices and the policy's offers.
  RunOutcome Run(const std::vector<TracePod>& pods, const std::string& gpu, bool steered,
                 const std::string& suffix) {
    RunOutcome run;
    DraOffersRequest log;
    log.gpu = gpu;
    log.policy = "grmu";
    for (const auto& [name, gpus] : nodes_) log.nodes.push_back(DraNode{name, gpus});
    const auto start = Clock::now();
    for (const TracePod& pod : pods) {
      std::optional<bool> offered;
      if (steered) {
        const Result<DraOffers> offers = RunDraOffers(log);
        EXPECT_TRUE(offers.ok()) << offers.status().ToString();
        if (!offers.ok()) return run;
        const auto want = Expected(gpu, *offers, run);
        std::set<std::pair<std::string, std::string>> got;
        if (!Eventually([&] { return (got = Published()) == want; }, 60, 20)) {
          ADD_FAILURE() << "before " << pod.name << ": the published devices are not the "
                        << "allocated ones and the policy's offers (" << got.size() << " vs "
                        << want.size() << "); controller: " << ControllerStatus().dump() << "\n"
                        << processes_->LogTail("controller");
          return run;
        }
        offered = false;
        for (const DraOffer& offer : offers->offers)
          offered = *offered || offer.profile == pod.profile;
      }
      const std::string claim = pod.name + suffix;
      TracePod named = pod;
      named.name = pod.name + suffix;
      EXPECT_TRUE(client_->Post(kClaims, ClaimOf(named)).ok());
      EXPECT_TRUE(client_->Post(kPods, PodOf(named, claim)).ok());
      std::optional<std::pair<std::string, std::string>> allocation;
      std::string refused;
      // Steered, a pod the policy places waits for its device (a refusal
      // seen before the scheduler saw the slices is retried by it).
      const bool settled = Eventually(
          [&] {
            allocation = Allocation(claim);
            if (allocation) return true;
            if (offered.value_or(false)) return false;
            refused = Unschedulable(named.name);
            return !refused.empty();
          },
          60, 20);
      if (!settled) {
        ADD_FAILURE() << pod.name << " (" << pod.profile << ") neither allocated nor refused; "
                      << "controller: " << ControllerStatus().dump();
        return run;
      }
      if (allocation) {
        run.placed[pod.name] = PlaceOf(allocation->first, allocation->second);
        run.device[pod.name] = allocation->second;
        const auto& [node, g, s] = run.placed[pod.name];
        log.events.push_back({DraEvent::Op::kPlace, claim, pod.profile, node, g, s});
      } else {
        run.rejected.insert(pod.name);
        Delete(named.name, claim);
      }
    }
    run.seconds = SecondsSince(start);
    return run;
  }

  // The driver's ResourceSlices as the API server holds them, each written
  // to <dir>/slices-<tag>/ and checked by kubernetes-validate (strict,
  // Kubernetes 1.37) from the venv `make test` creates.
  void ValidateSlices(const std::string& tag) {
    const fs::path validate =
        fs::path(TESSERA_BINARY).parent_path() / "pyenv" / "bin" / "kubernetes-validate";
    ASSERT_TRUE(fs::exists(validate))
        << validate << " is missing: `make test` creates it (scripts/pyenv.sh build/pyenv)";
    const Result<json> list = client_->Get("/apis/resource.k8s.io/v1/resourceslices");
    ASSERT_TRUE(list.ok()) << list.status().ToString();
    const fs::path out = dir_ / ("slices-" + tag);
    fs::create_directories(out);
    std::vector<std::string> argv = {validate.string(), "--strict", "--quiet", "-k", "1.37.0"};
    for (json slice : (*list)["items"]) {
      if (slice["spec"]["driver"] != kDriver) continue;
      slice["apiVersion"] = "resource.k8s.io/v1";
      slice["kind"] = "ResourceSlice";
      const fs::path file = out / (slice["metadata"]["name"].get<std::string>() + ".json");
      WriteTextFile(file, slice.dump(1));
      argv.push_back(file.string());
    }
    ASSERT_GT(argv.size(), 5u) << "no slice of " << kDriver;
    const Status valid = processes_->Run("kubernetes-validate-" + tag, argv);
    EXPECT_TRUE(valid.ok()) << valid.ToString();
  }

  // Accepted per profile.
  static std::map<std::string, int> Accepted(const std::vector<TracePod>& pods,
                                             const RunOutcome& run) {
    std::map<std::string, int> accepted;
    for (const TracePod& pod : pods) accepted[pod.profile] += run.placed.count(pod.name);
    return accepted;
  }

  // "accepted 180/200 (1g.10gb 50/52, ...) on 40 GPUs, 23 free memory
  // slices on them, fragmentation 0.41 (GRMU Alg. 4, mean over used GPUs)".
  static std::string Describe(const std::vector<TracePod>& pods, const RunOutcome& run,
                              const GpuModel& gpu) {
    std::map<std::string, int> asked;
    for (const TracePod& pod : pods) ++asked[pod.profile];
    const std::map<std::string, int> accepted = Accepted(pods, run);
    std::string profiles;
    for (const auto& [profile, n] : asked) {
      profiles += (profiles.empty() ? "" : ", ") + profile + " " +
                  std::to_string(accepted.at(profile)) + "/" + std::to_string(n);
    }
    std::map<std::pair<std::string, int>, SliceMask> used;
    for (const auto& [name, place] : run.placed) {
      const auto& [node, g, s] = place;
      std::string profile;
      for (const TracePod& pod : pods) {
        if (pod.name == name) profile = pod.profile;
      }
      used[{node, g}] |= MaskOf(gpu, {gpu.ProfileIndex(profile), s});
    }
    const CapabilityTable table(gpu);
    int free = 0;
    double fragmentation = 0;
    for (const auto& [at, mask] : used) {
      free += table.FreeSlices(mask);
      fragmentation += table.Fragmentation(mask);
    }
    char text[512];
    std::snprintf(text, sizeof text,
                  "accepted %zu/%zu (%s) on %zu GPUs, %d free memory slices on them, "
                  "fragmentation %.3f (GRMU Alg. 4, mean over used GPUs), %.1f s",
                  run.placed.size(), pods.size(), profiles.c_str(), used.size(), free,
                  used.empty() ? 0.0 : fragmentation / used.size(), run.seconds);
    return text;
  }

  // `tessera replay`'s accepted per profile, GRMU without migrations.
  std::map<std::string, int> ReplayAccepted(const std::string& trace_flags) {
    const Outcome outcome =
        Tessera("replay " + trace_flags + " --policy grmu --no-defragment --format json");
    EXPECT_EQ(outcome.exit_code, 0) << outcome.err;
    const json reports = json::parse(outcome.out, nullptr, false);
    std::map<std::string, int> accepted;
    if (!reports.is_array() || reports.empty()) return accepted;
    for (const json& t : reports[0]["per_profile"]) accepted[t["profile"]] = t["accepted"];
    return accepted;
  }

  // The node side on `node`, for real claims: the kubelet plugin on a fake
  // machine of the node's 8 GPUs (the project's fake NVML), driven through
  // its gRPC by `tessera-dra prepare` as the kubelet would, for every claim
  // the run allocated there; then NVML's instances are exactly those
  // allocations, each claim's CDI spec parses, and after `tessera-dra
  // unprepare` no instance is left.
  void PrepareOnNode(const std::string& node, const GpuModel& gpu,
                     const std::vector<TracePod>& pods, const RunOutcome& run) {
    // Unix socket paths hold 107 bytes: the plugin's files go in a short
    // directory of their own.
    char short_dir[] = "/tmp/dra-XXXXXX";
    ASSERT_NE(::mkdtemp(short_dir), nullptr) << std::strerror(errno);
    const fs::path root = short_dir;
    struct Remove {
      fs::path path;
      ~Remove() { fs::remove_all(path); }
    } remove{root};
    for (const char* sub : {"state", "registrar", "cdi"}) fs::create_directories(root / sub);
    const std::vector<std::string> machine = {
        "/usr/bin/env",
        "TESSERA_FAKE_NVML_DEVICES=" + gpu.name + std::string(",") + gpu.name + "," + gpu.name +
            "," + gpu.name + "," + gpu.name + "," + gpu.name + "," + gpu.name + "," + gpu.name,
        "TESSERA_FAKE_NVML_STATE=" + (root / "nvml.json").string()};
    const auto with_machine = [&](std::vector<std::string> argv) {
      argv.insert(argv.begin(), machine.begin(), machine.end());
      return argv;
    };
    const std::string dra = KubeBinDir() + "/tessera-dra";
    ASSERT_TRUE(
        processes_
            ->Launch("plugin", with_machine({dra, "kubelet-plugin", "--node", node, "--kubeconfig",
                                             cluster_->kubeconfig(), "--tessera-binary",
                                             TESSERA_BINARY, "--nvml", TESSERA_FAKE_NVML,
                                             "--state-dir", (root / "state").string(),
                                             "--registrar-dir", (root / "registrar").string(),
                                             "--cdi-dir", (root / "cdi").string()}))
            .ok());
    const Status ready = processes_->WaitReady(
        "plugin", 60, [&] { return ConnectUnix((root / "state" / "dra.sock").string()); });
    ASSERT_TRUE(ready.ok()) << ready.ToString();

    std::vector<std::string> claims;
    std::set<std::tuple<int, int, int>> want;  // GPU, profile ID, start
    for (const TracePod& pod : pods) {
      const auto placed = run.placed.find(pod.name);
      if (placed == run.placed.end() || std::get<0>(placed->second) != node) continue;
      const Result<json> claim = client_->Get(std::string(kClaims) + "/" + pod.name);
      ASSERT_TRUE(claim.ok()) << claim.status().ToString();
      claims.push_back("default/" + pod.name + "/" +
                       (*claim)["metadata"]["uid"].get<std::string>());
      want.insert({std::get<1>(placed->second), gpu.FindProfile(pod.profile)->id,
                   std::get<2>(placed->second)});
    }
    ASSERT_FALSE(claims.empty()) << "no claim was allocated on " << node;
    const auto call = [&](const std::string& verb) {
      std::vector<std::string> argv = {dra, verb, "--socket",
                                       (root / "state" / "dra.sock").string()};
      argv.insert(argv.end(), claims.begin(), claims.end());
      return processes_->Run(verb, argv);
    };
    int listings = 0;
    const auto instances = [&] {
      std::set<std::tuple<int, int, int>> got;
      const std::string log = "inventory-" + std::to_string(++listings);
      const Status listed =
          processes_->Run(log, with_machine({TESSERA_BINARY, "agent", "inventory", "--nvml",
                                             TESSERA_FAKE_NVML, "--format", "json"}));
      EXPECT_TRUE(listed.ok()) << listed.ToString();
      const std::string text = ReadAll(processes_->LogPath(log));
      const json doc = json::parse(text, nullptr, false);
      EXPECT_FALSE(doc.is_discarded()) << "the inventory is not JSON: " << text;
      if (doc.is_discarded()) return got;
      for (const json& g : doc.value("gpus", json::array())) {
        for (const json& gi : g["gpu_instances"]) {
          got.insert({g["index"].get<int>(), gi["profile_id"].get<int>(), gi["start"].get<int>()});
        }
      }
      return got;
    };
    const Status prepared = call("prepare");
    ASSERT_TRUE(prepared.ok()) << prepared.ToString() << "\n" << processes_->LogTail("plugin");
    EXPECT_EQ(instances(), want) << "NVML's instances are not the allocations on " << node;
    size_t specs = 0;
    for (const auto& entry : fs::directory_iterator(root / "cdi")) {
      const json spec = json::parse(ReadAll(entry.path()), nullptr, false);
      ASSERT_FALSE(spec.is_discarded()) << entry.path() << " does not parse";
      EXPECT_EQ(spec["kind"], "tessera.io/mig");
      EXPECT_EQ(spec["devices"][0]["containerEdits"]["env"][0].get<std::string>().rfind(
                    "NVIDIA_VISIBLE_DEVICES=MIG-", 0),
                0u)
          << spec.dump();
      ++specs;
    }
    EXPECT_EQ(specs, claims.size());
    const Status unprepared = call("unprepare");
    ASSERT_TRUE(unprepared.ok()) << unprepared.ToString();
    EXPECT_TRUE(instances().empty());
    std::printf(
        "[ figure ] node side: %zu claims of %s prepared through the plugin's gRPC on the "
        "fake NVML, each instance where the allocator put it, then unprepared\n",
        claims.size(), node.c_str());
    ASSERT_TRUE(processes_->Stop("plugin").ok());
  }

  // The claims and pods of a run gone, the controller stopped.
  void Clear(const std::vector<TracePod>& pods, const RunOutcome& run, const std::string& suffix) {
    for (const TracePod& pod : pods) {
      if (run.placed.count(pod.name)) Delete(pod.name + suffix, pod.name + suffix);
    }
    StopController();
  }

  // Steered by GRMU then (with `every_placement`) publishing every
  // placement, on the same trace: steered equals `tessera replay` pod by
  // pod; both reported.
  void SteeredAgainstEveryPlacement(const std::string& trace_flags, const std::string& gpu,
                                    const std::string& model, const std::string& nodes_csv,
                                    const std::string& pods_csv, const TraceShaping& shaping,
                                    const std::string& label, bool every_placement = true) {
    const std::vector<TracePod> pods = CreateTrace(trace_flags, model);
    ASSERT_FALSE(pods.empty());
    StartController(gpu, /*publish_all=*/false);
    const Status started = cluster_->StartScheduler(cluster_->SchedulerConfig());
    ASSERT_TRUE(started.ok()) << started.ToString();

    const RunOutcome steered = Run(pods, gpu, /*steered=*/true, "");
    ASSERT_FALSE(HasFailure());
    const ReplayOutcome replay = ReplayInProcess(nodes_csv, pods_csv, **FindMigGpu(gpu), shaping);
    EXPECT_EQ(steered.placed, replay.placed)
        << "the allocator steered by GRMU placed claims elsewhere than tessera replay";
    EXPECT_EQ(Accepted(pods, steered), ReplayAccepted(trace_flags));
    const json status = ControllerStatus();
    EXPECT_EQ(status["followed"], steered.placed.size()) << status.dump();
    EXPECT_EQ(status["adopted"], 0) << status.dump();
    EXPECT_FALSE(status.contains("last_error")) << status.dump();
    ValidateSlices("steered");
    if (prepare_node_) PrepareOnNode(nodes_.front().first, **FindMigGpu(gpu), pods, steered);
    Clear(pods, steered, "");
    const GpuModel& model_gpu = **FindMigGpu(gpu);
    std::printf("[ figure ] %s, steered by grmu: %s\n", label.c_str(),
                Describe(pods, steered, model_gpu).c_str());
    if (!every_placement) return;

    StartController(gpu, /*publish_all=*/true);
    AwaitEveryDevice(model_gpu);
    ASSERT_FALSE(HasFailure());
    ValidateSlices("every-placement");
    const RunOutcome every = Run(pods, gpu, /*steered=*/false, "-all");
    std::printf("[ figure ] %s, every placement published: %s\n", label.c_str(),
                Describe(pods, every, model_gpu).c_str());
    every_ = every;
    pods_ = pods;
  }

  std::unique_ptr<TestProcesses> processes_;
  std::vector<std::pair<std::string, int>> nodes_;
  int serve_port_ = 0;
  int status_port_ = 0;
  RunOutcome every_;
  std::vector<TracePod> pods_;
  bool prepare_node_ = false;  // PrepareOnNode after the steered run
};

// 200 pods of six profiles on 20 nodes x 8 A100-80GB, in trace order.
// Steered: every claim allocated where `tessera replay --policy grmu
// --no-defragment` places it, refusals included; every placement
// published: the allocator's own choice, reported beside it. Then deleting
// a pod and its claim frees its counters: a claim for exactly its device,
// refused while it is held, is allocated once it is gone.
TEST_F(KubeDraTest, SteeredClaimsMatchReplayAndDeletingFreesCounters) {
  const std::string trace =
      WriteMixedTrace(dir_, 20, 8, 200, {0.25, 0.15, 0.15, 0.15, 0.1, 0.2}, 7);
  TraceShaping never_leave;
  never_leave.lifetime.mode = Lifetime::Mode::kNone;
  prepare_node_ = true;
  SteeredAgainstEveryPlacement(trace, "a100-80gb", "NVIDIA A100-SXM4-80GB",
                               (dir_ / "nodes.csv").string(), (dir_ / "pods.csv").string(),
                               never_leave, "200 pods of six profiles on 20 nodes x 8 A100-80GB");
  ASSERT_FALSE(HasFailure());
  ASSERT_FALSE(every_.placed.empty());

  // The first allocated pod's exact device, asked for again on its node.
  const auto& [victim, place] = *every_.placed.begin();
  const auto& [node, gpu, start] = place;
  std::string profile;
  for (const TracePod& pod : pods_) {
    if (pod.name == victim) profile = pod.profile;
  }
  TracePod again{"again", profile};
  json claim = ClaimOf(again);
  claim["spec"]["devices"]["requests"][0]["exactly"]["selectors"][0]["cel"]["expression"] =
      "device.attributes[\"mig.tessera.io\"].gpuIndex == " + std::to_string(gpu) +
      " && device.attributes[\"mig.tessera.io\"].start == " + std::to_string(start) +
      " && device.attributes[\"mig.tessera.io\"].profile == \"" + profile + "\"";
  json pod = PodOf(again, "again");
  pod["spec"]["nodeName"] = nullptr;
  pod["spec"]["nodeSelector"] = {{"kubernetes.io/hostname", node}};
  ASSERT_TRUE(client_->Post(kClaims, claim).ok());
  ASSERT_TRUE(client_->Post(kPods, pod).ok());
  std::string refused;
  ASSERT_TRUE(Eventually([&] { return !(refused = Unschedulable("again")).empty(); }, 60, 20))
      << "a claim for a held device must wait";
  EXPECT_FALSE(Allocation("again").has_value());
  Delete(victim + "-all", victim + "-all");
  ASSERT_TRUE(Eventually([&] { return Allocation("again").has_value(); }, 60, 50))
      << "the device's counters were not freed; pod: " << Unschedulable("again");
  EXPECT_EQ(Allocation("again")->second, every_.device.at(victim));
}

// The Alibaba trace's first 500 MIG-sized pods on 25 nodes of 8 GPUs (200
// GPUs, as GRMU's paper stresses the trace, no departures), steered; with
// TESSERA_DRA_EVERY_PLACEMENT=1, every placement published too (the row of
// docs/dra.md's table: two more minutes of kube-scheduler, which `make
// test` leaves out; the 200-pod test above runs that mode). A DRA driver allocates
// devices and leaves a pod's CPU and memory to the scheduler's other
// filters, so the hosts are given CPU and memory no pod exhausts, in the
// cluster and in `tessera replay` alike: the devices decide.
TEST_F(KubeDraTest, AlibabaSliceSteeredMatchesReplay) {
  const std::string nodes_csv = "alibaba-gpu-2023/csv/openb_node_list_gpu_node.csv";
  const std::string pods_csv = "alibaba-gpu-2023/csv/openb_pod_list_default.csv";
  if (!SharedDataPresent(nodes_csv) || !SharedDataPresent(pods_csv))
    GTEST_SKIP() << "the Alibaba GPU trace is not in " << SharedDataPath("");
  std::istringstream in(ReadAll(SharedDataPath(nodes_csv)));
  std::string line;
  std::string nodes = "sn,cpu_milli,memory_mib,gpu,model\n";
  std::getline(in, line);  // the header
  while (std::getline(in, line)) {
    const std::vector<std::string_view> f = SplitCsvFields(line);
    ASSERT_EQ(f.size(), 5u) << line;
    nodes += std::string(f[0]) + ",100000000,100000000," + std::string(f[3]) + "," +
             std::string(f[4]) + "\n";
  }
  WriteTextFile(dir_ / "nodes.csv", nodes);
  const std::string trace = "--nodes " + Quote((dir_ / "nodes.csv").string()) + " --pods " +
                            Quote(SharedDataPath(pods_csv)) +
                            " --gpu A100-40GB --hosts 25 --gpus-per-host 8 --max-pods 500 "
                            "--lifetime none";
  TraceShaping shaping;
  shaping.max_hosts = 25;
  shaping.gpus_per_host = 8;
  shaping.max_vms = 500;
  shaping.lifetime.mode = Lifetime::Mode::kNone;
  SteeredAgainstEveryPlacement(trace, "a100-40gb", "NVIDIA A100-SXM4-40GB",
                               (dir_ / "nodes.csv").string(), SharedDataPath(pods_csv), shaping,
                               "Alibaba slice, 500 pods on 25 nodes x 8 A100-40GB",
                               std::getenv("TESSERA_DRA_EVERY_PLACEMENT") != nullptr);
}

}  // namespace
}  // namespace tessera::testing
