// The status banner: BackOffice publishes a Critical message for the console's feature through
// the messages page; another caller (a User-role API key of the tenant, in its own browser
// context) sees it with the sanitized body and no injected script runs; the banner answers
// If-None-Match with 304 (or the browser's revalidated copy) without rendering again; an edit
// shows on the other page without a reload (on focus), a dismissed message stays hidden until
// it changes, ending it removes it, and a message starting later shows at its start (the
// banner polls again at the answer's nextChangeAt). Checked at 1280 and 360 px.

const BODY = [
  '<p>Planned <strong>maintenance</strong> of the tile servers.</p>',
  '<script>window.__basinCanary = "script"</script>',
  '<img src="x" onerror="window.__basinCanary = \'img\'">',
  '<a href="javascript:window.__basinCanary=\'link\'">details</a> ',
  '<a href="https://status.example.com/">status page</a>',
].join('');

export async function run(t, { assert, eventually }) {
  const suffix = Date.now().toString(36);
  const me = await t.api('GET', '/api/iam/principal/me');
  const tenantId = me.tenantId;

  // A second caller of the tenant without any platform role: a user and its User-role key.
  await t.api('POST', '/api/admin/users', { token: t.token, body: { name: `Banner reader ${suffix}`, tenantId, role: 'User' } });
  const key = await t.api('POST', `/api/admin/tenants/${tenantId}/api-keys`, { token: t.token, body: { name: `banner reader ${suffix}`, role: 'User' } });

  // ---- BackOffice publishes through the page ----
  const admin = await t.newPage();
  await t.signIn(admin, { kind: 'token', value: t.token, route: '/admin/messages' });
  await admin.getByRole('heading', { name: 'Status messages', level: 1 }).waitFor();
  const feature = await admin.evaluate(() => document.querySelector('meta[name="basin-feature"]')?.content || 'Console');
  const title = `Critical E2E ${suffix}`;
  await admin.getByRole('button', { name: 'New message' }).click();
  const editor = admin.locator('form.admin-editor');
  await editor.getByLabel('Type').selectOption('Critical');
  assert(await editor.getByLabel('Feature id').inputValue() === feature, `the editor proposes the console's feature ${feature}`);
  await editor.getByLabel('Title').fill(title);
  await editor.getByLabel('Body').fill(BODY);
  await editor.getByRole('button', { name: 'Publish' }).click();
  const adminRow = admin.locator('tr', { hasText: title });
  await adminRow.waitFor();
  // The publisher's own banner shows it at once.
  await admin.locator('#banner .banner-critical', { hasText: title }).waitFor();

  // ---- the other caller sees it ----
  const reader = await t.newPage();
  const bannerAnswers = [];
  reader.on('response', (response) => {
    if (response.url().includes(`/api/admin/feature/${feature}/banner`)) bannerAnswers.push(response.status());
  });
  await t.signIn(reader, { kind: 'key', value: key.apiKey, route: '/projects' });
  assert(await reader.getByRole('link', { name: 'Messages' }).count() === 0, 'the reader has no BackOffice links');
  const region = reader.getByRole('region', { name: 'Service messages' });
  const banner = region.locator('.banner', { hasText: title });
  await banner.waitFor();
  assert((await banner.getAttribute('class')).includes('banner-critical'), 'a Critical message has the critical style');
  const body = await banner.locator('.banner-body').evaluate((el) => ({
    html: el.innerHTML,
    tags: [...el.querySelectorAll('*')].map((n) => n.localName),
    links: [...el.querySelectorAll('a')].map((a) => ({ href: a.getAttribute('href'), rel: a.rel, target: a.target })),
  }));
  assert(body.tags.every((tag) => ['p', 'strong', 'a'].includes(tag)), `only safe tags: ${body.html}`);
  assert(!/script|onerror|javascript/i.test(body.html), `no script, handler or javascript: link: ${body.html}`);
  const safe = body.links.find((l) => l.href === 'https://status.example.com/');
  assert(safe && safe.rel.includes('noopener') && safe.rel.includes('noreferrer') && safe.target === '_blank', `the https link is kept, opened safely: ${JSON.stringify(body.links)}`);
  assert(body.links.filter((l) => l.href).length === 1, `the javascript: link lost its href: ${JSON.stringify(body.links)}`);
  assert(await reader.evaluate(() => window.__basinCanary) === undefined, 'no injected script ran');
  await t.axe(reader, 'banner');
  await t.screenshot(reader, 'banner');

  // ---- unchanged: If-None-Match answers 304 (or the browser's revalidated copy) and the
  // banner is not rendered again ----
  await reader.evaluate(() => { document.querySelector('#banner .banner-list').dataset.e2eMark = 'kept'; });
  const answersBefore = bannerAnswers.length;
  await reader.evaluate(() => window.basinBanner.refresh());
  await eventually(() => bannerAnswers.length > answersBefore, { message: 'a banner request' });
  assert([200, 304].includes(bannerAnswers.at(-1)), `the banner answered ${bannerAnswers.at(-1)}`);
  assert(await reader.evaluate(() => document.querySelector('#banner .banner-list')?.dataset.e2eMark) === 'kept', 'an unchanged banner is not rendered again');
  const revalidated = await reader.evaluate(async (path) => {
    const stored = JSON.parse(sessionStorage.getItem('basin.credentials'));
    const first = await fetch(path, { headers: { 'svc-open-api-key': stored.value }, cache: 'no-store' });
    const etag = first.headers.get('ETag');
    const second = await fetch(path, { headers: { 'svc-open-api-key': stored.value, 'If-None-Match': etag }, cache: 'no-store' });
    return { etag, status: second.status };
  }, `/api/admin/feature/${feature}/banner`);
  assert(revalidated.etag && revalidated.status === 304, `Basin answers If-None-Match with 304: ${JSON.stringify(revalidated)}`);

  // ---- an edit shows without a reload, when the window gets focus ----
  await adminRow.getByRole('button', { name: /^Edit/ }).click();
  await editor.getByLabel('Title').fill(`${title} (updated)`);
  await editor.getByRole('button', { name: 'Save changes' }).click();
  await admin.locator('tr', { hasText: `${title} (updated)` }).waitFor();
  await reader.evaluate(() => window.dispatchEvent(new Event('focus')));
  await region.locator('.banner', { hasText: `${title} (updated)` }).waitFor({ timeout: 10000 });
  assert(await reader.evaluate(() => document.querySelector('#banner .banner-list')?.dataset.e2eMark) === undefined, 'a changed banner is rendered again');

  // ---- dismissed: hidden for the session until the message changes ----
  await region.locator('.banner', { hasText: title }).getByRole('button', { name: /^Dismiss/ }).click();
  await reader.locator('#banner .banner', { hasText: title }).waitFor({ state: 'detached' });
  await reader.evaluate(() => window.basinBanner.refresh());
  assert(await reader.locator('#banner .banner', { hasText: title }).count() === 0, 'a dismissed message stays hidden');
  await reader.reload();
  await reader.getByRole('button', { name: 'Sign out' }).waitFor();
  await reader.evaluate(() => window.basinBanner.refresh());
  assert(await reader.locator('#banner .banner', { hasText: title }).count() === 0, 'a dismissed message stays hidden after a reload of the tab');
  await admin.locator('tr', { hasText: `${title} (updated)` }).getByRole('button', { name: /^Edit/ }).click();
  await editor.getByLabel('Type').selectOption('Warning');
  await editor.getByRole('button', { name: 'Save changes' }).click();
  await editor.waitFor({ state: 'hidden' });
  await reader.evaluate(() => window.basinBanner.refresh());
  await reader.locator('#banner .banner-warning', { hasText: title }).waitFor();

  // ---- many messages fold behind "Show more" ----
  const extra = [];
  for (let i = 0; i < 3; i += 1) {
    extra.push(await t.api('POST', `/api/admin/feature/${feature}/message`, {
      token: t.token,
      body: { type: 'Informational', title: `Extra E2E ${suffix} ${i}`, body: '', startDate: new Date(Date.now() - 60000).toISOString(), expiringDate: new Date(Date.now() + 3600000).toISOString() },
    }));
  }
  await reader.evaluate(() => window.basinBanner.refresh());
  const showMore = region.getByRole('button', { name: /^Show \d+ more messages?$/ });
  await showMore.waitFor();
  assert(await region.locator('.banner').count() === 3, 'three messages show before "Show more"');
  assert(await showMore.getAttribute('aria-expanded') === 'false', 'the fold says it is collapsed');
  await showMore.click();
  const showFewer = region.getByRole('button', { name: 'Show fewer messages' });
  await showFewer.waitFor();
  assert(await showFewer.getAttribute('aria-expanded') === 'true', 'the fold says it is expanded');
  assert(await showFewer.evaluate((el) => el === document.activeElement), 'focus stays on the fold button');
  for (const message of extra) await t.api('DELETE', `/api/admin/feature/${feature}/message/${message.id}`, { token: t.token });
  await reader.evaluate(() => window.basinBanner.refresh());

  // ---- at 360 px ----
  const narrow = await t.newPage({ viewport: { width: 360, height: 740 } });
  await t.signIn(narrow, { kind: 'key', value: key.apiKey, route: '/projects' });
  await narrow.locator('#banner .banner', { hasText: title }).waitFor();
  const overflow = await narrow.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
  assert(overflow <= 0, `no sideways scrolling with the banner at 360 px (overflow ${overflow})`);
  await t.screenshot(narrow, 'banner-360');
  await t.axe(narrow, 'banner at 360 px');

  // A message that starts in a few seconds: the banner learns its start as nextChangeAt and
  // polls again then. (Basin's ETag covers only the messages shown, not nextChangeAt, so a
  // pending message alone leaves a revalidation at 304: it is created before the change below
  // renews the ETag.)
  const soonTitle = `Starting soon E2E ${suffix}`;
  const startsAt = new Date(Date.now() + 8000);
  await t.api('POST', `/api/admin/feature/${feature}/message`, {
    token: t.token,
    body: { type: 'Informational', title: soonTitle, body: '', startDate: startsAt.toISOString(), expiringDate: new Date(Date.now() + 3600000).toISOString() },
  });

  // ---- ended: it disappears without a reload ----
  await admin.locator('tr', { hasText: title }).getByRole('button', { name: /^End now/ }).click();
  await admin.locator('tr', { hasText: title }).getByText('Expired').waitFor();
  await reader.evaluate(() => window.basinBanner.refresh());
  await reader.locator('#banner .banner', { hasText: title }).waitFor({ state: 'detached' });
  const plannedAt = await reader.evaluate(() => window.basinBanner.nextPollAt);
  if (Date.now() < startsAt.getTime()) {
    assert(await reader.locator('#banner .banner', { hasText: soonTitle }).count() === 0, 'a pending message is not shown yet');
    assert(plannedAt && plannedAt >= startsAt.getTime() && plannedAt < startsAt.getTime() + 5000,
      `the next poll is planned at the message's start (${new Date(plannedAt).toISOString()} for ${startsAt.toISOString()})`);
  }
  await reader.locator('#banner .banner-informational', { hasText: soonTitle }).waitFor({ timeout: 15000 });
  assert(Date.now() >= startsAt.getTime(), 'shown at its start, not before');
  await narrow.evaluate(() => document.dispatchEvent(new Event('visibilitychange')));
  await narrow.locator('#banner .banner', { hasText: title }).waitFor({ state: 'detached', timeout: 10000 });
  assert(await reader.evaluate(() => window.__basinCanary) === undefined, 'no injected script ran');

  // Tidy: the ended message goes.
  const list = await t.api('GET', `/api/admin/feature/${feature}/message?expiry=All&limit=1000`, { token: t.token });
  for (const message of list.data.filter((m) => m.title.startsWith(title) || m.title === soonTitle)) {
    await t.api('DELETE', `/api/admin/feature/${feature}/message/${message.id}`, { token: t.token });
  }
}
