// BackOffice: credits (docs/credits.md, API version 4). Balances of the unassigned pool and of
// every tenant; adding credits (to a tenant or the pool) and moving them between pools; a
// pool's lots and its journal, page by page.
//
// Amounts are sent as the digits typed (a JSON string), which the API reads exactly: no binary
// floating point touches them on the way in.

import { api } from './api.js';
import { button, debounce, dialog, errorBox, h, pageHeader, replace, timeElement, toast, uid } from './dom.js';
import { setQuery } from './router.js';
import {
  FieldSet, backOfficeOnly, cursorPager, eitherSignal, formatCredits, loadTenants, parseAmount, shortId,
  tenantName, tenantSelect, utcToday,
} from './admin-common.js';

const V = 4;
const STATUSES = ['Available', 'Reserved', 'Spent', 'Expired'];
const JOURNAL_PAGE = 50;
const LOTS_PAGE = 50;
const BALANCES_PAGE = 50;
const UNASSIGNED = 'unassigned';

function balancePath(pool) {
  return pool === UNASSIGNED ? '/api/iam/credit/unassigned' : `/api/iam/credit/${encodeURIComponent(pool)}`;
}

function amounts(statuses) {
  const byName = Object.fromEntries((statuses || []).map((s) => [s.status, s.credits]));
  return STATUSES.map((s) => byName[s] ?? 0);
}

function referenceText(ref) {
  if (!ref) return '';
  return [ref.billingReference, ref.billingReferenceTag, ref.billingReferenceType].filter(Boolean).join(' · ');
}

/** A lot's last day of use (a UTC day) in the console's date format. */
function lastDay(value) {
  return value ? timeElement(String(value).slice(0, 10), { dateOnly: true }) : '';
}

/** Runs `work` over `items`, `limit` at a time. */
async function eachLimited(items, limit, work) {
  let next = 0;
  const runners = Array.from({ length: Math.min(limit, items.length) }, async () => {
    while (next < items.length) {
      const i = next;
      next += 1;
      await work(items[i], i);
    }
  });
  await Promise.all(runners);
}

/** The add-credits dialog; resolves with the answer or null. */
async function addDialog(tenants, pool) {
  const fields = new FieldSet();
  const target = tenantSelect(tenants, { pool: true, value: pool === UNASSIGNED ? null : pool, name: 'tenantId' });
  if (!pool || pool === UNASSIGNED) target.value = '';
  const amount = h('input', { type: 'text', name: 'credits', inputmode: 'decimal', autocomplete: 'off', placeholder: '100' });
  const reference = h('input', { type: 'text', name: 'billingReference', autocomplete: 'off', maxlength: 255 });
  const tag = h('input', { type: 'text', name: 'billingReferenceTag', autocomplete: 'off', maxlength: 255 });
  const type = h('input', { type: 'text', name: 'billingReferenceType', autocomplete: 'off', maxlength: 255 });
  const salesOrder = h('input', { type: 'text', name: 'salesOrderId', autocomplete: 'off', maxlength: 255 });
  const expires = h('input', { type: 'date', name: 'expiresAt', min: utcToday() });
  let answer = null;
  const chosen = await dialog({
    title: 'Add credits',
    body: [
      fields.add('tenantId', 'To', target, { hint: 'A tenant’s pool, or the unassigned pool to move from later.' }),
      fields.add('credits', 'Credits', amount, { required: true, hint: 'Above 0, at most 1,000,000,000, up to 6 decimal places.' }),
      h('fieldset', { class: 'admin-fieldset' }, h('legend', {}, 'Billing reference'),
        fields.add('billingReference', 'Reference', reference, { required: true }),
        h('div', { class: 'admin-two' },
          fields.add('billingReferenceTag', 'Tag', tag),
          fields.add('billingReferenceType', 'Type', type, { hint: 'For example EXT.' }))),
      h('div', { class: 'admin-two' },
        fields.add('salesOrderId', 'Sales order', salesOrder, { hint: 'Optional. The same order again adds nothing.' }),
        fields.add('expiresAt', 'Last day of use (UTC)', expires, { required: true })),
      fields.general,
    ],
    actions: [{ label: 'Cancel', value: null }, { label: 'Add credits', value: 'add', kind: 'primary' }],
    async onSubmit() {
      fields.clear();
      const credits = parseAmount(amount.value);
      let bad = false;
      if (!credits) { fields.set('credits', 'Enter an amount above 0 with at most 6 decimal places, e.g. 250 or 12.5.'); bad = true; }
      if (!reference.value.trim()) { fields.set('billingReference', 'Enter the billing reference.'); bad = true; }
      if (!expires.value) { fields.set('expiresAt', 'Choose the last day the credits may be used.'); bad = true; }
      if (bad) {
        fields.general.hidden = true;
        fields.fields.get(credits ? (reference.value.trim() ? 'expiresAt' : 'billingReference') : 'credits').input.focus();
        return false;
      }
      const body = {
        credits,
        billingReference: {
          billingReference: reference.value.trim(),
          ...(tag.value.trim() ? { billingReferenceTag: tag.value.trim() } : {}),
          ...(type.value.trim() ? { billingReferenceType: type.value.trim() } : {}),
        },
        expiresAt: expires.value,
        ...(salesOrder.value.trim() ? { salesOrderId: salesOrder.value.trim() } : {}),
        ...(target.value ? { tenantId: target.value } : {}),
      };
      try {
        answer = await api('POST', '/api/iam/credit', { body, version: V });
      } catch (failure) {
        fields.show(failure);
        return false;
      }
      return true;
    },
  });
  return chosen ? answer : null;
}

