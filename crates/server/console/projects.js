// Projects: the top-level projects (`/projects`) and one project (`/projects/:id`) with its
// breadcrumbs, subprojects, datasets, members and access level, and the upload panel.
//
// The tree is browsed one level per request, as the API does: a page of subprojects (offset
// list: total count, server-side sort and name filter) and a page of datasets (cursor list, by
// name). Sort, filter and page live in the route's query (setQuery), so reload and back keep
// them. Every control is offered only when the project's capabilities allow it.

import { ApiError, api, me } from './api.js';
import {
  breakable, button, confirmDialog, describeError, dialog, errorBox, field, formatBytes, h, loading,
  pageHeader, replace, timeElement, toast,
} from './dom.js';
import { current, navigate, renderToken, setQuery, stale } from './router.js';
import {
  accessBadge, filterField, headerCell, intParam, keepFocus, limited, loadOffsetPage, offsetPager, oneOf,
  sortControls,
} from './listing.js';
import { pickProject } from './picker.js';
import { uploadPanel } from './upload.js';
import { formatName, typeLabel } from './kinds.js';
import { offerUndo, takeUndo, undoNotice } from './undo.js';

export function register(route) {
  route('/projects', projectsPage);
  route('/projects/:id', projectPage);
}

const SORTS = [
  { value: 'Name', label: 'Name' },
  { value: 'CreatedAt', label: 'Created' },
  { value: 'UpdatedAt', label: 'Updated' },
  { value: 'AccessLevel', label: 'Access level' },
];
const ACCESS_LEVELS = ['Confidential', 'Private', 'Shared'];
const ACCESS_HINTS = {
  Confidential: 'Only members, not even the tenant’s administrators.',
  Private: 'Members, and the tenant’s Owners and Administrators.',
  Shared: 'Members, and every user of the tenant may read.',
};
const ROLES = ['Reader', 'Contributor', 'Owner'];
const DATASET_PAGE = 50;

/** What to tell on the next render: {message} after a reload forced by a conflict. (After the
 *  page's own project, or a dataset from its page, was deleted, the page it goes to offers
 *  Undo: undo.js.) */
let flash = null;

function takeFlash(reload) {
  const undo = takeUndo(reload);
  if (undo) return undo;
  const taken = flash;
  flash = null;
  if (!taken) return null;
  return h('p', { class: 'notice notice-warning', role: 'alert' }, taken.message);
}

function problemType(failure) {
  return String(failure?.problem?.type || '').replace(/^urn:basin:problem:/, '');
}

/** The list state kept in the route's query: filter, sort, order, offset, limit. */
function listState(query) {
  return {
    q: query.q || '',
    sort: oneOf(query.sort, SORTS.map((s) => s.value), 'Name'),
    order: oneOf(query.order, ['Asc', 'Desc'], 'Asc'),
    offset: intParam(query.offset, 0),
    limit: intParam(query.limit, 50, { min: 1, max: 1000 }),
    dcursor: query.dcursor || '',
    dq: query.dq || '',
  };
}

function stateQuery(state) {
  return {
    q: state.q || undefined,
    sort: state.sort !== 'Name' ? state.sort : undefined,
    order: state.order !== 'Asc' ? state.order : undefined,
    offset: state.offset ? String(state.offset) : undefined,
    limit: state.limit !== 50 ? String(state.limit) : undefined,
    dcursor: state.dcursor || undefined,
    dq: state.dq || undefined,
  };
}

// ---------------------------------------------------------------------------------------------
// Dialogs shared by both pages

function nameInput(value = '') {
  return h('input', { type: 'text', name: 'name', value, required: true, maxlength: 255, autocomplete: 'off', spellcheck: 'false' });
}

function accessSelect(value = 'Private') {
  return h('select', { name: 'accessLevel' },
    ACCESS_LEVELS.map((level) => h('option', { value: level, selected: level === value }, `${level} — ${ACCESS_HINTS[level]}`)));
}

/** Creates a top-level project (parent null) or a subproject; resolves with the record or null. */
async function createProjectDialog(parent) {
  const name = nameInput();
  const description = h('textarea', { name: 'description', maxlength: 4000, rows: 3 });
  const access = accessSelect('Private');
  const inherit = parent ? h('input', { type: 'checkbox', name: 'inheritsMembers', checked: true }) : null;
  let created = null;
  await dialog({
    title: parent ? `New subproject in ${parent.name}` : 'New project',
    body: [
      field('Name', name, { required: true }),
      field('Description', description, { hint: 'Optional.' }),
      field('Access level', access),
      parent ? h('div', { class: 'field check-field' },
        h('label', {}, inherit, ` Inherit members from ${parent.name}`),
        h('p', { class: 'hint' }, 'Otherwise you become its only member (Owner).')) : null,
    ],
    actions: [{ label: 'Cancel', value: null }, { label: 'Create', value: 'create', kind: 'primary' }],
    onSubmit: async () => {
      if (!name.value.trim()) {
        throw new Error('Enter a name.');
      }
      const body = { name: name.value.trim(), description: description.value, accessLevel: access.value };
      if (parent) {
        body.inheritsMembers = inherit.checked;
        created = await api('POST', `/api/metadata/project/${parent.id}/subproject`, { body });
      } else {
        created = await api('POST', '/api/metadata/project', { body });
      }
      return true;
    },
  });
  if (created) toast(`Created ${created.name}.`, 'success');
  return created;
}

