// Sign-in: paste an admin key, or arrive from a one-time link (`inkwell dashboard`), whose token travels in
// the URL's fragment (#token=…) so that it never reaches a server log or a Referer.
import { useEffect, useState } from 'preact/hooks';
import { type ApiError, api, type SessionInfo } from '../api.ts';
import { ErrorMessage } from '../components/states.tsx';
import { asApiError } from '../hooks.ts';

/** The token of a sign-in link in a location hash (`#token=ikl_…`), or null. */
export function linkToken(hash: string): string | null {
  const m = /(?:^#|&)token=([^&]+)/.exec(hash);
  return m ? decodeURIComponent(m[1] as string) : null;
}

export function SignIn({ onSignedIn }: { onSignedIn: (info: SessionInfo) => Promise<void> }) {
  const [key, setKey] = useState('');
  const [error, setError] = useState<ApiError>();
  const [busy, setBusy] = useState(false);

  const submit = async (body: { key: string } | { link: string }) => {
    setBusy(true);
    setError(undefined);
    try {
      await onSignedIn(await api<SessionInfo>('POST', '/v1/session', body));
    } catch (err) {
      setError(asApiError(err));
    } finally {
      setBusy(false);
    }
  };

  useEffect(() => {
    const token = linkToken(location.hash);
    if (token === null) return;
    // The token leaves the address bar (and the history) before it is used.
    history.replaceState(history.state, '', location.pathname + location.search);
    void submit({ link: token });
  }, []);

  return (
    <main id="main" class="sign-in">
      <h1>Sign in to Inkwell</h1>
      <form
        onSubmit={(e) => {
          e.preventDefault();
          void submit({ key: key.trim() });
        }}
      >
        <label for="key">Admin key</label>
        <input
          id="key"
          name="key"
          type="password"
          autoComplete="off"
          spellcheck={false}
          placeholder="ink_…"
          required
          value={key}
          onInput={(e) => setKey(e.currentTarget.value)}
        />
        <button type="submit" disabled={busy}>
          {busy ? 'Signing in…' : 'Sign in'}
        </button>
      </form>
      {busy ? (
        <p class="state loading" role="status">
          Signing in…
        </p>
      ) : null}
      {error ? <ErrorMessage error={error} /> : null}
      <p class="muted">
        No key at hand? On the server, <code>npx inkwell dashboard --project prj_…</code> prints a link that signs you in once. An admin key comes from{' '}
        <code>npx inkwell key create --project prj_… --kind admin</code>. The key is sent once; the browser keeps only a session cookie.
      </p>
    </main>
  );
}
