// Live progress on stderr: a one-line spinner with a status text on a terminal wide enough for it, plain lines
// everywhere else (pipes, files, CI logs, a terminal of 0 columns). The spinner line is clipped to the
// terminal's width and drawn with line wrapping off, so it is one line at any size and clearing it is one
// escape sequence: no line counting that a width of 0 (or a resize) could turn into an endless loop.
import type { Writable } from 'node:stream';
import { colorsFor } from './output.ts';

/** Narrower than this, the spinner and its text do not fit: plain lines instead. */
export const MIN_LIVE_COLUMNS = 20;
const FRAMES = ['⠋', '⠙', '⠹', '⠸', '⠼', '⠴', '⠦', '⠧', '⠇', '⠏'];
const FRAME_MS = 100;

export type Outcome = 'ok' | 'fail' | 'warn';

export interface Progress {
  /** Prints a line that stays (above the spinner when there is one). */
  log(line: string): void;
  /** The spinner's text (shown only while live). */
  status(text: string): void;
  /** Stops the spinner and prints the final line, marked with its outcome. */
  end(outcome: Outcome, line: string): void;
  /** Stops the spinner (clearing its line), printing nothing. */
  stop(): void;
}

type Stream = Writable & { isTTY?: boolean; columns?: number; hasColors?: () => boolean };

/** A spinner showing `text` on `stream` when it is a terminal of at least MIN_LIVE_COLUMNS columns (TERM not dumb). */
export function createProgress(initialText: string, stream: Stream = process.stderr, env: NodeJS.ProcessEnv = process.env): Progress {
  const c = colorsFor(stream, env);
  const width = () => stream.columns ?? 0;
  let live = Boolean(stream.isTTY) && env.TERM !== 'dumb' && width() >= MIN_LIVE_COLUMNS;
  let text = initialText;
  let frame = 0;
  let timer: NodeJS.Timeout | null = null;

  const clear = () => stream.write('\r\x1b[K');
  const draw = () => {
    // Checked at every frame: a terminal narrowed below the minimum (to 0, even) ends the spinner.
    if (width() < MIN_LIVE_COLUMNS) {
      stopLive();
      return;
    }
    const line = clip(`${c.cyan(FRAMES[frame++ % FRAMES.length] as string)} `, text, width() - 1);
    // Wrapping off (?7l) while drawing: a character wider than counted is cut at the edge, not wrapped.
    stream.write(`\x1b[?7l\r${line}\x1b[K\x1b[?7h`);
  };
  const stopLive = () => {
    if (!live) return;
    live = false;
    if (timer) clearInterval(timer);
    timer = null;
    clear();
  };
  if (live) {
    draw();
    timer = setInterval(draw, FRAME_MS);
    // The spinner never keeps the process alive on its own.
    timer.unref();
  }

  const mark = (outcome: Outcome) => (outcome === 'ok' ? c.green('✓') : outcome === 'fail' ? c.red('✗') : c.yellow('⚠'));
  return {
    log(line) {
      if (live) clear();
      stream.write(`${line}\n`);
      if (live) draw();
    },
    status(t) {
      text = t;
    },
    end(outcome, line) {
      stopLive();
      stream.write(`${mark(outcome)} ${line}\n`);
    },
    stop: stopLive,
  };
}

/** `prefix` + as much of `text` as fits in `columns` (counted in code points; the prefix is one frame and a space). */
function clip(prefix: string, text: string, columns: number): string {
  const room = Math.max(0, columns - 2);
  const chars = [...text];
  return prefix + (chars.length <= room ? text : `${chars.slice(0, Math.max(0, room - 1)).join('')}…`);
}
