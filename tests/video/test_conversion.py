"""One decoded frame converted from two threads at once, as the analysis and the microphone's look at the mouth do
with the frame aiortc's relay hands both: through :func:`video.conversion.pixels` it is safe.  PyAV's own
``to_ndarray`` crashes the process there (a segmentation fault), so the threads run in a child process, whose exit
the test reads."""

from __future__ import annotations

import subprocess
import sys

SCRIPT = """
import threading
import numpy as np
from av import VideoFrame
from video.conversion import pixels

picture = np.random.default_rng(1).integers(0, 255, (480, 640, 3), dtype=np.uint8)
frame = VideoFrame.from_ndarray(picture, format="bgr24").reformat(format="yuv420p")
done = []

def convert(fmt):
    for _ in range(1500):
        image = pixels(frame, fmt)
    done.append(image.shape)

threads = [threading.Thread(target=convert, args=(fmt,)) for fmt in ("bgr24", "rgb24", "gray")]
for thread in threads:
    thread.start()
for thread in threads:
    thread.join()
print(sorted(done))
"""


def test_one_frame_converted_from_three_threads_at_once_neither_crashes_nor_hangs() -> None:
    run = subprocess.run([sys.executable, "-c", SCRIPT], capture_output=True, text=True, timeout=60, check=False)
    assert run.returncode == 0, (run.returncode, run.stderr[-2000:])
    assert run.stdout.strip() == "[(480, 640), (480, 640, 3), (480, 640, 3)]"
