// The upload panel of a project page: drop files and folders (or pick them), send the bytes
// straight to Basin's blob endpoint through a signed upload URL (docs/blobs.md: one PUT for a
// small file, staged blocks and a block list for a large one, several blocks at a time), then
// import each file as a dataset with a reader and writer of the catalogue or as it is
// (POST /api/conversion/upload-convert) and follow the transfer until it ends.
//
// Uploads survive trouble: a failed block is retried with backoff; when the network stays
// down the file pauses and resumes from the blocks already staged, never sending a staged
// block again (and resumes by itself when the browser reports the network back). Pause lets
// the blocks on their way finish and starts no other, so nothing sent is thrown away and the
// progress bar (staged bytes plus the bytes of the blocks on their way) never goes back. The
// upload URL and the staged block ids are kept in the tab's session storage under the file's
// name, size and modification time, so dropping the same file after a reload resumes too; the
// panel lists such unfinished uploads after a reload. Folders become subprojects (the bulk
// hierarchy API) with the same structure. The queue of a project outlives its page: coming
// back shows it again.

import { api } from './api.js';
import { describeError, field, formatBytes, h, uid } from './dom.js';
import {
  defaultWriter, extensionOf, loadCatalogue, optionsGroup, outputName, parameterForm, readerForFile,
} from './convert.js';
import { cancelTransfer, isActive, progressBar, statusBadge, watchTransfer } from './transfers.js';

const MIB = 1024 * 1024;
const BLOCK_SIZE = 4 * MIB;
const SINGLE_PUT_MAX = 4 * MIB;
const PARALLEL_BLOCKS = 3;
const PARALLEL_FILES = 3;
const RETRY_DELAYS = [500, 1500, 3000];
const STORE_PREFIX = 'basin.upload:';
const COPY = '';

const STATE_TEXT = {
  waiting: 'Waiting',
  uploading: 'Uploading',
  pausing: 'Pausing',
  paused: 'Paused',
  uploaded: 'Uploaded',
  cancelled: 'Cancelled',
  failed: 'Upload failed',
  importing: 'Importing',
  imported: 'Imported',
  'import-failed': 'Import failed',
};
const STATE_KIND = {
  waiting: 'info', uploading: 'info', pausing: 'warning', paused: 'warning', uploaded: 'info', cancelled: 'warning',
  failed: 'danger', importing: 'info', imported: 'success', 'import-failed': 'danger',
};

/** An upload error that pauses the file (the network stayed down) rather than failing it. */
class Paused extends Error {}
/** The person cancelled or paused: stop quietly. */
class Stopped extends Error {}
class HttpFailure extends Error {
  constructor(status, code, message) {
    super(message || `HTTP ${status}${code ? ` ${code}` : ''}`);
    this.status = status;
    this.code = code;
  }
}

// ---- the record in session storage ----

function recordKey(file) {
  return `${STORE_PREFIX}${file.name}|${file.size}|${file.lastModified}`;
}

function readRecord(file) {
  try {
    const record = JSON.parse(sessionStorage.getItem(recordKey(file)) || 'null');
    if (!record || typeof record.url !== 'string') return null;
    const expiry = expiryOf(record.url);
    // A URL with less than ten minutes left is not worth resuming with.
    if (expiry && expiry - Date.now() < 10 * 60 * 1000) {
      sessionStorage.removeItem(recordKey(file));
      return null;
    }
    return record;
  } catch {
    return null;
  }
}

function writeRecord(item) {
  try {
    sessionStorage.setItem(recordKey(item.file), JSON.stringify({
      url: item.url,
      blockSize: item.blockSize,
      staged: [...item.staged].sort((a, b) => a - b),
      committed: item.committed,
      // What the panel lists after a reload (unfinishedUploads).
      projectId: item.session.projectId,
      path: item.path,
      name: item.file.name,
      size: item.file.size,
      parts: Math.max(1, Math.ceil(item.file.size / item.blockSize)),
    }));
  } catch {
    // Storage full or refused: the upload goes on without the resume record.
  }
}

function forgetRecord(item) {
  try { sessionStorage.removeItem(recordKey(item.file)); } catch { /* nothing kept */ }
}

/** The upload URL's expiry (ms), or null. */
function expiryOf(url) {
  try {
    const expiry = new URL(url).searchParams.get('se');
    return expiry ? Date.parse(expiry) : null;
  } catch {
    return null;
  }
}

/**
 * Uploads into `projectId` that this tab started and did not finish (a resume record with
 * time left on its URL), other than the files in `queued` (keys): [{key, path, size, sent,
 * parts, committed}]. Choosing the same file again resumes each.
 */
function unfinishedUploads(projectId, queued) {
  const out = [];
  try {
    for (let i = 0; i < sessionStorage.length; i += 1) {
      const key = sessionStorage.key(i);
      if (!key || !key.startsWith(STORE_PREFIX) || queued.has(key)) continue;
      const record = JSON.parse(sessionStorage.getItem(key) || 'null');
      if (!record || record.projectId !== projectId || typeof record.url !== 'string') continue;
      const expiry = expiryOf(record.url);
      if (expiry && expiry - Date.now() < 10 * 60 * 1000) continue;
      const size = Number(record.size) || 0;
      const blockSize = Number(record.blockSize) || BLOCK_SIZE;
      const staged = (record.staged || []).map(Number);
      const sent = record.committed ? size : staged.reduce((sum, index) => (
        sum + Math.max(0, Math.min(blockSize, size - index * blockSize))), 0);
      out.push({
        key, path: record.path || record.name || key.slice(STORE_PREFIX.length).split('|')[0],
        size, sent, parts: Number(record.parts) || Math.max(1, Math.ceil(size / blockSize)),
        stagedParts: staged.length, committed: Boolean(record.committed),
      });
    }
  } catch {
    // Unreadable storage: nothing to list.
  }
  return out.sort((a, b) => a.path.localeCompare(b.path));
}

// ---- the bytes ----

/** A block id: base64 of a fixed-length text, so every id of a blob has the same length. */
export function blockId(index) {
  return btoa(`block-${String(index).padStart(6, '0')}`);
}

function transient(error) {
  if (error instanceof HttpFailure) {
    return error.status === 0 || error.status === 408 || error.status === 429 || error.status >= 500;
  }
  return !(error instanceof Stopped);
}

