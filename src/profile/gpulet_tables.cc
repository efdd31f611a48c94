#include "tessera/profile/gpulet_tables.h"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <nlohmann/json.hpp>

#include "tessera/profile_table.h"
#include "tessera/util/input_limits.h"
#include "tessera/util/text_io.h"
#include "util/json_structure.h"
#include "util/least_squares.h"

namespace tessera {
namespace {

using Json = nlohmann::json;

constexpr int kMaxBatchKey = static_cast<int>(limits::kBatch.max);

// One of a model's four tables: its key in the file, where it lives, and
// the range of its values (input_limits.h).
struct TableSpec {
  const char* key;
  GpuletTable GpuletModelTables::*member;
  const InputRange& range;
};

constexpr TableSpec kTables[] = {
    {"latency", &GpuletModelTables::latency_ms, limits::kLatencyMs},
    {"throughput", &GpuletModelTables::throughput_rps, limits::kThroughputRps},
    {"l2cache", &GpuletModelTables::l2_pct, limits::kUtilisationPct},
    {"dram", &GpuletModelTables::dram_pct, limits::kUtilisationPct},
};

// `s` as a whole number in [lo, hi] (decimal digits only), or nullopt.
std::optional<int> WholeKey(std::string_view s, int lo, int hi) {
  if (s.empty() || s.front() < '0' || s.front() > '9') return std::nullopt;
  int v = 0;
  const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || end != s.data() + s.size() || v < lo || v > hi) return std::nullopt;
  return v;
}

// A JSON number that is a whole number in [lo, hi], or nullopt.
std::optional<int> WholeNumber(const Json& j, int lo, int hi) {
  if (!j.is_number()) return std::nullopt;
  const double x = j.get<double>();
  if (!std::isfinite(x) || x != std::floor(x) || x < lo || x > hi) return std::nullopt;
  return static_cast<int>(x);
}

Status ReadTable(const Json& j, const TableSpec& spec, const std::string& path,
                 std::string_view source, int line, GpuletTable& table) {
  if (!j.is_object()) return FieldError(source, line, path, "expected an object of batches");
  for (const auto& [batch_key, by_resource] : j.items()) {
    const std::string batch_path = path + "." + batch_key;
    const std::optional<int> batch = WholeKey(batch_key, 1, kMaxBatchKey);
    if (!batch) {
      return FieldError(source, line, batch_path,
                        fmt::format("batch must be a whole number in [1, {}], got {}", kMaxBatchKey,
                                    QuoteForMessage(batch_key)));
    }
    if (!by_resource.is_object()) {
      return FieldError(source, line, batch_path, "expected an object of resources");
    }
    for (const auto& [resource_key, value] : by_resource.items()) {
      const std::string value_path = batch_path + "." + resource_key;
      const std::optional<int> resource = WholeKey(resource_key, 1, 100);
      if (!resource) {
        return FieldError(source, line, value_path,
                          fmt::format("resource must be a whole number in [1, 100], got {}",
                                      QuoteForMessage(resource_key)));
      }
      if (!value.is_number()) return FieldError(source, line, value_path, "expected a number");
      const double x = value.get<double>();
      if (!spec.range.Contains(x)) {
        return FieldError(source, line, value_path, OutOfRange(spec.range, x));
      }
      if (!table.emplace(std::make_pair(*batch, *resource), x).second) {
        return FieldError(source, line, value_path, "given twice");
      }
    }
  }
  return Status::Ok();
}

Status ReadInterferenceRows(const Json& j, std::string_view source, int line,
                            std::vector<GpuletInterferenceRow>& rows) {
  constexpr char kPath[] = "interference.latency";
  if (!j.is_array()) return FieldError(source, line, kPath, "expected an array of rows");
  for (size_t i = 0; i < j.size(); ++i) {
    const Json& row = j[i];
    const std::string path = fmt::format("{}[{}]", kPath, i);
    if (!row.is_array() || row.size() != 7) {
      return FieldError(source, line, path, "expected [m1, m2, b1, b2, r1, lat1_ms, lat2_ms]");
    }
    auto element = [&](int k) { return fmt::format("{}[{}]", path, k); };
    GpuletInterferenceRow out;
    out.line = line;
    for (int k = 0; k < 2; ++k) {
      if (!row[k].is_string() || row[k].get_ref<const std::string&>().empty()) {
        return FieldError(source, line, element(k), "expected a model name");
      }
      (k == 0 ? out.model1 : out.model2) = CanonicalModelName(row[k].get_ref<const std::string&>());
    }
    for (int k = 2; k < 4; ++k) {
      const std::optional<int> batch = WholeNumber(row[k], 1, kMaxBatchKey);
      if (!batch) {
        return FieldError(source, line, element(k),
                          fmt::format("batch must be a whole number in [1, {}]", kMaxBatchKey));
      }
      (k == 2 ? out.batch1 : out.batch2) = *batch;
    }
    const std::optional<int> r1 = WholeNumber(row[4], 1, 99);
    if (!r1)
      return FieldError(source, line, element(4), "resource must be a whole number in [1, 99]");
    out.resource1_pct = *r1;
    for (int k = 5; k < 7; ++k) {
      const double x = row[k].is_number() ? row[k].get<double>() : NAN;
      if (!limits::kLatencyMs.Contains(x)) {
        return FieldError(source, line, element(k), "latency " + OutOfRange(limits::kLatencyMs, x));
      }
      (k == 5 ? out.latency1_ms : out.latency2_ms) = x;
    }
    rows.push_back(std::move(out));
  }
  return Status::Ok();
}

Status ReadInterference(const Json& j, std::string_view source, int line,
                        std::vector<GpuletInterferenceRow>& rows) {
  if (!j.is_object()) return FieldError(source, line, "interference", "expected an object");
  for (const auto& [key, value] : j.items()) {
    if (key == "latency") {
      TESSERA_RETURN_IF_ERROR(ReadInterferenceRows(value, source, line, rows));
    } else if (key != "std") {  // "std": the rows' standard deviations, ignored
      return FieldError(source, line, "interference." + key,
                        "unknown key (expected latency or std)");
    }
  }
  return Status::Ok();
}

}  // namespace

