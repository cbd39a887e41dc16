// The dataset page: real files uploaded through the API (upload URL, PUT, upload-convert) and
// opened in the console. A GeoTIFF and a DFSU mesh draw map tiles (pixels read back from the
// map's data canvas), the mesh's time slider draws another step, the legend shows the item's
// range and unit; a dfs0 is plotted from its own bytes (float items, a delete value as a gap,
// hover and keyboard read-outs); a GeoJSON draws vector tiles; a grid without a WGS 84 system
// says it cannot be mapped. The details panel lists items, units, times and the coordinate
// system. Actions: edit details with rowVersion, move to another project, delete to the
// recycle bin, with Undo. Every page passes axe at 1280 px; the mesh and the plot also at 360 px
// without sideways scrolling.
//
// Issue 33 ("what a new user hit"): the project's dataset table breaks names only between
// words and never a size at 1280 px; a zipped Shapefile is a Shapefile, not a "ZIP archive"; a
// cell size has six significant digits, not sixteen; an item named with its unit ("Height (m)")
// is not labelled "Height (m) (m)"; no tick of the plot or the colour legend is clipped, and the
// legend's ticks sit where their values are on the bar; every date is in one format.

import { readFileSync } from 'node:fs';

const REPO = new URL('../../../', import.meta.url);

