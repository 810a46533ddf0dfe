//! `acc room`: where this workspace's room lives (its SQLite store, or a PostgreSQL database
//! the user connected it to), connecting, showing, disconnecting, and pushing the SQLite
//! store into an empty room.

use acc_app::wire;
use acc_core::workspace::{IdentitySource, Workspace};
use acc_store::{Store, WorkspaceRecord};

use super::*;

/// `acc room ...`.
pub(super) fn room_command(cli: &Cli, command: &RoomCommand) -> AccResult<Output> {
    let (ws, data_dir) = place(cli)?;
    match command {
        RoomCommand::Connect {
            url,
            every_workspace,
        } => connect(&ws, &data_dir, url, *every_workspace),
        RoomCommand::Show => show(&ws, &data_dir),
        RoomCommand::Disconnect { every_workspace } => disconnect(&ws, &data_dir, *every_workspace),
        RoomCommand::Push => push(&ws, &data_dir),
    }
}

/// The workspace and its data directory, without opening its store (a room that cannot be
/// reached must still be shown, replaced or disconnected).
fn place(cli: &Cli) -> AccResult<(Workspace, PathBuf)> {
    if let Some(opener) = &cli.opener {
        let core = opener.open()?;
        return Ok((core.workspace.clone(), core.data_dir().to_path_buf()));
    }
    let ws = workspace::discover(&start_dir(cli)?)?;
    let data_dir = workspace::data_dir_for(&ws)?;
    Ok((ws, data_dir))
}

fn record(ws: &Workspace) -> WorkspaceRecord {
    WorkspaceRecord {
        workspace_id: ws.id.clone(),
        display_name: ws.config.display_name.clone(),
        root: ws.root.to_string_lossy().into_owned(),
    }
}

/// A room across machines is named by the workspace id every checkout shares: the committed
/// `acc.workspace.json`'s. A derived id (from the checkout's path) differs per machine.
fn require_committed_id(ws: &Workspace) -> AccResult<()> {
    if ws.source == IdentitySource::Config {
        return Ok(());
    }
    Err(AccError::usage(format!(
        "this workspace's id `{}` is derived from where it is checked out, so another checkout would name another room; fix it first: `acc config init --yes` writes acc.workspace.json with a workspaceId, and commit that file",
        ws.id
    )))
}

fn connect(ws: &Workspace, data_dir: &Path, url: &str, every: bool) -> AccResult<Output> {
    if !every {
        require_committed_id(ws)?;
    }
    acc_store::check_url(url).map_err(|e| AccError::usage(e.message))?;
    // Reached, and its schema made, before anything is recorded: a URL that does not work is
    // refused with the server's reason and leaves the workspace where it was.
    let now = clock()?.now_ms();
    let mut room = Store::open_room(url, &record(ws), now)?;
    let probe = room.room_probe()?;
    let file = if every {
        acc_store::connect_default_room(data_dir, url)?
    } else {
        acc_store::connect_room(data_dir, &ws.id, url)?
    };
    let view = room_view(ws, &room, Some(&file), false, probe);
    let mut human = format!(
        "this workspace's room is now {} ({}); recorded for you in {}{}\n",
        view.location,
        server_line(&view),
        file.display(),
        warning_line(&view)
    );
    if let Some(mut local) = Store::open_local(data_dir, &ws.id)? {
        let held = local.read(|r| r.head_seq())?;
        if held > 0 {
            human.push_str(&format!(
                "the SQLite store on this machine keeps its {held} events ({}); `acc room push` copies them into the room while it is empty\n",
                local.location()
            ));
        }
    }
    Ok(Output {
        value: views::room(&view),
        human: human.trim_end().to_string(),
    })
}

/// The room file in force for the workspace (its own, else its data home's), with the URL it
/// names; or the URL `ACC_ROOM` names, without a file.
fn chosen(ws: &Workspace, data_dir: &Path) -> AccResult<Option<(String, Option<PathBuf>)>> {
    Ok(
        acc_store::room_choice(data_dir, &ws.id)?.map(|(url, source)| match source {
            acc_store::RoomSource::File(file) => (url, Some(file)),
            acc_store::RoomSource::Environment => (url, None),
        }),
    )
}

fn show(ws: &Workspace, data_dir: &Path) -> AccResult<Output> {
    let Some((url, file)) = chosen(ws, data_dir)? else {
        let location = acc_store::workspace_dir(data_dir, &ws.id)
            .join(acc_store::STORE_FILE)
            .display()
            .to_string();
        let view = wire::Room {
            workspace_id: ws.id.clone(),
            backend: "sqlite",
            location: location.clone(),
            room_file: None,
            from_environment: false,
            server_version: None,
            round_trip_ms: None,
            encrypted: None,
            transport: None,
            not_encrypted: None,
        };
        return Ok(Output {
            value: views::room(&view),
            human: format!("this workspace's room is its SQLite store on this machine: {location}"),
        });
    };
    let now = clock()?.now_ms();
    let mut room = Store::open_room(&url, &record(ws), now)?;
    let probe = room.room_probe()?;
    let view = room_view(ws, &room, file.as_deref(), file.is_none(), probe);
    let chosen = match &file {
        Some(file) => format!("recorded in {}", file.display()),
        None => format!("named by {}", acc_store::ROOM_ENV),
    };
    Ok(Output {
        value: views::room(&view),
        human: format!(
            "this workspace's room is {} ({}); {chosen}{}",
            view.location,
            server_line(&view),
            warning_line(&view)
        ),
    })
}