/**
 * A rename dialog: resolves 'renamed' once `save(newName)` succeeded, 'conflict' when the API
 * refused a stale rowVersion (nothing saved: the caller reloads), or null (cancelled, or the
 * name unchanged).
 */
async function renameDialog(currentName, save) {
  const name = nameInput(currentName);
  let outcome = null;
  await dialog({
    title: `Rename ${currentName}`,
    body: [field('New name', name, { required: true })],
    actions: [{ label: 'Cancel', value: null }, { label: 'Rename', value: 'rename', kind: 'primary' }],
    onSubmit: async () => {
      const value = name.value.trim();
      if (!value) throw new Error('Enter a name.');
      if (value === currentName) return true;
      try {
        await save(value);
      } catch (failure) {
        if (failure instanceof ApiError && problemType(failure) === 'row-version-conflict') {
          outcome = 'conflict';
          return true;
        }
        throw failure;
      }
      outcome = 'renamed';
      toast(`Renamed to ${value}.`, 'success');
      return true;
    },
  });
  return outcome;
}

/** Renames a project. `record` is a full record (PUT replaces description, metadata and
 *  settings); resolves as renameDialog. */
function renameProjectDialog(record) {
  return renameDialog(record.name, (value) => api('PUT', '/api/metadata/project', {
    body: {
      id: record.id, name: value, description: record.description || '',
      metadata: record.metadata || {}, settings: record.settings || {}, rowVersion: record.rowVersion,
    },
  }));
}

const CONFLICT_MESSAGE = 'Someone changed this project since the page was loaded, so nothing was saved. '
  + 'The page now shows the latest version: check it and try again.';

async function deleteProjectDialog(record) {
  const ok = await confirmDialog({
    title: `Delete ${record.name}?`,
    message: `“${record.name}” goes to the recycle bin with everything in it (subprojects and datasets). `
      + 'You can restore it from the recycle bin for 180 days.',
    confirm: 'Move to recycle bin',
    danger: true,
  });
  if (!ok) return false;
  try {
    await api('DELETE', `/api/metadata/project/${record.id}`);
    return true;
  } catch (failure) {
    toast(describeError(failure), 'error');
    return false;
  }
}

/** Moves a subproject within its tree (moves never cross top-level projects). */
async function moveProjectDialog(record, rootId) {
  let moved = null;
  await pickProject({
    title: `Move ${record.name}`,
    intro: 'Choose the project to move it into. A subproject stays within its top-level project.',
    confirmLabel: 'Move here',
    startId: record.parentProjectId || rootId,
    rootId,
    excludeId: record.id,
    alreadyIn: record.parentProjectId,
    onPick: async (target) => {
      await api('POST', `/api/metadata/project/${record.id}/move`, { body: { targetProjectId: target.id } });
      moved = target;
    },
  });
  if (moved) toast(`Moved ${record.name} into ${moved.name}.`, 'success');
  return moved;
}

// ---------------------------------------------------------------------------------------------
// A page of projects (top level or the subprojects of one project)

/**
 * The list of projects at one level. `parent`: null (top level) or the parent's record with
 * `capabilities`; `rootId`: the tree's top-level project (for moves).
 */