async function upload(t, projectId, file, readerName, writerName, { bytes: given, name: named } = {}) {
  const bytes = given || readFileSync(new URL(file, REPO));
  const name = named || file.split('/').pop();
  const url = (await t.api('GET', `/api/conversion/transfer/upload-url?fileName=${encodeURIComponent(name)}`)).data;
  const put = await fetch(url, { method: 'PUT', headers: { 'x-ms-blob-type': 'BlockBlob' }, body: bytes });
  if (!put.ok) throw new Error(`PUT ${name}: HTTP ${put.status}`);
  const transfer = await t.api('POST', '/api/conversion/upload-convert', {
    body: {
      uploadUrl: url.split('?')[0], originalFileName: name, projectId, readerName, writerName,
      outputDatasetData: { name },
    },
  });
  const deadline = Date.now() + 60000;
  for (;;) {
    const record = await t.api('GET', `/api/conversion/transfer/${transfer.id}`);
    if (record.status === 'Completed') return record.importResults[0].datasetId;
    if (record.status === 'Error') throw new Error(`import of ${name}: ${record.errorMessage}`);
    if (Date.now() > deadline) throw new Error(`import of ${name} did not finish`);
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
}

/** A ZIP archive (stored, not compressed) of `files` ({name: bytes}): a zipped Shapefile. */
function zip(files) {
  const crc32 = (bytes) => {
    let crc = ~0;
    for (const byte of bytes) {
      crc ^= byte;
      for (let k = 0; k < 8; k += 1) crc = (crc >>> 1) ^ (0xedb88320 & -(crc & 1));
    }
    return ~crc >>> 0;
  };
  const locals = [];
  const centrals = [];
  let offset = 0;
  for (const [name, data] of Object.entries(files)) {
    const nameBytes = Buffer.from(name);
    const crc = crc32(data);
    const local = Buffer.alloc(30);
    local.writeUInt32LE(0x04034b50, 0); local.writeUInt16LE(20, 4); local.writeUInt16LE(33, 12);
    local.writeUInt32LE(crc, 14); local.writeUInt32LE(data.length, 18); local.writeUInt32LE(data.length, 22);
    local.writeUInt16LE(nameBytes.length, 26);
    const central = Buffer.alloc(46);
    central.writeUInt32LE(0x02014b50, 0); central.writeUInt16LE(20, 4); central.writeUInt16LE(20, 6); central.writeUInt16LE(33, 14);
    central.writeUInt32LE(crc, 16); central.writeUInt32LE(data.length, 20); central.writeUInt32LE(data.length, 24);
    central.writeUInt16LE(nameBytes.length, 28); central.writeUInt32LE(offset, 42);
    locals.push(local, nameBytes, data);
    centrals.push(central, nameBytes);
    offset += local.length + nameBytes.length + data.length;
  }
  const directory = Buffer.concat(centrals);
  const end = Buffer.alloc(22);
  end.writeUInt32LE(0x06054b50, 0); end.writeUInt16LE(Object.keys(files).length, 8); end.writeUInt16LE(Object.keys(files).length, 10);
  end.writeUInt32LE(directory.length, 12); end.writeUInt32LE(offset, 16);
  return Buffer.concat([...locals, directory, end]);
}

/** Where the page breaks lines inside the text of `selector`'s elements: each break after a
 *  character that is not a space, `_`, `.`, `-` or `/` (a break inside a word) as "name|rest". */
function midWordBreaks(page, selector) {
  return page.evaluate((sel) => {
    const found = [];
    for (const el of document.querySelectorAll(sel)) {
      const walker = document.createTreeWalker(el, NodeFilter.SHOW_TEXT);
      const chars = [];
      for (let node = walker.nextNode(); node; node = walker.nextNode()) {
        for (let i = 0; i < node.length; i += 1) chars.push({ node, i, c: node.data[i] });
      }
      let top = null;
      let text = '';
      for (const { node, i, c } of chars) {
        const range = document.createRange();
        range.setStart(node, i);
        range.setEnd(node, i + 1);
        const rect = range.getBoundingClientRect();
        if (top !== null && rect.height && rect.top > top + 2 && !/[\s_./-]$/.test(text)) found.push(`${text}|${c}`);
        if (rect.height) top = rect.top;
        text += c;
      }
    }
    return found;
  }, selector);
}

/** Non-transparent pixels of the map's data canvas (raster or vector) and a digest of them.
 *  map.js stacks canvases: basemap (or background), raster data, vector data. */
function mapPixels(page, kind = 'raster') {
  return page.evaluate((which) => {
    const root = document.querySelector('.dataset-map');
    const canvas = root?.querySelector(which === 'vector' ? 'canvas.map-vector' : 'canvas.map-data')
      || root?.querySelectorAll('canvas')[which === 'vector' ? 2 : 1];
    if (!canvas || !canvas.width || !canvas.height) return { painted: 0, digest: 0 };
    const data = canvas.getContext('2d').getImageData(0, 0, canvas.width, canvas.height).data;
    let painted = 0;
    let digest = 0;
    for (let i = 0; i < data.length; i += 4) {
      if (data[i + 3] > 0) {
        painted += 1;
        digest = (digest * 31 + data[i] * 7 + data[i + 1] * 3 + data[i + 2] + i) % 2147483647;
      }
    }
    return { painted, digest };
  }, kind);
}

/** Waits until the map has every tile in view (map.js sets data-tiles on its root). */
async function mapSettled(page) {
  await page.locator('.dataset-map .map[data-tiles="complete"]').waitFor({ timeout: 20000 });
}

async function facts(page) {
  return page.locator('.dataset-facts').innerText();
}

export async function run(t, { assert, eventually }) {
  const stamp = Date.now().toString(36);
  const project = await t.api('POST', '/api/metadata/project', { body: { name: `preview-${stamp}`, accessLevel: 'Private' } });
  const other = await t.api('POST', '/api/metadata/project', { body: { name: `preview-target-${stamp}`, accessLevel: 'Private' } });
  // The dfs0's first item, "WaterLevel" (m), renamed in place "Height (m)" (as long): an item
  // named with its unit, as many files name them.
  const dfs0 = readFileSync(new URL('tests/corpus/dfs-samples/ts_eq.dfs0', REPO));
  const itemAt = dfs0.indexOf('WaterLevel');
  assert(itemAt > 0, 'ts_eq.dfs0 names an item WaterLevel');
  dfs0.write('Height (m)', itemAt, 'latin1');
  const shapefile = zip(Object.fromEntries(['shp', 'shx', 'dbf', 'prj'].map((ext) => [`gre.${ext}`, readFileSync(new URL(`tests/corpus/fiona/gre.${ext}`, REPO))])));
  const [raster, mesh, series, vector, unmapped, odd] = await Promise.all([
    upload(t, project.id, 'crates/formats/tests/fixtures/geotiff/pixel_is_point_float64.tif', 'GeoTiffReader', 'GeoTiffWriter'),
    upload(t, project.id, 'tests/corpus/mikeio/HD2D.dfsu', 'DfsuReader', 'DfsuWriter'),
    upload(t, project.id, 'ts_eq.dfs0', 'Dfs0Reader', 'Dfs0Writer', { bytes: dfs0 }),
    upload(t, project.id, 'tests/corpus/fiona/grenada.geojson', 'GeoJsonReader', 'GeoJsonWriter'),
    upload(t, project.id, 'tests/corpus/dfs-samples/cube.dfs3', 'Dfs3Reader', 'Dfs3Writer'),
    // Cells of 3004.1772151898736 by 3034.225352112676 m.
    upload(t, project.id, 'tests/corpus/rasterio/rgb-byte-tenth.tif', 'GeoTiffReader', 'GeoTiffWriter'),
    upload(t, project.id, 'gre.zip', 'ShpReader', 'ShpWriter', { bytes: shapefile }),
  ]);

  const page = await t.newPage();
  // The project's datasets at 1280 px: names break only between words, sizes never; the
  // zipped Shapefile is listed as one; dates in the one format.
  await t.signIn(page, { route: `/projects/${project.id}` });
  const datasetTable = page.locator('table.datasets-table');
  await datasetTable.locator('tbody tr').nth(6).waitFor();
  const broken = await midWordBreaks(page, 'table.datasets-table td.name-cell a');
  assert(broken.length === 0, `dataset names broken inside a word at 1280 px: ${broken.join(', ')}`);
  const sizeLines = await page.locator('table.datasets-table td.num').evaluateAll((cells) => cells.map((cell) => {
    const range = document.createRange();
    range.selectNodeContents(cell);
    return [cell.textContent, new Set([...range.getClientRects()].map((r) => Math.round(r.top))).size];
  }));
  assert(sizeLines.every(([, lines]) => lines === 1), `sizes on one line: ${JSON.stringify(sizeLines)}`);
  const shapefileRow = datasetTable.locator('tr', { has: page.getByRole('link', { name: 'gre.zip', exact: true }) });
  assert((await shapefileRow.innerText()).includes('Zipped Shapefile'), `a zipped Shapefile is a Shapefile: ${await shapefileRow.innerText()}`);
  assert(await t.sameDateFormat(page, 'datasets of a project') >= 7, 'the dataset table shows its dates as <time>');

  await page.goto(`${t.base}/#/datasets/${raster}`);

  // A GeoTIFF: its coordinate system, extent and band; tiles drawn on the map; the legend.
  await page.getByRole('heading', { level: 1, name: 'pixel_is_point_float64.tif' }).waitFor();
  await page.getByRole('navigation', { name: 'Breadcrumb' }).getByRole('link', { name: `preview-${stamp}` }).waitFor();
  let text = await facts(page);
  assert(text.includes('EPSG:32632') && text.includes('UTM zone 32N'), `raster CRS: ${text}`);
  assert(text.includes('Band 1'), `raster item: ${text}`);
  assert(/WGS 84 extent/.test(text), 'raster WGS 84 extent');
  await eventually(async () => (await mapPixels(page)).painted > 500, { message: 'GeoTIFF tiles drawn', timeout: 20000 });
  await page.locator('.legend .legend-bar').waitFor();
  assert((await page.locator('.legend-tick').count()) >= 2, 'legend ticks');
  // Each tick's mark sits where its value is on the bar; no label goes past the bar's ends.
  const legend = await page.locator('.legend').evaluate((figure) => {
    const bar = figure.querySelector('.legend-bar').getBoundingClientRect();
    const min = Number(figure.dataset.min);
    const max = Number(figure.dataset.max);
    return [...figure.querySelectorAll('.legend-tick')].map((tick) => {
      const label = tick.querySelector('.legend-tick-label').getBoundingClientRect();
      const want = bar.left + ((Number(tick.dataset.value) - min) / (max - min)) * bar.width;
      return { off: Math.abs(tick.getBoundingClientRect().left - want), out: Math.max(bar.left - label.left, label.right - bar.right) };
    });
  });
  assert(legend.every((tick) => tick.off <= 1.5 && tick.out <= 0.5), `legend ticks on their values, inside the bar: ${JSON.stringify(legend)}`);
  await t.sameDateFormat(page, 'dataset details');
  await page.getByRole('link', { name: 'Download' }).waitFor();
  assert(/\/basin\/datasets\//.test(await page.getByRole('link', { name: 'Download' }).getAttribute('href')), 'download link is a signed read URL');
  const [download] = await Promise.all([page.waitForEvent('download'), page.getByRole('link', { name: 'Download' }).click()]);
  assert(download.suggestedFilename() === 'pixel_is_point_float64.tif', `download name ${download.suggestedFilename()}`);
  await page.getByRole('button', { name: 'Convert or export…' }).click();
  await page.getByRole('dialog').waitFor();
  await page.keyboard.press('Escape');
  await page.getByRole('dialog').waitFor({ state: 'detached' });
  await t.axe(page, 'dataset raster');
  await mapSettled(page);
  await t.screenshot(page, 'dataset-raster');

  // A DFSU mesh: items with units from the file, 9 time steps; the slider draws another step.
  await page.goto(`${t.base}/#/datasets/${mesh}`);
  await page.getByRole('heading', { level: 1, name: 'HD2D.dfsu' }).waitFor();
  text = await facts(page);
  assert(text.includes('EPSG:32629'), `mesh CRS: ${text}`);
  assert(/Surface elevation[\s\S]*\bm\b/.test(text) && text.includes('m/s'), `mesh items with units: ${text}`);
  // Times of the file in the console's one date format (its wall clock, no zone).
  const fileTime = (iso) => page.evaluate((value) => new Intl.DateTimeFormat(undefined, {
    year: 'numeric', month: 'short', day: 'numeric', hour: '2-digit', minute: '2-digit', timeZone: 'UTC',
  }).format(new Date(`${value}Z`)), iso);
  assert(/Time steps\s*9/.test(text) && text.includes(await fileTime('1985-08-06T07:00')) && text.includes('2 h 30 min'), `mesh time axis: ${text}`);
  await t.sameDateFormat(page, 'mesh details');
  assert(text.includes('884 elements'), `mesh size: ${text}`);
  const item = page.getByLabel('Item', { exact: true });
  assert((await item.locator('option').count()) === 4, 'one item choice per XYZ scheme');
  await eventually(async () => (await mapPixels(page)).painted > 500, { message: 'mesh tiles drawn', timeout: 20000 });
  await page.waitForTimeout(300);
  const first = await mapPixels(page);
  assert((await page.locator('.legend figcaption').innerText()).includes('Surface elevation (m)'), 'legend names the item and unit');
  // The value under the pointer, with its unit and position, read out.
  const frame = await page.locator('.dataset-map').boundingBox();
  let valueRead = null;
  for (let i = 0; i < 225 && !valueRead; i += 1) {
    await page.mouse.move(frame.x + frame.width * (0.3 + 0.4 * (i % 15) / 14), frame.y + frame.height * (0.15 + 0.7 * Math.floor(i / 15) / 14));
    valueRead = await eventually(async () => {
      const said = await page.locator('.map-readout').innerText();
      return /reading/.test(said) ? null : said;
    }, { message: 'a settled read-out' }).then((said) => (/Surface elevation \d[\d.]* m$/.test(said) ? said : null));
  }
  assert(valueRead && /\d+\.\d{4}° N, \d+\.\d{4}° W: Surface elevation/.test(valueRead), `value under the pointer: ${valueRead}`);
  const slider = page.getByRole('slider', { name: 'Time step' });
  await slider.focus();
  await page.keyboard.press('End');
  await page.locator('.time-output', { hasText: 'step 9 of 9' }).waitFor();
  assert((await slider.getAttribute('aria-valuetext')).includes(await fileTime('1985-08-07T03:00')), 'the slider names the time');
  await eventually(async () => {
    const now = await mapPixels(page);
    return now.painted > 500 && now.digest !== first.digest;
  }, { message: 'another time step drawn', timeout: 20000 });
  // Another item redraws with its own legend.
  await item.selectOption({ label: 'Current speed (m/s)' });
  await page.locator('.legend figcaption', { hasText: 'Current speed (m/s)' }).waitFor();
  // Play steps through time; pause stops.
  await page.getByRole('button', { name: 'Play' }).click();
  await page.locator('.time-output', { hasText: 'step 1 of 9' }).waitFor({ timeout: 10000 });
  await page.getByRole('button', { name: 'Pause' }).click();
  await eventually(async () => (await mapPixels(page)).painted > 500, { message: 'tiles after pausing', timeout: 20000 });
  await t.axe(page, 'dataset mesh');
  await mapSettled(page);
  await t.screenshot(page, 'dataset-mesh');

  // A dfs0: plotted from its bytes; the delete value is a gap; read-outs by pointer and keys.
  await page.goto(`${t.base}/#/datasets/${series}`);
  await page.getByRole('heading', { level: 1, name: 'ts_eq.dfs0' }).waitFor();
  const lines = page.locator('.plot-line');
  await lines.first().waitFor();
  assert((await lines.count()) === 2, 'one line per item');
  const points = Number(await lines.first().getAttribute('data-points'));
  assert(points === 10, `water level line has its 10 points (${points})`);
  const gap = await lines.nth(1).getAttribute('d');
  assert((gap.match(/M/g) || []).length === 2, `the missing discharge value breaks the line: ${gap}`);
  text = await facts(page);
  assert(text.includes('Height (m)') && text.includes('m³/s') && /Time steps\s*10/.test(text) && text.includes('30 min'), `dfs0 facts: ${text}`);
  await t.sameDateFormat(page, 'time series details');
  // The item named with its unit keeps its name; the other gets its unit.
  const legendItems = await page.locator('.plot-legend li').allInnerTexts();
  assert(legendItems.map((s) => s.trim()).join('|') === 'Height (m)|Discharge (m³/s)', `plot legend: ${legendItems.join('|')}`);
  // No label of the plot sticks out of it (the last time tick, centred on the right edge).
  const clipped = () => page.locator('.plot-svg').evaluate((svg) => {
    const width = svg.viewBox.baseVal.width;
    return [...svg.querySelectorAll('text:not([transform])')]
      .map((el) => ({ text: el.textContent, box: el.getBBox() }))
      .filter(({ box }) => box.x < -0.5 || box.x + box.width > width + 0.5)
      .map(({ text, box }) => `${text} at ${box.x.toFixed(1)}..${(box.x + box.width).toFixed(1)} of ${width}`);
  });
  assert((await clipped()).length === 0, `plot labels clipped: ${await clipped()}`);
  const box = await page.locator('.plot-svg').boundingBox();
  await page.mouse.move(box.x + box.width * 0.5, box.y + box.height * 0.5);
  await page.locator('.plot-readout', { hasText: 'Height (m)' }).waitFor();
  await page.locator('.plot-svg').focus();
  await page.keyboard.press('Home');
  await page.locator('.plot-readout', { hasText: `${await fileTime('2024-01-15T06:00')} (step 1 of 10)` }).waitFor();
  for (let i = 0; i < 3; i += 1) await page.keyboard.press('ArrowRight');
  const readout = await page.locator('.plot-readout').innerText();
  assert(readout.includes('step 4 of 10') && readout.includes('Height (m) 2 m') && readout.includes('Discharge no value'), `keyboard read-out: ${readout}`);
  // Zooming in time: + narrows the view around the cursor (to 09:00, a tick on the right
  // edge), 0 shows every step again.
  await page.keyboard.press('+');
  await page.locator('.plot-span', { hasText: 'Showing steps' }).waitFor();
  assert(Number(await lines.first().getAttribute('data-points')) < 10, 'a zoomed view draws fewer steps');
  assert((await clipped()).length === 0, `plot labels clipped when zoomed: ${await clipped()}`);
  // Hiding a series removes its line. One value axis leaves a narrow right margin: the 09:00
  // at the edge still shows whole.
  await page.getByLabel('Discharge (m³/s)').uncheck();
  await eventually(async () => (await lines.count()) === 1, { message: 'a hidden series' });
  assert((await clipped()).length === 0, `plot labels clipped with one value axis: ${await clipped()}`);
  await page.getByLabel('Discharge (m³/s)').check();
  await page.locator('.plot-svg').focus();
  await page.keyboard.press('0');
  await eventually(async () => (await page.locator('.plot-span').innerText()) === '', { message: 'zoom reset' });
  await page.getByText('Values as a table').click();
  await page.locator('.values-table tbody tr').nth(9).waitFor();
  assert((await page.locator('.values-table tbody tr').count()) === 10, 'the values table');
  await t.axe(page, 'dataset time series');
  await t.screenshot(page, 'dataset-timeseries');

  // GeoJSON: vector tiles on the map.
  await page.goto(`${t.base}/#/datasets/${vector}`);
  await page.getByRole('heading', { level: 1, name: 'grenada.geojson' }).waitFor();
  assert((await facts(page)).includes('EPSG:4326'), 'vector CRS');
  await eventually(async () => (await mapPixels(page, 'vector')).painted > 100, { message: 'vector tiles drawn', timeout: 20000 });
  const island = await page.locator('.dataset-map').boundingBox();
  await page.mouse.move(island.x + island.width * 0.45, island.y + island.height * 0.5);
  await page.locator('.feature-readout', { hasText: 'Grenada' }).waitFor();
  assert((await page.locator('.feature-readout dt').allInnerTexts()).includes('name'), 'feature attributes listed');
  await t.axe(page, 'dataset vector');

  // A grid in a local system (NON-UTM): no map, said plainly; its layers are listed.
  await page.goto(`${t.base}/#/datasets/${unmapped}`);
  await page.getByRole('heading', { level: 1, name: 'cube.dfs3' }).waitFor();
  await page.getByText('cannot be shown on the web map').waitFor();
  text = await facts(page);
  assert(text.includes('NON-UTM') && /Vertical layers\s*2/.test(text), `local grid facts: ${text}`);

  // A cell size of 3004.1772151898736 m reads 3004.18 m.
  await page.goto(`${t.base}/#/datasets/${odd}`);
  await page.getByRole('heading', { level: 1, name: 'rgb-byte-tenth.tif' }).waitFor();
  text = await facts(page);
  assert(/Cell size\s*3004\.18 m\b/.test(text) && !text.includes('3004.177'), `cell size: ${text}`);

  // 360 px: no sideways scrolling, controls reachable.
  const narrow = await t.newPage({ viewport: { width: 360, height: 740 } });
  await t.signIn(narrow, { route: `/datasets/${mesh}` });
  await narrow.getByRole('heading', { level: 1, name: 'HD2D.dfsu' }).waitFor();
  await eventually(async () => (await mapPixels(narrow)).painted > 200, { message: 'mesh tiles at 360 px', timeout: 20000 });
  let overflow = await narrow.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
  assert(overflow <= 0, `mesh page at 360 px scrolls sideways by ${overflow}`);
  await t.axe(narrow, 'dataset mesh at 360 px');
  await narrow.goto(`${t.base}/#/datasets/${series}`);
  await narrow.locator('.plot-line').first().waitFor();
  overflow = await narrow.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
  assert(overflow <= 0, `plot page at 360 px scrolls sideways by ${overflow}`);
  await t.axe(narrow, 'dataset time series at 360 px');

  // A Reader (an API key of role User; the project is Shared) may download and convert, but
  // is not offered edit, move or delete.
  const me = await t.api('GET', '/api/iam/principal/me');
  await t.api('PATCH', '/api/metadata/project', { body: { id: project.id, accessLevel: 'Shared' } });
  const readerKey = (await t.api('POST', `/api/admin/tenants/${me.tenantId}/api-keys`, { body: { name: `preview-reader-${stamp}`, role: 'User' } })).apiKey;
  const reader = await t.newPage();
  await t.signIn(reader, { value: readerKey, route: `/datasets/${mesh}` });
  await reader.getByRole('heading', { level: 1, name: 'HD2D.dfsu' }).waitFor();
  await reader.getByRole('link', { name: 'Download' }).waitFor();
  await reader.getByRole('button', { name: 'Convert or export…' }).waitFor();
  for (const name of ['Edit details…', 'Move…', 'Delete']) {
    assert((await reader.getByRole('button', { name }).count()) === 0, `a Reader is not offered ${name}`);
  }

  // Actions: edit details (name, description, tags), move, delete to the recycle bin.
  await page.goto(`${t.base}/#/datasets/${series}`);
  await page.getByRole('button', { name: 'Edit details…' }).click();
  const edit = page.getByRole('dialog', { name: 'Edit dataset' });
  await edit.getByLabel('Name').fill('gauge.dfs0');
  await edit.getByLabel('Description').fill('Water level and discharge at the gauge');
  await edit.getByLabel('Tags').fill('gauge, observed');
  await edit.getByRole('button', { name: 'Save' }).click();
  await page.getByRole('heading', { level: 1, name: 'gauge.dfs0' }).waitFor();
  const edited = await t.api('GET', `/api/metadata/dataset/${series}`);
  assert(edited.name === 'gauge.dfs0' && edited.description.startsWith('Water level') && edited.tags.join() === 'gauge,observed', `edited: ${JSON.stringify(edited)}`);
  assert((await facts(page)).includes('observed'), 'tags shown');

  await page.getByRole('button', { name: 'Move…' }).click();
  const move = page.getByRole('dialog', { name: 'Move gauge.dfs0' });
  const target = move.getByLabel('To project');
  await eventually(async () => (await target.locator('option', { hasText: `preview-target-${stamp}` }).count()) === 1, { message: 'move targets' });
  await target.selectOption({ label: `preview-target-${stamp}` });
  await move.getByRole('button', { name: 'Move' }).click();
  await page.getByRole('navigation', { name: 'Breadcrumb' }).getByRole('link', { name: `preview-target-${stamp}` }).waitFor();
  assert((await t.api('GET', `/api/metadata/dataset/${series}`)).projectId === other.id, 'moved');

  await page.getByRole('button', { name: 'Delete' }).click();
  await page.getByRole('dialog', { name: 'Delete gauge.dfs0?' }).getByRole('button', { name: 'Move to recycle bin' }).click();
  await page.waitForFunction((id) => location.hash === `#/projects/${id}`, other.id);
  const gone = await fetch(`${t.base}/api/metadata/dataset/${series}`, { headers: { 'svc-open-api-key': t.key } });
  assert(gone.status === 404, `deleted dataset answers ${gone.status}`);
  // As after deleting a subproject: the project's page offers Undo, which restores it in place.
  await page.getByRole('button', { name: 'Undo: restore gauge.dfs0' }).click();
  await page.getByText('Restored “gauge.dfs0”.').waitFor();
  await page.getByRole('link', { name: 'gauge.dfs0', exact: true }).waitFor();
  const restored = await t.api('GET', `/api/metadata/dataset/${series}`);
  assert(restored.projectId === other.id, 'restored in place');
}
