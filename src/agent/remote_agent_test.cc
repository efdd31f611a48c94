// RemoteAgent against an in-test control plane (an httplib::Server on
// 127.0.0.1, any port, answering canned NodeWork), on the fake NVML with the
// stand-in MPS daemon and serving processes: it applies a plan, runs a
// transition's phases and posts their results (ok, and ok=false with NVML's
// error), posts a plain status only when it changes, retries a 503 with a
// doubling, capped backoff, and sends the bearer token.
#include "tessera/agent/remote_agent.h"

#include <gtest/gtest.h>
#include <httplib.h>

#include <cstdlib>
#include <deque>
#include <filesystem>
#include <mutex>
#include <nlohmann/json.hpp>
#include <thread>

#include "agent/supervisor.h"
#include "deployment_builder.h"
#include "tessera/transition/transition_format.h"
#include "test_paths.h"

namespace tessera {
namespace {

using Json = nlohmann::json;

// The control plane's side: canned answers to polls, a record of the posts.
class FakePlane {
 public:
  struct Reply {
    int status = 200;
    std::string body;
  };
  struct Seen {
    std::map<std::string, std::string> query;  // of a poll
    std::string authorization;
    Json body;  // of a post
  };

  FakePlane() {
    server_.Get(R"(/v1/nodes/([^/]+)/plan)",
                [this](const httplib::Request& req, httplib::Response& res) {
                  std::lock_guard<std::mutex> lock(mu_);
                  Seen seen{{}, req.get_header_value("Authorization"), nullptr};
                  for (const auto& [k, v] : req.params) seen.query[k] = v;
                  polls_.push_back(seen);
                  Reply r{200, work_};
                  if (!gets_.empty()) {
                    r = gets_.front();
                    gets_.pop_front();
                  }
                  res.status = r.status;
                  res.set_content(r.body, "application/json");
                });
    server_.Post(
        R"(/v1/nodes/([^/]+)/status)", [this](const httplib::Request& req, httplib::Response& res) {
          std::lock_guard<std::mutex> lock(mu_);
          posts_.push_back(
              {{}, req.get_header_value("Authorization"), Json::parse(req.body, nullptr, false)});
          res.status = post_status_;
          res.set_content(post_status_ == 200 ? R"({"version": 1})"
                                              : R"({"error": {"code": "conflict", )"
                                                R"("message": "not running", "field": null}})",
                          "application/json");
        });
    port_ = server_.bind_to_any_port("127.0.0.1");
    thread_ = std::thread([this] { server_.listen_after_bind(); });
  }
  ~FakePlane() {
    server_.stop();
    thread_.join();
  }

  std::string url() const { return "http://127.0.0.1:" + std::to_string(port_); }
  void SetWork(const std::string& work) {
    std::lock_guard<std::mutex> lock(mu_);
    work_ = work;
  }
  void QueueGet(Reply reply) {
    std::lock_guard<std::mutex> lock(mu_);
    gets_.push_back(std::move(reply));
  }
  void SetPostStatus(int status) {
    std::lock_guard<std::mutex> lock(mu_);
    post_status_ = status;
  }
  std::vector<Seen> polls() {
    std::lock_guard<std::mutex> lock(mu_);
    return polls_;
  }
  std::vector<Seen> posts() {
    std::lock_guard<std::mutex> lock(mu_);
    return posts_;
  }

 private:
  httplib::Server server_;
  std::thread thread_;
  int port_ = 0;
  std::mutex mu_;
  std::string work_;
  std::deque<Reply> gets_;
  int post_status_ = 200;
  std::vector<Seen> polls_, posts_;
};

class RemoteAgentTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::weakly_canonical(testing::FreshTestDir()).string();
    ::setenv("TESSERA_FAKE_NVML_STATE", (dir_ + "/nvml.json").c_str(), 1);
    ::setenv("TESSERA_FAKE_NVML_DEVICES", "a100-80gb*2", 1);
  }
  void TearDown() override {
    agent_.reset();
    agent::Supervisor s(dir_ + "/state", SystemClock());
    for (const auto& [name, unit] : s.Scan()) (void)s.Kill(name);
    ::unsetenv("TESSERA_FAKE_NVML_STATE");
    ::unsetenv("TESSERA_FAKE_NVML_DEVICES");
    ::unsetenv("TESSERA_FAKE_NVML_FAIL");
    std::filesystem::remove_all(dir_);
  }

