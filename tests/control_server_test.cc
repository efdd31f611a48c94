// ControlServer over loopback (port 0) with cpp-httplib's client, and
// `tessera serve` as a process: started, answering, stopped by SIGTERM.
#include "tessera/control/control_server.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <httplib.h>
#include <netinet/in.h>
#include <signal.h>
#include <spawn.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <future>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>

#include "cli_fixture.h"
#include "tessera/control/control_plane.h"
#include "test_paths.h"
#include "test_stores.h"
#include "tiny_problem.h"

extern char** environ;

namespace tessera {
namespace {

using nlohmann::json;
using ::testing::HasSubstr;

constexpr const char* kToken = "s3cret-token";

std::string TinyScenarioJson() {
  return R"({"name": "tiny", "gpu": "a100-80gb", "services": [
      {"name": "a", "model": "m", "rate_rps": 150, "slo_ms": 1000}]})";
}

// Every test runs on each store (test_stores.h).
class ControlServerTest : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override {
    if (GetParam() == "etcd" && !testing::EtcdUnavailable().empty()) {
      GTEST_SKIP() << testing::EtcdUnavailable();
    }
    dir_ = testing::FreshTestDir();
  }
  void TearDown() override {
    server_.reset();
    plane_.reset();
    std::filesystem::remove_all(dir_);
  }

  // Starts a plane on a fresh store and a server on a free loopback port.
  void Start(const std::string& token = "") {
    Result<std::unique_ptr<ControlStore>> store =
        testing::OpenTestStore(GetParam(), testing::TestStoreName(), dir_);
    ASSERT_TRUE(store.ok()) << store.status().ToString();
    ControlOptions options;
    options.auto_mode = false;
    options.wall_time = [] { return std::string("2024-01-01T00:00:00Z"); };
    // The tiny profiles under the papers' bare rule (tiny_problem.h).
    options.inputs.profile_table = std::make_shared<const ProfileTable>(testing::TinyTable());
    options.inputs.capacity_rule = "bare";
    options.inputs.router = "weighted";
    Result<std::unique_ptr<ControlPlane>> plane = ControlPlane::Open(std::move(*store), options);
    ASSERT_TRUE(plane.ok()) << plane.status().ToString();
    plane_ = std::move(*plane);
    ServerOptions server;
    server.host = "127.0.0.1";
    server.port = 0;
    server.token = token;
    Result<std::unique_ptr<ControlServer>> started = ControlServer::Start(*plane_, server);
    ASSERT_TRUE(started.ok()) << started.status().ToString();
    server_ = std::move(*started);
  }

  httplib::Client Client() {
    httplib::Client client("127.0.0.1", server_->port());
    client.set_read_timeout(90, 0);
    return client;
  }

  static httplib::Headers Bearer(const std::string& token) {
    return {{"Authorization", "Bearer " + token}};
  }

  // The error code of a JSON error reply.
  static std::string ErrorCode(const httplib::Result& result) {
    const json body = json::parse(result->body, nullptr, false);
    if (!body.is_object() || !body.contains("error")) return "(not an error object)";
    EXPECT_TRUE(body["error"].contains("message"));
    EXPECT_TRUE(body["error"].contains("field"));
    return body["error"].value("code", "");
  }

  std::filesystem::path dir_;
  std::unique_ptr<ControlPlane> plane_;
  std::unique_ptr<ControlServer> server_;
};

INSTANTIATE_TEST_SUITE_P(Stores, ControlServerTest, testing::kStoreKinds,
                         [](const ::testing::TestParamInfo<std::string>& info) {
                           return info.param;
                         });

TEST_P(ControlServerTest, HealthAndReady) {
  Start();
  httplib::Client client = Client();
  httplib::Result health = client.Get("/healthz");
  ASSERT_TRUE(health);
  EXPECT_EQ(health->status, 200);
  EXPECT_EQ(json::parse(health->body)["status"], "ok");
  httplib::Result ready = client.Get("/readyz");
  ASSERT_TRUE(ready);
  EXPECT_EQ(ready->status, 200);
  EXPECT_EQ(json::parse(ready->body)["status"], "ready");
}

