//! Stable smoke run of the fuzz targets (no nightly, no cargo-fuzz): every committed seed in
//! `fuzz/corpus/<target>/` goes through its target body (`pi_native::fuzzing`), then a few
//! thousand deterministic mutations of those seeds. The coverage-guided runs live in `fuzz/`
//! (`npm run fuzz`); this keeps the invariants and the regression seeds exercised by `cargo test`.

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::path::{Path, PathBuf};

use pi_native::fuzzing::TARGETS;

/// Mutated inputs per target (the debug build must stay within a few seconds).
const MUTATIONS: usize = 3_000;
const MAX_LEN: usize = 4_096;

struct XorShift(u64);

impl XorShift {
  fn next(&mut self) -> u64 {
    let mut x = self.0;
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    self.0 = x;
    x
  }
  fn below(&mut self, n: usize) -> usize {
    if n == 0 {
      0
    } else {
      (self.next() % n as u64) as usize
    }
  }
}

/// Bytes the parsers care about, spliced in by the mutator.
const TOKENS: [&[u8]; 24] = [
  b"\n",
  b"\r\n",
  b"\r",
  b"\n\n",
  b"data: ",
  b"event: ",
  b"\"",
  b"\\",
  b"\\u",
  b"\\ud800",
  b"{",
  b"}",
  b"[",
  b"]",
  b":",
  b",",
  b"\0",
  b"\xf4\x8f\xbf\xbf",
  b"\xff",
  b"<tool_call>",
  b"</tool_call>",
  b"[TOOL_CALLS]",
  b"<arg_key>",
  b"\"~kind\":",
];

fn mutate(rng: &mut XorShift, seeds: &[Vec<u8>]) -> Vec<u8> {
  let mut b = seeds[rng.below(seeds.len())].clone();
  for _ in 0..1 + rng.below(4) {
    let len = b.len();
    match rng.below(8) {
      0 if len > 0 => {
        let i = rng.below(len);
        b[i] ^= 1 << rng.below(8);
      }
      1 if len > 0 => {
        let i = rng.below(len);
        b[i] = rng.next() as u8;
      }
      2 => {
        let i = rng.below(len + 1);
        b.insert(i, rng.next() as u8);
      }
      3 if len > 0 => {
        let a = rng.below(len);
        let n = 1 + rng.below((len - a).min(64));
        b.drain(a..a + n);
      }
      4 if len > 0 => {
        let a = rng.below(len);
        let n = 1 + rng.below((len - a).min(64));
        let piece = b[a..a + n].to_vec();
        let at = rng.below(len + 1);
        b.splice(at..at, piece);
      }
      5 => {
        let other = &seeds[rng.below(seeds.len())];
        let cut = rng.below(b.len() + 1);
        let from = rng.below(other.len() + 1);
        b.truncate(cut);
        b.extend_from_slice(&other[from..]);
      }
      6 => {
        let t = TOKENS[rng.below(TOKENS.len())];
        let at = rng.below(len + 1);
        b.splice(at..at, t.iter().copied());
      }
      _ if len > 0 => {
        // The parameter bytes at the front matter most.
        let i = rng.below(len.min(4));
        b[i] = rng.next() as u8;
      }
      _ => b.push(rng.next() as u8),
    }
  }
  b.truncate(MAX_LEN);
  b
}

fn corpus(target: &str) -> Vec<(PathBuf, Vec<u8>)> {
  let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("fuzz/corpus").join(target);
  let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
    .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
    .map(|e| e.expect("dir entry").path())
    .filter(|p| p.is_file())
    .collect();
  files.sort();
  files
    .into_iter()
    .map(|p| {
      let b = std::fs::read(&p).expect("read seed");
      (p, b)
    })
    .collect()
}

/// The addon's module init installs a quiet panic hook (no message, for hosts' terminals) in
/// every binary that links the crate; a failing invariant here must show its message.
fn loud_panics() {
  static ONCE: std::sync::Once = std::sync::Once::new();
  ONCE.call_once(|| drop(std::panic::take_hook()));
}

/// Runs one input; on a panic, saves it where the fuzz crate can replay it and names the file.
fn run(target: &str, body: fn(&[u8]), input: &[u8], what: &str) {
  if catch_unwind(AssertUnwindSafe(|| body(input))).is_err() {
    let path = Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("fuzz-smoke-{target}-crash"));
    std::fs::write(&path, input).expect("save crashing input");
    panic!(
      "{target}: {what} panicked; input saved to {} (replay: cargo +nightly fuzz run {target} <file>)",
      path.display()
    );
  }
}

/// Runs a target's seeds and mutations on a thread with a large stack: unoptimised frames are
/// several times the release ones the core's recursion bounds are sized for.
fn smoke(target: &'static str) {
  loud_panics();
  let worker = std::thread::Builder::new()
    .name(format!("smoke-{target}"))
    .stack_size(256 << 20)
    .spawn(move || smoke_on_this_thread(target))
    .expect("spawn");
  if let Err(panic) = worker.join() {
    std::panic::resume_unwind(panic);
  }
}

fn smoke_on_this_thread(target: &str) {
  let (_, body) = *TARGETS.iter().find(|(n, _)| *n == target).expect("known target");
  let seeds = corpus(target);
  assert!(!seeds.is_empty(), "no seeds for {target}");
  for (path, bytes) in &seeds {
    run(target, body, bytes, &format!("seed {}", path.display()));
  }
  let seeds: Vec<Vec<u8>> = seeds.into_iter().map(|(_, b)| b).collect();
  let mut rng = XorShift(0x9E37_79B9_7F4A_7C15 ^ target.len() as u64 ^ (target.as_bytes()[0] as u64) << 40);
  for i in 0..MUTATIONS {
    let input = mutate(&mut rng, &seeds);
    run(target, body, &input, &format!("mutation {i}"));
  }
}

#[test]
fn every_target_has_a_smoke_test() {
  let names: Vec<&str> = TARGETS.iter().map(|(n, _)| *n).collect();
  assert_eq!(
    names,
    ["sse", "stream", "json", "envelope", "grammar", "schema", "pipeline"]
  );
}

#[test]
fn smoke_sse() {
  smoke("sse");
}

#[test]
fn smoke_stream() {
  smoke("stream");
}

#[test]
fn smoke_json() {
  smoke("json");
}

#[test]
fn smoke_envelope() {
  smoke("envelope");
}

#[test]
fn smoke_grammar() {
  smoke("grammar");
}

#[test]
fn smoke_schema() {
  smoke("schema");
}

#[test]
fn smoke_pipeline() {
  smoke("pipeline");
}
