// The replicated control plane (docs/control-plane.md, "Replicas"): three
// `tessera serve --store etcd:...` replicas on a three-member etcd cluster,
// and two agents on fake NVML machines given all three replicas. Clients
// put, patch and post through whichever replica answers (following 307s to
// the leader) and read from any; the history checker (history_check.h)
// holds what they saw linearizable, every acknowledged write included.
//
// LeaderKilledDuringLoadAndRollout: the leader is SIGKILLed while a
// transition rolls out under load: a follower leads, every acknowledged
// mutation is there, the transition goes on from the step it was at (no
// phase or step state ever goes back) to done, the machines hold the plan,
// and the killed replica rejoins as a follower.
// APausedLeaderNeverWritesAgain: the leader is SIGSTOPped past its lease,
// another leads, the first gets SIGCONT: it answers a mutation 307, and
// etcd's history (the writer key of every revision) shows no revision made
// under its old leadership after the new leader's first; it rejoins as a
// follower.
// EtcdMembersLost: with one etcd member killed writes go on; with two the
// API refuses mutations with 503 naming etcd; nothing acknowledged is lost,
// and writes resume once the members are back.
// EverythingRestartedKeepsTheState: every replica and every etcd member
// killed and started again: the scenario, plans and transitions are as
// they were.
#include <gtest/gtest.h>
#include <httplib.h>
#include <signal.h>

#include <atomic>
#include <chrono>
#include <mutex>
#include <random>

#include "control_e2e.h"
#include "etcd_cluster.h"
#include "history_check.h"
#include "util/base64.h"

