// A job's page (/jobs/:id): its facts (status, branch, pull request, usage), the archive button, the
// conversation with the follow-up box, the live timeline of its steps and the branch's diff. The job is read
// again whenever the stream reports a change of status, a commit or the pull request; the diff when a turn
// ends (the worker stores it before it ends the turn).
import { useEffect, useState } from 'preact/hooks';
import { useRoute } from 'preact-iso';
import { type ApiError, api } from '../api.ts';
import { ConfirmButton } from '../components/confirm-button.tsx';
import { DiffView } from '../components/job-diff.tsx';
import { Conversation, Timeline } from '../components/job-timeline.tsx';
import { ErrorMessage, Pending } from '../components/states.tsx';
import { asApiError, useApi } from '../hooks.ts';
import { useJobEvents } from '../job-events.ts';
import { type Job, type JobDiff, jobApiPath, usageText, utc } from '../jobs.ts';
import { useSession } from '../session.ts';

function Facts({ job }: { job: Job }) {
  return (
    <dl class="facts">
      <dt>Status</dt>
      <dd data-testid="job-status">
        <span class={`badge ${job.status}`}>{job.status}</span>
        {job.error ? (
          <span>
            {' '}
            {job.error.message} <code>{job.error.code}</code>
          </span>
        ) : null}
      </dd>
      <dt>Branch</dt>
      <dd>
        <code>{job.branch ?? '—'}</code> from <code>{job.source.ref}</code> of <code>{job.source.repository}</code>
      </dd>
      <dt>Pull request</dt>
      <dd data-testid="job-pr">{job.prLink ? <a href={job.prLink}>{job.prLink}</a> : <span class="muted">none yet</span>}</dd>
      <dt>Model</dt>
      <dd>
        <code>{job.model}</code>
      </dd>
      <dt>Usage</dt>
      <dd data-testid="job-usage">{usageText(job.usage)}</dd>
      <dt>Created</dt>
      <dd>{utc(job.createdAt)}</dd>
      <dt>Updated</dt>
      <dd>{utc(job.updatedAt)}</dd>
    </dl>
  );
}

function FollowUp({ path, onSent }: { path: string; onSent: (job: Job) => void }) {
  const [prompt, setPrompt] = useState('');
  const [error, setError] = useState<ApiError>();
  const [busy, setBusy] = useState(false);
  return (
    <form
      class="follow-up"
      noValidate
      onSubmit={(e) => {
        e.preventDefault();
        if (!prompt.trim()) return setError(asApiError(new Error('Write a message for the agent first.')));
        setBusy(true);
        setError(undefined);
        api<Job>('POST', `${path}/message`, { prompt })
          .then((job) => {
            setPrompt('');
            onSent(job);
          })
          .catch((err: unknown) => setError(asApiError(err)))
          .finally(() => setBusy(false));
      }}
    >
      <label class="field">
        Follow-up message
        <textarea rows={3} value={prompt} onInput={(e) => setPrompt(e.currentTarget.value)} />
      </label>
      <button type="submit" disabled={busy}>
        Send
      </button>
      {error ? <ErrorMessage error={error} /> : null}
    </form>
  );
}

export function JobDetail() {
  const { project } = useSession();
  const { params } = useRoute();
  const path = jobApiPath(project.id, params.id ?? '');
  const job = useApi<Job>(path);
  const live = useJobEvents(`${path}/events`);
  const [actionError, setActionError] = useState<ApiError>();
  // A new status, commit or pull request changes the job's facts: read it again.
  const changes = live.events.filter((e) => e.type === 'status' || e.type === 'commit' || e.type === 'pull_request').length;
  const reloadJob = job.reload;
  useEffect(() => {
    if (changes > 0) reloadJob();
  }, [changes, reloadJob]);
  const diff = useApi<JobDiff>(`${path}/diff`);
  const turnsEnded = live.events.filter((e) => e.type === 'status' && e.data.status !== 'active').length;
  const reloadDiff = diff.reload;
  useEffect(() => {
    if (turnsEnded > 0) reloadDiff();
  }, [turnsEnded, reloadDiff]);
  const data = job.data;
  return (
    <div class="job">
      <p>
        <a href="/jobs">← All jobs</a>
      </p>
      <h1>
        Job <code>{params.id}</code>
      </h1>
      <Pending error={job.error} loading={job.loading} hasData={data !== undefined} what="the job" retry={job.reload} />
      {data ? (
        <>
          <Facts job={data} />
          {data.status !== 'archived' ? (
            <p class="actions">
              <ConfirmButton
                label="Archive"
                confirm="Yes, archive"
                question="Archive this job? A run in progress stops, and no message can be sent to it afterwards."
                onConfirm={() => api<Job>('POST', `${path}/archive`).then(job.reload, (err: unknown) => setActionError(asApiError(err)))}
              />
            </p>
          ) : null}
          {actionError ? <ErrorMessage error={actionError} /> : null}
        </>
      ) : null}
      <section aria-labelledby="conversation-title">
        <h2 id="conversation-title">Conversation</h2>
        <Conversation events={live.events} />
        {data && data.status !== 'archived' ? <FollowUp path={path} onSent={job.reload} /> : null}
      </section>
      <section aria-labelledby="timeline-title">
        <h2 id="timeline-title">Timeline</h2>
        <Timeline live={live} />
      </section>
      <section aria-labelledby="diff-title">
        <h2 id="diff-title">Changes</h2>
        <DiffView diff={diff} patchUrl={`${path}/diff?format=patch`} jobId={params.id ?? ''} />
      </section>
    </div>
  );
}
