// Dashboard sign-in: server-side sessions (the browser holds only a random token in an HttpOnly cookie) and
// one-time sign-in links. Tokens are stored as sha256 hashes, like API keys; times are epoch milliseconds.
export interface SessionsTables {
  dashboard_sessions: {
    /** `ses_…`: names the session in logs; not a credential. */
    id: string;
    /** sha256 hex of the cookie's token. */
    token_hash: string;
    project_id: string;
    /** The admin key the session acts as: revoking it ends the session. */
    key_id: string;
    /** Sent back in `x-csrf-token` by every state change made with the cookie. */
    csrf_token: string;
    created_at: number;
    expires_at: number;
  };
  dashboard_signin_links: {
    /** sha256 hex of the link's token. */
    token_hash: string;
    project_id: string;
    /** The admin key the session started from this link acts as. */
    key_id: string;
    created_at: number;
    expires_at: number;
    /** Set when the link is used; a used link signs nobody in again. */
    used_at: number | null;
  };
}
