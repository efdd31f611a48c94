// The JSON of the control plane's API (docs/control-plane.md): strict
// readers of the request bodies and writers of the objects the API answers
// with (scenario, metrics, transition views, errors).
//
// Errors: the readers return InvalidArgument "<source>: <path>: <what>"
// (JsonReader's form); ErrorFromStatus turns such a Status into the API's
// error object, `field` being the JSON path.
//
// Thread-safety: pure functions.
#ifndef TESSERA_CONTROL_API_JSON_H_
#define TESSERA_CONTROL_API_JSON_H_

#include <cstdint>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <variant>

#include "tessera/control/control_store.h"
#include "tessera/deployment.h"
#include "tessera/scenario.h"
#include "tessera/status.h"
#include "workload/scenario_json.h"

namespace tessera {

// The source named in the readers' errors of request bodies: the message
// the API shows is what follows "body: ".
inline constexpr std::string_view kBodySource = "body";

// An API error: the HTTP status, the API's code, the message and the JSON
// path at fault (nullopt: none).
struct ApiError {
  int status = 500;
  std::string code = "internal";
  std::string message;
  std::optional<std::string> field;
};

ApiError BadRequest(std::string message);  // 400 bad_request: not JSON
ApiError NotFoundError(std::string message);
ApiError ConflictError(std::string message);
ApiError InternalError(std::string message);
// A Status mapped onto the API: InvalidArgument 400 (its field taken from a
// reader's "<kBodySource>: <path>: <what>" message), NotFound 404, IoError
// 503 (the store), Internal 500.
ApiError ErrorFromStatus(const Status& status);
// {"error": {"code", "message", "field"}}.
std::string FormatApiError(const ApiError& error);

// 415 unless a mutation's body (if any) is JSON: `content_type` is
// application/json, parameters and case aside.
std::optional<ApiError> CheckMediaType(std::string_view body, std::string_view content_type);

// A value, or the API error that explains why there is none.
template <typename T>
class ApiResult {
 public:
  ApiResult(T value) : v_(std::move(value)) {}               // NOLINT: implicit by design
  ApiResult(ApiError error) : v_(std::move(error)) {}        // NOLINT: implicit by design
  ApiResult(Status status) : v_(ErrorFromStatus(status)) {}  // NOLINT: REQUIRES !ok()
  bool ok() const { return v_.index() == 0; }
  T& operator*() { return std::get<0>(v_); }
  T* operator->() { return &std::get<0>(v_); }
  const ApiError& error() const { return std::get<1>(v_); }

 private:
  std::variant<T, ApiError> v_;
};

// Checks the structure (CheckJsonStructure) and parses `text`: 400
// bad_request when it is not one JSON value.
ApiResult<nlohmann::json> ParseJsonBody(std::string_view text);

// Scenario: {"name"?, "gpu"?, "pool"?, "services"}, validated as the YAML
// is (ranges of input_limits.h, catalog GPUs, canonical models, unique
// names, then ValidateScenario).
Result<Scenario> ScenarioFromJson(const nlohmann::json& j, std::string_view source);

struct ServicePatch {
  std::optional<double> rate_rps;
  std::optional<double> slo_ms;
  std::optional<bool> replan;
};
Result<ServicePatch> ServicePatchFromJson(const nlohmann::json& j);

struct PlanBody {
  std::optional<std::string> planner;
  std::optional<bool> incremental;
  std::map<std::string, double> rates;
  std::optional<int> max_extra_gpus;
  int repack_gpus = 0;
  bool consolidate = false;
  std::optional<double> time_limit_s;
};
Result<PlanBody> PlanBodyFromJson(const nlohmann::json& j);

struct TransitionRequest {
  int64_t to = 0;
  std::optional<int> spare_gpus;
  bool start = false;
};
Result<TransitionRequest> TransitionRequestFromJson(const nlohmann::json& j);

// A node's result for one phase of a transition, or a router's for one of
// its steps in a phase ("drain" or "ready", rollout.h).
struct PhaseResult {
  int64_t id = 0;
  int phase = 0;
  std::string step;  // routers only
  bool ok = false;
  std::string error;
};
struct ObservedRate {
  double rate_rps = 0;
  std::optional<double> slo_compliance;
  std::optional<double> p99_ms;
  // The requests the rate was counted from (a router's), which tells a
  // change from noise.
  std::optional<int64_t> requests;
};
struct NodeStatusReport {
  std::optional<PhaseResult> transition;
  std::optional<bool> converged;
  std::map<std::string, ObservedRate> observed;
};
// The whole body is checked (inventory included); what the control plane
// acts on is returned.
Result<NodeStatusReport> NodeStatusFromJson(const nlohmann::json& j, std::string_view source);

// POST /v1/routers/{name}/status: what a router measured ("observed", as a
// node's, with "p99_ms") and its result for one of its steps ("transition"
// with "step": "drain" or "ready").
struct RouterStatusReport {
  std::optional<PhaseResult> transition;
  std::map<std::string, ObservedRate> observed;
};
Result<RouterStatusReport> RouterStatusFromJson(const nlohmann::json& j, std::string_view source);

// The API's metrics object of a deployment: capacity is the validator's
// SLO-safe count (TransitionCapacity) for MIG plans, the planned capacity
// for MPS ones.
nlohmann::ordered_json MetricsJson(const Deployment& deployment);
// Each service's SLO-safe capacity, by name.
std::map<std::string, double> ServiceCapacities(const Deployment& deployment);

// The API's Transition (full: with "check" and "phases") or
// TransitionSummary, from the stored transition and check JSON;
// InvalidArgument when they do not parse.
Result<nlohmann::ordered_json> TransitionView(const StoredTransition& transition, bool full);

}  // namespace tessera

#endif  // TESSERA_CONTROL_API_JSON_H_
