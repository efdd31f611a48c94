#!/usr/bin/env python3
"""Sweep S6's request rates and count the GPUs each planner needs.

Every rate of scenario S6 (11 DNN services on A100-80GB) is multiplied by a
factor, x0.5 to x2 by default; each planner plans each scaled scenario, and
the script writes

  * a table on stdout: GPUs per planner (rows) at each factor (columns);
  * a CSV, one row per (factor, planner): factor, planner, gpus, feasible,
    plan_ms (the planner's own time, as `tessera compare` reports it);
  * a PNG of GPUs against the factor, one line per planner, when matplotlib
    is installed (without it, a note on stderr; the CSV is still written).

It uses only the public API of the tessera package:
tessera.Scenario.from_yaml(...).scaled(f), tessera.plan(...), tessera.planners().
"""

from __future__ import annotations

import argparse
import csv
import sys
import textwrap
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Dict, List, Optional, Sequence

import tessera

DEFAULT_FACTORS = (0.5, 0.75, 1.0, 1.25, 1.5, 1.75, 2.0)
# MIG planners (exact, parva, migserving-greedy, static-7) and MPS planners
# (igniter, gpulet), from the proven optimum to the simplest baseline.
DEFAULT_PLANNERS = ("exact", "parva", "migserving-greedy", "static-7", "igniter", "gpulet")
# python/examples/ -> the repository root's examples/scenarios/s6.yaml
DEFAULT_SCENARIO = Path(__file__).resolve().parents[2] / "examples" / "scenarios" / "s6.yaml"
DEFAULT_TIME_LIMIT_S = 2.0

EPILOG = """\
examples:
  python3 sweep_s6.py
      x0.5, x0.75, ..., x2 with exact, parva, migserving-greedy, static-7,
      igniter and gpulet; writes s6_sweep.png and s6_sweep.csv
  python3 sweep_s6.py --planners all --factors 0.5,1,1.5,2
      every planner (tessera.planners()) at four factors
  python3 sweep_s6.py --planners mig --time-limit 0
      the MIG planners only, each with its own default time limit
  python3 sweep_s6.py --scenario ../../examples/scenarios/s6-night.yaml \\
      --out night.png --csv night.csv
      another scenario

planners: 'all', 'mig', 'mps', or a comma-separated list of names:
{planners}

A plan in which some service cannot meet its SLO still counts its GPUs; the
table marks it with '*' and the CSV says feasible=False. A planner that
refuses the scenario (an MPS planner on a priced pool, say) gets an empty
gpus cell and its message on stderr. Exit status: 0, or 2 on bad input.
"""


@dataclass
class Row:
    """One plan of the sweep: the CSV's columns."""

    factor: float
    planner: str
    gpus: Optional[int]
    feasible: bool
    plan_ms: Optional[float]


def parse_factors(text: str) -> List[float]:
    """'0.5,1,2' -> [0.5, 1.0, 2.0]: positive numbers, in the order given, each once."""
    factors: List[float] = []
    for item in text.split(","):
        try:
            value = float(item)
        except ValueError:
            raise argparse.ArgumentTypeError(f"not a number: {item.strip()!r}") from None
        if not value > 0:
            raise argparse.ArgumentTypeError(f"a factor must be > 0, got {item.strip()!r}")
        if value not in factors:
            factors.append(value)
    return factors


def resolve_planners(text: str, known: Dict[str, str]) -> List[str]:
    """'all', 'mig', 'mps' or 'a,b,c' -> planner names, checked against `known`."""
    if text in ("all", "mig", "mps"):
        return [name for name, sharing in known.items() if text == "all" or sharing == text]
    names = list(dict.fromkeys(name.strip() for name in text.split(",") if name.strip()))
    unknown = [name for name in names if name not in known]
    if unknown:
        raise ValueError(f"unknown planner(s) {', '.join(unknown)}; "
                         f"known: {', '.join(known)}")
    return names


def sweep(scenario: tessera.Scenario, factors: Sequence[float], planners: Sequence[str],
          time_limit_s: float) -> List[Row]:
    """Plans `scenario` scaled by each factor with each planner."""
    time_limit = time_limit_s if time_limit_s > 0 else None
    rows: List[Row] = []
    for factor in factors:
        scaled = scenario.scaled(factor)
        for name in planners:
            try:
                plan = tessera.plan(scaled, name, time_limit=time_limit)
            except tessera.TesseraError as e:
                print(f"sweep_s6: {name} at x{factor:g}: {e}", file=sys.stderr)
                rows.append(Row(factor, name, None, False, None))
                continue
            rows.append(Row(factor, name, plan.gpus, plan.feasible,
                            float(plan.metrics["plan_ms"])))
    return rows


def write_csv(rows: Sequence[Row], path: Path) -> None:
    with open(path, "w", newline="", encoding="utf-8") as f:
        writer = csv.writer(f)
        writer.writerow(["factor", "planner", "gpus", "feasible", "plan_ms"])
        for r in rows:
            writer.writerow([f"{r.factor:g}", r.planner, "" if r.gpus is None else r.gpus,
                             r.feasible, "" if r.plan_ms is None else f"{r.plan_ms:.3f}"])


def format_table(rows: Sequence[Row], factors: Sequence[float], planners: Sequence[str],
                 sharing: Dict[str, str]) -> str:
    """GPUs per planner (rows) and factor (columns), '*' after an infeasible plan."""
    cell = {(r.planner, r.factor): "-" if r.gpus is None
            else f"{r.gpus}{'' if r.feasible else '*'}" for r in rows}
    width = max(len("planner"), *(len(p) for p in planners))
    lines = [f"{'planner':<{width}}  sharing " + "".join(f"{'x' + format(f, 'g'):>7}"
                                                          for f in factors)]
    for p in planners:
        lines.append(f"{p:<{width}}  {sharing[p]:<7} "
                     + "".join(f"{cell[(p, f)]:>7}" for f in factors))
    if any(r.gpus is not None and not r.feasible for r in rows):
        lines.append("* some service cannot meet its SLO in this plan")
    return "\n".join(lines)


