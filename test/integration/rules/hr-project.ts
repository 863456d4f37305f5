/** A small HR project (dept / emp / audit) that uses every rule type, with hooks for the failure tests. */
// biome-ignore lint/suspicious/noExplicitAny: a JSON definition that tests modify freely
export function hrProject(): any {
  return {
    tables: {
      dept: {
        key: ["name"],
        columns: {
          name: { type: "string", required: true },
          code: { type: "string" },
          budget: { type: "number", default: 100000 },
          bonus_rate: { type: "number", default: 0 },
          headcount: { type: "integer", default: 0 },
          payroll: { type: "number", default: 0 },
          max_salary: { type: "number" },
          min_salary: { type: "number" },
          audit_count: { type: "integer", default: 0 },
        },
      },
      emp: {
        key: ["id"],
        columns: {
          id: { type: "integer", generated: true },
          dept_name: { type: "string", required: true },
          name: { type: "string", required: true },
          label: { type: "string" },
          salary: { type: "number", default: 0 },
          bonus: { type: "number" },
          total_comp: { type: "number" },
          dept_code: { type: "string" },
        },
        parents: { dept: { table: "dept", columns: { dept_name: "name" }, children: "emps" } },
      },
      audit: {
        key: ["id"],
        columns: {
          id: { type: "integer", generated: true },
          dept_name: { type: "string", required: true },
          emp_id: { type: "integer" },
          action: { type: "string" },
          summary: { type: "string" },
        },
        parents: { dept: { table: "dept", columns: { dept_name: "name" }, children: "audits" } },
      },
    },
    rules: [
      { table: "dept", type: "count", column: "headcount", children: "emps" },
      { table: "dept", type: "sum", column: "payroll", children: "emps", of: "total_comp" },
      { table: "dept", type: "max", column: "max_salary", children: "emps", of: "salary" },
      {
        table: "dept",
        type: "min",
        column: "min_salary",
        children: "emps",
        of: "salary",
        where: "row.salary > 0",
      },
      { table: "dept", type: "count", column: "audit_count", children: "audits" },
      {
        name: "payroll within budget",
        table: "dept",
        type: "validation",
        expression: "row.payroll <= row.budget",
        message: "payroll {payroll} of {name} exceeds budget {budget}",
      },
      {
        name: "no commit inserts",
        table: "dept",
        type: "commitEvent",
        code: "if (row.code === 'commit-insert') logicContext.insert('audit', {dept_name: row.name})",
      },
      { table: "emp", type: "managedParent", parent: "dept" },
      {
        name: "label",
        table: "emp",
        type: "earlyEvent",
        code: "if (typeof row.name === 'string') row.label = row.name.toUpperCase();",
      },
      { table: "emp", type: "parentCopy", column: "dept_code", parent: "dept", from: "code" },
      {
        name: "total",
        table: "emp",
        type: "formula",
        column: "total_comp",
        expression: "row.salary + row.bonus",
      },
      {
        name: "bonus",
        table: "emp",
        type: "formula",
        column: "bonus",
        expression: "if (row.name === 'spin') { for (;;) {} }\nreturn row.salary * row.dept.bonus_rate;",
      },
      {
        name: "audit emp",
        table: "emp",
        type: "event",
        code: [
          "if (row.name === 'boom') throw new Error('boom goes the rule');",
          "if (row.name === 'mutate') row.salary = 1;",
          "logicContext.insert('audit', {dept_name: row.dept_name, emp_id: row.id, action: logicContext.verb + '/' + logicContext.initialVerb});",
        ].join("\n"),
      },
      {
        name: "audit summary",
        table: "audit",
        type: "formula",
        column: "summary",
        expression: "row.action + ' #' + row.emp_id",
      },
      {
        name: "runaway",
        table: "audit",
        type: "event",
        code: "if (row.action === 'loop') logicContext.insert('audit', {dept_name: row.dept_name, action: 'loop'})",
      },
    ],
    apiVersions: { v1: { resources: {} } },
    roles: { "Full access": { tables: { "*": { access: ["read", "insert", "update", "delete"] } } } },
  };
}
