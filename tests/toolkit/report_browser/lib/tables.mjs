// The tables and downloads: a click on a table.data's header sorts its rows (aria-sort says
// which way), every button.csv downloads a CSV file with a header and rows, and what each kind
// shows in its own tables (diff's changed sites, drag's sites).
import { readFileSync } from 'node:fs';

const kMaxColumnsTried = 8;
const kMaxCsvButtons = 40;

// "1,234", "-12.5 KiB", "+3%", "0.25 s": the number a person reads, scaled by its unit.
export function parseFigure(text) {
  const match = /^([+\-−]?)\s*([\d,]*\.?\d+(?:e[+-]?\d+)?)\s*([a-zµ%]*)$/i.exec(text.trim());
  if (!match) return null;
  const scale = { k: 1e3, kb: 1e3, kib: 1024, m: 1e6, mb: 1e6, mib: 1048576, g: 1e9, gb: 1e9,
                  gib: 1073741824, ms: 1e-3, us: 1e-6, 'µs': 1e-6, ns: 1e-9 }[match[3].toLowerCase()] ?? 1;
  const value = Number(match[2].replace(/,/g, '')) * scale;
  return match[1] === '' || match[1] === '+' ? value : -value;
}

async function rowsOf(table) {
  return table.evaluate((t) => [...t.querySelectorAll('tbody tr')].map((row) =>
    [...row.cells].map((cell) => cell.innerText.trim())));
}

function isMonotone(values, direction) {
  for (let i = 1; i < values.length; ++i) {
    if (direction === 'ascending' && values[i] < values[i - 1]) return false;
    if (direction === 'descending' && values[i] > values[i - 1]) return false;
  }
  return true;
}

// Clicks one header twice; returns 'reordered' or 'same' (whether the order changed), or
// 'broken' after a wrong aria-sort. Numbers out of the order aria-sort claims are a failure.
async function sortByHeader(table, th, column, label, failures) {
  const orders = [];
  for (let click = 0; click < 2; ++click) {
    await th.click();
    const direction = await th.getAttribute('aria-sort');
    const rows = await rowsOf(table);
    if (direction !== 'ascending' && direction !== 'descending') {
      failures.push(`${label}: after a click on header "${await th.innerText()}" its aria-sort is ${JSON.stringify(direction)}`);
      return 'broken';
    }
    const figures = rows.map((row) => parseFigure(row[column] ?? ''));
    if (figures.every((f) => f !== null) && !isMonotone(figures, direction)) {
      failures.push(`${label}: column "${await th.innerText()}" is not ${direction} after a click: ${rows.map((r) => r[column]).join(', ')}`);
    }
    orders.push(rows.map((row) => row.join('|')).join('\n'));
  }
  return orders[0] !== orders[1] ? 'reordered' : 'same';
}

export async function checkSorting(page, options, failures) {
  const tables = page.locator('table.data');
  const count = await tables.count();
  let sortable = 0;
  for (let i = 0; i < count; ++i) {
    const table = tables.nth(i);
    const rows = await rowsOf(table);
    const label = `table.data #${i + 1} (${await table.evaluate((t) => t.id || t.caption?.innerText.trim() || t.className)})`;
    if (rows.length < 2 || new Set(rows.map((r) => r.join('|'))).size < 2) continue;
    if (!(await table.isVisible())) continue;
    sortable += 1;
    const headers = table.locator('thead th');
    const columns = Math.min(await headers.count(), kMaxColumnsTried);
    let outcome = 'same';
    for (let c = 0; c < columns && outcome === 'same'; ++c) {
      const th = headers.nth(c);
      const column = await th.evaluate((node) => node.cellIndex);
      outcome = await sortByHeader(table, th, column, label, failures);
    }
    if (outcome === 'same') failures.push(`${label}: clicking its headers never reordered its ${rows.length} rows`);
  }
  if (count === 0) failures.push('the page has no table.data');
  console.log(`tables: ${count} table.data, ${sortable} with rows to sort`);
}

