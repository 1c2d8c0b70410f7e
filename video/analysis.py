"""One stream's analysis, frame by frame: what a frame shows (:meth:`FrameAnalyser.observe`, the dear part, which may
run in an executor) and what follows from it over time (:meth:`FrameAnalyser.judge`, the stream's
:class:`video.checks.Monitor`).

The ingest (:mod:`video.ingest`) and the evaluation benchmark (``benchmarks/detectors.py``) both analyse frames
through this class, so that what is measured is what runs.

The models (the face detector and the person segmentation together) run about once a second while anything moves
outside the player, every few seconds while nothing does (the player at the board in a still room: who is in view
cannot have changed), and on every analysed frame while something is changing: two faces or a new body in view,
nobody, or the player's face moving fast.  The frames between reuse what they found; the cheap checks (covered,
frozen, the background's change) run on every analysed frame.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np
from numpy.typing import NDArray

from video.checks import (
    BODY_MIN_SHARE,
    MOVING_LEVEL,
    Bands,
    Box,
    FaceDetector,
    Finding,
    Frame,
    Halo,
    Monitor,
    Observation,
    Scene,
    detail_bands,
    edge_halo,
    grey_grid,
    observe,
)
from video.segmentation import PersonSegmenter

SCENE_CALM = 0.2
"""The scene is taken only from a frame in which at most this share of the grid moved."""
SCENE_SETTLES_S = 8.0
"""A new body seen this long beside the player (with one face in view) becomes part of the scene."""
SCENE_STEADY = 0.8
"""...and only when the person's mask overlaps the one the models found before by this much (intersection over
union): a player sitting back up, or coming back in, is marked in part at first, and a scene taken then would make
the rest of the player a new body."""
FACE_MOVING = 0.4
"""At least this share of the last face's cells changing by :data:`FACE_MOVING_LEVEL`: the face is moving fast (or
gone from where it was), and the models look at this frame..."""
FACE_MOVING_LEVEL = 24.0
"""...grey levels on the grid.  A seated player's sway changes most of the face's cells by a few levels (through
VP8, half of them by 4, a quarter by 12: the models would look again at every frame) but few by this much (the
median 0.1, nine frames in ten under 0.25); a face getting up or going down changes most of them (0.6 and up)
where it stands out from the room..."""
FACE_GONE_CORRELATION = 0.35
"""...or the face's cells now correlating with themselves before by less than this (a seated player's sway, 0.57 and
up through VP8 at 200 kbit/s in a dim room; the face gone down from where it was, 0.2)..."""
FACE_GONE_CHANGE = 0.8
"""...while changing on average by at least this many times the face's own contrast (its cells' standard deviation:
sway 0.1-0.6, the face gone 1.2)."""
BENT_DOWN_DROP = 0.3
"""The player went out through the frame's bottom when their face was last seen at least this many face heights
lower than when the scene was taken, and lower more than sideways (someone who gets up rises and walks out by a
side)..."""
VANISHED_NEAR = 0.25
"""...or when the face, seen at most :data:`VANISHED_WITHIN_S` before, was within this many face heights of where
it sat sideways and not higher by as much (where it sat, or lower), and the person went with it: a player going
down over the board drops out of the picture between two analysed frames (half a second), while someone leaving
rises, turns and walks to a side for a second or two and is seen on the way (measured on the set: 0.7-1.0 face
heights aside at the last face of a walk-out)..."""
VANISHED_WITHIN_S = 2.5
"""...so the face cannot have been lost long before (a player turned away for longer, kept present by the person
mask, who then gets up and leaves, is gone).  Going down, the region the player filled can still look as it did
for a second or so (:attr:`video.checks.Observation.player_seen`): measured 1.5 s over the set's moving room."""

BENT_STILL = 0.004
"""Nothing moved where the player sat: below this share of the cells in their columns changed by
:data:`video.checks.MOVING_LEVEL` since the last analysed frame..."""
BENT_STILL_FRAMES = 3
"""...in this many analysed frames in a row (1.5 s): the player presumed bent down is gone.  Measured on the set's
6-minute streams, a player bent down or over the board moved there in 99 % of the frames (5th percentile 0.05 of
the cells) and never stood still two frames in a row; an empty room after the player walked out was still in 43 %
of them (the set's clips with a walk-out between two analysed frames, the face last seen where it sat:
``browser-leaves-003-building`` through Chromium was counted bent down for 30 s and never found)."""

