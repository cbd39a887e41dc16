// The dataset page (`#/datasets/<id>`): what a modeller wants to know about a file (format,
// size, items with units, time axis, vertical layers, extent, coordinate system), a preview
// chosen by what the data is (grids and meshes on the map with a legend, a time slider and
// the value under the cursor; feature collections on the map with the hovered feature's
// attributes; dfs0 time series as a plot), and the actions the caller's capabilities in the
// project allow (download, convert or export, edit, move, delete).
//
// Everything comes from the public API. Items, units and times of DFS files are read from
// the file itself (its signed read URL): the header with a ranged read, a dfs0 whole (its
// values are the plot). That is immediate and exact (float and double items, delete values),
// where an export to CSV would queue a transfer and leave a file behind for each look.

import { api } from './api.js';
import {
  button, confirmDialog, describeError, dialog, errorBox, field, formatBytes, h, loading,
  pageHeader, parseTime, timeElement, toast, uid,
} from './dom.js';
import { navigate } from './router.js';
import { basemapAttribution, basemapUrl } from './settings.js';
import { createMap } from './map.js';
import { openConvertDialog } from './convert.js';
import { formatDuration, formatFileTime, formatTick, formatValue, niceTicks, timeSeriesPlot, withUnit } from './plot.js';
import { isDfsFormat, readDfs, Truncated } from './dfs.js';
import { formatLabel, typeLabel } from './kinds.js';
import { offerUndo } from './undo.js';

// Whole dfs0 files up to this size are read for the plot; larger ones are offered as a download.
const DFS0_PLOT_BYTES_MAX = 64 * 1024 * 1024;
// The part of a DFS file read for its header (items come before the static items).
const DFS_HEADER_BYTES = 256 * 1024;

export function register(route) {
  route('/datasets/:id', render);
}

async function render(main, { id }) {
  const controller = new AbortController();
  const { signal } = controller;
  const cleanups = [];
  const cleanup = () => {
    controller.abort();
    for (const fn of cleanups.splice(0)) {
      try { fn(); } catch { /* leaving the page must not fail */ }
    }
  };
  main.append(h('h1', { class: 'visually-hidden' }, 'Dataset'), loading('Loading the dataset…'));

  let dataset;
  try {
    dataset = await api('GET', `/api/metadata/dataset/${encodeURIComponent(id)}`, { signal });
  } catch (failure) {
    if (failure.name === 'AbortError') return cleanup;
    main.replaceChildren(h('h1', {}, 'Dataset'),
      failure.status === 404
        ? h('div', { class: 'notice', role: 'alert' },
          h('p', {}, 'This dataset does not exist, is in the recycle bin, or is not visible to you.'),
          h('p', {}, h('a', { href: '#/projects' }, 'Go to your projects'), ' or ', h('a', { href: '#/bin' }, 'look in the recycle bin'), '.'))
        : errorBox(failure, () => navigate(`/datasets/${id}`)));
    return cleanup;
  }

  const projectId = dataset.projectId;
  const [project, path, tiles, dfs] = await Promise.all([
    api('GET', `/api/metadata/project/${projectId}`, { signal }).catch(() => null),
    api('GET', `/api/metadata/project/${projectId}/path`, { signal }).then((p) => p?.data || []).catch(() => []),
    mayHaveTiles(dataset)
      ? api('GET', `/api/tiles/dataset/${dataset.id}/metadata`, { signal }).catch(() => null)
      : null,
    isDfsFormat(dataset.datasetFormat) ? readDfsOf(dataset, signal).catch((failure) => ({ failure })) : null,
  ]);
  if (signal.aborted) return cleanup;
  const can = project?.capabilities || {};
  const srid = dataset.spatialInformation?.srid ?? firstXyz(tiles)?.srid ?? tiles?.tilingSchemes?.[0]?.srid ?? null;
  const crs = srid ? await api('GET', `/api/crs/coordinate-system/${srid}`, { signal, version: 2 }).catch(() => null) : null;
  if (signal.aborted) return cleanup;

  const header = dfs && !dfs.failure ? dfs : null;
  const facts = h('div', { class: 'panel dataset-facts' });
  const preview = h('section', { class: 'dataset-preview', 'aria-labelledby': 'dataset-preview-title' },
    h('h2', { id: 'dataset-preview-title' }, 'Preview'));

  main.replaceChildren(
    breadcrumbs(path, dataset),
    pageHeader(dataset.name, {
      sub: h('p', { class: 'dataset-sub' },
        h('span', { class: 'badge badge-info' }, formatLabel(dataset)),
        ' ',
        h('span', { class: 'badge' }, typeLabel(dataset)),
        ' ',
        h('span', {}, formatBytes(dataset.storageSize))),
      actions: actions(dataset, can),
    }),
    h('div', { class: 'dataset-layout' },
      preview,
      h('aside', { class: 'dataset-side', 'aria-label': 'Details' }, facts)));

  facts.append(...detailFacts(dataset, { tiles, header, crs, dfsFailure: dfs?.failure }));
  if (!can.canReadContent && project) {
    preview.append(h('p', { class: 'notice' }, 'You may see this dataset but not read its content.'));
    return cleanup;
  }
  buildPreview(preview, dataset, { tiles, header, dfsFailure: dfs?.failure, signal, cleanups })
    .catch((failure) => {
      if (failure?.name === 'AbortError' || signal.aborted) return;
      preview.append(errorBox(failure));
    });
  return cleanup;
}

