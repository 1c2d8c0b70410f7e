"""The incident report's words in its two languages, Chinese (the default) and English: every label, heading and
sentence the report itself says.  User data (names, an arbiter's reasons and notes, an arbiter's own summary of an
incident) is shown as written; nothing else of the server's is.  Pure."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Final

LANGUAGES: Final = ("zh", "en")
DEFAULT_LANGUAGE: Final = "zh"

WORDS: Final[Mapping[str, Mapping[str, str]]] = {
    "zh": {
        "html.lang": "zh-CN",
        "report": "事件报告",
        "title": "{title}：事件报告",
        "all.events": "全部赛事",
        "generated": "报告生成于 {at}。筛选条件：{filters}。共 {cases} 个案件，{occurrences} 次发生。",
        "zone": "时间：{zone}，24 小时制",
        "page": "第 {page} / {pages} 页",
        "filters.none": "无",
        "filter.event": "赛事", "filter.game": "对局", "filter.kind": "类别", "filter.player": "棋手",
        "filter.status": "状态", "filter.source": "来源", "filter.article": "条款", "filter.q": "文字",
        "filter.since": "起", "filter.until": "止",
        "summary": "汇总（按棋手与类别）",
        "summary.none": "没有符合条件的事件。",
        "col.who": "棋手 / 对局", "col.kind": "类别", "col.cases": "案件", "col.occurrences": "次数",
        "col.duration": "总时长", "col.first": "首次", "col.last": "末次", "col.outcome": "结果",
        "cases": "案件",
        "case.heading": "案件 #{id}：{kind} · {who}",
        "incident.heading": "事件 #{id}：{kind} · {who}",
        "fact.kind": "类别", "fact.article": "条款", "fact.player": "棋手", "fact.platform_id": "平台编号",
        "fact.game": "对局", "fact.first": "首次", "fact.last": "末次", "fact.occurrences": "发生次数",
        "fact.duration": "总时长", "fact.status": "案件状态", "fact.follows": "前案",
        "fact.follows.value": "案件 #{id}（{status}）之后再次发生",
        "occurrences": "发生经过",
        "col.when": "时间", "col.what": "内容", "col.who.acted": "执行者", "col.file": "文件",
        "col.check": "核对",
        "evidence": "证据（静态画面与文件，SHA-256）",
        "evidence.none": "无证据文件。",
        "check.matches": "与文件一致", "check.differs": "与文件不一致！",
        "check.missing": "文件已不在（保存期满或未保存）",
        "check.unknown": "无哈希记录",
        "still.caption": "{name}（事件 #{incident}）",
        "actions": "处理记录",
        "actions.none": "尚无处理。",
        "verdict": "裁决",
        "signature": "裁判长签字",
        "signature.name": "裁判长姓名", "signature.date": "日期", "signature.sign": "签字",
        "none": "无", "unknown": "未知",
        "article": "第 {article} 条",
        "no.article": "未注明条款",
        "who.game": "第 {board} 台（对局 #{game}）", "who.game.only": "对局 #{game}", "who.none": "无关棋手",
        "game.label": "对局 #{id}（{platform} {external}；{event}/{section} 第 {round} 轮 第 {board} 台）",
        "game.label.bare": "对局 #{id}（{platform} {external}）",
        "duration.s": "{s} 秒", "duration.ms": "{m} 分 {s} 秒", "duration.hm": "{h} 小时 {m} 分",
        "status.open": "待处理", "status.dismissed": "已驳回", "status.confirmed": "已确认",
        "status.overruled": "裁决被推翻", "status.decided": "已另行裁定",
        "outcome.open": "待处理：尚无裁判处理", "outcome.dismissed": "已驳回", "outcome.confirmed": "已确认",
        "outcome.overruled": "裁决被推翻，对局继续", "outcome.decided": "对局结果已另行裁定",
        "outcome.penalty": "{penalty}：{player}（{articles}）",
        "outcome.step": "本局第 {n} 次违反第 {offence} 条",
        "outcome.result": "对局结果：{result}",
        "outcome.verdict": "{status}：{result}（{reason}，{article}）",
        "source.detector": "检测器", "source.rules": "规则", "source.arbiter": "裁判", "source.player": "棋手",
        "source.feed": "数据流", "source.service": "系统", "source.camera": "摄像头",
        "who.detector": "检测器", "who.service": "系统",
        "role.arbiter": "裁判", "role.deputy-chief": "副裁判长", "role.chief": "裁判长", "role.committee": "组委会",
        "role.appeals-committee": "申诉（仲裁）委员会",
        "role.reviewer": "评审组",
        "action.note": "备注：{note}",
        "action.ended": "检测到结束：持续 {d}",
        "action.confirm": "确认事件 #{id}",
        "action.dismiss": "驳回事件 #{id}",
        "action.penalty": "判罚（事件 #{id}）：{verdict}",
        "action.evidence": "补充证据 {files}",
        "action.case.dismiss": "驳回此案",
        "action.case.confirm": "确认此案",
        "action.case.overrule": "推翻待确认的裁决，对局继续",
        "action.case.decide": "对局结果另行裁定：{result}",
        "action.case.confirm.verdict": "确认裁决：{result}",
        "action.escalate.duration": "升级：累计时长超过 {n} 分钟",
        "action.escalate.deadline": "升级至裁判长：确认期限已过（系统不自动裁决）",
        "action.escalate": "升级",
        "action.because": "{what}。理由：{why}",
        "occurrence.facts": "{text}（{facts}）",
        "occurrence.duration": "持续 {d}",
        "occurrence.confidence": "置信度 {c}",
        "occurrence.source": "来源：{source}",
        "occurrence.arbiter": "{who} 报告：{summary}",
        "occurrence.player": "棋手报告：{summary}",
        "occurrence.clock-mismatch": "序号 {seq} 之后平台显示 {platform}，服务为 {service}（差 {d}）",
        "occurrence.feed-gap": "数据流缺口：序号 {seq} 未到，后续 {n} 个事件暂存",
        "occurrence.verdict": "待确认的裁决：{reason}（{article}），{winner}",
        "absent.not-arrived": "{colour}（{name}）未到场：自预定开始起缺席 {d}",
        "absent.disconnected": "{colour}（{name}）断线未归：离开 {d}",
        "absent.out-of-time": "{colour}（{name}）超时",
        "result.black": "黑方胜", "result.white": "白方胜", "result.draw": "和棋", "result.double-loss": "双方判负",
        "result.none": "无胜方，由裁判决定",
        "colour.black": "黑方", "colour.white": "白方",
        "penalty.warning": "警告", "penalty.violation": "违规", "penalty.loss": "判负",
        "penalty.disqualification": "取消资格",
        "reason.five": "五连", "reason.forbidden-33": "禁手（三三）", "reason.forbidden-44": "禁手（四四）",
        "reason.forbidden-overline": "禁手（长连）", "reason.double-pass": "双方弃权", "reason.board-full": "满盘",
        "reason.resignation": "认输", "reason.agreed-draw": "协议和棋", "reason.time-forfeit": "超时",
        "reason.both-out-of-time": "双方超时", "reason.no-show": "未到场",
        "reason.reconnect-deadline": "未在时限内重连",
        "reason.penalty": "判罚", "reason.arbiter-decision": "裁判决定",
        "kind.earphones": "耳机", "kind.left-area": "离开比赛区域", "kind.extra-person": "区域内有他人",
        "kind.camera-covered": "摄像头被遮挡", "kind.camera-frozen": "画面静止", "kind.camera-lost": "摄像头断开",
        "kind.virtual-background": "虚拟背景", "kind.background-blurred": "背景虚化",
        "kind.camera-moved": "摄像头被移动", "kind.screen-changed": "屏幕内容改变",
        "kind.screen-share-stopped": "屏幕共享停止", "kind.analysis-gap": "检测中断",
        "kind.voice": "他人说话声", "kind.microphone-muted": "麦克风静音", "kind.microphone-lost": "麦克风断开",
        "kind.feed-gap": "数据流缺口", "kind.clock-mismatch": "时钟不一致",
        "kind.result-mismatch": "结果不一致", "kind.platform-disagreement": "平台与规则不符",
        "kind.late-delivery": "迟到的平台消息", "kind.verdict-revised": "裁定已修正",
        "kind.pairing-mismatch": "编排不符", "kind.leave-request": "申请离开", "kind.arbiter-call": "呼叫裁判",
        "kind.ear-check": "耳部检查", "kind.room-scan": "环境检查", "kind.pan-check": "转动检查",
        "kind.verdict-pending": "待确认的裁决", "kind.second-connection": "第二个连接",
        "kind.other": "其他（{kind}）",
    },
    "en": {
        "html.lang": "en",
        "report": "Incident report",
        "title": "{title}: incident report",
        "all.events": "All events",
        "generated": "Report generated {at}. Filters: {filters}. {cases} case(s), {occurrences} occurrence(s).",
        "zone": "Times: {zone}, 24-hour",
        "page": "page {page} of {pages}",
        "filters.none": "none",
        "filter.event": "event", "filter.game": "game", "filter.kind": "kind", "filter.player": "player",
        "filter.status": "status", "filter.source": "source", "filter.article": "article", "filter.q": "text",
        "filter.since": "since", "filter.until": "until",
        "summary": "Summary by player and kind",
        "summary.none": "No incidents match.",
        "col.who": "Player / game", "col.kind": "Kind", "col.cases": "Cases", "col.occurrences": "Occurrences",
        "col.duration": "Total duration", "col.first": "First", "col.last": "Last", "col.outcome": "Outcome",
        "cases": "Cases",
        "case.heading": "Case {id}: {kind} · {who}",
        "incident.heading": "Incident {id}: {kind} · {who}",
        "fact.kind": "Kind", "fact.article": "Article", "fact.player": "Player", "fact.platform_id": "Platform id",
        "fact.game": "Game", "fact.first": "First", "fact.last": "Last", "fact.occurrences": "Occurrences",
        "fact.duration": "Total duration", "fact.status": "Case status", "fact.follows": "Follows",
        "fact.follows.value": "again after case {id} ({status})",
        "occurrences": "What happened",
        "col.when": "When", "col.what": "What", "col.who.acted": "Who", "col.file": "File", "col.check": "Check",
        "evidence": "Evidence (stills and files, SHA-256)",
        "evidence.none": "No evidence files.",
        "check.matches": "matches the file", "check.differs": "does NOT match the file!",
        "check.missing": "file no longer kept (retention) or never stored", "check.unknown": "no hash recorded",
        "still.caption": "{name} (incident {incident})",
        "actions": "Actions taken",
        "actions.none": "No action yet.",
        "verdict": "Verdict",
        "signature": "Chief arbiter's signature",
        "signature.name": "Chief arbiter", "signature.date": "Date", "signature.sign": "Signature",
        "none": "none", "unknown": "unknown",
        "article": "art. {article}",
        "no.article": "no article given",
        "who.game": "board {board} (game {game})", "who.game.only": "game {game}", "who.none": "no player",
        "game.label": "game {id} ({platform} {external}; {event}/{section} round {round} board {board})",
        "game.label.bare": "game {id} ({platform} {external})",
        "duration.s": "{s} s", "duration.ms": "{m} min {s} s", "duration.hm": "{h} h {m} min",
        "status.open": "open", "status.dismissed": "dismissed", "status.confirmed": "confirmed",
        "status.overruled": "verdict overruled", "status.decided": "decided otherwise",
        "outcome.open": "open: no arbiter has acted yet", "outcome.dismissed": "dismissed",
        "outcome.confirmed": "confirmed", "outcome.overruled": "verdict overruled, the game goes on",
        "outcome.decided": "the game's result was decided otherwise",
        "outcome.penalty": "{penalty} for {player} ({articles})",
        "outcome.step": "occurrence {n} of {offence} in this game",
        "outcome.result": "game result: {result}",
        "outcome.verdict": "{status}: {result} ({reason}, {article})",
        "source.detector": "detector", "source.rules": "rules", "source.arbiter": "arbiter", "source.player": "player",
        "source.feed": "feed", "source.service": "service", "source.camera": "camera",
        "who.detector": "detector", "who.service": "service",
        "role.arbiter": "arbiter", "role.deputy-chief": "deputy chief arbiter", "role.chief": "chief arbiter",
        "role.committee": "organising committee", "role.reviewer": "review panel",
        "role.appeals-committee": "appeals committee",
        "action.note": "note: {note}",
        "action.ended": "detected as ended: lasted {d}",
        "action.confirm": "confirmed incident {id}",
        "action.dismiss": "dismissed incident {id}",
        "action.penalty": "penalty (incident {id}): {verdict}",
        "action.evidence": "evidence added: {files}",
        "action.case.dismiss": "dismissed the case",
        "action.case.confirm": "confirmed the case",
        "action.case.overrule": "overruled the pending verdict: the game goes on",
        "action.case.decide": "the game's result decided otherwise: {result}",
        "action.case.confirm.verdict": "confirmed the verdict: {result}",
        "action.escalate.duration": "escalated: total duration over {n} min",
        "action.escalate.deadline": "escalated to the chief arbiter: the confirmation deadline passed (nothing is "
        "ruled automatically)",
        "action.escalate": "escalated",
        "action.because": "{what}. Reason: {why}",
        "occurrence.facts": "{text} ({facts})",
        "occurrence.duration": "lasted {d}",
        "occurrence.confidence": "confidence {c}",
        "occurrence.source": "source: {source}",
        "occurrence.arbiter": "reported by {who}: {summary}",
        "occurrence.player": "reported by the player: {summary}",
        "occurrence.clock-mismatch": "after seq {seq} the platform shows {platform}, the service {service} ({d})",
        "occurrence.feed-gap": "feed gap: seq {seq} has not arrived; {n} later event(s) held",
        "occurrence.verdict": "verdict to confirm: {reason} ({article}), {winner}",
        "absent.not-arrived": "{colour} ({name}) did not arrive: absent {d} since the scheduled start",
        "absent.disconnected": "{colour} ({name}) lost the connection and did not come back: gone {d}",
        "absent.out-of-time": "{colour} ({name}) ran out of time",
        "result.black": "Black wins", "result.white": "White wins", "result.draw": "draw",
        "result.double-loss": "both players lose", "result.none": "no winner: the arbiter decides",
        "colour.black": "Black", "colour.white": "White",
        "penalty.warning": "warning", "penalty.violation": "violation", "penalty.loss": "loss of the game",
        "penalty.disqualification": "disqualification",
        "reason.five": "five in a row", "reason.forbidden-33": "forbidden 3-3", "reason.forbidden-44": "forbidden 4-4",
        "reason.forbidden-overline": "forbidden overline", "reason.double-pass": "both passed",
        "reason.board-full": "board full", "reason.resignation": "resignation", "reason.agreed-draw": "agreed draw",
        "reason.time-forfeit": "time forfeit", "reason.both-out-of-time": "both out of time",
        "reason.no-show": "no-show",
        "reason.reconnect-deadline": "not back in time", "reason.penalty": "penalty",
        "reason.arbiter-decision": "arbiter's decision",
        "kind.earphones": "earphones", "kind.left-area": "left the area", "kind.extra-person": "another person",
        "kind.camera-covered": "camera covered", "kind.camera-frozen": "camera frozen",
        "kind.camera-lost": "camera lost",
        "kind.virtual-background": "virtual background", "kind.background-blurred": "blurred background",
        "kind.camera-moved": "camera moved", "kind.screen-changed": "screen changed",
        "kind.screen-share-stopped": "screen share stopped", "kind.analysis-gap": "checks paused",
        "kind.voice": "another voice", "kind.microphone-muted": "microphone muted",
        "kind.microphone-lost": "microphone lost",
        "kind.feed-gap": "feed gap", "kind.clock-mismatch": "clock mismatch",
        "kind.result-mismatch": "result mismatch", "kind.platform-disagreement": "platform vs rules",
        "kind.late-delivery": "late delivery", "kind.verdict-revised": "verdict revised",
        "kind.pairing-mismatch": "pairing mismatch", "kind.leave-request": "asks to leave",
        "kind.arbiter-call": "arbiter call", "kind.ear-check": "ear check", "kind.room-scan": "room scan",
        "kind.pan-check": "pan check", "kind.verdict-pending": "verdict to confirm",
        "kind.second-connection": "a second connection",
        "kind.other": "other ({kind})",
    },
}  # fmt: skip


class Words:
    """The report's words in one language: ``words("kind.camera-lost")``, with ``{name}`` filled in."""

    def __init__(self, lang: str) -> None:
        self.lang = lang if lang in WORDS else DEFAULT_LANGUAGE
        self.table = WORDS[self.lang]

    def __call__(self, key: str, **values: object) -> str:
        text = self.table[key]
        for name, value in values.items():
            text = text.replace("{" + name + "}", str(value))
        return text

    def has(self, key: str) -> bool:
        return key in self.table

    def label(self, prefix: str, value: str) -> str:
        """A value's word (``kind``, ``status``, ``role``…); a value the table lacks is shown as it is."""
        key = f"{prefix}.{value}"
        return self(key) if key in self.table else value

    def kind(self, kind: str) -> str:
        key = f"kind.{kind}"
        return self(key) if key in self.table else self("kind.other", kind=kind)

    @property
    def separator(self) -> str:
        """Between the parts of a list of statements: "；" or "; "."""
        return "；" if self.lang == "zh" else "; "

    @property
    def comma(self) -> str:
        return "，" if self.lang == "zh" else ", "

    @property
    def colon(self) -> str:
        return "：" if self.lang == "zh" else ": "

    def paren(self, text: str, inner: str) -> str:
        """``text（inner）`` or ``text (inner)``."""
        return f"{text}（{inner}）" if self.lang == "zh" else f"{text} ({inner})"

    def article(self, article: str | None) -> str:
        return self("article", article=article) if article else self("no.article")

    def duration(self, ms: int) -> str:
        """``45 秒`` / ``45 s``, ``3 分 5 秒`` / ``3 min 5 s``, ``1 小时 2 分`` / ``1 h 2 min``."""
        seconds = round(ms / 1000)
        hours, rest = divmod(seconds, 3600)
        minutes, seconds = divmod(rest, 60)
        if hours:
            return self("duration.hm", h=hours, m=minutes)
        return self("duration.ms", m=minutes, s=seconds) if minutes else self("duration.s", s=seconds)
