// The "bare Fastify route" of the ingest and API benchmarks: the same framework, routes of the same shape,
// no work (no auth, no validation beyond JSON parsing, no database). Run as a child process; prints its port.
import Fastify from 'fastify';

const app = Fastify({ logger: false, bodyLimit: 1 << 20 });
app.post('/v1/analytics/:projectId/events', async (request, reply) => {
  const body = request.body as { events?: unknown[] } | null;
  reply.code(202);
  return { accepted: Array.isArray(body?.events) ? body.events.length : 0, rejected: [] };
});
// The tracker's shape (navigator.sendBeacon: a text/plain body of JSON), as /v1/collect takes it.
app.addContentTypeParser('text/plain', { parseAs: 'string' }, (_req, body, done) => {
  try {
    done(null, JSON.parse(body as string));
  } catch (err) {
    done(err as Error, undefined);
  }
});
app.post('/v1/collect', async (request, reply) => {
  const body = request.body as { events?: unknown[] } | null;
  reply.code(202);
  return { accepted: Array.isArray(body?.events) ? body.events.length : 0, rejected: [] };
});
const job = {
  id: 'job_0000000000000000',
  status: 'completed',
  source: { repository: 'https://github.com/acme/docs', ref: 'main' },
  model: 'openai-compatible/bench',
  prLink: 'https://github.com/acme/docs/pull/1',
  createdAt: '2026-11-21T08:00:00.000Z',
  archivedAt: null,
  branch: 'inkwell/0000-bench',
  updatedAt: '2026-11-21T08:00:00.000Z',
  error: null,
  usage: { inputTokens: 0, outputTokens: 0 },
};
app.get('/v2/agent/:projectId/job/:id', async () => job);
const address = await app.listen({ host: '127.0.0.1', port: 0 });
process.stdout.write(`${address}\n`);
process.on('SIGTERM', () => {
  app.close().then(() => process.exit(0));
});
