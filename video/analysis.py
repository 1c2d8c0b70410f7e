"""One stream's analysis, frame by frame: what a frame shows (:meth:`FrameAnalyser.observe`, the dear part, which may
run in an executor) and what follows from it over time (:meth:`FrameAnalyser.judge`, the stream's
:class:`video.checks.Monitor`).

The ingest (:mod:`video.ingest`) and the evaluation benchmark (``benchmarks/detectors.py``) both analyse frames
through this class, so that what is measured is what runs.

The models run about once a second (the face detector and the person segmentation together), and on every analysed
frame while something is changing: two faces or a new body in view, or nobody.  The frames between reuse what they
found; the cheap checks (covered, frozen, the background's change) run on every analysed frame.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from video.checks import BODY_MIN_SHARE, Box, FaceDetector, Finding, Frame, Monitor, Observation, Scene, observe
from video.segmentation import PersonSegmenter

SCENE_CALM = 0.2
"""The scene is taken only from a frame in which at most this share of the grid moved."""
SCENE_SETTLES_S = 8.0
"""A new body seen this long beside the player (with one face in view) becomes part of the scene."""


@dataclass
class FrameAnalyser:
    """The analysis of one stream.  ``observe`` keeps state between frames (the previous frame, the last faces and
    mask, the scene when the player was last seen), so one frame at a time per stream: the ingest analyses a
    stream's next frame only when the last one is done."""

    monitor: Monitor
    faces: FaceDetector | None = None
    people: PersonSegmenter | None = None
    face_interval_s: float = 0.9
    """The models run at least this long after their last run (about once a second at 2 analysed frames a second),
    unless the last frame found something changing."""
    last_small: NDArray[np.float32] | None = None
    last_faces: tuple[Box, ...] = ()
    last_mask: NDArray[np.float32] | None = None
    searched_at: float = float("-inf")
    scene: Scene | None = None
    """The stream when the player was last seen alone with their face in view."""
    body_since: float | None = None
    """Since when the models have seen a new body (:attr:`video.checks.Observation.new_body`)."""
    unsettled: bool = True
    """The last frame showed nobody, two faces or a new body: look again at once."""

    def observe(self, image: Frame, at: float, search: bool = False) -> Observation:
        """What the frame shows.  ``search``: run the models on this frame whatever the interval (a prompt's stills
        need its faces)."""
        due = search or self.unsettled or at - self.searched_at >= self.face_interval_s
        if due and self.people is not None:
            self.last_mask = self.people.segment(image)
        observation, small = observe(image, at, self.last_small, self.faces, None if due else self.last_faces,
                                     self.last_mask, self.scene)  # fmt: skip
        if due:
            self.last_faces, self.searched_at = observation.faces, at
            self.unsettled = len(observation.faces) != 1 or observation.new_body >= BODY_MIN_SHARE
            body = observation.new_body >= BODY_MIN_SHARE
            self.body_since = (self.body_since if self.body_since is not None else at) if body else None
            # A new body that stays beside the player this long is taken into the scene (a player whose pose
            # changed for good, or a finding raised long since): the comparison must not go stale.
            settled = self.body_since is not None and at - self.body_since >= SCENE_SETTLES_S
            # Nor is the scene taken while the player is moving a lot (bending down, getting up) or with the face at
            # the frame's edge: it is what the player looks like sitting at the board.
            calm = observation.moving is not None and observation.moving <= SCENE_CALM
            whole = all(not f.touches_edge(observation.width, observation.height) for f in observation.faces)
            alone = len(observation.faces) == 1 and (not body or settled) and calm and whole
            lit = observation.contrast >= self.monitor.thresholds.flat_contrast
            if alone and lit and self.last_mask is not None and self.last_mask.shape == small.shape:
                self.scene = Scene(small, self.last_mask > 0.5, at)
        self.last_small = small
        return observation

    def judge(self, observation: Observation) -> list[Finding]:
        """The findings that start or end with this observation (on the event loop, in time order)."""
        return self.monitor.feed(observation)

    def analyse(self, image: Frame, at: float) -> list[Finding]:
        """Both at once (offline replays)."""
        return self.judge(self.observe(image, at))
