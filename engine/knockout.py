"""Knockout competitions (27.1), multi-game matches (27.7) and knockout places (28.4).

**Bracket.** The field, listed by seed (seed 1 first), fills a bracket of 2^k slots, the smallest power of two that
holds it.  Slots follow the standard seeding: in round 1 seed s meets seed 2^k + 1 - s, and the matches are arranged
so that the better half of the seeds stays apart as long as possible (seeds 1 and 2 can meet only in the final, seeds
1-4 only from the semi-finals on; for 8: 1-8, 4-5, 2-7, 3-6).  When the field is not a power of two the missing seeds
are byes, so the top seeds get them: they go through round 1 without playing.

**Matches.** Round r, match m (1-based, top to bottom); the winner goes to match (m + 1) // 2 of round r + 1.  The
final is match 1 of the last round; a match for third place (28.4: "other places may be decided by play-off"), when
the event has one, is match 2 of the last round, between the two semi-final losers.

**Best of N (27.7).**  A match is a single game (``best_of=1``), the regulations' two-game pairing (``best_of=2``,
doc 002 双局制) or a multi-game decider, best of 3, 5 or 7 (27.7: 3局2胜 up to 7局4胜).  Every game scores 1, ½ or 0
(28.1: draws count half a point; a knockout keeps these values whatever 28.2 sets for the event's tables, 28.4).  A
player wins the match as soon as their score is more than half of N: best of 3 → 2 points (e.g. 1 + 1, or ½ + ½ + 1),
best of 7 → 4 points.  No more games are played then, because the opponent can no longer reach as much.  Draws are
not replayed within the N games, so they use up the match: if all N games are played and nobody has more than N/2,
the players are level on exactly N/2 each (e.g. three draws, or win, loss, draw in a best of 3), and the match is
*tied*.

**Colours (10.1.3).**  The first player of a match's first game is decided as for a single game (10.1.2: by guessing,
10.3); until :meth:`Knockout.decide_first_player` records it, it is the player in the upper slot of the match.  After
that the players alternate game by game, through the regular games and on into the play-off.

**Play-off (regulations, :class:`engine.clock.PlayOff`).**  A tied match (a drawn single game included: "during the
finals every draw requires a play-off") goes to the play-off chain: two games at 5 min + 3 s, one with each player
first, and if they do not separate the players, single games at 3 min + 2 s until one is won.  Colours keep
alternating: play-off game 0 goes to the player who would have been first in the next regular game.  Each play-off
game's time control is ``PlayOff.game(index)``; :meth:`Match.next_game` gives it with the players' order.

**Places (28.4).**  The champion is first; a player eliminated later ranks above one eliminated earlier.  Players
eliminated in the same round share the place: a loser in round r is placed 2^(k-r) + 1 (final 2, semi-finals 3,
quarter-finals 5, ...), the place shared by everyone who lost in that round.  With a match for third place the two
semi-final losers are 3rd and 4th by its result instead.

All values are immutable: every operation returns a new :class:`Knockout` and leaves the old one as it was; a refused
operation raises :class:`KnockoutError` (a :class:`engine.standings.StandingsError`) and changes nothing.
"""

from __future__ import annotations

import enum
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from fractions import Fraction
from typing import Final

from engine.clock import PlayOff, TimeControl
from engine.standings import StandingsError

MATCH_LENGTHS: Final = (1, 2, 3, 5, 7)
"""Games per match: a single game, the regulations' two-game pairing, best of 3, 5 or 7 (27.7)."""


class KnockoutError(StandingsError):
    """A knockout operation that the bracket's state or the rules do not allow; nothing was changed."""


# --- Seeding ---------------------------------------------------------------------------------------------------------


def bracket_order(size: int) -> tuple[int, ...]:
    """Seed numbers slot by slot in a bracket of ``size`` (a power of two): adjacent slots meet in round 1, e.g.
    8 → (1, 8, 4, 5, 2, 7, 3, 6)."""
    if size < 2 or size & (size - 1):
        raise KnockoutError(f"a bracket has a power of two of slots (2, 4, 8, ...), not {size}")
    order = [1]
    while len(order) < size:
        total = 2 * len(order) + 1
        order = [seed for upper in order for seed in (upper, total - upper)]
    return tuple(order)


