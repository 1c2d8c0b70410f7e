"""A section's microphone policy (issue 15): whether its players' microphones are listened to, the voice check's
thresholds, and where and for how long its sound clips are kept.  Read from the section's policy by the service, and
given to the analysis worker holding a player's front camera with the stream (the distributed mode, issue 16), which
listens as the service does in the one-process mode."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import asdict, dataclass, field, fields, replace
from typing import Any, Final

from video.speech import SpeechSettings

SOUND_FOLDER: Final = "sound"
"""A section's sound clips are kept in this subfolder of its media folder, with their own retention."""
DEFAULT_SOUND_RETENTION_DAYS: Final = 30


@dataclass(frozen=True, slots=True)
class MicrophonePolicy:
    required: bool = False
    settings: SpeechSettings = field(default_factory=SpeechSettings)
    folder: str = ""
    """Where its clips go, relative to the media folder."""
    retention_days: int = DEFAULT_SOUND_RETENTION_DAYS
    """How long its clips are kept (``sound_retention_days``; the player's page says so before they agree)."""

    @classmethod
    def of(cls, found: tuple[Any, Mapping[str, Any]] | None) -> MicrophonePolicy:
        """From the player's section and its policy (:func:`proctor.camera.player_section`)."""
        if found is None:
            return cls()
        section, policy = found
        return cls(
            bool(policy.get("microphone_required", False)),
            _settings(dict(policy.get("thresholds") or {})),
            f"{section.folder}/{SOUND_FOLDER}",
            int(policy.get("sound_retention_days", DEFAULT_SOUND_RETENTION_DAYS)),
        )

    def to_json(self) -> dict[str, Any]:
        """What an analysis worker needs of it (whether to listen, and how): the clips are kept by the service."""
        return {"required": self.required, "settings": asdict(self.settings)}

    @classmethod
    def from_json(cls, data: Mapping[str, Any] | None) -> MicrophonePolicy:
        if not data:
            return cls()
        return cls(bool(data.get("required", False)), _settings(dict(data.get("settings") or {})))


def _settings(values: Mapping[str, Any]) -> SpeechSettings:
    known = {f.name for f in fields(SpeechSettings)}
    chosen: dict[str, Any] = {
        k: int(v) if k == "mouth_min_views" else float(v) for k, v in values.items() if k in known
    }
    return replace(SpeechSettings(), **chosen)