BANDS_INTERVAL_S = 0.9
"""The blur check's detail bands (and its edge halo) are measured at least this often (every other analysed frame at
2 a second), and whenever the models run.  On the evaluation set's 10 blurred-background clips the same were raised
as with the bands measured on every frame, 2 of them one analysed frame (0.6 s) later; measured only when the models
ran (every 2.4 s while nothing moves), 4 of them up to 2 s later."""

STILL_OUTSIDE = 0.008
"""At most this share of the grid's cells outside the player (the box around their mask, grown by a margin) moving by
:data:`video.checks.MOVING_LEVEL` since the previous analysed frame: nothing moved in the room, and the models may
wait :attr:`FrameAnalyser.still_interval_s`.  Someone coming into view, passing behind, or the light changing moves
far more (a head at the back of the room is about 1 % of the grid); the encoder's noise at 120 kbit/s far less."""
STILL_MARGIN = 4
"""Cells the box around the player's mask is grown by for :data:`STILL_OUTSIDE` (their sway, and the mask's own
wander; the box, not the mask itself: a segmentation that misses a shoulder would have it sway "outside")."""


BEHIND_SKIP = 1
"""When the analysis is behind (:data:`BEHIND_GAP`), the interval and a moving face would run the models on every
analysed frame, and a face swaying a little moves as far between two frames a second apart as one getting up does
between two half a second apart: the models would cost the more, the further behind the analysis is, and the
overload would feed itself (streams.py at 24 streams: the models on 42 % of the frames on time, 55 % behind, 68 %
far behind).  Then they wait at least this many analysed frames after a run, unless nobody or two faces are in view
or a prompt asks (``search``).  On time (frames 0.5 s apart at 2 a second) nothing changes."""
BEHIND_GAP = 1.5
"""The analysis is behind when its frames come as far apart as the models' own interval
(:attr:`FrameAnalyser.face_interval_s`) and this many times as far as the ingest's rate asks
(:attr:`FrameAnalyser.rate`): the machine is overloaded (a rate of 1 a second set by the operator is not)."""


def _around(mask: NDArray[np.bool_], margin: int) -> NDArray[np.bool_]:
    """The box around ``mask``'s cells, grown by ``margin`` cells (empty if the mask is)."""
    box = np.zeros_like(mask)
    rows, cols = np.nonzero(mask)
    if rows.size:
        box[
            max(0, rows.min() - margin) : rows.max() + margin + 1, max(0, cols.min() - margin) : cols.max() + margin + 1
        ] = True
    return box


