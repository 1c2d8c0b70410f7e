// The page's words: one table per language (Chinese by default, English with the switch, kept in this browser).
// Each page gives its own tables; a missing key falls back to English, then to the key itself.

let tables = { zh: {}, en: {} };
let storageKey = "";
export let lang = "zh";

// The switch names the other language, in that language.
const SWITCH_WORDS = { zh: { "lang.switch": "English" }, en: { "lang.switch": "中文" } };

// The page's tables (kept by `key` in this browser), with the shared words added where the page has none of its own.
export function useLanguage(pageTables, key, ...shared) {
  for (const words of [...shared, SWITCH_WORDS]) {
    for (const language of ["zh", "en"]) {
      for (const [name, text] of Object.entries(words[language])) if (!(name in pageTables[language])) pageTables[language][name] = text;
    }
  }
  tables = pageTables;
  storageKey = key;
  lang = localStorage.getItem(key) === "en" ? "en" : "zh";
}

export function t(key, vars) {
  let text = tables[lang][key] ?? tables.en[key] ?? key;
  for (const [name, value] of Object.entries(vars || {})) text = text.replaceAll(`{${name}}`, String(value));
  return text;
}

// Whether the table has words for the key (in this language or in English).
export function has(key) {
  return key in tables[lang] || key in tables.en;
}

// A label from the table, or the server's own word when the table has none.
export function label(prefix, value) {
  if (value == null || value === "") return "—";
  const key = prefix + "." + value;
  return has(key) ? t(key) : String(value);
}

// A list in the language's way: "甲、乙" / "a, b".
export function list(items) {
  return items.join(lang === "zh" ? "、" : ", ");
}

// The static words: the document's language and title, every [data-i18n] text and [data-i18n-placeholder], and
// the switch, which names the other language in that language.
export function sayStaticTexts() {
  document.documentElement.lang = lang === "zh" ? "zh-CN" : "en";
  document.title = t("title");
  for (const node of document.querySelectorAll("[data-i18n]")) node.textContent = t(node.dataset.i18n);
  for (const node of document.querySelectorAll("[data-i18n-placeholder]")) node.placeholder = t(node.dataset.i18nPlaceholder);
  const button = document.getElementById("lang");
  button.textContent = t("lang.switch");
  button.lang = lang === "zh" ? "en" : "zh-CN";
}

// The switch (#lang): the other language, kept, and the page said again.
export function onLanguageSwitch(sayAgain) {
  document.getElementById("lang").addEventListener("click", () => {
    lang = lang === "zh" ? "en" : "zh";
    localStorage.setItem(storageKey, lang);
    sayAgain();
  });
}
