#include "tessera/profile/igniter_model.h"

#include <fmt/format.h>

#include <cmath>
#include <limits>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "tessera/profile_table.h"
#include "tessera/util/input_limits.h"
#include "tessera/util/text_io.h"
#include "util/json_structure.h"

namespace tessera {
namespace {

using Json = nlohmann::json;

// A prediction's latency when the model says the workload cannot run.
constexpr double kCannotRun = std::numeric_limits<double>::infinity();

// Reads fields of one JSON object, naming "<source>: field '<path>.<key>'" in
// errors; the first error sticks and later reads are no-ops.
class FieldReader {
 public:
  FieldReader(const Json& object, std::string_view source, std::string path)
      : object_(object), source_(source), path_(std::move(path)) {}

  double Number(const char* key) {
    const Json* v = Find(key);
    if (v == nullptr) return 0;
    if (!v->is_number()) return Fail(key, "expected a number"), 0;
    const double x = v->get<double>();
    if (!std::isfinite(x)) return Fail(key, "expected a finite number"), 0;
    return x;
  }

  // A number in `range` (input_limits.h).
  double In(const char* key, const InputRange& range) {
    const double x = Number(key);
    if (status_.ok() && !range.Contains(x)) Fail(key, OutOfRange(range, x));
    return x;
  }

  template <size_t N>
  std::array<double, N> Numbers(const char* key) {
    std::array<double, N> out{};
    const Json* v = Find(key);
    if (v == nullptr) return out;
    if (!v->is_array() || v->size() != N) {
      Fail(key, fmt::format("expected an array of {} numbers", N));
      return out;
    }
    for (size_t i = 0; i < N; ++i) {
      if (!(*v)[i].is_number()) {
        Fail(key, fmt::format("element {} is not a number", i));
        return out;
      }
      out[i] = (*v)[i].get<double>();
      if (!limits::kCoefficient.Contains(out[i])) {
        Fail(key, fmt::format("element {} {}", i, OutOfRange(limits::kCoefficient, out[i])));
        return out;
      }
    }
    return out;
  }

  std::string OptionalString(const char* key) {
    auto it = object_.find(key);
    if (it == object_.end()) return "";
    if (!it->is_string()) return Fail(key, "expected a string"), "";
    return it->get<std::string>();
  }

  const Status& status() const { return status_; }

 private:
  const Json* Find(const char* key) {
    if (!status_.ok()) return nullptr;
    auto it = object_.find(key);
    if (it == object_.end()) return Fail(key, "missing"), nullptr;
    return &*it;
  }

  void Fail(const char* key, const std::string& what) {
    if (status_.ok()) {
      status_ = Status::InvalidArgument(
          fmt::format("{}: field '{}.{}': {}", source_, EscapeForMessage(path_), key, what));
    }
  }

