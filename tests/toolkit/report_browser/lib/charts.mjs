// The charts: every figure.chart must draw something a person can see. A canvas (uPlot) is
// read back pixel by pixel; drawn means coloured pixels, not only the grey axes and grid. An
// svg must hold shapes of non-zero size.

const kChartName = /^(memory|sizes|lifetimes|fragmentation|flame):.+$|^(live-rss|agreement|pareto|drag-curves|diff-curves)$/;

// Pixels of a canvas whose channels differ by more than this are a series' colour, not grey.
const kChroma = 48;
// A chart with fewer coloured pixels than this drew no series a person would notice.
const kMinColoured = 30;
// Curves over the run (time or events on x) must colour at least this share of their canvas's
// columns: a curve of one or two samples is a dot (or its peak marker) a person cannot read.
const kCurveSpan = 0.3;
const kCurveChart = /^(memory:.+|live-rss|drag-curves|diff-curves)$/;

// The charts each kind must have, beside those --expect names.
function requiredCharts(options, traces) {
  const required = [...(options.expect.charts ?? [])];
  const kind = options.kind;
  if (kind === 'compare' || kind === 'stats') {
    for (const trace of traces) required.push(`memory:${trace}`);
  }
  if (options.expect.sites) for (const trace of traces) required.push(`flame:${trace}`);
  if (options.expect.live) required.push('live-rss', 'agreement');
  if (kind === 'tune') required.push('pareto');
  if (kind === 'drag') required.push('drag-curves');
  if (kind === 'diff') required.push('diff-curves');
  return [...new Set(required)];
}

// Runs in the page: what each figure.chart holds, with a canvas's pixels counted.
function describeFigures(chroma) {
  const countPixels = (canvas) => {
    if (canvas.width === 0 || canvas.height === 0) return { painted: 0, coloured: 0, span: 0 };
    const copy = document.createElement('canvas');
    copy.width = canvas.width;
    copy.height = canvas.height;
    const context = copy.getContext('2d');
    context.drawImage(canvas, 0, 0);
    const pixels = context.getImageData(0, 0, copy.width, copy.height).data;
    let painted = 0;
    let coloured = 0;
    const columns = new Uint8Array(copy.width);
    for (let i = 0; i < pixels.length; i += 4) {
      if (pixels[i + 3] === 0) continue;
      painted += 1;
      const high = Math.max(pixels[i], pixels[i + 1], pixels[i + 2]);
      const low = Math.min(pixels[i], pixels[i + 1], pixels[i + 2]);
      if (high - low <= chroma) continue;
      coloured += 1;
      columns[(i / 4) % copy.width] = 1;
    }
    return { painted, coloured, span: columns.reduce((a, b) => a + b, 0) / copy.width };
  };
  const shapes = 'rect, path, circle, ellipse, line, polyline, polygon';
  return [...document.querySelectorAll('figure.chart')].map((figure) => {
    const box = figure.getBoundingClientRect();
    const canvases = [...figure.querySelectorAll('canvas')].map((canvas) => ({
      width: canvas.width, height: canvas.height, ...countPixels(canvas),
    }));
    const svgShapes = [...figure.querySelectorAll('svg')].flatMap((svg) => [...svg.querySelectorAll(shapes)])
      .filter((shape) => {
        const b = shape.getBBox();
        return b.width > 0 || b.height > 0;
      }).length;
    return {
      name: figure.dataset.chart ?? null,
      visible: box.width > 0 && box.height > 0,
      canvases,
      svgShapes,
      csvButton: figure.querySelector('button.csv') !== null,
    };
  });
}

// The traces the page shows, from its memory charts, icicles and live-by-site tables.
export async function pageTraces(page) {
  return page.evaluate(() => {
    const traces = new Set();
    for (const figure of document.querySelectorAll('figure.chart[data-chart^="memory:"]')) {
      traces.add(figure.dataset.chart.slice('memory:'.length));
    }
    for (const node of document.querySelectorAll('svg.flame[data-trace], table.live-by-site[data-trace]')) {
      traces.add(node.dataset.trace);
    }
    return [...traces];
  });
}

