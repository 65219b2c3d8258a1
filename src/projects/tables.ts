// Times are epoch milliseconds (64-bit integers) on both dialects; JSON is stored as text.
export interface ProjectsTables {
  projects: {
    id: string;
    name: string;
    repository: string;
    ref: string;
    model: string | null;
    /** JSON text: ProjectSettings. */
    settings: string;
    /** Per-project secret for visitor-identity HMACs (hex). Never leaves the server. */
    visitor_secret: string;
    created_at: number;
  };
  api_keys: {
    id: string;
    project_id: string;
    kind: 'admin' | 'ingest' | 'ingest-secret';
    name: string;
    /** The first characters of the key, shown in listings. */
    prefix: string;
    /** sha256 hex of the whole key. */
    hash: string;
    created_at: number;
    last_used_at: number | null;
    revoked_at: number | null;
  };
}
