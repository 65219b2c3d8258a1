// The form that starts a job: prompt, model, branch and draft. What the browser can check is checked before
// sending (and said next to the field); everything else is the API's answer, shown with its message.
import { useState } from 'preact/hooks';
import { ApiError, api } from '../api.ts';
import { asApiError } from '../hooks.ts';
import type { Job } from '../jobs.ts';
import { useSession } from '../session.ts';
import { ErrorMessage } from './states.tsx';

const MODEL_PATTERN = /^[a-z0-9-]+\/\S+$/;

interface Fields {
  prompt: string;
  model: string;
  branch: string;
  draft: boolean;
}

/** The request body, or the first field the API would refuse (as the API says it). */
function jobRequest(f: Fields): { body: Record<string, unknown> } | { error: ApiError } {
  const bad = (path: string, message: string) => ({ error: new ApiError(400, 'invalid_request', message, [{ path, message }]) });
  if (!f.prompt.trim()) return bad('prompt', 'Write a prompt: what should the agent change?');
  if (f.prompt.length > 100_000) return bad('prompt', 'The prompt is longer than 100,000 characters.');
  const model = f.model.trim();
  if (model && !MODEL_PATTERN.test(model)) return bad('model', 'A model is <provider>/<model>, for example anthropic/claude-sonnet-4-5.');
  const branch = f.branch.trim();
  return { body: { prompt: f.prompt, ...(model ? { model } : {}), ...(branch ? { branch } : {}), ...(f.draft ? { draft: true } : {}) } };
}

export function NewJobForm({ onCreated }: { onCreated: (job: Job) => void }) {
  const { project } = useSession();
  const [fields, setFields] = useState<Fields>({ prompt: '', model: '', branch: '', draft: false });
  const [error, setError] = useState<ApiError>();
  const [busy, setBusy] = useState(false);
  const set = (patch: Partial<Fields>) => setFields((f) => ({ ...f, ...patch }));
  const invalid = (field: string) => (error?.details.some((d) => d.path === field || d.path === `/${field}`) ? true : undefined);
  return (
    <section aria-labelledby="new-job-title" class="new-job">
      <h2 id="new-job-title">New job</h2>
      <form
        noValidate
        onSubmit={(e) => {
          e.preventDefault();
          const req = jobRequest(fields);
          if ('error' in req) return setError(req.error);
          setBusy(true);
          setError(undefined);
          api<Job>('POST', `/v2/agent/${project.id}/job`, req.body)
            .then(onCreated)
            .catch((err: unknown) => setError(asApiError(err)))
            .finally(() => setBusy(false));
        }}
      >
        <label class="field">
          Prompt
          <textarea rows={4} value={fields.prompt} aria-invalid={invalid('prompt')} onInput={(e) => set({ prompt: e.currentTarget.value })} />
        </label>
        <div class="inline-form">
          <label>
            Model (optional)
            <input
              type="text"
              placeholder={project.model ?? 'the server default'}
              value={fields.model}
              aria-invalid={invalid('model')}
              onInput={(e) => set({ model: e.currentTarget.value })}
            />
          </label>
          <label>
            Branch (optional)
            <input
              type="text"
              placeholder="inkwell/…"
              value={fields.branch}
              aria-invalid={invalid('branch')}
              onInput={(e) => set({ branch: e.currentTarget.value })}
            />
          </label>
          <label class="toggle">
            <input type="checkbox" checked={fields.draft} onChange={(e) => set({ draft: e.currentTarget.checked })} />
            Draft pull request
          </label>
          <button type="submit" disabled={busy}>
            Start job
          </button>
        </div>
        {error ? <ErrorMessage error={error} /> : null}
      </form>
    </section>
  );
}
