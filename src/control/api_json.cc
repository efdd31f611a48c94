#include "control/api_json.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cctype>
#include <set>

#include "control/rollout.h"
#include "tessera/gpu_catalog.h"
#include "tessera/profile_table.h"
#include "tessera/transition.h"
#include "tessera/transition/transition_format.h"
#include "tessera/util/input_limits.h"
#include "tessera/util/text_io.h"
#include "util/json_numbers.h"
#include "util/json_reader.h"
#include "util/json_structure.h"

namespace tessera {
namespace {

using Json = nlohmann::json;
using OJson = nlohmann::ordered_json;

// A planner's time limit, as the CLI's --time-limit: a millisecond to a day.
constexpr InputRange kPlanTimeLimitS{0.001, 86'400};
// An observed SLO compliance: a ratio.
constexpr InputRange kComplianceRatio{0, 1};
// A transition's or plan's id.
constexpr int kMinId = 1;

ApiError Make(int status, std::string code, std::string message) {
  return ApiError{status, std::move(code), std::move(message), std::nullopt};
}

Result<PoolEntry> PoolEntryFromJson(const JsonReader& r, const Json& j, const std::string& path) {
  static constexpr std::array<std::string_view, 2> kRequired = {"gpu", "price_per_hour"};
  static constexpr std::array<std::string_view, 1> kOptional = {"max_count"};
  TESSERA_RETURN_IF_ERROR(r.Keys(j, path, kRequired, kOptional));
  PoolEntry entry;
  TESSERA_ASSIGN_OR_RETURN(std::string gpu, r.String(j, path, "gpu", true));
  Result<const GpuModel*> model = FindGpu(gpu);
  if (!model.ok()) return r.Error(JoinJsonPath(path, "gpu"), model.status().message());
  entry.gpu = (*model)->name;
  TESSERA_ASSIGN_OR_RETURN(entry.price_per_hour,
                           r.In(j, path, "price_per_hour", limits::kPricePerHour));
  if (j.contains("max_count")) {
    TESSERA_ASSIGN_OR_RETURN(entry.max_count, r.IntIn(j, path, "max_count", limits::kMaxCount));
  }
  return entry;
}

Result<Service> ServiceFromJson(const JsonReader& r, const Json& j, const std::string& path) {
  static constexpr std::array<std::string_view, 4> kKeys = {"name", "model", "rate_rps", "slo_ms"};
  TESSERA_RETURN_IF_ERROR(r.Keys(j, path, kKeys));
  Service s;
  TESSERA_ASSIGN_OR_RETURN(s.name, r.String(j, path, "name", true));
  TESSERA_ASSIGN_OR_RETURN(std::string model, r.String(j, path, "model", true));
  s.model = CanonicalModelName(model);
  TESSERA_ASSIGN_OR_RETURN(s.rate_rps, r.In(j, path, "rate_rps", limits::kRateRps));
  TESSERA_ASSIGN_OR_RETURN(s.slo_ms, r.In(j, path, "slo_ms", limits::kSloMs));
  return s;
}

std::string Indexed(std::string_view key, size_t i) { return fmt::format("{}[{}]", key, i); }

Status CheckInventory(const JsonReader& r, const Json& j) {
  static constexpr std::array<std::string_view, 3> kRequired = {"gpu", "profile", "start"};
  static constexpr std::array<std::string_view, 2> kOptional = {"service", "ready"};
  TESSERA_RETURN_IF_ERROR(r.Array(j, "", "inventory"));
  for (size_t i = 0; i < j["inventory"].size(); ++i) {
    const std::string path = Indexed("inventory", i);
    const Json& e = j["inventory"][i];
    TESSERA_RETURN_IF_ERROR(r.Keys(e, path, kRequired, kOptional));
    TESSERA_RETURN_IF_ERROR(r.IntIn(e, path, "gpu", limits::kClusterGpuIndex).status());
    TESSERA_RETURN_IF_ERROR(r.String(e, path, "profile", true).status());
    TESSERA_RETURN_IF_ERROR(r.Int(e, path, "start", 0).status());
    if (e.contains("service")) TESSERA_RETURN_IF_ERROR(r.String(e, path, "service", true).status());
    if (e.contains("ready")) TESSERA_RETURN_IF_ERROR(r.Bool(e, path, "ready").status());
  }
  return Status::Ok();
}

// A node's phase result, or with `router` a router's step result (its
// "step" required: "drain" or "ready").
Result<PhaseResult> PhaseResultFromJson(const JsonReader& r, const Json& j, bool router) {
  static constexpr std::array<std::string_view, 3> kNode = {"id", "phase", "ok"};
  static constexpr std::array<std::string_view, 4> kRouter = {"id", "phase", "step", "ok"};
  static constexpr std::array<std::string_view, 1> kOptional = {"error"};
  const std::string path = "transition";
  if (router) {
    TESSERA_RETURN_IF_ERROR(r.Keys(j, path, kRouter, kOptional));
  } else {
    TESSERA_RETURN_IF_ERROR(r.Keys(j, path, kNode, kOptional));
  }
  PhaseResult result;
  TESSERA_ASSIGN_OR_RETURN(result.id, r.Int(j, path, "id", kMinId));
  TESSERA_ASSIGN_OR_RETURN(result.phase, r.Int(j, path, "phase", 1));
  if (router) {
    TESSERA_ASSIGN_OR_RETURN(result.step, r.String(j, path, "step", false));
    if (result.step != "drain" && result.step != "ready") {
      return r.Error(JoinJsonPath(path, "step"),
                     "expected \"drain\" or \"ready\", got " + QuoteForMessage(result.step));
    }
  }
  TESSERA_ASSIGN_OR_RETURN(result.ok, r.Bool(j, path, "ok"));
  if (j.contains("error")) {
    TESSERA_ASSIGN_OR_RETURN(result.error, r.String(j, path, "error", false));
  }
  return result;
}

// A status report's "observed": per service, "rate_rps" (0 allowed: a quiet
// service), "slo_compliance" and "p99_ms" optional.
Result<std::map<std::string, ObservedRate>> ObservedFromJson(const JsonReader& r,
                                                             const Json& observed) {
  static constexpr std::array<std::string_view, 1> kRequired = {"rate_rps"};
  static constexpr std::array<std::string_view, 3> kMaybe = {"slo_compliance", "p99_ms",
                                                             "requests"};
  if (!observed.is_object()) {
    return r.Error("observed", "expected an object, got " + DescribeJson(observed));
  }
  std::map<std::string, ObservedRate> out;
  for (const auto& [name, value] : observed.items()) {
    const std::string path = JoinJsonPath("observed", name);
    TESSERA_RETURN_IF_ERROR(r.Keys(value, path, kRequired, kMaybe));
    ObservedRate rate;
    TESSERA_ASSIGN_OR_RETURN(rate.rate_rps, r.Number(value, path, "rate_rps"));
    if (!limits::kRateRps.Contains(rate.rate_rps) && rate.rate_rps != 0) {
      return r.Error(JoinJsonPath(path, "rate_rps"), OutOfRange(limits::kRateRps, rate.rate_rps));
    }
    if (value.contains("slo_compliance")) {
      TESSERA_ASSIGN_OR_RETURN(rate.slo_compliance,
                               r.In(value, path, "slo_compliance", kComplianceRatio));
    }
    if (value.contains("p99_ms")) {
      TESSERA_ASSIGN_OR_RETURN(rate.p99_ms, r.In(value, path, "p99_ms", limits::kLatencyMs));
    }
    if (value.contains("requests")) {
      TESSERA_ASSIGN_OR_RETURN(rate.requests, r.Int(value, path, "requests", 0));
    }
    out[name] = rate;
  }
  return out;
}

}  // namespace

ApiError BadRequest(std::string message) { return Make(400, "bad_request", std::move(message)); }
ApiError NotFoundError(std::string message) { return Make(404, "not_found", std::move(message)); }
ApiError ConflictError(std::string message) { return Make(409, "conflict", std::move(message)); }
ApiError InternalError(std::string message) { return Make(500, "internal", std::move(message)); }

ApiError ErrorFromStatus(const Status& status) {
  switch (status.code()) {
    case StatusCode::kInvalidArgument: {
      ApiError error = Make(400, "invalid_argument", status.message());
      const std::string prefix = fmt::format("{}: ", kBodySource);
      if (status.message().rfind(prefix, 0) != 0) return error;
      error.message = status.message().substr(prefix.size());
      const size_t colon = error.message.find(": ");
      const std::string path = error.message.substr(0, colon);
      if (colon != std::string::npos && path != "(root)") error.field = path;
      return error;
    }
    case StatusCode::kNotFound:
      return NotFoundError(status.message());
    case StatusCode::kIoError:
      return Make(503, "unavailable", status.message());
    default:
      return InternalError(status.message());
  }
}

std::string FormatApiError(const ApiError& error) {
  OJson e;
  e["code"] = error.code;
  e["message"] = error.message;
  e["field"] = error.field ? OJson(*error.field) : OJson(nullptr);
  OJson body;
  body["error"] = std::move(e);
  return body.dump(-1, ' ', false, OJson::error_handler_t::replace);
}

ApiResult<Json> ParseJsonBody(std::string_view text) {
  const std::string problem = CheckJsonStructure(text);
  if (!problem.empty()) return BadRequest("body: " + problem);
  Json j = Json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded()) return BadRequest("body: invalid JSON");
  return j;
}

Result<Scenario> ScenarioFromJson(const Json& j, std::string_view source) {
  static constexpr std::array<std::string_view, 1> kRequired = {"services"};
  static constexpr std::array<std::string_view, 3> kOptional = {"name", "gpu", "pool"};
  const JsonReader r(source);
  TESSERA_RETURN_IF_ERROR(r.Keys(j, "", kRequired, kOptional));
  Scenario scenario;
  if (j.contains("name")) {
    TESSERA_ASSIGN_OR_RETURN(scenario.name, r.String(j, "", "name", false));
  }
  if (j.contains("gpu") && j.contains("pool")) {
    return r.Error("pool", "give either gpu (one model) or pool (several, priced), not both");
  }
  if (j.contains("gpu")) {
    TESSERA_ASSIGN_OR_RETURN(std::string gpu, r.String(j, "", "gpu", true));
    Result<const GpuModel*> model = FindGpu(gpu);
    if (!model.ok()) return r.Error("gpu", model.status().message());
    scenario.gpu = (*model)->name;
  }
  if (j.contains("pool")) {
    TESSERA_RETURN_IF_ERROR(r.Array(j, "", "pool"));
    if (j["pool"].empty()) return r.Error("pool", "expected a non-empty array");
    std::set<std::string> seen;
    for (size_t i = 0; i < j["pool"].size(); ++i) {
      const std::string path = Indexed("pool", i);
      TESSERA_ASSIGN_OR_RETURN(PoolEntry entry, PoolEntryFromJson(r, j["pool"][i], path));
      if (!seen.insert(entry.gpu).second) {
        return r.Error(path + ".gpu", entry.gpu + " is listed twice");
      }
      scenario.pool.push_back(std::move(entry));
    }
  }
  TESSERA_RETURN_IF_ERROR(r.Array(j, "", "services"));
  const Json& services = j["services"];
  if (services.empty()) return r.Error("services", "expected a non-empty array");
  if (!limits::kServices.Contains(static_cast<double>(services.size()))) {
    return r.Error("services", OutOfRange(limits::kServices, static_cast<double>(services.size())));
  }
  std::set<std::string> names;
  for (size_t i = 0; i < services.size(); ++i) {
    const std::string path = Indexed("services", i);
    TESSERA_ASSIGN_OR_RETURN(Service s, ServiceFromJson(r, services[i], path));
    if (!names.insert(s.name).second) return r.Error(path + ".name", "duplicate service name");
    scenario.services.push_back(std::move(s));
  }
  scenario.source = std::string(source);
  Status valid = ValidateScenario(scenario);
  if (!valid.ok()) return r.Error("", valid.message());
  return scenario;
}

Result<ServicePatch> ServicePatchFromJson(const Json& j) {
  static constexpr std::array<std::string_view, 3> kOptional = {"rate_rps", "slo_ms", "replan"};
  const JsonReader r(kBodySource);
  TESSERA_RETURN_IF_ERROR(r.Keys(j, "", {}, kOptional));
  ServicePatch patch;
  if (j.contains("rate_rps")) {
    TESSERA_ASSIGN_OR_RETURN(patch.rate_rps, r.In(j, "", "rate_rps", limits::kRateRps));
  }
  if (j.contains("slo_ms")) {
    TESSERA_ASSIGN_OR_RETURN(patch.slo_ms, r.In(j, "", "slo_ms", limits::kSloMs));
  }
  if (j.contains("replan")) {
    TESSERA_ASSIGN_OR_RETURN(patch.replan, r.Bool(j, "", "replan"));
  }
  if (!patch.rate_rps && !patch.slo_ms) {
    return r.Error("", "give at least one of rate_rps, slo_ms");
  }
  return patch;
}

Result<PlanBody> PlanBodyFromJson(const Json& j) {
  static constexpr std::array<std::string_view, 7> kOptional = {
      "planner",     "incremental", "rates",       "max_extra_gpus",
      "repack_gpus", "consolidate", "time_limit_s"};
  const JsonReader r(kBodySource);
  TESSERA_RETURN_IF_ERROR(r.Keys(j, "", {}, kOptional));
  PlanBody request;
  if (j.contains("planner")) {
    TESSERA_ASSIGN_OR_RETURN(request.planner, r.String(j, "", "planner", true));
  }
  if (j.contains("incremental")) {
    TESSERA_ASSIGN_OR_RETURN(request.incremental, r.Bool(j, "", "incremental"));
  }
  if (j.contains("rates")) {
    const Json& rates = j["rates"];
    if (!rates.is_object())
      return r.Error("rates", "expected an object, got " + DescribeJson(rates));
    for (const auto& [name, value] : rates.items()) {
      TESSERA_ASSIGN_OR_RETURN(request.rates[name], r.In(rates, "rates", name, limits::kRateRps));
    }
  }
  if (j.contains("max_extra_gpus")) {
    TESSERA_ASSIGN_OR_RETURN(request.max_extra_gpus,
                             r.IntIn(j, "", "max_extra_gpus", limits::kMaxExtraGpus));
  }
  if (j.contains("repack_gpus")) {
    TESSERA_ASSIGN_OR_RETURN(request.repack_gpus,
                             r.IntIn(j, "", "repack_gpus", limits::kRepackGpus));
  }
  if (j.contains("consolidate")) {
    TESSERA_ASSIGN_OR_RETURN(request.consolidate, r.Bool(j, "", "consolidate"));
  }
  if (j.contains("time_limit_s")) {
    TESSERA_ASSIGN_OR_RETURN(request.time_limit_s, r.In(j, "", "time_limit_s", kPlanTimeLimitS));
  }
  return request;
}

Result<TransitionRequest> TransitionRequestFromJson(const Json& j) {
  static constexpr std::array<std::string_view, 1> kRequired = {"to"};
  static constexpr std::array<std::string_view, 2> kOptional = {"spare_gpus", "start"};
  const JsonReader r(kBodySource);
  TESSERA_RETURN_IF_ERROR(r.Keys(j, "", kRequired, kOptional));
  TransitionRequest request;
  TESSERA_ASSIGN_OR_RETURN(request.to, r.Int(j, "", "to", kMinId));
  if (j.contains("spare_gpus")) {
    TESSERA_ASSIGN_OR_RETURN(request.spare_gpus, r.IntIn(j, "", "spare_gpus", limits::kSpareGpus));
  }
  if (j.contains("start")) {
    TESSERA_ASSIGN_OR_RETURN(request.start, r.Bool(j, "", "start"));
  }
  return request;
}

Result<NodeStatusReport> NodeStatusFromJson(const Json& j, std::string_view source) {
  static constexpr std::array<std::string_view, 4> kOptional = {"transition", "converged",
                                                                "observed", "inventory"};
  const JsonReader r(source);
  TESSERA_RETURN_IF_ERROR(r.Keys(j, "", {}, kOptional));
  NodeStatusReport report;
  if (j.contains("transition")) {
    TESSERA_ASSIGN_OR_RETURN(report.transition,
                             PhaseResultFromJson(r, j["transition"], /*router=*/false));
  }
  if (j.contains("converged")) {
    TESSERA_ASSIGN_OR_RETURN(report.converged, r.Bool(j, "", "converged"));
  }
  if (j.contains("observed")) {
    TESSERA_ASSIGN_OR_RETURN(report.observed, ObservedFromJson(r, j["observed"]));
  }
  if (j.contains("inventory")) TESSERA_RETURN_IF_ERROR(CheckInventory(r, j));
  return report;
}

Result<RouterStatusReport> RouterStatusFromJson(const Json& j, std::string_view source) {
  static constexpr std::array<std::string_view, 2> kOptional = {"transition", "observed"};
  const JsonReader r(source);
  TESSERA_RETURN_IF_ERROR(r.Keys(j, "", {}, kOptional));
  RouterStatusReport report;
  if (j.contains("transition")) {
    TESSERA_ASSIGN_OR_RETURN(report.transition,
                             PhaseResultFromJson(r, j["transition"], /*router=*/true));
  }
  if (j.contains("observed")) {
    TESSERA_ASSIGN_OR_RETURN(report.observed, ObservedFromJson(r, j["observed"]));
  }
  return report;
}

std::map<std::string, double> ServiceCapacities(const Deployment& deployment) {
  std::map<std::string, double> capacity;
  if (!UsesMig(deployment.sharing)) {
    for (const ServiceOutcome& s : deployment.services) capacity[s.name] = s.capacity_rps;
    return capacity;
  }
  const TransitionCapacity counted(deployment, deployment);
  for (const ServiceOutcome& s : deployment.services) capacity[s.name] = 0;
  for (const GpuAssignment& gpu : deployment.gpus) {
    for (const Instance& instance : gpu.instances())
      capacity[instance.service] += counted.Of(instance);
  }
  return capacity;
}

OJson MetricsJson(const Deployment& deployment) {
  const std::map<std::string, double> capacity = ServiceCapacities(deployment);
  std::map<std::string, int> instances;
  int total = 0;
  for (const GpuAssignment& gpu : deployment.gpus) {
    for (const Instance& instance : gpu.instances()) ++instances[instance.service];
    for (const MpsProcess& process : gpu.processes()) ++instances[process.service];
    total += static_cast<int>(gpu.instances().size() + gpu.processes().size());
  }
  OJson j;
  j["gpus"] = deployment.metrics.gpus;
  j["instances"] = total;
  j["cost_per_hour"] =
      deployment.pool.empty() ? OJson(nullptr) : JsonMeasurement(deployment.metrics.cost_per_hour);
  OJson services = OJson::array();
  for (const ServiceOutcome& s : deployment.services) {
    const double cap = capacity.at(s.name);
    OJson e;
    e["name"] = s.name;
    e["model"] = s.model;
    e["rate_rps"] = JsonNumber(s.rate_rps);
    e["slo_ms"] = JsonNumber(s.slo_ms);
    e["capacity_rps"] = JsonMeasurement(cap);
    e["headroom_ratio"] = JsonMeasurement(s.rate_rps > 0 ? cap / s.rate_rps - 1 : 0);
    e["instances"] = instances[s.name];
    services.push_back(std::move(e));
  }
  j["services"] = std::move(services);
  return j;
}

Result<OJson> TransitionView(const StoredTransition& t, bool full) {
  TESSERA_ASSIGN_OR_RETURN(Transition parsed, ParseTransitionJson(t.transition_json, "transition"));
  OJson j;
  j["id"] = t.id;
  j["from"] = t.from_plan ? OJson(*t.from_plan) : OJson(nullptr);
  j["to"] = t.to_plan;
  j["state"] = t.state;
  j["phase"] = t.phase;
  j["error"] = t.error.empty() ? OJson(nullptr) : OJson(t.error);
  j["created_at"] = t.created_at;
  j["updated_at"] = t.updated_at;
  OJson summary;
  summary["steps"] = parsed.summary.steps;
  summary["phases"] = parsed.summary.phases;
  summary["gpus_touched"] = parsed.summary.gpus_touched;
  summary["peak_gpus"] = parsed.summary.peak_gpus;
  summary["min_capacity_ratio"] = JsonMeasurement(parsed.summary.min_capacity_ratio);
  j["summary"] = std::move(summary);
  if (!full) return j;
  Json check = Json::parse(t.check_json, nullptr, false);
  if (check.is_discarded()) return Status::InvalidArgument("transition check: invalid JSON");
  j["check"] = OJson::parse(check.dump());
  std::map<std::string, const StoredStep*> stored;
  for (const StoredStep& step : t.steps) stored[step.step_id] = &step;
  OJson phases = OJson::array();
  for (size_t p = 0; p < parsed.phases.size(); ++p) {
    const int index = static_cast<int>(p) + 1;
    std::string state = index < t.phase ? "done" : index == t.phase ? t.state : "pending";
    if (t.state == "done") state = "done";
    OJson steps = OJson::array();
    for (const TransitionStep& step : parsed.phases[p].steps) {
      auto it = stored.find(step.id);
      OJson s;
      s["id"] = step.id;
      s["action"] = std::string(StepActionName(step.action));
      s["gpu"] = step.gpu;
      s["node"] = it == stored.end() ? OJson(nullptr) : OJson(it->second->node);
      s["profile"] = step.profile;
      s["start"] = step.start;
      s["service"] = step.service;
      s["batch"] = step.batch;
      s["procs"] = step.procs;
      s["state"] = it == stored.end() ? OJson("pending") : OJson(it->second->state);
      s["error"] = it == stored.end() || it->second->error.empty() ? OJson(nullptr)
                                                                   : OJson(it->second->error);
      steps.push_back(std::move(s));
    }
    OJson routers = OJson::array();
    for (const StoredStep& step : t.steps) {
      const std::optional<std::string> router = RouterOfStep(step);
      if (step.phase != index || !router) continue;
      routers.push_back(OJson{{"router", *router},
                              {"step", RouterStepKind(step)},
                              {"state", step.state},
                              {"error", step.error.empty() ? OJson(nullptr) : OJson(step.error)}});
    }
    OJson phase;
    phase["index"] = index;
    phase["state"] = state;
    phase["steps"] = std::move(steps);
    phase["routers"] = std::move(routers);
    phases.push_back(std::move(phase));
  }
  j["phases"] = std::move(phases);
  return j;
}

std::optional<ApiError> CheckMediaType(std::string_view body, std::string_view content_type) {
  if (body.empty()) return std::nullopt;
  std::string type(content_type.substr(0, content_type.find(';')));
  while (!type.empty() && type.back() == ' ') type.pop_back();
  std::transform(type.begin(), type.end(), type.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  if (type == "application/json") return std::nullopt;
  return ApiError{
      415, "unsupported_media_type",
      "the body's Content-Type must be application/json, got '" + std::string(content_type) + "'",
      std::nullopt};
}

}  // namespace tessera
