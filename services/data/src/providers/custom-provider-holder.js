// Creates and configures a project's authentication provider once per isolate; runs inside the
// isolate after the library. This file is one function expression statement: custom-provider.ts
// calls it with a lookup of the library's create function, that function's name and the
// configuration as JSON text, and keeps the function it returns as a global.
(function providerHolder(lookupCreate, createName, configJson) {
  // biome-ignore lint/suspicious/noRedundantUseStrict: the isolate runs this as a script, not a module
  "use strict";
  let ready;
  // biome-ignore lint/complexity/useArrowFunction: the holder stays an ordinary function, as it was
  return function () {
    if (ready === undefined) {
      const attempt = (async () => {
        const create = lookupCreate();
        if (typeof create !== "function") throw new Error("The library defines no function " + createName);
        const provider = await create();
        if (provider === null || (typeof provider !== "object" && typeof provider !== "function")) {
          throw new Error(createName + " did not return a provider object");
        }
        if (typeof provider.configure === "function") {
          await provider.configure(JSON.parse(configJson));
        }
        return provider;
      })();
      ready = attempt;
      attempt.catch(() => {
        if (ready === attempt) ready = undefined;
      });
    }
    return ready;
  };
});
