// BackOffice: the feature catalogue and tenant licenses (docs/features.md, "Tenant feature
// availability"). Features are added, changed and removed; a feature's licenses are granted,
// switched and revoked per tenant; a tenant's licensed features are listed.

import { allPages, api } from './api.js';
import {
  button, confirmDialog, describeError, dialog, errorBox, h, loading, pageHeader, replace,
  timeElement, toast, uid,
} from './dom.js';
import { setQuery } from './router.js';
import {
  FieldSet, backOfficeOnly, cursorPager, eitherSignal, loadTenants, shortId, tenantName, tenantSelect,
} from './admin-common.js';

const FEATURE_TYPES = ['Service', 'Application'];
const PAGE = 50;

function featurePath(id) {
  return `/api/admin/features/${encodeURIComponent(id)}`;
}

/** The add/edit dialog of a feature; resolves with the saved feature or null. */
async function featureDialog(existing) {
  const fields = new FieldSet();
  const id = h('input', { type: 'text', name: 'id', autocomplete: 'off', spellcheck: 'false', value: existing?.id || '', disabled: Boolean(existing) });
  const name = h('input', { type: 'text', name: 'name', autocomplete: 'off', value: existing?.name || '' });
  const type = h('select', { name: 'type' }, FEATURE_TYPES.map((t) => h('option', { value: t, selected: existing?.type === t }, t)));
  const url = h('input', { type: 'url', name: 'url', autocomplete: 'off', spellcheck: 'false', value: existing?.url || '', placeholder: 'https://app.example.com/' });
  const responseUrl = h('input', { type: 'url', name: 'responseUrl', autocomplete: 'off', spellcheck: 'false', value: existing?.responseUrl || '', placeholder: 'https://app.example.com/auth/callback' });
  let saved = null;
  const result = await dialog({
    title: existing ? `Edit feature ${existing.id}` : 'Add a feature',
    body: [
      fields.add('id', 'Id', id, { hint: existing ? 'The id cannot change.' : 'Optional: a name such as my-app, or empty for a new uuid. Case matters; at most 128 characters, no spaces.' }),
      fields.add('name', 'Name', name, { required: true }),
      fields.add('type', 'Type', type),
      fields.add('url', 'Application address', url, { required: true, hint: 'Absolute https or http URL.' }),
      fields.add('responseUrl', 'Authentication callback', responseUrl, { required: true, hint: 'Absolute https or http URL.' }),
      fields.general,
    ],
    actions: [{ label: 'Cancel', value: null }, { label: existing ? 'Save' : 'Add feature', value: 'save', kind: 'primary' }],
    async onSubmit() {
      fields.clear();
      const payload = { name: name.value.trim(), url: url.value.trim(), responseUrl: responseUrl.value.trim(), type: type.value };
      if (!existing && id.value.trim()) payload.id = id.value.trim();
      try {
        saved = existing
          ? await api('PUT', featurePath(existing.id), { body: payload })
          : await api('POST', '/api/admin/features', { body: payload });
      } catch (failure) {
        if (failure?.problem && !failure.problem.errors && /^featureId|^id/.test(failure.problem.detail || '')) {
          fields.set('id', failure.problem.detail);
        } else if (failure?.status === 409) {
          fields.set('id', failure.problem?.detail || 'This id is in use.');
        } else {
          fields.show(failure);
        }
        return false;
      }
      return true;
    },
  });
  return result ? saved : null;
}

