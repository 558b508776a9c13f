// Times grammar scanning alone (no N-API), for profiling.
use pi_native::repair::grammar::parse_tool_grammar_leaks;

fn main() {
  let mut text = String::new();
  while text.len() < 100_000 {
    text.push_str("The quick brown fox jumps over the lazy dog.\n");
  }
  for grammars in [None, Some(&["qwen"][..]), Some(&["granite"][..])] {
    let n = 200;
    let t0 = std::time::Instant::now();
    for _ in 0..n {
      std::hint::black_box(parse_tool_grammar_leaks(&text, grammars));
    }
    println!("{grammars:?}: {:.3} ms", t0.elapsed().as_secs_f64() * 1e3 / n as f64);
  }
}
