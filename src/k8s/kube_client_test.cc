// KubeClient against an in-test HTTP(S) server on 127.0.0.1 (cpp-httplib,
// any port) that imitates the API server's HTTP mechanics only, not its
// logic: JSON round trips with the bearer token, the merge-patch content
// type, error replies with a Kubernetes Status body, a refused connection,
// watches whose events arrive in odd chunk splits (with a BOOKMARK), ended by
// the caller, by `stop` on a silent server and by a 410 ERROR event, and TLS
// with a CA and a client certificate made by the openssl CLI. Then
// LoadKubeconfig: relative paths, `*-data`, tokens, contexts and its errors.
#include "tessera/k8s/kube_client.h"

#include <arpa/inet.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <httplib.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <memory>
#include <mutex>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "test_paths.h"
#include "util/base64.h"

namespace tessera {
namespace {

namespace fs = std::filesystem;
using Json = nlohmann::json;
using ::testing::HasSubstr;
using ::testing::StartsWith;

constexpr char kToken[] = "test-token-123";

std::string StatusBody(int code, const std::string& reason, const std::string& message) {
  return Json{{"kind", "Status"},    {"apiVersion", "v1"}, {"metadata", Json::object()},
              {"status", "Failure"}, {"message", message}, {"reason", reason},
              {"code", code}}
      .dump();
}

// An httplib::Server (or SSLServer) on 127.0.0.1, any port, serving on its
// own thread. Handlers that wait (a silent watch) poll released() so that
// the destructor can end them.
class TestServer {
 public:
  explicit TestServer(std::unique_ptr<httplib::Server> server = std::make_unique<httplib::Server>())
      : server_(std::move(server)) {}
  ~TestServer() {
    released_ = true;
    if (thread_.joinable()) {
      server_->stop();
      thread_.join();
    }
  }

  httplib::Server& server() { return *server_; }
  bool released() const { return released_; }

