// The coordinate-system picker: a combobox that searches Basin's EPSG registry
// (GET /api/crs/coordinate-system/list, docs/gis.md) as the person types, with a keyboard
// navigable listbox (arrow keys, Home/End, Enter, Escape) and the code and name of each
// system. The value is an SRID (a number) or null.

import { api } from './api.js';
import { h, uid } from './dom.js';

const SEARCH_LIMIT = 50;
const SHOWN = 12;
const names = new Map();
// Systems people use most: the registry lists by code, so "WGS 84" would otherwise show 50
// local systems before EPSG:4326. Offered first when they match what was typed.
const COMMON = [
  [4326, 'WGS 84'], [3857, 'WGS 84 / Pseudo-Mercator'], [4258, 'ETRS89'], [3035, 'ETRS89 / LAEA Europe'],
  [25832, 'ETRS89 / UTM zone 32N'], [25833, 'ETRS89 / UTM zone 33N'], [32632, 'WGS 84 / UTM zone 32N'],
  [32633, 'WGS 84 / UTM zone 33N'], [4269, 'NAD83'], [27700, 'OSGB 1936 / British National Grid'],
  [2154, 'RGF93 / Lambert-93'], [28992, 'Amersfoort / RD New'], [4230, 'ED50'],
].map(([id, name]) => ({ id, name }));

function matchesText(query, entry) {
  const name = entry.name.toLowerCase();
  return query.toLowerCase().split(/\s+/).filter(Boolean).every((word) => name.includes(word));
}

/** The name of an SRID ("WGS 84"), fetched once per SRID; null when unknown. */
export async function crsName(srid, { signal } = {}) {
  if (srid === null || srid === undefined || srid === '') return null;
  const key = Number(srid);
  if (!names.has(key)) {
    names.set(key, api('GET', `/api/crs/coordinate-system/${key}`, { signal })
      .then((crs) => crs?.name || null)
      .catch((error) => {
        names.delete(key);
        if (error.name === 'AbortError') throw error;
        return null;
      }));
  }
  return names.get(key);
}

/** "EPSG:25832 · ETRS89 / UTM zone 32N" */
export function crsLabel(srid, name) {
  return name ? `EPSG:${srid} · ${name}` : `EPSG:${srid}`;
}

function rank(query, entry) {
  const text = query.trim().toLowerCase();
  const name = String(entry.name || '').toLowerCase();
  if (String(entry.id) === text) return 0;
  if (name === text) return 1;
  if (name.startsWith(text)) return 2;
  if (String(entry.id).startsWith(text)) return 3;
  return 4;
}

/**
 * A CRS picker. Returns a `.field` element with `getValue()` (SRID or null), `setValue(srid)`
 * and `input` (the combobox). `onChange(srid)` is called when the choice changes.
 */