export async function featuresPage(main, _params, query, { principal }) {
  if (!backOfficeOnly(main, principal)) return undefined;
  const controller = new AbortController();
  const signal = controller.signal;
  const state = { type: FEATURE_TYPES.includes(query.type) ? query.type : '', feature: query.feature || '' };
  const tenants = await loadTenants(signal);

  // ---- catalogue ----
  const typeFilter = h('select', { id: uid('type-filter') },
    h('option', { value: '' }, 'All types'),
    FEATURE_TYPES.map((t) => h('option', { value: t, selected: t === state.type }, t)));
  const catalogue = h('div', { 'aria-busy': 'false' });
  let shown = [];

  function featureRow(feature) {
    const selected = feature.id === state.feature;
    return h('tr', { class: selected ? 'admin-selected' : null, dataset: { featureId: feature.id } },
      h('td', {}, h('span', { class: ['mono', 'admin-id'] }, feature.id)),
      h('td', {}, feature.name),
      h('td', {}, h('span', { class: 'badge' }, feature.type)),
      h('td', { class: ['admin-url', 'hide-narrow'] }, h('span', { class: 'mono' }, feature.url)),
      h('td', { class: ['admin-url', 'hide-narrow'] }, h('span', { class: 'mono' }, feature.responseUrl)),
      h('td', { class: 'hide-narrow' }, timeElement(feature.updatedAt)),
      h('td', { class: 'admin-actions' },
        button('Licenses', () => selectFeature(feature.id), { kind: 'small', ariaLabel: `Licenses of ${feature.name}`, 'aria-pressed': selected ? 'true' : 'false' }),
        button('Edit', async () => {
          const saved = await featureDialog(feature);
          if (saved) { toast('Feature saved.', 'success'); pager.reload(); }
        }, { kind: 'small', ariaLabel: `Edit ${feature.name}` }),
        button('Delete', () => removeFeature(feature), { kind: 'small', ariaLabel: `Delete ${feature.name}` })));
  }

  async function loadCatalogue(cursor, pagerSignal) {
    catalogue.setAttribute('aria-busy', 'true');
    try {
      const page = await api('GET', '/api/admin/features', { query: { featureType: state.type, cursor, limit: PAGE }, signal: eitherSignal(signal, pagerSignal) });
      shown = page?.data || [];
      if (!shown.length) {
        replace(catalogue, h('p', { class: 'empty' }, state.type ? `No ${state.type} features.` : 'The catalogue is empty. Add the first feature.'));
      } else {
        replace(catalogue, h('div', { class: 'table-wrap' }, h('table', { class: 'admin-table', 'aria-label': 'Feature catalogue' },
          h('thead', {}, h('tr', {},
            ['Id', 'Name', 'Type'].map((t) => h('th', { scope: 'col' }, t)),
            h('th', { scope: 'col', class: 'hide-narrow' }, 'Address'),
            h('th', { scope: 'col', class: 'hide-narrow' }, 'Callback'),
            h('th', { scope: 'col', class: 'hide-narrow' }, 'Updated'),
            h('th', { scope: 'col' }, 'Actions'))),
          h('tbody', {}, shown.map(featureRow)))));
      }
      return page?.cursor || null;
    } catch (failure) {
      if (failure.name !== 'AbortError') replace(catalogue, errorBox(failure, () => pager.reload()));
      return null;
    } finally {
      catalogue.setAttribute('aria-busy', 'false');
    }
  }
  const pager = cursorPager(loadCatalogue, { label: 'Feature pages' });
  typeFilter.addEventListener('change', () => {
    state.type = typeFilter.value;
    setQuery({ type: state.type || undefined, feature: state.feature || undefined });
    pager.reset();
  });

  async function removeFeature(feature) {
    const ok = await confirmDialog({
      title: 'Delete feature',
      message: `Delete ${feature.name} (${feature.id}) from the catalogue? A feature still licensed to a tenant cannot be deleted: revoke its licenses first.`,
      confirm: 'Delete', danger: true,
    });
    if (!ok) return;
    try {
      await api('DELETE', featurePath(feature.id));
      toast('Feature deleted.', 'success');
      if (state.feature === feature.id) selectFeature('');
      pager.reload();
    } catch (failure) {
      toast(describeError(failure), 'error');
    }
  }

  // ---- licenses of one feature ----
  const licenseTitle = h('h2', { id: uid('licenses') }, 'Licenses');
  const licenseArea = h('div', { 'aria-live': 'polite' });

  function selectFeature(id) {
    state.feature = id;
    setQuery({ type: state.type || undefined, feature: id || undefined });
    for (const tr of catalogue.querySelectorAll('tr[data-feature-id]')) {
      const on = tr.dataset.featureId === id;
      tr.classList.toggle('admin-selected', on);
      tr.querySelector('button')?.setAttribute('aria-pressed', on ? 'true' : 'false');
    }
    loadLicenses().then(() => { if (id) licenseTitle.scrollIntoView({ block: 'start' }); });
  }

  async function loadLicenses() {
    const id = state.feature;
    if (!id) {
      licenseTitle.textContent = 'Licenses';
      replace(licenseArea, h('p', { class: 'hint' }, 'Choose “Licenses” on a feature to see and change which tenants hold it.'));
      return;
    }
    licenseTitle.textContent = `Licenses of ${id}`;
    replace(licenseArea, loading());
    let licenses;
    try {
      licenses = (await api('GET', `${featurePath(id)}/licenses`, { signal }))?.data || [];
    } catch (failure) {
      if (failure.name !== 'AbortError') replace(licenseArea, errorBox(failure, loadLicenses));
      return;
    }
    const held = new Set(licenses.map((l) => String(l.tenantId).toLowerCase()));
    const candidates = tenants.filter((t) => !held.has(String(t.id).toLowerCase()));
    const grantFields = new FieldSet();
    const tenant = tenantSelect(candidates, { name: 'tenantId' });
    const enabled = h('input', { type: 'checkbox', id: uid('enabled'), checked: true });
    const grant = h('form', { class: ['inline-form', 'panel', 'admin-grant'], 'aria-label': `License ${id} to a tenant`, novalidate: true },
      grantFields.add('tenantId', 'Tenant', tenant),
      h('div', { class: 'admin-check' }, enabled, h('label', { for: enabled.id }, 'Switched on for the tenant')),
      h('button', { type: 'submit', class: ['button', 'button-primary'], disabled: !candidates.length }, 'License'),
      grantFields.general);
    grant.addEventListener('submit', async (event) => {
      event.preventDefault();
      if (!tenant.value) return;
      try {
        await api('PUT', `${featurePath(id)}/licenses/${encodeURIComponent(tenant.value)}`, { body: { enabled: enabled.checked } });
        toast(`${id} licensed to ${tenantName(tenants, tenant.value)}.`, 'success');
        licensesChanged();
      } catch (failure) {
        grantFields.show(failure);
      }
    });
    const table = licenses.length
      ? h('div', { class: 'table-wrap' }, h('table', { class: 'admin-table', 'aria-label': `Tenants licensed for ${id}` },
        h('thead', {}, h('tr', {},
          ['Tenant', 'Switch', 'Licensed'].map((t) => h('th', { scope: 'col' }, t)),
          h('th', { scope: 'col', class: 'hide-narrow' }, 'Changed'),
          h('th', { scope: 'col' }, 'Actions'))),
        h('tbody', {}, licenses.map((license) => {
          const name = tenantName(tenants, license.tenantId);
          return h('tr', { dataset: { tenantId: license.tenantId } },
            h('td', {}, name, ' ', shortId(license.tenantId)),
            h('td', {}, h('span', { class: ['badge', license.enabled ? 'badge-success' : null] }, license.enabled ? 'On' : 'Off')),
            h('td', {}, timeElement(license.licensedAt)),
            h('td', { class: 'hide-narrow' }, timeElement(license.updatedAt)),
            h('td', { class: 'admin-actions' },
              button(license.enabled ? 'Switch off' : 'Switch on', async () => {
                try {
                  await api('PUT', `${featurePath(id)}/licenses/${encodeURIComponent(license.tenantId)}`, { body: { enabled: !license.enabled } });
                  toast(`${id} switched ${license.enabled ? 'off' : 'on'} for ${name}.`, 'success');
                  licensesChanged();
                } catch (failure) {
                  toast(describeError(failure), 'error');
                }
              }, { kind: 'small', ariaLabel: `Switch ${license.enabled ? 'off' : 'on'}: ${id} for ${name}` }),
              button('Revoke', async () => {
                const ok = await confirmDialog({ title: 'Revoke license', message: `Revoke ${name}’s license of ${id}?`, confirm: 'Revoke', danger: true });
                if (!ok) return;
                try {
                  await api('DELETE', `${featurePath(id)}/licenses/${encodeURIComponent(license.tenantId)}`);
                  toast('License revoked.', 'success');
                  licensesChanged();
                } catch (failure) {
                  toast(describeError(failure), 'error');
                }
              }, { kind: 'small', ariaLabel: `Revoke ${name}’s license of ${id}` })));
        }))))
      : h('p', { class: 'empty' }, 'No tenant holds this feature.');
    replace(licenseArea, table,
      candidates.length ? grant : h('p', { class: 'hint' }, 'Every tenant holds this feature.'));
  }

  // A license changed: both lists that show licenses read them again (the feature's tenants,
  // and the features of the tenant shown below), so neither is stale until a reload.
  function licensesChanged() {
    return Promise.all([loadLicenses(), loadTenantFeatures()]);
  }

  // ---- features of one tenant ----
  const tenantChoice = tenantSelect(tenants, { name: 'tenant' });
  tenantChoice.id = uid('tenant');
  const tenantArea = h('div', { 'aria-live': 'polite' });
  async function loadTenantFeatures() {
    if (!tenantChoice.value) return;
    replace(tenantArea, loading());
    try {
      const list = (await api('GET', `/api/admin/tenants/${encodeURIComponent(tenantChoice.value)}/features`, { signal }))?.data || [];
      replace(tenantArea, list.length
        ? h('ul', { class: 'admin-tenant-features' }, list.map((f) => h('li', {},
          h('span', { class: 'mono' }, f.featureId || f.id), f.name ? ` ${f.name}` : '', ' ',
          h('span', { class: ['badge', f.enabled ? 'badge-success' : null] }, f.enabled ? 'On' : 'Off'))))
        : h('p', { class: 'empty' }, 'This tenant holds no features.'));
    } catch (failure) {
      if (failure.name !== 'AbortError') replace(tenantArea, errorBox(failure, loadTenantFeatures));
    }
  }
  tenantChoice.addEventListener('change', loadTenantFeatures);

  main.append(
    pageHeader('Features', {
      sub: h('p', { class: 'hint' }, 'The catalogue of features and which tenants hold a license. A tenant’s owner switches a licensed feature on and off.'),
      actions: [button('Add feature', async () => {
        const saved = await featureDialog(null);
        if (saved) {
          toast(`Feature ${saved.id} added.`, 'success');
          await pager.reset();
          selectFeature(saved.id);
        }
      }, { kind: 'primary' })],
    }),
    h('section', { 'aria-labelledby': 'catalogue-title' },
      h('h2', { id: 'catalogue-title' }, 'Catalogue'),
      h('div', { class: 'inline-form admin-filters' },
        h('div', { class: 'field' }, h('label', { for: typeFilter.id }, 'Type'), typeFilter)),
      catalogue, pager.el),
    h('section', { 'aria-labelledby': licenseTitle.id }, licenseTitle, licenseArea),
    h('section', { 'aria-labelledby': 'tenant-features-title' },
      h('h2', { id: 'tenant-features-title' }, 'Features of a tenant'),
      tenants.length
        ? [h('div', { class: 'inline-form admin-filters' }, h('div', { class: 'field' }, h('label', { for: tenantChoice.id }, 'Tenant'), tenantChoice)), tenantArea]
        : h('p', { class: 'empty' }, 'No tenants.')));
  await pager.reset();
  await loadLicenses();
  loadTenantFeatures();
  return () => controller.abort();
}
