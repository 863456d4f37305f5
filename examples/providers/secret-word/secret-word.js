/*
 * Secret word: the "hello world" of Tessera custom authentication providers.
 *
 * Anybody who knows the configured secret word may log in, under any user
 * name: the login body is {"username": "<anything>", "password": "<the word>"}.
 * The key gets the configured roles (default: "Full access").
 *
 * Register it in the project definition:
 *   "libraries": {"secretWord": {"code": "<this file>"}},
 *   "authentication": {"provider": "custom", "library": "secretWord",
 *     "createFunction": "secretWordCreate",
 *     "config": {"secretWord": "Tessera", "prompt": "What is the secret word?", "roles": ["Full access"]}}
 *
 * Not for production: everybody shares one password.
 */
// biome-ignore lint/correctness/noUnusedVariables: Tessera calls it by name (authentication.createFunction)
function secretWordCreate() {
  const settings = {
    secretWord: null,
    prompt: "What is the secret word?",
    roles: ["Full access"],
    keyLifetimeSeconds: 3600,
  };

  return {
    getConfigInfo: () => ({
      current: {
        // Never echo the secret itself.
        secretWord: settings.secretWord ? "********" : "",
        prompt: settings.prompt,
        roles: settings.roles,
        keyLifetimeSeconds: settings.keyLifetimeSeconds,
      },
      fields: [
        {
          name: "secretWord",
          display: "Secret word",
          description: "The password everybody uses",
          type: "password",
          length: 40,
        },
        {
          name: "prompt",
          display: "Prompt",
          description: "The label of the password field on the login form",
          length: 120,
        },
        {
          name: "roles",
          display: "Roles",
          description: "Roles of every key this provider issues",
          type: "json",
        },
        { name: "keyLifetimeSeconds", display: "Key lifetime (seconds)", type: "number" },
      ],
      links: [],
    }),

    configure: (values) => {
      values = values || {};
      if (typeof values.secretWord !== "string" || values.secretWord === "") {
        throw new Error("secretWord: a non-empty string is required");
      }
      settings.secretWord = values.secretWord;
      if (typeof values.prompt === "string" && values.prompt !== "") settings.prompt = values.prompt;
      if (Array.isArray(values.roles)) settings.roles = values.roles.filter((r) => typeof r === "string");
      if (typeof values.keyLifetimeSeconds === "number" && values.keyLifetimeSeconds > 0) {
        settings.keyLifetimeSeconds = values.keyLifetimeSeconds;
      }
    },

    getLoginInfo: () => ({
      fields: [
        { name: "username", display: "Your name", type: "text", length: 40 },
        { name: "password", display: settings.prompt, type: "password", length: 40 },
      ],
      links: [],
    }),

    authenticate: (payload) => {
      const username = payload && typeof payload.username === "string" ? payload.username.trim() : "";
      const password = payload && typeof payload.password === "string" ? payload.password : "";
      if (username === "") return { errorMessage: "Please tell us your name" };
      if (settings.secretWord === null || password !== settings.secretWord) {
        return { errorMessage: "Sorry, that is not the secret word" };
      }
      return {
        errorMessage: null,
        roleNames: settings.roles,
        userIdentifier: username,
        keyLifetimeSeconds: settings.keyLifetimeSeconds,
        userData: { name: username },
        userInfo: { greeting: "Hello, " + username },
      };
    },
  };
}
