// The desk's check-in list (24.1.1): for each section the desk shows, the players of its current round who have not
// checked in (their board, name and what the camera setup still lacks), and a button to check one in by hand with a
// reason (GET and POST /api/v1/events/{event}/sections/{section}/check-in). It is asked again when the live stream
// says a check-in or a camera approval changed, when the sections shown change, and every 30 s while the page is
// visible (a camera connecting is not on the stream); never every second.

import { $, el, rawText } from "/assets/elements.js";
import { list, t } from "/assets/i18n.js";
import { hourMinutes } from "/assets/times.js";

const REFRESH_MS = 30_000;
const SOON_MS = 600;            // several notices at once: one request per section
const CHECKING_ROLES = ["arbiter", "deputy-chief", "chief", "committee"];
const FOLDED_KEY = "arbiter.checkin.folded";

export const CHECK_IN_WORDS = {
  zh: {
    "checkin.title": "未报到", "checkin.article": "第 24.1.1 条",
    "checkin.rule": "第 24.1.1 条：参赛运动员（队）应该在规定的时限内完成报名和报到手续，否则不得参加比赛。网络赛中，"
      + "摄像头在线、完成环境扫描（和耳部检查）后经裁判批准即为报到；也可由裁判手动报到。",
    "checkin.round": "第{n}轮", "checkin.starts": "{t} 开始", "checkin.started": "已于 {t} 开始",
    "checkin.startedNow": "已开始", "checkin.missingCount": "{n} 人未报到", "checkin.allIn": "{n} 人全部已报到",
    "checkin.board": "{b}台", "checkin.hide": "收起", "checkin.show": "展开",
    "checkin.failed": "报到名单暂不可读（{status}）",
    "checkin.missing.no-platform-id": "无平台账号：只能手动报到",
    "checkin.missing.camera-not-connected": "摄像头未连接",
    "checkin.missing.room-scan-not-done": "未做环境扫描",
    "checkin.missing.ear-check-not-done": "未做耳部检查",
    "checkin.missing.setup-not-approved": "环境未批准",
    "checkin.missing.setup-refused": "环境未获批准：{note}",
    "checkin.missing.approved-without-camera": "批准时摄像头未连接：请连接后重新批准",
    "checkin.missing.approved-before-checks": "批准早于检查：请检查后重新批准",
    "checkin.button": "手动报到", "checkin.buttonTitle": "手动报到，须写明理由（第 24.1.1 条）",
    "checkin.dlgTitle": "手动报到：",
    "checkin.dlgAbout": "{place}。摄像头检查未完成时，可依据平台的报到记录、电话等手动报到，须写明理由（第 24.1.1 条）。",
    "checkin.stillMissing": "尚缺：{what}", "checkin.reason": "理由", "checkin.submit": "报到",
    "checkin.needReason": "请写明理由", "checkin.sending": "正在发送…",
    "checkin.done": "{name} 已手动报到（第{n}轮）",
  },
  en: {
    "checkin.title": "Not checked in", "checkin.article": "art. 24.1.1",
    "checkin.rule": "Art. 24.1.1: participating players (teams) shall complete registration and check-in within the "
      + "prescribed time limits; otherwise they may not take part. Online, a player is checked in once the arbiter "
      + "approves the setup while the camera streams, after the room scan (and the ear check); or by hand.",
    "checkin.round": "round {n}", "checkin.starts": "starts {t}", "checkin.started": "started {t}",
    "checkin.startedNow": "started", "checkin.missingCount": "{n} not checked in", "checkin.allIn": "all {n} checked in",
    "checkin.board": "B{b}", "checkin.hide": "Hide", "checkin.show": "Show",
    "checkin.failed": "Check-in list unavailable ({status})",
    "checkin.missing.no-platform-id": "no platform id: check in by hand",
    "checkin.missing.camera-not-connected": "camera not connected",
    "checkin.missing.room-scan-not-done": "no room scan",
    "checkin.missing.ear-check-not-done": "no ear check",
    "checkin.missing.setup-not-approved": "setup not approved",
    "checkin.missing.setup-refused": "setup refused: {note}",
    "checkin.missing.approved-without-camera": "approved while the camera was off: approve again once it streams",
    "checkin.missing.approved-before-checks": "approved before the checks: approve again after them",
    "checkin.button": "Check in", "checkin.buttonTitle": "Check in by hand, with the reason (art. 24.1.1)",
    "checkin.dlgTitle": "Check in by hand: ",
    "checkin.dlgAbout": "{place}. While the camera setup is not complete, a player may be checked in by hand (the "
      + "platform's own check-in, a call), with the reason (art. 24.1.1).",
    "checkin.stillMissing": "Still missing: {what}", "checkin.reason": "Reason", "checkin.submit": "Check in",
    "checkin.needReason": "Give the reason", "checkin.sending": "Sending…",
    "checkin.done": "{name} checked in by hand (round {n})",
  },
};

