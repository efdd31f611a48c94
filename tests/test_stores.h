// The stores every control-plane test runs against (control_store.h):
// "sqlite", a file in the test's directory, and "etcd", a key prefix of its
// own in one single-member etcd cluster started for the test process on
// first use (tests/etcd_cluster.h) and stopped when it exits.
#ifndef TESSERA_TESTS_TEST_STORES_H_
#define TESSERA_TESTS_TEST_STORES_H_

#include <gtest/gtest.h>

#include <filesystem>
#include <memory>
#include <string>

#include "tessera/control/control_store.h"

namespace tessera::testing {

// The parameter of a suite that runs on every store.
inline const auto kStoreKinds = ::testing::Values(std::string("sqlite"), std::string("etcd"));

// Why etcd cannot run here (scripts/k8s-bins.sh not run, or it would not
// start), "" when it runs; the tests of the etcd store skip with it.
std::string EtcdUnavailable();

// The etcd cluster's client URL (EtcdUnavailable() must be "").
std::string TestEtcdEndpoint();

// Opens a store of `kind`: for "sqlite" the file <dir>/<name>.db, for
// "etcd" the prefix /tessera-test/<name> (the same name opens the same
// state again) under `options` (a replica named after the test).
Result<std::unique_ptr<ControlStore>> OpenTestStore(const std::string& kind,
                                                    const std::string& name,
                                                    const std::filesystem::path& dir,
                                                    StoreOptions options = {});

// A name for a store unique to the running test (its suite, name and
// parameter), usable as a file name and a key prefix.
std::string TestStoreName();

}  // namespace tessera::testing

#endif  // TESSERA_TESTS_TEST_STORES_H_
