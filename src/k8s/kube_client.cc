// KubeClient on cpp-httplib (include/tessera/k8s/kube_client.h): the
// transport. A watch's body is decoded by WatchStream (watch_stream.h), the
// kubeconfig read by kubeconfig.cc.
#include "tessera/k8s/kube_client.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <httplib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <condition_variable>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <mutex>
#include <optional>
#include <string_view>
#include <thread>
#include <utility>
#include <vector>

#include "k8s/kube_errors.h"
#include "k8s/kube_server_url.h"
#include "k8s/watch_stream.h"
#include "tessera/util/text_io.h"
#include "util/http_endpoint.h"

namespace tessera {
namespace {

namespace fs = std::filesystem;
using Json = nlohmann::json;

// Why a verification by OpenSSL failed, for the codes a misconfigured CA or
// certificate gives (X509_V_ERR_*; the names are macros of the headers, so
// no libcrypto symbol is needed).
std::string VerifyErrorText(long code) {
  switch (code) {
    case X509_V_ERR_UNABLE_TO_GET_ISSUER_CERT:
    case X509_V_ERR_UNABLE_TO_GET_ISSUER_CERT_LOCALLY:
    case X509_V_ERR_UNABLE_TO_VERIFY_LEAF_SIGNATURE:
      return "not signed by a trusted CA (unable to get the issuer certificate)";
    case X509_V_ERR_DEPTH_ZERO_SELF_SIGNED_CERT:
      return "self-signed and not trusted";
    case X509_V_ERR_SELF_SIGNED_CERT_IN_CHAIN:
      return "its chain ends in a self-signed CA that is not trusted";
    case X509_V_ERR_CERT_NOT_YET_VALID:
      return "not valid yet";
    case X509_V_ERR_CERT_HAS_EXPIRED:
      return "expired";
    case X509_V_ERR_CERT_SIGNATURE_FAILURE:
      return "its signature is invalid";
    default:
      return fmt::format("OpenSSL verify error {}", code);
  }
}

// Writes `data` to a new file `path`, mode 0600.
Status WritePrivateFile(const std::string& path, std::string_view data) {
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
  if (fd < 0)
    return Status::IoError(fmt::format("{}: cannot create: {}", path, std::strerror(errno)));
  size_t done = 0;
  while (done < data.size()) {
    const ssize_t n = ::write(fd, data.data() + done, data.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      const int err = errno;
      ::close(fd);
      return Status::IoError(fmt::format("{}: write failed: {}", path, std::strerror(err)));
    }
    done += static_cast<size_t>(n);
  }
  if (::close(fd) != 0) {
    return Status::IoError(fmt::format("{}: write failed: {}", path, std::strerror(errno)));
  }
  return Status::Ok();
}

// The first "HTTP <3 digits>:" of `message`, at its start or after ": ".
int ParseHttpCode(std::string_view message) {
  constexpr std::string_view kMark = "HTTP ";
  for (size_t at = message.find(kMark); at != std::string_view::npos;
       at = message.find(kMark, at + 1)) {
    if (at != 0 && (at < 2 || message.substr(at - 2, 2) != ": ")) continue;
    const std::string_view rest = message.substr(at + kMark.size());
    if (rest.size() < 4 || rest[3] != ':') continue;
    int code = 0;
    bool digits = true;
    for (int i = 0; i < 3; ++i) {
      if (rest[i] < '0' || rest[i] > '9') digits = false;
      code = code * 10 + (rest[i] - '0');
    }
    if (digits && code >= 100) return code;
  }
  return 0;
}

void SetTimeout(double seconds, const std::function<void(time_t, time_t)>& set) {
  const auto whole = static_cast<time_t>(seconds);
  set(whole, static_cast<time_t>((seconds - static_cast<double>(whole)) * 1e6));
}

}  // namespace

Result<ServerUrl> ParseServerUrl(const std::string& url) {
  const auto bad = [](std::string why) { return Status::InvalidArgument(std::move(why)); };
  ServerUrl server;
  std::string rest;
  if (url.rfind("https://", 0) == 0) {
    server.https = true;
    server.port = 443;
    rest = url.substr(8);
  } else if (url.rfind("http://", 0) == 0) {
    server.port = 80;
    rest = url.substr(7);
  } else {
    return bad("expected a URL starting with https:// or http://");
  }
  if (!rest.empty() && rest.back() == '/') rest.pop_back();
  if (rest.find_first_of("/?#") != std::string::npos) return bad("a path is not allowed");
  if (rest.find('@') != std::string::npos) return bad("user information is not allowed");
  size_t colon = rest.rfind(':');
  if (!rest.empty() && rest.front() == '[') {  // [::1]:6443
    const size_t close = rest.find(']');
    if (close == std::string::npos) return bad("unclosed '['");
    server.host = rest.substr(1, close - 1);
    if (rest.size() == close + 1) {
      colon = std::string::npos;
    } else if (rest[close + 1] == ':') {
      colon = close + 1;
    } else {
      return bad("junk after ']'");
    }
  } else {
    server.host = rest.substr(0, colon);
  }
  if (server.host.empty()) return bad("no host");
  if (colon != std::string::npos) {
    const std::optional<int> port = ToPort(std::string_view(rest).substr(colon + 1));
    if (!port) return bad("the port must be 1..65535");
    server.port = *port;
  }
  return server;
}

bool IsRegularFile(const std::string& path) {
  std::error_code ec;
  return fs::is_regular_file(path, ec);
}

int KubeStatusCode(const Status& status) {
  if (status.ok()) return 0;
  return ParseHttpCode(status.message());
}

class KubeClient::Impl {
 public:
  Impl(KubeConfig config, ServerUrl server)
      : config_(std::move(config)), server_(std::move(server)) {}
  ~Impl() {
    if (!temp_dir_.empty()) {
      std::error_code ec;
      fs::remove_all(temp_dir_, ec);
    }
  }
  Impl(const Impl&) = delete;
  Impl& operator=(const Impl&) = delete;

