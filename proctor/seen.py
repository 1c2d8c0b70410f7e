"""A Bloom filter of the webhook-ids already received, so that a new delivery (nearly always new) does not cost a
database look-up to rule out a duplicate; a "maybe" still asks the database, so the answer is always exact.

It lives in one process and is rebuilt from the database at start, so Python's own (per-process) string hash is a
fine hash function here.
"""

from __future__ import annotations


class SeenFilter:
    def __init__(self, expected: int = 1_000_000, hashes: int = 7) -> None:
        self.size = max(1 << 24, expected * 16)
        self.salts = tuple(range(hashes))
        self.bits = bytearray(self.size // 8 + 1)
        self.count = 0

    def add(self, key: str) -> None:
        bits, size = self.bits, self.size
        for salt in self.salts:
            position = hash((salt, key)) % size
            bits[position >> 3] |= 1 << (position & 7)
        self.count += 1

    def might_contain(self, key: str) -> bool:
        bits, size = self.bits, self.size
        for salt in self.salts:
            position = hash((salt, key)) % size
            if not bits[position >> 3] & (1 << (position & 7)):
                return False
        return True
