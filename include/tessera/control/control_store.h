// ControlStore: the durable state of `tessera serve` (docs/control-plane.md):
// the scenario, every plan, the deployment the cluster is on, every
// transition with the state of each of its steps, the nodes' last reports,
// and a monotonically increasing version the node agents long-poll; and who
// may write it. Two implementations: SqliteStore (sqlite_store.h), one file
// on one machine, always writable by its one process; EtcdStore
// (etcd_store.h), a replicated etcd cluster shared by several replicas, of
// which the one elected leader writes. OpenControlStore picks one from a
// --store value.
//
// The contract of every implementation:
// - A method that returned OK has made its change durable; a change spanning
//   several records (a transition and its steps, a step and the deployment)
//   is one atomic write: never half-recorded.
// - Values are the API's JSON text (the store does not interpret them); ids
//   count from 1 and are never reused.
// - Writes are fenced: a store that does not hold the leadership (Observe)
//   refuses every write with IoError naming the reason, and an EtcdStore's
//   writes are refused by etcd itself once its leadership has lapsed.
// - Every method but Observe may be called from many threads at once.
//
// Errors: IoError when the store cannot be read or written (the message
// says why: unreachable, no quorum, not the leader), NotFound where a
// method says so.
#ifndef TESSERA_CONTROL_STORE_H_
#define TESSERA_CONTROL_STORE_H_

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "tessera/status.h"

namespace tessera {
struct StoredPlan {
  int64_t id = 0;
  std::string created_at;       // RFC 3339 UTC, given by the caller
  std::string planner;          // the planner that made it ("parva", ...)
  std::string scenario_json;    // the scenario it was planned for (API JSON)
  std::string deployment_json;  // FormatDeploymentJson
  std::string metrics_json;     // the API's metrics object
};

// Step states: "pending", "running", "done", "failed".
struct StoredStep {
  std::string step_id;  // the transition's step id ("s1", ...)
  int phase = 0;        // 1-based
  std::string node;     // the node its cluster GPU lies on
  std::string state = "pending";
  std::string error;  // when failed
};

// Transition states: "proposed" (stored, not started), "running",
// "paused" (a step failed; resume or abort), "done", "aborted".
struct StoredTransition {
  int64_t id = 0;
  std::optional<int64_t> from_plan;  // empty: from the empty cluster
  int64_t to_plan = 0;
  std::string state = "proposed";
  int phase = 0;                // the phase running, 1-based; 0 before start
  std::string transition_json;  // FormatTransitionJson
  std::string check_json;       // FormatTransitionCheckJson
  std::string error;            // why paused or aborted
  std::string created_at;
  std::string updated_at;
  std::vector<StoredStep> steps;  // by phase, then step order
};

// One service of the scenario as changed since the last PutScenario.
struct StoredService {
  std::string name;          // the service's name in the scenario
  std::string service_json;  // the service (API JSON)
};

struct StoredNode {
  std::string node;
  std::string status_json;  // the node's last POST /v1/nodes/{node}/status body
  std::string updated_at;
};

// What the store says about this replica now (ControlStore::Observe).
struct StoreView {
  // This replica holds the leadership: its writes are accepted.
  bool leader = true;
  // The leader's advertised URL ("http://HOST:PORT") and name, when another
  // replica leads; empty when this one leads or none does.
  std::string leader_url;
  std::string leader_name;
  // Why no replica leads, when none does ("" otherwise).
  std::string no_leader_reason;
  // The store holds changes this object did not write since the last
  // Observe (another replica's, or a store replaced under it): state cached
  // from it is stale.
  bool changed = false;
};

class ControlStore {
 public:
  virtual ~ControlStore() = default;

  // "sqlite /var/lib/tessera.db", "etcd http://10.0.0.1:2379,...": for logs.
  virtual std::string Describe() const = 0;

  // Reads who leads and whether the store changed under this replica: one
  // round trip to a replicated store, linearizable (it answers what every
  // write acknowledged before it left). IoError when the store cannot be
  // reached.
  virtual Result<StoreView> Observe() = 0;

