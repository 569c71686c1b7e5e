#!/usr/bin/env python3
"""Remote adapters written with the official Python Remote Adapter SDK (lightstreamer-adapter,
pinned in requirements.txt), for the interop test of our server's ARI side. One process per
adapter, as deployments run them:

    remote_adapters.py --role metadata --port 6662 [--user U --password P]
    remote_adapters.py --role data --port 6661 [--user U --password P]

With --tls-ca CA.pem the process connects with TLS (the SDK's ssl_context), trusting only that
CA and checking that the server's certificate names --host (use --host localhost with a
certificate for localhost).

Metadata: group "stocks" is the items item1 item2 and schema "quote" the fields stock_name
last_price time (other groups and schemas are space-separated names); user "refused" gets a
CreditsError with code -7; a message starting with "deny" gets a CreditsError with code -5,
any other message is accepted; tables notifications are wanted; an MPN device whose application
id ends in ".denied" gets a CreditsError with code -9, other devices are accepted; an MPN
subscription whose group starts with "denied" gets a CreditsError with code -11 (MSA); a device
token change of an application id ending in ".locked" gets a CreditsError with code -12 (MDC).

Data: itemN (MERGE): a snapshot, then a new last_price every 100 ms; portfolio1 (COMMAND): two
ADD rows as snapshot, then UPDATEs of row A; news (DISTINCT): no snapshot, a new headline every
100 ms with the field "empty" always "" and "missing" always null; floodN: fields n and ts,
updated in a tight loop (the benchmark in BENCHMARKS.md, "Remote adapters"). A process stays up --run-for seconds even after
the server closed its connection (the test that started it ends it).
"""
import argparse
import os
import signal
import ssl
import sys
import threading
import time

from lightstreamer_adapter.interfaces.data import DataProvider
from lightstreamer_adapter.interfaces.metadata import CreditsError, MetadataProvider
from lightstreamer_adapter.server import DataProviderServer, MetadataProviderServer


class Metadata(MetadataProvider):
    GROUPS = {"stocks": ["item1", "item2"]}
    SCHEMAS = {"quote": ["stock_name", "last_price", "time"]}

    def notify_user(self, user, password, http_headers):
        if user == "refused":
            raise CreditsError(-7, "user refused", "No entry for you")

    def get_items(self, user, session_id, group):
        return self.GROUPS.get(group, group.split())

    def get_schema(self, user, session_id, group, schema):
        return self.SCHEMAS.get(schema, schema.split())

    def wants_tables_notification(self, user):
        return True

    def notify_mpn_device_access(self, user, session_id, device):
        if device.application_id.endswith(".denied"):
            raise CreditsError(-9, "device refused", "No push notifications for this app")

    def notify_mpn_subscription_activation(self, user, session_id, table, mpn_subscription):
        if table.group.startswith("denied"):
            raise CreditsError(-11, "MPN subscription refused", "No push notifications for that")

    def notify_mpn_device_token_change(self, user, session_id, device, new_device_token):
        if device.application_id.endswith(".locked"):
            raise CreditsError(-12, "token change refused", "This device keeps its token")

    def notify_user_message(self, user, session_id, message):
        if message.startswith("deny"):
            raise CreditsError(-5, "message refused", "No messages like that")


class Data(DataProvider):
    def __init__(self):
        self.listener = None
        self.lock = threading.Lock()
        self.running = {}

    def initialize(self, parameters, config_file=None):
        pass

    def set_listener(self, event_listener):
        self.listener = event_listener

    def issnapshot_available(self, item_name):
        return True

    def subscribe(self, item_name):
        stop = threading.Event()
        with self.lock:
            self.running[item_name] = stop
        threading.Thread(target=self.feed, args=(item_name, stop), daemon=True).start()

    def unsubscribe(self, item_name):
        with self.lock:
            stop = self.running.pop(item_name, None)
        if stop:
            stop.set()

    def feed(self, item, stop):
        if item.startswith("flood"):
            # As fast as the SDK takes them (the remote adapters benchmark, BENCHMARKS.md).
            n = 0
            update = self.listener.update
            while not stop.is_set():
                n += 1
                update(item, {"n": str(n), "ts": "%.6f" % time.time()}, False)
            return
        if item == "news":
            n = 0
            while not stop.wait(0.1):
                n += 1
                self.listener.update(item, {"headline": "headline %d" % n, "empty": "", "missing": None}, False)
            return
        if item == "portfolio1":
            self.listener.update(item, {"key": "A", "command": "ADD", "qty": "10", "price": "1.5"}, True)
            self.listener.update(item, {"key": "B", "command": "ADD", "qty": "", "price": None}, True)
            self.listener.end_of_snapshot(item)
            qty = 10
            while not stop.wait(0.1):
                qty += 1
                self.listener.update(item, {"key": "A", "command": "UPDATE", "qty": str(qty), "price": "1.5"}, False)
            return
        price = 100.0
        self.listener.update(item, {"stock_name": item, "last_price": "%.2f" % price, "time": time.strftime("%H:%M:%S")},
                             True)
        self.listener.end_of_snapshot(item)
        while not stop.wait(0.1):
            price += 0.01
            self.listener.update(item, {"stock_name": item, "last_price": "%.2f" % price, "time": time.strftime("%H:%M:%S")},
                                 False)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--role", choices=["metadata", "data"], required=True)
    ap.add_argument("--host", default="127.0.0.1")
    ap.add_argument("--port", type=int, required=True)
    ap.add_argument("--user")
    ap.add_argument("--password")
    ap.add_argument("--tls-ca", help="connect with TLS, trusting this CA certificate (PEM)")
    ap.add_argument("--run-for", type=float, default=120, help="seconds before exiting on its own")
    a = ap.parse_args()
    # A parent may hand down a mask that blocks SIGTERM (Foundation's Process started from a Swift
    # concurrency thread does): unblock it, so that terminate() ends this process.
    signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGTERM, signal.SIGINT})
    ssl_context = None
    if a.tls_ca is not None:
        ssl_context = ssl.create_default_context(ssl.Purpose.SERVER_AUTH, cafile=a.tls_ca)
    if a.role == "metadata":
        server = MetadataProviderServer(Metadata(), (a.host, a.port), ssl_context=ssl_context)
    else:
        server = DataProviderServer(Data(), (a.host, a.port), ssl_context=ssl_context)
    if a.user is not None:
        server.remote_user = a.user
    if a.password is not None:
        server.remote_password = a.password
    server.start()
    print(f"{a.role} remote adapter started", flush=True)
    time.sleep(a.run_for)
    # The SDK's threads are not daemons.
    os._exit(0)


if __name__ == "__main__":
    sys.exit(main())