def plot(rows: Sequence[Row], planners: Sequence[str], sharing: Dict[str, str], title: str,
         path: Path) -> bool:
    """Draws GPUs against the factor to `path`; False when matplotlib is missing."""
    try:
        import matplotlib
    except ImportError:
        return False
    matplotlib.use("Agg")  # files only: no display needed
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(10, 5.5), dpi=120)
    # tab10's colours repeat after ten lines; tab20's after twenty
    cmap = plt.get_cmap("tab10" if len(planners) <= 10 else "tab20")
    colors = [cmap(i % cmap.N) for i in range(cmap.N)]
    markers = "osD^vP*Xh<>p"
    for i, name in enumerate(planners):
        points = [(r.factor, r.gpus, r.feasible) for r in rows
                  if r.planner == name and r.gpus is not None]
        if not points:
            continue
        style = "-" if sharing[name] == "mig" else "--"
        ax.plot([p[0] for p in points], [p[1] for p in points], style,
                color=colors[i % len(colors)], marker=markers[i % len(markers)],
                label=f"{name} ({sharing[name].upper()})")
        bad = [p for p in points if not p[2]]
        if bad:  # infeasible plans: a red ring around the point
            ax.plot([p[0] for p in bad], [p[1] for p in bad], "o", markersize=12,
                    markerfacecolor="none", markeredgecolor="red")
    if any(r.gpus is not None and not r.feasible for r in rows):
        ax.plot([], [], "o", markerfacecolor="none", markeredgecolor="red",
                label="some service misses its SLO")
    factors = sorted({r.factor for r in rows})
    ax.set_xticks(factors)
    ax.set_xticklabels([f"x{f:g}" for f in factors])
    ax.set_xlabel("rate factor (every request rate of the scenario multiplied by it)")
    ax.set_ylabel("GPUs")
    ax.set_title(title)
    ax.grid(True, alpha=0.3)
    ax.set_ylim(bottom=0)
    # beside the axes, so that it never hides a line
    ax.legend(title="planner (sharing)", fontsize="small", loc="upper left",
              bbox_to_anchor=(1.01, 1.0), borderaxespad=0)
    fig.tight_layout()
    fig.savefig(path)
    plt.close(fig)
    return True


def main(argv: Optional[Sequence[str]] = None) -> int:
    known = tessera.planners()
    parser = argparse.ArgumentParser(
        description=__doc__,
        epilog=EPILOG.format(planners=textwrap.fill(", ".join(known), width=76,
                                                    initial_indent="  ", subsequent_indent="  ",
                                                    break_on_hyphens=False)),
        formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--scenario", type=Path, default=DEFAULT_SCENARIO,
                        help="scenario YAML (default: the repository's examples/scenarios/s6.yaml)")
    parser.add_argument("--factors", type=parse_factors, default=list(DEFAULT_FACTORS),
                        metavar="F,F,...",
                        help="rate factors, comma-separated (default: "
                             + ",".join(f"{f:g}" for f in DEFAULT_FACTORS) + ")")
    parser.add_argument("--planners", default=",".join(DEFAULT_PLANNERS), metavar="LIST",
                        help="planners: all, mig, mps or names, comma-separated "
                             "(default: the six of the first example below)")
    parser.add_argument("--time-limit", type=float, default=DEFAULT_TIME_LIMIT_S, metavar="S",
                        help="seconds each plan may take, passed to the planners as "
                             "time_limit (tessera plan --time-limit); 0: each planner's own "
                             "default (10 s for exact and migserving-ga) (default: %(default)g)")
    parser.add_argument("--out", type=Path, default=Path("s6_sweep.png"), metavar="PATH",
                        help="the PNG plot, written when matplotlib is installed "
                             "(default: %(default)s)")
    parser.add_argument("--csv", type=Path, default=Path("s6_sweep.csv"), metavar="PATH",
                        help="the CSV, always written (default: %(default)s)")
    args = parser.parse_args(argv)
    try:
        planners = resolve_planners(args.planners, known)
    except ValueError as e:
        parser.error(str(e))
    if not planners:
        parser.error("no planner selected")
    if args.time_limit < 0:
        parser.error("--time-limit must be >= 0")

    try:
        scenario = tessera.Scenario.from_yaml(args.scenario)
    except tessera.TesseraError as e:
        print(f"sweep_s6: error: {e}", file=sys.stderr)
        return 2
    start = time.perf_counter()
    rows = sweep(scenario, args.factors, planners, args.time_limit)
    elapsed = time.perf_counter() - start

    name = scenario.name or args.scenario.stem
    gpu = scenario.to_dict().get("gpu")
    print(f"{name}: {len(scenario.services)} services, GPUs per planner at each rate factor")
    print(format_table(rows, args.factors, planners, known))
    write_csv(rows, args.csv)
    print(f"\n{len(rows)} plans in {elapsed:.1f} s; wrote {args.csv}", end="")
    lo, hi = min(args.factors), max(args.factors)
    title = f"{name}{f' on {gpu}' if gpu else ''}: GPUs per planner, rates x{lo:g} to x{hi:g}"
    if plot(rows, planners, known, title, args.out):
        print(f" and {args.out}")
    else:
        print()
        print("sweep_s6: matplotlib is not installed, so no plot was drawn "
              "(pip install matplotlib); the CSV has every figure", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
