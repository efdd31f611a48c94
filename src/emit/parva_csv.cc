// ParvaGPU's deployment-map CSV (shared/data/parvagpu/README.md, deployment/).

#include <algorithm>
#include <cctype>
#include <map>
#include <string>
#include <vector>

#include "fmt/format.h"
#include "tessera/deployment_format.h"
#include "tessera/plan/metrics.h"

namespace tessera {
namespace {

// The compute slices of `profile`. Profiles the GPU model does not know (a
// deployment for another GPU) fall back to the leading "<g>g" of the name, so
// the map is still written rather than silently missing a column.
int ComputeSlices(const GpuModel& gpu, const std::string& profile) {
  if (const MigProfile* p = gpu.FindProfile(profile)) return p->compute_slices;
  int g = 0;
  for (char c : profile) {
    if (!std::isdigit(static_cast<unsigned char>(c))) break;
    g = g * 10 + (c - '0');
  }
  return g;
}

// ParvaGPU writes names bare; quote (RFC 4180) only a name that would break
// the row, so ordinary maps stay byte-compatible with the artifact's.
std::string CsvField(const std::string& s) {
  if (s.find_first_of(",\"\r\n") == std::string::npos) return s;
  std::string out = "\"";
  for (char c : s) {
    if (c == '"') out += '"';
    out += c;
  }
  return out + "\"";
}

// GPUs in index order. Positions within a node are counted over this order,
// because nodes need not be 8 wide (index % 8 would be wrong).
std::vector<const GpuAssignment*> GpusByIndex(const Deployment& deployment) {
  std::vector<const GpuAssignment*> gpus;
  for (const GpuAssignment& g : deployment.gpus) gpus.push_back(&g);
  std::stable_sort(gpus.begin(), gpus.end(),
                   [](const auto* a, const auto* b) { return a->index < b->index; });
  return gpus;
}

// One GPU's rows: instance size descending, ties kept in start order (stable).
void AppendGpuRows(const GpuAssignment& g, int position, const GpuModel& gpu, std::string& out) {
  std::vector<std::pair<int, const Instance*>> rows;
  for (const Instance& i : g.instances()) rows.emplace_back(ComputeSlices(gpu, i.profile), &i);
  std::stable_sort(rows.begin(), rows.end(),
                   [](const auto& a, const auto& b) { return a.first > b.first; });
  for (const auto& [size, i] : rows) {
    fmt::format_to(std::back_inserter(out), "{},{},{},{},{},{},{}\n", g.node, position,
                   CsvField(i->model), i->start, size, i->batch, i->procs);
  }
}

}  // namespace

std::string FormatParvaCsv(const Deployment& deployment, const GpuModel& gpu) {
  std::string out = "Num instance,Num GPU,Model,Placement,Instance size,Batch size,Num proc\n";
  std::map<int, int> next_position;  // node -> GPUs of that node seen so far
  for (const GpuAssignment* g : GpusByIndex(deployment)) {
    AppendGpuRows(*g, next_position[g->node]++, ModelOf(deployment, *g, gpu), out);
  }
  return out;
}

}  // namespace tessera
