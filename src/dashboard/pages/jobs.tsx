// The jobs list: a status filter and the cursor's pages in the URL (newest first), refreshed every few
// seconds while the page is visible, and the form that starts a job.
import { useLocation } from 'preact-iso';
import { query } from '../api.ts';
import { NewJobForm } from '../components/new-job-form.tsx';
import { Empty, Pending } from '../components/states.tsx';
import { useApi, useWhileVisible } from '../hooks.ts';
import { JOB_STATUSES, type JobPage, type JobStatus, jobPagePath, utc } from '../jobs.ts';
import { useSession } from '../session.ts';

/** How often the list asks again while it is shown. */
const REFRESH_MS = 4000;

const listUrl = (status: string | undefined, cursor?: string) => `/jobs${query({ status, cursor })}`;

function StatusFilter({ status }: { status: JobStatus | undefined }) {
  return (
    <nav class="presets" aria-label="Status">
      {[undefined, ...JOB_STATUSES].map((s) => (
        <a key={s ?? 'all'} href={listUrl(s)} aria-current={s === status ? 'true' : undefined}>
          {s ?? 'all'}
        </a>
      ))}
    </nav>
  );
}

function JobTable({ jobs }: { jobs: JobPage['jobs'] }) {
  return (
    <div class="table-wrap">
      <table id="jobs">
        <caption class="visually-hidden">Jobs, newest first</caption>
        <thead>
          <tr>
            <th scope="col">Job</th>
            <th scope="col">Status</th>
            <th scope="col">Branch</th>
            <th scope="col">Pull request</th>
            <th scope="col">Created</th>
          </tr>
        </thead>
        <tbody>
          {jobs.map((j) => (
            <tr key={j.id} data-job-id={j.id} data-status={j.status}>
              <td>
                <a href={jobPagePath(j.id)}>
                  <code>{j.id}</code>
                </a>
              </td>
              <td>
                <span class={`badge ${j.status}`}>{j.status}</span>
                {j.error ? <span class="muted"> {j.error.code}</span> : null}
              </td>
              <td>
                <code>{j.branch ?? '—'}</code>
              </td>
              <td>{j.prLink ? <a href={j.prLink}>{j.prLink.replace(/^https?:\/\//, '')}</a> : '—'}</td>
              <td>{utc(j.createdAt)}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}

export function Jobs() {
  const { project } = useSession();
  const { query: q, route } = useLocation();
  const status = JOB_STATUSES.find((s) => s === q.status);
  const cursor = q.cursor || undefined;
  const page = useApi<JobPage>(`/v2/agent/${project.id}/jobs${query({ status, cursor })}`);
  useWhileVisible(page.reload, REFRESH_MS);
  const jobs = page.data?.jobs;
  return (
    <div class="jobs">
      <h1>Jobs</h1>
      <NewJobForm onCreated={(job) => route(jobPagePath(job.id))} />
      <section aria-labelledby="list-title">
        <div class="table-head">
          <h2 id="list-title">{status ? `${status[0]?.toUpperCase()}${status.slice(1)} jobs` : 'All jobs'}</h2>
          <StatusFilter status={status} />
        </div>
        <Pending error={page.error} loading={page.loading} hasData={jobs !== undefined} what="the jobs" retry={page.reload} />
        {jobs && jobs.length === 0 ? (
          <Empty>
            {cursor ? (
              <p>No older jobs.</p>
            ) : (
              <p>
                No {status ? `${status} ` : ''}jobs yet. Start one with the form above: say what to change in <code>{project.repository}</code>, and the agent
                pushes a branch and opens a pull request.
              </p>
            )}
          </Empty>
        ) : null}
        {jobs && jobs.length > 0 ? <JobTable jobs={jobs} /> : null}
        <p class="table-foot">
          {cursor ? <a href={listUrl(status)}>Newest jobs</a> : null}
          {page.data?.hasMore && page.data.nextCursor ? <a href={listUrl(status, page.data.nextCursor)}>Older jobs</a> : null}
        </p>
      </section>
    </div>
  );
}
