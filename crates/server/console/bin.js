// The recycle bin (`/bin`): the items the caller deleted, or every item the caller may manage,
// a page at a time (offset list, sorted by the server); restore in place, restore elsewhere
// (the project picker), and delete for good after a confirmation that names the item. When a
// restore is impossible the API's problem is shown with what to do instead.

import { ApiError, api } from './api.js';
import { button, confirmDialog, describeError, formatBytes, h, loading, pageHeader, replace, timeElement, toast } from './dom.js';
import { setQuery } from './router.js';
import { headerCell, intParam, keepFocus, limited, loadOffsetPage, offsetPager, oneOf, sortControls } from './listing.js';
import { pickProject } from './picker.js';

export function register(route) {
  route('/bin', binPage);
}

const SORTS = [
  { value: 'DeletedAt', label: 'Deleted' },
  { value: 'Name', label: 'Name' },
  { value: 'StorageSize', label: 'Size' },
];

/** What to do when a restore is refused, by problem type. */
const ADVICE = {
  'container-in-recycle-bin': 'Its project is in the recycle bin too: restore that project (the dataset comes back with it), or restore this dataset elsewhere.',
  forbidden: 'You may not restore it where it was (a level of its path is not yours to restore). Restore it elsewhere.',
  'target-in-recycle-bin': 'The destination is in the recycle bin. Choose another project.',
  'restore-loop': 'The destination lies inside the project being restored. Choose another project.',
  'purge-in-progress': 'A project on its path is being deleted for good right now.',
  'depth-limit': 'Restored there, the tree would nest too deeply. Choose a project nearer the top.',
};
const ELSEWHERE = new Set(['container-in-recycle-bin', 'restore-name-taken', 'forbidden']);

function problemType(failure) {
  return String(failure?.problem?.type || '').replace(/^urn:basin:problem:/, '');
}

function kindOf(item) {
  if (item.itemType === 'Dataset') return 'Dataset';
  return item.parentProjectId ? 'Subproject' : 'Project';
}

function itemPath(item, suffix = '') {
  const base = item.itemType === 'Dataset' ? `/api/recycle-bin/dataset/${item.id}` : `/api/recycle-bin/project/${item.id}`;
  return `${base}${suffix}`;
}

