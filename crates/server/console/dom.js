// DOM helpers shared by every page. The console never assigns HTML strings (the page's
// Content-Security-Policy enforces Trusted Types): elements are built with h(), text is always
// text. The only HTML the console renders is a sanitized banner body (banner.js).

/** Creates an element. `attrs`: attributes, plus `on<event>` listeners, `class` (string or
 *  array), `dataset` (object) and `style` (object of CSSOM properties); false/null skip. */
export function h(tag, attrs, ...children) {
  const svg = tag.startsWith('svg:');
  const el = svg
    ? document.createElementNS('http://www.w3.org/2000/svg', tag.slice(4))
    : document.createElement(tag);
  for (const [name, value] of Object.entries(attrs || {})) {
    if (value === false || value === null || value === undefined) continue;
    if (name.startsWith('on') && typeof value === 'function') {
      el.addEventListener(name.slice(2).toLowerCase(), value);
    } else if (name === 'class') {
      const classes = Array.isArray(value) ? value.filter(Boolean).join(' ') : value;
      if (classes) el.setAttribute('class', classes);
    } else if (name === 'dataset') {
      Object.assign(el.dataset, value);
    } else if (name === 'style') {
      for (const [prop, v] of Object.entries(value)) {
        if (prop.startsWith('--')) el.style.setProperty(prop, v);
        else el.style[prop] = v;
      }
    } else if (name === 'value' && !svg) {
      el.value = value;
    } else if (name === 'checked' || name === 'selected' || name === 'disabled' || name === 'indeterminate') {
      el[name] = Boolean(value);
    } else {
      el.setAttribute(name, value === true ? '' : String(value));
    }
  }
  append(el, children);
  return el;
}

