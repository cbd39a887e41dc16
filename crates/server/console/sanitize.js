// The client's HTML sanitizer and the page's only Trusted Types policy, `basin-banner`.
//
// Status message bodies are limited HTML (docs/features.md, "Title and body sanitizing"). The
// server sanitizes them before storage; the console sanitizes them again before they reach the
// page, with the same allow-list, so a bug or a bypass on one side is not enough:
//
//   b strong i em u br p ul ol li   with no attributes;
//   a                               with an https: or mailto: href only, plus
//                                   rel="noopener noreferrer" and target="_blank";
//   script style template iframe object embed noscript svg math textarea title xmp noembed
//   noframes select                 removed with their content;
//   anything else                   removed, its text kept; comments removed.
//
// Under `require-trusted-types-for 'script'` every HTML parser entry point (innerHTML,
// DOMParser.parseFromString, createContextualFragment, <template>) takes TrustedHTML only, so
// the sanitizer cannot even parse its input without a policy. The policy's createHTML IS the
// sanitizer: it gives out nothing but the sanitizer's output. To parse the raw input, the
// sanitizer asks the same policy for that exact string once, synchronously, through a
// module-private pass-through slot, and hands it only to DOMParser: a DOMParser document is
// inert (no script runs, no image or other resource loads, no event handler fires). Nothing
// outside this module can reach the slot, and the slot holds one string for the length of one
// synchronous call.
//
// Before parsing, a lexical pass (following the HTML tokenizer's rules for tags, attributes,
// comments and raw-text elements) removes every attribute but href, comments, and the
// raw-text elements (script, style, ...) with their content. It is not the safety (the tree
// walk below is): it keeps an inert parse of hostile markup from setting off the page's
// Content-Security-Policy, which Chromium checks (and reports) for style and on* attributes
// and <style> elements even in documents that never render.
//
// The clean tree is rebuilt node by node with createElement/createTextNode
// (never copied), then serialized; the serializer escapes text and attribute values, and with
// this allow-list (no foreign content, no raw-text elements) parsing that output again gives
// the same tree.

const ALLOWED = new Set(['b', 'strong', 'i', 'em', 'u', 'br', 'p', 'ul', 'ol', 'li', 'a']);
const DROPPED_WITH_CONTENT = new Set([
  'script', 'style', 'template', 'iframe', 'object', 'embed', 'noscript', 'svg', 'math',
  'textarea', 'title', 'xmp', 'noembed', 'noframes', 'select',
]);
const LINK_SCHEMES = new Set(['https:', 'mailto:']);
const MAX_DEPTH = 256;

let passThrough = null;
let policy = null;
if (window.trustedTypes?.createPolicy) {
  try {
    policy = window.trustedTypes.createPolicy('basin-banner', {
      createHTML(input) {
        if (passThrough !== null && input === passThrough) {
          passThrough = null;
          return input;
        }
        return sanitizeToString(input);
      },
    });
  } catch {
    // The policy exists already (the module was evaluated twice) or is not allowed: without
    // it no HTML is rendered at all (renderHTML falls back to text).
    policy = null;
  }
}

// Elements whose content the tokenizer reads as text up to their end tag: removed with
// everything in them. (svg and math stay for the parser, which knows where foreign content
// ends; the tree walk removes them with their content.)
const SKIPPED_WITH_CONTENT = new Set([
  'script', 'style', 'xmp', 'iframe', 'noembed', 'noframes', 'textarea', 'title', 'noscript',
]);
const SPACE = /[\t\n\f\r ]/;

/** Finds the end of `</name` (case-insensitive) from `from`; the index after its `>`, or -1. */
function skipElement(html, name, from) {
  const lower = html.toLowerCase();
  let at = from;
  for (;;) {
    const found = lower.indexOf(`</${name}`, at);
    if (found < 0) return -1;
    const after = html[found + name.length + 2];
    if (after === undefined || after === '>' || after === '/' || SPACE.test(after)) {
      const close = html.indexOf('>', found);
      return close < 0 ? -1 : close + 1;
    }
    at = found + 1;
  }
}

/**
 * Markup without attributes (but href), comments and raw-text elements: see the top of the
 * file. Text is left as it is (character references included) for the parser.
 */
