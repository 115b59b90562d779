/** A tiny element builder: h("button", { onclick }, "Approve"). Text is always set as text, never as HTML. */
type Child = Node | string | number | null | undefined | false | Child[];
type Props = Record<string, unknown> & { class?: string; dataset?: Record<string, string> };

export function h<K extends keyof HTMLElementTagNameMap>(tag: K, props: Props = {}, ...children: Child[]): HTMLElementTagNameMap[K] {
  const element = document.createElement(tag);
  for (const [name, value] of Object.entries(props)) {
    if (value === undefined || value === null || value === false) continue;
    if (name === "class") element.className = String(value);
    else if (name === "dataset") Object.assign(element.dataset, value);
    // Through the CSSOM: the console's CSP forbids style attributes.
    else if (name === "style") Object.assign(element.style, value);
    else if (name.startsWith("on") && typeof value === "function") element.addEventListener(name.slice(2), value as EventListener);
    else if (name === "value" || name === "checked" || name === "disabled" || name === "selected")
      Object.assign(element, { [name]: value });
    else element.setAttribute(name, value === true ? "" : String(value));
  }
  append(element, children);
  return element;
}

function append(parent: Node, children: Child[]) {
  for (const child of children) {
    if (child === null || child === undefined || child === false) continue;
    if (Array.isArray(child)) append(parent, child);
    else parent.appendChild(typeof child === "object" ? child : document.createTextNode(String(child)));
  }
}

/** Replaces the children of `parent`. */
export function render(parent: Element, ...children: Child[]) {
  parent.replaceChildren();
  append(parent, children);
}

let fieldCount = 0;
/** A labelled form field: the label names the control for screen readers and tests. */
export function field(
  label: string,
  control: HTMLInputElement | HTMLSelectElement | HTMLTextAreaElement,
  /** Text, or parts of which some change with the control's value. */
  hint?: string | (string | Node)[],
) {
  control.id ||= `f${++fieldCount}`;
  const hintEl = hint ? h("small", { id: `${control.id}-hint`, class: "hint" }, ...(typeof hint === "string" ? [hint] : hint)) : null;
  if (hintEl) control.setAttribute("aria-describedby", hintEl.id);
  return h("div", { class: "field" }, h("label", { for: control.id }, label), control, hintEl);
}

/** Says something to screen readers (the live region) without moving focus. */
export function announce(text: string) {
  const status = document.getElementById("status");
  if (status) status.textContent = text;
}

export const usd = (n: number | undefined) => (n === undefined ? "—" : `$${n < 0.01 ? n.toFixed(5) : n.toFixed(2)}`);
