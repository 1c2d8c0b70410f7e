"""Webcam ingest over WebRTC and the environment checks of art. 36 (to come: issue 6)."""
