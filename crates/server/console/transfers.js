// Transfers (`#/transfers`): the caller's imports, exports and conversions, newest first, with
// a status filter and paging (GET /api/conversion/transfer/list). Each row on the page is read
// in full (GET /api/conversion/transfer/{id}) for its progress, error and results; while any is
// Pending or InProgress the page polls every 1.5 s and updates rows in place (otherwise every
// 10 s, for transfers started elsewhere), and stops when the person leaves. `?projectId=`
// narrows the list to one project's transfers.
// Also the small shared pieces other pages use to show one transfer: statusBadge, describe,
// resultLinks and watchTransfer.

import { api, offsetPage } from './api.js';
import { button, describeError, errorBox, formatTime, h, loading, pageHeader, replace, timeElement, toast } from './dom.js';
import { href, navigate } from './router.js';

const PAGE_SIZE = 20;
const POLL_MS = 1500;
const IDLE_POLL_MS = 10000;
const STATUSES = [
  { value: '', label: 'Any status' },
  { value: 'Pending', label: 'Pending' },
  { value: 'InProgress', label: 'In progress' },
  { value: 'Completed', label: 'Completed' },
  { value: 'Error', label: 'Failed' },
];
const STATUS_LABEL = { Pending: 'Pending', InProgress: 'In progress', Completed: 'Completed', Error: 'Failed' };
const STATUS_KIND = { Pending: 'info', InProgress: 'warning', Completed: 'success', Error: 'danger' };

/** Whether a transfer may still change. */
export function isActive(status) {
  return status === 'Pending' || status === 'InProgress';
}

/** A status badge; a transfer that ended in Error because it was cancelled says so. */
export function statusBadge(status, errorMessage) {
  if (status === 'Error' && /^Cancelled\b/.test(errorMessage || '')) {
    return h('span', { class: ['badge', 'badge-warning'] }, 'Cancelled');
  }
  return h('span', { class: ['badge', `badge-${STATUS_KIND[status] || 'info'}`] }, STATUS_LABEL[status] || status || 'Unknown');
}

/** One line saying what a transfer does: "depth.asc → depth · AsciiGridReader → GeoTiffWriter". */
export function describe(record) {
  const imp = record.importParameters || {};
  const exp = record.exportParameters || {};
  const name = record.datasetImportData?.name;
  let what;
  switch (record.type) {
    case 'Import':
      what = `${imp.fileName || 'an upload'} → ${name || 'new dataset'}`;
      break;
    case 'Export':
      what = exp.outputFileName ? `Export as ${exp.outputFileName}` : `Export${record.format ? ` as ${record.format}` : ''}`;
      break;
    case 'Conversion':
      what = `Conversion → ${name || 'new dataset'}`;
      break;
    case 'Append':
      what = `Append ${imp.fileName || ''}`.trim();
      break;
    case 'Update':
      what = `Update${imp.fileName ? ` from ${imp.fileName}` : ''}`;
      break;
    default:
      what = record.type || 'Transfer';
  }
  const chain = [imp.readerName, exp.writerName].filter(Boolean).join(' → ');
  return { what, chain };
}

/** Links to what a transfer made or read: new datasets, the export's file, the source. */
export function resultLinks(record) {
  const links = [];
  for (const result of record.importResults || []) {
    if (result.datasetId) {
      const name = record.datasetImportData?.name;
      links.push(h('a', { href: `#/datasets/${result.datasetId}`, class: 'transfer-result' }, name ? `Open ${name}` : 'Open the new dataset'));
    }
  }
  if (record.status === 'Completed' && record.downloadPath) {
    const fileName = record.exportParameters?.outputFileName || 'export';
    links.push(h('a', {
      href: record.downloadPath, download: fileName, class: ['button', 'button-small', 'transfer-download'],
    }, `Download ${fileName}`));
  }
  const source = record.exportParameters?.datasetId || record.importParameters?.appendDatasetId;
  if (source && !(record.importResults || []).some((r) => r.datasetId === source)) {
    links.push(h('a', { href: `#/datasets/${source}`, class: 'transfer-source' }, record.type === 'Export' || record.type === 'Conversion' ? 'Source dataset' : 'Dataset'));
  }
  return links;
}

/** A progress element for a running transfer (indeterminate while pending). */
export function progressBar(record, label) {
  const attrs = { max: 100, class: 'transfer-progress', 'aria-label': label || 'Transfer progress' };
  if (record.status !== 'Pending') attrs.value = Math.max(0, Math.min(100, Number(record.progress) || 0));
  return h('progress', attrs);
}

/**
 * Polls one transfer every `interval` ms until it ends; `onUpdate(record)` gets each read.
 * Returns a stop function. A read that fails is retried (Basin may be restarting) up to
 * `maxFailures` times in a row, then `onError(error)`.
 */
