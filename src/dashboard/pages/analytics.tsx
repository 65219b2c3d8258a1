// Analytics: the range picker, the daily chart, the totals and the pages / AI agents / referrers tables.
import { useMemo } from 'preact/hooks';
import { useLocation } from 'preact-iso';
import { type Ok, query } from '../api.ts';
import { VisitorsChart } from '../components/chart.tsx';
import { type Column, DataTable } from '../components/data-table.tsx';
import { RangePicker } from '../components/range-picker.tsx';
import { Pending } from '../components/states.tsx';
import { useApi, usePaged } from '../hooks.ts';
import { apiRange, parseRange } from '../range.ts';
import { useSession } from '../session.ts';

type Series = Ok<'/v1/analytics/{projectId}/series', 'get'>;
type PageRow = Ok<'/v1/analytics/{projectId}/visitors', 'get'>['visitors'][number];
type AgentRow = Ok<'/v1/analytics/{projectId}/agents', 'get'>['agents'][number];
type ReferrerRow = Ok<'/v1/analytics/{projectId}/referrers', 'get'>['referrers'][number];

const PAGE_COLUMNS: Column<PageRow>[] = [
  { key: 'path', label: 'Page', value: (r) => r.path },
  { key: 'human', label: 'Human', numeric: true, value: (r) => r.human },
  { key: 'ai', label: 'AI', numeric: true, value: (r) => r.ai },
  { key: 'total', label: 'Total', numeric: true, value: (r) => r.total },
];
const AGENT_COLUMNS: Column<AgentRow>[] = [
  { key: 'agent', label: 'Agent', value: (r) => r.agent },
  { key: 'class', label: 'Class', value: (r) => (r.category ? `${r.class} (${r.category})` : r.class) },
  { key: 'visitors', label: 'Visitors', numeric: true, value: (r) => r.visitors },
  { key: 'views', label: 'Views', numeric: true, value: (r) => r.views },
  { key: 'requests', label: 'Requests', numeric: true, value: (r) => r.requests },
];
const REFERRER_COLUMNS: Column<ReferrerRow>[] = [
  { key: 'host', label: 'Referrer', value: (r) => r.host },
  { key: 'visitors', label: 'Visitors', numeric: true, value: (r) => r.visitors },
  { key: 'views', label: 'Views', numeric: true, value: (r) => r.views },
];

const nf = new Intl.NumberFormat('en');

function Totals({ totals }: { totals: Series['totals'] }) {
  const items = [
    { id: 'total', label: 'Unique visitors', value: totals.total },
    { id: 'human', label: 'Human', value: totals.human },
    { id: 'ai', label: 'AI', value: totals.ai },
    { id: 'crawlerRequests', label: 'Crawler requests', value: totals.crawlerRequests },
  ];
  return (
    <dl class="totals">
      {items.map((i) => (
        <div key={i.id} class="total">
          <dt>{i.label}</dt>
          <dd data-testid={`total-${i.id}`} data-value={i.value}>
            {nf.format(i.value)}
          </dd>
        </div>
      ))}
    </dl>
  );
}

/** No event was ever stored for the project: how to start sending them. */
function NoEventsYet({ projectId }: { projectId: string }) {
  const tag = `<script defer src="${location.origin}/script.js" data-project="${projectId}" data-key="ink_pub_…"></script>`;
  return (
    <div class="state empty" data-testid="no-events">
      <h2>No events yet</h2>
      <p>Add this script tag to every page of your documentation site (in its &lt;head&gt;):</p>
      <pre>
        <code>{tag}</code>
      </pre>
      <p>
        Replace <code>ink_pub_…</code> with a public ingest key: <code>npx inkwell key create --project {projectId} --kind ingest</code> makes one (or create an
        ingest key under <a href="/settings">Settings</a>). Server-side senders and log imports are in the analytics guide (docs/analytics.md).
      </p>
    </div>
  );
}

export function Analytics() {
  const { project } = useSession();
  const loc = useLocation();
  // Today is read once per URL: a page left open over midnight keeps its days until the next navigation.
  const range = useMemo(() => parseRange(loc.query, Date.now()), [loc.query]);
  const base = `/v1/analytics/${project.id}`;
  const q = query(apiRange(range));
  const series = useApi<Series>(`${base}/series${q}&interval=day`);
  const empty = series.data !== undefined && series.data.totals.total === 0 && series.data.totals.crawlerRequests === 0;
  // Only for an empty range: does the project have any event at all?
  const ever = useApi<Series>(empty ? `${base}/series?interval=month` : null);
  const neverSent = empty && ever.data !== undefined && ever.data.series.length === 0;
  const pages = usePaged<PageRow>(neverSent ? null : `${base}/visitors${q}`, 'visitors');
  const agents = usePaged<AgentRow>(neverSent ? null : `${base}/agents${q}`, 'agents');
  const referrers = usePaged<ReferrerRow>(neverSent ? null : `${base}/referrers${q}`, 'referrers');
  const file = (what: string) => `inkwell-${what}-${range.from}-to-${range.to}`;

  return (
    <section class="analytics">
      <h1>Analytics</h1>
      <RangePicker range={range} base="/analytics" />
      <Pending error={series.error} loading={series.loading} hasData={series.data !== undefined} what="visitors" retry={series.reload} />
      {neverSent ? <NoEventsYet projectId={project.id} /> : null}
      {series.data && !neverSent ? (
        <>
          <Totals totals={series.data.totals} />
          {empty && ever.data ? (
            <p class="state empty">
              No visitors in this range. Try <a href="/analytics?range=90d">the last 90 days</a>.
            </p>
          ) : null}
          <VisitorsChart points={series.data.series} />
          <DataTable id="pages" title="Top pages" columns={PAGE_COLUMNS} empty="No page views in this range." fileName={file('pages')} {...pages} />
          <DataTable
            id="agents"
            title="AI agents and crawlers"
            columns={AGENT_COLUMNS}
            empty="No AI agents or crawlers in this range."
            fileName={file('agents')}
            {...agents}
          />
          <DataTable
            id="referrers"
            title="Referrers"
            columns={REFERRER_COLUMNS}
            empty="No referred page views in this range."
            fileName={file('referrers')}
            {...referrers}
          />
        </>
      ) : null}
    </section>
  );
}
