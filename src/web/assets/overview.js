// Draws the overview's chart with uPlot (served by Tolov): money received per day as bars, the number of payments as
// a line on its own axis. The same figures are in the table below the chart.
const box = document.getElementById('activity-chart');
if (box && window.uPlot) {
  const data = JSON.parse(box.dataset.activity);
  const days = data.days.map((day) => Date.parse(`${day}T00:00:00Z`) / 1000);
  const style = getComputedStyle(document.documentElement);
  const accent = style.getPropertyValue('--accent').trim() || '#0b6e4f';
  const ink = style.getPropertyValue('--muted').trim() || '#5c6b80';
  const grouped = new Intl.NumberFormat(document.documentElement.lang || 'en', { maximumFractionDigits: 0 });
  // Small amounts (an empty month draws 0 to 1 so'm) need their decimals, or the axis repeats one number.
  const amounts = new Intl.NumberFormat(document.documentElement.lang || 'en', { maximumFractionDigits: 2 });
  const size = () => ({ width: box.clientWidth, height: Math.min(280, Math.max(200, Math.round(box.clientWidth / 3))) });
  const chart = new window.uPlot(
    {
      ...size(),
      tzDate: (seconds) => window.uPlot.tzDate(new Date(seconds * 1000), 'Etc/UTC'),
      legend: { show: true },
      cursor: { drag: { x: false, y: false } },
      scales: { x: { time: true }, uzs: { range: (_u, _min, max) => [0, Math.max(1, max) * 1.1] }, count: { range: (_u, _min, max) => [0, Math.max(1, max) * 1.1] } },
      axes: [
        { stroke: ink },
        { scale: 'uzs', stroke: ink, size: 70, values: (_u, ticks) => ticks.map((tick) => amounts.format(tick)) },
        { scale: 'count', side: 1, stroke: ink, grid: { show: false }, values: (_u, ticks) => ticks.map((tick) => (Number.isInteger(tick) ? grouped.format(tick) : '')) },
      ],
      series: [
        { label: data.labels.day },
        { label: `${data.labels.volume}, UZS`, scale: 'uzs', fill: `${accent}55`, stroke: accent, paths: window.uPlot.paths.bars({ size: [0.7, 40] }), value: (_u, v) => (v == null ? '—' : grouped.format(v)) },
        { label: data.labels.count, scale: 'count', stroke: ink, width: 2, points: { show: true, size: 5 } },
      ],
    },
    [days, data.volume, data.count],
    box,
  );
  new ResizeObserver(() => chart.setSize(size())).observe(box);
}
