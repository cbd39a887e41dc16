// Renders stored feature-message bodies and titles in headless Chromium and fails if any
// script runs (issue 15; docs/features.md, "Title and body sanitizing").
//
//   node sanitizer-xss.mjs CASES.json   CASES.json: [{"name", "body", "titles": [..]}, ...]
//   node sanitizer-xss.mjs --self-test  proves the check catches unsanitized payloads
//
// tests/python/test_feature_message_sanitizer.py writes CASES.json from what Basin stored and
// runs both. Chromium is the system's (Debian's `chromium`; TEST_BASIN_CHROMIUM overrides the
// path), driven by playwright-core (`npm ci` here). Each case is rendered
//   1. as the static HTML of a page (titles in <h1>, the body in a <div>), and
//   2. inserted by innerHTML into an empty page, then serialized and inserted again
//      (innerHTML = innerHTML: markup that changes meaning on a second parse shows there).
// All cases share one page per mode; when something runs there, the page is split in halves
// until the cases to blame are found, each then rendered on a page of its own. On each page
// every element gets the events an inline handler could listen to, every link is clicked for
// real, and the page is given time for timers and loads. A script "ran" when any of these
// canaries fires (a crashed page counts too: it cannot say that nothing ran):
//   - alert, confirm, prompt or print is called (replaced in every frame before any script),
//     or a dialog opens anyway;
//   - the exposed binding __xss is called;
//   - a Content-Security-Policy-Report-Only header of `script-src 'none'` reports a violation:
//     any inline script, event handler or javascript: URL that runs, whatever it does.
// Nothing leaves the machine: the pages are served from page.route, navigations elsewhere are
// answered 204 No Content (the page stays), every other request is aborted.
// Exit status: 0 when no script ran, 1 when one did (the cases are named), 2 on a usage error.

import { readFileSync } from 'node:fs';
import { chromium } from 'playwright-core';

const ORIGIN = 'https://basin.test';
const CSP = "script-src 'none'; object-src 'none'; report-uri https://basin.test/csp";
const SETTLE_MS = 150;
const FINAL_SETTLE_MS = 500;
const EVENTS = [
  'click', 'dblclick', 'auxclick', 'contextmenu', 'mousedown', 'mouseup', 'mouseover',
  'mouseout', 'mouseenter', 'mouseleave', 'mousemove', 'pointerdown', 'pointerup',
  'pointerover', 'pointerenter', 'pointerleave', 'pointermove', 'focus', 'blur', 'focusin',
  'focusout', 'keydown', 'keyup', 'keypress', 'input', 'change', 'select', 'submit', 'reset',
  'toggle', 'beforetoggle', 'load', 'error', 'abort', 'scroll', 'wheel', 'copy', 'cut', 'paste',
  'drag', 'dragstart', 'drop', 'animationstart', 'animationend', 'transitionend', 'touchstart',
  'begin', 'end', 'repeat', 'invalid', 'search', 'show', 'close', 'cancel',
];

// Runs in every frame before its scripts: the canaries.
const CANARY = `(() => {
  const report = (kind, detail) => { try { window.__xss(kind, String(detail)); } catch (e) {} };
  for (const name of ['alert', 'confirm', 'prompt', 'print']) {
    try {
      Object.defineProperty(window, name, {
        value: (...args) => { report(name, args.join(' ')); return null; },
        writable: false, configurable: false,
      });
    } catch (e) {}
  }
  document.addEventListener('securitypolicyviolation', (event) => {
    report('csp', event.effectiveDirective + ' ' + (event.sample || event.blockedURI));
  }, true);
})();`;

const EMPTY_PAGE = '<!DOCTYPE html><html><head><meta charset="utf-8"><title>cases</title></head><body></body></html>';

class Browser {
  constructor(browser, context, page) {
    this.browser = browser;
    this.context = context;
    this.page = page;
    this.crashed = false;
    this.opening = false;
    this.pages = new Map();
    // Where the canaries report; each render points it at its own list.
    this.hits = [];
    this.serial = 0;
  }

  static async launch() {
    const executablePath = process.env.TEST_BASIN_CHROMIUM || '/usr/bin/chromium';
    const browser = await chromium.launch({
      executablePath,
      headless: true,
      // Root in a container has no user namespace for the sandbox.
      args: ['--no-sandbox', '--disable-gpu', '--no-first-run', '--disable-background-networking'],
    });
    const context = await browser.newContext({ javaScriptEnabled: true });
    const self = new Browser(browser, context, null);
    await context.exposeBinding('__xss', (source, kind, detail) => {
      self.hits.push(`${kind}: ${detail}`);
    });
    await context.addInitScript(CANARY);
    await context.route('**/*', (route) => self.serve(route));
    context.on('page', (popup) => {
      if (popup === self.page || self.opening) return;
      self.hits.push(`popup: ${popup.url()}`);
      popup.close().catch(() => {});
    });
    return self;
  }

