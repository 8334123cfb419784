"""The golden case ids seen so far (duplicates are reported and skipped): 24 bytes per id, whatever its length.

A dict of a few million id strings and their `file:line` costs about 150 bytes per case, which made memory grow
with the goldens. Here an id is kept as its 128-bit BLAKE2b digest, with where it first occurs packed in one word, in
an open-addressing table of three machine-word arrays. Two different ids share a digest with probability about
n^2 / 2^129 (below 10^-24 for a billion cases): ids are told apart exactly for any golden set that can exist.
"""

from __future__ import annotations

from array import array
from hashlib import blake2b

_LINE_BITS = 40  # a place is (file number + 1) << 40 | line: never 0, which marks an empty slot


class SeenIds:
    """`first(id, file, line)`: where the id was first seen (`file:line`), or None after recording it here."""

    def __init__(self) -> None:
        self._files: list[str] = []
        self._file_numbers: dict[str, int] = {}
        self._count = 0
        self._allocate(1 << 10)

    def _allocate(self, slots: int) -> None:
        self._mask = slots - 1
        self._high = array("Q", bytes(8 * slots))
        self._low = array("Q", bytes(8 * slots))
        self._places = array("Q", bytes(8 * slots))

    def __len__(self) -> int:
        return self._count

    def where(self, case_id: str) -> str | None:
        """Where the id was first seen, or None (nothing is recorded)."""
        return self._find(case_id)[0]

    def _find(self, case_id: str) -> tuple[str | None, int, int, int]:
        """(where the id was first seen or None, its slot or the free slot for it, its digest's two halves)."""
        digest = blake2b(case_id.encode("utf-8", "surrogatepass"), digest_size=16).digest()
        high, low = int.from_bytes(digest[:8], "little"), int.from_bytes(digest[8:], "little")
        mask, highs, lows, places = self._mask, self._high, self._low, self._places
        slot = low & mask
        while places[slot]:
            if lows[slot] == low and highs[slot] == high:
                place = places[slot]
                return f"{self._files[(place >> _LINE_BITS) - 1]}:{place & ((1 << _LINE_BITS) - 1)}", slot, high, low
            slot = (slot + 1) & mask
        return None, slot, high, low

    def first(self, case_id: str, file: str, line: int) -> str | None:
        where, slot, high, low = self._find(case_id)
        if where is not None:
            return where
        highs, lows, places = self._high, self._low, self._places
        number = self._file_numbers.get(file)
        if number is None:
            number = self._file_numbers[file] = len(self._files)
            self._files.append(file)
        highs[slot], lows[slot], places[slot] = high, low, (number + 1) << _LINE_BITS | line
        self._count += 1
        if self._count * 4 > len(places) * 3:  # linear probing stays short below three quarters full
            self._grow()
        return None

    def _grow(self) -> None:
        highs, lows, places = self._high, self._low, self._places
        self._allocate(len(places) * 2)
        mask, new_highs, new_lows, new_places = self._mask, self._high, self._low, self._places
        for high, low, place in zip(highs, lows, places):
            if place:
                slot = low & mask
                while new_places[slot]:
                    slot = (slot + 1) & mask
                new_highs[slot], new_lows[slot], new_places[slot] = high, low, place
