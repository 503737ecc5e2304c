// ATR's own engine (agent-threat-rules from npm, installed by bench/evidence/run, never
// committed) over the evidence bench's texts: the anchor a user would pick instead of driftgate.
//
//   node atr.mjs ATR_PACKAGE_DIR < texts.jsonl > hits.jsonl   (an npm install's node_modules/agent-threat-rules)
//
// Each input line is {"id", "name", "text"}: one tool definition's text an agent reads. ATR
// evaluates events, not definitions; each text is offered the way ATR's MCP scan offers a tool's
// content (a `tool_response` event with the tool's name and description in its fields) and as an
// `llm_input` (so its prompt-injection rules apply too): a hit under either counts.
import { createInterface } from 'node:readline';
import { pathToFileURL } from 'node:url';
import { join } from 'node:path';

const dir = process.argv[2];
const { ATREngine } = await import(
  pathToFileURL(join(dir, 'dist/index.js')).href
);
const engine = new ATREngine({});
await engine.loadRules();
const order = ['informational', 'low', 'medium', 'high', 'critical'];
const lines = createInterface({ input: process.stdin });
for await (const line of lines) {
  if (!line.trim()) continue;
  const { id, name, text } = JSON.parse(line);
  const timestamp = new Date(0).toISOString();
  const events = [
    {
      type: 'tool_response',
      timestamp,
      content: text,
      fields: { tool_name: name, tool_description: text, tool_response: text },
    },
    { type: 'llm_input', timestamp, content: text, fields: { user_input: text } },
  ];
  const rules = new Set();
  let worst = -1;
  for (const e of events) {
    for (const m of engine.evaluate(e)) {
      rules.add(m.rule.id);
      worst = Math.max(worst, order.indexOf(m.rule.severity));
    }
  }
  process.stdout.write(
    JSON.stringify({ id, hit: rules.size > 0, severity: worst >= 0 ? order[worst] : null, rules: [...rules] }) + '\n',
  );
}