  // The page to render on: a new one at first and after a crash.
  async ready() {
    if (this.page && !this.page.isClosed() && !this.crashed) return this.page;
    if (this.page && !this.page.isClosed()) await this.page.close().catch(() => {});
    this.opening = true;
    const page = await this.context.newPage();
    this.opening = false;
    this.crashed = false;
    page.on('crash', () => { this.crashed = true; });
    page.on('dialog', (dialog) => {
      this.hits.push(`dialog ${dialog.type()}: ${dialog.message()}`);
      dialog.dismiss().catch(() => {});
    });
    this.page = page;
    return page;
  }

  async serve(route) {
    const request = route.request();
    const url = request.url();
    if (this.pages.has(url)) {
      await route.fulfill({
        status: 200,
        headers: { 'content-type': 'text/html; charset=utf-8', 'content-security-policy-report-only': CSP },
        body: this.pages.get(url),
      });
    } else if (request.isNavigationRequest()) {
      await route.fulfill({ status: 204, body: '' });
    } else {
      await route.abort();
    }
  }

  // Loads `html` as a page of its own, runs `fill` on it (if any), gives every element its
  // events and clicks every link, waits `settleMs`; returns what the canaries saw.
  async render(html, settleMs, fill) {
    const hits = [];
    this.hits = hits;
    this.serial += 1;
    const url = `${ORIGIN}/page/${this.serial}`;
    this.pages.set(url, html);
    try {
      const page = await this.ready();
      await page.goto(url, { waitUntil: 'load', timeout: 15000 });
      if (fill) hits.push(...(await fill(page)));
      await interact(page);
      await page.waitForTimeout(settleMs);
      // Leave the page so that nothing it started reports into the next render.
      this.pages.set(`${ORIGIN}/blank`, EMPTY_PAGE);
      await page.goto(`${ORIGIN}/blank`, { waitUntil: 'load', timeout: 15000 });
    } catch (error) {
      hits.push(`error: ${error.message.split('\n')[0]}`);
    } finally {
      this.pages.delete(url);
      this.hits = [];
    }
    return hits;
  }

  async close() {
    await this.browser.close();
  }
}

// Gives every element of the page every event, then clicks every link for real.
async function interact(page) {
  await page.evaluate((events) => {
    for (const element of document.body.querySelectorAll('*')) {
      for (const type of events) {
        try {
          const init = { bubbles: true, cancelable: true, composed: true };
          const event = type.startsWith('mouse') || type === 'click' || type === 'dblclick'
            ? new MouseEvent(type, init) : new Event(type, init);
          element.dispatchEvent(event);
        } catch (e) { /* an element that refuses an event is fine */ }
      }
      if (typeof element.focus === 'function') element.focus();
    }
  }, EVENTS);
  // Anything with an href in any namespace (HTML links, SVG and MathML xlink:href).
  const links = await page.$$('[*|href]');
  for (const link of links) {
    try {
      await link.click({ force: true, timeout: 300, noWaitAfter: true });
    } catch (e) { /* hidden, detached or zero-size: the synthetic click above covered it */ }
  }
}

// Static HTML: the cases side by side in one page, each in its own wrapper. A wrapper missing
// afterwards means a case's markup broke out of it: reported, so the cases get pages of their own.
async function renderStatic(browser, cases, settleMs) {
  const sections = cases.map((testCase, i) => {
    const titles = testCase.titles.map((title) => `<h1>${title}</h1>`).join('');
    return `<div data-case="${i}">${titles}<div>${testCase.body}</div></div>`;
  });
  const html = `<!DOCTYPE html>
<html><head><meta charset="utf-8"><title>cases</title></head>
<body>${sections.join('\n')}</body></html>`;
  return browser.render(html, settleMs, async (page) => {
    const wrappers = await page.evaluate(() => document.querySelectorAll('body > div[data-case]').length);
    return cases.length > 1 && wrappers !== cases.length ? [`structure: ${wrappers} of ${cases.length} wrappers`] : [];
  });
}

// innerHTML: each case inserted into its own element of an empty page, then serialized and
// inserted again.
async function renderInner(browser, cases, settleMs) {
  return browser.render(EMPTY_PAGE, settleMs, async (page) => {
    await page.evaluate((items) => {
      for (const item of items) {
        const box = document.createElement('section');
        for (const title of item.titles) {
          const heading = document.createElement('h1');
          heading.innerHTML = title;
          box.appendChild(heading);
        }
        const body = document.createElement('div');
        body.innerHTML = item.body;
        box.appendChild(body);
        const again = document.createElement('div');
        again.innerHTML = body.innerHTML;
        box.appendChild(again);
        document.body.appendChild(box);
      }
    }, cases);
    return [];
  });
}

