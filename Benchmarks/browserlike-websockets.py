#!/usr/bin/env python3
"""Opens N idle WebSocket sessions the way a browser would, and holds them.

Usage: browserlike-websockets.py PORT N SECONDS [ADAPTER_SET]

Each connection sends an upgrade request with the headers a desktop browser sends (user agent,
origin, cookies, compression offers: 792 bytes), then `create_session` without a subscription,
waits for CONOK, and is left open. Prints "holding N" once all are open, then sleeps SECONDS.
The load tool's own upgrade requests are shorter; a server's memory per connection can depend
on the request's size (how many reads it takes), hence this second client for
`idle-heap.sh`.
"""
import base64
import os
import socket
import struct
import sys
import time

AGENT = "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36"
COOKIE = "session_pref=" + "a" * 120 + "; theme=dark; consent=" + "b" * 60


def text_frame(text):
    """A masked WebSocket text frame (RFC 6455 §5.2); payloads below 64 KiB."""
    payload = text.encode()
    mask = os.urandom(4)
    if len(payload) < 126:
        head = bytes([0x81, 0x80 | len(payload)])
    else:
        head = bytes([0x81, 0x80 | 126]) + struct.pack("!H", len(payload))
    return head + mask + bytes(b ^ mask[i % 4] for i, b in enumerate(payload))


def upgrade_request(port):
    key = base64.b64encode(os.urandom(16)).decode()
    lines = [
        "GET /lightstreamer HTTP/1.1",
        "Host: 127.0.0.1:%d" % port,
        "Connection: Upgrade",
        "Pragma: no-cache",
        "Cache-Control: no-cache",
        "User-Agent: " + AGENT,
        "Upgrade: websocket",
        "Origin: http://127.0.0.1:8080",
        "Sec-WebSocket-Version: 13",
        "Accept-Encoding: gzip, deflate, br, zstd",
        "Accept-Language: en-GB,en-US;q=0.9,en;q=0.8",
        "Cookie: " + COOKIE,
        "Sec-WebSocket-Key: " + key,
        "Sec-WebSocket-Extensions: permessage-deflate; client_max_window_bits",
        "Sec-WebSocket-Protocol: TLCP-2.5.0.lightstreamer.com",
    ]
    return ("\r\n".join(lines) + "\r\n\r\n").encode()


def read_until(sock, buffer, marker, deadline):
    while marker not in buffer:
        if time.monotonic() > deadline:
            raise TimeoutError("no %r from the server" % marker)
        chunk = sock.recv(4096)
        if not chunk:
            raise ConnectionError("closed by the server")
        buffer += chunk
    return buffer


def main():
    port, count, hold = int(sys.argv[1]), int(sys.argv[2]), float(sys.argv[3])
    adapter_set = sys.argv[4] if len(sys.argv) > 4 else "LOAD"
    create = "create_session\r\nLS_adapter_set=%s&LS_cid=mgQkwtwdysogQz2BJ4Ji%%20kOj2Bg&LS_send_sync=false" % adapter_set
    held = []
    for _ in range(count):
        sock = socket.create_connection(("127.0.0.1", port), timeout=10)
        deadline = time.monotonic() + 10
        sock.sendall(upgrade_request(port))
        seen = read_until(sock, b"", b"\r\n\r\n", deadline)
        sock.sendall(text_frame(create))
        read_until(sock, seen, b"CONOK", deadline)
        held.append(sock)
    print("holding %d" % len(held), flush=True)
    time.sleep(hold)


if __name__ == "__main__":
    main()
