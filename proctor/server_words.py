"""The server's own words in both languages, Chinese (the default) and English, beside each text it sends that a user
reads: an incident's (and so a case's) summary, a line of a game's timeline, and the answer to an arbiter's action
on a game.  Each is rendered here from structured facts (a kind and what is stored with it: the incident's source,
evidence and article; the engine's log entry with the game before and after it), as ``{"zh": ..., "en": ...}``, so a
page picks its language.  Stored rows are never rewritten: the words are said at read time; a row older than its
facts (only an English summary) is said in Chinese by its kind and in English as it was stored.  User data (names,
an arbiter's or a player's own words) is shown as written in both.  Clocks are mm:ss, durations in words, articles
named.  Pure."""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Final

from engine.adjudication import Adjudication, LogEntry
from engine.game import Outcome
from engine.openings import Player
from proctor.report_words import LANGUAGES, WORDS, Words

Bilingual = dict[str, str]
"""``{"zh": ..., "en": ...}``: one text in each of :data:`proctor.report_words.LANGUAGES`."""

SAID: Final[Mapping[str, Mapping[str, str]]] = {
    "zh": {
        # Camera findings (video.checks.Check), from the detector's detail when it gives the figures.
        "camera.left-area": "镜头前无人（离开比赛区域）",
        "camera.extra-person": "画面中有他人",
        "camera.extra-person.faces": "画面中有 {n} 张脸",
        "camera.extra-person.edge": "画面中有 {n} 张脸（{e} 张在画面边缘）",
        "camera.extra-person.body": "画面中有另一人的身体（占画面 {p}），未见其脸",
        "camera.camera-covered": "摄像头被遮挡：画面过暗或过于平淡",
        "camera.camera-covered.figures": "摄像头被遮挡：亮度 {b}，对比度 {c}",
        "camera.camera-frozen": "画面静止不动",
        "camera.camera-lost": "摄像头无画面",
        "camera.virtual-background": "背景完全不动，疑为虚拟背景（请进行转动检查）",
        "camera.virtual-background.figures": "背景完全不动，疑为虚拟背景：下部三分之一变化 {change}，亮度波动 {bright}"
        "{person}，统计 {window}（请进行转动检查）",
        "camera.virtual-background.person": "，人物亮度波动 {v}",
        "camera.virtual-background.exposure": "背景不随摄像头曝光变化，疑为虚拟背景：{window}内背景亮度变化不超过 "
        "{room}，而人物亮度变化 {person}（请进行转动检查）",
        "camera.background-blurred": "背景被虚化（第 36.4 条：周围环境须可见）",
        "camera.background-blurred.figures": "背景被虚化：背景边缘清晰度 {bg}，人物 {person}"
        "（第 36.4 条：周围环境须可见）",
        "camera.other": "摄像头检测：{kind}",
        # Rule and feed incidents.
        "feed-gap": "数据流缺口：序号 {seq} 未到，后续 {n} 个事件暂存",
        "feed-gap.for": "数据流缺口：序号 {seq} 已 {d} 未到，后续 {n} 个事件暂存",
        "clock-mismatch": "序号 {seq} 之后平台显示 {platform}，服务为 {service}（差 {d}）",
        "clock-mismatch.who": "序号 {seq} 之后平台显示 {platform}，服务为 {service}（差 {d}，{who}时钟）",
        "platform-disagreement": "平台接受了规则拒绝的{what}（序号 {seq}，{article}）",
        "platform-disagreement.over": "平台在服务裁决之后又发送了{what}（序号 {seq}，{article}）",
        "result-mismatch": "平台报告{claim}（{why}）；服务{ours}",
        "result-mismatch.none": "尚无结果",
        "result-mismatch.ours": "的结果为{result}（{reason}，{article}）",
        "result-mismatch.reason.none": "未给理由",
        "pairing-mismatch": "平台的对局与编排不符：{what}",
        "pairing-mismatch.seats": "座位（黑方、白方）不同",
        "pairing-mismatch.rule": "规则或开局不同",
        "pairing-mismatch.time": "用时制度不同",
        "pairing-mismatch.other": "见英文说明",
        "second-connection": "棋手的摄像头已在直播时又有第二个连接：已拒绝，保留第一个"
        "（另一设备，或他人持有棋手的链接）",
        "second-connection.device": "棋手的{device}已在直播时又有第二个连接：已拒绝，保留第一个"
        "（另一设备，或他人持有棋手的链接）",
        "screen-share-stopped": "对局结束前屏幕共享停止（第36.4.4条）",
        "analysis-gap": "{device}有 {d} 未经自动检测（一个分析进程停止，由另一个接手；非棋手原因）",
        "screen-share-stopped.player": "对局结束前棋手停止了屏幕共享（第36.4.4条）",
        "camera.camera-moved": "摄像头已离开批准时的位置（桌面和设备不再在原处）",
        "camera.screen-changed": "共享的屏幕不再显示批准时的内容（比赛平台的棋盘）：供审查的提示",
        "camera.voice": "听到不是选手本人的说话声（说话时选手嘴部未动或不在画面中）：请听录音片段（提示，不是处罚）",
        "camera.microphone-muted": "麦克风静音（只有无声信号）",
        "camera.microphone-lost": "麦克风无声音",
        "device.front": "前置摄像头", "device.side": "侧面摄像头", "device.screen": "屏幕共享",
        "device.said": "{device}：{what}",
        "leave-request": "申请离开比赛区域",
        "arbiter-call": "呼叫裁判",
        "player.because": "{what}：{note}",
        "prompt.asked": "{prompt}（{article}）：裁判要求进行（{d}）",
        "prompt.asked.bare": "{prompt}（{article}）：已要求进行",
        "prompt.ear.scheduled": "耳部检查（{article}，{occasion}）：{what}",
        "prompt.ear.usable": "请根据头部左右转到最远时的静态画面判断双耳；见到耳机则确认（{article}），否则驳回",
        "prompt.ear.unusable": "没有可用的耳部画面：请再次要求",
        "occasion.start": "对局开始时", "occasion.random": "随机时间",
        "prompt.ear-check": "耳部检查", "prompt.room-scan": "环境检查", "prompt.pan-check": "转动检查",
        "verdict-pending": "待确认的裁决：{reason}（{article}）",
        "incident.other": "{kind}",
        "feed.forbidden.claimed": "指出禁手",
        "feed.move": "着法", "feed.resign": "认输", "feed.draw.offered": "提和", "feed.draw.accepted": "接受和棋",
        "feed.draw.declined": "拒绝和棋", "feed.player.joined": "棋手进入", "feed.player.disconnected": "棋手断线",
        "feed.player.reconnected": "棋手重连", "feed.opening.swap": "开局交换", "feed.opening.keep": "开局不交换",
        "feed.opening.declare": "开局打点数声明", "feed.opening.candidates": "开局打点",
        "feed.opening.choice": "开局选择",
        "feed.opening.add2": "开局加两子",
        "feed.other": "事件（{type}）",
        # The game's timeline: the engine's log lines.
        "line.start": "对局开始，先行方计时开始",
        "line.arrival": "{who}进入对局",
        "line.arrival.late": "{who}进入对局，迟到 {d}（已扣除，第 14.3 条）",
        "line.reconnected": "{who}已重新连接",
        "line.disconnected": "{who}与平台断开连接，计时继续",
        "line.feed-anomaly": "{who}在数据流报告其缺席或断线期间走棋，视为已重新连接",
        "line.draw-offered": "{who}提和",
        "line.draw-declined": "{who}拒绝和棋",
        "line.clock-paused": "裁判停止计时：{clocks}",
        "line.clock-resumed": "裁判恢复计时：{clocks}",
        "line.time-adjusted": "{who}：时钟 {before} → {after}（{change}）",
        "line.time-adjusted.added": "增加 {d}", "line.time-adjusted.removed": "减少 {d}",
        "line.shared-time-split": "共用时间平分：各 {each}，包干",
        "line.suspended": "对局中止：局面和用时已封存",
        "line.suspended.round": "本轮中止：局面和用时已封存",
        "line.suspended.sealed": "，封手已记录",
        "line.resumed": "以封存的局面和用时继续对局",
        "line.verdict-pending": "待裁判确认的裁决：{verdict}",
        "line.verdict-pending.both": "双方在重连时限后仍未连接：由裁判决定（平台故障绝不自动判负）",
        "line.verdict": "裁决：{verdict}",
        "line.verdict-overruled": "裁决被推翻：{verdict}；对局继续",
        "line.verdict-overruled.given": "；{who}：时钟 {before} → {after}（{change}）",
        "line.penalty": "{penalty}：{who}（{articles}）",
        "line.penalty.step": "本局第 {n} 次违反第 {offence} 条",
        "line.disciplinary-loss": "{who}因违纪判负；对手已确认的结果不变",
        "line.both-lose": "{who}被判负；双方均已判负（15.3）",
        "line.result-confirmed": "结果已确认：{verdict}",
        "line.result-declared": "裁判宣布结果：{verdict}",
        "line.other": "对局记录（{kind}）",
        "late-delivery": "迟到的{what}（序号 {seq}，时间戳早于裁定 {d}）未按其时间补入：{why}；请裁判决定",
        "late-delivery.acted": "此后裁判已处理过本局",
        "late-delivery.window": "裁定已超过 {d}",
        "late-delivery.replay": "补入后对局无法按规则重演",
        "verdict-revised": "迟到的{what}（序号 {seq}，时间戳早于裁定 {d}）已按其时间补入：原裁定（{old}）撤销；{now}",
        "line.revision": "迟到的平台消息已按其时间戳补入，对局重新裁定：原裁定（{old}）撤销；{now}",
        "line.revision.bare": "迟到的平台消息已按其时间戳补入，对局重新裁定",
        "revision.now": "现为{verdict}",
        "revision.goes-on": "对局继续",
        "line.time-adjusted.bare": "裁判调整了用时", "line.shared-time-split.bare": "共用时间已平分，各自包干",
        "line.penalty.bare": "判罚",
        "verdict": "{reason}，{result}",
        "seat.first": "先行方", "seat.second": "后行方",
        "who": "{colour}（{name}）",
        "clocks": "{first} · {second}",
        "clock": "{colour} {clock}",
    },
    "en": {
        "camera.left-area": "nobody in front of the camera (left the area)",
        "camera.extra-person": "another person in view",
        "camera.extra-person.faces": "{n} faces in view",
        "camera.extra-person.edge": "{n} faces in view ({e} at the frame's edge)",
        "camera.extra-person.body": "another body in view ({p} of the frame), no face",
        "camera.camera-covered": "the camera is covered: the picture is too dark or too flat",
        "camera.camera-covered.figures": "the camera is covered: brightness {b}, contrast {c}",
        "camera.camera-frozen": "the picture does not change at all",
        "camera.camera-lost": "no picture from the camera",
        "camera.virtual-background": "the background does not move: a virtual background? (ask for the pan check)",
        "camera.virtual-background.figures": "the background does not move: its lower-third change {change}, its "
        "brightness varies by {bright}{person} over {window} (ask for the pan check)",
        "camera.virtual-background.person": ", the person's by {v}",
        "camera.virtual-background.exposure": "the background does not follow the camera: its brightness stayed "
        "within {room} over {window} while the person's changed by {person} (ask for the pan check)",
        "camera.background-blurred": "the background is blurred (36.4: the surroundings must be visible)",
        "camera.background-blurred.figures": "the background is blurred: its edges' sharpness {bg} against the "
        "person's {person} (36.4: the surroundings must be visible)",
        "camera.other": "camera check: {kind}",
        "feed-gap": "feed gap: seq {seq} has not arrived; {n} later event(s) held",
        "feed-gap.for": "feed gap: seq {seq} has not arrived for {d}; {n} later event(s) held",
        "clock-mismatch": "after seq {seq} the platform shows {platform}, the service {service} ({d})",
        "clock-mismatch.who": "after seq {seq} the platform shows {platform}, the service {service} ({d} on {who}'s "
        "clock)",
        "platform-disagreement": "the platform accepted a {what} (seq {seq}) that the rules refuse ({article})",
        "platform-disagreement.over": "the platform sent a {what} (seq {seq}) after the service's verdict ({article})",
        "result-mismatch": "the platform claims {claim} ({why}); the service {ours}",
        "result-mismatch.none": "has no result yet",
        "result-mismatch.ours": "has {result} ({reason}, {article})",
        "result-mismatch.reason.none": "no reason given",
        "pairing-mismatch": "the platform's game does not match the pairing: {what}",
        "pairing-mismatch.seats": "the seats (Black, White) differ",
        "pairing-mismatch.rule": "the rule or the opening differs",
        "pairing-mismatch.time": "the time control differs",
        "pairing-mismatch.other": "see the details",
        "second-connection": "a second camera connection was offered while the player's first is live; it was "
        "refused and the first kept (another device, or someone else with the player's link)",
        "second-connection.device": "a second connection of the player's {device} was offered while the first is live; "
        "it was refused and the first kept (another device, or someone else with the player's link)",
        "screen-share-stopped": "the screen share stopped before the player's game was over (36.4.4)",
        "analysis-gap": "the player's {device} went unchecked for {d} (an analysis worker stopped and another took "
        "it over; not the player's doing)",
        "screen-share-stopped.player": "the player stopped sharing the screen before their game was over (36.4.4)",
        "camera.camera-moved": "the camera moved from its approved view (the desk and the device no longer where "
        "they were)",
        "camera.screen-changed": "the shared screen no longer shows what was approved (the platform's board): a "
        "review flag",
        "camera.voice": "speech heard that is not the player's own (their mouth still, or not in view): listen to the "
        "clip (a review flag, not a penalty)",
        "camera.microphone-muted": "the microphone sends only silence (muted)",
        "camera.microphone-lost": "no sound from the microphone",
        "device.front": "front camera", "device.side": "side camera", "device.screen": "screen share",
        "device.said": "{device}: {what}",
        "leave-request": "asks to leave the competition area",
        "arbiter-call": "calls the arbiter",
        "player.because": "{what}: {note}",
        "prompt.asked": "{prompt} ({article}): the arbiter asked for it ({d})",
        "prompt.asked.bare": "{prompt} ({article}): asked for",
        "prompt.ear.scheduled": "Ear check ({article}, {occasion}): {what}",
        "prompt.ear.usable": "judge both ears from the stills of the head turned furthest left and right; confirm "
        "if earphones are seen ({article}), else dismiss",
        "prompt.ear.unusable": "no usable ear view: ask again",
        "occasion.start": "at the start of the game", "occasion.random": "at a random time",
        "prompt.ear-check": "Ear check", "prompt.room-scan": "Room scan", "prompt.pan-check": "Pan check",
        "verdict-pending": "verdict to confirm: {reason} ({article})",
        "incident.other": "{kind}",
        "feed.forbidden.claimed": "forbidden-move claim",
        "feed.move": "move", "feed.resign": "resignation", "feed.draw.offered": "draw offer",
        "feed.draw.accepted": "draw acceptance", "feed.draw.declined": "draw refusal",
        "feed.player.joined": "player's arrival", "feed.player.disconnected": "player's disconnection",
        "feed.player.reconnected": "player's reconnection", "feed.opening.swap": "opening swap",
        "feed.opening.keep": "opening keep", "feed.opening.declare": "declared number of fifth moves",
        "feed.opening.candidates": "fifth-move candidates", "feed.opening.choice": "opening choice",
        "feed.opening.add2": "two added stones",
        "feed.other": "event ({type})",
        "line.start": "the game starts; the first player's clock runs",
        "line.arrival": "{who} entered the game",
        "line.arrival.late": "{who} entered the game, {d} late (deducted, 14.3)",
        "line.reconnected": "{who} reconnected",
        "line.disconnected": "{who} lost the platform; the clock runs on",
        "line.feed-anomaly": "a move came from {who} while the feed reported them absent or disconnected; taken as "
        "a reconnection",
        "line.draw-offered": "{who} offered a draw",
        "line.draw-declined": "{who} declined the draw",
        "line.clock-paused": "the arbiter stopped the clocks: {clocks}",
        "line.clock-resumed": "the arbiter restarted the clocks: {clocks}",
        "line.time-adjusted": "{who}: clock {before} → {after} ({change})",
        "line.time-adjusted.added": "{d} added", "line.time-adjusted.removed": "{d} removed",
        "line.shared-time-split": "shared time split: {each} each, sudden death",
        "line.suspended": "the game is suspended: position and clocks sealed",
        "line.suspended.round": "the round is suspended: position and clocks sealed",
        "line.suspended.sealed": ", sealed move recorded",
        "line.resumed": "play resumes with the sealed position and clocks",
        "line.verdict-pending": "verdict awaiting the arbiter: {verdict}",
        "line.verdict-pending.both": "both players stayed disconnected past the reconnect window: the arbiter decides "
        "(a platform outage is never an automatic loss)",
        "line.verdict": "verdict: {verdict}",
        "line.verdict-overruled": "verdict overruled: {verdict}; play on",
        "line.verdict-overruled.given": "; {who}: clock {before} → {after} ({change})",
        "line.penalty": "{penalty} for {who} ({articles})",
        "line.penalty.step": "occurrence {n} of {offence} in this game",
        "line.disciplinary-loss": "{who} is declared lost; the opponent's confirmed result stands",
        "line.both-lose": "{who} is declared lost; both players have lost this game already (15.3)",
        "line.result-confirmed": "result confirmed: {verdict}",
        "line.result-declared": "result declared by the arbiter: {verdict}",
        "line.other": "game record ({kind})",
        "late-delivery": "a late {what} (seq {seq}, stamped {d} before the verdict) was not put in its place: {why}; "
        "the arbiter decides",
        "late-delivery.acted": "an arbiter has acted on the game since",
        "late-delivery.window": "the verdict is more than {d} old",
        "late-delivery.replay": "the game does not replay under the rules with it",
        "verdict-revised": "a late {what} (seq {seq}, stamped {d} before the verdict) was put in its place: the "
        "verdict ({old}) is withdrawn; {now}",
        "line.revision": "a late delivery was put in its place by its stamp and the game ruled again: the verdict "
        "({old}) is withdrawn; {now}",
        "line.revision.bare": "a late delivery was put in its place by its stamp and the game ruled again",
        "revision.now": "now {verdict}",
        "revision.goes-on": "the game goes on",
        "line.time-adjusted.bare": "the arbiter adjusted a clock", "line.shared-time-split.bare": "shared time split, "
        "sudden death", "line.penalty.bare": "penalty",
        "verdict": "{reason}, {result}",
        "seat.first": "the first player", "seat.second": "the second player",
        "who": "{colour} ({name})",
        "clocks": "{first} · {second}",
        "clock": "{colour} {clock}",
    },
}  # fmt: skip

