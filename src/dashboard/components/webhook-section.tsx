// The project's webhook: its URL (set with a new signing secret shown once, or removed) and the delivery log
// with each delivery's state, attempts, next retry and last answer, and redelivery of finished ones.
import { useState } from 'preact/hooks';
import { type ApiError, api, type Ok, query } from '../api.ts';
import { asApiError, useApi } from '../hooks.ts';
import { useSession } from '../session.ts';
import { ConfirmButton, ShownOnce } from './confirm-button.tsx';
import { ErrorMessage, Pending } from './states.tsx';

type Webhook = Ok<'/v1/projects/{projectId}/webhook', 'get'>;
type SetWebhook = Ok<'/v1/projects/{projectId}/webhook', 'put'>;
type Deliveries = Ok<'/v1/projects/{projectId}/webhook/deliveries', 'get'>;
type Delivery = Deliveries['deliveries'][number];
const STATUSES = ['pending', 'delivered', 'failed', 'cancelled'] as const;

const when = (iso: string | null) => (iso ? `${iso.slice(0, 19).replace('T', ' ')} UTC` : '—');

function lastAnswer(d: Delivery): string {
  if (d.lastStatusCode !== null) return `HTTP ${d.lastStatusCode}${d.lastError && d.lastError !== `HTTP ${d.lastStatusCode}` ? `: ${d.lastError}` : ''}`;
  return d.lastError ?? '—';
}

function DeliveryLog({ base }: { base: string }) {
  const [status, setStatus] = useState('');
  const log = useApi<Deliveries>(`${base}/deliveries${query({ status: status || undefined, limit: 50 })}`);
  const [error, setError] = useState<ApiError>();
  const redeliver = async (id: string) => {
    setError(undefined);
    try {
      await api('POST', `${base}/deliveries/${id}/redeliver`);
      log.reload();
    } catch (err) {
      setError(asApiError(err));
    }
  };
  return (
    <section aria-labelledby="deliveries-title">
      <div class="table-head">
        <h3 id="deliveries-title">Deliveries</h3>
        <label>
          State{' '}
          <select value={status} onChange={(e) => setStatus(e.currentTarget.value)}>
            <option value="">all</option>
            {STATUSES.map((s) => (
              <option key={s} value={s}>
                {s}
              </option>
            ))}
          </select>
        </label>
        <button type="button" class="secondary" onClick={log.reload}>
          Refresh
        </button>
      </div>
      {error ? <ErrorMessage error={error} /> : null}
      <Pending error={log.error} loading={log.loading} hasData={log.data !== undefined} what="the deliveries" retry={log.reload} />
      {log.data && log.data.deliveries.length === 0 ? (
        <p class="state empty">No deliveries{status ? ` in state ${status}` : ''} yet: one is queued when a job completes, fails or is archived.</p>
      ) : null}
      {log.data && log.data.deliveries.length > 0 ? (
        <div class="table-wrap">
          <table id="deliveries">
            <caption class="visually-hidden">Webhook deliveries, newest first (the last 50)</caption>
            <thead>
              <tr>
                <th scope="col">Event</th>
                <th scope="col">State</th>
                <th scope="col" class="num">
                  Attempts
                </th>
                <th scope="col">Next attempt</th>
                <th scope="col">Last answer</th>
                <th scope="col">Queued</th>
                <th scope="col">
                  <span class="visually-hidden">Actions</span>
                </th>
              </tr>
            </thead>
            <tbody>
              {log.data.deliveries.map((d) => (
                <tr key={d.id} data-delivery-id={d.id}>
                  <td>{d.eventType}</td>
                  <td>{d.status}</td>
                  <td class="num">{d.attempts}</td>
                  <td>{when(d.nextAttemptAt)}</td>
                  <td>{lastAnswer(d)}</td>
                  <td>{when(d.createdAt)}</td>
                  <td>
                    {d.status === 'pending' ? null : (
                      <button type="button" class="secondary" onClick={() => void redeliver(d.id)}>
                        Redeliver
                      </button>
                    )}
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      ) : null}
    </section>
  );
}

export function WebhookSection() {
  const { project } = useSession();
  const base = `/v1/projects/${project.id}/webhook`;
  const hook = useApi<Webhook>(base);
  const [url, setUrl] = useState('');
  const [secret, setSecret] = useState<string | null>(null);
  const [error, setError] = useState<ApiError>();
  const change = async (run: () => Promise<void>) => {
    setError(undefined);
    try {
      await run();
      hook.reload();
    } catch (err) {
      setError(asApiError(err));
    }
  };
  const current = hook.data?.webhook ?? null;
  return (
    <section aria-labelledby="webhook-title">
      <h2 id="webhook-title">Webhook</h2>
      <Pending error={hook.error} loading={hook.loading} hasData={hook.data !== undefined} what="the webhook" retry={hook.reload} />
      {hook.data ? (
        <p data-testid="webhook-url">
          {current ? (
            <>
              Job notifications (job.completed, job.failed, job.archived) go to <code>{current.url}</code>.{' '}
              <ConfirmButton label="Remove" confirm="Yes, remove" question="Remove the webhook?" onConfirm={() => change(() => api('DELETE', base))} />
            </>
          ) : (
            'No webhook: job notifications are not sent anywhere.'
          )}
        </p>
      ) : null}
      <form
        class="inline-form"
        onSubmit={(e) => {
          e.preventDefault();
          void change(async () => {
            const set = await api<SetWebhook>('PUT', base, { url: url.trim() });
            setSecret(set.secret);
            setUrl('');
          });
        }}
      >
        <label>
          {current ? 'New URL' : 'URL'}
          <input type="url" required placeholder="https://ci.example.com/hooks/inkwell" value={url} onInput={(e) => setUrl(e.currentTarget.value)} />
        </label>
        <button type="submit">{current ? 'Replace webhook' : 'Set webhook'}</button>
      </form>
      {error ? <ErrorMessage error={error} /> : null}
      {secret ? (
        <ShownOnce
          title="Signing secret."
          note="Give it to the receiver to verify the signatures (Standard Webhooks); it is shown this once."
          secret={secret}
          onDone={() => setSecret(null)}
        />
      ) : null}
      <DeliveryLog base={base} />
    </section>
  );
}
