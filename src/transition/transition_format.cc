// FormatTransitionJson, ParseTransitionJson, FormatTransitionText and
// FormatTransitionSummary (transition_format.h): the fixed JSON of issue 18
// and docs/transitions.md. Parsing follows the deployment JSON's strict style
// (util/json_reader.h): structure first, then every key and type.
#include "tessera/transition/transition_format.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "tessera/util/input_limits.h"
#include "util/json_numbers.h"
#include "util/json_reader.h"
#include "util/json_structure.h"

namespace tessera {
namespace {

using Json = nlohmann::json;
using OrderedJson = nlohmann::ordered_json;  // keeps the format's key order

constexpr std::string_view kFormat = "tessera-transition";
constexpr int kVersion = 1;

// The format's spelling of each action, indexed by StepAction.
constexpr std::array<std::string_view, 3> kActionNames = {"create", "destroy", "reconfigure"};

std::string_view ActionName(StepAction action) { return kActionNames[static_cast<size_t>(action)]; }

std::optional<StepAction> ActionNamed(std::string_view name) {
  const auto it = std::find(kActionNames.begin(), kActionNames.end(), name);
  if (it == kActionNames.end()) return std::nullopt;
  return static_cast<StepAction>(it - kActionNames.begin());
}

bool RunsService(StepAction action) { return action != StepAction::kDestroy; }

constexpr std::array<std::string_view, 7> kTopKeys = {"format",  "version", "gpu",    "spare_gpus",
                                                      "gpu_map", "phases",  "summary"};
constexpr std::array<std::string_view, 1> kPhaseKeys = {"steps"};
constexpr std::array<std::string_view, 6> kDestroyKeys = {"id",      "action", "gpu",
                                                          "profile", "start",  "service"};
constexpr std::array<std::string_view, 10> kCreateKeys = {
    "id",      "action", "gpu",   "profile", "start",
    "service", "model",  "batch", "procs",   "throughput_rps"};
constexpr std::array<std::string_view, 11> kReconfigureKeys = {
    "id",    "action", "gpu",   "profile",        "start",       "service",
    "model", "batch",  "procs", "throughput_rps", "from_service"};
constexpr std::array<std::string_view, 5> kSummaryKeys = {"steps", "phases", "gpus_touched",
                                                          "peak_gpus", "min_capacity_ratio"};

// ---- Format ---------------------------------------------------------------

OrderedJson StepJson(const TransitionStep& step) {
  OrderedJson j;
  j["id"] = step.id;
  j["action"] = ActionName(step.action);
  j["gpu"] = step.gpu;
  j["profile"] = step.profile;
  j["start"] = step.start;
  j["service"] = step.service;
  if (RunsService(step.action)) {
    j["model"] = step.model;
    j["batch"] = step.batch;
    j["procs"] = step.procs;
    j["throughput_rps"] = JsonMeasurement(step.throughput_rps);
  }
  if (step.action == StepAction::kReconfigure) j["from_service"] = step.from_service;
  return j;
}

OrderedJson SummaryJson(const TransitionSummary& s) {
  OrderedJson j;
  j["steps"] = s.steps;
  j["phases"] = s.phases;
  j["gpus_touched"] = s.gpus_touched;
  j["peak_gpus"] = s.peak_gpus;
  j["min_capacity_ratio"] = JsonMeasurement(s.min_capacity_ratio);
  return j;
}

// "replace": a name with invalid UTF-8 must not make dump() throw.
std::string Dump(const OrderedJson& j) {
  return j.dump(2, ' ', false, OrderedJson::error_handler_t::replace) + "\n";
}

// ---- Parse ----------------------------------------------------------------

class TransitionReader : public JsonReader {
 public:
  using JsonReader::JsonReader;

  Result<Transition> ParseDocument(const Json& root) const;

