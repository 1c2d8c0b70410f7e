// An incident's summary in the page's language, as the desk and the review page say it: the server's words in both
// languages (summary_words); from an older server, the page's words where the incident's evidence gives the facts (a
// clock mismatch's clocks as recorded, never milliseconds; a feed gap's missing event; a player's request and its
// reason), else the server's English.  The pages add INCIDENT_WORDS to their tables (useLanguage).

import { lang, t } from "/assets/i18n.js";
import { gameClock } from "/assets/times.js";

export const INCIDENT_WORDS = {
  zh: {
    "summary.clock-mismatch": "序号 {seq} 之后平台显示 {platform}，服务为 {service}（差 {d}）",
    "summary.feed-gap": "数据流缺口：序号 {seq} 未到，后续 {n} 个事件暂存",
    "summary.leave-request": "申请离开比赛区域{reason}", "summary.arbiter-call": "呼叫裁判{reason}",
    "summary.because": "：{reason}",
  },
  en: {
    "summary.clock-mismatch": "after seq {seq} the platform shows {platform}, the service {service} ({d})",
    "summary.feed-gap": "feed gap: seq {seq} has not arrived; {n} later event(s) held",
    "summary.leave-request": "asks to leave the competition area{reason}", "summary.arbiter-call": "calls the arbiter{reason}",
    "summary.because": ": {reason}",
  },
};

const ASKED = /^\S+ (asks to leave the competition area|calls the arbiter)(?:: (.*))?$/;

// A clock as it was recorded: the whole seconds left.
const recorded = (ms) => gameClock(ms, true);

export function summaryText(incident) {
  if (incident.summary_words && incident.summary_words[lang]) return incident.summary_words[lang];
  const e = incident.evidence || {};
  if (incident.kind === "clock-mismatch" && e.platform_ms != null && e.service_ms != null) {
    const d = e.platform_ms - e.service_ms;
    return t("summary.clock-mismatch", { seq: e.seq, platform: recorded(e.platform_ms), service: recorded(e.service_ms),
                                         d: (d < 0 ? "−" : "+") + recorded(Math.abs(d)) });
  }
  if (incident.kind === "feed-gap" && e.missing_seq != null) {
    return t("summary.feed-gap", { seq: e.missing_seq, n: (e.held || []).length });
  }
  const asked = ASKED.exec(incident.summary || "");
  if (asked && (incident.kind === "leave-request" || incident.kind === "arbiter-call")) {
    const reason = asked[2] ? t("summary.because", { reason: asked[2] }) : "";
    return t("summary." + incident.kind, { reason });
  }
  return incident.summary;
}
