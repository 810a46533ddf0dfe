//! Claim resource URIs: validation, `file:` normalisation, and overlap.

use crate::error::{AccError, AccResult, ErrorCode};

/// Longest accepted resource, in characters.
pub const MAX_RESOURCE_CHARS: usize = 1024;

fn glob_hint(original: &str, dir: &str) -> AccError {
    let dir = dir.trim_end_matches('/');
    let suggestion = if dir.is_empty() {
        "file:**".to_string()
    } else {
        format!("file:{dir}/**")
    };
    AccError::new(
        ErrorCode::UnmatchableResource,
        format!(
            "resource `{original}` can never match a file: claim a directory tree as `{suggestion}` (only a trailing `/**` pattern is supported)"
        ),
    )
}

/// Validate a resource URI and return its canonical form.
pub fn normalize(resource: &str) -> AccResult<String> {
    if resource.chars().count() > MAX_RESOURCE_CHARS {
        return Err(AccError::usage(format!(
            "resource is {} characters long; the limit is {MAX_RESOURCE_CHARS}",
            resource.chars().count()
        )));
    }
    if let Some(bad) = resource
        .chars()
        .find(|c| c.is_whitespace() || c.is_control())
    {
        return Err(AccError::usage(format!(
            "resource `{}` contains whitespace or a control character ({:?}); resources are `scheme:opaque` without spaces",
            resource.escape_debug(),
            bad
        )));
    }
    let Some((scheme, opaque)) = resource.split_once(':') else {
        return Err(AccError::usage(format!(
            "resource `{resource}` has no scheme; write `scheme:opaque`, for example `file:src/a.rs`"
        )));
    };
    let scheme_ok = scheme
        .as_bytes()
        .first()
        .is_some_and(|b| b.is_ascii_lowercase())
        && scheme.bytes().all(|b| {
            b.is_ascii_lowercase() || b.is_ascii_digit() || matches!(b, b'+' | b'-' | b'.')
        });
    if !scheme_ok {
        return Err(AccError::usage(format!(
            "resource `{resource}` has an invalid scheme `{scheme}`; schemes are lower-case letters, digits, `+`, `-`, `.`"
        )));
    }
    if opaque.is_empty() {
        return Err(AccError::usage(format!(
            "resource `{resource}` names nothing after `{scheme}:`"
        )));
    }
    if scheme != "file" {
        return Ok(resource.to_string());
    }
    normalize_file(resource, opaque)
}

fn normalize_file(original: &str, path: &str) -> AccResult<String> {
    let absolute = path.starts_with('/');
    let (body, tree) = match path.strip_suffix("/**") {
        Some(body) => (body, true),
        None if path == "**" => ("", true),
        None => (path, false),
    };
    if path.ends_with('/') {
        return Err(glob_hint(original, path));
    }
    if body.contains('*') {
        let dir = body.rsplit_once('/').map(|(d, _)| d).unwrap_or("");
        return Err(glob_hint(original, dir));
    }
    let mut segments: Vec<&str> = Vec::new();
    for segment in body.split('/') {
        match segment {
            "" | "." => {}
            ".." => match segments.last() {
                Some(last) if *last != ".." => {
                    segments.pop();
                }
                _ => segments.push(".."),
            },
            other => segments.push(other),
        }
    }
    if segments.is_empty() && !tree {
        return Err(AccError::usage(format!(
            "resource `{original}` names no file; claim the whole tree as `file:**`"
        )));
    }
    let mut canonical = String::from("file:");
    if absolute {
        canonical.push('/');
    }
    canonical.push_str(&segments.join("/"));
    if tree {
        if segments.is_empty() {
            canonical.push_str("**");
        } else {
            canonical.push_str("/**");
        }
    }
    Ok(canonical)
}

/// A canonical resource split for overlap tests.
struct Parsed<'a> {
    scheme: &'a str,
    absolute: bool,
    segments: Vec<&'a str>,
    tree: bool,
}

fn parse(resource: &str) -> Parsed<'_> {
    let (scheme, opaque) = resource.split_once(':').unwrap_or(("", resource));
    let (absolute, opaque) = match opaque.strip_prefix('/') {
        Some(rest) => (true, rest),
        None => (false, opaque),
    };
    let (body, tree) = match opaque.strip_suffix("/**") {
        Some(body) => (body, true),
        None if opaque == "**" => ("", true),
        None => (opaque, false),
    };
    let segments = if body.is_empty() {
        Vec::new()
    } else {
        body.split('/').collect()
    };
    Parsed {
        scheme,
        absolute,
        segments,
        tree,
    }
}

fn covers(tree: &Parsed<'_>, other: &Parsed<'_>) -> bool {
    // An absolute path and a workspace-relative one never overlap.
    tree.tree
        && tree.absolute == other.absolute
        && other.segments.len() >= tree.segments.len()
        && tree
            .segments
            .iter()
            .zip(&other.segments)
            .all(|(a, b)| a == b)
}

