// ControlStore: the durable state of `tessera serve` (docs/control-plane.md)
// in one SQLite file: the scenario, every plan, the deployment the cluster is
// on, every transition with the state of each of its steps, the nodes' last
// reports, and a monotonically increasing version the node agents long-poll.
//
// Durability: the database runs in WAL mode with synchronous=FULL, so a
// method that returned OK has committed its change to the disk; a process
// killed at any point loses nothing it acknowledged, and a change spanning
// several rows (a transition and its steps, a step and its transition's
// phase) is one SQLite transaction: never half-recorded.
//
// Schema migrations are versioned: `PRAGMA user_version` holds the schema
// version, Open applies every migration above it in order (each in its own
// transaction) and refuses a file whose version is
// newer than this build knows (IoError naming the file and both versions).
// kSchemaVersion is the newest.
//
// Values are stored as the API's JSON text (the store does not interpret
// them); ids are SQLite rowids, counting from 1, never reused.
//
// Thread-safety: one ControlStore may be used from many threads; every
// method is serialised on an internal mutex.
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

class ControlStore {
 public:
  static constexpr int kSchemaVersion = 2;

  // Opens (creating if missing) the database at `path`, sets WAL and
  // synchronous=FULL and migrates it. IoError naming the path when SQLite
  // cannot open, read or lock it, when the file is not a Tessera store, or
  // when its schema is newer than kSchemaVersion. Every other method returns
  // IoError with SQLite's message when a statement fails.
  static Result<std::unique_ptr<ControlStore>> Open(const std::string& path);
  ~ControlStore();
  ControlStore(const ControlStore&) = delete;
  ControlStore& operator=(const ControlStore&) = delete;

  int schema_version() const;

  // The version: bumped by every change a node agent must see (deployment,
  // transition state, phase, step). Starts at 1.
  Result<int64_t> Version();

  // The scenario is the last PutScenario's JSON with each of
  // ServiceUpdates() replacing the service of its name. Scenario() is that
  // JSON as put (nullopt before the first PutScenario); PutScenario also
  // drops every service update, in the same SQLite transaction.
  Result<std::optional<std::string>> Scenario();
  Status PutScenario(const std::string& scenario_json);
  // The services changed by PutService since the last PutScenario, by name.
  Result<std::vector<StoredService>> ServiceUpdates();
  // Records one service's new JSON (replacing an earlier update of the
  // same name): one small row, not the whole scenario.
  Status PutService(const StoredService& service);

  Result<int64_t> AddPlan(const StoredPlan& plan);  // plan.id ignored
  Result<std::optional<StoredPlan>> Plan(int64_t id);
  // The newest `limit` plans, newest first (deployment_json left empty).
  Result<std::vector<StoredPlan>> Plans(int limit);

  // The plan the cluster is on, or nullopt before the first finished
  // transition. SetDeployment bumps the version.
  Result<std::optional<int64_t>> DeploymentPlan();
  Status SetDeployment(int64_t plan_id);

  // Stores a transition and its steps in one SQLite transaction; returns
  // its id. transition.id is ignored.
  Result<int64_t> AddTransition(const StoredTransition& transition);
  Result<std::optional<StoredTransition>> Transition(int64_t id);
  // The newest `limit` transitions, newest first, without steps.
  Result<std::vector<StoredTransition>> Transitions(int limit);
  // Transitions in `state` ("running", "paused", ...), oldest first, with steps.
  Result<std::vector<StoredTransition>> TransitionsIn(const std::string& state);

  // Writes the transition's state, phase, error and every step's state and
  // error, and, when `deployment_plan` is given, the deployment pointer, in
  // one SQLite transaction; bumps the version. NotFound for an unknown id.
  Status UpdateTransition(const StoredTransition& transition,
                          std::optional<int64_t> deployment_plan = std::nullopt);

  Status PutNode(const StoredNode& node);
  Result<std::vector<StoredNode>> Nodes();

 private:
  class Impl;
  explicit ControlStore(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace tessera

#endif  // TESSERA_CONTROL_STORE_H_
