// LoadAlibabaTrace (alibaba_trace.h): the "openb" node and pod lists of the
// Alibaba GPU trace 2023, turned into MIG VM requests as GRMU (section 8.1)
// describes.
#include "online/alibaba_trace.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <limits>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "tessera/util/input_limits.h"
#include "tessera/util/text_io.h"

namespace tessera {
namespace {

// Required columns, found by name: the files of the trace differ in which
// other columns they carry (the multigpu* pod lists stop after gpu_milli).
constexpr std::array<std::string_view, 4> kNodeColumns = {"sn", "cpu_milli", "memory_mib", "gpu"};
enum NodeColumn { kSn, kNodeCpu, kNodeMemory, kNodeGpus };
constexpr std::array<std::string_view, 7> kPodColumns = {
    "name", "cpu_milli", "memory_mib", "num_gpu", "gpu_milli", "creation_time", "deletion_time"};
enum PodColumn { kName, kPodCpu, kPodMemory, kNumGpu, kGpuMilli, kCreation, kDeletion };

constexpr double kInfinity = std::numeric_limits<double>::infinity();

// `n` with thousands separators ("8,063"), as counts are quoted in the papers.
std::string Grouped(size_t n) { return GroupThousands(static_cast<long long>(n)); }

std::string ColumnList(std::span<const std::string_view> columns) {
  std::string out;
  for (std::string_view c : columns) out += (out.empty() ? "" : ",") + std::string(c);
  return out;
}

// Where each required column sits in a CSV whose header names its columns.
struct Header {
  std::vector<size_t> position;  // per required column
  size_t width = 0;              // columns the header names
};

Result<Header> ReadHeader(std::string_view source, const std::vector<TextLine>& lines,
                          std::span<const std::string_view> required) {
  const std::string help = fmt::format("a header naming '{}' (in any order)", ColumnList(required));
  if (lines.empty()) return FieldError(source, 1, "header", "empty file, expected " + help);
  const std::vector<std::string_view> names = SplitCsvFields(lines[0].text);
  Header header{{}, names.size()};
  for (std::string_view column : required) {
    const auto it = std::find(names.begin(), names.end(), column);
    if (it == names.end()) {
      return FieldError(source, lines[0].number, column, "missing column; expected " + help);
    }
    if (std::find(it + 1, names.end(), column) != names.end()) {
      return FieldError(source, lines[0].number, column, "named twice in the header");
    }
    header.position.push_back(static_cast<size_t>(it - names.begin()));
  }
  return header;
}

// The required fields of one data row, with typed accessors whose errors
// name the source, the line and the column.
class Row {
 public:
  Row(std::string_view source, const TextLine& line, const Header& header,
      std::span<const std::string_view> columns)
      : source_(source),
        line_(line),
        header_(header),
        columns_(columns),
        fields_(SplitCsvFields(line.text)) {}

  Status CheckWidth() const {
    if (fields_.size() == header_.width) return Status::Ok();
    return FieldError(source_, line_.number, "row",
                      fmt::format("{} fields but the header has {}: {}", fields_.size(),
                                  header_.width, QuoteForMessage(line_.text)));
  }
  Status Error(int col, std::string_view what) const {
    return FieldError(source_, line_.number, columns_[col], what);
  }
  std::string_view Raw(int col) const { return fields_[header_.position[col]]; }

  Result<std::string_view> Text(int col) const {
    if (Raw(col).empty()) return Error(col, "must not be empty");
    return Raw(col);
  }
  // A number in `range` (input_limits.h; every range here starts at 0).
  Result<double> Number(int col, const InputRange& range) const {
    const std::optional<double> v = ToDouble(Raw(col));
    if (v && range.Contains(*v)) return *v == 0 ? 0.0 : *v;  // "-0" is 0
    return Error(col, OutOfRange(range, QuoteForMessage(Raw(col))));
  }

