"""The demo's knockout stage (``proctor demo --through-end``): a knockout that qualifies from a preliminary section
is drawn by the demo chief once the preliminaries are over (``POST …/bracket``), then played match by match from
``GET …/bracket`` (each match's next game, its play-off games included, with their own time controls) until the
final places are known (27.1, 28.4; regulations 2023 VII(3), VII(4)3).

A tie across the cut that every tie-break leaves level (the preliminaries' standings list it under ``play_offs``)
is decided by a play-off before the draw (VII(4)3): the service does not pair it, so the demo plays it as the
platform would, games of no pairing (two games at the play-off's first rate, one with each player first, then single
games at its second rate until one is won: engine.clock.PlayOff), and the chief gives the seeds it decided.
"""

from __future__ import annotations

from typing import Any, Final

import aiohttp

from engine.clock import PlayOff, find_time_control
from proctor.events import SectionSpec
from proctor.scripted_games import Pace, Seat
from proctor.simulate import PairedGame, PlayReport, SectionPlay, ServiceClient, play_pairings

MAX_STEPS: Final = 60
"""Rounds of next games a bracket may take before the demo gives up on it (a knockout of 8 takes 3 to 10)."""
MAX_PLAY_OFF_GAMES: Final = 12
PLATFORM: Final = "demo"


class KnockoutStage:
    """One knockout section, from its draw to its places."""

    def __init__(self, session: aiohttp.ClientSession, client: ServiceClient, base: str, secret: str,
                 spec: SectionSpec, section: SectionPlay, source: SectionPlay | None, report: PlayReport, seed: int,
                 pace: Pace) -> None:  # fmt: skip
        self.session, self.client, self.base, self.secret = session, client, base, secret
        self.spec, self.section, self.report, self.seed, self.pace = spec, section, report, seed, pace
        self.source = source
        """The preliminary section it qualifies from (None: the section lists its players)."""
        self.path = f"/api/v1/events/{section.event}/sections/{section.section}/bracket"
        self.played = 0

    async def play(self) -> list[str]:
        """Draw (when it is the demo's to draw) and play the bracket; the problems found, if any."""
        bracket = await self.client.request("GET", self.path)
        if not bracket["drawn"] and self.source is not None:
            await self.draw(self.source)
        for _ in range(MAX_STEPS):
            bracket = await self.client.request("GET", self.path)
            if bracket["finished"]:
                return self.check(bracket)
            if bracket["stuck"]:
                return [f"{self.section.place}: the bracket is stuck: {'; '.join(bracket['stuck'])}"]
            seats = await self.client.seats(self.section)
            games = [
                PairedGame(match["round"], match["board"], match["next"]["game"],
                           seats[match["next"]["black"]["start_no"]], seats[match["next"]["white"]["start_no"]],
                           match["next"]["time_control"])
                for match in bracket["matches"] if match["next"] is not None
            ]  # fmt: skip
            if not games:
                return [f"{self.section.place}: the bracket is not finished and has no game to play"]
            await self.games(games)
        return [f"{self.section.place}: the bracket is not finished after {MAX_STEPS} rounds of games"]

    async def games(self, games: list[PairedGame], section: SectionPlay | None = None) -> None:
        await play_pairings(self.session, self.base, PLATFORM, self.secret, section or self.section, games,
                            seed=self.seed,
                            real_time=False, pace=self.pace, games_per_match=self.spec.games_per_match,
                            report=self.report, offset=self.played)  # fmt: skip
        self.played += len(games)

    def check(self, bracket: dict[str, Any]) -> list[str]:
        places = bracket["places"]
        wanted = len(bracket["seeds"])
        if len(places) != wanted:
            return [f"{self.section.place}: {len(places)} place(s) for {wanted} player(s)"]
        shown = ", ".join(f"{p['label']}. seed no. {p['start_no']}" for p in places[:4])
        print(f"places {self.section.place}: {shown} …", flush=True)
        return []

    async def draw(self, source: SectionPlay) -> None:
        """The draw from the preliminaries' final standings, after the play-off of a tie at the cut if there is one."""
        assert self.spec.knockout is not None
        standings = await self.client.standings(source)
        order = [row["start_no"] for row in standings["rows"]]
        ties = [tie for tie in standings.get("play_offs", []) if tie["why"] == "qualification"]
        body: dict[str, Any] = {"reason": f"the demo: the top {self.spec.knockout.qualifiers} of {source.section}'s "
                                          "final standings, by place (regulations 2023 VII(3))"}  # fmt: skip
        if ties:
            seats = await self.client.seats(source)
            for tie in ties:
                tied = [player["start_no"] for player in tie["players"]]
                decided = await self.play_off(source, tied, seats)
                where = [order.index(no) for no in tied]
                for index, number in zip(sorted(where), decided, strict=True):
                    order[index] = number
            body = {"seeds": order[: self.spec.knockout.qualifiers],
                    "reason": f"the demo: the top {self.spec.knockout.qualifiers} of {source.section}, the tie at the "
                              "cut decided by its play-off (regulations 2023 VII(4)3)"}  # fmt: skip
        await self.client.request("POST", self.path, body)
        print(f"bracket {self.section.place}: drawn by the demo chief", flush=True)

    async def play_off(self, source: SectionPlay, tied: list[int], seats: dict[int, Seat]) -> list[int]:
        """The tied players in the order play-off matches put them (each new player against those above)."""
        ranked = [tied[0]]
        for player in tied[1:]:
            place = len(ranked)
            while place > 0 and await self.beats(source, player, ranked[place - 1], seats):
                place -= 1
            ranked.insert(place, player)
        print(f"play-off {source.place}, players no. {', '.join(map(str, tied))} tied at the cut: "
              f"{' ahead of '.join(map(str, ranked))}", flush=True)  # fmt: skip
        return ranked

    async def beats(self, source: SectionPlay, challenger: int, holder: int, seats: dict[int, Seat]) -> bool:
        """One play-off match (VII(4)3): the holder first in game 1, colours swapped each game, until decided."""
        assert self.spec.knockout is not None
        first, second = self.spec.knockout.play_off
        chain = PlayOff(find_time_control(first), find_time_control(second))
        scores: list[float] = []
        while not chain.decided(scores) and len(scores) < MAX_PLAY_OFF_GAMES:
            index = len(scores)
            black, white = (holder, challenger) if chain.first_player_is_original_first(index) else (challenger, holder)
            label = f"{source.event}-{source.section}-playoff-{holder}-{challenger}-{index + 1}"
            control = first if index < 2 else second
            await self.games([PairedGame(0, 0, index + 1, seats[black], seats[white], control, label)], source)
            result = self.report.results.get(label, "draw")
            holder_won = (result == "black") == (black == holder)
            scores.append(0.5 if result == "draw" else 1.0 if holder_won else 0.0)
        return sum(scores) < len(scores) / 2  # the challenger scored more