std::optional<double> GpuletLookup(const GpuletTable& table, int batch, int resource_pct) {
  const auto it = table.find({batch, resource_pct});
  if (it == table.end()) return std::nullopt;
  return it->second;
}

const GpuletModelTables* GpuletTables::Find(std::string_view model) const {
  for (const GpuletModelTables& m : models) {
    if (m.model == model) return &m;
  }
  return nullptr;
}

std::optional<double> GpuletTables::LatencyMs(std::string_view model, int batch,
                                              int resource_pct) const {
  const GpuletModelTables* m = Find(model);
  return m == nullptr ? std::nullopt : GpuletLookup(m->latency_ms, batch, resource_pct);
}

std::optional<double> GpuletTables::ThroughputRps(std::string_view model, int batch,
                                                  int resource_pct) const {
  const GpuletModelTables* m = Find(model);
  return m == nullptr ? std::nullopt : GpuletLookup(m->throughput_rps, batch, resource_pct);
}

std::optional<double> GpuletTables::L2Pct(std::string_view model, int batch,
                                          int resource_pct) const {
  const GpuletModelTables* m = Find(model);
  return m == nullptr ? std::nullopt : GpuletLookup(m->l2_pct, batch, resource_pct);
}

std::optional<double> GpuletTables::DramPct(std::string_view model, int batch,
                                            int resource_pct) const {
  const GpuletModelTables* m = Find(model);
  return m == nullptr ? std::nullopt : GpuletLookup(m->dram_pct, batch, resource_pct);
}

Result<GpuletTables> ParseGpuletTables(std::string_view text, std::string_view source) {
  GpuletTables out;
  for (const TextLine& line : SplitLines(text, ByteOrderMark::kStrip)) {
    if (IsBlank(line.text)) continue;
    // Syntax (with its position), duplicate keys and nesting depth first.
    if (const std::string error = CheckJsonStructure(line.text); !error.empty()) {
      return Status::InvalidArgument(fmt::format("{}:{}: {}", source, line.number, error));
    }
    const Json root = Json::parse(line.text, nullptr, /*allow_exceptions=*/false);
    if (root.is_discarded()) {
      return Status::InvalidArgument(fmt::format("{}:{}: invalid JSON", source, line.number));
    }
    if (!root.is_object()) {
      return Status::InvalidArgument(
          fmt::format("{}:{}: expected a JSON object", source, line.number));
    }
    for (const auto& [key, value] : root.items()) {
      if (key == "interference") {
        TESSERA_RETURN_IF_ERROR(ReadInterference(value, source, line.number, out.interference));
        continue;
      }
      if (!value.is_object()) {
        return FieldError(source, line.number, key,
                          "expected an object of tables (latency, throughput, l2cache, dram)");
      }
      const std::string model = CanonicalModelName(key);
      if (model.empty()) return FieldError(source, line.number, key, "empty model name");
      GpuletModelTables* tables = nullptr;
      for (GpuletModelTables& m : out.models) {
        if (m.model == model) tables = &m;
      }
      if (tables == nullptr) {
        tables = &out.models.emplace_back();
        tables->model = model;
        tables->line = line.number;
      }
      for (const auto& [table_key, table] : value.items()) {
        const TableSpec* spec = nullptr;
        for (const TableSpec& s : kTables) {
          if (table_key == s.key) spec = &s;
        }
        if (spec == nullptr) {
          return FieldError(source, line.number, key + "." + table_key,
                            "unknown table (expected latency, throughput, l2cache or dram)");
        }
        TESSERA_RETURN_IF_ERROR(ReadTable(table, *spec, key + "." + table_key, source, line.number,
                                          (*tables).*(spec->member)));
      }
    }
  }
  if (out.models.empty()) {
    return Status::InvalidArgument(fmt::format("{}: no model tables", source));
  }
  for (const GpuletModelTables& m : out.models) {
    for (const TableSpec& s : kTables) {
      if ((m.*(s.member)).empty()) {
        return FieldError(source, m.line, m.model + "." + s.key, "missing or empty");
      }
    }
  }
  return out;
}

