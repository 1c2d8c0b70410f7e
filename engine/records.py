"""Game records: plain move lists, RenjuNet RIF XML and Gomocup PSQ, and replaying a record through the rules.

A :class:`GameRecord` is the rule set, the opening protocol, the actions in order (stones, passes and the opening's
decisions: swaps, declarations, candidates offered and chosen) and what is known of the players and the result.

Formats:

- Plain: whitespace- or comma-separated tokens (``h8 i9 swap j10 …``, see :mod:`engine.actions`).
- RIF (RenjuNet XML): ``<game rule=… black=… white=… bresult="1|0|0.5" opening=… alt=… swap=…>`` with
  ``<move>h8 i9 …</move>`` holding the stones in the order they were placed.  ``alt`` lists the fifth-move candidates
  offered, ``swap`` the number of stones on the board at each swap; the full token list (with every decision, in
  order) is kept in an extra ``actions`` attribute that other readers ignore and this reader prefers.
- PSQ (Gomocup): ``Piskvorky 15x15, 11:11, 0``, then one ``x,y,ms`` line per stone (1-based, x = column, y counted
  from the top as on Piskvork's screen, so h8 = ``8,8``), then the players' names (two lines, Black's then White's)
  and the result code line ``-1``.  PSQ has no field for an opening protocol's decisions: Piskvork reads the header,
  the stone lines and the two name lines, and ignores what follows, so a record with decisions (swaps, a declared
  number, candidates offered and chosen, Swap2's ``add2``) has them in ``key: value`` info lines after the code line
  (:data:`PSQ_INFO_KEYS`): ``rule``, ``opening``, ``swap`` and ``alt`` (as RIF's attributes) and ``actions`` (every
  token in order, preferred by this reader).  The stones keep their colours by alternation, as PSQ implies: a pass
  breaks it (two stones of one colour in a row), so a record with a pass is refused.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from fractions import Fraction
from xml.etree import ElementTree

from engine.actions import Action, Choose, Offer, Pass, Stone, Swap, parse_action
from engine.board import SIZE, column_of, format_point, point_at, row_of
from engine.errors import IllegalActionError, NotationError, RecordError
from engine.game import Game, GameSettings, Outcome


@dataclass(frozen=True, slots=True)
class GameRecord:
    rule: str = "renju"
    opening: str | None = None
    actions: tuple[Action, ...] = ()
    black: str = ""
    white: str = ""
    result: str | None = None
    """"black", "white", "draw" or None (unknown or unfinished)."""
    info: dict[str, str] = field(default_factory=dict)
    """Other header fields (event, round, board…), kept as read."""

    @property
    def tokens(self) -> list[str]:
        return [action.token() for action in self.actions]

    def stones(self) -> list[int]:
        """The stones in the order they were placed (a chosen candidate is the fifth stone)."""
        points = []
        for action in self.actions:
            if isinstance(action, (Stone, Choose)):
                points.append(action.point)
        return points


# --- Replay --------------------------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class IllegalMove:
    ply: int
    move: str
    why: str
    article: str | None = None


@dataclass(frozen=True, slots=True)
class Replay:
    """The game as far as it was legal, the outcome if it ended, and the first illegal move if any."""

    game: Game
    illegal: IllegalMove | None

    @property
    def outcome(self) -> Outcome | None:
        return self.game.outcome


def replay(tokens: list[str] | tuple[str, ...], settings: GameSettings) -> Replay:
    """Play ``tokens`` from the start; stop at the first one the rules refuse (moves after the end included)."""
    game = Game.new(settings)
    for ply, token in enumerate(tokens, start=1):
        try:
            game = game.apply(parse_action(token))
        except IllegalActionError as error:
            return Replay(game, IllegalMove(ply, str(token), str(error), error.article))
        except NotationError as error:
            return Replay(game, IllegalMove(ply, str(token), str(error)))
    return Replay(game, None)


def replay_record(record: GameRecord, settings: GameSettings | None = None) -> Replay:
    base = settings or GameSettings()
    return replay(
        record.tokens,
        GameSettings(
            rule=record.rule,
            opening=record.opening,
            adjudication=base.adjudication,
            five_eye=base.five_eye,
            max_candidates=base.max_candidates,
        ),
    )


# --- Plain lists ---------------------------------------------------------------------------------------------------


#: A keyword with its argument (``offer:g10,j10``) or a token between separators (spaces, commas, semicolons).
_PLAIN_TOKEN = re.compile(r"[A-Za-z0-9]+:[^\s;]+|[^\s,;]+")


def read_plain(text: str, rule: str = "renju", opening: str | None = None) -> GameRecord:
    tokens = _PLAIN_TOKEN.findall(text)
    actions = []
    for index, token in enumerate(tokens, start=1):
        try:
            actions.append(parse_action(token))
        except NotationError as error:
            raise RecordError(f"move {index}: {error}") from None
    return GameRecord(rule=rule, opening=opening, actions=tuple(actions))


def write_plain(record: GameRecord) -> str:
    return " ".join(record.tokens)


# --- RIF -----------------------------------------------------------------------------------------------------------

_RESULT_TO_RIF = {"black": "1", "white": "0", "draw": "0.5"}


def _rif_result(value: str) -> str:
    try:
        score = Fraction(value)
    except (ValueError, ZeroDivisionError):
        raise RecordError(f"bresult={value!r}: expected 1, 0 or 0.5") from None
    results = {Fraction(1): "black", Fraction(0): "white", Fraction(1, 2): "draw"}
    if score not in results:
        raise RecordError(f"bresult={value!r}: expected 1, 0 or 0.5")
    return results[score]


def read_rif(text: str) -> list[GameRecord]:
    """Every ``<game>`` of a RIF XML document (a bare ``<game>`` element is accepted too)."""
    try:
        root = ElementTree.fromstring(text)
    except ElementTree.ParseError as error:
        raise RecordError(f"not well-formed RIF XML: {error}") from None
    games = [root] if root.tag == "game" else list(root.iter("game"))
    if not games:
        raise RecordError("no <game> element in the RIF document")
    return [_read_rif_game(element) for element in games]


def _read_rif_game(element: ElementTree.Element) -> GameRecord:
    attributes = dict(element.attrib)
    label = f"game {attributes.get('id', '?')}"
    try:
        if "actions" in attributes:
            actions = [parse_action(token) for token in attributes.pop("actions").split()]
        else:
            move = element.find("move")
            stones = [Stone(parse_point_token(t)) for t in (move.text or "").split()] if move is not None else []
            actions = _rebuild_decisions(stones, attributes.get("alt", ""), attributes.get("swap", ""))
    except (NotationError, RecordError) as error:
        raise RecordError(f"{label}: {error}") from None
    result = attributes.pop("bresult", None)
    return GameRecord(
        rule=attributes.pop("rule", "renju") or "renju",
        opening=attributes.pop("protocol", None),
        actions=tuple(actions),
        black=attributes.pop("black", ""),
        white=attributes.pop("white", ""),
        result=_rif_result(result) if result not in (None, "") else None,
        info=attributes,
    )


def parse_point_token(token: str) -> int:
    action = parse_action(token)
    if not isinstance(action, Stone):
        raise NotationError(f"{token!r} is not a stone")
    return action.point


def _rebuild_decisions(stones: list[Stone], alt: str, swap: str) -> list[Action]:
    """Put the swaps (``swap`` = stones on the board at each) and the candidates (``alt``) back among the stones."""
    swaps_at = [int(s) for s in swap.split() if s.strip().isdigit()]
    candidates = tuple(parse_point_token(t) for t in alt.replace(",", " ").split())
    actions: list[Action] = []
    for count in range(len(stones) + 1):
        actions.extend(Swap() for at in swaps_at if at == count)
        if count == len(stones):
            break
        if count == 4 and candidates:
            fifth = stones[4].point
            offer = candidates if fifth in candidates else (fifth, *candidates)
            actions.extend([Offer(offer), Choose(fifth)])
            continue
        actions.append(stones[count])
    return actions


def write_rif(records: list[GameRecord]) -> str:
    """A RIF ``<database>`` document with one ``<game>`` per record."""
    root = ElementTree.Element("database")
    games = ElementTree.SubElement(root, "games")
    for number, record in enumerate(records, start=1):
        attributes = {"id": str(number), **record.info, "rule": record.rule}
        if record.opening:
            attributes["protocol"] = record.opening
        attributes["black"] = record.black
        attributes["white"] = record.white
        if record.result is not None:
            attributes["bresult"] = _RESULT_TO_RIF[record.result]
        offers = [a for a in record.actions if isinstance(a, Offer)]
        attributes["alt"] = " ".join(format_point(p) for p in offers[-1].points) if offers else ""
        swaps, stones = [], 0
        for action in record.actions:
            if isinstance(action, (Stone, Choose)):
                stones += 1
            elif isinstance(action, Swap):
                swaps.append(str(stones))
        attributes["swap"] = " ".join(swaps)
        if any(not isinstance(a, Stone) for a in record.actions):
            attributes["actions"] = " ".join(record.tokens)
        game = ElementTree.SubElement(games, "game", attributes)
        move = ElementTree.SubElement(game, "move")
        move.text = " ".join(format_point(p) for p in record.stones())
    ElementTree.indent(root)
    return '<?xml version="1.0" encoding="utf-8"?>\n' + ElementTree.tostring(root, encoding="unicode") + "\n"


# --- PSQ -----------------------------------------------------------------------------------------------------------

_PSQ_HEADER = re.compile(r"^Piskvorky\s+(\d+)x(\d+)", re.IGNORECASE)
_PSQ_MOVE = re.compile(r"^\s*(\d+)\s*,\s*(\d+)\s*(?:,\s*(-?\d+))?\s*$")
_PSQ_CODE = re.compile(r"^\s*-?\d+\s*$")
_PSQ_INFO = re.compile(r"^([a-z]+):\s?(.*)$")
PSQ_INFO_KEYS = ("rule", "opening", "swap", "alt", "actions")
"""The info lines after a PSQ record's code line, in the order written: the rule set, the opening protocol, the
number of stones on the board at each swap, the fifth-move candidates offered, and every action's token in order."""


