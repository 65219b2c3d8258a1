// The signed-in frame: a skip link, the navigation, the session's project and the sign-out button.
import type { ComponentChildren } from 'preact';
import { useState } from 'preact/hooks';
import { useLocation } from 'preact-iso';
import { useSession } from '../session.ts';

const NAV = [
  { href: '/analytics', label: 'Analytics' },
  { href: '/jobs', label: 'Jobs' },
  { href: '/settings', label: 'Settings' },
];

export function Layout({ children }: { children: ComponentChildren }) {
  const { path } = useLocation();
  const { project, signOut } = useSession();
  const [leaving, setLeaving] = useState(false);
  return (
    <>
      <a class="skip" href="#main">
        Skip to content
      </a>
      <header class="top">
        <a class="brand" href="/analytics">
          Inkwell
        </a>
        <nav aria-label="Main">
          <ul>
            {NAV.map((n) => (
              <li key={n.href}>
                <a href={n.href} aria-current={path === n.href || path.startsWith(`${n.href}/`) ? 'page' : undefined}>
                  {n.label}
                </a>
              </li>
            ))}
          </ul>
        </nav>
        <div class="who">
          <span class="project" title={project.id}>
            <span class="muted">Project</span> <strong data-testid="project-name">{project.name}</strong> <code>{project.id}</code>
          </span>
          <button
            type="button"
            class="secondary"
            disabled={leaving}
            onClick={() => {
              setLeaving(true);
              signOut().finally(() => setLeaving(false));
            }}
          >
            Sign out
          </button>
        </div>
      </header>
      <main id="main" tabIndex={-1}>
        {children}
      </main>
    </>
  );
}
