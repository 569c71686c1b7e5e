#!/usr/bin/env python3
"""Interop driver: runs the official Lightstreamer Python client (lightstreamer-client-lib,
pinned in requirements.txt) against our server on one forced transport, scenario by scenario,
and prints one JSON object per scenario on stdout:

    {"transport": "...", "scenario": "...", "ok": true|false, "detail": "...", "seconds": 1.2}

Exit status: 0 when every scenario passed, 1 otherwise, 2 on a bad command line.

Scenarios (all through a local TCP relay so that the recovery scenario can cut the sockets):
  merge_snapshot  MERGE on two stock items with snapshot: one snapshot update per item, then live ones
  distinct        DISTINCT on the chat room; a CHAT message comes back as an update
  message         sendMessage with a listener: onProcessed (MSGDONE)
  command         COMMAND on the portfolio with snapshot: ADD rows carrying key and command
  raw             RAW on a stock item: live updates, none flagged as snapshot
  recovery        MERGE unfiltered on the counter; every socket is cut mid-flow; the client
                  recovers the same session and the counter values stay consecutive
                  (no update lost or duplicated)
  refused_login   a user the Metadata Adapter refuses: onServerError with the adapter's code
  message_refused (not by default) a message the Metadata Adapter refuses: onDeny with its code
  distinct_nulls  (not by default) DISTINCT on the news item: every update new, a null field
                  arrives as None and an empty one as ""
  group_schema    (not by default) MERGE by item group and field schema names, which the
                  Metadata Adapter resolves: each item position carries its own name
  remote_outage   (not by default) MERGE while the test kills and restarts the remote Data
                  Adapter (--signal-file says when): a gap in updates, then updates again,
                  same session
"""
import argparse
import asyncio
import json
import sys
import threading
import time
import uuid

from lightstreamer.client import (ClientListener, ClientMessageListener, LightstreamerClient,
                                  Subscription, SubscriptionListener)


class Relay:
    """A TCP relay on loopback that can cut every connection it carries."""

    def __init__(self, target_host, target_port):
        self.target = (target_host, target_port)
        self.loop = asyncio.new_event_loop()
        self.pairs = set()
        self.port = None
        ready = threading.Event()
        threading.Thread(target=self._run, args=(ready,), daemon=True).start()
        ready.wait(5)

    def _run(self, ready):
        asyncio.set_event_loop(self.loop)
        server = self.loop.run_until_complete(asyncio.start_server(self._accept, "127.0.0.1", 0))
        self.port = server.sockets[0].getsockname()[1]
        ready.set()
        self.loop.run_forever()

    async def _accept(self, reader, writer):
        try:
            up_reader, up_writer = await asyncio.open_connection(*self.target)
        except OSError:
            writer.close()
            return
        pair = (writer, up_writer)
        self.pairs.add(pair)

        async def pipe(src, dst):
            try:
                while True:
                    data = await src.read(65536)
                    if not data:
                        break
                    dst.write(data)
                    await dst.drain()
            except Exception:
                pass
            finally:
                try:
                    dst.close()
                except Exception:
                    pass

        await asyncio.gather(pipe(reader, up_writer), pipe(up_reader, writer))
        self.pairs.discard(pair)

    def cut_all(self):
        """Aborts every open connection (both sides), as a network failure would."""
        def cut():
            n = 0
            for a, b in list(self.pairs):
                for w in (a, b):
                    try:
                        w.transport.abort()
                    except Exception:
                        pass
                n += 1
            self.pairs.clear()
            return n
        result = []
        ev = threading.Event()

        def run():
            result.append(cut())
            ev.set()
        self.loop.call_soon_threadsafe(run)
        ev.wait(5)
        return result[0] if result else 0