def seeded_bracket(seeds: Sequence[int]) -> tuple[int | None, ...]:
    """The players slot by slot (None for a bye) for the field ``seeds`` listed by seed, in the smallest bracket of
    2^k slots that holds it (27.1)."""
    _check_field(seeds)
    size = 1 << max(1, (len(seeds) - 1).bit_length())
    return tuple(seeds[seed - 1] if seed <= len(seeds) else None for seed in bracket_order(size))


def _check_field(seeds: Sequence[int]) -> None:
    if len(seeds) < 2:
        raise KnockoutError(f"a knockout needs at least 2 players (27.1), got {len(seeds)}")
    repeated = sorted(player for player, count in Counter(seeds).items() if count > 1)
    if repeated:
        raise KnockoutError(f"players listed more than once in the seeding: {', '.join(map(str, repeated))}")


def _check_match_length(best_of: int, what: str) -> None:
    if best_of not in MATCH_LENGTHS:
        raise KnockoutError(
            f"{what}: a match is a single game, the regulations' two games, or best of 3, 5 or 7 (27.7), not best of "
            f"{best_of}"
        )


# --- Games and matches -----------------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class GameRecord:
    """One game of a match: who was first and second (10.1.3), the winner (None for a draw)."""

    first: int
    second: int
    winner: int | None
    forfeit: bool = False
    """Won without play (28.3: "+" / "-" in the results table)."""
    play_off_index: int | None = None
    """The game's index in the play-off chain (0-based); None for the match's regular games."""
    time_control: TimeControl | None = None
    """The play-off game's time control; None for regular games (the event's own control)."""

    @property
    def is_play_off(self) -> bool:
        return self.play_off_index is not None

    def points_of(self, player: int) -> Fraction:
        """1, ½ or 0 (28.1)."""
        if self.winner is None:
            return Fraction(1, 2)
        return Fraction(1) if self.winner == player else Fraction(0)


@dataclass(frozen=True, slots=True)
class NextGame:
    """The game a match plays next: its number in the match (1-based, play-off games included), who is first and
    second, and for play-off games the index in the chain and the time control."""

    number: int
    first: int
    second: int
    play_off_index: int | None = None
    time_control: TimeControl | None = None
    """None: the event's own time control (a regular game)."""


class MatchStatus(enum.Enum):
    WAITING = "waiting"
    """A player is still to come from an earlier match."""
    PLAYING = "playing"
    """Both players are known and the regular games are due (none played yet, or some)."""
    PLAY_OFF = "play-off"
    """The regular games ended level: the play-off chain is under way."""
    DECIDED = "decided"