export function crsPicker({ label = 'Coordinate system', value = null, onChange, hint, required = false, name } = {}) {
  const inputId = uid('crs');
  const listId = `${inputId}-list`;
  const statusId = `${inputId}-status`;
  const hintId = `${inputId}-hint`;
  let srid = value === null || value === undefined || value === '' ? null : Number(value);
  let options = [];
  let active = -1;
  let controller = null;
  let timer = null;
  let lastQuery = null;

  const input = h('input', {
    id: inputId,
    type: 'text',
    name: name || null,
    role: 'combobox',
    autocomplete: 'off',
    spellcheck: 'false',
    'aria-autocomplete': 'list',
    'aria-expanded': 'false',
    'aria-controls': listId,
    'aria-describedby': `${hintId} ${statusId}`,
    placeholder: 'Search by EPSG code or name',
    required,
  });
  const clear = h('button', {
    type: 'button', class: ['button', 'button-quiet', 'button-small', 'crs-clear'], 'aria-label': `Clear ${label}`, hidden: true,
  }, 'Clear');
  const list = h('ul', { id: listId, role: 'listbox', class: 'crs-list', 'aria-label': `${label} matches`, hidden: true });
  const status = h('p', { id: statusId, class: 'hint crs-status', 'aria-live': 'polite' });
  const chosen = h('p', { class: 'crs-chosen', 'aria-live': 'polite' });
  const el = h('div', { class: ['field', 'crs-picker'] },
    h('label', { for: inputId }, label, required ? h('span', { class: 'required', 'aria-hidden': 'true' }, ' *') : null),
    h('div', { class: 'crs-input-row' }, input, clear),
    list,
    status,
    h('p', { class: 'hint', id: hintId }, hint || 'Type a code (25832) or part of a name (UTM zone 32N); choose with the arrow keys and Enter.'),
    chosen);

  function showChosen(text) {
    chosen.textContent = text || '';
    clear.hidden = srid === null;
  }

  async function describeValue() {
    if (srid === null) {
      input.value = '';
      showChosen('');
      return;
    }
    input.value = String(srid);
    showChosen(`Chosen: EPSG:${srid}`);
    const known = await crsName(srid);
    if (srid !== null && input.value === String(srid)) {
      showChosen(known ? `Chosen: ${crsLabel(srid, known)}` : `EPSG:${srid} is not in Basin's registry`);
    }
  }

  function setValue(next, { notify = true } = {}) {
    const normalised = next === null || next === undefined || next === '' ? null : Number(next);
    const changed = normalised !== srid;
    srid = normalised;
    describeValue();
    if (changed && notify && onChange) onChange(srid);
  }

  function close() {
    list.hidden = true;
    input.setAttribute('aria-expanded', 'false');
    input.removeAttribute('aria-activedescendant');
    active = -1;
  }

  function highlight(index) {
    const items = list.children;
    if (!items.length) return;
    active = Math.max(0, Math.min(index, items.length - 1));
    for (let i = 0; i < items.length; i += 1) {
      items[i].setAttribute('aria-selected', i === active ? 'true' : 'false');
      items[i].classList.toggle('crs-active', i === active);
    }
    input.setAttribute('aria-activedescendant', items[active].id);
    items[active].scrollIntoView({ block: 'nearest' });
  }

  function choose(index) {
    const entry = options[index];
    if (!entry) return;
    names.set(entry.id, Promise.resolve(entry.name));
    close();
    status.textContent = '';
    setValue(entry.id);
  }

  function renderOptions(query, total) {
    list.replaceChildren(...options.slice(0, SHOWN).map((entry, i) => h('li', {
      id: `${inputId}-opt-${i}`,
      role: 'option',
      class: 'crs-option',
      'aria-selected': 'false',
      onmousedown: (event) => event.preventDefault(),
      onclick: () => choose(i),
    }, h('span', { class: ['crs-code', 'mono'] }, `EPSG:${entry.id}`), ' ', h('span', { class: 'crs-name' }, entry.name))));
    options = options.slice(0, SHOWN);
    const shown = options.length;
    if (!shown) {
      close();
      status.textContent = `No coordinate system matches “${query}”.`;
      return;
    }
    list.hidden = false;
    input.setAttribute('aria-expanded', 'true');
    status.textContent = total > shown
      ? `${total} matches; the ${shown} closest are listed. Type more to narrow.`
      : `${total} ${total === 1 ? 'match' : 'matches'}.`;
    active = -1;
    input.removeAttribute('aria-activedescendant');
  }

  async function search(query) {
    if (controller) controller.abort();
    const text = query.trim();
    lastQuery = text;
    if (!text) {
      options = [];
      list.replaceChildren();
      close();
      status.textContent = '';
      return;
    }
    controller = new AbortController();
    const { signal } = controller;
    const numeric = /^(epsg:)?\d+$/i.test(text);
    const term = numeric ? text.replace(/^epsg:/i, '') : text;
    status.textContent = 'Searching…';
    try {
      const page = await api('GET', '/api/crs/coordinate-system/list', {
        query: { [numeric ? 'fulltext' : 'nametext']: term, offset: 0, limit: SEARCH_LIMIT },
        signal,
      });
      if (signal.aborted || lastQuery !== text) return;
      const found = (page?.data || []).map((entry) => ({ id: entry.id, name: entry.name }));
      const common = numeric ? [] : COMMON.filter((entry) => matchesText(term, entry) && !found.some((f) => f.id === entry.id));
      const total = Math.max(page?.totalCount ?? 0, found.length + common.length);
      options = [...found, ...common].sort((a, b) => rank(term, a) - rank(term, b)
        || (COMMON.some((c) => c.id === b.id) - COMMON.some((c) => c.id === a.id)) || a.id - b.id);
      renderOptions(text, total);
    } catch (error) {
      if (error.name === 'AbortError') return;
      close();
      status.textContent = `The search failed: ${error.message}`;
    }
  }

  input.addEventListener('input', () => {
    clearTimeout(timer);
    const text = input.value;
    if (!text.trim() && srid !== null) setValue(null);
    timer = setTimeout(() => search(text), 200);
  });
  input.addEventListener('keydown', (event) => {
    const open = !list.hidden && options.length > 0;
    switch (event.key) {
      case 'ArrowDown':
        event.preventDefault();
        if (!open) search(input.value);
        else highlight(active + 1);
        break;
      case 'ArrowUp':
        if (open) {
          event.preventDefault();
          highlight(active <= 0 ? options.length - 1 : active - 1);
        }
        break;
      case 'Home':
        if (open && active >= 0) { event.preventDefault(); highlight(0); }
        break;
      case 'End':
        if (open && active >= 0) { event.preventDefault(); highlight(options.length - 1); }
        break;
      case 'Enter':
        if (open) {
          event.preventDefault();
          choose(active >= 0 ? active : 0);
        } else if (/^\d+$/.test(input.value.trim())) {
          event.preventDefault();
          setValue(Number(input.value.trim()));
        }
        break;
      case 'Escape':
        if (open) {
          event.preventDefault();
          event.stopPropagation();
          close();
        }
        break;
      default:
    }
  });
  input.addEventListener('blur', () => {
    setTimeout(() => {
      if (el.contains(document.activeElement)) return;
      close();
      const text = input.value.trim();
      // A bare code typed and left stands as the choice; anything else falls back to the choice.
      if (/^\d+$/.test(text)) {
        if (Number(text) !== srid) setValue(Number(text));
      } else if (!text) {
        if (srid !== null) setValue(null);
      } else {
        describeValue();
      }
    }, 120);
  });
  clear.addEventListener('click', () => {
    setValue(null);
    status.textContent = '';
    chosen.textContent = 'No coordinate system chosen.';
    input.focus();
  });

  el.getValue = () => srid;
  el.setValue = (next) => setValue(next, { notify: false });
  el.input = input;
  describeValue();
  return el;
}
