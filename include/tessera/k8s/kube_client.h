// KubeClient: a small client of the Kubernetes API server's REST interface,
// enough for the scheduler extender (docs/kubernetes.md): GET, POST, PATCH
// and DELETE of JSON objects, and watches (GET ...?watch=1), over HTTPS
// (cpp-httplib with OpenSSL) or plain HTTP.
//
// Credentials come from a kubeconfig file (the current context, or the one
// named) or are given directly: the server's CA, and a bearer token or a
// client certificate and key. Over HTTPS the server's certificate is always
// verified: against `ca_file` when given, else against the system's CAs
// (there is no insecure-skip-tls-verify). Certificate and key data embedded in
// the kubeconfig (`*-data`, base64) travel in KubeConfig's `*_data` fields;
// Create writes them to files of a private temporary directory (mode 0700,
// files 0600) that the client removes when destroyed.
//
// Errors: a reply other than 2xx is a Status whose message names the method,
// the path, the HTTP code and the API server's own message (its Status
// object's `message`), e.g. "POST /api/v1/namespaces/default/pods/x/binding:
// HTTP 409: <message>"; its code is NotFound for 404, InvalidArgument for
// the other 4xx, IoError for 5xx and anything else. KubeStatusCode()
// recovers the HTTP code from the "HTTP <code>:" of the message (it survives
// Status::WithContext). A connection failure (refused, timed out, TLS
// refused) is an IoError naming the server and the reason, with KubeStatusCode
// 0.
//
// Thread-safety: every method may be called from several threads at once;
// each call opens its own connection (watches hold theirs until they end).
#ifndef TESSERA_KUBE_CLIENT_H_
#define TESSERA_KUBE_CLIENT_H_

#include <atomic>
#include <functional>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>

#include "tessera/status.h"

namespace tessera {

struct KubeConfig {
  std::string server;                   // "https://127.0.0.1:6443" or "http://..."
  std::string ca_file;                  // PEM of the CA that signed the server's certificate
  std::string token;                    // bearer token; empty when a client certificate is used
  std::string client_certificate_file;  // PEM; with client_key_file, or neither
  std::string client_key_file;
  // PEM contents (a kubeconfig's `*-data`, decoded): when not empty, used in
  // place of the matching file above. Create writes each to a file of the
  // client's private temporary directory, and the client's config() names
  // that file in the `*_file` field, with the `*_data` field emptied.
  std::string ca_data;
  std::string client_certificate_data;
  std::string client_key_data;
  double timeout_s = 10;  // connect, read and write timeout of one request (> 0)
};

// Reads a kubeconfig file (YAML): the context `context` (empty: the file's
// current-context), its cluster's `server` and `certificate-authority` or
// `certificate-authority-data`, its user's `token` or `tokenFile` (kubectl's
// spelling; `token-file` is accepted too; `token` wins when both are there),
// and/or `client-certificate(-data)` and `client-key(-data)`. A `*-data` field
// wins over its file field, as in kubectl. Relative paths are relative to the
// file's directory; named files must exist. A user with `exec` or
// `auth-provider` and no token or certificate, and a cluster with
// `insecure-skip-tls-verify: true`, are refused (not supported).
// InvalidArgument "<file>:<line>: field '<path>': <why>" naming the missing or
// bad field (e.g. "contexts[0].context.cluster": no cluster named 'x');
// IoError when the file cannot be read.
Result<KubeConfig> LoadKubeconfig(const std::string& path, const std::string& context = "");

// The HTTP status of a Status returned by KubeClient for a non-2xx reply or a
// watch's ERROR event (404, 409, 410, ...): the first "HTTP <3 digits>:" of
// its message; 0 for OK and for any other Status.
int KubeStatusCode(const Status& status);

// One event of a watch: type ADDED, MODIFIED, DELETED, BOOKMARK or ERROR,
// and the object (for ERROR, the API server's Status object).
struct WatchEvent {
  std::string type;
  nlohmann::json object;
};

class KubeClient {
 public:
  // InvalidArgument when the server URL is not http(s)://HOST[:PORT][/], a
  // named file is missing, only one of the client certificate and key is
  // given, or timeout_s is not > 0; IoError when the temporary directory
  // cannot be written.
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
  // `resource_version` (empty: omitted, the API server's "any"), with
  // allowWatchBookmarks, for at most `timeout_s` (>= 1) seconds of server
  // time (timeoutSeconds): GET path + ('?' or '&') + "watch=1&
  // allowWatchBookmarks=true&resourceVersion=RV&timeoutSeconds=T". Calls
  // `on_event` for each event in order, from the calling thread; `on_event`
  // returning false ends the watch. Also ends when `stop` becomes true or the
  // server closes the stream. Returns the resourceVersion of the last event
  // seen, BOOKMARKs included (or `resource_version` when none): ending by
  // `on_event`, by `stop` or by the server's close is OK. An ERROR event is
  // returned as a Status with its object's code (410: the version is too
  // old, list again) and message; a non-2xx reply as for Get.
  //
  // How it ends promptly: the stream's read timeout is timeout_s +
  // config().timeout_s, so that a quiet but healthy watch is not cut short
  // (the server ends it first, and sends BOOKMARKs meanwhile); a silent
  // server past that is an IoError. Since cpp-httplib cannot resume a
  // response after a read timeout, `stop` is not polled by short reads:
  // when `stop` is given, a watchdog thread polls it every 100 ms and, once
  // true, shuts the connection's socket down (httplib's ClientImpl::stop),
  // which wakes the blocked read at once; the stream's receiver also checks
  // `stop` on every chunk. So Watch returns within about 100 ms of `stop`
  // becoming true, even from a silent server (a connection still being made
  // is shut down once made, within config().timeout_s).
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
