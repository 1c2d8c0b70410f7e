"""One decoded frame converted from two threads at once, as the analysis and the microphone's look at the mouth do
with the frame aiortc's relay hands both: through :func:`video.conversion.pixels` it is safe.  PyAV's own
``to_ndarray`` crashes the process there (a segmentation fault), so the threads run in a child process, whose exit
the test reads."""

from __future__ import annotations

import subprocess
import sys

import numpy as np
from av import VideoFrame

from video.conversion import at_analysis_size, camera_picture

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


def test_a_half_size_camera_picture_is_analysed_at_the_checks_size_and_a_larger_one_as_it_came() -> None:
    """The distributed mode's low simulcast layer (320x240) reaches the checks at 640x480, the size they are
    measured on; 640x480 and 1280x720 pass untouched."""
    rng = np.random.default_rng(2)
    low = rng.integers(0, 255, (240, 320, 3), dtype=np.uint8)
    scaled = at_analysis_size(low)
    assert scaled.shape == (480, 640, 3) and scaled.dtype == np.uint8
    assert abs(float(scaled.mean()) - float(low.mean())) < 1.0  # the same picture, larger
    for shape in ((480, 640, 3), (720, 1280, 3)):
        image = rng.integers(0, 255, shape, dtype=np.uint8)
        assert at_analysis_size(image) is image
    frame = VideoFrame.from_ndarray(low, format="bgr24").reformat(format="yuv420p")
    assert camera_picture(frame).shape == (480, 640, 3)
