// The profile synthesizer: an analytic performance model that predicts a
// ProfileTable for any catalog GPU from public model cards, so Tessera can
// plan on GPUs nobody has profiled yet (`tessera profiles synth`), and ships
// embedded default profiles for the 11 models of ParvaGPU's study.
//
// The model and its assumptions are documented in docs/profile-synthesizer.md.
// In short, for a model m on a profile with g compute slices and s memory
// slices, batch B and P MPS processes:
//  * one process alone runs a batch in a fixed launch/host overhead plus the
//    batch's work at the instance's compute and memory-bandwidth share;
//  * P processes overlap each other's overheads until the instance saturates;
//  * a configuration runs only if P x (context + weights + B x activations)
//    fits in the instance's memory.
// A few global parameters (SynthParams) were fitted once against measured
// A100 data (tools/fit_synth.py); everything model-specific comes from the
// model card.
//
// Thread-safety: pure functions of their arguments; the builtin cards are
// immutable static data.
#ifndef TESSERA_PROFILE_SYNTH_H_
#define TESSERA_PROFILE_SYNTH_H_

#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "tessera/gpu_catalog.h"
#include "tessera/profile_table.h"
#include "tessera/status.h"

namespace tessera {

// Public facts about one DNN model (inference, FP32/TF32 PyTorch, one sample).
struct ModelCard {
  std::string name;         // canonical name, e.g. "resnet50"
  std::string description;  // e.g. "ResNet-50, torchvision, 224x224"
  double gflops = 0;        // multiply-accumulates x 2 per sample, GFLOPs
  double params_millions = 0;
  int layers = 0;  // weighted layers (conv + linear): kernel-launch proxy
  // Memory the forward pass holds per sample, MiB (FP32). For a model run with
  // autograd on (the torchvision CNNs as ParvaGPU profiled them) that is the
  // sum of every intermediate tensor; for one run under torch.no_grad (BERT)
  // it is the peak live set. Also the model's memory-traffic proxy.
  double activation_mib = 0;
  std::string source;  // where the figures come from
};

// The model cards of the 11 models of ParvaGPU's study (bert-large,
// densenet121/169/201, inceptionv3, mobilenetv2, resnet50/101/152, vgg16/19).
std::span<const ModelCard> BuiltinModelCards();
// A builtin card by canonical name (aliases accepted), or NotFound.
Result<const ModelCard*> FindModelCard(std::string_view name);

// The global parameters of the performance and memory model. The defaults
// were fitted by tools/fit_synth.py against ParvaGPU's A100-80GB data; see
// docs/profile-synthesizer.md for the fit and its error. Change them only to
// re-calibrate the whole model, never per model.
struct SynthParams {
  // Host time to launch one weighted layer's kernels (PyTorch eager), ms.
  double host_ms_per_layer = 0.099;
  // GPU time per weighted layer that does not shrink with batch or SMs
  // (kernel ramp-up and tail, small BatchNorm/ReLU kernels), ms.
  double kernel_ms_per_layer = 0.029;
  // Share of the dense FP16 tensor-core peak that convolutions and GEMMs
  // reach (TF32 math runs at half that peak on A100 and H100).
  double compute_efficiency = 0.234;
  // DRAM bytes moved per byte of activation_mib (each intermediate is
  // written once and read by a few unfused eager ops).
  double traffic_per_activation_byte = 4.89;
  // Share of another MPS process's fixed per-layer GPU time that does not
  // overlap with this one's, in [0, 1].
  double mps_fixed_serial_share = 0.188;
  // Exponent of the smooth maximum that joins host, GPU and shared-GPU time
  // (large = sharp roofline corner), >= 1.
  double smooth_max_exponent = 16.0;
  // Per-process memory besides weights and activations (CUDA/MPS context,
  // cuDNN handles, allocator slack), GiB.
  double context_gib = 0.66;
  // Peak allocator memory per byte of activation_mib (caching allocator
  // blocks, cuDNN workspaces that grow with the batch).
  double activation_memory_factor = 2.0;

  // InvalidArgument unless every field is finite and positive,
  // mps_fixed_serial_share <= 1 and smooth_max_exponent >= 1.
  Status Validate() const;
};

// Which configurations to synthesize.
struct SynthOptions {
  // Batch sizes. Default: 1, 2, 4, ..., 256 (ParvaGPU's grid).
  std::vector<int> batches = {1, 2, 4, 8, 16, 32, 64, 128, 256};
  // MPS process counts 1..max_procs. Default: 5 (ParvaGPU's measured range).
  int max_procs = 5;
  // Only the GPU's primary profiles (one per compute size). Default: true.
  bool primary_profiles_only = true;
  // The model's global parameters. Default: the fitted values.
  SynthParams params;

  // InvalidArgument unless batches is non-empty with distinct values >= 1,
  // 1 <= max_procs <= 48, and params is valid.
  Status Validate() const;
};

// The prediction for one segment configuration.
struct SegmentPrediction {
  double throughput_rps = 0;  // whole segment (all processes), requests/s
  double latency_ms = 0;      // one batch on one process; = 1000 B P / throughput
  double memory_gib = 0;      // memory the segment needs (all processes)
};

// Predicts `card` on `profile` of `gpu` with `procs` MPS processes each
// running batches of `batch`, or nullopt when the segment does not fit in the
// profile's memory. REQUIRES: batch >= 1, procs >= 1, `profile` belongs to
// `gpu`, the card's figures and `params` are valid (positive, finite).
std::optional<SegmentPrediction> PredictSegment(const ModelCard& card, const GpuModel& gpu,
                                                const MigProfile& profile, int batch, int procs,
                                                const SynthParams& params = {});

// Predicts throughput and latency of every (card, profile, batch, procs) of
// `gpu` that fits in memory, keyed (card.name, gpu.name, profile.name, batch,
// procs), in card, profile, batch, procs order. InvalidArgument if the options
// are invalid, or a card has an empty or duplicate name or a non-positive
// figure.
Result<ProfileTable> SynthesizeProfiles(const GpuModel& gpu, std::span<const ModelCard> cards,
                                        const SynthOptions& options = {});

// The embedded default profiles: every builtin card on `gpu` with default
// options. Cheap (well under a millisecond per GPU); the CLI calls it on every
// run.
ProfileTable DefaultProfiles(const GpuModel& gpu);

}  // namespace tessera

#endif  // TESSERA_PROFILE_SYNTH_H_