function projectList({ parent, rootId, state: initial, onState, signal, onDeleted, heading, filterLabel = 'Filter by name' }) {
  let state = { ...initial };
  // Keeps the list's own state and hands the change to the page (which puts it in the query).
  const set = (partial) => { state = { ...state, ...partial }; onState(partial); };
  heading.tabIndex = -1;
  const wrap = h('section', { class: 'project-list', 'aria-labelledby': heading.id });
  const results = h('div', { class: 'list-results', 'aria-busy': 'false' });
  const filter = filterField({
    label: filterLabel,
    value: state.q,
    onChange: (value) => {
      if (value === state.q) return;
      set({ q: value, offset: 0 });
      load();
    },
  });
  const sorts = sortControls({
    options: SORTS,
    sortBy: state.sort,
    order: state.order,
    onChange: (sort, order) => { set({ sort, order, offset: 0 }); load(); },
  });
  wrap.append(heading, h('div', { class: 'toolbar list-toolbar' }, filter.element, sorts), results);

  function load() {
    if (!results.firstChild) results.append(loading());
    const path = parent ? `/api/metadata/project/${parent.id}/subproject/offset-list` : '/api/metadata/project/offset-list';
    return loadOffsetPage({
      results, path, state, set, signal, load, show: renderRows,
      query: { sortBy: state.sort, sortOrder: state.order, namePrefix: state.q },
    });
  }

  function renderRows(page) {
    const rows = page.data || [];
    const pager = (live) => offsetPager({
      live, offset: state.offset, limit: state.limit, total: page.totalCount || 0, shown: rows.length,
      label: parent ? 'subprojects' : 'projects',
      onPage: (offset, limit) => { set({ offset, limit }); load(); },
    });
    if (!rows.length) {
      replace(results, h('p', { class: 'empty' }, state.q
        ? `No ${parent ? 'subproject' : 'project'} here starts with “${state.q}”.`
        : parent ? 'No subprojects yet.' : 'No projects yet.'));
      return;
    }
    const sorted = (value) => ({
      sorted: state.sort === value,
      order: state.order,
      onSort: () => {
        const order = state.sort === value ? (state.order === 'Asc' ? 'Desc' : 'Asc') : (value === 'Name' || value === 'AccessLevel' ? 'Asc' : 'Desc');
        sorts.show(value, order);
        set({ sort: value, order, offset: 0 });
        load();
      },
    });
    const body = h('tbody', {});
    const table = h('table', { class: ['projects-table', 'stack-table'] },
      h('caption', { class: 'visually-hidden' }, `${heading.textContent}, sorted by ${SORTS.find((s) => s.value === state.sort).label.toLowerCase()}, ${state.order === 'Asc' ? 'ascending' : 'descending'}`),
      h('thead', {}, h('tr', {},
        headerCell('Name', sorted('Name')),
        headerCell('Access', sorted('AccessLevel')),
        headerCell('Updated', { ...sorted('UpdatedAt'), cls: 'hide-narrow' }),
        headerCell('Created', { ...sorted('CreatedAt'), cls: 'hide-narrow' }),
        h('th', { scope: 'col' }, h('span', { class: 'visually-hidden' }, 'Actions')))),
      body);
    const tasks = [];
    for (const row of rows) {
      const actions = h('td', { class: 'row-actions' });
      body.append(h('tr', { dataset: { id: row.id } },
        h('td', { class: 'name-cell' },
          h('a', { href: `#/projects/${row.id}`, 'aria-label': row.name }, h('span', { class: 'folder-icon', 'aria-hidden': 'true' }), breakable(row.name)),
          row.description ? h('span', { class: 'row-description' }, row.description) : null),
        h('td', { dataset: { label: 'Access' } }, accessBadge(row.accessLevel), row.inheritsMembers ? h('span', { class: 'hint inherit-note' }, ' inherits members') : null),
        h('td', { class: 'hide-narrow', dataset: { label: 'Updated' } }, timeElement(row.updatedAt)),
        h('td', { class: 'hide-narrow', dataset: { label: 'Created' } }, timeElement(row.createdAt)),
        actions));
      tasks.push(() => rowActions(row, actions));
    }
    keepFocus(results, () => replace(results, pager(true), h('div', { class: 'table-wrap' }, table), rows.length > 10 && page.totalCount > state.limit ? pager(false) : null), heading);
    // Each row's own capabilities decide its buttons (list records carry none): one small
    // request per visible row, a few at a time.
    limited(tasks, 6, signal);
  }

  async function rowActions(row, cell) {
    const parentCaps = parent?.capabilities || {};
    // An Owner of the parent owns a subproject that inherits its members and is not
    // Confidential (docs/permissions.md: the inherited membership, or the same implicit role
    // from a Private or Shared level): no need to ask. Any other row asks for its own.
    const caps = row.inheritsMembers && row.accessLevel !== 'Confidential' && parentCaps.canEdit && parentCaps.canGrantAccess
      ? { canEdit: true, canDelete: true }
      : await api('GET', `/api/metadata/project/${row.id}/capabilities`, { signal });
    const buttons = [];
    if (caps.canEdit) {
      buttons.push(button('Rename', async () => {
        const record = await api('GET', `/api/metadata/project/${row.id}`);
        const outcome = await renameProjectDialog(record);
        if (outcome === 'conflict') toast(CONFLICT_MESSAGE, 'error');
        if (outcome) load();
      }, { class: ['button', 'button-small'], 'aria-label': `Rename ${row.name}` }));
    }
    if (parent && parentCaps.canDeleteContent) {
      buttons.push(button('Move', async () => {
        if (await moveProjectDialog(row, rootId)) load();
      }, { class: ['button', 'button-small'], 'aria-label': `Move ${row.name}` }));
    }
    if (caps.canDelete || parentCaps.canDeleteContent) {
      buttons.push(button('Delete', async () => {
        if (await deleteProjectDialog(row)) {
          load();
          onDeleted?.({ kind: 'project', id: row.id, name: row.name });
        }
      }, { class: ['button', 'button-small', 'button-danger-quiet'], 'aria-label': `Delete ${row.name}` }));
    }
    replace(cell, buttons.length ? h('div', { class: 'row-buttons' }, buttons) : null);
  }

  load();
  return { element: wrap, reload: load };
}

// ---------------------------------------------------------------------------------------------
// /projects

