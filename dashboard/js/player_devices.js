// The player's devices beyond the front camera (issue 15): the set-up guide of each device the section requires (the
// microphone too, which rides on the front camera's stream), each device's state as the service sees it (its
// "devices" events), and the screen share, which this page sends itself (the whole screen only; a window or a tab is
// refused here and by the service; a share stopped is reported at once). The side camera is a phone opening this
// page's link with ?device=side (its QR code is shown here). Each device reconnects by itself.

import { $ } from "/assets/elements.js";
import { t } from "/assets/i18n.js";
import { hangUp, publish } from "/assets/publish.js";

const KIND = { connected: "ok", "analysis-degraded": "ok", "not-connected": "wait", lost: "bad", stopped: "bad",
               refused: "bad", frozen: "bad", covered: "bad", moved: "bad", changed: "bad", muted: "bad" };
const SHOWN = ["front", "side", "screen", "microphone"];
const SCREEN_VIDEO = { frameRate: 2, maxBitrate: 600_000 };
const RETRY_MS = 3000;

export function playerDevices(token, { rtcConfig, why }) {
  const shown = { required: ["front"], devices: {}, said: null, side: null };
  let screen = null, retry = null;

  function pill(device) {
    const box = $("state-" + device);
    if (!box) return;
    const state = shown.devices[device] || { state: "not-connected" };
    let key = "device.state." + state.state;
    if (device === "side" && state.state === "connected" && !state.reference) key = "device.state.awaiting";
    box.textContent = t(key);
    box.className = "state " + (KIND[state.state] || "wait");
    box.dataset.state = state.state;
  }

  function say(key, vars) {
    shown.said = key ? [key, vars || {}] : null;
    $("screen-said").hidden = !key;
    $("screen-said").textContent = key ? t(key, vars) : "";
  }

  // The service's word on each device (its first state and every change).
  function show(devices) {
    if (!devices) return;
    shown.devices = { ...shown.devices, ...devices };
    for (const device of SHOWN) pill(device);
  }

  // Which devices the section requires, and the side camera's link (a QR code for the phone).
  async function load() {
    const response = await fetch(`/api/v1/play/${encodeURIComponent(token)}/devices?origin=${encodeURIComponent(location.origin)}`);
    if (!response.ok) return;
    const body = await response.json();
    shown.required = body.required;
    shown.side = body.side || null;
    $("devices-guide").hidden = body.required.length < 2;
    $("step-side").hidden = !body.required.includes("side");
    $("step-screen").hidden = !body.required.includes("screen");
    $("step-microphone").hidden = !body.required.includes("microphone"); // on the front camera's stream
    if (shown.side) {
      $("side-qr").src = shown.side.qr;
      $("side-link").href = shown.side.link;
      $("side-link").textContent = shown.side.link;
    }
    show(body.devices);
  }

  async function report(state, surface) {
    try {
      const response = await fetch(`/api/v1/play/${encodeURIComponent(token)}/devices`, {
        method: "POST", headers: { "Content-Type": "application/json" }, keepalive: true,
        body: JSON.stringify({ device: "screen", state, surface }),
      });
      if (response.ok) show((await response.json()).devices);
    } catch (e) { /* the service hears of it anyway: no frame comes */ }
  }

  // The share stopped (the browser's "stop sharing", or the screen went away): said at once, then offered again.
  function ended() {
    if (!screen || screen.ended) return;
    screen.ended = true;
    clearInterval(screen.watch);
    clearTimeout(retry);
    hangUp(screen.pc);
    $("screen-preview").srcObject = null;
    say("screen.stopped");
    show({ screen: { state: "stopped", since: Date.now() } });
    report("ended");
    $("share-screen").disabled = false;
  }

  async function connect() {
    clearTimeout(retry);
    if (!screen || screen.ended) return;
    const config = await rtcConfig();
    if (!config || !screen || screen.ended) return;
    hangUp(screen.pc);
    const pc = new RTCPeerConnection({ iceServers: config.iceServers });
    screen.pc = pc;
    const sender = pc.addTrack(screen.track, screen.stream);
    pc.onconnectionstatechange = () => {
      if (screen && screen.pc === pc && (pc.connectionState === "failed" || pc.connectionState === "disconnected")) {
        show({ screen: { state: "lost", since: Date.now() } });
        retry = setTimeout(connect, RETRY_MS);
      }
    };
    let refused;
    try {
      refused = await publish(pc, { config, token, device: "screen", surface: screen.surface });
    } catch (error) {  // the media server did not take it: again shortly
      retry = setTimeout(connect, RETRY_MS);
      return;
    }
    if (refused) {
      say("screen.refusedBy", { why: await why(refused) });
      if (refused.status === 409) retry = setTimeout(connect, RETRY_MS); // the old share not yet gone
      return;
    }
    const parameters = sender.getParameters();
    parameters.encodings = parameters.encodings && parameters.encodings.length ? parameters.encodings : [{}];
    parameters.encodings[0].maxFramerate = SCREEN_VIDEO.frameRate;
    parameters.encodings[0].maxBitrate = SCREEN_VIDEO.maxBitrate;
    try { await sender.setParameters(parameters); } catch (e) { /* the capture's own frame rate still applies */ }
  }

  async function share() {
    say(null);
    let stream;
    try {
      stream = await navigator.mediaDevices.getDisplayMedia({
        video: { displaySurface: "monitor", frameRate: { max: SCREEN_VIDEO.frameRate } }, audio: false,
        monitorTypeSurfaces: "include", selfBrowserSurface: "exclude", surfaceSwitching: "exclude",
      });
    } catch (error) {
      say("screen.none", { why: error.message || String(error) });
      return;
    }
    const track = stream.getVideoTracks()[0];
    const surface = track.getSettings().displaySurface;
    if (surface !== "monitor") { // a window or a tab: refused here, and the service is told
      track.stop();
      say(surface === "window" ? "screen.refused.window" : surface === "browser" ? "screen.refused.tab" : "screen.refused.other");
      show({ screen: { state: "refused", since: Date.now(), surface } });
      report("refused", surface || "unknown");
      return;
    }
    if (screen && !screen.ended) { screen.ended = true; clearInterval(screen.watch); hangUp(screen.pc); }
    track.contentHint = "detail";
    screen = { stream, track, surface, pc: null, ended: false };
    track.addEventListener("ended", ended);
    // A track stopped by script fires no "ended": its state says so.
    screen.watch = setInterval(() => { if (track.readyState === "ended") ended(); }, 250);
    $("screen-preview").srcObject = stream;
    $("share-screen").disabled = true;
    await connect();
  }

  $("share-screen").addEventListener("click", share);

  return {
    show,
    load,
    // The player agreed: the set-up steps may start.
    enable() { $("share-screen").disabled = Boolean(screen && !screen.ended); },
    applyLanguage() {
      for (const device of SHOWN) pill(device);
      if (shown.said) say(...shown.said);
    },
  };
}
