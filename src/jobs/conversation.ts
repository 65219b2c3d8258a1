// The stored conversation of a job: ModelMessage[] of finished turns, as JSON. Pure.
import type { ModelMessage } from 'ai';

export function parseConversation(text: string): ModelMessage[] {
  try {
    const v = JSON.parse(text) as unknown;
    return Array.isArray(v) ? (v as ModelMessage[]) : [];
  } catch {
    return [];
  }
}

/**
 * The conversation after a turn. The executor returns either the whole conversation (history first)
 * or only this turn's messages; either way the result is history + this turn, with the user's prompt
 * present exactly once.
 */
export function mergeConversation(history: ModelMessage[], prompt: string, result: ModelMessage[]): ModelMessage[] {
  const same = (a: unknown, b: unknown) => JSON.stringify(a) === JSON.stringify(b);
  if (history.length > 0 && result.length >= history.length && history.every((m, i) => same(m, result[i]))) return result;
  const first = result[0];
  const startsWithPrompt =
    first !== undefined &&
    first.role === 'user' &&
    (first.content === prompt || (Array.isArray(first.content) && first.content.some((p) => p.type === 'text' && p.text === prompt)));
  return startsWithPrompt ? [...history, ...result] : [...history, { role: 'user', content: prompt }, ...result];
}
