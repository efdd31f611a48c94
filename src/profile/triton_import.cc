#include "tessera/profile/triton_import.h"

#include <fmt/format.h>

#include <array>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "tessera/gpu_catalog.h"
#include "tessera/util/input_limits.h"
#include "tessera/util/text_io.h"

namespace tessera {
namespace {

// The column names each tool writes (docs/profile-import.md cites them).
struct Columns {
  std::string_view concurrency;  // perf_analyzer also writes "Request Rate" there
  std::string_view throughput;
  std::array<std::string_view, 5> latency;  // by LatencyStat
  double ms_per_unit;                       // latency unit in ms
};

constexpr Columns kPerfAnalyzer{
    "Concurrency",
    "Inferences/Second",
    {"Avg latency", "p50 latency", "p90 latency", "p95 latency", "p99 latency"},
    1e-3};  // microseconds
constexpr Columns kModelAnalyzer{"Concurrency",
                                 "Throughput (infer/sec)",
                                 {"Avg Latency (ms)", "p50 Latency (ms)", "p90 Latency (ms)",
                                  "p95 Latency (ms)", "p99 Latency (ms)"},
                                 1.0};
constexpr size_t kP99 = static_cast<size_t>(LatencyStat::kP99);

// How to get the mean when the file lacks it.
std::string_view MeanHint(TritonFormat format) {
  return format == TritonFormat::kPerfAnalyzer
             ? "perf_analyzer writes it with --verbose-csv when run without --percentile; or "
               "import a percentile with --latency p50|p90|p95|p99"
             : "Model Analyzer writes it with perf_latency_avg among inference_output_fields; or "
               "import a percentile with --latency p90|p95|p99";
}

// `s` as a whole number in `range` (an integer range of input_limits.h);
// nullopt if it is not one.
std::optional<int> WholeNumber(std::string_view s, const InputRange& range) {
  const std::optional<double> v = ToDouble(s);
  if (!v || !range.integer || !range.Contains(*v)) return std::nullopt;
  return static_cast<int>(*v);
}

// The header of one file: each column's name and position.
class Header {
 public:
  static Result<Header> Parse(std::string_view source, const TextLine& line) {
    Header h;
    h.source_ = source;
    h.line_ = line.number;
    h.names_ = SplitCsvFields(line.text);
    for (size_t i = 0; i < h.names_.size(); ++i) {
      for (size_t j = 0; j < i; ++j) {
        if (h.names_[i] == h.names_[j]) {
          return FieldError(source, line.number, h.names_[i],
                            fmt::format("column repeated (columns {} and {})", j + 1, i + 1));
        }
      }
    }
    return h;
  }
  // The position of `name`, or -1.
  int Find(std::string_view name) const {
    for (size_t i = 0; i < names_.size(); ++i) {
      if (names_[i] == name) return static_cast<int>(i);
    }
    return -1;
  }
  // The position of `name`; an error naming `why` when it is absent.
  Result<int> Require(std::string_view name, std::string_view why) const {
    const int col = Find(name);
    if (col < 0) {
      return FieldError(source_, line_, name, fmt::format("missing column, needed for {}", why));
    }
    return col;
  }
  const std::vector<std::string_view>& names() const { return names_; }

 private:
  std::string_view source_;
  int line_ = 1;
  std::vector<std::string_view> names_;
};

// One data row, with typed reads whose errors name the file, line and column.
class Row {
 public:
  Row(std::string_view source, const TextLine& line, const Header& header)
      : source_(source), line_(line), header_(header), fields_(SplitCsvFields(line.text)) {}

  Status CheckWidth() const {
    const size_t want = header_.names().size();
    if (fields_.size() == want) return Status::Ok();
    return FieldError(source_, line_.number, "row",
                      fmt::format("{} columns but the header has {}: {}", fields_.size(), want,
                                  QuoteForMessage(line_.text)));
  }
  Status Error(int col, std::string_view what) const {
    return FieldError(source_, line_.number, header_.names()[col], what);
  }
  std::string_view Raw(int col) const { return fields_[col]; }
  int line() const { return line_.number; }

