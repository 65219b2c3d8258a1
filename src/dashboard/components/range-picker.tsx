// The date range: preset links (real URLs, so reload and share keep them) and a custom from/to form.
import { useEffect, useState } from 'preact/hooks';
import { useLocation } from 'preact-iso';
import { type DateRange, PRESETS, rangeQuery } from '../range.ts';

const dayCount = (r: DateRange) => Math.round((Date.parse(`${r.to}T00:00:00Z`) - Date.parse(`${r.from}T00:00:00Z`)) / 86_400_000) + 1;

export function RangePicker({ range, base }: { range: DateRange; base: string }) {
  const { route } = useLocation();
  const [from, setFrom] = useState(range.from);
  const [to, setTo] = useState(range.to);
  useEffect(() => {
    setFrom(range.from);
    setTo(range.to);
  }, [range.from, range.to]);
  return (
    <div class="range">
      <nav aria-label="Date range" class="presets">
        {PRESETS.map((p) => (
          <a key={p.id} href={`${base}?${rangeQuery({ kind: p.id, from: '', to: '' })}`} aria-current={range.kind === p.id ? 'true' : undefined}>
            {p.label}
          </a>
        ))}
      </nav>
      <form
        class="inline-form"
        onSubmit={(e) => {
          e.preventDefault();
          route(`${base}?${rangeQuery({ kind: 'custom', from, to })}`);
        }}
      >
        <label>
          From <input type="date" name="from" value={from} required onInput={(e) => setFrom(e.currentTarget.value)} />
        </label>
        <label>
          To <input type="date" name="to" value={to} min={from} required onInput={(e) => setTo(e.currentTarget.value)} />
        </label>
        <button type="submit" class="secondary" aria-current={range.kind === 'custom' ? 'true' : undefined}>
          Show range
        </button>
      </form>
      <p class="muted statement" data-testid="range-statement">
        {range.from} to {range.to} ({dayCount(range)} {dayCount(range) === 1 ? 'day' : 'days'}, both included). Days are in UTC.
      </p>
      {range.problem ? (
        <p class="state error" role="alert">
          The link's range was not used: {range.problem}. Showing the last 30 days.
        </p>
      ) : null}
    </div>
  );
}