function mayHaveTiles(dataset) {
  if (dataset.datasetType === 'timeseries' || dataset.datasetType === 'gisvectordata') return false;
  if (String(dataset.datasetFormat).toLowerCase() === '.dfs0') return false;
  return dataset.datasetType === 'multidimensional' || dataset.datasetType === 'tiles' || Boolean(dataset.spatialInformation);
}

function firstXyz(tiles) {
  return (tiles?.tilingSchemes || []).find((s) => String(s.schemeType).toUpperCase() === 'XYZ') || null;
}

/** The signed read URL of a dataset's content. */
async function readUrl(dataset, signal) {
  const answer = await api('GET', `/api/raw/dataset/${dataset.id}`, { signal });
  return answer?.data;
}

/** Reads a DFS file's header (a ranged read), or a whole dfs0 with its values. */
async function readDfsOf(dataset, signal) {
  const url = await readUrl(dataset, signal);
  const dfs0 = String(dataset.datasetFormat).toLowerCase() === '.dfs0';
  const whole = dfs0 && dataset.storageSize <= DFS0_PLOT_BYTES_MAX;
  const init = { signal, credentials: 'omit', cache: 'no-cache' };
  if (!whole) init.headers = { Range: `bytes=0-${DFS_HEADER_BYTES - 1}` };
  const response = await fetch(url, init);
  if (!response.ok) throw new Error(`The file could not be read (HTTP ${response.status}).`);
  const buffer = await response.arrayBuffer();
  try {
    const header = readDfs(buffer, { values: whole });
    header.whole = whole;
    return header;
  } catch (failure) {
    if (failure instanceof Truncated && !whole) return { failure: new Error('The file header is longer than the part read.') };
    throw failure;
  }
}

function breadcrumbs(path, dataset) {
  return h('nav', { class: 'breadcrumbs', 'aria-label': 'Breadcrumb' },
    h('ol', {},
      h('li', {}, h('a', { href: '#/projects' }, 'Projects')),
      path.map((p) => h('li', {}, h('a', { href: `#/projects/${p.id}` }, p.name))),
      h('li', {}, h('span', { 'aria-current': 'page' }, dataset.name))));
}

// ---------------------------------------------------------------------------------------
// Details

function fact(dl, term, ...value) {
  const cleaned = value.filter((v) => v !== null && v !== undefined && v !== '');
  if (!cleaned.length) return;
  dl.append(h('dt', {}, term), h('dd', {}, cleaned));
}

function number(value, digits = 2) {
  if (!Number.isFinite(value)) return '';
  return value.toLocaleString('en-US', { maximumFractionDigits: digits, minimumFractionDigits: 0 });
}

/** A coordinate: about a decimetre for metres, 6 decimals for degrees. */
function coordinate(value) {
  if (!Number.isFinite(value)) return '';
  const abs = Math.abs(value);
  return String(Number(value.toFixed(abs >= 1000 ? 1 : abs >= 1 ? 4 : 6)));
}

function degrees(value, positive, negative) {
  if (!Number.isFinite(value)) return '';
  return `${Math.abs(value).toFixed(4)}° ${value >= 0 ? positive : negative}`;
}

/** The linear unit of a coordinate system's WKT: '°' for a geographic one, else the unit of
 *  its projection ('m', 'ft', 'US ft'), or '' when the WKT does not say. */