@dataclass(frozen=True, slots=True)
class Match:
    round_no: int
    number: int
    players: tuple[int | None, int | None]
    """(upper slot, lower slot); None while the player is to come from an earlier match, or for a bye."""
    best_of: int = 1
    play_off: PlayOff = field(default_factory=PlayOff)
    games: tuple[GameRecord, ...] = ()
    """Every game played, the play-off's included, in order."""
    chosen_first: int | None = None
    """The first player of game 1 (10.1.2) when decided; otherwise the upper slot's player."""
    walkover: int | None = None
    """The winner, when the match was awarded without being played out."""
    bye: bool = False
    """Round 1 with one player only: that player goes through without playing."""
    third_place: bool = False

    @property
    def label(self) -> str:
        if self.third_place:
            return "the match for third place"
        return f"round {self.round_no} match {self.number}"

    def has(self, player: int) -> bool:
        return player in self.players

    def opponent_of(self, player: int) -> int | None:
        upper, lower = self.players
        if player == upper:
            return lower
        if player == lower:
            return upper
        raise KnockoutError(f"player {player} does not play in {self.label}")

    @property
    def regular_games(self) -> tuple[GameRecord, ...]:
        return tuple(game for game in self.games if not game.is_play_off)

    @property
    def play_off_games(self) -> tuple[GameRecord, ...]:
        return tuple(game for game in self.games if game.is_play_off)

    def score(self, player: int) -> Fraction:
        """``player``'s points in the regular games (28.1)."""
        self._require(player)
        return sum((game.points_of(player) for game in self.regular_games), Fraction(0))

    def play_off_score(self, player: int) -> Fraction:
        """``player``'s points in the play-off games (28.1)."""
        self._require(player)
        return sum((game.points_of(player) for game in self.play_off_games), Fraction(0))

    def _require(self, player: int) -> None:
        if not self.has(player):
            raise KnockoutError(f"player {player} does not play in {self.label}")

    def _other(self, player: int) -> int:
        """The opponent of ``player`` in a match whose two players are known."""
        other = self.opponent_of(player)
        assert other is not None, f"{self.label} has one player only"
        return other

    @property
    def first_in_game_one(self) -> int | None:
        return self.chosen_first if self.chosen_first is not None else self.players[0]

    def _regular_winner(self) -> int | None:
        """The player with more than half of ``best_of`` points (27.7), if any."""
        for player in self.players:
            if player is not None and 2 * self.score(player) > self.best_of:
                return player
        return None

    def _first_in_regular_game(self, index: int) -> int:
        """The first player of regular game ``index`` (0-based): game 1's, then alternating (10.1.3)."""
        first = self.first_in_game_one
        assert first is not None, f"{self.label} has no players yet"
        return first if index % 2 == 0 else self._other(first)

    def _play_off_first(self) -> int:
        """Play-off game 0's first player: whoever would be first in the next regular game (10.1.3)."""
        return self._first_in_regular_game(len(self.regular_games))

    def _play_off_winner(self) -> int | None:
        games = self.play_off_games
        if not games:
            return None
        first = self._play_off_first()
        # PlayOff takes each game's points of play-off game 0's first player; 1, ½ and 0 are exact in binary.
        points = [float(game.points_of(first)) for game in games]
        if not self.play_off.decided(points):
            return None
        # Decided: the players' play-off totals differ (two games not 1-1, or a single game won after level ones).
        second = self._other(first)
        return first if self.play_off_score(first) > self.play_off_score(second) else second

    @property
    def winner(self) -> int | None:
        if self.walkover is not None:
            return self.walkover
        if self.bye:
            return self.players[0] if self.players[0] is not None else self.players[1]
        if None in self.players:
            return None
        regular = self._regular_winner()
        return regular if regular is not None else self._play_off_winner()

    @property
    def loser(self) -> int | None:
        """The player the match eliminated (None before the decision, and for a bye)."""
        winner = self.winner
        if winner is None or self.bye:
            return None
        return self.opponent_of(winner)

    @property
    def tied(self) -> bool:
        """All regular games played and the players level on N/2 each: the play-off decides (regulations)."""
        return len(self.regular_games) == self.best_of and self._regular_winner() is None and self.walkover is None

    @property
    def status(self) -> MatchStatus:
        if self.winner is not None:
            return MatchStatus.DECIDED
        if None in self.players:
            return MatchStatus.WAITING
        return MatchStatus.PLAY_OFF if self.tied else MatchStatus.PLAYING

    def next_game(self) -> NextGame | None:
        """The next game to play, with its colours (10.1.3) and for play-off games its time control; None when the
        match is decided or still waits for a player."""
        if self.status not in (MatchStatus.PLAYING, MatchStatus.PLAY_OFF):
            return None
        number = len(self.games) + 1
        if self.status is MatchStatus.PLAYING:
            first = self._first_in_regular_game(len(self.regular_games))
            return NextGame(number, first, self._other(first))
        index = len(self.play_off_games)
        first = self._play_off_first()
        if not self.play_off.first_player_is_original_first(index):
            first = self._other(first)
        return NextGame(number, first, self._other(first), index, self.play_off.game(index))


# --- Places ----------------------------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Placing:
    """A player's final place (28.4); ``shared_by`` players share it (places ``place`` to ``place + shared_by - 1``)."""

    player: int
    place: int
    shared_by: int = 1
    eliminated_in: int | None = None
    """The round the player lost (None for the champion)."""

    @property
    def label(self) -> str:
        """The place as printed: e.g. ``"3"``, or ``"5–8"`` when shared."""
        if self.shared_by == 1:
            return str(self.place)
        return f"{self.place}–{self.place + self.shared_by - 1}"


