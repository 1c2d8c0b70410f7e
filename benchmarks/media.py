"""Fetch the evaluation media for ``benchmarks/detectors.py`` from their registry packages into a cache folder.

Usage: python benchmarks/media.py [--cache DIR]

Every file is checked against the SHA-256 pinned below (computed once from these packages); a mismatch is an error,
never a silent substitute.  Files already in the cache with the right hash are not fetched again.  Nothing here is
used by the service or its tests: the benchmarks alone need these files, and a fresh clone fetches them with this
script (the default cache is ``$XDG_CACHE_HOME/gomoku-proctor-media``, else ``~/.cache/gomoku-proctor-media``).

Sources and licences:

* PyPI ``face_recognition==1.3.0``, the **sdist** (``pip download --no-deps --no-binary :all: face_recognition==1.3.0``)
  → ``tests/test_images/``: obama.jpg, obama2.jpg, obama3.jpg, biden.jpg, obama_partial_face.jpg,
  obama_partial_face2.jpg.  Official White House portraits: works of the US government, public domain.  The package's
  own code is MIT (its LICENSE is kept as ``LICENSE.face_recognition``).  The partial-face images are obama.jpg cut
  through the face at the left (``_partial_face``: columns 419–910) and at the right (``_partial_face2``: 0–551).
* PyPI ``scikit-image==0.26.0`` (installed with the test extras), ``skimage/data/``: astronaut.png (NASA, public
  domain), coffee.png, chelsea.png, camera.png (CC0 by their photographers, as ``skimage.data``'s docstrings say).
* Debian ``opencv-doc`` 4.6.0+dfsg-12 (``apt-get download opencv-doc`` then ``dpkg-deb -x``):
  ``/usr/share/doc/opencv-doc/examples/data/`` home.jpg, building.jpg, vtest.avi (768x576, 10 fps, a static outdoor
  camera with people walking) and ``/usr/share/doc/opencv-doc/opencv4/html/`` box.mp4.gz, cup.mp4.gz (gunzipped:
  640x480 real indoor cameras, a hand moving a box over a table / rotating a bottle in front of a wall).  Licence:
  Apache-2.0 AND BSD-3-Clause (Debian's copyright file, ``Files: *``; kept as ``copyright.opencv-doc``).
"""

from __future__ import annotations

import argparse
import gzip
import hashlib
import os
import shutil
import subprocess
import sys
import tarfile
import tempfile
from dataclasses import dataclass
from pathlib import Path

FACE_RECOGNITION = "face_recognition==1.3.0"
FACE_RECOGNITION_SDIST_SHA256 = "5e5efdd1686aa566af0d3cc1313b131e4b197657a8ffd03669e6d3fad92705ec"
OPENCV_DOC = "opencv-doc"
OPENCV_DOC_VERSION = "4.6.0+dfsg-12"
_DOC = "usr/share/doc/opencv-doc/"


@dataclass(frozen=True, slots=True)
class Item:
    name: str
    """The file's name in the cache."""
    source: str
    """"face_recognition", "skimage" or "opencv-doc"."""
    member: str
    """Its path inside the source (the sdist's top folder left out; a trailing .gz is gunzipped)."""
    sha256: str