class Watch(ClientListener, SubscriptionListener, ClientMessageListener):
    """Collects everything the client reports, thread-safely."""

    def __init__(self):
        self.lock = threading.Condition()
        self.statuses = []
        self.server_errors = []
        self.updates = []
        self.subscribed = False
        self.sub_errors = []
        self.eos = []
        self.processed = []
        self.message_failures = []

    def _add(self, attr, value):
        with self.lock:
            getattr(self, attr).append(value)
            self.lock.notify_all()

    def wait(self, predicate, timeout):
        deadline = time.time() + timeout
        with self.lock:
            while not predicate():
                left = deadline - time.time()
                if left <= 0:
                    return False
                self.lock.wait(left)
            return True

    # ClientListener
    def onStatusChange(self, status):
        self._add("statuses", status)

    def onServerError(self, code, message):
        self._add("server_errors", (code, message))

    # SubscriptionListener
    def onSubscription(self):
        with self.lock:
            self.subscribed = True
            self.lock.notify_all()

    def onSubscriptionError(self, code, message):
        self._add("sub_errors", (code, message))

    def onEndOfSnapshot(self, itemName, itemPos):
        self._add("eos", itemName)

    def onItemUpdate(self, update):
        try:
            fields = dict(update.getFields())
        except Exception:  # a field schema: only positions are known
            fields = {}
        self._add("updates", {"item": update.getItemName(), "pos": update.getItemPos(), "snapshot": update.isSnapshot(),
                              "fields": fields, "by_pos": dict(update.getFieldsByPosition()), "at": time.time()})

    # ClientMessageListener
    def onProcessed(self, originalMessage, response=None):
        self._add("processed", (originalMessage, response))

    def onDeny(self, originalMessage, code, error):
        self._add("message_failures", ("deny", code, error))

    def onDiscarded(self, originalMessage):
        self._add("message_failures", ("discarded", None, None))

    def onError(self, originalMessage):
        self._add("message_failures", ("error", None, None))

    def onAbort(self, originalMessage, sentOnNetwork):
        self._add("message_failures", ("abort", None, None))


class Failed(Exception):
    pass