# --- The knockout ----------------------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Knockout:
    """A single-elimination knockout (27.1): the field by seed, and every match of the bracket by round."""

    seeds: tuple[int, ...]
    rounds: int
    """k, for a bracket of 2^k slots."""
    matches: tuple[Match, ...]
    """Round by round, top to bottom; the match for third place (if any) last."""

    @classmethod
    def create(
        cls,
        seeds: Sequence[int],
        *,
        best_of: int = 1,
        final_best_of: int | None = None,
        third_place_match: bool = False,
        third_place_best_of: int | None = None,
        play_off: PlayOff | None = None,
    ) -> Knockout:
        """A knockout of ``seeds`` (start numbers, seed 1 first), byes already through.  ``best_of``: games per
        match; ``final_best_of``: the final's, when it is a multi-game decider (27.7); ``third_place_match``: play
        for third place (28.4), over ``third_place_best_of`` games (default ``best_of``)."""
        slots = seeded_bracket(seeds)
        final_length = best_of if final_best_of is None else final_best_of
        third_length = best_of if third_place_best_of is None else third_place_best_of
        _check_match_length(best_of, "best_of")
        _check_match_length(final_length, "the final")
        _check_match_length(third_length, "the match for third place")
        rounds = (len(slots) - 1).bit_length()
        if third_place_match and len(seeds) < 4:
            raise KnockoutError(
                f"a match for third place needs two semi-finals with losers: at least 4 players, not {len(seeds)}"
            )
        chain = play_off if play_off is not None else PlayOff()
        matches = []
        for round_no in range(1, rounds + 1):
            length = final_length if round_no == rounds else best_of
            for number in range(1, (len(slots) >> round_no) + 1):
                players: tuple[int | None, int | None] = (None, None)
                bye = False
                if round_no == 1:
                    players = (slots[2 * number - 2], slots[2 * number - 1])
                    bye = None in players
                matches.append(Match(round_no, number, players, length, chain, bye=bye))
        if third_place_match:
            matches.append(Match(rounds, 2, (None, None), third_length, chain, third_place=True))
        knockout = cls(tuple(seeds), rounds, tuple(matches))
        for match in knockout.round(1):
            if match.bye:
                knockout = knockout._advance(match)
        return knockout

    # --- Queries ---------------------------------------------------------------------------------------------

    def match(self, round_no: int, number: int) -> Match:
        return self.matches[self._index(round_no, number)]

    def round(self, round_no: int) -> tuple[Match, ...]:
        """The bracket's matches of ``round_no`` (the match for third place is not among them: :meth:`match`)."""
        if not 1 <= round_no <= self.rounds:
            raise KnockoutError(f"round {round_no} does not exist: the knockout has rounds 1 to {self.rounds}")
        return tuple(m for m in self.matches if m.round_no == round_no and not m.third_place)

    @property
    def final(self) -> Match:
        return self.match(self.rounds, 1)

    @property
    def third_place(self) -> Match | None:
        return next((m for m in self.matches if m.third_place), None)

    def matches_to_play(self) -> tuple[Match, ...]:
        """The matches with both players known and no decision yet."""
        return tuple(m for m in self.matches if m.status in (MatchStatus.PLAYING, MatchStatus.PLAY_OFF))

    @property
    def champion(self) -> int | None:
        """The player never eliminated (27.1), once the final is decided."""
        return self.final.winner

    @property
    def finished(self) -> bool:
        return all(m.status is MatchStatus.DECIDED for m in self.matches)

    def _index(self, round_no: int, number: int) -> int:
        for i, match in enumerate(self.matches):
            if match.round_no == round_no and match.number == number:
                return i
        if not 1 <= round_no <= self.rounds:
            raise KnockoutError(f"round {round_no} does not exist: the knockout has rounds 1 to {self.rounds}")
        count = sum(1 for m in self.matches if m.round_no == round_no)
        raise KnockoutError(f"match {number} does not exist: round {round_no} has matches 1 to {count}")

    # --- Operations --------------------------------------------------------------------------------------------

    def decide_first_player(self, round_no: int, number: int, player: int) -> Knockout:
        """Record who is first in the match's game 1 (10.1.2, by guessing 10.3); only before the first game."""
        match = self._playable(round_no, number)
        if not match.has(player):
            raise KnockoutError(f"player {player} does not play in {match.label} ({_names(match)})")
        if match.games:
            raise KnockoutError(
                f"{match.label} has begun: the first player is fixed and colours alternate game by game (10.1.3)"
            )
        return self._replace(replace(match, chosen_first=player))

    def record_game(self, round_no: int, number: int, winner: int | None, *, forfeit: bool = False) -> Knockout:
        """Record the next game of a match: its ``winner``, or None for a draw; ``forfeit``: won without play (28.3).
        A decided match sends its winner on (and a semi-final loser to the match for third place)."""
        match = self._playable(round_no, number)
        if winner is not None and not match.has(winner):
            raise KnockoutError(f"player {winner} does not play in {match.label} ({_names(match)})")
        if forfeit and winner is None:
            raise KnockoutError("a game won without play (28.3) has a winner: a forfeit cannot be a draw")
        upcoming = match.next_game()
        assert upcoming is not None
        game = GameRecord(
            upcoming.first, upcoming.second, winner, forfeit, upcoming.play_off_index, upcoming.time_control
        )
        played = replace(match, games=(*match.games, game))
        return self._replace(played)._advance(played)

    def record_walkover(self, round_no: int, number: int, winner: int) -> Knockout:
        """Award the match to ``winner`` without playing it out (the opponent is absent or withdrew, 28.3)."""
        match = self._playable(round_no, number)
        if not match.has(winner):
            raise KnockoutError(f"player {winner} does not play in {match.label} ({_names(match)})")
        awarded = replace(match, walkover=winner)
        return self._replace(awarded)._advance(awarded)

    def _playable(self, round_no: int, number: int) -> Match:
        match = self.match(round_no, number)
        status = match.status
        if status is MatchStatus.WAITING:
            raise KnockoutError(f"{match.label} is not ready: {self._waiting_for(match)}")
        if status is MatchStatus.DECIDED:
            if match.bye:
                raise KnockoutError(f"{match.label} is a bye: player {match.winner} goes through without playing")
            raise KnockoutError(f"{match.label} is already decided: player {match.winner} won it")
        return match

    def _waiting_for(self, match: Match) -> str:
        if match.third_place:
            return "it waits for both semi-finals to be decided"
        missing = [
            f"the winner of round {match.round_no - 1} match {2 * match.number - 1 + slot}"
            for slot in (0, 1)
            if match.players[slot] is None
        ]
        return "it waits for " + " and ".join(missing)

    def _replace(self, match: Match) -> Knockout:
        index = self._index(match.round_no, match.number)
        matches = (*self.matches[:index], match, *self.matches[index + 1 :])
        return replace(self, matches=matches)

    def _advance(self, match: Match) -> Knockout:
        """Send a decided match's winner to the next round, and a semi-final loser to the match for third place."""
        winner = match.winner
        if winner is None or match.third_place or match.round_no == self.rounds:
            return self
        slot = (match.number - 1) % 2
        following = self.match(match.round_no + 1, (match.number + 1) // 2)
        knockout = self._replace(_seat(following, slot, winner))
        third = knockout.third_place
        if third is not None and match.round_no == self.rounds - 1:
            loser = match.loser
            assert loser is not None
            knockout = knockout._replace(_seat(third, slot, loser))
        return knockout

    # --- Places (28.4) -----------------------------------------------------------------------------------------

    def eliminated_in(self, player: int) -> int | None:
        """The round in which ``player`` lost a bracket match; None while still in (or for the champion)."""
        self._check_player(player)
        for match in self.matches:
            if not match.third_place and match.loser == player:
                return match.round_no
        return None

    def place_of(self, player: int) -> int | None:
        """``player``'s place (28.4) as far as decided: 1 for the champion, 2^(k-r) + 1 for a loser in round r (3 and
        4 by the match for third place, when there is one); None while it is still open."""
        round_lost = self.eliminated_in(player)
        if round_lost is None:
            return 1 if self.champion == player else None
        third = self.third_place
        if third is not None and round_lost == self.rounds - 1:
            if third.winner is None:
                return None
            return 3 if third.winner == player else 4
        return (1 << (self.rounds - round_lost)) + 1

    def places(self) -> tuple[Placing, ...]:
        """Every player's place once the knockout is finished (28.4): by place, then by seed."""
        if not self.finished:
            open_matches = ", ".join(m.label for m in self.matches if m.status is not MatchStatus.DECIDED)
            raise KnockoutError(f"places are known when the knockout is finished; still open: {open_matches}")
        placed = []
        for player in self.seeds:
            place = self.place_of(player)
            assert place is not None
            placed.append((place, player))
        counts = {place: sum(1 for other, _ in placed if other == place) for place, _ in placed}
        ordered = sorted(placed, key=lambda item: (item[0], self.seeds.index(item[1])))
        return tuple(Placing(player, place, counts[place], self.eliminated_in(player)) for place, player in ordered)

    def _check_player(self, player: int) -> None:
        if player not in self.seeds:
            raise KnockoutError(f"player {player} is not in the knockout")


def _seat(match: Match, slot: int, player: int) -> Match:
    players = (player, match.players[1]) if slot == 0 else (match.players[0], player)
    return replace(match, players=players)


def _names(match: Match) -> str:
    upper, lower = match.players
    return f"{upper} v {lower}"
