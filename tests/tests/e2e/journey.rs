//! The next-turn journey every hooked client driven through [`Writer`] walks: a first turn
//! opens one session with the running client's version; a peer's message rides, fenced, in the
//! very first model request of the next (resumed) turn and is recorded offered through
//! next-turn; a later resumed turn is the same session and never shows the message twice. Each
//! client's test adds what is its own around these steps.

use acc_capture::guard::{Origin, Writer};
use acc_capture::model::ModelServer;
use acc_clients::Client;
use acc_tests::{Creds, World};
use serde_json::Value;

/// The session the first turn opened.
pub struct Opened {
    /// Its participant.
    pub participant: String,
    /// Its session id, as `acc status` shows it.
    pub session_id: Value,
}

/// How often a carried message may stand in a later request of the conversation.
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Kept {
    /// Exactly once: the client stores it in the conversation.
    Once,
    /// At most once.
    AtMostOnce,
}

/// One client's journey: its world, its writer, the loopback model, the harness its sessions
/// have, and how to read the client's own model requests (`bodies`).
pub struct Journey<'a> {
    pub world: &'a World,
    pub writer: &'a Writer,
    pub model: &'a ModelServer,
    pub harness: &'a str,
    pub bodies: fn(&ModelServer) -> Vec<String>,
}

impl Journey<'_> {
    /// The first turn (`hello`): exactly one session, recording `version`.
    pub fn first_turn(&self, version: &str) -> Opened {
        self.writer.turn("hello").expect("the first turn");
        let sessions = acc_tests::sessions_of(self.world, self.harness);
        assert_eq!(sessions.len(), 1, "one session opened: {sessions:?}");
        assert_eq!(
            sessions[0]["clientVersion"], version,
            "the version read from the running client: {}",
            sessions[0]
        );
        Opened {
            participant: sessions[0]["participantId"]
                .as_str()
                .expect("participant")
                .to_string(),
            session_id: sessions[0]["sessionId"].clone(),
        }
    }

    /// `from` asks the session a question whose body holds `marker`; the next turn, resumed,
    /// has it fenced in its very first model request and its receipt says offered through
    /// next-turn. Returns the message id.
    pub fn in_the_next_request(&self, from: &Creds, opened: &Opened, marker: &str) -> String {
        let sent = self.world.ask(
            from,
            &opened.participant,
            "parser",
            &format!("{marker}: is the parser done?"),
        );
        assert_eq!(sent["delivery"][0]["transport"], "durable", "{sent}");
        let id = sent["message"]["messageId"]
            .as_str()
            .expect("id")
            .to_string();
        self.model.clear();
        self.writer
            .turn_with("next", Origin::Resumed, false)
            .expect("the resumed turn");
        let requests = (self.bodies)(self.model);
        let first = requests.first().expect("a model request");
        assert!(
            first.contains(marker) && first.contains("acc-peer-message"),
            "the message rides in the first request of the turn: {first:.3000}"
        );
        let receipt = self.world.receipt(&id);
        assert_eq!(receipt["state"], "offered", "{receipt}");
        assert_eq!(receipt["offer"]["transport"], "next-turn", "{receipt}");
        id
    }

    /// Resumed again: the same single session, and each of `ids` in every model request of the
    /// turn as `kept` says.
    pub fn resumed_again(&self, opened: &Opened, ids: &[&str], kept: Kept) {
        self.model.clear();
        self.writer
            .turn_with("and now?", Origin::Resumed, false)
            .expect("the turn");
        let same = acc_tests::sessions_of(self.world, self.harness);
        assert_eq!(same.len(), 1, "{same:?}");
        assert_eq!(
            same[0]["sessionId"], opened.session_id,
            "the resumed session is the same"
        );
        let requests = (self.bodies)(self.model);
        assert!(!requests.is_empty(), "the turn reached the model");
        for body in requests {
            for id in ids {
                let count = body.matches(&format!("message={id} ")).count();
                let fine = match kept {
                    Kept::Once => count == 1,
                    Kept::AtMostOnce => count <= 1,
                };
                assert!(fine, "message {id} is there {count} times: {body:.3000}");
            }
        }
    }
}

