// Projects through the page: create a tree (a project, two subprojects, a nested one), walk it
// with the breadcrumbs, rename (and meet a stale rowVersion), move a subproject with the
// destination picker, filter, sort and page a folder of 120 subprojects (kept in the route's
// query across a reload), add a member and change the access level; a Reader sees no control
// it may not use. Each step is checked with the API; axe runs on each state.

export async function run(t, { assert, eventually }) {
  const tag = `P20-${Date.now().toString(36)}`;
  const me = await t.api('GET', '/api/iam/principal/me');
  const page = await t.newPage();
  await t.signIn(page);
  await page.getByRole('heading', { name: 'Projects', level: 1, exact: true }).waitFor();

  // Create a top-level project through the page.
  await page.getByRole('button', { name: 'New project' }).click();
  let dialog = page.getByRole('dialog');
  await dialog.getByLabel('Name').fill(tag);
  await dialog.getByLabel('Description').fill('Created by the console scenario.');
  await dialog.getByRole('button', { name: 'Create' }).click();
  await dialog.waitFor({ state: 'detached' });

  // Filter the top level by name (debounced; kept in the query).
  await page.getByLabel('Filter by name').fill(tag);
  const projectLink = page.getByRole('link', { name: tag, exact: true });
  await projectLink.waitFor();
  await eventually(() => page.evaluate(() => location.hash.includes('q=')), { message: 'filter in the query' });
  await t.axe(page, 'projects');
  await t.sameDateFormat(page, 'projects');
  await page.evaluate(() => document.getElementById('toasts')?.replaceChildren());
  await t.screenshot(page, 'projects');
  const top = (await t.api('GET', `/api/metadata/project/offset-list?namePrefix=${tag}`)).data;
  assert(top.length === 1 && top[0].name === tag, `the project exists: ${JSON.stringify(top)}`);
  const rootId = top[0].id;

  await projectLink.click();
  await page.getByRole('heading', { name: tag, level: 1, exact: true }).waitFor();

  async function newSubproject(name, { inherit = true } = {}) {
    await page.getByRole('button', { name: 'New subproject' }).click();
    const d = page.getByRole('dialog');
    await d.getByLabel('Name').fill(name);
    if (!inherit) await d.getByLabel(/Inherit members/).uncheck();
    await d.getByRole('button', { name: 'Create' }).click();
    await d.waitFor({ state: 'detached' });
    await page.getByRole('link', { name, exact: true }).waitFor();
  }
  await newSubproject('Models');
  await newSubproject('Observations', { inherit: false });
  await page.getByRole('link', { name: 'Models', exact: true }).click();
  await page.getByRole('heading', { name: 'Models', level: 1, exact: true }).waitFor();
  await newSubproject('Run 1');
  await page.getByRole('link', { name: 'Run 1', exact: true }).click();
  await page.getByRole('heading', { name: 'Run 1', level: 1, exact: true }).waitFor();

  // Breadcrumbs: root first, each level a link.
  const crumbs = page.getByRole('navigation', { name: 'Breadcrumb' });
  const crumbText = (await crumbs.locator('li').allInnerTexts()).map((s) => s.trim()).join(' / ');
  assert(crumbText === `Projects / ${tag} / Models / Run 1`, `breadcrumbs: ${crumbText}`);
  assert(await crumbs.getByRole('link').count() === 3, 'every level above is a link');
  await t.axe(page, 'nested project');
  await crumbs.getByRole('link', { name: 'Models' }).click();
  await page.getByRole('heading', { name: 'Models', level: 1, exact: true }).waitFor();
  await page.getByRole('navigation', { name: 'Breadcrumb' }).getByRole('link', { name: tag }).click();
  await page.getByRole('heading', { name: tag, level: 1, exact: true }).waitFor();

  const children = async (id) => (await t.api('GET', `/api/metadata/project/${id}/subproject/offset-list?limit=1000`)).data;
  const level1 = await children(rootId);
  const models = level1.find((p) => p.name === 'Models');
  const observations = level1.find((p) => p.name === 'Observations');
  assert(models && observations && level1.length === 2, `two subprojects: ${level1.map((p) => p.name)}`);
  assert(models.inheritsMembers && !observations.inheritsMembers, 'inheritance as chosen');
  const level2 = await children(models.id);
  assert(level2.length === 1 && level2[0].name === 'Run 1', 'nested subproject');

  // Rename a subproject from its row.
  await page.getByRole('button', { name: 'Rename Models' }).click();
  dialog = page.getByRole('dialog');
  await dialog.getByLabel('New name').fill('Models v2');
  await dialog.getByRole('button', { name: 'Rename' }).click();
  await page.getByRole('link', { name: 'Models v2', exact: true }).waitFor();
  assert((await t.api('GET', `/api/metadata/project/${models.id}`)).name === 'Models v2', 'renamed in the API');

  // A stale rowVersion: the project is renamed behind the page's back; the page says so and
  // shows the latest version.
  await t.api('PUT', '/api/metadata/project', { body: { id: rootId, name: `${tag} (renamed elsewhere)`, description: 'Created by the console scenario.' } });
  await page.getByRole('button', { name: 'Rename', exact: true }).click();
  dialog = page.getByRole('dialog');
  await dialog.getByLabel('New name').fill(`${tag} root`);
  await dialog.getByRole('button', { name: 'Rename' }).click();
  await page.getByRole('alert').filter({ hasText: 'Someone changed this project' }).waitFor();
  await page.getByRole('heading', { name: `${tag} (renamed elsewhere)`, level: 1, exact: true }).waitFor();
  await t.axe(page, 'project after a conflict');
  await page.getByRole('button', { name: 'Rename', exact: true }).click();
  dialog = page.getByRole('dialog');
  await dialog.getByLabel('New name').fill(tag);
  await dialog.getByRole('button', { name: 'Rename' }).click();
  await page.getByRole('heading', { name: tag, level: 1, exact: true }).waitFor();
  assert((await t.api('GET', `/api/metadata/project/${rootId}`)).name === tag, 'renamed back');

  // Move Observations into Models v2 with the picker (one level at a time).
  await page.getByRole('button', { name: 'Move Observations' }).click();
  dialog = page.getByRole('dialog');
  await dialog.getByText(`It is in ${tag} now`).waitFor();
  assert(await dialog.getByRole('button', { name: 'Move here' }).isDisabled(), 'the present parent cannot be chosen');
  assert(await dialog.getByRole('button', { name: 'Observations (the item itself)' }).isDisabled(), 'nor the item itself');
  await t.axe(page, 'move picker');
  await dialog.getByRole('button', { name: 'Open Models v2' }).click();
  await dialog.getByText('Destination: Models v2').waitFor();
  await dialog.getByRole('button', { name: 'Move here' }).click();
  await dialog.waitFor({ state: 'detached' });
  await eventually(async () => (await page.getByRole('link', { name: 'Observations', exact: true }).count()) === 0, { message: 'Observations left the list' });
  const moved = await t.api('GET', `/api/metadata/project/${observations.id}`);
  assert(moved.parentProjectId === models.id, `moved: ${moved.parentProjectId}`);

  // 120 more children (through the API), then page, sort and filter them in the page.
  const actions = Array.from({ length: 120 }, (_, i) => ({ type: 'PathActionCreate', path: `c${String(i + 1).padStart(3, '0')}`, isFolder: true }));
  await t.api('POST', `/api/hierarchy/project/${rootId}`, { body: { actions } });
  await page.reload();
  await page.getByRole('heading', { name: tag, level: 1, exact: true }).waitFor();
  const subprojects = page.getByRole('region', { name: 'Subprojects' });
  const status = subprojects.locator('.pager-status').first();
  await eventually(async () => (await status.innerText()).startsWith('1–50 of 121'), { message: 'first page of 121' });
  await subprojects.getByRole('button', { name: 'Next page of subprojects' }).first().click();
  await eventually(async () => (await status.innerText()).startsWith('51–100 of 121'), { message: 'second page' });
  assert(await page.evaluate(() => location.hash.includes('offset=50')), 'page in the query');
  await page.reload();
  await eventually(async () => (await page.getByRole('region', { name: 'Subprojects' }).locator('.pager-status').first().innerText()).startsWith('51–100 of 121'), { message: 'page kept across a reload' });
  await subprojects.getByRole('button', { name: 'Last page of subprojects' }).first().click();
  await eventually(async () => (await status.innerText()).startsWith('101–121 of 121'), { message: 'last page' });
  await t.axe(page, 'project, last page');

  await subprojects.getByLabel('Order').selectOption('Desc');
  await eventually(async () => (await subprojects.locator('tbody tr').first().innerText()).startsWith('c120'), { message: 'descending by name' });
  await subprojects.getByLabel('Sort by').selectOption('CreatedAt');
  await eventually(async () => {
    const first = await subprojects.locator('tbody tr').first().innerText();
    return first.startsWith('c120') || first.startsWith('c1');
  }, { message: 'newest first' });
  await subprojects.getByLabel('Filter subprojects by name').fill('C11');
  await eventually(async () => (await status.innerText()).startsWith('1–10 of 10'), { message: 'filtered to c110–c119' });
  const names = await subprojects.locator('tbody tr td.name-cell a').allInnerTexts();
  assert(names.every((n) => n.startsWith('c11')), `filtered names: ${names}`);
  const hash = await page.evaluate(() => location.hash);
  assert(/q=C11/.test(hash) && /sort=CreatedAt/.test(hash) && /order=Desc/.test(hash), `state in the query: ${hash}`);
  await subprojects.getByLabel('Filter subprojects by name').fill('');
  await subprojects.getByLabel('Sort by').selectOption('Name');
  await subprojects.getByLabel('Order').selectOption('Asc');
  await eventually(async () => (await status.innerText()).startsWith('1–50 of 121'), { message: 'filter cleared' });
  // Column headers sort too (again: the other way round), and the selects follow.
  await subprojects.getByRole('columnheader', { name: /Name/ }).getByRole('button').click();
  await eventually(async () => (await subprojects.locator('tbody tr').first().innerText()).startsWith('c120'), { message: 'header sorts descending' });
  assert(await subprojects.getByLabel('Order').inputValue() === 'Desc', 'the order select follows the header');
  assert(await subprojects.getByRole('columnheader', { name: /Name/ }).getAttribute('aria-sort') === 'descending', 'aria-sort');
  await subprojects.getByRole('columnheader', { name: /Name/ }).getByRole('button').click();
  await eventually(async () => (await subprojects.locator('tbody tr').first().innerText()).startsWith('Models v2'), { message: 'header sorts ascending' });

  // Members and access level: add a Reader (an API key of the tenant), make the project Shared.
  const keyName = `${tag} reader`;
  const key = await t.api('POST', `/api/admin/tenants/${me.tenantId}/api-keys`, { token: t.token, version: 1, body: { name: keyName, role: 'User' } });
  await page.reload();
  const access = page.getByRole('complementary', { name: 'About this project' });
  const memberSelect = access.getByLabel('User or API key');
  await memberSelect.waitFor();
  const option = await memberSelect.locator('option', { hasText: keyName }).getAttribute('value');
  await memberSelect.selectOption(option);
  await access.getByLabel('Role', { exact: true }).selectOption('Reader');
  await access.getByRole('button', { name: 'Add member' }).click();
  await eventually(async () => (await page.locator('.member-list').innerText()).includes(keyName), { message: 'member listed' });
  const members = (await t.api('GET', `/api/metadata/project/${rootId}/member`)).data;
  assert(members.some((m) => m.userId === key.id && m.role === 'Reader' && m.principalType === 'OpenAPIAccount'), `member added: ${JSON.stringify(members)}`);

  await page.getByLabel('Access level', { exact: true }).selectOption('Shared');
  await page.getByRole('button', { name: 'Change access level' }).click();
  await eventually(async () => (await t.api('GET', `/api/metadata/project/${rootId}`)).accessLevel === 'Shared', { message: 'access level Shared' });
  await page.getByRole('heading', { name: tag, level: 1, exact: true }).waitFor();
  await eventually(async () => (await page.getByLabel('Access level', { exact: true }).inputValue()) === 'Shared', { message: 'page shows Shared' });
  await t.axe(page, 'project with members');
  await page.evaluate(() => document.getElementById('toasts')?.replaceChildren());
  await t.screenshot(page, 'project');

  // A Reader sees the project and its contents, and no control it may not use.
  const reader = await t.newPage({ viewport: { width: 360, height: 740 } });
  await t.signIn(reader, { kind: 'key', value: key.apiKey, route: `/projects/${rootId}` });
  await reader.getByRole('heading', { name: tag, level: 1, exact: true }).waitFor();
  await reader.getByRole('link', { name: 'Models v2', exact: true }).waitFor();
  await reader.waitForTimeout(500); // the rows' capability look-ups
  for (const name of ['New subproject', 'Rename', 'Move', 'Delete', 'Add member', 'Change access level', 'Remove']) {
    const count = await reader.getByRole('button', { name, exact: false }).count();
    assert(count === 0, `a Reader is offered "${name}" (${count})`);
  }
  assert(await reader.getByLabel('Access level', { exact: true }).count() === 0, 'no access level control for a Reader');
  assert(await reader.getByLabel(/Inherit members/).count() === 0, 'no inheritance toggle for a Reader');
  const readerText = await reader.getByRole('complementary', { name: 'About this project' }).innerText();
  assert(readerText.includes('Shared') && readerText.includes('Reader'), `the Reader sees the access level and members: ${readerText}`);
  const overflow = await reader.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
  assert(overflow <= 0, `no sideways scrolling at 360 px (overflow ${overflow})`);
  await t.axe(reader, 'project as a Reader at 360 px');
  await t.screenshot(reader, 'project-360');

  // Change the member's role, then remove it.
  await page.getByLabel(`Role of ${keyName}`).selectOption('Contributor');
  const memberOf = async () => (await t.api('GET', `/api/metadata/project/${rootId}/member`)).data.find((m) => m.userId === key.id);
  await eventually(async () => (await memberOf())?.role === 'Contributor', { message: 'role changed to Contributor' });
  await page.getByRole('button', { name: `Remove ${keyName}` }).click();
  dialog = page.getByRole('dialog');
  await dialog.getByRole('button', { name: 'Remove' }).click();
  await eventually(async () => !(await memberOf()), { message: 'member removed' });
  await eventually(async () => (await page.getByRole('button', { name: `Remove ${keyName}` }).count()) === 0
    && !(await page.locator('.member-list').innerText()).includes(keyName), { message: 'member gone from the page' });

  // Inheritance: Models v2 inherits; stop, then inherit again.
  await page.goto(`${t.base}/#/projects/${models.id}`);
  await page.getByRole('heading', { name: 'Models v2', level: 1, exact: true }).waitFor();
  const inherit = page.getByLabel(/Inherit members from/);
  assert(await inherit.isChecked(), 'Models v2 inherits');
  await inherit.uncheck();
  dialog = page.getByRole('dialog');
  await dialog.getByRole('button', { name: 'Stop inheriting' }).click();
  await eventually(async () => (await t.api('GET', `/api/metadata/project/${models.id}`)).inheritsMembers === false, { message: 'inheritance off' });
  await eventually(async () => !(await page.getByLabel(/Inherit members from/).isChecked()), { message: 'page shows own members' });
  await page.getByLabel(/Inherit members from/).check();
  dialog = page.getByRole('dialog');
  await dialog.getByRole('button', { name: 'Inherit' }).click();
  await eventually(async () => (await t.api('GET', `/api/metadata/project/${models.id}`)).inheritsMembers === true, { message: 'inheritance on' });
  await page.goto(`${t.base}/#/projects/${rootId}`);
  await page.getByRole('heading', { name: tag, level: 1, exact: true }).waitFor();

  // Delete a subproject from the page: it goes to the recycle bin.
  const c001 = (await t.api('GET', `/api/metadata/project/${rootId}/subproject/offset-list?namePrefix=c001`)).data[0];
  await page.getByRole('button', { name: 'Delete c001' }).click();
  dialog = page.getByRole('dialog');
  await dialog.getByRole('button', { name: 'Move to recycle bin' }).click();
  await eventually(async () => (await t.api('GET', `/api/metadata/project/${rootId}/subproject/offset-list?namePrefix=c001`)).data.length === 0, { message: 'c001 deleted' });
  // Undo restores it in place; then delete it again.
  await page.getByRole('button', { name: 'Undo: restore c001' }).click();
  await page.getByText('Restored “c001”.').waitFor();
  assert((await t.api('GET', `/api/metadata/project/${c001.id}`)).parentProjectId === rootId, 'undo restored c001 in place');
  await page.getByRole('link', { name: 'c001', exact: true }).waitFor();
  await page.getByRole('button', { name: 'Delete c001' }).click();
  await page.getByRole('dialog').getByRole('button', { name: 'Move to recycle bin' }).click();
  await eventually(async () => (await t.api('GET', `/api/metadata/project/${rootId}/subproject/offset-list?namePrefix=c001`)).data.length === 0, { message: 'c001 deleted again' });
  const bin = await t.api('GET', '/api/recycle-bin/project/list?limit=1000');
  assert(bin.data.some((item) => item.id === c001.id), 'c001 is in the recycle bin');
}
