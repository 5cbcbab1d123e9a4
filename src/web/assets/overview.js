// Draws the overview's chart with uPlot (served by Tolov): money received per day as bars, the number of payments as
// a line on its own axis. The same figures are in the table below the chart.
const box = document.getElementById('activity-chart');
if (box && window.uPlot) {
  const data = JSON.parse(box.dataset.activity);
  const days = data.days.map((day) => Date.parse(`${day}T00:00:00Z`) / 1000);
  // Each day as the page's language names it, in the server's words (uPlot's own are English: 10/27).
  const dayLabels = new Map(days.map((seconds, index) => [seconds, data.dayLabels[index]]));
  const style = getComputedStyle(document.documentElement);
  const accent = style.getPropertyValue('--accent').trim() || '#0b6e4f';
  const ink = style.getPropertyValue('--muted').trim() || '#5c6b80';
  // Numbers as the page's language writes them, described by the server's Intl (data-numbers): the browser's own may
  // lack the language (Chromium writes Uzbek as English, 40,000 and 40K), so it only gives the digits here.
  const writing = JSON.parse(box.dataset.numbers);
  const digits = new Intl.NumberFormat('en-US', { maximumFractionDigits: 2 });
  const marked = (value) => digits.formatToParts(value).map((part) => (part.type === 'group' ? writing.group : part.type === 'decimal' ? writing.decimal : part.value)).join('');
  const grouped = { format: (value) => marked(Math.round(value)) };
  // The axis says "12 mln": short on a phone. Small amounts (an empty month draws 0 to 1 so'm) keep their decimals, or
  // the axis repeats one number.
  const amounts = {
    format: (value) => {
      const [power, template] = writing.compact.findLast(([power]) => Math.abs(value) >= 10 ** power) ?? [0, '{n}'];
      return template.replace('{n}', marked(value / 10 ** power));
    },
  };
  // Each bar is centred on its day: half a day more at each end keeps the first and the last (today's) whole.
  const halfDay = 43_200;
  /** An axis as wide as its longest label (uPlot's recipe), so that no label is cut at the chart's edge. */
  const fitLabels = (u, values, axisIndex, cycle) => {
    const axis = u.axes[axisIndex];
    if (cycle > 1) return axis._size;
    const longest = (values ?? []).reduce((wide, value) => (value.length > wide.length ? value : wide), '');
    u.ctx.font = axis.font[0];
    return Math.ceil(axis.ticks.size + axis.gap + u.ctx.measureText(longest).width / devicePixelRatio) + 4;
  };
  // The box's content width: drawn across its padding, the chart's right axis would be cut.
  const width = () => box.clientWidth - parseFloat(getComputedStyle(box).paddingLeft) - parseFloat(getComputedStyle(box).paddingRight);
  const size = () => ({ width: width(), height: Math.min(280, Math.max(200, Math.round(width() / 3))) });
  const chart = new window.uPlot(
    {
      ...size(),
      tzDate: (seconds) => window.uPlot.tzDate(new Date(seconds * 1000), 'Etc/UTC'),
      legend: { show: true },
      cursor: { drag: { x: false, y: false } },
      scales: { x: { time: true, range: (_u, min, max) => [min - halfDay, max + halfDay] }, uzs: { range: (_u, _min, max) => [0, Math.max(1, max) * 1.1] }, count: { range: (_u, _min, max) => [0, Math.max(1, max) * 1.1] } },
      axes: [
        { stroke: ink, values: (_u, ticks) => ticks.map((tick) => dayLabels.get(tick) ?? '') },
        { scale: 'uzs', stroke: ink, size: fitLabels, values: (_u, ticks) => ticks.map((tick) => amounts.format(tick)) },
        { scale: 'count', side: 1, stroke: ink, size: fitLabels, grid: { show: false }, values: (_u, ticks) => ticks.map((tick) => (Number.isInteger(tick) ? grouped.format(tick) : '')) },
      ],
      series: [
        { label: data.labels.day, value: (_u, v) => (v == null ? '—' : dayLabels.get(v) ?? '') },
        { label: data.labels.volume, scale: 'uzs', fill: `${accent}55`, stroke: accent, paths: window.uPlot.paths.bars({ size: [0.7, 40] }), value: (_u, v) => (v == null ? '—' : grouped.format(v)) },
        { label: data.labels.count, scale: 'count', stroke: ink, width: 2, points: { show: true, size: 5 } },
      ],
    },
    [days, data.volume, data.count],
    box,
  );
  new ResizeObserver(() => chart.setSize(size())).observe(box);
}
