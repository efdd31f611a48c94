#include "tessera/control/control_store.h"

#include <gtest/gtest.h>
#include <signal.h>
#include <sqlite3.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cstring>
#include <filesystem>
#include <map>
#include <random>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "control/etcd_client.h"
#include "tessera/control/sqlite_store.h"
#include "test_paths.h"
#include "test_stores.h"

namespace tessera {
namespace {

// The SQLite store's own tests (its file, schema and durability).
class SqliteStoreTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = testing::FreshTestDir();
    path_ = (dir_ / "control.db").string();
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  std::unique_ptr<SqliteStore> OpenStore() {
    Result<std::unique_ptr<SqliteStore>> store = SqliteStore::Open(path_);
    EXPECT_TRUE(store.ok()) << store.status().ToString();
    if (!store.ok()) return nullptr;
    return std::move(store).value();
  }

  std::filesystem::path dir_;
  std::string path_;
};

// The contract of every store (control_store.h), on each of them.
class ControlStoreTest : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override {
    if (GetParam() == "etcd" && !testing::EtcdUnavailable().empty()) {
      GTEST_SKIP() << testing::EtcdUnavailable();
    }
    dir_ = testing::FreshTestDir();
    name_ = testing::TestStoreName();
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  std::unique_ptr<ControlStore> OpenStore() {
    Result<std::unique_ptr<ControlStore>> store = testing::OpenTestStore(GetParam(), name_, dir_);
    EXPECT_TRUE(store.ok()) << store.status().ToString();
    if (!store.ok()) return nullptr;
    return std::move(store).value();
  }

  std::filesystem::path dir_;
  std::string name_;
};

INSTANTIATE_TEST_SUITE_P(Stores, ControlStoreTest, testing::kStoreKinds,
                         [](const ::testing::TestParamInfo<std::string>& info) {
                           return info.param;
                         });

StoredPlan SamplePlan(int i) {
  StoredPlan p;
  p.created_at = "2024-01-01T00:00:" + std::to_string(10 + i % 50) + "Z";
  p.planner = i % 2 == 0 ? "parva" : "exact";
  p.scenario_json = "{\"scenario\":" + std::to_string(i) + "}";
  p.deployment_json = "{\"deployment\":" + std::to_string(i) + "}";
  p.metrics_json = "{\"gpus\":" + std::to_string(i) + "}";
  return p;
}

StoredTransition MakeTransition(std::optional<int64_t> from, int64_t to, int steps,
                                const std::string& state = "proposed") {
  StoredTransition t;
  t.from_plan = from;
  t.to_plan = to;
  t.state = state;
  t.transition_json = "{\"steps\":" + std::to_string(steps) + "}";
  t.check_json = "{\"ok\":true}";
  t.created_at = "2024-01-02T00:00:00Z";
  t.updated_at = t.created_at;
  for (int i = 0; i < steps; ++i) {
    StoredStep s;
    s.step_id = "s" + std::to_string(i + 1);
    s.phase = 1 + i / 2;
    s.node = "node-" + std::to_string(i % 3);
    t.steps.push_back(s);
  }
  return t;
}

void ExpectPlanEq(const StoredPlan& a, const StoredPlan& b, bool with_deployment = true) {
  EXPECT_EQ(a.created_at, b.created_at);
  EXPECT_EQ(a.planner, b.planner);
  EXPECT_EQ(a.scenario_json, b.scenario_json);
  if (with_deployment) {
    EXPECT_EQ(a.deployment_json, b.deployment_json);
  }
  EXPECT_EQ(a.metrics_json, b.metrics_json);
}

void ExpectStepsEq(const std::vector<StoredStep>& a, const std::vector<StoredStep>& b) {
  ASSERT_EQ(a.size(), b.size());
  for (size_t i = 0; i < a.size(); ++i) {
    EXPECT_EQ(a[i].step_id, b[i].step_id) << i;
    EXPECT_EQ(a[i].phase, b[i].phase) << i;
    EXPECT_EQ(a[i].node, b[i].node) << i;
    EXPECT_EQ(a[i].state, b[i].state) << i;
    EXPECT_EQ(a[i].error, b[i].error) << i;
  }
}

void ExpectTransitionEq(const StoredTransition& a, const StoredTransition& b,
                        bool with_steps = true) {
  EXPECT_EQ(a.from_plan, b.from_plan);
  EXPECT_EQ(a.to_plan, b.to_plan);
  EXPECT_EQ(a.state, b.state);
  EXPECT_EQ(a.phase, b.phase);
  EXPECT_EQ(a.transition_json, b.transition_json);
  EXPECT_EQ(a.check_json, b.check_json);
  EXPECT_EQ(a.error, b.error);
  EXPECT_EQ(a.created_at, b.created_at);
  EXPECT_EQ(a.updated_at, b.updated_at);
  if (with_steps) ExpectStepsEq(a.steps, b.steps);
}

int64_t VersionOf(ControlStore& store) {
  Result<int64_t> v = store.Version();
  EXPECT_TRUE(v.ok()) << v.status().ToString();
  return v.ok() ? *v : -1;
}

// A raw SQLite query returning the first column of the first row as text.
std::string RawQuery(const std::string& path, const std::string& sql) {
  sqlite3* db = nullptr;
  std::string out = "<error>";
  if (sqlite3_open_v2(path.c_str(), &db, SQLITE_OPEN_READWRITE, nullptr) == SQLITE_OK) {
    sqlite3_stmt* stmt = nullptr;
    if (sqlite3_prepare_v2(db, sql.c_str(), -1, &stmt, nullptr) == SQLITE_OK) {
      const int rc = sqlite3_step(stmt);
      if (rc == SQLITE_ROW) {
        const auto* text = reinterpret_cast<const char*>(sqlite3_column_text(stmt, 0));
        out = text != nullptr ? text : "";
      } else if (rc == SQLITE_DONE) {
        out = "";
      }
    }
    sqlite3_finalize(stmt);
  }
  sqlite3_close_v2(db);
  return out;
}

void RawExec(const std::string& path, const std::string& sql) {
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open_v2(path.c_str(), &db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, nullptr),
            SQLITE_OK);
  char* error = nullptr;
  const int rc = sqlite3_exec(db, sql.c_str(), nullptr, nullptr, &error);
  EXPECT_EQ(rc, SQLITE_OK) << (error != nullptr ? error : "");
  sqlite3_free(error);
  sqlite3_close_v2(db);
}

