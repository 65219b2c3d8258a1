// Loading, empty and error states: each says what is going on and, where it can, what to do.
import type { ComponentChildren } from 'preact';
import type { ApiError } from '../api.ts';

export function Loading({ what }: { what: string }) {
  return (
    <p class="state loading" role="status" aria-live="polite">
      Loading {what}…
    </p>
  );
}

export function Empty({ children }: { children: ComponentChildren }) {
  return <div class="state empty">{children}</div>;
}

/** An API error with its message, its details and its code (for a bug report or the docs). */
export function ErrorMessage({ error, retry }: { error: ApiError; retry?: () => void }) {
  return (
    <div class="state error" role="alert">
      <p>
        {error.message}
        {error.retryAfterSeconds !== null ? ` Try again in ${error.retryAfterSeconds} s.` : ''} {error.code ? <code class="code">{error.code}</code> : null}
      </p>
      {error.details.length > 0 ? (
        <ul>
          {error.details.map((d) => (
            <li key={`${d.path}:${d.message}`}>{d.path ? `${d.path}: ${d.message}` : d.message}</li>
          ))}
        </ul>
      ) : null}
      {retry ? (
        <button type="button" onClick={retry}>
          Try again
        </button>
      ) : null}
    </div>
  );
}

/** What a load shows until its data is there: the error (with a retry), or "Loading …". */
export function Pending({ error, loading, hasData, what, retry }: { error?: ApiError; loading: boolean; hasData: boolean; what: string; retry: () => void }) {
  if (error) return <ErrorMessage error={error} retry={retry} />;
  if (loading && !hasData) return <Loading what={what} />;
  return null;
}
