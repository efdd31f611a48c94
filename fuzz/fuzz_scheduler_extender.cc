// Fuzzes the scheduler extender's routes (src/control/extender_routes.cc)
// with whole requests: the input's first line is "METHOD PATH", the rest the
// body (ExtenderArgs or ExtenderBindingArgs JSON). One extender over three
// nodes of 8 A100-80GB answers every input, so reservations and bindings made
// by one input meet the next. Any answer is fine; a crash, a hang, a
// sanitizer report, a 500, or a state that breaks its invariants is not.
#include <cstdlib>
#include <memory>
#include <string>

#include "../tests/api_request_text.h"
#include "control/extender_routes.h"
#include "fuzz_input.h"
#include "tessera/k8s/scheduler_extender.h"

namespace {

// Binds always succeed, and pods are read from nowhere.
class FuzzApi : public tessera::KubeApi {
 public:
  tessera::Result<nlohmann::json> GetPod(const std::string&, const std::string&) override {
    return tessera::Status::NotFound("no API server while fuzzing");
  }
  tessera::Status Bind(const tessera::PodPlacement&) override { return tessera::Status::Ok(); }
};

tessera::SchedulerExtender& Extender() {
  static FuzzApi api;
  static const std::unique_ptr<tessera::SchedulerExtender> extender = [] {
    auto created = tessera::SchedulerExtender::Create(tessera::ExtenderOptions{}, api);
    if (!created.ok()) std::abort();
    (*created)->SyncNodes(
        {{"n1", 8, 64000, 262144}, {"n2", 8, 64000, 262144}, {"n3", 2, 8000, 65536}});
    (*created)->MarkSynced();
    return std::move(*created);
  }();
  return *extender;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const tessera::ApiRequest request =
      tessera::testing::ParseRequestText(tessera::fuzz::Text(data, size));
  const std::string path = request.path;
  const std::string route =
      path.starts_with("/scheduler/nodes/") && path.ends_with("/plan") && path.size() > 22
          ? "/scheduler/nodes/{node}/plan"
          : path;
  if (!tessera::IsSchedulerRoute(route)) return 0;
  const tessera::ApiResponse response = tessera::HandleSchedulerRoute(&Extender(), route, request);
  if (response.status == 500 || !Extender().CheckInvariants().ok()) std::abort();
  return 0;
}