/// `acc install --client CLIENT --home HOME EXTRA…`.
pub fn install(world: &World, client: Client, home: &str, extra: &[&str]) -> acc_tests::Run {
    let mut args = vec!["install", "--client", client.as_str(), "--home", home];
    args.extend_from_slice(extra);
    world.acc(&args)
}

/// A live-delivery consent, for a client no adapter reaches: refused (exit 2), naming the
/// client and that its messages arrive through next-turn.
pub fn live_consent_refused(world: &World, client: Client, home: &str) {
    let refused =
        install(world, client, home, &["--delivery", "actionable"]).err(2, "invalid_arguments");
    assert!(
        refused["message"]
            .as_str()
            .is_some_and(|m| m.contains(client.display_name()) && m.contains("through next-turn")),
        "{refused}"
    );
}

/// `client` installed the user's way (`acc install --client CLIENT EXTRA…`) into a home holding
/// the user's own settings; no participant named, so each conversation is its own participant.
pub fn installed(world: &World, client: Client, model: &ModelServer, extra: &[&str]) -> Writer {
    let writer = acc_tests::prepared_writer(world, client, model);
    let home = writer.home.to_string_lossy().into_owned();
    install(world, client, &home, extra).ok_json();
    writer
}

/// The bodies of the model requests so far, each whole.
pub fn bodies(model: &ModelServer) -> Vec<String> {
    model.model_requests().into_iter().map(|r| r.body).collect()
}

/// The open sessions of `participant` in the room's status.
fn sessions_of(world: &World, participant: &str) -> Vec<Value> {
    let status = world.status();
    status["sessions"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|s| s["participantId"] == participant)
        .cloned()
        .collect()
}

/// The bindings of `participant`'s open session, once it is in the room.
pub fn bindings_of(world: &World, participant: &str) -> Option<Value> {
    sessions_of(world, participant)
        .first()
        .map(|s| s["bindings"].clone())
}

/// The endpoint `participant`'s open session is bound to through `adapter`, as the store
/// records it (bindings are never printed, so it is read from the store file).
pub fn bound_endpoint(world: &World, participant: &str, adapter: &str) -> Value {
    let conn = rusqlite::Connection::open(world.store_path()).expect("the store");
    let endpoint: String = conn
        .query_row(
            "SELECT b.endpoint FROM delivery_bindings b JOIN sessions s ON s.session_id = b.session_id AND s.generation = b.generation
             WHERE s.participant_id = ?1 AND s.closed_at IS NULL AND b.adapter_id = ?2",
            [participant, adapter],
            |r| r.get(0),
        )
        .expect("the binding");
    serde_json::from_str(&endpoint).expect("its endpoint")
}

/// Whether an open session of `participant` is bound to `adapter`.
pub fn bound_to(world: &World, participant: &str, adapter: &str) -> bool {
    sessions_of(world, participant)
        .iter()
        .filter_map(|s| s["bindings"].as_array())
        .flatten()
        .any(|b| b["adapterId"] == adapter)
}

/// `alice` asks `participant`, whose open session has no binding: the question is queued,
/// durable (nothing live), and the send's answer is returned. `row` names the case in a failure.
pub fn asked_while_unbound(
    world: &World,
    alice: &Creds,
    participant: &str,
    body: &str,
    row: &str,
) -> Value {
    assert_eq!(
        bindings_of(world, participant),
        Some(Value::Array(Vec::new())),
        "{row}: {participant}'s session is unbound"
    );
    let sent = world.ask(alice, participant, "parser", body);
    assert_eq!(sent["delivery"][0]["outcome"], "queued", "{row}: {sent}");
    assert_eq!(sent["delivery"][0]["transport"], "durable", "{row}: {sent}");
    sent
}
