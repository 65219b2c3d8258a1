// The daily visitors chart (uPlot on a canvas): human and AI visitors, crawler requests on their own axis
// (off by default). The plotted numbers are also on the figure as data-series, for tests and scripts.
import { useEffect, useMemo, useRef, useState } from 'preact/hooks';
import uPlot from 'uplot';

export interface SeriesPoint {
  date: string;
  human: number;
  ai: number;
  total: number;
  crawlerRequests: number;
}

const css = (name: string) => getComputedStyle(document.documentElement).getPropertyValue(name).trim();

function options(width: number, showCrawlers: boolean): uPlot.Options {
  const fg = css('--muted');
  const grid = css('--border');
  const axis = { stroke: fg, grid: { stroke: grid, width: 1 }, ticks: { stroke: grid, width: 1 } };
  return {
    width,
    height: 260,
    tzDate: (ts) => uPlot.tzDate(new Date(ts * 1000), 'Etc/UTC'),
    legend: { show: false },
    scales: { x: { time: true }, visitors: { range: (_u, _min, max) => [0, Math.max(1, max)] }, requests: { range: (_u, _min, max) => [0, Math.max(1, max)] } },
    series: [
      {},
      { label: 'Human visitors', scale: 'visitors', stroke: css('--chart-human'), width: 2, points: { show: true, size: 5 } },
      { label: 'AI visitors', scale: 'visitors', stroke: css('--chart-ai'), width: 2, points: { show: true, size: 5 } },
      { label: 'Crawler requests', scale: 'requests', stroke: css('--chart-crawler'), width: 2, dash: [6, 4], show: showCrawlers },
    ],
    axes: [
      axis,
      { ...axis, scale: 'visitors', label: 'visitors' },
      { ...axis, scale: 'requests', side: 1, label: 'crawler requests', show: showCrawlers, grid: { show: false } },
    ],
  };
}

/** Re-renders when the system switches between light and dark (the canvas takes its colours from CSS). */
function useColorScheme(): boolean {
  const query = useMemo(() => matchMedia('(prefers-color-scheme: dark)'), []);
  const [dark, setDark] = useState(query.matches);
  useEffect(() => {
    const onChange = () => setDark(query.matches);
    query.addEventListener('change', onChange);
    return () => query.removeEventListener('change', onChange);
  }, [query]);
  return dark;
}

export function VisitorsChart({ points }: { points: SeriesPoint[] }) {
  const box = useRef<HTMLDivElement>(null);
  const [showCrawlers, setShowCrawlers] = useState(false);
  const dark = useColorScheme();
  const data = useMemo<uPlot.AlignedData>(
    () => [
      points.map((p) => Date.parse(`${p.date}T00:00:00Z`) / 1000),
      points.map((p) => p.human),
      points.map((p) => p.ai),
      points.map((p) => p.crawlerRequests),
    ],
    [points],
  );
  useEffect(() => {
    const el = box.current as HTMLDivElement;
    const plot = new uPlot(options(el.clientWidth, showCrawlers), data, el);
    const resize = new ResizeObserver(() => plot.setSize({ width: el.clientWidth, height: 260 }));
    resize.observe(el);
    return () => {
      resize.disconnect();
      plot.destroy();
    };
  }, [data, showCrawlers, dark]);
  const exposed = JSON.stringify({
    dates: points.map((p) => p.date),
    human: points.map((p) => p.human),
    ai: points.map((p) => p.ai),
    crawlerRequests: points.map((p) => p.crawlerRequests),
  });
  return (
    <figure class="chart" data-series={exposed} data-crawlers-shown={String(showCrawlers)}>
      <figcaption>
        <span class="swatch human" aria-hidden="true" /> Human visitors <span class="swatch ai" aria-hidden="true" /> AI visitors
        <label class="toggle">
          <input type="checkbox" checked={showCrawlers} onChange={(e) => setShowCrawlers(e.currentTarget.checked)} />
          <span class="swatch crawler" aria-hidden="true" /> Crawler requests
        </label>
      </figcaption>
      <div
        ref={box}
        class="plot"
        role="img"
        aria-label={`Unique human and AI visitors per UTC day, ${points.length} days; the totals and tables below give the numbers`}
      />
    </figure>
  );
}
