// What the kube client (kube_client.cc) and the kubeconfig reader
// (kubeconfig.cc) share: the API server's URL and a file check. Internal to
// the k8s floor.
#ifndef TESSERA_K8S_KUBE_SERVER_URL_H_
#define TESSERA_K8S_KUBE_SERVER_URL_H_

#include <string>

#include "tessera/status.h"

namespace tessera {

struct ServerUrl {
  bool https = false;
  std::string host;
  int port = 0;
};

// "http(s)://HOST[:PORT][/]"; the reason otherwise.
Result<ServerUrl> ParseServerUrl(const std::string& url);

// True iff `path` names a regular file (following links).
bool IsRegularFile(const std::string& path);

}  // namespace tessera

#endif  // TESSERA_K8S_KUBE_SERVER_URL_H_
