/**
 * Project definitions at rest: the values of their secret fields (a custom provider's `config`,
 * domain/definition/definition-secrets.ts) are sealed under SECRETS_KEY (store/secret-box.ts) in
 * the JSON the project record and each revision record keep, and opened when read, so that a copy
 * of MongoDB without the key holds no provider secret. Everything above the stores sees plain
 * definitions. A value that does not open (sealed under a key this process lacks) stays sealed:
 * the provider then fails its logins, nothing else of the project does, and a warning says why.
 * Without a key, definitions are stored as they are.
 */
import type { Model } from "mongoose";
import type { Logger } from "../../../../shared/logger.ts";
import { isSealed, type SecretBox, SecretBoxError } from "./secret-box.ts";

/** What re-sealing needs of a stored record: its id and the JSON of its definition. */
export interface DefinitionRecord {
  _id: string;
  definitionJson: string;
}

/** A copy of a definition with each secret field's value replaced by `change(value)` (the domain's). */
export type SecretFieldsMap = <T>(definition: T, change: (value: unknown) => unknown) => T;

export class DefinitionSealing {
  readonly #box: SecretBox;
  readonly #logger: Logger;
  readonly #mapSecrets: SecretFieldsMap;
  #warned = false;

  /** `mapSecrets`: which fields are secret is the definition's business (definition-secrets.ts). */
  constructor(box: SecretBox, logger: Logger, mapSecrets: SecretFieldsMap) {
    this.#box = box;
    this.#logger = logger;
    this.#mapSecrets = mapSecrets;
  }

  /** The JSON text to store for `definition`: its secret values sealed (one sealed already stays so). */
  stored(definition: unknown): string {
    if (!this.#box.seals) return JSON.stringify(definition);
    return JSON.stringify(
      this.#mapSecrets(definition, (value) =>
        isSealed(value) ? value : this.#box.seal(JSON.stringify(value)),
      ),
    );
  }

  /** The definition stored as `json`, its secret values opened. */
  definition(json: string): unknown {
    const parsed: unknown = JSON.parse(json);
    if (!json.includes('"tsealed1:')) return parsed;
    return this.#mapSecrets(parsed, (value) => {
      if (!isSealed(value)) return value;
      try {
        return JSON.parse(this.#box.open(value));
      } catch (err) {
        if (!(err instanceof SecretBoxError)) throw err;
        if (!this.#warned)
          this.#logger.warn(
            { reason: err.message },
            "a project definition's secret does not open with this process's SECRETS_KEY; its provider cannot use it",
          );
        this.#warned = true;
        return value;
      }
    });
  }

  /**
   * `json` with every secret value sealed under the current key, when one is not (stored as it
   * was, or under an older key); undefined when all are, or when there is no key.
   */
  resealed(json: string): string | undefined {
    if (!this.#box.seals) return undefined;
    let changed = false;
    const parsed: unknown = JSON.parse(json);
    const next = this.#mapSecrets(parsed, (value) => {
      if (isSealed(value) && this.#box.sealsCurrent(value)) return value;
      try {
        const plain = isSealed(value) ? this.#box.open(value) : JSON.stringify(value);
        changed = true;
        return this.#box.seal(plain);
      } catch (err) {
        if (!(err instanceof SecretBoxError)) throw err;
        return value;
      }
    });
    return changed ? JSON.stringify(next) : undefined;
  }

  /**
   * Seals again, under the current key, the definitions of `records` (a collection of project or
   * revision records) that have a secret value stored otherwise; how many records changed. A
   * record whose JSON changed meanwhile is left as it is (compare-and-set on the JSON).
   */
  async resealRecords<T extends DefinitionRecord>(records: Model<T>): Promise<number> {
    // Through the model, so that its queries keep their time limit (meta-model.ts).
    const model = records as unknown as Model<DefinitionRecord>;
    let changed = 0;
    const docs = model
      .find({ definitionJson: /"config"/ }, { _id: 1, definitionJson: 1 })
      .lean<DefinitionRecord[]>()
      .cursor();
    for await (const doc of docs) {
      const resealed = this.resealed(doc.definitionJson);
      if (resealed === undefined) continue;
      const result = await model
        .updateOne(
          { _id: doc._id, definitionJson: doc.definitionJson },
          { $set: { definitionJson: resealed } },
        )
        .exec();
      changed += result.modifiedCount;
    }
    return changed;
  }
}