ITEMS: tuple[Item, ...] = (
    Item("obama.jpg", "face_recognition", "tests/test_images/obama.jpg",
         "0930e3aa8cae5920329c0c8cbc6a2ab70f47b0e67b432875beaa95cbf7e741f6"),
    Item("obama2.jpg", "face_recognition", "tests/test_images/obama2.jpg",
         "a7efcc907375274796f39646510704aa86672d59f6d5469d69af3c85590976a6"),
    Item("obama3.jpg", "face_recognition", "tests/test_images/obama3.jpg",
         "76ac6bf97c36dc2da0ad16a537d6a5ac1b10f48d49aac29a0cca9a17cdbc3ca3"),
    Item("biden.jpg", "face_recognition", "tests/test_images/biden.jpg",
         "3c17508bb91554c637a2eabddfae790e5bb1caba93130814fc2ac50be9760c4c"),
    Item("obama_partial_face.jpg", "face_recognition", "tests/test_images/obama_partial_face.jpg",
         "c2d1f09e7ef3042352b41e41286e6eb0522f64f88308be13886991b95db52117"),
    Item("obama_partial_face2.jpg", "face_recognition", "tests/test_images/obama_partial_face2.jpg",
         "9a812347f97633542b8cd9992de22def11b74f79d82056bc3ee830f13878e028"),
    Item("LICENSE.face_recognition", "face_recognition", "LICENSE",
         "a97254e5ee8167a2bedd456b8c6710fde64d5603422e631d0bc3132c90d5c930"),
    Item("astronaut.png", "skimage", "astronaut.png",
         "88431cd9653ccd539741b555fb0a46b61558b301d4110412b5bc28b5e3ea6cb5"),
    Item("coffee.png", "skimage", "coffee.png", "cc02f8ca188b167c775a7101b5d767d1e71792cf762c33d6fa15a4599b5a8de7"),
    Item("chelsea.png", "skimage", "chelsea.png", "596aa1e7cb875eb79f437e310381d26b338a81c2da23439704a73c4651e8c4bb"),
    Item("camera.png", "skimage", "camera.png", "b0793d2adda0fa6ae899c03989482bff9a42d3d5690fc7e3648f2795d730c23a"),
    Item("home.jpg", "opencv-doc", _DOC + "examples/data/home.jpg",
         "23b8cf46a1965d0ec33459b875aed43187802834db49e0daa9fa2cc842e9d8d2"),
    Item("building.jpg", "opencv-doc", _DOC + "examples/data/building.jpg",
         "742a1baad62ac82e91e718e77eedf7e85c2eddc4badfb8c87c6cbc86c45a8b07"),
    Item("vtest.avi", "opencv-doc", _DOC + "examples/data/vtest.avi",
         "45cddc9490be69345cbdab64ca583be65987e864ca408038e648db99e10516cf"),
    Item("box.mp4", "opencv-doc", _DOC + "opencv4/html/box.mp4.gz",
         "62b744b99403f899707c43398a3822441add6160379ab6dd6c12bde9e3075f8d"),
    Item("cup.mp4", "opencv-doc", _DOC + "opencv4/html/cup.mp4.gz",
         "37db9cee98f70b1458985a15ad2e5b0183e90e24c281b534afcf812e5986154f"),
    Item("copyright.opencv-doc", "opencv-doc", _DOC + "copyright",
         "ef9b88286b97b4de2aad6ef9442efc827eaa25564b6658fb96cf5f16c118cabc"),
)  # fmt: skip


class MediaError(RuntimeError):
    """A package could not be fetched, or a file differs from its pinned hash."""


def default_cache() -> Path:
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "gomoku-proctor-media"


def sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as file:
        for block in iter(lambda: file.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def _valid(path: Path, item: Item) -> bool:
    return path.is_file() and sha256(path) == item.sha256


def _store(data_path: Path, item: Item, cache: Path) -> None:
    """Copy (gunzipping a .gz) into the cache, verify, then move into place: the cache never holds a bad file."""
    target = cache / item.name
    partial = cache / (item.name + ".partial")
    if item.member.endswith(".gz"):
        with gzip.open(data_path, "rb") as source, partial.open("wb") as out:
            shutil.copyfileobj(source, out)
    else:
        shutil.copyfile(data_path, partial)
    digest = sha256(partial)
    if digest != item.sha256:
        partial.unlink()
        raise MediaError(f"{item.name} from {item.source} ({item.member}): SHA-256 {digest}, expected {item.sha256}")
    partial.replace(target)


def _run(command: list[str], folder: Path) -> None:
    done = subprocess.run(command, cwd=folder, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise MediaError(f"{' '.join(command)} failed ({done.returncode}): {done.stderr.strip()[-600:]}")


def _fetch_face_recognition(items: list[Item], cache: Path, work: Path) -> None:
    _run([sys.executable, "-m", "pip", "download", "--no-deps", "--no-binary", ":all:", "--dest", str(work),
          FACE_RECOGNITION], work)  # fmt: skip
    sdists = sorted(work.glob("face_recognition-*.tar.gz"))
    if not sdists:
        raise MediaError(f"pip download {FACE_RECOGNITION} left no sdist")
    if (digest := sha256(sdists[0])) != FACE_RECOGNITION_SDIST_SHA256:
        raise MediaError(f"{sdists[0].name}: SHA-256 {digest}, expected {FACE_RECOGNITION_SDIST_SHA256}")
    with tarfile.open(sdists[0]) as archive:
        top = archive.getnames()[0].split("/")[0]
        for item in items:
            member = archive.extractfile(f"{top}/{item.member}")
            if member is None:
                raise MediaError(f"{sdists[0].name} has no {item.member}")
            extracted = work / item.name
            extracted.write_bytes(member.read())
            _store(extracted, item, cache)


def _fetch_skimage(items: list[Item], cache: Path) -> None:
    try:
        import skimage.data  # noqa: PLC0415 (a test extra; only this source needs it)
    except ImportError as error:
        raise MediaError("scikit-image is not installed (pip install -e '.[test]')") from error
    folder = Path(skimage.data.__file__).parent
    for item in items:
        if not (folder / item.member).is_file():
            raise MediaError(f"scikit-image at {folder} has no {item.member}")
        _store(folder / item.member, item, cache)


def _fetch_opencv_doc(items: list[Item], cache: Path, work: Path) -> None:
    if shutil.which("apt-get") is None or shutil.which("dpkg-deb") is None:
        raise MediaError("apt-get and dpkg-deb are needed for Debian's opencv-doc")
    try:  # the pinned version first; a newer revision is fine as long as the files still match their hashes
        _run(["apt-get", "download", f"{OPENCV_DOC}={OPENCV_DOC_VERSION}"], work)
    except MediaError:
        _run(["apt-get", "download", OPENCV_DOC], work)
    debs = sorted(work.glob(f"{OPENCV_DOC}_*.deb"))
    if not debs:
        raise MediaError("apt-get download opencv-doc left no .deb")
    root = work / "deb"
    _run(["dpkg-deb", "-x", str(debs[0]), str(root)], work)
    for item in items:
        path = root / item.member
        if not path.is_file():
            raise MediaError(f"{debs[0].name} has no /{item.member}")
        _store(path, item, cache)


def ensure_media(cache: Path | None = None, log: bool = True) -> dict[str, Path]:
    """Every item's path in the cache, fetching the missing or damaged ones first."""
    cache = cache or default_cache()
    cache.mkdir(parents=True, exist_ok=True)
    missing = [item for item in ITEMS if not _valid(cache / item.name, item)]
    by_source: dict[str, list[Item]] = {}
    for item in missing:
        by_source.setdefault(item.source, []).append(item)
    for source, items in by_source.items():
        if log:
            print(f"fetching {len(items)} file(s) from {source} into {cache}", flush=True)
        with tempfile.TemporaryDirectory(prefix="proctor-media-") as folder:
            work = Path(folder)
            if source == "face_recognition":
                _fetch_face_recognition(items, cache, work)
            elif source == "skimage":
                _fetch_skimage(items, cache)
            else:
                _fetch_opencv_doc(items, cache, work)
    return {item.name: cache / item.name for item in ITEMS}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--cache", type=Path, default=None, help=f"cache folder (default {default_cache()})")
    args = parser.parse_args()
    try:
        paths = ensure_media(args.cache)
    except MediaError as error:
        sys.exit(f"media: {error}")
    for name, path in paths.items():
        print(f"{path.stat().st_size:>10,}  {name}")
    print(f"{len(paths)} files verified in {args.cache or default_cache()}")


if __name__ == "__main__":
    main()
