// Hash routes (`#/projects/<id>`): the server serves one page at `/`, deep links and the back
// button work, and no route ever puts a credential in a URL. Pages register themselves in
// app.js; a page's render(container, params, query) may return a cleanup function, called when
// the person leaves (to stop polling and abort requests).

const routes = [];
let cleanup = null;
let renderCount = 0;

/** Registers `pattern` (`/projects/:id`) with `render(main, params, query)`. */
export function route(pattern, render, { title } = {}) {
  const names = [];
  const regex = new RegExp(`^${pattern.replace(/:[a-zA-Z]+/g, (match) => {
    names.push(match.slice(1));
    return '([^/]+)';
  })}$`);
  routes.push({ regex, names, render, title });
}

/** The current route path and query (`#/projects/1?sort=name` -> `/projects/1`, {sort}). */
export function current() {
  const hash = location.hash.startsWith('#/') ? location.hash.slice(1) : '/';
  const [path, search = ''] = hash.split('?');
  return { path, query: Object.fromEntries(new URLSearchParams(search)) };
}

/** The href of a route with an optional query. */
export function href(path, query) {
  const search = query ? new URLSearchParams(Object.entries(query).filter(([, v]) => v !== undefined && v !== null && v !== '')).toString() : '';
  return `#${path}${search ? `?${search}` : ''}`;
}

/** Goes to a route (adds a history entry unless `replace`). */
export function navigate(path, query, { replace = false } = {}) {
  const target = href(path, query);
  if (location.hash === target) {
    render();
  } else if (replace) {
    history.replaceState(null, '', target);
    render();
  } else {
    location.hash = target;
  }
}

/** Updates the query of the current route without rendering again (sorting, paging state). */
export function setQuery(query) {
  const { path } = current();
  history.replaceState(null, '', href(path, query));
}

/** Renders the current route into `main`. */
export async function render() {
  const main = document.getElementById('main-content');
  if (typeof cleanup === 'function') {
    try { cleanup(); } catch { /* a page's cleanup must not block the next page */ }
  }
  cleanup = null;
  const { path, query } = current();
  renderCount += 1;
  const mine = renderCount;
  for (const entry of routes) {
    const match = entry.regex.exec(path);
    if (!match) continue;
    const params = Object.fromEntries(entry.names.map((name, i) => [name, decodeURIComponent(match[i + 1])]));
    // Each render gets a fresh container: a page still waiting on the API when the person has
    // moved on then fills a detached element instead of overwriting the next page.
    const host = document.createElement('div');
    host.className = 'page';
    main.replaceChildren(host);
    const result = await entry.render(host, params, query);
    if (mine !== renderCount) {
      if (typeof result === 'function') result();
      return;
    }
    cleanup = result;
    const heading = main.querySelector('h1');
    document.title = heading ? `${heading.textContent} · Basin` : 'Basin';
    window.dispatchEvent(new CustomEvent('basin:rendered', { detail: { path } }));
    return;
  }
  main.replaceChildren();
  const notFound = document.createElement('h1');
  notFound.textContent = 'Page not found';
  main.append(notFound);
}

/** Whether a render started after `token` (from renderToken()) — for async work to give up. */
export function renderToken() {
  return renderCount;
}

export function stale(token) {
  return token !== renderCount;
}