async function projectsPage(main, _params, query, { principal }) {
  const token = renderToken();
  const controller = new AbortController();
  let state = listState(query);
  const who = principal || await me();
  // Another route was rendered meanwhile: leave `main` to it.
  if (stale(token)) return undefined;
  const heading = h('h2', { id: 'projects-list-heading', class: 'visually-hidden' }, 'Top-level projects');
  const notices = h('div', { class: 'page-notices' }, takeFlash(() => list.reload()));
  const list = projectList({
    parent: null, rootId: null, state, signal: controller.signal, heading,
    onDeleted: (item) => replace(notices, undoNotice(item, () => list.reload())),
    onState: (partial) => { state = { ...state, ...partial }; setQuery(stateQuery(state)); },
  });
  const actions = [];
  // Any role in a tenant may create a top-level project (a platform token without a tenant may not).
  if (who?.tenantId) {
    actions.push(button('New project', async () => {
      const created = await createProjectDialog(null);
      if (created) list.reload();
    }, { kind: 'primary' }));
  }
  main.append(
    h('nav', { class: 'breadcrumbs', 'aria-label': 'Breadcrumb' }, h('ol', {}, h('li', {}, h('span', { 'aria-current': 'page' }, 'Projects')))),
    pageHeader('Projects', { actions, sub: h('p', { class: 'hint' }, 'Top-level projects you can open. Each holds subprojects and datasets.') }),
    notices,
    list.element);
  return () => controller.abort();
}

// ---------------------------------------------------------------------------------------------
// /projects/:id

async function projectPage(main, params, query) {
  const token = renderToken();
  const controller = new AbortController();
  const { signal } = controller;
  const id = params.id;
  main.append(loading('Loading the project…'));
  let project;
  let path;
  try {
    [project, path] = await Promise.all([
      api('GET', `/api/metadata/project/${id}`, { signal }),
      api('GET', `/api/metadata/project/${id}/path`, { signal }).then((p) => p.data || []),
    ]);
  } catch (failure) {
    if (failure.name === 'AbortError' || stale(token)) return undefined;
    replace(main,
      h('h1', {}, failure.status === 404 ? 'Project not found' : 'The project could not be loaded'),
      h('p', { role: 'alert' }, failure.status === 404
        ? 'It does not exist, is in the recycle bin, or you have no access to it.'
        : describeError(failure)),
      h('p', {}, h('a', { href: '#/projects' }, 'All projects'), ' · ', h('a', { href: '#/bin' }, 'Recycle bin')));
    return () => controller.abort();
  }
  // Another route was rendered meanwhile: leave `main` to it.
  if (stale(token)) return undefined;
  const caps = project.capabilities || {};
  const parentEntry = path.length > 1 ? path[path.length - 2] : null;
  const parentCaps = parentEntry?.capabilities || {};
  const rootId = path[0]?.id || project.id;
  const reload = () => navigate(current().path, current().query, { replace: true });

  let state = listState(query);
  const onState = (partial) => { state = { ...state, ...partial }; setQuery(stateQuery(state)); };

  // Breadcrumbs, root first; levels the caller cannot open (no capabilities) are plain text.
  const crumbs = h('nav', { class: 'breadcrumbs', 'aria-label': 'Breadcrumb' },
    h('ol', {},
      h('li', {}, h('a', { href: '#/projects' }, 'Projects')),
      path.map((level, i) => h('li', {}, i === path.length - 1
        ? h('span', { 'aria-current': 'page' }, level.name)
        : level.capabilities?.canListContent
          ? h('a', { href: `#/projects/${level.id}` }, level.name)
          : h('span', {}, level.name)))));

  const actions = [];
  if (caps.canCreateContent) {
    actions.push(button('New subproject', async () => {
      const created = await createProjectDialog(project);
      if (created) { subprojects.reload(); }
    }, { kind: 'primary' }));
  }
  if (caps.canEdit) {
    actions.push(button('Rename', async () => {
      const outcome = await renameProjectDialog(project);
      if (outcome === 'conflict') flash = { message: CONFLICT_MESSAGE };
      if (outcome) reload();
    }));
  }
  if (project.parentProjectId && parentCaps.canDeleteContent) {
    actions.push(button('Move', async () => {
      if (await moveProjectDialog(project, rootId)) reload();
    }));
  }
  if (caps.canDelete || (project.parentProjectId && parentCaps.canDeleteContent)) {
    actions.push(button('Delete', async () => {
      if (await deleteProjectDialog(project)) {
        offerUndo({ kind: 'project', id: project.id, name: project.name });
        navigate(project.parentProjectId ? `/projects/${project.parentProjectId}` : '/projects', undefined, { replace: true });
      }
    }, { kind: 'danger' }));
  }

  const role = path[path.length - 1]?.effectiveUserRole;
  let accessBadgeEl = accessBadge(project.accessLevel);
  const header = pageHeader(project.name, {
    actions,
    sub: h('p', { class: 'project-badges' },
      accessBadgeEl,
      role ? h('span', { class: 'badge' }, `Your role: ${role}`) : null,
      project.parentProjectId ? null : h('span', { class: 'badge' }, 'Top-level project')),
  });

  const subHeading = h('h2', { id: 'subprojects-heading' }, 'Subprojects');
  const subprojects = projectList({
    parent: project, rootId, state, signal, heading: subHeading, onState, onDeleted: (item) => showUndo(item),
    filterLabel: 'Filter subprojects by name',
  });
  const datasets = datasetList({
    project, caps, cursor: state.dcursor, prefix: state.dq, onState, signal, onDeleted: (item) => showUndo(item),
  });

  const reloadLists = () => { subprojects.reload(); datasets.reload(); };
  const notices = h('div', { class: 'page-notices' }, takeFlash(reloadLists));
  const showUndo = (item) => replace(notices, undoNotice(item, reloadLists));

  const content = h('div', { class: 'project-main' });
  if (caps.canCreateContent) {
    const panel = uploadPanel(project.id, {
      onChange: () => { subprojects.reload(); datasets.reload(); },
    });
    content.append(h('section', { class: 'project-upload', 'aria-label': 'Add data' }, panel));
  }
  content.append(subprojects.element, datasets.element);

  const side = h('aside', { class: 'project-side', 'aria-label': 'About this project' },
    membersPanel({
      project, path, caps, signal, reload,
      onConflict: () => { flash = { message: CONFLICT_MESSAGE }; reload(); },
      onChanged: (fresh) => { const badge = accessBadge(fresh.accessLevel); accessBadgeEl.replaceWith(badge); accessBadgeEl = badge; },
    }),
    detailsPanel(project));

  replace(main, crumbs, header,
    project.description ? h('p', { class: 'project-description' }, project.description) : null,
    notices,
    h('div', { class: 'project-layout' }, content, side));
  return () => controller.abort();
}

