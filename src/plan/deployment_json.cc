// FormatDeploymentJson and ParseDeploymentJson: the canonical JSON of a
// Deployment (DESIGN.md, Formats). The CSV, table and SVG forms of
// deployment_format.h live in src/emit/.
//
// nlohmann::json is used without exceptions: parse with allow_exceptions =
// false, check every value's type before reading it, dump with the "replace"
// UTF-8 handler.
#include <fmt/format.h>

#include <array>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "plan/instance_json.h"
#include "tessera/deployment_format.h"
#include "tessera/util/input_limits.h"
#include "tessera/util/text_io.h"
#include "util/json_numbers.h"
#include "util/json_reader.h"
#include "util/json_structure.h"

namespace tessera {
namespace {

using Json = nlohmann::json;
using OrderedJson = nlohmann::ordered_json;  // keeps DESIGN.md's key order

// A process's share of a GPU's SMs (%), the part of its service's rate it
// serves, and a pool entry's cap (0 = none).
constexpr InputRange kSharePct{0, 100};
constexpr InputRange kShareRateRps{0, limits::kRateRps.max};
constexpr InputRange kPoolCap{0, limits::kMaxCount.max, false, true};

constexpr std::array<std::string_view, 5> kTopKeys = {"gpu", "planner", "gpus", "services",
                                                      "metrics"};
// "shadow_guard": the report of iGniter's guard beside an MPS plan
// (tessera/planners/shadow_guard.h, written by `tessera plan`); read past, not kept.
constexpr std::array<std::string_view, 5> kTopOptionalKeys = {"sharing", "latency_rule", "pool",
                                                              "shadow_guard", "profiles"};
constexpr std::array<std::string_view, 2> kProfilesKeys = {"source", "fnv1a64"};
constexpr std::array<std::string_view, 6> kRuleKeys = {"factor",   "truncate_slo",      "max_procs",
                                                       "capacity", "headroom_quantile", "router"};
constexpr std::array<std::string_view, 1> kRuleOptionalKeys = {"rate_margin"};
constexpr std::array<std::string_view, 4> kPoolKeys = {"gpu", "price_per_hour", "max_count",
                                                       "used"};
constexpr std::array<std::string_view, 2> kGpuKeys = {"index", "node"};
constexpr std::array<std::string_view, 4> kGpuOptionalKeys = {"gpu", "instances", "resource_pct",
                                                              "processes"};
constexpr std::array<std::string_view, 8> kProcessKeys = {
    "service",  "model",      "batch",          "resource_pct",
    "rate_rps", "latency_ms", "throughput_rps", "meets_slo"};
constexpr std::array<std::string_view, 6> kServiceKeys = {"name",   "model",        "rate_rps",
                                                          "slo_ms", "capacity_rps", "status"};
constexpr std::array<std::string_view, 3> kServiceOptionalKeys = {"reason", "worst_latency_ms",
                                                                  "predicted_violation"};
constexpr std::array<std::string_view, 8> kMetricKeys = {
    "gpus", "gpcs",   "internal_slack", "external_fragmentation", "lower_bound", "lower_bound_kind",
    "gap",  "plan_ms"};
constexpr std::array<std::string_view, 5> kMetricOptionalKeys = {
    "proven_optimal", "cost_per_hour", "cost_lower_bound", "resource_pct", "predicted_violations"};

// ---- Format ---------------------------------------------------------------

// JSON numbers as every Tessera JSON writes them (util/json_numbers.h).
OrderedJson Number(double v) { return JsonNumber(v); }
OrderedJson Measurement(double v) { return JsonMeasurement(v); }

OrderedJson InstanceJson(const Instance& in) {
  OrderedJson j;
  AddInstanceJson(in, j);
  return j;
}

OrderedJson ProcessJson(const MpsProcess& p) {
  OrderedJson j;
  j["service"] = p.service;
  j["model"] = p.model;
  j["batch"] = p.batch;
  j["resource_pct"] = Measurement(p.resource_pct);
  j["rate_rps"] = Number(p.rate_rps);  // a share of an input rate: exact
  j["latency_ms"] = Measurement(p.latency_ms);
  j["throughput_rps"] = Measurement(p.throughput_rps);
  j["meets_slo"] = p.meets_slo;
  return j;
}

// A MIG GPU lists its instances; a GPU shared whole, its processes.
OrderedJson GpuJson(const GpuAssignment& gpu, Sharing sharing) {
  OrderedJson j;
  j["index"] = gpu.index;
  if (!gpu.gpu.empty()) j["gpu"] = gpu.gpu;
  j["node"] = gpu.node;
  if (UsesMig(sharing)) {
    j["instances"] = OrderedJson::array();
    for (const Instance& in : gpu.instances()) j["instances"].push_back(InstanceJson(in));
    return j;
  }
  double used = 0;
  for (const MpsProcess& p : gpu.processes()) used += p.resource_pct;
  j["resource_pct"] = Measurement(used);
  j["processes"] = OrderedJson::array();
  for (const MpsProcess& p : gpu.processes()) j["processes"].push_back(ProcessJson(p));
  return j;
}

OrderedJson RuleJson(const LatencyRule& rule) {
  OrderedJson j;
  j["factor"] = Number(rule.factor);
  j["truncate_slo"] = rule.truncate_slo;
  j["max_procs"] = rule.max_procs;
  j["capacity"] = rule.CapacityName();
  j["headroom_quantile"] = Number(rule.headroom_quantile);
  j["router"] = RouterName(rule.router);
  if (rule.rate_margin > 0) j["rate_margin"] = Number(rule.rate_margin);
  return j;
}

OrderedJson ServiceJson(const ServiceOutcome& s, Sharing sharing) {
  OrderedJson j;
  j["name"] = s.name;
  j["model"] = s.model;
  j["rate_rps"] = Number(s.rate_rps);  // inputs: written exactly, not rounded
  j["slo_ms"] = Number(s.slo_ms);
  j["capacity_rps"] = Measurement(s.capacity_rps);
  j["status"] = s.status == ServiceStatus::kOk ? "ok" : "infeasible";
  if (!s.reason.empty()) j["reason"] = s.reason;
  if (sharing == Sharing::kMps) {
    j["worst_latency_ms"] = Measurement(s.worst_latency_ms);
    j["predicted_violation"] = s.predicted_violation;
  }
  return j;
}

OrderedJson MetricsJson(const Metrics& m, Sharing sharing) {
  OrderedJson j;
  j["gpus"] = m.gpus;
  j["gpcs"] = m.gpcs;
  j["internal_slack"] = Measurement(m.internal_slack);
  j["external_fragmentation"] = Measurement(m.external_fragmentation);
  j["lower_bound"] = m.lower_bound;
  j["lower_bound_kind"] = m.lower_bound_kind;
  j["gap"] = Measurement(m.gap);
  j["plan_ms"] = Measurement(m.plan_ms);
  if (m.proven_optimal) j["proven_optimal"] = *m.proven_optimal;
  if (m.cost_per_hour > 0) {
    j["cost_per_hour"] = Measurement(m.cost_per_hour);
    j["cost_lower_bound"] = Measurement(m.cost_lower_bound);
  }
  if (sharing == Sharing::kMps) {
    j["resource_pct"] = Measurement(m.resource_pct);
    j["predicted_violations"] = m.predicted_violations;
  }
  return j;
}

// ---- Parse ----------------------------------------------------------------

// The deployment document's readers on top of the generic typed access.
class DeploymentReader : public JsonReader {
 public:
  using JsonReader::JsonReader;

