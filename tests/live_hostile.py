#!/usr/bin/python3
"""Throws malformed and hostile requests at a running `aerodem run --live` server on 127.0.0.1:PORT
and checks what it answers: no file outside the page is ever served, bad methods, hosts, sizes and
rates are refused, many connections at once do not stop it, and it still serves the page and the
run's frames afterwards. Every request goes to 127.0.0.1 only; every loop is bounded.

Usage: live_hostile.py PORT. Prints each check; exits 1 at the first that fails."""
import json
import socket
import sys
import time

PORT = int(sys.argv[1])
HOST = "127.0.0.1"
checks = 0


def ok(what):
    global checks
    checks += 1
    print(f"ok   {what}", flush=True)


def fail(what):
    print(f"FAIL {what}", flush=True)
    sys.exit(1)


def exchange(raw, timeout=3.0, retry=False):
    """Sends raw bytes on a fresh connection; returns (status or None when the server closed without
    an answer, the whole response). With retry, a connection closed before any byte came back is
    tried again for up to 5 s: the server counts a closed connection of this address until its
    listening thread has cleaned it up, which a loaded machine may delay, and refuses past 32."""
    end = time.time() + 5
    while True:
        st, data = exchange_once(raw, timeout)
        if data or not retry or time.time() > end:
            return st, data
        time.sleep(0.1)


def exchange_once(raw, timeout):
    s = socket.create_connection((HOST, PORT), timeout=timeout)
    try:
        try:
            s.sendall(raw)
        except OSError:
            pass  # the server may close while a huge request is still being sent
        data = b""
        try:
            while len(data) < 4 << 20:
                chunk = s.recv(65536)
                if not chunk:
                    break
                data += chunk
        except (socket.timeout, ConnectionResetError):
            pass
    finally:
        s.close()
    if not data.startswith(b"HTTP/1."):
        return None, data
    try:
        return int(data.split(b" ", 2)[1]), data
    except (IndexError, ValueError):
        return None, data


def get(path, host=f"127.0.0.1:{PORT}", extra=b""):
    req = b"GET " + path + b" HTTP/1.1\r\nHost: " + host.encode() + b"\r\n" + extra + b"Connection: close\r\n\r\n"
    return exchange(req, retry=True)


def body_of(resp):
    return resp.split(b"\r\n\r\n", 1)[1] if b"\r\n\r\n" in resp else b""


def wait_for_frame(seconds=60):
    end = time.time() + seconds
    while time.time() < end:
        st, resp = get(b"/api/frame")
        if st == 200:
            f = json.loads(body_of(resp))
            if not f.get("waiting"):
                return f
        time.sleep(0.2)
    fail(f"no frame within {seconds} s")


# 0. the page and a frame, before anything else
st, resp = get(b"/")
if st != 200 or b"<title>aerodem live</title>" not in resp:
    fail(f"GET / answered {st}")
first = wait_for_frame()
ok(f"the page and frame {first['version']} (step {first['progress']['step']}) are served")

# 1. nothing outside the page: traversals, encodings, absolute forms
paths = [b"/../../../../etc/passwd", b"/%2e%2e/%2e%2e/%2e%2e/etc/passwd", b"/..%2f..%2f..%2fetc%2fpasswd",
         b"//etc/passwd", b"/etc/passwd", b"/index.html/../../../etc/passwd", b"/api/frame/../../../etc/passwd",
         b"/..\\..\\..\\etc\\passwd", b"/live.js%00.html", b"/%252e%252e/etc/passwd", b"/.", b"/..",
         b"/CMakeLists.txt", b"/app/live/index.html", b"/proc/self/environ", b"http://127.0.0.1/etc/passwd",
         b"*", b"/index.html?../../etc/passwd#x"]
for p in paths:
    st, resp = get(p)
    if b"root:" in resp or b"PATH=" in resp or b"cmake_minimum_required" in resp:
        fail(f"GET {p!r} served a file outside the page")
    allowed = (400, 404) if not p.startswith(b"/index.html?") else (200,)
    if st is not None and st not in allowed:
        fail(f"GET {p!r} answered {st}, expected one of {allowed} or a closed connection")
ok(f"{len(paths)} traversal and encoding tricks: 404, 400 or closed, never a file outside the page")

# 2. a foreign Host (DNS rebinding) and methods other than GET and HEAD
st, _ = get(b"/api/frame", host="attacker.example")
if st != 403:
    fail(f"Host: attacker.example answered {st}, expected 403")
for m in [b"POST", b"PUT", b"DELETE", b"TRACE", b"OPTIONS", b"FOO"]:
    st, _ = exchange(m + b" /api/frame HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 5\r\n\r\nhello")
    if st not in (405, 400, None):
        fail(f"{m.decode()} answered {st}, expected 405")
st, _ = exchange(b"POST / HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 4000000\r\n\r\n" + b"x" * 4000000)
if st not in (405, 413, None):
    fail(f"a POST of 4 MB answered {st}")
st, resp = exchange(b"HEAD / HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n", retry=True)
if st != 200 or body_of(resp):
    fail(f"HEAD / answered {st} with {len(body_of(resp))} bytes of body")
ok("a foreign Host: 403; POST, PUT, DELETE, TRACE, OPTIONS, FOO and a 4 MB body: refused; HEAD: no body")

