// What the BackOffice pages share: the role check, forms whose fields show the server's
// validation errors (problem.errors), times in the person's zone sent as UTC, credit amounts,
// tenants, and a cursor pager.

import { ApiError, allPages, isBackOffice } from './api.js';
import { button, describeError, field, formatTime, h, parseTime, uid } from './dom.js';

/** Renders "BackOffice only" and returns false when the caller holds no platform role. */
export function backOfficeOnly(main, principal) {
  if (isBackOffice(principal)) return true;
  main.append(h('h1', {}, 'BackOffice only'),
    h('p', { class: 'notice' }, 'This page is for BackOffice and CloudAdministrator operators. Your credentials do not carry either role.'),
    h('p', {}, h('a', { href: '#/projects' }, 'Go to your projects')));
  return false;
}

/**
 * A form's fields by the names the API uses, so that a 400 problem's `errors` show under the
 * field they concern. `add(name, label, input, options)` returns the field's element.
 */
export class FieldSet {
  constructor() {
    this.fields = new Map();
    this.general = h('div', { class: 'form-error', role: 'alert', hidden: true });
  }

  add(name, label, input, options = {}) {
    const wrap = field(label, input, options);
    const error = h('p', { class: 'admin-field-error', id: uid('err'), hidden: true });
    wrap.append(error);
    this.fields.set(name, { input, error, wrap });
    return wrap;
  }

  /** Registers a control built elsewhere (a fieldset of radios) under `name`. */
  attach(name, wrap, input) {
    const error = h('p', { class: 'admin-field-error', id: uid('err'), hidden: true });
    wrap.append(error);
    this.fields.set(name, { input, error, wrap });
    return wrap;
  }

  clear() {
    for (const { input, error } of this.fields.values()) {
      error.hidden = true;
      error.textContent = '';
      input.removeAttribute('aria-invalid');
      const described = (input.getAttribute('aria-describedby') || '').split(' ').filter((id) => id && id !== error.id);
      if (described.length) input.setAttribute('aria-describedby', described.join(' '));
      else input.removeAttribute('aria-describedby');
    }
    this.general.hidden = true;
    this.general.textContent = '';
  }

  /** Shows one field's error (client-side checks). */
  set(name, message) {
    const entry = this.fields.get(name);
    if (!entry) {
      this.showGeneral(message);
      return;
    }
    entry.error.textContent = message;
    entry.error.hidden = false;
    entry.input.setAttribute('aria-invalid', 'true');
    const described = new Set((entry.input.getAttribute('aria-describedby') || '').split(' ').filter(Boolean));
    described.add(entry.error.id);
    entry.input.setAttribute('aria-describedby', [...described].join(' '));
  }

  showGeneral(message) {
    this.general.textContent = this.general.textContent ? `${this.general.textContent} ${message}` : message;
    this.general.hidden = false;
  }

  /** Shows a failure: per field when the problem names fields, else as one message. Focuses
   *  the first field in error. */
  show(failure) {
    this.clear();
    const errors = failure instanceof ApiError ? failure.problem?.errors : null;
    if (errors && typeof errors === 'object' && Object.keys(errors).length) {
      let first = null;
      const byLower = new Map([...this.fields.keys()].map((k) => [k.toLowerCase(), k]));
      for (const [name, messages] of Object.entries(errors)) {
        const text = [].concat(messages).join(' ');
        const key = this.fields.has(name) ? name : byLower.get(name.toLowerCase())
          ?? byLower.get(name.split('.').pop().toLowerCase());
        if (key) {
          this.set(key, text);
          first = first || this.fields.get(key).input;
        } else {
          this.showGeneral(`${name}: ${text}`);
        }
      }
      if (!this.general.hidden) this.general.textContent = `${failure.problem.title || 'Not saved'}: ${this.general.textContent}`;
      else if (first) this.showGeneral(`${failure.problem.title || 'Not saved'}. See the fields marked below.`);
      first?.focus();
      return;
    }
    this.showGeneral(describeError(failure));
  }
}

/** `<input type="datetime-local">` value (the person's zone) for a wire timestamp (UTC). */
export function localInputValue(wireOrDate) {
  const date = wireOrDate instanceof Date ? wireOrDate : parseTime(wireOrDate);
  if (!date) return '';
  const pad = (n) => String(n).padStart(2, '0');
  return `${date.getFullYear()}-${pad(date.getMonth() + 1)}-${pad(date.getDate())}T${pad(date.getHours())}:${pad(date.getMinutes())}`;
}

/** The UTC instant of a datetime-local value read in the person's zone, or null. */
export function fromLocalInput(value) {
  if (!value) return null;
  const date = new Date(value); // "YYYY-MM-DDTHH:MM" without a zone is local time
  return Number.isNaN(date.getTime()) ? null : date;
}