Result<GpuletTables> LoadGpuletTables(const std::string& path) {
  TESSERA_ASSIGN_OR_RETURN(std::string text, ReadTextFile(path));
  return ParseGpuletTables(text, path);
}

// ---- Interference -------------------------------------------------------------

namespace {

// The utilisation table of `model` at (batch, resource), the 80% entry
// standing in for a 100% one the table lacks.
std::optional<double> Utilisation(const GpuletTables& tables, std::string_view model, int batch,
                                  int resource_pct, GpuletTable GpuletModelTables::*member) {
  const GpuletModelTables* m = tables.Find(model);
  if (m == nullptr) return std::nullopt;
  std::optional<double> v = GpuletLookup(m->*member, batch, resource_pct);
  if (!v && resource_pct == 100) v = GpuletLookup(m->*member, batch, 80);
  return v;
}

}  // namespace

std::optional<double> GpuletL2Pct(const GpuletTables& tables, std::string_view model, int batch,
                                  int resource_pct) {
  return Utilisation(tables, model, batch, resource_pct, &GpuletModelTables::l2_pct);
}

std::optional<double> GpuletDramPct(const GpuletTables& tables, std::string_view model, int batch,
                                    int resource_pct) {
  return Utilisation(tables, model, batch, resource_pct, &GpuletModelTables::dram_pct);
}

double GpuletInterference::Factor(double l2_sum_pct, double dram_sum_pct) const {
  return std::max(1.0, 1 + c[0] + c[1] * l2_sum_pct + c[2] * dram_sum_pct);
}

std::optional<double> GpuletInterference::Predict(const GpuletTables& tables,
                                                  std::string_view model_i, int batch_i,
                                                  int resource_i, std::string_view model_j,
                                                  int batch_j, int resource_j) const {
  const std::optional<double> solo = tables.LatencyMs(model_i, batch_i, resource_i);
  const std::optional<double> l2_i = GpuletL2Pct(tables, model_i, batch_i, resource_i);
  const std::optional<double> l2_j = GpuletL2Pct(tables, model_j, batch_j, resource_j);
  const std::optional<double> dram_i = GpuletDramPct(tables, model_i, batch_i, resource_i);
  const std::optional<double> dram_j = GpuletDramPct(tables, model_j, batch_j, resource_j);
  if (!solo || !l2_i || !l2_j || !dram_i || !dram_j) return std::nullopt;
  return *solo * Factor(*l2_i + *l2_j, *dram_i + *dram_j);
}

GpuletInterference FitGpuletInterference(const GpuletTables& tables) {
  struct Sample {
    double l2_sum, dram_sum, solo_ms, measured_ms;
  };
  GpuletInterference out;
  std::vector<Sample> samples;
  for (const GpuletInterferenceRow& row : tables.interference) {
    const std::optional<double> solo1 = tables.LatencyMs(row.model1, row.batch1, row.resource1_pct);
    const std::optional<double> solo2 =
        tables.LatencyMs(row.model2, row.batch2, row.resource2_pct());
    const std::optional<double> l2_1 =
        GpuletL2Pct(tables, row.model1, row.batch1, row.resource1_pct);
    const std::optional<double> l2_2 =
        GpuletL2Pct(tables, row.model2, row.batch2, row.resource2_pct());
    const std::optional<double> dram1 =
        GpuletDramPct(tables, row.model1, row.batch1, row.resource1_pct);
    const std::optional<double> dram2 =
        GpuletDramPct(tables, row.model2, row.batch2, row.resource2_pct());
    if (!solo1 || !solo2 || !l2_1 || !l2_2 || !dram1 || !dram2) {
      ++out.rows_skipped;
      continue;
    }
    const double l2_sum = *l2_1 + *l2_2, dram_sum = *dram1 + *dram2;
    samples.push_back({l2_sum, dram_sum, *solo1, row.latency1_ms});
    samples.push_back({l2_sum, dram_sum, *solo2, row.latency2_ms});
  }
  out.samples = static_cast<int>(samples.size());
  if (samples.empty()) return out;

  // Least squares of the slowdown on rows x = [1, l2_sum, dram_sum].
  std::vector<std::array<double, 3>> rows;
  std::vector<double> slowdowns;
  double mean_slowdown = 0;
  for (const Sample& s : samples) {
    rows.push_back({1, s.l2_sum, s.dram_sum});
    slowdowns.push_back(s.measured_ms / s.solo_ms - 1);
    mean_slowdown += slowdowns.back();
  }
  mean_slowdown /= static_cast<double>(samples.size());
  const LeastSquaresSolution<3> fit = SolveLeastSquares<3>(std::move(rows), std::move(slowdowns));
  if (fit.full_rank) {
    out.c = fit.x;
    out.fitted = true;
  } else {
    out.c = {mean_slowdown, 0, 0};
  }
  double error = 0;
  for (const Sample& s : samples) {
    const double predicted = s.solo_ms * out.Factor(s.l2_sum, s.dram_sum);
    error += std::abs(predicted - s.measured_ms) / s.measured_ms;
  }
  out.mean_relative_error = error / static_cast<double>(samples.size());
  return out;
}

}  // namespace tessera