TEST_P(ControlStoreTest, EveryMethodRoundTrips) {
  auto store = OpenStore();
  ASSERT_NE(store, nullptr);
  if (auto* sqlite = dynamic_cast<SqliteStore*>(store.get())) {
    EXPECT_EQ(sqlite->schema_version(), SqliteStore::kSchemaVersion);
  }
  EXPECT_EQ(VersionOf(*store), 1);

  // Scenario: none, then the last one put.
  Result<std::optional<std::string>> scenario = store->Scenario();
  ASSERT_TRUE(scenario.ok());
  EXPECT_FALSE(scenario->has_value());
  ASSERT_TRUE(store->PutScenario("{\"services\":[]}").ok());
  ASSERT_TRUE(store->PutScenario("{\"services\":[1]}").ok());
  // Text that looks like a number stays text.
  ASSERT_TRUE(store->PutScenario("0123").ok());
  EXPECT_EQ(**store->Scenario(), "0123");
  ASSERT_TRUE(store->PutScenario("{\"services\":[\"it's\"]}").ok());
  EXPECT_EQ(**store->Scenario(), "{\"services\":[\"it's\"]}");

  // Plans.
  const StoredPlan plan = SamplePlan(7);
  Result<int64_t> plan_id = store->AddPlan(plan);
  ASSERT_TRUE(plan_id.ok()) << plan_id.status().ToString();
  EXPECT_EQ(*plan_id, 1);
  Result<std::optional<StoredPlan>> got = store->Plan(*plan_id);
  ASSERT_TRUE(got.ok());
  ASSERT_TRUE(got->has_value());
  EXPECT_EQ((*got)->id, 1);
  ExpectPlanEq(**got, plan);
  EXPECT_FALSE(store->Plan(99)->has_value());

  // Deployment.
  EXPECT_FALSE(store->DeploymentPlan()->has_value());
  ASSERT_TRUE(store->SetDeployment(*plan_id).ok());
  EXPECT_EQ(store->DeploymentPlan()->value(), *plan_id);
  EXPECT_EQ(store->SetDeployment(42).code(), StatusCode::kNotFound);
  EXPECT_EQ(store->DeploymentPlan()->value(), *plan_id);

  // Transitions.
  const int64_t plan2 = *store->AddPlan(SamplePlan(8));
  StoredTransition t = MakeTransition(*plan_id, plan2, 5);
  Result<int64_t> tid = store->AddTransition(t);
  ASSERT_TRUE(tid.ok()) << tid.status().ToString();
  EXPECT_EQ(*tid, 1);
  Result<std::optional<StoredTransition>> gt = store->Transition(*tid);
  ASSERT_TRUE(gt.ok());
  ASSERT_TRUE(gt->has_value());
  EXPECT_EQ((*gt)->id, *tid);
  ExpectTransitionEq(**gt, t);
  EXPECT_FALSE(store->Transition(99)->has_value());
  // From the empty cluster.
  const int64_t tid2 = *store->AddTransition(MakeTransition(std::nullopt, plan2, 0));
  EXPECT_FALSE((*store->Transition(tid2))->from_plan.has_value());
  EXPECT_TRUE((*store->Transition(tid2))->steps.empty());
  // Unknown plans.
  EXPECT_EQ(store->AddTransition(MakeTransition(std::nullopt, 77, 1)).status().code(),
            StatusCode::kNotFound);
  EXPECT_EQ(store->AddTransition(MakeTransition(77, plan2, 1)).status().code(),
            StatusCode::kNotFound);

  // UpdateTransition: state, phase, error, updated_at, steps, deployment.
  t.id = *tid;
  t.state = "paused";
  t.phase = 2;
  t.error = "step s3 failed";
  t.updated_at = "2024-01-03T00:00:00Z";
  t.steps[0].state = "done";
  t.steps[1].state = "done";
  t.steps[2].state = "failed";
  t.steps[2].error = "nvml said no";
  t.steps[3].state = "running";
  ASSERT_TRUE(store->UpdateTransition(t).ok());
  ExpectTransitionEq(**store->Transition(*tid), t);
  EXPECT_EQ(store->DeploymentPlan()->value(), *plan_id);
  t.state = "done";
  ASSERT_TRUE(store->UpdateTransition(t, plan2).ok());
  ExpectTransitionEq(**store->Transition(*tid), t);
  EXPECT_EQ(store->DeploymentPlan()->value(), plan2);

  // Nodes: upserted, by name.
  ASSERT_TRUE(store->PutNode({"node-1", "{\"a\":1}", "2024-01-01T00:00:00Z"}).ok());
  ASSERT_TRUE(store->PutNode({"node-0", "{\"a\":0}", "2024-01-01T00:00:01Z"}).ok());
  ASSERT_TRUE(store->PutNode({"node-1", "{\"a\":2}", "2024-01-01T00:00:02Z"}).ok());
  Result<std::vector<StoredNode>> nodes = store->Nodes();
  ASSERT_TRUE(nodes.ok());
  ASSERT_EQ(nodes->size(), 2u);
  EXPECT_EQ((*nodes)[0].node, "node-0");
  EXPECT_EQ((*nodes)[0].status_json, "{\"a\":0}");
  EXPECT_EQ((*nodes)[1].node, "node-1");
  EXPECT_EQ((*nodes)[1].status_json, "{\"a\":2}");
  EXPECT_EQ((*nodes)[1].updated_at, "2024-01-01T00:00:02Z");
}

