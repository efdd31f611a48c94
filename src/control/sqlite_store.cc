// SqliteStore (tessera/control/sqlite_store.h): one connection, serialised
// on a mutex; every statement prepared once and cached, values always bound;
// multi-row changes in one BEGIN IMMEDIATE ... COMMIT.
#include "tessera/control/sqlite_store.h"

#include <sqlite3.h>

#include <exception>
#include <functional>
#include <mutex>
#include <string>
#include <unordered_map>
#include <utility>

#include "control/no_throw.h"

namespace tessera {
namespace {

constexpr const char* kWho = "control store";

// Written into every store by migration 1 (PRAGMA application_id): a file
// whose user_version is set but whose application_id is not this one belongs
// to someone else. "TSRA".
constexpr int32_t kApplicationId = 0x54535241;

// The migrations, in order: migration i brings the schema from version i-1
// to version i. Each runs in its own transaction together with the
// `PRAGMA user_version` that records it. Adding version 2 is adding one entry
// (and raising SqliteStore::kSchemaVersion).
struct Migration {
  int version;
  const char* sql;
};

constexpr Migration kMigrations[] = {
    {1, R"sql(
CREATE TABLE meta (
  key   TEXT PRIMARY KEY NOT NULL,
  value
);
INSERT INTO meta (key, value) VALUES ('version', 1);
CREATE TABLE plans (
  id              INTEGER PRIMARY KEY AUTOINCREMENT,
  created_at      TEXT NOT NULL,
  planner         TEXT NOT NULL,
  scenario_json   TEXT NOT NULL,
  deployment_json TEXT NOT NULL,
  metrics_json    TEXT NOT NULL
);
CREATE TABLE deployment (
  id      INTEGER PRIMARY KEY CHECK (id = 1),
  plan_id INTEGER NOT NULL REFERENCES plans (id)
);
CREATE TABLE transitions (
  id              INTEGER PRIMARY KEY AUTOINCREMENT,
  from_plan       INTEGER REFERENCES plans (id),
  to_plan         INTEGER NOT NULL REFERENCES plans (id),
  state           TEXT NOT NULL,
  phase           INTEGER NOT NULL,
  transition_json TEXT NOT NULL,
  check_json      TEXT NOT NULL,
  error           TEXT NOT NULL,
  created_at      TEXT NOT NULL,
  updated_at      TEXT NOT NULL
);
CREATE INDEX transitions_by_state ON transitions (state, id);
CREATE TABLE transition_steps (
  transition_id INTEGER NOT NULL REFERENCES transitions (id),
  seq           INTEGER NOT NULL,
  step_id       TEXT NOT NULL,
  phase         INTEGER NOT NULL,
  node          TEXT NOT NULL,
  state         TEXT NOT NULL,
  error         TEXT NOT NULL,
  PRIMARY KEY (transition_id, seq),
  UNIQUE (transition_id, step_id)
);
CREATE TABLE nodes (
  node        TEXT PRIMARY KEY NOT NULL,
  status_json TEXT NOT NULL,
  updated_at  TEXT NOT NULL
);
PRAGMA application_id = 1414746689;
)sql"},
    // Version 2: one row per service changed since the last PutScenario, so
    // a PATCH writes one small row, not the whole scenario.
    {2, R"sql(
CREATE TABLE service_updates (
  name         TEXT PRIMARY KEY NOT NULL,
  service_json TEXT NOT NULL
);
)sql"},
};

static_assert(sizeof(kMigrations) / sizeof(kMigrations[0]) == SqliteStore::kSchemaVersion,
              "one migration per schema version");
static_assert(kApplicationId == 1414746689, "migration 1 writes kApplicationId");

constexpr int kBusyTimeoutMs = 10000;

std::string ColumnText(sqlite3_stmt* stmt, int col) {
  const auto* text = reinterpret_cast<const char*>(sqlite3_column_text(stmt, col));
  if (text == nullptr) return "";
  return std::string(text, static_cast<size_t>(sqlite3_column_bytes(stmt, col)));
}

}  // namespace

class SqliteStore::Impl {
 public:
  Impl(std::string path, sqlite3* db) : path_(std::move(path)), db_(db) {}
  ~Impl() {
    for (auto& [sql, stmt] : cache_) sqlite3_finalize(stmt);
    sqlite3_close_v2(db_);
  }