// A small CSV reader: quoted fields may hold commas and doubled quotes.
export function parseCsv(text) {
  const lines = text.split(/\r?\n/).filter((line) => line !== '');
  return lines.map((line) => {
    const fields = [];
    let field = '';
    let quoted = false;
    for (let i = 0; i < line.length; ++i) {
      const ch = line[i];
      if (quoted && ch === '"' && line[i + 1] === '"') { field += '"'; ++i; }
      else if (ch === '"') quoted = !quoted;
      else if (ch === ',' && !quoted) { fields.push(field); field = ''; }
      else field += ch;
    }
    fields.push(field);
    return fields;
  });
}

function checkCsvText(text, label, failures) {
  const rows = parseCsv(text);
  if (rows.length < 2) {
    failures.push(`${label}: the CSV has ${rows.length} line(s), not a header and rows`);
    return;
  }
  const [header, ...body] = rows;
  if (header.some((name) => name.trim() === '' || parseFigure(name) !== null)) {
    failures.push(`${label}: the CSV's first line is not a header of column names: ${header.join(',')}`);
  }
  const ragged = body.findIndex((row) => row.length !== header.length);
  if (ragged >= 0) {
    failures.push(`${label}: CSV row ${ragged + 2} has ${body[ragged].length} fields, the header ${header.length}`);
  }
}

export async function checkCsvButtons(page, options, failures) {
  const buttons = page.locator('button.csv');
  const count = await buttons.count();
  if (count === 0) failures.push('the page has no button.csv');
  let checked = 0;
  for (let i = 0; i < Math.min(count, kMaxCsvButtons); ++i) {
    const button = buttons.nth(i);
    if (!(await button.isVisible())) continue;
    const label = `CSV button of ${await button.evaluate((b) => {
      const owner = b.closest('figure.chart, table, section, [id]');
      return owner?.dataset.chart ?? owner?.id ?? owner?.tagName.toLowerCase() ?? 'the page';
    })}`;
    await button.scrollIntoViewIfNeeded();
    const [download] = await Promise.all([
      page.waitForEvent('download', { timeout: 10000 }).catch(() => null),
      button.click(),
    ]);
    if (download === null) {
      failures.push(`${label}: a click started no download`);
      continue;
    }
    const path = await download.path();
    checkCsvText(readFileSync(path, 'utf8'), `${label} (${download.suggestedFilename()})`, failures);
    checked += 1;
  }
  console.log(`csv: ${checked} of ${count} button.csv downloaded and read`);
}

// diff: a site of #diff-sites whose bytes changed; drag: a table of sites.
export async function checkKindSpecific(page, options, failures) {
  if (options.kind === 'diff') {
    const changed = await page.evaluate(() => {
      const table = document.querySelector('table#diff-sites');
      if (!table) return null;
      const heads = [...table.querySelectorAll('thead th')].map((th) => th.innerText.toLowerCase());
      let column = heads.findIndex((h) => /(change|δ|delta|diff)/.test(h) && /byte/.test(h));
      if (column < 0) column = heads.findIndex((h) => /(change|δ|delta|diff)/.test(h));
      return [...table.querySelectorAll('tr[data-site]')].map((row) =>
        column >= 0 ? row.cells[column]?.innerText.trim() ?? '' :
          [...row.cells].map((c) => c.innerText.trim()).find((t) => /^[+\-−]\s*[\d.,]*[1-9]/.test(t)) ?? '');
    });
    if (changed === null) failures.push('no table#diff-sites');
    else if (changed.length === 0) failures.push('table#diff-sites has no tr[data-site]');
    else if (!changed.some((text) => { const v = parseFigure(text); return v !== null && v !== 0; })) {
      failures.push(`table#diff-sites: no site's change in bytes is non-zero (${changed.slice(0, 8).join(', ')})`);
    }
    console.log(`diff-sites: ${changed?.length ?? 0} rows, changes ${changed?.slice(0, 5).join(', ')}`);
  }
  if (options.kind === 'drag') {
    const siteRows = await page.evaluate(() => [...document.querySelectorAll('table.data')]
      .filter((t) => /site/i.test(t.querySelector('thead')?.innerText ?? '') || /site/i.test(t.caption?.innerText ?? ''))
      .map((t) => t.querySelectorAll('tbody tr').length));
    if (!siteRows.some((n) => n > 0)) failures.push(`no table.data of sites with rows (found ${JSON.stringify(siteRows)})`);
  }
}
