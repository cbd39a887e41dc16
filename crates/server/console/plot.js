// A line plot of time series in SVG, drawn here (no chart library): a time axis with date
// ticks at calendar boundaries, one or two value axes with nice ticks (one per unit), one line
// per series with a legend that shows and hides it, gaps where values are missing, and a
// crosshair that follows the pointer or the arrow keys and reads the values out. Long series
// are thinned for drawing to the first, lowest, highest and last value of each pixel column,
// which keeps every peak.

import { formatTime, h, uid } from './dom.js';

const COLORS = ['#0a5fa8', '#c8352b', '#1b6b35', '#7a3db8', '#a35200', '#00727d', '#4a5868', '#b0306b'];
const SECOND = 1000;
const MINUTE = 60 * SECOND;
const HOUR = 60 * MINUTE;
const DAY = 24 * HOUR;
// Tick steps of a calendar axis: [size in ms (months and years approximate), kind, count].
const TIME_STEPS = [
  [SECOND, 's', 1], [5 * SECOND, 's', 5], [15 * SECOND, 's', 15], [30 * SECOND, 's', 30],
  [MINUTE, 'm', 1], [5 * MINUTE, 'm', 5], [15 * MINUTE, 'm', 15], [30 * MINUTE, 'm', 30],
  [HOUR, 'h', 1], [3 * HOUR, 'h', 3], [6 * HOUR, 'h', 6], [12 * HOUR, 'h', 12],
  [DAY, 'd', 1], [2 * DAY, 'd', 2], [7 * DAY, 'd', 7], [14 * DAY, 'd', 14],
  [30 * DAY, 'M', 1], [91 * DAY, 'M', 3], [182 * DAY, 'M', 6],
  [365 * DAY, 'y', 1], [2 * 365 * DAY, 'y', 2], [5 * 365 * DAY, 'y', 5], [10 * 365 * DAY, 'y', 10],
  [25 * 365 * DAY, 'y', 25], [50 * 365 * DAY, 'y', 50], [100 * 365 * DAY, 'y', 100],
];
// Month names of the axis ticks in the person's language; data times are UTC wall clocks.
const monthName = new Intl.DateTimeFormat(undefined, { month: 'short', timeZone: 'UTC' });
const monthDay = new Intl.DateTimeFormat(undefined, { month: 'short', day: 'numeric', timeZone: 'UTC' });

const pad = (n) => String(n).padStart(2, '0');

/** A time of a data file (ms, its zone-less wall clock read as UTC) in the console's one date
 *  format (dom.js formatTime), with seconds when they are not zero. */
export function formatFileTime(ms) {
  const d = new Date(ms);
  if (Number.isNaN(d.getTime())) return '';
  return formatTime(d, { utc: true, seconds: Boolean(d.getUTCSeconds() || d.getUTCMilliseconds()) });
}

/**
 * A name with its unit for legends and headers: "WaterLevel (m)". A name that already ends in
 * its unit ("WL (m)", "WL [m]", as many files name their items) is left as it is, so that the
 * unit is not said twice.
 */
export function withUnit(name, unit) {
  const text = String(name ?? '');
  const u = String(unit ?? '').trim();
  if (!u) return text;
  const escaped = u.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
  if (new RegExp(`[(\\[]\\s*${escaped}\\s*[)\\]]\\s*$`, 'i').test(text)) return text;
  return `${text} (${u})`;
}

/** A duration in seconds for people: `30 min`, `2 h 30 min`, `1 d`. */
export function formatDuration(seconds) {
  if (!Number.isFinite(seconds)) return '';
  if (seconds === 0) return '0 s';
  const parts = [];
  let rest = Math.abs(seconds);
  for (const [size, unit] of [[86400, 'd'], [3600, 'h'], [60, 'min']]) {
    if (rest >= size) {
      parts.push(`${Math.floor(rest / size)} ${unit}`);
      rest %= size;
    }
  }
  if (rest > 0 || !parts.length) parts.push(`${Number(rest.toFixed(3))} s`);
  return `${seconds < 0 ? '−' : ''}${parts.slice(0, 3).join(' ')}`;
}

