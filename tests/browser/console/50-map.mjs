// The console's map (map.js, mvt.js) on its own, mounted in the signed-in console page:
// raster tiles of an imported GeoTIFF drawn with the scheme's colour ramp, the exact value
// under the cursor (from `outputType=RawData` tiles) equal to the file's cells, zoom and pan by
// keyboard, buttons, wheel, double click and drag, another time step swapped in without a blank
// frame, vector tiles of an imported GeoJSON drawn and their features reported under the
// cursor, and axe on the page at 1280 and 360 px.

import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { Failure } from '../console-e2e.mjs';

const here = path.dirname(fileURLToPath(import.meta.url));
const repo = path.resolve(here, '../../..');
const GEOTIFF = path.join(repo, 'crates/formats/tests/fixtures/geotiff/tiled_deflate_predictor3_float32.tif');
const GEOJSON = path.join(repo, 'tests/corpus/fiona/trio.geojson');
// 5 x 4 cells of 100 m x 200 m in UTM 32N, 3 time steps; item H at step t, cell x (from the
// west), y (from the south) is 1000 t + 10 y + x (tests/corpus/dfs-samples/grid_utm32.dfs2.json,
// written by MIKE IO).
const DFS2 = path.join(repo, 'tests/corpus/dfs-samples/grid_utm32.dfs2');

// The GeoTIFF: 37 x 23 Float32 cells of 0.01° in EPSG:4326 from (9° E, 55° N) at the top
// left, no data -9999. Cell values read with GDAL (`gdallocationinfo -valonly <file> col row`):
const CELLS = [
  { col: 10, row: 2, value: 72 },
  { col: 20, row: 12, value: -13 },
  { col: 36, row: 22, value: 162.5 },
  { col: 0, row: 0, value: -75 },
  { col: 30, row: 8, value: -4.5 },
  { col: 5, row: 3, value: null }, // -9999: no data
];
const cellCentre = ({ col, row }) => ({ lon: 9 + (col + 0.5) * 0.01, lat: 55 - (row + 0.5) * 0.01 });

/** The documented colour of `value` (docs/tiles.md, "Colours"). */
function rampColour(value, scheme) {
  const colours = scheme.colors.map((hex) => [1, 3, 5].map((i) => parseInt(hex.slice(i, i + 2), 16)));
  const { minValue: min, maxValue: max } = scheme;
  const t = Math.min(1, Math.max(0, (value - min) / (max - min))) * (colours.length - 1);
  const i = Math.min(Math.floor(t), colours.length - 1);
  const f = t - i;
  const high = colours[Math.min(i + 1, colours.length - 1)];
  return colours[i].map((c, k) => Math.round(c + (high[k] - c) * f));
}

/** The distance of an RGB colour from the ramp's polyline (0 for a colour on it). */
function rampDistance(rgb, scheme) {
  const colours = scheme.colors.map((hex) => [1, 3, 5].map((i) => parseInt(hex.slice(i, i + 2), 16)));
  let best = Infinity;
  for (let i = 0; i + 1 < colours.length; i += 1) {
    const a = colours[i];
    const b = colours[i + 1];
    const ab = b.map((v, k) => v - a[k]);
    const length = ab.reduce((s, v) => s + v * v, 0);
    const t = Math.max(0, Math.min(1, ab.reduce((s, v, k) => s + v * (rgb[k] - a[k]), 0) / length));
    best = Math.min(best, Math.hypot(...rgb.map((v, k) => v - (a[k] + t * ab[k]))));
  }
  return best;
}

/** Uploads `file` (a path, or the bytes) through an upload URL and imports it with
 *  upload-convert; the dataset id. */
