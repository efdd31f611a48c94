#include "tessera/profile_io.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <filesystem>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <unordered_map>
#include <vector>

#include "tessera/gpu_catalog.h"
#include "tessera/util/input_limits.h"
#include "tessera/util/text_io.h"

namespace tessera {
namespace {

namespace fs = std::filesystem;

// The required columns of a Tessera profile CSV, in order.
constexpr std::array<std::string_view, 7> kTesseraColumns = {
    "model", "gpu", "profile", "batch", "procs", "throughput_rps", "latency_ms"};
constexpr std::string_view kTesseraHeaderHelp =
    "'model,gpu,profile,batch,procs,throughput_rps,latency_ms' optionally followed by "
    "'p99_ms' and/or 'mem_gib'";

// The columns of a ParvaGPU prof_data CSV, in order.
constexpr std::array<std::string_view, 5> kParvaColumns = {
    "Mig instance", "Batch size", "Workload Number", "Throughput", "Latency"};
constexpr std::string_view kParvaHeaderHelp =
    "'Mig instance,Batch size,Workload Number,Throughput,Latency'";

// The whole of `s` as an int; nullopt if it is not one.
std::optional<int> ToInt(std::string_view s) {
  int value = 0;
  const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), value);
  if (s.empty() || ec != std::errc() || end != s.data() + s.size()) return std::nullopt;
  return value;
}

// The fields of one data row, with typed accessors whose errors name the
// source, the line and the column.
class RowReader {
 public:
  RowReader(std::string_view source, TextLine line, std::span<const std::string_view> columns)
      : source_(source), line_(line), columns_(columns), fields_(SplitCsvFields(line.text)) {}

  // OK iff the row has exactly one field per column.
  Status CheckWidth() const {
    if (fields_.size() < columns_.size()) {
      return Error(fields_.size(), fmt::format("missing: the row has {} columns, the header {}",
                                               fields_.size(), columns_.size()));
    }
    if (fields_.size() > columns_.size()) {
      return FieldError(source_, line_.number, "row",
                        fmt::format("{} columns but the header has {}: {}", fields_.size(),
                                    columns_.size(), QuoteForMessage(line_.text)));
    }
    return Status::Ok();
  }

  Status Error(size_t col, std::string_view what) const {
    return FieldError(source_, line_.number, columns_[col], what);
  }
  std::string_view Raw(size_t col) const { return fields_[col]; }
  int line() const { return line_.number; }

  Result<std::string_view> Text(size_t col) const {
    if (fields_[col].empty()) return Error(col, "must not be empty");
    return fields_[col];
  }

  // An integer in `range` (batch sizes, process counts, slices).
  Result<int> Count(size_t col, const InputRange& range) const {
    const std::optional<int> v = ToInt(fields_[col]);
    if (!v || !range.Contains(*v)) {
      return Error(col, OutOfRange(range, QuoteForMessage(fields_[col])));
    }
    return *v;
  }

  // A number in `range` (input_limits.h).
  Result<double> Number(size_t col, const InputRange& range) const {
    const std::optional<double> v = ToDouble(fields_[col]);
    if (!v || !range.Contains(*v)) {
      return Error(col, OutOfRange(range, QuoteForMessage(fields_[col])));
    }
    return *v;
  }

  // A finite number, > 0 or (when `allow_zero`) >= 0.
  Result<double> Number(size_t col, bool allow_zero) const {
    const std::optional<double> v = ToDouble(fields_[col]);
    if (!v || !std::isfinite(*v) || *v < 0 || (*v == 0 && !allow_zero)) {
      return Error(col, fmt::format("must be a finite number {} 0, got {}", allow_zero ? ">=" : ">",
                                    QuoteForMessage(fields_[col])));
    }
    return *v;
  }

 private:
  std::string_view source_;
  TextLine line_;
  std::span<const std::string_view> columns_;
  std::vector<std::string_view> fields_;
};

