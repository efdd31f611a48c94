#include "tessera/profile/profile_synth.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <iostream>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "tessera/gpu_catalog.h"
#include "tessera/profile_io.h"
#include "tessera/profile_table.h"

namespace tessera {
namespace {

const GpuModel& Gpu(std::string_view name) {
  Result<const GpuModel*> gpu = FindGpu(name);
  EXPECT_TRUE(gpu.ok()) << gpu.status().ToString();
  return **gpu;
}

double Median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

// A toy GPU with round numbers, so expectations can be worked by hand:
// 100 SMs at 100 FP16 TFLOPS and 1048.576 GB/s (1 MiB moves in 1 us).
GpuModel ToyGpu() {
  GpuModel gpu;
  gpu.name = "toy";
  gpu.compute_slices = 1;
  gpu.memory_slices = 8;
  gpu.memory_gib = 10;
  gpu.sms = 100;
  gpu.memory_bandwidth_gbs = 1048.576;
  gpu.fp16_tensor_tflops = 100;
  gpu.profiles = {{"1g.10gb", 0, 1, 8, 10.0, 100, 1, {0}, false, false}};
  return gpu;
}

// 2 GFLOPs, 1000 MiB of activations, 10 layers, exactly 1 GiB of FP32 weights.
ModelCard ToyCard() { return {"toy", "toy model", 2.0, 268.435456, 10, 1000.0, "test"}; }

// 1 TFLOPS effective, 1 byte moved per activation byte, 0.5 ms host and
// 0.1 ms fixed GPU time per layer, half of the fixed time serial across
// processes, 1 GiB context, allocator factor 1.
SynthParams ToyParams(double exponent) {
  SynthParams p;
  p.host_ms_per_layer = 0.5;
  p.kernel_ms_per_layer = 0.1;
  p.compute_efficiency = 0.01;
  p.traffic_per_activation_byte = 1;
  p.mps_fixed_serial_share = 0.5;
  p.smooth_max_exponent = exponent;
  p.context_gib = 1;
  p.activation_memory_factor = 1;
  return p;
}

TEST(ProfileSynthCards, ElevenCompleteUniqueCards) {
  const std::set<std::string> expected = {
      "bert-large", "densenet121", "densenet169", "densenet201", "inceptionv3", "mobilenetv2",
      "resnet50",   "resnet101",   "resnet152",   "vgg16",       "vgg19"};
  std::set<std::string> seen;
  for (const ModelCard& c : BuiltinModelCards()) {
    EXPECT_TRUE(seen.insert(c.name).second) << "duplicate card " << c.name;
    EXPECT_EQ(c.name, CanonicalModelName(c.name));
    EXPECT_FALSE(c.description.empty()) << c.name;
    EXPECT_FALSE(c.source.empty()) << c.name;
    EXPECT_GT(c.gflops, 0) << c.name;
    EXPECT_GT(c.params_millions, 0) << c.name;
    EXPECT_GT(c.layers, 0) << c.name;
    EXPECT_GT(c.activation_mib, 0) << c.name;
  }
  EXPECT_EQ(seen, expected);
}

TEST(ProfileSynthCards, PublicFiguresOfWellKnownModels) {
  // resnet50: 4.09 GMACs at 224x224; ParvaGPU Table IV parameter counts.
  Result<const ModelCard*> resnet = FindModelCard("resnet50");
  ASSERT_TRUE(resnet.ok());
  EXPECT_NEAR((*resnet)->gflops, 8.2, 0.1);
  EXPECT_DOUBLE_EQ((*resnet)->params_millions, 25.6);
  Result<const ModelCard*> vgg = FindModelCard("vgg19");
  ASSERT_TRUE(vgg.ok());
  EXPECT_DOUBLE_EQ((*vgg)->params_millions, 143.7);
}

TEST(ProfileSynthCards, FindAcceptsAliasesAndRejectsUnknown) {
  Result<const ModelCard*> bert = FindModelCard("bert");
  ASSERT_TRUE(bert.ok()) << bert.status().ToString();
  EXPECT_EQ((*bert)->name, "bert-large");
  Result<const ModelCard*> upper = FindModelCard("ResNet50");
  ASSERT_TRUE(upper.ok());
  EXPECT_EQ((*upper)->name, "resnet50");
  Result<const ModelCard*> unknown = FindModelCard("gpt-5");
  ASSERT_FALSE(unknown.ok());
  EXPECT_EQ(unknown.status().code(), StatusCode::kNotFound);
}

TEST(ProfileSynthOptions, ValidateAcceptsDefaultsAndRejectsBadOptions) {
  EXPECT_TRUE(SynthOptions{}.Validate().ok());
  struct Case {
    std::string name;
    SynthOptions options;
  };
  std::vector<Case> cases;
  auto with = [&](std::string name, auto edit) {
    SynthOptions o;
    edit(o);
    cases.push_back({std::move(name), o});
  };
  with("no batches", [](SynthOptions& o) { o.batches.clear(); });
  with("batch 0", [](SynthOptions& o) { o.batches = {0, 1}; });
  with("negative batch", [](SynthOptions& o) { o.batches = {-4}; });
  with("duplicate batch", [](SynthOptions& o) { o.batches = {8, 16, 8}; });
  with("zero procs", [](SynthOptions& o) { o.max_procs = 0; });
  with("49 procs", [](SynthOptions& o) { o.max_procs = 49; });
  with("zero efficiency", [](SynthOptions& o) { o.params.compute_efficiency = 0; });
  with("NaN host", [](SynthOptions& o) { o.params.host_ms_per_layer = std::nan(""); });
  with("overlap above 1", [](SynthOptions& o) { o.params.mps_fixed_serial_share = 1.5; });
  with("exponent below 1", [](SynthOptions& o) { o.params.smooth_max_exponent = 0.5; });
  for (const Case& c : cases) {
    Status s = c.options.Validate();
    EXPECT_EQ(s.code(), StatusCode::kInvalidArgument) << c.name;
    Result<ProfileTable> t = SynthesizeProfiles(Gpu("a100-80gb"), BuiltinModelCards(), c.options);
    EXPECT_FALSE(t.ok()) << c.name;
  }
  SynthOptions edge;
  edge.batches = {256, 1};
  edge.max_procs = 48;
  EXPECT_TRUE(edge.Validate().ok());
}

TEST(ProfileSynth, RejectsBadCards) {
  std::vector<ModelCard> dup = {ToyCard(), ToyCard()};
  EXPECT_FALSE(SynthesizeProfiles(Gpu("a100-80gb"), dup).ok());
  ModelCard zero = ToyCard();
  zero.gflops = 0;
  EXPECT_FALSE(SynthesizeProfiles(Gpu("a100-80gb"), std::vector<ModelCard>{zero}).ok());
  ModelCard unnamed = ToyCard();
  unnamed.name.clear();
  EXPECT_FALSE(SynthesizeProfiles(Gpu("a100-80gb"), std::vector<ModelCard>{unnamed}).ok());
}

// Worked by hand on the toy GPU (one profile = the whole GPU):
//   per sample = 2 GFLOP / 1 TFLOPS + 1000 MiB x 1 / 1 MiB per us = 2 + 1 = 3 ms
//   host = 10 x 0.5 = 5 ms; fixed = 10 x 0.1 = 1 ms
//   alone = 1 + 3B; shared = 1 x (1 + 0.5 (P - 1)) + 3PB
//   memory per process = 1 GiB context + 1 GiB weights + B x 1000/1024 GiB
// With exponent 1 the smooth max is the plain sum of the three terms.
TEST(ProfileSynth, PredictSegmentMatchesHandWorkedFormula) {
  const GpuModel gpu = ToyGpu();
  const MigProfile& profile = gpu.profiles[0];
  struct Case {
    int batch, procs;
    double exponent;
    double latency_ms;  // expected
  };
  const Case cases[] = {
      {1, 1, 1.0, 5 + 4 + 4},        // host 5, alone 4, shared 4
      {2, 1, 1.0, 5 + 7 + 7},        // alone = shared = 1 + 6
      {1, 3, 1.0, 5 + 4 + (2 + 9)},  // shared = 1 x 2 + 3 x 3
      {1, 3, 200.0, 11},             // sharp corner: the maximum, 11 ms
      {2, 2, 200.0, 1.5 + 12},       // shared 13.5 dominates host 5, alone 7
  };
  for (const Case& c : cases) {
    std::optional<SegmentPrediction> p =
        PredictSegment(ToyCard(), gpu, profile, c.batch, c.procs, ToyParams(c.exponent));
    ASSERT_TRUE(p.has_value()) << c.batch << "x" << c.procs;
    EXPECT_NEAR(p->latency_ms, c.latency_ms, 1e-3 * c.latency_ms) << c.batch << "x" << c.procs;
    EXPECT_NEAR(p->throughput_rps, 1000.0 * c.batch * c.procs / p->latency_ms, 1e-9);
  }
  // 3 processes x (2 + 0.977) = 8.93 GiB fit in 10; 4 x 2.977 = 11.9 do not.
  EXPECT_TRUE(PredictSegment(ToyCard(), gpu, profile, 1, 3, ToyParams(1)).has_value());
  EXPECT_FALSE(PredictSegment(ToyCard(), gpu, profile, 1, 4, ToyParams(1)).has_value());
  // 1 process x (2 + 8 x 0.977) = 9.8 GiB fits; batch 16 needs 17.6 GiB.
  EXPECT_TRUE(PredictSegment(ToyCard(), gpu, profile, 8, 1, ToyParams(1)).has_value());
  EXPECT_FALSE(PredictSegment(ToyCard(), gpu, profile, 16, 1, ToyParams(1)).has_value());
}

TEST(ProfileSynth, EveryCatalogGpuGetsOnlyPrimaryProfiles) {
  for (const GpuModel* mig : AllMigGpus()) {
    const GpuModel& gpu = *mig;
    const ProfileTable table = DefaultProfiles(gpu);
    ASSERT_FALSE(table.empty()) << gpu.name;
    std::set<std::string> primary;
    for (int i : gpu.PrimaryProfiles()) primary.insert(gpu.profiles[i].name);
    std::set<std::string> seen_profiles;
    for (const ProfileEntry& e : table.entries()) {
      EXPECT_EQ(e.key.gpu, gpu.name);
      EXPECT_TRUE(primary.count(e.key.profile)) << gpu.name << " " << e.key.profile;
      seen_profiles.insert(e.key.profile);
    }
    EXPECT_EQ(seen_profiles, primary) << gpu.name;
    std::set<std::string> models;
    for (const std::string& m : table.Models()) models.insert(m);
    EXPECT_EQ(models.size(), BuiltinModelCards().size()) << gpu.name;
  }
}

// A larger instance has at least the SMs, bandwidth and memory of a smaller
// one, so it must never be slower for the same (batch, procs).
TEST(ProfileSynth, LargerInstanceNeverSlower) {
  for (const GpuModel* mig : AllMigGpus()) {
    const GpuModel& gpu = *mig;
    const ProfileTable table = DefaultProfiles(gpu);
    const std::vector<int> primary = gpu.PrimaryProfiles();
    for (const ProfileEntry& e : table.entries()) {
      for (size_t i = 0; i + 1 < primary.size(); ++i) {
        if (gpu.profiles[primary[i]].name != e.key.profile) continue;
        ProfileKey bigger = e.key;
        bigger.profile = gpu.profiles[primary[i + 1]].name;
        const ProfileEntry* big = table.Find(bigger);
        ASSERT_NE(big, nullptr) << "fits in " << e.key.profile << " but not in " << bigger.profile
                                << ": " << e.key.model << " on " << gpu.name;
        EXPECT_GE(big->throughput_rps, e.throughput_rps * (1 - 1e-12))
            << e.key.model << " " << gpu.name << " " << bigger.profile << " b" << e.key.batch
            << " p" << e.key.procs;
      }
    }
  }
}

// H100 SXM has more SMs per profile, more bandwidth and more peak than A100.
TEST(ProfileSynth, H100AtLeastAsFastAsA100) {
  const ProfileTable a100 = DefaultProfiles(Gpu("a100-80gb"));
  const ProfileTable h100 = DefaultProfiles(Gpu("h100-80gb"));
  int compared = 0;
  for (const ProfileEntry& e : a100.entries()) {
    ProfileKey key = e.key;
    key.gpu = "h100-80gb";
    const ProfileEntry* h = h100.Find(key);
    ASSERT_NE(h, nullptr) << e.key.model << " " << e.key.profile;
    EXPECT_GE(h->throughput_rps, e.throughput_rps * (1 - 1e-12))
        << e.key.model << " " << e.key.profile << " b" << e.key.batch << " p" << e.key.procs;
    ++compared;
  }
  EXPECT_GT(compared, 1000);
}

// More processes or a bigger batch never need less memory, and more
// processes never lower the segment's throughput (they only add overlap).
TEST(ProfileSynth, FeasibilityAndThroughputMonotoneInProcs) {
  const GpuModel& gpu = Gpu("a100-80gb");
  const ProfileTable table = DefaultProfiles(gpu);
  for (const ProfileEntry& e : table.entries()) {
    if (e.key.procs > 1) {
      ProfileKey fewer = e.key;
      --fewer.procs;
      const ProfileEntry* f = table.Find(fewer);
      ASSERT_NE(f, nullptr);
      EXPECT_GE(e.throughput_rps, f->throughput_rps * (1 - 1e-12));
    }
    if (e.key.batch > 1) {
      ProfileKey smaller = e.key;
      smaller.batch /= 2;
      EXPECT_NE(table.Find(smaller), nullptr);
    }
  }
}

TEST(ProfileSynth, LatencyConsistentWithThroughput) {
  for (const GpuModel* mig : AllMigGpus()) {
    const GpuModel& gpu = *mig;
    const ProfileTable table = DefaultProfiles(gpu);  // entries() views it: keep it alive
    for (const ProfileEntry& e : table.entries()) {
      // per-process throughput x latency / batch = 1, as in the measured data.
      const double per_process = e.throughput_rps / e.key.procs;
      EXPECT_NEAR(per_process * e.latency_ms / 1000.0 / e.key.batch, 1.0, 1e-9);
      EXPECT_TRUE(std::isfinite(e.latency_ms) && e.latency_ms > 0);
    }
  }
}

TEST(ProfileSynth, Deterministic) {
  const GpuModel& gpu = Gpu("h100-94gb");
  const ProfileTable a = DefaultProfiles(gpu);
  const ProfileTable b = DefaultProfiles(gpu);
  ASSERT_EQ(a.size(), b.size());
  for (size_t i = 0; i < a.size(); ++i) {
    EXPECT_EQ(a.entries()[i].key, b.entries()[i].key);
    EXPECT_EQ(a.entries()[i].throughput_rps, b.entries()[i].throughput_rps);
    EXPECT_EQ(a.entries()[i].latency_ms, b.entries()[i].latency_ms);
  }
}

TEST(ProfileSynth, OptionsSelectBatchesProcsAndProfiles) {
  const GpuModel& gpu = Gpu("a100-80gb");
  Result<const ModelCard*> card = FindModelCard("resnet50");
  ASSERT_TRUE(card.ok());
  SynthOptions options;
  options.batches = {4};
  options.max_procs = 2;
  options.primary_profiles_only = false;
  Result<ProfileTable> t = SynthesizeProfiles(gpu, std::span<const ModelCard>(*card, 1), options);
  ASSERT_TRUE(t.ok()) << t.status().ToString();
  // Every profile (primary, 1g.20gb and 1g.10gb+me) x batch 4 x procs 1..2.
  EXPECT_EQ(t->size(), gpu.profiles.size() * 2);
  EXPECT_NE(t->Find({"resnet50", "a100-80gb", "1g.10gb+me", 4, 2}), nullptr);
}

// Conformance against ParvaGPU's A100-80GB measurements (read at run time from
// TESSERA_SHARED_DATA_DIR, never copied into the repository).
TEST(ProfileSynthAccuracy, MatchesParvaGpuA100Measurements) {
  const std::string dir = std::string(TESSERA_SHARED_DATA_DIR) + "/parvagpu/prof_data";
  if (!std::filesystem::is_directory(dir)) {
    GTEST_SKIP() << "measured data " << dir << " is absent; this accuracy test needs "
                 << "ParvaGPU's prof_data placed as docs/data-sources.md says";
  }
  Result<ProfileTable> measured = LoadProfiles(dir);
  ASSERT_TRUE(measured.ok()) << measured.status().ToString();
  const GpuModel& gpu = Gpu("a100-80gb");
  std::vector<double> tp_err, lat_err;
  std::map<std::string, std::vector<double>> per_model;
  for (const ProfileEntry& m : measured->entries()) {
    Result<const ModelCard*> card = FindModelCard(m.key.model);
    ASSERT_TRUE(card.ok()) << card.status().ToString();
    const MigProfile* profile = gpu.FindProfile(m.key.profile);
    ASSERT_NE(profile, nullptr) << m.key.profile;
    std::optional<SegmentPrediction> p =
        PredictSegment(**card, gpu, *profile, m.key.batch, m.key.procs);
    // A measured configuration the model deems out of memory is a full miss.
    double e = 1.0;
    if (p) {
      e = std::abs(p->throughput_rps - m.throughput_rps) / m.throughput_rps;
      lat_err.push_back(std::abs(p->latency_ms - m.latency_ms) / m.latency_ms);
    }
    tp_err.push_back(e);
    per_model[m.key.model].push_back(e);
  }
  ASSERT_GT(tp_err.size(), 1000u);
  const double median_tp = Median(tp_err);
  std::cout << "synthesizer vs ParvaGPU A100-80GB, " << tp_err.size() << " measured rows:\n"
            << "  median relative error: segment throughput " << median_tp << ", latency "
            << Median(lat_err) << "\n"
            << "  measured-feasible rows predicted feasible: " << lat_err.size() << " ("
            << 100.0 * lat_err.size() / tp_err.size() << "%)\n";
  for (const auto& [model, errs] : per_model) {
    std::cout << "  " << model << ": median throughput error " << Median(errs) << "\n";
  }
  EXPECT_LE(median_tp, 0.25);
}

}  // namespace
}  // namespace tessera
