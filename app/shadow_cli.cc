#include "shadow_cli.h"

#include <fmt/format.h>

namespace tessera::cli {

void AddShadowFlag(CLI::App& command, std::optional<bool>& shadow) {
  // Two callbacks, not a bool: unset must stay distinguishable from --no-shadow.
  CLI::Option* on = command.add_flag_callback(
      "--shadow", [&shadow] { shadow = true; },
      "MPS planners: iGniter's guard against prediction errors (on by default for igniter): "
      "every process the model predicts misses its SLO is served by its shadow, with "
      "min(10%, what is left on its GPU) more share (docs/igniter-planner.md)");
  command
      .add_flag_callback(
          "--no-shadow", [&shadow] { shadow = false; },
          "MPS planners: no shadow guard (the plan as the planner made it)")
      ->excludes(on);
}

std::string FormatShadowTable(const ShadowGuardResult& guard) {
  std::string out = fmt::format(
      "shadow guard (iGniter 4.2: extra min({:g}%, free on its GPU)): {} shadow(s) took over, "
      "{} process(es) still predicted to miss\n",
      kShadowMaxExtraPct, guard.activated, guard.still_missing);
  out += fmt::format("{:>4} {:<16} {:>9} {:>8} {:>7} {:>12} {:>10} {:>5}\n", "gpu", "service",
                     "share %", "standby", "extra", "planned ms", "after ms", "slo");
  for (const ShadowProcess& p : guard.processes) {
    out += fmt::format("{:>4} {:<16} {:>9.1f} {:>8.1f} {:>7} {:>12.2f} {:>10.2f} {:>5}\n", p.gpu,
                       p.service, p.resource_pct, p.standby_extra_pct,
                       p.activated ? fmt::format("+{:.1f}", p.extra_pct) : std::string("-"),
                       p.planned_latency_ms, p.latency_ms, p.meets_slo ? "ok" : "MISS");
  }
  return out;
}

}  // namespace tessera::cli
