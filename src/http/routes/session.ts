// Dashboard sign-in over HTTP: start a session with an admin key or a one-time link (the token goes into an
// HttpOnly, SameSite=Strict cookie), read it, and end it. Every admin endpoint accepts the cookie in place of
// the Authorization header (src/http/auth.ts); state changes made with it need the session's CSRF token.
import type { FastifyReply, FastifyRequest } from 'fastify';
import { Type } from 'typebox';
import { AppError } from '../../errors.ts';
import { type DashboardSession, SESSION_COOKIE } from '../../sessions/service.ts';
import type { App } from '../app.ts';
import { sessionKey } from '../auth.ts';
import type { AppContext } from '../context.ts';
import { errorResponses } from '../documented.ts';

const SignInBody = Type.Object(
  {
    key: Type.Optional(Type.String({ minLength: 1, maxLength: 200, description: 'An admin key (`ink_…`) of the project' })),
    link: Type.Optional(Type.String({ minLength: 1, maxLength: 200, description: 'The token of a one-time sign-in link (`inkwell dashboard`)' })),
  },
  { additionalProperties: false, description: 'Exactly one of `key` and `link`', examples: [{ key: 'ink_0123456789abcdefghijklmnopqrstuvwxyzABCD' }] },
);
const SessionResponse = Type.Object(
  {
    projectId: Type.String(),
    csrfToken: Type.String({ description: 'Send it as `x-csrf-token` with every request other than GET/HEAD made with the session cookie' }),
    expiresAt: Type.String({ format: 'date-time', description: 'When the session ends (sooner on sign-out or when its key is revoked)' }),
  },
  { examples: [{ projectId: 'prj_4hXw2cN8rT1q', csrfToken: 'Jq8Zt1bV0cXyR4mN7pLs2dKe9hGf3aWu', expiresAt: '2026-12-02T10:00:00.000Z' }] },
);

const sessionView = (s: DashboardSession) => ({ projectId: s.projectId, csrfToken: s.csrfToken, expiresAt: new Date(s.expiresAt).toISOString() });
const cookieOptions = (request: FastifyRequest) => ({
  path: '/',
  httpOnly: true,
  sameSite: 'strict' as const,
  // Over plain http (a local service) a Secure cookie would never come back; behind TLS it must be Secure.
  secure: request.protocol === 'https',
});

export async function sessionRoutes(app: App, ctx: AppContext): Promise<void> {
  const noStore = (reply: FastifyReply) => reply.header('cache-control', 'no-store');

  app.post(
    '/v1/session',
    {
      schema: {
        tags: ['Dashboard'],
        summary: 'Sign in to the dashboard',
        description:
          'Starts a session with an admin key or a one-time sign-in link token (made by `inkwell dashboard --project ID`, valid once) and sets it as an HttpOnly, SameSite=Strict cookie `inkwell_session`. The session acts as that admin key on every admin endpoint of its project until it expires, is signed out, or the key is revoked. Requests other than GET/HEAD made with the cookie must send the returned `csrfToken` as `x-csrf-token`. Sign-in attempts are rate limited per client address.',
        body: SignInBody,
        response: { 200: SessionResponse, ...errorResponses('invalid_request', 'unauthorized', 'forbidden', 'rate_limited') },
      },
    },
    async (request, reply) => {
      ctx.rateLimiter.consume(reply, 'signIn', request.ip);
      const { key, link } = request.body;
      if ((key === undefined) === (link === undefined)) {
        throw new AppError('invalid_request', 'Send exactly one of `key` and `link`', [{ message: 'exactly one of key and link is required', path: '/key' }]);
      }
      const started = key !== undefined ? await ctx.sessions.signInWithKey(key) : await ctx.sessions.signInWithLink(link as string);
      reply.setCookie(SESSION_COOKIE, started.token, { ...cookieOptions(request), expires: new Date(started.expiresAt) });
      noStore(reply);
      return sessionView(started);
    },
  );

  app.get(
    '/v1/session',
    {
      schema: {
        tags: ['Dashboard'],
        summary: 'The current dashboard session',
        description:
          "The session the request's `inkwell_session` cookie carries, with its CSRF token; 401 when there is none (expired, signed out, or its key revoked).",
        security: [{ sessionCookie: [] }],
        response: { 200: SessionResponse },
      },
    },
    async (request, reply) => {
      const key = await sessionKey(ctx, request);
      if (!key || !request.dashboardSession) throw new AppError('unauthorized', 'Not signed in', undefined, { 'www-authenticate': 'Bearer' });
      noStore(reply);
      return sessionView(request.dashboardSession);
    },
  );

  app.delete(
    '/v1/session',
    {
      schema: {
        tags: ['Dashboard'],
        summary: 'Sign out of the dashboard',
        description:
          "Ends the session of the `inkwell_session` cookie (it is refused from the next request on) and clears the cookie. Needs the session's `x-csrf-token`. Without a live session there is nothing to end: the cookie is cleared all the same.",
        security: [{ sessionCookie: [] }],
        response: {
          204: Type.Null({ description: 'Signed out' }),
          ...errorResponses('csrf_token_invalid'),
        },
      },
    },
    async (request, reply) => {
      // A live session is ended only with its CSRF token (sessionKey refuses the request otherwise).
      const key = await sessionKey(ctx, request);
      if (key && request.dashboardSession) await ctx.sessions.signOut(request.dashboardSession.sessionId);
      reply.clearCookie(SESSION_COOKIE, cookieOptions(request));
      return reply.status(204).send(null);
    },
  );
}
