//! The room's commands: status, work, attach and detach, messages (send, request, reply,
//! finish, ack, inbox, prune), sync and history, claims, and bindings. Each resolves its
//! session, calls the core (or the application for a send), and returns its view.

use super::*;

/// `acc status`.
pub(super) fn status_command(cli: &Cli, args: &StatusArgs) -> AccResult<Output> {
    let mut core = open_core(cli)?;
    let report = if args.all {
        core.status(true)?
    } else {
        // The caller's own claims are among those a summary lists, when this shell has a
        // session.
        let mine = caller(cli).ok().map(|c| c.session_id);
        core.status_summary(mine.as_deref())?
    };
    let now = core.now();
    let look = look(cli, &mut core, status_ids(&report));
    let mut value = views::status(&report, now);
    let mut human = human::status(&report, &look);
    // A room on PostgreSQL: where it lives, its server, one round trip.
    if let Some(probe) = core.room_probe()? {
        let location = core
            .store()
            .map(acc_store::Store::location)
            .unwrap_or_default();
        let file = acc_store::workspace_dir(core.data_dir(), &core.workspace.id)
            .join(acc_store::ROOM_FILE);
        let room = super::room::postgres_view(
            &core.workspace.id,
            location.clone(),
            file.exists().then_some(file.as_path()),
            !file.exists(),
            Some(&probe),
        );
        human.push_str(&look.wrap(
            &format!(
                "room: {location} ({}){}",
                super::room::server_line(&room),
                super::room::warning_line(&room)
            ),
            4,
        ));
        if let Some(object) = value.as_object_mut() {
            object.insert("room".into(), views::room(&room));
        }
    }
    // The store's layout: its revision beside this build's, a pending upgrade, its backups.
    if let Some(store) = core.store() {
        let layout = views::store_layout(store);
        if layout.pending_upgrade {
            human.push_str(&format!(
                "\nstore: layout revision {} (this build writes {}): `acc store upgrade` upgrades it, or the next write when no other process has it open",
                layout.revision, layout.build_revision
            ));
        }
        if let Some(object) = value.as_object_mut() {
            object.insert("store".into(), acc_core::wire::json(&layout));
        }
    }
    Ok(Output { human, value })
}

/// `acc work`.
pub(super) fn work_command(cli: &Cli, args: &WorkArgs) -> AccResult<Output> {
    let who = caller(cli)?;
    let mut core = open_core(cli)?;
    if args.clear {
        let had = core.clear_intent(&who)?;
        return Ok(Output {
            value: views::intent_result(None, Some(had)),
            human: if had {
                "intent cleared".into()
            } else {
                "no intent to clear".into()
            },
        });
    }
    let request = IntentRequest {
        summary: args.summary.clone().unwrap_or_default(),
        mode: args.mode.clone().unwrap_or_default(),
        state: args.state.clone(),
        resource_hints: args.hints.clone(),
    };
    let intent = core.set_intent(&who, &request)?;
    Ok(Output {
        human: format!(
            "intent set: {} [{}, {}]",
            intent.summary, intent.mode, intent.state
        ),
        value: views::intent_result(Some(&intent), None),
    })
}

/// `acc detach`: the caller's session closes (no handoff, unlike `finish`); its claims are
/// released first when asked, else they stay until their leases end.
pub(super) fn detach_command(cli: &Cli, args: &DetachArgs) -> AccResult<Output> {
    let who = caller(cli)?;
    let mut core = open_core(cli)?;
    let released = if args.release_claims {
        core.release_claims(&who, &acc_core::claims::ReleaseSelector::All)?
    } else {
        Vec::new()
    };
    let kept = core.claims_held(&who)?.len();
    let participant = core
        .own_session(&who)?
        .map(|s| s.participant_id)
        .unwrap_or_default();
    core.end_presence(&who, acc_core::identity::SessionEndReason::ClientSessionEnd)?;
    let look = look(cli, &mut core, [who.session_id.as_str()]);
    Ok(Output {
        human: human::detached(&participant, &who.session_id, released.len(), kept, &look),
        value: acc_core::wire::json(&acc_app::wire::Detached {
            session_id: &who.session_id,
            closed: true,
            released_claims: &released,
            kept_claims: kept,
        }),
    })
}