/** PUT with XMLHttpRequest, for upload progress; resolves on 2xx, rejects with HttpFailure. */
function put(item, url, body, headers, onProgress) {
  return new Promise((resolve, reject) => {
    if (item.stopRequested) {
      reject(new Stopped('stopped'));
      return;
    }
    const xhr = new XMLHttpRequest();
    item.requests.add(xhr);
    xhr.open('PUT', url);
    for (const [name, value] of Object.entries(headers || {})) xhr.setRequestHeader(name, value);
    if (onProgress) xhr.upload.onprogress = (event) => onProgress(event.loaded);
    xhr.onload = () => {
      item.requests.delete(xhr);
      if (xhr.status >= 200 && xhr.status < 300) {
        resolve(xhr);
        return;
      }
      const code = xhr.getResponseHeader('x-ms-error-code');
      const message = /<Message>([^<]*)<\/Message>/.exec(xhr.responseText || '')?.[1];
      reject(new HttpFailure(xhr.status, code, message ? `${code || xhr.status}: ${message}` : null));
    };
    xhr.onerror = () => {
      item.requests.delete(xhr);
      reject(new HttpFailure(0, null, 'The network failed.'));
    };
    xhr.ontimeout = xhr.onerror;
    xhr.onabort = () => {
      item.requests.delete(xhr);
      reject(new Stopped('aborted'));
    };
    xhr.send(body);
  });
}

function wait(item, ms) {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      item.waits.delete(cancelWait);
      resolve();
    }, ms);
    function cancelWait() {
      clearTimeout(timer);
      reject(new Stopped('stopped'));
    }
    item.waits.add(cancelWait);
  });
}

/** Runs `attempt` with retries and backoff; the last transient failure pauses the file. No
 *  retry once the file is pausing (Pause, or another block that gave up). */
async function withRetries(item, attempt) {
  for (let tries = 0; ; tries += 1) {
    try {
      return await attempt();
    } catch (error) {
      if (item.stopRequested || item.halting || error instanceof Stopped) throw new Stopped('stopped');
      if (!transient(error)) throw error;
      if (tries >= RETRY_DELAYS.length) throw new Paused(error.message);
      item.note = `Retrying after a network problem (${tries + 1} of ${RETRY_DELAYS.length})…`;
      item.session.paint(item);
      await wait(item, RETRY_DELAYS[tries]);
      item.note = '';
    }
  }
}

async function uploadWhole(item) {
  await withRetries(item, () => put(item, item.url, item.file, { 'x-ms-blob-type': 'BlockBlob' }, (loaded) => {
    item.inflight.set(0, loaded);
    item.session.progress(item);
  }));
  item.inflight.clear();
  item.committed = true;
  item.sentBase = item.file.size;
}

async function uploadBlocks(item) {
  const count = Math.ceil(item.file.size / item.blockSize);
  const pending = [];
  for (let index = 0; index < count; index += 1) if (!item.staged.has(index)) pending.push(index);
  let failure = null;
  // Stops the blocks that wait for a retry; the blocks on their way go on to the end (what
  // they send is kept, so the progress never goes back).
  const halt = () => {
    item.halting = true;
    for (const cancelWait of [...item.waits]) cancelWait();
  };
  item.halt = halt;
  async function worker() {
    while (pending.length && !failure && !item.pauseRequested) {
      const index = pending.shift();
      const start = index * item.blockSize;
      const body = item.file.slice(start, Math.min(item.file.size, start + item.blockSize));
      const url = `${item.url}&comp=block&blockid=${encodeURIComponent(blockId(index))}`;
      try {
        await withRetries(item, async () => {
          item.inflight.set(index, 0);
          try {
            return await put(item, url, body, null, (loaded) => {
              item.inflight.set(index, loaded);
              item.session.progress(item);
            });
          } catch (error) {
            // What a failed attempt sent is lost: it no longer counts.
            item.inflight.set(index, 0);
            throw error;
          }
        });
        item.inflight.delete(index);
        item.staged.add(index);
        item.sentBase += body.size;
        writeRecord(item);
        item.session.progress(item);
      } catch (error) {
        item.inflight.delete(index);
        pending.unshift(index);
        // Paused, cancelled, or another block gave up: this worker ends.
        if (error instanceof Stopped) return;
        if (!failure) failure = error;
        // Anything but a network that stays down starts the file over (or fails it): nothing
        // on its way is worth waiting for then. After a network failure the blocks on their
        // way end as they will, and no other starts.
        if (!(error instanceof Paused)) for (const xhr of [...item.requests]) xhr.abort();
        halt();
        return;
      }
    }
  }
  try {
    for (;;) {
      item.halting = false;
      await Promise.all(Array.from({ length: Math.min(PARALLEL_BLOCKS, pending.length || 1) }, worker));
      if (failure) throw failure;
      if (!pending.length) break;
      // Paused with blocks left to send. (A Resume while the last blocks were on their way
      // clears pauseRequested: then go on.)
      if (item.pauseRequested || item.stopRequested) throw new Stopped('paused');
    }
  } finally {
    item.halting = false;
    item.halt = null;
  }
  const list = Array.from({ length: count }, (_, index) => `<Latest>${blockId(index)}</Latest>`).join('');
  const xml = `<?xml version="1.0" encoding="utf-8"?><BlockList>${list}</BlockList>`;
  await withRetries(item, () => put(item, `${item.url}&comp=blocklist`, xml, { 'Content-Type': 'application/xml' }));
  item.committed = true;
  writeRecord(item);
}

// ---- folders ----

/** Walks dropped entries (files and folders) into [{file, path}]. */
async function walkEntries(entries) {
  const out = [];
  const folders = new Set();
  async function visit(entry) {
    if (!entry) return;
    const path = String(entry.fullPath || entry.name).replace(/^\/+/, '');
    if (entry.isFile) {
      const file = await new Promise((resolve, reject) => entry.file(resolve, reject));
      out.push({ file, path });
    } else if (entry.isDirectory) {
      folders.add(path);
      const reader = entry.createReader();
      for (;;) {
        const batch = await new Promise((resolve, reject) => reader.readEntries(resolve, reject));
        if (!batch.length) break;
        for (const child of batch) await visit(child);
      }
    }
  }
  for (const entry of entries) await visit(entry);
  return { files: out, folders: [...folders] };
}

