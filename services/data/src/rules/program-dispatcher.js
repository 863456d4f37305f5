// The rules dispatcher; runs inside the isolate. Kept free of anything rule code could tamper with
// mid-call. This file is one function expression: rules/program.ts calls it with the program's
// rule, table and body descriptions and publishes the entry point it returns.
(function dispatcher(RULES, TABLES, BODIES) {
  const FNS = BODIES.map((body) => new Function("row", "oldRow", "logicContext", body));
  const JSONstringify = JSON.stringify;
  const isFiniteNumber = Number.isFinite;
  const freeze = Object.freeze;

  const ProxyCtor = Proxy;

  class RuleFailure extends Error {}
  class RowNotStoredYet extends Error {}

  function same(a, b) {
    if (a === b) return true;
    if (a === null || b === null || typeof a !== "object" || typeof b !== "object") return false;
    return JSONstringify(a) === JSONstringify(b);
  }

  function deepFreeze(v) {
    if (v !== null && typeof v === "object" && !Object.isFrozen(v)) {
      freeze(v);
      for (const k of Object.keys(v)) deepFreeze(v[k]);
    }
    return v;
  }

  function columnsOf(table, row) {
    const out = {};
    for (const c of TABLES[table].columns) out[c] = row[c] === undefined ? null : row[c];
    return out;
  }

  function snapshot(table, row) {
    return JSONstringify(columnsOf(table, row));
  }

  function plain(v) {
    if (v === undefined) return null;
    if (typeof v === "number" && !isFiniteNumber(v))
      throw new RuleFailure("returned " + String(v) + ", not a finite number");
    if (v instanceof Date) return v.toISOString();
    if (v !== null && typeof v === "object") return JSON.parse(JSONstringify(v));
    if (typeof v === "function" || typeof v === "symbol" || typeof v === "bigint")
      throw new RuleFailure("returned a " + typeof v);
    return v;
  }

  function newIo() {
    return { inserts: [], fired: [], calls: 0, stopped: false };
  }

  /**
   * What logicContext.insert returns before the row is stored: reading it stops
   * the run (the host stores the row and runs the task again, when the row is
   * handed back by position), or fails where rows cannot be handed back.
   */
  function rowNotStoredYet(io, canRead) {
    const stop = () => {
      if (!canRead)
        throw new RuleFailure(
          "the row logicContext.insert returns can be read in events only (early events and formulas run before it is stored)",
        );
      io.stopped = true;
      throw new RowNotStoredYet("the inserted row is not stored yet");
    };
    return new ProxyCtor(
      {},
      {
        get: stop,
        set: stop,
        has: stop,
        ownKeys: stop,
        getOwnPropertyDescriptor: stop,
        defineProperty: stop,
        deleteProperty: stop,
        getPrototypeOf: stop,
      },
    );
  }

  function makeContext(task, io, canInsert, canRead) {
    return freeze({
      verb: task.verb,
      initialVerb: task.initialVerb,
      insert(table, values) {
        if (!canInsert)
          throw new RuleFailure(
            "logicContext.insert is not available here (commit events cannot change rows)",
          );
        if (typeof table !== "string") throw new RuleFailure("logicContext.insert needs a table name");
        if (values === null || typeof values !== "object" || Array.isArray(values))
          throw new RuleFailure("logicContext.insert needs an object of column values");
        const n = io.calls++;
        const given = task.given;
        if (given !== undefined && n < given.length) {
          if (given[n].table !== table)
            throw new RuleFailure(
              "logicContext.insert was called for '" +
                table +
                "' where the previous run inserted into '" +
                given[n].table +
                "' (the code must insert in the same order when it runs again)",
            );
          return given[n].row === null ? null : JSON.parse(JSONstringify(given[n].row));
        }
        io.inserts.push({ rule: current, table, values: JSON.parse(JSONstringify(values)) });
        return rowNotStoredYet(io, canRead);
      },
    });
  }

  let current = -1;

  function call(rule, fn, row, oldRow, ctx) {
    current = rule;
    const v = FNS[fn](row, oldRow, ctx);
    if (v !== null && typeof v === "object" && typeof v.then === "function")
      throw new RuleFailure("returned a promise; rules run synchronously");
    return v;
  }

  function runPass(task, io) {
    const info = TABLES[task.table];
    const { inserts, fired } = io;
    const ctx = makeContext(task, io, true, false);
    const row = task.row;
    const oldRow = task.oldRow === null ? null : freeze(task.oldRow);
    for (const k of Object.keys(row)) {
      if (!info.columns.includes(k) && row[k] !== null && typeof row[k] === "object") deepFreeze(row[k]);
    }
    const all = task.dirty === null;
    const dirty = new Set(all ? [] : task.dirty);
    if (task.early) {
      const before = columnsOf(task.table, row);
      for (const r of info.early) {
        call(r, RULES[r].fn, row, oldRow, ctx);
        fired.push(r);
      }
      if (task.deleted) Object.assign(row, before);
      for (const c of info.columns)
        if (!same(row[c], before[c])) {
          row[c] = plain(row[c]);
          dirty.add(c);
        }
    }
    if (!task.deleted) {
      for (const r of task.copies) {
        const rule = RULES[r];
        let parent = row;
        for (const role of rule.role.split("."))
          parent = parent === null || parent === undefined ? null : parent[role];
        const v = parent === null || parent === undefined ? null : parent[rule.from];
        row[rule.col] = v === undefined ? null : v;
        dirty.add(rule.col);
        fired.push(r);
      }
      for (const r of info.formulas) {
        const rule = RULES[r];
        if (!all && !rule.deps.some((d) => dirty.has(d))) continue;
        current = r;
        const v = plain(call(r, rule.fn, row, oldRow, ctx));
        if (!same(v, row[rule.col] === undefined ? null : row[rule.col])) dirty.add(rule.col);
        row[rule.col] = v;
        fired.push(r);
      }
    }
    const whereNew = {};
    const whereOld = {};
    for (const w of task.wheres) {
      const rule = RULES[w.rule];
      if (!task.deleted)
        whereNew[w.rule] = Boolean(call(w.rule, rule.where, freeze(columnsOf(task.table, row)), null, ctx));
      if (w.old && oldRow !== null) whereOld[w.rule] = Boolean(call(w.rule, rule.where, oldRow, null, ctx));
    }
    return { row: columnsOf(task.table, row), fired, inserts, whereNew, whereOld };
  }

  function runSettle(task, io) {
    const info = TABLES[task.table];
    const { inserts, fired } = io;
    const commit = task.phase === "commit";
    const ctx = makeContext(task, io, !commit, !commit);
    const row = task.row;
    for (const k of Object.keys(row)) {
      if (!info.columns.includes(k) && row[k] !== null && typeof row[k] === "object") deepFreeze(row[k]);
    }
    const oldRow = task.oldRow === null ? null : freeze(task.oldRow);
    const before = snapshot(task.table, row);
    const unchanged = (r) => {
      if (snapshot(task.table, row) !== before)
        throw new RuleFailure(
          "changed its row; only early events and formulas may change a row (" +
            RULES[r].type +
            " runs after the row's logic)",
        );
    };
    if (!task.deleted && task.part !== "events") {
      for (const r of commit ? info.commitValidations : info.validations) {
        const ok = call(r, RULES[r].fn, row, oldRow, ctx);
        unchanged(r);
        fired.push(r);
        if (!ok) return { fired, inserts, failed: r };
      }
    }
    for (const r of task.part === "validations" ? [] : commit ? info.commitEvents : info.events) {
      call(r, RULES[r].fn, row, oldRow, ctx);
      unchanged(r);
      fired.push(r);
    }
    return { fired, inserts };
  }

  function runWhere(task) {
    const rule = RULES[task.rule];
    const ctx = makeContext({ verb: "UPDATE", initialVerb: "UPDATE" }, newIo(), false, false);
    return { values: task.rows.map((row) => Boolean(call(task.rule, rule.where, freeze(row), null, ctx))) };
  }

  function describe(e) {
    if (e instanceof Error)
      return { name: e instanceof RuleFailure ? "RuleError" : String(e.name), message: String(e.message) };
    if (e !== null && typeof e === "object" && typeof e.message === "string")
      return { name: "Error", message: e.message };
    return { name: "Error", message: String(e) };
  }

  function tesseraRules(input) {
    const results = [];
    for (const task of input.tasks) {
      const io = newIo();
      let result;
      try {
        result =
          task.t === "pass" ? runPass(task, io) : task.t === "settle" ? runSettle(task, io) : runWhere(task);
      } catch (e) {
        result = io.stopped ? undefined : { error: { rule: current, ...describe(e) } };
      }
      // Stopped by reading a row not stored yet (even if the code caught that): run again once it is.
      if (io.stopped) result = { fired: io.fired, inserts: io.inserts, incomplete: true };
      results.push(result);
      if (result.error || result.failed !== undefined) break;
    }
    return results;
  }

  return tesseraRules;
});
