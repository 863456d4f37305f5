/**
 * A project's authentication as the compiled model carries it: one kind per provider, each with
 * the fields that provider needs, checked once here (the definition's JSON keeps its one
 * `authentication` object, every field optional: docs/definition.md). The built-in provider needs
 * nothing more; a custom provider its library (by name, with its code) and its create function;
 * an `oidc` provider its issuer settings.
 */
import type { LostParts } from "../definition/definition-salvage.ts";
import type { Report } from "../definition/problems.ts";
import type {
  AuthenticationDefinition,
  OidcDefinition,
  ProjectDefinition,
} from "../definition/project-definition.ts";

/** The authentication of a project whose provider is `provider`. */
export type AuthenticationOf<P extends AuthenticationModel["provider"]> = Extract<
  AuthenticationModel,
  { provider: P }
>;

export type AuthenticationModel =
  | { provider: "builtin"; settings: AuthenticationDefinition }
  | {
      provider: "custom";
      settings: AuthenticationDefinition;
      library: { name: string; code: string };
      createFunction: string;
    }
  | { provider: "oidc"; settings: AuthenticationDefinition; oidc: OidcDefinition };

/**
 * The definition's authentication, checked (problems reported); undefined when a part it needs is
 * missing (reported, or lost with a structural problem reported already).
 */
export function compileAuthentication(
  definition: ProjectDefinition,
  { lost, report }: { lost: LostParts; report: Report },
): AuthenticationModel | undefined {
  const settings = definition.authentication;
  if (settings.provider !== "oidc" && settings.oidc)
    report(["authentication", "oidc"], "only for provider 'oidc'");
  switch (settings.provider) {
    case "builtin":
      return { provider: "builtin", settings };
    case "oidc":
      if (settings.oidc) return { provider: "oidc", settings, oidc: settings.oidc };
      if (!lost.has(["authentication", "oidc"]))
        report(["authentication", "oidc"], "an oidc provider needs 'oidc' (issuer, audience, …)");
      return undefined;
    case "custom": {
      const { library, createFunction } = settings;
      const code =
        library !== undefined && Object.hasOwn(definition.libraries, library)
          ? definition.libraries[library]?.code
          : undefined;
      if (!library) report(["authentication", "library"], "a custom provider needs 'library'");
      else if (!Object.hasOwn(definition.libraries, library) && !lost.has(["libraries", library]))
        report(["authentication", "library"], `no library '${library}' in 'libraries'`);
      if (!createFunction)
        report(["authentication", "createFunction"], "a custom provider needs 'createFunction'");
      if (!library || code === undefined || !createFunction) return undefined;
      return { provider: "custom", settings, library: { name: library, code }, createFunction };
    }
  }
}