function wktUnit(wkt) {
  const text = String(wkt || '').trim();
  if (!text) return '';
  if (/^(GEOGCS|GEOGCRS|GEODCRS)\b/i.test(text)) return '°';
  const units = [...text.matchAll(/(?:LENGTH)?UNIT\["([^"]+)"/gi)].map((m) => m[1].toLowerCase());
  const last = units[units.length - 1];
  if (!last) return '';
  if (/^met(er|re)s?$/.test(last)) return 'm';
  if (/us survey foot/.test(last)) return 'US ft';
  if (/^(foot|feet|international foot)/.test(last)) return 'ft';
  if (/degree/.test(last)) return '°';
  return last;
}

/** A cell size for people: six significant digits (25, 0.00833333, 3004.18) and its unit. */
function cellSize(value, wkt) {
  const text = String(Number(value.toPrecision(6)));
  const unit = wktUnit(wkt);
  return unit === '°' ? `${text}°` : unit ? `${text} ${unit}` : text;
}

/** The dataset's time steps as ms (UTC) with where they came from. */
function timeAxis(dataset, tiles, header) {
  if (tiles?.timeStamps?.length) {
    return { times: tiles.timeStamps.map((t) => parseTime(t)?.getTime()).filter(Number.isFinite), calendar: true };
  }
  if (header?.times?.length) return { times: Array.from(header.times), calendar: header.time?.calendar !== false };
  if (header?.time && header.time.count) {
    const t = header.time;
    if (t.calendar && t.start && t.equidistant) {
      const times = [];
      for (let k = 0; k < Math.min(t.count, 100000); k += 1) times.push(t.start.getTime() + (t.offset + k * t.step) * t.unitSeconds * 1000);
      return { times, calendar: true, count: t.count };
    }
    return { times: [], calendar: t.calendar, count: t.count, header: t };
  }
  const info = dataset.temporalInformation;
  if (info?.startTime) {
    const start = parseTime(info.startTime)?.getTime();
    const end = parseTime(info.endTime)?.getTime();
    return { times: [start, end].filter(Number.isFinite), calendar: true, partial: true, resolution: info.resolution };
  }
  return null;
}

/** A time of a data file (ms, its wall clock read as UTC) as a <time>, as plot.js shows it. */
function fileTime(ms) {
  const d = new Date(ms);
  return timeElement(d, { utc: true, seconds: Boolean(d.getUTCSeconds() || d.getUTCMilliseconds()) });
}

function timeFacts(dl, axis) {
  if (!axis) return;
  const { times } = axis;
  const count = axis.count ?? (axis.partial ? null : times.length);
  if (!times.length && !count) return;
  if (axis.calendar && times.length) {
    fact(dl, 'First time', fileTime(times[0]));
    if (times.length > 1) fact(dl, 'Last time', fileTime(times[times.length - 1]));
  }
  if (count !== null && count !== undefined) fact(dl, 'Time steps', number(count, 0));
  if (axis.partial && axis.resolution) {
    fact(dl, 'Time step', formatDuration(axis.resolution));
  } else if (times.length > 1) {
    let min = Infinity;
    let max = -Infinity;
    for (let i = 1; i < times.length; i += 1) {
      const d = times[i] - times[i - 1];
      if (d < min) min = d;
      if (d > max) max = d;
    }
    const step = axis.calendar ? [min / 1000, max / 1000] : [min, max];
    fact(dl, 'Time step', Math.abs(step[1] - step[0]) < 1e-6 * Math.max(1, step[0])
      ? formatDuration(step[0])
      : `varies, ${formatDuration(step[0])} to ${formatDuration(step[1])}`);
  } else if (axis.header && axis.header.step) {
    fact(dl, 'Time step', formatDuration(axis.header.step * axis.header.unitSeconds));
  }
  if (!axis.calendar) fact(dl, 'Time axis', 'relative (no calendar dates)');
}

/** Items: names from the tiles' schemes and the DFS header, with units where known. */
function itemsOf(tiles, header) {
  const items = [];
  const byName = new Map();
  for (const item of header?.items || []) {
    const entry = { name: item.name, unit: item.unit, valueType: item.valueType, dataType: item.dataType };
    items.push(entry);
    byName.set(item.name, entry);
  }
  for (const scheme of tiles?.tilingSchemes || []) {
    let entry = byName.get(scheme.itemName);
    if (!entry) {
      entry = { name: scheme.itemName, unit: '' };
      items.push(entry);
      byName.set(scheme.itemName, entry);
    }
    if (entry.min === undefined && Number.isFinite(scheme.minValue)) {
      entry.min = scheme.minValue;
      entry.max = scheme.maxValue;
    }
  }
  if (header?.items) {
    for (const item of header.items) {
      if (item.values) {
        const entry = byName.get(item.name);
        let lo = Infinity;
        let hi = -Infinity;
        let missing = 0;
        for (const v of item.values) {
          if (Number.isNaN(v)) missing += 1;
          else { if (v < lo) lo = v; if (v > hi) hi = v; }
        }
        if (lo <= hi) { entry.min = lo; entry.max = hi; entry.whole = true; }
        entry.missing = missing;
      }
    }
  }
  return items;
}

function detailFacts(dataset, { tiles, header, crs, dfsFailure }) {
  const out = [];
  const general = h('dl', { class: 'facts' });
  fact(general, 'Format', formatLabel(dataset));
  fact(general, 'Type', typeLabel(dataset));
  fact(general, 'Size', h('span', { title: `${number(dataset.storageSize, 0)} bytes` }, formatBytes(dataset.storageSize)));
  fact(general, 'Created', timeElement(dataset.createdAt));
  fact(general, 'Updated', timeElement(dataset.updatedAt));
  fact(general, 'Description', dataset.description);
  if (dataset.tags?.length) fact(general, 'Tags', h('span', { class: 'tag-list' }, dataset.tags.map((t) => h('span', { class: 'badge' }, t))));
  if (header?.title) fact(general, 'Title', header.title);
  fact(general, 'Checksum', dataset.checksum ? h('span', { class: 'mono' }, dataset.checksum) : null);
  fact(general, 'Id', h('span', { class: 'mono' }, dataset.id));
  out.push(h('h2', {}, 'Details'), general);

  const space = h('dl', { class: 'facts' });
  const spatial = dataset.spatialInformation || {};
  const srid = spatial.srid ?? firstXyz(tiles)?.srid ?? null;
  const authority = tiles?.tilingSchemes?.find((s) => s.srid === srid)?.sridAuthName || 'EPSG';
  if (srid) {
    fact(space, 'Coordinate system', crs?.name ? `${crs.name} ` : '', h('span', { class: 'mono' }, `(${authority}:${srid})`));
  } else if (header?.projection?.name) {
    fact(space, 'Coordinate system', header.projection.name.length > 60 ? `${header.projection.name.slice(0, 60)}…` : header.projection.name,
      ' (no EPSG code)');
  } else if (spatial.primarySpatialReference) {
    const name = /"([^"]+)"/.exec(spatial.primarySpatialReference)?.[1];
    fact(space, 'Coordinate system', name || 'defined by WKT', ' (no EPSG code)');
  }
  const native = tiles?.nativeExtent;
  if (native) {
    fact(space, 'Extent',
      h('span', { class: 'mono' }, `x ${coordinate(native.xMin)} … ${coordinate(native.xMax)}`), h('br'),
      h('span', { class: 'mono' }, `y ${coordinate(native.yMin)} … ${coordinate(native.yMax)}`));
  } else if (spatial.location) {
    const box = wktBox(spatial.location);
    if (box) {
      fact(space, 'Extent',
        h('span', { class: 'mono' }, `x ${coordinate(box[0])} … ${coordinate(box[2])}`), h('br'),
        h('span', { class: 'mono' }, `y ${coordinate(box[1])} … ${coordinate(box[3])}`));
    }
  }
  const wgs = tiles?.wgS84Extent;
  if (wgs) {
    fact(space, 'WGS 84 extent',
      h('span', { class: 'mono' }, `${degrees(wgs.xMin, 'E', 'W')} … ${degrees(wgs.xMax, 'E', 'W')}`), h('br'),
      h('span', { class: 'mono' }, `${degrees(wgs.yMin, 'N', 'S')} … ${degrees(wgs.yMax, 'N', 'S')}`));
  } else if (tiles && !wgs) {
    fact(space, 'WGS 84 extent', 'unknown: the coordinate system does not reach WGS 84');
  }
  if (Number.isFinite(spatial.resolution) && spatial.resolution > 0) {
    fact(space, 'Cell size', h('span', { title: String(spatial.resolution) }, cellSize(spatial.resolution, crs?.wkt || spatial.primarySpatialReference)));
  }
  const fm = header?.customBlocks?.MIKE_FM;
  if (fm) {
    fact(space, 'Mesh', `${number(fm[1], 0)} elements, ${number(fm[0], 0)} nodes${fm[3] ? `, ${fm[3]} layers (${fm[4]} sigma)` : ''}`);
  }
  const layers = tiles?.layerIds || [];
  if (layers.length > 1) fact(space, 'Vertical layers', `${layers.length} (${layers[0]} to ${layers[layers.length - 1]})`);
  if (space.childElementCount) out.push(h('h3', {}, 'Space'), space);

  const time = h('dl', { class: 'facts' });
  timeFacts(time, timeAxis(dataset, tiles, header));
  if (time.childElementCount) out.push(h('h3', {}, 'Time'), time);

  const items = itemsOf(tiles, header);
  if (items.length) {
    const rows = items.map((item) => {
      const kind = [item.valueType, item.dataType].filter(Boolean).join(', ');
      return h('tr', {},
        h('td', {}, item.name, kind ? h('span', { class: 'item-kind' }, kind) : null),
        h('td', {}, item.unit || '—'),
        h('td', { class: 'num' }, item.min !== undefined ? `${formatValue(item.min)} … ${formatValue(item.max)}` : '—'),
        item.missing ? h('td', { class: 'num' }, number(item.missing, 0)) : h('td', { class: 'num' }, item.missing === 0 ? '0' : '—'));
    });
    const anyMissing = items.some((i) => i.missing !== undefined);
    const whole = items.some((i) => i.whole);
    out.push(h('h3', {}, `Items (${items.length})`),
      h('div', { class: 'table-wrap', tabindex: '0', role: 'region', 'aria-label': 'Items table' },
        h('table', { class: 'dataset-items' },
          h('caption', { class: 'visually-hidden' }, 'Items of the dataset'),
          h('thead', {}, h('tr', {},
            h('th', { scope: 'col' }, 'Name'), h('th', { scope: 'col' }, 'Unit'),
            h('th', { scope: 'col', class: 'num' }, whole ? 'Range' : 'Range (first step)'),
            anyMissing ? h('th', { scope: 'col', class: 'num' }, 'Missing') : null)),
          h('tbody', {}, anyMissing ? rows : rows.map((row) => { row.lastChild.remove(); return row; })))));
  }
  if (dfsFailure) out.push(h('p', { class: 'hint' }, `The file's header could not be read: ${describeError(dfsFailure)}`));
  return out;
}