/// `acc attach`.
pub(super) fn attach_command(cli: &Cli, args: &AttachArgs) -> AccResult<Output> {
    let mut core = open_core(cli)?;
    // This shell already speaks for the participant: its own open session is kept (a second
    // `acc attach` would otherwise leave two live sessions of one participant).
    if args.resume.is_none()
        && let Ok(mine) = caller(cli)
        && let Some(session) = core.own_session(&mine)?
        && session.participant_id == args.participant
    {
        let kept = acc_core::OpenedSession {
            session,
            generation_token: mine.generation,
            resumed: true,
        };
        return Ok(Output {
            human: human::kept(&kept, &core.workspace.id),
            value: views::opened_session(&kept, &core.workspace.id),
        });
    }
    let start =
        std::fs::canonicalize(start_dir(cli)?).unwrap_or_else(|_| core.workspace.root.clone());
    let (checkout, branch) = workspace::checkout_and_branch(&start);
    let spec = SessionSpec {
        participant_id: args.participant.clone(),
        session_key: None,
        harness: acc_core::identity::Harness::Cli,
        client_version: None,
        checkout,
        branch,
        pid: None,
        enforcement: acc_store::Enforcement::Advisory,
        lifecycle: acc_store::Lifecycle::Manual,
    };
    let opened = core.open_session(&spec, args.resume.as_deref())?;
    Ok(Output {
        human: human::attached(&opened, &core.workspace.id),
        value: views::opened_session(&opened, &core.workspace.id),
    })
}

/// `acc message`.
pub(super) fn message_command(cli: &Cli, args: &MessageArgs) -> AccResult<Output> {
    let request = SendRequest {
        to: args.to.clone(),
        kind: args.kind.clone(),
        obligation: args.obligation.clone(),
        subject: args.subject.clone(),
        body: args.body.clone(),
        artifacts: parse_artifacts(&args.artifacts)?,
        supersedes: args.supersedes.clone(),
        withdraws: args.withdraws.clone(),
        client_message_id: args.client_message_id.clone(),
    };
    send(cli, |app, who| app.send_message(who, &request))
}

/// `acc request`.
pub(super) fn request_command(cli: &Cli, args: &RequestArgs) -> AccResult<Output> {
    let request = SendRequest {
        to: vec![args.to.clone()],
        kind: Some("request".into()),
        subject: args.title.clone(),
        body: args.detail.clone().unwrap_or_default(),
        client_message_id: args.client_message_id.clone(),
        ..SendRequest::default()
    };
    send(cli, |app, who| app.send_message(who, &request))
}

/// `acc reply`.
pub(super) fn reply_command(cli: &Cli, args: &ReplyArgs) -> AccResult<Output> {
    let request = ReplyRequest {
        message_id: args.message.clone(),
        body: args.body.clone(),
        subject: args.subject.clone(),
        artifacts: parse_artifacts(&args.artifacts)?,
        client_message_id: args.client_message_id.clone(),
    };
    send(cli, |app, who| app.reply(who, &request))
}

/// `acc finish`.
pub(super) fn finish_command(cli: &Cli, args: &FinishArgs) -> AccResult<Output> {
    let request = FinishRequest {
        goal: args.goal.clone(),
        status: args.status.clone(),
        to: args.to.clone(),
        completed: args.completed.clone(),
        remaining: args.remaining.clone(),
        blockers: args.blockers.clone(),
        verification: args.verification.clone(),
        client_message_id: args.client_message_id.clone(),
    };
    send(cli, |app, who| app.finish(who, &request))
}

/// `acc ack`.
pub(super) fn ack_command(cli: &Cli, args: &AckArgs) -> AccResult<Output> {
    let who = caller(cli)?;
    let mut core = open_core(cli)?;
    let acked = core.ack(&who, &args.message)?;
    Ok(Output {
        human: format!(
            "acknowledged {} (receipt {})",
            acked.message.message.message_id, acked.receipt.state
        ),
        value: views::acked(&acked.message.message.message_id, &acked.receipt),
    })
}

