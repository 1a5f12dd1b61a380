#!/usr/bin/env python3
"""A viewer of `aerodem ... --live` that asks as the page does (the next frame, waiting up to 1 s) for
SECONDS and prints what it got: frames, their size, the time from asking to a frame. For the cost of
the live view on a run (bench/gpu_session.sh live). Usage: live_viewer.py PORT SECONDS."""
import json
import sys
import time
import urllib.request

port, seconds = int(sys.argv[1]), float(sys.argv[2])
after, frames, size, waits, steps, cost = 0, 0, 0, [], [], []
end = time.time() + seconds
while time.time() < end:
    t0 = time.time()
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/api/frame?after={after}&wait=1", timeout=5) as r:
            body = r.read() if r.status == 200 else b""
    except OSError:
        break
    if body:
        f = json.loads(body)
        if not f.get("waiting"):
            after = f["version"]
            frames += 1
            size += len(body)
            waits.append(time.time() - t0)
            steps.append(f["progress"]["step"])
            if f["progress"]["frame_ms"] is not None:
                cost.append(f["progress"]["frame_ms"])
    time.sleep(max(0.0, 0.25 - (time.time() - t0)))
mean_kb = size / frames / 1e3 if frames else 0
print(f"viewer: {frames} frames in {seconds:.0f} s, {mean_kb:.0f} kB each, "
      f"{1e3 * sum(waits) / max(1, len(waits)):.0f} ms from asking to a frame, steps {steps[:1]}..{steps[-1:]}, "
      f"a frame cost the run {sum(cost) / max(1, len(cost)):.1f} ms (mean of {len(cost)})")
