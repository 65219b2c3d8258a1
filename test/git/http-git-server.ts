// A real smart-HTTP git server (git http-backend as CGI) that demands Basic auth, for proving that
// tokens reach git through the credential helper. Requests under `/api/v3/` are forwarded to another
// server (the fake GitHub API), so one host plays a GitHub Enterprise Server.
import { spawn } from 'node:child_process';
import http from 'node:http';
import type { AddressInfo } from 'node:net';

export interface GitHttpRequest {
  method: string;
  path: string;
  authorization: string | undefined;
  status: number;
}

export interface GitHttpServer {
  url: string;
  requests: GitHttpRequest[];
  close(): Promise<void>;
}

export async function startGitHttpServer(opts: { projectRoot: string; username: string; password: string; apiProxy?: string }): Promise<GitHttpServer> {
  const requests: GitHttpRequest[] = [];
  const expected = `Basic ${Buffer.from(`${opts.username}:${opts.password}`).toString('base64')}`;
  const server = http.createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://localhost');
    if (opts.apiProxy && url.pathname.startsWith('/api/v3/')) {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', async () => {
        const upstream = await fetch(`${opts.apiProxy}${url.pathname.slice('/api/v3'.length)}${url.search}`, {
          method: req.method,
          headers: Object.fromEntries(
            Object.entries(req.headers).filter(([k, v]) => typeof v === 'string' && !['host', 'content-length', 'connection'].includes(k)),
          ) as Record<string, string>,
          body: chunks.length ? Buffer.concat(chunks) : undefined,
        });
        const text = await upstream.text();
        res.writeHead(upstream.status, { 'content-type': upstream.headers.get('content-type') ?? 'application/json' });
        res.end(text);
      });
      return;
    }
    const record: GitHttpRequest = { method: req.method ?? 'GET', path: url.pathname, authorization: req.headers.authorization, status: 0 };
    requests.push(record);
    if (req.headers.authorization !== expected) {
      record.status = 401;
      res.writeHead(401, { 'WWW-Authenticate': 'Basic realm="test"', 'content-type': 'text/plain' });
      res.end('auth required\n');
      return;
    }
    const cgi = spawn('git', ['http-backend'], {
      env: {
        ...process.env,
        GIT_PROJECT_ROOT: opts.projectRoot,
        GIT_HTTP_EXPORT_ALL: '1',
        PATH_INFO: url.pathname,
        QUERY_STRING: url.search.replace(/^\?/, ''),
        REQUEST_METHOD: req.method ?? 'GET',
        CONTENT_TYPE: req.headers['content-type'] ?? '',
        HTTP_CONTENT_ENCODING: req.headers['content-encoding'] ?? '',
        GIT_PROTOCOL: String(req.headers['git-protocol'] ?? ''),
        REMOTE_USER: opts.username,
        REMOTE_ADDR: '127.0.0.1',
      },
    });
    req.pipe(cgi.stdin);
    const out: Buffer[] = [];
    cgi.stdout.on('data', (c: Buffer) => out.push(c));
    cgi.on('close', () => {
      const all = Buffer.concat(out);
      const sep = all.indexOf('\r\n\r\n') >= 0 ? all.indexOf('\r\n\r\n') : all.indexOf('\n\n');
      const sepLen = all.indexOf('\r\n\r\n') >= 0 ? 4 : 2;
      const head = all.subarray(0, sep).toString('utf8');
      const body = all.subarray(sep + sepLen);
      let status = 200;
      const headers: Record<string, string> = {};
      for (const line of head.split(/\r?\n/)) {
        const i = line.indexOf(':');
        if (i < 0) continue;
        const k = line.slice(0, i).trim();
        const v = line.slice(i + 1).trim();
        if (k.toLowerCase() === 'status') status = Number.parseInt(v, 10);
        else headers[k] = v;
      }
      record.status = status;
      res.writeHead(status, headers);
      res.end(body);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    requests,
    close: async () => {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
