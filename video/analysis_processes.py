"""The camera analysis in processes of its own, beside the ingest's event loop (``analysis_processes``).

Why: one Python process has one interpreter lock.  With the analysis in the ingest's threads, py-spy on
``benchmarks/streams.py`` at 24 streams at 5 fps found the event loop never idle while it used 20 % of a CPU: the
rest of its time it waited for the lock, held by the analysis threads' Python and numpy between the models' calls,
and the streams' analysed frames fell to 0.7 a second of 2 (half the machine's CPU unused).  The models themselves
release the lock; the cheap checks around them cannot.

So each analysis process holds the :class:`video.analysis.FrameAnalyser` of the streams given to it (their state
goes from frame to frame, so a stream stays with its process) and its own models.  The ingest sends each analysed
frame's ``yuv420p`` planes over a pipe (460 kB at 640x480, half the converted picture; converted there as the
ingest's threads convert them, :func:`video.conversion.picture`) and gets back what it shows
(:class:`video.checks.Observation`) and its small JPEG; the findings are judged on the event loop as before
(:class:`video.checks.Monitor`), so a stream's findings and timeline do not depend on where it was analysed.

Each process has one thread in the ingest that talks to it: requests to one process are answered in order, one at a
time.  A process that dies (a model's native crash, the out-of-memory killer) is started again for the next frame
its streams send; their analysis starts afresh (the analyser's state is lost, the findings' is not: it is the
monitor's).  A frame whose process died while analysing it is not analysed (:class:`AnalysisUnavailableError`,
logged by the ingest).
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import logging
import multiprocessing
import os
import threading
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from multiprocessing.connection import Connection
from pathlib import Path
from typing import Any

import cv2
import numpy as np
from av import VideoFrame

from video.analysis import FrameAnalyser
from video.checks import Monitor, Observation, Thresholds
from video.conversion import at_analysis_size, from_planes, pixels, planes, small_jpeg, to_jpeg
from video.detectors import available_detector
from video.errors import VideoError
from video.reference_view import ReferenceView, ViewComparison, compare_view
from video.segmentation import available_segmenter

log = logging.getLogger(__name__)

SPAWN = multiprocessing.get_context("spawn")
"""Spawned, not forked: the ingest's process runs threads (aiortc's decoders, the executor) that a fork would copy
mid-flight."""
NICENESS = 10
"""The analysis processes yield the CPU to the ingest's event loop: receiving (packets, jitter buffers, RTCP) must
keep up whatever the analysis costs; the analysis takes what is left, and says when it falls behind
(``analysis-degraded``)."""
READY_TIMEOUT_S = 120.0
"""How long a new process may take to import and load its models."""


class AnalysisUnavailableError(VideoError):
    """The frame could not be analysed: its analysis process died (it is started again for the next frame)."""


@dataclass(frozen=True, slots=True)
class Looked:
    """What an analysis process found in one frame."""

    observation: Observation
    small: bytes
    """The frame as a small JPEG (the desk's thumbnail, the clips)."""
    still: bytes | None
    """The whole frame as a JPEG, when asked for (a prompt's stills)."""
    searched: bool = False
    """Whether the models ran on this frame (their schedule: :class:`video.analysis.FrameAnalyser`)."""
    view: ViewComparison | None = None
    """How the frame compares with the approved view it was sent with (the side camera's), if any."""


# --- In the analysis process ----------------------------------------------------------------------------------------


def serve(connection: Connection, models_dir: str | None, opencv_threads: int) -> None:
    """An analysis process's life: load the models, then answer the ingest's requests until it hangs up."""
    os.nice(NICENESS)
    cv2.setNumThreads(opencv_threads)
    folder = Path(models_dir) if models_dir is not None else None
    faces, faces_note = available_detector(folder)
    people, people_note = available_segmenter(folder)
    connection.send(("ready", f"{faces_note}; {people_note}"))
    analysers: dict[str, FrameAnalyser] = {}
    while True:
        try:
            message = connection.recv()
        except (EOFError, OSError):
            return
        kind = message[0]
        if kind == "open":
            _, stream, thresholds, face_interval_s, still_interval_s, rate = message
            analysers[stream] = FrameAnalyser(Monitor(thresholds), faces, people, face_interval_s, still_interval_s,
                                              rate)  # fmt: skip
        elif kind == "forget":
            analysers.pop(message[1], None)
        elif kind == "look":
            _, stream, at, search, still, shape, layout, reference = message
            data = np.frombuffer(connection.recv_bytes(), dtype=np.uint8).reshape(shape)
            try:
                image = at_analysis_size(from_planes(data) if layout == "yuv420p" else data)
                analyser = analysers[stream]
                searches = analyser.searches
                observation = analyser.observe(image, at, search)
                view = compare_view(reference, image) if reference is not None else None
                connection.send(("ok", observation, small_jpeg(image), to_jpeg(image) if still else None,
                                 analyser.searches > searches, view))  # fmt: skip
            except Exception as error:  # one bad frame must not end the process
                log.exception("analysing a frame failed")
                connection.send(("error", f"{type(error).__name__}: {error}"))
        elif kind == "stop":
            return


# --- In the ingest's process ----------------------------------------------------------------------------------------


@dataclass
class AnalysisProcess:
    """One analysis process, and the one thread of the ingest that talks to it."""

    index: int
    models_dir: str | None
    opencv_threads: int
    thread: ThreadPoolExecutor = field(init=False)
    process: Any = None
    connection: Connection | None = None
    streams: dict[str, tuple[Any, ...]] = field(default_factory=dict)
    """Each stream given to this process, with its ``open`` message (sent again after a restart)."""
    note: str = ""
    """Which models the process loaded."""
    restarts: int = 0

    def __post_init__(self) -> None:
        self.thread = ThreadPoolExecutor(1, f"proctor-analysis-{self.index}")

    # Everything below runs on :attr:`thread`, one call at a time.

    def launch(self) -> None:
        """Start the process and wait until its models are loaded."""
        ours, theirs = SPAWN.Pipe()
        process = SPAWN.Process(target=serve, args=(theirs, self.models_dir, self.opencv_threads),
                                name=f"proctor-analysis-{self.index}", daemon=True)  # fmt: skip
        process.start()
        theirs.close()
        if not ours.poll(READY_TIMEOUT_S):
            process.kill()
            raise AnalysisUnavailableError(f"analysis process {self.index} did not start within {READY_TIMEOUT_S:g} s")
        _, self.note = ours.recv()
        self.process, self.connection = process, ours
        for message in self.streams.values():
            ours.send(message)

    def _alive(self) -> Connection:
        if self.connection is None or self.process is None or not self.process.is_alive():
            if self.process is not None:
                self.restarts += 1
                log.warning("analysis process %d ended (exit code %s): started again; its %d streams' analysis "
                            "starts afresh", self.index, self.process.exitcode, len(self.streams))  # fmt: skip
                self._drop()
            self.launch()
        assert self.connection is not None
        return self.connection

    def _drop(self) -> None:
        if self.connection is not None:
            self.connection.close()
        if self.process is not None and self.process.is_alive():
            self.process.kill()
        if self.process is not None:
            self.process.join(5)
        self.process, self.connection = None, None

    def open(self, stream: str, message: tuple[Any, ...]) -> None:
        self.streams[stream] = message
        try:
            self._alive().send(message)
        except (OSError, EOFError, AnalysisUnavailableError) as error:  # sent again when it is started again
            log.warning("analysis process %d: %s", self.index, error)

    def forget(self, stream: str) -> None:
        self.streams.pop(stream, None)
        if self.connection is not None:
            with contextlib.suppress(OSError, EOFError):
                self.connection.send(("forget", stream))

    def look(self, stream: str, frame: VideoFrame, at: float, search: bool, still: bool,
             reference: ReferenceView | None = None) -> Looked:  # fmt: skip
        data, layout = planes(frame), "yuv420p"
        if data is None:  # not the decoders' usual layout: sent converted
            data, layout = pixels(frame), "bgr24"
        try:
            connection = self._alive()
            connection.send(("look", stream, at, search, still, data.shape, layout, reference))
            connection.send_bytes(np.ascontiguousarray(data).data.cast("B"))
            answer = connection.recv()
        except (OSError, EOFError) as error:
            self._drop()
            raise AnalysisUnavailableError(f"analysis process {self.index} ended: {error}") from None
        if answer[0] != "ok":
            raise AnalysisUnavailableError(f"analysis process {self.index}: {answer[1]}")
        return Looked(answer[1], answer[2], answer[3], answer[4], answer[5])

    def stop(self) -> None:
        if self.connection is not None:
            with contextlib.suppress(OSError, EOFError):
                self.connection.send(("stop",))
        if self.process is not None:
            self.process.join(5)
        self._drop()


@dataclass(frozen=True, slots=True)
class AnalysisSlot:
    """One stream's place in an analysis process."""

    owner: AnalysisProcess
    stream: str

    async def look(self, frame: VideoFrame, at: float, search: bool, still: bool,
                   reference: ReferenceView | None = None) -> Looked:  # fmt: skip
        """What the frame shows (``search``: the models look at it whatever their schedule; ``still``: its whole
        picture as a JPEG too; ``reference``: compared with this approved view too).  AnalysisUnavailableError when
        the process died meanwhile."""
        return await asyncio.get_running_loop().run_in_executor(
            self.owner.thread, self.owner.look, self.stream, frame, at, search, still, reference
        )

    def close(self) -> None:
        self.owner.thread.submit(self.owner.forget, self.stream)


class AnalysisProcesses:
    """The ingest's analysis processes; each stream is given to the one with the fewest streams."""

    def __init__(self, count: int, models_dir: Path | None, opencv_threads: int = 1) -> None:
        if count < 1:
            raise ValueError("analysis processes: at least 1")
        folder = str(models_dir) if models_dir is not None else None
        self.processes = [AnalysisProcess(index, folder, opencv_threads) for index in range(count)]
        self._ids = itertools.count(1)
        self._lock = threading.Lock()

    def start(self, wait: bool = True) -> None:
        """Start every process (in parallel: each loads its models); ``wait``: until they are ready (else a stream's
        first frame waits for its process, on that process's thread, and a process that cannot start is started
        again for the next)."""
        futures = [process.thread.submit(process.launch) for process in self.processes]
        if wait:
            for future in futures:
                future.result()
            log.info("analysis: %d processes (%s)", len(self.processes), self.processes[0].note)

    def slot(self, thresholds: Thresholds, face_interval_s: float, still_interval_s: float,
             rate: float) -> AnalysisSlot:  # fmt: skip
        """A new stream's analysis, in the process with the fewest streams (``rate``: the analysed frames a second
        it is meant to get, :class:`video.analysis.FrameAnalyser`'s)."""
        with self._lock:
            owner = min(self.processes, key=lambda process: len(process.streams))
            stream = f"{os.getpid()}-{next(self._ids)}"
            message = ("open", stream, thresholds, face_interval_s, still_interval_s, rate)
            owner.streams[stream] = message  # counted at once, so that the next stream goes elsewhere
        owner.thread.submit(owner.open, stream, message)
        return AnalysisSlot(owner, stream)

    def close(self) -> None:
        for process in self.processes:
            process.thread.submit(process.stop).result()
            process.thread.shutdown()
