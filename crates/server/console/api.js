// The console's only way to reach Basin: the public API, with the caller's API key or bearer
// token from the tab's session storage (never a URL, never a cookie). Paths are resolved
// against the folder the console is served from, so a deployment under a path prefix works.
// Errors arrive as RFC 9457 problems and are thrown as ApiError.

const STORAGE_KEY = 'basin.credentials';
const BASE = new URL('../', import.meta.url);

/** A failed API call: `status`, and the problem body when there was one. */
export class ApiError extends Error {
  constructor(status, problem, url) {
    super(problem?.title ? `${problem.title}${problem.detail ? `: ${problem.detail}` : ''}` : `HTTP ${status}`);
    this.name = 'ApiError';
    this.status = status;
    this.problem = problem;
    this.url = url;
  }
}

/** The stored credentials, `{kind: 'key' | 'token', value}`, or null. */
export function credentials() {
  try {
    const stored = JSON.parse(sessionStorage.getItem(STORAGE_KEY) || 'null');
    if (stored && (stored.kind === 'key' || stored.kind === 'token') && typeof stored.value === 'string') {
      return stored;
    }
  } catch {
    // Unreadable storage counts as signed out.
  }
  return null;
}

export function storeCredentials(kind, value) {
  sessionStorage.setItem(STORAGE_KEY, JSON.stringify({ kind, value: value.trim() }));
  cachedMe = null;
}

export function forgetCredentials() {
  sessionStorage.removeItem(STORAGE_KEY);
  cachedMe = null;
}

/** The headers that authenticate a request. */
export function authHeaders(stored = credentials()) {
  if (!stored) return {};
  return stored.kind === 'token'
    ? { Authorization: `Bearer ${stored.value}` }
    : { 'svc-open-api-key': stored.value };
}

/** An absolute URL of an API path with query parameters (arrays repeat the name). */
export function apiUrl(path, query) {
  const url = new URL(String(path).replace(/^\/+/, ''), BASE);
  for (const [name, value] of Object.entries(query || {})) {
    if (value === undefined || value === null || value === '') continue;
    for (const one of [].concat(value)) url.searchParams.append(name, String(one));
  }
  return url;
}

/** The URL of a console route, e.g. for a link to open in another tab. */
export function consoleUrl(route) {
  return new URL(`#${route}`, BASE).href;
}

/**
 * Calls the API and returns the parsed JSON (null for an empty body).
 * options: query, body (JSON), version (api-version header), signal, headers, credentials
 * (to try credentials before storing them).
 */
export async function api(method, path, options = {}) {
  const response = await send(method, path, options);
  const text = await response.text();
  if (!text) return null;
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}

/** Like api() but returns the Response (tiles, files); throws ApiError on non-2xx/304. */
export async function send(method, path, { query, body, version, signal, headers, credentials: given } = {}) {
  const url = apiUrl(path, query);
  const init = {
    method,
    signal,
    cache: 'no-cache',
    credentials: 'omit',
    headers: { Accept: 'application/json', ...authHeaders(given || credentials()), ...(headers || {}) },
  };
  if (version) init.headers['api-version'] = String(version);
  if (body !== undefined) {
    init.headers['Content-Type'] = 'application/json';
    init.body = JSON.stringify(body);
  }
  let response;
  try {
    response = await fetch(url, init);
  } catch (error) {
    if (error.name === 'AbortError') throw error;
    throw new ApiError(0, { title: 'Basin cannot be reached', detail: 'Check the network connection and try again.' }, url.href);
  }
  if (!response.ok && response.status !== 304) {
    let problem = null;
    try {
      problem = await response.json();
    } catch {
      problem = { title: response.statusText || `HTTP ${response.status}` };
    }
    const failure = new ApiError(response.status, problem, url.href);
    if (response.status === 401 && !given) {
      window.dispatchEvent(new CustomEvent('basin:unauthorized', { detail: failure }));
    }
    throw failure;
  }
  return response;
}

/** One page of a cursor list: `{data, cursor}` (cursor null on the last page). */
export function cursorPage(path, { query, cursor, limit = 100, version, signal } = {}) {
  return api('GET', path, { query: { ...query, Cursor: cursor, Limit: limit }, version, signal });
}

/** One page of an offset list: `{totalCount, offset, limit, data}`. */
export function offsetPage(path, { query, offset = 0, limit = 50, version, signal } = {}) {
  return api('GET', path, { query: { ...query, offset, limit }, version, signal });
}

/** Every item of a cursor list (pages of 1000), up to `max`. */
export async function allPages(path, { query, version, signal, max = 100000 } = {}) {
  const items = [];
  let cursor = null;
  do {
    const page = await cursorPage(path, { query, cursor, limit: 1000, version, signal });
    items.push(...(page?.data || []));
    cursor = page?.cursor || null;
  } while (cursor && items.length < max);
  return items;
}

let cachedMe = null;
/** The caller (`/api/iam/principal/me`), fetched once per sign-in. */
export async function me() {
  if (!cachedMe) {
    cachedMe = api('GET', '/api/iam/principal/me').catch((error) => {
      cachedMe = null;
      throw error;
    });
  }
  return cachedMe;
}

/** Whether the caller holds a platform role (BackOffice, CloudAdministrator). */
export function isBackOffice(principal) {
  const roles = (principal?.platformRoles || []).map((role) => String(role).toLowerCase());
  return roles.includes('backoffice') || roles.includes('cloudadministrator');
}
