// A destructive action in two steps, without a modal: the button asks, then "Yes, …" or "Cancel".
import { useState } from 'preact/hooks';

export function ConfirmButton({ label, confirm, question, onConfirm }: { label: string; confirm: string; question: string; onConfirm: () => Promise<void> }) {
  const [asking, setAsking] = useState(false);
  const [busy, setBusy] = useState(false);
  if (!asking)
    return (
      <button type="button" class="danger" onClick={() => setAsking(true)}>
        {label}
      </button>
    );
  return (
    <span class="confirm">
      <span>{question}</span>{' '}
      <button
        type="button"
        class="danger"
        disabled={busy}
        onClick={() => {
          setBusy(true);
          onConfirm().finally(() => {
            setBusy(false);
            setAsking(false);
          });
        }}
      >
        {confirm}
      </button>{' '}
      <button type="button" class="secondary" onClick={() => setAsking(false)}>
        Cancel
      </button>
    </span>
  );
}

/** A secret shown once (a new key, a webhook's signing secret), with what to do with it. */
export function ShownOnce({ title, secret, note, onDone }: { title: string; secret: string; note: string; onDone: () => void }) {
  return (
    <div class="state shown-once" role="status">
      <p>
        <strong>{title}</strong> {note}
      </p>
      <pre>
        <code data-testid="shown-once">{secret}</code>
      </pre>
      <button type="button" class="secondary" onClick={onDone}>
        Done, I saved it
      </button>
    </div>
  );
}
