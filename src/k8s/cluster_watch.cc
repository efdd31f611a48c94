// ClusterWatch and KubeClientApi (cluster_watch.h).
#include "tessera/k8s/cluster_watch.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <thread>
#include <utility>
#include <vector>

namespace tessera {
namespace {

using nlohmann::json;

// Server time of one watch request; the watch is resumed after it.
constexpr int kWatchSeconds = 300;
constexpr double kFirstBackoffS = 0.5;
constexpr double kMaxBackoffS = 8;
constexpr int kPageSize = 500;

std::string NodesPath() { return "/api/v1/nodes?labelSelector=" + std::string(kGpusLabel); }
// spec.nodeName!= : bound pods only, URL-encoded.
std::string BoundPodsPath() { return "/api/v1/pods?fieldSelector=spec.nodeName%21%3D"; }

std::string UidOf(const json& object) {
  const auto metadata = object.find("metadata");
  if (metadata == object.end() || !metadata->is_object()) return "";
  const auto uid = metadata->find("uid");
  return uid != metadata->end() && uid->is_string() ? uid->get<std::string>() : "";
}

std::string NameOf(const json& object) {
  if (!object.contains("metadata") || !object["metadata"].is_object()) return "";
  const json& metadata = object["metadata"];
  const auto name = metadata.find("name");
  return name != metadata.end() && name->is_string() ? name->get<std::string>() : "";
}

}  // namespace

Result<json> KubeClientApi::GetPod(const std::string& ns, const std::string& name) {
  return client_.Get("/api/v1/namespaces/" + ns + "/pods/" + name);
}

Status KubeClientApi::Bind(const PodPlacement& placement) {
  const json binding = {
      {"apiVersion", "v1"},
      {"kind", "Binding"},
      {"metadata",
       {{"name", placement.name},
        {"namespace", placement.ns},
        {"uid", placement.uid},
        {"annotations",
         {{std::string(kGpuAnnotation), std::to_string(placement.gpu)},
          {std::string(kStartAnnotation), std::to_string(placement.start)},
          {std::string(kProfileAnnotation), placement.profile}}}}},
      {"target", {{"apiVersion", "v1"}, {"kind", "Node"}, {"name", placement.node}}}};
  Result<json> created = client_.Post(
      "/api/v1/namespaces/" + placement.ns + "/pods/" + placement.name + "/binding", binding);
  return created.ok() ? Status::Ok() : created.status();
}

class ClusterWatch::Impl {
 public:
  Impl(KubeClient& client, SchedulerExtender& extender, Log log)
      : client_(client), extender_(extender), log_(std::move(log)) {
    nodes_ = std::thread([this] { Loop(Kind::kNodes); });
    pods_ = std::thread([this] { Loop(Kind::kPods); });
  }

  void Stop() {
    {
      std::lock_guard lock(mutex_);
      stop_ = true;
    }
    cv_.notify_all();
    if (nodes_.joinable()) nodes_.join();
    if (pods_.joinable()) pods_.join();
  }

 private:
  enum class Kind { kNodes, kPods };

  void Loop(Kind kind) {
    const std::string path = kind == Kind::kNodes ? NodesPath() : BoundPodsPath();
    const char* what = kind == Kind::kNodes ? "nodes" : "bound pods";
    double backoff = kFirstBackoffS;
    std::string version;
    while (!stop_) {
      if (version.empty()) {
        Result<std::string> listed = List(kind, path);
        if (!listed.ok()) {
          log_(std::string("kubernetes: listing ") + what + ": " + listed.status().message());
          Sleep(backoff);
          backoff = std::min(backoff * 2, kMaxBackoffS);
          continue;
        }
        version = *listed;
        Listed(kind);
      }
      Result<std::string> watched = client_.Watch(
          path, version, kWatchSeconds, [&](const WatchEvent& event) { return Apply(kind, event); },
          &stop_);
      if (watched.ok()) {
        version = *watched;
        backoff = kFirstBackoffS;
        continue;
      }
      if (stop_) break;
      if (KubeStatusCode(watched.status()) != 410) {
        log_(std::string("kubernetes: watching ") + what + ": " + watched.status().message());
        Sleep(backoff);
        backoff = std::min(backoff * 2, kMaxBackoffS);
      }
      version.clear();  // list again
    }
  }

