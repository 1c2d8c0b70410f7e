// Talking to a player (issue 15): the large live view's push-to-talk button. The first press asks for the arbiter's
// microphone and opens a talk (POST /api/v1/players/{player}/talk: an RTCPeerConnection sending it to the service,
// which passes it on to the player's page; in the distributed mode, issue 16, published in the player's room on
// Janus, whose feed the service gives to the player's page); from then on the microphone is live only while the
// button is held (the mouse, a finger, or Space/Enter on the button). The talk ends with the large view (or the page).

import { el } from "/assets/elements.js";
import { t } from "/assets/i18n.js";
import { publishInRoom } from "/assets/janus_client.js";

export const TALK_WORDS = {
  zh: {
    "talk.hold": "按住说话", "talk.speaking": "正在对棋手说话…", "talk.connecting": "正在接通…",
    "talk.title": "按住按钮（或按空格键）对棋手说话；松开即静音。通话会记录在审计日志中，声音不保存。",
    "talk.noMicrophone": "无法打开你的麦克风：{why}", "talk.refused": "不能对 {name} 说话：{why}",
    "talk.mediaServer": "媒体服务器没有接通你的麦克风，请再试一次",
  },
  en: {
    "talk.hold": "Hold to talk", "talk.speaking": "Speaking to the player…", "talk.connecting": "Connecting…",
    "talk.title": "Hold the button (or Space) to speak to the player; release it to mute. The talk is audited; no sound is kept.",
    "talk.noMicrophone": "Your microphone could not be opened: {why}", "talk.refused": "You cannot speak to {name}: {why}",
    "talk.mediaServer": "the media server did not take your microphone: try again",
  },
};

// The button for one player's large view. api(method, path, body) answers {ok, status, body}; headers() the
// session's CSRF header (for the DELETE sent as the page goes away); iceServers() the ICE servers; sfu() whether the
// cameras go through the media server (known once iceServers() answered); refused(text) shows why a talk could not
// open; refusalText(answer) says a refusal in words; name is the player's name.
export function talkButton({ player, name, api, headers, iceServers, sfu, refused, refusalText }) {
  const button = el("button", "talk", "");
  button.type = "button";
  button.dataset.role = "talk";
  button.dataset.state = "idle";
  let pc = null, microphone = null, talkId = null, opening = null, held = false, closed = false;

  function paint() {
    const state = button.dataset.state;
    button.textContent = t(state === "speaking" ? "talk.speaking" : state === "connecting" ? "talk.connecting" : "talk.hold");
    button.title = t("talk.title");
    button.setAttribute("aria-pressed", String(state === "speaking"));
  }

  async function open() {
    try {
      const stream = await navigator.mediaDevices.getUserMedia({ audio: true, video: false });
      microphone = stream.getAudioTracks()[0];
    } catch (error) {
      refused(t("talk.noMicrophone", { why: error.message || String(error) }));
      return false;
    }
    microphone.enabled = false;
    pc = new RTCPeerConnection({ iceServers: await iceServers() });
    pc.addTrack(microphone);
    if (sfu && sfu()) return openInRoom();
    await pc.setLocalDescription(await pc.createOffer());
    await new Promise((resolve) => {
      if (pc.iceGatheringState === "complete") return resolve();
      pc.addEventListener("icegatheringstatechange", () => pc.iceGatheringState === "complete" && resolve());
      setTimeout(resolve, 3_000);
    });
    const answer = await api("POST", `/api/v1/players/${encodeURIComponent(player)}/talk`,
                             { sdp: pc.localDescription.sdp, type: "offer" });
    if (!opened(answer)) return false;
    await pc.setRemoteDescription({ type: answer.body.type, sdp: answer.body.sdp });
    return true;
  }

  // The service's answer to the talk's opening: its id kept (true), or the refusal said and the microphone let go.
  function opened(answer) {
    if (!answer.ok) {
      release();
      refused(t("talk.refused", { name, why: refusalText(answer) }));
      return false;
    }
    talkId = answer.body.id;
    if (closed) { end(); return false; }
    return true;
  }

  // The distributed mode: the talk opened, the microphone published in the player's room, its feed told back.
  async function openInRoom() {
    const path = `/api/v1/players/${encodeURIComponent(player)}/talk`;
    const answer = await api("POST", path, {});
    if (!opened(answer)) return false;
    let told = null;
    try {
      const { session, feed } = await publishInRoom(answer.body.janus, pc, "talk");
      pc.janus = session;
      told = await api("POST", `${path}/${encodeURIComponent(talkId)}/published`, { feed });
    } catch (error) {
      console.warn("talk through Janus:", error); // the details for whoever looks; the arbiter gets words
    }
    if (told && told.ok) return true;
    end();
    refused(t("talk.refused", { name, why: told ? refusalText(told) : t("talk.mediaServer") }));
    return false;
  }

  function release() {
    if (pc && pc.janus) pc.janus.destroy();
    if (pc) pc.close();
    if (microphone) microphone.stop();
    pc = microphone = null;
  }

  async function press() {
    held = true;
    if (!pc) {
      button.dataset.state = "connecting";
      paint();
      opening = opening || open().finally(() => { opening = null; });
      if (!(await opening)) { button.dataset.state = "idle"; paint(); return; }
    }
    if (microphone) microphone.enabled = held;
    button.dataset.state = held ? "speaking" : "idle";
    paint();
  }

  function lift() {
    held = false;
    if (microphone) microphone.enabled = false;
    if (button.dataset.state === "speaking") button.dataset.state = "idle";
    paint();
  }

  function end() {
    closed = true;
    if (talkId) {
      // keepalive: a talk ended as the page goes away still reaches the service
      fetch(`/api/v1/players/${encodeURIComponent(player)}/talk/${encodeURIComponent(talkId)}`, {
        method: "DELETE", credentials: "same-origin", keepalive: true, headers: headers(),
      }).catch(() => {});
      talkId = null;
    }
    release();
  }

  button.addEventListener("pointerdown", (event) => { event.preventDefault(); press(); });
  for (const kind of ["pointerup", "pointerleave", "pointercancel", "blur"]) button.addEventListener(kind, lift);
  button.addEventListener("keydown", (event) => {
    if ((event.key === " " || event.key === "Enter") && !event.repeat) { event.preventDefault(); press(); }
  });
  button.addEventListener("keyup", (event) => { if (event.key === " " || event.key === "Enter") lift(); });
  paint();
  return { button, end, language: paint };
}
