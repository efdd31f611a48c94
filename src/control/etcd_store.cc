// EtcdStore (tessera/control/etcd_store.h): the election, the fence on
// every write, and the records as JSON values under one key prefix.
#include "tessera/control/etcd_store.h"

#include <fmt/format.h>

#include <algorithm>
#include <condition_variable>
#include <exception>
#include <functional>
#include <map>
#include <mutex>
#include <nlohmann/json.hpp>
#include <set>
#include <thread>
#include <utility>

#include "control/etcd_client.h"
#include "control/no_throw.h"

namespace tessera {
namespace {

constexpr const char* kWho = "etcd store";

using Json = nlohmann::json;

// A write whose counters moved between the read and the transaction is
// tried again; only a second writer moves them, so once is almost always
// enough.
constexpr int kWriteAttempts = 5;

std::string IdKey(int64_t id) { return fmt::format("{:012d}", id); }

Result<Json> ParseRecord(const EtcdKv& kv) {
  Json j = Json::parse(kv.value, nullptr, false);
  if (j.is_discarded() || !j.is_object()) {
    return Status::IoError("etcd: the record at " + kv.key + " is not a JSON object");
  }
  return j;
}

std::string Text(const Json& j, const char* field) {
  return j.contains(field) && j[field].is_string() ? j[field].get<std::string>() : std::string();
}

int64_t Number(const Json& j, const char* field) {
  return j.contains(field) && j[field].is_number_integer() ? j[field].get<int64_t>() : 0;
}

Json PlanRecord(const StoredPlan& plan) {
  return Json{{"created_at", plan.created_at},
              {"planner", plan.planner},
              {"scenario_json", plan.scenario_json},
              {"metrics_json", plan.metrics_json}};
}

StoredPlan PlanFrom(int64_t id, const Json& j) {
  StoredPlan p;
  p.id = id;
  p.created_at = Text(j, "created_at");
  p.planner = Text(j, "planner");
  p.scenario_json = Text(j, "scenario_json");
  p.metrics_json = Text(j, "metrics_json");
  return p;
}

Json TransitionRecord(const StoredTransition& t) {
  Json steps = Json::array();
  for (const StoredStep& s : t.steps) {
    steps.push_back(Json{{"step_id", s.step_id},
                         {"phase", s.phase},
                         {"node", s.node},
                         {"state", s.state},
                         {"error", s.error}});
  }
  return Json{{"id", t.id},
              {"from_plan", t.from_plan ? Json(*t.from_plan) : Json(nullptr)},
              {"to_plan", t.to_plan},
              {"state", t.state},
              {"phase", t.phase},
              {"transition_json", t.transition_json},
              {"check_json", t.check_json},
              {"error", t.error},
              {"created_at", t.created_at},
              {"updated_at", t.updated_at},
              {"steps", std::move(steps)}};
}

StoredTransition TransitionFrom(const Json& j) {
  StoredTransition t;
  t.id = Number(j, "id");
  if (j.contains("from_plan") && j["from_plan"].is_number_integer()) {
    t.from_plan = j["from_plan"].get<int64_t>();
  }
  t.to_plan = Number(j, "to_plan");
  t.state = Text(j, "state");
  t.phase = static_cast<int>(Number(j, "phase"));
  t.transition_json = Text(j, "transition_json");
  t.check_json = Text(j, "check_json");
  t.error = Text(j, "error");
  t.created_at = Text(j, "created_at");
  t.updated_at = Text(j, "updated_at");
  if (j.contains("steps") && j["steps"].is_array()) {
    for (const Json& s : j["steps"]) {
      StoredStep step;
      step.step_id = Text(s, "step_id");
      step.phase = static_cast<int>(Number(s, "phase"));
      step.node = Text(s, "node");
      step.state = Text(s, "state");
      step.error = Text(s, "error");
      t.steps.push_back(std::move(step));
    }
  }
  return t;
}

}  // namespace

class EtcdStore::Impl {
 public:
  Impl(std::unique_ptr<EtcdClient> client, std::unique_ptr<EtcdClient> renewer,
       StoreOptions options)
      : client_(std::move(client)), renewer_(std::move(renewer)), options_(std::move(options)) {
    while (!options_.prefix.empty() && options_.prefix.back() == '/') options_.prefix.pop_back();
  }

