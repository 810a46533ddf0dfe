//! Native live delivery into a real Codex LocalDaemon: the `codex-app-server` adapter.

use std::time::Duration;

use acc_adapter_api::AdapterImpl;
use acc_adapter_api::wire::OfferRequest;
use acc_capture::codex::StartedDaemon;
use acc_capture::model::ModelServer;
use acc_clients::codex_daemon::Daemon;
use acc_tests::{World, clients};
use serde_json::json;

/// The texts of every submission in a thread with this client id, queued or already in a turn;
/// `None` while Codex is between states and cannot say.
fn submissions(client: &mut Daemon, thread: &str, client_id: &str) -> Option<Vec<String>> {
    client
        .lookup(thread, client_id, Duration::from_secs(15))
        .expect("the thread's queue and history")
        .known()
        .map(|found| found.into_iter().map(|s| s.text).collect())
}

/// The submissions with this client id once the thread has settled. Right after an add on an
/// idle thread, Codex 0.169.0 shows the submission for 30-170 ms in neither its queue nor its
/// turn items, so one read may see nothing: wait (bounded) until it shows, then keep looking
/// for a while longer, failing on the first read that shows more than one.
fn settled_submissions(client: &mut Daemon, thread: &str, client_id: &str) -> Vec<String> {
    let mut found = Vec::new();
    acc_tests::wait_until(Duration::from_secs(15), "the submission to show", || {
        found = submissions(client, thread, client_id).unwrap_or_default();
        !found.is_empty()
    });
    // The window measured is under 200 ms; a second copy added by a retry inside it would show
    // well within this look. A read while Codex cannot say keeps the last answer.
    let watched = std::time::Instant::now();
    while watched.elapsed() < Duration::from_millis(1500) {
        if let Some(now) = submissions(client, thread, client_id) {
            found = now;
        }
        assert!(found.len() <= 1, "more than one submission: {found:?}");
        std::thread::sleep(Duration::from_millis(50));
    }
    found
}

