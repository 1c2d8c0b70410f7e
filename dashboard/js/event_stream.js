// A server-sent event stream that comes back: the browser retries a dropped connection by itself; after a refusal
// it gives up (the source is closed), so the stream is opened again after `retryMs`.  `onState(state, again)` hears
// "connecting", "connected" (again: after a reconnection, when events may have been missed) and "reconnecting";
// `events` maps each event's name to its handler, which gets the event's data as parsed JSON.

export function eventStream(url, { events, onState = () => {}, retryMs = 3000 }) {
  let source = null, reopen = null, stopped = false;
  const open = () => {
    clearTimeout(reopen);
    if (source) source.close();
    onState("connecting", false);
    let first = true;
    source = new EventSource(url);
    source.onopen = () => {
      onState("connected", !first);
      first = false;
    };
    source.onerror = () => {
      if (stopped) return;
      onState("reconnecting", false);
      if (source && source.readyState === EventSource.CLOSED) reopen = setTimeout(open, retryMs);
    };
    for (const [name, handler] of Object.entries(events)) {
      source.addEventListener(name, (event) => handler(JSON.parse(event.data)));
    }
  };
  open();
  return {
    close() {
      stopped = true;
      clearTimeout(reopen);
      if (source) { source.onerror = null; source.close(); }
      source = null;
    },
  };
}
