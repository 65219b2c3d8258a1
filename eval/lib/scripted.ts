// The scripted model's side of the eval: given the messages of a Chat Completions request, the next step of
// the matching task's reference script. Stateless (runs at any concurrency): the task is the one whose first
// prompt opens the conversation, the turn the latest of its prompts in it, and the step the number of assistant
// messages since that prompt. Past the end of a turn's script (a docs-check repair round), the turn's last
// step (its final text) again. Pure.
import type { EvalTask, ScriptStep } from './types.ts';

interface ChatMessage {
  role?: unknown;
  content?: unknown;
}

function textOf(m: ChatMessage): string {
  if (typeof m.content === 'string') return m.content;
  if (Array.isArray(m.content)) return m.content.map((p) => (p && typeof p === 'object' && typeof p.text === 'string' ? p.text : '')).join('');
  return '';
}

/**
 * A responder for `tasks`: `scripts` replaces a task's reference script (one array per turn) to try a wrong
 * solution. An unknown conversation gets a text reply saying so (the run then changes nothing and fails).
 */
export function scriptedResponder(tasks: readonly EvalTask[], scripts: Record<string, ScriptStep[][]> = {}): (messages: unknown) => ScriptStep {
  const byPrompt = new Map(tasks.map((t) => [t.turns[0]!.prompt, t]));
  return (raw) => {
    const messages: ChatMessage[] = Array.isArray(raw) ? raw : [];
    const users = messages.map((m, i) => ({ m, i })).filter(({ m }) => m.role === 'user');
    const task = users.length > 0 ? byPrompt.get(textOf(users[0]!.m)) : undefined;
    if (!task) return { text: 'Unknown request\n\nThe scripted model has no task for this conversation.' };
    const turnScripts = scripts[task.name] ?? task.turns.map((t) => t.reference);
    let turn = 0;
    let start = 0;
    for (const { m, i } of users) {
      const k = task.turns.findIndex((t) => t.prompt === textOf(m));
      if (k >= 0) {
        turn = k;
        start = i;
      }
    }
    const step = messages.slice(start).filter((m) => m.role === 'assistant').length;
    const script = turnScripts[turn] ?? [];
    return script[Math.min(step, script.length - 1)] ?? { text: 'Nothing to do\n\nThe scripted model has no steps for this turn.' };
  };
}
