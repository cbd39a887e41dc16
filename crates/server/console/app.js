// The console's entry: sign-in, the top bar, navigation and the routes of every page module.
// Page modules never import this file (imports must not form a cycle: assets.rs hashes each
// file after the files it imports); they share api.js, dom.js, router.js and settings.js.

import { ApiError, api, credentials, forgetCredentials, isBackOffice, me, storeCredentials } from './api.js';
import { button, describeError, field, h, replace, toast } from './dom.js';
import { current, navigate, render, route } from './router.js';
import * as projects from './projects.js';
import * as datasets from './dataset.js';
import * as transfers from './transfers.js';
import * as bin from './bin.js';
import * as admin from './admin.js';
import { startBanner } from './banner.js';

const NAV = [
  { path: '/projects', label: 'Projects' },
  { path: '/transfers', label: 'Transfers' },
  { path: '/bin', label: 'Recycle bin' },
];
const BACK_OFFICE_NAV = [
  { path: '/admin/messages', label: 'Messages' },
  { path: '/admin/features', label: 'Features' },
  { path: '/admin/credits', label: 'Credits' },
];

let principal = null;
let tenantName = null;
let stopBanner = null;

function signInPage(main, _params, query) {
  const kind = h('select', { name: 'kind' },
    h('option', { value: 'key' }, 'API key'),
    h('option', { value: 'token' }, 'Bearer token'));
  const secret = h('input', { type: 'password', name: 'secret', autocomplete: 'off', spellcheck: 'false', required: true });
  const error = h('p', { class: 'form-error', role: 'alert', hidden: true });
  const submit = h('button', { type: 'submit', class: ['button', 'button-primary'] }, 'Sign in');
  const form = h('form', { class: 'signin', novalidate: true },
    h('h1', {}, 'Sign in to Basin'),
    query.expired ? h('p', { class: 'notice' }, 'Your session has ended. Sign in again.') : null,
    field('Credential', kind),
    field('Value', secret, { hint: 'Kept in this tab only (session storage) and sent as a header; closing the tab signs you out.' }),
    error,
    submit);
  form.addEventListener('submit', async (event) => {
    event.preventDefault();
    const value = secret.value.trim();
    if (!value) {
      error.textContent = 'Enter an API key or a token.';
      error.hidden = false;
      secret.focus();
      return;
    }
    submit.disabled = true;
    error.hidden = true;
    try {
      await api('GET', '/api/iam/principal/me', { credentials: { kind: kind.value, value } });
      storeCredentials(kind.value, value);
      await start();
      navigate(query.next || '/projects', undefined, { replace: true });
    } catch (failure) {
      error.textContent = failure instanceof ApiError && failure.status === 401
        ? 'Basin does not accept this credential.'
        : describeError(failure);
      error.hidden = false;
      secret.focus();
    } finally {
      submit.disabled = false;
    }
  });
  main.append(h('div', { class: 'signin-wrap' }, form));
  kind.focus();
}

async function accountPage(main) {
  const who = await me();
  const tenants = await api('GET', '/api/iam/tenant/my').catch(() => ({ data: [] }));
  main.append(h('h1', {}, 'Account'),
    h('dl', { class: 'facts' },
      h('dt', {}, 'Name'), h('dd', {}, who.name || '—'),
      h('dt', {}, 'Email'), h('dd', {}, who.email || '—'),
      h('dt', {}, 'Id'), h('dd', { class: 'mono' }, who.id),
      h('dt', {}, 'Kind'), h('dd', {}, who.principalType || ''),
      h('dt', {}, 'Role'), h('dd', {}, who.role || ''),
      h('dt', {}, 'Platform roles'), h('dd', {}, (who.platformRoles || []).join(', ') || 'none'),
      h('dt', {}, 'Tenant'), h('dd', {}, tenantOf(tenants, who.tenantId))),
    h('h2', {}, 'Tenants'),
    h('ul', {}, (tenants.data || []).map((t) => h('li', {}, `${t.name} (${t.role})`))));
}