  // Writes the `*_data` of the config to files of a new private directory.
  Status WriteDataFiles() {
    struct Item {
      std::string* data;
      std::string* file;
      const char* name;
    };
    const std::array<Item, 3> items = {{
        {&config_.ca_data, &config_.ca_file, "ca.crt"},
        {&config_.client_certificate_data, &config_.client_certificate_file, "client.crt"},
        {&config_.client_key_data, &config_.client_key_file, "client.key"},
    }};
    bool any = false;
    for (const Item& item : items) any = any || !item.data->empty();
    if (!any) return Status::Ok();
    const char* tmp = std::getenv("TMPDIR");
    std::string pattern =
        std::string(tmp != nullptr && *tmp != '\0' ? tmp : "/tmp") + "/tessera-kube-XXXXXX";
    if (::mkdtemp(pattern.data()) == nullptr) {
      return Status::IoError(fmt::format("{}: cannot create a private temporary directory: {}",
                                         pattern, std::strerror(errno)));
    }
    temp_dir_ = pattern;  // mkdtemp makes it 0700
    for (const Item& item : items) {
      if (item.data->empty()) continue;
      const std::string path = temp_dir_ + "/" + item.name;
      TESSERA_RETURN_IF_ERROR(WritePrivateFile(path, *item.data));
      *item.file = path;
      item.data->clear();
    }
    return Status::Ok();
  }

  const KubeConfig& config() const { return config_; }

  // One connection's client. `ssl` is the same object when HTTPS.
  struct Connection {
    std::unique_ptr<httplib::ClientImpl> client;
    httplib::SSLClient* ssl = nullptr;
  };

  Result<Connection> Connect(std::string_view what, double read_timeout_s) const {
    Connection c;
    if (server_.https) {
      auto ssl = config_.client_certificate_file.empty()
                     ? std::make_unique<httplib::SSLClient>(server_.host, server_.port)
                     : std::make_unique<httplib::SSLClient>(server_.host, server_.port,
                                                            config_.client_certificate_file,
                                                            config_.client_key_file);
      if (!ssl->is_valid()) {
        return Status::InvalidArgument(fmt::format(
            "{}: cannot load the client certificate {} and key {} (PEM, a matching pair)", what,
            QuoteForMessage(config_.client_certificate_file),
            QuoteForMessage(config_.client_key_file)));
      }
      if (!config_.ca_file.empty()) ssl->set_ca_cert_path(config_.ca_file);
      ssl->enable_server_certificate_verification(true);
      c.ssl = ssl.get();
      c.client = std::move(ssl);
    } else {
      c.client = std::make_unique<httplib::ClientImpl>(server_.host, server_.port);
    }
    httplib::ClientImpl& client = *c.client;
    SetTimeout(config_.timeout_s,
               [&](time_t s, time_t us) { client.set_connection_timeout(s, us); });
    SetTimeout(read_timeout_s, [&](time_t s, time_t us) { client.set_read_timeout(s, us); });
    SetTimeout(config_.timeout_s, [&](time_t s, time_t us) { client.set_write_timeout(s, us); });
    if (!config_.token.empty()) client.set_bearer_token_auth(config_.token);
    client.set_default_headers({{"Accept", "application/json"}, {"User-Agent", "tessera"}});
    client.set_keep_alive(false);
    return c;
  }

