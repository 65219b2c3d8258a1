// The I/O edge of webhooks: URL validation with DNS answers, and the POST connecting only to the
// addresses that were checked (no second lookup between check and connect).
import { afterEach, describe, expect, it } from 'vitest';
import { postWebhook, RefusedAddressError, resolveChecked, validateWebhookUrl, WebhookUrlError } from '../../src/jobs/webhook-delivery.ts';
import { type Receiver, startReceiver } from './receiver.ts';

/** These posts are not about timing out: the limit is only a safety net for a starved machine. */
const SAFETY_NET_MS = 60_000;

const answers =
  (...addresses: string[]) =>
  async () =>
    addresses.map((address) => ({ address, family: address.includes(':') ? 6 : 4 }));

describe('webhook URL validation', () => {
  it('accepts a name whose every address is public', async () => {
    expect(await validateWebhookUrl('https://hooks.example.com/in?token=abc#frag', false, answers('93.184.216.34', '2606:2800:220:1::1'))).toBe(
      'https://hooks.example.com/in?token=abc',
    );
  });

  it('refuses a name with any non-public address (one private answer is enough)', async () => {
    await expect(validateWebhookUrl('https://mixed.example.com/', false, answers('93.184.216.34', '10.0.0.7'))).rejects.toThrow(
      /url refused: mixed\.example\.com \(10\.0\.0\.7\) is a private network address/,
    );
    await expect(validateWebhookUrl('https://v6.example.com/', false, answers('::ffff:127.0.0.1'))).rejects.toThrow(/\(127\.0\.0\.1\) is a loopback address/);
    await expect(validateWebhookUrl('https://ula.example.com/', false, answers('fd00::5'))).rejects.toThrow(/private network/);
    // Allowed when private targets are enabled.
    expect(await validateWebhookUrl('https://mixed.example.com/', true, answers('10.0.0.7'))).toBe('https://mixed.example.com/');
  });

  it('reports names that do not resolve', async () => {
    const fail = async () => {
      throw Object.assign(new Error('getaddrinfo ENOTFOUND'), { code: 'ENOTFOUND' });
    };
    await expect(validateWebhookUrl('https://nope.example.com/', false, fail)).rejects.toThrow('url host nope.example.com could not be resolved (ENOTFOUND)');
    await expect(validateWebhookUrl('https://empty.example.com/', false, answers())).rejects.toBeInstanceOf(WebhookUrlError);
  });

  it('classifies literals without DNS, in the forms the URL parser produces', async () => {
    const never = async () => {
      throw new Error('must not resolve a literal');
    };
    await expect(resolveChecked('127.0.0.1', false, never)).rejects.toBeInstanceOf(RefusedAddressError);
    await expect(resolveChecked(new URL('http://0x7f.1/').hostname, false, never)).rejects.toBeInstanceOf(RefusedAddressError);
    await expect(resolveChecked('::ffff:a9fe:a9fe', false, never)).rejects.toThrow(/\(169\.254\.169\.254\) is a link-local address/);
    expect(await resolveChecked('8.8.8.8', false, never)).toEqual(['8.8.8.8']);
  });
});

describe('webhook POST', () => {
  let receiver: Receiver | undefined;
  afterEach(async () => {
    await receiver?.close();
    receiver = undefined;
  });

  it('connects to the checked address, not to a fresh lookup of the name', async () => {
    receiver = await startReceiver([202]);
    const port = new URL(receiver.url).port;
    // "receiver.invalid" exists in no DNS: the request can only succeed through the checked answer.
    const res = await postWebhook({
      url: `http://receiver.invalid:${port}/hook`,
      headers: { 'webhook-id': 'msg_1' },
      body: '{"a":1}',
      timeoutMs: SAFETY_NET_MS,
      allowPrivate: true,
      lookupAll: answers('127.0.0.1'),
    });
    expect(res.statusCode).toBe(202);
    expect(receiver.received[0]).toMatchObject({ body: '{"a":1}' });
    expect(receiver.received[0]?.headers.host).toBe(`receiver.invalid:${port}`);
  });

  it('refuses before connecting when the name now resolves to a private address', async () => {
    receiver = await startReceiver([200]);
    const port = new URL(receiver.url).port;
    await expect(
      postWebhook({
        url: `http://rebound.invalid:${port}/`,
        headers: {},
        body: '{}',
        timeoutMs: SAFETY_NET_MS,
        allowPrivate: false,
        lookupAll: answers('127.0.0.1'),
      }),
    ).rejects.toBeInstanceOf(RefusedAddressError);
    expect(receiver.received).toHaveLength(0);
  });

  it('does not follow redirects', async () => {
    receiver = await startReceiver([307]);
    const res = await postWebhook({ url: receiver.url, headers: {}, body: '{}', timeoutMs: SAFETY_NET_MS, allowPrivate: true });
    expect(res.statusCode).toBe(307);
    expect(receiver.received).toHaveLength(1);
  });
});
