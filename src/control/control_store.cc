// OpenControlStore (tessera/control/control_store.h): a --store value to the
// store it names.
#include "tessera/control/control_store.h"

#include <string_view>

#include "tessera/control/etcd_store.h"
#include "tessera/control/sqlite_store.h"
#include "tessera/util/text_io.h"
#include "util/http_endpoint.h"

namespace tessera {

Status CheckStoreOptions(const StoreOptions& options) {
  if (options.lease_ttl_s < 1 || options.lease_ttl_s > 300) {
    return Status::InvalidArgument("lease TTL: " + std::to_string(options.lease_ttl_s) +
                                   " s is outside 1-300");
  }
  return ParseHttpEndpoint(options.advertise_url, "advertise URL", 80).status();
}

Result<std::unique_ptr<ControlStore>> OpenControlStore(const std::string& spec,
                                                       const StoreOptions& options) {
  constexpr std::string_view kSqlite = "sqlite:";
  constexpr std::string_view kEtcd = "etcd:";
  if (spec.rfind(kSqlite, 0) == 0 && spec.size() > kSqlite.size()) {
    Result<std::unique_ptr<SqliteStore>> store = SqliteStore::Open(spec.substr(kSqlite.size()));
    if (!store.ok()) return store.status();
    return std::unique_ptr<ControlStore>(std::move(*store));
  }
  if (spec.rfind(kEtcd, 0) == 0 && spec.size() > kEtcd.size()) {
    std::vector<std::string> endpoints;
    const std::string list = spec.substr(kEtcd.size());
    size_t at = 0;
    while (at <= list.size()) {
      const size_t comma = list.find(',', at);
      const std::string url = list.substr(at, comma == std::string::npos ? comma : comma - at);
      if (url.empty()) {
        return Status::InvalidArgument(QuoteForMessage(spec) +
                                       ": an empty etcd endpoint; give etcd:URL[,URL...]");
      }
      endpoints.push_back(url);
      if (comma == std::string::npos) break;
      at = comma + 1;
    }
    Result<std::unique_ptr<EtcdStore>> store = EtcdStore::Open(endpoints, options);
    if (!store.ok()) return store.status();
    return std::unique_ptr<ControlStore>(std::move(*store));
  }
  return Status::InvalidArgument(
      QuoteForMessage(spec) +
      ": expected sqlite:PATH (one file, e.g. sqlite:tessera.db) or etcd:URL[,URL...] "
      "(e.g. etcd:http://127.0.0.1:2379)");
}

}  // namespace tessera