#[test]
fn a_message_becomes_one_queued_submission_in_exactly_the_recipients_codex_thread() {
    let world = World::new();
    let home = world.temp.path().join("home");
    let codex_home = home.join(".codex");
    std::fs::create_dir_all(&codex_home).expect("codex home");
    let clients = clients();
    let path = clients.path();
    let home_arg = home.to_str().expect("utf8");
    let codex_home_arg = codex_home.to_str().expect("utf8");
    let bob = world.attach("bob");
    let alice = world.attach("alice");
    let carol = world.attach("carol");
    let project = world.dir.to_str().expect("utf8").to_string();
    let bind = |who, thread: &str, cwd: &str| {
        let endpoint =
            json!({ "codexHome": codex_home, "threadId": thread, "cwd": cwd }).to_string();
        world.acc_as_with(
            who,
            &[
                "bind",
                "--adapter",
                "codex-app-server",
                "--policy",
                "all",
                "--endpoint",
                &endpoint,
            ],
            &[("CODEX_HOME", codex_home_arg)],
        )
    };
    let message = |to: &str, env: &[(&str, &str)]| {
        world
            .acc_as_with(
                &alice,
                &[
                    "message",
                    "--to",
                    to,
                    "--kind",
                    "question",
                    "--subject",
                    "s",
                    "--body",
                    "does the ~~~~ fence hold?",
                ],
                env,
            )
            .ok_json()
    };

    // Its model is a model API on loopback, so the turns the submissions start really run and
    // end, as in use.
    let model = ModelServer::start();
    std::fs::write(codex_home.join("config.toml"), model.codex_config()).expect("config");
    let daemon = StartedDaemon::start(
        &clients.codex,
        &codex_home,
        &[("ACC_TEST_MODEL_KEY", "acc-test")],
    )
    .expect("codex daemon");
    // The Codex client side: a thread in the project, its connection kept open.
    let mut client = Daemon::connect(&daemon.socket(), Duration::from_secs(180)).expect("connect");
    let thread = client
        .call("thread/start", json!({ "cwd": project }))
        .expect("thread")["thread"]["id"]
        .as_str()
        .expect("thread id")
        .to_string();
    let elsewhere = world.temp.path().join("elsewhere");
    std::fs::create_dir_all(&elsewhere).expect("dir");
    let other = client
        .call("thread/start", json!({ "cwd": elsewhere }))
        .expect("thread")["thread"]["id"]
        .as_str()
        .expect("thread id")
        .to_string();

    // Without the consent recorded at install time nothing binds.
    let refused = bind(&bob, &thread, &project).err(4, "invalid_data");
    assert!(
        refused["message"]
            .as_str()
            .unwrap_or_default()
            .contains("installation record"),
        "{refused}"
    );
    world
        .acc_with(
            &[
                "install",
                "--client",
                "codex",
                "--home",
                home_arg,
                "--delivery",
                "all",
            ],
            &[("PATH", &path)],
        )
        .ok_json();
    // The consent stays recorded in the data home; the hooks themselves are taken away again so
    // the daemon's threads do not run ACC's hooks (and open sessions of their own) here: this
    // test is about the adapter and the daemon.
    std::fs::remove_file(codex_home.join("hooks.json")).expect("hooks");

    // A thread the daemon does not have, and a thread working in another directory, are refused.
    let unknown =
        bind(&bob, "01a22906-0000-7000-8000-000000000000", &project).err(4, "invalid_data");
    assert!(
        unknown["message"]
            .as_str()
            .unwrap_or_default()
            .contains("not loaded"),
        "{unknown}"
    );
    let moved = bind(&bob, &other, &project).err(4, "invalid_data");
    assert!(
        moved["message"]
            .as_str()
            .unwrap_or_default()
            .contains("another directory"),
        "{moved}"
    );

    let bound = bind(&bob, &thread, &project).ok_json();
    assert_eq!(bound["binding"]["clientVersion"], "0.169.0", "{bound}");

    // The message becomes one submission in exactly bob's thread, and the receipt is offered.
    let sent = message("bob", &[]);
    assert_eq!(sent["delivery"][0]["outcome"], "offered", "{sent}");
    assert_eq!(
        sent["delivery"][0]["transport"], "codex-app-server",
        "{sent}"
    );
    let id = sent["message"]["messageId"]
        .as_str()
        .expect("id")
        .to_string();
    let client_id = format!("acc-{id}");
    // The derived id is ACC's promise ("acc-" and the message id), stated here independently.
    let found = settled_submissions(&mut client, &thread, &client_id);
    assert_eq!(found.len(), 1, "one submission: {found:?}");
    assert!(found[0].starts_with(&format!("ACC: a message from another participant ({id})")));
    assert!(
        found[0].contains("acc-peer-message sender=alice"),
        "{}",
        found[0]
    );
    assert!(
        found[0].contains("does the \\~\\~\\~\\~ fence hold?"),
        "{}",
        found[0]
    );
    assert!(
        submissions(&mut client, &other, &client_id) == Some(Vec::new()),
        "only bob's thread: the other says it holds none"
    );
    assert_eq!(world.receipt(&id)["state"], "offered");
    let receipts = world.acc(&["sync", "--limit", "500"]).ok_json();
    let offered = receipts["events"]
        .as_array()
        .expect("events")
        .iter()
        .filter(|e| e["type"] == "message.offer_succeeded")
        .count();
    assert_eq!(offered, 1);

    // A second offer of the same message (a retry) adds nothing.
    let adapter = acc_adapter_codex_app_server::new("{}").expect("adapter");
    let endpoint_ref =
        json!({ "codexHome": codex_home, "threadId": thread, "cwd": project }).to_string();
    let again = adapter
        .offer(OfferRequest {
            message: serde_json::from_value(sent["message"].clone()).expect("envelope"),
            recipient_participant_id: "bob".into(),
            target_session_id: bob.session.clone(),
            target_generation: 1,
            endpoint_ref,
            client_version: "0.169.0".into(),
            timeout_ms: None,
        })
        .expect("offer");
    assert!(again.accepted, "{again:?}");
    assert_eq!(
        settled_submissions(&mut client, &thread, &client_id).len(),
        1,
        "no duplicate"
    );

    // A retry at once after the add, while Codex hands the submission from its queue to a
    // turn (a window where it is listed in neither), many times: never two submissions. The
    // retry finds it, or finds the thread between states and adds nothing (recipient_busy).
    for round in 0..8 {
        let sent = message("bob", &[]);
        assert_eq!(sent["delivery"][0]["outcome"], "offered", "{round}: {sent}");
        let id = sent["message"]["messageId"]
            .as_str()
            .expect("id")
            .to_string();
        let retry = adapter
            .offer(OfferRequest {
                message: serde_json::from_value(sent["message"].clone()).expect("envelope"),
                recipient_participant_id: "bob".into(),
                target_session_id: bob.session.clone(),
                target_generation: 1,
                endpoint_ref:
                    json!({ "codexHome": codex_home, "threadId": thread, "cwd": project })
                        .to_string(),
                client_version: "0.169.0".into(),
                timeout_ms: Some(5000),
            })
            .expect("offer");
        assert!(
            retry.accepted || retry.code.as_deref() == Some("recipient_busy"),
            "{round}: {retry:?}"
        );
        assert_eq!(
            settled_submissions(&mut client, &thread, &format!("acc-{id}")).len(),
            1,
            "round {round}: one submission after an immediate retry"
        );
    }

    // A version below the contract's minimum (the user raised it) falls back durably.
    let raised = [(
        "ACC_ADAPTER_CONFIG",
        r#"{"codex_app_server":{"raiseMinimum":"0.170.0"}}"#,
    )];
    let held = message("bob", &raised);
    assert_eq!(held["delivery"][0]["outcome"], "queued", "{held}");
    assert_eq!(
        held["delivery"][0]["errorCode"], "below_minimum_version",
        "{held}"
    );

    // The bound thread goes away (archived, so no longer loaded): the message waits, queued.
    bind(&carol, &other, elsewhere.to_str().expect("utf8")).ok_json();
    client
        .call("thread/archive", json!({ "threadId": other }))
        .expect("archive");
    let gone = message("carol", &[]);
    assert_eq!(gone["delivery"][0]["outcome"], "queued", "{gone}");
    assert_eq!(
        gone["delivery"][0]["errorCode"], "recipient_unavailable",
        "{gone}"
    );
    let gone_id = gone["message"]["messageId"].as_str().expect("id");
    assert_eq!(world.receipt(gone_id)["state"], "queued");

    // A stopped daemon: the message waits, queued, with the reason.
    drop(client);
    daemon.stop();
    acc_tests::wait_until(Duration::from_secs(15), "the daemon gone", || {
        Daemon::connect(&daemon.socket(), Duration::from_secs(1)).is_err()
    });
    let stopped = message("bob", &[]);
    assert_eq!(stopped["delivery"][0]["outcome"], "queued", "{stopped}");
    assert_eq!(
        stopped["delivery"][0]["errorCode"], "recipient_unavailable",
        "{stopped}"
    );
    let stopped_id = stopped["message"]["messageId"].as_str().expect("id");
    assert_eq!(world.receipt(stopped_id)["state"], "queued");
}

