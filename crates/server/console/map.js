// A small slippy map of the console's own: Web Mercator (EPSG:3857) XYZ tiles drawn on canvases
// stacked in one element: an optional basemap (or a plain background with a graticule), a
// dataset's raster tiles from Basin's XYZ scheme, and a dataset's vector tiles decoded by
// mvt.js. No third-party code.
//
//   const map = createMap(container, { basemapUrl, basemapAttribution });
//   map.fitBounds([west, south, east, north]);
//   map.setRaster({ datasetId, scheme, timeStep, layer });   // scheme: a tilingSchemes[] entry (XYZ)
//   map.setVector({ datasetId, minZoom, maxZoom, style });
//   map.onPointer(({ lon, lat, value, feature, pending }) => ...);
//   map.onTilesDrawn(({ count, complete }) => ...);
//   map.destroy();
//
// Data tiles are fetched with api.js (credentials are headers, so <img> cannot be used) and
// decoded with createImageBitmap; the value under the cursor is exact: the tile under it is
// fetched again as `outputType=RawData` (32-bit floats, docs/tiles.md) from the scheme's finest
// level. Basemap tiles are plain images from another origin: they taint their own canvas only,
// never the data canvas, whose pixels stay readable.

import { send } from './api.js';
import { describeError, h, uid } from './dom.js';
import { decodeTile } from './mvt.js';

const TILE = 256;
const MAX_LATITUDE = 85.0511287798066;
const EARTH_CIRCUMFERENCE = 40075016.68557849;
const BASEMAP_MAX_LEVEL = 19;
const EMPTY = Symbol('empty tile');
const RAW_LEVEL_CACHE = 24;
const RETRY_MS = 10000;

// ---- Web Mercator in the unit square: x from 0 (180° W) to 1, y from 0 (north) to 1. ----

const clamp = (value, low, high) => Math.min(high, Math.max(low, value));
const lonToX = (lon) => (lon + 180) / 360;
const latToY = (lat) => {
  const s = Math.sin((clamp(lat, -MAX_LATITUDE, MAX_LATITUDE) * Math.PI) / 180);
  return 0.5 - Math.log((1 + s) / (1 - s)) / (4 * Math.PI);
};
const xToLon = (x) => x * 360 - 180;
const yToLat = (y) => (360 / Math.PI) * Math.atan(Math.exp((0.5 - y) * 2 * Math.PI)) - 90;

function reducedMotion() {
  return window.matchMedia?.('(prefers-reduced-motion: reduce)').matches ?? false;
}

/** A least-recently-used map; `release(value)` is called for what it drops. */
class Lru {
  constructor(max, release = () => {}) {
    this.max = max;
    this.release = release;
    this.map = new Map();
  }

  get(key) {
    const value = this.map.get(key);
    if (value !== undefined) {
      this.map.delete(key);
      this.map.set(key, value);
    }
    return value;
  }

  peek(key) {
    return this.map.get(key);
  }

  set(key, value, keep) {
    this.map.delete(key);
    this.map.set(key, value);
    if (this.map.size <= this.max) return;
    for (const [oldKey, oldValue] of this.map) {
      if (this.map.size <= this.max) break;
      if (keep && keep(oldKey, oldValue)) continue;
      this.map.delete(oldKey);
      this.release(oldValue);
    }
  }

  delete(key) {
    const value = this.map.get(key);
    if (value === undefined) return;
    this.map.delete(key);
    this.release(value);
  }

  clear() {
    for (const value of this.map.values()) this.release(value);
    this.map.clear();
  }
}

const tileKey = (z, x, y) => `${z}/${x}/${y}`;

/**
 * Tiles of one layer with one set of parameters: loads (at most `concurrency` at once, those
 * nearest the centre first), aborts loads no longer wanted, keeps decoded tiles in an LRU.
 * `load(z, x, y, signal)` resolves to the tile's data or EMPTY; `release(data)` frees it.
 */
class TileSource {
  constructor({ minLevel, maxLevel, tileSize = TILE, load, release = () => {}, concurrency = 6, capacity = 256, onChange }) {
    this.minLevel = minLevel;
    this.maxLevel = maxLevel;
    this.tileSize = tileSize;
    this.loadTile = load;
    this.concurrency = concurrency;
    this.onChange = onChange;
    this.loading = new Map();
    this.failures = new Map();
    this.wanted = new Set();
    this.error = null;
    this.destroyed = false;
    this.tiles = new Lru(capacity, (entry) => { if (entry !== EMPTY) release(entry); });
  }

  /** The level drawn at map zoom `zoom` (tiles of `tileSize` pixels at about one pixel each). */
  levelFor(zoom) {
    return clamp(Math.round(zoom + Math.log2(TILE / this.tileSize)), this.minLevel, this.maxLevel);
  }

  /** The tile's data, EMPTY, or undefined when it is not here. */
  ready(z, x, y) {
    return this.tiles.get(tileKey(z, x, y));
  }

  /** Whether the tile is settled: drawn, empty or failed. */
  settled(z, x, y) {
    const key = tileKey(z, x, y);
    return this.tiles.peek(key) !== undefined || this.failures.has(key);
  }

  /** Asks for these tiles (in order of priority) and no others. */
  want(tiles) {
    this.wanted = new Set(tiles.map((t) => tileKey(t.z, t.x, t.y)));
    for (const [key, controller] of this.loading) {
      if (!this.wanted.has(key)) {
        controller.abort();
        this.loading.delete(key);
      }
    }
    for (const t of tiles) {
      if (this.loading.size >= this.concurrency) break;
      const key = tileKey(t.z, t.x, t.y);
      if (this.loading.has(key) || this.tiles.peek(key) !== undefined) continue;
      const failed = this.failures.get(key);
      if (failed && !(failed.retry && performance.now() - failed.at > RETRY_MS)) continue;
      this.start(t.z, t.x, t.y, key);
    }
  }