/// `acc prune`.
pub(super) fn prune_command(cli: &Cli, args: &PruneArgs) -> AccResult<Output> {
    let before = args
        .before
        .as_deref()
        .map(acc_core::events::parse_cursor)
        .transpose()?;
    let who = if args.apply { Some(caller(cli)?) } else { None };
    let mut core = open_core(cli)?;
    let report = core.prune(who.as_ref(), before, args.apply)?;
    let look = look(
        cli,
        &mut core,
        report.message_ids.iter().map(String::as_str),
    );
    Ok(Output {
        human: human::prune(&report, &look),
        value: views::prune(&report),
    })
}

/// `acc bind`.
pub(super) fn bind_command(cli: &Cli, args: &BindArgs) -> AccResult<Output> {
    let who = caller(cli)?;
    let endpoint: Value = serde_json::from_str(&args.endpoint)
        .map_err(|e| AccError::usage(format!("--endpoint is not json: {e}")))?;
    let mut app = open_app(cli)?;
    let binding = app.bind(&who, &args.adapter, &args.policy, &endpoint)?;
    Ok(Output {
        human: format!(
            "bound to {} (client {}, policy {}, lease until {})",
            binding.adapter_id,
            binding.client_version,
            binding.live_policy,
            acc_core::clock::format_timestamp(binding.lease_until)
        ),
        value: views::bound(&binding),
    })
}

/// `acc unbind`.
pub(super) fn unbind_command(cli: &Cli, args: &UnbindArgs) -> AccResult<Output> {
    let who = caller(cli)?;
    let mut app = open_app(cli)?;
    let removed = app.unbind(&who, args.adapter.as_deref())?;
    Ok(Output {
        human: format!("removed {removed} binding(s)"),
        value: views::unbound(removed),
    })
}

/// `acc next-turn`.
pub(super) fn next_turn_command(cli: &Cli, args: &NextTurnArgs) -> AccResult<Output> {
    let who = caller(cli)?;
    let mut app = open_app(cli)?;
    let rendered = app.next_turn(&who, &args.adapter)?;
    Ok(Output {
        human: rendered.text.clone(),
        value: views::next_turn(&rendered),
    })
}

pub(super) fn parse_artifacts(raw: &[String]) -> AccResult<Vec<Artifact>> {
    Ok(raw
        .iter()
        .map(|text| match text.split_once('=') {
            Some((uri, description)) => Artifact {
                uri: uri.to_string(),
                description: Some(description.to_string()),
            },
            None => Artifact {
                uri: text.clone(),
                description: None,
            },
        })
        .collect())
}

pub(super) fn send(
    cli: &Cli,
    op: impl FnOnce(&mut App, &Caller) -> AccResult<Sent>,
) -> AccResult<Output> {
    let who = caller(cli)?;
    let mut app = open_app(cli)?;
    let sent = op(&mut app, &who)?;
    let m = &sent.message.message;
    let look = look(
        cli,
        &mut app.core,
        [m.message_id.as_str(), m.thread_id.as_str()],
    );
    Ok(Output {
        human: human::sent(&sent, &look),
        value: views::sent(&sent, &app.core.workspace.id),
    })
}

pub(super) fn inbox(cli: &Cli, args: &InboxArgs) -> AccResult<Output> {
    let who = caller(cli)?;
    if let Some(id) = &args.message {
        if args.cursor.is_some() || args.limit.is_some() || args.wait.is_some() {
            return Err(AccError::usage(
                "an exact read (--message) takes no --cursor, --limit or --wait",
            ));
        }
        let mut core = open_core(cli)?;
        let item = core.read_message(&who, id)?;
        let look = look(cli, &mut core, message_ids(&item.message));
        return Ok(Output {
            human: human::message(&item.message, Some(&item.receipt), &look),
            value: Value::Array(vec![views::inbox_message(&item, &core.workspace.id)]),
        });
    }
    let wait = args
        .wait
        .map(|s| {
            acc_core::messages::inbox_wait(
                "--wait",
                s,
                acc_core::messages::INBOX_WAIT_CLI_MAX_S,
                (std::time::Duration::from_secs(1), "seconds"),
            )
        })
        .transpose()?;
    let mut core = open_core(cli)?;
    let page = match wait {
        Some(wait) => core.inbox_waiting(&who, args.cursor.as_deref(), args.limit, wait)?,
        None => core.inbox(&who, args.cursor.as_deref(), args.limit)?,
    };
    let value = views::inbox_page(&page);
    let ids = page_ids(&value);
    let look = look(cli, &mut core, ids.iter().map(String::as_str));
    Ok(Output {
        human: human::summary_page(&value, &look, &std::collections::HashMap::new()),
        value,
    })
}