  ~Impl() {
    {
      std::lock_guard<std::mutex> lock(stop_mu_);
      stopping_ = true;
    }
    stop_cv_.notify_all();
    if (renew_thread_.joinable()) renew_thread_.join();
    int64_t lease = 0;
    {
      std::lock_guard<std::mutex> lock(mu_);
      lease = lease_;
    }
    if (lease != 0) (void)client_->LeaseRevoke(lease);
  }

  std::string Key(std::string_view rest) const { return options_.prefix + "/" + std::string(rest); }
  std::string ElectionPrefix() const { return Key("election/"); }

  // Grants a lease and puts this replica's election key under it.
  Status Campaign(EtcdClient& client) {
    TESSERA_ASSIGN_OR_RETURN(const int64_t lease, client.LeaseGrant(options_.lease_ttl_s));
    const std::string key = ElectionPrefix() + fmt::format("{:016x}", lease);
    const std::string value = Json{{"url", options_.advertise_url}, {"name", options_.name}}.dump();
    TESSERA_ASSIGN_OR_RETURN(EtcdTxnResult put,
                             client.Txn({EtcdCompare{key, "", EtcdCompare::Target::kCreate,
                                                     EtcdCompare::Result::kEqual, 0, ""}},
                                        {EtcdOp::Put(key, value, lease)}, {}));
    if (!put.succeeded) return Status::IoError("etcd: election key " + key + " already exists");
    std::lock_guard<std::mutex> lock(mu_);
    lease_ = lease;
    key_ = key;
    key_revision_ = put.revision;
    return Status::Ok();
  }

  EtcdClient& renewer() { return *renewer_; }

  void StartRenewing() {
    renew_thread_ = std::thread([this] { RenewLoop(); });
  }

  Result<StoreView> Observe() {
    EtcdRangeRequest lowest;
    lowest.key = ElectionPrefix();
    lowest.range_end = EtcdClient::PrefixEnd(lowest.key);
    lowest.limit = 1;
    lowest.by_create_revision = true;
    TESSERA_ASSIGN_OR_RETURN(EtcdRange range, client_->Range(lowest));
    std::lock_guard<std::mutex> lock(mu_);
    StoreView view;
    view.leader = !range.kvs.empty() && range.kvs[0].key == key_ &&
                  range.kvs[0].create_revision == key_revision_;
    if (range.kvs.empty()) {
      view.no_leader_reason = "no replica holds a lease in etcd";
    } else if (!view.leader) {
      const Json who = Json::parse(range.kvs[0].value, nullptr, false);
      if (who.is_object()) {
        view.leader_url = Text(who, "url");
        view.leader_name = Text(who, "name");
      }
    }
    view.changed = range.revision != seen_revision_;
    seen_revision_ = range.revision;
    leader_ = view.leader;
    return view;
  }

  // Runs `ops` in one transaction when `compares` hold and this replica
  // leads: true when it committed, false when one of `compares` failed,
  // IoError when the fence did (this replica does not lead).
  Result<bool> Write(std::vector<EtcdCompare> compares, std::vector<EtcdOp> ops) {
    std::string key;
    int64_t revision = 0;
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (!leader_) return NotLeader("another replica leads");
      key = key_;
      revision = key_revision_;
    }
    const std::string election = ElectionPrefix();
    // The fence: this replica's election key as it campaigned, and none older.
    compares.push_back(
        {key, "", EtcdCompare::Target::kCreate, EtcdCompare::Result::kEqual, revision, ""});
    compares.push_back({election, EtcdClient::PrefixEnd(election), EtcdCompare::Target::kCreate,
                        EtcdCompare::Result::kGreater, revision - 1, ""});
    // Who wrote: the replica and its election key, one value per revision
    // in etcd's history (a fence that held can be audited there).
    ops.push_back(EtcdOp::Put(Key("writer"), options_.name + " " + key));
    EtcdRangeRequest mine;
    mine.key = key;
    TESSERA_ASSIGN_OR_RETURN(EtcdTxnResult txn, client_->Txn(compares, ops, {EtcdOp::Get(mine)}));
    std::lock_guard<std::mutex> lock(mu_);
    if (txn.succeeded) {
      // Nothing but this write happened since the last Observe: the cache
      // built from the store is still whole.
      if (txn.revision == seen_revision_ + 1) seen_revision_ = txn.revision;
      return true;
    }
    const bool fenced = txn.ranges.empty() || txn.ranges[0].kvs.empty() ||
                        txn.ranges[0].kvs[0].create_revision != revision;
    if (fenced) {
      leader_ = false;
      return NotLeader("its election key " + key + " is gone (its lease expired)");
    }
    return false;
  }