  // Lists every page; hands the whole set to the extender; the list's
  // resourceVersion.
  Result<std::string> List(Kind kind, const std::string& path) {
    std::vector<KubeNode> nodes;
    std::vector<PodPlacement> pods;
    std::string next, version;
    do {
      std::string page = path + "&limit=" + std::to_string(kPageSize);
      if (!next.empty()) page += "&continue=" + next;
      Result<json> list = client_.Get(page);
      if (!list.ok()) return list.status();
      const json& metadata = list->contains("metadata") ? (*list)["metadata"] : json::object();
      version = metadata.value("resourceVersion", "");
      next = metadata.value("continue", "");
      if (!list->contains("items") || !(*list)["items"].is_array()) break;
      for (const json& item : (*list)["items"]) {
        if (kind == Kind::kNodes) {
          if (std::optional<KubeNode> node = ReadNode(item)) nodes.push_back(std::move(*node));
        } else if (std::optional<PodPlacement> pod = ReadPod(item)) {
          pods.push_back(std::move(*pod));
        }
      }
    } while (!next.empty() && !stop_);
    if (kind == Kind::kNodes)
      extender_.SyncNodes(std::move(nodes));
    else
      extender_.SyncBoundPods(pods);
    return version;
  }

  // Both first lists in: the extender may answer.
  void Listed(Kind kind) {
    std::lock_guard lock(mutex_);
    (kind == Kind::kNodes ? nodes_listed_ : pods_listed_) = true;
    if (nodes_listed_ && pods_listed_) extender_.MarkSynced();
  }

  bool Apply(Kind kind, const WatchEvent& event) {
    if (event.type == "BOOKMARK" || event.type == "ERROR") return true;
    if (kind == Kind::kNodes) {
      if (event.type == "DELETED") {
        extender_.RemoveNode(NameOf(event.object));
      } else if (std::optional<KubeNode> node = ReadNode(event.object)) {
        extender_.UpsertNode(std::move(*node));
      } else {
        extender_.RemoveNode(NameOf(event.object));  // lost its label
      }
      return true;
    }
    const std::string uid = UidOf(event.object);
    if (event.type == "DELETED") {
      extender_.Forget(uid);
      return true;
    }
    // Unreadable annotations leave the pod's slot as it is: only a deletion,
    // a finish or a readable move changes it.
    Result<std::optional<PodPlacement>> pod = PlacementFromPod(event.object);
    if (!pod.ok()) {
      log_("kubernetes: ignoring an update of " + pod.status().message());
    } else if (!pod->has_value()) {
      extender_.Forget(uid);
    } else if (Status adopted = extender_.Adopt(**pod); !adopted.ok()) {
      log_("kubernetes: " + adopted.message());
    }
    return true;
  }

  std::optional<KubeNode> ReadNode(const json& object) {
    Result<std::optional<KubeNode>> node = KubeNodeFromObject(object);
    if (!node.ok()) {
      log_("kubernetes: ignoring " + node.status().message());
      return std::nullopt;
    }
    return *node;
  }

  std::optional<PodPlacement> ReadPod(const json& object) {
    Result<std::optional<PodPlacement>> pod = PlacementFromPod(object);
    if (!pod.ok()) {
      log_("kubernetes: ignoring " + pod.status().message());
      return std::nullopt;
    }
    return *pod;
  }

  void Sleep(double seconds) {
    std::unique_lock lock(mutex_);
    cv_.wait_for(lock, std::chrono::milliseconds(static_cast<int>(seconds * 1000)),
                 [this] { return stop_.load(); });
  }

  KubeClient& client_;
  SchedulerExtender& extender_;
  Log log_;
  std::atomic<bool> stop_ = false;
  std::mutex mutex_;
  std::condition_variable cv_;
  bool nodes_listed_ = false;
  bool pods_listed_ = false;
  std::thread nodes_, pods_;
};

std::unique_ptr<ClusterWatch> ClusterWatch::Start(KubeClient& client, SchedulerExtender& extender,
                                                  Log log) {
  return std::unique_ptr<ClusterWatch>(
      new ClusterWatch(std::make_unique<Impl>(client, extender, std::move(log))));
}

ClusterWatch::ClusterWatch(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
ClusterWatch::~ClusterWatch() { Stop(); }
void ClusterWatch::Stop() { impl_->Stop(); }

}  // namespace tessera
