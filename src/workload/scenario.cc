#include "tessera/scenario.h"

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <filesystem>
#include <map>
#include <optional>
#include <set>
#include <span>
#include <string>
#include <vector>

#include "tessera/gpu_catalog.h"
#include "tessera/profile_table.h"
#include "tessera/util/input_limits.h"
#include "tessera/util/text_io.h"
#include "util/utf8.h"
#include "util/yaml_tree.h"

namespace tessera {
namespace {

namespace fs = std::filesystem;

constexpr std::array<std::string_view, 4> kTopKeys = {"name", "gpu", "pool", "services"};
constexpr std::array<std::string_view, 3> kPoolKeys = {"gpu", "price_per_hour", "max_count"};
constexpr std::array<std::string_view, 4> kServiceKeys = {"name", "model", "rate_rps", "slo_ms"};

// ---- YAML -----------------------------------------------------------------

using NodeId = YamlTree::NodeId;
constexpr NodeId kNone = YamlTree::kNone;

// Reads a parsed YAML document into a Scenario. Every error names the
// source, the 1-based line and the field.
class YamlReader {
 public:
  YamlReader(const YamlTree& tree, std::string_view source) : tree_(tree), source_(source) {}

  Result<Scenario> Document(NodeId root) const;

 private:
  int LineOf(NodeId node) const { return tree_.line(node); }
  std::string TypeName(NodeId node) const {
    switch (tree_.kind(node)) {
      case YamlTree::Kind::kNull:
        return "null";
      case YamlTree::Kind::kScalar:
        return "the scalar " + QuoteForMessage(tree_.scalar(node));
      case YamlTree::Kind::kSequence:
        return "a sequence";
      case YamlTree::Kind::kMap:
        return "a mapping";
    }
    return "nothing";
  }

  Status Error(int line, std::string_view field, std::string_view what) const {
    return FieldError(source_, line, field, what);
  }
  Status CheckKeys(NodeId map, std::span<const std::string_view> allowed, int line) const;
  Result<std::string> String(NodeId node, std::string_view field) const;
  Result<double> Number(NodeId node, std::string_view field, const InputRange& range) const;
  Result<Service> ParseService(NodeId node, size_t index) const;
  Status ParseServices(NodeId node, Scenario& scenario) const;
  Result<std::string> GpuName(NodeId node) const;
  Result<PoolEntry> ParsePoolEntry(NodeId node) const;
  Status ParsePool(NodeId node, Scenario& scenario) const;

