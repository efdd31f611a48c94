// SqliteStore: the ControlStore (control_store.h) in one SQLite file, the
// default of `tessera serve` (--store sqlite:PATH). One process owns it: it
// always leads (Observe), and changes made by another process go unnoticed.
//
// Durability: the database runs in WAL mode with synchronous=FULL, so a
// method that returned OK has committed its change to the disk; a process
// killed at any point loses nothing it acknowledged, and a change spanning
// several rows is one SQLite transaction.
//
// Schema migrations are versioned: `PRAGMA user_version` holds the schema
// version, Open applies every migration above it in order (each in its own
// transaction) and refuses a file whose version is newer than this build
// knows (IoError naming the file and both versions). kSchemaVersion is the
// newest. Ids are SQLite rowids.
//
// Thread-safety: every method is serialised on an internal mutex.
#ifndef TESSERA_CONTROL_SQLITE_STORE_H_
#define TESSERA_CONTROL_SQLITE_STORE_H_

#include <memory>
#include <string>

#include "tessera/control/control_store.h"

namespace tessera {

class SqliteStore final : public ControlStore {
 public:
  static constexpr int kSchemaVersion = 2;

  // Opens (creating if missing) the database at `path`, sets WAL and
  // synchronous=FULL and migrates it. IoError naming the path when SQLite
  // cannot open, read or lock it, when the file is not a Tessera store, or
  // when its schema is newer than kSchemaVersion. Every other method returns
  // IoError with SQLite's message when a statement fails.
  static Result<std::unique_ptr<SqliteStore>> Open(const std::string& path);
  ~SqliteStore() override;
  SqliteStore(const SqliteStore&) = delete;
  SqliteStore& operator=(const SqliteStore&) = delete;

  int schema_version() const;

  std::string Describe() const override;
  Result<StoreView> Observe() override;
  Status PinReads() override;
  void UnpinReads() override;
  Result<int64_t> Version() override;
  Result<std::optional<std::string>> Scenario() override;
  Status PutScenario(const std::string& scenario_json) override;
  Result<std::vector<StoredService>> ServiceUpdates() override;
  Status PutService(const StoredService& service) override;
  Result<int64_t> AddPlan(const StoredPlan& plan) override;
  Result<std::optional<StoredPlan>> Plan(int64_t id) override;
  Result<std::vector<StoredPlan>> Plans(int limit) override;
  Result<std::optional<int64_t>> DeploymentPlan() override;
  Status SetDeployment(int64_t plan_id) override;
  Result<int64_t> AddTransition(const StoredTransition& transition) override;
  Result<std::optional<StoredTransition>> Transition(int64_t id) override;
  Result<std::vector<StoredTransition>> Transitions(int limit) override;
  Result<std::vector<StoredTransition>> TransitionsIn(const std::string& state) override;
  Status UpdateTransition(const StoredTransition& transition,
                          std::optional<int64_t> deployment_plan = std::nullopt) override;
  Status PutNode(const StoredNode& node) override;
  Result<std::vector<StoredNode>> Nodes() override;

 private:
  class Impl;
  explicit SqliteStore(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace tessera

#endif  // TESSERA_CONTROL_SQLITE_STORE_H_
