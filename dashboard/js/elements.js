// The page's elements: found by id, made with a class and a text (never HTML).

export const $ = (id) => document.getElementById(id);

export function el(tag, className, text) {
  const node = document.createElement(tag);
  if (className) node.className = className;
  if (text !== undefined && text !== null) node.textContent = String(text);
  return node;
}

// User data (names, teams, sections, links): shown as the event spells it, in either language.
export function rawText(tag, text, kind = "name") {
  const node = el(tag, "", text);
  node.dataset.raw = kind;
  return node;
}
