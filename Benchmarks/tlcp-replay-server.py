#!/usr/bin/env python3
"""A fake TLCP server for measuring the client's CPU per update (Benchmarks/cli-throughput.sh).

It speaks just enough TLCP over WebSocket for one session with MERGE subscriptions: WSOK,
CONOK, REQOK + SUBOK for each `add`, then the same canned U lines over and over, as fast as
the socket takes them, until the client goes away. The lines are ten-field stock rows like the
ClientBenchmarks fixture: after a full first row per item, a few fields change per update, the
others are sent as "unchanged" (empty) tokens, with a `^7` run every eighth line. Several lines
share one WebSocket message, as a busy server writes them.

A client that connects without a WebSocket upgrade gets the same session over HTTP-STREAMING
(`--transport HTTP-STREAMING`): `create_session` answers CONOK and LOOP, `bind_session` opens the
stream (a chunked response, the same lines in chunks of about 1 MB), each `control` request
gets REQOK and starts its subscription's rows on that stream.

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


def rows(sub_id: int, items: int, lines_per_message: int, wrap=None):
    """The first full row of every item, then one cycle of update messages to repeat, each
    message wrapped by `wrap` (a WebSocket frame by default)."""
    wrap = wrap or frame
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
    head = wrap(("\r\n".join(first) + "\r\n").encode())
    cycle = b""
    for k in range(0, len(updates), lines_per_message):
        cycle += wrap(("\r\n".join(updates[k:k + lines_per_message]) + "\r\n").encode())
    # At least ~1 MB per sendall.
    return head, cycle * max(1, (1 << 20) // len(cycle))


def chunk(payload: bytes) -> bytes:
    """One chunk of a chunked HTTP response."""
    return f"{len(payload):x}\r\n".encode() + payload + b"\r\n"


def stream(send, sub_id, items, lines_per_message, wrap=None):
    head, cycle = rows(sub_id, items, lines_per_message, wrap)
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
    if b"sec-websocket-key" not in headers:
        http_request(sock, request, headers, lines_per_message)
        return
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


# The HTTP session's stream: its send function once `bind_session` opened it.
http_stream = {"send": None}
http_stream_open = threading.Condition()


def http_request(sock, request, headers, lines_per_message):
    """One HTTP request (the client opens a connection for each): answered, then the
    connection closes, except the stream's."""
    head, _, body = request.partition(b"\r\n\r\n")
    length = int(headers.get(b"content-length", b"0"))
    while len(body) < length:
        more = sock.recv(4096)
        if not more:
            return
        body += more
    path = head.split(b" ")[1].decode()
    chunked = b"HTTP/1.1 200 OK\r\nContent-Type: text/enriched; charset=UTF-8\r\nTransfer-Encoding: chunked\r\n\r\n"
    if "bind_session" in path:
        lock = threading.Lock()

        def send(data):
            with lock:
                sock.sendall(data)

        send(chunked + chunk(b"CONOK,S1,50000,5000,*\r\n"))
        with http_stream_open:
            http_stream["send"] = send
            http_stream_open.notify_all()
        # The stream's rows go out from their own threads; this one only waits for the end.
        try:
            while sock.recv(4096):
                pass
        finally:
            with http_stream_open:
                if http_stream["send"] is send:
                    http_stream["send"] = None
        return
    if "create_session" in path:
        # A new session: its controls wait for its own stream.
        with http_stream_open:
            http_stream["send"] = None
        sock.sendall(chunked + chunk(b"CONOK,S1,50000,5000,*\r\nLOOP,0\r\n") + b"0\r\n\r\n")
        return
    answers = b""
    for line in body.decode().split("\r\n"):
        params = dict(urllib.parse.parse_qsl(line))
        if "LS_reqId" not in params:
            continue
        answers += f"REQOK,{params['LS_reqId']}\r\n".encode()
        if params.get("LS_op") == "add":
            with http_stream_open:
                http_stream_open.wait_for(lambda: http_stream["send"] is not None, timeout=10)
            send = http_stream["send"]
            if send is None:
                continue
            sub_id = int(params["LS_subId"])
            items = len(params.get("LS_group", "item1").split())
            fields = len(params.get("LS_schema", "").split())
            send(chunk(f"SUBOK,{sub_id},{items},{fields}\r\n".encode()))
            threading.Thread(target=stream, args=(send, sub_id, items, lines_per_message, chunk), daemon=True).start()
    sock.sendall(b"HTTP/1.1 200 OK\r\nContent-Type: text/enriched; charset=UTF-8\r\n"
                 + f"Content-Length: {len(answers)}\r\nConnection: close\r\n\r\n".encode() + answers)


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