function detailsPanel(project) {
  return h('section', { class: 'panel', 'aria-labelledby': 'details-heading' },
    h('h2', { id: 'details-heading' }, 'Details'),
    h('dl', { class: 'facts' },
      h('dt', {}, 'Id'), h('dd', { class: 'mono' }, project.id),
      h('dt', {}, 'Created'), h('dd', {}, timeElement(project.createdAt)),
      h('dt', {}, 'Updated'), h('dd', {}, timeElement(project.updatedAt))));
}

// ---------------------------------------------------------------------------------------------
// Datasets of a project (cursor list, by name)

function datasetList({ project, caps, cursor: initialCursor, prefix: initialPrefix, onState, signal, onDeleted }) {
  const heading = h('h2', { id: 'datasets-heading', tabindex: '-1' }, 'Datasets');
  const results = h('div', { class: 'list-results' });
  let prefix = initialPrefix || '';
  const filter = filterField({
    label: 'Filter datasets by name',
    value: prefix,
    onChange: (value) => {
      if (value === prefix) return;
      prefix = value;
      onState({ dq: value });
      go('', true);
    },
  });
  const wrap = h('section', { class: 'dataset-list', 'aria-labelledby': 'datasets-heading' },
    heading,
    h('div', { class: 'toolbar list-toolbar' }, filter.element,
      h('p', { class: 'hint dataset-order' }, 'Datasets placed directly in this project, by name.')),
    results);
  // The cursors of the pages before this one (kept while the page is open).
  const previous = [];
  let cursor = initialCursor || '';
  let pageNumber = cursor ? null : 1;

  async function load() {
    let page;
    try {
      page = await api('GET', `/api/metadata/project/${project.id}/dataset/list`, {
        signal, query: { limit: DATASET_PAGE, cursor: cursor || undefined, namePrefix: prefix || undefined },
      });
    } catch (failure) {
      if (failure.name === 'AbortError') return;
      if (failure instanceof ApiError && problemType(failure) === 'invalid-cursor' && cursor) {
        go('', true);
        return;
      }
      replace(results, errorBox(failure, load));
      return;
    }
    render(page);
  }

  function go(next, reset = false) {
    if (reset) { previous.length = 0; pageNumber = 1; }
    cursor = next;
    onState({ dcursor: next || '' });
    load();
  }

  function render(page) {
    const rows = page.data || [];
    if (!rows.length && !cursor) {
      replace(results, h('p', { class: 'empty', role: 'status' }, prefix
        ? `No dataset here starts with “${prefix}”.`
        : caps.canCreateContent ? 'No datasets yet: upload files above.' : 'No datasets here.'));
      return;
    }
    const start = pageNumber ? (pageNumber - 1) * DATASET_PAGE + 1 : null;
    const pager = (top) => h('div', { class: 'pager' },
      h('span', { class: 'pager-status', role: top ? 'status' : null },
        start ? `Datasets ${start.toLocaleString()}–${(start + rows.length - 1).toLocaleString()}${page.cursor ? '' : ' (last page)'}` : `${rows.length} datasets`),
      h('span', { class: 'pager-buttons' },
        h('button', { type: 'button', class: ['button', 'button-small'], disabled: !cursor, onclick: () => go('', true), 'aria-label': 'First page of datasets' }, '« First'),
        h('button', {
          type: 'button', class: ['button', 'button-small'], disabled: !cursor || !previous.length, 'aria-label': 'Previous page of datasets',
          onclick: () => { const back = previous.pop(); pageNumber = pageNumber ? pageNumber - 1 : null; go(back || ''); },
        }, '‹ Previous'),
        h('button', {
          type: 'button', class: ['button', 'button-small'], disabled: !page.cursor, 'aria-label': 'Next page of datasets',
          onclick: () => { previous.push(cursor); pageNumber = pageNumber ? pageNumber + 1 : null; go(page.cursor); },
        }, 'Next ›')));
    const paged = Boolean(cursor || page.cursor);
    const body = h('tbody', {});
    for (const row of rows) body.append(datasetRow(row));
    keepFocus(results, () => replace(results,
      paged ? pager(true) : h('p', { class: 'pager-status', role: 'status' }, rows.length === 1 ? '1 dataset' : `${rows.length} datasets`),
      h('div', { class: 'table-wrap' }, h('table', { class: ['datasets-table', 'stack-table'] },
        h('caption', { class: 'visually-hidden' }, 'Datasets, sorted by name'),
        h('thead', {}, h('tr', {},
          headerCell('Name', { sorted: true, order: 'Asc' }),
          h('th', { scope: 'col' }, 'Format'),
          h('th', { scope: 'col', class: 'num' }, 'Size'),
          h('th', { scope: 'col' }, 'Updated'),
          h('th', { scope: 'col' }, h('span', { class: 'visually-hidden' }, 'Actions')))),
        body)),
      paged && rows.length > 10 && page.totalCount > state.limit ? pager(false) : null), heading);
  }

  function datasetRow(row) {
    const buttons = [];
    if (caps.canUpdateContent) {
      buttons.push(button('Rename', () => renameDataset(row), { class: ['button', 'button-small'], 'aria-label': `Rename ${row.name}` }));
    }
    if (caps.canDeleteContent) {
      buttons.push(button('Move', () => moveDataset(row), { class: ['button', 'button-small'], 'aria-label': `Move ${row.name}` }));
      buttons.push(button('Delete', () => deleteDataset(row), { class: ['button', 'button-small', 'button-danger-quiet'], 'aria-label': `Delete ${row.name}` }));
    }
    return h('tr', { dataset: { id: row.id } },
      h('td', { class: 'name-cell' }, h('a', { href: `#/datasets/${row.id}`, 'aria-label': row.name }, h('span', { class: 'file-icon', 'aria-hidden': 'true' }), breakable(row.name))),
      // The format's name says what the data is too ("DFS2 grid", "Zipped Shapefile"); the
      // dataset's page has the type and the extension.
      h('td', { dataset: { label: 'Format' }, title: row.datasetFormat ? `${typeLabel(row)}, ${row.datasetFormat}` : null }, formatName(row) || '—'),
      h('td', { class: 'num', dataset: { label: 'Size' } }, formatBytes(row.storageSize)),
      h('td', { dataset: { label: 'Updated' } }, timeElement(row.updatedAt)),
      h('td', { class: 'row-actions' }, buttons.length ? h('div', { class: 'row-buttons' }, buttons) : null));
  }

  async function renameDataset(row) {
    const outcome = await renameDialog(row.name, (value) => api('PUT', `/api/metadata/project/${project.id}/dataset`, {
      body: { id: row.id, name: value, rowVersion: row.rowVersion },
    }));
    if (outcome === 'conflict') {
      toast('Someone changed this dataset since the list was loaded, so nothing was saved. The list now shows the latest version.', 'error');
    }
    if (outcome) load();
  }

  async function moveDataset(row) {
    let moved = null;
    await pickProject({
      title: `Move ${row.name}`,
      intro: 'Choose the project to move the dataset into.',
      confirmLabel: 'Move here',
      startId: project.id,
      alreadyIn: project.id,
      onPick: async (target) => {
        await api('POST', `/api/metadata/dataset/${row.id}/move`, { body: { targetProjectId: target.id } });
        moved = target;
      },
    });
    if (moved) {
      toast(`Moved ${row.name} into ${moved.name}.`, 'success');
      load();
    }
  }

  async function deleteDataset(row) {
    const ok = await confirmDialog({
      title: `Delete ${row.name}?`,
      message: `“${row.name}” goes to the recycle bin. You can restore it from there for 180 days.`,
      confirm: 'Move to recycle bin',
      danger: true,
    });
    if (!ok) return;
    try {
      await api('DELETE', `/api/metadata/dataset/${row.id}`);
      load();
      onDeleted?.({ kind: 'dataset', id: row.id, name: row.name });
    } catch (failure) {
      toast(describeError(failure), 'error');
    }
  }

  load();
  return { element: wrap, reload: () => load() };
}

