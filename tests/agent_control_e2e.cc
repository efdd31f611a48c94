// The whole system (docs/control-plane.md): the real `tessera serve` and two
// `tessera agent --server` processes, each node on its own fake NVML machine
// (four A100-80GB) with stand-in MPS daemons and serving processes.
//
// RollsS3OutThenMovesItToNightWithinTheFloors: S3 is put, planned and rolled
// out; both nodes end on the plan's geometry. Then every service is patched to
// S3-night's rate, the last patch in auto mode: the daemon re-plans and moves
// the cluster; the nodes end on the new plan, and no state sampled during the
// move (both machines' MIG instances and the services their processes run)
// serves a service below min(rate before, rate after), counted with
// TransitionCapacity.
//
// AcknowledgedMutationsSurviveAKill: a client thread mutates the daemon
// (scenario, rates, plans, transitions) and records every 2xx; the daemon is
// SIGKILLed at a seeded random moment and started again on the same store:
// every acknowledged mutation is there, every transition has all its phases'
// steps, and a transition that was running is running again or failed with a
// reason. Three seeds.
//
// Every wait is bounded and fails naming what it waited for; every process
// is killed at the end, also when a test fails.
#include <gtest/gtest.h>
#include <httplib.h>

#include <atomic>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <random>
#include <set>
#include <thread>

#include "agent_fixture.h"
#include "control/api_json.h"
#include "tessera/deployment_format.h"
#include "tessera/scenario.h"
#include "tessera/transition.h"