// What a player still lacks, in words.
export function missingText(player) {
  return list((player.missing || []).map((code) => t("checkin.missing." + code, { note: player.approval?.note || "" })));
}

// The list: `api` (the page's), `sections()` the sections shown ("event/section"), `sectionName(key)` and
// `sectionTitle(key)` their names, `role()` the arbiter's role, `refusalText(answer)` a refusal in words.
export function checkInList({ api, sections, sectionName, sectionTitle, role, refusalText }) {
  const state = { lists: new Map(), failed: new Map(), timer: null, soon: null, asking: null, again: false,
                  acting: null, answer: null, folded: localStorage.getItem(FOLDED_KEY) === "1" };

  async function refresh() {
    if (state.asking) { state.again = true; return state.asking; }
    state.asking = (async () => {
      const keys = sections();
      const answers = await Promise.all(keys.map((key) => {
        const [event, section] = key.split("/");
        return api("GET", `/api/v1/events/${encodeURIComponent(event)}/sections/${encodeURIComponent(section)}/check-in`);
      }));
      state.lists = new Map();
      state.failed = new Map();
      keys.forEach((key, index) => {
        const answer = answers[index];
        if (answer.ok && answer.body && answer.body.round != null) state.lists.set(key, answer.body);
        else if (!answer.ok && answer.status !== 403 && answer.status !== 404) state.failed.set(key, answer.status);
      });
      render();
    })();
    try { await state.asking; } finally { state.asking = null; }
    if (state.again) { state.again = false; await refresh(); }
  }

  function schedule() {
    clearTimeout(state.soon);
    state.soon = setTimeout(refresh, SOON_MS);
  }

  function start() {
    stop();
    state.timer = setInterval(() => { if (!document.hidden) refresh(); }, REFRESH_MS);
    refresh();
  }

  function stop() {
    clearInterval(state.timer);
    clearTimeout(state.soon);
    state.timer = state.soon = null;
    state.lists = new Map();
    state.failed = new Map();
    state.answer = null;
    render();
  }

  function startWords(body) {
    if (body.started) return body.starts != null ? t("checkin.started", { t: hourMinutes(body.starts) }) : t("checkin.startedNow");
    return body.starts != null ? t("checkin.starts", { t: hourMinutes(body.starts) }) : "";
  }

  function playerRow(key, body, player) {
    const row = el("li", "checkin-player");
    row.dataset.section = key;
    row.dataset.startNo = String(player.start_no);
    row.dataset.missing = (player.missing || []).join(" ");
    const head = el("div", "checkin-head");
    const board = el("span", "checkin-board", t("checkin.board", { b: player.board }));
    board.title = t("color." + player.colour);
    const stone = el("span", `stone ${player.colour}`);
    const name = rawText("span", player.name);
    name.className = "checkin-name";
    name.title = player.team ? `${player.name} · ${player.team}` : player.name;
    const button = el("button", "checkin-button", t("checkin.button"));
    button.type = "button";
    const may = CHECKING_ROLES.includes(role());
    button.disabled = !may;
    button.title = may ? t("checkin.buttonTitle") : t("role.greyed");
    button.addEventListener("click", () => openDialog(key, body, player));
    head.append(board, stone, name, button);
    const what = el("div", "checkin-missing", missingText(player));
    row.append(head, what);
    return row;
  }

  function render() {
    const box = $("check-in");
    if (!box) return;
    const lists = [...state.lists.entries()];
    box.hidden = lists.length === 0 && state.failed.size === 0;
    const waiting = lists.reduce((sum, [, body]) => sum + body.counts.not_checked_in, 0);
    const late = lists.some(([, body]) => body.started && body.counts.not_checked_in > 0);
    const count = $("check-in-count");
    count.textContent = String(waiting);
    count.className = "pill " + (waiting === 0 ? "ok" : late ? "bad" : "wait");
    count.dataset.count = String(waiting);
    $("check-in-article").textContent = t("checkin.article");
    $("check-in-title").title = $("check-in-article").title = t("checkin.rule");
    const toggle = $("check-in-toggle");
    toggle.textContent = state.folded ? t("checkin.show") : t("checkin.hide");
    toggle.setAttribute("aria-expanded", String(!state.folded));
    const lines = [];
    for (const [key, body] of lists) {
      const group = el("li", "checkin-section");
      group.dataset.section = key;
      group.dataset.round = String(body.round);
      const head = el("div", "checkin-section-head");
      const name = rawText("span", sectionName(key));
      name.className = "checkin-section-name";
      name.title = sectionTitle(key);
      const round = t("checkin.round", { n: body.round });
      const counted = body.counts.not_checked_in
        ? t("checkin.missingCount", { n: body.counts.not_checked_in }) : t("checkin.allIn", { n: body.counts.checked_in });
      head.append(name, el("span", "muted", [` · ${round}`, startWords(body), counted].filter(Boolean).join(" · ")));
      group.append(head);
      const players = el("ol", "checkin-players");
      for (const player of body.players) if (!player.checked_in) players.append(playerRow(key, body, player));
      if (players.childElementCount) group.append(players);
      lines.push(group);
    }
    for (const [key, status] of state.failed) {
      const group = el("li", "checkin-section");
      group.append(el("div", "muted", `${sectionName(key)} · ${t("checkin.failed", { status })}`));
      lines.push(group);
    }
    $("check-in-lists").replaceChildren(...lines);
    $("check-in-lists").hidden = state.folded;
    const said = $("check-in-said");
    said.textContent = state.answer ? t("checkin.done", state.answer) : "";
    said.hidden = !state.answer;
    if (state.acting) sayDialog();
  }

  // The dialog's words, for the player it acts on (again after a switch of language).
  function sayDialog() {
    const { key, round, player } = state.acting;
    const place = [sectionName(key), t("checkin.round", { n: round }), t("checkin.board", { b: player.board })]
      .join(" · ");
    $("check-in-dlg-title").replaceChildren(t("checkin.dlgTitle"), rawText("span", player.name));
    $("check-in-dlg-about").textContent = t("checkin.dlgAbout", { place });
    $("check-in-dlg-missing").textContent = t("checkin.stillMissing", { what: missingText(player) });
    const answer = $("check-in-answer");
    if (answer.dataset.key) answer.textContent = t(answer.dataset.key);
  }

  function sayAnswer(key, kind) {
    const answer = $("check-in-answer");
    answer.textContent = key ? t(key) : "";
    answer.className = kind || "";
    if (key) answer.dataset.key = key; else delete answer.dataset.key;
    delete answer.dataset.status;
  }

  function openDialog(key, body, player) {
    state.acting = { key, round: body.round, player };
    sayAnswer(null);
    sayDialog();
    $("check-in-reason").value = "";
    $("check-in-submit").disabled = false;
    if (!$("check-in-dlg").open) $("check-in-dlg").showModal();
    $("check-in-reason").focus();
  }

  async function submit() {
    const acting = state.acting;
    if (!acting) return;
    const reason = $("check-in-reason").value.trim();
    const answer = $("check-in-answer");
    if (!reason) { sayAnswer("checkin.needReason", "refused"); return; }
    const [event, section] = acting.key.split("/");
    $("check-in-submit").disabled = true;
    sayAnswer("checkin.sending");
    const reply = await api("POST", `/api/v1/events/${encodeURIComponent(event)}/sections/${encodeURIComponent(section)}/check-in`,
                            { action: "check-in", round: acting.round, start_no: acting.player.start_no, reason });
    $("check-in-submit").disabled = false;
    if (!reply.ok) {
      sayAnswer(null, "refused");
      answer.textContent = refusalText(reply);
      answer.dataset.status = "refused";
      return;
    }
    state.answer = { name: acting.player.name, n: acting.round };
    state.acting = null;
    $("check-in-dlg").close();
    await refresh();
  }

  $("check-in-submit").addEventListener("click", submit);
  $("check-in-close").addEventListener("click", () => $("check-in-dlg").close());
  $("check-in-dlg").addEventListener("close", () => { // nothing of it is left to say in another language
    state.acting = null;
    sayAnswer(null);
    for (const id of ["check-in-dlg-title", "check-in-dlg-about", "check-in-dlg-missing"]) $(id).replaceChildren();
  });
  $("check-in-toggle").addEventListener("click", () => {
    state.folded = !state.folded;
    localStorage.setItem(FOLDED_KEY, state.folded ? "1" : "0");
    render();
  });

  return { start, stop, refresh, schedule, render };
}
