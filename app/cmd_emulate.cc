// `tessera emulate`: one serving process that answers as Triton does and
// takes the profiled time per batch (triton_emulator.h), until SIGINT or
// SIGTERM. Runs in tessera-net (app/net_command.h): it serves HTTP.
#include <csignal>
#include <iostream>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "cli_flags.h"
#include "cli_output.h"
#include "commands.h"
#include "net_command.h"
#include "tessera/gpu_catalog.h"
#include "tessera/profile_io.h"
#include "tessera/serving/triton_config.h"
#include "tessera/serving/triton_emulator.h"
#include "tessera/simulator.h"
#include "tessera/util/text_io.h"

namespace tessera::cli {
namespace {

struct EmulateFlags {
  std::string model;
  std::string config;  // a config.pbtxt, else <repository>/<model>/[configs/NAME.pbtxt]
  std::string model_repository;
  std::string model_config_name;
  std::string profiles;  // empty: the embedded profiles
  std::string gpu = "a100-80gb";
  std::string profile;
  int procs = 1;
  std::vector<double> latency_ms;
  std::string variability;  // "" or lognormal:CV
  EmulatorOptions emulator;
};

#ifdef TESSERA_CLI_NET
// The model configuration's path from the flags.
Result<std::string> ConfigPath(const EmulateFlags& f) {
  if (!f.config.empty()) return f.config;
  if (f.model_repository.empty()) {
    return Status::InvalidArgument("give --config FILE or --model-repository DIR");
  }
  const std::string folder = f.model_repository + "/" + f.model;
  return f.model_config_name.empty() ? folder + "/config.pbtxt"
                                     : folder + "/configs/" + f.model_config_name + ".pbtxt";
}

// Batch latencies: --latency-ms as given, else the profiles' entries of
// (model, --gpu, --profile, --procs) up to the configuration's batch.
Result<std::vector<double>> Latencies(const EmulateFlags& f, int batch) {
  if (!f.latency_ms.empty()) return f.latency_ms;
  if (f.profile.empty()) {
    return Status::InvalidArgument(
        "give --latency-ms, or --profile (with --gpu, --procs and optionally --profiles) to "
        "take the profiled batch times");
  }
  TESSERA_ASSIGN_OR_RETURN(const GpuModel* gpu, FindGpu(f.gpu));
  Result<ProfileTable> table =
      f.profiles.empty() ? EmbeddedProfiles({gpu}) : LoadProfiles(f.profiles, gpu->name);
  if (!table.ok()) return table.status().WithContext("--profiles");
  Result<std::vector<double>> latencies = ProfiledBatchLatencies(
      *table, {CanonicalModelName(f.model), gpu->name, f.profile, batch, f.procs});
  if (!latencies.ok()) return latencies.status().WithContext("--profile");
  return latencies;
}

int RunEmulate(EmulateFlags flags) {
  Result<std::string> path = ConfigPath(flags);
  if (!path.ok()) return ReportError(path.status());
  Result<std::string> text = ReadTextFile(*path);
  if (!text.ok()) return ReportError(text.status());
  Result<TritonBatching> batching = ParseTritonConfig(*text, *path);
  if (!batching.ok()) return ReportError(batching.status());
  EmulatorOptions& o = flags.emulator;
  o.model = flags.model;
  o.batching = *batching;
  Result<std::vector<double>> latencies = Latencies(flags, std::max(1, o.batching.max_batch_size));
  if (!latencies.ok()) return ReportError(latencies.status());
  o.latency_ms = std::move(*latencies);
  if (!flags.variability.empty()) {
    const std::string prefix = "lognormal:";
    if (flags.variability.rfind(prefix, 0) != 0) {
      return ReportError(Status::InvalidArgument("--variability: expected lognormal:CV, got " +
                                                 QuoteForMessage(flags.variability)));
    }
    const std::optional<double> cv = ToDouble(flags.variability.substr(prefix.size()));
    if (!cv || !(*cv >= 0 && *cv <= 10)) {
      return ReportError(Status::InvalidArgument(
          "--variability: lognormal:CV needs a coefficient of variation in [0, 10], got " +
          QuoteForMessage(flags.variability)));
    }
    o.cv = *cv;
  }
  const StopSignals stop_signals;
  Result<std::unique_ptr<TritonEmulator>> running = TritonEmulator::Start(o);
  if (!running.ok()) return ReportError(running.status());
  std::cout << "tessera emulate: model " << o.model << " on http://" << o.host << ":"
            << (*running)->http_port() << " (metrics :" << (*running)->metrics_port() << "), batch "
            << std::max(1, o.batching.max_batch_size) << ", queue delay "
            << o.batching.max_queue_delay_us << " us, dilation " << o.dilation << std::endl;
  stop_signals.Wait();
  (*running)->Stop();
  return kExitOk;
}
#endif  // TESSERA_CLI_NET

constexpr const char* kEmulateHelp =
    "Runs one serving process that speaks Triton's HTTP protocol (KServe v2: health,\n"
    "model ready, metadata, POST /v2/models/M/infer) and its metrics (/metrics on\n"
    "--metrics-port), batches requests as Triton's dynamic batcher does under the\n"
    "model configuration `tessera deploy` wrote (max_batch_size, preferred_batch_size,\n"
    "max_queue_delay_microseconds), and holds each batch for its profiled latency\n"
    "(docs/rehearse.md). --dilation K multiplies every latency and the queue delay by K:\n"
    "send at rate / K and every utilisation stays as planned. `tessera agent` runs it in\n"
    "place of tritonserver with --serve-command; the placeholders {profile} and {procs}\n"
    "give it its instance's MIG profile and process count.\n\n"
    "Examples:\n"
    "  tessera emulate --model resnet50 --model-repository deploy/triton \\\n"
    "      --model-config-name b32 --profile 4g.40gb --procs 3 --http-port 8000\n"
    "  tessera emulate --model m --config config.pbtxt --latency-ms 5,6,7,8 --dilation 10\n"
    "  curl -s -X POST -d '{\"inputs\": []}' localhost:8000/v2/models/resnet50/infer\n\n"
    "It prints one line once listening and runs until SIGINT or SIGTERM (exit 0).\n"
    "Exit codes: 0 stopped, 2 bad flags, configuration, profiles or address.";

}  // namespace

void AddEmulateCommand(CLI::App& app, int& exit_code) {
  auto flags = std::make_shared<EmulateFlags>();
  CLI::App* cmd = app.add_subcommand(
      "emulate", "Serve one model as Triton would, at its profiled batch times (no GPU)");
  cmd->footer(kEmulateHelp);
  cmd->add_option("--model", flags->model, "The model's name (Triton's model name)")->required();
  cmd->add_option("--config", flags->config, "The model configuration file (config.pbtxt)");
  cmd->add_option("--model-repository", flags->model_repository,
                  "Triton's model repository: reads <DIR>/<model>/config.pbtxt");
  cmd->add_option("--model-config-name", flags->model_config_name,
                  "Triton's custom configuration: reads <DIR>/<model>/configs/NAME.pbtxt");
  cmd->add_option("--latency-ms", flags->latency_ms,
                  "Batch times, ms, for batches of 1, 2, ... up to max_batch_size")
      ->delimiter(',');
  cmd->add_option("--profiles", flags->profiles,
                  "Profiles to take batch times from (default: the embedded ones)");
  cmd->add_option("--gpu", flags->gpu, "GPU model of the profiles")->capture_default_str();
  cmd->add_option("--profile", flags->profile, "MIG profile of the instance, e.g. 3g.40gb");
  cmd->add_option("--procs", flags->procs, "MPS processes of the instance")
      ->check(CLI::Range(1, 48))
      ->capture_default_str();
  cmd->add_option("--host", flags->emulator.host, "Address to listen on")->capture_default_str();
  cmd->add_option("--http-port", flags->emulator.http_port, "HTTP port (0: any free port)")
      ->check(CLI::Range(0, 65535))
      ->capture_default_str();
  cmd->add_option("--metrics-port", flags->emulator.metrics_port, "Metrics port (0: any free)")
      ->check(CLI::Range(0, 65535))
      ->capture_default_str();
  cmd->add_option("--dilation", flags->emulator.dilation,
                  "Time dilation K in [1, 1000]: latencies and the queue delay x K")
      ->check(Within(InputRange{1.0, 1000.0}))
      ->capture_default_str();
  cmd->add_option("--variability", flags->variability,
                  "lognormal:CV: batch times vary by a lognormal factor of mean 1");
  cmd->add_option("--seed", flags->emulator.seed, "Seed of the variability")->capture_default_str();
#ifdef TESSERA_CLI_NET
  cmd->callback([flags, &exit_code] { exit_code = RunEmulate(*flags); });
#else
  cmd->callback([flags, &exit_code] {
    (void)flags;
    exit_code = RunInNetBinary();
  });
#endif
}

}  // namespace tessera::cli