pub(super) fn sync(cli: &Cli, args: &SyncArgs) -> AccResult<Output> {
    match args.scope.as_str() {
        "delta" | "full" => {}
        "history" => return history(cli, args),
        other => {
            return Err(AccError::usage(format!(
                "scope must be delta, full or history, got `{other}`"
            )));
        }
    }
    if args.kind.is_some() || args.message.is_some() {
        return Err(AccError::usage("--kind and --message need --scope history"));
    }
    if args.current {
        return Err(AccError::usage(
            "--current needs --scope history --kind decision",
        ));
    }
    let cursor = match &args.cursor {
        Some(text) => acc_core::events::parse_cursor(text)?,
        None => 0,
    };
    let limit = status::event_limit(args.limit)?;
    let mut core = open_core(cli)?;
    if args.scope == "full" {
        // The page, the status and every message of one snapshot.
        let snapshot = core.sync_snapshot(cursor, limit)?;
        let (page, attention, report) = (&snapshot.page, &snapshot.attention, &snapshot.status);
        let look = look(cli, &mut core, event_ids(page, attention));
        let mut human = human::sync(page, attention, &look);
        let now = core.now();
        let look = self::look(cli, &mut core, status_ids(report));
        human.push_str(&human::status(report, &look));
        let value = views::sync_full(
            page,
            attention,
            views::snapshot(report, &snapshot.messages, now, &core.workspace.id),
        );
        return Ok(Output { value, human });
    }
    let (page, attention) = core.sync_delta(cursor, limit)?;
    let look = look(cli, &mut core, event_ids(&page, &attention));
    let human = human::sync(&page, &attention, &look);
    Ok(Output {
        value: views::sync_delta(&page, &attention),
        human,
    })
}

/// The ids a message shows: its own, its thread's, what it answers, the decision it names.
pub(super) fn message_ids(view: &acc_core::messages::MessageView) -> Vec<&str> {
    let m = &view.message;
    let mut ids = vec![m.message_id.as_str(), m.thread_id.as_str()];
    ids.extend(m.in_reply_to.as_deref());
    ids.extend(
        view.decision
            .as_ref()
            .and_then(|d| d.current_message_id.as_deref()),
    );
    ids
}

/// The ids a sync page shows: the messages its events name and its attention items'.
pub(super) fn event_ids<'a>(
    page: &'a acc_core::status::EventPage,
    attention: &'a [acc_core::attention::Attention],
) -> Vec<&'a str> {
    let events = page
        .events
        .iter()
        .filter_map(|e| e.data.get("messageId").and_then(Value::as_str));
    events.chain(attention_ids(attention)).collect()
}

