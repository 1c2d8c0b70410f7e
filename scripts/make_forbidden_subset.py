"""Select the committed subset of labelled forbidden-move positions (tests/data/forbidden/).

Usage: python scripts/make_forbidden_subset.py SOURCE_DIR [--size 2000] [--seed 2025]

SOURCE_DIR holds vectors_dev.jsonl and hand_cases.jsonl (the project's shared data, labelled by Rapfi's checker).
Every position with a rare tag (disputed five-eye, multi-kind, line 4-4) is kept; the rest of the subset is a seeded
random sample, so that the common kinds (3-3, 4-4, overline, fake 3-3, nested) keep their proportions.
"""

from __future__ import annotations

import argparse
import json
import random
from pathlib import Path

RARE = {"disputed_five_eye", "multi_kind", "line44"}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("source", type=Path)
    parser.add_argument("--size", type=int, default=2000)
    parser.add_argument("--seed", type=int, default=2025)
    parser.add_argument("--out", type=Path, default=Path(__file__).parent.parent / "tests" / "data" / "forbidden")
    args = parser.parse_args()
    lines = (args.source / "vectors_dev.jsonl").read_text(encoding="utf-8").splitlines()
    rare = [line for line in lines if RARE & set(json.loads(line)["tags"])]
    common = [line for line in lines if not RARE & set(json.loads(line)["tags"])]
    sample = rare + random.Random(args.seed).sample(common, max(0, args.size - len(rare)))
    sample.sort(key=lines.index)
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "vectors_subset.jsonl").write_text("\n".join(sample) + "\n", encoding="utf-8")
    hand = (args.source / "hand_cases.jsonl").read_text(encoding="utf-8")
    (args.out / "hand_cases.jsonl").write_text(hand, encoding="utf-8")
    print(f"{len(sample)} positions ({len(rare)} with rare tags), {len(hand.splitlines())} hand cases")


if __name__ == "__main__":
    main()
