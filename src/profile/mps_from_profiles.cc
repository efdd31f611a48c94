#include "tessera/profile/mps_from_profiles.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <optional>

#include "tessera/profile/igniter_fit.h"
#include "tessera/util/input_limits.h"

namespace tessera {
namespace {

// Hardware constants that do not act on predictions (method in the header):
// with power_coef = [0, 0] and p_idle = 0 the power never reaches P, so the
// clock stays at F; with zero copy sizes B_pcie multiplies nothing.
constexpr double kFrequencyMhz = 1410;      // A100 boost clock
constexpr double kPowerCapW = 400;          // A100 SXM4 board power
constexpr double kPcieBytesPerMs = 25.6e6;  // PCIe 4.0 x16, about 25.6 GB/s
// gpu-lets' partitions (resource %) and the largest batch of its tables.
constexpr std::array<int, 6> kGpuletPartitions = {20, 40, 50, 60, 80, 100};
constexpr int kGpuletMaxBatch = 32;

// The MPS share (%) of the SMs a MIG instance of `profile` has.
std::optional<double> ShareOf(const GpuModel& gpu, std::string_view profile) {
  const MigProfile* p = gpu.FindProfile(profile);
  if (p == nullptr || gpu.sms <= 0 || p->sms <= 0) return std::nullopt;
  return 100.0 * p->sms / gpu.sms;
}

// One multi-process entry, read as P shares of r / P.
struct SharedPoint {
  int batch = 1;
  int procs = 2;
  double share_pct = 0;
  double latency_ms = 0;
};

// The hardware of the method.
MpsHardware DerivedHardware(const GpuModel& gpu) {
  MpsHardware hw;
  hw.gpu = gpu.name;
  hw.max_frequency_mhz = kFrequencyMhz;
  hw.power_cap_w = kPowerCapW;
  hw.idle_power_w = 0;
  // One TPC (2 SMs), rounded to 0.01%: resources are multiples of the unit,
  // and plans are written with 4 decimals, which 100 / 54 (A100) would not
  // read back to the same predictions.
  hw.unit_pct = std::round(100.0 / (gpu.sms / 2.0) * 100) / 100;
  hw.pcie_bytes_per_ms = kPcieBytesPerMs;
  return hw;
}

// The most solo ability (requests/s) of `w` at 100% over `batches`.
double PeakAbility(const WorkloadCoefficients& w, const std::vector<int>& batches) {
  double peak = 0;
  for (int b : batches) {
    const double t = w.ActiveMs(b, 100);
    if (t > 0 && std::isfinite(t)) peak = std::max(peak, 1000.0 * b / t);
  }
  return peak;
}

// L2 utilisation (%) of `w` at (batch, share) under its cache_coef.
double L2Of(const WorkloadCoefficients& w, int batch, double share_pct) {
  const double t = w.ActiveMs(batch, share_pct);
  return w.cache[0] * 1000.0 * batch / t + w.cache[1];
}

// alpha_cache by relative least squares on `points` (0 without any), and
// the RMS relative error of the latencies it predicts.
std::pair<double, double> FitAlphaCache(const WorkloadCoefficients& w,
                                        const std::vector<SharedPoint>& points) {
  double num = 0, den = 0;
  for (const SharedPoint& p : points) {
    const double t = w.ActiveMs(p.batch, p.share_pct);
    const double c = t * (p.procs - 1) * L2Of(w, p.batch, p.share_pct);
    num += (p.latency_ms - t) * c / (p.latency_ms * p.latency_ms);
    den += c * c / (p.latency_ms * p.latency_ms);
  }
  const double alpha = den > 0 ? std::max(0.0, num / den) : 0;
  double sum = 0;
  for (const SharedPoint& p : points) {
    const double t = w.ActiveMs(p.batch, p.share_pct);
    const double predicted = t * (1 + alpha * (p.procs - 1) * L2Of(w, p.batch, p.share_pct));
    const double e = (predicted - p.latency_ms) / p.latency_ms;
    sum += e * e;
  }
  return {alpha, points.empty() ? 0 : std::sqrt(sum / points.size())};
}

// gpu-lets' four tables of `w`, from its predictions alone on the GPU.
GpuletModelTables GpuletTablesOf(const MpsHardware& hw, const WorkloadCoefficients& w) {
  GpuletModelTables t;
  t.model = w.model;
  for (int b = 1; b <= kGpuletMaxBatch; ++b) {
    for (int r : kGpuletPartitions) {
      const Prediction p = PredictAlone(hw, w, b, r);
      if (!limits::kLatencyMs.Contains(p.latency_ms) ||
          !limits::kThroughputRps.Contains(p.throughput_rps)) {
        continue;  // outside what the curve can predict: no entry
      }
      t.latency_ms[{b, r}] = p.latency_ms;
      t.throughput_rps[{b, r}] = p.throughput_rps;
      t.l2_pct[{b, r}] = std::clamp(L2Of(w, b, r), 0.0, 100.0);
      t.dram_pct[{b, r}] = 0;
    }
  }
  return t;
}

// One model: its coefficients and fit, or why it cannot be derived.
Result<std::pair<WorkloadCoefficients, DerivedFit>> DeriveModel(
    const std::vector<const ProfileEntry*>& entries, const std::string& model, const GpuModel& gpu,
    const MpsHardware& hw) {
  ModelSamples samples;
  samples.model = model;
  std::vector<int> batches;
  double min_share = 100;
  for (const ProfileEntry* e : entries) {
    const std::optional<double> share = ShareOf(gpu, e->key.profile);
    if (!share || e->key.procs != 1) continue;
    samples.active_ms.push_back({e->key.batch, *share, e->latency_ms, 0});
    batches.push_back(e->key.batch);
    min_share = std::min(min_share, *share);
  }
  FitSamples fit_samples;
  fit_samples.source = model + " on " + gpu.name;
  fit_samples.models.push_back(samples);
  MpsCoefficients base;
  base.hardware = hw;
  WorkloadCoefficients prior;
  prior.model = model;
  prior.kernels = 1;
  base.workloads.push_back(prior);
  Result<MpsCoefficients> fitted = FitMpsCoefficients(fit_samples, &base);
  if (!fitted.ok()) return fitted.status();
  WorkloadCoefficients w = fitted->workloads.front();

  std::sort(batches.begin(), batches.end());
  batches.erase(std::unique(batches.begin(), batches.end()), batches.end());
  const double peak = PeakAbility(w, batches);
  if (!(peak > 0)) {
    return Status::InvalidArgument(
        fmt::format("{}: the fitted curve predicts no positive time at 100%", fit_samples.source));
  }
  w.cache = {100.0 / peak, 0};

  std::vector<SharedPoint> shared;
  for (const ProfileEntry* e : entries) {
    const std::optional<double> share = ShareOf(gpu, e->key.profile);
    if (!share || e->key.procs < 2) continue;
    const double each = *share / e->key.procs;
    const double t = w.ActiveMs(e->key.batch, each);
    // A100: 2g / 2 and 3g / 3 are 1g's share; the relative slack keeps
    // them in whatever the rounding of the divisions.
    if (each < min_share * (1 - 1e-9) || !(t > 0) || !std::isfinite(t)) continue;
    shared.push_back({e->key.batch, e->key.procs, each, e->latency_ms});
  }
  const auto [alpha, shared_rms] = FitAlphaCache(w, shared);
  w.alpha_cache = alpha;

  DerivedFit fit;
  fit.model = model;
  fit.solo_points = static_cast<int>(samples.active_ms.size());
  fit.solo_rms = ActiveFitRmsRelativeError(samples, w).value_or(0);
  fit.shared_points = static_cast<int>(shared.size());
  fit.shared_rms = shared_rms;
  fit.alpha_cache = alpha;
  return std::make_pair(std::move(w), std::move(fit));
}

// gpu-lets' interference rows: the two-process entries of `model` in the
// largest profile, as two processes of 50% each.
void AddInterferenceRows(const std::vector<const ProfileEntry*>& entries, const std::string& model,
                         const GpuModel& gpu, GpuletTables& tables) {
  const MigProfile* largest = nullptr;
  for (const MigProfile& p : gpu.profiles) {
    if (!largest || p.compute_slices > largest->compute_slices) largest = &p;
  }
  for (const ProfileEntry* e : entries) {
    if (e->key.profile != largest->name || e->key.procs != 2 || e->key.batch > kGpuletMaxBatch) {
      continue;
    }
    tables.interference.push_back({.model1 = model,
                                   .model2 = model,
                                   .batch1 = e->key.batch,
                                   .batch2 = e->key.batch,
                                   .resource1_pct = 50,
                                   .latency1_ms = e->latency_ms,
                                   .latency2_ms = e->latency_ms,
                                   .line = 0});
  }
}

double Median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

}  // namespace

Result<DerivedMps> DeriveMpsFromProfiles(const ProfileTable& profiles, const GpuModel& gpu) {
  if (!gpu.HasMig()) {
    return Status::InvalidArgument(
        fmt::format("{} has no MIG profiles to derive iGniter coefficients from", gpu.name));
  }
  DerivedMps out;
  out.coefficients.hardware = DerivedHardware(gpu);
  for (const std::string& model : profiles.Models()) {
    if (!profiles.HasModel(model, gpu.name)) continue;
    const std::vector<const ProfileEntry*> entries = profiles.EntriesFor(model, gpu.name);
    Result<std::pair<WorkloadCoefficients, DerivedFit>> derived =
        DeriveModel(entries, model, gpu, out.coefficients.hardware);
    if (!derived.ok()) {
      out.skipped.push_back(derived.status().message());
      continue;
    }
    out.coefficients.workloads.push_back(std::move(derived->first));
    out.fits.push_back(std::move(derived->second));
    out.gpulet.models.push_back(
        GpuletTablesOf(out.coefficients.hardware, out.coefficients.workloads.back()));
    AddInterferenceRows(entries, model, gpu, out.gpulet);
  }
  if (out.coefficients.workloads.empty()) {
    return Status::InvalidArgument(
        fmt::format("no model's iGniter coefficients could be derived from the {} profiles{}{}",
                    gpu.name, out.skipped.empty() ? "" : ": ", fmt::join(out.skipped, "; ")));
  }
  TESSERA_RETURN_IF_ERROR(ValidateMpsCoefficients(out.coefficients));
  return out;
}

std::string DescribeDerivedFits(const DerivedMps& derived) {
  std::vector<double> solo, shared;
  for (const DerivedFit& f : derived.fits) {
    solo.push_back(f.solo_rms);
    if (f.shared_points > 0) shared.push_back(f.shared_rms);
  }
  std::string out = fmt::format(
      "{} models; single-process latency fit RMS error median {:.1f}%, largest {:.1f}%",
      derived.fits.size(), 100 * Median(solo), 100 * *std::max_element(solo.begin(), solo.end()));
  if (!shared.empty()) {
    out += fmt::format("; co-located processes median {:.1f}%, largest {:.1f}%",
                       100 * Median(shared), 100 * *std::max_element(shared.begin(), shared.end()));
  }
  return out;
}

}  // namespace tessera