function folderOf(path) {
  const parts = String(path).split('/').filter(Boolean);
  parts.pop();
  return parts.join('/');
}

// ---- one project's queue ----

const sessions = new Map();

function sessionFor(projectId) {
  if (!sessions.has(projectId)) sessions.set(projectId, createSession(projectId));
  return sessions.get(projectId);
}

function createSession(projectId) {
  const session = {
    projectId,
    items: [],
    folderIds: new Map(),
    folderPaths: new Set(),
    keepFolders: true,
    onChange: null,
    panel: null,
    announcer: null,
  };

  session.announce = (text) => {
    if (!session.announcer) return;
    session.announcer.textContent = '';
    // A fresh text node after clearing makes screen readers speak the same words again.
    setTimeout(() => { if (session.announcer) session.announcer.textContent = text; }, 30);
  };

  session.changed = () => {
    if (session.onChange) {
      try { session.onChange(); } catch { /* the page's refresh must not break the queue */ }
    }
  };

  session.pump = () => {
    const running = session.items.filter((item) => item.state === 'uploading' || item.state === 'pausing').length;
    let free = PARALLEL_FILES - running;
    for (const item of session.items) {
      if (free <= 0) break;
      if (item.state === 'waiting') {
        free -= 1;
        startUpload(session, item);
      }
    }
    session.paintSummary();
  };

  session.progress = (item) => {
    const now = performance.now();
    if (now - (item.lastPaint || 0) < 200) return;
    item.lastPaint = now;
    session.paint(item);
  };

  session.paint = (item) => paintItem(session, item);
  session.paintSummary = () => paintSummary(session);
  return session;
}

function sentBytes(item) {
  let sent = item.sentBase;
  for (const loaded of item.inflight.values()) sent += loaded;
  return Math.min(sent, item.file.size);
}

function newItem(session, file, path) {
  const item = {
    id: uid('upload'),
    session,
    file,
    path,
    folder: folderOf(path),
    state: 'waiting',
    url: null,
    blockSize: BLOCK_SIZE,
    staged: new Set(),
    committed: false,
    inflight: new Map(),
    sentBase: 0,
    requests: new Set(),
    waits: new Set(),
    stopRequested: false,
    note: '',
    error: '',
    samples: [],
    resumed: 0,
    importWanted: false,
    transfer: null,
    stopWatch: null,
    lastLive: '',
    el: null,
  };
  const record = readRecord(file);
  if (record) {
    item.url = record.url;
    item.blockSize = Number(record.blockSize) || BLOCK_SIZE;
    item.committed = Boolean(record.committed);
    for (const index of record.staged || []) item.staged.add(Number(index));
    const count = Math.ceil(file.size / item.blockSize);
    item.sentBase = item.committed ? file.size : [...item.staged].reduce((sum, index) => (
      sum + Math.max(0, Math.min(item.blockSize, file.size - index * item.blockSize))), 0);
    item.resumed = item.committed ? count || 1 : item.staged.size;
    if (item.committed) item.state = 'uploaded';
  }
  return item;
}

async function startUpload(session, item) {
  const byItself = item.resumingByItself;
  item.resumingByItself = false;
  item.state = 'uploading';
  item.stopRequested = false;
  item.pauseRequested = false;
  item.pausedBy = null;
  item.error = '';
  item.note = byItself ? 'The network is back: uploading again, from the parts already sent.' : '';
  item.samples = [];
  session.paint(item);
  try {
    if (!item.url) {
      let answer;
      try {
        answer = await api('GET', '/api/conversion/transfer/upload-url', { query: { fileName: item.file.name } });
      } catch (error) {
        // A name Basin does not take as a path segment only names the blob: go without it
        // (the import still gets the file's name).
        if (error.status !== 400) throw error;
        answer = await api('GET', '/api/conversion/transfer/upload-url');
      }
      item.url = answer.data;
      item.blockSize = BLOCK_SIZE;
      item.staged.clear();
      item.sentBase = 0;
      if (item.stopRequested) throw new Stopped('stopped');
      if (item.file.size > SINGLE_PUT_MAX) writeRecord(item);
    }
    if (!item.committed) {
      if (item.file.size <= SINGLE_PUT_MAX && item.staged.size === 0) await uploadWhole(item);
      else await uploadBlocks(item);
    }
    item.state = 'uploaded';
    item.note = '';
    item.pauseRequested = false;
    writeRecord(item);
    session.announce(`${item.path} uploaded.`);
    session.paint(item);
    if (item.importWanted) startImport(session, item);
  } catch (error) {
    item.inflight.clear();
    if (item.cancelRequested) {
      item.state = 'cancelled';
    } else if (item.pauseRequested || error instanceof Stopped || item.stopRequested) {
      item.state = 'paused';
      item.pausedBy = 'person';
      item.note = 'Paused. The parts already sent are kept.';
      session.announce(`${item.path} paused.`);
    } else if (error instanceof Paused) {
      item.state = 'paused';
      item.pausedBy = 'network';
      item.note = 'The network is not answering. The upload goes on by itself when the network is back, or with Resume: the parts already sent are kept.';
      session.announce(`${item.path} paused: the network is not answering.`);
    } else if (error instanceof HttpFailure && (error.status === 403 || error.code === 'InvalidBlockList') && !item.retriedFresh) {
      // The upload URL expired or was refused, or the staged parts are gone (removed a week
      // after staging): start over once with a fresh URL.
      item.retriedFresh = true;
      forgetRecord(item);
      item.url = null;
      item.staged.clear();
      item.committed = false;
      item.sentBase = 0;
      item.state = 'waiting';
    } else {
      item.state = 'failed';
      item.error = describeError(error);
      session.announce(`${item.path}: upload failed. ${item.error}`);
    }
    session.paint(item);
  } finally {
    session.pump();
  }
}

function stopRequests(item) {
  item.stopRequested = true;
  for (const xhr of [...item.requests]) xhr.abort();
  for (const cancelWait of [...item.waits]) cancelWait();
}

// ---- importing ----

