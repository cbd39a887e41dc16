// Shared pieces of the paged lists (projects, the recycle bin, the project picker): a pager
// for offset lists, sort and filter controls, and a small concurrency limiter for the per-row
// look-ups a page makes. Nothing here loads a whole list: every list is one page per request.

import { api } from './api.js';
import { debounce, errorBox, field, h, replace, uid } from './dom.js';

export const PAGE_SIZES = [25, 50, 100, 200];

/** A whole number from a query value, within [min, max], else `fallback`. */
export function intParam(value, fallback, { min = 0, max = Number.MAX_SAFE_INTEGER } = {}) {
  const number = Number.parseInt(value, 10);
  if (!Number.isFinite(number) || number < min || number > max) return fallback;
  return number;
}

/** One of `allowed` (case-insensitive), else `fallback`. */
export function oneOf(value, allowed, fallback) {
  const found = allowed.find((option) => option.toLowerCase() === String(value || '').toLowerCase());
  return found || fallback;
}

/**
 * The pager of an offset list: "51–100 of 10,000", first/previous/next/last and the page size.
 * `onPage(offset, limit)` is called with the new position.
 */
export function offsetPager({ offset, limit, total, shown, onPage, label = 'items', sizes = PAGE_SIZES, live = true }) {
  const first = total === 0 ? 0 : offset + 1;
  const last = offset + shown;
  const lastOffset = total > 0 ? Math.floor((total - 1) / limit) * limit : 0;
  const page = Math.floor(offset / limit) + 1;
  const pages = Math.max(1, Math.ceil(total / limit));
  const sizeId = uid('page-size');
  const size = h('select', { id: sizeId, class: 'pager-size' },
    sizes.map((n) => h('option', { value: String(n), selected: n === limit }, String(n))));
  size.addEventListener('change', () => onPage(0, Number(size.value)));
  const nav = (text, target, disabled, ariaLabel) => h('button', {
    type: 'button', class: ['button', 'button-small'], disabled, 'aria-label': ariaLabel,
    onclick: () => onPage(target, limit),
  }, text);
  return h('div', { class: 'pager' },
    h('span', { class: 'pager-status', role: live ? 'status' : null },
      total === 0 ? `No ${label}`
        : total === 1 ? `1 ${label.replace(/s$/, '')}`
          : `${first.toLocaleString()}–${last.toLocaleString()} of ${total.toLocaleString()} ${label}`,
      pages > 1 ? h('span', { class: 'hide-narrow' }, ` (page ${page.toLocaleString()} of ${pages.toLocaleString()})`) : null),
    pages > 1 ? h('span', { class: 'pager-buttons' },
      nav('« First', 0, offset === 0, `First page of ${label}`),
      nav('‹ Previous', Math.max(0, offset - limit), offset === 0, `Previous page of ${label}`),
      nav('Next ›', offset + limit, last >= total, `Next page of ${label}`),
      nav('Last »', lastOffset, last >= total, `Last page of ${label}`)) : null,
    total > sizes[0] ? h('span', { class: 'pager-size-wrap' }, h('label', { for: sizeId }, 'Per page'), size) : null);
}

/** "Sort by" and "Order" selects. `options`: [{value, label}]. `onChange(sortBy, order)`. */
export function sortControls({ options, sortBy, order, onChange, what = '' }) {
  const by = h('select', {}, options.map((o) => h('option', { value: o.value, selected: o.value === sortBy }, o.label)));
  const direction = h('select', {},
    h('option', { value: 'Asc', selected: order === 'Asc' }, 'Ascending'),
    h('option', { value: 'Desc', selected: order === 'Desc' }, 'Descending'));
  const changed = () => onChange(by.value, direction.value);
  by.addEventListener('change', changed);
  direction.addEventListener('change', changed);
  const fields = [field(`Sort ${what}by`.replace('  ', ' '), by), field('Order', direction)];
  // For column headers that sort: show the new sort in the selects without firing them.
  fields.show = (sortBy, sortOrder) => { by.value = sortBy; direction.value = sortOrder; };
  return fields;
}

