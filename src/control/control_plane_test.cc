#include "tessera/control/control_plane.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <set>
#include <thread>

#include "control/api_json.h"
#include "tessera/emit/node_plan.h"
#include "tessera/gpu_catalog.h"
#include "tessera/profile/profile_synth.h"
#include "tessera/scenario.h"
#include "test_paths.h"
#include "test_stores.h"

namespace tessera {
namespace {

using Json = nlohmann::json;

// The route table is docs/openapi.json's paths and methods, every one and
// nothing else, but /v1/openapi.json itself and /v1/dra/offers, which the
// HTTP layer serves (the offers keep no state: no replica redirects them).
TEST(ControlPlaneRoutes, AreTheOpenApiDocumentsPaths) {
  std::ifstream in(testing::SourcePath("docs/openapi.json"));
  ASSERT_TRUE(in) << "docs/openapi.json";
  const Json doc = Json::parse(in);
  std::set<std::pair<std::string, std::string>> documented;
  for (const auto& [path, item] : doc.at("paths").items()) {
    for (const auto& [method, operation] : item.items()) {
      std::string upper = method;
      std::transform(upper.begin(), upper.end(), upper.begin(), ::toupper);
      if (upper == "GET" || upper == "PUT" || upper == "POST" || upper == "PATCH" ||
          upper == "DELETE") {
        documented.emplace(upper, path);
      }
    }
  }
  documented.erase({"GET", "/v1/openapi.json"});
  EXPECT_EQ(documented.erase({"POST", "/v1/dra/offers"}), 1u);
  const auto table = ControlPlane::RouteTable();
  const std::set<std::pair<std::string, std::string>> routed(table.begin(), table.end());
  EXPECT_EQ(routed.size(), table.size()) << "a route is in the table twice";
  EXPECT_EQ(routed, documented);
}

Scenario LoadExample(const std::string& name) {
  Result<Scenario> s =
      LoadScenarioYaml(std::string(TESSERA_SOURCE_DIR) + "/examples/scenarios/" + name);
  EXPECT_TRUE(s.ok()) << s.status().ToString();
  return s.ok() ? *s : Scenario{};
}

struct Reply {
  int status = 0;
  Json body;
  std::string text;
  std::string route;
  std::string content_type;
};

// Every test runs on each store (test_stores.h).
class ControlPlaneTest : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override {
    if (GetParam() == "etcd" && !testing::EtcdUnavailable().empty()) {
      GTEST_SKIP() << testing::EtcdUnavailable();
    }
    name_ = testing::TestStoreName();
    path_ = ::testing::TempDir() + "/" + name_ + ".db";
    RemoveDb();
    Open();
  }
  void TearDown() override {
    plane_.reset();
    RemoveDb();
  }
  void RemoveDb() {
    for (const char* suffix : {"", "-wal", "-shm"}) std::filesystem::remove(path_ + suffix);
  }
  ControlOptions Options() {
    ControlOptions o;
    o.auto_mode = auto_mode_;
    o.deploy.gpus_per_node = 4;
    o.spare_gpus = 1;
    o.clock = &clock_;
    // The library's default rule (LatencyRule{}) on the embedded profiles.
    o.inputs.capacity_rule = "queueing";
    o.inputs.router = "weighted";
    o.routers = routers_;
    o.replan_hold_s = replan_hold_s_;
    o.autoscale = autoscale_;
    o.autoscale_minute_s = 1;
    o.wall_time = [this] {
      return "2025-01-01T00:00:" + std::to_string(10 + (ticks_++ % 50)) + "Z";
    };
    return o;
  }
  void Open() {
    plane_.reset();
    Result<std::unique_ptr<ControlStore>> store =
        testing::OpenTestStore(GetParam(), name_, ::testing::TempDir());
    ASSERT_TRUE(store.ok()) << store.status().ToString();
    Result<std::unique_ptr<ControlPlane>> plane =
        ControlPlane::Open(std::move(store).value(), Options());
    ASSERT_TRUE(plane.ok()) << plane.status().ToString();
    plane_ = std::move(plane).value();
  }
  Reply Call(const std::string& method, const std::string& path, const std::string& body = "",
             std::map<std::string, std::string> query = {},
             const std::string& content_type = "application/json") {
    ApiRequest request;
    request.method = method;
    request.path = path;
    request.query = std::move(query);
    request.body = body;
    request.content_type = body.empty() ? "" : content_type;
    ApiResponse response = plane_->Handle(request);
    Reply r;
    r.status = response.status;
    r.text = response.body;
    r.route = response.route;
    r.content_type = response.content_type;
    if (response.content_type.rfind("application/json", 0) == 0 && response.status != 304) {
      r.body = Json::parse(response.body, nullptr, false);
      EXPECT_FALSE(r.body.is_discarded()) << response.body;
    }
    return r;
  }
  // Expects an API error: its status, code and field.
  void ExpectError(const Reply& r, int status, const std::string& code, const Json& field) {
    EXPECT_EQ(r.status, status) << r.text;
    ASSERT_TRUE(r.body.contains("error")) << r.text;
    EXPECT_EQ(r.body["error"]["code"], code) << r.text;
    EXPECT_EQ(r.body["error"]["field"], field) << r.text;
    EXPECT_TRUE(r.body["error"]["message"].is_string());
  }
  void PutScenario(const Scenario& s) {
    const Reply r = Call("PUT", "/v1/scenario", ScenarioToJson(s).dump());
    ASSERT_EQ(r.status, 200) << r.text;
  }
  int64_t Plan(const std::string& body = "{}") {
    const Reply r = Call("POST", "/v1/plans", body);
    EXPECT_EQ(r.status, 201) << r.text;
    return r.status == 201 ? r.body["id"].get<int64_t>() : 0;
  }
  Json Transition(int64_t id) {
    const Reply r = Call("GET", "/v1/transitions/" + std::to_string(id));
    EXPECT_EQ(r.status, 200) << r.text;
    return r.body;
  }
  // The nodes with running steps in the running phase.
  std::set<std::string> RunningNodes(const Json& t) {
    std::set<std::string> nodes;
    for (const Json& phase : t["phases"]) {
      for (const Json& step : phase["steps"]) {
        if (step["state"] == "running") nodes.insert(step["node"].get<std::string>());
      }
      for (const Json& step : phase["routers"]) {
        if (step["state"] == "running") nodes.insert("router/" + step["router"].get<std::string>());
      }
    }
    return nodes;
  }
  // Posts `ok` for every node (and router) with a running step of the
  // running phase; returns the phase.
  int RunPhase(int64_t id, bool ok = true) {
    const Json t = Transition(id);
    const int phase = t["phase"].get<int>();
    for (const std::string& node : RunningNodes(t)) {
      if (node.starts_with("router/")) {
        const std::string router = node.substr(7);
        const Reply work = Call("GET", "/v1/routers/" + router + "/work");
        EXPECT_EQ(work.status, 200) << work.text;
        EXPECT_EQ(work.body["transition"]["phase"], phase);
        Json status = {{"transition",
                        {{"id", id},
                         {"phase", phase},
                         {"step", work.body["transition"]["step"]},
                         {"ok", ok}}}};
        const Reply posted = Call("POST", "/v1/routers/" + router + "/status", status.dump());
        EXPECT_EQ(posted.status, 200) << posted.text;
        continue;
      }
      const Reply work = Call("GET", "/v1/nodes/" + node + "/plan");
      EXPECT_EQ(work.status, 200) << work.text;
      EXPECT_EQ(work.body["transition"]["id"], id);
      EXPECT_EQ(work.body["transition"]["phase"], phase);
      EXPECT_FALSE(work.body["transition"]["steps"].empty());
      EXPECT_TRUE(ParseNodePlanJson(work.body["plan"].dump(), node).ok()) << work.text;
      Json status = {{"transition", {{"id", id}, {"phase", phase}, {"ok", ok}}}};
      if (!ok) status["transition"]["error"] = "MIG create failed";
      const Reply posted = Call("POST", "/v1/nodes/" + node + "/status", status.dump());
      EXPECT_EQ(posted.status, 200) << posted.text;
      if (!ok) break;
    }
    return phase;
  }
  // Drives a running transition to its end; checks phases advance.
  void RunToDone(int64_t id) {
    int last = 0;
    for (int guard = 0; guard < 300 && Transition(id)["state"] == "running"; ++guard) {
      const int phase = RunPhase(id);
      // With routers a phase takes three rounds: their drain, the nodes, their ready.
      if (routers_.empty()) {
        EXPECT_GT(phase, last);
      } else {
        EXPECT_GE(phase, last);
      }
      last = phase;
    }
    EXPECT_EQ(Transition(id)["state"], "done");
  }
  int64_t StartTransition(int64_t to) {
    const Reply r = Call("POST", "/v1/transitions", Json{{"to", to}, {"start", true}}.dump());
    EXPECT_EQ(r.status, 201) << r.text;
    EXPECT_EQ(r.body["state"], r.body["phases"].empty() ? "done" : "running");
    EXPECT_TRUE(r.body["check"]["ok"].get<bool>()) << r.text;
    EXPECT_GE(r.body["summary"]["min_capacity_ratio"].get<double>(), 1.0) << r.text;
    return r.body.value("id", int64_t{0});
  }
  // S3 planned and deployed.
  int64_t Deploy() {
    PutScenario(LoadExample("s3.yaml"));
    const int64_t plan = Plan();
    RunToDone(StartTransition(plan));
    return plan;
  }