fn disconnect(ws: &Workspace, data_dir: &Path, every: bool) -> AccResult<Output> {
    let had = if every {
        match std::fs::remove_file(data_dir.join(acc_store::ROOM_FILE)) {
            Ok(()) => true,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => false,
            Err(e) => {
                return Err(AccError::from(acc_store::StoreError::io(
                    "remove the room file",
                    &data_dir.join(acc_store::ROOM_FILE),
                    &e,
                )));
            }
        }
    } else {
        acc_store::disconnect_room(data_dir, &ws.id)?
    };
    let local = acc_store::workspace_dir(data_dir, &ws.id).join(acc_store::STORE_FILE);
    let (still, remaining) = match chosen(ws, data_dir)? {
        Some((url, file)) => (Some(url), file),
        None => (None, None),
    };
    let view = wire::Room {
        workspace_id: ws.id.clone(),
        backend: if still.is_some() {
            "postgres"
        } else {
            "sqlite"
        },
        location: still.clone().unwrap_or_else(|| local.display().to_string()),
        room_file: remaining.as_ref().map(|f| f.display().to_string()),
        from_environment: still.is_some() && remaining.is_none(),
        server_version: None,
        round_trip_ms: None,
        encrypted: None,
        transport: None,
        not_encrypted: None,
    };
    let mut human = if had {
        format!(
            "disconnected: this workspace's room is its SQLite store on this machine again ({}); the PostgreSQL room is left as it was",
            local.display()
        )
    } else {
        "this workspace had no room file: nothing to disconnect".to_string()
    };
    match (&still, &remaining) {
        (Some(_), Some(file)) => human.push_str(&format!(
            "\n{} still names a room for this workspace, which is used here (`--every-workspace` forgets the data home's)",
            file.display()
        )),
        (Some(_), None) => human.push_str(&format!(
            "\n{} is set, so the room it names is still used here",
            acc_store::ROOM_ENV
        )),
        (None, _) => {}
    }
    Ok(Output {
        value: views::room(&view),
        human,
    })
}

fn push(ws: &Workspace, data_dir: &Path) -> AccResult<Output> {
    let Some(url) = acc_store::room_url(data_dir, &ws.id)? else {
        return Err(AccError::usage(
            "this workspace has no room on PostgreSQL to push into: `acc room connect URL` first",
        ));
    };
    let Some(mut local) = Store::open_local(data_dir, &ws.id)? else {
        return Err(AccError::usage(format!(
            "there is no SQLite store for this workspace on this machine ({}): nothing to push",
            acc_store::workspace_dir(data_dir, &ws.id).display()
        )));
    };
    let now = clock()?.now_ms();
    let mut room = Store::open_room(&url, &record(ws), now)?;
    let from = local.location();
    let pushed = local.push_into(&mut room)?;
    let mut human = String::new();
    if let Some(plan) = &pushed.upgraded {
        human.push_str(&format!(
            "upgraded the room from layout revision {} to {} first\n",
            plan.from, plan.to
        ));
    }
    human.push_str(&format!("copied {from} into {}:", pushed.room));
    for (table, rows) in &pushed.rows {
        human.push_str(&format!("\n  {table}: {rows}"));
    }
    human.push_str("\nthe SQLite store is left as it was");
    Ok(Output {
        value: views::room_pushed(&pushed, &from),
        human,
    })
}

fn room_view(
    ws: &Workspace,
    room: &Store,
    file: Option<&Path>,
    from_environment: bool,
    probe: Option<acc_store::RoomProbe>,
) -> wire::Room {
    postgres_view(
        &ws.id,
        room.location(),
        file,
        from_environment,
        probe.as_ref(),
    )
}

/// The view of a room on PostgreSQL (`acc room`, and `room` in `acc status`).
pub(super) fn postgres_view(
    workspace_id: &str,
    location: String,
    file: Option<&Path>,
    from_environment: bool,
    probe: Option<&acc_store::RoomProbe>,
) -> wire::Room {
    wire::Room {
        workspace_id: workspace_id.to_string(),
        backend: "postgres",
        location,
        room_file: file.map(|f| f.display().to_string()),
        from_environment,
        server_version: probe.map(|p| p.server_version.clone()),
        round_trip_ms: probe.map(|p| p.round_trip.as_secs_f64() * 1000.0),
        encrypted: probe.map(|p| p.encrypted),
        transport: probe.map(|p| p.transport.clone()),
        not_encrypted: probe.and_then(acc_store::RoomProbe::plain_text_warning),
    }
}

/// The server, its round trip and how the connection travels, in words.
pub(super) fn server_line(view: &wire::Room) -> String {
    format!(
        "PostgreSQL {}, one round trip {:.2} ms, {}",
        view.server_version.as_deref().unwrap_or("unknown"),
        view.round_trip_ms.unwrap_or_default(),
        view.transport.as_deref().unwrap_or("not reached")
    )
}

/// The plain-text warning as a line of its own after the text it follows (empty when the
/// room's traffic does not cross a network in plain text).
pub(super) fn warning_line(view: &wire::Room) -> String {
    view.not_encrypted
        .as_ref()
        .map_or(String::new(), |warning| format!("\nwarning: {warning}"))
}