/** A name filter whose `onChange(value)` runs after typing pauses (debounced). */
export function filterField({ label, value = '', onChange, hint, ms = 300 }) {
  const input = h('input', { type: 'search', value, autocomplete: 'off', spellcheck: 'false', placeholder: 'Starts with…' });
  const fire = debounce(() => onChange(input.value.trim()), ms);
  input.addEventListener('input', fire);
  input.addEventListener('keydown', (event) => {
    // Enter applies at once (and must not submit a surrounding form).
    if (event.key === 'Enter') {
      event.preventDefault();
      onChange(input.value.trim());
    }
  });
  const wrap = field(label, input, { hint });
  wrap.classList.add('filter-field');
  return { element: wrap, input };
}

/** Runs `tasks` (functions returning promises) at most `limit` at a time; ignores failures. */
export async function limited(tasks, limit = 6, signal) {
  let next = 0;
  async function worker() {
    while (next < tasks.length) {
      if (signal?.aborted) return;
      const task = tasks[next];
      next += 1;
      try {
        await task();
      } catch {
        // One row's look-up failing leaves that row without extra controls.
      }
    }
  }
  await Promise.all(Array.from({ length: Math.min(limit, tasks.length) }, worker));
}

const ACCESS_BADGE = { Confidential: 'badge-danger', Private: 'badge-info', Shared: 'badge-success' };
/** A badge for a project's access level. */
export function accessBadge(level) {
  return h('span', { class: ['badge', ACCESS_BADGE[level] || null] }, level || '—');
}

/** A table header cell, marked with aria-sort when the list is sorted by it; with `onSort`
 *  its label is a button that sorts by the column (again: the other way round). */
export function headerCell(label, { sorted, order, cls, onSort } = {}) {
  const arrow = sorted ? h('span', { 'aria-hidden': 'true' }, order === 'Desc' ? ' ▼' : ' ▲') : null;
  return h('th', {
    scope: 'col', class: cls || null,
    'aria-sort': sorted ? (order === 'Desc' ? 'descending' : 'ascending') : null,
  }, onSort ? h('button', { type: 'button', class: 'sort', onclick: onSort, dataset: { focusKey: `sort-${label}` } }, label, arrow) : [label, arrow]);
}

/**
 * Re-renders `container` with `render()` and keeps the keyboard where it was: on the control
 * with the same accessible label when it is still there and usable (a pager button), else on
 * `fallback` (an element with tabindex -1, e.g. the list's heading).
 */
export function keepFocus(container, render, fallback) {
  const active = document.activeElement;
  const inside = active && container.contains(active);
  const key = (el) => el.dataset.focusKey || el.getAttribute('aria-label') || el.textContent;
  const label = inside ? key(active) : null;
  render();
  if (!inside) return;
  const same = [...container.querySelectorAll('button, a, select, input')]
    .find((el) => key(el) === label && !el.disabled);
  if (same) same.focus();
  else if (fallback) fallback.focus();
}

/**
 * Loads one page of an offset list into `results`: marks it busy, shows an error box with a
 * retry on failure (an aborted request does nothing), and moves to the last page when the
 * offset is past the end (items deleted meanwhile, a stale link). `load` is the caller's own
 * loader (for the retry and the move), `show(page)` draws a page.
 */
export async function loadOffsetPage({ results, path, query, state, set, signal, load, show }) {
  results.setAttribute('aria-busy', 'true');
  let page;
  try {
    page = await api('GET', path, {
      signal, query: { offset: state.offset, limit: state.limit, ...query },
    });
  } catch (failure) {
    if (failure.name === 'AbortError') return;
    replace(results, errorBox(failure, load));
    results.setAttribute('aria-busy', 'false');
    return;
  }
  if (page.totalCount > 0 && !page.data.length && state.offset > 0) {
    set({ offset: Math.floor((page.totalCount - 1) / state.limit) * state.limit });
    load();
    return;
  }
  show(page);
  results.setAttribute('aria-busy', 'false');
}