// The error of `key`, read at `line`, seen first at `first_line`. `field`
// names the key's columns.
Status DuplicateError(std::string_view source, int line, std::string_view field,
                      const ProfileKey& key, int first_line) {
  return FieldError(
      source, line, field,
      fmt::format("duplicate entry {}, first at line {}", DescribeKey(key), first_line));
}

// Adds `entry`, read at `line`. Add() rechecks what the row parser checked;
// should it still refuse, say where.
Status AddAt(ProfileTable& table, std::string_view source, int line, ProfileEntry entry) {
  const Status added = table.Add(std::move(entry));
  return added.ok() ? added : FieldError(source, line, "row", added.message());
}

// ---- Tessera CSV ----------------------------------------------------------

// Column positions of the optional columns; -1 when absent.
struct TesseraLayout {
  std::vector<std::string_view> columns;
  int p99 = -1;
  int mem = -1;
};

Result<TesseraLayout> ParseTesseraHeader(std::string_view source, const TextLine& header) {
  const std::vector<std::string_view> names = SplitCsvFields(header.text);
  TesseraLayout layout;
  bool ok = names.size() >= kTesseraColumns.size() && names.size() <= kTesseraColumns.size() + 2;
  for (size_t i = 0; ok && i < names.size(); ++i) {
    if (i < kTesseraColumns.size()) {
      ok = names[i] == kTesseraColumns[i];
    } else if (names[i] == "p99_ms" && layout.p99 < 0) {
      layout.p99 = static_cast<int>(i);
    } else if (names[i] == "mem_gib" && layout.mem < 0) {
      layout.mem = static_cast<int>(i);
    } else {
      ok = false;
    }
  }
  if (!ok) {
    return FieldError(
        source, header.number, "header",
        fmt::format("expected {}, got {}", kTesseraHeaderHelp, QuoteForMessage(header.text)));
  }
  layout.columns = names;
  return layout;
}

// An optional measurement column: empty means "not measured" for this row.
Result<std::optional<double>> OptionalNumber(const RowReader& row, int col,
                                             const InputRange& range) {
  if (col < 0 || row.Raw(col).empty()) return std::optional<double>();
  TESSERA_ASSIGN_OR_RETURN(double v, row.Number(col, range));
  return std::optional<double>(v);
}

Result<ProfileEntry> ParseTesseraRow(const RowReader& row, const TesseraLayout& layout) {
  TESSERA_RETURN_IF_ERROR(row.CheckWidth());
  ProfileEntry e;
  TESSERA_ASSIGN_OR_RETURN(std::string_view model, row.Text(0));
  e.key.model = CanonicalModelName(model);
  TESSERA_ASSIGN_OR_RETURN(std::string_view gpu_name, row.Text(1));
  Result<const GpuModel*> gpu = FindMigGpu(gpu_name);
  if (!gpu.ok()) return row.Error(1, gpu.status().message());
  e.key.gpu = (*gpu)->name;
  TESSERA_ASSIGN_OR_RETURN(std::string_view profile, row.Text(2));
  if ((*gpu)->FindProfile(profile) == nullptr) {
    return row.Error(
        2, fmt::format("unknown MIG profile {} on {}", QuoteForMessage(profile), e.key.gpu));
  }
  e.key.profile = std::string(profile);
  TESSERA_ASSIGN_OR_RETURN(e.key.batch, row.Count(3, limits::kBatch));
  TESSERA_ASSIGN_OR_RETURN(e.key.procs, row.Count(4, limits::kProcs));
  TESSERA_ASSIGN_OR_RETURN(e.throughput_rps, row.Number(5, limits::kThroughputRps));
  TESSERA_ASSIGN_OR_RETURN(e.latency_ms, row.Number(6, limits::kLatencyMs));
  TESSERA_ASSIGN_OR_RETURN(e.p99_ms, OptionalNumber(row, layout.p99, limits::kLatencyMs));
  TESSERA_ASSIGN_OR_RETURN(e.mem_gib, OptionalNumber(row, layout.mem, limits::kMemGib));
  return e;
}

// ---- ParvaGPU CSV ---------------------------------------------------------