async function ensureFolders(session, paths) {
  const wanted = [...new Set(paths.filter(Boolean))];
  const missing = wanted.filter((path) => !session.folderIds.has(path));
  if (!missing.length) return;
  const all = new Set();
  for (const path of missing) {
    const parts = path.split('/');
    for (let i = 1; i <= parts.length; i += 1) all.add(parts.slice(0, i).join('/'));
  }
  const actions = [...all].sort().map((path) => ({ type: 'PathActionCreateIfNotExists', path, isFolder: true }));
  for (let i = 0; i < actions.length; i += 1000) {
    const answer = await api('POST', `/api/hierarchy/project/${session.projectId}`, {
      body: { actions: actions.slice(i, i + 1000), defaultAccessLevel: 'Private' },
    });
    for (const result of answer?.results || []) {
      if (result.projectId && !result.datasetId) session.folderIds.set(result.path, result.projectId);
    }
  }
  // Folders that existed already: find them by their path below the project.
  if (missing.some((path) => !session.folderIds.has(path))) {
    for (let offset = 0; ; offset += 1000) {
      const page = await api('GET', `/api/metadata/project/${session.projectId}/offset-list-recursive`, { query: { offset, limit: 1000 } });
      for (const entry of page?.data || []) {
        if (!session.folderIds.has(entry.relativePath)) session.folderIds.set(entry.relativePath, entry.id);
      }
      if (!page?.data?.length || offset + page.data.length >= (page.totalCount || 0)) break;
    }
  }
  session.changed();
}

function targetProject(session, item) {
  if (!session.keepFolders || !item.folder) return session.projectId;
  const id = session.folderIds.get(item.folder);
  if (!id) throw new Error(`The folder ${item.folder} could not be created.`);
  return id;
}

async function startImport(session, item) {
  const settings = item.settings;
  if (!settings) return;
  const problem = settings.check();
  if (problem) {
    item.error = problem;
    item.importWanted = false;
    session.paint(item);
    return;
  }
  if (item.state !== 'uploaded' && item.state !== 'import-failed') {
    item.importWanted = true;
    session.paint(item);
    return;
  }
  item.importWanted = false;
  item.state = 'importing';
  settings.element.open = false;
  item.error = '';
  item.transfer = null;
  session.paint(item);
  try {
    if (session.keepFolders && item.folder) await ensureFolders(session, [item.folder]);
    const choice = settings.values();
    const summary = await api('POST', '/api/conversion/upload-convert', {
      body: {
        uploadUrl: item.url.split('?')[0],
        originalFileName: item.file.name,
        projectId: targetProject(session, item),
        readerName: choice.readerName,
        writerName: choice.writerName,
        readerParameters: choice.readerParameters,
        writerParameters: choice.writerParameters,
        outputDatasetData: { name: choice.name, description: choice.description || undefined },
      },
    });
    item.transfer = summary;
    session.paint(item);
    item.stopWatch = watchTransfer(summary.id, (record) => {
      item.transfer = record;
      if (record.status === 'Completed') {
        item.state = 'imported';
        forgetRecord(item);
        session.announce(`${item.path} imported as ${choice.name}.`);
        session.changed();
      } else if (record.status === 'Error') {
        item.state = 'import-failed';
        item.error = record.errorMessage || 'The import failed.';
        session.announce(`${item.path}: import failed. ${item.error}`);
      }
      session.paint(item);
    }, {
      interval: 1000,
      onError: (error) => {
        item.state = 'import-failed';
        item.error = describeError(error);
        session.paint(item);
      },
    });
  } catch (error) {
    item.state = 'import-failed';
    item.error = describeError(error);
    session.announce(`${item.path}: import failed. ${item.error}`);
    session.paint(item);
  }
}

// ---- import settings of one file ----

function importSettings(item, catalogue) {
  const prefix = item.id;
  const matched = readerForFile(catalogue, item.file.name);
  const readers = catalogue.readers.filter((r) => r.name !== 'FileReader');
  const readerSelect = h('select', { id: `${prefix}-reader`, name: 'reader', class: 'upload-reader' },
    h('option', { value: COPY }, 'Store the file as it is'),
    readers.map((r) => h('option', { value: r.name }, `${r.name} (${r.datasetFormat})`)));
  readerSelect.value = matched ? matched.name : COPY;
  const writerSelect = h('select', { id: `${prefix}-writer`, name: 'writer', class: 'upload-writer' });
  const writerField = field('Writer', writerSelect);
  const readerOptions = h('div', { class: 'upload-reader-options' });
  const writerOptions = h('div', { class: 'upload-writer-options' });
  const nameInput = h('input', { id: `${prefix}-name`, name: 'name', type: 'text', autocomplete: 'off', maxlength: 255, required: true });
  const descriptionInput = h('input', { id: `${prefix}-description`, name: 'description', type: 'text', autocomplete: 'off' });
  const summary = h('span', { class: 'upload-choice' });
  const hint = h('p', { class: 'hint upload-reader-hint' });
  let readerForm = parameterForm([]);
  let writerForm = parameterForm([]);
  let nameEdited = false;

  function reader() {
    return readerSelect.value ? catalogue.reader(readerSelect.value) : null;
  }
  function writer() {
    return readerSelect.value ? catalogue.writer(writerSelect.value) : catalogue.writer('FileWriter');
  }
  function describeChoice() {
    const r = reader();
    summary.textContent = r
      ? `${r.name} → ${writerSelect.value || '?'} as “${nameInput.value}”`
      : `stored as it is, as “${nameInput.value}”`;
  }
  function syncName() {
    if (!nameEdited) nameInput.value = outputName(item.file.name, writer());
    describeChoice();
  }
  function syncWriter() {
    writerForm = parameterForm(readerSelect.value ? writer()?.parameters || [] : [], { idPrefix: `${prefix}-wp` });
    writerOptions.replaceChildren(readerSelect.value ? optionsGroup('Writer options', writerForm) : '');
    syncName();
  }
  function syncReader() {
    const r = reader();
    writerField.hidden = !r;
    const names = r?.writers || [];
    const previous = writerSelect.value;
    writerSelect.replaceChildren(...names.map((name) => {
      const w = catalogue.writer(name);
      return h('option', { value: name }, w ? `${name} (${w.datasetFormat})` : name);
    }));
    writerSelect.value = names.includes(previous) ? previous : (defaultWriter(catalogue, r) || '');
    readerForm = parameterForm(r?.parameters || [], { idPrefix: `${prefix}-rp` });
    readerOptions.replaceChildren(r ? optionsGroup('Reader options', readerForm) : '');
    const extension = extensionOf(item.file.name);
    if (!r) {
      hint.textContent = matched ? `Kept byte for byte; no preview or conversion later without a reader.` : `No reader takes ${extension || 'files without an extension'}: the file is kept byte for byte.`;
    } else if (r.name === 'ShpReader' && extension === '.shp') {
      hint.textContent = 'A Shapefile needs its .shx and .dbf (and .prj): upload the parts zipped in one .zip.';
    } else if (matched && r.name !== matched.name) {
      hint.textContent = `${item.file.name} looks like ${matched.datasetFormat}; ${r.name} may not read it.`;
    } else {
      hint.textContent = '';
    }
    syncWriter();
  }
  readerSelect.addEventListener('change', syncReader);
  writerSelect.addEventListener('change', syncWriter);
  nameInput.addEventListener('input', () => {
    nameEdited = true;
    describeChoice();
  });
  syncReader();

  const element = h('details', { class: 'upload-settings' },
    h('summary', {}, h('span', { class: 'upload-settings-title' }, 'Import: '), summary),
    h('div', { class: 'upload-settings-grid' },
      field('Read as', readerSelect),
      writerField),
    hint,
    readerOptions,
    writerOptions,
    h('div', { class: 'upload-settings-grid' },
      field('Dataset name', nameInput, { required: true }),
      field('Description', descriptionInput)));

  return {
    element,
    setReader(name) {
      readerSelect.value = name === null ? (matched ? matched.name : COPY) : name;
      syncReader();
    },
    disable(disabled) {
      for (const control of element.querySelectorAll('input, select, button')) control.disabled = disabled;
    },
    check() {
      if (!nameInput.value.trim()) {
        element.open = true;
        nameInput.focus();
        return 'Name the dataset.';
      }
      if (readerSelect.value && !writerSelect.value) return 'Choose a writer.';
      const problem = readerForm.check() || writerForm.check();
      if (problem) element.open = true;
      return problem;
    },
    values() {
      const r = reader();
      return {
        readerName: r ? r.name : 'FileReader',
        writerName: r ? writerSelect.value : 'FileWriter',
        readerParameters: r ? readerForm.values() : [],
        writerParameters: r ? writerForm.values() : [],
        name: nameInput.value.trim(),
        description: descriptionInput.value.trim(),
      };
    },
  };
}

