// Conversion choices shared by the upload panel and the convert/export dialog: the reader and
// writer catalogue (GET /api/conversion/reader/list and writer/list, docs/conversion.md), the
// matching of a file or a stored format to a reader, and forms built from the parameter
// definitions. openConvertDialog converts a stored dataset into a new dataset
// (POST /api/metadata/dataset/{id}/convert) or exports it as a file to download
// (POST .../download-convert), optionally reprojected, and follows the started transfer.

import { api } from './api.js';
import { describeError, dialog, field, h, replace, uid } from './dom.js';
import { crsPicker } from './crs.js';
import { describe, isActive, progressBar, resultLinks, statusBadge, watchTransfer } from './transfers.js';

let cataloguePromise = null;

// Extensions a reader also takes besides its datasetFormat (docs/formats.md).
const ALIASES = { '.tiff': '.tif', '.json': '.geojson', '.zip': '.shp', '.pvd': '.vtu' };

/** The readers and writers, read once: {readers, writers, reader(name), writer(name)}. */
export function loadCatalogue() {
  if (!cataloguePromise) {
    cataloguePromise = Promise.all([
      api('GET', '/api/conversion/reader/list'),
      api('GET', '/api/conversion/writer/list'),
    ]).then(([readers, writers]) => {
      const r = readers?.data || readers || [];
      const w = writers?.data || writers || [];
      const byName = (list) => {
        const map = new Map(list.map((item) => [item.name.toLowerCase(), item]));
        return (name) => (name ? map.get(String(name).toLowerCase()) || null : null);
      };
      return { readers: r, writers: w, reader: byName(r), writer: byName(w) };
    }).catch((error) => {
      cataloguePromise = null;
      throw error;
    });
  }
  return cataloguePromise;
}

/** A file name's extension in lower case with its dot (".dfs2"), or "". */
export function extensionOf(fileName) {
  const match = /(\.[^./\\]+)$/.exec(String(fileName || ''));
  return match ? match[1].toLowerCase() : '';
}

/** The reader of a format (".tif") or null; never the plain-copy FileReader. */
export function readerForFormat(catalogue, format) {
  if (!format) return null;
  const wanted = ALIASES[String(format).toLowerCase()] || String(format).toLowerCase();
  return catalogue.readers.find((reader) => reader.name !== 'FileReader'
    && String(reader.datasetFormat || '').toLowerCase() === wanted) || null;
}

/** The reader that matches a file's extension, or null. */
export function readerForFile(catalogue, fileName) {
  return readerForFormat(catalogue, extensionOf(fileName));
}

/** The writer to offer first for a reader: the same format when it can write it. */
export function defaultWriter(catalogue, reader) {
  if (!reader) return null;
  const names = reader.writers || [];
  const same = names.find((name) => {
    const writer = catalogue.writer(name);
    return writer && String(writer.datasetFormat).toLowerCase() === String(reader.datasetFormat).toLowerCase();
  });
  return same || names[0] || null;
}

/** A writer's output name for a stem: "depth" + ".tif". */
export function outputName(fileName, writer) {
  const format = writer?.datasetFormat;
  if (!format || !String(format).startsWith('.') || writer.name === 'FileWriter') return fileName;
  const stem = String(fileName).replace(/\.[^./\\]+$/, '');
  return `${stem}${format}`;
}

function isSrid(definition) {
  return /srid$/i.test(definition.name) && /^int/i.test(definition.dataType || '');
}

/**
 * A form for parameter definitions ({name, description, dataType, required, defaultValue,
 * allowedValues}). Returns {element, values(), check(), count}: values() gives
 * [{name, value}] of the parameters set to something else than their default; check()
 * returns the first problem (and marks the control) or null.
 */
