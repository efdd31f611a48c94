// Fuzzes the control plane's API (ControlPlane::Handle) with whole requests:
// the input's first line is "METHOD PATH[?QUERY]", the rest the body. One
// plane on one store in a temporary directory answers every input, so state
// built by one request (a scenario, plans, transitions) meets the next. Any
// answer is fine; a crash, a hang, a sanitizer report or a 500 (a bug, by
// Handle's contract) is not.
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <memory>
#include <string>
#include <string_view>

#include "../tests/api_request_text.h"
#include "../tests/tiny_problem.h"
#include "fuzz_input.h"
#include "tessera/control/control_plane.h"
#include "tessera/control/sqlite_store.h"

namespace {

tessera::ControlPlane& Plane() {
  static const std::unique_ptr<tessera::ControlPlane> plane = [] {
    const std::filesystem::path dir = std::filesystem::temp_directory_path() /
                                      ("tessera-fuzz-control-" + std::to_string(::getpid()));
    std::filesystem::remove_all(dir);
    std::filesystem::create_directories(dir);
    auto store = tessera::SqliteStore::Open((dir / "api.db").string());
    if (!store.ok()) std::abort();
    tessera::ControlOptions options;
    options.wall_time = [] { return std::string("2024-01-01T00:00:00Z"); };
    options.routers = {"edge"};
    options.inputs.profile_table =
        std::make_shared<const tessera::ProfileTable>(tessera::testing::TinyTable());
    options.inputs.capacity_rule = "bare";
    options.inputs.router = "weighted";
    auto opened = tessera::ControlPlane::Open(std::move(*store), options);
    if (!opened.ok()) std::abort();
    return std::move(*opened);
  }();
  return *plane;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const tessera::ApiResponse response =
      Plane().Handle(tessera::testing::ParseRequestText(tessera::fuzz::Text(data, size)));
  if (response.status == 500) std::abort();
  return 0;
}