  // node-0 after the transition: resnet50 on 3g.40gb@4 and bert on
  // 2g.20gb@0 of GPU 0, one process each.
  NodePlan Plan() const {
    const Deployment d = DeploymentBuilder("a100-80gb", "parva")
                             .Gpu()
                             .Instance("3g.40gb", 4, "resnet50", 8, 1, 1000, 40)
                             .Instance("2g.20gb", 0, "bert", 8, 1, 300, 40)
                             .Service("resnet50", 800, 200)
                             .Service("bert", 200, 200)
                             .Build();
    DeployOptions options;
    options.serving.base_port = 23000;
    options.serving.mps_root = dir_ + "/mps";
    Result<std::vector<NodePlan>> plans = BuildNodePlans(d, options);
    EXPECT_TRUE(plans.ok()) << plans.status().ToString();
    return plans->front();
  }

  // From nothing to Plan(): phase 1 creates resnet50's instance, phase 2 bert's.
  static Transition Move() {
    Transition t;
    t.gpu = "a100-80gb";
    t.gpu_map = {{0, 0}};
    t.phases = {
        {{{"s1", StepAction::kCreate, 0, "3g.40gb", 4, "resnet50", "resnet50", 8, 1, 1000, ""}}},
        {{{"s2", StepAction::kCreate, 0, "2g.20gb", 0, "bert", "bert", 8, 1, 300, ""}}}};
    t.summary = {2, 2, 1, 1, 1};
    return t;
  }

  std::string Work(int version, std::optional<int> phase,
                   const std::string& state = "running") const {
    Json work = {{"version", version},
                 {"node", "node-0"},
                 {"plan", Json::parse(FormatNodePlanJson(Plan()))},
                 {"transition", nullptr}};
    if (phase) {
      work["transition"] = {{"id", "t1"},
                            {"phase", *phase},
                            {"state", state},
                            {"transition", Json::parse(FormatTransitionJson(Move()))},
                            {"steps", {*phase == 1 ? "s1" : "s2"}}};
    }
    return work.dump();
  }

  void Start(const std::string& token = "") {
    RemoteAgentOptions o;
    o.server = plane_.url();
    o.node = "node-0";
    o.token = token;
    o.nvml_library = TESSERA_FAKE_NVML;
    o.agent.state_dir = dir_ + "/state";
    o.agent.mps_command = {TESSERA_STANDIN, "mps", "-d"};
    o.agent.mps_control_command = {TESSERA_STANDIN, "mps-control"};
    o.agent.serve_command = {TESSERA_STANDIN, "serve", "--http-port={http_port}",
                             "--batch={batch}"};
    o.agent.ready_timeout_s = 20;
    o.agent.drain_timeout_s = 5;
    o.poll_wait_s = 0;
    o.backoff_first_s = 1;
    o.backoff_max_s = 3;
    o.sleep = [this](double s) { sleeps_.push_back(s); };
    Result<std::unique_ptr<RemoteAgent>> agent = RemoteAgent::Create(o, nullptr);
    ASSERT_TRUE(agent.ok()) << agent.status().ToString();
    agent_ = std::move(*agent);
  }

  std::string dir_;
  FakePlane plane_;
  std::unique_ptr<RemoteAgent> agent_;
  std::vector<double> sleeps_;
};