namespace tessera::testing {
namespace {

constexpr int kReplicas = 3;
constexpr int kLeaseTtlS = 2;

double Now() {
  static const auto start = std::chrono::steady_clock::now();
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

// A client of the replicas. A request goes to the replica that answered
// last; a 307 is followed to its Location; no answer or a 503 tries the next
// replica, until a 2xx-4xx answer or `give_up_s`.
class ReplicaClient {
 public:
  struct Answer {
    int status = 0;  // 0: no answer
    Json body;
  };

  explicit ReplicaClient(std::vector<std::string> urls) : urls_(std::move(urls)) {}

  Answer Send(const std::string& method, const std::string& path, const Json& body = nullptr,
              double give_up_s = 30) {
    const double until = Now() + give_up_s;
    std::string url = urls_[current_];
    while (true) {
      httplib::Client c(url);
      c.set_connection_timeout(1, 0);
      c.set_read_timeout(3, 0);
      const std::string text = body.is_null() ? "" : body.dump();
      httplib::Result r = method == "GET"     ? c.Get(path)
                          : method == "PUT"   ? c.Put(path, text, "application/json")
                          : method == "PATCH" ? c.Patch(path, text, "application/json")
                                              : c.Post(path, text, "application/json");
      if (r && r->status == 307) {
        const std::string location = r->get_header_value("Location");
        url = location.substr(0, location.find('/', std::strlen("http://")));
        continue;
      }
      if (r && r->status != 503) {
        for (size_t i = 0; i < urls_.size(); ++i) {
          if (urls_[i] == url) current_ = i;
        }
        return {r->status, Json::parse(r->body, nullptr, false)};
      }
      if (Now() > until) return {};
      current_ = (current_ + 1) % urls_.size();
      url = urls_[current_];
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
  }

 private:
  std::vector<std::string> urls_;
  size_t current_ = 0;
};

// Clients mutating and reading the replicas, recording what they saw.
class Load {
 public:
  Load(std::vector<std::string> urls, const Json& scenario)
      : urls_(std::move(urls)), scenario_(scenario) {
    for (const auto& s : scenario["services"]) {
      services_.push_back(s["name"]);
      history_.Initial(s["name"], s["rate_rps"]);
    }
  }
  ~Load() { Stop(); }

  void Start() {
    for (int w = 0; w < 2; ++w) threads_.emplace_back([this, w] { Write(w); });
    threads_.emplace_back([this] { Read(); });
  }
  void Stop() {
    stop_ = true;
    for (std::thread& t : threads_) t.join();
    threads_.clear();
  }
  // Reads every service's rate from each replica in `urls` that answers.
  void FinalReads() {
    for (const std::string& url : urls_) ReadOnce(url);
  }
  // Acknowledged writes so far.
  int acked() const { return acked_.load(); }
  // A write made outside the load's threads.
  void Record(const HistoryOp& op) {
    std::lock_guard<std::mutex> lock(mu_);
    history_.Add(op);
  }
  std::vector<std::string> Violations() {
    std::lock_guard<std::mutex> lock(mu_);
    return history_.Violations();
  }
  std::vector<std::string> plans() {
    std::lock_guard<std::mutex> lock(mu_);
    return plans_;
  }
  size_t ops() {
    std::lock_guard<std::mutex> lock(mu_);
    return history_.ops().size();
  }

 private:
  // Writer w patches rates, now and then puts the whole scenario (writer 0)
  // or posts a plan (writer 1). Every value written is new.
  void Write(int w) {
    ReplicaClient client(urls_);
    std::mt19937 rng(w + 1);
    for (int i = 0; !stop_; ++i) {
      if (i % 10 == 9 && w == 1) {
        const ReplicaClient::Answer a = client.Send("POST", "/v1/plans", Json::object(), 10);
        if (a.status == 201) {
          std::lock_guard<std::mutex> lock(mu_);
          plans_.push_back(a.body["id"].dump());
        }
        continue;
      }
      std::vector<std::pair<std::string, double>> writes;
      Json body;
      std::string method, path;
      if (i % 10 == 9) {
        body = scenario_;
        for (auto& s : body["services"]) {
          s["rate_rps"] = Next();
          writes.emplace_back(s["name"], s["rate_rps"]);
        }
        method = "PUT";
        path = "/v1/scenario";
      } else {
        const std::string& service = services_[rng() % services_.size()];
        const double rate = Next();
        writes.emplace_back(service, rate);
        body = Json{{"rate_rps", rate}, {"replan", false}};
        method = "PATCH";
        path = "/v1/services/" + service;
      }
      const double invoked = Now();
      const ReplicaClient::Answer a = client.Send(method, path, body, 10);
      const double answered = a.status / 100 == 2 ? Now() : HistoryOp::kNever;
      if (a.status / 100 == 2) ++acked_;
      std::lock_guard<std::mutex> lock(mu_);
      for (const auto& [service, rate] : writes) {
        history_.Add({HistoryOp::Kind::kWrite, service, rate, invoked, answered,
                      "writer " + std::to_string(w)});
      }
    }
  }

  void Read() {
    for (size_t i = 0; !stop_; ++i) {
      ReadOnce(urls_[i % urls_.size()]);
      std::this_thread::sleep_for(std::chrono::milliseconds(30));
    }
  }

  void ReadOnce(const std::string& url) {
    httplib::Client c(url);
    c.set_connection_timeout(1, 0);
    c.set_read_timeout(3, 0);
    const double invoked = Now();
    httplib::Result r = c.Get("/v1/scenario");
    if (!r || r->status != 200) return;
    const double answered = Now();
    const Json j = Json::parse(r->body, nullptr, false);
    std::lock_guard<std::mutex> lock(mu_);
    for (const auto& s : j["services"]) {
      history_.Add({HistoryOp::Kind::kRead, s["name"], s["rate_rps"], invoked, answered,
                    "reader at " + url});
    }
  }

  // Not an integer: never a rate of the scenario's own.
  double Next() { return 1000.25 + next_++; }

  std::vector<std::string> urls_;
  const Json scenario_;
  std::vector<std::string> services_;
  std::atomic<int> next_{0};
  std::atomic<int> acked_{0};
  std::atomic<bool> stop_{false};
  std::vector<std::thread> threads_;
  std::mutex mu_;
  History history_;
  std::vector<std::string> plans_;
};

class ReplicaE2eTest : public ControlE2eTest {
 protected:
  void SetUp() override {
    ControlE2eTest::SetUp();
    if (IsSkipped()) return;
    Result<std::unique_ptr<EtcdTestCluster>> etcd =
        EtcdTestCluster::Start(dir_ / "etcd", KubeBinDir(), 3);
    if (!etcd.ok() && etcd.status().code() == StatusCode::kNotFound) {
      GTEST_SKIP() << etcd.status().message();
    }
    ASSERT_TRUE(etcd.ok()) << etcd.status().ToString();
    etcd_ = std::move(*etcd);
    Result<std::vector<int>> ports = FreePorts(kReplicas);
    ASSERT_TRUE(ports.ok()) << ports.status().ToString();
    for (int i = 0; i < kReplicas; ++i) {
      urls_.push_back("http://127.0.0.1:" + std::to_string((*ports)[i]));
      servers_ += (i == 0 ? "" : ",") + urls_.back();
    }
    replicas_.resize(kReplicas);
  }
  void TearDown() override {
    load_.reset();
    replicas_.clear();
    ControlE2eTest::TearDown();
    etcd_.reset();
  }

  void StartReplica(int i) {
    const std::string port = urls_[i].substr(urls_[i].rfind(':') + 1);
    replicas_[i] = std::make_unique<Background>(
        std::vector<std::string>{},
        "serve --store etcd:" + etcd_->endpoints() + " --listen 127.0.0.1:" + port + " --name r" +
            std::to_string(i) + " --lease-ttl " + std::to_string(kLeaseTtlS) +
            " --gpus-per-node 4 --no-auto",
        (dir_ / ("serve-" + std::to_string(i) + ".log")).string());
    ASSERT_TRUE(WaitFor([&] { return Get(i, "/healthz").first == 200; }))
        << "replica " << i << " does not answer\n"
        << ReplicaLogs();
  }
  void StartAll() {
    for (int i = 0; i < kReplicas; ++i) ASSERT_NO_FATAL_FAILURE(StartReplica(i));
  }
  // Every replica started, S3 put and the load (load_) running for half a
  // second; `leader` the replica that leads.
  void StartUnderLoad(int& leader) {
    ASSERT_NO_FATAL_FAILURE(StartAll());
    leader = WaitLeader();
    ASSERT_GE(leader, 0);
    s3_ = ScenarioJson("s3.yaml");
    ASSERT_EQ(ReplicaClient(urls_).Send("PUT", "/v1/scenario", s3_).status, 200);
    load_ = std::make_unique<Load>(urls_, s3_);
    load_->Start();
    std::this_thread::sleep_for(std::chrono::milliseconds(500));
  }

  std::pair<int, Json> Get(int replica, const std::string& path) {
    httplib::Client c(urls_[replica]);
    c.set_connection_timeout(1, 0);
    c.set_read_timeout(3, 0);
    httplib::Result r = c.Get(path);
    if (!r) return {0, nullptr};
    return {r->status, Json::parse(r->body, nullptr, false)};
  }
  std::string Role(int replica) {
    const auto [status, body] = Get(replica, "/readyz");
    return status == 200 ? body.value("role", "") : "";
  }
  // The replica that leads, as its /readyz says, other than `besides`.
  int WaitLeader(int besides = -1) {
    int leader = -1;
    WaitFor([&] {
      for (int i = 0; i < kReplicas; ++i) {
        if (i != besides && replicas_[i] && Role(i) == "leader") leader = i;
      }
      return leader >= 0;
    });
    EXPECT_GE(leader, 0) << "no replica leads\n" << ReplicaLogs();
    return leader;
  }
  std::string ReplicaLogs() {
    std::string out;
    for (int i = 0; i < kReplicas; ++i) {
      if (replicas_[i])
        out += "--- serve-" + std::to_string(i) + ".log\n" + Tail(replicas_[i]->Log());
    }
    for (size_t k = 0; k < agents_.size(); ++k)
      out += "--- agent-" + std::to_string(k) + ".log\n" + Tail(agents_[k]->Log());
    return out;
  }
  void ExpectLinearizable(Load& load) {
    load.Stop();
    load.FinalReads();
    const std::vector<std::string> violations = load.Violations();
    std::string first;
    for (size_t i = 0; i < violations.size() && i < 5; ++i) first += "\n" + violations[i];
    EXPECT_TRUE(violations.empty()) << violations.size() << " violations over " << load.ops()
                                    << " operations, the first:" << first;
    std::fprintf(stderr, "history: %zu operations, %d writes acknowledged, %zu violations\n",
                 load.ops(), load.acked(), violations.size());
    ReplicaClient client(urls_);
    for (const std::string& id : load.plans()) {
      EXPECT_EQ(client.Send("GET", "/v1/plans/" + id).status, 200) << "plan " << id << " is lost";
    }
  }

  std::unique_ptr<EtcdTestCluster> etcd_;
  std::vector<std::string> urls_;
  std::vector<std::unique_ptr<Background>> replicas_;
  Json s3_;
  std::unique_ptr<Load> load_;
};

TEST_F(ReplicaE2eTest, LeaderKilledDuringLoadAndRollout) {
  ASSERT_NO_FATAL_FAILURE(StartAll());
  const int leader = WaitLeader();
  ASSERT_GE(leader, 0);
  StartAgent(0);
  StartAgent(1);
  ReplicaClient client(urls_);
  const Json s3 = ScenarioJson("s3.yaml");
  ASSERT_EQ(client.Send("PUT", "/v1/scenario", s3).status, 200);
  ReplicaClient::Answer a = client.Send("POST", "/v1/plans", Json::object());
  ASSERT_EQ(a.status, 201) << a.body.dump();
  const std::string plan = Id(a.body["id"]);
  a = client.Send("POST", "/v1/transitions", {{"to", a.body["id"]}, {"start", true}});
  ASSERT_EQ(a.status, 201) << a.body.dump();
  const std::string move = Id(a.body["id"]);

  Load load(urls_, s3);
  load.Start();
  // Every state of the transition the replicas show, in order.
  std::vector<Json> seen;
  std::mutex seen_mu;
  std::atomic<bool> watching{true};
  std::thread watcher([&] {
    ReplicaClient c(urls_);
    while (watching) {
      const ReplicaClient::Answer t = c.Send("GET", "/v1/transitions/" + move, nullptr, 5);
      if (t.status == 200) {
        std::lock_guard<std::mutex> lock(seen_mu);
        seen.push_back(t.body);
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
  });
  // The kill lands while the rollout runs.
  ASSERT_TRUE(WaitFor([&] {
    std::lock_guard<std::mutex> lock(seen_mu);
    return !seen.empty() && seen.back().value("state", "") == "running";
  }));
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  replicas_[leader]->Kill();
  const double killed = Now();
  ReplicaClient after(urls_);
  const std::string service = s3["services"][0]["name"];
  a = after.Send("PATCH", "/v1/services/" + service, {{"rate_rps", 999.5}, {"replan", false}}, 60);
  const double failover = Now() - killed;
  load.Record({HistoryOp::Kind::kWrite, service, 999.5, killed,
               a.status == 200 ? Now() : HistoryOp::kNever, "the failover's probe"});
  ASSERT_EQ(a.status, 200) << a.body.dump() << "\n" << ReplicaLogs();
  std::fprintf(stderr, "failover: a mutation succeeded %.2f s after the leader's kill\n", failover);
  // A guard against a hang, not a measurement (make bench measures it).
  EXPECT_LT(failover, 3 * kLeaseTtlS + 10);
  const int next = WaitLeader(leader);
  EXPECT_NE(next, leader);
  ASSERT_NO_FATAL_FAILURE(StartReplica(leader));
  EXPECT_TRUE(WaitFor([&] { return Role(leader) == "follower"; })) << ReplicaLogs();

  ASSERT_TRUE(WaitFor([&] {
    std::lock_guard<std::mutex> lock(seen_mu);
    return !seen.empty() && seen.back().value("state", "") == "done";
  })) << "transition "
      << move << " not done after the failover\n"
      << ReplicaLogs();
  watching = false;
  watcher.join();
  // No phase and no step ever went back.
  const std::map<std::string, int> order = {{"pending", 0}, {"running", 1}, {"done", 2}};
  int phase = 0;
  std::map<std::string, int> steps;
  for (const Json& t : seen) {
    EXPECT_GE(t["phase"].get<int>(), phase) << t.dump().substr(0, 400);
    phase = t["phase"].get<int>();
    for (const auto& p : t["phases"]) {
      for (const auto& s : p["steps"]) {
        const std::string id = s["id"];
        const auto known = order.find(s["state"].get<std::string>());
        ASSERT_NE(known, order.end()) << "step " << id << ": " << s.dump();
        const int now = known->second;
        EXPECT_GE(now, steps[id]) << "step " << id << " went back to " << s["state"];
        steps[id] = now;
      }
    }
  }
  for (const auto& [id, state] : steps) EXPECT_EQ(state, 2) << "step " << id;
  const Deployment d = [&] {
    const ReplicaClient::Answer p = client.Send("GET", "/v1/plans/" + plan);
    Result<Deployment> parsed = ParseDeploymentJson(p.body["deployment"].dump(), "plan " + plan);
    EXPECT_TRUE(parsed.ok()) << parsed.status().ToString();
    return parsed.ok() ? *parsed : Deployment{};
  }();
  EXPECT_TRUE(WaitFor([&] { return Machines() == Layout(d); }))
      << "the machines do not hold plan " << plan << "\n"
      << ReplicaLogs();
  ExpectLinearizable(load);
}

// The value of `key` at every revision of etcd, and the revision that wrote
// it: etcd's history, read with ranges at each revision.
std::vector<std::pair<int64_t, std::string>> WritesOf(const std::string& endpoint,
                                                      const std::string& key) {
  httplib::Client c(endpoint);
  const auto range = [&](int64_t revision) {
    Json body{{"key", EncodeBase64(key)}};
    if (revision > 0) body["revision"] = std::to_string(revision);
    httplib::Result r = c.Post("/v3/kv/range", body.dump(), "application/json");
    return r ? Json::parse(r->body, nullptr, false) : Json();
  };
  const Json head = range(0);
  const int64_t last = std::stoll(head["header"]["revision"].get<std::string>());
  std::vector<std::pair<int64_t, std::string>> out;
  for (int64_t rev = 1; rev <= last; ++rev) {
    const Json at = range(rev);
    if (!at.contains("kvs")) continue;
    const Json& kv = at["kvs"][0];
    if (std::stoll(kv["mod_revision"].get<std::string>()) != rev) continue;
    std::string why;
    out.emplace_back(rev, DecodeBase64(kv["value"].get<std::string>(), &why).value_or(""));
  }
  return out;
}

TEST_F(ReplicaE2eTest, APausedLeaderNeverWritesAgain) {
  int leader = -1;
  ASSERT_NO_FATAL_FAILURE(StartUnderLoad(leader));
  Load& load = *load_;
  const Json& s3 = s3_;
  replicas_[leader]->Signal(SIGSTOP);
  const int next = WaitLeader(leader);
  ASSERT_GE(next, 0);
  // Past the lease by a margin, writes going on through the new leader.
  const int before = load.acked();
  std::this_thread::sleep_for(std::chrono::seconds(kLeaseTtlS + 1));
  replicas_[leader]->Signal(SIGCONT);
  // Its first answer to a mutation sends it elsewhere.
  {
    httplib::Client c(urls_[leader]);
    c.set_read_timeout(10, 0);
    const double invoked = Now();
    httplib::Result r =
        c.Patch("/v1/services/" + s3["services"][0]["name"].get<std::string>(),
                Json{{"rate_rps", 999.25}, {"replan", false}}.dump(), "application/json");
    ASSERT_TRUE(r);
    load.Record({HistoryOp::Kind::kWrite, s3["services"][0]["name"], 999.25, invoked,
                 r->status == 200 ? Now() : HistoryOp::kNever, "a mutation at the old leader"});
    EXPECT_TRUE(r->status == 307 || r->status == 503) << r->status << " " << r->body;
  }
  EXPECT_TRUE(WaitFor([&] { return Role(leader) == "follower"; })) << ReplicaLogs();
  EXPECT_GT(load.acked(), before) << "no write went through the new leader";
  ExpectLinearizable(load);

  // etcd's history: no revision made under the old leadership after the
  // new leader's first.
  const auto writes = WritesOf(etcd_->endpoint(0), "/tessera/writer");
  const std::string old_name = "r" + std::to_string(leader) + " ";
  const std::string new_name = "r" + std::to_string(next) + " ";
  int64_t first_new = INT64_MAX;
  std::string old_key;
  for (const auto& [rev, writer] : writes) {
    if (writer.rfind(new_name, 0) == 0) first_new = std::min(first_new, rev);
  }
  for (const auto& [rev, writer] : writes) {
    if (writer.rfind(old_name, 0) == 0 && rev < first_new) old_key = writer;
  }
  ASSERT_LT(first_new, INT64_MAX) << "the new leader wrote nothing";
  ASSERT_FALSE(old_key.empty()) << "the old leader wrote nothing";
  for (const auto& [rev, writer] : writes) {
    EXPECT_FALSE(writer == old_key && rev > first_new)
        << "revision " << rev << " written by the old leadership (" << writer
        << ") after the new leader's first, " << first_new;
  }
}

TEST_F(ReplicaE2eTest, EtcdMembersLost) {
  int leader = -1;
  ASSERT_NO_FATAL_FAILURE(StartUnderLoad(leader));
  Load& load = *load_;
  const Json& s3 = s3_;
  ASSERT_TRUE(etcd_->Kill(2).ok());
  int before = load.acked();
  EXPECT_TRUE(WaitFor([&] { return load.acked() > before + 20; }))
      << "writes stopped with two etcd members of three\n"
      << ReplicaLogs();
  ASSERT_TRUE(etcd_->Kill(1).ok());
  // One member of three: no quorum. A mutation is refused, naming etcd.
  ReplicaClient::Answer refused;
  EXPECT_TRUE(WaitFor([&] {
    httplib::Client c(urls_[leader]);
    c.set_read_timeout(20, 0);
    const double invoked = Now();
    httplib::Result r =
        c.Patch("/v1/services/" + s3["services"][0]["name"].get<std::string>(),
                Json{{"rate_rps", 999.75}, {"replan", false}}.dump(), "application/json");
    if (!r) return false;
    load.Record({HistoryOp::Kind::kWrite, s3["services"][0]["name"], 999.75, invoked,
                 r->status == 200 ? Now() : HistoryOp::kNever, "a mutation without quorum"});
    refused = {r->status, Json::parse(r->body, nullptr, false)};
    return r->status == 503;
  })) << refused.status
      << " " << refused.body.dump();
  EXPECT_NE(refused.body.dump().find("etcd"), std::string::npos) << refused.body.dump();
  ASSERT_TRUE(etcd_->Restart(1, false).ok());
  const Status back = etcd_->Restart(2, true);
  ASSERT_TRUE(back.ok()) << back.ToString();
  before = load.acked();
  EXPECT_TRUE(WaitFor([&] { return load.acked() > before + 20; }))
      << "writes did not resume with the members back\n"
      << ReplicaLogs();
  ExpectLinearizable(load);
}

TEST_F(ReplicaE2eTest, EverythingRestartedKeepsTheState) {
  ASSERT_NO_FATAL_FAILURE(StartAll());
  ASSERT_GE(WaitLeader(), 0);
  ReplicaClient client(urls_);
  ASSERT_EQ(client.Send("PUT", "/v1/scenario", ScenarioJson("s3.yaml")).status, 200);
  ReplicaClient::Answer a = client.Send("POST", "/v1/plans", Json::object());
  ASSERT_EQ(a.status, 201) << a.body.dump();
  ASSERT_EQ(client.Send("PATCH", "/v1/services/bert", {{"rate_rps", 60}, {"replan", false}}).status,
            200);
  ASSERT_EQ(client.Send("POST", "/v1/plans", Json::object()).status, 201);
  ASSERT_EQ(client.Send("POST", "/v1/transitions", {{"to", a.body["id"]}}).status, 201);
  const auto state = [&] {
    return std::vector<Json>{client.Send("GET", "/v1/scenario").body,
                             client.Send("GET", "/v1/plans").body,
                             client.Send("GET", "/v1/transitions").body,
                             client.Send("GET", "/v1/plans/" + Id(a.body["id"])).body};
  };
  const std::vector<Json> before = state();
  for (auto& replica : replicas_) replica->Kill();
  for (int m = 0; m < etcd_->members(); ++m) ASSERT_TRUE(etcd_->Kill(m).ok());
  // Each member waits for a quorum: the last one started finds it.
  for (int m = 0; m < etcd_->members(); ++m) {
    const Status restarted = etcd_->Restart(m, m + 1 == etcd_->members());
    ASSERT_TRUE(restarted.ok()) << restarted.ToString();
  }
  ASSERT_NO_FATAL_FAILURE(StartAll());
  ASSERT_GE(WaitLeader(), 0);
  const std::vector<Json> after = state();
  ASSERT_EQ(after.size(), before.size());
  for (size_t i = 0; i < before.size(); ++i) EXPECT_EQ(after[i], before[i]) << i;
}

}  // namespace
}  // namespace tessera::testing
