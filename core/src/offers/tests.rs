use std::sync::Arc;

use acc_store::ReceiptState;

use super::OfferAttempt;
use crate::Core;
use crate::clock::FixedClock;
use crate::identity::{Caller, Liveness, SessionSpec};
use crate::messages::SendRequest;
use crate::workspace::{ClaimPolicy, Config, IdentitySource, Workspace};

struct Alive;
impl Liveness for Alive {
    fn alive(&self, _pid: i64) -> bool {
        true
    }
}

fn session(core: &mut Core, who: &str) -> Caller {
    let opened = core
        .open_session(
            &SessionSpec {
                participant_id: who.into(),
                session_key: None,
                harness: crate::identity::Harness::Codex,
                client_version: None,
                checkout: None,
                branch: None,
                pid: Some(1),
                enforcement: acc_store::Enforcement::Advisory,
                lifecycle: acc_store::Lifecycle::Managed,
            },
            None,
        )
        .expect("session");
    Caller {
        session_id: opened.session.session_id,
        generation: opened.generation_token,
    }
}

/// A Codex queued submission starts a turn at once, and that turn's next-turn hook may carry
/// the message before the live offer returns: the offer is then still recorded and reported
/// as offered, never as a stale generation, and the receipt keeps the state it reached.
#[test]
fn a_live_offer_whose_receipt_moved_on_meanwhile_is_still_offered() {
    let temp = tempfile::tempdir().expect("tempdir");
    let workspace = Workspace {
        id: "race".into(),
        root: temp.path().to_path_buf(),
        source: IdentitySource::Directory,
        git_common_dir: None,
        config: Config {
            display_name: "race".into(),
            roots: vec![".".into()],
            claim_mode: ClaimPolicy::Advisory,
            context_budget_bytes: 6000,
            required_adapters: Vec::new(),
        },
    };
    let mut core = Core::new(
        workspace,
        temp.path().join("data"),
        Arc::new(FixedClock::new(1_795_000_000_000)),
        Arc::new(Alive),
    )
    .expect("core");
    let alice = session(&mut core, "alice");
    let dave = session(&mut core, "dave");
    let draft = Core::prepare_message(&SendRequest {
        to: vec!["dave".into()],
        subject: "s".into(),
        body: "b".into(),
        ..SendRequest::default()
    })
    .expect("draft");
    let recorded = core.record(&alice, draft).expect("record");
    let generation = core
        .own_session(&dave)
        .expect("read")
        .expect("dave's session")
        .generation;
    let attempt = |transport: &'static str| OfferAttempt {
        message: &recorded.message.message,
        recipient: "dave",
        session_id: &dave.session_id,
        generation,
        adapter: transport,
        transport,
        client_version: "0.169.0",
    };
    // The next turn carries it first...
    assert!(
        core.record_offer_succeeded(&attempt("next-turn"))
            .expect("next-turn")
    );
    // ...then the live offer returns.
    assert!(
        core.record_offer_succeeded(&attempt("codex-app-server"))
            .expect("live offer"),
        "the live offer happened"
    );
    let receipt = core
        .store_for_write()
        .expect("store")
        .read(|r| r.receipt(recorded.message.message.seq, "dave"))
        .expect("receipt")
        .expect("dave's receipt");
    assert_eq!(receipt.state, ReceiptState::Offered);
    // A stale target is still refused.
    let stale = OfferAttempt {
        generation: generation + 1,
        ..attempt("codex-app-server")
    };
    assert!(!core.record_offer_succeeded(&stale).expect("stale"));
}
