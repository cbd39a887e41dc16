// The BackOffice pages: status messages (a malicious body previews as safe markup only, the
// server's field errors show under their fields, publish, edit, end, delete), the feature
// catalogue and a tenant license (add with a field error first, license, switch off, revoke),
// and credits (add to the unassigned pool, move to a tenant, see both journals). Every list a
// change touches shows it at once, without a reload: the tenant's licensed features after
// licensing, switching and revoking; the ledger and balance of the pool credits went to. A caller
// without a platform role is told the pages are BackOffice only. The client's sanitizer is
// also run over the whole corpus of the server's sanitizer suite (tests/python/
// sanitizer_cases.py) in the page, under its real policy. Checked at 1280 and 360 px.

import { execFileSync } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const MALICIOUS = [
  '<p>Hello <b>bold</b> and <em>em</em></p>',
  '<script>window.__basinCanary = "script"</script>',
  '<img src="x" onerror="window.__basinCanary = \'img\'">',
  '<a href="javascript:window.__basinCanary=\'link\'">bad link</a> ',
  '<a href="https://example.com/ok" onclick="window.__basinCanary=\'click\'">good link</a>',
  '<svg><script>window.__basinCanary = "svg"</script></svg>',
  '<style>body { display: none }</style> <span style="color:red">kept text</span>',
].join('');

/** HOSTILE, BENIGN and DROPPED_MARKERS of tests/python/sanitizer_cases.py, or null without
 *  python3 (the scenario then checks its own vectors only). */
function sanitizerCorpus() {
  try {
    const script = 'import json, sanitizer_cases as s; print(json.dumps({"hostile": s.HOSTILE, "benign": s.BENIGN, "markers": s.DROPPED_MARKERS}))';
    const out = execFileSync(process.env.PYTHON || 'python3', ['-c', script], {
      cwd: path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../python'),
      stdio: ['ignore', 'pipe', 'ignore'],
    });
    return JSON.parse(out.toString());
  } catch (error) {
    console.log(`note: the sanitizer corpus is not available (${error.message.split('\n')[0]})`);
    return null;
  }
}

/** In the page: every hostile case rendered through renderHTML keeps only the allow-list and
 *  no dropped content; benign inputs and what Basin stored for them sanitize alike. */
async function checkCorpus(cases) {
  const url = performance.getEntriesByType('resource').map((e) => e.name)
    .find((name) => /\/sanitize\.[0-9a-f]+\.js$/.test(name));
  const { renderHTML, sanitizeToString } = await import(url);
  window.alert = window.confirm = window.prompt = window.print = () => { window.__basinCanary = 'dialog'; };
  window.__xss = () => { window.__basinCanary = 'xss'; };
  const allowed = new Set(['b', 'strong', 'i', 'em', 'u', 'br', 'p', 'ul', 'ol', 'li', 'a']);
  const host = document.createElement('div');
  document.body.append(host);
  const problems = [];
  for (const [name, body] of cases.hostile) {
    const el = document.createElement('div');
    host.append(el);
    renderHTML(el, body);
    for (const node of el.querySelectorAll('*')) {
      if (!allowed.has(node.localName)) problems.push(`${name}: <${node.localName}>`);
      for (const a of node.attributes) {
        const fine = node.localName === 'a' && (
          (a.name === 'href' && /^(https:|mailto:)/.test(a.value))
          || (a.name === 'rel' && a.value === 'noopener noreferrer')
          || (a.name === 'target' && a.value === '_blank'));
        if (!fine) problems.push(`${name}: ${node.localName}[${a.name}=${a.value}]`);
      }
    }
    if (cases.markers[name] && el.textContent.includes(cases.markers[name])) problems.push(`${name}: dropped content kept`);
  }
  for (const [input, stored] of cases.benign) {
    if (sanitizeToString(input) !== sanitizeToString(stored)) problems.push(`benign ${JSON.stringify(input)} is not sanitized as Basin stored it`);
  }
  await new Promise((resolve) => setTimeout(resolve, 300)); // loads and timers, had anything survived
  host.remove();
  return { checked: cases.hostile.length, problems };
}

/** A screenshot of the page from its top, without the toasts of earlier steps. */
async function shot(t, page, name) {
  await page.evaluate(() => {
    document.getElementById('toasts')?.replaceChildren();
    window.scrollTo(0, 0);
  });
  await t.screenshot(page, name);
}