  // Reads by this thread see the store as it is now until UnpinReads: the
  // state read with several calls (a reload of everything) is never torn
  // by another replica's write in between. SqliteStore: nothing to do, as
  // its one process writes under the caller's lock.
  virtual Status PinReads() = 0;
  virtual void UnpinReads() = 0;

  // The version: bumped by every change a node agent must see (deployment,
  // transition state, phase, step). Starts at 1.
  virtual Result<int64_t> Version() = 0;

  // The scenario is the last PutScenario's JSON with each of
  // ServiceUpdates() replacing the service of its name. Scenario() is that
  // JSON as put (nullopt before the first PutScenario); PutScenario also
  // drops every service update, in the same write.
  virtual Result<std::optional<std::string>> Scenario() = 0;
  virtual Status PutScenario(const std::string& scenario_json) = 0;
  // The services changed by PutService since the last PutScenario, by name.
  virtual Result<std::vector<StoredService>> ServiceUpdates() = 0;
  // Records one service's new JSON (replacing an earlier update of the
  // same name): one small record, not the whole scenario.
  virtual Status PutService(const StoredService& service) = 0;

  virtual Result<int64_t> AddPlan(const StoredPlan& plan) = 0;  // plan.id ignored
  virtual Result<std::optional<StoredPlan>> Plan(int64_t id) = 0;
  // The newest `limit` plans, newest first (deployment_json left empty).
  virtual Result<std::vector<StoredPlan>> Plans(int limit) = 0;

  // The plan the cluster is on, or nullopt before the first finished
  // transition. SetDeployment bumps the version; NotFound for an unknown
  // plan.
  virtual Result<std::optional<int64_t>> DeploymentPlan() = 0;
  virtual Status SetDeployment(int64_t plan_id) = 0;

  // Stores a transition and its steps in one write and bumps the version;
  // returns its id. transition.id is ignored; NotFound when a plan it names
  // is unknown.
  virtual Result<int64_t> AddTransition(const StoredTransition& transition) = 0;
  virtual Result<std::optional<StoredTransition>> Transition(int64_t id) = 0;
  // The newest `limit` transitions, newest first, without steps.
  virtual Result<std::vector<StoredTransition>> Transitions(int limit) = 0;
  // Transitions in `state` ("running", "paused", ...), oldest first, with steps.
  virtual Result<std::vector<StoredTransition>> TransitionsIn(const std::string& state) = 0;

  // Writes the transition's state, phase, error, updated_at and every
  // step's state and error, and, when `deployment_plan` is given, the
  // deployment pointer, in one write; bumps the version. NotFound for an
  // unknown id or step, changing nothing.
  virtual Status UpdateTransition(const StoredTransition& transition,
                                  std::optional<int64_t> deployment_plan = std::nullopt) = 0;

  virtual Status PutNode(const StoredNode& node) = 0;
  virtual Result<std::vector<StoredNode>> Nodes() = 0;
};

// How `tessera serve` reaches a store and takes part in its leadership.
struct StoreOptions {
  // This replica's URL as agents and clients reach it (a follower's 307
  // points there), and its name in the election.
  std::string advertise_url;
  std::string name;
  // EtcdStore: the lease's TTL (a dead leader is replaced within it), the
  // key prefix of this control plane's state, and how long one request to
  // etcd may take.
  int lease_ttl_s = 5;
  std::string prefix = "/tessera";
  double request_timeout_s = 3;
};

// InvalidArgument naming the field for an advertise URL that is not
// http://HOST:PORT or a lease TTL outside 1-300 s.
Status CheckStoreOptions(const StoreOptions& options);

// Opens the store a --store value names: "sqlite:PATH" or
// "etcd:URL[,URL...]" (each URL http://HOST:PORT). InvalidArgument naming
// the value for any other form; the store's own errors otherwise.
Result<std::unique_ptr<ControlStore>> OpenControlStore(const std::string& spec,
                                                       const StoreOptions& options);

}  // namespace tessera

#endif  // TESSERA_CONTROL_STORE_H_
