#!/usr/bin/env python3
"""A fake TLCP server for measuring the client's CPU per update (Benchmarks/cli-throughput.sh).

It speaks just enough TLCP over WebSocket for one session with MERGE subscriptions: WSOK,
CONOK, REQOK + SUBOK for each `add`, then the same canned U lines over and over, as fast as
the socket takes them, until the client goes away. The lines are ten-field stock rows like the
ClientBenchmarks fixture: after a full first row per item, a few fields change per update, the
others are sent as "unchanged" (empty) tokens, with a `^7` run every eighth line. Several lines
share one WebSocket message, as a busy server writes them.

Usage: tlcp-replay-server.py PORT [LINES_PER_MESSAGE]
"""
import base64
import hashlib
import socket
import sys
import threading
import urllib.parse

GUID = b"258EAFA5-E914-47DA-95CA-C5AB0DC85B11"


def frame(payload: bytes) -> bytes:
    n = len(payload)
    if n < 126:
        head = bytes([0x81, n])
    elif n < 65536:
        head = bytes([0x81, 126]) + n.to_bytes(2, "big")
    else:
        head = bytes([0x81, 127]) + n.to_bytes(8, "big")
    return head + payload


def read_exact(sock, n):
    data = b""
    while len(data) < n:
        chunk = sock.recv(n - len(data))
        if not chunk:
            raise ConnectionError("closed")
        data += chunk
    return data


def read_message(sock) -> bytes:
    """One client frame (masked), unmasked. Close frames end the connection."""
    b0, b1 = read_exact(sock, 2)
    n = b1 & 0x7F
    if n == 126:
        n = int.from_bytes(read_exact(sock, 2), "big")
    elif n == 127:
        n = int.from_bytes(read_exact(sock, 8), "big")
    mask = read_exact(sock, 4) if b1 & 0x80 else b"\0\0\0\0"
    payload = bytearray(read_exact(sock, n))
    for i in range(n):
        payload[i] ^= mask[i % 4]
    if b0 & 0x0F == 8:
        raise ConnectionError("close frame")
    return bytes(payload)


def rows(sub_id: int, items: int, lines_per_message: int):
    """The first full row of every item, then one cycle of update messages to repeat."""
    first = []
    for item in range(1, items + 1):
        p = 100.0
        first.append(f"U,{sub_id},{item},ACME {item}|{p}|12:00:10|0.1|1000|{p - 0.05:.2f}|{p + 0.05:.2f}|3000|99.5|103.25")
    updates = []
    for i in range(1, 64 * items + 1):
        item = 1 + i % items
        price = 100 + (i % 17) / 4
        if i % 8 == 0:
            updates.append(f"U,{sub_id},{item},|{price}|12:00:{10 + i % 50}|^7")
        else:
            updates.append(f"U,{sub_id},{item},|{price}|12:00:{10 + i % 50}|0.{i % 9}|{1000 + i % 3 * 500}|"
                           f"{price - 0.05:.2f}|{price + 0.05:.2f}||99.5|")
    head = frame(("\r\n".join(first) + "\r\n").encode())
    cycle = b""
    for k in range(0, len(updates), lines_per_message):
        cycle += frame(("\r\n".join(updates[k:k + lines_per_message]) + "\r\n").encode())
    # At least ~1 MB per sendall.
    return head, cycle * max(1, (1 << 20) // len(cycle))


def stream(send, sub_id, items, lines_per_message):
    head, cycle = rows(sub_id, items, lines_per_message)
    try:
        send(head)
        while True:
            send(cycle)
    except OSError:
        pass


def session(sock, lines_per_message):
    request = b""
    while b"\r\n\r\n" not in request:
        chunk = sock.recv(4096)
        if not chunk:
            return
        request += chunk
    headers = {}
    for line in request.split(b"\r\n")[1:]:
        if b":" in line:
            k, v = line.split(b":", 1)
            headers[k.strip().lower()] = v.strip()
    accept = base64.b64encode(hashlib.sha1(headers[b"sec-websocket-key"] + GUID).digest())
    sock.sendall(b"HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
                 b"Sec-WebSocket-Accept: " + accept + b"\r\n"
                 b"Sec-WebSocket-Protocol: " + headers.get(b"sec-websocket-protocol", b"").split(b",")[0].strip() +
                 b"\r\n\r\n")
    lock = threading.Lock()

    def send(data):
        with lock:
            sock.sendall(data)

    while True:
        lines = [l for l in read_message(sock).decode().split("\r\n") if l]
        name = lines[0] if lines else ""
        if name == "wsok":
            send(frame(b"WSOK\r\n"))
        elif name == "create_session":
            send(frame(b"CONOK,S1,50000,5000,*\r\n"))
        elif name == "control":
            # A message may carry several requests, one a line.
            for line in lines[1:]:
                params = dict(urllib.parse.parse_qsl(line))
                if params.get("LS_op") == "add":
                    sub_id = int(params["LS_subId"])
                    items = len(params.get("LS_group", "item1").split())
                    fields = len(params.get("LS_schema", "").split())
                    send(frame(f"REQOK,{params['LS_reqId']}\r\nSUBOK,{sub_id},{items},{fields}\r\n".encode()))
                    threading.Thread(target=stream, args=(send, sub_id, items, lines_per_message), daemon=True).start()
                elif "LS_reqId" in params:
                    send(frame(f"REQOK,{params['LS_reqId']}\r\n".encode()))


def serve(sock, lines_per_message):
    try:
        session(sock, lines_per_message)
    except (OSError, ConnectionError, KeyError, ValueError):
        pass
    finally:
        try:
            sock.close()
        except OSError:
            pass


def main():
    port = int(sys.argv[1])
    lines_per_message = int(sys.argv[2]) if len(sys.argv) > 2 else 32
    listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    listener.bind(("127.0.0.1", port))
    listener.listen(16)
    print(f"listening on {port}", flush=True)
    while True:
        sock, _ = listener.accept()
        threading.Thread(target=serve, args=(sock, lines_per_message), daemon=True).start()


if __name__ == "__main__":
    main()