// ---- drawing ----

function formatDuration(seconds) {
  if (!Number.isFinite(seconds) || seconds < 0) return '';
  if (seconds < 60) return `${Math.max(1, Math.round(seconds))} s`;
  if (seconds < 3600) return `${Math.floor(seconds / 60)} min ${Math.round(seconds % 60)} s`;
  return `${Math.floor(seconds / 3600)} h ${Math.round((seconds % 3600) / 60)} min`;
}

function speedOf(item, sent) {
  const now = performance.now();
  item.samples.push([now, sent]);
  while (item.samples.length > 2 && now - item.samples[0][0] > 5000) item.samples.shift();
  const [t0, s0] = item.samples[0];
  const seconds = (now - t0) / 1000;
  return seconds > 0.4 ? (sent - s0) / seconds : 0;
}

function buildItem(session, item, catalogue) {
  const nameId = `${item.id}-title`;
  const refs = {};
  refs.badge = h('span', { class: 'badge' });
  refs.progress = h('progress', { max: item.file.size || 1, value: 0, 'aria-labelledby': nameId, class: 'upload-bar' });
  refs.stats = h('span', { class: ['upload-stats', 'hint'] });
  refs.live = h('p', { class: 'upload-live', 'aria-live': 'polite' });
  refs.note = h('p', { class: 'upload-note' });
  refs.error = h('p', { class: 'upload-error', role: 'alert' });
  refs.result = h('div', { class: 'upload-result' });
  const label = item.path;
  refs.pause = h('button', { type: 'button', class: ['button', 'button-small'], 'aria-label': `Pause ${label}`, onclick: () => pause(session, item) }, 'Pause');
  refs.resume = h('button', { type: 'button', class: ['button', 'button-small', 'button-primary'], 'aria-label': `Resume ${label}`, onclick: () => resume(session, item) }, 'Resume');
  refs.retry = h('button', { type: 'button', class: ['button', 'button-small'], 'aria-label': `Try again to upload ${label}`, onclick: () => resume(session, item) }, 'Try again');
  refs.cancel = h('button', { type: 'button', class: ['button', 'button-small'], 'aria-label': `Cancel ${label}`, onclick: () => cancel(session, item) }, 'Cancel');
  refs.cancelImport = h('button', { type: 'button', class: ['button', 'button-small'], 'aria-label': `Cancel import of ${label}`, onclick: () => cancelImport(session, item) }, 'Cancel import');
  refs.importButton = h('button', { type: 'button', class: ['button', 'button-small', 'button-primary', 'upload-import'], 'aria-label': `Import ${label}`, onclick: () => startImport(session, item) }, 'Import');
  refs.remove = h('button', { type: 'button', class: ['button', 'button-small', 'button-quiet'], 'aria-label': `Remove ${label} from the list`, onclick: () => remove(session, item) }, 'Remove');
  item.settings = importSettings(item, catalogue);
  refs.dest = h('span', { class: ['hint', 'upload-dest'] });
  item.refs = refs;
  item.el = h('li', { class: 'upload-item', dataset: { name: item.file.name } },
    h('div', { class: 'upload-head' },
      h('span', { class: 'upload-name', id: nameId }, item.path),
      h('span', { class: ['hint', 'upload-size'] }, formatBytes(item.file.size)),
      refs.badge),
    h('div', { class: 'upload-progress' }, refs.progress, refs.stats),
    refs.live,
    refs.note,
    refs.error,
    refs.dest,
    item.settings.element,
    refs.result,
    h('div', { class: 'upload-actions' }, refs.importButton, refs.pause, refs.resume, refs.retry, refs.cancel, refs.cancelImport, refs.remove));
  paintItem(session, item);
  return item.el;
}