  void Start() {
    ASSERT_TRUE(server_->is_valid());
    port_ = server_->bind_to_any_port("127.0.0.1");
    ASSERT_GT(port_, 0);
    thread_ = std::thread([this] { server_->listen_after_bind(); });
    // stop() does nothing before the loop runs: wait for it.
    while (!server_->is_running()) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  std::string url(const std::string& scheme = "http") const {
    return scheme + "://127.0.0.1:" + std::to_string(port_);
  }

 private:
  std::unique_ptr<httplib::Server> server_;
  std::thread thread_;
  int port_ = 0;
  std::atomic<bool> released_{false};
};

// True when the request carries the test's bearer token; otherwise answers
// 401 with a Status body.
bool Authorized(const httplib::Request& req, httplib::Response& res) {
  if (req.get_header_value("Authorization") == std::string("Bearer ") + kToken) return true;
  res.status = 401;
  res.set_content(StatusBody(401, "Unauthorized", "Unauthorized"), "application/json");
  return false;
}

// Serves `pieces` as the chunks of a chunked reply, a few milliseconds apart,
// then (unless `hold`) ends it; with `hold` it stays open, silent, until
// the server is released.
void ServeChunks(TestServer* server, httplib::Response& res, std::vector<std::string> pieces,
                 bool hold) {
  res.set_chunked_content_provider("application/json", [server, pieces = std::move(pieces), hold](
                                                           size_t, httplib::DataSink& sink) {
    for (const std::string& piece : pieces) {
      if (!sink.write(piece.data(), piece.size())) return false;
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    while (hold && !server->released()) {
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    sink.done();
    return true;
  });
}

// Splits `text` at the given offsets (ascending).
std::vector<std::string> SplitAt(const std::string& text, const std::vector<size_t>& offsets) {
  std::vector<std::string> pieces;
  size_t from = 0;
  for (size_t at : offsets) {
    pieces.push_back(text.substr(from, at - from));
    from = at;
  }
  pieces.push_back(text.substr(from));
  return pieces;
}

std::unique_ptr<KubeClient> NewClient(const std::string& server, KubeConfig config = {}) {
  config.server = server;
  if (config.token.empty() && config.client_certificate_file.empty() &&
      config.client_certificate_data.empty()) {
    config.token = kToken;
  }
  config.timeout_s = 2;
  Result<std::unique_ptr<KubeClient>> client = KubeClient::Create(std::move(config));
  EXPECT_TRUE(client.ok()) << client.status().ToString();
  return client.ok() ? std::move(client).value() : nullptr;
}

std::string ReadAll(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream out;
  out << in.rdbuf();
  return out.str();
}

// --- HTTP ------------------------------------------------------------------

TEST(KubeClientTest, JsonRoundTripsSendTheBearerTokenAndContentTypes) {
  TestServer api;
  std::mutex mu;
  std::vector<std::string> seen;  // "METHOD path content-type body"
  const auto record = [&](const httplib::Request& req) {
    std::lock_guard<std::mutex> lock(mu);
    seen.push_back(req.method + " " + req.target + " " + req.get_header_value("Content-Type") +
                   " " + req.body);
  };
  api.server().Get("/api/v1/namespaces/default/pods/x", [&](const httplib::Request& req,
                                                            httplib::Response& res) {
    record(req);
    if (!Authorized(req, res)) return;
    EXPECT_EQ(req.get_header_value("Accept"), "application/json");
    res.set_content(R"({"kind":"Pod","metadata":{"name":"x"}})", "application/json");
  });
  api.server().Get("/api/v1/pods", [&](const httplib::Request& req, httplib::Response& res) {
    record(req);
    if (!Authorized(req, res)) return;
    res.set_content(
        Json{{"kind", "PodList"}, {"selector", req.get_param_value("labelSelector")}}.dump(),
        "application/json");
  });
  api.server().Post("/api/v1/namespaces/default/pods/x/binding", [&](const httplib::Request& req,
                                                                     httplib::Response& res) {
    record(req);
    if (!Authorized(req, res)) return;
    res.status = 201;
    res.set_content(R"({"kind":"Status","status":"Success","code":201})", "application/json");
  });
  api.server().Patch("/api/v1/nodes/n1", [&](const httplib::Request& req, httplib::Response& res) {
    record(req);
    if (!Authorized(req, res)) return;
    if (req.get_header_value("Content-Type") != "application/merge-patch+json") {
      res.status = 415;
      res.set_content(StatusBody(415, "UnsupportedMediaType", "wrong patch type"),
                      "application/json");
      return;
    }
    Json node = {{"metadata", {{"name", "n1"}, {"labels", {{"a", "1"}}}}}};
    node.merge_patch(Json::parse(req.body));
    res.set_content(node.dump(), "application/json");
  });
  api.server().Delete("/api/v1/namespaces/default/pods/x", [&](const httplib::Request& req,
                                                               httplib::Response& res) {
    record(req);
    if (!Authorized(req, res)) return;
    res.set_content(R"({"kind":"Pod","metadata":{"name":"x"}})", "application/json");
  });
  api.Start();
  std::unique_ptr<KubeClient> client = NewClient(api.url());
  ASSERT_NE(client, nullptr);

  Result<Json> pod = client->Get("/api/v1/namespaces/default/pods/x");
  ASSERT_TRUE(pod.ok()) << pod.status().ToString();
  EXPECT_EQ((*pod)["metadata"]["name"], "x");

  Result<Json> list = client->Get("/api/v1/pods?labelSelector=app%3Dtriton");
  ASSERT_TRUE(list.ok()) << list.status().ToString();
  EXPECT_EQ((*list)["selector"], "app=triton");

  const Json binding = {{"apiVersion", "v1"},
                        {"kind", "Binding"},
                        {"metadata", {{"name", "x"}}},
                        {"target", {{"kind", "Node"}, {"name", "n1"}}}};
  Result<Json> bound = client->Post("/api/v1/namespaces/default/pods/x/binding", binding);
  ASSERT_TRUE(bound.ok()) << bound.status().ToString();
  EXPECT_EQ((*bound)["code"], 201);

  Result<Json> patched = client->MergePatch(
      "/api/v1/nodes/n1", {{"metadata", {{"labels", {{"b", "2"}, {"a", nullptr}}}}}});
  ASSERT_TRUE(patched.ok()) << patched.status().ToString();
  EXPECT_EQ((*patched)["metadata"]["labels"], Json({{"b", "2"}}));

  Result<Json> deleted = client->Delete("/api/v1/namespaces/default/pods/x");
  ASSERT_TRUE(deleted.ok()) << deleted.status().ToString();
  EXPECT_EQ((*deleted)["kind"], "Pod");

  std::lock_guard<std::mutex> lock(mu);
  ASSERT_EQ(seen.size(), 5u);
  EXPECT_THAT(seen[2],
              StartsWith("POST /api/v1/namespaces/default/pods/x/binding application/json {"));
  EXPECT_EQ(Json::parse(seen[2].substr(seen[2].find('{'))), binding);
  EXPECT_THAT(seen[3], StartsWith("PATCH /api/v1/nodes/n1 application/merge-patch+json {"));
  EXPECT_THAT(seen[4], StartsWith("DELETE /api/v1/namespaces/default/pods/x "));
}

TEST(KubeClientTest, ErrorRepliesCarryTheServersMessageAndCode) {
  TestServer api;
  api.server().Get("/api/v1/namespaces/default/pods/missing", [](const httplib::Request&,
                                                                 httplib::Response& res) {
    res.status = 404;
    res.set_content(StatusBody(404, "NotFound", "pods \"missing\" not found"), "application/json");
  });
  api.server().Post("/api/v1/namespaces/default/pods/x/binding", [](const httplib::Request&,
                                                                    httplib::Response& res) {
    res.status = 409;
    res.set_content(StatusBody(409, "Conflict", "pod x is already assigned to node \"n2\""),
                    "application/json");
  });
  api.server().Get("/api/v1/nodes", [](const httplib::Request&, httplib::Response& res) {
    res.status = 503;
    res.set_content("upstream unavailable\n", "text/plain");
  });
  api.Start();
  std::unique_ptr<KubeClient> client = NewClient(api.url());
  ASSERT_NE(client, nullptr);

  Result<Json> missing = client->Get("/api/v1/namespaces/default/pods/missing");
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.status().code(), StatusCode::kNotFound);
  EXPECT_EQ(missing.status().message(),
            "GET /api/v1/namespaces/default/pods/missing: HTTP 404: pods \"missing\" not found");
  EXPECT_EQ(KubeStatusCode(missing.status()), 404);

  Result<Json> conflict = client->Post("/api/v1/namespaces/default/pods/x/binding", Json::object());
  ASSERT_FALSE(conflict.ok());
  EXPECT_EQ(conflict.status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(conflict.status().message(),
            "POST /api/v1/namespaces/default/pods/x/binding: HTTP 409: pod x is already "
            "assigned to node \"n2\"");
  EXPECT_EQ(KubeStatusCode(conflict.status()), 409);
  EXPECT_EQ(KubeStatusCode(conflict.status().WithContext("binding pod x")), 409);

  Result<Json> unavailable = client->Get("/api/v1/nodes");
  ASSERT_FALSE(unavailable.ok());
  EXPECT_EQ(unavailable.status().code(), StatusCode::kIoError);
  EXPECT_EQ(unavailable.status().message(), "GET /api/v1/nodes: HTTP 503: upstream unavailable");
  EXPECT_EQ(KubeStatusCode(unavailable.status()), 503);

  // No token: the server's 401.
  KubeConfig anonymous;
  anonymous.server = api.url();
  Result<std::unique_ptr<KubeClient>> no_token = KubeClient::Create(anonymous);
  ASSERT_TRUE(no_token.ok());
  api.server().Get("/api/v1/secrets", [](const httplib::Request& req, httplib::Response& res) {
    Authorized(req, res);
  });
  Result<Json> refused = (*no_token)->Get("/api/v1/secrets");
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(KubeStatusCode(refused.status()), 401);

  EXPECT_EQ(KubeStatusCode(Status::Ok()), 0);
  EXPECT_EQ(KubeStatusCode(Status::IoError("GET /x: http://h:1: cannot connect")), 0);
  EXPECT_EQ(KubeStatusCode(Status::InvalidArgument("f.yaml:3: field 'HTTP 404': bad")), 0);
}

TEST(KubeClientTest, ConnectionRefusedNamesTheServer) {
  // A port nothing listens on: bound, then closed.
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  ASSERT_GE(fd, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ASSERT_EQ(::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)), 0);
  socklen_t size = sizeof(addr);
  ASSERT_EQ(::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &size), 0);
  ::close(fd);
  const std::string url = "http://127.0.0.1:" + std::to_string(ntohs(addr.sin_port));

  std::unique_ptr<KubeClient> client = NewClient(url);
  ASSERT_NE(client, nullptr);
  Result<Json> got = client->Get("/api/v1/pods");
  ASSERT_FALSE(got.ok());
  EXPECT_EQ(got.status().code(), StatusCode::kIoError);
  EXPECT_THAT(got.status().message(), StartsWith("GET /api/v1/pods: " + url + ": cannot connect"));
  EXPECT_EQ(KubeStatusCode(got.status()), 0);

  std::atomic<bool> stop{false};
  Result<std::string> watched =
      client->Watch("/api/v1/pods", "1", 30, [](const WatchEvent&) { return true; }, &stop);
  ASSERT_FALSE(watched.ok());
  EXPECT_THAT(watched.status().message(), HasSubstr(url + ": cannot connect"));
}

TEST(KubeClientTest, CreateRefusesBadConfigs) {
  const auto create_error = [](KubeConfig config) {
    Result<std::unique_ptr<KubeClient>> client = KubeClient::Create(std::move(config));
    EXPECT_FALSE(client.ok());
    EXPECT_EQ(client.status().code(), StatusCode::kInvalidArgument);
    return client.ok() ? std::string() : client.status().message();
  };
  for (const char* bad : {"127.0.0.1:6443", "ftp://h", "https://", "https://h:0", "https://h:x",
                          "https://h:6443/prefix", "https://[::1"}) {
    KubeConfig config;
    config.server = bad;
    EXPECT_THAT(create_error(config), StartsWith("Kubernetes API server")) << bad;
  }
  KubeConfig ok;
  ok.server = "https://[::1]:6443/";
  EXPECT_TRUE(KubeClient::Create(ok).ok());

  KubeConfig missing_ca;
  missing_ca.server = "https://127.0.0.1:6443";
  missing_ca.ca_file = "/nonexistent/ca.crt";
  EXPECT_THAT(create_error(missing_ca), HasSubstr("CA file '/nonexistent/ca.crt': no such file"));

  KubeConfig cert_only;
  cert_only.server = "https://127.0.0.1:6443";
  cert_only.client_certificate_data = "PEM";
  EXPECT_THAT(create_error(cert_only), HasSubstr("a client certificate without its key"));

  KubeConfig zero_timeout;
  zero_timeout.server = "http://127.0.0.1:8080";
  zero_timeout.timeout_s = 0;
  EXPECT_THAT(create_error(zero_timeout), HasSubstr("timeout_s"));
}

// --- watches ----------------------------------------------------------------

TEST(KubeClientTest, WatchSplitsEventsAcrossOddChunksInOrder) {
  const std::vector<std::string> lines = {
      R"({"type":"ADDED","object":{"kind":"Pod","metadata":{"name":"a","resourceVersion":"6"}}})",
      R"({"type":"MODIFIED","object":{"kind":"Pod","metadata":{"name":"a","resourceVersion":"7"}}})",
      R"({"type":"ADDED","object":{"kind":"Pod","metadata":{"name":"b","resourceVersion":"8"}}})",
      R"({"type":"DELETED","object":{"kind":"Pod","metadata":{"name":"a","resourceVersion":"9"}}})",
      R"({"type":"BOOKMARK","object":{"kind":"Pod","metadata":{"resourceVersion":"12"}}})",
  };
  std::string stream;
  for (const std::string& line : lines) stream += line + "\n";
  // One byte; the rest of line 1 and the start of 2; the end of 2, all of 3
  // and its newline only; 4 and the bookmark's first bytes; the rest.
  const size_t end1 = lines[0].size() + 1;
  const size_t end2 = end1 + lines[1].size() + 1;
  const size_t end3 = end2 + lines[2].size() + 1;
  const std::vector<std::string> pieces =
      SplitAt(stream, {1, end1 + 10, end3 - 1, end3, end3 + lines[3].size() + 4});

  TestServer api;
  std::mutex mu;
  httplib::Params params;
  api.server().Get("/api/v1/pods", [&](const httplib::Request& req, httplib::Response& res) {
    if (!Authorized(req, res)) return;
    {
      std::lock_guard<std::mutex> lock(mu);
      params = req.params;
    }
    ServeChunks(&api, res, pieces, false);
  });
  api.Start();
  std::unique_ptr<KubeClient> client = NewClient(api.url());
  ASSERT_NE(client, nullptr);

  std::vector<std::string> seen;
  Result<std::string> version = client->Watch(
      "/api/v1/pods?labelSelector=app%3Dtriton", "5", 30, [&](const WatchEvent& event) {
        seen.push_back(event.type + " " + event.object["metadata"].value("name", "") + " " +
                       event.object["metadata"].value("resourceVersion", ""));
        return true;
      });
  ASSERT_TRUE(version.ok()) << version.status().ToString();
  EXPECT_EQ(*version, "12");
  EXPECT_EQ(seen, (std::vector<std::string>{"ADDED a 6", "MODIFIED a 7", "ADDED b 8", "DELETED a 9",
                                            "BOOKMARK  12"}));
  std::lock_guard<std::mutex> lock(mu);
  const auto param = [&](const std::string& key) {
    const auto it = params.find(key);
    return it == params.end() ? std::string("(absent)") : it->second;
  };
  EXPECT_EQ(param("labelSelector"), "app=triton");
  EXPECT_EQ(param("watch"), "1");
  EXPECT_EQ(param("allowWatchBookmarks"), "true");
  EXPECT_EQ(param("resourceVersion"), "5");
  EXPECT_EQ(param("timeoutSeconds"), "30");
}

TEST(KubeClientTest, WatchEndsWhenOnEventReturnsFalse) {
  TestServer api;
  api.server().Get("/api/v1/pods", [&](const httplib::Request&, httplib::Response& res) {
    // Three events in one chunk, then silence until the server is released.
    ServeChunks(&api, res,
                {R"({"type":"ADDED","object":{"metadata":{"name":"a","resourceVersion":"21"}}})"
                 "\n"
                 R"({"type":"ADDED","object":{"metadata":{"name":"b","resourceVersion":"22"}}})"
                 "\n"
                 R"({"type":"ADDED","object":{"metadata":{"name":"c","resourceVersion":"23"}}})"
                 "\n"},
                true);
  });
  api.Start();
  std::unique_ptr<KubeClient> client = NewClient(api.url());
  ASSERT_NE(client, nullptr);

  int calls = 0;
  Result<std::string> version = client->Watch("/api/v1/pods", "20", 30, [&](const WatchEvent& e) {
    ++calls;
    return e.object["metadata"]["name"] != "b";
  });
  // The server still holds the stream open: the callback ended the watch.
  EXPECT_FALSE(api.released());
  ASSERT_TRUE(version.ok()) << version.status().ToString();
  EXPECT_EQ(*version, "22");
  EXPECT_EQ(calls, 2);
}

TEST(KubeClientTest, WatchEndsPromptlyOnStopWhileTheServerIsSilent) {
  TestServer api;
  api.server().Get("/api/v1/pods", [&](const httplib::Request&, httplib::Response& res) {
    ServeChunks(&api, res, {}, true);
  });
  api.Start();
  std::unique_ptr<KubeClient> client = NewClient(api.url());
  ASSERT_NE(client, nullptr);

  std::atomic<bool> stop{false};
  std::thread stopper([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
    stop = true;
  });
  int calls = 0;
  Result<std::string> version = client->Watch(
      "/api/v1/pods", "40", 60,
      [&](const WatchEvent&) {
        ++calls;
        return true;
      },
      &stop);
  // Ended by `stop`, while the silent server still held the stream open.
  const bool stopped_when_returned = stop.load();
  EXPECT_FALSE(api.released());
  stopper.join();
  ASSERT_TRUE(version.ok()) << version.status().ToString();
  EXPECT_EQ(*version, "40");
  EXPECT_EQ(calls, 0);
  EXPECT_TRUE(stopped_when_returned);

  // Already stopped: no request at all.
  Result<std::string> again =
      client->Watch("/api/v1/pods", "41", 60, [](const WatchEvent&) { return true; }, &stop);
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(*again, "41");
}

TEST(KubeClientTest, WatchReturnsA410ErrorEventAsStatus) {
  TestServer api;
  api.server().Get("/api/v1/pods", [&](const httplib::Request&, httplib::Response& res) {
    const std::string error =
        Json{
            {"type", "ERROR"},
            {"object", Json::parse(StatusBody(410, "Expired", "too old resource version: 1 (50)"))}}
            .dump();
    ServeChunks(&api, res,
                {R"({"type":"ADDED","object":{"metadata":{"name":"a","resourceVersion":"60"}}})"
                 "\n" +
                     error.substr(0, 20),
                 error.substr(20) + "\n"},
                false);
  });
  api.server().Get("/api/v1/secrets", [](const httplib::Request&, httplib::Response& res) {
    res.status = 403;
    res.set_content(StatusBody(403, "Forbidden", "secrets is forbidden: User \"x\" cannot watch"),
                    "application/json");
  });
  api.Start();
  std::unique_ptr<KubeClient> client = NewClient(api.url());
  ASSERT_NE(client, nullptr);

  int calls = 0;
  Result<std::string> version = client->Watch("/api/v1/pods", "1", 30, [&](const WatchEvent&) {
    ++calls;
    return true;
  });
  ASSERT_FALSE(version.ok());
  EXPECT_EQ(calls, 1);
  EXPECT_EQ(KubeStatusCode(version.status()), 410);
  EXPECT_THAT(version.status().message(),
              StartsWith("watch /api/v1/pods: HTTP 410: too old resource version: 1 (50)"));

  Result<std::string> forbidden =
      client->Watch("/api/v1/secrets", "", 30, [](const WatchEvent&) { return true; });
  ASSERT_FALSE(forbidden.ok());
  EXPECT_EQ(KubeStatusCode(forbidden.status()), 403);
  EXPECT_EQ(forbidden.status().message(),
            "watch /api/v1/secrets: HTTP 403: secrets is forbidden: User \"x\" cannot watch");
}

// --- TLS ----------------------------------------------------------------------

// A CA, a server certificate for 127.0.0.1 and a client certificate it
// signed, and another CA; made once by the openssl CLI (EC keys: fast).
struct Certs {
  fs::path dir;
  std::string ca, server_crt, server_key, client_crt, client_key, other_ca;
  std::string error;  // why they could not be made
};

const Certs& TestCerts() {
  static const Certs* certs = [] {
    auto* c = new Certs;
    c->dir = fs::temp_directory_path() / ("tessera_kube_certs_" + std::to_string(::getpid()));
    fs::remove_all(c->dir);
    fs::create_directories(c->dir);
    const auto write = [&](const std::string& name, const std::string& text) {
      std::ofstream(c->dir / name) << text;
    };
    write("ca.cnf",
          "[req]\ndistinguished_name = dn\nprompt = no\n[dn]\nCN = tessera test CA\n"
          "[v3_ca]\nbasicConstraints = critical,CA:TRUE\nkeyUsage = critical,keyCertSign,cRLSign\n"
          "subjectKeyIdentifier = hash\n");
    write(
        "other.cnf",
        "[req]\ndistinguished_name = dn\nprompt = no\n[dn]\nCN = another CA\n"
        "[v3_ca]\nbasicConstraints = critical,CA:TRUE\nkeyUsage = critical,keyCertSign,cRLSign\n");
    write("leaf.cnf", "[req]\ndistinguished_name = dn\nprompt = no\n[dn]\nCN = leaf\n");
    write("server.ext",
          "basicConstraints = CA:FALSE\nsubjectAltName = IP:127.0.0.1\n"
          "extendedKeyUsage = serverAuth\n");
    write("client.ext", "basicConstraints = CA:FALSE\nextendedKeyUsage = clientAuth\n");
    const std::string key = "-newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes";
    const std::vector<std::string> commands = {
        "openssl req -x509 -config ca.cnf -extensions v3_ca " + key +
            " -keyout ca.key -out ca.crt -days 2",
        "openssl req -x509 -config other.cnf -extensions v3_ca " + key +
            " -keyout other.key -out other.crt -days 2",
        "openssl req -new -config leaf.cnf " + key + " -keyout server.key -out server.csr",
        "openssl x509 -req -in server.csr -CA ca.crt -CAkey ca.key -set_serial 2 -days 2 "
        "-extfile server.ext -out server.crt",
        "openssl req -new -config leaf.cnf " + key + " -keyout client.key -out client.csr",
        "openssl x509 -req -in client.csr -CA ca.crt -CAkey ca.key -set_serial 3 -days 2 "
        "-extfile client.ext -out client.crt",
    };
    for (const std::string& command : commands) {
      const std::string full = "cd '" + c->dir.string() + "' && " + command + " >>openssl.log 2>&1";
      if (std::system(full.c_str()) != 0) {
        c->error = "failed: " + command + "\n" + ReadAll(c->dir / "openssl.log");
        break;
      }
    }
    c->ca = (c->dir / "ca.crt").string();
    c->other_ca = (c->dir / "other.crt").string();
    c->server_crt = (c->dir / "server.crt").string();
    c->server_key = (c->dir / "server.key").string();
    c->client_crt = (c->dir / "client.crt").string();
    c->client_key = (c->dir / "client.key").string();
    static const struct Cleanup {
      fs::path dir;
      ~Cleanup() {
        std::error_code ec;
        fs::remove_all(dir, ec);
      }
    } cleanup{c->dir};
    return c;
  }();
  return *certs;
}

// A TLS server whose GET /version answers {"gitVersion": ...} to the token
// or to any client certificate the handshake accepted.
void ServeVersion(TestServer& api, bool need_token) {
  api.server().Get("/version", [need_token](const httplib::Request& req, httplib::Response& res) {
    if (need_token && !Authorized(req, res)) return;
    res.set_content(R"({"gitVersion":"v1.37.2"})", "application/json");
  });
}

TEST(KubeClientTest, TlsVerifiesTheServerAgainstTheCa) {
  const Certs& certs = TestCerts();
  ASSERT_EQ(certs.error, "");
  TestServer api(
      std::make_unique<httplib::SSLServer>(certs.server_crt.c_str(), certs.server_key.c_str()));
  ServeVersion(api, true);
  api.Start();

  KubeConfig good;
  good.ca_file = certs.ca;
  std::unique_ptr<KubeClient> client = NewClient(api.url("https"), good);
  ASSERT_NE(client, nullptr);
  Result<Json> version = client->Get("/version");
  ASSERT_TRUE(version.ok()) << version.status().ToString();
  EXPECT_EQ((*version)["gitVersion"], "v1.37.2");

  KubeConfig wrong;
  wrong.ca_file = certs.other_ca;
  std::unique_ptr<KubeClient> untrusting = NewClient(api.url("https"), wrong);
  ASSERT_NE(untrusting, nullptr);
  Result<Json> refused = untrusting->Get("/version");
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.status().code(), StatusCode::kIoError);
  EXPECT_EQ(refused.status().message(),
            "GET /version: " + api.url("https") +
                ": the server's certificate does not verify against the CA of '" + certs.other_ca +
                "': not signed by a trusted CA (unable to get the issuer certificate)");
  EXPECT_EQ(KubeStatusCode(refused.status()), 0);