TEST_P(ControlStoreTest, ServiceUpdatesLastUntilTheNextPutScenario) {
  {
    auto store = OpenStore();
    ASSERT_NE(store, nullptr);
    ASSERT_TRUE(store->PutScenario("{\"services\":[]}").ok());
    ASSERT_TRUE(store->PutService({"b", "{\"name\":\"b\",\"rate_rps\":1}"}).ok());
    ASSERT_TRUE(store->PutService({"a", "{\"name\":\"a\",\"rate_rps\":1}"}).ok());
    ASSERT_TRUE(store->PutService({"b", "{\"name\":\"b\",\"rate_rps\":2}"}).ok());
  }
  auto store = OpenStore();  // committed: they survive a reopen
  ASSERT_NE(store, nullptr);
  Result<std::vector<StoredService>> updates = store->ServiceUpdates();
  ASSERT_TRUE(updates.ok());
  ASSERT_EQ(updates->size(), 2u);
  EXPECT_EQ((*updates)[0].name, "a");
  EXPECT_EQ((*updates)[1].name, "b");
  EXPECT_EQ((*updates)[1].service_json, "{\"name\":\"b\",\"rate_rps\":2}");
  ASSERT_TRUE(store->PutScenario("{\"services\":[1]}").ok());
  updates = store->ServiceUpdates();
  ASSERT_TRUE(updates.ok());
  EXPECT_TRUE(updates->empty());
}

TEST_P(ControlStoreTest, IdsCountFromOneAndAreNeverReused) {
  {
    auto store = OpenStore();
    ASSERT_NE(store, nullptr);
    for (int i = 1; i <= 3; ++i) EXPECT_EQ(*store->AddPlan(SamplePlan(i)), i);
    EXPECT_EQ(*store->AddTransition(MakeTransition(std::nullopt, 1, 2)), 1);
    // A transition that fails half-way (a duplicate step id) is rolled back
    // whole: no transition, no steps, no version bump.
    StoredTransition bad = MakeTransition(1, 2, 3);
    bad.steps[2].step_id = bad.steps[0].step_id;
    const int64_t version = VersionOf(*store);
    Result<int64_t> failed = store->AddTransition(bad);
    EXPECT_FALSE(failed.ok());
    EXPECT_EQ(failed.status().code(), StatusCode::kIoError);
    EXPECT_EQ(VersionOf(*store), version);
    EXPECT_EQ(store->Transitions(100)->size(), 1u);
    if (GetParam() == "sqlite") {
      const std::string path = (dir_ / (name_ + ".db")).string();
      EXPECT_NE(failed.status().message().find(path), std::string::npos)
          << failed.status().message();
      EXPECT_EQ(RawQuery(path, "SELECT count(*) FROM transition_steps"), "2");
    }
    EXPECT_EQ(*store->AddTransition(MakeTransition(1, 2, 1)), 2);
  }
  auto store = OpenStore();
  ASSERT_NE(store, nullptr);
  EXPECT_EQ(*store->AddPlan(SamplePlan(4)), 4);
  EXPECT_EQ(*store->AddTransition(MakeTransition(2, 3, 1)), 3);
}

TEST_P(ControlStoreTest, PlansAndTransitionsAreNewestFirstAndLimited) {
  auto store = OpenStore();
  ASSERT_NE(store, nullptr);
  for (int i = 1; i <= 5; ++i) ASSERT_TRUE(store->AddPlan(SamplePlan(i)).ok());
  for (int i = 1; i <= 5; ++i) ASSERT_TRUE(store->AddTransition(MakeTransition(1, i, i)).ok());

  Result<std::vector<StoredPlan>> plans = store->Plans(3);
  ASSERT_TRUE(plans.ok());
  ASSERT_EQ(plans->size(), 3u);
  for (int k = 0; k < 3; ++k) {
    EXPECT_EQ((*plans)[k].id, 5 - k);
    ExpectPlanEq((*plans)[k], SamplePlan(5 - k), /*with_deployment=*/false);
    EXPECT_TRUE((*plans)[k].deployment_json.empty());
  }
  EXPECT_EQ(store->Plans(10)->size(), 5u);
  EXPECT_TRUE(store->Plans(0)->empty());

  Result<std::vector<StoredTransition>> ts = store->Transitions(2);
  ASSERT_TRUE(ts.ok());
  ASSERT_EQ(ts->size(), 2u);
  EXPECT_EQ((*ts)[0].id, 5);
  EXPECT_EQ((*ts)[1].id, 4);
  ExpectTransitionEq((*ts)[0], MakeTransition(1, 5, 5), /*with_steps=*/false);
  EXPECT_TRUE((*ts)[0].steps.empty());
  EXPECT_EQ(store->Transitions(100)->size(), 5u);
  EXPECT_TRUE(store->Transitions(0)->empty());
}

TEST_P(ControlStoreTest, TransitionsInAreOldestFirstWithStepsInOrder) {
  auto store = OpenStore();
  ASSERT_NE(store, nullptr);
  ASSERT_TRUE(store->AddPlan(SamplePlan(1)).ok());
  const std::vector<std::string> states = {"running", "done", "running", "paused", "running"};
  for (size_t i = 0; i < states.size(); ++i) {
    ASSERT_TRUE(
        store->AddTransition(MakeTransition(std::nullopt, 1, 3 + static_cast<int>(i), states[i]))
            .ok());
  }
  Result<std::vector<StoredTransition>> running = store->TransitionsIn("running");
  ASSERT_TRUE(running.ok());
  ASSERT_EQ(running->size(), 3u);
  const int64_t ids[] = {1, 3, 5};
  for (size_t k = 0; k < 3; ++k) {
    const StoredTransition& t = (*running)[k];
    EXPECT_EQ(t.id, ids[k]);
    ExpectTransitionEq(t, MakeTransition(std::nullopt, 1, 2 + static_cast<int>(ids[k]), "running"));
  }
  EXPECT_EQ(store->TransitionsIn("paused")->size(), 1u);
  EXPECT_TRUE(store->TransitionsIn("aborted")->empty());
}

