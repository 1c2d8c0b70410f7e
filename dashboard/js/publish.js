// How a player's page sends one device's stream (its front or side camera, its screen): to the service directly (an
// offer to /api/v1/rtc/offer, answered), or in the distributed mode (the configuration's `sfu`) to Janus, in the
// player's own room, and the feed told to the service (/api/v1/sfu/published), which gives it to the analysis
// workers. The caller builds the connection (its tracks and handlers); this makes the exchange.

import { publishInRoom } from "/assets/janus_client.js";

async function gathered(pc) {
  if (pc.iceGatheringState === "complete") return;
  await new Promise((resolve) => {
    pc.addEventListener("icegatheringstatechange", () => pc.iceGatheringState === "complete" && resolve());
  });
}

function post(path, body) {
  return fetch(path, { method: "POST", headers: { "Content-Type": "application/json" }, body: JSON.stringify(body) });
}

// The camera's video, as the configuration asks: simulcast in the distributed mode (the full picture for the
// arbiters' live views, half its size for the analysis), one encoding otherwise. Returns its sender.
export function addCamera(pc, config, track, stream) {
  if (!config.sfu) return pc.addTrack(track, stream);
  const bitrate = (config.video && config.video.maxBitrate) || 500000;
  return pc.addTransceiver(track, {
    direction: "sendonly", streams: [stream],
    sendEncodings: [{ rid: "h", maxBitrate: bitrate }, { rid: "l", maxBitrate: Math.round(bitrate / 3),
                                                          scaleResolutionDownBy: 2 }],
  }).sender;
}

// Send the device's stream. Resolves to null once sent, or to the refusal's response (the page says why).
export async function publish(pc, { config, token, device, surface }) {
  if (!config.sfu) {
    await pc.setLocalDescription(await pc.createOffer());
    await gathered(pc);
    const answer = await post("/api/v1/rtc/offer", { sdp: pc.localDescription.sdp, type: pc.localDescription.type,
                                                     token, device, surface });
    if (!answer.ok) return answer;
    await pc.setRemoteDescription(await answer.json());
    return null;
  }
  const room = await post("/api/v1/sfu/room", { token });
  if (!room.ok) return room;
  const { session, feed } = await publishInRoom(await room.json(), pc, device);
  pc.janus = session;
  const told = await post("/api/v1/sfu/published", { token, device, feed, surface });
  if (!told.ok) session.destroy();
  return told.ok ? null : told;
}

// Stop sending: the connection closed, and its Janus session with it (Janus lets the feed go at once).
export function hangUp(pc) {
  if (!pc) return;
  if (pc.janus) pc.janus.destroy();
  pc.close();
}
