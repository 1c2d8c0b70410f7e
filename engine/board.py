"""The 15x15 board, its notation (art. 1) and immutable positions.

Points are plain integers ``row * 15 + column`` (``a1`` = 0, ``h8`` = 112, ``o15`` = 224): columns a–o run left to
right and rows 1–15 bottom to top, seen from Black's side (art. 1).

A :class:`Position` keeps, besides the cells, every line of the board (rows, columns and both diagonals, art. 5) as a
string padded with walls, so that the shape around a point in one direction is one string slice.  Positions are
immutable: :meth:`Position.place` returns a new one.
"""

from __future__ import annotations

import enum
from collections.abc import Iterable, Iterator
from typing import Final

from engine.errors import NotationError

SIZE: Final = 15
POINTS: Final = SIZE * SIZE
COLUMNS: Final = "abcdefghijklmno"
CENTER: Final = 7 * SIZE + 7  # h8, tianyuan

#: Characters of the cell and line strings.
EMPTY: Final = "."
BLACK_STONE: Final = "X"
WHITE_STONE: Final = "O"
WALL: Final = "#"

#: How many wall characters pad each line on both sides; a window of radius ``PAD`` never leaves its string.
PAD: Final = 5

#: The four directions of art. 5 as (column step, row step): horizontal, vertical, diagonal, anti-diagonal.
DIRECTIONS: Final = ((1, 0), (0, 1), (1, 1), (1, -1))


class Color(enum.Enum):
    """A side: Black moves first (art. 10) and holds the odd move numbers (13.2)."""

    BLACK = "black"
    WHITE = "white"

    @property
    def other(self) -> Color:
        return Color.WHITE if self is Color.BLACK else Color.BLACK

    @property
    def stone(self) -> str:
        return BLACK_STONE if self is Color.BLACK else WHITE_STONE


def point_at(column: int, row: int) -> int:
    """The point at 0-based ``column`` and ``row``."""
    return row * SIZE + column


def column_of(point: int) -> int:
    return point % SIZE


def row_of(point: int) -> int:
    return point // SIZE


def on_board(column: int, row: int) -> bool:
    return 0 <= column < SIZE and 0 <= row < SIZE


def parse_point(text: str) -> int:
    """Read a point in the notation of art. 1 (``"h8"``, ``"O15"``); raise :class:`NotationError` otherwise."""
    if not isinstance(text, str):
        raise NotationError(f"a point must be a string like 'h8', not {type(text).__name__}")
    token = text.strip().lower()
    if len(token) < 2 or token[0] not in COLUMNS or not token[1:].isdigit() or token[1:].startswith("0"):
        raise NotationError(f"{text!r} is not a point: expected a column a–o and a row 1–15, e.g. 'h8'")
    row = int(token[1:])
    if not 1 <= row <= SIZE:
        raise NotationError(f"{text!r} is off the board: rows run from 1 to {SIZE}")
    return point_at(COLUMNS.index(token[0]), row - 1)


def format_point(point: int) -> str:
    """The notation of a point (``112`` → ``"h8"``)."""
    if not 0 <= point < POINTS:
        raise NotationError(f"point index {point} is off the board")
    return f"{COLUMNS[column_of(point)]}{row_of(point) + 1}"


def parse_points(texts: Iterable[str]) -> list[int]:
    return [parse_point(text) for text in texts]


def _build_lines() -> tuple[tuple[tuple[int, ...], ...], tuple[tuple[tuple[int, int], ...], ...], tuple[int, ...]]:
    """Every line of the board (art. 5) as its points, and for each point its (line, offset) in every direction."""
    lines: list[tuple[int, ...]] = []
    line_direction: list[int] = []
    where: list[list[tuple[int, int]]] = [[(0, 0)] * 4 for _ in range(POINTS)]
    for direction, (dc, dr) in enumerate(DIRECTIONS):
        for column in range(SIZE):
            for row in range(SIZE):
                if on_board(column - dc, row - dr):
                    continue  # not the start of a line
                points = []
                c, r = column, row
                while on_board(c, r):
                    points.append(point_at(c, r))
                    c, r = c + dc, r + dr
                for offset, point in enumerate(points):
                    where[point][direction] = (len(lines), offset + PAD)
                lines.append(tuple(points))
                line_direction.append(direction)
    return tuple(lines), tuple(tuple(w) for w in where), tuple(line_direction)


#: LINES[i] is the points of line i in order; LINE_OF[point][direction] is (line index, index in the padded string).
LINES, LINE_OF, LINE_DIRECTION = _build_lines()
#: The point of each padded-string index of each line (None on the walls).
LINE_POINTS: Final = tuple((None,) * PAD + points + (None,) * PAD for points in LINES)
_EMPTY_LINES: Final = tuple(WALL * PAD + EMPTY * len(points) + WALL * PAD for points in LINES)


