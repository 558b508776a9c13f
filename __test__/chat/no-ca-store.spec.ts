// Without a system CA store (minimal containers) the HTTP client cannot be built: streamChat must
// fail with a clear error of ours, not a panic whose text names a build path. Run in a child
// process so the process-wide client is built under the stripped environment.
import { spawnSync } from "node:child_process";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";

const chat = fileURLToPath(new URL("../../lib/chat.js", import.meta.url));
const script = `
const { createChatService } = await import(${JSON.stringify(chat)});
const s = createChatService({ provider: 'openai', model: 'gpt-4.1', apiKey: 'sk-test', baseUrl: 'http://127.0.0.1:9/v1', maxRetries: 0 });
try { for await (const _ of s.streamChat([{ role: 'user', content: 'hi' }])) {} console.log('NO ERROR') }
catch (e) { console.log('ERROR ' + e.message) }
`;

describe("chat without a system CA store", () => {
  it("fails with a clear error and prints no internal-error line", () => {
    const r = spawnSync(process.execPath, ["--input-type=module", "-e", script], {
      env: { ...process.env, SSL_CERT_FILE: "/nonexistent", SSL_CERT_DIR: "/nonexistent" },
      encoding: "utf8",
    });
    const out = `${r.stdout}${r.stderr}`;
    expect(out).not.toContain("internal error");
    expect(out).not.toContain(".cargo");
    // Either the client builds (a platform with other roots) and the dead port refuses, or ours.
    expect(out).toMatch(/ERROR (pi-native: could not set up the HTTP client|.*(Connection|connect))/);
  });
});