/** Nice ticks between lo and hi: about `count` round numbers. */
export function niceTicks(lo, hi, count = 5) {
  if (!Number.isFinite(lo) || !Number.isFinite(hi)) return { lo: 0, hi: 1, step: 0.2, ticks: [0, 0.2, 0.4, 0.6, 0.8, 1] };
  if (lo === hi) {
    const spread = Math.abs(lo) * 0.1 || 1;
    lo -= spread;
    hi += spread;
  }
  const raw = (hi - lo) / Math.max(1, count);
  const power = 10 ** Math.floor(Math.log10(raw));
  const fraction = raw / power;
  const step = (fraction <= 1 ? 1 : fraction <= 2 ? 2 : fraction <= 2.5 ? 2.5 : fraction <= 5 ? 5 : 10) * power;
  const first = Math.floor(lo / step + 1e-9) * step;
  const last = Math.ceil(hi / step - 1e-9) * step;
  const ticks = [];
  for (let v = first; v <= last + step / 2; v += step) ticks.push(Math.abs(v) < step * 1e-9 ? 0 : v);
  return { lo: first, hi: last, step, ticks };
}

/** A tick value with as many decimals as the step needs. */
export function formatTick(value, step) {
  let decimals = 0;
  while (decimals < 10 && Math.abs(Math.round(step * 10 ** decimals) - step * 10 ** decimals) > 1e-6 * 10 ** decimals) decimals += 1;
  const abs = Math.abs(value);
  if (abs !== 0 && (abs >= 1e7 || abs < 1e-4)) return value.toExponential(2);
  return value.toFixed(decimals).replace('-', '−');
}

/** A value for a read-out: 4 significant digits, no trailing zeros. */
export function formatValue(value) {
  if (value === null || value === undefined || Number.isNaN(value)) return 'no value';
  const abs = Math.abs(value);
  if (abs !== 0 && (abs >= 1e7 || abs < 1e-4)) return value.toExponential(3).replace('-', '−');
  return String(Number(value.toPrecision(abs >= 1000 ? 7 : 4))).replace('-', '−');
}

function startOfStep(ms, kind, count) {
  const d = new Date(ms);
  const y = d.getUTCFullYear();
  const mo = d.getUTCMonth();
  switch (kind) {
    case 'y': return Date.UTC(Math.floor(y / count) * count, 0, 1);
    case 'M': return Date.UTC(y, Math.floor(mo / count) * count, 1);
    case 'd': return Date.UTC(y, mo, d.getUTCDate());
    default: {
      const size = { s: SECOND, m: MINUTE, h: HOUR }[kind] * count;
      return Math.floor(ms / size) * size;
    }
  }
}

function addStep(ms, kind, count) {
  const d = new Date(ms);
  switch (kind) {
    case 'y': return Date.UTC(d.getUTCFullYear() + count, 0, 1);
    case 'M': return Date.UTC(d.getUTCFullYear(), d.getUTCMonth() + count, 1);
    case 'd': return ms + count * DAY;
    default: return ms + count * { s: SECOND, m: MINUTE, h: HOUR }[kind];
  }
}

/** Calendar ticks (UTC) between t0 and t1 (ms): [{t, label, major}]. */
export function timeTicks(t0, t1, maxTicks) {
  const span = Math.max(1, t1 - t0);
  const step = TIME_STEPS.find(([size]) => span / size <= maxTicks) || TIME_STEPS[TIME_STEPS.length - 1];
  const [, kind, count] = step;
  const ticks = [];
  let t = startOfStep(t0, kind, count);
  if (t < t0) t = addStep(t, kind, count);
  let previousDay = null;
  for (let guard = 0; t <= t1 && guard < 1000; guard += 1) {
    const d = new Date(t);
    const day = `${d.getUTCFullYear()}-${d.getUTCMonth()}-${d.getUTCDate()}`;
    let label;
    let sub = '';
    if (kind === 'y') label = String(d.getUTCFullYear());
    else if (kind === 'M') {
      label = monthName.format(d);
      if (d.getUTCMonth() < count || !ticks.length) sub = String(d.getUTCFullYear());
    } else if (kind === 'd') {
      label = monthDay.format(d);
      if (!ticks.length || d.getUTCMonth() === 0 && d.getUTCDate() <= count) sub = String(d.getUTCFullYear());
    } else {
      label = `${pad(d.getUTCHours())}:${pad(d.getUTCMinutes())}${kind === 's' ? `:${pad(d.getUTCSeconds())}` : ''}`;
      if (day !== previousDay) sub = formatTime(d, { dateOnly: true });
    }
    ticks.push({ t, label, sub });
    previousDay = day;
    t = addStep(t, kind, count);
  }
  return ticks;
}