def step(point: int, direction: int, distance: int) -> int | None:
    """The point ``distance`` steps from ``point`` along ``direction`` (negative goes back), or None off the board."""
    dc, dr = DIRECTIONS[direction]
    column, row = column_of(point) + dc * distance, row_of(point) + dr * distance
    return point_at(column, row) if on_board(column, row) else None


class Position:
    """An immutable arrangement of stones.

    ``cells`` has one character per point (``.``, ``X``, ``O``); ``lines`` holds every line as a padded string.
    """

    __slots__ = ("cells", "lines", "stones")

    cells: str
    lines: tuple[str, ...]
    stones: int

    def __init__(self, cells: str | None = None, lines: tuple[str, ...] | None = None) -> None:
        if cells is None:
            cells, lines = EMPTY * POINTS, _EMPTY_LINES
        elif lines is None:
            lines = tuple(WALL * PAD + "".join(cells[p] for p in points) + WALL * PAD for points in LINES)
        self.cells = cells
        self.lines = lines
        self.stones = POINTS - cells.count(EMPTY)

    @classmethod
    def from_points(cls, black: Iterable[int] = (), white: Iterable[int] = ()) -> Position:
        cells = [EMPTY] * POINTS
        for color, points in ((BLACK_STONE, black), (WHITE_STONE, white)):
            for point in points:
                if cells[point] != EMPTY:
                    raise NotationError(f"{format_point(point)} is given twice")
                cells[point] = color
        return cls("".join(cells))

    @classmethod
    def from_notation(cls, black: Iterable[str] = (), white: Iterable[str] = ()) -> Position:
        return cls.from_points(parse_points(black), parse_points(white))

    def place(self, point: int, color: Color) -> Position:
        """A new position with a stone of ``color`` on the empty ``point``."""
        stone = color.stone
        cells = self.cells
        new = Position.__new__(Position)
        new.cells = cells[:point] + stone + cells[point + 1 :]
        lines = list(self.lines)
        for line, index in LINE_OF[point]:
            text = lines[line]
            lines[line] = text[:index] + stone + text[index + 1 :]
        new.lines = tuple(lines)
        new.stones = self.stones + 1
        return new

    def is_empty(self, point: int) -> bool:
        return self.cells[point] == EMPTY

    def color_at(self, point: int) -> Color | None:
        cell = self.cells[point]
        if cell == BLACK_STONE:
            return Color.BLACK
        if cell == WHITE_STONE:
            return Color.WHITE
        return None

    def points_of(self, color: Color) -> list[int]:
        stone = color.stone
        return [p for p, cell in enumerate(self.cells) if cell == stone]

    def empty_points(self) -> Iterator[int]:
        return (p for p, cell in enumerate(self.cells) if cell == EMPTY)

    @property
    def is_full(self) -> bool:
        return self.stones == POINTS

    def window(self, point: int, direction: int, radius: int = PAD) -> str:
        """The line through ``point`` in ``direction``, ``radius`` cells each side (walls beyond the edge)."""
        line, index = LINE_OF[point][direction]
        return self.lines[line][index - radius : index + radius + 1]

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Position) and other.cells == self.cells

    def __hash__(self) -> int:
        return hash(self.cells)

    def __repr__(self) -> str:
        black = " ".join(format_point(p) for p in self.points_of(Color.BLACK))
        white = " ".join(format_point(p) for p in self.points_of(Color.WHITE))
        return f"Position(black='{black}', white='{white}')"

    def diagram(self) -> str:
        """A text picture of the board, row 15 on top, as in the rules' figures."""
        rows = []
        for row in range(SIZE - 1, -1, -1):
            cells = " ".join(self.cells[point_at(c, row)] for c in range(SIZE))
            rows.append(f"{row + 1:>2} {cells}")
        rows.append("   " + " ".join(COLUMNS))
        return "\n".join(rows)


# --- Symmetries -----------------------------------------------------------------------------------------------


def _symmetry_tables() -> tuple[tuple[int, ...], ...]:
    """The 8 symmetries of the square board about h8 as point permutations (identity first)."""
    transforms = []
    for k in range(8):
        table = []
        for point in range(POINTS):
            x, y = column_of(point) - 7, row_of(point) - 7
            if k & 4:
                x, y = y, x
            if k & 1:
                x = -x
            if k & 2:
                y = -y
            table.append(point_at(x + 7, y + 7))
        transforms.append(tuple(table))
    return tuple(transforms)


#: SYMMETRIES[k][point] is the image of point under the k-th symmetry of the board; SYMMETRIES[0] is the identity.
SYMMETRIES: Final = _symmetry_tables()