async function binPage(main, _params, query) {
  const controller = new AbortController();
  const { signal } = controller;
  let state = {
    scope: query.scope === 'all' ? 'all' : 'mine',
    sort: oneOf(query.sort, SORTS.map((s) => s.value), 'DeletedAt'),
    order: oneOf(query.order, ['Asc', 'Desc'], null),
    offset: intParam(query.offset, 0),
    limit: intParam(query.limit, 50, { min: 1, max: 1000 }),
  };
  // The API's default order: newest first for the deletion time, ascending otherwise.
  const defaultOrder = (sort) => (sort === 'DeletedAt' ? 'Desc' : 'Asc');
  if (!state.order) state.order = defaultOrder(state.sort);

  function set(partial) {
    state = { ...state, ...partial };
    setQuery({
      scope: state.scope === 'all' ? 'all' : undefined,
      sort: state.sort !== 'DeletedAt' ? state.sort : undefined,
      order: state.order !== defaultOrder(state.sort) ? state.order : undefined,
      offset: state.offset ? String(state.offset) : undefined,
      limit: state.limit !== 50 ? String(state.limit) : undefined,
    });
  }

  // Scope: a pair of radio buttons.
  const scopeName = 'bin-scope';
  const scopeRadio = (value, label) => h('label', { class: 'radio' },
    h('input', {
      type: 'radio', name: scopeName, value, checked: state.scope === value,
      onchange: () => { set({ scope: value, offset: 0 }); load(); },
    }), ` ${label}`);
  const scope = h('fieldset', { class: 'scope-choice' },
    h('legend', {}, 'Show'),
    scopeRadio('mine', 'Deleted by me'),
    scopeRadio('all', 'Everything I may restore'));
  const sorts = sortControls({
    options: SORTS, sortBy: state.sort, order: state.order,
    onChange: (sort, order) => { set({ sort, order, offset: 0 }); load(); },
  });

  const message = h('div', { class: 'bin-message', tabindex: '-1' });
  const heading = h('h2', { class: 'visually-hidden', tabindex: '-1', id: 'bin-items-heading' }, 'Items');
  const results = h('div', { class: 'list-results' }, loading());
  main.append(
    pageHeader('Recycle bin', {
      sub: h('p', { class: 'hint' }, 'Deleted projects, subprojects and datasets stay here for 180 days, then they are removed for good.'),
    }),
    h('div', { class: 'toolbar list-toolbar' }, scope, sorts),
    message, heading, results);

  function showMessage(kind, nodes) {
    replace(message, h('div', { class: ['notice', kind === 'error' ? 'notice-error' : 'notice-success'], role: kind === 'error' ? 'alert' : 'status' }, nodes));
    // The row that was acted on may be gone: the keyboard continues from the message.
    message.focus();
  }

  function load() {
    const path = state.scope === 'all' ? '/api/recycle-bin/all-deleted-items' : '/api/recycle-bin/my-deleted-items';
    return loadOffsetPage({
      results, path, state, set, signal, load, show: render,
      query: { sortBy: state.sort, sortOrder: state.order },
    });
  }

  function render(page) {
    const rows = page.data || [];
    if (!rows.length) {
      replace(results, h('p', { class: 'empty' }, state.scope === 'all'
        ? 'The recycle bin holds nothing you may restore.'
        : 'You have deleted nothing that is still in the recycle bin.'));
      return;
    }
    const pager = (live) => offsetPager({
      live, offset: state.offset, limit: state.limit, total: page.totalCount || 0, shown: rows.length, label: 'items',
      onPage: (offset, limit) => { set({ offset, limit }); load(); },
    });
    const sorted = (value, cls) => ({
      sorted: state.sort === value,
      order: state.order,
      cls,
      onSort: () => {
        const order = state.sort === value ? (state.order === 'Asc' ? 'Desc' : 'Asc') : defaultOrder(value);
        sorts.show(value, order);
        set({ sort: value, order, offset: 0 });
        load();
      },
    });
    const body = h('tbody', {});
    const places = new Map();
    const tasks = [];
    for (const item of rows) {
      const where = h('td', { class: 'bin-where', dataset: { label: 'Was in' } }, h('span', { class: 'hint' }, '…'));
      const container = item.itemType === 'Dataset' ? item.projectId : item.parentProjectId;
      if (!container) {
        replace(where, h('span', { class: 'hint' }, 'Top level'));
      } else {
        if (!places.has(container)) places.set(container, { cells: [] });
        places.get(container).cells.push(where);
      }
      const kind = kindOf(item);
      body.append(h('tr', { dataset: { id: item.id } },
        h('td', { class: 'name-cell' },
          h('span', { class: item.itemType === 'Dataset' ? 'file-icon' : 'folder-icon', 'aria-hidden': 'true' }),
          h('span', { class: 'bin-name' }, item.name)),
        h('td', { dataset: { label: 'Kind' } }, kind, item.datasetFormat ? h('span', { class: 'mono' }, ` ${item.datasetFormat}`) : null),
        where,
        h('td', { class: 'num', dataset: { label: 'Size' } }, formatBytes(item.storageSize)),
        h('td', { dataset: { label: 'Deleted' } }, timeElement(item.deletedAt)),
        h('td', { dataset: { label: 'Removed after' } }, timeElement(item.purgeAfter)),
        h('td', { class: 'row-actions' }, h('div', { class: 'row-buttons' },
          button('Restore', () => restore(item), { class: ['button', 'button-small'], 'aria-label': `Restore ${item.name}` }),
          button('Restore to…', () => restoreElsewhere(item), { class: ['button', 'button-small'], 'aria-label': `Restore to… ${item.name}` }),
          button('Delete for good', () => purge(item), { class: ['button', 'button-small', 'button-danger-quiet'], 'aria-label': `Delete for good ${item.name}` })))));
    }
    // Where each item was: the path of its project (works for projects in the bin too).
    for (const [id, place] of places) {
      tasks.push(async () => {
        let text;
        let deleted = false;
        try {
          const levels = (await api('GET', `/api/metadata/project/${id}/path`, { signal })).data || [];
          deleted = levels.some((level) => level.isDeleted);
          text = levels.map((level) => level.name).join(' / ');
        } catch (failure) {
          text = failure instanceof ApiError && failure.status === 404 ? 'A project you cannot see' : '—';
        }
        for (const cell of place.cells) {
          replace(cell,
            deleted || !text || text.startsWith('A project') ? h('span', {}, text) : h('a', { href: `#/projects/${id}` }, text),
            deleted ? h('span', { class: 'badge badge-warning' }, 'in the bin') : null);
        }
      });
    }
    keepFocus(results, () => replace(results, pager(true),
      h('div', { class: 'table-wrap' }, h('table', { class: ['bin-table', 'stack-table'] },
        h('caption', { class: 'visually-hidden' }, 'Items in the recycle bin'),
        h('thead', {}, h('tr', {},
          headerCell('Name', sorted('Name')),
          h('th', { scope: 'col' }, 'Kind'),
          h('th', { scope: 'col' }, 'Was in'),
          headerCell('Size', sorted('StorageSize', 'num')),
          headerCell('Deleted', sorted('DeletedAt')),
          h('th', { scope: 'col' }, 'Removed after'),
          h('th', { scope: 'col' }, h('span', { class: 'visually-hidden' }, 'Actions')))),
        body)),
      rows.length > 10 && page.totalCount > state.limit ? pager(false) : null), heading);
    limited(tasks, 6, signal);
  }

  function restored(item, target) {
    const link = item.itemType === 'Dataset'
      ? h('a', { href: `#/datasets/${item.id}` }, `Open ${item.name}`)
      : h('a', { href: `#/projects/${item.id}` }, `Open ${item.name}`);
    showMessage('success', [h('p', {}, `Restored ${item.name}${target ? ` into ${target.name}` : ' where it was'}. `, link)]);
    toast(`Restored ${item.name}.`, 'success');
    load();
  }

  async function restore(item) {
    replace(message);
    try {
      await api('PUT', itemPath(item, '/restore'));
    } catch (failure) {
      if (failure.name === 'AbortError') return;
      const type = problemType(failure);
      showMessage('error', [
        h('p', { class: 'notice-title' }, `${item.name} could not be restored where it was.`),
        h('p', {}, failure.problem?.detail || describeError(failure)),
        ADVICE[type] ? h('p', {}, ADVICE[type]) : null,
        ELSEWHERE.has(type) ? button('Restore elsewhere…', () => restoreElsewhere(item), { class: ['button', 'button-small'] }) : null,
      ]);
      return;
    }
    restored(item, null);
  }

  async function restoreElsewhere(item) {
    replace(message);
    const target = await pickProject({
      title: `Restore ${item.name} to…`,
      intro: item.itemType === 'Dataset'
        ? 'Choose the project to restore the dataset into.'
        : 'Choose the project to restore it into, with everything it held.',
      confirmLabel: 'Restore here',
      excludeId: item.itemType === 'Dataset' ? null : item.id,
      onPick: async (chosen) => {
        try {
          await api('POST', itemPath(item, '/restore'), { body: { targetProjectId: chosen.id } });
        } catch (failure) {
          const advice = ADVICE[problemType(failure)];
          if (advice && failure instanceof ApiError) {
            failure.problem = { ...failure.problem, detail: `${failure.problem?.detail || ''} ${advice}`.trim() };
          }
          throw failure;
        }
      },
    });
    if (target) restored(item, target);
  }

  async function purge(item) {
    replace(message);
    const kind = kindOf(item).toLowerCase();
    const ok = await confirmDialog({
      title: `Delete ${item.name} for good?`,
      message: item.itemType === 'Dataset'
        ? `The dataset “${item.name}” and its content (${formatBytes(item.storageSize) || 'no data'}) are removed for good. This cannot be undone.`
        : `The ${kind} “${item.name}” and everything in it (${formatBytes(item.storageSize) || 'no data'}: its subprojects, datasets and their content) are removed for good. This cannot be undone.`,
      confirm: `Delete ${item.name} for good`,
      danger: true,
    });
    if (!ok) return;
    try {
      await api('DELETE', itemPath(item));
    } catch (failure) {
      showMessage('error', [h('p', { class: 'notice-title' }, `${item.name} could not be deleted.`), h('p', {}, describeError(failure))]);
      return;
    }
    showMessage('success', [h('p', {}, `${item.name} was deleted for good.`)]);
    toast(`Deleted ${item.name} for good.`, 'success');
    load();
  }

  load();
  return () => controller.abort();
}