class Driver:
    def __init__(self, args, relay):
        self.a = args
        self.relay = relay
        self.url = f"http://127.0.0.1:{relay.port}"

    def client(self, watch, adapter_set=None, user=None, password=None):
        c = LightstreamerClient(self.url, adapter_set or self.a.adapter_set)
        c.connectionOptions.setForcedTransport(self.a.transport)
        c.connectionOptions.setRetryDelay(500)
        c.connectionOptions.setFirstRetryMaxDelay(100)
        if user is not None:
            c.connectionDetails.setUser(user)
        if password is not None:
            c.connectionDetails.setPassword(password)
        c.addListener(watch)
        return c

    def connected(self, w, timeout=30):
        want = "CONNECTED:" + self.a.transport
        if not w.wait(lambda: want in w.statuses or w.server_errors, timeout):
            raise Failed(f"not {want} after {timeout}s; statuses {w.statuses}")
        if w.server_errors:
            raise Failed(f"server error {w.server_errors}")

    def subscription(self, w, mode, items, fields, snapshot="yes", frequency=None, adapter=None):
        s = Subscription(mode, items, fields)
        if snapshot is not None:
            s.setRequestedSnapshot(snapshot)
        if frequency is not None:
            s.setRequestedMaxFrequency(frequency)
        if adapter:
            s.setDataAdapter(adapter)
        s.addListener(w)
        return s

    def need(self, w, predicate, timeout, what):
        if not w.wait(lambda: predicate() or w.sub_errors or w.server_errors, timeout):
            raise Failed(f"timeout waiting for {what}; got {len(w.updates)} updates, statuses {w.statuses[-4:]}")
        if w.sub_errors:
            raise Failed(f"subscription error {w.sub_errors}")
        if w.server_errors:
            raise Failed(f"server error {w.server_errors}")

    # --- scenarios ---

    def merge_snapshot(self):
        w = Watch()
        c = self.client(w)
        items = self.a.stock_items
        c.subscribe(self.subscription(w, "MERGE", items, self.a.stock_fields))
        c.connect()
        try:
            self.connected(w)
            per_item = lambda: {i: [u for u in w.updates if u["item"] == i] for i in items}
            self.need(w, lambda: all(len(v) >= 2 for v in per_item().values()), 30, "two updates per item")
            for item, ups in per_item().items():
                if not ups[0]["snapshot"]:
                    raise Failed(f"first update of {item} is not a snapshot")
                if any(u["snapshot"] for u in ups[1:]):
                    raise Failed(f"{item}: more than one snapshot update in MERGE")
                for f in self.a.stock_fields:
                    if ups[0]["fields"].get(f) is None:
                        raise Failed(f"{item}: snapshot has no value for {f}")
            return f"{len(w.updates)} updates, snapshot first for {', '.join(items)}"
        finally:
            c.disconnect()

    def distinct(self):
        w = Watch()
        c = self.client(w)
        c.subscribe(self.subscription(w, "DISTINCT", [self.a.chat_item], self.a.chat_fields, snapshot="no"))
        c.connect()
        try:
            self.connected(w)
            self.need(w, lambda: w.subscribed, 20, "onSubscription")
            token = "hello-" + uuid.uuid4().hex[:8]
            c.sendMessage(self.a.chat_prefix + token, None, -1, w, True)
            self.need(w, lambda: any(token in " ".join(str(v) for v in u["fields"].values()) for u in w.updates), 20,
                      "the chat update")
            return f"chat update with {token} received"
        finally:
            c.disconnect()

    def message(self):
        w = Watch()
        c = self.client(w)
        c.connect()
        try:
            self.connected(w)
            text = self.a.chat_prefix + "msg-" + uuid.uuid4().hex[:6]
            c.sendMessage(text, "interop_seq", -1, w, True)
            self.need(w, lambda: w.processed or w.message_failures, 20, "the message outcome")
            if w.message_failures:
                raise Failed(f"message failed: {w.message_failures}")
            original, response = w.processed[0]
            if original != text:
                raise Failed(f"onProcessed for {original!r}, sent {text!r}")
            return f"MSGDONE for {text!r}, response {response!r}"
        finally:
            c.disconnect()

    def message_refused(self):
        w = Watch()
        c = self.client(w)
        c.connect()
        try:
            self.connected(w)
            c.sendMessage(self.a.refused_message, "interop_seq", -1, w, True)
            self.need(w, lambda: w.processed or w.message_failures, 20, "the message outcome")
            if w.processed or w.message_failures[0][:2] != ("deny", self.a.refused_message_code):
                raise Failed(f"expected onDeny with {self.a.refused_message_code}: {w.processed} {w.message_failures}")
            return f"onDeny{w.message_failures[0][1:]}"
        finally:
            c.disconnect()

    def command(self):
        w = Watch()
        c = self.client(w)
        c.subscribe(self.subscription(w, "COMMAND", [self.a.command_item], self.a.command_fields))
        c.connect()
        try:
            self.connected(w)
            self.need(w, lambda: self.a.command_item in w.eos, 20, "end of snapshot")
            adds = [u for u in w.updates if u["fields"].get("command") == "ADD"]
            if not adds:
                raise Failed(f"no ADD row in {w.updates[:3]}")
            if any(not u["fields"].get("key") for u in adds):
                raise Failed("an ADD row without key")
            return f"{len(adds)} ADD rows, keys {sorted({u['fields']['key'] for u in adds})[:5]}"
        finally:
            c.disconnect()

    def raw(self):
        w = Watch()
        c = self.client(w)
        c.subscribe(self.subscription(w, "RAW", [self.a.stock_items[0]], self.a.stock_fields, snapshot=None))
        c.connect()
        try:
            self.connected(w)
            self.need(w, lambda: len(w.updates) >= 2, 30, "two RAW updates")
            if any(u["snapshot"] for u in w.updates):
                raise Failed("a RAW update flagged as snapshot")
            return f"{len(w.updates)} RAW updates"
        finally:
            c.disconnect()

    def recovery(self):
        w = Watch()
        c = self.client(w)
        c.connectionOptions.setSessionRecoveryTimeout(15000)
        field = self.a.counter_field
        c.subscribe(self.subscription(w, "MERGE", [self.a.counter_item], [field], frequency="unfiltered"))
        c.connect()
        try:
            self.connected(w)
            session = c.connectionDetails.getSessionId()
            self.need(w, lambda: len(w.updates) >= 5, 30, "5 counter updates")
            before = len(w.updates)
            # Polling transports have moments with no socket open, and a poll whose answer is
            # already complete may be cut unnoticed: cut until the client notices (or 15 s).
            cut = 0
            deadline = time.time() + 15
            while time.time() < deadline and not any("TRYING-RECOVERY" in s for s in w.statuses):
                cut += self.relay.cut_all()
                time.sleep(0.03)
            # The client notices, binds again with LS_recovery_from and keeps the session.
            self.need(w, lambda: len(w.updates) >= before + 10, 50, "10 updates after the cut")
            statuses = list(w.statuses)
            values = [int(u["fields"][field]) for u in w.updates]
            gaps = [(a, b) for a, b in zip(values, values[1:]) if b != a + 1]
            if gaps:
                raise Failed(f"counter not consecutive around {gaps[:3]} (values {values[:40]})")
            if c.connectionDetails.getSessionId() != session:
                raise Failed(f"a new session was created ({session} -> {c.connectionDetails.getSessionId()})")
            recovered = any("TRYING-RECOVERY" in s for s in statuses)
            if not recovered:
                raise Failed(f"the cut was not noticed (cut {cut} sockets, statuses {statuses})")
            return f"cut {cut} sockets at update {before}; {len(values)} consecutive values {values[0]}..{values[-1]}; " \
                   f"same session {session}"
        finally:
            c.disconnect()

    def distinct_nulls(self):
        """DISTINCT on an item whose adapter sends a null field and an empty one."""
        w = Watch()
        c = self.client(w)
        fields = ["headline", "empty", "missing"]
        c.subscribe(self.subscription(w, "DISTINCT", [self.a.news_item], fields, snapshot="no"))
        c.connect()
        try:
            self.connected(w)
            self.need(w, lambda: len(w.updates) >= 3, 20, "three DISTINCT updates")
            ups = list(w.updates)
            heads = [u["fields"].get("headline") for u in ups]
            if len(set(heads)) != len(heads) or any(not h for h in heads):
                raise Failed(f"DISTINCT headlines not all new: {heads}")
            for u in ups:
                if u["fields"].get("empty") != "" or u["fields"].get("missing") is not None:
                    raise Failed(f"expected empty='' and missing=None: {u['fields']}")
            return f"{len(ups)} DISTINCT updates {heads[:3]}, empty '' and missing None in each"
        finally:
            c.disconnect()

    def group_schema(self):
        """Item group and field schema names resolved by the Metadata Adapter."""
        w = Watch()
        c = self.client(w)
        s = Subscription("MERGE", None, None)
        s.setItemGroup(self.a.group)
        s.setFieldSchema(self.a.schema)
        s.setRequestedSnapshot("yes")
        s.addListener(w)
        c.subscribe(s)
        c.connect()
        try:
            self.connected(w)
            n = len(self.a.group_items)
            self.need(w, lambda: {u["pos"] for u in w.updates} >= set(range(1, n + 1)), 20, "an update per item")
            for u in w.updates:
                if len(u["by_pos"]) != len(self.a.schema_fields):
                    raise Failed(f"{len(u['by_pos'])} fields, expected {len(self.a.schema_fields)}: {u['by_pos']}")
                name_pos = self.a.schema_fields.index("stock_name") + 1
                want = self.a.group_items[u["pos"] - 1]
                if u["by_pos"].get(name_pos) != want:
                    raise Failed(f"item {u['pos']} of {self.a.group!r} carries {u['by_pos']}, expected {want}")
            return f"group {self.a.group!r} -> {self.a.group_items}, schema {self.a.schema!r} -> {len(self.a.schema_fields)} fields; {len(w.updates)} updates"
        finally:
            c.disconnect()

    def remote_outage(self):
        """MERGE on a stock item while the test kills the remote Data Adapter and starts it again:
        the session stays, updates stop, then come again. Signals the test through a file."""
        w = Watch()
        c = self.client(w)
        item = self.a.stock_items[0]
        c.subscribe(self.subscription(w, "MERGE", [item], self.a.stock_fields))
        c.connect()
        try:
            self.connected(w)
            session = c.connectionDetails.getSessionId()
            self.need(w, lambda: len(w.updates) >= 3, 20, "three updates before the outage")
            with open(self.a.signal_file, "w") as f:
                f.write("streaming\n")
            gap = lambda: max((b["at"] - a["at"] for a, b in zip(w.updates, w.updates[1:])), default=0)
            self.need(w, lambda: gap() >= self.a.outage_gap, 40, f"a gap of {self.a.outage_gap}s (the outage)")
            with w.lock:
                resumed_from = len(w.updates)
            self.need(w, lambda: len(w.updates) >= resumed_from + 3, 30, "three updates after the restart")
            if c.connectionDetails.getSessionId() != session:
                raise Failed("the session changed during the outage")
            if any(s.startswith("DISCONNECTED") for s in w.statuses):
                raise Failed(f"the client was disconnected: {w.statuses}")
            return f"gap of {gap():.1f}s in updates, then {len(w.updates) - resumed_from + 1} more on session {session}"
        finally:
            c.disconnect()

    def refused_login(self):
        w = Watch()
        c = self.client(w, adapter_set=self.a.refused_adapter_set, user=self.a.refused_user, password="x")
        c.connect()
        try:
            if not w.wait(lambda: w.server_errors, 20):
                raise Failed(f"no server error; statuses {w.statuses}")
            code, message = w.server_errors[0]
            if code != self.a.refused_code:
                raise Failed(f"server error {code} {message}, expected {self.a.refused_code}")
            return f"onServerError({code}, {message!r})"
        finally:
            c.disconnect()