  // Reads `counters` (missing: `initial`) in one snapshot, then writes
  // ops(next values) with each counter raised by one, in one transaction
  // that holds only if no counter moved; tries again when one did.
  Result<std::vector<int64_t>> WriteCounting(
      const std::vector<std::pair<std::string, int64_t>>& counters,
      const std::function<Result<std::vector<EtcdOp>>(const std::vector<int64_t>&)>& ops) {
    std::lock_guard<std::mutex> writing(write_mu_);
    for (int attempt = 0; attempt < kWriteAttempts; ++attempt) {
      std::vector<EtcdOp> reads;
      for (const auto& [key, initial] : counters) {
        EtcdRangeRequest r;
        r.key = key;
        reads.push_back(EtcdOp::Get(r));
      }
      TESSERA_ASSIGN_OR_RETURN(EtcdTxnResult read, client_->Txn({}, reads, {}));
      std::vector<int64_t> next;
      std::vector<EtcdCompare> guard;
      std::vector<EtcdOp> writes;
      for (size_t i = 0; i < counters.size(); ++i) {
        int64_t value = counters[i].second;
        int64_t mod = 0;
        if (i < read.ranges.size() && !read.ranges[i].kvs.empty()) {
          const EtcdKv& kv = read.ranges[i].kvs[0];
          try {
            value = std::stoll(kv.value);
          } catch (const std::exception&) {
            return Status::IoError("etcd: the counter " + kv.key + " is not a number");
          }
          mod = kv.mod_revision;
        }
        next.push_back(value + 1);
        guard.push_back({counters[i].first, "", EtcdCompare::Target::kMod,
                         EtcdCompare::Result::kEqual, mod, ""});
        writes.push_back(EtcdOp::Put(counters[i].first, std::to_string(value + 1)));
      }
      TESSERA_ASSIGN_OR_RETURN(std::vector<EtcdOp> more, ops(next));
      writes.insert(writes.end(), more.begin(), more.end());
      TESSERA_ASSIGN_OR_RETURN(bool done, Write(guard, writes));
      if (done) return next;
    }
    return Status::IoError("etcd: a counter kept moving under this replica's writes");
  }

  Status WriteOnce(std::vector<EtcdOp> ops) {
    std::lock_guard<std::mutex> writing(write_mu_);
    TESSERA_ASSIGN_OR_RETURN(bool done, Write({}, std::move(ops)));
    if (!done) return Status::Internal("etcd: an unconditional write was refused");
    return Status::Ok();
  }

  // Pins this thread's reads at the store's revision now.
  Status Pin() {
    EtcdRangeRequest r;
    r.key = Key("version");
    TESSERA_ASSIGN_OR_RETURN(EtcdRange now, client_->Range(r));
    std::lock_guard<std::mutex> lock(mu_);
    pins_[std::this_thread::get_id()] = now.revision;
    return Status::Ok();
  }
  void Unpin() {
    std::lock_guard<std::mutex> lock(mu_);
    pins_.erase(std::this_thread::get_id());
  }
  // The revision this thread's reads are pinned at, 0 for none.
  int64_t Pinned() {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = pins_.find(std::this_thread::get_id());
    return it == pins_.end() ? 0 : it->second;
  }

