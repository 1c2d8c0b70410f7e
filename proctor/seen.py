"""A Bloom filter of the webhook-ids already received, so that a new delivery (nearly always new) does not cost a
database look-up to rule out a duplicate; a "maybe" still asks the database, so the answer is always exact."""

from __future__ import annotations

import hashlib


class SeenFilter:
    def __init__(self, expected: int = 1_000_000, hashes: int = 7) -> None:
        self.size = max(1 << 24, expected * 16)
        self.hashes = hashes
        self.bits = bytearray(self.size // 8 + 1)
        self.count = 0

    def _positions(self, key: str) -> list[int]:
        digest = hashlib.blake2b(key.encode(), digest_size=8 * self.hashes).digest()
        return [int.from_bytes(digest[i * 8 : i * 8 + 8], "little") % self.size for i in range(self.hashes)]

    def add(self, key: str) -> None:
        for position in self._positions(key):
            self.bits[position >> 3] |= 1 << (position & 7)
        self.count += 1

    def might_contain(self, key: str) -> bool:
        return all(self.bits[position >> 3] & (1 << (position & 7)) for position in self._positions(key))