SCENARIOS = ["merge_snapshot", "distinct", "message", "command", "raw", "recovery", "refused_login"]
# Only against adapters that refuse some messages (the remote adapters' test).
EXTRA_SCENARIOS = ["message_refused", "distinct_nulls", "group_schema", "remote_outage"]


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--port", type=int, required=True, help="server port on 127.0.0.1")
    ap.add_argument("--transport", required=True,
                    choices=["WS-STREAMING", "HTTP-STREAMING", "WS-POLLING", "HTTP-POLLING"])
    ap.add_argument("--scenarios", nargs="+", default=SCENARIOS, choices=SCENARIOS + EXTRA_SCENARIOS)
    ap.add_argument("--adapter-set", default="DEMO")
    ap.add_argument("--stock-items", nargs="+", default=["item1", "item2"])
    ap.add_argument("--stock-fields", nargs="+", default=["stock_name", "last_price", "time"])
    ap.add_argument("--chat-item", default="chat_room")
    ap.add_argument("--chat-fields", nargs="+", default=["message", "timestamp"])
    ap.add_argument("--chat-prefix", default="CHAT|")
    ap.add_argument("--command-item", default="portfolio1")
    ap.add_argument("--command-fields", nargs="+", default=["key", "command", "qty", "price"])
    ap.add_argument("--counter-item", default="counter")
    ap.add_argument("--counter-field", default="count")
    ap.add_argument("--refused-adapter-set", default="DEMO")
    ap.add_argument("--refused-user", default="refused")
    ap.add_argument("--refused-code", type=int, default=1)
    ap.add_argument("--refused-message", default="deny this")
    ap.add_argument("--refused-message-code", type=int, default=-5)
    ap.add_argument("--news-item", default="news")
    ap.add_argument("--group", default="stocks")
    ap.add_argument("--group-items", nargs="+", default=["item1", "item2"])
    ap.add_argument("--schema", default="quote")
    ap.add_argument("--schema-fields", nargs="+", default=["stock_name", "last_price", "time"])
    ap.add_argument("--signal-file", help="remote_outage: written when updates flow")
    ap.add_argument("--outage-gap", type=float, default=1.0, help="remote_outage: seconds without updates expected")
    a = ap.parse_args(argv)

    relay = Relay("127.0.0.1", a.port)
    driver = Driver(a, relay)
    all_ok = True
    for name in a.scenarios:
        start = time.time()
        try:
            detail, ok = getattr(driver, name)(), True
        except Failed as e:
            detail, ok = str(e), False
        except Exception as e:  # a bug here, or in the client
            detail, ok = f"{type(e).__name__}: {e}", False
        all_ok = all_ok and ok
        print(json.dumps({"transport": a.transport, "scenario": name, "ok": ok, "detail": detail,
                          "seconds": round(time.time() - start, 2)}), flush=True)
    return 0 if all_ok else 1


if __name__ == "__main__":
    sys.exit(main())
