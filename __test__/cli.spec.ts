// The `pi-native` command line (issue 11, item 3), driven as a subprocess: help, repair (argument,
// stdin, --json, exit codes), grammar, chat against a loopback provider (NDJSON chunks, the key from
// the environment, Ctrl-C), record -> replay reproducing the same chunks offline, bad usage.
import { spawn } from "node:child_process";
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterEach, describe, expect, it } from "vitest";
import { builtinToolSchema } from "../lib/tool-schemas.js";
import { piBuiltinSchema, PI_BUILTIN_TOOL_NAMES } from "./helpers/pi-tools.js";
import { collectMarkers } from "./helpers/typebox-markers.js";
import { type Any, closeServersAfterEach, completionsFrame, COMPLETIONS_USAGE_FRAME, loopbackServer, sleep } from "./chat/support.js";

closeServersAfterEach();

const BIN = fileURLToPath(new URL("../bin/pi-native.mjs", import.meta.url));
const dirs: string[] = [];
afterEach(() => {
  while (dirs.length) rmSync(dirs.pop()!, { recursive: true, force: true });
});

interface Run {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
}

function cli(args: string[], opts: { stdin?: string; env?: Record<string, string>; onStart?: (child: Any) => void } = {}): Promise<Run> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [BIN, ...args], { env: { ...process.env, PI_NATIVE_RECORD: "", ...opts.env }, stdio: ["pipe", "pipe", "pipe"] });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (d) => (stdout += d));
    child.stderr.on("data", (d) => (stderr += d));
    if (opts.stdin !== undefined) child.stdin.end(opts.stdin);
    else child.stdin.end();
    opts.onStart?.(child);
    child.on("close", (code, signal) => resolve({ code, signal, stdout, stderr }));
  });
}

const SSE = [
  completionsFrame({ role: "assistant", content: "" }),
  completionsFrame({ content: "Reading " }),
  completionsFrame({ content: "it." }),
  completionsFrame({ tool_calls: [{ index: 0, id: "call_1", type: "function", function: { name: "read", arguments: '{"path":"a.rs"}' } }] }),
  completionsFrame({}, "tool_calls"),
  COMPLETIONS_USAGE_FRAME,
  "data: [DONE]\n\n",
].join("");