 private:
  std::string_view source_;
  TextLine line_;
  const Header& header_;
  std::span<const std::string_view> columns_;
  std::vector<std::string_view> fields_;
};

// Calls `parse_row(row)` on every non-blank data row of a CSV.
template <typename ParseRow>
Status ForEachRow(std::string_view text, std::string_view source,
                  std::span<const std::string_view> columns, std::string_view what,
                  ParseRow parse_row) {
  const std::vector<TextLine> lines = SplitLines(text, ByteOrderMark::kStrip);
  TESSERA_ASSIGN_OR_RETURN(const Header header, ReadHeader(source, lines, columns));
  int rows = 0;
  for (size_t i = 1; i < lines.size(); ++i) {
    if (IsBlank(lines[i].text)) continue;  // holds no data; nothing is dropped
    const Row row(source, lines[i], header, columns);
    TESSERA_RETURN_IF_ERROR(row.CheckWidth());
    TESSERA_RETURN_IF_ERROR(parse_row(row));
    ++rows;
  }
  if (rows > 0) return Status::Ok();
  return FieldError(source, lines.back().number, "row",
                    fmt::format("no {}: expected rows after the header", what));
}

// ---- Nodes ----------------------------------------------------------------

Result<HostSpec> ParseNode(const Row& row) {
  HostSpec host;
  TESSERA_ASSIGN_OR_RETURN(std::string_view name, row.Text(kSn));
  host.name = std::string(name);
  TESSERA_ASSIGN_OR_RETURN(host.cpu_milli, row.Number(kNodeCpu, limits::kCpuMilli));
  TESSERA_ASSIGN_OR_RETURN(host.memory_mib, row.Number(kNodeMemory, limits::kMemoryMib));
  TESSERA_ASSIGN_OR_RETURN(const double gpus, row.Number(kNodeGpus, limits::kGpusPerHost));
  host.gpus = static_cast<int>(gpus);
  return host;
}

Status LoadHosts(const std::string& path, VmTrace& trace) {
  TESSERA_ASSIGN_OR_RETURN(const std::string text, ReadTextFile(path));
  int without_gpus = 0;
  TESSERA_RETURN_IF_ERROR(ForEachRow(text, path, kNodeColumns, "nodes", [&](const Row& row) {
    TESSERA_ASSIGN_OR_RETURN(HostSpec host, ParseNode(row));
    // The model column is ignored: every GPU becomes one GPU of trace.gpu.
    if (host.gpus == 0) {
      ++without_gpus;
      return Status::Ok();
    }
    trace.hosts.push_back(std::move(host));
    if (!limits::kHosts.Contains(static_cast<double>(trace.hosts.size())) ||
        !limits::kClusterGpus.Contains(static_cast<double>(trace.TotalGpus()))) {
      return row.Error(kNodeGpus, fmt::format("{} hosts with {} GPUs so far; a trace holds at most "
                                              "{:g} hosts and {:g} GPUs in all",
                                              trace.hosts.size(), trace.TotalGpus(),
                                              limits::kHosts.max, limits::kClusterGpus.max));
    }
    return Status::Ok();
  }));
  trace.notes.push_back(fmt::format(
      "kept {} hosts with {} GPUs from {}, each GPU taken as one {} (recorded models ignored)",
      Grouped(trace.hosts.size()), Grouped(trace.TotalGpus()), path, trace.gpu->name));
  trace.notes.push_back(fmt::format("dropped {} nodes without GPUs", Grouped(without_gpus)));
  return Status::Ok();
}

// ---- Pods -----------------------------------------------------------------

struct Pod {
  std::string name;
  double cpu_milli = 0;
  double memory_mib = 0;
  double num_gpu = 0;
  double share = 0;  // u = num_gpu x gpu_milli / 1000, in GPUs
  double creation_s = 0;
  double deletion_s = 0;
};

Result<Pod> ParsePod(const Row& row) {
  Pod pod;
  TESSERA_ASSIGN_OR_RETURN(std::string_view name, row.Text(kName));
  pod.name = std::string(name);
  TESSERA_ASSIGN_OR_RETURN(pod.cpu_milli, row.Number(kPodCpu, limits::kCpuMilli));
  TESSERA_ASSIGN_OR_RETURN(pod.memory_mib, row.Number(kPodMemory, limits::kMemoryMib));
  TESSERA_ASSIGN_OR_RETURN(pod.num_gpu, row.Number(kNumGpu, limits::kPodGpus));
  // gpu_milli is the share of ONE GPU each of a pod's GPUs gets, in thousandths.
  TESSERA_ASSIGN_OR_RETURN(const double gpu_milli, row.Number(kGpuMilli, limits::kGpuMilli));
  pod.share = pod.num_gpu * gpu_milli / 1000;
  TESSERA_ASSIGN_OR_RETURN(pod.creation_s, row.Number(kCreation, limits::kTraceTimeS));
  TESSERA_ASSIGN_OR_RETURN(pod.deletion_s, row.Number(kDeletion, limits::kTraceTimeS));
  if (pod.deletion_s < pod.creation_s) {
    return row.Error(kDeletion, fmt::format("must be >= creation_time ({}), got {}", pod.creation_s,
                                            QuoteForMessage(row.Raw(kDeletion))));
  }
  return pod;
}

Result<std::vector<Pod>> ReadPods(const std::string& path) {
  TESSERA_ASSIGN_OR_RETURN(const std::string text, ReadTextFile(path));
  std::vector<Pod> pods;
  TESSERA_RETURN_IF_ERROR(ForEachRow(text, path, kPodColumns, "pods", [&](const Row& row) {
    TESSERA_ASSIGN_OR_RETURN(Pod pod, ParsePod(row));
    pods.push_back(std::move(pod));
    return Status::Ok();
  }));
  return pods;
}

// Step 1: a VM holds one MIG instance, so a pod spread over several GPUs has
// no VM counterpart. gpu_milli <= 1000 makes u <= 1 the same as num_gpu <= 1.
void DropMultiGpuPods(std::vector<Pod>& pods, std::vector<std::string>& notes) {
  const size_t dropped = std::erase_if(pods, [](const Pod& pod) { return pod.num_gpu > 1; });
  notes.push_back(fmt::format("dropped {} pods asking for more than one GPU", Grouped(dropped)));
}

// The p-quantile of ascending `sorted` by linear interpolation between order
// statistics (numpy's default). REQUIRES: !sorted.empty(), 0 <= p <= 1.
double LinearQuantile(const std::vector<double>& sorted, double p) {
  const double h = static_cast<double>(sorted.size() - 1) * p;
  const size_t lo = static_cast<size_t>(std::floor(h));
  const size_t hi = std::min(lo + 1, sorted.size() - 1);
  return sorted[lo] + (h - static_cast<double>(lo)) * (sorted[hi] - sorted[lo]);
}

// Step 2: Tukey's fences on creation times. The default list's first 14 pods
// were created months before the rest; the paper's 8,063 VMs leave them out.
void DropCreationOutliers(std::vector<Pod>& pods, std::vector<std::string>& notes) {
  if (pods.empty()) return;
  std::vector<double> times;
  for (const Pod& pod : pods) times.push_back(pod.creation_s);
  std::sort(times.begin(), times.end());
  const double q1 = LinearQuantile(times, 0.25), q3 = LinearQuantile(times, 0.75);
  const double low = q1 - 1.5 * (q3 - q1), high = q3 + 1.5 * (q3 - q1);
  const size_t dropped = std::erase_if(
      pods, [&](const Pod& pod) { return pod.creation_s < low || pod.creation_s > high; });
  notes.push_back(
      fmt::format("dropped {} pods created outside [{}, {}] s (Q1 {} s, Q3 {} s, 1.5 x IQR fences)",
                  Grouped(dropped), low, high, q1, q3));
}

// Step 3, and the requests in arrival order with dense ids.
std::vector<VmRequest> ToRequests(const std::vector<Pod>& pods, const GpuModel& gpu) {
  double max_share = 0;
  for (const Pod& pod : pods) max_share = std::max(max_share, pod.share);
  if (max_share == 0) max_share = 1;  // only CPU-only pods: all map to the smallest profile
  std::vector<VmRequest> vms;
  for (const Pod& pod : pods) {
    // deletion == creation is kept: departure_s == arrival_s, the VM departs
    // at once after arriving (one such pod is in the default list).
    vms.push_back({0, pod.name, ProfileForGpuShare(gpu, pod.share, max_share), pod.cpu_milli,
                   pod.memory_mib, pod.creation_s, pod.deletion_s});
  }
  std::stable_sort(vms.begin(), vms.end(), [](const VmRequest& a, const VmRequest& b) {
    return a.arrival_s < b.arrival_s;
  });
  for (size_t i = 0; i < vms.size(); ++i) vms[i].id = static_cast<int>(i);
  return vms;
}

std::string ProfileCountsNote(const VmTrace& trace) {
  const std::vector<int> counts = RequestsPerProfile(trace);
  std::string list;
  for (int k : trace.gpu->NonMediaProfiles()) {
    list += fmt::format("{}{} {}", list.empty() ? "" : ", ", trace.gpu->profiles[k].name,
                        Grouped(counts[k]));
  }
  return fmt::format("mapped {} pods to {} profiles: {}", Grouped(trace.vms.size()),
                     trace.gpu->name, list);
}

Status LoadVms(const std::string& path, VmTrace& trace) {
  TESSERA_ASSIGN_OR_RETURN(std::vector<Pod> pods, ReadPods(path));
  trace.notes.push_back(fmt::format("read {} pods from {}", Grouped(pods.size()), path));
  DropMultiGpuPods(pods, trace.notes);
  DropCreationOutliers(pods, trace.notes);
  trace.vms = ToRequests(pods, *trace.gpu);
  trace.notes.push_back(fmt::format("kept {} pods as VMs", Grouped(trace.vms.size())));
  const size_t at_once = std::count_if(trace.vms.begin(), trace.vms.end(), [](const auto& vm) {
    return vm.departure_s == vm.arrival_s;
  });
  if (at_once > 0) {
    trace.notes.push_back(
        fmt::format("pods deleted at their creation time, departing at once after arriving: {}",
                    Grouped(at_once)));
  }
  trace.notes.push_back(ProfileCountsNote(trace));
  return Status::Ok();
}

// U_k of Eq. 27: compute slices x memory slices.
double ProfileSize(const MigProfile& profile) {
  return static_cast<double>(profile.compute_slices) * profile.memory_slices;
}

}  // namespace

int ProfileForGpuShare(const GpuModel& gpu, double gpu_share, double max_share) {
  const std::vector<int> candidates = gpu.NonMediaProfiles();
  if (candidates.empty()) return -1;  // no catalog GPU lacks plain profiles
  double max_size = 0;
  for (int k : candidates) max_size = std::max(max_size, ProfileSize(gpu.profiles[k]));
  const double target = gpu_share / (max_share > 0 ? max_share : 1);
  int best = candidates.front();  // also the answer for a NaN share
  double best_gap = kInfinity;
  for (int k : candidates) {  // catalog order: strict '<' sends ties to the smaller profile
    const double gap = std::abs(ProfileSize(gpu.profiles[k]) / max_size - target);
    if (gap < best_gap) {
      best = k;
      best_gap = gap;
    }
  }
  return best;
}

Result<VmTrace> LoadAlibabaTrace(const std::string& nodes_path, const std::string& pods_path,
                                 const GpuModel& gpu) {
  VmTrace trace;
  trace.gpu = &gpu;
  TESSERA_RETURN_IF_ERROR(LoadHosts(nodes_path, trace));
  TESSERA_RETURN_IF_ERROR(LoadVms(pods_path, trace));
  return trace;
}

}  // namespace tessera
