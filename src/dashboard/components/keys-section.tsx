// The project's keys: the list (never the keys themselves), a new key (shown once) and revocation.
import { useState } from 'preact/hooks';
import { type ApiError, api, type Ok } from '../api.ts';
import { asApiError, useApi } from '../hooks.ts';
import { useSession } from '../session.ts';
import { ConfirmButton, ShownOnce } from './confirm-button.tsx';
import { ErrorMessage, Pending } from './states.tsx';

type KeyList = Ok<'/v1/projects/{projectId}/keys', 'get'>;
type CreatedKey = Ok<'/v1/projects/{projectId}/keys', 'post'>;
type Kind = CreatedKey['kind'];

const KINDS: { id: Kind; label: string }[] = [
  { id: 'ingest', label: 'ingest (ink_pub_…, for the tracker in public pages)' },
  { id: 'ingest-secret', label: 'ingest-secret (ink_ing_…, server-side ingest)' },
  { id: 'admin', label: 'admin (ink_…, everything in this project)' },
];

const when = (iso: string | null) => (iso ? `${iso.slice(0, 16).replace('T', ' ')} UTC` : '—');

function CreateKey({ onCreated }: { onCreated: (key: CreatedKey) => void }) {
  const { project } = useSession();
  const [kind, setKind] = useState<Kind>('ingest');
  const [name, setName] = useState('');
  const [error, setError] = useState<ApiError>();
  const [busy, setBusy] = useState(false);
  return (
    <form
      class="inline-form"
      onSubmit={(e) => {
        e.preventDefault();
        setBusy(true);
        setError(undefined);
        api<CreatedKey>('POST', `/v1/projects/${project.id}/keys`, { kind, ...(name.trim() ? { name: name.trim() } : {}) })
          .then((created) => {
            setName('');
            onCreated(created);
          })
          .catch((err: unknown) => setError(asApiError(err)))
          .finally(() => setBusy(false));
      }}
    >
      <label>
        Kind
        <select value={kind} onChange={(e) => setKind(e.currentTarget.value as Kind)}>
          {KINDS.map((k) => (
            <option key={k.id} value={k.id}>
              {k.label}
            </option>
          ))}
        </select>
      </label>
      <label>
        Name (optional)
        <input type="text" maxLength={100} value={name} onInput={(e) => setName(e.currentTarget.value)} />
      </label>
      <button type="submit" disabled={busy}>
        Create key
      </button>
      {error ? <ErrorMessage error={error} /> : null}
    </form>
  );
}

export function KeysSection() {
  const { project } = useSession();
  const keys = useApi<KeyList>(`/v1/projects/${project.id}/keys`);
  const [created, setCreated] = useState<CreatedKey | null>(null);
  const [error, setError] = useState<ApiError>();
  const revoke = async (id: string) => {
    setError(undefined);
    try {
      await api('DELETE', `/v1/projects/${project.id}/keys/${id}`);
      keys.reload();
    } catch (err) {
      setError(asApiError(err));
    }
  };
  return (
    <section aria-labelledby="keys-title">
      <h2 id="keys-title">Keys</h2>
      <CreateKey
        onCreated={(k) => {
          setCreated(k);
          keys.reload();
        }}
      />
      {created ? (
        <ShownOnce
          title={`New ${created.kind} key "${created.name}".`}
          note="Copy it now: it is shown this once, and only its hash is stored."
          secret={created.key}
          onDone={() => setCreated(null)}
        />
      ) : null}
      {error ? <ErrorMessage error={error} /> : null}
      <Pending error={keys.error} loading={keys.loading} hasData={keys.data !== undefined} what="the keys" retry={keys.reload} />
      {keys.data ? (
        <div class="table-wrap">
          <table id="keys">
            <caption class="visually-hidden">The project's keys, oldest first</caption>
            <thead>
              <tr>
                <th scope="col">Name</th>
                <th scope="col">Kind</th>
                <th scope="col">Starts with</th>
                <th scope="col">Created</th>
                <th scope="col">Last used</th>
                <th scope="col">State</th>
              </tr>
            </thead>
            <tbody>
              {keys.data.keys.map((k) => (
                <tr key={k.id} data-key-id={k.id}>
                  <td>
                    {k.name}
                    {k.id === project.key.id ? <span class="muted"> (this session)</span> : null}
                  </td>
                  <td>{k.kind}</td>
                  <td>
                    <code>{k.prefix}…</code>
                  </td>
                  <td>{when(k.createdAt)}</td>
                  <td>{when(k.lastUsedAt)}</td>
                  <td>
                    {k.revokedAt ? (
                      `revoked ${when(k.revokedAt)}`
                    ) : (
                      <ConfirmButton
                        label="Revoke"
                        confirm="Yes, revoke"
                        question={k.id === project.key.id ? 'Revoke the key of this session? You will be signed out.' : `Revoke ${k.name}?`}
                        onConfirm={() => revoke(k.id)}
                      />
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
