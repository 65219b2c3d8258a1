// Projects and keys: creation, listing, revocation and key verification.
import crypto from 'node:crypto';
import { base62, generateKey, hashKey, type KeyKind, keyKindOf, keyPrefix } from '../lib/ids.ts';
import { iso, isoOrNull } from '../lib/time.ts';
import { changeProjectBudget, type ProjectBudget, type ProjectBudgetField } from './budget.ts';
import { changeAllowList } from './repository.ts';
import type { KeyAuthRow, KeyRow, ProjectRow, ProjectsStore } from './store.ts';
import { type ProjectInput, validateProjectInput } from './validate.ts';

export type { ProjectBudget } from './budget.ts';
export { ProjectInputError } from './validate.ts';

export type VisitorIdRotation = 'none' | 'daily' | 'monthly';

export interface ProjectSettings {
  visitorIdRotation?: VisitorIdRotation;
  webhook?: { url: string; secret: string } | null;
  /** Repositories a job may name besides the project's own, canonical (src/projects/repository.ts). */
  allowedRepositories?: string[];
  /**
   * Inbound code-host webhooks (src/code-host-events/): the generation the secret is derived from (replaced by
   * every `inkwell project set --code-host-webhook`) and the handle comments mention (default `inkwell`).
   */
  codeHostHook?: { generation: string; handle: string } | null;
  /** Budget defaults of the project's jobs and its daily token budget (src/projects/budget.ts). */
  budget?: ProjectBudget;
}

export interface Project {
  id: string;
  name: string;
  repository: string;
  ref: string;
  model: string | null;
  settings: ProjectSettings;
  createdAt: string;
}

export interface KeyInfo {
  id: string;
  projectId: string;
  kind: KeyKind;
  name: string;
  prefix: string;
  createdAt: string;
  lastUsedAt: string | null;
  revokedAt: string | null;
}

export interface PresentedKey {
  kind: KeyKind;
  /** sha256 of the key: what keys are stored and looked up by. */
  hash: string;
}

export interface AuthenticatedKey {
  keyId: string;
  projectId: string;
  kind: KeyKind;
}

export class NotFoundError extends Error {}

/** Internal project view including the secret used for visitor hashing. */
export interface ProjectWithSecret extends Project {
  visitorSecret: string;
}

function toProject(r: ProjectRow): ProjectWithSecret {
  return {
    id: r.id,
    name: r.name,
    repository: r.repository,
    ref: r.ref,
    model: r.model,
    settings: JSON.parse(r.settings) as ProjectSettings,
    createdAt: iso(r.created_at),
    visitorSecret: r.visitor_secret,
  };
}

export function publicProject(p: ProjectWithSecret): Project {
  const { visitorSecret: _secret, ...rest } = p;
  return rest;
}

function toKeyInfo(r: KeyRow): KeyInfo {
  return {
    id: r.id,
    projectId: r.project_id,
    kind: r.kind,
    name: r.name,
    prefix: r.prefix,
    createdAt: iso(r.created_at),
    lastUsedAt: isoOrNull(r.last_used_at),
    revokedAt: isoOrNull(r.revoked_at),
  };
}

/** How often at most `last_used_at` is written per key (keeps hot paths free of writes). */
const TOUCH_INTERVAL_MS = 60_000;

