// EtcdClient (control/etcd_client.h).
#include "control/etcd_client.h"

#include <fmt/format.h>
#include <httplib.h>

#include <cmath>
#include <nlohmann/json.hpp>
#include <utility>

#include "util/base64.h"
#include "util/http_endpoint.h"

namespace tessera {
namespace {

using Json = nlohmann::json;

// proto3's JSON mapping writes 64-bit integers as strings and leaves out
// fields at their default (0, false, empty).
int64_t Int64(const Json& object, const char* field) {
  if (!object.is_object() || !object.contains(field)) return 0;
  const Json& v = object[field];
  if (v.is_number_integer()) return v.get<int64_t>();
  if (v.is_string()) {
    try {
      return std::stoll(v.get<std::string>());
    } catch (const std::exception&) {
      return 0;
    }
  }
  return 0;
}

Result<std::string> Bytes(const Json& object, const char* field) {
  if (!object.is_object() || !object.contains(field)) return std::string();
  const Json& v = object[field];
  if (!v.is_string()) return Status::IoError(fmt::format("etcd: field '{}' is not base64", field));
  std::string why;
  std::optional<std::string> decoded = DecodeBase64(v.get<std::string>(), &why);
  if (!decoded) return Status::IoError(fmt::format("etcd: field '{}': {}", field, why));
  return std::move(*decoded);
}

Json RangeJson(const EtcdRangeRequest& r) {
  Json j{{"key", EncodeBase64(r.key)}};
  if (!r.range_end.empty()) j["range_end"] = EncodeBase64(r.range_end);
  if (r.limit > 0) j["limit"] = std::to_string(r.limit);
  if (r.revision > 0) j["revision"] = std::to_string(r.revision);
  if (r.descend || r.by_create_revision) {
    j["sort_order"] = r.descend ? "DESCEND" : "ASCEND";
    j["sort_target"] = r.by_create_revision ? "CREATE" : "KEY";
  }
  return j;
}

Result<EtcdRange> ReadRange(const Json& j) {
  EtcdRange out;
  out.revision = j.contains("header") ? Int64(j["header"], "revision") : 0;
  if (!j.contains("kvs")) return out;
  if (!j["kvs"].is_array()) return Status::IoError("etcd: 'kvs' is not an array");
  for (const Json& kv : j["kvs"]) {
    EtcdKv e;
    TESSERA_ASSIGN_OR_RETURN(e.key, Bytes(kv, "key"));
    TESSERA_ASSIGN_OR_RETURN(e.value, Bytes(kv, "value"));
    e.create_revision = Int64(kv, "create_revision");
    e.mod_revision = Int64(kv, "mod_revision");
    e.lease = Int64(kv, "lease");
    out.kvs.push_back(std::move(e));
  }
  return out;
}

Json OpJson(const EtcdOp& op) {
  switch (op.kind) {
    case EtcdOp::Kind::kPut: {
      Json put{{"key", EncodeBase64(op.key)}, {"value", EncodeBase64(op.value)}};
      if (op.lease != 0) put["lease"] = std::to_string(op.lease);
      return Json{{"request_put", std::move(put)}};
    }
    case EtcdOp::Kind::kDeleteRange:
      return Json{{"request_delete_range",
                   {{"key", EncodeBase64(op.key)}, {"range_end", EncodeBase64(op.range_end)}}}};
    case EtcdOp::Kind::kRange:
      return Json{{"request_range", RangeJson(op.range)}};
  }
  return Json::object();
}

Json CompareJson(const EtcdCompare& c) {
  static constexpr const char* kResults[] = {"EQUAL", "NOT_EQUAL", "GREATER", "LESS"};
  Json j{{"key", EncodeBase64(c.key)}, {"result", kResults[static_cast<int>(c.result)]}};
  if (!c.range_end.empty()) j["range_end"] = EncodeBase64(c.range_end);
  switch (c.target) {
    case EtcdCompare::Target::kCreate:
      j["target"] = "CREATE";
      j["create_revision"] = std::to_string(c.revision);
      break;
    case EtcdCompare::Target::kMod:
      j["target"] = "MOD";
      j["mod_revision"] = std::to_string(c.revision);
      break;
    case EtcdCompare::Target::kValue:
      j["target"] = "VALUE";
      j["value"] = EncodeBase64(c.value);
      break;
  }
  return j;
}

Result<Json> ParseReply(const std::string& text) {
  Json j = Json::parse(text, nullptr, false);
  if (j.is_discarded() || !j.is_object()) {
    return Status::IoError("etcd: a reply that is not JSON: " + text.substr(0, 200));
  }
  return j;
}

}  // namespace

EtcdOp EtcdOp::Put(std::string key, std::string value, int64_t lease) {
  EtcdOp op;
  op.kind = Kind::kPut;
  op.key = std::move(key);
  op.value = std::move(value);
  op.lease = lease;
  return op;
}

EtcdOp EtcdOp::DeletePrefix(const std::string& prefix) {
  EtcdOp op;
  op.kind = Kind::kDeleteRange;
  op.key = prefix;
  op.range_end = EtcdClient::PrefixEnd(prefix);
  return op;
}

EtcdOp EtcdOp::Get(EtcdRangeRequest range) {
  EtcdOp op;
  op.kind = Kind::kRange;
  op.range = std::move(range);
  return op;
}

std::string EtcdClient::PrefixEnd(const std::string& prefix) {
  std::string end = prefix;
  while (!end.empty()) {
    if (static_cast<unsigned char>(end.back()) < 0xff) {
      end.back() = static_cast<char>(end.back() + 1);
      return end;
    }
    end.pop_back();
  }
  return std::string(1, '\0');  // every key
}

Result<std::unique_ptr<EtcdClient>> EtcdClient::Create(const std::vector<std::string>& endpoints,
                                                       double timeout_s) {
  if (endpoints.empty()) return Status::InvalidArgument("etcd: no endpoint");
  std::vector<Endpoint> parsed;
  const double whole = std::floor(timeout_s);
  const auto seconds = static_cast<time_t>(whole);
  const auto micros = static_cast<time_t>((timeout_s - whole) * 1e6);
  for (const std::string& url : endpoints) {
    TESSERA_ASSIGN_OR_RETURN(HttpEndpoint e, ParseHttpEndpoint(url, "etcd endpoint", 2379));
    auto client = std::make_unique<httplib::Client>(e.host, e.port);
    client->set_connection_timeout(seconds, micros);
    client->set_read_timeout(seconds, micros);
    client->set_write_timeout(seconds, micros);
    client->set_keep_alive(true);
    // A request is written in pieces: without this, Nagle's algorithm holds
    // the last one for the delayed ACK (40 ms a request on loopback).
    client->set_tcp_nodelay(true);
    std::string trimmed = url;
    while (trimmed.back() == '/') trimmed.pop_back();
    parsed.push_back({std::move(trimmed), std::move(client)});
  }
  return std::unique_ptr<EtcdClient>(new EtcdClient(std::move(parsed)));
}

EtcdClient::EtcdClient(std::vector<Endpoint> endpoints) : endpoints_(std::move(endpoints)) {}
EtcdClient::~EtcdClient() = default;

std::string EtcdClient::Endpoints() const {
  std::string out;
  for (const Endpoint& e : endpoints_) out += (out.empty() ? "" : ",") + e.url;
  return out;
}

Result<std::string> EtcdClient::Post(const std::string& path, const std::string& body) {
  std::lock_guard<std::mutex> lock(mu_);
  std::string failures;
  for (size_t tried = 0; tried < endpoints_.size(); ++tried) {
    Endpoint& e = endpoints_[current_];
    httplib::Result res = e.client->Post(path, body, "application/json");
    if (!res) {
      failures += fmt::format("{}{}: {}", failures.empty() ? "" : "; ", e.url,
                              httplib::to_string(res.error()));
      current_ = (current_ + 1) % endpoints_.size();
      continue;
    }
    if (res->status == 200) return std::move(res->body);
    // The gateway's error: {"error", "code", "message"}.
    const Json j = Json::parse(res->body, nullptr, false);
    std::string message = res->body.substr(0, 200);
    if (j.is_object() && j.contains("message") && j["message"].is_string()) {
      message = j["message"].get<std::string>();
    }
    // A member that lost its quorum answers "etcdserver: request timed out"
    // or "no leader": another member may have one.
    failures +=
        fmt::format("{}{}: HTTP {}: {}", failures.empty() ? "" : "; ", e.url, res->status, message);
    if (res->status < 500) break;
    current_ = (current_ + 1) % endpoints_.size();
  }
  return Status::IoError(fmt::format("etcd {}: {}", path, failures));
}

Result<EtcdRange> EtcdClient::Range(const EtcdRangeRequest& request) {
  TESSERA_ASSIGN_OR_RETURN(std::string text, Post("/v3/kv/range", RangeJson(request).dump()));
  TESSERA_ASSIGN_OR_RETURN(Json j, ParseReply(text));
  return ReadRange(j);
}

Result<EtcdTxnResult> EtcdClient::Txn(const std::vector<EtcdCompare>& compares,
                                      const std::vector<EtcdOp>& success,
                                      const std::vector<EtcdOp>& failure) {
  Json body{{"compare", Json::array()}, {"success", Json::array()}, {"failure", Json::array()}};
  for (const EtcdCompare& c : compares) body["compare"].push_back(CompareJson(c));
  for (const EtcdOp& op : success) body["success"].push_back(OpJson(op));
  for (const EtcdOp& op : failure) body["failure"].push_back(OpJson(op));
  TESSERA_ASSIGN_OR_RETURN(std::string text, Post("/v3/kv/txn", body.dump()));
  TESSERA_ASSIGN_OR_RETURN(Json j, ParseReply(text));
  EtcdTxnResult out;
  out.succeeded =
      j.contains("succeeded") && j["succeeded"].is_boolean() && j["succeeded"].get<bool>();
  out.revision = j.contains("header") ? Int64(j["header"], "revision") : 0;
  if (j.contains("responses") && j["responses"].is_array()) {
    for (const Json& r : j["responses"]) {
      if (!r.contains("response_range")) continue;
      TESSERA_ASSIGN_OR_RETURN(EtcdRange range, ReadRange(r["response_range"]));
      out.ranges.push_back(std::move(range));
    }
  }
  return out;
}

Result<int64_t> EtcdClient::LeaseGrant(int ttl_s) {
  TESSERA_ASSIGN_OR_RETURN(std::string text,
                           Post("/v3/lease/grant", Json{{"TTL", std::to_string(ttl_s)}}.dump()));
  TESSERA_ASSIGN_OR_RETURN(Json j, ParseReply(text));
  const int64_t id = Int64(j, "ID");
  if (id == 0) return Status::IoError("etcd: a lease grant without an ID: " + text.substr(0, 200));
  return id;
}

Result<int64_t> EtcdClient::LeaseKeepAlive(int64_t id) {
  // A stream on gRPC; the gateway answers one request with one
  // {"result": {...}} line.
  TESSERA_ASSIGN_OR_RETURN(std::string text,
                           Post("/v3/lease/keepalive", Json{{"ID", std::to_string(id)}}.dump()));
  const std::string line = text.substr(0, text.find('\n'));
  TESSERA_ASSIGN_OR_RETURN(Json j, ParseReply(line));
  if (j.contains("error")) {
    return Status::IoError("etcd /v3/lease/keepalive: " + j["error"].dump().substr(0, 200));
  }
  return j.contains("result") ? Int64(j["result"], "TTL") : 0;
}

Status EtcdClient::LeaseRevoke(int64_t id) {
  return Post("/v3/lease/revoke", Json{{"ID", std::to_string(id)}}.dump()).status();
}

}  // namespace tessera
