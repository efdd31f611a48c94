// FormatDeploymentJson and ParseDeploymentJson: the canonical JSON of a
// Deployment (DESIGN.md, Formats). The CSV, table and SVG forms of
// deployment_format.h live in src/emit/.
//
// nlohmann::json is used without exceptions: parse with allow_exceptions =
// false, check every value's type before reading it, dump with the "replace"
// UTF-8 handler.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <array>
#include <climits>
#include <cmath>
#include <cstdint>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <span>
#include <string>
#include <vector>

#include "tessera/deployment_format.h"
#include "util/json_numbers.h"

namespace tessera {
namespace {

using Json = nlohmann::json;
using OrderedJson = nlohmann::ordered_json;  // keeps DESIGN.md's key order

constexpr std::array<std::string_view, 5> kTopKeys = {"gpu", "planner", "gpus", "services",
                                                      "metrics"};
constexpr std::array<std::string_view, 1> kTopOptionalKeys = {"pool"};
constexpr std::array<std::string_view, 4> kPoolKeys = {"gpu", "price_per_hour", "max_count",
                                                       "used"};
constexpr std::array<std::string_view, 3> kGpuKeys = {"index", "node", "instances"};
constexpr std::array<std::string_view, 1> kGpuOptionalKeys = {"gpu"};
constexpr std::array<std::string_view, 8> kInstanceKeys = {
    "profile", "start", "service", "model", "batch", "procs", "throughput_rps", "latency_ms"};
constexpr std::array<std::string_view, 6> kServiceKeys = {"name",   "model",        "rate_rps",
                                                          "slo_ms", "capacity_rps", "status"};
constexpr std::array<std::string_view, 1> kServiceOptionalKeys = {"reason"};
constexpr std::array<std::string_view, 8> kMetricKeys = {
    "gpus", "gpcs",   "internal_slack", "external_fragmentation", "lower_bound", "lower_bound_kind",
    "gap",  "plan_ms"};
constexpr std::array<std::string_view, 3> kMetricOptionalKeys = {"proven_optimal", "cost_per_hour",
                                                                 "cost_lower_bound"};

// ---- Format ---------------------------------------------------------------

// JSON numbers as every Tessera JSON writes them (util/json_numbers.h).
OrderedJson Number(double v) { return JsonNumber(v); }
OrderedJson Measurement(double v) { return JsonMeasurement(v); }

OrderedJson InstanceJson(const Instance& in) {
  OrderedJson j;
  j["profile"] = in.profile;
  j["start"] = in.start;
  j["service"] = in.service;
  j["model"] = in.model;
  j["batch"] = in.batch;
  j["procs"] = in.procs;
  j["throughput_rps"] = Measurement(in.throughput_rps);
  j["latency_ms"] = Measurement(in.latency_ms);
  return j;
}

OrderedJson GpuJson(const GpuAssignment& gpu) {
  OrderedJson j;
  j["index"] = gpu.index;
  if (!gpu.gpu.empty()) j["gpu"] = gpu.gpu;
  j["node"] = gpu.node;
  j["instances"] = OrderedJson::array();
  for (const Instance& in : gpu.instances) j["instances"].push_back(InstanceJson(in));
  return j;
}

OrderedJson ServiceJson(const ServiceOutcome& s) {
  OrderedJson j;
  j["name"] = s.name;
  j["model"] = s.model;
  j["rate_rps"] = Number(s.rate_rps);  // inputs: written exactly, not rounded
  j["slo_ms"] = Number(s.slo_ms);
  j["capacity_rps"] = Measurement(s.capacity_rps);
  j["status"] = s.status == ServiceStatus::kOk ? "ok" : "infeasible";
  if (!s.reason.empty()) j["reason"] = s.reason;
  return j;
}

OrderedJson MetricsJson(const Metrics& m) {
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
  return j;
}

// ---- Parse ----------------------------------------------------------------

// A SAX pass run before the DOM parse: reports the first syntax error with
// its position (the DOM parser without exceptions only says "discarded") and
// any duplicate key with its path (the DOM parser silently keeps the last).
class StructureCheck : public nlohmann::json_sax<Json> {
 public:
  bool null() override { return Value(); }
  bool boolean(bool) override { return Value(); }
  bool number_integer(number_integer_t) override { return Value(); }
  bool number_unsigned(number_unsigned_t) override { return Value(); }
  bool number_float(number_float_t, const string_t&) override { return Value(); }
  bool string(string_t&) override { return Value(); }
  bool binary(binary_t&) override { return Value(); }
  bool start_object(std::size_t) override { return Open(false); }
  bool start_array(std::size_t) override { return Open(true); }
  bool end_object() override { return Close(); }
  bool end_array() override { return Close(); }
  bool key(string_t& key) override {
    Frame& frame = stack_.back();
    frame.key = key;
    if (frame.keys.insert(key).second) return true;
    error = Path() + ": duplicate key";
    return false;
  }
  bool parse_error(std::size_t, const std::string&,
                   const nlohmann::detail::exception& ex) override {
    error = ex.what();
    // Drop the "[json.exception.parse_error.101] " prefix.
    const size_t end = error.find("] ");
    if (error.starts_with("[") && end != std::string::npos) error.erase(0, end + 2);
    error = "invalid JSON: " + error;
    return false;
  }

