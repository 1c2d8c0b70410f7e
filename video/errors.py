"""The video layer's errors: one hierarchy, so that callers can tell "a check cannot run" from a bug."""

from __future__ import annotations


class VideoError(Exception):
    """Something in the video layer cannot be done as asked."""


class ModelUnavailableError(VideoError):
    """An offline model is missing, damaged, or could not be obtained from its registry package."""