  // Plain HTTP to a TLS server fails too, naming the server.
  std::unique_ptr<KubeClient> plain = NewClient(api.url("http"));
  ASSERT_NE(plain, nullptr);
  Result<Json> garbled = plain->Get("/version");
  ASSERT_FALSE(garbled.ok());
  EXPECT_THAT(garbled.status().message(), StartsWith("GET /version: " + api.url("http") + ": "));
}

TEST(KubeClientTest, TlsClientCertificateAuthentication) {
  const Certs& certs = TestCerts();
  ASSERT_EQ(certs.error, "");
  // The server requires a client certificate signed by the CA.
  TestServer api(std::make_unique<httplib::SSLServer>(certs.server_crt.c_str(),
                                                      certs.server_key.c_str(), certs.ca.c_str()));
  ServeVersion(api, false);
  api.Start();

  KubeConfig with_cert;
  with_cert.ca_file = certs.ca;
  with_cert.client_certificate_file = certs.client_crt;
  with_cert.client_key_file = certs.client_key;
  std::unique_ptr<KubeClient> client = NewClient(api.url("https"), with_cert);
  ASSERT_NE(client, nullptr);
  Result<Json> version = client->Get("/version");
  ASSERT_TRUE(version.ok()) << version.status().ToString();
  EXPECT_EQ((*version)["gitVersion"], "v1.37.2");

  // The same credentials as kubeconfig data, written to the client's
  // private temporary files.
  KubeConfig with_data;
  with_data.ca_data = ReadAll(certs.ca);
  with_data.client_certificate_data = ReadAll(certs.client_crt);
  with_data.client_key_data = ReadAll(certs.client_key);
  std::unique_ptr<KubeClient> from_data = NewClient(api.url("https"), with_data);
  ASSERT_NE(from_data, nullptr);
  Result<Json> again = from_data->Get("/version");
  ASSERT_TRUE(again.ok()) << again.status().ToString();

  // Without a certificate the server ends the connection.
  KubeConfig token_only;
  token_only.ca_file = certs.ca;
  std::unique_ptr<KubeClient> anonymous = NewClient(api.url("https"), token_only);
  ASSERT_NE(anonymous, nullptr);
  Result<Json> refused = anonymous->Get("/version");
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.status().code(), StatusCode::kIoError);
  EXPECT_THAT(refused.status().message(), StartsWith("GET /version: " + api.url("https") + ": "));
  EXPECT_THAT(refused.status().message(), HasSubstr("requires a client certificate"));

