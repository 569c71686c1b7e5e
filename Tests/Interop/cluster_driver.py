#!/usr/bin/env python3
"""Cluster driver: many sessions of the official Lightstreamer Python client (lightstreamer-client-lib)
against a cluster behind one balancer address, started by ClusterPythonClientTests.

1. Opens --sessions clients, the transports in turn, each subscribing to the counter item (MERGE)
   and sending one message; prints one JSON line:
       {"event": "ready", "ok": ..., "detail": "...", "clients": [{"i", "transport", "node", "session",
        "updates", "message"}]}
   where node is the server's SERVNAME (it names the node) and message the outcome ("processed").
2. Waits for --signal-file to appear: its text is the SERVNAME of a node the test killed (or "none").
3. Then every client of that node must get a new session on another node, receive updates there
   and have a message processed there; the clients of the other nodes must keep their sessions
   and statuses and go on receiving. Prints:
       {"event": "failover", "ok": ..., "detail": "...", "affected": [{"i", "transport", "node", "seconds"}]}

Exit status 0 when every check passed, 1 otherwise, 2 on a bad command line.
"""
import argparse
import json
import os
import sys
import time

from lightstreamer.client import LightstreamerClient, Subscription

from interop_driver import Watch

TRANSPORTS = ["WS-STREAMING", "HTTP-STREAMING", "WS-POLLING", "HTTP-POLLING"]


class TimedWatch(Watch):
    """A Watch that also keeps when each status came (for the failover report)."""

    def __init__(self):
        super().__init__()
        self.timeline = []

    def onStatusChange(self, status):
        with self.lock:
            self.timeline.append((time.time(), status))
        super().onStatusChange(status)


class Session:
    def __init__(self, i, url, transport, item, field, adapter_set):
        self.i = i
        self.transport = transport
        self.field = field
        self.watch = TimedWatch()
        self.client = LightstreamerClient(url, adapter_set)
        self.client.connectionOptions.setForcedTransport(transport)
        self.client.connectionOptions.setRetryDelay(1000)
        self.client.addListener(self.watch)
        sub = Subscription("MERGE", [item], [field])
        sub.setRequestedSnapshot("yes")
        sub.addListener(self.watch)
        self.client.subscribe(sub)

    def node(self):
        return self.client.connectionDetails.getServerSocketName()

    def session(self):
        return self.client.connectionDetails.getSessionId()

    def updates(self):
        with self.watch.lock:
            return len(self.watch.updates)

    def processed(self):
        with self.watch.lock:
            return len(self.watch.processed)

    def send(self, text):
        self.client.sendMessage(text, None, -1, self.watch, True)


