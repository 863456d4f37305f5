/*
 * Identity service: delegates logins to an external HTTP identity service.
 *
 *   POST {baseUrl}/authenticate   {"username", "password"}
 *     -> 200 {"ok": true, "groups": ["sales", ...], "userData": {...}, "displayName": "..."}
 *     -> 200 {"ok": false, "message": "..."}  (or 401/403)
 *   POST {baseUrl}/password       {"username", "password", "newPassword"}
 *     -> 200 {"ok": true} | {"ok": false, "message": "..."}
 *
 * Groups map to project roles through config.groupRoles ({"group": "Role"});
 * without groupRoles a group name is used as the role name. userData becomes
 * the key's globals (for row filters such as "region = @{region}").
 *
 * Register it in the project definition:
 *   "libraries": {"identityService": {"code": "<this file>"}},
 *   "authentication": {"provider": "custom", "library": "identityService",
 *     "createFunction": "identityServiceCreate",
 *     "allowedHosts": ["id.example.com"],
 *     "config": {"baseUrl": "https://id.example.com/api",
 *                "groupRoles": {"sales": "Region reader", "admins": "Full access"}}}
 *
 * The host of baseUrl must be in authentication.allowedHosts, or every call
 * of tessera.fetchJson fails.
 */
// biome-ignore lint/correctness/noUnusedVariables: Tessera calls it by name (authentication.createFunction)
function identityServiceCreate() {
  const settings = { baseUrl: null, groupRoles: null, timeoutMs: 3000, apiKey: null };

  function post(path, body) {
    const headers = {};
    if (settings.apiKey) headers.authorization = "Bearer " + settings.apiKey;
    return tessera.fetchJson(settings.baseUrl + path, {
      method: "POST",
      headers: headers,
      body: body,
      timeoutMs: settings.timeoutMs,
    });
  }

  function rolesOf(groups) {
    const roles = [];
    for (const group of groups) {
      if (typeof group !== "string") continue;
      const role = settings.groupRoles ? settings.groupRoles[group] : group;
      if (typeof role === "string" && !roles.includes(role)) roles.push(role);
    }
    return roles;
  }

  async function changePassword(payload) {
    // The built-in provider's documentation names it both ways; accept both.
    const newPassword = payload.newPassword !== undefined ? payload.newPassword : payload.new_password;
    if (typeof newPassword !== "string" || newPassword === "") {
      return {
        changePasswordResult: "failure",
        changePasswordMessage: "No new password was given (newPassword)",
      };
    }
    try {
      const res = await post("/password", {
        username: payload.username,
        password: payload.password,
        newPassword: newPassword,
      });
      if (res.status === 200 && res.body && res.body.ok === true) {
        return { changePasswordResult: "success", changePasswordMessage: "Your password was changed" };
      }
      const why =
        res.body && typeof res.body.message === "string" ? res.body.message : "status " + res.status;
      return { changePasswordResult: "failure", changePasswordMessage: why };
    } catch {
      return {
        changePasswordResult: "failure",
        changePasswordMessage: "The identity service could not be reached",
      };
    }
  }

  return {
    getConfigInfo: () => ({
      current: { baseUrl: settings.baseUrl, groupRoles: settings.groupRoles, timeoutMs: settings.timeoutMs },
      fields: [
        {
          name: "baseUrl",
          display: "Identity service URL",
          description: "e.g. https://id.example.com/api",
          length: 200,
        },
        { name: "groupRoles", display: "Group to role map", description: '{"group": "Role"}', type: "json" },
        { name: "timeoutMs", display: "Request timeout (ms)", type: "number" },
        { name: "apiKey", display: "API key for the identity service", type: "password" },
      ],
      links: [],
    }),

    configure: (values) => {
      values = values || {};
      if (typeof values.baseUrl !== "string" || !/^https?:\/\//.test(values.baseUrl)) {
        throw new Error("baseUrl: an http(s) URL is required");
      }
      settings.baseUrl = values.baseUrl.replace(/\/+$/, "");
      if (values.groupRoles && typeof values.groupRoles === "object") settings.groupRoles = values.groupRoles;
      if (typeof values.timeoutMs === "number" && values.timeoutMs > 0) settings.timeoutMs = values.timeoutMs;
      if (typeof values.apiKey === "string") settings.apiKey = values.apiKey;
    },

    getLoginInfo: () => ({
      fields: [
        { name: "username", display: "User name", type: "text", length: 60 },
        { name: "password", display: "Password", type: "password", length: 60 },
      ],
      links: [],
    }),

    authenticate: async (payload, enablePasswordChange) => {
      if (!payload || typeof payload.username !== "string" || typeof payload.password !== "string") {
        return { errorMessage: "A user name and a password are required" };
      }
      let res;
      try {
        res = await post("/authenticate", { username: payload.username, password: payload.password });
      } catch {
        return { errorMessage: "The identity service could not be reached" };
      }
      const body = res.body;
      if (res.status !== 200 || !body || body.ok !== true) {
        return {
          errorMessage:
            body && typeof body.message === "string" ? body.message : "Unknown user or wrong password",
        };
      }
      const result = {
        errorMessage: null,
        roleNames: rolesOf(Array.isArray(body.groups) ? body.groups : []),
        userIdentifier: payload.username,
        keyLifetimeSeconds: 3600,
        userData: body.userData && typeof body.userData === "object" ? body.userData : {},
        userInfo: { displayName: typeof body.displayName === "string" ? body.displayName : payload.username },
      };
      if (enablePasswordChange) {
        const change = await changePassword(payload);
        result.changePasswordResult = change.changePasswordResult;
        result.changePasswordMessage = change.changePasswordMessage;
      }
      return result;
    },
  };
}
