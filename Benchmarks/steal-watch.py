#!/usr/bin/env python3
"""Prints, for SECONDS (default 30), every 10 ms in which the hypervisor took time from one of
this virtual machine's CPUs (the `steal` column of /proc/stat), with the CLOCK_MONOTONIC time
that `Benchmarks/loadgen.c --late` prints, so that late windows of a latency run can be set
beside the host's own interruptions.

Usage: Benchmarks/steal-watch.py [SECONDS] > steal.txt &   (then the load run)
"""
import sys
import time


def steal_ticks():
    """The steal ticks (USER_HZ, usually 10 ms) of each CPU, by name (cpu0, cpu1, ...)."""
    ticks = {}
    with open("/proc/stat") as stat:
        for line in stat:
            fields = line.split()
            if fields and fields[0].startswith("cpu") and fields[0] != "cpu" and len(fields) > 8:
                ticks[fields[0]] = int(fields[8])
    return ticks


def main():
    try:
        seconds = float(sys.argv[1]) if len(sys.argv) > 1 else 30.0
    except ValueError:
        seconds = -1.0
    if not 0 < seconds <= 86400:
        print("usage: steal-watch.py [SECONDS (0 < S <= 86400)]", file=sys.stderr)
        return 2
    end = time.monotonic() + seconds
    before, then = steal_ticks(), time.monotonic()
    while time.monotonic() < end:
        time.sleep(0.01)
        now_ticks, now = steal_ticks(), time.monotonic()
        for cpu, count in now_ticks.items():
            stolen = count - before.get(cpu, count)
            if stolen > 0:
                print(f"steal {cpu} at CLOCK_MONOTONIC {now:.2f}: {stolen} ticks in {1000 * (now - then):.0f} ms", flush=True)
        before, then = now_ticks, now
    return 0


if __name__ == "__main__":
    try:
        sys.exit(main())
    except (BrokenPipeError, KeyboardInterrupt):
        sys.exit(0)