function checkFigure(figure, failures) {
  const label = `chart ${JSON.stringify(figure.name)}`;
  if (figure.name === null) {
    failures.push('a figure.chart has no data-chart name');
  } else if (!kChartName.test(figure.name)) {
    failures.push(`${label}: data-chart is not one of the names the page promises`);
  }
  if (!figure.visible) failures.push(`${label} has no size on the page (hidden or collapsed)`);
  const drawn = figure.canvases.filter((c) => c.coloured >= kMinColoured);
  if (figure.canvases.length === 0 && figure.svgShapes === 0) {
    failures.push(`${label} holds neither a canvas nor an svg with shapes`);
  } else if (figure.canvases.length > 0 && drawn.length === 0 && figure.svgShapes === 0) {
    const sizes = figure.canvases.map((c) => `${c.width}x${c.height}: ${c.painted} painted, ${c.coloured} coloured`);
    failures.push(`${label}: its canvas shows no series (pixels ${sizes.join('; ')})`);
  } else if (kCurveChart.test(figure.name ?? '') && drawn.length > 0 &&
             Math.max(...drawn.map((c) => c.span)) < kCurveSpan) {
    const span = Math.round(100 * Math.max(...drawn.map((c) => c.span)));
    failures.push(`${label}: its curves cover ${span}% of the chart's width: too few points to read`);
  }
}

export async function checkCharts(page, options, failures) {
  const figures = await page.evaluate(describeFigures, kChroma);
  const traces = await pageTraces(page);
  if (figures.length === 0) failures.push('the page has no figure.chart at all');
  for (const figure of figures) checkFigure(figure, failures);
  const names = new Set(figures.map((f) => f.name));
  for (const name of requiredCharts(options, traces)) {
    if (!names.has(name)) failures.push(`no chart "${name}" (figure.chart[data-chart="${name}"])`);
  }
  if ((options.kind === 'compare' || options.kind === 'stats') && traces.length === 0) {
    failures.push('no trace shown: no memory:TRACE chart, icicle or live-by-site table');
  }
  const summary = figures.map((f) => {
    const pixels = f.canvases.map((c) => `${c.coloured} px in ${Math.round(100 * c.span)}% of columns`).join('+');
    return `${f.name} (${f.canvases.length ? `coloured ${pixels}` : `${f.svgShapes} shapes`})`;
  });
  console.log(`charts: ${summary.join(', ')}`);
}

// The first memory chart's x range as the page shows it (figure data-x-min / data-x-max).
async function xRange(page, selector) {
  return page.$eval(selector, (f) => [Number(f.dataset.xMin), Number(f.dataset.xMax)]);
}

// Zoom and pan on the first memory:TRACE chart: the wheel narrows the x range around the
// pointer, Shift+drag moves it without picking a moment, a double-click shows it all again.
export async function checkZoomAndPan(page, options, failures) {
  const selector = 'figure.chart[data-chart^="memory:"]';
  if (!(options.kind === 'compare' || options.kind === 'stats') || !(await page.$(selector))) return;
  const over = await page.$(`${selector} .u-over`);
  await over.scrollIntoViewIfNeeded();
  const box = await over.boundingBox();
  const [lo, hi] = await xRange(page, selector);
  if (!(hi > lo)) return void failures.push(`${selector}: no x range on the figure (data-x-min/max)`);
  const moment = async () => page.$eval('table.live-by-site', (t) => t.dataset.event).catch(() => null);
  const before = await moment();
  await page.mouse.move(box.x + box.width / 2, box.y + box.height / 2);
  await page.mouse.wheel(0, -300);
  await page.waitForTimeout(150);
  const zoomed = await xRange(page, selector);
  if (!(zoomed[1] - zoomed[0] < 0.9 * (hi - lo)))
    failures.push(`the wheel did not zoom the memory chart (x range ${lo}-${hi} -> ${zoomed.join('-')})`);
  await page.keyboard.down('Shift');
  await page.mouse.down();
  await page.mouse.move(box.x + box.width / 2 + 150, box.y + box.height / 2, { steps: 5 });
  await page.mouse.up();
  await page.keyboard.up('Shift');
  await page.waitForTimeout(150);
  const panned = await xRange(page, selector);
  if (!(panned[0] < zoomed[0]) || Math.abs((panned[1] - panned[0]) - (zoomed[1] - zoomed[0])) > 1e-6 * (hi - lo) + 1)
    failures.push(`Shift+drag did not pan the memory chart (x range ${zoomed.join('-')} -> ${panned.join('-')})`);
  if ((await moment()) !== before) failures.push('panning the memory chart picked a moment');
  await page.mouse.dblclick(box.x + box.width / 2, box.y + box.height / 2);
  await page.waitForTimeout(150);
  const reset = await xRange(page, selector);
  if (reset[0] !== lo || reset[1] !== hi)
    failures.push(`a double-click did not show the whole memory chart again (${reset.join('-')})`);
  console.log(`zoom and pan: ${lo}-${hi} -> wheel ${zoomed.map(Math.round).join('-')} -> pan ${panned.map(Math.round).join('-')}`);
}
