#!/usr/bin/python3
"""Waits for a frame of a running `aerodem ... --live` on 127.0.0.1:PORT whose run label holds TEXT and
prints `version step label history_rows`. Usage: live_fetch.py PORT TEXT [SECONDS]. Exits 1 when none comes."""
import json
import sys
import time
import urllib.request

port, text = int(sys.argv[1]), sys.argv[2]
end = time.time() + float(sys.argv[3] if len(sys.argv) > 3 else 60)
while time.time() < end:
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/api/frame", timeout=5) as r:
            f = json.loads(r.read())
        if not f.get("waiting") and text in f["run"]["label"]:
            assert f["discs"]["n"] > 0 and f["fields"]["nx"] > 0, "a frame without discs or fields"
            print(f["version"], f["progress"]["step"], f["run"]["label"], len(f["history"]["time"]))
            sys.exit(0)
    except OSError:
        pass
    time.sleep(0.1)
print(f"no frame of a run labelled '{text}' on port {port}")
sys.exit(1)
