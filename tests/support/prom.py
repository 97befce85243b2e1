"""Helpers of the tests that run a real Prometheus against fabscope on loopback: a free port, an
HTTP GET, an instant query through the HTTP API, and a bounded wait."""
import json
import socket
import time
import urllib.parse
import urllib.request


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def get(url, timeout=5):
    with urllib.request.urlopen(url, timeout=timeout) as r:
        return r.status, r.read().decode()


def query(prom, expr):
    _, body = get(f"http://127.0.0.1:{prom}/api/v1/query?" + urllib.parse.urlencode({"query": expr}))
    reply = json.loads(body)
    assert reply["status"] == "success", reply
    return reply["data"]["result"]


def wait_for(what, fn, deadline):
    last = None
    while time.monotonic() < deadline:
        try:
            got = fn()
            if got:
                return got
        except Exception as e:  # not up yet
            last = e
        time.sleep(0.2)
    raise AssertionError(f"timed out waiting for {what} (last error: {last})")
