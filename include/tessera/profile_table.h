// ProfileTable: measured or synthesized performance of one DNN model on one
// MIG profile, keyed by (model, gpu, profile, batch, procs).
//
// An entry describes a *segment*: one MIG instance running `procs` identical
// MPS processes, each executing batches of `batch` requests. Its throughput is
// the whole segment's (per-process throughput x procs, requests/s) and its
// latency is the per-batch execution time of one process (ms). Entries whose
// configuration cannot run (out of memory) are simply absent.
//
// Thread-safety: const methods are safe from several threads.
#ifndef TESSERA_PROFILE_TABLE_H_
#define TESSERA_PROFILE_TABLE_H_

#include <cstdint>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "tessera/status.h"

namespace tessera {

struct ProfileKey {
  std::string model;    // canonical model name, e.g. "resnet50"
  std::string gpu;      // catalog GPU name, e.g. "a100-80gb"
  std::string profile;  // MIG profile name on that GPU, e.g. "3g.40gb"
  int batch = 1;
  int procs = 1;
  friend bool operator==(const ProfileKey&, const ProfileKey&) = default;
};

// "(model, gpu, profile, batch B, procs P)": how error messages name a key.
std::string DescribeKey(const ProfileKey& key);

struct ProfileEntry {
  ProfileKey key;
  double throughput_rps = 0;      // whole segment, requests per second
  double latency_ms = 0;          // one batch on one process, mean
  std::optional<double> p99_ms;   // tail latency of one batch, when measured
  std::optional<double> mem_gib;  // peak memory of the segment, when measured
};

class ProfileTable {
 public:
  // Adds an entry. InvalidArgument if the key is already present or a
  // number is outside its input limit (input_limits.h: kBatch, kProcs,
  // kThroughputRps, kLatencyMs).
  Status Add(ProfileEntry entry);
  // Adds every entry of `other`; stops at the first duplicate.
  Status Merge(const ProfileTable& other);

  // The entry for `key`, or nullptr.
  const ProfileEntry* Find(const ProfileKey& key) const;
  // The position in entries() of the entry for `key`, or nullopt.
  std::optional<size_t> IndexOf(const ProfileKey& key) const;
  // Every entry of (model, gpu), in insertion order.
  std::vector<const ProfileEntry*> EntriesFor(std::string_view model, std::string_view gpu) const;
  bool HasModel(std::string_view model, std::string_view gpu) const;
  // Distinct model names / GPU names, sorted.
  std::vector<std::string> Models() const;
  std::vector<std::string> Gpus() const;

  std::span<const ProfileEntry> entries() const { return entries_; }
  size_t size() const { return entries_.size(); }
  bool empty() const { return entries_.empty(); }

 private:
  // The entries of one profile of one (model, gpu), by (batch, procs) packed
  // into one integer (PackBatchProcs).
  struct ProfileSlot {
    std::string profile;
    std::unordered_map<uint64_t, size_t> index;  // -> entries_ index
  };
  // The entries of one (model, gpu): the lookups allocate nothing, and a
  // table of many rows is indexed without a string per row.
  struct Group {
    std::vector<size_t> entries;  // entries_ indices, in insertion order
    std::vector<ProfileSlot> profiles;
  };
  // (model, gpu) -> groups_ index; looked up by string views.
  struct ModelGpuLess {
    using is_transparent = void;
    template <typename A, typename B>
    bool operator()(const A& a, const B& b) const {
      return std::pair<std::string_view, std::string_view>(a.first, a.second) <
             std::pair<std::string_view, std::string_view>(b.first, b.second);
    }
  };

  const Group* FindGroup(std::string_view model, std::string_view gpu) const;

  std::vector<ProfileEntry> entries_;
  std::vector<Group> groups_;
  std::map<std::pair<std::string, std::string>, size_t, ModelGpuLess> group_of_;
};

// Maps the model names other tools use onto Tessera's canonical names
// ("bert", ParvaGPU's name for BERT-large at sequence length 128, becomes
// "bert-large"); other names are returned unchanged, lower-cased.
std::string CanonicalModelName(std::string_view name);

}  // namespace tessera

#endif  // TESSERA_PROFILE_TABLE_H_
