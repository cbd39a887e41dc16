// BackOffice: feature status messages (docs/features.md). Lists the global messages, or a
// feature's merged with the global ones, by window status; creates, edits, ends and deletes
// them with a live preview of the banner as people will see it (the body through the same
// sanitizer and Trusted Types policy as the banner).

import { allPages, api } from './api.js';
import {
  button, confirmDialog, debounce, describeError, errorBox, h, pageHeader,
  parseTime, replace, timeElement, toast, uid,
} from './dom.js';
import { setQuery } from './router.js';
import { featureId as consoleFeature } from './settings.js';
import { messageElement } from './banner.js';
import {
  FieldSet, backOfficeOnly, cursorPager, eitherSignal, fromLocalInput, localInputValue, utcText, zoneName,
} from './admin-common.js';

const TYPES = ['Critical', 'Warning', 'Informational'];
const EXPIRY = [
  { value: 'All', label: 'All' },
  { value: 'NonExpired', label: 'Active now' },
  { value: 'Pending', label: 'Pending (not started)' },
  { value: 'Expired', label: 'Expired' },
];
const TITLE_MAX = 255;
const BODY_MAX = 4000;
const PAGE = 50;

const typeBadge = { critical: 'badge-danger', warning: 'badge-warning', informational: 'badge-info' };

function messagesPath(feature) {
  return feature ? `/api/admin/feature/${encodeURIComponent(feature)}/message` : '/api/admin/feature/message';
}

function messagePath(message) {
  return `${messagesPath(message.featureId)}/${encodeURIComponent(message.id)}`;
}

/** Pending, Active or Expired now, from the window. */
function windowStatus(message, now = Date.now()) {
  const start = parseTime(message.startDate)?.getTime();
  const end = parseTime(message.expiringDate)?.getTime();
  if (start !== undefined && now < start) return { label: 'Pending', badge: 'badge-info' };
  if (end !== undefined && now >= end) return { label: 'Expired', badge: '' };
  return { label: 'Active', badge: 'badge-success' };
}

/** Why a feature id would be refused (docs/features.md, "Feature ids"), or null. */
function featureIdProblem(id) {
  if (!id) return 'Enter a feature id, or choose all features.';
  if ([...id].length > 128) return 'A feature id has at most 128 characters.';
  // eslint-disable-next-line no-control-regex
  if (/[\s\u0000-\u001f\u007f-\u009f]/u.test(id)) return 'A feature id has no spaces or control characters.';
  if (['message', 'tenant', 'banner'].includes(id)) return `“${id}” cannot be a feature id.`;
  return null;
}

function codePoints(text) {
  return [...String(text || '')].length;
}

