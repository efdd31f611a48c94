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
// A100 data; everything model-specific comes from the model card.
//
// Thread-safety: pure functions of their arguments.
#ifndef TESSERA_PROFILE_SYNTH_H_
#define TESSERA_PROFILE_SYNTH_H_

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
  std::string name;          // canonical name, e.g. "resnet50"
  std::string description;   // e.g. "ResNet-50, torchvision, 224x224"
  double gflops = 0;         // multiply-accumulates x 2 per sample, GFLOPs
  double params_millions = 0;
  int layers = 0;            // weighted layers (conv + linear): kernel-launch proxy
  double activation_mib = 0;  // peak activation memory per sample, MiB
  std::string source;        // where the figures come from
};

// The model cards of the 11 models of ParvaGPU's study (bert-large,
// densenet121/169/201, inceptionv3, mobilenetv2, resnet50/101/152, vgg16/19).
std::span<const ModelCard> BuiltinModelCards();
// A builtin card by canonical name (aliases accepted), or NotFound.
Result<const ModelCard*> FindModelCard(std::string_view name);

// Which configurations to synthesize.
struct SynthOptions {
  // Batch sizes. Default: 1, 2, 4, ..., 256 (ParvaGPU's grid).
  std::vector<int> batches = {1, 2, 4, 8, 16, 32, 64, 128, 256};
  // MPS process counts 1..max_procs. Default: 5 (ParvaGPU's measured range).
  int max_procs = 5;
  // Only the GPU's primary profiles (one per compute size). Default: true.
  bool primary_profiles_only = true;

  Status Validate() const;
};

// Predicts throughput and latency of every (card, profile, batch, procs) of
// `gpu` that fits in memory.
Result<ProfileTable> SynthesizeProfiles(const GpuModel& gpu, std::span<const ModelCard> cards,
                                        const SynthOptions& options = {});

// The embedded default profiles: every builtin card on `gpu`.
ProfileTable DefaultProfiles(const GpuModel& gpu);

}  // namespace tessera

#endif  // TESSERA_PROFILE_SYNTH_H_
