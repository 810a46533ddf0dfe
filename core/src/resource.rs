//! Claim resource URIs: validation, `file:` normalisation, and overlap.
//!
//! A `file:` resource names any file, whatever its name holds, in one encoding used by every
//! surface (the CLI, MCP, the hooks' reading of written paths, and every output): its canonical
//! form percent-encodes (RFC 3986 `%XX` of the UTF-8 bytes) the characters of a name that a
//! resource cannot carry raw or that would be misread: white space, control, format and
//! separator characters, `%` and `*` (a raw `*` is a glob, refused with a hint); every other
//! character, Unicode included, stays as it is. On input a name may be given raw or encoded
//! (`file:a file.txt` and `file:a%20file.txt` are one resource); a `%` not followed by two hex
//! digits is a literal `%`. A byte sequence that is not UTF-8 (a path read from the filesystem)
//! is encoded byte by byte.

use crate::error::{AccError, AccResult, ErrorCode};
use unicode_properties::{GeneralCategory, UnicodeGeneralCategory};

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
        return Err(too_long(resource));
    }
    let file = resource.starts_with("file:");
    // A file name may hold any character but NUL (it is encoded in the canonical form); the
    // other schemes' opaque parts hold no white space or control character.
    let refused = |c: char| {
        if file {
            c == '\0'
        } else {
            c.is_whitespace() || c.is_control()
        }
    };
    if let Some(bad) = resource.chars().find(|c| refused(*c)) {
        return Err(AccError::usage(format!(
            "resource `{}` contains {} ({:?}); {}",
            resource.escape_debug(),
            if file {
                "a NUL character"
            } else {
                "whitespace or a control character"
            },
            bad,
            if file {
                "no file name holds one"
            } else {
                "resources other than `file:` are `scheme:opaque` without spaces"
            }
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
    let canonical = normalize_file(resource, opaque)?;
    if canonical.chars().count() > MAX_RESOURCE_CHARS {
        return Err(too_long(&canonical));
    }
    Ok(canonical)
}

fn too_long(resource: &str) -> AccError {
    AccError::usage(format!(
        "resource is {} characters long (in its canonical form, where a name's spaces and other encoded characters count three each); the limit is {MAX_RESOURCE_CHARS}",
        resource.chars().count()
    ))
}

/// Whether a character of a file name is percent-encoded in a canonical `file:` resource.
fn encoded(c: char) -> bool {
    c == '%'
        || c == '*'
        || c.is_whitespace()
        || matches!(
            c.general_category(),
            GeneralCategory::Control
                | GeneralCategory::Format
                | GeneralCategory::LineSeparator
                | GeneralCategory::ParagraphSeparator
                | GeneralCategory::SpaceSeparator
        )
}

/// One file-name segment (its bytes, as the filesystem holds them) in the canonical encoding.
///
/// Written by hand rather than with `percent_encoding::utf8_percent_encode`, which always
/// encodes every non-ASCII byte: a canonical resource keeps readable Unicode names readable.
pub fn encode_segment(bytes: &[u8]) -> String {
    let mut out = String::with_capacity(bytes.len());
    let escape = |out: &mut String, byte: u8| out.push_str(&format!("%{byte:02X}"));
    for chunk in bytes.utf8_chunks() {
        for c in chunk.valid().chars() {
            if encoded(c) {
                let mut buffer = [0u8; 4];
                for byte in c.encode_utf8(&mut buffer).bytes() {
                    escape(&mut out, byte);
                }
            } else {
                out.push(c);
            }
        }
        for byte in chunk.invalid() {
            escape(&mut out, *byte);
        }
    }
    out
}

/// A canonical resource as a person or a model wrote it, for a refusal's text: in a `file:`
/// resource a plain space, `%` and `*` are shown as themselves (`file:a%20file.txt` is shown
/// `file:a file.txt`). Every other escape stays: a tab, a line end or a direction override
/// shown raw would break the message's one line or hide what the name holds. The JSON of a
/// refusal keeps the canonical form.
pub fn shown(resource: &str) -> String {
    if !resource.starts_with("file:") {
        return resource.to_string();
    }
    let mut out = String::with_capacity(resource.len());
    let mut rest = resource;
    while let Some(at) = rest.find('%') {
        out.push_str(&rest[..at]);
        let escape = rest.get(at..at + 3).unwrap_or("%");
        match escape {
            "%20" => out.push(' '),
            "%25" => out.push('%'),
            "%2A" => out.push('*'),
            other => out.push_str(other),
        }
        rest = &rest[at + escape.len()..];
    }
    out.push_str(rest);
    out
}

/// The canonical `file:` resource of a path as the filesystem names it: `segments` relative
/// to the workspace root (or, with `absolute`, from `/`), each a file name's bytes. Dot
/// segments are the caller's to resolve first. What the write guard checks a written path as.
pub fn file_resource<'a>(absolute: bool, segments: impl IntoIterator<Item = &'a [u8]>) -> String {
    let mut canonical = String::from(if absolute { "file:/" } else { "file:" });
    let mut first = true;
    for segment in segments {
        if !first {
            canonical.push('/');
        }
        first = false;
        canonical.push_str(&encode_segment(segment));
    }
    if first && !absolute {
        // The workspace root itself: the whole tree.
        canonical.push_str("**");
    }
    canonical
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
    let mut segments: Vec<Vec<u8>> = Vec::new();
    for raw in body.split('/') {
        // A `%` not followed by two hex digits stays a literal `%`.
        let segment: Vec<u8> = percent_encoding::percent_decode_str(raw).collect();
        if segment.contains(&b'/') || segment.contains(&0) {
            return Err(AccError::usage(format!(
                "resource `{original}` encodes a `/` or a NUL inside the name `{raw}` (`%2F`, `%00`); no file name holds one: write `/` between names"
            )));
        }
        match segment.as_slice() {
            b"" | b"." => {}
            b".." => match segments.last() {
                Some(last) if last.as_slice() != b".." => {
                    segments.pop();
                }
                _ => segments.push(segment),
            },
            _ => segments.push(segment),
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
    let names: Vec<String> = segments.iter().map(|s| encode_segment(s)).collect();
    canonical.push_str(&names.join("/"));
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
pub fn overlap_candidates(resource: &str) -> acc_store::OverlapCandidates {
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
    fn a_refusal_shows_a_name_as_it_was_written_and_keeps_every_unsafe_escape() {
        for (canonical, shown_as) in [
            ("file:a%20file.txt", "file:a file.txt"),
            ("file:dir%20with%20space/**", "file:dir with space/**"),
            ("file:100%25.txt", "file:100%.txt"),
            ("file:a%2Ab", "file:a*b"),
            ("file:tab%09here", "file:tab%09here"),
            ("file:new%0Aline", "file:new%0Aline"),
            ("file:bidi%E2%80%AEtxt", "file:bidi%E2%80%AEtxt"),
            ("file:été.md", "file:été.md"),
            ("file:%FF", "file:%FF"),
            ("file:end%2", "file:end%2"),
            ("git:branch/a%20b", "git:branch/a%20b"),
        ] {
            assert_eq!(super::shown(canonical), shown_as, "{canonical}");
        }
    }

    #[test]
    fn any_file_name_has_one_canonical_resource() {
        for (input, canonical) in [
            ("file:a file.txt", "file:a%20file.txt"),
            ("file:a%20file.txt", "file:a%20file.txt"),
            ("file:dir with space/**", "file:dir%20with%20space/**"),
            ("file:été/naïve.md", "file:été/naïve.md"),
            ("file:%C3%A9t%C3%A9.md", "file:été.md"),
            ("file:100%.txt", "file:100%25.txt"),
            ("file:100%25.txt", "file:100%25.txt"),
            ("file:a%2Ab", "file:a%2Ab"),
            ("file:tab\there", "file:tab%09here"),
            ("file:new\nline", "file:new%0Aline"),
            ("file:bidi\u{202e}txt", "file:bidi%E2%80%AEtxt"),
            ("file:$(rm -rf);`x`'\"&|<>", "file:$(rm%20-rf);`x`'\"&|<>"),
            ("file:a/%2E%2E/b", "file:b"),
            ("file:%FF", "file:%FF"),
        ] {
            assert_eq!(norm(input), canonical, "{input}");
            assert_eq!(
                norm(canonical),
                canonical,
                "canonical is a fixed point: {canonical}"
            );
        }
        assert!(overlaps(
            &norm("file:dir with space/**"),
            &norm("file:dir with space/x y")
        ));
        assert_eq!(
            file_resource(false, [b"dir with space".as_slice(), "été x".as_bytes()]),
            norm("file:dir with space/été x")
        );
        assert_eq!(file_resource(false, [b"a\xffb".as_slice()]), "file:a%FFb");
        assert_eq!(
            file_resource(false, [b"100%".as_slice()]),
            norm("file:100%25")
        );
        assert_eq!(file_resource(false, []), "file:**");
        assert_eq!(
            file_resource(true, [b"etc".as_slice(), b"hosts"]),
            "file:/etc/hosts"
        );
        let long = format!("file:{}", " ".repeat(400));
        let error = normalize(&long).expect_err("encoded past the limit");
        assert!(
            error.message.contains("canonical form"),
            "{}",
            error.message
        );
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
            "git:a b",
            "doc:a\u{7}",
            "file:a\u{0}",
            "file:a%2Fb",
            "file:a%00",
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