describe("pi-native CLI", () => {
  it("--help lists every command; no command prints help too", async () => {
    const r = await cli(["--help"]);
    expect(r.code).toBe(0);
    for (const c of ["repair", "grammar", "chat", "replay"]) expect(r.stdout).toContain(`pi-native ${c}`);
    expect((await cli([])).stdout).toContain("Usage:");
  });

  it("repair --tool read: outcome, arguments, rule and note; exit 0", async () => {
    const r = await cli(["repair", "--tool", "read", '{"file_path":"src/a.rs"}']);
    expect(r.code).toBe(0);
    expect(r.stdout).toContain("outcome: repaired");
    expect(r.stdout).toContain('arguments: {"path":"src/a.rs"}');
    expect(r.stdout).toContain("preprocess.exact-alias");
  });

  it("repair from stdin with --json prints the pipeline's result object", async () => {
    const r = await cli(["repair", "--tool", "bash", "--json"], { stdin: '{"command":"ls","timeout":null}' });
    expect(r.code).toBe(0);
    const result = JSON.parse(r.stdout);
    expect(result.outcome).toBe("repaired");
    expect(result.args).toEqual({ command: "ls" });
    expect(result.changes[0].ruleId).toBe("dropNullOrUndefinedField");
  });

  it("an unrepairable call prints the retry message and exits 1", async () => {
    const r = await cli(["repair", "--tool", "edit", '{"path":"a"}']);
    expect(r.code).toBe(1);
    expect(r.stdout).toContain("outcome: unrepairable");
    expect(r.stdout).toContain('Invalid input for tool "edit"');
  });

  it("repair --schema takes a JSON Schema file", async () => {
    const dir = mkdtempSync(join(tmpdir(), "pi-native-cli-"));
    dirs.push(dir);
    const schema = join(dir, "schema.json");
    writeFileSync(schema, JSON.stringify({ type: "object", properties: { n: { type: "number" } }, required: ["n"] }));
    const r = await cli(["repair", "--schema", schema, "--name", "count", "--json", '{"n":"3"}']);
    expect(JSON.parse(r.stdout).outcome).toBe("valid"); // Convert makes "3" a number, as for a TypeBox schema
    const raw = await cli(["repair", "--schema", schema, "--raw-schema", "--json", `{"n":"3"}`]);
    expect(JSON.parse(raw.stdout).outcome).toBe("unrepairable");
  });

  it("bad usage exits 2 with a hint on stderr", async () => {
    for (const args of [["bogus"], ["repair"], ["repair", "--tool", "nope", "{}"], ["repair", "--tool", "read", "--policy", "wild", "{}"], ["chat", "hi"], ["repair", "--frobnicate"]]) {
      const r = await cli(args);
      expect(r.code, args.join(" ")).toBe(2);
      expect(r.stderr).toMatch(/^pi-native: .+\nRun `pi-native --help` for usage\.\n$/);
      expect(r.stdout).toBe("");
    }
  });

  it("grammar lists leaked calls; --recover promotes them and keeps the prose", async () => {
    const text = 'Sure. <tool_call>{"name":"read","arguments":{"path":"a.rs"}}</tool_call>';
    const list = await cli(["grammar", "--json", text]);
    expect(JSON.parse(list.stdout)).toEqual([{ name: "read", arguments: { path: "a.rs" }, grammar: "granite" }]);
    const rec = await cli(["grammar", "--recover", "--tools", "read", "--json"], { stdin: text });
    const r = JSON.parse(rec.stdout);
    expect(r.changed).toBe(true);
    expect(r.recoveredCalls[0].name).toBe("read");
    expect(r.message.content[0].text.trim()).toBe("Sure.");
  });

  it("chat streams NDJSON chunks with the key from the environment; --record, then replay reproduces them offline", async () => {
    const server = await loopbackServer((_req, res) => {
      res.writeHead(200, { "content-type": "text/event-stream" });
      res.end(SSE);
    });
    const dir = mkdtempSync(join(tmpdir(), "pi-native-rec-"));
    dirs.push(dir);
    const live = await cli(["chat", "--provider", "openai-compatible", "--model", "m", "--base-url", `${server.url}/v1`, "--json", "--record", dir, "read a.rs"], {
      env: { PI_NATIVE_API_KEY: "sk-cli-secret" },
    });
    expect(live.code, live.stderr).toBe(0);
    const chunks = live.stdout.trim().split("\n").map((l) => JSON.parse(l));
    expect(chunks.map((c: Any) => c.content ?? "").join("")).toBe("Reading it.");
    expect(chunks.some((c: Any) => c.toolCalls?.[0]?.function?.name === "read")).toBe(true);
    expect(server.requests[0].headers.authorization).toBe("Bearer sk-cli-secret");
    // The recording: the request with the key redacted, and the raw body.
    const files = readdirSync(dir).sort();
    expect(files).toHaveLength(2);
    const json = files.find((f) => f.endsWith(".json"))!;
    const record = readFileSync(join(dir, json), "utf8");
    expect(record).not.toContain("sk-cli-secret");
    expect(JSON.parse(record).request.body.messages.at(-1)).toEqual({ role: "user", content: "read a.rs" });
    expect(readFileSync(join(dir, files.find((f) => f.endsWith(".body"))!), "utf8")).toBe(SSE);
    // Replay with the provider gone.
    await server.close();
    const replayed = await cli(["replay", "--json", join(dir, json)]);
    expect(replayed.code).toBe(0);
    expect(replayed.stdout.trim().split("\n").map((l) => JSON.parse(l))).toEqual(chunks);
    expect(replayed.stderr).toContain("replaying openai-compatible/m");
  }, 30_000);

  it("a provider error exits 1 with the error on stderr", async () => {
    const server = await loopbackServer((_req, res) => {
      res.writeHead(401, { "content-type": "application/json" });
      res.end('{"error":{"message":"bad key"}}');
    });
    const r = await cli(["chat", "--provider", "openai-compatible", "--model", "m", "--base-url", `${server.url}/v1`, "hi"], { env: { PI_NATIVE_API_KEY: "k" } });
    expect(r.code).toBe(1);
    expect(r.stderr).toContain("bad key");
  });

  it("Ctrl-C cancels the request cleanly (exit 130, connection closed)", async () => {
    let started!: () => void;
    const streaming = new Promise<void>((resolve) => (started = resolve));
    const server = await loopbackServer((_req, res) => {
      res.writeHead(200, { "content-type": "text/event-stream" });
      res.write(completionsFrame({ content: "thinking forever" }));
      started();
    });
    const r = await cli(["chat", "--provider", "openai-compatible", "--model", "m", "--base-url", `${server.url}/v1`, "hi"], {
      env: { PI_NATIVE_API_KEY: "k" },
      onStart: (child) => streaming.then(() => setTimeout(() => child.kill("SIGINT"), 200)),
    });
    expect(r.code).toBe(130);
    expect(r.stdout).toContain("thinking forever");
    expect(r.stderr).toContain("cancelled");
    await sleep(50);
    expect(server.openConnections()).toBe(0);
  }, 30_000);

  it("the built-in tool schemas equal pi's TypeBox schemas, markers included", () => {
    for (const name of PI_BUILTIN_TOOL_NAMES) {
      const ours = builtinToolSchema(name);
      const pis = piBuiltinSchema(name);
      expect(JSON.parse(JSON.stringify(ours)), name).toEqual(JSON.parse(JSON.stringify(pis)));
      expect(collectMarkers(ours), name).toEqual(collectMarkers(pis));
    }
    expect(builtinToolSchema("toString")).toBeUndefined();
  });
});