CAMERA_KINDS: Final = frozenset(
    {"left-area", "extra-person", "camera-covered", "camera-frozen", "camera-lost", "virtual-background",
     "background-blurred", "camera-moved", "screen-changed", "voice", "microphone-muted", "microphone-lost"}
)  # fmt: skip
"""The camera checks' kinds (video.checks.Check), and the microphone's (video.speech.SoundCheck): said from the
detector's detail."""
PROMPT_KINDS: Final = frozenset({"ear-check", "room-scan", "pan-check"})
"""The kinds a camera prompt raises: their summary is the service's words, not the prompting arbiter's."""
SERVICE_KINDS: Final = frozenset(
    {"feed-gap", "clock-mismatch", "platform-disagreement", "result-mismatch", "pairing-mismatch",
     "second-connection", "leave-request", "arbiter-call", "verdict-pending", "late-delivery", "verdict-revised",
     "screen-share-stopped", "analysis-gap"}
)  # fmt: skip
"""The other kinds the service itself raises, each said from its facts."""
KINDS: Final = CAMERA_KINDS | PROMPT_KINDS | SERVICE_KINDS
"""Every kind of incident the service raises: each has its words (a test finds the kinds in the code)."""
LINE_KINDS: Final = frozenset(
    {"start", "arrival", "reconnected", "disconnected", "feed-anomaly", "draw-offered", "draw-declined",
     "clock-paused", "clock-resumed", "time-adjusted", "shared-time-split", "suspended", "resumed",
     "verdict-pending", "verdict", "verdict-overruled", "penalty", "disciplinary-loss", "result-confirmed",
     "result-declared", "both-lose", "revision"}
)  # fmt: skip
"""Every kind of line the engine writes in a game's log (a test finds them in engine/adjudication.py)."""


