// mcpclient.mjs drives an MCP server with the official TypeScript SDK's Client, for Go tests
// (native/internal/mcpnode). It is ours, not the SDK's; the SDK comes from the folder in
// CASKG_MCP_NPM (make mcp-npm), resolved from there because ES modules resolve bare names from
// the script's own folder, which has no node_modules.
//
//   node mcpclient.mjs TARGET [STEPS]
//
// TARGET is JSON: {"command", "args", "env", "cwd"} for a server over stdio (its stderr goes to
// ours), or {"url", "headers"} for streamable HTTP. STEPS is a JSON array of steps; without it
// the steps come one JSON object a line on stdin, each answered as it arrives, until EOF.
// Every answer is one JSON line: {"op", "ok": true, "result"} or {"op", "ok": false, "error",
// "code"}. The first line answers the connection itself (op "connect": server info,
// capabilities, instructions, session id).
//
// With "answers" ({"sampling", "model", "elicit", "roots"}) in TARGET the client declares
// sampling, elicitation and roots and answers the server's requests for them: sampling with
// the text "SAMPLING (first message's text)" from MODEL, elicitation by accepting ELICIT as
// the content, roots/list with the URIs of ROOTS.
//
// Steps: {"op": "listTools"} (every page); {"op": "callTool", "name", "arguments",
// "timeoutMs", "abortAfterMs", "progress": true (the answer carries the progress
// notifications in "progress")}; {"op": "ping"}; {"op": "setLoggingLevel", "level"};
// {"op": "notifications"} (those received since the last such step, other than progress);
// {"op": "close"}.
import { createRequire } from "node:module";
import path from "node:path";
import readline from "node:readline";

const npm = process.env.CASKG_MCP_NPM;
if (!npm) {
  console.error("mcpclient: CASKG_MCP_NPM is not set (make mcp-npm installs the SDK and sets it)");
  process.exit(2);
}
const require = createRequire(path.join(path.resolve(npm), "package.json"));
const { Client } = require("@modelcontextprotocol/sdk/client/index.js");
const { StdioClientTransport } = require("@modelcontextprotocol/sdk/client/stdio.js");
const { StreamableHTTPClientTransport } = require("@modelcontextprotocol/sdk/client/streamableHttp.js");
const { CreateMessageRequestSchema, ElicitRequestSchema, ListRootsRequestSchema } = require("@modelcontextprotocol/sdk/types.js");

function out(obj) {
  process.stdout.write(JSON.stringify(obj) + "\n");
}

function failure(op, err) {
  const r = { op, ok: false, error: err instanceof Error ? err.message : String(err) };
  if (err && typeof err.code === "number") r.code = err.code;
  return r;
}

const target = JSON.parse(process.argv[2] ?? "null");
if (!target || typeof target !== "object") {
  console.error("mcpclient: the first argument must be a JSON object, the target");
  process.exit(2);
}

let transport;
if (target.url) {
  transport = new StreamableHTTPClientTransport(new URL(target.url), {
    requestInit: { headers: target.headers ?? {} },
  });
} else if (target.command) {
  transport = new StdioClientTransport({
    command: target.command,
    args: target.args ?? [],
    env: target.env, // added to the SDK's safe default environment
    cwd: target.cwd,
    stderr: "inherit",
  });
} else {
  console.error('mcpclient: the target needs "url" or "command"');
  process.exit(2);
}

const answers = target.answers;
const client = new Client(
  { name: "caskg-mcpclient", version: "1.0.0" },
  { capabilities: answers ? { sampling: {}, elicitation: { form: {} }, roots: { listChanged: true } } : {} },
);
if (answers) {
  client.setRequestHandler(CreateMessageRequestSchema, async (req) => {
    const first = req.params.messages?.[0]?.content;
    return {
      role: "assistant",
      model: answers.model ?? "caskg-test-model",
      content: { type: "text", text: `${answers.sampling ?? ""} (${first?.text ?? ""})` },
    };
  });
  client.setRequestHandler(ElicitRequestSchema, async () => ({ action: "accept", content: answers.elicit ?? {} }));
  client.setRequestHandler(ListRootsRequestSchema, async () => ({
    roots: (answers.roots ?? []).map((uri) => ({ uri, name: uri.split("/").pop() })),
  }));
}
const notifications = [];
client.fallbackNotificationHandler = async (n) => {
  notifications.push(n);
};

try {
  await client.connect(transport);
} catch (err) {
  out(failure("connect", err));
  process.exit(1);
}
out({
  op: "connect",
  ok: true,
  result: {
    serverInfo: client.getServerVersion(),
    capabilities: client.getServerCapabilities(),
    instructions: client.getInstructions(),
    sessionId: transport.sessionId,
  },
});

async function listTools() {
  const tools = [];
  let cursor;
  for (let page = 0; page < 10000; page++) {
    const r = await client.listTools(cursor ? { cursor } : {});
    tools.push(...r.tools);
    cursor = r.nextCursor;
    if (!cursor) return { tools };
  }
  throw new Error("listTools: more than 10000 pages");
}

async function callTool(step) {
  const opts = {};
  if (step.timeoutMs) opts.timeout = step.timeoutMs;
  if (step.abortAfterMs) opts.signal = AbortSignal.timeout(step.abortAfterMs);
  const progress = [];
  if (step.progress) opts.onprogress = (p) => progress.push(p);
  const result = await client.callTool({ name: step.name, arguments: step.arguments ?? {} }, undefined, opts);
  return { result, progress };
}

async function run(step) {
  const op = step?.op;
  try {
    switch (op) {
      case "listTools":
        return { op, ok: true, result: await listTools() };
      case "callTool": {
        const { result, progress } = await callTool(step);
        return step.progress ? { op, ok: true, result, progress } : { op, ok: true, result };
      }
      case "ping":
        return { op, ok: true, result: await client.ping() };
      case "setLoggingLevel":
        return { op, ok: true, result: await client.setLoggingLevel(step.level) };
      case "notifications":
        return { op, ok: true, result: notifications.splice(0) };
      case "close":
        return { op, ok: true, result: {} };
      default:
        return failure(String(op), new Error(`unknown op ${JSON.stringify(op)}`));
    }
  } catch (err) {
    return failure(op, err);
  }
}

async function close() {
  if (transport instanceof StreamableHTTPClientTransport && transport.sessionId) {
    await transport.terminateSession().catch(() => {});
  }
  await client.close();
}

if (process.argv[3] !== undefined) {
  const steps = JSON.parse(process.argv[3]);
  for (const step of steps) {
    out(await run(step));
    if (step.op === "close") break;
  }
} else {
  const lines = readline.createInterface({ input: process.stdin, crlfDelay: Infinity });
  for await (const line of lines) {
    if (!line.trim()) continue;
    let step;
    try {
      step = JSON.parse(line);
    } catch (err) {
      out(failure("parse", err));
      continue;
    }
    out(await run(step));
    if (step.op === "close") break;
  }
}
await close();
process.exit(0);