  Result<Instance> ParseInstance(const Json& j, const std::string& path) const;
  Result<MpsProcess> ParseProcess(const Json& j, const std::string& path) const;
  Result<LatencyRule> ParseRule(const Json& j, const std::string& path) const;
  Result<GpuAssignment> ParseGpu(const Json& j, const std::string& path) const;
  Result<ServiceOutcome> ParseService(const Json& j, const std::string& path) const;
  Result<Metrics> ParseMetrics(const Json& j, const std::string& path) const;
  Result<PoolUse> ParsePoolUse(const Json& j, const std::string& path) const;
  Result<Deployment> ParseDocument(const Json& root) const;

 private:
  Status CheckReferences(const Json& root, const Deployment& d) const;
};

Result<Instance> DeploymentReader::ParseInstance(const Json& j, const std::string& path) const {
  TESSERA_RETURN_IF_ERROR(Keys(j, path, kInstanceJsonKeys));
  return ReadInstanceJson(*this, j, path);
}

Result<MpsProcess> DeploymentReader::ParseProcess(const Json& j, const std::string& path) const {
  TESSERA_RETURN_IF_ERROR(Keys(j, path, kProcessKeys));
  MpsProcess p;
  TESSERA_ASSIGN_OR_RETURN(p.service, String(j, path, "service", true));
  TESSERA_ASSIGN_OR_RETURN(p.model, String(j, path, "model", true));
  TESSERA_ASSIGN_OR_RETURN(p.batch, IntIn(j, path, "batch", limits::kBatch));
  TESSERA_ASSIGN_OR_RETURN(p.resource_pct, In(j, path, "resource_pct", kSharePct));
  TESSERA_ASSIGN_OR_RETURN(p.rate_rps, In(j, path, "rate_rps", kShareRateRps));
  TESSERA_ASSIGN_OR_RETURN(p.latency_ms, Number(j, path, "latency_ms"));
  TESSERA_ASSIGN_OR_RETURN(p.throughput_rps, Number(j, path, "throughput_rps"));
  TESSERA_ASSIGN_OR_RETURN(p.meets_slo, Bool(j, path, "meets_slo"));
  return p;
}

// A MIG GPU has `instances`; a GPU shared whole has `processes` (and the
// `resource_pct` they sum to, which the validator re-adds).
Result<GpuAssignment> DeploymentReader::ParseGpu(const Json& j, const std::string& path) const {
  TESSERA_RETURN_IF_ERROR(Keys(j, path, kGpuKeys, kGpuOptionalKeys));
  GpuAssignment gpu;
  TESSERA_ASSIGN_OR_RETURN(gpu.index, Int(j, path, "index", 0));
  if (j.contains("gpu")) {
    TESSERA_ASSIGN_OR_RETURN(gpu.gpu, String(j, path, "gpu", true));
  }
  TESSERA_ASSIGN_OR_RETURN(gpu.node, Int(j, path, "node", 0));
  if (j.contains("instances") == j.contains("processes")) {
    return Error(path, "expected one of instances (MIG) or processes (MPS)");
  }
  if (j.contains("processes")) {
    TESSERA_RETURN_IF_ERROR(Array(j, path, "processes"));
    if (j.contains("resource_pct"))
      TESSERA_RETURN_IF_ERROR(Number(j, path, "resource_pct").status());
    const Json& processes = j["processes"];
    MpsProcesses& list = gpu.holds.emplace<MpsProcesses>();
    for (size_t i = 0; i < processes.size(); ++i) {
      TESSERA_ASSIGN_OR_RETURN(
          MpsProcess p, ParseProcess(processes[i], fmt::format("{}.processes[{}]", path, i)));
      list.push_back(std::move(p));
    }
    return gpu;
  }
  if (j.contains("resource_pct")) {
    return Error(JoinJsonPath(path, "resource_pct"), "applies to a GPU shared whole (processes)");
  }
  TESSERA_RETURN_IF_ERROR(Array(j, path, "instances"));
  const Json& instances = j["instances"];
  for (size_t i = 0; i < instances.size(); ++i) {
    TESSERA_ASSIGN_OR_RETURN(Instance in,
                             ParseInstance(instances[i], fmt::format("{}.instances[{}]", path, i)));
    gpu.mig().push_back(std::move(in));
  }
  return gpu;
}

Result<LatencyRule> DeploymentReader::ParseRule(const Json& j, const std::string& path) const {
  TESSERA_RETURN_IF_ERROR(Keys(j, path, kRuleKeys, kRuleOptionalKeys));
  LatencyRule rule;
  TESSERA_ASSIGN_OR_RETURN(rule.factor, Number(j, path, "factor"));
  TESSERA_ASSIGN_OR_RETURN(rule.truncate_slo, Bool(j, path, "truncate_slo"));
  TESSERA_ASSIGN_OR_RETURN(rule.max_procs, Int(j, path, "max_procs", 0));
  TESSERA_ASSIGN_OR_RETURN(std::string capacity, String(j, path, "capacity", true));
  if (Status s = rule.SetCapacity(capacity); !s.ok())
    return Error(JoinJsonPath(path, "capacity"), s.message());
  TESSERA_ASSIGN_OR_RETURN(rule.headroom_quantile, Number(j, path, "headroom_quantile"));
  TESSERA_ASSIGN_OR_RETURN(std::string router, String(j, path, "router", true));
  Result<Router> parsed = ParseRouter(router);
  if (!parsed.ok()) return Error(JoinJsonPath(path, "router"), parsed.status().message());
  rule.router = *parsed;
  if (j.contains("rate_margin")) {
    TESSERA_ASSIGN_OR_RETURN(rule.rate_margin, Number(j, path, "rate_margin"));
  }
  if (Status s = rule.Validate(); !s.ok()) return Error(path, s.message());
  return rule;
}

Result<ServiceOutcome> DeploymentReader::ParseService(const Json& j,
                                                      const std::string& path) const {
  TESSERA_RETURN_IF_ERROR(Keys(j, path, kServiceKeys, kServiceOptionalKeys));
  ServiceOutcome s;
  TESSERA_ASSIGN_OR_RETURN(s.name, String(j, path, "name", true));
  TESSERA_ASSIGN_OR_RETURN(s.model, String(j, path, "model", true));
  TESSERA_ASSIGN_OR_RETURN(s.rate_rps, In(j, path, "rate_rps", limits::kRateRps));
  TESSERA_ASSIGN_OR_RETURN(s.slo_ms, In(j, path, "slo_ms", limits::kSloMs));
  TESSERA_ASSIGN_OR_RETURN(s.capacity_rps, Number(j, path, "capacity_rps"));
  TESSERA_ASSIGN_OR_RETURN(std::string status, String(j, path, "status", true));
  if (status != "ok" && status != "infeasible") {
    return Error(JoinJsonPath(path, "status"),
                 fmt::format("expected \"ok\" or \"infeasible\", got \"{}\"", status));
  }
  s.status = status == "ok" ? ServiceStatus::kOk : ServiceStatus::kInfeasible;
  if (j.contains("reason")) {
    TESSERA_ASSIGN_OR_RETURN(s.reason, String(j, path, "reason", false));
  }
  if (j.contains("worst_latency_ms")) {
    TESSERA_ASSIGN_OR_RETURN(s.worst_latency_ms, Number(j, path, "worst_latency_ms"));
  }
  if (j.contains("predicted_violation")) {
    TESSERA_ASSIGN_OR_RETURN(s.predicted_violation, Bool(j, path, "predicted_violation"));
  }
  return s;
}

Result<Metrics> DeploymentReader::ParseMetrics(const Json& j, const std::string& path) const {
  TESSERA_RETURN_IF_ERROR(Keys(j, path, kMetricKeys, kMetricOptionalKeys));
  Metrics m;
  TESSERA_ASSIGN_OR_RETURN(m.gpus, Int(j, path, "gpus", 0));
  TESSERA_ASSIGN_OR_RETURN(m.gpcs, Int(j, path, "gpcs", 0));
  // Slack and gap may be negative when a plan is infeasible or a bound is off;
  // judging them is the validator's job, not the parser's.
  TESSERA_ASSIGN_OR_RETURN(m.internal_slack, Number(j, path, "internal_slack", true));
  TESSERA_ASSIGN_OR_RETURN(m.external_fragmentation,
                           Number(j, path, "external_fragmentation", true));
  TESSERA_ASSIGN_OR_RETURN(m.lower_bound, Int(j, path, "lower_bound", 0));
  TESSERA_ASSIGN_OR_RETURN(m.lower_bound_kind, String(j, path, "lower_bound_kind", false));
  TESSERA_ASSIGN_OR_RETURN(m.gap, Number(j, path, "gap", true));
  TESSERA_ASSIGN_OR_RETURN(m.plan_ms, Number(j, path, "plan_ms"));
  if (j.contains("proven_optimal")) {
    TESSERA_ASSIGN_OR_RETURN(m.proven_optimal, Bool(j, path, "proven_optimal"));
  }
  if (j.contains("resource_pct")) {
    TESSERA_ASSIGN_OR_RETURN(m.resource_pct, Number(j, path, "resource_pct"));
  }
  if (j.contains("predicted_violations")) {
    TESSERA_ASSIGN_OR_RETURN(m.predicted_violations, Int(j, path, "predicted_violations", 0));
  }
  if (j.contains("cost_per_hour")) {
    TESSERA_ASSIGN_OR_RETURN(m.cost_per_hour, Number(j, path, "cost_per_hour"));
  }
  if (j.contains("cost_lower_bound")) {
    TESSERA_ASSIGN_OR_RETURN(m.cost_lower_bound, Number(j, path, "cost_lower_bound"));
  }
  return m;
}

Result<PoolUse> DeploymentReader::ParsePoolUse(const Json& j, const std::string& path) const {
  TESSERA_RETURN_IF_ERROR(Keys(j, path, kPoolKeys));
  PoolUse use;
  TESSERA_ASSIGN_OR_RETURN(use.gpu, String(j, path, "gpu", true));
  TESSERA_ASSIGN_OR_RETURN(use.price_per_hour, In(j, path, "price_per_hour", limits::kPriceFlag));
  TESSERA_ASSIGN_OR_RETURN(use.max_count, IntIn(j, path, "max_count", kPoolCap));
  TESSERA_ASSIGN_OR_RETURN(use.used, Int(j, path, "used", 0));
  return use;
}

// GPU indices and service names are unique, and every instance serves a
// listed service. Geometry and capacity are the validator's (validator.h).
Status DeploymentReader::CheckReferences(const Json& root, const Deployment& d) const {
  std::map<int, size_t> gpu_at;
  for (size_t g = 0; g < d.gpus.size(); ++g) {
    const auto [it, inserted] = gpu_at.emplace(d.gpus[g].index, g);
    if (!inserted) {
      return Error(
          fmt::format("gpus[{}].index", g),
          fmt::format("duplicate GPU index {} (also gpus[{}])", d.gpus[g].index, it->second));
    }
  }
  std::map<std::string, size_t> service_at;
  for (size_t s = 0; s < d.services.size(); ++s) {
    const auto [it, inserted] = service_at.emplace(d.services[s].name, s);
    if (!inserted) {
      return Error(fmt::format("services[{}].name", s),
                   fmt::format("duplicate service {} (also services[{}])",
                               DescribeJson(root["services"][s]["name"]), it->second));
    }
  }
  for (size_t g = 0; g < d.gpus.size(); ++g) {
    for (size_t i = 0; i < d.gpus[g].instances().size(); ++i) {
      if (service_at.count(d.gpus[g].instances()[i].service)) continue;
      return Error(fmt::format("gpus[{}].instances[{}].service", g, i),
                   fmt::format("{} is not in services",
                               DescribeJson(root["gpus"][g]["instances"][i]["service"])));
    }
    for (size_t i = 0; i < d.gpus[g].processes().size(); ++i) {
      if (service_at.count(d.gpus[g].processes()[i].service)) continue;
      return Error(fmt::format("gpus[{}].processes[{}].service", g, i),
                   fmt::format("{} is not in services",
                               DescribeJson(root["gpus"][g]["processes"][i]["service"])));
    }
    if (d.gpus[g].shared_whole() != (d.sharing == Sharing::kMps)) {
      return Error(fmt::format("gpus[{}]", g),
                   fmt::format("a plan with sharing {} lists {}", SharingName(d.sharing),
                               d.sharing == Sharing::kMps ? "processes" : "instances"));
    }
  }
  return Status::Ok();
}

Result<Deployment> DeploymentReader::ParseDocument(const Json& root) const {
  TESSERA_RETURN_IF_ERROR(Keys(root, "", kTopKeys, kTopOptionalKeys));
  Deployment d;
  TESSERA_ASSIGN_OR_RETURN(d.gpu, String(root, "", "gpu", true));
  TESSERA_ASSIGN_OR_RETURN(d.planner, String(root, "", "planner", false));
  if (root.contains("sharing")) {
    TESSERA_ASSIGN_OR_RETURN(std::string sharing, String(root, "", "sharing", true));
    Result<Sharing> parsed = ParseSharing(sharing);
    if (!parsed.ok()) return Error("sharing", parsed.status().message());
    d.sharing = *parsed;
  }
  d.rule_recorded = root.contains("latency_rule");
  if (d.rule_recorded) {
    TESSERA_ASSIGN_OR_RETURN(d.rule, ParseRule(root["latency_rule"], "latency_rule"));
  }
  if (root.contains("profiles")) {
    const Json& p = root["profiles"];
    TESSERA_RETURN_IF_ERROR(Keys(p, "profiles", kProfilesKeys));
    ProfileSource source;
    TESSERA_ASSIGN_OR_RETURN(source.source, String(p, "profiles", "source", true));
    TESSERA_ASSIGN_OR_RETURN(source.fnv1a64, String(p, "profiles", "fnv1a64", true));
    if (source.fnv1a64.size() != 16 ||
        source.fnv1a64.find_first_not_of("0123456789abcdef") != std::string::npos) {
      return Error("profiles.fnv1a64",
                   "expected 16 lowercase hex digits, got " + QuoteForMessage(source.fnv1a64));
    }
    d.profiles = std::move(source);
  }
  TESSERA_RETURN_IF_ERROR(Array(root, "", "gpus"));
  for (size_t g = 0; g < root["gpus"].size(); ++g) {
    TESSERA_ASSIGN_OR_RETURN(GpuAssignment gpu,
                             ParseGpu(root["gpus"][g], fmt::format("gpus[{}]", g)));
    d.gpus.push_back(std::move(gpu));
  }
  TESSERA_RETURN_IF_ERROR(Array(root, "", "services"));
  for (size_t s = 0; s < root["services"].size(); ++s) {
    TESSERA_ASSIGN_OR_RETURN(ServiceOutcome service,
                             ParseService(root["services"][s], fmt::format("services[{}]", s)));
    d.services.push_back(std::move(service));
  }
  TESSERA_ASSIGN_OR_RETURN(d.metrics, ParseMetrics(root["metrics"], "metrics"));
  if (root.contains("pool")) {
    TESSERA_RETURN_IF_ERROR(Array(root, "", "pool"));
    for (size_t u = 0; u < root["pool"].size(); ++u) {
      TESSERA_ASSIGN_OR_RETURN(PoolUse use,
                               ParsePoolUse(root["pool"][u], fmt::format("pool[{}]", u)));
      d.pool.push_back(std::move(use));
    }
  }
  TESSERA_RETURN_IF_ERROR(CheckReferences(root, d));
  return d;
}

}  // namespace

std::string FormatDeploymentJson(const Deployment& deployment) {
  OrderedJson j;
  j["gpu"] = deployment.gpu;
  j["planner"] = deployment.planner;
  j["sharing"] = SharingName(deployment.sharing);
  j["latency_rule"] = RuleJson(deployment.rule);
  if (deployment.profiles) {
    j["profiles"] = {{"source", deployment.profiles->source},
                     {"fnv1a64", deployment.profiles->fnv1a64}};
  }
  j["gpus"] = OrderedJson::array();
  for (const GpuAssignment& gpu : deployment.gpus) {
    j["gpus"].push_back(GpuJson(gpu, deployment.sharing));
  }
  j["services"] = OrderedJson::array();
  for (const ServiceOutcome& s : deployment.services) {
    j["services"].push_back(ServiceJson(s, deployment.sharing));
  }
  j["metrics"] = MetricsJson(deployment.metrics, deployment.sharing);
  if (!deployment.pool.empty()) {
    j["pool"] = OrderedJson::array();
    for (const PoolUse& use : deployment.pool) {
      j["pool"].push_back({{"gpu", use.gpu},
                           {"price_per_hour", Measurement(use.price_per_hour)},
                           {"max_count", use.max_count},
                           {"used", use.used}});
    }
  }
  // "replace": a name with invalid UTF-8 must not make dump() throw.
  return j.dump(2, ' ', false, OrderedJson::error_handler_t::replace) + "\n";
}

Result<Deployment> ParseDeploymentJson(std::string_view text, std::string_view source) {
  // Syntax, duplicate keys and nesting depth first: DescribeJson() and the
  // readers below recurse.
  if (const std::string error = CheckJsonStructure(text); !error.empty()) {
    return Status::InvalidArgument(fmt::format("{}: {}", source, error));
  }
  const Json root = Json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (root.is_discarded()) return Status::InvalidArgument(fmt::format("{}: invalid JSON", source));
  return DeploymentReader(source).ParseDocument(root);
}

}  // namespace tessera
