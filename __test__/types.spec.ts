// The hand-written declarations (lib/core.d.ts, lib/pi.d.ts) must accept code written against
// @r3b1s/pi-repair-layer's /core and /pi types and reject the misuses marked in
// __test__/types/consumer.ts. Runs the TypeScript compiler on tsconfig.json (noEmit).
import { execFileSync } from "node:child_process";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const tsc = join(root, "node_modules", "typescript", "bin", "tsc");

function runTsc(): { status: number; output: string } {
  try {
    const output = execFileSync(process.execPath, [tsc, "-p", join(root, "tsconfig.json"), "--pretty", "false"], {
      cwd: root,
      encoding: "utf8",
      stdio: ["ignore", "pipe", "pipe"],
    });
    return { status: 0, output };
  } catch (error) {
    const failed = error as { status?: number | null; stdout?: string; stderr?: string; message: string };
    return {
      status: failed.status ?? -1,
      output: `${failed.stdout ?? ""}${failed.stderr ?? ""}` || failed.message,
    };
  }
}

describe("type declarations", () => {
  it("compile the reference-style consumer with tsc (strict, skipLibCheck: false)", () => {
    const { status, output } = runTsc();
    expect(output.trim()).toBe("");
    expect(status).toBe(0);
  }, 180_000);
});