function paintItem(session, item) {
  const refs = item.refs;
  if (!refs) return;
  const { state } = item;
  const size = item.file.size;
  const sent = item.committed ? size : sentBytes(item);
  refs.badge.className = `badge badge-${STATE_KIND[state] || 'info'} upload-state`;
  refs.badge.textContent = item.importWanted && state !== 'importing' ? `${STATE_TEXT[state]} · import queued` : STATE_TEXT[state];
  refs.progress.max = size || 1;
  refs.progress.value = size ? sent : (item.committed ? 1 : 0);
  if (state === 'uploading' || state === 'pausing') {
    const speed = speedOf(item, sent);
    const left = speed > 0 ? (size - sent) / speed : NaN;
    refs.stats.textContent = `${formatBytes(sent)} of ${formatBytes(size)}`
      + (speed > 0 ? ` · ${formatBytes(speed)}/s · ${formatDuration(left)} left` : '');
  } else if (state === 'paused' || state === 'waiting') {
    refs.stats.textContent = `${formatBytes(sent)} of ${formatBytes(size)}`
      + (item.resumed ? ` · resuming: ${item.resumed} ${item.resumed === 1 ? 'part' : 'parts'} already sent` : '');
  } else if (state === 'cancelled' || state === 'failed') {
    refs.stats.textContent = `${formatBytes(sent)} of ${formatBytes(size)}`;
  } else {
    refs.stats.textContent = `${formatBytes(size)} uploaded`;
  }
  // Spoken progress: state changes and every quarter.
  const quarter = size ? Math.floor((sent / size) * 4) : 0;
  const live = `${item.path}: ${STATE_TEXT[state]}${state === 'uploading' && quarter > 0 ? `, ${quarter * 25}%` : ''}`;
  if (live !== item.lastLive) {
    refs.live.textContent = live;
    item.lastLive = live;
  }
  refs.note.textContent = item.note || '';
  refs.note.hidden = !item.note;
  refs.error.textContent = item.error || '';
  refs.error.hidden = !item.error;
  refs.dest.textContent = session.keepFolders && item.folder ? `Into the subproject ${item.folder}` : '';
  refs.dest.hidden = !(session.keepFolders && item.folder);

  const uploading = state === 'uploading' || state === 'waiting' || state === 'pausing';
  // A file sent in one request has nothing to pause between: Cancel stops it.
  refs.pause.hidden = state !== 'uploading' || item.file.size <= SINGLE_PUT_MAX;
  refs.resume.hidden = state !== 'paused' && state !== 'pausing';
  refs.retry.hidden = state !== 'failed';
  refs.cancel.hidden = !(uploading || state === 'paused');
  const transferRunning = state === 'importing' && item.transfer && isActive(item.transfer.status);
  refs.cancelImport.hidden = !transferRunning;
  const importable = ['waiting', 'uploading', 'pausing', 'paused', 'uploaded', 'import-failed'].includes(state) && !item.importWanted;
  refs.importButton.hidden = !importable;
  let importText = 'Import when uploaded';
  if (state === 'uploaded') importText = 'Import';
  if (state === 'import-failed') importText = 'Import again';
  refs.importButton.textContent = importText;
  refs.importButton.setAttribute('aria-label', `${importText} ${item.path}`);
  refs.remove.hidden = !['cancelled', 'failed', 'imported', 'import-failed', 'uploaded'].includes(state);
  item.settings.disable(state === 'importing' || state === 'imported' || state === 'cancelled');

  refs.result.replaceChildren();
  if (item.transfer) {
    const record = item.transfer;
    refs.result.append(h('div', { class: 'upload-transfer' },
      h('span', {}, 'Transfer '), statusBadge(record.status, record.errorMessage),
      isActive(record.status) ? progressBar(record, `Import of ${item.path}`) : null,
      ...(record.importResults || []).filter((r) => r.datasetId).map((r) => h('a', { href: `#/datasets/${r.datasetId}`, class: 'upload-dataset-link' }, `Open ${record.datasetImportData?.name || 'the dataset'}`)),
      h('a', { href: '#/transfers', class: 'upload-transfers-link' }, 'Transfers')));
  }
  session.paintSummary();
}

function paintSummary(session) {
  const panel = session.panel;
  if (!panel) return;
  const items = session.items;
  panel.queueWrap.hidden = items.length === 0;
  const uploading = items.filter((i) => i.state === 'uploading' || i.state === 'waiting' || i.state === 'pausing');
  const importable = items.filter((i) => ['waiting', 'uploading', 'pausing', 'paused', 'uploaded', 'import-failed'].includes(i.state) && !i.importWanted);
  panel.bulk.hidden = importable.length < 2;
  panel.importAll.disabled = importable.length === 0;
  const total = uploading.reduce((sum, i) => sum + i.file.size, 0);
  const sent = uploading.reduce((sum, i) => sum + sentBytes(i), 0);
  const counts = {};
  for (const item of items) counts[item.state] = (counts[item.state] || 0) + 1;
  const parts = Object.entries(counts).map(([state, n]) => `${n} ${STATE_TEXT[state].toLowerCase()}`);
  panel.summary.textContent = `${items.length} ${items.length === 1 ? 'file' : 'files'}: ${parts.join(', ')}`
    + (uploading.length ? ` · ${formatBytes(sent)} of ${formatBytes(total)} sent` : '');
  panel.keepFoldersField.hidden = !items.some((i) => i.folder);
  panel.clearDone.hidden = !items.some((i) => ['imported', 'cancelled'].includes(i.state));
}

/**
 * After a reload the queue is gone but the resume records are not: the panel lists the
 * project's unfinished uploads and says that choosing the same file again resumes each.
 */
function paintResumable(session) {
  const panel = session.panel;
  if (!panel) return;
  const queued = new Set(session.items.map((item) => recordKey(item.file)));
  const unfinished = unfinishedUploads(session.projectId, queued);
  panel.resumable.hidden = unfinished.length === 0;
  if (!unfinished.length) {
    panel.resumable.replaceChildren();
    return;
  }
  const one = unfinished.length === 1;
  panel.resumable.replaceChildren(
    h('p', { class: 'upload-resumable-title' }, one ? 'An unfinished upload' : `${unfinished.length} unfinished uploads`),
    h('p', {}, `Choose or drop the same ${one ? 'file' : 'files'} again to resume where ${one ? 'it' : 'they'} stopped: the parts already sent are not sent again.`),
    h('ul', { class: 'upload-resumable-list' }, unfinished.map((entry) => h('li', {},
      h('span', { class: 'upload-resumable-name' }, entry.path),
      h('span', { class: 'hint' }, entry.committed
        ? ` · ${formatBytes(entry.size)}, all sent: choose it again to import it`
        : ` · ${formatBytes(entry.sent)} of ${formatBytes(entry.size)} sent (${entry.stagedParts} of ${entry.parts} ${entry.parts === 1 ? 'part' : 'parts'})`),
      ' ',
      h('button', {
        type: 'button', class: ['button', 'button-small', 'button-quiet'], 'aria-label': `Forget the unfinished upload of ${entry.path}`,
        onclick: () => {
          try { sessionStorage.removeItem(entry.key); } catch { /* nothing kept */ }
          paintResumable(session);
          session.panel?.chooseFiles.focus();
        },
      }, 'Forget')))));
}