TEST_P(ControlStoreTest, UpdatingAnUnknownTransitionIsNotFoundAndChangesNothing) {
  auto store = OpenStore();
  ASSERT_NE(store, nullptr);
  ASSERT_TRUE(store->AddPlan(SamplePlan(1)).ok());
  ASSERT_TRUE(store->AddPlan(SamplePlan(2)).ok());
  const StoredTransition original = MakeTransition(1, 2, 3);
  const int64_t id = *store->AddTransition(original);
  const int64_t version = VersionOf(*store);

  StoredTransition unknown = original;
  unknown.id = 99;
  unknown.state = "done";
  Status status = store->UpdateTransition(unknown, 2);
  EXPECT_EQ(status.code(), StatusCode::kNotFound) << status.ToString();
  EXPECT_EQ(VersionOf(*store), version);
  EXPECT_FALSE(store->DeploymentPlan()->has_value());
  EXPECT_FALSE(store->Transition(99)->has_value());

  // An unknown step rolls back the transition's row too.
  StoredTransition bad_step = original;
  bad_step.id = id;
  bad_step.state = "running";
  bad_step.steps[0].state = "done";
  bad_step.steps[2].step_id = "nope";
  status = store->UpdateTransition(bad_step, 2);
  EXPECT_EQ(status.code(), StatusCode::kNotFound) << status.ToString();
  EXPECT_EQ(VersionOf(*store), version);
  EXPECT_FALSE(store->DeploymentPlan()->has_value());
  ExpectTransitionEq(**store->Transition(id), original);

  // An unknown deployment plan likewise.
  StoredTransition bad_plan = original;
  bad_plan.id = id;
  bad_plan.state = "done";
  status = store->UpdateTransition(bad_plan, 55);
  EXPECT_EQ(status.code(), StatusCode::kNotFound) << status.ToString();
  EXPECT_EQ(VersionOf(*store), version);
  ExpectTransitionEq(**store->Transition(id), original);
}

TEST_P(ControlStoreTest, TheVersionCountsTheChangesNodesMustSee) {
  auto store = OpenStore();
  ASSERT_NE(store, nullptr);
  EXPECT_EQ(VersionOf(*store), 1);
  ASSERT_TRUE(store->AddPlan(SamplePlan(1)).ok());
  ASSERT_TRUE(store->PutScenario("{}").ok());
  ASSERT_TRUE(store->PutNode({"node-0", "{}", "t"}).ok());
  EXPECT_EQ(VersionOf(*store), 1);
  ASSERT_TRUE(store->SetDeployment(1).ok());
  EXPECT_EQ(VersionOf(*store), 2);
  StoredTransition t = MakeTransition(1, 1, 2);
  t.id = *store->AddTransition(t);
  EXPECT_EQ(VersionOf(*store), 3);
  t.state = "running";
  ASSERT_TRUE(store->UpdateTransition(t).ok());
  EXPECT_EQ(VersionOf(*store), 4);
  t.state = "done";
  ASSERT_TRUE(store->UpdateTransition(t, 1).ok());
  EXPECT_EQ(VersionOf(*store), 5);  // one bump for the transition and the pointer
  ASSERT_TRUE(store->Plans(5).ok());
  ASSERT_TRUE(store->TransitionsIn("done").ok());
  EXPECT_EQ(VersionOf(*store), 5);
}

TEST_P(ControlStoreTest, EverythingSurvivesCloseAndReopen) {
  StoredTransition t = MakeTransition(std::nullopt, 2, 4);
  {
    auto store = OpenStore();
    ASSERT_NE(store, nullptr);
    ASSERT_TRUE(store->PutScenario("{\"s\":1}").ok());
    ASSERT_TRUE(store->AddPlan(SamplePlan(1)).ok());
    ASSERT_TRUE(store->AddPlan(SamplePlan(2)).ok());
    t.id = *store->AddTransition(t);
    t.state = "running";
    t.phase = 1;
    t.steps[0].state = "done";
    ASSERT_TRUE(store->UpdateTransition(t, 1).ok());
    ASSERT_TRUE(store->PutNode({"node-0", "{\"n\":0}", "t0"}).ok());
  }
  auto store = OpenStore();
  ASSERT_NE(store, nullptr);
  EXPECT_EQ(**store->Scenario(), "{\"s\":1}");
  ExpectPlanEq(**store->Plan(1), SamplePlan(1));
  ExpectPlanEq(**store->Plan(2), SamplePlan(2));
  EXPECT_EQ(store->DeploymentPlan()->value(), 1);
  ExpectTransitionEq(**store->Transition(t.id), t);
  EXPECT_EQ(store->TransitionsIn("running")->size(), 1u);
  EXPECT_EQ(VersionOf(*store), 3);
  ASSERT_EQ(store->Nodes()->size(), 1u);
  EXPECT_EQ((*store->Nodes())[0].status_json, "{\"n\":0}");
}

