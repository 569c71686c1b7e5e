#!/usr/bin/env python3
"""Live heap per session by allocation site, from two heaptrack runs of one server.

Usage: heap-by-site.py SMALL.stacks LARGE.stacks SESSIONS [FRAMES]

SMALL and LARGE are `heaptrack_print --flamegraph-cost-type leaked -F` outputs of the same
server holding two numbers of idle sessions; SESSIONS is their difference. Bytes still
allocated are summed per site (the innermost frames in this project's or NIO's code, FRAMES of
them, default 1), and the difference divided by SESSIONS: what each added session holds, with
start-up and warm-up cancelled out. Prints the total and the sites of at least 6 bytes.
"""
import collections
import os
import re
import subprocess
import sys

OURS = re.compile(r"(LightstreamerServer|NIOCore|NIOPosix|NIOHTTP1|NIOWebSocket|lightstreamer)")
# NIO's byte-buffer plumbing: the caller that asked for the buffer is the site.
PLUMBING = re.compile(r"ByteBufferV8_Storage|allocateAndPrepare|reallocSlice|_copyStorage")


def site(frames, depth):
    picked = []
    for frame in reversed(frames):
        frame = frame.strip()
        if frame and OURS.search(frame) and not PLUMBING.search(frame):
            picked.append(frame.split(" ")[0])
            if len(picked) == depth:
                break
    return " <- ".join(picked) if picked else "(runtime)"


def load(path, depth):
    sums = collections.Counter()
    with open(path) as f:
        for line in f:
            stack, _, value = line.rstrip("\n").rpartition(" ")
            if value.isdigit():
                sums[site(stack.split(";"), depth)] += int(value)
    return sums


def main():
    small, large, sessions = sys.argv[1], sys.argv[2], float(sys.argv[3])
    depth = int(sys.argv[4]) if len(sys.argv) > 4 else 1
    a, b = load(small, depth), load(large, depth)
    rows = sorted(((b[k] - a[k]) / sessions, k) for k in set(a) | set(b))
    rows.reverse()
    print("total per session: %.0f bytes" % sum(v for v, _ in rows))
    shown = [(v, k) for v, k in rows if abs(v) >= 6]
    names = subprocess.run(
        ["swift", "demangle", "--simplified", "--compact"],
        input="\n".join(k for _, k in shown), capture_output=True, text=True,
    ).stdout.split("\n")
    for (v, _), name in zip(shown, names):
        print("%7.0f  %s" % (v, name[:int(os.environ.get("WIDTH", "160"))]))


if __name__ == "__main__":
    main()