  const YamlTree& tree_;
  std::string_view source_;
};

// Every key is a known, unique string: a typo is an error, never ignored.
Status YamlReader::CheckKeys(NodeId map, std::span<const std::string_view> allowed,
                             int line) const {
  std::set<std::string_view> seen;
  const std::span<const NodeId> entries = tree_.children(map);
  for (size_t i = 0; i + 1 < entries.size(); i += 2) {
    const NodeId key_node = entries[i];
    const int key_line = key_node != kNone ? LineOf(key_node) : line;
    if (!tree_.IsScalar(key_node)) {
      return Error(key_line, "(key)",
                   fmt::format("keys must be strings, got {}", TypeName(key_node)));
    }
    const std::string_view key = tree_.scalar(key_node);
    if (std::find(allowed.begin(), allowed.end(), key) == allowed.end()) {
      return Error(key_line, key,
                   fmt::format("unknown key (expected one of: {})", fmt::join(allowed, ", ")));
    }
    if (!seen.insert(key).second) return Error(key_line, key, "duplicate key");
  }
  return Status::Ok();
}

// A string of valid UTF-8: a name that FormatScenarioYaml could not write
// back byte for byte is rejected, not altered.
Result<std::string> YamlReader::String(NodeId node, std::string_view field) const {
  if (!tree_.IsScalar(node)) {
    return Error(LineOf(node), field, "expected a string, got " + TypeName(node));
  }
  if (!IsValidUtf8(tree_.scalar(node))) {
    return Error(LineOf(node), field, Utf8Error(tree_.scalar(node)));
  }
  return std::string(tree_.scalar(node));
}

// A plain (unquoted) number in `range` (input_limits.h): a quoted "829" is a
// string in YAML.
Result<double> YamlReader::Number(NodeId node, std::string_view field,
                                  const InputRange& range) const {
  const int at = LineOf(node);
  if (!tree_.IsScalar(node) || tree_.NonPlain(node)) {
    const std::string got = tree_.IsScalar(node)
                                ? "the quoted string " + QuoteForMessage(tree_.scalar(node))
                                : TypeName(node);
    return Error(at, field, "expected a number, got " + got);
  }
  const std::optional<double> v = ToDouble(tree_.scalar(node));
  if (!v || !range.Contains(*v)) {
    return Error(at, field, OutOfRange(range, QuoteForMessage(tree_.scalar(node))));
  }
  return *v;
}

Result<Service> YamlReader::ParseService(NodeId node, size_t index) const {
  const int line = LineOf(node);
  if (!tree_.IsMap(node)) {
    return Error(line, "services",
                 fmt::format("item {} must be a mapping with keys {}, got {}", index + 1,
                             fmt::join(kServiceKeys, ", "), TypeName(node)));
  }
  TESSERA_RETURN_IF_ERROR(CheckKeys(node, kServiceKeys, line));
  for (std::string_view key : kServiceKeys) {
    if (tree_.Get(node, key) == kNone) return Error(line, key, "missing");
  }
  Service s;
  s.line = line;
  const NodeId name = tree_.Get(node, "name");
  TESSERA_ASSIGN_OR_RETURN(s.name, String(name, "name"));
  if (s.name.empty()) return Error(LineOf(name), "name", "must not be empty");
  const NodeId model_node = tree_.Get(node, "model");
  TESSERA_ASSIGN_OR_RETURN(std::string model, String(model_node, "model"));
  s.model = CanonicalModelName(model);
  if (s.model.empty()) return Error(LineOf(model_node), "model", "must not be empty");
  TESSERA_ASSIGN_OR_RETURN(s.rate_rps,
                           Number(tree_.Get(node, "rate_rps"), "rate_rps", limits::kRateRps));
  TESSERA_ASSIGN_OR_RETURN(s.slo_ms, Number(tree_.Get(node, "slo_ms"), "slo_ms", limits::kSloMs));
  return s;
}

Status YamlReader::ParseServices(NodeId node, Scenario& scenario) const {
  const int at = LineOf(node);
  if (!tree_.IsSequence(node)) {
    return Error(at, "services", "expected a sequence of services, got " + TypeName(node));
  }
  const std::span<const NodeId> items = tree_.children(node);
  if (items.empty()) return Error(at, "services", "empty scenario: no service");
  if (!limits::kServices.Contains(static_cast<double>(items.size()))) {
    return Error(at, "services",
                 fmt::format("{} services; a scenario holds {}", items.size(),
                             limits::kServices.Describe()));
  }
  std::map<std::string, int> first_line;
  scenario.services.reserve(items.size());
  for (size_t i = 0; i < items.size(); ++i) {
    TESSERA_ASSIGN_OR_RETURN(Service s, ParseService(items[i], i));
    const auto [it, inserted] = first_line.emplace(s.name, s.line);
    if (!inserted) {
      return Error(LineOf(tree_.Get(items[i], "name")), "name",
                   fmt::format("duplicate service name {} (first at line {})",
                               QuoteForMessage(s.name), it->second));
    }
    scenario.services.push_back(std::move(s));
  }
  return Status::Ok();
}

// A catalog GPU name, as the catalog spells it.
Result<std::string> YamlReader::GpuName(NodeId node) const {
  TESSERA_ASSIGN_OR_RETURN(std::string gpu, String(node, "gpu"));
  Result<const GpuModel*> model = FindGpu(gpu);
  if (model.ok()) return (*model)->name;
  return Error(LineOf(node), "gpu", model.status().message());
}

Result<PoolEntry> YamlReader::ParsePoolEntry(NodeId node) const {
  const int line = LineOf(node);
  if (!tree_.IsMap(node)) {
    return Error(line, "pool",
                 fmt::format("each entry is a mapping with keys {}, got {}",
                             fmt::join(kPoolKeys, ", "), TypeName(node)));
  }
  TESSERA_RETURN_IF_ERROR(CheckKeys(node, kPoolKeys, line));
  for (std::string_view key : {"gpu", "price_per_hour"}) {
    if (tree_.Get(node, key) == kNone) return Error(line, key, "missing");
  }
  PoolEntry entry;
  entry.line = line;
  TESSERA_ASSIGN_OR_RETURN(entry.gpu, GpuName(tree_.Get(node, "gpu")));
  TESSERA_ASSIGN_OR_RETURN(entry.price_per_hour, Number(tree_.Get(node, "price_per_hour"),
                                                        "price_per_hour", limits::kPricePerHour));
  if (const NodeId max_count = tree_.Get(node, "max_count"); max_count != kNone) {
    TESSERA_ASSIGN_OR_RETURN(const double cap, Number(max_count, "max_count", limits::kMaxCount));
    entry.max_count = static_cast<int>(cap);
  }
  return entry;
}

Status YamlReader::ParsePool(NodeId node, Scenario& scenario) const {
  const int at = LineOf(node);
  if (!tree_.IsSequence(node) || tree_.size(node) == 0) {
    return Error(at, "pool",
                 "expected a non-empty sequence of {gpu, price_per_hour}, got " + TypeName(node));
  }
  for (const NodeId item : tree_.children(node)) {
    TESSERA_ASSIGN_OR_RETURN(PoolEntry entry, ParsePoolEntry(item));
    for (const PoolEntry& earlier : scenario.pool) {
      if (earlier.gpu == entry.gpu) {
        return Error(entry.line, "gpu",
                     fmt::format("{} is listed twice (first at line {})", entry.gpu, earlier.line));
      }
    }
    scenario.pool.push_back(std::move(entry));
  }
  return Status::Ok();
}

Result<Scenario> YamlReader::Document(NodeId root) const {
  const int line = LineOf(root);
  if (!tree_.IsMap(root)) {
    return Error(line, "services",
                 fmt::format("a scenario is a mapping with keys {}, got {}",
                             fmt::join(kTopKeys, ", "), TypeName(root)));
  }
  TESSERA_RETURN_IF_ERROR(CheckKeys(root, kTopKeys, line));
  Scenario scenario;
  scenario.source = std::string(source_);
  if (const NodeId name = tree_.Get(root, "name"); name != kNone) {
    TESSERA_ASSIGN_OR_RETURN(scenario.name, String(name, "name"));
  }
  const NodeId gpu = tree_.Get(root, "gpu");
  const NodeId pool = tree_.Get(root, "pool");
  if (gpu != kNone && pool != kNone) {
    return Error(LineOf(pool), "pool",
                 "give either gpu (one model) or pool (several, priced), not both");
  }
  if (gpu != kNone) {
    TESSERA_ASSIGN_OR_RETURN(scenario.gpu, GpuName(gpu));
    scenario.gpu_line = LineOf(gpu);
  }
  if (pool != kNone) TESSERA_RETURN_IF_ERROR(ParsePool(pool, scenario));
  const NodeId services = tree_.Get(root, "services");
  if (services == kNone) return Error(line, "services", "missing");
  TESSERA_RETURN_IF_ERROR(ParseServices(services, scenario));
  return scenario;
}

// ---- YAML writer ----------------------------------------------------------

// A number in its shortest form that reads back exactly ("1463", "138.5").
// Emitted as a string, which yaml-cpp writes plain when it needs no quotes: a
// double it would write with 17 digits ("0.10000000000000001").
std::string Number(double value) { return fmt::format("{}", value); }

void EmitPool(const std::vector<PoolEntry>& pool, YAML::Emitter& out) {
  out << YAML::Key << "pool" << YAML::Value << YAML::BeginSeq;
  for (const PoolEntry& entry : pool) {
    out << YAML::Flow << YAML::BeginMap << YAML::Key << "gpu" << YAML::Value << entry.gpu
        << YAML::Key << "price_per_hour" << YAML::Value << Number(entry.price_per_hour);
    if (entry.max_count > 0) out << YAML::Key << "max_count" << YAML::Value << entry.max_count;
    out << YAML::EndMap;
  }
  out << YAML::EndSeq;
}

void EmitServices(const std::vector<Service>& services, YAML::Emitter& out) {
  out << YAML::Key << "services" << YAML::Value << YAML::BeginSeq;
  for (const Service& s : services) {
    out << YAML::Flow << YAML::BeginMap << YAML::Key << "name" << YAML::Value << s.name << YAML::Key
        << "model" << YAML::Value << s.model << YAML::Key << "rate_rps" << YAML::Value
        << Number(s.rate_rps) << YAML::Key << "slo_ms" << YAML::Value << Number(s.slo_ms)
        << YAML::EndMap;
  }
  out << YAML::EndSeq;
}

// ---- ParvaGPU SLO files ---------------------------------------------------

// One SLO file: per row, per model column, the value or nullopt when absent.
struct SloFile {
  std::string path;
  std::vector<std::vector<std::optional<double>>> rows;
};

// Absent (N/A or 0), or a number in `range` (the file's rates or SLOs).
// `cell` is trimmed of spaces and tabs (SplitCsvFields does it).
Result<std::optional<double>> ParseSloCell(std::string_view cell, std::string_view path, int line,
                                           std::string_view column, const InputRange& range) {
  if (cell == "N/A") return std::optional<double>();
  const std::optional<double> v = ToDouble(cell);
  // The artifact reads 0 as "not deployed in this row".
  if (v && *v == 0) return std::optional<double>();
  if (!v || !range.Contains(*v)) {
    return FieldError(path, line, column,
                      fmt::format("must be N/A, 0 (absent) or {}, got {}", range.Describe(),
                                  QuoteForMessage(cell)));
  }
  return v;
}

// Row lines of an SLO file: CRLF and a missing final newline accepted;
// trailing blank lines ignored, blank lines in between are errors (they would
// renumber the rows). A byte-order mark is kept: the first cell then does not
// read as a number and is reported.
std::vector<TextLine> SloLines(std::string_view text) {
  std::vector<TextLine> lines = SplitLines(text, ByteOrderMark::kKeep);
  while (!lines.empty() && IsBlank(lines.back().text)) lines.pop_back();
  return lines;
}

Result<SloFile> ReadSloFile(const std::string& path, const InputRange& range) {
  TESSERA_ASSIGN_OR_RETURN(std::string text, ReadTextFile(path));
  const std::vector<std::string>& columns = ParvaModelColumns();
  SloFile file{path, {}};
  for (const TextLine& line : SloLines(text)) {
    const std::vector<std::string_view> cells = SplitCsvFields(line.text);
    if (cells.size() != columns.size()) {
      return FieldError(
          path, line.number, "row",
          fmt::format("expected {} columns ({}), got {}: {}", columns.size(),
                      fmt::join(columns, ","), cells.size(), QuoteForMessage(line.text)));
    }
    std::vector<std::optional<double>> row;
    for (size_t c = 0; c < cells.size(); ++c) {
      TESSERA_ASSIGN_OR_RETURN(std::optional<double> v,
                               ParseSloCell(cells[c], path, line.number, columns[c], range));
      row.push_back(v);
    }
    file.rows.push_back(std::move(row));
  }
  return file;
}

// Both files must list the same rows and the same services in each row.
Status CheckSloFilesAgree(const SloFile& rates, const SloFile& slos) {
  if (rates.rows.size() != slos.rows.size()) {
    return Status::InvalidArgument(
        fmt::format("{}: {} rows but {} has {}; both files must describe the same scenarios",
                    slos.path, slos.rows.size(), rates.path, rates.rows.size()));
  }
  const std::vector<std::string>& columns = ParvaModelColumns();
  for (size_t r = 0; r < rates.rows.size(); ++r) {
    for (size_t c = 0; c < columns.size(); ++c) {
      if (rates.rows[r][c].has_value() == slos.rows[r][c].has_value()) continue;
      const bool has_rate = rates.rows[r][c].has_value();
      return FieldError(slos.path, static_cast<int>(r) + 1, columns[c],
                        fmt::format("{} here but {} (N/A or 0) in {}:{}",
                                    has_rate ? "absent (N/A or 0)" : "present",
                                    has_rate ? "present" : "absent", rates.path, r + 1));
    }
  }
  return Status::Ok();
}

}  // namespace

Result<Scenario> ParseScenarioYaml(std::string_view text, std::string_view source) {
  // One parse: syntax, one document and nesting depth are checked on the way.
  TESSERA_ASSIGN_OR_RETURN(YamlTree tree, ParseYamlDocument(text, source, "a scenario file"));
  if (tree.root() == YamlTree::kNone || tree.IsNull(tree.root())) {
    return FieldError(source, 1, "services", "empty scenario: no services");
  }
  TESSERA_ASSIGN_OR_RETURN(Scenario scenario, YamlReader(tree, source).Document(tree.root()));
  TESSERA_RETURN_IF_ERROR(ValidateScenario(scenario));
  return scenario;
}

Result<Scenario> LoadScenarioYaml(const std::string& path) {
  TESSERA_ASSIGN_OR_RETURN(std::string text, ReadTextFile(path));
  return ParseScenarioYaml(text, path);
}

std::string FormatScenarioYaml(const Scenario& scenario) {
  YAML::Emitter out;
  out << YAML::BeginMap;
  if (!scenario.name.empty()) out << YAML::Key << "name" << YAML::Value << scenario.name;
  if (!scenario.gpu.empty()) out << YAML::Key << "gpu" << YAML::Value << scenario.gpu;
  if (!scenario.pool.empty()) EmitPool(scenario.pool, out);
  EmitServices(scenario.services, out);
  out << YAML::EndMap;
  return std::string(out.c_str()) + "\n";
}

const std::vector<std::string>& ParvaModelColumns() {
  // The order of the artifact's prof_data file names: "resnet50" after "resnet152".
  static const std::vector<std::string> kColumns = {
      "bert",      "densenet121", "densenet169", "densenet201", "inceptionv3", "mobilenetv2",
      "resnet101", "resnet152",   "resnet50",    "vgg16",       "vgg19"};
  return kColumns;
}

Result<Scenario> ImportParvaSloRow(const std::string& dir, int row) {
  TESSERA_ASSIGN_OR_RETURN(
      SloFile rates, ReadSloFile((fs::path(dir) / "SLO_req_rate.csv").string(), limits::kRateRps));
  TESSERA_ASSIGN_OR_RETURN(
      SloFile slos, ReadSloFile((fs::path(dir) / "SLO_latency.csv").string(), limits::kSloMs));
  TESSERA_RETURN_IF_ERROR(CheckSloFilesAgree(rates, slos));
  if (row < 1 || row > static_cast<int>(rates.rows.size())) {
    return Status::InvalidArgument(fmt::format("{}: row {} is out of range: the file has {} rows",
                                               rates.path, row, rates.rows.size()));
  }
  Scenario scenario;
  scenario.name = fmt::format("ParvaGPU row {}", row);
  scenario.gpu = "a100-80gb";  // the artifact's profiles are from an A100 80GB
  scenario.source = rates.path;
  const std::vector<std::string>& columns = ParvaModelColumns();
  for (size_t c = 0; c < columns.size(); ++c) {
    const std::optional<double> rate = rates.rows[row - 1][c];
    if (!rate) continue;
    // The SLO keeps its fraction (418.5): truncating is a planner rule.
    scenario.services.push_back(
        {columns[c], CanonicalModelName(columns[c]), *rate, *slos.rows[row - 1][c], row});
  }
  if (scenario.services.empty()) {
    return FieldError(rates.path, row, "row",
                      "empty scenario: every column is N/A or 0 in this row");
  }
  return scenario;
}

std::string ServiceLocation(const Scenario& scenario, int line) {
  const std::string file = scenario.source.empty() ? "scenario" : scenario.source;
  return line > 0 ? fmt::format("{}:{}", file, line) : file;
}

Status ValidateScenario(const Scenario& scenario) {
  if (scenario.services.empty()) {
    return Status::InvalidArgument(ServiceLocation(scenario, 0) +
                                   ": field 'services': empty scenario");
  }
  if (!limits::kServices.Contains(static_cast<double>(scenario.services.size()))) {
    return Status::InvalidArgument(fmt::format(
        "{}: field 'services': {} services; a scenario holds {}", ServiceLocation(scenario, 0),
        scenario.services.size(), limits::kServices.Describe()));
  }
  if (!IsValidUtf8(scenario.name)) {
    return Status::InvalidArgument(fmt::format("{}: field 'name': {}", ServiceLocation(scenario, 0),
                                               Utf8Error(scenario.name)));
  }
  for (const PoolEntry& entry : scenario.pool) {
    const std::string at = ServiceLocation(scenario, entry.line);
    if (!limits::kPricePerHour.Contains(entry.price_per_hour)) {
      return Status::InvalidArgument(
          fmt::format("{}: field 'price_per_hour': {}", at,
                      OutOfRange(limits::kPricePerHour, entry.price_per_hour)));
    }
    if (entry.max_count != 0 && !limits::kMaxCount.Contains(entry.max_count)) {
      return Status::InvalidArgument(fmt::format("{}: field 'max_count': {}", at,
                                                 OutOfRange(limits::kMaxCount, entry.max_count)));
    }
  }
  std::map<std::string, int> first_line;
  for (const Service& s : scenario.services) {
    const std::string at = ServiceLocation(scenario, s.line);
    if (s.name.empty()) return Status::InvalidArgument(at + ": field 'name': must not be empty");
    if (s.model.empty()) return Status::InvalidArgument(at + ": field 'model': must not be empty");
    for (const auto& [field, text] : {std::pair{"name", &s.name}, std::pair{"model", &s.model}}) {
      if (!IsValidUtf8(*text)) {
        return Status::InvalidArgument(
            fmt::format("{}: field '{}': {}", at, field, Utf8Error(*text)));
      }
    }
    if (!limits::kRateRps.Contains(s.rate_rps)) {
      return Status::InvalidArgument(
          fmt::format("{}: field 'rate_rps': {}", at, OutOfRange(limits::kRateRps, s.rate_rps)));
    }
    if (!limits::kSloMs.Contains(s.slo_ms)) {
      return Status::InvalidArgument(
          fmt::format("{}: field 'slo_ms': {}", at, OutOfRange(limits::kSloMs, s.slo_ms)));
    }
    const auto [it, inserted] = first_line.emplace(s.name, s.line);
    if (!inserted) {
      return Status::InvalidArgument(
          fmt::format("{}: field 'name': duplicate service name {} (first at {})", at,
                      QuoteForMessage(s.name), ServiceLocation(scenario, it->second)));
    }
  }
  return Status::Ok();
}

Scenario ReplicateScenario(const Scenario& scenario, int copies) {
  Scenario out = scenario;
  // Copy-major order: copy k of every service, then copy k + 1.
  for (int k = 2; k <= copies; ++k) {
    for (const Service& s : scenario.services) {
      Service copy = s;
      copy.name = fmt::format("{}#{}", s.name, k);
      out.services.push_back(std::move(copy));
    }
  }
  return out;
}

}  // namespace tessera
