// The analytic performance model behind SynthesizeProfiles. The formulas are
// derived in docs/profile-synthesizer.md; tools/fit_synth.py mirrors them to
// fit SynthParams, so keep the two in sync.
#include "tessera/profile/profile_synth.h"

#include <algorithm>
#include <cassert>
#include <cmath>
#include <initializer_list>
#include <set>
#include <string>
#include <utility>

#include "tessera/util/text_io.h"

namespace tessera {
namespace {

constexpr int kMaxProcs = 48;         // MPS allows at most 48 clients per server
constexpr double kBytesPerParam = 4;  // FP32 weights (AMP keeps FP32 masters too)
constexpr double kGiB = 1024.0 * 1024.0 * 1024.0;
// MiB moved at 1 GB/s take 1.048576 ms.
constexpr double kMsPerMibAtOneGbs = 1.048576;

bool PositiveFinite(double v) { return std::isfinite(v) && v > 0; }

// (sum x^n)^(1/n): the largest term, rounded off where two terms are close,
// because a launch-bound and a GPU-bound pipeline do not switch abruptly.
double SmoothMax(std::initializer_list<double> xs, double exponent) {
  const double top = std::max(xs);
  double sum = 0;
  for (double x : xs) sum += std::pow(x / top, exponent);
  return top * std::pow(sum, 1.0 / exponent);
}

// GiB one process of `card` needs for batch `batch`.
double ProcessMemoryGib(const ModelCard& card, int batch, const SynthParams& p) {
  const double weights = card.params_millions * 1e6 * kBytesPerParam / kGiB;
  const double activations = p.activation_memory_factor * batch * card.activation_mib / 1024.0;
  return p.context_gib + weights + activations;
}

// GPU time per sample on the instance, ms: compute at the instance's share of
// the tensor-core peak plus activation traffic at its share of bandwidth.
// Added, not max'ed: eager PyTorch runs compute-bound convolutions and
// bandwidth-bound BatchNorm/ReLU/concat kernels one after the other. The
// largest MIG profile counts as the whole tensor-core peak (the fit's
// calibration).
double MsPerSample(const ModelCard& card, const GpuModel& gpu, const MigProfile& profile,
                   const SynthParams& p) {
  const double sm_share = static_cast<double>(profile.sms) / gpu.MigSms();
  const double tflops = p.compute_efficiency * gpu.fp16_tensor_tflops * sm_share;
  const double bandwidth_gbs = gpu.memory_bandwidth_gbs * profile.memory_slices / gpu.memory_slices;
  return card.gflops / tflops +
         p.traffic_per_activation_byte * card.activation_mib * kMsPerMibAtOneGbs / bandwidth_gbs;
}

Status ValidateCard(const ModelCard& card) {
  if (card.name.empty()) return Status::InvalidArgument("model card with an empty name");
  if (!PositiveFinite(card.gflops) || !PositiveFinite(card.params_millions) || card.layers < 1 ||
      !PositiveFinite(card.activation_mib)) {
    return Status::InvalidArgument("model card " + QuoteForMessage(card.name) +
                                   ": gflops, params_millions, layers and activation_mib "
                                   "must be finite and > 0");
  }
  return Status::Ok();
}

Status ValidateCards(std::span<const ModelCard> cards) {
  std::set<std::string> names;
  for (const ModelCard& card : cards) {
    TESSERA_RETURN_IF_ERROR(ValidateCard(card));
    if (!names.insert(card.name).second) {
      return Status::InvalidArgument("duplicate model card " + QuoteForMessage(card.name));
    }
  }
  return Status::Ok();
}

std::vector<int> ProfilesToSynthesize(const GpuModel& gpu, bool primary_only) {
  if (primary_only) return gpu.PrimaryProfiles();
  std::vector<int> all(gpu.profiles.size());
  for (size_t i = 0; i < all.size(); ++i) all[i] = static_cast<int>(i);
  return all;
}

// Adds every configuration of `card` on `profile` that fits in memory.
Status AddCardOnProfile(const ModelCard& card, const GpuModel& gpu, const MigProfile& profile,
                        const SynthOptions& options, ProfileTable& table) {
  for (int batch : options.batches) {
    for (int procs = 1; procs <= options.max_procs; ++procs) {
      std::optional<SegmentPrediction> pred =
          PredictSegment(card, gpu, profile, batch, procs, options.params);
      // More processes only need more memory: the rest cannot fit either.
      if (!pred) break;
      ProfileEntry entry;
      entry.key = {card.name, gpu.name, profile.name, batch, procs};
      entry.throughput_rps = pred->throughput_rps;
      entry.latency_ms = pred->latency_ms;
      TESSERA_RETURN_IF_ERROR(table.Add(std::move(entry)));
    }
  }
  return Status::Ok();
}

}  // namespace

Status SynthParams::Validate() const {
  for (double v :
       {host_ms_per_layer, kernel_ms_per_layer, compute_efficiency, traffic_per_activation_byte,
        mps_fixed_serial_share, smooth_max_exponent, context_gib, activation_memory_factor}) {
    if (!PositiveFinite(v)) {
      return Status::InvalidArgument("synthesizer parameters must be finite and > 0");
    }
  }
  if (mps_fixed_serial_share > 1) {
    return Status::InvalidArgument("mps_fixed_serial_share must be in (0, 1]");
  }
  if (smooth_max_exponent < 1) {
    return Status::InvalidArgument("smooth_max_exponent must be >= 1");
  }
  return Status::Ok();
}

Status SynthOptions::Validate() const {
  if (batches.empty()) return Status::InvalidArgument("batches: need at least one batch size");
  std::set<int> seen;
  for (int b : batches) {
    if (b < 1) {
      return Status::InvalidArgument("batches: batch size must be >= 1, got " + std::to_string(b));
    }
    if (!seen.insert(b).second) {
      return Status::InvalidArgument("batches: duplicate batch size " + std::to_string(b));
    }
  }
  if (max_procs < 1 || max_procs > kMaxProcs) {
    return Status::InvalidArgument("max_procs: must be in 1.." + std::to_string(kMaxProcs) +
                                   ", got " + std::to_string(max_procs));
  }
  return params.Validate();
}

std::optional<SegmentPrediction> PredictSegment(const ModelCard& card, const GpuModel& gpu,
                                                const MigProfile& profile, int batch, int procs,
                                                const SynthParams& p) {
  const double memory_gib = procs * ProcessMemoryGib(card, batch, p);
  if (memory_gib > profile.memory_gib) return std::nullopt;

  const double per_sample = MsPerSample(card, gpu, profile, p);
  // Host launch time of one batch: the CPU side of the pipeline.
  const double host = p.host_ms_per_layer * card.layers;
  // GPU time of one process's batch alone: a fixed part per layer plus work.
  const double fixed = p.kernel_ms_per_layer * card.layers;
  const double alone = fixed + batch * per_sample;
  // GPU time for one batch of every process: MPS runs their kernels side by
  // side, so their fixed parts mostly overlap; their work does not.
  const double shared =
      fixed * (1 + p.mps_fixed_serial_share * (procs - 1)) + procs * batch * per_sample;
  // Each process's step is bounded by its own host launches, its own GPU
  // chain, and the instance shared with the others: the slowest one wins.
  const double latency_ms = SmoothMax({host, alone, shared}, p.smooth_max_exponent);

  SegmentPrediction out;
  out.latency_ms = latency_ms;
  out.throughput_rps = 1000.0 * batch * procs / latency_ms;
  out.memory_gib = memory_gib;
  return out;
}

Result<ProfileTable> SynthesizeProfiles(const GpuModel& gpu, std::span<const ModelCard> cards,
                                        const SynthOptions& options) {
  TESSERA_RETURN_IF_ERROR(options.Validate());
  TESSERA_RETURN_IF_ERROR(ValidateCards(cards));
  ProfileTable table;
  const std::vector<int> profiles = ProfilesToSynthesize(gpu, options.primary_profiles_only);
  for (const ModelCard& card : cards) {
    for (int index : profiles) {
      TESSERA_RETURN_IF_ERROR(AddCardOnProfile(card, gpu, gpu.profiles[index], options, table));
    }
  }
  return table;
}

ProfileTable DefaultProfiles(const GpuModel& gpu) {
  Result<ProfileTable> table = SynthesizeProfiles(gpu, BuiltinModelCards());
  // The builtin cards and default options are valid by construction.
  assert(table.ok() && "builtin model cards must synthesize");
  if (!table.ok()) return ProfileTable();
  return std::move(table).value();
}

}  // namespace tessera