TEST_P(ControlServerTest, KeepAliveServesManyRequestsPerConnection) {
  Start();
  httplib::Client client = Client();
  client.set_keep_alive(true);
  for (int i = 0; i < 3; ++i) {
    httplib::Result health = client.Get("/healthz");
    ASSERT_TRUE(health);
    EXPECT_EQ(health->get_header_value("Keep-Alive"), "timeout=5, max=1000");
  }
}

TEST_P(ControlServerTest, TheDeploymentIsGzippedOnceAndAnsweredWith304) {
  Start();
  httplib::Client client = Client();
  client.set_decompress(false);
  httplib::Result plain = client.Get("/v1/deployment", {{"Accept-Encoding", "identity"}});
  ASSERT_TRUE(plain);
  EXPECT_EQ(plain->status, 200);
  EXPECT_FALSE(plain->has_header("Content-Encoding"));
  EXPECT_EQ(plain->get_header_value("Vary"), "Accept-Encoding");
  const std::string etag = plain->get_header_value("ETag");
  EXPECT_FALSE(etag.empty());

  // gzip, and not compressed again by the HTTP library ("br" offered too).
  httplib::Result raw = client.Get("/v1/deployment", {{"Accept-Encoding", "br, gzip"}});
  ASSERT_TRUE(raw);
  EXPECT_EQ(raw->get_header_value("Content-Encoding"), "gzip");
  ASSERT_GE(raw->body.size(), 2u);
  EXPECT_EQ(raw->body.substr(0, 2), "\x1f\x8b");
  EXPECT_NE(raw->get_header_value("ETag"), etag);
  // Decoded by a client, it is the same JSON.
  httplib::Client decoding = Client();
  httplib::Result decoded = decoding.Get("/v1/deployment", {{"Accept-Encoding", "gzip"}});
  ASSERT_TRUE(decoded);
  EXPECT_EQ(decoded->body, plain->body);
  // gzip refused with q=0: the plain body.
  httplib::Result refused = client.Get("/v1/deployment", {{"Accept-Encoding", "gzip;q=0"}});
  ASSERT_TRUE(refused);
  EXPECT_EQ(refused->body, plain->body);

  httplib::Result not_modified =
      client.Get("/v1/deployment", {{"Accept-Encoding", "identity"}, {"If-None-Match", etag}});
  ASSERT_TRUE(not_modified);
  EXPECT_EQ(not_modified->status, 304);
  EXPECT_TRUE(not_modified->body.empty());
  EXPECT_EQ(not_modified->get_header_value("ETag"), etag);
}

TEST_P(ControlServerTest, MutationsNeedTheToken) {
  Start(kToken);
  httplib::Client client = Client();
  const std::string body = TinyScenarioJson();
  httplib::Result none = client.Put("/v1/scenario", body, "application/json");
  ASSERT_TRUE(none);
  EXPECT_EQ(none->status, 401);
  EXPECT_EQ(ErrorCode(none), "unauthorized");
  httplib::Result wrong =
      client.Put("/v1/scenario", Bearer("s3cret-tokeX"), body, "application/json");
  ASSERT_TRUE(wrong);
  EXPECT_EQ(wrong->status, 401);
  httplib::Result longer =
      client.Put("/v1/scenario", Bearer(std::string(kToken) + "x"), body, "application/json");
  ASSERT_TRUE(longer);
  EXPECT_EQ(longer->status, 401);
  httplib::Result right = client.Put("/v1/scenario", Bearer(kToken), body, "application/json");
  ASSERT_TRUE(right);
  EXPECT_EQ(right->status, 200) << right->body;
  // Reads need no token.
  httplib::Result read = client.Get("/v1/scenario");
  ASSERT_TRUE(read);
  EXPECT_EQ(read->status, 200);
}