namespace tessera::testing {
namespace {

namespace fs = std::filesystem;
using Json = nlohmann::json;

constexpr double kWaitS = 60;

// The last `n` lines of `text`.
std::string Tail(const std::string& text, int n = 15) {
  size_t at = text.size();
  for (int i = 0; i <= n && at != std::string::npos && at > 0; ++i) at = text.rfind('\n', at - 1);
  return at == std::string::npos ? text : text.substr(at + 1);
}

// Polls `done` every 100 ms for up to kWaitS seconds.
bool WaitFor(const std::function<bool()>& done) {
  const Deadline deadline(SystemClock(), kWaitS);
  while (!deadline.Passed()) {
    if (done()) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  return done();
}

// examples/scenarios/<name> as the API's Scenario JSON.
Json ScenarioJson(const std::string& name) {
  Result<Scenario> scenario = LoadScenarioYaml(SourcePath("examples/scenarios/" + name));
  EXPECT_TRUE(scenario.ok()) << scenario.status().ToString();
  return scenario.ok() ? Json::parse(ScenarioToJson(*scenario).dump()) : Json();
}

class ControlE2eTest : public AgentTest {
 protected:
  void SetUp() override {
    AgentTest::SetUp();
    const Outcome help = Tessera("serve --help");
    if (help.exit_code != 0) GTEST_SKIP() << "`tessera serve` is not in this build";
  }
  void TearDown() override {
    agents_.clear();
    daemon_.reset();
    for (int k = 0; k < 2; ++k) KillUnits(StateDir(k));
    AgentTest::TearDown();
  }

  std::string StateDir(int k) const {
    return fs::weakly_canonical(dir_ / ("agent-" + std::to_string(k))).string();
  }
  std::string NvmlState(int k) const {
    return (dir_ / ("nvml-" + std::to_string(k) + ".json")).string();
  }

  // Starts `tessera serve` on the test's store and reads its port.
  void StartDaemon(const std::string& extra = "") {
    const fs::path log = dir_ / "serve.log";
    std::ofstream(log, std::ios::trunc).close();
    daemon_ = std::make_unique<Background>(std::vector<std::string>{},
                                           "serve --listen 127.0.0.1:0 --db " +
                                               Quote((dir_ / "tessera.db").string()) +
                                               " --gpus-per-node 4 " + extra,
                                           log);
    // "tessera serve: listening on http://127.0.0.1:PORT (store ...)"
    ASSERT_TRUE(WaitFor([&] {
      const std::string text = daemon_->Log();
      const size_t at = text.find("listening on http://127.0.0.1:");
      if (at == std::string::npos) return false;
      port_ = std::atoi(text.c_str() + at + std::strlen("listening on http://127.0.0.1:"));
      return port_ > 0;
    })) << "no 'listening on' line from tessera serve:\n"
        << Tail(daemon_->Log());
    client_ = std::make_unique<httplib::Client>("127.0.0.1", port_);
    client_->set_read_timeout(30, 0);
  }

  void StartAgent(int k) {
    const std::string s = TESSERA_STANDIN;
    agents_.push_back(std::make_unique<Background>(
        std::vector<std::string>{"TESSERA_FAKE_NVML_STATE=" + NvmlState(k),
                                 "TESSERA_FAKE_NVML_DEVICES=a100-80gb*4"},
        "agent --server http://127.0.0.1:" + std::to_string(port_) + " --node node-" +
            std::to_string(k) + " --state-dir " + Quote(StateDir(k)) + " --nvml " +
            Quote(TESSERA_FAKE_NVML) + " --poll-wait 1 --base-port " +
            std::to_string(23000 + 5000 * k) + " --mps-root " +
            Quote((dir_ / ("mps-" + std::to_string(k))).string()) + " --mps-command " +
            Quote(s + " mps -d") + " --mps-control-command " + Quote(s + " mps-control") +
            " --serve-command " + Quote(s + " serve --http-port={http_port} --model={model}") +
            " --ready-timeout 20s --drain-timeout 5s",
        dir_ / ("agent-" + std::to_string(k) + ".log")));
  }

  // `method path body` against the daemon; {status, JSON body}.
  std::pair<int, Json> Api(const std::string& method, const std::string& path,
                           const Json& body = nullptr) {
    httplib::Result r =
        method == "GET"     ? client_->Get(path.c_str())
        : method == "PUT"   ? client_->Put(path.c_str(), body.dump(), "application/json")
        : method == "PATCH" ? client_->Patch(path.c_str(), body.dump(), "application/json")
                            : client_->Post(path.c_str(), body.dump(), "application/json");
    if (!r) return {0, Json(httplib::to_string(r.error()))};
    return {r->status, Json::parse(r->body, nullptr, false)};
  }

  std::string Logs() {
    std::string out = "--- serve.log\n" + Tail(daemon_->Log());
    for (size_t k = 0; k < agents_.size(); ++k)
      out += "--- agent-" + std::to_string(k) + ".log\n" + Tail(agents_[k]->Log());
    return out;
  }

  // Waits until transition `id` is done; fails with its state and the logs.
  void WaitDone(const std::string& id) {
    Json t;
    const bool done = WaitFor([&] {
      t = Api("GET", "/v1/transitions/" + id).second;
      return t.is_object() && t.value("state", "") == "done";
    });
    ASSERT_TRUE(done) << "transition " << id << " not done within " << kWaitS
                      << " s: " << t.dump().substr(0, 2000) << "\n"
                      << Logs();
  }

  // One instance as the machines show it.
  using Seen = std::tuple<std::string, int, std::string>;  // profile, start, service
  // Each GPU of both machines that holds an instance: its instances, sorted.
  // An instance serves its service once a serving process runs there.
  std::multiset<std::vector<Seen>> Machines() {
    std::multiset<std::vector<Seen>> out;
    for (int k = 0; k < 2; ++k) {
      const Outcome o =
          TesseraEnv("TESSERA_FAKE_NVML_STATE=" + Quote(NvmlState(k)) +
                         " TESSERA_FAKE_NVML_DEVICES=a100-80gb*4 ",
                     "agent inventory --format json --nvml " + Quote(TESSERA_FAKE_NVML));
      const Json inv = Json::parse(o.out, nullptr, false);
      if (!inv.is_object()) continue;
      agent::Supervisor supervisor(StateDir(k), SystemClock());
      const auto units = supervisor.Scan();
      for (const auto& gpu : inv["gpus"]) {
        std::vector<Seen> here;
        for (const auto& gi : gpu["gpu_instances"]) {
          std::string profile;
          for (const auto& p : gpu["profiles"]) {
            if (p["id"] == gi["profile_id"]) profile = p["name"];
          }
          const int start = gi["start"].get<int>();
          const std::string place =
              "gpu" + std::to_string(gpu["index"].get<int>()) + "-start" + std::to_string(start);
          std::string service;
          for (const auto& [name, unit] : units) {
            const size_t cut = name.rfind("-" + place + "-p");
            if (name.rfind("serve:", 0) == 0 && cut != std::string::npos)
              service = name.substr(6, cut - 6);
          }
          here.emplace_back(profile, start, service);
        }
        std::sort(here.begin(), here.end());
        if (!here.empty()) out.insert(here);
      }
    }
    return out;
  }

  // The same view of a plan's deployment.
  static std::multiset<std::vector<Seen>> Layout(const Deployment& d) {
    std::multiset<std::vector<Seen>> out;
    for (const GpuAssignment& g : d.gpus) {
      std::vector<Seen> here;
      for (const Instance& i : g.instances()) here.emplace_back(i.profile, i.start, i.service);
      std::sort(here.begin(), here.end());
      if (!here.empty()) out.insert(here);
    }
    return out;
  }

  Deployment PlanDeployment(const std::string& id) {
    const auto [status, plan] = Api("GET", "/v1/plans/" + id);
    EXPECT_EQ(status, 200) << plan.dump();
    Result<Deployment> d = ParseDeploymentJson(plan["deployment"].dump(), "plan " + id);
    EXPECT_TRUE(d.ok()) << d.status().ToString();
    return d.ok() ? *d : Deployment{};
  }

  static std::string Id(const Json& j) { return j.is_string() ? j.get<std::string>() : j.dump(); }

  std::unique_ptr<Background> daemon_;
  std::vector<std::unique_ptr<Background>> agents_;
  int port_ = 0;
  std::unique_ptr<httplib::Client> client_;
};

TEST_F(ControlE2eTest, RollsS3OutThenMovesItToNightWithinTheFloors) {
  ASSERT_NO_FATAL_FAILURE(StartDaemon("--auto"));
  StartAgent(0);
  StartAgent(1);
  auto [status, reply] = Api("PUT", "/v1/scenario", ScenarioJson("s3.yaml"));
  ASSERT_EQ(status, 200) << reply.dump();
  std::tie(status, reply) = Api("POST", "/v1/plans", Json::object());
  ASSERT_EQ(status, 201) << reply.dump();
  const std::string day = Id(reply["id"]);
  std::tie(status, reply) = Api("POST", "/v1/transitions", {{"to", reply["id"]}, {"start", true}});
  ASSERT_EQ(status, 201) << reply.dump();
  ASSERT_NO_FATAL_FAILURE(WaitDone(Id(reply["id"])));
  const Deployment a = PlanDeployment(day);
  ASSERT_TRUE(WaitFor([&] { return Machines() == Layout(a); }))
      << "the machines do not hold S3's plan " << day << "\n"
      << Logs();

  // Night: every rate, the last change in auto mode (the daemon re-plans).
  const Json night = ScenarioJson("s3-night.yaml");
  std::map<std::string, double> before, after;
  const Json day_scenario = ScenarioJson("s3.yaml");  // a named value: the loop reads into it
  for (const auto& s : day_scenario["services"]) before[s["name"]] = s["rate_rps"];
  Json replan;
  for (size_t i = 0; i < night["services"].size(); ++i) {
    // bert (x0.4) goes last: a change the threshold sees.
    const Json& s = night["services"][(i + 1) % night["services"].size()];
    after[s["name"]] = s["rate_rps"];
    Json patch = {{"rate_rps", s["rate_rps"]}};
    if (i + 1 < night["services"].size()) patch["replan"] = false;
    std::tie(status, reply) = Api("PATCH", "/v1/services/" + s["name"].get<std::string>(), patch);
    ASSERT_EQ(status, 200) << reply.dump();
    replan = reply["replan"];
  }
  ASSERT_TRUE(replan.is_object()) << "auto mode did not re-plan: " << reply.dump();
  // {"plan": PlanSummary, "transition": Transition}
  const std::string to = Id(replan["plan"]["id"]);
  const std::string move = Id(replan["transition"]["id"]);
  const Deployment b = PlanDeployment(to);
  const TransitionCapacity capacity(a, b);
  // Every instance either plan has, by what the machines show of it.
  std::map<Seen, std::vector<const Instance*>> known;
  for (const Deployment* d : {&a, &b}) {
    for (const GpuAssignment& g : d->gpus) {
      for (const Instance& i : g.instances()) known[{i.profile, i.start, i.service}].push_back(&i);
    }
  }
  int states = 0;
  std::string worst;
  double worst_ratio = 1e9;
  const bool done = WaitFor([&] {
    const auto seen = Machines();
    ++states;
    std::map<std::string, double> served;
    for (const auto& gpu : seen) {
      for (const Seen& s : gpu) {
        const auto k = known.find(s);
        if (std::get<2>(s).empty() || k == known.end()) continue;
        double least = 1e18;
        for (const Instance* i : k->second) least = std::min(least, capacity.Of(*i));
        served[std::get<2>(s)] += least;
      }
    }
    for (const auto& [service, rate] : before) {
      const double floor = std::min(rate, after[service]);
      const double ratio = served[service] / floor;
      if (ratio < worst_ratio) {
        worst_ratio = ratio;
        worst = service + ": " + std::to_string(served[service]) + " rps for a floor of " +
                std::to_string(floor) + " in state " + std::to_string(states);
      }
    }
    return Api("GET", "/v1/transitions/" + move).second.value("state", "") == "done";
  });
  ASSERT_TRUE(done) << "the night transition " << move << " is not done\n" << Logs();
  EXPECT_GE(worst_ratio, 1 - 1e-6) << "a state below the floor: " << worst;
  EXPECT_GT(states, 0);
  ASSERT_TRUE(WaitFor([&] { return Machines() == Layout(b); }))
      << "the machines do not hold the night plan " << to << "\n"
      << Logs();
}

// What the client thread saw acknowledged.
struct Acked {
  std::mutex mu;
  std::map<std::string, double> rates;                    // after the last acknowledged change
  std::optional<std::pair<std::string, double>> pending;  // a change in flight at the kill
  std::vector<Json> plans;                                // their ids, as the API gives them
  std::map<std::string, std::string> transitions;         // id -> state it was acknowledged in
};

TEST_F(ControlE2eTest, AcknowledgedMutationsSurviveAKill) {
  for (unsigned seed : {1u, 2u, 3u}) {
    SCOPED_TRACE("seed " + std::to_string(seed));
    fs::remove(dir_ / "tessera.db");
    fs::remove(dir_ / "tessera.db-wal");
    fs::remove(dir_ / "tessera.db-shm");
    ASSERT_NO_FATAL_FAILURE(StartDaemon("--no-auto"));
    const Json s3 = ScenarioJson("s3.yaml");
    ASSERT_EQ(Api("PUT", "/v1/scenario", s3).first, 200);
    Acked acked;
    for (const auto& s : s3["services"]) acked.rates[s["name"]] = s["rate_rps"];
    std::atomic<bool> stop{false};
    std::thread client([&, seed] {
      std::mt19937 rng(seed * 7919);
      httplib::Client c("127.0.0.1", port_);
      c.set_read_timeout(30, 0);
      while (!stop) {
        const int what = static_cast<int>(rng() % 4);
        if (what == 0 || what == 1) {  // a rate
          const auto& s = s3["services"][rng() % s3["services"].size()];
          const double rate =
              std::round(s["rate_rps"].get<double>() * (0.8 + (rng() % 40) / 100.0));
          const std::string name = s["name"];
          {
            std::lock_guard<std::mutex> lock(acked.mu);
            acked.pending = {name, rate};
          }
          httplib::Result r =
              c.Patch(("/v1/services/" + name).c_str(),
                      Json{{"rate_rps", rate}, {"replan", false}}.dump(), "application/json");
          if (!r) break;
          std::lock_guard<std::mutex> lock(acked.mu);
          acked.pending.reset();
          if (r->status == 200) acked.rates[name] = rate;
        } else if (what == 2) {  // a plan
          httplib::Result r = c.Post("/v1/plans", "{}", "application/json");
          if (!r) break;
          const Json j = Json::parse(r->body, nullptr, false);
          std::lock_guard<std::mutex> lock(acked.mu);
          if (r->status == 201) acked.plans.push_back(j["id"]);
        } else {  // a transition to the newest plan, started
          Json to;
          {
            std::lock_guard<std::mutex> lock(acked.mu);
            if (acked.plans.empty()) continue;
            to = acked.plans.back();
          }
          httplib::Result r = c.Post("/v1/transitions", Json{{"to", to}, {"start", true}}.dump(),
                                     "application/json");
          if (!r) break;
          const Json j = Json::parse(r->body, nullptr, false);
          std::lock_guard<std::mutex> lock(acked.mu);
          if (r->status == 201) acked.transitions[Id(j["id"])] = j.value("state", "");
        }
      }
    });
    std::mt19937 rng(seed);
    std::this_thread::sleep_for(std::chrono::milliseconds(300 + rng() % 2000));
    daemon_->Kill();
    stop = true;
    client.join();

    ASSERT_NO_FATAL_FAILURE(StartDaemon("--no-auto"));
    const auto [status, scenario] = Api("GET", "/v1/scenario");
    ASSERT_EQ(status, 200) << scenario.dump();
    std::lock_guard<std::mutex> lock(acked.mu);
    for (const auto& s : scenario["services"]) {
      const std::string name = s["name"];
      const double rate = s["rate_rps"];
      const bool in_flight = acked.pending && acked.pending->first == name &&
                             std::abs(acked.pending->second - rate) < 1e-9;
      EXPECT_TRUE(std::abs(acked.rates[name] - rate) < 1e-9 || in_flight)
          << name << ": " << rate << ", acknowledged " << acked.rates[name];
    }
    for (const Json& id : acked.plans) {
      EXPECT_EQ(Api("GET", "/v1/plans/" + Id(id)).first, 200) << "plan " << id << " is lost";
    }
    for (const auto& [id, state] : acked.transitions) {
      const auto [code, t] = Api("GET", "/v1/transitions/" + id);
      ASSERT_EQ(code, 200) << "transition " << id << " is lost";
      int steps = 0;
      for (const auto& phase : t["phases"]) {
        EXPECT_FALSE(phase["steps"].empty()) << "transition " << id << ": a phase without steps";
        steps += static_cast<int>(phase["steps"].size());
      }
      EXPECT_EQ(t["phases"].size(), t["summary"]["phases"].get<size_t>()) << id;
      EXPECT_EQ(steps, t["summary"]["steps"].get<int>()) << id;
      if (state == "running") {
        const std::string now = t["state"];
        EXPECT_TRUE(now == "running" || now == "done" ||
                    ((now == "paused" || now == "aborted") && t["error"].is_string() &&
                     !t["error"].get<std::string>().empty()))
            << "transition " << id << " was running, is " << t.dump().substr(0, 500);
      }
    }
    daemon_.reset();
  }
}

}  // namespace
}  // namespace tessera::testing