# 3. sizes: a long URL, huge headers, thousands of headers, garbage, HTTP/0.9, bad queries
tests = [("a URL of 200 kB", b"GET /" + b"a" * 200000 + b" HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n"),
         ("a header of 200 kB", b"GET / HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Big: " + b"b" * 200000 + b"\r\n\r\n"),
         ("5000 headers", b"GET / HTTP/1.1\r\nHost: 127.0.0.1\r\n" + b"X-A: 1\r\n" * 5000 + b"\r\n"),
         ("binary garbage", bytes(range(256)) * 40 + b"\r\n\r\n"),
         ("HTTP/0.9", b"GET /\r\n\r\n"),
         ("HTTP/7.0", b"GET / HTTP/7.0\r\nHost: 127.0.0.1\r\n\r\n"),
         ("no Host in HTTP/1.1", b"GET / HTTP/1.1\r\n\r\n")]
for what, raw in tests:
    st, _ = exchange(raw)
    if st is not None and st < 400:
        fail(f"{what}: answered {st}, expected an error or a closed connection")
for q in [b"/api/frame?after=abc", b"/api/frame?after=99999999999999999999999999", b"/api/frame?after=-1",
          b"/api/frame?wait=7", b"/api/frame?after=1&wait=x"]:
    st, _ = get(q)
    if st != 400:
        fail(f"GET {q!r} answered {st}, expected 400")
ok("long URLs, huge or many headers, garbage, HTTP/0.9 and 7.0, no Host, bad queries: errors, no crash")

# 4. many connections at once, idle, then all closed
held = []
for k in range(200):
    try:
        s = socket.create_connection((HOST, PORT), timeout=2)
        held.append(s)
    except OSError:
        break
time.sleep(1.0)
for s in held:
    s.close()
t0 = time.time()
st = None
while st != 200 and time.time() - t0 < 5:  # each connection's thread sees its close and ends
    time.sleep(0.1)
    try:
        st, _ = get(b"/")
    except OSError:
        st = None
if st != 200:
    fail(f"5 s after 200 idle connections closed, GET / answered {st}")
ok(f"{len(held)} connections opened at once and held idle; {time.time() - t0:.1f} s after they closed the page "
   "is served")

# 5. viewers waiting for a frame that never comes (after the last one) hold only their own threads. (The
# server counts a closed connection until its listening thread has cleaned it up, which a loaded machine
# may delay: 20 waiters stay well below the 32 connections of one address.)
time.sleep(1.0)
waiters = []
for k in range(20):
    w = socket.create_connection((HOST, PORT), timeout=5)
    w.sendall(b"GET /api/frame?after=100000000000000000&wait=1 HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n")
    waiters.append(w)
t0 = time.time()
st, _ = get(b"/live.css")
quick = time.time() - t0
if st != 200 or quick > 0.5:
    fail(f"with 20 viewers waiting, GET /live.css answered {st} in {quick:.2f} s")
answers = []
for w in waiters:
    data = b""
    try:
        while True:
            chunk = w.recv(4096)
            if not chunk:
                break
            data += chunk
    except socket.timeout:
        pass
    w.close()
    answers.append(data.split(b" ", 2)[1] if data.startswith(b"HTTP/1.1 ") else b"none")
waited = time.time() - t0
if any(a != b"204" for a in answers) or not 0.8 < waited < 4.0:
    fail(f"20 waiting viewers got {set(answers)} after {waited:.2f} s, expected 204 after about 1 s")
ok(f"20 viewers waiting at once: the page still served in {quick * 1000:.0f} ms; each answered 204 after {waited:.1f} s")
time.sleep(2.5)  # the bucket refills

# 6. the rate: requests past the bucket get 429, and the server recovers
codes = {}


def burst_connection():
    """A connection the server answers (one it refused while still counting closed ones is tried again)."""
    end = time.time() + 10
    while time.time() < end:
        s = socket.create_connection((HOST, PORT), timeout=3)
        f = s.makefile("rb")
        try:
            s.sendall(b"GET /live.css HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
            line = f.readline()
        except OSError:
            line = b""
        if line:
            return s, f, line
        s.close()
        time.sleep(0.2)
    fail("no connection answered for 10 s")


s, f, line = burst_connection()
for k in range(300):
    if k:
        s.sendall(b"GET /live.css HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
        line = f.readline()
    if not line:
        break
    st = int(line.split(b" ", 2)[1])
    codes[st] = codes.get(st, 0) + 1
    length = 0
    while True:
        h = f.readline()
        if h in (b"\r\n", b""):
            break
        if h.lower().startswith(b"content-length:"):
            length = int(h.split(b":")[1])
    f.read(length)
s.close()
if not codes.get(429):
    fail(f"300 requests in a burst were all answered: {codes}")
time.sleep(2.5)
st, _ = get(b"/")
if st != 200:
    fail(f"after the burst GET / answered {st}")
ok(f"a burst of 300 requests: {codes.get(200, 0)} served, {codes.get(429, 0)} refused with 429; then served again")

# 7. still the run's frames, newer than the first
last = wait_for_frame()
if last["version"] <= first["version"] or last["progress"]["step"] <= first["progress"]["step"]:
    fail(f"the frames did not move on: version {first['version']} -> {last['version']}")
ok(f"the run goes on: frame {last['version']} at step {last['progress']['step']}")
print(f"{checks} passed, 0 failed")
