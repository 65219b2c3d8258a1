// Where people reach this service (links in sign-in messages and code-host replies): INKWELL_PUBLIC_URL, else
// the address it listens on.
import type { Config } from '../config.ts';

export function publicBaseUrl(config: Pick<Config, 'host' | 'port' | 'dashboard'>): string {
  if (config.dashboard.publicUrl) return config.dashboard.publicUrl;
  // A wildcard listen address is not somewhere a browser can go; the machine itself is.
  const host = ['0.0.0.0', '::', '[::]'].includes(config.host) ? 'localhost' : config.host.includes(':') ? `[${config.host}]` : config.host;
  return `http://${host}:${config.port}`;
}