/** The bounding box [xmin, ymin, xmax, ymax] of a WKT geometry's coordinates. */
function wktBox(wkt) {
  const numbers = String(wkt).match(/-?\d+(?:\.\d+)?(?:[eE][-+]?\d+)?/g);
  if (!numbers || numbers.length < 2) return null;
  let box = [Infinity, Infinity, -Infinity, -Infinity];
  // Pairs of x y (2D locations; the server writes POLYGON ((x y, ...))).
  for (let i = 0; i + 1 < numbers.length; i += 2) {
    const x = Number(numbers[i]);
    const y = Number(numbers[i + 1]);
    box = [Math.min(box[0], x), Math.min(box[1], y), Math.max(box[2], x), Math.max(box[3], y)];
  }
  return box.every(Number.isFinite) ? box : null;
}

// ---------------------------------------------------------------------------------------
// Actions

function actions(dataset, can) {
  const list = [];
  if (can.canReadContent) {
    const link = h('a', { class: ['button', 'button-primary'], href: '#', download: dataset.name }, 'Download');
    let fetched = 0;
    const refresh = async () => {
      const url = await readUrl(dataset);
      link.href = url;
      fetched = Date.now();
    };
    refresh().catch(() => { link.remove(); });
    link.addEventListener('click', async (event) => {
      // Read URLs last an hour; an old one is fetched again first.
      if (fetched && Date.now() - fetched < 30 * 60 * 1000) return;
      event.preventDefault();
      try {
        await refresh();
        link.click();
      } catch (failure) {
        toast(describeError(failure), 'error');
      }
    });
    list.push(link);
    // The dialog itself follows the transfer it starts and links to Transfers.
    list.push(button('Convert or export…', () => openConvertDialog(dataset)));
  }
  if (can.canUpdateContent) list.push(button('Edit details…', () => editDialog(dataset)));
  if (can.canDeleteContent) {
    list.push(button('Move…', () => moveDialog(dataset)));
    list.push(button('Delete', () => deleteDataset(dataset), { kind: 'danger' }));
  }
  return list;
}