/** Moves the axis labels of `group` that would stick out of the plot's `width` (a time tick at
 *  either end, centred on it) back inside, so that none is clipped. Rotated labels (the units)
 *  stay. Needs the plot in the page (getBBox). */
function keepInside(group, width) {
  for (const text of group.querySelectorAll('text:not([transform])')) {
    let box;
    try {
      box = text.getBBox();
    } catch {
      continue;
    }
    if (!box.width) continue;
    const x = Number(text.getAttribute('x'));
    const shift = box.x < 1 ? 1 - box.x : box.x + box.width > width - 1 ? width - 1 - (box.x + box.width) : 0;
    if (shift) text.setAttribute('x', String(x + shift));
  }
}

/** Index of the sample nearest to `t` in sorted `times`. */
function nearest(times, t) {
  let lo = 0;
  let hi = times.length - 1;
  while (hi - lo > 1) {
    const mid = (lo + hi) >> 1;
    if (times[mid] <= t) lo = mid;
    else hi = mid;
  }
  return Math.abs(times[hi] - t) < Math.abs(times[lo] - t) ? hi : lo;
}

/** The path of one series over pixel columns: all points when they are few, else per column
 *  its first, lowest, highest and last value; NaN breaks the line. Returns {d, points}. */
export function linePath(times, values, x, y, { from = 0, to = times.length - 1 } = {}) {
  const parts = [];
  let points = 0;
  let pen = false;
  const n = to - from + 1;
  const width = Math.abs(x(times[to]) - x(times[from])) || 1;
  const emit = (px, py) => {
    parts.push(`${pen ? 'L' : 'M'}${px.toFixed(1)} ${py.toFixed(1)}`);
    pen = true;
    points += 1;
  };
  if (n <= width * 2) {
    for (let i = from; i <= to; i += 1) {
      const v = values[i];
      if (Number.isNaN(v)) { pen = false; continue; }
      emit(x(times[i]), y(v));
    }
    return { d: parts.join(''), points };
  }
  let column = null;
  let first; let last; let min; let max; let minAt; let maxAt;
  const flush = () => {
    if (column === null) return;
    emit(column, y(first));
    if (minAt <= maxAt) { emit(column, y(min)); emit(column, y(max)); } else { emit(column, y(max)); emit(column, y(min)); }
    emit(column, y(last));
    column = null;
  };
  for (let i = from; i <= to; i += 1) {
    const v = values[i];
    if (Number.isNaN(v)) { flush(); pen = false; continue; }
    const px = Math.round(x(times[i]));
    if (px !== column) {
      flush();
      column = px; first = v; last = v; min = v; max = v; minAt = i; maxAt = i;
    } else {
      last = v;
      if (v < min) { min = v; minAt = i; }
      if (v > max) { max = v; maxAt = i; }
    }
  }
  flush();
  return { d: parts.join(''), points };
}

/**
 * A plot of time series.
 * series: [{name, unit, values (numbers, NaN = missing)}] sharing `times` (ms since the epoch
 * when `calendar`, else seconds from the start). Returns the element; `element.destroy()`
 * stops watching its size.
 */