/** The move dialog; resolves with the answer or null. */
async function moveDialog(tenants, pool) {
  const fields = new FieldSet();
  const source = tenantSelect(tenants, { pool: true, name: 'sourceTenantId' });
  source.value = pool && pool !== UNASSIGNED ? pool : '';
  const target = tenantSelect(tenants, { pool: true, name: 'targetTenantId' });
  target.value = source.value ? '' : (tenants[0]?.id || '');
  const amount = h('input', { type: 'text', name: 'credits', inputmode: 'decimal', autocomplete: 'off' });
  const reference = h('select', { name: 'billingReference' }, h('option', { value: '' }, 'Any billing reference'));
  const available = h('p', { class: ['hint', 'admin-under'], 'aria-live': 'polite' });
  let references = [];
  let readings = 0;
  async function loadReferences() {
    readings += 1;
    const mine = readings;
    replace(reference, h('option', { value: '' }, 'Any billing reference'));
    references = [];
    available.textContent = 'Reading the source’s lots…';
    try {
      const path = source.value ? '/api/iam/credit/details' : '/api/iam/credit/unassigned/details';
      const page = await api('POST', path, {
        body: source.value ? { tenantId: source.value } : undefined,
        query: { filter: 'Available', limit: 1000 }, version: V,
      });
      if (mine !== readings) return; // another source was chosen meanwhile
      const seen = new Map();
      let total = 0;
      for (const lot of page?.data || []) {
        const credits = amounts(lot.statuses)[0];
        total += credits;
        const key = JSON.stringify(lot.billingReference || {});
        seen.set(key, (seen.get(key) || 0) + credits);
      }
      references = [...seen.entries()].map(([key, credits]) => ({ ref: JSON.parse(key), credits }));
      references.forEach((r, i) => reference.append(h('option', { value: String(i) }, `${referenceText(r.ref)} (${formatCredits(r.credits)} available)`)));
      available.textContent = `${formatCredits(total)} credits available in ${source.value ? tenantName(tenants, source.value) : 'the unassigned pool'}.`;
    } catch {
      if (mine === readings) available.textContent = '';
    }
  }
  source.addEventListener('change', loadReferences);
  loadReferences();
  // One key per intended move: a retry of the same move (after a lost answer) moves nothing.
  let key = crypto.randomUUID();
  let lastBody = null;
  let answer = null;
  const chosen = await dialog({
    title: 'Move credits',
    body: [
      fields.add('sourceTenantId', 'From', source),
      available,
      fields.add('targetTenantId', 'To', target),
      fields.add('credits', 'Credits', amount, { required: true, hint: 'Taken from available credits, earliest expiry first; they keep their billing reference and expiry date.' }),
      fields.add('billingReference', 'Only of billing reference', reference, { hint: 'Between two tenants, only credits of a reference the target holds too can move.' }),
      fields.general,
    ],
    actions: [{ label: 'Cancel', value: null }, { label: 'Move credits', value: 'move', kind: 'primary' }],
    async onSubmit() {
      fields.clear();
      const credits = parseAmount(amount.value);
      if (!credits) {
        fields.set('credits', 'Enter an amount above 0 with at most 6 decimal places.');
        amount.focus();
        return false;
      }
      if (source.value === target.value) {
        fields.set('targetTenantId', 'Choose a pool other than the source.');
        target.focus();
        return false;
      }
      const ref = reference.value === '' ? null : references[Number(reference.value)]?.ref;
      const body = {
        credits,
        ...(source.value ? { sourceTenantId: source.value } : {}),
        ...(target.value ? { targetTenantId: target.value } : {}),
        ...(ref ? { billingReference: ref } : {}),
      };
      const text = JSON.stringify(body);
      if (lastBody !== null && lastBody !== text) key = crypto.randomUUID();
      lastBody = text;
      try {
        answer = await api('PUT', '/api/iam/credit/move', { body, version: V, headers: { 'Idempotency-Key': key } });
      } catch (failure) {
        fields.show(failure);
        return false;
      }
      return true;
    },
  });
  return chosen ? answer : null;
}

