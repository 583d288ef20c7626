// Opens one Strata report.html in headless Chromium (Debian's, driven by playwright-core) and
// checks what a person would see: the page finishes rendering without errors, states a verdict
// naming the allocators, draws every chart, and answers clicks (the icicle's metric, the moment
// chosen on the memory chart, table sorting, CSV downloads); then takes a full-page screenshot.
// The page must work offline: every request that is not file:, data: or blob: is blocked and
// is a failure. Every failure is listed; the exit status is 1 if there is any.
//
//   node check_report.mjs --html DIR/report.html --kind compare|stats|tune|drag|diff
//                         --screenshot OUT.png [--expect JSON|FILE.json]
//
// --expect (optional): {"allocators": [NAME, ...]} names the verdict must contain,
// "charts": [NAME, ...] charts that must be there, "sites": true (a recording with sites:
// icicle and live-by-site table required), "live": true (live runs: live-rss and agreement).
// A missing browser or playwright-core (tests/toolkit/report_browser: npm ci) exits 77, which
// CTest reports as skipped, unless STRATA_REQUIRE_DEPS is set to anything but "" or "0": then 1.
import { existsSync, readFileSync, mkdirSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { checkCharts, checkZoomAndPan } from './lib/charts.mjs';
import { checkFlame, checkMoment } from './lib/sites.mjs';
import { checkSorting, checkCsvButtons, checkKindSpecific } from './lib/tables.mjs';

const kKinds = ['compare', 'stats', 'tune', 'drag', 'diff'];
const kChromium = '/usr/bin/chromium';
// Generous: the machines running the tests are often busy building.
const kReadyTimeoutMs = 60000;
const kSkipCode = 77;

function usage(message) {
  console.error(`check_report: ${message}`);
  console.error('usage: node check_report.mjs --html FILE --kind ' + kKinds.join('|') +
                ' --screenshot PNG [--expect JSON|FILE]');
  process.exit(2);
}

function parseArgs(argv) {
  const options = {};
  for (let i = 0; i < argv.length; i += 2) {
    const key = argv[i];
    const value = argv[i + 1];
    if (!['--html', '--kind', '--screenshot', '--expect'].includes(key)) usage(`unknown argument ${key}`);
    if (value === undefined) usage(`${key} needs a value`);
    options[key.slice(2)] = value;
  }
  for (const needed of ['html', 'kind', 'screenshot']) {
    if (!options[needed]) usage(`--${needed} is required`);
  }
  if (!kKinds.includes(options.kind)) usage(`--kind ${options.kind} is not one of ${kKinds.join(', ')}`);
  options.expect = parseExpect(options.expect);
  return options;
}

function parseExpect(text) {
  if (!text) return {};
  try {
    return JSON.parse(text.trim().startsWith('{') ? text : readFileSync(text, 'utf8'));
  } catch (error) {
    usage(`--expect ${text}: not a JSON object nor a readable JSON file (${error.message})`);
  }
}

// A dependency is missing: skipped for CTest, or a failure where every dependency is required.
function missingDependency(what) {
  const required = process.env.STRATA_REQUIRE_DEPS;
  if (required !== undefined && required !== '' && required !== '0') {
    console.error(`check_report: STRATA_REQUIRE_DEPS=${required}, and a dependency is missing: ${what}`);
    process.exit(1);
  }
  console.log(`strata: skipped, missing dependency: ${what} (scripts/setup_browser.sh installs it)`);
  process.exit(kSkipCode);
}

async function loadPlaywright() {
  if (!existsSync(kChromium)) missingDependency(`${kChromium} (Debian package: chromium)`);
  try {
    return await import('playwright-core');
  } catch (error) {
    missingDependency(`playwright-core (npm ci in tests/toolkit/report_browser): ${error.message}`);
  }
}

// Listens to everything the page says or asks for; what is wrong goes into failures.
function watchPage(page, failures) {
  page.on('console', (message) => {
    if (message.type() === 'error') failures.push(`console error: ${message.text()}`);
  });
  page.on('pageerror', (error) => failures.push(`uncaught error in the page: ${error.message}`));
  page.on('websocket', (socket) => failures.push(`the page opened a WebSocket to ${socket.url()}`));
}

// Every request goes through here: local ones pass, any other is refused and is a failure.
async function blockNetwork(context, failures) {
  await context.route('**/*', (route) => {
    const url = route.request().url();
    if (/^(file|data|blob|about):/.test(url)) return route.continue();
    failures.push(`the page requested ${url}: a report must work offline`);
    return route.abort('blockedbyclient');
  });
}

async function waitReady(page, failures) {
  try {
    await page.waitForFunction(() => window.strataReport && window.strataReport.ready === true,
                               null, { timeout: kReadyTimeoutMs });
    return true;
  } catch {
    const state = await page.evaluate(() => JSON.stringify(window.strataReport ?? null)).catch(() => '?');
    failures.push(`window.strataReport.ready never became true within ${kReadyTimeoutMs / 1000} s ` +
                  `(window.strataReport = ${state}): the page did not finish rendering`);
    return false;
  }
}

// What every kind of page must show: its kind, no rendering errors, a verdict naming the
// expected allocators.
async function checkBasics(page, options, failures) {
  const facts = await page.evaluate(() => ({
    kind: document.documentElement.dataset.kind,
    errors: (window.strataReport && window.strataReport.errors) || null,
    verdict: document.querySelector('#verdict')?.innerText?.trim() ?? null,
    title: document.title,
  }));
  if (facts.kind !== options.kind) {
    failures.push(`<html data-kind> is ${JSON.stringify(facts.kind)}, expected "${options.kind}"`);
  }
  if (!Array.isArray(facts.errors)) {
    failures.push('window.strataReport.errors is not an array');
  } else if (facts.errors.length > 0) {
    failures.push(`window.strataReport.errors is not empty: ${JSON.stringify(facts.errors)}`);
  }
  if (facts.verdict === null) {
    failures.push('no #verdict element');
  } else if (facts.verdict === '') {
    failures.push('#verdict is empty');
  } else {
    for (const name of options.expect.allocators ?? []) {
      if (!facts.verdict.includes(name)) {
        failures.push(`#verdict does not name ${name}: "${facts.verdict.replace(/\s+/g, ' ').slice(0, 300)}"`);
      }
    }
  }
  console.log(`title: ${facts.title}`);
  console.log(`verdict: ${facts.verdict}`);
}

async function run(options) {
  const { chromium } = await loadPlaywright();
  const failures = [];
  const html = resolve(options.html);
  if (!existsSync(html)) {
    console.error(`check_report: ${html} does not exist (was the report made?)`);
    process.exit(1);
  }
  const browser = await chromium.launch({
    executablePath: kChromium,
    args: ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
           '--disable-background-networking', '--disable-component-update', '--disable-sync'],
  });
  try {
    const context = await browser.newContext({ viewport: { width: 1280, height: 900 }, acceptDownloads: true });
    await blockNetwork(context, failures);
    const page = await context.newPage();
    watchPage(page, failures);
    await page.goto(pathToFileURL(html).href, { waitUntil: 'load' });
    if (await waitReady(page, failures)) {
      const steps = [checkBasics, checkCharts, checkZoomAndPan, checkFlame, checkMoment, checkSorting,
                     checkCsvButtons, checkKindSpecific];
      for (const step of steps) {
        try {
          await step(page, options, failures);
        } catch (error) {
          failures.push(`${step.name} stopped: ${error.message.split('\n')[0]}`);
        }
      }
    }
    // The screenshot shows the page as a person first sees it, not as the clicks left it.
    await page.reload({ waitUntil: 'load' });
    await page.waitForFunction(() => window.strataReport && window.strataReport.ready === true,
                               null, { timeout: kReadyTimeoutMs }).catch(() => {});
    mkdirSync(dirname(resolve(options.screenshot)), { recursive: true });
    await page.screenshot({ path: options.screenshot, fullPage: true });
    console.log(`screenshot: ${resolve(options.screenshot)}`);
  } finally {
    await browser.close();
  }
  return failures;
}

const options = parseArgs(process.argv.slice(2));
const failures = await run(options);
if (failures.length > 0) {
  console.error(`FAILED: ${options.html} (${options.kind}), ${failures.length} problem(s):`);
  for (const failure of failures) console.error(`  - ${failure}`);
  process.exit(1);
}
console.log(`passed: ${options.html} (${options.kind})`);
