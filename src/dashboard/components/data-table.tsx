// A table of API rows: sortable by any column, searchable by its first column, paged through the API
// ("Load more" asks for the next page), and downloadable as CSV exactly as shown.
import { useMemo, useState } from 'preact/hooks';
import type { ApiError } from '../api.ts';
import { type CsvColumn, download, toCsv } from '../csv.ts';
import { Pending } from './states.tsx';

export interface Column<Row> extends CsvColumn<Row> {
  key: string;
  numeric?: boolean;
}

export interface TableProps<Row> {
  id: string;
  title: string;
  columns: Column<Row>[];
  rows: Row[];
  loading: boolean;
  error?: ApiError;
  hasMore: boolean;
  loadMore: () => void;
  /** Shown when the API has no rows. */
  empty: string;
  /** The CSV file's name, without `.csv`. */
  fileName: string;
}

type Sort = { key: string; dir: 'ascending' | 'descending' } | null;

const nf = new Intl.NumberFormat('en');
const shown = (v: string | number | null) => (typeof v === 'number' ? nf.format(v) : (v ?? '—'));

function sortRows<Row>(rows: Row[], columns: Column<Row>[], sort: Sort): Row[] {
  const col = sort && columns.find((c) => c.key === sort.key);
  if (!sort || !col) return rows;
  const sign = sort.dir === 'ascending' ? 1 : -1;
  return [...rows].sort((a, b) => {
    const x = col.value(a);
    const y = col.value(b);
    if (typeof x === 'number' && typeof y === 'number') return sign * (x - y);
    return sign * String(x ?? '').localeCompare(String(y ?? ''));
  });
}

export function DataTable<Row>(props: TableProps<Row>) {
  const { id, title, columns, rows, loading, error, hasMore, loadMore, empty, fileName } = props;
  const [search, setSearch] = useState('');
  // null: the API's order (most visitors first).
  const [sort, setSort] = useState<Sort>(null);
  const first = columns[0] as Column<Row>;
  const visible = useMemo(() => {
    const needle = search.trim().toLowerCase();
    const found = needle
      ? rows.filter((r) =>
          String(first.value(r) ?? '')
            .toLowerCase()
            .includes(needle),
        )
      : rows;
    return sortRows(found, columns, sort);
  }, [rows, search, sort, columns, first]);
  const toggle = (c: Column<Row>) =>
    setSort((s) =>
      s?.key === c.key ? { key: c.key, dir: s.dir === 'ascending' ? 'descending' : 'ascending' } : { key: c.key, dir: c.numeric ? 'descending' : 'ascending' },
    );

  return (
    <section class="table-section" aria-labelledby={`${id}-title`}>
      <div class="table-head">
        <h2 id={`${id}-title`}>{title}</h2>
        <label class="search">
          <span class="visually-hidden">
            Search {title.toLowerCase()} by {first.label.toLowerCase()}
          </span>
          <input type="search" placeholder={`Search ${first.label.toLowerCase()}`} value={search} onInput={(e) => setSearch(e.currentTarget.value)} />
        </label>
        <button type="button" class="secondary" disabled={visible.length === 0} onClick={() => download(`${fileName}.csv`, toCsv(columns, visible))}>
          Download CSV
        </button>
      </div>
      <Pending error={error} loading={loading} hasData={rows.length > 0} what={title.toLowerCase()} retry={loadMore} />
      {rows.length === 0 && !loading && !error ? <p class="state empty">{empty}</p> : null}
      {rows.length > 0 ? (
        <div class="table-wrap">
          <table id={id}>
            <thead>
              <tr>
                {columns.map((c) => (
                  <th key={c.key} scope="col" class={c.numeric ? 'num' : undefined} aria-sort={sort?.key === c.key ? sort.dir : undefined}>
                    <button type="button" class="sort" onClick={() => toggle(c)}>
                      {c.label}
                      <span aria-hidden="true">{sort?.key === c.key ? (sort.dir === 'ascending' ? ' ▲' : ' ▼') : ''}</span>
                    </button>
                  </th>
                ))}
              </tr>
            </thead>
            <tbody>
              {visible.map((r) => (
                <tr key={String(first.value(r))}>
                  {columns.map((c) => (
                    <td key={c.key} class={c.numeric ? 'num' : undefined} data-value={c.value(r) ?? ''}>
                      {shown(c.value(r))}
                    </td>
                  ))}
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      ) : null}
      <p class="table-foot muted" aria-live="polite">
        {rows.length > 0 ? `${visible.length} of ${rows.length} loaded rows shown${hasMore ? '; more in the next page' : ''}.` : null}{' '}
        {hasMore ? (
          <button type="button" class="secondary" disabled={loading} onClick={loadMore}>
            {loading ? 'Loading…' : 'Load more'}
          </button>
        ) : null}
      </p>
    </section>
  );
}
