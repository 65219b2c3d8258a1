// The dashboard: the session (read once, ended by sign-out or by any 401 from the API) and the pages.
// Pages are real URLs (src/dashboard/paths.ts lists them for the server); links are plain <a href>s that
// preact-iso's LocationProvider turns into client-side navigation.
import { useCallback, useEffect, useMemo, useState } from 'preact/hooks';
import { LocationProvider, Route, Router, useLocation } from 'preact-iso';
import { type ApiError, api, type Project, type SessionInfo, setCsrfToken, whenUnauthorized } from './api.ts';
import { Layout } from './components/layout.tsx';
import { ErrorMessage, Loading } from './components/states.tsx';
import { asApiError } from './hooks.ts';
import { Analytics } from './pages/analytics.tsx';
import { JobDetail } from './pages/job.tsx';
import { Jobs } from './pages/jobs.tsx';
import { NotFound } from './pages/not-found.tsx';
import { Settings } from './pages/settings.tsx';
import { SignIn } from './pages/sign-in.tsx';
import { SIGN_IN_PATH } from './paths.ts';
import { type Session, SessionContext } from './session.ts';

/** Where to go after signing in: a path of this site only (never `//elsewhere`), else the analytics page. */
export function safeNext(next: string | undefined): string {
  return next?.startsWith('/') && !next.startsWith('//') && !next.startsWith(SIGN_IN_PATH) ? next : '/analytics';
}

type Started = { info: SessionInfo; project: Project };

function Shell() {
  const { path, url, query, route } = useLocation();
  // undefined: not known yet; null: signed out.
  const [started, setStarted] = useState<Started | null | undefined>(undefined);
  const [error, setError] = useState<ApiError>();
  const onSignInPage = path === SIGN_IN_PATH || path === '/sign-in';

  const start = useCallback(async (info: SessionInfo) => {
    setCsrfToken(info.csrfToken);
    const project = await api<Project>('GET', `/v1/projects/${info.projectId}`);
    setStarted({ info, project });
  }, []);

  useEffect(() => {
    whenUnauthorized(() => {
      setCsrfToken(null);
      setStarted(null);
    });
    api<SessionInfo>('GET', '/v1/session')
      .then(start)
      .catch((err: unknown) => {
        const e = asApiError(err);
        if (e.status === 401) setStarted(null);
        else setError(e);
      });
  }, [start]);

  useEffect(() => {
    if (started === null && !onSignInPage) route(`${SIGN_IN_PATH}?next=${encodeURIComponent(url)}`, true);
    else if (started && (onSignInPage || path === '/')) route(safeNext(onSignInPage ? query.next : undefined), true);
  }, [started, onSignInPage, path, url, query.next, route]);

  const session = useMemo<Session | null>(() => {
    if (!started) return null;
    const signOut = async () => {
      await api('DELETE', '/v1/session');
      setCsrfToken(null);
      setStarted(null);
      route(SIGN_IN_PATH);
    };
    return { ...started, signOut };
  }, [started, route]);

  if (error) return <ErrorMessage error={error} retry={() => location.reload()} />;
  if (started === undefined) return <Loading what="the dashboard" />;
  if (!session) return onSignInPage ? <SignIn onSignedIn={start} /> : <Loading what="the sign-in page" />;
  return (
    <SessionContext.Provider value={session}>
      <Layout>
        <Router>
          <Route path="/analytics" component={Analytics} />
          <Route path="/jobs" component={Jobs} />
          <Route path="/jobs/:id" component={JobDetail} />
          <Route path="/settings" component={Settings} />
          <Route default component={NotFound} />
        </Router>
      </Layout>
    </SessionContext.Provider>
  );
}

export function App() {
  return (
    <LocationProvider>
      <Shell />
    </LocationProvider>
  );
}