/// Where to look for resources that may overlap `resource` (canonical): exact resources to
/// match, and half-open string ranges `[low, high)` of resources under a tree. Every overlapping
/// resource is among the candidates; callers still filter with [`overlaps`].
pub fn overlap_candidates(resource: &str) -> (Vec<String>, Vec<(String, String)>) {
    let parsed = parse(resource);
    let root = format!(
        "{}:{}",
        parsed.scheme,
        if parsed.absolute { "/" } else { "" }
    );
    let mut exact = vec![resource.to_string()];
    for depth in 0..=parsed.segments.len() {
        let prefix = parsed.segments[..depth].join("/");
        exact.push(if prefix.is_empty() {
            format!("{root}**")
        } else {
            format!("{root}{prefix}/**")
        });
    }
    let mut ranges = Vec::new();
    if parsed.tree {
        let prefix = parsed.segments.join("/");
        if prefix.is_empty() {
            // Everything of this scheme (and absoluteness) is under the tree.
            ranges.push((root.clone(), format!("{root}\u{10FFFF}")));
        } else {
            let base = format!("{root}{prefix}");
            exact.push(base.clone());
            ranges.push((format!("{base}/"), format!("{base}0")));
        }
    }
    exact.sort();
    exact.dedup();
    (exact, ranges)
}

/// Whether two canonical resources overlap: identical, or a `/**` tree containing the other
/// segment by segment. Different schemes never overlap.
pub fn overlaps(a: &str, b: &str) -> bool {
    if a == b {
        return true;
    }
    let (pa, pb) = (parse(a), parse(b));
    if pa.scheme != pb.scheme {
        return false;
    }
    covers(&pa, &pb) || covers(&pb, &pa)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn norm(input: &str) -> String {
        normalize(input).unwrap_or_else(|e| panic!("{input}: {e}"))
    }

    #[test]
    fn file_normalisation() {
        assert_eq!(norm("file:./src//x/../a.rs"), "file:src/a.rs");
        assert_eq!(norm("file:src/a.rs"), "file:src/a.rs");
        assert_eq!(norm("file:../up/a.rs"), "file:../up/a.rs");
        assert_eq!(norm("file:a/../../b"), "file:../b");
        assert_eq!(norm("file:/etc//hosts"), "file:/etc/hosts");
        assert_eq!(norm("file:crates/core/**"), "file:crates/core/**");
        assert_eq!(norm("file:./crates/./core/**"), "file:crates/core/**");
        assert_eq!(norm("file:**"), "file:**");
        assert_eq!(norm("file:./**"), "file:**");
        assert_eq!(norm("git:branch/x"), "git:branch/x");
        assert_eq!(norm("doc:architecture#store"), "doc:architecture#store");
    }

    #[test]
    fn unmatchable_shapes_hint_at_trees() {
        for (input, hint) in [
            ("file:src/", "file:src/**"),
            ("file:src/*.rs", "file:src/**"),
            ("file:src/**/a.rs", "file:src/**"),
            ("file:*", "file:**"),
        ] {
            let error = normalize(input).expect_err(input);
            assert_eq!(error.code, ErrorCode::UnmatchableResource, "{input}");
            assert_eq!(error.code.exit_code(), 2);
            assert!(error.message.contains(hint), "{input}: {}", error.message);
        }
    }

    #[test]
    fn malformed_resources() {
        for input in [
            "src/a.rs",
            "file:",
            "File:a",
            "file:a b",
            "file:a\u{7}",
            ":x",
        ] {
            assert!(normalize(input).is_err(), "{input}");
        }
        assert!(normalize(&format!("file:{}", "a".repeat(1020))).is_err());
        assert!(normalize("file:.").is_err());
    }

    #[test]
    fn overlap_rules() {
        assert!(overlaps("file:src/a.rs", "file:src/a.rs"));
        assert!(overlaps("file:src/**", "file:src/a.rs"));
        assert!(overlaps("file:src/a.rs", "file:src/**"));
        assert!(overlaps("file:src/**", "file:src/x/**"));
        assert!(overlaps("file:**", "file:src/a.rs"));
        assert!(!overlaps("file:a/**", "file:ab/c"));
        assert!(!overlaps("file:src/a.rs", "file:src/b.rs"));
        assert!(!overlaps("file:src/**", "git:src/a.rs"));
        assert!(!overlaps("file:**", "file:/etc/hosts"));
        assert!(overlaps("git:branch/**", "git:branch/x"));
        assert!(overlaps("file:src/**", "file:src"));
    }

    #[test]
    fn candidates_cover_every_overlap() {
        let all = [
            "file:src/a.rs",
            "file:src/**",
            "file:src",
            "file:**",
            "file:src/x/**",
            "file:src/x/y.rs",
            "file:srcx/a.rs",
            "file:/etc/hosts",
            "file:/**",
            "git:src/a.rs",
            "file:src/a.rs/**",
        ];
        for wanted in all {
            let (exact, ranges) = overlap_candidates(wanted);
            for held in all {
                let candidate = exact.iter().any(|e| e == held)
                    || ranges
                        .iter()
                        .any(|(low, high)| held >= low.as_str() && held < high.as_str());
                if overlaps(wanted, held) {
                    assert!(
                        candidate,
                        "{wanted} overlaps {held} but it is not a candidate"
                    );
                }
            }
        }
    }
}