export async function messagesPage(main, _params, query, { principal }) {
  if (!backOfficeOnly(main, principal)) return undefined;
  const controller = new AbortController();
  const state = {
    // The console's own feature (with the global messages) unless the link names another.
    feature: query.scope === 'global' ? '' : (query.feature || consoleFeature),
    expiry: EXPIRY.some((e) => e.value === query.expiry) ? query.expiry : 'All',
    sortBy: query.sortBy === 'ExpiringDate' ? 'ExpiringDate' : 'StartDate',
    sortOrder: query.sortOrder === 'Asc' ? 'Asc' : 'Desc',
  };

  const features = await allPages('/api/admin/features', { signal: controller.signal, max: 2000 })
    .catch(() => []);
  const featureIds = new Set([consoleFeature, ...features.map((f) => f.id)]);
  if (state.feature) featureIds.add(state.feature);
  const featureLabel = (id) => {
    const found = features.find((f) => f.id === id);
    return found && found.name !== id ? `${found.name} (${id})` : id;
  };

  const datalistId = uid('features');
  const datalist = h('datalist', { id: datalistId }, [...featureIds].map((id) => h('option', { value: id }, featureLabel(id))));

  // ---- filters ----
  const featureFilter = h('select', { name: 'feature' });
  function fillFeatureFilter() {
    replace(featureFilter,
      h('option', { value: '' }, 'Global messages only'),
      [...featureIds].sort().map((id) => h('option', { value: id, selected: id === state.feature }, `${featureLabel(id)} + global`)));
    featureFilter.value = state.feature;
  }
  fillFeatureFilter();
  const expiryFilter = h('select', { name: 'expiry' },
    EXPIRY.map((e) => h('option', { value: e.value, selected: e.value === state.expiry }, e.label)));
  const sortFilter = h('select', { name: 'sort' },
    h('option', { value: 'StartDate:Desc' }, 'Latest start first'),
    h('option', { value: 'StartDate:Asc' }, 'Earliest start first'),
    h('option', { value: 'ExpiringDate:Desc' }, 'Latest end first'),
    h('option', { value: 'ExpiringDate:Asc' }, 'Earliest end first'));
  sortFilter.value = `${state.sortBy}:${state.sortOrder}`;
  const labelled = (text, control) => {
    control.id = control.id || uid('filter');
    return h('div', { class: 'field' }, h('label', { for: control.id }, text), control);
  };
  const filters = h('form', { class: ['inline-form', 'admin-filters'], role: 'search', 'aria-label': 'Filter messages', onsubmit: (e) => e.preventDefault() },
    labelled('Messages of', featureFilter),
    labelled('Status', expiryFilter),
    labelled('Order', sortFilter));
  const onFilter = () => {
    state.feature = featureFilter.value;
    state.expiry = expiryFilter.value;
    [state.sortBy, state.sortOrder] = sortFilter.value.split(':');
    setQuery({ scope: state.feature ? undefined : 'global', feature: state.feature || undefined, expiry: state.expiry, sortBy: state.sortBy, sortOrder: state.sortOrder });
    pager.reset();
  };
  featureFilter.addEventListener('change', onFilter);
  expiryFilter.addEventListener('change', onFilter);
  sortFilter.addEventListener('change', onFilter);

  // ---- list ----
  const listArea = h('div', { class: 'admin-list', 'aria-busy': 'false' });
  const summary = h('p', { class: 'hint', role: 'status' });

  function row(message) {
    const status = windowStatus(message);
    const type = String(message.type || '');
    const body = h('div', { class: 'admin-message-preview' });
    const preview = messageElement(message, {});
    body.append(preview);
    return h('tr', { dataset: { messageId: String(message.id) } },
      h('td', {}, h('span', { class: ['badge', typeBadge[type.toLowerCase()]] }, type)),
      h('td', { class: 'admin-title-cell' },
        h('div', { class: 'admin-message-title' }, message.title),
        message.body ? h('details', { class: 'admin-body-details' },
          h('summary', {}, 'Body'), body) : h('span', { class: 'hint' }, 'No body')),
      h('td', {}, message.featureId ? h('span', { class: 'mono' }, message.featureId) : h('span', { class: 'badge' }, 'Global')),
      h('td', { class: 'admin-window' },
        h('div', {}, timeElement(message.startDate)),
        h('div', {}, h('span', { class: 'hint' }, 'to '), timeElement(message.expiringDate))),
      h('td', {}, h('span', { class: ['badge', status.badge] }, status.label)),
      h('td', { class: 'hide-narrow' }, timeElement(message.updatedAt)),
      h('td', { class: 'admin-actions' },
        button('Edit', () => editor.open(message), { kind: 'small', ariaLabel: `Edit “${message.title}”` }),
        status.label === 'Active'
          ? button('End now', () => endNow(message), { kind: 'small', ariaLabel: `End now: “${message.title}”` })
          : null,
        button('Delete', () => remove(message), { kind: 'small', ariaLabel: `Delete “${message.title}”` })));
  }

  async function load(cursor, pagerSignal) {
    listArea.setAttribute('aria-busy', 'true');
    try {
      const page = await api('GET', messagesPath(state.feature), {
        query: { expiry: state.expiry, sortBy: state.sortBy, sortOrder: state.sortOrder, cursor, limit: PAGE },
        signal: eitherSignal(controller.signal, pagerSignal),
      });
      const rows = page?.data || [];
      summary.textContent = rows.length
        ? `${rows.length}${page.cursor ? '+' : ''} message${rows.length === 1 ? '' : 's'} shown.`
        : '';
      if (!rows.length) {
        replace(listArea, h('p', { class: 'empty' }, cursor ? 'No more messages.' : 'No messages match these filters.'));
      } else {
        replace(listArea, h('div', { class: 'table-wrap' }, h('table', { class: 'admin-table', 'aria-label': 'Status messages' },
          h('thead', {}, h('tr', {},
            h('th', { scope: 'col' }, 'Type'), h('th', { scope: 'col' }, 'Title'), h('th', { scope: 'col' }, 'Feature'),
            h('th', { scope: 'col' }, 'Window'), h('th', { scope: 'col' }, 'Status'),
            h('th', { scope: 'col', class: 'hide-narrow' }, 'Updated'), h('th', { scope: 'col' }, 'Actions'))),
          h('tbody', {}, rows.map(row)))));
      }
      return page?.cursor || null;
    } catch (failure) {
      if (failure.name === 'AbortError') return null;
      replace(listArea, errorBox(failure, () => pager.reload()));
      return null;
    } finally {
      listArea.setAttribute('aria-busy', 'false');
    }
  }
  const pager = cursorPager(load, { label: 'Message pages' });

  async function endNow(message) {
    try {
      await api('PATCH', messagePath(message), { body: { expiringDate: new Date().toISOString() } });
      toast(`“${message.title}” ended.`, 'success');
      pager.reload();
      window.basinBanner?.refresh();
    } catch (failure) {
      toast(describeError(failure), 'error');
    }
  }

  async function purge() {
    const ok = await confirmDialog({
      title: 'Remove old expired messages',
      message: 'Run the retention job now? It removes every message, global ones too, that ended longer ago than the retention period (features.message_retention_days, 30 days unless configured). Active, pending and recently ended messages stay.',
      confirm: 'Remove', danger: true,
    });
    if (!ok) return;
    try {
      const answer = await api('POST', '/api/admin/feature-messages/purge-expired');
      const removed = Number(answer?.removed || 0);
      toast(removed ? `${removed} old message${removed === 1 ? '' : 's'} removed.` : 'No message was old enough to remove.', 'success');
      if (removed) pager.reload();
    } catch (failure) {
      toast(describeError(failure), 'error');
    }
  }

  async function remove(message) {
    const ok = await confirmDialog({
      title: 'Delete message',
      message: `Delete “${message.title}”? It disappears from every banner at once.`,
      confirm: 'Delete', danger: true,
    });
    if (!ok) return;
    try {
      await api('DELETE', messagePath(message));
      toast('Message deleted.', 'success');
      if (editor.editing?.id === message.id) editor.close();
      pager.reload();
      window.basinBanner?.refresh();
    } catch (failure) {
      toast(describeError(failure), 'error');
    }
  }

  const newButton = button('New message', () => editor.open(null), { kind: 'primary' });
  const editor = messageEditor({
    datalistId,
    returnFocus: () => newButton,
    onSaved(saved) {
      if (saved.featureId && !featureIds.has(saved.featureId)) {
        featureIds.add(saved.featureId);
        datalist.append(h('option', { value: saved.featureId }));
      }
      // Show the list the saved message is in (a global one is in every list).
      if (saved.featureId && saved.featureId !== state.feature) {
        state.feature = saved.featureId;
        fillFeatureFilter();
        onFilter();
        window.basinBanner?.refresh();
        return;
      }
      fillFeatureFilter();
      pager.reload();
      window.basinBanner?.refresh();
    },
  });

  main.append(
    pageHeader('Status messages', {
      sub: h('p', { class: 'hint' }, 'Notices shown as a banner in applications: for one feature or for all (global). Times are shown in your time zone, ', h('strong', {}, zoneName()), '.'),
      actions: [newButton, button('Remove old expired', purge, { title: 'Run the retention job now: removes messages that ended longer ago than the retention period' })],
    }),
    datalist,
    editor.el,
    h('section', { 'aria-labelledby': 'messages-list-title' },
      h('h2', { id: 'messages-list-title' }, 'Messages'),
      filters, summary, listArea, pager.el));
  await pager.reset();
  if (query.new === '1') editor.open(null);
  return () => controller.abort();
}

