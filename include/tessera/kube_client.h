// KubeClient: a small client of the Kubernetes API server's REST interface,
// enough for the scheduler extender (docs/kubernetes.md): GET, POST, PATCH
// and DELETE of JSON objects, and watches (GET ...?watch=1), over HTTPS
// (cpp-httplib with OpenSSL) or plain HTTP.
//
// Credentials come from a kubeconfig file (the current context, or the one
// named) or are given directly: the server's CA, and a bearer token or a
// client certificate and key. Certificate and key data embedded in the
// kubeconfig (`*-data`, base64) are written to files of a private temporary
// directory (mode 0700) that the client removes when destroyed.
//
// Errors: a reply other than 2xx is a Status whose message names the method,
// the path, the HTTP code and the API server's own message (its Status
// object's `message`); KubeStatusCode() recovers the HTTP code. A
// connection failure is an IoError naming the server.
//
// Thread-safety: every method may be called from several threads at once;
// each call opens its own connection (watches hold theirs until they end).
#ifndef TESSERA_KUBE_CLIENT_H_
#define TESSERA_KUBE_CLIENT_H_

#include <atomic>
#include <functional>
#include <memory>
#include <string>

#include <nlohmann/json.hpp>

#include "tessera/status.h"

namespace tessera {

struct KubeConfig {
  std::string server;  // "https://127.0.0.1:6443" or "http://..."
  std::string ca_file;  // PEM of the CA that signed the server's certificate
  std::string token;    // bearer token; empty when a client certificate is used
  std::string client_certificate_file;
  std::string client_key_file;
  double timeout_s = 10;  // connect, read and write timeout of one request
};

// Reads a kubeconfig file (YAML): the context `context` (empty: the file's
// current-context), its cluster's `server` and `certificate-authority` or
// `certificate-authority-data`, its user's `token` or `token-file`, or
// `client-certificate(-data)` and `client-key(-data)`. Relative paths are
// relative to the file's directory. InvalidArgument naming the file and the
// missing or bad field; IoError when it cannot be read.
Result<KubeConfig> LoadKubeconfig(const std::string& path, const std::string& context = "");

// The HTTP status of a Status returned by KubeClient for a non-2xx reply
// (404, 409, 410, ...); 0 for any other Status.
int KubeStatusCode(const Status& status);

// One event of a watch: type ADDED, MODIFIED, DELETED, BOOKMARK or ERROR,
// and the object (for ERROR, the API server's Status object).
struct WatchEvent {
  std::string type;
  nlohmann::json object;
};

class KubeClient {
 public:
  // InvalidArgument when the server URL is not http(s)://HOST[:PORT], or a
  // named file is missing.
  static Result<std::unique_ptr<KubeClient>> Create(KubeConfig config);
  ~KubeClient();

  const KubeConfig& config() const;

  // `path` is the API path with its query ("/api/v1/pods?labelSelector=x").
  Result<nlohmann::json> Get(const std::string& path);
  Result<nlohmann::json> Post(const std::string& path, const nlohmann::json& body);
  // A JSON merge patch (application/merge-patch+json).
  Result<nlohmann::json> MergePatch(const std::string& path, const nlohmann::json& patch);
  Result<nlohmann::json> Delete(const std::string& path);

  // Watches `path` (a collection, e.g. "/api/v1/pods") from
  // `resource_version`, with allowWatchBookmarks, for at most `timeout_s`
  // seconds of server time (timeoutSeconds). Calls `on_event` for each event
  // in order; `on_event` returning false ends the watch. Also ends when
  // `stop` becomes true (checked at least every second) or the server closes
  // the stream. Returns the resourceVersion of the last event seen (or
  // `resource_version` when none). An ERROR event with code 410 (the
  // version is too old: list again) is returned as a Status with
  // KubeStatusCode 410.
  Result<std::string> Watch(const std::string& path, const std::string& resource_version,
                            int timeout_s, const std::function<bool(const WatchEvent&)>& on_event,
                            const std::atomic<bool>* stop = nullptr);

  class Impl;

 private:
  explicit KubeClient(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace tessera

#endif  // TESSERA_KUBE_CLIENT_H_