TEST_P(ControlServerTest, BodiesOverTheLimitAre413) {
  Start();
  const std::string big((1 << 20) + 1, ' ');
  {
    httplib::Client client = Client();
    httplib::Result result = client.Put("/v1/scenario", big, "application/json");
    ASSERT_TRUE(result) << httplib::to_string(result.error());
    EXPECT_EQ(result->status, 413);
    EXPECT_EQ(ErrorCode(result), "payload_too_large");
  }
  {
    // Chunked: no Content-Length; the server stops reading past the limit.
    // The client offers 64 MiB, far more than the loopback's socket buffers
    // hold (a few MiB): a server that stops reading stops the client well
    // before the end, where 4 MiB could all sit in the buffers unread (CI
    // saw a client send all 4 MiB and then find the connection closed).
    constexpr size_t kOffered = 64u << 20;
    httplib::Client client = Client();
    size_t sent = 0;
    httplib::Result result = client.Put(
        "/v1/scenario",
        [&](size_t, httplib::DataSink& sink) {
          const std::string chunk(64 * 1024, ' ');
          if (sent < kOffered) {
            sent += chunk.size();
            return sink.write(chunk.data(), chunk.size());
          }
          sink.done();
          return true;
        },
        "application/json");
    if (result) {
      EXPECT_EQ(result->status, 413);
    } else {
      // The server may close before the client has sent everything: it
      // must not have read all of it.
      EXPECT_LT(sent, kOffered);
    }
  }
}

// A huge Content-Length with no body behind it is refused at once: the
// server does not wait for bytes that never come.
TEST_P(ControlServerTest, HugeContentLengthIsRefusedUnread) {
  Start();
  // cpp-httplib's client sets its own Content-Length: the request goes raw.
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  ASSERT_GE(fd, 0);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_port = htons(static_cast<uint16_t>(server_->port()));
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ASSERT_EQ(::connect(fd, reinterpret_cast<sockaddr*>(&address), sizeof address), 0);
  const std::string request =
      "PUT /v1/scenario HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
      "Connection: close\r\nContent-Length: 1000000000000\r\n\r\n{";
  ASSERT_EQ(::send(fd, request.data(), request.size(), 0), static_cast<ssize_t>(request.size()));
  std::string reply;
  char buffer[4096];
  for (ssize_t n; (n = ::recv(fd, buffer, sizeof buffer, 0)) > 0;) reply.append(buffer, n);
  ::close(fd);
  EXPECT_THAT(reply, HasSubstr("HTTP/1.1 413"));
  EXPECT_THAT(reply, HasSubstr("payload_too_large"));
}

TEST_P(ControlServerTest, NonLoopbackNeedsAToken) {
  Start();
  ServerOptions open;
  open.host = "0.0.0.0";
  open.port = 0;
  Result<std::unique_ptr<ControlServer>> refused = ControlServer::Start(*plane_, open);
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.status().code(), StatusCode::kInvalidArgument);
  EXPECT_THAT(refused.status().message(), HasSubstr("token"));
}

TEST_P(ControlServerTest, ListenAddresses) {
  ServerOptions options;
  ASSERT_TRUE(ParseListenAddress("127.0.0.1:8080", "--listen", options).ok());
  EXPECT_EQ(options.host, "127.0.0.1");
  EXPECT_EQ(options.port, 8080);
  ASSERT_TRUE(ParseListenAddress("[::1]:0", "--listen", options).ok());
  EXPECT_EQ(options.host, "::1");
  EXPECT_EQ(options.port, 0);
  ASSERT_TRUE(ParseListenAddress("localhost:9", "--listen", options).ok());
  EXPECT_EQ(options.host, "localhost");
  for (const char* bad : {"", "8080", "127.0.0.1", "127.0.0.1:", ":80", "h:65536", "h:-1", "h:8o",
                          "::1:80", "[::1:80"}) {
    const Status status = ParseListenAddress(bad, "--listen", options);
    EXPECT_FALSE(status.ok()) << bad;
    EXPECT_THAT(status.message(), HasSubstr("--listen")) << bad;
  }
}

