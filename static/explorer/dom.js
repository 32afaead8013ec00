/* Small DOM helpers. Text from a model or an agent only ever becomes text nodes. */

export const $ = (id) => document.getElementById(id);

export function el(tag, attrs, ...children) {
  const node = document.createElement(tag);
  for (const [key, value] of Object.entries(attrs || {})) {
    if (key === "class") node.className = value;
    else if (key === "text") node.textContent = value;
    else if (key.startsWith("data-") || key.startsWith("aria-")) node.setAttribute(key, value);
    else node[key] = value;
  }
  for (const child of children) {
    if (child === null || child === undefined || child === false) continue;
    node.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
  return node;
}

export function clear(node) {
  node.replaceChildren();
  return node;
}

export function isEventRef(ref) {
  return typeof ref === "string" && /^@e[1-9][0-9]*$/.test(ref);
}

export function eventSeq(ref) {
  return Number(ref.slice(2));
}

/* A tiny publish/subscribe hub, so modules talk without importing each other. */
const listeners = new Map();
export function on(name, fn) {
  if (!listeners.has(name)) listeners.set(name, []);
  listeners.get(name).push(fn);
}
export function emit(name, ...args) {
  for (const fn of listeners.get(name) || []) fn(...args);
}