  Result<std::optional<EtcdKv>> Get(const std::string& key) {
    EtcdRangeRequest r;
    r.key = key;
    r.revision = Pinned();
    TESSERA_ASSIGN_OR_RETURN(EtcdRange range, client_->Range(r));
    if (range.kvs.empty()) return std::optional<EtcdKv>();
    return std::optional<EtcdKv>(std::move(range.kvs[0]));
  }

  Result<std::vector<EtcdKv>> List(const std::string& prefix, int64_t limit, bool descend) {
    EtcdRangeRequest r;
    r.key = prefix;
    r.range_end = EtcdClient::PrefixEnd(prefix);
    r.limit = limit;
    r.descend = descend;
    r.revision = Pinned();
    TESSERA_ASSIGN_OR_RETURN(EtcdRange range, client_->Range(r));
    return std::move(range.kvs);
  }

  Status RequirePlan(int64_t id) {
    TESSERA_ASSIGN_OR_RETURN(std::optional<EtcdKv> plan, Get(Key("plan/" + IdKey(id))));
    if (!plan) return Status::NotFound(fmt::format("etcd: no plan {}", id));
    return Status::Ok();
  }

  Result<std::optional<StoredTransition>> ReadTransition(int64_t id) {
    TESSERA_ASSIGN_OR_RETURN(std::optional<EtcdKv> kv, Get(Key("transition/" + IdKey(id))));
    if (!kv) return std::optional<StoredTransition>();
    TESSERA_ASSIGN_OR_RETURN(Json j, ParseRecord(*kv));
    return std::optional<StoredTransition>(TransitionFrom(j));
  }

  std::string Describe() const { return "etcd " + client_->Endpoints() + " " + options_.prefix; }

 private:
  Status NotLeader(const std::string& why) const {
    return Status::IoError("etcd: this replica (" + options_.name + ") is not the leader: " + why);
  }

  void RenewLoop() {
    const auto period = std::chrono::milliseconds(options_.lease_ttl_s * 1000 / 3);
    std::unique_lock<std::mutex> lock(stop_mu_);
    while (!stop_cv_.wait_for(lock, period, [&] { return stopping_; })) {
      lock.unlock();
      Renew();
      lock.lock();
    }
  }

  void Renew() {
    int64_t lease = 0;
    {
      std::lock_guard<std::mutex> lock(mu_);
      lease = lease_;
    }
    Result<int64_t> ttl = renewer_->LeaseKeepAlive(lease);
    // etcd unreachable: the next period tries again; the lease may lapse
    // meanwhile, and then etcd fences this replica's writes.
    if (!ttl.ok() || *ttl > 0) return;
    {
      std::lock_guard<std::mutex> lock(mu_);
      leader_ = false;
    }
    // The lease expired (this process was paused or cut off): campaign
    // again, behind every replica that kept its lease.
    (void)Campaign(*renewer_);
  }

  std::unique_ptr<EtcdClient> client_;
  std::unique_ptr<EtcdClient> renewer_;  // the renewing thread's own connections
  StoreOptions options_;

  std::mutex mu_;  // guards the fields below
  int64_t lease_ = 0;
  std::string key_;
  int64_t key_revision_ = 0;
  bool leader_ = false;
  int64_t seen_revision_ = -1;
  std::map<std::thread::id, int64_t> pins_;  // by thread: PinReads' revision

  std::mutex write_mu_;  // one read-modify-write at a time

  std::mutex stop_mu_;
  std::condition_variable stop_cv_;
  bool stopping_ = false;
  std::thread renew_thread_;
};