export function watchTransfer(id, onUpdate, { interval = 1000, onError, maxFailures = 10 } = {}) {
  let stopped = false;
  let timer = null;
  let failures = 0;
  const controller = new AbortController();
  async function tick() {
    if (stopped) return;
    try {
      const record = await api('GET', `/api/conversion/transfer/${id}`, { signal: controller.signal });
      failures = 0;
      if (stopped) return;
      onUpdate(record);
      if (isActive(record.status)) timer = setTimeout(tick, interval);
    } catch (error) {
      if (stopped || error.name === 'AbortError') return;
      failures += 1;
      if (failures >= maxFailures || (error.status && error.status !== 503 && error.status < 500)) {
        if (onError) onError(error);
        return;
      }
      timer = setTimeout(tick, interval * 2);
    }
  }
  tick();
  return () => {
    stopped = true;
    clearTimeout(timer);
    controller.abort();
  };
}

/** Cancels a transfer after asking nothing (callers confirm); resolves with the record. */
export function cancelTransfer(id) {
  return api('POST', `/api/conversion/transfer/${id}/cancel`);
}

export function register(route) {
  route('/transfers', transfersPage);
}

function transfersPage(main, _params, query, { principal } = {}) {
  const status = STATUSES.some((s) => s.value === query.status) ? query.status : '';
  const offset = Math.max(0, Number.parseInt(query.offset, 10) || 0);
  const projectId = query.projectId || '';
  const controller = new AbortController();
  const details = new Map();
  const rows = new Map();
  let timer = null;
  let left = false;
  let lastAnnounced = '';

  const statusSelect = h('select', { id: 'transfers-status', name: 'status' },
    STATUSES.map((s) => h('option', { value: s.value, selected: s.value === status }, s.label)));
  statusSelect.addEventListener('change', () => navigate('/transfers', { status: statusSelect.value, projectId }));
  const refreshButton = button('Refresh', () => refresh(true), { kind: 'quiet' });
  const live = h('p', { class: 'transfers-live hint', role: 'status', 'aria-live': 'polite' });
  const body = h('div', { class: 'transfers-body' }, loading('Loading transfers…'));
  const tbody = h('tbody');
  const pager = h('nav', { class: 'pager', 'aria-label': 'Transfer pages' });

  main.append(
    pageHeader('Transfers', {
      sub: h('p', { class: 'hint' }, 'Imports, conversions and exports. Results are published when a transfer completes; export files are kept for 72 hours.'),
      actions: [refreshButton],
    }),
    h('div', { class: ['toolbar', 'transfers-toolbar'] },
      h('div', { class: ['field', 'transfers-filter'] }, h('label', { for: 'transfers-status' }, 'Status'), statusSelect),
      projectId ? h('p', { class: 'notice transfers-project' }, 'Only the transfers of one project. ',
        h('a', { href: href('/transfers', { status }) }, 'Show all')) : null,
      h('span', { class: 'grow' }),
      live),
    body);

  function cells(record, summary) {
    const rec = record || summary;
    const { what, chain } = record ? describe(record) : { what: summary.type, chain: '' };
    const statusBox = h('div', { class: 'cell' }, statusBadge(rec.status, record?.errorMessage));
    const statusCell = h('td', { class: 'transfer-status' }, statusBox);
    if (record && isActive(record.status)) {
      statusBox.append(h('div', { class: 'transfer-progress-row' },
        progressBar(record, `Progress of ${what}`),
        h('span', { class: 'hint' }, record.status === 'Pending' ? 'Queued' : `${record.progress || 0}%`)));
    }
    if (record?.errorMessage) {
      statusBox.append(h('p', { class: 'transfer-error' }, record.errorMessage));
    }
    const actions = h('td', { class: 'transfer-actions' });
    const cancellable = record && isActive(record.status) && canCancel(record);
    if (!cancellable) actions.classList.add('transfer-empty');
    if (cancellable) {
      actions.append(h('button', {
        type: 'button', class: ['button', 'button-small'], 'aria-label': `Cancel ${what}`,
        'data-focus': `cancel-${record.id}`, onclick: () => cancel(record, what),
      }, 'Cancel'));
    }
    statusCell.dataset.label = 'Status';
    const results = record ? resultLinks(record) : [];
    return [
      h('td', { class: 'transfer-when', dataset: { label: 'Started' } }, h('div', { class: 'cell' }, timeElement(rec.createdAt))),
      h('td', { class: 'transfer-kind', dataset: { label: 'Type' } }, h('div', { class: 'cell' }, h('span', { class: 'transfer-type' }, rec.type || ''), rec.format ? h('span', { class: ['hint', 'transfer-format'] }, ` ${rec.format}`) : null)),
      h('td', { class: 'transfer-what', dataset: { label: 'What' } }, h('div', { class: 'cell' }, h('span', { class: 'transfer-name' }, what), chain ? h('span', { class: ['hint', 'transfer-chain'] }, chain) : null)),
      statusCell,
      h('td', { class: ['transfer-results', results.length ? null : 'transfer-empty'], dataset: { label: 'Result' } }, h('div', { class: 'cell' }, results)),
      actions,
    ];
  }

  function canCancel(record) {
    return !principal || record.createdBy === principal.id || ['admin', 'owner'].includes(String(principal.role || '').toLowerCase());
  }

  async function cancel(record, what) {
    try {
      const updated = await cancelTransfer(record.id);
      details.set(record.id, updated);
      toast(`Cancelled: ${what}`, 'info');
    } catch (error) {
      toast(describeError(error), 'error');
    }
    refresh(true);
  }

  function renderRow(summary) {
    const record = details.get(summary.id);
    const key = JSON.stringify(record || summary);
    let row = rows.get(summary.id);
    if (row && row.dataset.key === key) return row;
    const focused = row && row.contains(document.activeElement) ? document.activeElement.getAttribute('data-focus') : null;
    const fresh = h('tr', { dataset: { id: summary.id, status: (record || summary).status } }, cells(record, summary));
    fresh.dataset.key = key;
    if (row) row.replaceWith(fresh);
    rows.set(summary.id, fresh);
    if (focused) {
      const again = fresh.querySelector(`[data-focus="${focused}"]`);
      if (again) again.focus(); else refreshButton.focus();
    }
    return fresh;
  }

  function renderPager(page) {
    const total = page.totalCount || 0;
    const first = total ? page.offset + 1 : 0;
    const last = Math.min(page.offset + (page.data || []).length, total);
    replace(pager,
      h('span', {}, total ? `${first}–${last} of ${total}` : ''),
      page.offset > 0 ? h('a', { class: ['button', 'button-small'], href: href('/transfers', { status, projectId, offset: Math.max(0, page.offset - PAGE_SIZE) || undefined }) }, 'Previous') : null,
      last < total ? h('a', { class: ['button', 'button-small'], href: href('/transfers', { status, projectId, offset: page.offset + PAGE_SIZE }) }, 'Next') : null);
  }

  let running = null;
  async function refresh(manual = false) {
    clearTimeout(timer);
    if (left) return;
    // One read at a time: a click during a poll waits for it, then reads again.
    if (running) {
      await running;
      if (left) return;
    }
    running = read(manual);
    try { await running; } finally { running = null; }
  }

  async function read(manual) {
    let page;
    try {
      page = await offsetPage('/api/conversion/transfer/list', {
        query: { status: status || undefined, projectId: projectId || undefined }, offset, limit: PAGE_SIZE, signal: controller.signal,
      });
    } catch (error) {
      if (error.name === 'AbortError' || left) return;
      if (!rows.size) body.replaceChildren(errorBox(error, () => refresh(true)));
      else live.textContent = `Could not refresh: ${describeError(error)}`;
      timer = setTimeout(refresh, POLL_MS * 4);
      return;
    }
    if (left) return;
    const summaries = page.data || [];
    // Read every row that may have changed: new ones and those not ended when last read.
    await Promise.all(summaries.map(async (summary) => {
      const known = details.get(summary.id);
      if (known && !isActive(known.status) && known.status === summary.status) return;
      try {
        details.set(summary.id, await api('GET', `/api/conversion/transfer/${summary.id}`, { signal: controller.signal }));
      } catch (error) {
        if (error.name !== 'AbortError' && error.status === 404) details.delete(summary.id);
      }
    }));
    if (left) return;
    if (!summaries.length) {
      rows.clear();
      body.replaceChildren(h('p', { class: 'empty' }, status || projectId
        ? 'No transfers match.'
        : 'No transfers yet. Upload files on a project page, or convert or export a dataset.'));
    } else {
      if (!body.contains(tbody)) {
        body.replaceChildren(
          h('div', { class: 'table-wrap' }, h('table', { class: 'transfers-table' },
            h('caption', { class: 'visually-hidden' }, 'Transfers, newest first'),
            h('thead', {}, h('tr', {},
              h('th', { scope: 'col' }, 'Started'), h('th', { scope: 'col' }, 'Type'), h('th', { scope: 'col' }, 'What'),
              h('th', { scope: 'col' }, 'Status'), h('th', { scope: 'col' }, 'Result'), h('th', { scope: 'col' }, h('span', { class: 'visually-hidden' }, 'Actions')))),
            tbody)),
          pager);
      }
      const wanted = new Set(summaries.map((s) => s.id));
      for (const [id, row] of rows) {
        if (!wanted.has(id)) { row.remove(); rows.delete(id); }
      }
      summaries.forEach((summary, index) => {
        const row = renderRow(summary);
        if (tbody.children[index] !== row) tbody.insertBefore(row, tbody.children[index] || null);
      });
      renderPager(page);
    }
    const active = summaries.filter((s) => isActive(details.get(s.id)?.status || s.status)).length;
    const message = active ? `${active} ${active === 1 ? 'transfer is' : 'transfers are'} running; this list updates by itself.` : (manual ? `Updated ${formatTime(new Date(), { seconds: true })}.` : '');
    if (message !== lastAnnounced) {
      live.textContent = message;
      lastAnnounced = message;
    }
    // Fast while something runs; slowly otherwise, to show transfers started elsewhere.
    timer = setTimeout(refresh, active ? POLL_MS : IDLE_POLL_MS);
  }

  refresh();
  return () => {
    left = true;
    clearTimeout(timer);
    controller.abort();
  };
}