  Result<int> Count(int col, const InputRange& range, std::string_view meaning) const {
    const std::optional<int> v = WholeNumber(fields_[col], range);
    if (!v) {
      return Error(col,
                   fmt::format("{} {}", meaning, OutOfRange(range, QuoteForMessage(Raw(col)))));
    }
    return *v;
  }
  // The number in `col` times `scale`, which must lie in `range`.
  Result<double> Number(int col, double scale, const InputRange& range,
                        std::string_view unit) const {
    const std::optional<double> v = ToDouble(fields_[col]);
    if (!v) return Error(col, fmt::format("not a number: {}", QuoteForMessage(Raw(col))));
    const double scaled = *v * scale;
    if (!range.Contains(scaled)) {
      return Error(col, scale == 1 ? OutOfRange(range, QuoteForMessage(Raw(col)))
                                   : fmt::format("{} {} = {:g} ms: {}", QuoteForMessage(Raw(col)),
                                                 unit, scaled, OutOfRange(range, scaled)));
    }
    return scaled;
  }

 private:
  std::string_view source_;
  TextLine line_;
  const Header& header_;
  std::vector<std::string_view> fields_;
};

// The instance count of Model Analyzer's `Instance Group`: "N:GPU" (older
// releases "N/GPU") with N in kProcs; nullopt for anything else (CPU groups,
// several kinds).
std::optional<int> GpuInstances(std::string_view group) {
  const size_t sep = group.find_first_of(":/");
  if (sep == std::string_view::npos || group.substr(sep + 1) != "GPU") return std::nullopt;
  return WholeNumber(group.substr(0, sep), limits::kProcs);
}

// The columns one file is read through.
struct Layout {
  int concurrency = -1;
  int throughput = -1;
  int latency = -1;
  int p99 = -1;             // -1: absent
  int model = -1;           // Model Analyzer, unless options.model
  int batch = -1;           // Model Analyzer
  int instance_group = -1;  // Model Analyzer
};

Result<Layout> ReadLayout(std::string_view source, const TextLine& line, const Header& header,
                          const TritonImportOptions& options) {
  const bool pa = options.format == TritonFormat::kPerfAnalyzer;
  const Columns& c = pa ? kPerfAnalyzer : kModelAnalyzer;
  if (header.Find("Request Rate") >= 0) {
    return FieldError(source, line.number, "Request Rate",
                      "an open-loop request-rate sweep; a profile row is a closed loop of "
                      "batches in flight: measure a concurrency sweep (perf_analyzer "
                      "--concurrency-range, Model Analyzer concurrency)");
  }
  Layout l;
  TESSERA_ASSIGN_OR_RETURN(l.concurrency,
                           header.Require(c.concurrency, "the batches in flight of each row"));
  TESSERA_ASSIGN_OR_RETURN(l.throughput, header.Require(c.throughput, "the segment's throughput"));
  const std::string_view latency = c.latency[static_cast<size_t>(options.latency)];
  const std::string why =
      options.latency == LatencyStat::kMean
          ? fmt::format("the mean latency (--latency mean); {}", MeanHint(options.format))
          : std::string("the latency --latency chose");
  TESSERA_ASSIGN_OR_RETURN(l.latency, header.Require(latency, why));
  l.p99 = header.Find(c.latency[kP99]);
  if (!pa) {
    if (options.model.empty()) {
      TESSERA_ASSIGN_OR_RETURN(
          l.model, header.Require("Model", "the model of each row (or name it with --model)"));
    }
    TESSERA_ASSIGN_OR_RETURN(l.batch, header.Require("Batch", "the client batch of each row"));
    TESSERA_ASSIGN_OR_RETURN(l.instance_group,
                             header.Require("Instance Group", "the processes of each row"));
  }
  return l;
}

// One row read: its entry, or nothing when it is set aside.
Result<std::optional<ProfileEntry>> ReadRow(const Row& row, const Layout& l,
                                            const TritonImportOptions& options,
                                            std::string_view gpu) {
  TESSERA_RETURN_IF_ERROR(row.CheckWidth());
  const bool pa = options.format == TritonFormat::kPerfAnalyzer;
  const double unit_ms = pa ? kPerfAnalyzer.ms_per_unit : kModelAnalyzer.ms_per_unit;
  const std::string_view unit = pa ? "us" : "ms";
  ProfileEntry e;
  e.key.gpu = std::string(gpu);
  e.key.profile = options.mig_profile;
  if (pa) {
    e.key.model = CanonicalModelName(Trim(options.model));
    e.key.batch = options.batch;
    TESSERA_ASSIGN_OR_RETURN(
        e.key.procs,
        row.Count(l.concurrency, limits::kProcs, "(batches in flight = the segment's processes)"));
  } else {
    if (l.model >= 0) {
      if (row.Raw(l.model).empty()) return row.Error(l.model, "must not be empty");
      e.key.model = CanonicalModelName(row.Raw(l.model));
    } else {
      e.key.model = CanonicalModelName(Trim(options.model));
    }
    TESSERA_ASSIGN_OR_RETURN(e.key.batch, row.Count(l.batch, limits::kBatch, "(client batch)"));
    const std::optional<int> instances = GpuInstances(row.Raw(l.instance_group));
    if (!instances) {
      return row.Error(l.instance_group,
                       fmt::format("expected 'N:GPU' (one KIND_GPU group, N in [1, {}]), got {}",
                                   limits::kProcs.max, QuoteForMessage(row.Raw(l.instance_group))));
    }
    e.key.procs = *instances;
    TESSERA_ASSIGN_OR_RETURN(int concurrency,
                             row.Count(l.concurrency, limits::kProcs, "(batches in flight)"));
    // Every number of a row is checked, taken or not.
    TESSERA_RETURN_IF_ERROR(row.Number(l.throughput, 1, limits::kThroughputRps, "").status());
    TESSERA_RETURN_IF_ERROR(row.Number(l.latency, unit_ms, limits::kLatencyMs, unit).status());
    if (concurrency != *instances) return std::optional<ProfileEntry>();
  }
  TESSERA_ASSIGN_OR_RETURN(e.throughput_rps,
                           row.Number(l.throughput, 1, limits::kThroughputRps, ""));
  TESSERA_ASSIGN_OR_RETURN(e.latency_ms, row.Number(l.latency, unit_ms, limits::kLatencyMs, unit));
  if (l.p99 >= 0) {
    TESSERA_ASSIGN_OR_RETURN(double p99, row.Number(l.p99, unit_ms, limits::kLatencyMs, unit));
    e.p99_ms = p99;
  }
  return std::optional<ProfileEntry>(std::move(e));
}

}  // namespace

Result<TritonFormat> ParseTritonFormat(std::string_view name) {
  if (name == "perf-analyzer") return TritonFormat::kPerfAnalyzer;
  if (name == "model-analyzer") return TritonFormat::kModelAnalyzer;
  return Status::InvalidArgument(fmt::format(
      "unknown format {}; expected perf-analyzer or model-analyzer", QuoteForMessage(name)));
}

Result<LatencyStat> ParseLatencyStat(std::string_view name) {
  constexpr std::array<std::pair<std::string_view, LatencyStat>, 5> kNames = {{
      {"mean", LatencyStat::kMean},
      {"p50", LatencyStat::kP50},
      {"p90", LatencyStat::kP90},
      {"p95", LatencyStat::kP95},
      {"p99", LatencyStat::kP99},
  }};
  for (const auto& [n, stat] : kNames) {
    if (n == name) return stat;
  }
  return Status::InvalidArgument(fmt::format(
      "unknown latency {}; expected mean, p50, p90, p95 or p99", QuoteForMessage(name)));
}

Status TritonImportOptions::Validate() const {
  Result<const GpuModel*> g = FindMigGpu(gpu);
  if (!g.ok()) return g.status().WithContext("--gpu");
  if (mig_profile.empty()) {
    return Status::InvalidArgument(
        "--mig-profile: required (the MIG profile the file was measured on is not in the CSV; "
        "per file: profile=P:PATH)");
  }
  if ((*g)->FindProfile(mig_profile) == nullptr) {
    return Status::InvalidArgument(fmt::format("--mig-profile: {} is not a MIG profile of {}",
                                               QuoteForMessage(mig_profile), (*g)->name));
  }
  if (model.find_first_of(",\r\n") != std::string::npos ||
      (!model.empty() && Trim(model).empty())) {
    return Status::InvalidArgument(
        fmt::format("--model: {} is blank or holds a ',' or a line break", QuoteForMessage(model)));
  }
  if (format == TritonFormat::kPerfAnalyzer) {
    if (model.empty()) {
      return Status::InvalidArgument("--model: required for perf_analyzer files (not in the CSV)");
    }
    if (!limits::kBatch.Contains(batch)) {
      return Status::InvalidArgument(
          "--batch: the run's -b, required for perf_analyzer files (not in the CSV): " +
          OutOfRange(limits::kBatch, std::to_string(batch)));
    }
  }
  if (format == TritonFormat::kModelAnalyzer && latency == LatencyStat::kP50) {
    return Status::InvalidArgument(
        "--latency: Model Analyzer reports no p50; choose mean, p90, p95 or p99");
  }
  return Status::Ok();
}

Status TritonImporter::Add(std::string_view text, std::string_view source,
                           const TritonImportOptions& options) {
  TESSERA_RETURN_IF_ERROR(options.Validate());
  const std::string gpu = (*FindMigGpu(options.gpu))->name;
  const std::vector<TextLine> lines = SplitLines(text, ByteOrderMark::kStrip);
  if (lines.empty() || IsBlank(lines[0].text)) {
    return FieldError(
        source, 1, "header",
        fmt::format("empty; expected the header of {}",
                    options.format == TritonFormat::kPerfAnalyzer
                        ? "perf_analyzer's -f CSV ('Concurrency,Inferences/Second,...')"
                        : "Model Analyzer's metrics-model-inference.csv "
                          "('Model,Batch,Concurrency,...')"));
  }
  TESSERA_ASSIGN_OR_RETURN(Header header, Header::Parse(source, lines[0]));
  TESSERA_ASSIGN_OR_RETURN(Layout layout, ReadLayout(source, lines[0], header, options));
  ProfileTable pending;
  std::vector<std::string> pending_origin;
  int set_aside = 0;
  for (size_t i = 1; i < lines.size(); ++i) {
    if (IsBlank(lines[i].text)) continue;  // holds no data
    const Row row(source, lines[i], header);
    TESSERA_ASSIGN_OR_RETURN(std::optional<ProfileEntry> entry, ReadRow(row, layout, options, gpu));
    if (!entry) {
      ++set_aside;
      continue;
    }
    const std::string origin = fmt::format("{}:{}", source, row.line());
    for (const auto& [t, o] :
         {std::pair(&table_, &origin_), std::pair(&pending, &pending_origin)}) {
      if (const std::optional<size_t> first = t->IndexOf(entry->key)) {
        return FieldError(
            source, row.line(), "row",
            fmt::format("duplicate entry {}, first at {}", DescribeKey(entry->key), (*o)[*first]));
      }
    }
    const Status added = pending.Add(std::move(*entry));
    if (!added.ok()) return FieldError(source, row.line(), "row", added.message());
    pending_origin.push_back(origin);
  }
  if (pending.empty() && set_aside == 0) {
    return FieldError(source, lines.back().number, "row", "no measurement row after the header");
  }
  TESSERA_RETURN_IF_ERROR(table_.Merge(pending));
  origin_.insert(origin_.end(), pending_origin.begin(), pending_origin.end());
  set_aside_ += set_aside;
  return Status::Ok();
}

}  // namespace tessera