def read_psq(text: str, rule: str = "freestyle") -> GameRecord:
    """A PSQ record: the stones, the names (the first two lines after the stones, up to the code line), and the
    decisions of its info lines (``actions`` preferred; else ``swap`` and ``alt`` put back among the stones, as for
    RIF).  ``rule`` is the rule set when no ``rule`` line names one (Gomocup's PSQ files are freestyle)."""
    lines = text.splitlines()
    if not lines or not _PSQ_HEADER.match(lines[0].strip()):
        raise RecordError("a PSQ record starts with a 'Piskvorky 15x15, …' line")
    header = _PSQ_HEADER.match(lines[0].strip())
    assert header is not None
    width, height = int(header.group(1)), int(header.group(2))
    if (width, height) != (SIZE, SIZE):
        raise RecordError(f"PSQ board {width}x{height}: only 15x15 is played under these rules (art. 1)")
    stones: list[Stone] = []
    index = 1
    while index < len(lines) and (match := _PSQ_MOVE.match(lines[index])):
        x, y = int(match.group(1)), int(match.group(2))
        if not (1 <= x <= SIZE and 1 <= y <= SIZE):
            raise RecordError(f"line {index + 1}: {x},{y} is off the 15x15 board")
        stones.append(Stone(point_at(x - 1, SIZE - y)))
        index += 1
    names: list[str] = []
    info: dict[str, str] = {}
    rest = lines[index:]
    for at, line in enumerate(rest):
        if _PSQ_CODE.match(line):
            for after in rest[at + 1 :]:
                found = _PSQ_INFO.match(after.strip())
                if found and found.group(1) in PSQ_INFO_KEYS:
                    info[found.group(1)] = found.group(2).strip()
            break
        if len(names) < 2:
            names.append(line.strip())
    try:
        actions = _psq_actions(stones, info)
    except (NotationError, RecordError) as error:
        raise RecordError(f"PSQ info lines: {error}") from None
    return GameRecord(
        rule=info.get("rule") or rule,
        opening=info.get("opening") or None,
        actions=tuple(actions),
        black=names[0] if names else "",
        white=names[1] if len(names) > 1 else "",
    )