Status CheckParvaHeader(std::string_view source, const std::vector<TextLine>& lines) {
  if (lines.empty()) {
    return FieldError(source, 1, "header",
                      fmt::format("empty file, expected {}", kParvaHeaderHelp));
  }
  const std::vector<std::string_view> names = SplitCsvFields(lines[0].text);
  if (!std::equal(names.begin(), names.end(), kParvaColumns.begin(), kParvaColumns.end())) {
    return FieldError(
        source, lines[0].number, "header",
        fmt::format("expected {}, got {}", kParvaHeaderHelp, QuoteForMessage(lines[0].text)));
  }
  return Status::Ok();
}

// One ParvaGPU row as read; `feasible` is false for the `0,0` rows.
struct ParvaRow {
  ProfileEntry entry;
  int profile = 0;  // the entry's profile, an index into the GPU's profiles
  bool feasible = true;
};

// The GPU ParvaGPU rows are read for, with the primary profile of each
// `Mig instance` size (-1: none), found once rather than per row.
struct ParvaGpu {
  explicit ParvaGpu(const GpuModel& model) : gpu(model) {
    for (int size = 0; size < static_cast<int>(profile_of.size()); ++size) {
      profile_of[size] = gpu.PrimaryProfileWithComputeSlices(size);
    }
  }
  const GpuModel& gpu;
  std::array<int, static_cast<size_t>(limits::kComputeSlices.max) + 1> profile_of;
};

Result<ParvaRow> ParseParvaRow(const RowReader& row, const ParvaGpu& parva_gpu,
                               std::string_view model) {
  TESSERA_RETURN_IF_ERROR(row.CheckWidth());
  TESSERA_ASSIGN_OR_RETURN(int size, row.Count(0, limits::kComputeSlices));
  const GpuModel& gpu = parva_gpu.gpu;
  const int profile = parva_gpu.profile_of[size];
  if (profile < 0) {
    return row.Error(0, fmt::format("no MIG profile with {} compute slices on {}", size, gpu.name));
  }
  ParvaRow out;
  out.profile = profile;
  ProfileEntry& e = out.entry;
  e.key = {std::string(model), gpu.name, gpu.profiles[profile].name, 0, 0};
  TESSERA_ASSIGN_OR_RETURN(e.key.batch, row.Count(1, limits::kBatch));
  TESSERA_ASSIGN_OR_RETURN(e.key.procs, row.Count(2, limits::kProcs));
  TESSERA_ASSIGN_OR_RETURN(double per_process_rps, row.Number(3, /*allow_zero=*/true));
  TESSERA_ASSIGN_OR_RETURN(double latency_s, row.Number(4, /*allow_zero=*/true));
  // `0,0` is the format's marker for a configuration that cannot run; a single
  // zero is a broken measurement, not a marker.
  if (per_process_rps == 0 || latency_s == 0) {
    if (per_process_rps != latency_s) {
      const size_t zero = per_process_rps == 0 ? 3 : 4;
      const size_t other = zero == 3 ? 4 : 3;
      return row.Error(zero, fmt::format("is 0 but {} is {}; only '0,0' marks an infeasible "
                                         "configuration",
                                         kParvaColumns[other], QuoteForMessage(row.Raw(other))));
    }
    out.feasible = false;
  }
  e.throughput_rps = per_process_rps * e.key.procs;  // whole segment
  e.latency_ms = latency_s * 1000;
  if (!out.feasible) return out;
  if (!limits::kThroughputRps.Contains(e.throughput_rps)) {
    return row.Error(3, fmt::format("{} x {} processes = {:g} req/s per segment: {}",
                                    QuoteForMessage(row.Raw(3)), e.key.procs, e.throughput_rps,
                                    OutOfRange(limits::kThroughputRps, e.throughput_rps)));
  }
  if (!limits::kLatencyMs.Contains(e.latency_ms)) {
    return row.Error(4, fmt::format("{} s = {:g} ms: {}", QuoteForMessage(row.Raw(4)), e.latency_ms,
                                    OutOfRange(limits::kLatencyMs, e.latency_ms)));
  }
  return out;
}