async function editDialog(dataset) {
  const name = h('input', { type: 'text', value: dataset.name, required: true, maxlength: 255, autocomplete: 'off' });
  const description = h('textarea', { rows: 3 });
  description.value = dataset.description || '';
  const tags = h('input', { type: 'text', value: (dataset.tags || []).join(', '), autocomplete: 'off' });
  const saved = await dialog({
    title: 'Edit dataset',
    body: [
      field('Name', name, { required: true }),
      field('Description', description),
      field('Tags', tags, { hint: 'Separate tags with commas.' }),
    ],
    actions: [{ label: 'Cancel', value: null }, { label: 'Save', value: 'save', kind: 'primary' }],
    onSubmit: async () => {
      if (!name.value.trim()) {
        name.focus();
        throw new Error('Enter a name.');
      }
      await api('PUT', `/api/metadata/project/${dataset.projectId}/dataset`, {
        body: {
          id: dataset.id,
          name: name.value.trim(),
          description: description.value,
          tags: tags.value.split(',').map((t) => t.trim()).filter(Boolean),
          rowVersion: dataset.rowVersion,
        },
      }).catch((failure) => {
        if (failure.status === 409) throw new Error('Someone changed this dataset meanwhile. Close this dialog to see the new version, then edit again.');
        throw failure;
      });
      return true;
    },
  });
  if (saved) toast('Saved.', 'success');
  navigate(`/datasets/${dataset.id}`, undefined, { replace: true });
}

async function destinations(dataset) {
  const options = [];
  const roots = await api('GET', '/api/metadata/project/list', { query: { capability: 'CanCreateContent', limit: 1000 } })
    .then((page) => page?.data || []).catch(() => []);
  const path = await api('GET', `/api/metadata/project/${dataset.projectId}/path`).then((p) => p?.data || []).catch(() => []);
  const root = path[0];
  for (const project of roots) options.push({ id: project.id, label: project.name });
  if (root) {
    const below = await api('GET', `/api/metadata/project/${root.id}/offset-list-recursive`, { query: { offset: 0, limit: 1000 } })
      .then((page) => page?.data || []).catch(() => []);
    for (const sub of below) options.push({ id: sub.id, label: `${root.name} / ${sub.relativePath || sub.name}` });
    if (!options.some((o) => o.id === root.id)) options.push({ id: root.id, label: root.name });
  }
  const seen = new Set([dataset.projectId]);
  return options
    .filter((o) => (seen.has(o.id) ? false : seen.add(o.id)))
    .sort((a, b) => a.label.localeCompare(b.label));
}

async function moveDialog(dataset) {
  const select = h('select', { required: true }, h('option', { value: '' }, 'Loading projects…'));
  const pending = destinations(dataset).then((options) => {
    select.replaceChildren(h('option', { value: '' }, options.length ? 'Choose a project' : 'No other project you may add to'),
      ...options.map((o) => h('option', { value: o.id }, o.label)));
  });
  let moved = null;
  await dialog({
    title: `Move ${dataset.name}`,
    body: [field('To project', select, { hint: 'Projects and subprojects where you may add datasets.' })],
    actions: [{ label: 'Cancel', value: null }, { label: 'Move', value: 'move', kind: 'primary' }],
    onSubmit: async () => {
      await pending;
      if (!select.value) {
        select.focus();
        throw new Error('Choose a project.');
      }
      moved = await api('POST', `/api/metadata/dataset/${dataset.id}/move`, { body: { targetProjectId: select.value } });
      return true;
    },
  });
  if (moved) {
    toast(`Moved to ${select.selectedOptions[0]?.textContent || 'the project'}.`, 'success');
    navigate(`/datasets/${dataset.id}`, undefined, { replace: true });
  }
}

async function deleteDataset(dataset) {
  const sure = await confirmDialog({
    title: `Delete ${dataset.name}?`,
    message: `“${dataset.name}” goes to the recycle bin. You can restore it from there for 180 days.`,
    confirm: 'Move to recycle bin',
    danger: true,
  });
  if (!sure) return;
  try {
    await api('DELETE', `/api/metadata/dataset/${dataset.id}`);
    // As after deleting a project from its own page: the page it leaves for says where the
    // dataset went and offers Undo (restore in place).
    offerUndo({ kind: 'dataset', id: dataset.id, name: dataset.name });
    navigate(`/projects/${dataset.projectId}`, undefined, { replace: true });
  } catch (failure) {
    toast(describeError(failure), 'error');
  }
}

