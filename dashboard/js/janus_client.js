// Janus's HTTP API from a player's page (the distributed mode, issue 16): what publishing one device needs, and no
// more. A session kept alive by its long poll; one VideoRoom handle; join the player's room as a publisher with its
// PIN (the device's name as the display name), offer with every ICE candidate in it, take Janus's answer.

const VIDEOROOM = "janus.plugin.videoroom";
const REPLY_MS = 10000;

function transaction() {
  return Math.random().toString(36).slice(2) + Date.now().toString(36);
}

export class JanusSession {
  constructor(url, token) {
    this.url = url;
    this.token = token;
    this.waiting = new Map();
    this.closed = false;
    this.session = null;
  }

  async post(url, body) {
    const response = await fetch(url, {
      method: "POST", headers: { "Content-Type": "application/json" },
      body: JSON.stringify({ transaction: transaction(), ...body, token: this.token }),
    });
    const reply = await response.json();
    if (reply.janus === "error") throw new Error(`Janus ${reply.error.code}: ${reply.error.reason}`);
    return reply;
  }

  async create() {
    const reply = await this.post(this.url, { janus: "create" });
    this.session = `${this.url}/${reply.data.id}`;
    this.poll();
  }

  // Janus's events by long poll: each handed to the request waiting for it (the poll also keeps the session alive).
  async poll() {
    let rid = 0;
    while (!this.closed) {
      try {
        const response = await fetch(`${this.session}?maxev=10&rid=${rid++}&token=${encodeURIComponent(this.token)}`);
        const events = await response.json();
        for (const event of Array.isArray(events) ? events : [events]) {
          const waiter = this.waiting.get(event.transaction);
          if (waiter && event.janus === "event") { this.waiting.delete(event.transaction); waiter(event); }
        }
      } catch (error) {
        if (!this.closed) await new Promise((resolve) => setTimeout(resolve, 1000));
      }
    }
  }

  async attach() {
    const reply = await this.post(this.session, { janus: "attach", plugin: VIDEOROOM });
    return `${this.session}/${reply.data.id}`;
  }

  // An asynchronous request: Janus acknowledges it, its answer comes by the long poll.
  async message(handle, body, jsep) {
    const id = transaction();
    const answered = new Promise((resolve, reject) => {
      this.waiting.set(id, resolve);
      setTimeout(() => this.waiting.delete(id) && reject(new Error("Janus did not answer")), REPLY_MS);
    });
    await this.post(handle, jsep ? { janus: "message", body, jsep, transaction: id }
                                 : { janus: "message", body, transaction: id });
    const event = await answered;
    const data = (event.plugindata && event.plugindata.data) || {};
    if (data.error) throw new Error(`Janus ${data.error_code}: ${data.error}`);
    return event;
  }

  destroy() {
    this.closed = true;
    if (this.session) this.post(this.session, { janus: "destroy" }).catch(() => {});
  }
}

async function gathered(pc) {
  if (pc.iceGatheringState === "complete") return;
  await new Promise((resolve) => {
    pc.addEventListener("icegatheringstatechange", () => pc.iceGatheringState === "complete" && resolve());
  });
}

// Publish `pc`'s tracks in the player's room ({url, token, room, pin}) as `device`: the session (to destroy when the
// page stops) and the feed's id (the service is told it).
export async function publishInRoom(room, pc, device) {
  const session = new JanusSession(room.url, room.token);
  await session.create();
  try {
    const handle = await session.attach();
    const joined = await session.message(handle, { request: "join", ptype: "publisher", room: room.room,
                                                   pin: room.pin, display: device });
    const feed = joined.plugindata.data.id;
    await pc.setLocalDescription(await pc.createOffer());
    await gathered(pc);
    const offer = { type: "offer", sdp: pc.localDescription.sdp, trickle: false };
    const answered = await session.message(handle, { request: "configure", audio: true, video: true }, offer);
    await pc.setRemoteDescription(answered.jsep);
    return { session, feed };
  } catch (error) {
    session.destroy();
    throw error;
  }
}
