#include "tessera/profile/igniter_synth.h"

#include <fmt/format.h>

namespace tessera {

Result<MpsCoefficients> SynthesizeMpsCoefficients(const MpsCoefficients& base,
                                                  const SynthTarget& target, SynthRatios* ratios) {
  const GpuModel* from = target.from;
  const GpuModel* to = target.to;
  if (from == nullptr || to == nullptr) {
    return Status::InvalidArgument("synthesis needs the source and the target GPU");
  }
  for (const GpuModel* g : {from, to}) {
    if (g->sms <= 0) {
      return Status::InvalidArgument(fmt::format("GPU {}: the catalog gives no SMs", g->name));
    }
  }
  const MpsHardware& src = base.hardware;
  if (!(target.max_frequency_mhz > 0)) {
    return Status::InvalidArgument(
        fmt::format("max clock of {}: expected a number > 0 (MHz)", to->name));
  }
  if (!(target.power_cap_w > 0)) {
    return Status::InvalidArgument(
        fmt::format("power cap of {}: expected a number > 0 (W)", to->name));
  }
  const double idle =
      target.idle_power_w.value_or(src.idle_power_w * target.power_cap_w / src.power_cap_w);
  if (!(idle >= 0 && idle < target.power_cap_w)) {
    return Status::InvalidArgument(fmt::format(
        "idle power of {}: expected a number in [0, {:g}) W (below the power cap), got {:g}",
        to->name, target.power_cap_w, idle));
  }
  if (!(src.idle_power_w < src.power_cap_w)) {
    return Status::InvalidArgument(
        fmt::format("the source coefficients' p_idle ({:g} W) is not below their P ({:g} W)",
                    src.idle_power_w, src.power_cap_w));
  }
  SynthRatios r;
  r.compute = (from->sms * src.max_frequency_mhz) / (to->sms * target.max_frequency_mhz);
  r.power = (target.power_cap_w - idle) / (src.power_cap_w - src.idle_power_w);

  MpsCoefficients out = base;
  MpsHardware& hw = out.hardware;
  hw.gpu = to->name;
  hw.max_frequency_mhz = target.max_frequency_mhz;
  hw.power_cap_w = target.power_cap_w;
  hw.idle_power_w = idle;
  hw.unit_pct = 200.0 / to->sms;
  hw.pcie_bytes_per_ms = target.pcie_bytes_per_ms.value_or(src.pcie_bytes_per_ms);
  hw.alpha_f = src.alpha_f * (target.max_frequency_mhz / src.max_frequency_mhz) / r.power;
  for (WorkloadCoefficients& w : out.workloads) {
    for (int i : {0, 1, 2, 4}) w.k[i] *= r.compute;
    w.power = {w.power[0] * r.compute * r.power, w.power[1] * r.power};
    w.cache[0] *= r.compute;
  }
  TESSERA_RETURN_IF_ERROR(ValidateMpsCoefficients(out));
  if (ratios != nullptr) *ratios = r;
  return out;
}

}  // namespace tessera