EtcdStore::EtcdStore(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
EtcdStore::~EtcdStore() = default;

Result<std::unique_ptr<EtcdStore>> EtcdStore::Open(const std::vector<std::string>& endpoints,
                                                   const StoreOptions& options) {
  return NoThrow(kWho, [&]() -> Result<std::unique_ptr<EtcdStore>> {
    TESSERA_RETURN_IF_ERROR(CheckStoreOptions(options));
    TESSERA_ASSIGN_OR_RETURN(std::unique_ptr<EtcdClient> client,
                             EtcdClient::Create(endpoints, options.request_timeout_s));
    TESSERA_ASSIGN_OR_RETURN(std::unique_ptr<EtcdClient> renewer,
                             EtcdClient::Create(endpoints, options.request_timeout_s));
    auto impl = std::make_unique<Impl>(std::move(client), std::move(renewer), options);
    TESSERA_RETURN_IF_ERROR(impl->Campaign(impl->renewer()));
    impl->StartRenewing();
    TESSERA_RETURN_IF_ERROR(impl->Observe().status());
    return std::unique_ptr<EtcdStore>(new EtcdStore(std::move(impl)));
  });
}

std::string EtcdStore::Describe() const { return impl_->Describe(); }

Result<StoreView> EtcdStore::Observe() {
  return NoThrow(kWho, [&]() -> Result<StoreView> { return impl_->Observe(); });
}

Status EtcdStore::PinReads() {
  return NoThrow(kWho, [&]() -> Status { return impl_->Pin(); });
}

void EtcdStore::UnpinReads() { impl_->Unpin(); }

Result<int64_t> EtcdStore::Version() {
  return NoThrow(kWho, [&]() -> Result<int64_t> {
    TESSERA_ASSIGN_OR_RETURN(std::optional<EtcdKv> kv, impl_->Get(impl_->Key("version")));
    if (!kv) return int64_t{1};
    try {
      return static_cast<int64_t>(std::stoll(kv->value));
    } catch (const std::exception&) {
      return Status::IoError("etcd: the version is not a number");
    }
  });
}

Result<std::optional<std::string>> EtcdStore::Scenario() {
  return NoThrow(kWho, [&]() -> Result<std::optional<std::string>> {
    TESSERA_ASSIGN_OR_RETURN(std::optional<EtcdKv> kv, impl_->Get(impl_->Key("scenario")));
    if (!kv) return std::optional<std::string>();
    return std::optional<std::string>(std::move(kv->value));
  });
}

Status EtcdStore::PutScenario(const std::string& scenario_json) {
  return NoThrow(kWho, [&]() -> Status {
    return impl_->WriteOnce({EtcdOp::Put(impl_->Key("scenario"), scenario_json),
                             EtcdOp::DeletePrefix(impl_->Key("service/"))});
  });
}

Result<std::vector<StoredService>> EtcdStore::ServiceUpdates() {
  return NoThrow(kWho, [&]() -> Result<std::vector<StoredService>> {
    const std::string prefix = impl_->Key("service/");
    TESSERA_ASSIGN_OR_RETURN(std::vector<EtcdKv> kvs, impl_->List(prefix, 0, false));
    std::vector<StoredService> out;
    for (EtcdKv& kv : kvs) out.push_back({kv.key.substr(prefix.size()), std::move(kv.value)});
    return out;
  });
}

Status EtcdStore::PutService(const StoredService& service) {
  return NoThrow(kWho, [&]() -> Status {
    return impl_->WriteOnce(
        {EtcdOp::Put(impl_->Key("service/" + service.name), service.service_json)});
  });
}

Result<int64_t> EtcdStore::AddPlan(const StoredPlan& plan) {
  return NoThrow(kWho, [&]() -> Result<int64_t> {
    TESSERA_ASSIGN_OR_RETURN(
        std::vector<int64_t> ids,
        impl_->WriteCounting({{impl_->Key("seq/plan"), 0}},
                             [&](const std::vector<int64_t>& next) -> Result<std::vector<EtcdOp>> {
                               const std::string id = IdKey(next[0]);
                               return std::vector<EtcdOp>{
                                   EtcdOp::Put(impl_->Key("plan/" + id), PlanRecord(plan).dump()),
                                   EtcdOp::Put(impl_->Key("plandep/" + id), plan.deployment_json)};
                             }));
    return ids[0];
  });
}

Result<std::optional<StoredPlan>> EtcdStore::Plan(int64_t id) {
  return NoThrow(kWho, [&]() -> Result<std::optional<StoredPlan>> {
    TESSERA_ASSIGN_OR_RETURN(std::optional<EtcdKv> kv, impl_->Get(impl_->Key("plan/" + IdKey(id))));
    if (!kv) return std::optional<StoredPlan>();
    TESSERA_ASSIGN_OR_RETURN(Json j, ParseRecord(*kv));
    StoredPlan plan = PlanFrom(id, j);
    TESSERA_ASSIGN_OR_RETURN(std::optional<EtcdKv> deployment,
                             impl_->Get(impl_->Key("plandep/" + IdKey(id))));
    if (deployment) plan.deployment_json = std::move(deployment->value);
    return std::optional<StoredPlan>(std::move(plan));
  });
}

Result<std::vector<StoredPlan>> EtcdStore::Plans(int limit) {
  return NoThrow(kWho, [&]() -> Result<std::vector<StoredPlan>> {
    std::vector<StoredPlan> out;
    if (limit <= 0) return out;
    const std::string prefix = impl_->Key("plan/");
    TESSERA_ASSIGN_OR_RETURN(std::vector<EtcdKv> kvs, impl_->List(prefix, limit, true));
    for (const EtcdKv& kv : kvs) {
      TESSERA_ASSIGN_OR_RETURN(Json j, ParseRecord(kv));
      out.push_back(PlanFrom(std::stoll(kv.key.substr(prefix.size())), j));
    }
    return out;
  });
}

Result<std::optional<int64_t>> EtcdStore::DeploymentPlan() {
  return NoThrow(kWho, [&]() -> Result<std::optional<int64_t>> {
    TESSERA_ASSIGN_OR_RETURN(std::optional<EtcdKv> kv, impl_->Get(impl_->Key("deployment")));
    if (!kv) return std::optional<int64_t>();
    return std::optional<int64_t>(std::stoll(kv->value));
  });
}

Status EtcdStore::SetDeployment(int64_t plan_id) {
  return NoThrow(kWho, [&]() -> Status {
    TESSERA_RETURN_IF_ERROR(impl_->RequirePlan(plan_id));
    return impl_
        ->WriteCounting({{impl_->Key("version"), 1}},
                        [&](const std::vector<int64_t>&) -> Result<std::vector<EtcdOp>> {
                          return std::vector<EtcdOp>{
                              EtcdOp::Put(impl_->Key("deployment"), std::to_string(plan_id))};
                        })
        .status();
  });
}

Result<int64_t> EtcdStore::AddTransition(const StoredTransition& transition) {
  return NoThrow(kWho, [&]() -> Result<int64_t> {
    std::set<std::string> step_ids;
    for (const StoredStep& step : transition.steps) {
      if (!step_ids.insert(step.step_id).second) {
        return Status::IoError("etcd: a transition with step '" + step.step_id + "' twice");
      }
    }
    if (transition.from_plan) TESSERA_RETURN_IF_ERROR(impl_->RequirePlan(*transition.from_plan));
    TESSERA_RETURN_IF_ERROR(impl_->RequirePlan(transition.to_plan));
    TESSERA_ASSIGN_OR_RETURN(
        std::vector<int64_t> next,
        impl_->WriteCounting(
            {{impl_->Key("seq/transition"), 0}, {impl_->Key("version"), 1}},
            [&](const std::vector<int64_t>& values) -> Result<std::vector<EtcdOp>> {
              StoredTransition t = transition;
              t.id = values[0];
              return std::vector<EtcdOp>{
                  EtcdOp::Put(impl_->Key("transition/" + IdKey(t.id)), TransitionRecord(t).dump())};
            }));
    return next[0];
  });
}

Result<std::optional<StoredTransition>> EtcdStore::Transition(int64_t id) {
  return NoThrow(
      kWho, [&]() -> Result<std::optional<StoredTransition>> { return impl_->ReadTransition(id); });
}

Result<std::vector<StoredTransition>> EtcdStore::Transitions(int limit) {
  return NoThrow(kWho, [&]() -> Result<std::vector<StoredTransition>> {
    std::vector<StoredTransition> out;
    if (limit <= 0) return out;
    TESSERA_ASSIGN_OR_RETURN(std::vector<EtcdKv> kvs,
                             impl_->List(impl_->Key("transition/"), limit, true));
    for (const EtcdKv& kv : kvs) {
      TESSERA_ASSIGN_OR_RETURN(Json j, ParseRecord(kv));
      StoredTransition t = TransitionFrom(j);
      t.steps.clear();
      out.push_back(std::move(t));
    }
    return out;
  });
}

Result<std::vector<StoredTransition>> EtcdStore::TransitionsIn(const std::string& state) {
  return NoThrow(kWho, [&]() -> Result<std::vector<StoredTransition>> {
    TESSERA_ASSIGN_OR_RETURN(std::vector<EtcdKv> kvs,
                             impl_->List(impl_->Key("transition/"), 0, false));
    std::vector<StoredTransition> out;
    for (const EtcdKv& kv : kvs) {
      TESSERA_ASSIGN_OR_RETURN(Json j, ParseRecord(kv));
      if (Text(j, "state") == state) out.push_back(TransitionFrom(j));
    }
    return out;
  });
}

Status EtcdStore::UpdateTransition(const StoredTransition& transition,
                                   std::optional<int64_t> deployment_plan) {
  return NoThrow(kWho, [&]() -> Status {
    TESSERA_ASSIGN_OR_RETURN(std::optional<StoredTransition> stored,
                             impl_->ReadTransition(transition.id));
    if (!stored) return Status::NotFound(fmt::format("etcd: no transition {}", transition.id));
    stored->state = transition.state;
    stored->phase = transition.phase;
    stored->error = transition.error;
    stored->updated_at = transition.updated_at;
    for (const StoredStep& step : transition.steps) {
      auto it = std::find_if(stored->steps.begin(), stored->steps.end(),
                             [&](const StoredStep& s) { return s.step_id == step.step_id; });
      if (it == stored->steps.end()) {
        return Status::NotFound(
            fmt::format("etcd: transition {} has no step '{}'", transition.id, step.step_id));
      }
      it->state = step.state;
      it->error = step.error;
    }
    if (deployment_plan) TESSERA_RETURN_IF_ERROR(impl_->RequirePlan(*deployment_plan));
    return impl_
        ->WriteCounting(
            {{impl_->Key("version"), 1}},
            [&](const std::vector<int64_t>&) -> Result<std::vector<EtcdOp>> {
              std::vector<EtcdOp> ops{EtcdOp::Put(impl_->Key("transition/" + IdKey(stored->id)),
                                                  TransitionRecord(*stored).dump())};
              if (deployment_plan) {
                ops.push_back(
                    EtcdOp::Put(impl_->Key("deployment"), std::to_string(*deployment_plan)));
              }
              return ops;
            })
        .status();
  });
}

Status EtcdStore::PutNode(const StoredNode& node) {
  return NoThrow(kWho, [&]() -> Status {
    return impl_->WriteOnce({EtcdOp::Put(
        impl_->Key("node/" + node.node),
        Json{{"status_json", node.status_json}, {"updated_at", node.updated_at}}.dump())});
  });
}

Result<std::vector<StoredNode>> EtcdStore::Nodes() {
  return NoThrow(kWho, [&]() -> Result<std::vector<StoredNode>> {
    const std::string prefix = impl_->Key("node/");
    TESSERA_ASSIGN_OR_RETURN(std::vector<EtcdKv> kvs, impl_->List(prefix, 0, false));
    std::vector<StoredNode> out;
    for (const EtcdKv& kv : kvs) {
      TESSERA_ASSIGN_OR_RETURN(Json j, ParseRecord(kv));
      out.push_back({kv.key.substr(prefix.size()), Text(j, "status_json"), Text(j, "updated_at")});
    }
    return out;
  });
}

}  // namespace tessera