  // A cached prepared statement, reset and its bindings cleared when the
  // Stmt goes out of scope.
  class Stmt {
   public:
    Stmt(Impl* impl, sqlite3_stmt* stmt) : impl_(impl), stmt_(stmt) {}
    ~Stmt() {
      if (stmt_ != nullptr) {
        sqlite3_reset(stmt_);
        sqlite3_clear_bindings(stmt_);
      }
    }
    Stmt(const Stmt&) = delete;
    Stmt& operator=(const Stmt&) = delete;

    sqlite3_stmt* get() const { return stmt_; }
    Stmt& Bind(int i, const std::string& v) {
      Check(sqlite3_bind_text(stmt_, i, v.data(), static_cast<int>(v.size()), SQLITE_TRANSIENT));
      return *this;
    }
    Stmt& Bind(int i, int64_t v) {
      Check(sqlite3_bind_int64(stmt_, i, v));
      return *this;
    }
    Stmt& Bind(int i, std::optional<int64_t> v) {
      Check(v ? sqlite3_bind_int64(stmt_, i, *v) : sqlite3_bind_null(stmt_, i));
      return *this;
    }
    // Steps through every result row, calling `row` on each.
    Status ForEachRow(const std::function<void(sqlite3_stmt*)>& row) {
      for (;;) {
        TESSERA_ASSIGN_OR_RETURN(bool more, Step());
        if (!more) return Status::Ok();
        row(stmt_);
      }
    }
    // SQLITE_ROW: true; SQLITE_DONE: false; otherwise an error status.
    Result<bool> Step() {
      if (bind_rc_ != SQLITE_OK) return impl_->Error("binding a value", bind_rc_);
      const int rc = sqlite3_step(stmt_);
      if (rc == SQLITE_ROW) return true;
      if (rc == SQLITE_DONE) return false;
      return impl_->Error("running a statement", rc);
    }
    // Steps a statement that returns no rows.
    Status Run() {
      Result<bool> row = Step();
      if (!row.ok()) return row.status();
      return Status::Ok();
    }

   private:
    void Check(int rc) {
      if (rc != SQLITE_OK && bind_rc_ == SQLITE_OK) bind_rc_ = rc;
    }
    Impl* impl_;
    sqlite3_stmt* stmt_;
    int bind_rc_ = SQLITE_OK;
  };

  Result<std::unique_ptr<Stmt>> Prepare(const std::string& sql) {
    auto it = cache_.find(sql);
    if (it == cache_.end()) {
      sqlite3_stmt* stmt = nullptr;
      const int rc =
          sqlite3_prepare_v3(db_, sql.c_str(), -1, SQLITE_PREPARE_PERSISTENT, &stmt, nullptr);
      if (rc != SQLITE_OK) {
        sqlite3_finalize(stmt);
        return Error("preparing a statement", rc);
      }
      it = cache_.emplace(sql, stmt).first;
    }
    return std::make_unique<Stmt>(this, it->second);
  }

  // Runs SQL text without values (schema, pragmas, BEGIN/COMMIT).
  Status Exec(const std::string& sql, const char* what) {
    char* message = nullptr;
    const int rc = sqlite3_exec(db_, sql.c_str(), nullptr, nullptr, &message);
    if (rc == SQLITE_OK) return Status::Ok();
    std::string text = message != nullptr ? message : sqlite3_errstr(rc);
    sqlite3_free(message);
    return Status::IoError(path_ + ": " + what + ": " + text);
  }

  Status Error(const char* what, int rc) const {
    const char* message = sqlite3_errmsg(db_);
    return Status::IoError(path_ + ": " + what + ": " +
                           (message != nullptr ? message : sqlite3_errstr(rc)));
  }

  // Sets the connection's pragmas and migrates the schema (Open).
  Status Migrate();

