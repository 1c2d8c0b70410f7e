// Times as the pages show them: in the event's zone (the session's or the player's time_zone; UTC until the
// service says, and for a zone this browser does not know), 24-hour, with the zone named; game clocks as m:ss.

export let timeZone = "UTC";

const formats = new Map(); // "zone|kind" → Intl.DateTimeFormat
const KINDS = {
  time: { hour: "2-digit", minute: "2-digit", second: "2-digit" },
  minutes: { hour: "2-digit", minute: "2-digit" },
  dateTime: { year: "numeric", month: "2-digit", day: "2-digit", hour: "2-digit", minute: "2-digit", second: "2-digit" },
  dayMinutes: { month: "2-digit", day: "2-digit", hour: "2-digit", minute: "2-digit" },
  offset: { timeZoneName: "longOffset" },
};

function known(zone) {
  try { new Intl.DateTimeFormat("en-GB", { timeZone: zone }); return true; } catch (error) { return false; }
}

// The zone the page shows times in: the event's, or UTC (named as such) when it is none this browser knows.
export function setTimeZone(zone) {
  timeZone = zone && known(zone) ? zone : "UTC";
  return timeZone;
}

function format(zone, kind) {
  const used = zone && known(zone) ? zone : "UTC";
  const key = `${used}|${kind}`;
  let made = formats.get(key);
  if (!made) {
    made = new Intl.DateTimeFormat("en-GB", { timeZone: used, hourCycle: "h23", ...KINDS[kind] });
    formats.set(key, made);
  }
  return made;
}

function parts(ms, zone, kind) {
  return Object.fromEntries(format(zone, kind).formatToParts(new Date(ms)).map((part) => [part.type, part.value]));
}

// "08:00:05".
export function clockTime(ms, zone = timeZone) {
  return format(zone, "time").format(new Date(ms));
}

// "08:00".
export function hourMinutes(ms, zone = timeZone) {
  return format(zone, "minutes").format(new Date(ms));
}

// "2026-01-01 08:00:05".
export function zoneDateTime(ms, zone = timeZone) {
  const p = parts(ms, zone, "dateTime");
  return `${p.year}-${p.month}-${p.day} ${p.hour}:${p.minute}:${p.second}`;
}

// "12-03 00:00".
export function dayAndMinutes(ms, zone = timeZone) {
  const p = parts(ms, zone, "dayMinutes");
  return `${p.month}-${p.day} ${p.hour}:${p.minute}`;
}

// "Asia/Shanghai (UTC+08:00)": the zone and its offset now.
export function zoneLabel(zone = timeZone) {
  const used = zone && known(zone) ? zone : "UTC";
  const part = format(used, "offset").formatToParts(new Date()).find((p) => p.type === "timeZoneName");
  const offset = !part || part.value === "GMT" ? "+00:00" : part.value.replace("GMT", "");
  return `${used} (UTC${offset})`;
}

function zoneOffsetMs(ms) {
  return Date.parse(zoneDateTime(ms).replace(" ", "T") + "Z") - Math.floor(ms / 1000) * 1000;
}

// A wall-clock time typed in the zone ("2026-01-01T08:00[:05]") as ms since 1970.
export function zoneParse(value) {
  const guess = Date.parse(value + (value.length <= 16 ? ":00" : "") + "Z");
  if (Number.isNaN(guess)) return guess;
  return guess - zoneOffsetMs(guess - zoneOffsetMs(guess));
}

const pad = (n) => String(n).padStart(2, "0");

// A game clock: "4:05", "1:02:03"; "–" when there is none.  A running clock counts whole seconds up (it shows 0:00
// only when the time is gone); a recorded one (`down`) shows the whole seconds that were left.
export function gameClock(ms, down = false) {
  if (ms == null) return "–";
  const total = Math.max(0, down ? Math.floor(ms / 1000) : Math.ceil(ms / 1000));
  const hours = Math.floor(total / 3600), minutes = Math.floor((total % 3600) / 60), seconds = total % 60;
  return hours ? `${hours}:${pad(minutes)}:${pad(seconds)}` : `${minutes}:${pad(seconds)}`;
}
