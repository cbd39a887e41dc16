// Sign in with the API key and with a bearer token; a wrong key is refused in the form; the
// key is kept in session storage only (not in the URL, not in a cookie); the top bar and the
// account page say who and which tenant; signing out forgets the key; the page works at 360 px
// wide.

export async function run(t, { assert }) {
  const page = await t.newPage();
  await page.goto(`${t.base}/`);
  await page.getByRole('heading', { name: 'Sign in to Basin' }).waitFor();
  await t.axe(page, 'sign-in');
  await t.screenshot(page, 'signin');

  await page.getByLabel('Value').fill('00000000-0000-0000-0000-000000000000');
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.getByText('Basin does not accept this credential.').waitFor();

  await t.signIn(page);
  const stored = await page.evaluate(() => sessionStorage.getItem('basin.credentials'));
  assert(stored && stored.includes(t.key), 'the key is in session storage');
  assert(!page.url().includes(t.key), 'the key is not in the URL');
  const cookies = await page.context().cookies();
  assert(cookies.length === 0, `no cookies: ${JSON.stringify(cookies)}`);

  // Who and which tenant, in the top bar and on the account page.
  const me = await t.api('GET', '/api/iam/principal/me');
  const tenant = (await t.api('GET', '/api/iam/tenant/my')).data.find((one) => one.id === me.tenantId);
  await page.locator('#who', { hasText: tenant.name }).waitFor();
  assert((await page.locator('#who').innerText()).includes(me.name), 'the caller\'s name in the top bar');
  await page.goto(`${t.base}/#/account`);
  await page.getByRole('heading', { name: 'Account' }).waitFor();
  const facts = await page.locator('.facts').innerText();
  assert(facts.includes(tenant.name) && facts.includes(me.id), `account facts: ${facts}`);
  await t.axe(page, 'account');

  await page.getByRole('button', { name: 'Sign out' }).click();
  await page.getByRole('heading', { name: 'Sign in to Basin' }).waitFor();
  assert(await page.evaluate(() => sessionStorage.getItem('basin.credentials')) === null, 'signed out');

  const admin = await t.newPage({ viewport: { width: 360, height: 740 } });
  await t.signIn(admin, { kind: 'token', value: t.token, route: '/account' });
  await admin.getByRole('link', { name: 'Messages' }).waitFor();
  const overflow = await admin.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
  assert(overflow <= 0, `no sideways scrolling at 360 px (overflow ${overflow})`);
  await t.axe(admin, 'account at 360 px');
}