  std::string error;  // empty when the text is well-formed

 private:
  struct Frame {
    bool array = false;
    size_t items = 0;  // arrays: values seen so far
    std::string key;   // objects: the current key
    std::set<std::string> keys;
  };

  bool Value() {
    if (!stack_.empty() && stack_.back().array) ++stack_.back().items;
    return true;
  }
  bool Open(bool array) {
    Value();
    stack_.push_back({array, 0, {}, {}});
    return true;
  }
  bool Close() {
    stack_.pop_back();
    return true;
  }
  // The path of the current key, e.g. "gpus[1].instances[0].batch".
  std::string Path() const {
    std::string path;
    for (const Frame& frame : stack_) {
      if (frame.array) {
        path += fmt::format("[{}]", frame.items - 1);
      } else {
        path += (path.empty() ? "" : ".") + frame.key;
      }
    }
    return path;
  }

  std::vector<Frame> stack_;
};

std::string Describe(const Json& value) {
  std::string text = value.dump(-1, ' ', false, Json::error_handler_t::replace);
  if (text.size() > 60) text = text.substr(0, 60) + "...";
  return text;
}

std::string Join(const std::string& path, std::string_view key) {
  return path.empty() ? std::string(key) : fmt::format("{}.{}", path, key);
}

// Typed access to a parsed document; errors are "<source>: <path>: <what>".
class JsonReader {
 public:
  explicit JsonReader(std::string_view source) : source_(source) {}

  Status Error(const std::string& path, std::string_view what) const {
    return Status::InvalidArgument(
        fmt::format("{}: {}: {}", source_, path.empty() ? "(root)" : path, what));
  }

  // `j` is an object holding every key of `required`, and no key outside
  // `required` and `optional`: unknown keys are typos, never ignored.
  Status Keys(const Json& j, const std::string& path, std::span<const std::string_view> required,
              std::span<const std::string_view> optional = {}) const {
    if (!j.is_object()) return Error(path, "expected an object, got " + Describe(j));
    for (const auto& [key, value] : j.items()) {
      if (std::find(required.begin(), required.end(), key) == required.end() &&
          std::find(optional.begin(), optional.end(), key) == optional.end()) {
        const std::string known =
            fmt::format("{}", fmt::join(required, ", ")) +
            (optional.empty() ? "" : fmt::format(", {}", fmt::join(optional, ", ")));
        return Error(Join(path, key), fmt::format("unknown key (expected: {})", known));
      }
    }
    for (std::string_view key : required) {
      if (!j.contains(key)) return Error(Join(path, key), "missing");
    }
    return Status::Ok();
  }

  Result<std::string> String(const Json& j, const std::string& path, std::string_view key,
                             bool non_empty) const {
    const Json& v = j[key];
    if (!v.is_string()) return Error(Join(path, key), "expected a string, got " + Describe(v));
    if (non_empty && v.get_ref<const std::string&>().empty()) {
      return Error(Join(path, key), "must not be empty");
    }
    return v.get<std::string>();
  }