// Two etcd stores on one prefix: the first leads and the second follows;
// once the first's lease is gone (revoked here, as etcd does when a paused
// leader's lease expires) etcd refuses its writes, the second leads and
// writes, and the first campaigns again behind it.
TEST(EtcdStoreTest, AnExLeaderIsFencedOutByEtcd) {
  if (!testing::EtcdUnavailable().empty()) GTEST_SKIP() << testing::EtcdUnavailable();
  const std::string prefix = testing::TestStoreName();
  const auto open = [&](const std::string& name) {
    StoreOptions options;
    options.name = name;
    options.lease_ttl_s = 1;
    Result<std::unique_ptr<ControlStore>> store =
        testing::OpenTestStore("etcd", prefix, ::testing::TempDir(), options);
    EXPECT_TRUE(store.ok()) << store.status().ToString();
    return store.ok() ? std::move(*store) : nullptr;
  };
  std::unique_ptr<ControlStore> a = open("a");
  std::unique_ptr<ControlStore> b = open("b");
  ASSERT_TRUE(a && b);
  Result<StoreView> view = b->Observe();
  ASSERT_TRUE(view.ok()) << view.status().ToString();
  EXPECT_FALSE(view->leader);
  EXPECT_EQ(view->leader_name, "a");
  ASSERT_TRUE(a->Observe().ok());
  ASSERT_TRUE(a->PutScenario("{\"by\":\"a\"}").ok());
  // A follower's write is refused before it reaches etcd.
  Status refused = b->PutScenario("{\"by\":\"b\"}");
  EXPECT_EQ(refused.code(), StatusCode::kIoError);
  EXPECT_NE(refused.message().find("not the leader"), std::string::npos) << refused.message();

  // Revoke a's lease behind its back: etcd deletes its election key.
  Result<std::unique_ptr<EtcdClient>> etcd = EtcdClient::Create({testing::TestEtcdEndpoint()}, 3);
  ASSERT_TRUE(etcd.ok());
  EtcdRangeRequest election;
  election.key = "/tessera-test/" + prefix + "/election/";
  election.range_end = EtcdClient::PrefixEnd(election.key);
  election.by_create_revision = true;
  Result<EtcdRange> keys = (*etcd)->Range(election);
  ASSERT_TRUE(keys.ok() && keys->kvs.size() == 2u);
  ASSERT_TRUE((*etcd)->LeaseRevoke(keys->kvs[0].lease).ok());
  // a still believes it leads (it has not looked): etcd refuses the write.
  Status fenced = a->PutScenario("{\"by\":\"a, late\"}");
  EXPECT_EQ(fenced.code(), StatusCode::kIoError);
  EXPECT_NE(fenced.message().find("its lease expired"), std::string::npos) << fenced.message();
  view = b->Observe();
  ASSERT_TRUE(view.ok());
  EXPECT_TRUE(view->leader);
  EXPECT_TRUE(view->changed);
  ASSERT_TRUE(b->PutScenario("{\"by\":\"b\"}").ok());
  EXPECT_EQ(**b->Scenario(), "{\"by\":\"b\"}");
  // a's renewal finds its lease gone and campaigns again, behind b.
  bool follows = false;
  for (int i = 0; i < 100 && !follows; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    Result<std::optional<std::string>> unused = a->Scenario();
    Result<StoreView> now = a->Observe();
    follows = now.ok() && !now->leader && now->leader_name == "b";
    keys = (*etcd)->Range(election);
    follows = follows && keys.ok() && keys->kvs.size() == 2u;
  }
  EXPECT_TRUE(follows) << "a did not campaign again behind b";
}

// A VFS shim in front of the default one that counts syncs of WAL files: with
// synchronous=FULL, SQLite syncs the WAL at every commit; with NORMAL, only
// at checkpoints. (synchronous is a per-connection setting, so a second
// connection cannot read the store's.)
namespace shim {

sqlite3_vfs* real_vfs = nullptr;
sqlite3_vfs shim_vfs;
std::atomic<int> wal_syncs{0};

struct File {
  sqlite3_file base;
  sqlite3_file* real;
  bool wal;
};

sqlite3_file* Real(sqlite3_file* f) { return reinterpret_cast<File*>(f)->real; }

int Close(sqlite3_file* f) { return Real(f)->pMethods->xClose(Real(f)); }
int Read(sqlite3_file* f, void* b, int n, sqlite3_int64 o) {
  return Real(f)->pMethods->xRead(Real(f), b, n, o);
}
int Write(sqlite3_file* f, const void* b, int n, sqlite3_int64 o) {
  return Real(f)->pMethods->xWrite(Real(f), b, n, o);
}
int Truncate(sqlite3_file* f, sqlite3_int64 s) { return Real(f)->pMethods->xTruncate(Real(f), s); }
int Sync(sqlite3_file* f, int flags) {
  if (reinterpret_cast<File*>(f)->wal) ++wal_syncs;
  return Real(f)->pMethods->xSync(Real(f), flags);
}
int FileSize(sqlite3_file* f, sqlite3_int64* s) { return Real(f)->pMethods->xFileSize(Real(f), s); }
int Lock(sqlite3_file* f, int l) { return Real(f)->pMethods->xLock(Real(f), l); }
int Unlock(sqlite3_file* f, int l) { return Real(f)->pMethods->xUnlock(Real(f), l); }
int CheckReservedLock(sqlite3_file* f, int* r) {
  return Real(f)->pMethods->xCheckReservedLock(Real(f), r);
}
int FileControl(sqlite3_file* f, int op, void* a) {
  return Real(f)->pMethods->xFileControl(Real(f), op, a);
}
int SectorSize(sqlite3_file* f) { return Real(f)->pMethods->xSectorSize(Real(f)); }
int DeviceCharacteristics(sqlite3_file* f) {
  return Real(f)->pMethods->xDeviceCharacteristics(Real(f));
}
int ShmMap(sqlite3_file* f, int i, int s, int e, void volatile** p) {
  return Real(f)->pMethods->xShmMap(Real(f), i, s, e, p);
}
int ShmLock(sqlite3_file* f, int o, int n, int fl) {
  return Real(f)->pMethods->xShmLock(Real(f), o, n, fl);
}
void ShmBarrier(sqlite3_file* f) { Real(f)->pMethods->xShmBarrier(Real(f)); }
int ShmUnmap(sqlite3_file* f, int d) { return Real(f)->pMethods->xShmUnmap(Real(f), d); }
int Fetch(sqlite3_file* f, sqlite3_int64 o, int n, void** p) {
  return Real(f)->pMethods->xFetch(Real(f), o, n, p);
}
int Unfetch(sqlite3_file* f, sqlite3_int64 o, void* p) {
  return Real(f)->pMethods->xUnfetch(Real(f), o, p);
}

const sqlite3_io_methods kMethods = {3,
                                     Close,
                                     Read,
                                     Write,
                                     Truncate,
                                     Sync,
                                     FileSize,
                                     Lock,
                                     Unlock,
                                     CheckReservedLock,
                                     FileControl,
                                     SectorSize,
                                     DeviceCharacteristics,
                                     ShmMap,
                                     ShmLock,
                                     ShmBarrier,
                                     ShmUnmap,
                                     Fetch,
                                     Unfetch};

int Open(sqlite3_vfs*, sqlite3_filename name, sqlite3_file* f, int flags, int* out_flags) {
  File* file = reinterpret_cast<File*>(f);
  file->real = reinterpret_cast<sqlite3_file*>(file + 1);
  file->wal = (flags & SQLITE_OPEN_WAL) != 0;
  file->base.pMethods = nullptr;
  const int rc = real_vfs->xOpen(real_vfs, name, file->real, flags, out_flags);
  if (file->real->pMethods != nullptr) file->base.pMethods = &kMethods;
  return rc;
}

// Makes the shim the default VFS until the Installer goes.
struct Installer {
  Installer() {
    real_vfs = sqlite3_vfs_find(nullptr);
    shim_vfs = *real_vfs;
    shim_vfs.zName = "tessera-sync-counter";
    shim_vfs.szOsFile = static_cast<int>(sizeof(File)) + real_vfs->szOsFile;
    shim_vfs.xOpen = Open;
    sqlite3_vfs_register(&shim_vfs, 1);
  }
  ~Installer() {
    sqlite3_vfs_register(real_vfs, 1);
    sqlite3_vfs_unregister(&shim_vfs);
  }
};

}  // namespace shim