export function stripMarkup(html) {
  let out = '';
  let i = 0;
  const n = html.length;
  while (i < n) {
    const lt = html.indexOf('<', i);
    if (lt < 0) {
      out += html.slice(i);
      break;
    }
    out += html.slice(i, lt);
    i = lt + 1;
    const c = html[i];
    if (c === '!' || c === '?' || (c === '/' && !/[A-Za-z]/.test(html[i + 1] || ''))) {
      // A comment, a doctype, a processing instruction or a bogus end tag: removed.
      if (html.startsWith('!--', i)) {
        const end = html.indexOf('-->', i + 3);
        i = end < 0 ? n : end + 3;
      } else {
        const end = html.indexOf('>', i);
        i = end < 0 ? n : end + 1;
      }
      continue;
    }
    const closing = c === '/';
    if (closing) i += 1;
    if (!/[A-Za-z]/.test(html[i] || '')) {
      out += '&lt;'; // a "<" that opens no tag is text
      continue;
    }
    let j = i;
    while (j < n && !SPACE.test(html[j]) && html[j] !== '/' && html[j] !== '>') j += 1;
    const name = html.slice(i, j).toLowerCase();
    // Attributes (and the slash of <br/>) up to the tag's ">".
    let href = null;
    let ended = false;
    while (j < n) {
      while (j < n && (SPACE.test(html[j]) || html[j] === '/')) j += 1;
      if (j >= n) break;
      if (html[j] === '>') {
        ended = true;
        j += 1;
        break;
      }
      const start = j;
      if (html[j] === '=') j += 1;
      while (j < n && !SPACE.test(html[j]) && html[j] !== '/' && html[j] !== '>' && html[j] !== '=') j += 1;
      const attribute = html.slice(start, j).toLowerCase();
      let k = j;
      while (k < n && SPACE.test(html[k])) k += 1;
      let value = '';
      if (html[k] === '=') {
        k += 1;
        while (k < n && SPACE.test(html[k])) k += 1;
        const quote = html[k];
        if (quote === '"' || quote === "'") {
          const end = html.indexOf(quote, k + 1);
          if (end < 0) {
            j = n;
            break;
          }
          value = html.slice(k + 1, end);
          k = end + 1;
        } else {
          const begin = k;
          while (k < n && !SPACE.test(html[k]) && html[k] !== '>') k += 1;
          value = html.slice(begin, k);
        }
        j = k;
      }
      if (attribute === 'href' && href === null) href = value;
    }
    i = j;
    if (!ended) break; // a tag cut off by the end of the input is dropped, as browsers do
    if (closing) {
      out += `</${name}>`;
    } else if (SKIPPED_WITH_CONTENT.has(name)) {
      const end = skipElement(html, name, i);
      i = end < 0 ? n : end;
    } else if (name === 'plaintext') {
      out += html.slice(i).replace(/&/g, '&amp;').replace(/</g, '&lt;');
      break;
    } else {
      out += href !== null && name === 'a' ? `<a href="${href.replace(/"/g, '&quot;')}">` : `<${name}>`;
    }
  }
  return out;
}

/** Parses untrusted HTML into an inert document (never attached to the page). */
function parseInert(raw) {
  const html = stripMarkup(raw);
  let source = html;
  if (policy) {
    passThrough = html;
    try {
      source = policy.createHTML(html);
    } finally {
      passThrough = null;
    }
  }
  return new DOMParser().parseFromString(source, 'text/html');
}

/** The href of an allowed link, or null: an absolute https: or mailto: URL as the browser reads it. */
export function safeHref(raw) {
  if (typeof raw !== 'string') return null;
  let url;
  try {
    // No base: a relative URL throws. The URL parser strips leading/trailing C0 controls and
    // spaces and removes tabs and newlines, as a browser does when it follows the link.
    url = new URL(raw);
  } catch {
    return null;
  }
  return LINK_SCHEMES.has(url.protocol.toLowerCase()) ? url.href : null;
}

function cleanChildren(source, target, depth) {
  for (const node of Array.from(source.childNodes)) {
    if (node.nodeType === Node.TEXT_NODE) {
      target.append(document.createTextNode(node.data));
      continue;
    }
    if (node.nodeType !== Node.ELEMENT_NODE) continue; // comments, processing instructions
    const name = node.localName.toLowerCase();
    if (node.namespaceURI !== 'http://www.w3.org/1999/xhtml' || DROPPED_WITH_CONTENT.has(name)) continue;
    if (depth >= MAX_DEPTH) {
      target.append(document.createTextNode(node.textContent || ''));
      continue;
    }
    if (!ALLOWED.has(name)) {
      cleanChildren(node, target, depth + 1);
      continue;
    }
    const clean = document.createElement(name);
    if (name === 'a') {
      const href = safeHref(node.getAttribute('href'));
      if (href) {
        clean.setAttribute('href', href);
        clean.setAttribute('target', '_blank');
      }
      clean.setAttribute('rel', 'noopener noreferrer');
    }
    if (name !== 'br') cleanChildren(node, clean, depth + 1);
    target.append(clean);
  }
}

/** The sanitized tree of `html`: a fragment of this document's nodes, safe to append. */
export function sanitizeFragment(html) {
  const fragment = document.createDocumentFragment();
  if (html === null || html === undefined || html === '') return fragment;
  // Control characters (C0 but tab, line feed and carriage return; DEL; C1) go first, as on
  // the server.
  // eslint-disable-next-line no-control-regex
  const doc = parseInert(String(html).replace(/[\u0000-\u0008\u000B\u000C\u000E-\u001F\u007F-\u009F]/g, ''));
  if (doc.body) cleanChildren(doc.body, fragment, 0);
  return fragment;
}

/** The sanitized HTML of `html` as a string (the policy's createHTML). */
export function sanitizeToString(html) {
  const holder = document.createElement('div');
  holder.append(sanitizeFragment(html));
  return holder.innerHTML;
}

/** Renders `html` sanitized as the content of `element`, through the `basin-banner` policy. */
export function renderHTML(element, html) {
  if (policy) {
    element.innerHTML = policy.createHTML(String(html ?? ''));
    return element;
  }
  try {
    // No Trusted Types in this browser: insert the sanitized nodes themselves.
    element.replaceChildren(sanitizeFragment(html));
  } catch {
    // Trusted Types are enforced but the policy could not be made, so nothing can be parsed:
    // show the text without its tags, as text.
    element.textContent = String(html ?? '').replace(/<[^>]*>?/g, '');
  }
  return element;
}