async function importFile(t, eventually, projectId, file, name, readerName, writerName) {
  const { data: url } = await t.api('GET', `/api/conversion/transfer/upload-url?fileName=${encodeURIComponent(name)}`);
  const body = typeof file === 'string' ? readFileSync(file) : file;
  const put = await fetch(url, { method: 'PUT', headers: { 'x-ms-blob-type': 'BlockBlob' }, body });
  if (put.status !== 201) throw new Failure(`PUT of ${name}: HTTP ${put.status}`);
  const started = await t.api('POST', '/api/conversion/upload-convert', {
    body: { uploadUrl: url.split('?')[0], originalFileName: name, projectId, readerName, writerName, outputDatasetData: { name } },
  });
  const done = await eventually(async () => {
    const transfer = await t.api('GET', `/api/conversion/transfer/${started.id}`);
    if (transfer.status === 'Error') throw new Failure(`import of ${name} failed: ${JSON.stringify(transfer)}`);
    return transfer.status === 'Completed' && transfer;
  }, { timeout: 60000, message: `the import of ${name}` });
  return done.importResults[0].datasetId;
}

/** The served (hashed) URL of console module `name` ('map', 'mvt'), found by following the
 *  imports from app.js, as the browser does. */
async function moduleUrl(page, name) {
  return page.evaluate(async (wanted) => {
    const seen = new Set();
    const queue = [document.querySelector('script[type=module]').src];
    const pattern = new RegExp(`/${wanted}\\.[0-9a-f]+\\.js$`);
    while (queue.length) {
      const url = queue.shift();
      if (seen.has(url)) continue;
      seen.add(url);
      if (pattern.test(url)) return url;
      const text = await (await fetch(url)).text();
      for (const match of text.matchAll(/['"]\.\/([\w-]+\.[0-9a-f]+\.js)['"]/g)) queue.push(new URL(match[1], url).href);
    }
    throw new Error(`${wanted}.js is not in the module graph`);
  }, name);
}

/** Mounts a map in the console page (replacing the page's content); exposes it as window.testMap. */
async function mountMap(page, { height = 480 } = {}) {
  const url = await moduleUrl(page, 'map');
  await page.evaluate(async ({ mapUrl, mapHeight }) => {
    const { createMap } = await import(mapUrl);
    const main = document.getElementById('main-content');
    const heading = document.createElement('h1');
    heading.textContent = 'Map test';
    const host = document.createElement('div');
    host.style.height = `${mapHeight}px`;
    const readout = document.createElement('p');
    readout.id = 'readout';
    main.replaceChildren(heading, host, readout);
    const map = createMap(host, { label: 'Test map' });
    window.testMap = map;
    window.mapEvents = { drawn: [], pointer: [] };
    map.onTilesDrawn((detail) => window.mapEvents.drawn.push(detail));
    map.onPointer((detail) => {
      window.mapEvents.pointer.push(detail);
      readout.textContent = `${detail.lat.toFixed(5)}, ${detail.lon.toFixed(5)}: ${detail.value ?? '—'}`;
    });
  }, { mapUrl: url, mapHeight: height });
}

/** Waits for a frame with every tile in view drawn; its onTilesDrawn detail. */
async function settled(page, eventually, what = 'raster') {
  // Forget earlier frames and ask for one more (the view may be drawn already).
  await page.evaluate(() => { window.mapEvents.drawn = []; window.testMap.setView({}); });
  try {
    return await eventually(() => page.evaluate((kind) => {
      const last = window.mapEvents.drawn.at(-1);
      return last && last.complete && last[kind] > 0 ? last : null;
    }, what), { timeout: 20000, message: `${what} tiles drawn` });
  } catch (error) {
    const last = await page.evaluate(() => [window.mapEvents.drawn.length, window.mapEvents.drawn.at(-1), document.querySelector('.map-status')?.textContent]);
    throw new Failure(`${error.message}; last frames: ${JSON.stringify(last)}`);
  }
}

/** The RGBA of the canvas `which` at CSS pixel (x, y) of the map. */
function pixelAt(page, which, x, y) {
  return page.evaluate(({ which: name, x: px, y: py }) => {
    const canvas = window.testMap.canvases[name];
    const ratio = canvas.width / canvas.getBoundingClientRect().width;
    return [...canvas.getContext('2d').getImageData(Math.floor(px * ratio), Math.floor(py * ratio), 1, 1).data];
  }, { which, x, y });
}

async function surfaceBox(page) {
  return page.getByRole('application', { name: 'Test map' }).boundingBox();
}

/** Moves the mouse over (lon, lat) and waits for the exact value there. */
async function hover(page, eventually, lon, lat) {
  const box = await surfaceBox(page);
  const point = await page.evaluate(([x, y]) => window.testMap.project(x, y), [lon, lat]);
  await page.evaluate(() => { window.mapEvents.pointer = []; });
  await page.mouse.move(box.x + point.x, box.y + point.y);
  return eventually(() => page.evaluate(() => {
    const last = window.mapEvents.pointer.at(-1);
    return last && !last.pending ? last : null;
  }), { message: `the value at ${lon}, ${lat}` });
}

const view = (page) => page.evaluate(() => window.testMap.getView());

export async function run(t, { assert, eventually }) {
  const suffix = Math.random().toString(36).slice(2, 8);
  const project = await t.api('POST', '/api/metadata/project', { body: { name: `map-${suffix}` } });
  const raster = await importFile(t, eventually, project.id, GEOTIFF, 'ramp.tif', 'GeoTiffReader', 'GeoTiffWriter');
  const vector = await importFile(t, eventually, project.id, GEOJSON, 'trio.geojson', 'GeoJsonReader', 'GeoJsonWriter');
  const metadata = await t.api('GET', `/api/tiles/dataset/${raster}/metadata`);
  const scheme = metadata.tilingSchemes.find((s) => s.schemeType === 'XYZ');
  assert(scheme, `an XYZ scheme: ${JSON.stringify(metadata.tilingSchemes.map((s) => s.schemeId))}`);
  const extent = metadata.wgS84Extent;
  const bounds = [extent.xMin, extent.yMin, extent.xMax, extent.yMax];

  const page = await t.newPage();
  // A route no page has renders synchronously, so nothing else writes into the page meanwhile.
  await t.signIn(page, { route: '/map-test' });
  await page.getByRole('heading', { name: 'Page not found' }).waitFor();
  await mountMap(page);

  // Raster tiles, fitted to the data: opaque where the data is, every colour on the ramp.
  await page.evaluate(({ id, s, b }) => {
    window.testMap.setRaster({ datasetId: id, scheme: s });
    window.testMap.fitBounds(b);
  }, { id: raster, s: scheme, b: bounds });
  const first = await settled(page, eventually);
  assert(first.raster >= 1, `raster tiles drawn: ${JSON.stringify(first)}`);
  const pixels = await page.evaluate(() => {
    const canvas = window.testMap.canvases.data;
    const { data } = canvas.getContext('2d').getImageData(0, 0, canvas.width, canvas.height);
    const opaque = [];
    let transparent = 0;
    for (let i = 0; i < data.length; i += 4 * 97) {
      if (data[i + 3] === 255) opaque.push([data[i], data[i + 1], data[i + 2]]);
      else if (data[i + 3] === 0) transparent += 1;
    }
    return { opaque, transparent };
  });
  assert(pixels.opaque.length > 500, `the data is drawn: ${pixels.opaque.length} opaque samples`);
  assert(pixels.transparent > 0, 'the map around the data stays clear');
  const off = pixels.opaque.filter((rgb) => rampDistance(rgb, scheme) > 2);
  assert(off.length === 0, `every drawn colour is on the ramp: ${JSON.stringify(off.slice(0, 5))}`);
  await t.screenshot(page, 'map-raster');

  // The exact value under the cursor, and the colour there, cell by cell: zoomed to the
  // scheme's finest level so each cell spans many screen pixels.
  const finest = Math.max(...scheme.zoomLevels);
  for (const cell of CELLS) {
    const { lon, lat } = cellCentre(cell);
    await page.evaluate(([x, y, z]) => window.testMap.setView({ lon: x, lat: y, zoom: z }), [lon, lat, finest]);
    await settled(page, eventually).catch(() => null);
    const seen = await hover(page, eventually, lon, lat);
    assert(Math.abs(seen.lon - lon) < 1e-4 && Math.abs(seen.lat - lat) < 1e-4, `the pointer is at ${lon}, ${lat}: ${JSON.stringify(seen)}`);
    assert(seen.value === cell.value, `value at cell (${cell.col}, ${cell.row}) is ${cell.value}, the map says ${seen.value}`);
    const box = await surfaceBox(page);
    const point = await page.evaluate(([x, y]) => window.testMap.project(x, y), [lon, lat]);
    const rgba = await pixelAt(page, 'data', point.x, point.y);
    if (cell.value === null) {
      assert(rgba[3] === 0, `no data is transparent: ${rgba}`);
    } else {
      const expected = rampColour(cell.value, scheme);
      assert(rgba[3] === 255 && expected.every((c, k) => c === rgba[k]), `cell (${cell.col}, ${cell.row}) = ${cell.value} is ${expected}, drawn ${rgba}`);
    }
    assert(box.width > 0, 'the map has a size');
  }
  const readout = await page.locator('#readout').textContent();
  assert(/: /.test(readout), `the page shows the place: ${readout}`);
  // Outside the data (north of it): no value.
  const outside = await hover(page, eventually, 9.1, 55.02);
  assert(outside.value === null, `no value outside the data: ${outside.value}`);
  assert(await page.evaluate(() => window.testMap.valueAt(9 + 10.5 * 0.01, 55 - 2.5 * 0.01)) === 72, 'valueAt agrees');

  // Another time step (here: the same step again) swaps tiles without a blank frame.
  const blankFrames = await page.evaluate(({ id, s }) => new Promise((resolve) => {
    const canvas = window.testMap.canvases.data;
    const opaque = () => {
      const { data } = canvas.getContext('2d').getImageData(0, 0, canvas.width, canvas.height);
      let n = 0;
      for (let i = 3; i < data.length; i += 4 * 31) if (data[i]) n += 1;
      return n;
    };
    window.testMap.setRaster({ datasetId: id, scheme: s, timeStep: '0' });
    let frames = 0;
    let blank = 0;
    const step = () => {
      if (opaque() === 0) blank += 1;
      frames += 1;
      if (frames < 20) requestAnimationFrame(step);
      else resolve(blank);
    };
    requestAnimationFrame(step);
  }), { id: raster, s: scheme });
  assert(blankFrames === 0, `no blank frame while tiles are swapped (${blankFrames})`);

  // Time steps of a DFS2: each step's exact values, and a step swapped in without a blank.
  const dfs2 = await importFile(t, eventually, project.id, DFS2, 'steps.dfs2', 'Dfs2Reader', 'Dfs2Writer');
  const steps = await t.api('GET', `/api/tiles/dataset/${dfs2}/metadata`);
  const stepScheme = steps.tilingSchemes.find((s) => s.schemeId === 'xyz-0');
  assert(steps.timeStamps.length === 3 && stepScheme, `three steps and xyz-0: ${JSON.stringify(steps.timeStamps)}`);
  const box2 = steps.wgS84Extent;
  // The centre of cell (x 2, y 1), as a fraction of the extent (the grid is on UTM 32's central
  // meridian, where the grid and the graticule agree to well under a cell).
  const probe = { lon: box2.xMin + (2.5 / 5) * (box2.xMax - box2.xMin), lat: box2.yMin + (1.5 / 4) * (box2.yMax - box2.yMin) };
  await page.evaluate(({ id, s, b, time }) => {
    window.testMap.setRaster({ datasetId: id, scheme: s, timeStep: time });
    window.testMap.fitBounds(b);
  }, { id: dfs2, s: stepScheme, b: [box2.xMin, box2.yMin, box2.xMax, box2.yMax], time: steps.timeStamps[1] });
  await settled(page, eventually);
  assert((await hover(page, eventually, probe.lon, probe.lat)).value === 1012, 'step 1 of cell (2, 1) is 1012');
  const swapBlank = await page.evaluate(({ id, s, time }) => new Promise((resolve) => {
    const canvas = window.testMap.canvases.data;
    let frames = 0;
    let blank = 0;
    window.testMap.setRaster({ datasetId: id, scheme: s, timeStep: time });
    const step = () => {
      const { data } = canvas.getContext('2d').getImageData(0, 0, canvas.width, canvas.height);
      let n = 0;
      for (let i = 3; i < data.length; i += 4 * 31) if (data[i]) n += 1;
      if (n === 0) blank += 1;
      frames += 1;
      if (frames < 20) requestAnimationFrame(step);
      else resolve(blank);
    };
    requestAnimationFrame(step);
  }), { id: dfs2, s: stepScheme, time: steps.timeStamps[2] });
  assert(swapBlank === 0, `no blank frame from step 1 to step 2 (${swapBlank})`);
  await settled(page, eventually);
  assert((await hover(page, eventually, probe.lon, probe.lat)).value === 2012, 'step 2 of cell (2, 1) is 2012');
  const probePoint = await page.evaluate((p) => window.testMap.project(p.lon, p.lat), probe);
  const stepColour = await pixelAt(page, 'data', probePoint.x, probePoint.y);
  const expectedStep = rampColour(2012, stepScheme);
  assert(expectedStep.every((c, k) => c === stepColour[k]), `step 2 is drawn: ${stepColour}, not ${expectedStep}`);
  await page.evaluate(({ id, s }) => window.testMap.setRaster({ datasetId: id, scheme: s }), { id: raster, s: scheme });

  // Keyboard: the map surface is focusable; arrows pan, + and - zoom, Home goes back.
  await page.evaluate((b) => window.testMap.fitBounds(b), bounds);
  await settled(page, eventually);
  const fitted = await view(page);
  const surface = page.getByRole('application', { name: 'Test map' });
  await surface.focus();
  await page.keyboard.press('ArrowRight');
  const panned = await view(page);
  assert(panned.lon > fitted.lon && Math.abs(panned.lat - fitted.lat) < 1e-9, `ArrowRight pans east: ${JSON.stringify([fitted, panned])}`);
  await page.keyboard.press('ArrowUp');
  assert((await view(page)).lat > panned.lat, 'ArrowUp pans north');
  await page.keyboard.press('+');
  await eventually(async () => Math.abs((await view(page)).zoom - (Math.round(fitted.zoom) + 1)) < 1e-6, { message: '+ zooms in' });
  await page.keyboard.press('-');
  await page.keyboard.press('-');
  await eventually(async () => Math.abs((await view(page)).zoom - (Math.round(fitted.zoom) - 1)) < 1e-6, { message: '- zooms out' });
  await page.waitForTimeout(300);
  await page.evaluate(() => { window.mapEvents.pointer = []; });
  await page.keyboard.press('Home');
  const home = await view(page);
  assert(Math.abs(home.zoom - fitted.zoom) < 1e-9 && Math.abs(home.lon - fitted.lon) < 1e-9, 'Home goes back to the data');
  const keyboardValue = await eventually(() => page.evaluate(() => {
    const last = window.mapEvents.pointer.at(-1);
    return last && last.via === 'keyboard' && !last.pending ? last : null;
  }), { message: 'the value at the centre after a keyboard move' });
  assert(Math.abs(keyboardValue.lon - home.lon) < 1e-9, 'keyboard moves report the centre');

  // Buttons.
  await page.getByRole('button', { name: 'Zoom in' }).click();
  await eventually(async () => Math.abs((await view(page)).zoom - (Math.round(fitted.zoom) + 1)) < 1e-6, { message: 'the Zoom in button' });
  await page.getByRole('button', { name: 'Zoom out' }).click();
  await page.getByRole('button', { name: 'Zoom out' }).click();
  await eventually(async () => Math.abs((await view(page)).zoom - (Math.round(fitted.zoom) - 1)) < 1e-6, { message: 'the Zoom out button' });
  await page.getByRole('button', { name: 'Zoom to the data' }).click();
  assert(Math.abs((await view(page)).zoom - fitted.zoom) < 1e-9, 'Zoom to the data');

  // The wheel zooms around the cursor: the place under it stays under it.
  const box = await surfaceBox(page);
  const at = { x: box.width * 0.3, y: box.height * 0.6 };
  const before = await page.evaluate(([x, y]) => window.testMap.unproject(x, y), [at.x, at.y]);
  await page.mouse.move(box.x + at.x, box.y + at.y);
  await page.mouse.wheel(0, -240);
  await eventually(async () => (await view(page)).zoom > fitted.zoom + 0.2, { message: 'the wheel zooms in' });
  // (Within a pixel: the event's position is rounded.)
  const after = await page.evaluate((p) => window.testMap.project(p.lon, p.lat), before);
  assert(Math.hypot(after.x - at.x, after.y - at.y) < 1.5, `the wheel zooms around the cursor: ${JSON.stringify([at, after])}`);

  // Dragging pans by the distance dragged; a double click zooms in one level.
  const dragStart = await view(page);
  await page.mouse.move(box.x + 300, box.y + 200);
  await page.mouse.down();
  await page.mouse.move(box.x + 250, box.y + 230, { steps: 5 });
  await page.mouse.up();
  const dragged = await view(page);
  const moved = await page.evaluate(([a, b]) => {
    const p = window.testMap.project(a.lon, a.lat);
    const q = window.testMap.project(b.lon, b.lat);
    return [q.x - p.x, q.y - p.y];
  }, [dragStart, dragged]);
  assert(Math.abs(moved[0] - 50) < 1 && Math.abs(moved[1] + 30) < 1, `the drag moved the map by (-50, 30): ${moved}`);
  const zoomBefore = (await view(page)).zoom;
  await page.mouse.dblclick(box.x + 200, box.y + 200);
  await eventually(async () => Math.abs((await view(page)).zoom - (Math.round(zoomBefore) + 1)) < 1e-6, { message: 'a double click zooms in' });

  // Touch: two fingers spreading to twice their distance zoom in one level around their middle.
  await page.evaluate((b) => window.testMap.fitBounds(b), bounds);
  const touch = await page.context().newCDPSession(page);
  const pinchStart = (await view(page)).zoom;
  const middle = { x: box.x + box.width / 2, y: box.y + box.height / 2 };
  const fingers = (spread) => [
    { x: middle.x - spread, y: middle.y, id: 1 },
    { x: middle.x + spread, y: middle.y, id: 2 },
  ];
  await touch.send('Input.dispatchTouchEvent', { type: 'touchStart', touchPoints: fingers(40) });
  for (const spread of [50, 60, 70, 80]) {
    await touch.send('Input.dispatchTouchEvent', { type: 'touchMove', touchPoints: fingers(spread) });
  }
  await touch.send('Input.dispatchTouchEvent', { type: 'touchEnd', touchPoints: [] });
  const pinched = await view(page);
  assert(Math.abs(pinched.zoom - (pinchStart + 1)) < 0.02, `a pinch to twice the distance zooms in one level: ${pinchStart} -> ${pinched.zoom}`);
  // One finger drags.
  await touch.send('Input.dispatchTouchEvent', { type: 'touchStart', touchPoints: [{ x: middle.x, y: middle.y, id: 3 }] });
  await touch.send('Input.dispatchTouchEvent', { type: 'touchMove', touchPoints: [{ x: middle.x + 40, y: middle.y, id: 3 }] });
  await touch.send('Input.dispatchTouchEvent', { type: 'touchEnd', touchPoints: [] });
  assert((await view(page)).lon < pinched.lon, 'a finger dragged east moves the view west');

  await page.evaluate((b) => window.testMap.fitBounds(b), bounds);
  await settled(page, eventually);
  await t.axe(page, 'map');

  // Vector tiles of a GeoJSON: a point, a line and a polygon, drawn and reported.
  const geojson = JSON.parse(readFileSync(GEOJSON, 'utf8'));
  const coordinates = geojson.features.flatMap((f) => f.geometry.coordinates.flat(3).length ? [f.geometry.coordinates] : []).flat(3);
  const lons = coordinates.filter((_, i) => i % 2 === 0);
  const lats = coordinates.filter((_, i) => i % 2 === 1);
  const vectorBounds = [Math.min(...lons), Math.min(...lats), Math.max(...lons), Math.max(...lats)];
  await page.evaluate(({ id, b }) => {
    window.testMap.setRaster(null);
    window.testMap.setVector({ datasetId: id, maxZoom: 18 });
    window.testMap.fitBounds(b);
  }, { id: vector, b: vectorBounds });
  await settled(page, eventually, 'vector');
  const drawnVector = await page.evaluate(() => {
    const canvas = window.testMap.canvases.vector;
    const { data } = canvas.getContext('2d').getImageData(0, 0, canvas.width, canvas.height);
    let painted = 0;
    for (let i = 3; i < data.length; i += 4) if (data[i]) painted += 1;
    return painted;
  });
  assert(drawnVector > 200, `vector features are drawn: ${drawnVector} pixels`);
  const rasterLeft = await page.evaluate(() => {
    const canvas = window.testMap.canvases.data;
    const { data } = canvas.getContext('2d').getImageData(0, 0, canvas.width, canvas.height);
    return data.some((v, i) => i % 4 === 3 && v > 0);
  });
  assert(!rasterLeft, 'setRaster(null) clears the raster');
  const pointFeature = geojson.features.find((f) => f.geometry.type === 'Point');
  const [plon, plat] = pointFeature.geometry.coordinates;
  const onPoint = await hover(page, eventually, plon, plat);
  assert(onPoint.feature && onPoint.feature.properties.name === pointFeature.properties.name, `the point's properties under the cursor: ${JSON.stringify(onPoint.feature)}`);
  assert(onPoint.value === null, 'no raster value without a raster');
  const pointPixel = await page.evaluate(([x, y]) => window.testMap.project(x, y), [plon, plat]);
  const pointRgba = await pixelAt(page, 'vector', pointPixel.x, pointPixel.y);
  assert(pointRgba[3] === 255 && pointRgba[2] > pointRgba[0], `the point is drawn in the point colour: ${pointRgba}`);
  const polygonFeature = geojson.features.find((f) => f.geometry.type === 'Polygon');
  if (polygonFeature) {
    const ring = polygonFeature.geometry.coordinates[0];
    const inside = [ring.reduce((s, p) => s + p[0], 0) / ring.length, ring.reduce((s, p) => s + p[1], 0) / ring.length];
    const onPolygon = await hover(page, eventually, inside[0], inside[1]);
    assert(onPolygon.feature && onPolygon.feature.type === 'Polygon', `the polygon under the cursor: ${JSON.stringify(onPolygon.feature)}`);
  }
  await t.screenshot(page, 'map-vector');

  // mvt.js on a tile with every kind of property and geometry, against the positions and
  // values that went in.
  const kinds = {
    type: 'FeatureCollection',
    features: [
      { type: 'Feature', properties: { i: 42, neg: -7, big: 9007199254740000, nb: -123456789012, f: 1.5, b: true, no: false, s: 'é ü ✓' }, geometry: { type: 'Point', coordinates: [10.0, 50.0] } },
      { type: 'Feature', properties: { name: 'holed' }, geometry: { type: 'Polygon', coordinates: [[[10.1, 50.1], [10.2, 50.1], [10.2, 50.2], [10.1, 50.2], [10.1, 50.1]], [[10.12, 50.12], [10.12, 50.18], [10.18, 50.18], [10.18, 50.12], [10.12, 50.12]]] } },
      { type: 'Feature', properties: { name: 'pair' }, geometry: { type: 'MultiPoint', coordinates: [[10.3, 50.3], [10.31, 50.31]] } },
      { type: 'Feature', properties: { name: 'path' }, geometry: { type: 'LineString', coordinates: [[10.05, 50.05], [10.25, 50.06], [10.28, 50.25]] } },
    ],
  };
  const kindsId = await importFile(t, eventually, project.id, Buffer.from(JSON.stringify(kinds)), 'kinds.geojson', 'GeoJsonReader', 'GeoJsonWriter');
  const [z, tx, ty] = [6, 33, 21];
  const decoded = await page.evaluate(async ({ mvtUrl, id, tile }) => {
    const { decodeTile, ringArea } = await import(mvtUrl);
    const key = JSON.parse(sessionStorage.getItem('basin.credentials')).value;
    const response = await fetch(`/api/vectortiles/dataset/${id}/${tile.join('/')}.vector.pbf`, { headers: { 'svc-open-api-key': key } });
    const layers = decodeTile(await response.arrayBuffer());
    return layers.map((layer) => ({ ...layer, areas: layer.features.map((f) => (f.type === 'Polygon' ? f.geometry.map(ringArea) : null)) }));
  }, { mvtUrl: await moduleUrl(page, 'mvt'), id: kindsId, tile: [z, tx, ty] });
  assert(decoded.length === 1 && decoded[0].name === 'kinds' && decoded[0].extent === 4096 && decoded[0].version === 2, `one layer: ${JSON.stringify(decoded.map((l) => [l.name, l.extent, l.version]))}`);
  const unit = ([lon, lat]) => [
    ((lon + 180) / 360 * 2 ** z - tx) * 4096,
    ((0.5 - Math.log(Math.tan(Math.PI / 4 + (lat * Math.PI) / 360)) / (2 * Math.PI)) * 2 ** z - ty) * 4096,
  ];
  const near = (got, lonlat) => {
    const [ux, uy] = unit(lonlat);
    return Math.abs(got[0] - ux) <= 1 && Math.abs(got[1] - uy) <= 1;
  };
  const [pointOut, polygonOut, pairOut, pathOut] = decoded[0].features;
  assert(JSON.stringify(pointOut.properties) === JSON.stringify(kinds.features[0].properties), `every property type: ${JSON.stringify(pointOut.properties)}`);
  assert(pointOut.type === 'Point' && pointOut.id === 1 && near(pointOut.geometry[0][0], [10, 50]), `the point: ${JSON.stringify(pointOut)}`);
  assert(polygonOut.type === 'Polygon' && polygonOut.geometry.length === 2, `a polygon with a hole: ${JSON.stringify(polygonOut.geometry)}`);
  assert(decoded[0].areas[1][0] > 0 && decoded[0].areas[1][1] < 0, `exterior ring positive, hole negative: ${decoded[0].areas[1]}`);
  assert([[10.1, 50.1], [10.2, 50.1], [10.2, 50.2], [10.1, 50.2]].every((c) => polygonOut.geometry[0].some((g) => near(g, c))), 'the exterior ring is where it was');
  assert(pairOut.type === 'Point' && pairOut.geometry.flat().length === 2 && near(pairOut.geometry.flat()[1], [10.31, 50.31]), `a multipoint: ${JSON.stringify(pairOut.geometry)}`);
  assert(pathOut.type === 'LineString' && pathOut.geometry[0].length === 3 && near(pathOut.geometry[0][2], [10.28, 50.25]), `a line: ${JSON.stringify(pathOut.geometry)}`);

  // Narrow screens: the map fits, nothing scrolls sideways, the controls stay usable.
  await page.setViewportSize({ width: 360, height: 740 });
  await settled(page, eventually, 'vector');
  const overflow = await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
  assert(overflow <= 0, `no sideways scrolling at 360 px (overflow ${overflow})`);
  await t.axe(page, 'map at 360 px');
  await t.screenshot(page, 'map-360');

  await page.evaluate(() => window.testMap.destroy());
  assert(await page.locator('.map').count() === 0, 'destroy removes the map');
}