TEST_F(RemoteAgentTest, RunsEachPhasePostsItThenReconcilesAndPostsOnlyChanges) {
  Start();
  plane_.SetWork(Work(1, 1));
  ASSERT_TRUE(agent_->Round().ok());
  std::vector<FakePlane::Seen> posts = plane_.posts();
  ASSERT_EQ(posts.size(), 1u);
  EXPECT_EQ(posts[0].body["transition"], (Json{{"id", "t1"}, {"phase", 1}, {"ok", true}}));
  EXPECT_EQ(posts[0].body["converged"], false);
  EXPECT_EQ(posts[0].body["inventory"], (Json::array({{{"gpu", 0},
                                                       {"profile", "3g.40gb"},
                                                       {"start", 4},
                                                       {"service", "resnet50"},
                                                       {"ready", true}}})));
  EXPECT_EQ(plane_.polls()[0].query.count("since"), 0u);

  // The same phase again (another node's post moved the version): not rerun.
  plane_.SetWork(Work(2, 1));
  ASSERT_TRUE(agent_->Round().ok());
  EXPECT_EQ(plane_.polls()[1].query.at("since"), "1");
  EXPECT_EQ(plane_.posts().size(), 1u);

  plane_.SetWork(Work(3, 2));
  ASSERT_TRUE(agent_->Round().ok());
  posts = plane_.posts();
  ASSERT_EQ(posts.size(), 2u);
  EXPECT_EQ(posts[1].body["transition"], (Json{{"id", "t1"}, {"phase", 2}, {"ok", true}}));
  EXPECT_EQ(posts[1].body["converged"], true);
  EXPECT_EQ(posts[1].body["inventory"].size(), 2u);

  // Done: reconcile and say so once; the same state again posts nothing.
  plane_.SetWork(Work(4, std::nullopt));
  ASSERT_TRUE(agent_->Round().ok());
  ASSERT_TRUE(agent_->Round().ok());
  posts = plane_.posts();
  ASSERT_EQ(posts.size(), 3u);
  EXPECT_FALSE(posts[2].body.contains("transition"));
  EXPECT_EQ(posts[2].body["converged"], true);
  EXPECT_EQ(posts[2].body["inventory"][0]["service"], "bert");
  EXPECT_EQ(posts[2].body["inventory"][0]["start"], 0);
  EXPECT_TRUE(sleeps_.empty());
}

TEST_F(RemoteAgentTest, AnNvmlFailurePostsThePhaseFailedWithTheError) {
  ::setenv("TESSERA_FAKE_NVML_FAIL", "nvmlDeviceCreateGpuInstanceWithPlacement:1+", 1);
  Start();
  plane_.SetWork(Work(1, 1));
  ASSERT_TRUE(agent_->Round().ok());
  const std::vector<FakePlane::Seen> posts = plane_.posts();
  ASSERT_EQ(posts.size(), 1u);
  const Json& result = posts[0].body["transition"];
  EXPECT_EQ(result["ok"], false);
  const std::string error = result["error"].get<std::string>();
  EXPECT_NE(error.find("GPU 0, profile 3g.40gb, start 4"), std::string::npos) << error;
  EXPECT_NE(error.find("NVML_ERROR_UNKNOWN"), std::string::npos) << error;
  EXPECT_EQ(posts[0].body["inventory"], Json::array());
}

TEST_F(RemoteAgentTest, APausedTransitionHoldsTheNodeWhereItStopped) {
  // The first create fails; the retry after the pause succeeds.
  ::setenv("TESSERA_FAKE_NVML_FAIL", "nvmlDeviceCreateGpuInstanceWithPlacement:1", 1);
  Start();
  plane_.SetWork(Work(1, 1));
  ASSERT_TRUE(agent_->Round().ok());
  ASSERT_EQ(plane_.posts().size(), 1u);
  EXPECT_EQ(plane_.posts()[0].body["transition"]["ok"], false);

  // Paused: the target plan is in the work, but the node neither runs the
  // phase again nor reconciles to that plan (which would post the change).
  plane_.SetWork(Work(2, 1, "paused"));
  ASSERT_TRUE(agent_->Round().ok());
  ASSERT_TRUE(agent_->Round().ok());
  EXPECT_EQ(plane_.posts().size(), 1u);
  EXPECT_EQ(plane_.polls().size(), 3u);

  // Resumed: the phase runs again and succeeds.
  plane_.SetWork(Work(3, 1));
  ASSERT_TRUE(agent_->Round().ok());
  ASSERT_EQ(plane_.posts().size(), 2u);
  EXPECT_EQ(plane_.posts()[1].body["transition"]["ok"], true);
  EXPECT_EQ(plane_.posts()[1].body["inventory"].size(), 1u);
}