class Speech(Words):
    """The report's words (kinds, reasons, colours, durations) and the server's sentences, in one language."""

    def __init__(self, lang: str) -> None:
        super().__init__(lang)
        self.table = {**WORDS[self.lang], **{f"say.{k}": v for k, v in SAID[self.lang].items()}}

    def say(self, key: str, **values: object) -> str:
        return self(f"say.{key}", **values)

    def has_said(self, key: str) -> bool:
        return self.has(f"say.{key}")


SPEECH: Final = {lang: Speech(lang) for lang in LANGUAGES}


def bilingual(render: Callable[[Speech], str]) -> Bilingual:
    """One text said in each language."""
    return {lang: render(SPEECH[lang]) for lang in LANGUAGES}


def same(text: str) -> Bilingual:
    """User data (a name, an arbiter's own words): the same in both."""
    return dict.fromkeys(LANGUAGES, text)


def clock(ms: int | float | None) -> str:
    """A clock as the desk shows one: m:ss (h:mm:ss from an hour), a part of a second up, never milliseconds."""
    total = max(0, -(-int(ms or 0) // 1000))
    hours, rest = divmod(total, 3600)
    minutes, seconds = divmod(rest, 60)
    return f"{hours}:{minutes:02d}:{seconds:02d}" if hours else f"{minutes}:{seconds:02d}"


def signed_clock(ms: int) -> str:
    return ("−" if ms < 0 else "+") + clock(abs(ms))


# --- Incidents ------------------------------------------------------------------------------------------------------

_FACES: Final = re.compile(r"^(\d+) faces in view(?: \((\d+) at the frame's edge\))?$")
_BODY: Final = re.compile(r"^another body in view \((\d+%) of the frame\), no face$")
_COVERED: Final = re.compile(r"^brightness (\d+(?:\.\d+)?), contrast (\d+(?:\.\d+)?)$")
_STILL_BACKGROUND: Final = re.compile(
    r"^the background does not move: its lower-third change (-?[\d.]+), its brightness varies by (-?[\d.]+)"
    r"(?:, the person's by (-?[\d.]+))? over (\d+) s"
)
_UNFOLLOWED_BACKGROUND: Final = re.compile(
    r"^the background does not follow the camera: its brightness stayed within ([\d.]+ ?%) over (\d+) s while the "
    r"person's changed by ([\d.]+ ?%)"
)
"""The virtual-background finding's figures (video.checks.Monitor); :data:`_STILL_BACKGROUND` is its earlier form,
kept for the incidents stored before 2026-12-06."""
_BLURRED: Final = re.compile(r"^the background is blurred: its edges' sharpness ([\d.]+) against the person's ([\d.]+)")
_GAP_FOR: Final = re.compile(r" has not arrived for (\d+) s")
_MOVER: Final = re.compile(r" for the (first|second) player")
_OVER: Final = re.compile(r"^the platform sent '")
_ASKED: Final = re.compile(r"\((\d+) s\)$")


def camera_summary(w: Speech, kind: str, detail: str) -> str:
    """A camera finding in words, with the detector's figures when its detail gives them (video.checks.Monitor)."""
    if kind == "extra-person":
        if match := _FACES.match(detail):
            if match.group(2):
                return w.say("camera.extra-person.edge", n=match.group(1), e=match.group(2))
            return w.say("camera.extra-person.faces", n=match.group(1))
        if match := _BODY.match(detail):
            return w.say("camera.extra-person.body", p=match.group(1))
    elif kind == "camera-covered" and (match := _COVERED.match(detail)):
        return w.say("camera.camera-covered.figures", b=match.group(1), c=match.group(2))
    elif kind == "virtual-background" and (match := _STILL_BACKGROUND.match(detail)):
        person = w.say("camera.virtual-background.person", v=match.group(3)) if match.group(3) else ""
        return w.say("camera.virtual-background.figures", change=match.group(1), bright=match.group(2),
                     person=person, window=w.duration(int(match.group(4)) * 1000))  # fmt: skip
    elif kind == "virtual-background" and (match := _UNFOLLOWED_BACKGROUND.match(detail)):
        return w.say("camera.virtual-background.exposure", room=match.group(1), person=match.group(3),
                     window=w.duration(int(match.group(2)) * 1000))  # fmt: skip
    elif kind == "background-blurred" and (match := _BLURRED.match(detail)):
        return w.say("camera.background-blurred.figures", bg=match.group(1), person=match.group(2))
    if w.lang == "en" and detail:
        return detail  # the detector's own English, as stored
    if w.has_said(f"camera.{kind}"):
        return w.say(f"camera.{kind}")
    return w.say("camera.other", kind=w.kind(kind))


@dataclass(frozen=True, slots=True)
class IncidentFacts:
    """What is stored of an incident that its words are said from."""

    kind: str
    source: str
    summary: str
    article: str | None = None
    evidence: Mapping[str, Any] = field(default_factory=dict)
    player: str | None = None

    @classmethod
    def of(cls, row: Mapping[str, Any]) -> IncidentFacts:
        return cls(str(row.get("kind") or ""), str(row.get("source") or ""), str(row.get("summary") or ""),
                   row.get("article"), row.get("evidence") or {}, row.get("player"))  # fmt: skip


def _player_note(summary: str, player: str | None, what: str) -> str | None:
    """A player's own reason, as written, from the summary the player page stored ("<ref> asks to ...: reason")."""
    head, _, note = summary.partition(": ")
    return note if note and (player is None or head.startswith(player)) and what in head else None


def incident_words(facts: IncidentFacts, names: Mapping[str, str] | None = None) -> Bilingual:
    """An incident's summary in both languages (see the module's docstring)."""
    kind, source, summary = facts.kind, facts.source, facts.summary
    if source.startswith("arbiter:") and kind not in PROMPT_KINDS:
        return same(summary or kind)  # the arbiter's own words
    if kind not in KINDS:
        # A kind the service does not raise itself: its stored text, said by its kind in Chinese.
        return {"zh": SPEECH["zh"].kind(kind), "en": summary or SPEECH["en"].kind(kind)}
    return bilingual(lambda w: _incident_text(w, facts, names or {}))


def _incident_text(w: Speech, facts: IncidentFacts, names: Mapping[str, str]) -> str:
    kind, evidence, summary = facts.kind, facts.evidence, facts.summary
    article = w.article(facts.article)
    if kind in CAMERA_KINDS or kind in DEVICE_KINDS:
        return _device_text(w, facts)
    if kind == "feed-gap" and evidence.get("missing_seq") is not None:
        n = len(evidence.get("held") or [])
        if match := _GAP_FOR.search(summary):
            return w.say("feed-gap.for", seq=evidence["missing_seq"], n=n, d=w.duration(int(match.group(1)) * 1000))
        return w.say("feed-gap", seq=evidence["missing_seq"], n=n)
    if kind == "clock-mismatch" and evidence.get("platform_ms") is not None and evidence.get("service_ms") is not None:
        theirs, ours = int(evidence["platform_ms"]), int(evidence["service_ms"])
        values = {"seq": evidence.get("seq", "?"), "platform": clock(theirs), "service": clock(ours),
                  "d": signed_clock(theirs - ours)}  # fmt: skip
        if match := _MOVER.search(summary):
            return w.say("clock-mismatch.who", who=w.say(f"seat.{match.group(1)}"), **values)
        return w.say("clock-mismatch", **values)
    if kind == "platform-disagreement" and evidence.get("seq") is not None:
        what = _feed_kind(w, evidence)
        key = "platform-disagreement.over" if _OVER.match(summary) else "platform-disagreement"
        return w.say(key, what=what, seq=evidence["seq"], article=article)
    if kind == "result-mismatch" and isinstance(evidence.get("claim"), dict):
        claim = evidence["claim"]
        claimed = _result_word(w, claim.get("result"))
        why = claim.get("reason")
        why_text = w.label("reason", str(why)) if why else w.say("result-mismatch.reason.none")
        service = evidence.get("service")
        if service is None:
            said = w.say("result-mismatch.none")
        else:
            said = w.say("result-mismatch.ours", result=_result_word(w, service), reason=_reason_of(w, summary),
                         article=article)  # fmt: skip
        return w.say("result-mismatch", claim=claimed, why=why_text, ours=said)
    if kind == "pairing-mismatch":
        if summary.startswith("the platform seats"):
            what = w.say("pairing-mismatch.seats")
        elif summary.startswith("the platform plays"):
            what = w.say("pairing-mismatch.rule")
        elif summary.startswith("the platform's time control"):
            what = w.say("pairing-mismatch.time")
        else:
            what = w.say("pairing-mismatch.other")
        return w.say("pairing-mismatch", what=what)
    if kind in ("leave-request", "arbiter-call"):
        asked = "asks to leave" if kind == "leave-request" else "calls the arbiter"
        note = _player_note(summary, facts.player, asked)
        text = w.say(kind)
        return w.say("player.because", what=text, note=note) if note else text
    if kind in PROMPT_KINDS:
        return _prompt_text(w, kind, facts)
    if kind == "verdict-pending":
        verdict = evidence.get("verdict")
        if isinstance(verdict, dict):
            return verdict_text(w, verdict, names)
        return w.say("verdict-pending", reason=w.kind(kind), article=article)
    if kind == "second-connection":
        return _device_text(w, facts)
    if kind == "analysis-gap":
        device = str(evidence.get("device") or "front")
        return w.say("analysis-gap", device=w.say(f"device.{device}"), d=w.duration(int(evidence.get("gap_ms") or 0)))
    if kind in ("late-delivery", "verdict-revised") and evidence.get("seq") is not None:
        return _late_text(w, kind, evidence)
    return w.kind(kind)


DEVICE_KINDS: Final = frozenset({"screen-share-stopped", "second-connection"})
"""The kinds said with the device they concern (issue 15), beside the camera checks'."""


def _device_text(w: Speech, facts: IncidentFacts) -> str:
    """A camera check's finding, a second connection or a stopped screen share, naming the device when it is the
    player's side camera or screen (the front camera's words are as they were)."""
    kind, evidence, summary = facts.kind, facts.evidence, facts.summary
    device = evidence.get("device")
    named = w.say(f"device.{device}") if device in ("side", "screen") else None
    if kind == "second-connection":
        return w.say("second-connection") if named is None else w.say("second-connection.device", device=named)
    if kind == "screen-share-stopped":
        stopped = "the player stopped" in str(evidence.get("detail") or summary)
        return w.say("screen-share-stopped.player" if stopped else "screen-share-stopped")
    detail = evidence.get("detail")
    if not isinstance(detail, str):
        detail = summary.split(": ", 1)[1] if summary.startswith(f"{kind}: ") else ""
    said = camera_summary(w, kind, detail)
    return said if named is None else w.say("device.said", device=named, what=said)


def _feed_kind(w: Speech, evidence: Mapping[str, Any]) -> str:
    """The kind of the platform's message an incident is about ("the player's arrival"), in words."""
    kind_of = str(evidence.get("type") or "")
    return w.say(f"feed.{kind_of}") if w.has_said(f"feed.{kind_of}") else w.say("feed.other", type=kind_of)


def _late_text(w: Speech, kind: str, evidence: Mapping[str, Any]) -> str:
    """A delivery stamped before the verdict (proctor.revisions): put in its place, or left to the arbiter."""
    early = w.duration(int(evidence.get("early_ms") or 0))
    values = {"what": _feed_kind(w, evidence), "seq": evidence["seq"], "d": early}
    if kind == "late-delivery":
        why = str(evidence.get("why") or "")
        reason = w.say(f"late-delivery.{why}", d=w.duration(int(evidence.get("window_ms") or 0)))
        return w.say("late-delivery", why=reason, **values)
    old, now = _outcome(w, evidence.get("withdrawn")), _revised_to(w, evidence.get("now"))
    return w.say("verdict-revised", old=old, now=now, **values)


def _result_word(w: Speech, result: Any) -> str:
    """A result as the platform or the service names it (``black``, ``white``, ``draw``, ``1-0``…)."""
    text = str(result or "")
    if w.has(f"result.{text}"):
        return w(f"result.{text}")
    if text in ("1-0", "0-1"):
        return w("result.black" if text == "1-0" else "result.white")
    if text in ("½-½", "1/2-1/2", "0.5-0.5"):
        return w("result.draw")
    return text or w.say("result-mismatch.none")


def _reason_of(w: Speech, summary: str) -> str:
    """The service's termination, from its stored summary ("... has black by five (...)")."""
    match = re.search(r" by ([a-z0-9-]+) \(", summary)
    return w.label("reason", match.group(1)) if match else w("unknown")


def _prompt_text(w: Speech, kind: str, facts: IncidentFacts) -> str:
    evidence = facts.evidence
    article = str(facts.article or evidence.get("article") or "")
    prompt = w.say(f"prompt.{kind}")
    if evidence.get("scheduled"):
        view = evidence.get("ear_view")
        what = w.say("prompt.ear.usable", article=article) if view in (None, "usable") else w.say(
            "prompt.ear.unusable")  # fmt: skip
        occasion = str(evidence.get("scheduled"))
        occasion_text = w.say(f"occasion.{occasion}") if w.has_said(f"occasion.{occasion}") else occasion
        return w.say("prompt.ear.scheduled", article=article, occasion=occasion_text, what=what)
    seconds = evidence.get("seconds")
    if not isinstance(seconds, int) and (match := _ASKED.search(facts.summary)):
        seconds = int(match.group(1))
    if isinstance(seconds, int):
        return w.say("prompt.asked", prompt=prompt, article=article, d=w.duration(seconds * 1000))
    return w.say("prompt.asked.bare", prompt=prompt, article=article)


def verdict_text(w: Speech, facts: Mapping[str, Any], names: Mapping[str, str]) -> str:
    """A pending verdict's facts (proctor.cases.verdict_facts): who was absent and for how long, and the verdict."""
    lines = []
    for entry in facts.get("players", []):
        why = str(entry.get("why", ""))
        if not w.has(f"absent.{why}"):
            continue
        ref = entry.get("player") or ""
        colour = w.label("colour", str(entry.get("colour", "")))
        absent = w.duration(int(entry.get("absent_ms", 0)))
        lines.append(w(f"absent.{why}", colour=colour, name=names.get(ref, entry.get("name") or ref), d=absent))
    winner = "double-loss" if facts.get("double_loss") else facts.get("winner")
    result = w(f"result.{winner}") if winner and w.has(f"result.{winner}") else w("result.none")
    verdict = w("occurrence.verdict", reason=w.label("reason", str(facts.get("termination", ""))),
                article=w.article(facts.get("article")), winner=result)  # fmt: skip
    return w.separator.join([*lines, verdict])


def verdict_words(facts: Mapping[str, Any], names: Mapping[str, str]) -> Bilingual:
    return bilingual(lambda w: verdict_text(w, facts, names))


# --- The game's timeline ------------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Seat:
    """A player of the game as a line names them: their colour then and their name."""

    colour: str
    """``black`` or ``white``."""
    name: str


@dataclass(frozen=True, slots=True)
class LineFacts:
    """What a log line is said from: its kind, and the game's facts around it (see proctor.review.replay_game)."""

    kind: str
    text: str
    """The engine's English line, as it logged it."""
    who: Seat | None = None
    """The player the line is about."""
    outcome: Mapping[str, Any] | None = None
    """The verdict it gives, confirms or sets aside: ``reason``, ``winner`` (a colour), ``double_loss``."""
    clocks: Sequence[tuple[Seat, int]] = ()
    """Both clocks after it (ms)."""
    before_ms: int | None = None
    """The player's clock before a time adjustment."""
    after_ms: int | None = None
    delta_ms: int | None = None
    penalty: Mapping[str, Any] | None = None
    """``penalty`` (its kind), ``articles``, ``occurrence``, ``offence``."""
    round_wide: bool = False
    sealed: bool = False
    given: Sequence[tuple[Seat, int, int]] = ()
    """The time an overruled verdict gave (14.8): each player whose clock it set going again, before and after (ms)."""
    withdrawn: Mapping[str, Any] | None = None
    """The verdict a revision withdrew (``outcome``: the one it gave, if any)."""


_LATE: Final = re.compile(r", (\d+) ms late")
_EACH: Final = re.compile(r"split: (\d+) ms each")


def _who(w: Speech, seat: Seat | None) -> str:
    if seat is None:
        return w("unknown")
    colour = w.label("colour", seat.colour)
    return w.say("who", colour=colour, name=seat.name) if seat.name else colour


def _outcome(w: Speech, outcome: Mapping[str, Any] | None) -> str:
    if not outcome:
        return w("unknown")
    winner = "double-loss" if outcome.get("double_loss") else outcome.get("winner") or "draw"
    return w.say("verdict", reason=w.label("reason", str(outcome.get("reason", ""))), result=w.label("result", winner))


def _revised_to(w: Speech, outcome: Mapping[str, Any] | None) -> str:
    return w.say("revision.now", verdict=_outcome(w, outcome)) if outcome else w.say("revision.goes-on")


def _clocks(w: Speech, clocks: Sequence[tuple[Seat, int]]) -> str:
    return " · ".join(w.say("clock", colour=w.label("colour", seat.colour), clock=clock(ms)) for seat, ms in clocks)


def line_text(w: Speech, line: LineFacts) -> str:
    kind = line.kind
    who = _who(w, line.who)
    if kind == "arrival" and (match := _LATE.search(line.text)):
        return w.say("line.arrival.late", who=who, d=w.duration(int(match.group(1))))
    if kind in ("arrival", "reconnected", "disconnected", "feed-anomaly", "draw-offered", "draw-declined",
                "disciplinary-loss", "both-lose"):  # fmt: skip
        return w.say(f"line.{kind}", who=who)
    if kind in ("clock-paused", "clock-resumed"):
        return w.say(f"line.{kind}", clocks=_clocks(w, line.clocks))
    if kind == "time-adjusted" and line.before_ms is not None and line.after_ms is not None:
        delta = line.delta_ms if line.delta_ms is not None else line.after_ms - line.before_ms
        change = w.say("line.time-adjusted.added" if delta > 0 else "line.time-adjusted.removed",
                       d=w.duration(abs(delta)))  # fmt: skip
        return w.say("line.time-adjusted", who=who, before=clock(line.before_ms), after=clock(line.after_ms),
                     change=change)  # fmt: skip
    if kind == "shared-time-split" and (match := _EACH.search(line.text)):
        return w.say("line.shared-time-split", each=clock(int(match.group(1))))
    if kind == "suspended":
        text = w.say("line.suspended.round" if line.round_wide else "line.suspended")
        return text + (w.say("line.suspended.sealed") if line.sealed else "")
    if kind == "verdict-pending" and line.outcome is not None and not line.outcome.get("winner") and (
        "both players" in line.text
    ):  # fmt: skip
        return w.say("line.verdict-pending.both")
    if kind == "revision" and line.withdrawn is not None:
        return w.say("line.revision", old=_outcome(w, line.withdrawn), now=_revised_to(w, line.outcome))
    if kind == "verdict-overruled":
        text = w.say("line.verdict-overruled", verdict=_outcome(w, line.outcome))
        for seat, before, after in line.given:
            change = w.say("line.time-adjusted.added", d=w.duration(after - before))
            text += w.say("line.verdict-overruled.given", who=_who(w, seat), before=clock(before), after=clock(after),
                          change=change)  # fmt: skip
        return text
    if kind in ("verdict", "verdict-pending", "result-confirmed", "result-declared"):
        return w.say(f"line.{kind}", verdict=_outcome(w, line.outcome))
    if kind == "penalty" and line.penalty is not None:
        p = line.penalty
        text = w.say("line.penalty", penalty=w.label("penalty", str(p.get("penalty", ""))), who=who,
                     articles=w.article(p.get("articles")))  # fmt: skip
        if p.get("occurrence") and p.get("offence"):
            text += w.comma + w.say("line.penalty.step", n=p["occurrence"], offence=p["offence"])
        return text
    if w.has_said(f"line.{kind}") and "{" not in w.table[f"say.line.{kind}"]:
        return w.say(f"line.{kind}")
    if w.has_said(f"line.{kind}.bare"):  # the facts missing: the line's kind in words
        return w.say(f"line.{kind}.bare")
    if w.lang == "en" and line.text:
        return line.text
    return w.say("line.other", kind=kind)


def line_words(line: LineFacts) -> Bilingual:
    """A line of the game's log in both languages."""
    return bilingual(lambda w: line_text(w, line))


def joined(lines: Sequence[Bilingual]) -> Bilingual:
    """Several lines as one answer ("；" or "; " between them)."""
    return {lang: SPEECH[lang].separator.join(line[lang] for line in lines) for lang in LANGUAGES}


_SEATS: Final = (Player.FIRST, Player.SECOND)
_ABOUT_THE_MOVER: Final = frozenset({"feed-anomaly", "draw-declined"})


def outcome_facts(outcome: Outcome | None) -> dict[str, Any] | None:
    if outcome is None:
        return None
    return {"reason": outcome.termination.value, "winner": outcome.winner.value if outcome.winner else None,
            "double_loss": outcome.double_loss}  # fmt: skip


def line_facts(
    entry: LogEntry, before: Adjudication, after: Adjudication, data: Mapping[str, Any], names: Mapping[Player, str]
) -> LineFacts:
    """A log line's facts from the game before and after the event that wrote it (``data``: the stored event)."""
    kind = entry.kind

    def seat(player: Player) -> Seat:
        return Seat(after.color_of(player).value, names.get(player, ""))

    player: Player | None = None
    if entry.actor in ("first", "second"):
        player = Player(entry.actor)
    elif data.get("player") in ("first", "second"):
        player = Player(data["player"])
    elif kind in _ABOUT_THE_MOVER:
        player = before.due_player()
    outcome = after.pending_verdict if kind == "verdict-pending" else after.outcome
    if kind == "verdict-overruled":
        outcome = before.pending_verdict or before.outcome
    withdrawn = None
    if kind == "revision":
        outcome = after.pending_verdict or after.outcome
        withdrawn = outcome_facts(before.pending_verdict or before.outcome)
    penalty = None
    if kind == "penalty" and len(after.penalties.penalties) > len(before.penalties.penalties):
        given = after.penalties.penalties[-1]
        penalty = {"penalty": given.kind.value, "articles": given.articles, "occurrence": given.occurrence,
                   "offence": given.offence}  # fmt: skip
    at = entry.at
    time_given: tuple[tuple[Seat, int, int], ...] = ()
    if kind == "verdict-overruled":  # the time given to a player whose flag had fallen (add_ms)
        time_given = tuple(
            (seat(p), before.remaining(p, at), after.remaining(p, at))
            for p in _SEATS
            if before.remaining(p, at) == 0 and after.remaining(p, at) > 0
        )
    return LineFacts(
        kind, entry.text, seat(player) if player is not None else None, outcome_facts(outcome),
        tuple((seat(p), after.remaining(p, at)) for p in _SEATS),
        before.remaining(player, at) if player is not None and kind == "time-adjusted" else None,
        after.remaining(player, at) if player is not None and kind == "time-adjusted" else None,
        data.get("delta_ms") if isinstance(data.get("delta_ms"), int) else None, penalty,
        bool(data.get("round_wide")), bool(data.get("sealed_move")), time_given, withdrawn,
    )  # fmt: skip


def event_words(
    before: Adjudication,
    after: Adjudication,
    data: Mapping[str, Any],
    names: Mapping[Player, str],
    by: str | None = None,
) -> Bilingual | None:
    """What an event did, in words: the lines it added to the game's log (None when it added none); with ``by``,
    an arbiter's name, only the lines of their action when it has some (not a deadline that fell meanwhile)."""
    entries = after.log[len(before.log) :]
    if by is not None:
        theirs = [e for e in entries if e.actor == by or e.actor.startswith(f"{by} (")]
        entries = tuple(theirs) or entries
    lines = [line_words(line_facts(entry, before, after, data, names)) for entry in entries]
    return joined(lines) if lines else None


# --- Refusals -------------------------------------------------------------------------------------------------------

REFUSALS: Final[tuple[tuple[re.Pattern[str], str], ...]] = tuple(
    (re.compile(pattern), key)
    for pattern, key in (
        (r": the game is over \(", "over"),
        (r": a verdict awaits the arbiter \(", "pending"),
        (r": the game has not started \(", "not-started"),
        (r": the game is suspended$", "suspended"),
        (r": the arbiter has paused the clocks$", "paused"),
        (r"^the clocks are not paused$", "not-paused"),
        (r"^the game is over: its clocks can no longer change$", "over-clocks"),
        (r"^a time adjustment must add or remove some time$", "no-adjustment"),
        (r"^the game is over$", "over"),
        (r"^the game is already suspended$", "already-suspended"),
        (r"^the game is not suspended$", "not-suspended"),
        (r"^no verdict awaits confirmation$", "no-verdict"),
        (r"^both players lost the connection: overrule, or declare the result \(chief arbiter\)$", "both-lost"),
        (r"^only a time, connection or no-show verdict can be overruled$", "not-overrulable"),
        (r"^the result is already confirmed$", "confirmed"),
        (r"^a player's time is at zero: give time \(add_ms\) to play on$", "at-zero"),
        (r"^the game has no result to confirm yet$", "no-result"),
        (r"^cannot remove (?P<asked>\d+) ms: only (?P<left>\d+) ms remain$", "cannot-remove"),
        (r"^only a shared-time game can be split$", "not-shared"),
        (r"^the shared time has already been split or has run out$", "split"),
        (r"^case (?P<n>\d+) is already (?P<status>[a-z-]+)$", "case-closed"),
        (r"^case (?P<n>\d+) is a pending verdict: confirm or overrule it", "case-verdict"),
        (r" has no live camera stream", "no-stream"),
        (r"^the ladder now gives a ", "ladder-moved"),
        (r" loses the game \(.*\): confirm it with 'confirm_loss'$", "confirm-loss"),
        (r" is already checked in for round (?P<n>\d+), by the camera setup", "checked-in-camera"),
        (r" is already checked in for round (?P<n>\d+), by hand", "checked-in-manual"),
        (r" is not checked in for round (?P<n>\d+): there is nothing to undo", "not-checked-in"),
        (r"^a check-in is recorded by hand by an arbiter", "check-in-role"),
        (r"^a check-in is undone by the chief arbiter or a deputy chief", "check-in-undo-role"),
    )
)
"""The refusals an arbiter meets on the desk, by their English: the engine's of an action on a game
(engine/adjudication.py, engine/clock.py) and the service's of an action on a case or a camera; each with its words
(``refuse.<key>``), milliseconds in them said as a duration and a clock."""

REFUSED: Final[Mapping[str, Mapping[str, str]]] = {
    "zh": {
        "refuse.over": "对局已结束，无法执行", "refuse.pending": "有裁决待裁判确认，无法执行",
        "refuse.not-started": "对局尚未开始", "refuse.suspended": "对局已中止", "refuse.paused": "裁判已停止计时",
        "refuse.not-paused": "计时并未停止", "refuse.over-clocks": "对局已结束：用时不能再改",
        "refuse.no-adjustment": "调整用时须增加或减少一些时间", "refuse.already-suspended": "对局已处于中止状态",
        "refuse.not-suspended": "对局并未中止", "refuse.no-verdict": "没有待确认的裁决",
        "refuse.both-lost": "双方均已断线：请推翻裁决，或由裁判长宣布结果",
        "refuse.not-overrulable": "只有超时、断线或未到场的裁决可以推翻", "refuse.confirmed": "结果已确认",
        "refuse.at-zero": "有棋手用时为零：须给予时间才能继续", "refuse.no-result": "对局尚无可确认的结果",
        "refuse.cannot-remove": "无法减少 {asked}：只剩 {left}", "refuse.not-shared": "只有共用时间的对局可以平分",
        "refuse.split": "共用时间已平分或已用完",
        "refuse.case-closed": "案件 #{n} 已处理（{status}）",
        "refuse.case-verdict": "案件 #{n} 是待确认的裁决：只能确认或推翻",
        "refuse.no-stream": "该棋手的摄像头没有在直播：请先让其打开链接",
        "refuse.ladder-moved": "阶梯判罚已与预览不同：请重新查看预览", "refuse.confirm-loss": "此判罚将判负：请先确认",
        "refuse.checked-in-camera": "该棋手已通过摄像头环境检查报到（第 {n} 轮，第 24.1.1 条）",
        "refuse.checked-in-manual": "该棋手已由裁判手动报到（第 {n} 轮，第 24.1.1 条）",
        "refuse.not-checked-in": "该棋手第 {n} 轮尚未报到：没有可撤销的报到（第 24.1.1 条）",
        "refuse.check-in-role": "手动报到须由裁判员、副裁判长、裁判长或竞赛组委会记录（第 24.1.1 条）",
        "refuse.check-in-undo-role": "撤销报到须由裁判长或副裁判长进行（第 24.1.1 条）",
        "code.bad-request": "请求有误", "code.stale": "页面信息已过期，请刷新", "code.unauthorized": "未登录或凭据无效",
        "code.forbidden": "无权执行此操作", "code.not-found": "未找到", "code.expired": "已过期",
        "code.conflict": "与当前状态冲突", "code.too-many-logins": "登录尝试过多，请稍后再试",
        "code.too-many-requests": "请求过多，请稍后再试", "code.busy": "服务器繁忙，请稍后再试",
        "code.storage": "存储暂不可用", "code.configuration": "服务器配置有误", "code.refused": "规则不允许此操作",
        "code.writer-unavailable": "服务正在切换，此请求未送达，请稍后重试",
        "code.writer-lost": "服务中断，此请求可能未保存，请重试",
        "code.media-server-unavailable": "媒体服务器暂未响应，请稍后重试",
        "code.authority": "你的角色无权执行此操作", "code.http": "请求有误", "code.internal": "服务器处理此请求失败",
        "code.error": "请求失败",
    },
    "en": {
        "refuse.cannot-remove": "cannot remove {asked}: only {left} remain",
    },
}  # fmt: skip
"""The refusals' Chinese, and the English of those that said milliseconds (the others keep the engine's English)."""


def _refusal_value(w: Speech, name: str, value: str) -> str:
    """A refusal's figure in words: a duration asked (``asked``, ms), a clock left (``left``, ms), a case's status."""
    if name == "asked":
        return w.duration(int(value))
    if name == "left":
        return clock(int(value))
    if name == "status":
        return w.label("status", value)
    return value


def refusal_words(code: str, message: str) -> Bilingual:
    """An error's message in both languages: a refusal the engine words (:data:`REFUSALS`) said in each; any other
    in English as the server words it and in Chinese by its kind (``code``)."""
    for pattern, key in REFUSALS:
        match = pattern.search(message)
        if match is None:
            continue
        said: Bilingual = {}
        for lang in LANGUAGES:
            text = REFUSED[lang].get(f"refuse.{key}")
            if text is None:
                said[lang] = message
                continue
            for name, value in match.groupdict().items():
                text = text.replace("{" + name + "}", _refusal_value(SPEECH[lang], name, value))
            said[lang] = text
        return said
    zh = REFUSED["zh"].get(f"code.{code}", REFUSED["zh"]["code.error"])
    return {"zh": zh, "en": message}
