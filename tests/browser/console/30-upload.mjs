// The upload panel of a project page: files picked with the file input (a GeoTIFF, a DFS2, an
// ASCII grid) and dropped on the drop zone (a DFS0, a synthetic drop), a folder picked with the
// folder input and one dragged in by Chromium (folders become subprojects, empty ones too);
// import with readers and writers of the catalogue (a writer option and the reader's SRID set
// in the forms, the SRID with the CRS picker) and as a plain copy; a dataset converted through
// the convert dialog with a reprojection chosen in the CRS picker by keyboard; a large file
// whose upload loses the network part-way, pauses, survives a reload of the page (which lists
// it as an unfinished upload to choose again), resumes without sending a staged block again
// (by itself when the browser reports the network back, saying so), pauses without its
// progress going back, and arrives byte for byte. The test files are the repository's own
// (tests/corpus, with their licences there); the others are made here.

import { createHash, randomBytes } from 'node:crypto';
import { mkdirSync, mkdtempSync, readFileSync, writeFileSync, copyFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const here = path.dirname(fileURLToPath(import.meta.url));
const corpus = path.resolve(here, '../../corpus');
const TIF = path.join(corpus, 'rasterio/byte.tif');
const DFS2 = path.join(corpus, 'dfs-samples/grid_utm32.dfs2');
const DFS0 = path.join(corpus, 'dfs-samples/ts_eq.dfs0');
const DFS2_LONGLAT = path.join(corpus, 'dfs-samples/grid_longlat.dfs2');

const blockId = (index) => Buffer.from(`block-${String(index).padStart(6, '0')}`).toString('base64');
const sha256 = (bytes) => createHash('sha256').update(bytes).digest('hex');

export async function run(t, { assert, eventually }) {
  const stamp = `${Date.now().toString(36)}${Math.floor(Math.random() * 1e4)}`;
  const project = await t.api('POST', '/api/metadata/project', { body: { name: `Upload e2e ${stamp}` } });
  const page = await t.newPage();
  await t.signIn(page, { route: `/projects/${project.id}` });
  const zone = page.locator('.drop-zone');
  await zone.waitFor();
  await t.axe(page, 'project page with the upload panel');

  const item = (name) => page.locator(`.upload-item[data-name="${name}"]`);
  const state = (name) => item(name).locator('.upload-state').textContent();
  const waitState = (name, wanted, timeout = 20000) => eventually(async () => (await state(name)).startsWith(wanted),
    { timeout, message: `${name} ${wanted}` });

  // Two files through the file input, one through a drop.
  await page.locator('input.upload-file-input').setInputFiles([TIF, DFS2]);
  const dropped = await page.evaluateHandle(({ base64, name }) => {
    const binary = atob(base64);
    const bytes = new Uint8Array(binary.length);
    for (let i = 0; i < binary.length; i += 1) bytes[i] = binary.charCodeAt(i);
    const transfer = new DataTransfer();
    transfer.items.add(new File([bytes], name, { type: 'application/octet-stream' }));
    return transfer;
  }, { base64: readFileSync(DFS0).toString('base64'), name: 'ts_eq.dfs0' });
  await zone.dispatchEvent('dragenter', { dataTransfer: dropped });
  await zone.dispatchEvent('dragover', { dataTransfer: dropped });
  await zone.dispatchEvent('drop', { dataTransfer: dropped });
  // An ASCII grid without a .prj: its coordinate system is a reader option, set with the
  // CRS picker by typing a code.
  const grid = `ncols 4\nnrows 3\nxllcorner 500000\nyllcorner 6200000\ncellsize 100\nNODATA_value -9999\n${'1 2 3 4\n'.repeat(3)}`;
  await page.locator('input.upload-file-input').setInputFiles({ name: 'depth.asc', mimeType: 'text/plain', buffer: Buffer.from(grid) });
  for (const name of ['byte.tif', 'grid_utm32.dfs2', 'ts_eq.dfs0', 'depth.asc']) await waitState(name, 'Uploaded');
  assert(await item('depth.asc').getByLabel('Read as').inputValue() === 'AsciiGridReader', 'AsciiGridReader chosen for .asc');
  await item('depth.asc').locator('summary').first().click();
  await item('depth.asc').getByLabel('Writer', { exact: true }).selectOption('GeoTiffWriter');
  await item('depth.asc').getByText('Reader options (1)').click();
  const sridBox = item('depth.asc').getByRole('combobox', { name: 'SRID' });
  await sridBox.fill('25832');
  await item('depth.asc').getByRole('option', { name: /EPSG:25832 ETRS89 \/ UTM zone 32N/ }).waitFor();
  await sridBox.press('Enter');
  await item('depth.asc').getByText('Chosen: EPSG:25832 · ETRS89 / UTM zone 32N').waitFor();
  assert(await item('depth.asc').getByLabel('Dataset name').inputValue() === 'depth.tif', 'the name follows the writer');

  // The matching readers are chosen; the DFS0 is stored as it is; the GeoTIFF is written
  // uncompressed (a writer option).
  assert(await item('byte.tif').getByLabel('Read as').inputValue() === 'GeoTiffReader', 'GeoTiffReader chosen for .tif');
  assert(await item('byte.tif').getByLabel('Writer', { exact: true }).inputValue() === 'GeoTiffWriter', 'GeoTiffWriter chosen');
  assert(await item('grid_utm32.dfs2').getByLabel('Read as').inputValue() === 'Dfs2Reader', 'Dfs2Reader chosen for .dfs2');
  await item('ts_eq.dfs0').locator('summary').first().click();
  await item('ts_eq.dfs0').getByLabel('Read as').selectOption({ label: 'Store the file as it is' });
  await item('byte.tif').locator('summary').first().click();
  await item('byte.tif').getByText('Writer options (4)').click();
  await item('byte.tif').getByLabel('Compression').selectOption('NONE');
  await item('byte.tif').getByLabel('Dataset name').fill(`byte ${stamp}`);
  await t.axe(page, 'upload queue with import settings');
  await page.locator('.upload-panel').evaluate((panel) => panel.scrollIntoView());
  await t.screenshot(page, 'upload');

  await page.getByRole('button', { name: 'Import all' }).click();
  for (const name of ['byte.tif', 'grid_utm32.dfs2', 'ts_eq.dfs0', 'depth.asc']) await waitState(name, 'Imported');
  await item('byte.tif').getByRole('link', { name: `Open byte ${stamp}` }).waitFor();

  const listed = await t.api('GET', `/api/metadata/project/${project.id}/dataset/list`);
  const byName = Object.fromEntries(listed.data.map((d) => [d.name, d]));
  assert(byName[`byte ${stamp}`]?.datasetFormat === '.tif', `GeoTIFF imported: ${JSON.stringify(Object.keys(byName))}`);
  assert(byName['grid_utm32.dfs2']?.datasetFormat === '.dfs2', 'DFS2 imported with its reader');
  assert(byName['ts_eq.dfs0'], 'DFS0 stored as it is');
  const depth = await t.api('GET', `/api/metadata/dataset/${byName['depth.tif']?.id}`);
  assert(depth.datasetFormat === '.tif' && depth.spatialInformation?.srid === 25832, `ASCII grid imported in EPSG:25832: ${JSON.stringify(depth.spatialInformation?.srid)}`);
  const dfs0Raw = await t.api('GET', `/api/raw/dataset/${byName['ts_eq.dfs0'].id}`);
  const dfs0Bytes = Buffer.from(await (await fetch(dfs0Raw.data)).arrayBuffer());
  assert(dfs0Bytes.equals(readFileSync(DFS0)), 'the plain copy keeps the bytes');
  const transfers = await t.api('GET', `/api/conversion/transfer/list?projectId=${project.id}&limit=10`);
  const tifTransfer = await Promise.all(transfers.data.map((s) => t.api('GET', `/api/conversion/transfer/${s.id}`)))
    .then((records) => records.find((r) => r.datasetImportData?.name === `byte ${stamp}`));
  assert(tifTransfer?.exportParameters?.arguments?.Compression === 'NONE'
    || JSON.stringify(tifTransfer?.exportParameters?.arguments || {}).includes('NONE'),
  `the writer option reached the transfer: ${JSON.stringify(tifTransfer?.exportParameters)}`);
  assert(tifTransfer.importParameters.readerName === 'GeoTiffReader', 'read with GeoTiffReader');

  // Convert the DFS2 through its page: GeoTIFF in WGS 84, the CRS found with the picker.
  await page.goto(`${t.base}/#/datasets/${byName['grid_utm32.dfs2'].id}`);
  await page.getByRole('button', { name: 'Convert or export…' }).click();
  const convert = page.getByRole('dialog', { name: /Convert or export/ });
  await convert.getByLabel(/^Writer/).selectOption('GeoTiffWriter');
  await convert.getByLabel('Reproject').check();
  const crs = convert.getByRole('combobox', { name: 'Output coordinate system' });
  await crs.fill('WGS 84');
  await convert.getByRole('option', { name: /EPSG:4326\b/ }).waitFor();
  await t.axe(page, 'convert dialog with the CRS list open');
  // Keyboard: down to the options until EPSG:4326 is the active one, then Enter.
  for (let i = 0; i < 12; i += 1) {
    await crs.press('ArrowDown');
    const active = await crs.getAttribute('aria-activedescendant');
    if (active && (await page.locator(`#${active}`).textContent()).startsWith('EPSG:4326 ')) break;
  }
  await crs.press('Enter');
  await convert.getByText('Chosen: EPSG:4326 · WGS 84').waitFor();
  await convert.getByLabel('New dataset name').fill(`grid wgs84 ${stamp}`);
  await convert.getByRole('button', { name: 'Start' }).click();
  const follow = page.getByRole('dialog', { name: 'Conversion started' });
  await follow.getByText('Completed').waitFor({ timeout: 20000 });
  await follow.getByRole('link', { name: `Open grid wgs84 ${stamp}` }).waitFor();
  const followStatus = await follow.locator('.follow-status').innerText();
  assert(!/null|undefined/.test(followStatus), `the transfer's status reads "${followStatus}"`);
  await follow.getByRole('button', { name: 'Close' }).click();
  const afterConvert = await t.api('GET', `/api/metadata/project/${project.id}/dataset/list`);
  const converted = afterConvert.data.find((d) => d.name === `grid wgs84 ${stamp}`);
  assert(converted && converted.datasetFormat === '.tif', 'the converted dataset exists as GeoTIFF');
  const convertedRecord = await t.api('GET', `/api/metadata/dataset/${converted.id}`);
  assert(convertedRecord.spatialInformation?.srid === 4326, `reprojected to 4326: ${JSON.stringify(convertedRecord.spatialInformation?.srid)}`);

  // A folder keeps its structure as subprojects.
  const work = mkdtempSync(path.join(os.tmpdir(), 'basin-upload-'));
  const folder = path.join(work, `survey-${stamp}`);
  mkdirSync(path.join(folder, 'grids'), { recursive: true });
  copyFileSync(DFS2_LONGLAT, path.join(folder, 'grids', 'grid_longlat.dfs2'));
  writeFileSync(path.join(folder, 'notes.txt'), 'Survey notes\n');
  await page.goto(`${t.base}/#/projects/${project.id}`);
  await zone.waitFor();
  await page.locator('input.upload-folder-input').setInputFiles(folder);
  await waitState('grid_longlat.dfs2', 'Uploaded');
  await waitState('notes.txt', 'Uploaded');
  await item('grid_longlat.dfs2').getByText(`Into the subproject survey-${stamp}/grids`).waitFor();
  await page.getByRole('button', { name: 'Import all' }).click();
  await waitState('grid_longlat.dfs2', 'Imported');
  await waitState('notes.txt', 'Imported');
  const tree = await t.api('GET', `/api/metadata/project/${project.id}/offset-list-recursive?limit=100`);
  const grids = tree.data.find((p) => p.relativePath === `survey-${stamp}/grids`);
  const survey = tree.data.find((p) => p.relativePath === `survey-${stamp}`);
  assert(grids && survey, `subprojects made: ${JSON.stringify(tree.data.map((p) => p.relativePath))}`);
  const inGrids = await t.api('GET', `/api/metadata/project/${grids.id}/dataset/list`);
  assert(inGrids.data.some((d) => d.name === 'grid_longlat.dfs2' && d.datasetFormat === '.dfs2'), 'the DFS2 is in survey/grids');
  const inSurvey = await t.api('GET', `/api/metadata/project/${survey.id}/dataset/list`);
  assert(inSurvey.data.some((d) => d.name === 'notes.txt'), 'notes.txt is in survey');
  await page.getByRole('button', { name: 'Clear finished' }).click();

  // A folder dragged from the desktop (Chromium's own drag and drop, through DevTools): the
  // drop zone walks it, empty folders included.
  const dragged = path.join(work, `drop-${stamp}`);
  mkdirSync(path.join(dragged, 'deep'), { recursive: true });
  mkdirSync(path.join(dragged, 'empty'), { recursive: true });
  copyFileSync(DFS0, path.join(dragged, 'deep', 'levels.dfs0'));
  const box = await zone.boundingBox();
  const cdp = await page.context().newCDPSession(page);
  const at = { x: box.x + box.width / 2, y: box.y + box.height / 2 };
  const drag = { items: [], files: [dragged], dragOperationsMask: 1 };
  for (const type of ['dragEnter', 'dragOver', 'drop']) await cdp.send('Input.dispatchDragEvent', { type, ...at, data: drag });
  await waitState('levels.dfs0', 'Uploaded');
  assert(await item('levels.dfs0').locator('.upload-name').textContent() === `drop-${stamp}/deep/levels.dfs0`, 'the path is kept');
  await page.getByRole('button', { name: 'Import all' }).click();
  await waitState('levels.dfs0', 'Imported');
  const dropTree = await t.api('GET', `/api/metadata/project/${project.id}/offset-list-recursive?limit=100`);
  for (const wanted of [`drop-${stamp}`, `drop-${stamp}/deep`, `drop-${stamp}/empty`]) {
    assert(dropTree.data.some((p) => p.relativePath === wanted), `${wanted} made: ${JSON.stringify(dropTree.data.map((p) => p.relativePath))}`);
  }
  await page.getByRole('button', { name: 'Clear finished' }).click();

  // A large file: block 1 cannot get through, the upload pauses; after a reload the same file
  // resumes from the staged blocks; once the network is back, Resume finishes it.
  const big = path.join(work, `soundings-${stamp}.bin`);
  const bigBytes = randomBytes(9 * 1024 * 1024 + 12345);
  writeFileSync(big, bigBytes);
  const bigName = path.basename(big);
  const staged = new Map();
  const blockOf = (url) => new URL(url).searchParams.get('blockid');
  page.context().on('requestfinished', async (request) => {
    if (request.method() !== 'PUT' || !request.url().includes('comp=block&')) return;
    const response = await request.response();
    if (response && response.status() === 201) staged.set(blockOf(request.url()), (staged.get(blockOf(request.url())) || 0) + 1);
  });
  const failing = `blockid=${encodeURIComponent(blockId(1))}`;
  const abortBlock = (route) => route.abort('internetdisconnected');
  const isFailing = (url) => url.href.includes(failing);
  await page.context().route(isFailing, abortBlock);
  await page.locator('input.upload-file-input').setInputFiles(big);
  await waitState(bigName, 'Paused', 30000);
  await item(bigName).getByRole('button', { name: `Resume ${bigName}` }).waitFor();
  await item(bigName).getByText('The network is not answering').waitFor();
  await eventually(() => staged.get(blockId(0)) === 1 && staged.get(blockId(2)) === 1, { message: 'blocks 0 and 2 staged' });
  await t.screenshot(page, 'upload-paused');

  await page.reload();
  await zone.waitFor();
  // After the reload the panel says what was not finished and how to go on.
  const unfinished = page.locator('.upload-resumable');
  await unfinished.getByText(bigName).waitFor();
  assert(/Choose or drop the same file again/.test(await unfinished.innerText()) && /2 of 3 parts/.test(await unfinished.innerText()),
    `the unfinished upload is listed: ${await unfinished.innerText()}`);
  await t.axe(page, 'unfinished upload after a reload');
  await page.locator('input.upload-file-input').setInputFiles(big);
  await item(bigName).getByText(/resuming: 2 parts already sent/).waitFor();
  await unfinished.waitFor({ state: 'hidden' });
  await waitState(bigName, 'Paused', 30000);
  await page.context().unroute(isFailing, abortBlock);
  // The network is back, slowly (2 MiB/s up): the browser says so and the upload goes on by
  // itself, and says it does.
  const network = await page.context().newCDPSession(page);
  await network.send('Network.enable');
  await network.send('Network.emulateNetworkConditions', { offline: false, latency: 0, downloadThroughput: -1, uploadThroughput: 2 * 1024 * 1024 });
  await page.evaluate(() => window.dispatchEvent(new Event('online')));
  await waitState(bigName, 'Uploading');
  const announcer = page.locator('.upload-announcer');
  await eventually(async () => /network is back, uploading again/.test(await announcer.textContent()), { message: 'the resumption announced' });
  const rowText = await item(bigName).innerText();
  assert(!/not answering/.test(rowText + await announcer.textContent()) && /network is back/.test(rowText), `the row after resuming by itself: ${rowText}`);
  // Pause while block 1 is on its way: the bar never goes back (the block on its way is
  // finished, and it was the last: the file is then uploaded).
  const bar = item(bigName).locator('progress');
  const stagedBytes = 4 * 1024 * 1024 + (bigBytes.length - 8 * 1024 * 1024);
  const before = await eventually(async () => {
    const value = await bar.evaluate((p) => p.value);
    return value > stagedBytes + 256 * 1024 ? value : null;
  }, { interval: 25, message: 'block 1 on its way' });
  await item(bigName).getByRole('button', { name: `Pause ${bigName}` }).click();
  let lowest = Infinity;
  await eventually(async () => {
    lowest = Math.min(lowest, await bar.evaluate((p) => p.value));
    return /^(Uploaded|Paused)/.test(await state(bigName));
  }, { interval: 25, timeout: 30000, message: 'the pause to take hold' });
  lowest = Math.min(lowest, await bar.evaluate((p) => p.value));
  assert(lowest >= before, `the progress went back on pause: ${before} -> ${lowest}`);
  await network.send('Network.emulateNetworkConditions', { offline: false, latency: 0, downloadThroughput: -1, uploadThroughput: -1 });
  if ((await state(bigName)).startsWith('Paused')) await item(bigName).getByRole('button', { name: `Resume ${bigName}` }).click();
  await waitState(bigName, 'Uploaded', 30000);
  assert(staged.get(blockId(0)) === 1 && staged.get(blockId(2)) === 1 && staged.get(blockId(1)) === 1,
    `each block staged exactly once: ${JSON.stringify([...staged])}`);
  assert(await item(bigName).getByLabel('Read as').inputValue() === '', 'no reader for .bin: stored as it is');
  await item(bigName).getByRole('button', { name: `Import ${bigName}` }).click();
  await waitState(bigName, 'Imported', 30000);
  const bigDataset = (await t.api('GET', `/api/metadata/project/${project.id}/dataset/list`)).data.find((d) => d.name === bigName);
  assert(bigDataset && bigDataset.storageSize === bigBytes.length, `stored with its size: ${JSON.stringify(bigDataset)}`);
  const raw = await t.api('GET', `/api/raw/dataset/${bigDataset.id}`);
  const stored = Buffer.from(await (await fetch(raw.data)).arrayBuffer());
  assert(sha256(stored) === sha256(bigBytes), 'the stored blob is byte-identical');
  assert(await page.evaluate(() => Object.keys(sessionStorage).filter((k) => k.startsWith('basin.upload:')).length) === 0,
    'no resume record is left once imported');

  // The aborted block requests were logged by Chromium as failed loads: those were the test's.
  t.problems.splice(0, t.problems.length, ...t.problems.filter((p) => !/ERR_INTERNET_DISCONNECTED/.test(p)));

  // 360 px: no sideways scrolling with a queue on the page.
  const narrow = await t.newPage({ viewport: { width: 360, height: 740 } });
  await t.signIn(narrow, { route: `/projects/${project.id}` });
  await narrow.locator('.drop-zone').waitFor();
  await narrow.locator('input.upload-file-input').setInputFiles([TIF, DFS0]);
  await narrow.locator('.upload-item[data-name="byte.tif"] .upload-state', { hasText: 'Uploaded' }).waitFor();
  await narrow.locator('.upload-item[data-name="byte.tif"] summary').first().click();
  const overflow = await narrow.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
  assert(overflow <= 0, `no sideways scrolling at 360 px (overflow ${overflow})`);
  await t.axe(narrow, 'upload queue at 360 px');
  await t.screenshot(narrow, 'upload-narrow');
}