// Every case whose rendering ran a script, with what ran. All cases are rendered on one page
// per mode; a page where something ran is split in halves until the cases to blame are found,
// each then on a page of its own.
async function check(browser, cases) {
  const found = [];
  // Returns how many findings it added; a group whose halves run nothing on their own (cases
  // acting together, or a late timer) is reported whole, so that nothing that ran is lost.
  const blame = async (group, mode, render) => {
    const hits = await render(browser, group, group.length > 1 ? FINAL_SETTLE_MS : SETTLE_MS);
    if (!hits.length) return 0;
    if (group.length > 1) {
      const half = Math.ceil(group.length / 2);
      const added = await blame(group.slice(0, half), mode, render)
        + await blame(group.slice(half), mode, render);
      if (added) return added;
    }
    found.push({ name: group.map((c) => c.name).join(' + '), mode, hits });
    return 1;
  };
  if (cases.length) {
    await blame(cases, 'static', renderStatic);
    await blame(cases, 'innerHTML', renderInner);
  }
  return found;
}

// Unsanitized payloads (each must be caught) and harmless markup (none may be).
const SELF_TEST_CAUGHT = [
  ['img-onerror', '<img src=x onerror=alert(1)>'],
  ['script', '<script>alert(1)</script>'],
  ['javascript-link', '<a href="javascript:alert(1)">x</a>'],
  ['encoded-javascript-link', '<a href="&#x6A;ava&#9;script&colon;confirm(1)">x</a>'],
  ['leading-control-link', '<a href="&#1; javascript:prompt(1)">x</a>'],
  ['hover-handler', '<b onmouseover=alert(1)>x</b>'],
  ['focus-handler', '<input autofocus onfocus=__xss(1)>'],
  ['toggle-handler', '<details open ontoggle=print()><summary>x</summary></details>'],
  ['svg-onload', '<svg onload=alert(1)>'],
  ['iframe-javascript', '<iframe src="javascript:alert(1)"></iframe>'],
  ['iframe-srcdoc', '<iframe srcdoc="&lt;img src=x onerror=alert(1)&gt;"></iframe>'],
  ['timer', '<img src=x onerror="setTimeout(() => print(), 10)">'],
  ['silent-handler', '<p onclick="document.title = \'changed\'">x</p>'],
  ['namespace-confusion', '<svg></p><style><a id="</style><img src=x onerror=alert(1)>">'],
  ['title-only', '<b>fine</b>', ['<img src=x onerror=alert(1)>']],
];
const SELF_TEST_CLEAN = [
  ['bold', '<b>x</b><br><ul><li><em>y</em></li></ul>'],
  ['https-link', '<a href="https://example.com/" rel="noopener noreferrer">x</a>'],
  ['mailto-link', '<a href="mailto:ops@example.com" rel="noopener noreferrer">x</a>'],
  ['escaped-markup', '&lt;script&gt;alert(1)&lt;/script&gt; &lt;img src=x onerror=alert(1)&gt;'],
  ['plain-title', '', ['AT&amp;T maintenance']],
];

function asCases(list) {
  return list.map(([name, body, titles]) => ({ name, body, titles: titles ?? [] }));
}

async function selfTest(browser) {
  const problems = [];
  const caught = asCases(SELF_TEST_CAUGHT);
  for (const testCase of caught) {
    const found = await check(browser, [testCase]);
    const modes = found.map((f) => `${f.mode} (${f.hits[0]})`).join(', ');
    console.log(`self-test: ${testCase.name}: ${found.length ? `caught in ${modes}` : 'NOT CAUGHT'}`);
    if (!found.length) problems.push(`${testCase.name} was not caught`);
  }
  // All payloads at once: the innerHTML page's split must name the ones that run there.
  const together = await check(browser, caught);
  const named = new Set(together.map((f) => f.name));
  if (named.size < caught.length - 2) {
    problems.push(`rendered together, only ${[...named].join(', ')} were named`);
  }
  const clean = await check(browser, asCases(SELF_TEST_CLEAN));
  for (const f of clean) problems.push(`harmless ${f.name} reported in ${f.mode}: ${f.hits.join('; ')}`);
  return problems;
}

async function main() {
  const argument = process.argv[2];
  if (!argument) {
    console.error('usage: node sanitizer-xss.mjs CASES.json | --self-test');
    process.exit(2);
  }
  const browser = await Browser.launch();
  try {
    if (argument === '--self-test') {
      const problems = await selfTest(browser);
      if (problems.length) {
        console.error(`self-test FAILED:\n  ${problems.join('\n  ')}`);
        process.exitCode = 1;
      } else {
        console.log('self-test passed');
      }
      return;
    }
    const cases = JSON.parse(readFileSync(argument, 'utf8'));
    const found = await check(browser, cases);
    for (const f of found) {
      const testCase = cases.find((c) => c.name === f.name) ?? { body: '(several cases)', titles: [] };
      console.error(`SCRIPT RAN: ${f.name} (${f.mode}): ${f.hits.join('; ')}\n  body: ${JSON.stringify(testCase.body)}\n  titles: ${JSON.stringify(testCase.titles)}`);
    }
    console.log(`${cases.length} cases rendered in Chromium (static HTML and innerHTML): ${found.length ? `${found.length} ran a script` : 'no script ran'}`);
    if (found.length) process.exitCode = 1;
  } finally {
    await browser.close();
  }
}

await main();
