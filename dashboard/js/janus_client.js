// Janus's HTTP API from the pages (the distributed mode, issue 16): what publishing one device (the player's page) and
// watching one (an arbiter's live view) need, and no more. A session kept alive by its long poll; one VideoRoom
// handle; the player's room joined with its PIN; every ICE candidate in the SDP (no trickle).

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

// Watch a player's device through Janus (an arbiter's live view): `grant` is what the service gave for the view
// ({url, token, room, pin, feed}); Janus offers, `pc` answers. The session, to destroy when the view closes.
export async function subscribeInRoom(grant, pc) {
  const session = new JanusSession(grant.url, grant.token);
  await session.create();
  try {
    const handle = await session.attach();
    const joined = await session.message(handle, { request: "join", ptype: "subscriber", room: grant.room,
                                                   pin: grant.pin, streams: [{ feed: grant.feed }] });
    await pc.setRemoteDescription(joined.jsep);
    await pc.setLocalDescription(await pc.createAnswer());
    await gathered(pc);
    await session.message(handle, { request: "start", room: grant.room },
                          { type: "answer", sdp: pc.localDescription.sdp, trickle: false });
    return session;
  } catch (error) {
    session.destroy();
    throw error;
  }
}