TEST_F(SqliteStoreTest, WalAndSynchronousFullAreInEffect) {
  {
    shim::Installer installer;
    auto store = OpenStore();
    ASSERT_NE(store, nullptr);
    ASSERT_TRUE(store->PutScenario("{}").ok());
    // Every commit syncs the WAL.
    const int before = shim::wal_syncs.load();
    ASSERT_TRUE(store->PutScenario("{\"a\":1}").ok());
    ASSERT_TRUE(store->AddPlan(SamplePlan(1)).ok());
    EXPECT_GE(shim::wal_syncs.load() - before, 2);

    // A second connection sees a WAL database at our schema version.
    EXPECT_EQ(RawQuery(path_, "PRAGMA journal_mode"), "wal");
    EXPECT_EQ(RawQuery(path_, "PRAGMA user_version"), std::to_string(SqliteStore::kSchemaVersion));
    EXPECT_TRUE(std::filesystem::exists(path_ + "-wal"));

    // The counter can tell: a connection at synchronous=NORMAL does not
    // sync the WAL when it commits.
    sqlite3* db = nullptr;
    ASSERT_EQ(sqlite3_open(path_.c_str(), &db), SQLITE_OK);
    ASSERT_EQ(sqlite3_exec(db, "PRAGMA synchronous=NORMAL", nullptr, nullptr, nullptr), SQLITE_OK);
    const int normal_before = shim::wal_syncs.load();
    ASSERT_EQ(
        sqlite3_exec(db, "INSERT INTO nodes VALUES ('x', '{}', 't')", nullptr, nullptr, nullptr),
        SQLITE_OK);
    EXPECT_EQ(shim::wal_syncs.load(), normal_before);
    sqlite3_close_v2(db);
  }
}

TEST_F(SqliteStoreTest, AVersionOneStoreIsMigratedKeepingItsData) {
  int64_t plan = 0;
  {
    auto store = OpenStore();
    ASSERT_NE(store, nullptr);
    ASSERT_TRUE(store->PutScenario("{\"services\":[]}").ok());
    Result<int64_t> id = store->AddPlan(SamplePlan(1));
    ASSERT_TRUE(id.ok());
    plan = *id;
  }
  // The file as schema version 1 left it: no service_updates table.
  RawExec(path_, "DROP TABLE service_updates; PRAGMA user_version = 1");
  ASSERT_EQ(RawQuery(path_, "PRAGMA user_version"), "1");
  auto store = OpenStore();
  ASSERT_NE(store, nullptr);
  EXPECT_EQ(store->schema_version(), SqliteStore::kSchemaVersion);
  EXPECT_EQ(RawQuery(path_, "PRAGMA user_version"), std::to_string(SqliteStore::kSchemaVersion));
  Result<std::optional<StoredPlan>> kept = store->Plan(plan);
  ASSERT_TRUE(kept.ok() && kept->has_value());
  EXPECT_EQ((*kept)->deployment_json, SamplePlan(1).deployment_json);
  Result<std::optional<std::string>> scenario = store->Scenario();
  ASSERT_TRUE(scenario.ok() && scenario->has_value());
  EXPECT_EQ(**scenario, "{\"services\":[]}");
  // Version 2's table is there and works.
  ASSERT_TRUE(store->PutService({"a", "{\"name\":\"a\"}"}).ok());
  Result<std::vector<StoredService>> updates = store->ServiceUpdates();
  ASSERT_TRUE(updates.ok());
  EXPECT_EQ(updates->size(), 1u);
}

TEST_F(SqliteStoreTest, AStoreNewerThanThisBuildIsRefused) {
  { ASSERT_NE(OpenStore(), nullptr); }
  RawExec(path_, "PRAGMA user_version = " + std::to_string(SqliteStore::kSchemaVersion + 1));
  auto store = SqliteStore::Open(path_);
  ASSERT_FALSE(store.ok());
  EXPECT_EQ(store.status().code(), StatusCode::kIoError);
  const std::string& message = store.status().message();
  EXPECT_NE(message.find(path_), std::string::npos) << message;
  EXPECT_NE(message.find("version " + std::to_string(SqliteStore::kSchemaVersion + 1)),
            std::string::npos)
      << message;
  EXPECT_NE(message.find("build's " + std::to_string(SqliteStore::kSchemaVersion)),
            std::string::npos)
      << message;
  // Untouched.
  EXPECT_EQ(RawQuery(path_, "PRAGMA user_version"),
            std::to_string(SqliteStore::kSchemaVersion + 1));
}

