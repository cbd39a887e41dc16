// The status banner: the active feature status messages of the console's feature and the
// global ones (docs/features.md, "The banner"), above every page.
//
// GET /api/admin/feature/{featureId}/banner is made to be polled: the banner keeps the ETag
// and asks again with If-None-Match about every 30 s, at `nextChangeAt` (when a message starts
// or ends), when the tab becomes visible and when the window gets focus; it does not poll
// while the tab is hidden. 304 means unchanged. Because api.js fetches with cache 'no-cache',
// the browser may also revalidate on its own and hand back its cached 200 for a 304: an answer
// whose ETag is the one already shown counts as unchanged as well.
//
// A failing poll never breaks the page: the banner keeps what it shows and tries again later
// (a 401 is api.js's business: it signs the person out).
//
// Debug/test hook: `window.basinBanner.refresh()` polls now and resolves when done.

import { send } from './api.js';
import { h, parseTime, replace } from './dom.js';
import { featureId } from './settings.js';
import { renderHTML } from './sanitize.js';

const POLL_MS = 30000;
const RETRY_MAX_MS = 120000;
const DISMISSED_KEY = 'basin.banner.dismissed';
const FOLD_AFTER = 3; // more messages than this fold behind a "Show more" button
const TYPES = {
  critical: { label: 'Critical', className: 'banner-critical' },
  warning: { label: 'Warning', className: 'banner-warning' },
  informational: { label: 'Information', className: 'banner-informational' },
};

function typeOf(message) {
  return TYPES[String(message?.type || '').toLowerCase()] || TYPES.informational;
}

function dismissKey(message) {
  return `${message.id}@${message.updatedAt}`;
}

function dismissed() {
  try {
    const list = JSON.parse(sessionStorage.getItem(DISMISSED_KEY) || '[]');
    return new Set(Array.isArray(list) ? list.map(String) : []);
  } catch {
    return new Set();
  }
}

function remember(key, shown) {
  // Keeps only the keys of messages still shown, so the list cannot grow without end.
  const keep = [...dismissed()].filter((k) => shown.has(k));
  keep.push(key);
  try {
    sessionStorage.setItem(DISMISSED_KEY, JSON.stringify(keep.slice(-200)));
  } catch {
    // Storage full or disabled: the message is hidden until the page is reloaded.
  }
}

/**
 * One message as the banner shows it: type, title (text), body (sanitized HTML) and, when
 * `onDismiss` is given, a dismiss button. Also used by the messages page's preview.
 */
export function messageElement(message, { onDismiss, headingLevel = null } = {}) {
  const type = typeOf(message);
  const title = message.title || '';
  const body = h('div', { class: 'banner-body' });
  renderHTML(body, message.body || '');
  const typeLabel = h('span', { class: 'banner-type' }, `${type.label}: `);
  const titleEl = headingLevel
    ? h(`h${headingLevel}`, { class: 'banner-title' }, typeLabel, title)
    : h('p', { class: 'banner-title' }, typeLabel, title);
  return h('div', { class: ['banner', type.className], dataset: { messageId: String(message.id ?? '') } },
    h('div', { class: 'banner-text' }, titleEl, message.body ? body : null),
    onDismiss ? h('button', {
      type: 'button',
      class: ['button', 'button-quiet', 'button-small', 'banner-dismiss'],
      'aria-label': `Dismiss: ${title}`,
      title: 'Dismiss this message for this session',
      onclick: onDismiss,
    }, '✕') : null);
}

