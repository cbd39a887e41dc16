// End-to-end checks of the Basin console in headless Chromium (Debian's chromium driven by
// playwright-core). Run by tests/python/test_console_e2e.py against a fresh `basin serve`, one
// scenario per process:
//
//   node console-e2e.mjs --base http://127.0.0.1:PORT --key KEY --token TOKEN \
//        --scenario console/10-signin.mjs [--screenshots DIR]
//
// A scenario module exports `async function run(t)`; `t` gives it pages signed in through the
// sign-in form, an axe-core accessibility check, the API (for set-up and for checking what the
// page did), and screenshots. Every page fails the scenario on a script error, a failed
// Content-Security-Policy or Trusted Types check, or a console error, so the console is tested
// under the exact policy it ships with.

import { readFileSync, mkdirSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { chromium } from 'playwright-core';

const here = path.dirname(fileURLToPath(import.meta.url));
const require = createRequire(import.meta.url);
const AXE_STYLE_REPORT = /Applying inline style violates|CSP violation: style-src-elem inline/;
const AXE_SOURCE = readFileSync(require.resolve('axe-core/axe.min.js'), 'utf8');

function parseArgs(argv) {
  const args = {};
  for (let i = 0; i < argv.length; i += 1) {
    if (argv[i].startsWith('--')) {
      args[argv[i].slice(2)] = argv[i + 1];
      i += 1;
    }
  }
  return args;
}

export class Failure extends Error {}

export function assert(condition, message) {
  if (!condition) throw new Failure(message);
}

/** Polls `check` (async, truthy when done) until it holds or `timeout` ms pass. */
export async function eventually(check, { timeout = 15000, interval = 100, message = 'condition' } = {}) {
  const deadline = Date.now() + timeout;
  let last;
  for (;;) {
    try {
      last = await check();
      if (last) return last;
    } catch (error) {
      last = error;
    }
    if (Date.now() > deadline) throw new Failure(`timed out waiting for ${message}${last instanceof Error ? `: ${last.message}` : ''}`);
    await new Promise((resolve) => setTimeout(resolve, interval));
  }
}

class Harness {
  constructor(args, browser) {
    this.base = args.base.replace(/\/$/, '');
    this.key = args.key;
    this.token = args.token;
    this.browser = browser;
    this.screenshotDir = args.screenshots || null;
    this.problems = [];
    this.contexts = [];
    this.axeChecked = [];
    this.axeQuietUntil = 0;
  }

  /** Calls the API as the bootstrap owner (API key) or with `token`. */
  async api(method, apiPath, { body, token, key, headers, version } = {}) {
    const auth = token ? { Authorization: `Bearer ${token}` } : { 'svc-open-api-key': key || this.key };
    const response = await fetch(`${this.base}${apiPath}`, {
      method,
      headers: {
        ...auth,
        ...(version ? { 'api-version': String(version) } : {}),
        ...(body !== undefined ? { 'Content-Type': 'application/json' } : {}),
        ...(headers || {}),
      },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await response.text();
    let json = null;
    try { json = text ? JSON.parse(text) : null; } catch { json = text; }
    if (!response.ok) throw new Failure(`${method} ${apiPath}: HTTP ${response.status} ${text.slice(0, 400)}`);
    return json;
  }

  /** A new page (own context: own session storage) watched for errors. `viewport` optional. */
  async newPage({ viewport = { width: 1280, height: 860 } } = {}) {
    const context = await this.browser.newContext({ viewport, acceptDownloads: true });
    this.contexts.push(context);
    const page = await context.newPage();
    page.on('pageerror', (error) => this.problems.push(`page error: ${error.message}`));
    page.on('console', (message) => {
      if (message.type() === 'error') {
        const text = message.text();
        // axe-core adds <style> elements of its own while it runs, which the policy rightly
        // blocks; Chromium may report that a moment after the run ends.
        if (Date.now() < this.axeQuietUntil && AXE_STYLE_REPORT.test(text)) return;
        // A failed API call is logged by Chromium as a resource error; scenarios that provoke
        // one (401 after sign-out, 404 of a deleted item) check the page's own handling.
        if (/Failed to load resource: the server responded with a status of (4\d\d)/.test(text)) return;
        this.problems.push(`console error: ${text}`);
      }
    });
    await page.addInitScript(() => {
      document.addEventListener('securitypolicyviolation', (event) => {
        console.error(`CSP violation: ${event.violatedDirective} ${event.blockedURI}`);
      });
    });
    return page;
  }

  /** Opens the console and signs in through the form (kind: 'key' | 'token'). */
  async signIn(page, { kind = 'key', value = this.key, route = '/projects' } = {}) {
    await page.goto(`${this.base}/#/signin?next=${encodeURIComponent(route)}`);
    await page.getByLabel('Credential').selectOption(kind);
    await page.getByLabel('Value').fill(value);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.waitForFunction(() => !location.hash.startsWith('#/signin'));
    await page.getByRole('button', { name: 'Sign out' }).waitFor();
    return page;
  }

  /** Runs axe-core on the page; fails on serious or critical violations. */
  async axe(page, label) {
    // Evaluated through the DevTools protocol, which the page's CSP does not govern. The
    // blocked <style> elements axe-core adds are not reported as problems during the run and
    // for two seconds after it.
    this.axeQuietUntil = Number.POSITIVE_INFINITY;
    await page.evaluate(AXE_SOURCE);
    const result = await page.evaluate(async () => {
      // eslint-disable-next-line no-undef
      const report = await axe.run(document, { resultTypes: ['violations'] });
      return report.violations.map((v) => ({
        id: v.id, impact: v.impact, help: v.help, nodes: v.nodes.slice(0, 5).map((n) => n.target.join(' ')),
      }));
    });
    this.axeQuietUntil = Date.now() + 2000;
    const bad = result.filter((v) => v.impact === 'serious' || v.impact === 'critical');
    this.axeChecked.push(label);
    assert(bad.length === 0, `axe (${label}): ${JSON.stringify(bad, null, 1)}`);
    return result;
  }

  /**
   * Fails unless the page shows dates in one format: every <time> shows its `datetime` the
   * way the console's one helper (dom.js formatTime) does, in the browser's locale (a day
   * alone for a `YYYY-MM-DD` value, seconds allowed), and no text shows the ISO-like
   * `2026-11-27 08:21` the console once mixed in. Returns how many <time> it checked.
   */
  async sameDateFormat(page, label) {
    const { problems, count } = await page.evaluate(() => {
      const day = { year: 'numeric', month: 'short', day: 'numeric' };
      const clock = { hour: '2-digit', minute: '2-digit' };
      const found = [];
      const times = [...document.querySelectorAll('time[datetime]')];
      for (const el of times) {
        const value = el.getAttribute('datetime');
        const text = el.textContent.trim();
        const dayOnly = /^\d{4}-\d\d-\d\d$/.test(value);
        // A zone-less value (a data file's wall clock) is read, and shown, as local time.
        const date = new Date(dayOnly ? `${value}T00:00:00Z` : value);
        const wanted = dayOnly
          ? [new Intl.DateTimeFormat(undefined, { ...day, timeZone: 'UTC' }).format(date)]
          : [{}, { second: '2-digit' }].map((extra) => new Intl.DateTimeFormat(undefined, { ...day, ...clock, ...extra }).format(date));
        if (!wanted.includes(text)) found.push(`<time datetime="${value}"> shows "${text}", not "${wanted[0]}"`);
      }
      const iso = /\b\d{4}-\d\d-\d\d[ T]\d\d:\d\d\b/.exec(document.body.innerText);
      if (iso) found.push(`the page shows "${iso[0]}"`);
      return { problems: found, count: times.length };
    });
    assert(problems.length === 0, `dates (${label}):\n${problems.join('\n')}`);
    return count;
  }

  /** Saves a screenshot when run with --screenshots. */
  async screenshot(page, name) {
    if (!this.screenshotDir) return;
    mkdirSync(this.screenshotDir, { recursive: true });
    await page.screenshot({ path: path.join(this.screenshotDir, `${name}.png`) });
  }

  /** Fails if any watched page logged a problem. */
  checkProblems() {
    assert(this.problems.length === 0, `the page reported:\n${this.problems.join('\n')}`);
  }
}

async function main() {
  const args = parseArgs(process.argv.slice(2));
  if (!args.base || !args.key || !args.scenario) {
    console.error('usage: console-e2e.mjs --base URL --key KEY --token TOKEN --scenario FILE [--screenshots DIR]');
    process.exit(2);
  }
  const browser = await chromium.launch({
    executablePath: process.env.TEST_BASIN_CHROMIUM || '/usr/bin/chromium',
    headless: true,
    args: ['--no-sandbox', '--disable-gpu', '--no-first-run', '--disable-background-networking'],
  });
  const t = new Harness(args, browser);
  const scenario = await import(pathToFileURL(path.resolve(here, args.scenario)).href);
  const started = Date.now();
  try {
    await scenario.run(t, { assert, eventually });
    t.checkProblems();
    console.log(`ok ${args.scenario} (${Date.now() - started} ms; axe: ${t.axeChecked.join(', ') || 'none'})`);
  } catch (error) {
    console.log(`FAIL ${args.scenario}: ${error.stack || error}`);
    if (t.problems.length) console.log(`page problems:\n${t.problems.join('\n')}`);
    process.exitCode = 1;
  } finally {
    await browser.close();
  }
}

if (process.argv[1] && fileURLToPath(import.meta.url) === path.resolve(process.argv[1])) {
  main().catch((error) => {
    console.error(error);
    process.exit(1);
  });
}