TEST_F(SqliteStoreTest, AFileThatIsNotAStoreIsRefused) {
  // Not SQLite at all.
  testing::WriteTextFile(path_, std::string(4096, 'x') + "this is not a database\n");
  auto store = SqliteStore::Open(path_);
  ASSERT_FALSE(store.ok());
  EXPECT_EQ(store.status().code(), StatusCode::kIoError);
  EXPECT_NE(store.status().message().find(path_), std::string::npos) << store.status().message();
  EXPECT_NE(store.status().message().find("not a Tessera control store"), std::string::npos)
      << store.status().message();

  // Someone else's SQLite database (user_version 0, tables of its own).
  const std::string other = (dir_ / "other.db").string();
  RawExec(other, "CREATE TABLE customers (id INTEGER PRIMARY KEY, name TEXT)");
  store = SqliteStore::Open(other);
  ASSERT_FALSE(store.ok());
  EXPECT_EQ(store.status().code(), StatusCode::kIoError);
  EXPECT_NE(store.status().message().find(other), std::string::npos) << store.status().message();
  EXPECT_NE(store.status().message().find("not a Tessera control store"), std::string::npos)
      << store.status().message();
  EXPECT_EQ(RawQuery(other, "SELECT count(*) FROM sqlite_master"), "1");
  EXPECT_EQ(RawQuery(other, "PRAGMA journal_mode"), "delete");

  // Someone else's versioned SQLite database.
  const std::string versioned = (dir_ / "versioned.db").string();
  RawExec(versioned, "CREATE TABLE meta (k TEXT); PRAGMA user_version = 1");
  store = SqliteStore::Open(versioned);
  ASSERT_FALSE(store.ok());
  EXPECT_NE(store.status().message().find(versioned), std::string::npos);

  // A directory SQLite cannot open.
  store = SqliteStore::Open((dir_ / "missing" / "x.db").string());
  ASSERT_FALSE(store.ok());
  EXPECT_EQ(store.status().code(), StatusCode::kIoError);
  EXPECT_NE(store.status().message().find("missing"), std::string::npos);
}

TEST_P(ControlStoreTest, FourThreadsShareOneStore) {
  auto store = OpenStore();
  ASSERT_NE(store, nullptr);
  ASSERT_TRUE(store->AddPlan(SamplePlan(0)).ok());
  constexpr int kThreads = 4;
  constexpr int kRounds = 12;
  std::vector<std::vector<int64_t>> plan_ids(kThreads), transition_ids(kThreads);
  std::atomic<int> failures{0};
  std::vector<std::thread> threads;
  for (int w = 0; w < kThreads; ++w) {
    threads.emplace_back([&, w] {
      for (int i = 0; i < kRounds; ++i) {
        Result<int64_t> p = store->AddPlan(SamplePlan(i));
        if (!p.ok()) {
          ++failures;
          continue;
        }
        plan_ids[w].push_back(*p);
        StoredTransition t = MakeTransition(1, *p, 3);
        Result<int64_t> id = store->AddTransition(t);
        if (!id.ok()) {
          ++failures;
          continue;
        }
        transition_ids[w].push_back(*id);
        t.id = *id;
        t.state = "done";
        for (StoredStep& s : t.steps) s.state = "done";
        if (!store->UpdateTransition(t).ok()) ++failures;
        if (!store->PutNode({"node-" + std::to_string(w), std::to_string(i), "t"}).ok()) {
          ++failures;
        }
        if (!store->Version().ok() || !store->Plans(3).ok() || !store->TransitionsIn("done").ok()) {
          ++failures;
        }
      }
    });
  }
  for (std::thread& t : threads) t.join();
  EXPECT_EQ(failures.load(), 0);
  std::set<int64_t> plans, transitions;
  for (int w = 0; w < kThreads; ++w) {
    plans.insert(plan_ids[w].begin(), plan_ids[w].end());
    transitions.insert(transition_ids[w].begin(), transition_ids[w].end());
  }
  EXPECT_EQ(plans.size(), static_cast<size_t>(kThreads * kRounds));
  EXPECT_EQ(transitions.size(), static_cast<size_t>(kThreads * kRounds));
  EXPECT_EQ(*plans.begin(), 2);
  EXPECT_EQ(*plans.rbegin(), 1 + kThreads * kRounds);
  EXPECT_EQ(VersionOf(*store), 1 + 2 * kThreads * kRounds);
  Result<std::vector<StoredTransition>> done = store->TransitionsIn("done");
  ASSERT_TRUE(done.ok());
  EXPECT_EQ(done->size(), static_cast<size_t>(kThreads * kRounds));
  for (const StoredTransition& t : *done) {
    ASSERT_EQ(t.steps.size(), 3u);
    for (const StoredStep& s : t.steps) EXPECT_EQ(s.state, "done");
  }
  Result<std::vector<StoredNode>> nodes = store->Nodes();
  ASSERT_TRUE(nodes.ok());
  EXPECT_EQ(nodes->size(), static_cast<size_t>(kThreads));
  for (const StoredNode& n : *nodes) EXPECT_EQ(n.status_json, std::to_string(kRounds - 1));
}

