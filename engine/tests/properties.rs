//! Property tests (issue 16): the parsers that read hostile input never panic and stay within
//! their limits on arbitrary input. Case counts are bounded for CI (`PROPTEST_CASES` raises them
//! for a longer run).

use kubewhy_engine::graph::guard;
use kubewhy_engine::knowledge::split_front_matter;
use kubewhy_engine::signals::{extract, normalize, Vocabulary};
use proptest::prelude::*;

fn config() -> ProptestConfig {
    let cases = std::env::var("PROPTEST_CASES").ok().and_then(|v| v.parse().ok()).unwrap_or(128);
    ProptestConfig { cases, failure_persistence: None, ..ProptestConfig::default() }
}

/// Lines that look like the tables and blocks the extractor reads, mixed with noise.
fn kubectl_line() -> impl Strategy<Value = String> {
    prop_oneof![
        Just("  Type     Reason   Age   From     Message".to_string()),
        Just("LAST SEEN   TYPE      REASON      OBJECT     MESSAGE".to_string()),
        Just("NAME    READY   STATUS             RESTARTS   AGE".to_string()),
        Just("  ----     ------   ----  ----     -------".to_string()),
        Just("  Warning  BackOff  3m    kubelet  Back-off restarting failed container".to_string()),
        Just("    State:          Waiting".to_string()),
        Just("      Reason:       CrashLoopBackOff".to_string()),
        Just("      Exit Code:    137".to_string()),
        Just(String::new()),
        "[ -~]{0,80}",
        any::<String>(),
    ]
}

proptest! {
    #![proptest_config(config())]

    #[test]
    fn signal_extraction_is_linear(lines in proptest::collection::vec(kubectl_line(), 0..200)) {
        let input = lines.join("\n");
        let s = extract(&input, &normalize(&input), &Vocabulary::default(), &[]);
        // Every event comes from its own line: never more events than lines.
        prop_assert!(s.events.len() <= lines.len() + 1, "{} events from {} lines", s.events.len(), lines.len());
    }

    #[test]
    fn front_matter_splitter_never_panics(head in "(\\+\\+\\+\n)?[ -~\n]{0,200}(\\+\\+\\+\n)?", body in any::<String>()) {
        let text = format!("{head}{body}");
        if let Ok((toml, line, _)) = split_front_matter(&text) {
            prop_assert!(line >= 1);
            prop_assert!(toml.len() <= text.len());
        }
    }

    #[test]
    fn sparql_guard_bounds_nesting(open in "[{(\\[ a-z?\"#<>\n]{0,400}") {
        if guard::check_text(&open).is_ok() {
            // Accepted text nests at most MAX_NESTING outside strings, comments and IRIs; the
            // parser runs on it without a stack overflow.
            let _ = spargebra::SparqlParser::new().parse_query(&open);
        }
    }

    #[test]
    fn sparql_guard_accepts_or_refuses_any_query(q in any::<String>()) {
        if guard::check_text(&q).is_ok() {
            if let Ok(parsed) = spargebra::SparqlParser::new().parse_query(&q) {
                let _ = guard::check_query(&parsed, 20_000);
            }
        }
    }

    #[test]
    fn deep_nesting_is_always_refused(depth in (guard::MAX_NESTING + 1)..5_000usize, kind in 0..3usize) {
        let (o, c) = [("{", "}"), ("(", ")"), ("[", "]")][kind];
        let q = format!("SELECT * WHERE {}{}", o.repeat(depth), c.repeat(depth));
        prop_assert!(guard::check_text(&q).is_err());
    }
}