// ---------------------------------------------------------------------------------------
// Preview

async function buildPreview(section, dataset, { tiles, header, dfsFailure, signal, cleanups }) {
  const format = String(dataset.datasetFormat || '').toLowerCase();
  if (tiles?.tilingSchemes?.length) {
    if (firstXyz(tiles)) {
      rasterPreview(section, dataset, tiles, header, cleanups);
    } else {
      section.append(h('p', { class: 'notice' },
        'This dataset cannot be shown on the web map: its coordinate system is unknown or does not reach WGS 84 (longitude and latitude). ',
        'Convert it with a coordinate transformation to a known system to see it here.'));
    }
    return;
  }
  if (dataset.datasetType === 'gisvectordata' || ['.geojson', '.shp'].includes(format)) {
    await vectorPreview(section, dataset, cleanups, signal);
    return;
  }
  if (format === '.dfs0') {
    if (dfsFailure) {
      section.append(h('p', { class: 'error-box', role: 'alert' }, `The time series could not be read: ${describeError(dfsFailure)}`));
    } else if (!header?.whole) {
      section.append(h('p', { class: 'notice' },
        `This time series is ${formatBytes(dataset.storageSize)}, too large to plot in the browser. Download it, or export a part of it (a time filter) to plot that.`));
    } else {
      timeseriesPreview(section, dataset, header, cleanups);
    }
    return;
  }
  section.append(h('p', { class: 'empty' }, dataset.datasetType === 'multidimensional' || dataset.spatialInformation
    ? 'No map preview: Basin cannot draw tiles of this dataset.'
    : 'No preview for this kind of file. Download it to open it.'));
}

function gradient(colors) {
  if (colors.length === 1) return colors[0];
  return `linear-gradient(to right, ${colors.map((c, i) => `${c} ${((i / (colors.length - 1)) * 100).toFixed(2)}%`).join(', ')})`;
}

/** A tick of the colour legend: its mark at `pct` of the bar, its label moved left by `pct`
 *  of its own width, so that it stays over the bar at both ends (left-aligned at 0 %,
 *  right-aligned at 100 %, centred half-way). */
function legendTick(pct, text, value) {
  const at = Math.min(100, Math.max(0, pct));
  return h('span', { class: 'legend-tick', style: { left: `${at}%` }, dataset: { value: String(value) } },
    h('span', { class: 'legend-tick-label', style: { transform: `translateX(-${at}%)` } }, text));
}

function legendOf(scheme, unit, timed) {
  const min = scheme.minValue;
  const max = scheme.maxValue;
  const colors = scheme.colors?.length ? scheme.colors : ['#0b2a6f', '#c8352b'];
  const ticks = h('div', { class: 'legend-ticks', 'aria-hidden': 'true' });
  const spread = max - min;
  if (Number.isFinite(spread) && spread > 0) {
    const nice = niceTicks(min, max, 6);
    const inside = nice.ticks.filter((v) => v >= min - spread * 1e-9 && v <= max + spread * 1e-9);
    for (const v of inside) ticks.append(legendTick(((v - min) / spread) * 100, formatTick(v, nice.step), v));
  } else if (Number.isFinite(min)) {
    ticks.append(legendTick(50, formatValue(min), min));
  }
  const name = withUnit(scheme.itemName, unit);
  return h('figure', { class: 'legend', dataset: { min: String(min), max: String(max) }, 'aria-label': `Colour legend: ${name}, from ${formatValue(min)} to ${formatValue(max)}${unit ? ` ${unit}` : ''}` },
    h('figcaption', {}, h('strong', {}, name)),
    h('div', { class: 'legend-bar', style: { background: gradient(colors) } }),
    ticks,
    h('p', { class: 'hint' }, `${formatValue(min)} to ${formatValue(max)}${unit ? ` ${unit}` : ''}${timed ? ', the range of the first time step; values beyond it take the end colours' : ''}.`));
}

function throttle(fn, ms) {
  let last = 0;
  let timer = null;
  let args = null;
  return (...next) => {
    args = next;
    const wait = last + ms - Date.now();
    if (wait <= 0) {
      last = Date.now();
      fn(...args);
    } else if (!timer) {
      timer = setTimeout(() => { timer = null; last = Date.now(); fn(...args); }, wait);
    }
  };
}

function lonLat(lon, lat) {
  return `${degrees(lat, 'N', 'S')}, ${degrees(lon, 'E', 'W')}`;
}

function mapShell() {
  // map.js shows the basemap's attribution itself.
  return { mapEl: h('div', { class: 'dataset-map' }), attribution: null };
}