  // A connection failure: IoError naming the server and the reason.
  Status ConnectionError(std::string_view what, httplib::Error error, const Connection& c) const {
    std::string why;
    switch (error) {
      case httplib::Error::Connection:
        why = "cannot connect (connection refused, or no route to the host)";
        break;
      case httplib::Error::ConnectionTimeout:
        why = fmt::format("no connection within {} s", config_.timeout_s);
        break;
      case httplib::Error::Read:
        why = "the connection failed or timed out while reading the reply";
        break;
      case httplib::Error::Write:
        why = "the connection failed while sending the request";
        break;
      case httplib::Error::SSLConnection:
        why = config_.client_certificate_file.empty()
                  ? "the TLS handshake failed (is it an HTTPS server?)"
                  : "the TLS handshake failed (is it an HTTPS server? does it accept the client "
                    "certificate " +
                        QuoteForMessage(config_.client_certificate_file) + "?)";
        break;
      case httplib::Error::SSLLoadingCerts:
        why = config_.ca_file.empty()
                  ? "cannot load the system's CA certificates"
                  : "cannot load the CA certificates of " + QuoteForMessage(config_.ca_file);
        break;
      case httplib::Error::SSLServerVerification: {
        const long verify = c.ssl != nullptr ? c.ssl->get_openssl_verify_result() : 0;
        const std::string against = config_.ca_file.empty()
                                        ? "the system's CAs"
                                        : "the CA of " + QuoteForMessage(config_.ca_file);
        why = verify != X509_V_OK
                  ? fmt::format("the server's certificate does not verify against {}: {}", against,
                                VerifyErrorText(verify))
                  : fmt::format("the server's certificate does not name the host {}",
                                QuoteForMessage(server_.host));
        break;
      }
      case httplib::Error::Compression:
        why = "the reply's compressed body is malformed";
        break;
      default:
        why = "the request failed (" + httplib::to_string(error) + ")";
        break;
    }
    if (server_.https && (error == httplib::Error::Read || error == httplib::Error::Write)) {
      // TLS 1.3 ends the handshake before the server checks the client's
      // certificate: a refusal shows only as a broken connection.
      why += config_.client_certificate_file.empty()
                 ? " (a server that requires a client certificate ends the connection so)"
                 : " (a server that refuses the client certificate " +
                       QuoteForMessage(config_.client_certificate_file) +
                       " ends the connection so)";
    }
    return Status::IoError(fmt::format("{}: {}: {}", what, config_.server, why));
  }

  Result<Json> Call(const std::string& method, const std::string& path, const Json* body,
                    const std::string& content_type) const {
    const std::string what = method + " " + path;
    TESSERA_ASSIGN_OR_RETURN(Connection c, Connect(what, config_.timeout_s));
    httplib::Result res = method == "GET"     ? c.client->Get(path)
                          : method == "POST"  ? c.client->Post(path, body->dump(), content_type)
                          : method == "PATCH" ? c.client->Patch(path, body->dump(), content_type)
                                              : c.client->Delete(path);
    if (!res) return ConnectionError(what, res.error(), c);
    if (res->status < 200 || res->status > 299) {
      return HttpError(what, res->status, ServerMessage(res->body));
    }
    if (IsBlank(res->body)) return Json();
    Json json = Json::parse(res->body, nullptr, false);
    if (json.is_discarded()) {
      return Status::IoError(fmt::format("{}: HTTP {} reply is not JSON: {}", what, res->status,
                                         QuoteForMessage(res->body)));
    }
    return json;
  }

