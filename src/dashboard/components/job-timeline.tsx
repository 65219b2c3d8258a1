// A job's conversation (each prompt and the agent's replies) and its timeline of steps (status changes, tool
// calls and their results, commits, the pull request, errors), both from the job's live events.
import type { Connection, LiveEvents } from '../job-events.ts';
import type { JobEvent } from '../jobs.ts';
import { scopeText } from '../scope-text.ts';
import { ErrorMessage } from './states.tsx';

const str = (v: unknown) => (typeof v === 'string' ? v : v === undefined || v === null ? '' : JSON.stringify(v));
const clip = (s: string, max = 240) => (s.length > max ? `${s.slice(0, max - 1)}…` : s);
const time = (iso: string) => iso.slice(11, 19);

export function Conversation({ events }: { events: JobEvent[] }) {
  const messages = events.filter((e) => e.type === 'user_message' || e.type === 'assistant_message');
  if (messages.length === 0) return <p class="muted">No messages yet.</p>;
  return (
    <ol class="conversation">
      {messages.map((e) => (
        <li key={e.seq} class={e.type === 'user_message' ? 'from-user' : 'from-agent'} data-seq={e.seq}>
          <p class="who-said">
            {e.type === 'user_message' ? `Prompt, turn ${str(e.data.turn)}` : 'Agent'} <span class="muted">{time(e.at)} UTC</span>
          </p>
          <p class="said">{str(e.type === 'user_message' ? e.data.prompt : e.data.text)}</p>
        </li>
      ))}
    </ol>
  );
}

function statusText(d: JobEvent['data']): string {
  const error = d.error as { message?: string } | null | undefined;
  if (d.phase === 'running') return `running turn ${str(d.turn)} (attempt ${str(d.attempt)})`;
  return [str(d.status), d.reason ? `(${str(d.reason)})` : '', error?.message ? `: ${error.message}` : ''].filter(Boolean).join(' ');
}

function Step({ e }: { e: JobEvent }) {
  const d = e.data;
  switch (e.type) {
    case 'status':
      return <>Status {statusText(d)}</>;
    case 'tool_call':
      return (
        <>
          Tool call <code>{str(d.tool)}</code> <code class="args">{clip(str(d.args))}</code>
        </>
      );
    case 'tool_result':
      return (
        <>
          {d.ok ? 'Result' : 'Failed'} <code>{str(d.tool)}</code>: {clip(str(d.summary))}
        </>
      );
    case 'check':
      return (
        <>
          Docs checks {d.status === 'passed' ? 'passed' : `found ${str(d.findingCount)} problems${d.final ? '' : ', sent back to the agent'}`} (round{' '}
          {str(d.round)})
        </>
      );
    case 'scope':
      return <>{scopeText(d)}</>;
    case 'commit':
      return (
        <>
          Commit <code>{str(d.sha).slice(0, 10)}</code> on <code>{str(d.branch)}</code>: {str(d.message)}
        </>
      );
    case 'pull_request':
      return (
        <>
          Pull request <a href={str(d.url)}>#{str(d.number)}</a> from <code>{str(d.branch)}</code> into <code>{str(d.base)}</code>
        </>
      );
    case 'error':
      return (
        <>
          Error <code>{str(d.code)}</code>: {str(d.message)}
        </>
      );
    default:
      return <>{e.type}</>;
  }
}

const CONNECTION: Record<Connection, string> = {
  connecting: 'Connecting to the live stream…',
  live: 'Live: new steps appear as they happen.',
  reconnecting: 'Reconnecting… steps resume where they left off.',
  closed: 'Disconnected from the live stream.',
};

export function Timeline({ live }: { live: LiveEvents }) {
  const steps = live.events.filter((e) => e.type !== 'user_message' && e.type !== 'assistant_message');
  return (
    <>
      <p class={`connection ${live.connection}`} role="status" data-connection={live.connection}>
        {CONNECTION[live.connection]}{' '}
        {live.connection === 'closed' ? (
          <button type="button" class="secondary" onClick={live.reconnect}>
            Reconnect
          </button>
        ) : null}
      </p>
      {live.error ? <ErrorMessage error={live.error} /> : null}
      {steps.length === 0 ? (
        <p class="muted">No steps yet.</p>
      ) : (
        <div role="log" aria-label="Steps">
          <ol class="timeline" id="timeline">
            {steps.map((e) => (
              <li key={e.seq} class={`step ${e.type}`} data-seq={e.seq} data-type={e.type}>
                <span class="muted">{time(e.at)}</span> <Step e={e} />
              </li>
            ))}
          </ol>
        </div>
      )}
    </>
  );
}