function rasterPreview(section, dataset, tiles, header, cleanups) {
  const xyz = tiles.tilingSchemes.filter((s) => String(s.schemeType).toUpperCase() === 'XYZ');
  const units = new Map((header?.items || []).map((item) => [item.name, item.unit]));
  const stamps = tiles.timeStamps || [];
  const layers = tiles.layerIds || [];
  const state = { scheme: xyz[0], step: 0, layer: layers.includes(xyz[0].layerIdx) ? xyz[0].layerIdx : (layers[0] ?? 0) };

  const controls = h('div', { class: 'preview-controls' });
  const itemSelect = h('select', { onchange: () => { state.scheme = xyz[Number(itemSelect.value)]; apply(); } },
    xyz.map((s, i) => {
      const twice = xyz.filter((other) => other.itemName === s.itemName).length > 1;
      const unit = units.get(s.itemName);
      return h('option', { value: String(i) }, `${withUnit(s.itemName, unit)}${twice ? ` · ${s.schemeId}` : ''}`);
    }));
  controls.append(field('Item', itemSelect));
  if (layers.length > 1) {
    const layerSelect = h('select', { onchange: () => { state.layer = Number(layerSelect.value); apply(); } },
      layers.map((l) => h('option', { value: String(l), selected: l === state.layer }, `Layer ${l}`)));
    controls.append(field('Vertical layer', layerSelect));
  }

  let timeControl = null;
  let slider = null;
  let output = null;
  let playButton = null;
  let playing = false;
  let playTimer = null;
  const stampText = (k) => (stamps[k] ? formatFileTime(parseTime(stamps[k])?.getTime()) : '');
  if (stamps.length > 1) {
    const sliderId = uid('time');
    slider = h('input', {
      id: sliderId, type: 'range', min: '0', max: String(stamps.length - 1), step: '1', value: '0',
      class: 'time-slider',
    });
    output = h('output', { for: sliderId, class: 'time-output mono' });
    playButton = h('button', { type: 'button', class: ['button', 'button-small'] }, 'Play');
    timeControl = h('div', { class: 'time-control' },
      h('label', { for: sliderId }, 'Time step'),
      h('div', { class: 'time-row' }, playButton, slider),
      output);
    const showStep = () => {
      const text = `${stampText(state.step)} · step ${state.step + 1} of ${stamps.length}`;
      output.textContent = text;
      slider.setAttribute('aria-valuetext', text);
    };
    showStep();
    let debounce = null;
    let stop = () => {};
    slider.addEventListener('input', () => {
      stop();
      state.step = Number(slider.value);
      showStep();
      clearTimeout(debounce);
      debounce = setTimeout(apply, 120);
    });
    stop = () => {
      playing = false;
      clearTimeout(playTimer);
      playButton.textContent = 'Play';
    };
    const advance = () => {
      if (!playing) return;
      state.step = (state.step + 1) % stamps.length;
      slider.value = String(state.step);
      showStep();
      apply();
      // The next step follows once this one is drawn (or after 4 s at most).
      clearTimeout(playTimer);
      playTimer = setTimeout(advance, 4000);
    };
    playButton.addEventListener('click', () => {
      if (playing) { stop(); return; }
      playing = true;
      playButton.textContent = 'Pause';
      advance();
    });
    cleanups.push(() => { playing = false; clearTimeout(playTimer); clearTimeout(debounce); });
    timeControl.onDrawn = () => {
      if (!playing) return;
      clearTimeout(playTimer);
      playTimer = setTimeout(advance, 700);
    };
    controls.append(timeControl);
  } else if (stamps.length === 1) {
    controls.append(h('p', { class: 'hint time-single' }, `One time step: ${stampText(0)}`));
  }

  const legendSlot = h('div', { class: 'legend-slot' });
  const readout = h('p', { class: 'map-readout', 'aria-live': 'polite' }, 'Point at the map to read the value there.');
  const { mapEl, attribution } = mapShell();
  section.append(...[controls, h('div', { class: 'map-frame' }, mapEl), attribution, legendSlot, readout].filter(Boolean));

  const map = createMap(mapEl, { basemapUrl, basemapAttribution, label: `Map of ${dataset.name}` });
  cleanups.push(() => map.destroy());
  const wgs = tiles.wgS84Extent;
  if (wgs) map.fitBounds([wgs.xMin, wgs.yMin, wgs.xMax, wgs.yMax]);
  map.onTilesDrawn((info) => {
    section.dataset.tilesDrawn = String(Number(section.dataset.tilesDrawn || 0) + (info?.count ?? 1));
    if (timeControl && info?.complete !== false) timeControl.onDrawn();
  });
  const pointerHint = 'Point at the map (or move it with the arrow keys) to read the value there.';
  readout.textContent = pointerHint;
  map.onPointer(throttle(({ lon, lat, value, pending }) => {
    if (!Number.isFinite(lon) || !Number.isFinite(lat)) return;
    const unit = units.get(state.scheme.itemName) || '';
    const text = pending ? 'reading…'
      : value === null || value === undefined || Number.isNaN(value) ? 'no data here'
        : `${formatValue(value)}${unit ? ` ${unit}` : ''}`;
    readout.textContent = `${lonLat(lon, lat)}: ${state.scheme.itemName} ${text}`;
  }, 150));
  map.onPointerLeave?.(() => { readout.textContent = pointerHint; });

  function apply() {
    legendSlot.replaceChildren(legendOf(state.scheme, units.get(state.scheme.itemName) || '', stamps.length > 1));
    map.setRaster({
      datasetId: dataset.id,
      scheme: state.scheme,
      timeStep: stamps.length ? state.step : undefined,
      layer: layers.length > 1 ? state.layer : undefined,
    });
  }
  apply();
}

