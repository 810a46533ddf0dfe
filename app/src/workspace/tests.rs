use super::*;

fn parse(text: &str) -> AccResult<(String, Config)> {
    parse_config(Path::new("/w/acc.workspace.json"), Path::new("/w"), text)
}

fn message_of(text: &str) -> String {
    match parse(text) {
        Ok(_) => panic!("expected a refusal for {text}"),
        Err(e) => {
            assert_eq!(e.code, ErrorCode::InvalidConfig);
            e.message
        }
    }
}

#[test]
fn minimal_config_gets_defaults() {
    let (id, config) = parse(r#"{"schemaVersion":1,"workspaceId":"demo"}"#).expect("valid");
    assert_eq!(id, "demo");
    assert_eq!(config.display_name, "w");
    assert_eq!(config.roots, vec!["."]);
    assert_eq!(config.claim_mode, ClaimPolicy::Advisory);
    assert_eq!(config.context_budget_bytes, 6000);
}

#[test]
fn refusals_name_what_was_wrong() {
    assert!(
        message_of(r#"{"schemaVersion":1,"workspaceId":"d","colour":1}"#)
            .contains("unknown key `colour`")
    );
    assert!(
        message_of(r#"{"schemaVersion":1,"workspaceId":"d","sessions":[]}"#)
            .contains("`sessions` is runtime state")
    );
    assert!(
        message_of(r#"{"schemaVersion":1,"workspaceId":"d","tokens":{}}"#)
            .contains("`tokens` is runtime state")
    );
    assert!(message_of(r#"{"schemaVersion":2,"workspaceId":"d"}"#).contains("must be 1"));
    assert!(message_of(r#"{"workspaceId":"d"}"#).contains("`schemaVersion` is required"));
    assert!(message_of(r#"{"schemaVersion":1}"#).contains("`workspaceId` is required"));
    assert!(message_of(r#"{"schemaVersion":1,"workspaceId":"bad id"}"#).contains("portable id"));
    assert!(
        message_of(r#"{"schemaVersion":1,"workspaceId":"d","roots":["/abs"]}"#)
            .contains("absolute")
    );
    assert!(
        message_of(r#"{"schemaVersion":1,"workspaceId":"d","roots":["../x"]}"#).contains("escapes")
    );
    assert!(
        message_of(r#"{"schemaVersion":1,"workspaceId":"d","roots":["a/../../b"]}"#)
            .contains("escapes")
    );
    assert!(
        message_of(r#"{"schemaVersion":1,"workspaceId":"d","policy":{"claimMode":"strict"}}"#)
            .contains("claimMode")
    );
    assert!(
        message_of(r#"{"schemaVersion":1,"workspaceId":"d","policy":{"contextBudgetBytes":0}}"#)
            .contains("1 to 64000")
    );
    assert!(
        message_of(
            r#"{"schemaVersion":1,"workspaceId":"d","policy":{"contextBudgetBytes":64001}}"#
        )
        .contains("1 to 64000")
    );
    assert!(
        message_of(r#"{"schemaVersion":1,"workspaceId":"d","policy":{"x":1}}"#)
            .contains("`policy.x`")
    );
    assert!(
        message_of(r#"{"schemaVersion":1,"workspaceId":"d","extensions":3}"#)
            .contains("extensions")
    );
    assert!(message_of("[1]").contains("object"));
    assert!(message_of("{").contains("not valid json"));
}

#[test]
fn roots_inside_are_accepted() {
    let (_, config) =
        parse(r#"{"schemaVersion":1,"workspaceId":"d","roots":["a/../b","./c"],"policy":{"contextBudgetBytes":64000}}"#)
            .expect("valid");
    assert_eq!(config.roots, vec!["a/../b", "./c"]);
    assert_eq!(config.context_budget_bytes, 64000);
}

#[test]
fn git_worktrees_share_one_identity() {
    let temp = tempfile::tempdir().expect("tempdir");
    let repo = temp.path().join("repo");
    std::fs::create_dir_all(repo.join(".git/worktrees/feature")).expect("mkdir");
    std::fs::write(repo.join(".git/worktrees/feature/commondir"), "../..\n").expect("write");
    let worktree = temp.path().join("feature");
    std::fs::create_dir_all(worktree.join("src")).expect("mkdir");
    std::fs::write(
        worktree.join(".git"),
        format!(
            "gitdir: {}\n",
            repo.join(".git/worktrees/feature").display()
        ),
    )
    .expect("write");
    let main = discover(&repo).expect("main");
    let linked = discover(&worktree.join("src")).expect("worktree");
    assert_eq!(main.id, linked.id);
    assert_eq!(main.source, IdentitySource::Git);
    assert!(main.id.starts_with("repo-"));
    assert_eq!(
        linked.root,
        std::fs::canonicalize(&worktree).expect("canon")
    );
}

#[test]
fn config_wins_and_symlinked_config_is_refused() {
    let temp = tempfile::tempdir().expect("tempdir");
    let dir = temp.path().join("proj");
    std::fs::create_dir_all(dir.join("deep")).expect("mkdir");
    std::fs::write(
        dir.join(CONFIG_FILE),
        r#"{"schemaVersion":1,"workspaceId":"proj-id"}"#,
    )
    .expect("write");
    let found = discover(&dir.join("deep")).expect("found");
    assert_eq!(found.id, "proj-id");
    assert_eq!(found.source, IdentitySource::Config);

    let other = temp.path().join("other");
    std::fs::create_dir_all(&other).expect("mkdir");
    std::os::unix::fs::symlink(dir.join(CONFIG_FILE), other.join(CONFIG_FILE)).expect("symlink");
    let refused = discover(&other).expect_err("symlink refused");
    assert!(refused.message.contains("symlink"), "{}", refused.message);
}

#[test]
fn plain_directory_identity() {
    let temp = tempfile::tempdir().expect("tempdir");
    let found = discover(temp.path()).expect("found");
    assert_eq!(found.source, IdentitySource::Directory);
    assert!(ids::validate_portable_id("id", &found.id).is_ok());
}
