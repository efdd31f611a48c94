#include "test_stores.h"

#include <unistd.h>

#include <cctype>
#include <filesystem>
#include <system_error>

#include "etcd_cluster.h"
#include "tessera/control/etcd_store.h"
#include "tessera/control/sqlite_store.h"

namespace tessera::testing {
namespace {

struct TestEtcd {
  std::filesystem::path dir;  // the cluster's data, removed at exit
  std::unique_ptr<EtcdTestCluster> cluster;
  std::string unavailable;
};

TestEtcd& Etcd() {
  static TestEtcd* etcd = [] {
    auto* e = new TestEtcd;
    e->dir = std::filesystem::path(::testing::TempDir()) /
             ("tessera-etcd-" + std::to_string(::getpid()));
    std::filesystem::remove_all(e->dir);
    Result<std::unique_ptr<EtcdTestCluster>> cluster =
        EtcdTestCluster::Start(e->dir, KubeBinDir(), 1);
    if (cluster.ok()) {
      e->cluster = std::move(*cluster);
    } else {
      e->unavailable = cluster.status().message();
    }
    // Stopped at exit, before the process's static objects are gone, and
    // its data removed (every test process that opens an etcd store starts
    // one: kept, they fill the disk over a few runs).
    std::atexit([] {
      TestEtcd& self = Etcd();
      self.cluster.reset();
      std::error_code ignored;
      std::filesystem::remove_all(self.dir, ignored);
    });
    return e;
  }();
  return *etcd;
}

}  // namespace

std::string EtcdUnavailable() { return Etcd().unavailable; }

std::string TestEtcdEndpoint() { return Etcd().cluster->endpoint(0); }

std::string TestStoreName() {
  const ::testing::TestInfo* info = ::testing::UnitTest::GetInstance()->current_test_info();
  std::string name = std::string(info->test_suite_name()) + "-" + info->name();
  for (char& c : name) {
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '-') c = '-';
  }
  return name;
}

Result<std::unique_ptr<ControlStore>> OpenTestStore(const std::string& kind,
                                                    const std::string& name,
                                                    const std::filesystem::path& dir,
                                                    StoreOptions options) {
  if (kind == "sqlite") {
    Result<std::unique_ptr<SqliteStore>> store = SqliteStore::Open((dir / (name + ".db")).string());
    if (!store.ok()) return store.status();
    return std::unique_ptr<ControlStore>(std::move(*store));
  }
  if (!EtcdUnavailable().empty()) return Status::NotFound("etcd: " + EtcdUnavailable());
  if (options.advertise_url.empty()) options.advertise_url = "http://127.0.0.1:1";
  if (options.name.empty()) options.name = name;
  options.prefix = "/tessera-test/" + name;
  Result<std::unique_ptr<EtcdStore>> store = EtcdStore::Open({TestEtcdEndpoint()}, options);
  if (!store.ok()) return store.status();
  return std::unique_ptr<ControlStore>(std::move(*store));
}

}  // namespace tessera::testing
