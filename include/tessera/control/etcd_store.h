// EtcdStore: the ControlStore (control_store.h) in an etcd v3 cluster, shared
// by several `tessera serve` replicas (--store etcd:URL[,URL...]), of which
// one leads and writes (docs/control-plane.md, "Replicas").
//
// Election (etcd's own recipe): each replica holds a lease of
// StoreOptions::lease_ttl_s seconds, renewed every third of it, and a key
// <prefix>/election/<lease> bound to it whose value names the replica (its
// advertised URL and name). The replica whose key has the lowest create
// revision leads. A leader that dies or pauses stops renewing; etcd deletes
// its key when the lease expires, and the next replica leads: a failover
// takes at most the TTL plus one renewal period. A replica whose lease
// expired campaigns again with a new lease, behind the others.
//
// Fencing: every write is one etcd transaction whose comparison holds only
// while this replica leads: its election key exists with the create
// revision it campaigned with, and no election key is older. A leader that
// was paused past its lease and wakes up is refused by etcd itself, whatever
// its own clock says: the write fails with IoError "not the leader".
//
// Every write also puts <prefix>/writer = "<name> <election key>": etcd's
// history says which replica, under which leadership, made each revision.
//
// Keys, under the prefix: version, writer, scenario, service/<name>, plan/<id>,
// plandep/<id> (a plan's deployment, apart so that listing plans does not
// read them), deployment, transition/<id> (with its steps), node/<name>,
// seq/plan and seq/transition (the last ids), election/<lease>. Ids are
// 12-digit zero-padded so that key order is id order.
//
// Durability is etcd's: a write acknowledged by a quorum survives any
// minority of members. Without a quorum etcd refuses reads and writes
// (IoError naming etcd's error) and nothing acknowledged is lost.
//
// Thread-safety: every method may be called from many threads; a thread of
// its own renews the lease.
#ifndef TESSERA_CONTROL_ETCD_STORE_H_
#define TESSERA_CONTROL_ETCD_STORE_H_

#include <memory>
#include <string>
#include <vector>

#include "tessera/control/control_store.h"

namespace tessera {

class EtcdStore final : public ControlStore {
 public:
  // Connects to `endpoints` (http://HOST:PORT each), creates the version
  // key when the prefix holds no store yet, grants the lease and
  // campaigns. InvalidArgument naming an endpoint or the advertise URL that
  // is not http://HOST:PORT, or a TTL outside 1-300 s; IoError when etcd
  // cannot be reached.
  static Result<std::unique_ptr<EtcdStore>> Open(const std::vector<std::string>& endpoints,
                                                 const StoreOptions& options);
  // Stops renewing and revokes the lease: another replica leads at once.
  ~EtcdStore() override;
  EtcdStore(const EtcdStore&) = delete;
  EtcdStore& operator=(const EtcdStore&) = delete;

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
  explicit EtcdStore(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace tessera

#endif  // TESSERA_CONTROL_ETCD_STORE_H_