export async function creditsPage(main, _params, query, { principal }) {
  if (!backOfficeOnly(main, principal)) return undefined;
  const controller = new AbortController();
  const signal = controller.signal;
  const tenants = await loadTenants(signal);
  const state = {
    pool: query.pool === UNASSIGNED || tenants.some((t) => t.id === query.pool) ? query.pool : UNASSIGNED,
    order: query.order === 'Asc' ? 'Asc' : 'Desc',
  };

  // ---- balances ----
  const balances = h('div', { 'aria-busy': 'false' });
  // Balances are read per pool: the table shows the pools of the tenants that match the
  // filter, BALANCES_PAGE at a time.
  const tenantFilter = h('input', { type: 'search', id: uid('tenant-filter'), autocomplete: 'off', placeholder: 'Name or id' });
  const balancesStatus = h('p', { class: 'hint', 'aria-live': 'polite' });
  let shownTenants = BALANCES_PAGE;
  const moreTenants = button('Show more tenants', () => {
    shownTenants += BALANCES_PAGE;
    loadBalances();
  }, { hidden: true });

  function matchingTenants() {
    const needle = tenantFilter.value.trim().toLowerCase();
    return needle
      ? tenants.filter((t) => t.name.toLowerCase().includes(needle) || String(t.id).toLowerCase().startsWith(needle))
      : tenants;
  }

  async function loadBalances() {
    balances.setAttribute('aria-busy', 'true');
    const matching = matchingTenants();
    const pools = [
      ...(tenantFilter.value.trim() ? [] : [{ id: UNASSIGNED, name: 'Unassigned pool' }]),
      ...matching.slice(0, shownTenants).map((t) => ({ id: t.id, name: t.name })),
    ];
    moreTenants.hidden = matching.length <= shownTenants;
    balancesStatus.textContent = tenantFilter.value.trim()
      ? `${matching.length} tenant${matching.length === 1 ? '' : 's'} match.`
      : `${tenants.length} tenant${tenants.length === 1 ? '' : 's'}${tenants.length > shownTenants ? `, the first ${shownTenants} shown` : ''}.`;
    const cells = new Map();
    const rows = pools.map((pool) => {
      const numbers = STATUSES.map(() => h('td', { class: 'num' }, '…'));
      cells.set(pool.id, numbers);
      const selected = pool.id === state.pool;
      return h('tr', { class: selected ? 'admin-selected' : null, dataset: { pool: pool.id } },
        h('th', { scope: 'row' }, pool.name, pool.id !== UNASSIGNED ? [' ', shortId(pool.id)] : null),
        numbers,
        h('td', { class: 'admin-actions' },
          button('Ledger', () => selectPool(pool.id), { kind: 'small', ariaLabel: `Ledger of ${pool.name}`, 'aria-pressed': selected ? 'true' : 'false' })));
    });
    replace(balances, h('div', { class: 'table-wrap' }, h('table', { class: 'admin-table', 'aria-label': 'Credit balances per pool' },
      h('thead', {}, h('tr', {}, h('th', { scope: 'col' }, 'Pool'),
        STATUSES.map((s) => h('th', { scope: 'col', class: 'num' }, s)), h('th', { scope: 'col' }, 'Actions'))),
      h('tbody', {}, rows))));
    await eachLimited(pools, 6, async (pool) => {
      const numbers = cells.get(pool.id);
      try {
        const answer = pool.id === UNASSIGNED
          ? await api('POST', balancePath(UNASSIGNED), { version: V, signal })
          : await api('GET', balancePath(pool.id), { version: V, signal });
        amounts(answer?.statuses).forEach((value, i) => { numbers[i].textContent = formatCredits(value); });
      } catch (failure) {
        if (failure.name === 'AbortError') return;
        numbers.forEach((td) => { td.textContent = '—'; td.title = failure.message; });
      }
    });
    balances.setAttribute('aria-busy', 'false');
  }

  // ---- one pool's lots and journal ----
  const ledgerTitle = h('h2', { id: uid('ledger') }, 'Ledger');
  const lotsArea = h('div', { 'aria-busy': 'false' });
  const journalArea = h('div', { 'aria-busy': 'false' });
  const lotsStatus = h('span', { class: 'pager-status' });
  let lotsOffset = 0;
  const lotsPrev = button('Previous', () => { lotsOffset = Math.max(0, lotsOffset - LOTS_PAGE); loadLots(); }, { disabled: true });
  const lotsNext = button('Next', () => { lotsOffset += LOTS_PAGE; loadLots(); }, { disabled: true });

  const lotsPager = h('nav', { class: 'pager', 'aria-label': 'Lot pages', hidden: true }, lotsStatus, h('span', { class: 'pager-buttons' }, lotsPrev, lotsNext));

  async function loadLots() {
    lotsArea.setAttribute('aria-busy', 'true');
    try {
      const page = state.pool === UNASSIGNED
        ? await api('POST', '/api/iam/credit/unassigned/details', { query: { offset: lotsOffset, limit: LOTS_PAGE }, version: V, signal })
        : await api('POST', '/api/iam/credit/details', { body: { tenantId: state.pool }, query: { offset: lotsOffset, limit: LOTS_PAGE }, version: V, signal });
      const lots = page?.data || [];
      const total = page?.totalCount ?? lots.length;
      lotsStatus.textContent = total ? `Lots ${lotsOffset + 1}–${lotsOffset + lots.length} of ${total}` : '';
      lotsPrev.disabled = lotsOffset === 0;
      lotsNext.disabled = lotsOffset + lots.length >= total;
      lotsPager.hidden = lotsOffset === 0 && lotsNext.disabled;
      replace(lotsArea, lots.length
        ? h('div', { class: 'table-wrap' }, h('table', { class: 'admin-table', 'aria-label': 'Lots' },
          h('thead', {}, h('tr', {},
            ['Billing reference', 'Tag', 'Type', 'Last day'].map((t) => h('th', { scope: 'col' }, t)),
            STATUSES.map((s) => h('th', { scope: 'col', class: 'num' }, s)))),
          h('tbody', {}, lots.map((lot) => h('tr', {},
            h('td', {}, lot.billingReference?.billingReference || ''),
            h('td', {}, lot.billingReference?.billingReferenceTag || ''),
            h('td', {}, lot.billingReference?.billingReferenceType || ''),
            h('td', { class: 'admin-nowrap' }, lastDay(lot.expiresAt), lot.isExpired ? [' ', h('span', { class: 'badge badge-warning' }, 'expired')] : null),
            amounts(lot.statuses).map((v) => h('td', { class: 'num' }, formatCredits(v))))))))
        : h('p', { class: 'empty' }, 'This pool holds no credits.'));
    } catch (failure) {
      if (failure.name !== 'AbortError') replace(lotsArea, errorBox(failure, loadLots));
    } finally {
      lotsArea.setAttribute('aria-busy', 'false');
    }
  }

  function actor(entry) {
    if (!entry.actorId) return h('span', { class: 'hint', title: 'The settle job (expiry, timeout)' }, 'Basin');
    if (String(entry.actorId).toLowerCase() === String(principal.id || '').toLowerCase()) return h('span', { title: entry.actorId }, 'You');
    return shortId(entry.actorId);
  }

  function journalDetail(entry) {
    const parts = [];
    if (entry.salesOrderId) parts.push(h('span', {}, 'Sales order ', h('span', { class: 'mono' }, entry.salesOrderId)));
    if (entry.operationId) parts.push(h('span', {}, 'Operation ', h('span', { class: 'mono' }, entry.operationId)));
    if (entry.counterpart) {
      const other = entry.counterpart === 'Unassigned' ? 'the unassigned pool' : tenantName(tenants, entry.counterpart);
      parts.push(h('span', {}, entry.kind === 'MoveOut' ? 'To ' : 'From ', other));
    }
    return parts.flatMap((p, i) => (i ? [h('br'), p] : [p]));
  }

  async function loadJournal(cursor, pagerSignal) {
    journalArea.setAttribute('aria-busy', 'true');
    try {
      const path = state.pool === UNASSIGNED ? '/api/iam/credit/unassigned/journal' : `/api/iam/credit/${encodeURIComponent(state.pool)}/journal`;
      const page = await api('GET', path, { query: { cursor, limit: JOURNAL_PAGE, sortOrder: state.order }, version: V, signal: eitherSignal(signal, pagerSignal) });
      const entries = page?.data || [];
      const delta = (v) => h('td', { class: ['num', Number(v) < 0 ? 'admin-negative' : null] }, Number(v) ? formatCredits(v, { signed: true }) : '');
      replace(journalArea, entries.length
        ? h('div', { class: 'table-wrap' }, h('table', { class: ['admin-table', 'admin-journal'], 'aria-label': 'Journal' },
          h('thead', {}, h('tr', {},
            ['#', 'When', 'Change', 'Billing reference', 'Last day'].map((t) => h('th', { scope: 'col' }, t)),
            STATUSES.map((s) => h('th', { scope: 'col', class: 'num' }, s)),
            h('th', { scope: 'col' }, 'Details'), h('th', { scope: 'col', class: 'hide-narrow' }, 'By'))),
          h('tbody', {}, entries.map((e) => h('tr', { dataset: { sequence: String(e.sequence) } },
            h('td', { class: 'num' }, String(e.sequence)),
            h('td', {}, timeElement(e.at, { seconds: true })),
            h('td', {}, h('span', { class: 'badge' }, e.kind)),
            h('td', {}, referenceText(e.billingReference)),
            h('td', { class: 'admin-nowrap' }, lastDay(e.expiresAt)),
            delta(e.available), delta(e.reserved), delta(e.spent), delta(e.expired),
            h('td', {}, journalDetail(e)),
            h('td', { class: 'hide-narrow' }, actor(e)))))))
        : h('p', { class: 'empty' }, cursor ? 'No more entries.' : 'No journal entries yet.'));
      return page?.cursor || null;
    } catch (failure) {
      if (failure.name !== 'AbortError') replace(journalArea, errorBox(failure, () => journalPager.reload()));
      return null;
    } finally {
      journalArea.setAttribute('aria-busy', 'false');
    }
  }
  const journalPager = cursorPager(loadJournal, { label: 'Journal pages' });
  const order = h('select', { id: uid('order') },
    h('option', { value: 'Desc', selected: state.order === 'Desc' }, 'Newest first'),
    h('option', { value: 'Asc', selected: state.order === 'Asc' }, 'Oldest first'));
  order.addEventListener('change', () => {
    state.order = order.value;
    setQuery({ pool: state.pool, order: state.order });
    journalPager.reset();
  });

  function loadLedger() {
    ledgerTitle.textContent = `Ledger of ${state.pool === UNASSIGNED ? 'the unassigned pool' : tenantName(tenants, state.pool)}`;
    lotsOffset = 0;
    return Promise.all([loadLots(), journalPager.reset()]);
  }

  function selectPool(pool) {
    state.pool = pool;
    setQuery({ pool, order: state.order });
    for (const tr of balances.querySelectorAll('tr[data-pool]')) {
      const on = tr.dataset.pool === pool;
      tr.classList.toggle('admin-selected', on);
      tr.querySelector('button')?.setAttribute('aria-pressed', on ? 'true' : 'false');
    }
    loadLedger().then(() => ledgerTitle.scrollIntoView({ block: 'start' }));
  }

  tenantFilter.addEventListener('input', debounce(() => {
    shownTenants = BALANCES_PAGE;
    loadBalances();
  }, 250));

  /** After credits were added or moved: the balances, and the ledger of `pool` (the pool the
   *  credits went to, so that its new lot and journal entry show) or of the pool shown. */
  async function afterChange(pool) {
    if (pool !== undefined && pool !== state.pool) {
      state.pool = pool;
      setQuery({ pool, order: state.order });
    }
    await Promise.all([loadBalances(), loadLedger()]);
  }

  main.append(
    pageHeader('Credits', {
      sub: h('p', { class: 'hint' }, 'Credits of every tenant and of the unassigned pool. Credits are added to a pool and moved between pools; tenants reserve and spend them through the API.'),
      actions: [
        button('Add credits', async () => {
          const added = await addDialog(tenants, state.pool);
          if (added) {
            toast(`${formatCredits(added.credits)} credits added to ${tenantName(tenants, added.tenantId)}.`, 'success');
            afterChange(added.tenantId || UNASSIGNED);
          }
        }, { kind: 'primary' }),
        button('Move credits', async () => {
          const moved = await moveDialog(tenants, state.pool);
          if (moved) {
            toast(`${formatCredits(moved.credits)} credits moved from ${tenantName(tenants, moved.sourceTenantId)} to ${tenantName(tenants, moved.targetTenantId)}.`, 'success');
            // The ledger shown stays when the move touched it; else the source's shows.
            const touched = [moved.sourceTenantId || UNASSIGNED, moved.targetTenantId || UNASSIGNED];
            afterChange(touched.includes(state.pool) ? state.pool : touched[0]);
          }
        }),
      ],
    }),
    h('section', { 'aria-labelledby': 'balances-title' },
      h('h2', { id: 'balances-title' }, 'Balances'),
      tenants.length > 10
        ? h('form', { class: ['inline-form', 'admin-filters'], role: 'search', 'aria-label': 'Find tenants', onsubmit: (e) => e.preventDefault() },
          h('div', { class: 'field' }, h('label', { for: tenantFilter.id }, 'Find a tenant'), tenantFilter))
        : null,
      balances, h('div', { class: 'toolbar' }, moreTenants, balancesStatus)),
    h('section', { 'aria-labelledby': ledgerTitle.id, class: 'admin-ledger' },
      ledgerTitle,
      h('h3', {}, 'Lots'),
      h('p', { class: 'hint' }, 'One lot per billing reference and last day of use.'),
      lotsArea,
      lotsPager,
      h('div', { class: 'admin-journal-head' },
        h('h3', {}, 'Journal'),
        h('div', { class: 'field' }, h('label', { for: order.id }, 'Order'), order)),
      h('p', { class: 'hint' }, 'Every change, append-only. Amounts are signed changes per status.'),
      journalArea, journalPager.el));
  await Promise.all([loadBalances(), loadLedger()]);
  return () => controller.abort();
}