TEST_P(ControlServerTest, UnknownRouteAndWrongMethod) {
  Start();
  httplib::Client client = Client();
  httplib::Result missing = client.Get("/v1/nope");
  ASSERT_TRUE(missing);
  EXPECT_EQ(missing->status, 404);
  EXPECT_EQ(ErrorCode(missing), "not_found");
  httplib::Result wrong = client.Delete("/v1/scenario");
  ASSERT_TRUE(wrong);
  EXPECT_EQ(wrong->status, 405);
  EXPECT_EQ(ErrorCode(wrong), "method_not_allowed");
  EXPECT_EQ(wrong->get_header_value("Allow"), "GET, HEAD, PUT");
  httplib::Result own = client.Post("/v1/openapi.json", "{}", "application/json");
  ASSERT_TRUE(own);
  EXPECT_EQ(own->status, 405);
  EXPECT_EQ(own->get_header_value("Allow"), "GET, HEAD");
}

// The DRA driver's question: answered from the body alone, with the token,
// JSON only, POST only.
TEST_P(ControlServerTest, DraOffersAnswerTheNextPlacementOfEachProfile) {
  Start(kToken);
  httplib::Client client = Client();
  const std::string body =
      R"({"gpu":"a100-80gb","policy":"ff","nodes":[{"name":"n","gpus":1}],)"
      R"("events":[{"op":"place","claim":"a","profile":"3g.40gb","node":"n","gpu":0,"start":4}]})";
  httplib::Result refused = client.Post("/v1/dra/offers", body, "application/json");
  ASSERT_TRUE(refused);
  EXPECT_EQ(refused->status, 401);
  httplib::Result offers = client.Post("/v1/dra/offers", Bearer(kToken), body, "application/json");
  ASSERT_TRUE(offers);
  ASSERT_EQ(offers->status, 200) << offers->body;
  const json answer = json::parse(offers->body);
  EXPECT_EQ(answer["geometry"]["model"], "a100-80gb");
  EXPECT_EQ(answer["followed"], 1);
  // The other half of the GPU: no 7g; a 4g or a 3g at 0.
  std::map<std::string, int> starts;
  for (const json& offer : answer["offers"]) starts[offer["profile"]] = offer["start"];
  EXPECT_EQ(starts.count("7g.80gb"), 0u);
  EXPECT_EQ(starts["4g.40gb"], 0);
  EXPECT_EQ(starts["3g.40gb"], 0);
  httplib::Result text = client.Post("/v1/dra/offers", Bearer(kToken), body, "text/plain");
  ASSERT_TRUE(text);
  EXPECT_EQ(text->status, 415);
  httplib::Result bad = client.Post("/v1/dra/offers", Bearer(kToken), "{}", "application/json");
  ASSERT_TRUE(bad);
  EXPECT_EQ(bad->status, 400);
  EXPECT_THAT(bad->body, HasSubstr("gpu"));
  httplib::Result get = client.Get("/v1/dra/offers");
  ASSERT_TRUE(get);
  EXPECT_EQ(get->status, 405);
  EXPECT_EQ(get->get_header_value("Allow"), "POST");
}

TEST_P(ControlServerTest, LongPollTimesOutWithTheSameVersion) {
  Start();
  httplib::Client client = Client();
  const int64_t version = plane_->Version();
  httplib::Result result =
      client.Get("/v1/nodes/node-0/plan?since=" + std::to_string(version) + "&wait=0.2");
  ASSERT_TRUE(result);
  ASSERT_EQ(result->status, 200) << result->body;
  EXPECT_EQ(json::parse(result->body)["version"], version);
}