 private:
  Status ParseGpuMap(const Json& j, Transition& t) const;
  Result<TransitionStep> ParseStep(const Json& j, const std::string& path) const;
  Result<TransitionSummary> ParseSummary(const Json& j) const;
};

// A B index as the format writes it: decimal digits, no sign, no leading
// zero, so that two spellings cannot name one GPU.
std::optional<int> CanonicalIndex(const std::string& key) {
  if (key.empty() || key.size() > 7 || (key.size() > 1 && key[0] == '0')) return std::nullopt;
  int value = 0;
  for (char c : key) {
    if (c < '0' || c > '9') return std::nullopt;
    value = value * 10 + (c - '0');
  }
  if (!limits::kClusterGpuIndex.Contains(value)) return std::nullopt;
  return value;
}

Status TransitionReader::ParseGpuMap(const Json& j, Transition& t) const {
  if (!j.is_object()) return Error("gpu_map", "expected an object, got " + DescribeJson(j));
  for (const auto& [key, value] : j.items()) {
    const std::optional<int> b = CanonicalIndex(key);
    if (!b) {
      return Error(JoinJsonPath("gpu_map", key),
                   fmt::format("expected a GPU index of B in decimal, {}",
                               limits::kClusterGpuIndex.Describe()));
    }
    TESSERA_ASSIGN_OR_RETURN(t.gpu_map[*b], IntIn(j, "gpu_map", key, limits::kClusterGpuIndex));
  }
  return Status::Ok();
}

Result<TransitionStep> TransitionReader::ParseStep(const Json& j, const std::string& path) const {
  if (!j.is_object()) return Error(path, "expected an object, got " + DescribeJson(j));
  if (!j.contains("action")) return Error(JoinJsonPath(path, "action"), "missing");
  TESSERA_ASSIGN_OR_RETURN(const std::string action_name, String(j, path, "action", true));
  const std::optional<StepAction> action = ActionNamed(action_name);
  if (!action) {
    return Error(JoinJsonPath(path, "action"),
                 fmt::format("expected \"create\", \"destroy\" or \"reconfigure\", got {}",
                             DescribeJson(j["action"])));
  }
  switch (*action) {
    case StepAction::kCreate:
      TESSERA_RETURN_IF_ERROR(Keys(j, path, kCreateKeys));
      break;
    case StepAction::kDestroy:
      TESSERA_RETURN_IF_ERROR(Keys(j, path, kDestroyKeys));
      break;
    case StepAction::kReconfigure:
      TESSERA_RETURN_IF_ERROR(Keys(j, path, kReconfigureKeys));
      break;
  }
  TransitionStep step;
  step.action = *action;
  TESSERA_ASSIGN_OR_RETURN(step.id, String(j, path, "id", true));
  TESSERA_ASSIGN_OR_RETURN(step.gpu, IntIn(j, path, "gpu", limits::kClusterGpuIndex));
  TESSERA_ASSIGN_OR_RETURN(step.profile, String(j, path, "profile", true));
  TESSERA_ASSIGN_OR_RETURN(step.start, Int(j, path, "start", 0));
  TESSERA_ASSIGN_OR_RETURN(step.service, String(j, path, "service", true));
  if (RunsService(step.action)) {
    TESSERA_ASSIGN_OR_RETURN(step.model, String(j, path, "model", true));
    TESSERA_ASSIGN_OR_RETURN(step.batch, IntIn(j, path, "batch", limits::kBatch));
    TESSERA_ASSIGN_OR_RETURN(step.procs, IntIn(j, path, "procs", limits::kProcs));
    TESSERA_ASSIGN_OR_RETURN(step.throughput_rps,
                             In(j, path, "throughput_rps", limits::kThroughputRps));
  }
  if (step.action == StepAction::kReconfigure) {
    TESSERA_ASSIGN_OR_RETURN(step.from_service, String(j, path, "from_service", true));
  }
  return step;
}

Result<TransitionSummary> TransitionReader::ParseSummary(const Json& j) const {
  const std::string path = "summary";
  TESSERA_RETURN_IF_ERROR(Keys(j, path, kSummaryKeys));
  TransitionSummary s;
  TESSERA_ASSIGN_OR_RETURN(s.steps, Int(j, path, "steps", 0));
  TESSERA_ASSIGN_OR_RETURN(s.phases, Int(j, path, "phases", 0));
  TESSERA_ASSIGN_OR_RETURN(s.gpus_touched, Int(j, path, "gpus_touched", 0));
  TESSERA_ASSIGN_OR_RETURN(s.peak_gpus, Int(j, path, "peak_gpus", 0));
  TESSERA_ASSIGN_OR_RETURN(s.min_capacity_ratio, Number(j, path, "min_capacity_ratio"));
  return s;
}

Result<Transition> TransitionReader::ParseDocument(const Json& root) const {
  TESSERA_RETURN_IF_ERROR(Keys(root, "", kTopKeys));
  TESSERA_ASSIGN_OR_RETURN(const std::string format, String(root, "", "format", true));
  if (format != kFormat) {
    return Error("format",
                 fmt::format("expected \"{}\", got {}", kFormat, DescribeJson(root["format"])));
  }
  TESSERA_ASSIGN_OR_RETURN(const int version, Int(root, "", "version", 0));
  if (version != kVersion) {
    return Error("version",
                 fmt::format("unsupported version {} (this Tessera reads {})", version, kVersion));
  }
  Transition t;
  TESSERA_ASSIGN_OR_RETURN(t.gpu, String(root, "", "gpu", true));
  TESSERA_ASSIGN_OR_RETURN(t.spare_gpus, IntIn(root, "", "spare_gpus", limits::kSpareGpus));
  TESSERA_RETURN_IF_ERROR(ParseGpuMap(root["gpu_map"], t));
  TESSERA_RETURN_IF_ERROR(Array(root, "", "phases"));
  const Json& phases = root["phases"];
  t.phases.resize(phases.size());
  for (size_t p = 0; p < phases.size(); ++p) {
    const std::string path = fmt::format("phases[{}]", p);
    TESSERA_RETURN_IF_ERROR(Keys(phases[p], path, kPhaseKeys));
    TESSERA_RETURN_IF_ERROR(Array(phases[p], path, "steps"));
    const Json& steps = phases[p]["steps"];
    t.phases[p].steps.reserve(steps.size());
    for (size_t s = 0; s < steps.size(); ++s) {
      TESSERA_ASSIGN_OR_RETURN(TransitionStep step,
                               ParseStep(steps[s], fmt::format("{}.steps[{}]", path, s)));
      t.phases[p].steps.push_back(std::move(step));
    }
  }
  TESSERA_ASSIGN_OR_RETURN(t.summary, ParseSummary(root["summary"]));
  return t;
}

// ---- Text -----------------------------------------------------------------

std::string Plural(long long n, std::string_view one, std::string_view many) {
  return fmt::format("{} {}", n, n == 1 ? one : many);
}

std::string Place(const TransitionStep& step) {
  return fmt::format("GPU {}  {}@{}", step.gpu, step.profile, step.start);
}

// What the instance runs after a create or reconfigure.
std::string Runs(const TransitionStep& step) {
  return fmt::format("{} ({}, batch {} x {}, {:g} req/s)", step.service, step.model, step.batch,
                     Plural(step.procs, "proc", "procs"), step.throughput_rps);
}

std::string StepLine(const TransitionStep& step, size_t id_width, size_t place_width) {
  std::string what;
  switch (step.action) {
    case StepAction::kCreate:
      what = Runs(step);
      break;
    case StepAction::kDestroy:
      what = step.service;
      break;
    case StepAction::kReconfigure:
      what = fmt::format("{} -> {}", step.from_service, Runs(step));
      break;
  }
  return fmt::format("  {:<{}}  {:<11}  {:<{}}  {}\n", step.id, id_width, ActionName(step.action),
                     Place(step), place_width, what);
}

}  // namespace

std::string FormatTransitionJson(const Transition& transition) {
  OrderedJson j;
  j["format"] = kFormat;
  j["version"] = kVersion;
  j["gpu"] = transition.gpu;
  j["spare_gpus"] = transition.spare_gpus;
  j["gpu_map"] = OrderedJson::object();
  for (const auto& [b, cluster] : transition.gpu_map) j["gpu_map"][std::to_string(b)] = cluster;
  j["phases"] = OrderedJson::array();
  for (const TransitionPhase& phase : transition.phases) {
    OrderedJson steps = OrderedJson::array();
    for (const TransitionStep& step : phase.steps) steps.push_back(StepJson(step));
    OrderedJson phase_json;
    phase_json["steps"] = std::move(steps);
    j["phases"].push_back(std::move(phase_json));
  }
  j["summary"] = SummaryJson(transition.summary);
  return Dump(j);
}

std::string FormatTransitionCheckJson(const TransitionCheck& check) {
  OrderedJson j;
  j["ok"] = check.ok();
  j["violations"] = check.violations;
  j["summary"] = SummaryJson(check.measured);
  return Dump(j);
}

Result<Transition> ParseTransitionJson(std::string_view text, std::string_view source) {
  // Syntax, duplicate keys and nesting depth first: the readers recurse.
  if (const std::string error = CheckJsonStructure(text); !error.empty()) {
    return Status::InvalidArgument(fmt::format("{}: {}", source, error));
  }
  const Json root = Json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (root.is_discarded()) return Status::InvalidArgument(fmt::format("{}: invalid JSON", source));
  return TransitionReader(source).ParseDocument(root);
}

std::string FormatTransitionSummary(const TransitionSummary& s) {
  return fmt::format("{}, {}, {} touched, peak {}, min capacity ratio {:.4g}",
                     Plural(s.steps, "step", "steps"), Plural(s.phases, "phase", "phases"),
                     Plural(s.gpus_touched, "GPU", "GPUs"), Plural(s.peak_gpus, "GPU", "GPUs"),
                     s.min_capacity_ratio);
}

std::string FormatTransitionText(const Transition& transition) {
  std::string out = fmt::format("transition on {}, {} spare {}\n", transition.gpu,
                                transition.spare_gpus, transition.spare_gpus == 1 ? "GPU" : "GPUs");
  if (!transition.gpu_map.empty()) {
    out += "GPUs of B on the cluster:";
    for (const auto& [b, cluster] : transition.gpu_map) out += fmt::format(" {}->{}", b, cluster);
    out += "\n";
  }
  size_t id_width = 0;
  size_t place_width = 0;
  for (const TransitionPhase& phase : transition.phases) {
    for (const TransitionStep& step : phase.steps) {
      id_width = std::max(id_width, step.id.size());
      place_width = std::max(place_width, Place(step).size());
    }
  }
  for (size_t p = 0; p < transition.phases.size(); ++p) {
    const TransitionPhase& phase = transition.phases[p];
    out += fmt::format("phase {} ({})\n", p + 1,
                       Plural(static_cast<long long>(phase.steps.size()), "step", "steps"));
    for (const TransitionStep& step : phase.steps) out += StepLine(step, id_width, place_width);
  }
  out += "summary: " + FormatTransitionSummary(transition.summary) + "\n";
  return out;
}

}  // namespace tessera