export function parameterForm(definitions, { idPrefix = uid('param'), values: initial = {} } = {}) {
  const controls = [];
  const element = h('div', { class: 'param-form' });
  for (const definition of definitions || []) {
    const id = `${idPrefix}-${definition.name}`;
    const type = String(definition.dataType || 'String').toLowerCase();
    const preset = initial[definition.name];
    const hasDefault = definition.defaultValue !== undefined && definition.defaultValue !== null && definition.defaultValue !== '';
    let control;
    let read;
    if (isSrid(definition)) {
      control = crsPicker({
        label: definition.name,
        value: preset ?? (hasDefault ? definition.defaultValue : null),
        hint: definition.description,
        required: Boolean(definition.required),
      });
      control.input.id = id;
      control.querySelector('label').htmlFor = id;
      read = () => control.getValue();
      element.append(control);
      controls.push({ definition, read, focus: () => control.input.focus(), input: control.input });
      continue;
    }
    if (Array.isArray(definition.allowedValues) && definition.allowedValues.length) {
      control = h('select', { id, name: definition.name },
        !definition.required && !hasDefault ? h('option', { value: '' }, 'Not set') : null,
        definition.allowedValues.map((v) => h('option', { value: v }, hasDefault && v === definition.defaultValue ? `${v} (default)` : v)));
      control.value = preset ?? (hasDefault ? definition.defaultValue : '');
      read = () => control.value;
    } else if (type === 'boolean') {
      control = h('select', { id, name: definition.name },
        !hasDefault ? h('option', { value: '' }, 'Not set') : null,
        h('option', { value: 'true' }, `Yes${hasDefault && /^true$/i.test(definition.defaultValue) ? ' (default)' : ''}`),
        h('option', { value: 'false' }, `No${hasDefault && /^false$/i.test(definition.defaultValue) ? ' (default)' : ''}`));
      control.value = preset !== undefined ? String(preset) : (hasDefault ? String(definition.defaultValue).toLowerCase() : '');
      read = () => (control.value === '' ? '' : control.value === 'true');
    } else if (type === 'integer' || type === 'int' || type === 'long' || type === 'double' || type === 'float' || type === 'number') {
      const integer = type === 'integer' || type === 'int' || type === 'long';
      control = h('input', {
        id, name: definition.name, type: 'number', step: integer ? '1' : 'any', inputmode: integer ? 'numeric' : 'decimal',
        placeholder: hasDefault ? `default ${definition.defaultValue}` : '',
      });
      control.value = preset ?? '';
      read = () => (control.value.trim() === '' ? '' : Number(control.value));
    } else if (type === 'stringlist' || type === 'list') {
      control = h('input', { id, name: definition.name, type: 'text', placeholder: 'comma-separated' });
      control.value = Array.isArray(preset) ? preset.join(', ') : (preset ?? '');
      read = () => control.value.split(',').map((s) => s.trim()).filter(Boolean);
    } else {
      control = h('input', { id, name: definition.name, type: 'text', placeholder: hasDefault ? `default ${definition.defaultValue}` : '' });
      control.value = preset ?? '';
      read = () => control.value.trim();
    }
    element.append(field(definition.name, control, { hint: definition.description, required: Boolean(definition.required) }));
    controls.push({ definition, read, focus: () => control.focus(), input: control });
  }

  function isUnset(value) {
    return value === '' || value === null || value === undefined || (Array.isArray(value) && value.length === 0)
      || (typeof value === 'number' && Number.isNaN(value));
  }

  return {
    element,
    count: controls.length,
    values() {
      const out = [];
      for (const { definition, read } of controls) {
        const value = read();
        if (isUnset(value)) continue;
        if (definition.defaultValue !== undefined && definition.defaultValue !== null && String(value) === String(definition.defaultValue)) continue;
        out.push({ name: definition.name, value });
      }
      return out;
    },
    check() {
      for (const { definition, read, focus, input } of controls) {
        const value = read();
        input.removeAttribute('aria-invalid');
        if (definition.required && isUnset(value)) {
          input.setAttribute('aria-invalid', 'true');
          focus();
          return `${definition.name} is required.`;
        }
        if (typeof value === 'number' && /^int/i.test(definition.dataType || '') && !Number.isInteger(value)) {
          input.setAttribute('aria-invalid', 'true');
          focus();
          return `${definition.name} must be a whole number.`;
        }
      }
      return null;
    },
  };
}

/** A collapsible group of a parameter form ("Reader options"), open when any is required. */
export function optionsGroup(title, form) {
  if (!form.count) return h('p', { class: ['hint', 'param-none'] }, `${title}: none.`);
  const required = form.element.querySelector('[required]');
  return h('details', { class: 'param-group', open: Boolean(required) },
    h('summary', {}, `${title} (${form.count})`), form.element);
}

/**
 * Shows a started transfer in a dialog, live, until it ends or the dialog closes: its status,
 * progress, error and result links, and a link to the transfers page.
 */