pub(super) fn history(cli: &Cli, args: &SyncArgs) -> AccResult<Output> {
    if let Some(id) = &args.message {
        if args.cursor.is_some() || args.limit.is_some() || args.kind.is_some() || args.current {
            return Err(AccError::usage(
                "an exact history read (--message) takes no --cursor, --limit, --kind or --current",
            ));
        }
        let mut core = open_core(cli)?;
        let (view, receipts) = core.history_message(id)?;
        let look = look(cli, &mut core, message_ids(&view));
        return Ok(Output {
            human: human::history_message(&view, &receipts, &look),
            value: views::history_exact(&view, &receipts, &core.workspace.id),
        });
    }
    let mut core = open_core(cli)?;
    let page = core.history(
        args.kind.as_deref(),
        args.current,
        args.cursor.as_deref(),
        args.limit,
    )?;
    let value = views::history_page(&page);
    let ids = page_ids(&value);
    let look = look(cli, &mut core, ids.iter().map(String::as_str));
    // A person's history shows whom each message went to and each receipt (the summary JSON's
    // allowlist has no recipients); read only for text output.
    let mut recipients = std::collections::HashMap::new();
    if !cli.json {
        for id in ids.iter().filter(|id| id.starts_with("message_")) {
            let (view, receipts) = core.history_message(id)?;
            recipients.insert(id.clone(), human::recipients_line(&view, &receipts, &look));
        }
    }
    Ok(Output {
        human: human::summary_page(&value, &look, &recipients),
        value,
    })
}

pub(super) fn claim(cli: &Cli, args: &ClaimArgs) -> AccResult<Output> {
    let who = caller(cli)?;
    if let Some(id) = &args.renew {
        let mut core = open_core(cli)?;
        let claim = core.renew_claim(&who, id, args.lease)?;
        let now = core.now();
        let look = look(cli, &mut core, [claim.claim_id.as_str()]);
        return Ok(Output {
            human: human::claims("renewed", std::slice::from_ref(&claim), &look),
            value: views::claims(
                std::slice::from_ref(&claim),
                now,
                core.workspace.config.claim_mode,
            ),
        });
    }
    let request = AcquireRequest {
        resources: args.resources.clone(),
        mode: acc_core::error::AccError::parse::<ClaimMode>(
            args.mode.as_deref().unwrap_or("exclusive"),
        )?,
        enforcement: args
            .enforcement
            .as_deref()
            .map(acc_core::error::AccError::parse::<Enforcement>)
            .transpose()?,
        reason: args.reason.clone(),
        lease_seconds: args.lease,
    };
    // Validate the whole request before the store is even opened.
    acc_core::claims::normalize_unique(&request.resources, "a claim")?;
    let mut core = open_core(cli)?;
    let claims = core.acquire_claims(&who, &request)?;
    let now = core.now();
    let look = look(cli, &mut core, claims.iter().map(|c| c.claim_id.as_str()));
    Ok(Output {
        human: human::claims("claimed", &claims, &look),
        value: views::claims(&claims, now, core.workspace.config.claim_mode),
    })
}

pub(super) fn release(cli: &Cli, args: &ReleaseArgs) -> AccResult<Output> {
    let families = [
        !args.claims.is_empty(),
        !args.resources.is_empty(),
        args.all,
    ]
    .iter()
    .filter(|x| **x)
    .count();
    if families != 1 {
        return Err(AccError::usage(
            "give exactly one selector family: --claim (repeatable), --resource (repeatable), or --all",
        ));
    }
    if let Some(authority) = &args.authority {
        let authority = Authority::parse(authority)?;
        if args.claims.len() != 1 {
            return Err(AccError::usage("a force release names exactly one --claim"));
        }
        let reason = args.reason.clone().unwrap_or_default();
        let actor = caller(cli).ok();
        let mut core = open_core(cli)?;
        let claim = core.force_release(&args.claims[0], authority, &reason, actor.as_ref())?;
        return Ok(Output {
            human: format!(
                "force-released {} ({}) held by {} [{}]: {}",
                claim.claim_id,
                claim.resource,
                claim.participant_id,
                authority.as_str(),
                reason
            ),
            value: views::released(&[claim.claim_id], Some(authority.as_str())),
        });
    }
    let who = caller(cli)?;
    let selector = if args.all {
        ReleaseSelector::All
    } else if !args.claims.is_empty() {
        ReleaseSelector::Ids(args.claims.clone())
    } else {
        ReleaseSelector::Resources(args.resources.clone())
    };
    let mut core = open_core(cli)?;
    let released = core.release_claims(&who, &selector)?;
    Ok(Output {
        human: if released.is_empty() {
            "released nothing: this session holds no claims".into()
        } else {
            format!("released {}", released.join(", "))
        },
        value: views::released(&released, None),
    })
}
