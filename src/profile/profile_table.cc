#include "tessera/profile_table.h"

#include <algorithm>
#include <cmath>
#include <set>

#include "tessera/input_limits.h"
#include "tessera/text_io.h"

namespace tessera {
namespace {

std::string ModelGpuKey(std::string_view model, std::string_view gpu) {
  std::string k(model);
  k += '\x1f';
  k += gpu;
  return k;
}

std::string EncodeKey(const ProfileKey& key) {
  return ModelGpuKey(key.model, key.gpu) + '\x1f' + key.profile + '\x1f' +
         std::to_string(key.batch) + '\x1f' + std::to_string(key.procs);
}

std::string Describe(const ProfileKey& key) {
  return key.model + " on " + key.gpu + " " + key.profile + " batch " + std::to_string(key.batch) +
         " procs " + std::to_string(key.procs);
}

}  // namespace

Status ProfileTable::Add(ProfileEntry entry) {
  const ProfileKey& key = entry.key;
  if (key.model.empty() || key.gpu.empty() || key.profile.empty()) {
    return Status::InvalidArgument("profile entry with an empty model, gpu or profile");
  }
  if (!limits::kBatch.Contains(key.batch)) {
    return Status::InvalidArgument(Describe(key) + ": batch " +
                                   OutOfRange(limits::kBatch, key.batch));
  }
  if (!limits::kProcs.Contains(key.procs)) {
    return Status::InvalidArgument(Describe(key) + ": procs " +
                                   OutOfRange(limits::kProcs, key.procs));
  }
  if (!limits::kThroughputRps.Contains(entry.throughput_rps)) {
    return Status::InvalidArgument(Describe(key) + ": throughput_rps " +
                                   OutOfRange(limits::kThroughputRps, entry.throughput_rps));
  }
  if (!limits::kLatencyMs.Contains(entry.latency_ms)) {
    return Status::InvalidArgument(Describe(key) + ": latency_ms " +
                                   OutOfRange(limits::kLatencyMs, entry.latency_ms));
  }
  const std::string encoded = EncodeKey(key);
  if (index_.count(encoded)) {
    return Status::InvalidArgument("duplicate profile entry for " + Describe(key));
  }
  index_.emplace(encoded, entries_.size());
  by_model_gpu_[ModelGpuKey(key.model, key.gpu)].push_back(entries_.size());
  entries_.push_back(std::move(entry));
  return Status::Ok();
}

Status ProfileTable::Merge(const ProfileTable& other) {
  for (const ProfileEntry& e : other.entries()) TESSERA_RETURN_IF_ERROR(Add(e));
  return Status::Ok();
}

const ProfileEntry* ProfileTable::Find(const ProfileKey& key) const {
  auto it = index_.find(EncodeKey(key));
  return it == index_.end() ? nullptr : &entries_[it->second];
}

std::vector<const ProfileEntry*> ProfileTable::EntriesFor(std::string_view model,
                                                          std::string_view gpu) const {
  std::vector<const ProfileEntry*> out;
  auto it = by_model_gpu_.find(ModelGpuKey(model, gpu));
  if (it == by_model_gpu_.end()) return out;
  out.reserve(it->second.size());
  for (size_t i : it->second) out.push_back(&entries_[i]);
  return out;
}

bool ProfileTable::HasModel(std::string_view model, std::string_view gpu) const {
  return by_model_gpu_.count(ModelGpuKey(model, gpu)) > 0;
}

std::vector<std::string> ProfileTable::Models() const {
  std::set<std::string> names;
  for (const ProfileEntry& e : entries_) names.insert(e.key.model);
  return {names.begin(), names.end()};
}

std::vector<std::string> ProfileTable::Gpus() const {
  std::set<std::string> names;
  for (const ProfileEntry& e : entries_) names.insert(e.key.gpu);
  return {names.begin(), names.end()};
}

std::string CanonicalModelName(std::string_view name) {
  std::string lower = AsciiLower(name);
  if (lower == "bert") return "bert-large";
  return lower;
}

}  // namespace tessera
