// The signed-in session as the pages see it: its project, and how to sign out.
import { createContext } from 'preact';
import { useContext } from 'preact/hooks';
import type { Project, SessionInfo } from './api.ts';

export interface Session {
  info: SessionInfo;
  project: Project;
  signOut: () => Promise<void>;
}

export const SessionContext = createContext<Session | null>(null);

/** The session of a page inside the signed-in layout (which renders pages only with one). */
export function useSession(): Session {
  const s = useContext(SessionContext);
  if (!s) throw new Error('useSession outside a signed-in page');
  return s;
}
