// pino: JSON lines, or pretty on a terminal. Keys, tokens and Authorization are redacted.
import { createRequire } from 'node:module';
import type { DestinationStream, Logger, LoggerOptions, default as Pino } from 'pino';
import type { Config } from '../config.ts';

// pino is required when a logger is made, not when this module loads: the CLI imports this module for
// scrubSecrets and makes its logger lazily (createLazyLogger), so a command that logs nothing never loads
// pino's ~30 modules (about 15 ms of `inkwell project list`, bench/cli-startup.ts). pino is CommonJS.
const loadPino = (): typeof Pino => createRequire(import.meta.url)('pino') as typeof Pino;

export const REDACT_PATHS = [
  'req.headers.authorization',
  'req.headers.cookie',
  'req.headers["x-api-key"]',
  'res.headers["set-cookie"]',
  'headers.authorization',
  'headers.cookie',
  'authorization',
  '*.authorization',
  'key',
  '*.key',
  'apiKey',
  '*.apiKey',
  'token',
  '*.token',
  'secret',
  '*.secret',
  'password',
  '*.password',
];

/** Removes secrets that may sit inside free text (error messages from libraries, URLs). */
export function scrubSecrets(text: string): string {
  return text
    .replace(/ink_pub_[0-9A-Za-z]{32}/g, 'ink_pub_[redacted]')
    .replace(/ink_ing_[0-9A-Za-z]{40}/g, 'ink_ing_[redacted]')
    .replace(/ink_[0-9A-Za-z]{40}/g, 'ink_[redacted]')
    .replace(/(Bearer\s+)[^\s"']+/gi, '$1[redacted]')
    .replace(/\b(gh[pousr]_[0-9A-Za-z]{20,}|github_pat_[0-9A-Za-z_]{20,}|glpat-[0-9A-Za-z_-]{20,}|sk-[0-9A-Za-z_-]{20,})\b/g, '[redacted]')
    .replace(/(\/\/)([^/@\s:]+):([^/@\s]+)@/g, '$1$2:[redacted]@');
}

/**
 * A logger for the process. `destination` defaults to stdout; the CLI passes stderr so that `--json`
 * output stays one object, and tests pass a stream to read what was logged.
 */
export function createLogger(config: Pick<Config, 'logLevel' | 'logPretty'>, destination?: DestinationStream | 'stderr'): Logger {
  const pino = loadPino();
  const options: LoggerOptions = {
    level: config.logLevel,
    redact: { paths: REDACT_PATHS, censor: '[redacted]' },
    hooks: {
      // Free-text messages (often built from library errors) are scrubbed too.
      logMethod(args, method) {
        method.apply(this, args.map((a) => (typeof a === 'string' ? scrubSecrets(a) : a)) as Parameters<typeof method>);
      },
    },
    formatters: {
      log(obj) {
        if (obj.err instanceof Error) {
          const e = obj.err;
          return { ...obj, err: { type: e.name, message: scrubSecrets(e.message), stack: e.stack ? scrubSecrets(e.stack) : undefined } };
        }
        return obj;
      },
    },
  };
  if (destination === 'stderr') return pino(options, pino.destination({ dest: 2, sync: true }));
  if (destination) return pino(options, destination);
  if (config.logPretty) {
    return pino({ ...options, transport: { target: 'pino-pretty', options: { colorize: true, translateTime: 'SYS:HH:MM:ss.l' } } });
  }
  // Synchronous writes: lines keep their order and none is lost when the process exits after 'stopped'.
  return pino(options, pino.destination({ dest: 1, sync: true }));
}

/**
 * A logger that makes the real one (`make`) on first use: every property read, call and write goes to it.
 * For the CLI, whose commands mostly log nothing.
 */
export function createLazyLogger(make: () => Logger): Logger {
  let real: Logger | undefined;
  const target = (): Logger => {
    real ??= make();
    return real;
  };
  return new Proxy({} as Logger, {
    get(_, prop) {
      const logger = target();
      const value: unknown = Reflect.get(logger, prop, logger);
      return typeof value === 'function' ? value.bind(logger) : value;
    },
    set: (_, prop, value) => Reflect.set(target(), prop, value),
    has: (_, prop) => Reflect.has(target(), prop),
  });
}