TEST_F(RemoteAgentTest, RetriesA503WithACappedDoublingBackoff) {
  Start();
  for (int i = 0; i < 4; ++i) {
    plane_.QueueGet(
        {503, R"({"error": {"code": "unavailable", "message": "store", "field": null}})"});
  }
  plane_.SetWork(Work(1, std::nullopt));
  ASSERT_TRUE(agent_->Round().ok());
  EXPECT_EQ(sleeps_, (std::vector<double>{1, 2, 3, 3}));
  EXPECT_EQ(plane_.polls().size(), 5u);
  ASSERT_EQ(plane_.posts().size(), 1u);
  EXPECT_EQ(plane_.posts()[0].body["converged"], true);
}

TEST_F(RemoteAgentTest, SendsTheBearerTokenAndStopsOnA401) {
  Start("s3cret");
  plane_.SetWork(Work(1, std::nullopt));
  ASSERT_TRUE(agent_->Round().ok());
  EXPECT_EQ(plane_.polls()[0].authorization, "Bearer s3cret");
  ASSERT_EQ(plane_.posts().size(), 1u);
  EXPECT_EQ(plane_.posts()[0].authorization, "Bearer s3cret");
  plane_.QueueGet(
      {401, R"({"error": {"code": "unauthorized", "message": "bad token", "field": null}})"});
  const Status s = agent_->Round();
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.message().find("HTTP 401: bad token"), std::string::npos) << s.message();
  EXPECT_NE(s.message().find("--token-file"), std::string::npos) << s.message();
}

TEST_F(RemoteAgentTest, A409ToAPhaseResultMeansPollAgain) {
  Start();
  plane_.SetPostStatus(409);
  plane_.SetWork(Work(1, 1));
  ASSERT_TRUE(agent_->Round().ok());
  EXPECT_EQ(plane_.posts().size(), 1u);
  EXPECT_TRUE(sleeps_.empty());
}

TEST_F(RemoteAgentTest, WorkForAnotherNodeIsAnError) {
  Start();
  Json work = Json::parse(Work(1, std::nullopt));
  work["node"] = "node-1";
  plane_.SetWork(work.dump());
  const Status s = agent_->Round();
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.message().find("node: the work is for node 'node-1'"), std::string::npos)
      << s.message();
}

TEST(RemoteAgentOptionsTest, ABadServerUrlIsRefusedNamingTheFlag) {
  for (const char* url : {"127.0.0.1:8080", "https://x:1", "http://", "http://h:0", "http://h:1/v1",
                          "http://h:99999", "http://[::1"}) {
    RemoteAgentOptions o;
    o.server = url;
    o.node = "node-0";
    Result<std::unique_ptr<RemoteAgent>> agent = RemoteAgent::Create(o, nullptr);
    ASSERT_FALSE(agent.ok()) << url;
    EXPECT_EQ(agent.status().code(), StatusCode::kInvalidArgument);
    EXPECT_NE(agent.status().message().find("--server"), std::string::npos);
  }
  RemoteAgentOptions o;
  o.node = "node-0";
  for (const char* url : {"http://127.0.0.1:8080", "http://localhost/", "http://[::1]:80"}) {
    o.server = url;
    EXPECT_TRUE(RemoteAgent::Create(o, nullptr).ok()) << url;
  }
}

}  // namespace
}  // namespace tessera