  Result<int> Int(const Json& j, const std::string& path, std::string_view key, int min) const {
    const Json& v = j[key];
    if (!v.is_number_integer()) {
      return Error(Join(path, key), "expected an integer, got " + Describe(v));
    }
    // Non-negative integers are stored unsigned; clamp before comparing.
    const int64_t x = v.is_number_unsigned()
                          ? static_cast<int64_t>(std::min<uint64_t>(v.get<uint64_t>(), INT64_MAX))
                          : v.get<int64_t>();
    if (x < min || x > INT_MAX) {
      return Error(Join(path, key), fmt::format("must be an integer in [{}, {}], got {}", min,
                                                INT_MAX, Describe(v)));
    }
    return static_cast<int>(x);
  }

  // A finite number; >= 0 unless `any_sign`.
  Result<double> Number(const Json& j, const std::string& path, std::string_view key,
                        bool any_sign = false) const {
    const Json& v = j[key];
    if (!v.is_number()) return Error(Join(path, key), "expected a number, got " + Describe(v));
    const double d = v.get<double>();
    if (!std::isfinite(d) || (!any_sign && d < 0)) {
      return Error(Join(path, key), fmt::format("must be a finite number{}, got {}",
                                                any_sign ? "" : " >= 0", Describe(v)));
    }
    return d;
  }

  Status Array(const Json& j, const std::string& path, std::string_view key) const {
    if (!j[key].is_array()) {
      return Error(Join(path, key), "expected an array, got " + Describe(j[key]));
    }
    return Status::Ok();
  }

  Result<Instance> ParseInstance(const Json& j, const std::string& path) const;
  Result<GpuAssignment> ParseGpu(const Json& j, const std::string& path) const;
  Result<ServiceOutcome> ParseService(const Json& j, const std::string& path) const;
  Result<Metrics> ParseMetrics(const Json& j, const std::string& path) const;
  Result<PoolUse> ParsePoolUse(const Json& j, const std::string& path) const;
  Result<Deployment> ParseDocument(const Json& root) const;

 private:
  Status CheckReferences(const Json& root, const Deployment& d) const;

