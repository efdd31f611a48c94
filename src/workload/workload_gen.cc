// GenerateWorkload (workload_gen.h). Every random draw is computed here from
// raw std::mt19937_64 output (whose sequence the standard fixes) rather than
// through std::*_distribution (whose algorithms it leaves to each library).
#include "tessera/workload/workload_gen.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "tessera/gpu_catalog.h"
#include "tessera/profile/profile_synth.h"
#include "tessera/profile_table.h"
#include "tessera/util/input_limits.h"
#include "util/random_draws.h"
#include "util/utf8.h"

namespace tessera {
namespace {

// Bounds that keep every draw finite: exp(mu + 10 z) with |z| < 8.6 (the
// largest Box-Muller radius from 53-bit uniforms) stays far below DBL_MAX.
// The mean of a normal law and the median of a lognormal one lie within the
// rate limit (draws beyond it are clamped to it).
const double kMaxNormalRps = limits::kRateRps.max;
constexpr double kMinMu = -50;
const double kMaxMu = std::log(limits::kRateRps.max);
constexpr double kMaxSigma = 10;

// A finite number in [min, max] (`min` excluded when `open_min`).
Status CheckRange(std::string_view field, double value, double min, double max, bool open_min) {
  const bool above_min = open_min ? value > min : value >= min;
  if (std::isfinite(value) && above_min && value <= max) return Status::Ok();
  return Status::InvalidArgument(fmt::format("{}: must be a finite number in {}{:g}, {:g}], got {}",
                                             field, open_min ? "(" : "[", min, max, value));
}

Status CheckRates(const NormalRates& r) {
  TESSERA_RETURN_IF_ERROR(
      CheckRange("rates: normal mean_rps", r.mean_rps, 0, kMaxNormalRps, /*open_min=*/true));
  return CheckRange("rates: normal sd_rps", r.sd_rps, 0, kMaxNormalRps, /*open_min=*/false);
}

Status CheckRates(const LognormalRates& r) {
  TESSERA_RETURN_IF_ERROR(
      CheckRange("rates: lognormal mu", r.mu, kMinMu, kMaxMu, /*open_min=*/false));
  return CheckRange("rates: lognormal sigma", r.sigma, 0, kMaxSigma, /*open_min=*/false);
}

double RawRate(const NormalRates& r, double z) { return r.mean_rps + r.sd_rps * z; }
double RawRate(const LognormalRates& r, double z) { return std::exp(r.mu + r.sigma * z); }

// Whole requests per second, at least the floor and at most the rate limit.
double DrawRate(const RateDistribution& rates, std::mt19937_64& rng) {
  const double z = StandardNormal(rng);
  const double raw = std::visit([z](const auto& r) { return RawRate(r, z); }, rates);
  return std::clamp(std::round(raw), kMinGeneratedRateRps, limits::kRateRps.max);
}

// The canonical model names services cycle through.
std::vector<std::string> ModelCycle(const WorkloadGenOptions& options) {
  std::vector<std::string> models;
  if (options.models.empty()) {
    for (const ModelCard& card : BuiltinModelCards()) models.push_back(card.name);
  }
  for (const std::string& m : options.models) models.push_back(CanonicalModelName(m));
  return models;
}

WorkloadPreset Preset(std::string name, int services, RateDistribution rates) {
  WorkloadGenOptions options;
  options.name = name;
  options.services = services;
  options.rates = rates;
  return {std::move(name), std::move(options)};
}

}  // namespace

Status WorkloadGenOptions::Validate() const {
  if (!limits::kServices.Contains(services)) {
    return Status::InvalidArgument("services: " + OutOfRange(limits::kServices, services));
  }
  TESSERA_RETURN_IF_ERROR(std::visit([](const auto& r) { return CheckRates(r); }, rates));
  if (!limits::kSloMs.Contains(slo_ms)) {
    return Status::InvalidArgument("slo_ms: " + OutOfRange(limits::kSloMs, slo_ms));
  }
  for (size_t k = 0; k < models.size(); ++k) {
    if (CanonicalModelName(models[k]).empty()) {
      return Status::InvalidArgument(fmt::format("models[{}]: must not be empty", k));
    }
    // A line break would end the one-line comments and tables that show names.
    if (std::any_of(models[k].begin(), models[k].end(),
                    [](unsigned char c) { return c < 0x20 || c == 0x7f; })) {
      return Status::InvalidArgument(
          fmt::format("models[{}]: must not contain control characters", k));
    }
    // The scenario is written as YAML and must read back byte for byte.
    if (!IsValidUtf8(models[k])) {
      return Status::InvalidArgument(fmt::format("models[{}]: {}", k, Utf8Error(models[k])));
    }
  }
  if (gpu.empty()) return Status::Ok();
  const Result<const GpuModel*> found = FindGpu(gpu);
  return found.ok() ? Status::Ok() : found.status().WithContext("gpu");
}

Result<Scenario> GenerateWorkload(const WorkloadGenOptions& options) {
  TESSERA_RETURN_IF_ERROR(options.Validate());
  Scenario scenario;
  scenario.name = options.name;
  if (!options.gpu.empty()) scenario.gpu = (*FindGpu(options.gpu))->name;
  const std::vector<std::string> models = ModelCycle(options);
  std::mt19937_64 rng(options.seed);
  for (int k = 0; k < options.services; ++k) {
    const std::string& model = models[k % models.size()];
    scenario.services.push_back({.name = fmt::format("{}-{:03d}", model, k + 1),
                                 .model = model,
                                 .rate_rps = DrawRate(options.rates, rng),
                                 .slo_ms = options.slo_ms});
  }
  return scenario;
}

std::span<const WorkloadPreset> WorkloadPresets() {
  // Sized by trial against the parva planner on the embedded A100-80GB
  // profiles (seed 1, 24 services as in the paper): about 280 GPUs for each
  // "-1", 390-410 for each "-2". lognormal-1 has normal-1's mean rate
  // (exp(9.5 + 0.5^2 / 2) ~ 15,150 rps); each "-2" doubles the spread and
  // raises the mean.
  static const std::vector<WorkloadPreset> kPresets = {
      Preset("normal-1", 24, NormalRates{15000, 4000}),
      Preset("normal-2", 24, NormalRates{20000, 8000}),
      Preset("lognormal-1", 24, LognormalRates{9.5, 0.5}),
      Preset("lognormal-2", 24, LognormalRates{9.6, 1.0}),
  };
  return kPresets;
}

}  // namespace tessera