  const Json& object_;
  std::string_view source_;
  std::string path_;
  Status status_;
};

Result<MpsHardware> ReadHardware(const Json& j, std::string_view source) {
  if (!j.is_object()) {
    return Status::InvalidArgument(fmt::format("{}: field 'hardware': expected an object", source));
  }
  FieldReader r(j, source, "hardware");
  MpsHardware hw;
  hw.gpu = r.OptionalString("gpu");
  hw.max_frequency_mhz = r.In("F", limits::kFrequencyMhz);
  hw.power_cap_w = r.In("P", limits::kPowerW);
  hw.idle_power_w = r.In("p_idle", limits::kIdlePowerW);
  hw.unit_pct = r.In("unit", limits::kUnitPct);
  hw.pcie_bytes_per_ms = r.In("B_pcie", limits::kPcieBytesPerMs);
  hw.alpha_f = r.In("alpha_f", limits::kCoefficient);
  hw.alpha_sch = r.In("alpha_sch", limits::kCoefficient);
  hw.beta_sch = r.In("beta_sch", limits::kCoefficient);
  if (!r.status().ok()) return r.status();
  return hw;
}

Result<WorkloadCoefficients> ReadWorkload(const std::string& key, const Json& j,
                                          std::string_view source) {
  if (!j.is_object()) {
    return Status::InvalidArgument(
        fmt::format("{}: field '{}': expected an object", source, EscapeForMessage(key)));
  }
  FieldReader r(j, source, key);
  WorkloadCoefficients w;
  w.model = CanonicalModelName(key);
  w.kernels = static_cast<int>(r.In("n_k", limits::kKernels));
  w.sched_ms = r.In("k_sch_ms", limits::kSchedMs);
  w.load_bytes = r.In("d_load", limits::kRequestBytes);
  w.feedback_bytes = r.In("d_feedback", limits::kRequestBytes);
  w.k = r.Numbers<5>("k");
  w.alpha_cache = r.In("alpha_cache", limits::kCoefficient);
  w.power = r.Numbers<2>("power_coef");
  w.cache = r.Numbers<2>("cache_coef");
  if (!r.status().ok()) return r.status();
  return w;
}

}  // namespace

double WorkloadCoefficients::ActiveMs(int batch, double resource_pct) const {
  const double b = batch;
  return (k[0] * b * b + k[1] * b + k[2]) / (resource_pct + k[3]) + k[4];
}

const WorkloadCoefficients* MpsCoefficients::Find(std::string_view model) const {
  for (const WorkloadCoefficients& w : workloads) {
    if (w.model == model) return &w;
  }
  return nullptr;
}

Result<MpsCoefficients> ParseMpsCoefficientsJson(std::string_view text, std::string_view source) {
  // Syntax (with its position), duplicate keys and nesting depth first.
  if (const std::string error = CheckJsonStructure(text); !error.empty()) {
    return Status::InvalidArgument(fmt::format("{}: {}", source, error));
  }
  const Json root = Json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (root.is_discarded()) {
    return Status::InvalidArgument(fmt::format("{}: invalid JSON", source));
  }
  if (!root.is_object()) {
    return Status::InvalidArgument(fmt::format("{}: expected a JSON object", source));
  }
  MpsCoefficients out;
  bool has_hardware = false;
  for (const auto& [key, value] : root.items()) {
    if (key == "hardware") {
      TESSERA_ASSIGN_OR_RETURN(out.hardware, ReadHardware(value, source));
      has_hardware = true;
      continue;
    }
    if (!key.empty() && key.front() == '_') continue;  // comments, e.g. "_note"
    TESSERA_ASSIGN_OR_RETURN(WorkloadCoefficients w, ReadWorkload(key, value, source));
    if (out.Find(w.model) != nullptr) {
      return Status::InvalidArgument(fmt::format("{}: field '{}': model {} given twice", source,
                                                 EscapeForMessage(key), QuoteForMessage(w.model)));
    }
    out.workloads.push_back(std::move(w));
  }
  if (!has_hardware) {
    return Status::InvalidArgument(fmt::format("{}: field 'hardware': missing", source));
  }
  if (out.workloads.empty()) {
    return Status::InvalidArgument(fmt::format("{}: no model coefficients", source));
  }
  return out;
}

Status ValidateMpsCoefficients(const MpsCoefficients& c) {
  struct Field {
    std::string name;
    double value;
    const InputRange& range;
  };
  const MpsHardware& hw = c.hardware;
  std::vector<Field> fields = {
      {"hardware.F", hw.max_frequency_mhz, limits::kFrequencyMhz},
      {"hardware.P", hw.power_cap_w, limits::kPowerW},
      {"hardware.p_idle", hw.idle_power_w, limits::kIdlePowerW},
      {"hardware.unit", hw.unit_pct, limits::kUnitPct},
      {"hardware.B_pcie", hw.pcie_bytes_per_ms, limits::kPcieBytesPerMs},
      {"hardware.alpha_f", hw.alpha_f, limits::kCoefficient},
      {"hardware.alpha_sch", hw.alpha_sch, limits::kCoefficient},
      {"hardware.beta_sch", hw.beta_sch, limits::kCoefficient},
  };
  for (const WorkloadCoefficients& w : c.workloads) {
    const std::string& m = w.model;
    fields.push_back({m + ".n_k", static_cast<double>(w.kernels), limits::kKernels});
    fields.push_back({m + ".k_sch_ms", w.sched_ms, limits::kSchedMs});
    fields.push_back({m + ".d_load", w.load_bytes, limits::kRequestBytes});
    fields.push_back({m + ".d_feedback", w.feedback_bytes, limits::kRequestBytes});
    fields.push_back({m + ".alpha_cache", w.alpha_cache, limits::kCoefficient});
    for (size_t i = 0; i < w.k.size(); ++i) {
      fields.push_back({fmt::format("{}.k[{}]", m, i), w.k[i], limits::kCoefficient});
    }
    for (size_t i = 0; i < 2; ++i) {
      fields.push_back({fmt::format("{}.power_coef[{}]", m, i), w.power[i], limits::kCoefficient});
      fields.push_back({fmt::format("{}.cache_coef[{}]", m, i), w.cache[i], limits::kCoefficient});
    }
  }
  for (const Field& f : fields) {
    if (!f.range.Contains(f.value)) {
      return Status::InvalidArgument(
          fmt::format("field '{}': {}", f.name, OutOfRange(f.range, f.value)));
    }
  }
  return Status::Ok();
}

Result<MpsCoefficients> LoadMpsCoefficients(const std::string& path) {
  TESSERA_ASSIGN_OR_RETURN(std::string text, ReadTextFile(path));
  return ParseMpsCoefficientsJson(text, path);
}

std::string FormatMpsCoefficientsJson(const MpsCoefficients& coefficients) {
  nlohmann::ordered_json root;
  for (const WorkloadCoefficients& w : coefficients.workloads) {
    root[w.model] = {{"n_k", w.kernels},
                     {"k_sch_ms", w.sched_ms},
                     {"d_load", w.load_bytes},
                     {"d_feedback", w.feedback_bytes},
                     {"k", w.k},
                     {"alpha_cache", w.alpha_cache},
                     {"power_coef", w.power},
                     {"cache_coef", w.cache}};
  }
  const MpsHardware& hw = coefficients.hardware;
  nlohmann::ordered_json h;
  if (!hw.gpu.empty()) h["gpu"] = hw.gpu;
  h["F"] = hw.max_frequency_mhz;
  h["P"] = hw.power_cap_w;
  h["p_idle"] = hw.idle_power_w;
  h["unit"] = hw.unit_pct;
  h["B_pcie"] = hw.pcie_bytes_per_ms;
  h["alpha_f"] = hw.alpha_f;
  h["alpha_sch"] = hw.alpha_sch;
  h["beta_sch"] = hw.beta_sch;
  root["hardware"] = h;
  return root.dump(1) + "\n";
}

std::vector<Prediction> PredictColocated(const MpsHardware& hw, std::span<const Colocated> gpu) {
  const size_t n = gpu.size();
  // Everything below follows the order of operations of the artifact's
  // predict(), so that results agree with it to the last bits.
  const double extra_idle = n >= 2 ? hw.alpha_sch * static_cast<double>(n) + hw.beta_sch : 0;
  std::vector<double> active(n);
  std::vector<double> l2(n);
  double total_l2 = 0;
  double power = hw.idle_power_w;
  for (size_t i = 0; i < n; ++i) {
    const WorkloadCoefficients& w = *gpu[i].workload;
    active[i] = w.ActiveMs(gpu[i].batch, gpu[i].resource_pct);
    const double ability = (1000.0 * gpu[i].batch) / active[i];
    power += w.power[0] * ability + w.power[1];
    l2[i] = w.cache[0] * ability + w.cache[1];
    total_l2 += l2[i];
  }
  double frequency = hw.max_frequency_mhz;
  if (power > hw.power_cap_w) {
    frequency = hw.alpha_f * (power - hw.power_cap_w) + hw.max_frequency_mhz;
  }
  std::vector<Prediction> out(n);
  for (size_t i = 0; i < n; ++i) {
    const WorkloadCoefficients& w = *gpu[i].workload;
    const double idle = w.kernels * extra_idle + w.sched_ms;
    const double contended = active[i] * (1 + w.alpha_cache * (total_l2 - l2[i]));
    const double gpu_ms = (idle + contended) / (frequency / hw.max_frequency_mhz);
    const double b = gpu[i].batch;
    out[i].gpu_ms = gpu_ms;
    out[i].throughput_rps = b * 1000 / (gpu_ms + w.feedback_bytes * b / hw.pcie_bytes_per_ms);
    out[i].latency_ms = gpu_ms + (w.load_bytes + w.feedback_bytes) * b / hw.pcie_bytes_per_ms;
    // Coefficients fitted on a range of batches and resources can predict a
    // time <= 0 or not finite outside it (a negative k1 at large batches, a
    // resource of -k4): such a prediction means the workload cannot run so,
    // never that it runs infinitely fast.
    const bool sane = gpu_ms > 0 && std::isfinite(out[i].latency_ms) &&
                      std::isfinite(out[i].throughput_rps) && out[i].throughput_rps > 0;
    if (!sane) out[i] = {kCannotRun, kCannotRun, 0};
  }
  return out;
}

Prediction PredictAlone(const MpsHardware& hw, const WorkloadCoefficients& w, int batch,
                        double resource_pct) {
  const Colocated alone{&w, batch, resource_pct};
  return PredictColocated(hw, std::span(&alone, 1))[0];
}

ResourceLowerBound LowerBoundOf(const MpsHardware& hw, const WorkloadCoefficients& w,
                                double budget_ms, double rate_rps) {
  const double bandwidth = hw.pcie_bytes_per_ms;
  const double per_ms = rate_rps / 1000;
  ResourceLowerBound out;
  // The batch that arrives while one batch is in flight within the budget;
  // one beyond the largest batch a process may run does not fit one GPU.
  const double arriving =
      std::ceil(budget_ms * per_ms * bandwidth / (bandwidth + w.load_bytes * per_ms));
  if (!(arriving <= limits::kBatch.max)) {
    out.batch = static_cast<int>(limits::kBatch.max);
    out.fits = false;
    out.resource_pct = std::numeric_limits<double>::infinity();
    return out;
  }
  out.batch = std::max(1, static_cast<int>(arriving));
  const double b = out.batch;
  const double gamma = w.k[0] * b * b + w.k[1] * b + w.k[2];
  const double delta =
      budget_ms - w.sched_ms - b * (w.load_bytes + w.feedback_bytes) / bandwidth - w.k[4];
  if (!(delta > 0)) {
    out.fits = false;
    out.resource_pct = std::numeric_limits<double>::infinity();
    return out;
  }
  out.resource_pct = std::ceil((gamma / delta - w.k[3]) / hw.unit_pct) * hw.unit_pct;
  out.resource_pct = std::max(out.resource_pct, hw.unit_pct);
  out.fits = out.resource_pct <= 100;
  return out;
}

std::optional<int> LargestSoloBatch(const MpsHardware& hw, const WorkloadCoefficients& w,
                                    double budget_ms, int max_batch) {
  std::optional<int> best;
  for (int b = 1; b <= max_batch; ++b) {
    if (PredictAlone(hw, w, b, 100).latency_ms > budget_ms) break;
    best = b;
  }
  return best;
}

}  // namespace tessera