// ParseParvaProfileCsv, adding the entries to `table`.
Status ParseParvaModel(ProfileTable& table, std::string_view text, std::string_view source,
                       std::string_view model, std::string_view gpu_name) {
  Result<const GpuModel*> gpu = FindMigGpu(gpu_name);
  if (!gpu.ok()) return gpu.status().WithContext(source);
  const std::string canonical = CanonicalModelName(model);
  if (canonical.empty()) return Status::InvalidArgument(std::string(source) + ": empty model name");
  const std::vector<TextLine> lines = SplitLines(text, ByteOrderMark::kStrip);
  TESSERA_RETURN_IF_ERROR(CheckParvaHeader(source, lines));
  // The line of each (profile, batch, procs) read, infeasible rows too: a key
  // appears once. The model and GPU are the file's.
  std::unordered_map<uint64_t, int> first_line;
  first_line.reserve(lines.size());
  const ParvaGpu parva_gpu(**gpu);
  for (size_t i = 1; i < lines.size(); ++i) {
    if (IsBlank(lines[i].text)) continue;
    const RowReader row(source, lines[i], kParvaColumns);
    TESSERA_ASSIGN_OR_RETURN(ParvaRow parsed, ParseParvaRow(row, parva_gpu, canonical));
    // Each part is within its input limit: batch < 2^13, procs < 2^6.
    const ProfileKey& key = parsed.entry.key;
    const uint64_t packed = (uint64_t{static_cast<uint32_t>(parsed.profile)} << 40) |
                            (uint64_t{static_cast<uint32_t>(key.batch)} << 20) |
                            static_cast<uint32_t>(key.procs);
    const auto [it, inserted] = first_line.emplace(packed, row.line());
    if (!inserted) {
      return DuplicateError(source, row.line(), "Mig instance,Batch size,Workload Number", key,
                            it->second);
    }
    if (!parsed.feasible) continue;  // `0,0`: the format's "cannot run"
    TESSERA_RETURN_IF_ERROR(AddAt(table, source, row.line(), std::move(parsed.entry)));
  }
  return Status::Ok();
}

// ---- Files ----------------------------------------------------------------

Result<ProfileTable> LoadParvaDirectory(const std::string& dir, std::string_view gpu) {
  std::vector<fs::path> files;
  std::error_code ec;
  for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
    std::error_code type_ec;
    if (it->path().extension() == ".csv" && it->is_regular_file(type_ec)) {
      files.push_back(it->path());
    }
  }
  if (ec) return Status::IoError(dir + ": cannot list the directory: " + ec.message());
  if (files.empty()) {
    return Status::NotFound(dir +
                            ": no *.csv file; expected a ParvaGPU prof_data directory "
                            "with one <model>.csv per model");
  }
  std::sort(files.begin(), files.end());
  ProfileTable table;
  std::map<std::string, std::string> model_file;  // canonical model -> first file
  for (const fs::path& file : files) {
    const std::string model = CanonicalModelName(file.stem().string());
    const auto [it, inserted] = model_file.emplace(model, file.string());
    if (!inserted) {
      return Status::InvalidArgument(fmt::format("{}: model {} is already loaded from {}",
                                                 file.string(), QuoteForMessage(model),
                                                 it->second));
    }
    TESSERA_ASSIGN_OR_RETURN(std::string text, ReadTextFile(file.string()));
    // One table for every file: each file holds another model, so no key
    // repeats across files.
    TESSERA_RETURN_IF_ERROR(ParseParvaModel(table, text, file.string(), model, gpu));
  }
  return table;
}

std::string FormatDouble(double v) {
  std::array<char, 64> buf;
  // Shortest representation that reads back to the same double.
  const auto [end, ec] = std::to_chars(buf.data(), buf.data() + buf.size(), v);
  return ec == std::errc() ? std::string(buf.data(), end) : std::string("nan");
}

}  // namespace