const VECTORS = [
  '<a href="JaVaScRiPt:alert(1)">x</a>',
  '<a href="&#106;avascript:alert(1)">x</a>',
  '<a href=" javascript:alert(1)">x</a>',
  '<a href="java&#x09;script:alert(1)">x</a>',
  '<a href="data:text/html,<script>alert(1)</script>">x</a>',
  '<a href="//evil.example/">x</a>',
  '<a href="http://plain.example/">x</a>',
  '<a href="https://ok.example/" target="_self" rel="opener">ok</a>',
  '<math><mtext><table><mglyph><style><img src=x onerror=alert(1)>',
  '<noscript><p title="</noscript><img src=x onerror=alert(1)>">',
  '<svg><a xlink:href="javascript:alert(1)"><text>x</text></a></svg>',
  '<form><button formaction=javascript:alert(1)>x</button></form>',
  '<iframe srcdoc="<script>alert(1)</script>"></iframe>',
  '<b onmouseover=alert(1)>b</b>',
  '<p style="background:url(javascript:alert(1))">p</p>',
  '<!--<img src=x onerror=alert(1)>-->',
  '<template><img src=x onerror=alert(1)></template>',
  '<object data="javascript:alert(1)"></object><embed src="javascript:alert(1)">',
  '<details open ontoggle=alert(1)><summary>s</summary></details>',
  '<p title="a>b" onclick="alert(1)">q</p><br/><BR onload=alert(1)>',
  '<scr<script>ipt>alert(1)</script>',
  '<a href="https://ok.example/"<img src=x onerror=alert(1)>>y</a>',
];

async function noOverflow(page, assert, label) {
  const overflow = await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
  assert(overflow <= 0, `no sideways scrolling on ${label} (overflow ${overflow} px)`);
}

