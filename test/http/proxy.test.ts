// INKWELL_TRUST_PROXY: request.ip (visitor identity for analytics) from X-Forwarded-For only when trusted.
import { afterEach, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.ts';
import { startTestApp, type TestApp } from '../helpers/app.ts';
import { describeEachDialect } from '../helpers/db.ts';

describeEachDialect('trust proxy', (dialect) => {
  let t: TestApp | undefined;
  afterEach(async () => {
    await t?.close();
    t = undefined;
  });

  async function ipSeen(trustProxy: string | undefined, forwardedFor: string) {
    t = await startTestApp(
      dialect,
      { trustProxy: loadConfig(trustProxy === undefined ? {} : { INKWELL_TRUST_PROXY: trustProxy }).trustProxy },
      {},
      {
        routes: async (app) => {
          app.get('/test/ip', async (request) => ({ ip: request.ip }));
        },
      },
    );
    const r = await t.request('GET', '/test/ip', { headers: { 'x-forwarded-for': forwardedFor } });
    await t.close();
    t = undefined;
    return r.body.ip;
  }

  it('ignores X-Forwarded-For by default and honours it when the proxy is trusted', async () => {
    expect(await ipSeen(undefined, '203.0.113.7')).toBe('127.0.0.1');
    expect(await ipSeen('loopback', '198.51.100.1, 203.0.113.7')).toBe('203.0.113.7');
    expect(await ipSeen('true', '198.51.100.1, 203.0.113.7')).toBe('198.51.100.1');
    expect(await ipSeen('10.0.0.0/8', '203.0.113.7')).toBe('127.0.0.1');
  });
});