/** The create/edit form with its live preview. */
function messageEditor({ datalistId, onSaved, returnFocus }) {
  const fields = new FieldSet();
  const heading = h('h2', { id: uid('editor-title') }, 'New message');
  const type = h('select', { name: 'type' }, TYPES.map((t) => h('option', { value: t }, t)));
  const scopeName = uid('scope');
  const global = h('input', { type: 'radio', name: scopeName, value: 'global', id: uid('scope-global') });
  const oneFeature = h('input', { type: 'radio', name: scopeName, value: 'feature', id: uid('scope-feature'), checked: true });
  const feature = h('input', { type: 'text', name: 'featureId', list: datalistId, autocomplete: 'off', spellcheck: 'false', value: consoleFeature });
  const scopeHint = h('p', { class: 'hint', id: uid('scope-hint') }, 'A global message shows in the banner of every feature.');
  const scope = h('fieldset', { class: 'admin-scope', 'aria-describedby': scopeHint.id },
    h('legend', {}, 'Shown for'),
    h('div', { class: 'admin-radio' }, global, h('label', { for: global.id }, 'All features (global)')),
    h('div', { class: 'admin-radio' }, oneFeature, h('label', { for: oneFeature.id }, 'One feature')),
    scopeHint);
  const title = h('input', { type: 'text', name: 'title', autocomplete: 'off' });
  const titleCount = h('span', { class: 'admin-count' });
  const body = h('textarea', { name: 'body', rows: 6, spellcheck: 'true' });
  const bodyCount = h('span', { class: 'admin-count' });
  const start = h('input', { type: 'datetime-local', name: 'startDate' });
  const end = h('input', { type: 'datetime-local', name: 'expiringDate' });
  const startUtc = h('span', { class: 'admin-utc' });
  const endUtc = h('span', { class: 'admin-utc' });
  const previewArea = h('div', { class: 'admin-preview-area' });
  const previewHeading = h('h3', { id: uid('preview') }, 'Preview');
  const save = h('button', { type: 'submit', class: ['button', 'button-primary'] }, 'Publish');
  const cancel = button('Cancel', () => close());
  // Escape leaves the form as it leaves a dialog.
  const onKey = (event) => { if (event.key === 'Escape' && !form.hidden) { event.preventDefault(); close(); } };

  const featureWrap = fields.add('featureId', 'Feature id', feature, { hint: 'The feature whose banner shows it, e.g. the console’s own: ' + consoleFeature + '.' });
  const form = h('form', { class: ['panel', 'admin-editor'], 'aria-labelledby': heading.id, novalidate: true, hidden: true },
    heading,
    h('div', { class: 'admin-editor-grid' },
      h('div', { class: 'admin-editor-fields' },
        fields.add('type', 'Type', type),
        fields.attach('scope', h('div', { class: 'field' }, scope), global),
        featureWrap,
        fields.add('title', 'Title', title, { hint: 'Plain text, at most 255 characters.', required: true }),
        titleCount,
        fields.add('body', 'Body', body, { hint: 'Limited HTML: b, strong, i, em, u, br, p, ul, ol, li, and links (a href) to https: or mailto: addresses. Everything else is removed.' }),
        bodyCount,
        h('div', { class: 'admin-two' },
          h('div', {}, fields.add('startDate', 'Starts', start, { required: true }), startUtc),
          h('div', {}, fields.add('expiringDate', 'Ends', end, { required: true }), endUtc)),
        h('p', { class: 'hint' }, `Times are in your time zone (${zoneName()}) and are stored in UTC. A message shows from its start up to, not including, its end.`)),
      h('section', { class: 'admin-preview', 'aria-labelledby': previewHeading.id },
        previewHeading,
        h('p', { class: 'hint' }, 'As the banner will show it. Basin sanitizes the body again when it is saved.'),
        previewArea)),
    fields.general,
    h('div', { class: 'dialog-actions' }, cancel, save));

  let editing = null;
  form.addEventListener('keydown', onKey);

  function counter(el, text, max) {
    const n = codePoints(text);
    el.textContent = `${n} / ${max} characters`;
    el.classList.toggle('admin-count-over', n > max);
  }

  function updatePreview() {
    counter(titleCount, title.value, TITLE_MAX);
    counter(bodyCount, body.value, BODY_MAX);
    const s = fromLocalInput(start.value);
    const e = fromLocalInput(end.value);
    startUtc.textContent = s ? utcText(s) : '';
    endUtc.textContent = e ? utcText(e) : '';
    replace(previewArea, messageElement({
      id: 'preview', type: type.value, title: title.value.trim() || '(no title)', body: body.value,
    }, { headingLevel: 4 }));
  }
  const updateSoon = debounce(updatePreview, 60);

  function updateScope() {
    const isGlobal = global.checked;
    featureWrap.hidden = isGlobal;
  }

  for (const el of [title, body]) el.addEventListener('input', updateSoon);
  for (const el of [type, start, end]) el.addEventListener('change', updatePreview);
  for (const el of [start, end]) el.addEventListener('input', updatePreview);
  global.addEventListener('change', updateScope);
  oneFeature.addEventListener('change', updateScope);

  function open(message) {
    editing = message;
    fields.clear();
    heading.textContent = message ? `Edit message ${message.id}` : 'New message';
    save.textContent = message ? 'Save changes' : 'Publish';
    type.value = TYPES.find((t) => t.toLowerCase() === String(message?.type || 'Informational').toLowerCase()) || 'Informational';
    const isGlobal = message ? !message.featureId : false;
    global.checked = isGlobal;
    oneFeature.checked = !isGlobal;
    feature.value = message ? (message.featureId || '') : (feature.value || consoleFeature);
    for (const el of [global, oneFeature, feature]) el.disabled = Boolean(message);
    scopeHint.textContent = message
      ? 'A message never moves between features or between a feature and the global set: delete it and create another instead.'
      : 'A global message shows in the banner of every feature.';
    title.value = message?.title || '';
    body.value = message?.body || '';
    const now = new Date();
    now.setSeconds(0, 0);
    start.value = message ? localInputValue(message.startDate) : localInputValue(now);
    end.value = message ? localInputValue(message.expiringDate) : localInputValue(new Date(now.getTime() + 24 * 3600 * 1000));
    updateScope();
    updatePreview();
    form.hidden = false;
    form.scrollIntoView({ block: 'start' });
    type.focus();
  }

  function close({ focus = null } = {}) {
    const hadFocus = form.contains(document.activeElement);
    editing = null;
    form.hidden = true;
    fields.clear();
    if (hadFocus) (focus || returnFocus())?.focus();
  }

  form.addEventListener('submit', async (event) => {
    event.preventDefault();
    fields.clear();
    let bad = false;
    if (!title.value.trim()) { fields.set('title', 'Enter a title.'); bad = true; }
    if (codePoints(title.value) > TITLE_MAX) { fields.set('title', `At most ${TITLE_MAX} characters (now ${codePoints(title.value)}).`); bad = true; }
    if (codePoints(body.value) > BODY_MAX) { fields.set('body', `At most ${BODY_MAX} characters (now ${codePoints(body.value)}).`); bad = true; }
    const s = fromLocalInput(start.value);
    const e = fromLocalInput(end.value);
    if (!s) { fields.set('startDate', 'Enter when the message starts.'); bad = true; }
    if (!e) { fields.set('expiringDate', 'Enter when the message ends.'); bad = true; }
    if (s && e && e <= s) { fields.set('expiringDate', 'The end must be later than the start.'); bad = true; }
    const featureId = feature.value.trim();
    if (!editing && oneFeature.checked) {
      const problem = featureIdProblem(featureId);
      if (problem) { fields.set('featureId', problem); bad = true; }
    }
    if (bad) {
      fields.showGeneral('Check the fields marked below.');
      form.querySelector('[aria-invalid="true"]')?.focus();
      return;
    }
    const payload = {
      type: type.value, title: title.value, body: body.value,
      startDate: s.toISOString(), expiringDate: e.toISOString(),
    };
    save.disabled = true;
    try {
      let saved;
      if (editing) {
        saved = await api('PATCH', messagePath(editing), { body: payload });
      } else {
        saved = await api('POST', messagesPath(oneFeature.checked ? featureId : null), { body: payload });
      }
      toast(editing ? 'Message saved.' : 'Message published.', 'success');
      close();
      onSaved(saved || {});
    } catch (failure) {
      if (failure?.problem?.errors?.featureId === undefined && /featureId/.test(failure?.problem?.detail || '') && failure.status === 400) {
        fields.clear();
        fields.set('featureId', failure.problem.detail);
      } else {
        fields.show(failure);
      }
    } finally {
      save.disabled = false;
    }
  });

  return {
    el: form,
    open,
    close,
    get editing() { return editing; },
  };
}