def wait_for(predicate, timeout, step=0.02):
    deadline = time.time() + timeout
    while time.time() < deadline:
        if predicate():
            return True
        time.sleep(step)
    return predicate()


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--url", required=True, help="the balancer, e.g. http://127.0.0.1:8080")
    ap.add_argument("--sessions", type=int, default=30)
    ap.add_argument("--signal-file", required=True)
    ap.add_argument("--adapter-set", default="DEMO")
    ap.add_argument("--item", default="counter")
    ap.add_argument("--field", default="count")
    ap.add_argument("--message", default="CHAT|hello from python")
    ap.add_argument("--timeout", type=float, default=60)
    a = ap.parse_args(argv)

    sessions = [Session(i, a.url, TRANSPORTS[i % len(TRANSPORTS)], a.item, a.field, a.adapter_set)
                for i in range(a.sessions)]
    for s in sessions:
        s.client.connect()

    # 1. Everyone connected, receiving, and with a message processed by its node.
    problems = []
    for s in sessions:
        want = "CONNECTED:" + s.transport
        if not s.watch.wait(lambda: want in s.watch.statuses or s.watch.server_errors, a.timeout):
            problems.append(f"{s.i} {s.transport}: not connected ({s.watch.statuses[-3:]})")
            continue
        if not wait_for(lambda: s.updates() >= 2 and s.node(), a.timeout):
            problems.append(f"{s.i} {s.transport}: {s.updates()} updates")
        s.send(a.message)
    for s in sessions:
        if not wait_for(lambda: s.processed() >= 1 or s.watch.message_failures, a.timeout):
            problems.append(f"{s.i} {s.transport}: message not processed")
        elif s.watch.message_failures:
            problems.append(f"{s.i} {s.transport}: message {s.watch.message_failures}")
        if s.watch.server_errors:
            problems.append(f"{s.i} {s.transport}: server errors {s.watch.server_errors}")
    ready = [{"i": s.i, "transport": s.transport, "node": s.node(), "session": s.session(), "updates": s.updates(),
              "message": "processed" if s.processed() else "missing"} for s in sessions]
    # Where each client is now, as reported: the kill may come before this process sees it.
    node_at_ready = {s.i: s.node() for s in sessions}
    before = {s.i: (s.session(), len(s.watch.statuses)) for s in sessions}
    print(json.dumps({"event": "ready", "ok": not problems, "detail": "; ".join(problems) or "all receiving",
                      "clients": ready}), flush=True)
    if problems:
        for s in sessions:
            s.client.disconnect()
        return 1

    # 2. The node killed by the test.
    if not wait_for(lambda: os.path.exists(a.signal_file), 180, step=0.01):
        print(json.dumps({"event": "failover", "ok": False, "detail": "no signal", "affected": []}), flush=True)
        return 1
    killed_at = time.time()
    with open(a.signal_file) as f:
        victim = f.read().strip()
    affected = [s for s in sessions if node_at_ready[s.i] == victim]
    others = [s for s in sessions if node_at_ready[s.i] != victim]
    updates_at_kill = {s.i: s.updates() for s in others}
    sent = {s.i: s.processed() for s in affected}

    # 3. The victim's clients: a new session elsewhere, updates and a message there.
    back = {}
    first_count = {}
    deadline = killed_at + a.timeout
    while len(back) < len(affected) and time.time() < deadline:
        for s in affected:
            if s.i in back:
                continue
            node = s.node()
            if not node or node == victim or s.session() is None:
                continue
            n = s.updates()
            if s.i not in first_count:
                first_count[s.i] = n
            elif n > first_count[s.i]:
                back[s.i] = time.time() - killed_at
                s.send(a.message)
        time.sleep(0.02)
    problems = [f"{s.i} {s.transport}: not back" for s in affected if s.i not in back]
    for s in affected:
        if s.i in back and not wait_for(lambda: s.processed() > sent[s.i] or s.watch.message_failures, 20):
            problems.append(f"{s.i} {s.transport}: message on the new node not processed")
    time.sleep(1)
    for s in others:
        session, statuses = before[s.i]
        if s.session() != session or len(s.watch.statuses) != statuses:
            problems.append(f"{s.i} {s.transport} on {s.node()} noticed: {s.watch.statuses[statuses:]}")
        if s.updates() <= updates_at_kill[s.i]:
            problems.append(f"{s.i} {s.transport} on {s.node()} stopped receiving")
    if not affected:
        problems.append(f"no client was on {victim}")
    def timeline(s):
        with s.watch.lock:
            return [f"{t - killed_at:+.2f} {status}" for t, status in s.watch.timeline if t >= killed_at - 1]
    report = [{"i": s.i, "transport": s.transport, "node": s.node(), "seconds": round(back.get(s.i, -1), 3),
               "statuses": timeline(s)} for s in affected]
    print(json.dumps({"event": "failover", "ok": not problems, "detail": "; ".join(problems) or "all back",
                      "affected": report}), flush=True)
    for s in sessions:
        s.client.disconnect()
    return 0 if not problems else 1


if __name__ == "__main__":
    sys.exit(main())