// ---- actions ----

/** Pause: no other block starts; the blocks on their way finish (what they send is kept, so
 *  the progress never goes back), then the file is paused. A file whose last blocks were on
 *  their way is simply uploaded. */
function pause(session, item) {
  if (item.state !== 'uploading') return;
  item.state = 'pausing';
  item.pauseRequested = true;
  item.note = 'Pausing: the parts on their way are finished first, so nothing sent is lost.';
  item.halt?.();
  session.paint(item);
}

function resume(session, item) {
  if (item.state === 'pausing') {
    // Changed one's mind before the pause took hold: go on.
    item.pauseRequested = false;
    item.halting = false;
    item.state = 'uploading';
    item.note = '';
    session.paint(item);
    return;
  }
  if (item.state !== 'paused' && item.state !== 'failed') return;
  item.state = 'waiting';
  item.note = '';
  item.error = '';
  item.stopRequested = false;
  item.pausedBy = null;
  session.paint(item);
  session.pump();
}

function cancel(session, item) {
  item.cancelRequested = true;
  item.importWanted = false;
  stopRequests(item);
  item.state = 'cancelled';
  item.note = '';
  forgetRecord(item);
  session.announce(`${item.path}: upload cancelled.`);
  session.paint(item);
  session.pump();
}

async function cancelImport(session, item) {
  if (!item.transfer) return;
  try {
    item.transfer = await cancelTransfer(item.transfer.id);
  } catch (error) {
    item.error = describeError(error);
  }
  session.paint(item);
}

function remove(session, item) {
  if (item.stopWatch) item.stopWatch();
  stopRequests(item);
  session.items = session.items.filter((other) => other !== item);
  const next = item.el?.nextElementSibling || item.el?.previousElementSibling;
  item.el?.remove();
  if (next) next.querySelector('button:not([hidden])')?.focus();
  else session.panel?.chooseFiles.focus();
  session.paintSummary();
  paintResumable(session);
}

async function addFiles(session, entries) {
  const panel = session.panel;
  let catalogue;
  try {
    catalogue = await loadCatalogue();
  } catch (error) {
    session.announce(`The readers and writers could not be read: ${describeError(error)}`);
    panel?.error(describeError(error));
    return;
  }
  let added = 0;
  for (const { file, path } of entries) {
    const duplicate = session.items.find((other) => other.path === path && other.file.size === file.size
      && other.file.lastModified === file.lastModified && !['cancelled', 'imported', 'failed'].includes(other.state));
    if (duplicate) {
      if (duplicate.state === 'paused') resume(session, duplicate);
      continue;
    }
    const item = newItem(session, file, path || file.name);
    session.items.push(item);
    if (session.panel) session.panel.queue.append(buildItem(session, item, catalogue));
    added += 1;
  }
  if (added) session.announce(`${added} ${added === 1 ? 'file' : 'files'} added to the upload queue.`);
  paintResumable(session);
  session.pump();
}

// ---- the panel ----

/**
 * The upload panel of project `projectId`. `onChange()` is called when datasets or
 * subprojects may have appeared, so the project's listing can refresh.
 */
