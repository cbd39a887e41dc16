// The project picker: a dialog that browses the project tree one level per request (a page of
// subprojects at a time, with a name filter) to choose a destination — for moving a
// subproject or a dataset, and for restoring an item from the recycle bin elsewhere. Shared by
// projects.js and bin.js (which must not import each other).

import { api } from './api.js';
import { describeError, dialog, h, replace } from './dom.js';
import { filterField } from './listing.js';

const PAGE = 20;

/**
 * Opens the picker. Options:
 * - title, intro (text), confirmLabel ('Move here')
 * - startId: the project to open first (null: the top level)
 * - rootId: browse only this top-level project's tree (moves stay within one tree)
 * - excludeId: a project that cannot be chosen or opened (the one being moved)
 * - alreadyIn: the project the item is in now (choosing it would change nothing)
 * - onPick(project): does the work; a thrown error is shown in the dialog, which stays open.
 * Resolves with the chosen project ({id, name}) or null.
 */
export async function pickProject({
  title, intro, confirmLabel = 'Choose', startId = null, rootId = null, excludeId = null, alreadyIn = null, onPick,
}) {
  let location = null; // {id, name, capabilities} or null for the top level
  let crumbs = [];
  let offset = 0;
  let total = 0;
  let prefix = '';
  let request = 0;

  const crumbNav = h('nav', { class: 'picker-crumbs', 'aria-label': 'Destination path' });
  const here = h('p', { class: 'picker-here', role: 'status', 'aria-live': 'polite' });
  const list = h('ul', { class: 'picker-list', 'aria-label': 'Projects at this level' });
  const pager = h('div', { class: 'pager picker-pager' });
  const filter = filterField({
    label: 'Filter by name',
    onChange: (value) => { prefix = value; offset = 0; loadChildren(); },
  });
  const body = h('div', { class: 'picker' },
    intro ? h('p', {}, intro) : null, crumbNav, here, filter.element, list, pager);
  const actions = [{ label: 'Cancel', value: null }, { label: confirmLabel, value: 'pick', kind: 'primary', disabled: true }];

  function confirmButton() {
    return body.closest('dialog')?.querySelector('button[type="submit"]');
  }

  function canChoose() {
    return Boolean(location && location.id !== excludeId && location.id !== alreadyIn && location.capabilities?.canCreateContent);
  }

  function updateChoice() {
    const allowed = canChoose();
    actions[1].disabled = !allowed;
    const submit = confirmButton();
    if (submit) submit.disabled = !allowed;
    if (!location) {
      here.textContent = 'Open a project to choose it.';
    } else if (location.id === excludeId) {
      here.textContent = `${location.name} is the item itself: choose another project.`;
    } else if (location.id === alreadyIn) {
      here.textContent = `It is in ${location.name} now: open another project.`;
    } else if (!location.capabilities?.canCreateContent) {
      here.textContent = `You cannot add content to ${location.name}: open another project.`;
    } else {
      here.textContent = `Destination: ${location.name}`;
    }
  }

  function renderCrumbs() {
    const items = [];
    if (!rootId) items.push({ id: null, name: 'All projects' });
    for (const crumb of crumbs) items.push({ id: crumb.id, name: crumb.name });
    replace(crumbNav, h('ol', {}, items.map((item, i) => h('li', {},
      i === items.length - 1
        ? h('span', { 'aria-current': 'location' }, item.name)
        : h('button', { type: 'button', class: ['button', 'button-quiet', 'button-small'], onclick: () => open(item.id) }, item.name)))));
  }

  async function open(id) {
    const mine = ++request;
    offset = 0;
    prefix = '';
    filter.input.value = '';
    replace(list, h('li', { class: 'loading' }, 'Loading…'));
    try {
      if (id === null) {
        location = null;
        crumbs = [];
      } else {
        const path = (await api('GET', `/api/metadata/project/${id}/path`)).data || [];
        if (mine !== request) return;
        const last = path[path.length - 1];
        location = { id: last.id, name: last.name, capabilities: last.capabilities };
        // Within one tree, the path starts at its root; a caller without access above shows
        // the levels it sees.
        crumbs = path;
      }
      renderCrumbs();
      updateChoice();
      await loadChildren();
    } catch (failure) {
      if (mine === request) replace(list, h('li', { role: 'alert' }, describeError(failure)));
    }
  }

  async function loadChildren() {
    const mine = ++request;
    const path = location ? `/api/metadata/project/${location.id}/subproject/offset-list` : '/api/metadata/project/offset-list';
    try {
      const page = await api('GET', path, { query: { offset, limit: PAGE, sortBy: 'Name', sortOrder: 'Asc', namePrefix: prefix } });
      if (mine !== request) return;
      total = page.totalCount || 0;
      const rows = page.data || [];
      if (!rows.length) {
        replace(list, h('li', { class: 'empty' }, prefix ? `No project here starts with “${prefix}”.` : 'No subprojects here.'));
      } else {
        replace(list, rows.map((row) => {
          const self = row.id === excludeId;
          return h('li', {},
            h('button', {
              type: 'button', class: ['button', 'button-quiet', 'picker-item'], disabled: self,
              'aria-label': self ? `${row.name} (the item itself)` : `Open ${row.name}`,
              onclick: () => open(row.id),
            }, h('span', { class: 'picker-folder', 'aria-hidden': 'true' }, '▸'), row.name, self ? ' (this item)' : ''));
        }));
      }
      replace(pager,
        h('span', { class: 'pager-status' }, total ? `${offset + 1}–${offset + rows.length} of ${total}` : ''),
        h('button', { type: 'button', class: ['button', 'button-small'], disabled: offset === 0, onclick: () => { offset = Math.max(0, offset - PAGE); loadChildren(); } }, '‹ Previous'),
        h('button', { type: 'button', class: ['button', 'button-small'], disabled: offset + rows.length >= total, onclick: () => { offset += PAGE; loadChildren(); } }, 'Next ›'));
    } catch (failure) {
      if (mine === request) replace(list, h('li', { role: 'alert' }, describeError(failure)));
    }
  }

  let chosen = null;
  const shown = dialog({
    title,
    body: [body],
    actions,
    onSubmit: async () => {
      if (!canChoose()) return false;
      chosen = { id: location.id, name: location.name };
      if (onPick) await onPick(chosen);
      return true;
    },
  });
  body.closest('dialog')?.classList.add('picker-dialog');
  await open(startId || rootId || null);
  const value = await shown;
  return value === 'pick' ? chosen : null;
}
