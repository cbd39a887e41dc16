// The recycle bin through the page: delete a dataset, a subproject and a project from the
// projects pages; restore one in place; meet a restore the API refuses (a live item holds the
// name) and restore it elsewhere with the picker; delete a dataset for good after a
// confirmation that names it. Every state is checked with the API.

async function upload(t, projectId, name, text) {
  const form = new FormData();
  form.append('file', new Blob([text], { type: 'text/plain' }), name);
  const response = await fetch(`${t.base}/api/conversion/project/${projectId}/file/upload`, {
    method: 'POST', headers: { 'svc-open-api-key': t.key }, body: form,
  });
  const body = await response.json();
  if (response.status !== 201) throw new Error(`upload ${name}: ${response.status} ${JSON.stringify(body)}`);
  return body;
}

async function status(t, path) {
  const response = await fetch(`${t.base}${path}`, { headers: { 'svc-open-api-key': t.key } });
  return response.status;
}

export async function run(t, { assert, eventually }) {
  const tag = `B60-${Date.now().toString(36)}`;
  const root = await t.api('POST', '/api/metadata/project', { body: { name: tag } });
  const sub = await t.api('POST', `/api/metadata/project/${root.id}/subproject`, { body: { name: `${tag} data`, inheritsMembers: true } });
  const target = await t.api('POST', `/api/metadata/project/${root.id}/subproject`, { body: { name: `${tag} target`, inheritsMembers: true } });
  const extra = await t.api('POST', '/api/metadata/project', { body: { name: `${tag} scratch` } });
  const notes = await upload(t, sub.id, `${tag}-notes.txt`, 'water levels, notes\n');
  const levels = await upload(t, sub.id, `${tag}-levels.csv`, 'time,level\n2026-01-01,1.5\n');
  const extra2 = await upload(t, sub.id, `${tag}-extra.txt`, 'spare\n');

  const page = await t.newPage();
  await t.signIn(page, { route: `/projects/${sub.id}` });
  await page.getByRole('heading', { name: `${tag} data`, level: 1, exact: true }).waitFor();

  // Filter the datasets by name (server side, kept in the route's query).
  const datasetsRegion = page.getByRole('region', { name: 'Datasets' });
  await datasetsRegion.getByRole('link', { name: levels.name, exact: true }).waitFor();
  await datasetsRegion.getByLabel('Filter datasets by name').fill(`${tag}-LEV`);
  await eventually(async () => (await datasetsRegion.getByRole('link').count()) === 1
    && (await datasetsRegion.getByRole('link', { name: levels.name, exact: true }).count()) === 1, { message: 'datasets filtered' });
  assert(await page.evaluate(() => location.hash.includes('dq=')), 'the dataset filter is in the query');
  await datasetsRegion.getByLabel('Filter datasets by name').fill('');
  await eventually(async () => (await datasetsRegion.getByRole('link').count()) === 3, { message: 'filter cleared' });

  // Rename a dataset from the list, then move it into another project with the picker.
  await page.getByRole('button', { name: `Rename ${extra2.name}`, exact: true }).click();
  let dialog = page.getByRole('dialog');
  await dialog.getByLabel('New name').fill(`${tag}-spare.txt`);
  await dialog.getByRole('button', { name: 'Rename' }).click();
  await page.getByRole('link', { name: `${tag}-spare.txt`, exact: true }).waitFor();
  assert((await t.api('GET', `/api/metadata/dataset/${extra2.id}`)).name === `${tag}-spare.txt`, 'dataset renamed');
  assert(await page.getByRole('link', { name: `${tag}-spare.txt`, exact: true }).getAttribute('href') === `#/datasets/${extra2.id}`, 'rows link to the dataset page');
  await page.getByRole('button', { name: `Move ${tag}-spare.txt`, exact: true }).click();
  dialog = page.getByRole('dialog');
  await dialog.getByText(`It is in ${tag} data now`).waitFor();
  await dialog.getByRole('navigation', { name: 'Destination path' }).getByRole('button', { name: tag, exact: true }).click();
  await dialog.getByRole('button', { name: `Open ${tag} target`, exact: true }).click();
  await dialog.getByText(`Destination: ${tag} target`).waitFor();
  await dialog.getByRole('button', { name: 'Move here' }).click();
  await dialog.waitFor({ state: 'detached' });
  await eventually(async () => (await page.getByRole('link', { name: `${tag}-spare.txt`, exact: true }).count()) === 0, { message: 'moved dataset left the list' });
  assert((await t.api('GET', `/api/metadata/dataset/${extra2.id}`)).projectId === target.id, 'dataset moved');

  // Delete a dataset from the project's list.
  await page.getByRole('link', { name: notes.name, exact: true }).waitFor();
  await page.getByRole('button', { name: `Delete ${notes.name}`, exact: true }).click();
  dialog = page.getByRole('dialog');
  await dialog.getByText(notes.name).first().waitFor();
  await dialog.getByRole('button', { name: 'Move to recycle bin' }).click();
  await eventually(async () => (await page.getByRole('link', { name: notes.name, exact: true }).count()) === 0, { message: 'dataset gone from the list' });
  assert(await status(t, `/api/metadata/dataset/${notes.id}`) === 404, 'the dataset is no longer live');
  assert(await status(t, `/api/recycle-bin/dataset/${notes.id}`) === 200, 'the dataset is in the bin');

  // Delete the subproject from its own page (its remaining dataset goes with it).
  await page.getByRole('button', { name: 'Delete', exact: true }).click();
  dialog = page.getByRole('dialog');
  await dialog.getByRole('button', { name: 'Move to recycle bin' }).click();
  await page.getByRole('heading', { name: tag, level: 1, exact: true }).waitFor();
  assert(await status(t, `/api/metadata/project/${sub.id}`) === 404, 'the subproject is no longer live');
  assert(await status(t, `/api/metadata/dataset/${levels.id}`) === 404, 'its dataset went with it');

  // Delete a top-level project from the projects list.
  await page.goto(`${t.base}/#/projects?q=${encodeURIComponent(tag)}`);
  await page.getByRole('button', { name: `Delete ${tag} scratch`, exact: true }).click();
  dialog = page.getByRole('dialog');
  await dialog.getByRole('button', { name: 'Move to recycle bin' }).click();
  await eventually(async () => (await page.getByRole('link', { name: `${tag} scratch`, exact: true }).count()) === 0, { message: 'project gone from the list' });
  assert(await status(t, `/api/metadata/project/${extra.id}`) === 404, 'the project is no longer live');

  // The bin: newest first; the dataset of the deleted subproject is not an item of its own
  // while its project is in the bin.
  await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Recycle bin' }).click();
  await page.getByRole('heading', { name: 'Recycle bin', level: 1, exact: true }).waitFor();
  const row = (name) => page.locator('tbody tr').filter({ has: page.getByText(name, { exact: true }) });
  await row(`${tag} scratch`).waitFor();
  await row(`${tag} data`).waitFor();
  assert(await row(notes.name).count() === 0, 'a dataset below a deleted project is not listed');
  await eventually(async () => (await row(`${tag} data`).innerText()).includes(tag), { message: 'where the subproject was' });
  await t.axe(page, 'bin');
  assert(await t.sameDateFormat(page, 'bin') >= 4, 'the bin shows when items were deleted and go, as <time>');
  await page.evaluate(() => document.getElementById('toasts')?.replaceChildren());
  await t.screenshot(page, 'bin');

  // Restore the top-level project in place.
  await page.getByRole('button', { name: `Restore ${tag} scratch`, exact: true }).click();
  await page.getByRole('status').filter({ hasText: `Restored ${tag} scratch where it was` }).first().waitFor();
  assert(await status(t, `/api/metadata/project/${extra.id}`) === 200, 'restored in place');
  assert(await status(t, `/api/recycle-bin/project/${extra.id}`) === 404, 'no longer in the bin');

  // A live subproject now holds the deleted one's name: restoring in place is refused, and
  // the page says why and offers to restore elsewhere.
  const clash = await t.api('POST', `/api/metadata/project/${root.id}/subproject`, { body: { name: `${tag} data`, inheritsMembers: true } });
  await page.getByRole('button', { name: `Restore ${tag} data`, exact: true }).click();
  const alert = page.getByRole('alert').filter({ hasText: 'could not be restored where it was' });
  await alert.waitFor();
  const alertText = await alert.innerText();
  assert(/already exists/.test(alertText), `the clash is explained: ${alertText}`);
  await t.axe(page, 'bin with a refused restore');
  assert(await status(t, `/api/recycle-bin/project/${sub.id}`) === 200, 'still in the bin');

  await alert.getByRole('button', { name: 'Restore elsewhere…' }).click();
  dialog = page.getByRole('dialog');
  await dialog.getByLabel('Filter by name').fill(tag);
  await dialog.getByRole('button', { name: `Open ${tag}`, exact: true }).click();
  await dialog.getByText(`Destination: ${tag}`).waitFor();
  await dialog.getByRole('button', { name: `Open ${tag} target`, exact: true }).click();
  await dialog.getByText(`Destination: ${tag} target`).waitFor();
  await t.axe(page, 'restore picker');
  await dialog.getByRole('button', { name: 'Restore here' }).click();
  await dialog.waitFor({ state: 'detached' });
  await page.getByRole('status').filter({ hasText: `Restored ${tag} data into ${tag} target` }).first().waitFor();
  const restored = await t.api('GET', `/api/metadata/project/${sub.id}`);
  assert(restored.parentProjectId === target.id, `restored elsewhere: ${restored.parentProjectId}`);
  assert(await status(t, `/api/metadata/dataset/${levels.id}`) === 200, 'its dataset came back with it');
  assert(await status(t, `/api/metadata/project/${clash.id}`) === 200, 'the live namesake is untouched');

  // The dataset deleted before its project is an item again: delete it for good.
  await row(notes.name).waitFor();
  await page.getByRole('button', { name: `Delete for good ${notes.name}`, exact: true }).click();
  dialog = page.getByRole('dialog');
  const title = await dialog.getByRole('heading').innerText();
  assert(title.includes(notes.name), `the confirmation names the item: ${title}`);
  await t.axe(page, 'delete for good confirmation');
  await dialog.getByRole('button', { name: `Delete ${notes.name} for good` }).click();
  await page.getByRole('status').filter({ hasText: `${notes.name} was deleted for good` }).first().waitFor();
  assert(await status(t, `/api/recycle-bin/dataset/${notes.id}`) === 404, 'gone from the bin');
  assert(await status(t, `/api/metadata/dataset/${notes.id}`) === 404, 'and not live');
  await eventually(async () => await row(notes.name).count() === 0, { message: 'the item no longer listed' });

  // The same page at 360 px: no sideways scrolling.
  const narrow = await t.newPage({ viewport: { width: 360, height: 740 } });
  await t.signIn(narrow, { route: '/bin?scope=all' });
  await narrow.getByRole('heading', { name: 'Recycle bin', level: 1, exact: true }).waitFor();
  assert(await narrow.getByLabel('Everything I may restore').isChecked(), 'the scope is kept in the route');
  const overflow = await narrow.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
  assert(overflow <= 0, `no sideways scrolling at 360 px (overflow ${overflow})`);
  await t.axe(narrow, 'bin at 360 px');
  await t.screenshot(narrow, 'bin-360');
}