TEST_P(ControlServerTest, LongPollReturnsOnAVersionChange) {
  Start();
  httplib::Client client = Client();
  ASSERT_EQ(client.Put("/v1/scenario", TinyScenarioJson(), "application/json")->status, 200);
  httplib::Result plan = client.Post("/v1/plans", "{}", "application/json");
  ASSERT_TRUE(plan);
  ASSERT_EQ(plan->status, 201) << plan->body;
  const int64_t id = json::parse(plan->body)["id"];
  const int64_t version = plane_->Version();
  std::future<httplib::Result> poll = std::async(std::launch::async, [&] {
    httplib::Client poller = Client();
    return poller.Get("/v1/nodes/node-0/plan?since=" + std::to_string(version) + "&wait=60");
  });
  httplib::Result transition =
      client.Post("/v1/transitions", json{{"to", id}, {"start", true}}.dump(), "application/json");
  ASSERT_TRUE(transition);
  ASSERT_EQ(transition->status, 201) << transition->body;
  httplib::Result polled = poll.get();
  ASSERT_TRUE(polled);
  ASSERT_EQ(polled->status, 200) << polled->body;
  EXPECT_NE(json::parse(polled->body)["version"], version);
}

TEST_P(ControlServerTest, MetricsHoldTheLatencyHistogram) {
  Start();
  httplib::Client client = Client();
  // One connection: the server records a request's latency after writing
  // its reply (http_server.cc's logger), so on separate connections the
  // /metrics request could be answered before the 404 was recorded (it was,
  // once, in a sanitized run); on one, it is read only after the logger ran.
  client.set_keep_alive(true);
  ASSERT_TRUE(client.Get("/healthz"));
  ASSERT_TRUE(client.Get("/v1/nope"));
  httplib::Result metrics = client.Get("/metrics");
  ASSERT_TRUE(metrics);
  EXPECT_EQ(metrics->status, 200);
  EXPECT_THAT(metrics->body, HasSubstr("# TYPE tessera_http_request_duration_seconds histogram"));
  EXPECT_THAT(metrics->body,
              HasSubstr("tessera_http_request_duration_seconds_count{method=\"GET\",route=\"/"
                        "healthz\",code=\"200\"} 1"));
  EXPECT_THAT(metrics->body, HasSubstr("code=\"404\""));
  EXPECT_THAT(metrics->body, HasSubstr("le=\"+Inf\""));
}

TEST_P(ControlServerTest, ServesTheDashboardAndTheOpenApiDocument) {
  Start();
  httplib::Client client = Client();
  httplib::Result index = client.Get("/");
  ASSERT_TRUE(index);
  EXPECT_EQ(index->status, 200);
  EXPECT_THAT(index->get_header_value("Content-Type"), HasSubstr("text/html"));
  EXPECT_EQ(index->body, testing::ReadAll(testing::SourcePath("src/control/web/index.html")));
  httplib::Result missing = client.Get("/static/no-such-file.js");
  ASSERT_TRUE(missing);
  EXPECT_EQ(missing->status, 404);
  httplib::Result openapi = client.Get("/v1/openapi.json");
  ASSERT_TRUE(openapi);
  EXPECT_EQ(openapi->status, 200);
  EXPECT_EQ(openapi->get_header_value("Content-Type"), "application/json");
  EXPECT_EQ(json::parse(openapi->body),
            json::parse(testing::ReadAll(testing::SourcePath("docs/openapi.json"))));
}

// ---- tessera serve, the process -------------------------------------------

class ServeCliTest : public testing::CliTest {};