Result<ProfileTable> ParseTesseraProfileCsv(std::string_view text, std::string_view source) {
  const std::vector<TextLine> lines = SplitLines(text, ByteOrderMark::kStrip);
  if (lines.empty()) {
    return FieldError(source, 1, "header",
                      fmt::format("empty file, expected {}", kTesseraHeaderHelp));
  }
  TESSERA_ASSIGN_OR_RETURN(TesseraLayout layout, ParseTesseraHeader(source, lines[0]));
  ProfileTable table;
  std::vector<int> line_of;  // the line of each entry of `table`
  line_of.reserve(lines.size());
  for (size_t i = 1; i < lines.size(); ++i) {
    if (IsBlank(lines[i].text)) continue;  // holds no data; nothing is dropped
    const RowReader row(source, lines[i], layout.columns);
    TESSERA_ASSIGN_OR_RETURN(ProfileEntry entry, ParseTesseraRow(row, layout));
    if (const std::optional<size_t> first = table.IndexOf(entry.key)) {
      return DuplicateError(source, row.line(), "model,gpu,profile,batch,procs", entry.key,
                            line_of[*first]);
    }
    TESSERA_RETURN_IF_ERROR(AddAt(table, source, row.line(), std::move(entry)));
    line_of.push_back(row.line());
  }
  return table;
}

Result<ProfileTable> ParseParvaProfileCsv(std::string_view text, std::string_view source,
                                          std::string_view model, std::string_view gpu) {
  ProfileTable table;
  TESSERA_RETURN_IF_ERROR(ParseParvaModel(table, text, source, model, gpu));
  return table;
}

Result<ProfileTable> LoadProfiles(const std::string& path, std::string_view parva_gpu) {
  std::error_code ec;
  const fs::file_status st = fs::status(path, ec);
  if (ec || !fs::exists(st)) return Status::NotFound(path + ": no such file or directory");
  if (fs::is_directory(st)) return LoadParvaDirectory(path, parva_gpu);
  TESSERA_ASSIGN_OR_RETURN(std::string text, ReadTextFile(path));
  // The first column tells the formats apart; the parser then checks the rest.
  const std::vector<TextLine> lines = SplitLines(text, ByteOrderMark::kStrip);
  const std::string_view header = lines.empty() ? "" : lines[0].text;
  const std::string_view first = SplitCsvFields(header)[0];
  if (first == kTesseraColumns[0]) return ParseTesseraProfileCsv(text, path);
  if (first == kParvaColumns[0]) {
    return ParseParvaProfileCsv(text, path, fs::path(path).stem().string(), parva_gpu);
  }
  return FieldError(path, 1, "header",
                    fmt::format("unrecognized profile CSV header {}; expected a Tessera profile "
                                "CSV ({}) or a ParvaGPU model CSV ({})",
                                QuoteForMessage(header), kTesseraHeaderHelp, kParvaHeaderHelp));
}

std::string FormatTesseraProfileCsv(const ProfileTable& table) {
  const auto entries = table.entries();
  const bool p99 = std::any_of(entries.begin(), entries.end(),
                               [](const ProfileEntry& e) { return e.p99_ms.has_value(); });
  const bool mem = std::any_of(entries.begin(), entries.end(),
                               [](const ProfileEntry& e) { return e.mem_gib.has_value(); });
  std::string out = "model,gpu,profile,batch,procs,throughput_rps,latency_ms";
  if (p99) out += ",p99_ms";
  if (mem) out += ",mem_gib";
  out += '\n';
  for (const ProfileEntry& e : entries) {
    out += fmt::format("{},{},{},{},{},{},{}", e.key.model, e.key.gpu, e.key.profile, e.key.batch,
                       e.key.procs, FormatDouble(e.throughput_rps), FormatDouble(e.latency_ms));
    // An empty optional cell means "not measured" and reads back as absent.
    if (p99) out += fmt::format(",{}", e.p99_ms ? FormatDouble(*e.p99_ms) : std::string());
    if (mem) out += fmt::format(",{}", e.mem_gib ? FormatDouble(*e.mem_gib) : std::string());
    out += '\n';
  }
  return out;
}

}  // namespace tessera
