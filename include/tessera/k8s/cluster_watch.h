// ClusterWatch: keeps a SchedulerExtender's view of the cluster equal to the
// API server's (docs/kubernetes.md, "Restarts"). Two threads, one for nodes
// labelled tessera.io/gpus and one for bound pods (fieldSelector
// spec.nodeName!=), each lists (paged) and then watches from the list's
// resourceVersion; a watch that ends is resumed, and one refused with 410
// Gone or failing lists again, after a capped backoff (0.5 s doubling to
// 8 s). The extender answers only after both first lists are in
// (SchedulerExtender::MarkSynced).
//
// KubeClientApi is the extender's KubeApi over a KubeClient: GET of a pod,
// and the Binding (POST .../pods/NAME/binding with Tessera's annotations and
// the pod's UID as a precondition).
//
// Problems (a malformed object, a conflicting annotation, a failed list)
// go to `log`, one line each, and never stop the watch.
//
// Thread-safety: Start/Stop from one thread; the watch threads call the
// extender (which is thread-safe) and `log` (which must be).
#ifndef TESSERA_CLUSTER_WATCH_H_
#define TESSERA_CLUSTER_WATCH_H_

#include <functional>
#include <memory>
#include <string>

#include "tessera/k8s/kube_client.h"
#include "tessera/k8s/scheduler_extender.h"
#include "tessera/status.h"

namespace tessera {

class KubeClientApi : public KubeApi {
 public:
  // `client` must outlive this.
  explicit KubeClientApi(KubeClient& client) : client_(client) {}
  Result<nlohmann::json> GetPod(const std::string& ns, const std::string& name) override;
  Status Bind(const PodPlacement& placement) override;

 private:
  KubeClient& client_;
};

class ClusterWatch {
 public:
  using Log = std::function<void(const std::string&)>;
  // Starts the threads. `client` and `extender` must outlive the watch.
  static std::unique_ptr<ClusterWatch> Start(KubeClient& client, SchedulerExtender& extender,
                                             Log log);
  ~ClusterWatch();  // Stop()
  // Ends both watches and joins the threads (within about a second).
  void Stop();

  class Impl;

 private:
  explicit ClusterWatch(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace tessera

#endif  // TESSERA_CLUSTER_WATCH_H_