#[test]
fn a_daemon_thread_running_accs_hooks_binds_itself_and_takes_messages_into_its_queue() {
    let world = World::new();
    let home = world.temp.path().join("home");
    let codex_home = home.join(".codex");
    std::fs::create_dir_all(&codex_home).expect("codex home");
    let model = ModelServer::start();
    std::fs::write(codex_home.join("config.toml"), model.codex_config()).expect("config");
    let clients = clients();
    let path = clients.path();
    world
        .acc_with(
            &[
                "install",
                "--client",
                "codex",
                "--home",
                home.to_str().expect("utf8"),
                "--delivery",
                "actionable",
            ],
            &[("PATH", &path)],
        )
        .ok_json();
    // The daemon's environment is what its threads' hooks see.
    let data_home = world.data_home.to_str().expect("utf8");
    let daemon = StartedDaemon::start(
        &clients.codex,
        &codex_home,
        &[
            ("ACC_DATA_HOME", data_home),
            ("ACC_PARTICIPANT", "dave"),
            ("ACC_TEST_MODEL_KEY", "acc-test-key"),
            ("PATH", &path),
        ],
    )
    .expect("codex daemon");
    let mut client = Daemon::connect(&daemon.socket(), Duration::from_secs(10)).expect("connect");
    let thread = client
        .call("thread/start", json!({ "cwd": world.dir }))
        .expect("thread")["thread"]["id"]
        .as_str()
        .expect("thread id")
        .to_string();
    client
        .call(
            "thread/queue/add",
            json!({ "threadId": thread, "input": [{ "type": "text", "text": "hello" }], "clientUserMessageId": "first" }),
        )
        .expect("first turn");
    let bound = || crate::journey::bound_to(&world, "dave", "codex-app-server");
    acc_tests::wait_until(
        Duration::from_secs(60),
        "the SessionStart hook bound the thread",
        bound,
    );
    // The first turn's UserPromptSubmit hook runs before its model request: once the model has
    // the request, that hook cannot carry (and so race) the message sent below.
    acc_tests::wait_until(
        Duration::from_secs(60),
        "the first turn reached the model",
        || {
            model
                .model_requests()
                .iter()
                .any(|r| r.body.contains("hello"))
        },
    );

    let alice = world.attach("alice");
    let sent = world
        .acc_as(
            &alice,
            &[
                "message",
                "--to",
                "dave",
                "--kind",
                "question",
                "--subject",
                "s",
                "--body",
                "which branch is release?",
            ],
        )
        .ok_json();
    assert_eq!(sent["delivery"][0]["outcome"], "offered", "{sent}");
    assert_eq!(sent["delivery"][0]["transport"], "codex-app-server");
    let id = sent["message"]["messageId"]
        .as_str()
        .expect("id")
        .to_string();
    acc_tests::wait_until(
        Duration::from_secs(60),
        "the submission reached the model",
        || {
            model.model_requests().iter().any(|r| {
                r.body
                    .contains(&format!("ACC: a message from another participant ({id})"))
                    && r.body.contains("which branch is release?")
            })
        },
    );
    assert_eq!(world.receipt(&id)["state"], "offered");
    drop(client);
}