def _psq_actions(stones: list[Stone], info: dict[str, str]) -> list[Action]:
    """The actions of a PSQ record: its ``actions`` line when there is one (its stones must be the stone lines'),
    else the stones with the ``swap`` and ``alt`` decisions put back."""
    if "actions" not in info:
        return _rebuild_decisions(stones, info.get("alt", ""), info.get("swap", ""))
    actions = [parse_action(token) for token in info["actions"].split()]
    placed = [a.point for a in actions if isinstance(a, (Stone, Choose))]
    if placed != [s.point for s in stones]:
        raise RecordError("the 'actions' line places other stones than the stone lines")
    return actions


def write_psq(record: GameRecord, times_ms: list[int] | None = None) -> str:
    """The record as PSQ: the stones with their times, both names, the code line ``-1``, then, for a record with an
    opening protocol's decisions, the info lines (:data:`PSQ_INFO_KEYS`).  A pass is a RecordError."""
    if any(isinstance(a, Pass) for a in record.actions):
        raise RecordError(
            "PSQ gives each stone its colour by alternation: after a pass the stones would take the wrong colours "
            "(use RIF, which keeps every action)"
        )
    lines = [f"Piskvorky {SIZE}x{SIZE}, 11:11, 0"]
    for index, point in enumerate(record.stones()):
        ms = times_ms[index] if times_ms and index < len(times_ms) else 0
        lines.append(f"{column_of(point) + 1},{SIZE - row_of(point)},{ms}")
    lines += [_psq_name(record.black), _psq_name(record.white), "-1"]
    if any(not isinstance(a, Stone) for a in record.actions):
        offers = [a for a in record.actions if isinstance(a, Offer)]
        swaps, stones = [], 0
        for action in record.actions:
            if isinstance(action, (Stone, Choose)):
                stones += 1
            elif isinstance(action, Swap):
                swaps.append(str(stones))
        info = {
            "rule": record.rule, "opening": record.opening or "", "swap": " ".join(swaps),
            "alt": " ".join(format_point(p) for p in offers[-1].points) if offers else "",
            "actions": " ".join(record.tokens),
        }  # fmt: skip
        lines += [f"{key}: {value}" for key, value in info.items() if value]
    return "\n".join(lines) + "\n"


def _psq_name(name: str) -> str:
    """A name on one line that no PSQ reader takes for a stone or the code line."""
    text = " ".join(name.split())
    return "" if _PSQ_MOVE.match(text) or _PSQ_CODE.match(text) else text


def record_from_game(game: Game, black: str = "", white: str = "", **info: str) -> GameRecord:
    """The record of a game as played so far."""
    return GameRecord(
        rule=game.rules.name,
        opening=game.opening.name,
        actions=game.actions,
        black=black,
        white=white,
        result=game.outcome.result if game.outcome else None,
        info=dict(info),
    )