export function followTransfer(summary, { title = 'Transfer started', onEnded } = {}) {
  const status = h('div', { class: 'follow-status', role: 'status', 'aria-live': 'polite' }, statusBadge(summary.status));
  const progress = h('div', { class: 'follow-progress' });
  const results = h('div', { class: 'follow-results' });
  const what = h('p', { class: 'follow-what' });
  let stop = null;
  let ended = false;
  const closed = dialog({
    title,
    body: [what, status, progress, results,
      h('p', {}, h('a', { href: '#/transfers', class: 'follow-all' }, 'See all transfers'))],
    actions: [{ label: 'Close', value: null }],
  });
  // Following a link to another page (not a download) closes the dialog through its own
  // Close button.
  const opened = [...document.querySelectorAll('dialog.dialog[open]')].pop();
  opened?.addEventListener('click', (event) => {
    const link = event.target.closest('a[href^="#/"]');
    if (link && !link.hasAttribute('download')) opened.querySelector('.dialog-actions button')?.click();
  });
  stop = watchTransfer(summary.id, (record) => {
    const { what: line, chain } = describe(record);
    what.textContent = chain ? `${line} · ${chain}` : line;
    // replace() skips what is absent; the DOM's own replaceChildren would show a null as
    // the text "null" ("Completed null").
    replace(status, statusBadge(record.status, record.errorMessage),
      record.errorMessage ? h('p', { class: 'transfer-error' }, record.errorMessage) : null);
    replace(progress, isActive(record.status) ? progressBar(record, 'Transfer progress') : null);
    replace(results, resultLinks(record).map((link) => h('p', {}, link)));
    if (!isActive(record.status) && !ended) {
      ended = true;
      if (onEnded) onEnded(record);
    }
  }, {
    onError: (error) => replace(status, h('p', { class: 'transfer-error' }, describeError(error))),
  });
  closed.then(() => stop && stop());
  return closed;
}

/**
 * Converts or exports a stored dataset: reader (inferred from the stored format, or chosen),
 * writer, their options, an optional reprojection, the new dataset's name. `onStarted(summary)`
 * is called with the started transfer; resolves with it, or null when cancelled.
 */
