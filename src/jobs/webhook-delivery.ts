// Webhook I/O: URL validation with DNS, and one signed POST that connects only to the addresses it
// checked (the check and the connection use the same lookup, so DNS cannot change in between).
import dns from 'node:dns';
import http from 'node:http';
import https from 'node:https';
import type { LookupFunction } from 'node:net';
import { classifyAddress, describeClass } from '../lib/net-guard.ts';

export class WebhookUrlError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'WebhookUrlError';
  }
}

/** The target resolves to an address webhooks may not call: never worth retrying. */
export class RefusedAddressError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'RefusedAddressError';
  }
}

export const MAX_WEBHOOK_URL_LENGTH = 2048;

type LookupAll = (hostname: string) => Promise<{ address: string; family: number }[]>;

const systemLookupAll: LookupAll = (hostname) => dns.promises.lookup(hostname, { all: true, verbatim: true });

function bareHost(u: URL): string {
  return u.hostname.replace(/^\[|\]$/g, '');
}

/** Throws RefusedAddressError when `address` is not a public unicast address (and private ones are not allowed). */
function checkAddress(hostname: string, address: string, allowPrivate: boolean): void {
  if (allowPrivate) return;
  const c = classifyAddress(address);
  if (!c) throw new RefusedAddressError(`${hostname} resolved to an unparseable address`);
  if (c.class !== 'public') {
    const via = c.embeddedV4 ?? (hostname === address ? undefined : address);
    const shown = via ? `${hostname} (${via})` : hostname;
    throw new RefusedAddressError(`${shown} is ${describeClass(c.class)}; webhooks may only call public addresses unless INKWELL_ALLOW_PRIVATE_WEBHOOKS=1`);
  }
}

/** Resolves a host name (or takes an IP literal) and checks every address it maps to. */
export async function resolveChecked(hostname: string, allowPrivate: boolean, lookupAll: LookupAll = systemLookupAll): Promise<string[]> {
  const literal = classifyAddress(hostname);
  if (literal) {
    checkAddress(hostname, hostname, allowPrivate);
    return [literal.canonical];
  }
  let addrs: { address: string }[];
  try {
    addrs = await lookupAll(hostname);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code ?? 'error';
    throw new WebhookUrlError(`url host ${hostname} could not be resolved (${code})`);
  }
  if (addrs.length === 0) throw new WebhookUrlError(`url host ${hostname} has no addresses`);
  for (const a of addrs) checkAddress(hostname, a.address, allowPrivate);
  return addrs.map((a) => a.address);
}

/** Syntax checks for a webhook URL (no I/O). Returns the normalised URL. */
export function parseWebhookUrl(raw: string): URL {
  if (typeof raw !== 'string' || raw.trim() === '') throw new WebhookUrlError('url is required');
  if (raw.length > MAX_WEBHOOK_URL_LENGTH) throw new WebhookUrlError(`url must be at most ${MAX_WEBHOOK_URL_LENGTH} characters`);
  let u: URL;
  try {
    u = new URL(raw.trim());
  } catch {
    throw new WebhookUrlError('url must be an absolute http:// or https:// URL');
  }
  if (u.protocol !== 'http:' && u.protocol !== 'https:') throw new WebhookUrlError(`url must use http or https (got ${u.protocol.replace(/:$/, '')})`);
  if (u.username || u.password) throw new WebhookUrlError('url must not contain credentials; receivers authenticate deliveries by their signature');
  if (!u.hostname) throw new WebhookUrlError('url must name a host');
  u.hash = '';
  return u;
}

/** Full validation for `webhook set`: syntax, then DNS, refusing non-public targets unless allowed. */
export async function validateWebhookUrl(raw: string, allowPrivate: boolean, lookupAll: LookupAll = systemLookupAll): Promise<string> {
  const u = parseWebhookUrl(raw);
  try {
    await resolveChecked(bareHost(u), allowPrivate, lookupAll);
  } catch (err) {
    if (err instanceof RefusedAddressError) throw new WebhookUrlError(`url refused: ${err.message}`);
    throw err;
  }
  return u.toString();
}

export interface PostResult {
  statusCode: number;
  /** The start of the response body, for the delivery log. */
  bodySnippet: string;
}

export interface PostOptions {
  url: string;
  headers: Record<string, string>;
  body: string;
  timeoutMs: number;
  allowPrivate: boolean;
  lookupAll?: LookupAll;
}

const SNIPPET_BYTES = 512;

/**
 * POSTs once. Redirects are not followed (a 3xx is a failed attempt). Throws RefusedAddressError for
 * forbidden targets and a plain Error for network failures and timeouts.
 */
export async function postWebhook(opts: PostOptions): Promise<PostResult> {
  const u = parseWebhookUrl(opts.url);
  const host = bareHost(u);
  // Literals never reach the lookup function: check them here. Names are checked inside the lookup.
  const addresses = await resolveChecked(host, opts.allowPrivate, opts.lookupAll);
  const lookup: LookupFunction = (_hostname, options, callback) => {
    const family = (a: string) => (a.includes(':') ? 6 : 4);
    if ((options as { all?: boolean }).all) {
      (callback as unknown as (e: null, a: { address: string; family: number }[]) => void)(
        null,
        addresses.map((a) => ({ address: a, family: family(a) })),
      );
    } else {
      const a = addresses[0] as string;
      callback(null, a, family(a));
    }
  };
  const mod = u.protocol === 'https:' ? https : http;
  const body = Buffer.from(opts.body, 'utf8');
  return new Promise<PostResult>((resolve, reject) => {
    let settled = false;
    const finish = (fn: () => void) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      fn();
    };
    const req = mod.request(
      u,
      {
        method: 'POST',
        lookup,
        headers: { ...opts.headers, 'content-type': 'application/json', 'content-length': String(body.length), 'user-agent': 'Inkwell-Webhooks/1' },
        agent: false,
      },
      (res) => {
        const chunks: Buffer[] = [];
        let size = 0;
        res.on('data', (c: Buffer) => {
          if (size < SNIPPET_BYTES) chunks.push(c);
          size += c.length;
        });
        res.on('end', () =>
          finish(() => resolve({ statusCode: res.statusCode ?? 0, bodySnippet: Buffer.concat(chunks).subarray(0, SNIPPET_BYTES).toString('utf8') })),
        );
        res.on('error', (err) => finish(() => reject(err)));
      },
    );
    const timer = setTimeout(() => {
      const err = new Error(`timed out after ${opts.timeoutMs} ms`);
      finish(() => reject(err));
      req.destroy(err);
    }, opts.timeoutMs);
    req.on('error', (err) => finish(() => reject(err)));
    req.end(body);
  });
}
