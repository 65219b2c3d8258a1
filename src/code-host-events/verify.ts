// Verifying that a delivery comes from the code host the project's secret was given to. Pure.
import crypto from 'node:crypto';

const equal = (a: Buffer, b: Buffer) => a.length === b.length && crypto.timingSafeEqual(a, b);

/** GitHub: `X-Hub-Signature-256: sha256=<hex HMAC-SHA256 of the raw body>`, compared in constant time. */
export function githubSignatureValid(secret: string, rawBody: Buffer, header: string | undefined): boolean {
  if (header === undefined || !/^sha256=[0-9a-f]{64}$/.test(header)) return false;
  const expected = crypto.createHmac('sha256', secret).update(rawBody).digest();
  return equal(Buffer.from(header.slice(7), 'hex'), expected);
}

/** GitLab: `X-Gitlab-Token` is the secret itself, compared in constant time (through hashes of equal length). */
export function gitlabTokenValid(secret: string, header: string | undefined): boolean {
  if (header === undefined) return false;
  const digest = (s: string) => crypto.createHash('sha256').update(s).digest();
  return equal(digest(header), digest(secret));
}
