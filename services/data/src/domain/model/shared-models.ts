/**
 * Compiled project models, made cheap to make again and sized for a memory
 * budget. What a model holds besides its identity (tables, API versions, roles,
 * rules) depends on the definition alone, so projects whose stored definitions
 * are the same text — one application deployed for many accounts, a revision
 * that changed nothing — share one compilation: a cold project whose
 * definition was compiled recently costs one hash, not a parse and a compile.
 *
 * A model's memory is estimated from its definition's size (measured: a
 * two-table project's model takes about 10 KiB of heap, its definition 377
 * bytes of JSON; a six-table one about 20 KiB for 1.3 KB; a model sharing its
 * compilation about 780 bytes), so that caches of models can be bounded by
 * bytes rather than by a count.
 */
import { createHash } from "node:crypto";
import { LRUCache } from "lru-cache";
import { type ProjectDefinition, parseDefinitionStructure } from "../definition/project-definition.ts";
import {
  compileProject,
  type ProjectIdentity,
  type ProjectModel,
  UNSERVED_IDENTITY,
} from "./project-model.ts";

/** Heap bytes per byte of definition JSON, and per model whatever its size (see the file comment). */
const BYTES_PER_DEFINITION_BYTE = 16;
const BYTES_PER_MODEL = 4096;
/** Heap bytes of a model's own object (its identity) beyond the parts it shares, and of its id strings. */
const BYTES_PER_IDENTITY = 600;

/** Estimated heap bytes of a model compiled from a definition of `definitionBytes` bytes of JSON. */
export function estimatedModelBytes(definitionBytes: number): number {
  return BYTES_PER_MODEL + BYTES_PER_DEFINITION_BYTE * definitionBytes;
}

type SharedParts = Omit<ProjectModel, keyof ProjectIdentity>;

export class SharedModels {
  /** Compilations by the hash of their definition's text, the most recently used within the budget. */
  readonly #compiled: LRUCache<string, SharedParts>;
  /** Each shared definition's estimated bytes (what a model of it costs a cache). */
  readonly #bytes = new WeakMap<ProjectDefinition, number>();
  /** How many models held by a cache share each definition's compilation (held / released). */
  readonly #holders = new WeakMap<ProjectDefinition, number>();

  constructor(budgetBytes: number) {
    this.#compiled = new LRUCache<string, SharedParts>({
      maxSize: Math.max(1, Math.floor(budgetBytes)),
      sizeCalculation: (parts) => this.#bytes.get(parts.definition) ?? BYTES_PER_MODEL,
    });
  }

  /**
   * The model of `identity` with the stored definition `stored`; throws when the
   * definition no longer parses or compiles (`what` names the project).
   */
  model(identity: ProjectIdentity, stored: unknown, what: string): ProjectModel {
    const text = JSON.stringify(stored);
    const hash = createHash("sha256").update(text).digest("base64url");
    let parts = this.#compiled.get(hash);
    if (!parts) {
      parts = compileParts(stored, what);
      this.#bytes.set(parts.definition, estimatedModelBytes(text.length));
      this.#compiled.set(hash, parts);
    }
    return { ...identity, ...parts };
  }

  /**
   * A cache holds `model` from now on: its estimated heap bytes, its own and its share of the
   * compilation it shares with the others held (the first holder pays for all of it).
   */
  held(model: ProjectModel): number {
    const holders = (this.#holders.get(model.definition) ?? 0) + 1;
    this.#holders.set(model.definition, holders);
    const { account, name, uid, storage } = model;
    const strings =
      account.length + name.length + uid.length + storage.database.length + storage.collectionPrefix.length;
    const own = BYTES_PER_IDENTITY + 2 * strings;
    return Math.ceil(own + (this.#bytes.get(model.definition) ?? BYTES_PER_MODEL) / holders);
  }

  /** A cache no longer holds `model`. */
  released(model: ProjectModel): void {
    const holders = (this.#holders.get(model.definition) ?? 1) - 1;
    if (holders > 0) this.#holders.set(model.definition, holders);
    else this.#holders.delete(model.definition);
  }
}

function compileParts(stored: unknown, what: string): SharedParts {
  const parsed = parseDefinitionStructure(stored);
  if (!parsed.ok) throw new Error(`stored definition of ${what} no longer parses`);
  const compiled = compileProject(UNSERVED_IDENTITY, parsed.definition);
  if (!compiled.ok) throw new Error(`stored definition of ${what} no longer compiles`);
  const { account, name, uid, revision, storage, ...parts } = compiled.model;
  return parts;
}