  // Runs `body` in BEGIN IMMEDIATE ... COMMIT; rolls back when the body or
  // the commit fails.
  template <typename F>
  Status Transaction(F&& body) {
    TESSERA_RETURN_IF_ERROR(Exec("BEGIN IMMEDIATE", "beginning a transaction"));
    Status status = body();
    if (status.ok()) {
      status = Exec("COMMIT", "committing a transaction");
      if (status.ok()) return status;
    }
    if (sqlite3_get_autocommit(db_) == 0) {
      (void)Exec("ROLLBACK", "rolling back a transaction");
    }
    return status;
  }

  Result<int64_t> ScalarInt(const std::string& sql, const char* what) {
    TESSERA_ASSIGN_OR_RETURN(auto stmt, Prepare(sql));
    TESSERA_ASSIGN_OR_RETURN(bool row, stmt->Step());
    if (!row) return Status::IoError(path_ + ": " + what + ": no row");
    return static_cast<int64_t>(sqlite3_column_int64(stmt->get(), 0));
  }

  Status BumpVersion() {
    TESSERA_ASSIGN_OR_RETURN(auto stmt,
                             Prepare("UPDATE meta SET value = value + 1 WHERE key = 'version'"));
    return stmt->Run();
  }

  Result<bool> PlanExists(int64_t id) {
    TESSERA_ASSIGN_OR_RETURN(auto stmt, Prepare("SELECT 1 FROM plans WHERE id = ?1"));
    stmt->Bind(1, id);
    return stmt->Step();
  }

  Status RequirePlan(int64_t id) {
    TESSERA_ASSIGN_OR_RETURN(bool exists, PlanExists(id));
    if (!exists) return Status::NotFound(path_ + ": no plan " + std::to_string(id));
    return Status::Ok();
  }

  Status WriteDeployment(int64_t plan_id) {
    TESSERA_RETURN_IF_ERROR(RequirePlan(plan_id));
    TESSERA_ASSIGN_OR_RETURN(auto stmt,
                             Prepare("INSERT INTO deployment (id, plan_id) VALUES (1, ?1) "
                                     "ON CONFLICT (id) DO UPDATE SET plan_id = excluded.plan_id"));
    stmt->Bind(1, plan_id);
    return stmt->Run();
  }

  static constexpr const char* kTransitionColumns =
      "id, from_plan, to_plan, state, phase, transition_json, check_json, error, created_at, "
      "updated_at";

  static StoredTransition ReadTransition(sqlite3_stmt* s) {
    StoredTransition t;
    t.id = sqlite3_column_int64(s, 0);
    if (sqlite3_column_type(s, 1) != SQLITE_NULL) t.from_plan = sqlite3_column_int64(s, 1);
    t.to_plan = sqlite3_column_int64(s, 2);
    t.state = ColumnText(s, 3);
    t.phase = sqlite3_column_int(s, 4);
    t.transition_json = ColumnText(s, 5);
    t.check_json = ColumnText(s, 6);
    t.error = ColumnText(s, 7);
    t.created_at = ColumnText(s, 8);
    t.updated_at = ColumnText(s, 9);
    return t;
  }

  Status ReadSteps(StoredTransition& t) {
    TESSERA_ASSIGN_OR_RETURN(auto stmt, Prepare("SELECT step_id, phase, node, state, error FROM "
                                                "transition_steps WHERE transition_id = ?1 "
                                                "ORDER BY phase, seq"));
    stmt->Bind(1, t.id);
    t.steps.clear();
    TESSERA_RETURN_IF_ERROR(stmt->ForEachRow([&](sqlite3_stmt* s) {
      StoredStep step;
      step.step_id = ColumnText(s, 0);
      step.phase = sqlite3_column_int(s, 1);
      step.node = ColumnText(s, 2);
      step.state = ColumnText(s, 3);
      step.error = ColumnText(s, 4);
      t.steps.push_back(std::move(step));
    }));
    return Status::Ok();
  }