  start(z, x, y, key) {
    const controller = new AbortController();
    this.loading.set(key, controller);
    this.loadTile(z, x, y, controller.signal).then((data) => {
      if (this.destroyed || controller.signal.aborted) {
        if (data && data !== EMPTY) this.tiles.release(data);
        return;
      }
      this.failures.delete(key);
      if (!this.failures.size) this.error = null;
      this.tiles.set(key, data, (k) => this.wanted.has(k));
    }, (failure) => {
      if (controller.signal.aborted || failure?.name === 'AbortError' || this.destroyed) return;
      // A refusal (4xx) stays; a network fault or a server error is tried again later.
      const status = failure?.status;
      this.failures.set(key, { failure, at: performance.now(), retry: !(status >= 400 && status < 500) });
      this.error = failure;
      if (status === 0 || status >= 500) setTimeout(() => { if (!this.destroyed) this.onChange(); }, RETRY_MS + 50);
    }).finally(() => {
      if (this.loading.get(key) === controller) this.loading.delete(key);
      if (!this.destroyed) this.onChange();
    });
  }

  destroy() {
    this.destroyed = true;
    for (const controller of this.loading.values()) controller.abort();
    this.loading.clear();
    this.tiles.clear();
  }
}

/** Default look of vector features. */
const DEFAULT_STYLE = {
  fill: 'rgba(10, 95, 168, 0.22)',
  stroke: '#0a5fa8',
  lineWidth: 1.5,
  pointRadius: 4.5,
  pointFill: '#0a5fa8',
  pointStroke: '#ffffff',
};

/** Prepares a decoded vector tile for drawing: one Path2D per feature, in tile units. */
function prepareVectorTile(layers) {
  const features = [];
  for (const layer of layers) {
    for (const feature of layer.features) {
      const item = { layer: layer.name, extent: layer.extent, feature, path: null, box: [Infinity, Infinity, -Infinity, -Infinity] };
      for (const part of feature.geometry) {
        for (const [x, y] of part) {
          item.box = [Math.min(item.box[0], x), Math.min(item.box[1], y), Math.max(item.box[2], x), Math.max(item.box[3], y)];
        }
      }
      if (feature.type === 'Polygon' || feature.type === 'LineString') {
        const path = new Path2D();
        for (const part of feature.geometry) {
          part.forEach(([x, y], i) => (i === 0 ? path.moveTo(x, y) : path.lineTo(x, y)));
          if (feature.type === 'Polygon') path.closePath();
        }
        item.path = path;
      }
      features.push(item);
    }
  }
  // Polygons under lines under points.
  const order = { Polygon: 0, LineString: 1, Point: 2 };
  features.sort((a, b) => (order[a.feature.type] ?? 3) - (order[b.feature.type] ?? 3));
  return { features };
}

function distanceToSegment(px, py, [ax, ay], [bx, by]) {
  const dx = bx - ax;
  const dy = by - ay;
  const length = dx * dx + dy * dy;
  const t = length ? clamp(((px - ax) * dx + (py - ay) * dy) / length, 0, 1) : 0;
  return Math.hypot(px - (ax + t * dx), py - (ay + t * dy));
}

/** Even-odd point in polygon over every ring (holes and parts alike). */
function insideRings(px, py, rings) {
  let inside = false;
  for (const ring of rings) {
    for (let i = 0, j = ring.length - 1; i < ring.length; j = i, i += 1) {
      const [xi, yi] = ring[i];
      const [xj, yj] = ring[j];
      if ((yi > py) !== (yj > py) && px < ((xj - xi) * (py - yi)) / (yj - yi) + xi) inside = !inside;
    }
  }
  return inside;
}

/** A round length for the scale bar at most `max` metres. */
function niceLength(max) {
  const power = 10 ** Math.floor(Math.log10(max));
  for (const step of [5, 2, 1]) if (step * power <= max) return step * power;
  return power;
}

/** Degrees between graticule lines for a span of `degrees` across the view. */
function graticuleStep(degrees) {
  const steps = [90, 45, 30, 15, 10, 5, 2, 1, 0.5, 0.25, 0.1, 0.05, 0.025, 0.01, 0.005, 0.0025, 0.001, 0.0005, 0.0001];
  return steps.find((step) => degrees / step >= 3) ?? steps[steps.length - 1];
}

function formatDegrees(value, step, positive, negative) {
  const decimals = step >= 1 ? 0 : Math.min(4, Math.ceil(-Math.log10(step)));
  const text = Math.abs(value).toFixed(decimals);
  if (Number(text) === 0) return `0°`;
  return `${text}° ${value > 0 ? positive : negative}`;
}

/**
 * A map in `container` (which should have a height). Options: `basemapUrl` (a template with
 * {z}, {x} and {y}; none draws a plain background with a graticule), `basemapAttribution`,
 * `label` (the map's accessible name).
 */
