#include "tessera/profile_table.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <set>

#include "tessera/util/input_limits.h"
#include "tessera/util/text_io.h"

namespace tessera {
namespace {

// (batch, procs) as one integer, exactly: both fit 32 bits.
uint64_t PackBatchProcs(int batch, int procs) {
  return (uint64_t{static_cast<uint32_t>(batch)} << 32) | static_cast<uint32_t>(procs);
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
  auto group_it = group_of_.find(std::pair<std::string_view, std::string_view>(key.model, key.gpu));
  if (group_it == group_of_.end()) {
    group_it = group_of_.emplace(std::pair(key.model, key.gpu), groups_.size()).first;
    groups_.emplace_back();
  }
  Group& group = groups_[group_it->second];
  auto slot = std::find_if(group.profiles.begin(), group.profiles.end(),
                           [&](const ProfileSlot& s) { return s.profile == key.profile; });
  if (slot == group.profiles.end()) {
    group.profiles.push_back({key.profile, {}});
    slot = group.profiles.end() - 1;
  }
  const auto [it, inserted] =
      slot->index.emplace(PackBatchProcs(key.batch, key.procs), entries_.size());
  if (!inserted) return Status::InvalidArgument("duplicate profile entry for " + Describe(key));
  group.entries.push_back(entries_.size());
  entries_.push_back(std::move(entry));
  return Status::Ok();
}

Status ProfileTable::Merge(const ProfileTable& other) {
  for (const ProfileEntry& e : other.entries()) TESSERA_RETURN_IF_ERROR(Add(e));
  return Status::Ok();
}

std::string DescribeKey(const ProfileKey& key) {
  return fmt::format("({}, {}, {}, batch {}, procs {})", key.model, key.gpu, key.profile, key.batch,
                     key.procs);
}

const ProfileTable::Group* ProfileTable::FindGroup(std::string_view model,
                                                   std::string_view gpu) const {
  auto it = group_of_.find(std::pair(model, gpu));
  return it == group_of_.end() ? nullptr : &groups_[it->second];
}

std::optional<size_t> ProfileTable::IndexOf(const ProfileKey& key) const {
  const Group* group = FindGroup(key.model, key.gpu);
  if (group == nullptr) return std::nullopt;
  for (const ProfileSlot& slot : group->profiles) {
    if (slot.profile != key.profile) continue;
    auto it = slot.index.find(PackBatchProcs(key.batch, key.procs));
    if (it == slot.index.end()) return std::nullopt;
    return it->second;
  }
  return std::nullopt;
}

const ProfileEntry* ProfileTable::Find(const ProfileKey& key) const {
  const std::optional<size_t> index = IndexOf(key);
  return index ? &entries_[*index] : nullptr;
}

std::vector<const ProfileEntry*> ProfileTable::EntriesFor(std::string_view model,
                                                          std::string_view gpu) const {
  std::vector<const ProfileEntry*> out;
  const Group* group = FindGroup(model, gpu);
  if (group == nullptr) return out;
  out.reserve(group->entries.size());
  for (size_t i : group->entries) out.push_back(&entries_[i]);
  return out;
}

bool ProfileTable::HasModel(std::string_view model, std::string_view gpu) const {
  return FindGroup(model, gpu) != nullptr;
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