/** The person's time zone name, e.g. "Europe/Copenhagen". */
export function zoneName() {
  try {
    return Intl.DateTimeFormat().resolvedOptions().timeZone || 'local time';
  } catch {
    return 'local time';
  }
}

/** A moment as its UTC wall clock in the console's date format: "Nov 27, 2026, 10:00 AM UTC". */
export function utcText(date) {
  if (!date) return '';
  return `${formatTime(date, { utc: true })} UTC`;
}

/** Today's date in UTC as YYYY-MM-DD (credit expiry dates are UTC days). */
export function utcToday() {
  return new Date().toISOString().slice(0, 10);
}

const creditFormat = new Intl.NumberFormat(undefined, { minimumFractionDigits: 0, maximumFractionDigits: 6 });
/** A credit amount for people (up to 6 places, grouped). */
export function formatCredits(value, { signed = false } = {}) {
  const number = Number(value);
  if (value === null || value === undefined || Number.isNaN(number)) return '';
  const text = creditFormat.format(number);
  return signed && number > 0 ? `+${text}` : text;
}

/** A credit amount as typed: digits with up to 6 decimal places, above zero; null when not. */
export function parseAmount(text) {
  const clean = String(text || '').trim().replace(/\s/g, '');
  if (!/^\d+(\.\d{1,6})?$/.test(clean) || !/[1-9]/.test(clean)) return null;
  return clean;
}

/** Every tenant (BackOffice sees all), by name. */
export async function loadTenants(signal) {
  const tenants = await allPages('/api/admin/tenants', { query: { sortBy: 'Name', sortOrder: 'Asc' }, signal, max: 5000 });
  return tenants;
}

/** A tenant's name for an id from a list of tenants (falls back to the id). */
export function tenantName(tenants, id) {
  if (!id) return 'Unassigned pool';
  const found = tenants.find((t) => String(t.id).toLowerCase() === String(id).toLowerCase());
  return found ? found.name : id;
}

/**
 * Previous/next over a cursor list. `load(cursor, signal)` fills the page and returns the
 * next cursor; the pager keeps the cursors of the pages before, so "Previous" works too, and
 * aborts (through `signal`) a load that a newer one replaces.
 */
export function cursorPager(load, { label = 'Pages' } = {}) {
  const stack = [];
  let current = null;
  let next = null;
  const status = h('span', { class: 'pager-status', 'aria-live': 'polite' });
  const prev = button('Previous', () => go(stack.pop() ?? null, true), { disabled: true });
  const more = button('Next', () => go(next, false), { disabled: true });
  const el = h('nav', { class: 'pager', 'aria-label': label, hidden: true }, status, h('span', { class: 'pager-buttons' }, prev, more));
  let running = null;
  async function go(cursor, back) {
    // A newer request (a filter changed, a page asked for) makes an older one moot.
    running?.abort();
    const mine = new AbortController();
    running = mine;
    prev.disabled = true;
    more.disabled = true;
    if (!back && cursor !== current) stack.push(current);
    current = cursor;
    try {
      const result = await load(cursor, mine.signal);
      if (!mine.signal.aborted) next = result;
    } finally {
      if (!mine.signal.aborted) {
        prev.disabled = stack.length === 0;
        more.disabled = !next;
        status.textContent = `Page ${stack.length + 1}`;
        el.hidden = stack.length === 0 && !next;
      }
    }
  }
  return {
    el,
    /** Loads the first page again (after a change or a filter). */
    reset() {
      stack.length = 0;
      current = null;
      return go(null, true);
    },
    /** Loads the page shown again. */
    reload() {
      return go(current, true);
    },
  };
}

/** A signal that aborts when any of `signals` does. */
export function eitherSignal(...signals) {
  const given = signals.filter(Boolean);
  if (AbortSignal.any) return AbortSignal.any(given);
  const controller = new AbortController();
  for (const signal of given) {
    if (signal.aborted) controller.abort();
    else signal.addEventListener('abort', () => controller.abort(), { once: true });
  }
  return controller.signal;
}

/** A <select> of tenants, optionally with the unassigned pool first (value ''). */
export function tenantSelect(tenants, { pool = false, value = null, name } = {}) {
  return h('select', { name },
    pool ? h('option', { value: '' }, 'Unassigned pool') : null,
    tenants.map((t) => h('option', { value: t.id, selected: value && String(value) === String(t.id) }, t.name)));
}

/** The label of a short id for tables (first 8 characters), with the whole id as title. */
export function shortId(id) {
  if (!id) return h('span', {}, '—');
  return h('span', { class: ['mono', 'admin-id'], title: String(id) }, String(id).length > 13 ? `${String(id).slice(0, 8)}…` : String(id));
}