export function createMap(container, { basemapUrl = null, basemapAttribution = '', label = 'Map' } = {}) {
  const hintId = uid('map-hint');
  const canvases = {
    base: h('canvas', { class: 'map-canvas', 'aria-hidden': 'true' }),
    data: h('canvas', { class: 'map-canvas', 'aria-hidden': 'true' }),
    vector: h('canvas', { class: 'map-canvas', 'aria-hidden': 'true' }),
  };
  const surface = h('div', {
    class: 'map-surface', tabindex: '0', role: 'application', 'aria-label': label,
    'aria-describedby': hintId, 'aria-roledescription': 'map',
  }, canvases.base, canvases.data, canvases.vector, h('div', { class: 'map-crosshair', 'aria-hidden': 'true' }));
  const zoomIn = h('button', { type: 'button', class: 'map-button', 'aria-label': 'Zoom in', title: 'Zoom in' }, '+');
  const zoomOut = h('button', { type: 'button', class: 'map-button', 'aria-label': 'Zoom out', title: 'Zoom out' }, '−');
  const fit = h('button', { type: 'button', class: 'map-button', 'aria-label': 'Zoom to the data', title: 'Zoom to the data', hidden: true }, '⤢');
  const scaleBar = h('div', { class: 'map-scale-bar' });
  const scaleText = h('span', { class: 'map-scale-text' });
  const status = h('p', { class: 'map-status', role: 'status', hidden: true });
  const announcer = h('p', { class: 'map-sr-only', 'aria-live': 'polite' });
  const attribution = basemapUrl && basemapAttribution
    ? h('div', { class: 'map-attribution' }, basemapAttribution)
    : null;
  const root = h('div', { class: 'map' },
    surface,
    h('div', { class: 'map-controls' }, zoomIn, zoomOut, fit),
    h('div', { class: 'map-scale', 'aria-hidden': 'true' }, scaleBar, scaleText),
    attribution,
    status,
    h('p', { class: 'map-sr-only', id: hintId },
      'Drag or use the arrow keys to move the map; the mouse wheel, a double click, pinching, and the plus and minus keys zoom; Home returns to the data.'),
    announcer);
  container.append(root);

  const contexts = {
    base: canvases.base.getContext('2d'),
    data: canvases.data.getContext('2d'),
    vector: canvases.vector.getContext('2d'),
  };

  // ---- State ----
  const view = { x: 0.5, y: 0.5, zoom: 1 };
  let size = { width: 0, height: 0, ratio: 1 };
  let frameId = 0;
  let animation = null;
  let fitted = null;
  let destroyed = false;
  const pointerCallbacks = new Set();
  const drawnCallbacks = new Set();
  const leaveCallbacks = new Set();
  let raster = null;
  let previousRaster = null;
  let vector = null;
  let previousVector = null;
  let lastStatus = '';

  const basemap = basemapUrl ? new TileSource({
    minLevel: 0,
    maxLevel: BASEMAP_MAX_LEVEL,
    concurrency: 6,
    capacity: 200,
    onChange: requestFrame,
    load: (z, x, y) => new Promise((resolve, reject) => {
      const image = new Image();
      image.decoding = 'async';
      image.alt = '';
      image.onload = () => resolve(image);
      image.onerror = () => reject(new Error('basemap tile'));
      image.src = basemapUrl.replace('{z}', z).replace('{x}', x).replace('{y}', y);
    }),
  }) : null;

  function minZoom() {
    return 0;
  }

  function maxZoom() {
    if (raster) return raster.source.maxLevel - Math.log2(TILE / raster.source.tileSize) + 4;
    if (vector) return Math.min(24, vector.source.maxLevel + 5);
    return 20;
  }

  function worldPixels(zoom = view.zoom) {
    return TILE * 2 ** zoom;
  }

  function screenToWorld(sx, sy, zoom = view.zoom, center = view) {
    const world = worldPixels(zoom);
    return { x: center.x + (sx - size.width / 2) / world, y: center.y + (sy - size.height / 2) / world };
  }

  function worldToScreen(wx, wy) {
    const world = worldPixels();
    return { x: (wx - view.x) * world + size.width / 2, y: (wy - view.y) * world + size.height / 2 };
  }

  function setCenter(x, y) {
    view.x = clamp(x, 0, 1);
    view.y = clamp(y, 0, 1);
  }

  function setZoomAround(zoom, sx, sy) {
    const anchor = screenToWorld(sx, sy);
    view.zoom = clamp(zoom, minZoom(), maxZoom());
    const world = worldPixels();
    setCenter(anchor.x - (sx - size.width / 2) / world, anchor.y - (sy - size.height / 2) / world);
  }

  function requestFrame() {
    if (!frameId && !destroyed) frameId = requestAnimationFrame(frame);
  }

  // ---- Animation (buttons, keys, double click); none when the person prefers less motion ----

  function animateZoom(target, sx = size.width / 2, sy = size.height / 2) {
    const to = clamp(target, minZoom(), maxZoom());
    if (reducedMotion()) {
      setZoomAround(to, sx, sy);
      requestFrame();
      return;
    }
    animation = { start: performance.now(), duration: 220, from: view.zoom, to, sx, sy };
    requestFrame();
  }

  /** The zoom one level in (+1) or out (-1) from where the view is going. */
  function nextZoom(direction) {
    const from = animation ? animation.to : view.zoom;
    return Math.round(from) + direction;
  }

  function stepAnimation(now) {
    if (!animation) return;
    const t = clamp((now - animation.start) / animation.duration, 0, 1);
    const eased = 1 - (1 - t) ** 3;
    setZoomAround(animation.from + (animation.to - animation.from) * eased, animation.sx, animation.sy);
    if (t >= 1) animation = null;
  }

  // ---- Sizing ----

  function resize() {
    const rect = surface.getBoundingClientRect();
    const ratio = window.devicePixelRatio || 1;
    const width = Math.max(0, Math.round(rect.width));
    const height = Math.max(0, Math.round(rect.height));
    if (width === size.width && height === size.height && ratio === size.ratio) return false;
    size = { width, height, ratio };
    for (const canvas of Object.values(canvases)) {
      canvas.width = Math.round(width * ratio);
      canvas.height = Math.round(height * ratio);
    }
    if (fitted && fitted.pending) applyFit(fitted.bounds);
    return true;
  }

  const observer = new ResizeObserver(() => requestFrame());
  observer.observe(surface);

  // ---- Tiles in view ----

  /** The tiles of `level` over the view, nearest the centre first. */
  function visibleTiles(level) {
    const n = 2 ** level;
    const topLeft = screenToWorld(0, 0);
    const bottomRight = screenToWorld(size.width, size.height);
    const x0 = clamp(Math.floor(topLeft.x * n), 0, n - 1);
    const x1 = clamp(Math.floor(bottomRight.x * n), 0, n - 1);
    const y0 = clamp(Math.floor(topLeft.y * n), 0, n - 1);
    const y1 = clamp(Math.floor(bottomRight.y * n), 0, n - 1);
    const tiles = [];
    if (bottomRight.x <= 0 || topLeft.x >= 1 || bottomRight.y <= 0 || topLeft.y >= 1) return tiles;
    for (let y = y0; y <= y1; y += 1) {
      for (let x = x0; x <= x1; x += 1) tiles.push({ z: level, x, y });
    }
    const cx = view.x * n - 0.5;
    const cy = view.y * n - 0.5;
    tiles.sort((a, b) => Math.hypot(a.x - cx, a.y - cy) - Math.hypot(b.x - cx, b.y - cy));
    return tiles;
  }

  /** The tile's rectangle on the canvas, in device pixels, rounded so neighbours meet. */
  function tileRect(z, x, y) {
    const n = 2 ** z;
    const world = worldPixels() * size.ratio;
    const originX = (size.width * size.ratio) / 2 - view.x * world;
    const originY = (size.height * size.ratio) / 2 - view.y * world;
    const left = Math.round(originX + (x / n) * world);
    const top = Math.round(originY + (y / n) * world);
    const right = Math.round(originX + ((x + 1) / n) * world);
    const bottom = Math.round(originY + ((y + 1) / n) * world);
    return { left, top, width: right - left, height: bottom - top };
  }

  /**
   * Draws `source`'s tiles over the view with `paint(ctx, data, rect)`. A tile still loading is
   * stood in for (clipped to its place) by a loaded ancestor, the same tile (or an ancestor) of
   * `previous` (the parameters before: another time step, layer or item), and loaded children.
   * Returns {drawn, complete, level}.
   */
  function drawSource(ctx, source, previous, paint) {
    const level = source.levelFor(view.zoom);
    const tiles = visibleTiles(level);
    source.want(tiles);
    let drawn = 0;
    let complete = true;
    const fallbacks = [];
    const exact = [];
    for (const t of tiles) {
      const data = source.ready(t.z, t.x, t.y);
      if (data !== undefined) {
        if (data !== EMPTY) exact.push([t, data]);
        continue;
      }
      if (!source.settled(t.z, t.x, t.y)) complete = false;
      fallbacks.push(t);
    }
    for (const t of fallbacks) {
      const rect = tileRect(t.z, t.x, t.y);
      ctx.save();
      ctx.beginPath();
      ctx.rect(rect.left, rect.top, rect.width, rect.height);
      ctx.clip();
      let stand = null;
      for (const candidate of [source, previous]) {
        if (!candidate || stand) continue;
        const same = candidate !== source ? candidate.ready(t.z, t.x, t.y) : undefined;
        if (same !== undefined) {
          stand = [t, same];
          break;
        }
        for (let up = 1; up <= 6 && t.z - up >= candidate.minLevel; up += 1) {
          const z = t.z - up;
          const x = t.x >> up;
          const y = t.y >> up;
          const data = candidate.ready(z, x, y);
          if (data !== undefined) {
            stand = [{ z, x, y }, data];
            break;
          }
        }
      }
      if (stand && stand[1] !== EMPTY) paint(ctx, stand[1], tileRect(stand[0].z, stand[0].x, stand[0].y));
      if (t.z + 1 <= source.maxLevel) {
        for (let dy = 0; dy < 2; dy += 1) {
          for (let dx = 0; dx < 2; dx += 1) {
            const child = source.ready(t.z + 1, t.x * 2 + dx, t.y * 2 + dy);
            if (child !== undefined && child !== EMPTY) paint(ctx, child, tileRect(t.z + 1, t.x * 2 + dx, t.y * 2 + dy));
          }
        }
      }
      ctx.restore();
    }
    for (const [t, data] of exact) {
      paint(ctx, data, tileRect(t.z, t.x, t.y));
      drawn += 1;
    }
    return { drawn, complete, level };
  }

  function paintBitmap(ctx, bitmap, rect) {
    ctx.drawImage(bitmap, rect.left, rect.top, rect.width, rect.height);
  }

  function paintVector(style) {
    return (ctx, tile, rect) => {
      // Features reach 64 units past their tile (the buffer); the neighbour draws that part.
      ctx.save();
      ctx.beginPath();
      ctx.rect(rect.left, rect.top, rect.width, rect.height);
      ctx.clip();
      for (const item of tile.features) {
        const look = typeof style === 'function' ? { ...DEFAULT_STYLE, ...style(item.feature, item.layer) } : style;
        const scale = rect.width / item.extent;
        const { type } = item.feature;
        if (type === 'Polygon' || type === 'LineString') {
          ctx.save();
          ctx.setTransform(scale, 0, 0, scale, rect.left, rect.top);
          ctx.lineWidth = (look.lineWidth * size.ratio) / scale;
          ctx.lineJoin = 'round';
          ctx.lineCap = 'round';
          if (type === 'Polygon' && look.fill) {
            ctx.fillStyle = look.fill;
            ctx.fill(item.path, 'evenodd');
          }
          if (look.stroke && look.lineWidth > 0) {
            ctx.strokeStyle = look.stroke;
            ctx.stroke(item.path);
          }
          ctx.restore();
        } else if (type === 'Point') {
          ctx.fillStyle = look.pointFill;
          ctx.strokeStyle = look.pointStroke;
          ctx.lineWidth = 1.5 * size.ratio;
          for (const part of item.feature.geometry) {
            for (const [x, y] of part) {
              ctx.beginPath();
              ctx.arc(rect.left + x * scale, rect.top + y * scale, look.pointRadius * size.ratio, 0, 2 * Math.PI);
              ctx.fill();
              ctx.stroke();
            }
          }
        }
      }
      ctx.restore();
    };
  }

  // ---- The base: basemap tiles, or a plain background with a graticule ----

  function drawBase() {
    const ctx = contexts.base;
    const { width, height, ratio } = size;
    ctx.setTransform(1, 0, 0, 1, 0, 0);
    ctx.fillStyle = '#dfe6ec';
    ctx.fillRect(0, 0, width * ratio, height * ratio);
    const world = tileRect(0, 0, 0);
    ctx.fillStyle = '#f4f7f9';
    ctx.fillRect(world.left, world.top, world.width, world.height);
    if (basemap) {
      ctx.imageSmoothingEnabled = true;
      drawSource(ctx, basemap, null, paintBitmap);
      return;
    }
    drawGraticule(ctx);
  }

  function drawGraticule(ctx) {
    const { width, height, ratio } = size;
    const topLeft = screenToWorld(0, 0);
    const bottomRight = screenToWorld(width, height);
    const west = Math.max(-180, xToLon(topLeft.x));
    const east = Math.min(180, xToLon(bottomRight.x));
    const north = Math.min(MAX_LATITUDE, yToLat(clamp(topLeft.y, 0, 1)));
    const south = Math.max(-MAX_LATITUDE, yToLat(clamp(bottomRight.y, 0, 1)));
    if (!(east > west && north > south)) return;
    const step = graticuleStep(Math.min(east - west, (north - south) * 1.5));
    ctx.strokeStyle = '#cdd7e0';
    ctx.lineWidth = Math.max(1, Math.round(ratio));
    ctx.fillStyle = '#4a5868';
    ctx.font = `${11 * ratio}px system-ui, sans-serif`;
    ctx.textBaseline = 'top';
    ctx.beginPath();
    const labels = [];
    for (let lon = Math.ceil(west / step) * step; lon <= east; lon += step) {
      const x = Math.round(worldToScreen(lonToX(lon), 0).x * ratio) + 0.5;
      ctx.moveTo(x, Math.max(0, tileRect(0, 0, 0).top));
      ctx.lineTo(x, Math.min(height * ratio, tileRect(0, 0, 0).top + tileRect(0, 0, 0).height));
      labels.push([formatDegrees(lon, step, 'E', 'W'), x + 3 * ratio, 3 * ratio]);
    }
    for (let lat = Math.ceil(south / step) * step; lat <= north; lat += step) {
      const y = Math.round(worldToScreen(0, latToY(lat)).y * ratio) + 0.5;
      const world = tileRect(0, 0, 0);
      ctx.moveTo(Math.max(0, world.left), y);
      ctx.lineTo(Math.min(width * ratio, world.left + world.width), y);
      labels.push([formatDegrees(lat, step, 'N', 'S'), 3 * ratio, y + 2 * ratio]);
    }
    ctx.stroke();
    for (const [text, x, y] of labels) ctx.fillText(text, x, y);
  }

  // ---- The frame ----

  let lastScale = '';

  function updateScale() {
    const latitude = yToLat(view.y);
    const metresPerPixel = (EARTH_CIRCUMFERENCE * Math.cos((latitude * Math.PI) / 180)) / worldPixels();
    const metres = niceLength(metresPerPixel * 100);
    const text = metres >= 1000 ? `${metres / 1000} km` : `${metres} m`;
    const key = `${text}|${Math.round(metres / metresPerPixel)}`;
    if (key === lastScale) return;
    lastScale = key;
    scaleBar.style.width = `${Math.round(metres / metresPerPixel)}px`;
    scaleText.textContent = text;
  }

  function showStatus() {
    const failure = raster?.source.error || vector?.source.error;
    const text = failure ? `Some tiles could not be drawn: ${describeError(failure)}` : '';
    if (text === lastStatus) return;
    lastStatus = text;
    status.textContent = text;
    status.hidden = !text;
  }

  function frame(now) {
    frameId = 0;
    if (destroyed) return;
    stepAnimation(now ?? performance.now());
    resize();
    if (animation) requestFrame();
    if (!size.width || !size.height) return;
    zoomIn.disabled = view.zoom >= maxZoom() - 1e-9;
    zoomOut.disabled = view.zoom <= minZoom() + 1e-9;
    updateScale();
    drawBase();

    const data = contexts.data;
    data.setTransform(1, 0, 0, 1, 0, 0);
    data.clearRect(0, 0, canvases.data.width, canvases.data.height);
    data.imageSmoothingEnabled = false;
    let rasterResult = { drawn: 0, complete: true };
    if (raster) {
      rasterResult = drawSource(data, raster.source, previousRaster?.source, paintBitmap);
      if (rasterResult.complete && previousRaster) {
        previousRaster.source.destroy();
        previousRaster = null;
      }
    }
    const vectorContext = contexts.vector;
    vectorContext.setTransform(1, 0, 0, 1, 0, 0);
    vectorContext.clearRect(0, 0, canvases.vector.width, canvases.vector.height);
    let vectorResult = { drawn: 0, complete: true };
    if (vector) {
      vectorResult = drawSource(vectorContext, vector.source, previousVector?.source, paintVector(vector.style));
      if (vectorResult.complete && previousVector) {
        previousVector.source.destroy();
        previousVector = null;
      }
    }
    showStatus();
    // Whether every tile in view is in: `data-tiles` for tests and screenshots, `aria-busy`
    // for assistive technology.
    const settled = rasterResult.complete && vectorResult.complete;
    root.dataset.tiles = settled ? 'complete' : 'loading';
    root.setAttribute('aria-busy', settled ? 'false' : 'true');
    if (raster || vector) {
      const detail = {
        count: rasterResult.drawn + vectorResult.drawn,
        raster: rasterResult.drawn,
        vector: vectorResult.drawn,
        complete: rasterResult.complete && vectorResult.complete,
        zoom: view.zoom,
      };
      for (const callback of drawnCallbacks) callback(detail);
    }
  }

  // ---- Fitting ----

  function applyFit([west, south, east, north]) {
    if (!size.width || !size.height) {
      fitted = { bounds: [west, south, east, north], pending: true };
      return;
    }
    fitted = { bounds: [west, south, east, north], pending: false };
    const x0 = lonToX(Math.min(west, east));
    const x1 = lonToX(Math.max(west, east));
    const y0 = latToY(Math.max(south, north));
    const y1 = latToY(Math.min(south, north));
    const padding = Math.min(40, size.width / 8, size.height / 8);
    const spanX = Math.max(x1 - x0, 1e-12);
    const spanY = Math.max(y1 - y0, 1e-12);
    const zoom = Math.log2(Math.min((size.width - 2 * padding) / spanX, (size.height - 2 * padding) / spanY) / TILE);
    view.zoom = clamp(zoom, minZoom(), maxZoom());
    setCenter((x0 + x1) / 2, (y0 + y1) / 2);
    requestFrame();
  }

  // ---- Values and features under the cursor ----

  const rawTiles = new Lru(RAW_LEVEL_CACHE);

  /** The raw values of a tile of the raster's finest level (cached), or null when unavailable. */
  function rawTile(current, x, y) {
    const key = `${current.id}|${x}/${y}`;
    const cached = rawTiles.get(key);
    if (cached !== undefined) return cached;
    const { datasetId, scheme, timeStep, layer, rawLevel, rawSize } = current;
    const promise = send('GET', `/api/tiles/dataset/${encodeURIComponent(datasetId)}/scheme/${encodeURIComponent(scheme.schemeId)}/${rawLevel}/${y}/${x}`, {
      query: { timeStep, layer, outputType: 'RawData' },
      headers: { Accept: 'application/octet-stream' },
    }).then((response) => response.arrayBuffer()).then((buffer) => {
      if (buffer.byteLength !== rawSize * rawSize * 4) return null;
      const view32 = new DataView(buffer);
      const values = new Float32Array(rawSize * rawSize);
      for (let i = 0; i < values.length; i += 1) values[i] = view32.getFloat32(i * 4, true);
      rawTiles.set(key, values);
      return values;
    }, () => {
      rawTiles.delete(key);
      return null;
    });
    rawTiles.set(key, promise);
    return promise;
  }

  /** Where world position (wx, wy) is in the raster's finest level: tile and pixel. */
  function rawAddress(current, wx, wy) {
    if (wx < 0 || wx >= 1 || wy < 0 || wy >= 1) return null;
    const n = 2 ** current.rawLevel;
    const px = Math.floor(wx * n * current.rawSize);
    const py = Math.floor(wy * n * current.rawSize);
    return {
      x: Math.floor(px / current.rawSize),
      y: Math.floor(py / current.rawSize),
      index: (py % current.rawSize) * current.rawSize + (px % current.rawSize),
    };
  }

  function valueIn(values, index) {
    if (!values || !(values instanceof Float32Array)) return null;
    const value = values[index];
    return Number.isFinite(value) ? value : null;
  }

  /** The exact value at (lon, lat) of the raster (null: no data there, or no raster). */
  async function valueAt(lon, lat) {
    const current = raster;
    if (!current) return null;
    const address = rawAddress(current, lonToX(lon), latToY(lat));
    if (!address) return null;
    const values = await rawTile(current, address.x, address.y);
    return valueIn(values, address.index);
  }

  /** The vector feature drawn at screen point (sx, sy), topmost first, or null. */
  function featureAt(sx, sy) {
    if (!vector) return null;
    const source = vector.source;
    const level = source.levelFor(view.zoom);
    const world = screenToWorld(sx, sy);
    const n = 2 ** level;
    const x = Math.floor(world.x * n);
    const y = Math.floor(world.y * n);
    if (x < 0 || y < 0 || x >= n || y >= n) return null;
    const tile = source.ready(level, x, y);
    if (!tile || tile === EMPTY) return null;
    const tilePixels = worldPixels() / n;
    for (let i = tile.features.length - 1; i >= 0; i -= 1) {
      const item = tile.features[i];
      const units = item.extent / tilePixels;
      const px = (world.x * n - x) * item.extent;
      const py = (world.y * n - y) * item.extent;
      const look = typeof vector.style === 'function' ? { ...DEFAULT_STYLE, ...vector.style(item.feature, item.layer) } : vector.style;
      const { type, geometry } = item.feature;
      const slack = (Math.max(look.pointRadius, look.lineWidth) + 3) * units;
      if (px < item.box[0] - slack || px > item.box[2] + slack || py < item.box[1] - slack || py > item.box[3] + slack) continue;
      let hit = false;
      if (type === 'Point') {
        const reach = (look.pointRadius + 3) * units;
        hit = geometry.some((part) => part.some(([qx, qy]) => Math.hypot(qx - px, qy - py) <= reach));
      } else if (type === 'LineString') {
        const reach = (look.lineWidth / 2 + 3) * units;
        hit = geometry.some((part) => part.some((point, k) => k > 0 && distanceToSegment(px, py, part[k - 1], point) <= reach));
      } else if (type === 'Polygon') {
        hit = insideRings(px, py, geometry);
      }
      if (hit) return { layer: item.layer, properties: { ...item.feature.properties }, id: item.feature.id, type };
    }
    return null;
  }

  let pointerSerial = 0;
  let pointerTimer = null;

  function emitPointer(detail) {
    for (const callback of pointerCallbacks) callback(detail);
  }

  /** Reports what is at screen point (sx, sy): place, exact value (maybe after a fetch), feature. */
  function reportPointer(sx, sy, via = 'pointer') {
    const world = screenToWorld(sx, sy);
    const base = {
      lon: xToLon(clamp(world.x, 0, 1)),
      lat: yToLat(clamp(world.y, 0, 1)),
      x: sx,
      y: sy,
      via,
      feature: featureAt(sx, sy),
    };
    pointerSerial += 1;
    const serial = pointerSerial;
    clearTimeout(pointerTimer);
    const current = raster;
    const address = current && rawAddress(current, world.x, world.y);
    if (!address) {
      emitPointer({ ...base, value: null });
      return;
    }
    const cached = rawTiles.get(`${current.id}|${address.x}/${address.y}`);
    if (cached !== undefined && !(cached instanceof Promise)) {
      emitPointer({ ...base, value: valueIn(cached, address.index) });
      return;
    }
    emitPointer({ ...base, value: null, pending: true });
    pointerTimer = setTimeout(async () => {
      const values = await rawTile(current, address.x, address.y);
      if (serial !== pointerSerial || destroyed || current !== raster) return;
      emitPointer({ ...base, value: valueIn(values, address.index) });
    }, 90);
  }

  // ---- Input ----

  // Hovering is handled once a frame, at the last position.
  let hoverPoint = null;
  let hoverFrame = 0;
  function hoverAt(point) {
    hoverPoint = point;
    if (hoverFrame) return;
    hoverFrame = requestAnimationFrame(() => {
      hoverFrame = 0;
      if (!destroyed && hoverPoint) reportPointer(hoverPoint.x, hoverPoint.y);
    });
  }

  const pointers = new Map();
  let gesture = null;
  let lastTap = null;
  let lastPointerType = 'mouse';

  function localPoint(event) {
    const rect = surface.getBoundingClientRect();
    return { x: event.clientX - rect.left, y: event.clientY - rect.top };
  }

  function startGesture() {
    const points = [...pointers.values()];
    if (points.length >= 2) {
      const [a, b] = points;
      const mid = { x: (a.x + b.x) / 2, y: (a.y + b.y) / 2 };
      gesture = { kind: 'pinch', distance: Math.max(1, Math.hypot(a.x - b.x, a.y - b.y)), zoom: view.zoom, anchor: screenToWorld(mid.x, mid.y) };
    } else if (points.length === 1) {
      gesture = { kind: 'drag', last: { ...points[0] }, moved: 0, start: { ...points[0] } };
    } else {
      gesture = null;
    }
  }

  surface.addEventListener('pointerdown', (event) => {
    if (event.pointerType === 'mouse' && event.button !== 0) return;
    lastPointerType = event.pointerType;
    animation = null;
    surface.setPointerCapture?.(event.pointerId);
    pointers.set(event.pointerId, localPoint(event));
    startGesture();
    surface.classList.add('map-dragging');
  });

  surface.addEventListener('pointermove', (event) => {
    const point = localPoint(event);
    if (!pointers.has(event.pointerId)) {
      if (event.pointerType !== 'touch') hoverAt(point);
      return;
    }
    pointers.set(event.pointerId, point);
    if (!gesture) return;
    if (gesture.kind === 'drag') {
      const dx = point.x - gesture.last.x;
      const dy = point.y - gesture.last.y;
      gesture.last = point;
      gesture.moved = Math.max(gesture.moved, Math.hypot(point.x - gesture.start.x, point.y - gesture.start.y));
      const world = worldPixels();
      setCenter(view.x - dx / world, view.y - dy / world);
      requestFrame();
    } else if (gesture.kind === 'pinch') {
      const [a, b] = [...pointers.values()];
      const mid = { x: (a.x + b.x) / 2, y: (a.y + b.y) / 2 };
      view.zoom = clamp(gesture.zoom + Math.log2(Math.max(1, Math.hypot(a.x - b.x, a.y - b.y)) / gesture.distance), minZoom(), maxZoom());
      const world = worldPixels();
      setCenter(gesture.anchor.x - (mid.x - size.width / 2) / world, gesture.anchor.y - (mid.y - size.height / 2) / world);
      requestFrame();
    }
  });

  function endPointer(event) {
    if (!pointers.has(event.pointerId)) return;
    const point = localPoint(event);
    const wasTap = gesture?.kind === 'drag' && gesture.moved < 6 && pointers.size === 1;
    pointers.delete(event.pointerId);
    startGesture();
    if (!pointers.size) surface.classList.remove('map-dragging');
    if (event.type !== 'pointerup' || !wasTap) return;
    reportPointer(point.x, point.y);
    if (event.pointerType === 'touch') {
      const now = performance.now();
      if (lastTap && now - lastTap.time < 320 && Math.hypot(point.x - lastTap.x, point.y - lastTap.y) < 24) {
        animateZoom(nextZoom(1), point.x, point.y);
        lastTap = null;
      } else {
        lastTap = { time: now, ...point };
      }
    }
  }
  surface.addEventListener('pointerup', endPointer);
  surface.addEventListener('pointercancel', endPointer);
  surface.addEventListener('pointerleave', (event) => {
    if (pointers.has(event.pointerId)) return;
    hoverPoint = null;
    clearTimeout(pointerTimer);
    pointerSerial += 1;
    for (const callback of leaveCallbacks) callback();
  });

  surface.addEventListener('dblclick', (event) => {
    if (lastPointerType === 'touch') return;
    event.preventDefault();
    const point = localPoint(event);
    animateZoom(nextZoom(event.shiftKey ? -1 : 1), point.x, point.y);
  });

  surface.addEventListener('wheel', (event) => {
    event.preventDefault();
    animation = null;
    const lines = event.deltaMode === 1 ? 33 : event.deltaMode === 2 ? size.height : 1;
    const delta = clamp(-(event.deltaY * lines) / 240, -1, 1);
    const point = localPoint(event);
    setZoomAround(view.zoom + delta, point.x, point.y);
    requestFrame();
    reportPointer(point.x, point.y);
  }, { passive: false });

  let announceTimer = null;
  function announce() {
    clearTimeout(announceTimer);
    announceTimer = setTimeout(() => {
      const lat = yToLat(view.y);
      const lon = xToLon(view.x);
      announcer.textContent = `Centre ${Math.abs(lat).toFixed(4)}° ${lat >= 0 ? 'N' : 'S'}, ${Math.abs(lon).toFixed(4)}° ${lon >= 0 ? 'E' : 'W'}, zoom ${view.zoom.toFixed(1)}`;
    }, 400);
  }

  surface.addEventListener('keydown', (event) => {
    if (event.altKey || event.ctrlKey || event.metaKey) return;
    const step = event.shiftKey ? 300 : 80;
    const world = worldPixels();
    let handled = true;
    switch (event.key) {
      case 'ArrowLeft': setCenter(view.x - step / world, view.y); break;
      case 'ArrowRight': setCenter(view.x + step / world, view.y); break;
      case 'ArrowUp': setCenter(view.x, view.y - step / world); break;
      case 'ArrowDown': setCenter(view.x, view.y + step / world); break;
      case '+': case '=': case 'Add': animateZoom(nextZoom(1)); break;
      case '-': case '_': case 'Subtract': animateZoom(nextZoom(-1)); break;
      case 'Home': case '0':
        if (fitted) applyFit(fitted.bounds);
        else handled = false;
        break;
      default: handled = false;
    }
    if (!handled) return;
    event.preventDefault();
    requestFrame();
    announce();
    // Keyboard users get the value at the centre (the crosshair) once the move settles.
    setTimeout(() => { if (!destroyed) reportPointer(size.width / 2, size.height / 2, 'keyboard'); }, animation ? 240 : 0);
  });

  zoomIn.addEventListener('click', () => { animateZoom(nextZoom(1)); announce(); });
  zoomOut.addEventListener('click', () => { animateZoom(nextZoom(-1)); announce(); });
  fit.addEventListener('click', () => { if (fitted) applyFit(fitted.bounds); announce(); });

  // ---- Layers ----

  let serial = 0;

  function rasterSource({ datasetId, scheme, timeStep, layer }) {
    if (!scheme || String(scheme.schemeType).toUpperCase() !== 'XYZ') {
      throw new Error('map.setRaster needs an XYZ scheme (Web Mercator) of the tiling metadata');
    }
    const levels = (scheme.zoomLevels || []).map(Number).filter(Number.isFinite);
    // A scheme offers the levels 0 to the largest listed (docs/tiles.md).
    const minLevel = 0;
    const maxLevel = levels.length ? Math.max(...levels) : 18;
    const tileSize = Number(scheme.tileWidth) || TILE;
    const base = `/api/tiles/dataset/${encodeURIComponent(datasetId)}/scheme/${encodeURIComponent(scheme.schemeId)}`;
    // Schemes of raw values or bins (for clients that colour on their own) are drawn in colour.
    const drawable = ['PNG', 'WEBP'].includes(String(scheme.outputType || 'PNG').toUpperCase());
    const query = { timeStep: timeStep ?? undefined, layer: layer ?? undefined, outputType: drawable ? undefined : 'PNG' };
    // Tiles without data are the scheme's empty tile: known by its ETag, never decoded.
    const emptyTag = send('GET', `${base}/emptyTile`, { headers: { Accept: 'image/*' } })
      .then((response) => { response.body?.cancel(); return response.headers.get('ETag'); })
      .catch(() => null);
    serial += 1;
    return {
      id: `${serial}`,
      datasetId,
      scheme,
      timeStep,
      layer,
      rawLevel: maxLevel,
      rawSize: tileSize,
      source: new TileSource({
        minLevel,
        maxLevel,
        tileSize,
        concurrency: 6,
        capacity: 160,
        onChange: requestFrame,
        release: (bitmap) => bitmap.close?.(),
        load: async (z, x, y, signal) => {
          const empty = await emptyTag;
          const response = await send('GET', `${base}/${z}/${y}/${x}`, { query, signal, headers: { Accept: 'image/*' } });
          if (empty && response.headers.get('ETag') === empty) {
            response.body?.cancel();
            return EMPTY;
          }
          const blob = await response.blob();
          if (signal.aborted) return EMPTY;
          return createImageBitmap(blob, { colorSpaceConversion: 'none', premultiplyAlpha: 'default' });
        },
      }),
    };
  }

  function vectorSource({ datasetId, minZoom: low = 0, maxZoom: high = 16, style }) {
    serial += 1;
    return {
      id: `${serial}`,
      datasetId,
      style: typeof style === 'function' ? style : { ...DEFAULT_STYLE, ...(style || {}) },
      source: new TileSource({
        minLevel: clamp(Math.round(low), 0, 24),
        maxLevel: clamp(Math.round(high), 0, 24),
        concurrency: 6,
        capacity: 200,
        onChange: requestFrame,
        load: async (z, x, y, signal) => {
          const response = await send('GET', `/api/vectortiles/dataset/${encodeURIComponent(datasetId)}/${z}/${x}/${y}.vector.pbf`, {
            signal, headers: { Accept: 'application/vnd.mapbox-vector-tile' },
          });
          const buffer = await response.arrayBuffer();
          if (!buffer.byteLength) return EMPTY;
          const tile = prepareVectorTile(decodeTile(buffer));
          return tile.features.length ? tile : EMPTY;
        },
      }),
    };
  }

  const map = {
    /** The outer element (controls included). */
    element: root,
    /** The canvases: base (basemap or background), data (raster tiles), vector. */
    canvases,

    /** Shows [west, south, east, north] (WGS 84 degrees) with a margin; Home comes back here. */
    fitBounds(bounds) {
      if (!Array.isArray(bounds) || bounds.length !== 4 || !bounds.every(Number.isFinite)) return;
      fit.hidden = false;
      animation = null;
      applyFit(bounds);
    },

    /** Draws a dataset's raster tiles of an XYZ scheme (null clears). Another time step,
     *  layer or item of the same dataset replaces the tiles without a blank: the old ones stay
     *  until the new ones are in. */
    setRaster(options) {
      const next = options ? rasterSource(options) : null;
      // Any XYZ tile of a level covers the same ground, so the tiles of another step, layer or
      // item of the same dataset stand in until the new ones are in.
      const sameDataset = next && raster && raster.datasetId === next.datasetId;
      if (previousRaster) previousRaster.source.destroy();
      previousRaster = null;
      if (raster) {
        if (sameDataset) previousRaster = raster;
        else raster.source.destroy();
      }
      raster = next;
      rawTiles.clear();
      view.zoom = clamp(view.zoom, minZoom(), maxZoom());
      requestFrame();
    },

    /** Draws a dataset's vector tiles (null clears). `style`: {fill, stroke, lineWidth,
     *  pointRadius, pointFill, pointStroke} or a function (feature, layerName) -> such. */
    setVector(options) {
      const next = options ? vectorSource(options) : null;
      if (previousVector) previousVector.source.destroy();
      previousVector = null;
      if (vector) {
        if (next && vector.datasetId === next.datasetId) previousVector = vector;
        else vector.source.destroy();
      }
      vector = next;
      requestFrame();
    },

    /** Calls `callback({lon, lat, value, feature, pending, x, y, via})` as the pointer moves
     *  (and for the centre after keyboard moves): `value` is the raster's exact value there
     *  (null: no data; `pending` while it is fetched, then called again), `feature` the
     *  vector feature under it ({layer, properties, id, type}) or null. Returns an unsubscribe. */
    onPointer(callback) {
      pointerCallbacks.add(callback);
      return () => pointerCallbacks.delete(callback);
    },

    /** Calls `callback()` when the pointer leaves the map. */
    onPointerLeave(callback) {
      leaveCallbacks.add(callback);
      return () => leaveCallbacks.delete(callback);
    },

    /** Calls `callback({count, raster, vector, complete, zoom})` after each frame that drew
     *  data: `count` data tiles with content drawn, `complete` when every tile in view is in. */
    onTilesDrawn(callback) {
      drawnCallbacks.add(callback);
      return () => drawnCallbacks.delete(callback);
    },

    /** The exact raster value at (lon, lat): a number, or null. */
    valueAt,

    /** {lon, lat, zoom} of the view's centre. */
    getView() {
      return { lon: xToLon(view.x), lat: yToLat(view.y), zoom: view.zoom };
    },

    /** Moves to {lon, lat, zoom} (each optional). */
    setView({ lon, lat, zoom } = {}) {
      animation = null;
      if (Number.isFinite(zoom)) view.zoom = clamp(zoom, minZoom(), maxZoom());
      setCenter(Number.isFinite(lon) ? lonToX(lon) : view.x, Number.isFinite(lat) ? latToY(lat) : view.y);
      requestFrame();
    },

    /** Where (lon, lat) is on the map, in CSS pixels from its top left. */
    project(lon, lat) {
      return worldToScreen(lonToX(lon), latToY(lat));
    },

    /** The (lon, lat) at CSS pixel (x, y) from the map's top left. */
    unproject(x, y) {
      const world = screenToWorld(x, y);
      return { lon: xToLon(world.x), lat: yToLat(world.y) };
    },

    /** Removes the map: stops drawing and loading, frees the tiles. */
    destroy() {
      if (destroyed) return;
      destroyed = true;
      cancelAnimationFrame(frameId);
      cancelAnimationFrame(hoverFrame);
      clearTimeout(pointerTimer);
      clearTimeout(announceTimer);
      observer.disconnect();
      for (const current of [raster, previousRaster, vector, previousVector]) current?.source.destroy();
      basemap?.destroy();
      rawTiles.clear();
      pointerCallbacks.clear();
      drawnCallbacks.clear();
      leaveCallbacks.clear();
      root.remove();
    },
  };

  requestFrame();
  return map;
}
