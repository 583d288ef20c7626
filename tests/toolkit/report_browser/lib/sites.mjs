// The pages of traces recorded with --sites (compare, stats): the icicle answers its metric
// menu and a click on a node, and a click on the memory chart chooses the moment whose live
// sites the table beside it lists.
import { pageTraces } from './charts.mjs';

const kReactMs = 5000;

function wantsSites(options) {
  return options.kind === 'compare' || options.kind === 'stats';
}

// Each rect's position and size, to tell whether the icicle was drawn again differently.
async function flameShape(svg) {
  return svg.evaluate((node) => [...node.querySelectorAll('rect')].map((r) => {
    const b = r.getBBox();
    return `${b.x.toFixed(1)},${b.y.toFixed(1)},${b.width.toFixed(1)}`;
  }).join(' '));
}

async function waitShapeChange(page, svg, before) {
  const deadline = Date.now() + kReactMs;
  while (Date.now() < deadline) {
    if ((await flameShape(svg)) !== before) return true;
    await page.waitForTimeout(100);
  }
  return false;
}

async function checkMetricMenu(page, figure, svg, label, failures) {
  const select = figure.locator('select.flame-metric');
  if ((await select.count()) === 0) {
    failures.push(`${label}: no select.flame-metric`);
    return;
  }
  const values = await select.first().evaluate((s) => [...s.options].map((o) => o.value));
  const current = await select.first().inputValue();
  const other = values.find((v) => v !== current);
  if (other === undefined) {
    failures.push(`${label}: select.flame-metric offers one metric only (${values.join(', ')})`);
    return;
  }
  const before = await flameShape(svg);
  await select.first().selectOption(other);
  if (!(await waitShapeChange(page, svg, before))) {
    failures.push(`${label}: choosing the metric "${other}" instead of "${current}" did not redraw the icicle`);
  }
  await select.first().selectOption(current);
}

// Clicks a node below the root that is narrower than the root: zooming must redraw.
async function checkZoom(page, svg, label, failures) {
  const target = await svg.evaluate((node) => {
    const rects = [...node.querySelectorAll('rect')].map((r, index) => ({ index, b: r.getBBox() }));
    const top = Math.min(...rects.map((r) => r.b.y));
    const widest = Math.max(...rects.map((r) => r.b.width));
    const candidates = rects.filter((r) => r.b.y > top && r.b.width < widest * 0.95 && r.b.width > 4);
    candidates.sort((a, b) => b.b.width - a.b.width);
    return candidates.length ? candidates[0].index : -1;
  });
  if (target < 0) return;
  const before = await flameShape(svg);
  await svg.locator('rect').nth(target).click();
  if (!(await waitShapeChange(page, svg, before))) {
    failures.push(`${label}: clicking a node of the icicle did not zoom into it`);
  }
  // Back to the whole icicle for the screenshot: a click on the root, as a person would.
  await svg.locator('rect').first().click().catch(() => {});
}

export async function checkFlame(page, options, failures) {
  if (!wantsSites(options)) return;
  const traces = await pageTraces(page);
  let icicles = 0;
  for (const trace of traces) {
    const figure = page.locator(`figure.chart[data-chart="flame:${trace}"]`);
    if ((await figure.count()) === 0) continue;
    const label = `icicle of ${trace}`;
    const svg = figure.locator(`svg.flame[data-trace="${trace}"]`).first();
    if ((await svg.count()) === 0) {
      failures.push(`${label}: figure flame:${trace} holds no svg.flame[data-trace="${trace}"]`);
      continue;
    }
    icicles += 1;
    await svg.scrollIntoViewIfNeeded();
    const rects = await svg.locator('rect').count();
    console.log(`${label}: ${rects} nodes`);
    if (rects < 2) {
      failures.push(`${label} has ${rects} rect(s): no sites under the root`);
      continue;
    }
    await checkMetricMenu(page, figure, svg, label, failures);
    await checkZoom(page, svg, label, failures);
  }
  if (options.expect.sites && icicles === 0) failures.push('no icicle (svg.flame) on a page with sites');
}

async function tableState(table) {
  return table.evaluate((t) => ({
    event: t.dataset.event ?? null,
    caption: t.caption?.innerText.trim() ?? '',
    rows: [...t.querySelectorAll('tbody tr')].map((r) => r.innerText.replace(/\s+/g, ' ').trim()),
  }));
}

// Clicks the memory chart at a fraction of its plot's width; returns the table afterwards.
async function clickMoment(page, over, table, fraction, before) {
  await over.scrollIntoViewIfNeeded();
  const box = await over.boundingBox();
  await page.mouse.click(box.x + box.width * fraction, box.y + box.height * 0.5);
  const deadline = Date.now() + kReactMs;
  let state = await tableState(table);
  while (state.event === before.event && Date.now() < deadline) {
    await page.waitForTimeout(100);
    state = await tableState(table);
  }
  return state;
}

async function checkOneMoment(page, trace, failures) {
  const label = `live-by-site table of ${trace}`;
  const table = page.locator(`table.live-by-site[data-trace="${trace}"]`).first();
  const over = page.locator(`figure.chart[data-chart="memory:${trace}"] .u-over`).first();
  if ((await over.count()) === 0) {
    failures.push(`${label}: memory:${trace} has no plot area (.u-over) to click`);
    return;
  }
  const initial = await tableState(table);
  if (initial.caption === '') failures.push(`${label} has no caption`);
  const early = await clickMoment(page, over, table, 0.2, initial);
  const late = await clickMoment(page, over, table, 0.8, early);
  console.log(`${label}: data-event ${initial.event} -> ${early.event} -> ${late.event}; ` +
              `rows ${early.rows.length} then ${late.rows.length}; caption "${late.caption}"`);
  if (early.event === null || late.event === null) {
    failures.push(`${label} has no data-event after a click on memory:${trace}`);
  } else if (early.event === late.event) {
    failures.push(`${label}: clicks at 20% and 80% of memory:${trace} both give data-event ${early.event}`);
  }
  if (early.rows.length === 0 || late.rows.length === 0) {
    failures.push(`${label} lists no site at a chosen moment (${early.rows.length} then ${late.rows.length} rows)`);
  } else if (early.rows.join('\n') === late.rows.join('\n')) {
    failures.push(`${label}: the rows are the same at 20% and 80% of the run`);
  }
}

export async function checkMoment(page, options, failures) {
  if (!wantsSites(options)) return;
  const traces = await page.evaluate(() =>
    [...document.querySelectorAll('table.live-by-site[data-trace]')].map((t) => t.dataset.trace));
  if (options.expect.sites && traces.length === 0) {
    failures.push('no table.live-by-site on a page with sites');
  }
  for (const trace of traces) await checkOneMoment(page, trace, failures);
}