export function timeSeriesPlot({ times, series, calendar = true, label = 'Time series' }) {
  const readoutId = uid('plot-readout');
  const legend = h('ul', { class: 'plot-legend', 'aria-label': 'Series' });
  const svg = h('svg:svg', {
    class: 'plot-svg', tabindex: '0', role: 'img',
    'aria-label': `${label}: line plot. Left and right arrow keys step through the values; + and − zoom in time, 0 shows all.`,
    'aria-describedby': readoutId,
  });
  const area = h('div', { class: 'plot-area' }, svg);
  const readout = h('p', { class: 'plot-readout', id: readoutId, 'aria-live': 'polite' },
    'Move the pointer over the plot, or focus it and use the arrow keys, to read values.');
  const element = h('div', { class: 'plot' }, legend, area, readout);
  const visible = series.map(() => true);
  const units = [...new Set(series.map((s) => s.unit || ''))];
  if (units.length > 2) series.forEach((s, i) => { visible[i] = (s.unit || '') === units[0]; });
  const colors = series.map((_, i) => COLORS[i % COLORS.length]);

  series.forEach((s, i) => {
    const box = h('input', {
      type: 'checkbox', checked: visible[i],
      onchange: () => { visible[i] = box.checked; draw(); },
    });
    legend.append(h('li', {},
      h('label', { class: 'plot-legend-item' }, box,
        h('span', { class: 'plot-swatch', 'aria-hidden': 'true', style: { background: colors[i] } }),
        withUnit(s.name, s.unit))));
  });

  let cursor = null;
  let scales = null;
  const n = times.length;
  // The steps in view (zoom): indices from..to.
  let from = 0;
  let to = n - 1;
  let t0 = times[0];
  let t1 = times[n - 1];
  const zoomOut = h('button', { type: 'button', class: ['button', 'button-small'], disabled: true, onclick: () => zoom(2) }, 'Zoom out');
  const reset = h('button', { type: 'button', class: ['button', 'button-small'], disabled: true, onclick: () => setView(0, n - 1) }, 'Show all');
  const span = h('span', { class: 'plot-span hint' });
  element.insertBefore(h('div', { class: 'plot-tools' }, zoomOut, reset, span,
    h('span', { class: 'hint plot-hint' }, 'Drag across the plot, or press + and −, to zoom in time.')), area);

  function setView(a, b) {
    from = Math.max(0, Math.min(a, b));
    to = Math.min(n - 1, Math.max(a, b));
    if (to - from < 1 && n > 1) {
      if (to < n - 1) to += 1;
      else from -= 1;
    }
    t0 = times[from];
    t1 = times[to];
    const all = from === 0 && to === n - 1;
    zoomOut.disabled = all;
    reset.disabled = all;
    span.textContent = all ? '' : `Showing steps ${from + 1} to ${to + 1} of ${n}.`;
    if (cursor !== null && (cursor < from || cursor > to)) cursor = null;
    draw();
  }

  /** Zooms by `factor` (2: out, 0.5: in) around the cursor or the middle. */
  function zoom(factor) {
    const centre = cursor ?? Math.round((from + to) / 2);
    const width = Math.max(1, Math.round((to - from) * factor));
    let a = Math.round(centre - width * ((centre - from) / Math.max(1, to - from)));
    a = Math.max(0, Math.min(a, n - 1 - width));
    setView(a, a + width);
  }

  function draw() {
    const width = Math.max(260, Math.floor(area.clientWidth || 600));
    const narrow = width < 480;
    const height = narrow ? 240 : 320;
    const shown = series.map((s, i) => ({ s, i })).filter(({ i }) => visible[i]);
    const groups = [...new Set(shown.map(({ s }) => s.unit || ''))].slice(0, 2);
    const axes = groups.map((unit) => {
      let lo = Infinity;
      let hi = -Infinity;
      for (const { s } of shown) {
        if ((s.unit || '') !== unit) continue;
        for (let k = from; k <= to; k += 1) {
          const v = s.values[k];
          if (v < lo) lo = v;
          if (v > hi) hi = v;
        }
      }
      return { unit, ...niceTicks(lo, hi, narrow ? 4 : 6) };
    });
    const margin = { left: 58, right: axes.length > 1 ? 58 : 14, top: 14, bottom: 42 };
    const plotW = width - margin.left - margin.right;
    const plotH = height - margin.top - margin.bottom;
    const duration = t1 - t0 || 1;
    const x = (t) => margin.left + ((t - (n > 1 ? t0 : t0 - duration / 2)) / (n > 1 ? duration : duration * 2)) * plotW;
    const ys = axes.map((axis) => (v) => margin.top + plotH - ((v - axis.lo) / (axis.hi - axis.lo || 1)) * plotH);
    scales = { x, ys, axes, margin, plotW, plotH, width, height, groups };

    svg.replaceChildren();
    svg.setAttribute('viewBox', `0 0 ${width} ${height}`);
    svg.setAttribute('width', String(width));
    svg.setAttribute('height', String(height));

    const grid = h('svg:g', { class: 'plot-grid' });
    const xAxis = h('svg:g', { class: 'plot-axis' });
    if (calendar) {
      for (const tick of timeTicks(t0, t1, Math.max(2, Math.floor(plotW / (narrow ? 70 : 90))))) {
        const px = x(tick.t);
        grid.append(h('svg:line', { x1: px, x2: px, y1: margin.top, y2: margin.top + plotH }));
        const textEl = h('svg:text', { x: px, y: margin.top + plotH + 16, 'text-anchor': 'middle' }, tick.label);
        xAxis.append(textEl);
        if (tick.sub) xAxis.append(h('svg:text', { x: px, y: margin.top + plotH + 31, 'text-anchor': 'middle', class: 'plot-sub' }, tick.sub));
      }
    } else {
      const hours = duration / 3600 > 48;
      const scale = hours ? 3600 : 1;
      const ticks = niceTicks(t0 / scale, t1 / scale, Math.max(2, Math.floor(plotW / 80)));
      for (const v of ticks.ticks) {
        if (v * scale < t0 - 1e-9 || v * scale > t1 + 1e-9) continue;
        const px = x(v * scale);
        grid.append(h('svg:line', { x1: px, x2: px, y1: margin.top, y2: margin.top + plotH }));
        xAxis.append(h('svg:text', { x: px, y: margin.top + plotH + 16, 'text-anchor': 'middle' }, formatTick(v, ticks.step)));
      }
      xAxis.append(h('svg:text', { x: margin.left + plotW / 2, y: margin.top + plotH + 33, 'text-anchor': 'middle', class: 'plot-sub' },
        hours ? 'hours from the start' : 'seconds from the start'));
    }
    axes.forEach((axis, a) => {
      const y = ys[a];
      const left = a === 0;
      for (const v of axis.ticks) {
        const py = y(v);
        if (left) grid.append(h('svg:line', { x1: margin.left, x2: margin.left + plotW, y1: py, y2: py }));
        xAxis.append(h('svg:text', {
          x: left ? margin.left - 6 : margin.left + plotW + 6, y: py + 4, 'text-anchor': left ? 'end' : 'start',
        }, formatTick(v, axis.step)));
      }
      if (axis.unit) {
        const cx = left ? 14 : width - 10;
        const cy = margin.top + plotH / 2;
        xAxis.append(h('svg:text', { x: cx, y: cy, 'text-anchor': 'middle', class: 'plot-unit', transform: `rotate(-90 ${cx} ${cy})` }, axis.unit));
      }
    });
    svg.append(grid, h('svg:rect', { class: 'plot-frame', x: margin.left, y: margin.top, width: plotW, height: plotH }), xAxis);
    keepInside(xAxis, width);

    const lines = h('svg:g', { class: 'plot-lines' });
    for (const { s, i } of shown) {
      const a = groups.indexOf(s.unit || '');
      if (a < 0) continue;
      const { d, points } = linePath(times, s.values, x, ys[a], { from, to });
      lines.append(h('svg:path', { d, stroke: colors[i], class: 'plot-line', dataset: { series: s.name, points: String(points) } }));
      if (n > 0 && plotW / (to - from + 1) >= 8) {
        const marks = h('svg:g', { fill: colors[i], class: 'plot-marks' });
        for (let k = from; k <= to; k += 1) {
          if (!Number.isNaN(s.values[k])) marks.append(h('svg:circle', { cx: x(times[k]).toFixed(1), cy: ys[a](s.values[k]).toFixed(1), r: 2.5 }));
        }
        lines.append(marks);
      }
    }
    svg.append(lines);
    if (axes.length < groups.length || shown.length === 0) {
      svg.append(h('svg:text', { x: margin.left + plotW / 2, y: margin.top + plotH / 2, 'text-anchor': 'middle', class: 'plot-empty' }, 'Choose a series to show.'));
    }
    if (cursor !== null) drawCursor();
  }

  function drawCursor() {
    svg.querySelector('.plot-cursor')?.remove();
    if (cursor === null || !scales) return;
    const { x, ys, margin, plotH, groups } = scales;
    const px = x(times[cursor]);
    const g = h('svg:g', { class: 'plot-cursor' },
      h('svg:line', { x1: px, x2: px, y1: margin.top, y2: margin.top + plotH }));
    const parts = [];
    series.forEach((s, i) => {
      if (!visible[i]) return;
      const v = s.values[cursor];
      const a = groups.indexOf(s.unit || '');
      if (!Number.isNaN(v) && a >= 0) g.append(h('svg:circle', { cx: px, cy: ys[a](v), r: 4, stroke: colors[i] }));
      parts.push(`${s.name} ${formatValue(v)}${Number.isNaN(v) || !s.unit ? '' : ` ${s.unit}`}`);
    });
    svg.append(g);
    const when = calendar ? formatFileTime(times[cursor]) : `${formatDuration(times[cursor])} from the start`;
    readout.textContent = `${when} (step ${cursor + 1} of ${n}): ${parts.join('; ') || 'no series shown'}`;
  }

  /** The step nearest to a pointer position, and the position in SVG units. */
  function stepAt(clientX) {
    const box = svg.getBoundingClientRect();
    const px = ((clientX - box.left) / (box.width || 1)) * scales.width;
    const { margin, plotW } = scales;
    const fraction = Math.min(1, Math.max(0, (px - margin.left) / plotW));
    const k = nearest(times, t0 + fraction * (t1 - t0));
    return { k: Math.min(to, Math.max(from, k)), px: Math.min(margin.left + plotW, Math.max(margin.left, px)) };
  }

  function cursorAt(clientX) {
    if (!scales || !n) return;
    cursor = stepAt(clientX).k;
    drawCursor();
  }

  let drag = null;
  svg.addEventListener('pointerdown', (event) => {
    if (!scales || !n || event.button !== 0) return;
    const start = stepAt(event.clientX);
    drag = { ...start, band: null, pointer: event.pointerId };
    cursorAt(event.clientX);
  });
  svg.addEventListener('pointermove', (event) => {
    cursorAt(event.clientX);
    if (!drag || event.pointerId !== drag.pointer) return;
    const now = stepAt(event.clientX);
    if (Math.abs(now.px - drag.px) < 6) return;
    if (!drag.band) {
      svg.setPointerCapture?.(event.pointerId);
      drag.band = h('svg:rect', { class: 'plot-band', y: scales.margin.top, height: scales.plotH });
      svg.append(drag.band);
    }
    drag.band.setAttribute('x', String(Math.min(now.px, drag.px)));
    drag.band.setAttribute('width', String(Math.abs(now.px - drag.px)));
  });
  const endDrag = (event) => {
    if (!drag || event.pointerId !== drag.pointer) return;
    const started = drag;
    drag = null;
    if (!started.band) return;
    started.band.remove();
    const end = stepAt(event.clientX);
    if (end.k !== started.k) setView(started.k, end.k);
  };
  svg.addEventListener('pointerup', endDrag);
  svg.addEventListener('pointercancel', (event) => { if (drag?.band) drag.band.remove(); if (drag && event.pointerId === drag.pointer) drag = null; });
  svg.addEventListener('keydown', (event) => {
    if (!n) return;
    const page = Math.max(1, Math.round((to - from + 1) / 10));
    const moves = { ArrowLeft: -1, ArrowRight: 1, PageUp: -page, PageDown: page };
    if (event.key in moves) {
      cursor = Math.min(n - 1, Math.max(0, (cursor ?? (moves[event.key] > 0 ? from - 1 : to + 1)) + moves[event.key]));
      // The view follows the cursor out of it.
      if (cursor < from) { setView(cursor, cursor + (to - from)); return event.preventDefault(); }
      if (cursor > to) { setView(cursor - (to - from), cursor); return event.preventDefault(); }
    } else if (event.key === 'Home') cursor = from;
    else if (event.key === 'End') cursor = to;
    else if (event.key === '+' || event.key === '=') { zoom(0.5); return event.preventDefault(); }
    else if (event.key === '-' || event.key === '_') { zoom(2); return event.preventDefault(); }
    else if (event.key === '0') { setView(0, n - 1); return event.preventDefault(); }
    else return;
    event.preventDefault();
    drawCursor();
  });

  let frame = 0;
  const observer = new ResizeObserver(() => {
    cancelAnimationFrame(frame);
    frame = requestAnimationFrame(draw);
  });
  observer.observe(area);
  element.destroy = () => { observer.disconnect(); cancelAnimationFrame(frame); };
  return element;
}
