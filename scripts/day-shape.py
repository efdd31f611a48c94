#!/usr/bin/env python3
"""Derive a day shape (one multiplier a minute) from the Alibaba GPU trace 2023.

Usage: scripts/day-shape.py PODS.csv [FIRST_DAY LAST_DAY] > DAY.csv

  scripts/day-shape.py $D/openb_pod_list_default.csv > examples/days/alibaba-2023-day.csv
  scripts/day-shape.py $D/openb_pod_list_default.csv 115 131 > examples/days/alibaba-2023-days-115-131.csv
  scripts/day-shape.py $D/openb_pod_list_default.csv 132 149 > examples/days/alibaba-2023-days-132-149.csv

How: every pod's creation_time (seconds from the trace's start) is folded onto
the hour of the day (creation_time mod 86,400, by hour), over all the pods of
the list; with FIRST_DAY and LAST_DAY only the pods created on those days (0-based,
inclusive); the 24 hourly counts are set at the middle of their hours and
interpolated linearly, around the clock, to each minute; each minute's count
is divided by the busiest hour's. The trace does not say at what time of day it
starts, so minute 0 is the trace's own origin, not midnight of a time zone.
"""
import csv
import sys


def main():
    if len(sys.argv) not in (2, 4):
        sys.exit(__doc__.strip().splitlines()[2])
    first, last = (int(sys.argv[2]), int(sys.argv[3])) if len(sys.argv) == 4 else (0, 1 << 30)
    with open(sys.argv[1], newline="") as f:
        times = [int(float(row["creation_time"])) for row in csv.DictReader(f)]
    times = [t for t in times if first <= t // 86400 <= last]
    days = "" if len(sys.argv) == 2 else f" of days {first}-{last}"
    hours = [0] * 24
    for t in times:
        hours[(t % 86400) // 3600] += 1
    peak = max(hours)
    out = sys.stdout
    out.write("# A day shape derived from the Alibaba GPU cluster trace 2023\n")
    out.write("# (github.com/alibaba/clusterdata, cluster-trace-gpu-v2023,\n")
    out.write("# openb_pod_list_default.csv; Weng et al., \"Beware of Fragmentation:\n")
    out.write("# Scheduling GPU-Sharing Workloads with Fragmentation Gradient Descent\",\n")
    out.write("# USENIX ATC 2023: cite it when using this file; no licence is stated with the data).\n")
    out.write(f"# {len(times)} pod creations{days} folded by hour of day, interpolated to minutes,\n")
    out.write(f"# divided by the busiest hour: hourly counts {' '.join(map(str, hours))}.\n")
    out.write("# Made by scripts/day-shape.py; minute 0 is the trace's origin.\n")
    out.write("minute,multiplier\n")
    for m in range(1440):
        x = (m + 0.5) / 60 - 0.5  # hours from the middle of hour 0
        lo = int(x // 1)
        w = x - lo
        value = (1 - w) * hours[lo % 24] + w * hours[(lo + 1) % 24]
        out.write(f"{m},{value / peak:.4f}\n")


if __name__ == "__main__":
    main()
