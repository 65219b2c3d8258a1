// Shorthands for reference scripts: what a model would send, one reply per entry.
import type { ScriptStep, ScriptToolCall } from '../lib/types.ts';

export const read = (path: string): ScriptToolCall => ({ name: 'read_file', args: { path } });
export const write = (path: string, content: string): ScriptToolCall => ({ name: 'write_file', args: { path, content } });
export const edit = (path: string, old_string: string, new_string: string): ScriptToolCall => ({ name: 'edit_file', args: { path, old_string, new_string } });
export const move = (from: string, to: string): ScriptToolCall => ({ name: 'move_file', args: { from, to } });
export const search = (query: string, path?: string): ScriptToolCall => ({ name: 'search', args: path ? { query, path } : { query } });
export const check = (): ScriptToolCall => ({ name: 'check', args: {} });

/** One model reply calling these tools (in parallel, as models do). */
export const calls = (...toolCalls: ScriptToolCall[]): ScriptStep => ({ toolCalls });

/** The final reply: the pull request's title line, a blank line, then the body. */
export const done = (title: string, body: string): ScriptStep => ({ text: `${title}\n\n${body}` });