export function uploadPanel(projectId, { onChange } = {}) {
  const session = sessionFor(projectId);
  session.onChange = onChange || null;
  const id = uid('upload-panel');

  const fileInput = h('input', { type: 'file', multiple: true, id: `${id}-files`, class: 'upload-file-input', tabindex: '-1', 'aria-hidden': 'true' });
  const folderInput = h('input', { type: 'file', multiple: true, id: `${id}-folder`, class: 'upload-folder-input', tabindex: '-1', 'aria-hidden': 'true' });
  folderInput.webkitdirectory = true;
  folderInput.setAttribute('webkitdirectory', '');
  const chooseFiles = h('button', { type: 'button', class: ['button', 'button-primary'], onclick: () => fileInput.click() }, 'Choose files');
  const chooseFolder = h('button', { type: 'button', class: 'button', onclick: () => folderInput.click() }, 'Choose a folder');
  const zone = h('div', { class: 'drop-zone', id: `${id}-zone` },
    h('p', { class: 'drop-title' }, 'Drop files or folders here'),
    h('p', { class: 'hint' }, 'Bytes go straight to storage, several parts at a time; an interrupted upload resumes where it stopped. Folders become subprojects.'),
    h('div', { class: 'drop-actions' }, chooseFiles, chooseFolder),
    fileInput, folderInput);
  const announcer = h('p', { class: ['visually-hidden', 'upload-announcer'], role: 'status', 'aria-live': 'polite' });
  const errorLine = h('p', { class: 'form-error', role: 'alert', hidden: true });
  const resumable = h('div', { class: ['notice', 'upload-resumable'], hidden: true });

  const keepFolders = h('input', { type: 'checkbox', id: `${id}-keep`, checked: session.keepFolders });
  const keepFoldersField = h('label', { class: ['choice', 'upload-keep'], for: keepFolders.id }, keepFolders, ' Keep the folders as subprojects');
  keepFolders.addEventListener('change', () => {
    session.keepFolders = keepFolders.checked;
    for (const item of session.items) paintItem(session, item);
  });
  const bulkReader = h('select', { id: `${id}-bulk`, name: 'bulk' },
    h('option', { value: 'match' }, 'Read each with its matching reader'),
    h('option', { value: 'copy' }, 'Store every file as it is'));
  const applyBulk = h('button', {
    type: 'button', class: ['button', 'button-small'], onclick: () => {
      for (const item of session.items) {
        if (['importing', 'imported', 'cancelled'].includes(item.state) || !item.settings) continue;
        item.settings.setReader(bulkReader.value === 'copy' ? COPY : null);
      }
      session.announce(bulkReader.value === 'copy' ? 'Every file will be stored as it is.' : 'Every file will be read with its matching reader.');
    },
  }, 'Apply to all');
  const bulk = h('div', { class: ['inline-form', 'upload-bulk'] }, field('For every file', bulkReader), applyBulk);
  const importAll = h('button', {
    type: 'button', class: ['button', 'button-primary'], onclick: async () => {
      const chosen = session.items.filter((item) => ['waiting', 'uploading', 'pausing', 'paused', 'uploaded', 'import-failed'].includes(item.state) && !item.importWanted);
      if (session.keepFolders) {
        try {
          // Empty folders of a dropped tree are made too.
          await ensureFolders(session, [...chosen.map((item) => item.folder), ...session.folderPaths]);
          session.folderPaths.clear();
        } catch (error) {
          panel.error(describeError(error));
          return;
        }
      }
      for (const item of chosen) startImport(session, item);
    },
  }, 'Import all');
  const clearDone = h('button', {
    type: 'button', class: ['button', 'button-quiet'], onclick: () => {
      for (const item of session.items.filter((i) => ['imported', 'cancelled'].includes(i.state))) remove(session, item);
    },
  }, 'Clear finished');
  const summary = h('p', { class: 'upload-summary' });
  const queue = h('ul', { class: 'upload-queue', 'aria-label': 'Upload queue' });
  const queueWrap = h('div', { class: 'upload-queue-wrap' },
    h('div', { class: 'upload-queue-head' }, summary, h('div', { class: 'page-actions' }, clearDone, importAll)),
    keepFoldersField,
    bulk,
    queue);

  const element = h('section', { class: ['panel', 'upload-panel'], 'aria-labelledby': `${id}-title` },
    h('h2', { id: `${id}-title` }, 'Upload'),
    zone, errorLine, announcer, resumable, queueWrap);

  const panel = {
    queue, queueWrap, bulk, importAll, clearDone, summary, keepFoldersField, chooseFiles, resumable,
    error(text) {
      errorLine.textContent = text;
      errorLine.hidden = !text;
    },
  };
  session.panel = panel;
  session.announcer = announcer;

  function take(entries) {
    panel.error('');
    for (const folder of entries.folders || []) session.folderPaths.add(folder);
    addFiles(session, entries.files);
  }

  fileInput.addEventListener('change', () => {
    take({ files: [...fileInput.files].map((file) => ({ file, path: file.name })) });
    fileInput.value = '';
  });
  folderInput.addEventListener('change', () => {
    const files = [...folderInput.files].map((file) => ({ file, path: file.webkitRelativePath || file.name }));
    take({ files, folders: [...new Set(files.map((f) => folderOf(f.path)).filter(Boolean))] });
    folderInput.value = '';
  });

  let depth = 0;
  zone.addEventListener('dragenter', (event) => {
    if (![...(event.dataTransfer?.types || [])].includes('Files')) return;
    event.preventDefault();
    depth += 1;
    zone.classList.add('drag-over');
  });
  zone.addEventListener('dragover', (event) => {
    if (![...(event.dataTransfer?.types || [])].includes('Files')) return;
    event.preventDefault();
    event.dataTransfer.dropEffect = 'copy';
  });
  zone.addEventListener('dragleave', () => {
    depth = Math.max(0, depth - 1);
    if (!depth) zone.classList.remove('drag-over');
  });
  zone.addEventListener('drop', async (event) => {
    event.preventDefault();
    depth = 0;
    zone.classList.remove('drag-over');
    const transfer = event.dataTransfer;
    if (!transfer) return;
    // Entries must be taken while the event runs; walking them may then take its time.
    const entries = [];
    const loose = [];
    for (const entryItem of [...(transfer.items || [])]) {
      if (entryItem.kind !== 'file') continue;
      const entry = typeof entryItem.webkitGetAsEntry === 'function' ? entryItem.webkitGetAsEntry() : null;
      if (entry) entries.push(entry);
      else {
        const file = entryItem.getAsFile();
        if (file) loose.push({ file, path: file.name });
      }
    }
    if (!entries.length && !loose.length) {
      for (const file of [...(transfer.files || [])]) loose.push({ file, path: file.name });
    }
    try {
      const walked = await walkEntries(entries);
      take({ files: [...loose, ...walked.files], folders: walked.folders });
    } catch (error) {
      panel.error(`The dropped folder could not be read: ${describeError(error)}`);
    }
  });

  // Coming back to the project shows its queue as it is.
  if (session.items.length) {
    loadCatalogue().then((catalogue) => {
      for (const item of session.items) {
        if (!item.el) buildItem(session, item, catalogue);
        queue.append(item.el);
        paintItem(session, item);
      }
    }).catch(() => {});
  }
  paintSummary(session);
  paintResumable(session);

  return element;
}

// Resume uploads paused by the network when it comes back; warn before leaving mid-upload.
window.addEventListener('online', () => {
  for (const session of sessions.values()) {
    for (const item of session.items) {
      // Only what the network paused; a file the person paused waits for Resume.
      if (item.state !== 'paused' || item.pausedBy !== 'network') continue;
      item.state = 'waiting';
      item.pausedBy = null;
      item.resumingByItself = true;
      item.note = 'The network is back: the upload goes on by itself.';
      session.paint(item);
      session.announce(`${item.path}: the network is back, uploading again.`);
    }
    session.pump();
  }
});
// A file dropped beside the drop zone would make the browser open it in place of the
// console: while a drop zone is on the page, such drops do nothing.
for (const type of ['dragover', 'drop']) {
  window.addEventListener(type, (event) => {
    if (event.defaultPrevented || !document.querySelector('.drop-zone')) return;
    if (![...(event.dataTransfer?.types || [])].includes('Files')) return;
    event.preventDefault();
    if (type === 'dragover') event.dataTransfer.dropEffect = 'none';
  });
}
window.addEventListener('beforeunload', (event) => {
  for (const session of sessions.values()) {
    if (session.items.some((item) => item.state === 'uploading' || item.state === 'pausing')) {
      event.preventDefault();
      return;
    }
  }
});