export async function run(t, { assert, eventually }) {
  const suffix = Date.now().toString(36);
  const me = await t.api('GET', '/api/iam/principal/me');
  const tenantId = me.tenantId;
  const tenantName = (await t.api('GET', `/api/admin/tenants/${tenantId}`, { token: t.token })).name;

  const page = await t.newPage();
  await t.signIn(page, { kind: 'token', value: t.token, route: '/admin/messages' });
  await page.getByRole('heading', { name: 'Status messages', level: 1 }).waitFor();
  await t.axe(page, 'messages');

  // ---- a message with a malicious body: the preview shows only the allowed markup ----
  const feature = `e2e-msg-${suffix}`;
  await page.getByRole('button', { name: 'New message' }).click();
  const editor = page.locator('form.admin-editor');
  await editor.waitFor();
  await editor.getByLabel('Type').selectOption('Warning');
  await editor.getByLabel('Feature id').fill(feature);
  await editor.getByLabel('Title').fill(`<b></b>`);
  await editor.getByLabel('Body').fill(MALICIOUS);
  const preview = editor.getByRole('region', { name: 'Preview' });
  await eventually(async () => (await preview.locator('.banner-body b').count()) === 1, { message: 'the preview renders <b>' });
  const shown = await preview.evaluate((el) => ({
    tags: [...el.querySelector('.banner-body').querySelectorAll('*')].map((n) => n.localName),
    attributes: [...el.querySelector('.banner-body').querySelectorAll('*')].flatMap((n) => [...n.attributes].map((a) => `${n.localName}[${a.name}=${a.value}]`)),
    text: el.querySelector('.banner-body').textContent,
    typeClass: el.querySelector('.banner').className,
  }));
  const allowed = new Set(['p', 'b', 'em', 'a']);
  assert(shown.tags.every((tag) => allowed.has(tag)), `the preview holds only safe tags: ${shown.tags}`);
  assert(shown.attributes.every((a) => /^a\[(href=https:\/\/example\.com\/ok|rel=noopener noreferrer|target=_blank)\]$/.test(a)),
    `the preview keeps only safe link attributes: ${shown.attributes}`);
  assert(shown.attributes.includes('a[href=https://example.com/ok]'), 'the https link is kept');
  assert(shown.text.includes('kept text') && !shown.text.includes('display: none') && !shown.text.includes('__basinCanary'),
    `text is kept, script and style content dropped: ${shown.text}`);
  assert(shown.typeClass.includes('banner-warning'), 'the preview has the type’s colours');
  // The preview follows typing.
  await editor.getByLabel('Type').selectOption('Informational');
  await eventually(async () => (await preview.locator('.banner-informational').count()) === 1, { message: 'the preview follows the type' });

  // Known ways around sanitizers, each through the preview: only allowed tags, and links only
  // with an https: or mailto: href, rel="noopener noreferrer" and target="_blank".
  await page.evaluate(() => { window.alert = () => { window.__basinCanary = 'alert'; }; });
  for (const [n, vector] of VECTORS.entries()) {
    await editor.getByLabel('Body').fill(`<i>before ${n}</i>`);
    await eventually(async () => (await preview.locator('.banner-body').innerHTML()) === `<i>before ${n}</i>`, { message: 'the preview follows the body' });
    await editor.getByLabel('Body').fill(`${vector}<i>after</i>`);
    await eventually(async () => !(await preview.locator('.banner-body').innerHTML()).includes(`before ${n}`), { message: `the preview of ${vector}` });
    const bad = await preview.locator('.banner-body').evaluate((el) => {
      const ok = new Set(['b', 'strong', 'i', 'em', 'u', 'br', 'p', 'ul', 'ol', 'li', 'a']);
      const problems = [];
      for (const node of el.querySelectorAll('*')) {
        if (!ok.has(node.localName) || node.namespaceURI !== 'http://www.w3.org/1999/xhtml') problems.push(`tag ${node.localName}`);
        for (const attribute of node.attributes) {
          const fine = node.localName === 'a' && (
            (attribute.name === 'href' && /^(https:|mailto:)/.test(attribute.value))
            || (attribute.name === 'rel' && attribute.value === 'noopener noreferrer')
            || (attribute.name === 'target' && attribute.value === '_blank'));
          if (!fine) problems.push(`${node.localName}[${attribute.name}=${attribute.value}]`);
        }
      }
      return problems;
    });
    assert(bad.length === 0, `the preview of ${vector} is safe: ${bad.join(', ')}`);
  }
  await editor.getByLabel('Body').fill('<a href="mailto:ops@example.com">mail</a>');
  await preview.locator('.banner-body a[href="mailto:ops@example.com"][rel="noopener noreferrer"]').waitFor();
  await editor.getByLabel('Body').fill(MALICIOUS);
  await preview.locator('.banner-body em').waitFor();
  assert(await page.evaluate(() => window.__basinCanary) === undefined, 'no vector ran script');

  // The whole corpus of the server's sanitizer suite (tests/python/sanitizer_cases.py) through
  // the client's sanitizer and the basin-banner policy, in this page under its real policy.
  const corpus = sanitizerCorpus();
  if (corpus) {
    const result = await page.evaluate(checkCorpus, corpus);
    assert(result.checked === corpus.hostile.length && result.checked > 100, `the corpus ran (${result.checked})`);
    assert(result.problems.length === 0, `the client sanitizer lets through:\n${result.problems.slice(0, 40).join('\n')}`);
  }
  assert(await page.evaluate(() => window.__basinCanary) === undefined, 'no corpus case ran script');

  // The server's field error shows under its field: a title of markup only is empty.
  await editor.getByRole('button', { name: 'Publish' }).click();
  const titleError = editor.locator('.field:has(input[name="title"]) .admin-field-error');
  await eventually(async () => /empty/.test(await titleError.textContent()), { message: 'the title error under the title' });
  assert(await editor.getByLabel('Title').getAttribute('aria-invalid') === 'true', 'the title is marked invalid');
  // A window that ends before it starts is caught before sending.
  const title = `E2E notice ${suffix}`;
  await editor.getByLabel('Title').fill(title);
  const startValue = await editor.getByLabel('Starts').inputValue();
  await editor.getByLabel('Ends').fill(startValue);
  await editor.getByRole('button', { name: 'Publish' }).click();
  await editor.locator('.field:has(input[name="expiringDate"]) .admin-field-error').filter({ hasText: 'later than the start' }).waitFor();
  await editor.getByLabel('Ends').fill(startValue.replace(/T(\d\d)/, (m, hh) => `T${String((Number(hh) + 2) % 24).padStart(2, '0')}`).replace(/^(\d{4})/, (y) => String(Number(y) + 1)));
  await shot(t, page, 'admin-messages-editor');
  await editor.getByRole('button', { name: 'Publish' }).click();
  await editor.waitFor({ state: 'hidden' });
  const row = page.locator('tr', { hasText: title });
  await row.waitFor();
  const stored = (await t.api('GET', `/api/admin/feature/${feature}/message?expiry=All`, { token: t.token })).data.find((m) => m.title === title);
  assert(stored && !/script|onerror|javascript|svg|style/i.test(stored.body), `the server stored a sanitized body: ${stored?.body}`);
  assert(stored.type === 'Informational', 'stored with the chosen type');

  // The list renders the stored body the same safe way.
  await row.locator('summary').click();
  assert(await row.locator('.banner-body script, .banner-body img, .banner-body svg, .banner-body [onclick]').count() === 0, 'no unsafe markup in the list');
  assert(await page.evaluate(() => window.__basinCanary) === undefined, 'no injected script ran');

  // Edit: the title changes in place.
  await row.getByRole('button', { name: /^Edit/ }).click();
  await editor.waitFor();
  assert(await editor.getByLabel('Feature id').isDisabled(), 'a message never moves between features');
  await editor.getByLabel('Title').fill(`${title} (edited)`);
  await editor.getByRole('button', { name: 'Save changes' }).click();
  await page.locator('tr', { hasText: `${title} (edited)` }).waitFor();
  await page.locator('tr', { hasText: `${title} (edited)` }).locator('summary').click();
  await shot(t, page, 'admin-messages');
  await t.axe(page, 'messages with a list');

  // Delete it.
  await page.locator('tr', { hasText: `${title} (edited)` }).getByRole('button', { name: /^Delete/ }).click();
  await page.getByRole('dialog').getByRole('button', { name: 'Delete' }).click();
  await page.locator('tr', { hasText: title }).waitFor({ state: 'detached' });
  // The retention job on demand.
  await page.getByRole('button', { name: 'Remove old expired' }).click();
  await page.getByRole('dialog').getByRole('button', { name: 'Remove' }).click();
  await page.locator('.toast-success').filter({ hasText: /removed|old enough/ }).waitFor();

  // ---- the feature catalogue and a license ----
  await page.getByRole('link', { name: 'Features' }).click();
  await page.getByRole('heading', { name: 'Features', level: 1 }).waitFor();
  const featureId = `e2e-feature-${suffix}`;
  await page.getByRole('button', { name: 'Add feature' }).click();
  const add = page.getByRole('dialog');
  await add.getByLabel('Id').fill(featureId);
  await add.getByLabel('Name').fill(`E2E feature ${suffix}`);
  await add.getByLabel('Type').selectOption('Application');
  await add.getByLabel('Application address').fill('ftp://example.com/app');
  await add.getByLabel('Authentication callback').fill('https://example.com/app/callback');
  await add.getByRole('button', { name: 'Add feature' }).click();
  await add.locator('.field:has(input[name="url"]) .admin-field-error').filter({ hasText: /http/ }).waitFor();
  await add.getByLabel('Application address').fill('https://example.com/app');
  await add.getByRole('button', { name: 'Add feature' }).click();
  await add.waitFor({ state: 'detached' });
  const featureRow = page.locator(`tr[data-feature-id="${featureId}"]`);
  await featureRow.waitFor();
  await page.getByRole('heading', { name: `Licenses of ${featureId}` }).waitFor();
  await page.getByText('No tenant holds this feature.').waitFor();
  // An id in use is refused under the id.
  await page.getByRole('button', { name: 'Add feature' }).click();
  const again = page.getByRole('dialog');
  await again.getByLabel('Id').fill(featureId);
  await again.getByLabel('Name').fill('Duplicate');
  await again.getByLabel('Application address').fill('https://example.com/dup');
  await again.getByLabel('Authentication callback').fill('https://example.com/dup/callback');
  await again.getByRole('button', { name: 'Add feature' }).click();
  await again.locator('.field:has(input[name="id"]) .admin-field-error').filter({ hasText: 'exists already' }).waitFor();
  await again.getByRole('button', { name: 'Cancel' }).click();
  await again.waitFor({ state: 'detached' });
  // The tenant's features, shown before licensing, follow every change to its licenses.
  await page.getByLabel('Tenant', { exact: true }).last().selectOption(tenantId);
  const tenantFeatures = page.locator('.admin-tenant-features li', { hasText: featureId });
  await page.locator('section', { has: page.getByRole('heading', { name: 'Features of a tenant' }) }).locator('.admin-tenant-features, .empty').first().waitFor();
  assert(await tenantFeatures.count() === 0, 'not licensed yet');
  const grant = page.getByRole('form', { name: `License ${featureId} to a tenant` });
  await grant.getByLabel('Tenant', { exact: true }).selectOption(tenantId);
  await grant.getByRole('button', { name: 'License' }).click();
  const licenseRow = page.locator(`tr[data-tenant-id="${tenantId}"]`);
  await licenseRow.getByText('On', { exact: true }).waitFor();
  assert((await licenseRow.textContent()).includes(tenantName), 'the license names the tenant');
  await tenantFeatures.getByText('On', { exact: true }).waitFor();
  await licenseRow.getByRole('button', { name: /^Switch off/ }).click();
  await licenseRow.getByText('Off', { exact: true }).waitFor();
  await tenantFeatures.getByText('Off', { exact: true }).waitFor();
  const licenses = await t.api('GET', `/api/admin/features/${featureId}/licenses`, { token: t.token });
  assert(licenses.data.length === 1 && licenses.data[0].enabled === false, `the license is switched off: ${JSON.stringify(licenses)}`);
  await t.sameDateFormat(page, 'features and licenses');
  await shot(t, page, 'admin-features');
  await t.axe(page, 'features');
  // A licensed feature cannot be deleted; revoke first.
  await featureRow.getByRole('button', { name: /^Delete/ }).click();
  await page.getByRole('dialog').getByRole('button', { name: 'Delete' }).click();
  await page.locator('.toast-error').filter({ hasText: /revoke/i }).waitFor();
  await licenseRow.getByRole('button', { name: /^Revoke/ }).click();
  await page.getByRole('dialog').getByRole('button', { name: 'Revoke' }).click();
  await page.getByText('No tenant holds this feature.').waitFor();
  await tenantFeatures.waitFor({ state: 'detached' });

  // ---- credits ----
  const before = await t.api('GET', `/api/iam/credit/${tenantId}`, { token: t.token, version: 4 });
  const availableBefore = before.statuses.find((s) => s.status === 'Available').credits;
  await page.getByRole('link', { name: 'Credits' }).click();
  await page.getByRole('heading', { name: 'Credits', level: 1 }).waitFor();
  await page.getByRole('heading', { name: 'Ledger of the unassigned pool' }).waitFor();
  // The tenant's ledger is shown when the credits go to the unassigned pool: the page then
  // shows that pool's ledger, with the new lot and journal entry, and its new balance.
  await page.locator(`tr[data-pool="${tenantId}"]`).getByRole('button', { name: /^Ledger/ }).click();
  await page.getByRole('heading', { name: `Ledger of ${tenantName}` }).waitFor();
  const unassignedRow = page.locator('tr[data-pool="unassigned"]');
  const availableText = async () => (await unassignedRow.locator('td').first().textContent()).replace(/[^\d.]/g, '');
  await eventually(async () => (await availableText()) !== '', { message: 'the unassigned balance' });
  const unassignedBefore = Number(await availableText());
  const salesOrder = `SO-e2e-${suffix}`;
  const reference = `REF-${suffix}`;
  await page.getByRole('button', { name: 'Add credits' }).click();
  const addCredits = page.getByRole('dialog');
  await addCredits.getByLabel('To').selectOption('');
  await addCredits.getByLabel('Credits').fill('12.1234567');
  await addCredits.getByLabel('Reference').fill(reference);
  await addCredits.getByLabel('Tag').fill('e2e');
  await addCredits.getByLabel('Type', { exact: true }).fill('EXT');
  await addCredits.getByLabel('Sales order').fill(salesOrder);
  const nextYear = `${new Date().getUTCFullYear() + 1}-12-31`;
  await addCredits.getByLabel('Last day of use (UTC)').fill(nextYear);
  await addCredits.getByRole('button', { name: 'Add credits' }).click();
  await addCredits.locator('.admin-field-error').filter({ hasText: '6 decimal places' }).waitFor();
  await addCredits.getByLabel('Credits').fill('100.5');
  await addCredits.getByRole('button', { name: 'Add credits' }).click();
  await addCredits.waitFor({ state: 'detached' });
  await page.getByRole('heading', { name: 'Ledger of the unassigned pool' }).waitFor();
  const journal = page.locator('table.admin-journal');
  await journal.locator('tr', { hasText: salesOrder }).getByText('Add').waitFor();
  assert((await journal.locator('tr', { hasText: salesOrder }).textContent()).includes('+100.5'), 'the add shows +100.5 available');
  await page.locator('.admin-ledger table').first().locator('tr', { hasText: reference }).waitFor();
  await eventually(async () => Math.abs(Number(await availableText()) - unassignedBefore - 100.5) < 1e-6, { message: 'the unassigned balance grew by 100.5' });
  await t.sameDateFormat(page, 'credits');

  await page.getByRole('button', { name: 'Move credits' }).click();
  const move = page.getByRole('dialog');
  await move.getByLabel('From').selectOption('');
  await move.getByLabel('To').selectOption(tenantId);
  const referenceOption = move.locator('option', { hasText: reference });
  await referenceOption.waitFor({ state: 'attached' });
  await move.getByLabel('Only of billing reference').selectOption(await referenceOption.getAttribute('value'));
  await move.getByLabel('Credits').fill('40');
  await move.getByRole('button', { name: 'Move credits' }).click();
  await move.waitFor({ state: 'detached' });
  await journal.locator('tr', { hasText: 'MoveOut' }).filter({ hasText: reference }).filter({ hasText: tenantName }).first().waitFor();
  assert((await journal.locator('tr', { hasText: 'MoveOut' }).filter({ hasText: reference }).first().textContent()).includes('-40'), 'the move out shows -40');

  // The tenant's ledger shows the move in; its balance grew by 40.
  await page.locator(`tr[data-pool="${tenantId}"]`).getByRole('button', { name: /^Ledger/ }).click();
  await page.getByRole('heading', { name: `Ledger of ${tenantName}` }).waitFor();
  await journal.locator('tr', { hasText: 'MoveIn' }).filter({ hasText: reference }).filter({ hasText: 'the unassigned pool' }).first().waitFor();
  await page.locator('.admin-ledger table').first().locator('tr', { hasText: reference }).waitFor();
  const after = await t.api('GET', `/api/iam/credit/${tenantId}`, { token: t.token, version: 4 });
  const availableAfter = after.statuses.find((s) => s.status === 'Available').credits;
  assert(Math.abs(availableAfter - availableBefore - 40) < 1e-9, `40 credits moved to the tenant (${availableBefore} -> ${availableAfter})`);
  await shot(t, page, 'admin-credits');
  await t.axe(page, 'credits');

  // ---- narrow screens ----
  const narrow = await t.newPage({ viewport: { width: 360, height: 740 } });
  await t.signIn(narrow, { kind: 'token', value: t.token, route: '/admin/credits' });
  await narrow.getByRole('heading', { name: 'Credits', level: 1 }).waitFor();
  await narrow.locator('table.admin-journal').waitFor();
  await noOverflow(narrow, assert, 'credits at 360 px');
  await shot(t, narrow, 'admin-credits-360');
  await narrow.goto(`${t.base}/#/admin/features`);
  await narrow.getByRole('heading', { name: 'Features', level: 1 }).waitFor();
  await narrow.locator('table.admin-table').first().waitFor();
  await noOverflow(narrow, assert, 'features at 360 px');
  await shot(t, narrow, 'admin-features-360');
  await narrow.goto(`${t.base}/#/admin/messages`);
  await narrow.getByRole('heading', { name: 'Status messages', level: 1 }).waitFor();
  await narrow.getByRole('button', { name: 'New message' }).click();
  await narrow.getByLabel('Body').fill('<p>Narrow <b>preview</b></p>');
  await narrow.getByRole('region', { name: 'Preview' }).locator('.banner-body b').waitFor();
  await noOverflow(narrow, assert, 'messages at 360 px');
  await shot(t, narrow, 'admin-messages-360');
  await t.axe(narrow, 'messages at 360 px');

  // ---- not for callers without a platform role ----
  const owner = await t.newPage();
  await t.signIn(owner, { route: '/admin/credits' });
  await owner.getByRole('heading', { name: 'BackOffice only' }).waitFor();
  assert(await owner.getByRole('link', { name: 'Credits' }).count() === 0, 'no BackOffice links for an API key');

  assert(await page.evaluate(() => window.__basinCanary) === undefined, 'no injected script ran');
  // Tidy: the feature goes (its license was revoked).
  await t.api('DELETE', `/api/admin/features/${featureId}`, { token: t.token });
}