/** Starts the banner in `element`; returns the function that stops it. */
export function startBanner(element) {
  if (!element) return () => {};
  element.setAttribute('aria-live', 'polite');
  const path = `/api/admin/feature/${encodeURIComponent(featureId)}/banner`;
  let etag = null;
  let messages = [];
  let timer = null;
  let stopped = false;
  let inFlight = null;
  let failures = 0;
  let controller = null;
  let nextChangeAt = null;
  let skew = 0; // the server's clock minus this one, from the Date header
  let nextPollAt = null;
  let expanded = false;

  function render() {
    const hidden = dismissed();
    const visible = messages.filter((m) => !hidden.has(dismissKey(m)));
    if (!visible.length) {
      element.replaceChildren();
      return;
    }
    const shown = new Set(messages.map(dismissKey));
    const folded = !expanded && visible.length > FOLD_AFTER;
    const listed = folded ? visible.slice(0, FOLD_AFTER) : visible;
    const more = visible.length - FOLD_AFTER;
    replace(element, h('div', { role: 'region', 'aria-label': 'Service messages', class: 'banner-list' },
      listed.map((message) => messageElement(message, {
        onDismiss: () => {
          remember(dismissKey(message), shown);
          render();
          document.getElementById('main-content')?.focus();
        },
      })),
      visible.length > FOLD_AFTER ? h('div', { class: 'banner-more' },
        h('button', {
          type: 'button',
          class: ['button', 'button-quiet', 'button-small'],
          'aria-expanded': folded ? 'false' : 'true',
          onclick: () => {
            expanded = folded;
            render();
            element.querySelector('.banner-more button')?.focus();
          },
        }, folded ? `Show ${more} more message${more === 1 ? '' : 's'}` : 'Show fewer messages')) : null));
  }

  function schedule(delay) {
    clearTimeout(timer);
    timer = null;
    nextPollAt = null;
    if (stopped || document.hidden) return; // visibilitychange polls again
    const wait = Math.max(1000, delay);
    nextPollAt = Date.now() + wait;
    timer = setTimeout(poll, wait);
  }

  async function fetchBanner() {
    controller = new AbortController();
    const response = await send('GET', path, {
      headers: etag ? { 'If-None-Match': etag } : {},
      signal: controller.signal,
    });
    const served = Date.parse(response.headers.get('Date') || '');
    if (!Number.isNaN(served)) skew = served - Date.now();
    const tag = response.headers.get('ETag');
    if (response.status === 304 || (tag && tag === etag)) {
      // Unchanged: a 304, or the browser's cached copy of the answer already shown.
      await response.body?.cancel().catch(() => {});
      return null;
    }
    const answer = await response.json();
    return { tag, answer };
  }

  async function poll() {
    if (stopped) return;
    if (inFlight) return inFlight;
    clearTimeout(timer);
    timer = null;
    inFlight = (async () => {
      let next = POLL_MS;
      try {
        const fresh = await fetchBanner();
        failures = 0;
        if (fresh && !stopped) {
          etag = fresh.tag;
          messages = Array.isArray(fresh.answer?.data) ? fresh.answer.data : [];
          nextChangeAt = parseTime(fresh.answer?.nextChangeAt);
          render();
        }
        if (nextChangeAt) {
          // The Date header has whole seconds: a little after the change, never a busy loop.
          const until = nextChangeAt.getTime() - (Date.now() + skew) + 1000;
          if (!fresh && until <= 0) {
            // The change was due and the answer is the same (the message that was to start was
            // deleted meanwhile): back to the usual pace.
            nextChangeAt = null;
          } else if (until < next) {
            next = Math.max(2000, until);
          }
        }
      } catch (failure) {
        if (failure?.name === 'AbortError') return;
        // Show what was shown; try again later, backing off.
        failures += 1;
        next = Math.min(RETRY_MAX_MS, POLL_MS * 2 ** Math.min(failures - 1, 2));
      } finally {
        inFlight = null;
        controller = null;
      }
      schedule(next);
    })();
    return inFlight;
  }

  function onVisibility() {
    if (document.hidden) {
      clearTimeout(timer);
      timer = null;
    } else {
      poll();
    }
  }
  function onFocus() {
    if (!document.hidden) poll();
  }

  document.addEventListener('visibilitychange', onVisibility);
  window.addEventListener('focus', onFocus);
  const hook = {
    /** Polls now (after a poll under way) and resolves when the banner shows the answer. */
    async refresh() {
      if (inFlight) await inFlight;
      await poll();
    },
    /** When the next poll is due (ms since the epoch), or null while none is planned. */
    get nextPollAt() { return nextPollAt; },
  };
  window.basinBanner = hook;
  if (!document.hidden) poll();

  return function stop() {
    stopped = true;
    clearTimeout(timer);
    controller?.abort();
    document.removeEventListener('visibilitychange', onVisibility);
    window.removeEventListener('focus', onFocus);
    if (window.basinBanner === hook) delete window.basinBanner;
    element.replaceChildren();
  };
}
