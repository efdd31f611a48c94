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

#include "control/api_json.h"
#include "control_e2e.h"

namespace tessera::testing {
namespace {

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
    if (!seen) return false;  // no sample: a machine's inventory was not read
    ++states;
    std::map<std::string, double> served;
    for (const auto& gpu : *seen) {
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
