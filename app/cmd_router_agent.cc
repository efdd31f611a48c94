// `tessera router-agent`: the router beside `tessera serve` (router_agent.h):
// HAProxy kept in step with the control plane's router work, its drain and
// ready steps in every transition, and the traffic it measures posted back.
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "cli_flags.h"
#include "cli_output.h"
#include "commands.h"
#include "net_command.h"
#include "tessera/serving/router_agent.h"

namespace tessera::cli {
namespace {

struct RouterAgentFlags {
  std::string server;
  std::string name;
  std::string token_file;
  std::string haproxy = "haproxy";
  std::string work_dir;
  std::string bind;
  int frontend_port = 9000;
  int metrics_port = 8404;
  std::vector<std::string> node_addresses;
  double report_interval_s = 5;
  double dilation = 1;
  int poll_wait_s = 30;
  int keep_alive_s = 10;
  int max_connections = 100000;
  bool quiet = false;
};

constexpr const char* kRouterAgentHelp =
    "The router in front of the serving processes, run beside `tessera serve\n"
    "--router-agent NAME` (docs/routing.md, \"The router agent\"). It starts HAProxy with\n"
    "one frontend per service (from --frontend-port, in the deployment's order) and keeps\n"
    "its servers in step with the control plane through HAProxy's runtime API:\n"
    "  - every server of the deployment, at its node's address and its weight;\n"
    "  - in each phase of a transition, it drains the servers of what the phase stops\n"
    "    and tells the control plane once nothing is outstanding at them (only then do\n"
    "    the node agents stop them), and makes what the phase started ready before the\n"
    "    next phase begins;\n"
    "  - every --report-interval it posts what HAProxy's request log counted per service\n"
    "    (rate, share within the SLO, p99): observed traffic that /metrics shows and\n"
    "    auto mode re-plans on.\n"
    "Node addresses: each server is at its node's name unless --node-address names a\n"
    "host (and the node's first serving port, when its agent ran with --base-port).\n\n"
    "Examples:\n"
    "  tessera serve --router-agent edge --db s6.db --scenario examples/scenarios/s6.yaml\n"
    "  tessera router-agent --server http://127.0.0.1:8080 --name edge --work-dir /run/edge\n"
    "  tessera router-agent --server http://10.0.0.2:8080 --name edge --work-dir /run/edge \\\n"
    "      --node-address node-0=10.0.0.5 --node-address node-1=10.0.0.6\n\n"
    "Exit codes: 0 stopped by SIGINT/SIGTERM, 2 bad flags or a control plane naming no\n"
    "such router, 1 HAProxy refused its configuration or a command, or exited.";

#ifdef TESSERA_CLI_NET
int RunRouterAgent(const RouterAgentFlags& flags) {
  RouterAgentOptions options;
  options.server = flags.server;
  options.name = flags.name;
  options.haproxy_binary = flags.haproxy;
  options.work_dir = flags.work_dir;
  options.bind_address = flags.bind;
  options.frontend_base_port = flags.frontend_port;
  options.metrics_port = flags.metrics_port;
  options.report_interval_s = flags.report_interval_s;
  options.dilation = flags.dilation;
  options.poll_wait_s = flags.poll_wait_s;
  options.keep_alive_s = flags.keep_alive_s;
  options.max_connections = flags.max_connections;
  for (const std::string& text : flags.node_addresses) {
    Result<std::pair<std::string, NodeAddress>> address = ParseNodeAddress(text);
    if (!address.ok()) return ReportError(address.status());
    options.nodes[address->first] = address->second;
  }
  if (!flags.token_file.empty()) {
    Result<std::string> token = ReadTokenFile(flags.token_file);
    if (!token.ok()) return ReportError(token.status());
    options.token = *token;
  }
  if (!flags.quiet) {
    options.progress = [](const std::string& line) { PrintMessage("tessera: " + line + "\n"); };
  }
  Result<std::unique_ptr<RouterAgent>> agent = RouterAgent::Create(std::move(options));
  if (!agent.ok()) return ReportError(agent.status());
  const Status s = RunUntilStopped([&] { return (*agent)->Run(); }, [&] { (*agent)->Stop(); });
  if (!s.ok()) return ReportError(s);
  return kExitOk;
}
#endif  // TESSERA_CLI_NET

}  // namespace

void AddRouterAgentCommand(CLI::App& app, int& exit_code) {
  auto flags = std::make_shared<RouterAgentFlags>();
  CLI::App* cmd = app.add_subcommand(
      "router-agent", "Run HAProxy in step with `tessera serve`, and report what it measures");
  cmd->footer(kRouterAgentHelp);
  cmd->add_option("--server", flags->server, "The control plane, http://HOST:PORT")->required();
  cmd->add_option("--name", flags->name, "This router's name, as `tessera serve --router-agent`")
      ->required();
  cmd->add_option("--work-dir", flags->work_dir,
                  "Directory for HAProxy's configuration, socket and log (created)")
      ->required();
  cmd->add_option("--token-file", flags->token_file, "File holding the control plane's token");
  cmd->add_option("--haproxy", flags->haproxy, "HAProxy 2.6 binary")->capture_default_str();
  cmd->add_option("--bind", flags->bind,
                  "Address the frontends and metrics listen on (default: every address)");
  cmd->add_option("--frontend-port", flags->frontend_port,
                  "The first service's frontend port; the next services' follow")
      ->check(CLI::Range(1, 65535))
      ->capture_default_str();
  cmd->add_option("--metrics-port", flags->metrics_port,
                  "HAProxy's Prometheus exporter (/metrics) and stats page (/stats)")
      ->check(CLI::Range(1, 65535))
      ->capture_default_str();
  cmd->add_option("--node-address", flags->node_addresses,
                  "NODE=HOST[:PORT]: where a node's processes answer (PORT: its first serving "
                  "port); repeat per node")
      ->type_name("NODE=HOST[:PORT]");
  cmd->add_option("--report-interval", flags->report_interval_s,
                  "Seconds between observed-traffic reports, 0.1-3600")
      ->check(Within(InputRange{0.1, 3600.0}))
      ->capture_default_str();
  cmd->add_option("--dilation", flags->dilation,
                  "A rehearsal's time dilation k: reported rates x k, latencies / k, 1-1000")
      ->check(Within(InputRange{1.0, 1000.0}))
      ->capture_default_str();
  cmd->add_option("--poll-wait", flags->poll_wait_s, "Seconds each long-poll waits, 0-60")
      ->check(CLI::Range(0, 60))
      ->capture_default_str();
  cmd->add_option("--keep-alive", flags->keep_alive_s,
                  "Seconds HAProxy keeps an idle client connection open, 1-3600")
      ->check(CLI::Range(1, 3600))
      ->capture_default_str();
  cmd->add_option("--max-connections", flags->max_connections,
                  "HAProxy's global maxconn (each frontend may hold half), 2-1000000")
      ->check(CLI::Range(2, 1000000))
      ->capture_default_str();
  cmd->add_flag("--quiet", flags->quiet, "No progress lines on stderr");
#ifdef TESSERA_CLI_NET
  cmd->callback([flags, &exit_code] { exit_code = RunRouterAgent(*flags); });
#else
  cmd->callback([flags, &exit_code] {
    (void)flags;
    exit_code = RunInNetBinary();
  });
#endif
}

}  // namespace tessera::cli