  const std::string path_;
  sqlite3* const db_;
  std::mutex mu_;
  std::unordered_map<std::string, sqlite3_stmt*> cache_;
  int schema_version_ = 0;
};

SqliteStore::SqliteStore(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
SqliteStore::~SqliteStore() = default;

int SqliteStore::schema_version() const { return impl_->schema_version_; }

std::string SqliteStore::Describe() const { return "sqlite " + impl_->path_; }

Result<StoreView> SqliteStore::Observe() { return StoreView{}; }
Status SqliteStore::PinReads() { return Status::Ok(); }
void SqliteStore::UnpinReads() {}

Result<std::unique_ptr<SqliteStore>> SqliteStore::Open(const std::string& path) {
  return NoThrow(kWho, [&]() -> Result<std::unique_ptr<SqliteStore>> {
    sqlite3* db = nullptr;
    const int rc =
        sqlite3_open_v2(path.c_str(), &db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, nullptr);
    if (rc != SQLITE_OK) {
      std::string message = db != nullptr ? sqlite3_errmsg(db) : sqlite3_errstr(rc);
      sqlite3_close_v2(db);
      return Status::IoError(path + ": cannot open the control store: " + message);
    }
    auto impl = std::make_unique<Impl>(path, db);  // owns db from here on
    TESSERA_RETURN_IF_ERROR(impl->Migrate());
    return std::unique_ptr<SqliteStore>(new SqliteStore(std::move(impl)));
  });
}

// The mutex is not needed: nobody else sees this Impl yet.
Status SqliteStore::Impl::Migrate() {
  Impl& impl = *this;
  sqlite3* db = db_;
  const std::string& path = path_;
  sqlite3_extended_result_codes(db, 1);
  if (sqlite3_busy_timeout(db, kBusyTimeoutMs) != SQLITE_OK) {
    return Status::IoError(path + ": setting the busy timeout: " + sqlite3_errmsg(db));
  }

  // The first read of the file: a file that is not SQLite fails here
  // ("file is not a database").
  Result<int64_t> file_version = impl.ScalarInt("PRAGMA user_version", "reading user_version");
  if (!file_version.ok()) {
    return Status::IoError(path + ": not a Tessera control store (cannot read it as SQLite): " +
                           file_version.status().message());
  }
  TESSERA_ASSIGN_OR_RETURN(int64_t app_id,
                           impl.ScalarInt("PRAGMA application_id", "reading application_id"));
  if (*file_version == 0) {
    // A fresh file, or someone else's SQLite database.
    TESSERA_ASSIGN_OR_RETURN(
        int64_t tables,
        impl.ScalarInt("SELECT count(*) FROM sqlite_master WHERE name NOT LIKE 'sqlite_%'",
                       "reading the schema"));
    if (tables != 0) {
      return Status::IoError(path + ": not a Tessera control store: a SQLite database with " +
                             std::to_string(tables) +
                             " schema object(s) of its own and no Tessera schema version");
    }
  } else if (app_id != kApplicationId) {
    return Status::IoError(path + ": not a Tessera control store: SQLite application_id " +
                           std::to_string(app_id) + ", schema version " +
                           std::to_string(*file_version));
  }
  if (*file_version > SqliteStore::kSchemaVersion) {
    return Status::IoError(path + ": the control store's schema version " +
                           std::to_string(*file_version) + " is newer than this build's " +
                           std::to_string(SqliteStore::kSchemaVersion) + "; use a newer tessera");
  }

  // WAL, checked: journal_mode answers the mode in effect, which stays the
  // old one when SQLite cannot switch (e.g. a file system without shared
  // memory).
  {
    TESSERA_ASSIGN_OR_RETURN(auto stmt, impl.Prepare("PRAGMA journal_mode=WAL"));
    TESSERA_ASSIGN_OR_RETURN(bool row, stmt->Step());
    const std::string mode = row ? ColumnText(stmt->get(), 0) : "";
    if (mode != "wal") {
      return Status::IoError(
          path + ": cannot put the control store in WAL mode (journal_mode is '" + mode + "')");
    }
  }
  TESSERA_RETURN_IF_ERROR(impl.Exec("PRAGMA synchronous=FULL", "setting synchronous=FULL"));
  TESSERA_RETURN_IF_ERROR(impl.Exec("PRAGMA foreign_keys=ON", "enabling foreign keys"));

  for (const Migration& m : kMigrations) {
    if (m.version <= *file_version) continue;
    TESSERA_RETURN_IF_ERROR(impl.Transaction([&]() -> Status {
      // Another process may have migrated between our read and our lock.
      TESSERA_ASSIGN_OR_RETURN(int64_t now,
                               impl.ScalarInt("PRAGMA user_version", "reading user_version"));
      if (now >= m.version) return Status::Ok();
      TESSERA_RETURN_IF_ERROR(
          impl.Exec(m.sql, ("migrating to schema version " + std::to_string(m.version)).c_str()));
      return impl.Exec("PRAGMA user_version = " + std::to_string(m.version),
                       "recording the schema version");
    }));
  }
  TESSERA_ASSIGN_OR_RETURN(int64_t version,
                           impl.ScalarInt("PRAGMA user_version", "reading user_version"));
  if (version != SqliteStore::kSchemaVersion) {
    return Status::IoError(path + ": the control store's schema version is " +
                           std::to_string(version) + " after migrating, expected " +
                           std::to_string(SqliteStore::kSchemaVersion));
  }
  impl.schema_version_ = static_cast<int>(version);
  return Status::Ok();
}

Result<int64_t> SqliteStore::Version() {
  return NoThrow(kWho, [&]() -> Result<int64_t> {
    std::lock_guard<std::mutex> lock(impl_->mu_);
    return impl_->ScalarInt("SELECT value FROM meta WHERE key = 'version'", "reading the version");
  });
}

Result<std::optional<std::string>> SqliteStore::Scenario() {
  return NoThrow(kWho, [&]() -> Result<std::optional<std::string>> {
    std::lock_guard<std::mutex> lock(impl_->mu_);
    TESSERA_ASSIGN_OR_RETURN(auto stmt,
                             impl_->Prepare("SELECT value FROM meta WHERE key = 'scenario'"));
    TESSERA_ASSIGN_OR_RETURN(bool row, stmt->Step());
    if (!row) return std::optional<std::string>();
    return std::optional<std::string>(ColumnText(stmt->get(), 0));
  });
}

Status SqliteStore::PutScenario(const std::string& scenario_json) {
  return NoThrow(kWho, [&]() -> Status {
    std::lock_guard<std::mutex> lock(impl_->mu_);
    return impl_->Transaction([&]() -> Status {
      TESSERA_ASSIGN_OR_RETURN(
          auto put, impl_->Prepare("INSERT INTO meta (key, value) VALUES ('scenario', ?1) "
                                   "ON CONFLICT (key) DO UPDATE SET value = excluded.value"));
      put->Bind(1, scenario_json);
      TESSERA_RETURN_IF_ERROR(put->Run());
      TESSERA_ASSIGN_OR_RETURN(auto clear, impl_->Prepare("DELETE FROM service_updates"));
      return clear->Run();
    });
  });
}

Result<std::vector<StoredService>> SqliteStore::ServiceUpdates() {
  return NoThrow(kWho, [&]() -> Result<std::vector<StoredService>> {
    std::lock_guard<std::mutex> lock(impl_->mu_);
    TESSERA_ASSIGN_OR_RETURN(
        auto stmt, impl_->Prepare("SELECT name, service_json FROM service_updates ORDER BY name"));
    std::vector<StoredService> out;
    TESSERA_RETURN_IF_ERROR(stmt->ForEachRow(
        [&](sqlite3_stmt* s) { out.push_back({ColumnText(s, 0), ColumnText(s, 1)}); }));
    return out;
  });
}

Status SqliteStore::PutService(const StoredService& service) {
  return NoThrow(kWho, [&]() -> Status {
    std::lock_guard<std::mutex> lock(impl_->mu_);
    TESSERA_ASSIGN_OR_RETURN(
        auto stmt,
        impl_->Prepare("INSERT INTO service_updates (name, service_json) VALUES (?1, ?2) "
                       "ON CONFLICT (name) DO UPDATE SET service_json = excluded.service_json"));
    stmt->Bind(1, service.name).Bind(2, service.service_json);
    return stmt->Run();
  });
}

Result<int64_t> SqliteStore::AddPlan(const StoredPlan& plan) {
  return NoThrow(kWho, [&]() -> Result<int64_t> {
    std::lock_guard<std::mutex> lock(impl_->mu_);
    TESSERA_ASSIGN_OR_RETURN(
        auto stmt,
        impl_->Prepare("INSERT INTO plans (created_at, planner, scenario_json, deployment_json, "
                       "metrics_json) VALUES (?1, ?2, ?3, ?4, ?5)"));
    stmt->Bind(1, plan.created_at)
        .Bind(2, plan.planner)
        .Bind(3, plan.scenario_json)
        .Bind(4, plan.deployment_json)
        .Bind(5, plan.metrics_json);
    TESSERA_RETURN_IF_ERROR(stmt->Run());
    return static_cast<int64_t>(sqlite3_last_insert_rowid(impl_->db_));
  });
}

Result<std::optional<StoredPlan>> SqliteStore::Plan(int64_t id) {
  return NoThrow(kWho, [&]() -> Result<std::optional<StoredPlan>> {
    std::lock_guard<std::mutex> lock(impl_->mu_);
    TESSERA_ASSIGN_OR_RETURN(
        auto stmt, impl_->Prepare("SELECT id, created_at, planner, scenario_json, deployment_json, "
                                  "metrics_json FROM plans WHERE id = ?1"));
    stmt->Bind(1, id);
    TESSERA_ASSIGN_OR_RETURN(bool row, stmt->Step());
    if (!row) return std::optional<StoredPlan>();
    sqlite3_stmt* s = stmt->get();
    StoredPlan p;
    p.id = sqlite3_column_int64(s, 0);
    p.created_at = ColumnText(s, 1);
    p.planner = ColumnText(s, 2);
    p.scenario_json = ColumnText(s, 3);
    p.deployment_json = ColumnText(s, 4);
    p.metrics_json = ColumnText(s, 5);
    return std::optional<StoredPlan>(std::move(p));
  });
}

Result<std::vector<StoredPlan>> SqliteStore::Plans(int limit) {
  return NoThrow(kWho, [&]() -> Result<std::vector<StoredPlan>> {
    std::vector<StoredPlan> out;
    if (limit <= 0) return out;
    std::lock_guard<std::mutex> lock(impl_->mu_);
    TESSERA_ASSIGN_OR_RETURN(
        auto stmt, impl_->Prepare("SELECT id, created_at, planner, scenario_json, metrics_json "
                                  "FROM plans ORDER BY id DESC LIMIT ?1"));
    stmt->Bind(1, static_cast<int64_t>(limit));
    TESSERA_RETURN_IF_ERROR(stmt->ForEachRow([&](sqlite3_stmt* s) {
      StoredPlan p;
      p.id = sqlite3_column_int64(s, 0);
      p.created_at = ColumnText(s, 1);
      p.planner = ColumnText(s, 2);
      p.scenario_json = ColumnText(s, 3);
      p.metrics_json = ColumnText(s, 4);
      out.push_back(std::move(p));
    }));
    return out;
  });
}

Result<std::optional<int64_t>> SqliteStore::DeploymentPlan() {
  return NoThrow(kWho, [&]() -> Result<std::optional<int64_t>> {
    std::lock_guard<std::mutex> lock(impl_->mu_);
    TESSERA_ASSIGN_OR_RETURN(auto stmt,
                             impl_->Prepare("SELECT plan_id FROM deployment WHERE id = 1"));
    TESSERA_ASSIGN_OR_RETURN(bool row, stmt->Step());
    if (!row) return std::optional<int64_t>();
    return std::optional<int64_t>(sqlite3_column_int64(stmt->get(), 0));
  });
}

Status SqliteStore::SetDeployment(int64_t plan_id) {
  return NoThrow(kWho, [&]() -> Status {
    std::lock_guard<std::mutex> lock(impl_->mu_);
    return impl_->Transaction([&]() -> Status {
      TESSERA_RETURN_IF_ERROR(impl_->WriteDeployment(plan_id));
      return impl_->BumpVersion();
    });
  });
}

Result<int64_t> SqliteStore::AddTransition(const StoredTransition& t) {
  return NoThrow(kWho, [&]() -> Result<int64_t> {
    std::lock_guard<std::mutex> lock(impl_->mu_);
    int64_t id = 0;
    TESSERA_RETURN_IF_ERROR(impl_->Transaction([&]() -> Status {
      if (t.from_plan) TESSERA_RETURN_IF_ERROR(impl_->RequirePlan(*t.from_plan));
      TESSERA_RETURN_IF_ERROR(impl_->RequirePlan(t.to_plan));
      {
        TESSERA_ASSIGN_OR_RETURN(
            auto stmt, impl_->Prepare("INSERT INTO transitions (from_plan, to_plan, state, phase, "
                                      "transition_json, check_json, error, created_at, updated_at) "
                                      "VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)"));
        stmt->Bind(1, t.from_plan)
            .Bind(2, t.to_plan)
            .Bind(3, t.state)
            .Bind(4, static_cast<int64_t>(t.phase))
            .Bind(5, t.transition_json)
            .Bind(6, t.check_json)
            .Bind(7, t.error)
            .Bind(8, t.created_at)
            .Bind(9, t.updated_at);
        TESSERA_RETURN_IF_ERROR(stmt->Run());
        id = sqlite3_last_insert_rowid(impl_->db_);
      }
      TESSERA_ASSIGN_OR_RETURN(
          auto step_stmt,
          impl_->Prepare("INSERT INTO transition_steps (transition_id, seq, step_id, phase, node, "
                         "state, error) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)"));
      for (size_t i = 0; i < t.steps.size(); ++i) {
        const StoredStep& step = t.steps[i];
        sqlite3_reset(step_stmt->get());
        step_stmt->Bind(1, id)
            .Bind(2, static_cast<int64_t>(i))
            .Bind(3, step.step_id)
            .Bind(4, static_cast<int64_t>(step.phase))
            .Bind(5, step.node)
            .Bind(6, step.state)
            .Bind(7, step.error);
        TESSERA_RETURN_IF_ERROR(step_stmt->Run());
      }
      return impl_->BumpVersion();
    }));
    return id;
  });
}

Result<std::optional<StoredTransition>> SqliteStore::Transition(int64_t id) {
  return NoThrow(kWho, [&]() -> Result<std::optional<StoredTransition>> {
    std::lock_guard<std::mutex> lock(impl_->mu_);
    StoredTransition t;
    {
      TESSERA_ASSIGN_OR_RETURN(auto stmt,
                               impl_->Prepare(std::string("SELECT ") + Impl::kTransitionColumns +
                                              " FROM transitions WHERE id = ?1"));
      stmt->Bind(1, id);
      TESSERA_ASSIGN_OR_RETURN(bool row, stmt->Step());
      if (!row) return std::optional<StoredTransition>();
      t = Impl::ReadTransition(stmt->get());
    }
    TESSERA_RETURN_IF_ERROR(impl_->ReadSteps(t));
    return std::optional<StoredTransition>(std::move(t));
  });
}

Result<std::vector<StoredTransition>> SqliteStore::Transitions(int limit) {
  return NoThrow(kWho, [&]() -> Result<std::vector<StoredTransition>> {
    std::vector<StoredTransition> out;
    if (limit <= 0) return out;
    std::lock_guard<std::mutex> lock(impl_->mu_);
    TESSERA_ASSIGN_OR_RETURN(auto stmt,
                             impl_->Prepare(std::string("SELECT ") + Impl::kTransitionColumns +
                                            " FROM transitions ORDER BY id DESC LIMIT ?1"));
    stmt->Bind(1, static_cast<int64_t>(limit));
    TESSERA_RETURN_IF_ERROR(
        stmt->ForEachRow([&](sqlite3_stmt* s) { out.push_back(Impl::ReadTransition(s)); }));
    return out;
  });
}

Result<std::vector<StoredTransition>> SqliteStore::TransitionsIn(const std::string& state) {
  return NoThrow(kWho, [&]() -> Result<std::vector<StoredTransition>> {
    std::lock_guard<std::mutex> lock(impl_->mu_);
    std::vector<StoredTransition> out;
    // One read transaction: the transitions and their steps from one snapshot.
    return [&]() -> Result<std::vector<StoredTransition>> {
      TESSERA_RETURN_IF_ERROR(impl_->Exec("BEGIN", "beginning a read"));
      Status status = [&]() -> Status {
        {
          TESSERA_ASSIGN_OR_RETURN(
              auto stmt, impl_->Prepare(std::string("SELECT ") + Impl::kTransitionColumns +
                                        " FROM transitions WHERE state = ?1 ORDER BY id"));
          stmt->Bind(1, state);
          TESSERA_RETURN_IF_ERROR(
              stmt->ForEachRow([&](sqlite3_stmt* s) { out.push_back(Impl::ReadTransition(s)); }));
        }
        for (StoredTransition& t : out) TESSERA_RETURN_IF_ERROR(impl_->ReadSteps(t));
        return Status::Ok();
      }();
      if (sqlite3_get_autocommit(impl_->db_) == 0) {
        Status end = impl_->Exec(status.ok() ? "COMMIT" : "ROLLBACK", "ending a read");
        if (status.ok() && !end.ok()) status = end;
      }
      if (!status.ok()) return status;
      return std::move(out);
    }();
  });
}

Status SqliteStore::UpdateTransition(const StoredTransition& t,
                                     std::optional<int64_t> deployment_plan) {
  return NoThrow(kWho, [&]() -> Status {
    std::lock_guard<std::mutex> lock(impl_->mu_);
    return impl_->Transaction([&]() -> Status {
      {
        TESSERA_ASSIGN_OR_RETURN(
            auto stmt, impl_->Prepare("UPDATE transitions SET state = ?2, phase = ?3, error = ?4, "
                                      "updated_at = ?5 WHERE id = ?1"));
        stmt->Bind(1, t.id)
            .Bind(2, t.state)
            .Bind(3, static_cast<int64_t>(t.phase))
            .Bind(4, t.error)
            .Bind(5, t.updated_at);
        TESSERA_RETURN_IF_ERROR(stmt->Run());
        if (sqlite3_changes(impl_->db_) == 0) {
          return Status::NotFound(impl_->path_ + ": no transition " + std::to_string(t.id));
        }
      }
      TESSERA_ASSIGN_OR_RETURN(auto step_stmt,
                               impl_->Prepare("UPDATE transition_steps SET state = ?3, error = ?4 "
                                              "WHERE transition_id = ?1 AND step_id = ?2"));
      for (const StoredStep& step : t.steps) {
        sqlite3_reset(step_stmt->get());
        step_stmt->Bind(1, t.id).Bind(2, step.step_id).Bind(3, step.state).Bind(4, step.error);
        TESSERA_RETURN_IF_ERROR(step_stmt->Run());
        if (sqlite3_changes(impl_->db_) == 0) {
          return Status::NotFound(impl_->path_ + ": transition " + std::to_string(t.id) +
                                  " has no step '" + step.step_id + "'");
        }
      }
      if (deployment_plan) TESSERA_RETURN_IF_ERROR(impl_->WriteDeployment(*deployment_plan));
      return impl_->BumpVersion();
    });
  });
}

Status SqliteStore::PutNode(const StoredNode& node) {
  return NoThrow(kWho, [&]() -> Status {
    std::lock_guard<std::mutex> lock(impl_->mu_);
    TESSERA_ASSIGN_OR_RETURN(
        auto stmt,
        impl_->Prepare("INSERT INTO nodes (node, status_json, updated_at) VALUES (?1, ?2, ?3) "
                       "ON CONFLICT (node) DO UPDATE SET status_json = excluded.status_json, "
                       "updated_at = excluded.updated_at"));
    stmt->Bind(1, node.node).Bind(2, node.status_json).Bind(3, node.updated_at);
    return stmt->Run();
  });
}

Result<std::vector<StoredNode>> SqliteStore::Nodes() {
  return NoThrow(kWho, [&]() -> Result<std::vector<StoredNode>> {
    std::lock_guard<std::mutex> lock(impl_->mu_);
    TESSERA_ASSIGN_OR_RETURN(
        auto stmt, impl_->Prepare("SELECT node, status_json, updated_at FROM nodes ORDER BY node"));
    std::vector<StoredNode> out;
    TESSERA_RETURN_IF_ERROR(stmt->ForEachRow([&](sqlite3_stmt* s) {
      out.push_back({ColumnText(s, 0), ColumnText(s, 1), ColumnText(s, 2)});
    }));
    return out;
  });
}

}  // namespace tessera