function tenantOf(tenants, id) {
  if (!id) return '—';
  const tenant = (tenants.data || []).find((t) => t.id === id);
  return tenant ? [tenant.name, ' ', h('span', { class: 'mono' }, `(${id})`)] : h('span', { class: 'mono' }, id);
}

function renderNav() {
  const nav = document.getElementById('nav');
  const who = document.getElementById('who');
  if (!principal) {
    nav.replaceChildren();
    who.replaceChildren();
    return;
  }
  const items = [...NAV, ...(isBackOffice(principal) ? BACK_OFFICE_NAV : [])];
  replace(nav, h('ul', {}, items.map((item) => h('li', {},
    h('a', { href: `#${item.path}`, dataset: { path: item.path } }, item.label)))));
  const name = principal.name || principal.email || 'Signed in';
  replace(who,
    h('a', { href: '#/account', class: 'who-name', title: tenantName ? `${name}, tenant ${tenantName}: account` : `${name}: account` },
      name, tenantName ? h('span', { class: 'who-tenant hide-narrow' }, ` · ${tenantName}`) : null),
    button('Sign out', signOut, { kind: 'quiet' }));
  markCurrent();
}

function markCurrent() {
  const { path } = current();
  for (const link of document.querySelectorAll('#nav a')) {
    const active = path === link.dataset.path || path.startsWith(`${link.dataset.path}/`);
    if (active) link.setAttribute('aria-current', 'page');
    else link.removeAttribute('aria-current');
  }
}

function signOut() {
  forgetCredentials();
  principal = null;
  if (stopBanner) stopBanner();
  stopBanner = null;
  renderNav();
  navigate('/signin');
}

async function start() {
  principal = await me();
  tenantName = null;
  renderNav();
  // The tenant's name beside the caller's (the principal carries only its id).
  api('GET', '/api/iam/tenant/my').then((tenants) => {
    const tenant = (tenants?.data || []).find((t) => t.id === principal?.tenantId);
    tenantName = tenant?.name || null;
    renderNav();
  }).catch(() => {});
  if (stopBanner) stopBanner();
  stopBanner = startBanner(document.getElementById('banner'));
}

function guarded(renderPage) {
  return async (main, params, query) => {
    if (!credentials()) {
      const { path } = current();
      navigate('/signin', { next: path }, { replace: true });
      return undefined;
    }
    try {
      return await renderPage(main, params, query, { principal });
    } catch (failure) {
      main.replaceChildren(h('h1', {}, 'Something went wrong'), h('p', { role: 'alert' }, describeError(failure)));
      return undefined;
    }
  };
}

function registerRoutes() {
  route('/signin', signInPage);
  route('/', guarded(() => navigate('/projects', undefined, { replace: true })));
  route('/account', guarded(accountPage));
  const register = (pattern, renderPage) => route(pattern, guarded(renderPage));
  for (const page of [projects, datasets, transfers, bin, admin]) page.register(register);
}

window.addEventListener('basin:unauthorized', () => {
  if (current().path === '/signin') return;
  forgetCredentials();
  principal = null;
  renderNav();
  toast('Your session has ended. Sign in again.', 'error');
  navigate('/signin', { expired: '1', next: current().path }, { replace: true });
});
window.addEventListener('hashchange', () => { render(); markCurrent(); });
window.addEventListener('basin:rendered', markCurrent);
// The skip link moves focus without changing the route.
document.getElementById('skip-link')?.addEventListener('click', (event) => {
  event.preventDefault();
  document.getElementById('main-content')?.focus();
});

registerRoutes();
if (credentials()) {
  start().catch((failure) => {
    if (!(failure instanceof ApiError && failure.status === 401)) toast(describeError(failure), 'error');
  }).finally(render);
} else {
  render();
}