  // A key that is not the certificate's.
  KubeConfig mismatched = with_cert;
  mismatched.client_key_file = certs.server_key;
  std::unique_ptr<KubeClient> bad_pair = NewClient(api.url("https"), mismatched);
  ASSERT_NE(bad_pair, nullptr);
  Result<Json> unloaded = bad_pair->Get("/version");
  ASSERT_FALSE(unloaded.ok());
  EXPECT_THAT(unloaded.status().message(), HasSubstr("cannot load the client certificate"));
}

// --- kubeconfig -------------------------------------------------------------

TEST(KubeClientTest, KubeconfigResolvesPathsRelativeToItsDirectory) {
  const fs::path dir = testing::FreshTestDir();
  fs::create_directories(dir / "kube" / "certs");
  testing::WriteTextFile(dir / "kube" / "certs" / "ca.crt", "CA PEM\n");
  testing::WriteTextFile(dir / "client.crt", "CERT PEM\n");
  testing::WriteTextFile(dir / "client.key", "KEY PEM\n");
  const fs::path config = dir / "kube" / "config";
  testing::WriteTextFile(config,
                         "apiVersion: v1\n"
                         "kind: Config\n"
                         "clusters:\n"
                         "- name: kind\n"
                         "  cluster:\n"
                         "    server: https://127.0.0.1:6443\n"
                         "    certificate-authority: certs/ca.crt\n"
                         "contexts:\n"
                         "- name: kind\n"
                         "  context: {cluster: kind, user: admin, namespace: default}\n"
                         "current-context: kind\n"
                         "users:\n"
                         "- name: admin\n"
                         "  user:\n"
                         "    client-certificate: ../client.crt\n"
                         "    client-key: " +
                             (dir / "client.key").string() + "\n");
  Result<KubeConfig> loaded = LoadKubeconfig(config.string());
  ASSERT_TRUE(loaded.ok()) << loaded.status().ToString();
  EXPECT_EQ(loaded->server, "https://127.0.0.1:6443");
  EXPECT_EQ(loaded->ca_file, (dir / "kube" / "certs" / "ca.crt").string());
  EXPECT_EQ(loaded->client_certificate_file, (dir / "client.crt").string());
  EXPECT_EQ(loaded->client_key_file, (dir / "client.key").string());
  EXPECT_EQ(loaded->token, "");
  EXPECT_EQ(loaded->ca_data, "");
  fs::remove_all(dir);
}

TEST(KubeClientTest, KubeconfigDataFieldsBecomePrivateFilesOfTheClient) {
  const fs::path dir = testing::FreshTestDir();
  const std::string ca = "-----BEGIN CERTIFICATE-----\nMIIB\xff\x01\n-----END CERTIFICATE-----\n";
  const std::string cert = "client cert";
  const std::string key = "client key!";
  const fs::path config = dir / "config";
  testing::WriteTextFile(config,
                         "clusters:\n"
                         "- name: c\n"
                         "  cluster:\n"
                         "    server: https://10.0.0.1:6443\n"
                         "    certificate-authority: no-such-file-but-data-wins\n"
                         "    certificate-authority-data: " +
                             EncodeBase64(ca) +
                             "\n"
                             "contexts:\n"
                             "- name: x\n"
                             "  context: {cluster: c, user: u}\n"
                             "current-context: x\n"
                             "users:\n"
                             "- name: u\n"
                             "  user:\n"
                             "    client-certificate-data: " +
                             EncodeBase64(cert) +
                             "\n"
                             "    client-key-data: " +
                             EncodeBase64(key) + "\n");
  Result<KubeConfig> loaded = LoadKubeconfig(config.string());
  ASSERT_TRUE(loaded.ok()) << loaded.status().ToString();
  EXPECT_EQ(loaded->ca_data, ca);
  EXPECT_EQ(loaded->client_certificate_data, cert);
  EXPECT_EQ(loaded->client_key_data, key);
  EXPECT_EQ(loaded->ca_file, "");

  fs::path temp;
  {
    Result<std::unique_ptr<KubeClient>> client = KubeClient::Create(*loaded);
    ASSERT_TRUE(client.ok()) << client.status().ToString();
    const KubeConfig& used = (*client)->config();
    EXPECT_EQ(used.ca_data, "");
    EXPECT_EQ(used.client_key_data, "");
    temp = fs::path(used.ca_file).parent_path();
    EXPECT_EQ(fs::path(used.client_certificate_file).parent_path(), temp);
    EXPECT_EQ(fs::path(used.client_key_file).parent_path(), temp);
    EXPECT_EQ(ReadAll(used.ca_file), ca);
    EXPECT_EQ(ReadAll(used.client_certificate_file), cert);
    EXPECT_EQ(ReadAll(used.client_key_file), key);
    struct stat st {};
    ASSERT_EQ(::stat(temp.c_str(), &st), 0);
    EXPECT_EQ(st.st_mode & 0777, 0700u);
    ASSERT_EQ(::stat(used.client_key_file.c_str(), &st), 0);
    EXPECT_EQ(st.st_mode & 0777, 0600u);
  }
  EXPECT_FALSE(fs::exists(temp)) << temp;

  // Bad base64 names the field.
  testing::WriteTextFile(config,
                         "clusters:\n"
                         "- name: c\n"
                         "  cluster:\n"
                         "    server: https://10.0.0.1:6443\n"
                         "    certificate-authority-data: 'not*base64'\n"
                         "contexts:\n"
                         "- {name: x, context: {cluster: c, user: u}}\n"
                         "current-context: x\n"
                         "users:\n"
                         "- {name: u, user: {token: t}}\n");
  Result<KubeConfig> bad = LoadKubeconfig(config.string());
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().code(), StatusCode::kInvalidArgument);
  EXPECT_THAT(bad.status().message(),
              StartsWith(config.string() +
                         ":5: field 'clusters[0].cluster.certificate-authority-data': not base64"));
  fs::remove_all(dir);
}

