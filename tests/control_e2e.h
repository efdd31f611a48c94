// ControlE2eTest: the fixture of the whole-system tests (agent_control_e2e.cc,
// agent_replicas_e2e.cc): `tessera serve` and two `tessera agent --server`
// processes, each node on its own fake NVML machine (four A100-80GB) with
// stand-in MPS daemons and serving processes; the API as a client calls it,
// and what the machines hold against a plan's layout. Every wait is bounded
// and fails naming what it waited for; every process is killed at the end,
// also when a test fails.
#ifndef TESSERA_TESTS_CONTROL_E2E_H_
#define TESSERA_TESTS_CONTROL_E2E_H_

#include <gtest/gtest.h>
#include <httplib.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <thread>
#include <tuple>
#include <vector>

#include "agent_fixture.h"
#include "tessera/deployment_format.h"
#include "tessera/scenario.h"
#include "tessera/transition.h"
#include "workload/scenario_json.h"

namespace tessera::testing {

namespace fs = std::filesystem;
using Json = nlohmann::json;

inline constexpr double kWaitS = 60;

// The last `n` lines of `text`.
inline std::string Tail(const std::string& text, int n = 15) {
  size_t at = text.size();
  for (int i = 0; i <= n && at != std::string::npos && at > 0; ++i) at = text.rfind('\n', at - 1);
  return at == std::string::npos ? text : text.substr(at + 1);
}

// Polls `done` every 100 ms for up to kWaitS seconds.
inline bool WaitFor(const std::function<bool()>& done) {
  const Deadline deadline(SystemClock(), kWaitS);
  while (!deadline.Passed()) {
    if (done()) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  return done();
}

// examples/scenarios/<name> as the API's Scenario JSON.
inline Json ScenarioJson(const std::string& name) {
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
        "agent --server " +
            (servers_.empty() ? "http://127.0.0.1:" + std::to_string(port_) : servers_) +
            " --node node-" + std::to_string(k) + " --state-dir " + Quote(StateDir(k)) +
            " --nvml " + Quote(TESSERA_FAKE_NVML) + " --poll-wait 1 --base-port " +
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
  // nullopt when a machine's inventory could not be read (the command
  // failed beside a loaded suite): no sample, rather than a machine seen
  // empty.
  std::optional<std::multiset<std::vector<Seen>>> Machines() {
    std::multiset<std::vector<Seen>> out;
    for (int k = 0; k < 2; ++k) {
      const Outcome o =
          TesseraEnv("TESSERA_FAKE_NVML_STATE=" + Quote(NvmlState(k)) +
                         " TESSERA_FAKE_NVML_DEVICES=a100-80gb*4 ",
                     "agent inventory --format json --nvml " + Quote(TESSERA_FAKE_NVML));
      const Json inv = Json::parse(o.out, nullptr, false);
      if (!inv.is_object()) return std::nullopt;
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
  std::string servers_;  // the agents' --server; empty: the daemon at port_
  std::unique_ptr<httplib::Client> client_;
};

}  // namespace tessera::testing

#endif  // TESSERA_TESTS_CONTROL_E2E_H_
