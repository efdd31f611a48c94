// EtcdClient: the part of etcd's v3 API the EtcdStore (etcd_store.h) uses,
// through etcd's JSON gateway (POST /v3/kv/range, /v3/kv/txn,
// /v3/lease/grant, /v3/lease/keepalive, /v3/lease/revoke; keys and values
// base64, 64-bit numbers as JSON strings) over plain HTTP with cpp-httplib.
// The gateway, not gRPC: one HTTP round trip per call like the gRPC client's
// and no generated code or gRPC runtime to build (docs/control-plane.md has
// the measurement).
//
// A call goes to the endpoint that answered last; when it cannot be reached
// (refused, reset, timed out) the next endpoint is tried, each once per
// call. Every range is linearizable (etcd's default): it reflects every
// write acknowledged before it was sent.
//
// Errors: IoError "etcd: ..." naming the endpoints and what failed (no
// endpoint reachable, etcd's own error such as "etcdserver: request timed
// out" without quorum, a reply that is not the gateway's JSON).
//
// Thread-safety: calls may come from many threads; they are serialised on
// an internal mutex (one connection per endpoint).
#ifndef TESSERA_CONTROL_ETCD_CLIENT_H_
#define TESSERA_CONTROL_ETCD_CLIENT_H_

#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "tessera/status.h"

namespace httplib {
class Client;
}

namespace tessera {

struct EtcdKv {
  std::string key;
  std::string value;
  int64_t create_revision = 0;
  int64_t mod_revision = 0;
  int64_t lease = 0;
};

struct EtcdRange {
  int64_t revision = 0;  // the store's revision when it was read
  std::vector<EtcdKv> kvs;
};

// A range request: `key` alone, or [key, range_end) (PrefixEnd(key) for
// every key under a prefix).
struct EtcdRangeRequest {
  std::string key;
  std::string range_end;
  int64_t limit = 0;  // 0: no limit
  bool descend = false;
  bool by_create_revision = false;  // sort by create revision, else by key
  int64_t revision = 0;             // read the store as it was then; 0: now
};

// One comparison of a transaction: the key's create or mod revision, or its
// value, against `revision` or `value`. With a range_end, every key of
// [key, range_end) must pass (an empty range compares as one missing key:
// revisions 0).
struct EtcdCompare {
  enum class Target { kCreate, kMod, kValue };
  enum class Result { kEqual, kNotEqual, kGreater, kLess };
  std::string key;
  std::string range_end;
  Target target = Target::kCreate;
  Result result = Result::kEqual;
  int64_t revision = 0;
  std::string value;
};

// One operation of a transaction.
struct EtcdOp {
  enum class Kind { kPut, kDeleteRange, kRange };
  Kind kind = Kind::kPut;
  std::string key;
  std::string value;       // kPut
  int64_t lease = 0;       // kPut: 0 for none
  std::string range_end;   // kDeleteRange
  EtcdRangeRequest range;  // kRange

  static EtcdOp Put(std::string key, std::string value, int64_t lease = 0);
  static EtcdOp DeletePrefix(const std::string& prefix);
  static EtcdOp Get(EtcdRangeRequest range);
};

struct EtcdTxnResult {
  bool succeeded = false;
  int64_t revision = 0;           // the store's revision after it
  std::vector<EtcdRange> ranges;  // the branch's kRange answers, in order
};

class EtcdClient {
 public:
  // InvalidArgument naming the URL for an endpoint that is not
  // http://HOST:PORT.
  static Result<std::unique_ptr<EtcdClient>> Create(const std::vector<std::string>& endpoints,
                                                    double timeout_s);
  ~EtcdClient();
  EtcdClient(const EtcdClient&) = delete;
  EtcdClient& operator=(const EtcdClient&) = delete;

  Result<EtcdRange> Range(const EtcdRangeRequest& request);
  Result<EtcdTxnResult> Txn(const std::vector<EtcdCompare>& compares,
                            const std::vector<EtcdOp>& success, const std::vector<EtcdOp>& failure);
  // A new lease of `ttl_s` seconds: its ID.
  Result<int64_t> LeaseGrant(int ttl_s);
  // Renews the lease: its TTL now, 0 when it has expired or was revoked.
  Result<int64_t> LeaseKeepAlive(int64_t id);
  Status LeaseRevoke(int64_t id);

  // The end of the range of every key starting with `prefix`.
  static std::string PrefixEnd(const std::string& prefix);
  // "http://a:2379,http://b:2379".
  std::string Endpoints() const;

 private:
  struct Endpoint {
    std::string url;
    std::unique_ptr<httplib::Client> client;
  };
  explicit EtcdClient(std::vector<Endpoint> endpoints);
  // POSTs `body` to `path`: the reply's JSON text.
  Result<std::string> Post(const std::string& path, const std::string& body);

  std::mutex mu_;
  std::vector<Endpoint> endpoints_;
  size_t current_ = 0;
};

}  // namespace tessera

#endif  // TESSERA_CONTROL_ETCD_CLIENT_H_
