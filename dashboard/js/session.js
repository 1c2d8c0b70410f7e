// The login session of the desk and the review page: the API through one fetch wrapper (the session's CSRF token
// on anything but a read, JSON both ways, a network failure as status 0), the login form, the session's end (its
// expiry, a 401, the logout).

import { $ } from "/assets/elements.js";
import { t } from "/assets/i18n.js";

const SESSION_PATH = "/api/v1/session";

// The login's and the session's words (both pages that log in say them alike).
export const SESSION_WORDS = {
  zh: {
    "login.name": "姓名", "login.password": "密码", "login.submit": "登录", "login.wrong": "姓名或密码错误",
    "login.throttled": "登录失败次数过多，请 {s} 秒后再试", "login.tries-left": "姓名或密码错误，还可再试 {n} 次",
    "login.slowed": "姓名或密码错误，下次请在 {s} 秒后再试", "login.busy": "同时登录的请求过多，请 {s} 秒后再试",
    "login.failed": "登录失败（{status}）：{message}", "busy": "数据库正忙（另一个进程正在写入），什么都没有保存：请 {s} 秒后再试",
    "login.ended": "会话已结束，请重新登录", "logout": "退出", "who": "{name}（{role}）", "zone": "时区：{zone}",
  },
  en: {
    "login.name": "Name", "login.password": "Password", "login.submit": "Log in",
    "login.wrong": "Wrong name or password", "login.throttled": "Too many failed logins: try again in {s} s",
    "login.tries-left": "Wrong name or password: {n} more tries",
    "login.slowed": "Wrong name or password: the next try in {s} s",
    "login.busy": "Too many logins at once: try again in {s} s", "login.failed": "Login failed ({status}): {message}",
    "busy": "The database is busy (another process is writing to it); nothing was stored: try again in {s} s",
    "login.ended": "The session has ended: log in again", "logout": "Log out", "who": "{name} ({role})",
    "zone": "Times: {zone}",
  },
};

// The header a change sends with the session's cookie (403 without it).
export function csrfHeaders(session) {
  return session ? { "X-CSRF-Token": session.csrf } : {};
}

// The page's API: `currentSession()` is the page's session (null when logged out); `ended()` is called when a
// request of a logged-in page is refused for want of a session.
export function sessionApi(currentSession, ended) {
  return async function api(method, path, body) {
    const headers = { "Accept": "application/json" };
    if (body !== undefined) headers["Content-Type"] = "application/json";
    if (method !== "GET") Object.assign(headers, csrfHeaders(currentSession()));
    let response;
    try {
      response = await fetch(path, { method, headers, credentials: "same-origin", cache: "no-store",
                                     body: body === undefined ? undefined : JSON.stringify(body) });
    } catch (error) {
      return { ok: false, status: 0, body: { message: String(error) } };
    }
    let data = null;
    if (response.status !== 204) {
      try { data = await response.json(); } catch (error) { data = null; }
    }
    if (response.status === 401 && currentSession() && path !== SESSION_PATH) ended();
    return { ok: response.ok, status: response.status, body: data, headers: response.headers };
  };
}

let expiry = null;

// `ended()` when the session's time is up (`expires`, ms since 1970).
export function endsAt(expires, ended) {
  clearTimeout(expiry);
  const left = expires - Date.now();
  if (left > 0 && left < 2 ** 31) expiry = setTimeout(() => ended(), left);
}

// The login form, shown with a message (a failed login, an ended session): the password emptied, the name focused.
export function showLoginForm(message) {
  $("login").hidden = false;
  $("login-message").textContent = message || "";
  $("login-password").value = "";
  $("login-name").focus();
}

// Why a login failed, in words: tries left, the wait, too many logins, the server busy.
export function loginFailure(answer) {
  const left = answer.body?.tries_left;
  const wait = answer.headers?.get("Retry-After") || "?";
  if (answer.status === 401 && left > 0) return t("login.tries-left", { n: left });
  if (answer.status === 401 && left === 0) return t("login.slowed", { s: answer.body.next_try_after_s });
  if (answer.status === 401) return t("login.wrong");
  if (answer.status === 429) return t(answer.body?.error === "busy" ? "login.busy" : "login.throttled", { s: wait });
  if (answer.status === 503) return t("busy", { s: wait });
  return t("login.failed", { status: answer.status, message: answer.body?.message || "" });
}

// The login form's submit: `loggedIn(session)` on success, the failure said under the form otherwise.
export function onLogin(api, loggedIn, before = () => {}) {
  $("login").addEventListener("submit", async (event) => {
    event.preventDefault();
    before();
    const button = $("login-submit");
    button.disabled = true;
    $("login-message").textContent = "";
    const answer = await api("POST", SESSION_PATH, { name: $("login-name").value.trim(), password: $("login-password").value });
    button.disabled = false;
    if (answer.status === 201) { $("login-password").value = ""; loggedIn(answer.body); return; }
    $("login-message").textContent = loginFailure(answer);
  });
}

// The logout button: the session ended on the server (every role, with the CSRF token), then `cleared()`.
export function onLogout(api, cleared) {
  $("logout").addEventListener("click", async () => {
    await api("DELETE", SESSION_PATH);
    cleared();
  });
}

// The session a reloaded page still has, else null.
export async function resumeSession(api) {
  const answer = await api("GET", SESSION_PATH);
  return answer.ok ? answer.body : null;
}
