"""Shared by the Python test scripts: one 'ok'/'FAIL' line per check, and the failure count."""
failed = 0


def check(name, ok, detail=""):
    global failed
    failed += 0 if ok else 1
    detail = " | ".join(ln for ln in str(detail).splitlines() if ln.strip())  # one line per check, always
    print("%s %s%s" % ("ok  " if ok else "FAIL", name, (": " + detail) if detail else ""), flush=True)
    return ok


def check_brief(name, ok, detail=""):
    """check() that prints the evidence only when the check fails."""
    return check(name, ok, "" if ok else detail)


B64 = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"


def stream_line(text):
    """A live stream line (docs/stream.md): the text, '!', and its sum12 check as two base64 digits."""
    raw = text.encode()
    raw += b"\0" * (-len(raw) % 4)
    a = b = 0
    for i in range(0, len(raw), 4):
        a += int.from_bytes(raw[i:i + 4], "little")
        b += a
    c = (a + 3 * b) % 4095
    return "%s!%s%s\n" % (text, B64[c >> 6], B64[c & 63])


def tcp_server(parts, gap, hold=0):
    """A probe's SWO server on a free port of 127.0.0.1: one connection per part, closed `hold`
    seconds after it (the tool must keep its samples and retry), then it goes away for `gap` seconds."""
    import socket
    import threading
    import time
    srv = socket.socket()
    srv.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    srv.bind(("127.0.0.1", 0))
    port = srv.getsockname()[1]

    def serve():
        sock = srv
        for k, part in enumerate(parts):
            if k:
                time.sleep(gap)  # the device is gone for a while
                sock = socket.socket()
                sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
                sock.bind(("127.0.0.1", port))
            sock.listen(1)
            sock.settimeout(20)  # a tool that never connects does not keep this thread
            try:
                conn, _ = sock.accept()
                conn.sendall(part)
                time.sleep(hold)  # a live source that stays connected, as a port does
                conn.close()
            except OSError:
                pass
            sock.close()

    threading.Thread(target=serve, daemon=True).start()
    return port