/** Appends children: nodes, strings (as text), arrays, skipping null/false. */
export function append(el, children) {
  for (const child of children.flat(Infinity)) {
    if (child === null || child === undefined || child === false) continue;
    el.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
  return el;
}

/** Replaces an element's children. */
export function replace(el, ...children) {
  el.replaceChildren();
  return append(el, children);
}

/** A unique id for label/aria pairing. */
let nextId = 0;
export function uid(prefix = 'b') {
  nextId += 1;
  return `${prefix}-${nextId}`;
}

const byteUnits = ['B', 'KB', 'MB', 'GB', 'TB', 'PB'];
/** 1536 -> "1.5 KB" (binary multiples, as storage is billed). */
export function formatBytes(bytes) {
  if (bytes === null || bytes === undefined || Number.isNaN(Number(bytes))) return '';
  let value = Number(bytes);
  let unit = 0;
  while (Math.abs(value) >= 1024 && unit < byteUnits.length - 1) {
    value /= 1024;
    unit += 1;
  }
  return `${unit === 0 ? value : value.toFixed(value < 10 ? 1 : 0)} ${byteUnits[unit]}`;
}

/** The wire's zone-less UTC timestamps ("2019-01-24T08:17:02.4355712") as a Date; also takes a
 *  Date, milliseconds since the epoch, or a day ("2027-12-31", midnight UTC). */
export function parseTime(wire) {
  if (wire === null || wire === undefined || wire === '') return null;
  if (wire instanceof Date) return Number.isNaN(wire.getTime()) ? null : wire;
  if (typeof wire === 'number') return Number.isFinite(wire) ? new Date(wire) : null;
  const text = String(wire);
  const zoned = /^\d{4}-\d\d-\d\d$/.test(text) ? `${text}T00:00:00Z`
    : /[zZ]|[+-]\d\d:?\d\d$/.test(text) ? text : `${text}Z`;
  const date = new Date(zoned.replace(/(\.\d{3})\d+/, '$1'));
  return Number.isNaN(date.getTime()) ? null : date;
}

// Every date and time the console shows goes through formatTime: one format, the person's
// locale (`Nov 27, 2026, 08:21 AM` in American English, `27 Nov 2026, 08:21` in British).
const DATE_PARTS = { year: 'numeric', month: 'short', day: 'numeric' };
const TIME_PARTS = { hour: '2-digit', minute: '2-digit' };
const formatters = new Map();
function formatter(seconds, utc, dateOnly) {
  const key = `${seconds}|${utc}|${dateOnly}`;
  if (!formatters.has(key)) {
    formatters.set(key, new Intl.DateTimeFormat(undefined, {
      ...DATE_PARTS,
      ...(dateOnly ? {} : TIME_PARTS),
      ...(seconds && !dateOnly ? { second: '2-digit' } : {}),
      ...(utc ? { timeZone: 'UTC' } : {}),
    }));
  }
  return formatters.get(key);
}

/**
 * A moment for people, the one format of the console: date and time to the minute in the
 * person's locale and time zone. `seconds` adds the seconds; `utc` shows the UTC wall clock
 * (times inside data files, which carry no zone); `dateOnly` a UTC day alone.
 * Takes what parseTime takes.
 */
export function formatTime(wire, { seconds = false, utc = false, dateOnly = false } = {}) {
  const date = parseTime(wire);
  if (!date) return '';
  // A day is a UTC day (credit expiry): shown as that day wherever the person is.
  return formatter(seconds, utc || dateOnly, dateOnly).format(date);
}

/** A <time> element showing formatTime, with the exact value as its `datetime` (a UTC
 *  instant; for `utc` times the zone-less wall clock, for `dateOnly` the day). */
export function timeElement(wire, options = {}) {
  const date = parseTime(wire);
  if (!date) return h('span', {}, '');
  const iso = date.toISOString();
  const datetime = options.dateOnly ? iso.slice(0, 10) : options.utc ? iso.slice(0, options.seconds ? 19 : 16) : iso;
  return h('time', { datetime, title: options.utc || options.dateOnly ? null : `${iso} (UTC)` }, formatTime(date, options));
}

/**
 * A name (a file name, say) for a narrow column: a line may break after `_`, `.`, `-` and `/`
 * (a <wbr>), never inside a word, so that a table gives the column the width of its longest
 * part rather than breaking `float64` in two. Chromium names such text with spaces at the
 * breaks ("HD2D. dfsu"): give the element that holds it an aria-label with the whole name.
 */
export function breakable(name) {
  const parts = String(name ?? '').split(/(?<=[-_./])/);
  return parts.flatMap((part, i) => (i ? [h('wbr'), part] : [part]));
}

/** A short notice in the corner; kind: info | error | success. */
export function toast(message, kind = 'info') {
  const area = document.getElementById('toasts');
  if (!area) return;
  const item = h('div', { class: ['toast', `toast-${kind}`], role: kind === 'error' ? 'alert' : null }, message);
  area.append(item);
  setTimeout(() => item.remove(), kind === 'error' ? 9000 : 5000);
}

/** A modal dialog. `body`: nodes; `actions`: [{label, value, kind, disabled}]. Resolves with the
 *  chosen action's value (or null on Escape/cancel). `onSubmit(value)` may return false to
 *  keep the dialog open (e.g. while a form is invalid), or a promise. */
export function dialog({ title, body, actions = [{ label: 'Close', value: null }], onSubmit }) {
  return new Promise((resolve) => {
    const titleId = uid('dialog-title');
    const error = h('p', { class: 'dialog-error', role: 'alert', hidden: true });
    const buttons = actions.map((action) => h('button', {
      type: action.value === null ? 'button' : 'submit',
      class: ['button', action.kind ? `button-${action.kind}` : null],
      value: action.value === null ? '' : String(action.value),
      disabled: action.disabled,
      onclick: action.value === null ? () => finish(null) : null,
    }, action.label));
    const form = h('form', { method: 'dialog', class: 'dialog-form' },
      h('h2', { id: titleId }, title), h('div', { class: 'dialog-body' }, body), error,
      h('div', { class: 'dialog-actions' }, buttons));
    const el = h('dialog', { class: 'dialog', 'aria-labelledby': titleId }, form);
    // Focus goes back where it was when the dialog closes, if that control is still there.
    const opener = document.activeElement;
    let done = false;
    function finish(value) {
      if (done) return;
      done = true;
      el.close();
      el.remove();
      if (opener instanceof HTMLElement && opener.isConnected) opener.focus();
      resolve(value);
    }
    form.addEventListener('submit', async (event) => {
      event.preventDefault();
      const value = event.submitter ? event.submitter.value : actions.find((a) => a.value !== null)?.value;
      if (onSubmit) {
        error.hidden = true;
        buttons.forEach((b) => { b.disabled = true; });
        try {
          const keep = await onSubmit(value);
          if (keep === false) return;
        } catch (failure) {
          error.textContent = describeError(failure);
          error.hidden = false;
          return;
        } finally {
          buttons.forEach((b, i) => { b.disabled = Boolean(actions[i].disabled); });
        }
      }
      finish(value);
    });
    el.addEventListener('cancel', (event) => { event.preventDefault(); finish(null); });
    document.body.append(el);
    el.showModal();
    const first = el.querySelector('input, select, textarea') || el.querySelector('button[type=submit]');
    if (first) first.focus();
  });
}

/** Asks to confirm; resolves true/false. `danger` styles the confirm button. */
export async function confirmDialog({ title, message, confirm = 'OK', danger = false }) {
  const value = await dialog({
    title,
    body: [h('p', {}, message)],
    actions: [{ label: 'Cancel', value: null }, { label: confirm, value: 'yes', kind: danger ? 'danger' : 'primary' }],
  });
  return value === 'yes';
}

/** What to tell a person about a failure: a problem's title and detail, field errors. */
export function describeError(error) {
  if (!error) return 'Something went wrong.';
  if (error.problem) {
    const p = error.problem;
    const parts = [p.title || `HTTP ${error.status}`];
    if (p.detail && p.detail !== p.title) parts.push(p.detail);
    if (p.errors && typeof p.errors === 'object') {
      for (const [field, messages] of Object.entries(p.errors)) {
        parts.push(`${field}: ${[].concat(messages).join(' ')}`);
      }
    }
    return parts.join(' — ');
  }
  return error.message || String(error);
}

/** A labelled form field. `input` is the control; returns the wrapping element. */
export function field(label, input, { hint, required } = {}) {
  const id = input.id || uid('field');
  input.id = id;
  const hintId = hint ? `${id}-hint` : null;
  if (hintId) input.setAttribute('aria-describedby', hintId);
  if (required) input.required = true;
  return h('div', { class: 'field' },
    h('label', { for: id }, label, required ? h('span', { class: 'required', 'aria-hidden': 'true' }, ' *') : null),
    input,
    hint ? h('p', { class: 'hint', id: hintId }, hint) : null);
}

/** Calls `fn` once `ms` after the last call. */
export function debounce(fn, ms = 250) {
  let timer = null;
  return (...args) => {
    clearTimeout(timer);
    timer = setTimeout(() => fn(...args), ms);
  };
}

/** A page heading row: title, optional subtitle nodes and action buttons. */
export function pageHeader(title, { actions = [], sub = null } = {}) {
  return h('div', { class: 'page-header' },
    h('div', { class: 'page-title' }, h('h1', {}, title), sub),
    actions.length ? h('div', { class: 'page-actions' }, actions) : null);
}

/** A button; kind: primary | danger | quiet. */
export function button(label, onclick, { kind, title, disabled, type = 'button', ...rest } = {}) {
  return h('button', {
    type, class: ['button', kind ? `button-${kind}` : null], title, 'aria-label': rest.ariaLabel || null, disabled, onclick,
    ...Object.fromEntries(Object.entries(rest).filter(([k]) => k !== 'ariaLabel')),
  }, label);
}

/** An error box in place of content that could not load, with a retry. */
export function errorBox(error, retry) {
  return h('div', { class: 'error-box', role: 'alert' },
    h('p', {}, describeError(error)),
    retry ? button('Try again', retry) : null);
}

/** Marks a container busy and shows a spinner line. */
export function loading(label = 'Loading…') {
  return h('p', { class: 'loading', role: 'status' }, label);
}