  Result<std::string> Watch(const std::string& path, const std::string& resource_version,
                            int timeout_s, const std::function<bool(const WatchEvent&)>& on_event,
                            const std::atomic<bool>* stop) const {
    const std::string what = "watch " + path;
    if (timeout_s < 1) {
      return Status::InvalidArgument(
          fmt::format("{}: timeout_s must be at least 1, got {}", what, timeout_s));
    }
    std::string full = path + (path.find('?') == std::string::npos ? "?" : "&") +
                       "watch=1&allowWatchBookmarks=true";
    if (!resource_version.empty()) {
      full += "&resourceVersion=" + EncodeQueryValue(resource_version);
    }
    full += "&timeoutSeconds=" + std::to_string(timeout_s);

    TESSERA_ASSIGN_OR_RETURN(Connection c, Connect(what, timeout_s + config_.timeout_s));
    const auto stopped = [stop] { return stop != nullptr && stop->load(); };
    if (stopped()) return resource_version;

    int http_status = 0;
    std::string error_body;  // of a non-2xx reply
    WatchStream stream(what, resource_version, on_event);
    const auto on_response = [&](const httplib::Response& response) {
      http_status = response.status;
      return !stopped();
    };
    const auto on_data = [&](const char* data, size_t size) -> bool {
      if (stopped()) return false;
      if (http_status < 200 || http_status > 299) {
        if (error_body.size() < kMaxMessageBytes * 4) error_body.append(data, size);
        return true;
      }
      return stream.Feed(std::string_view(data, size));
    };

    // The watchdog: once `stop` is true, shut the connection down, waking a
    // read blocked on a silent server. stop() is safe from another thread
    // while a request is in flight (it only shuts the socket down then);
    // while connecting it waits for the connection, then shuts it down.
    std::mutex mu;
    std::condition_variable cv;
    bool done = false;
    std::thread watchdog;
    if (stop != nullptr) {
      watchdog = std::thread([&] {
        std::unique_lock<std::mutex> lock(mu);
        while (!done) {
          if (stop->load()) c.client->stop();
          cv.wait_for(lock, std::chrono::milliseconds(100));
        }
      });
    }
    const httplib::Result res = c.client->Get(full, httplib::Headers{}, on_response, on_data);
    if (watchdog.joinable()) {
      {
        std::lock_guard<std::mutex> lock(mu);
        done = true;
      }
      cv.notify_all();
      watchdog.join();
    }

    if (stream.error()) return *stream.error();
    if (stream.ended_by_caller() || stopped()) return stream.last_version();
    if (http_status != 0 && (http_status < 200 || http_status > 299)) {
      return HttpError(what, http_status, ServerMessage(error_body));
    }
    if (!res) return ConnectionError(what, res.error(), c);
    stream.Finish();
    if (stream.error()) return *stream.error();
    return stream.last_version();
  }

 private:
  KubeConfig config_;
  ServerUrl server_;
  std::string temp_dir_;  // of the `*_data` files; empty when none
};

Result<std::unique_ptr<KubeClient>> KubeClient::Create(KubeConfig config) {
  Result<ServerUrl> server = ParseServerUrl(config.server);
  if (!server.ok()) {
    return Status::InvalidArgument(fmt::format(
        "Kubernetes API server {}: {}; give http(s)://HOST[:PORT], e.g. https://127.0.0.1:6443",
        QuoteForMessage(config.server), server.status().message()));
  }
  if (!(config.timeout_s > 0) || !std::isfinite(config.timeout_s)) {
    return Status::InvalidArgument(fmt::format(
        "Kubernetes client timeout_s must be a finite number > 0, got {}", config.timeout_s));
  }
  const bool has_cert =
      !config.client_certificate_file.empty() || !config.client_certificate_data.empty();
  const bool has_key = !config.client_key_file.empty() || !config.client_key_data.empty();
  if (has_cert != has_key) {
    return Status::InvalidArgument(has_cert
                                       ? "Kubernetes client: a client certificate without its key"
                                       : "Kubernetes client: a client key without its certificate");
  }
  const std::array<std::pair<const std::string*, const std::string*>, 3> files = {{
      {&config.ca_file, &config.ca_data},
      {&config.client_certificate_file, &config.client_certificate_data},
      {&config.client_key_file, &config.client_key_data},
  }};
  static constexpr std::array<const char*, 3> kNames = {"CA file", "client certificate file",
                                                        "client key file"};
  for (size_t i = 0; i < files.size(); ++i) {
    const auto& [file, data] = files[i];
    if (data->empty() && !file->empty() && !IsRegularFile(*file)) {
      return Status::InvalidArgument(
          fmt::format("Kubernetes client: {} {}: no such file", kNames[i], QuoteForMessage(*file)));
    }
  }
  auto impl = std::make_unique<Impl>(std::move(config), std::move(server).value());
  TESSERA_RETURN_IF_ERROR(impl->WriteDataFiles());
  return std::unique_ptr<KubeClient>(new KubeClient(std::move(impl)));
}

KubeClient::KubeClient(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
KubeClient::~KubeClient() = default;

const KubeConfig& KubeClient::config() const { return impl_->config(); }

Result<Json> KubeClient::Get(const std::string& path) {
  return impl_->Call("GET", path, nullptr, "");
}

Result<Json> KubeClient::Post(const std::string& path, const Json& body) {
  return impl_->Call("POST", path, &body, "application/json");
}

Result<Json> KubeClient::MergePatch(const std::string& path, const Json& patch) {
  return impl_->Call("PATCH", path, &patch, "application/merge-patch+json");
}

Result<Json> KubeClient::Delete(const std::string& path) {
  return impl_->Call("DELETE", path, nullptr, "");
}

Result<std::string> KubeClient::Watch(const std::string& path, const std::string& resource_version,
                                      int timeout_s,
                                      const std::function<bool(const WatchEvent&)>& on_event,
                                      const std::atomic<bool>* stop) {
  return impl_->Watch(path, resource_version, timeout_s, on_event, stop);
}

}  // namespace tessera