TEST_F(ServeCliTest, StartsAnswersAndStopsOnSigterm) {
  const std::string db = (dir_ / "serve.db").string();
  const std::string out = (dir_ / "out").string(), err = (dir_ / "err").string();
  int pipe_fds[2];
  ASSERT_EQ(::pipe(pipe_fds), 0);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, pipe_fds[1], STDOUT_FILENO);
  posix_spawn_file_actions_addclose(&actions, pipe_fds[0]);
  posix_spawn_file_actions_addopen(&actions, STDERR_FILENO, err.c_str(),
                                   O_WRONLY | O_CREAT | O_TRUNC, 0644);
  std::vector<std::string> args = {TESSERA_BINARY, "serve", "--listen", "127.0.0.1:0", "--db", db};
  std::vector<char*> argv;
  for (std::string& arg : args) argv.push_back(arg.data());
  argv.push_back(nullptr);
  pid_t pid = -1;
  ASSERT_EQ(posix_spawn(&pid, TESSERA_BINARY, &actions, nullptr, argv.data(), environ), 0);
  posix_spawn_file_actions_destroy(&actions);
  ::close(pipe_fds[1]);
  FILE* stdout_of_serve = ::fdopen(pipe_fds[0], "r");
  char line[512] = {};
  const bool got_line = std::fgets(line, sizeof line, stdout_of_serve) != nullptr;
  int port = 0;
  if (got_line) std::sscanf(line, "tessera serve: listening on http://127.0.0.1:%d", &port);
  if (got_line && port > 0) {
    EXPECT_THAT(std::string(line), HasSubstr("(store sqlite " + db + ", replica 127.0.0.1:"));
    httplib::Client client("127.0.0.1", port);
    httplib::Result health = client.Get("/healthz");
    ASSERT_TRUE(health);
    EXPECT_EQ(health->status, 200);
    // A new store gets the embedded S3.
    httplib::Result scenario = client.Get("/v1/scenario");
    ASSERT_TRUE(scenario);
    EXPECT_EQ(scenario->status, 200);
    EXPECT_EQ(json::parse(scenario->body)["name"], "S3");
  }
  ::kill(pid, SIGTERM);
  int status = 0;
  ASSERT_EQ(::waitpid(pid, &status, 0), pid);
  std::fclose(stdout_of_serve);
  ASSERT_TRUE(got_line) << testing::ReadAll(err);
  ASSERT_GT(port, 0) << line;
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 0) << testing::ReadAll(err);
}

TEST_F(ServeCliTest, BadFlagsExit2) {
  const testing::Outcome open =
      Tessera("serve --listen 0.0.0.0:0 --db " + (dir_ / "a.db").string());
  EXPECT_EQ(open.exit_code, 2);
  EXPECT_THAT(open.err, HasSubstr("token"));
  const testing::Outcome no_file =
      Tessera("serve --listen 127.0.0.1:0 --token-file " + (dir_ / "none").string());
  EXPECT_EQ(no_file.exit_code, 2);
  EXPECT_THAT(no_file.err, HasSubstr("--token-file"));
  Write("empty", "\n");
  const testing::Outcome empty =
      Tessera("serve --listen 127.0.0.1:0 --token-file " + (dir_ / "empty").string());
  EXPECT_EQ(empty.exit_code, 2);
  EXPECT_THAT(empty.err, HasSubstr("empty"));
  const testing::Outcome bad_db =
      Tessera("serve --listen 127.0.0.1:0 --db " + (dir_ / "no" / "such" / "t.db").string());
  EXPECT_EQ(bad_db.exit_code, 2);
  EXPECT_THAT(bad_db.err, HasSubstr("--db"));
  const testing::Outcome bad_listen = Tessera("serve --listen nowhere");
  EXPECT_EQ(bad_listen.exit_code, 2);
  EXPECT_THAT(bad_listen.err, HasSubstr("--listen"));
  const testing::Outcome help = Tessera("serve --help");
  EXPECT_EQ(help.exit_code, 0);
  EXPECT_THAT(help.out, HasSubstr("Examples:"));
}

}  // namespace
}  // namespace tessera