  std::string name_;
  std::string path_;  // the SQLite store's file
  FakeClock clock_;
  int ticks_ = 0;
  bool auto_mode_ = false;
  std::vector<std::string> routers_;
  double replan_hold_s_ = 0;
  std::optional<AutoscalePolicyOptions> autoscale_;
  std::unique_ptr<ControlPlane> plane_;
};

INSTANTIATE_TEST_SUITE_P(Stores, ControlPlaneTest, testing::kStoreKinds,
                         [](const ::testing::TestParamInfo<std::string>& info) {
                           return info.param;
                         });

// Each server of a router's work by state.
std::map<std::string, int> ServerStates(const Json& work) {
  std::map<std::string, int> count;
  for (const Json& b : work["backends"]) {
    for (const Json& s : b["servers"]) ++count[s["state"].get<std::string>()];
  }
  return count;
}

TEST_P(ControlPlaneTest, RoutersDrainBeforeAndReadyAfterEveryPhase) {
  routers_ = {"edge"};
  Open();
  ExpectError(Call("GET", "/v1/routers/other/work"), 404, "not_found", nullptr);
  const Reply none = Call("GET", "/v1/routers/edge/work");
  ASSERT_EQ(none.status, 200) << none.text;
  EXPECT_TRUE(none.body["backends"].empty());
  EXPECT_TRUE(none.body["transition"].is_null());
  const int64_t day = Deploy();
  // Deployed: every process a ready server.
  Reply work = Call("GET", "/v1/routers/edge/work");
  ASSERT_EQ(work.status, 200) << work.text;
  EXPECT_TRUE(work.body["transition"].is_null());
  EXPECT_TRUE(work.body["rule"].is_string()) << work.text;
  const std::map<std::string, int> deployed = ServerStates(work.body);
  ASSERT_EQ(deployed.size(), 1u) << work.text;
  EXPECT_GT(deployed.at("ready"), 0);

  for (const Service& s : LoadExample("s3-night.yaml").services) {
    ASSERT_EQ(Call("PATCH", "/v1/services/" + s.name,
                   Json{{"rate_rps", s.rate_rps}, {"replan", false}}.dump())
                  .status,
              200);
  }
  const int64_t id = StartTransition(Plan());
  ASSERT_NE(id, day);
  bool drained = false;
  for (int guard = 0; guard < 300 && Transition(id)["state"] == "running"; ++guard) {
    const Json t = Transition(id);
    const int phase = t["phase"];
    const std::set<std::string> running = RunningNodes(t);
    work = Call("GET", "/v1/routers/edge/work");
    const Json& step = work.body["transition"]["step"];
    if (running.count("router/edge")) {
      // The router's steps run alone: no node has a step meanwhile.
      EXPECT_EQ(running.size(), 1u);
      ASSERT_TRUE(step.is_string()) << work.text;
      const Reply node = Call("GET", "/v1/nodes/node-0/plan");
      EXPECT_TRUE(node.body["transition"]["steps"].empty()) << node.text;
      // Acknowledging the other step, or another phase, is refused.
      const std::string other = step == "drain" ? "ready" : "drain";
      for (const Json& wrong :
           {Json{{"id", id}, {"phase", phase}, {"step", other}, {"ok", true}},
            Json{{"id", id}, {"phase", phase + 1}, {"step", step}, {"ok", true}}}) {
        ExpectError(Call("POST", "/v1/routers/edge/status", Json{{"transition", wrong}}.dump()),
                    409, "conflict", nullptr);
      }
      drained |= step == "drain" && ServerStates(work.body).count("drain") > 0;
    } else {
      EXPECT_TRUE(step.is_null()) << work.text;
      // What a phase stops is out of the router while the nodes run it.
      EXPECT_EQ(ServerStates(work.body).count("drain"), 0u) << work.text;
    }
    RunPhase(id);
  }
  EXPECT_EQ(Transition(id)["state"], "done");
  EXPECT_TRUE(drained) << "no phase of the day-to-night transition drained a server";
  work = Call("GET", "/v1/routers/edge/work");
  EXPECT_TRUE(work.body["transition"].is_null());
  EXPECT_EQ(ServerStates(work.body).size(), 1u) << work.text;
  // Strict bodies.
  ExpectError(Call("POST", "/v1/routers/edge/status",
                   R"({"transition": {"id": 1, "phase": 1, "ok": true}})"),
              400, "invalid_argument", "transition.step");
  ExpectError(Call("POST", "/v1/routers/edge/status",
                   R"({"transition": {"id": 1, "phase": 1, "step": "undo", "ok": true}})"),
              400, "invalid_argument", "transition.step");
  ExpectError(Call("POST", "/v1/routers/edge/status",
                   R"({"observed": {"bert": {"rate_rps": 4, "p99_ms": -1}}})"),
              400, "invalid_argument", "observed.bert.p99_ms");
  ExpectError(Call("POST", "/v1/routers/edge/status", R"({"converged": true})"), 400,
              "invalid_argument", "converged");
}

TEST_P(ControlPlaneTest, ARoutersObservedRateReplansAfterTheHold) {
  routers_ = {"edge"};
  auto_mode_ = true;
  replan_hold_s_ = 5;
  Open();
  Deploy();
  const std::string moved =
      R"({"observed": {"resnet50": {"rate_rps": 1901.9, "slo_compliance": 0.97, "p99_ms": 12}}})";
  ASSERT_EQ(Call("POST", "/v1/routers/edge/status", moved).status, 200);
  EXPECT_TRUE(Call("GET", "/v1/deployment").body["transition"].is_null());
  clock_.Advance(4000);
  ASSERT_EQ(Call("POST", "/v1/routers/edge/status", moved).status, 200);
  EXPECT_TRUE(Call("GET", "/v1/deployment").body["transition"].is_null());
  // Back within the threshold: the hold starts over.
  ASSERT_EQ(
      Call("POST", "/v1/routers/edge/status", R"({"observed": {"resnet50": {"rate_rps": 1463}}})")
          .status,
      200);
  clock_.Advance(2000);
  ASSERT_EQ(Call("POST", "/v1/routers/edge/status", moved).status, 200);
  EXPECT_TRUE(Call("GET", "/v1/deployment").body["transition"].is_null());
  const std::string metrics = Call("GET", "/metrics").text;
  EXPECT_NE(metrics.find("tessera_service_observed_p99_seconds{service=\"resnet50\"} 0.012"),
            std::string::npos)
      << metrics;
  EXPECT_NE(metrics.find(
                "tessera_service_observed_rate_requests_per_second{service=\"resnet50\"} 1901.9"),
            std::string::npos)
      << metrics;
  const Json observed = Call("GET", "/v1/observed").body["services"]["resnet50"];
  EXPECT_EQ(observed["rate_rps"], 1901.9);
  EXPECT_EQ(observed["p99_ms"], 12);
  EXPECT_EQ(observed["slo_compliance"], 0.97);
  EXPECT_EQ(observed["reporters"], 1);
  const Json routers = Call("GET", "/v1/routers").body["routers"];
  ASSERT_EQ(routers.size(), 1u);
  EXPECT_EQ(routers[0]["observed"]["resnet50"]["p99_ms"], 12);
  // As far, but from 40 requests: within a Poisson count's noise, no move.
  const std::string noise = R"({"observed": {"resnet50": {"rate_rps": 1901.9, "requests": 40}}})";
  ASSERT_EQ(Call("POST", "/v1/routers/edge/status", noise).status, 200);
  clock_.Advance(6000);
  ASSERT_EQ(Call("POST", "/v1/routers/edge/status", noise).status, 200);
  EXPECT_TRUE(Call("GET", "/v1/deployment").body["transition"].is_null());
  // From 4,000 requests it is a move.
  const std::string counted =
      R"({"observed": {"resnet50": {"rate_rps": 1901.9, "requests": 4000}}})";
  ASSERT_EQ(Call("POST", "/v1/routers/edge/status", counted).status, 200);
  clock_.Advance(5000);
  ASSERT_EQ(Call("POST", "/v1/routers/edge/status", counted).status, 200);
  const Json moving = Call("GET", "/v1/deployment").body["transition"];
  ASSERT_TRUE(moving.is_number_integer());
  RunToDone(moving.get<int64_t>());
}

TEST_P(ControlPlaneTest, TheAutoscalingPolicyMovesOnObservedRates) {
  routers_ = {"edge"};
  auto_mode_ = true;
  autoscale_ = AutoscalePolicyOptions{};  // its minute: 1 s of the clock (Options)
  Open();
  Deploy();
  const Json deployed = Call("GET", "/v1/deployment").body;
  const Scenario s3 = LoadExample("s3.yaml");
  const auto report = [&](const std::function<double(const Service&)>& rate) {
    Json observed = Json::object();
    for (const Service& s : s3.services) observed[s.name] = {{"rate_rps", rate(s)}};
    ASSERT_EQ(Call("POST", "/v1/routers/edge/status", Json{{"observed", observed}}.dump()).status,
              200);
  };
  // resnet50 at 1.5 x its rate: nothing until the policy's first minute ends.
  const auto risen = [](const Service& s) { return s.rate_rps * (s.name == "resnet50" ? 1.5 : 1); };
  report(risen);
  EXPECT_TRUE(Call("GET", "/v1/deployment").body["transition"].is_null());
  clock_.Advance(1000);
  report(risen);
  Json moving = Call("GET", "/v1/deployment").body["transition"];
  ASSERT_TRUE(moving.is_number_integer()) << Call("GET", "/v1/observed").text;
  Json autoscale = Call("GET", "/v1/observed").body["autoscale"];
  EXPECT_EQ(autoscale["minutes"], 1);
  EXPECT_NE(autoscale["note"].get<std::string>().find("minute 1: moving up"), std::string::npos)
      << autoscale;
  RunToDone(moving.get<int64_t>());
  const Json up = Call("GET", "/v1/deployment").body;
  EXPECT_NE(up["plan"], deployed["plan"]);
  // The new plan holds resnet50's need (1.05 x 1.5 x its rate) and the rest.
  // Then every service at half its rate: a move down once the need has
  // stayed below the hysteresis for the hold (5 minutes of the policy).
  const auto halved = [](const Service& s) { return s.rate_rps / 2; };
  for (int minute = 0; minute < 5; ++minute) {
    clock_.Advance(1000);
    report(halved);
    ASSERT_TRUE(Call("GET", "/v1/deployment").body["transition"].is_null()) << minute;
  }
  clock_.Advance(1000);
  report(halved);
  moving = Call("GET", "/v1/deployment").body["transition"];
  ASSERT_TRUE(moving.is_number_integer()) << Call("GET", "/v1/observed").text;
  autoscale = Call("GET", "/v1/observed").body["autoscale"];
  EXPECT_NE(autoscale["note"].get<std::string>().find("moving down"), std::string::npos)
      << autoscale;
  RunToDone(moving.get<int64_t>());
  EXPECT_LT(Call("GET", "/v1/deployment").body["metrics"]["gpus"], up["metrics"]["gpus"]);
}

TEST_P(ControlPlaneTest, HealthReadinessAndUnknownRoutes) {
  Reply r = Call("GET", "/healthz");
  EXPECT_EQ(r.status, 200);
  EXPECT_EQ(r.body, Json({{"status", "ok"}}));
  EXPECT_EQ(r.route, "/healthz");
  r = Call("GET", "/readyz");
  EXPECT_EQ(r.body["status"], "ready") << r.text;
  EXPECT_EQ(r.body["role"], "leader") << r.text;
  EXPECT_EQ(r.body["store"].get<std::string>().rfind(GetParam() + " ", 0), 0u) << r.text;
  r = Call("GET", "/v1/nothing");
  ExpectError(r, 404, "not_found", nullptr);
  EXPECT_EQ(r.route, "unmatched");
  ExpectError(Call("DELETE", "/v1/scenario"), 405, "method_not_allowed", nullptr);
  ExpectError(Call("GET", "/v1/plans/abc"), 404, "not_found", nullptr);
}

TEST_P(ControlPlaneTest, ScenarioRoundTripsAndBodiesAreStrict) {
  ExpectError(Call("GET", "/v1/scenario"), 404, "not_found", nullptr);
  const Scenario s3 = LoadExample("s3.yaml");
  const Json body = ScenarioToJson(s3);
  Reply r = Call("PUT", "/v1/scenario", body.dump());
  ASSERT_EQ(r.status, 200) << r.text;
  EXPECT_EQ(r.body["scenario"], body);
  EXPECT_EQ(Call("GET", "/v1/scenario").body, body);

  ExpectError(Call("PUT", "/v1/scenario", body.dump(), {}, "text/plain"), 415,
              "unsupported_media_type", nullptr);
  ExpectError(Call("PUT", "/v1/scenario", "{\"services\": ["), 400, "bad_request", nullptr);
  struct Case {
    std::string what;
    std::function<void(Json&)> change;
    std::string field;
  };
  const std::vector<Case> cases = {
      {"unknown field", [](Json& j) { j["services"][0]["rte"] = 1; }, "services[0].rte"},
      {"wrong type", [](Json& j) { j["services"][2]["rate_rps"] = "829"; }, "services[2].rate_rps"},
      {"out of range", [](Json& j) { j["services"][1]["slo_ms"] = 1e9; }, "services[1].slo_ms"},
      {"zero rate", [](Json& j) { j["services"][3]["rate_rps"] = 0; }, "services[3].rate_rps"},
      {"missing", [](Json& j) { j["services"][0].erase("model"); }, "services[0].model"},
      {"duplicate", [](Json& j) { j["services"][1]["name"] = j["services"][0]["name"]; },
       "services[1].name"},
      {"gpu and pool", [](Json& j) { j["pool"] = Json::array(); }, "pool"},
      {"unknown gpu", [](Json& j) { j["gpu"] = "z80"; }, "gpu"},
      {"unknown top key", [](Json& j) { j["servces"] = 1; }, "servces"},
  };
  for (const Case& c : cases) {
    Json changed = body;
    c.change(changed);
    SCOPED_TRACE(c.what);
    ExpectError(Call("PUT", "/v1/scenario", changed.dump()), 400, "invalid_argument", c.field);
  }
  EXPECT_EQ(Call("GET", "/v1/scenario").body, body);  // unchanged
}

TEST_P(ControlPlaneTest, PlansAndDeploymentBeforeAnyTransition) {
  ExpectError(Call("POST", "/v1/plans", "{}"), 409, "conflict", nullptr);
  Reply d = Call("GET", "/v1/deployment");
  EXPECT_EQ(d.body, Json({{"plan", nullptr},
                          {"deployment", nullptr},
                          {"metrics", nullptr},
                          {"transition", nullptr}}));
  PutScenario(LoadExample("s3.yaml"));
  Reply r = Call("POST", "/v1/plans", "{}");
  ASSERT_EQ(r.status, 201) << r.text;
  EXPECT_EQ(r.body["id"], 1);
  EXPECT_EQ(r.body["planner"], "exact");  // the library's default, as `tessera plan`'s
  EXPECT_TRUE(r.body["incremental"].is_null());
  const Json& metrics = r.body["metrics"];
  const int gpus = metrics["gpus"].get<int>();
  EXPECT_GT(gpus, 0);
  EXPECT_TRUE(metrics["cost_per_hour"].is_null());
  ASSERT_EQ(metrics["services"].size(), 11u);
  for (const Json& s : metrics["services"]) {
    EXPECT_GE(s["capacity_rps"].get<double>(), s["rate_rps"].get<double>()) << s;
    EXPECT_GE(s["headroom_ratio"].get<double>(), 0) << s;
    EXPECT_GT(s["instances"].get<int>(), 0) << s;
  }
  r = Call("GET", "/v1/plans", "", {{"limit", "5"}});
  ASSERT_EQ(r.body["plans"].size(), 1u);
  EXPECT_EQ(r.body["plans"][0]["id"], 1);
  r = Call("GET", "/v1/plans/1");
  EXPECT_EQ(r.body["scenario"]["name"], "S3");
  EXPECT_EQ(r.body["deployment"]["planner"], "exact");
  r = Call("GET", "/v1/plans/1/svg");
  EXPECT_EQ(r.status, 200);
  EXPECT_EQ(r.content_type, "image/svg+xml");
  // Four GPUs a node here (Options()): S3's fifth GPU is on the second node.
  ASSERT_GE(gpus, 5);
  EXPECT_NE(r.text.find("GPU 4 (node 1"), std::string::npos) << r.text.substr(0, 2000);
  EXPECT_EQ(r.text.find("GPU 4 (node 0"), std::string::npos);
  ExpectError(Call("GET", "/v1/plans/99"), 404, "not_found", nullptr);
  ExpectError(Call("GET", "/v1/deployment/svg"), 404, "not_found", nullptr);
  ExpectError(Call("GET", "/v1/plans", "", {{"limit", "0"}}), 400, "invalid_argument", "limit");
  ExpectError(Call("POST", "/v1/plans", R"({"planner": "nope"})"), 400, "invalid_argument",
              "planner");
  ExpectError(Call("POST", "/v1/plans", R"({"rates": {"nope": 5}})"), 400, "invalid_argument",
              "rates.nope");
  ExpectError(Call("POST", "/v1/plans", R"({"rates": {"bert": -1}})"), 400, "invalid_argument",
              "rates.bert");
  ExpectError(Call("POST", "/v1/plans", R"({"incremental": 1})"), 400, "invalid_argument",
              "incremental");
  ExpectError(Call("POST", "/v1/plans", R"({"incremental": true})"), 409, "conflict", nullptr);
  ExpectError(Call("POST", "/v1/plans", R"({"repack_gpus": -1})"), 400, "invalid_argument",
              "repack_gpus");
  ExpectError(Call("POST", "/v1/plans", R"({"repack_gpus": 1.5})"), 400, "invalid_argument",
              "repack_gpus");
  ExpectError(Call("POST", "/v1/plans", R"({"incremental": false, "repack_gpus": 2})"), 400,
              "invalid_argument", "repack_gpus");
  ExpectError(Call("POST", "/v1/plans", R"({"consolidate": 1})"), 400, "invalid_argument",
              "consolidate");
  ExpectError(Call("POST", "/v1/plans", R"({"incremental": false, "consolidate": true})"), 400,
              "invalid_argument", "consolidate");
  ExpectError(Call("POST", "/v1/transitions", R"({"to": 7})"), 404, "not_found", "to");
  ExpectError(Call("POST", "/v1/transitions", R"({"to": 1, "spare_gpus": -1})"), 400,
              "invalid_argument", "spare_gpus");
}

TEST_P(ControlPlaneTest, RolloutMovesTheClusterPhaseByPhase) {
  const int64_t day = Deploy();
  Reply d = Call("GET", "/v1/deployment");
  EXPECT_EQ(d.body["plan"], day);
  EXPECT_TRUE(d.body["transition"].is_null());
  EXPECT_EQ(d.body["metrics"]["gpus"], d.body["deployment"]["metrics"]["gpus"]);
  EXPECT_EQ(Call("GET", "/v1/deployment/svg").status, 200);

  // Night: the rates of s3-night.yaml, patched without a re-plan.
  for (const Service& s : LoadExample("s3-night.yaml").services) {
    const Reply r = Call("PATCH", "/v1/services/" + s.name,
                         Json{{"rate_rps", s.rate_rps}, {"replan", false}}.dump());
    ASSERT_EQ(r.status, 200) << r.text;
    EXPECT_TRUE(r.body["replan"].is_null());
    EXPECT_EQ(r.body["service"]["rate_rps"].get<double>(), s.rate_rps);
  }
  // A preview repacking every GPU: still a plan kept incrementally.
  const Reply repacked = Call("POST", "/v1/plans", R"({"repack_gpus": 1000})");
  ASSERT_EQ(repacked.status, 201) << repacked.text;
  EXPECT_TRUE(repacked.body["incremental"].is_object()) << repacked.text;
  const Reply consolidated = Call("POST", "/v1/plans", R"({"consolidate": true})");
  ASSERT_EQ(consolidated.status, 201) << consolidated.text;
  EXPECT_TRUE(consolidated.body["incremental"].is_object()) << consolidated.text;
  const Reply planned = Call("POST", "/v1/plans", "{}");
  ASSERT_EQ(planned.status, 201) << planned.text;
  EXPECT_TRUE(planned.body["incremental"].is_object()) << planned.text;
  const int64_t night = planned.body["id"];
  Reply t = Call("POST", "/v1/transitions", Json{{"to", night}}.dump());
  ASSERT_EQ(t.status, 201) << t.text;
  EXPECT_EQ(t.body["state"], "proposed");
  EXPECT_EQ(t.body["from"], day);
  EXPECT_TRUE(t.body["check"]["ok"].get<bool>());
  EXPECT_GE(t.body["check"]["summary"]["min_capacity_ratio"].get<double>(), 1.0);
  const int64_t id = t.body["id"];
  std::set<std::string> nodes;
  for (const Json& phase : t.body["phases"]) {
    for (const Json& step : phase["steps"]) {
      const int gpu = step["gpu"];
      EXPECT_EQ(step["node"], "node-" + std::to_string(gpu / 4));
      nodes.insert(step["node"].get<std::string>());
    }
  }
  EXPECT_GE(nodes.size(), 2u);
  ExpectError(Call("POST", "/v1/transitions/" + std::to_string(id) + "/resume", "{}"), 409,
              "conflict", nullptr);
  const Reply started = Call("POST", "/v1/transitions/" + std::to_string(id) + "/start", "{}");
  ASSERT_EQ(started.status, 200) << started.text;
  EXPECT_EQ(started.body["phase"], 1);
  EXPECT_EQ(Call("GET", "/v1/deployment").body["transition"], id);
  // The node plans are the target's while it runs; a node without GPUs
  // gets an empty one.
  const Reply idle = Call("GET", "/v1/nodes/node-99/plan");
  ASSERT_EQ(idle.status, 200) << idle.text;
  EXPECT_TRUE(idle.body["plan"]["gpus"].empty());
  EXPECT_TRUE(ParseNodePlanJson(idle.body["plan"].dump(), "idle").ok()) << idle.text;
  ExpectError(Call("GET", "/v1/nodes/gpu-a/plan"), 404, "not_found", nullptr);
  // A result for a phase not running.
  ExpectError(Call("POST", "/v1/nodes/node-0/status",
                   Json{{"transition", {{"id", id}, {"phase", 9}, {"ok", true}}}}.dump()),
              409, "conflict", nullptr);
  RunToDone(id);
  d = Call("GET", "/v1/deployment");
  EXPECT_EQ(d.body["plan"], night);
  EXPECT_TRUE(d.body["transition"].is_null());
  const Json list = Call("GET", "/v1/transitions").body["transitions"];
  ASSERT_EQ(list.size(), 2u);
  EXPECT_EQ(list[0]["id"], id);
  EXPECT_FALSE(list[0].contains("phases"));
  // A transition proposed from this deployment is stale once another moves it.
  const Reply stale = Call("POST", "/v1/transitions", Json{{"to", day}}.dump());
  ASSERT_EQ(stale.status, 201) << stale.text;
  RunToDone(StartTransition(day));
  EXPECT_EQ(Call("GET", "/v1/deployment").body["plan"], day);
  const std::string stale_path = "/v1/transitions/" + std::to_string(stale.body["id"].get<int>());
  ExpectError(Call("POST", stale_path + "/start", "{}"), 409, "conflict", nullptr);
  EXPECT_EQ(Call("POST", stale_path + "/abort", "{}").body["state"], "aborted");
}

TEST_P(ControlPlaneTest, AFailedStepPausesAndResumeFinishes) {
  PutScenario(LoadExample("s3.yaml"));
  const int64_t id = StartTransition(Plan());
  RunPhase(id, /*ok=*/false);
  Json t = Transition(id);
  EXPECT_EQ(t["state"], "paused");
  EXPECT_TRUE(t["error"].is_string());
  bool failed = false;
  for (const Json& step : t["phases"][0]["steps"]) failed |= step["state"] == "failed";
  EXPECT_TRUE(failed);
  // The nodes hold where the transition stopped: they are told it is paused.
  const Json held = Call("GET", "/v1/nodes/node-0/plan").body["transition"];
  EXPECT_EQ(held["id"], id);
  EXPECT_EQ(held["state"], "paused");
  ExpectError(Call("POST", "/v1/nodes/node-0/status",
                   Json{{"transition", {{"id", id}, {"phase", 1}, {"ok", true}}}}.dump()),
              409, "conflict", nullptr);
  // Another transition may not start while this one is paused.
  ExpectError(Call("POST", "/v1/transitions", Json{{"to", 1}, {"start", true}}.dump()), 409,
              "conflict", nullptr);
  const Reply resumed = Call("POST", "/v1/transitions/" + std::to_string(id) + "/resume", "{}");
  ASSERT_EQ(resumed.status, 200) << resumed.text;
  EXPECT_EQ(resumed.body["state"], "running");
  EXPECT_TRUE(resumed.body["error"].is_null());
  RunToDone(id);
  EXPECT_EQ(Call("GET", "/v1/deployment").body["plan"], 1);
  ExpectError(Call("POST", "/v1/transitions/" + std::to_string(id) + "/abort", "{}"), 409,
              "conflict", nullptr);
}

TEST_P(ControlPlaneTest, AutoModeReplansBeyondTheThresholdOnly) {
  auto_mode_ = true;
  Open();
  Deploy();
  Reply r = Call("PATCH", "/v1/services/bert", R"({"rate_rps": 48})");  // +4%
  ASSERT_EQ(r.status, 200) << r.text;
  EXPECT_TRUE(r.body["replan"].is_null()) << r.text;
  EXPECT_TRUE(r.body["note"].is_string());
  r = Call("PATCH", "/v1/services/resnet50", R"({"rate_rps": 1901.9, "replan": false})");
  EXPECT_TRUE(r.body["replan"].is_null()) << r.text;
  r = Call("PATCH", "/v1/services/resnet50", R"({"rate_rps": 1901.9})");  // +30%
  ASSERT_EQ(r.status, 200) << r.text;
  ASSERT_TRUE(r.body["replan"].is_object()) << r.text;
  const int64_t id = r.body["replan"]["transition"]["id"];
  const int64_t replanned = r.body["replan"]["plan"]["id"];
  EXPECT_EQ(r.body["replan"]["transition"]["state"], "running");
  EXPECT_TRUE(r.body["replan"]["plan"]["incremental"].is_object());
  // While it runs, no other re-plan.
  r = Call("PATCH", "/v1/services/vgg16", R"({"rate_rps": 2000})");
  EXPECT_TRUE(r.body["replan"].is_null()) << r.text;
  RunToDone(id);
  EXPECT_EQ(Call("GET", "/v1/deployment").body["plan"], replanned);
  // The nodes' observed rates count too: resnet50 back at its day rate.
  const Reply observed =
      Call("POST", "/v1/nodes/node-0/status", R"({"observed": {"resnet50": {"rate_rps": 1463}}})");
  ASSERT_EQ(observed.status, 200) << observed.text;
  const Json moving = Call("GET", "/v1/deployment").body["transition"];
  ASSERT_TRUE(moving.is_number_integer());
  RunToDone(moving.get<int64_t>());
  ExpectError(Call("PATCH", "/v1/services/nope", R"({"rate_rps": 5})"), 404, "not_found", nullptr);
  ExpectError(Call("PATCH", "/v1/services/bert", R"({"replan": true})"), 400, "invalid_argument",
              nullptr);
  ExpectError(Call("PATCH", "/v1/services/bert", R"({"slo_ms": "x"})"), 400, "invalid_argument",
              "slo_ms");
}

TEST_P(ControlPlaneTest, ReopeningMidRolloutResumesIt) {
  PutScenario(LoadExample("s3.yaml"));
  const int64_t id = StartTransition(Plan());
  const Json before = Transition(id);
  Open();  // the store closed and opened again
  Json after = Transition(id);
  EXPECT_EQ(after["state"], "running");
  EXPECT_EQ(after["phases"], before["phases"]);
  EXPECT_EQ(Call("GET", "/v1/deployment").body["transition"], id);
  EXPECT_EQ(Call("GET", "/v1/scenario").body["name"], "S3");
  RunToDone(id);
  Open();
  EXPECT_EQ(Call("GET", "/v1/deployment").body["plan"], 1);
}

TEST_P(ControlPlaneTest, APatchIsDurableAcrossAReopenUntilTheNextScenario) {
  PutScenario(LoadExample("s3.yaml"));
  Reply r =
      Call("PATCH", "/v1/services/bert", R"({"rate_rps": 46.5, "slo_ms": 180, "replan": false})");
  ASSERT_EQ(r.status, 200) << r.text;
  r = Call("PATCH", "/v1/services/bert", R"({"rate_rps": 47, "replan": false})");
  ASSERT_EQ(r.status, 200) << r.text;
  EXPECT_EQ(r.body["service"]["rate_rps"], 47);
  EXPECT_EQ(r.body["service"]["slo_ms"], 180);
  const Json patched = Call("GET", "/v1/scenario").body;
  Open();  // the store closed and opened again
  EXPECT_EQ(Call("GET", "/v1/scenario").body, patched);
  // A new scenario supersedes the service updates, across a reopen too.
  PutScenario(LoadExample("s3.yaml"));
  const Json fresh = Call("GET", "/v1/scenario").body;
  EXPECT_NE(fresh, patched);
  Open();
  EXPECT_EQ(Call("GET", "/v1/scenario").body, fresh);
}

TEST_P(ControlPlaneTest, TheDeploymentHasAStrongETagAndA304) {
  auto get = [&](const std::string& if_none_match) {
    ApiRequest request;
    request.method = "GET";
    request.path = "/v1/deployment";
    request.if_none_match = if_none_match;
    return plane_->Handle(request);
  };
  auto header = [](const ApiResponse& r, const std::string& name) {
    for (const auto& [key, value] : r.headers) {
      if (key == name) return value;
    }
    return std::string();
  };
  const ApiResponse empty = get("");
  const std::string before = header(empty, "ETag");
  EXPECT_EQ(before.front(), '"');
  EXPECT_EQ(header(empty, "Vary"), "Accept-Encoding");
  Deploy();
  const ApiResponse deployed = get("");
  const std::string etag = header(deployed, "ETag");
  EXPECT_NE(etag, before);
  EXPECT_EQ(get(before).status, 200);
  for (const std::string& tag : {etag, "\"other\", " + etag, "W/" + etag, std::string("*")}) {
    const ApiResponse r = get(tag);
    EXPECT_EQ(r.status, 304) << tag;
    EXPECT_TRUE(r.body.empty());
    EXPECT_EQ(header(r, "ETag"), etag);
  }
  Open();  // the same deployment after a restart: the same tag
  EXPECT_EQ(get(etag).status, 304);
}

TEST_P(ControlPlaneTest, LongPollWakesOnAVersionChange) {
  PutScenario(LoadExample("s3.yaml"));
  const int64_t plan = Plan();
  const Reply first = Call("GET", "/v1/nodes/node-0/plan");
  const int64_t seen = first.body["version"];
  EXPECT_TRUE(first.body["transition"].is_null());
  std::atomic<int64_t> woke{0};
  std::thread poller([&] {
    const Reply r =
        Call("GET", "/v1/nodes/node-0/plan", "", {{"since", std::to_string(seen)}, {"wait", "60"}});
    woke = r.body["version"].get<int64_t>();
  });
  StartTransition(plan);
  poller.join();
  EXPECT_GT(woke.load(), seen);
  // Shutdown wakes waiters at once.
  plane_->Shutdown();
  EXPECT_EQ(plane_->WaitForVersion(plane_->Version(), std::chrono::seconds(60)), plane_->Version());
  ExpectError(Call("GET", "/v1/nodes/node-0/plan", "", {{"wait", "61"}}), 400, "invalid_argument",
              "wait");
}

TEST_P(ControlPlaneTest, NodeStatusIsStrictAndFeedsMetrics) {
  Deploy();
  ExpectError(Call("POST", "/v1/nodes/node-0/status", R"({"converged": 1})"), 400,
              "invalid_argument", "converged");
  ExpectError(Call("POST", "/v1/nodes/node-0/status", R"({"observed": {"bert": {"rate": 1}}})"),
              400, "invalid_argument", "observed.bert.rate");
  ExpectError(Call("POST", "/v1/nodes/node-0/status",
                   R"({"inventory": [{"gpu": 0, "profile": "1g.10gb", "start": -1}]})"),
              400, "invalid_argument", "inventory[0].start");
  const Reply ok = Call(
      "POST", "/v1/nodes/node-0/status",
      R"({"converged": true, "observed": {"bert": {"rate_rps": 45, "slo_compliance": 0.99}}})");
  ASSERT_EQ(ok.status, 200) << ok.text;
  EXPECT_TRUE(ok.body["version"].is_number_integer());
  // Deploy's nodes posted their phase results; node-0 its report now.
  const Json nodes = Call("GET", "/v1/nodes").body["nodes"];
  ASSERT_GE(nodes.size(), 2u);
  const auto node0 =
      std::find_if(nodes.begin(), nodes.end(), [](const Json& n) { return n["node"] == "node-0"; });
  ASSERT_NE(node0, nodes.end());
  EXPECT_EQ((*node0)["status"]["converged"], true);
  plane_->SetExtraMetrics([] { return std::string("# extra\n"); });
  const Reply m = Call("GET", "/metrics");
  EXPECT_EQ(m.status, 200);
  for (const char* line : {"# TYPE tessera_service_rate_requests_per_second gauge",
                           "tessera_service_rate_requests_per_second{service=\"bert\"} 46",
                           "tessera_service_observed_rate_requests_per_second{service=\"bert\"} 45",
                           "tessera_service_observed_compliance_ratio{service=\"bert\"} 0.99",
                           "tessera_service_planned_compliance_ratio{service=\"bert\"} 1",
                           "tessera_transitions{state=\"done\"} 1", "# HELP tessera_gpus_used",
                           "tessera_store_version ", "# extra\n"}) {
    EXPECT_NE(m.text.find(line), std::string::npos) << line << "\n" << m.text;
  }
}

// Two replicas on one etcd prefix: the first leads; the second serves reads
// from the store and sends mutations and long-polls to the leader (307 with
// the leader's URL), then leads once the first has gone.
TEST(ControlPlaneReplicaTest, AFollowerReadsTheStoreAndSendsMutationsToTheLeader) {
  if (!testing::EtcdUnavailable().empty()) GTEST_SKIP() << testing::EtcdUnavailable();
  const std::string prefix = testing::TestStoreName();
  const auto open = [&](const std::string& name, int port) -> std::unique_ptr<ControlPlane> {
    StoreOptions store_options;
    store_options.name = name;
    store_options.advertise_url = "http://127.0.0.1:" + std::to_string(port);
    store_options.lease_ttl_s = 2;
    Result<std::unique_ptr<ControlStore>> store =
        testing::OpenTestStore("etcd", prefix, ::testing::TempDir(), store_options);
    EXPECT_TRUE(store.ok()) << store.status().ToString();
    if (!store.ok()) return nullptr;
    ControlOptions options;
    options.auto_mode = false;
    options.replica_name = name;
    options.inputs.capacity_rule = "queueing";
    options.inputs.router = "weighted";
    Result<std::unique_ptr<ControlPlane>> plane = ControlPlane::Open(std::move(*store), options);
    EXPECT_TRUE(plane.ok()) << plane.status().ToString();
    return plane.ok() ? std::move(*plane) : nullptr;
  };
  const auto call = [](ControlPlane& plane, const std::string& method, const std::string& path,
                       const std::string& body = "",
                       std::map<std::string, std::string> query = {}) {
    ApiRequest request;
    request.method = method;
    request.path = path;
    request.body = body;
    request.query = std::move(query);
    request.content_type = body.empty() ? "" : "application/json";
    return plane.Handle(request);
  };
  std::unique_ptr<ControlPlane> a = open("replica-a", 1001);
  std::unique_ptr<ControlPlane> b = open("replica-b", 1002);
  ASSERT_TRUE(a && b);
  ASSERT_EQ(call(*a, "PUT", "/v1/scenario", ScenarioToJson(LoadExample("s3.yaml")).dump()).status,
            200);
  // The follower reads what the leader wrote.
  ApiResponse r = call(*b, "GET", "/v1/scenario");
  ASSERT_EQ(r.status, 200) << r.body;
  EXPECT_EQ(Json::parse(r.body)["services"][0]["name"], "bert");
  r = call(*b, "GET", "/readyz");
  ASSERT_EQ(r.status, 200) << r.body;
  EXPECT_EQ(Json::parse(r.body)["role"], "follower");
  EXPECT_EQ(Json::parse(r.body)["leader"],
            Json({{"name", "replica-a"}, {"url", "http://127.0.0.1:1001"}}));
  // Mutations and long-polls go to the leader, the query kept.
  r = call(*b, "PATCH", "/v1/services/bert", R"({"rate_rps": 50})");
  EXPECT_EQ(r.status, 307) << r.body;
  EXPECT_EQ(Json::parse(r.body)["error"]["code"], "not_leader");
  ASSERT_EQ(r.headers.size(), 1u);
  EXPECT_EQ(r.headers[0], std::make_pair(std::string("Location"),
                                         std::string("http://127.0.0.1:1001/v1/services/bert")));
  r = call(*b, "GET", "/v1/nodes/node-0/plan", "", {{"since", "0"}, {"wait", "1 s"}});
  EXPECT_EQ(r.status, 307) << r.body;
  EXPECT_EQ(r.headers.at(0).second,
            "http://127.0.0.1:1001/v1/nodes/node-0/plan?since=0&wait=1%20s");
  r = call(*b, "GET", "/metrics");
  EXPECT_NE(r.body.find("tessera_leader 0\n"), std::string::npos) << r.body;
  EXPECT_NE(r.body.find("tessera_leader_info{name=\"replica-a\"} 1\n"), std::string::npos);
  // A change by the leader is what the follower reads next.
  ASSERT_EQ(call(*a, "PATCH", "/v1/services/bert", R"({"rate_rps": 51})").status, 200);
  r = call(*b, "GET", "/v1/scenario");
  EXPECT_EQ(Json::parse(r.body)["services"][0]["rate_rps"], 51);
  // The leader goes (its lease revoked): the follower leads and writes.
  a.reset();
  r = call(*b, "PATCH", "/v1/services/bert", R"({"rate_rps": 52})");
  EXPECT_EQ(r.status, 200) << r.body;
  r = call(*b, "GET", "/readyz");
  EXPECT_EQ(Json::parse(r.body)["role"], "leader");
  r = call(*b, "GET", "/metrics");
  EXPECT_NE(r.body.find("tessera_leader 1\n"), std::string::npos) << r.body;
  EXPECT_NE(r.body.find("tessera_leadership_changes_total 1\n"), std::string::npos) << r.body;
}

}  // namespace
}  // namespace tessera