async function vectorPreview(section, dataset, cleanups, signal) {
  const spatial = dataset.spatialInformation || {};
  let box = spatial.location ? wktBox(spatial.location) : null;
  if (box && spatial.srid && spatial.srid !== 4326) {
    const polygon = `POLYGON ((${box[0]} ${box[1]}, ${box[2]} ${box[1]}, ${box[2]} ${box[3]}, ${box[0]} ${box[3]}, ${box[0]} ${box[1]}))`;
    const projected = await api('POST', '/api/crs/project', {
      version: 2, signal, body: { inputSrid: spatial.srid, outputSrid: 4326, geometries: [polygon] },
    }).catch(() => null);
    box = projected?.geometries?.[0] ? wktBox(projected.geometries[0]) : null;
  } else if (box && !spatial.srid && String(dataset.datasetFormat).toLowerCase() !== '.geojson') {
    box = null;
  }
  if (signal.aborted) return;
  const position = h('p', { class: 'map-readout' }, 'Point at a feature to see its attributes.');
  const readout = h('div', { class: 'feature-readout', 'aria-live': 'polite' });
  const { mapEl, attribution } = mapShell();
  section.append(...[h('div', { class: 'map-frame' }, mapEl), attribution, position, readout].filter(Boolean));
  const map = createMap(mapEl, { basemapUrl, basemapAttribution, label: `Map of ${dataset.name}` });
  cleanups.push(() => map.destroy());
  if (box) {
    // A point or a line has no area: pad it so the map can fit it.
    const pad = (a, b) => (b - a < 1e-6 ? 0.01 : 0);
    map.fitBounds([box[0] - pad(box[0], box[2]), box[1] - pad(box[1], box[3]), box[2] + pad(box[0], box[2]), box[3] + pad(box[1], box[3])]);
  }
  map.onTilesDrawn((info) => {
    section.dataset.tilesDrawn = String(Number(section.dataset.tilesDrawn || 0) + (info?.count ?? 1));
  });
  let lastKey = null;
  map.onPointer(throttle(({ lon, lat, feature }) => {
    if (Number.isFinite(lon)) position.textContent = `${lonLat(lon, lat)}${feature ? '' : ': no feature here'}`;
    const key = feature ? `${feature.layer ?? ''}/${feature.id ?? JSON.stringify(feature.properties || {})}` : null;
    if (key === lastKey) return;
    lastKey = key;
    if (!feature) {
      readout.replaceChildren();
      return;
    }
    const entries = Object.entries(feature.properties || {});
    readout.replaceChildren(
      h('h3', { class: 'feature-title' }, feature.id !== undefined && feature.id !== null ? `Feature ${feature.id}` : 'Feature',
        entries.length ? ` (${entries.length} attribute${entries.length === 1 ? '' : 's'})` : ''),
      entries.length
        ? h('div', { class: 'feature-facts', tabindex: '0', role: 'region', 'aria-label': 'Feature attributes' },
          h('dl', { class: 'facts' }, entries.flatMap(([k, v]) => [h('dt', {}, k), h('dd', {}, v === null || v === undefined ? '—' : String(v))])))
        : h('p', { class: 'hint' }, 'No attributes.'));
  }, 120));
  map.onPointerLeave?.(() => { position.textContent = 'Point at a feature to see its attributes.'; });
  map.setVector({
    datasetId: dataset.id,
    minZoom: 0,
    maxZoom: 24,
    style: { fill: 'rgba(10, 95, 168, 0.25)', stroke: '#0a5fa8', lineWidth: 1.5, pointRadius: 4, pointFill: '#0a5fa8' },
  });
}

function timeseriesPreview(section, dataset, header, cleanups) {
  const times = header.times;
  if (!times?.length || !header.items.length) {
    section.append(h('p', { class: 'empty' }, 'This time series holds no values.'));
    return;
  }
  const series = header.items.map((item) => ({ name: item.name, unit: item.unit, values: item.values }));
  const plot = timeSeriesPlot({ times, series, calendar: header.time?.calendar !== false, label: dataset.name });
  cleanups.push(() => plot.destroy());
  section.append(plot);

  // The values as a table: for reading exact numbers and for screen readers.
  const limit = 500;
  const shown = Math.min(limit, times.length);
  const table = h('details', { class: 'values-table' },
    h('summary', {}, `Values as a table${times.length > limit ? ` (first ${limit} of ${number(times.length, 0)} steps)` : ''}`));
  table.addEventListener('toggle', () => {
    if (!table.open || table.querySelector('table')) return;
    const calendar = header.time?.calendar !== false;
    const rows = [];
    for (let k = 0; k < shown; k += 1) {
      rows.push(h('tr', {},
        h('td', { class: 'mono' }, calendar ? formatFileTime(times[k]) : formatDuration(times[k])),
        series.map((s) => h('td', { class: 'num' }, Number.isNaN(s.values[k]) ? '—' : formatValue(s.values[k])))));
    }
    table.append(h('div', { class: 'table-wrap values-wrap', tabindex: '0', role: 'region', 'aria-label': 'Values' },
      h('table', {},
        h('thead', {}, h('tr', {}, h('th', { scope: 'col' }, 'Time'),
          series.map((s) => h('th', { scope: 'col', class: 'num' }, withUnit(s.name, s.unit))))),
        h('tbody', {}, rows))));
  });
  section.append(table);
}