def _overlap(a: NDArray[np.bool_], b: NDArray[np.bool_]) -> float:
    union = int((a | b).sum())
    return int((a & b).sum()) / union if union else 0.0


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
    still_interval_s: float = 2.4
    """...and at least this long while nothing moved outside the player since their last run."""
    rate: float = 2.0
    """The analysed frames a second the ingest aims at (:data:`BEHIND_SKIP`)."""
    last_small: NDArray[np.float32] | None = None
    last_faces: tuple[Box, ...] = ()
    last_mask: NDArray[np.float32] | None = None
    last_bands: Bands | None = None
    """The picture's detail bands (the blur check's, :func:`video.checks.detail_bands`: four Gaussian blurs, among
    the dearest of the cheap checks), measured when the models run and at least every :data:`BANDS_INTERVAL_S`, and
    reused between (the blur check is judged over seconds)..."""
    bands_at: float = float("-inf")
    """...and when they were measured (the edge halo, :func:`video.checks.edge_halo`, with them)."""
    last_halo: Halo | None = None
    searched_at: float = float("-inf")
    scene: Scene | None = None
    """The stream when the player was last seen alone with their face in view."""
    body_since: float | None = None
    """Since when the models have seen a new body (:attr:`video.checks.Observation.new_body`)."""
    unsettled: bool = True
    """The last frame showed nobody, two faces or a new body: look again at once."""
    stirred: bool = True
    """Something moved outside the player since the models last ran: they run at :attr:`face_interval_s`."""
    frames: int = 0
    searches: int = 0
    """Analysed frames, and how many of them the models ran on (the analysis's cost: the benchmarks print it)."""
    skipped: int = 0
    """Analysed frames since the models last ran."""
    last_at: float = float("-inf")
    """When the last analysed frame was taken (how far apart they come: :data:`BEHIND_SKIP`)."""
    rest_face: Box | None = None
    """The player's face when the scene was taken..."""
    last_face: Box | None = None
    """...and when a face was last found (one face in view)..."""
    last_face_at: float = float("-inf")
    """...and when..."""
    bent_down_at: float | None = None
    """...and since when the player is out of the picture having gone out through its bottom (bent down to the
    floor, or over the board): present for :attr:`video.checks.Thresholds.bent_down_s`..."""
    still_frames: int = 0
    """...unless nothing moved where they sat for this many analysed frames in a row..."""
    gone_at: float | None = None
    """...and then gone since they went out."""

    def observe(self, image: Frame, at: float, search: bool = False) -> Observation:
        """What the frame shows.  ``search``: run the models on this frame whatever the interval (a prompt's stills
        need its faces)."""
        interval = self.face_interval_s if self.stirred else self.still_interval_s
        grid = grey_grid(image)
        due = search or self.unsettled
        gap = at - self.last_at
        behind = gap >= max(self.face_interval_s, BEHIND_GAP / self.rate) and self.skipped < BEHIND_SKIP
        if not due and not behind:
            # The face found a moment ago is moving fast (the player getting up, bending down, leaning out): the
            # models look at this frame, so that where the face went is known (a player bending over the board is
            # out of the picture at the next one, and only the face seen on the way down tells that from leaving).
            due = at - self.searched_at >= interval or self._face_moving(grid[1])
        previous_mask = self.last_mask
        self.frames += 1
        self.searches += due
        self.skipped = 0 if due else self.skipped + 1
        self.last_at = at
        if due and self.people is not None:
            self.last_mask = self.people.segment(image)
        if due or self.last_bands is None or at - self.bands_at >= BANDS_INTERVAL_S:
            self.last_bands, self.bands_at = detail_bands(grid[0], (grid[1].shape[0], grid[1].shape[1])), at
            self.last_halo = Halo(edge_halo(image, self.last_mask)) if self.last_mask is not None else None
        observation, small = observe(image, at, self.last_small, self.faces, None if due else self.last_faces,
                                     self.last_mask, self.scene, grid, self.last_bands, previous_mask,
                                     self.last_halo)  # fmt: skip
        if due:
            self.last_faces, self.searched_at, self.stirred = observation.faces, at, False
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
            mask = self.last_mask
            steady = (
                mask is not None
                and previous_mask is not None
                and previous_mask.shape == mask.shape
                and _overlap(mask > 0.5, previous_mask > 0.5) >= SCENE_STEADY
            )
            if alone and lit and steady and mask is not None and mask.shape == small.shape:
                self.scene = Scene(small, mask > 0.5, at, observation.faces[0])
                self.rest_face = observation.faces[0]
        if not due and not self.stirred:
            self.stirred = self._stirred(small)
        still = self._player_still(small)
        self.last_small = small
        return self._bent_down(observation, still)

    def _face_moving(self, small: NDArray[np.float32]) -> bool:
        """Whether most of the one face found a moment ago changed by :data:`FACE_MOVING_LEVEL` since the last
        analysed frame."""
        if len(self.last_faces) != 1 or self.last_small is None or self.last_small.shape != small.shape:
            return False
        face = self.last_faces[0]
        rows = slice(max(0, face.y // 4), max(1, (face.y + face.height) // 4))
        cols = slice(max(0, face.x // 4), max(1, (face.x + face.width) // 4))
        before, now = self.last_small[rows, cols], small[rows, cols]
        if before.size < 4:
            return False
        difference = np.abs(now - before)
        if float((difference >= FACE_MOVING_LEVEL).mean()) >= FACE_MOVING:
            return True
        # In a dim room a face and the wall behind it differ by less than that: what is there now no longer looks
        # like the face (swaying, it stays correlated with itself), and differs from it by more than its own contrast.
        spread = float(before.std())
        if spread < 1.0 or float(now.std()) < 1.0:
            return float(difference.mean()) >= FACE_MOVING_LEVEL
        correlation = float(np.corrcoef(before.ravel(), now.ravel())[0, 1])
        return correlation < FACE_GONE_CORRELATION and float(difference.mean()) >= FACE_GONE_CHANGE * (spread + 1.0)

    def _stirred(self, small: NDArray[np.float32]) -> bool:
        """Whether anything moved outside the player between the last analysed frame and this one (or whether that
        cannot be told: no mask, no comparable frame)."""
        mask, last = self.last_mask, self.last_small
        if mask is None or last is None or last.shape != small.shape or mask.shape != small.shape:
            return True
        outside = ~_around(mask > 0.5, STILL_MARGIN)
        moved = (np.abs(small - last) >= MOVING_LEVEL) & outside
        return float(moved.mean()) > STILL_OUTSIDE

    def _player_still(self, small: NDArray[np.float32]) -> bool:
        """Whether nothing moved where the player sat (the columns of their mask in the scene, widened by
        :data:`STILL_MARGIN`) since the last analysed frame: below :data:`BENT_STILL` of those cells."""
        if self.scene is None or self.last_small is None or self.last_small.shape != small.shape:
            return False
        columns = self.scene.player.any(axis=0)
        found = np.nonzero(columns)[0]
        if not found.size or self.scene.player.shape != small.shape:
            return False
        left, right = max(0, int(found.min()) - STILL_MARGIN), int(found.max()) + STILL_MARGIN + 1
        moved = np.abs(small[:, left:right] - self.last_small[:, left:right]) >= MOVING_LEVEL
        return float(moved.mean()) < BENT_STILL

    def _bent_down(self, observation: Observation, still: bool = False) -> Observation:
        """A player who went out through the frame's bottom edge is bent down (picking something up, or over the
        board with only the top of the head left in the picture) and is present for a while: someone leaving gets
        up and walks out by a side.  Unless nothing moves where they sat for :data:`BENT_STILL_FRAMES` analysed
        frames: a player bent down out of the picture still moves it, an empty room does not; the absence then
        counts from when they went out (:attr:`video.checks.Observation.gone_since`)."""
        at = observation.at
        if len(observation.faces) == 1:
            self.last_face, self.last_face_at, self.bent_down_at = observation.faces[0], at, None
            self.gone_at, self.still_frames = None, 0
            return observation
        if observation.faces or observation.player_seen:
            return observation
        if self.bent_down_at is None and self.last_face is not None and self.rest_face is not None:
            rest, last = self.rest_face, self.last_face
            drop = (last.y + last.height / 2 - rest.y - rest.height / 2) / max(rest.height, 1)
            aside = abs(last.x + last.width / 2 - rest.x - rest.width / 2) / max(rest.height, 1)
            vanished = aside < VANISHED_NEAR and drop > -VANISHED_NEAR and at - self.last_face_at <= VANISHED_WITHIN_S
            if (drop >= BENT_DOWN_DROP and drop > aside) or vanished:
                self.bent_down_at, self.still_frames = at, 0
            self.last_face = None  # judged once, when the player went out
        if self.bent_down_at is not None:
            self.still_frames = self.still_frames + 1 if still else 0
            if self.still_frames >= BENT_STILL_FRAMES:
                self.gone_at, self.bent_down_at = self.bent_down_at, None
        if self.bent_down_at is not None and at - self.bent_down_at < self.monitor.thresholds.bent_down_s:
            return replace(observation, bent_down=True)
        if self.gone_at is not None:
            return replace(observation, gone_since=self.gone_at)
        return observation

    def judge(self, observation: Observation) -> list[Finding]:
        """The findings that start or end with this observation (on the event loop, in time order)."""
        return self.monitor.feed(observation)

    def analyse(self, image: Frame, at: float) -> list[Finding]:
        """Both at once (offline replays)."""
        return self.judge(self.observe(image, at))