export async function openConvertDialog(dataset, { onStarted, mode: requestedMode = 'convert' } = {}) {
  // A new dataset needs canCreateContent on the project: without it only the export is offered.
  const [catalogue, capabilities] = await Promise.all([
    loadCatalogue(),
    dataset.projectId
      ? api('GET', `/api/metadata/project/${dataset.projectId}/capabilities`).catch(() => null)
      : Promise.resolve(null),
  ]);
  const mayCreate = capabilities ? capabilities.canCreateContent !== false : true;
  const initialMode = mayCreate ? requestedMode : 'export';
  const inferred = readerForFormat(catalogue, dataset.datasetFormat)
    || readerForFile(catalogue, dataset.dataPath || dataset.name);
  const idPrefix = uid('convert');

  const modeConvert = h('input', { type: 'radio', name: `${idPrefix}-mode`, id: `${idPrefix}-mode-convert`, value: 'convert', checked: initialMode !== 'export' });
  const modeExport = h('input', { type: 'radio', name: `${idPrefix}-mode`, id: `${idPrefix}-mode-export`, value: 'export', checked: initialMode === 'export' });
  const modes = h('fieldset', { class: 'convert-modes' },
    h('legend', {}, 'Result'),
    mayCreate ? h('label', { for: modeConvert.id, class: 'choice' }, modeConvert, ' A new dataset in this project') : null,
    h('label', { for: modeExport.id, class: 'choice' }, modeExport, ' A file to download'),
    mayCreate ? null : h('p', { class: 'hint' }, 'You may not add datasets to this project, so the result is a file to download.'));

  const readerSelect = h('select', { id: `${idPrefix}-reader`, name: 'reader' },
    inferred ? h('option', { value: '' }, `${inferred.name} (from the stored format)`) : null,
    catalogue.readers.filter((r) => r !== inferred).map((r) => h('option', { value: r.name }, `${r.name} (${r.datasetFormat})`)));
  if (!inferred) readerSelect.value = catalogue.reader('FileReader') ? 'FileReader' : readerSelect.value;
  const writerSelect = h('select', { id: `${idPrefix}-writer`, name: 'writer', required: true });
  const readerOptions = h('div');
  const writerOptions = h('div');
  const nameInput = h('input', { id: `${idPrefix}-name`, name: 'name', type: 'text', autocomplete: 'off', required: true, maxlength: 255 });
  const descriptionInput = h('input', { id: `${idPrefix}-description`, name: 'description', type: 'text', autocomplete: 'off' });
  const nameFields = h('div', { class: 'convert-name' },
    field('New dataset name', nameInput, { required: true }),
    field('Description', descriptionInput));
  const reproject = h('input', { type: 'checkbox', id: `${idPrefix}-reproject`, name: 'reproject' });
  const sourceSrid = dataset.spatialInformation?.srid;
  const target = crsPicker({ label: 'Output coordinate system', hint: 'Type a code (4326) or part of a name (WGS 84); choose with the arrow keys and Enter.' });
  target.hidden = true;
  const inputSrid = crsPicker({
    label: 'Input coordinate system (only if the data states none)',
    hint: sourceSrid ? `The data states EPSG:${sourceSrid}; leave empty to use it.` : 'The data states no coordinate system; name it to reproject.',
  });
  inputSrid.hidden = true;
  const crsGroup = h('fieldset', { class: 'convert-crs' },
    h('legend', {}, 'Coordinate system'),
    h('label', { for: reproject.id, class: 'choice' }, reproject, ' Reproject'),
    target, inputSrid);
  reproject.addEventListener('change', () => {
    target.hidden = !reproject.checked;
    inputSrid.hidden = !reproject.checked;
    if (reproject.checked) target.input.focus();
  });

  let readerForm = parameterForm([]);
  let writerForm = parameterForm([]);

  function currentReader() {
    return readerSelect.value ? catalogue.reader(readerSelect.value) : inferred;
  }
  function currentWriter() {
    return catalogue.writer(writerSelect.value);
  }
  function syncReader() {
    const reader = currentReader();
    const previous = writerSelect.value;
    const names = reader?.writers || [];
    writerSelect.replaceChildren(...names.map((name) => {
      const writer = catalogue.writer(name);
      return h('option', { value: name }, writer ? `${name} (${writer.datasetFormat})` : name);
    }));
    writerSelect.value = names.includes(previous) ? previous : (defaultWriter(catalogue, reader) || '');
    readerForm = parameterForm(reader?.parameters || [], { idPrefix: `${idPrefix}-rp` });
    readerOptions.replaceChildren(optionsGroup('Reader options', readerForm));
    syncWriter();
  }
  function syncWriter() {
    const writer = currentWriter();
    writerForm = parameterForm(writer?.parameters || [], { idPrefix: `${idPrefix}-wp` });
    writerOptions.replaceChildren(optionsGroup('Writer options', writerForm));
    const suggested = outputName(dataset.name, writer);
    if (!nameInput.dataset.edited) nameInput.value = suggested === dataset.name ? `${dataset.name} (copy)` : suggested;
    const plain = writer?.name === 'FileWriter';
    reproject.disabled = plain;
    if (plain && reproject.checked) {
      reproject.checked = false;
      reproject.dispatchEvent(new Event('change'));
    }
  }
  function syncMode() {
    nameFields.hidden = modeExport.checked;
    nameInput.required = !modeExport.checked;
  }
  nameInput.addEventListener('input', () => { nameInput.dataset.edited = '1'; });
  readerSelect.addEventListener('change', syncReader);
  writerSelect.addEventListener('change', syncWriter);
  modeConvert.addEventListener('change', syncMode);
  modeExport.addEventListener('change', syncMode);
  syncReader();
  syncMode();

  let started = null;
  await dialog({
    title: mayCreate ? `Convert or export “${dataset.name}”` : `Export “${dataset.name}”`,
    body: [
      modes,
      h('div', { class: 'convert-grid' },
        field('Reader', readerSelect, { hint: inferred ? 'Inferred from the stored format unless you choose another.' : 'No reader matches the stored format; a plain copy needs FileReader.' }),
        field('Writer', writerSelect, { required: true })),
      readerOptions,
      writerOptions,
      crsGroup,
      nameFields,
    ],
    actions: [{ label: 'Cancel', value: null }, { label: 'Start', value: 'start', kind: 'primary' }],
    onSubmit: async () => {
      const writer = currentWriter();
      if (!writer) throw new Error('Choose a writer.');
      const problem = readerForm.check() || writerForm.check();
      if (problem) throw new Error(problem);
      const exporting = modeExport.checked;
      const body = {
        readerName: readerSelect.value || undefined,
        writerName: writer.name,
        readerParameters: readerForm.values(),
        writerParameters: writerForm.values(),
      };
      if (reproject.checked) {
        const outputSrid = target.getValue();
        if (outputSrid === null) {
          target.input.focus();
          throw new Error('Choose the output coordinate system, or untick Reproject.');
        }
        const transformation = { type: 'CrsTransformation', outputSrid };
        if (inputSrid.getValue() !== null) transformation.inputSrid = inputSrid.getValue();
        body.transformations = [transformation];
      }
      if (!exporting) {
        const name = nameInput.value.trim();
        if (!name) {
          nameInput.focus();
          throw new Error('Name the new dataset.');
        }
        body.outputDatasetData = { name, description: descriptionInput.value.trim() || undefined };
      }
      started = await api('POST', `/api/metadata/dataset/${dataset.id}/${exporting ? 'download-convert' : 'convert'}`, { body });
      return true;
    },
  });
  if (!started) return null;
  if (onStarted) onStarted(started);
  followTransfer(started, { title: modeExport.checked ? 'Export started' : 'Conversion started' });
  return started;
}