  std::string_view source_;
};

Result<Instance> JsonReader::ParseInstance(const Json& j, const std::string& path) const {
  TESSERA_RETURN_IF_ERROR(Keys(j, path, kInstanceKeys));
  Instance in;
  TESSERA_ASSIGN_OR_RETURN(in.profile, String(j, path, "profile", true));
  TESSERA_ASSIGN_OR_RETURN(in.start, Int(j, path, "start", 0));
  TESSERA_ASSIGN_OR_RETURN(in.service, String(j, path, "service", true));
  TESSERA_ASSIGN_OR_RETURN(in.model, String(j, path, "model", true));
  TESSERA_ASSIGN_OR_RETURN(in.batch, Int(j, path, "batch", 1));
  TESSERA_ASSIGN_OR_RETURN(in.procs, Int(j, path, "procs", 1));
  TESSERA_ASSIGN_OR_RETURN(in.throughput_rps, Number(j, path, "throughput_rps"));
  TESSERA_ASSIGN_OR_RETURN(in.latency_ms, Number(j, path, "latency_ms"));
  return in;
}

Result<GpuAssignment> JsonReader::ParseGpu(const Json& j, const std::string& path) const {
  TESSERA_RETURN_IF_ERROR(Keys(j, path, kGpuKeys, kGpuOptionalKeys));
  GpuAssignment gpu;
  TESSERA_ASSIGN_OR_RETURN(gpu.index, Int(j, path, "index", 0));
  if (j.contains("gpu")) {
    TESSERA_ASSIGN_OR_RETURN(gpu.gpu, String(j, path, "gpu", true));
  }
  TESSERA_ASSIGN_OR_RETURN(gpu.node, Int(j, path, "node", 0));
  TESSERA_RETURN_IF_ERROR(Array(j, path, "instances"));
  const Json& instances = j["instances"];
  for (size_t i = 0; i < instances.size(); ++i) {
    TESSERA_ASSIGN_OR_RETURN(Instance in,
                             ParseInstance(instances[i], fmt::format("{}.instances[{}]", path, i)));
    gpu.instances.push_back(std::move(in));
  }
  return gpu;
}

Result<ServiceOutcome> JsonReader::ParseService(const Json& j, const std::string& path) const {
  TESSERA_RETURN_IF_ERROR(Keys(j, path, kServiceKeys, kServiceOptionalKeys));
  ServiceOutcome s;
  TESSERA_ASSIGN_OR_RETURN(s.name, String(j, path, "name", true));
  TESSERA_ASSIGN_OR_RETURN(s.model, String(j, path, "model", true));
  TESSERA_ASSIGN_OR_RETURN(s.rate_rps, Number(j, path, "rate_rps"));
  TESSERA_ASSIGN_OR_RETURN(s.slo_ms, Number(j, path, "slo_ms"));
  TESSERA_ASSIGN_OR_RETURN(s.capacity_rps, Number(j, path, "capacity_rps"));
  TESSERA_ASSIGN_OR_RETURN(std::string status, String(j, path, "status", true));
  if (status != "ok" && status != "infeasible") {
    return Error(Join(path, "status"),
                 fmt::format("expected \"ok\" or \"infeasible\", got \"{}\"", status));
  }
  s.status = status == "ok" ? ServiceStatus::kOk : ServiceStatus::kInfeasible;
  if (j.contains("reason")) {
    TESSERA_ASSIGN_OR_RETURN(s.reason, String(j, path, "reason", false));
  }
  return s;
}

Result<Metrics> JsonReader::ParseMetrics(const Json& j, const std::string& path) const {
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
    if (!j["proven_optimal"].is_boolean()) {
      return Error(Join(path, "proven_optimal"),
                   "expected true or false, got " + Describe(j["proven_optimal"]));
    }
    m.proven_optimal = j["proven_optimal"].get<bool>();
  }
  if (j.contains("cost_per_hour")) {
    TESSERA_ASSIGN_OR_RETURN(m.cost_per_hour, Number(j, path, "cost_per_hour"));
  }
  if (j.contains("cost_lower_bound")) {
    TESSERA_ASSIGN_OR_RETURN(m.cost_lower_bound, Number(j, path, "cost_lower_bound"));
  }
  return m;
}

Result<PoolUse> JsonReader::ParsePoolUse(const Json& j, const std::string& path) const {
  TESSERA_RETURN_IF_ERROR(Keys(j, path, kPoolKeys));
  PoolUse use;
  TESSERA_ASSIGN_OR_RETURN(use.gpu, String(j, path, "gpu", true));
  TESSERA_ASSIGN_OR_RETURN(use.price_per_hour, Number(j, path, "price_per_hour"));
  TESSERA_ASSIGN_OR_RETURN(use.max_count, Int(j, path, "max_count", 0));
  TESSERA_ASSIGN_OR_RETURN(use.used, Int(j, path, "used", 0));
  return use;
}

// GPU indices and service names are unique, and every instance serves a
// listed service. Geometry and capacity are the validator's (validator.h).
Status JsonReader::CheckReferences(const Json& root, const Deployment& d) const {
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
                               Describe(root["services"][s]["name"]), it->second));
    }
  }
  for (size_t g = 0; g < d.gpus.size(); ++g) {
    for (size_t i = 0; i < d.gpus[g].instances.size(); ++i) {
      if (service_at.count(d.gpus[g].instances[i].service)) continue;
      return Error(fmt::format("gpus[{}].instances[{}].service", g, i),
                   fmt::format("{} is not in services",
                               Describe(root["gpus"][g]["instances"][i]["service"])));
    }
  }
  return Status::Ok();
}

Result<Deployment> JsonReader::ParseDocument(const Json& root) const {
  TESSERA_RETURN_IF_ERROR(Keys(root, "", kTopKeys, kTopOptionalKeys));
  Deployment d;
  TESSERA_ASSIGN_OR_RETURN(d.gpu, String(root, "", "gpu", true));
  TESSERA_ASSIGN_OR_RETURN(d.planner, String(root, "", "planner", false));
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
  j["gpus"] = OrderedJson::array();
  for (const GpuAssignment& gpu : deployment.gpus) j["gpus"].push_back(GpuJson(gpu));
  j["services"] = OrderedJson::array();
  for (const ServiceOutcome& s : deployment.services) j["services"].push_back(ServiceJson(s));
  j["metrics"] = MetricsJson(deployment.metrics);
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
  StructureCheck check;
  if (!Json::sax_parse(text, &check) || !check.error.empty()) {
    return Status::InvalidArgument(
        fmt::format("{}: {}", source, check.error.empty() ? "invalid JSON" : check.error));
  }
  const Json root = Json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (root.is_discarded()) return Status::InvalidArgument(fmt::format("{}: invalid JSON", source));
  return JsonReader(source).ParseDocument(root);
}

}  // namespace tessera
