// A copy, in the thread that prepares events, of the dictionary ids the SQLite ingest writer (in its worker
// thread) has committed: path → id, visitor key → ordinal, user agent → id, per project.
//
// Why: the writer is the busiest thread of ingest, and looking each distinct string of a batch up in its
// caches was a seventh of its time. The preparing thread has time to spare, so it looks them up here and
// sends the ids it knows with the batch (WriteBatch.known); the writer looks up only the rest, and reports
// back the ids it found for them (Learned) once their transaction committed.
//
// Safe for the same reason the writer's own caches are: a dictionary entry, once committed, keeps its id
// (paths, visitors and user agents are never updated or deleted). An id missing here only costs the writer
// a lookup; ids arrive only after their transaction committed.

import { GenerationCache, Lru } from '../../lru.ts';
import { type Learned, type LearnedIds, NO_STRING, R_PATH, R_UA, R_VKEY, REF_WIDTH, USER_AGENT_CACHE, type WriteBatch } from '../write-batch.ts';

interface ProjectMirror {
  paths: GenerationCache<string, number>;
  visitors: GenerationCache<string, number>;
  userAgents: GenerationCache<string, number>;
}

/** Per string index of a batch: the id known for it in one role, 0 when unknown, -1 when not used so. */
function knownFor(b: WriteBatch, field: number, cache: GenerationCache<string, number>): Float64Array {
  const ids = new Float64Array(b.strings.length).fill(-1);
  for (let i = 0; i < b.n; i++) {
    const r = b.refs[i * REF_WIDTH + field] as number;
    if (r === NO_STRING || ids[r] !== -1) continue;
    ids[r] = cache.get(b.strings[r] as string) ?? 0;
  }
  return ids;
}

export class DictionaryMirror {
  private readonly projects = new Lru<string, ProjectMirror>(64);

  constructor(private readonly entries: number) {}

  private mirrorOf(projectId: string): ProjectMirror {
    let m = this.projects.get(projectId);
    if (!m) {
      m = {
        paths: new GenerationCache(this.entries),
        visitors: new GenerationCache(this.entries),
        // Bounded like the writer's own user-agent cache.
        userAgents: new GenerationCache(Math.min(this.entries, USER_AGENT_CACHE)),
      };
      this.projects.set(projectId, m);
    }
    return m;
  }

  /** Sets `batch.known` from what this mirror holds for the project. */
  fill(projectId: string, batch: WriteBatch): void {
    const m = this.mirrorOf(projectId);
    batch.known = { paths: knownFor(batch, R_PATH, m.paths), visitors: knownFor(batch, R_VKEY, m.visitors), userAgents: knownFor(batch, R_UA, m.userAgents) };
  }

  /** Takes in ids the writer committed. */
  learn(projectId: string, learned: Learned): void {
    const m = this.mirrorOf(projectId);
    const add = (cache: GenerationCache<string, number>, l: LearnedIds) => {
      for (let i = 0; i < l.keys.length; i++) cache.set(l.keys[i] as string, l.ids[i] as number);
    };
    add(m.paths, learned.paths);
    add(m.visitors, learned.visitors);
    add(m.userAgents, learned.userAgents);
  }

  clear(): void {
    this.projects.clear();
  }
}