// The crash test's child: mutates the store in a loop and acknowledges each
// mutation that returned OK with one line on `fd`. Never returns.
[[noreturn]] void MutateForever(const std::string& path, int fd) {
  auto say = [fd](const std::string& line) {
    const std::string text = line + "\n";
    size_t off = 0;
    while (off < text.size()) {
      const ssize_t n = ::write(fd, text.data() + off, text.size() - off);
      if (n <= 0) _exit(3);
      off += static_cast<size_t>(n);
    }
  };
  auto opened = SqliteStore::Open(path);
  if (!opened.ok()) {
    say("E " + opened.status().ToString());
    _exit(1);
  }
  ControlStore& store = **opened;
  for (int i = 0;; ++i) {
    Result<int64_t> plan = store.AddPlan(SamplePlan(i));
    if (!plan.ok()) say("E " + plan.status().ToString()), _exit(1);
    say("P " + std::to_string(*plan) + " " + std::to_string(i));
    const int steps = 1 + i % 6;
    StoredTransition t = MakeTransition(std::nullopt, *plan, steps);
    Result<int64_t> id = store.AddTransition(t);
    if (!id.ok()) say("E " + id.status().ToString()), _exit(1);
    say("T " + std::to_string(*id) + " " + std::to_string(steps));
    t.id = *id;
    t.state = "running";
    t.phase = 1;
    t.steps[0].state = "done";
    Status updated = store.UpdateTransition(t, *plan);
    if (!updated.ok()) say("E " + updated.ToString()), _exit(1);
    say("U " + std::to_string(*id));
    Status put = store.PutScenario("{\"i\":" + std::to_string(i) + "}");
    if (!put.ok()) say("E " + put.ToString()), _exit(1);
    say("S " + std::to_string(i));
  }
}

TEST_F(SqliteStoreTest, AKilledWriterLosesNothingItAcknowledged) {
  for (unsigned seed : {1u, 2u, 3u, 4u}) {
    SCOPED_TRACE("seed " + std::to_string(seed));
    std::filesystem::remove(path_);
    std::filesystem::remove(path_ + "-wal");
    std::filesystem::remove(path_ + "-shm");
    std::mt19937 rng(seed);
    const int kill_after = std::uniform_int_distribution<int>(5, 80)(rng);

    int fds[2];
    ASSERT_EQ(::pipe(fds), 0);
    const pid_t child = ::fork();
    ASSERT_GE(child, 0);
    if (child == 0) {
      ::close(fds[0]);
      MutateForever(path_, fds[1]);
    }
    ::close(fds[1]);
    // Reads acknowledgements; SIGKILLs the child after `kill_after` of
    // them, then keeps the lines it had already written.
    std::string buffer;
    std::vector<std::string> lines;
    bool killed = false;
    char chunk[4096];
    for (;;) {
      const ssize_t n = ::read(fds[0], chunk, sizeof(chunk));
      if (n <= 0) break;
      buffer.append(chunk, static_cast<size_t>(n));
      size_t nl;
      while ((nl = buffer.find('\n')) != std::string::npos) {
        lines.push_back(buffer.substr(0, nl));
        buffer.erase(0, nl + 1);
      }
      if (!killed && static_cast<int>(lines.size()) >= kill_after) {
        ::kill(child, SIGKILL);
        killed = true;
      }
    }
    ::close(fds[0]);
    int wstatus = 0;
    ASSERT_EQ(::waitpid(child, &wstatus, 0), child);
    ASSERT_TRUE(WIFSIGNALED(wstatus) && WTERMSIG(wstatus) == SIGKILL)
        << "the child ended on its own: " << (lines.empty() ? "" : lines.back());

    auto store = OpenStore();
    ASSERT_NE(store, nullptr);
    std::map<int64_t, int> steps_of;  // acknowledged transitions
    int64_t acked_changes = 0;        // version bumps acknowledged
    int last_scenario = -1;
    for (const std::string& line : lines) {
      std::istringstream in(line);
      char kind = 0;
      in >> kind;
      ASSERT_NE(kind, 'E') << line;
      if (kind == 'P') {
        int64_t id = 0;
        int i = 0;
        in >> id >> i;
        Result<std::optional<StoredPlan>> plan = store->Plan(id);
        ASSERT_TRUE(plan.ok() && plan->has_value()) << line;
        ExpectPlanEq(**plan, SamplePlan(i));
      } else if (kind == 'T') {
        int64_t id = 0;
        int steps = 0;
        in >> id >> steps;
        steps_of[id] = steps;
        ++acked_changes;
        Result<std::optional<StoredTransition>> t = store->Transition(id);
        ASSERT_TRUE(t.ok() && t->has_value()) << line;
        EXPECT_EQ((*t)->steps.size(), static_cast<size_t>(steps)) << line;
      } else if (kind == 'U') {
        int64_t id = 0;
        in >> id;
        ++acked_changes;
        Result<std::optional<StoredTransition>> t = store->Transition(id);
        ASSERT_TRUE(t.ok() && t->has_value()) << line;
        EXPECT_EQ((*t)->state, "running") << line;
        ASSERT_FALSE((*t)->steps.empty());
        EXPECT_EQ((*t)->steps[0].state, "done") << line;
        EXPECT_EQ(store->DeploymentPlan()->value_or(0) >= (*t)->to_plan, true) << line;
      } else if (kind == 'S') {
        in >> last_scenario;
      }
    }
    ASSERT_GE(static_cast<int>(lines.size()), kill_after);
    // The scenario is the last acknowledged one or a later one.
    if (last_scenario >= 0) {
      Result<std::optional<std::string>> scenario = store->Scenario();
      ASSERT_TRUE(scenario.ok() && scenario->has_value());
      const int stored = std::stoi((*scenario)->substr(5));
      EXPECT_GE(stored, last_scenario);
    }
    EXPECT_GE(VersionOf(*store), 1 + acked_changes);
    // No transition is half-recorded, acknowledged or not.
    Result<std::vector<StoredTransition>> all = store->Transitions(1 << 20);
    ASSERT_TRUE(all.ok());
    EXPECT_GE(all->size(), steps_of.size());
    for (const StoredTransition& t : *all) {
      Result<std::optional<StoredTransition>> full = store->Transition(t.id);
      ASSERT_TRUE(full.ok() && full->has_value());
      const int expected = std::stoi(t.transition_json.substr(9));
      EXPECT_EQ((*full)->steps.size(), static_cast<size_t>(expected)) << "transition " << t.id;
      // A transition whose update committed has its step done too.
      if ((*full)->state == "running") {
        EXPECT_EQ((*full)->steps[0].state, "done");
      }
    }
  }
}

}  // namespace
}  // namespace tessera