// Two clusters, four users and three contexts.
std::string ContextsKubeconfig() {
  return "apiVersion: v1\n"
         "clusters:\n"
         "- name: a\n"
         "  cluster: {server: 'https://a.example:6443'}\n"
         "- name: b\n"
         "  cluster: {server: 'http://127.0.0.1:8080'}\n"
         "contexts:\n"
         "- name: ctx-a\n"
         "  context: {cluster: a, user: inline}\n"
         "- name: ctx-b\n"
         "  context: {cluster: b, user: from-file}\n"
         "- name: ctx-c\n"
         "  context: {cluster: b, user: dashed}\n"
         "- name: ctx-d\n"
         "  context: {cluster: b, user: both}\n"
         "current-context: ctx-a\n"
         "users:\n"
         "- name: inline\n"
         "  user: {token: inline-token}\n"
         "- name: from-file\n"
         "  user: {tokenFile: secrets/token}\n"
         "- name: dashed\n"
         "  user: {token-file: secrets/token}\n"
         "- name: both\n"
         "  user: {token: wins, tokenFile: secrets/token}\n";
}

TEST(KubeClientTest, KubeconfigTokensAndContextSelection) {
  const fs::path dir = testing::FreshTestDir();
  fs::create_directories(dir / "secrets");
  testing::WriteTextFile(dir / "secrets" / "token", "file-token\n");
  const fs::path config = dir / "config";
  testing::WriteTextFile(config, ContextsKubeconfig());

  Result<KubeConfig> current = LoadKubeconfig(config.string());
  ASSERT_TRUE(current.ok()) << current.status().ToString();
  EXPECT_EQ(current->server, "https://a.example:6443");
  EXPECT_EQ(current->token, "inline-token");

  Result<KubeConfig> b = LoadKubeconfig(config.string(), "ctx-b");
  ASSERT_TRUE(b.ok()) << b.status().ToString();
  EXPECT_EQ(b->server, "http://127.0.0.1:8080");
  EXPECT_EQ(b->token, "file-token");

  Result<KubeConfig> c = LoadKubeconfig(config.string(), "ctx-c");
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  EXPECT_EQ(c->token, "file-token");

  Result<KubeConfig> d = LoadKubeconfig(config.string(), "ctx-d");
  ASSERT_TRUE(d.ok()) << d.status().ToString();
  EXPECT_EQ(d->token, "wins");

  Result<KubeConfig> unknown = LoadKubeconfig(config.string(), "ctx-z");
  ASSERT_FALSE(unknown.ok());
  EXPECT_EQ(unknown.status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(unknown.status().message(),
            config.string() +
                ":8: field 'contexts': no context named 'ctx-z' (the file has 'ctx-a', 'ctx-b', "
                "'ctx-c', 'ctx-d')");

  // A token file that is not there names the field and the file.
  fs::remove(dir / "secrets" / "token");
  Result<KubeConfig> gone = LoadKubeconfig(config.string(), "ctx-b");
  ASSERT_FALSE(gone.ok());
  EXPECT_THAT(gone.status().message(),
              StartsWith(config.string() +
                         ":21: field 'users[1].user.tokenFile': cannot read the "
                         "token: " +
                         (dir / "secrets" / "token").string()));
  fs::remove_all(dir);
}

TEST(KubeClientTest, KubeconfigErrorsNameTheFileAndTheField) {
  const fs::path dir = testing::FreshTestDir();
  const fs::path config = dir / "config";
  const auto error_of = [&](const std::string& text, const std::string& context = "") {
    testing::WriteTextFile(config, text);
    Result<KubeConfig> loaded = LoadKubeconfig(config.string(), context);
    EXPECT_FALSE(loaded.ok());
    EXPECT_EQ(loaded.status().code(), StatusCode::kInvalidArgument);
    return loaded.ok() ? std::string() : loaded.status().message();
  };
  const std::string file = config.string();
  const std::string users = "users:\n- {name: u, user: {token: t}}\n";

  EXPECT_EQ(error_of("clusters:\n"
                     "- {name: c, cluster: {server: 'https://h:6443'}}\n"
                     "contexts:\n"
                     "- {name: x, context: {cluster: nope, user: u}}\n"
                     "current-context: x\n" +
                     users),
            file +
                ":4: field 'contexts[0].context.cluster': no cluster named 'nope' in 'clusters' "
                "(the file has 'c')");
  EXPECT_EQ(error_of("clusters:\n"
                     "- {name: c, cluster: {server: 'https://h:6443'}}\n"
                     "contexts:\n"
                     "- {name: x, context: {cluster: c, user: nobody}}\n"
                     "current-context: x\n" +
                     users),
            file +
                ":4: field 'contexts[0].context.user': no user named 'nobody' in 'users' (the "
                "file has 'u')");
  EXPECT_EQ(error_of("clusters:\n"
                     "- name: c\n"
                     "  cluster:\n"
                     "    certificate-authority-data: Q0E=\n"
                     "contexts:\n"
                     "- {name: x, context: {cluster: c, user: u}}\n"
                     "current-context: x\n" +
                     users),
            file + ":4: field 'clusters[0].cluster.server': missing");
  EXPECT_EQ(error_of("clusters:\n"
                     "- {name: c, cluster: {server: 'h:6443'}}\n"
                     "contexts:\n"
                     "- {name: x, context: {cluster: c, user: u}}\n"
                     "current-context: x\n" +
                     users),
            file +
                ":2: field 'clusters[0].cluster.server': 'h:6443': expected a URL starting with "
                "https:// or http://; give http(s)://HOST[:PORT], e.g. https://127.0.0.1:6443");
  EXPECT_EQ(
      error_of("clusters:\n"
               "- {name: c, cluster: {server: 'https://h:6443', certificate-authority: ca.pem}}\n"
               "contexts:\n"
               "- {name: x, context: {cluster: c, user: u}}\n"
               "current-context: x\n" +
               users),
      file + ":2: field 'clusters[0].cluster.certificate-authority': no such file '" +
          (dir / "ca.pem").string() + "'");
  EXPECT_EQ(error_of("clusters: []\ncontexts: []\n" + users),
            file +
                ":1: field 'current-context': missing or empty, and no context was named (the "
                "file has no contexts)");
  EXPECT_EQ(error_of("clusters:\n"
                     "- {name: c, cluster: {server: 'https://h:6443'}}\n"
                     "contexts:\n"
                     "- {name: x, context: {cluster: c, user: u}}\n"
                     "current-context: x\n"
                     "users:\n"
                     "- {name: u, user: {client-certificate-data: Q0E=}}\n"),
            file +
                ":7: field 'users[0].user.client-key': missing: a client certificate needs its "
                "key (client-key or client-key-data)");
  EXPECT_EQ(error_of("clusters:\n"
                     "- {name: c, cluster: {server: 'https://h:6443'}}\n"
                     "contexts:\n"
                     "- {name: x, context: {cluster: c, user: u}}\n"
                     "current-context: x\n"
                     "users:\n"
                     "- name: u\n"
                     "  user:\n"
                     "    exec: {command: aws}\n"),
            file +
                ":9: field 'users[0].user.exec': not supported: give a token, tokenFile or "
                "client-certificate and client-key");
  EXPECT_THAT(error_of("clusters: [\n"), StartsWith(file + ":"));

  Result<KubeConfig> missing = LoadKubeconfig((dir / "absent").string());
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.status().code(), StatusCode::kIoError);
  EXPECT_THAT(missing.status().message(), HasSubstr((dir / "absent").string()));
  fs::remove_all(dir);
}

}  // namespace
}  // namespace tessera
