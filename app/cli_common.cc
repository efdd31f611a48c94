#include "cli_common.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <memory>
#include <system_error>

#include "durations.h"
#include "tessera/deployment_format.h"
#include "tessera/gpulet_tables.h"
#include "tessera/igniter_model.h"
#include "tessera/input_limits.h"
#include "tessera/mps_from_profiles.h"
#include "tessera/profile_io.h"
#include "tessera/profile_synth.h"
#include "tessera/text_io.h"
#include "tessera/validator.h"

namespace tessera::cli {

int ExitCodeFor(const Status& status) {
  switch (status.code()) {
    case StatusCode::kOk:
      return kExitOk;
    case StatusCode::kInvalidArgument:
    case StatusCode::kNotFound:
    case StatusCode::kIoError:
      return kExitBadInput;
    case StatusCode::kInternal:
      return kExitInternal;
  }
  return kExitInternal;
}

int ReportError(const Status& status) {
  PrintMessage("tessera: error: " + status.message() + "\n");
  return ExitCodeFor(status);
}

namespace {
thread_local NoteCollector* current_collector = nullptr;
}  // namespace

NoteCollector::NoteCollector() : outer_(current_collector) { current_collector = this; }

NoteCollector::~NoteCollector() { current_collector = outer_; }

NoteSink CliNotes() {
  return [](std::string_view note) { PrintMessage("tessera: note: " + std::string(note) + "\n"); };
}

void PrintMessage(std::string_view text) {
  if (current_collector != nullptr) {
    current_collector->notes_.push_back(EscapeMessage(text));
    return;
  }
  std::cerr << EscapeMessage(text);
}

void AddInputFlags(CLI::App& command, ProblemInputs& flags) {
  auto* scenario = command.add_option("--scenario", flags.scenario,
                                      "Scenario YAML: gpu and services {name, model, rate_rps, "
                                      "slo_ms} (see examples/scenarios/)");
  auto* slo = command.add_option("--parva-slo", flags.parva_slo,
                                 "Import a scenario from a ParvaGPU SLO directory "
                                 "(SLO_req_rate.csv + SLO_latency.csv); needs --row");
  command.add_option("--row", flags.row, "Row of the ParvaGPU SLO files, 1-based")
      ->needs(slo)
      ->check(CLI::PositiveNumber);
  scenario->excludes(slo);
  command.add_option("--gpu", flags.gpu,
                     "GPU model (" + GpuNames() + "); default: the scenario's, else a100-80gb");
  auto* factor = command
                     .add_option("--latency-factor", flags.latency_factor,
                                 "A batch may take this share of the SLO (default 0.5)")
                     ->check(Within(limits::kLatencyFactor));
  command.add_option("--router", flags.router,
                     "How the serving side routes a service's requests among its processes, "
                     "recorded in the plan: leastconn (default: HAProxy's weighted leastconn, "
                     "what deploy ships), first (HAProxy's balance first, two batches of slots "
                     "per process), weighted (at random by SLO-safe capacity), equal (a "
                     "Kubernetes Service) or jsq (the simulator's ideal, which deploy cannot "
                     "ship); first, weighted and equal plan under --capacity-rule queueing "
                     "unless one is given (docs/routing.md)");
  command
      .add_option("--rate-margin", flags.rate_margin,
                  "Rates are estimates: plan for (1 + M) x every service's rate, " +
                      limits::kRateMargin.Describe() + " (default 0)")
      ->check(Within(limits::kRateMargin));
  command
      .add_option("--replicate", flags.replicate,
                  "Serve K copies of every service, named <name>#k (ParvaGPU's scalability "
                  "study grows S5 to 110 services with K = 10)")
      ->check(Within(limits::kReplicate));
  command.add_option("--profiles", flags.profiles,
                     "MIG planners: profile CSV file or ParvaGPU prof_data directory (format "
                     "detected); default: the embedded synthesized profiles");
  command
      .add_option("--compat", flags.compat,
                  "MIG planners: parva-artifact: ParvaGPU artifact's rule (latency < 0.45 x "
                  "integer SLO, at most 5 processes, bare capacity)")
      ->check(CLI::IsMember({"parva-artifact"}))
      ->excludes(factor);
  command.add_option(
      "--capacity-rule", flags.capacity_rule,
      "MIG planners: pooled (default): a service's processes form one pool behind the "
      "leastconn (or jsq) router, which may run closer to its capacity the more requests it serves "
      "per batch time (pooled:CV: batch latencies vary with coefficient CV, "
      "default 0.05; docs/capacity-rules.md); queueing: a segment counts only the "
      "share of its throughput at which its own queue still meets the SLO at "
      "p99.5 under Poisson arrivals; bursty:SHARE: the same for on/off bursts "
      "that are on SHARE of the time; bare: its whole throughput, as the papers "
      "do (--compat parva-artifact implies bare)");
  command.add_option(
      "--coeffs", flags.coefficients,
      "MPS planners (igniter, ffd+, gslice+, gpulet): the GPU's iGniter "
      "coefficients (JSON), to plan whole GPUs shared through MPS; e.g. "
      "fitted_coefficients_v100.json of iGniter's artifact (docs/data-sources.md), or fit your "
      "own with `tessera igniter fit`; default on a GPU with MIG: derived, with "
      "gpu-lets' tables, from its profiles (docs/igniter-planner.md, \"On MIG "
      "workloads\")");
  command.add_option("--gpulet-tables", flags.gpulet_tables,
                     "MPS planner gpulet: gpu-lets' profiling tables (JSON Lines), e.g. "
                     "gpulet.config of iGniter's artifact (docs/data-sources.md)");
  command
      .add_option("--price", flags.price_per_hour,
                  "MPS planners: hourly price of one GPU (default: the scenario pool's price, "
                  "else the catalog's one-GPU cloud instance, e.g. p3.2xlarge $3.06)")
      ->check(Within(limits::kPriceFlag));
}

CLI::Validator Within(const InputRange& range) {
  return CLI::Validator(
      [range](std::string& text) -> std::string {
        const std::optional<double> v = ToDouble(Trim(text));
        return v && range.Contains(*v) ? "" : OutOfRange(range, QuoteForMessage(text));
      },
      range.Describe());
}

CLI::Validator NonNegative() {
  return CLI::Validator(
      [](std::string& text) -> std::string {
        const std::optional<double> v = ToDouble(Trim(text));
        return v && *v >= 0 ? "" : "must be a number >= 0, got " + QuoteForMessage(text);
      },
      "NUMBER >= 0");
}

void AddSearchFlags(CLI::App& command, SearchOptions& flags) {
  command
      .add_option("--time-limit", flags.time_limit_s,
                  "Wall-clock time a planner may take, " + DescribeRange(kTimeLimit) +
                      ", e.g. 10, 30s or 2m (exact: returns the best plan found, its proven "
                      "bound and gap; migserving-ga: the best plan its rounds found; "
                      "migserving-greedy: the services its fast algorithm has not reached get "
                      "GPUs of their own; parva: the GPUs its allocation optimization has not "
                      "reached keep their segments; any planner with no plan covering every "
                      "service yet: an error); default: the planner's own (10 s for exact and "
                      "migserving-ga, none for the others)")
      ->transform(DurationFlag(kTimeLimit));
  command
      .add_option("--seed", flags.seed,
                  "Seed of a randomised planner (migserving-ga): same seed, same plan, unless "
                  "the time limit cuts the search short")
      ->check(NonNegative())
      ->capture_default_str();
  command
      .add_option("--score", flags.score,
                  "The heuristic score MIG-serving's planners (migserving-*) rank GPU "
                  "configurations by: capped (a service's utility counts up to what it still "
                  "needs) or paper (the paper's formula as written, each unsatisfied service's "
                  "whole utility); docs/migserving-planner.md")
      ->check(CLI::IsMember({"capped", "paper"}))
      ->capture_default_str();
}

PlanContext ContextFrom(const SearchOptions& flags, const Planner& planner) {
  PlanContext context = ContextFor(flags, planner);
  context.progress = CliProgress();
  return context;
}

std::function<void(std::string_view)> CliProgress() {
  return [](std::string_view line) { PrintMessage("tessera: " + std::string(line) + "\n"); };
}

void NoteOutcomes(const Deployment& deployment) {
  for (const ServiceOutcome& s : deployment.services) {
    if (s.status == ServiceStatus::kInfeasible) {
      PrintMessage("tessera: service " + s.name + " is infeasible: " + s.reason + "\n");
    } else if (s.predicted_violation) {
      PrintMessage("tessera: note: the iGniter model predicts " + s.name +
                   " misses its latency budget or rate on this plan\n");
    }
  }
}

namespace {

// The error of a failed write to `path`, with the system's reason.
Status WriteError(const std::string& path, int error) {
  return Status::IoError(fmt::format("cannot write {}: {}", QuoteForMessage(path),
                                     std::generic_category().message(error)));
}

// Writes all of `content` to the open descriptor `fd`; the errno of a
// failure, else 0.
int WriteAll(int fd, std::string_view content) {
  while (!content.empty()) {
    const ssize_t n = ::write(fd, content.data(), content.size());
    if (n < 0) {
      if (errno == EINTR) continue;
      return errno;
    }
    content.remove_prefix(static_cast<size_t>(n));
  }
  return 0;
}

// A FIFO or a character device (/dev/null, a terminal): written through in
// place, never replaced.
Status WriteThrough(const std::string& path, const std::string& content) {
  const int fd = ::open(path.c_str(), O_WRONLY | O_CLOEXEC | O_NOCTTY);
  if (fd < 0) return WriteError(path, errno);
  const int error = WriteAll(fd, content);
  const int closed = ::close(fd) == 0 ? 0 : errno;
  if (error != 0 || closed != 0) return WriteError(path, error != 0 ? error : closed);
  return Status::Ok();
}

// A regular file, or a path where nothing is yet: a temporary file beside it
// renamed over it, so that a failed run never leaves a partial file. An
// existing file keeps its permissions; a new one gets 0666 less the umask.
Status WriteReplacing(const std::string& path, const std::string& content,
                      std::optional<mode_t> mode) {
  std::string tmp = path + ".tmp.XXXXXX";
  const int fd = ::mkstemp(tmp.data());
  if (fd < 0) return WriteError(path, errno);
  int error = WriteAll(fd, content);
  // mkstemp makes the file 0600: a new file gets what open() would give it.
  if (!mode) {
    const mode_t mask = ::umask(0);
    ::umask(mask);
    mode = 0666 & ~mask;
  }
  if (error == 0 && ::fchmod(fd, *mode & 07777) != 0) error = errno;
  if (::close(fd) != 0 && error == 0) error = errno;
  if (error == 0 && ::rename(tmp.c_str(), path.c_str()) != 0) error = errno;
  if (error != 0) {
    ::unlink(tmp.c_str());
    return WriteError(path, error);
  }
  return Status::Ok();
}

// Where the symbolic link `link` points, as a path usable from here (a
// relative target is relative to the link's directory).
Result<std::string> LinkTarget(const std::string& link) {
  std::error_code ec;
  const std::filesystem::path target = std::filesystem::read_symlink(link, ec);
  if (ec) return WriteError(link, ec.value());
  if (target.is_absolute()) return target.string();
  return (std::filesystem::path(link).parent_path() / target).string();
}

// `path` (not a link) by its type `mode`; `shown` is the path the user gave.
Status WriteByType(const std::string& path, mode_t mode, const std::string& shown,
                   const std::string& content) {
  if (S_ISREG(mode)) return WriteReplacing(path, content, mode);
  if (S_ISFIFO(mode) || S_ISCHR(mode)) return WriteThrough(path, content);
  const char* what = S_ISDIR(mode)    ? "a directory"
                     : S_ISBLK(mode)  ? "a block device"
                     : S_ISSOCK(mode) ? "a socket"
                                      : "not a regular file";
  return Status::IoError(
      fmt::format("cannot write {}: {} is {}; give a regular file, a FIFO or a character device",
                  QuoteForMessage(shown), path == shown ? "it" : QuoteForMessage(path), what));
}

// A symbolic link: what it leads to is written, never the link itself.
Status WriteThroughLink(const std::string& path, const std::string& content) {
  struct stat st {};
  if (::stat(path.c_str(), &st) == 0) {
    // The kernel follows the links (also /proc/self/fd/N, whose text may be
    // "pipe:[...]"): a FIFO or device is opened through them, a regular file
    // is replaced at its real path.
    if (S_ISFIFO(st.st_mode) || S_ISCHR(st.st_mode)) return WriteThrough(path, content);
    std::error_code ec;
    const std::filesystem::path real = std::filesystem::canonical(path, ec);
    if (ec) return WriteError(path, ec.value());
    return WriteByType(real.string(), st.st_mode, path, content);
  }
  if (errno != ENOENT) return WriteError(path, errno);
  // A dangling link: follow it name by name to the file it would be, and
  // create that file (at most as many links as the system follows).
  constexpr int kMaxLinks = 40;
  std::string target = path;
  for (int links = 0; links <= kMaxLinks; ++links) {
    TESSERA_ASSIGN_OR_RETURN(target, LinkTarget(target));
    if (::lstat(target.c_str(), &st) != 0) {
      if (errno == ENOENT) return WriteReplacing(target, content, std::nullopt);
      return WriteError(path, errno);
    }
    if (!S_ISLNK(st.st_mode)) return WriteError(path, ENOENT);  // a missing directory
  }
  return WriteError(path, ELOOP);
}

}  // namespace

Status WriteOutput(const std::string& path, const std::string& content) {
  if (path.empty() || path == "-") {
    std::cout << content;
    std::cout.flush();
    return std::cout ? Status::Ok() : Status::IoError("cannot write to stdout");
  }
  struct stat st {};
  if (::lstat(path.c_str(), &st) != 0) {
    if (errno == ENOENT) return WriteReplacing(path, content, std::nullopt);
    return WriteError(path, errno);
  }
  if (S_ISLNK(st.st_mode)) return WriteThroughLink(path, content);
  return WriteByType(path, st.st_mode, path, content);
}

// The token of --token-file: its one line, the trailing newline stripped.
Result<std::string> ReadTokenFile(const std::string& path) {
  Result<std::string> text = ReadTextFile(path);
  if (!text.ok()) return Status::InvalidArgument("--token-file: " + text.status().message());
  std::string token = std::move(*text);
  if (token.ends_with('\n')) token.pop_back();
  if (token.ends_with('\r')) token.pop_back();
  if (token.empty())
    return Status::InvalidArgument("--token-file: " + path + " is empty: write the token in it");
  if (token.find_first_of("\r\n") != std::string::npos)
    return Status::InvalidArgument("--token-file: " + path +
                                   " holds more than one line: it must hold the token alone");
  return token;
}

}  // namespace tessera::cli