// ---------------------------------------------------------------------------------------------
// Members and access level

/** Names of the tenant's users and API keys, when the caller may list them (else empty). */
async function directory(signal) {
  const who = await me();
  const names = new Map();
  const choices = [];
  if (!who?.tenantId) return { names, choices, available: false };
  let available = false;
  const [users, keys] = await Promise.all([
    api('GET', `/api/admin/tenants/${who.tenantId}/members`, { signal, query: { limit: 1000 }, version: 1 }).catch(() => null),
    api('GET', `/api/admin/tenants/${who.tenantId}/api-keys`, { signal, query: { limit: 1000 }, version: 1 }).catch(() => null),
  ]);
  for (const user of users?.data || []) {
    available = true;
    const label = user.name || user.email || user.userId;
    names.set(user.userId, label);
    choices.push({ id: user.userId, type: 'UserIdentity', label: `${label}${user.email ? ` <${user.email}>` : ''} — user` });
  }
  for (const key of keys?.data || []) {
    available = true;
    names.set(key.id, key.name || key.id);
    if (!key.revokedAt && !key.revoked) {
      choices.push({ id: key.id, type: 'OpenAPIAccount', label: `${key.name || key.id} — API key` });
    }
  }
  if (who.id && !names.has(who.id)) names.set(who.id, who.name || who.id);
  return { names, choices, available, me: who };
}