export function createProjectService(store: ProjectsStore, now: () => number = Date.now) {
  const lastTouched = new Map<string, number>();

  return {
    /** Throws ProjectInputError (naming the field) for bad input. */
    async createProject(input: ProjectInput): Promise<Project> {
      const valid = validateProjectInput(input);
      const row: ProjectRow = {
        id: `prj_${base62(12)}`,
        name: valid.name,
        repository: valid.repository,
        ref: valid.ref,
        model: valid.model,
        settings: JSON.stringify({ visitorIdRotation: 'none' } satisfies ProjectSettings),
        visitor_secret: crypto.randomBytes(32).toString('hex'),
        created_at: now(),
      };
      await store.insertProject(row);
      return publicProject(toProject(row));
    },

    async getProject(id: string): Promise<ProjectWithSecret | undefined> {
      const r = await store.getProject(id);
      return r ? toProject(r) : undefined;
    },

    async listProjects(): Promise<Project[]> {
      return (await store.listProjects()).map((r) => publicProject(toProject(r)));
    },

    async updateSettings(id: string, patch: Partial<ProjectSettings>): Promise<ProjectSettings> {
      const p = await store.getProject(id);
      if (!p) throw new NotFoundError(`Project ${id} not found`);
      const settings = { ...(JSON.parse(p.settings) as ProjectSettings), ...patch };
      await store.updateProjectSettings(id, JSON.stringify(settings));
      return settings;
    },

    /**
     * Adds repositories to and removes them from the project's allow-list (see changeAllowList, which
     * throws ProjectInputError for bad input); returns the new settings.
     */
    async changeAllowedRepositories(id: string, change: { allow?: string[]; disallow?: string[] }): Promise<ProjectSettings> {
      const p = await store.getProject(id);
      if (!p) throw new NotFoundError(`Project ${id} not found`);
      const current = JSON.parse(p.settings) as ProjectSettings;
      const allowedRepositories = changeAllowList({ repository: p.repository, settings: current }, change.allow ?? [], change.disallow ?? []);
      const settings = { ...current, allowedRepositories };
      await store.updateProjectSettings(id, JSON.stringify(settings));
      return settings;
    },

    /** Changes the project's budget defaults (text as typed; `none` removes one); returns the new settings. */
    async changeBudget(id: string, change: Partial<Record<ProjectBudgetField, string>>): Promise<ProjectSettings> {
      const p = await store.getProject(id);
      if (!p) throw new NotFoundError(`Project ${id} not found`);
      const current = JSON.parse(p.settings) as ProjectSettings;
      const settings = { ...current, budget: changeProjectBudget(current.budget, change) };
      await store.updateProjectSettings(id, JSON.stringify(settings));
      return settings;
    },

    /** Creates a key; the full key is returned once and never stored. */
    async createKey(input: { projectId: string; kind: KeyKind; name?: string }): Promise<KeyInfo & { key: string }> {
      const p = await store.getProject(input.projectId);
      if (!p) throw new NotFoundError(`Project ${input.projectId} not found`);
      const key = generateKey(input.kind);
      const row: KeyRow = {
        id: `key_${base62(12)}`,
        project_id: input.projectId,
        kind: input.kind,
        name: input.name ?? input.kind,
        prefix: keyPrefix(key),
        hash: hashKey(key),
        created_at: now(),
        last_used_at: null,
        revoked_at: null,
      };
      await store.insertKey(row);
      return { ...toKeyInfo(row), key };
    },

    async listKeys(projectId: string): Promise<KeyInfo[]> {
      const p = await store.getProject(projectId);
      if (!p) throw new NotFoundError(`Project ${projectId} not found`);
      return (await store.listKeys(projectId)).map(toKeyInfo);
    },

    /** Revokes a key (of `projectId` when given); revoking a revoked key changes nothing. */
    async revokeKey(keyId: string, projectId?: string): Promise<KeyInfo> {
      const k = await store.getKey(keyId);
      if (!k || (projectId !== undefined && k.project_id !== projectId)) throw new NotFoundError(`Key ${keyId} not found`);
      await store.revokeKey(keyId, now());
      return toKeyInfo((await store.getKey(keyId)) as KeyRow);
    },

    /** The key's identity, or null when it is malformed, unknown or revoked. */
    async authenticate(key: string): Promise<AuthenticatedKey | null> {
      const presented = presentedKey(key);
      if (!presented) return null;
      return admitKey(presented, await store.findKeyByHash(presented.hash));
    },

    /** What a presented key claims (its kind) and the hash it is looked up by; null when malformed. */
    presentedKey,

    /**
     * The identity of a presented key given its stored row (looked up by `presented.hash`, possibly by a
     * query that also reads what the request is about): null when unknown, revoked or of another kind.
     * Records when the key was last used (at most once a minute per key).
     */
    admitKey,
  };

  function presentedKey(key: string): PresentedKey | null {
    const kind = keyKindOf(key);
    return kind ? { kind, hash: hashKey(key) } : null;
  }

  async function admitKey(presented: PresentedKey, row: KeyAuthRow | undefined): Promise<AuthenticatedKey | null> {
    if (!row || row.revoked_at !== null || row.kind !== presented.kind) return null;
    const t = now();
    const prev = lastTouched.get(row.id) ?? row.last_used_at ?? 0;
    if (t - prev >= TOUCH_INTERVAL_MS) {
      lastTouched.set(row.id, t);
      await store.touchKey(row.id, t);
    }
    return { keyId: row.id, projectId: row.project_id, kind: presented.kind };
  }
}

export type ProjectService = ReturnType<typeof createProjectService>;