function membersPanel({ project, path, caps, signal, onConflict, onChanged, reload }) {
  const heading = h('h2', { id: 'members-heading', tabindex: '-1' }, 'Access');
  const panel = h('section', { class: 'panel members-panel', 'aria-labelledby': 'members-heading' }, heading);
  const status = h('p', { class: 'visually-hidden', role: 'status', 'aria-live': 'polite' });
  const error = h('p', { class: 'form-error', role: 'alert', hidden: true });
  const body = h('div', {}, loading('Loading members…'));
  panel.append(status, error, body);

  const parent = path.length > 1 ? path[path.length - 2] : null;

  function fail(failure) {
    if (failure instanceof ApiError && problemType(failure) === 'row-version-conflict') {
      onConflict();
      return;
    }
    error.textContent = describeError(failure);
    error.hidden = false;
  }

  // Does one change, then reads the project again (its rowVersion changed; the page's other
  // controls share this record) and shows the panel anew. Changed capabilities reload the page.
  async function act(work, done) {
    error.hidden = true;
    try {
      await work();
      const fresh = await api('GET', `/api/metadata/project/${project.id}`, { signal });
      const capsChanged = JSON.stringify(fresh.capabilities) !== JSON.stringify(caps);
      Object.assign(project, fresh);
      status.textContent = done;
      toast(done, 'success');
      if (capsChanged) {
        reload();
        return;
      }
      onChanged?.(project);
      await load();
    } catch (failure) {
      if (failure.name === 'AbortError') return;
      fail(failure);
    }
  }

  async function load() {
    let members;
    let dir;
    try {
      [members, dir] = await Promise.all([
        api('GET', `/api/metadata/project/${project.id}/member`, { signal }).then((m) => m.data || []),
        directory(signal),
      ]);
    } catch (failure) {
      if (failure.name === 'AbortError') return;
      replace(body, errorBox(failure, load));
      return;
    }
    render(members, dir);
  }

  function memberName(member, dir) {
    const known = dir.names.get(member.userId);
    const you = dir.me && dir.me.id === member.userId ? ' (you)' : '';
    return [known || h('span', { class: 'mono' }, member.userId), you];
  }

  function render(members, dir) {
    const parts = [];
    // Access level.
    if (caps.canEditAccessLevel) {
      const select = h('select', { name: 'accessLevel', id: 'access-level-select' },
        ACCESS_LEVELS.map((level) => h('option', { value: level, selected: level === project.accessLevel }, level)));
      const hint = h('p', { class: 'hint', id: 'access-level-hint' }, ACCESS_HINTS[project.accessLevel]);
      select.setAttribute('aria-describedby', 'access-level-hint');
      select.addEventListener('change', () => { hint.textContent = ACCESS_HINTS[select.value]; });
      const save = button('Change', () => {
        if (select.value === project.accessLevel) return;
        act(() => api('PATCH', '/api/metadata/project', { body: { id: project.id, accessLevel: select.value, rowVersion: project.rowVersion } }),
          `Access level is now ${select.value}.`);
      }, { 'aria-label': 'Change access level' });
      parts.push(h('div', { class: 'access-row' },
        h('div', { class: 'field' }, h('label', { for: 'access-level-select' }, 'Access level'), select, hint),
        save));
    } else {
      parts.push(h('dl', { class: 'facts' },
        h('dt', {}, 'Access level'), h('dd', {}, accessBadge(project.accessLevel), ' ', h('span', { class: 'hint' }, ACCESS_HINTS[project.accessLevel]))));
    }

    // Inheritance (subprojects only).
    if (parent) {
      if (caps.canGrantAccess) {
        const toggle = h('input', { type: 'checkbox', id: 'inherit-toggle', checked: project.inheritsMembers });
        toggle.addEventListener('change', async () => {
          const on = toggle.checked;
          const ok = await confirmDialog({
            title: on ? 'Inherit members?' : 'Stop inheriting members?',
            message: on
              ? `This project’s own members are removed and it takes the members of ${parent.name} (and what they inherit).`
              : `The members that now apply become this project’s own; later changes to ${parent.name}’s members no longer apply here.`,
            confirm: on ? 'Inherit' : 'Stop inheriting',
          });
          if (!ok) { toggle.checked = !on; return; }
          if (on) {
            act(() => api('PUT', `/api/metadata/project/${project.id}/members/inherit`, { body: { rowVersion: project.rowVersion } }), 'Members are now inherited.');
          } else {
            act(() => api('PUT', `/api/metadata/project/${project.id}/members`, {
              body: { rowVersion: project.rowVersion, members: members.map((m) => ({ userId: m.userId, role: m.role, principalType: m.principalType })) },
            }), 'Members are now this project’s own.');
          }
        });
        parts.push(h('div', { class: 'field check-field' },
          h('label', { for: 'inherit-toggle' }, toggle, ` Inherit members from ${parent.name}`)));
      } else if (project.inheritsMembers) {
        parts.push(h('p', { class: 'hint' }, `Members are inherited from ${parent.name}.`));
      }
    }

    // Members.
    parts.push(h('h3', {}, `Members (${members.length})`));
    if (project.inheritsMembers && members.length) {
      parts.push(h('p', { class: 'hint' }, caps.canGrantAccess
        ? 'These members are inherited. Changing them here makes them this project’s own.'
        : 'These members are inherited.'));
    }
    if (!members.length) {
      parts.push(h('p', { class: 'empty' }, 'No members.'));
    } else {
      const list = h('ul', { class: 'member-list' });
      const owners = members.filter((m) => m.role === 'Owner').length;
      for (const member of members) {
        // The last Owner stays (the API refuses a project without one): no controls for it.
        const fixed = member.role === 'Owner' && owners === 1;
        const kind = member.principalType === 'OpenAPIAccount' ? 'API key' : member.principalType === 'MemberGroup' ? 'group' : 'user';
        let roleControl;
        if (caps.canGrantAccess && !fixed) {
          const selectId = `role-${member.userId}`;
          const select = h('select', { id: selectId, 'aria-label': `Role of ${dir.names.get(member.userId) || member.userId}` },
            ROLES.map((r) => h('option', { value: r, selected: r === member.role }, r)));
          select.addEventListener('change', async () => {
            if (dir.me && dir.me.id === member.userId && select.value !== 'Owner') {
              const ok = await confirmDialog({
                title: 'Change your own role?',
                message: `As ${select.value} you can no longer manage ${project.name}’s members or settings.`,
                confirm: `Make me ${select.value}`,
                danger: true,
              });
              if (!ok) { select.value = member.role; return; }
            }
            const next = members.map((m) => ({ userId: m.userId, principalType: m.principalType, role: m.userId === member.userId ? select.value : m.role }));
            act(() => api('PUT', `/api/metadata/project/${project.id}/members`, { body: { members: next, rowVersion: project.rowVersion } }),
              `Role changed to ${select.value}.`);
          });
          roleControl = select;
        } else {
          roleControl = h('span', { class: 'badge' }, member.role);
        }
        list.append(h('li', { class: 'member' },
          h('span', { class: 'member-name' }, memberName(member, dir), h('span', { class: 'member-kind' }, kind)),
          h('span', { class: 'member-controls' },
            roleControl,
            caps.canGrantAccess && !fixed ? button('Remove', async () => {
              const label = dir.names.get(member.userId) || member.userId;
              const ok = await confirmDialog({
                title: `Remove ${label}?`,
                message: `${label} loses the ${member.role} role in ${project.name}${project.inheritsMembers ? ' (the inherited members become this project’s own first)' : ''}.`,
                confirm: 'Remove', danger: true,
              });
              if (ok) act(() => api('DELETE', `/api/metadata/project/${project.id}/member/${member.userId}`), `Removed ${label}.`);
            }, { class: ['button', 'button-small'], 'aria-label': `Remove ${dir.names.get(member.userId) || member.userId}` }) : null)));
      }
      parts.push(list);
    }

    if (caps.canGrantAccess) parts.push(addMemberForm(members, dir));
    keepFocus(body, () => replace(body, parts), heading);
  }

  function addMemberForm(members, dir) {
    const taken = new Set(members.map((m) => m.userId));
    const role = h('select', { name: 'role' }, ROLES.map((r) => h('option', { value: r, selected: r === 'Reader' }, r)));
    let who;
    let type = null;
    const choices = dir.choices.filter((c) => !taken.has(c.id));
    if (dir.available) {
      who = h('select', { name: 'member' },
        h('option', { value: '' }, choices.length ? 'Choose…' : 'Everyone is a member'),
        choices.map((c) => h('option', { value: `${c.type}:${c.id}` }, c.label)));
    } else {
      who = h('input', { type: 'text', name: 'member', autocomplete: 'off', spellcheck: 'false', placeholder: '00000000-0000-…' });
      type = h('select', { name: 'principalType' },
        h('option', { value: 'UserIdentity' }, 'User'), h('option', { value: 'OpenAPIAccount' }, 'API key'));
    }
    const form = h('form', { class: 'add-member' },
      h('h3', {}, 'Add a member'),
      field(dir.available ? 'User or API key' : 'User or API key id', who,
        { hint: dir.available ? null : 'You cannot list the tenant’s users: paste the id of a user or API key of this tenant.' }),
      type ? field('Kind', type) : null,
      field('Role', role),
      h('button', { type: 'submit', class: ['button', 'button-primary'] }, 'Add member'));
    form.addEventListener('submit', (event) => {
      event.preventDefault();
      let userId;
      let principalType;
      if (dir.available) {
        if (!who.value) { error.textContent = 'Choose who to add.'; error.hidden = false; who.focus(); return; }
        [principalType, userId] = who.value.split(':');
      } else {
        userId = who.value.trim();
        principalType = type.value;
        if (!/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i.test(userId)) {
          error.textContent = 'Enter the id (a UUID) of a user or API key.';
          error.hidden = false;
          who.focus();
          return;
        }
      }
      const label = dir.names.get(userId) || userId;
      act(() => api('POST', `/api/metadata/project/${project.id}/member`, { body: { userId, principalType, role: role.value } }),
        `Added ${label} as ${role.value}.`);
    });
    return form;
  }

  load();
  return panel;
}

